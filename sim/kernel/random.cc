#include "sim/kernel/random.h"

namespace ksim::sim {

uint64_t HashName(std::string_view name) {
  uint64_t hash = 0xCBF29CE484222325ULL;  // FNV-1a 64
  for (unsigned char c : name) {
    hash ^= c;
    hash *= 0x100000001B3ULL;
  }
  return SplitMix64(hash);
}

RandomStream Seeds::StreamFor(std::string_view name) const {
  uint64_t state = seed_ ^ HashName(name);
  return RandomStream(SplitMix64(state));
}

}  // namespace ksim::sim
