// Message format v0/v1 (magic 0/1): a message set built byte by byte from the protocol guide's
// description (tests/support/core/legacy_message_set.h) read by every reader;
// the encoder checked against those bytes; damage reported; format conversion on append
// (Kafka's LogValidator) and its refusals.
#include "core/record/legacy_record.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/big_endian.h"
#include "core/base/crc32.h"
#include "core/record/record_batch.h"
#include "tests/support/core/legacy_message_set.h"

namespace ksim {
namespace {

using ::testing::HasSubstr;

using testing::HandBuiltV0;
using testing::HandBuiltV1;
using testing::kCrcOfV0Message;
using testing::kCrcOfV1Message;
constexpr int64_t kTimestamp = testing::kHandBuiltTimestamp;

Bytes HandBuiltSet() { return testing::HandBuiltMessageSet(); }

std::optional<Bytes> Text(const std::string& text) { return Bytes(text.begin(), text.end()); }

TEST(LegacyRecordTest, HandBuiltMessageSetReadsAsTwoBatchesOfOneRecord) {
  const Bytes set = HandBuiltSet();
  BatchIterator it(set);  // CRC-32 checked
  auto first = it.Next();
  ASSERT_TRUE(first.has_value()) << it.status().ToString();
  EXPECT_EQ(first->header.magic, 1);
  EXPECT_EQ(first->header.base_offset, Offset(0));
  EXPECT_EQ(first->header.last_offset(), Offset(0));
  EXPECT_EQ(first->header.records_count, 1);
  EXPECT_EQ(first->header.max_timestamp, kTimestamp);
  EXPECT_EQ(first->header.crc, kCrcOfV1Message);
  EXPECT_EQ(first->header.producer_id, kNoProducerId);
  EXPECT_EQ(first->header.partition_leader_epoch, kNoPartitionLeaderEpoch);
  EXPECT_EQ(first->bytes.size(), 42u);
  auto second = it.Next();
  ASSERT_TRUE(second.has_value()) << it.status().ToString();
  EXPECT_EQ(second->header.magic, 0);
  EXPECT_EQ(second->position, 42u);
  EXPECT_EQ(second->header.base_offset, Offset(1));
  EXPECT_EQ(second->header.max_timestamp, kNoTimestamp);  // v0 has no timestamp
  EXPECT_EQ(second->header.crc, kCrcOfV0Message);
  EXPECT_FALSE(it.Next().has_value());
  EXPECT_TRUE(it.status().ok());
  EXPECT_FALSE(it.truncated());

  EXPECT_TRUE(VerifyBatch(first->bytes).ok());
  EXPECT_TRUE(VerifyBatch(second->bytes).ok());
  auto records = DecodeRecords(first->bytes);
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].offset, Offset(0));
  EXPECT_EQ((*records)[0].timestamp_ms, kTimestamp);
  EXPECT_EQ((*records)[0].key, Text("key"));
  EXPECT_EQ((*records)[0].value, Text("hello"));
  records = DecodeRecords(second->bytes);
  ASSERT_TRUE(records.ok());
  EXPECT_EQ((*records)[0].offset, Offset(1));
  EXPECT_EQ((*records)[0].timestamp_ms, kNoTimestamp);
  EXPECT_FALSE((*records)[0].key.has_value());
  EXPECT_EQ((*records)[0].value, Text("world"));
}

TEST(LegacyRecordTest, ChecksumIsCrc32NotCrc32c) {
  const Bytes v1 = HandBuiltV1();
  EXPECT_EQ(crc32::Value(ByteView(v1).subspan(kLegacyMagicOffset)), kCrcOfV1Message);
}

TEST(LegacyRecordTest, EncoderWritesTheBytesOfTheProtocolGuide) {
  RecordInput with_key{kTimestamp, Text("key"), Text("hello"), {}};
  EXPECT_EQ(EncodeMessageSet(kMagicV1, Offset(0), {&with_key, 1}), HandBuiltV1());
  RecordInput null_key{kTimestamp, std::nullopt, Text("world"), {}};  // v0 drops the timestamp
  EXPECT_EQ(EncodeMessageSet(kMagicV0, Offset(1), {&null_key, 1}), HandBuiltV0());
  // EncodeRecords, the seam the log's format picks from, gives the same.
  BatchSpec spec;
  spec.base_offset = Offset(0);
  EXPECT_EQ(EncodeRecords(kMagicV1, spec, {&with_key, 1}), HandBuiltV1());
}

