// A Kafka 0.10.0 log (LogConfig::time_index false): no .timeindex file beside any segment (KIP-33
// added it in 0.10.1), recovery that rebuilds only the offset index, rolls by the segment's age,
// retention by its last modification, and ListOffsets by timestamp answered from the segments'
// last-modified times (0.10.0.1's KafkaApis.fetchOffsetsBefore). The same log at 0.10.1 keeps a
// time index, for contrast.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/env/posix_env.h"
#include "core/record/legacy_record.h"
#include "core/storage/log.h"
#include "tests/support/core/log_test_util.h"
#include "tests/support/core/temp_dir.h"

namespace ksim {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::RecordsIn;
using testing::ValueOf;

constexpr int64_t kStartMs = 1'600'000'000'000;

class LogWithoutTimeIndexTest : public ::testing::Test {
 protected:
  LogWithoutTimeIndexTest()
      : clock_(kStartMs * kUsPerMs), log_dir_(JoinPath(tmp_.path(), "topic-0")) {}

  // A 0.10.0 broker's log (time_index false, message sets v1) or a 0.10.1 one.
  static LogConfig Config(bool time_index) {
    LogConfig config;
    config.message_format_magic = kMagicV1;
    config.time_index = time_index;
    config.index_interval_bytes = 100;
    return config;
  }
  std::unique_ptr<Log> OpenLog(const LogConfig& config, LogOpenOptions options = {}) {
    auto log = Log::Open(env_, clock_, log_dir_, config, options);
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    return log.ok() ? std::move(log).value() : nullptr;
  }
  static void Append(Log& log, const std::string& value, int64_t timestamp_ms) {
    Bytes batch = testing::MakeBatch(Offset(0), {value}, timestamp_ms);
    auto info = log.AppendAsLeader(batch, LeaderEpoch(0));
    ASSERT_TRUE(info.ok()) << info.status().ToString();
  }
  // The directory's files with a suffix, sorted.
  std::vector<std::string> FilesEndingWith(std::string_view suffix) {
    std::vector<std::string> found;
    auto names = env_.ListDir(log_dir_);
    EXPECT_TRUE(names.ok());
    for (const std::string& name : *names) {
      if (name.size() >= suffix.size() && name.ends_with(suffix)) found.push_back(name);
    }
    std::sort(found.begin(), found.end());
    return found;
  }
  static std::vector<std::string> Values(Log& log) {
    auto read = log.Read(log.log_start_offset(), 1 << 20);
    EXPECT_TRUE(read.ok());
    std::vector<std::string> values;
    for (const Record& record : RecordsIn(read->records)) values.push_back(ValueOf(record));
    return values;
  }

  testing::TempDir tmp_;
  PosixEnv env_;
  ManualClock clock_;
  std::string log_dir_;
};

TEST_F(LogWithoutTimeIndexTest, NoTimeIndexFileAtAnyStepAt0100) {
  LogConfig config = Config(/*time_index=*/false);
  config.segment_bytes = 300;
  auto log = OpenLog(config);
  for (int i = 0; i < 20; ++i) Append(*log, "record-" + std::to_string(i), kStartMs + i);
  ASSERT_GT(log->number_of_segments(), 2u);
  EXPECT_THAT(FilesEndingWith(".timeindex"), IsEmpty());
  EXPECT_EQ(FilesEndingWith(".index").size(), log->number_of_segments());
  for (LogSegment* segment : log->LogSegments()) {
    EXPECT_FALSE(segment->has_time_index());
    EXPECT_EQ(segment->time_index_path(), "");
  }
  ASSERT_TRUE(log->TruncateTo(Offset(5)).ok());
  Append(*log, "after-truncation", kStartMs + 100);
  const Offset end = log->log_end_offset();
  ASSERT_TRUE(log->Close().ok());
  EXPECT_THAT(FilesEndingWith(".timeindex"), IsEmpty());

  // A reopen after a clean shutdown (LogManager's recovery point past the end) trusts the offset
  // indexes of the segments before the active one: no time index is missing, none is rebuilt.
  log = OpenLog(config, LogOpenOptions{Offset(std::numeric_limits<int64_t>::max()), Offset(0)});
  EXPECT_EQ(log->recovery_report().indexes_rebuilt, 0);
  EXPECT_TRUE(log->recovery_report().first_damage.ok());
  EXPECT_EQ(log->log_end_offset(), end);
  EXPECT_THAT(FilesEndingWith(".timeindex"), IsEmpty());
  EXPECT_EQ(Values(*log).back(), "after-truncation");
}

TEST_F(LogWithoutTimeIndexTest, A0101LogKeepsATimeIndexBesideEverySegment) {
  LogConfig config = Config(/*time_index=*/true);
  config.segment_bytes = 300;
  auto log = OpenLog(config);
  for (int i = 0; i < 20; ++i) Append(*log, "record-" + std::to_string(i), kStartMs + i);
  EXPECT_EQ(FilesEndingWith(".timeindex").size(), log->number_of_segments());
  EXPECT_TRUE(log->active_segment().has_time_index());
}

TEST_F(LogWithoutTimeIndexTest, RecoveryOfA0100LogRebuildsOnlyTheOffsetIndex) {
  const LogConfig config = Config(/*time_index=*/false);
  auto log = OpenLog(config);
  for (int i = 0; i < 30; ++i) Append(*log, "value-" + std::to_string(i), kStartMs + i);
  ASSERT_TRUE(log->Flush().ok());
  const size_t index_entries = log->active_segment().offset_index().entries();
  ASSERT_GT(index_entries, 2u);
  log.reset();  // a crash
  // A torn write after the last whole message, and the offset index lost.
  {
    auto file = env_.OpenFile(LogFilePath(log_dir_, Offset(0)), OpenMode::kOpenExisting);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(Bytes{0, 0, 0, 0, 0, 0, 0, 30, 0, 0}).ok());
  }
  ASSERT_TRUE(env_.RemoveFile(IndexFilePath(log_dir_, Offset(0))).ok());

