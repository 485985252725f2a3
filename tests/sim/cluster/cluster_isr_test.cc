// The ISR's lag rule in a running cluster: a follower whose fetches arrive later than
// replica.lag.time.max.ms (10 s) behind leaves the ISR, as the partition's state znode in
// ZooKeeper shows, not before 10 s; acks=all writes go on with the smaller ISR; once the
// follower catches up it rejoins (its LEO reached the leader's HW). Both changes are the
// leader's (isr_shrink / isr_expand on broker-1), not the controller's: the slow broker stays
// registered throughout.
//
// SlowBroker slows every message of the node, its ZooKeeper pings too: with the default 6 s
// session the slow broker loses its session before the lag rule fires and the controller drops it
// from the ISR instead (the second test). The first test gives sessions 40 s (ZooKeeper's
// maximum, 20 ticks): the slow broker's pings still reach ZooKeeper within the session (its
// client may see its connection time out and reconnect, which ends nothing), and only
// replication lags. The delay is 15 s: with 12 s, fetches arriving every ~12 s can fall between
// the leader's ISR checks (every replica.lag.time.max.ms at 0.10.0, half of it from 0.10.2) so
// that it never sees a gap of more than 10 s.
#include <gtest/gtest.h>

#include "tests/support/sim/cluster_test_util.h"

namespace ksim::sim::testing {
namespace {

const TopicPartition kT0{"t", PartitionId(0)};
const BrokerId kB1(1);
const BrokerId kB2(2);
const BrokerId kB3(3);

bool IsrIs(Cluster& cluster, std::vector<BrokerId> isr) {
  auto state = cluster.ZkPartitionState(kT0);
  return state && state->isr == isr;
}

TEST(ClusterIsrTest, LaggingFollowerLeavesTheIsrAfterTenSecondsAndRejoins) {
  ClusterOptions options;
  options.brokers = 3;
  options.config = {{"zookeeper.session.timeout.ms", "40000"}};
  ClusterSim sim("isr-lag", 11, options);
  ASSERT_TRUE(sim.Start());
  Cluster& cluster = sim.cluster();
  TopicSpec topic{"t", 1, 3, {{PartitionId(0), {kB1, kB2, kB3}}}, {}};
  ASSERT_TRUE(cluster.CreateTopicAndWait(topic).ok());
  ASSERT_TRUE(cluster.RunUntil([&] { return IsrIs(cluster, {kB1, kB2, kB3}); }, 30 * kSecondUs));

  bool registration_lost = false;
  cluster.AddStepHook([&] {
    if (!cluster.zookeeper().Read("/brokers/ids/3")) registration_lost = true;
  });

  // The leader may wait up to 30 s for acks=all (the ISR shrinks within that), and the client
  // longer: no retry, so no duplicate.
  ksim::testing::ClusterClientOptions patient;
  patient.request_timeout_us = 40 * kSecondUs;
  patient.produce_timeout_ms = 30000;
  auto& client = sim.AddClient("p1", patient);
  ASSERT_TRUE(sim.ProduceAndWait(client, kT0, -1, 10));
  ASSERT_EQ(client.Acked().size(), 10u);

  // Broker 3's messages take 15 s longer for 30 s: its fetches reach the leader too late.
  const TimeUs slow_at_us = sim.world().Now();
  ASSERT_TRUE(cluster.SlowBroker(kB3, 15 * kSecondUs, 30 * kSecondUs).ok());
  client.Produce(kT0, -1, 5);  // waits for the ISR, then completes with {1, 2}
  ASSERT_TRUE(cluster.RunUntil([&] { return IsrIs(cluster, {kB1, kB2}); }, 30 * kSecondUs));
  const TimeUs shrunk_after_us = sim.world().Now() - slow_at_us;
  EXPECT_GE(shrunk_after_us, 10 * kSecondUs) << "not before replica.lag.time.max.ms";
  ASSERT_TRUE(cluster.RunUntil([&] { return client.idle(); }, 60 * kSecondUs));
  EXPECT_EQ(client.Acked().size(), 15u);

  // The slowness ends; broker 3 catches up and rejoins.
  ASSERT_TRUE(cluster.RunUntil([&] { return IsrIs(cluster, {kB1, kB2, kB3}); }, 90 * kSecondUs));
  ASSERT_TRUE(cluster.RunUntil(
      [&] {
        const ksim::Partition* leader = cluster.broker(kB1)->GetPartition(kT0);
        const ksim::Partition* p = cluster.broker(kB3)->GetPartition(kT0);
        return p != nullptr && p->log_end_offset() == leader->log_end_offset() &&
               p->log_end_offset() >= Offset(15);
      },
      30 * kSecondUs));
  ksim::testing::FetchResult read = sim.ReadAll(client, kT0);
  ASSERT_EQ(read.error, Errc::kNone);
  std::vector<std::string> expected;
  for (int i = 0; i < 15; ++i) expected.push_back("v-" + std::to_string(i));
  EXPECT_EQ(Values(read.records), expected) << "every acked record once, in order";
  EXPECT_FALSE(registration_lost) << "the ISR changed through the lag rule, not a lost session";
  EXPECT_EQ(cluster.LeaderOf(kT0), kB1);
  EXPECT_TRUE(sim.NoViolations());

  Trace trace = sim.FinishAndParse();
  auto shrinks = Events(trace, "isr_shrink", "broker-1");
  auto expands = Events(trace, "isr_expand", "broker-1");
  ASSERT_FALSE(shrinks.empty());
  ASSERT_FALSE(expands.empty());
  EXPECT_LT(shrinks.front()->t_us, expands.back()->t_us);
  EXPECT_FALSE(Events(trace, "slow", "broker-3").empty());
}

TEST(ClusterIsrTest, SlowBrokerWithShortSessionIsDroppedByTheController) {
  ClusterOptions options;
  options.brokers = 3;  // zookeeper.session.timeout.ms = 6000, Kafka's default
  ClusterSim sim("isr-slow-session", 15, options);
  ASSERT_TRUE(sim.Start());
  Cluster& cluster = sim.cluster();
  TopicSpec topic{"t", 1, 3, {{PartitionId(0), {kB1, kB2, kB3}}}, {}};
  ASSERT_TRUE(cluster.CreateTopicAndWait(topic).ok());
  ASSERT_TRUE(cluster.RunUntil([&] { return IsrIs(cluster, {kB1, kB2, kB3}); }, 30 * kSecondUs));
  // The seed makes another broker the controller: one that survives broker 3's session.
  ASSERT_NE(cluster.ActiveController(), kB3);

  const TimeUs slow_at_us = sim.world().Now();
  ASSERT_TRUE(cluster.SlowBroker(kB3, 15 * kSecondUs, 20 * kSecondUs).ok());
  ASSERT_TRUE(cluster.RunUntil([&] { return IsrIs(cluster, {kB1, kB2}); }, 30 * kSecondUs));
  EXPECT_LT(sim.world().Now() - slow_at_us, 10 * kSecondUs) << "the session ends first";
  EXPECT_FALSE(cluster.zookeeper().Read("/brokers/ids/3")) << "broker 3's session expired";
  // Once the slowness ends broker 3 registers again and rejoins.
  ASSERT_TRUE(cluster.RunUntil([&] { return IsrIs(cluster, {kB1, kB2, kB3}); }, 120 * kSecondUs));
  EXPECT_TRUE(sim.NoViolations());
  Trace trace = sim.FinishAndParse();
  EXPECT_FALSE(Events(trace, "broker_left").empty());
}

}  // namespace
}  // namespace ksim::sim::testing
