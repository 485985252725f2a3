#include "core/base/varint.h"

namespace ksim::varint {

void AppendVarint(Bytes* out, int32_t value) {
  uint8_t buffer[kMaxVarintBytes];
  uint8_t* end = PutVarint(buffer, value);
  out->insert(out->end(), buffer, end);
}

void AppendVarlong(Bytes* out, int64_t value) {
  uint8_t buffer[kMaxVarlongBytes];
  uint8_t* end = PutVarlong(buffer, value);
  out->insert(out->end(), buffer, end);
}

// Both decoders mirror ByteUtils.readVarint/readVarlong: accumulate 7 bits per byte while the
// continuation bit is set, fail once more than 4 (9) continuation bytes were seen, and shift the
// last byte in whole, letting bits beyond the width fall off as Java's int/long shifts do.
DecodeStatus GetVarint(ByteView in, size_t* pos, int32_t* value) {
  size_t p = *pos;
  const size_t size = in.size();
  uint32_t raw = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (p >= size) return DecodeStatus::kTruncated;
    const uint32_t b = in[p++];
    if ((b & 0x80) == 0) {
      raw |= b << shift;  // shift <= 28: high bits of a 5th byte are dropped, as in Java
      break;
    }
    if (shift == 28) return DecodeStatus::kOverlong;
    raw |= (b & 0x7f) << shift;
  }
  *pos = p;
  *value = ZigZagDecode32(raw);
  return DecodeStatus::kOk;
}

DecodeStatus GetVarlong(ByteView in, size_t* pos, int64_t* value) {
  size_t p = *pos;
  const size_t size = in.size();
  uint64_t raw = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (p >= size) return DecodeStatus::kTruncated;
    const uint64_t b = in[p++];
    if ((b & 0x80) == 0) {
      raw |= b << shift;  // shift <= 63
      break;
    }
    if (shift == 63) return DecodeStatus::kOverlong;
    raw |= (b & 0x7f) << shift;
  }
  *pos = p;
  *value = ZigZagDecode64(raw);
  return DecodeStatus::kOk;
}

}  // namespace ksim::varint
