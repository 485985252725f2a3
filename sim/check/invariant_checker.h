// InvariantChecker: the replication safety properties of a simulated cluster, checked after every
// simulation step (TigerBeetle's state_checker idea: the simulator calls it between events, it
// keeps what it needs from earlier steps and never rereads more than what changed).
//
// The rules (docs/simulation.md, "What the checker checks"):
//   (a) one_leader_per_epoch: at most one broker leads a partition in a given leader epoch over
//       the whole run (two brokers claiming leadership of tp with the same epoch is a violation).
//   (b) leader_hw_monotonic: a leader's high watermark never decreases within one leadership
//       (the same broker, process incarnation and leader epoch).
//   (c) committed_records_stable: whenever a leader's HW covers new batches while its ISR holds
//       at least min.insync.replicas members and no unclean election happened for the partition
//       (or, for batches covered while it held fewer, when it holds enough again),
//       each newly covered batch's identity (base offset, last offset, CRC-32C, which covers
//       every record byte) is remembered as committed. Every later leadership must hold the same
//       batch at that offset (or have it below its log start): checked once when a leadership is
//       first seen, and on each HW move for the newly covered batches. The first divergence is
//       reported and the new history adopted from there (no cascade of reports). An unclean
//       election (the controller's leader_elected event with "unclean": true) forgets the
//       partition's committed batches and stops recording for it. (c) follows the newest
//       leadership only: a leader of an older epoch than one already seen is a zombie (its
//       session expired or it has not heard of the election yet; with acks=1 it may still take
//       writes, which Kafka then loses) and is neither recorded nor checked.
//   (d) offsets_ordered: log start <= HW <= LEO on every live replica.
//
// Input: one ReplicaObservation per live replica per pass (the Cluster builds them from each live
// broker's Partitions; tests may build them by hand), and controller events through OnEvent. Only
// (c) reads the disk (batch headers through Log::ForEachBatch), only when a leadership appears or
// a leader's HW passes what was already recorded. A replica whose log cannot be read (a storage
// error) is skipped for (c).
//
// Output: each violation is kept (violations()) and handed to the sink (the Cluster writes an
// "invariant_violation" trace event on node "checker"); the same condition on the same replica is
// reported once until it clears. Single-threaded; holds no reference to what it observed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/base/events.h"
#include "core/base/types.h"
#include "core/cluster/partition.h"
#include "core/protocol/messages.h"
#include "core/storage/log.h"
#include "sim/check/key_hash.h"

namespace ksim::sim {

// What one live replica looks like at the end of a step.
struct ReplicaObservation {
  BrokerId broker{0};
  uint64_t incarnation = 1;  // the broker process (the node's incarnation)
  TopicPartition tp;
  ReplicaRole role = ReplicaRole::kNone;
  LeaderEpoch leader_epoch = kUndefinedEpoch;
  Offset log_start_offset{0};
  Offset high_watermark{0};
  Offset log_end_offset{0};
  int32_t isr_size = 0;
  int32_t min_insync_replicas = 1;
  // Whether its broker truncates a follower's log by leader epoch (KIP-101's OffsetsForLeaderEpoch:
  // its policy and inter.broker.protocol.version), not to its high watermark.
  bool truncates_by_leader_epoch = false;
  // The replica's log, read for rule (c) on leaders; null: (c) is skipped for this replica.
  const Log* log = nullptr;
};

// The observation of a real replica.
ReplicaObservation ObserveReplica(BrokerId broker, uint64_t incarnation,
                                  const Partition& partition);

struct InvariantViolation {
  TimeUs t_us = 0;
  std::string rule;  // one_leader_per_epoch, leader_hw_monotonic, committed_records_stable,
                     // offsets_ordered
  TopicPartition tp;
  std::string message;  // what, which brokers, epochs, offsets, when
  // committed_records_stable: the leader that lost committed records, the first offset it lost,
  // and when the batch there was recorded as committed (the history checker looks in between
  // for what Kafka allows to lose it: sim/check/history_checker.h). -1 otherwise.
  BrokerId broker{-1};
  Offset offset{-1};
  TimeUs committed_us = -1;
  // committed_records_stable: a fork the broker's truncation could not see. It truncates by
  // leader epoch (KIP-101), and the batch it holds in place of a committed one is a message set
  // (magic 0 or 1, a format before 0.11), which carries no partition leader epoch.
  bool epochless_fork = false;
  // committed_records_stable, a broker truncating by leader epoch: the epoch of the batch it
  // holds in place of a committed one, when that is a later epoch than the committed batch's
  // (its own records of an epoch the committing replicas never had: what one round of
  // OffsetsForLeaderEpoch before KIP-279 cannot see, KAFKA-6361); kUndefinedEpoch otherwise.
  LeaderEpoch held_epoch = kUndefinedEpoch;
  LeaderEpoch committed_epoch = kUndefinedEpoch;  // the committed batch's, with held_epoch
  // committed_records_stable: the base offset of a committed batch at a lower offset whose bytes
  // the batch held in place of the committed one has, all but its base offset (the same CRC and
  // number of offsets): a batch kept under a later offset, as when a byte of its base offset,
  // which the CRC does not cover, was corrupted in a torn tail and recovery kept it; -1
  // otherwise.
  Offset held_from{-1};
};

struct InvariantCheckerCounters {
  uint64_t passes = 0;
  uint64_t observations = 0;
  uint64_t batches_committed = 0;  // batch identities recorded as committed
  uint64_t batches_verified = 0;   // later comparisons of a leader's batch with a committed one
  uint64_t leaderships = 0;        // distinct (broker, incarnation, epoch, tp) leaderships seen
  uint64_t unclean_elections = 0;
};

class InvariantChecker {
 public:
  using ViolationSink = std::function<void(const InvariantViolation&)>;

