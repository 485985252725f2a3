// The simulated ZooKeeper's data tree and watches, driven through real clients over the virtual
// network: ZooKeeper 3.4's answers (Stat, versions, errors in its order, sequential names), its
// one-shot watch semantics, its ordering guarantee (a watch event before the read that sees the
// change), and Kafka's controller election built on them. Session lifetimes (pings, expiry,
// ZooKeeper down) are in zookeeper_session_test.cc.
#include "sim/world/zookeeper.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/zk/paths.h"
#include "tests/support/sim/zookeeper_test_util.h"

namespace ksim::sim {
namespace {

using testing::kSecondUs;
using testing::ZooKeeperWorld;

TEST(ZooKeeperTest, CreateGetSetDeleteFollowVersions) {
  ZooKeeperWorld world;
  world.StartClient("broker-1");
  ASSERT_TRUE(world.Connected("broker-1"));

  Result<std::string> created = world.Create("broker-1", "/a", "x");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(*created, "/a");

  Result<ZnodeData> read = world.GetData("broker-1", "/a");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->data, "x");
  EXPECT_EQ(read->stat.version, 0);
  EXPECT_EQ(read->stat.czxid, read->stat.mzxid);
  EXPECT_EQ(read->stat.data_length, 1);
  EXPECT_EQ(read->stat.num_children, 0);
  EXPECT_EQ(read->stat.ephemeral_owner, kNoSession);
  const Zxid created_zxid = read->stat.czxid;

  Result<ZnodeStat> set = world.SetData("broker-1", "/a", "yy", 0);
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->version, 1);
  EXPECT_GT(set->mzxid, created_zxid);
  EXPECT_EQ(set->czxid, created_zxid);
  EXPECT_EQ(set->data_length, 2);

  // A stale expected version is refused and changes nothing.
  EXPECT_EQ(world.SetData("broker-1", "/a", "zzz", 0).status(), Errc::kBadVersion);
  EXPECT_EQ(world.GetData("broker-1", "/a")->data, "yy");
  EXPECT_TRUE(world.SetData("broker-1", "/a", "any", kAnyVersion).ok());  // version 2 now

  EXPECT_EQ(world.Delete("broker-1", "/a", 1), Errc::kBadVersion);
  EXPECT_TRUE(world.Delete("broker-1", "/a", 2).ok());
  EXPECT_EQ(world.GetData("broker-1", "/a").status(), Errc::kNoNode);
  Result<std::optional<ZnodeStat>> exists = world.Exists("broker-1", "/a");
  ASSERT_TRUE(exists.ok());
  EXPECT_FALSE(exists->has_value());
  EXPECT_FALSE(world.server().Read("/a").has_value());
}

