// Partition: one broker's replica of one partition and, while the broker leads it, the leader's
// view of every replica: Kafka's kafka.cluster.Partition and Replica (0.10 rules, 0.10.2's
// lagging-follower fix from that release on, KIP-101/279 leader epochs). It is sans-IO: it owns no
// network, no timer and no ZooKeeper session. The broker (core/server/broker.h) feeds it requests
// and fetch results and carries out what it asks for (an ISR change to write to ZooKeeper, a
// truncation offset asked of the leader).
//
// What it keeps, and the rules (docs/replication.md has the full story):
// - Role: leader, follower or none (not yet told by the controller, or stopped), the current
//   leader epoch, the assigned replicas, the ISR and the ZooKeeper version of the partition's
//   state znode (ISR writes are conditional on it, as Kafka's Partition.updateIsr).
// - Offsets on this replica, checked after every change: log start <= HW <= LEO.
// - As leader, per remote replica: its LEO (the offset it last fetched from; unknown until its
//   first fetch) and the last time it was caught up. A fetch at offset >= the leader's LEO at that
//   moment marks it caught up now. The rest depends on the broker's release (docs/versions.md):
//   - from 0.10.2 (KAFKA-4485): a fetch at offset >= the leader's LEO at its previous fetch marks
//     it caught up as of that previous fetch (a follower that keeps up with a steady stream is
//     never counted as lagging), and MakeLeader counts the ISR members caught up now.
//   - before (0.10.0.1's Replica.updateLogReadResult, isReadFromLogEnd): only a fetch at the
//     leader's LEO counts, so a follower of a steady stream leaves the ISR and joins it again.
//     Its caught-up time is kept from the moment this broker first learned of the replica
//     (Kafka's Replica object, created at the first LeaderAndIsr) through every role change:
//     MakeLeader resets nothing, and a new leader may shrink its ISR at its first check.
// - ISR shrink (Kafka's maybeShrinkIsr): followers in the ISR not caught up for longer than
//   replica.lag.time.max.ms leave it. ISR expand (maybeExpandIsr): an assigned follower outside
//   the ISR whose LEO reached the leader's HW joins it; from 2.1 (KAFKA-7128) only once it
//   fetches at or past the LEO the leader had when it became leader (its epoch's start). Both are
//   proposals (ProposeIsrShrink, the result of UpdateFollowerFetch); the ISR changes only when the
//   broker reports the ZooKeeper write succeeded (ApplyIsrChange). One proposal at a time.
// - HW on the leader = min LEO over the ISR (the leader's own LEO included); it never decreases.
//   On a follower, HW = min(own LEO, the leader's HW in the last fetch response). After a restart
//   the HW comes from the replication-offset-checkpoint (clamped to the LEO).
// - Leader epochs: the leader stamps its epoch into every batch it appends; every append (leader or
//   follower) records a new epoch's first offset in the LeaderEpochCache, truncation cuts it back,
//   a rising log start trims it (the Partition is the Log's LogObserver). From 2.1 MakeLeader
//   records the new epoch at the current LEO (KAFKA-7415, makeLeader: epochCache.assign(epoch,
//   LEO)); before, the leader's first append in the epoch records it.
// - Producer state (KIP-98 idempotence, core/storage/producer_state.h), kept here as Kafka keeps it
// in
//   the Log: the leader validates a produce's batches before the append (a fenced epoch, a gap,
//   an unknown producer are refused; a retried batch among the producer's last five is answered
//   with the original offsets and not written again); every append, leader or follower, updates
//   it (so a follower that becomes leader deduplicates too); a truncation rebuilds it from the
//   latest snapshot and the log; a rising log start trims it; each segment roll and a clean
//   Close() snapshot it. The creator rebuilds it from snapshots and the log before handing it in.
// - acks: acks=-1 is refused before the append with NOT_ENOUGH_REPLICAS when the ISR is smaller
//   than min.insync.replicas; it completes when HW passes the batch, with
//   NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank below min.insync.replicas meanwhile.
//   acks=N > 1 (the seed's 0.8 semantics, taken by a 0.8.2 broker only) completes when N ISR
//   members, the leader included, have the batch; acks < -1 (0.8.2 only) waits as -1 without
//   the refusal before the append. acks=1 completes at the append, acks=0 is never answered (the
//   broker's concern).
// - Truncation when becoming follower, by policy: kHighWatermark truncates to the replica's own HW
//   (Kafka 0.10; loses acknowledged records in KIP-101's scenarios); kLeaderEpoch asks the leader
//   OffsetsForLeaderEpoch(latest local epoch) and truncates where that epoch ends on the leader
//   (KIP-101), from 2.0 taking KIP-279's rounds when the leader answers an earlier epoch
//   (LeaderEpochRules: the broker's release chooses the form).
//
// Ownership and threads: borrows the Log (owned by the broker's LogManager; it must outlive the
// Partition or the Partition is destroyed first) and the Clock; owns its LeaderEpochCache. One
// thread at a time. Events (become_leader, become_follower, hw, isr_shrink, isr_expand, truncate,
// append) go to the EventSink, partition-scoped.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/clock.h"
#include "core/base/events.h"
#include "core/base/status.h"
#include "core/base/types.h"
#include "core/config/kafka_version.h"
#include "core/protocol/messages.h"
#include "core/storage/leader_epoch_cache.h"
#include "core/storage/log.h"
#include "core/storage/producer_state.h"

