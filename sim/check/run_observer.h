// RunObserver: what happened in a run besides the clients' history, gathered from the World's
// state events (World::AddTraceTap) as they are written: leader elections, truncations, faults,
// producer retries, consumer rebalances, invariant violations, and per partition the time it was
// unavailable. The history checker (sim/check/history_checker.h) reads it to count elections and
// unavailability and to name the cause of each loss or duplicate. docs/scenarios.md, "Metrics".
//
// Events read (docs/trace-format.md): the controller's leader_elected {topic, partition,
// leader, epoch, isr, unclean, reason, policy} and partition_offline {topic, partition};
// a partition's isr_shrink / isr_expand {topic, partition, isr[, added]} on its leader's node and
// truncate {topic, partition, from_leo, to, records, reason} on the truncating broker's node;
// the World's crash / shutdown / restart (on broker-<id> and client nodes), partition, heal,
// slow, disk_fault and the Cluster's zk_expire; a producer's produce_retry {topic, partition,
// attempt, error}; a consumer's partitions_assigned / partitions_revoked and offset_reset
// {topic, partition, strategy, offset, from} and offset_fetched {group, topic, partition,
// offset}; a group coordinator's offsets_committed {group, partitions, error} on its broker's
// node; ZooKeeperServer's zk_down / zk_up on node `zk`; the checker's invariant_violation; the
// runner's cli_output {index, line} on node `scenario` (only to see a console consumer stop
// itself). Other events are ignored.
//
// Faults: a console consumer stopped at --max-messages (ConsumerClient::Stop: the tool prints
// "Processed a total of N messages" as cli_output of its action index N, then its node cli-<N>
// shuts down) is not a fault: that shutdown, and the final phase's restart of that node (which
// runs nothing), are not listed. Its crash, if one were injected, still is.
//
// Unavailability (the `unavailable_ms` metric): a partition is unavailable while it has no
// leader (before its first election, after partition_offline, or while the elected leader's
// node is down: crashed or shut down and not yet replaced) or while its ISR is smaller than its
// min.insync.replicas (SetMinInsyncReplicas; 1 when never set). It is counted from the moment
// the partition is first known (its first leader_elected or partition_offline, or
// WatchPartition) to the end given to UnavailableMs. Internal topics (names starting with "__")
// are watched like any other; the checker decides which to sum.
//
// Details: an isr_shrink / isr_expand counts only from the node of the partition's current
// leader (a deposed leader's late ISR write must not overwrite its successor's ISR); a
// leader_elected naming a broker whose node is down (the controller had not noticed the crash
// yet) leaves the partition unavailable until that broker restarts or another is elected; a
// restart of the leader's node makes the partition available again (the broker recovers as the
// leader the controller still names). A network partition that cuts a live leader off is not
// unavailability by this measure (the controller still names a live leader). Faults are
// recorded whatever node they hit (isolate included); only broker nodes change availability.
// SetMinInsyncReplicas takes effect at the later of the World's time and the last event seen.
//
// Single-threaded; borrows nothing after construction but the World it taps (which must
// outlive it: the tap holds `this`).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/topic_partition.h"
#include "core/base/types.h"
#include "sim/world/world.h"

