// The auditor: the final read of a run (sim/check/audit.h holds what it finds). After the final
// phase (heal, restart, drain) it reads, for every partition of the audited topics, the leader's
// log from log start to HW and compares every other live replica with the leader below both HWs
// (docs/scenarios.md, "The final audit").
//
// Reading goes through core's own Log (Partition::log()) inside a VirtualDisk::InspectionScope on
// each broker's disk: no latency drawn, no fault met, nothing counted, so the audit changes
// nothing in the run (and the trace stays the same whether or not it runs). A replica whose log
// cannot be read (a disk fault) is reported in `errors`, not skipped silently. Single-threaded.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/types.h"
#include "sim/check/audit.h"
#include "sim/cluster/cluster.h"

namespace ksim::sim {

// Audits every partition of `topics` (the internal __consumer_offsets excluded unless named) as
// the cluster stands now. The leader is Cluster::LeaderOf; the ISR is the leader's.
FinalAudit AuditCluster(Cluster& cluster, const std::vector<std::string>& topics);

// The partitions of `topic` as its assignment znode lists them now; empty when the topic is not
// in ZooKeeper (never created, or deleted).
std::vector<PartitionId> PartitionsInZooKeeper(Cluster& cluster, const std::string& topic);

// PartitionsInZooKeeper for a caller that asks again and again (the final phase's drain checks,
// every 100 ms): a topic's assignment is decoded again only when its znode changed (its stat).
class ZooKeeperPartitions {
 public:
  const std::vector<PartitionId>& Of(Cluster& cluster, const std::string& topic);

 private:
  struct Topic {
    bool read = false;
    std::optional<ZnodeStat> stat;  // the znode's when decoded (nullopt: there was none)
    std::vector<PartitionId> partitions;
  };
  std::map<std::string, Topic> topics_;
};

}  // namespace ksim::sim