  log = OpenLog(config);
  const LogRecoveryReport& report = log->recovery_report();
  EXPECT_EQ(report.bytes_truncated, 10u);
  EXPECT_EQ(log->log_end_offset(), Offset(30));
  EXPECT_EQ(log->active_segment().offset_index().entries(), index_entries);
  EXPECT_THAT(FilesEndingWith(".timeindex"), IsEmpty());
  auto read = log->Read(Offset(17), 100);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(ValueOf(RecordsIn(read->records)[0]), "value-17");
}

TEST_F(LogWithoutTimeIndexTest, AStaleTimeIndexFileIsLeftAlone) {
  // A .timeindex written by a later release: 0.10.0's loadSegments knows only .log and .index.
  LogConfig later = Config(/*time_index=*/true);
  auto log = OpenLog(later);
  Append(*log, "a", kStartMs);
  ASSERT_TRUE(log->Close().ok());
  ASSERT_THAT(FilesEndingWith(".timeindex"), ElementsAre("00000000000000000000.timeindex"));
  log = OpenLog(Config(/*time_index=*/false));
  Append(*log, "b", kStartMs + 1);
  ASSERT_TRUE(log->Close().ok());
  EXPECT_THAT(FilesEndingWith(".timeindex"), ElementsAre("00000000000000000000.timeindex"));
}

TEST_F(LogWithoutTimeIndexTest, ListOffsetsByTimestampAnswersFromSegmentModificationTimes) {
  const LogConfig config = Config(/*time_index=*/false);
  auto log = OpenLog(config);
  // Segment 0 last modified at +1000 ms, segment 2 at +3000 ms; the record timestamps are far in
  // the past and play no part.
  clock_.AdvanceMs(1000);
  Append(*log, "a", 1000);
  Append(*log, "b", 1000);
  ASSERT_TRUE(log->Roll().ok());
  clock_.AdvanceMs(2000);
  Append(*log, "c", 1000);
  clock_.AdvanceMs(5000);  // now: +8000 ms
  auto at = [&](int64_t timestamp_ms) -> std::optional<int64_t> {
    auto found = log->FetchOffsetByTimestamp(timestamp_ms);
    EXPECT_TRUE(found.ok());
    if (!found->has_value()) return std::nullopt;
    EXPECT_EQ((*found)->timestamp_ms, kNoTimestamp);
    return (*found)->offset.value();
  };
  EXPECT_EQ(at(kStartMs), std::nullopt);  // before every segment's last modification
  EXPECT_EQ(at(kStartMs + 1000), 0);      // the first segment's base offset
  EXPECT_EQ(at(kStartMs + 2999), 0);
  EXPECT_EQ(at(kStartMs + 3000), 2);
  EXPECT_EQ(at(kStartMs + 7999), 2);
  EXPECT_EQ(at(kStartMs + 8000), 3);  // now or later: the log end offset
  EXPECT_EQ(at(Log::kEarliestTimestamp), 0);
  EXPECT_EQ(at(Log::kLatestTimestamp), 3);
}

TEST_F(LogWithoutTimeIndexTest, RollsByTheSegmentsAgeNotItsFirstTimestamp) {
  LogConfig config = Config(/*time_index=*/false);
  config.segment_ms = 10'000;
  auto log = OpenLog(config);
  // Timestamps an hour apart: 0.10.1+ would roll at the second append (KIP-33's
  // rollingBasedTimestamp); 0.10.0 measures from the segment's creation (Log.maybeRoll).
  Append(*log, "a", kStartMs - 3'600'000);
  Append(*log, "b", kStartMs);
  EXPECT_EQ(log->number_of_segments(), 1u);
  clock_.AdvanceMs(10'001);
  Append(*log, "c", kStartMs);
  EXPECT_EQ(log->number_of_segments(), 2u);

  LogConfig later = config;
  later.time_index = true;
  log_dir_ = JoinPath(tmp_.path(), "topic-1");
  log = OpenLog(later);
  Append(*log, "a", kStartMs - 3'600'000);
  Append(*log, "b", kStartMs);
  EXPECT_EQ(log->number_of_segments(), 2u);
}

}  // namespace
}  // namespace ksim
