// FetchManager and FetchSessionCache (core/server/fetch_session.h): the behaviours of Kafka
// 1.1's FetchSessionTest (testSessionCache, testResizeCachedSessions, testFetchRequests,
// testIncrementalFetchSession, testZeroSizeFetchSession) and the wire-level rules of KIP-227.
#include "core/server/fetch_session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/base/clock.h"
#include "core/cluster/partition.h"
#include "core/env/posix_env.h"
#include "tests/support/core/temp_dir.h"

namespace ksim {
namespace {

TopicPartition Tp(const std::string& topic, int32_t partition) {
  return TopicPartition{topic, PartitionId(partition)};
}

FetchSession::Partitions Dummy(int size) {
  FetchSession::Partitions partitions;
  for (int i = 0; i < size; ++i) partitions.push_back(CachedPartition{.tp = Tp("test", i)});
  return partitions;
}

class FetchSessionCacheTest : public ::testing::Test {
 protected:
  void ExpectCacheHolds(const FetchSessionCache& cache, std::set<int32_t> ids) {
    for (int32_t id : ids) EXPECT_NE(cache.Get(id), nullptr) << "missing session " << id;
    EXPECT_EQ(cache.size(), ids.size());
  }
};

TEST_F(FetchSessionCacheTest, NewSessionIdsArePositiveAndDistinct) {
  FetchSessionCache cache(FetchSessionConfig{.max_entries = 200, .eviction_ms = 100});
  std::set<int32_t> ids;
  for (int i = 0; i < 200; ++i) {
    const int32_t id = cache.MaybeCreateSession(0, false, Dummy(1));
    EXPECT_GT(id, 0);
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 200u);
}

// Kafka's testSessionCache: three slots, eviction after 100 ms.
TEST_F(FetchSessionCacheTest, EvictsTheStaleThenTheSmallestEvictable) {
  FetchSessionCache cache(FetchSessionConfig{.max_entries = 3, .eviction_ms = 100});
  const int32_t id1 = cache.MaybeCreateSession(0, false, Dummy(10));
  const int32_t id2 = cache.MaybeCreateSession(10, false, Dummy(20));
  const int32_t id3 = cache.MaybeCreateSession(20, false, Dummy(30));
  // Full, and nothing unused for more than 100 ms nor created more than 100 ms ago.
  EXPECT_EQ(cache.MaybeCreateSession(30, false, Dummy(40)), kInvalidSessionId);
  EXPECT_EQ(cache.MaybeCreateSession(40, false, Dummy(5)), kInvalidSessionId);
  ExpectCacheHolds(cache, {id1, id2, id3});
  cache.Touch(*cache.Get(id1), 200);
  // id2 was last used at 10: stale at 210.
  const int32_t id4 = cache.MaybeCreateSession(210, false, Dummy(11));
  ExpectCacheHolds(cache, {id1, id3, id4});
  cache.Touch(*cache.Get(id1), 400);
  cache.Touch(*cache.Get(id3), 390);
  cache.Touch(*cache.Get(id4), 400);
  // None stale; all older than 100 ms, so evictable by all: the smallest (id1, 10) goes for 50.
  const int32_t id5 = cache.MaybeCreateSession(410, false, Dummy(50));
  ExpectCacheHolds(cache, {id3, id4, id5});
  // A client's session of 5 evicts none larger.
  EXPECT_EQ(cache.MaybeCreateSession(410, false, Dummy(5)), kInvalidSessionId);
  // A follower's (privileged) one evicts any non-privileged session: the smallest, id4 (11).
  const int32_t id6 = cache.MaybeCreateSession(410, true, Dummy(5));
  ExpectCacheHolds(cache, {id3, id5, id6});
  EXPECT_EQ(cache.evictions(), 3);
}

// Kafka's testResizeCachedSessions.
TEST_F(FetchSessionCacheTest, CountsPartitionsAtEachTouch) {
  FetchSessionCache cache(FetchSessionConfig{.max_entries = 2, .eviction_ms = 100});
  EXPECT_EQ(cache.total_partitions(), 0);
  const int32_t id1 = cache.MaybeCreateSession(0, false, Dummy(2));
  ASSERT_GT(id1, 0);
  FetchSession& session1 = *cache.Get(id1);
  EXPECT_EQ(session1.partitions.size(), 2u);
  EXPECT_EQ(cache.total_partitions(), 2);
  const int32_t id2 = cache.MaybeCreateSession(0, false, Dummy(4));
  ASSERT_GT(id2, 0);
  FetchSession& session2 = *cache.Get(id2);
  EXPECT_EQ(cache.total_partitions(), 6);
  EXPECT_EQ(cache.evictions(), 0);
  cache.Touch(session1, 200);
  cache.Touch(session2, 200);
  const int32_t id3 = cache.MaybeCreateSession(200, false, Dummy(5));
  ASSERT_GT(id3, 0);
  ExpectCacheHolds(cache, {id2, id3});
  EXPECT_EQ(cache.total_partitions(), 9);
  EXPECT_EQ(cache.evictions(), 1);
  cache.Remove(id3);
  ExpectCacheHolds(cache, {id2});
  EXPECT_EQ(cache.total_partitions(), 4);
  session2.index.erase(session2.partitions.front().tp);
  session2.partitions.pop_front();
  EXPECT_EQ(session2.cached_size, 4);
  cache.Touch(session2, session2.last_used_ms);
  EXPECT_EQ(cache.total_partitions(), 3);
}

TEST_F(FetchSessionCacheTest, NoSlotsMakeNoSession) {
  FetchSessionCache cache(FetchSessionConfig{.max_entries = 0});
  EXPECT_EQ(cache.MaybeCreateSession(0, true, Dummy(1)), kInvalidSessionId);
  EXPECT_EQ(cache.size(), 0u);
}

// ---- FetchManager ----------------------------------------------------------------------------

FetchPartition Asked(const TopicPartition& tp, int64_t offset, int64_t log_start = 0,
                     int32_t max_bytes = 100) {
  return FetchPartition{.tp = tp,
                        .fetch_offset = Offset(offset),
                        .log_start_offset = Offset(log_start),
                        .partition_max_bytes = max_bytes};
}

FetchPartitionResponse Answered(const TopicPartition& tp, int64_t hw, int64_t log_start = 0,
                                size_t record_bytes = 0, Errc error = Errc::kNone) {
  FetchPartitionResponse answer;
  answer.tp = tp;
  answer.error_code = error;
  answer.high_watermark = Offset(hw);
  answer.last_stable_offset = Offset(hw);
  answer.log_start_offset = Offset(log_start);
  answer.records = Bytes(record_bytes, 0);
  return answer;
}

FetchRequest Request(int32_t session_id, int32_t epoch, std::vector<FetchPartition> partitions,
                     std::vector<TopicPartition> forgotten = {}, BrokerId replica = BrokerId(1)) {
  FetchRequest request;
  request.replica_id = replica;
  request.session = FetchSessionRequest{
      .session_id = session_id, .epoch = epoch, .forgotten = std::move(forgotten)};
  request.partitions = std::move(partitions);
  return request;
}

std::vector<TopicPartition> Tps(const std::vector<FetchPartition>& partitions) {
  std::vector<TopicPartition> tps;
  for (const FetchPartition& p : partitions) tps.push_back(p.tp);
  return tps;
}

std::vector<TopicPartition> Tps(const FetchResponse& response) {
  std::vector<TopicPartition> tps;
  for (const FetchPartitionResponse& r : response.responses) tps.push_back(r.tp);
  return tps;
}

class FetchManagerTest : public ::testing::Test {
 protected:
  // Runs one fetch: the context, the answer the broker read (`read` gives each partition of the
  // rewritten request its answer), and the answer sent.
  template <class Read>
  FetchResponse Fetch(FetchRequest request, Read read, int64_t now_ms = 0,
                      FetchContext* context_out = nullptr) {
    FetchContext context = manager_.NewContext(request);
    if (context.kind == FetchContext::Kind::kIncremental) {
      // What the broker's read does with no partition quiet (ReplicaManager::HandleFetch, and
      // Kafka's IncrementalFetchContext): every partition of the session, in its order.
      for (auto it = context.session->partitions.begin(); it != context.session->partitions.end();
           ++it) {
        request.partitions.push_back(it->Request());
        context.order.push_back(it);
      }
    }
    last_read_ = Tps(request.partitions);
    FetchResponse response;
    for (const FetchPartition& asked : request.partitions)
      response.responses.push_back(read(asked));
    manager_.Answer(context, response, now_ms);
    if (context_out != nullptr) *context_out = context;
    return response;
  }

