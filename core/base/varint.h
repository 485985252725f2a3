// Kafka's variable-length integers (org.apache.kafka.common.utils.ByteUtils): zigzag-encoded
// varint (int32, at most 5 bytes) and varlong (int64, at most 10 bytes), 7 bits per byte, least
// significant group first, high bit set on every byte but the last. Record batch v2 uses them for
// every field inside a record.
//
// Decoding follows ByteUtils exactly, including its leniency: the final byte's bits beyond the
// type's width are dropped (a 5-byte varint keeps 4 bits of its last byte, a 10-byte varlong 1),
// and only a continuation bit on the 5th (10th) byte is an error. Decoders never read past the
// view they are given; they report kTruncated or kOverlong instead. Stateless, thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/base/bytes.h"

namespace ksim::varint {

inline constexpr size_t kMaxVarintBytes = 5;
inline constexpr size_t kMaxVarlongBytes = 10;

inline constexpr uint32_t ZigZagEncode32(int32_t v) {
  return (static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31);
}
inline constexpr int32_t ZigZagDecode32(uint32_t v) {
  return static_cast<int32_t>((v >> 1) ^ (~(v & 1) + 1));
}
inline constexpr uint64_t ZigZagEncode64(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline constexpr int64_t ZigZagDecode64(uint64_t v) {
  return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
}

// Encoded sizes (ByteUtils.sizeOfVarint / sizeOfVarlong).
inline constexpr size_t VarintSize(int32_t value) {
  uint32_t v = ZigZagEncode32(value);
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}
inline constexpr size_t VarlongSize(int64_t value) {
  uint64_t v = ZigZagEncode64(value);
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Writes the encoding at `dst` and returns the byte after it.
// REQUIRES: dst has room for VarintSize(value) (VarlongSize(value)) bytes.
inline uint8_t* PutVarint(uint8_t* dst, int32_t value) {
  uint32_t v = ZigZagEncode32(value);
  while (v >= 0x80) {
    *dst++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *dst++ = static_cast<uint8_t>(v);
  return dst;
}
inline uint8_t* PutVarlong(uint8_t* dst, int64_t value) {
  uint64_t v = ZigZagEncode64(value);
  while (v >= 0x80) {
    *dst++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *dst++ = static_cast<uint8_t>(v);
  return dst;
}

// Appends the encoding to `out`.
void AppendVarint(Bytes* out, int32_t value);
void AppendVarlong(Bytes* out, int64_t value);

enum class DecodeStatus : uint8_t {
  kOk,
  kTruncated,  // the input ended before a byte without the continuation bit
  kOverlong,   // the 5th (varint) or 10th (varlong) byte still has the continuation bit
};

// Decodes the value starting at in[*pos]; on kOk stores it in *value and advances *pos past it.
// On failure *pos and *value are unchanged.
DecodeStatus GetVarint(ByteView in, size_t* pos, int32_t* value);
DecodeStatus GetVarlong(ByteView in, size_t* pos, int64_t* value);

}  // namespace ksim::varint
