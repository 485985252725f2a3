// The Producer (core/clients/producer/producer.h) on its own client node of a simulated cluster:
// partitioning, offsets in order, retries across a leader crash, the at-least-once duplicate of a
// retry after a lost response (and none with idempotence), acks=0 losing records the producer
// counted as sent, and delivery.timeout.ms giving "unknown" for sent batches and "fail" for unsent
// ones. Without retries, a leader crash fails only the requests in flight to it. Every outcome
// comes from the protocol running on the virtual network, not from flags.
#include "core/clients/producer/producer.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/random.h"
#include "core/base/trace_names.h"
#include "core/clients/producer/partitioner.h"
#include "core/record/record_batch.h"
#include "sim/world/sim_transport.h"
#include "tests/support/sim/cluster_test_util.h"

namespace ksim::sim::testing {
namespace {

const TopicPartition kT0{"t", PartitionId(0)};

// A RandomSource that always draws 0: the round-robin counter starts at partition 0.
class ZeroRandom final : public RandomSource {
 public:
  int32_t NextInt(int32_t /*bound*/) override { return 0; }
};

// A Producer on node `name`: SimTransport, the node's timers and clock, a seeded stream for the
// partitioner, events to the trace. Outcomes are kept by the value sent.
class ProducerNode {
 public:
  ProducerNode(World& world, const std::string& name, ConfigOverrides settings,
               RandomSource* random = nullptr, KafkaRelease release = KafkaRelease::k2_0)
      : world_(world), name_(name), stream_random_(world.StreamFor("producer/" + name)) {
    settings.emplace_back("bootstrap.servers", "broker-1,broker-2,broker-3");
    // 2.0's producer unless told: the idempotence ksim models; every other default is 0.10's.
    Result<ProducerConfig> config = ParseProducerConfig(settings, release);
    KSIM_CHECK_MSG(config.ok(), "bad producer settings in a test");
    Result<Node*> node = world.AddNode(name);
    KSIM_CHECK(node.ok());
    node_ = *node;
    transport_ = std::make_unique<SimTransport>(world.network(), name);
    transport_->Attach();
    EventSink events = [this](std::string_view ev, EventFields fields) {
      world_.Trace(name_, ev, fields);
    };
    producer_ = std::make_unique<Producer>(
        *config, ProducerSeams{*transport_, *node_, node_->clock(),
                               random != nullptr ? *random : stream_random_, events});
  }

  // Sends `value` (unique) to `topic`; its outcome is kept under the value.
  void Send(const std::string& value, std::optional<std::string> key = std::nullopt,
            const std::string& topic = "t", std::optional<PartitionId> partition = std::nullopt) {
    ProducerRecord record;
    record.topic = topic;
    record.key = std::move(key);
    record.value = value;
    record.partition = partition;
    order_.push_back(value);
    producer_->Send(std::move(record), [this, value](const SendOutcome& outcome) {
      KSIM_CHECK_MSG(!outcomes_.count(value), "two outcomes for one record");
      outcomes_[value] = outcome;
      completion_order_.push_back(value);
    });
  }
  // Sends `count` records "<prefix>-<i>", one every `interval_us` from now.
  void SendEvery(const std::string& prefix, int count, TimeUs interval_us) {
    for (int i = 0; i < count; ++i) {
      node_->Schedule(interval_us * i,
                      [this, prefix, i] { Send(prefix + "-" + std::to_string(i)); });
    }
  }

  Producer& producer() { return *producer_; }
  bool Done(size_t count) const { return outcomes_.size() == count; }
  const std::map<std::string, SendOutcome>& outcomes() const { return outcomes_; }
  const SendOutcome& Outcome(const std::string& value) const { return outcomes_.at(value); }
  const std::vector<std::string>& completion_order() const { return completion_order_; }
  const std::vector<std::string>& send_order() const { return order_; }