  FetchManager manager_{FetchSessionConfig{.id_seed = 11}};
  std::vector<TopicPartition> last_read_;
  const TopicPartition foo0_ = Tp("foo", 0);
  const TopicPartition foo1_ = Tp("foo", 1);
  const TopicPartition bar0_ = Tp("bar", 0);
};

TEST_F(FetchManagerTest, ARequestWithoutSessionFieldsIsAnsweredWithout) {
  FetchRequest request;
  request.partitions = {Asked(foo0_, 0)};
  FetchContext context = manager_.NewContext(request);
  EXPECT_EQ(context.kind, FetchContext::Kind::kNoMetadata);
  FetchResponse response;
  response.responses = {Answered(foo0_, 5)};
  manager_.Answer(context, response, 0);
  EXPECT_FALSE(response.session.has_value());
  EXPECT_EQ(response.responses.size(), 1u);
  EXPECT_EQ(manager_.cache().size(), 0u);
}

// Kafka's testFetchRequests, step by step.
TEST_F(FetchManagerTest, FullIncrementalAndErrorContexts) {
  auto hw = [](int64_t value) {
    return [value](const FetchPartition& asked) { return Answered(asked.tp, value); };
  };
  // A sessionless fetch (epoch -1): answered in full, no session.
  FetchContext context;
  FetchResponse sessionless =
      Fetch(Request(kInvalidSessionId, kFinalEpoch, {Asked(foo0_, 0), Asked(foo1_, 10)}), hw(20), 0,
            &context);
  EXPECT_EQ(context.kind, FetchContext::Kind::kSessionless);
  ASSERT_TRUE(sessionless.session.has_value());
  EXPECT_EQ(sessionless.session->session_id, kInvalidSessionId);
  EXPECT_EQ(sessionless.responses.size(), 2u);
  EXPECT_EQ(manager_.cache().size(), 0u);

  // A full fetch (epoch 0) opens a session holding both partitions.
  FetchResponse full =
      Fetch(Request(kInvalidSessionId, kInitialEpoch, {Asked(foo0_, 0), Asked(foo1_, 10)}), hw(20),
            0, &context);
  EXPECT_EQ(context.kind, FetchContext::Kind::kFull);
  ASSERT_TRUE(full.session.has_value());
  EXPECT_EQ(full.session->error_code, Errc::kNone);
  const int32_t id = full.session->session_id;
  ASSERT_NE(id, kInvalidSessionId);
  EXPECT_EQ(Tps(full), (std::vector{foo0_, foo1_}));
  ASSERT_NE(manager_.cache().Get(id), nullptr);
  EXPECT_EQ(manager_.cache().Get(id)->epoch, 1);

  // The wrong epoch, an unknown session: errors with no partition, nothing read.
  FetchResponse wrong_epoch = Fetch(Request(id, 5, {}), hw(20), 0, &context);
  EXPECT_EQ(context.kind, FetchContext::Kind::kError);
  EXPECT_TRUE(last_read_.empty());
  EXPECT_EQ(wrong_epoch.session->error_code, Errc::kInvalidFetchSessionEpoch);
  EXPECT_TRUE(wrong_epoch.responses.empty());
  FetchResponse unknown = Fetch(Request(id + 1, 1, {}), hw(20), 0, &context);
  EXPECT_EQ(unknown.session->error_code, Errc::kFetchSessionIdNotFound);
  EXPECT_EQ(unknown.session->session_id, kInvalidSessionId);

  // An incremental fetch naming nothing reads the whole session from the offsets it holds, and
  // answers nothing when nothing changed.
  FetchResponse same = Fetch(Request(id, 1, {}), hw(20), 0, &context);
  EXPECT_EQ(context.kind, FetchContext::Kind::kIncremental);
  EXPECT_EQ(last_read_, (std::vector{foo0_, foo1_}));
  EXPECT_EQ(same.session->error_code, Errc::kNone);
  EXPECT_EQ(same.session->session_id, id);
  EXPECT_TRUE(same.responses.empty());
  // The epoch moved on: 1 again is refused.
  FetchResponse replayed = Fetch(Request(id, 1, {}), hw(20), 0, &context);
  EXPECT_EQ(replayed.session->error_code, Errc::kInvalidFetchSessionEpoch);

  // Epoch 0 with the id closes that session; epoch -1 with it closes it and opens none.
  FetchResponse again = Fetch(Request(id, kInitialEpoch, {Asked(foo0_, 0)}), hw(20));
  const int32_t id2 = again.session->session_id;
  EXPECT_NE(id2, kInvalidSessionId);
  EXPECT_EQ(manager_.cache().Get(id), nullptr);
  FetchResponse closed = Fetch(Request(id2, kFinalEpoch, {Asked(foo0_, 0)}), hw(20));
  EXPECT_EQ(closed.session->session_id, kInvalidSessionId);
  EXPECT_EQ(closed.responses.size(), 1u);
  EXPECT_EQ(manager_.cache().size(), 0u);
}

// Kafka's testIncrementalFetchSession and CachedPartition.updateResponseData.
TEST_F(FetchManagerTest, AnIncrementalAnswerNamesOnlyThePartitionsWithNews) {
  const int32_t id =
      Fetch(Request(kInvalidSessionId, kInitialEpoch, {Asked(foo0_, 0), Asked(foo1_, 10)}),
            [](const FetchPartition& asked) { return Answered(asked.tp, 20); })
          .session->session_id;
  ASSERT_NE(id, kInvalidSessionId);
  // Forget foo-0, move foo-1 to offset 15, add bar-0: the session reads foo-1 (from 15) and bar-0.
  std::vector<FetchPartition> read;
  FetchResponse second = Fetch(Request(id, 1, {Asked(foo1_, 15), Asked(bar0_, 0)}, {foo0_}),
                               [&](const FetchPartition& asked) {
                                 read.push_back(asked);
                                 return Answered(asked.tp, 20);
                               });
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].tp, foo1_);
  EXPECT_EQ(read[0].fetch_offset, Offset(15));
  EXPECT_EQ(read[1].tp, bar0_);
  // foo-1's HW is the one last sent (20): implied. bar-0 is new to the session: sent.
  EXPECT_EQ(Tps(second), (std::vector{bar0_}));

