// Record batch v2 codec. Byte layout: core/record/record_batch.h and docs/formats.md.
//
// Encoding sizes the whole batch first and writes it into one buffer. Decoding walks records with
// bounds-checked reads only; every failure names the field and its byte position within the batch
// (the iterator adds the batch's position within its buffer).
#include "core/record/record_batch.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>

#include "core/base/big_endian.h"
#include "core/base/check.h"
#include "core/base/crc32.h"
#include "core/base/crc32c.h"
#include "core/base/varint.h"
#include "core/record/legacy_record.h"

namespace ksim {
namespace {

// Field positions within a batch (Kafka's DefaultRecordBatch constants).
constexpr size_t kBaseOffsetPos = 0;
constexpr size_t kBatchLengthPos = 8;
constexpr size_t kLeaderEpochPos = 12;
constexpr size_t kMagicPos = 16;
constexpr size_t kCrcPos = 17;
constexpr size_t kAttributesPos = 21;
constexpr size_t kLastOffsetDeltaPos = 23;
constexpr size_t kBaseTimestampPos = 27;
constexpr size_t kMaxTimestampPos = 35;
constexpr size_t kProducerIdPos = 43;
constexpr size_t kProducerEpochPos = 51;
constexpr size_t kBaseSequencePos = 53;
constexpr size_t kRecordsCountPos = 57;
constexpr size_t kRecordsPos = 61;
static_assert(kCrcPos == kCrcOffset && kAttributesPos == kAttributesOffset);
static_assert(kRecordsPos == kBatchHeaderSize);

// batchLength counts the bytes after itself; a batch without records has 61 - 12 of them.
constexpr int32_t kMinBatchLength = static_cast<int32_t>(kBatchHeaderSize - kLogOverhead);
// The smallest record: length, attributes, timestampDelta, offsetDelta, key length, value length
// and header count, one byte each.
constexpr size_t kMinRecordBytes = 7;

constexpr int16_t kTimestampTypeMask = 0x08;
constexpr int16_t kTransactionalMask = 0x10;
constexpr int16_t kControlMask = 0x20;

[[gnu::format(printf, 2, 3)]] Status Error(Errc code, const char* format, ...) {
  char message[256];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return Status(code, message);
}

const char* CompressionName(int codec) {
  switch (codec) {
    case 1:
      return "gzip";
    case 2:
      return "snappy";
    case 3:
      return "lz4";
    case 4:
      return "zstd";
    default:
      return "unknown";
  }
}

// Two's-complement wrapping arithmetic: decoded deltas come from untrusted bytes, and signed
// overflow must not be undefined behaviour.
int64_t WrappingAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t WrappingSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}

// ---- Encoding ---------------------------------------------------------------------------------

size_t NullableBytesSize(const std::optional<Bytes>& bytes) {
  return bytes ? varint::VarintSize(static_cast<int32_t>(bytes->size())) + bytes->size()
               : varint::VarintSize(-1);
}

int32_t CheckedLength(size_t size) {
  KSIM_CHECK_MSG(size <= static_cast<size_t>(std::numeric_limits<int32_t>::max()),
                 "record field longer than INT32_MAX bytes");
  return static_cast<int32_t>(size);
}

// Bytes after the record's length varint (DefaultRecord.sizeOfBodyInBytes).
size_t RecordBodySize(int32_t offset_delta, int64_t timestamp_delta, const RecordInput& record) {
  size_t size = 1;  // attributes
  size += varint::VarlongSize(timestamp_delta);
  size += varint::VarintSize(offset_delta);
  size += NullableBytesSize(record.key);
  size += NullableBytesSize(record.value);
  size += varint::VarintSize(CheckedLength(record.headers.size()));
  for (const RecordHeader& header : record.headers) {
    size += varint::VarintSize(CheckedLength(header.key.size())) + header.key.size();
    size += NullableBytesSize(header.value);
  }
  return size;
}

uint8_t* PutNullableBytes(uint8_t* p, const std::optional<Bytes>& bytes) {
  if (!bytes) return varint::PutVarint(p, -1);
  p = varint::PutVarint(p, static_cast<int32_t>(bytes->size()));
  if (!bytes->empty()) std::memcpy(p, bytes->data(), bytes->size());
  return p + bytes->size();
}

uint8_t* PutRecord(uint8_t* p, size_t body_size, int32_t offset_delta, int64_t timestamp_delta,
                   const RecordInput& record) {
  p = varint::PutVarint(p, static_cast<int32_t>(body_size));
  *p++ = 0;  // record attributes: none defined
  p = varint::PutVarlong(p, timestamp_delta);
  p = varint::PutVarint(p, offset_delta);
  p = PutNullableBytes(p, record.key);
  p = PutNullableBytes(p, record.value);
  p = varint::PutVarint(p, static_cast<int32_t>(record.headers.size()));
  for (const RecordHeader& header : record.headers) {
    p = varint::PutVarint(p, static_cast<int32_t>(header.key.size()));
    if (!header.key.empty()) std::memcpy(p, header.key.data(), header.key.size());
    p += header.key.size();
    p = PutNullableBytes(p, header.value);
  }
  return p;
}

// ---- Decoding ---------------------------------------------------------------------------------

// Bounds-checked reads within [0, limit) of a batch; remembers the first failure.
class FieldReader {
 public:
  FieldReader(ByteView batch, size_t pos, int32_t record_index, size_t record_start)
      : batch_(batch), pos_(pos), index_(record_index), record_start_(record_start) {}

