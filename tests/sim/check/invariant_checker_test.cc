// InvariantChecker: each rule caught on states that break it, and quiet on states that keep it.
// Replicas are real Partitions over real Logs on a VirtualDisk (what the Cluster feeds the
// checker); the states a correct Partition refuses to reach (a leader's HW going down, HW past
// the LEO) are fed as hand-built observations.
#include "sim/check/invariant_checker.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/base/clock.h"
#include "core/base/random.h"
#include "core/cluster/partition.h"
#include "core/record/record_batch.h"
#include "core/storage/leader_epoch_cache.h"
#include "core/storage/log.h"
#include "sim/world/virtual_disk.h"
#include "tests/support/core/log_test_util.h"

namespace ksim::sim {
namespace {

const TopicPartition kTp{"t", PartitionId(0)};
const BrokerId kB1(1);
const BrokerId kB2(2);
const BrokerId kB3(3);

struct Replica {
  BrokerId id;
  std::unique_ptr<Log> log;
  std::unique_ptr<ksim::Partition> partition;
  ksim::Partition& p() { return *partition; }
};

class InvariantCheckerTest : public ::testing::Test {
 protected:
  InvariantCheckerTest()
      : disk_(RandomStream(1)),
        checker_([this](const InvariantViolation& v) { sunk_.push_back(v); }) {}

  // `magic`: the log's message format (1 writes what is appended as message sets v1).
  Replica& AddReplica(BrokerId id, int32_t min_insync_replicas = 1, int8_t magic = kMagicV2) {
    auto replica = std::make_unique<Replica>();
    replica->id = id;
    const std::string dir = "/broker-" + std::to_string(id.value()) + "/t-0";
    LogConfig config;
    config.max_index_size_bytes = 4096;
    config.message_format_magic = magic;
    auto log = Log::Open(disk_, clock_, dir, config);
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    replica->log = std::move(log).value();
    auto epochs = LeaderEpochCache::Open(disk_, dir);
    EXPECT_TRUE(epochs.ok()) << epochs.status().ToString();
    PartitionConfig partition_config;
    partition_config.min_insync_replicas = min_insync_replicas;
    auto producers = ksim::Partition::LoadProducerState(disk_, *replica->log, clock_.NowMs());
    EXPECT_TRUE(producers.ok()) << producers.status().ToString();
    replica->partition = std::make_unique<ksim::Partition>(
        kTp, id, *replica->log, std::move(epochs).value(), std::move(producers).value(), clock_,
        partition_config, Offset(0), EventSink());
    replicas_.push_back(std::move(replica));
    return *replicas_.back();
  }

  static LeaderAndIsrPartitionState State(BrokerId leader, int32_t epoch,
                                          std::vector<BrokerId> isr) {
    LeaderAndIsrPartitionState state;
    state.tp = kTp;
    state.leader = leader;
    state.leader_epoch = LeaderEpoch(epoch);
    state.isr = std::move(isr);
    state.replicas = {kB1, kB2, kB3};
    return state;
  }

  static void MakeLeader(Replica& r, int32_t epoch, std::vector<BrokerId> isr) {
    auto made = r.p().MakeLeader(State(r.id, epoch, std::move(isr)));
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    ASSERT_TRUE(*made);
  }

  static void MakeFollower(Replica& r, BrokerId leader, int32_t epoch, std::vector<BrokerId> isr) {
    r.p().MakeFollower(State(leader, epoch, std::move(isr)));
  }

  // One batch of `values`, appended by the leader.
  static void Produce(Replica& leader, const std::vector<std::string>& values) {
    Bytes batch = testing::MakeBatch(Offset(0), values);
    auto info = leader.p().AppendAsLeader(batch, 1);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
  }

  // A follower's fetch round, as the broker carries it out.
  static void Fetch(Replica& leader, Replica& follower) {
    const Offset fetch_offset = follower.p().log_end_offset();
    auto data = leader.p().Read(fetch_offset, 1 << 20, /*from_follower=*/true);
    ASSERT_TRUE(data.ok()) << data.status().ToString();
    auto expanded = leader.p().UpdateFollowerFetch(follower.id, fetch_offset);
    if (expanded) leader.p().ApplyIsrChange(*expanded, leader.p().zk_version() + 1);
    auto appended = follower.p().AppendAsFollower(data->records, leader.p().high_watermark(),
                                                  leader.p().log_start_offset());
    ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  }

