// Determinism of a whole cluster run: the story (tests/support/sim/cluster_story.h: brokers,
// ZooKeeper, controller, a torn crash, a slow follower, a restart, a producer) twice with one seed
// gives byte-identical traces; another seed gives another trace (the seed reaches the run: network
// latencies, reconnect pauses, disk tearing).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tests/support/sim/cluster_story.h"

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

TEST(ClusterDeterminismTest, CheckingChangesNothingInTheRun) {
  // With zero disk latencies the checker's reads draw nothing: the same trace without it.
  StoryOutcome checked = RunStory(TraceWriter::HashOnly(Header("story", 10)), true);
  StoryOutcome unchecked = RunStory(TraceWriter::HashOnly(Header("story", 10)), false);
  EXPECT_EQ(checked.trace_hash, unchecked.trace_hash);
  EXPECT_EQ(checked.events, unchecked.events);
}

TEST(ClusterDeterminismTest, CheckingChangesNothingInTheRunWithDiskLatencies) {
  // With latencies every disk operation draws from the disk's stream; the checker reads inside
  // an inspection scope, which draws nothing.
  VirtualDiskOptions disk;
  disk.read_latency = {20, 200};
  disk.write_latency = {20, 200};
  disk.sync_latency = {1000, 5000};
  disk.metadata_latency = {5, 50};
  StoryOutcome checked = RunStory(TraceWriter::HashOnly(Header("story", 11)), true,
                                  TruncationPolicy::kLeaderEpoch, disk);
  StoryOutcome unchecked = RunStory(TraceWriter::HashOnly(Header("story", 11)), false,
                                    TruncationPolicy::kLeaderEpoch, disk);
  ASSERT_TRUE(checked.finished);
  EXPECT_EQ(checked.violations, 0);
  EXPECT_EQ(checked.trace_hash, unchecked.trace_hash);
  EXPECT_EQ(checked.events, unchecked.events);
}

TEST(ClusterDeterminismTest, HashOnlyTraceMatchesTheMemoryTrace) {
  StoryOutcome memory = RunStory(TraceWriter::ToMemory(Header("story", 9)));
  StoryOutcome hashed = RunStory(TraceWriter::HashOnly(Header("story", 9)));
  EXPECT_EQ(memory.trace_hash, hashed.trace_hash);
}

// The story's guarantees over many seeds (network timings, reconnect pauses, torn tails differ):
// it runs to the end, every acked record is in the final log, the checker finds nothing.
// KSIM_CLUSTER_SEEDS=<n> runs n seeds (default 8) from KSIM_CLUSTER_SEED (default 100).
TEST(ClusterDeterminismTest, StoryHoldsAcrossSeeds) {
  const char* seeds_env = std::getenv("KSIM_CLUSTER_SEEDS");
  const char* first_env = std::getenv("KSIM_CLUSTER_SEED");
  const uint64_t seeds = seeds_env != nullptr ? std::stoull(seeds_env) : 8;
  const uint64_t first = first_env != nullptr ? std::stoull(first_env) : 100;
  for (uint64_t seed = first; seed < first + seeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    StoryOutcome outcome = RunStory(TraceWriter::HashOnly(Header("story", seed)));
    EXPECT_TRUE(outcome.finished);
    EXPECT_EQ(outcome.lost_acked, 0);
    EXPECT_EQ(outcome.violations, 0);
    EXPECT_EQ(outcome.sent, 40);
  }
}

}  // namespace
}  // namespace ksim::sim::testing