namespace ksim {

enum class ReplicaRole : uint8_t { kNone, kLeader, kFollower };
std::string_view ReplicaRoleName(ReplicaRole role);

// How a replica that becomes follower decides where to cut its log (a scenario's
// policy.truncation; unset, the release's: DefaultTruncationPolicy).
enum class TruncationPolicy : uint8_t {
  kHighWatermark,  // "high-watermark": Kafka 0.10, truncate to the own HW
  kLeaderEpoch,    // "leader-epoch": KIP-101 OffsetsForLeaderEpoch, in its release's form
};
std::string_view TruncationPolicyName(TruncationPolicy policy);
// kInvalidArgument naming the valid names otherwise.
Result<TruncationPolicy> ParseTruncationPolicy(std::string_view name);
// What a broker of `release` does: high-watermark before 0.11.0, leader-epoch from 0.11.0
// (KIP-101; 0.11.0.0's ReplicaFetcherThread.maybeTruncate).
TruncationPolicy DefaultTruncationPolicy(KafkaRelease release);

// The form leader-epoch truncation takes at a broker's release (docs/versions.md, "Follower
// truncation"). Before 0.11, where the policy is ksim's choice, it takes the newest form.
struct LeaderEpochRules {
  // OffsetsForLeaderEpoch v1 (KIP-279, 2.0): the leader answers the epoch its end offset
  // belongs to, and a follower that never had that epoch asks again (further rounds). Without
  // it (0.11.0 to 1.1, v0) the leader answers an offset alone and the follower truncates once.
  bool answer_names_epoch = true;
  // KAFKA-7415 (2.1): a new leader records its epoch at its log end when it becomes leader.
  // Without it the epoch is recorded at the leader's first append in it (Log.append).
  bool epoch_at_become_leader = true;
  // KAFKA-7415 too (the same commit): an epoch below the cache's first entry is answered with
  // that epoch and the first entry's start offset, by a leader asked for it and by a follower
  // checking the leader's answer against its own cache. Without it the answer is UNDEFINED
  // (LeaderEpochCache::BelowFirstEpoch).
  bool answer_below_first_epoch = true;
  // KAFKA-7415's third change: an epoch cache entry that conflicts with the new one (a later
  // epoch, or one starting at or after it) is dropped and the new one appended, for every
  // batch's epoch (LeaderEpochCache::AssignRule). Without it the new entry is ignored unless it is
  // newer than the latest.
  bool truncate_conflicting_on_assign = true;
};
LeaderEpochRules LeaderEpochRulesAt(KafkaRelease release);
// How the epoch caches answer an epoch below their first entry at `release`.
LeaderEpochCache::BelowFirstEpoch BelowFirstEpochAt(KafkaRelease release);
// How the epoch caches take a new entry at `release`.
LeaderEpochCache::AssignRule AssignRuleAt(KafkaRelease release);

// Which OffsetsForLeaderEpoch request a follower sends, by its broker's release and
// inter.broker.protocol.version (ReplicaFetcherThread.shouldSendLeaderEpochRequest and
// offsetForLeaderEpochRequestVersion, 0.11.0.0 to 2.1.0): none below 0.11.0-IV2 (the fetcher
// takes an unknown answer and truncates to its high watermark, as before KIP-101), v0 below
// 2.0-IV0 (the answer names no epoch: one round), v1 from 2.0-IV0 (KIP-279's rounds), v2 from
// 2.1-IV1 (KIP-320: v1 naming the current leader epoch, which fences a stale leader's answer).
// Before 0.11, where leader-epoch truncation is ksim's policy and no release's, v1.
enum class EpochRequest : uint8_t { kNone, kV0, kV1, kV2 };
EpochRequest EpochRequestAt(KafkaRelease release, const ApiVersion& inter_broker_protocol);

struct PartitionConfig {
  int64_t replica_lag_time_max_ms = 10000;   // replica.lag.time.max.ms
  int64_t replica_lag_max_messages = 4000;   // replica.lag.max.messages: 0.8.2 alone
  int32_t min_insync_replicas = 1;           // min.insync.replicas (topic or broker)
  KafkaRelease release = kSeedKafkaRelease;  // the broker's: which caught-up rule applies
};

// How often the leader looks for followers to drop from the ISR (ReplicaManager's
// "isr-expiration" task): every replica.lag.time.max.ms before 0.10.2, every half of it from
// 0.10.2 (KAFKA-4485). At least 1.
int64_t IsrCheckPeriodMs(KafkaRelease release, int64_t replica_lag_time_max_ms);

// What the leader knows of one remote replica (Kafka's Replica on the leader).
struct RemoteReplicaState {
  std::optional<Offset> log_end_offset;  // nullopt until its first fetch in this leadership
  int64_t last_caught_up_time_ms = 0;
  int64_t last_fetch_time_ms = 0;
  Offset last_fetch_leader_log_end_offset{0};  // the leader's LEO at its previous fetch
};

// The outcome of a produce with acks=-1 or N > 1, asked again whenever HW or a LEO moves.
// Holds partitions quiet (Partition::HoldQuiet): a fetch session that skips a partition until it
// changes (core/server/fetch_session.h). Told once, when the hold ends.
class QuietHolder {
 public:
  virtual void QuietEnded(void* cookie) = 0;

