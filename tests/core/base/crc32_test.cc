// CRC-32 (IEEE): the catalogue check value, known vectors that java.util.zip.CRC32 gives, and
// chaining.
#include "core/base/crc32.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace ksim::crc32 {
namespace {

TEST(Crc32Test, KnownVectors) {
  // The CRC catalogue's check value of CRC-32/ISO-HDLC, and "The quick brown fox..." (zlib).
  EXPECT_EQ(Value(AsBytes("123456789")), 0xCBF43926u);
  EXPECT_EQ(Value(AsBytes("The quick brown fox jumps over the lazy dog")), 0x414FA339u);
  EXPECT_EQ(Value(ByteView()), 0u);
  // Not CRC-32C: the same input gives a different checksum (CRC-32C of "123456789" is E3069283).
  EXPECT_NE(Value(AsBytes("123456789")), 0xE3069283u);
}

TEST(Crc32Test, ExtendChainsOverSplits) {
  const ByteView whole = AsBytes("The quick brown fox jumps over the lazy dog");
  for (size_t split = 0; split <= whole.size(); ++split) {
    EXPECT_EQ(Extend(Value(whole.first(split)), whole.subspan(split)), Value(whole)) << split;
  }
}

}  // namespace
}  // namespace ksim::crc32
