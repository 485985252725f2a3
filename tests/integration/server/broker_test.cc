// A real Broker (three of them) on the simulated cluster: registration, replication, acks,
// fetch rules, ISR shrink/expand through ZooKeeper, controller-epoch fencing, HW checkpoints.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/base/trace_names.h"
#include "core/cluster/metadata_cache.h"
#include "core/server/replica_manager.h"
#include "core/storage/hw_checkpoint.h"
#include "core/zk/paths.h"
#include "tests/support/core/release_param.h"
#include "tests/support/sim/broker_test_util.h"

namespace ksim::sim::testing {
namespace {

const TopicPartition kTp{"t", PartitionId(0)};
const BrokerId k1{1}, k2{2}, k3{3};

class BrokerTest : public BrokerClusterTest {
 protected:
  void SetUp() override {
    ClusterOptions options;
    options.brokers = 3;
    StartCluster(std::move(options));
  }

  // Runs until every replica of kTp has LEO == HW == `offset`.
  bool Converged(const std::vector<BrokerId>& replicas, Offset offset,
                 TimeUs max_us = 30 * kSecondUs) {
    return cluster_->RunUntil(
        [&] {
          for (BrokerId id : replicas) {
            Partition* partition = PartitionOn(id, kTp);
            if (partition == nullptr || partition->log_end_offset() != offset ||
                partition->high_watermark() != offset) {
              return false;
            }
          }
          return true;
        },
        max_us);
  }
};

TEST_F(BrokerTest, RegistrationZnodeIsEphemeralAndNamesTheHost) {
  for (BrokerId id : cluster_->broker_ids()) {
    std::optional<ZnodeData> data = cluster_->zookeeper().Read(zk::BrokerIdPath(id));
    ASSERT_TRUE(data.has_value()) << "broker " << id;
    Result<zk::BrokerRegistration> registration = zk::DecodeBrokerRegistration(data->data);
    ASSERT_TRUE(registration.ok()) << registration.status().ToString();
    const std::string host = node::Broker(id);
    EXPECT_EQ(registration->host, host);
    EXPECT_EQ(registration->port, 9092);
    EXPECT_EQ(registration->endpoints, std::vector<std::string>{"PLAINTEXT://" + host + ":9092"});
    EXPECT_EQ(registration->version, 3);
    EXPECT_NE(data->stat.ephemeral_owner, kNoSession);
  }
  EXPECT_EQ(Events("broker_registered").size(), 3u);
}

TEST_F(BrokerTest, FollowersReplicateAndHighWatermarkConverges) {
  CreateTopic("t", {k1, k2, k3});
  ASSERT_TRUE(PartitionOn(k1, kTp)->is_leader());
  EXPECT_EQ(PartitionOn(k2, kTp)->role(), ReplicaRole::kFollower);
  EXPECT_EQ(PartitionOn(k3, kTp)->role(), ReplicaRole::kFollower);
  for (int i = 0; i < 5; ++i) {
    ProducePartitionResponse response = Produce("broker-1", kTp, 1, 4);
    EXPECT_EQ(response.error_code, Errc::kNone);
    EXPECT_EQ(response.base_offset, Offset(4 * i));
  }
  EXPECT_TRUE(Converged({k1, k2, k3}, Offset(20)));
  // The followers hold the leader's bytes.
  FetchPartitionResponse fetched = ConsumerFetch("broker-1", kTp, Offset(0));
  ASSERT_EQ(fetched.error_code, Errc::kNone);
  std::vector<Record> records = RecordsIn(fetched.records);
  ASSERT_EQ(records.size(), 20u);
  EXPECT_EQ(records[19].offset, Offset(19));
}

TEST_F(BrokerTest, AcksAllIsAnsweredOnlyOnceHighWatermarkPassesTheBatch) {
  CreateTopic("t", {k1, k2, k3});
  std::optional<Offset> hw_at_answer;
  auto done = std::make_shared<std::optional<Result<ksim::Message>>>();
  client_->Send("broker-1", MakeProduce(kTp, -1, 3), [&, done](Result<ksim::Message> response) {
    hw_at_answer = PartitionOn(k1, kTp)->high_watermark();
    done->emplace(std::move(response));
  });
  ASSERT_TRUE(cluster_->RunUntil([&] { return done->has_value(); }, 30 * kSecondUs));
  ASSERT_TRUE((*done)->ok());
  const auto& response = std::get<ProduceResponse>(***done).responses.at(0);
  EXPECT_EQ(response.error_code, Errc::kNone);
  EXPECT_EQ(response.base_offset, Offset(0));
  ASSERT_TRUE(hw_at_answer.has_value());
  EXPECT_GE(*hw_at_answer, Offset(3));
  // Every ISR member had it when the leader answered.
  EXPECT_GE(PartitionOn(k2, kTp)->log_end_offset(), Offset(3));
  EXPECT_GE(PartitionOn(k3, kTp)->log_end_offset(), Offset(3));
}

TEST_F(BrokerTest, AcksOneAnswersWithoutFollowersWhileAcksAllTimesOut) {
  CreateTopic("t", {k1, k2, k3});
  // Cut the leader off from its followers (the client and ZooKeeper still reach it).
  ASSERT_TRUE(cluster_->Partition({{"broker-1"}, {"broker-2", "broker-3"}}).ok());
  ProducePartitionResponse one = Produce("broker-1", kTp, 1, 2);
  EXPECT_EQ(one.error_code, Errc::kNone);
  EXPECT_EQ(PartitionOn(k1, kTp)->log_end_offset(), Offset(2));
  EXPECT_EQ(PartitionOn(k1, kTp)->high_watermark(), Offset(0));
  ProducePartitionResponse all = Produce("broker-1", kTp, -1, 2, /*timeout_ms=*/2000);
  EXPECT_EQ(all.error_code, Errc::kRequestTimedOut);
  EXPECT_EQ(all.base_offset, Offset(2));  // appended, just not replicated in time
}

TEST_F(BrokerTest, AcksAllIsRefusedWhenTheIsrIsBelowMinInsyncReplicas) {
  CreateTopic("t", {k1, k2}, {{"min.insync.replicas", "2"}});
  EXPECT_EQ(Produce("broker-1", kTp, -1, 1).error_code, Errc::kNone);
  ASSERT_TRUE(cluster_->CrashBroker(k2).ok());
  // The controller drops the dead follower from the ISR; the leader learns it by LeaderAndIsr.
  ASSERT_TRUE(cluster_->RunUntil(
      [&] { return PartitionOn(k1, kTp)->isr() == std::vector<BrokerId>{k1}; }, 60 * kSecondUs));
  ProducePartitionResponse refused = Produce("broker-1", kTp, -1, 1);
  EXPECT_EQ(refused.error_code, Errc::kNotEnoughReplicas);
  EXPECT_EQ(PartitionOn(k1, kTp)->log_end_offset(), Offset(1));  // nothing appended
  // acks=1 is not bound by min.insync.replicas.
  EXPECT_EQ(Produce("broker-1", kTp, 1, 1).error_code, Errc::kNone);
}

// ReplicaManager.isValidRequiredAcks (KIP-1, since 0.9.0): only -1, 0 and 1. A client that lets
// acks=2 through (librdkafka over `ksim serve`) gets INVALID_REQUIRED_ACKS and nothing is
// appended, although two ISR members could have answered, as at 0.8.2 (BrokerTestAt082).
TEST_F(BrokerTest, AcksOtherThanMinusOneZeroOrOneIsInvalidRequiredAcks) {
  CreateTopic("t", {k1, k2, k3});
  for (int16_t acks : {int16_t{2}, int16_t{3}, int16_t{-2}, int16_t{100}}) {
    const ProducePartitionResponse refused = Produce("broker-1", kTp, acks, 1);
    EXPECT_EQ(refused.error_code, Errc::kInvalidRequiredAcks) << acks;
    EXPECT_EQ(PartitionOn(k1, kTp)->log_end_offset(), Offset(0)) << acks;
  }
  // The valid ones still append.
  EXPECT_EQ(Produce("broker-1", kTp, 1, 1).error_code, Errc::kNone);
  EXPECT_EQ(Produce("broker-1", kTp, -1, 1).error_code, Errc::kNone);
  EXPECT_EQ(PartitionOn(k1, kTp)->log_end_offset(), Offset(2));
}

// Kafka 0.8.2's broker (0.8.2.2:KafkaApis.handleProducerOrOffsetCommitRequest,
// Partition.checkEnoughReplicasReachOffset, DelayedProduce): acks=N > 1 is appended after KIP-1's
// WARN and answered once N ISR members, the leader included, have the batch.
class BrokerTestAt082 : public BrokerTest {
 protected:
  void SetUp() override {
    ClusterOptions options;
    options.brokers = 3;
    options.kafka_version = KafkaRelease::k0_8_2;
    // A follower's fetch lost to a cut link times out in 2 s instead of 30 s (the test client's
    // own request timeout), so a follower catches up after a heal within the client's patience.
    options.config = {{"replica.socket.timeout.ms", "2000"}};
    StartCluster(std::move(options));
  }
};

TEST_F(BrokerTestAt082, AcksTwoIsAnsweredOnceTwoIsrMembersHaveTheBatch) {
  CreateTopic("t", {k1, k2, k3});
  std::optional<Offset> follower_leos_at_answer;
  auto done = std::make_shared<std::optional<Result<ksim::Message>>>();
  client_->Send("broker-1", MakeProduce(kTp, 2, 3), [&, done](Result<ksim::Message> response) {
    follower_leos_at_answer =
        std::max(PartitionOn(k2, kTp)->log_end_offset(), PartitionOn(k3, kTp)->log_end_offset());
    done->emplace(std::move(response));
  });
  ASSERT_TRUE(cluster_->RunUntil([&] { return done->has_value(); }, 30 * kSecondUs));
  ASSERT_TRUE((*done)->ok());
  const auto& response = std::get<ProduceResponse>(***done).responses.at(0);
  EXPECT_EQ(response.error_code, Errc::kNone);
  EXPECT_EQ(response.base_offset, Offset(0));
  ASSERT_TRUE(follower_leos_at_answer.has_value());
  EXPECT_GE(*follower_leos_at_answer, Offset(3));  // a follower had it, not only the leader
  // KIP-1's WARN, Kafka's words.
  const std::vector<nlohmann::ordered_json> warned = Events("produce_acks_deprecated");
  ASSERT_EQ(warned.size(), 1u);
  EXPECT_EQ(warned[0]["acks"], 2);
  EXPECT_NE(warned[0]["message"].get<std::string>().find(
                "sent a produce request with request.required.acks of 2, which is now deprecated"),
            std::string::npos);
}

TEST_F(BrokerTestAt082, AcksAboveTheIsrSizeTimesOutAfterTheAppend) {
  CreateTopic("t", {k1, k2});
  // acks=3 on two replicas: the ISR can never hold three, so DelayedProduce expires.
  ProducePartitionResponse three = Produce("broker-1", kTp, 3, 2, /*timeout_ms=*/2000);
  EXPECT_EQ(three.error_code, Errc::kRequestTimedOut);
  EXPECT_EQ(three.base_offset, Offset(0));
  EXPECT_EQ(PartitionOn(k1, kTp)->log_end_offset(), Offset(2));  // appended all the same
  EXPECT_EQ(Produce("broker-1", kTp, 2, 1).error_code, Errc::kNone);
  // The old limits hold no more: acks=-2 waits as acks=-1 does.
  EXPECT_EQ(Produce("broker-1", kTp, -2, 1).error_code, Errc::kNone);
  EXPECT_EQ(PartitionOn(k1, kTp)->high_watermark(), Offset(4));
  EXPECT_EQ(Events("produce_acks_deprecated").size(), 3u);
}

TEST_F(BrokerTestAt082, AcksTwoWaitsForAFollowerThatCatchesUpLate) {
  CreateTopic("t", {k1, k2, k3});
  ASSERT_TRUE(cluster_->Partition({{"broker-1"}, {"broker-2", "broker-3"}}).ok());
  auto done = std::make_shared<std::optional<Result<ksim::Message>>>();
  client_->Send("broker-1", MakeProduce(kTp, 2, 1, /*timeout_ms=*/120000),
                [done](Result<ksim::Message> response) { done->emplace(std::move(response)); });
  // Cut off from its followers for 3 s: the leader alone has it, one member of the two asked
  // for. Healed, a follower's fetcher gets through again (after its lost request's timeout) and
  // the answer follows its fetch.
  EXPECT_FALSE(cluster_->RunUntil([&] { return done->has_value(); }, 3 * kSecondUs));
  EXPECT_EQ(PartitionOn(k1, kTp)->high_watermark(), Offset(0));
  cluster_->Heal();
  ASSERT_TRUE(cluster_->RunUntil([&] { return done->has_value(); }, 100 * kSecondUs));
  ASSERT_TRUE((*done)->ok());
  EXPECT_EQ(std::get<ProduceResponse>(***done).responses.at(0).error_code, Errc::kNone);
  EXPECT_TRUE(PartitionOn(k2, kTp)->log_end_offset() >= Offset(1) ||
              PartitionOn(k3, kTp)->log_end_offset() >= Offset(1));
}

TEST_F(BrokerTest, FollowerAndStrangerRefuseProduce) {
  CreateTopic("t", {k1, k2});
  EXPECT_EQ(Produce("broker-2", kTp, 1, 1).error_code, Errc::kNotLeaderForPartition);
  EXPECT_EQ(Produce("broker-3", kTp, 1, 1).error_code, Errc::kUnknownTopicOrPartition);
  EXPECT_EQ(ConsumerFetch("broker-2", kTp, Offset(0)).error_code, Errc::kNotLeaderForPartition);
}

// KafkaApis.handleProducerRequest (0.10.0.1 to 3.0): acks=0 is never answered; when a partition
// failed, the broker closes the client's connection instead, so that the client learns that
// something failed (and refreshes its metadata).
TEST_F(BrokerTest, AcksZeroIsNeverAnsweredAndAFailureClosesTheConnection) {
  CreateTopic("t", {k1});
  Network& network = world_.network();
  const NodeId c1 = network.topology().Id("c1");
  const NodeId b1 = network.topology().Id("broker-1");
  const NodeId b2 = network.topology().Id("broker-2");
  ASSERT_TRUE(cluster_->RunUntil([&] { return client_->Ready("broker-1"); }, kSecondUs));
  client_->Send("broker-1", MakeProduce(kTp, 0, 5), nullptr);
  ASSERT_TRUE(cluster_->RunUntil(
      [&] { return PartitionOn(k1, kTp)->log_end_offset() == Offset(5); }, 10 * kSecondUs));
  EXPECT_EQ(network.ConnectionEpoch(c1, b1), 1u) << "a success leaves the connection open";
  // broker-2 is no leader: NOT_LEADER_FOR_PARTITION, silent, and the connection closes. A
  // request in flight to broker-2 on that connection fails with it.
  const uint64_t notified = network.counters().disconnects_notified;
  std::optional<Result<ksim::Message>> metadata;
  client_->Send("broker-2", MakeProduce(kTp, 0, 5), nullptr);
  client_->Send("broker-2", MetadataRequest{},
                [&](Result<ksim::Message> answer) { metadata = std::move(answer); });
  cluster_->RunFor(5 * kSecondUs);
  EXPECT_EQ(client_->counters().responses_received, 0u);
  EXPECT_EQ(network.ConnectionEpoch(c1, b2), 2u) << "closed once";
  EXPECT_EQ(network.counters().disconnects_notified, notified + 1) << "only the client is told";
  ASSERT_TRUE(metadata.has_value());
  ASSERT_FALSE(metadata->ok());
  EXPECT_EQ(metadata->status().code(), Errc::kNetworkException);
  EXPECT_EQ(PartitionOn(k1, kTp)->log_end_offset(), Offset(5));
}

TEST_F(BrokerTest, ConsumerFetchNeverSeesAboveTheHighWatermark) {
  CreateTopic("t", {k1, k2, k3});
  EXPECT_EQ(Produce("broker-1", kTp, -1, 4).error_code, Errc::kNone);
  ASSERT_TRUE(Converged({k1, k2, k3}, Offset(4)));
  ASSERT_TRUE(cluster_->Partition({{"broker-1"}, {"broker-2", "broker-3"}}).ok());
  EXPECT_EQ(Produce("broker-1", kTp, 1, 6).error_code, Errc::kNone);
  Partition* leader = PartitionOn(k1, kTp);
  ASSERT_EQ(leader->log_end_offset(), Offset(10));
  ASSERT_EQ(leader->high_watermark(), Offset(4));

  FetchPartitionResponse from_start = ConsumerFetch("broker-1", kTp, Offset(0));
  ASSERT_EQ(from_start.error_code, Errc::kNone);
  EXPECT_EQ(from_start.high_watermark, Offset(4));
  EXPECT_EQ(from_start.log_start_offset, Offset(0));
  std::vector<Record> records = RecordsIn(from_start.records);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records.back().offset, Offset(3));
  // At HW a consumer long-polls and gets nothing.
  FetchPartitionResponse at_hw = ConsumerFetch("broker-1", kTp, Offset(4), /*max_wait_ms=*/500);
  EXPECT_EQ(at_hw.error_code, Errc::kNone);
  EXPECT_TRUE(at_hw.records.empty());

