// The Cluster's handling of a broker process through its node's lifecycle: a clean shutdown runs
// the controlled shutdown first (leadership moves away while the node is still on the network),
// then the node goes down with everything flushed; a restart is a new incarnation that recovers
// its log and rejoins; a crash loses what the disk had not synced (Kafka does not fsync by
// default), a clean shutdown loses nothing. Crashing and restarting through the World directly
// is followed the same way.
#include <gtest/gtest.h>

#include "tests/support/sim/cluster_test_util.h"

namespace ksim::sim::testing {
namespace {

const TopicPartition kT0{"t", PartitionId(0)};
const BrokerId kB1(1);
const BrokerId kB2(2);
const BrokerId kB3(3);

// Broker `id` runs a process that has registered.
bool Running(Cluster& cluster, BrokerId id) {
  return cluster.broker(id) != nullptr && cluster.broker(id)->state() == BrokerState::kRunning;
}

class ClusterLifecycleTest : public ::testing::Test {
 protected:
  ClusterLifecycleTest() : sim_("lifecycle", 51, Options()) {}
  static ClusterOptions Options() {
    ClusterOptions options;
    options.brokers = 3;
    options.truncation = TruncationPolicy::kLeaderEpoch;
    return options;
  }
  void SetUp() override {
    ASSERT_TRUE(sim_.Start());
    TopicSpec topic{"t", 1, 3, {{PartitionId(0), {kB1, kB2, kB3}}}, {}};
    ASSERT_TRUE(cluster().CreateTopicAndWait(topic).ok());
    ASSERT_TRUE(cluster().RunUntil(
        [&] {
          auto state = cluster().ZkPartitionState(kT0);
          return state && state->isr.size() == 3;
        },
        30 * kSecondUs));
    client_ = &sim_.AddClient("p1");
    ASSERT_TRUE(sim_.ProduceAndWait(*client_, kT0, -1, 10));
    ASSERT_EQ(client_->Acked().size(), 10u);
  }
  Cluster& cluster() { return sim_.cluster(); }
  Offset LogEnd(BrokerId id) {
    const ksim::Partition* p = cluster().broker(id)->GetPartition(kT0);
    return p == nullptr ? Offset(-1) : p->log_end_offset();
  }