 protected:
  ~QuietHolder() = default;
};

struct AcksProgress {
  bool done = false;
  Errc error = Errc::kNone;  // when done: NONE, NOT_ENOUGH_REPLICAS_AFTER_APPEND, or
                             // NOT_LEADER_FOR_PARTITION (leadership lost meanwhile)
};

// A follower's next step after the leader answered OffsetsForLeaderEpoch (KIP-279).
struct TruncationDecision {
  Offset truncate_to{0};  // cut the log here (nothing happens when >= LEO)
  bool complete = true;   // false: ask again for `next_epoch` (the leader knew an earlier epoch)
  LeaderEpoch next_epoch = kUndefinedEpoch;
};

class Partition final : public LogObserver {
 public:
  // `log` is this broker's log of `tp`; `epochs` its leader-epoch cache (opened from the
  // partition directory); `checkpointed_hw` the HW from replication-offset-checkpoint (0 when
  // none), clamped to the log. `producers` is the producer state of the log's directory, already
  // in line with the log (LoadProducerState). Installs itself as the log's observer.
  Partition(TopicPartition tp, BrokerId local_broker, Log& log, LeaderEpochCache epochs,
            ProducerStateManager producers, const Clock& clock, PartitionConfig config,
            Offset checkpointed_hw, EventSink events);
  // The producer state of `log`: its latest usable snapshot plus the batches after it (Kafka's
  // Log.loadProducerState, on open and after a crash). Errors: the Env's.
  static Result<ProducerStateManager> LoadProducerState(Env& env, const Log& log, int64_t now_ms);
  ~Partition() override;
  Partition(const Partition&) = delete;
  Partition& operator=(const Partition&) = delete;

