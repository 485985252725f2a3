// Log: the behaviours Kafka's LogTest checks for the storage engine: rolls by time, size, full
// index and offset overflow; appends as leader (offsets, epochs, size limits) and follower
// (given offsets, out-of-order and below-LEO refusals); reads at gaps, bounds and ranges;
// truncation; retention by time, size and log start offset; async deletion; index rebuilds and
// recovery on reopen. Crash-recovery specifics are in log_recovery_test.cc.
#include "core/storage/log.h"

#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/env/posix_env.h"
#include "tests/support/core/log_test_util.h"
#include "tests/support/core/temp_dir.h"

namespace ksim {
namespace {

using testing::BatchesIn;
using testing::MakeBatch;
using testing::OffsetsIn;
using testing::RecordsIn;
using testing::ValueOf;

constexpr int64_t kStartMs = 1'600'000'000'000;

// Kafka's TestUtils.singletonRecords: one record with a value, no key.
Bytes Singleton(const std::string& value, int64_t timestamp_ms = kNoTimestamp) {
  return MakeBatch(Offset(0), {value}, timestamp_ms);
}

// Deterministic filler standing in for Kafka's TestUtils.randomBytes.
std::string Filler(size_t size, int seed) {
  std::string out(size, ' ');
  for (size_t i = 0; i < size; ++i) out[i] = static_cast<char>('a' + (seed * 7 + i * 13) % 26);
  return out;
}

class LogTest : public ::testing::Test {
 protected:
  LogTest() : clock_(kStartMs * kUsPerMs), log_dir_(JoinPath(tmp_.path(), "topic-0")) {}

  std::unique_ptr<Log> OpenLog(const LogConfig& config, LogOpenOptions options = {}) {
    auto log = Log::Open(env_, clock_, log_dir_, config, options);
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    return log.ok() ? std::move(log).value() : nullptr;
  }
  // Appends a copy of `batch` as the leader (the Log stamps offsets into the bytes it is given).
  static LogAppendInfo AppendLeader(Log& log, Bytes batch, LeaderEpoch epoch = LeaderEpoch(0)) {
    auto info = log.AppendAsLeader(batch, epoch);
    EXPECT_TRUE(info.ok()) << info.status().ToString();
    return info.ok() ? *info : LogAppendInfo{};
  }
  static LogAppendInfo AppendFollower(Log& log, const Bytes& batches) {
    auto info = log.AppendAsFollower(batches);
    EXPECT_TRUE(info.ok()) << info.status().ToString();
    return info.ok() ? *info : LogAppendInfo{};
  }
  // Kafka's readLog: min one message by default.
  static FetchDataInfo ReadLog(Log& log, int64_t start, int32_t max_bytes,
                               bool min_one_message = true,
                               std::optional<int64_t> max_offset = std::nullopt) {
    auto read = log.Read(Offset(start), max_bytes,
                         max_offset ? std::optional<Offset>(Offset(*max_offset)) : std::nullopt,
                         min_one_message);
    EXPECT_TRUE(read.ok()) << read.status().ToString();
    return read.ok() ? std::move(read).value() : FetchDataInfo{};
  }
  // Empty .log and .index files for a segment (Kafka's createEmptyLogs).
  void CreateEmptySegmentFiles(int64_t base) {
    ASSERT_TRUE(env_.CreateDir(log_dir_).ok());
    ASSERT_TRUE(env_.OpenFile(LogFilePath(log_dir_, Offset(base)), OpenMode::kCreateNew).ok());
    ASSERT_TRUE(env_.OpenFile(IndexFilePath(log_dir_, Offset(base)), OpenMode::kCreateNew).ok());
  }
  std::vector<std::string> FilesInDir() {
    auto names = env_.ListDir(log_dir_);
    EXPECT_TRUE(names.ok());
    return names.ok() ? *names : std::vector<std::string>{};
  }

  testing::TempDir tmp_;
  PosixEnv env_;
  ManualClock clock_;
  std::string log_dir_;
};

LogConfig SmallConfig(int32_t segment_bytes) {
  LogConfig config;
  config.segment_bytes = segment_bytes;
  return config;
}

// ---- Rolling ------------------------------------------------------------------------------------

TEST_F(LogTest, TimeBasedRollFollowsTheFirstTimestampOrTheWallClock) {
  LogConfig config;
  config.segment_ms = 60 * 60;
  auto log = OpenLog(config);
  EXPECT_EQ(log->number_of_segments(), 1u) << "a log begins with one empty segment";

  // Records without timestamps: segments age by the wall clock since they were created.
  clock_.AdvanceMs(config.segment_ms + 1);
  AppendLeader(*log, Singleton("test"));
  EXPECT_EQ(log->number_of_segments(), 1u) << "rolling would leave an empty segment";
  AppendLeader(*log, Singleton("test"));
  EXPECT_EQ(log->number_of_segments(), 2u) << "time has expired";
  for (size_t segments = 3; segments < 5; ++segments) {
    clock_.AdvanceMs(config.segment_ms + 1);
    AppendLeader(*log, Singleton("test"));
    EXPECT_EQ(log->number_of_segments(), segments);
  }

  const int64_t timestamp = clock_.NowMs() + config.segment_ms + 1;
  AppendLeader(*log, Singleton("test", timestamp));
  EXPECT_EQ(log->number_of_segments(), 4u)
      << "the segment's first record has no timestamp: the wall clock decides";
  clock_.AdvanceMs(config.segment_ms + 1);
  AppendLeader(*log, Singleton("test", timestamp));
  EXPECT_EQ(log->number_of_segments(), 5u);
  clock_.AdvanceMs(config.segment_ms + 1);
  AppendLeader(*log, Singleton("test", timestamp));
  EXPECT_EQ(log->number_of_segments(), 5u) << "the first record's timestamp decides, not the clock";
  AppendLeader(*log, Singleton("test", clock_.NowMs()));
  EXPECT_EQ(log->number_of_segments(), 6u) << "this record is segment.ms after the first one";

  clock_.AdvanceMs(config.segment_ms + 1);
  Bytes nothing;
  auto info = log->AppendAsLeader(nothing, LeaderEpoch(0));
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->num_batches, 0);
  EXPECT_EQ(log->number_of_segments(), 6u) << "an empty append never rolls";
}

TEST_F(LogTest, SizeBasedRollHappensBeforeTheSegmentWouldOverflow) {
  const int64_t set_size = static_cast<int64_t>(Singleton("test", clock_.NowMs()).size());
  auto log = OpenLog(SmallConfig(static_cast<int32_t>(10 * (set_size - 1))));
  for (int i = 0; i < 11; ++i) AppendLeader(*log, Singleton("test", clock_.NowMs()));
  EXPECT_EQ(log->number_of_segments(), 2u);
  for (LogSegment* segment : log->LogSegments()) {
    EXPECT_LE(segment->size(), static_cast<uint64_t>(10 * (set_size - 1)));
  }
}

// A visitor that asks to stop ends the walk there, in the middle of a segment, and the segments
// after it are not read; stopping is not an error. Without a stop every batch of every segment is
// seen once, in order.
TEST_F(LogTest, ForEachBatchStopsWhereTheVisitorAsksAcrossSegments) {
  const int64_t set_size = static_cast<int64_t>(Singleton("test", clock_.NowMs()).size());
  auto log = OpenLog(SmallConfig(static_cast<int32_t>(3 * set_size)));
  for (int i = 0; i < 10; ++i) AppendLeader(*log, Singleton("test", clock_.NowMs()));
  ASSERT_GE(log->number_of_segments(), 3u);

  std::vector<int64_t> all;
  Status walked = log->ForEachBatch(Offset(0), [&](const BatchHeader& header, uint64_t) {
    all.push_back(header.base_offset.value());
    return BatchWalk::kContinue;
  });
  ASSERT_TRUE(walked.ok()) << walked.ToString();
  EXPECT_EQ(all, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));

  std::vector<int64_t> seen;
  walked = log->ForEachBatch(Offset(2), [&](const BatchHeader& header, uint64_t) {
    seen.push_back(header.base_offset.value());
    return header.base_offset == Offset(4) ? BatchWalk::kStop : BatchWalk::kContinue;
  });
  ASSERT_TRUE(walked.ok()) << walked.ToString();
  EXPECT_EQ(seen, (std::vector<int64_t>{2, 3, 4}));

  // An error from the visitor is the walk's result.
  walked = log->ForEachBatch(Offset(0), [&](const BatchHeader&, uint64_t) -> Result<BatchWalk> {
    return Status(Errc::kCorruption, "visitor");
  });
  EXPECT_EQ(walked.code(), Errc::kCorruption);
}