  ListOffsetsRequest latest;
  latest.partitions.push_back(ListOffsetsPartition{kTp, kLatestTimestamp});
  EXPECT_EQ(CallFor<ListOffsetsResponse>("broker-1", latest).responses.at(0).offset, Offset(4));
  latest.replica_id = BrokerId(-2);  // debugging: the LEO
  EXPECT_EQ(CallFor<ListOffsetsResponse>("broker-1", latest).responses.at(0).offset, Offset(10));
}

TEST_F(BrokerTest, ConsumerLongPollCompletesWhenTheHighWatermarkMoves) {
  CreateTopic("t", {k1, k2});
  FetchRequest request;
  request.max_wait_ms = 20000;
  request.min_bytes = 1;
  request.partitions.push_back(FetchPartition{kTp, Offset(0), kUndefinedOffset, 1 << 20});
  const Answer fetched = Post("broker-1", request, kSecondUs);
  ASSERT_NE(fetched, nullptr);
  cluster_->RunFor(kSecondUs);
  EXPECT_FALSE(fetched->has_value());  // parked: nothing below HW yet
  EXPECT_EQ(Produce("broker-1", kTp, 1, 3).error_code, Errc::kNone);
  ASSERT_TRUE(cluster_->RunUntil([&] { return fetched->has_value(); }, 19 * kSecondUs));
  ASSERT_TRUE((*fetched)->ok());
  const FetchPartitionResponse& answer = std::get<FetchResponse>(***fetched).responses.at(0);
  EXPECT_EQ(answer.high_watermark, Offset(3));
  EXPECT_EQ(RecordsIn(answer.records).size(), 3u);
}

// A consumer's fetch parked at the HW while the leader's LEO is past it (its follower cut off,
// acks=1 appends): each append checks the fetch, and the check tells from the offsets alone that
// nothing below the HW is new (Kafka's DelayedFetch.tryComplete compares offsets and reads
// nothing). Once the follower is back the HW moves and the answer holds the records.
TEST_F(BrokerTest, AConsumersFetchParkedAtTheHighWatermarkIsCheckedWithoutARead) {
  CreateTopic("t", {k1, k2});
  EXPECT_EQ(Produce("broker-1", kTp, -1, 2).error_code, Errc::kNone);
  ASSERT_TRUE(Converged({k1, k2}, Offset(2)));
  ASSERT_TRUE(cluster_->Partition({{"broker-1"}, {"broker-2"}}).ok());
  FetchRequest request;
  request.max_wait_ms = 20000;
  request.min_bytes = 1;
  request.partitions.push_back(FetchPartition{kTp, Offset(2), kUndefinedOffset, 1 << 20});
  const Answer fetched = Post("broker-1", request, kSecondUs);
  ASSERT_NE(fetched, nullptr);
  cluster_->RunFor(kSecondUs);
  ASSERT_FALSE(fetched->has_value());
  const ReplicaManager& leader = cluster_->broker(k1)->replica_manager();
  const uint64_t reads_before = leader.fetch_partition_reads();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Produce("broker-1", kTp, 1, 1).error_code, Errc::kNone);
  ASSERT_EQ(PartitionOn(k1, kTp)->log_end_offset(), Offset(5));
  ASSERT_EQ(PartitionOn(k1, kTp)->high_watermark(), Offset(2));
  EXPECT_FALSE(fetched->has_value());
  EXPECT_EQ(leader.fetch_partition_reads(), reads_before);  // three checks, no read
  cluster_->Heal();
  ASSERT_TRUE(cluster_->RunUntil([&] { return fetched->has_value(); }, 19 * kSecondUs));
  ASSERT_TRUE((*fetched)->ok());
  const FetchPartitionResponse& answer = std::get<FetchResponse>(***fetched).responses.at(0);
  EXPECT_EQ(answer.high_watermark, Offset(5));
  EXPECT_EQ(RecordsIn(answer.records).size(), 3u);
}

