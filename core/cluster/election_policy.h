// Leader election for one partition, as the controller runs it: pure functions from what the
// controller knows (assignment, live brokers, the ISR and leader stored in ZooKeeper, and for
// some policies each live replica's log end offset or which ISR member died last) to a new
// leader and ISR, or to "offline". No I/O, no clock; the only randomness comes through the
// RandomSource handed in with the input. Safe to share between threads (policies hold no state).
//
// Failover policies (ElectionPolicy, chosen per scenario by name with MakeElectionPolicy) run
// when a partition has no live leader: at creation, after its leader died or lost its ZooKeeper
// session. While the current leader is live and in the ISR the partition is online and every
// policy keeps it (kUnchanged), as Kafka only elects for New and Offline partitions.
//   clean              Kafka's OfflinePartitionLeaderSelector with unclean.leader.election.enable
//                      =false: the first live replica, in assignment order, that is in the ISR;
//                      new ISR = the live ISR members. Offline when none is live.
//   unclean            The same, else (unclean.leader.election.enable=true, the 0.10 default) the
//                      first live assigned replica with the ISR reset to it: an unclean election.
//   random-isr         The seed's description ("Kafka picks a follower from the ISR at random"):
//                      a uniformly drawn live ISR member. Offline when none is live.
//   longest-log        The live assigned replica with the greatest log end offset, ties broken by
//                      assignment order; unclean only when it is not in the ISR (ISR reset to it).
//   wait-for-last-isr  "Wait for the last replica in the ISR to come back" (Kafka's documented
//                      choice against unclean election): when the controller recorded which ISR
//                      member died last, only that broker may lead, once it is back (ISR reset
//                      to it); without such a record, as `clean`.
// Kafka keeps the last ISR member in ZooKeeper's ISR when it dies (from 1.1 always, before only
// when unclean election is off; the controller empties the ISR under `unclean` before 1.1), so
// `clean` already waits for it after one-by-one failures; the two differ when several ISR
// members die together and a stale one returns first.
//
// The other selectors Kafka's controller uses (PartitionLeaderSelector.scala) are free functions:
// controlled shutdown, preferred replica election, partition reassignment.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/random_source.h"
#include "core/base/status.h"
#include "core/base/types.h"

namespace ksim {

struct ElectionInput {
  std::string partition;                    // "t-0", used in explanations only
  std::vector<BrokerId> assigned_replicas;  // assignment order; the first is the preferred leader
  std::set<BrokerId> live_brokers;          // brokers registered in ZooKeeper right now
  std::vector<BrokerId> isr;  // the ISR as stored (empty only after all died, `unclean` < 1.1)
  std::optional<BrokerId> current_leader;  // as stored; nullopt when there is none (-1)
  // longest-log: the log end offset of each live assigned replica.
  std::map<BrokerId, Offset> log_end_offsets;
  // wait-for-last-isr: the ISR member that died last, when every ISR member died.
  std::optional<BrokerId> last_isr_member;
  // random-isr: the source of the draw. REQUIRES: non-null for random-isr.
  RandomSource* random = nullptr;
};

enum class ElectionOutcome {
  kElected,    // `leader` and `isr` are the partition's new state
  kUnchanged,  // no election needed: the current leader stays, the ISR is untouched
  kOffline,    // no eligible replica: the partition has no leader; the stored ISR is kept
  kRefused,    // a shutdown/preferred/reassignment move is impossible now; state unchanged
};

struct ElectionResult {
  ElectionOutcome outcome = ElectionOutcome::kOffline;
  std::optional<BrokerId> leader;  // set for kElected and kUnchanged
  std::vector<BrokerId> isr;
  bool unclean = false;  // the leader was not in the ISR: acknowledged records may be lost
  // Brokers that receive the LeaderAndIsr request (Kafka: live assigned replicas, or the
  // reassigned replicas for a reassignment).
  std::vector<BrokerId> recipients;
  std::string explanation;  // Kafka's log/exception wording, for traces and the CLI

  bool has_leader() const { return leader.has_value(); }
};

class ElectionPolicy {
 public:
  virtual ~ElectionPolicy() = default;
  virtual std::string_view name() const = 0;
  virtual ElectionResult Elect(const ElectionInput& input) const = 0;
};

// The policy called `name`: clean, unclean, random-isr, longest-log, wait-for-last-isr.
// kInvalidArgument naming the valid ones otherwise.
Result<std::unique_ptr<ElectionPolicy>> MakeElectionPolicy(std::string_view name);
// Every name MakeElectionPolicy accepts, in the order above.
const std::vector<std::string_view>& ElectionPolicyNames();
// The policy Kafka itself runs for a topic: `unclean` when unclean.leader.election.enable is
// true (the 0.10 default), else `clean`.
std::string_view KafkaElectionPolicyName(bool unclean_leader_election_enable);

// PartitionStateMachine.initializeLeaderAndIsrForPartition (a new partition going online): the
// first live assigned replica leads, the ISR is every live assigned replica. kOffline when no
// assigned replica is live.
ElectionResult InitialLeaderAndIsr(const ElectionInput& input);
// ControlledShutdownLeaderSelector: `shutting_down` brokers are leaving cleanly (they still count
// as live for the choice of recipients). New ISR = ISR minus the shutting-down brokers; leader =
// the first assigned replica that is live or shutting down and in the new ISR. kRefused when the
// shutting-down brokers were the whole ISR.
ElectionResult SelectControlledShutdownLeader(const ElectionInput& input,
                                              const std::set<BrokerId>& shutting_down);
// PreferredReplicaPartitionLeaderSelector: the first assigned replica becomes leader when it is
// live and in the ISR (ISR unchanged); kUnchanged when it already leads; kRefused otherwise.
ElectionResult SelectPreferredReplicaLeader(const ElectionInput& input);
// ReassignedPartitionLeaderSelector: the first of `reassigned_replicas` that is live and in the
// ISR (ISR unchanged; recipients = the reassigned replicas). kRefused when there is none.
ElectionResult SelectReassignedPartitionLeader(const ElectionInput& input,
                                               const std::vector<BrokerId>& reassigned_replicas);

}  // namespace ksim