// A walk from an offset inside a batch, far from any index entry, starts at that batch: the
// batches before it are not visited, whether the segment's recent batches are known (appended
// here) or not (the log opened again: a scan from the index entry finds it).
TEST_F(LogTest, ForEachBatchStartsAtTheBatchHoldingItsOffset) {
  LogConfig config;
  config.index_interval_bytes = 1 << 20;  // one index entry: the segment's start
  auto log = OpenLog(config);
  for (int i = 0; i < 20; ++i) {
    AppendLeader(*log, MakeBatch(Offset(0), {"a", "b", "c"}, clock_.NowMs()));
  }
  ASSERT_EQ(log->log_end_offset(), Offset(60));
  auto walk_from = [](Log& walked, Offset from) {
    std::vector<int64_t> bases;
    Status status = walked.ForEachBatch(from, [&](const BatchHeader& header, uint64_t) {
      bases.push_back(header.base_offset.value());
      return bases.size() < 3 ? BatchWalk::kContinue : BatchWalk::kStop;
    });
    EXPECT_TRUE(status.ok()) << status.ToString();
    return bases;
  };
  EXPECT_EQ(walk_from(*log, Offset(40)), (std::vector<int64_t>{39, 42, 45}));
  EXPECT_EQ(walk_from(*log, Offset(41)), (std::vector<int64_t>{39, 42, 45}));
  EXPECT_EQ(walk_from(*log, Offset(59)), (std::vector<int64_t>{57}));
  EXPECT_TRUE(walk_from(*log, Offset(60)).empty());
  log.reset();
  auto reopened = OpenLog(config);
  EXPECT_EQ(walk_from(*reopened, Offset(41)), (std::vector<int64_t>{39, 42, 45}));
  EXPECT_EQ(walk_from(*reopened, Offset(0)), (std::vector<int64_t>{0, 3, 6}));
  EXPECT_TRUE(walk_from(*reopened, Offset(61)).empty());
}

TEST_F(LogTest, RollingAnEmptySegmentOntoItsOwnBaseKeepsIt) {
  LogConfig config;
  config.segment_ms = 60 * 60;
  auto log = OpenLog(config);
  ASSERT_TRUE(log->Roll(Offset(0)).ok());
  EXPECT_EQ(log->number_of_segments(), 1u);
  AppendFollower(*log, MakeBatch(Offset(0), {"v1"}, clock_.NowMs(), LeaderEpoch(0)));
  AppendFollower(*log, MakeBatch(Offset(1), {"v2"}, clock_.NowMs() + 10, LeaderEpoch(0)));
  EXPECT_EQ(log->log_end_offset(), Offset(2));
  EXPECT_EQ(BatchesIn(ReadLog(*log, 0, 1).records).front().last_offset(), Offset(0));
  EXPECT_EQ(BatchesIn(ReadLog(*log, 1, 1).records).front().last_offset(), Offset(1));

  ASSERT_TRUE(log->Roll().ok());
  EXPECT_EQ(log->active_segment().base_offset(), Offset(2));
  EXPECT_EQ(log->number_of_segments(), 2u);
  // A full index forces a roll of the empty active segment: onto its own base offset.
  ASSERT_TRUE(log->active_segment().offset_index().Resize(0).ok());
  AppendFollower(*log, MakeBatch(Offset(2), {"v3"}, clock_.NowMs() + 12, LeaderEpoch(0)));
  EXPECT_GT(log->active_segment().offset_index().max_entries(), 1u);
  EXPECT_EQ(BatchesIn(ReadLog(*log, 2, 1).records).front().last_offset(), Offset(2));
  EXPECT_EQ(log->number_of_segments(), 2u);
}

TEST_F(LogTest, RollOnRelativeOffsetOverflowLeavesAnEmptySegmentThatTruncationRemoves) {
  auto log = OpenLog(LogConfig{});
  const int64_t far = int64_t{INT32_MAX} + 200;
  AppendFollower(*log, MakeBatch(Offset(far), {"value"}));
  EXPECT_EQ(log->number_of_segments(), 2u);
  EXPECT_EQ(log->LogSegments().front()->size(), 0u);
  EXPECT_EQ(log->active_segment().base_offset(), Offset(far));

  ASSERT_TRUE(log->TruncateTo(Offset(0)).ok());
  EXPECT_EQ(log->number_of_segments(), 1u);
  AppendFollower(*log, MakeBatch(Offset(100), {"value"}));
  EXPECT_EQ(log->number_of_segments(), 1u);
  EXPECT_EQ(log->log_end_offset(), Offset(101));
}

TEST_F(LogTest, FollowerAppendsSpanningMoreThanInt32OffsetsGoToSeparateSegments) {
  LogConfig config;
  config.index_interval_bytes = 1;
  auto log = OpenLog(config);
  const int64_t far = int64_t{INT32_MAX} + 2;
  AppendFollower(*log, MakeBatch(Offset(0), {"v1"}));
  EXPECT_EQ(log->active_segment().base_offset(), Offset(0));
  AppendFollower(*log, MakeBatch(Offset(far), {"v3"}));
  EXPECT_EQ(log->active_segment().base_offset(), Offset(far)) << "max(first offset, LEO)";
  AppendFollower(*log, MakeBatch(Offset(far + 1), {"v4"}));
  AppendFollower(*log, MakeBatch(Offset(far + 2), {"v5"}));
  EXPECT_EQ(log->active_segment().base_offset(), Offset(far));
  // One append whose batches are more than INT32_MAX apart is split across segments too.
  const int64_t farther = far + int64_t{INT32_MAX} + 10;
  AppendFollower(*log, testing::Concat({MakeBatch(Offset(far + 3), {"v6"}),
                                        MakeBatch(Offset(farther), {"v7"})}));
  EXPECT_EQ(log->active_segment().base_offset(), Offset(farther));
  EXPECT_EQ(log->number_of_segments(), 3u);
  ASSERT_TRUE(log->Close().ok());

  auto reopened = OpenLog(config);
  EXPECT_EQ(reopened->log_end_offset(), Offset(farther + 1));
  EXPECT_EQ(reopened->recovery_report().first_damage.code(), Errc::kNone);
  for (LogSegment* segment : reopened->LogSegments()) {
    EXPECT_TRUE(segment->SanityCheck().ok());
    EXPECT_GE(segment->offset_index().last_offset(), Offset(0));
  }
  EXPECT_EQ(OffsetsIn(ReadLog(*reopened, far + 1, 1 << 20).records),
            (std::vector<int64_t>{far + 1, far + 2, far + 3}));
}

// ---- Appends
// --------------------------------------------------------------------------------------

TEST_F(LogTest, LoadEmptySegmentFilesAndAppend) {
  CreateEmptySegmentFiles(0);
  auto log = OpenLog(LogConfig{});
  AppendLeader(*log, Singleton("test", clock_.NowMs()));
  EXPECT_EQ(log->log_end_offset(), Offset(1));
}

TEST_F(LogTest, LeaderAppendAssignsOffsetsFromTheLogEndAndReportsThem) {
  auto log = OpenLog(LogConfig{});
  Bytes batches =
      testing::Concat({MakeBatch(Offset(0), {"a", "b", "c"}, 100),
                       MakeBatch(Offset(0), {"d", "e"}, 300), MakeBatch(Offset(0), {"f"}, 200)});
  const int64_t size = static_cast<int64_t>(batches.size());
  auto info = log->AppendAsLeader(batches, LeaderEpoch(3));
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->first_offset, Offset(0));
  EXPECT_EQ(info->last_offset, Offset(5));
  EXPECT_EQ(info->num_batches, 3);
  EXPECT_EQ(info->num_records, 6);
  EXPECT_EQ(info->valid_bytes, size);
  EXPECT_EQ(info->max_timestamp_ms, 300);
  EXPECT_EQ(info->offset_of_max_timestamp, Offset(4));
  // The caller's bytes now carry the offsets and the epoch, and still verify.
  const std::vector<BatchHeader> stamped = BatchesIn(batches);
  EXPECT_EQ(stamped[1].base_offset, Offset(3));
  EXPECT_EQ(stamped[2].partition_leader_epoch, LeaderEpoch(3));

  info = log->AppendAsLeader(batches, LeaderEpoch(3));
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->first_offset, Offset(6));
  EXPECT_EQ(log->log_end_offset(), Offset(12));
  EXPECT_EQ(OffsetsIn(ReadLog(*log, 0, 1 << 20).records),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
}

TEST_F(LogTest, LeaderAppendStampsTheLeaderEpochOnEveryBatch) {
  auto log = OpenLog(LogConfig{});
  for (int i = 0; i < 50; ++i) AppendLeader(*log, Singleton(std::to_string(i)), LeaderEpoch(72));
  for (int i = 0; i < 50; ++i) {
    const std::vector<BatchHeader> read = BatchesIn(ReadLog(*log, i, 1).records);
    ASSERT_FALSE(read.empty());
    EXPECT_EQ(read.front().partition_leader_epoch, LeaderEpoch(72));
  }
}

