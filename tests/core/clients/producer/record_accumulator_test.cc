// RecordAccumulator: batching by batch.size, linger, readiness per leader, drain order, retries
// at the head keeping their sequence, idempotent in-flight rules and sequence bookkeeping
// (Kafka 2.0), expiry. Cases follow Kafka's RecordAccumulatorTest (testFull, testAppendLarge,
// testLinger, testPartialDrain, testRetryBackoff, testFlush, testExpiredBatches,
// testMutedPartitions) where they apply.
#include "core/clients/producer/record_accumulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace ksim {
namespace {

const TopicPartition kTp0{"t", PartitionId(0)};
const TopicPartition kTp1{"t", PartitionId(1)};
const TopicPartition kTp2{"t", PartitionId(2)};
const BrokerId kNode1{1};
const BrokerId kNode2{2};

RecordInput Value(size_t size) {
  RecordInput record;
  record.timestamp_ms = 0;
  record.value = Bytes(size, 'x');
  return record;
}

// tp0 and tp1 on node 1, tp2 on node 2 (Kafka's test cluster layout).
std::optional<BrokerId> Leaders(const TopicPartition& tp) {
  if (tp.topic != "t") return std::nullopt;
  return tp.partition.value() == 2 ? kNode2 : kNode1;
}

AccumulatorConfig Config(int32_t batch_size = 1024, int64_t linger_ms = 0) {
  AccumulatorConfig config;
  config.batch_size = batch_size;
  config.linger_ms = linger_ms;
  config.retry_backoff_ms = 100;
  config.delivery_timeout_ms = 10000;
  return config;
}

// Records of 100 bytes of value: 121 estimated each; a 1024-byte batch (61 header) holds 7.
constexpr int kPerBatch = (1024 - 61) / 121;

TEST(RecordAccumulatorTest, FullBatchIsReadyAndDrainsInAppendOrder) {
  RecordAccumulator acc(Config(1024, /*linger_ms=*/10));
  for (int i = 0; i < kPerBatch; ++i) {
    const auto result = acc.Append(kTp0, Value(100), i, 0);
    EXPECT_EQ(result.new_batch, i == 0);
    EXPECT_EQ(acc.Ready(Leaders, 0).ready_nodes.size(), 0u) << "not full yet at " << i;
  }
  const auto result = acc.Append(kTp0, Value(100), kPerBatch, 0);
  EXPECT_TRUE(result.new_batch);
  EXPECT_TRUE(result.batch_full);
  EXPECT_EQ(acc.Ready(Leaders, 0).ready_nodes, std::set<BrokerId>{kNode1});
  std::vector<ProducerBatch*> drained = acc.Drain(Leaders, kNode1, 0);
  ASSERT_EQ(drained.size(), 1u);
  ASSERT_EQ(drained[0]->record_count(), kPerBatch);
  for (int i = 0; i < kPerBatch; ++i) EXPECT_EQ(drained[0]->record_ids[i], uint64_t(i));
  EXPECT_EQ(drained[0]->attempts, 1);
  EXPECT_TRUE(drained[0]->in_flight);
  // The second batch lingers.
  EXPECT_EQ(acc.Ready(Leaders, 0).ready_nodes.size(), 0u);
}

TEST(RecordAccumulatorTest, LargeRecordGetsItsOwnBatch) {
  RecordAccumulator acc(Config(1024, 10));
  const auto big = acc.Append(kTp0, Value(4000), 1, 0);
  EXPECT_TRUE(big.new_batch);
  EXPECT_TRUE(big.batch_full);
  const auto next = acc.Append(kTp0, Value(10), 2, 0);
  EXPECT_TRUE(next.new_batch);
  EXPECT_NE(next.batch, big.batch);
  std::vector<ProducerBatch*> drained = acc.Drain(Leaders, kNode1, 0);
  ASSERT_EQ(drained.size(), 1u);
  EXPECT_EQ(drained[0]->record_count(), 1);
  EXPECT_EQ(drained[0]->record_ids[0], 1u);
}

TEST(RecordAccumulatorTest, LingerHoldsABatchUntilItPasses) {
  RecordAccumulator acc(Config(1024, 10));
  acc.Append(kTp0, Value(10), 1, 0);
  auto ready = acc.Ready(Leaders, 0);
  EXPECT_TRUE(ready.ready_nodes.empty());
  EXPECT_EQ(ready.next_ready_check_delay_ms, 10);
  ready = acc.Ready(Leaders, 4);
  EXPECT_EQ(ready.next_ready_check_delay_ms, 6);
  ready = acc.Ready(Leaders, 10);
  EXPECT_EQ(ready.ready_nodes, std::set<BrokerId>{kNode1});
  std::vector<ProducerBatch*> drained = acc.Drain(Leaders, kNode1, 10);
  ASSERT_EQ(drained.size(), 1u);
  EXPECT_EQ(drained[0]->record_count(), 1);
}

TEST(RecordAccumulatorTest, ZeroLingerSendsAtOnce) {
  RecordAccumulator acc(Config(1024, 0));
  acc.Append(kTp0, Value(10), 1, 0);
  EXPECT_EQ(acc.Ready(Leaders, 0).ready_nodes, std::set<BrokerId>{kNode1});
}

TEST(RecordAccumulatorTest, ReadyAndDrainPerLeaderOneBatchPerPartition) {
  RecordAccumulator acc(Config(1024, 0));
  for (const TopicPartition& tp : {kTp0, kTp1, kTp2}) {
    for (int i = 0; i < 2 * kPerBatch; ++i) acc.Append(tp, Value(100), i, 0);
  }
  EXPECT_EQ(acc.Ready(Leaders, 0).ready_nodes, (std::set<BrokerId>{kNode1, kNode2}));
  std::vector<ProducerBatch*> node1 = acc.Drain(Leaders, kNode1, 0);
  ASSERT_EQ(node1.size(), 2u);  // tp0 and tp1, one batch each, in partition order
  EXPECT_EQ(node1[0]->tp, kTp0);
  EXPECT_EQ(node1[1]->tp, kTp1);
  std::vector<ProducerBatch*> node2 = acc.Drain(Leaders, kNode2, 0);
  ASSERT_EQ(node2.size(), 1u);
  EXPECT_EQ(node2[0]->tp, kTp2);
  // A second drain takes each partition's next batch.
  std::vector<ProducerBatch*> again = acc.Drain(Leaders, kNode1, 0);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0]->record_ids[0], uint64_t(kPerBatch));
}