// A parked fetch reads only the partitions with something new; when one has, the answer still
// names every partition of the request, in order, the others empty with their HW and log start.
TEST_F(BrokerTest, ParkedFetchOverManyPartitionsAnswersEachWhenOneMoves) {
  CreateTopic("a", {k1, k2});
  CreateTopic("b", {k1, k2});
  const TopicPartition a0{"a", PartitionId(0)}, b0{"b", PartitionId(0)};
  EXPECT_EQ(Produce("broker-1", a0, -1, 2).error_code, Errc::kNone);
  ASSERT_TRUE(cluster_->RunUntil([&] { return PartitionOn(k1, a0)->high_watermark() == Offset(2); },
                                 10 * kSecondUs));
  FetchRequest request;
  request.max_wait_ms = 20000;
  request.min_bytes = 1;
  request.partitions.push_back(FetchPartition{a0, Offset(2), kUndefinedOffset, 1 << 20});
  request.partitions.push_back(FetchPartition{b0, Offset(0), kUndefinedOffset, 1 << 20});
  const Answer fetched = Post("broker-1", request, kSecondUs);
  ASSERT_NE(fetched, nullptr);
  cluster_->RunFor(kSecondUs);
  EXPECT_FALSE(fetched->has_value());  // parked: both at their HW
  EXPECT_EQ(Produce("broker-1", b0, -1, 3).error_code, Errc::kNone);
  ASSERT_TRUE(cluster_->RunUntil([&] { return fetched->has_value(); }, 19 * kSecondUs));
  ASSERT_TRUE((*fetched)->ok());
  const std::vector<FetchPartitionResponse>& answers =
      std::get<FetchResponse>(***fetched).responses;
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].tp, a0);
  EXPECT_EQ(answers[0].error_code, Errc::kNone);
  EXPECT_TRUE(answers[0].records.empty());
  EXPECT_EQ(answers[0].high_watermark, Offset(2));
  EXPECT_EQ(answers[0].log_start_offset, Offset(0));
  EXPECT_EQ(answers[1].tp, b0);
  EXPECT_EQ(answers[1].high_watermark, Offset(3));
  EXPECT_EQ(RecordsIn(answers[1].records).size(), 3u);
}