  size_t pos() const { return pos_; }
  // Narrows reads to the record once its length is known.
  void Limit(size_t end) {
    batch_ = batch_.first(end);
    scope_ = "record";
  }

  // A one-byte varint (a record's small fields) is decoded here, as GetVarint would.
  bool Varint(const char* field, int32_t* value) {
    if (pos_ < batch_.size() && batch_[pos_] < 0x80) {
      *value = varint::ZigZagDecode32(batch_[pos_++]);
      return true;
    }
    return Check(varint::GetVarint(batch_, &pos_, value), field, "5");
  }
  bool Varlong(const char* field, int64_t* value) {
    if (pos_ < batch_.size() && batch_[pos_] < 0x80) {
      *value = varint::ZigZagDecode64(batch_[pos_++]);
      return true;
    }
    return Check(varint::GetVarlong(batch_, &pos_, value), field, "10");
  }
  bool Byte(const char* field, uint8_t* value) {
    if (pos_ >= batch_.size())
      return Fail("%s at byte %zu lies past the end of the record", field, pos_);
    *value = batch_[pos_++];
    return true;
  }
  // A varint length (-1 = null when `nullable`) followed by that many bytes; *data_pos is where
  // they start.
  bool Sized(const char* field, bool nullable, int32_t* length, size_t* data_pos) {
    const size_t length_pos = pos_;
    if (!Varint(field, length)) return false;
    if (*length < (nullable ? -1 : 0)) {
      return Fail("%s length %d at byte %zu is invalid", field, *length, length_pos);
    }
    *data_pos = pos_;
    if (*length <= 0) return true;
    if (static_cast<size_t>(*length) > batch_.size() - pos_) {
      return Fail("%s length %d at byte %zu runs past the end of the %s (%zu bytes left)", field,
                  *length, length_pos, scope_, batch_.size() - pos_);
    }
    pos_ += static_cast<size_t>(*length);
    return true;
  }

  [[gnu::format(printf, 2, 3)]] bool Fail(const char* format, ...) {
    char detail[200];
    va_list args;
    va_start(args, format);
    std::vsnprintf(detail, sizeof(detail), format, args);
    va_end(args);
    status_ = Error(Errc::kCorruption, "record %d (starting at byte %zu): %s", index_,
                    record_start_, detail);
    return false;
  }
  Status TakeStatus() { return std::move(status_); }

 private:
  bool Check(varint::DecodeStatus status, const char* field, const char* max_bytes) {
    switch (status) {
      case varint::DecodeStatus::kOk:
        return true;
      case varint::DecodeStatus::kTruncated:
        return Fail("%s varint at byte %zu runs past the end of the %s", field, pos_, scope_);
      case varint::DecodeStatus::kOverlong:
        return Fail("%s varint at byte %zu is longer than %s bytes", field, pos_, max_bytes);
    }
    return false;
  }

