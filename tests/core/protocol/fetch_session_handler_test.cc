// FetchSessionHandler (core/protocol/fetch_session_handler.h): the client side of a KIP-227 fetch
// session. The behaviours Kafka 1.1's FetchSessionHandlerTest checks (testSessionless,
// testIncrementals, testIncrementalPartitionRemoval), in ksim's partition order, and the answers
// that do not match the session.
#include "core/protocol/fetch_session_handler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace ksim {
namespace {

FetchPartition At(const std::string& topic, int partition, int64_t offset, int64_t log_start,
                  int32_t max_bytes) {
  return FetchPartition{.tp = TopicPartition{topic, PartitionId(partition)},
                        .fetch_offset = Offset(offset),
                        .log_start_offset = Offset(log_start),
                        .partition_max_bytes = max_bytes};
}

TopicPartition Tp(const std::string& topic, int partition) {
  return TopicPartition{topic, PartitionId(partition)};
}

// An answer naming `tps` with the session fields `id` / `error`.
FetchResponse Answer(std::vector<TopicPartition> tps, int32_t id, Errc error = Errc::kNone) {
  FetchResponse response;
  for (TopicPartition& tp : tps) response.responses.push_back(FetchPartitionResponse{.tp = tp});
  response.session = FetchSessionResponse{.error_code = error, .session_id = id};
  return response;
}

std::vector<TopicPartition> Tps(const std::vector<FetchPartition>& partitions) {
  std::vector<TopicPartition> out(partitions.size());
  std::transform(partitions.begin(), partitions.end(), out.begin(),
                 [](const FetchPartition& p) { return p.tp; });
  return out;
}

std::vector<TopicPartition> SessionTps(const FetchSessionHandler& handler) {
  std::vector<TopicPartition> out;
  for (const auto& [tp, partition] : handler.partitions()) out.push_back(tp);
  return out;
}

TEST(FetchSessionHandlerTest, ASessionlessAnswerKeepsEveryFetchFull) {
  FetchSessionHandler handler;
  FetchSessionHandler::Request first =
      handler.Build({At("foo", 0, 0, 100, 200), At("foo", 1, 10, 110, 210)});
  EXPECT_EQ(Tps(first.partitions), (std::vector{Tp("foo", 0), Tp("foo", 1)}));
  EXPECT_TRUE(handler.full());
  EXPECT_EQ(handler.Metadata({}).session_id, kInvalidSessionId);
  EXPECT_EQ(handler.Metadata({}).epoch, kInitialEpoch);

  EXPECT_TRUE(
      handler.HandleResponse(Answer({Tp("foo", 0), Tp("foo", 1)}, kInvalidSessionId)).apply);
  // No session was made: the next fetch is full again and names only what is wanted now.
  FetchSessionHandler::Request second = handler.Build({At("foo", 0, 0, 100, 200)});
  EXPECT_EQ(handler.Metadata({}).session_id, kInvalidSessionId);
  EXPECT_EQ(handler.Metadata({}).epoch, kInitialEpoch);
  EXPECT_EQ(Tps(second.partitions), std::vector{Tp("foo", 0)});
  EXPECT_TRUE(second.forgotten.empty());
  EXPECT_EQ(SessionTps(handler), std::vector{Tp("foo", 0)});
}

TEST(FetchSessionHandlerTest, AnIncrementalFetchNamesWhatWasAddedThenWhatChanged) {
  FetchSessionHandler handler;
  handler.Build({At("foo", 0, 0, 100, 200), At("foo", 1, 10, 110, 210)});
  ASSERT_TRUE(handler.HandleResponse(Answer({Tp("foo", 0), Tp("foo", 1)}, 123)).apply);
  EXPECT_FALSE(handler.full());
  EXPECT_EQ(handler.session_id(), 123);
  EXPECT_EQ(handler.Metadata({}).epoch, 1);

  // foo-1's log start moved and bar-0 joins; foo-0 is as sent.
  FetchSessionHandler::Request second = handler.Build(
      {At("bar", 0, 20, 200, 200), At("foo", 0, 0, 100, 200), At("foo", 1, 10, 120, 210)});
  EXPECT_EQ(Tps(second.partitions), (std::vector{Tp("bar", 0), Tp("foo", 1)}));
  EXPECT_EQ(second.partitions[1].log_start_offset, Offset(120));
  EXPECT_TRUE(second.forgotten.empty());
  EXPECT_EQ(SessionTps(handler), (std::vector{Tp("bar", 0), Tp("foo", 0), Tp("foo", 1)}));
  ASSERT_NE(handler.Find(Tp("foo", 1)), nullptr);
  EXPECT_EQ(handler.Find(Tp("foo", 1))->log_start_offset, Offset(120));

  // An incremental answer names only the partitions with news.
  ASSERT_TRUE(handler.HandleResponse(Answer({Tp("foo", 1)}, 123)).apply);
  EXPECT_EQ(handler.Metadata({}).epoch, 2);
  // Nothing changed: nothing named, nothing forgotten, the session goes on.
  FetchSessionHandler::Request idle = handler.Build(
      {At("bar", 0, 20, 200, 200), At("foo", 0, 0, 100, 200), At("foo", 1, 10, 120, 210)});
  EXPECT_TRUE(idle.partitions.empty());
  EXPECT_TRUE(idle.forgotten.empty());

  // INVALID_FETCH_SESSION_EPOCH: the next fetch is full and closes the session it names.
  FetchSessionHandler::Verdict verdict =
      handler.HandleResponse(Answer({}, kInvalidSessionId, Errc::kInvalidFetchSessionEpoch));
  EXPECT_FALSE(verdict.apply);
  EXPECT_EQ(verdict.reset, "INVALID_FETCH_SESSION_EPOCH");
  EXPECT_TRUE(handler.full());
  EXPECT_EQ(handler.Metadata({}).session_id, 123);
  FetchSessionHandler::Request full = handler.Build(
      {At("bar", 0, 20, 200, 200), At("foo", 0, 0, 100, 200), At("foo", 1, 10, 120, 210)});
  EXPECT_EQ(full.partitions.size(), 3u);
}

// Incremental builds against their definition, over random wants: the partitions named are those
// added (in partition order), then those whose fetch changed (in partition order); the forgotten
// are the session's partitions no longer wanted (in order); the session becomes what is wanted.
TEST(FetchSessionHandlerTest, IncrementalBuildsNameExactlyTheAddedTheChangedAndTheForgotten) {
  FetchSessionHandler handler;
  handler.Build({At("t", 0, 0, 0, 100)});
  ASSERT_TRUE(handler.HandleResponse(Answer({Tp("t", 0)}, 7)).apply);
  std::map<TopicPartition, FetchPartition> session = {{Tp("t", 0), At("t", 0, 0, 0, 100)}};
  std::mt19937_64 random(227);
  for (int round = 0; round < 500; ++round) {
    std::vector<FetchPartition> wanted;
    for (const std::string topic : {"a", "t"}) {
      for (int partition = 0; partition < 12; ++partition) {
        if (random() % 3 == 0) continue;
        wanted.push_back(At(topic, partition, static_cast<int64_t>(random() % 3), 0, 100));
      }
    }
    std::vector<TopicPartition> added;
    std::vector<TopicPartition> changed;
    std::vector<TopicPartition> forgotten;
    std::map<TopicPartition, FetchPartition> next;
    for (const FetchPartition& want : wanted) {
      next.emplace(want.tp, want);
      auto was = session.find(want.tp);
      if (was == session.end()) {
        added.push_back(want.tp);
      } else if (was->second.fetch_offset != want.fetch_offset) {
        changed.push_back(want.tp);
      }
    }
    for (const auto& [tp, partition] : session) {
      if (!next.contains(tp)) forgotten.push_back(tp);
    }
    std::vector<TopicPartition> named = added;
    named.insert(named.end(), changed.begin(), changed.end());

    const FetchSessionHandler::Request request = handler.Build(wanted);
    ASSERT_EQ(Tps(request.partitions), named) << "round " << round;
    ASSERT_EQ(request.forgotten, forgotten) << "round " << round;
    session = std::move(next);
    std::vector<TopicPartition> session_tps;
    for (const auto& [tp, partition] : session) session_tps.push_back(tp);
    ASSERT_EQ(SessionTps(handler), session_tps) << "round " << round;
    ASSERT_TRUE(handler.HandleResponse(Answer({}, 7)).apply);
  }
}

// A fetcher that knows which partitions may have changed builds from those alone
// (BuildChanged): the same requests and the same session as Build over every partition, and
// nothing at all when nothing would be fetched.
TEST(FetchSessionHandlerTest, BuildingFromTheChangesAloneMatchesBuildingFromEveryPartition) {
  std::vector<TopicPartition> all;
  for (const std::string topic : {"a", "t"}) {
    for (int partition = 0; partition < 10; ++partition) all.push_back(Tp(topic, partition));
  }
  // What each partition fetches now (nullopt: not fetchable), as the fetcher sees it.
  std::map<TopicPartition, std::optional<int64_t>> now;
  for (const TopicPartition& tp : all) now[tp] = 0;
  FetchSessionHandler walked;
  FetchSessionHandler changed;
  auto every = [&] {
    std::vector<FetchPartition> out;
    for (const auto& [tp, offset] : now) {
      if (offset) out.push_back(At(tp.topic, tp.partition.value(), *offset, -1, 100));
    }
    return out;
  };
  walked.Build(every());
  changed.Build(every());
  ASSERT_TRUE(walked.HandleResponse(Answer(all, 9)).apply);
  ASSERT_TRUE(changed.HandleResponse(Answer(all, 9)).apply);
  std::mt19937_64 random(1227);
  int empty_rounds = 0;
  for (int round = 0; round < 400; ++round) {
    // A few partitions move on, stop or start being fetchable; the list may repeat one that
    // did not change (a fetcher lists what may have changed).
    std::set<TopicPartition> touched;
    const int touches = static_cast<int>(random() % 5);
    for (int i = 0; i < touches; ++i) {
      const TopicPartition& tp = all[random() % all.size()];
      touched.insert(tp);
      switch (random() % 4) {
        case 0:
          now[tp].reset();
          break;
        case 1:
          break;  // touched, unchanged
        default:
          now[tp] = static_cast<int64_t>(random() % 4);
      }
    }
    if (round % 50 == 49) {  // now and then nothing is fetchable for a while
      for (const TopicPartition& tp : all) {
        now[tp].reset();
        touched.insert(tp);
      }
    }
    std::vector<FetchSessionHandler::Change> changes;
    for (const TopicPartition& tp : touched) {
      FetchSessionHandler::Change& change = changes.emplace_back();
      change.tp = &tp;
      if (now[tp]) change.fetch = At(tp.topic, tp.partition.value(), *now[tp], -1, 100);
    }
    const std::vector<FetchPartition> wanted = every();
    std::optional<FetchSessionHandler::Request> built = changed.BuildChanged(changes);
    if (wanted.empty()) {
      // Build is not called with nothing to fetch, and BuildChanged leaves the session as it is:
      // the same changes come again with the next ones.
      ASSERT_FALSE(built.has_value()) << "round " << round;
      ++empty_rounds;
      for (const TopicPartition& tp : all) now[tp] = static_cast<int64_t>(random() % 4);
      changes.clear();
      for (const TopicPartition& tp : all) {
        changes.push_back({&tp, At(tp.topic, tp.partition.value(), *now[tp], -1, 100)});
      }
      built = changed.BuildChanged(changes);
    }
    const FetchSessionHandler::Request expected = walked.Build(every());
    ASSERT_TRUE(built.has_value()) << "round " << round;
    ASSERT_EQ(built->partitions, expected.partitions) << "round " << round;
    ASSERT_EQ(built->forgotten, expected.forgotten) << "round " << round;
    ASSERT_EQ(changed.partitions(), walked.partitions()) << "round " << round;
    ASSERT_TRUE(walked.HandleResponse(Answer({}, 9)).apply);
    ASSERT_TRUE(changed.HandleResponse(Answer({}, 9)).apply);
  }
  EXPECT_GT(empty_rounds, 0);
}

TEST(FetchSessionHandlerTest, PartitionsNoLongerWantedAreForgotten) {
  FetchSessionHandler handler;
  handler.Build(
      {At("bar", 0, 20, 120, 220), At("foo", 0, 0, 100, 200), At("foo", 1, 10, 110, 210)});
  ASSERT_TRUE(
      handler.HandleResponse(Answer({Tp("bar", 0), Tp("foo", 0), Tp("foo", 1)}, 123)).apply);

  FetchSessionHandler::Request second = handler.Build({At("foo", 1, 10, 110, 210)});
  EXPECT_FALSE(handler.full());
  EXPECT_EQ(handler.Metadata({}).session_id, 123);
  EXPECT_EQ(handler.Metadata({}).epoch, 1);
  EXPECT_TRUE(second.partitions.empty());
  EXPECT_EQ(second.forgotten, (std::vector{Tp("bar", 0), Tp("foo", 0)}));
  EXPECT_EQ(SessionTps(handler), std::vector{Tp("foo", 1)});

  // FETCH_SESSION_ID_NOT_FOUND: a new session, full.
  FetchSessionHandler::Verdict verdict =
      handler.HandleResponse(Answer({}, kInvalidSessionId, Errc::kFetchSessionIdNotFound));
  EXPECT_FALSE(verdict.apply);
  EXPECT_EQ(verdict.reset, "FETCH_SESSION_ID_NOT_FOUND");
  FetchSessionHandler::Request third = handler.Build({At("foo", 0, 0, 100, 200)});
  EXPECT_TRUE(handler.full());
  EXPECT_EQ(handler.Metadata({}).session_id, kInvalidSessionId);
  EXPECT_EQ(Tps(third.partitions), std::vector{Tp("foo", 0)});
  EXPECT_EQ(SessionTps(handler), std::vector{Tp("foo", 0)});
}

TEST(FetchSessionHandlerTest, AnAnswerThatDoesNotMatchTheSessionIsNotApplied) {
  FetchSessionHandler handler;
  handler.Build({At("foo", 0, 0, -1, 200), At("foo", 1, 0, -1, 200)});
  // A full answer must name every partition of the session: a new session follows.
  FetchSessionHandler::Verdict short_full = handler.HandleResponse(Answer({Tp("foo", 0)}, 7));
  EXPECT_FALSE(short_full.apply);
  EXPECT_EQ(short_full.reset, "FULL_ANSWER_NOT_THE_SESSION");
  EXPECT_EQ(handler.Metadata({}).session_id, kInvalidSessionId);

  handler.Build({At("foo", 0, 0, -1, 200), At("foo", 1, 0, -1, 200)});
  ASSERT_TRUE(handler.HandleResponse(Answer({Tp("foo", 0), Tp("foo", 1)}, 7)).apply);
  handler.Build({At("foo", 0, 5, -1, 200), At("foo", 1, 0, -1, 200)});
  // An incremental answer naming another partition: this session is closed by the next fetch.
  FetchSessionHandler::Verdict outside = handler.HandleResponse(Answer({Tp("foo", 2)}, 7));
  EXPECT_FALSE(outside.apply);
  EXPECT_EQ(outside.reset, "ANSWER_OUTSIDE_THE_SESSION");
  EXPECT_TRUE(handler.full());
  EXPECT_EQ(handler.Metadata({}).session_id, 7);
}

TEST(FetchSessionHandlerTest, AFailedRequestClosesTheSessionAndTheBrokerMayCloseIt) {
  FetchSessionHandler handler;
  handler.Build({At("foo", 0, 0, -1, 200)});
  ASSERT_TRUE(handler.HandleResponse(Answer({Tp("foo", 0)}, 9)).apply);
  handler.Build({At("foo", 0, 0, -1, 200)});
  ASSERT_TRUE(handler.HandleResponse(Answer({}, 9)).apply);
  EXPECT_EQ(handler.Metadata({}).epoch, 2);

  handler.HandleError();
  EXPECT_TRUE(handler.full());
  EXPECT_EQ(handler.Metadata({}).session_id, 9);  // closed by the next (full) fetch

  handler.Build({At("foo", 0, 0, -1, 200)});
  ASSERT_TRUE(handler.HandleResponse(Answer({Tp("foo", 0)}, 11)).apply);
  handler.Build({At("foo", 0, 3, -1, 200)});
  // An incremental answer with session id 0: the broker closed the session.
  EXPECT_TRUE(handler.HandleResponse(Answer({Tp("foo", 0)}, kInvalidSessionId)).apply);
  EXPECT_TRUE(handler.full());
  EXPECT_EQ(handler.Metadata({}).session_id, kInvalidSessionId);
}

TEST(FetchSessionHandlerTest, TheEpochWrapsToOne) {
  EXPECT_EQ(NextFetchEpoch(kInitialEpoch), 1);
  EXPECT_EQ(NextFetchEpoch(41), 42);
  EXPECT_EQ(NextFetchEpoch(std::numeric_limits<int32_t>::max()), 1);
  EXPECT_EQ(NextFetchEpoch(kFinalEpoch), kFinalEpoch);
}

}  // namespace
}  // namespace ksim
