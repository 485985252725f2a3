// The Consumer (core/clients/consumer/consumer.h) against a simulated cluster: a consumer node of
// its own (World node, SimTransport) reading what a ClusterClient produced. Manual assignment:
// reading from earliest in order and only below the HW, latest skipping what exists, a leader crash
// in the middle of a read, OFFSET_OUT_OF_RANGE after the log vanished under the position (topic
// recreated) or retention deleted it. Groups (the broker's group coordinator): partitions split
// among members without overlap, rebalances on join, death and Close, committed offsets resumed,
// auto commit, independent groups. The release's forms (docs/versions.md, "Consumer"): before
// 0.10.1 a member that does not poll for a session is removed; Close's auto commit is retried
// without bound before 0.10.2 and for min(30 s, request.timeout.ms) from 0.10.2.
#include "core/clients/consumer/consumer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/base/trace_names.h"
#include "core/server/replica_manager.h"
#include "sim/world/sim_transport.h"
#include "tests/support/core/release_param.h"
#include "tests/support/sim/cluster_test_util.h"

namespace ksim::sim::testing {
namespace {

const TopicPartition kT0{"t", PartitionId(0)};

// A consumer process on its own node, with a poll loop: Poll(100 ms), keep what comes, wait
// `processing_us`, poll again, until stopped.
class TestConsumer {
 public:
  TestConsumer(World& world, std::string name, ConfigOverrides settings,
               KafkaRelease release = kSeedKafkaRelease)
      : world_(world) {
    name_ = std::move(name);
    Result<Node*> node = world_.AddNode(name_);
    KSIM_CHECK(node.ok());
    node_ = *node;
    transport_ = std::make_unique<SimTransport>(world_.network(), name_);
    transport_->Attach();
    settings.insert(settings.begin(), {"bootstrap.servers", "broker-1,broker-2,broker-3"});
    settings.push_back({"client.id", name_});
    Result<ConsumerConfig> config = ParseConsumerConfig(settings, release);
    KSIM_CHECK_MSG(config.ok(), "bad consumer config in a test");
    EventSink sink = [this](std::string_view ev, const EventFields& fields) {
      world_.Trace(name_, ev, fields);
      events_.emplace_back(std::string(ev), fields.json());
    };
    consumer_ = std::make_unique<Consumer>(
        *config, ConsumerSeams{*transport_, *node_, node_->clock(), std::move(sink)});
  }

  Consumer& consumer() { return *consumer_; }
  const std::string& name() const { return name_; }

  void StartPolling(TimeUs processing_us = 0) {
    processing_us_ = processing_us;
    if (polling_) return;
    polling_ = true;
    PollOnce();
  }
  void StopPolling() { stop_ = true; }
  bool idle() const { return !polling_; }

  // The process dies: no Close, no LeaveGroup.
  void Kill() {
    KSIM_CHECK(world_.CrashNode(name_).ok());
    consumer_.reset();
  }
  void Close(bool* closed) {
    StopPolling();
    consumer_->Close([closed] { *closed = true; });
  }

  const std::vector<ConsumerRecord>& records() const { return records_; }
  std::vector<std::string> values() const {
    std::vector<std::string> out;
    for (const ConsumerRecord& r : records_) out.push_back(r.value);
    return out;
  }
  // The consumer's events and the offsets it got, for failure messages.
  std::string Dump() const {
    std::string out;
    for (const auto& [name, fields] : events_) out += name + " " + fields.dump() + "\n";
    out += "offsets:";
    for (const ConsumerRecord& r : records_)
      out += " " + ToString(r.tp) + "@" + std::to_string(r.offset.value());
    return out;
  }
  std::vector<nlohmann::ordered_json> Events(std::string_view ev) const {
    std::vector<nlohmann::ordered_json> out;
    for (const auto& [name, fields] : events_) {
      if (name == ev) out.push_back(fields);
    }
    return out;
  }

 private:
  void PollOnce() {
    if (stop_ || !consumer_) {
      polling_ = false;
      stop_ = false;
      return;
    }
    consumer_->Poll(100'000, [this](std::vector<ConsumerRecord> records) {
      for (ConsumerRecord& r : records) records_.push_back(std::move(r));
      node_->Schedule(processing_us_, [this] { PollOnce(); });
    });
  }

  World& world_;
  std::string name_;
  Node* node_ = nullptr;
  std::unique_ptr<SimTransport> transport_;
  std::unique_ptr<Consumer> consumer_;
  std::vector<std::pair<std::string, nlohmann::ordered_json>> events_;
  std::vector<ConsumerRecord> records_;
  bool polling_ = false;
  bool stop_ = false;
  TimeUs processing_us_ = 0;
};

std::vector<std::string> NumberedValues(int from, int to) {
  std::vector<std::string> out;
  for (int i = from; i < to; ++i) out.push_back("v-" + std::to_string(i));
  return out;
}

class ConsumerSimTest : public ::testing::Test {
 protected:
  void StartCluster(uint64_t seed, int32_t partitions, ConfigOverrides config = {},
                    std::map<std::string, std::string> topic_config = {},
                    KafkaRelease release = kSeedKafkaRelease) {
    release_ = release;
    ClusterOptions options;
    options.brokers = 3;
    options.kafka_version = release;
    options.config = std::move(config);
    sim_ = std::make_unique<ClusterSim>("consumer", seed, options);
    ASSERT_TRUE(sim_->Start());
    TopicSpec topic{"t", partitions, replication_factor_, assignment_, std::move(topic_config)};
    ASSERT_TRUE(cluster().CreateTopicAndWait(topic).ok());
    for (int32_t p = 0; p < partitions; ++p) {
      ASSERT_TRUE(sim_->WaitForLeader(TopicPartition{"t", PartitionId(p)}));
    }
    producer_ = &sim_->AddClient("p1");
  }
  Cluster& cluster() { return sim_->cluster(); }
  void Produce(const TopicPartition& tp, int32_t count, int16_t acks = -1) {
    ASSERT_TRUE(sim_->ProduceAndWait(*producer_, tp, acks, count));
  }
  TestConsumer& AddConsumer(std::string name, ConfigOverrides settings) {
    consumers_.push_back(std::make_unique<TestConsumer>(sim_->world(), std::move(name),
                                                        std::move(settings), release_));
    return *consumers_.back();
  }
  bool RunUntil(const std::function<bool()>& done, TimeUs max_us = 60 * kSecondUs) {
    return cluster().RunUntil(done, max_us);
  }