TEST(RecordAccumulatorTest, DrainStopsAtMaxRequestSizeButAlwaysTakesOne) {
  AccumulatorConfig config = Config(1024, 0);
  config.max_request_size = 1000;
  RecordAccumulator acc(config);
  for (const TopicPartition& tp : {kTp0, kTp1}) {
    for (int i = 0; i < kPerBatch; ++i) acc.Append(tp, Value(100), i, 0);
  }
  EXPECT_EQ(acc.Drain(Leaders, kNode1, 0).size(), 1u);
  EXPECT_EQ(acc.Drain(Leaders, kNode1, 0).size(), 1u);
}

// The walks over queued batches (Ready, Drain, Expire, AbortQueued, HasUndrained) visit only
// the partitions with a queued batch, kept as queues fill and empty; the order stays the
// partitions' order whatever order the queues filled in.
TEST(RecordAccumulatorTest, QueuedPartitionsFollowEveryQueueChange) {
  AccumulatorConfig config = Config(1024, /*linger_ms=*/0);
  config.expiry = ExpiryForm::kRequestTimeout;
  config.request_timeout_ms = 1000;
  RecordAccumulator acc(config);
  EXPECT_FALSE(acc.HasUndrained());
  acc.Append(kTp1, Value(100), 1, 0);
  acc.Append(kTp2, Value(100), 2, 0);
  acc.Append(kTp0, Value(100), 3, 0);
  EXPECT_TRUE(acc.HasUndrained());
  EXPECT_EQ(acc.Ready(Leaders, 0).ready_nodes, (std::set<BrokerId>{kNode1, kNode2}));
  std::vector<ProducerBatch*> drained = acc.Drain(Leaders, kNode1, 0);
  ASSERT_EQ(drained.size(), 2u);
  EXPECT_EQ(drained[0]->tp, kTp0);  // partition order, not append order
  EXPECT_EQ(drained[1]->tp, kTp1);
  EXPECT_EQ(acc.Ready(Leaders, 0).ready_nodes, std::set<BrokerId>{kNode2});
  ASSERT_EQ(acc.Drain(Leaders, kNode2, 0).size(), 1u);
  EXPECT_FALSE(acc.HasUndrained());
  EXPECT_TRUE(acc.Ready(Leaders, 0).ready_nodes.empty());
  EXPECT_EQ(acc.NextExpiryDelayMs(0), INT64_MAX);
  // A retry queues its partition again; completing it (Forget) empties it.
  const BatchId retried = drained[1]->id;
  acc.Reenqueue(retried, 10);
  EXPECT_TRUE(acc.HasUndrained());
  EXPECT_EQ(acc.Queue(kTp1).size(), 1u);
  EXPECT_NE(acc.NextExpiryDelayMs(10), INT64_MAX);
  acc.Complete(retried);
  EXPECT_FALSE(acc.HasUndrained());
  EXPECT_TRUE(acc.AbortQueued().empty());
  // Expiry (request.timeout.ms) walks the queued partitions in order and empties them.
  acc.Append(kTp2, Value(100), 4, 20);
  acc.Append(kTp0, Value(100), 5, 20);
  std::vector<std::unique_ptr<ProducerBatch>> expired = acc.Expire(20 + 1001);
  ASSERT_EQ(expired.size(), 2u);
  EXPECT_EQ(expired[0]->tp, kTp0);
  EXPECT_EQ(expired[1]->tp, kTp2);
  EXPECT_FALSE(acc.HasUndrained());
  // AbortQueued in partition order too.
  acc.Append(kTp2, Value(100), 6, 30);
  acc.Append(kTp1, Value(100), 7, 30);
  std::vector<std::unique_ptr<ProducerBatch>> aborted = acc.AbortQueued();
  ASSERT_EQ(aborted.size(), 2u);
  EXPECT_EQ(aborted[0]->tp, kTp1);
  EXPECT_EQ(aborted[1]->tp, kTp2);
  EXPECT_FALSE(acc.HasUndrained());
  EXPECT_TRUE(acc.Ready(Leaders, 30).ready_nodes.empty());
}

