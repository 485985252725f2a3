// RecordAccumulator: the producer's batches, as Kafka's RecordAccumulator (and, for sequence
// numbers, the part of its TransactionManager that an idempotent producer uses). Pure logic, no
// network and no clock of its own: every call is given the time, so it is unit-testable.
//
// - Append adds a record to the last batch of its partition's queue, or opens a new batch when
//   that one has no room for it (batch.size bytes of estimated record data; a record larger than
//   batch.size gets a batch of its own, as in Kafka) or was already sent once.
// - Ready tells which leaders have a sendable batch: a partition's first batch is sendable when
//   it is full (or not the only batch), linger.ms passed since it was created, a flush is in
//   progress, or the accumulator is closing; a batch being retried only after retry.backoff.ms
//   since its last attempt. Partitions without a known leader are reported by topic.
// - Drain takes, for one leader, the first batch of each of its partitions (at most one per
//   partition, up to max.request.size), marks them in flight and counts the attempt. With
//   idempotence a batch takes the producer id, epoch and its partition's next sequence numbers
//   the first time it is drained and keeps them for good, across retries and producer id resets
//   (Kafka 1.1/2.0's RecordAccumulator.drain assigns only when `!batch.hasSequence()`: a batch
//   that may have been written must not be sent again under numbers the broker cannot recognise).
//   A partition is skipped while it has 5 batches in flight; a batch that already has a sequence
//   is drained only when it is the first of the partition's sequenced batches (Kafka's
//   firstInFlightSequence rule); a new batch is not drained while the partition's sequences are
//   unresolved (an expired batch may or may not have been written). Without idempotence and with
//   max.in.flight.requests.per.connection=1, a partition with a batch in flight is skipped
//   (Kafka's guaranteeMessageOrder muting).
// - Reenqueue puts a failed in-flight batch back at the head of its partition's queue (in
//   sequence order among the other retries); Complete forgets a batch; Expire removes the batches
//   that waited too long, in the form of the producer's release (ExpiryForm): 2.1's
//   delivery.timeout.ms since creation, queued or in flight; or, before 2.1, Kafka's
//   RecordBatch.maybeExpire over each partition's queue (request.timeout.ms).
// - The sequence bookkeeping of Kafka 2.0's TransactionManager (idempotent part): the batches
//   sequenced under the current producer id and not yet completed (inflightBatchesBySequence),
//   the last acknowledged sequence and offset per partition, the partitions whose sequences are
//   unresolved, ResetProducerId, AdjustSequencesAfterFailedBatch and StartSequencesAtBeginning.
//   docs/clients.md, "Idempotence", says when the producer calls each and how 0.11 and 1.1 differ.
//
// Ownership: owns every batch until Complete or Expire hands it out. Single-threaded.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/base/status.h"
#include "core/base/types.h"
#include "core/protocol/messages.h"
#include "core/record/record_batch.h"

namespace ksim {

using BatchId = uint64_t;

struct ProducerBatch {
  BatchId id = 0;
  TopicPartition tp;
  std::vector<RecordInput> records;
  std::vector<uint64_t> record_ids;  // the producer's handles, one per record
  int64_t size_bytes = 0;            // estimated bytes of the encoded batch
  int64_t created_ms = 0;
  int64_t last_attempt_ms = 0;  // created_ms until the first attempt
  int64_t last_append_ms = 0;   // Kafka's lastAppendTime: the last record added, or re-enqueued
  int32_t attempts = 0;         // drains (Produce requests that carried it)
  bool retry = false;           // re-enqueued after a failed attempt
  // Its sequence was rewritten while it was sequenced (Kafka's ProducerBatch.sequenceHasBeenReset:
  // an earlier batch failed for good, or the partition's sequences restarted from 0).
  bool sequence_reset = false;
  bool in_flight = false;
  // Some attempt's fate is unknown, or a leader appended before refusing: a later failure is an
  // "unknown" outcome, not a "fail".
  bool maybe_written = false;
  Errc last_error = Errc::kNone;
  ProducerId producer_id = kNoProducerId;
  ProducerEpoch producer_epoch = kNoProducerEpoch;
  Sequence base_sequence = kNoSequence;