// A fetch that may wait, with nothing at any of its offsets, parks without a read of its
// partitions (each would give nothing); its answer, at the wait's end, reads them all. A fetch
// with something at one offset reads at once and is answered.
TEST_F(BrokerTest, AFetchWithNothingAtItsOffsetsParksWithoutARead) {
  // No follower: the leader's reads are this test's fetches' alone.
  CreateTopic("a", {k1});
  CreateTopic("b", {k1});
  const TopicPartition a0{"a", PartitionId(0)}, b0{"b", PartitionId(0)};
  EXPECT_EQ(Produce("broker-1", a0, -1, 2).error_code, Errc::kNone);
  ASSERT_TRUE(cluster_->RunUntil([&] { return PartitionOn(k1, a0)->high_watermark() == Offset(2); },
                                 10 * kSecondUs));
  const ReplicaManager& leader = cluster_->broker(k1)->replica_manager();
  FetchRequest request;
  request.max_wait_ms = 500;
  request.min_bytes = 1;
  request.partitions.push_back(FetchPartition{a0, Offset(2), kUndefinedOffset, 1 << 20});
  request.partitions.push_back(FetchPartition{b0, Offset(0), kUndefinedOffset, 1 << 20});
  const uint64_t reads_before = leader.fetch_partition_reads();
  const Answer fetched = Post("broker-1", request, kSecondUs);
  ASSERT_NE(fetched, nullptr);
  cluster_->RunFor(100 * kUsPerMs);
  EXPECT_FALSE(fetched->has_value());
  EXPECT_EQ(leader.fetch_partition_reads(), reads_before);  // parked, nothing read
  ASSERT_TRUE(cluster_->RunUntil([&] { return fetched->has_value(); }, kSecondUs));
  ASSERT_TRUE((*fetched)->ok());
  const std::vector<FetchPartitionResponse>& answers =
      std::get<FetchResponse>(***fetched).responses;
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].tp, a0);
  EXPECT_TRUE(answers[0].records.empty());
  EXPECT_EQ(answers[0].high_watermark, Offset(2));
  EXPECT_EQ(answers[1].tp, b0);
  EXPECT_EQ(answers[1].high_watermark, Offset(0));
  EXPECT_EQ(leader.fetch_partition_reads(), reads_before + 2);  // the answer read both

  request.partitions[0].fetch_offset = Offset(1);  // one record there
  const FetchResponse now = CallFor<FetchResponse>("broker-1", request);
  ASSERT_EQ(now.responses.size(), 2u);
  EXPECT_EQ(RecordsIn(now.responses[0].records).size(), 1u);
  EXPECT_EQ(leader.fetch_partition_reads(), reads_before + 4);
}

// Disk time (sim/cluster/cluster.h): a broker's Kafka messages leave when its disk has done the
// work charged before them; its ZooKeeper session's pings do not wait. One broker whose every
// write takes `write_ms`.
class DiskTimeTest : public BrokerClusterTest {
 protected:
  void Start(int64_t write_ms) {
    ClusterOptions options;
    options.brokers = 1;
    options.disk.write_latency = {write_ms * kUsPerMs, write_ms * kUsPerMs};
    StartCluster(std::move(options));
    CreateTopic("t", {k1});
    cluster_->RunFor(20 * kSecondUs);  // whatever the start-up queued on the disk is done
  }
  // How long an acks=1 produce of one record takes to be answered.
  TimeUs ProduceTime() {
    const TimeUs sent = world_.Now();
    EXPECT_EQ(Produce("broker-1", kTp, 1, 1).error_code, Errc::kNone);
    return world_.Now() - sent;
  }
};

TEST_F(DiskTimeTest, AProduceAnswerWaitsForTheAppendsWrite) {
  Start(300);
  const TimeUs took = ProduceTime();
  EXPECT_GE(took, 300 * kUsPerMs);
  EXPECT_LT(took, 2 * kSecondUs);  // the append's own writes, not a backlog
}

TEST_F(DiskTimeTest, AFreeDiskAnswersAtNetworkSpeed) {
  Start(0);
  EXPECT_LT(ProduceTime(), 20 * kUsPerMs);  // two link latencies of 1-3 ms
}

// Four appends of 2.5 s each keep the disk busy for 10 s, longer than the 6 s ZooKeeper session:
// the session lives on (Kafka's ZooKeeper client has its own thread) and no election happens,
// while each produce answer waits for its write.
TEST_F(DiskTimeTest, TheZooKeeperSessionDoesNotWaitForTheDisk) {
  Start(2500);
  const TimeUs began = world_.Now();
  for (int i = 0; i < 4; ++i) EXPECT_GE(ProduceTime(), 2500 * kUsPerMs);
  EXPECT_GE(world_.Now() - began, 10 * kSecondUs);
  EXPECT_TRUE(Events("zk_session_expired").empty());
  EXPECT_EQ(PartitionOn(k1, kTp)->log_end_offset(), Offset(4));
  EXPECT_TRUE(PartitionOn(k1, kTp)->is_leader());
}

// A lagging follower is dropped by the leader itself (not by the controller): ZooKeeper sessions
// last 30 s here, so the slowed broker stays registered while its fetches arrive 15 s late.
class SlowFollowerTest : public BrokerTest {
 protected:
  void SetUp() override {
    ClusterOptions options;
    options.brokers = 3;
    options.config = {{"zookeeper.session.timeout.ms", "30000"}};
    StartCluster(std::move(options));
  }
};

TEST_F(SlowFollowerTest, LaggingFollowerLeavesTheIsrInZooKeeperAndRejoins) {
  CreateTopic("t", {k1, k2, k3});
  EXPECT_EQ(Produce("broker-1", kTp, -1, 2).error_code, Errc::kNone);
  const int32_t version_before = PartitionOn(k1, kTp)->zk_version();
  // Every message to and from broker-3 takes 15 s longer for 20 s: its fetches stop arriving for
  // longer than replica.lag.time.max.ms (10 s).
  ASSERT_TRUE(cluster_->SlowBroker(k3, 15 * kSecondUs, 20 * kSecondUs).ok());
  auto isr_in_zk = [&] {
    std::optional<zk::PartitionState> state = cluster_->ZkPartitionState(kTp);
    return state.has_value() ? state->isr : std::vector<BrokerId>{};
  };
  const std::vector<BrokerId> two{k1, k2};
  ASSERT_TRUE(cluster_->RunUntil(
      [&] { return isr_in_zk() == two && PartitionOn(k1, kTp)->isr() == two; }, 30 * kSecondUs));
  // The leader wrote it (conditional on the version it knew), with its own leader epoch.
  EXPECT_EQ(cluster_->ZkPartitionState(kTp)->leader_epoch, LeaderEpoch(0));
  EXPECT_EQ(PartitionOn(k1, kTp)->zk_version(), version_before + 1);
  ASSERT_EQ(Events("isr_shrink").size(), 1u);
  EXPECT_EQ(Events("isr_shrink")[0]["node"], "broker-1");
  // Meanwhile acks=all needs only the remaining ISR.
  EXPECT_EQ(Produce("broker-1", kTp, -1, 2).error_code, Errc::kNone);
  const std::vector<BrokerId> three{k1, k2, k3};
  ASSERT_TRUE(cluster_->RunUntil(
      [&] { return isr_in_zk() == three && PartitionOn(k1, kTp)->isr() == three; },
      90 * kSecondUs));
  ASSERT_EQ(Events("isr_expand").size(), 1u);
  EXPECT_EQ(Events("isr_expand")[0]["node"], "broker-1");
  EXPECT_TRUE(Converged({k1, k2, k3}, Offset(4), 60 * kSecondUs));
  // The controller heard of both changes: its cached state matches ZooKeeper.
  ASSERT_TRUE(cluster_->RunUntil(
      [&] {
        Broker* controller = cluster_->broker(cluster_->ActiveController());
        return controller != nullptr &&
               controller->controller().partitions().at(kTp).state.isr == three;
      },
      30 * kSecondUs));
}

