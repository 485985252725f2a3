// Determinism of a whole cluster run: the story (tests/sim/cluster_story.h: brokers, ZooKeeper,
// controller, a torn crash, a slow follower, a restart, a producer) twice with one seed gives
// byte-identical traces; another seed gives another trace (the seed reaches the run: network
// latencies, reconnect pauses, disk tearing).
#include <gtest/gtest.h>

#include "tests/sim/cluster_story.h"

namespace ksim::sim::testing {
namespace {

TEST(ClusterDeterminismTest, SameSeedSameTraceBytesOtherSeedOtherTrace) {
  StoryOutcome first = RunStory(TraceWriter::ToMemory(Header("story", 7)));
  StoryOutcome second = RunStory(TraceWriter::ToMemory(Header("story", 7)));
  StoryOutcome other = RunStory(TraceWriter::ToMemory(Header("story", 8)));
  ASSERT_TRUE(first.finished);
  ASSERT_TRUE(second.finished);
  ASSERT_TRUE(other.finished);
  EXPECT_EQ(first.trace_hash, second.trace_hash);
  EXPECT_EQ(first.trace_lines, second.trace_lines);
  EXPECT_EQ(first.acked, second.acked);
  EXPECT_NE(first.trace_hash, other.trace_hash);
  EXPECT_GT(first.trace_lines, 100u);
}

TEST(ClusterDeterminismTest, HashOnlyTraceMatchesTheMemoryTrace) {
  StoryOutcome memory = RunStory(TraceWriter::ToMemory(Header("story", 9)));
  StoryOutcome hashed = RunStory(TraceWriter::HashOnly(Header("story", 9)));
  EXPECT_EQ(memory.trace_hash, hashed.trace_hash);
}

}  // namespace
}  // namespace ksim::sim::testing
