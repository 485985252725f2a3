// Losing every ISR member (the seed's question: wait for an ISR member, or take whatever replica
// comes back first?). Topic t has one partition on brokers 1 and 2 (broker 3 survives to run the
// controller). Five records are written with acks=all, broker 2 (follower) crashes and leaves the
// ISR, five more are written with acks=1 (only broker 1 has them), broker 1 crashes: no ISR
// member is left. Then broker 2, out of sync, comes back first.
// - policy clean (unclean.leader.election.enable=false): the partition stays offline (Metadata
//   says LEADER_NOT_AVAILABLE, leader -1; writes fail) until broker 1 returns and leads again;
//   no acked record is lost.
// - policy unclean (0.10's default): broker 2 leads at once (an unclean election), and the five
//   records only broker 1 had, offsets 5..9, are lost; broker 1 truncates them when it returns.
// Every append is flushed (log.flush.interval.messages=1), so crashes lose nothing on their own:
// what is lost is the election's doing.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tests/support/sim/cluster_test_util.h"

namespace ksim::sim::testing {
namespace {

const TopicPartition kT0{"t", PartitionId(0)};
const BrokerId kB1(1);
const BrokerId kB2(2);

struct NoIsrLeft {
  // `policy` empty: Kafka's own choice, the topic's unclean.leader.election.enable, whose default
  // is the release's.
  explicit NoIsrLeft(const std::string& policy, uint64_t seed,
                     KafkaRelease release = kSeedKafkaRelease)
      : sim("no-isr-left-" + policy, seed, Options(policy, release)),
        policy(policy),
        release(release) {}

  static ClusterOptions Options(const std::string& policy, KafkaRelease release) {
    ClusterOptions options;
    options.brokers = 3;
    options.kafka_version = release;
    options.election_policy = policy;
    options.truncation = TruncationPolicy::kLeaderEpoch;
    options.config = {{"log.flush.interval.messages", "1"}};
    return options;
  }

  Cluster& cluster() { return sim.cluster(); }

  // Whether the last ISR member leaves the ISR like any other (KafkaController.removeReplicaFromIsr
  // before 1.1 under unclean election; docs/versions.md).
  bool IsrEmpties() const {
    const bool unclean = policy == "unclean" || (policy.empty() && release < KafkaRelease::k0_11_0);
    return unclean && release < KafkaRelease::k1_1;
  }

  bool IsrIs(const std::vector<BrokerId>& isr) {
    auto state = cluster().ZkPartitionState(kT0);
    return state && state->isr == isr;
  }

  // Runs the story up to "broker 1 crashed, no ISR member left".
  void LoseEveryIsrMember() {
    ASSERT_TRUE(sim.Start());
    TopicSpec topic{"t", 1, 2, {{PartitionId(0), {kB1, kB2}}}, {}};
    ASSERT_TRUE(cluster().CreateTopicAndWait(topic).ok());
    ASSERT_TRUE(cluster().RunUntil([&] { return IsrIs({kB1, kB2}); }, 30 * kSecondUs));
    client = &sim.AddClient("p1");
    ASSERT_TRUE(sim.ProduceAndWait(*client, kT0, -1, 5));
    ASSERT_EQ(client->Acked().size(), 5u);

    ASSERT_TRUE(cluster().CrashBroker(kB2).ok());
    ASSERT_TRUE(cluster().RunUntil([&] { return IsrIs({kB1}); }, 30 * kSecondUs));
    ASSERT_TRUE(sim.ProduceAndWait(*client, kT0, 1, 5));
    ASSERT_EQ(client->Acked().size(), 10u);
    for (size_t i = 0; i < 10; ++i) {
      ASSERT_EQ(client->records()[i].offset, Offset(static_cast<int64_t>(i)));
    }

    // When broker 1 runs the controller its crash is a failover, and a new controller removes
    // no one from an ISR (Kafka's onControllerFailover): broker 1 stays recorded then.
    const bool failover = cluster().ActiveController() == kB1;
    ASSERT_TRUE(cluster().CrashBroker(kB1).ok());
    ASSERT_TRUE(cluster().RunUntil(
        [&] {
          auto state = cluster().ZkPartitionState(kT0);
          return state && state->leader == zk::kNoLeader &&
                 cluster().LeaderOf(kT0) == kNoBroker;  // the controller heard its write's answer
        },
        30 * kSecondUs));
    // Kafka keeps the last ISR member recorded, except under unclean election before 1.1.
    const bool empty = IsrEmpties() && !failover;
    EXPECT_TRUE(IsrIs(empty ? std::vector<BrokerId>{} : std::vector<BrokerId>{kB1}));
  }

