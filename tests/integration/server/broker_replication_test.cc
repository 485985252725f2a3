// The follower side of replication on the simulated cluster: truncation when the leader changes
// under both policies (own HW, or the leader's OffsetsForLeaderEpoch answer),
// OFFSET_OUT_OF_RANGE after an unclean election gave the lead to a shorter log (truncated to it, or
// the broker exits where that is not allowed before 2.1), a partition in error delayed alone, a
// follower told that no one leads, and KIP-320's leader epoch in a follower's requests (2.1).
#include <gtest/gtest.h>

#include <algorithm>

#include "core/server/replica_fetcher.h"
#include "core/server/replica_manager.h"
#include "tests/support/core/release_param.h"
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

// Kafka 0.10.0 to 2.0 (ReplicaFetcherThread.handleOffsetOutOfRange): a follower whose leader's
// log ends before its own may truncate only when the topic allows unclean elections; otherwise
// it exits ("Exiting because log truncation is not allowed"). 2.1 truncates (KAFKA-7414). The
// brokers disagree: broker-2, which becomes controller, elects uncleanly, while broker-1's own
// unclean.leader.election.enable is false, as when the setting changed while broker-1 was down.
class FollowerAheadTest : public BrokerClusterTest,
                          public ::testing::WithParamInterface<KafkaRelease> {
 protected:
  void SetUp() override {
    ClusterOptions options;
    options.brokers = 2;
    options.kafka_version = GetParam();
    options.config = {{"log.flush.interval.messages", "1"},
                      {"unclean.leader.election.enable", "true"}};
    options.broker_config[1] = {{"unclean.leader.election.enable", "false"}};
    StartCluster(std::move(options));
  }
};