  auto answer = [](int64_t foo_hw, size_t bar_bytes, int64_t bar_log_start = 0,
                   Errc foo_error = Errc::kNone) {
    return [=](const FetchPartition& asked) {
      if (asked.tp.topic == "foo") return Answered(asked.tp, foo_hw, 0, 0, foo_error);
      return Answered(asked.tp, 20, bar_log_start, bar_bytes);
    };
  };
  // Records are always sent; so is a new HW or log start.
  EXPECT_EQ(Tps(Fetch(Request(id, 2, {}), answer(20, 7))), (std::vector{bar0_}));
  EXPECT_EQ(Tps(Fetch(Request(id, 3, {}), answer(21, 0))), (std::vector{foo1_}));
  EXPECT_EQ(Tps(Fetch(Request(id, 4, {}), answer(21, 0, 3))), (std::vector{bar0_}));
  EXPECT_TRUE(Fetch(Request(id, 5, {}), answer(21, 0, 3)).responses.empty());
  // An error is sent, and so is the partition once the error is gone (its HW was forgotten).
  EXPECT_EQ(Tps(Fetch(Request(id, 6, {}), answer(21, 0, 3, Errc::kNotLeaderForPartition))),
            (std::vector{foo1_}));
  EXPECT_EQ(Tps(Fetch(Request(id, 7, {}), answer(21, 0, 3))), (std::vector{foo1_}));
  EXPECT_TRUE(Fetch(Request(id, 8, {}), answer(21, 0, 3)).responses.empty());
}

