// The broker's small parts on their own: the metadata cache, the purgatory with its delayed
// produce and fetch, and the replication-offset-checkpoint file on the virtual disk.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "core/base/random.h"
#include "core/cluster/metadata_cache.h"
#include "core/server/purgatory.h"
#include "core/storage/hw_checkpoint.h"
#include "sim/kernel/event_loop.h"
#include "sim/world/virtual_disk.h"

namespace ksim {
namespace {

const TopicPartition kT0{"t", PartitionId(0)};
const TopicPartition kT1{"t", PartitionId(1)};

BrokerEndpoint Endpoint(int32_t id) {
  return BrokerEndpoint{BrokerId(id), "broker-" + std::to_string(id), 9092, std::nullopt};
}

UpdateMetadataPartitionState State(const TopicPartition& tp, int32_t leader,
                                   std::vector<BrokerId> replicas) {
  UpdateMetadataPartitionState state;
  state.tp = tp;
  state.leader = BrokerId(leader);
  state.leader_epoch = LeaderEpoch(3);
  state.isr = replicas;
  state.replicas = std::move(replicas);
  return state;
}

// Brokers 1-3 alive; t-0 led by 1 on {1, 2}, t-1 led by 2 on {2, 3}.
UpdateMetadataRequest ThreeBrokersTwoPartitions() {
  UpdateMetadataRequest update;
  update.live_brokers = {Endpoint(1), Endpoint(2), Endpoint(3)};
  update.partition_states = {State(kT0, 1, {BrokerId(1), BrokerId(2)}),
                             State(kT1, 2, {BrokerId(2), BrokerId(3)})};
  return update;
}

MetadataRequest AskFor(const std::string& topic) {
  MetadataRequest request;
  request.topics = std::vector<std::string>{topic};
  return request;
}

TEST(MetadataCacheTest, AnswersFromTheLastUpdate) {
  MetadataCache cache;
  UpdateMetadataRequest update;
  update.controller_id = BrokerId(2);
  update.live_brokers = {Endpoint(1), Endpoint(2)};
  update.partition_states = {State(kT0, 1, {BrokerId(1), BrokerId(3)}),
                             State(kT1, 3, {BrokerId(3), BrokerId(1)})};
  cache.Update(update);

  MetadataResponse all = cache.Answer(MetadataRequest{});
  EXPECT_EQ(all.controller_id, BrokerId(2));
  ASSERT_EQ(all.brokers.size(), 2u);
  EXPECT_EQ(all.brokers[1].host, "broker-2");
  ASSERT_EQ(all.topic_metadata.size(), 1u);
  const std::vector<PartitionMetadata>& partitions = all.topic_metadata[0].partition_metadata.get();
  ASSERT_EQ(partitions.size(), 2u);
  EXPECT_EQ(partitions[0].error_code, Errc::kNone);
  EXPECT_EQ(partitions[0].leader, BrokerId(1));
  EXPECT_EQ(partitions[0].leader_epoch, LeaderEpoch(3));
  EXPECT_EQ(partitions[0].offline_replicas, std::vector<BrokerId>{BrokerId(3)});
  // Its leader (3) is not alive: Kafka's LEADER_NOT_AVAILABLE with leader -1.
  EXPECT_EQ(partitions[1].error_code, Errc::kLeaderNotAvailable);
  EXPECT_EQ(partitions[1].leader, kNoBroker);

  MetadataRequest some;
  some.topics = std::vector<std::string>{"nope"};
  EXPECT_EQ(cache.Answer(some).topic_metadata.at(0).error_code, Errc::kUnknownTopicOrPartition);
  EXPECT_EQ(cache.AliveEndpoint(BrokerId(2))->host, "broker-2");
  EXPECT_FALSE(cache.AliveEndpoint(BrokerId(3)).has_value());
}

TEST(MetadataCacheTest, AnAnswerGivenOutKeepsWhatItSaid) {
  // The cache's kept answer and the responses share their partitions' list; an update after a
  // response was given must change the next answer only, never one already given.
  MetadataCache cache;
  UpdateMetadataRequest update = ThreeBrokersTwoPartitions();
  cache.Update(update);
  const MetadataRequest request = AskFor("t");
  const MetadataResponse before = cache.Answer(request);
  const MetadataResponse again = cache.Answer(request);
  EXPECT_TRUE(again.topic_metadata.at(0).partition_metadata.SharesWith(
      before.topic_metadata.at(0).partition_metadata));
  update.partition_states = {State(kT1, 3, {BrokerId(3), BrokerId(2)})};
  cache.Update(update);
  const MetadataResponse after = cache.Answer(request);
  EXPECT_EQ(before.topic_metadata.at(0).partition_metadata[1].leader, BrokerId(2));
  EXPECT_EQ(again, before);
  EXPECT_EQ(after.topic_metadata.at(0).partition_metadata[1].leader, BrokerId(3));
  EXPECT_EQ(after.topic_metadata.at(0).partition_metadata[0],
            before.topic_metadata.at(0).partition_metadata[0]);
}

TEST(MetadataCacheTest, AnAnswerFollowsEveryUpdateAfterIt) {
  // The answers are kept between updates: each of these updates must show in the next one.
  MetadataCache cache;
  UpdateMetadataRequest update = ThreeBrokersTwoPartitions();
  cache.Update(update);
  const MetadataRequest request = AskFor("t");
  auto partitions = [&] { return cache.Answer(request).topic_metadata.at(0).partition_metadata; };
  ASSERT_EQ(partitions().size(), 2u);
  EXPECT_EQ(partitions()[1].leader, BrokerId(2));
  // A partition's new leader, in an update naming only it.
  update.partition_states = {State(kT1, 3, {BrokerId(2), BrokerId(3)})};
  cache.Update(update);
  EXPECT_EQ(partitions()[1].leader, BrokerId(3));
  EXPECT_EQ(partitions()[0].leader, BrokerId(1));
  // A broker gone, in an update naming no partition: its replicas are offline, its leadership
  // not available.
  update.live_brokers = {Endpoint(1), Endpoint(2)};
  update.partition_states.clear();
  cache.Update(update);
  EXPECT_EQ(partitions()[1].error_code, Errc::kLeaderNotAvailable);
  EXPECT_EQ(partitions()[1].offline_replicas, std::vector<BrokerId>{BrokerId(3)});
  EXPECT_TRUE(partitions()[0].offline_replicas.empty());
  // Back: alive again.
  update.live_brokers = {Endpoint(1), Endpoint(2), Endpoint(3)};
  cache.Update(update);
  EXPECT_EQ(partitions()[1].error_code, Errc::kNone);
  EXPECT_EQ(partitions()[1].leader, BrokerId(3));
  // A partition added to the topic.
  update.partition_states = {State(TopicPartition{"t", PartitionId(2)}, 1, {BrokerId(1)})};
  cache.Update(update);
  EXPECT_EQ(partitions().size(), 3u);
  // Deleted.
  update.partition_states = {State(kT0, -2, {BrokerId(1)})};
  cache.Update(update);
  ASSERT_EQ(partitions().size(), 2u);
  EXPECT_EQ(partitions()[0].partition, PartitionId(1));
}

TEST(MetadataCacheTest, LeaderDuringDeleteRemovesThePartition) {
  MetadataCache cache;
  UpdateMetadataRequest update;
  update.live_brokers = {Endpoint(1)};
  update.partition_states = {State(kT0, 1, {BrokerId(1)}), State(kT1, 1, {BrokerId(1)})};
  cache.Update(update);
  update.partition_states = {State(kT0, -2, {BrokerId(1)})};
  cache.Update(update);
  EXPECT_EQ(cache.Partition(kT0), nullptr);
  ASSERT_NE(cache.Partition(kT1), nullptr);
  update.partition_states = {State(kT1, -2, {BrokerId(1)})};
  cache.Update(update);
  EXPECT_FALSE(cache.Contains("t"));
}

// An operation whose completion the test controls.
struct Probe {
  bool ready = false;
  int completions = 0;
  int expirations = 0;
};
class ProbeOperation final : public DelayedOperation {
 public:
  explicit ProbeOperation(Probe& probe) : probe_(probe) {}
  bool TryComplete() override {
    if (!probe_.ready) return false;
    ++probe_.completions;
    return true;
  }
  void OnExpiration() override { ++probe_.expirations; }

