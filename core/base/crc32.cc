// CRC-32 (IEEE), byte-at-a-time over a table built at compile time. See core/base/crc32.h.
#include "core/base/crc32.h"

#include <array>

namespace ksim::crc32 {
namespace {

constexpr uint32_t kPolynomial = 0xEDB88320;  // IEEE 802.3, bit-reflected

constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) != 0 ? (crc >> 1) ^ kPolynomial : crc >> 1;
    table[i] = crc;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = MakeTable();

}  // namespace

uint32_t Extend(uint32_t crc, ByteView data) {
  uint32_t state = ~crc;
  for (uint8_t byte : data) state = kTable[(state ^ byte) & 0xff] ^ (state >> 8);
  return ~state;
}

}  // namespace ksim::crc32