  ByteView batch_;
  size_t pos_;
  int32_t index_;
  size_t record_start_;
  const char* scope_ = "batch";
  Status status_;
};

struct RecordFields {
  int64_t timestamp_delta = 0;
  int32_t offset_delta = 0;
  int32_t key_length = -1;
  size_t key_pos = 0;
  int32_t value_length = -1;
  size_t value_pos = 0;
  int32_t header_count = 0;
};

// Parses record `index` at batch[*pos], checking every length against the record's own length
// and that the fields fill it exactly (DefaultRecord.readFrom). `on_header(key_pos, key_length,
// value_pos, value_length)` is called for each header. Advances *pos past the record.
template <class OnHeader>
Status ParseRecord(ByteView batch, size_t* pos, int32_t index, RecordFields* out,
                   OnHeader&& on_header) {
  FieldReader reader(batch, *pos, index, *pos);
  int32_t body_length = 0;
  if (!reader.Varint("length", &body_length)) return reader.TakeStatus();
  const size_t body_pos = reader.pos();
  if (body_length < 0) {
    reader.Fail("length %d is negative", body_length);
    return reader.TakeStatus();
  }
  if (static_cast<size_t>(body_length) > batch.size() - body_pos) {
    reader.Fail("length %d runs past the end of the batch (%zu bytes left)", body_length,
                batch.size() - body_pos);
    return reader.TakeStatus();
  }
  const size_t end = body_pos + static_cast<size_t>(body_length);
  reader.Limit(end);

  uint8_t attributes = 0;
  if (!reader.Byte("attributes", &attributes) ||
      !reader.Varlong("timestampDelta", &out->timestamp_delta) ||
      !reader.Varint("offsetDelta", &out->offset_delta) ||
      !reader.Sized("key", /*nullable=*/true, &out->key_length, &out->key_pos) ||
      !reader.Sized("value", /*nullable=*/true, &out->value_length, &out->value_pos)) {
    return reader.TakeStatus();
  }
  const size_t count_pos = reader.pos();
  if (!reader.Varint("header count", &out->header_count)) return reader.TakeStatus();
  // Each header takes at least two bytes (key length, value length).
  if (out->header_count < 0 || static_cast<size_t>(out->header_count) > (end - reader.pos()) / 2) {
    reader.Fail("header count %d at byte %zu is invalid for %zu remaining bytes", out->header_count,
                count_pos, end - reader.pos());
    return reader.TakeStatus();
  }
  for (int32_t h = 0; h < out->header_count; ++h) {
    int32_t key_length = 0, value_length = 0;
    size_t key_pos = 0, value_pos = 0;
    if (!reader.Sized("header key", /*nullable=*/false, &key_length, &key_pos) ||
        !reader.Sized("header value", /*nullable=*/true, &value_length, &value_pos)) {
      return reader.TakeStatus();
    }
    on_header(key_pos, key_length, value_pos, value_length);
  }
  if (reader.pos() != end) {
    reader.Fail("length says %d bytes but the fields end after %zu", body_length,
                reader.pos() - body_pos);
    return reader.TakeStatus();
  }
  *pos = end;
  return Status::Ok();
}

// Checks what DecodeRecords and VerifyBatch both need before walking records: the buffer holds
// exactly one batch whose records are uncompressed.
Result<BatchHeader> ParseWholeBatch(ByteView batch) {
  KSIM_ASSIGN_OR_RETURN(BatchHeader header, ParseBatchHeader(batch));
  if (header.size_in_bytes() != batch.size()) {
    return Error(Errc::kCorruption,
                 "batch length %d at byte %zu means %zu bytes in all, but the buffer holds %zu",
                 header.batch_length, kBatchLengthPos, header.size_in_bytes(), batch.size());
  }
  return header;
}

Status CheckUncompressed(const BatchHeader& header) {
  if (header.compression() != 0) {
    return Error(Errc::kUnsupported, "batch compression codec %d (%s) is not supported",
                 header.compression(), CompressionName(header.compression()));
  }
  return Status::Ok();
}

uint32_t ComputeCrc(ByteView batch) { return crc32c::Value(batch.subspan(kAttributesPos)); }

// Message format v0/v1 entries share the log overhead and the magic's position with v2
// (core/record/legacy_record.h): the magic byte says which codec reads the rest.
bool IsLegacy(ByteView bytes) {
  return bytes.size() > kMagicPos && static_cast<int8_t>(bytes[kMagicPos]) >= kMagicV0 &&
         static_cast<int8_t>(bytes[kMagicPos]) <= kMagicV1;
}

}  // namespace

std::optional<int32_t> MinEntryLength(ByteView bytes) {
  KSIM_CHECK(bytes.size() >= kLogOverhead);
  if (bytes.size() <= kMagicPos) return kMessageOverheadV0;  // magic unknown yet: any format's
  switch (static_cast<int8_t>(bytes[kMagicPos])) {
    case kMagicV0:
      return kMessageOverheadV0;
    case kMagicV1:
      return kMessageOverheadV1;
    case kMagicV2:
      return kMinBatchLength;
    default:
      return std::nullopt;
  }
}

