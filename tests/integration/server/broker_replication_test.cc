// The follower side of replication on the simulated cluster: truncation when the leader changes
// under both policies (own HW, or the leader's OffsetsForLeaderEpoch answer),
// OFFSET_OUT_OF_RANGE after an unclean election gave the lead to a shorter log, and a follower
// told that no one leads.
#include <gtest/gtest.h>

#include "tests/support/sim/broker_test_util.h"

namespace ksim::sim::testing {
namespace {

const TopicPartition kTp{"t", PartitionId(0)};
const BrokerId k1{1}, k2{2}, k3{3};

class TruncationTest : public BrokerClusterTest,
                       public ::testing::WithParamInterface<TruncationPolicy> {
 protected:
  void SetUp() override {
    ClusterOptions options;
    options.brokers = 3;
    options.truncation = GetParam();
    StartCluster(std::move(options));
  }

  // Truncations of kTp on `node` that removed records.
  std::vector<nlohmann::ordered_json> Truncations(const std::string& node) const {
    std::vector<nlohmann::ordered_json> out;
    for (nlohmann::ordered_json& event : Events("truncate")) {
      if (event["node"] == node && event["records"].get<int64_t>() > 0) out.push_back(event);
    }
    return out;
  }
};

// The leader dies right after a follower appended records whose HW it has not heard yet
// (the HW in a fetch answer is the leader's before that fetch moved it). When broker-3 follows
// the new leader, the high-watermark policy cuts those records (and fetches them again); the
// leader-epoch policy asks broker-2 where epoch 0 ended and keeps them.
TEST_P(TruncationTest, FollowerOfANewLeaderTruncatesByPolicy) {
  CreateTopic("t", {k1, k2, k3});
  EXPECT_EQ(Produce("broker-1", kTp, 1, 5).error_code, Errc::kNone);
  ASSERT_TRUE(cluster_->RunUntil(
      [&] {
        return PartitionOn(k2, kTp)->log_end_offset() == Offset(5) &&
               PartitionOn(k3, kTp)->log_end_offset() == Offset(5);
      },
      10 * kSecondUs));
  const Offset follower_hw = PartitionOn(k3, kTp)->high_watermark();
  ASSERT_LT(follower_hw, Offset(5));
  ASSERT_TRUE(cluster_->CrashBroker(k1).ok());
  ASSERT_TRUE(cluster_->RunUntil(
      [&] {
        Partition* p2 = PartitionOn(k2, kTp);
        Partition* p3 = PartitionOn(k3, kTp);
        return p2->is_leader() && p3->leader() == k2 && p3->log_end_offset() == Offset(5) &&
               p3->high_watermark() == Offset(5) && p2->high_watermark() == Offset(5);
      },
      60 * kSecondUs));
  const std::vector<nlohmann::ordered_json> cuts = Truncations("broker-3");
  if (GetParam() == TruncationPolicy::kHighWatermark) {
    ASSERT_EQ(cuts.size(), 1u);
    EXPECT_EQ(cuts[0]["reason"], "high_watermark");
    EXPECT_EQ(cuts[0]["to"], follower_hw.value());
  } else {
    EXPECT_TRUE(cuts.empty());
  }
  // Either way nothing was lost: the new leader had every record.
  EXPECT_EQ(Produce("broker-2", kTp, -1, 1).base_offset, Offset(5));
}

INSTANTIATE_TEST_SUITE_P(Policies, TruncationTest,
                         ::testing::Values(TruncationPolicy::kHighWatermark,
                                           TruncationPolicy::kLeaderEpoch),
                         [](const ::testing::TestParamInfo<TruncationPolicy>& info) {
                           return info.param == TruncationPolicy::kHighWatermark ? "HighWatermark"
                                                                                 : "LeaderEpoch";
                         });

class OutOfRangeTest : public BrokerClusterTest {
 protected:
  void SetUp() override {
    ClusterOptions options;
    options.brokers = 2;
    // Durable logs: only the election, not the crash, decides what is lost here.
    options.config = {{"log.flush.interval.messages", "1"}};
    StartCluster(std::move(options));
  }
};

// Broker-2 falls out of the ISR, broker-1 takes more writes alone and dies; the unclean election
// (0.10's default) makes broker-2 leader with a shorter log. Restarted, broker-1 fetches past the
// new leader's end, hears OFFSET_OUT_OF_RANGE, asks the leader's LEO and cuts back to it (Kafka's
// handleOffsetOutOfRange).
TEST_F(OutOfRangeTest, FollowerAheadOfAnUncleanLeaderTruncatesToItsEnd) {
  CreateTopic("t", {k1, k2});
  EXPECT_EQ(Produce("broker-1", kTp, -1, 3).error_code, Errc::kNone);
  ASSERT_TRUE(cluster_->Partition({{"broker-1"}, {"broker-2"}}).ok());
  ASSERT_TRUE(cluster_->RunUntil(
      [&] { return PartitionOn(k1, kTp)->isr() == std::vector<BrokerId>{k1}; }, 30 * kSecondUs));
  EXPECT_EQ(Produce("broker-1", kTp, -1, 4).error_code, Errc::kNone);
  ASSERT_EQ(PartitionOn(k1, kTp)->log_end_offset(), Offset(7));
  // Let the HW checkpoint (every 5 s) record HW 7, so that truncating to the own HW keeps all.
  cluster_->RunFor(6 * kSecondUs);
  ASSERT_TRUE(cluster_->CrashBroker(k1).ok());
  cluster_->Heal();
  ASSERT_TRUE(
      cluster_->RunUntil([&] { return PartitionOn(k2, kTp)->is_leader(); }, 60 * kSecondUs));
  EXPECT_EQ(PartitionOn(k2, kTp)->log_end_offset(), Offset(3));
  EXPECT_EQ(Produce("broker-2", kTp, -1, 1).base_offset, Offset(3));  // offset 3 again

  ASSERT_TRUE(cluster_->RestartBroker(k1).ok());
  ASSERT_TRUE(cluster_->RunUntil(
      [&] {
        Partition* p1 = PartitionOn(k1, kTp);
        return p1 != nullptr && p1->leader() == k2 && p1->log_end_offset() == Offset(4) &&
               PartitionOn(k2, kTp)->isr().size() == 2u;
      },
      60 * kSecondUs));
  bool cut_to_leader_end = false;
  for (const nlohmann::ordered_json& event : Events("truncate")) {
    if (event["node"] == "broker-1" && event["reason"] == "offset_out_of_range") {
      cut_to_leader_end = event["to"] == 4 && event["from_leo"] == 7;
    }
  }
  EXPECT_TRUE(cut_to_leader_end);
  // Kafka's Log.truncateTo cuts the whole batch holding offset 4 (our offsets 3..6) yet sets the
  // LEO to 4, so offset 3 is now a hole on broker-1 where broker-2 holds its own record
  // (KAFKA-6361's divergence): the Log's behaviour, faithfully kept, not the broker's.
  EXPECT_EQ(PartitionOn(k1, kTp)->log_end_offset(), PartitionOn(k2, kTp)->log_end_offset());
}

class NoLeaderTest : public BrokerClusterTest {
 protected:
  void SetUp() override {
    ClusterOptions options;
    options.brokers = 2;
    options.config = {{"log.flush.interval.messages", "1"},
                      {"unclean.leader.election.enable", "false"}};
    StartCluster(std::move(options));
  }
};

// ReplicaManager.makeFollowers (0.10.0.1 to 2.1.0) changes a partition only when the new leader
// is alive. Broker-2 falls out of the ISR and broker-1, the last member, dies: the partition goes
// offline and broker-2 is told leader -1. It stays as it was (leader 1, its epoch, its log, no
// truncation) until broker-1 is back and leads with a new epoch.
TEST_F(NoLeaderTest, FollowerToldLeaderMinusOneStaysAsItWas) {
  CreateTopic("t", {k1, k2});
  EXPECT_EQ(Produce("broker-1", kTp, -1, 3).error_code, Errc::kNone);
  ASSERT_TRUE(cluster_->Partition({{"broker-1"}, {"broker-2"}}).ok());
  ASSERT_TRUE(cluster_->RunUntil(
      [&] { return PartitionOn(k1, kTp)->isr() == std::vector<BrokerId>{k1}; }, 30 * kSecondUs));
  Partition* p2 = PartitionOn(k2, kTp);
  const LeaderEpoch epoch = p2->leader_epoch();
  const Offset leo = p2->log_end_offset();
  ASSERT_EQ(p2->leader(), k1);
  ASSERT_TRUE(cluster_->CrashBroker(k1).ok());
  cluster_->Heal();
  ASSERT_TRUE(cluster_->RunUntil(
      [&] {
        auto state = cluster_->ZkPartitionState(kTp);
        return state && state->leader == zk::kNoLeader;
      },
      60 * kSecondUs));
  cluster_->RunFor(2 * kSecondUs);  // the LeaderAndIsr with leader -1 reaches broker-2
  EXPECT_EQ(p2->role(), ReplicaRole::kFollower);
  EXPECT_EQ(p2->leader(), k1);
  EXPECT_EQ(p2->leader_epoch(), epoch);
  EXPECT_EQ(p2->log_end_offset(), leo);

  ASSERT_TRUE(cluster_->RestartBroker(k1).ok());
  ASSERT_TRUE(cluster_->RunUntil(
      [&] {
        Partition* p1 = PartitionOn(k1, kTp);
        return p1 != nullptr && p1->is_leader() && p2->leader() == k1 &&
               p2->leader_epoch() > epoch && p2->log_end_offset() == p1->log_end_offset();
      },
      60 * kSecondUs));
}

}  // namespace
}  // namespace ksim::sim::testing
