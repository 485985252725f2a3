// The story run (tests/support/sim/cluster_story.h) written to a trace file and read back: the
// header, the events a user looks for (leader_elected, isr_shrink, isr_expand, crash, restart, the
// producer's acks) in time order, and the verdict line with the metrics. With KSIM_KEEP_TRACE=
// <path> the trace is also written there (docs/simulation.md, "Cluster").
#include "tests/support/sim/cluster_story.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "sim/kernel/trace.h"
#include "tests/support/core/temp_dir.h"

namespace ksim::sim::testing {
namespace {

constexpr uint64_t kSeed = 7;

TEST(ClusterStoryTest, TraceFileHoldsTheStoryAndItsVerdict) {
  ksim::testing::TempDir dir;
  const std::string path = dir.path() + "/story.jsonl";
  Result<TraceWriter> writer = TraceWriter::ToFile(path, Header("story", kSeed));
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  StoryOutcome outcome = RunStory(std::move(writer).value());
  ASSERT_TRUE(outcome.finished);
  ASSERT_TRUE(outcome.committed.ok()) << outcome.committed.ToString();
  EXPECT_EQ(outcome.sent, 40);
  EXPECT_EQ(outcome.lost_acked, 0);
  EXPECT_EQ(outcome.violations, 0);
  EXPECT_EQ(outcome.acked, 40) << "a patient producer gets every record acked";

  Result<Trace> read = ReadTraceFile(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  const Trace& trace = *read;
  EXPECT_EQ(trace.header.scenario, "story");
  EXPECT_EQ(trace.header.seed, kSeed);
  EXPECT_EQ(trace.events.size() + 2, outcome.trace_lines);
  EXPECT_TRUE(trace.ok());
  EXPECT_EQ(trace.verdict.fields["metrics"]["lost_acked"], 0);
  EXPECT_EQ(trace.verdict.fields["metrics"]["sent"], 40);

  auto crash = Events(trace, "crash", "broker-1");
  auto restart = Events(trace, "restart", "broker-1");
  ASSERT_EQ(crash.size(), 1u);
  ASSERT_EQ(restart.size(), 1u);
  EXPECT_TRUE(crash[0]->fields["tear"].get<bool>());
  EXPECT_EQ(restart[0]->fields["incarnation"], 2);
  EXPECT_LT(crash[0]->t_us, restart[0]->t_us);
  // Broker 2 is elected after the crash; broker 3 leaves the ISR and comes back; broker 1 rejoins.
  bool elected_after_crash = false;
  for (const TraceEvent* e : Events(trace, "leader_elected")) {
    if (e->t_us > crash[0]->t_us && e->fields["topic"] == "frbook" && e->fields["leader"] == 2) {
      elected_after_crash = true;
    }
  }
  EXPECT_TRUE(elected_after_crash);
  EXPECT_FALSE(Events(trace, "isr_shrink").empty());
  auto expands = Events(trace, "isr_expand");
  ASSERT_FALSE(expands.empty());
  EXPECT_GT(expands.back()->t_us, restart[0]->t_us);
  EXPECT_FALSE(Events(trace, "slow", "broker-3").empty());
  EXPECT_EQ(Events(trace, "ack", "p1").size(), static_cast<size_t>(outcome.acked));
  EXPECT_TRUE(Events(trace, "invariant_violation").empty());

  if (const char* keep = std::getenv("KSIM_KEEP_TRACE"); keep != nullptr && *keep != '\0') {
    Result<TraceWriter> kept = TraceWriter::ToFile(keep, Header("story", kSeed));
    ASSERT_TRUE(kept.ok()) << kept.status().ToString();
    StoryOutcome again = RunStory(std::move(kept).value());
    ASSERT_TRUE(again.committed.ok()) << again.committed.ToString();
    EXPECT_EQ(again.trace_hash, outcome.trace_hash) << "the kept trace is the same run";
    std::printf("story trace kept in %s (%llu lines)\n", keep,
                static_cast<unsigned long long>(again.trace_lines));
  }
}

}  // namespace
}  // namespace ksim::sim::testing