  int32_t record_count() const { return static_cast<int32_t>(records.size()); }
  bool has_sequence() const { return base_sequence != kNoSequence; }
};

// How batches expire (the producer's release; docs/versions.md, "Producer timeouts").
enum class ExpiryForm : uint8_t {
  // Kafka 0.10.0 to 2.0 (RecordAccumulator.abortExpiredBatches / expiredBatches and
  // RecordBatch/ProducerBatch.maybeExpire): only queued batches, and not in a partition muted
  // for ordering (max.in.flight.requests.per.connection=1 with a batch in flight). Each
  // partition's queue is walked from its head and stops at the first batch that stays; a batch
  // expires when more than request.timeout.ms passed since
  //   - its last append, if it is full (or not the last of its queue) and not being retried;
  //   - its creation + linger.ms, if it is not being retried;
  //   - its last attempt + retry.backoff.ms, if it is being retried.
  kRequestTimeout,
  // Kafka 2.1 (KIP-91): delivery.timeout.ms since creation, queued or in flight.
  kDeliveryTimeout,
  // Kafka 0.8.2: nothing expires (0.8.2.2:RecordAccumulator; KIP-19 added expiry in 0.9.0).
  kNone,
};

struct AccumulatorConfig {
  int32_t batch_size = 16384;
  int64_t linger_ms = 0;
  int64_t retry_backoff_ms = 100;
  ExpiryForm expiry = ExpiryForm::kDeliveryTimeout;
  int64_t request_timeout_ms = 30000;    // kRequestTimeout's limit
  int64_t delivery_timeout_ms = 120000;  // kDeliveryTimeout's limit
  int32_t max_request_size = 1048576;
  bool idempotent = false;
  // max.in.flight.requests.per.connection: 1 mutes a partition while a batch of it is in flight.
  int32_t max_in_flight_requests_per_connection = 5;
};

// Kafka's DefaultRecord.MAX_RECORD_OVERHEAD: the estimate of one record's framing.
inline constexpr int64_t kMaxRecordOverhead = 21;
// Batches per partition in flight with idempotence (the broker remembers the last 5).
inline constexpr int32_t kMaxInFlightBatchesPerPartitionIdempotent = 5;

// Estimated encoded size of one record (key, value, headers plus kMaxRecordOverhead).
int64_t EstimateRecordSize(const RecordInput& record);

class RecordAccumulator {
 public:
  // The current leader of a partition, nullopt when unknown.
  using LeaderFn = std::function<std::optional<BrokerId>(const TopicPartition&)>;

  explicit RecordAccumulator(AccumulatorConfig config);

  struct AppendResult {
    BatchId batch = 0;
    bool new_batch = false;
    bool batch_full = false;  // the batch (or the one before it) is ready by size
  };
  AppendResult Append(const TopicPartition& tp, RecordInput record, uint64_t record_id,
                      int64_t now_ms);

  struct ReadyResult {
    std::set<BrokerId> ready_nodes;
    // Time until some batch not yet ready may become ready (linger, backoff); INT64_MAX if none.
    int64_t next_ready_check_delay_ms = INT64_MAX;
    std::set<std::string> unknown_leader_topics;
  };
  // Ready and Drain keep the queued partitions grouped by leader, so that a walk visits the
  // partitions of the leaders it is about (Kafka's drain reads them from
  // cluster.partitionsForNode) rather than every queued one. `leaders_generation` says when
  // `leader_of` may answer differently: the groups are made again, asking `leader_of` for every
  // queued partition, only when it differs from the last call's; between two changes only the
  // partitions queued since are asked. The caller changes it whenever a leader may have changed
  // (the producer: at every metadata answer). The forms without it ask for every partition.
  ReadyResult Ready(const LeaderFn& leader_of, uint64_t leaders_generation, int64_t now_ms);
  ReadyResult Ready(const LeaderFn& leader_of, int64_t now_ms);

  // The sendable batches of the partitions `node` leads, one per partition in partition order,
  // at most max.request.size bytes together (the first batch always). Each is marked in flight.
  // REQUIRES (idempotent): a producer id was set.
  std::vector<ProducerBatch*> Drain(const LeaderFn& leader_of, uint64_t leaders_generation,
                                    BrokerId node, int64_t now_ms);
  std::vector<ProducerBatch*> Drain(const LeaderFn& leader_of, BrokerId node, int64_t now_ms);

  // Puts an in-flight batch back at the head of its partition's queue for a retry.
  // REQUIRES: the batch is in flight.
  void Reenqueue(BatchId id, int64_t now_ms);
  // Removes a batch (in flight or queued) and returns it. REQUIRES: it exists.
  std::unique_ptr<ProducerBatch> Complete(BatchId id);
  // Removes and returns the batches that expired by the config's ExpiryForm (oldest first within
  // each partition, partitions in order). An expired batch in flight is marked maybe_written.
  std::vector<std::unique_ptr<ProducerBatch>> Expire(int64_t now_ms);
  // Removes and returns every queued batch (none in flight), partitions in order, heads first
  // (Kafka's abortUndrainedBatches).
  std::vector<std::unique_ptr<ProducerBatch>> AbortQueued();
  // Time until the next batch expires, INT64_MAX when there is none.
  int64_t NextExpiryDelayMs(int64_t now_ms) const;