TEST(RecordAccumulatorTest, UnknownLeaderIsReportedByTopic) {
  RecordAccumulator acc(Config());
  acc.Append(TopicPartition{"other", PartitionId(0)}, Value(10), 1, 0);
  const auto ready = acc.Ready(Leaders, 0);
  EXPECT_TRUE(ready.ready_nodes.empty());
  EXPECT_EQ(ready.unknown_leader_topics, std::set<std::string>{"other"});
}

TEST(RecordAccumulatorTest, RetryWaitsForBackoffAndGoesFirst) {
  RecordAccumulator acc(Config(1024, 0));
  acc.Append(kTp0, Value(10), 1, 0);
  std::vector<ProducerBatch*> first = acc.Drain(Leaders, kNode1, 0);
  ASSERT_EQ(first.size(), 1u);
  const BatchId retried = first[0]->id;
  acc.Append(kTp0, Value(10), 2, 5);  // a new batch: the sent one is closed for appends
  acc.Reenqueue(retried, 10);
  EXPECT_EQ(acc.Queue(kTp0).front(), retried);
  // Backing off: the partition is not ready although the new batch behind it would be.
  auto ready = acc.Ready(Leaders, 50);
  EXPECT_TRUE(ready.ready_nodes.empty());
  EXPECT_EQ(ready.next_ready_check_delay_ms, 60);
  EXPECT_TRUE(acc.Drain(Leaders, kNode1, 50).empty());
  ready = acc.Ready(Leaders, 110);
  EXPECT_EQ(ready.ready_nodes, std::set<BrokerId>{kNode1});
  std::vector<ProducerBatch*> again = acc.Drain(Leaders, kNode1, 110);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0]->id, retried);
  EXPECT_EQ(again[0]->attempts, 2);
  EXPECT_EQ(again[0]->record_count(), 1);
}

TEST(RecordAccumulatorTest, FlushMakesLingeringBatchesReady) {
  RecordAccumulator acc(Config(1024, 1000));
  acc.Append(kTp0, Value(10), 1, 0);
  EXPECT_TRUE(acc.Ready(Leaders, 0).ready_nodes.empty());
  acc.BeginFlush();
  EXPECT_EQ(acc.Ready(Leaders, 0).ready_nodes, std::set<BrokerId>{kNode1});
  acc.EndFlush();
  EXPECT_TRUE(acc.Ready(Leaders, 0).ready_nodes.empty());
  acc.Close();
  EXPECT_EQ(acc.Ready(Leaders, 0).ready_nodes, std::set<BrokerId>{kNode1});
}

TEST(RecordAccumulatorTest, ExpiryByDeliveryTimeoutQueuedAndInFlight) {
  RecordAccumulator acc(Config(1024, 0));
  acc.Append(kTp0, Value(10), 1, 0);
  acc.Append(kTp1, Value(10), 2, 0);
  ASSERT_EQ(acc.Drain(Leaders, kNode1, 0).size(), 2u);
  acc.Append(kTp0, Value(10), 3, 100);  // queued, never sent
  EXPECT_EQ(acc.NextExpiryDelayMs(5000), 5000);
  EXPECT_TRUE(acc.Expire(9999).empty());
  std::vector<std::unique_ptr<ProducerBatch>> expired = acc.Expire(10000);
  ASSERT_EQ(expired.size(), 2u);  // both in flight; their fate is unknown
  EXPECT_TRUE(expired[0]->maybe_written);
  EXPECT_TRUE(expired[1]->maybe_written);
  EXPECT_EQ(acc.in_flight_count(), 0u);
  expired = acc.Expire(10100);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_FALSE(expired[0]->maybe_written);  // never sent
  EXPECT_EQ(expired[0]->record_ids[0], 3u);
  EXPECT_EQ(acc.record_count(), 0);
}

// Kafka 0.10.0 to 2.0 (RecordBatch.maybeExpire, RecordAccumulator.abortExpiredBatches): only
// queued batches expire, request.timeout.ms after creation + linger (not full), after the last
// append (full), or after the last attempt + backoff (in retry); an in-flight batch never does.
AccumulatorConfig RequestTimeoutExpiry(int64_t linger_ms) {
  AccumulatorConfig config = Config(1024, linger_ms);
  config.expiry = ExpiryForm::kRequestTimeout;
  config.request_timeout_ms = 1000;
  config.delivery_timeout_ms = 10000;  // unused in this form
  return config;
}