  // ---- Role changes (LeaderAndIsr) ----
  // Kafka's makeLeader: role leader with `state`'s epoch, ISR, replicas and zk version; remote
  // replicas start unknown, ISR members counted as caught up now (from 0.10.2; before, their
  // caught-up times stay); the epoch is recorded at the LEO; HW may rise. Returns false (and
  // changes nothing) when `state.leader_epoch` is older than the current one. KAFKA_STORAGE_ERROR
  // when the epoch cannot be recorded: the role, epoch and ISR stay as they were (the cache may
  // hold the unwritten epoch in memory) and the storage failure handler has been told.
  // REQUIRES: state.leader == local broker.
  Result<bool> MakeLeader(const LeaderAndIsrPartitionState& state);
  // Kafka's makeFollower: role follower of `state.leader`; the ISR is forgotten (only a leader
  // tracks it), and so are the remote replicas from 0.10.2 (before, their caught-up times stay).
  // Returns true when the broker must truncate per policy and (re)start fetching: a new leader, or
  // from 2.1 the same leader at a newer epoch (KAFKA-7395). False when it stays the follower of
  // the same leader (before 2.1 at any epoch), or when the epoch is stale.
  // REQUIRES: state.leader != local broker.
  bool MakeFollower(const LeaderAndIsrPartitionState& state);
  // StopReplica: role none (the log stays unless the broker deletes it).
  void Stop();
  // Clean shutdown, before the log is closed: snapshots the producer state at the LEO (Kafka's
  // Log.close), so that the next open reads it instead of replaying the log.
  Status Close();

  // ---- Leader ----
  // Appends a producer's batches with the current epoch. NOT_LEADER_FOR_PARTITION when not leader;
  // NOT_ENOUGH_REPLICAS for acks=-1 with ISR < min.insync.replicas (nothing appended); producer
  // state errors (INVALID_PRODUCER_EPOCH, OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID;
  // nothing appended); the Log's errors otherwise. HW may rise (a lone ISR member).
  // A batch that repeats one of its producer's last five is not appended: the answer carries the
  // original batch's offsets (first_offset, last_offset), num_batches 0 and num_records the
  // offsets it covers, so that acks=-1 still waits for the HW to pass it (Kafka's Log.append
  // returning the duplicate's LogAppendInfo).
  Result<LogAppendInfo> AppendAsLeader(MutableByteView batches, int16_t acks);
  // Whether a produce whose last offset is `required_offset - 1` is satisfied for `acks` (-1 or
  // N > 1; below -1 at 0.8.2). REQUIRES: acks < 0 or acks > 1.
  AcksProgress CheckEnoughReplicasReached(Offset required_offset, int16_t acks) const;
  // A follower fetched from `fetch_offset` (Kafka's updateReplicaLogReadResult): records its LEO
  // and caught-up time, raises HW when it can. Returns the expanded ISR when the follower should
  // join it (to be written to ZooKeeper, then ApplyIsrChange), else nullopt. Ignored (nullopt)
  // when not leader or `replica` is not assigned. `leo_moved` (may be null) tells whether the
  // follower's LEO as the leader knows it changed.
  std::optional<std::vector<BrokerId>> UpdateFollowerFetch(BrokerId replica, Offset fetch_offset,
                                                           bool* leo_moved = nullptr);
  // The ISR without the followers that have not caught up for replica.lag.time.max.ms, when that
  // removes anyone; nullopt otherwise or when not leader or a proposal is outstanding.
  std::optional<std::vector<BrokerId>> ProposeIsrShrink();
  // The ZooKeeper write of `isr` succeeded with the state znode now at `zk_version`: the ISR is
  // `isr` (HW may rise). Emits isr_shrink or isr_expand. Ignored when no proposal is outstanding
  // (a role change since dropped it).
  void ApplyIsrChange(std::vector<BrokerId> isr, int32_t zk_version);
  // The write failed (BADVERSION: the controller changed the state; it will send LeaderAndIsr):
  // the proposal is dropped.
  void AbandonIsrChange();
  bool isr_change_in_flight() const { return isr_change_in_flight_; }
  // OffsetsForLeaderEpoch on the leader, from the epoch cache and the LEO: KIP-279's answer
  // (epoch, end offset) from 2.0, an end offset alone before (LeaderEpochRules).
  EpochAndEndOffset EndOffsetForEpoch(LeaderEpoch epoch) const;