TEST(ZooKeeperTest, ErrorsComeInZooKeepersOrder) {
  ZooKeeperWorld world;
  world.StartClient("broker-1");
  ASSERT_TRUE(world.Connected("broker-1"));
  ASSERT_TRUE(world.Create("broker-1", "/p").ok());
  ASSERT_TRUE(world.Create("broker-1", "/p/c").ok());

  EXPECT_EQ(world.Create("broker-1", "/p").status(), Errc::kNodeExists);
  EXPECT_EQ(world.Create("broker-1", "/missing/c").status(), Errc::kNoNode);
  EXPECT_EQ(world.Create("broker-1", "/").status(), Errc::kNodeExists);
  EXPECT_EQ(world.Delete("broker-1", "/missing"), Errc::kNoNode);
  EXPECT_EQ(world.SetData("broker-1", "/missing", "x").status(), Errc::kNoNode);
  EXPECT_EQ(world.GetChildren("broker-1", "/missing").status(), Errc::kNoNode);
  // BADVERSION is checked before NOTEMPTY (PrepRequestProcessor).
  EXPECT_EQ(world.Delete("broker-1", "/p", 7), Errc::kBadVersion);
  EXPECT_EQ(world.Delete("broker-1", "/p"), Errc::kNotEmpty);
  EXPECT_EQ(world.Delete("broker-1", "/"), Errc::kInvalidArgument);
  EXPECT_EQ(world.Delete("broker-1", "/zookeeper"), Errc::kInvalidArgument);

  ASSERT_TRUE(world.Create("broker-1", "/e", "", CreateMode::kEphemeral).ok());
  EXPECT_EQ(world.Create("broker-1", "/e/c").status(), Errc::kNoChildrenForEphemerals);
  EXPECT_EQ(world.Create("broker-1", "/e/c", "", CreateMode::kEphemeral).status(),
            Errc::kNoChildrenForEphemerals);

  // Malformed paths never leave the client.
  for (const char* bad : {"", "a", "/a/", "/a//b", "/a/./b", "/a/../b", "/."}) {
    EXPECT_EQ(world.Create("broker-1", bad).status(), Errc::kInvalidArgument) << bad;
    EXPECT_EQ(world.GetData("broker-1", bad).status(), Errc::kInvalidArgument) << bad;
  }
  // A sequential create may end in '/': the counter becomes the name.
  Result<std::string> seq = world.Create("broker-1", "/p/", "", CreateMode::kPersistentSequential);
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  EXPECT_EQ(*seq, "/p/0000000001");
}

TEST(ZooKeeperTest, SequentialNamesCountChildCreationsOfTheParent) {
  ZooKeeperWorld world;
  world.StartClient("broker-1");
  ASSERT_TRUE(world.Connected("broker-1"));
  ASSERT_TRUE(world.Create("broker-1", "/q").ok());
  for (int i = 0; i < 3; ++i) {
    Result<std::string> path =
        world.Create("broker-1", "/q/n-", "d", CreateMode::kPersistentSequential);
    ASSERT_TRUE(path.ok());
    EXPECT_EQ(*path, "/q/n-000000000" + std::to_string(i));
  }
  // Deleting does not rewind the counter (cversion counts creations); other children count too.
  ASSERT_TRUE(world.Delete("broker-1", "/q/n-0000000001").ok());
  ASSERT_TRUE(world.Create("broker-1", "/q/plain").ok());
  EXPECT_EQ(*world.Create("broker-1", "/q/n-", "", CreateMode::kEphemeralSequential),
            "/q/n-0000000004");
  EXPECT_EQ(world.server().Read("/q")->stat.cversion, 5);

  Result<std::vector<std::string>> children = world.GetChildren("broker-1", "/q");
  ASSERT_TRUE(children.ok());
  EXPECT_EQ(*children,
            (std::vector<std::string>{"n-0000000000", "n-0000000002", "n-0000000004", "plain"}));
  EXPECT_EQ(*SequenceNumber("n-0000000004"), 4);
  EXPECT_EQ(SequenceNumber("plain").status(), Errc::kInvalidArgument);
}

TEST(ZooKeeperTest, KafkaIsrChangeNotificationCreatesItsParent) {
  ZooKeeperWorld world;
  world.StartClient("broker-1");
  ASSERT_TRUE(world.Connected("broker-1"));
  const std::string data = zk::EncodeIsrChangeNotification({{"t", PartitionId(0)}});
  std::optional<Result<std::string>> out;
  CreateWithParents(world.client("broker-1"), zk::IsrChangeNotificationSequentialPath(), data,
                    CreateMode::kPersistentSequential,
                    [&](Result<std::string> r) { out.emplace(std::move(r)); });
  Result<std::string> created = world.Wait(out);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(*created, "/isr_change_notification/isr_change_0000000000");
  EXPECT_EQ(world.server().Read(*created)->data, data);

  // The broker's startup paths, some nested two deep.
  for (const std::string& path : zk::CommonPaths()) {
    std::optional<Status> ensured;
    EnsurePersistentPath(world.client("broker-1"), path, [&](Status s) { ensured.emplace(s); });
    EXPECT_TRUE(world.Wait(ensured).ok()) << path;
    EXPECT_TRUE(world.server().Read(path).has_value()) << path;
  }
  std::optional<Status> again;  // already there: fine
  EnsurePersistentPath(world.client("broker-1"), "/config/topics",
                       [&](Status s) { again.emplace(s); });
  EXPECT_TRUE(world.Wait(again).ok());
}