TEST(RecordAccumulatorTest, RequestTimeoutExpiryLeavesInFlightBatchesAlone) {
  RecordAccumulator acc(RequestTimeoutExpiry(/*linger_ms=*/0));
  acc.Append(kTp0, Value(10), 1, 0);
  ASSERT_EQ(acc.Drain(Leaders, kNode1, 0).size(), 1u);
  acc.Append(kTp1, Value(10), 2, 0);  // queued: its leader is never drained below
  EXPECT_EQ(acc.NextExpiryDelayMs(0), 1001) << "request.timeout.ms < elapsed";
  EXPECT_TRUE(acc.Expire(1000).empty());
  std::vector<std::unique_ptr<ProducerBatch>> expired = acc.Expire(1001);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0]->tp, kTp1);
  EXPECT_FALSE(expired[0]->maybe_written);
  EXPECT_TRUE(acc.Expire(100000).empty()) << "the batch in flight waits for its answer";
  EXPECT_EQ(acc.in_flight_count(), 1u);
}

TEST(RecordAccumulatorTest, RequestTimeoutExpiryCountsLingerLastAppendAndBackoff) {
  RecordAccumulator acc(RequestTimeoutExpiry(/*linger_ms=*/500));
  // Not full: creation + linger + request.timeout.ms, whatever was appended since.
  acc.Append(kTp0, Value(10), 1, 0);
  acc.Append(kTp0, Value(10), 2, 400);
  EXPECT_TRUE(acc.Expire(1500).empty());
  EXPECT_EQ(acc.Expire(1501).size(), 1u);
  // Full (a second batch behind it): the last append + request.timeout.ms, before the linger.
  for (int i = 0; i <= kPerBatch; ++i) acc.Append(kTp1, Value(100), 10 + i, 2000 + i);
  ASSERT_EQ(acc.Queue(kTp1).size(), 2u);
  const int64_t last_append_ms = 2000 + kPerBatch - 1;
  EXPECT_TRUE(acc.Expire(last_append_ms + 1000).empty());
  std::vector<std::unique_ptr<ProducerBatch>> expired = acc.Expire(last_append_ms + 1001);
  ASSERT_EQ(expired.size(), 1u) << "the walk stops at the lingering second batch";
  EXPECT_EQ(expired[0]->record_count(), kPerBatch);
  acc.Complete(acc.Queue(kTp1).front());
  // In retry: the last attempt + retry.backoff.ms + request.timeout.ms.
  acc.Append(kTp2, Value(10), 20, 10000);
  ProducerBatch* sent = acc.Drain(Leaders, kNode2, 10500).at(0);
  acc.Reenqueue(sent->id, 10600);
  EXPECT_EQ(acc.NextExpiryDelayMs(10600), 100 + 1000 + 1);
  EXPECT_TRUE(acc.Expire(11700).empty());
  expired = acc.Expire(11701);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0]->attempts, 1);
}

TEST(RecordAccumulatorTest, RequestTimeoutExpirySkipsAPartitionMutedForOrdering) {
  AccumulatorConfig config = RequestTimeoutExpiry(/*linger_ms=*/0);
  config.max_in_flight_requests_per_connection = 1;
  RecordAccumulator acc(config);
  acc.Append(kTp0, Value(10), 1, 0);
  ProducerBatch* first = acc.Drain(Leaders, kNode1, 0).at(0);
  acc.Append(kTp0, Value(10), 2, 0);
  EXPECT_EQ(acc.NextExpiryDelayMs(0), INT64_MAX);
  EXPECT_TRUE(acc.Expire(5000).empty()) << "muted while the first batch is in flight";
  acc.Complete(first->id);
  EXPECT_EQ(acc.Expire(5000).size(), 1u);
}

// The first time the batch at `index` of `tp`'s queue expires under request.timeout.ms, from its
// fields alone (RecordAccumulator's ExpiryForm::kRequestTimeout rule), or nullopt when the queue is
// muted or has no such batch.
std::optional<int64_t> ExpiryByRule(RecordAccumulator& acc, const TopicPartition& tp,
                                    size_t index) {
  const AccumulatorConfig& config = acc.config();
  const std::deque<BatchId>& queue = acc.Queue(tp);
  if (index >= queue.size()) return std::nullopt;
  if (config.max_in_flight_requests_per_connection == 1 && acc.InFlightCount(tp) > 0) {
    return std::nullopt;
  }
  const ProducerBatch& batch = *acc.Find(queue[index]);
  const int64_t limit_ms = config.request_timeout_ms + 1;
  if (batch.retry) return batch.last_attempt_ms + config.retry_backoff_ms + limit_ms;
  int64_t at_ms = batch.created_ms + config.linger_ms + limit_ms;
  if (index + 1 < queue.size() || batch.size_bytes >= config.batch_size) {
    at_ms = std::min(at_ms, batch.last_append_ms + limit_ms);
  }
  return at_ms;
}

