#include "sim/world/topology.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ksim::sim {
namespace {

using Names = std::vector<std::vector<std::string>>;

const std::vector<std::string> kCluster = {"broker-1", "broker-2", "broker-3", "zk", "p1", "c1"};

LinkSpec Spec(TimeUs min_us, TimeUs max_us, uint32_t loss_ppm = 0, int64_t bandwidth = 0) {
  return LinkSpec{min_us, max_us, loss_ppm, bandwidth};
}

class TopologyTest : public ::testing::Test {
 protected:
  TopologyTest() : topology_(Topology::FullMesh(kCluster, Spec(1000, 5000))) {}

  bool CanSend(std::string_view a, std::string_view b) const {
    return topology_->CanSend(topology_->Id(a), topology_->Id(b));
  }
  bool Reachable(std::string_view a, std::string_view b) const {
    return topology_->Reachable(topology_->Id(a), topology_->Id(b));
  }
  // Every ordered pair of distinct nodes that can send right now, as "a>b".
  std::vector<std::string> SendablePairs() const {
    std::vector<std::string> pairs;
    for (const auto& a : kCluster) {
      for (const auto& b : kCluster) {
        if (a != b && CanSend(a, b)) pairs.push_back(a + ">" + b);
      }
    }
    return pairs;
  }

