#include "sim/check/audit.h"

#include "core/base/trace_names.h"

namespace ksim::sim {

const PartitionAudit* FinalAudit::Find(const TopicPartition& tp) const {
  for (const PartitionAudit& partition : partitions) {
    if (partition.tp == tp) return &partition;
  }
  return nullptr;
}

void AppendAuditJson(JsonOut& out, const FinalAudit& audit) {
  // Byte for byte what nlohmann's dump of the objects audit.h describes gives (AuditJsonTest
  // checks it).
  auto key = [&out](PlainName name, bool first = false) {
    if (!first) out.Put(',');
    AppendJsonPlain(out, name);
    out.Put(':');
  };
  out.Put('[');
  bool first_partition = true;
  for (const PartitionAudit& partition : audit.partitions) {
    if (!first_partition) out.Put(',');
    first_partition = false;
    out.Put('{');
    key(field::kTopic, /*first=*/true);
    AppendJsonString(out, partition.tp.topic);
    key(field::kPartition);
    AppendJsonInteger(out, partition.tp.partition.value());
    key(field::kLeader);
    AppendJsonInteger(out, partition.leader.value());
    key(field::kLeaderEpoch);
    AppendJsonInteger(out, partition.leader_epoch);
    key(field::kLogStartOffset);
    AppendJsonInteger(out, partition.log_start_offset.value());
    key(field::kHighWatermark);
    AppendJsonInteger(out, partition.high_watermark.value());
    key(field::kLogEndOffset);
    AppendJsonInteger(out, partition.log_end_offset.value());
    key(field::kIsr);
    AppendJsonIntegerArray(out, partition.isr);
    key(field::kValues);
    out.Put('[');
    for (size_t i = 0; i < partition.records.size(); ++i) {
      if (i > 0) out.Put(',');
      AppendJsonString(out, partition.records[i].value);
    }
    out.Put("]}");
  }
  out.Put(']');
}

}  // namespace ksim::sim
