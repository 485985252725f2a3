// Swarm fault generation for `ksim explore` (docs/explore.md, "Swarm generation"): one seed
// draws which fault kinds are on and how often each strikes (TigerBeetle's VOPR and "swarm
// testing": a run with few kinds at high rates reaches states a run with every kind at low rates
// never does), then a schedule of scenario actions under those rates and the user's bounds.
//
// The kinds are the scenario format's actions (docs/scenarios.md, "actions"): crash, restart,
// shutdown, slow, partition (one-way or not, with clients and zk on a side), heal,
// crash_replicas, disk_fault eio / full / corrupt_tail, zk_expire, zk_down (with its zk_up) and
// client_crash (a client's crash and restart). A fault that takes something down brings its
// repair with it when the repair kind is allowed: crash, shutdown and corrupt_tail a `restart`
// of the broker (every replica's broker when the target was `leader_of`, since a restart names
// a broker), partition a `heal`, client_crash a client restart; zk_down always its zk_up.
// Bounds: --max-down (brokers down at once, counting leader_of targets as one and a disk fault
// as down for good), the fault budget (faults per run; repairs are free).
//
// Besides the faults, two administrative actions, drawn from a stream of their own
// ("explore/admin") so that every seed's faults are the same with or without them: `create_topic`
// (a `kafka-topics.sh --create` of a new topic, its partitions and replication factor drawn) and
// `preferred_election` (`kafka-preferred-replica-election.sh`, for every partition or, one time
// in two, one partition of the base's topics named in its JSON file). Each is on with probability
// 1/2 and strikes at exponential gaps as a fault does; neither counts against the fault budget.
//
// Output: actions as JSON objects in the scenario format, sorted by at_ms (ties in generation
// order), within [1, duration_ms]; repairs due after duration_ms are left to the final phase.
// Pure: everything comes from the RandomStream handed in; integer arithmetic only.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/random.h"
#include "core/base/status.h"
#include "sim/scenario/scenario.h"

namespace ksim::sim {

enum class FaultKind : uint8_t {
  kCrash,
  kRestart,
  kShutdown,
  kSlow,
  kPartition,
  kHeal,
  kCrashReplicas,
  kDiskEio,
  kDiskFull,
  kDiskCorruptTail,
  kZkExpire,
  kZkDown,
  kClientCrash,
  // Administrative actions (IsAdministrative): drawn from their own stream.
  kCreateTopic,
  kPreferredElection,
};

bool IsAdministrative(FaultKind kind);

// The kinds' names as --faults spells them, in enum order.
const std::vector<std::string_view>& FaultKindNames();
std::string_view FaultKindName(FaultKind kind);
// "crash,partition,disk_full": kInvalidArgument naming the unknown name, the closest known one and
// the valid names; an empty list is refused too.
Result<std::vector<FaultKind>> ParseFaultKinds(std::string_view list);

// What the generator knows of the base scenario.
struct ScheduleShape {
  struct PartitionInfo {
    std::string topic;
    int32_t partition = 0;
    std::vector<int32_t> replicas;  // from `assignment`; empty: unknown (every broker)
  };
  int32_t brokers = 3;
  std::vector<PartitionInfo> partitions;  // of the `topics` entries
  std::vector<std::string> clients;       // client ids, in the order written
  int64_t duration_ms = 60000;
};
ScheduleShape ShapeOf(const Scenario& scenario);

struct SwarmLimits {
  std::vector<FaultKind> kinds;  // allowed; empty: every kind
  int32_t max_down = -1;         // brokers down at once; < 0: no bound
  int32_t fault_budget = 24;     // faults per run at most (repairs not counted)
};

// One seed's draw: the kinds on and the mean time between two faults of each.
struct SwarmProfile {
  struct Rate {
    FaultKind kind = FaultKind::kCrash;
    int64_t mean_gap_ms = 0;
  };
  std::vector<Rate> enabled;  // faults, in FaultKind order; at least one when any is allowed
  bool repairs = true;        // restart / heal follow their fault (when allowed)
  std::vector<Rate> admin;    // administrative actions on, in FaultKind order
  // "crash ~9.0 s, partition ~14.2 s; admin: create_topic ~20.1 s" (mean gaps).
  std::string Describe() const;
};

// Each allowed fault kind is on with probability 1/2 (at least one is), with a mean gap between
// 1/20 and 1/2 of the duration; repairs are on with probability 7/8. The same for each allowed
// administrative kind (none need be on), drawn from `admin_random` alone.
SwarmProfile DrawProfile(const SwarmLimits& limits, const ScheduleShape& shape,
                         RandomStream& random, RandomStream& admin_random);

// The schedule: faults at exponential gaps per kind, each applied only when the current state
// allows it (max_down, something to restart, a partition to heal, ...), drawn from `random`;
// then the administrative actions from `admin_random`, merged by time after the faults of the
// same millisecond.
std::vector<nlohmann::ordered_json> GenerateSchedule(const ScheduleShape& shape,
                                                     const SwarmLimits& limits,
                                                     const SwarmProfile& profile,
                                                     RandomStream& random,
                                                     RandomStream& admin_random);

}  // namespace ksim::sim
