// Seeded randomness for the simulated world (docs/DESIGN.md, determinism rules). One 64-bit seed
// per run; every component asks for its own stream (core/base/random.h's RandomStream) by a
// stable name, so adding a component never shifts another's draws.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/base/random.h"

namespace ksim::sim {

// FNV-1a of a name mixed through SplitMix64: a stable 64-bit id for a stream name.
uint64_t HashName(std::string_view name);

// The run's root of randomness: derives independent streams by name.
class Seeds {
 public:
  explicit Seeds(uint64_t seed) : seed_(seed) {}
  uint64_t seed() const { return seed_; }
  // A stream for the component called `name` ("network", "disk/broker-1", ...).
  RandomStream StreamFor(std::string_view name) const;

 private:
  uint64_t seed_;
};

}  // namespace ksim::sim
