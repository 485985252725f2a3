// Producer state for idempotence (KIP-98), one per partition log, after Kafka's
// kafka.log.ProducerStateManager / ProducerAppendInfo of 1.x-2.0 with the five-batch cache of
// KAFKA-5494. Transactions (ongoing transactions, LSO, coordinator epochs) are not modelled.
//
// Per producer id it remembers the producer epoch and the metadata (first/last sequence,
// first/last offset, max timestamp) of its last up to five batches in the log. That is what lets
// a leader:
//   - answer a retried batch it already has (same epoch, same first and last sequence as one of
//     the five) with the original offsets instead of appending it twice;
//   - refuse a batch from an older epoch (INVALID_PRODUCER_EPOCH: a zombie producer is fenced),
//     a new epoch not starting at sequence 0 (OUT_OF_ORDER_SEQUENCE_NUMBER, or
//     UNKNOWN_PRODUCER_ID when the broker has no record of the producer at all), and a gap in
//     the sequence (OUT_OF_ORDER_SEQUENCE_NUMBER). Sequences wrap from INT32_MAX to 0.
// Followers and recovery apply batches without validation (Update) so that a follower that
// becomes leader deduplicates too. Batches without a producer id (-1) change nothing but the
// map end offset.
//
// Use: the leader calls ValidateAppend with a produce request's batches before appending them
// and Update with each batch once it is in the log (with its offsets); a follower only calls
// Update. After the log was truncated, or on open, RebuildFromLog (or TruncateAndReload plus a
// replay from map_end_offset()) brings the state back in line with the log; at each segment roll
// the owner calls UpdateMapEndOffset(new base) and TakeSnapshot(). Snapshot files
// `<20-digit offset>.snapshot` in the log directory hold the state as of that offset (every
// batch below it applied) in Kafka's snapshot format version 1, CRC-32C checked; a damaged one is
// deleted and an older one (or the log start) used instead. Format: docs/clients.md.
//
// Producer ids expire (RemoveExpiredProducers) when their last batch's timestamp is older than
// transactional.id.expiration.ms (Kafka 1.x/2.0 uses that setting; default 7 days), and when
// retention removes their last batch (TruncateHead).
//
// Ownership and threads: owned by its partition's log owner, one thread at a time; the Env is
// borrowed and must outlive it. Crash behaviour: state lives in memory; snapshots are synced when
// written, and anything newer is rebuilt from the log.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/base/check.h"
#include "core/base/index_iterator.h"
#include "core/base/status.h"
#include "core/base/types.h"
#include "core/config/kafka_version.h"
#include "core/env/env.h"
#include "core/record/record_batch.h"

namespace ksim {

class Log;

// One batch remembered for a producer, named as in Kafka's ProducerStateManager. (The producer
// client has its own ProducerBatch, a different type: one name for both broke the one-definition
// rule, which the link-time optimizer reported.)
struct BatchMetadata {
  Sequence first_sequence{0};
  Sequence last_sequence{0};
  Offset first_offset{0};
  Offset last_offset{0};
  int64_t timestamp_ms = kNoTimestamp;  // the batch's max timestamp
  friend bool operator==(const BatchMetadata&, const BatchMetadata&) = default;
};

// What the partition knows of one producer (Kafka's ProducerStateEntry).
// The batches a producer's entry keeps, oldest first: a ring of at most kCapacity held in place,
// so that an entry copied (for each request validated) costs no allocation.
class RetainedBatches {
 public:
  static constexpr size_t kCapacity = 5;  // ProducerStateEntry.NumBatchesToRetain

  using Iterator = IndexIterator<RetainedBatches, BatchMetadata>;

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // The i-th oldest. REQUIRES: i < size().
  const BatchMetadata& operator[](size_t i) const {
    KSIM_CHECK(i < size_);
    return slots_[(first_ + i) % kCapacity];
  }
  const BatchMetadata& front() const { return (*this)[0]; }
  const BatchMetadata& back() const { return (*this)[size_ - 1]; }
  Iterator begin() const { return Iterator(this, 0); }
  Iterator end() const { return Iterator(this, size_); }
  // REQUIRES: size() < kCapacity.
  void push_back(const BatchMetadata& batch) {
    KSIM_CHECK(size_ < kCapacity);
    slots_[(first_ + size_) % kCapacity] = batch;
    ++size_;
  }
  // REQUIRES: !empty().
  void pop_front() {
    KSIM_CHECK(size_ > 0);
    first_ = (first_ + 1) % kCapacity;
    --size_;
  }
  void clear() { first_ = size_ = 0; }

 private:
  std::array<BatchMetadata, kCapacity> slots_{};
  size_t first_ = 0;  // the oldest's slot
  size_t size_ = 0;
};

struct ProducerStateEntry {
  static constexpr size_t kBatchesToRetain = RetainedBatches::kCapacity;

  ProducerId producer_id = kNoProducerId;
  ProducerEpoch epoch = kNoProducerEpoch;
  RetainedBatches batches;  // oldest first, at most kBatchesToRetain

