// The seed's three delivery semantics, each arising from real protocol behaviour in a simulated
// 3-broker cluster, through the simulated clients (sim/cluster/clients.h) and asserted on the run's
// History and on the logs read back from the brokers:
//
// - producer at-least-once: a Produce response lost on a one-way cut (broker-1 -> p1) makes the
//   retry append the batch a second time; with enable.idempotence the broker recognises the
//   retry's sequence numbers and answers with the original offset (one copy, KIP-98);
// - producer at-most-once: acks=0 while the leader crashes: the history says ok for records the
//   final log does not hold;
// - consumer at-most-once / at-least-once: a consumer that commits before processing and crashes
//   mid-poll skips the rest of that poll after its restart; one that commits after processing
//   redelivers what it processed but had not committed;
// - fan-out: two groups each see every record;
// - determinism: one seed, one trace.
#include <gtest/gtest.h>

#include "tests/support/sim/client_test_util.h"

namespace ksim::sim::testing {
namespace {

const TopicPartition kT0{"t", PartitionId(0)};

// Topic t, one partition led by broker 1 (preferred leader) and replicated to 2 and 3.
zk::ReplicaAssignment LedByBroker1() {
  return {{PartitionId(0), {BrokerId(1), BrokerId(2), BrokerId(3)}}};
}

// Starts `run` with topic t led by broker 1 and producer p1 of `release` with `config` (acks=all
// added), and has "before" acknowledged.
ProducerClient& StartWithOneAckedRecord(ClientSim& run, ConfigOverrides config,
                                        KafkaRelease release) {
  EXPECT_TRUE(run.Start());
  EXPECT_TRUE(run.CreateTopic("t", 1, 3, LedByBroker1()));
  ProducerClientOptions options;
  options.id = "p1";
  options.topic = "t";
  options.config = {{"acks", "all"}};
  options.config.insert(options.config.end(), config.begin(), config.end());
  options.kafka_version = release;
  ProducerClient& p1 = run.AddProducer(options);
  EXPECT_TRUE(p1.Produce("before").ok());
  EXPECT_TRUE(run.RunUntil([&] { return p1.pending() == 0; }, 60 * kSecondUs));
  EXPECT_EQ(run.AckedIds("p1").size(), 1u);
  return p1;
}

// Sends "before" normally, then "x" while broker-1's answers to p1 are cut, heals after the
// request timed out, and runs until p1 has every outcome. Returns the run's log counts.
std::map<std::string, int> LoseOneProduceResponse(ClientSim& run, bool idempotence) {
  // A 2.0 producer: one that has enable.idempotence.
  ProducerClient& p1 =
      StartWithOneAckedRecord(run,
                              {{"retries", "5"},
                               {"request.timeout.ms", "3000"},
                               {"enable.idempotence", idempotence ? "true" : "false"}},
                              KafkaRelease::k2_0);

  EXPECT_TRUE(run.cluster().Partition({{"broker-1"}, {"p1"}}, /*one_way=*/true).ok());
  EXPECT_TRUE(p1.Produce("x").ok());
  // The request reaches broker-1, which appends and replicates; its answer is held at the cut
  // past the request timeout (3 s), so p1 closes the connection (the answer dies with it) and
  // sends "x" again.
  run.cluster().RunFor(4 * kSecondUs);
  run.cluster().Heal();
  EXPECT_TRUE(run.RunUntil([&] { return p1.pending() == 0; }, 120 * kSecondUs));
  return run.LogCounts("t", 1);
}

TEST(DeliverySemanticsTest, LostProduceResponseRetriedWithoutIdempotenceWritesADuplicate) {
  ClientSim run("lost-response-duplicate", 11);
  std::map<std::string, int> counts = LoseOneProduceResponse(run, /*idempotence=*/false);
  // The retry was a second append: the record is in the log twice (offsets 1 and 2), acked
  // once, with the second copy's offset.
  EXPECT_EQ(counts["before"], 1);
  EXPECT_EQ(counts["x"], 2);
  const HistoryOp* outcome = run.SendOutcomeOf("p1-1");
  ASSERT_NE(outcome, nullptr);
  EXPECT_EQ(outcome->type, OpType::kOk);
  EXPECT_EQ(outcome->offset, Offset(2));
  // The producer saw at least one attempt fail before the ack.
  EXPECT_FALSE(Events(run.sim().FinishAndParse(), "produce_retry", "p1").empty());
}

TEST(DeliverySemanticsTest, LostProduceResponseRetriedWithIdempotenceIsDeduplicated) {
  // Brokers of 2.0, as the producer: a 0.10.0 log's message sets refuse idempotent batches.
  ClusterOptions options = ClientClusterOptions();
  options.kafka_version = KafkaRelease::k2_0;
  ClientSim run("lost-response-idempotent", 11, options);
  std::map<std::string, int> counts = LoseOneProduceResponse(run, /*idempotence=*/true);
  EXPECT_EQ(counts["before"], 1);
  EXPECT_EQ(counts["x"], 1);
  const HistoryOp* outcome = run.SendOutcomeOf("p1-1");
  ASSERT_NE(outcome, nullptr);
  EXPECT_EQ(outcome->type, OpType::kOk);
  // Answered with the offset of the one copy: right after "before".
  EXPECT_EQ(outcome->offset, Offset(1));
  const Trace trace = run.sim().FinishAndParse();
  EXPECT_FALSE(Events(trace, "produce_retry", "p1").empty());
  EXPECT_EQ(Events(trace, "producer_id", "p1").size(), 1u);
}

TEST(DeliverySemanticsTest, AcksZeroDuringLeaderCrashLosesRecordsTheProducerBelievedSent) {
  ClientSim run("acks0-leader-crash", 5);
  ASSERT_TRUE(run.Start());
  ASSERT_TRUE(run.CreateTopic("t", 1, 3, LedByBroker1()));
  // Let both followers fetch first: a follower's first Fetch may reach broker 1 before it leads
  // (UNKNOWN_TOPIC_OR_PARTITION) and back off replica.fetch.backoff.ms (1 s); a follower still in
  // that backoff at the crash stays in the ISR with an empty log and may be elected, truncating
  // everything (correct Kafka behaviour, but not what this test is about).
  run.cluster().RunFor(2 * kSecondUs);
  ProducerClientOptions options;
  options.id = "p1";
  options.topic = "t";
  options.messages = 200;
  options.rate_per_s = 100;
  options.start_ms = run.world().Now() / kUsPerMs;
  options.config = {{"acks", "0"}, {"retries", "0"}};
  ProducerClient& p1 = run.AddProducer(options);
  // A second into the workload the leader dies.
  run.cluster().RunFor(kSecondUs);
  ASSERT_EQ(run.cluster().LeaderOf(kT0), BrokerId(1));
  ASSERT_TRUE(run.cluster().CrashBroker(BrokerId(1)).ok());
  ASSERT_TRUE(run.RunUntil([&] { return p1.done(); }, 120 * kSecondUs));
  ASSERT_TRUE(run.cluster().RestartBroker(BrokerId(1)).ok());
  run.cluster().RunFor(20 * kSecondUs);

  // acks=0: every record is ok as soon as it is sent, with no offset.
  const std::vector<std::string> acked = run.AckedIds("p1");
  ASSERT_EQ(acked.size(), 200u);
  for (const HistoryOp* ok : run.history().Select(OpFunction::kSend, OpType::kOk)) {
    EXPECT_EQ(ok->offset, kUndefinedOffset);
  }
  std::map<std::string, int> counts = run.LogCounts("t", 1);
  int lost = 0;
  for (const std::string& id : acked) {
    if (counts[id] == 0) ++lost;
    EXPECT_LE(counts[id], 1) << id;  // acks=0 never retries
  }
  EXPECT_GT(lost, 0);
  EXPECT_LT(lost, 200);  // those sent before the crash (and after the failover) survive
  EXPECT_TRUE(run.sim().NoViolations());
}

// Writes 20 records to t-0, then runs consumer c1 of group g1 (max.poll.records 10, 100 ms per
// record) until it delivered `crash_after` records, crashes it, restarts it and runs until it
// delivered offset 19. Returns (offset -> times delivered).
std::map<std::pair<int32_t, int64_t>, int> CrashConsumerMidPoll(ClientSim& run, CommitMode commit,
                                                                int64_t crash_after) {
  EXPECT_TRUE(run.Start());
  EXPECT_TRUE(run.CreateTopic("t", 1, 3, LedByBroker1()));
  ProducerClientOptions producer;
  producer.id = "p1";
  producer.topic = "t";
  producer.messages = 20;
  producer.config = {{"acks", "all"}};
  ProducerClient& p1 = run.AddProducer(producer);
  EXPECT_TRUE(run.RunUntil([&] { return p1.done(); }, 60 * kSecondUs));

  ConsumerClientOptions options;
  options.id = "c1";
  options.topics = {"t"};
  options.group = "g1";
  options.commit = commit;
  options.processing_ms = 100;
  options.config = {{"auto.offset.reset", "earliest"},
                    {"max.poll.records", "10"},
                    {"session.timeout.ms", "6000"}};
  ConsumerClient& c1 = run.AddConsumer(options);
  EXPECT_TRUE(run.RunUntil([&] { return c1.delivered() >= crash_after; }, 120 * kSecondUs));
  EXPECT_TRUE(run.world().CrashNode("c1").ok());
  run.cluster().RunFor(kSecondUs);
  EXPECT_TRUE(run.world().RestartNode("c1").ok());
  EXPECT_TRUE(run.RunUntil(
      [&] {
        return run.Deliveries("g1").count({0, 19}) > 0;
      },
      120 * kSecondUs));
  run.cluster().RunFor(5 * kSecondUs);  // nothing more comes
  return run.Deliveries("g1");
}

TEST(DeliverySemanticsTest, CommitBeforeProcessingThenCrashSkipsRecords) {
  ClientSim run("consumer-at-most-once", 21);
  auto delivered = CrashConsumerMidPoll(run, CommitMode::kBeforeProcessing, 3);
  // The first poll (offsets 0..9) was committed before processing; the crash came during the
  // 4th record: 3..9 are never processed, by this incarnation or the next.
  int skipped = 0;
  for (int64_t offset = 0; offset < 20; ++offset) {
    const int times = delivered.count({0, offset}) ? delivered[{0, offset}] : 0;
    EXPECT_LE(times, 1) << offset;  // at most once
    if (times == 0) ++skipped;
  }
  EXPECT_GT(skipped, 0);
  for (int64_t offset = 0; offset < 3; ++offset) EXPECT_EQ((delivered[{0, offset}]), 1);
  for (int64_t offset = 10; offset < 20; ++offset) EXPECT_EQ((delivered[{0, offset}]), 1);
  // The commit of offset 10 was answered before the crash.
  bool committed_ten = false;
  for (const HistoryOp* op : run.history().Select(OpFunction::kCommit, OpType::kOk)) {
    if (op->incarnation == 1 && op->offset == Offset(10)) committed_ten = true;
  }
  EXPECT_TRUE(committed_ten);
}

TEST(DeliverySemanticsTest, CommitAfterProcessingThenCrashRedeliversRecords) {
  ClientSim run("consumer-at-least-once", 21);
  auto delivered = CrashConsumerMidPoll(run, CommitMode::kAfterProcessing, 5);
  // Offsets 0..4 were processed but never committed: the restarted consumer (incarnation 2)
  // starts again from the group's committed offset and processes them a second time.
  int redelivered = 0;
  for (int64_t offset = 0; offset < 20; ++offset) {
    ASSERT_TRUE(delivered.count({0, offset})) << "offset " << offset << " never delivered";
    if (delivered[{0, offset}] > 1) ++redelivered;
  }
  EXPECT_EQ(redelivered, 5);
  for (const HistoryOp* op : run.history().Select(OpFunction::kCommit, OpType::kOk)) {
    EXPECT_EQ(op->incarnation, 2u) << "incarnation 1 committed nothing";
  }
}

TEST(DeliverySemanticsTest, TwoGroupsEachSeeEveryRecord) {
  ClientSim run("two-groups", 8);
  ASSERT_TRUE(run.Start());
  ASSERT_TRUE(run.CreateTopic("t", 3, 2));
  ProducerClientOptions producer;
  producer.id = "p1";
  producer.topic = "t";
  producer.messages = 60;
  producer.rate_per_s = 50;
  producer.config = {{"acks", "all"}};
  ProducerClient& p1 = run.AddProducer(producer);
  for (const char* group : {"g1", "g2"}) {
    ConsumerClientOptions options;
    options.id = std::string("c-") + group;
    options.topics = {"t"};
    options.group = group;
    options.config = {{"auto.offset.reset", "earliest"}, {"auto.commit.interval.ms", "1000"}};
    run.AddConsumer(options);
  }
  ASSERT_TRUE(run.RunUntil(
      [&] {
        return p1.done() && run.DeliveredIds("g1").size() == 60 &&
               run.DeliveredIds("g2").size() == 60;
      },
      180 * kSecondUs));
  const std::vector<std::string> acked = run.AckedIds("p1");
  ASSERT_EQ(acked.size(), 60u);
  const std::set<std::string> expected(acked.begin(), acked.end());
  EXPECT_EQ(run.DeliveredIds("g1"), expected);
  EXPECT_EQ(run.DeliveredIds("g2"), expected);
  // Auto commit: the Consumer's own commits (inside a Poll once auto.commit.interval.ms passed)
  // are in the history, for both groups.
  run.cluster().RunFor(3 * kSecondUs);
  std::set<std::string> committing;
  for (const HistoryOp* op : run.history().Select(OpFunction::kCommit, OpType::kOk)) {
    committing.emplace(op->group);
  }
  EXPECT_EQ(committing, (std::set<std::string>{"g1", "g2"}));
  // Round robin over the three partitions: every partition was used.
  std::set<int32_t> partitions;
  for (const HistoryOp* op : run.history().Select(OpFunction::kSend, OpType::kOk)) {
    partitions.insert(op->partition.value());
  }
  EXPECT_EQ(partitions.size(), 3u);
}

TEST(DeliverySemanticsTest, SameSeedSameTrace) {
  auto run_once = [](uint64_t seed) {
    ClientSim run("determinism", seed);
    CrashConsumerMidPoll(run, CommitMode::kAfterProcessing, 5);
    return run.sim().FinishAndParse().events.size() > 0 ? run.world().trace().hash() : 0;
  };
  const uint64_t first = run_once(33);
  EXPECT_NE(first, 0u);
  EXPECT_EQ(run_once(33), first);
}

// An idempotent producer whose requests stop arriving (a one-way cut) until its batch in retry
// expires (before 2.1 a queued batch expires request.timeout.ms after its last attempt). Kafka
// 0.11.0's Sender resets the producer id at that expiry; 1.0 to 2.0 mark the partition unresolved
// and keep the id until the batches after it say whether the sequence was taken. Returns the
// producer id just after the expiry, with the requests still cut.
ProducerId ProducerIdAfterAnExpiryInRetry(KafkaRelease release) {
  ClusterOptions cluster = ClientClusterOptions();
  cluster.kafka_version = release;
  ClientSim run("idempotent-expiry-" + std::string(KafkaReleaseName(release)), 5, cluster);
  ProducerClient& p1 = StartWithOneAckedRecord(
      run, {{"retries", "100"}, {"request.timeout.ms", "2000"}, {"enable.idempotence", "true"}},
      release);
  const ProducerId first = p1.producer()->producer_id();
  EXPECT_NE(first, kNoProducerId);
  EXPECT_TRUE(run.cluster().Partition({{"p1"}, {"broker-1", "broker-2", "broker-3"}}, true).ok());
  EXPECT_TRUE(p1.Produce("cut").ok());
  // Sent, timed out (2 s: the connection closes, the batch waits for its retry), expired.
  EXPECT_TRUE(run.RunUntil([&] { return p1.pending() == 0; }, 30 * kSecondUs));
  const ProducerId after = p1.producer()->producer_id();
  EXPECT_EQ(Events(run.sim().FinishAndParse(), "batch_expired", "p1").size(), 1u);
  EXPECT_TRUE(after == first || after == kNoProducerId);
  return after;
}

TEST(DeliverySemanticsTest, At0110AnExpiredBatchInRetryResetsTheProducerId) {
  EXPECT_EQ(ProducerIdAfterAnExpiryInRetry(KafkaRelease::k0_11_0), kNoProducerId);
  EXPECT_NE(ProducerIdAfterAnExpiryInRetry(KafkaRelease::k1_1), kNoProducerId);
}

}  // namespace
}  // namespace ksim::sim::testing
