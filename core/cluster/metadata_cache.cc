#include "core/cluster/metadata_cache.h"

#include <algorithm>

namespace ksim {

void MetadataCache::Update(const UpdateMetadataRequest& request) {
  controller_id_ = request.controller_id;
  brokers_.clear();
  for (const BrokerEndpoint& endpoint : request.live_brokers) {
    brokers_[endpoint.node_id] = endpoint;
  }
  for (const UpdateMetadataPartitionState& state : request.partition_states) {
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

TopicMetadata MetadataCache::TopicAnswer(const std::string& topic) const {
  TopicMetadata metadata;
  metadata.topic = topic;
  auto it = topics_.find(topic);
  if (it == topics_.end()) {
    metadata.error_code = Errc::kUnknownTopicOrPartition;
    return metadata;
  }
  for (const auto& [partition, state] : it->second) {
    PartitionMetadata pm;
    pm.partition = partition;
    pm.replicas = state.replicas;
    pm.isr = state.isr;
    for (BrokerId replica : state.replicas) {
      if (!IsAlive(replica)) pm.offline_replicas.push_back(replica);
    }
    if (state.leader == kNoBroker || !IsAlive(state.leader)) {
      pm.error_code = Errc::kLeaderNotAvailable;
      pm.leader = kNoBroker;
    } else {
      pm.leader = state.leader;
      pm.leader_epoch = state.leader_epoch;
    }
    metadata.partition_metadata.push_back(std::move(pm));
  }
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
