// RandomStream (core/base/random.h): the generator and its distributions, portable and seeded.
#include "core/base/random.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace ksim {
namespace {

TEST(RandomTest, SameSeedSameDraws) {
  RandomStream a(42), b(42);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(a.Next(), b.Next());
}

TEST(RandomTest, KnownXoshiroOutputIsPortable) {
  // A change in the generator or its seeding shifts every simulation, so it must be deliberate.
  // SplitMix64(0)'s first output is the published reference value; xoshiro256** seeded from
  // SplitMix64(0) matches the reference implementation's (and rand_xoshiro's seed_from_u64(0)).
  uint64_t state = 0;
  EXPECT_EQ(SplitMix64(state), 0xE220A8397B1DCDAFULL);
  RandomStream s(0);
  EXPECT_EQ(s.Next(), 0x99EC5F36CB75F2B4ULL);
  EXPECT_EQ(s.Next(), 0xBF6E1F784956452AULL);
  EXPECT_EQ(s.Next(), 0x1A5F849D4933E6E0ULL);
}

TEST(RandomTest, UniformIntStaysInRangeAndCoversIt) {
  RandomStream s(1);
  std::map<int64_t, int> counts;
  for (int i = 0; i < 60000; ++i) {
    int64_t v = s.UniformInt(-3, 2);
    ASSERT_GE(v, -3);
    ASSERT_LE(v, 2);
    ++counts[v];
  }
  ASSERT_EQ(counts.size(), 6u);
  for (auto [value, count] : counts) EXPECT_NEAR(count, 10000, 600) << value;
  EXPECT_EQ(s.UniformInt(5, 5), 5);
}

TEST(RandomTest, BernoulliMatchesItsProbability) {
  RandomStream s(2);
  int hits = 0;
  for (int i = 0; i < 100000; ++i) hits += s.Bernoulli(1, 4);
  EXPECT_NEAR(hits, 25000, 800);
  EXPECT_FALSE(s.Bernoulli(0, 10));
  EXPECT_TRUE(s.Bernoulli(10, 10));
}

TEST(RandomTest, ExponentialHasTheRequestedMean) {
  RandomStream s(3);
  int64_t sum = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    int64_t v = s.Exponential(1000);
    ASSERT_GE(v, 0);
    sum += v;
  }
  EXPECT_NEAR(static_cast<double>(sum) / n, 1000.0, 15.0);
  EXPECT_EQ(s.Exponential(0), 0);
}

}  // namespace
}  // namespace ksim
