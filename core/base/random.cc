#include "core/base/random.h"

#include "core/base/check.h"

namespace ksim {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

RandomStream::RandomStream(uint64_t seed) {
  uint64_t state = seed;
  for (uint64_t& word : s_) word = SplitMix64(state);
}

static inline uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t RandomStream::Next() {  // xoshiro256** (Blackman & Vigna)
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

int64_t RandomStream::UniformInt(int64_t low, int64_t high) {
  KSIM_CHECK(low <= high);
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  if (range == UINT64_MAX) return static_cast<int64_t>(Next());
  const uint64_t bound = range + 1;
  // Lemire: multiply into 128 bits, reject the small biased region.
  unsigned __int128 product = static_cast<unsigned __int128>(Next()) * bound;
  uint64_t low_bits = static_cast<uint64_t>(product);
  if (low_bits < bound) {
    const uint64_t threshold = (0 - bound) % bound;
    while (low_bits < threshold) {
      product = static_cast<unsigned __int128>(Next()) * bound;
      low_bits = static_cast<uint64_t>(product);
    }
  }
  return static_cast<int64_t>(static_cast<uint64_t>(low) + static_cast<uint64_t>(product >> 64));
}

bool RandomStream::Bernoulli(uint64_t numerator, uint64_t denominator) {
  KSIM_CHECK(denominator > 0);
  KSIM_CHECK(numerator <= denominator);
  if (numerator == 0) return false;
  if (numerator == denominator) return true;
  return static_cast<uint64_t>(UniformInt(0, static_cast<int64_t>(denominator - 1))) < numerator;
}

// -ln(u) for u uniform in (0, 1], in 32.32 fixed point, from the top 32 bits of a draw:
// ln(2^32 / x) = (32 - log2(x)) * ln 2, with log2 computed bit by bit (integer only).
static uint64_t NegLogFixed(uint64_t x32) {  // x32 in [1, 2^32]
  // log2(x32) in 32.32 fixed point.
  int integer = 63 - __builtin_clzll(x32);
  uint64_t log2 = static_cast<uint64_t>(integer) << 32;
  // Normalise mantissa into [1, 2) with 62 fractional bits... use 1.31 to keep squares in 64 bits.
  uint64_t m = integer >= 31 ? (x32 >> (integer - 31)) : (x32 << (31 - integer));  // 1.31
  for (int bit = 31; bit >= 0; --bit) {
    m = (m * m) >> 31;  // square; stays < 2^33
    if (m >= (2ULL << 31)) {
      m >>= 1;
      log2 |= 1ULL << bit;
    }
  }
  const uint64_t neg_log2 = (32ULL << 32) - log2;  // log2(2^32 / x), 32.32
  constexpr uint64_t kLn2 = 2977044472ULL;         // ln(2) * 2^32
  return static_cast<uint64_t>((static_cast<unsigned __int128>(neg_log2) * kLn2) >> 32);
}

int64_t RandomStream::Exponential(int64_t mean) {
  KSIM_CHECK(mean >= 0);
  if (mean == 0) return 0;
  const uint64_t x = (Next() >> 32) + 1;    // uniform in [1, 2^32]
  const uint64_t neg_log = NegLogFixed(x);  // 32.32
  return static_cast<int64_t>(
      (static_cast<unsigned __int128>(neg_log) * static_cast<uint64_t>(mean)) >> 32);
}

int32_t StreamRandomSource::NextInt(int32_t bound) {
  KSIM_CHECK(bound > 0);
  return static_cast<int32_t>(stream_.UniformInt(0, bound - 1));
}

}  // namespace ksim
