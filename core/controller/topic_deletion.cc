// Topic deletion (Kafka 0.10's TopicDeletionManager, much reduced): when delete.topic.enable,
// every replica of a topic marked under /admin/delete_topics gets StopReplica with
// delete_partitions; once all have answered, the topic's znodes go. Replicas on brokers that are
// down hold the deletion until they return (Kafka's "ineligible for deletion").
#include <utility>

#include "core/base/check.h"
#include "core/base/trace_names.h"
#include "core/controller/controller.h"

namespace ksim {

void Controller::HandleDeleteTopics(StepDone done) {
  ReadChildren(
      std::string(zk::kDeleteTopicsPath), /*watch=*/true,
      [this](std::optional<std::vector<std::string>> children) {
        // Without delete.topic.enable the marker stays (Kafka 0.10's TopicCommand: "This will
        // have no impact if delete.topic.enable is not set to true.").
        if (!children || !config_.delete_topic_enable) return;
        for (const std::string& topic : *children) {
          if (!topics_.contains(topic)) {
            // DeleteTopicsListener: "Ignoring request to delete non-existing topics".
            DeleteRecursive(zk::DeleteTopicPath(topic), {});
            continue;
          }
          if (!BeingDeleted(topic)) StartTopicDeletion(topic);
        }
        SendBatch();
      },
      std::move(done));
}

void Controller::StartTopicDeletion(const std::string& topic) {
  TopicDeletion& deletion = deletions_[topic];
  for (const auto& [partition, replicas] : topics_.at(topic)) {
    deletion.awaiting.insert(replicas.begin(), replicas.end());
  }
  std::erase_if(uninitialized_, [&](const TopicPartition& tp) { return tp.topic == topic; });
  Emit(events_, ev::kTopicDeletionStarted, {{field::kTopic, topic}});
  batch_.update_metadata = true;  // announces the topic's partitions with leader -2
  if (deletion.awaiting.empty()) {
    EnqueueActive("topic_deleted",
                  [this, topic](StepDone done) { CompleteTopicDeletion(topic, std::move(done)); });
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
                  EnqueueActive("replica_deleted", [this, topic, broker](StepDone done) {
                    OnReplicaDeleted(topic, broker, std::move(done));
                  });
                }));
}

void Controller::OnReplicaDeleted(const std::string& topic, BrokerId broker, StepDone done) {
  auto it = deletions_.find(topic);
  if (it == deletions_.end()) {
    done(Status::Ok());
    return;
  }
  it->second.awaiting.erase(broker);
  if (!it->second.awaiting.empty()) {
    done(Status::Ok());
    return;
  }
  CompleteTopicDeletion(topic, std::move(done));
}

void Controller::CompleteTopicDeletion(const std::string& topic, StepDone done) {
  // TopicDeletionManager.completeDeleteTopic: /brokers/topics/<t> (recursively), the topic's
  // config, then the marker. A failed delete (traced) leaves the deletion pending: the next
  // failover starts it again from the marker.
  InOrder(
      {
          [this, topic](StepDone next) { DeleteRecursive(zk::TopicPath(topic), std::move(next)); },
          [this, topic](StepDone next) {
            DeleteZnode(zk::TopicConfigPath(topic), std::move(next));
          },
          [this, topic](StepDone next) {
            DeleteZnode(zk::DeleteTopicPath(topic), std::move(next));
          },
          [this, topic](StepDone next) {
            ForgetTopic(topic);
            Emit(events_, ev::kTopicDeleted, {{field::kTopic, topic}});
            SendBatch();
            next(Status::Ok());
          },
      },
      std::move(done));
}

void Controller::DeleteRecursive(const std::string& path, StepDone done) {
  // ZkUtils.deletePathRecursive: children first; a znode already gone is fine.
  auto children = std::make_shared<std::optional<std::vector<std::string>>>();
  InOrder({
              [this, path, children](StepDone next) {
                ReadChildren(
                    path, /*watch=*/false,
                    [children](std::optional<std::vector<std::string>> names) {
                      *children = std::move(names);
                    },
                    std::move(next));
              },
              [this, path, children](StepDone next) {
                if (!*children) {
                  next(Status::Ok());
                  return;
                }
                ForEach(
                    **children,
                    [this, path](const std::string& child, StepDone deleted) {
                      DeleteRecursive(path + "/" + child, std::move(deleted));
                    },
                    std::move(next));
              },
              [this, path, children](StepDone next) {
                if (!*children) {
                  next(Status::Ok());
                  return;
                }
                DeleteZnode(path, std::move(next));
              },
          },
          std::move(done));
}

}  // namespace ksim