// Expire and NextExpiryDelayMs look only at the partitions whose head is due (an index kept at
// every change); they answer what a walk over every queue answers, through random appends,
// drains, retries, completions and expiries, muted (max.in.flight 1) or not.
TEST(RecordAccumulatorTest, RequestTimeoutExpiryIndexAnswersAsAWalkOverEveryQueue) {
  for (const int32_t max_in_flight : {1, 5}) {
    for (const int64_t linger_ms : {0, 50}) {
      AccumulatorConfig config = RequestTimeoutExpiry(linger_ms);
      config.max_in_flight_requests_per_connection = max_in_flight;
      RecordAccumulator acc(config);
      std::vector<TopicPartition> tps;
      for (int p = 0; p < 6; ++p) tps.push_back(TopicPartition{"t", PartitionId(p)});
      std::mt19937_64 random(static_cast<uint64_t>(max_in_flight * 100 + linger_ms));
      std::vector<BatchId> live;  // batches not completed, queued or in flight
      int64_t now_ms = 0;
      uint64_t next_record = 1;
      int expired_total = 0;
      for (int step = 0; step < 4000; ++step) {
        const uint64_t op = random() % 10;
        if (op < 4) {
          const RecordAccumulator::AppendResult result = acc.Append(
              tps[random() % tps.size()], Value(50 + random() % 400), next_record++, now_ms);
          if (result.new_batch) live.push_back(result.batch);
        } else if (op < 6) {
          acc.Drain(Leaders, random() % 2 ? kNode1 : kNode2, now_ms);
        } else if (op == 6 && !live.empty()) {
          const BatchId id = live[random() % live.size()];
          if (acc.Find(id)->in_flight) acc.Reenqueue(id, now_ms);
        } else if (op == 7 && !live.empty()) {
          const size_t at = random() % live.size();
          acc.Complete(live[at]);
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(at));
        } else {
          now_ms += static_cast<int64_t>(random() % 400);
        }
        // The walk: each unmuted queue from its head while its batches are due.
        std::vector<BatchId> due;
        int64_t next_ms = INT64_MAX;
        for (const TopicPartition& tp : tps) {
          if (std::optional<int64_t> head = ExpiryByRule(acc, tp, 0)) {
            next_ms = std::min(next_ms, *head);
          }
          for (size_t i = 0;; ++i) {
            std::optional<int64_t> at_ms = ExpiryByRule(acc, tp, i);
            if (!at_ms || now_ms < *at_ms) break;
            due.push_back(acc.Queue(tp)[i]);
          }
        }
        ASSERT_EQ(acc.NextExpiryDelayMs(now_ms),
                  next_ms == INT64_MAX ? INT64_MAX : std::max<int64_t>(0, next_ms - now_ms))
            << "step " << step;
        std::vector<BatchId> expired;
        for (const std::unique_ptr<ProducerBatch>& batch : acc.Expire(now_ms)) {
          expired.push_back(batch->id);
          std::erase(live, batch->id);
        }
        ASSERT_EQ(expired, due) << "step " << step;
        expired_total += static_cast<int>(expired.size());
      }
      EXPECT_GT(expired_total, 10) << "the schedule expires batches";
    }
  }
}

