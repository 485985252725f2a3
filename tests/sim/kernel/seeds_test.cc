// Seeds (sim/kernel/random.h): one stream per component, derived from the run's seed by name.
#include <gtest/gtest.h>

#include "sim/kernel/random.h"

namespace ksim::sim {
namespace {

TEST(SeedsTest, StreamsByNameAreIndependentOfEachOther) {
  Seeds seeds(7);
  RandomStream disk1 = seeds.StreamFor("disk/broker-1");
  RandomStream net = seeds.StreamFor("network");
  RandomStream disk1_again = seeds.StreamFor("disk/broker-1");
  EXPECT_NE(disk1.Next(), net.Next());
  disk1_again.Next();  // catch up with the draw above
  EXPECT_EQ(disk1.Next(), disk1_again.Next());
  EXPECT_NE(Seeds(7).StreamFor("x").Next(), Seeds(8).StreamFor("x").Next());
}

}  // namespace
}  // namespace ksim::sim