  ClusterSim sim_;
  ksim::testing::ClusterClient* client_ = nullptr;
};

TEST_F(ClusterLifecycleTest, CleanShutdownMovesLeadershipFirstAndLosesNothing) {
  ASSERT_EQ(cluster().LeaderOf(kT0), kB1);
  bool down = false;
  ASSERT_TRUE(cluster().ShutdownBroker(kB1, [&] { down = true; }).ok());
  EXPECT_FALSE(cluster().ShutdownBroker(kB1).ok()) << "already shutting down";
  ASSERT_TRUE(cluster().RunUntil([&] { return down; }, 60 * kSecondUs));
  EXPECT_FALSE(cluster().world().node("broker-1").up());
  EXPECT_EQ(cluster().broker(kB1), nullptr);
  // Controlled shutdown: a new leader was chosen while broker 1 was still up.
  const BrokerId leader = cluster().LeaderOf(kT0);
  EXPECT_TRUE(leader == kB2 || leader == kB3) << leader;

  ASSERT_TRUE(cluster().RestartBroker(kB1).ok());
  EXPECT_EQ(cluster().world().node("broker-1").incarnation(), 2u);
  ASSERT_NE(cluster().broker(kB1), nullptr);
  ASSERT_TRUE(cluster().RunUntil([&] { return LogEnd(kB1) == Offset(10); }, 60 * kSecondUs));
  EXPECT_TRUE(sim_.NoViolations());
  Trace trace = sim_.FinishAndParse();
  auto shutdown = Events(trace, "shutdown", "broker-1");
  ASSERT_EQ(shutdown.size(), 1u);
  // The leadership moved before the node went down.
  bool moved_before = false;
  for (const TraceEvent* e : Events(trace, "leader_elected")) {
    moved_before = moved_before || e->t_us < shutdown[0]->t_us;
  }
  EXPECT_TRUE(moved_before);
}

TEST_F(ClusterLifecycleTest, CrashLosesWhatWasNotFlushedAndRecoveryRefetchesIt) {
  // Broker 3 has the ten records in its page cache only (log.flush.interval.messages unbounded).
  ASSERT_EQ(LogEnd(kB3), Offset(10));
  ASSERT_TRUE(cluster().world().CrashNode("broker-3").ok());  // through the World directly
  EXPECT_EQ(cluster().broker(kB3), nullptr);
  ASSERT_TRUE(cluster().world().RestartNode("broker-3").ok());
  ASSERT_NE(cluster().broker(kB3), nullptr);
  // Its start-ups exit until the old session has timed out; then recovery has found less than
  // it had, and it fetches the rest from the leader again.
  ASSERT_TRUE(cluster().RunUntil(
      [&] { return Running(cluster(), kB3) && LogEnd(kB3) != Offset(-1); }, 30 * kSecondUs));
  EXPECT_LT(LogEnd(kB3), Offset(10));
  ASSERT_TRUE(cluster().RunUntil([&] { return LogEnd(kB3) == Offset(10); }, 60 * kSecondUs));
  EXPECT_TRUE(sim_.NoViolations());
}

TEST_F(ClusterLifecycleTest, ARestartWithinTheOldSessionExitsAndStartsAgainUntilItRegisters) {
  // Kafka's start-up throws on a /brokers/ids/<id> another session holds ("restarted it faster
  // than the zookeeper timeout") and the process exits; whoever restarted it starts it again a
  // second later (ClusterOptions::start_retry_backoff_us), until a start-up registers.
  ASSERT_TRUE(cluster().world().CrashNode("broker-3").ok());
  ASSERT_TRUE(cluster().world().RestartNode("broker-3").ok());
  ASSERT_TRUE(cluster().RunUntil(
      [&] { return Running(cluster(), kB3) && LogEnd(kB3) == Offset(10); }, 60 * kSecondUs));
  EXPECT_TRUE(sim_.NoViolations());
  const Trace trace = sim_.FinishAndParse();
  const auto failed = Events(trace, "broker_startup_failed", "broker-3");
  ASSERT_FALSE(failed.empty());
  for (const TraceEvent* e : failed) {
    EXPECT_EQ(e->fields.at("error"), "NODEEXISTS");
    EXPECT_NE(e->fields.at("message").get<std::string>().find(
                  "restarted it faster than the zookeeper timeout"),
              std::string::npos);
  }
  // Each failed start-up's process shut down, and the next one started a second later.
  const auto restarts = Events(trace, "restart", "broker-3");
  const auto shutdowns = Events(trace, "shutdown", "broker-3");
  ASSERT_EQ(restarts.size(), failed.size() + 1);
  ASSERT_EQ(shutdowns.size(), failed.size());
  for (size_t i = 0; i < shutdowns.size(); ++i) {
    EXPECT_LT(failed[i]->t_us, shutdowns[i]->t_us);
    EXPECT_EQ(restarts[i + 1]->t_us - shutdowns[i]->t_us, kSecondUs);
  }
  // The start-up that registered came after the old session's registration was deleted, and no
  // process made a replica before it had registered.
  TimeUs old_registration_gone_us = -1;
  for (const TraceEvent* e : Events(trace, "zk_session_expired", "zk")) {
    if (e->fields.at("client") == "broker-3") old_registration_gone_us = e->t_us;
  }
  const auto registered = Events(trace, "broker_registered", "broker-3");
  ASSERT_EQ(registered.size(), 2u);  // the first process's, then the last start-up's
  EXPECT_GT(registered[1]->t_us, old_registration_gone_us);
  EXPECT_GT(old_registration_gone_us, restarts.back()->t_us - kSecondUs);
  for (const char* made : {"become_leader", "become_follower"}) {
    for (const TraceEvent* e : Events(trace, made, "broker-3")) {
      EXPECT_TRUE(e->t_us < restarts.front()->t_us || e->t_us > registered[1]->t_us) << made;
    }
  }
}

// From 1.1 a broker registers before it handles requests; what arrives first waits. Before 1.1
// it handles them at once and registers last (KafkaServer.startup at each release).
TimeUs MetadataAnsweredAfterRegistration(KafkaRelease release) {
  ClusterOptions options;
  options.brokers = 3;
  options.kafka_version = release;
  ClusterSim sim("hold", 7, options);
  KSIM_CHECK(sim.Start());
  Cluster& cluster = sim.cluster();
  KSIM_CHECK(cluster.CreateTopicAndWait(TopicSpec{"t", 1, 3, {}, {}}).ok());
  ksim::testing::ClusterClient& client = sim.AddClient("c1");
  KSIM_CHECK(cluster.world().CrashNode("broker-3").ok());
  KSIM_CHECK(cluster.RunUntil([&] { return !cluster.zookeeper().Read("/brokers/ids/3"); },
                              30 * kSecondUs));
  KSIM_CHECK(cluster.world().RestartNode("broker-3").ok());
  std::optional<TimeUs> answered_us;
  MetadataRequest request;
  request.topics = std::vector<std::string>{"t"};
  client.SendRequest("broker-3", std::move(request), [&](Result<ksim::Message> response) {
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    answered_us = cluster.world().Now();
  });
  KSIM_CHECK(cluster.RunUntil(
      [&] { return answered_us.has_value() && Running(cluster, BrokerId(3)); }, 30 * kSecondUs));
  const Trace trace = sim.FinishAndParse();
  const auto registered = Events(trace, "broker_registered", "broker-3");
  KSIM_CHECK(registered.size() == 2u);
  return *answered_us - registered[1]->t_us;
}

TEST(ClusterStartupTest, RequestsWaitForTheRegistrationFrom11) {
  EXPECT_GT(MetadataAnsweredAfterRegistration(KafkaRelease::k1_1), 0);
  EXPECT_GT(MetadataAnsweredAfterRegistration(KafkaRelease::k2_0), 0);
  EXPECT_LT(MetadataAnsweredAfterRegistration(KafkaRelease::k1_0), 0);
  EXPECT_LT(MetadataAnsweredAfterRegistration(KafkaRelease::k0_10_0), 0);
}

TEST_F(ClusterLifecycleTest, SessionExpiryOfALeaderMovesLeadershipAndTheBrokerRegistersAgain) {
  ASSERT_TRUE(cluster().ExpireSession(kB1).ok());
  ASSERT_TRUE(sim_.WaitForLeader(kT0, kB1));
  ASSERT_TRUE(cluster().RunUntil(
      [&] {
        auto state = cluster().ZkPartitionState(kT0);
        return cluster().zookeeper().Read("/brokers/ids/1").has_value() && state &&
               state->isr.size() == 3;
      },
      60 * kSecondUs));
  EXPECT_NE(cluster().LeaderOf(kT0), kB1);
  ASSERT_TRUE(sim_.ProduceAndWait(*client_, kT0, -1, 5));
  ksim::testing::FetchResult read = sim_.ReadAll(*client_, kT0);
  ASSERT_EQ(read.error, Errc::kNone);
  EXPECT_EQ(read.records.size(), 15u);
  EXPECT_TRUE(sim_.NoViolations());
}

TEST_F(ClusterLifecycleTest, ABrokerWhoseStartupFailedRefusesRequestsWithinARoundTrip) {
  // Kafka's broker exits when it cannot load its logs; the host then refuses connections, so a
  // client hears at once and asks another broker (issue 17, R4: the node used to swallow them).
  ASSERT_TRUE(cluster().world().CrashNode("broker-3").ok());
  ASSERT_TRUE(
      cluster()
          .world()
          .InjectDiskFault("broker-3", DiskFault::kWriteError, FaultPersistence::kUntilCleared)
          .ok());
  ASSERT_TRUE(cluster().RestartBroker(kB3).ok());  // the node is up, its broker did not start
  EXPECT_TRUE(cluster().world().node("broker-3").up());
  EXPECT_EQ(cluster().broker(kB3), nullptr);

  sim::World& world = cluster().world();
  const LinkSpec link = *world.topology().Link(world.node("p1").id(), world.node("broker-3").id());
  const TimeUs sent_us = world.Now();
  std::optional<TimeUs> failed_us;
  MetadataRequest request;
  request.topics = std::vector<std::string>{"t"};
  client_->SendRequest("broker-3", std::move(request), [&](Result<ksim::Message> response) {
    EXPECT_FALSE(response.ok());
    failed_us = world.Now();
  });
  ASSERT_TRUE(cluster().RunUntil([&] { return failed_us.has_value(); }, 30 * kSecondUs));
  EXPECT_LE(*failed_us - sent_us, 2 * link.latency_us_max);
  EXPECT_TRUE(sim_.NoViolations());
}

}  // namespace
}  // namespace ksim::sim::testing
