#include "sim/check/audit.h"

#include "core/base/trace_names.h"

namespace ksim::sim {

const PartitionAudit* FinalAudit::Find(const TopicPartition& tp) const {
  for (const PartitionAudit& partition : partitions) {
    if (partition.tp == tp) return &partition;
  }
  return nullptr;
}

nlohmann::ordered_json AuditJson(const FinalAudit& audit) {
  nlohmann::ordered_json partitions = nlohmann::ordered_json::array();
  for (const PartitionAudit& partition : audit.partitions) {
    nlohmann::ordered_json values = nlohmann::ordered_json::array();
    for (const AuditedRecord& record : partition.records) values.push_back(record.value);
    partitions.push_back(
        nlohmann::ordered_json{{field::kTopic, partition.tp.topic},
                               {field::kPartition, partition.tp.partition.value()},
                               {field::kLeader, partition.leader.value()},
                               {field::kLeaderEpoch, partition.leader_epoch},
                               {field::kLogStartOffset, partition.log_start_offset.value()},
                               {field::kHighWatermark, partition.high_watermark.value()},
                               {field::kLogEndOffset, partition.log_end_offset.value()},
                               {field::kIsr, partition.isr},
                               {field::kValues, std::move(values)}});
  }
  return partitions;
}

}  // namespace ksim::sim