 private:
  World& world_;
  std::string name_;
  StreamRandomSource stream_random_;
  Node* node_ = nullptr;
  std::unique_ptr<SimTransport> transport_;
  std::unique_ptr<Producer> producer_;
  std::vector<std::string> order_;
  std::vector<std::string> completion_order_;
  std::map<std::string, SendOutcome> outcomes_;
};

// The values in `broker`'s log of `tp` below its high watermark, by offset.
std::vector<std::pair<Offset, std::string>> LogRecords(Cluster& cluster, BrokerId broker,
                                                       const TopicPartition& tp) {
  std::vector<std::pair<Offset, std::string>> out;
  ksim::Partition* partition = cluster.broker(broker)->GetPartition(tp);
  if (partition == nullptr) return out;
  Offset next = partition->log().log_start_offset();
  const Offset end = partition->high_watermark();
  while (next < end) {
    Result<FetchDataInfo> read = partition->log().Read(next, 1 << 20, end, true);
    if (!read.ok() || read->records.empty()) break;
    BatchIterator batches(read->records);
    const Offset before = next;
    while (std::optional<BatchIterator::Item> batch = batches.Next()) {
      Result<std::vector<Record>> records = DecodeRecords(batch->bytes);
      if (!records.ok()) break;
      for (const Record& record : *records) {
        if (record.offset < next || record.offset >= end) continue;
        out.emplace_back(record.offset, std::string(AsChars(*record.value)));
        next = record.offset + 1;
      }
    }
    if (next == before) break;
  }
  return out;
}

std::map<std::string, int> CountValues(const std::vector<std::pair<Offset, std::string>>& log) {
  std::map<std::string, int> counts;
  for (const auto& [offset, value] : log) ++counts[value];
  return counts;
}

// A started 3-broker cluster with topic "t" (`partitions`, RF 3, fully in sync). An idempotent
// producer needs brokers of 0.11 or later, whose logs hold record batches v2 (a 0.10.0 log's
// message sets refuse its batches: UNSUPPORTED_FOR_MESSAGE_FORMAT).
std::unique_ptr<ClusterSim> StartCluster(const std::string& name, uint64_t seed,
                                         int32_t partitions = 1, ConfigOverrides config = {},
                                         KafkaRelease release = kSeedKafkaRelease) {
  ClusterOptions options;
  options.brokers = 3;
  options.kafka_version = release;
  options.config = std::move(config);
  auto sim = std::make_unique<ClusterSim>(name, seed, options);
  EXPECT_TRUE(sim->Start());
  TopicSpec topic;
  topic.name = "t";
  topic.partitions = partitions;
  topic.replication_factor = 3;
  EXPECT_TRUE(sim->cluster().CreateTopicAndWait(topic).ok());
  Cluster& cluster = sim->cluster();
  EXPECT_TRUE(cluster.RunUntil(
      [&] {
        for (int32_t p = 0; p < partitions; ++p) {
          auto state = cluster.ZkPartitionState(TopicPartition{"t", PartitionId(p)});
          if (!state || state->isr.size() != 3) return false;
          for (BrokerId id : cluster.broker_ids()) {
            if (cluster.broker(id)->GetPartition(TopicPartition{"t", PartitionId(p)}) == nullptr) {
              return false;
            }
          }
        }
        return true;
      },
      30 * kSecondUs));
  return sim;
}

TEST(ProducerTest, KeyedRecordsLandInMurmur2sPartition) {
  auto sim = StartCluster("producer-keyed", 11, 3);
  ProducerNode p(sim->world(), "p1", {{"acks", "all"}});
  for (int i = 0; i < 30; ++i) p.Send("v-" + std::to_string(i), "key-" + std::to_string(i));
  ASSERT_TRUE(sim->cluster().RunUntil([&] { return p.Done(30); }, 60 * kSecondUs));
  std::map<int32_t, int> per_partition;
  for (int i = 0; i < 30; ++i) {
    const SendOutcome& outcome = p.Outcome("v-" + std::to_string(i));
    ASSERT_EQ(outcome.error, Errc::kNone);
    const std::string key = "key-" + std::to_string(i);
    EXPECT_EQ(outcome.tp.partition, PartitionForKey(AsBytes(key), 3)) << key;
    ++per_partition[outcome.tp.partition.value()];
  }
  EXPECT_EQ(per_partition.size(), 3u);  // 30 keys spread over every partition
  // Each record is in its partition's log at the offset the producer was told.
  for (int32_t partition = 0; partition < 3; ++partition) {
    const TopicPartition tp{"t", PartitionId(partition)};
    auto log = LogRecords(sim->cluster(), sim->cluster().LeaderOf(tp), tp);
    EXPECT_EQ(static_cast<int>(log.size()), per_partition[partition]);
    for (const auto& [offset, value] : log) {
      EXPECT_EQ(p.Outcome(value).tp, tp);
      EXPECT_EQ(p.Outcome(value).offset, offset);
    }
  }
  EXPECT_TRUE(sim->NoViolations());
}

TEST(ProducerTest, UnkeyedRecordsGoRoundRobin) {
  auto sim = StartCluster("producer-round-robin", 12, 3);
  ZeroRandom zero;
  ProducerNode p(sim->world(), "p1", {}, &zero);
  for (int i = 0; i < 9; ++i) p.Send("v-" + std::to_string(i));
  ASSERT_TRUE(sim->cluster().RunUntil([&] { return p.Done(9); }, 60 * kSecondUs));
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(p.Outcome("v-" + std::to_string(i)).tp.partition, PartitionId(i % 3)) << i;
  }
  // With the seeded stream the start is random but the rotation is the same.
  ProducerNode q(sim->world(), "p2", {});
  for (int i = 0; i < 6; ++i) q.Send("w-" + std::to_string(i));
  ASSERT_TRUE(sim->cluster().RunUntil([&] { return q.Done(6); }, 60 * kSecondUs));
  const int32_t start = q.Outcome("w-0").tp.partition.value();
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(q.Outcome("w-" + std::to_string(i)).tp.partition, PartitionId((start + i) % 3));
  }
}

