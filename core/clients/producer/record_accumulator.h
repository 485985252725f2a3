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
//   idempotence each batch takes its partition's next sequence numbers (and the producer id and
//   epoch) the first time it is drained and keeps them on retries; a partition is skipped while it
//   has 5 batches in flight, and a retried batch is drained only when no batch with a lower
//   sequence is in flight (Kafka 1.1+'s ordering). Without idempotence and with
//   max.in.flight.requests.per.connection=1, a partition with a batch in flight is skipped
//   (Kafka's guaranteeMessageOrder muting).
// - Reenqueue puts a failed in-flight batch back at the head of its partition's queue (in
//   sequence order among the other retries); Complete forgets a batch; Expire removes the batches
//   whose delivery.timeout.ms has passed since creation, queued or in flight.
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
  int32_t attempts = 0;         // drains (Produce requests that carried it)
  bool retry = false;           // re-enqueued after a failed attempt
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

struct AccumulatorConfig {
  int32_t batch_size = 16384;
  int64_t linger_ms = 0;
  int64_t retry_backoff_ms = 100;
  int64_t delivery_timeout_ms = 120000;
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
  ReadyResult Ready(const LeaderFn& leader_of, int64_t now_ms) const;

  // The sendable batches of the partitions `node` leads, one per partition in partition order,
  // at most max.request.size bytes together (the first batch always). Each is marked in flight.
  // REQUIRES (idempotent): a producer id was set.
  std::vector<ProducerBatch*> Drain(const LeaderFn& leader_of, BrokerId node, int64_t now_ms);

  // Puts an in-flight batch back at the head of its partition's queue for a retry.
  // REQUIRES: the batch is in flight.
  void Reenqueue(BatchId id, int64_t now_ms);
  // Removes a batch (in flight or queued) and returns it. REQUIRES: it exists.
  std::unique_ptr<ProducerBatch> Complete(BatchId id);
  // Removes and returns the batches whose delivery timeout has passed, queued and in flight
  // (oldest first within each partition, partitions in order).
  std::vector<std::unique_ptr<ProducerBatch>> Expire(int64_t now_ms);
  // Time until the next batch expires, INT64_MAX when there is none.
  int64_t NextExpiryDelayMs(int64_t now_ms) const;

  // Idempotence: the producer id and epoch batches take from now on. A different id or epoch
  // starts every partition's sequence at 0 again; batches already holding the old id take new
  // sequence numbers when next drained (Kafka 1.1's producer id reset).
  void SetProducerIdAndEpoch(ProducerId id, ProducerEpoch epoch);
  ProducerId producer_id() const { return producer_id_; }
  ProducerEpoch producer_epoch() const { return producer_epoch_; }
  // The sequence the partition's next new batch gets.
  Sequence NextSequence(const TopicPartition& tp) const;
  // Idempotence bookkeeping of a batch acknowledged by the broker.
  void OnAcked(const ProducerBatch& batch);
  // The last sequence the broker acknowledged for `tp` (-1 when none).
  Sequence LastAckedSequence(const TopicPartition& tp) const;

  // Flush: every batch counts as ready while at least one flush is in progress.
  void BeginFlush() { ++flushes_in_progress_; }
  void EndFlush() { --flushes_in_progress_; }
  void Close() { closed_ = true; }

  ProducerBatch* Find(BatchId id);
  bool HasUndrained() const;       // some batch waits in a queue
  size_t in_flight_count() const;  // batches in flight, all partitions
  size_t InFlightCount(const TopicPartition& tp) const;
  // Records in batches (queued or in flight).
  int64_t record_count() const;
  const std::deque<BatchId>& Queue(const TopicPartition& tp) const;
  const AccumulatorConfig& config() const { return config_; }

 private:
  struct PartitionState {
    std::deque<BatchId> queue;                          // head is sent first
    std::map<Sequence, BatchId> in_flight_by_sequence;  // idempotent
    std::set<BatchId> in_flight;
    Sequence next_sequence{0};
    Sequence last_acked_sequence{-1};
  };

  bool Sendable(const ProducerBatch& batch, const PartitionState& state, int64_t now_ms,
                int64_t* wait_ms) const;
  bool ShouldStopDrain(const ProducerBatch& first, const PartitionState& state) const;
  void Forget(ProducerBatch& batch);

  AccumulatorConfig config_;
  std::map<BatchId, std::unique_ptr<ProducerBatch>> batches_;
  std::map<TopicPartition, PartitionState> partitions_;
  BatchId next_batch_id_ = 1;
  ProducerId producer_id_ = kNoProducerId;
  ProducerEpoch producer_epoch_ = kNoProducerEpoch;
  int32_t flushes_in_progress_ = 0;
  bool closed_ = false;
};

}  // namespace ksim
