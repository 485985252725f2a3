// Equality and a hash for short text (a topic name, a record id, a node name: the keys of most
// maps a run looks up), written out inline: std::string's == and std::hash call memcmp and
// std::_Hash_bytes, which cost more than a short name's bytes. Longer text goes to those.
// Header-only; pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string_view>

namespace ksim {

// a == b.
inline bool SameText(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  if (a.size() > 16) return std::memcmp(a.data(), b.data(), a.size()) == 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// A hash of `text` for hash tables (not stable across versions; never written anywhere, and the
// tables it keys are never walked in an order that shows). Up to 16 bytes: every byte read
// through two loads that may overlap, each mixed in with splitmix64's multipliers; longer:
// std::hash.
inline size_t HashText(std::string_view text) {
  const size_t n = text.size();
  const char* p = text.data();
  uint64_t a = 0;
  uint64_t b = 0;
  if (n > 16) return std::hash<std::string_view>{}(text);
  if (n >= 8) {
    std::memcpy(&a, p, 8);
    std::memcpy(&b, p + n - 8, 8);
  } else if (n >= 4) {
    uint32_t head, tail;
    std::memcpy(&head, p, 4);
    std::memcpy(&tail, p + n - 4, 4);
    a = head;
    b = tail;
  } else if (n > 0) {
    a = static_cast<uint8_t>(p[0]) | uint64_t{static_cast<uint8_t>(p[n / 2])} << 8 |
        uint64_t{static_cast<uint8_t>(p[n - 1])} << 16;
  }
  // `a` mixed before `b` joins it, so that no bit of one can cancel the same bit of the other
  // (the two loads overlap).
  uint64_t h = (a ^ 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 31;
  h = (h + b + n) * 0x94d049bb133111ebULL;
  h ^= h >> 29;
  h *= 0xd6e8feb86659fd93ULL;
  h ^= h >> 32;
  return static_cast<size_t>(h);
}

// HashText and SameText as a hash table's hash and key equality, transparent: a table keyed by
// std::string finds a std::string_view without a copy (std::unordered_map's heterogeneous find).
struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return HashText(text); }
};
struct TextEqual {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return SameText(a, b); }
};

}  // namespace ksim