TEST(ZooKeeperTest, DataWatchFiresOnceUntilSetAgain) {
  ZooKeeperWorld world;
  world.StartClient("broker-1");
  world.StartClient("broker-2");
  ASSERT_TRUE(world.Connected("broker-1") && world.Connected("broker-2"));
  ASSERT_TRUE(world.Create("broker-1", "/w", "0").ok());

  ASSERT_TRUE(world.GetData("broker-2", "/w", /*watch=*/true).ok());
  ASSERT_TRUE(world.SetData("broker-1", "/w", "1").ok());
  ASSERT_TRUE(world.SetData("broker-1", "/w", "2").ok());
  world.RunFor(kSecondUs);
  EXPECT_EQ(world.node("broker-2").watch_events,
            (std::vector<WatchEvent>{{WatchEventType::kNodeDataChanged, "/w"}}));
  EXPECT_EQ(world.client("broker-2").watch_count(), 0u);

  // Set again, it fires again; a delete fires NodeDeleted on a data watch.
  ASSERT_TRUE(world.Exists("broker-2", "/w", /*watch=*/true).ok());
  ASSERT_TRUE(world.Delete("broker-1", "/w").ok());
  world.RunFor(kSecondUs);
  ASSERT_EQ(world.node("broker-2").watch_events.size(), 2u);
  EXPECT_EQ(world.node("broker-2").watch_events[1],
            (WatchEvent{WatchEventType::kNodeDeleted, "/w"}));
  // The writer set no watch and hears nothing.
  EXPECT_TRUE(world.node("broker-1").watch_events.empty());
  EXPECT_EQ(world.server().WatchCount(), 0u);
}

TEST(ZooKeeperTest, ChildWatchFiresOnChildChangesAndOnDeletionOnce) {
  ZooKeeperWorld world;
  world.StartClient("broker-1");
  world.StartClient("broker-2");
  ASSERT_TRUE(world.Connected("broker-1") && world.Connected("broker-2"));
  ASSERT_TRUE(world.Create("broker-1", "/ids").ok());

  ASSERT_TRUE(world.GetChildren("broker-2", "/ids", true).ok());
  ASSERT_TRUE(world.Create("broker-1", "/ids/1").ok());
  ASSERT_TRUE(world.Create("broker-1", "/ids/2").ok());  // no watch left: no second event
  world.RunFor(kSecondUs);
  EXPECT_EQ(world.node("broker-2").watch_events,
            (std::vector<WatchEvent>{{WatchEventType::kNodeChildrenChanged, "/ids"}}));

  // Setting data on a child or on the parent is no child change.
  ASSERT_TRUE(world.GetChildren("broker-2", "/ids", true).ok());
  ASSERT_TRUE(world.SetData("broker-1", "/ids/1", "x").ok());
  ASSERT_TRUE(world.SetData("broker-1", "/ids", "x").ok());
  ASSERT_TRUE(world.Delete("broker-1", "/ids/1").ok());
  world.RunFor(kSecondUs);
  ASSERT_EQ(world.node("broker-2").watch_events.size(), 2u);
  EXPECT_EQ(world.node("broker-2").watch_events[1],
            (WatchEvent{WatchEventType::kNodeChildrenChanged, "/ids"}));

  // A data and a child watch on a node being deleted: one NodeDeleted (DataTree.deleteNode).
  ASSERT_TRUE(world.GetChildren("broker-2", "/ids/2", true).ok());
  ASSERT_TRUE(world.GetData("broker-2", "/ids/2", true).ok());
  ASSERT_TRUE(world.GetChildren("broker-2", "/ids", true).ok());
  ASSERT_TRUE(world.Delete("broker-1", "/ids/2").ok());
  world.RunFor(kSecondUs);
  EXPECT_EQ(world.node("broker-2").watch_events,
            (std::vector<WatchEvent>{{WatchEventType::kNodeChildrenChanged, "/ids"},
                                     {WatchEventType::kNodeChildrenChanged, "/ids"},
                                     {WatchEventType::kNodeDeleted, "/ids/2"},
                                     {WatchEventType::kNodeChildrenChanged, "/ids"}}));
}

