// Seeded randomness for the simulated world (docs/DESIGN.md, determinism rules). One 64-bit seed
// per run; every component asks for its own Stream by a stable name, so adding a component never
// shifts another's draws. The generator (xoshiro256**, seeded by SplitMix64) and every
// distribution are written here with integer arithmetic only, so the same seed gives the same
// draws with any compiler and standard library (std:: distributions differ between them).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/random_source.h"

namespace ksim::sim {

// SplitMix64 step: used to expand seeds and to hash stream names into seeds.
uint64_t SplitMix64(uint64_t& state);
// FNV-1a of a name mixed through SplitMix64: a stable 64-bit id for a stream name.
uint64_t HashName(std::string_view name);

class Stream {
 public:
  explicit Stream(uint64_t seed);

  // Uniform over all 64-bit values.
  uint64_t Next();
  // Uniform integer in [low, high] (inclusive), unbiased (Lemire's multiply-and-reject).
  // REQUIRES: low <= high.
  int64_t UniformInt(int64_t low, int64_t high);
  // True with probability numerator/denominator. REQUIRES: 0 <= numerator <= denominator, 0 <
  // denominator.
  bool Bernoulli(uint64_t numerator, uint64_t denominator);
  // True with probability `parts_per_million` / 1e6 (how scenario probabilities are stored).
  bool ChancePpm(uint32_t parts_per_million) { return Bernoulli(parts_per_million, 1'000'000); }
  // Exponentially distributed integer with the given mean (>= 0), by inversion on a fixed-point
  // logarithm; no floating point. Used for inter-arrival times.
  int64_t Exponential(int64_t mean);

 private:
  uint64_t s_[4];
};

// The run's root of randomness: derives independent streams by name.
class Seeds {
 public:
  explicit Seeds(uint64_t seed) : seed_(seed) {}
  uint64_t seed() const { return seed_; }
  // A stream for the component called `name` ("network", "disk/broker-1", ...).
  Stream StreamFor(std::string_view name) const;

 private:
  uint64_t seed_;
};

// core's RandomSource seam over a seeded Stream: how the simulator hands its randomness to core
// code that Kafka makes random (replica assignment start, the random-isr election policy).
class StreamRandomSource final : public RandomSource {
 public:
  explicit StreamRandomSource(uint64_t seed) : stream_(seed) {}
  explicit StreamRandomSource(Stream stream) : stream_(stream) {}
  int32_t NextInt(int32_t bound) override;

 private:
  Stream stream_;
};

}  // namespace ksim::sim
