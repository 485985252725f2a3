// What the Controller does with each ZooKeeper error (docs/controller.md, "ZooKeeper errors"), in
// the three-broker cluster of tests/support/sim/controller_test_util.h with chosen calls of one
// controller failed by its FaultyCoordination: CONNECTIONLOSS is retried (as Kafka's ZkClient
// does) so that no watch and no read is lost; other errors are traced as controller_zk_error
// where Kafka logs them, and the controller acts as Kafka does (resigns after a failed failover or
// epoch write, skips a partition whose state cannot be written, keeps a topic deletion pending).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "core/base/trace_names.h"
#include "tests/support/sim/controller_test_util.h"

namespace ksim::sim::testing {
namespace {

using Op = FaultyCoordination::Op;

// The controller_zk_error events of `node`, as "operation path error".
std::vector<std::string> ZkErrors(const ControllerNode& node) {
  std::vector<std::string> out;
  for (const RecordedEvent* event : Events(node, ev::kControllerZkError)) {
    out.push_back(event->fields[std::string(field::kOperation)].get<std::string>() + " " +
                  event->fields[std::string(field::kPath)].get<std::string>() + " " +
                  event->fields[std::string(field::kError)].get<std::string>());
  }
  return out;
}

std::vector<int> BrokersLeft(const ControllerNode& node) {
  std::vector<int> out;
  for (const RecordedEvent* event : Events(node, ev::kBrokerLeft)) {
    out.push_back(event->fields[std::string(field::kBroker)].get<int>());
  }
  return out;
}

// Brokers 1, 2, 3, broker 1 controller, t-0 on `replicas` created and synced.
void StartWithTopic(ControllerCluster& cluster, std::initializer_list<int> replicas) {
  ASSERT_EQ(StartWithControllerOne(cluster), 1);
  cluster.CreateTopic("t", {{PartitionId(0), Ids(replicas)}});
  ASSERT_TRUE(cluster.RunUntil([&] { return Synced(cluster, 1, "t", 0); }));
}

std::string NotifyIsrChange(ControllerCluster& cluster, const std::string& data) {
  Result<std::string> created = cluster.world().Create(
      "admin", zk::IsrChangeNotificationSequentialPath(), data, CreateMode::kPersistentSequential);
  EXPECT_TRUE(created.ok());
  return created.ok() ? *created : "";
}

TEST(ControllerZkErrorTest, ALostConnectionDuringABrokerChangeIsRetried) {
  ControllerCluster cluster;
  StartWithTopic(cluster, {2, 3, 1});
  // Read as "no broker is registered" and left without its watch, the answer would make every
  // broker dead and the next change unheard.
  cluster.node(1).faults().Fail(Op::kGetChildren, "/brokers/ids", Errc::kConnectionLoss);
  cluster.Crash(3);
  ASSERT_TRUE(cluster.RunUntil([&] {
    return cluster.State("t", 0)->isr == Ids({2, 1}) && Synced(cluster, 1, "t", 0);
  }));
  EXPECT_EQ(cluster.node(1).faults().failed().size(), 1u);
  EXPECT_EQ(BrokersLeft(cluster.node(1)), std::vector<int>{3});
  EXPECT_EQ(cluster.controller(1).live_brokers(), (std::set<BrokerId>{BrokerId(1), BrokerId(2)}));

  cluster.Start(3);  // heard: the child watch was set again
  ASSERT_TRUE(
      cluster.RunUntil([&] { return cluster.controller(1).live_brokers().contains(BrokerId(3)); }));
  EXPECT_TRUE(ZkErrors(cluster.node(1)).empty());  // retried, as ZkClient does: nothing to log
}

TEST(ControllerZkErrorTest, ALostConnectionWhileReadingIsrChangeNotificationsIsRetried) {
  ControllerCluster cluster;
  StartWithTopic(cluster, {2, 3, 1});
  cluster.node(1).faults().Fail(Op::kGetChildren, "/isr_change_notification",
                                Errc::kConnectionLoss);
  auto announced = [&](const std::vector<BrokerId>& isr) {
    for (int id = 1; id <= 3; ++id) {
      if (!GotUpdateMetadata(cluster.node(id), Tp("t", 0), isr, BrokerId(2))) return false;
    }
    return cluster.server().Children(zk::kIsrChangeNotificationPath).empty();
  };

  ShrinkIsr(cluster, "t", 0, Ids({2, 3}));
  NotifyIsrChange(cluster, zk::EncodeIsrChangeNotification({{"t", PartitionId(0)}}));
  ASSERT_TRUE(cluster.RunUntil([&] { return announced(Ids({2, 3})); }));
  EXPECT_EQ(cluster.node(1).faults().failed().size(), 1u);

  // The child watch was set again: the next notification is heard too.
  ShrinkIsr(cluster, "t", 0, Ids({2}));
  NotifyIsrChange(cluster, zk::EncodeIsrChangeNotification({{"t", PartitionId(0)}}));
  ASSERT_TRUE(cluster.RunUntil([&] { return announced(Ids({2})); }));
  EXPECT_TRUE(ZkErrors(cluster.node(1)).empty());
}

TEST(ControllerZkErrorTest, ALostConnectionWhileLoadingAPartitionAtFailoverIsRetried) {
  ControllerCluster cluster;
  StartWithTopic(cluster, {1, 2, 3});
  // Whoever takes over loses the answer of its first read of t-0's state; unknown, the partition
  // would never get a leader again.
  for (int id : {2, 3}) {
    cluster.node(id).faults().Fail(Op::kGetData, zk::PartitionStatePath("t", PartitionId(0)),
                                   Errc::kConnectionLoss);
  }
  cluster.Crash(1);
  ASSERT_TRUE(cluster.RunUntil([&] {
    std::optional<int> active = cluster.ActiveController();
    return active && cluster.State("t", 0)->leader != BrokerId(1) &&
           Synced(cluster, *active, "t", 0);
  }));
  const int next = *cluster.ActiveController();
  EXPECT_EQ(*cluster.State("t", 0),
            (zk::PartitionState{BrokerId(2), LeaderEpoch(1), Ids({2, 3}), ControllerEpoch(2)}));
  EXPECT_EQ(cluster.node(next).faults().failed().size(), 1u);
  EXPECT_TRUE(ZkErrors(cluster.node(next)).empty());
}

TEST(ControllerZkErrorTest, AStateWriteAppliedBeforeItsAnswerWasLostCountsAsWritten) {
  ControllerCluster cluster;
  StartWithTopic(cluster, {2, 3, 1});
  // The write reaches ZooKeeper, its answer does not: issued again, it meets BADVERSION (the
  // version it made), and the read that follows finds its own state
  // (ReplicationUtils.checkLeaderAndIsrZkData).
  cluster.node(1).faults().Fail(Op::kSetData, zk::PartitionStatePath("t", PartitionId(0)),
                                Errc::kConnectionLoss, 1, /*applied=*/true);
  cluster.Crash(3);
  ASSERT_TRUE(cluster.RunUntil(
      [&] { return GotLeaderAndIsr(cluster.node(2), Tp("t", 0), BrokerId(2), LeaderEpoch(1)); }));
  EXPECT_EQ(*cluster.State("t", 0),
            (zk::PartitionState{BrokerId(2), LeaderEpoch(1), Ids({2, 1}), ControllerEpoch(1)}));
  EXPECT_EQ(cluster.StateVersion("t", 0), 1);  // written once
  EXPECT_TRUE(Synced(cluster, 1, "t", 0));
  EXPECT_EQ(cluster.node(1).faults().failed().size(), 1u);
  EXPECT_TRUE(ZkErrors(cluster.node(1)).empty());
}

TEST(ControllerZkErrorTest, AStateWriteThatKeepsMeetingBadVersionGivesUpAndIsTraced) {
  ControllerCluster cluster;
  StartWithTopic(cluster, {2, 3, 1});
  const std::string path = zk::PartitionStatePath("t", PartitionId(0));
  cluster.node(1).faults().Fail(Op::kSetData, path, Errc::kBadVersion, /*count=*/1000);
  const zk::PartitionState before = *cluster.State("t", 0);
  cluster.Crash(3);
  ASSERT_TRUE(cluster.RunUntil([&] { return !ZkErrors(cluster.node(1)).empty(); }));
  EXPECT_EQ(ZkErrors(cluster.node(1)),
            std::vector<std::string>{"set_data " + path + " BADVERSION"});
  EXPECT_EQ(cluster.node(1).faults().failed().size(), 10u);  // ten conditional writes, re-read
  EXPECT_EQ(*cluster.State("t", 0), before);
  // The partition was skipped; the broker change went on.
  EXPECT_EQ(BrokersLeft(cluster.node(1)), std::vector<int>{3});
}

TEST(ControllerZkErrorTest, AStateWrittenByANewerControllerIsNotOverwritten) {
  ControllerCluster cluster;
  StartWithTopic(cluster, {2, 3, 1});
  // A controller of epoch 2 wrote t-0's state: broker 1's controller (epoch 1) is stale and does
  // not know it yet (PartitionStateMachine.electLeaderForPartition aborts on such a state).
  zk::PartitionState newer = *cluster.State("t", 0);
  newer.controller_epoch = ControllerEpoch(2);
  const std::string path = zk::PartitionStatePath("t", PartitionId(0));
  ASSERT_TRUE(
      cluster.world()
          .SetData("admin", path, zk::EncodePartitionState(newer), cluster.StateVersion("t", 0))
          .ok());
  cluster.Crash(3);
  ASSERT_TRUE(cluster.RunUntil([&] { return !ZkErrors(cluster.node(1)).empty(); }));
  EXPECT_EQ(ZkErrors(cluster.node(1)),
            std::vector<std::string>{"set_data " + path + " STALE_CONTROLLER_EPOCH"});
  cluster.RunFor(2 * kSecondUs);
  EXPECT_EQ(*cluster.State("t", 0), newer);
}

TEST(ControllerZkErrorTest, AnUnreadableIsrChangeNotificationIsTracedAndDeleted) {
  ControllerCluster cluster;
  StartWithTopic(cluster, {2, 3, 1});
  const std::string path = NotifyIsrChange(cluster, "{\"version\":1,\"partitions\":");
  ASSERT_TRUE(cluster.RunUntil(
      [&] { return cluster.server().Children(zk::kIsrChangeNotificationPath).empty(); }));
  // IsrChangeNotificationListener: "Invalid topic and partition JSON ... in ZK".
  EXPECT_EQ(ZkErrors(cluster.node(1)),
            std::vector<std::string>{"get_data " + path + " CORRUPTION"});
}

TEST(ControllerZkErrorTest, AControllerEpochWriteConflictIsTracedAndTheControllerResigns) {
  ControllerCluster cluster;
  ASSERT_TRUE(cluster.world().Create("admin", std::string(zk::kControllerEpochPath), "5").ok());
  ControllerNode& node = cluster.Start(1);
  // Someone wrote /controller_epoch between the read and the conditional write: "Controller moved
  // to another broker. Aborting controller startup procedure"; the elector resigns (deleting
  // /controller) and the election runs again.
  node.faults().Fail(Op::kSetData, std::string(zk::kControllerEpochPath), Errc::kBadVersion);
  ASSERT_EQ(cluster.WaitForController(), 1);
  EXPECT_EQ(ZkErrors(node), std::vector<std::string>{"set_data /controller_epoch BADVERSION"});
  EXPECT_EQ(cluster.controller(1).epoch(), ControllerEpoch(6));
  const auto elected = Events(node, ev::kControllerElected);
  ASSERT_EQ(elected.size(), 1u);
  EXPECT_EQ(elected[0]->fields[std::string(field::kEpoch)], 6);
}

TEST(ControllerZkErrorTest, AFailedFailoverIsTracedAndTheControllerResignsAndElectsAgain) {
  ControllerCluster cluster;
  ControllerNode& node = cluster.Start(1);
  node.faults().Fail(Op::kCreate, std::string(zk::kBrokerIdsPath), Errc::kInvalidArgument);
  ASSERT_EQ(cluster.WaitForController(), 1);
  ASSERT_TRUE(
      cluster.RunUntil([&] { return cluster.controller(1).epoch() == ControllerEpoch(2); }));
  EXPECT_EQ(ZkErrors(node), std::vector<std::string>{"create /brokers/ids INVALID_ARGUMENT"});
  // ZookeeperLeaderElector.elect: "Error while electing or becoming leader", resign().
  std::vector<std::string> story;
  for (const RecordedEvent& event : node.events) {
    if (event.ev == ev::kControllerElected || event.ev == ev::kControllerResigned) {
      story.push_back(event.ev + " " + event.fields[std::string(field::kEpoch)].dump());
    }
  }
  EXPECT_EQ(story, (std::vector<std::string>{"controller_elected 1", "controller_resigned 1",
                                             "controller_elected 2"}));
}

TEST(ControllerZkErrorTest, ATopicZnodeThatCannotBeDeletedKeepsTheDeletionPending) {
  BrokerConfig config;
  config.delete_topic_enable = true;
  ControllerCluster cluster(config);
  StartWithTopic(cluster, {2, 3});
  // A child appeared under /brokers/topics/t meanwhile: TopicDeletionManager.completeDeleteTopic
  // fails and the topic stays queued for deletion.
  cluster.node(1).faults().Fail(Op::kDelete, zk::TopicPath("t"), Errc::kNotEmpty);
  ASSERT_TRUE(cluster.world().Create("admin", zk::DeleteTopicPath("t")).ok());
  ASSERT_TRUE(cluster.RunUntil([&] { return !ZkErrors(cluster.node(1)).empty(); }));
  cluster.RunFor(2 * kSecondUs);
  EXPECT_EQ(ZkErrors(cluster.node(1)),
            std::vector<std::string>{"delete " + zk::TopicPath("t") + " NOTEMPTY"});
  EXPECT_TRUE(cluster.server().Read(zk::TopicPath("t")).has_value());
  EXPECT_TRUE(cluster.server().Read(zk::DeleteTopicPath("t")).has_value());
  EXPECT_TRUE(Events(cluster.node(1), ev::kTopicDeleted).empty());
}

}  // namespace
}  // namespace ksim::sim::testing
