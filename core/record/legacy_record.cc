// Message format v0/v1 codec. Byte layout: core/record/legacy_record.h and docs/formats.md.
#include "core/record/legacy_record.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/base/big_endian.h"
#include "core/base/check.h"
#include "core/base/crc32.h"

namespace ksim {
namespace {

// Field positions within an entry (Kafka 0.10's Message offsets plus the 12-byte log overhead).
constexpr size_t kOffsetPos = 0;
constexpr size_t kSizePos = 8;
constexpr size_t kAttributesPos = 17;
constexpr size_t kTimestampPos = 18;  // v1 only
constexpr size_t kKeyLengthPosV0 = 18;
constexpr size_t kKeyLengthPosV1 = 26;

constexpr uint8_t kCodecMask = 0x07;
constexpr uint8_t kTimestampTypeMask = 0x08;

size_t KeyLengthPos(int8_t magic) { return magic == kMagicV0 ? kKeyLengthPosV0 : kKeyLengthPosV1; }

Status Corrupt(const std::string& what) { return Status(Errc::kCorruption, what); }

// Reads an int32 length at `pos` and checks that the bytes it announces lie within `end`.
Status ReadSized(ByteView entry, const char* field, size_t pos, size_t end, int32_t* length,
                 size_t* data_pos) {
  if (end - pos < 4) {
    return Corrupt(std::string(field) + " length at byte " + std::to_string(pos) +
                   " runs past the end of the message");
  }
  *length = static_cast<int32_t>(LoadBigEndian32(entry.data() + pos));
  *data_pos = pos + 4;
  if (*length < -1 || (*length > 0 && static_cast<size_t>(*length) > end - *data_pos)) {
    return Corrupt(std::string(field) + " length " + std::to_string(*length) + " at byte " +
                   std::to_string(pos) + " is invalid for the " + std::to_string(end - *data_pos) +
                   " bytes left in the message");
  }
  return Status::Ok();
}

std::optional<Bytes> Slice(ByteView entry, int32_t length, size_t pos) {
  if (length < 0) return std::nullopt;
  const ByteView bytes = entry.subspan(pos, static_cast<size_t>(length));
  return Bytes(bytes.begin(), bytes.end());
}

Status CheckUncompressed(const BatchHeader& header) {
  if (header.compression() == 0) return Status::Ok();
  return Status(Errc::kUnsupported, "compressed message (codec " +
                                        std::to_string(header.compression()) +
                                        ") is not supported: ksim does not inflate wrappers");
}

size_t NullableSize(const std::optional<Bytes>& bytes) { return 4 + (bytes ? bytes->size() : 0); }

uint8_t* PutNullable(uint8_t* p, const std::optional<Bytes>& bytes) {
  if (!bytes) {
    StoreBigEndian32(p, static_cast<uint32_t>(-1));
    return p + 4;
  }
  StoreBigEndian32(p, static_cast<uint32_t>(bytes->size()));
  if (!bytes->empty()) std::memcpy(p + 4, bytes->data(), bytes->size());
  return p + 4 + bytes->size();
}

}  // namespace

int32_t MinLegacyMessageSize(int8_t magic) {
  KSIM_CHECK(magic == kMagicV0 || magic == kMagicV1);
  return magic == kMagicV0 ? kMessageOverheadV0 : kMessageOverheadV1;
}

uint32_t LegacyMessage::ComputedCrc(ByteView entry) const {
  return crc32::Value(entry.subspan(kLegacyMagicOffset));
}

Bytes EncodeMessageSet(int8_t magic, Offset base_offset, std::span<const RecordInput> records,
                       bool log_append_time) {
  KSIM_CHECK(magic == kMagicV0 || magic == kMagicV1);
  size_t total = 0;
  for (const RecordInput& record : records) {
    KSIM_CHECK_MSG(record.headers.empty(), "message format v0/v1 has no record headers");
    total += kLogOverhead + static_cast<size_t>(MinLegacyMessageSize(magic)) - 8 +
             NullableSize(record.key) + NullableSize(record.value);
  }
  Bytes out(total);
  uint8_t* p = out.data();
  Offset offset = base_offset;
  for (const RecordInput& record : records) {
    uint8_t* const start = p;
    const size_t size = static_cast<size_t>(MinLegacyMessageSize(magic)) - 8 +
                        NullableSize(record.key) + NullableSize(record.value);
    KSIM_CHECK_MSG(size <= static_cast<size_t>(std::numeric_limits<int32_t>::max()),
                   "message longer than INT32_MAX bytes");
    StoreBigEndian64(p + kOffsetPos, static_cast<uint64_t>(offset.value()));
    StoreBigEndian32(p + kSizePos, static_cast<uint32_t>(size));
    p[kLegacyMagicOffset] = static_cast<uint8_t>(magic);
    uint8_t attributes = 0;  // no compression
    if (magic == kMagicV1 && log_append_time) attributes |= kTimestampTypeMask;
    p[kAttributesPos] = attributes;
    if (magic == kMagicV1) {
      KSIM_CHECK_MSG(record.timestamp_ms >= kNoTimestamp, "negative record timestamp");
      StoreBigEndian64(p + kTimestampPos, static_cast<uint64_t>(record.timestamp_ms));
    }
    p = PutNullable(start + KeyLengthPos(magic), record.key);
    p = PutNullable(p, record.value);
    KSIM_CHECK(static_cast<size_t>(p - start) == kLogOverhead + size);
    // CRC-32 over magic..end, computed last (Kafka's Message constructor).
    const ByteView covered(start + kLegacyMagicOffset, kLogOverhead + size - kLegacyMagicOffset);
    StoreBigEndian32(start + kLegacyCrcOffset, crc32::Value(covered));
    offset = offset + 1;
  }
  KSIM_CHECK(p == out.data() + out.size());
  return out;
}

Result<BatchHeader> ParseLegacyHeader(ByteView bytes) {
  if (bytes.size() <= kLegacyMagicOffset) {
    return Corrupt("message header needs " + std::to_string(kLegacyMagicOffset + 1) +
                   " bytes, only " + std::to_string(bytes.size()) + " are there");
  }
  const uint8_t* p = bytes.data();
  BatchHeader h;
  h.magic = static_cast<int8_t>(p[kLegacyMagicOffset]);
  if (h.magic != kMagicV0 && h.magic != kMagicV1) {
    return Corrupt("magic " + std::to_string(h.magic) + " at byte " +
                   std::to_string(kLegacyMagicOffset) + " is not 0 or 1");
  }
  const int32_t min_size = MinLegacyMessageSize(h.magic);
  h.batch_length = static_cast<int32_t>(LoadBigEndian32(p + kSizePos));
  if (h.batch_length < min_size) {
    return Corrupt("message size " + std::to_string(h.batch_length) + " at byte " +
                   std::to_string(kSizePos) + " is below the minimum " + std::to_string(min_size) +
                   " of magic " + std::to_string(h.magic));
  }
  if (bytes.size() < kLogOverhead + static_cast<size_t>(min_size)) {
    return Corrupt("message header needs " + std::to_string(kLogOverhead + min_size) +
                   " bytes, only " + std::to_string(bytes.size()) + " are there");
  }
  h.base_offset = Offset(static_cast<int64_t>(LoadBigEndian64(p + kOffsetPos)));
  if (h.base_offset.value() < 0) {
    return Corrupt("offset " + std::to_string(h.base_offset.value()) + " at byte " +
                   std::to_string(kOffsetPos) + " is negative");
  }
  if (h.base_offset.value() == std::numeric_limits<int64_t>::max()) {
    // As the v2 header's check: a message must leave a next offset (its log end).
    return Corrupt("offset " + std::to_string(h.base_offset.value()) + " at byte " +
                   std::to_string(kOffsetPos) + " leaves no next offset");
  }
  h.crc = LoadBigEndian32(p + kLegacyCrcOffset);
  // Bits 4-7 are reserved in v0/v1 (and bit 3 too in v0): kept out of the header, whose
  // accessors read them as v2's transactional and control bits.
  const uint8_t attributes = p[kAttributesPos];
  h.attributes = static_cast<int16_t>(attributes & (h.magic == kMagicV0 ? kCodecMask : 0x0f));
  if (h.magic == kMagicV1) {
    h.base_timestamp = static_cast<int64_t>(LoadBigEndian64(p + kTimestampPos));
    h.max_timestamp = h.base_timestamp;
  }
  h.last_offset_delta = 0;
  h.records_count = 1;
  return h;
}

Result<LegacyMessage> ParseLegacyMessage(ByteView entry) {
  LegacyMessage message;
  KSIM_ASSIGN_OR_RETURN(message.header, ParseLegacyHeader(entry));
  const BatchHeader& h = message.header;
  if (h.size_in_bytes() != entry.size()) {
    return Corrupt("message size " + std::to_string(h.batch_length) + " at byte " +
                   std::to_string(kSizePos) + " means " + std::to_string(h.size_in_bytes()) +
                   " bytes in all, but the buffer holds " + std::to_string(entry.size()));
  }
  const size_t end = entry.size();
  KSIM_RETURN_IF_ERROR(
      ReadSized(entry, "key", KeyLengthPos(h.magic), end, &message.key_length, &message.key_pos));
  const size_t value_length_pos =
      message.key_pos + static_cast<size_t>(std::max(message.key_length, 0));
  KSIM_RETURN_IF_ERROR(
      ReadSized(entry, "value", value_length_pos, end, &message.value_length, &message.value_pos));
  const size_t fields_end =
      message.value_pos + static_cast<size_t>(std::max(message.value_length, 0));
  if (fields_end != end) {
    return Corrupt("message size " + std::to_string(h.batch_length) + " says " +
                   std::to_string(end) + " bytes but the fields end after " +
                   std::to_string(fields_end));
  }
  return message;
}

Status VerifyLegacyMessage(ByteView entry) {
  KSIM_ASSIGN_OR_RETURN(const LegacyMessage message, ParseLegacyMessage(entry));
  const uint32_t computed = message.ComputedCrc(entry);
  if (computed != message.header.crc) {
    char text[128];
    std::snprintf(text, sizeof text,
                  "CRC mismatch: stored 0x%08x at byte %zu, computed 0x%08x over bytes %zu..%zu",
                  message.header.crc, kLegacyCrcOffset, computed, kLegacyMagicOffset, entry.size());
    return Corrupt(text);
  }
  return CheckUncompressed(message.header);
}

Result<Record> DecodeLegacyMessage(ByteView entry) {
  KSIM_ASSIGN_OR_RETURN(const LegacyMessage message, ParseLegacyMessage(entry));
  KSIM_RETURN_IF_ERROR(CheckUncompressed(message.header));
  Record record;
  record.offset = message.header.base_offset;
  record.timestamp_ms = message.header.max_timestamp;
  record.key = Slice(entry, message.key_length, message.key_pos);
  record.value = Slice(entry, message.value_length, message.value_pos);
  return record;
}

// ---- The format seam --------------------------------------------------------------------------

Bytes EncodeRecords(int8_t magic, const BatchSpec& spec, std::span<const RecordInput> records) {
  if (magic == kMagicV2) return EncodeBatch(spec, records);
  KSIM_CHECK(spec.producer_id == kNoProducerId);
  KSIM_CHECK(!spec.transactional);
  KSIM_CHECK(!spec.control);
  return EncodeMessageSet(magic, spec.base_offset, records, spec.log_append_time);
}

namespace {

// LogValidator.validateBatch (0.11.0.0) and MemoryRecordsBuilder.appendWithOffset: what the old
// formats cannot hold.
Status CheckConvertible(const BatchHeader& header, const std::vector<Record>& records,
                        int8_t to_magic) {
  if (to_magic >= kMagicV2) return Status::Ok();
  const std::string magic = std::to_string(to_magic);
  if (header.transactional()) {
    return Status(Errc::kUnsupportedForMessageFormat,
                  "Transactional records cannot be used with magic version " + magic);
  }
  if (header.producer_id != kNoProducerId) {
    return Status(Errc::kUnsupportedForMessageFormat,
                  "Idempotent records cannot be used with magic version " + magic);
  }
  for (const Record& record : records) {
    if (!record.headers.empty()) {
      return Status(Errc::kUnsupportedForMessageFormat,
                    "Magic v" + magic + " does not support record headers");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::optional<Bytes>> ConvertBatches(ByteView batches, int8_t to_magic) {
  KSIM_CHECK(to_magic >= kMagicV0 && to_magic <= kMagicV2);
  bool same = true;
  BatchIterator scan(batches, /*verify_crc=*/false);
  while (std::optional<BatchIterator::Item> item = scan.Next())
    same &= item->header.magic == to_magic;
  if (same) return std::optional<Bytes>();

  Bytes out;
  BatchIterator iterator(batches, /*verify_crc=*/false);
  while (std::optional<BatchIterator::Item> item = iterator.Next()) {
    const std::string where = "batch at position " + std::to_string(item->position) + ": ";
    if (item->header.magic == to_magic) {
      out.insert(out.end(), item->bytes.begin(), item->bytes.end());
      continue;
    }
    if (Status valid = VerifyBatch(item->bytes); !valid.ok()) {
      return Status(valid.code(), where + valid.message());
    }
    KSIM_ASSIGN_OR_RETURN(std::vector<Record> records, DecodeRecords(item->bytes));
    KSIM_RETURN_IF_ERROR(CheckConvertible(item->header, records, to_magic));
    if (records.empty()) continue;
    std::vector<RecordInput> inputs;
    inputs.reserve(records.size());
    for (Record& record : records) {
      // v0 has no timestamps; converting up from v0 gives none either.
      const int64_t timestamp = to_magic == kMagicV0 ? kNoTimestamp : record.timestamp_ms;
      inputs.push_back(RecordInput{std::max(timestamp, kNoTimestamp), std::move(record.key),
                                   std::move(record.value), std::move(record.headers)});
    }
    BatchSpec spec;
    spec.base_offset = item->header.base_offset;
    spec.log_append_time = to_magic != kMagicV0 && item->header.log_append_time();
    if (to_magic == kMagicV2) {
      spec.producer_id = item->header.producer_id;
      spec.producer_epoch = item->header.producer_epoch;
      spec.base_sequence = item->header.base_sequence;
    }
    const Bytes converted = EncodeRecords(to_magic, spec, inputs);
    out.insert(out.end(), converted.begin(), converted.end());
  }
  // A damaged or partial tail is left to the append's own walk, which reports it.
  const ByteView rest = batches.subspan(iterator.position());
  out.insert(out.end(), rest.begin(), rest.end());
  return std::optional<Bytes>(std::move(out));
}

}  // namespace ksim