  std::unique_ptr<Topology> topology_;
};

TEST_F(TopologyTest, FullMeshLinksEveryPairBothWaysWithTheDefaultSpec) {
  EXPECT_EQ(topology_->NodeCount(), 6u);
  EXPECT_EQ(SendablePairs().size(), 30u);
  const auto link = topology_->Link(topology_->Id("zk"), topology_->Id("p1"));
  ASSERT_TRUE(link.has_value());
  EXPECT_EQ(*link, Spec(1000, 5000));
  EXPECT_EQ(topology_->Name(topology_->Id("c1")), "c1");
  EXPECT_EQ(topology_->Id("broker-1"), NodeId(0));  // ids in the order nodes were added
  EXPECT_FALSE(topology_->Find("broker-9").has_value());
  EXPECT_EQ(topology_->ComponentNames(), Names({kCluster}));
}

TEST_F(TopologyTest, AddNodeRejectsDuplicateAndEmptyNames) {
  EXPECT_EQ(topology_->AddNode("zk").status().code(), Errc::kAlreadyExists);
  EXPECT_EQ(topology_->AddNode("").status().code(), Errc::kInvalidArgument);
  EXPECT_EQ(topology_->NodeCount(), 6u);
  // A node added later has no links until the mesh is completed.
  auto late = topology_->AddNode("c2");
  ASSERT_TRUE(late.ok());
  EXPECT_FALSE(topology_->CanSend(*late, topology_->Id("broker-1")));
  ASSERT_TRUE(topology_->ConnectFullMesh(Spec(10, 20)).ok());
  EXPECT_TRUE(topology_->CanSend(*late, topology_->Id("broker-1")));
  EXPECT_EQ(*topology_->Link(*late, topology_->Id("broker-1")), Spec(10, 20));
  // Existing links kept their spec.
  EXPECT_EQ(*topology_->Link(topology_->Id("zk"), topology_->Id("p1")), Spec(1000, 5000));
}

TEST_F(TopologyTest, SetLinkOverridesOnePairAndDirectedOverridesOneDirection) {
  ASSERT_TRUE(topology_->SetLink("broker-1", "broker-3", Spec(20000, 40000, 10000)).ok());
  const NodeId b1 = topology_->Id("broker-1"), b2 = topology_->Id("broker-2");
  const NodeId b3 = topology_->Id("broker-3");
  EXPECT_EQ(*topology_->Link(b1, b3), Spec(20000, 40000, 10000));
  EXPECT_EQ(*topology_->Link(b3, b1), Spec(20000, 40000, 10000));
  EXPECT_EQ(*topology_->Link(b1, b2), Spec(1000, 5000));

  ASSERT_TRUE(topology_->SetLinkDirected("broker-2", "broker-1", Spec(7, 7, 0, 1000)).ok());
  EXPECT_EQ(*topology_->Link(b2, b1), Spec(7, 7, 0, 1000));
  EXPECT_EQ(*topology_->Link(b1, b2), Spec(1000, 5000));
}

TEST_F(TopologyTest, BadLinkInputIsAnErrorAndChangesNothing) {
  EXPECT_EQ(topology_->SetLink("broker-1", "broker-2", Spec(5, 4)).code(), Errc::kInvalidArgument);
  EXPECT_EQ(topology_->SetLink("broker-1", "broker-2", Spec(-1, 4)).code(), Errc::kInvalidArgument);
  EXPECT_EQ(topology_->SetLink("broker-1", "broker-2", Spec(1, 4, 1'000'001)).code(),
            Errc::kInvalidArgument);
  EXPECT_EQ(topology_->SetLink("broker-1", "broker-2", Spec(1, 4, 0, -5)).code(),
            Errc::kInvalidArgument);
  EXPECT_EQ(topology_->SetLink("broker-1", "broker-1", Spec(1, 4)).code(), Errc::kInvalidArgument);
  EXPECT_EQ(topology_->SetLink("broker-1", "nobody", Spec(1, 4)).code(), Errc::kNotFound);
  EXPECT_EQ(*topology_->Link(topology_->Id("broker-1"), topology_->Id("broker-2")),
            Spec(1000, 5000));
  EXPECT_TRUE(ValidateLinkSpec(Spec(0, 0, 1'000'000, 0)).ok());
}

TEST_F(TopologyTest, PartitionCutsOnlyLinksAcrossSidesAndNodesOnNoSideKeepTheirs) {
  ASSERT_TRUE(topology_->Partition({{"broker-1"}, {"broker-2", "broker-3"}}, false).ok());
  EXPECT_FALSE(CanSend("broker-1", "broker-2"));
  EXPECT_FALSE(CanSend("broker-2", "broker-1"));
  EXPECT_FALSE(CanSend("broker-3", "broker-1"));
  EXPECT_TRUE(CanSend("broker-2", "broker-3"));
  // zk, p1, c1 are on no side: they still talk to everyone.
  EXPECT_TRUE(CanSend("zk", "broker-1"));
  EXPECT_TRUE(CanSend("broker-1", "zk"));
  EXPECT_TRUE(CanSend("zk", "broker-2"));
  EXPECT_EQ(SendablePairs().size(), 30u - 4u);
  // broker-1 still reaches broker-2 through zk (multi-hop), though it cannot send to it directly.
  EXPECT_TRUE(Reachable("broker-1", "broker-2"));
  EXPECT_EQ(topology_->ComponentNames(), Names({kCluster}));
}

TEST_F(TopologyTest, ComponentsAreThePartitionSides) {
  ASSERT_TRUE(
      topology_->Partition({{"broker-1", "zk"}, {"broker-2", "broker-3", "p1", "c1"}}, false).ok());
  EXPECT_EQ(topology_->ComponentNames(),
            Names({{"broker-1", "zk"}, {"broker-2", "broker-3", "p1", "c1"}}));
  EXPECT_FALSE(Reachable("broker-1", "broker-2"));
  EXPECT_TRUE(Reachable("p1", "broker-3"));

  // Three sides: three components.
  topology_->Heal();
  ASSERT_TRUE(
      topology_->Partition({{"broker-1"}, {"broker-2"}, {"broker-3", "zk", "p1", "c1"}}, false)
          .ok());
  EXPECT_EQ(topology_->ComponentNames(),
            Names({{"broker-1"}, {"broker-2"}, {"broker-3", "zk", "p1", "c1"}}));
}

TEST_F(TopologyTest, PartitionsAddUpUntilHeal) {
  ASSERT_TRUE(topology_->Partition({{"broker-1"}, {"broker-2"}}, false).ok());
  ASSERT_TRUE(topology_->Partition({{"broker-3"}, {"zk"}}, false).ok());
  EXPECT_FALSE(CanSend("broker-1", "broker-2"));  // the first cut holds
  EXPECT_FALSE(CanSend("zk", "broker-3"));
  EXPECT_TRUE(CanSend("broker-1", "broker-3"));
  EXPECT_EQ(SendablePairs().size(), 26u);
  topology_->Heal();
  EXPECT_EQ(SendablePairs().size(), 30u);
  EXPECT_TRUE(CanSend("broker-1", "broker-2"));
}

TEST_F(TopologyTest, OneWayPartitionCutsOnlyLinksLeavingTheFirstSide) {
  ASSERT_TRUE(topology_->Partition({{"broker-1"}, {"broker-2"}, {"broker-3"}}, true).ok());
  EXPECT_FALSE(CanSend("broker-1", "broker-2"));
  EXPECT_FALSE(CanSend("broker-1", "broker-3"));
  EXPECT_TRUE(CanSend("broker-2", "broker-1"));
  EXPECT_TRUE(CanSend("broker-3", "broker-1"));
  EXPECT_TRUE(CanSend("broker-2", "broker-3"));  // not sides[0]: untouched
  EXPECT_TRUE(CanSend("broker-3", "broker-2"));
  // broker-1 can still get to broker-2 through zk; a conversation with it is not possible
  // directly, so the sides show broker-1 apart only once zk is cut off from it too.
  EXPECT_TRUE(Reachable("broker-1", "broker-2"));
  EXPECT_TRUE(Reachable("broker-2", "broker-1"));
  ASSERT_TRUE(topology_->Partition({{"broker-1"}, {"zk", "p1", "c1"}}, true).ok());
  EXPECT_FALSE(Reachable("broker-1", "broker-2"));
  EXPECT_TRUE(Reachable("broker-2", "broker-1"));
  EXPECT_EQ(topology_->ComponentNames(),
            Names({{"broker-1"}, {"broker-2", "broker-3", "zk", "p1", "c1"}}));
}

TEST_F(TopologyTest, IsolateCutsEveryLinkOfTheNodeUntilHeal) {
  ASSERT_TRUE(topology_->Isolate("broker-2").ok());
  for (const auto& other : kCluster) {
    if (other == "broker-2") continue;
    EXPECT_FALSE(CanSend("broker-2", other)) << other;
    EXPECT_FALSE(CanSend(other, "broker-2")) << other;
    EXPECT_FALSE(Reachable(other, "broker-2")) << other;
  }
  EXPECT_EQ(SendablePairs().size(), 20u);
  EXPECT_EQ(topology_->ComponentNames(),
            Names({{"broker-1", "broker-3", "zk", "p1", "c1"}, {"broker-2"}}));
  topology_->Heal();
  EXPECT_EQ(SendablePairs().size(), 30u);
}

TEST_F(TopologyTest, DownNodeNeitherSendsNorReceivesAndKeepsItsCutsWhenUp) {
  ASSERT_TRUE(topology_->Partition({{"broker-3"}, {"zk"}}, false).ok());
  ASSERT_TRUE(topology_->SetNodeUp("broker-3", false).ok());
  EXPECT_FALSE(topology_->IsUp(topology_->Id("broker-3")));
  EXPECT_FALSE(CanSend("broker-3", "broker-1"));
  EXPECT_FALSE(CanSend("broker-1", "broker-3"));
  EXPECT_FALSE(Reachable("broker-1", "broker-3"));
  EXPECT_EQ(topology_->ComponentNames(),
            Names({{"broker-1", "broker-2", "zk", "p1", "c1"}, {"broker-3"}}));
  ASSERT_TRUE(topology_->SetNodeUp("broker-3", true).ok());
  EXPECT_TRUE(CanSend("broker-3", "broker-1"));
  EXPECT_FALSE(CanSend("broker-3", "zk"));  // the partition outlived the crash
  EXPECT_EQ(topology_->SetNodeUp("broker-9", true).code(), Errc::kNotFound);
}

TEST_F(TopologyTest, BadPartitionInputIsAnErrorAndCutsNothing) {
  EXPECT_EQ(topology_->Partition({{"broker-1"}, {"broker-7"}}, false).code(), Errc::kNotFound);
  EXPECT_EQ(topology_->Partition({{"broker-1", "zk"}, {"zk"}}, false).code(),
            Errc::kInvalidArgument);
  EXPECT_EQ(topology_->Isolate("nobody").code(), Errc::kNotFound);
  EXPECT_EQ(SendablePairs().size(), 30u);
}

TEST_F(TopologyTest, ChangeEventsListExactlyTheLinksThatFlipped) {
  std::vector<TopologyChange> changes;
  const auto id = topology_->AddListener([&](const TopologyChange& c) { changes.push_back(c); });
  const NodeId b1 = topology_->Id("broker-1"), b2 = topology_->Id("broker-2");
  const NodeId zk = topology_->Id("zk");

  ASSERT_TRUE(topology_->Partition({{"broker-2"}, {"broker-1"}}, true).ok());
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].kind, TopologyChangeKind::kPartition);
  EXPECT_EQ(changes[0].cut, (std::vector<DirectedLink>{{b2, b1}}));
  EXPECT_EQ(changes[0].nodes, (std::vector<NodeId>{b2, b1}));

  // Isolating broker-1 cuts all its links but the one already cut.
  ASSERT_TRUE(topology_->Isolate("broker-1").ok());
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[1].kind, TopologyChangeKind::kIsolate);
  EXPECT_EQ(changes[1].cut.size(), 9u);
  EXPECT_TRUE(std::is_sorted(changes[1].cut.begin(), changes[1].cut.end()));
  EXPECT_EQ(changes[1].cut.front(), (DirectedLink{b1, b2}));

  ASSERT_TRUE(topology_->SetNodeUp("zk", false).ok());
  ASSERT_TRUE(topology_->SetNodeUp("zk", false).ok());  // no change, no event
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[2].kind, TopologyChangeKind::kNodeDown);
  EXPECT_EQ(changes[2].nodes, (std::vector<NodeId>{zk}));

  topology_->Heal();
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_EQ(changes[3].kind, TopologyChangeKind::kHeal);
  EXPECT_EQ(changes[3].restored.size(), 10u);
  EXPECT_TRUE(changes[3].cut.empty());

  topology_->RemoveListener(id);
  topology_->Heal();
  EXPECT_EQ(changes.size(), 4u);
}