 private:
  Probe& probe_;
};

TEST(PurgatoryTest, CompletesAtOnceWhenItCan) {
  sim::EventLoop loop;
  Purgatory purgatory(loop, "test");
  Probe probe;
  probe.ready = true;
  EXPECT_TRUE(purgatory.TryCompleteElseWatch(std::make_unique<ProbeOperation>(probe), 1000, {kT0}));
  EXPECT_EQ(probe.completions, 1);
  EXPECT_EQ(purgatory.size(), 0u);
  EXPECT_EQ(loop.pending(), 0u);  // no timer left behind
}

TEST(PurgatoryTest, WatchedKeyCompletesAndOthersExpire) {
  sim::EventLoop loop;
  Purgatory purgatory(loop, "test");
  Probe a, b;
  EXPECT_FALSE(purgatory.TryCompleteElseWatch(std::make_unique<ProbeOperation>(a), 1000, {kT0}));
  EXPECT_FALSE(
      purgatory.TryCompleteElseWatch(std::make_unique<ProbeOperation>(b), 2000, {kT0, kT1}));
  EXPECT_EQ(purgatory.size(), 2u);
  a.ready = true;
  EXPECT_EQ(purgatory.CheckAndComplete(kT1), 0);  // a does not watch t-1
  EXPECT_EQ(purgatory.CheckAndComplete(kT0), 1);
  EXPECT_EQ(a.completions, 1);
  loop.RunUntil(5000);
  EXPECT_EQ(a.expirations, 0);  // its timer was cancelled
  EXPECT_EQ(b.expirations, 1);
  EXPECT_EQ(b.completions, 0);
  EXPECT_EQ(purgatory.size(), 0u);
}

// Records the order of the checks it gets.
class OrderedOperation final : public DelayedOperation {
 public:
  OrderedOperation(int name, bool& ready, std::vector<int>& tries)
      : name_(name), ready_(ready), tries_(tries) {}
  bool TryComplete() override {
    tries_.push_back(name_);
    return ready_;
  }
  void OnExpiration() override {}