TEST_P(FollowerAheadTest, FollowerAheadOfTheLeaderExitsUntil21) {
  CreateTopic("t", {k1, k2});
  EXPECT_EQ(Produce("broker-1", kTp, -1, 3).error_code, Errc::kNone);
  ASSERT_TRUE(cluster_->Partition({{"broker-1"}, {"broker-2"}}).ok());
  ASSERT_TRUE(cluster_->RunUntil(
      [&] { return PartitionOn(k1, kTp)->isr() == std::vector<BrokerId>{k1}; }, 30 * kSecondUs));
  EXPECT_EQ(Produce("broker-1", kTp, -1, 4).error_code, Errc::kNone);
  cluster_->RunFor(6 * kSecondUs);  // the HW checkpoint records HW 7
  ASSERT_TRUE(cluster_->CrashBroker(k1).ok());
  cluster_->Heal();
  ASSERT_TRUE(
      cluster_->RunUntil([&] { return PartitionOn(k2, kTp)->is_leader(); }, 60 * kSecondUs));
  EXPECT_EQ(Produce("broker-2", kTp, -1, 1).base_offset, Offset(3));
  ASSERT_TRUE(cluster_->RestartBroker(k1).ok());

  if (GetParam() < KafkaRelease::k2_1) {
    // Broker-1 exits through its shutdown hook: a controlled shutdown, then the process ends,
    // its log untouched (7 records where the leader has 4).
    ASSERT_TRUE(cluster_->RunUntil([&] { return !world_.node("broker-1").up(); }, 60 * kSecondUs));
    std::vector<nlohmann::ordered_json> refusals;
    for (nlohmann::ordered_json& event : Events("replica_fetch_error")) {
      if (event["stage"] == "truncation_not_allowed") refusals.push_back(std::move(event));
    }
    ASSERT_EQ(refusals.size(), 1u);
    EXPECT_EQ(refusals[0]["node"], "broker-1");
    EXPECT_NE(refusals[0]["message"].get<std::string>().find(
                  "log truncation is not allowed for partition t-0, current leader 2's latest "
                  "offset 4 is less than replica 1's latest offset 7"),
              std::string::npos)
        << refusals[0].dump();
    EXPECT_FALSE(Events("controlled_shutdown").empty());
    EXPECT_FALSE(Events("shutdown").empty());
    // The cluster keeps why the process exited (the drain names it: KAFKA-7414).
    EXPECT_TRUE(cluster_->last_exit(k1).message.starts_with(kTruncationNotAllowed))
        << cluster_->last_exit(k1).message;
    for (const nlohmann::ordered_json& event : Events("truncate")) {
      if (event["node"] == "broker-1") {
        EXPECT_EQ(event["records"], 0) << event.dump();
      }
    }
  } else {
    ASSERT_TRUE(cluster_->RunUntil(
        [&] {
          Partition* p1 = PartitionOn(k1, kTp);
          return p1 != nullptr && p1->leader() == k2 && p1->log_end_offset() == Offset(4);
        },
        60 * kSecondUs));
    for (const nlohmann::ordered_json& event : Events("replica_fetch_error")) {
      EXPECT_NE(event["stage"], "truncation_not_allowed") << event.dump();
    }
    EXPECT_TRUE(world_.node("broker-1").up());
    EXPECT_TRUE(cluster_->last_exit(k1).message.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(Releases, FollowerAheadTest,
                         ::testing::Values(KafkaRelease::k0_10_0, KafkaRelease::k2_0,
                                           KafkaRelease::k2_1),
                         ksim::testing::ReleaseParamName);

// A partition whose leader answers it with an error is delayed for replica.fetch.backoff.ms
// alone (AbstractFetcherThread.delayPartitions, 0.10.0 to 2.1): the follower's other partitions
// on that leader go on being fetched. Broker-2 follows b-0 on broker-3; a LeaderAndIsr in the
// controller's name then tells it that broker-3 also leads a-0, which broker-3 does not host, as
// after a restart the controller missed (KAFKA-1120): every answer for a-0 (OffsetsForLeaderEpoch
// from 0.11, Fetch at 0.10) is UNKNOWN_TOPIC_OR_PARTITION. acks=all produces to b-0 are still
// acknowledged at once: the follower's long-polling fetch of b-0 hears of them. ksim used to back
// off the whole fetcher after each error, and to send no Fetch while a partition was truncating.
// Three brokers at a release (its default truncation), and a controller's LeaderAndIsr sent by
// hand.
class ReleaseClusterTest : public BrokerClusterTest,
                           public ::testing::WithParamInterface<KafkaRelease> {
 protected:
  void SetUp() override {
    ClusterOptions options;
    options.brokers = 3;
    options.kafka_version = GetParam();
    options.truncation = DefaultTruncationPolicy(GetParam());
    StartCluster(std::move(options));
  }

  // Tells `to`, as the controller, that `leader` leads `tp` at `epoch` with ISR (and replicas)
  // `isr`.
  void TellLeader(BrokerId to, const TopicPartition& tp, BrokerId leader, int32_t epoch,
                  std::vector<BrokerId> isr) {
    Broker* broker = cluster_->broker(to);
    LeaderAndIsrRequest request;
    request.controller_id = cluster_->ActiveController();
    request.controller_epoch = broker->replica_manager().controller_epoch();
    LeaderAndIsrPartitionState state;
    state.tp = tp;
    state.leader = leader;
    state.leader_epoch = LeaderEpoch(epoch);
    state.isr = isr;
    state.replicas = isr;
    request.partition_states.push_back(state);
    const std::string node = "broker-" + std::to_string(to.value());
    ASSERT_EQ(CallFor<LeaderAndIsrResponse>(node, request).error_code, Errc::kNone);
  }
};

using FetcherDelayTest = ReleaseClusterTest;

TEST_P(FetcherDelayTest, AnErrorDelaysOnlyThatPartition) {
  const TopicPartition a{"a", PartitionId(0)};
  const TopicPartition b{"b", PartitionId(0)};
  CreateTopic("a", {k1, k2});
  CreateTopic("b", {k3, k2});
  TellLeader(k2, a, k3, 5, {k3, k2});
  ASSERT_EQ(PartitionOn(k2, a)->leader(), k3);
  EXPECT_EQ(PartitionOn(k3, a), nullptr);

  cluster_->RunFor(4 * kSecondUs);
  std::vector<TimeUs> errors;
  for (const nlohmann::ordered_json& event : Events("replica_fetch_error")) {
    if (event["node"] == "broker-2" && event["topic"] == "a") {
      EXPECT_EQ(event["error"], "UNKNOWN_TOPIC_OR_PARTITION") << event.dump();
      EXPECT_EQ(event["stage"],
                GetParam() < KafkaRelease::k0_11_0 ? "fetch" : "offsets_for_leader_epoch");
      errors.push_back(event["t_us"].get<TimeUs>());
    }
  }
  // Asked again after each delay, never sooner.
  ASSERT_GE(errors.size(), 3u);
  for (size_t i = 1; i < errors.size(); ++i) {
    EXPECT_GE(errors[i] - errors[i - 1], kSecondUs) << i;
  }

  for (int i = 0; i < 6; ++i) {
    const TimeUs sent = world_.Now();
    EXPECT_EQ(Produce("broker-3", b, -1, 1).error_code, Errc::kNone) << i;
    EXPECT_LT(world_.Now() - sent, 100 * kUsPerMs) << i;
    cluster_->RunFor(300 * kUsPerMs);
  }
  EXPECT_EQ(PartitionOn(k2, b)->log_end_offset(), Offset(6));
  EXPECT_EQ(PartitionOn(k3, b)->isr(), (std::vector<BrokerId>{k3, k2}));
  EXPECT_EQ(PartitionOn(k2, a)->leader(), k3);  // still in error, still delayed and retried
}

INSTANTIATE_TEST_SUITE_P(Releases, FetcherDelayTest,
                         ::testing::Values(KafkaRelease::k0_10_0, KafkaRelease::k1_0,
                                           KafkaRelease::k2_1),
                         ksim::testing::ReleaseParamName);

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

// KIP-320 (Kafka 2.1): requests naming the asker's current leader epoch. The leader checks it
// first (2.1.0:Partition.getLocalReplica, checkCurrentLeaderEpoch): an older epoch is fenced, a
// newer one unknown, before whether it leads is asked; a request without one is not checked.
class CurrentLeaderEpochTest : public ReleaseClusterTest {
 protected:
  static std::optional<CurrentLeaderEpoch> Named(std::optional<int32_t> epoch) {
    if (!epoch) return std::nullopt;
    return CurrentLeaderEpoch{.epoch = LeaderEpoch(*epoch)};
  }
  EpochEndOffset EpochEnd(const std::string& node, int32_t asked, std::optional<int32_t> current) {
    OffsetsForLeaderEpochRequest request;
    request.partitions.push_back(OffsetsForLeaderEpochPartition{
        .tp = kTp, .leader_epoch = LeaderEpoch(asked), .current_leader_epoch = Named(current)});
    return CallFor<OffsetsForLeaderEpochResponse>(node, request).partitions.at(0);
  }
  ListOffsetsPartitionResponse Latest(const std::string& node, std::optional<int32_t> current) {
    ListOffsetsRequest request;
    request.partitions.push_back(ListOffsetsPartition{
        .tp = kTp, .timestamp = kLatestTimestamp, .current_leader_epoch = Named(current)});
    return CallFor<ListOffsetsResponse>(node, request).responses.at(0);
  }
  FetchPartitionResponse Fetch(const std::string& node, Offset offset,
                               std::optional<int32_t> current, int32_t max_wait_ms = 0) {
    FetchRequest request;
    request.replica_id = kConsumerReplicaId;
    request.max_wait_ms = max_wait_ms;
    request.partitions.push_back(
        FetchPartition{.tp = kTp, .fetch_offset = offset, .current_leader_epoch = Named(current)});
    return CallFor<FetchResponse>(node, request).responses.at(0);
  }

  // broker-2's errors for kTp at `stage`, in order.
  std::vector<nlohmann::ordered_json> FollowerErrors(std::string_view stage) const {
    std::vector<nlohmann::ordered_json> out;
    for (nlohmann::ordered_json& event : Events("replica_fetch_error")) {
      if (event["node"] == "broker-2" && event["topic"] == "t" && event["stage"] == stage) {
        out.push_back(std::move(event));
      }
    }
    return out;
  }
};

// Run at 2.1 alone: an older broker does not take these request versions.
class CurrentLeaderEpochAt21Test : public CurrentLeaderEpochTest {};

TEST_P(CurrentLeaderEpochAt21Test, TheLeaderChecksANamedEpochBeforeItsLeadership) {
  CreateTopic("t", {k1, k2});
  TellLeader(k1, kTp, k1, 3, {k1, k2});  // broker-1 leads at epoch 3, broker-2 still knows 0
  ASSERT_EQ(PartitionOn(k1, kTp)->leader_epoch(), LeaderEpoch(3));

  // broker-2 follows at epoch 0: a newer epoch is unknown to it before it is asked to lead.
  EXPECT_EQ(EpochEnd("broker-2", 0, 3).error_code, Errc::kUnknownLeaderEpoch);
  EXPECT_EQ(Latest("broker-2", 3).error_code, Errc::kUnknownLeaderEpoch);
  EXPECT_EQ(Fetch("broker-2", Offset(0), 3).error_code, Errc::kUnknownLeaderEpoch);
  EXPECT_EQ(EpochEnd("broker-2", 0, 0).error_code, Errc::kNotLeaderForPartition);
  EXPECT_EQ(Latest("broker-2", 0).error_code, Errc::kNotLeaderForPartition);

  TellLeader(k2, kTp, k1, 3, {k1, k2});
  ASSERT_EQ(Produce("broker-1", kTp, -1, 2).error_code, Errc::kNone);

  EXPECT_EQ(EpochEnd("broker-1", 3, 2).error_code, Errc::kFencedLeaderEpoch);
  EXPECT_EQ(EpochEnd("broker-1", 3, 4).error_code, Errc::kUnknownLeaderEpoch);
  for (std::optional<int32_t> current : {std::optional<int32_t>(3), std::optional<int32_t>()}) {
    const EpochEndOffset end = EpochEnd("broker-1", 3, current);
    EXPECT_EQ(end.error_code, Errc::kNone);
    EXPECT_EQ(end.end_offset, Offset(2));
    EXPECT_EQ(Latest("broker-1", current).error_code, Errc::kNone);
    const FetchPartitionResponse fetched = Fetch("broker-1", Offset(0), current);
    EXPECT_EQ(fetched.error_code, Errc::kNone);
    EXPECT_FALSE(fetched.records.empty());
  }
  EXPECT_EQ(Latest("broker-1", 2).error_code, Errc::kFencedLeaderEpoch);
  EXPECT_EQ(Latest("broker-1", 4).error_code, Errc::kUnknownLeaderEpoch);
  EXPECT_EQ(Fetch("broker-1", Offset(0), 2).error_code, Errc::kFencedLeaderEpoch);
  EXPECT_EQ(Fetch("broker-1", Offset(0), 4).error_code, Errc::kUnknownLeaderEpoch);
  // A fetch that would park (nothing at its offset) hears its error at once.
  const Offset end = PartitionOn(k1, kTp)->high_watermark();
  const TimeUs sent = world_.Now();
  EXPECT_EQ(Fetch("broker-1", end, 2, 5000).error_code, Errc::kFencedLeaderEpoch);
  EXPECT_LT(world_.Now() - sent, kSecondUs);
}

// The follower names the epoch its LeaderAndIsr gave it from 2.1 (OffsetsForLeaderEpoch v2). Told
// that broker-3 leads at epoch 5 while broker-3 still leads at 0, broker-2 hears
// UNKNOWN_LEADER_EPOCH and asks again after replica.fetch.backoff.ms, truncating nothing, until
// broker-3 learns of epoch 5. Told then that broker-3 leads at 6 while broker-3 is at 7, it is
// fenced and stops fetching the partition (onPartitionFenced) until a LeaderAndIsr names 7. At
// 2.0 it names no epoch: broker-3 answers at once and broker-2 follows it throughout.
TEST_P(CurrentLeaderEpochTest, AFollowerWaitsForAnUnknownEpochAndStopsWhenFenced) {
  const bool fenced = GetParam() >= KafkaRelease::k2_1;
  CreateTopic("t", {k3, k2});
  ASSERT_EQ(Produce("broker-3", kTp, -1, 2).error_code, Errc::kNone);
  TellLeader(k2, kTp, k3, 5, {k3, k2});
  cluster_->RunFor(3500 * kUsPerMs);
  const std::vector<nlohmann::ordered_json> unknown = FollowerErrors("offsets_for_leader_epoch");
  ReplicaFetcherManager& fetchers = cluster_->broker(k2)->replica_manager().fetchers();
  if (fenced) {
    ASSERT_GE(unknown.size(), 3u);
    for (size_t i = 0; i < unknown.size(); ++i) {
      EXPECT_EQ(unknown[i]["error"], "UNKNOWN_LEADER_EPOCH") << i;
      if (i > 0) {
        EXPECT_GE(unknown[i]["t_us"].get<TimeUs>() - unknown[i - 1]["t_us"].get<TimeUs>(),
                  kSecondUs);
      }
    }
    EXPECT_EQ(fetchers.PhaseOf(kTp), FetchPhase::kTruncating);
  } else {
    EXPECT_TRUE(unknown.empty());
    EXPECT_EQ(fetchers.PhaseOf(kTp), FetchPhase::kFetching);
  }
  EXPECT_EQ(PartitionOn(k2, kTp)->log_end_offset(), Offset(2));
  TellLeader(k3, kTp, k3, 5, {k3, k2});
  ASSERT_EQ(Produce("broker-3", kTp, -1, 1).error_code, Errc::kNone);
  EXPECT_EQ(PartitionOn(k2, kTp)->log_end_offset(), Offset(3));
  EXPECT_EQ(fetchers.PhaseOf(kTp), FetchPhase::kFetching);

  TellLeader(k3, kTp, k3, 7, {k3, k2});
  TellLeader(k2, kTp, k3, 6, {k3, k2});
  cluster_->RunFor(3500 * kUsPerMs);
  ASSERT_EQ(Produce("broker-3", kTp, 1, 1).error_code, Errc::kNone);
  cluster_->RunFor(3500 * kUsPerMs);
  const std::vector<nlohmann::ordered_json> errors = FollowerErrors("offsets_for_leader_epoch");
  const size_t fenced_errors = std::count_if(errors.begin(), errors.end(), [](const auto& event) {
    return event["error"] == "FENCED_LEADER_EPOCH";
  });
  if (fenced) {
    EXPECT_EQ(fenced_errors, 1u);  // once: the partition is no longer fetched
    EXPECT_EQ(fetchers.LeaderOf(kTp), std::nullopt);
    EXPECT_EQ(PartitionOn(k2, kTp)->log_end_offset(), Offset(3));
    TellLeader(k2, kTp, k3, 7, {k3, k2});
    ASSERT_TRUE(cluster_->RunUntil(
        [&] { return PartitionOn(k2, kTp)->log_end_offset() == Offset(4); }, 10 * kSecondUs));
    EXPECT_EQ(fetchers.LeaderOf(kTp), k3);
  } else {
    EXPECT_EQ(fenced_errors, 0u);
    EXPECT_EQ(fetchers.LeaderOf(kTp), k3);
    EXPECT_EQ(PartitionOn(k2, kTp)->log_end_offset(), Offset(4));
  }
}

INSTANTIATE_TEST_SUITE_P(Releases, CurrentLeaderEpochAt21Test,
                         ::testing::Values(KafkaRelease::k2_1), ksim::testing::ReleaseParamName);
INSTANTIATE_TEST_SUITE_P(Releases, CurrentLeaderEpochTest,
                         ::testing::Values(KafkaRelease::k2_0, KafkaRelease::k2_1),
                         ksim::testing::ReleaseParamName);

}  // namespace
}  // namespace ksim::sim::testing
