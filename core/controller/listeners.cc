// The controller's ZooKeeper listeners (Kafka 0.10's BrokerChangeListener, TopicChangeListener,
// AddPartitionsListener; DeleteTopicsListener and IsrChangeNotificationListener dispatch to
// topic_deletion.cc and partition_state_machine.cc): watch events become queued tasks, each
// re-reads what changed (setting the watch again) and reconciles.
#include <algorithm>
#include <utility>

#include "core/base/check.h"
#include "core/base/trace_names.h"
#include "core/controller/controller.h"

namespace ksim {

// ---- Watches -----------------------------------------------------------------------------------

void Controller::OnWatchEvent(const WatchEvent& event) {
  if (!started_) return;
  const std::string& path = event.path;
  if (path == zk::kControllerPath) {
    EnqueueElection();
    return;
  }
  if (!active_) return;
  const bool children = event.type == WatchEventType::kNodeChildrenChanged;
  if (path == zk::kBrokerIdsPath && children) {
    EnqueueActive("broker_change", [this](StepDone done) { HandleBrokerChange(std::move(done)); });
  } else if (path == zk::kBrokerTopicsPath && children) {
    EnqueueActive("topic_change", [this](StepDone done) { HandleTopicChange(std::move(done)); });
  } else if (path == zk::kDeleteTopicsPath && children) {
    EnqueueActive("delete_topics", [this](StepDone done) { HandleDeleteTopics(std::move(done)); });
  } else if (path == zk::kIsrChangeNotificationPath && children) {
    EnqueueActive("isr_change",
                  [this](StepDone done) { HandleIsrChangeNotifications(std::move(done)); });
  } else if (path == zk::kPreferredReplicaElectionPath) {
    // A data watch (ZkClient.subscribeDataChanges): created, changed or deleted, the task sets
    // it again and elects what the znode names.
    EnqueueActive("preferred_replica_election",
                  [this](StepDone done) { HandlePreferredReplicaElection(std::move(done)); });
  } else if (event.type == WatchEventType::kNodeDataChanged &&
             ParentPath(path) == zk::kBrokerTopicsPath) {
    std::string topic(NodeName(path));
    EnqueueActive("partition_modification", [this, topic](StepDone done) {
      HandlePartitionModification(topic, std::move(done));
    });
  }
}

void Controller::HandleBrokerChange(StepDone done) {
  // BrokerChangeListener: diff the children of /brokers/ids against the live set.
  struct Change {
    std::set<BrokerId> ids;
    std::set<BrokerId> added;
    std::set<BrokerId> dead;
    std::set<BrokerId> started;  // added and still registered when read
  };
  auto change = std::make_shared<Change>();
  InOrder({
              [this, change](StepDone next) { ReadBrokerIds(&change->ids, std::move(next)); },
              [this, change](StepDone next) {
                for (BrokerId id : change->ids) {
                  if (!live_brokers_.contains(id)) change->added.insert(id);
                }
                for (BrokerId id : live_brokers_) {
                  if (!change->ids.contains(id)) change->dead.insert(id);
                }
                ReadRegistrations(change->added, &change->started, std::move(next));
              },
              [this, change](StepDone next) {
                ApplyBrokerChange(change->dead, change->started);
                if (change->dead.empty() && change->started.empty()) {
                  next(Status::Ok());
                  return;
                }
                OnBrokersChanged(change->dead, change->started, std::move(next));
              },
          },
          std::move(done));
}

void Controller::ApplyBrokerChange(const std::set<BrokerId>& dead,
                                   const std::set<BrokerId>& started) {
  for (BrokerId broker : dead) {
    live_brokers_.erase(broker);
    endpoints_.erase(broker);
    registrations_.erase(broker);
    shutting_down_.erase(broker);
    channel_.RemoveBroker(broker);
    for (auto& [topic, deletion] : deletions_) deletion.sent.erase(broker);
    Emit(events_, ev::kBrokerLeft, {{field::kBroker, broker.value()}});
  }
  for (BrokerId broker : started) {
    live_brokers_.insert(broker);
    channel_.AddBroker(broker, endpoints_.at(broker));
    Emit(events_, ev::kBrokerJoined, {{field::kBroker, broker.value()}});
  }
}

void Controller::OnBrokersChanged(const std::set<BrokerId>& dead, const std::set<BrokerId>& started,
                                  StepDone done) {
  // onBrokerStartup: the new brokers hear their partitions' state (OnlineReplica).
  for (const auto& [tp, p] : partitions_) {
    if (BeingDeleted(tp.topic)) continue;
    std::vector<BrokerId> recipients;
    for (BrokerId replica : p.assigned_replicas) {
      if (started.contains(replica)) recipients.push_back(replica);
    }
    AddLeaderAndIsr(tp, recipients, false);
  }
  // onBrokerFailure / triggerOnlinePartitionStateChange: elect where no live leader is left, drop
  // dead brokers from ISRs. Then TopicDeletionManager: replicas that were down get their
  // StopReplica now.
  const Reason reason = dead.empty() ? Reason::kBrokerStartup : Reason::kBrokerFailure;
  // UpdateMetadata: onBrokerStartup names every partition; onBrokerFailure only when no partition
  // lost its leader ("during leader re-election, brokers update their metadata": the partitions
  // elected or taken offline are named by their LeaderAndIsr).
  bool leaderless = false;
  for (const auto& [tp, p] : partitions_) {
    leaderless = leaderless || (dead.contains(p.state.leader) && !BeingDeleted(tp.topic));
  }
  const bool name_all = !started.empty() || !leaderless;
  InOrder({
              [this, reason, dead](StepDone next) { ReconcileAll(reason, std::move(next), dead); },
              [this, started, name_all](StepDone next) {
                if (name_all) UpdateMetadataForAll();
                for (auto& [topic, deletion] : deletions_) {
                  for (BrokerId broker : started) {
                    if (deletion.awaiting.contains(broker) && !deletion.sent.contains(broker)) {
                      SendDeleteReplicas(topic, broker);
                    }
                  }
                }
                SendBatch();
                next(Status::Ok());
              },
          },
          std::move(done));
}

void Controller::HandleTopicChange(StepDone done) {
  // TopicChangeListener: new topics go through onNewTopicCreation; topics gone are forgotten.
  struct Change {
    std::vector<std::string> added;
    std::vector<TopicPartition> fresh;  // the partitions of the added topics that could be read
  };
  auto change = std::make_shared<Change>();
  InOrder({
              [this, change](StepDone next) {
                ReadChildren(
                    std::string(zk::kBrokerTopicsPath), /*watch=*/true,
                    [this, change](std::optional<std::vector<std::string>> children) {
                      // /brokers/topics itself gone: Kafka's listener gets no list to diff.
                      if (!children) return;
                      const std::set<std::string> names(children->begin(), children->end());
                      std::vector<std::string> removed;
                      for (const auto& [topic, assignment] : topics_) {
                        if (!names.contains(topic)) removed.push_back(topic);
                      }
                      // Deleted behind our back (or by our own deletion): forget them.
                      for (const std::string& topic : removed) ForgetTopic(topic);
                      for (const std::string& topic : names) {
                        if (!topics_.contains(topic)) change->added.push_back(topic);
                      }
                    },
                    std::move(next));
              },
              [this, change](StepDone next) {
                ForEach(
                    change->added,
                    [this](const std::string& topic, StepDone loaded) {
                      LoadTopic(topic, std::move(loaded));
                    },
                    std::move(next));
              },
              [this, change](StepDone next) {
                for (const std::string& topic : change->added) {
                  auto it = topics_.find(topic);
                  if (it == topics_.end()) continue;
                  for (const auto& [partition, replicas] : it->second) {
                    change->fresh.push_back(TopicPartition{topic, partition});
                  }
                }
                ReconcilePartitions(change->fresh, Reason::kNewPartition, std::move(next));
              },
              [this, change](StepDone next) {
                SendBatch();  // UpdateMetadata names the new partitions (onNewPartitionCreation)
                next(Status::Ok());
              },
          },
          std::move(done));
}

void Controller::ForgetTopic(const std::string& topic) {
  topics_.erase(topic);
  topic_unclean_.erase(topic);
  deletions_.erase(topic);
  std::erase_if(partitions_, [&](const auto& entry) { return entry.first.topic == topic; });
  std::erase_if(uninitialized_, [&](const TopicPartition& tp) { return tp.topic == topic; });
  std::erase_if(last_isr_member_, [&](const auto& entry) { return entry.first.topic == topic; });
}

void Controller::HandlePartitionModification(const std::string& topic, StepDone done) {
  // AddPartitionsListener: partitions added to an existing topic (kafka-topics.sh --alter).
  // Changed replica lists of existing partitions are a reassignment, which has its own path in
  // Kafka and is not modelled: they are ignored, as this listener ignores them.
  if (!topics_.contains(topic) || BeingDeleted(topic)) {
    done(Status::Ok());
    return;
  }
  struct Change {
    bool read = false;  // the assignment was there and could be decoded
    std::vector<TopicPartition> added;
  };
  auto change = std::make_shared<Change>();
  const std::string path = zk::TopicPath(topic);
  InOrder({
              [this, change, topic, path](StepDone next) {
                ReadZnode(
                    path, /*watch=*/true,
                    [this, change, topic, path](std::optional<ZnodeData> data) {
                      auto it = topics_.find(topic);
                      if (!data || it == topics_.end())
                        return;  // deleted: the topic change forgets it
                      Result<zk::ReplicaAssignment> assignment =
                          zk::DecodeReplicaAssignment(data->data);
                      if (!assignment.ok()) {
                        (void)ZkFailed(kOpGetData, path, assignment.status());
                        return;
                      }
                      change->read = true;
                      for (const auto& [partition, replicas] : *assignment) {
                        if (it->second.contains(partition)) continue;
                        it->second[partition] = replicas;
                        change->added.push_back(TopicPartition{topic, partition});
                      }
                    },
                    std::move(next));
              },
              [this, change](StepDone next) {
                ForEach(
                    change->added,
                    [this](const TopicPartition& tp, StepDone loaded) {
                      LoadPartition(tp, std::move(loaded));
                    },
                    std::move(next));
              },
              [this, change](StepDone next) {
                ReconcilePartitions(change->added, Reason::kNewPartition, std::move(next));
              },
              [this, change](StepDone next) {
                if (change->read) SendBatch();
                next(Status::Ok());
              },
          },
          std::move(done));
}

}  // namespace ksim
