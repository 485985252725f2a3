// The final audit of a run: after the final phase (heal, restart, drain), the durable truth the
// history checker compares with what the clients saw. For every partition of the audited topics
// it reads the leader's log from log start to HW (the committed records) and compares every other
// live replica with the leader below both HWs (docs/DESIGN.md, "Scenario format"; docs/
// scenarios.md, "The final audit").
//
// Reading goes through core's own Log (Partition::log()) inside a VirtualDisk::InspectionScope on
// each broker's disk: no latency drawn, no fault met, nothing counted, so the audit changes
// nothing in the run (and the trace stays the same whether or not it runs). A replica whose log
// cannot be read (a disk fault) is reported in `errors`, not skipped silently.
//
// Values: records carry their key and value as text (the simulated clients write UTF-8 text).
// Pure data plus one function that reads a Cluster; single-threaded.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/topic_partition.h"
#include "core/types.h"
#include "sim/cluster.h"

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
};

struct FinalAudit {
  TimeUs t_us = 0;
  std::vector<PartitionAudit> partitions;  // in (topic, partition) order
  std::vector<std::string> errors;         // replicas or partitions that could not be read
  const PartitionAudit* Find(const TopicPartition& tp) const;
};

// Audits every partition of `topics` (the internal __consumer_offsets excluded unless named) as
// the cluster stands now. The leader is Cluster::LeaderOf; the ISR is the leader's.
FinalAudit AuditCluster(Cluster& cluster, const std::vector<std::string>& topics);

// The partitions of `topic` as its assignment znode lists them now; empty when the topic is not
// in ZooKeeper (never created, or deleted).
std::vector<PartitionId> PartitionsInZooKeeper(Cluster& cluster, const std::string& topic);

// The audit as the verdict line's "audit" (docs/trace-format.md): one object per partition,
// {"topic", "partition", "leader", "leader_epoch", "log_start_offset", "high_watermark",
// "log_end_offset", "isr", "values": [the committed records' values, in offset order]}.
nlohmann::ordered_json AuditJson(const FinalAudit& audit);

}  // namespace ksim::sim
