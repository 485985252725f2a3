// The Controller (core/controller/controller.h) in a three-broker cluster on the simulated
// ZooKeeper and network (tests/support/sim/controller_test_util.h): election and epochs, new
// topics, failures and returns under each election policy, ISR change notifications, controlled
// shutdown, topic deletion and a stale controller's requests. Kafka's ControllerIntegrationTest,
// ControllerFailoverTest, UncleanLeaderElectionTest and DeleteTopicTest check the same facts.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tests/support/sim/controller_test_util.h"

namespace ksim::sim::testing {
namespace {

TEST(ControllerTest, FirstControllerIsElectedAndWritesEpochOne) {
  ControllerCluster cluster;
  ASSERT_EQ(StartWithControllerOne(cluster), 1);

  std::optional<ZnodeData> epoch = cluster.server().Read(zk::kControllerEpochPath);
  ASSERT_TRUE(epoch.has_value());
  EXPECT_EQ(epoch->data, "1");
  std::optional<ZnodeData> controller = cluster.server().Read(zk::kControllerPath);
  ASSERT_TRUE(controller.has_value());
  EXPECT_EQ(zk::DecodeControllerRegistration(controller->data)->broker_id, BrokerId(1));
  EXPECT_EQ(cluster.controller(1).epoch(), ControllerEpoch(1));
  EXPECT_EQ(cluster.controller(1).live_brokers(),
            (std::set<BrokerId>{BrokerId(1), BrokerId(2), BrokerId(3)}));
  ASSERT_TRUE(cluster.RunUntil([&] {
    return cluster.controller(2).known_controller() == BrokerId(1) &&
           cluster.controller(3).known_controller() == BrokerId(1);
  }));
  EXPECT_FALSE(cluster.controller(2).is_active());
  EXPECT_FALSE(cluster.controller(3).is_active());

  const auto elected = Events(cluster.node(1), "controller_elected");
  ASSERT_EQ(elected.size(), 1u);
  EXPECT_EQ(elected[0]->fields["epoch"], 1);
  EXPECT_TRUE(Events(cluster.node(2), "controller_elected").empty());

  // Every broker hears UpdateMetadata with the live brokers' registered endpoints.
  ASSERT_TRUE(cluster.RunUntil([&] {
    for (int id = 1; id <= 3; ++id) {
      bool full = false;
      for (const RecordedRequest& recorded : cluster.node(id).requests) {
        const auto* request = std::get_if<UpdateMetadataRequest>(&recorded.request);
        if (request != nullptr && request->live_brokers.size() == 3) full = true;
      }
      if (!full) return false;
    }
    return true;
  }));
  for (int id = 1; id <= 3; ++id) {
    for (const RecordedRequest& recorded : cluster.node(id).requests) {
      EXPECT_EQ(recorded.from, "broker-1");
      const auto* request = std::get_if<UpdateMetadataRequest>(&recorded.request);
      ASSERT_NE(request, nullptr);
      EXPECT_EQ(request->controller_epoch, ControllerEpoch(1));
      EXPECT_EQ(request->controller_id, BrokerId(1));
      for (const BrokerEndpoint& endpoint : request->live_brokers) {
        EXPECT_EQ(endpoint.host, BrokerNode(endpoint.node_id.value()));
        EXPECT_EQ(endpoint.port, 9092);
      }
    }
  }
}

TEST(ControllerTest, ExpiredSessionMovesTheControllerAndIncrementsTheEpoch) {
  ControllerCluster cluster;
  ASSERT_EQ(StartWithControllerOne(cluster), 1);
  ASSERT_TRUE(cluster.server().ExpireSession(cluster.node(1).zk().session_id()).ok());

  ASSERT_TRUE(cluster.RunUntil([&] {
    std::optional<int> active = cluster.ActiveController();
    return active && *active != 1;
  }));
  const int next = *cluster.ActiveController();
  EXPECT_EQ(cluster.controller(next).epoch(), ControllerEpoch(2));
  EXPECT_EQ(cluster.server().Read(zk::kControllerEpochPath)->data, "2");
  EXPECT_FALSE(cluster.controller(1).is_active());
  EXPECT_EQ(Events(cluster.node(1), "controller_resigned").size(), 1u);
  ASSERT_EQ(Events(cluster.node(next), "controller_elected").size(), 1u);
  EXPECT_EQ(Events(cluster.node(next), "controller_elected")[0]->fields["epoch"], 2);

  // Broker 1 comes back with a new session and follows the new controller.
  ASSERT_TRUE(cluster.RunUntil([&] {
    return cluster.node(1).registered &&
           cluster.controller(1).known_controller() == BrokerId(next) &&
           cluster.controller(next).live_brokers().contains(BrokerId(1));
  }));
  EXPECT_FALSE(cluster.controller(1).is_active());
  EXPECT_EQ(cluster.ActiveController(), next);
}

TEST(ControllerTest, CrashedControllerIsReplacedAfterItsSessionTimesOut) {
  ControllerCluster cluster;
  ASSERT_EQ(StartWithControllerOne(cluster), 1);
  cluster.CreateTopic("t", {{PartitionId(0), Ids({1, 2, 3})}});
  ASSERT_TRUE(cluster.RunUntil([&] { return Synced(cluster, 1, "t", 0); }));

  cluster.Crash(1);
  ASSERT_TRUE(cluster.RunUntil([&] { return cluster.ActiveController().has_value(); }));
  const int next = *cluster.ActiveController();
  EXPECT_EQ(cluster.controller(next).epoch(), ControllerEpoch(2));
  // The new controller elects a leader for the partition broker 1 led.
  ASSERT_TRUE(cluster.RunUntil([&] {
    return cluster.State("t", 0)->leader == BrokerId(2) && Synced(cluster, next, "t", 0);
  }));
  const zk::PartitionState state = *cluster.State("t", 0);
  EXPECT_EQ(state.isr, Ids({2, 3}));
  EXPECT_EQ(state.leader_epoch, LeaderEpoch(1));
  EXPECT_EQ(state.controller_epoch, ControllerEpoch(2));
  ASSERT_TRUE(cluster.RunUntil([&] {
    return GotLeaderAndIsr(cluster.node(2), Tp("t", 0), BrokerId(2), LeaderEpoch(1)) &&
           GotLeaderAndIsr(cluster.node(3), Tp("t", 0), BrokerId(2), LeaderEpoch(1));
  }));
}

TEST(ControllerTest, NewTopicGetsFirstReplicaAsLeaderAndEveryReplicaInIsr) {
  ControllerCluster cluster;
  ASSERT_EQ(StartWithControllerOne(cluster), 1);
  cluster.CreateTopic("t", {{PartitionId(0), Ids({2, 3, 1})}, {PartitionId(1), Ids({3, 1, 2})}});

  ASSERT_TRUE(cluster.RunUntil(
      [&] { return cluster.State("t", 0).has_value() && cluster.State("t", 1).has_value(); }));
  EXPECT_EQ(*cluster.State("t", 0),
            (zk::PartitionState{BrokerId(2), LeaderEpoch(0), Ids({2, 3, 1}), ControllerEpoch(1)}));
  EXPECT_EQ(*cluster.State("t", 1),
            (zk::PartitionState{BrokerId(3), LeaderEpoch(0), Ids({3, 1, 2}), ControllerEpoch(1)}));

  // LeaderAndIsr (is_new) reaches every replica, the controller's own broker included.
  ASSERT_TRUE(cluster.RunUntil([&] {
    for (int id = 1; id <= 3; ++id) {
      if (LeaderAndIsrStates(cluster.node(id), Tp("t", 0)).empty()) return false;
      if (LeaderAndIsrStates(cluster.node(id), Tp("t", 1)).empty()) return false;
    }
    return true;
  }));
  for (int id = 1; id <= 3; ++id) {
    const auto states = LeaderAndIsrStates(cluster.node(id), Tp("t", 0));
    ASSERT_EQ(states.size(), 1u);
    EXPECT_TRUE(states[0].is_new);
    EXPECT_EQ(states[0].leader, BrokerId(2));
    EXPECT_EQ(states[0].isr, Ids({2, 3, 1}));
    EXPECT_EQ(states[0].replicas, Ids({2, 3, 1}));
    EXPECT_EQ(states[0].zk_version, 0);
  }
  ASSERT_TRUE(cluster.RunUntil([&] {
    for (int id = 1; id <= 3; ++id) {
      if (!GotUpdateMetadata(cluster.node(id), Tp("t", 1), Ids({3, 1, 2}), BrokerId(3))) {
        return false;
      }
    }
    return true;
  }));
  const auto& partitions = cluster.controller(1).partitions();
  ASSERT_TRUE(partitions.contains(Tp("t", 0)));
  EXPECT_EQ(partitions.at(Tp("t", 0)).state.leader, BrokerId(2));
  EXPECT_EQ(Events(cluster.node(1), "leader_elected").size(), 2u);
  EXPECT_EQ(cluster.controller(1).elections(), 0);  // creation is not an election
}

TEST(ControllerTest, NewTopicWithADeadReplicaLeadsWithTheLiveOnes) {
  ControllerCluster cluster;
  cluster.Start(1);
  ASSERT_EQ(cluster.WaitForController(), 1);
  cluster.Start(2);
  ASSERT_EQ(cluster.WaitForController(), 1);
  cluster.CreateTopic("t", {{PartitionId(0), Ids({3, 2, 1})}});
  ASSERT_TRUE(cluster.RunUntil([&] { return Synced(cluster, 1, "t", 0); }));
  EXPECT_EQ(cluster.State("t", 0)->leader, BrokerId(2));
  EXPECT_EQ(cluster.State("t", 0)->isr, Ids({2, 1}));

  // Broker 3 starts: it hears the partition's state and becomes a follower.
  cluster.Start(3);
  ASSERT_TRUE(cluster.RunUntil(
      [&] { return GotLeaderAndIsr(cluster.node(3), Tp("t", 0), BrokerId(2), LeaderEpoch(0)); }));
  EXPECT_EQ(cluster.State("t", 0)->leader, BrokerId(2));
}

TEST(ControllerTest, LeaderFailureElectsTheNextLiveIsrMember) {
  ControllerCluster cluster;
  ASSERT_EQ(StartWithControllerOne(cluster), 1);
  cluster.CreateTopic("t", {{PartitionId(0), Ids({2, 3, 1})}});
  ASSERT_TRUE(cluster.RunUntil([&] { return Synced(cluster, 1, "t", 0); }));

  cluster.Crash(2);
  ASSERT_TRUE(cluster.RunUntil(
      [&] { return cluster.State("t", 0)->leader == BrokerId(3) && Synced(cluster, 1, "t", 0); }));
  EXPECT_EQ(*cluster.State("t", 0),
            (zk::PartitionState{BrokerId(3), LeaderEpoch(1), Ids({3, 1}), ControllerEpoch(1)}));
  EXPECT_EQ(cluster.controller(1).elections(), 1);
  EXPECT_EQ(cluster.controller(1).unclean_elections(), 0);
  const auto elected = Events(cluster.node(1), "leader_elected");
  ASSERT_EQ(elected.size(), 2u);
  EXPECT_EQ(elected[1]->fields["leader"], 3);
  EXPECT_EQ(elected[1]->fields["epoch"], 1);
  EXPECT_EQ(elected[1]->fields["unclean"], false);
  EXPECT_EQ(elected[1]->fields["policy"], "unclean");  // 0.10's default allows unclean elections
  EXPECT_EQ(elected[1]->fields["reason"], "broker_failure");
  ASSERT_EQ(Events(cluster.node(1), "broker_left").size(), 1u);
  EXPECT_EQ(Events(cluster.node(1), "broker_left")[0]->fields["broker"], 2);
  ASSERT_TRUE(cluster.RunUntil([&] {
    return GotLeaderAndIsr(cluster.node(3), Tp("t", 0), BrokerId(3), LeaderEpoch(1)) &&
           GotLeaderAndIsr(cluster.node(1), Tp("t", 0), BrokerId(3), LeaderEpoch(1)) &&
           GotUpdateMetadata(cluster.node(3), Tp("t", 0), Ids({3, 1}), BrokerId(3));
  }));
}

TEST(ControllerTest, FollowerFailureRemovesItFromTheIsrWithANewLeaderEpoch) {
  ControllerCluster cluster;
  ASSERT_EQ(StartWithControllerOne(cluster), 1);
  cluster.CreateTopic("t", {{PartitionId(0), Ids({2, 3, 1})}});
  ASSERT_TRUE(cluster.RunUntil([&] { return Synced(cluster, 1, "t", 0); }));

  cluster.Crash(3);
  ASSERT_TRUE(cluster.RunUntil([&] {
    return cluster.State("t", 0)->isr == Ids({2, 1}) && Synced(cluster, 1, "t", 0);
  }));
  EXPECT_EQ(cluster.State("t", 0)->leader, BrokerId(2));
  EXPECT_EQ(cluster.State("t", 0)->leader_epoch, LeaderEpoch(1));
  EXPECT_EQ(cluster.controller(1).elections(), 0);
  ASSERT_TRUE(cluster.RunUntil(
      [&] { return GotLeaderAndIsr(cluster.node(2), Tp("t", 0), BrokerId(2), LeaderEpoch(1)); }));

  // It returns: it hears the partition's state (as a follower outside the ISR); the ISR is the
  // leader's to expand.
  cluster.Start(3);
  ASSERT_TRUE(cluster.RunUntil(
      [&] { return GotLeaderAndIsr(cluster.node(3), Tp("t", 0), BrokerId(2), LeaderEpoch(1)); }));
  EXPECT_EQ(cluster.State("t", 0)->isr, Ids({2, 1}));
  EXPECT_EQ(cluster.State("t", 0)->leader_epoch, LeaderEpoch(1));
}

TEST(ControllerTest, UncleanPolicyElectsAReplicaOutsideTheIsr) {
  ControllerOptions options;
  options.election_policy = "unclean";
  ControllerCluster cluster(BrokerConfig(), options);
  ASSERT_EQ(StartWithControllerOne(cluster), 1);
  cluster.CreateTopic("t", {{PartitionId(0), Ids({2, 3, 1})}});
  ASSERT_TRUE(cluster.RunUntil([&] { return Synced(cluster, 1, "t", 0); }));
  ShrinkIsr(cluster, "t", 0, Ids({2}));

  cluster.Crash(2);
  ASSERT_TRUE(cluster.RunUntil(
      [&] { return cluster.State("t", 0)->leader != BrokerId(2) && Synced(cluster, 1, "t", 0); }));
  EXPECT_EQ(cluster.State("t", 0)->leader, BrokerId(3));
  EXPECT_EQ(cluster.State("t", 0)->isr, Ids({3}));
  EXPECT_EQ(cluster.State("t", 0)->leader_epoch, LeaderEpoch(1));
  EXPECT_EQ(cluster.controller(1).unclean_elections(), 1);
  const auto elected = Events(cluster.node(1), "leader_elected");
  ASSERT_EQ(elected.size(), 2u);
  EXPECT_EQ(elected[1]->fields["unclean"], true);
  EXPECT_EQ(elected[1]->fields["policy"], "unclean");
}

TEST(ControllerTest, CleanPolicyKeepsPartitionOfflineUntilTheLastIsrMemberReturns) {
  BrokerConfig config;
  config.unclean_leader_election_enable = false;  // Kafka's own policy is then `clean`
  ControllerCluster cluster(config);
  ASSERT_EQ(StartWithControllerOne(cluster), 1);
  cluster.CreateTopic("t", {{PartitionId(0), Ids({2, 3})}});
  ASSERT_TRUE(cluster.RunUntil([&] { return Synced(cluster, 1, "t", 0); }));

  cluster.Crash(3);
  ASSERT_TRUE(cluster.RunUntil(
      [&] { return cluster.State("t", 0)->isr == Ids({2}) && Synced(cluster, 1, "t", 0); }));
  EXPECT_EQ(cluster.State("t", 0)->leader_epoch, LeaderEpoch(1));
  cluster.Crash(2);
  ASSERT_TRUE(cluster.RunUntil([&] {
    return cluster.State("t", 0)->leader == zk::kNoLeader && Synced(cluster, 1, "t", 0);
  }));
  // Offline: no leader, the ISR keeps its last member.
  EXPECT_EQ(*cluster.State("t", 0),
            (zk::PartitionState{zk::kNoLeader, LeaderEpoch(2), Ids({2}), ControllerEpoch(1)}));
  const auto offline = Events(cluster.node(1), "partition_offline");
  ASSERT_EQ(offline.size(), 1u);
  EXPECT_EQ(offline[0]->fields["isr"], nlohmann::ordered_json::array({2}));

  // The out-of-ISR replica returns first: still offline.
  cluster.Start(3);
  ASSERT_TRUE(
      cluster.RunUntil([&] { return cluster.controller(1).live_brokers().contains(BrokerId(3)); }));
  cluster.RunFor(2 * kSecondUs);
  EXPECT_EQ(cluster.State("t", 0)->leader, zk::kNoLeader);
  EXPECT_EQ(cluster.controller(1).unclean_elections(), 0);

  // The last ISR member returns and leads again.
  cluster.Start(2);
  ASSERT_TRUE(cluster.RunUntil(
      [&] { return cluster.State("t", 0)->leader == BrokerId(2) && Synced(cluster, 1, "t", 0); }));
  EXPECT_EQ(cluster.State("t", 0)->isr, Ids({2}));
  EXPECT_EQ(cluster.State("t", 0)->leader_epoch, LeaderEpoch(3));
  const auto elected = Events(cluster.node(1), "leader_elected");
  EXPECT_EQ(elected.back()->fields["reason"], "broker_startup");
  EXPECT_EQ(elected.back()->fields["unclean"], false);
  EXPECT_EQ(elected.back()->fields["policy"], "clean");
  ASSERT_TRUE(cluster.RunUntil([&] {
    return GotLeaderAndIsr(cluster.node(2), Tp("t", 0), BrokerId(2), LeaderEpoch(3)) &&
           GotLeaderAndIsr(cluster.node(3), Tp("t", 0), BrokerId(2), LeaderEpoch(3));
  }));
}

// onControllerFailover (0.10.0.1 to 2.1.0): the new controller elects only partitions without a
// live leader; a follower that died before it took over stays in the ISR (the leader drops it
// when it lags), and only a broker that dies later leaves ISRs at once (onBrokerFailure).
TEST(ControllerTest, FailoverLeavesTheIsrOfALivePartitionAsItIs) {
  ControllerCluster cluster;
  ASSERT_EQ(StartWithControllerOne(cluster), 1);
  cluster.CreateTopic("t", {{PartitionId(0), Ids({2, 3})}});
  ASSERT_TRUE(cluster.RunUntil([&] { return Synced(cluster, 1, "t", 0); }));

  // Broker 3 dies, then the controller before it has acted on that.
  cluster.Crash(3);
  cluster.Crash(1);
  ASSERT_TRUE(cluster.RunUntil([&] {
    return cluster.ActiveController() == 2 &&
           cluster.controller(2).live_brokers() == std::set<BrokerId>{BrokerId(2)} &&
           Synced(cluster, 2, "t", 0);
  }));
  cluster.RunFor(2 * kSecondUs);
  EXPECT_EQ(*cluster.State("t", 0),
            (zk::PartitionState{BrokerId(2), LeaderEpoch(0), Ids({2, 3}), ControllerEpoch(1)}));
  EXPECT_EQ(cluster.controller(2).elections(), 0);
}

// KafkaController.removeReplicaFromIsr with unclean election on: before 1.1 the last ISR member
// leaves the ISR like any other, which empties it, and its return is an unclean election; from 1.1
// (KAFKA-5642) the ISR keeps its last member, whose return is a clean one.
class LastIsrMemberTest : public ::testing::TestWithParam<KafkaRelease> {};

TEST_P(LastIsrMemberTest, UncleanElectionEmptiesTheIsrOnlyBefore1_1) {
  const KafkaRelease release = GetParam();
  const bool isr_empties = release < KafkaRelease::k1_1;
  BrokerConfig config;
  config.release = release;
  config.unclean_leader_election_enable = true;
  ControllerCluster cluster(config);
  ASSERT_EQ(StartWithControllerOne(cluster), 1);
  cluster.CreateTopic("t", {{PartitionId(0), Ids({2, 3})}});
  ASSERT_TRUE(cluster.RunUntil([&] { return Synced(cluster, 1, "t", 0); }));

  cluster.Crash(3);
  ASSERT_TRUE(cluster.RunUntil(
      [&] { return cluster.State("t", 0)->isr == Ids({2}) && Synced(cluster, 1, "t", 0); }));
  cluster.Crash(2);
  ASSERT_TRUE(cluster.RunUntil([&] {
    return cluster.State("t", 0)->leader == zk::kNoLeader && Synced(cluster, 1, "t", 0);
  }));
  const std::vector<BrokerId> expected_isr = isr_empties ? Ids({}) : Ids({2});
  EXPECT_EQ(*cluster.State("t", 0),
            (zk::PartitionState{zk::kNoLeader, LeaderEpoch(2), expected_isr, ControllerEpoch(1)}));
  const auto offline = Events(cluster.node(1), "partition_offline");
  ASSERT_EQ(offline.size(), 1u);
  EXPECT_EQ(offline[0]->fields["isr"].size(), expected_isr.size());

  // The last ISR member returns and leads: elected from the ISR, or from an empty one.
  cluster.Start(2);
  ASSERT_TRUE(cluster.RunUntil(
      [&] { return cluster.State("t", 0)->leader == BrokerId(2) && Synced(cluster, 1, "t", 0); }));
  EXPECT_EQ(cluster.State("t", 0)->isr, Ids({2}));
  EXPECT_EQ(cluster.controller(1).unclean_elections(), isr_empties ? 1 : 0);
  const auto elected = Events(cluster.node(1), "leader_elected");
  EXPECT_EQ(elected.back()->fields["unclean"], isr_empties);
  EXPECT_EQ(elected.back()->fields["policy"], "unclean");
}

INSTANTIATE_TEST_SUITE_P(Releases, LastIsrMemberTest,
                         ::testing::Values(KafkaRelease::k0_10_0, KafkaRelease::k1_0,
                                           KafkaRelease::k1_1, KafkaRelease::k2_1),
                         [](const ::testing::TestParamInfo<KafkaRelease>& info) {
                           std::string name(KafkaReleaseName(info.param));
                           std::replace(name.begin(), name.end(), '.', '_');
                           return name;
                         });

TEST(ControllerTest, WaitForLastIsrLetsOnlyTheLastIsrMemberLeadAfterAllDied) {
  ControllerOptions options;
  options.election_policy = "wait-for-last-isr";
  ControllerCluster cluster(BrokerConfig(), options);
  ASSERT_EQ(StartWithControllerOne(cluster), 1);
  cluster.CreateTopic("t", {{PartitionId(0), Ids({2, 3})}});
  ASSERT_TRUE(cluster.RunUntil([&] { return Synced(cluster, 1, "t", 0); }));

  // Both replicas die at about the same time (one step or two, as the sessions expire).
  cluster.Crash(2);
  cluster.Crash(3);
  ASSERT_TRUE(cluster.RunUntil([&] {
    return cluster.controller(1).live_brokers().size() == 1 &&
           cluster.State("t", 0)->leader == zk::kNoLeader && Synced(cluster, 1, "t", 0);
  }));
  const std::vector<BrokerId> isr = cluster.State("t", 0)->isr;
  ASSERT_EQ(isr.size(), 1u);  // the ISR never empties: the last member stays recorded
  const int last = isr[0].value();
  const int other = last == 2 ? 3 : 2;

  // The other replica returns first: it may not lead.
  cluster.Start(other);
  ASSERT_TRUE(cluster.RunUntil(
      [&] { return cluster.controller(1).live_brokers().contains(BrokerId(other)); }));
  cluster.RunFor(2 * kSecondUs);
  EXPECT_EQ(cluster.State("t", 0)->leader, zk::kNoLeader);

  // The last ISR member returns and leads, with the ISR reset to it.
  cluster.Start(last);
  ASSERT_TRUE(cluster.RunUntil([&] {
    return cluster.State("t", 0)->leader == BrokerId(last) && Synced(cluster, 1, "t", 0);
  }));
  EXPECT_EQ(cluster.State("t", 0)->isr, Ids({last}));
  EXPECT_EQ(cluster.controller(1).unclean_elections(), 0);
  EXPECT_EQ(Events(cluster.node(1), "leader_elected").back()->fields["policy"],
            "wait-for-last-isr");
}

TEST(ControllerTest, TopicConfigCanDisableUncleanElection) {
  ControllerCluster cluster;  // the broker default allows unclean elections
  ASSERT_EQ(StartWithControllerOne(cluster), 1);
  cluster.CreateTopic("t", {{PartitionId(0), Ids({2, 3})}},
                      {{"unclean.leader.election.enable", "false"}});
  ASSERT_TRUE(cluster.RunUntil([&] { return Synced(cluster, 1, "t", 0); }));
  ShrinkIsr(cluster, "t", 0, Ids({2}));
  cluster.Crash(2);
  ASSERT_TRUE(cluster.RunUntil([&] {
    return cluster.State("t", 0)->leader_epoch.value() > 0 && Synced(cluster, 1, "t", 0);
  }));
  EXPECT_EQ(cluster.State("t", 0)->leader, zk::kNoLeader);
  EXPECT_EQ(cluster.State("t", 0)->isr, Ids({2}));
  EXPECT_EQ(cluster.controller(1).unclean_elections(), 0);
}

TEST(ControllerTest, IsrChangeNotificationSendsUpdateMetadata) {
  ControllerCluster cluster;
  ASSERT_EQ(StartWithControllerOne(cluster), 1);
  cluster.CreateTopic("t", {{PartitionId(0), Ids({2, 3, 1})}});
  ASSERT_TRUE(cluster.RunUntil([&] { return Synced(cluster, 1, "t", 0); }));

  // The leader shrank the ISR and announces it (ReplicationUtils.propagateIsrChanges).
  ShrinkIsr(cluster, "t", 0, Ids({2, 3}));
  ASSERT_TRUE(cluster.world()
                  .Create("admin", zk::IsrChangeNotificationSequentialPath(),
                          zk::EncodeIsrChangeNotification({{"t", PartitionId(0)}}),
                          CreateMode::kPersistentSequential)
                  .ok());
  ASSERT_TRUE(cluster.RunUntil([&] {
    for (int id = 1; id <= 3; ++id) {
      if (!GotUpdateMetadata(cluster.node(id), Tp("t", 0), Ids({2, 3}), BrokerId(2))) {
        return false;
      }
    }
    return cluster.server().Children(zk::kIsrChangeNotificationPath).empty();
  }));
  EXPECT_EQ(cluster.controller(1).partitions().at(Tp("t", 0)).state.isr, Ids({2, 3}));
  EXPECT_EQ(cluster.controller(1).partitions().at(Tp("t", 0)).zk_version, 1);
}

// The partitions each UpdateMetadata that `node` received from index `from` on names, in the
// order the request lists them.
std::vector<std::vector<TopicPartition>> UpdateMetadataPartitions(const ControllerNode& node,
                                                                  size_t from) {
  std::vector<std::vector<TopicPartition>> named;
  for (size_t i = from; i < node.requests.size(); ++i) {
    const auto* request = std::get_if<UpdateMetadataRequest>(&node.requests[i].request);
    if (request == nullptr) continue;
    std::vector<TopicPartition>& partitions = named.emplace_back();
    for (const auto& state : request->partition_states) partitions.push_back(state.tp);
  }
  return named;
}

// Kafka's ControllerBrokerRequestBatch: a LeaderAndIsr names its partitions in the UpdateMetadata
// that goes with it (addLeaderAndIsrRequestForBrokers), so an election announces only the
// partitions elected; a broker's startup announces every partition (onBrokerStartup), as does a
// failure of a broker that led nothing (onBrokerFailure). 0.10.0.1 to 2.x.
TEST(ControllerTest, UpdateMetadataNamesWhatTheStepChangedOrEverythingAtAStartup) {
  ControllerCluster cluster;
  ASSERT_EQ(StartWithControllerOne(cluster), 1);
  cluster.CreateTopic("t", {{PartitionId(0), Ids({2, 3})},
                            {PartitionId(1), Ids({3, 1})},
                            {PartitionId(2), Ids({1, 3})}});
  ASSERT_TRUE(cluster.RunUntil([&] {
    return Synced(cluster, 1, "t", 0) && Synced(cluster, 1, "t", 1) && Synced(cluster, 1, "t", 2);
  }));
  cluster.RunFor(kSecondUs);  // the creation's requests arrive
  // In partition order, each once.
  const std::vector<TopicPartition> all = {Tp("t", 0), Tp("t", 1), Tp("t", 2)};
  // What broker 3's UpdateMetadata requests named after `step`, until a second after the first.
  auto named_after = [&](const std::function<void()>& step) {
    const size_t before = cluster.node(3).requests.size();
    step();
    EXPECT_TRUE(cluster.RunUntil(
        [&] { return !UpdateMetadataPartitions(cluster.node(3), before).empty(); }));
    cluster.RunFor(kSecondUs);
    return UpdateMetadataPartitions(cluster.node(3), before);
  };

  // Broker 2 leads t-0 and hosts nothing else: the election names t-0 alone.
  EXPECT_EQ(named_after([&] { cluster.Crash(2); }),
            (std::vector<std::vector<TopicPartition>>{{Tp("t", 0)}}));
  EXPECT_TRUE(GotUpdateMetadata(cluster.node(3), Tp("t", 0), Ids({3}), BrokerId(3)));
  // Its return names every partition.
  EXPECT_EQ(named_after([&] { cluster.Start(2); }).front(), all);
  // It leads nothing now; its failure elects nothing and names every partition.
  EXPECT_EQ(named_after([&] { cluster.Crash(2); }).front(), all);
  EXPECT_EQ(cluster.controller(1).elections(), 1);
}

TEST(ControllerTest, ControlledShutdownMovesLeadershipAndAnswersWhatRemains) {
  ControllerCluster cluster;
  ASSERT_EQ(StartWithControllerOne(cluster), 1);
  cluster.CreateTopic("led", {{PartitionId(0), Ids({2, 3})}});
  cluster.CreateTopic("followed", {{PartitionId(0), Ids({3, 2})}});
  cluster.CreateTopic("single", {{PartitionId(0), Ids({2})}});
  cluster.CreateTopic("alone", {{PartitionId(0), Ids({2, 3})}});
  ASSERT_TRUE(cluster.RunUntil([&] { return cluster.controller(1).partitions().size() == 4; }));
  ShrinkIsr(cluster, "alone", 0, Ids({2}));  // no other ISR member can take over

  // A broker that is not the controller refuses.
  std::optional<ControlledShutdownResponse> refused;
  ControlledShutdownRequest request;
  request.broker_id = BrokerId(2);
  request.correlation_id = 7;
  cluster.controller(3).HandleControlledShutdown(
      request, [&](ControlledShutdownResponse r) { refused.emplace(std::move(r)); });
  ASSERT_TRUE(cluster.RunUntil([&] { return refused.has_value(); }));
  EXPECT_EQ(refused->error_code, Errc::kNotController);

  std::optional<ControlledShutdownResponse> response;
  cluster.controller(1).HandleControlledShutdown(
      request, [&](ControlledShutdownResponse r) { response.emplace(std::move(r)); });
  ASSERT_TRUE(cluster.RunUntil([&] { return response.has_value(); }));
  EXPECT_EQ(response->error_code, Errc::kNone);
  EXPECT_EQ(response->correlation_id, 7);
  EXPECT_EQ(response->partitions_remaining, std::vector<TopicPartition>{Tp("alone", 0)});

  EXPECT_EQ(*cluster.State("led", 0),
            (zk::PartitionState{BrokerId(3), LeaderEpoch(1), Ids({3}), ControllerEpoch(1)}));
  EXPECT_EQ(*cluster.State("followed", 0),
            (zk::PartitionState{BrokerId(3), LeaderEpoch(1), Ids({3}), ControllerEpoch(1)}));
  EXPECT_EQ(cluster.State("single", 0)->leader, BrokerId(2));
  EXPECT_EQ(cluster.State("alone", 0)->leader, BrokerId(2));
  const auto elected = Events(cluster.node(1), "leader_elected");
  EXPECT_EQ(elected.back()->fields["policy"], "controlled-shutdown");
  EXPECT_EQ(elected.back()->fields["reason"], "controlled_shutdown");

  ASSERT_TRUE(cluster.RunUntil([&] {
    bool stopped = false;
    for (const RecordedRequest& recorded : cluster.node(2).requests) {
      const auto* stop = std::get_if<StopReplicaRequest>(&recorded.request);
      if (stop == nullptr) continue;
      EXPECT_FALSE(stop->delete_partitions);
      EXPECT_EQ(stop->partitions, std::vector<TopicPartition>{Tp("followed", 0)});
      stopped = true;
    }
    return stopped && GotLeaderAndIsr(cluster.node(3), Tp("led", 0), BrokerId(3), LeaderEpoch(1));
  }));
}

TEST(ControllerTest, TopicDeletionStopsAndDeletesReplicasThenRemovesTheZnodes) {
  BrokerConfig config;
  config.delete_topic_enable = true;
  ControllerCluster cluster(config);
  ASSERT_EQ(StartWithControllerOne(cluster), 1);
  cluster.CreateTopic("t", {{PartitionId(0), Ids({2, 3})}, {PartitionId(1), Ids({3, 1})}},
                      {{"retention.ms", "1000"}});
  cluster.CreateTopic("kept", {{PartitionId(0), Ids({1, 2})}});
  ASSERT_TRUE(cluster.RunUntil([&] { return cluster.controller(1).partitions().size() == 3; }));

  ASSERT_TRUE(cluster.world().Create("admin", zk::DeleteTopicPath("t")).ok());
  ASSERT_TRUE(cluster.RunUntil([&] {
    return !cluster.server().Read(zk::TopicPath("t")) &&
           !cluster.server().Read(zk::DeleteTopicPath("t")) &&
           !Events(cluster.node(1), "topic_deleted").empty();
  }));
  EXPECT_FALSE(cluster.server().Read(zk::TopicConfigPath("t")).has_value());
  EXPECT_FALSE(cluster.server().Read(zk::PartitionStatePath("t", PartitionId(0))).has_value());
  EXPECT_TRUE(cluster.server().Read(zk::TopicPath("kept")).has_value());
  EXPECT_FALSE(cluster.controller(1).partitions().contains(Tp("t", 0)));
  EXPECT_TRUE(cluster.controller(1).partitions().contains(Tp("kept", 0)));
  EXPECT_EQ(Events(cluster.node(1), "topic_deleted").size(), 1u);

  auto deleted = [&](int id) {
    std::vector<TopicPartition> partitions;
    for (const RecordedRequest& recorded : cluster.node(id).requests) {
      const auto* stop = std::get_if<StopReplicaRequest>(&recorded.request);
      if (stop != nullptr && stop->delete_partitions) {
        partitions.insert(partitions.end(), stop->partitions.begin(), stop->partitions.end());
      }
    }
    return partitions;
  };
  EXPECT_EQ(deleted(1), std::vector<TopicPartition>{Tp("t", 1)});
  EXPECT_EQ(deleted(2), std::vector<TopicPartition>{Tp("t", 0)});
  EXPECT_EQ(deleted(3), (std::vector<TopicPartition>{Tp("t", 0), Tp("t", 1)}));
}

TEST(ControllerTest, TopicDeletionWaitsForAReplicaThatIsDown) {
  BrokerConfig config;
  config.delete_topic_enable = true;
  ControllerCluster cluster(config);
  ASSERT_EQ(StartWithControllerOne(cluster), 1);
  cluster.CreateTopic("t", {{PartitionId(0), Ids({2, 3})}});
  ASSERT_TRUE(cluster.RunUntil([&] { return Synced(cluster, 1, "t", 0); }));
  cluster.Crash(3);
  ASSERT_TRUE(cluster.RunUntil(
      [&] { return !cluster.controller(1).live_brokers().contains(BrokerId(3)); }));

  ASSERT_TRUE(cluster.world().Create("admin", zk::DeleteTopicPath("t")).ok());
  cluster.RunFor(5 * kSecondUs);
  // Broker 2 deleted its replica; broker 3's is still on its disk: the topic stays.
  EXPECT_TRUE(cluster.server().Read(zk::TopicPath("t")).has_value());
  EXPECT_EQ(Events(cluster.node(1), "topic_deletion_started").size(), 1u);
  EXPECT_TRUE(Events(cluster.node(1), "topic_deleted").empty());

  cluster.Start(3);
  ASSERT_TRUE(cluster.RunUntil([&] { return !Events(cluster.node(1), "topic_deleted").empty(); }));
  EXPECT_FALSE(cluster.server().Read(zk::TopicPath("t")).has_value());
  EXPECT_FALSE(cluster.server().Read(zk::DeleteTopicPath("t")).has_value());
  bool deleted_on_3 = false;
  for (const RecordedRequest& recorded : cluster.node(3).requests) {
    const auto* stop = std::get_if<StopReplicaRequest>(&recorded.request);
    if (stop != nullptr && stop->delete_partitions) {
      EXPECT_EQ(stop->partitions, std::vector<TopicPartition>{Tp("t", 0)});
      deleted_on_3 = true;
    }
  }
  EXPECT_TRUE(deleted_on_3);
}

TEST(ControllerTest, TopicDeletionLeavesTheMarkerWhenDisabled) {
  ControllerCluster cluster;  // delete.topic.enable=false, 0.10's default
  ASSERT_EQ(StartWithControllerOne(cluster), 1);
  cluster.CreateTopic("t", {{PartitionId(0), Ids({2, 3})}});
  ASSERT_TRUE(cluster.RunUntil([&] { return Synced(cluster, 1, "t", 0); }));
  ASSERT_TRUE(cluster.world().Create("admin", zk::DeleteTopicPath("t")).ok());
  cluster.RunFor(5 * kSecondUs);

  EXPECT_TRUE(cluster.server().Read(zk::DeleteTopicPath("t")).has_value());
  EXPECT_TRUE(cluster.server().Read(zk::TopicPath("t")).has_value());
  EXPECT_TRUE(cluster.controller(1).partitions().contains(Tp("t", 0)));
  for (int id = 1; id <= 3; ++id) {
    for (const RecordedRequest& recorded : cluster.node(id).requests) {
      EXPECT_FALSE(std::holds_alternative<StopReplicaRequest>(recorded.request));
    }
  }
}

ControllerEpoch RequestEpoch(const ksim::Message& message) {
  if (const auto* r = std::get_if<LeaderAndIsrRequest>(&message)) return r->controller_epoch;
  if (const auto* r = std::get_if<UpdateMetadataRequest>(&message)) return r->controller_epoch;
  if (const auto* r = std::get_if<StopReplicaRequest>(&message)) return r->controller_epoch;
  return ControllerEpoch(-1);
}

TEST(ControllerTest, StaleControllerRequestsCarryTheOldEpoch) {
  ControllerCluster cluster;
  ASSERT_EQ(StartWithControllerOne(cluster), 1);
  cluster.CreateTopic("t", {{PartitionId(0), Ids({2, 3})}});
  ASSERT_TRUE(cluster.RunUntil([&] { return Synced(cluster, 1, "t", 0); }));

  // Broker 1 loses ZooKeeper but not the brokers: its session expires on the server, another
  // broker becomes controller, and broker 1 does not know yet.
  ASSERT_TRUE(cluster.world().topology().Partition({{"broker-1"}, {"zk"}}, false).ok());
  ASSERT_TRUE(cluster.RunUntil([&] {
    return (cluster.controller(2).is_active() || cluster.controller(3).is_active()) &&
           cluster.controller(cluster.controller(2).is_active() ? 2 : 3).live_brokers().size() == 2;
  }));
  const int next = cluster.controller(2).is_active() ? 2 : 3;
  EXPECT_EQ(cluster.controller(next).epoch(), ControllerEpoch(2));
  // Broker 3 has heard from the new controller.
  ASSERT_TRUE(cluster.RunUntil([&] {
    for (const RecordedRequest& recorded : cluster.node(3).requests) {
      if (RequestEpoch(recorded.request) == ControllerEpoch(2)) return true;
    }
    return false;
  }));
  EXPECT_TRUE(cluster.controller(1).is_active());
  EXPECT_EQ(cluster.controller(1).epoch(), ControllerEpoch(1));

  // The stale controller still acts (a controlled shutdown of broker 3, a follower of t-0): what
  // it sends carries epoch 1, which brokers fence with STALE_CONTROLLER_EPOCH.
  const size_t before = cluster.node(3).requests.size();
  std::optional<ControlledShutdownResponse> response;
  ControlledShutdownRequest request;
  request.broker_id = BrokerId(3);
  cluster.controller(1).HandleControlledShutdown(
      request, [&](ControlledShutdownResponse r) { response.emplace(std::move(r)); });
  ASSERT_TRUE(cluster.RunUntil([&] {
    for (size_t i = before; i < cluster.node(3).requests.size(); ++i) {
      if (cluster.node(3).requests[i].from == "broker-1") return true;
    }
    return false;
  })) << "answered: "
      << response.has_value()
      << ", requests queued for broker 3: " << cluster.node(1).channel().queued(BrokerId(3));
  bool saw_new_epoch_before_stale = false;
  for (int id = 2; id <= 3; ++id) {
    bool saw_new = false;
    for (const RecordedRequest& recorded : cluster.node(id).requests) {
      const ControllerEpoch epoch = RequestEpoch(recorded.request);
      if (recorded.from == "broker-1") {
        EXPECT_EQ(epoch, ControllerEpoch(1)) << MessageKind(recorded.request);
        if (saw_new) saw_new_epoch_before_stale = true;
      } else {
        EXPECT_EQ(recorded.from, BrokerNode(next));
        EXPECT_EQ(epoch, ControllerEpoch(2)) << MessageKind(recorded.request);
        saw_new = true;
      }
    }
  }
  EXPECT_TRUE(saw_new_epoch_before_stale);

  // Healed, broker 1 learns that its session expired, resigns and follows the new controller.
  cluster.world().topology().Heal();
  ASSERT_TRUE(cluster.RunUntil([&] {
    return !cluster.controller(1).is_active() &&
           cluster.controller(1).known_controller() == BrokerId(next) &&
           cluster.controller(next).live_brokers().contains(BrokerId(1));
  }));
  EXPECT_EQ(Events(cluster.node(1), "controller_resigned").size(), 1u);
  EXPECT_EQ(cluster.ActiveController(), next);
}

TEST(ControllerTest, DestroyingTheControllerMidStepRunsNoCallback) {
  ControllerCluster cluster;
  ASSERT_EQ(StartWithControllerOne(cluster), 1);
  ASSERT_TRUE(cluster.world()
                  .Create("admin", zk::TopicPath("t"),
                          zk::EncodeReplicaAssignment({{PartitionId(0), Ids({1, 2, 3})}}))
                  .ok());
  // The controller's watch fired or is about to: crash it while its step waits for ZooKeeper.
  cluster.RunFor(1'000);
  cluster.Crash(1);
  ASSERT_TRUE(cluster.RunUntil([&] { return cluster.ActiveController().has_value(); }));
  ASSERT_TRUE(cluster.RunUntil([&] {
    return cluster.State("t", 0).has_value() && cluster.State("t", 0)->leader != BrokerId(1);
  }));
}

TEST(ControllerTest, ValidateOptionsRefusesUnknownPoliciesAndLongestLog) {
  EXPECT_TRUE(Controller::ValidateOptions({}).ok());
  EXPECT_TRUE(Controller::ValidateOptions({"clean"}).ok());
  EXPECT_TRUE(Controller::ValidateOptions({"wait-for-last-isr"}).ok());
  EXPECT_EQ(Controller::ValidateOptions({"longest-log"}).code(), Errc::kInvalidArgument);
  EXPECT_EQ(Controller::ValidateOptions({"fastest"}).code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace ksim::sim::testing
