// ReplicaFetcherManager: a follower broker's replication from its leaders (Kafka's
// ReplicaFetcherManager with one ReplicaFetcherThread per leader broker, num.replica.fetchers=1;
// AbstractFetcherThread's loop made event-driven). For each leader it keeps the partitions it
// follows there and has at most one request to that leader in flight, one of these three:
//
// 1. OffsetsForLeaderEpoch for partitions still deciding where to truncate (the leader-epoch
//    policy in its release's form: Partition::DecideTruncation, one round at 0.11.0 to 1.1 as
//    ReplicaFetcherThread.maybeTruncate, KIP-279's rounds from 2.0). Under the high-watermark
//    policy the broker truncated before adding the partition and this step never happens.
// 2. ListOffsets for partitions whose fetch was OFFSET_OUT_OF_RANGE (Kafka's
//    handleOffsetOutOfRange): first the leader's LEO (replica_id = this broker, so the leader
//    answers its LEO); below ours: truncate to it (an unclean leader's log is shorter), unless
//    may_truncate_below_leader says no: then the broker exits (on_fatal_exit, Kafka 0.10.0 to
//    2.0) and this leader's fetcher sends nothing more. Otherwise the leader's log start; above
//    our LEO: TruncateFullyAndStartAt it (retention moved past us).
// 3. Fetch for every partition ready (see below): replica_id = own id, max_wait_ms =
//    replica.fetch.wait.max.ms, min_bytes = replica.fetch.min.bytes, partition_max_bytes =
//    replica.fetch.max.bytes, from each partition's LEO. The answer is appended with
//    Partition::AppendAsFollower (the leader's HW and log start come with it) and the next
//    request goes at once: the leader's long poll paces it.
//    From inter.broker.protocol.version 1.1-IV0 (Fetch v7) the fetch belongs to a KIP-227 session
//    with the leader (Kafka's FetchSessionHandler): the first fetch is full (epoch 0) and opens
//    it; the next ones are incremental, naming only the partitions added or whose fetch offset,
//    log start or max bytes changed (added first, then changed, each in partition order) and
//    the partitions removed (forgotten); the answer names only the partitions with news, the
//    others being unchanged. A session error (FETCH_SESSION_ID_NOT_FOUND: a new session; any
//    other: close this one and open another), a full answer that does not name exactly the
//    session's partitions, or an incremental one naming another partition applies nothing and
//    the next fetch is full at once; a failed request makes the next fetch full (closing the
//    session). Below 1.1 every fetch is full and carries no session fields.
//
// The order is AbstractFetcherThread.doWork's (0.11.0 to 2.1; 0.10.0 only fetches): a truncation
// step (OffsetsForLeaderEpoch, when a partition is truncating), then a fetch step (Fetch, when a
// partition is ready), one request at a time. A fetch step with no partition ready waits
// replica.fetch.backoff.ms ("There are no active partitions. Back off ..."; a partition added
// wakes it, as partitionMapCond.signalAll does). ListOffsets comes first: Kafka resolves
// OFFSET_OUT_OF_RANGE while it processes the fetch's answer (handleOffsetOutOfRange).
//
// A partition error (NOT_LEADER_FOR_PARTITION, UNKNOWN_TOPIC_OR_PARTITION in either answer, a
// failed ListOffsets, a corrupt batch, a storage error, ...) delays that partition alone for
// replica.fetch.backoff.ms (Kafka's delayPartitions: its PartitionFetchState's DelayedItem): no
// request names it until then, and the others go on. A failed OffsetsForLeaderEpoch request
// delays each partition it named (fetchEpochsFromLeader marks them all with the error). A failed
// Fetch request (timeout, broken connection) makes the fetcher wait replica.fetch.backoff.ms and
// then delays every partition it had at the failure for as long again (processFetchRequest's
// await in its catch, then handlePartitionsWithErrors: "effectively doubling the delay", as its
// comment says). Each error is an event `replica_fetch_error`.
//
// An append that fails for another reason (UNEXPECTED_APPEND_OFFSET, OFFSETS_OUT_OF_ORDER,
// MESSAGE_TOO_LARGE, ...) stops that leader's fetcher for good, every partition it fetches:
// Kafka's processFetchRequest rethrows it as a KafkaException and the fetcher thread ends ("Error
// due to", 0.10.0.1 to 2.x). Event `replica_fetcher_stopped`; the stopped fetcher keeps its
// partitions, and the ones added to it later, unfetched until it has none left
// (shutdownIdleFetcherThreads), as Kafka's dead thread stays in fetcherThreadMap. A partition
// removed and added again starts a new incarnation: answers to requests sent for the old one are
// ignored (Kafka checks the fetch offset). Requests go only when NetworkClient::Ready(leader
// host); OnReady resumes them.
//
// Ownership: borrows the NetworkClient, Clock, Timers and the lookups (they outlive it); owns its
// wait timers. Destroying it cancels them; answers still in flight then find no fetcher (the
// broker destroys the NetworkClient after it, so none arrive). One thread.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/clock.h"
#include "core/base/events.h"
#include "core/base/timer_group.h"
#include "core/cluster/partition.h"
#include "core/protocol/fetch_session_handler.h"
#include "core/protocol/network_client.h"
#include "core/server/fetch_session.h"
#include "core/server/purgatory.h"