  std::unique_ptr<ClusterSim> sim_;
  KafkaRelease release_ = kSeedKafkaRelease;  // the brokers' and the consumers'
  int32_t replication_factor_ = 3;            // topic "t"'s
  zk::ReplicaAssignment assignment_;          // topic "t"'s (empty: spread over the brokers)
  ksim::testing::ClusterClient* producer_ = nullptr;
  std::vector<std::unique_ptr<TestConsumer>> consumers_;
};

// ---- Manual assignment ------------------------------------------------------------------

TEST_F(ConsumerSimTest, ManualAssignReadsEverythingFromEarliestInOrder) {
  StartCluster(11, 1);
  Produce(kT0, 50);
  TestConsumer& c = AddConsumer("c1", {{"auto.offset.reset", "earliest"}});
  c.consumer().Assign({kT0});
  c.StartPolling();
  ASSERT_TRUE(RunUntil([&] { return c.records().size() >= 50; }));
  cluster().RunFor(2 * kSecondUs);  // nothing more arrives
  EXPECT_EQ(c.values(), NumberedValues(0, 50));
  for (size_t i = 0; i < c.records().size(); ++i) {
    EXPECT_EQ(c.records()[i].offset, Offset(static_cast<int64_t>(i)));
    EXPECT_EQ(c.records()[i].tp, kT0);
  }
  EXPECT_EQ(c.consumer().positions().at(kT0), Offset(50));
  EXPECT_EQ(c.consumer().assignment(), std::vector<TopicPartition>{kT0});
  const std::vector<nlohmann::ordered_json> resets = c.Events("offset_reset");
  ASSERT_EQ(resets.size(), 1u);
  EXPECT_EQ(resets[0]["strategy"], "earliest");
  EXPECT_EQ(resets[0]["offset"], 0);
  EXPECT_EQ(resets[0]["from"], -1);
  EXPECT_TRUE(sim_->NoViolations());
}

TEST_F(ConsumerSimTest, ReadsOnlyBelowTheHighWatermark) {
  StartCluster(12, 1);
  Produce(kT0, 10);
  const BrokerId leader = cluster().LeaderOf(kT0);
  ASSERT_NE(leader, kNoBroker);
  // The followers cannot fetch: what the leader appends now stays above its HW.
  std::vector<std::string> leader_side = {node::Broker(leader), "zk", "p1", "c1"};
  std::vector<std::string> other_side;
  for (BrokerId id : cluster().broker_ids()) {
    if (id != leader) other_side.push_back(node::Broker(id));
  }
  TestConsumer& c = AddConsumer(
      "c1", {{"auto.offset.reset", "earliest"}, {"bootstrap.servers", node::Broker(leader)}});
  ASSERT_TRUE(cluster().Partition({leader_side, other_side}).ok());
  Produce(kT0, 5, /*acks=*/1);
  const ksim::Partition* partition = cluster().broker(leader)->GetPartition(kT0);
  ASSERT_EQ(partition->log_end_offset(), Offset(15));
  ASSERT_EQ(partition->high_watermark(), Offset(10));
  c.consumer().Assign({kT0});
  c.StartPolling();
  ASSERT_TRUE(RunUntil([&] { return c.records().size() >= 10; }));
  cluster().RunFor(2 * kSecondUs);
  ASSERT_EQ(partition->high_watermark(), Offset(10));
  EXPECT_EQ(c.values(), NumberedValues(0, 10));
  // Once the followers catch up the HW moves and the rest comes.
  cluster().Heal();
  ASSERT_TRUE(RunUntil([&] { return c.records().size() >= 15; }));
  EXPECT_EQ(c.values(), NumberedValues(0, 15));
}

TEST_F(ConsumerSimTest, LatestSkipsExistingRecords) {
  StartCluster(13, 1);
  Produce(kT0, 10);
  TestConsumer& c = AddConsumer("c1", {{"auto.offset.reset", "latest"}});
  c.consumer().Assign({kT0});
  c.StartPolling();
  ASSERT_TRUE(RunUntil([&] { return c.consumer().positions().count(kT0) > 0; }));
  EXPECT_EQ(c.consumer().positions().at(kT0), Offset(10));
  Produce(kT0, 5);
  ASSERT_TRUE(RunUntil([&] { return c.records().size() >= 5; }));
  cluster().RunFor(kSecondUs);
  EXPECT_EQ(c.values(), NumberedValues(10, 15));
  const std::vector<nlohmann::ordered_json> resets = c.Events("offset_reset");
  ASSERT_EQ(resets.size(), 1u);
  EXPECT_EQ(resets[0]["strategy"], "latest");
  EXPECT_EQ(resets[0]["offset"], 10);
}

TEST_F(ConsumerSimTest, LeaderCrashMidReadContinuesWithoutLossOrDuplicate) {
  StartCluster(14, 1);
  Produce(kT0, 30);
  TestConsumer& c = AddConsumer("c1", {{"auto.offset.reset", "earliest"},
                                       {"max.poll.records", "3"},
                                       {"max.partition.fetch.bytes", "1"}});
  c.consumer().Assign({kT0});
  c.StartPolling(/*processing_us=*/50'000);
  ASSERT_TRUE(RunUntil([&] { return c.records().size() >= 10; }));
  const BrokerId old_leader = cluster().LeaderOf(kT0);
  ASSERT_TRUE(cluster().CrashBroker(old_leader).ok());
  ASSERT_TRUE(sim_->WaitForLeader(kT0, old_leader));
  Produce(kT0, 30);
  ASSERT_TRUE(RunUntil([&] { return c.records().size() >= 60; }, 120 * kSecondUs));
  cluster().RunFor(2 * kSecondUs);
  EXPECT_EQ(c.values(), NumberedValues(0, 60));
  for (size_t i = 0; i < c.records().size(); ++i) {
    EXPECT_EQ(c.records()[i].offset, Offset(static_cast<int64_t>(i)));
  }
  // It noticed: a fetch failed on the old leader, then it followed the new one.
  EXPECT_FALSE(c.Events("fetch_error").empty());
  EXPECT_TRUE(sim_->NoViolations());
}

TEST_F(ConsumerSimTest, PositionBeyondTheLogEndResetsWhenTheTopicIsRecreated) {
  StartCluster(15, 1, {{"delete.topic.enable", "true"}});
  Produce(kT0, 10);
  TestConsumer& c = AddConsumer("c1", {{"auto.offset.reset", "earliest"}});
  c.consumer().Assign({kT0});
  c.StartPolling();
  ASSERT_TRUE(RunUntil([&] { return c.records().size() >= 10; }));
  // The log goes away under the consumer's position 10 and starts over at 0.
  std::optional<Result<std::string>> deleted;
  cluster().topic_admin().DeleteTopic("t", [&](Result<std::string> r) { deleted = std::move(r); });
  ASSERT_TRUE(RunUntil(
      [&] { return deleted.has_value() && !cluster().zookeeper().Read("/brokers/topics/t"); }));
  ASSERT_TRUE(deleted->ok()) << deleted->status().ToString();
  cluster().RunFor(5 * kSecondUs);
  ASSERT_TRUE(cluster().CreateTopicAndWait(TopicSpec{"t", 1, 3, {}, {}}).ok());
  ASSERT_TRUE(sim_->WaitForLeader(kT0));
  Produce(kT0, 3);
  ASSERT_TRUE(RunUntil([&] { return c.records().size() >= 13; }));
  cluster().RunFor(kSecondUs);
  ASSERT_EQ(c.records().size(), 13u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(c.records()[10 + i].offset, Offset(i));
    EXPECT_EQ(c.records()[10 + i].value, "v-" + std::to_string(10 + i));
  }
  const std::vector<nlohmann::ordered_json> resets = c.Events("offset_reset");
  ASSERT_EQ(resets.size(), 2u);
  EXPECT_EQ(resets[1]["from"], 10);
  EXPECT_EQ(resets[1]["offset"], 0);
  EXPECT_EQ(resets[1]["strategy"], "earliest");
}

TEST_F(ConsumerSimTest, PositionBelowTheLogStartResetsAfterRetention) {
  // One batch per segment; segments older than 1 s deleted every 500 ms.
  StartCluster(16, 1, {{"log.retention.check.interval.ms", "500"}},
               {{"segment.bytes", "100"}, {"retention.ms", "1000"}});
  Produce(kT0, 20);
  TestConsumer& c = AddConsumer("c1", {{"auto.offset.reset", "earliest"},
                                       {"max.partition.fetch.bytes", "1"},
                                       {"max.poll.records", "1"}});
  c.consumer().Assign({kT0});
  c.StartPolling();
  ASSERT_TRUE(RunUntil([&] { return c.records().size() >= 3; }));
  c.StopPolling();
  ASSERT_TRUE(RunUntil([&] { return c.idle(); }));
  const size_t read = c.records().size();
  // Retention removes everything but the active segment meanwhile.
  const BrokerId leader = cluster().LeaderOf(kT0);
  ASSERT_TRUE(RunUntil([&] {
    return cluster().broker(leader)->GetPartition(kT0)->log_start_offset() >= Offset(19);
  }));
  const Offset log_start = cluster().broker(leader)->GetPartition(kT0)->log_start_offset();
  c.StartPolling();
  ASSERT_TRUE(RunUntil([&] { return c.Events("offset_reset").size() >= 2; })) << c.Dump();
  const std::vector<nlohmann::ordered_json> resets = c.Events("offset_reset");
  ASSERT_EQ(resets.size(), 2u);
  // From the next offset it had not fetched yet to the log start.
  EXPECT_GT(resets[1]["from"].get<int64_t>(), static_cast<int64_t>(read) - 1);
  EXPECT_EQ(resets[1]["offset"], log_start.value());
  EXPECT_EQ(resets[1]["strategy"], "earliest");
  // What it had buffered came out; nothing between that and the log start did.
  Produce(kT0, 2);
  ASSERT_TRUE(RunUntil([&] { return c.records().back().value == "v-21"; })) << c.Dump();
  const int64_t from = resets[1]["from"].get<int64_t>();
  ASSERT_EQ(c.records().size(), static_cast<size_t>(from) + (20 - log_start.value()) + 2)
      << c.Dump();
  for (int64_t i = 0; i < from; ++i) EXPECT_EQ(c.records()[i].offset, Offset(i));
}

TEST_F(ConsumerSimTest, ResetNoneReportsOutOfRange) {
  StartCluster(17, 1);
  Produce(kT0, 3);
  TestConsumer& c = AddConsumer("c1", {{"auto.offset.reset", "none"}});
  c.consumer().Assign({kT0});
  c.StartPolling();
  ASSERT_TRUE(RunUntil([&] { return !c.Events("fetch_error").empty(); })) << c.Dump();
  cluster().RunFor(kSecondUs);
  EXPECT_TRUE(c.records().empty());
  EXPECT_TRUE(c.consumer().positions().empty());
  EXPECT_EQ(c.Events("fetch_error")[0]["error"], "OFFSET_OUT_OF_RANGE");
}

// ---- Groups --------------------------------------------------------------------------

std::set<std::string> ValueSet(const TestConsumer& c) {
  std::set<std::string> out;
  for (const ConsumerRecord& r : c.records()) out.insert(r.value);
  return out;
}

std::set<TopicPartition> PartitionsRead(const TestConsumer& c) {
  std::set<TopicPartition> out;
  for (const ConsumerRecord& r : c.records()) out.insert(r.tp);
  return out;
}

const std::vector<TopicPartition> kAll = {
    {"t", PartitionId(0)}, {"t", PartitionId(1)}, {"t", PartitionId(2)}};

class ConsumerGroupTest : public ConsumerSimTest {
 protected:
  void ProduceToAll(int32_t per_partition) {
    for (const TopicPartition& tp : kAll) Produce(tp, per_partition);
  }
  TestConsumer& Member(std::string name, std::string group, ConfigOverrides extra = {}) {
    ConfigOverrides settings = {{"group.id", std::move(group)}, {"auto.offset.reset", "earliest"}};
    for (auto& setting : extra) settings.push_back(std::move(setting));
    TestConsumer& c = AddConsumer(std::move(name), std::move(settings));
    return c;
  }
  // Every consumer has a stable assignment and together they hold each partition exactly once.
  bool Balanced(const std::vector<TestConsumer*>& members) {
    std::vector<TopicPartition> all;
    for (TestConsumer* c : members) {
      if (c->consumer().generation() < 0) return false;
      for (const TopicPartition& tp : c->consumer().assignment()) all.push_back(tp);
    }
    std::sort(all.begin(), all.end());
    return all == kAll;
  }
  std::vector<size_t> Sizes(const std::vector<TestConsumer*>& members) {
    std::vector<size_t> sizes;
    for (TestConsumer* c : members) sizes.push_back(c->consumer().assignment().size());
    std::sort(sizes.begin(), sizes.end());
    return sizes;
  }
};

TEST_F(ConsumerGroupTest, OneSubscriberGetsEveryPartition) {
  StartCluster(21, 3);
  ProduceToAll(10);
  TestConsumer& c = Member("c1", "g1");
  c.consumer().Subscribe({"t"});
  c.StartPolling();
  ASSERT_TRUE(RunUntil([&] { return c.records().size() >= 30; }));
  cluster().RunFor(kSecondUs);
  EXPECT_EQ(c.consumer().assignment(), kAll);
  EXPECT_EQ(c.records().size(), 30u);
  EXPECT_EQ(ValueSet(c).size(), 30u);
  ASSERT_FALSE(c.Events("coordinator_found").empty());
  const std::vector<nlohmann::ordered_json> joined = c.Events("group_joined");
  ASSERT_FALSE(joined.empty());
  EXPECT_EQ(joined.back()["leader"], joined.back()["member_id"]);
  EXPECT_EQ(joined.back()["protocol"], "range");
  EXPECT_EQ(c.consumer().member_id(), joined.back()["member_id"].get<std::string>());
}

TEST_F(ConsumerGroupTest, TwoMembersSplitThreePartitionsTwoAndOne) {
  StartCluster(22, 3);
  TestConsumer& c1 = Member("c1", "g1");
  TestConsumer& c2 = Member("c2", "g1");
  c1.consumer().Subscribe({"t"});
  c2.consumer().Subscribe({"t"});
  c1.StartPolling();
  c2.StartPolling();
  ASSERT_TRUE(RunUntil([&] { return Balanced({&c1, &c2}); }));
  EXPECT_EQ(Sizes({&c1, &c2}), (std::vector<size_t>{1, 2}));
  EXPECT_EQ(c1.consumer().generation(), c2.consumer().generation());
  ProduceToAll(10);
  ASSERT_TRUE(RunUntil([&] { return c1.records().size() + c2.records().size() >= 30; }));
  cluster().RunFor(kSecondUs);
  // Each partition went to one member only; together they saw every record once.
  for (const TopicPartition& tp : PartitionsRead(c1)) EXPECT_EQ(PartitionsRead(c2).count(tp), 0u);
  std::set<std::string> all = ValueSet(c1);
  for (const std::string& v : ValueSet(c2)) all.insert(v);
  EXPECT_EQ(all.size(), 30u);
  EXPECT_EQ(c1.records().size() + c2.records().size(), 30u);
}

TEST_F(ConsumerGroupTest, JoiningMembersRebalanceAndAFourthOnThreePartitionsIsIdle) {
  StartCluster(23, 3);
  std::vector<TestConsumer*> members;
  for (int i = 1; i <= 2; ++i) {
    members.push_back(&Member("c" + std::to_string(i), "g1"));
    members.back()->consumer().Subscribe({"t"});
    members.back()->StartPolling();
  }
  ASSERT_TRUE(RunUntil([&] { return Balanced(members); }));
  const int32_t first_generation = members[0]->consumer().generation();
  for (int i = 3; i <= 4; ++i) {
    members.push_back(&Member("c" + std::to_string(i), "g1"));
    members.back()->consumer().Subscribe({"t"});
    members.back()->StartPolling();
  }
  ASSERT_TRUE(RunUntil([&] {
    if (!Balanced(members)) return false;
    for (TestConsumer* c : members) {
      if (c->consumer().generation() != members[3]->consumer().generation()) return false;
    }
    return true;
  }));
  EXPECT_GT(members[0]->consumer().generation(), first_generation);
  EXPECT_EQ(Sizes(members), (std::vector<size_t>{0, 1, 1, 1}));
  // The earlier members were told what they lost.
  EXPECT_FALSE(members[0]->Events("partitions_revoked").empty());
}

TEST_F(ConsumerGroupTest, CommittedOffsetIsWhereTheNextMemberResumes) {
  StartCluster(24, 1);
  Produce(kT0, 10);
  TestConsumer& c1 = Member("c1", "g1", {{"enable.auto.commit", "false"}});
  c1.consumer().Subscribe({"t"});
  c1.StartPolling();
  ASSERT_TRUE(RunUntil([&] { return c1.records().size() >= 10; }));
  c1.StopPolling();
  ASSERT_TRUE(RunUntil([&] { return c1.idle(); }));
  std::optional<Status> committed;
  c1.consumer().Commit({}, [&](Status s) { committed = s; });
  ASSERT_TRUE(RunUntil([&] { return committed.has_value(); }));
  ASSERT_TRUE(committed->ok()) << committed->ToString();
  const std::vector<nlohmann::ordered_json> commits = c1.Events("offset_commit");
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_EQ(commits[0]["offset"], 10);
  EXPECT_EQ(commits[0]["error"], "NONE");
  bool closed = false;
  c1.Close(&closed);
  ASSERT_TRUE(RunUntil([&] { return closed; }));

  Produce(kT0, 5);
  TestConsumer& c2 = Member("c2", "g1");
  c2.consumer().Subscribe({"t"});
  c2.StartPolling();
  ASSERT_TRUE(RunUntil([&] { return c2.records().size() >= 5; }));
  cluster().RunFor(kSecondUs);
  EXPECT_EQ(c2.values(), NumberedValues(10, 15));
  const std::vector<nlohmann::ordered_json> fetched = c2.Events("offset_fetched");
  ASSERT_FALSE(fetched.empty());
  EXPECT_EQ(fetched[0]["offset"], 10);
  EXPECT_TRUE(c2.Events("offset_reset").empty());
}

TEST_F(ConsumerGroupTest, AutoCommitCommitsPositionsAfterTheInterval) {
  StartCluster(25, 1);
  Produce(kT0, 10);
  TestConsumer& c1 = Member("c1", "g1", {{"auto.commit.interval.ms", "1000"}});
  c1.consumer().Subscribe({"t"});
  c1.StartPolling();
  ASSERT_TRUE(RunUntil([&] { return c1.records().size() >= 10; }));
  ASSERT_TRUE(RunUntil([&] {
    for (const nlohmann::ordered_json& e : c1.Events("offset_commit")) {
      if (e["offset"] == 10 && e["error"] == "NONE") return true;
    }
    return false;
  }));
  // The process dies without committing anything else: a new member resumes at 10.
  c1.Kill();
  Produce(kT0, 2);
  TestConsumer& c2 = Member("c2", "g1");
  c2.consumer().Subscribe({"t"});
  c2.StartPolling();
  ASSERT_TRUE(RunUntil([&] { return c2.records().size() >= 2; }, 120 * kSecondUs));
  cluster().RunFor(kSecondUs);
  EXPECT_EQ(c2.values(), NumberedValues(10, 12));
}

TEST_F(ConsumerGroupTest, DeadMemberLosesItsPartitionsAfterTheSessionTimeout) {
  StartCluster(26, 3);
  ConfigOverrides session = {{"session.timeout.ms", "6000"}, {"heartbeat.interval.ms", "2000"}};
  TestConsumer& c1 = Member("c1", "g1", session);
  TestConsumer& c2 = Member("c2", "g1", session);
  c1.consumer().Subscribe({"t"});
  c2.consumer().Subscribe({"t"});
  c1.StartPolling();
  c2.StartPolling();
  ASSERT_TRUE(RunUntil([&] { return Balanced({&c1, &c2}); }));
  const size_t before = c1.consumer().assignment().size();
  c2.Kill();
  // Within the session timeout nothing moves; after it c1 holds everything.
  cluster().RunFor(3 * kSecondUs);
  EXPECT_EQ(c1.consumer().assignment().size(), before);
  ASSERT_TRUE(RunUntil([&] { return Balanced({&c1}); }));
  ProduceToAll(3);
  ASSERT_TRUE(RunUntil([&] { return ValueSet(c1).size() >= 9; }));
}

TEST_F(ConsumerGroupTest, CloseLeavesTheGroupAndRebalancesAtOnce) {
  StartCluster(27, 3);
  // A long session: only LeaveGroup can explain a quick rebalance.
  // group.max.session.timeout.ms allows 30 s.
  ConfigOverrides session = {{"session.timeout.ms", "30000"}, {"heartbeat.interval.ms", "3000"}};
  TestConsumer& c1 = Member("c1", "g1", session);
  TestConsumer& c2 = Member("c2", "g1", session);
  c1.consumer().Subscribe({"t"});
  c2.consumer().Subscribe({"t"});
  c1.StartPolling();
  c2.StartPolling();
  ASSERT_TRUE(RunUntil([&] { return Balanced({&c1, &c2}); })) << c1.Dump() << "\n" << c2.Dump();
  bool closed = false;
  c2.Close(&closed);
  ASSERT_TRUE(RunUntil([&] { return closed; }, 10 * kSecondUs));
  // c1 hears REBALANCE_IN_PROGRESS at its next heartbeat and rejoins: well before 30 s.
  EXPECT_TRUE(RunUntil([&] { return Balanced({&c1}); }, 10 * kSecondUs)) << c1.Dump();
}

TEST_F(ConsumerGroupTest, TwoGroupsEachSeeEveryRecord) {
  StartCluster(28, 3);
  ProduceToAll(10);
  TestConsumer& a = Member("a1", "ga");
  TestConsumer& b = Member("b1", "gb");
  a.consumer().Subscribe({"t"});
  b.consumer().Subscribe({"t"});
  a.StartPolling();
  b.StartPolling();
  ASSERT_TRUE(RunUntil([&] { return a.records().size() >= 30 && b.records().size() >= 30; }));
  cluster().RunFor(kSecondUs);
  EXPECT_EQ(ValueSet(a), ValueSet(b));
  EXPECT_EQ(ValueSet(a).size(), 30u);
  EXPECT_EQ(a.records().size(), 30u);
  EXPECT_EQ(b.records().size(), 30u);
}

TEST_F(ConsumerGroupTest, CrashBeforeCommittingRedeliversTheUncommittedRecords) {
  StartCluster(29, 1);
  Produce(kT0, 10);
  TestConsumer& c1 = Member("c1", "g1", {{"enable.auto.commit", "false"}});
  c1.consumer().Subscribe({"t"});
  c1.StartPolling();
  ASSERT_TRUE(RunUntil([&] { return c1.records().size() >= 10; }));
  // Processed 10, committed only the first 5 (commit after processing, crash before the rest).
  std::optional<Status> committed;
  c1.consumer().Commit({{kT0, Offset(5)}}, [&](Status s) { committed = s; });
  ASSERT_TRUE(RunUntil([&] { return committed.has_value(); }));
  ASSERT_TRUE(committed->ok()) << committed->ToString();
  c1.Kill();
  TestConsumer& c2 = Member("c2", "g1");
  c2.consumer().Subscribe({"t"});
  c2.StartPolling();
  ASSERT_TRUE(RunUntil([&] { return c2.records().size() >= 5; }, 120 * kSecondUs)) << c2.Dump();
  cluster().RunFor(kSecondUs);
  EXPECT_EQ(c2.values(), NumberedValues(5, 10));  // delivered a second time
}

// ---- The release's forms ----------------------------------------------------------------

// One member with a 10 s session that, once it has its records, spends 20 s between polls.
// Returns how often it joined the group in the 50 s after.
class SlowMemberTest : public ConsumerGroupTest {
 protected:
  TestConsumer& RunSlowMember(KafkaRelease release) {
    StartCluster(41, 1, {}, {}, release);
    Produce(kT0, 5);
    TestConsumer& c =
        Member("c1", "g1", {{"session.timeout.ms", "10000"}, {"heartbeat.interval.ms", "3000"}});
    c.consumer().Subscribe({"t"});
    c.StartPolling();
    EXPECT_TRUE(RunUntil([&] { return c.records().size() >= 5; })) << c.Dump();
    EXPECT_EQ(c.Events("group_joined").size(), 1u) << c.Dump();
    c.StartPolling(20 * kSecondUs);  // from the next poll on
    cluster().RunFor(50 * kSecondUs);
    return c;
  }
  static size_t SessionTimeouts(const TestConsumer& c) {
    size_t n = 0;
    for (const nlohmann::ordered_json& e : c.Events("coordinator_unknown")) {
      if (e["reason"] == "session_timeout") ++n;
    }
    return n;
  }
};

// 0.10.0: heartbeats are sent only from poll(); 20 s without one is a dead member to the
// coordinator. At its next poll the consumer finds its session expired, hears UNKNOWN_MEMBER_ID
// and joins again as a new member, at every slow poll.
TEST_F(SlowMemberTest, MemberThatDoesNotPollForASessionIsRemovedAt0100) {
  TestConsumer& c = RunSlowMember(KafkaRelease::k0_10_0);
  EXPECT_GE(c.Events("group_joined").size(), 2u) << c.Dump();
  EXPECT_GE(SessionTimeouts(c), 1u) << c.Dump();
  EXPECT_GT(c.consumer().generation(), 1) << c.Dump();
}

// 0.10.1 (KIP-62): the background heartbeat keeps the session; only max.poll.interval.ms (300 s)
// bounds the time between polls.
TEST_F(SlowMemberTest, MemberThatDoesNotPollForASessionStaysFrom0101) {
  TestConsumer& c = RunSlowMember(KafkaRelease::k0_10_1);
  EXPECT_EQ(c.Events("group_joined").size(), 1u) << c.Dump();
  EXPECT_EQ(SessionTimeouts(c), 0u) << c.Dump();
  EXPECT_EQ(c.consumer().generation(), 1) << c.Dump();
}

// Close with auto commit while the group's only offsets replica is stopped for 60 s.
class CloseCommitTest : public ConsumerGroupTest {
 protected:
  struct Outcome {
    std::optional<TimeUs> closed_after_us;  // from Close
    std::vector<nlohmann::ordered_json> commits;
  };
  Outcome CloseWhileTheCoordinatorIsDown(KafkaRelease release) {
    StartCluster(42, 1, {{"offsets.topic.replication.factor", "1"}}, {}, release);
    Produce(kT0, 10);
    // No periodic commit: only Close's.
    TestConsumer& c = Member("c1", "g1", {{"auto.commit.interval.ms", "600000"}});
    c.consumer().Subscribe({"t"});
    c.StartPolling();
    EXPECT_TRUE(RunUntil([&] { return c.records().size() >= 10; })) << c.Dump();
    c.StopPolling();
    EXPECT_TRUE(RunUntil([&] { return c.idle(); }));
    const std::vector<nlohmann::ordered_json> found = c.Events("coordinator_found");
    EXPECT_FALSE(found.empty());
    const BrokerId coordinator(found.back()["broker"].get<int32_t>());
    // A clean stop: the group's metadata survives it (a crash may lose it unsynced).
    bool down = false;
    EXPECT_TRUE(cluster().ShutdownBroker(coordinator, [&] { down = true; }).ok());
    EXPECT_TRUE(RunUntil([&] { return down; }));
    const TimeUs start = sim_->world().loop().Now();
    bool closed = false;
    Outcome outcome;
    c.consumer().Close([&] {
      closed = true;
      outcome.closed_after_us = sim_->world().loop().Now() - start;
    });
    cluster().RunFor(60 * kSecondUs);
    EXPECT_TRUE(cluster().RestartBroker(coordinator).ok());
    RunUntil([&] { return closed; }, 60 * kSecondUs);
    outcome.commits = c.Events("offset_commit");
    return outcome;
  }
};

// 0.10.0.1 ConsumerCoordinator.close -> maybeAutoCommitOffsetsSync -> commitOffsetsSync: `while
// (true)` while the error is retriable. Close waits for the coordinator's return and commits.
TEST_F(CloseCommitTest, CloseCommitIsRetriedWithoutBoundAt0100) {
  const Outcome outcome = CloseWhileTheCoordinatorIsDown(KafkaRelease::k0_10_0);
  ASSERT_TRUE(outcome.closed_after_us.has_value());
  EXPECT_GT(*outcome.closed_after_us, 60 * kSecondUs);
  ASSERT_EQ(outcome.commits.size(), 1u);
  EXPECT_EQ(outcome.commits[0]["offset"], 10);
  EXPECT_EQ(outcome.commits[0]["error"], "NONE");
}

// 0.10.2 on (KIP-102): close() gives the commit min(30 s, request.timeout.ms) and then leaves
// without it.
TEST_F(CloseCommitTest, CloseCommitGivesUpAfter30SecondsFrom0102) {
  const Outcome outcome = CloseWhileTheCoordinatorIsDown(KafkaRelease::k2_0);
  ASSERT_TRUE(outcome.closed_after_us.has_value());
  EXPECT_GE(*outcome.closed_after_us, 30 * kSecondUs);
  EXPECT_LT(*outcome.closed_after_us, 32 * kSecondUs);
  for (const nlohmann::ordered_json& commit : outcome.commits) EXPECT_NE(commit["error"], "NONE");
}

// Two partitions led by one broker: a record arrives in one, the consumer hands it out and the
// next fetch names that partition again (Kafka's poll drains, then sends the next fetches), so a
// second record there arrives at once, not after the other partition's fetch has waited its
// fetch.max.wait.ms (500 ms).
TEST_F(ConsumerSimTest, ThePartitionAPollDrainedIsInTheNextFetch) {
  const TopicPartition t1{"t", PartitionId(1)};
  replication_factor_ = 1;
  assignment_ = {{PartitionId(0), {BrokerId(1)}}, {PartitionId(1), {BrokerId(1)}}};
  StartCluster(17, 2);
  TestConsumer& c = AddConsumer("c1", {{"auto.offset.reset", "earliest"}});
  c.consumer().Assign({kT0, t1});
  c.StartPolling();
  ASSERT_TRUE(RunUntil([&] { return c.consumer().positions().size() == 2; }));
  cluster().RunFor(kSecondUs);
  Produce(kT0, 1);
  ASSERT_TRUE(RunUntil([&] { return c.records().size() == 1; }));
  const TimeUs produced = sim_->world().Now();
  Produce(kT0, 1);
  ASSERT_TRUE(RunUntil([&] { return c.records().size() == 2; }));
  EXPECT_LT(sim_->world().Now() - produced, 100 * kUsPerMs) << c.Dump();
}

// A poll hands out what is buffered partitions in turn, starting one partition further each time
// (none starves): with max.poll.records=1 and records buffered in all three partitions, each
// poll takes the next partition in partition order. Two of them are led by broker 1 and one by
// broker 2; the records were all written before the consumer starts.
TEST_F(ConsumerSimTest, PollsTakeTheBufferedPartitionsInTurn) {
  const TopicPartition t1{"t", PartitionId(1)};
  const TopicPartition t2{"t", PartitionId(2)};
  replication_factor_ = 1;
  assignment_ = {{PartitionId(0), {BrokerId(1)}},
                 {PartitionId(1), {BrokerId(2)}},
                 {PartitionId(2), {BrokerId(1)}}};
  StartCluster(18, 3);
  for (const TopicPartition& tp : {kT0, t1, t2}) Produce(tp, 10);
  TestConsumer& c =
      AddConsumer("c1", {{"auto.offset.reset", "earliest"}, {"max.poll.records", "1"}});
  c.consumer().Assign({kT0, t1, t2});
  c.StartPolling(/*processing_us=*/10 * kUsPerMs);
  ASSERT_TRUE(RunUntil([&] { return c.records().size() >= 30; })) << c.Dump();
  // The longest run of records each from the partition after the one before (2 -> 0 included).
  size_t longest = 1;
  size_t run = 1;
  for (size_t i = 1; i < c.records().size(); ++i) {
    const int32_t before = c.records()[i - 1].tp.partition.value();
    run = c.records()[i].tp.partition.value() == (before + 1) % 3 ? run + 1 : 1;
    longest = std::max(longest, run);
  }
  // Every partition keeps records until it has handed out most of its ten: at least seven
  // rounds of three once all three are buffered.
  EXPECT_GE(longest, 21u) << c.Dump();
  std::map<TopicPartition, int64_t> next;
  for (const ConsumerRecord& r : c.records()) EXPECT_EQ(r.offset.value(), next[r.tp]++);
  EXPECT_EQ(next, (std::map<TopicPartition, int64_t>{{kT0, 10}, {t1, 10}, {t2, 10}}));
}

// ---- Fetch sessions (KIP-227) -----------------------------------------------------------

// A consumer of 12 partitions spread over 3 brokers, one replica each (no follower reads them):
// from 1.1 its fetches belong to a session with each leader, and once it has read everything the
// leaders read none of its partitions while it waits (each is quiet in its session), where before
// 1.1 every fetch reads all of them. Records in a quiet partition still reach it at once (the
// parked fetch wakes), and a leader that restarts, knowing no session, makes it start over
// (FETCH_SESSION_ID_NOT_FOUND) and go on reading.
class ConsumerSessionTest : public ConsumerSimTest,
                            public ::testing::WithParamInterface<KafkaRelease> {};

TEST_P(ConsumerSessionTest, AnIdleConsumersFetchesReadNothingFrom11) {
  constexpr int32_t kPartitions = 12;
  const bool sessions = GetParam() >= KafkaRelease::k1_1;
  replication_factor_ = 1;
  StartCluster(15, kPartitions, {}, {}, GetParam());
  std::vector<TopicPartition> all;
  for (int32_t p = 0; p < kPartitions; ++p) {
    all.push_back(TopicPartition{"t", PartitionId(p)});
    Produce(all.back(), 2);
  }
  TestConsumer& c = AddConsumer("c1", {{"auto.offset.reset", "earliest"}});
  c.consumer().Assign(all);
  c.StartPolling();
  ASSERT_TRUE(RunUntil([&] { return c.records().size() >= 2 * kPartitions; })) << c.Dump();
  cluster().RunFor(2 * kSecondUs);

  auto reads = [&] {
    uint64_t total = 0;
    for (BrokerId id : cluster().broker_ids()) {
      total += cluster().broker(id)->replica_manager().fetch_partition_reads();
    }
    return total;
  };
  const uint64_t reads_before = reads();
  cluster().RunFor(10 * kSecondUs);  // fetch.max.wait.ms 500: about 20 fetches to each broker
  const uint64_t idle_reads = reads() - reads_before;
  if (sessions) {
    EXPECT_EQ(idle_reads, 0u);
  } else {
    EXPECT_GE(idle_reads, 10u * kPartitions);
  }

  // New records in quiet partitions arrive long before a fetch's 500 ms wait is up.
  const TopicPartition t3 = all[3];
  const TopicPartition t8 = all[8];
  Produce(t3, 1);
  Produce(t8, 1);
  const TimeUs produced = sim_->world().Now();
  ASSERT_TRUE(RunUntil([&] { return c.records().size() >= 2 * kPartitions + 2; }));
  EXPECT_LT(sim_->world().Now() - produced, 300 * kUsPerMs);
  EXPECT_EQ(c.consumer().positions().at(t3), Offset(3));
  EXPECT_EQ(c.consumer().positions().at(t8), Offset(3));

  // The leader of t3 stops cleanly and starts again: the fetch in flight fails, and the next one
  // opens a session with the new process.
  const BrokerId leader = cluster().LeaderOf(t3);
  bool down = false;
  ASSERT_TRUE(cluster().ShutdownBroker(leader, [&] { down = true; }).ok());
  ASSERT_TRUE(RunUntil([&] { return down; }));
  ASSERT_TRUE(cluster().RestartBroker(leader).ok());
  ASSERT_TRUE(sim_->WaitForLeader(t3));
  Produce(t3, 2);
  ASSERT_TRUE(RunUntil([&] { return c.consumer().positions().at(t3) == Offset(5); })) << c.Dump();
  EXPECT_EQ(c.records().size(), 2u * kPartitions + 4);
  EXPECT_TRUE(c.Events("fetch_session_reset").empty());
  EXPECT_TRUE(sim_->NoViolations());
}

// Brokers with one session slot (max.incremental.fetch.session.cache.slots=1) and two consumers:
// the first to fetch gets each broker's slot, the other is answered without a session (id 0) and
// fetches in full. As in Kafka 1.1 to 2.1 an incremental fetch does not renew a session whose size
// stays the same, so 120 s after it was made the other's full fetch evicts it: its next
// incremental fetch is answered FETCH_SESSION_ID_NOT_FOUND and it starts over in full. Both read
// everything all along.
TEST_P(ConsumerSessionTest, AnEvictedSessionStartsOverInFull) {
  constexpr int32_t kPartitions = 6;
  const bool sessions = GetParam() >= KafkaRelease::k1_1;
  replication_factor_ = 1;
  StartCluster(16, kPartitions, {{"max.incremental.fetch.session.cache.slots", "1"}}, {},
               GetParam());
  std::vector<TopicPartition> all;
  for (int32_t p = 0; p < kPartitions; ++p) all.push_back(TopicPartition{"t", PartitionId(p)});
  TestConsumer& a = AddConsumer("c1", {{"auto.offset.reset", "earliest"}});
  TestConsumer& b = AddConsumer("c2", {{"auto.offset.reset", "earliest"}});
  a.consumer().Assign(all);
  b.consumer().Assign(all);
  a.StartPolling();
  b.StartPolling();
  size_t produced = 0;
  for (int round = 0; round < 14; ++round) {  // a record in each partition every 10 s
    for (const TopicPartition& tp : all) Produce(tp, 1);
    produced += all.size();
    ASSERT_TRUE(RunUntil([&] {
      return a.records().size() == produced && b.records().size() == produced;
    })) << a.Dump()
        << "\n"
        << b.Dump();
    cluster().RunFor(10 * kSecondUs);
  }
  std::vector<nlohmann::ordered_json> resets = a.Events("fetch_session_reset");
  for (const nlohmann::ordered_json& reset : b.Events("fetch_session_reset"))
    resets.push_back(reset);
  if (!sessions) {
    EXPECT_TRUE(resets.empty());
    return;
  }
  ASSERT_FALSE(resets.empty()) << a.Dump() << "\n" << b.Dump();
  for (const nlohmann::ordered_json& reset : resets) {
    EXPECT_EQ(reset["error"], "FETCH_SESSION_ID_NOT_FOUND") << reset.dump();
  }
  for (TestConsumer* c : {&a, &b}) {
    for (const TopicPartition& tp : all) {
      EXPECT_EQ(c->consumer().positions().at(tp), Offset(14)) << c->name() << " " << ToString(tp);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Releases, ConsumerSessionTest,
                         ::testing::Values(KafkaRelease::k1_0, KafkaRelease::k1_1,
                                           KafkaRelease::k2_1),
                         ksim::testing::ReleaseParamName);

// The same seed gives the same run: every consumer event and delivery, in the same order.
TEST(ConsumerDeterminismTest, SameSeedSameEvents) {
  auto run = [](uint64_t seed) {
    ClusterOptions options;
    ClusterSim sim("consumer-determinism", seed, options);
    KSIM_CHECK(sim.Start());
    KSIM_CHECK(sim.cluster().CreateTopicAndWait(TopicSpec{"t", 3, 3, {}, {}}).ok());
    auto& producer = sim.AddClient("p1");
    for (int32_t p = 0; p < 3; ++p) {
      KSIM_CHECK(sim.ProduceAndWait(producer, TopicPartition{"t", PartitionId(p)}, -1, 5));
    }
    TestConsumer c1(sim.world(), "c1", {{"group.id", "g"}, {"auto.offset.reset", "earliest"}});
    TestConsumer c2(sim.world(), "c2", {{"group.id", "g"}, {"auto.offset.reset", "earliest"}});
    c1.consumer().Subscribe({"t"});
    c2.consumer().Subscribe({"t"});
    c1.StartPolling();
    c2.StartPolling();
    sim.cluster().RunFor(20 * kSecondUs);
    return c1.Dump() + "\n" + c2.Dump();
  };
  const std::string first = run(31);
  EXPECT_EQ(first, run(31));
  EXPECT_NE(first.find("partitions_assigned"), std::string::npos);
}

}  // namespace
}  // namespace ksim::sim::testing