TEST_F(LogTest, LeaderAppendDropsAPartialBatchAtTheEnd) {
  auto log = OpenLog(LogConfig{});
  const Bytes whole = Singleton("whole");
  Bytes appended = testing::Concat({whole, Singleton("cut")});
  appended.erase(appended.end() - 3, appended.end());
  auto info = log->AppendAsLeader(appended, LeaderEpoch(0));
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->num_batches, 1);
  EXPECT_EQ(info->valid_bytes, static_cast<int64_t>(whole.size()));
  EXPECT_EQ(log->log_end_offset(), Offset(1));
}

TEST_F(LogTest, CorruptBatchIsRefusedWithCorruptMessage) {
  auto log = OpenLog(LogConfig{});
  Bytes batch = Singleton("payload");
  batch.back() ^= 0x01;
  EXPECT_EQ(log->AppendAsLeader(batch, LeaderEpoch(0)).status().code(), Errc::kCorruptMessage);
  EXPECT_EQ(log->AppendAsFollower(batch).status().code(), Errc::kCorruptMessage);
  EXPECT_EQ(log->log_end_offset(), Offset(0));
  EXPECT_EQ(log->size_in_bytes(), 0u);
}

TEST_F(LogTest, BatchesLargerThanASegmentAreRefused) {
  const Bytes batches = MakeBatch(Offset(0), {"You", "bethe"});
  auto log = OpenLog(SmallConfig(static_cast<int32_t>(batches.size()) - 1));
  Bytes copy = batches;
  EXPECT_EQ(log->AppendAsLeader(copy, LeaderEpoch(0)).status().code(), Errc::kRecordListTooLarge);
  EXPECT_EQ(log->AppendAsFollower(batches).status().code(), Errc::kRecordListTooLarge);
}

TEST_F(LogTest, LeaderRefusesBatchesOverMaxMessageBytesButFollowerTakesThem) {
  const Bytes first = MakeBatch(Offset(0), {"You", "bethe"});
  const Bytes second = MakeBatch(
      Offset(5), {"change (I need more bytes)... blah blah blah.", "More padding boo hoo"});
  LogConfig config;
  config.max_message_bytes = static_cast<int32_t>(second.size()) - 1;
  auto log = OpenLog(config);
  AppendLeader(*log, first);
  Bytes copy = second;
  EXPECT_EQ(log->AppendAsLeader(copy, LeaderEpoch(0)).status().code(), Errc::kMessageTooLarge);
  AppendFollower(*log, second);
  EXPECT_EQ(log->log_end_offset(), Offset(7));
}

TEST_F(LogTest, FollowerAppendWithOutOfOrderOffsetsIsRefused) {
  auto log = OpenLog(LogConfig{});
  std::vector<Bytes> batches;
  for (int64_t offset : {0, 1, 3, 2, 4}) batches.push_back(MakeBatch(Offset(offset), {"value"}));
  EXPECT_EQ(log->AppendAsFollower(testing::Concat(batches)).status().code(),
            Errc::kOffsetsOutOfOrder);
  EXPECT_EQ(log->log_end_offset(), Offset(0));
}

TEST_F(LogTest, FollowerAppendBelowTheLogEndIsRefused) {
  auto log = OpenLog(LogConfig{});
  AppendLeader(*log, Singleton("0"));
  AppendLeader(*log, Singleton("1"));
  auto refused = log->AppendAsFollower(MakeBatch(Offset(1), {"1"}));
  EXPECT_EQ(refused.status().code(), Errc::kUnexpectedAppendOffset);
  EXPECT_EQ(log->log_end_offset(), Offset(2));
}

TEST_F(LogTest, FollowerAppendBelowTheLogStartOfAnEmptyLogIsRefused) {
  CreateEmptySegmentFiles(7);
  auto log = OpenLog(LogConfig{});
  EXPECT_EQ(log->log_start_offset(), Offset(7));
  EXPECT_EQ(log->log_end_offset(), Offset(7));
  auto refused = log->AppendAsFollower(MakeBatch(Offset(4), {"k1", "k2", "k3"}));
  EXPECT_EQ(refused.status().code(), Errc::kUnexpectedAppendOffset);
  EXPECT_NE(refused.status().message().find("first offset 4 (last 6)"), std::string::npos)
      << refused.status().message();
}

TEST_F(LogTest, FollowerAppendKeepsGivenOffsetsAndEpochs) {
  auto log = OpenLog(LogConfig{});
  AppendFollower(*log, MakeBatch(Offset(10), {"a", "b"}, 5, LeaderEpoch(19)));
  AppendFollower(*log, MakeBatch(Offset(20), {"c"}, 6, LeaderEpoch(20)));
  EXPECT_EQ(log->log_end_offset(), Offset(21));
  const std::vector<BatchHeader> read = BatchesIn(ReadLog(*log, 10, 1 << 20).records);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].base_offset, Offset(10));
  EXPECT_EQ(read[0].partition_leader_epoch, LeaderEpoch(19));
  EXPECT_EQ(read[1].base_offset, Offset(20));
  EXPECT_EQ(read[1].partition_leader_epoch, LeaderEpoch(20));
}

TEST_F(LogTest, LeaderAppendThatWouldOverflowOffsetsIsRefused) {
  const Offset near_end(std::numeric_limits<int64_t>::max() - 1);
  auto log = OpenLog(LogConfig{}, LogOpenOptions{Offset(0), near_end});
  Bytes two = MakeBatch(Offset(0), {"a", "b"});
  EXPECT_EQ(log->AppendAsLeader(two, LeaderEpoch(0)).status().code(), Errc::kInvalidRequest);
  EXPECT_EQ(AppendLeader(*log, Singleton("a")).first_offset, near_end);
  EXPECT_EQ(log->log_end_offset(), Offset(std::numeric_limits<int64_t>::max()));
}

TEST_F(LogTest, AppendWithNullValueAndWithoutTimestamp) {
  auto log = OpenLog(LogConfig{});
  RecordInput record;  // no key, no value, no timestamp
  Bytes batch = EncodeBatch(BatchSpec{}, std::vector<RecordInput>{record});
  AppendLeader(*log, batch);
  const std::vector<Record> read = RecordsIn(ReadLog(*log, 0, 4096).records);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].offset, Offset(0));
  EXPECT_FALSE(read[0].value.has_value());
  EXPECT_EQ(read[0].timestamp_ms, kNoTimestamp);
}

// ---- Reads
// ----------------------------------------------------------------------------------------

TEST_F(LogTest, AppendAndReadWithSequentialOffsetsAcrossSegments) {
  std::vector<std::string> values;
  for (int id = 0; id < 100; id += 2) values.push_back(std::to_string(id));
  auto log = OpenLog(SmallConfig(static_cast<int32_t>(Singleton("98").size()) + 1));
  for (const std::string& value : values) AppendLeader(*log, Singleton(value));
  EXPECT_EQ(log->number_of_segments(), values.size()) << "one batch per segment";
  for (size_t i = 0; i < values.size(); ++i) {
    const FetchDataInfo read = ReadLog(*log, static_cast<int64_t>(i), 1);
    const std::vector<Record> records = RecordsIn(read.records);
    ASSERT_FALSE(records.empty());
    EXPECT_EQ(records[0].offset, Offset(static_cast<int64_t>(i)));
    EXPECT_FALSE(records[0].key.has_value());
    EXPECT_EQ(ValueOf(records[0]), values[i]);
  }
  EXPECT_TRUE(ReadLog(*log, static_cast<int64_t>(values.size()), 100).records.empty())
      << "reading at the log end gives nothing";
}

std::vector<int64_t> SparseIds() {
  std::vector<int64_t> ids;
  for (int64_t id = 0; id < 50; ++id) ids.push_back(id);
  for (int64_t id = 50; id < 200; id += 7) ids.push_back(id);
  return ids;
}

TEST_F(LogTest, AppendAndReadWithNonSequentialOffsets) {
  auto log = OpenLog(SmallConfig(72));
  const std::vector<int64_t> ids = SparseIds();
  for (int64_t id : ids) AppendFollower(*log, MakeBatch(Offset(id), {std::to_string(id)}));
  for (int64_t i = 50; i < ids.back(); ++i) {
    const int64_t expected = *std::lower_bound(ids.begin(), ids.end(), i);
    const std::vector<Record> records = RecordsIn(ReadLog(*log, i, 100).records);
    ASSERT_FALSE(records.empty()) << i;
    EXPECT_EQ(records[0].offset, Offset(expected));
    EXPECT_EQ(ValueOf(records[0]), std::to_string(expected));
  }
}