  // One checker pass over `replicas` (each of incarnation 1).
  void Pass(const std::vector<Replica*>& replicas) {
    clock_.Advance(1000);
    checker_.BeginPass(clock_.Now());
    for (Replica* r : replicas) checker_.Observe(ObserveReplica(r->id, 1, r->p()));
    checker_.EndPass();
  }

  void PassOf(const std::vector<ReplicaObservation>& observations) {
    clock_.Advance(1000);
    checker_.BeginPass(clock_.Now());
    for (const ReplicaObservation& o : observations) checker_.Observe(o);
    checker_.EndPass();
  }

  // A partial pass (the Cluster's after an event): only `observations` changed.
  void PartialPassOf(const std::vector<ReplicaObservation>& observations) {
    clock_.Advance(1000);
    checker_.BeginPass(clock_.Now(), /*partial=*/true);
    for (const ReplicaObservation& o : observations) checker_.Observe(o);
    checker_.EndPass();
  }

  static ReplicaObservation Leader(BrokerId broker, uint64_t incarnation, int32_t epoch, int64_t hw,
                                   int64_t leo = 100) {
    ReplicaObservation o;
    o.broker = broker;
    o.incarnation = incarnation;
    o.tp = kTp;
    o.role = ReplicaRole::kLeader;
    o.leader_epoch = LeaderEpoch(epoch);
    o.high_watermark = Offset(hw);
    o.log_end_offset = Offset(leo);
    o.isr_size = 1;
    return o;
  }

  // A partial pass over what the replicas' change list names (Partition::set_change_list, the
  // Cluster's pass after an event), the list then cleared; returns how many were observed.
  size_t ChangedPass(std::vector<ksim::Partition*>& changed) {
    clock_.Advance(1000);
    checker_.BeginPass(clock_.Now(), /*partial=*/true);
    for (ksim::Partition* partition : changed) {
      for (const auto& r : replicas_) {
        if (r->partition.get() == partition) checker_.Observe(ObserveReplica(r->id, 1, *partition));
      }
      partition->ClearChangeMark();
    }
    checker_.EndPass();
    const size_t observed = changed.size();
    changed.clear();
    return observed;
  }

  std::vector<std::string> RulesSeen() const {
    std::vector<std::string> rules;
    for (const InvariantViolation& v : checker_.violations()) rules.push_back(v.rule);
    return rules;
  }