Sequence BatchHeader::last_sequence() const {
  // DefaultRecordBatch.lastSequence / incrementSequence: sequences wrap from INT32_MAX to 0.
  if (base_sequence == kNoSequence) return kNoSequence;
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  int64_t last = int64_t{base_sequence.value()} + last_offset_delta;
  if (last > kMax) last -= kMax + 1;
  return Sequence(static_cast<int32_t>(last));
}

Bytes EncodeBatch(const BatchSpec& spec, std::span<const RecordInput> records) {
  KSIM_CHECK(!records.empty());
  KSIM_CHECK(records.size() <= static_cast<size_t>(std::numeric_limits<int32_t>::max()));
  // Kafka takes the first record's timestamp as the base (MemoryRecordsBuilder.firstTimestamp).
  const int64_t base_timestamp = records[0].timestamp_ms;
  int64_t max_timestamp = kNoTimestamp;
  size_t size = kBatchHeaderSize;
  for (size_t i = 0; i < records.size(); ++i) {
    const int64_t timestamp = records[i].timestamp_ms;
    KSIM_CHECK_MSG(timestamp >= kNoTimestamp, "negative record timestamp");
    if (timestamp > max_timestamp) max_timestamp = timestamp;
    const size_t body =
        RecordBodySize(static_cast<int32_t>(i), WrappingSub(timestamp, base_timestamp), records[i]);
    size += varint::VarintSize(CheckedLength(body)) + body;
  }
  const int32_t batch_length = CheckedLength(size - kLogOverhead);

  int16_t attributes = 0;  // compression none
  if (spec.log_append_time) attributes |= kTimestampTypeMask;
  if (spec.transactional) attributes |= kTransactionalMask;
  if (spec.control) attributes |= kControlMask;

  Bytes out(size);
  uint8_t* base = out.data();
  StoreBigEndian64(base + kBaseOffsetPos, static_cast<uint64_t>(spec.base_offset.value()));
  StoreBigEndian32(base + kBatchLengthPos, static_cast<uint32_t>(batch_length));
  StoreBigEndian32(base + kLeaderEpochPos,
                   static_cast<uint32_t>(spec.partition_leader_epoch.value()));
  base[kMagicPos] = static_cast<uint8_t>(kMagicV2);
  StoreBigEndian16(base + kAttributesPos, static_cast<uint16_t>(attributes));
  StoreBigEndian32(base + kLastOffsetDeltaPos, static_cast<uint32_t>(records.size() - 1));
  StoreBigEndian64(base + kBaseTimestampPos, static_cast<uint64_t>(base_timestamp));
  StoreBigEndian64(base + kMaxTimestampPos, static_cast<uint64_t>(max_timestamp));
  StoreBigEndian64(base + kProducerIdPos, static_cast<uint64_t>(spec.producer_id.value()));
  StoreBigEndian16(base + kProducerEpochPos, static_cast<uint16_t>(spec.producer_epoch.value()));
  StoreBigEndian32(base + kBaseSequencePos, static_cast<uint32_t>(spec.base_sequence.value()));
  StoreBigEndian32(base + kRecordsCountPos, static_cast<uint32_t>(records.size()));

  uint8_t* p = base + kRecordsPos;
  for (size_t i = 0; i < records.size(); ++i) {
    const auto offset_delta = static_cast<int32_t>(i);
    const int64_t timestamp_delta = WrappingSub(records[i].timestamp_ms, base_timestamp);
    p = PutRecord(p, RecordBodySize(offset_delta, timestamp_delta, records[i]), offset_delta,
                  timestamp_delta, records[i]);
  }
  KSIM_CHECK(p == base + size);
  StoreBigEndian32(base + kCrcPos, ComputeCrc(out));
  return out;
}