TEST_F(FetchManagerTest, AnsweredPartitionsMoveToTheSessionsEnd) {
  const int32_t id = Fetch(Request(kInvalidSessionId, kInitialEpoch,
                                   {Asked(foo0_, 0), Asked(foo1_, 0), Asked(bar0_, 0)}),
                           [](const FetchPartition& asked) { return Answered(asked.tp, 5); })
                         .session->session_id;
  // foo-0 has records: answered, so read last next time.
  Fetch(Request(id, 1, {}), [&](const FetchPartition& asked) {
    return Answered(asked.tp, 5, 0, asked.tp == foo0_ ? 10 : 0);
  });
  EXPECT_EQ(last_read_, (std::vector{foo0_, foo1_, bar0_}));
  Fetch(Request(id, 2, {}), [](const FetchPartition& asked) { return Answered(asked.tp, 5); });
  EXPECT_EQ(last_read_, (std::vector{foo1_, bar0_, foo0_}));
}

// What the next fetch of a session reads (FetchSession::to_read; the broker takes out the
// partitions it holds quiet, tests/integration/server/broker_fetch_session_test.cc): every
// partition of a new session, a partition added or named again, not one forgotten; in the
// session's order, answered partitions last.
TEST_F(FetchManagerTest, ASessionReadsItsPartitionsInItsOrder) {
  const int32_t id = Fetch(Request(kInvalidSessionId, kInitialEpoch,
                                   {Asked(foo0_, 0), Asked(foo1_, 0), Asked(bar0_, 0)}),
                           [](const FetchPartition& asked) { return Answered(asked.tp, 0); })
                         .session->session_id;
  std::shared_ptr<FetchSession> session = manager_.cache().Get(id);
  ASSERT_NE(session, nullptr);
  auto to_read = [&] {
    std::vector<TopicPartition> tps;
    for (const auto& it : session->ToReadInOrder()) tps.push_back(it->tp);
    return tps;
  };
  EXPECT_EQ(to_read(), (std::vector{foo0_, foo1_, bar0_}));
  // foo-0 answered with records: it moves to the end of the order.
  Fetch(Request(id, 1, {}), [&](const FetchPartition& asked) {
    return Answered(asked.tp, 0, 0, asked.tp == foo0_ ? 10 : 0);
  });
  EXPECT_EQ(to_read(), (std::vector{foo1_, bar0_, foo0_}));
  const TopicPartition baz0 = Tp("baz", 0);
  Fetch(Request(id, 2, {Asked(baz0, 0)}, {foo1_}),
        [](const FetchPartition& asked) { return Answered(asked.tp, 0); });
  EXPECT_EQ(to_read(), (std::vector{bar0_, foo0_, baz0}));
  EXPECT_EQ(session->index.count(foo1_), 0u);
}