  // ---- Reads ----
  // A fetch (consumers below HW, followers below LEO; at least one batch, KIP-74) or
  // NOT_LEADER_FOR_PARTITION when not leader.
  Result<FetchDataInfo> Read(Offset fetch_offset, int32_t max_bytes, bool from_follower);
  // Whether Read(fetch_offset, max_bytes, ...) would return no records and no error without
  // touching the disk: a leader whose online log ends at `fetch_offset` (the log's own early
  // answer). A fetch skips such partitions instead of reading them (nothing new there).
  bool ReadsNothingAt(Offset fetch_offset, int32_t max_bytes) const {
    return role_ == ReplicaRole::kLeader && max_bytes >= 0 &&
           fetch_offset == log_.log_end_offset() && log_.online();
  }
  // Whether a parked fetch at `fetch_offset` has nothing new here yet, told from the offsets
  // alone as Kafka's DelayedFetch.tryComplete tells it (endOffset.messageOffset ==
  // fetchOffset.messageOffset: nothing read): ReadsNothingAt, or a consumer's fetch at the HW
  // of an online leader (its read would stop before the first batch it found). A check skips
  // such partitions; answering the fetch still reads them.
  bool HasNothingNewAt(Offset fetch_offset, int32_t max_bytes, bool from_follower) const {
    if (ReadsNothingAt(fetch_offset, max_bytes)) return true;
    return !from_follower && role_ == ReplicaRole::kLeader && max_bytes >= 0 &&
           fetch_offset == high_watermark_ && log_.online();
  }

  // ---- Follower ----
  // Appends what the leader sent, then HW = min(LEO, leader_hw) and the log start follows the
  // leader's (up to the new HW).
  // NOT_LEADER_FOR_PARTITION when not a follower.
  Result<LogAppendInfo> AppendAsFollower(ByteView records, Offset leader_hw,
                                         Offset leader_log_start_offset);
  // Whether AppendAsFollower(no records, leader_hw, leader_log_start_offset) would succeed and
  // change nothing (no append, no HW or log start move, no event): a follower whose online log
  // already has HW = min(LEO, leader_hw) and a log start at or above min(leader's, HW). A
  // fetcher skips such answers (Kafka's processPartitionData does the same work for nothing).
  bool FollowerFetchChangesNothing(Offset leader_hw, Offset leader_log_start_offset) const {
    return role_ == ReplicaRole::kFollower && log_.online() && observer_error_.ok() &&
           std::min(log_.log_end_offset(), leader_hw) == high_watermark_ &&
           std::min(leader_log_start_offset, high_watermark_) <= log_.log_start_offset();
  }
  // Where to cut when becoming follower under kHighWatermark: the own HW.
  Offset HighWatermarkTruncationOffset() const { return high_watermark_; }
  // The follower's step for the leader's answer to OffsetsForLeaderEpoch(latest local epoch):
  // KIP-279's from 2.0, KIP-101's single round before (LeaderEpochRules).
  TruncationDecision DecideTruncation(const EpochAndEndOffset& leader_answer) const;
  // Truncates the log (and the epoch cache) to `offset` when it is below the LEO; HW follows.
  // Emits truncate with the records removed and `reason`. NOT_LEADER_FOR_PARTITION when this
  // replica is the leader (a leader never truncates). REQUIRES: offset >= 0.
  Status TruncateTo(Offset offset, std::string_view reason);
  // The leader's log starts past our LEO: restart empty there (Kafka's handleOffsetOutOfRange).
  // NOT_LEADER_FOR_PARTITION when this replica is the leader. REQUIRES: offset >= 0.
  Status TruncateFullyAndStartAt(Offset offset);

