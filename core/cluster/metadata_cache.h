// MetadataCache: what a broker knows of the cluster from the controller's UpdateMetadata requests
// (Kafka's kafka.server.MetadataCache): live brokers with their endpoints, the controller id, and
// every partition's leader, leader epoch, ISR and replicas. Clients' Metadata requests are
// answered from it alone, never from ZooKeeper, so a broker that missed an UpdateMetadata answers
// with what it last heard (as Kafka does). The replica fetcher finds a leader's host here.
//
// Rules (Kafka 1.x MetadataCache.getTopicMetadata / getPartitionMetadata):
// - A partition whose leader is -1 or not among the live brokers is LEADER_NOT_AVAILABLE, its
//   leader -1; replicas not alive are listed in offline_replicas (error stays NONE, as v1+).
// - A requested topic the cache does not know is UNKNOWN_TOPIC_OR_PARTITION (automatic topic
//   creation is not modelled).
// - A partition state with leader -2 (LeaderDuringDelete) removes the partition (topic deletion).
// Plain in-memory state; one thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/types.h"
#include "core/protocol/messages.h"

namespace ksim {

class MetadataCache {
 public:
  // Applies an UpdateMetadata request (REQUIRES: the caller checked its controller epoch).
  void Update(const UpdateMetadataRequest& request);

  // The Metadata response for `request`, without its correlation id.
  MetadataResponse Answer(const MetadataRequest& request) const;

  // A live broker's endpoint, or nullopt.
  std::optional<BrokerEndpoint> AliveEndpoint(BrokerId id) const;
  bool IsAlive(BrokerId id) const { return brokers_.count(id) > 0; }
  BrokerId controller_id() const { return controller_id_; }
  const std::map<BrokerId, BrokerEndpoint>& live_brokers() const { return brokers_; }
  // The cached state of a partition, or null.
  const UpdateMetadataPartitionState* Partition(const TopicPartition& tp) const;
  bool Contains(const std::string& topic) const { return topics_.count(topic) > 0; }

 private:
  TopicMetadata TopicAnswer(const std::string& topic) const;
  // Brings the kept answer of `state`'s topic up to date with it (or drops it).
  void PatchAnswer(const UpdateMetadataPartitionState& state);
  void FillAnswer(PartitionId partition, const UpdateMetadataPartitionState& state,
                  PartitionMetadata& answer) const;

  BrokerId controller_id_ = kNoBroker;
  std::map<BrokerId, BrokerEndpoint> brokers_;
  // topic -> partition -> state
  std::map<std::string, std::map<PartitionId, UpdateMetadataPartitionState>> topics_;
  // Each known topic's answer as last built, each partition's patched by the Updates that name
  // it, dropped when the set of live brokers changes or a partition is added or removed: a
  // client asks again and again (every retry.backoff.ms while a leader is missing, every
  // metadata.max.age.ms), and a topic of thousands of partitions is not built at each question.
  mutable std::map<std::string, TopicMetadata, std::less<>> answers_;
};

}  // namespace ksim