  // What rules (b) and (d) remember of one replica from the pass before. The checker holds one
  // per replica observed with Observe(replica); a caller that keeps its own per replica (the
  // Cluster, beside its last observation of it) passes it to Observe(replica, track), which
  // spares the lookup, and drops it when the replica goes away (as ForgetReplica and EndPass
  // do for the checker's own).
  struct ReplicaTrack {
    uint64_t incarnation = 0;
    ReplicaRole role = ReplicaRole::kNone;
    LeaderEpoch epoch = kUndefinedEpoch;
    Offset high_watermark{0};
    bool offsets_reported = false;
    uint64_t seen_pass = 0;
  };

  explicit InvariantChecker(ViolationSink sink = nullptr);

  // One pass: Begin, one Observe per live replica (any order), End (which runs rule (c), once it
  // knows every leader of the pass; the logs observed must stay alive until then). Replicas not
  // observed in a pass are gone (crashed or stopped): their per-replica state is dropped at End
  // (the checker's tracks; a caller's own tracks are the caller's to drop).
  //
  // A partial pass (`partial`: the Cluster's, after an event that touched a few brokers)
  // observes only the replicas that changed since they were last observed: the others keep their
  // state, and a replica gone (its partition removed from a live broker) is dropped with
  // ForgetReplica (or its caller's track with it). Every rule depends only on a replica's own
  // observation and on what the checker remembers, so an unchanged replica observed again would
  // find nothing new.
  void BeginPass(TimeUs now_us, bool partial = false);
  void Observe(const ReplicaObservation& replica);
  // The same with the caller's track of the replica (a default one the first time). REQUIRES:
  // one track per replica, used for no other, kept from pass to pass while the replica lives.
  void Observe(const ReplicaObservation& replica, ReplicaTrack& track);
  void EndPass();
  void ForgetReplica(const TopicPartition& tp, BrokerId broker);

  // A controller event: leader_elected with "unclean": true marks the partition unclean;
  // topic_deleted forgets the topic (ForgetTopic).
  void OnEvent(std::string_view ev, const EventFields& fields);
  void NoteUncleanElection(const TopicPartition& tp);
  // Forgets every partition of `topic` (it was deleted; one created again starts afresh).
  void ForgetTopic(const std::string& topic);

  const std::vector<InvariantViolation>& violations() const { return violations_; }
  bool ok() const { return violations_.empty(); }
  // Every violation, one line each ("" when none): for test failure messages.
  std::string Report() const;
  const InvariantCheckerCounters& counters() const { return counters_; }
  // The committed batches remembered for `tp`: base offset -> next offset.
  std::map<Offset, Offset> CommittedBatches(const TopicPartition& tp) const;