TEST_F(BrokerTest, HighWatermarkCheckpointSurvivesACrash) {
  CreateTopic("t", {k1, k2});
  EXPECT_EQ(Produce("broker-1", kTp, -1, 7).error_code, Errc::kNone);
  ASSERT_TRUE(Converged({k1, k2}, Offset(7)));
  // replica.high.watermark.checkpoint.interval.ms = 5000.
  cluster_->RunFor(6 * kSecondUs);
  ASSERT_TRUE(cluster_->CrashBroker(k2).ok());
  Result<std::map<TopicPartition, Offset>> on_disk =
      ReadHighWatermarks(*world_.node("broker-2").disk(), std::string(kBrokerLogDir));
  ASSERT_TRUE(on_disk.ok()) << on_disk.status().ToString();
  EXPECT_EQ(on_disk->at(kTp), Offset(7));
  ASSERT_TRUE(cluster_->RestartBroker(k2).ok());
  ASSERT_TRUE(cluster_->RunUntil(
      [&] {
        return cluster_->broker(k2) && cluster_->broker(k2)->state() == BrokerState::kRunning;
      },
      30 * kSecondUs));
  EXPECT_EQ(cluster_->broker(k2)->replica_manager().checkpointed_high_watermarks().at(kTp),
            Offset(7));
  EXPECT_TRUE(Converged({k1, k2}, Offset(7)));
}

// Issue 17, R2: the log dir fails outside the Log's own appends. Kafka 1.x/2.0 takes it offline
// (CheckpointFile.read/write report an IOException to the LogDirFailureChannel) and, with its
// only dir offline, halts; 0.10 halts on the first failed HW checkpoint. Before, the broker only
// traced the error and stayed up without the replica, never to create it.
// At Kafka 2.0: a follower's leader-epoch-checkpoint is written from the epochs of the v2
// batches it copies, so there is one to read (a 0.10.0 log's message sets carry no epoch, and
// 0.10.0 has no such file).
class BrokerTestAt20 : public BrokerTest {
 protected:
  void SetUp() override {
    ClusterOptions options;
    options.brokers = 3;
    options.kafka_version = Release();
    options.config = Config();
    StartCluster(std::move(options));
  }
  virtual KafkaRelease Release() const { return KafkaRelease::k2_0; }
  virtual ConfigOverrides Config() const { return {}; }
};

TEST_F(BrokerTestAt20, LeaderAndIsrWhoseEpochCheckpointCannotBeReadHaltsTheBroker) {
  CreateTopic("t", {k1, k2});
  EXPECT_EQ(Produce("broker-1", kTp, -1, 3).error_code, Errc::kNone);
  ASSERT_TRUE(Converged({k1, k2}, Offset(3)));
  ASSERT_TRUE(cluster_->CrashBroker(k2).ok());
  // Restarted once its old session has timed out (before, its start-up would exit on the old
  // registration).
  ASSERT_TRUE(cluster_->RunUntil(
      [&] { return !cluster_->zookeeper().Read("/brokers/ids/2").has_value(); }, 30 * kSecondUs));
  ASSERT_TRUE(cluster_->RestartBroker(k2).ok());
  // Its logs are loaded; the replica is made at the controller's LeaderAndIsr, which reads the
  // leader-epoch-checkpoint: that read fails now.
  ASSERT_TRUE(
      world_.InjectDiskFault("broker-2", DiskFault::kReadError, FaultPersistence::kUntilCleared)
          .ok());
  ASSERT_TRUE(cluster_->RunUntil([&] { return !world_.node("broker-2").up(); }, 60 * kSecondUs));
  std::vector<nlohmann::ordered_json> errors = Events("partition_create_error");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0]["node"], "broker-2");
  std::vector<nlohmann::ordered_json> crashes = Events("crash");
  ASSERT_FALSE(crashes.empty());
  EXPECT_EQ(crashes.back()["node"], "broker-2");
  EXPECT_NE(crashes.back().value("halt", "").find("creating the replica of t-0"), std::string::npos)
      << crashes.back().dump();
}

// Kafka's Log at load (0.11.0 to 2.0: clearAndFlushLatest(nextOffset), 2.1: truncateFromEnd)
// drops the epochs that start at or past the loaded log's end: a leader's epoch written at its
// LEO, with nothing appended in it, does not survive a restart. Kept, it ended the previous epoch
// at that offset, and a follower later cut committed records fetched after it (explore safe seed
// 3175). Only from 2.1 (KAFKA-7415) does a new leader write its epoch at its LEO.
class SyncedBrokerTestAt21 : public BrokerTestAt20 {
 protected:
  KafkaRelease Release() const override { return KafkaRelease::k2_1; }
  ConfigOverrides Config() const override {
    return {{"log.flush.interval.messages", "1"}};  // the records survive the crash
  }
};

TEST_F(SyncedBrokerTestAt21, AnEpochWithNothingAppendedIsDroppedWhenTheLogIsLoaded) {
  CreateTopic("t", {k1, k2});
  EXPECT_EQ(Produce("broker-1", kTp, -1, 3).error_code, Errc::kNone);
  ASSERT_TRUE(Converged({k1, k2}, Offset(3)));
  ASSERT_TRUE(cluster_->CrashBroker(k1).ok());
  ASSERT_TRUE(cluster_->RunUntil(
      [&] {
        Partition* p = PartitionOn(k2, kTp);
        return p != nullptr && p->is_leader() && p->leader_epoch() == LeaderEpoch(1);
      },
      30 * kSecondUs));
  const std::vector<EpochEntry> as_leader = PartitionOn(k2, kTp)->epochs().entries();
  ASSERT_FALSE(as_leader.empty());
  EXPECT_EQ(as_leader.back().epoch, LeaderEpoch(1));
  EXPECT_EQ(as_leader.back().start_offset, Offset(3));  // its LEO: nothing appended in epoch 1

  ASSERT_TRUE(cluster_->CrashBroker(k2).ok());
  ASSERT_TRUE(cluster_->RestartBroker(k2).ok());
  ASSERT_TRUE(cluster_->RunUntil(
      [&] {
        Partition* p = PartitionOn(k2, kTp);
        return p != nullptr && p->is_leader() && p->leader_epoch() > LeaderEpoch(1);
      },
      60 * kSecondUs));
  ASSERT_EQ(PartitionOn(k2, kTp)->log_end_offset(), Offset(3));
  const std::vector<EpochEntry> reloaded = PartitionOn(k2, kTp)->epochs().entries();
  ASSERT_EQ(reloaded.size(), 2u);
  EXPECT_EQ(reloaded[0].epoch, LeaderEpoch(0));
  EXPECT_EQ(reloaded[0].start_offset, Offset(0));
  EXPECT_GT(reloaded[1].epoch, LeaderEpoch(1));  // the epoch it leads in now, not epoch 1
  EXPECT_EQ(reloaded[1].start_offset, Offset(3));
}