namespace ksim {

struct ReplicaFetcherOptions {
  BrokerId local{0};
  int32_t fetch_wait_max_ms = 500;    // replica.fetch.wait.max.ms
  int32_t fetch_min_bytes = 1;        // replica.fetch.min.bytes
  int32_t fetch_max_bytes = 1 << 20;  // replica.fetch.max.bytes (per partition)
  int32_t fetch_backoff_ms = 1000;    // replica.fetch.backoff.ms
  // OffsetsForLeaderEpoch v1 (the broker's inter.broker.protocol.version, EpochRequestAt): the
  // leader's answer names its epoch. At v0 it does not, and the follower truncates once.
  bool epoch_request_v1 = true;
  // Fetch v7's KIP-227 sessions (inter.broker.protocol.version 1.1-IV0 and on).
  bool fetch_sessions = false;
  // KIP-320's fencing: OffsetsForLeaderEpoch v2 and ListOffsets v4 (inter.broker.protocol.version
  // 2.1-IV1), and Fetch v10 (2.1-IV2), name the leader epoch this follower was told. The leader
  // answers FENCED_LEADER_EPOCH when it knows a later one (this follower then stops fetching the
  // partition until a LeaderAndIsr tells it more), UNKNOWN_LEADER_EPOCH when it has not yet
  // learnt of that epoch (the partition is retried after replica.fetch.backoff.ms).
  bool epoch_requests_name_leader_epoch = false;
  bool fetches_name_leader_epoch = false;
  // May this follower cut its log back to a leader whose log ends before its own? Kafka 0.10.0
  // to 2.0 ask the topic's unclean.leader.election.enable (ReplicaFetcherThread
  // .handleOffsetOutOfRange); 2.1 always truncates (KAFKA-7414). Empty: always.
  std::function<bool(const TopicPartition&)> may_truncate_below_leader;
  // Called when it may not: the broker exits (Kafka's fatal "Exiting because log truncation is
  // not allowed"). May be empty (nothing happens; the partition is no longer fetched).
  std::function<void(const Status&)> on_fatal_exit;
};

// Whether a follower's fetches belong to KIP-227 sessions: Fetch v7, inter.broker.protocol.version
// 1.1-IV0 and on (1.1.0:ReplicaFetcherThread.fetchMetadataSupported).
bool FetchSessionsAt(const ApiVersion& inter_broker_protocol);
// Whether a follower's fetches name its current leader epoch: Fetch v10, inter.broker.protocol
// .version 2.1-IV2 and on (2.1.0:ReplicaFetcherThread.fetchRequestVersion).
bool FetchesNameLeaderEpochAt(const ApiVersion& inter_broker_protocol);

// The start of the message a follower exits with when it may not truncate below its leader.
inline constexpr std::string_view kTruncationNotAllowed =
    "Exiting because log truncation is not allowed";

// What a fetcher is doing with one partition.
enum class FetchPhase : uint8_t {
  kTruncating,         // waiting for the leader's OffsetsForLeaderEpoch answer
  kLeaderEndOffset,    // OFFSET_OUT_OF_RANGE: asking the leader's LEO
  kLeaderStartOffset,  // OFFSET_OUT_OF_RANGE: asking the leader's log start
  kFetching,
};
std::string_view FetchPhaseName(FetchPhase phase);

class ReplicaFetcherManager final : public QuietHolder {
 public:
  ReplicaFetcherManager(ReplicaFetcherOptions options, NetworkClient& network, const Clock& clock,
                        Timers& timers, PartitionLookup lookup, EventSink events);
  ~ReplicaFetcherManager();
  ReplicaFetcherManager(const ReplicaFetcherManager&) = delete;
  ReplicaFetcherManager& operator=(const ReplicaFetcherManager&) = delete;

