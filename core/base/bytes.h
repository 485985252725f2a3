// Byte buffers. Record batches, segment contents and network payloads are plain bytes; a
// ByteView never owns, a Bytes always does.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ksim {

using Bytes = std::vector<uint8_t>;
using ByteView = std::span<const uint8_t>;
using MutableByteView = std::span<uint8_t>;

inline ByteView AsBytes(std::string_view s) {
  return ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}
inline std::string_view AsChars(ByteView b) {
  return std::string_view(reinterpret_cast<const char*>(b.data()), b.size());
}
inline Bytes ToBytes(std::string_view s) { return Bytes(s.begin(), s.end()); }

}  // namespace ksim