// LeaderAndIsr reads the topic's config znode (AdminZkClient.fetchEntityConfig), which waits
// until ZooKeeper is connected again, as Kafka's ZkClient does: the replica gets the topic's
// overrides, not the broker's defaults (before, a lost connection fell back to them).
TEST_F(BrokerTest, ATopicConfigReadThatLosesItsConnectionIsIssuedAgain) {
  ASSERT_TRUE(world_.Partition({{"broker-3"}, {"zk"}}).ok());
  TopicSpec spec{"t", 1, 3, {{PartitionId(0), {k1, k2, k3}}}, {{"retention.ms", "12345"}}};
  ASSERT_TRUE(cluster_->CreateTopicAndWait(std::move(spec)).ok());
  // Broker 3's read is under way; its client notices the lost connection (its ping timeout),
  // then the cut ends before the session would expire.
  cluster_->RunFor(5 * kSecondUs);
  EXPECT_EQ(PartitionOn(k3, kTp), nullptr);
  world_.Heal();
  ASSERT_TRUE(cluster_->RunUntil([&] { return PartitionOn(k3, kTp) != nullptr; }, 30 * kSecondUs));
  EXPECT_EQ(PartitionOn(k3, kTp)->log().config().retention_ms, 12345);
  EXPECT_EQ(PartitionOn(k1, kTp)->log().config().retention_ms, 12345);
  EXPECT_TRUE(Events("broker_session_expired").empty());
}

TEST_F(BrokerTest, HighWatermarkCheckpointWriteErrorHaltsTheBroker) {
  CreateTopic("t", {k1, k2});
  // A follower with nothing to append: its next write is the HW checkpoint (every 5 s).
  ASSERT_TRUE(
      world_.InjectDiskFault("broker-2", DiskFault::kWriteError, FaultPersistence::kUntilCleared)
          .ok());
  ASSERT_TRUE(cluster_->RunUntil([&] { return !world_.node("broker-2").up(); }, 10 * kSecondUs));
  std::vector<nlohmann::ordered_json> errors = Events("hw_checkpoint_error");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0]["node"], "broker-2");
  std::vector<nlohmann::ordered_json> crashes = Events("crash");
  ASSERT_FALSE(crashes.empty());
  EXPECT_NE(crashes.back().value("halt", "").find("high watermark checkpoint"), std::string::npos)
      << crashes.back().dump();
  EXPECT_TRUE(world_.node("broker-1").up());
}

// A full disk fails the leader's next append. 0.10.0.1's ReplicaManager.appendToLocalLog halts
// on the KafkaStorageException (Runtime.halt); from 1.0 (KIP-112) the log dir goes offline and a
// broker whose every log dir is offline halts (LogManager.handleLogDirFailure). Every broker has
// one log dir, so both halt: the process ends at once, the follower is elected when broker-1's
// ZooKeeper session expires, and nothing acknowledged is lost.
class DiskFullLeaderTest : public BrokerClusterTest,
                           public ::testing::WithParamInterface<KafkaRelease> {
 protected:
  void SetUp() override {
    ClusterOptions options;
    options.brokers = 2;
    options.kafka_version = GetParam();
    options.config = {{"log.flush.interval.messages", "1"}};
    StartCluster(std::move(options));
  }
};

TEST_P(DiskFullLeaderTest, AppendOnAFullDiskHaltsTheLeader) {
  CreateTopic("t", {k1, k2});
  EXPECT_EQ(Produce("broker-1", kTp, -1, 3).error_code, Errc::kNone);
  auto* disk = world_.node("broker-1").disk();
  disk->set_capacity_bytes(disk->used_bytes());
  ASSERT_TRUE(cluster_->RunUntil([&] { return client_->Ready("broker-1"); }, 10 * kSecondUs));
  ProduceRequest request = MakeProduce(kTp, 1, 2);
  client_->Send("broker-1", std::move(request), [](Result<ksim::Message>) {});
  ASSERT_TRUE(cluster_->RunUntil([&] { return !world_.node("broker-1").up(); }, 10 * kSecondUs));
  std::vector<nlohmann::ordered_json> crashes = Events("crash");
  ASSERT_FALSE(crashes.empty());
  EXPECT_EQ(crashes.back()["node"], "broker-1");
  EXPECT_FALSE(crashes.back().value("halt", "").empty()) << crashes.back().dump();
  EXPECT_TRUE(Events("shutdown").empty());  // a halt, not an exit through the shutdown hook
  ASSERT_TRUE(
      cluster_->RunUntil([&] { return PartitionOn(k2, kTp)->is_leader(); }, 60 * kSecondUs));
  EXPECT_EQ(Produce("broker-2", kTp, -1, 1).base_offset, Offset(3));
}

INSTANTIATE_TEST_SUITE_P(Releases, DiskFullLeaderTest,
                         ::testing::Values(KafkaRelease::k0_10_0, KafkaRelease::k2_1),
                         ksim::testing::ReleaseParamName);

TEST_F(BrokerTest, StaleControllerEpochIsRefused) {
  CreateTopic("t", {k1, k2});
  Broker* broker = cluster_->broker(k2);
  const ControllerEpoch current = broker->replica_manager().controller_epoch();
  ASSERT_GE(current.value(), 1);
  LeaderAndIsrRequest stale;
  stale.controller_id = k3;
  stale.controller_epoch = ControllerEpoch(current.value() - 1);
  LeaderAndIsrPartitionState state;
  state.tp = kTp;
  state.leader = k2;
  state.leader_epoch = LeaderEpoch(100);
  state.isr = {k2};
  state.replicas = {k1, k2};
  stale.partition_states.push_back(state);
  EXPECT_EQ(CallFor<LeaderAndIsrResponse>("broker-2", stale).error_code,
            Errc::kStaleControllerEpoch);
  EXPECT_EQ(PartitionOn(k2, kTp)->role(), ReplicaRole::kFollower);

  StopReplicaRequest stop;
  stop.controller_epoch = stale.controller_epoch;
  stop.delete_partitions = true;
  stop.partitions = {kTp};
  EXPECT_EQ(CallFor<StopReplicaResponse>("broker-2", stop).error_code, Errc::kStaleControllerEpoch);
  EXPECT_NE(PartitionOn(k2, kTp), nullptr);

  UpdateMetadataRequest update;
  update.controller_epoch = stale.controller_epoch;
  EXPECT_EQ(CallFor<UpdateMetadataResponse>("broker-2", update).error_code,
            Errc::kStaleControllerEpoch);

  // The current epoch with an old leader epoch: that partition is refused.
  LeaderAndIsrRequest old_leader_epoch = stale;
  old_leader_epoch.controller_epoch = current;
  old_leader_epoch.partition_states[0].leader_epoch = LeaderEpoch(0);
  LeaderAndIsrResponse answer = CallFor<LeaderAndIsrResponse>("broker-2", old_leader_epoch);
  EXPECT_EQ(answer.error_code, Errc::kNone);
  ASSERT_EQ(answer.partitions.size(), 1u);
  EXPECT_EQ(answer.partitions[0].error_code, Errc::kStaleControllerEpoch);
  EXPECT_EQ(PartitionOn(k2, kTp)->role(), ReplicaRole::kFollower);
}

