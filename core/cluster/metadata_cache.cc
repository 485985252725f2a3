#include "core/cluster/metadata_cache.h"

#include <algorithm>

namespace ksim {

void MetadataCache::Update(const UpdateMetadataRequest& request) {
  controller_id_ = request.controller_id;
  std::map<BrokerId, BrokerEndpoint> brokers;
  for (const BrokerEndpoint& endpoint : request.live_brokers) {
    brokers[endpoint.node_id] = endpoint;
  }
  // The answers tell which replicas and leaders are alive: another set of live brokers drops
  // them all.
  const bool same_alive =
      std::equal(brokers.begin(), brokers.end(), brokers_.begin(), brokers_.end(),
                 [](const auto& a, const auto& b) { return a.first == b.first; });
  if (!same_alive) answers_.clear();
  brokers_ = std::move(brokers);
  for (const UpdateMetadataPartitionState& state : request.partition_states) {
    if (!answers_.empty()) PatchAnswer(state);
    if (state.leader == kLeaderDuringDelete) {
      auto topic = topics_.find(state.tp.topic);
      if (topic == topics_.end()) continue;
      topic->second.erase(state.tp.partition);
      if (topic->second.empty()) topics_.erase(topic);
      continue;
    }
    topics_[state.tp.topic][state.tp.partition] = state;
  }
}

MetadataResponse MetadataCache::Answer(const MetadataRequest& request) const {
  MetadataResponse response;
  response.controller_id = controller_id_;
  for (const auto& [id, endpoint] : brokers_) response.brokers.push_back(endpoint);
  if (!request.topics.has_value()) {
    for (const auto& [topic, partitions] : topics_) {
      response.topic_metadata.push_back(TopicAnswer(topic));
    }
    return response;
  }
  for (const std::string& topic : *request.topics) {
    response.topic_metadata.push_back(TopicAnswer(topic));
  }
  return response;
}

void MetadataCache::PatchAnswer(const UpdateMetadataPartitionState& state) {
  auto answer = answers_.find(state.tp.topic);
  if (answer == answers_.end()) return;
  const std::vector<PartitionMetadata>& partitions = answer->second.partition_metadata.get();
  auto at = std::lower_bound(
      partitions.begin(), partitions.end(), state.tp.partition,
      [](const PartitionMetadata& partition, PartitionId id) { return partition.partition < id; });
  if (state.leader == kLeaderDuringDelete || at == partitions.end() ||
      at->partition != state.tp.partition) {
    answers_.erase(answer);  // a partition gone or new: built again at the next question
    return;
  }
  // Mutable: a response still holding the answer keeps it as it was when sent.
  const auto index = static_cast<size_t>(at - partitions.begin());
  FillAnswer(state.tp.partition, state, answer->second.partition_metadata.Mutable()[index]);
}

void MetadataCache::FillAnswer(PartitionId partition, const UpdateMetadataPartitionState& state,
                               PartitionMetadata& answer) const {
  answer.error_code = Errc::kNone;
  answer.partition = partition;
  answer.leader = kNoBroker;
  answer.leader_epoch = kUndefinedEpoch;
  answer.replicas = state.replicas;
  answer.isr = state.isr;
  answer.offline_replicas.clear();
  for (BrokerId replica : state.replicas) {
    if (!IsAlive(replica)) answer.offline_replicas.push_back(replica);
  }
  if (state.leader == kNoBroker || !IsAlive(state.leader)) {
    answer.error_code = Errc::kLeaderNotAvailable;
  } else {
    answer.leader = state.leader;
    answer.leader_epoch = state.leader_epoch;
  }
}

TopicMetadata MetadataCache::TopicAnswer(const std::string& topic) const {
  if (auto built = answers_.find(topic); built != answers_.end()) return built->second;
  TopicMetadata metadata;
  metadata.topic = topic;
  auto it = topics_.find(topic);
  if (it == topics_.end()) {
    metadata.error_code = Errc::kUnknownTopicOrPartition;
    return metadata;
  }
  std::vector<PartitionMetadata> partitions;
  partitions.reserve(it->second.size());
  for (const auto& [partition, state] : it->second) {
    FillAnswer(partition, state, partitions.emplace_back());
  }
  metadata.partition_metadata = std::move(partitions);
  answers_.emplace(topic, metadata);
  return metadata;
}

std::optional<BrokerEndpoint> MetadataCache::AliveEndpoint(BrokerId id) const {
  auto it = brokers_.find(id);
  if (it == brokers_.end()) return std::nullopt;
  return it->second;
}

const UpdateMetadataPartitionState* MetadataCache::Partition(const TopicPartition& tp) const {
  auto topic = topics_.find(tp.topic);
  if (topic == topics_.end()) return nullptr;
  auto it = topic->second.find(tp.partition);
  return it == topic->second.end() ? nullptr : &it->second;
}

}  // namespace ksim