// Ready and Drain walk the queued partitions leader by leader and keep the grouping between
// calls of one leaders generation. Through random appends, drains, retries, completions, clock
// moves and leader changes (each a new generation), an accumulator that keeps its groups answers
// as one that groups again at every call, and Ready answers as Kafka's ready() walk over every
// queued partition in order does (a leader already ready skips the rest of its partitions).
TEST(RecordAccumulatorTest, LeaderGroupsAnswerAsAWalkOverEveryQueue) {
  for (const int64_t linger_ms : {0, 50}) {
    SCOPED_TRACE("linger.ms " + std::to_string(linger_ms));
    AccumulatorConfig config = Config(1024, linger_ms);
    config.max_request_size = 1500;  // a drain stops after a few batches
    RecordAccumulator kept(config);
    RecordAccumulator regrouped(config);
    std::vector<TopicPartition> tps;
    for (int p = 0; p < 8; ++p) tps.push_back(TopicPartition{p < 6 ? "t" : "u", PartitionId(p)});
    std::vector<std::optional<BrokerId>> leader(tps.size());
    std::mt19937_64 random(static_cast<uint64_t>(linger_ms + 17));
    auto pick_leader = [&]() -> std::optional<BrokerId> {
      const uint64_t n = random() % 4;
      if (n == 3) return std::nullopt;
      return BrokerId(static_cast<int32_t>(n + 1));
    };
    for (std::optional<BrokerId>& l : leader) l = pick_leader();
    auto leader_of = [&](const TopicPartition& tp) {
      return leader[static_cast<size_t>(tp.partition.value())];
    };
    uint64_t generation = 1;
    std::vector<BatchId> live;
    int64_t now_ms = 0;
    uint64_t next_record = 1;
    size_t drained_total = 0;
    int leader_changes = 0;
    for (int step = 0; step < 5000; ++step) {
      const uint64_t op = random() % 12;
      if (op < 4) {
        const TopicPartition& tp = tps[random() % tps.size()];
        const size_t size = 50 + random() % 400;
        const RecordAccumulator::AppendResult result =
            kept.Append(tp, Value(size), next_record, now_ms);
        ASSERT_EQ(regrouped.Append(tp, Value(size), next_record, now_ms).batch, result.batch);
        ++next_record;
        if (result.new_batch) live.push_back(result.batch);
      } else if (op < 7) {
        const BrokerId node(static_cast<int32_t>(random() % 3 + 1));
        std::vector<BatchId> a;
        std::vector<BatchId> b;
        for (ProducerBatch* batch : kept.Drain(leader_of, generation, node, now_ms)) {
          a.push_back(batch->id);
        }
        for (ProducerBatch* batch : regrouped.Drain(leader_of, node, now_ms))
          b.push_back(batch->id);
        ASSERT_EQ(a, b) << "step " << step;
        drained_total += a.size();
      } else if (op == 7 && !live.empty()) {
        const BatchId id = live[random() % live.size()];
        if (kept.Find(id)->in_flight) {
          kept.Reenqueue(id, now_ms);
          regrouped.Reenqueue(id, now_ms);
        }
      } else if (op == 8 && !live.empty()) {
        const size_t at = random() % live.size();
        kept.Complete(live[at]);
        regrouped.Complete(live[at]);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(at));
      } else if (op == 9) {
        leader[random() % leader.size()] = pick_leader();
        ++generation;
        ++leader_changes;
      } else {
        now_ms += static_cast<int64_t>(random() % 120);
      }
      // Kafka's ready(): every queued partition in order.
      RecordAccumulator::ReadyResult walk;
      for (const TopicPartition& tp : tps) {
        const std::deque<BatchId>& queue = kept.Queue(tp);
        if (queue.empty()) continue;
        const std::optional<BrokerId> l = leader_of(tp);
        if (!l) {
          walk.unknown_leader_topics.insert(tp.topic);
          continue;
        }
        if (walk.ready_nodes.count(*l)) continue;
        const ProducerBatch& first = *kept.Find(queue.front());
        const int64_t waited = now_ms - first.last_attempt_ms;
        const bool backing_off = first.retry && waited < config.retry_backoff_ms;
        const int64_t time_to_wait = first.retry ? config.retry_backoff_ms : config.linger_ms;
        const bool full = queue.size() > 1 || first.size_bytes >= config.batch_size;
        if ((full || waited >= time_to_wait) && !backing_off) {
          walk.ready_nodes.insert(*l);
        } else {
          walk.next_ready_check_delay_ms =
              std::min(walk.next_ready_check_delay_ms, std::max<int64_t>(0, time_to_wait - waited));
        }
      }
      const RecordAccumulator::ReadyResult a = kept.Ready(leader_of, generation, now_ms);
      const RecordAccumulator::ReadyResult b = regrouped.Ready(leader_of, now_ms);
      for (const RecordAccumulator::ReadyResult* result : {&a, &b}) {
        ASSERT_EQ(result->ready_nodes, walk.ready_nodes) << "step " << step;
        ASSERT_EQ(result->unknown_leader_topics, walk.unknown_leader_topics) << "step " << step;
        ASSERT_EQ(result->next_ready_check_delay_ms, walk.next_ready_check_delay_ms)
            << "step " << step;
      }
    }
    EXPECT_GT(drained_total, 500u);
    EXPECT_GT(leader_changes, 100);
  }
}

TEST(RecordAccumulatorTest, MaxInFlightOneMutesThePartition) {
  AccumulatorConfig config = Config(1024, 0);
  config.max_in_flight_requests_per_connection = 1;
  RecordAccumulator acc(config);
  acc.Append(kTp0, Value(10), 1, 0);
  ProducerBatch* first = acc.Drain(Leaders, kNode1, 0).at(0);
  acc.Append(kTp0, Value(10), 2, 0);
  EXPECT_TRUE(acc.Drain(Leaders, kNode1, 0).empty());  // muted while the first is in flight
  acc.Complete(first->id);
  EXPECT_EQ(acc.Drain(Leaders, kNode1, 0).size(), 1u);
}

AccumulatorConfig Idempotent() {
  AccumulatorConfig config = Config(1024, 0);
  config.idempotent = true;
  return config;
}

// `count` batches of t-0 with one record each, every one drained (sequences 0, 1, ...).
std::vector<ProducerBatch*> SendOneRecordBatches(RecordAccumulator& acc, int count) {
  std::vector<ProducerBatch*> sent;
  for (int i = 0; i < count; ++i) {
    acc.Append(kTp0, Value(10), i, 0);
    sent.push_back(acc.Drain(Leaders, kNode1, 0).at(0));
  }
  return sent;
}