TEST_F(LogTest, ReadAtAGapAtTheEndOfASegmentContinuesInTheNext) {
  auto log = OpenLog(SmallConfig(300));
  while (log->number_of_segments() == 1) AppendLeader(*log, Singleton("42"));
  // Cut the first segment down to its first record: offsets 1.. now lie in a gap.
  ASSERT_TRUE(log->LogSegments().front()->TruncateTo(Offset(1)).ok());
  const std::vector<BatchHeader> read = BatchesIn(ReadLog(*log, 1, 200).records);
  ASSERT_FALSE(read.empty());
  EXPECT_EQ(read.front().last_offset(), log->log_end_offset() - 1);
}

TEST_F(LogTest, ReadWithMinOneMessageReturnsAWholeBatchWhateverTheMaxBytes) {
  auto log = OpenLog(SmallConfig(72));
  const std::vector<int64_t> ids = SparseIds();
  for (int64_t id : ids) AppendFollower(*log, MakeBatch(Offset(id), {std::to_string(id)}));
  for (int64_t i = 50; i < ids.back(); ++i) {
    const int64_t expected = *std::lower_bound(ids.begin(), ids.end(), i);
    for (int32_t max_bytes : {1, 100000, 100}) {
      const std::vector<Record> records = RecordsIn(ReadLog(*log, i, max_bytes).records);
      ASSERT_FALSE(records.empty());
      EXPECT_EQ(records[0].offset, Offset(expected));
    }
  }
}

TEST_F(LogTest, ReadWithTooSmallMaxBytesGivesAnIncompleteFirstBatch) {
  auto log = OpenLog(SmallConfig(72));
  const std::vector<int64_t> ids = SparseIds();
  for (int64_t id : ids) AppendFollower(*log, MakeBatch(Offset(id), {std::to_string(id)}));
  for (int64_t i = 50; i < ids.back(); ++i) {
    EXPECT_TRUE(ReadLog(*log, i, 0, /*min_one_message=*/false).records.empty());
    const FetchDataInfo read = ReadLog(*log, i, 1, /*min_one_message=*/false);
    EXPECT_TRUE(read.first_entry_incomplete);
    EXPECT_EQ(read.records.size(), 1u);
  }
}

TEST_F(LogTest, ReadsOutsideTheLogAreOffsetOutOfRange) {
  CreateEmptySegmentFiles(1024);
  auto log = OpenLog(SmallConfig(1024));
  AppendLeader(*log, Singleton("42"));
  EXPECT_TRUE(ReadLog(*log, 1025, 1000).records.empty()) << "at the log end: nothing";
  EXPECT_EQ(log->Read(Offset(0), 1000).status().code(), Errc::kOffsetOutOfRange)
      << "below the log start";
  EXPECT_EQ(log->Read(Offset(1026), 1000).status().code(), Errc::kOffsetOutOfRange)
      << "past the log end";
  EXPECT_EQ(log->Read(Offset(1024), -1).status().code(), Errc::kInvalidArgument);
}

TEST_F(LogTest, ReadsAcrossManySegmentsReturnEveryRecord) {
  auto log = OpenLog(SmallConfig(100));
  std::vector<Bytes> batches;
  for (int i = 0; i < 50; ++i) batches.push_back(Singleton(std::to_string(i), clock_.NowMs()));
  for (const Bytes& batch : batches) AppendLeader(*log, batch);
  int64_t offset = 0;
  for (int i = 0; i < 50; ++i) {
    const std::vector<Record> records = RecordsIn(ReadLog(*log, offset, 1024 * 1024).records);
    ASSERT_FALSE(records.empty());
    EXPECT_EQ(records[0].offset, Offset(offset));
    EXPECT_EQ(ValueOf(records[0]), std::to_string(i));
    EXPECT_EQ(records[0].timestamp_ms, clock_.NowMs());
    offset = records[0].offset.value() + 1;
  }
  EXPECT_TRUE(ReadLog(*log, 50, 1024 * 1024).records.empty());
  EXPECT_EQ(log->number_of_segments(), 50u);
  EXPECT_EQ(log->recovery_point(), log->active_segment().base_offset())
      << "rolling flushed the segments before the active one, and only those";
}

TEST_F(LogTest, ReadsBoundedByTheHighWatermarkStopBeforeIt) {
  auto log = OpenLog(SmallConfig(1024 * 1024));
  AppendLeader(*log, MakeBatch(Offset(0), {"0", "1", "2"}));
  AppendLeader(*log, MakeBatch(Offset(0), {"3", "4"}));
  for (int64_t high_watermark : {0, 3, 5}) {
    for (int64_t offset = 0; offset < high_watermark; ++offset) {
      const FetchDataInfo read = ReadLog(*log, offset, INT32_MAX, true, high_watermark);
      ASSERT_FALSE(read.records.empty()) << offset << " below " << high_watermark;
      for (int64_t got : OffsetsIn(read.records)) EXPECT_LT(got, high_watermark);
      EXPECT_EQ(read.fetch_offset, Offset(offset));
    }
    for (int64_t offset = high_watermark; offset <= 5; ++offset) {
      EXPECT_TRUE(ReadLog(*log, offset, INT32_MAX, true, high_watermark).records.empty())
          << offset << " at or past " << high_watermark;
    }
  }
}

TEST_F(LogTest, ReadsCountTheBytesScannedToFindTheStart) {
  LogConfig config;
  config.index_interval_bytes = 4096;
  auto log = OpenLog(config);
  for (int i = 0; i < 2000; ++i) AppendLeader(*log, Singleton(Filler(50, i)));
  uint64_t most = 0;
  for (int64_t offset = 0; offset < 2000; offset += 37) {
    const FetchDataInfo read = ReadLog(*log, offset, 1);
    EXPECT_EQ(OffsetsIn(read.records).front(), offset);
    most = std::max(most, read.bytes_scanned);
  }
  // The sparse index keeps every search within about one index interval of its target.
  EXPECT_GT(most, 0u);
  EXPECT_LE(most, 2u * 4096u + 200u);
}

// ---- Truncation
// -----------------------------------------------------------------------------------

TEST_F(LogTest, TruncateToAndTruncateFullyAndStartAt) {
  const auto set_size = static_cast<int32_t>(Singleton("test", clock_.NowMs()).size());
  const int per_segment = 10;
  auto log = OpenLog(SmallConfig(per_segment * set_size));
  auto append_all = [&] {
    for (int i = 0; i < per_segment; ++i) AppendLeader(*log, Singleton("test", clock_.NowMs()));
  };
  append_all();
  EXPECT_EQ(log->number_of_segments(), 1u);
  EXPECT_EQ(log->log_end_offset(), Offset(per_segment));
  const Offset last = log->log_end_offset();
  const uint64_t size = log->size_in_bytes();

  EXPECT_FALSE(*log->TruncateTo(log->log_end_offset())) << "keeps the entire log";
  EXPECT_EQ(log->log_end_offset(), last);
  EXPECT_EQ(log->size_in_bytes(), size);
  EXPECT_FALSE(*log->TruncateTo(log->log_end_offset() + 1)) << "beyond the end";
  EXPECT_EQ(log->size_in_bytes(), size);
  EXPECT_TRUE(*log->TruncateTo(Offset(per_segment / 2)));
  EXPECT_EQ(log->log_end_offset(), Offset(per_segment / 2));
  EXPECT_LT(log->size_in_bytes(), size);
  EXPECT_TRUE(*log->TruncateTo(Offset(0)));
  EXPECT_EQ(log->log_end_offset(), Offset(0));
  EXPECT_EQ(log->size_in_bytes(), 0u);

  append_all();
  EXPECT_EQ(log->log_end_offset(), last);
  EXPECT_EQ(log->size_in_bytes(), size);
  ASSERT_TRUE(log->TruncateFullyAndStartAt(log->log_end_offset() - (per_segment - 1)).ok());
  EXPECT_EQ(log->log_end_offset(), last - (per_segment - 1));
  EXPECT_EQ(log->log_start_offset(), last - (per_segment - 1));
  EXPECT_EQ(log->size_in_bytes(), 0u);

  append_all();
  EXPECT_GT(log->log_end_offset(), Offset(per_segment));
  EXPECT_EQ(log->size_in_bytes(), size);
  EXPECT_TRUE(*log->TruncateTo(Offset(0))) << "below the first segment: start over at 0";
  EXPECT_EQ(log->log_end_offset(), Offset(0));
  EXPECT_EQ(log->log_start_offset(), Offset(0));
  EXPECT_EQ(log->size_in_bytes(), 0u);
}

