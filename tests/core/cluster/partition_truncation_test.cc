// Follower truncation as each Kafka release had it (docs/versions.md, "Follower truncation"):
// the default policy per release, KIP-101's first form at 0.11.0 to 1.1 (an OffsetsForLeaderEpoch
// answer without an epoch, one round, the HW when the leader knows nothing of the epoch asked),
// KIP-279's rounds from 2.0, and KAFKA-7415 (2.1): the epoch recorded when a replica becomes
// leader rather than at its first append. The logs are those of Kafka's
// EpochDrivenReplicationProtocolAcceptanceTest.logsShouldNotDivergeOnUncleanLeaderElections
// (tag 2.0.0), each replica a Partition over a real Log in a temp directory.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/cluster/partition.h"
#include "core/env/posix_env.h"
#include "tests/support/core/log_test_util.h"
#include "tests/support/core/temp_dir.h"

namespace ksim {
namespace {

using testing::MakeBatch;

constexpr int64_t kStartMs = 1'600'000'000'000;

const BrokerId kB1(1);
const BrokerId kB2(2);

// One broker's replica of t-0.
struct Replica {
  BrokerId id;
  std::unique_ptr<Log> log;
  std::unique_ptr<Partition> partition;
  Partition& p() { return *partition; }
};

class PartitionTruncationTest : public ::testing::Test {
 protected:
  PartitionTruncationTest() : clock_(kStartMs * kUsPerMs) {}

  Replica& AddReplica(BrokerId id, KafkaRelease release) {
    auto replica = std::make_unique<Replica>();
    replica->id = id;
    const std::string dir = JoinPath(JoinPath(tmp_.path(), "broker-" + ToString(id)), "t-0");
    auto log = Log::Open(env_, clock_, dir, LogConfig{});
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    replica->log = std::move(log).value();
    auto epochs = LeaderEpochCache::Open(env_, dir);
    EXPECT_TRUE(epochs.ok()) << epochs.status().ToString();
    auto producers = Partition::LoadProducerState(env_, *replica->log, clock_.NowMs());
    EXPECT_TRUE(producers.ok()) << producers.status().ToString();
    PartitionConfig config;
    config.release = release;
    replica->partition =
        std::make_unique<Partition>(TopicPartition{"t", PartitionId(0)}, id, *replica->log,
                                    std::move(epochs).value(), std::move(producers).value(), clock_,
                                    config, Offset(0), [](std::string_view, EventFields) {});
    replicas_.push_back(std::move(replica));
    return *replicas_.back();
  }

  static LeaderAndIsrPartitionState State(BrokerId leader, int32_t epoch) {
    LeaderAndIsrPartitionState state;
    state.tp = {"t", PartitionId(0)};
    state.leader = leader;
    state.leader_epoch = LeaderEpoch(epoch);
    state.isr = {leader};
    state.replicas = {kB1, kB2};
    return state;
  }

  // Copies batches (epoch, base, count) into a follower, its HW `hw`.
  static void Fill(Replica& r, const std::vector<std::tuple<int32_t, int64_t, int>>& batches,
                   Offset hw) {
    for (const auto& [epoch, base, count] : batches) {
      std::vector<std::string> values;
      for (int i = 0; i < count; ++i) values.push_back("m" + std::to_string(base + i));
      auto appended = r.p().AppendAsFollower(
          MakeBatch(Offset(base), values, kNoTimestamp, LeaderEpoch(epoch)), hw, Offset(0));
      ASSERT_TRUE(appended.ok()) << appended.status().ToString();
    }
  }

  static void MakeLeader(Replica& r, int32_t epoch) {
    auto made = r.p().MakeLeader(State(r.id, epoch));
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    ASSERT_TRUE(*made);
  }

  static void Produce(Replica& leader, int count) {
    std::vector<std::string> values(static_cast<size_t>(count), "x");
    Bytes batch = MakeBatch(Offset(0), values);
    auto info = leader.p().AppendAsLeader(batch, /*acks=*/1);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
  }

  // KAFKA-6361's logs after the fourth leader change. Broker 1 leads epoch 4 with epochs 0@0,
  // 2@1, 4@4 and LEO 6; broker 2, back as its follower, has 0@0, 1@1, 3@2, LEO 3, HW 3.
  std::pair<Replica*, Replica*> DoubleFailover(KafkaRelease release) {
    Replica& leader = AddReplica(kB1, release);
    Replica& follower = AddReplica(kB2, release);
    EXPECT_TRUE(leader.p().MakeFollower(State(kB2, 3)));
    Fill(leader, {{0, 0, 1}, {2, 1, 3}}, Offset(0));
    MakeLeader(leader, 4);
    Produce(leader, 2);
    EXPECT_TRUE(follower.p().MakeFollower(State(kB1, 4)));
    Fill(follower, {{0, 0, 1}, {1, 1, 1}, {3, 2, 1}}, Offset(3));
    EXPECT_EQ(leader.p().log_end_offset(), Offset(6));
    EXPECT_EQ(follower.p().latest_epoch(), LeaderEpoch(3));
    return {&leader, &follower};
  }