  // Idempotence (Kafka 2.0's TransactionManager, idempotent part).
  // The producer id and epoch new batches take from now on (InitProducerId's answer).
  void SetProducerIdAndEpoch(ProducerId id, ProducerEpoch epoch);
  // Kafka's resetProducerId: no producer id until the next InitProducerId; every partition's
  // sequences, acknowledged sequence and offset, sequenced batches and unresolved mark are
  // forgotten. Batches that already hold a sequence keep it (and their old id).
  void ResetProducerId();
  ProducerId producer_id() const { return producer_id_; }
  ProducerEpoch producer_epoch() const { return producer_epoch_; }
  // Whether `batch` holds the current producer id and epoch.
  bool HasCurrentProducerId(const ProducerBatch& batch) const;
  // The sequence the partition's next new batch gets.
  Sequence NextSequence(const TopicPartition& tp) const;
  // A batch acknowledged by the broker: its last sequence (when it holds the current id) and its
  // last offset (`base_offset` may be kUndefinedOffset) become the partition's last acknowledged.
  void OnAcked(const ProducerBatch& batch, Offset base_offset);
  // The last sequence the broker acknowledged for `tp` under the current id (-1 when none).
  Sequence LastAckedSequence(const TopicPartition& tp) const;
  // The last offset acknowledged for `tp` under the current id (kUndefinedOffset when none).
  Offset LastAckedOffset(const TopicPartition& tp) const;
  // Kafka's isNextSequence: `sequence` follows the last acknowledged one.
  bool IsNextSequence(const TopicPartition& tp, Sequence sequence) const;
  // Kafka's adjustSequencesDueToFailedBatch: `batch` failed for good and was certainly not
  // written; the partition's later sequenced batches and its next sequence move down by its
  // record count. Nothing happens unless `batch` holds the current id.
  // REQUIRES: `batch` was completed (it is no longer sequenced).
  void AdjustSequencesAfterFailedBatch(const ProducerBatch& batch);
  // Kafka's startSequencesAtBeginning: the partition's sequenced batches are renumbered from 0
  // (the broker forgot the producer: UNKNOWN_PRODUCER_ID after retention removed its records).
  void StartSequencesAtBeginning(const TopicPartition& tp);
  // Kafka's markSequenceUnresolved / hasUnresolvedSequence.
  void MarkSequenceUnresolved(const TopicPartition& tp);
  bool HasUnresolvedSequence(const TopicPartition& tp) const;
  // Kafka's shouldResetProducerStateAfterResolvingSequences: an unresolved partition with no
  // sequenced batch left is resolved when its next sequence follows the last acknowledged one
  // (the expired batch was written after all); otherwise the producer id must be reset (true).
  bool ShouldResetProducerIdAfterResolvingSequences();

  // Flush: every batch counts as ready while at least one flush is in progress.
  void BeginFlush() { ++flushes_in_progress_; }
  void EndFlush() { --flushes_in_progress_; }
  void Close() { closed_ = true; }

  ProducerBatch* Find(BatchId id);
  // The batch created first among those not completed (queued or in flight), or null.
  const ProducerBatch* OldestBatch() const;
  bool HasUndrained() const;       // some batch waits in a queue
  size_t in_flight_count() const;  // batches in flight, all partitions
  size_t InFlightCount(const TopicPartition& tp) const;
  // Records in batches (queued or in flight).
  int64_t record_count() const;
  const std::deque<BatchId>& Queue(const TopicPartition& tp) const;
  const AccumulatorConfig& config() const { return config_; }

 private:
  struct PartitionState {
    std::deque<BatchId> queue;  // head is sent first
    std::set<BatchId> in_flight;
    // Idempotent: the batches drained under the current producer id and not completed, in flight
    // or re-enqueued, by base sequence (Kafka's inflightBatchesBySequence).
    std::map<Sequence, BatchId> sequenced;
    Sequence next_sequence{0};
    Sequence last_acked_sequence{-1};
    Offset last_acked_offset = kUndefinedOffset;
    bool unresolved = false;
    // kRequestTimeout: the time its head expires, as indexed in expiry_heads_ (nullopt: not
    // indexed: no queue, or muted).
    std::optional<int64_t> head_expiry_ms;
    // Queued: whether it is in by_leader_ / no_leader_ (false: in ungrouped_), and the leader
    // it is grouped under.
    bool grouped = false;
    std::optional<BrokerId> leader;
  };
  // Orders partitions held by the address of their key in partitions_.
  struct ByPartition {
    bool operator()(const TopicPartition* a, const TopicPartition* b) const { return *a < *b; }
  };
  using PartitionGroup = std::map<const TopicPartition*, PartitionState*, ByPartition>;
  // Orders expiry_heads_: by time, then by partition.
  struct ByExpiry {
    bool operator()(const std::pair<int64_t, const TopicPartition*>& a,
                    const std::pair<int64_t, const TopicPartition*>& b) const {
      if (a.first != b.first) return a.first < b.first;
      return *a.second < *b.second;
    }
  };