TEST_F(LogTest, TruncationThenAppendContinuesAtTheTruncationPoint) {
  auto log = OpenLog(SmallConfig(300));
  for (int i = 0; i < 20; ++i) AppendLeader(*log, Singleton("old-" + std::to_string(i)));
  ASSERT_GT(log->number_of_segments(), 2u);
  ASSERT_TRUE(log->TruncateTo(Offset(7)).ok());
  EXPECT_EQ(log->log_end_offset(), Offset(7));
  EXPECT_EQ(log->active_segment().next_offset(), Offset(7));
  for (int i = 0; i < 5; ++i) AppendLeader(*log, Singleton("new-" + std::to_string(i)));
  const std::vector<Record> records = RecordsIn(ReadLog(*log, 5, 1 << 20).records);
  ASSERT_GE(records.size(), 2u);
  EXPECT_EQ(ValueOf(records[0]), "old-5");
  std::vector<std::string> rest;
  for (int64_t offset = 6; offset < 12; ++offset) {
    rest.push_back(ValueOf(RecordsIn(ReadLog(*log, offset, 1).records).front()));
  }
  EXPECT_EQ(rest, (std::vector<std::string>{"old-6", "new-0", "new-1", "new-2", "new-3", "new-4"}));
}

TEST_F(LogTest, TruncationRegrowsTheIndexesOfTheSegmentThatBecomesActive) {
  const auto set_size = static_cast<int32_t>(Singleton("test", clock_.NowMs()).size());
  LogConfig config = SmallConfig(10 * set_size);
  config.index_interval_bytes = set_size - 1;
  auto log = OpenLog(config);
  for (int i = 1; i <= 10; ++i) AppendLeader(*log, Singleton("test", clock_.NowMs() + i));
  EXPECT_EQ(log->number_of_segments(), 1u);
  clock_.AdvanceMs(10);
  for (int i = 1; i <= 10; ++i) AppendLeader(*log, Singleton("test", clock_.NowMs() + i));
  EXPECT_EQ(log->number_of_segments(), 2u);
  EXPECT_EQ(log->LogSegments().front()->offset_index().max_entries(), 9u)
      << "a rolled segment's index is trimmed to its entries";
  EXPECT_EQ(log->LogSegments().front()->time_index().max_entries(), 9u);

  ASSERT_TRUE(log->TruncateTo(Offset(0)).ok());
  EXPECT_EQ(log->number_of_segments(), 1u);
  EXPECT_EQ(log->LogSegments().front()->offset_index().max_entries(),
            static_cast<size_t>(config.max_index_size_bytes / 8));
  EXPECT_EQ(log->LogSegments().front()->time_index().max_entries(),
            static_cast<size_t>(config.max_index_size_bytes / 12));
  clock_.AdvanceMs(10);
  for (int i = 1; i <= 10; ++i) AppendLeader(*log, Singleton("test", clock_.NowMs() + i));
  EXPECT_EQ(log->number_of_segments(), 1u);
}

TEST_F(LogTest, TruncateAfterReopenDeletesLaterSegments) {
  const auto size = static_cast<int32_t>(Singleton("test", clock_.NowMs()).size());
  LogConfig config = SmallConfig(size * 5);
  config.max_index_size_bytes = 1000;
  config.index_interval_bytes = 10000;
  auto log = OpenLog(config);
  for (int i = 0; i < 100; ++i) AppendLeader(*log, Singleton("test", clock_.NowMs()));
  ASSERT_TRUE(log->Close().ok());
  log = OpenLog(config);
  ASSERT_TRUE(log->TruncateTo(Offset(3)).ok());
  EXPECT_EQ(log->number_of_segments(), 1u);
  EXPECT_EQ(log->log_end_offset(), Offset(3));
}

// ---- Retention and deletion
// -----------------------------------------------------------------------

TEST_F(LogTest, RetentionDeletingEverythingKeepsTheLogEndOffset) {
  for (int to_append : {0, 1, 25}) {
    LogConfig config = SmallConfig(100);
    config.retention_ms = 0;
    auto log = OpenLog(config);
    for (int i = 0; i < to_append; ++i) {
      AppendLeader(*log, Singleton(std::to_string(i), clock_.NowMs() - 10));
    }
    const Offset end = log->log_end_offset();
    EXPECT_EQ(end, Offset(to_append));
    ASSERT_TRUE(log->DeleteOldSegments().ok());
    EXPECT_EQ(log->log_end_offset(), end);
    EXPECT_EQ(log->number_of_segments(), 1u) << "one segment is always left";
    EXPECT_EQ(log->log_start_offset(), end);
    EXPECT_EQ(*log->DeleteOldSegments(), 0) << "nothing more to collect";
    EXPECT_EQ(AppendLeader(*log, Singleton("hello", clock_.NowMs())).first_offset, end);
    ASSERT_TRUE(log->Delete().ok());
    EXPECT_FALSE(env_.DirExists(log_dir_));
  }
}

TEST_F(LogTest, TimeRetentionOnlyDeletesSegmentsBelowTheHighWatermarkWhenGiven) {
  const auto size = static_cast<int32_t>(Singleton("test", clock_.NowMs() - 1000).size());
  LogConfig config = SmallConfig(size * 5);
  config.max_index_size_bytes = 1000;
  config.retention_ms = 999;
  auto log = OpenLog(config);
  for (int i = 0; i < 100; ++i) AppendLeader(*log, Singleton("test", clock_.NowMs() - 1000));
  const size_t segments = log->number_of_segments();
  EXPECT_EQ(*log->DeleteOldSegments(Offset(0)), 0) << "nothing is below a high watermark of 0";
  EXPECT_EQ(log->number_of_segments(), segments);
  for (int64_t high_watermark = 25; high_watermark <= 30; ++high_watermark) {
    ASSERT_TRUE(log->DeleteOldSegments(Offset(high_watermark)).ok());
    EXPECT_LE(log->log_start_offset(), Offset(high_watermark));
    for (LogSegment* segment : log->LogSegments()) {
      EXPECT_GE(segment->next_offset() - 1, Offset(high_watermark));
    }
  }
  ASSERT_TRUE(log->DeleteOldSegments(log->log_end_offset()).ok());
  EXPECT_EQ(log->number_of_segments(), 1u);
}

TEST_F(LogTest, DeleteRecordsMovesTheLogStartAndRetentionDropsSegmentsBelowIt) {
  const auto size = static_cast<int32_t>(Singleton("test").size());
  auto log = OpenLog(SmallConfig(size * 5));
  for (int i = 0; i < 15; ++i) AppendLeader(*log, Singleton("test"));
  EXPECT_EQ(log->number_of_segments(), 3u);
  EXPECT_EQ(log->log_start_offset(), Offset(0));

  ASSERT_TRUE(log->MaybeIncrementLogStartOffset(Offset(1)).ok());
  ASSERT_TRUE(log->DeleteOldSegments().ok());
  EXPECT_EQ(log->number_of_segments(), 3u);
  EXPECT_EQ(log->log_start_offset(), Offset(1));
  EXPECT_EQ(log->Read(Offset(0), 100).status().code(), Errc::kOffsetOutOfRange);

  ASSERT_TRUE(log->MaybeIncrementLogStartOffset(Offset(6)).ok());
  ASSERT_TRUE(log->DeleteOldSegments().ok());
  EXPECT_EQ(log->number_of_segments(), 2u);
  EXPECT_EQ(log->log_start_offset(), Offset(6));

  ASSERT_TRUE(log->MaybeIncrementLogStartOffset(Offset(15)).ok());
  ASSERT_TRUE(log->DeleteOldSegments().ok());
  EXPECT_EQ(log->number_of_segments(), 1u);
  EXPECT_EQ(log->log_start_offset(), Offset(15));

  EXPECT_TRUE(log->MaybeIncrementLogStartOffset(Offset(3)).ok()) << "never moves back";
  EXPECT_EQ(log->log_start_offset(), Offset(15));
  EXPECT_EQ(log->MaybeIncrementLogStartOffset(Offset(16)).code(), Errc::kOffsetOutOfRange);
}

TEST_F(LogTest, SizeRetentionDeletesWholeSegmentsOverTheLimit) {
  const auto size = static_cast<int32_t>(Singleton("test").size());
  LogConfig config = SmallConfig(size * 5);
  config.retention_bytes = size * 10;
  auto log = OpenLog(config);
  for (int i = 0; i < 15; ++i) AppendLeader(*log, Singleton("test"));
  EXPECT_EQ(*log->DeleteOldSegments(), 1);
  EXPECT_EQ(log->number_of_segments(), 2u);
  EXPECT_EQ(log->log_start_offset(), Offset(5));
}

TEST_F(LogTest, SizeRetentionKeepsALogUnderTheLimit) {
  const auto size = static_cast<int32_t>(Singleton("test").size());
  LogConfig config = SmallConfig(size * 5);
  config.retention_bytes = size * 15;
  auto log = OpenLog(config);
  for (int i = 0; i < 15; ++i) AppendLeader(*log, Singleton("test"));
  EXPECT_EQ(*log->DeleteOldSegments(), 0);
  EXPECT_EQ(log->number_of_segments(), 3u);
}

