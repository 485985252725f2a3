#include "sim/random.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace ksim::sim {
namespace {

TEST(RandomTest, SameSeedSameDraws) {
  Stream a(42), b(42);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(a.Next(), b.Next());
}

TEST(RandomTest, KnownXoshiroOutputIsPortable) {
  // A change in the generator or its seeding shifts every simulation, so it must be deliberate.
  // SplitMix64(0)'s first output is the published reference value; xoshiro256** seeded from
  // SplitMix64(0) matches the reference implementation's (and rand_xoshiro's seed_from_u64(0)).
  uint64_t state = 0;
  EXPECT_EQ(SplitMix64(state), 0xE220A8397B1DCDAFULL);
  Stream s(0);
  EXPECT_EQ(s.Next(), 0x99EC5F36CB75F2B4ULL);
  EXPECT_EQ(s.Next(), 0xBF6E1F784956452AULL);
  EXPECT_EQ(s.Next(), 0x1A5F849D4933E6E0ULL);
}

TEST(RandomTest, StreamsByNameAreIndependentOfEachOther) {
  Seeds seeds(7);
  Stream disk1 = seeds.StreamFor("disk/broker-1");
  Stream net = seeds.StreamFor("network");
  Stream disk1_again = seeds.StreamFor("disk/broker-1");
  EXPECT_NE(disk1.Next(), net.Next());
  disk1_again.Next();  // catch up with the draw above
  EXPECT_EQ(disk1.Next(), disk1_again.Next());
  EXPECT_NE(Seeds(7).StreamFor("x").Next(), Seeds(8).StreamFor("x").Next());
}

TEST(RandomTest, UniformIntStaysInRangeAndCoversIt) {
  Stream s(1);
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
  Stream s(2);
  int hits = 0;
  for (int i = 0; i < 100000; ++i) hits += s.Bernoulli(1, 4);
  EXPECT_NEAR(hits, 25000, 800);
  EXPECT_FALSE(s.Bernoulli(0, 10));
  EXPECT_TRUE(s.Bernoulli(10, 10));
}

TEST(RandomTest, ExponentialHasTheRequestedMean) {
  Stream s(3);
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
}  // namespace ksim::sim