  // ---- State ----
  const TopicPartition& tp() const { return tp_; }
  ReplicaRole role() const { return role_; }
  bool is_leader() const { return role_ == ReplicaRole::kLeader; }
  BrokerId leader() const { return leader_; }  // kNoBroker when unknown
  LeaderEpoch leader_epoch() const { return leader_epoch_; }
  const std::vector<BrokerId>& assigned_replicas() const { return assigned_replicas_; }
  const std::vector<BrokerId>& isr() const { return isr_; }
  int32_t zk_version() const { return zk_version_; }
  Offset high_watermark() const { return high_watermark_; }
  Offset log_end_offset() const { return log_.log_end_offset(); }
  Offset log_start_offset() const { return log_.log_start_offset(); }
  LeaderEpoch latest_epoch() const { return epochs_.LatestEpoch(); }
  const LeaderEpochCache& epochs() const { return epochs_; }
  const ProducerStateManager& producer_state() const { return producers_; }
  // The leader's view of remote replicas (empty when not leader from 0.10.2; before, a follower
  // keeps each assigned replica's caught-up time, its LEO unknown).
  const std::map<BrokerId, RemoteReplicaState>& remote_replicas() const { return remotes_; }
  const PartitionConfig& config() const { return config_; }
  void set_config(PartitionConfig config) {
    config_ = config;
    MarkChanged();
  }
  // A follower told the same leader again after missing leader epochs (the epoch jumped by more
  // than one; KAFKA-7164's test) when that redoes nothing (before 2.1): the epoch it followed
  // from and the one it was told. It never truncated to what the leader did in between, so the
  // leader's answers may start below its log end. Cleared when it becomes leader or follows anew.
  struct MissedEpochs {
    LeaderEpoch followed;
    LeaderEpoch told;
  };
  const std::optional<MissedEpochs>& missed_epochs() const { return missed_epochs_; }
  // Where this replica kept its log and went on fetching a later epoch without comparing
  // epochs: after an OffsetsForLeaderEpoch answer of UNDEFINED (its truncation to its high
  // watermark, or nothing when that was its log end; the replica fetcher notes it), or when told
  // the same leader after missed epochs (MissedEpochs). Oldest first, for the process's life;
  // not part of Kafka's state: what the drain reads to name records kept below such a cut.
  struct KeptCut {
    Offset at;                                  // the log end then
    std::optional<MissedEpochs> missed_epochs;  // set for a same-leader cut
  };
  const std::vector<KeptCut>& kept_cuts() const { return kept_cuts_; }
  void NoteUndefinedCut() { kept_cuts_.push_back(KeptCut{log_.log_end_offset(), std::nullopt}); }
  Log& log() { return log_; }
  const Log& log() const { return log_; }

