// GroupLocator: the broker's answer to FindCoordinator (api 10) for consumer groups, Kafka 0.10's
// KafkaApis.handleGroupCoordinatorRequest with getOrCreateGroupMetadataTopic:
//
// - The group's coordinator is the leader of offsets partition
//   OffsetsPartitionFor(group, offsets.topic.num.partitions) (core/coordinator/offsets_records.h),
//   as this broker's MetadataCache knows it: its endpoint, or COORDINATOR_NOT_AVAILABLE while the
//   partition has no live leader.
// - When the metadata cache does not know __consumer_offsets, the broker creates it in ZooKeeper
//   (TopicAdmin, as AdminUtils.createTopic): offsets.topic.num.partitions partitions, replication
//   factor min(offsets.topic.replication.factor, live brokers), topic config
//   cleanup.policy=compact, segment.bytes=offsets.topic.segment.bytes, compression.type=producer;
//   and answers COORDINATOR_NOT_AVAILABLE at once. The controller creates the partitions; a later
//   FindCoordinator finds the leader. One creation at a time; TOPIC_ALREADY_EXISTS (another
//   broker was first) is fine. A transaction coordinator (type 1) is not served here:
//   COORDINATOR_NOT_AVAILABLE.
//
// Ownership: borrows the Coordination, RandomSource and MetadataCache (they outlive it); its
// ZooKeeper callbacks do nothing once it is destroyed. Events: offsets_topic_create {partitions,
// replication_factor, error}. One thread.
#pragma once

#include <functional>
#include <memory>

#include "core/admin/topic_admin.h"
#include "core/base/events.h"
#include "core/base/random_source.h"
#include "core/cluster/metadata_cache.h"
#include "core/config/server_config.h"
#include "core/protocol/messages.h"
#include "core/zk/coordination.h"

namespace ksim {

class GroupLocator {
 public:
  GroupLocator(const BrokerConfig& config, Coordination& zk, RandomSource& random,
               const MetadataCache& metadata, EventSink events);

  FindCoordinatorResponse Handle(const FindCoordinatorRequest& request);
  bool creating() const { return creating_; }

 private:
  void CreateOffsetsTopic();

  const BrokerConfig& config_;
  const MetadataCache& metadata_;
  EventSink events_;
  TopicAdmin admin_;
  bool creating_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace ksim
