// Kafka's record batch, format v2 (magic 2), byte for byte. Layout (big endian; see
// docs/formats.md and Kafka's "Record Batch" documentation):
//
//   baseOffset: int64            partition-relative offset of the first record
//   batchLength: int32           bytes after this field
//   partitionLeaderEpoch: int32
//   magic: int8                  = 2
//   crc: uint32                  CRC-32C of attributes..end of batch
//   attributes: int16            bit 0-2 compression (only 0 = none supported), 3 timestamp
//                                type, 4 transactional, 5 control
//   lastOffsetDelta: int32
//   baseTimestamp: int64
//   maxTimestamp: int64
//   producerId: int64
//   producerEpoch: int16
//   baseSequence: int32
//   records: int32 count, then each record:
//     length: varint, attributes: int8, timestampDelta: varlong, offsetDelta: varint,
//     keyLength: varint (-1 = null), key, valueLength: varint (-1 = null), value,
//     headers: varint count, each: keyLength varint, key, valueLength varint, value
//
// The parsing functions below (ParseBatchHeader, VerifyBatch, DecodeRecords, BatchIterator) also
// read message format v0/v1 entries (magic 0/1, core/record/legacy_record.h), each as a batch of
// one record: both formats put the magic at byte 16, so a reader tells them apart entry by entry.
//
// baseOffset and partitionLeaderEpoch lie outside the CRC so a leader can stamp them without
// recomputing it (Kafka does the same). Decoding never trusts its input: every length is checked
// against the buffer, and damage is returned as kCorruption, never asserted.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/status.h"
#include "core/base/types.h"

namespace ksim {

inline constexpr size_t kLogOverhead = 12;      // baseOffset + batchLength
inline constexpr size_t kBatchHeaderSize = 61;  // through the records count
inline constexpr int8_t kMagicV2 = 2;
inline constexpr size_t kCrcOffset = 17;         // position of the crc field
inline constexpr size_t kAttributesOffset = 21;  // CRC coverage starts here

struct RecordHeader {
  std::string key;
  std::optional<Bytes> value;
  friend bool operator==(const RecordHeader&, const RecordHeader&) = default;
};

// What a producer hands over: one record before offsets are assigned.
struct RecordInput {
  int64_t timestamp_ms = kNoTimestamp;
  std::optional<Bytes> key;
  std::optional<Bytes> value;
  std::vector<RecordHeader> headers;
};

// Batch-level fields the writer chooses (offsets may be rewritten by the leader later).
struct BatchSpec {
  Offset base_offset{0};
  LeaderEpoch partition_leader_epoch = kNoPartitionLeaderEpoch;
  ProducerId producer_id = kNoProducerId;
  ProducerEpoch producer_epoch = kNoProducerEpoch;
  Sequence base_sequence = kNoSequence;
  bool transactional = false;
  bool control = false;
  bool log_append_time = false;  // timestamp type bit
};

// The fixed header of a batch, as parsed.
struct BatchHeader {
  Offset base_offset{0};
  int32_t batch_length = 0;
  LeaderEpoch partition_leader_epoch = kNoPartitionLeaderEpoch;
  int8_t magic = kMagicV2;
  uint32_t crc = 0;
  int16_t attributes = 0;
  int32_t last_offset_delta = 0;
  int64_t base_timestamp = kNoTimestamp;
  int64_t max_timestamp = kNoTimestamp;
  ProducerId producer_id = kNoProducerId;
  ProducerEpoch producer_epoch = kNoProducerEpoch;
  Sequence base_sequence = kNoSequence;
  int32_t records_count = 0;

