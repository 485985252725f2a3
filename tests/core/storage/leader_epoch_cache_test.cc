// Leader epoch cache: ports Kafka's LeaderEpochFileCacheTest (the KIP-101 semantics of 0.11 with
// KIP-279's (epoch, end offset) answers, as of Kafka 2.0) on a real directory, then checks the
// checkpoint file itself: Kafka's exact text, reading it back, and damage reported as
// kCorruption naming the file and line.
#include "core/storage/leader_epoch_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/env/posix_env.h"
#include "tests/support/core/temp_dir.h"

namespace ksim {
namespace {

EpochEntry E(int32_t epoch, int64_t offset) {
  return EpochEntry{LeaderEpoch(epoch), Offset(offset)};
}
EpochAndEndOffset EO(int32_t epoch, int64_t offset) {
  return EpochAndEndOffset{LeaderEpoch(epoch), Offset(offset)};
}
const EpochAndEndOffset kUndefined{};

class LeaderEpochCacheTest : public ::testing::Test {
 protected:
  LeaderEpochCacheTest() : cache_(OpenCache()) {}

  LeaderEpochCache OpenCache() {
    auto cache = LeaderEpochCache::Open(env_, dir_.path());
    KSIM_CHECK(cache.ok());
    return std::move(cache).value();
  }
  void Assign(int32_t epoch, int64_t offset) {
    ASSERT_TRUE(cache_.Assign(LeaderEpoch(epoch), Offset(offset)).ok());
  }
  EpochAndEndOffset EndOffsetFor(int32_t epoch) const {
    return cache_.EndOffsetFor(LeaderEpoch(epoch), Offset(leo_));
  }
  std::string FileText() {
    auto bytes = ReadWholeFile(env_, JoinPath(dir_.path(), "leader-epoch-checkpoint"));
    KSIM_CHECK(bytes.ok());
    return std::string(AsChars(*bytes));
  }
  void WriteFile(std::string_view text) {
    auto file =
        env_.OpenFile(JoinPath(dir_.path(), "leader-epoch-checkpoint"), OpenMode::kTruncate);
    KSIM_CHECK(file.ok());
    KSIM_CHECK((*file)->Append(AsBytes(text)).ok());
  }
  void AssignThree() {  // the fixture of Kafka's truncation tests
    Assign(2, 6);
    Assign(3, 8);
    Assign(4, 11);
  }

