// KIP-101's first scenario in a running cluster, and the invariant checker catching it. Topic t
// has one partition on brokers 1 (leader), 2 and 3. A record is acked with acks=all once broker
// 1's HW covers it; the followers learn that HW only with their next fetch. Right then broker 1
// shuts down (controlled: broker 2 takes over the leadership), so broker 3 becomes follower of a
// new leader; broker 2 crashes as soon as broker 3 follows it, before broker 3 fetched anything.
// Broker 3, in the ISR, is elected.
// - high-watermark truncation (Kafka 0.10): becoming follower, broker 3 cut its log to its own
//   HW, which was behind: the acked record is gone from the new leader. The checker reports
//   committed_records_stable.
// - leader-epoch truncation (KIP-101): broker 3 asks the leader where its epoch ends before
//   cutting anything; the leader dies first, so it keeps its log: nothing is lost.
// No broker restarts from its disk, so the loss is the truncation's alone.
#include <gtest/gtest.h>

#include "tests/support/sim/cluster_test_util.h"

namespace ksim::sim::testing {
namespace {

const TopicPartition kT0{"t", PartitionId(0)};
const BrokerId kB1(1);
const BrokerId kB2(2);
const BrokerId kB3(3);

struct Kip101Outcome {
  bool finished = false;
  std::vector<InvariantViolation> violations;
  std::vector<std::string> values;  // the new leader's log, read back
  int64_t acked = 0;
};

Kip101Outcome RunKip101(TruncationPolicy truncation, uint64_t seed) {
  Kip101Outcome outcome;
  ClusterOptions options;
  options.brokers = 3;
  options.election_policy = "clean";
  options.truncation = truncation;
  ClusterSim sim("kip-101-" + std::string(TruncationPolicyName(truncation)), seed, options);
  Cluster& cluster = sim.cluster();
  auto run = [&]() -> bool {
    if (!sim.Start()) return false;
    TopicSpec topic{"t", 1, 3, {{PartitionId(0), {kB1, kB2, kB3}}}, {}};
    if (!cluster.CreateTopicAndWait(topic).ok()) return false;
    auto isr_full = [&] {
      auto state = cluster.ZkPartitionState(kT0);
      return state && state->isr.size() == 3;
    };
    if (!cluster.RunUntil(isr_full, 30 * kSecondUs)) return false;
    auto& client = sim.AddClient("p1");
    if (!sim.ProduceAndWait(client, kT0, -1, 5)) return false;
    cluster.RunFor(10 * kSecondUs);  // everything settled
    // The record of the story: acked as soon as broker 1's HW covers it.
    client.Produce(kT0, -1, 1);
    if (!cluster.RunUntil([&] { return client.idle(); }, 30 * kSecondUs)) return false;
    outcome.acked = static_cast<int64_t>(client.Acked().size());
    const ksim::Partition* follower = cluster.broker(kB3)->GetPartition(kT0);
    if (follower == nullptr || follower->high_watermark() != Offset(5) ||
        follower->log_end_offset() != Offset(6)) {
      return false;
    }

    // Broker 1 hands its leadership over and stops; broker 2 dies as soon as broker 3 follows it.
    if (!cluster.ShutdownBroker(kB1).ok()) return false;
    bool crashed = false;
    cluster.AddStepHook([&] {
      if (crashed) return;
      const ksim::Partition* p = cluster.broker(kB3)->GetPartition(kT0);
      if (p->role() != ReplicaRole::kFollower || p->leader() != kB2) return;
      crashed = true;
      KSIM_CHECK(cluster.CrashBroker(kB2).ok());
    });
    if (!cluster.RunUntil([&] { return crashed && cluster.LeaderOf(kT0) == kB3; },
                          60 * kSecondUs)) {
      return false;
    }
    ksim::testing::FetchResult read = sim.ReadAll(client, kT0);
    if (read.error != Errc::kNone) return false;
    outcome.values = Values(read.records);
    return true;
  };
  outcome.finished = run();
  outcome.violations = cluster.checker()->violations();
  return outcome;
}

TEST(ClusterTruncationTest, HighWatermarkTruncationLosesAnAckedRecordAndTheCheckerSaysSo) {
  Kip101Outcome outcome = RunKip101(TruncationPolicy::kHighWatermark, 61);
  ASSERT_TRUE(outcome.finished);
  EXPECT_EQ(outcome.acked, 6);
  EXPECT_EQ(outcome.values, (std::vector<std::string>{"v-0", "v-1", "v-2", "v-3", "v-4"}))
      << "v-5 was acked with acks=all and is gone";
  ASSERT_EQ(outcome.violations.size(), 1u);
  EXPECT_EQ(outcome.violations[0].rule, "committed_records_stable");
  EXPECT_EQ(outcome.violations[0].tp, kT0);
  EXPECT_NE(outcome.violations[0].message.find("new leader broker 3"), std::string::npos)
      << outcome.violations[0].message;
}

TEST(ClusterTruncationTest, LeaderEpochTruncationKeepsIt) {
  Kip101Outcome outcome = RunKip101(TruncationPolicy::kLeaderEpoch, 61);
  ASSERT_TRUE(outcome.finished);
  EXPECT_EQ(outcome.acked, 6);
  EXPECT_EQ(outcome.values, (std::vector<std::string>{"v-0", "v-1", "v-2", "v-3", "v-4", "v-5"}));
  EXPECT_TRUE(outcome.violations.empty());
}

}  // namespace
}  // namespace ksim::sim::testing