  bool Sendable(const ProducerBatch& batch, const PartitionState& state, int64_t now_ms,
                int64_t* wait_ms) const;
  bool ShouldStopDrain(const ProducerBatch& first, const PartitionState& state) const;
  // kRequestTimeout: whether the partition's queue is left alone (muted for ordering), and the
  // first time at which `batch`, at `index` of the queue, expires (Kafka's maybeExpire).
  bool ExpiryMuted(const PartitionState& state) const;
  int64_t RequestTimeoutExpiryMs(const ProducerBatch& batch, const PartitionState& state,
                                 size_t index) const;
  void Forget(ProducerBatch& batch);
  // A partition's queue became non-empty, or empty: queued_ and the leader groups follow.
  void Enqueued(const TopicPartition& tp, PartitionState& state);
  void Dequeued(const TopicPartition& tp, PartitionState& state);
  // Brings the leader groups up to date: all of them again when `generation` is not the last
  // one grouped by (or is nullopt), else the partitions queued since.
  void Group(const LeaderFn& leader_of, std::optional<uint64_t> generation);
  std::vector<ProducerBatch*> DrainGrouped(BrokerId node, int64_t now_ms);
  ReadyResult ReadyGrouped(int64_t now_ms) const;
  // Re-indexes the partition's head in expiry_heads_ after its queue, its head or its in-flight
  // set changed.
  void RefreshHeadExpiry(const TopicPartition& tp, PartitionState& state);
  // Removes `batch` from its partition's sequenced batches.
  void Unsequence(const ProducerBatch& batch);

  using Partitions = std::map<TopicPartition, PartitionState>;
  // partitions_' entry of `tp` (end() when none), found through lookup_: a hash lookup rather
  // than a walk of the tree, for the lookups of every record, batch and answer.
  Partitions::iterator FindEntry(const TopicPartition& tp);
  Partitions::const_iterator FindEntry(const TopicPartition& tp) const;
  // The entry of `tp`, added when there is none (true: added).
  std::pair<Partitions::iterator, bool> EmplaceEntry(const TopicPartition& tp);
  // The entry of `tp`. REQUIRES: there is one.
  PartitionState& StateOf(const TopicPartition& tp);

  AccumulatorConfig config_;
  std::map<BatchId, std::unique_ptr<ProducerBatch>> batches_;
  Partitions partitions_;  // entries are never erased; walked in partition order
  std::unordered_map<TopicPartition, Partitions::iterator> lookup_;  // partitions_ by name
  // The partitions whose queue is not empty, in partitions_' order (the walks that look for
  // sendable or expiring batches visit only these: a producer of many partitions has a few
  // queued at a time). Every queue change keeps it (Append, Drain, Reenqueue, Forget).
  PartitionGroup queued_;
  // queued_ by leader, as `leader_of` answered at grouping (Group); keys point into partitions_.
  std::map<BrokerId, PartitionGroup> by_leader_;
  PartitionGroup no_leader_;
  // Queued since the last grouping, not yet asked for their leader (some may be empty again, or
  // listed twice).
  std::vector<std::pair<const TopicPartition*, PartitionState*>> ungrouped_;
  std::optional<uint64_t> grouped_generation_;
  // kRequestTimeout: each unmuted queued partition's head by the time it expires (a batch behind
  // the head expires no sooner), so that Expire and NextExpiryDelayMs cost the partitions due,
  // not all queued ones. Kept with queued_ (RefreshHeadExpiry); keys point into partitions_.
  std::set<std::pair<int64_t, const TopicPartition*>, ByExpiry> expiry_heads_;
  // False when no partition is unresolved (true may be stale): lets the producer's every
  // iteration skip ShouldResetProducerIdAfterResolvingSequences' walk over the partitions.
  bool maybe_unresolved_ = false;
  BatchId next_batch_id_ = 1;
  ProducerId producer_id_ = kNoProducerId;
  ProducerEpoch producer_epoch_ = kNoProducerEpoch;
  int32_t flushes_in_progress_ = 0;
  bool closed_ = false;
};

}  // namespace ksim