  // LogObserver: keeps the epoch cache and the producer state in step with the log.
  void OnAppend(const BatchHeader& batch) override;
  void OnTruncateTo(Offset end_offset) override;
  void OnTruncateFullyAndStartAt(Offset start_offset) override;
  void OnLogStartOffsetIncremented(Offset log_start_offset) override;
  void OnRoll(Offset base_offset) override;
  // Hands the error to the storage failure handler, if any.
  void OnOffline(const Status& error) override;
  // Who hears that the log went offline, or that a write or read of the leader-epoch-checkpoint
  // or of the producer state failed on the disk (the ReplicaManager: Kafka's
  // LogDirFailureChannel, which CheckpointFile and the Log's I/O both report to). Borrowed by
  // copy; may be empty.
  void set_storage_failure_handler(std::function<void(const Status&)> handler) {
    storage_failure_handler_ = std::move(handler);
  }

  // ---- Changes, for an observer of many partitions (the simulator's invariant checker) ----
  // `changed` (borrowed; outlives this Partition or is detached with nullptr first) gets this
  // partition appended, once until ClearChangeMark, whenever its role, leader, leader epoch,
  // ISR, HW, log start, LEO or config may have moved (any role change, ISR change, HW move,
  // append, truncation or log start move): its holder visits what moved instead of every
  // partition. Destroying a marked Partition removes it from the list.
  void set_change_list(std::vector<Partition*>* changed);
  bool change_marked() const { return change_marked_; }
  void ClearChangeMark() { change_marked_ = false; }
  // Its place in the list of its holder's partitions (ReplicaManager::Partitions), set when the
  // list is made: a visitor of what changed finds where a partition is in the list without a
  // lookup. Meaningless until the list is made with it.
  size_t list_index() const { return list_index_; }
  void set_list_index(size_t index) const { list_index_ = index; }

  // Moves with every change a fetch could see: the log's ends, the HW, the role and epoch, the
  // ISR and a change of it in flight, a follower's LEO, the log going offline. Equal versions:
  // a read or a follower's fetch at the same offsets finds what it found before.
  uint64_t version() const { return version_; }
  // `holder` holds this partition quiet (docs/broker.md, "Fetch sessions") until version() next
  // moves or the partition is destroyed, and is then told once (QuietEnded(cookie)); ReleaseQuiet
  // ends a hold without telling. Meanwhile `follower` (kNoBroker: none, a client's session) counts
  // as caught up at every time `*fetched_ms` takes (its session's fetches), as UpdateFollowerFetch
  // counts a fetch at the leader's LEO (REQUIRES then: this replica leads, and the follower's
  // last fetch was at its LEO). A follower's fetcher holds its partitions too (kNoBroker).
  void HoldQuiet(QuietHolder* holder, void* cookie, BrokerId follower, const int64_t* fetched_ms);
  void ReleaseQuiet(QuietHolder* holder, void* cookie);
  size_t quiet_holds() const { return quiet_holds_.size(); }