TEST(ProducerTest, AcksOneAndAllGetOffsetsInOrder) {
  auto sim = StartCluster("producer-acks", 13);
  for (const char* acks : {"1", "all"}) {
    const std::string name = std::string("p-") + acks;
    ProducerNode p(sim->world(), name, {{"acks", acks}, {"linger.ms", "5"}});
    const BrokerId leader = sim->cluster().LeaderOf(kT0);
    ASSERT_NE(leader, kNoBroker);
    ASSERT_NE(sim->cluster().broker(leader), nullptr);
    ksim::Partition* partition = sim->cluster().broker(leader)->GetPartition(kT0);
    ASSERT_NE(partition, nullptr) << leader;
    const Offset base = partition->log_end_offset();
    p.SendEvery(name, 50, 2000);
    ASSERT_TRUE(sim->cluster().RunUntil([&] { return p.Done(50); }, 60 * kSecondUs)) << acks;
    for (int i = 0; i < 50; ++i) {
      const SendOutcome& outcome = p.Outcome(name + "-" + std::to_string(i));
      ASSERT_EQ(outcome.error, Errc::kNone);
      EXPECT_EQ(outcome.offset, base + i) << acks;
      EXPECT_EQ(outcome.attempts, 1);
    }
    EXPECT_EQ(p.completion_order(), p.send_order());
    EXPECT_LT(p.producer().counters().batches_sent, 50u) << "linger.ms batches records";
  }
  EXPECT_TRUE(sim->NoViolations());
}

TEST(ProducerTest, FlushEndsLingerAndCloseWaitsForEveryOutcome) {
  auto sim = StartCluster("producer-flush-close", 19);
  Cluster& cluster = sim->cluster();
  ProducerNode p(sim->world(), "p1", {{"linger.ms", "60000"}, {"delivery.timeout.ms", "120000"}});
  for (int i = 0; i < 5; ++i) p.Send("f-" + std::to_string(i));
  cluster.RunFor(5 * kSecondUs);
  EXPECT_EQ(p.producer().pending(), 5) << "lingering";
  bool flushed = false;
  p.producer().Flush([&] { flushed = true; });
  ASSERT_TRUE(cluster.RunUntil([&] { return flushed; }, 10 * kSecondUs));
  EXPECT_TRUE(p.Done(5));
  EXPECT_EQ(p.producer().counters().batches_sent, 1u) << "one batch of five";
  for (int i = 5; i < 8; ++i) p.Send("f-" + std::to_string(i));
  bool closed = false;
  p.producer().Close([&] { closed = true; });
  ASSERT_TRUE(cluster.RunUntil([&] { return closed; }, 10 * kSecondUs));
  EXPECT_TRUE(p.Done(8));
  EXPECT_EQ(p.producer().pending(), 0);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(p.Outcome("f-" + std::to_string(i)).offset, Offset(i));
  }
}