Result<BatchHeader> ParseBatchHeader(ByteView bytes) {
  if (IsLegacy(bytes)) return ParseLegacyHeader(bytes);
  if (bytes.size() < kBatchHeaderSize) {
    return Error(Errc::kCorruption, "batch header needs %zu bytes, only %zu are there",
                 kBatchHeaderSize, bytes.size());
  }
  const uint8_t* p = bytes.data();
  BatchHeader h;
  h.base_offset = Offset(static_cast<int64_t>(LoadBigEndian64(p + kBaseOffsetPos)));
  h.batch_length = static_cast<int32_t>(LoadBigEndian32(p + kBatchLengthPos));
  h.partition_leader_epoch =
      LeaderEpoch(static_cast<int32_t>(LoadBigEndian32(p + kLeaderEpochPos)));
  h.magic = static_cast<int8_t>(p[kMagicPos]);
  h.crc = LoadBigEndian32(p + kCrcPos);
  h.attributes = static_cast<int16_t>(LoadBigEndian16(p + kAttributesPos));
  h.last_offset_delta = static_cast<int32_t>(LoadBigEndian32(p + kLastOffsetDeltaPos));
  h.base_timestamp = static_cast<int64_t>(LoadBigEndian64(p + kBaseTimestampPos));
  h.max_timestamp = static_cast<int64_t>(LoadBigEndian64(p + kMaxTimestampPos));
  h.producer_id = ProducerId(static_cast<int64_t>(LoadBigEndian64(p + kProducerIdPos)));
  h.producer_epoch = ProducerEpoch(static_cast<int16_t>(LoadBigEndian16(p + kProducerEpochPos)));
  h.base_sequence = Sequence(static_cast<int32_t>(LoadBigEndian32(p + kBaseSequencePos)));
  h.records_count = static_cast<int32_t>(LoadBigEndian32(p + kRecordsCountPos));

  if (h.batch_length < kMinBatchLength) {
    return Error(Errc::kCorruption, "batch length %d at byte %zu is below the minimum %d",
                 h.batch_length, kBatchLengthPos, kMinBatchLength);
  }
  if (h.magic != kMagicV2) {
    return Error(Errc::kCorruption, "magic %d at byte %zu is not %d", h.magic, kMagicPos, kMagicV2);
  }
  if (h.base_offset.value() < 0) {
    return Error(Errc::kCorruption, "base offset %lld at byte %zu is negative",
                 static_cast<long long>(h.base_offset.value()), kBaseOffsetPos);
  }
  if (h.last_offset_delta < 0) {
    return Error(Errc::kCorruption, "last offset delta %d at byte %zu is negative",
                 h.last_offset_delta, kLastOffsetDeltaPos);
  }
  if (h.base_offset.value() >= std::numeric_limits<int64_t>::max() - h.last_offset_delta) {
    return Error(Errc::kCorruption, "base offset %lld plus last offset delta %d overflows",
                 static_cast<long long>(h.base_offset.value()), h.last_offset_delta);
  }
  const size_t records_bytes = static_cast<size_t>(h.batch_length - kMinBatchLength);
  if (h.records_count < 0 ||
      static_cast<size_t>(h.records_count) > records_bytes / kMinRecordBytes) {
    return Error(Errc::kCorruption,
                 "records count %d at byte %zu is impossible for %zu bytes of records",
                 h.records_count, kRecordsCountPos, records_bytes);
  }
  return h;
}

Status VerifyBatch(ByteView batch) {
  if (IsLegacy(batch)) return VerifyLegacyMessage(batch);
  KSIM_ASSIGN_OR_RETURN(const BatchHeader header, ParseWholeBatch(batch));
  const uint32_t computed = ComputeCrc(batch);
  if (computed != header.crc) {
    return Error(Errc::kCorruption,
                 "CRC mismatch: stored 0x%08x at byte %zu, computed 0x%08x over bytes %zu..%zu",
                 header.crc, kCrcPos, computed, kAttributesPos, batch.size());
  }
  KSIM_RETURN_IF_ERROR(CheckUncompressed(header));

  // Records carry offset deltas 0, 1, ... (ksim never compacts, so a batch has no gaps), the last
  // one is the header's lastOffsetDelta, and with create-time timestamps maxTimestamp is the
  // largest record timestamp (what Kafka's MemoryRecordsBuilder writes).
  size_t pos = kRecordsPos;
  int64_t max_timestamp = kNoTimestamp;
  RecordFields fields;
  for (int32_t i = 0; i < header.records_count; ++i) {
    const size_t start = pos;
    KSIM_RETURN_IF_ERROR(
        ParseRecord(batch, &pos, i, &fields, [](size_t, int32_t, size_t, int32_t) {}));
    if (fields.offset_delta != i) {
      return Error(Errc::kCorruption,
                   "record %d (starting at byte %zu): offset delta %d, expected %d", i, start,
                   fields.offset_delta, i);
    }
    const int64_t timestamp = WrappingAdd(header.base_timestamp, fields.timestamp_delta);
    if (i == 0 || timestamp > max_timestamp) max_timestamp = timestamp;
  }
  if (pos != batch.size()) {
    return Error(Errc::kCorruption,
                 "records count %d at byte %zu ends the records at byte %zu, but the batch has %zu",
                 header.records_count, kRecordsCountPos, pos, batch.size());
  }
  if (header.records_count > 0 && header.last_offset_delta != header.records_count - 1) {
    return Error(Errc::kCorruption, "last offset delta %d at byte %zu does not match %d records",
                 header.last_offset_delta, kLastOffsetDeltaPos, header.records_count);
  }
  if (header.records_count > 0 && !header.log_append_time() &&
      header.max_timestamp != max_timestamp) {
    return Error(Errc::kCorruption,
                 "max timestamp %lld at byte %zu is not the largest record timestamp %lld",
                 static_cast<long long>(header.max_timestamp), kMaxTimestampPos,
                 static_cast<long long>(max_timestamp));
  }
  return Status::Ok();
}

