// A message set of Kafka's message format v0/v1 built byte by byte from the protocol guide's
// description (Kafka 0.10's "Messages (aka Records)": MessageSet => [Offset MessageSize Message],
// Message => Crc MagicByte Attributes [Timestamp] Key Value, the CRC-32 over MagicByte..end), not
// by ksim's encoder; the CRCs were computed outside ksim (Python's zlib.crc32). Shared by the
// codec test (tests/core/record/legacy_record_test.cc) and the storage test.
#pragma once

#include <cstdint>
#include <string>

#include "core/base/bytes.h"

namespace ksim::testing {

inline constexpr int64_t kHandBuiltTimestamp = 1480000000000;
inline constexpr uint32_t kCrcOfV1Message = 0x1891ff5f;
inline constexpr uint32_t kCrcOfV0Message = 0x8bc0cd77;
inline constexpr size_t kV1MessageBytes = 42;
inline constexpr size_t kV0MessageBytes = 31;

inline void Put8(Bytes& out, uint8_t v) { out.push_back(v); }
inline void Put32(Bytes& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(v >> shift));
}
inline void Put64(Bytes& out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(v >> shift));
}
inline void PutText(Bytes& out, const std::string& text) {
  out.insert(out.end(), text.begin(), text.end());
}

// Offset 0: magic 1, no compression, create time 1480000000000, key "key", value "hello".
inline Bytes HandBuiltV1() {
  Bytes m;
  Put64(m, 0);                // Offset
  Put32(m, 30);               // MessageSize: 4 crc + 1 magic + 1 attributes + 8 ts + 4+3 + 4+5
  Put32(m, kCrcOfV1Message);  // Crc
  Put8(m, 1);                 // MagicByte
  Put8(m, 0);                 // Attributes: codec 0, timestamp type 0 (create time)
  Put64(m, static_cast<uint64_t>(kHandBuiltTimestamp));  // Timestamp (v1 only)
  Put32(m, 3);                                           // Key length
  PutText(m, "key");
  Put32(m, 5);  // Value length
  PutText(m, "hello");
  return m;
}

// Offset 1: magic 0, null key, value "world".
inline Bytes HandBuiltV0() {
  Bytes m;
  Put64(m, 1);
  Put32(m, 19);  // 4 crc + 1 magic + 1 attributes + 4 (key -1) + 4+5
  Put32(m, kCrcOfV0Message);
  Put8(m, 0);
  Put8(m, 0);
  Put32(m, 0xffffffff);  // null key
  Put32(m, 5);
  PutText(m, "world");
  return m;
}

// Both, v1 at position 0 and v0 at position 42.
inline Bytes HandBuiltMessageSet() {
  Bytes set = HandBuiltV1();
  const Bytes v0 = HandBuiltV0();
  set.insert(set.end(), v0.begin(), v0.end());
  return set;
}

}  // namespace ksim::testing