 private:
  int name_;
  bool& ready_;
  std::vector<int>& tries_;
};

TEST(PurgatoryTest, ChecksOldestFirstAndEachOperationOncePerKey) {
  sim::EventLoop loop;
  Purgatory purgatory(loop, "test");
  bool ready = false;
  std::vector<int> tries;
  for (int name : {1, 2, 3}) {
    const std::vector<TopicPartition> keys =
        name == 2 ? std::vector<TopicPartition>{kT0, kT0} : std::vector<TopicPartition>{kT1, kT0};
    EXPECT_FALSE(purgatory.TryCompleteElseWatch(
        std::make_unique<OrderedOperation>(name, ready, tries), 1000, keys));
  }
  tries.clear();
  EXPECT_EQ(purgatory.CheckAndComplete(kT0), 0);
  EXPECT_EQ(tries, (std::vector<int>{1, 2, 3})) << "operation 2 names t-0 twice";
  // Ready: each completes at its check, oldest first, and is never checked again.
  ready = true;
  tries.clear();
  EXPECT_EQ(purgatory.CheckAndComplete(kT0), 3);
  EXPECT_EQ(tries, (std::vector<int>{1, 2, 3}));
  tries.clear();
  EXPECT_EQ(purgatory.CheckAndComplete(kT1), 0);
  EXPECT_EQ(purgatory.CheckAndComplete(kT0), 0);
  EXPECT_TRUE(tries.empty());
  EXPECT_EQ(purgatory.size(), 0u);
}

// A check asks the operations that watched the key when it began, oldest first, however many
// (more than the few it keeps on the stack); one parked on the key by a completion is asked at
// the next check, not this one.
TEST(PurgatoryTest, ACheckAsksTheWatchersItBeganWithOldestFirst) {
  sim::EventLoop loop;
  bool ready = false;
  bool never = false;  // operation 99's readiness: outlives every operation
  std::vector<int> tries;
  class Parking final : public DelayedOperation {
   public:
    Parking(Purgatory& purgatory, bool& ready, bool& never, std::vector<int>& tries)
        : purgatory_(purgatory), ready_(ready), never_(never), tries_(tries) {}
    bool TryComplete() override {
      tries_.push_back(0);
      if (!ready_) return false;
      EXPECT_FALSE(purgatory_.TryCompleteElseWatch(
          std::make_unique<OrderedOperation>(99, never_, tries_), 1000, {kT0}));
      return true;
    }
    void OnExpiration() override {}

   private:
    Purgatory& purgatory_;
    bool& ready_;
    bool& never_;
    std::vector<int>& tries_;
  };
  for (int count : {3, 12}) {
    SCOPED_TRACE(count);
    Purgatory fresh(loop, "test");
    ready = false;
    tries.clear();
    EXPECT_FALSE(fresh.TryCompleteElseWatch(std::make_unique<Parking>(fresh, ready, never, tries),
                                            1000, {kT0}));
    for (int name = 1; name < count; ++name) {
      EXPECT_FALSE(fresh.TryCompleteElseWatch(
          std::make_unique<OrderedOperation>(name, ready, tries), 1000, {kT0}));
    }
    std::vector<int> in_order(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) in_order[static_cast<size_t>(i)] = i;
    tries.clear();
    EXPECT_EQ(fresh.CheckAndComplete(kT0), 0);
    EXPECT_EQ(tries, in_order);
    ready = true;
    tries.clear();
    // Operation 99, parked by the first's completion (its own TryComplete at once, then parked),
    // is not among those this check asks.
    EXPECT_EQ(fresh.CheckAndComplete(kT0), count);
    std::vector<int> expected = {0, 99};
    expected.insert(expected.end(), in_order.begin() + 1, in_order.end());
    EXPECT_EQ(tries, expected);
    tries.clear();
    EXPECT_EQ(fresh.CheckAndComplete(kT0), 0);
    EXPECT_EQ(tries, std::vector<int>{99});
    EXPECT_EQ(fresh.size(), 1u);
  }
}

// A fetch parks on every partition it names and completes by one of them: the watch lists of the
// others keep its id only until the sweep (Kafka's purge), so they do not grow with the fetches.
TEST(PurgatoryTest, CompletedOperationsLeaveTheListsOfKeysNeverChecked) {
  sim::EventLoop loop;
  Purgatory purgatory(loop, "test");
  std::vector<TopicPartition> keys = {kT0};
  for (int p = 0; p < 100; ++p) keys.push_back(TopicPartition{"idle", PartitionId(p)});
  bool ready = false;
  std::vector<int> tries;
  size_t most = 0;
  for (int round = 0; round < 5000; ++round) {
    ready = false;
    ASSERT_FALSE(purgatory.TryCompleteElseWatch(
        std::make_unique<OrderedOperation>(round, ready, tries), 1000, keys));
    most = std::max(most, purgatory.watch_entries());
    ready = true;
    tries.clear();
    ASSERT_EQ(purgatory.CheckAndComplete(kT0), 1);
    ASSERT_EQ(tries, std::vector<int>{round}) << "only the live operation is checked";
  }
  EXPECT_EQ(purgatory.size(), 0u);
  EXPECT_LT(most, 3000u) << "5,000 fetches x 101 keys would leave 505,000 entries";
  EXPECT_GT(most, 101u);
}

// A fetch session parks on the same partitions round after round through watch lists it keeps
// (Purgatory::WatchListOf): they stay where they are while other keys come and go, an operation
// parked on them is checked by its keys, and Clear moves the generation that says they are gone.
TEST(PurgatoryTest, KeptWatchListsStayValidUntilClear) {
  sim::EventLoop loop;
  Purgatory purgatory(loop, "test");
  Purgatory::WatchList* t0 = purgatory.WatchListOf(kT0);
  Purgatory::WatchList* t1 = purgatory.WatchListOf(kT1);
  const uint64_t generation = purgatory.generation();
  bool ready = false;
  std::vector<int> tries;
  for (int round = 0; round < 50; ++round) {
    // Other keys added (the map grows and rehashes) and operations completed between rounds.
    std::vector<TopicPartition> others;
    for (int p = 0; p < 100; ++p)
      others.push_back(TopicPartition{"other", PartitionId(round * 100 + p)});
    ready = false;
    ASSERT_FALSE(purgatory.TryCompleteElseWatch(
        std::make_unique<OrderedOperation>(-1, ready, tries), 1000, others));
    ASSERT_FALSE(purgatory.TryCompleteElseWatchLists(
        std::make_unique<OrderedOperation>(round, ready, tries), 1000, [&](const auto& watch) {
          for (Purgatory::WatchList* list : {t0, t1, t0}) watch(list);
        }));
    ASSERT_EQ(purgatory.WatchListOf(kT0), t0);
    ASSERT_EQ(purgatory.WatchListOf(kT1), t1);
    ready = true;
    tries.clear();
    ASSERT_EQ(purgatory.CheckAndComplete(round % 2 == 0 ? kT0 : kT1), 1);
    ASSERT_EQ(tries, std::vector<int>{round});
    ASSERT_EQ(purgatory.CheckAndComplete(TopicPartition{"other", PartitionId(round * 100)}), 1);
  }
  EXPECT_EQ(purgatory.size(), 0u);
  EXPECT_EQ(purgatory.generation(), generation);
  purgatory.Clear();
  EXPECT_NE(purgatory.generation(), generation);
}

TEST(PurgatoryTest, ClearDropsEverythingUnanswered) {
  sim::EventLoop loop;
  Purgatory purgatory(loop, "test");
  Probe probe;
  EXPECT_FALSE(purgatory.TryCompleteElseWatch(std::make_unique<ProbeOperation>(probe), 10, {kT0}));
  purgatory.Clear();
  loop.RunUntil(1000);
  EXPECT_EQ(probe.expirations, 0);
  EXPECT_EQ(purgatory.CheckAndComplete(kT0), 0);
}

TEST(DelayedProduceTest, TimesOutPendingPartitionsAndKeepsFinishedOnes) {
  ProducePartitionStatus done;
  done.response.tp = kT0;
  done.response.error_code = Errc::kNotLeaderForPartition;
  ProducePartitionStatus waiting;
  waiting.response.tp = kT1;
  waiting.response.base_offset = Offset(5);
  waiting.required_offset = Offset(6);
  waiting.pending = true;
  std::optional<ProduceResponse> answer;
  DelayedProduce produce(
      -1, {done, waiting}, [](const TopicPartition&) { return nullptr; },
      [&](ProduceResponse response) { answer = std::move(response); });
  produce.OnExpiration();
  ASSERT_TRUE(answer.has_value());
  ASSERT_EQ(answer->responses.size(), 2u);
  EXPECT_EQ(answer->responses[0].error_code, Errc::kNotLeaderForPartition);
  EXPECT_EQ(answer->responses[1].error_code, Errc::kRequestTimedOut);
  EXPECT_EQ(answer->responses[1].base_offset, Offset(5));
}

TEST(DelayedProduceTest, AGonePartitionCompletesAsUnknown) {
  ProducePartitionStatus waiting;
  waiting.response.tp = kT0;
  waiting.required_offset = Offset(1);
  waiting.pending = true;
  std::optional<ProduceResponse> answer;
  DelayedProduce produce(
      -1, {waiting}, [](const TopicPartition&) { return nullptr; },
      [&](ProduceResponse response) { answer = std::move(response); });
  EXPECT_TRUE(produce.TryComplete());
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->responses.at(0).error_code, Errc::kUnknownTopicOrPartition);
}

TEST(DelayedFetchTest, WaitsForMinBytesAndAnswersErrorsAtOnce) {
  FetchRequest request;
  request.max_wait_ms = 500;
  request.min_bytes = 10;
  request.partitions.push_back(FetchPartition{kT0, Offset(0), kUndefinedOffset, 1 << 20});
  std::vector<FetchPartitionResponse> read(1);
  read[0].tp = kT0;
  EXPECT_FALSE(FetchCanCompleteNow(request, read));
  read[0].records = Bytes(9, 0);
  EXPECT_FALSE(FetchCanCompleteNow(request, read));
  read[0].records = Bytes(10, 0);
  EXPECT_TRUE(FetchCanCompleteNow(request, read));
  read[0].records.clear();
  read[0].error_code = Errc::kNotLeaderForPartition;
  EXPECT_TRUE(FetchCanCompleteNow(request, read));
  read[0].error_code = Errc::kNone;
  request.max_wait_ms = 0;
  EXPECT_TRUE(FetchCanCompleteNow(request, read));

  request.max_wait_ms = 500;
  int reads = 0;
  std::optional<FetchResponse> answer;
  DelayedFetch fetch(
      request,
      [&](const FetchRequest&) {
        ++reads;
        return read;
      },
      [&](FetchResponse response) { answer = std::move(response); });
  EXPECT_FALSE(fetch.TryComplete());
  EXPECT_FALSE(answer.has_value());
  fetch.OnExpiration();
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(reads, 2);
  EXPECT_EQ(answer->responses.size(), 1u);
}

TEST(DelayedFetchTest, AfterFindingNothingNewAKeyCheckLooksAtThatKeyAlone) {
  // Two partitions, nothing new in either: each later check is of the key that changed only,
  // until a key check finds something (a full read then completes the fetch) or the fetch
  // watches one more key (a full read again).
  sim::EventLoop loop;
  Purgatory purgatory(loop, "test");
  FetchRequest request;
  request.max_wait_ms = 500;
  request.min_bytes = 1;
  request.partitions.push_back(FetchPartition{kT0, Offset(0), kUndefinedOffset, 1 << 20});
  request.partitions.push_back(FetchPartition{kT1, Offset(0), kUndefinedOffset, 1 << 20});
  std::map<TopicPartition, int64_t> bytes = {{kT0, 0}, {kT1, 0}};
  int full_checks = 0;  // release builds only: debug builds walk again at each key check too
  std::vector<TopicPartition> key_checks;
  auto read = [&](const FetchRequest& asked) {
    std::vector<FetchPartitionResponse> responses;
    for (const FetchPartition& partition : asked.partitions) {
      FetchPartitionResponse& response = responses.emplace_back();
      response.tp = partition.tp;
      response.records = Bytes(static_cast<size_t>(bytes[partition.tp]), 0);
    }
    return responses;
  };
  std::optional<FetchResponse> answer;
  auto fetch = std::make_unique<DelayedFetch>(
      request, read,
      [&](const FetchRequest& asked,
          DelayedFetch::Waiting* waiting) -> std::optional<std::vector<FetchPartitionResponse>> {
        ++full_checks;
        std::vector<FetchPartitionResponse> responses = read(asked);
        if (FetchCanCompleteNow(asked, responses)) return responses;
        *waiting = DelayedFetch::Waiting{.nothing = true, .version = 7};
        return std::nullopt;
      },
      [&](const FetchRequest&, const TopicPartition& key, const DelayedFetch::Waiting& waiting) {
        EXPECT_TRUE(waiting.nothing);
        EXPECT_EQ(waiting.version, 7u);
        key_checks.push_back(key);
        return bytes[key] == 0;
      },
      [&](FetchResponse response) { answer = std::move(response); });
  std::vector<TopicPartition> keys = {kT0, kT1};
  uint64_t id = 0;
  EXPECT_FALSE(purgatory.TryCompleteElseWatchLists(
      std::move(fetch), 500 * kUsPerMs,
      [&](const auto& watch) {
        for (const TopicPartition& key : keys) watch(purgatory.WatchListOf(key));
      },
      &id));
  const int parked_checks = full_checks;
  EXPECT_EQ(purgatory.CheckAndComplete(kT1), 0);
  EXPECT_EQ(purgatory.CheckAndComplete(kT0), 0);
  EXPECT_EQ(key_checks, (std::vector<TopicPartition>{kT1, kT0}));
#ifdef NDEBUG
  EXPECT_EQ(full_checks, parked_checks);
#endif
  // A key added: the next check reads them all.
  purgatory.WatchLate(id, *purgatory.WatchListOf(TopicPartition{"t", PartitionId(2)}));
  key_checks.clear();
  EXPECT_EQ(purgatory.CheckAndComplete(kT1), 0);
  EXPECT_TRUE(key_checks.empty());
  EXPECT_GT(full_checks, parked_checks);
  // Something new in kT1: its key check says so, the full read completes the fetch.
  bytes[kT1] = 3;
  EXPECT_EQ(purgatory.CheckAndComplete(kT1), 1);
  EXPECT_EQ(key_checks, (std::vector<TopicPartition>{kT1}));
  ASSERT_TRUE(answer.has_value());
  ASSERT_EQ(answer->responses.size(), 2u);
  EXPECT_EQ(answer->responses[1].records.size(), 3u);
  EXPECT_EQ(purgatory.size(), 0u);
}

TEST(HighWatermarkCheckpointTest, RoundTripsAndSurvivesACrash) {
  sim::VirtualDisk disk{RandomStream(5)};
  ASSERT_TRUE(disk.CreateDir("/kafka-logs").ok());
  Result<std::map<TopicPartition, Offset>> empty = ReadHighWatermarks(disk, "/kafka-logs");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  ASSERT_TRUE(disk.SyncDir("/").ok());
  const std::map<TopicPartition, Offset> hws = {{kT0, Offset(7)}, {kT1, Offset(0)}};
  ASSERT_TRUE(WriteHighWatermarks(disk, "/kafka-logs", hws).ok());
  disk.Crash();  // the write is durable once it returned
  Result<std::map<TopicPartition, Offset>> read = ReadHighWatermarks(disk, "/kafka-logs");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, hws);
}

TEST(HighWatermarkCheckpointTest, DamageIsCorruptionNamingTheLine) {
  sim::VirtualDisk disk{RandomStream(5)};
  ASSERT_TRUE(disk.CreateDir("/d").ok());
  auto file = disk.OpenFile("/d/replication-offset-checkpoint", OpenMode::kTruncate);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append(AsBytes("0\n2\nt 0 5\nt x 6\n")).ok());
  Result<std::map<TopicPartition, Offset>> read = ReadHighWatermarks(disk, "/d");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), Errc::kCorruption);
  EXPECT_NE(read.status().message().find(":4"), std::string::npos) << read.status().ToString();
}

}  // namespace
}  // namespace ksim