namespace ksim::sim {

struct ElectionRecord {
  TimeUs t_us = 0;
  TopicPartition tp;
  BrokerId leader{-1};
  int32_t epoch = 0;
  std::vector<int32_t> isr;
  bool unclean = false;
  std::string reason;  // new_partition, controller_failover, broker_failure, ...
  std::string policy;  // the election policy's name
};

struct TruncationRecord {
  TimeUs t_us = 0;
  BrokerId broker{-1};
  TopicPartition tp;
  Offset from_leo{0};   // the log end before
  Offset to{0};         // the log end after (the new log start for offset_out_of_range)
  int64_t records = 0;  // records removed: offsets [from_leo - records, from_leo)
  std::string reason;   // the truncate event's reason: high_watermark, leader_epoch, ...
  // Whether the truncation removed `offset`.
  bool Removed(Offset offset) const { return offset < from_leo && offset >= from_leo - records; }
};

// A fault or lifecycle change of a node, or a network change (node "world").
// A broker taking a role for a partition (become_leader / become_follower).
struct RoleRecord {
  TimeUs t_us = 0;
  BrokerId broker{-1};
  TopicPartition tp;
  bool leader = false;
  BrokerId followed{-1};  // become_follower: the leader it follows
  int32_t epoch = -1;     // the leader epoch of the role
};

// A leader's isr_expand {topic, partition, isr, added}: brokers it added back to the ISR (only
// the partition's current leader's, as for unavailability).
struct IsrExpandRecord {
  TimeUs t_us = 0;
  TopicPartition tp;
  std::vector<int32_t> added;
  // Each added broker's log end as the leader knew it when it wrote the event (the offset of its
  // last fetch, on which Kafka's maybeExpandIsr decided), in `added`'s order; -1 when not known
  // (no RunObserver::SetFollowerLogEnd, or the leader has none).
  std::vector<int64_t> log_ends;
};

struct FaultRecord {
  TimeUs t_us = 0;
  std::string node;
  // crash, shutdown, restart, partition, heal, isolate, slow, disk_fault, zk_expire, zk_down,
  // zk_up
  std::string ev;
  std::string detail;  // a short human text of the event's fields ("" when none)
  // A power loss (crash, not halt): the directories of the node's disk that held unsynced writes
  // (the crash event's `unsynced`), sorted.
  std::vector<std::string> unsynced;
};

struct RetryRecord {
  TimeUs t_us = 0;
  std::string client;
  TopicPartition tp;
  int32_t attempt = 0;
  std::string error;  // Kafka's error name
};

// A consumer's offset_reset {topic, partition, strategy, offset, from}: where it started (from
// -1: it had no position, e.g. no committed offset) or restarted (from: the position out of range).
struct OffsetResetRecord {
  TimeUs t_us = 0;
  std::string client;
  TopicPartition tp;
  std::string strategy;  // earliest or latest
  Offset offset{0};      // the position it reset to
  Offset from{-1};       // the position it had, -1 when none
};

// A consumer's offset_fetched: the committed position of `group` it resumed `tp` from (-1:
// none). A position past what the consumer saw committed means a commit it thought lost (or
// never heard back from) had been written.
struct OffsetFetchRecord {
  TimeUs t_us = 0;
  std::string client;
  std::string group;  // "" without a group
  TopicPartition tp;
  Offset offset{-1};
};

// A group coordinator's offsets_committed: a commit of `group` written to the offsets log
// (error NONE) or refused, on broker `broker`, whether or not its answer reached the client.
struct CommitWriteRecord {
  TimeUs t_us = 0;
  BrokerId broker{-1};
  std::string group;
  std::string error;  // Kafka's error name, NONE when written
};

struct RebalanceRecord {
  TimeUs t_us = 0;
  std::string client;
  std::string ev;  // partitions_assigned or partitions_revoked
  std::vector<TopicPartition> partitions;
};

// The invariant checker's invariant_violation {rule, topic, partition, message, [broker, offset,
// committed_us]}.
struct ViolationRecord {
  TimeUs t_us = 0;
  std::string rule;
  TopicPartition tp;
  std::string message;
  BrokerId broker{-1};       // committed_records_stable: the leader lacking committed records
  Offset offset{-1};         // the first committed offset it lacks
  TimeUs committed_us = -1;  // when that batch was committed
  // A fork the leader's truncation by leader epoch could not see: the batch it holds in the
  // committed one's place is a message set (a format before 0.11), without an epoch.
  bool epochless_fork = false;
  // A fork by its own records of a later epoch than the committed batch's, on a leader
  // truncating by leader epoch (InvariantViolation::held_epoch); kUndefinedEpoch otherwise.
  LeaderEpoch held_epoch = kUndefinedEpoch;
  LeaderEpoch committed_epoch = kUndefinedEpoch;
  // The base offset of the committed batch whose bytes the held one has under another offset
  // (InvariantViolation::held_from); -1 otherwise.
  Offset held_from{-1};
  // "<rule> <topic>-<partition>: <message>".
  std::string Text() const;
};

// "12.300 s": a time in seconds with 3 decimals (milliseconds, rounded down), as causes say it.
std::string FormatSeconds(TimeUs t_us);

class RunObserver {
 public:
  // Taps `world`.
  explicit RunObserver(World& world);
  RunObserver(const RunObserver&) = delete;
  RunObserver& operator=(const RunObserver&) = delete;

  // What the tap calls; public so tests can feed events by hand.
  void OnEvent(TimeUs t_us, std::string_view node, std::string_view ev, const TraceFields& fields);