namespace {

// Walks the records of a whole uncompressed v2 batch: on_batch(header) once it is parsed, then
// for each record on_header(key_pos, key_length, value_pos, value_length) for each of its headers
// and on_record(view) for the record itself.
// `parsed`: the batch's header as ParseBatchHeader gave it, or null to parse it here.
template <class OnBatch, class OnRecord, class OnHeader>
Status WalkRecords(ByteView batch, const BatchHeader* parsed, OnBatch&& on_batch,
                   OnRecord&& on_record, OnHeader&& on_header) {
  BatchHeader parsed_here;
  if (parsed == nullptr) {
    KSIM_ASSIGN_OR_RETURN(parsed_here, ParseWholeBatch(batch));
    parsed = &parsed_here;
  }
  const BatchHeader& header = *parsed;
  KSIM_CHECK(header.size_in_bytes() == batch.size());
  KSIM_RETURN_IF_ERROR(CheckUncompressed(header));
  on_batch(header);
  size_t pos = kRecordsPos;
  int64_t previous_delta = -1;
  RecordFields fields;
  RecordView record;
  for (int32_t i = 0; i < header.records_count; ++i) {
    const size_t start = pos;
    KSIM_RETURN_IF_ERROR(ParseRecord(batch, &pos, i, &fields, on_header));
    // Offsets must rise within [0, lastOffsetDelta] (gaps are allowed, as after compaction).
    if (fields.offset_delta <= previous_delta || fields.offset_delta > header.last_offset_delta) {
      return Error(Errc::kCorruption,
                   "record %d (starting at byte %zu): offset delta %d outside (%lld, %d]", i, start,
                   fields.offset_delta, static_cast<long long>(previous_delta),
                   header.last_offset_delta);
    }
    previous_delta = fields.offset_delta;
    record.offset = header.base_offset + fields.offset_delta;
    // With log-append time every record carries the batch's maxTimestamp (DefaultRecord.readFrom).
    record.timestamp_ms = header.log_append_time()
                              ? header.max_timestamp
                              : WrappingAdd(header.base_timestamp, fields.timestamp_delta);
    record.key.reset();
    record.value.reset();
    if (fields.key_length >= 0) {
      record.key = batch.subspan(fields.key_pos, static_cast<size_t>(fields.key_length));
    }
    if (fields.value_length >= 0) {
      record.value = batch.subspan(fields.value_pos, static_cast<size_t>(fields.value_length));
    }
    on_record(std::as_const(record));
  }
  if (pos != batch.size()) {
    return Error(Errc::kCorruption,
                 "records count %d at byte %zu ends the records at byte %zu, but the batch has %zu",
                 header.records_count, kRecordsCountPos, pos, batch.size());
  }
  return Status::Ok();
}

std::optional<Bytes> CopyOf(const std::optional<ByteView>& bytes) {
  if (!bytes) return std::nullopt;
  return Bytes(bytes->begin(), bytes->end());
}

std::optional<ByteView> ViewOf(const std::optional<Bytes>& bytes) {
  if (!bytes) return std::nullopt;
  return ByteView(*bytes);
}

}  // namespace