  ManualClock clock_;
  PosixEnv env_;
  ksim::testing::TempDir tmp_;
  std::vector<std::unique_ptr<Replica>> replicas_;
};

TEST(TruncationReleaseTest, DefaultPolicyIsLeaderEpochFrom0110) {
  EXPECT_EQ(DefaultTruncationPolicy(KafkaRelease::k0_10_0), TruncationPolicy::kHighWatermark);
  EXPECT_EQ(DefaultTruncationPolicy(KafkaRelease::k0_10_2), TruncationPolicy::kHighWatermark);
  EXPECT_EQ(DefaultTruncationPolicy(KafkaRelease::k0_11_0), TruncationPolicy::kLeaderEpoch);
  EXPECT_EQ(DefaultTruncationPolicy(KafkaRelease::k2_1), TruncationPolicy::kLeaderEpoch);
}

TEST(TruncationReleaseTest, LeaderEpochRulesFollowTheRelease) {
  for (KafkaRelease release : {KafkaRelease::k0_11_0, KafkaRelease::k1_0, KafkaRelease::k1_1}) {
    EXPECT_FALSE(LeaderEpochRulesAt(release).answer_names_epoch) << KafkaReleaseName(release);
    EXPECT_FALSE(LeaderEpochRulesAt(release).epoch_at_become_leader) << KafkaReleaseName(release);
  }
  EXPECT_TRUE(LeaderEpochRulesAt(KafkaRelease::k2_0).answer_names_epoch);
  EXPECT_FALSE(LeaderEpochRulesAt(KafkaRelease::k2_0).epoch_at_become_leader);
  EXPECT_TRUE(LeaderEpochRulesAt(KafkaRelease::k2_1).answer_names_epoch);
  EXPECT_TRUE(LeaderEpochRulesAt(KafkaRelease::k2_1).epoch_at_become_leader);
  // Before 0.11 the policy is ksim's choice: its newest form, so those traces keep still.
  EXPECT_TRUE(LeaderEpochRulesAt(KafkaRelease::k0_10_0).answer_names_epoch);
  EXPECT_TRUE(LeaderEpochRulesAt(KafkaRelease::k0_10_0).epoch_at_become_leader);
}

// ReplicaFetcherThread at 0.11.0.0, 2.0.0 and 2.1.0: shouldSendLeaderEpochRequest from IBP
// 0.11.0-IV2, offsetForLeaderEpochRequestVersion 1 from IBP 2.0-IV0 and 2 from 2.1-IV1.
TEST(TruncationReleaseTest, TheInterBrokerProtocolChoosesTheEpochRequest) {
  auto at = [](KafkaRelease release, std::string_view ibp) {
    const ApiVersion* version = FindApiVersion(ibp, release);
    EXPECT_NE(version, nullptr) << ibp;
    return version == nullptr ? EpochRequest::kV1 : EpochRequestAt(release, *version);
  };
  EXPECT_EQ(at(KafkaRelease::k0_11_0, "0.10.2"), EpochRequest::kNone);
  EXPECT_EQ(at(KafkaRelease::k0_11_0, "0.11.0-IV1"), EpochRequest::kNone);
  EXPECT_EQ(at(KafkaRelease::k0_11_0, "0.11.0-IV2"), EpochRequest::kV0);
  EXPECT_EQ(at(KafkaRelease::k1_1, "1.1"), EpochRequest::kV0);
  EXPECT_EQ(at(KafkaRelease::k2_0, "1.1"), EpochRequest::kV0);
  EXPECT_EQ(at(KafkaRelease::k2_0, "2.0-IV0"), EpochRequest::kV1);
  EXPECT_EQ(at(KafkaRelease::k2_1, "0.10.0"), EpochRequest::kNone);
  EXPECT_EQ(at(KafkaRelease::k2_1, "2.0"), EpochRequest::kV1);
  EXPECT_EQ(at(KafkaRelease::k2_1, "2.1-IV0"), EpochRequest::kV1);
  EXPECT_EQ(at(KafkaRelease::k2_1, "2.1-IV1"), EpochRequest::kV2);
  EXPECT_EQ(at(KafkaRelease::k2_1, "2.1"), EpochRequest::kV2);
  // Before 0.11 leader-epoch truncation is ksim's policy: the newest form at any IBP.
  EXPECT_EQ(at(KafkaRelease::k0_10_0, "0.10.0"), EpochRequest::kV1);
}

// 0.11.0.0's LeaderEpochFileCache.endOffsetFor answers where the first later epoch begins, and
// ReplicaFetcherThread.maybeTruncate cuts once to min(answer, LEO): here nothing, so broker 2
// keeps its epoch 1 and 3 records under broker 1's epoch 2 ones (the divergence KIP-279 fixed).
TEST_F(PartitionTruncationTest, At0110TheFollowerTruncatesOnceToTheLeadersOffset) {
  auto [leader, follower] = DoubleFailover(KafkaRelease::k0_11_0);
  const EpochAndEndOffset answer = leader->p().EndOffsetForEpoch(follower->p().latest_epoch());
  EXPECT_EQ(answer, (EpochAndEndOffset{kUndefinedEpoch, Offset(4)}));
  const TruncationDecision decision = follower->p().DecideTruncation(answer);
  EXPECT_TRUE(decision.complete);
  EXPECT_EQ(decision.truncate_to, Offset(3));  // min(4, LEO 3): nothing cut
}

// An epoch the leader knows nothing of (below its first): UNDEFINED_EPOCH_OFFSET, and the
// follower falls back to its high watermark (0.11.0.0 ReplicaFetcherThread.highWatermark).
TEST_F(PartitionTruncationTest, At0110AnEpochUnknownToTheLeaderFallsBackToTheHighWatermark) {
  Replica& leader = AddReplica(kB1, KafkaRelease::k0_11_0);
  Replica& follower = AddReplica(kB2, KafkaRelease::k0_11_0);
  ASSERT_TRUE(leader.p().MakeFollower(State(kB2, 2)));
  Fill(leader, {{2, 0, 4}}, Offset(0));
  MakeLeader(leader, 3);
  Produce(leader, 1);
  ASSERT_TRUE(follower.p().MakeFollower(State(kB1, 3)));
  Fill(follower, {{1, 0, 6}}, Offset(2));
  const EpochAndEndOffset answer = leader.p().EndOffsetForEpoch(LeaderEpoch(1));
  EXPECT_TRUE(answer.undefined());
  const TruncationDecision decision = follower.p().DecideTruncation(answer);
  EXPECT_TRUE(decision.complete);
  EXPECT_EQ(decision.truncate_to, Offset(2));
  // The leader's own latest epoch: its LEO, still without an epoch.
  EXPECT_EQ(leader.p().EndOffsetForEpoch(LeaderEpoch(3)),
            (EpochAndEndOffset{kUndefinedEpoch, Offset(5)}));
}

// 2.0 (KIP-279): the leader answers (2, 4); the follower never had epoch 2, cuts to the end of
// its epoch 1 and asks again; (0, 1) is an epoch both had: cut to 1, the logs agree.
TEST_F(PartitionTruncationTest, At20TheFollowerTakesRoundsUntilAnEpochBothHad) {
  auto [leader, follower] = DoubleFailover(KafkaRelease::k2_0);
  EpochAndEndOffset answer = leader->p().EndOffsetForEpoch(follower->p().latest_epoch());
  ASSERT_EQ(answer, (EpochAndEndOffset{LeaderEpoch(2), Offset(4)}));
  TruncationDecision decision = follower->p().DecideTruncation(answer);
  EXPECT_FALSE(decision.complete);
  EXPECT_EQ(decision.truncate_to, Offset(2));
  EXPECT_EQ(decision.next_epoch, LeaderEpoch(1));
  ASSERT_TRUE(follower->p().TruncateTo(decision.truncate_to, "leader_epoch").ok());

  answer = leader->p().EndOffsetForEpoch(decision.next_epoch);
  ASSERT_EQ(answer, (EpochAndEndOffset{LeaderEpoch(0), Offset(1)}));
  decision = follower->p().DecideTruncation(answer);
  EXPECT_TRUE(decision.complete);
  EXPECT_EQ(decision.truncate_to, Offset(1));
  ASSERT_TRUE(follower->p().TruncateTo(decision.truncate_to, "leader_epoch").ok());
  EXPECT_EQ(follower->p().log_end_offset(), Offset(1));
}

// Before 2.1 a new leader's epoch waits for its first append (2.0.0's Partition.makeLeader
// assigns nothing; Log.append does); from 2.1 (KAFKA-7415) makeLeader records it at the LEO.
TEST_F(PartitionTruncationTest, At20TheEpochIsRecordedAtTheFirstAppendAt21AtBecomeLeader) {
  Replica& at20 = AddReplica(kB1, KafkaRelease::k2_0);
  ASSERT_TRUE(at20.p().MakeFollower(State(kB2, 0)));
  Fill(at20, {{0, 0, 3}}, Offset(0));
  MakeLeader(at20, 2);
  EXPECT_EQ(at20.p().latest_epoch(), LeaderEpoch(0));
  // A follower asking for epoch 2 meets a leader that knows only epoch 0.
  EXPECT_TRUE(at20.p().EndOffsetForEpoch(LeaderEpoch(2)).undefined());
  Produce(at20, 2);
  EXPECT_EQ(at20.p().epochs().entries(),
            (std::vector<EpochEntry>{{LeaderEpoch(0), Offset(0)}, {LeaderEpoch(2), Offset(3)}}));

  Replica& at21 = AddReplica(kB2, KafkaRelease::k2_1);
  ASSERT_TRUE(at21.p().MakeFollower(State(kB1, 0)));
  Fill(at21, {{0, 0, 3}}, Offset(0));
  MakeLeader(at21, 2);
  EXPECT_EQ(at21.p().epochs().entries(),
            (std::vector<EpochEntry>{{LeaderEpoch(0), Offset(0)}, {LeaderEpoch(2), Offset(3)}}));
  EXPECT_EQ(at21.p().EndOffsetForEpoch(LeaderEpoch(2)),
            (EpochAndEndOffset{LeaderEpoch(2), Offset(3)}));
}

// KAFKA-7415's other half (2.1.0's LeaderEpochFileCache.endOffsetFor): an epoch below a cache's
// first entry is answered with that epoch and the first entry's start offset, where 2.0.0
// answered UNDEFINED. The follower (epoch 1 from 0, LEO 9, never had epoch 0) checks the leader's
// answer (0, 1) against its own cache: at 2.1 (0, 0), the same epoch, so it cuts to 0 and fetches
// the leader's offset 0 again; at 2.0 UNDEFINED, so it cuts at the leader's offset, 1, and keeps
// its own offset 0 under the leader's (explore safe seeds 507405 and 514579 at 2.1: a committed
// record replaced, and a fetcher stopped at UNEXPECTED_APPEND_OFFSET).
class BelowTheFirstEpochTest : public PartitionTruncationTest,
                               public ::testing::WithParamInterface<KafkaRelease> {};

TEST_P(BelowTheFirstEpochTest, AFollowerWithoutTheLeadersEarlierEpochCutsToItsFirstEpochFrom21) {
  const bool at21 = GetParam() >= KafkaRelease::k2_1;
  Replica& leader = AddReplica(kB1, GetParam());
  Replica& follower = AddReplica(kB2, GetParam());
  ASSERT_TRUE(leader.p().MakeFollower(State(kB2, 0)));
  Fill(leader, {{0, 0, 1}}, Offset(0));
  MakeLeader(leader, 4);
  Produce(leader, 1);
  ASSERT_EQ(leader.p().epochs().entries(),
            (std::vector<EpochEntry>{{LeaderEpoch(0), Offset(0)}, {LeaderEpoch(4), Offset(1)}}));
  ASSERT_TRUE(follower.p().MakeFollower(State(kB1, 4)));
  Fill(follower, {{1, 0, 9}}, Offset(0));

  const EpochAndEndOffset answer = leader.p().EndOffsetForEpoch(follower.p().latest_epoch());
  EXPECT_EQ(answer, (EpochAndEndOffset{LeaderEpoch(0), Offset(1)}));
  // The leader asked for an epoch below its own first: its first start offset from 2.1.
  Replica& late = AddReplica(BrokerId(3), GetParam());
  ASSERT_TRUE(late.p().MakeFollower(State(kB2, 0)));
  Fill(late, {{3, 0, 2}}, Offset(0));
  MakeLeader(late, 5);
  EXPECT_EQ(late.p().EndOffsetForEpoch(LeaderEpoch(1)),
            at21 ? (EpochAndEndOffset{LeaderEpoch(1), Offset(0)}) : EpochAndEndOffset{});

  const TruncationDecision decision = follower.p().DecideTruncation(answer);
  EXPECT_TRUE(decision.complete);
  EXPECT_EQ(decision.truncate_to, at21 ? Offset(0) : Offset(1));
  ASSERT_TRUE(follower.p().TruncateTo(decision.truncate_to, "leader_epoch").ok());
  EXPECT_EQ(follower.p().log_end_offset(), at21 ? Offset(0) : Offset(1));
}

INSTANTIATE_TEST_SUITE_P(Releases, BelowTheFirstEpochTest,
                         ::testing::Values(KafkaRelease::k2_0, KafkaRelease::k2_1),
                         [](const ::testing::TestParamInfo<KafkaRelease>& info) {
                           return info.param == KafkaRelease::k2_1 ? std::string("At21")
                                                                   : std::string("At20");
                         });

}  // namespace
}  // namespace ksim