TEST(ZooKeeperTest, ExistsWatchOnMissingNodeFiresOnCreation) {
  ZooKeeperWorld world;
  world.StartClient("broker-1");
  world.StartClient("broker-2");
  ASSERT_TRUE(world.Connected("broker-1") && world.Connected("broker-2"));
  // GetData on a missing node leaves no watch; Exists does.
  EXPECT_EQ(world.GetData("broker-2", "/controller", true).status(), Errc::kNoNode);
  Result<std::optional<ZnodeStat>> absent = world.Exists("broker-2", "/controller", true);
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
  EXPECT_EQ(world.client("broker-2").watch_count(), 1u);

  ASSERT_TRUE(world.Create("broker-1", "/controller", "1", CreateMode::kEphemeral).ok());
  world.RunFor(kSecondUs);
  EXPECT_EQ(world.node("broker-2").watch_events,
            (std::vector<WatchEvent>{{WatchEventType::kNodeCreated, "/controller"}}));
  Result<std::optional<ZnodeStat>> present = world.Exists("broker-2", "/controller");
  ASSERT_TRUE(present.ok() && present->has_value());
  EXPECT_EQ((*present)->ephemeral_owner, world.client("broker-1").session_id());
}

// ZooKeeper's guarantee: a client sees a watch event before it sees the new data. A reader races a
// writer from different latencies; whenever its read returns the new version, the watch event
// must already be in its log.
TEST(ZooKeeperTest, WatchEventArrivesBeforeReadThatSeesTheChange) {
  int reads_after_change = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    ZooKeeperWorld world(seed, LinkSpec{500, 20'000, 0, 0});
    world.StartClient("broker-1");
    world.StartClient("broker-2");
    ASSERT_TRUE(world.Connected("broker-1") && world.Connected("broker-2"));
    ASSERT_TRUE(world.Create("broker-1", "/x", "old").ok());
    ASSERT_TRUE(world.GetData("broker-2", "/x", true).ok());

    auto& reader = world.node("broker-2");
    world.client("broker-1").SetData("/x", "new", kAnyVersion, nullptr);
    std::optional<Result<ZnodeData>> read;
    reader.client->GetData("/x", false, [&](Result<ZnodeData> r) {
      reader.log.push_back(r.ok() ? "read " + r->data : "read error");
      read.emplace(std::move(r));
    });
    ASSERT_TRUE(world.Wait(read).ok());
    world.RunFor(kSecondUs);
    const auto event = std::find(reader.log.begin(), reader.log.end(), "watch NodeDataChanged /x");
    const auto saw_new = std::find(reader.log.begin(), reader.log.end(), "read new");
    ASSERT_NE(event, reader.log.end()) << "seed " << seed;
    if (saw_new != reader.log.end()) {
      ++reads_after_change;
      EXPECT_LT(event - reader.log.begin(), saw_new - reader.log.begin()) << "seed " << seed;
    }
  }
  EXPECT_GT(reads_after_change, 0);  // the race went both ways at least once
  EXPECT_LT(reads_after_change, 30);
}

// The writer's own watch: the event precedes the answer to its own write.
TEST(ZooKeeperTest, WritersOwnWatchEventPrecedesItsWriteResponse) {
  ZooKeeperWorld world;
  world.StartClient("broker-1");
  ASSERT_TRUE(world.Connected("broker-1"));
  ASSERT_TRUE(world.Create("broker-1", "/x", "0").ok());
  ASSERT_TRUE(world.GetData("broker-1", "/x", true).ok());
  auto& node = world.node("broker-1");
  std::optional<Result<ZnodeStat>> set;
  node.client->SetData("/x", "1", kAnyVersion, [&](Result<ZnodeStat> r) {
    node.log.push_back("set done");
    set.emplace(std::move(r));
  });
  ASSERT_TRUE(world.Wait(set).ok());
  ASSERT_GE(node.log.size(), 2u);
  EXPECT_EQ(node.log[node.log.size() - 2], "watch NodeDataChanged /x");
  EXPECT_EQ(node.log.back(), "set done");
}

// Responses come back in request order, whatever the operations.
TEST(ZooKeeperTest, ResponsesArriveInRequestOrder) {
  ZooKeeperWorld world(3, LinkSpec{100, 30'000, 0, 0});
  world.StartClient("broker-1");
  // Issued before the session exists: they wait for it, then go in order.
  std::vector<int> order;
  ZooKeeperClient& zk = world.client("broker-1");
  zk.Create("/o", "", CreateMode::kPersistent, [&](Result<std::string>) { order.push_back(0); });
  zk.Create("/o/a", "", CreateMode::kPersistent, [&](Result<std::string> r) {
    EXPECT_TRUE(r.ok());
    order.push_back(1);
  });
  zk.GetData("/o/a", false, [&](Result<ZnodeData> r) {
    EXPECT_TRUE(r.ok());
    order.push_back(2);
  });
  zk.Delete("/o/a", kAnyVersion, [&](Status s) {
    EXPECT_TRUE(s.ok());
    order.push_back(3);
  });
  zk.Exists("/o/a", false, [&](Result<std::optional<ZnodeStat>> r) {
    EXPECT_TRUE(r.ok() && !r->has_value());
    order.push_back(4);
  });
  ASSERT_TRUE(world.RunUntil([&] { return order.size() == 5; }));
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

// Kafka's controller election (ZookeeperLeaderElector): every broker tries to create the
// ephemeral /controller; the losers watch it and try again when it is deleted.
class Elector {
 public:
  Elector(ZooKeeperWorld& world, const std::string& node, int32_t broker_id)
      : world_(world), node_(node), broker_id_(broker_id) {
    world_.node(node_).on_watch = [this](const WatchEvent& event) {
      if (event.path == zk::kControllerPath && event.type == WatchEventType::kNodeDeleted) Elect();
    };
  }
  void Elect() {
    const std::string data =
        zk::EncodeControllerRegistration({BrokerId(broker_id_), world_.loop().Now() / kUsPerMs});
    client().Create(std::string(zk::kControllerPath), data, CreateMode::kEphemeral,
                    [this](Result<std::string> created) {
                      if (created.ok()) {
                        ++wins_;
                        return;
                      }
                      if (created.status() != Errc::kNodeExists) return;
                      // Someone else leads: watch for its departure (re-elect if already gone).
                      client().Exists(std::string(zk::kControllerPath), true,
                                      [this](Result<std::optional<ZnodeStat>> stat) {
                                        if (stat.ok() && !stat->has_value()) Elect();
                                      });
                    });
  }
  int wins() const { return wins_; }

 private:
  ZooKeeperClient& client() { return world_.client(node_); }
  ZooKeeperWorld& world_;
  std::string node_;
  int32_t broker_id_;
  int wins_ = 0;
};

std::optional<int32_t> ControllerId(ZooKeeperWorld& world) {
  std::optional<ZnodeData> data = world.server().Read(zk::kControllerPath);
  if (!data) return std::nullopt;
  Result<zk::ControllerRegistration> controller = zk::DecodeControllerRegistration(data->data);
  EXPECT_TRUE(controller.ok());
  return controller->broker_id.value();
}

TEST(ZooKeeperTest, ControllerElectionMovesWhenTheWinnersSessionExpires) {
  ZooKeeperWorld world(11);
  world.StartClient("broker-1");
  world.StartClient("broker-2");
  ASSERT_TRUE(world.Connected("broker-1") && world.Connected("broker-2"));
  Elector one(world, "broker-1", 1);
  Elector two(world, "broker-2", 2);
  one.Elect();
  two.Elect();
  ASSERT_TRUE(world.RunUntil([&] { return one.wins() + two.wins() == 1; }));
  world.RunFor(kSecondUs);
  ASSERT_EQ(one.wins() + two.wins(), 1);  // exactly one winner
  const int32_t first = *ControllerId(world);
  const std::string winner = first == 1 ? "broker-1" : "broker-2";
  const std::string loser = first == 1 ? "broker-2" : "broker-1";
  EXPECT_EQ(world.client(loser).watch_count(), 1u);

  // The winner drops off the network; its session expires; the loser hears NodeDeleted and wins.
  const ZkSessionId winner_session = world.client(winner).session_id();
  ASSERT_TRUE(world.topology().Isolate(winner).ok());
  ASSERT_TRUE(world.RunUntil([&] { return !world.server().HasSession(winner_session); }));
  ASSERT_TRUE(world.RunUntil([&] { return one.wins() + two.wins() == 2; }));
  EXPECT_EQ(ControllerId(world), 3 - first);
  EXPECT_EQ(world.node(loser).watch_events.back(),
            (WatchEvent{WatchEventType::kNodeDeleted, "/controller"}));
  // The old winner was told it is disconnected, but not expired: it has not reached the server.
  EXPECT_EQ(world.node(winner).session_events.back(), SessionEvent::kDisconnected);

  // Back on the network, the old winner learns its session expired, starts a new one, and loses.
  world.topology().Heal();
  ASSERT_TRUE(
      world.RunUntil([&] { return world.client(winner).state() == SessionState::kExpired; }));
  world.client(winner).Connect();
  ASSERT_TRUE(world.Connected(winner));
  (first == 1 ? one : two).Elect();
  world.RunFor(5 * kSecondUs);
  EXPECT_EQ(ControllerId(world), 3 - first);
  EXPECT_EQ(one.wins() + two.wins(), 2);
  EXPECT_EQ(world.client(winner).watch_count(), 1u);  // now it watches
}

// Same seed, same history: every network event of a run with sessions, watches, isolation and
// expiry is identical across two runs.
TEST(ZooKeeperTest, RunsAreDeterministic) {
  auto run = [](uint64_t seed) {
    ZooKeeperWorld world(seed, LinkSpec{500, 8'000, 20'000, 0});
    std::vector<std::string> events;
    world.network().SetObserver([&](const NetEvent& e) {
      events.push_back(std::to_string(e.time_us) + " " + std::string(NetEventTypeName(e.type)) +
                       " " + std::string(e.from_name) + ">" + std::string(e.to_name) + " " +
                       std::string(e.kind));
    });
    world.StartClient("broker-1");
    world.StartClient("broker-2");
    world.StartClient("broker-3");
    world.RunFor(2 * kSecondUs);
    Elector one(world, "broker-1", 1), two(world, "broker-2", 2), three(world, "broker-3", 3);
    one.Elect();
    two.Elect();
    three.Elect();
    world.RunFor(2 * kSecondUs);
    if (const std::optional<int32_t> id = ControllerId(world)) {
      EXPECT_TRUE(world.topology().Isolate("broker-" + std::to_string(*id)).ok());
    }
    world.RunFor(20 * kSecondUs);
    world.topology().Heal();
    world.RunFor(5 * kSecondUs);
    events.push_back("controller " + std::to_string(ControllerId(world).value_or(-1)));
    return events;
  };
  const std::vector<std::string> first = run(42);
  EXPECT_EQ(first, run(42));
  EXPECT_GT(first.size(), 100u);
  EXPECT_NE(first, run(43));
}

}  // namespace
}  // namespace ksim::sim
