// A topic's config changed while the brokers run reaches them as Kafka's does: the admin writes
// /config/topics/<t>, then a sequential notification under /config/changes; every broker watches
// that path (DynamicConfigManager), applies each notification newer than the last it applied, in
// order, to the topic's logs and partitions it holds, and deletes notifications older than 15
// minutes on the way. A broker whose ZooKeeper session ended sets the watch again in its new one.
#include <gtest/gtest.h>

#include "core/zk/paths.h"
#include "tests/support/sim/cluster_test_util.h"

namespace ksim::sim::testing {
namespace {

const TopicPartition kT0{"t", PartitionId(0)};
const TopicPartition kU0{"u", PartitionId(0)};
const BrokerId kB1(1);
const BrokerId kB2(2);
const BrokerId kB3(3);

class ClusterTopicConfigTest : public ::testing::Test {
 protected:
  ClusterTopicConfigTest() : sim_("topic-config", 5, ClusterOptions{}) {}  // three brokers

  void SetUp() override {
    ASSERT_TRUE(sim_.Start());
    ASSERT_TRUE(
        cluster().CreateTopicAndWait({"t", 1, 3, {{PartitionId(0), {kB1, kB2, kB3}}}, {}}).ok());
    ASSERT_TRUE(cluster().CreateTopicAndWait({"u", 1, 1, {{PartitionId(0), {kB1}}}, {}}).ok());
  }

  Cluster& cluster() { return sim_.cluster(); }

  // kafka-configs.sh --alter --entity-type topics: the config, then the notification (0.10.1 and
  // later's form); waits until ZooKeeper holds both.
  void ChangeTopicConfig(const std::string& topic, const zk::TopicConfig& overrides) {
    bool written = false;
    cluster().admin().SetData(
        zk::TopicConfigPath(topic), zk::EncodeTopicConfig(overrides), kAnyVersion,
        [&](Result<ZnodeStat> set) {
          ASSERT_TRUE(set.ok()) << set.status().ToString();
          cluster().admin().Create(
              zk::ConfigChangeSequentialPath(),
              zk::EncodeTopicConfigChange(zk::ConfigChangeFormat::kVersion2, topic),
              CreateMode::kPersistentSequential, [&](Result<std::string> created) {
                ASSERT_TRUE(created.ok()) << created.status().ToString();
                notifications_.push_back(*created);
                written = true;
              });
        });
    ASSERT_TRUE(cluster().RunUntil([&] { return written; }, 10 * kSecondUs));
  }

  int32_t MinIsr(BrokerId broker, const TopicPartition& tp) {
    const Partition* partition = cluster().broker(broker)->GetPartition(tp);
    return partition == nullptr ? -1 : partition->config().min_insync_replicas;
  }

  int64_t RetentionMs(BrokerId broker, const TopicPartition& tp) {
    const Partition* partition = cluster().broker(broker)->GetPartition(tp);
    return partition == nullptr ? -1 : partition->log().config().retention_ms;
  }

  bool EveryReplicaOfT(int32_t min_isr) {
    for (BrokerId broker : {kB1, kB2, kB3}) {
      if (MinIsr(broker, kT0) != min_isr) return false;
    }
    return true;
  }

  ClusterSim sim_;
  std::vector<std::string> notifications_;  // the paths created, in order
};

TEST_F(ClusterTopicConfigTest, AChangeReachesEveryReplicaOfTheTopicAndNoOther) {
  ASSERT_TRUE(EveryReplicaOfT(1));
  const int64_t default_retention = RetentionMs(kB1, kT0);
  ChangeTopicConfig("t", {{"min.insync.replicas", "3"}, {"retention.ms", "60000"}});
  ASSERT_TRUE(cluster().RunUntil([&] { return EveryReplicaOfT(3); }, 10 * kSecondUs));
  for (BrokerId broker : {kB1, kB2, kB3}) EXPECT_EQ(RetentionMs(broker, kT0), 60000) << broker;
  // Topic u, on broker 1 too, keeps its config.
  EXPECT_EQ(MinIsr(kB1, kU0), 1);
  EXPECT_EQ(RetentionMs(kB1, kU0), default_retention);
  // The topic's znode emptied: back to the brokers' defaults.
  ChangeTopicConfig("t", {});
  ASSERT_TRUE(cluster().RunUntil([&] { return EveryReplicaOfT(1); }, 10 * kSecondUs));
  EXPECT_EQ(RetentionMs(kB2, kT0), default_retention);
}

// Two changes in a row: each broker applies both, in order, and ends with the second.
TEST_F(ClusterTopicConfigTest, ChangesApplyInOrder) {
  ChangeTopicConfig("t", {{"min.insync.replicas", "2"}});
  ChangeTopicConfig("t", {{"min.insync.replicas", "3"}});
  ASSERT_EQ(notifications_.size(), 2u);
  EXPECT_LT(*zk::ConfigChangeNumber(notifications_[0].substr(notifications_[0].rfind('/') + 1)),
            *zk::ConfigChangeNumber(notifications_[1].substr(notifications_[1].rfind('/') + 1)));
  ASSERT_TRUE(cluster().RunUntil([&] { return EveryReplicaOfT(3); }, 10 * kSecondUs));
  cluster().RunFor(5 * kSecondUs);
  EXPECT_TRUE(EveryReplicaOfT(3));
}

// A notification older than 15 minutes is deleted when the brokers next process the path.
TEST_F(ClusterTopicConfigTest, NotificationsOlderThanFifteenMinutesArePurged) {
  ChangeTopicConfig("t", {{"min.insync.replicas", "2"}});
  ASSERT_TRUE(cluster().RunUntil([&] { return EveryReplicaOfT(2); }, 10 * kSecondUs));
  cluster().RunFor(60 * kSecondUs);
  EXPECT_TRUE(cluster().zookeeper().Read(notifications_[0]).has_value()) << "kept under 15 min";
  cluster().RunFor(15 * 60 * kSecondUs);
  EXPECT_TRUE(cluster().zookeeper().Read(notifications_[0]).has_value()) << "nothing read it";
  ChangeTopicConfig("t", {{"min.insync.replicas", "3"}});
  ASSERT_TRUE(cluster().RunUntil([&] { return EveryReplicaOfT(3); }, 10 * kSecondUs));
  EXPECT_FALSE(cluster().zookeeper().Read(notifications_[0]).has_value());
  EXPECT_TRUE(cluster().zookeeper().Read(notifications_[1]).has_value());
}

// The watch ends with a ZooKeeper session: a broker sets it again in its next one, and a change
// made meanwhile reaches it there.
TEST_F(ClusterTopicConfigTest, ABrokerWhoseSessionEndedWatchesAgain) {
  ASSERT_TRUE(cluster().ExpireSession(kB2).ok());
  ChangeTopicConfig("t", {{"min.insync.replicas", "2"}});
  ASSERT_TRUE(cluster().RunUntil([&] { return EveryReplicaOfT(2); }, 30 * kSecondUs));
  ChangeTopicConfig("t", {{"min.insync.replicas", "3"}});
  ASSERT_TRUE(cluster().RunUntil([&] { return EveryReplicaOfT(3); }, 30 * kSecondUs));
}

}  // namespace
}  // namespace ksim::sim::testing