  // A partition to follow: on `leader`, reached at `host`.
  struct Follow {
    TopicPartition tp;
    BrokerId leader{0};
    std::string host;
    // The epoch the LeaderAndIsr named (2.1.0:InitialFetchState.currentLeaderEpoch), which
    // KIP-320's requests name.
    LeaderEpoch leader_epoch{0};
  };
  // Starts following these partitions (replacing any earlier fetch of them), all at once as
  // Kafka's addFetcherForPartitions does: each leader's next request names every one of them it
  // may. `truncate_by_epoch`: ask the leader where our latest epoch ends first (KIP-101).
  void AddPartitions(const std::vector<Follow>& follows, bool truncate_by_epoch);
  // Stops fetching these partitions (no-op for those not fetched).
  void RemovePartitions(const std::vector<TopicPartition>& partitions);
  // Stops everything (shutdown).
  void RemoveAll();
  // A request slot to `peer` is free again (NetworkClient's on_ready).
  void OnReady(std::string_view peer);

  // The leader `tp` is fetched from, or nullopt.
  std::optional<BrokerId> LeaderOf(const TopicPartition& tp) const;
  std::optional<FetchPhase> PhaseOf(const TopicPartition& tp) const;
  size_t fetcher_count() const { return fetchers_.size(); }
  // Why the fetcher for `leader` stopped for good (the partition whose append ended it, and the
  // error), or nullopt when it runs or there is none.
  struct Stopped {
    TopicPartition tp;
    std::string error;  // the Errc's name
    // The epoch the leader last answered OffsetsForLeaderEpoch UNDEFINED for in this
    // leadership (the follower then truncated to its high watermark); kUndefinedEpoch when none.
    LeaderEpoch undefined_answer_for = kUndefinedEpoch;
  };
  std::optional<Stopped> StoppedFetcher(BrokerId leader) const;
  uint64_t fetch_requests_sent() const { return fetch_requests_sent_; }

 private:
  struct PartitionState {
    FetchPhase phase = FetchPhase::kFetching;
    LeaderEpoch epoch_to_ask = kUndefinedEpoch;  // kTruncating: the next OffsetsForLeaderEpoch
    LeaderEpoch current_leader_epoch{0};         // Follow::leader_epoch
    LeaderEpoch undefined_answer_for = kUndefinedEpoch;  // Stopped::undefined_answer_for
    uint64_t incarnation = 0;
    // Left out of every request until its entry of the fetcher's `delays` ends (Kafka's
    // PartitionFetchState.isDelayed).
    bool delayed = false;
    // The local replica, once looked up: the broker destroys a Partition only after removing it
    // from its fetcher.
    Partition* partition = nullptr;
  };
  // A partition as the last fetch sent it (Kafka's FetchSessionHandler.sessionPartitions), with
  // its incarnation, state and Partition then: those two valid while its fetcher's `membership`
  // has not moved (a Partition is destroyed only after the fetcher let go of it), so that the
  // answer finds them without looking them up again.
  struct Fetcher;
  struct Delay {
    TimeUs until = 0;
    TopicPartition tp;
    uint64_t incarnation = 0;
  };
  // Which half of AbstractFetcherThread.doWork comes next.
  enum class Step : uint8_t { kTruncate, kFetch };
  struct SentPartition {
    Offset fetch_offset{0};
    Offset log_start_offset{-1};
    int32_t max_bytes = 0;
    uint64_t incarnation = 0;
    PartitionState* state = nullptr;
    Partition* partition = nullptr;
    // With fetch sessions: held quiet in `partition` (Partition::HoldQuiet) since it was last
    // sent, until its version moves; then it is in its fetcher's `moved`.
    bool held = false;
    Fetcher* fetcher = nullptr;
    bool SameFetch(const SentPartition& other) const {
      return fetch_offset == other.fetch_offset && log_start_offset == other.log_start_offset &&
             max_bytes == other.max_bytes;
    }
  };
  struct Fetcher {
    BrokerId leader{0};
    std::string host;
    std::map<TopicPartition, PartitionState> partitions;
    // The last fetch's partitions (every one it read: with a session, also those it left
    // implied) and the next fetch's session metadata (FetchSessionHandler.nextMetadata).
    std::map<TopicPartition, SentPartition> sent;
    // Moves (to a value no fetcher had) whenever a partition is added to or removed from it: a
    // fetcher whose partitions stay (most, while leaders move one partition at a time elsewhere)
    // fetches from what moved, not from a walk of them all.
    uint64_t membership = 0;
    uint64_t sent_version = UINT64_MAX;  // `membership` when `sent` was last made
    // The entries of `sent` whose Partition's version moved since they were sent (no longer
    // held): the only ones an incremental fetch may have to name again.
    std::vector<std::pair<const TopicPartition, SentPartition>*> moved;  // SentEntry*
    FetchSessionHandler session;  // its metadata; the session's partitions are `sent`
    // How many of `partitions` are in each FetchPhase, and how many of those are delayed (Pump
    // picks the request without a walk); every phase change goes through SetPhase.
    std::array<size_t, 4> in_phase{};
    std::array<size_t, 4> delayed_in_phase{};
    // The delays, in the order they end (each lasts replica.fetch.backoff.ms); an entry whose
    // partition was removed or added again meanwhile is skipped.
    std::deque<Delay> delays;
    Step next = Step::kTruncate;
    bool in_flight = false;
    // The thread's await (nothing to fetch, or after a failed fetch); 0: none.
    TimerId wait = 0;
    // After a failed fetch: the partitions to delay when the wait ends.
    std::vector<TopicPartition> delay_on_wake;
    std::optional<Stopped> stopped;  // the append that ended it (see the top)
  };
  // The partitions (and their incarnations) a request was sent for.
  using Sent = std::map<TopicPartition, uint64_t>;