TEST_F(LogTest, TimeRetentionDeletesSegmentsWhoseLargestTimestampExpired) {
  const auto size = static_cast<int32_t>(Singleton("test", 10).size());
  LogConfig config = SmallConfig(size * 5);
  config.retention_ms = 10000;
  auto log = OpenLog(config);
  for (int i = 0; i < 15; ++i) AppendLeader(*log, Singleton("test", 10));
  ASSERT_TRUE(log->DeleteOldSegments().ok());
  EXPECT_EQ(log->number_of_segments(), 1u);
  EXPECT_EQ(log->log_end_offset(), Offset(15));
  EXPECT_EQ(log->log_start_offset(), Offset(15));
}

TEST_F(LogTest, TimeRetentionKeepsSegmentsThatHaveNotExpired) {
  const auto size = static_cast<int32_t>(Singleton("test", clock_.NowMs()).size());
  LogConfig config = SmallConfig(size * 5);
  config.retention_ms = 10000000;
  auto log = OpenLog(config);
  for (int i = 0; i < 15; ++i) AppendLeader(*log, Singleton("test", clock_.NowMs()));
  EXPECT_EQ(*log->DeleteOldSegments(), 0);
  EXPECT_EQ(log->number_of_segments(), 3u);
}

TEST_F(LogTest, TimeRetentionWithoutTimestampsUsesTheLastAppendTime) {
  const auto size = static_cast<int32_t>(Singleton("test").size());
  LogConfig config = SmallConfig(size * 5);
  config.retention_ms = 60000;
  auto log = OpenLog(config);
  for (int i = 0; i < 10; ++i) AppendLeader(*log, Singleton("test"));
  clock_.AdvanceMs(60001);
  for (int i = 0; i < 5; ++i) AppendLeader(*log, Singleton("test"));
  EXPECT_EQ(*log->DeleteOldSegments(), 2) << "the two segments last written 60001 ms ago";
  EXPECT_EQ(log->number_of_segments(), 1u);
}

TEST_F(LogTest, CompactPolicyDisablesTimeAndSizeRetention) {
  const auto size = static_cast<int32_t>(Singleton("test", 10).size());
  LogConfig config = SmallConfig(size * 5);
  config.retention_ms = 10000;
  config.retention_bytes = size;
  config.cleanup_policy = CleanupPolicy::kCompact;
  auto log = OpenLog(config);
  for (int i = 0; i < 15; ++i) AppendLeader(*log, Singleton("test", 10));
  EXPECT_EQ(*log->DeleteOldSegments(), 0);
  EXPECT_EQ(log->number_of_segments(), 3u);
}

TEST_F(LogTest, CompactDeletePolicyStillDeletesExpiredSegments) {
  const auto size = static_cast<int32_t>(Singleton("test", 10).size());
  LogConfig config = SmallConfig(size * 5);
  config.retention_ms = 10000;
  config.cleanup_policy = CleanupPolicy::kCompactDelete;
  auto log = OpenLog(config);
  for (int i = 0; i < 15; ++i) AppendLeader(*log, Singleton("test", 10));
  ASSERT_TRUE(log->DeleteOldSegments().ok());
  EXPECT_EQ(log->number_of_segments(), 1u);
}

TEST_F(LogTest, SegmentsBelowTheLogStartAreDeletedUnderAnyPolicy) {
  const auto size = static_cast<int32_t>(Singleton("test", 10).size());
  LogConfig config = SmallConfig(size * 5);
  config.retention_ms = 10000;
  config.cleanup_policy = CleanupPolicy::kCompact;
  auto log = OpenLog(config);
  for (int i = 0; i < 15; ++i) AppendLeader(*log, Singleton("test", 10));
  EXPECT_EQ(log->number_of_segments(), 3u);
  ASSERT_TRUE(log->MaybeIncrementLogStartOffset(Offset(5)).ok());
  ASSERT_TRUE(log->DeleteOldSegments().ok());
  EXPECT_EQ(log->number_of_segments(), 2u);
  const std::vector<LogSegment*> segments = log->LogSegments();
  EXPECT_LE(segments[0]->base_offset(), log->log_start_offset());
  EXPECT_GT(segments[1]->base_offset(), log->log_start_offset());
}

TEST_F(LogTest, DeletedSegmentsAreRenamedAndRemovedAfterTheDelay) {
  const auto size = static_cast<int32_t>(Singleton("test", clock_.NowMs() - 1000).size());
  LogConfig config = SmallConfig(size * 5);
  config.max_index_size_bytes = 1000;
  config.index_interval_bytes = 10000;
  config.retention_ms = 999;
  config.file_delete_delay_ms = 1000;
  auto log = OpenLog(config);
  for (int i = 0; i < 100; ++i) AppendLeader(*log, Singleton("test", clock_.NowMs() - 1000));
  std::vector<std::string> old_files;
  for (const LogSegmentInfo& segment : log->Segments()) {
    old_files.push_back(segment.log_path);
    old_files.push_back(segment.index_path);
  }
  ASSERT_TRUE(log->DeleteOldSegments().ok());
  EXPECT_EQ(log->number_of_segments(), 1u);
  for (const std::string& path : old_files) {
    EXPECT_FALSE(env_.FileExists(path)) << path;
    EXPECT_TRUE(env_.FileExists(path + ".deleted")) << path;
  }
  clock_.AdvanceMs(999);
  ASSERT_TRUE(log->CompletePendingDeletes().ok());
  EXPECT_TRUE(env_.FileExists(old_files.front() + ".deleted")) << "not yet due";
  clock_.AdvanceMs(1);
  ASSERT_TRUE(log->CompletePendingDeletes().ok());
  for (const std::string& path : old_files) EXPECT_FALSE(env_.FileExists(path + ".deleted"));
}

TEST_F(LogTest, OpenRemovesDeletedFilesLeftBehind) {
  const auto size = static_cast<int32_t>(Singleton("test", clock_.NowMs() - 1000).size());
  LogConfig config = SmallConfig(size * 5);
  config.max_index_size_bytes = 1000;
  config.retention_ms = 999;
  auto log = OpenLog(config);
  for (int i = 0; i < 100; ++i) AppendLeader(*log, Singleton("test", clock_.NowMs() - 1000));
  ASSERT_TRUE(log->DeleteOldSegments().ok());
  ASSERT_TRUE(log->Close().ok());
  log = OpenLog(config);
  EXPECT_EQ(log->number_of_segments(), 1u);
  for (const std::string& name : FilesInDir()) EXPECT_FALSE(name.ends_with(".deleted")) << name;
  EXPECT_GT(log->recovery_report().leftover_files_removed, 0);
}

// ---- Reopening and rebuilding
// ---------------------------------------------------------------------

TEST_F(LogTest, ReopenFindsTheSameEndOffsetAndIndexesWithAndWithoutRecovery) {
  LogConfig config = SmallConfig(7 * 100);
  config.index_interval_bytes = 3 * 100;
  config.max_index_size_bytes = 4096;
  auto log = OpenLog(config);
  for (int i = 0; i < 100; ++i) {
    AppendLeader(*log, Singleton(Filler(100, i), clock_.NowMs() + i * 10));
  }
  EXPECT_EQ(log->log_end_offset(), Offset(100));
  const Offset last_index_offset = log->active_segment().offset_index().last_offset();
  const size_t index_entries = log->active_segment().offset_index().entries();
  const int64_t last_timestamp = log->active_segment().LargestTimestampMs();
  const size_t time_entries =
      log->active_segment().time_index().entries() +
      (log->active_segment().time_index().last_entry().offset == Offset(99) ? 0 : 1);
  ASSERT_TRUE(log->Close().ok());

  for (int64_t recovery_point : {100, 0}) {
    log = OpenLog(config, LogOpenOptions{Offset(recovery_point), Offset(0)});
    EXPECT_EQ(log->recovery_point(), Offset(100));
    EXPECT_EQ(log->log_end_offset(), Offset(100));
    EXPECT_EQ(log->active_segment().offset_index().last_offset(), last_index_offset);
    EXPECT_EQ(log->active_segment().offset_index().entries(), index_entries);
    EXPECT_EQ(log->active_segment().time_index().last_entry(),
              (TimestampOffset{last_timestamp, Offset(99)}));
    EXPECT_EQ(log->active_segment().time_index().entries(), time_entries);
    ASSERT_TRUE(log->Close().ok());
  }
}

TEST_F(LogTest, FollowerAppendsBuildTheTimeIndex) {
  LogConfig config = SmallConfig(10000);
  config.index_interval_bytes = 1;
  auto log = OpenLog(config);
  for (int i = 0; i < 100; ++i) {
    AppendFollower(*log, MakeBatch(Offset(100 + i), {std::to_string(i)}, clock_.NowMs() + i));
  }
  size_t entries = 0;
  for (LogSegment* segment : log->LogSegments()) entries += segment->time_index().entries();
  EXPECT_EQ(entries, 99u);
  EXPECT_EQ(log->active_segment().time_index().last_entry().timestamp_ms, clock_.NowMs() + 99);
}