  PosixEnv env_;
  testing::TempDir dir_;
  LeaderEpochCache cache_;
  int64_t leo_ = 0;
};

// LatestEpoch is kept beside the entries: it follows every change of them, and a cache opened
// from the file has it too.
TEST_F(LeaderEpochCacheTest, LatestEpochFollowsEveryChangeOfTheEntries) {
  AssignThree();
  EXPECT_EQ(cache_.LatestEpoch(), LeaderEpoch(4));
  Assign(3, 12);  // an older epoch: ignored
  EXPECT_EQ(cache_.LatestEpoch(), LeaderEpoch(4));
  ASSERT_TRUE(cache_.TruncateFromEnd(Offset(11)).ok());
  EXPECT_EQ(cache_.LatestEpoch(), LeaderEpoch(3));
  ASSERT_TRUE(cache_.TruncateFromStart(Offset(9)).ok());  // epoch 3 now starts at 9
  EXPECT_EQ(cache_.LatestEpoch(), LeaderEpoch(3));
  EXPECT_EQ(OpenCache().LatestEpoch(), LeaderEpoch(3));
  ASSERT_TRUE(cache_.TruncateFromEnd(Offset(0)).ok());
  EXPECT_EQ(cache_.LatestEpoch(), kUndefinedEpoch);
  Assign(7, 20);
  EXPECT_EQ(cache_.LatestEpoch(), LeaderEpoch(7));
  ASSERT_TRUE(cache_.ClearAndFlush().ok());
  EXPECT_EQ(cache_.LatestEpoch(), kUndefinedEpoch);
  EXPECT_EQ(OpenCache().LatestEpoch(), kUndefinedEpoch);
  WriteFile("0\n2\n1 0\n5 9\n");
  EXPECT_EQ(OpenCache().LatestEpoch(), LeaderEpoch(5));
}

TEST_F(LeaderEpochCacheTest, AddsEpochAndMessageOffsetToCache) {
  Assign(2, 10);
  leo_ = 11;
  EXPECT_EQ(cache_.LatestEpoch(), LeaderEpoch(2));
  EXPECT_EQ(cache_.entries(), std::vector<EpochEntry>{E(2, 10)});
  EXPECT_EQ(EndOffsetFor(2), EO(2, 11));  // the latest epoch ends at the log end offset
}

TEST_F(LeaderEpochCacheTest, ReturnsLogEndOffsetIfLatestEpochRequested) {
  Assign(2, 11);
  Assign(2, 12);
  leo_ = 14;
  EXPECT_EQ(EndOffsetFor(2), EO(2, 14));
}

TEST_F(LeaderEpochCacheTest, ReturnsUndefinedIfUndefinedEpochRequested) {
  Assign(2, 11);
  Assign(3, 12);
  EXPECT_EQ(EndOffsetFor(-1), kUndefined);
  EXPECT_TRUE(EndOffsetFor(-1).undefined());
}

// KIP-101's first answer (0.11.0.0 and 1.1.0 LeaderEpochFileCache.endOffsetFor): an offset
// alone, the start of the first later epoch, with no special case for UNDEFINED_EPOCH.
TEST_F(LeaderEpochCacheTest, EndOffsetOnlyForAnswersAsKafka0110) {
  auto only = [&](int32_t epoch) {
    return cache_.EndOffsetOnlyFor(LeaderEpoch(epoch), Offset(leo_));
  };
  leo_ = 7;
  EXPECT_EQ(only(-1), EO(-1, 7));  // neither side has an epoch: the LEO
  EXPECT_TRUE(only(0).undefined());
  AssignThree();  // 2@6, 3@8, 4@11
  leo_ = 15;
  EXPECT_EQ(only(4), EO(-1, 15));  // the latest epoch: the LEO
  EXPECT_EQ(only(2), EO(-1, 8));
  EXPECT_EQ(only(3), EO(-1, 11));
  // An epoch between two known ones: where the next known one begins, no epoch named.
  Assign(6, 13);
  EXPECT_EQ(only(5), EO(-1, 13));
  EXPECT_EQ(EndOffsetFor(5), EO(4, 13));  // 2.0's answer names epoch 4
  EXPECT_TRUE(only(1).undefined());       // below the first epoch
  EXPECT_TRUE(only(-1).undefined());
  EXPECT_TRUE(only(7).undefined());  // above the latest
}

TEST_F(LeaderEpochCacheTest, DoesNotOverwriteStartOffsetOnceAssigned) {
  leo_ = 9;
  Assign(2, 9);
  Assign(2, 10);
  EXPECT_EQ(cache_.entries(), std::vector<EpochEntry>{E(2, 9)});
}

TEST_F(LeaderEpochCacheTest, AllowsEpochToChangeEvenIfOffsetDoesNot) {
  Assign(2, 9);
  Assign(3, 9);
  EXPECT_EQ(cache_.entries(), (std::vector<EpochEntry>{E(2, 9), E(3, 9)}));
}

TEST_F(LeaderEpochCacheTest, ReturnsUndefinedIfNoEpochRecorded) {
  EXPECT_EQ(EndOffsetFor(0), kUndefined);
  leo_ = 73;
  EXPECT_EQ(EndOffsetFor(-1), kUndefined);
  EXPECT_EQ(EndOffsetFor(7), kUndefined);
  EXPECT_EQ(cache_.LatestEpoch(), kUndefinedEpoch);
}

TEST_F(LeaderEpochCacheTest, ReturnsUndefinedIfRequestedEpochLessThanFirstEpoch) {
  Assign(5, 11);
  Assign(6, 12);
  Assign(7, 13);
  EXPECT_EQ(EndOffsetFor(4), kUndefined);
}

// Kafka 2.1.0's LeaderEpochFileCache.assign (KAFKA-7415): an entry that is not newer replaces
// the entries it conflicts with instead of being ignored. From 2.1.0's LeaderEpochFileCacheTest:
// shouldTruncateIfMatchingEpochButEarlierStartingOffset,
// shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned and
// shouldNotLetEpochGoBackwardsEvenIfMessageEpochsDo; then explore safe seed 526277's follower,
// whose takeover entry (1, 0) a fetched epoch-0 batch at 0 replaces.
TEST_F(LeaderEpochCacheTest, From21AnOlderOrEarlierEntryTruncatesTheEntriesItConflictsWith) {
  constexpr auto kFrom21 = LeaderEpochCache::AssignRule::kTruncateConflicting;
  auto assign = [&](int32_t epoch, int64_t offset) {
    ASSERT_TRUE(cache_.Assign(LeaderEpoch(epoch), Offset(offset), kFrom21).ok());
  };
  assign(2, 6);
  assign(3, 8);
  assign(4, 11);
  assign(4, 10);  // the same epoch from an earlier offset
  EXPECT_EQ(cache_.entries(), (std::vector<EpochEntry>{E(2, 6), E(3, 8), E(4, 10)}));
  assign(4, 12);  // the same epoch from a later offset: kept as it was
  EXPECT_EQ(cache_.entries().back(), E(4, 10));

  assign(1, 7);  // an older epoch: the entries after it in epoch or offset go
  EXPECT_EQ(cache_.entries(), (std::vector<EpochEntry>{E(1, 7)}));
  leo_ = 8;
  EXPECT_EQ(EndOffsetFor(1), EO(1, 8));
  EXPECT_EQ(EndOffsetFor(2), kUndefined);
  EXPECT_EQ(FileText(), "0\n1\n1 7\n");  // written through

  assign(5, 7);  // a newer epoch from the same offset replaces the entry that starts there
  EXPECT_EQ(cache_.entries(), (std::vector<EpochEntry>{E(5, 7)}));
  assign(0, 0);  // seed 526277: a batch of epoch 0 at 0 after taking over at (1, 0)
  assign(2, 1);
  EXPECT_EQ(cache_.entries(), (std::vector<EpochEntry>{E(0, 0), E(2, 1)}));

  // 2.0.0's rule, for comparison: the older entry is ignored.
  LeaderEpochCache at20 = OpenCache();
  ASSERT_TRUE(at20.Assign(LeaderEpoch(3), Offset(5)).ok());
  ASSERT_TRUE(at20.Assign(LeaderEpoch(1), Offset(7)).ok());
  EXPECT_EQ(at20.entries(), (std::vector<EpochEntry>{E(0, 0), E(2, 1), E(3, 5)}));
}

// Kafka 2.1.0's LeaderEpochFileCacheTest.shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch
// (KAFKA-7415): (4, 11) where 2.0.0 answered UNDEFINED (the test above). UNDEFINED_EPOCH is not
// "below the first": still UNDEFINED.
TEST_F(LeaderEpochCacheTest, ReturnsFirstStartOffsetIfRequestedEpochLessThanFirstEpochFrom21) {
  constexpr auto kFrom21 = LeaderEpochCache::BelowFirstEpoch::kFirstStartOffset;
  Assign(5, 11);
  Assign(6, 12);
  Assign(7, 13);
  EXPECT_EQ(cache_.EndOffsetFor(LeaderEpoch(4), Offset(leo_), kFrom21), EO(4, 11));
  EXPECT_EQ(cache_.EndOffsetFor(LeaderEpoch(0), Offset(leo_), kFrom21), EO(0, 11));
  EXPECT_EQ(cache_.EndOffsetFor(kUndefinedEpoch, Offset(leo_), kFrom21), kUndefined);
  EXPECT_EQ(cache_.EndOffsetFor(LeaderEpoch(5), Offset(leo_), kFrom21), EO(5, 12));
  EXPECT_EQ(cache_.EndOffsetFor(LeaderEpoch(8), Offset(leo_), kFrom21), kUndefined);
}

TEST_F(LeaderEpochCacheTest, GetsFirstOffsetOfSubsequentEpochForAPreviousEpoch) {
  Assign(1, 11);
  Assign(1, 12);
  Assign(2, 13);
  Assign(2, 14);
  Assign(3, 15);
  Assign(3, 16);
  leo_ = 17;
  EXPECT_EQ(EndOffsetFor(2), EO(2, 15));
}

TEST_F(LeaderEpochCacheTest, ReturnsPreviousEpochWhenRequestedEpochIsMissing) {
  Assign(0, 10);
  Assign(2, 13);
  Assign(4, 17);
  EXPECT_EQ(EndOffsetFor(1), EO(0, 13));  // KIP-279: epoch 1 never had a leader here
  EXPECT_EQ(EndOffsetFor(2), EO(2, 17));
  EXPECT_EQ(EndOffsetFor(3), EO(2, 17));
}

TEST_F(LeaderEpochCacheTest, ReturnsUndefinedForAnEpochAboveTheLatest) {
  leo_ = 100;
  Assign(2, 100);
  EXPECT_EQ(EndOffsetFor(3), kUndefined);
}

TEST_F(LeaderEpochCacheTest, SupportsEpochsThatDoNotStartFromZero) {
  Assign(2, 6);
  leo_ = 7;
  EXPECT_EQ(EndOffsetFor(2), EO(2, 7));
  EXPECT_EQ(cache_.entries(), std::vector<EpochEntry>{E(2, 6)});
}

TEST_F(LeaderEpochCacheTest, PersistsEpochsBetweenInstances) {
  Assign(2, 6);
  LeaderEpochCache reopened = OpenCache();
  EXPECT_EQ(reopened.entries(), std::vector<EpochEntry>{E(2, 6)});
}

TEST_F(LeaderEpochCacheTest, DoesNotLetEpochGoBackwardsEvenIfMessageEpochsDo) {
  Assign(1, 5);
  leo_ = 6;
  Assign(2, 6);
  leo_ = 7;
  Assign(1, 7);  // an epoch in the past: ignored
  leo_ = 8;
  EXPECT_EQ(cache_.LatestEpoch(), LeaderEpoch(2));
  EXPECT_EQ(EndOffsetFor(1), EO(1, 6));
  EXPECT_EQ(EndOffsetFor(2), EO(2, 8));
  EXPECT_EQ(cache_.entries(), (std::vector<EpochEntry>{E(1, 5), E(2, 6)}));
}

TEST_F(LeaderEpochCacheTest, DoesNotLetOffsetsGoBackwardsEvenIfEpochsProgress) {
  Assign(2, 6);
  Assign(3, 5);
  EXPECT_EQ(cache_.entries(), std::vector<EpochEntry>{E(2, 6)});
}

TEST_F(LeaderEpochCacheTest, TracksEpochsAsLeadersChangeManyTimes) {
  Assign(0, 0);
  Assign(1, 0);
  EXPECT_EQ(cache_.LatestEpoch(), LeaderEpoch(1));
  EXPECT_EQ(EndOffsetFor(1), EO(1, 0));
  EXPECT_EQ(EndOffsetFor(0), EO(0, 0));
  leo_ = 5;
  EXPECT_EQ(EndOffsetFor(1), EO(1, 5));
  EXPECT_EQ(EndOffsetFor(0), EO(0, 0));
  Assign(2, 5);
  leo_ = 10;
  EXPECT_EQ(EndOffsetFor(2), EO(2, 10));
  EXPECT_EQ(EndOffsetFor(1), EO(1, 5));
  EXPECT_EQ(EndOffsetFor(0), EO(0, 0));
}

TEST_F(LeaderEpochCacheTest, TracksEpochsAsFollowerReceivesManyMessages) {
  for (int64_t offset = 0; offset < 9; ++offset) {
    Assign(static_cast<int32_t>(offset / 3), offset);
    leo_ = offset + 1;
    EXPECT_EQ(EndOffsetFor(static_cast<int32_t>(offset / 3)),
              EO(static_cast<int32_t>(offset / 3), leo_));
  }
  EXPECT_EQ(cache_.LatestEpoch(), LeaderEpoch(2));
  EXPECT_EQ(EndOffsetFor(0), EO(0, 3));
  EXPECT_EQ(EndOffsetFor(1), EO(1, 6));
}

TEST_F(LeaderEpochCacheTest, DropsEntriesOnEpochBoundaryWhenTruncatingFromEnd) {
  AssignThree();
  ASSERT_TRUE(cache_.TruncateFromEnd(Offset(8)).ok());
  EXPECT_EQ(cache_.entries(), std::vector<EpochEntry>{E(2, 6)});  // removal is inclusive
}

TEST_F(LeaderEpochCacheTest, DropsEntriesBetweenEpochBoundariesWhenTruncatingFromEnd) {
  AssignThree();
  ASSERT_TRUE(cache_.TruncateFromEnd(Offset(9)).ok());
  EXPECT_EQ(cache_.LatestEpoch(), LeaderEpoch(3));
  EXPECT_EQ(cache_.entries(), (std::vector<EpochEntry>{E(2, 6), E(3, 8)}));
}

TEST_F(LeaderEpochCacheTest, PreservesEntryOnEpochBoundaryWhenTruncatingFromStart) {
  AssignThree();
  ASSERT_TRUE(cache_.TruncateFromStart(Offset(8)).ok());
  EXPECT_EQ(cache_.entries(), (std::vector<EpochEntry>{E(3, 8), E(4, 11)}));
}

TEST_F(LeaderEpochCacheTest, MovesCoveringEpochStartWhenTruncatingFromStartBetweenEpochs) {
  AssignThree();
  ASSERT_TRUE(cache_.TruncateFromStart(Offset(9)).ok());
  EXPECT_EQ(cache_.entries(), (std::vector<EpochEntry>{E(3, 9), E(4, 11)}));
}

TEST_F(LeaderEpochCacheTest, MovesFirstEpochStartWhenTruncatingFromStartInsideIt) {
  Assign(0, 0);
  Assign(1, 7);
  Assign(2, 10);
  ASSERT_TRUE(cache_.TruncateFromStart(Offset(5)).ok());
  EXPECT_EQ(cache_.entries(), (std::vector<EpochEntry>{E(0, 5), E(1, 7), E(2, 10)}));
}

TEST_F(LeaderEpochCacheTest, TruncateFromStartAtOrBeforeFirstOffsetChangesNothing) {
  AssignThree();
  const std::vector<EpochEntry> all = {E(2, 6), E(3, 8), E(4, 11)};
  ASSERT_TRUE(cache_.TruncateFromStart(Offset(1)).ok());
  EXPECT_EQ(cache_.entries(), all);
  ASSERT_TRUE(cache_.TruncateFromStart(Offset(6)).ok());
  EXPECT_EQ(cache_.entries(), all);
}

TEST_F(LeaderEpochCacheTest, TruncateFromStartRetainsAndMovesTheLatestEpoch) {
  AssignThree();
  ASSERT_TRUE(cache_.TruncateFromStart(Offset(11)).ok());
  EXPECT_EQ(cache_.entries(), std::vector<EpochEntry>{E(4, 11)});
  ASSERT_TRUE(cache_.TruncateFromStart(Offset(15)).ok());
  EXPECT_EQ(cache_.entries(), std::vector<EpochEntry>{E(4, 15)});
}

TEST_F(LeaderEpochCacheTest, ClearsAllEntriesAndTheFile) {
  AssignThree();
  ASSERT_TRUE(cache_.ClearAndFlush().ok());
  EXPECT_TRUE(cache_.entries().empty());
  EXPECT_EQ(FileText(), "0\n0\n");
  EXPECT_TRUE(OpenCache().entries().empty());
}

TEST_F(LeaderEpochCacheTest, UndefinedOffsetsTruncateNothing) {
  AssignThree();
  ASSERT_TRUE(cache_.TruncateFromEnd(kUndefinedEpochOffset).ok());
  ASSERT_TRUE(cache_.TruncateFromStart(kUndefinedEpochOffset).ok());
  EXPECT_EQ(cache_.entries().size(), 3u);
}

TEST_F(LeaderEpochCacheTest, TruncationsOfAnEmptyCacheAreHarmless) {
  ASSERT_TRUE(cache_.TruncateFromStart(Offset(7)).ok());
  ASSERT_TRUE(cache_.TruncateFromEnd(Offset(7)).ok());
  EXPECT_TRUE(cache_.entries().empty());
}

// --- the checkpoint file -------------------------------------------------------------------

TEST_F(LeaderEpochCacheTest, WritesKafkasCheckpointText) {
  AssignThree();
  EXPECT_EQ(FileText(), "0\n3\n2 6\n3 8\n4 11\n");
  ASSERT_TRUE(cache_.TruncateFromStart(Offset(9)).ok());
  EXPECT_EQ(FileText(), "0\n2\n3 9\n4 11\n");
  // The temporary file is renamed away, not left behind.
  EXPECT_FALSE(env_.FileExists(JoinPath(dir_.path(), "leader-epoch-checkpoint.tmp")));
}

TEST_F(LeaderEpochCacheTest, ReadsWhatKafkaWrites) {
  // Windows line ends and several blanks between fields are read as Kafka's reader does.
  WriteFile("0\r\n3\r\n0 0\r\n1   7\r\n5\t10");
  EXPECT_EQ(OpenCache().entries(), (std::vector<EpochEntry>{E(0, 0), E(1, 7), E(5, 10)}));
  WriteFile("");
  EXPECT_TRUE(OpenCache().entries().empty());
  WriteFile("0\n");
  EXPECT_TRUE(OpenCache().entries().empty());
}

void ExpectCorruptionAt(Env& env, const std::string& dir, int line) {
  auto cache = LeaderEpochCache::Open(env, dir);
  ASSERT_FALSE(cache.ok());
  EXPECT_EQ(cache.status().code(), Errc::kCorruption);
  const std::string where = JoinPath(dir, "leader-epoch-checkpoint") + ":" + std::to_string(line);
  EXPECT_NE(cache.status().message().find(where), std::string::npos) << cache.status().ToString();
}

TEST_F(LeaderEpochCacheTest, DamagedFilesAreCorruptionNamingFileAndLine) {
  WriteFile("1\n1\n2 6\n");  // unknown version
  ExpectCorruptionAt(env_, dir_.path(), 1);
  WriteFile("zero\n");
  ExpectCorruptionAt(env_, dir_.path(), 1);
  WriteFile("0\nthree\n2 6\n");
  ExpectCorruptionAt(env_, dir_.path(), 2);
  WriteFile("0\n2\n2 6\n3 8 9\n");  // three fields
  ExpectCorruptionAt(env_, dir_.path(), 4);
  WriteFile("0\n2\n2 6\n\n");  // an empty entry line
  ExpectCorruptionAt(env_, dir_.path(), 4);
  WriteFile("0\n2\n 2 6\n3 8\n");  // a leading blank makes an empty first field, as in Java
  ExpectCorruptionAt(env_, dir_.path(), 3);
  WriteFile("0\n3\n2 6\n3 8\n");  // fewer entries than announced
  ExpectCorruptionAt(env_, dir_.path(), 4);
  WriteFile("0\n1\n2 6\n3 8\n");  // more entries than announced
  ExpectCorruptionAt(env_, dir_.path(), 4);
  WriteFile("0\n2\n3 8\n2 9\n");  // epochs going backwards
  ExpectCorruptionAt(env_, dir_.path(), 4);
  WriteFile("0\n2\n2 8\n3 7\n");  // start offsets going backwards
  ExpectCorruptionAt(env_, dir_.path(), 4);
  WriteFile("0\n1\n-1 5\n");  // negative epoch
  ExpectCorruptionAt(env_, dir_.path(), 3);
  WriteFile("0\n1\n2 99999999999999999999\n");  // offset out of range
  ExpectCorruptionAt(env_, dir_.path(), 3);
}

TEST_F(LeaderEpochCacheTest, WriteFailureIsReturned) {
  // The partition directory vanished (a deleted log directory): the write fails, reported.
  testing::TempDir other;
  auto cache = LeaderEpochCache::Open(env_, JoinPath(other.path(), "gone"));
  ASSERT_TRUE(cache.ok());
  const Status status = cache->Assign(LeaderEpoch(0), Offset(0));
  EXPECT_EQ(status.code(), Errc::kNotFound) << status.ToString();
}

}  // namespace
}  // namespace ksim