TEST_F(BrokerTest, MetadataComesFromTheControllersUpdates) {
  CreateTopic("t", {k2, k3});
  MetadataRequest request;
  request.topics = std::vector<std::string>{"t", "missing"};
  MetadataResponse response = CallFor<MetadataResponse>("broker-1", request);
  EXPECT_EQ(response.brokers.size(), 3u);
  EXPECT_EQ(response.controller_id, cluster_->ActiveController());
  ASSERT_EQ(response.topic_metadata.size(), 2u);
  const TopicMetadata& t = response.topic_metadata[0];
  EXPECT_EQ(t.error_code, Errc::kNone);
  ASSERT_EQ(t.partition_metadata.size(), 1u);
  EXPECT_EQ(t.partition_metadata[0].leader, k2);
  EXPECT_EQ(t.partition_metadata[0].replicas, (std::vector<BrokerId>{k2, k3}));
  EXPECT_EQ(response.topic_metadata[1].error_code, Errc::kUnknownTopicOrPartition);

  // Once the leader is gone and no other replica can take over, the partition is unavailable.
  ASSERT_TRUE(cluster_->CrashBroker(k3).ok());
  ASSERT_TRUE(cluster_->CrashBroker(k2).ok());
  ASSERT_TRUE(cluster_->RunUntil(
      [&] {
        MetadataResponse now = CallFor<MetadataResponse>("broker-1", request);
        return now.topic_metadata.at(0).partition_metadata.at(0).error_code ==
               Errc::kLeaderNotAvailable;
      },
      60 * kSecondUs));
}

TEST_F(BrokerTest, MetadataCreatesAnUnknownTopicWhenTheRequestAllowsIt) {
  // KafkaApis.getTopicMetadata with auto.create.topics.enable (the default): LEADER_NOT_AVAILABLE
  // and the topic written to ZooKeeper; a request that does not allow it gets
  // UNKNOWN_TOPIC_OR_PARTITION and creates nothing.
  MetadataRequest refused;
  refused.topics = std::vector<std::string>{"kept-out"};
  refused.allow_auto_topic_creation = false;
  EXPECT_EQ(CallFor<MetadataResponse>("broker-1", refused).topic_metadata.at(0).error_code,
            Errc::kUnknownTopicOrPartition);

  MetadataRequest allowed;
  allowed.topics = std::vector<std::string>{"auto"};
  allowed.allow_auto_topic_creation = true;
  EXPECT_EQ(CallFor<MetadataResponse>("broker-1", allowed).topic_metadata.at(0).error_code,
            Errc::kLeaderNotAvailable);
  ASSERT_TRUE(cluster_->RunUntil(
      [&] {
        MetadataResponse now = CallFor<MetadataResponse>("broker-1", allowed);
        const TopicMetadata& topic = now.topic_metadata.at(0);
        return topic.error_code == Errc::kNone && topic.partition_metadata.size() == 1 &&
               topic.partition_metadata[0].leader != kNoBroker;
      },
      30 * kSecondUs));
  EXPECT_TRUE(cluster_->zookeeper().Read(zk::TopicPath("auto")).has_value());
  EXPECT_FALSE(cluster_->zookeeper().Read(zk::TopicPath("kept-out")).has_value());
  std::vector<nlohmann::ordered_json> created = Events("topic_auto_create");
  ASSERT_FALSE(created.empty());
  EXPECT_EQ(created.front()["topic"], "auto");
  EXPECT_EQ(created.front()["error"], "NONE");
}

TEST_F(BrokerTest, ControlledShutdownMovesLeadershipAway) {
  CreateTopic("t", {k1, k2, k3});
  EXPECT_EQ(Produce("broker-1", kTp, -1, 3).error_code, Errc::kNone);
  bool done = false;
  ASSERT_TRUE(cluster_->ShutdownBroker(k1, [&] { done = true; }).ok());
  ASSERT_TRUE(cluster_->RunUntil([&] { return done; }, 120 * kSecondUs));
  std::vector<nlohmann::ordered_json> attempts = Events("controlled_shutdown");
  ASSERT_FALSE(attempts.empty());
  EXPECT_EQ(attempts.back()["error"], "NONE");
  EXPECT_TRUE(attempts.back()["remaining"].empty());
  const BrokerId leader = cluster_->LeaderOf(kTp);
  EXPECT_TRUE(leader == k2 || leader == k3) << leader;
  EXPECT_FALSE(cluster_->zookeeper().Read(zk::BrokerIdPath(k1)).has_value());
  // Nothing acknowledged was lost.
  EXPECT_EQ(Produce(node::Broker(leader), kTp, -1, 1).base_offset, Offset(3));
}

TEST_F(BrokerTest, ControllerAsksItselfForControlledShutdown) {
  const BrokerId controller = cluster_->ActiveController();
  const BrokerId other = controller == k1 ? k2 : k1;
  CreateTopic("t", {controller, other});
  EXPECT_EQ(Produce(node::Broker(controller), kTp, -1, 2).error_code, Errc::kNone);
  bool done = false;
  ASSERT_TRUE(cluster_->ShutdownBroker(controller, [&] { done = true; }).ok());
  ASSERT_TRUE(cluster_->RunUntil([&] { return done; }, 120 * kSecondUs));
  std::vector<nlohmann::ordered_json> attempts = Events("controlled_shutdown");
  ASSERT_FALSE(attempts.empty());
  EXPECT_EQ(attempts.back()["error"], "NONE");
  // Another broker took over the controller and the partition.
  ASSERT_TRUE(cluster_->RunUntil(
      [&] {
        const BrokerId now = cluster_->ActiveController();
        return now != kNoBroker && now != controller && PartitionOn(other, kTp)->is_leader();
      },
      60 * kSecondUs));
  EXPECT_EQ(Produce(node::Broker(other), kTp, 1, 1).base_offset, Offset(2));
}

// KafkaServer.controlledShutdown reads /controller at every attempt. 0.10.0.1 to 1.0.0's
// ZkUtils.getController throws "Controller doesn't exist" when it is missing, and the shutdown
// goes on at once without moving leadership; from 1.1 (KafkaZkClient.getControllerId) that
// attempt fails and another follows after controlled.shutdown.retry.backoff.ms. At every release
// a failed attempt is followed by that backoff, the last one too.
class ControlledShutdownTest : public BrokerClusterTest,
                               public ::testing::WithParamInterface<KafkaRelease> {
 protected:
  void SetUp() override {
    ClusterOptions options;
    options.brokers = 2;
    options.kafka_version = GetParam();
    StartCluster(std::move(options));
    controller_ = cluster_->ActiveController();
    other_ = controller_ == k1 ? k2 : k1;
  }

  BrokerId controller_{0};
  BrokerId other_{0};
};

TEST_P(ControlledShutdownTest, MissingControllerZnode) {
  // The controller is cut from ZooKeeper and its session expires: /controller is gone, and only
  // the broker shutting down could write it again (after its GetData, on the same connection).
  ASSERT_TRUE(
      cluster_->Partition({{node::Broker(controller_)}, {std::string(node::kZooKeeper)}}).ok());
  std::optional<ZnodeData> registration = cluster_->zookeeper().Read(zk::BrokerIdPath(controller_));
  ASSERT_TRUE(registration.has_value());
  ASSERT_TRUE(cluster_->zookeeper().ExpireSession(registration->stat.ephemeral_owner).ok());
  ASSERT_FALSE(cluster_->zookeeper().Read(zk::kControllerPath).has_value());
  bool done = false;
  ASSERT_TRUE(cluster_->ShutdownBroker(other_, [&] { done = true; }).ok());
  ASSERT_TRUE(cluster_->RunUntil([&] { return done; }, 120 * kSecondUs));
  std::vector<nlohmann::ordered_json> attempts = Events("controlled_shutdown");
  ASSERT_FALSE(attempts.empty());
  EXPECT_EQ(attempts[0]["error"], "NOT_CONTROLLER");
  if (GetParam() < KafkaRelease::k1_1) {
    EXPECT_EQ(attempts.size(), 1u);  // unclean at once
  } else {
    ASSERT_GE(attempts.size(), 2u);
    EXPECT_GE(attempts[1]["t_us"].get<int64_t>() - attempts[0]["t_us"].get<int64_t>(),
              5 * kSecondUs);  // controlled.shutdown.retry.backoff.ms
  }
}