void ExpectEveryOffsetAndTimestampFindable(LogTest* test, Log& log, int64_t count,
                                           int64_t first_timestamp) {
  for (int64_t i = 0; i < count; ++i) {
    auto read = log.Read(Offset(i), 100, std::nullopt, true);
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(BatchesIn(read->records).front().last_offset(), Offset(i));
    auto found = log.FetchOffsetByTimestamp(first_timestamp + i * 10);
    ASSERT_TRUE(found.ok() && found->has_value());
    EXPECT_EQ((*found)->offset, Offset(i));
  }
}

TEST_F(LogTest, MissingIndexesAreRebuiltOnReopen) {
  LogConfig config = SmallConfig(600);
  config.index_interval_bytes = 1;
  auto log = OpenLog(config);
  const int64_t first_timestamp = clock_.NowMs();
  for (int i = 0; i < 200; ++i) {
    AppendLeader(*log, Singleton(Filler(10, i), first_timestamp + i * 10));
  }
  std::vector<std::string> index_files;
  for (const LogSegmentInfo& segment : log->Segments()) {
    index_files.push_back(segment.index_path);
    index_files.push_back(segment.time_index_path);
  }
  ASSERT_TRUE(log->Close().ok());
  for (const std::string& path : index_files) ASSERT_TRUE(env_.RemoveFile(path).ok());

  log = OpenLog(config);
  EXPECT_EQ(log->log_end_offset(), Offset(200));
  EXPECT_GT(log->LogSegments().front()->offset_index().entries(), 0u);
  EXPECT_GT(log->LogSegments().front()->time_index().entries(), 0u);
  ExpectEveryOffsetAndTimestampFindable(this, *log, 200, first_timestamp);
  ASSERT_TRUE(log->Close().ok());
}

TEST_F(LogTest, CorruptIndexesAreRebuiltOnReopen) {
  LogConfig config = SmallConfig(600);
  config.index_interval_bytes = 1;
  auto log = OpenLog(config);
  const int64_t first_timestamp = clock_.NowMs();
  for (int i = 0; i < 200; ++i) {
    AppendLeader(*log, Singleton(Filler(10, i), first_timestamp + i * 10));
  }
  std::vector<std::string> index_files;
  for (const LogSegmentInfo& segment : log->Segments()) {
    index_files.push_back(segment.index_path);
    index_files.push_back(segment.time_index_path);
  }
  ASSERT_TRUE(log->Close().ok());
  for (const std::string& path : index_files) {
    auto file = env_.OpenFile(path, OpenMode::kTruncate);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(AsBytes("  ")).ok());
  }
  // Recover everything from the end: only the sanity checks can catch the damage below it.
  log = OpenLog(config, LogOpenOptions{Offset(200), Offset(0)});
  EXPECT_EQ(log->log_end_offset(), Offset(200));
  EXPECT_GE(log->recovery_report().indexes_rebuilt,
            static_cast<int64_t>(index_files.size() / 2) - 1);
  ExpectEveryOffsetAndTimestampFindable(this, *log, 200, first_timestamp);
  ASSERT_TRUE(log->Close().ok());
}

TEST_F(LogTest, OrphanIndexFilesAreRemovedOnOpen) {
  ASSERT_TRUE(env_.CreateDir(log_dir_).ok());
  ASSERT_TRUE(env_.OpenFile(IndexFilePath(log_dir_, Offset(5)), OpenMode::kCreateNew).ok());
  ASSERT_TRUE(env_.OpenFile(TimeIndexFilePath(log_dir_, Offset(5)), OpenMode::kCreateNew).ok());
  const auto size = static_cast<int32_t>(Singleton("test", clock_.NowMs()).size());
  LogConfig config = SmallConfig(size * 5);
  config.max_index_size_bytes = 1000;
  config.index_interval_bytes = 1;
  auto log = OpenLog(config);
  EXPECT_GT(*env_.FileSize(IndexFilePath(log_dir_, Offset(0))), 0u) << "preallocated";
  EXPECT_GT(*env_.FileSize(TimeIndexFilePath(log_dir_, Offset(0))), 0u);
  EXPECT_FALSE(env_.FileExists(IndexFilePath(log_dir_, Offset(5))));
  EXPECT_FALSE(env_.FileExists(TimeIndexFilePath(log_dir_, Offset(5))));
  for (int i = 0; i < 10; ++i) AppendLeader(*log, Singleton("test", clock_.NowMs()));
  EXPECT_EQ(log->log_end_offset(), Offset(10));
}

TEST_F(LogTest, RecoveryFromACorruptTailKeepsEveryRecordBeforeIt) {
  LogConfig config = SmallConfig(1000);
  config.index_interval_bytes = 1;
  for (int round = 0; round < 5; ++round) {
    const int messages = 50 + round * 9;
    auto log = OpenLog(config);
    for (int i = 0; i < messages; ++i) AppendLeader(*log, Singleton("test", clock_.NowMs()));
    const std::vector<Record> before = RecordsIn(ReadLog(*log, 0, INT32_MAX).records);
    const std::string active_log = log->active_segment().log_path();
    const std::string active_index = log->active_segment().index_path();
    ASSERT_TRUE(log->Close().ok());
    testing::AppendNonsense(env_, active_index, 1 + (round * 97) % 1024, round + 10);
    testing::AppendNonsense(env_, active_log, 1 + (round * 131) % 1024, round + 20);

    log = OpenLog(config, LogOpenOptions{Offset(50), Offset(0)});
    EXPECT_EQ(log->log_end_offset(), Offset(messages));
    EXPECT_FALSE(log->recovery_report().first_damage.ok());
    std::vector<Record> after;
    for (int64_t offset = 0; offset < messages;) {
      const std::vector<Record> read = RecordsIn(ReadLog(*log, offset, INT32_MAX).records);
      ASSERT_FALSE(read.empty());
      after.insert(after.end(), read.begin(), read.end());
      offset = read.back().offset.value() + 1;
    }
    ASSERT_EQ(after.size(), static_cast<size_t>(messages));
    ASSERT_GE(before.size(), 1u);
    for (int i = 0; i < messages; ++i) {
      EXPECT_EQ(after[i].offset, Offset(i));
      EXPECT_EQ(ValueOf(after[i]), "test");
      EXPECT_EQ(after[i].timestamp_ms, clock_.NowMs());
    }
    ASSERT_TRUE(log->Delete().ok());
  }
}

TEST_F(LogTest, ReopenWithALogStartPastTheRecoveredEndStartsOverThere) {
  auto log = OpenLog(LogConfig{});
  for (int i = 0; i < 5; ++i) {
    AppendLeader(*log, Singleton(std::to_string(i), clock_.NowMs()));
    ASSERT_TRUE(log->Roll().ok());
  }
  EXPECT_EQ(log->number_of_segments(), 6u);
  ASSERT_TRUE(log->MaybeIncrementLogStartOffset(Offset(4)).ok());
  const std::string second = log->LogSegments()[1]->log_path();
  ASSERT_TRUE(log->Close().ok());
  {
    auto file = env_.OpenFile(second, OpenMode::kTruncate);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(AsBytes("corruptRecord")).ok());
  }
  // Segments 0..3 lie wholly below the log start: they are deleted before recovery, so the
  // damage in segment 1 costs nothing above the log start (Kafka would delete every segment after
  // the damaged one and start over empty at 4).
  log = OpenLog(LogConfig{}, LogOpenOptions{Offset(0), Offset(4)});
  EXPECT_EQ(log->number_of_segments(), 2u);
  EXPECT_EQ(log->log_start_offset(), Offset(4));
  EXPECT_EQ(log->log_end_offset(), Offset(5));
  EXPECT_EQ(log->recovery_report().segments_below_log_start_deleted,
            (std::vector<Offset>{Offset(0), Offset(1), Offset(2), Offset(3)}));
  EXPECT_EQ(OffsetsIn(ReadLog(*log, 4, 1 << 20).records), (std::vector<int64_t>{4}));
}

TEST_F(LogTest, OpenWithoutSegmentsStartsAtTheLogStartOffset) {
  auto log = OpenLog(LogConfig{}, LogOpenOptions{Offset(0), Offset(500)});
  EXPECT_EQ(log->log_start_offset(), Offset(500));
  EXPECT_EQ(log->log_end_offset(), Offset(500));
  EXPECT_EQ(AppendLeader(*log, Singleton("x")).first_offset, Offset(500));
}

// ---- Flush --------------------------------------------------------------------------------------

