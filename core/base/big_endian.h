// Big-endian (network order) loads and stores of fixed-width integers, as Kafka's wire and log
// formats use them. Pointers need no alignment; callers check bounds first (these functions do
// not know the buffer's size). Header-only, no state.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace ksim {

static_assert(std::endian::native == std::endian::little ||
              std::endian::native == std::endian::big);

inline uint16_t LoadBigEndian16(const uint8_t* p) {
  return static_cast<uint16_t>((uint16_t{p[0]} << 8) | uint16_t{p[1]});
}
inline uint32_t LoadBigEndian32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return std::endian::native == std::endian::little ? __builtin_bswap32(v) : v;
}
inline uint64_t LoadBigEndian64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return std::endian::native == std::endian::little ? __builtin_bswap64(v) : v;
}

inline void StoreBigEndian16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
inline void StoreBigEndian32(uint8_t* p, uint32_t v) {
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap32(v);
  std::memcpy(p, &v, sizeof(v));
}
inline void StoreBigEndian64(uint8_t* p, uint64_t v) {
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
  std::memcpy(p, &v, sizeof(v));
}

}  // namespace ksim