TEST(RecordAccumulatorTest, SequencesAssignedAtFirstDrainAndKeptOnRetry) {
  RecordAccumulator acc(Idempotent());
  acc.SetProducerIdAndEpoch(ProducerId(7), ProducerEpoch(0));
  acc.Append(kTp0, Value(10), 1, 0);
  acc.Append(kTp0, Value(10), 2, 0);
  ProducerBatch* a = acc.Drain(Leaders, kNode1, 0).at(0);
  EXPECT_EQ(a->producer_id, ProducerId(7));
  EXPECT_EQ(a->base_sequence, Sequence(0));
  EXPECT_EQ(a->record_count(), 2);
  acc.Append(kTp0, Value(10), 3, 0);
  ProducerBatch* b = acc.Drain(Leaders, kNode1, 0).at(0);
  EXPECT_EQ(b->base_sequence, Sequence(2));
  EXPECT_EQ(acc.NextSequence(kTp0), Sequence(3));
  // Both fail; b (out of order) comes back first, then a. The queue keeps sequence order.
  acc.Reenqueue(b->id, 1);
  acc.Reenqueue(a->id, 1);
  ASSERT_EQ(acc.Queue(kTp0).size(), 2u);
  EXPECT_EQ(acc.Queue(kTp0)[0], a->id);
  EXPECT_EQ(acc.Queue(kTp0)[1], b->id);
  ProducerBatch* retry = acc.Drain(Leaders, kNode1, 200).at(0);
  EXPECT_EQ(retry->id, a->id);
  EXPECT_EQ(retry->base_sequence, Sequence(0));  // kept
  EXPECT_EQ(acc.NextSequence(kTp0), Sequence(3));
}

TEST(RecordAccumulatorTest, IdempotentRetryWaitsForLowerSequencesInFlight) {
  RecordAccumulator acc(Idempotent());
  acc.SetProducerIdAndEpoch(ProducerId(7), ProducerEpoch(0));
  std::vector<ProducerBatch*> sent = SendOneRecordBatches(acc, 3);
  // The second failed while the first is still in flight: it must not overtake it.
  acc.Reenqueue(sent[1]->id, 0);
  EXPECT_TRUE(acc.Drain(Leaders, kNode1, 500).empty());
  acc.OnAcked(*sent[0], Offset(0));
  acc.Complete(sent[0]->id);
  EXPECT_EQ(acc.LastAckedSequence(kTp0), Sequence(0));
  std::vector<ProducerBatch*> retry = acc.Drain(Leaders, kNode1, 500);
  ASSERT_EQ(retry.size(), 1u);
  EXPECT_EQ(retry[0]->id, sent[1]->id);
  EXPECT_EQ(retry[0]->base_sequence, Sequence(1));
}

TEST(RecordAccumulatorTest, IdempotentAtMostFiveBatchesInFlightPerPartition) {
  RecordAccumulator acc(Idempotent());
  acc.SetProducerIdAndEpoch(ProducerId(7), ProducerEpoch(0));
  for (int i = 0; i < 7; ++i) {
    acc.Append(kTp0, Value(10), i, 0);
    acc.Drain(Leaders, kNode1, 0);
  }
  EXPECT_EQ(acc.InFlightCount(kTp0), 5u);
  // The last two records wait in one batch, still open for appends.
  ASSERT_EQ(acc.Queue(kTp0).size(), 1u);
  EXPECT_EQ(acc.Find(acc.Queue(kTp0).front())->record_count(), 2);
}

// Kafka 2.0's drain assigns numbers only when !batch.hasSequence(): a batch that may have been
// written keeps its producer id and sequence after a reset, and only new batches take the new id
// from sequence 0 (issue 17: renumbering such a batch wrote it twice).
TEST(RecordAccumulatorTest, ProducerIdResetKeepsTheNumbersOfBatchesAlreadySent) {
  RecordAccumulator acc(Idempotent());
  acc.SetProducerIdAndEpoch(ProducerId(7), ProducerEpoch(0));
  acc.Append(kTp0, Value(10), 1, 0);
  ProducerBatch* a = acc.Drain(Leaders, kNode1, 0).at(0);
  acc.Reenqueue(a->id, 0);
  acc.ResetProducerId();
  EXPECT_EQ(acc.producer_id(), kNoProducerId);
  acc.SetProducerIdAndEpoch(ProducerId(8), ProducerEpoch(0));
  EXPECT_EQ(acc.NextSequence(kTp0), Sequence(0));
  acc.Append(kTp0, Value(10), 2, 0);
  ProducerBatch* again = acc.Drain(Leaders, kNode1, 200).at(0);
  EXPECT_EQ(again->id, a->id);
  EXPECT_EQ(again->producer_id, ProducerId(7));
  EXPECT_EQ(again->base_sequence, Sequence(0));
  EXPECT_FALSE(acc.HasCurrentProducerId(*again));
  EXPECT_EQ(acc.NextSequence(kTp0), Sequence(0));
  ProducerBatch* fresh = acc.Drain(Leaders, kNode1, 200).at(0);
  EXPECT_EQ(fresh->producer_id, ProducerId(8));
  EXPECT_EQ(fresh->base_sequence, Sequence(0));
  EXPECT_EQ(acc.NextSequence(kTp0), Sequence(1));
}