  Sequence first_sequence() const {
    return batches.empty() ? kNoSequence : batches.front().first_sequence;
  }
  Sequence last_sequence() const {
    return batches.empty() ? kNoSequence : batches.back().last_sequence;
  }
  Offset first_offset() const {
    return batches.empty() ? Offset(-1) : batches.front().first_offset;
  }
  Offset last_offset() const { return batches.empty() ? Offset(-1) : batches.back().last_offset; }
  int64_t last_timestamp_ms() const {
    return batches.empty() ? kNoTimestamp : batches.back().timestamp_ms;
  }
  // The cached batch with exactly this sequence range under `epoch`, if any.
  const BatchMetadata* FindBatch(ProducerEpoch epoch, Sequence first, Sequence last) const;
  // A new epoch clears the cached batches (Kafka's maybeUpdateEpoch); then adds `batch`,
  // dropping the oldest beyond `retain` (at most kBatchesToRetain).
  void AddBatch(ProducerEpoch batch_epoch, const BatchMetadata& batch,
                size_t retain = kBatchesToRetain);
  void UpdateEpoch(ProducerEpoch new_epoch);
};

// What a broker of a release remembers of an idempotent producer and how it answers one it does
// not know (docs/versions.md, "Producer and console producer"). 0.11.0's ProducerIdEntry keeps
// the last batch alone (a retry of any earlier one is OUT_OF_ORDER_SEQUENCE_NUMBER) and answers a
// producer it has no record of, at a sequence above 0, OUT_OF_ORDER_SEQUENCE_NUMBER; 1.0.0's
// ProducerStateEntry keeps the last 5 (NumBatchesToRetain, KAFKA-5494) and answers
// UNKNOWN_PRODUCER_ID (KAFKA-5793).
struct ProducerStateRules {
  size_t batches_to_retain = ProducerStateEntry::kBatchesToRetain;
  bool unknown_producer_id = true;
};
ProducerStateRules ProducerStateRulesAt(KafkaRelease release);

// The leader's verdict on a produce request's batches.
struct AppendCheck {
  // Set when a batch repeats one already in the log: the request is answered with these
  // offsets and nothing is appended (Kafka returns the first duplicate found).
  std::optional<BatchMetadata> duplicate;
};

class ProducerStateManager {
 public:
  // transactional.id.expiration.ms's default (7 days).
  static constexpr int64_t kDefaultExpirationMs = 7LL * 24 * 60 * 60 * 1000;

  // `dir` is the partition's log directory (snapshots live beside the segments).
  ProducerStateManager(Env& env, std::string dir,
                       int64_t producer_expiration_ms = kDefaultExpirationMs,
                       ProducerStateRules rules = {});

  // Leader side, before appending `batches` (in log order; offsets need not be assigned yet).
  // Errors: INVALID_PRODUCER_EPOCH, OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID. Batches
  // are checked cumulatively (the second against the first) as Kafka's ProducerAppendInfo does;
  // batches without a producer id and control batches are not checked. Changes nothing.
  Result<AppendCheck> ValidateAppend(std::span<const BatchHeader> batches) const;
  Result<AppendCheck> ValidateAppend(const BatchHeader& batch) const {
    return ValidateAppend(std::span<const BatchHeader>(&batch, 1));
  }

  // Records a batch now in the log (leader or follower append, or a replay), unvalidated.
  // A control batch only moves the producer's epoch. Moves the map end offset past it.
  // REQUIRES: appended.base_offset >= map_end_offset() (the state matches the log before it).
  void Update(const BatchHeader& appended);

  // The entry of `producer_id`, or null.
  const ProducerStateEntry* LastEntry(ProducerId producer_id) const;
  const std::map<ProducerId, ProducerStateEntry>& producers() const { return producers_; }
  // Every batch below this offset has been applied.
  Offset map_end_offset() const { return map_end_offset_; }
  void UpdateMapEndOffset(Offset offset) { map_end_offset_ = offset; }

  // Forgets producers whose last batch's timestamp is expiration ms or more before `now_ms`.
  void RemoveExpiredProducers(int64_t now_ms);
  // The log start offset rose to `log_start_offset`: forgets cached batches below it, producers
  // with none left, and snapshots below it (Kafka's truncateHead).
  Status TruncateHead(Offset log_start_offset);
  // The log now spans [log_start_offset, log_end_offset): deletes snapshots outside
  // (log_start_offset, log_end_offset]; unless the state already ends at log_end_offset, reloads
  // it from the latest usable snapshot (or empties it at the log start). The caller must then
  // replay the log from map_end_offset() to log_end_offset (RebuildFromLog does both).
  Status TruncateAndReload(Offset log_start_offset, Offset log_end_offset, int64_t now_ms);
  // TruncateAndReload to the log's bounds, then Update with every batch from map_end_offset().
  Status RebuildFromLog(const Log& log, int64_t now_ms);

  // Writes `<map_end_offset>.snapshot` unless a snapshot at that offset or later exists.
  Status TakeSnapshot();
  // Offsets of the snapshot files present, ascending.
  Result<std::vector<Offset>> SnapshotOffsets() const;
  Status DeleteSnapshotsBefore(Offset offset);
  // Forgets everything and deletes every snapshot (Kafka's truncate(): the log was emptied).
  Status Reset();

  // The snapshot file format, exposed for tests and tools. Decoding untrusted bytes returns
  // kCorruption on any damage (size, version, CRC, counts).
  static Bytes EncodeSnapshot(const std::map<ProducerId, ProducerStateEntry>& producers);
  static Result<std::vector<ProducerStateEntry>> DecodeSnapshot(ByteView bytes);
  std::string SnapshotPath(Offset offset) const;

 private:
  bool Expired(const ProducerStateEntry& entry, int64_t now_ms) const;
  // Loads the latest snapshot that decodes, deleting damaged ones.
  Status LoadFromSnapshot(Offset log_start_offset, int64_t now_ms);
  // TruncateHead, `snapshots` the offsets of the snapshot files present (SnapshotOffsets()).
  Status TruncateHeadGiven(Offset log_start_offset, const std::vector<Offset>& snapshots);

  Env& env_;
  std::string dir_;
  int64_t producer_expiration_ms_;
  ProducerStateRules rules_;
  std::map<ProducerId, ProducerStateEntry> producers_;
  Offset map_end_offset_{0};
  Offset last_snapshot_offset_{0};
};

}  // namespace ksim
