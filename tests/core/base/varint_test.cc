// Kafka's zigzag varints: the encodings Kafka's ByteUtilsTest pins, round trips, and how the
// decoders treat truncated, overlong and non-canonical input (as ByteUtils does).
#include "core/base/varint.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace ksim::varint {
namespace {

Bytes EncodeVarint(int32_t v) {
  Bytes out;
  AppendVarint(&out, v);
  return out;
}
Bytes EncodeVarlong(int64_t v) {
  Bytes out;
  AppendVarlong(&out, v);
  return out;
}

void ExpectVarint(int32_t value, const Bytes& encoding) {
  EXPECT_EQ(EncodeVarint(value), encoding) << value;
  EXPECT_EQ(VarintSize(value), encoding.size()) << value;
  size_t pos = 0;
  int32_t decoded = 0;
  ASSERT_EQ(GetVarint(encoding, &pos, &decoded), DecodeStatus::kOk) << value;
  EXPECT_EQ(decoded, value);
  EXPECT_EQ(pos, encoding.size());
}

void ExpectVarlong(int64_t value, const Bytes& encoding) {
  EXPECT_EQ(EncodeVarlong(value), encoding) << value;
  EXPECT_EQ(VarlongSize(value), encoding.size()) << value;
  size_t pos = 0;
  int64_t decoded = 0;
  ASSERT_EQ(GetVarlong(encoding, &pos, &decoded), DecodeStatus::kOk) << value;
  EXPECT_EQ(decoded, value);
  EXPECT_EQ(pos, encoding.size());
}

// The boundary encodings of Kafka's ByteUtilsTest.testVarintSerde: each size class ends where
// the zigzag value needs one more group of 7 bits.
TEST(VarintTest, EncodingsAtEverySizeBoundary) {
  ExpectVarint(0, {0x00});
  ExpectVarint(-1, {0x01});
  ExpectVarint(1, {0x02});
  ExpectVarint(63, {0x7e});
  ExpectVarint(-64, {0x7f});
  ExpectVarint(64, {0x80, 0x01});
  ExpectVarint(-65, {0x81, 0x01});
  ExpectVarint(8191, {0xfe, 0x7f});
  ExpectVarint(-8192, {0xff, 0x7f});
  ExpectVarint(8192, {0x80, 0x80, 0x01});
  ExpectVarint(-8193, {0x81, 0x80, 0x01});
  ExpectVarint(1048575, {0xfe, 0xff, 0x7f});
  ExpectVarint(-1048576, {0xff, 0xff, 0x7f});
  ExpectVarint(1048576, {0x80, 0x80, 0x80, 0x01});
  ExpectVarint(-1048577, {0x81, 0x80, 0x80, 0x01});
  ExpectVarint(134217727, {0xfe, 0xff, 0xff, 0x7f});
  ExpectVarint(-134217728, {0xff, 0xff, 0xff, 0x7f});
  ExpectVarint(134217728, {0x80, 0x80, 0x80, 0x80, 0x01});
  ExpectVarint(-134217729, {0x81, 0x80, 0x80, 0x80, 0x01});
  ExpectVarint(std::numeric_limits<int32_t>::max(), {0xfe, 0xff, 0xff, 0xff, 0x0f});
  ExpectVarint(std::numeric_limits<int32_t>::min(), {0xff, 0xff, 0xff, 0xff, 0x0f});
}

TEST(VarintTest, VarlongEncodingsAtEverySizeBoundary) {
  ExpectVarlong(0, {0x00});
  ExpectVarlong(-1, {0x01});
  ExpectVarlong(1, {0x02});
  ExpectVarlong(63, {0x7e});
  ExpectVarlong(-64, {0x7f});
  ExpectVarlong(64, {0x80, 0x01});
  ExpectVarlong(-65, {0x81, 0x01});
  ExpectVarlong(8191, {0xfe, 0x7f});
  ExpectVarlong(8192, {0x80, 0x80, 0x01});
  ExpectVarlong(134217728, {0x80, 0x80, 0x80, 0x80, 0x01});
  ExpectVarlong(17179869183, {0xfe, 0xff, 0xff, 0xff, 0x7f});
  ExpectVarlong(-17179869184, {0xff, 0xff, 0xff, 0xff, 0x7f});
  ExpectVarlong(17179869184, {0x80, 0x80, 0x80, 0x80, 0x80, 0x01});
  ExpectVarlong(4611686018427387903, {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f});
  ExpectVarlong(4611686018427387904, {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01});
  ExpectVarlong(std::numeric_limits<int64_t>::max(),
                {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01});
  ExpectVarlong(std::numeric_limits<int64_t>::min(),
                {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01});
}

TEST(VarintTest, RandomValuesRoundTripBackToBack) {
  std::mt19937_64 rng(7);
  Bytes stream;
  std::vector<int64_t> values;
  for (int i = 0; i < 5000; ++i) {
    // Spread over every size class: shift a random value right by a random amount.
    const auto v = static_cast<int64_t>(rng()) >> (rng() % 64);
    values.push_back(v);
    AppendVarlong(&stream, v);
    AppendVarint(&stream, static_cast<int32_t>(v));
  }
  size_t pos = 0;
  for (int64_t v : values) {
    int64_t got_long = 0;
    int32_t got_int = 0;
    ASSERT_EQ(GetVarlong(stream, &pos, &got_long), DecodeStatus::kOk);
    ASSERT_EQ(GetVarint(stream, &pos, &got_int), DecodeStatus::kOk);
    EXPECT_EQ(got_long, v);
    EXPECT_EQ(got_int, static_cast<int32_t>(v));
  }
  EXPECT_EQ(pos, stream.size());
}

TEST(VarintTest, EveryTruncationIsReportedWithoutMoving) {
  const Bytes full_int = EncodeVarint(std::numeric_limits<int32_t>::min());
  const Bytes full_long = EncodeVarlong(std::numeric_limits<int64_t>::min());
  for (size_t n = 0; n < full_int.size(); ++n) {
    size_t pos = 0;
    int32_t value = 42;
    EXPECT_EQ(GetVarint(ByteView(full_int).first(n), &pos, &value), DecodeStatus::kTruncated);
    EXPECT_EQ(pos, 0u);
    EXPECT_EQ(value, 42);
  }
  for (size_t n = 0; n < full_long.size(); ++n) {
    size_t pos = 0;
    int64_t value = 42;
    EXPECT_EQ(GetVarlong(ByteView(full_long).first(n), &pos, &value), DecodeStatus::kTruncated);
    EXPECT_EQ(pos, 0u);
  }
}

// ByteUtilsTest.testInvalidVarint / testInvalidVarlong: a continuation bit on the 5th (10th) byte
// is an error even when more bytes follow.
TEST(VarintTest, ContinuationBitOnLastAllowedByteIsOverlong) {
  const Bytes int_bytes = {0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  size_t pos = 0;
  int32_t i = 0;
  EXPECT_EQ(GetVarint(int_bytes, &pos, &i), DecodeStatus::kOverlong);
  EXPECT_EQ(pos, 0u);
  // Exactly five bytes, the last with the continuation bit: overlong, not truncated.
  EXPECT_EQ(GetVarint(ByteView(int_bytes).first(5), &pos, &i), DecodeStatus::kOverlong);

  const Bytes long_bytes = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  int64_t l = 0;
  EXPECT_EQ(GetVarlong(long_bytes, &pos, &l), DecodeStatus::kOverlong);
  EXPECT_EQ(GetVarlong(ByteView(long_bytes).first(10), &pos, &l), DecodeStatus::kOverlong);
  EXPECT_EQ(pos, 0u);
}

// Like ByteUtils, the final byte is shifted in whole and bits past the width fall off; padding
// groups of zeros are accepted. (Kafka never writes such encodings; they decode as Java would.)
TEST(VarintTest, NonCanonicalEncodingsDecodeAsKafkaDoes) {
  size_t pos = 0;
  int32_t i = -5;
  const Bytes padded_zero = {0x80, 0x80, 0x00};
  EXPECT_EQ(GetVarint(padded_zero, &pos, &i), DecodeStatus::kOk);
  EXPECT_EQ(i, 0);
  EXPECT_EQ(pos, 3u);

  // 0x7f << 28 keeps only 0xf0000000 in 32 bits; zigzag-decoded that is 0x78000000.
  pos = 0;
  const Bytes wide_last = {0x80, 0x80, 0x80, 0x80, 0x7f};
  EXPECT_EQ(GetVarint(wide_last, &pos, &i), DecodeStatus::kOk);
  EXPECT_EQ(i, 0x78000000);

  // The 10th byte of a varlong contributes its lowest bit only.
  pos = 0;
  int64_t l = 0;
  const Bytes wide_long = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f};
  EXPECT_EQ(GetVarlong(wide_long, &pos, &l), DecodeStatus::kOk);
  EXPECT_EQ(l, std::numeric_limits<int64_t>::max() / 2 + 1);  // raw 1 << 63 zigzags to 2^62
}

TEST(VarintTest, DecodesFromTheGivenPosition) {
  Bytes bytes = {0xAA, 0xBB};
  AppendVarint(&bytes, -300);
  size_t pos = 2;
  int32_t value = 0;
  ASSERT_EQ(GetVarint(bytes, &pos, &value), DecodeStatus::kOk);
  EXPECT_EQ(value, -300);
  EXPECT_EQ(pos, bytes.size());
  EXPECT_EQ(GetVarint(bytes, &pos, &value), DecodeStatus::kTruncated);  // at the end
}

}  // namespace
}  // namespace ksim::varint
