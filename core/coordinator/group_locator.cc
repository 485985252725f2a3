// GroupLocator: FindCoordinator and the creation of __consumer_offsets (see group_locator.h).
#include "core/coordinator/group_locator.h"

#include <algorithm>
#include <utility>

#include "core/base/trace_names.h"
#include "core/cluster/topic.h"
#include "core/coordinator/offsets_records.h"

namespace ksim {

GroupLocator::GroupLocator(const BrokerConfig& config, Coordination& zk, RandomSource& random,
                           const MetadataCache& metadata, EventSink events)
    : config_(config),
      metadata_(metadata),
      events_(std::move(events)),
      admin_(zk, random, config, config.zookeeper_connect) {}

FindCoordinatorResponse GroupLocator::Handle(const FindCoordinatorRequest& request) {
  FindCoordinatorResponse response;
  response.coordinator.node_id = kNoBroker;
  response.coordinator.host = "";
  response.coordinator.port = -1;
  response.error_code = Errc::kCoordinatorNotAvailable;
  if (request.coordinator_type != 0) return response;  // no transaction coordinator here
  if (request.coordinator_key.empty()) {
    response.error_code = Errc::kInvalidGroupId;
    return response;
  }
  if (!metadata_.Contains(std::string(kGroupMetadataTopicName))) {
    CreateOffsetsTopic();
    return response;
  }
  const int32_t partition =
      OffsetsPartitionFor(request.coordinator_key, config_.offsets_topic_num_partitions);
  const UpdateMetadataPartitionState* state = metadata_.Partition(
      TopicPartition{std::string(kGroupMetadataTopicName), PartitionId(partition)});
  if (state == nullptr || state->leader == kNoBroker) return response;
  std::optional<BrokerEndpoint> endpoint = metadata_.AliveEndpoint(state->leader);
  if (!endpoint.has_value()) return response;
  response.error_code = Errc::kNone;
  response.coordinator = *endpoint;
  return response;
}

void GroupLocator::CreateOffsetsTopic() {
  if (creating_) return;
  const auto live = static_cast<int32_t>(metadata_.live_brokers().size());
  const int32_t replication_factor =
      live > 0 ? std::min<int32_t>(config_.offsets_topic_replication_factor, live)
               : config_.offsets_topic_replication_factor;
  creating_ = true;
  zk::TopicConfig overrides = {
      {"cleanup.policy", "compact"},
      {"segment.bytes", std::to_string(config_.offsets_topic_segment_bytes)},
      {"compression.type", "producer"},
  };
  const int32_t partitions = config_.offsets_topic_num_partitions;
  admin_.CreateTopic(std::string(kGroupMetadataTopicName), partitions, replication_factor,
                     std::nullopt, std::move(overrides),
                     [this, alive = std::weak_ptr<bool>(alive_), partitions,
                      replication_factor](Result<ReplicaAssignment> created) {
                       if (alive.expired()) return;
                       creating_ = false;
                       Errc error = created.ok() ? Errc::kNone : created.status().code();
                       Emit(events_, ev::kOffsetsTopicCreate,
                            {{field::kPartitions, partitions},
                             {field::kReplicationFactor, replication_factor},
                             {field::kError, ErrcName(error)}});
                     });
}

}  // namespace ksim
