// Preferred replica elections in a running cluster (Kafka 0.10.0.1's
// KafkaController.checkAndTriggerPartitionRebalance and PreferredReplicaElectionListener): after a
// broker returns, the controller gives it back the partitions it is preferred for once its check
// finds the imbalance above leader.imbalance.per.broker.percentage, only while it is live and in
// the ISR; auto.leader.rebalance.enable=false leaves leadership where failures put it, until
// kafka-preferred-replica-election.sh writes /admin/preferred_replica_election.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/zk/paths.h"
#include "tests/support/sim/cluster_test_util.h"

namespace ksim::sim::testing {
namespace {

constexpr int64_t kIntervalS = 10;
const TopicPartition kT0{"t", PartitionId(0)};

ClusterOptions Options(ConfigOverrides config) {
  ClusterOptions options;
  options.brokers = 3;
  options.config = {{"leader.imbalance.check.interval.seconds", std::to_string(kIntervalS)}};
  for (auto& entry : config) options.config.push_back(std::move(entry));
  return options;
}

// `t`: three partitions, one preferred by each broker. Returns the broker preferred for t-0 (1),
// made to lose its leadership: crashed, its partition moved, restarted, back in the ISR.
class LeaderRebalanceTest : public ::testing::Test {
 protected:
  void SetUpCluster(ClusterSim& sim) {
    ASSERT_TRUE(sim.Start());
    Cluster& cluster = sim.cluster();
    ASSERT_TRUE(cluster.CreateTopicAndWait(OnePartitionPreferringEachBroker("t")).ok());
    ASSERT_EQ(cluster.LeaderOf(kT0), BrokerId(1));
    ASSERT_TRUE(cluster.CrashBroker(BrokerId(1)).ok());
    ASSERT_TRUE(cluster.RunUntil(
        [&] {
          const BrokerId leader = cluster.LeaderOf(kT0);
          return leader != kNoBroker && leader != BrokerId(1);
        },
        60 * kSecondUs));
  }
  static bool InIsr(Cluster& cluster, BrokerId broker) {
    auto state = cluster.ZkPartitionState(kT0);
    return state && std::find(state->isr.begin(), state->isr.end(), broker) != state->isr.end();
  }
  void RestartAndWaitForIsr(Cluster& cluster) {
    ASSERT_TRUE(cluster.RestartBroker(BrokerId(1)).ok());
    ASSERT_TRUE(cluster.RunUntil([&] { return InIsr(cluster, BrokerId(1)); }, 60 * kSecondUs));
  }
};

TEST_F(LeaderRebalanceTest, ImbalanceIsFixedWithinTheCheckInterval) {
  ClusterSim sim("rebalance", 31, Options({}));
  SetUpCluster(sim);
  Cluster& cluster = sim.cluster();
  RestartAndWaitForIsr(cluster);
  const LeaderEpoch epoch = cluster.ZkPartitionState(kT0)->leader_epoch;
  const std::vector<BrokerId> isr = cluster.ZkPartitionState(kT0)->isr;
  ASSERT_NE(cluster.LeaderOf(kT0), BrokerId(1));
  ASSERT_TRUE(cluster.RunUntil([&] { return cluster.LeaderOf(kT0) == BrokerId(1); },
                               (kIntervalS + 1) * kSecondUs));
  // The preferred replica election: leader epoch + 1, the ISR as it was.
  EXPECT_EQ(cluster.ZkPartitionState(kT0)->leader_epoch, epoch + 1);
  EXPECT_EQ(cluster.ZkPartitionState(kT0)->isr, isr);
  EXPECT_TRUE(sim.NoViolations());
  Trace trace = sim.FinishAndParse();
  bool rebalanced = false;
  for (const TraceEvent* event : Events(trace, "leader_elected")) {
    if (event->fields["reason"] == "auto_rebalance") {
      rebalanced = true;
      EXPECT_EQ(event->fields["policy"], "preferred-replica");
      EXPECT_EQ(event->fields["leader"], 1);
    }
  }
  EXPECT_TRUE(rebalanced);
}

TEST_F(LeaderRebalanceTest, NotWhileThePreferredReplicaIsDead) {
  ClusterSim sim("rebalance-dead", 32, Options({}));
  SetUpCluster(sim);
  Cluster& cluster = sim.cluster();
  const BrokerId leader = cluster.LeaderOf(kT0);
  const LeaderEpoch epoch = cluster.ZkPartitionState(kT0)->leader_epoch;
  cluster.RunFor(3 * kIntervalS * kSecondUs);
  EXPECT_EQ(cluster.LeaderOf(kT0), leader);
  EXPECT_EQ(cluster.ZkPartitionState(kT0)->leader_epoch, epoch);
}

TEST_F(LeaderRebalanceTest, NotWhileThePreferredReplicaIsOutOfTheIsr) {
  ClusterSim sim("rebalance-out-of-isr", 33, Options({}));
  SetUpCluster(sim);
  Cluster& cluster = sim.cluster();
  // Broker 1 returns but cannot reach the other brokers (ZooKeeper it can): registered, live to
  // the controller, and never caught up, so never in t-0's ISR.
  ASSERT_TRUE(cluster
                  .Partition({{node::Broker(BrokerId(1))},
                              {node::Broker(BrokerId(2)), node::Broker(BrokerId(3))}})
                  .ok());
  ASSERT_TRUE(cluster.RestartBroker(BrokerId(1)).ok());
  const BrokerId leader = cluster.LeaderOf(kT0);
  cluster.RunFor(3 * kIntervalS * kSecondUs);
  EXPECT_FALSE(InIsr(cluster, BrokerId(1)));
  EXPECT_EQ(cluster.LeaderOf(kT0), leader);
}

TEST_F(LeaderRebalanceTest, DisabledByAutoLeaderRebalanceEnable) {
  ClusterSim sim("rebalance-disabled", 34, Options({{"auto.leader.rebalance.enable", "false"}}));
  SetUpCluster(sim);
  Cluster& cluster = sim.cluster();
  RestartAndWaitForIsr(cluster);
  const BrokerId leader = cluster.LeaderOf(kT0);
  cluster.RunFor(3 * kIntervalS * kSecondUs);
  EXPECT_EQ(cluster.LeaderOf(kT0), leader);

  // kafka-preferred-replica-election.sh: every partition; the controller elects and deletes the
  // znode.
  std::optional<Result<PreferredElectionStarted>> started;
  cluster.topic_admin().StartPreferredReplicaElection(
      std::nullopt, [&](Result<PreferredElectionStarted> result) { started = std::move(result); });
  ASSERT_TRUE(cluster.RunUntil([&] { return started.has_value(); }, 10 * kSecondUs));
  ASSERT_TRUE(started->ok()) << started->status().ToString();
  EXPECT_EQ(FormatPartitionSet((*started)->partitions), "Set([t,0], [t,1], [t,2])");
  ASSERT_TRUE(cluster.RunUntil(
      [&] {
        return cluster.LeaderOf(kT0) == BrokerId(1) &&
               !cluster.zookeeper().Read(zk::kPreferredReplicaElectionPath).has_value();
      },
      10 * kSecondUs));
  EXPECT_TRUE(sim.NoViolations());
}

TEST_F(LeaderRebalanceTest, ThresholdIsRespected) {
  // Broker 1 leads none of its one partition: 100 %, not above a threshold of 100 %.
  ClusterSim sim("rebalance-threshold", 35,
                 Options({{"leader.imbalance.per.broker.percentage", "100"}}));
  SetUpCluster(sim);
  Cluster& cluster = sim.cluster();
  RestartAndWaitForIsr(cluster);
  const BrokerId leader = cluster.LeaderOf(kT0);
  cluster.RunFor(3 * kIntervalS * kSecondUs);
  EXPECT_EQ(cluster.LeaderOf(kT0), leader);
}

TEST(PreferredReplicaElectionDataTest, RoundTripsAndRefusesDuplicates) {
  const std::vector<zk::TopicAndPartition> partitions = {{"t", PartitionId(0)},
                                                         {"u", PartitionId(2)}};
  const std::string json = zk::EncodePreferredReplicaElection(partitions);
  EXPECT_EQ(
      json,
      R"({"version":1,"partitions":[{"topic":"t","partition":0},{"topic":"u","partition":2}]})");
  EXPECT_EQ(*zk::DecodePreferredReplicaElection(json), partitions);
  Result<std::vector<zk::TopicAndPartition>> duplicates = zk::DecodePreferredReplicaElection(
      R"({"partitions":[{"topic":"t","partition":0},{"topic":"t","partition":0}]})");
  ASSERT_FALSE(duplicates.ok());
  EXPECT_EQ(duplicates.status().message(),
            "Preferred replica election data contains duplicate partitions: [t,0]");
}

}  // namespace
}  // namespace ksim::sim::testing