TEST_F(TopologyTest, SlowDelayIsANodePropertyWithItsOwnEvent) {
  std::vector<TopologyChange> changes;
  topology_->AddListener([&](const TopologyChange& c) { changes.push_back(c); });
  const NodeId b3 = topology_->Id("broker-3");
  EXPECT_EQ(topology_->SlowExtraUs(b3), 0);
  ASSERT_TRUE(topology_->SetSlow("broker-3", 15'000'000).ok());
  EXPECT_EQ(topology_->SlowExtraUs(b3), 15'000'000);
  EXPECT_EQ(topology_->SlowExtraUs(topology_->Id("broker-1")), 0);
  EXPECT_TRUE(CanSend("broker-3", "broker-1"));  // slow is not cut
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].kind, TopologyChangeKind::kSlow);
  EXPECT_EQ(TopologyChangeKindName(changes[0].kind), "slow");
  EXPECT_EQ(changes[0].nodes, (std::vector<NodeId>{b3}));
  EXPECT_EQ(topology_->SetSlow("broker-3", -1).code(), Errc::kInvalidArgument);
  EXPECT_EQ(topology_->SetSlow("broker-9", 1).code(), Errc::kNotFound);
  EXPECT_EQ(topology_->SlowExtraUs(b3), 15'000'000);
}

