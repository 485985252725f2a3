// Sessions of the simulated ZooKeeper, driven through real clients over the virtual network:
// timeout negotiation, pings across idle time, expiry of an isolated client (ephemerals deleted,
// other sessions' watches fired), forced expiry (`zk_expire`), ZooKeeper down and up (no expiry
// while down, sessions survive a client's timely return), watches kept across reconnects, a clean
// Close, and a crashed client's node.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/zk/paths.h"
#include "sim/world/zookeeper.h"
#include "sim/world/zookeeper_client.h"
#include "tests/support/sim/zookeeper_test_util.h"

namespace ksim::sim {
namespace {

using testing::kSecondUs;
using testing::ZooKeeperWorld;

constexpr TimeUs kTickUs = 2 * kSecondUs;

TEST(ZooKeeperSessionTest, ServerClampsTheProposedTimeoutToTwoAndTwentyTicks) {
  ZooKeeperWorld world;
  world.StartClient("broker-1", 1 * kSecondUs);    // below 2 ticks
  world.StartClient("broker-2", 6 * kSecondUs);    // Kafka's default, within bounds
  world.StartClient("broker-3", 100 * kSecondUs);  // above 20 ticks
  ASSERT_TRUE(world.Connected("broker-1") && world.Connected("broker-2") &&
              world.Connected("broker-3"));
  EXPECT_EQ(world.client("broker-1").negotiated_session_timeout_us(), 4 * kSecondUs);
  EXPECT_EQ(world.client("broker-2").negotiated_session_timeout_us(), 6 * kSecondUs);
  EXPECT_EQ(world.client("broker-3").negotiated_session_timeout_us(), 40 * kSecondUs);
  EXPECT_EQ(world.client("broker-2").read_timeout_us(), 4 * kSecondUs);
  EXPECT_EQ(world.server().SessionTimeoutUs(world.client("broker-1").session_id()), 4 * kSecondUs);
  // Session ids: myid 1 in the top byte, then a counter.
  EXPECT_EQ(world.client("broker-1").session_id().value() >> 56, 1);
  EXPECT_EQ(world.node("broker-1").session_events,
            (std::vector<SessionEvent>{SessionEvent::kSyncConnected}));
}

TEST(ZooKeeperSessionTest, PingsKeepAnIdleSessionAlive) {
  ZooKeeperWorld world;
  world.StartClient("broker-1");
  ASSERT_TRUE(world.Connected("broker-1"));
  ASSERT_TRUE(world.Create("broker-1", "/e", "", CreateMode::kEphemeral).ok());
  const ZkSessionId session = world.client("broker-1").session_id();

  world.RunFor(600 * kSecondUs);  // ten idle minutes, a hundred session timeouts
  EXPECT_TRUE(world.server().HasSession(session));
  EXPECT_TRUE(world.server().Read("/e").has_value());
  EXPECT_EQ(world.client("broker-1").state(), SessionState::kConnected);
  EXPECT_EQ(world.node("broker-1").session_events,
            (std::vector<SessionEvent>{SessionEvent::kSyncConnected}));
  // One ping per idle third of the timeout (2 s), give or take the first.
  EXPECT_GE(world.client("broker-1").pings_sent(), 295u);
  EXPECT_LE(world.client("broker-1").pings_sent(), 301u);
  // The deadline sits on a tick boundary within timeout + tick of now.
  const TimeUs deadline = *world.server().SessionDeadlineUs(session);
  EXPECT_EQ(deadline % kTickUs, 0);
  EXPECT_LE(deadline, world.loop().Now() + 6 * kSecondUs + kTickUs);
}

TEST(ZooKeeperSessionTest, IsolatedClientsSessionExpiresDeletingEphemeralsAndFiringWatches) {
  ZooKeeperWorld world;
  world.StartClient("broker-1");
  world.StartClient("broker-2");
  ASSERT_TRUE(world.Connected("broker-1") && world.Connected("broker-2"));
  std::optional<Result<std::string>> registered;
  CreateWithParents(world.client("broker-1"), zk::BrokerIdPath(BrokerId(1)), "{}",
                    CreateMode::kEphemeral, [&](Result<std::string> r) { registered.emplace(r); });
  ASSERT_TRUE(world.Wait(registered).ok());
  ASSERT_TRUE(
      world.Create("broker-1", "/brokers/ids/x-", "", CreateMode::kEphemeralSequential).ok());
  ASSERT_TRUE(world.GetChildren("broker-2", "/brokers/ids", true).ok());
  ASSERT_TRUE(world.GetData("broker-2", "/brokers/ids/1", true).ok());
  const ZkSessionId session = world.client("broker-1").session_id();

  // Cut broker-1 off; nothing it sends reaches the server any more.
  const TimeUs cut_us = world.loop().Now();
  ASSERT_TRUE(world.topology().Isolate("broker-1").ok());
  ASSERT_TRUE(world.RunUntil([&] { return !world.server().HasSession(session); }));
  const TimeUs expired_us = world.loop().Now();
  // Expiry lands on a tick boundary, at least a timeout after broker-1 was last heard (before the
  // cut) and at most timeout + tick after the cut.
  EXPECT_EQ(expired_us % kTickUs, 0);
  EXPECT_LE(expired_us, cut_us + 6 * kSecondUs + kTickUs);
  EXPECT_GE(expired_us, cut_us + 6 * kSecondUs - world.client("broker-1").read_timeout_us() / 2);

  EXPECT_TRUE(world.server().Children("/brokers/ids").empty());
  world.RunFor(kSecondUs);
  EXPECT_EQ(world.node("broker-2").watch_events,
            (std::vector<WatchEvent>{{WatchEventType::kNodeDeleted, "/brokers/ids/1"},
                                     {WatchEventType::kNodeChildrenChanged, "/brokers/ids"}}));
  // The isolated client noticed the silence (read timeout), but cannot know about the expiry.
  EXPECT_EQ(world.node("broker-1").session_events,
            (std::vector<SessionEvent>{SessionEvent::kSyncConnected, SessionEvent::kDisconnected}));
  EXPECT_EQ(world.client("broker-1").state(), SessionState::kConnecting);

  // Healed, it reconnects and is told: Expired. Everything fails until a new session.
  world.topology().Heal();
  ASSERT_TRUE(
      world.RunUntil([&] { return world.client("broker-1").state() == SessionState::kExpired; }));
  EXPECT_EQ(world.node("broker-1").session_events.back(), SessionEvent::kExpired);
  EXPECT_EQ(world.GetData("broker-1", "/brokers").status(), Errc::kSessionExpired);

  // Kafka's broker re-registers on a new session.
  world.client("broker-1").Connect();
  ASSERT_TRUE(world.Connected("broker-1"));
  EXPECT_NE(world.client("broker-1").session_id(), session);
  ASSERT_TRUE(world.Create("broker-1", "/brokers/ids/1", "{}", CreateMode::kEphemeral).ok());
  EXPECT_EQ(world.server().Read("/brokers/ids/1")->stat.ephemeral_owner,
            world.client("broker-1").session_id());
}

TEST(ZooKeeperSessionTest, ReadTimeoutFailsOutstandingRequestsWithConnectionLossThenDisconnects) {
  ZooKeeperWorld world;
  world.StartClient("broker-1");
  ASSERT_TRUE(world.Connected("broker-1"));
  auto& node = world.node("broker-1");
  ASSERT_TRUE(world.topology().Isolate("broker-1").ok());
  const TimeUs sent_us = world.loop().Now();
  node.client->Create("/a", "", CreateMode::kPersistent, [&](Result<std::string> r) {
    node.log.push_back("create " + std::string(ErrcName(r.status().code())));
  });
  node.client->GetData("/b", false, [&](Result<ZnodeData> r) {
    node.log.push_back("get " + std::string(ErrcName(r.status().code())));
  });
  ASSERT_TRUE(world.RunUntil([&] { return node.session_events.size() == 2; }));
  EXPECT_EQ(node.log, (std::vector<std::string>{"session SyncConnected", "create CONNECTIONLOSS",
                                                "get CONNECTIONLOSS", "session Disconnected"}));
  // No answer for 2/3 of the session timeout (4 s) since the last thing heard.
  EXPECT_LE(world.loop().Now(), sent_us + 4 * kSecondUs);
  EXPECT_GE(world.loop().Now(), sent_us + 2 * kSecondUs);
  // Issued while reconnecting: it waits, and fails when that attempt gives up (connect timeout).
  std::optional<Status> late;
  node.client->Delete("/c", kAnyVersion, [&](Status s) { late.emplace(s); });
  EXPECT_EQ(world.Wait(late), Errc::kConnectionLoss);
}

// A cut is a silence (docs/network.md): what the client sent during it is held, and TCP's backoff
// would release it seconds after the heal. Its read timeout gives up on that connection and closes
// it, as ClientCnxn's cleanup() closes the socket, so its next attempt does not queue behind the
// held pings.
TEST(ZooKeeperSessionTest, AReadTimeoutClosesTheConnectionSoTheNextAttemptIsNotHeldBehindIt) {
  ZooKeeperWorld world;
  world.StartClient("broker-1");
  ASSERT_TRUE(world.Connected("broker-1"));
  auto& node = world.node("broker-1");
  const NodeId client = world.topology().Id("broker-1");
  const NodeId server = world.topology().Id("zk");
  const uint64_t epoch = world.network().ConnectionEpoch(client, server);
  ASSERT_TRUE(world.topology().Isolate("broker-1").ok());
  ASSERT_TRUE(world.RunUntil([&] { return node.session_events.size() == 2; }));  // Disconnected
  EXPECT_EQ(world.network().ConnectionEpoch(client, server), epoch + 1);
  EXPECT_GE(world.network().counters().held, 1u);  // pings held at the cut, never sent now
  world.RunFor(kSecondUs / 2);
  world.topology().Heal();
  const TimeUs healed_us = world.loop().Now();
  ASSERT_TRUE(world.RunUntil(
      [&] { return world.client("broker-1").state() != SessionState::kConnecting; }));
  // The attempt in flight at the heal went on the new connection: at most a few short
  // retransmission timeouts (200, 400, 800 ms from its send), then the answer.
  EXPECT_LE(world.loop().Now(), healed_us + 2 * kSecondUs);
}

TEST(ZooKeeperSessionTest, ForcedExpiryDeletesEphemeralsAndTheClientLearnsExpired) {
  ZooKeeperWorld world;
  world.StartClient("broker-1");
  world.StartClient("broker-2");
  ASSERT_TRUE(world.Connected("broker-1") && world.Connected("broker-2"));
  ASSERT_TRUE(world.Create("broker-1", "/controller", "1", CreateMode::kEphemeral).ok());
  ASSERT_TRUE(world.Exists("broker-2", "/controller", true).ok());
  const ZkSessionId session = world.client("broker-1").session_id();
  std::vector<ZkServerEvent::Type> server_events;
  world.server().SetObserver([&](const ZkServerEvent& e) {
    server_events.push_back(e.type);
    if (e.type == ZkServerEvent::Type::kSessionExpired) {
      EXPECT_EQ(e.client_node, "broker-1");
      EXPECT_EQ(e.ephemerals_deleted, (std::vector<std::string>{"/controller"}));
    }
  });

  ASSERT_TRUE(world.server().ExpireSession(session).ok());  // the scenario's zk_expire
  EXPECT_FALSE(world.server().Read("/controller").has_value());
  EXPECT_EQ(world.server().ExpireSession(session), Errc::kNotFound);
  ASSERT_TRUE(
      world.RunUntil([&] { return world.client("broker-1").state() == SessionState::kExpired; }));
  EXPECT_EQ(world.node("broker-1").session_events,
            (std::vector<SessionEvent>{SessionEvent::kSyncConnected, SessionEvent::kDisconnected,
                                       SessionEvent::kExpired}));
  EXPECT_EQ(world.node("broker-2").watch_events,
            (std::vector<WatchEvent>{{WatchEventType::kNodeDeleted, "/controller"}}));
  EXPECT_EQ(server_events,
            (std::vector<ZkServerEvent::Type>{ZkServerEvent::Type::kSessionExpired}));
  // The server closed the connection and the client learned within a reconnect pause.
  EXPECT_LE(world.loop().Now(), 2 * kSecondUs);
}

TEST(ZooKeeperSessionTest, WatchesSurviveAReconnectWithinTheSession) {
  ZooKeeperWorld world;
  world.StartClient("broker-1");
  // A long session: after its read timeout (13.3 s) it has ~6.7 s to come back.
  world.StartClient("broker-2", 20 * kSecondUs);
  ASSERT_TRUE(world.Connected("broker-1") && world.Connected("broker-2"));
  ASSERT_TRUE(world.Create("broker-1", "/changed", "0").ok());
  ASSERT_TRUE(world.Create("broker-1", "/kept", "0").ok());
  ASSERT_TRUE(world.Create("broker-1", "/gone", "0").ok());
  ASSERT_TRUE(world.GetData("broker-2", "/changed", true).ok());
  ASSERT_TRUE(world.GetData("broker-2", "/kept", true).ok());
  ASSERT_TRUE(world.GetData("broker-2", "/gone", true).ok());
  ASSERT_TRUE(world.Exists("broker-2", "/born", true).ok());
  ASSERT_TRUE(world.GetChildren("broker-2", "/kept", true).ok());
  const ZkSessionId session = world.client("broker-2").session_id();

  // broker-2 is cut off long enough to drop its connection, not long enough to expire; meanwhile
  // three of the watched nodes change and the events cannot reach it.
  ASSERT_TRUE(world.topology().Isolate("broker-2").ok());
  ASSERT_TRUE(world.RunUntil(
      [&] { return world.client("broker-2").state() == SessionState::kConnecting; }));
  ASSERT_TRUE(world.SetData("broker-1", "/changed", "1").ok());
  ASSERT_TRUE(world.Delete("broker-1", "/gone").ok());
  ASSERT_TRUE(world.Create("broker-1", "/born").ok());
  EXPECT_TRUE(world.node("broker-2").watch_events.empty());
  world.topology().Heal();
  ASSERT_TRUE(world.Connected("broker-2"));
  EXPECT_EQ(world.client("broker-2").session_id(), session);
  world.RunFor(kSecondUs);
  // On reconnect the server compares against the last zxid the client saw and fires what changed.
  EXPECT_EQ(world.node("broker-2").watch_events,
            (std::vector<WatchEvent>{{WatchEventType::kNodeDataChanged, "/changed"},
                                     {WatchEventType::kNodeDeleted, "/gone"},
                                     {WatchEventType::kNodeCreated, "/born"}}));
  // The unchanged ones are registered again and still fire.
  ASSERT_TRUE(world.SetData("broker-1", "/kept", "1").ok());
  ASSERT_TRUE(world.Create("broker-1", "/kept/child").ok());
  world.RunFor(kSecondUs);
  ASSERT_EQ(world.node("broker-2").watch_events.size(), 5u);
  EXPECT_EQ(world.node("broker-2").watch_events[3],
            (WatchEvent{WatchEventType::kNodeDataChanged, "/kept"}));
  EXPECT_EQ(world.node("broker-2").watch_events[4],
            (WatchEvent{WatchEventType::kNodeChildrenChanged, "/kept"}));
}

TEST(ZooKeeperSessionTest, NoSessionExpiresWhileZooKeeperIsDown) {
  ZooKeeperWorld world;
  world.StartClient("broker-1");
  world.StartClient("broker-2");
  world.StartClient("broker-3");
  ASSERT_TRUE(world.Connected("broker-1") && world.Connected("broker-2") &&
              world.Connected("broker-3"));
  for (int id = 1; id <= 3; ++id) {
    const std::string name = "broker-" + std::to_string(id);
    ASSERT_TRUE(world.Create(name, "/b" + std::to_string(id), "", CreateMode::kEphemeral).ok());
  }
  ASSERT_TRUE(world.GetData("broker-2", "/b1", true).ok());
  const std::vector<ZkSessionId> sessions = world.server().Sessions();
  ASSERT_EQ(sessions.size(), 3u);
  const ZkSessionId session1 = world.client("broker-1").session_id();
  const ZkSessionId session2 = world.client("broker-2").session_id();

  world.server().Down();
  std::optional<Status> during;
  world.client("broker-1").Delete("/b1", kAnyVersion, [&](Status s) { during.emplace(s); });
  EXPECT_EQ(world.Wait(during), Errc::kConnectionLoss);
  world.RunFor(30 * kSecondUs);  // five session timeouts
  EXPECT_EQ(world.server().Sessions(), sessions);
  for (int id = 1; id <= 3; ++id) {
    EXPECT_EQ(world.client("broker-" + std::to_string(id)).state(), SessionState::kConnecting);
  }
  // broker-3 will not be back in time.
  ASSERT_TRUE(world.topology().Isolate("broker-3").ok());

  const TimeUs up_us = world.loop().Now();
  world.server().Up();
  // Every session got its whole timeout again from the restart.
  for (ZkSessionId session : sessions) {
    EXPECT_GE(*world.server().SessionDeadlineUs(session), up_us + 6 * kSecondUs);
  }
  ASSERT_TRUE(world.Connected("broker-1") && world.Connected("broker-2"));
  EXPECT_EQ(world.client("broker-1").session_id(), session1);
  EXPECT_EQ(world.client("broker-2").session_id(), session2);
  EXPECT_EQ(world.node("broker-1").session_events,
            (std::vector<SessionEvent>{SessionEvent::kSyncConnected, SessionEvent::kDisconnected,
                                       SessionEvent::kSyncConnected}));
  EXPECT_TRUE(world.server().Read("/b1").has_value());
  EXPECT_TRUE(world.server().Read("/b2").has_value());

  // broker-3's session runs out after the restart, not before.
  ASSERT_TRUE(world.RunUntil([&] { return !world.server().Read("/b3").has_value(); }));
  EXPECT_GE(world.loop().Now(), up_us + 6 * kSecondUs);
  EXPECT_LE(world.loop().Now(), up_us + 6 * kSecondUs + kTickUs);
  EXPECT_EQ(world.server().Sessions(),
            (std::vector<ZkSessionId>{std::min(session1, session2), std::max(session1, session2)}));
  // broker-2's watch came back with its reconnect.
  ASSERT_TRUE(world.SetData("broker-1", "/b1", "x").ok());
  world.RunFor(kSecondUs);
  EXPECT_EQ(world.node("broker-2").watch_events,
            (std::vector<WatchEvent>{{WatchEventType::kNodeDataChanged, "/b1"}}));
}

TEST(ZooKeeperSessionTest, CloseDeletesEphemeralsAtOnce) {
  ZooKeeperWorld world;
  world.StartClient("broker-1");
  world.StartClient("broker-2");
  ASSERT_TRUE(world.Connected("broker-1") && world.Connected("broker-2"));
  ASSERT_TRUE(world.Create("broker-1", "/brokers").ok());
  ASSERT_TRUE(world.Create("broker-1", "/brokers/1", "", CreateMode::kEphemeral).ok());
  ASSERT_TRUE(world.GetChildren("broker-2", "/brokers", true).ok());
  const ZkSessionId session = world.client("broker-1").session_id();
  bool closed = false;
  world.client("broker-1").Close([&] { closed = true; });
  ASSERT_TRUE(world.RunUntil([&] { return closed; }));
  EXPECT_LT(world.loop().Now(), kTickUs * 2);  // not a session timeout later
  EXPECT_FALSE(world.server().HasSession(session));
  EXPECT_TRUE(world.server().Children("/brokers").empty());
  EXPECT_EQ(world.client("broker-1").state(), SessionState::kClosed);
  EXPECT_EQ(world.node("broker-1").session_events.back(), SessionEvent::kClosed);
  EXPECT_EQ(world.Exists("broker-1", "/brokers").status(), Errc::kSessionExpired);
  world.RunFor(kSecondUs);
  EXPECT_EQ(world.node("broker-2").watch_events,
            (std::vector<WatchEvent>{{WatchEventType::kNodeChildrenChanged, "/brokers"}}));
}

TEST(ZooKeeperSessionTest, CrashedClientsEphemeralsLastUntilItsSessionTimesOut) {
  ZooKeeperWorld world;
  world.StartClient("broker-1");
  ASSERT_TRUE(world.Connected("broker-1"));
  ASSERT_TRUE(world.Create("broker-1", "/b1", "", CreateMode::kEphemeral).ok());
  const ZkSessionId session = world.client("broker-1").session_id();
  // A callback outstanding at the crash never runs.
  bool called = false;
  world.client("broker-1").GetData("/b1", false, [&](Result<ZnodeData>) { called = true; });
  const TimeUs crash_us = world.loop().Now();
  ASSERT_TRUE(world.topology().SetNodeUp("broker-1", false).ok());
  world.DestroyClient("broker-1");
  world.RunFor(3 * kSecondUs);
  EXPECT_TRUE(world.server().Read("/b1").has_value());  // what "restarted it faster than the
                                                        // zookeeper timeout" in Kafka's error means
  ASSERT_TRUE(world.RunUntil([&] { return !world.server().HasSession(session); }));
  EXPECT_LE(world.loop().Now(), crash_us + 6 * kSecondUs + kTickUs);
  EXPECT_FALSE(world.server().Read("/b1").has_value());
  EXPECT_FALSE(called);

  // The restarted broker gets a new client and a new session.
  ASSERT_TRUE(world.topology().SetNodeUp("broker-1", true).ok());
  world.StartClient("broker-1");
  ASSERT_TRUE(world.Connected("broker-1"));
  EXPECT_NE(world.client("broker-1").session_id(), session);
  EXPECT_TRUE(world.Create("broker-1", "/b1", "", CreateMode::kEphemeral).ok());
}

}  // namespace
}  // namespace ksim::sim
