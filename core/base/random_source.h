// RandomSource: the seam through which core code that Kafka makes random (the start index and
// replica shift of a replica assignment, the `random-isr` election policy) draws its numbers.
// core/ never owns a generator: the simulator hands in an adapter over its seeded stream
// (sim/kernel/random.h), so that one seed still gives one history; a real broker would hand in a
// wrapper over any generator.
//
// Implementations need not be thread-safe: each owner uses its source from one thread.
#pragma once

#include <cstdint>

namespace ksim {

class RandomSource {
 public:
  virtual ~RandomSource() = default;
  // A uniformly drawn integer in [0, bound), like Java's Random.nextInt(bound).
  // REQUIRES: bound > 0.
  virtual int32_t NextInt(int32_t bound) = 0;
};

}  // namespace ksim