// One random change of `session`: a partition added, forgotten or moved to the end, or, with a
// `holder`, held quiet in it or released.
void ChangeAtRandom(FetchSession& session, std::mt19937_64& random, int& next_partition,
                    Partition* holder) {
  const size_t size = session.partitions.size();
  const uint64_t choice = random() % (holder != nullptr ? 6 : 4);
  if (size == 0 || choice == 0) {
    session.Add(CachedPartition{.tp = TopicPartition{"t", PartitionId(next_partition++)}});
    return;
  }
  auto it = session.partitions.begin();
  std::advance(it, static_cast<std::ptrdiff_t>(random() % size));
  if (choice == 1) {
    session.Forget(it);
  } else if (choice == 2 || holder == nullptr) {
    session.MoveToEnd(it);
  } else if (choice <= 4) {
    if (it->quiet_in == nullptr) session.Hold(it, *holder, kNoBroker);
  } else {
    session.Unquiet(it);
  }
}

// The partitions ToReadInOrder names, and those it should: every one not held quiet, in the
// session's list order.
std::vector<TopicPartition> ReadOrder(FetchSession& session) {
  std::vector<TopicPartition> ordered;
  for (const auto& it : session.ToReadInOrder()) ordered.push_back(it->tp);
  return ordered;
}
std::vector<TopicPartition> NotQuiet(const FetchSession& session) {
  std::vector<TopicPartition> listed;
  for (const CachedPartition& cached : session.partitions) {
    if (cached.quiet_in == nullptr) listed.push_back(cached.tp);
  }
  return listed;
}

// The order a session's partitions are read in follows every change of the session: partitions
// added, forgotten and moved to the end at random (none held quiet here: every partition is to be
// read, in the session's list order).
TEST(FetchSessionTest, ReadOrderFollowsAddsForgetsAndMoves) {
  FetchSession session;
  std::mt19937_64 random(38);
  int next_partition = 0;
  for (int step = 0; step < 3000; ++step) {
    ChangeAtRandom(session, random, next_partition, nullptr);
    const std::vector<TopicPartition> listed = NotQuiet(session);
    ASSERT_EQ(listed.size(), session.partitions.size()) << "step " << step;
    ASSERT_EQ(ReadOrder(session), listed) << "step " << step;
    ASSERT_EQ(session.to_read.size(), listed.size()) << "step " << step;
  }
}

