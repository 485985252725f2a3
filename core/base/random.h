// The deterministic random generator (docs/DESIGN.md, determinism rules): xoshiro256** seeded by
// SplitMix64, and every distribution, written with integer arithmetic only, so that one seed gives
// the same draws with any compiler and standard library (std:: distributions differ between
// them). core/ draws through the RandomSource seam (core/base/random_source.h); StreamRandomSource
// is that seam over a RandomStream. The simulator derives one stream per component from the run's
// seed (sim/kernel/random.h); a real broker would seed one from the operating system. Tests seed
// their own for property tests.
//
// Not thread-safe: each owner draws from its stream on one thread.
#pragma once

#include <cstdint>

#include "core/base/random_source.h"

namespace ksim {

// SplitMix64 step: used to expand seeds and to hash names into seeds.
uint64_t SplitMix64(uint64_t& state);

class RandomStream {
 public:
  explicit RandomStream(uint64_t seed);

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

// core's RandomSource seam over a RandomStream: how core code that Kafka makes random (replica
// assignment start, the random-isr election policy) gets its numbers.
class StreamRandomSource final : public RandomSource {
 public:
  explicit StreamRandomSource(uint64_t seed) : stream_(seed) {}
  explicit StreamRandomSource(RandomStream stream) : stream_(stream) {}
  int32_t NextInt(int32_t bound) override;

 private:
  RandomStream stream_;
};

}  // namespace ksim