TEST(ProducerTest, LeaderCrashRetriesReachTheNewLeader) {
  auto sim = StartCluster("producer-leader-crash", 14);
  Cluster& cluster = sim->cluster();
  // 2.1's producer (KIP-91): before it, the batches queued behind the dead leader expire after
  // request.timeout.ms (3 s here), before the failover (~6 s) (Release010ExpiresQueued...).
  ProducerNode p(sim->world(), "p1",
                 {{"acks", "all"}, {"retries", "1000"}, {"request.timeout.ms", "3000"}}, nullptr,
                 KafkaRelease::k2_1);
  p.SendEvery("r", 200, 20'000);
  const BrokerId old_leader = cluster.LeaderOf(kT0);
  cluster.RunFor(2 * kSecondUs);
  ASSERT_TRUE(cluster.CrashBroker(old_leader).ok());
  ASSERT_TRUE(cluster.RunUntil([&] { return p.Done(200); }, 120 * kSecondUs));
  const BrokerId new_leader = cluster.LeaderOf(kT0);
  ASSERT_NE(new_leader, old_leader);
  const auto log = LogRecords(cluster, new_leader, kT0);
  std::map<Offset, std::string> by_offset(log.begin(), log.end());
  const std::map<std::string, int> counts = CountValues(log);
  int retried = 0;
  for (const auto& [value, outcome] : p.outcomes()) {
    ASSERT_EQ(outcome.error, Errc::kNone) << value;
    // Acked means in the log, at the offset the producer was told.
    EXPECT_GE(counts.count(value) ? counts.at(value) : 0, 1) << value;
    EXPECT_EQ(by_offset[outcome.offset], value);
    if (outcome.attempts > 1) ++retried;
  }
  EXPECT_GT(retried, 0) << "the crash made some batch go to the new leader";
  EXPECT_GT(p.producer().counters().metadata_requests, 1u);
  EXPECT_GT(p.producer().counters().retries, 0u);
  EXPECT_TRUE(sim->NoViolations());
}

// Kafka 0.10's defaults (retries 0, request.timeout.ms 30 s) under a leader that dies without a
// word: the requests in flight to it time out and fail, nothing else. The records queued behind
// them meanwhile wait for the metadata asked after the timeout (Kafka closes the timed-out
// connection; the NetworkClient then asks another broker) and go to the new leader, instead of
// following the stale leader onto a new connection to the dead host and timing out again.
TEST(ProducerTest, LeaderCrashWithoutRetriesFailsOnlyTheRequestsInFlight) {
  auto sim = StartCluster("producer-failover-no-retries", 19);
  Cluster& cluster = sim->cluster();
  ProducerNode p(sim->world(), "p1", {{"acks", "all"}});
  ASSERT_EQ(p.producer().config().retries, 0);
  p.SendEvery("f", 1000, 62'500);  // 16 a second for 62.5 s: one record per request
  const BrokerId old_leader = cluster.LeaderOf(kT0);
  cluster.RunFor(20 * kSecondUs);
  ASSERT_TRUE(cluster.CrashBroker(old_leader).ok());
  ASSERT_TRUE(cluster.RunUntil([&] { return p.Done(1000); }, 200 * kSecondUs));
  const BrokerId new_leader = cluster.LeaderOf(kT0);
  ASSERT_NE(new_leader, old_leader);
  const auto log = LogRecords(cluster, new_leader, kT0);
  std::map<Offset, std::string> by_offset(log.begin(), log.end());
  int failed = 0;
  for (const auto& [value, outcome] : p.outcomes()) {
    EXPECT_EQ(outcome.attempts, 1) << value;
    if (outcome.error != Errc::kNone) {
      ++failed;
      EXPECT_TRUE(outcome.maybe_written) << value << ": it was sent and never answered";
      continue;
    }
    EXPECT_EQ(by_offset[outcome.offset], value);
  }
  EXPECT_GT(failed, 0) << "the requests in flight to the dead leader";
  EXPECT_LE(failed, p.producer().config().max_in_flight_requests_per_connection)
      << "only the requests in flight at the crash fail";
  EXPECT_TRUE(sim->NoViolations());
}

// acks=all: broker 1 appends, broker 2 copies, broker 3 is slow, so broker 1 waits in its
// DelayedProduce; its ZooKeeper session expires, broker 2 (which holds the record) is elected and
// broker 1, made a follower, answers NOT_LEADER_FOR_PARTITION. The producer cannot tell that from
// a refusal before the append: unknown (maybe_written), and the record is indeed in the log.
// Kafka's Partition.checkEnoughReplicasReachOffset at 0.10.0.1 and 2.0.0.
TEST(ProducerTest, NotLeaderAfterTheAppendWithAcksAllIsUnknown) {
  for (KafkaRelease release : {KafkaRelease::k0_10_0, KafkaRelease::k2_0}) {
    SCOPED_TRACE(std::string(KafkaReleaseName(release)));
    ClusterOptions options;
    options.brokers = 3;
    options.kafka_version = release;
    ClusterSim sim("producer-not-leader-after-append", 23, options);
    ASSERT_TRUE(sim.Start());
    Cluster& cluster = sim.cluster();
    TopicSpec t{"t", 1, 3, {}, {}};
    t.assignment = {{PartitionId(0), {BrokerId(1), BrokerId(2), BrokerId(3)}}};
    ASSERT_TRUE(cluster.CreateTopicAndWait(t).ok());
    ProducerNode p(sim.world(), "p1", {{"acks", "all"}, {"retries", "0"}}, nullptr, release);
    p.Send("warmup");
    ASSERT_TRUE(cluster.RunUntil([&] { return p.Done(1); }, 30 * kSecondUs));
    ASSERT_EQ(p.Outcome("warmup").error, Errc::kNone);
    ASSERT_TRUE(cluster.SlowBroker(BrokerId(3), 5 * kSecondUs, 6 * kSecondUs).ok());
    cluster.RunFor(kSecondUs);
    p.Send("in-doubt");
    cluster.RunFor(100 * kUsPerMs);
    ASSERT_FALSE(p.Done(2)) << "the leader waits for broker 3";
    ASSERT_TRUE(cluster.ExpireSession(BrokerId(1)).ok());
    ASSERT_TRUE(cluster.RunUntil([&] { return p.Done(2); }, 30 * kSecondUs));
    const SendOutcome& outcome = p.Outcome("in-doubt");
    EXPECT_EQ(outcome.error, Errc::kNotLeaderForPartition);
    EXPECT_TRUE(outcome.maybe_written) << "unknown: the leader appended before it answered";
    EXPECT_EQ(outcome.attempts, 1);
    ASSERT_EQ(cluster.LeaderOf(kT0), BrokerId(2));
    ASSERT_TRUE(cluster.RunUntil(
        [&] { return CountValues(LogRecords(cluster, BrokerId(2), kT0))["in-doubt"] == 1; },
        30 * kSecondUs))
        << "the new leader keeps the record the producer was told NOT_LEADER_FOR_PARTITION for";
    EXPECT_TRUE(sim.NoViolations());
  }
}

// acks=1 has no wait after the append: NOT_LEADER_FOR_PARTITION comes only from a broker that
// refused the batch, so the outcome is a failure (never written).
TEST(ProducerTest, NotLeaderWithAcksOneIsAFailure) {
  ClusterOptions options;
  options.brokers = 3;
  ClusterSim sim("producer-not-leader-acks-one", 23, options);
  ASSERT_TRUE(sim.Start());
  Cluster& cluster = sim.cluster();
  TopicSpec t{"t", 1, 3, {}, {}};
  t.assignment = {{PartitionId(0), {BrokerId(1), BrokerId(2), BrokerId(3)}}};
  ASSERT_TRUE(cluster.CreateTopicAndWait(t).ok());
  ProducerNode p(sim.world(), "p1", {{"acks", "1"}, {"retries", "0"}}, nullptr,
                 KafkaRelease::k0_10_0);
  p.Send("warmup");
  ASSERT_TRUE(cluster.RunUntil([&] { return p.Done(1); }, 30 * kSecondUs));
  // Broker 1 loses the leadership; the producer's metadata still names it.
  ASSERT_TRUE(cluster.ExpireSession(BrokerId(1)).ok());
  ASSERT_TRUE(
      cluster.RunUntil([&] { return cluster.LeaderOf(kT0) == BrokerId(2); }, 30 * kSecondUs));
  cluster.RunFor(2 * kSecondUs);  // broker 1 hears it is a follower
  p.Send("refused");
  ASSERT_TRUE(cluster.RunUntil([&] { return p.Done(2); }, 30 * kSecondUs));
  const SendOutcome& outcome = p.Outcome("refused");
  EXPECT_EQ(outcome.error, Errc::kNotLeaderForPartition);
  EXPECT_FALSE(outcome.maybe_written) << "fail: refused before any append";
  EXPECT_EQ(CountValues(LogRecords(cluster, BrokerId(2), kT0))["refused"], 0);
}

TEST(ProducerTest, IdempotentLeaderCrashKeepsEveryRecordOnceAndInOrder) {
  auto sim = StartCluster("producer-idempotent-crash", 18, 1, {}, KafkaRelease::k2_0);
  Cluster& cluster = sim->cluster();
  // 2.1's producer, as in LeaderCrashRetriesReachTheNewLeader: at 2.0 batches queued for 3 s
  // behind the dead leader would expire (failed, never written) before the failover.
  ProducerNode p(sim->world(), "p1",
                 {{"enable.idempotence", "true"}, {"request.timeout.ms", "3000"}}, nullptr,
                 KafkaRelease::k2_1);
  p.SendEvery("i", 200, 20'000);
  const BrokerId old_leader = cluster.LeaderOf(kT0);
  cluster.RunFor(2 * kSecondUs);
  ASSERT_TRUE(cluster.CrashBroker(old_leader).ok());
  ASSERT_TRUE(cluster.RunUntil([&] { return p.Done(200); }, 120 * kSecondUs));
  const BrokerId new_leader = cluster.LeaderOf(kT0);
  ASSERT_NE(new_leader, old_leader);
  const auto log = LogRecords(cluster, new_leader, kT0);
  std::vector<std::string> values;
  for (const auto& [offset, value] : log) values.push_back(value);
  EXPECT_EQ(values, p.send_order()) << "each record once, in send order";
  for (const auto& [value, outcome] : p.outcomes()) EXPECT_EQ(outcome.error, Errc::kNone);
  EXPECT_GT(p.producer().counters().retries, 0u);
  EXPECT_TRUE(sim->NoViolations());
}

// A Produce reaches the leader and is appended, but the way back is cut: the request times out,
// and the retry appends the record again (retries > 0, no idempotence): the at-least-once
// duplicate. With idempotence the broker answers the retry with the original offset.
void LostResponse(bool idempotent, std::vector<std::pair<Offset, std::string>>* log,
                  SendOutcome* outcome) {
  auto sim = StartCluster(idempotent ? "producer-lost-response-idem" : "producer-lost-response", 15,
                          1, {}, idempotent ? KafkaRelease::k2_0 : kSeedKafkaRelease);
  Cluster& cluster = sim->cluster();
  ConfigOverrides settings = {{"acks", "all"},
                              {"retries", "5"},
                              {"request.timeout.ms", "2000"},
                              {"retry.backoff.ms", "100"}};
  if (idempotent) settings.emplace_back("enable.idempotence", "true");
  ProducerNode p(sim->world(), "p1", settings);
  const BrokerId leader = cluster.LeaderOf(kT0);
  // Metadata (and the producer id) first, then the record.
  p.Send("warmup");
  ASSERT_TRUE(cluster.RunUntil([&] { return p.Done(1); }, 30 * kSecondUs));
  ksim::Partition* partition = cluster.broker(leader)->GetPartition(kT0);
  const Offset before = partition->log_end_offset();
  p.Send("once");
  ASSERT_TRUE(
      cluster.RunUntil([&] { return partition->log_end_offset() > before; }, 10 * kSecondUs));
  ASSERT_TRUE(cluster.Partition({{node::Broker(leader)}, {"p1"}}, /*one_way=*/true).ok());
  ASSERT_TRUE(
      cluster.RunUntil([&] { return p.producer().counters().retries > 0; }, 30 * kSecondUs));
  cluster.Heal();
  ASSERT_TRUE(cluster.RunUntil([&] { return p.Done(2); }, 60 * kSecondUs));
  *outcome = p.Outcome("once");
  if (idempotent) {
    EXPECT_NE(p.producer().producer_id(), kNoProducerId);
  }
  ASSERT_TRUE(cluster.RunUntil(
      [&] { return partition->high_watermark() >= partition->log_end_offset(); }, 30 * kSecondUs));
  *log = LogRecords(cluster, leader, kT0);
  EXPECT_TRUE(sim->NoViolations());
}

TEST(ProducerTest, LostResponseWithRetriesWritesTheRecordTwice) {
  std::vector<std::pair<Offset, std::string>> log;
  SendOutcome outcome;
  LostResponse(false, &log, &outcome);
  ASSERT_EQ(outcome.error, Errc::kNone);
  EXPECT_GE(outcome.attempts, 2);
  EXPECT_EQ(CountValues(log)["once"], 2) << "the retry appended it again";
}

TEST(ProducerTest, LostResponseWithIdempotenceWritesTheRecordOnce) {
  std::vector<std::pair<Offset, std::string>> log;
  SendOutcome outcome;
  LostResponse(true, &log, &outcome);
  ASSERT_EQ(outcome.error, Errc::kNone);
  EXPECT_GE(outcome.attempts, 2);
  EXPECT_EQ(CountValues(log)["once"], 1) << "the broker recognised the retry";
  // The retry was answered with the original offset.
  for (const auto& [offset, value] : log) {
    if (value == "once") {
      EXPECT_EQ(outcome.offset, offset);
    }
  }
}

TEST(ProducerTest, AcksZeroDuringLeaderCrashLosesRecordsReportedSent) {
  auto sim = StartCluster("producer-acks0-crash", 16);
  Cluster& cluster = sim->cluster();
  ProducerNode p(sim->world(), "p1", {{"acks", "0"}, {"request.timeout.ms", "3000"}});
  p.SendEvery("z", 300, 10'000);
  const BrokerId old_leader = cluster.LeaderOf(kT0);
  cluster.RunFor(1 * kSecondUs);
  ASSERT_TRUE(cluster.CrashBroker(old_leader).ok());
  ASSERT_TRUE(cluster.RunUntil([&] { return p.Done(300); }, 60 * kSecondUs));
  ASSERT_TRUE(sim->WaitForLeader(kT0, old_leader));
  cluster.RunFor(5 * kSecondUs);
  const std::map<std::string, int> counts =
      CountValues(LogRecords(cluster, cluster.LeaderOf(kT0), kT0));
  int missing = 0;
  for (const auto& [value, outcome] : p.outcomes()) {
    ASSERT_EQ(outcome.error, Errc::kNone) << "acks=0 cannot learn of a failure";
    EXPECT_EQ(outcome.offset, kUndefinedOffset);
    EXPECT_EQ(outcome.attempts, 1);
    if (!counts.count(value)) ++missing;
  }
  EXPECT_GT(missing, 0) << "records sent to the dead leader are gone";
  EXPECT_GT(static_cast<int>(counts.size()), 0) << "records after the failover arrive";
  for (const auto& [value, count] : counts) EXPECT_EQ(count, 1) << value;  // never retried
}

// "t" on broker 1 alone and "dead" on broker 3 alone, for a producer's batches that are sent
// (to "t") and never sent (to "dead", once KillTheDeadTopic crashed broker 3).
void CreateLiveAndDeadTopics(Cluster& cluster) {
  TopicSpec t{"t", 1, 1, {}, {}};
  t.assignment = {{PartitionId(0), {BrokerId(1)}}};
  TopicSpec dead{"dead", 1, 1, {}, {}};
  dead.assignment = {{PartitionId(0), {BrokerId(3)}}};
  ASSERT_TRUE(cluster.CreateTopicAndWait(t).ok());
  ASSERT_TRUE(cluster.CreateTopicAndWait(dead).ok());
}

// "dead" loses its only replica: it has no leader, so a batch for it is never sent.
void KillTheDeadTopic(Cluster& cluster) {
  ASSERT_TRUE(cluster.CrashBroker(BrokerId(3)).ok());
  ASSERT_TRUE(cluster.RunUntil(
      [&] {
        return cluster.LeaderOf({"dead", PartitionId(0)}) == kNoBroker;
      },
      30 * kSecondUs));
}

// Leaves "dead" without a leader, warms `p` (named p1) up on "t" (and on "dead" when
// `warm_dead`: metadata for both topics), cuts broker 1's answers to it, and sends "sent" (written,
// never answered) and "never-sent" (to "dead": never sent). Virtual time has not moved since the
// cut when it returns.
void SendAcrossACutAnswer(Cluster& cluster, ProducerNode& p, bool warm_dead = false) {
  ASSERT_NO_FATAL_FAILURE(KillTheDeadTopic(cluster));
  p.Send("warmup");
  if (warm_dead) p.Send("warmup-dead", std::nullopt, "dead");
  const size_t warm = warm_dead ? 2 : 1;
  ASSERT_TRUE(cluster.RunUntil([&] { return p.Done(warm); }, 30 * kSecondUs));
  ASSERT_TRUE(cluster.Partition({{"broker-1"}, {"p1"}}, /*one_way=*/true).ok());
  p.Send("sent");
  p.Send("never-sent", std::nullopt, "dead");
}

TEST(ProducerTest, DeliveryTimeoutIsUnknownWhenSentAndFailWhenNot) {
  ClusterOptions options;
  options.brokers = 3;
  ClusterSim sim("producer-delivery-timeout", 17, options);
  ASSERT_TRUE(sim.Start());
  Cluster& cluster = sim.cluster();
  ASSERT_NO_FATAL_FAILURE(CreateLiveAndDeadTopics(cluster));
  ProducerNode p(sim.world(), "p1",
                 {{"acks", "1"},
                  {"retries", "1000"},
                  {"request.timeout.ms", "1000"},
                  {"delivery.timeout.ms", "4000"},
                  {"max.block.ms", "5000"}},
                 nullptr, KafkaRelease::k2_1);
  // Answers from broker 1 are cut: the record reaches the log, the producer never hears.
  ASSERT_NO_FATAL_FAILURE(SendAcrossACutAnswer(cluster, p));
  ASSERT_TRUE(cluster.RunUntil([&] { return p.Done(3); }, 60 * kSecondUs));
  const SendOutcome& sent = p.Outcome("sent");
  EXPECT_EQ(sent.error, Errc::kRequestTimedOut);
  EXPECT_TRUE(sent.maybe_written) << "unknown: it may be in the log";
  EXPECT_GE(sent.attempts, 1);
  const SendOutcome& never = p.Outcome("never-sent");
  EXPECT_NE(never.error, Errc::kNone);
  EXPECT_FALSE(never.maybe_written) << "fail: no attempt was made";
  EXPECT_EQ(never.attempts, 0);
  // The unknown one really was written (once per attempt: no idempotence).
  EXPECT_GE(CountValues(LogRecords(cluster, BrokerId(1), kT0))["sent"], 1);
}

// Before 2.1 (here 0.10.0) a batch never sent expires request.timeout.ms after creation + linger
// (Kafka's RecordBatch.maybeExpire: "fail", never written); a batch whose request timed out is
// retried by count (no delivery timeout) and its outcome is unknown when the retries run out.
TEST(ProducerTest, Release010ExpiresQueuedBatchesAfterRequestTimeout) {
  ClusterOptions options;
  options.brokers = 3;
  ClusterSim sim("producer-request-timeout-expiry", 17, options);
  ASSERT_TRUE(sim.Start());
  Cluster& cluster = sim.cluster();
  ASSERT_NO_FATAL_FAILURE(CreateLiveAndDeadTopics(cluster));
  ProducerNode p(
      sim.world(), "p1",
      {{"acks", "1"}, {"retries", "2"}, {"request.timeout.ms", "1000"}, {"max.block.ms", "5000"}},
      nullptr, KafkaRelease::k0_10_0);
  ASSERT_NO_FATAL_FAILURE(SendAcrossACutAnswer(cluster, p, /*warm_dead=*/true));
  const TimeUs sent_us = sim.world().Now();
  ASSERT_TRUE(cluster.RunUntil([&] { return p.Done(4); }, 60 * kSecondUs));
  const SendOutcome& never = p.Outcome("never-sent");
  EXPECT_EQ(never.error, Errc::kRequestTimedOut);
  EXPECT_FALSE(never.maybe_written) << "fail: expired in the accumulator, never sent";
  EXPECT_EQ(never.attempts, 0);
  const SendOutcome& sent = p.Outcome("sent");
  EXPECT_NE(sent.error, Errc::kNone);
  EXPECT_TRUE(sent.maybe_written) << "unknown: its requests timed out, it may be in the log";
  EXPECT_EQ(sent.attempts, 3) << "one attempt and two retries, however long they take";
  // Three request timeouts at least: no delivery timeout cut it short.
  EXPECT_GE(sim.world().Now() - sent_us, 3 * kSecondUs);
}

// Kafka 0.8.2's producer times nothing out on its side (no request.timeout.ms before KIP-19):
// its timeout.ms is only the broker's wait for acks. A batch for a partition without a leader
// waits for one however long (0.10.0 fails it after request.timeout.ms, above), and a request
// whose answer was cut waits for it, however long: a cut is a silence, and TCP retransmits the
// answer after the heal (docs/network.md), so nothing is retried or written twice.
TEST(ProducerTest, Release082NeverTimesOutARequestOrExpiresABatch) {
  ClusterOptions options;
  options.brokers = 3;
  options.kafka_version = KafkaRelease::k0_8_2;
  ClusterSim sim("producer-0.8.2-no-timeouts", 17, options);
  ASSERT_TRUE(sim.Start());
  Cluster& cluster = sim.cluster();
  ASSERT_NO_FATAL_FAILURE(CreateLiveAndDeadTopics(cluster));
  ProducerNode p(sim.world(), "p1",
                 {{"acks", "1"},
                  {"retries", "2"},
                  {"timeout.ms", "1000"},
                  {"metadata.fetch.timeout.ms", "5000"}},
                 nullptr, KafkaRelease::k0_8_2);
  ASSERT_NO_FATAL_FAILURE(SendAcrossACutAnswer(cluster, p));
  const TimeUs sent_us = sim.world().Now();
  // 0.10.0 fails both within 3 s (above); 0.8.2 is still waiting for both at 20 s.
  EXPECT_FALSE(cluster.RunUntil([&] { return p.Done(2); }, 20 * kSecondUs));
  cluster.Heal();
  ASSERT_TRUE(cluster.RunUntil([&] { return p.Done(2); }, 60 * kSecondUs));
  const SendOutcome& sent = p.Outcome("sent");
  EXPECT_EQ(sent.error, Errc::kNone) << "its answer, retransmitted after the heal";
  EXPECT_EQ(sent.attempts, 1) << "nothing timed out, nothing retried";
  EXPECT_GE(sim.world().Now() - sent_us, 20 * kSecondUs);
  EXPECT_EQ(CountValues(LogRecords(cluster, BrokerId(1), kT0))["sent"], 1);
  // The dead topic's batch is never failed: it waits for a leader for ever.
  EXPECT_FALSE(cluster.RunUntil([&] { return p.Done(3); }, 600 * kSecondUs));
  EXPECT_EQ(p.outcomes().count("never-sent"), 0u);
}

}  // namespace
}  // namespace ksim::sim::testing