  // The topic's min.insync.replicas from now on (topic creation, a config change).
  void SetMinInsyncReplicas(const std::string& topic, int32_t min_isr);
  // Starts counting `tp` as unavailable (no leader yet) from `t_us` if it is not known yet.
  void WatchPartition(const TopicPartition& tp, TimeUs t_us);
  // What an isr_expand record's log ends are read from, when the event is written: `leader`'s
  // knowledge of `follower`'s log end in `tp` (-1 when none). The runner answers from the
  // leader's Partition; asked once per added broker, so it costs nothing per append.
  using FollowerLogEnd =
      std::function<int64_t(BrokerId leader, const TopicPartition& tp, BrokerId follower)>;
  void SetFollowerLogEnd(FollowerLogEnd source) { follower_log_end_ = std::move(source); }
  // Told of each replica_fetcher_stopped event as it is written (not in a replay): `replica`'s
  // fetcher from `leader` stopped. The runner reads both replicas then, before later events
  // change what shows why (ScenarioRun::NoteFetcherStop).
  using FetcherStopped = std::function<void(BrokerId replica, BrokerId leader)>;
  void SetFetcherStopped(FetcherStopped hook) { fetcher_stopped_ = std::move(hook); }

  const std::vector<ElectionRecord>& elections() const { return elections_; }
  const std::vector<TruncationRecord>& truncations() const { return truncations_; }
  const std::vector<RoleRecord>& roles() const { return roles_; }
  const std::vector<IsrExpandRecord>& isr_expansions() const { return isr_expansions_; }
  const std::vector<FaultRecord>& faults() const { return faults_; }
  const std::vector<RetryRecord>& retries() const { return retries_; }
  const std::vector<RebalanceRecord>& rebalances() const { return rebalances_; }
  const std::vector<OffsetResetRecord>& offset_resets() const { return offset_resets_; }
  const std::vector<OffsetFetchRecord>& offset_fetches() const { return offset_fetches_; }
  const std::vector<CommitWriteRecord>& commit_writes() const { return commit_writes_; }
  // invariant_violation events, in order.
  const std::vector<ViolationRecord>& invariant_violations() const { return violations_; }

  // Every partition known, in order.
  std::vector<TopicPartition> partitions() const;
  // Milliseconds (rounded down) `tp` was unavailable from when it became known until `end_us`.
  int64_t UnavailableMs(const TopicPartition& tp, TimeUs end_us) const;

 private:
  // OnEvent's work, for the tap (EventFields, read from their text) and for tests (JSON): `get`
  // gives the fields, asked only by the events read. Fields: EventFields or TraceFields.
  template <class Fields>
  void Handle(TimeUs t_us, std::string_view node, std::string_view ev,
              const std::function<const Fields&()>& get);
  struct PartitionTrack {
    TimeUs known_since_us = 0;
    BrokerId leader{-1};
    std::vector<int32_t> isr;
    bool unavailable = true;
    TimeUs unavailable_since_us = 0;
    TimeUs unavailable_total_us = 0;
  };
  PartitionTrack& Track(const TopicPartition& tp, TimeUs t_us);
  void Reassess(const TopicPartition& tp, PartitionTrack& track, TimeUs t_us);
  void ReassessAll(TimeUs t_us);
  bool BrokerUp(BrokerId broker) const;
  void OnFault(TimeUs t_us, std::string_view node, std::string_view ev, const TraceFields& fields);

  World& world_;
  FollowerLogEnd follower_log_end_;
  FetcherStopped fetcher_stopped_;
  TimeUs last_t_us_ = 0;  // the latest time seen (an event or the world's clock)

  std::vector<ElectionRecord> elections_;
  std::vector<TruncationRecord> truncations_;
  std::vector<RoleRecord> roles_;
  std::vector<IsrExpandRecord> isr_expansions_;
  std::vector<FaultRecord> faults_;
  std::vector<RetryRecord> retries_;
  std::vector<RebalanceRecord> rebalances_;
  std::vector<OffsetResetRecord> offset_resets_;
  std::vector<OffsetFetchRecord> offset_fetches_;
  std::vector<CommitWriteRecord> commit_writes_;
  std::vector<ViolationRecord> violations_;
  std::map<TopicPartition, PartitionTrack> partitions_;
  std::map<std::string, int32_t, std::less<>> min_isr_;
  std::map<int32_t, bool> broker_up_;    // broker id -> node up (absent: up)
  std::set<std::string> stopped_tools_;  // cli-<n> nodes whose console consumer stopped itself
};

}  // namespace ksim::sim