// The same with quiet holds: partitions held quiet in a Partition and released at random too
// (FetchSession drops the ones held from its order lazily, at the next ToReadInOrder, which is
// asked for only after some of the changes).
TEST(FetchSessionTest, ReadOrderFollowsHoldsAndReleases) {
  PosixEnv env;
  testing::TempDir tmp;
  ManualClock clock(0);
  const std::string dir = JoinPath(tmp.path(), "t-0");
  auto log = Log::Open(env, clock, dir, LogConfig{});
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  auto epochs = LeaderEpochCache::Open(env, dir);
  ASSERT_TRUE(epochs.ok()) << epochs.status().ToString();
  auto producers = Partition::LoadProducerState(env, **log, 0);
  ASSERT_TRUE(producers.ok()) << producers.status().ToString();
  Partition holder(TopicPartition{"t", PartitionId(0)}, BrokerId(1), **log,
                   std::move(epochs).value(), std::move(producers).value(), clock,
                   PartitionConfig{}, Offset(0), [](std::string_view, const EventFields&) {});
  FetchSession session;
  std::mt19937_64 random(41);
  int next_partition = 0;
  for (int step = 0; step < 4000; ++step) {
    ChangeAtRandom(session, random, next_partition, &holder);
    if (random() % 3 == 0) continue;
    const std::vector<TopicPartition> expected = NotQuiet(session);
    ASSERT_EQ(ReadOrder(session), expected) << "step " << step;
    ASSERT_EQ(session.to_read.size(), expected.size()) << "step " << step;
  }
  for (auto it = session.partitions.begin(); it != session.partitions.end(); ++it) {
    session.Unquiet(it);
  }
}

// Kafka's testZeroSizeFetchSession: a session whose last partition is forgotten closes.
TEST_F(FetchManagerTest, ASessionLeftEmptyCloses) {
  const int32_t id =
      Fetch(Request(kInvalidSessionId, kInitialEpoch, {Asked(foo0_, 0), Asked(foo1_, 10)}),
            [](const FetchPartition& asked) { return Answered(asked.tp, 20); })
          .session->session_id;
  FetchContext context;
  FetchResponse response = Fetch(
      Request(id, 1, {}, {foo0_, foo1_}),
      [](const FetchPartition& asked) { return Answered(asked.tp, 20); }, 0, &context);
  EXPECT_EQ(context.kind, FetchContext::Kind::kSessionless);
  EXPECT_EQ(response.session->session_id, kInvalidSessionId);
  EXPECT_EQ(response.session->error_code, Errc::kNone);
  EXPECT_EQ(manager_.cache().size(), 0u);
}

TEST_F(FetchManagerTest, ARequestOverlappingAnotherOfItsSessionIsRefusedAtItsAnswer) {
  const int32_t id = Fetch(Request(kInvalidSessionId, kInitialEpoch, {Asked(foo0_, 0)}),
                           [](const FetchPartition& asked) { return Answered(asked.tp, 1); })
                         .session->session_id;
  FetchRequest first = Request(id, 1, {});
  FetchContext first_context = manager_.NewContext(first);
  // The next epoch's request comes before the first is answered (a client that resent it).
  FetchResponse second =
      Fetch(Request(id, 2, {}), [](const FetchPartition& asked) { return Answered(asked.tp, 2); });
  EXPECT_EQ(second.session->error_code, Errc::kNone);
  FetchResponse late;
  late.responses = {Answered(foo0_, 3)};
  manager_.Answer(first_context, late, 0);
  EXPECT_EQ(late.session->error_code, Errc::kInvalidFetchSessionEpoch);
  EXPECT_EQ(late.session->session_id, id);
  EXPECT_TRUE(late.responses.empty());
}

TEST_F(FetchManagerTest, AClientSessionCannotEvictAFollowers) {
  FetchManager manager(FetchSessionConfig{.max_entries = 1});
  auto open = [&](BrokerId replica) {
    FetchRequest request =
        Request(kInvalidSessionId, kInitialEpoch, {Asked(foo0_, 0)}, {}, replica);
    FetchContext context = manager.NewContext(request);
    FetchResponse response;
    response.responses = {Answered(foo0_, 1)};
    manager.Answer(context, response, 0);
    return response.session->session_id;
  };
  const int32_t follower = open(BrokerId(2));
  ASSERT_NE(follower, kInvalidSessionId);
  EXPECT_TRUE(manager.cache().Get(follower)->privileged);
  EXPECT_EQ(open(kConsumerReplicaId), kInvalidSessionId);
  EXPECT_NE(manager.cache().Get(follower), nullptr);
}

}  // namespace
}  // namespace ksim