TEST_P(ControlledShutdownTest, BackoffAfterTheLastFailedAttemptToo) {
  // The controller cannot be reached: all three attempts fail, each followed by 5 s of backoff.
  ASSERT_TRUE(cluster_->Partition({{node::Broker(controller_)}, {node::Broker(other_)}}).ok());
  bool done = false;
  ASSERT_TRUE(cluster_->ShutdownBroker(other_, [&] { done = true; }).ok());
  ASSERT_TRUE(cluster_->RunUntil([&] { return done; }, 120 * kSecondUs));
  std::vector<nlohmann::ordered_json> attempts = Events("controlled_shutdown");
  ASSERT_EQ(attempts.size(), 3u);  // controlled.shutdown.max.retries
  std::vector<nlohmann::ordered_json> shutdowns = Events("shutdown");
  ASSERT_EQ(shutdowns.size(), 1u);
  EXPECT_GE(shutdowns[0]["t_us"].get<int64_t>() - attempts[2]["t_us"].get<int64_t>(),
            5 * kSecondUs);
}

INSTANTIATE_TEST_SUITE_P(Releases, ControlledShutdownTest,
                         ::testing::Values(KafkaRelease::k0_10_0, KafkaRelease::k1_1),
                         ksim::testing::ReleaseParamName);

TEST_F(BrokerTest, SameSeedSameTrace) {
  auto run = [](uint64_t seed) {
    World world(seed,
                TraceWriter::ToMemory(TraceHeader{"broker_test", "base", seed, TraceLevel::kState}),
                WorldOptions{LinkSpec{1000, 3000, 0, 0}, NetworkOptions{}});
    ClusterOptions options;
    options.brokers = 3;
    auto cluster = Cluster::Create(world, options);
    EXPECT_TRUE(cluster.ok());
    EXPECT_TRUE((*cluster)->Start().ok());
    (*cluster)->RunUntil(
        [&] {
          for (BrokerId id : (*cluster)->broker_ids()) {
            if ((*cluster)->broker(id)->state() != BrokerState::kRunning) return false;
          }
          return true;
        },
        30 * kSecondUs);
    TopicSpec spec;
    spec.name = "t";
    spec.partitions = 2;
    spec.replication_factor = 3;
    EXPECT_TRUE((*cluster)->CreateTopicAndWait(spec).ok());
    (*cluster)->RunFor(2 * kSecondUs);
    EXPECT_TRUE((*cluster)->CrashBroker(BrokerId(2)).ok());
    (*cluster)->RunFor(20 * kSecondUs);
    EXPECT_TRUE((*cluster)->RestartBroker(BrokerId(2)).ok());
    (*cluster)->RunFor(20 * kSecondUs);
    return world.trace().bytes();
  };
  const std::string first = run(11);
  EXPECT_EQ(first, run(11));
  EXPECT_NE(first.find("become_follower"), std::string::npos);
}

TEST_F(BrokerTest, StopReplicaWithDeleteRemovesTheLogAndItsCheckpointEntry) {
  CreateTopic("t", {k1, k2});
  EXPECT_EQ(Produce("broker-1", kTp, -1, 3).error_code, Errc::kNone);
  ASSERT_TRUE(cluster_->RunUntil(
      [&] { return PartitionOn(k2, kTp)->high_watermark() == Offset(3); }, 10 * kSecondUs));
  Broker* broker = cluster_->broker(k2);
  ASSERT_TRUE(broker->replica_manager().CheckpointHighWatermarks().ok());
  StopReplicaRequest stop;
  stop.controller_id = cluster_->ActiveController();
  stop.controller_epoch = broker->replica_manager().controller_epoch();
  stop.delete_partitions = true;
  stop.partitions = {kTp};
  StopReplicaResponse answer = CallFor<StopReplicaResponse>("broker-2", stop);
  EXPECT_EQ(answer.error_code, Errc::kNone);
  EXPECT_EQ(PartitionOn(k2, kTp), nullptr);
  EXPECT_EQ(broker->log_manager().GetLog(kTp), nullptr);
  EXPECT_EQ(broker->log_manager().PendingDeletions().size(), 1u);
  EXPECT_FALSE(broker->replica_manager().fetchers().LeaderOf(kTp).has_value());
  ASSERT_TRUE(broker->replica_manager().CheckpointHighWatermarks().ok());
  Result<std::map<TopicPartition, Offset>> on_disk =
      ReadHighWatermarks(*world_.node("broker-2").disk(), std::string(kBrokerLogDir));
  ASSERT_TRUE(on_disk.ok());
  EXPECT_EQ(on_disk->count(kTp), 0u);
  // The leader no longer hears from it; its data there is untouched.
  EXPECT_EQ(PartitionOn(k1, kTp)->log_end_offset(), Offset(3));
}

TEST_F(BrokerTest, UnservedApisAreRetriableErrorsUnlessAHandlerTakesThem) {
  FindCoordinatorRequest find;
  find.coordinator_key = "g1";
  EXPECT_EQ(CallFor<FindCoordinatorResponse>("broker-1", find).error_code,
            Errc::kCoordinatorNotAvailable);
  // InitProducerId is served (core/coordinator/producer_id_manager.h): the first id of the first
  // block.
  const InitProducerIdResponse served =
      CallFor<InitProducerIdResponse>("broker-1", InitProducerIdRequest{});
  EXPECT_EQ(served.error_code, Errc::kNone);
  EXPECT_EQ(served.producer_id, ProducerId(0));
  OffsetCommitRequest commit;
  commit.group_id = "g1";
  commit.partitions.push_back(OffsetCommitPartition{kTp, Offset(1), std::nullopt});
  OffsetCommitResponse committed = CallFor<OffsetCommitResponse>("broker-1", commit);
  ASSERT_EQ(committed.responses.size(), 1u);
  // Groups are served (core/coordinator/group_coordinator.h): broker-1 leads no offsets partition
  // yet.
  EXPECT_EQ(committed.responses[0].error_code, Errc::kNotCoordinator);

  cluster_->broker(k1)->set_extra_request_handler(
      [](std::string_view, ksim::Message& request,
         const std::function<void(ksim::Message)>& respond) {
        if (!std::holds_alternative<InitProducerIdRequest>(request)) return false;
        InitProducerIdResponse response;
        response.producer_id = ProducerId(42);
        respond(response);
        return true;
      });
  InitProducerIdResponse init =
      CallFor<InitProducerIdResponse>("broker-1", InitProducerIdRequest{});
  EXPECT_EQ(init.error_code, Errc::kNone);
  EXPECT_EQ(init.producer_id, ProducerId(42));
  EXPECT_EQ(CallFor<FindCoordinatorResponse>("broker-1", find).error_code,
            Errc::kCoordinatorNotAvailable);
}

TEST_F(BrokerTest, ExpiredSessionRegistersAgain) {
  std::optional<ZnodeData> before = cluster_->zookeeper().Read(zk::BrokerIdPath(k2));
  ASSERT_TRUE(before.has_value());
  ASSERT_TRUE(cluster_->ExpireSession(k2).ok());
  ASSERT_TRUE(cluster_->RunUntil(
      [&] {
        std::optional<ZnodeData> now = cluster_->zookeeper().Read(zk::BrokerIdPath(k2));
        return now.has_value() && now->stat.ephemeral_owner != before->stat.ephemeral_owner;
      },
      30 * kSecondUs));
  // The new session's registration answer is on its way back to the broker.
  cluster_->RunFor(2 * kSecondUs);
  EXPECT_EQ(Events("broker_session_expired").size(), 1u);
  EXPECT_EQ(Events("broker_registered").size(), 4u);
}

}  // namespace
}  // namespace ksim::sim::testing