  ManualClock clock_{1'000'000};
  VirtualDisk disk_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::vector<InvariantViolation> sunk_;
  InvariantChecker checker_;
};

using Rules = std::vector<std::string>;

TEST_F(InvariantCheckerTest, TwoBrokersLeadingInOneEpochIsAViolation) {
  Replica& r1 = AddReplica(kB1);
  Replica& r2 = AddReplica(kB2);
  MakeLeader(r1, 3, {kB1});
  MakeLeader(r2, 3, {kB2});
  Pass({&r1, &r2});
  ASSERT_EQ(RulesSeen(), Rules{"one_leader_per_epoch"}) << checker_.Report();
  const InvariantViolation& v = checker_.violations()[0];
  EXPECT_EQ(v.tp, kTp);
  EXPECT_EQ(v.t_us, clock_.Now());
  EXPECT_NE(v.message.find("brokers 1 and 2"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("leader epoch 3"), std::string::npos) << v.message;
  ASSERT_EQ(sunk_.size(), 1u) << "the sink hears every violation";
  EXPECT_EQ(sunk_[0].message, v.message);

  Pass({&r1, &r2});
  EXPECT_EQ(checker_.violations().size(), 1u) << "reported once";
}

TEST_F(InvariantCheckerTest, OneBrokerLeadingAnEpochAfterAnotherLedItIsAViolation) {
  // Not at the same moment: broker 1 led epoch 2 earlier in the run.
  Replica& r1 = AddReplica(kB1);
  Replica& r2 = AddReplica(kB2);
  MakeLeader(r1, 2, {kB1});
  Pass({&r1});
  r1.p().Stop();
  MakeLeader(r2, 2, {kB2});
  Pass({&r1, &r2});
  EXPECT_EQ(RulesSeen(), Rules{"one_leader_per_epoch"}) << checker_.Report();
}

TEST_F(InvariantCheckerTest, LeadersOfRisingEpochsKeepingCommittedBatchesAreFine) {
  Replica& r1 = AddReplica(kB1);
  Replica& r2 = AddReplica(kB2);
  MakeLeader(r1, 1, {kB1, kB2});
  MakeFollower(r2, kB1, 1, {kB1, kB2});
  Produce(r1, {"a", "b"});
  Produce(r1, {"c"});
  Fetch(r1, r2);  // r2 has everything; the leader's HW reaches 3
  Fetch(r1, r2);  // r2 learns HW 3
  ASSERT_EQ(r1.p().high_watermark(), Offset(3));
  Pass({&r1, &r2});
  EXPECT_EQ(checker_.CommittedBatches(kTp),
            (std::map<Offset, Offset>{{Offset(0), Offset(2)}, {Offset(2), Offset(3)}}));

  // Broker 1 goes away; broker 2 leads epoch 2 with the same batches and appends more.
  MakeLeader(r2, 2, {kB2});
  Produce(r2, {"d"});
  Pass({&r2});
  EXPECT_TRUE(checker_.ok()) << checker_.Report();
  EXPECT_EQ(checker_.counters().batches_verified, 2u);
  EXPECT_EQ(checker_.counters().batches_committed, 3u);
  EXPECT_EQ(checker_.counters().leaderships, 2u);
}

TEST_F(InvariantCheckerTest, LeaderHwGoingDownWithinOneLeadershipIsAViolation) {
  PassOf({Leader(kB1, 1, 4, 5)});
  PassOf({Leader(kB1, 1, 4, 7)});
  EXPECT_TRUE(checker_.ok()) << checker_.Report();
  PassOf({Leader(kB1, 1, 4, 6)});
  ASSERT_EQ(RulesSeen(), Rules{"leader_hw_monotonic"}) << checker_.Report();
  EXPECT_NE(checker_.violations()[0].message.find("from 7 down to 6"), std::string::npos)
      << checker_.violations()[0].message;
}

TEST_F(InvariantCheckerTest, LeaderHwMayStartLowerInANewLeadership) {
  PassOf({Leader(kB1, 1, 4, 7)});
  PassOf({Leader(kB1, 1, 5, 3)});  // a new epoch
  PassOf({Leader(kB1, 2, 5, 2)});  // a new incarnation (restart)
  PassOf({});                      // gone
  PassOf({Leader(kB1, 3, 5, 1)});
  EXPECT_TRUE(checker_.ok()) << checker_.Report();
}

TEST_F(InvariantCheckerTest, HwOutsideLogStartAndLeoIsAViolationReportedOncePerEpisode) {
  ReplicaObservation bad = Leader(kB1, 1, 1, 5, /*leo=*/4);
  PassOf({bad});
  PassOf({bad});
  ASSERT_EQ(RulesSeen(), Rules{"offsets_ordered"}) << checker_.Report();
  EXPECT_NE(checker_.violations()[0].message.find("HW 5, LEO 4"), std::string::npos);

  ReplicaObservation good = Leader(kB1, 1, 1, 5, /*leo=*/5);
  PassOf({good});
  ReplicaObservation below_start = Leader(kB1, 1, 1, 5, /*leo=*/9);
  below_start.log_start_offset = Offset(6);
  PassOf({below_start});
  EXPECT_EQ(RulesSeen(), (Rules{"offsets_ordered", "offsets_ordered"})) << checker_.Report();
}

TEST_F(InvariantCheckerTest, NewLeaderHoldingOtherRecordsAtCommittedOffsetsIsAViolation) {
  Replica& r1 = AddReplica(kB1);
  Replica& r2 = AddReplica(kB2);
  MakeLeader(r1, 1, {kB1});
  Produce(r1, {"a", "b", "c"});
  ASSERT_EQ(r1.p().high_watermark(), Offset(3));  // a lone ISR member: committed at once
  Pass({&r1});
  ASSERT_EQ(checker_.counters().batches_committed, 1u);

  // Broker 2 never saw them and wrote its own three records before leading epoch 2.
  MakeLeader(r2, 2, {kB2});
  Produce(r2, {"x", "y", "z"});
  Pass({&r2});
  ASSERT_EQ(RulesSeen(), Rules{"committed_records_stable"}) << checker_.Report();
  EXPECT_NE(checker_.violations()[0].message.find("broker 2"), std::string::npos);

  // The new history is adopted: no further reports as its HW moves on.
  Produce(r2, {"w"});
  Pass({&r2});
  EXPECT_EQ(checker_.violations().size(), 1u) << checker_.Report();
}

// A new leader holding, in a committed batch's place, a message set (a format before 0.11, no
// leader epoch) while its broker truncates by leader epoch: the fork that truncation cannot see
// (epochless_fork, which the history checker permits as Kafka's). Not for a broker truncating to
// its high watermark, nor for a record batch v2.
class EpochlessForkTest : public InvariantCheckerTest,
                          public ::testing::WithParamInterface<std::tuple<bool, int>> {};

TEST_P(EpochlessForkTest, NamesAMessageSetHeldUnderLeaderEpochTruncation) {
  const bool by_leader_epoch = std::get<0>(GetParam());
  const int magic = std::get<1>(GetParam());
  Replica& r1 = AddReplica(kB1, 1, static_cast<int8_t>(magic));
  Replica& r2 = AddReplica(kB2, 1, static_cast<int8_t>(magic));
  auto pass = [&](Replica& r) {
    ReplicaObservation o = ObserveReplica(r.id, 1, r.p());
    o.truncates_by_leader_epoch = by_leader_epoch;
    PassOf({o});
  };
  MakeLeader(r1, 1, {kB1});
  Produce(r1, {"a"});
  pass(r1);
  ASSERT_EQ(checker_.counters().batches_committed, 1u);
  MakeLeader(r2, 2, {kB2});
  Produce(r2, {"x"});
  pass(r2);
  ASSERT_EQ(RulesSeen(), Rules{"committed_records_stable"}) << checker_.Report();
  EXPECT_NE(checker_.violations()[0].message.find(" is now "), std::string::npos);
  EXPECT_EQ(checker_.violations()[0].epochless_fork, by_leader_epoch && magic < kMagicV2);
  // A record batch v2 of a later epoch than the committed one's, under leader-epoch truncation:
  // the epochs are named (held_epoch), for the history checker's KAFKA-6361 rule.
  const bool epoch_fork = by_leader_epoch && magic == kMagicV2;
  EXPECT_EQ(checker_.violations()[0].held_epoch, epoch_fork ? LeaderEpoch(2) : kUndefinedEpoch);
  EXPECT_EQ(checker_.violations()[0].committed_epoch,
            epoch_fork ? LeaderEpoch(1) : kUndefinedEpoch);
}

// The batch a new leader holds in a committed one's place is of an earlier epoch than the
// committed batch's: not a fork of its own later epoch (held_epoch stays undefined), which one
// round of OffsetsForLeaderEpoch for its latest epoch would have found.
TEST_F(InvariantCheckerTest, EarlierEpochInACommittedBatchsPlaceNamesNoEpochs) {
  Replica& r1 = AddReplica(kB1);
  Replica& r2 = AddReplica(kB2);
  auto pass = [&](Replica& r) {
    ReplicaObservation o = ObserveReplica(r.id, 1, r.p());
    o.truncates_by_leader_epoch = true;
    PassOf({o});
  };
  MakeLeader(r2, 1, {kB2});
  Produce(r2, {"x"});  // never observed as leader: nothing committed from it
  MakeLeader(r1, 2, {kB1});
  Produce(r1, {"a"});
  pass(r1);
  ASSERT_EQ(checker_.counters().batches_committed, 1u);
  MakeLeader(r2, 3, {kB2});
  pass(r2);
  ASSERT_EQ(RulesSeen(), Rules{"committed_records_stable"}) << checker_.Report();
  EXPECT_EQ(checker_.violations()[0].held_epoch, kUndefinedEpoch);
  EXPECT_EQ(checker_.violations()[0].committed_epoch, kUndefinedEpoch);
  EXPECT_FALSE(checker_.violations()[0].epochless_fork);
}

INSTANTIATE_TEST_SUITE_P(TruncationAndFormat, EpochlessForkTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Values(1, 2)),
                         [](const ::testing::TestParamInfo<std::tuple<bool, int>>& info) {
                           return std::string(std::get<0>(info.param) ? "ByLeaderEpoch"
                                                                      : "ToHighWatermark") +
                                  "Magic" + std::to_string(std::get<1>(info.param));
                         });

TEST_F(InvariantCheckerTest, NewLeaderMissingCommittedRecordsIsAViolation) {
  Replica& r1 = AddReplica(kB1);
  Replica& r2 = AddReplica(kB2);
  MakeLeader(r1, 1, {kB1, kB2});
  MakeFollower(r2, kB1, 1, {kB1, kB2});
  Produce(r1, {"a"});
  Fetch(r1, r2);
  Produce(r1, {"b"});
  Fetch(r1, r2);
  Fetch(r1, r2);  // the leader learns r2's LEO 2: HW 2
  ASSERT_EQ(r1.p().high_watermark(), Offset(2));
  Pass({&r1, &r2});
  ASSERT_EQ(checker_.counters().batches_committed, 2u);
  // Broker 2 loses its second batch (as the 0.10 high-watermark truncation does) and leads.
  ASSERT_TRUE(r2.p().TruncateTo(Offset(1), "test").ok());
  MakeLeader(r2, 2, {kB2});
  Pass({&r2});
  ASSERT_EQ(RulesSeen(), Rules{"committed_records_stable"}) << checker_.Report();
  EXPECT_NE(checker_.violations()[0].message.find("log ends at 1"), std::string::npos)
      << checker_.violations()[0].message;
}

TEST_F(InvariantCheckerTest, ZombieLeaderOfAnOlderEpochIsNeitherRecordedNorChecked) {
  Replica& r1 = AddReplica(kB1);
  Replica& r2 = AddReplica(kB2);
  MakeLeader(r1, 1, {kB1});
  Produce(r1, {"a"});
  Pass({&r1});
  // Broker 2 is elected in epoch 2 (with broker 1's batch) while broker 1 has not heard of it.
  MakeFollower(r2, kB1, 1, {kB1, kB2});
  Fetch(r1, r2);
  MakeLeader(r2, 2, {kB2});
  Produce(r2, {"b"});
  Produce(r1, {"zombie"});  // acks=1 at offset 1 on the old leader
  Pass({&r1, &r2});
  Pass({&r2, &r1});
  EXPECT_TRUE(checker_.ok()) << checker_.Report();
  EXPECT_EQ(checker_.CommittedBatches(kTp),
            (std::map<Offset, Offset>{{Offset(0), Offset(1)}, {Offset(1), Offset(2)}}));
  EXPECT_EQ(checker_.counters().leaderships, 2u);
}

TEST_F(InvariantCheckerTest, UncleanElectionForgetsWhatWasCommitted) {
  Replica& r1 = AddReplica(kB1);
  Replica& r2 = AddReplica(kB2);
  MakeLeader(r1, 1, {kB1});
  Produce(r1, {"a", "b", "c"});
  Pass({&r1});
  EventFields elected;
  elected.Add("topic", "t");
  elected.Add("partition", 0);
  elected.Add("leader", 2);
  elected.Add("epoch", 2);
  elected.Add("unclean", true);
  checker_.OnEvent("leader_elected", elected);
  MakeLeader(r2, 2, {kB2});
  Produce(r2, {"x"});
  Pass({&r2});
  EXPECT_TRUE(checker_.ok()) << checker_.Report();
  EXPECT_EQ(checker_.counters().unclean_elections, 1u);
  EXPECT_TRUE(checker_.CommittedBatches(kTp).empty());
}

TEST_F(InvariantCheckerTest, CleanElectionEventKeepsCheckingCommittedRecords) {
  Replica& r1 = AddReplica(kB1);
  Replica& r2 = AddReplica(kB2);
  MakeLeader(r1, 1, {kB1});
  Produce(r1, {"a"});
  Pass({&r1});
  EventFields elected;
  elected.Add("topic", "t");
  elected.Add("partition", 0);
  elected.Add("unclean", false);
  checker_.OnEvent("leader_elected", elected);
  MakeLeader(r2, 2, {kB2});
  Produce(r2, {"x"});
  Pass({&r2});
  EXPECT_EQ(RulesSeen(), Rules{"committed_records_stable"}) << checker_.Report();
}

TEST_F(InvariantCheckerTest, DeletedTopicCreatedAgainStartsAfresh) {
  Replica& r1 = AddReplica(kB1);
  MakeLeader(r1, 0, {kB1});
  Produce(r1, {"a"});
  Pass({&r1});
  EventFields deleted;
  deleted.Add("topic", "t");
  checker_.OnEvent("topic_deleted", deleted);
  EXPECT_TRUE(checker_.CommittedBatches(kTp).empty());
  // The new t-0 on broker 2, leader epoch 0 again, with other records.
  Replica& r2 = AddReplica(kB2);
  MakeLeader(r2, 0, {kB2});
  Produce(r2, {"x"});
  Pass({&r2});
  EXPECT_TRUE(checker_.ok()) << checker_.Report();
}

TEST_F(InvariantCheckerTest, BatchesCoveredWhileIsrIsBelowMinInsyncAreNotCommitted) {
  Replica& r1 = AddReplica(kB1, /*min_insync_replicas=*/2);
  Replica& r2 = AddReplica(kB2);
  MakeLeader(r1, 1, {kB1});
  Produce(r1, {"a"});  // acks=1 appends; HW 1 with an ISR of one
  Pass({&r1});
  EXPECT_TRUE(checker_.CommittedBatches(kTp).empty());
  MakeLeader(r2, 2, {kB2});
  Produce(r2, {"x"});
  Pass({&r2});
  EXPECT_TRUE(checker_.ok()) << checker_.Report();
}

// Explore safe seeds 706010 and 706842 at 0.11.0 to 2.0: batches a HW covered while the ISR was
// below min.insync.replicas count as committed once it holds enough again (every member then
// holds all below the HW), and a later leader without them is reported with that time, which
// the history checker's permitted-loss rules read. Before, they were never counted, yet a
// leader's log ending below them was reported, with no commit time.
TEST_F(InvariantCheckerTest, BatchesCoveredWhileIsrIsBelowMinInsyncAreCommittedOnceItIsEnough) {
  Replica& r1 = AddReplica(kB1, /*min_insync_replicas=*/2);
  Replica& r2 = AddReplica(kB2, /*min_insync_replicas=*/2);
  Replica& r3 = AddReplica(kB3, /*min_insync_replicas=*/2);
  MakeLeader(r1, 1, {kB1});
  MakeFollower(r2, kB1, 1, {kB1});
  Produce(r1, {"a"});  // HW 1 with an ISR of one: not committed
  Pass({&r1, &r2});
  EXPECT_TRUE(checker_.CommittedBatches(kTp).empty());
  Fetch(r1, r2);  // broker 2 catches up
  Fetch(r1, r2);  // and, fetching from the HW, joins the ISR
  ASSERT_EQ(r1.p().isr().size(), 2u);
  Pass({&r1, &r2});
  const TimeUs joined_us = clock_.Now();
  EXPECT_EQ(checker_.CommittedBatches(kTp), (std::map<Offset, Offset>{{Offset(0), Offset(1)}}));
  EXPECT_TRUE(checker_.ok()) << checker_.Report();
  // Broker 3, empty, leads: committed records lost, dated when the ISR became large enough.
  MakeLeader(r3, 2, {kB3, kB2});
  Pass({&r3});
  ASSERT_EQ(RulesSeen(), Rules{"committed_records_stable"}) << checker_.Report();
  EXPECT_EQ(checker_.violations()[0].committed_us, joined_us);
  EXPECT_NE(checker_.violations()[0].message.find("its log ends at 0, committed batches reach 1"),
            std::string::npos)
      << checker_.violations()[0].message;
}

// A new leader short only of batches the HW covered while the ISR was too small, which never
// grew since, lost nothing committed.
TEST_F(InvariantCheckerTest, ANewLeaderShortOfUncommittedBatchesOnlyIsFine) {
  Replica& r1 = AddReplica(kB1, /*min_insync_replicas=*/2);
  Replica& r2 = AddReplica(kB2, /*min_insync_replicas=*/2);
  MakeLeader(r1, 1, {kB1, kB2});
  MakeFollower(r2, kB1, 1, {kB1, kB2});
  Produce(r1, {"a"});
  Fetch(r1, r2);
  Fetch(r1, r2);  // HW 1 with an ISR of two: offset 0 committed
  Pass({&r1, &r2});
  ASSERT_EQ(checker_.CommittedBatches(kTp).size(), 1u);
  MakeLeader(r1, 2, {kB1});  // leading again with an ISR of the leader alone
  Produce(r1, {"b"});        // HW 2 with an ISR of one: offset 1 passed over, not committed
  Pass({&r1, &r2});
  ASSERT_EQ(checker_.CommittedBatches(kTp).size(), 1u);
  MakeLeader(r2, 3, {kB2});  // broker 2 (log end 1) leads: it holds all that was committed
  Pass({&r2});
  EXPECT_TRUE(checker_.ok()) << checker_.Report();
}

TEST_F(InvariantCheckerTest, CommittedBatchesBelowTheNewLeadersLogStartAreNotAsked) {
  Replica& r1 = AddReplica(kB1);
  Replica& r2 = AddReplica(kB2);
  MakeLeader(r1, 1, {kB1});
  Produce(r1, {"a", "b"});
  Pass({&r1});
  // Broker 2 starts its log past them (Kafka's handleOffsetOutOfRange), then leads.
  ASSERT_TRUE(r2.p().TruncateFullyAndStartAt(Offset(2)).ok());
  MakeLeader(r2, 2, {kB2});
  Produce(r2, {"c"});
  Pass({&r2});
  EXPECT_TRUE(checker_.ok()) << checker_.Report();
  EXPECT_EQ(checker_.CommittedBatches(kTp).size(), 2u);
}

// Partial passes (sim/cluster/cluster.h: after an event, only the replicas that changed): a
// replica not observed keeps what the checker remembers of it, so each rule still fires when the
// one replica that changed breaks it.
TEST_F(InvariantCheckerTest, PartialPassesKeepUnobservedReplicasAndEachRuleStillFires) {
  ReplicaObservation follower = Leader(kB2, 1, 4, 7);
  follower.role = ReplicaRole::kFollower;
  PassOf({Leader(kB1, 1, 4, 7), follower});
  PartialPassOf({});
  PartialPassOf({follower});
  EXPECT_TRUE(checker_.ok()) << checker_.Report();
  // (b): broker 1, unobserved for two passes, comes back with a lower HW in the same leadership.
  PartialPassOf({Leader(kB1, 1, 4, 6)});
  EXPECT_EQ(RulesSeen(), Rules{"leader_hw_monotonic"}) << checker_.Report();
  // (d): the follower alone, with its HW past its LEO.
  ReplicaObservation disordered = follower;
  disordered.log_end_offset = Offset(5);
  PartialPassOf({disordered});
  EXPECT_EQ(RulesSeen(), (Rules{"leader_hw_monotonic", "offsets_ordered"})) << checker_.Report();
  // (a): the follower alone, claiming the epoch broker 1 leads.
  PartialPassOf({Leader(kB2, 1, 4, 7)});
  EXPECT_EQ(RulesSeen(), (Rules{"leader_hw_monotonic", "offsets_ordered", "one_leader_per_epoch"}))
      << checker_.Report();
}

TEST_F(InvariantCheckerTest, PartialPassCatchesANewLeaderWithoutTheCommittedRecords) {
  Replica& r1 = AddReplica(kB1);
  Replica& r2 = AddReplica(kB2);
  MakeLeader(r1, 1, {kB1});
  MakeFollower(r2, kB1, 1, {kB1});
  Produce(r1, {"a", "b"});  // a lone ISR member: committed at once
  Pass({&r1, &r2});
  ASSERT_EQ(checker_.counters().batches_committed, 1u);
  // (c): only broker 2 changes (it leads epoch 2 without them); broker 1 is not observed.
  MakeLeader(r2, 2, {kB2});
  PartialPassOf({ObserveReplica(kB2, 1, r2.p())});
  EXPECT_EQ(RulesSeen(), Rules{"committed_records_stable"}) << checker_.Report();
}

TEST_F(InvariantCheckerTest, ForgottenReplicaStartsAfreshInAPartialPass) {
  PassOf({Leader(kB1, 1, 4, 7)});
  checker_.ForgetReplica(kTp, kB1);  // its partition left the broker
  PartialPassOf({Leader(kB1, 1, 4, 3)});
  EXPECT_TRUE(checker_.ok()) << checker_.Report();
  // Without ForgetReplica, the same lower HW is (b)'s violation.
  PartialPassOf({Leader(kB1, 1, 4, 2)});
  EXPECT_EQ(RulesSeen(), Rules{"leader_hw_monotonic"}) << checker_.Report();
}

// A caller's own track (the Cluster keeps one beside each replica's last observation) carries
// (b) and (d) from pass to pass as the checker's own does, and a fresh track starts afresh.
TEST_F(InvariantCheckerTest, CallersTrackCarriesTheRulesFromPassToPass) {
  InvariantChecker::ReplicaTrack b1;
  InvariantChecker::ReplicaTrack b2;
  auto pass =
      [this](std::vector<std::pair<ReplicaObservation, InvariantChecker::ReplicaTrack*>> observed) {
        clock_.Advance(1000);
        checker_.BeginPass(clock_.Now(), /*partial=*/true);
        for (auto& [o, track] : observed) checker_.Observe(o, *track);
        checker_.EndPass();
      };
  ReplicaObservation follower = Leader(kB2, 1, 4, 9, /*leo=*/9);
  follower.role = ReplicaRole::kFollower;
  pass({{Leader(kB1, 1, 4, 7), &b1}, {follower, &b2}});
  EXPECT_EQ(b1.high_watermark, Offset(7));
  EXPECT_EQ(b1.epoch, LeaderEpoch(4));
  // The other replica's track is its own: broker 1's lower HW is measured against its own 7.
  pass({{Leader(kB1, 1, 4, 8), &b1}});
  EXPECT_TRUE(checker_.ok()) << checker_.Report();
  pass({{Leader(kB1, 1, 4, 6), &b1}});
  ASSERT_EQ(RulesSeen(), Rules{"leader_hw_monotonic"}) << checker_.Report();
  EXPECT_NE(checker_.violations()[0].message.find("from 8 down to 6"), std::string::npos)
      << checker_.violations()[0].message;
  // (d) is reported once per episode through the same track.
  ReplicaObservation bad = Leader(kB1, 1, 4, 6, /*leo=*/5);
  pass({{bad, &b1}});
  pass({{bad, &b1}});
  EXPECT_EQ(RulesSeen(), (Rules{"leader_hw_monotonic", "offsets_ordered"})) << checker_.Report();
  // A fresh track (the replica gone and back) remembers nothing: a lower HW is no violation.
  InvariantChecker::ReplicaTrack fresh;
  pass({{Leader(kB1, 1, 4, 2), &fresh}});
  EXPECT_EQ(checker_.violations().size(), 2u) << checker_.Report();
  // The checker kept no track of its own for these replicas: Observe(replica) starts afresh too.
  PartialPassOf({Leader(kB1, 1, 4, 1)});
  EXPECT_EQ(checker_.violations().size(), 2u) << checker_.Report();
}

// The Cluster's partial passes observe only the replicas in their broker's change list. Each rule
// a correct Partition can break in a run fires through it: (c) a new leader without the committed
// records and (a) a second leader of one epoch. (b) and (d) (a leader's HW going down, offsets out
// of order) are states a Partition refuses to reach (its checks stop the run first); every HW, LEO
// and log start move marks the partition (PartitionTest.EveryObservableMoveMarksThePartition
// OnceUntilCleared), and the partial passes above show both rules fire on one replica observed.
TEST_F(InvariantCheckerTest, ChangeListPassesCatchANewLeaderWithoutTheCommittedRecords) {
  std::vector<ksim::Partition*> changed;
  Replica& r1 = AddReplica(kB1);
  Replica& r2 = AddReplica(kB2);
  Replica& r3 = AddReplica(kB3);
  for (Replica* r : {&r1, &r2, &r3}) r->p().set_change_list(&changed);
  MakeLeader(r1, 1, {kB1});
  MakeFollower(r2, kB1, 1, {kB1});
  MakeFollower(r3, kB1, 1, {kB1});
  EXPECT_EQ(ChangedPass(changed), 3u);
  Produce(r1, {"a", "b"});  // a lone ISR member: committed at once
  EXPECT_EQ(ChangedPass(changed), 1u);
  ASSERT_EQ(checker_.counters().batches_committed, 1u);
  EXPECT_EQ(ChangedPass(changed), 0u);  // nothing moved: nothing observed
  EXPECT_TRUE(checker_.ok()) << checker_.Report();
  // (c): broker 2 leads epoch 2 without them; only it is in the list.
  MakeLeader(r2, 2, {kB2});
  EXPECT_EQ(ChangedPass(changed), 1u);
  EXPECT_EQ(RulesSeen(), Rules{"committed_records_stable"}) << checker_.Report();
  // (a): broker 3 claims epoch 2 as well.
  MakeLeader(r3, 2, {kB3});
  EXPECT_EQ(ChangedPass(changed), 1u);
  EXPECT_EQ(RulesSeen(), (Rules{"committed_records_stable", "one_leader_per_epoch"}))
      << checker_.Report();
}

}  // namespace
}  // namespace ksim::sim
