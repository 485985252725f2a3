#include "sim/check/audit.h"

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
        nlohmann::ordered_json{{"topic", partition.tp.topic},
                               {"partition", partition.tp.partition.value()},
                               {"leader", partition.leader.value()},
                               {"leader_epoch", partition.leader_epoch},
                               {"log_start_offset", partition.log_start_offset.value()},
                               {"high_watermark", partition.high_watermark.value()},
                               {"log_end_offset", partition.log_end_offset.value()},
                               {"isr", partition.isr},
                               {"values", std::move(values)}});
  }
  return partitions;
}

}  // namespace ksim::sim