Result<std::vector<Record>> DecodeRecords(ByteView batch) {
  if (IsLegacy(batch)) {
    KSIM_ASSIGN_OR_RETURN(Record record, DecodeLegacyMessage(batch));
    std::vector<Record> records;
    records.push_back(std::move(record));
    return records;
  }
  std::vector<Record> records;
  std::vector<RecordHeader> headers;  // the current record's, moved into it once it is parsed
  KSIM_RETURN_IF_ERROR(WalkRecords(
      batch, /*parsed=*/nullptr,
      // ParseBatchHeader bounded the count by the bytes present, so this cannot explode.
      [&](const BatchHeader& header) {
        records.reserve(static_cast<size_t>(header.records_count));
      },
      [&](const RecordView& view) {
        Record& record = records.emplace_back();
        record.offset = view.offset;
        record.timestamp_ms = view.timestamp_ms;
        record.key = CopyOf(view.key);
        record.value = CopyOf(view.value);
        record.headers = std::move(headers);
        headers.clear();
      },
      [&](size_t key_pos, int32_t key_length, size_t value_pos, int32_t value_length) {
        RecordHeader& h = headers.emplace_back();
        h.key.assign(reinterpret_cast<const char*>(batch.data() + key_pos),
                     static_cast<size_t>(key_length));
        if (value_length >= 0) {
          h.value.emplace(batch.begin() + static_cast<ptrdiff_t>(value_pos),
                          batch.begin() + static_cast<ptrdiff_t>(value_pos + value_length));
        }
      }));
  return records;
}

Status ForEachRecordOf(ByteView batch, const BatchHeader* parsed, void* context,
                       void (*visit)(void* context, const RecordView& record)) {
  if (IsLegacy(batch)) {
    KSIM_ASSIGN_OR_RETURN(const Record record, DecodeLegacyMessage(batch));
    visit(context,
          RecordView{record.offset, record.timestamp_ms, ViewOf(record.key), ViewOf(record.value)});
    return Status::Ok();
  }
  return WalkRecords(
      batch, parsed, [](const BatchHeader&) {},
      [&](const RecordView& record) { visit(context, record); },
      [](size_t, int32_t, size_t, int32_t) {});
}

namespace {

// A varint of verified bytes at batch[*pos]: one byte nearly always (a record's small fields).
int32_t VerifiedVarint(ByteView batch, size_t* pos) {
  if (*pos < batch.size() && batch[*pos] < 0x80) return varint::ZigZagDecode32(batch[(*pos)++]);
  int32_t value = 0;
  KSIM_CHECK_MSG(varint::GetVarint(batch, pos, &value) == varint::DecodeStatus::kOk,
                 "a verified batch holds a bad varint");
  return value;
}

int64_t VerifiedVarlong(ByteView batch, size_t* pos) {
  if (*pos < batch.size() && batch[*pos] < 0x80) return varint::ZigZagDecode64(batch[(*pos)++]);
  int64_t value = 0;
  KSIM_CHECK_MSG(varint::GetVarlong(batch, pos, &value) == varint::DecodeStatus::kOk,
                 "a verified batch holds a bad varlong");
  return value;
}

// The `length` bytes at batch[pos], nullopt for -1. REQUIRES (checked): they are in the batch.
std::optional<ByteView> VerifiedField(ByteView batch, size_t pos, int32_t length) {
  if (length < 0) return std::nullopt;
  KSIM_CHECK_MSG(static_cast<size_t>(length) <= batch.size() - pos,
                 "a verified batch holds a field past its end");
  return batch.subspan(pos, static_cast<size_t>(length));
}

}  // namespace