  // Acked records not found at their offset in `log`.
  std::vector<int64_t> LostAckedOffsets(const std::vector<ksim::testing::FetchedRecord>& log) {
    std::vector<int64_t> lost;
    for (const ksim::testing::ProducedRecord* r : client->Acked()) {
      auto found = std::find_if(log.begin(), log.end(), [&](const auto& f) {
        return f.offset == r->offset && f.value == r->value;
      });
      if (found == log.end()) lost.push_back(r->offset.value());
    }
    return lost;
  }

  ClusterSim sim;
  std::string policy;
  KafkaRelease release;
  ksim::testing::ClusterClient* client = nullptr;
};

TEST(ClusterUncleanElectionTest, CleanPolicyStaysOfflineUntilAnIsrMemberReturns) {
  NoIsrLeft run("clean", 41);
  ASSERT_NO_FATAL_FAILURE(run.LoseEveryIsrMember());
  Cluster& cluster = run.cluster();

  ASSERT_TRUE(cluster.RestartBroker(kB2).ok());
  cluster.RunFor(30 * kSecondUs);
  EXPECT_EQ(cluster.LeaderOf(kT0), kNoBroker) << "broker 2 is not in the ISR";
  Result<MetadataResponse> metadata = run.sim.Metadata(*run.client, "t");
  ASSERT_TRUE(metadata.ok()) << metadata.status().ToString();
  ASSERT_EQ(metadata->topic_metadata.size(), 1u);
  ASSERT_EQ(metadata->topic_metadata[0].partition_metadata.size(), 1u);
  const PartitionMetadata& partition = metadata->topic_metadata[0].partition_metadata[0];
  EXPECT_EQ(partition.leader, kNoBroker);
  EXPECT_EQ(partition.error_code, Errc::kLeaderNotAvailable);

  ksim::testing::ClusterClientOptions impatient;
  impatient.retries = 3;
  auto& blocked = run.sim.AddClient("p2", impatient);
  ASSERT_TRUE(run.sim.ProduceAndWait(blocked, kT0, 1, 1));
  ASSERT_EQ(blocked.Failed().size(), 1u) << "no leader, no write";
  EXPECT_EQ(blocked.Failed()[0]->error, Errc::kLeaderNotAvailable);

  ASSERT_TRUE(cluster.RestartBroker(kB1).ok());
  ASSERT_TRUE(run.sim.WaitForLeader(kT0));
  EXPECT_EQ(cluster.LeaderOf(kT0), kB1);
  ksim::testing::FetchResult read = run.sim.ReadAll(*run.client, kT0);
  ASSERT_EQ(read.error, Errc::kNone);
  EXPECT_EQ(read.records.size(), 10u);
  EXPECT_TRUE(run.LostAckedOffsets(read.records).empty());
  ASSERT_TRUE(cluster.RunUntil([&] { return run.IsrIs({kB1, kB2}); }, 60 * kSecondUs));
  EXPECT_EQ(cluster.checker()->counters().unclean_elections, 0u);
  EXPECT_TRUE(run.sim.NoViolations());

  Trace trace = run.sim.FinishAndParse();
  EXPECT_FALSE(Events(trace, "partition_offline").empty());
  for (const TraceEvent* e : Events(trace, "leader_elected")) {
    EXPECT_FALSE(e->fields["unclean"].get<bool>()) << e->fields.dump();
  }
}

TEST(ClusterUncleanElectionTest,
     UncleanPolicyElectsTheStaleReplicaAndLosesWhatOnlyTheOldLeaderHad) {
  NoIsrLeft run("unclean", 42);
  ASSERT_NO_FATAL_FAILURE(run.LoseEveryIsrMember());
  Cluster& cluster = run.cluster();

  ASSERT_TRUE(cluster.RestartBroker(kB2).ok());
  ASSERT_TRUE(run.sim.WaitForLeader(kT0));
  EXPECT_EQ(cluster.LeaderOf(kT0), kB2);
  EXPECT_TRUE(run.IsrIs({kB2})) << "the ISR is reset to the new leader";

  // Writes go on from broker 2's log end: offset 5 again.
  ASSERT_TRUE(run.sim.ProduceAndWait(*run.client, kT0, 1, 2));
  ASSERT_EQ(run.client->Acked().size(), 12u);
  EXPECT_EQ(run.client->records()[10].offset, Offset(5));
  EXPECT_EQ(run.client->records()[11].offset, Offset(6));

  ksim::testing::FetchResult read = run.sim.ReadAll(*run.client, kT0);
  ASSERT_EQ(read.error, Errc::kNone);
  EXPECT_EQ(Values(read.records),
            (std::vector<std::string>{"v-0", "v-1", "v-2", "v-3", "v-4", "v-10", "v-11"}));
  EXPECT_EQ(run.LostAckedOffsets(read.records), (std::vector<int64_t>{5, 6, 7, 8, 9}));

  // Broker 1 returns as a follower and gives up what it alone had.
  ASSERT_TRUE(cluster.RestartBroker(kB1).ok());
  ASSERT_TRUE(cluster.RunUntil([&] { return run.IsrIs({kB2, kB1}); }, 60 * kSecondUs));
  EXPECT_EQ(cluster.LeaderOf(kT0), kB2);
  const ksim::Partition* follower = cluster.broker(kB1)->GetPartition(kT0);
  ASSERT_NE(follower, nullptr);
  EXPECT_EQ(follower->log_end_offset(), Offset(7));
  EXPECT_EQ(cluster.checker()->counters().unclean_elections, 1u);
  EXPECT_TRUE(run.sim.NoViolations()) << "committed records of an unclean partition are forgotten";

  Trace trace = run.sim.FinishAndParse();
  int unclean = 0;
  for (const TraceEvent* e : Events(trace, "leader_elected")) {
    if (e->fields["unclean"].get<bool>()) {
      ++unclean;
      EXPECT_EQ(e->fields["leader"], 2);
    }
  }
  EXPECT_EQ(unclean, 1);
  EXPECT_FALSE(Events(trace, "truncate", "broker-1").empty());
}

// Without a policy the topic's unclean.leader.election.enable decides, and its default is the
// release's: on up to 0.10.2, off from 0.11.0 (KIP-106).
TEST(ClusterUncleanElectionTest, TheReleaseChoosesWhetherTheStaleReplicaMayLead) {
  for (KafkaRelease release : {KafkaRelease::k0_10_0, KafkaRelease::k0_11_0}) {
    SCOPED_TRACE(std::string(KafkaReleaseName(release)));
    NoIsrLeft run("", 43, release);
    ASSERT_NO_FATAL_FAILURE(run.LoseEveryIsrMember());
    EXPECT_EQ(run.cluster().broker_config(kB1).release, release);
    ASSERT_TRUE(run.cluster().RestartBroker(kB2).ok());
    run.cluster().RunFor(30 * kSecondUs);
    if (release == KafkaRelease::k0_10_0) {
      EXPECT_EQ(run.cluster().LeaderOf(kT0), kB2) << "0.10 elects the first replica back";
      EXPECT_EQ(run.cluster().checker()->counters().unclean_elections, 1u);
    } else {
      EXPECT_EQ(run.cluster().LeaderOf(kT0), kNoBroker) << "0.11 waits for an ISR member";
      EXPECT_EQ(run.cluster().checker()->counters().unclean_elections, 0u);
    }
  }
}

}  // namespace
}  // namespace ksim::sim::testing