  Offset last_offset() const { return base_offset + last_offset_delta; }
  Offset next_offset() const { return last_offset() + 1; }
  // Whole batch size on disk, baseOffset field included.
  size_t size_in_bytes() const { return kLogOverhead + static_cast<size_t>(batch_length); }
  int compression() const { return attributes & 0x7; }
  bool log_append_time() const { return (attributes & 0x8) != 0; }
  bool transactional() const { return (attributes & 0x10) != 0; }
  bool control() const { return (attributes & 0x20) != 0; }
  // Last sequence of the batch, wrapping at INT32_MAX as Kafka's DefaultRecordBatch does.
  Sequence last_sequence() const;
};

// One record, decoded, with absolute offset and timestamp.
struct Record {
  Offset offset{0};
  int64_t timestamp_ms = kNoTimestamp;
  std::optional<Bytes> key;
  std::optional<Bytes> value;
  std::vector<RecordHeader> headers;
};

// Encodes one uncompressed batch into a buffer of exactly its size. As Kafka's
// MemoryRecordsBuilder: baseTimestamp is the first record's timestamp, maxTimestamp the largest,
// offset deltas run 0..n-1, lastOffsetDelta = n-1, record attributes are 0.
// REQUIRES: !records.empty(); every timestamp >= kNoTimestamp (-1); sizes fit Kafka's int32s.
Bytes EncodeBatch(const BatchSpec& spec, std::span<const RecordInput> records);

// The smallest batchLength (messageSize) of the entry at the start of `bytes` for its magic: 49
// for v2, 14 for v0, 22 for v1; 14 when the magic is not there yet; nullopt for an unknown magic.
// REQUIRES: bytes.size() >= kLogOverhead.
std::optional<int32_t> MinEntryLength(ByteView bytes);

// Parses the header of the batch at the start of `bytes` without checking the CRC (a v0/v1
// entry: ParseLegacyHeader). Fails with
// kCorruption when fewer than kBatchHeaderSize bytes are there, batchLength < 49, the magic is
// not 2, baseOffset or lastOffsetDelta is negative (or their sum overflows), or the records count
// is negative or larger than the batch's bytes could hold (a record takes at least 7 bytes).
// Does not require the whole batch to be present.
Result<BatchHeader> ParseBatchHeader(ByteView bytes);

// Checks a whole batch: header, size == bytes.size(), CRC, and that the records parse and agree
// with the header: exactly records_count of them fill the batch, offset deltas are 0, 1, 2, ...
// (ksim never compacts), lastOffsetDelta = count - 1, and for create-time batches maxTimestamp is
// the largest record timestamp. kCorruption names the field and its byte position in the batch;
// a compressed batch is kUnsupported. A v0/v1 entry: VerifyLegacyMessage (CRC-32).
Status VerifyBatch(ByteView batch);

// Decodes every record of a whole (verified or not) batch; no CRC check. kCorruption on any
// structural damage (lengths, varints, count, offset deltas not rising within
// [0, lastOffsetDelta]); kUnsupported when compressed. With log-append time every record's
// timestamp is maxTimestamp, as in Kafka.
Result<std::vector<Record>> DecodeRecords(ByteView batch);

// One record of a batch without a copy: its key and value point into the batch (which must outlive
// the view); its headers are checked but not given.
struct RecordView {
  Offset offset{0};
  int64_t timestamp_ms = kNoTimestamp;
  std::optional<ByteView> key;
  std::optional<ByteView> value;
};

// ForEachRecord's body, out of line: visit(context, record) for each record. `parsed`: the
// batch's header as ParseBatchHeader gave it (a BatchIterator's item), or null to parse it.
Status ForEachRecordOf(ByteView batch, const BatchHeader* parsed, void* context,
                       void (*visit)(void* context, const RecordView& record));

// DecodeRecords without copying: calls visit(const RecordView&) for each record in order, and
// fails as DecodeRecords does. Records before a damaged one have been visited by then (a caller
// that must not see part of a damaged batch verifies it first, as an append does).
template <class Visit>
Status ForEachRecord(ByteView batch, Visit&& visit) {
  return ForEachRecordOf(batch, nullptr, &visit, [](void* context, const RecordView& record) {
    (*static_cast<std::remove_reference_t<Visit>*>(context))(record);
  });
}

// The values of the records at offsets [first, last] of `batches` (consecutive batches, each
// already verified: VerifyBatch passed on it, as a log append checks them all before writing; a
// partial batch at the end, which an append leaves out, ends the walk), in order:
// visit(context, value), nullopt for a null value. What an `append` event lists. It
// reads only the fields it needs, without the checks and error texts of a walk that trusts
// nothing (ForEachRecord): verified bytes cannot be damaged, and bytes that are not verified
// (a broken REQUIRES) stop the program at a KSIM_CHECK rather than be misread.
void ForEachVerifiedValueOf(ByteView batches, Offset first, Offset last, void* context,
                            void (*visit)(void* context, const std::optional<ByteView>& value));

template <class Visit>
void ForEachVerifiedValue(ByteView batches, Offset first, Offset last, Visit&& visit) {
  ForEachVerifiedValueOf(batches, first, last, &visit,
                         [](void* context, const std::optional<ByteView>& value) {
                           (*static_cast<std::remove_reference_t<Visit>*>(context))(value);
                         });
}

// Stamps fields outside the CRC's coverage. REQUIRES for SetBaseOffset: batch.size() >=
// kLogOverhead (a v0/v1 entry's offset lies at the same place); for SetPartitionLeaderEpoch: a
// whole v2 header (v0/v1 have no leader epoch: their CRC lies there).
void SetBaseOffset(MutableByteView batch, Offset base_offset);
void SetPartitionLeaderEpoch(MutableByteView batch, LeaderEpoch epoch);

// Walks consecutive batches in a buffer (a fetch response, a segment read). Stops at the first
// batch that is incomplete (a partial batch at the end of a read is normal) or corrupt; status()
// tells which. As Kafka's log input streams do, batchLength (below MinEntryLength) and magic (0,
// 1 or 2) are judged as soon as their bytes are there, everything else once the whole batch is;
// each batch's header is parsed (ParseBatchHeader) and, with verify_crc, its CRC checked. Records
// are not walked: call VerifyBatch or DecodeRecords on an item for that. The buffer must outlive
// the iterator.
class BatchIterator {
 public:
  explicit BatchIterator(ByteView buffer, bool verify_crc = true)
      : buffer_(buffer), verify_(verify_crc) {}

  // The next whole batch, or nullopt at the end (and on every call after that).
  struct Item {
    BatchHeader header;
    ByteView bytes;       // the whole batch
    size_t position = 0;  // within the buffer
  };
  std::optional<Item> Next();

  // ok at a clean end; kCorruption when a corrupt batch stopped the walk. A truncated last batch
  // is not an error here: position() says where the valid bytes end. Messages start with
  // "batch at position N: ".
  const Status& status() const { return status_; }
  size_t position() const { return position_; }
  // True when the walk stopped on an incomplete final batch.
  bool truncated() const { return truncated_; }

 private:
  ByteView buffer_;
  bool verify_;
  size_t position_ = 0;
  bool truncated_ = false;
  Status status_;
};

// ForEachRecord over a batch a BatchIterator gave, whose header is not parsed again.
template <class Visit>
Status ForEachRecord(const BatchIterator::Item& batch, Visit&& visit) {
  return ForEachRecordOf(batch.bytes, &batch.header, &visit,
                         [](void* context, const RecordView& record) {
                           (*static_cast<std::remove_reference_t<Visit>*>(context))(record);
                         });
}

}  // namespace ksim