// Kafka's adjustSequencesDueToFailedBatch: a batch refused before any append leaves a gap that
// the later sequenced batches close.
TEST(RecordAccumulatorTest, FailedBatchMovesTheLaterSequencesDown) {
  RecordAccumulator acc(Idempotent());
  acc.SetProducerIdAndEpoch(ProducerId(7), ProducerEpoch(0));
  std::vector<ProducerBatch*> sent;
  for (int i = 0; i < 3; ++i) {
    acc.Append(kTp0, Value(10), 2 * i, 0);
    acc.Append(kTp0, Value(10), 2 * i + 1, 0);
    sent.push_back(acc.Drain(Leaders, kNode1, 0).at(0));
  }
  EXPECT_EQ(sent[2]->base_sequence, Sequence(4));
  std::unique_ptr<ProducerBatch> failed = acc.Complete(sent[0]->id);
  acc.AdjustSequencesAfterFailedBatch(*failed);
  EXPECT_EQ(sent[1]->base_sequence, Sequence(0));
  EXPECT_EQ(sent[2]->base_sequence, Sequence(2));
  EXPECT_TRUE(sent[1]->sequence_reset);
  EXPECT_EQ(acc.NextSequence(kTp0), Sequence(4));
  // Sent again, the batch is closed (ProducerBatch.close): the answer to this attempt is not one
  // to the attempt its sequence was rewritten under (explore safe seed 710080 at 2.0: a batch
  // answered UNKNOWN_PRODUCER_ID was retried for ever under its old numbers).
  acc.Reenqueue(sent[1]->id, 0);
  ProducerBatch* again = acc.Drain(Leaders, kNode1, 200).at(0);
  EXPECT_EQ(again->id, sent[1]->id);
  EXPECT_EQ(again->base_sequence, Sequence(0));
  EXPECT_FALSE(again->sequence_reset);
  EXPECT_TRUE(sent[2]->sequence_reset);  // still in flight under the attempt it was moved in
  // A batch of an older id moves nothing.
  acc.ResetProducerId();
  acc.SetProducerIdAndEpoch(ProducerId(8), ProducerEpoch(0));
  std::unique_ptr<ProducerBatch> stale = acc.Complete(sent[1]->id);
  acc.AdjustSequencesAfterFailedBatch(*stale);
  EXPECT_EQ(sent[2]->base_sequence, Sequence(2));
  EXPECT_EQ(acc.NextSequence(kTp0), Sequence(0));
}

// An expired batch that was sent: no new batch of its partition goes out until the batches after
// it are answered; all acknowledged means it was written (resolved), otherwise a new id.
TEST(RecordAccumulatorTest, ExpiredSentBatchLeavesItsPartitionUnresolvedUntilLaterOnesAnswer) {
  for (bool later_acked : {true, false}) {
    SCOPED_TRACE(later_acked ? "the later batch acknowledged" : "the later batch failed too");
    RecordAccumulator acc(Idempotent());
    acc.SetProducerIdAndEpoch(ProducerId(7), ProducerEpoch(0));
    acc.Append(kTp0, Value(10), 1, 0);
    ProducerBatch* a = acc.Drain(Leaders, kNode1, 0).at(0);
    acc.Append(kTp0, Value(10), 2, 0);
    ProducerBatch* b = acc.Drain(Leaders, kNode1, 0).at(0);
    std::unique_ptr<ProducerBatch> expired = acc.Complete(a->id);
    acc.MarkSequenceUnresolved(kTp0);
    acc.Append(kTp0, Value(10), 3, 0);
    EXPECT_TRUE(acc.Drain(Leaders, kNode1, 0).empty());
    EXPECT_FALSE(acc.ShouldResetProducerIdAfterResolvingSequences());  // b still out
    if (later_acked) acc.OnAcked(*b, Offset(1));
    acc.Complete(b->id);
    EXPECT_EQ(acc.ShouldResetProducerIdAfterResolvingSequences(), !later_acked);
    EXPECT_EQ(acc.HasUnresolvedSequence(kTp0), !later_acked);
    if (later_acked) {
      ProducerBatch* c = acc.Drain(Leaders, kNode1, 0).at(0);
      EXPECT_EQ(c->base_sequence, Sequence(2));
    }
  }
}

// Kafka's startSequencesAtBeginning: UNKNOWN_PRODUCER_ID after retention removed the producer's
// records renumbers the partition's sequenced batches from 0.
TEST(RecordAccumulatorTest, StartSequencesAtBeginningRenumbersTheSequencedBatches) {
  RecordAccumulator acc(Idempotent());
  acc.SetProducerIdAndEpoch(ProducerId(7), ProducerEpoch(0));
  std::vector<ProducerBatch*> sent = SendOneRecordBatches(acc, 3);
  acc.OnAcked(*sent[0], Offset(40));
  acc.Complete(sent[0]->id);
  EXPECT_EQ(acc.LastAckedSequence(kTp0), Sequence(0));
  EXPECT_EQ(acc.LastAckedOffset(kTp0), Offset(40));
  acc.StartSequencesAtBeginning(kTp0);
  EXPECT_EQ(sent[1]->base_sequence, Sequence(0));
  EXPECT_EQ(sent[2]->base_sequence, Sequence(1));
  EXPECT_EQ(acc.NextSequence(kTp0), Sequence(2));
  EXPECT_EQ(acc.LastAckedSequence(kTp0), Sequence(-1));
}

}  // namespace
}  // namespace ksim
