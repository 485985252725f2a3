// What the final audit of a run found (sim/cluster/auditor.h reads it off the cluster): the
// durable truth the history checker compares with what the clients saw. Per partition of the
// audited topics, the leader's log from log start to HW (the committed records), where a live
// replica differs from the leader below both HWs, and what every live replica holds (its whole
// log: a record there is unavailable at the audit, not lost) (docs/DESIGN.md, "Scenario format";
// docs/scenarios.md, "The final audit").
//
// Values: records carry their key and value as text (the simulated clients write UTF-8 text).
// Pure data; single-threaded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/json_text.h"
#include "core/base/topic_partition.h"
#include "core/base/types.h"

namespace ksim::sim {

struct AuditedRecord {
  Offset offset{0};
  std::optional<std::string> key;
  std::string value;
  int64_t producer_id = -1;  // -1 without idempotence
  int32_t sequence = -1;
};

// Where a live replica holds something else than the leader below min(its HW, leader's HW).
struct ReplicaDivergence {
  BrokerId broker{-1};
  Offset offset{0};
  std::string detail;  // "leader has X, replica has Y" / "replica lacks offset N"
};

// A live replica's whole log, log start to log end, as read at the audit (the leader's included):
// what it would serve once it led and caught up. Read it with ForEachHeld.
struct ReplicaHolding {
  BrokerId broker{-1};
  Offset high_watermark{0};
  Offset log_end_offset{0};
  // In offset order. With `after_audit_records` (the leader's holding, as the auditor writes it),
  // its records below the partition's HW are not repeated here: they are the PartitionAudit's
  // `records`, and these follow them (a million records' audit then holds the leader's once).
  std::vector<AuditedRecord> records;
  bool after_audit_records = false;
};

struct PartitionAudit {
  TopicPartition tp;
  BrokerId leader{-1};  // -1: no live leader at the end (records then empty)
  int32_t leader_epoch = -1;
  Offset log_start_offset{0};
  Offset high_watermark{0};
  Offset log_end_offset{0};
  std::vector<int32_t> isr;
  std::vector<AuditedRecord> records;  // [log start, HW) on the leader, in offset order
  std::vector<ReplicaDivergence> divergences;
  std::vector<ReplicaHolding> held;  // every live replica whose log could be read, by broker id
};

// Calls visit(record) for every record `holding` (one of `partition.held`) holds, in offset order,
// until visit returns false.
template <class Visit>
void ForEachHeld(const PartitionAudit& partition, const ReplicaHolding& holding, Visit&& visit) {
  if (holding.after_audit_records) {
    for (const AuditedRecord& record : partition.records) {
      if (!visit(record)) return;
    }
  }
  for (const AuditedRecord& record : holding.records) {
    if (!visit(record)) return;
  }
}

struct FinalAudit {
  TimeUs t_us = 0;
  std::vector<PartitionAudit> partitions;  // in (topic, partition) order
  std::vector<std::string> errors;         // replicas or partitions that could not be read
  const PartitionAudit* Find(const TopicPartition& tp) const;
};

// The audit as the verdict line's "audit" (docs/trace-format.md): one object per partition,
// {"topic", "partition", "leader", "leader_epoch", "log_start_offset", "high_watermark",
// "log_end_offset", "isr", "values": [the committed records' values, in offset order]}.
// Written as JSON text straight into `out` (a run's audit has a member for every partition and
// a value for every record: no JSON tree is built for it).
void AppendAuditJson(JsonOut& out, const FinalAudit& audit);

}  // namespace ksim::sim