TEST_F(LogTest, FlushMovesTheRecoveryPoint) {
  auto log = OpenLog(LogConfig{});
  for (int i = 0; i < 10; ++i) AppendLeader(*log, Singleton("x"));
  EXPECT_EQ(log->recovery_point(), Offset(0)) << "nothing is flushed by default";
  EXPECT_EQ(log->unflushed_messages(), 10);
  ASSERT_TRUE(log->Flush(Offset(4)).ok());
  EXPECT_EQ(log->recovery_point(), Offset(4));
  ASSERT_TRUE(log->Flush(Offset(2)).ok());
  EXPECT_EQ(log->recovery_point(), Offset(4)) << "never moves back";
  ASSERT_TRUE(log->Flush(Offset(100)).ok());
  EXPECT_EQ(log->recovery_point(), Offset(10)) << "clamped to the log end";
}

TEST_F(LogTest, FlushIntervalMessagesFlushesOnAppend) {
  LogConfig config;
  config.flush_interval_messages = 3;
  auto log = OpenLog(config);
  AppendLeader(*log, Singleton("a"));
  AppendLeader(*log, Singleton("b"));
  EXPECT_EQ(log->recovery_point(), Offset(0));
  AppendLeader(*log, Singleton("c"));
  EXPECT_EQ(log->recovery_point(), Offset(3));
}

TEST_F(LogTest, MaybeFlushFlushesWhenFlushMsHasPassed) {
  LogConfig config;
  config.flush_ms = 1000;
  auto log = OpenLog(config);
  AppendLeader(*log, Singleton("a"));
  ASSERT_TRUE(log->MaybeFlush().ok());
  EXPECT_EQ(log->recovery_point(), Offset(0));
  clock_.AdvanceMs(1000);
  ASSERT_TRUE(log->MaybeFlush().ok());
  EXPECT_EQ(log->recovery_point(), Offset(1));
}

// ---- Timestamps, segments listing, observer
// ---------------------------------------------------------

TEST_F(LogTest, FetchOffsetByTimestampSearchesTheRightSegment) {
  LogConfig config = SmallConfig(200);
  config.index_interval_bytes = 1;
  auto log = OpenLog(config);
  EXPECT_EQ(*log->FetchOffsetByTimestamp(0), std::nullopt);
  for (int i = 0; i < 30; ++i) AppendLeader(*log, Singleton("v", 1000 + i * 10));
  EXPECT_EQ((*log->FetchOffsetByTimestamp(1000))->offset, Offset(0));
  EXPECT_EQ((*log->FetchOffsetByTimestamp(1001))->offset, Offset(1));
  EXPECT_EQ((*log->FetchOffsetByTimestamp(1290))->offset, Offset(29));
  EXPECT_EQ(*log->FetchOffsetByTimestamp(1291), std::nullopt);
  EXPECT_EQ((*log->FetchOffsetByTimestamp(Log::kEarliestTimestamp))->offset, Offset(0));
  EXPECT_EQ((*log->FetchOffsetByTimestamp(Log::kLatestTimestamp))->offset, Offset(30));
}

TEST_F(LogTest, SegmentsDescribeFilesForTools) {
  auto log = OpenLog(SmallConfig(static_cast<int32_t>(Singleton("v", 5).size()) * 2));
  for (int i = 0; i < 5; ++i) AppendLeader(*log, Singleton("v", 5));
  const std::vector<LogSegmentInfo> segments = log->Segments();
  ASSERT_EQ(segments.size(), 3u);
  EXPECT_EQ(segments[0].base_offset, Offset(0));
  EXPECT_EQ(segments[1].base_offset, Offset(2));
  EXPECT_EQ(segments[2].base_offset, Offset(4));
  EXPECT_EQ(segments[1].next_offset, Offset(4));
  EXPECT_TRUE(segments[2].active);
  EXPECT_FALSE(segments[0].active);
  EXPECT_EQ(segments[1].log_path, log_dir_ + "/00000000000000000002.log");
  EXPECT_EQ(segments[1].largest_timestamp_ms, 5);
  EXPECT_EQ(segments[0].size_bytes, 2 * Singleton("v", 5).size());
}

// A leader-epoch cache kept the way KIP-101's LeaderEpochFileCache is, fed by the Log's hooks:
// shows the hooks are enough to maintain it.
class EpochCache : public LogObserver {
 public:
  void OnAppend(const BatchHeader& batch) override {
    if (entries_.empty() || batch.partition_leader_epoch > entries_.back().first) {
      entries_.emplace_back(batch.partition_leader_epoch, batch.base_offset);
    }
  }
  void OnTruncateTo(Offset end_offset) override {
    while (!entries_.empty() && entries_.back().second >= end_offset) entries_.pop_back();
  }
  void OnTruncateFullyAndStartAt(Offset) override { entries_.clear(); }
  void OnLogStartOffsetIncremented(Offset start) override {
    // Drop entries wholly below the new start; the one spanning it now starts there.
    while (entries_.size() > 1 && entries_[1].second <= start) entries_.erase(entries_.begin());
    if (!entries_.empty() && entries_[0].second < start) entries_[0].second = start;
  }
  void OnRoll(Offset base) override { rolls_.push_back(base); }

  std::vector<std::pair<LeaderEpoch, Offset>> entries_;
  std::vector<Offset> rolls_;
};

TEST_F(LogTest, ObserverSeesFollowerEpochsAndTruncations) {
  const auto size = static_cast<int32_t>(MakeBatch(Offset(0), {"value"}).size());
  auto log = OpenLog(SmallConfig(10 * size));
  EpochCache cache;
  log->set_observer(&cache);
  auto append = [&](int epoch, int64_t start, int count) {
    for (int i = 0; i < count; ++i) {
      AppendFollower(*log,
                     MakeBatch(Offset(start + i), {"value"}, kNoTimestamp, LeaderEpoch(epoch)));
    }
  };
  append(0, 0, 10);
  append(1, 10, 6);
  append(2, 16, 4);
  EXPECT_EQ(log->number_of_segments(), 2u);
  EXPECT_EQ(cache.rolls_, std::vector<Offset>{Offset(10)});
  EXPECT_EQ(cache.entries_.size(), 3u);
  ASSERT_TRUE(log->TruncateTo(log->log_end_offset()).ok());
  EXPECT_EQ(cache.entries_.size(), 3u) << "truncating at the end changes nothing";
  ASSERT_TRUE(log->TruncateTo(Offset(11)).ok());
  EXPECT_EQ(cache.entries_.size(), 2u);
  ASSERT_TRUE(log->TruncateTo(Offset(10)).ok());
  EXPECT_EQ(cache.entries_.size(), 1u);
  ASSERT_TRUE(log->TruncateTo(Offset(0)).ok());
  EXPECT_EQ(cache.entries_.size(), 0u);
}

TEST_F(LogTest, ObserverSeesRetentionMoveTheLogStart) {
  const auto size = static_cast<int32_t>(Singleton("test").size());
  LogConfig config = SmallConfig(size * 5);
  config.retention_bytes = size * 10;
  auto log = OpenLog(config);
  EpochCache cache;
  log->set_observer(&cache);
  for (int i = 0; i < 15; ++i) AppendLeader(*log, Singleton("test"), LeaderEpoch(i < 7 ? 0 : 1));
  EXPECT_EQ(cache.entries_, (std::vector<std::pair<LeaderEpoch, Offset>>{
                                {LeaderEpoch(0), Offset(0)}, {LeaderEpoch(1), Offset(7)}}));
  ASSERT_TRUE(log->DeleteOldSegments().ok());
  EXPECT_EQ(cache.entries_, (std::vector<std::pair<LeaderEpoch, Offset>>{
                                {LeaderEpoch(0), Offset(5)}, {LeaderEpoch(1), Offset(7)}}));
}

TEST_F(LogTest, DerivedStateIsRebuiltFromBatchesAfterReopen) {
  auto log = OpenLog(LogConfig{});
  EpochCache cache;
  log->set_observer(&cache);
  AppendFollower(*log, MakeBatch(Offset(0), {"random"}, kNoTimestamp, LeaderEpoch(1)));
  AppendFollower(*log, MakeBatch(Offset(1), {"random"}, kNoTimestamp, LeaderEpoch(2)));
  AppendFollower(*log, MakeBatch(Offset(2), {"random"}, kNoTimestamp, LeaderEpoch(2)));
  AppendFollower(*log, MakeBatch(Offset(3), {"random"}, kNoTimestamp, LeaderEpoch(3)));
  const auto expected = cache.entries_;
  EXPECT_EQ(expected.size(), 3u);
  log->set_observer(nullptr);
  ASSERT_TRUE(log->Close().ok());

  log = OpenLog(LogConfig{});
  EpochCache rebuilt;
  ASSERT_TRUE(log->ForEachBatch(log->log_start_offset(),
                                [&](const BatchHeader& header, uint64_t) {
                                  rebuilt.OnAppend(header);
                                  return BatchWalk::kContinue;
                                })
                  .ok());
  EXPECT_EQ(rebuilt.entries_, expected);
}

}  // namespace
}  // namespace ksim
