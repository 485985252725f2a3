// The old consumer (core/clients/consumer/zookeeper_consumer.h, Kafka 0.10's
// ZookeeperConsumerConnector) as a ConsumerClient of kind kZookeeper on a simulated cluster: its
// registration and owner nodes in ZooKeeper, the range assignment between two members, the
// rebalance when a member's session ends, offsets committed to ZooKeeper and resumed from there
// after a crash, the retry while an owner node is still held, and its own session's expiry. Also
// the old assignors alone and the registration's JSON.
#include <gtest/gtest.h>

#include "core/clients/consumer/zookeeper_consumer.h"
#include "core/zk/paths.h"
#include "tests/support/sim/client_test_util.h"

namespace ksim::sim::testing {
namespace {

constexpr int64_t kMessages = 40;

class OldConsumerTest : public ::testing::Test {
 protected:
  void Start(uint64_t seed, int32_t partitions) {
    run_ = std::make_unique<ClientSim>("old-consumer", seed);
    ASSERT_TRUE(run_->Start());
    ASSERT_TRUE(run_->CreateTopic("t", partitions, 3));
    partitions_ = partitions;
  }
  void Produce(int64_t messages) {
    ProducerClientOptions options{.id = "p" + std::to_string(++producers_), .topic = "t"};
    options.messages = messages;
    options.config = {{"acks", "all"}};
    ProducerClient& producer = run_->AddProducer(options);
    ASSERT_TRUE(run_->RunUntil([&] { return producer.done(); }, 60 * kSecondUs));
  }
  ConsumerClient& AddOld(const std::string& id, ConfigOverrides config = {},
                         CommitMode commit = CommitMode::kAuto) {
    ConsumerClientOptions options{.id = id, .topics = {"t"}, .group = "g"};
    options.kind = ConsumerKind::kZookeeper;
    options.commit = commit;
    options.config = std::move(config);
    options.config.emplace_back("auto.offset.reset", "smallest");
    options.start_ms = run_->world().Now() / kUsPerMs;
    return run_->AddConsumer(std::move(options));
  }
  ZooKeeperServer& zk() { return run_->cluster().zookeeper(); }
  std::vector<std::string> Owners(int32_t partition) {
    std::optional<ZnodeData> node =
        zk().Read(zk::ConsumerOwnerPath("g", "t", PartitionId(partition)));
    return node ? std::vector<std::string>{node->data} : std::vector<std::string>{};
  }
  int64_t DeliveredCount(const std::string& process = "") {
    int64_t count = 0;
    for (const auto& [at, times] : run_->Deliveries("g", process)) count += times;
    return count;
  }
  bool AllDelivered() { return DeliveredCount() >= kMessages; }