TEST(LegacyRecordTest, CrcMismatchIsDetected) {
  Bytes set = HandBuiltSet();
  set[40] ^= 0x01;  // a byte of "hello"
  const Status verified = VerifyBatch(ByteView(set).first(42));
  EXPECT_EQ(verified.code(), Errc::kCorruption);
  EXPECT_THAT(verified.message(), HasSubstr("CRC mismatch: stored 0x1891ff5f at byte 12"));
  BatchIterator it(set);
  EXPECT_FALSE(it.Next().has_value());
  EXPECT_THAT(it.status().message(), HasSubstr("batch at position 0: CRC mismatch"));
  // Without CRC checks the walk goes on (the damaged value still parses).
  BatchIterator unchecked(set, /*verify_crc=*/false);
  EXPECT_TRUE(unchecked.Next().has_value());
  EXPECT_TRUE(unchecked.Next().has_value());
}

TEST(LegacyRecordTest, DamageNamesFieldAndPosition) {
  Bytes key_length = HandBuiltV1();
  key_length[29] = 40;  // key length 40 in a 30-byte message
  EXPECT_THAT(VerifyBatch(key_length).message(),
              HasSubstr("key length 40 at byte 26 is invalid for the 12 bytes left"));
  Bytes short_size = HandBuiltV1();
  short_size[11] = 21;  // below v1's minimum of 22
  EXPECT_THAT(VerifyBatch(short_size).message(),
              HasSubstr("message size 21 at byte 8 is below the minimum 22 of magic 1"));
  Bytes overlong = HandBuiltV0();
  overlong[11] = 20;  // one byte more than the fields
  overlong.push_back(0);
  EXPECT_THAT(VerifyBatch(overlong).message(),
              HasSubstr("says 32 bytes but the fields end after 31"));
  // The largest offset leaves no log end after it (found by legacy_record_fuzzer: re-encoding
  // such a message overflowed): refused, as the v2 header refuses a last offset that overflows.
  Bytes last_offset = HandBuiltV1();
  StoreBigEndian64(last_offset.data(), static_cast<uint64_t>(INT64_MAX));
  EXPECT_THAT(VerifyBatch(last_offset).message(),
              HasSubstr("offset 9223372036854775807 at byte 0 leaves no next offset"));
  // A torn entry ends a walk as truncated, not as damage.
  const Bytes set = HandBuiltSet();
  BatchIterator torn(ByteView(set).first(50));
  EXPECT_TRUE(torn.Next().has_value());
  EXPECT_FALSE(torn.Next().has_value());
  EXPECT_TRUE(torn.truncated());
  EXPECT_TRUE(torn.status().ok());
  EXPECT_EQ(torn.position(), 42u);
}

// Re-stamps the CRC-32 of an entry after editing it.
void Restamp(Bytes& entry) {
  StoreBigEndian32(entry.data() + kLegacyCrcOffset,
                   crc32::Value(ByteView(entry).subspan(kLegacyMagicOffset)));
}

TEST(LegacyRecordTest, CompressedWrapperIsParsedButNotInflated) {
  Bytes wrapper = HandBuiltV1();
  wrapper[17] = 1;  // gzip
  Restamp(wrapper);
  auto header = ParseBatchHeader(wrapper);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->compression(), 1);
  EXPECT_EQ(VerifyBatch(wrapper).code(), Errc::kUnsupported);
  EXPECT_EQ(DecodeRecords(wrapper).status().code(), Errc::kUnsupported);
  BatchIterator it(wrapper);
  EXPECT_TRUE(it.Next().has_value());  // the walk itself needs no inflating
}

