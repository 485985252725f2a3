// Kafka's message format v0 and v1 (magic 0 and 1): the "message sets" of Kafka 0.8 to 0.10
// (Kafka 0.10.0.1's kafka.message.Message and ByteBufferMessageSet; from 0.11 on
// org.apache.kafka.common.record.LegacyRecord). Layout of one entry (big endian; docs/formats.md):
//
//   offset: int64        the message's offset (of a compressed wrapper: its last inner offset)
//   messageSize: int32   bytes after this field
//   crc: uint32          CRC-32 (IEEE, not -C) of magic..end of the message
//   magic: int8          0 or 1
//   attributes: int8     bits 0-2 compression codec, bit 3 timestamp type (v1 only)
//   timestamp: int64     v1 only (ms since the epoch, -1: none)
//   keyLength: int32     -1 = null key
//   key
//   valueLength: int32   -1 = null value
//   value
//
// The first 12 bytes are the same "log overhead" as a record batch v2's, and the magic lies at
// byte 16 in both formats, which is how a reader tells them apart entry by entry (a log may hold
// both after a message.format.version upgrade). To the rest of ksim an entry is a batch of one
// record (BatchHeader: base offset = last offset = the entry's offset, no producer state, no
// partition leader epoch); the functions of core/record/record_batch.h dispatch here on the magic.
//
// Compression: ksim writes only uncompressed messages. A compressed wrapper message (a message
// whose value is a compressed message set) is parsed as an entry (its header and CRC), and
// verifying or decoding it is kUnsupported; ksim does not inflate gzip/snappy/lz4.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "core/base/bytes.h"
#include "core/base/status.h"
#include "core/base/types.h"
#include "core/record/record_batch.h"

namespace ksim {

inline constexpr int8_t kMagicV0 = 0;
inline constexpr int8_t kMagicV1 = 1;
// Positions within an entry (the log overhead included).
inline constexpr size_t kLegacyCrcOffset = 12;
inline constexpr size_t kLegacyMagicOffset = 16;  // CRC coverage starts here
// Smallest messageSize: crc, magic, attributes, [timestamp,] key length, value length (Kafka's
// Message.MinMessageOverhead is the v0 one, 14).
inline constexpr int32_t kMessageOverheadV0 = 14;
inline constexpr int32_t kMessageOverheadV1 = 22;

// The smallest messageSize of `magic` (0 or 1).
int32_t MinLegacyMessageSize(int8_t magic);

// One entry, parsed (no CRC check): the header as a batch of one record, and where key and value
// lie within the entry (-1 length: null).
struct LegacyMessage {
  BatchHeader header;
  int32_t key_length = -1;
  size_t key_pos = 0;
  int32_t value_length = -1;
  size_t value_pos = 0;

  // The CRC-32 the entry should carry.
  uint32_t ComputedCrc(ByteView entry) const;
};

// Encodes `records` as a message set of `magic` (0 or 1): one uncompressed message per record,
// offsets base_offset, base_offset + 1, ...; v1 carries each record's timestamp (create time, or
// log append time when `log_append_time`), v0 none. REQUIRES: magic is 0 or 1, no record has
// headers (v0/v1 have none), sizes fit Kafka's int32s.
Bytes EncodeMessageSet(int8_t magic, Offset base_offset, std::span<const RecordInput> records,
                       bool log_append_time = false);

// Parses the whole entry at the start of `entry` (exactly one entry: messageSize must account
// for every byte). kCorruption names the field and byte: a size below the magic's minimum or not
// matching the buffer, a magic other than 0/1, a negative offset, a key or value length that
// does not fill the message exactly. Does not check the CRC.
Result<LegacyMessage> ParseLegacyMessage(ByteView entry);

// The header alone, from the first bytes of an entry (at least 12 + MinLegacyMessageSize): what
// a reader needs to walk a log without reading whole entries.
Result<BatchHeader> ParseLegacyHeader(ByteView bytes);

// ParseLegacyMessage, then the CRC (kCorruption on mismatch) and compression (kUnsupported).
Status VerifyLegacyMessage(ByteView entry);

// The record of an uncompressed entry (no CRC check). kUnsupported when compressed.
Result<Record> DecodeLegacyMessage(ByteView entry);

// ---- The format seam: producers build records, the log's message.format.version picks the bytes

// Encodes `records` in the format of `magic`: a record batch v2 (EncodeBatch with `spec`) for 2,
// a message set (EncodeMessageSet from spec.base_offset, spec.log_append_time) for 0 and 1.
// REQUIRES: as EncodeBatch / EncodeMessageSet; for 0/1 also no producer id, not transactional,
// not a control batch.
Bytes EncodeRecords(int8_t magic, const BatchSpec& spec, std::span<const RecordInput> records);

// What a leader does to a producer's batches before appending them to a log whose format is
// `to_magic` (Kafka's LogValidator, 0.11.0.0, convertAndAssignOffsetsNonCompressed): nullopt when
// every batch already has that magic (appended as they are), else the batches re-encoded, record
// by record, in `to_magic` (offsets from each batch's base offset; the leader assigns the real
// ones). v2 -> v1 keeps timestamps, -> v0 drops them; v0 -> v1/v2 gives no timestamp.
// Refused, as LogValidator.validateBatch refuses them (UNSUPPORTED_FOR_MESSAGE_FORMAT): an
// idempotent or transactional batch for magic 0/1 ("Idempotent records cannot be used with magic
// version 1"), and record headers for magic 0/1 (Kafka's builder: "Magic v1 does not support
// record headers"). Damaged input: kCorruption / kUnsupported from VerifyBatch, with the
// batch's position.
Result<std::optional<Bytes>> ConvertBatches(ByteView batches, int8_t to_magic);

}  // namespace ksim
