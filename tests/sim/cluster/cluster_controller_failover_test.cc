// Controller failover in a running cluster (Kafka's ControllerFailoverTest and
// ControllerIntegrationTest facts): when the active controller's broker dies or its ZooKeeper
// session expires, another broker creates /controller, /controller_epoch goes up by one, and the
// partitions the dead broker led get new leaders (with a higher leader epoch) that accept writes;
// the others keep the dead broker in their ISRs until their leaders drop it.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/base/trace_names.h"
#include "core/zk/paths.h"
#include "tests/support/sim/cluster_test_util.h"

namespace ksim::sim::testing {
namespace {

ControllerEpoch ZkControllerEpoch(Cluster& cluster) {
  auto data = cluster.zookeeper().Read(zk::kControllerEpochPath);
  if (!data) return ControllerEpoch(0);
  auto epoch = zk::DecodeControllerEpoch(data->data);
  return epoch.ok() ? *epoch : ControllerEpoch(0);
}

BrokerId ZkController(Cluster& cluster) {
  auto data = cluster.zookeeper().Read(zk::kControllerPath);
  if (!data) return kNoBroker;
  auto controller = zk::DecodeControllerRegistration(data->data);
  return controller.ok() ? controller->broker_id : kNoBroker;
}

std::vector<TopicPartition> Partitions(int32_t n) {
  std::vector<TopicPartition> out;
  for (int32_t p = 0; p < n; ++p) out.push_back({"t", PartitionId(p)});
  return out;
}

class ClusterControllerFailoverTest : public ::testing::TestWithParam<bool> {};

TEST_P(ClusterControllerFailoverTest, AnotherBrokerTakesOverAndReelectsLeaders) {
  const bool crash = GetParam();  // else: the controller's session expires
  ClusterOptions options;
  options.brokers = 3;
  options.truncation = TruncationPolicy::kLeaderEpoch;
  ClusterSim sim(crash ? "controller-crash" : "controller-expire", 21, options);
  ASSERT_TRUE(sim.Start());
  Cluster& cluster = sim.cluster();
  // Three partitions, one led by each broker.
  ASSERT_TRUE(cluster.CreateTopicAndWait(OnePartitionPreferringEachBroker("t")).ok());

  const BrokerId old_controller = cluster.ActiveController();
  ASSERT_NE(old_controller, kNoBroker);
  EXPECT_EQ(ZkController(cluster), old_controller);
  const ControllerEpoch old_epoch = ZkControllerEpoch(cluster);
  EXPECT_EQ(old_epoch, ControllerEpoch(1));
  const TopicPartition led{"t", PartitionId(old_controller.value() - 1)};
  ASSERT_EQ(cluster.LeaderOf(led), old_controller);
  const LeaderEpoch old_leader_epoch = cluster.ZkPartitionState(led)->leader_epoch;

  auto& client = sim.AddClient("p1");
  for (const TopicPartition& tp : Partitions(3)) ASSERT_TRUE(sim.ProduceAndWait(client, tp, -1, 3));
  ASSERT_EQ(client.Acked().size(), 9u);

  if (crash) {
    ASSERT_TRUE(cluster.CrashBroker(old_controller).ok());
  } else {
    ASSERT_TRUE(cluster.ExpireSession(old_controller).ok());
  }
  ASSERT_TRUE(cluster.RunUntil(
      [&] {
        const BrokerId now = cluster.ActiveController();
        return now != kNoBroker && now != old_controller &&
               cluster.LeaderOf(led) != old_controller && cluster.LeaderOf(led) != kNoBroker;
      },
      60 * kSecondUs));
  const BrokerId new_controller = cluster.ActiveController();
  EXPECT_EQ(ZkController(cluster), new_controller);
  EXPECT_EQ(ZkControllerEpoch(cluster), ControllerEpoch(old_epoch.value() + 1));
  auto state = cluster.ZkPartitionState(led);
  ASSERT_TRUE(state.has_value());
  EXPECT_NE(state->leader, old_controller);
  EXPECT_GT(state->leader_epoch, old_leader_epoch);

  if (crash) {
    // The new controller elects only where the leader died; the other partitions keep the dead
    // broker in their ISRs (Kafka's onControllerFailover), so acks=all writes to them wait until
    // their leaders drop it (replica.lag.time.max.ms; checked every 10 s at 0.10.0).
    for (const TopicPartition& tp : Partitions(3)) {
      if (tp == led) continue;
      const auto isr = cluster.ZkPartitionState(tp)->isr;
      EXPECT_NE(std::find(isr.begin(), isr.end(), old_controller), isr.end()) << tp;
    }
    ASSERT_TRUE(cluster.RunUntil(
        [&] {
          for (const TopicPartition& tp : Partitions(3)) {
            const auto isr = cluster.ZkPartitionState(tp)->isr;
            if (std::find(isr.begin(), isr.end(), old_controller) != isr.end()) return false;
          }
          return true;
        },
        60 * kSecondUs));
  }
  // Every partition takes writes, and keeps what it had. acks=all: an old leader that has not
  // heard of the election yet (after a session expiry it lives on until it re-registers) may
  // take acks=1 writes that its truncation later loses, as in Kafka.
  for (const TopicPartition& tp : Partitions(3)) {
    ASSERT_TRUE(sim.ProduceAndWait(client, tp, -1, 2));
    ksim::testing::FetchResult read = sim.ReadAll(client, tp);
    ASSERT_EQ(read.error, Errc::kNone) << tp;
    EXPECT_EQ(read.records.size(), 5u) << tp;
  }
  EXPECT_EQ(client.Failed().size(), 0u);
  EXPECT_TRUE(sim.NoViolations());

  Trace trace = sim.FinishAndParse();
  auto elected = Events(trace, "controller_elected", node::Broker(new_controller));
  ASSERT_FALSE(elected.empty());
  EXPECT_EQ(elected.back()->fields["epoch"], old_epoch.value() + 1);
  EXPECT_FALSE(Events(trace, "leader_elected", node::Broker(new_controller)).empty());
}

INSTANTIATE_TEST_SUITE_P(CrashOrSessionExpiry, ClusterControllerFailoverTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Crash" : "SessionExpiry"; });

TEST(ClusterControllerRestartTest, RestartedOldControllerRejoinsAsFollower) {
  ClusterOptions options;
  options.brokers = 3;
  options.truncation = TruncationPolicy::kLeaderEpoch;
  ClusterSim sim("controller-restart", 22, options);
  ASSERT_TRUE(sim.Start());
  Cluster& cluster = sim.cluster();
  TopicSpec topic;
  topic.name = "t";
  topic.partitions = 1;
  topic.replication_factor = 3;
  ASSERT_TRUE(cluster.CreateTopicAndWait(topic).ok());
  const BrokerId old_controller = cluster.ActiveController();
  ASSERT_TRUE(cluster.CrashBroker(old_controller).ok());
  ASSERT_TRUE(cluster.RunUntil(
      [&] {
        const BrokerId now = cluster.ActiveController();
        return now != kNoBroker && now != old_controller;
      },
      60 * kSecondUs));
  const BrokerId new_controller = cluster.ActiveController();
  ASSERT_TRUE(cluster.RestartBroker(old_controller).ok());
  const TopicPartition tp{"t", PartitionId(0)};
  ASSERT_TRUE(cluster.RunUntil(
      [&] {
        auto state = cluster.ZkPartitionState(tp);
        return state && state->isr.size() == 3;
      },
      60 * kSecondUs));
  EXPECT_EQ(cluster.ActiveController(), new_controller) << "no second election";
  EXPECT_FALSE(cluster.broker(old_controller)->controller().is_active());
  EXPECT_EQ(ZkControllerEpoch(cluster), ControllerEpoch(2));
  EXPECT_TRUE(sim.NoViolations());
}

}  // namespace
}  // namespace ksim::sim::testing
