// The controller's ZooKeeper listeners (Kafka 0.10's BrokerChangeListener, TopicChangeListener,
// AddPartitionsListener; DeleteTopicsListener and IsrChangeNotificationListener dispatch to
// controller_deletion.cc and controller_partitions.cc): watch events become queued tasks, each
// re-reads what changed (setting the watch again) and reconciles.
#include <algorithm>
#include <utility>

#include "core/base/check.h"
#include "core/controller/controller.h"

namespace ksim {

// ---- Watches -----------------------------------------------------------------------------------

void Controller::OnWatchEvent(const WatchEvent& event) {
  if (!started_) return;
  const std::string& path = event.path;
  if (path == zk::kControllerPath) {
    Enqueue("elect", [this](Done done) { Elect(std::move(done)); });
    return;
  }
  if (!active_) return;
  const bool children = event.type == WatchEventType::kNodeChildrenChanged;
  if (path == zk::kBrokerIdsPath && children) {
    EnqueueActive("broker_change", [this](Done done) { HandleBrokerChange(std::move(done)); });
  } else if (path == zk::kBrokerTopicsPath && children) {
    EnqueueActive("topic_change", [this](Done done) { HandleTopicChange(std::move(done)); });
  } else if (path == zk::kDeleteTopicsPath && children) {
    EnqueueActive("delete_topics", [this](Done done) { HandleDeleteTopics(std::move(done)); });
  } else if (path == zk::kIsrChangeNotificationPath && children) {
    EnqueueActive("isr_change",
                  [this](Done done) { HandleIsrChangeNotifications(std::move(done)); });
  } else if (event.type == WatchEventType::kNodeDataChanged &&
             ParentPath(path) == zk::kBrokerTopicsPath) {
    std::string topic(NodeName(path));
    EnqueueActive("partition_modification", [this, topic](Done done) {
      HandlePartitionModification(topic, std::move(done));
    });
  }
}

void Controller::HandleBrokerChange(Done done) {
  // BrokerChangeListener: diff the children of /brokers/ids against the live set.
  LoadLiveBrokers([this, done](std::set<BrokerId> ids) {
    std::set<BrokerId> added;
    std::set<BrokerId> dead;
    for (BrokerId id : ids) {
      if (!live_brokers_.contains(id)) added.insert(id);
    }
    for (BrokerId id : live_brokers_) {
      if (!ids.contains(id)) dead.insert(id);
    }
    ReadRegistrations(added, [this, done, dead](std::set<BrokerId> started) {
      for (BrokerId broker : dead) {
        live_brokers_.erase(broker);
        endpoints_.erase(broker);
        shutting_down_.erase(broker);
        channel_.RemoveBroker(broker);
        for (auto& [topic, deletion] : deletions_) deletion.sent.erase(broker);
        EventFields fields;
        fields["broker"] = broker.value();
        Emit(events_, "broker_left", std::move(fields));
      }
      for (BrokerId broker : started) {
        live_brokers_.insert(broker);
        channel_.AddBroker(broker, endpoints_.at(broker));
        EventFields fields;
        fields["broker"] = broker.value();
        Emit(events_, "broker_joined", std::move(fields));
      }
      if (dead.empty() && started.empty()) {
        done();
        return;
      }
      // onBrokerStartup: the new brokers hear their partitions' state (OnlineReplica).
      for (const auto& [tp, p] : partitions_) {
        if (BeingDeleted(tp.topic)) continue;
        std::vector<BrokerId> recipients;
        for (BrokerId replica : p.assigned_replicas) {
          if (started.contains(replica)) recipients.push_back(replica);
        }
        AddLeaderAndIsr(tp, recipients, false);
      }
      // onBrokerFailure / triggerOnlinePartitionStateChange: elect where no live leader is left,
      // drop dead brokers from ISRs.
      const Reason reason = dead.empty() ? Reason::kBrokerStartup : Reason::kBrokerFailure;
      ReconcileAll(reason, [this, done, started] {
        // TopicDeletionManager: replicas that were down get their StopReplica now.
        for (auto& [topic, deletion] : deletions_) {
          for (BrokerId broker : started) {
            if (deletion.awaiting.contains(broker) && !deletion.sent.contains(broker)) {
              SendDeleteReplicas(topic, broker);
            }
          }
        }
        batch_.update_metadata = true;
        SendBatch();
        done();
      });
    });
  });
}

void Controller::HandleTopicChange(Done done) {
  // TopicChangeListener: new topics go through onNewTopicCreation.
  zk_.GetChildren(std::string(zk::kBrokerTopicsPath), /*watch=*/true,
                  Guarded([this, done](Result<std::vector<std::string>> children) {
                    if (!children.ok()) {
                      done();
                      return;
                    }
                    const std::set<std::string> names(children->begin(), children->end());
                    std::vector<std::string> removed;
                    for (const auto& [topic, assignment] : topics_) {
                      if (!names.contains(topic)) removed.push_back(topic);
                    }
                    for (const std::string& topic : removed) {
                      // Deleted behind our back (or by our own deletion): forget it.
                      topics_.erase(topic);
                      topic_unclean_.erase(topic);
                      deletions_.erase(topic);
                      std::erase_if(partitions_,
                                    [&](const auto& entry) { return entry.first.topic == topic; });
                      std::erase_if(uninitialized_,
                                    [&](const TopicPartition& tp) { return tp.topic == topic; });
                      std::erase_if(last_isr_member_,
                                    [&](const auto& entry) { return entry.first.topic == topic; });
                      batch_.update_metadata = true;
                    }
                    auto added = std::make_shared<std::vector<std::string>>();
                    for (const std::string& topic : names) {
                      if (!topics_.contains(topic)) added->push_back(topic);
                    }
                    auto join = std::make_shared<Join>(Guarded([this, done, added] {
                      std::vector<TopicPartition> fresh;
                      for (const std::string& topic : *added) {
                        auto it = topics_.find(topic);
                        if (it == topics_.end()) continue;
                        for (const auto& [partition, replicas] : it->second) {
                          fresh.push_back(TopicPartition{topic, partition});
                        }
                      }
                      ReconcilePartitions(fresh, Reason::kNewPartition, [this, done, fresh] {
                        if (!fresh.empty()) batch_.update_metadata = true;
                        SendBatch();
                        done();
                      });
                    }));
                    for (const std::string& topic : *added) {
                      join->Add();
                      LoadTopic(topic, [join] { join->Arrive(); });
                    }
                    join->Arrive();
                  }));
}

void Controller::HandlePartitionModification(const std::string& topic, Done done) {
  // AddPartitionsListener: partitions added to an existing topic (kafka-topics.sh --alter).
  // Changed replica lists of existing partitions are a reassignment, which has its own path in
  // Kafka and is not modelled: they are ignored, as this listener ignores them.
  if (!topics_.contains(topic) || BeingDeleted(topic)) {
    done();
    return;
  }
  zk_.GetData(zk::TopicPath(topic), /*watch=*/true,
              Guarded([this, topic, done](Result<ZnodeData> data) {
                auto it = topics_.find(topic);
                if (!data.ok() || it == topics_.end()) {
                  done();
                  return;
                }
                Result<zk::ReplicaAssignment> assignment = zk::DecodeReplicaAssignment(data->data);
                if (!assignment.ok()) {
                  done();
                  return;
                }
                std::vector<TopicPartition> added;
                for (const auto& [partition, replicas] : *assignment) {
                  if (it->second.contains(partition)) continue;
                  it->second[partition] = replicas;
                  added.push_back(TopicPartition{topic, partition});
                }
                auto join = std::make_shared<Join>(Guarded([this, done, added] {
                  ReconcilePartitions(added, Reason::kNewPartition, [this, done] {
                    batch_.update_metadata = true;
                    SendBatch();
                    done();
                  });
                }));
                for (const TopicPartition& tp : added) {
                  join->Add();
                  LoadPartition(tp, [join] { join->Arrive(); });
                }
                join->Arrive();
              }));
}

}  // namespace ksim