 private:
  struct BatchId {
    Offset last_offset{0};
    uint32_t crc = 0;
    LeaderEpoch epoch = kUndefinedEpoch;  // its partition leader epoch (none before v2)
    TimeUs committed_us = 0;              // when it was recorded
  };
  // What a replica's batch in a committed one's place tells of the fork (InvariantViolation).
  struct Fork {
    bool epochless = false;
    LeaderEpoch held_epoch = kUndefinedEpoch;
    LeaderEpoch committed_epoch = kUndefinedEpoch;
    Offset held_from{-1};
  };
  struct Leadership {
    BrokerId broker{0};
    uint64_t incarnation = 0;
    LeaderEpoch epoch = kUndefinedEpoch;
    friend bool operator==(const Leadership&, const Leadership&) = default;
  };
  struct PartitionTrack {
    std::map<LeaderEpoch, BrokerId> leader_of_epoch;  // (a)
    std::set<std::pair<LeaderEpoch, BrokerId>> reported_epochs;
    std::map<Offset, BatchId> committed;  // (c): base offset -> identity
    Offset committed_end{0};              // every batch below this was processed
    // The first batch a HW covered while the ISR was below min.insync.replicas (processed, not
    // recorded): committed once the ISR is large enough again, since every member then holds
    // all below the HW (a follower joins at or past it). nullopt: none.
    std::optional<Offset> uncommitted_from;
    bool unclean = false;
    LeaderEpoch newest_epoch = kUndefinedEpoch;  // of the leaders (c) followed
    std::optional<Leadership> verified;          // the last leadership checked against `committed`
  };
  // Stores what (b) and (d) compare the next observation of the replica with.
  void Remember(const ReplicaObservation& replica, ReplicaTrack& track);
  void Violate(std::string rule, const TopicPartition& tp, std::string message);
  // committed_records_stable: `replica` lost the committed batch holding `offset` (`fork`: what
  // the batch it holds there instead tells).
  void ViolateCommitted(const ReplicaObservation& replica, const PartitionTrack& partition,
                        Offset offset, std::string message, Fork fork);
  void CheckOffsets(const ReplicaObservation& replica, ReplicaTrack& track);
  void CheckLeaderHw(const ReplicaObservation& replica, const ReplicaTrack& track);
  void CheckEpochLeader(const ReplicaObservation& replica, PartitionTrack& partition);
  // (c) for one leader observed in the pass.
  void CheckCommitted(const ReplicaObservation& replica, PartitionTrack& partition);
  // (c): a new leadership against what was committed.
  void VerifyLeadership(const ReplicaObservation& replica, PartitionTrack& partition);
  // (c): batches of the leader in [committed_end, HW).
  void RecordCommitted(const ReplicaObservation& replica, PartitionTrack& partition);
  // The committed batch holding `batch`'s first offset, else the first one starting inside it;
  // end() when none overlaps it.
  static std::map<Offset, BatchId>::const_iterator Overlapping(const PartitionTrack& partition,
                                                               const BatchHeader& batch);
  // What `replica`'s `batch`, which differs from the committed one it overlaps, tells of the fork.
  static Fork ForkOf(const ReplicaObservation& replica, const PartitionTrack& partition,
                     const BatchHeader& batch);
  // Nullopt when `batch` overlaps no committed batch (`covered` false) or equals the one it
  // overlaps; else what differs.
  std::optional<std::string> CompareWithCommitted(const PartitionTrack& partition,
                                                  const BatchHeader& batch,
                                                  bool* covered = nullptr);
  // Forgets committed batches at or after `offset` (after reporting a divergence there).
  static void ForgetFrom(PartitionTrack& partition, Offset offset);
  std::string Describe(const ReplicaObservation& replica) const;

  ViolationSink sink_;
  TimeUs now_us_ = 0;
  uint64_t pass_ = 0;
  bool partial_pass_ = false;
  // Looked up, never walked in order (their order shows nowhere): hash maps, whose entries stay
  // where they are as they grow.
  HashMap<TopicPartition, PartitionTrack> partitions_;
  HashMap<std::pair<TopicPartition, BrokerId>, ReplicaTrack> replicas_;  // Observe(replica)'s
  // This pass's leaders, for (c) at EndPass, each with its partition's track (an entry of
  // partitions_ stays where it is while others are added; none is erased during a pass).
  struct PendingLeader {
    ReplicaObservation replica;
    PartitionTrack* partition;
  };
  std::vector<PendingLeader> pending_leaders_;
  std::vector<InvariantViolation> violations_;
  InvariantCheckerCounters counters_;
};

}  // namespace ksim::sim
