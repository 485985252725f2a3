// Topic deletion (Kafka 0.10's TopicDeletionManager, much reduced): when delete.topic.enable,
// every replica of a topic marked under /admin/delete_topics gets StopReplica with
// delete_partitions; once all have answered, the topic's znodes go. Replicas on brokers that are
// down hold the deletion until they return (Kafka's "ineligible for deletion").
#include <utility>

#include "core/base/check.h"
#include "core/controller/controller.h"

namespace ksim {

void Controller::HandleDeleteTopics(Done done) {
  const std::string root(zk::kDeleteTopicsPath);
  zk_.GetChildren(root, /*watch=*/true,
                  Guarded([this, done](Result<std::vector<std::string>> children) {
                    if (!children.ok() || !config_.delete_topic_enable) {
                      // Without delete.topic.enable the marker stays (Kafka 0.10's
                      // TopicCommand: "This will have no impact if delete.topic.enable is not
                      // set to true.").
                      done();
                      return;
                    }
                    for (const std::string& topic : *children) {
                      if (!topics_.contains(topic)) {
                        // DeleteTopicsListener: "Ignoring request to delete non-existing topics".
                        DeleteRecursive(zk::DeleteTopicPath(topic), [](Status) {});
                        continue;
                      }
                      if (!BeingDeleted(topic)) StartTopicDeletion(topic);
                    }
                    SendBatch();
                    done();
                  }));
}

void Controller::StartTopicDeletion(const std::string& topic) {
  TopicDeletion& deletion = deletions_[topic];
  for (const auto& [partition, replicas] : topics_.at(topic)) {
    deletion.awaiting.insert(replicas.begin(), replicas.end());
  }
  std::erase_if(uninitialized_, [&](const TopicPartition& tp) { return tp.topic == topic; });
  EventFields fields;
  fields["topic"] = topic;
  Emit(events_, "topic_deletion_started", std::move(fields));
  batch_.update_metadata = true;  // announces the topic's partitions with leader -2
  if (deletion.awaiting.empty()) {
    EnqueueActive("topic_deleted",
                  [this, topic](Done done) { CompleteTopicDeletion(topic, std::move(done)); });
    return;
  }
  for (BrokerId broker : deletion.awaiting) {
    if (live_brokers_.contains(broker)) SendDeleteReplicas(topic, broker);
  }
}

void Controller::SendDeleteReplicas(const std::string& topic, BrokerId broker) {
  auto it = topics_.find(topic);
  if (it == topics_.end()) return;
  StopReplicaRequest request;
  request.controller_id = id_;
  request.controller_epoch = epoch_;
  request.delete_partitions = true;
  for (const auto& [partition, replicas] : it->second) {
    for (BrokerId replica : replicas) {
      if (replica == broker) request.partitions.push_back(TopicPartition{topic, partition});
    }
  }
  deletions_[topic].sent.insert(broker);
  channel_.Send(broker, std::move(request), Guarded([this, topic, broker](const Message& message) {
                  const auto* response = std::get_if<StopReplicaResponse>(&message);
                  bool ok = response != nullptr && response->error_code == Errc::kNone;
                  if (ok) {
                    for (const PartitionError& error : response->partitions) {
                      ok = ok && error.error_code == Errc::kNone;
                    }
                  }
                  if (!ok) {
                    // ReplicaDeletionIneligible: tried again when the broker registers again.
                    auto it = deletions_.find(topic);
                    if (it != deletions_.end()) it->second.sent.erase(broker);
                    return;
                  }
                  EnqueueActive("replica_deleted", [this, topic, broker](Done done) {
                    OnReplicaDeleted(topic, broker, std::move(done));
                  });
                }));
}

void Controller::OnReplicaDeleted(const std::string& topic, BrokerId broker, Done done) {
  auto it = deletions_.find(topic);
  if (it == deletions_.end()) {
    done();
    return;
  }
  it->second.awaiting.erase(broker);
  if (!it->second.awaiting.empty()) {
    done();
    return;
  }
  CompleteTopicDeletion(topic, std::move(done));
}

void Controller::CompleteTopicDeletion(const std::string& topic, Done done) {
  // TopicDeletionManager.completeDeleteTopic: /brokers/topics/<t> (recursively), the topic's
  // config, then the marker.
  DeleteRecursive(
      zk::TopicPath(topic), Guarded([this, topic, done](Status) {
        zk_.Delete(zk::TopicConfigPath(topic), kAnyVersion, Guarded([this, topic, done](Status) {
                     zk_.Delete(zk::DeleteTopicPath(topic), kAnyVersion,
                                Guarded([this, topic, done](Status) {
                                  topics_.erase(topic);
                                  topic_unclean_.erase(topic);
                                  deletions_.erase(topic);
                                  std::erase_if(partitions_, [&](const auto& entry) {
                                    return entry.first.topic == topic;
                                  });
                                  std::erase_if(last_isr_member_, [&](const auto& entry) {
                                    return entry.first.topic == topic;
                                  });
                                  EventFields fields;
                                  fields["topic"] = topic;
                                  Emit(events_, "topic_deleted", std::move(fields));
                                  batch_.update_metadata = true;
                                  SendBatch();
                                  done();
                                }));
                   }));
      }));
}

void Controller::DeleteRecursive(const std::string& path, std::function<void(Status)> done) {
  // ZkUtils.deletePathRecursive: children first.
  zk_.GetChildren(
      path, /*watch=*/false, Guarded([this, path, done](Result<std::vector<std::string>> children) {
        if (!children.ok()) {
          done(children.status().code() == Errc::kNoNode ? Status::Ok() : children.status());
          return;
        }
        auto join = std::make_shared<Join>(Guarded([this, path, done] {
          zk_.Delete(path, kAnyVersion, Guarded([done](Status status) {
                       done(status.code() == Errc::kNoNode ? Status::Ok() : status);
                     }));
        }));
        for (const std::string& child : *children) {
          join->Add();
          DeleteRecursive(path + "/" + child, [join](Status) { join->Arrive(); });
        }
        join->Arrive();
      }));
}

}  // namespace ksim