  std::unique_ptr<ClientSim> run_;
  int32_t partitions_ = 0;
  int producers_ = 0;
};

TEST_F(OldConsumerTest, RegistersInZooKeeperAndOwnsEveryPartitionAlone) {
  Start(1, 2);
  Produce(kMessages);
  ConsumerClient& c1 = AddOld("c1");
  ASSERT_TRUE(run_->RunUntil([&] { return AllDelivered(); }, 60 * kSecondUs));
  ZookeeperConsumer* consumer = c1.zookeeper_consumer();
  ASSERT_NE(consumer, nullptr);
  EXPECT_EQ(c1.consumer(), nullptr);  // not the group coordinator's consumer
  const std::string& id = consumer->consumer_id();
  EXPECT_TRUE(id.starts_with("g_c1-")) << id;
  // The registration: ephemeral, the subscription JSON.
  EXPECT_EQ(zk().Children(zk::ConsumerIdsPath("g")), std::vector<std::string>{id});
  std::optional<ZnodeData> registration = zk().Read(zk::ConsumerIdPath("g", id));
  ASSERT_TRUE(registration.has_value());
  EXPECT_NE(registration->stat.ephemeral_owner, kNoSession);
  Result<zk::ConsumerRegistration> decoded = zk::DecodeConsumerRegistration(registration->data);
  ASSERT_TRUE(decoded.ok()) << registration->data;
  EXPECT_EQ(decoded->subscription, (std::map<std::string, int32_t>{{"t", 1}}));
  EXPECT_EQ(decoded->pattern, "static");
  // It owns both partitions, as thread <id>-0.
  for (int32_t p = 0; p < 2; ++p) EXPECT_EQ(Owners(p), std::vector<std::string>{id + "-0"});
  EXPECT_EQ(c1.assignment().size(), 2u);
  EXPECT_EQ(DeliveredCount(), kMessages);
  // Nothing at the group coordinator: no offsets topic was ever needed.
  EXPECT_TRUE(zk().Children("/brokers/topics/__consumer_offsets").empty());
}

TEST_F(OldConsumerTest, RangeSplitsThePartitionsBetweenTwoMembers) {
  Start(2, 4);
  ConsumerClient& c1 = AddOld("c1");
  ConsumerClient& c2 = AddOld("c2");
  ASSERT_TRUE(run_->RunUntil(
      [&] { return c1.assignment().size() == 2 && c2.assignment().size() == 2; }, 30 * kSecondUs));
  // Range over the sorted consumer ids: the first takes partitions 0-1, the second 2-3.
  const bool c1_first =
      c1.zookeeper_consumer()->consumer_id() < c2.zookeeper_consumer()->consumer_id();
  ConsumerClient& first = c1_first ? c1 : c2;
  ConsumerClient& second = c1_first ? c2 : c1;
  EXPECT_EQ(first.assignment(),
            (std::vector<TopicPartition>{{"t", PartitionId(0)}, {"t", PartitionId(1)}}));
  EXPECT_EQ(second.assignment(),
            (std::vector<TopicPartition>{{"t", PartitionId(2)}, {"t", PartitionId(3)}}));
  EXPECT_EQ(Owners(2), std::vector<std::string>{second.zookeeper_consumer()->consumer_id() + "-0"});
  Produce(kMessages);
  ASSERT_TRUE(run_->RunUntil([&] { return AllDelivered(); }, 60 * kSecondUs));
  run_->cluster().RunFor(2 * kSecondUs);
  // Each record once, each partition from its owner only.
  for (const auto& [at, times] : run_->Deliveries("g")) EXPECT_EQ(times, 1);
  EXPECT_EQ(DeliveredCount(), kMessages);
  for (const auto& [at, times] : run_->Deliveries("g", first.id())) EXPECT_LT(at.first, 2);
  for (const auto& [at, times] : run_->Deliveries("g", second.id())) EXPECT_GE(at.first, 2);
}

TEST_F(OldConsumerTest, RebalancesWhenAMembersSessionEnds) {
  Start(3, 4);
  ConsumerClient& c1 = AddOld("c1");
  ConsumerClient& c2 = AddOld("c2");
  ASSERT_TRUE(run_->RunUntil(
      [&] { return c1.assignment().size() == 2 && c2.assignment().size() == 2; }, 30 * kSecondUs));
  ASSERT_TRUE(run_->world().CrashNode("c2").ok());
  const TimeUs crashed_us = run_->world().Now();
  // c2's ephemerals live until its session times out (zookeeper.session.timeout.ms 6000); then
  // the ids watch fires and c1 takes everything.
  ASSERT_TRUE(run_->RunUntil([&] { return c1.assignment().size() == 4; }, 30 * kSecondUs));
  EXPECT_GE(run_->world().Now() - crashed_us, 6 * kSecondUs);
  EXPECT_EQ(zk().Children(zk::ConsumerIdsPath("g")).size(), 1u);
  for (int32_t p = 0; p < 4; ++p) {
    EXPECT_EQ(Owners(p), std::vector<std::string>{c1.zookeeper_consumer()->consumer_id() + "-0"});
  }
  Produce(kMessages);
  ASSERT_TRUE(run_->RunUntil([&] { return AllDelivered(); }, 60 * kSecondUs));
  EXPECT_EQ(DeliveredCount("c1"), kMessages);
}

TEST_F(OldConsumerTest, CommitsOffsetsToZooKeeperAndResumesFromThem) {
  Start(4, 1);
  Produce(kMessages);
  ConsumerClient& c1 = AddOld("c1", {}, CommitMode::kAfterProcessing);
  ASSERT_TRUE(run_->RunUntil([&] { return AllDelivered(); }, 60 * kSecondUs));
  run_->cluster().RunFor(kSecondUs);
  std::optional<ZnodeData> offset = zk().Read(zk::ConsumerOffsetPath("g", "t", PartitionId(0)));
  ASSERT_TRUE(offset.has_value());
  EXPECT_EQ(offset->data, std::to_string(kMessages));
  EXPECT_EQ(offset->stat.ephemeral_owner, kNoSession);  // persistent
  // A new process starts from ZooKeeper's offset: only what came after is delivered.
  ASSERT_TRUE(run_->world().CrashNode("c1").ok());
  Produce(10);
  ASSERT_TRUE(run_->world().RestartNode("c1").ok());
  ASSERT_TRUE(run_->RunUntil([&] { return DeliveredCount() >= kMessages + 10; }, 60 * kSecondUs));
  run_->cluster().RunFor(2 * kSecondUs);
  EXPECT_EQ(DeliveredCount(), kMessages + 10);
  for (const auto& [at, times] : run_->Deliveries("g")) EXPECT_EQ(times, 1);
  EXPECT_EQ(c1.delivered(), kMessages + 10);
}

TEST_F(OldConsumerTest, AutoCommitWritesEveryIntervalOnlyWhatChanged) {
  Start(5, 1);
  Produce(kMessages);
  AddOld("c1", {{"auto.commit.interval.ms", "1000"}});
  ASSERT_TRUE(run_->RunUntil([&] { return AllDelivered(); }, 60 * kSecondUs));
  const std::string path = zk::ConsumerOffsetPath("g", "t", PartitionId(0));
  ASSERT_TRUE(run_->RunUntil([&] { return zk().Read(path).has_value(); }, 5 * kSecondUs));
  run_->cluster().RunFor(2 * kSecondUs);
  std::optional<ZnodeData> offset = zk().Read(path);
  ASSERT_TRUE(offset.has_value());
  EXPECT_EQ(offset->data, std::to_string(kMessages));
  const int32_t version = offset->stat.version;
  run_->cluster().RunFor(5 * kSecondUs);  // five more intervals, nothing new consumed
  EXPECT_EQ(zk().Read(path)->stat.version, version);
}

TEST_F(OldConsumerTest, AnOwnerNodeStillHeldMakesTheRebalanceRetryAfterTheBackoff) {
  Start(6, 1);
  // A previous owner that never released partition 0 (its node is persistent here: only a delete
  // frees it).
  const std::string owner = zk::ConsumerOwnerPath("g", "t", PartitionId(0));
  bool created = false;
  CreateWithParents(run_->cluster().admin(), owner, "g_old-0", CreateMode::kPersistent,
                    [&](Result<std::string> result) { created = result.ok(); });
  ASSERT_TRUE(run_->RunUntil([&] { return created; }, 5 * kSecondUs));
  Produce(kMessages);
  ConsumerClient& c1 = AddOld("c1");
  // Four attempts, rebalance.backoff.ms (2000) apart, then "can't rebalance after 4 retries".
  run_->cluster().RunFor(12 * kSecondUs);
  EXPECT_TRUE(c1.assignment().empty());
  EXPECT_EQ(DeliveredCount(), 0);
  EXPECT_EQ(Owners(0), std::vector<std::string>{"g_old-0"});
  // The owner goes; the next rebalance (a new member joins: the ids watch) claims it.
  bool deleted = false;
  run_->cluster().admin().Delete(owner, kAnyVersion, [&](Status s) { deleted = s.ok(); });
  ASSERT_TRUE(run_->RunUntil([&] { return deleted; }, 5 * kSecondUs));
  AddOld("c2");
  ASSERT_TRUE(run_->RunUntil([&] { return AllDelivered(); }, 60 * kSecondUs));
  Trace trace = run_->sim().FinishAndParse();
  std::vector<TimeUs> failed_at;
  for (const TraceEvent* e : Events(trace, ev::kRebalanceAttempt, "c1")) {
    if (e->fields["result"] == "owner_exists") failed_at.push_back(e->t_us);
  }
  ASSERT_EQ(failed_at.size(), 4u);
  for (size_t i = 1; i < failed_at.size(); ++i) {
    EXPECT_GE(failed_at[i] - failed_at[i - 1], 2 * kSecondUs);
  }
  const std::vector<const TraceEvent*> gave_up = Events(trace, ev::kRebalanceFailed, "c1");
  ASSERT_EQ(gave_up.size(), 1u);
  EXPECT_TRUE(gave_up[0]->fields["message"].get<std::string>().ends_with(
      "can't rebalance after 4 retries"));
  EXPECT_FALSE(Events(trace, ev::kConsumerRegistered, "c1").empty());
}

TEST_F(OldConsumerTest, ASessionExpiryRegistersAgainAndRedeliversWhatWasNotCommitted) {
  Start(7, 1);
  Produce(kMessages);
  ConsumerClient& c1 = AddOld("c1");  // auto commit every 60 s: nothing committed yet
  ASSERT_TRUE(run_->RunUntil([&] { return AllDelivered(); }, 30 * kSecondUs));
  const std::string id = c1.zookeeper_consumer()->consumer_id();
  const std::string registration = zk::ConsumerIdPath("g", id);
  const ZkSessionId first = zk().Read(registration)->stat.ephemeral_owner;
  ASSERT_TRUE(zk().ExpireSession(first).ok());
  // A new session, the same consumer id registered again, the partition owned again: from
  // auto.offset.reset, since ZooKeeper holds no offset (handleNewSession commits nothing).
  ASSERT_TRUE(run_->RunUntil(
      [&] {
        std::optional<ZnodeData> node = zk().Read(registration);
        return node && node->stat.ephemeral_owner != first && DeliveredCount() >= 2 * kMessages;
      },
      30 * kSecondUs));
  EXPECT_EQ(Owners(0), std::vector<std::string>{id + "-0"});
  for (const auto& [at, times] : run_->Deliveries("g")) EXPECT_EQ(times, 2);
}

// ---- Pure parts ------------------------------------------------------------------------------

TEST(OldConsumerAssignorTest, RangeGivesTheFirstConsumersTheExtraPartitions) {
  Result<std::map<std::string, std::vector<TopicPartition>>> assigned =
      AssignOldConsumers("range", {{"t", 5}}, {{"g_a", {"t"}}, {"g_b", {"t"}}});
  ASSERT_TRUE(assigned.ok());
  EXPECT_EQ(assigned->at("g_a").size(), 3u);
  EXPECT_EQ(assigned->at("g_b"),
            (std::vector<TopicPartition>{{"t", PartitionId(3)}, {"t", PartitionId(4)}}));
}

TEST(OldConsumerAssignorTest, RoundRobinDealsByJavaHashAndNeedsTheSameTopics) {
  Result<std::map<std::string, std::vector<TopicPartition>>> assigned =
      AssignOldConsumers("roundrobin", {{"t", 3}}, {{"g_a", {"t"}}, {"g_b", {"t"}}});
  ASSERT_TRUE(assigned.ok());
  // "[t,0]", "[t,1]", "[t,2]" hash in that order (Java: the last character differs by one).
  EXPECT_EQ(assigned->at("g_a"),
            (std::vector<TopicPartition>{{"t", PartitionId(0)}, {"t", PartitionId(2)}}));
  EXPECT_EQ(assigned->at("g_b"), (std::vector<TopicPartition>{{"t", PartitionId(1)}}));
  EXPECT_FALSE(
      AssignOldConsumers("roundrobin", {{"t", 1}, {"u", 1}}, {{"g_a", {"t"}}, {"g_b", {"t", "u"}}})
          .ok());
}

TEST(OldConsumerConfigTest, DefaultsAreKafka0100sAndGroupIdIsRequired) {
  Result<ZookeeperConsumerConfig> config = ParseZookeeperConsumerConfig({{"group.id", "g"}});
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->auto_commit_interval_ms, 60000);
  EXPECT_EQ(config->rebalance_max_retries, 4);
  EXPECT_EQ(config->rebalance_backoff_ms, 2000);
  EXPECT_EQ(config->auto_offset_reset, "largest");
  EXPECT_EQ(config->client_id, "g");
  EXPECT_FALSE(ParseZookeeperConsumerConfig({}).ok());
  EXPECT_FALSE(
      ParseZookeeperConsumerConfig({{"group.id", "g"}, {"auto.offset.reset", "earliest"}}).ok());
  Result<ZookeeperConsumerConfig> typo =
      ParseZookeeperConsumerConfig({{"group.id", "g"}, {"enable.auto.commit", "true"}});
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("auto.commit.enable"), std::string::npos)
      << typo.status().message();
}

TEST(OldConsumerPathsTest, RegistrationIsKafkasJson) {
  zk::ConsumerRegistration registration;
  registration.subscription = {{"frbook", 1}};
  registration.pattern = "white_list";
  registration.timestamp_ms = 1475066113563;
  const std::string json = zk::EncodeConsumerRegistration(registration);
  EXPECT_EQ(json, R"({"version":1,"subscription":{"frbook":1},"pattern":"white_list",)"
                  R"("timestamp":"1475066113563"})");
  Result<zk::ConsumerRegistration> decoded = zk::DecodeConsumerRegistration(json);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, registration);
  EXPECT_FALSE(zk::DecodeConsumerRegistration(R"({"version":1})").ok());
  EXPECT_EQ(zk::ConsumerOffsetPath("g", "t", PartitionId(3)), "/consumers/g/offsets/t/3");
  EXPECT_EQ(zk::ConsumerOwnerPath("g", "t", PartitionId(3)), "/consumers/g/owners/t/3");
}

}  // namespace
}  // namespace ksim::sim::testing
