// The simulated clients themselves (sim/cluster/clients.h): what Create refuses, the producer
// workload's pacing and its crash/restart (pending sends become info ops, the workload goes on with
// new ids), and a consumer without a group reading every partition of its topic.
#include <gtest/gtest.h>

#include "tests/support/sim/client_test_util.h"

namespace ksim::sim::testing {
namespace {

TEST(SimClientsTest, CreateRefusesContradictionsAndBadSettings) {
  ClientSim run("clients-create", 1);
  auto consumer = [&](ConsumerClientOptions options) {
    options.bootstrap = {"broker-1"};
    return ConsumerClient::Create(run.world(), run.history(), std::move(options)).status().code();
  };
  ConsumerClientOptions no_group{.id = "c1", .topics = {"t"}};
  no_group.commit = CommitMode::kAfterProcessing;
  EXPECT_EQ(consumer(no_group), Errc::kInvalidConfig);
  ConsumerClientOptions contradiction{.id = "c1", .topics = {"t"}, .group = "g"};
  contradiction.commit = CommitMode::kBeforeProcessing;
  contradiction.config = {{"enable.auto.commit", "true"}};
  EXPECT_EQ(consumer(contradiction), Errc::kInvalidConfig);
  ConsumerClientOptions other_group{.id = "c1", .topics = {"t"}, .group = "g"};
  other_group.config = {{"group.id", "h"}};
  EXPECT_EQ(consumer(other_group), Errc::kInvalidConfig);
  EXPECT_EQ(consumer(ConsumerClientOptions{.id = "c1"}), Errc::kInvalidArgument);  // no topics

  auto producer = [&](ProducerClientOptions options) {
    options.bootstrap = {"broker-1"};
    return ProducerClient::Create(run.world(), run.history(), std::move(options)).status().code();
  };
  ProducerClientOptions typo{.id = "p1", .topic = "t"};
  typo.config = {{"ack", "all"}};
  EXPECT_EQ(producer(typo), Errc::kInvalidConfig);
  EXPECT_EQ(producer(ProducerClientOptions{.id = "p1", .topic = "t", .messages = -1}),
            Errc::kInvalidArgument);
  // A name already on the network (a broker's).
  EXPECT_EQ(producer(ProducerClientOptions{.id = "broker-2", .topic = "t"}),
            Errc::kInvalidArgument);
  EXPECT_EQ(*ParseCommitMode("after-processing"), CommitMode::kAfterProcessing);
  EXPECT_FALSE(ParseCommitMode("after").ok());
  // Nothing refused left a node behind.
  EXPECT_EQ(run.world().FindNode("p1"), nullptr);
  EXPECT_EQ(run.world().FindNode("c1"), nullptr);
}

TEST(SimClientsTest, ProducerPacesItsWorkloadAndSurvivesACrash) {
  ClientSim run("producer-crash", 2);
  ASSERT_TRUE(run.Start());
  ASSERT_TRUE(run.CreateTopic("t", 1, 3));
  const int64_t start_ms = run.world().Now() / kUsPerMs + 100;
  ProducerClientOptions options{.id = "p1", .topic = "t", .messages = 40, .rate_per_s = 20};
  options.start_ms = start_ms;
  options.config = {{"acks", "all"}, {"linger.ms", "200"}};
  ProducerClient& p1 = run.AddProducer(options);
  // 20 records a second: the 10th goes at start + 450 ms; crash while lingering batches wait.
  ASSERT_TRUE(run.RunUntil([&] { return p1.generated() == 10; }, 60 * kSecondUs));
  EXPECT_EQ(run.world().Now(), (start_ms + 450) * kUsPerMs);
  ASSERT_GT(p1.pending(), 0u);
  const size_t pending_at_crash = p1.pending();
  ASSERT_TRUE(run.world().CrashNode("p1").ok());
  EXPECT_EQ(p1.pending(), 0u);
  EXPECT_EQ(p1.producer(), nullptr);
  EXPECT_FALSE(p1.Produce("while down").ok());
  const auto crashed = run.history().Select(OpFunction::kSend, OpType::kInfo);
  ASSERT_EQ(crashed.size(), pending_at_crash);
  for (const HistoryOp* op : crashed) {
    EXPECT_TRUE(op->crashed);
    EXPECT_EQ(op->incarnation, 1u);
  }

  run.cluster().RunFor(2 * kSecondUs);
  ASSERT_TRUE(run.world().RestartNode("p1").ok());
  ASSERT_TRUE(run.RunUntil([&] { return p1.done(); }, 60 * kSecondUs));
  const auto invokes = run.history().Select(OpFunction::kSend, OpType::kInvoke);
  ASSERT_EQ(invokes.size(), 40u);
  for (size_t i = 0; i < invokes.size(); ++i) {
    EXPECT_EQ(invokes[i]->record_id, "p1-" + std::to_string(i));
    EXPECT_EQ(invokes[i]->value, invokes[i]->record_id);
    EXPECT_EQ(invokes[i]->incarnation, i < 10 ? 1u : 2u);
    EXPECT_NE(run.history().CompletionOf(invokes[i]->index), nullptr);
  }
  EXPECT_EQ(run.history().open_sends(), 0u);
  // Incarnation 2 acked all of its own records, and they are in the log once each.
  std::map<std::string, int> counts = run.LogCounts("t", 1);
  for (size_t i = 10; i < 40; ++i) {
    const HistoryOp* outcome = run.history().CompletionOf(invokes[i]->index);
    EXPECT_EQ(outcome->type, OpType::kOk);
    EXPECT_EQ(counts[std::string(invokes[i]->record_id)], 1);
  }
}

TEST(SimClientsTest, ConsumerWithoutAGroupReadsEveryPartition) {
  ClientSim run("consumer-no-group", 3);
  ASSERT_TRUE(run.Start());
  ASSERT_TRUE(run.CreateTopic("t", 3, 2));
  ProducerClientOptions producer{.id = "p1", .topic = "t", .messages = 30};
  producer.config = {{"acks", "all"}};
  ProducerClient& p1 = run.AddProducer(producer);
  ASSERT_TRUE(run.RunUntil([&] { return p1.done(); }, 60 * kSecondUs));
  ConsumerClientOptions options{.id = "c1", .topics = {"t"}};
  options.config = {{"auto.offset.reset", "earliest"}};
  ConsumerClient& c1 = run.AddConsumer(options);
  ASSERT_TRUE(run.RunUntil([&] { return c1.delivered() == 30; }, 60 * kSecondUs));
  EXPECT_EQ(c1.assignment().size(), 3u);
  const std::vector<std::string> acked = run.AckedIds("p1");
  EXPECT_EQ(run.DeliveredIds(""), std::set<std::string>(acked.begin(), acked.end()));
  EXPECT_TRUE(run.history().Select(OpFunction::kCommit, OpType::kOk).empty());
  EXPECT_TRUE(run.history().Select(OpFunction::kCommit, OpType::kFail).empty());
}

}  // namespace
}  // namespace ksim::sim::testing
