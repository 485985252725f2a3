// CRC-32C: known vectors against both implementations, chaining, and hardware == portable over
// random buffers at every alignment and length that exercises each code path (byte tail, word
// tail, one interleaved round, several rounds, rounds capped at the maximum stream length).
#include "core/base/crc32c.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace ksim::crc32c {
namespace {

using Extender = uint32_t (*)(uint32_t, ByteView);

std::vector<Extender> Implementations() {
  std::vector<Extender> result = {&ExtendPortable, &Extend};
  if (HardwareAvailable()) result.push_back(&ExtendHardware);
  return result;
}

// RFC 3720 (iSCSI), appendix B.4, and the catalogue check value for "123456789".
TEST(Crc32cTest, KnownVectorsFromRfc3720) {
  uint8_t buf[32];
  for (Extender extend : Implementations()) {
    std::fill(std::begin(buf), std::end(buf), 0x00);
    EXPECT_EQ(extend(0, ByteView(buf)), 0x8A9136AAu);
    std::fill(std::begin(buf), std::end(buf), 0xFF);
    EXPECT_EQ(extend(0, ByteView(buf)), 0x62A8AB43u);
    for (int i = 0; i < 32; ++i) buf[i] = static_cast<uint8_t>(i);
    EXPECT_EQ(extend(0, ByteView(buf)), 0x46DD794Eu);
    for (int i = 0; i < 32; ++i) buf[i] = static_cast<uint8_t>(31 - i);
    EXPECT_EQ(extend(0, ByteView(buf)), 0x113FDB5Cu);
    EXPECT_EQ(extend(0, AsBytes("123456789")), 0xE3069283u);
    EXPECT_EQ(extend(0, ByteView()), 0u);
  }
}

// RFC 3720 B.4's iSCSI read command PDU, 48 bytes.
TEST(Crc32cTest, IscsiReadCommandPdu) {
  const uint8_t pdu[48] = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                           0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
                           0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
                           0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  for (Extender extend : Implementations()) EXPECT_EQ(extend(0, ByteView(pdu)), 0xD9963A56u);
}

TEST(Crc32cTest, ExtendChainsLikeOneShot) {
  std::mt19937_64 rng(1);
  std::vector<uint8_t> data(100'000);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  const ByteView all(data);
  const uint32_t whole = Value(all);
  for (size_t split : {size_t{0}, size_t{1}, size_t{7}, size_t{23}, size_t{24}, size_t{4097},
                       size_t{12289}, size_t{50'000}, data.size()}) {
    for (Extender extend : Implementations()) {
      const uint32_t first = extend(0, all.first(split));
      EXPECT_EQ(extend(first, all.subspan(split)), whole) << "split at " << split;
    }
  }
}

TEST(Crc32cTest, HardwareMatchesPortableAtAllAlignmentsAndLengths) {
  if (!HardwareAvailable()) GTEST_SKIP() << "no SSE4.2 + PCLMULQDQ on this CPU";
  std::mt19937_64 rng(2);
  std::vector<uint8_t> data(300 + 16);
  for (int round = 0; round < 4; ++round) {
    for (auto& b : data) b = static_cast<uint8_t>(rng());
    const uint32_t seed = static_cast<uint32_t>(rng());
    for (size_t align = 0; align < 16; ++align) {
      for (size_t length = 0; length <= 300; ++length) {
        const ByteView view(data.data() + align, length);
        ASSERT_EQ(ExtendHardware(seed, view), ExtendPortable(seed, view))
            << "align " << align << " length " << length;
      }
    }
  }
}

// Lengths around the multi-round boundaries of the interleaved path (3 * 4096 bytes per round).
TEST(Crc32cTest, HardwareMatchesPortableOnLargeBuffers) {
  if (!HardwareAvailable()) GTEST_SKIP() << "no SSE4.2 + PCLMULQDQ on this CPU";
  std::mt19937_64 rng(3);
  std::vector<uint8_t> data(3 * 3 * 4096 + 100);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  for (size_t length :
       {size_t{12287}, size_t{12288}, size_t{12289}, size_t{12288 + 23}, size_t{12288 + 24},
        size_t{24575}, size_t{24576}, size_t{36863}, data.size() - 1, data.size()}) {
    for (size_t align : {size_t{0}, size_t{3}}) {
      const ByteView view(data.data() + align, std::min(length, data.size() - align));
      EXPECT_EQ(ExtendHardware(0x12345678, view), ExtendPortable(0x12345678, view))
          << "length " << length << " align " << align;
    }
  }
}

TEST(Crc32cTest, DetectsEverySingleBitFlip) {
  std::vector<uint8_t> data(64);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 37);
  const uint32_t good = Value(data);
  for (size_t bit = 0; bit < data.size() * 8; ++bit) {
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    EXPECT_NE(Value(data), good) << "bit " << bit;
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
  }
}

}  // namespace
}  // namespace ksim::crc32c