 private:
  // From 0.10.2: remotes_ becomes the assigned replicas (the local one aside), ISR members caught
  // up now, the others never; a new leader knows no remote LEO.
  void ResetRemoteReplicas(bool is_new_leader, Offset leo, int64_t now_ms);
  // Before 0.10.2: remotes_ becomes the assigned replicas (the local one aside), new ones caught
  // up now, the others as they were (Partition.getOrCreateReplica / removeReplica).
  void KeepRemoteReplicasOfAssignment(int64_t now_ms);
  // Leaving the leader role: from 0.10.2 the remote replicas are forgotten; before, only their
  // LEOs (the caught-up times stay for the next leadership).
  void ForgetRemoteReplicas();
  // Leader: HW = min LEO over the ISR when that is higher (Kafka's maybeIncrementLeaderHW).
  bool MaybeIncrementLeaderHw();
  void SetHighWatermark(Offset hw);
  void CheckInvariants() const;
  // An epoch this replica must ignore (ReplicaManager.becomeLeaderOrFollower).
  bool IsStale(LeaderEpoch epoch) const;
  Status LeaderMustNotTruncate() const;
  // "topic", "partition": the first fields of every event.
  EventFields Fields() const;
  // The `append` event, with the appended records' values (read back from `batches`).
  void EmitAppend(const LogAppendInfo& info, ByteView batches, std::string_view role);
  // The log's end, start and HW, for become_leader/become_follower (after recovery).
  void AddLogState(EventFields& fields) const;
  // The leader's producer-state check of a produce's batches (Kafka's
  // analyzeAndValidateProducerState). Batches that do not parse are left to the Log to refuse.
  Result<AppendCheck> ValidateProducerState(ByteView batches) const;
  // After a truncation: the producer state rebuilt from the latest snapshot and the log; on an
  // I/O error it is emptied (the error kept for the caller) rather than left ahead of the log.
  void ReloadProducerState();
  // An epoch-cache or producer-state operation failed with `cause`: KAFKA_STORAGE_ERROR naming
  // it, and, when the disk failed (IsStorageFailure), the storage failure handler told.
  Status StorageFailure(const Status& cause);
  // The LogObserver hooks cannot return errors: each failure is reported (StorageFailure) at once,
  // and the first is kept and handed back by the operation that caused it.
  void KeepObserverError(Status status);
  Status TakeObserverError();
  // Appends this partition to the change list (once until ClearChangeMark).
  void MarkChanged() {
    BumpVersion();
    if (change_list_ == nullptr || change_marked_) return;
    change_marked_ = true;
    change_list_->push_back(this);
  }

  TopicPartition tp_;
  BrokerId local_;
  Log& log_;
  // Read for every partition of every fetch (ReadPartition, UpdateFollowerFetch): kept together,
  // near log_, so that a fetch naming many partitions touches few cache lines of each.
  ReplicaRole role_ = ReplicaRole::kNone;
  Offset high_watermark_{0};
  std::map<BrokerId, RemoteReplicaState> remotes_;
  LeaderEpochCache epochs_;
  ProducerStateManager producers_;
  const Clock& clock_;
  PartitionConfig config_;
  EventSink events_;
  std::function<void(const Status&)> storage_failure_handler_;
  BrokerId leader_ = kNoBroker;
  LeaderEpoch leader_epoch_ = kUndefinedEpoch;
  std::optional<MissedEpochs> missed_epochs_;
  std::vector<KeptCut> kept_cuts_;
  std::vector<BrokerId> assigned_replicas_;
  std::vector<BrokerId> isr_;
  int32_t zk_version_ = 0;
  bool isr_change_in_flight_ = false;
  // The follower whose addition to the ISR is being written (an expansion in flight): the HW
  // counts it from the decision on (MaybeIncrementLeaderHw).
  std::optional<BrokerId> isr_expanding_;
  // The LEO when this replica last became leader (Kafka's leaderEpochStartOffsetOpt); none while
  // it follows. From 2.1 a follower joins the ISR only once it fetches from there (KAFKA-7128).
  std::optional<Offset> leader_epoch_start_offset_;
  LeaderEpoch last_appended_epoch_ = kUndefinedEpoch;  // of the last batch appended
  Status observer_error_;
  std::vector<Partition*>* change_list_ = nullptr;
  bool change_marked_ = false;
  mutable size_t list_index_ = 0;
  // Moves version(); ends the quiet holds (their followers caught up as of their last fetches).
  void BumpVersion() {
    ++version_;
    if (!quiet_holds_.empty()) EndQuietHolds();
  }
  void EndQuietHolds();
  // Writes what the holds of `follower` (every follower: kNoBroker) have counted so far.
  void CatchUpQuietFollowers(BrokerId follower);

  struct QuietHold {
    QuietHolder* holder;
    void* cookie;
    BrokerId follower;
    const int64_t* fetched_ms;
  };
  uint64_t version_ = 0;
  std::vector<QuietHold> quiet_holds_;
};

}  // namespace ksim