TEST_F(TopologyTest, ListenersRunInTheOrderTheyWereAdded) {
  std::string order;
  topology_->AddListener([&](const TopologyChange&) { order += "a"; });
  topology_->AddListener([&](const TopologyChange&) { order += "b"; });
  topology_->Heal();
  EXPECT_EQ(order, "ab");
}

TEST(TopologyHandBuiltTest, MessagesTakeOnlyDirectLinks) {
  // A line a - b - c: a reaches c through b but cannot send to it.
  Topology topology;
  for (const char* name : {"a", "b", "c"}) ASSERT_TRUE(topology.AddNode(name).ok());
  ASSERT_TRUE(topology.SetLink("a", "b", Spec(1, 2)).ok());
  ASSERT_TRUE(topology.SetLink("b", "c", Spec(1, 2)).ok());
  const NodeId a = topology.Id("a"), b = topology.Id("b"), c = topology.Id("c");
  EXPECT_TRUE(topology.CanSend(a, b));
  EXPECT_FALSE(topology.CanSend(a, c));
  EXPECT_FALSE(topology.Link(a, c).has_value());
  EXPECT_TRUE(topology.Reachable(a, c));
  EXPECT_EQ(topology.ComponentNames(), Names({{"a", "b", "c"}}));
  // A one-way link b -> c only: c is reachable from a, a is not from c.
  ASSERT_TRUE(topology.Partition({{"c"}, {"b"}}, true).ok());
  EXPECT_TRUE(topology.Reachable(a, c));
  EXPECT_FALSE(topology.Reachable(c, a));
  EXPECT_EQ(topology.ComponentNames(), Names({{"a", "b"}, {"c"}}));
}

}  // namespace
}  // namespace ksim::sim
