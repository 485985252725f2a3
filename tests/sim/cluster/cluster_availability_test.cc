// Availability with most replicas gone (the seed's "N replicas tolerate N-1 failures"): a
// partition keeps a leader while one ISR member lives. RF=3 with two brokers crashed (its
// leader among them) keeps taking acks=1 writes on the survivor; RF=5 with four crashed still
// takes writes and serves fetches; acks=all with min.insync.replicas=2 is refused with
// NOT_ENOUGH_REPLICAS once the ISR is down to one.
#include <gtest/gtest.h>

#include "tests/support/sim/cluster_test_util.h"

namespace ksim::sim::testing {
namespace {

const TopicPartition kT0{"t", PartitionId(0)};

std::vector<BrokerId> Ids(std::initializer_list<int32_t> ids) {
  std::vector<BrokerId> out;
  for (int32_t id : ids) out.push_back(BrokerId(id));
  return out;
}

bool IsrIs(Cluster& cluster, const std::vector<BrokerId>& isr) {
  auto state = cluster.ZkPartitionState(kT0);
  return state && state->isr == isr;
}

// Brokers 1..n, topic t with one partition on all of them (broker 1 leads), `before` records
// written with acks=all, then the brokers in `crash` crashed; returns once a survivor leads.
struct Survivors {
  Survivors(int32_t n, std::vector<BrokerId> crash, uint64_t seed,
            std::map<std::string, std::string> topic_config = {})
      : sim("survivors-" + std::to_string(n), seed, Options(n)) {
    EXPECT_TRUE(sim.Start());
    std::vector<BrokerId> all;
    for (int32_t id = 1; id <= n; ++id) all.push_back(BrokerId(id));
    TopicSpec topic{"t", 1, n, {{PartitionId(0), all}}, std::move(topic_config)};
    EXPECT_TRUE(sim.cluster().CreateTopicAndWait(topic).ok());
    EXPECT_TRUE(sim.cluster().RunUntil([&] { return IsrIs(sim.cluster(), all); }, 30 * kSecondUs));
    client = &sim.AddClient("p1");
    EXPECT_TRUE(sim.ProduceAndWait(*client, kT0, -1, 5));
    EXPECT_EQ(client->Acked().size(), 5u);
    for (BrokerId id : crash) EXPECT_TRUE(sim.cluster().CrashBroker(id).ok());
    // Crashed brokers leave the ISR once the controller sees their sessions end.
    std::vector<BrokerId> left;
    for (BrokerId id : all) {
      if (std::find(crash.begin(), crash.end(), id) == crash.end()) left.push_back(id);
    }
    EXPECT_TRUE(sim.cluster().RunUntil(
        [&] {
          const BrokerId leader = sim.cluster().LeaderOf(kT0);
          return IsrIs(sim.cluster(), left) &&
                 std::find(left.begin(), left.end(), leader) != left.end();
        },
        60 * kSecondUs));
  }
  static ClusterOptions Options(int32_t n) {
    ClusterOptions options;
    options.brokers = n;
    options.election_policy = "clean";
    return options;
  }
  ClusterSim sim;
  ksim::testing::ClusterClient* client = nullptr;
};

TEST(ClusterAvailabilityTest, ThreeReplicasWithTwoDeadTakeAcksOneWrites) {
  Survivors s(3, Ids({1, 2}), 31);
  EXPECT_EQ(s.sim.cluster().LeaderOf(kT0), BrokerId(3));
  ASSERT_TRUE(s.sim.ProduceAndWait(*s.client, kT0, 1, 10));
  EXPECT_EQ(s.client->Acked().size(), 15u);
  EXPECT_TRUE(s.client->Failed().empty());
  ksim::testing::FetchResult read = s.sim.ReadAll(*s.client, kT0);
  ASSERT_EQ(read.error, Errc::kNone);
  EXPECT_EQ(read.leader, BrokerId(3));
  ASSERT_EQ(read.records.size(), 15u);
  EXPECT_EQ(read.records[0].value, "v-0");
  EXPECT_EQ(read.records[14].value, "v-14");
  EXPECT_TRUE(s.sim.NoViolations());
}

TEST(ClusterAvailabilityTest, FiveReplicasWithFourDeadStillServe) {
  Survivors s(5, Ids({1, 2, 3, 4}), 32);
  EXPECT_EQ(s.sim.cluster().LeaderOf(kT0), BrokerId(5));
  ASSERT_TRUE(s.sim.ProduceAndWait(*s.client, kT0, 1, 10));
  EXPECT_EQ(s.client->Acked().size(), 15u);
  ksim::testing::FetchResult read = s.sim.ReadAll(*s.client, kT0);
  ASSERT_EQ(read.error, Errc::kNone);
  EXPECT_EQ(read.leader, BrokerId(5));
  EXPECT_EQ(read.high_watermark, Offset(15));
  EXPECT_EQ(read.records.size(), 15u);
  EXPECT_TRUE(s.sim.NoViolations());
}

TEST(ClusterAvailabilityTest, AcksAllBelowMinInsyncReplicasIsRefused) {
  Survivors s(3, Ids({1, 2}), 33, {{"min.insync.replicas", "2"}});
  ASSERT_TRUE(s.sim.ProduceAndWait(*s.client, kT0, 1, 2));  // acks=1 still works
  // acks=all: NOT_ENOUGH_REPLICAS, retried, then given up.
  ksim::testing::ClusterClientOptions options;
  options.retries = 2;
  auto& strict = s.sim.AddClient("p2", options);
  ASSERT_TRUE(s.sim.ProduceAndWait(strict, kT0, -1, 1));
  ASSERT_EQ(strict.Failed().size(), 1u);
  EXPECT_EQ(strict.Failed()[0]->error, Errc::kNotEnoughReplicas);
  EXPECT_EQ(strict.Failed()[0]->attempts, 3);
  ksim::testing::FetchResult read = s.sim.ReadAll(*s.client, kT0);
  ASSERT_EQ(read.error, Errc::kNone);
  EXPECT_EQ(read.records.size(), 7u) << "the refused record was not appended";
  EXPECT_TRUE(s.sim.NoViolations());
}

}  // namespace
}  // namespace ksim::sim::testing
