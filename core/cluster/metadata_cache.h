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

  BrokerId controller_id_ = kNoBroker;
  std::map<BrokerId, BrokerEndpoint> brokers_;
  // topic -> partition -> state
  std::map<std::string, std::map<PartitionId, UpdateMetadataPartitionState>> topics_;
};

}  // namespace ksim
