// The message format and the time index a simulated cluster writes when the scenario names none
// (docs/versions.md, "Storage: message format and time index"): at Kafka 0.10.0 every replica's
// log holds message sets v1 and no .timeindex (the producer's v2 batches are converted on
// append); at 0.11.0, record batches v2 and a .timeindex per segment; log.message.format.version
// given at 0.11.0 still wins; the leader-epoch truncation policy at 0.10.0 writes v2.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/cluster/partition.h"
#include "core/record/record_batch.h"
#include "core/storage/log.h"
#include "tests/support/sim/client_test_util.h"

namespace ksim::sim::testing {
namespace {

const TopicPartition kT0{"t", PartitionId(0)};

struct ReplicaFormat {
  std::vector<int> magics;  // of every entry in the log, in order
  bool time_index = false;  // a .timeindex beside the active segment
  int64_t records = 0;
};

// Reads back each replica's log of t-0.
std::vector<ReplicaFormat> Inspect(ClientSim& run) {
  std::vector<ReplicaFormat> formats;
  for (BrokerId id : run.cluster().broker_ids()) {
    Partition* replica = run.cluster().broker(id)->GetPartition(kT0);
    EXPECT_NE(replica, nullptr);
    if (replica == nullptr) continue;
    VirtualDisk::InspectionScope inspect(*run.world().node(node::Broker(id)).disk());
    Log& log = replica->log();
    ReplicaFormat format;
    auto read = log.Read(log.log_start_offset(), 1 << 20);
    EXPECT_TRUE(read.ok());
    BatchIterator batches(read->records, /*verify_crc=*/true);
    while (std::optional<BatchIterator::Item> item = batches.Next()) {
      format.magics.push_back(item->header.magic);
      format.records += item->header.last_offset_delta + 1;
    }
    EXPECT_TRUE(batches.status().ok()) << batches.status().ToString();
    format.time_index = log.active_segment().has_time_index();
    formats.push_back(format);
  }
  return formats;
}

// Has a new producer `id` send `messages` records with acks=all, then lets the followers catch up.
void Produce(ClientSim& run, const std::string& id, int64_t messages) {
  ProducerClientOptions producer;
  producer.id = id;
  producer.topic = "t";
  producer.messages = messages;
  producer.start_ms = run.world().Now() / kUsPerMs;
  producer.config = {{"acks", "all"}};
  ProducerClient& client = run.AddProducer(producer);
  EXPECT_TRUE(run.RunUntil([&] { return client.done(); }, 60 * kSecondUs));
  run.cluster().RunFor(2 * kSecondUs);
}

// Produces 30 records with acks=all and reads back each replica's log.
std::vector<ReplicaFormat> ProduceAndInspect(
    KafkaRelease release, ConfigOverrides config = {},
    TruncationPolicy truncation = TruncationPolicy::kHighWatermark) {
  ClusterOptions options = ClientClusterOptions();
  options.kafka_version = release;
  options.truncation = truncation;
  for (auto& setting : config) options.config.push_back(setting);
  ClientSim run("message-format-" + std::string(KafkaReleaseName(release)), 5, options);
  EXPECT_TRUE(run.Start());
  EXPECT_TRUE(
      run.CreateTopic("t", 1, 3, {{PartitionId(0), {BrokerId(1), BrokerId(2), BrokerId(3)}}}));
  Produce(run, "p1", 30);
  return Inspect(run);
}

TEST(ClusterMessageFormatTest, At0100EveryReplicaHoldsMessageSetsV1AndNoTimeIndex) {
  const std::vector<ReplicaFormat> formats = ProduceAndInspect(KafkaRelease::k0_10_0);
  ASSERT_EQ(formats.size(), 3u);
  for (const ReplicaFormat& format : formats) {
    EXPECT_EQ(format.records, 30);
    EXPECT_EQ(format.magics, std::vector<int>(30, 1));  // one message per record
    EXPECT_FALSE(format.time_index);
  }
}

TEST(ClusterMessageFormatTest, At0110EveryReplicaHoldsRecordBatchesV2AndATimeIndex) {
  const std::vector<ReplicaFormat> formats = ProduceAndInspect(KafkaRelease::k0_11_0);
  ASSERT_EQ(formats.size(), 3u);
  for (const ReplicaFormat& format : formats) {
    EXPECT_EQ(format.records, 30);
    ASSERT_FALSE(format.magics.empty());
    for (int magic : format.magics) EXPECT_EQ(magic, 2);
    EXPECT_TRUE(format.time_index);
  }
}

TEST(ClusterMessageFormatTest, AGivenFormatWinsOverTheRelease) {
  const std::vector<ReplicaFormat> formats =
      ProduceAndInspect(KafkaRelease::k0_11_0, {{"log.message.format.version", "0.10.0"}});
  ASSERT_EQ(formats.size(), 3u);
  for (const ReplicaFormat& format : formats) {
    EXPECT_EQ(format.magics, std::vector<int>(30, 1));
    EXPECT_TRUE(format.time_index);  // the time index is the release's, not the format's
  }
}

TEST(ClusterMessageFormatTest, LeaderEpochTruncationBringsRecordBatchesV2Before0110) {
  // KIP-101's epochs live in v2 batches: the policy, chosen at 0.10.0, writes v2 (the release's
  // other behaviours, no time index among them, stay 0.10.0's) unless a format is given.
  const std::vector<ReplicaFormat> formats =
      ProduceAndInspect(KafkaRelease::k0_10_0, {}, TruncationPolicy::kLeaderEpoch);
  ASSERT_EQ(formats.size(), 3u);
  for (const ReplicaFormat& format : formats) {
    EXPECT_EQ(format.records, 30);
    for (int magic : format.magics) EXPECT_EQ(magic, 2);
    EXPECT_FALSE(format.time_index);
  }
  const std::vector<ReplicaFormat> given =
      ProduceAndInspect(KafkaRelease::k0_10_0, {{"log.message.format.version", "0.10.0"}},
                        TruncationPolicy::kLeaderEpoch);
  for (const ReplicaFormat& format : given) EXPECT_EQ(format.magics, std::vector<int>(30, 1));
}

// The upgrade notes of 0.11.0: brokers of 0.11 with both versions at 0.10.0, then the new
// versions on every broker, read at each one's restart (a rolling restart). Records written
// before stay message sets v1; the leader writes record batches v2 after them, and the followers
// copy both: one log, two formats, on every replica.
TEST(ClusterMessageFormatTest, ARollingUpgradeLeavesBothFormatsInOneLog) {
  ClusterOptions options = ClientClusterOptions();
  options.kafka_version = KafkaRelease::k0_11_0;
  options.truncation = TruncationPolicy::kLeaderEpoch;
  options.config.emplace_back("inter.broker.protocol.version", "0.10.0");
  options.config.emplace_back("log.message.format.version", "0.10.0");
  ClientSim run("rolling-upgrade", 5, options);
  ASSERT_TRUE(run.Start());
  ASSERT_TRUE(
      run.CreateTopic("t", 1, 3, {{PartitionId(0), {BrokerId(1), BrokerId(2), BrokerId(3)}}}));
  Produce(run, "p1", 30);
  for (BrokerId id : run.cluster().broker_ids()) {
    ASSERT_TRUE(run.cluster()
                    .UpdateBrokerConfig(id, {{"inter.broker.protocol.version", "0.11.0"},
                                             {"log.message.format.version", "0.11.0"}})
                    .ok());
  }
  for (BrokerId id : run.cluster().broker_ids()) {
    bool stopped = false;
    ASSERT_TRUE(run.cluster().ShutdownBroker(id, [&] { stopped = true; }).ok());
    ASSERT_TRUE(run.RunUntil([&] { return stopped; }, 60 * kSecondUs));
    ASSERT_TRUE(run.cluster().RestartBroker(id).ok());
    run.cluster().RunFor(5 * kSecondUs);
  }
  Produce(run, "p2", 30);
  const std::vector<ReplicaFormat> formats = Inspect(run);
  ASSERT_EQ(formats.size(), 3u);
  for (const ReplicaFormat& format : formats) {
    EXPECT_EQ(format.records, 60);
    ASSERT_GT(format.magics.size(), 30u);
    EXPECT_EQ(std::vector<int>(format.magics.begin(), format.magics.begin() + 30),
              std::vector<int>(30, 1));
    for (size_t i = 30; i < format.magics.size(); ++i) EXPECT_EQ(format.magics[i], 2) << i;
  }
}

}  // namespace
}  // namespace ksim::sim::testing