TEST(LegacyRecordTest, ReservedAttributeBitsDoNotReadAsTransactionalOrControl) {
  Bytes entry = HandBuiltV1();
  entry[17] = 0x30;
  Restamp(entry);
  auto header = ParseBatchHeader(entry);
  ASSERT_TRUE(header.ok());
  EXPECT_FALSE(header->transactional());
  EXPECT_FALSE(header->control());
  EXPECT_TRUE(VerifyBatch(entry).ok());
}

std::vector<RecordInput> TwoRecords() {
  return {RecordInput{kTimestamp, Text("a"), Text("first"), {}},
          RecordInput{kTimestamp + 5, std::nullopt, Text("second"), {}}};
}

std::vector<Record> Decoded(ByteView batches) {
  std::vector<Record> out;
  BatchIterator it(batches);
  while (auto item = it.Next()) {
    auto records = DecodeRecords(item->bytes);
    EXPECT_TRUE(records.ok()) << records.status().ToString();
    if (records.ok()) out.insert(out.end(), records->begin(), records->end());
  }
  EXPECT_TRUE(it.status().ok()) << it.status().ToString();
  return out;
}

TEST(LegacyRecordTest, ConvertsV2ToV1KeepingTimestampsAndToV0DroppingThem) {
  const std::vector<RecordInput> inputs = TwoRecords();
  BatchSpec spec;
  spec.base_offset = Offset(7);
  const Bytes v2 = EncodeBatch(spec, inputs);
  auto same = ConvertBatches(v2, kMagicV2);
  ASSERT_TRUE(same.ok());
  EXPECT_FALSE(same->has_value());  // nothing to do

  for (int8_t magic : {kMagicV1, kMagicV0}) {
    auto converted = ConvertBatches(v2, magic);
    ASSERT_TRUE(converted.ok()) << converted.status().ToString();
    ASSERT_TRUE(converted->has_value());
    const std::vector<Record> records = Decoded(**converted);
    ASSERT_EQ(records.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(records[i].offset, Offset(7 + static_cast<int64_t>(i)));
      EXPECT_EQ(records[i].key, inputs[i].key);
      EXPECT_EQ(records[i].value, inputs[i].value);
      EXPECT_EQ(records[i].timestamp_ms, magic == kMagicV1 ? inputs[i].timestamp_ms : -1);
    }
    // And back up to v2: the same records, one batch per message.
    auto up = ConvertBatches(**converted, kMagicV2);
    ASSERT_TRUE(up.ok() && up->has_value());
    EXPECT_EQ(Decoded(**up).size(), 2u);
  }
}

TEST(LegacyRecordTest, IdempotentTransactionalAndHeaderRecordsAreRefusedForOldFormats) {
  std::vector<RecordInput> inputs = TwoRecords();
  BatchSpec idempotent;
  idempotent.producer_id = ProducerId(4);
  idempotent.producer_epoch = ProducerEpoch(0);
  idempotent.base_sequence = Sequence(0);
  auto refused = ConvertBatches(EncodeBatch(idempotent, inputs), kMagicV1);
  EXPECT_EQ(refused.status().code(), Errc::kUnsupportedForMessageFormat);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("Idempotent records cannot be used with magic version 1"));
  BatchSpec transactional = idempotent;
  transactional.transactional = true;
  refused = ConvertBatches(EncodeBatch(transactional, inputs), kMagicV0);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("Transactional records cannot be used with magic version 0"));
  inputs[1].headers.push_back(RecordHeader{"h", Text("v")});
  refused = ConvertBatches(EncodeBatch(BatchSpec{}, inputs), kMagicV1);
  EXPECT_EQ(refused.status().code(), Errc::kUnsupportedForMessageFormat);
  EXPECT_THAT(refused.status().message(), HasSubstr("Magic v1 does not support record headers"));
}

TEST(LegacyRecordTest, DamagedInputIsReportedNotConverted) {
  BatchSpec spec;
  Bytes v2 = EncodeBatch(spec, TwoRecords());
  v2.back() ^= 0xff;  // the CRC no longer matches
  auto converted = ConvertBatches(v2, kMagicV1);
  EXPECT_EQ(converted.status().code(), Errc::kCorruption);
  EXPECT_THAT(converted.status().message(), HasSubstr("batch at position 0: CRC mismatch"));
}

}  // namespace
}  // namespace ksim