void ForEachVerifiedValueOf(ByteView batches, Offset first, Offset last, void* context,
                            void (*visit)(void* context, const std::optional<ByteView>& value)) {
  size_t at = 0;
  // A partial batch at the end (a fetch answer cut at its byte limit) is where the append
  // stopped too: so does this.
  while (batches.size() - at >= kLogOverhead) {
    const uint8_t* p = batches.data() + at;
    const auto length = static_cast<int32_t>(LoadBigEndian32(p + kBatchLengthPos));
    KSIM_CHECK_MSG(length >= 0, "a verified batch has a negative length");
    const size_t size = kLogOverhead + static_cast<size_t>(length);
    if (size > batches.size() - at) break;
    KSIM_CHECK_MSG(size > kMagicPos, "a verified batch ends before its magic");
    const ByteView batch = batches.subspan(at, size);
    at += size;
    const Offset base(static_cast<int64_t>(LoadBigEndian64(p + kBaseOffsetPos)));
    if (static_cast<int8_t>(p[kMagicPos]) != kMagicV2) {
      // A v0/v1 message: one record, decoded as every reader does (the old formats are rare).
      if (base < first || base > last) continue;
      Result<Record> record = DecodeLegacyMessage(batch);
      KSIM_CHECK_MSG(record.ok(), "a verified message does not decode");
      const std::optional<ByteView> value = ViewOf(record->value);  // a view into *record
      visit(context, value);
      continue;
    }
    KSIM_CHECK_MSG(size >= kBatchHeaderSize, "a verified batch cut short");
    const int32_t last_delta = static_cast<int32_t>(LoadBigEndian32(p + kLastOffsetDeltaPos));
    if (base + last_delta < first || base > last) continue;
    const int32_t count = static_cast<int32_t>(LoadBigEndian32(p + kRecordsCountPos));
    size_t pos = kRecordsPos;
    for (int32_t i = 0; i < count; ++i) {
      const int32_t length = VerifiedVarint(batch, &pos);
      KSIM_CHECK_MSG(length >= 0 && static_cast<size_t>(length) <= size - pos,
                     "a verified record runs past its batch");
      const size_t end = pos + static_cast<size_t>(length);
      ++pos;                               // attributes
      (void)VerifiedVarlong(batch, &pos);  // timestampDelta
      const Offset offset = base + VerifiedVarint(batch, &pos);
      const int32_t key_length = VerifiedVarint(batch, &pos);
      if (key_length > 0) pos += static_cast<size_t>(key_length);
      KSIM_CHECK_MSG(pos < end, "a verified record's key runs past the record");
      const int32_t value_length = VerifiedVarint(batch, &pos);
      if (offset >= first && offset <= last) {
        const std::optional<ByteView> value = VerifiedField(batch, pos, value_length);
        visit(context, value);
      }
      pos = end;  // past the value and the headers
    }
  }
}

void SetBaseOffset(MutableByteView batch, Offset base_offset) {
  KSIM_CHECK(batch.size() >= kLogOverhead);
  StoreBigEndian64(batch.data() + kBaseOffsetPos, static_cast<uint64_t>(base_offset.value()));
}

void SetPartitionLeaderEpoch(MutableByteView batch, LeaderEpoch epoch) {
  KSIM_CHECK(batch.size() >= kBatchHeaderSize);
  KSIM_CHECK(static_cast<int8_t>(batch[kMagicPos]) == kMagicV2);
  StoreBigEndian32(batch.data() + kLeaderEpochPos, static_cast<uint32_t>(epoch.value()));
}

std::optional<BatchIterator::Item> BatchIterator::Next() {
  if (!status_.ok() || truncated_) return std::nullopt;
  const size_t remaining = buffer_.size() - position_;
  if (remaining == 0) return std::nullopt;
  const uint8_t* p = buffer_.data() + position_;
  // As Kafka's log input streams do: the length field is judged as soon as it is there, the rest
  // only once the whole batch is.
  if (remaining < kLogOverhead) {
    truncated_ = true;
    return std::nullopt;
  }
  const auto batch_length = static_cast<int32_t>(LoadBigEndian32(p + kBatchLengthPos));
  const std::optional<int32_t> min_length =
      MinEntryLength(ByteView(p, std::min(remaining, kMagicPos + 1)));
  if (!min_length) {
    status_ = Error(Errc::kCorruption, "batch at position %zu: magic %d is not 0, 1 or %d",
                    position_, static_cast<int8_t>(p[kMagicPos]), kMagicV2);
    return std::nullopt;
  }
  if (batch_length < *min_length) {
    status_ =
        Error(Errc::kCorruption, "batch at position %zu: batch length %d is below the minimum %d",
              position_, batch_length, *min_length);
    return std::nullopt;
  }
  const size_t size = kLogOverhead + static_cast<size_t>(batch_length);
  if (remaining < size) {
    truncated_ = true;
    return std::nullopt;
  }
  const ByteView bytes = buffer_.subspan(position_, size);
  Result<BatchHeader> header = ParseBatchHeader(bytes);
  if (!header.ok()) {
    status_ = Error(Errc::kCorruption, "batch at position %zu: %s", position_,
                    header.status().message().c_str());
    return std::nullopt;
  }
  if (verify_) {
    const uint32_t computed = header->magic == kMagicV2
                                  ? ComputeCrc(bytes)
                                  : crc32::Value(bytes.subspan(kLegacyMagicOffset));
    if (computed != header->crc) {
      status_ = Error(Errc::kCorruption,
                      "batch at position %zu: CRC mismatch: stored 0x%08x, computed 0x%08x",
                      position_, header->crc, computed);
      return std::nullopt;
    }
  }
  Item item{*header, bytes, position_};
  position_ += size;
  return item;
}

}  // namespace ksim