  void Pump(BrokerId leader);
  // Moves `state`, one of the partitions of `leader`'s fetcher, to `phase`.
  void SetPhase(BrokerId leader, PartitionState& state, FetchPhase phase);
  void Stop(Fetcher& fetcher, const TopicPartition& tp, const Status& status);
  // KIP-320's current_leader_epoch for `state`'s requests, when `named` (the option for the kind).
  static std::optional<CurrentLeaderEpoch> Named(bool named, const PartitionState& state);
  // An answer of FENCED_LEADER_EPOCH: the leader knows a later epoch than ours. 2.1.0's
  // AbstractFetcherThread.onPartitionFenced stops fetching `tp` ("Will await the new LeaderAndIsr
  // state before resuming fetching"). `stage` names the request for the trace.
  void OnFenced(const TopicPartition& tp, std::string_view stage);
  void SendOffsetsForLeaderEpoch(Fetcher& fetcher);
  void SendListOffsets(Fetcher& fetcher, FetchPhase phase);
  // False when it sent nothing (no partition to name and none to forget).
  bool SendFetch(Fetcher& fetcher);
  using SentEntry = std::pair<const TopicPartition, SentPartition>;  // an entry of Fetcher::sent
  // Holds `entry` quiet (sent as it is now); HoldSent every entry of `fetcher.sent` not held;
  // ReleaseHolds undoes them.
  void Hold(Fetcher& fetcher, SentEntry& entry);
  void MembershipChanged(Fetcher& fetcher);
  void HoldSent(Fetcher& fetcher);
  void ReleaseHolds(Fetcher& fetcher);
  // Erases a fetcher, its holds released first.
  std::map<BrokerId, Fetcher>::iterator EraseFetcher(std::map<BrokerId, Fetcher>::iterator it);
  void QuietEnded(void* cookie) override;
  // Sends `request` (its partitions made) with the session's metadata and `forgotten`.
  void SendFetchRequest(Fetcher& fetcher, FetchRequest request,
                        std::vector<TopicPartition> forgotten);
  void OnOffsetsForLeaderEpoch(BrokerId leader, const Sent& sent, Result<Message> response);
  void OnListOffsets(BrokerId leader, FetchPhase phase, const Sent& sent, Result<Message> response);
  void OnFetch(BrokerId leader, uint64_t version, Result<Message> response);
  // FetchSessionHandler.handleResponse: moves the session on; false when the answer is not to be
  // applied (a session error, or partitions that do not match the session). `all_sent`: every
  // partition the answer names is in `sent`.
  bool OnSessionAnswer(Fetcher& fetcher, const FetchResponse& response, bool all_sent);
  // Finds the fetcher and partition a response is for, when still current.
  PartitionState* Current(BrokerId leader, const TopicPartition& tp, uint64_t incarnation);
  // Ends the in-flight request and goes on (Pump).
  void Done(BrokerId leader);
  // Delays `state` (the partition `tp` of `fetcher`) for replica.fetch.backoff.ms, unless it is
  // delayed already (Kafka's delayPartitions).
  void DelayPartition(Fetcher& fetcher, const TopicPartition& tp, PartitionState& state);
  // Ends the delays that are over.
  void ExpireDelays(Fetcher& fetcher);
  // The thread's await of replica.fetch.backoff.ms; Wake ends it (the timer, or a partition added).
  void Wait(Fetcher& fetcher);
  void Wake(Fetcher& fetcher);
  // Takes `state` out of its fetcher's counts (it is removed or replaced).
  void Forget(Fetcher& fetcher, const PartitionState& state);
  static size_t Index(FetchPhase phase) { return static_cast<size_t>(phase); }
  void EmitError(const TopicPartition& tp, std::string_view stage, const Status& status);

  ReplicaFetcherOptions options_;
  NetworkClient& network_;
  const Clock& clock_;
  TimerGroup timers_;
  PartitionLookup lookup_;
  EventSink events_;
  std::map<BrokerId, Fetcher> fetchers_;
  uint64_t next_incarnation_ = 1;
  // The last value given to a fetcher's `membership`.
  uint64_t membership_version_ = 0;
  uint64_t fetch_requests_sent_ = 0;
};

}  // namespace ksim
