// The storage engine on message format v0/v1 (message.format.version before 0.11): a log written
// in v1 reads back and survives a reopen; a segment built byte by byte from the protocol guide is
// recovered and read; a CRC-32 mismatch cuts the tail on recovery; v1 then v2 in one log (an
// upgrade); index lookups (offset and time) on a v1 log; an idempotent batch refused for v1.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/env/posix_env.h"
#include "core/record/legacy_record.h"
#include "core/storage/log.h"
#include "tests/support/core/legacy_message_set.h"
#include "tests/support/core/log_test_util.h"
#include "tests/support/core/temp_dir.h"

namespace ksim {
namespace {

using testing::BatchesIn;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::RecordsIn;
using testing::ValueOf;

constexpr int64_t kStartMs = 1'600'000'000'000;

Bytes Batch(Offset base, const std::vector<std::string>& values, int64_t timestamp_ms) {
  return testing::MakeBatch(base, values, timestamp_ms);
}

class LegacyFormatLogTest : public ::testing::Test {
 protected:
  LegacyFormatLogTest() : clock_(kStartMs * kUsPerMs), log_dir_(JoinPath(tmp_.path(), "topic-0")) {}

  static LogConfig Config(int8_t magic) {
    LogConfig config;
    config.message_format_magic = magic;
    return config;
  }
  std::unique_ptr<Log> OpenLog(const LogConfig& config, LogOpenOptions options = {}) {
    auto log = Log::Open(env_, clock_, log_dir_, config, options);
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    return log.ok() ? std::move(log).value() : nullptr;
  }
  // Flushes, drops the log without closing it (a crash after the flush) and reopens it with
  // recovery from offset 0, so that every entry is verified again; expects no damage.
  std::unique_ptr<Log> CrashAndRecover(std::unique_ptr<Log> log, int8_t magic) {
    EXPECT_TRUE(log->Flush().ok());
    log.reset();
    log = OpenLog(Config(magic));
    EXPECT_TRUE(log->recovery_report().first_damage.ok())
        << log->recovery_report().first_damage.ToString();
    return log;
  }
  static LogAppendInfo Append(Log& log, Bytes batch) {
    auto info = log.AppendAsLeader(batch, LeaderEpoch(3));
    EXPECT_TRUE(info.ok()) << info.status().ToString();
    return info.ok() ? *info : LogAppendInfo{};
  }
  static Bytes ReadAll(Log& log) {
    auto read = log.Read(log.log_start_offset(), 1 << 20);
    EXPECT_TRUE(read.ok()) << read.status().ToString();
    return read.ok() ? read->records : Bytes{};
  }
  static std::vector<int> Magics(ByteView bytes) {
    std::vector<int> magics;
    for (const BatchHeader& header : BatchesIn(bytes)) magics.push_back(header.magic);
    return magics;
  }
  static std::vector<std::string> Values(ByteView bytes) {
    std::vector<std::string> values;
    for (const Record& record : RecordsIn(bytes)) values.push_back(ValueOf(record));
    return values;
  }

  testing::TempDir tmp_;
  PosixEnv env_;
  ManualClock clock_;
  std::string log_dir_;
};

TEST_F(LegacyFormatLogTest, V1LogWrittenByKsimReadsBackAndSurvivesRecovery) {
  auto log = OpenLog(Config(kMagicV1));
  Bytes producer_batch = Batch(Offset(0), {"a", "bb", "ccc"}, kStartMs);
  const LogAppendInfo info = Append(*log, producer_batch);
  EXPECT_EQ(info.first_offset, Offset(0));
  EXPECT_EQ(info.last_offset, Offset(2));
  EXPECT_EQ(info.num_batches, 3);  // one message per record
  EXPECT_EQ(info.max_timestamp_ms, kStartMs);
  // The producer's v2 batch is stamped with the offset its records got, as without conversion.
  EXPECT_EQ(BatchesIn(producer_batch)[0].base_offset, Offset(0));
  Append(*log, Batch(Offset(0), {"dddd"}, kStartMs + 1));

  Bytes read = ReadAll(*log);
  EXPECT_THAT(Magics(read), ElementsAre(1, 1, 1, 1));
  EXPECT_THAT(Values(read), ElementsAre("a", "bb", "ccc", "dddd"));
  for (const BatchHeader& header : BatchesIn(read)) {
    EXPECT_EQ(header.partition_leader_epoch, kNoPartitionLeaderEpoch);  // v1 has none
  }
  EXPECT_EQ(RecordsIn(read)[3].offset, Offset(3));
  EXPECT_EQ(RecordsIn(read)[3].timestamp_ms, kStartMs + 1);

  // A crash (no Close): reopening verifies every entry's CRC-32 and keeps them all.
  const uint64_t size = log->size_in_bytes();
  log = CrashAndRecover(std::move(log), kMagicV1);
  EXPECT_EQ(log->log_end_offset(), Offset(4));
  EXPECT_EQ(log->size_in_bytes(), size);
  EXPECT_THAT(Values(ReadAll(*log)), ElementsAre("a", "bb", "ccc", "dddd"));
}

TEST_F(LegacyFormatLogTest, HandBuiltSegmentIsRecoveredAndRead) {
  ASSERT_TRUE(env_.CreateDir(log_dir_).ok());
  {
    auto file = env_.OpenFile(LogFilePath(log_dir_, Offset(0)), OpenMode::kCreateNew);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(testing::HandBuiltMessageSet()).ok());
  }
  auto log = OpenLog(Config(kMagicV1));
  EXPECT_TRUE(log->recovery_report().first_damage.ok())
      << log->recovery_report().first_damage.ToString();
  EXPECT_EQ(log->log_end_offset(), Offset(2));
  const Bytes read = ReadAll(*log);
  EXPECT_EQ(read, testing::HandBuiltMessageSet());
  const std::vector<Record> records = RecordsIn(read);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].timestamp_ms, testing::kHandBuiltTimestamp);
  EXPECT_EQ(ValueOf(records[1]), "world");
  EXPECT_EQ(records[1].timestamp_ms, kNoTimestamp);
  // Reads from an offset find the v0 message by its own offset.
  auto from_one = log->Read(Offset(1), 1 << 20);
  ASSERT_TRUE(from_one.ok());
  EXPECT_EQ(from_one->position, testing::kV1MessageBytes);
  // The largest timestamp is the v1 message's; the v0 one has none.
  auto found = log->FetchOffsetByTimestamp(testing::kHandBuiltTimestamp);
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->offset, Offset(0));
}

TEST_F(LegacyFormatLogTest, CrcMismatchInTheTailIsCutOnRecovery) {
  auto log = OpenLog(Config(kMagicV1));
  for (int i = 0; i < 10; ++i)
    Append(*log, Batch(Offset(0), {"value-" + std::to_string(i)}, kStartMs));
  ASSERT_TRUE(log->Flush().ok());
  const uint64_t size = log->size_in_bytes();
  const size_t entry = BatchesIn(ReadAll(*log)).back().size_in_bytes();
  log.reset();  // a crash
  // One bit of the last message's value flips: its CRC-32 no longer matches.
  auto file = env_.OpenFile(LogFilePath(log_dir_, Offset(0)), OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  Bytes last(1);
  ASSERT_TRUE((*file)->ReadAt(size - 1, MutableByteView(last)).ok());
  last[0] ^= 0x04;
  ASSERT_TRUE((*file)->WriteAt(size - 1, last).ok());
  file->reset();

  log = OpenLog(Config(kMagicV1));
  const LogRecoveryReport& report = log->recovery_report();
  EXPECT_THAT(report.first_damage.message(), HasSubstr("CRC mismatch"));
  EXPECT_EQ(report.bytes_truncated, entry);
  EXPECT_EQ(log->log_end_offset(), Offset(9));
  EXPECT_EQ(Values(ReadAll(*log)).back(), "value-8");
}

TEST_F(LegacyFormatLogTest, UpgradeFromV1ToV2KeepsBothFormatsInOneLog) {
  auto log = OpenLog(Config(kMagicV1));
  Append(*log, Batch(Offset(0), {"old-0", "old-1"}, kStartMs));
  ASSERT_TRUE(log->Close().ok());
  // message.format.version 0.10.0 -> 0.11.0: the log keeps its v1 entries and appends v2.
  log = OpenLog(Config(kMagicV2), LogOpenOptions{});
  Append(*log, Batch(Offset(0), {"new-2", "new-3"}, kStartMs + 1));
  // A v1 batch handed to a v2 log is converted up.
  Append(*log, EncodeRecords(kMagicV1, BatchSpec{},
                             std::vector<RecordInput>{RecordInput{
                                 kStartMs + 2, std::nullopt, Bytes{'n', 'e', 'w', '-', '4'}, {}}}));
  Bytes read = ReadAll(*log);
  EXPECT_THAT(Magics(read), ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(Values(read), ElementsAre("old-0", "old-1", "new-2", "new-3", "new-4"));
  EXPECT_EQ(BatchesIn(read)[2].partition_leader_epoch, LeaderEpoch(3));

  // Recovery walks the mixed segment entry by entry.
  log = CrashAndRecover(std::move(log), kMagicV2);
  EXPECT_EQ(log->log_end_offset(), Offset(5));
  EXPECT_THAT(Values(ReadAll(*log)), ElementsAre("old-0", "old-1", "new-2", "new-3", "new-4"));

  // A follower copies the leader's bytes, both formats, as they are.
  const std::string follower_dir = JoinPath(tmp_.path(), "topic-1");
  auto follower = Log::Open(env_, clock_, follower_dir, Config(kMagicV2));
  ASSERT_TRUE(follower.ok());
  auto copied = (*follower)->AppendAsFollower(ReadAll(*log));
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  EXPECT_EQ(ReadAll(**follower), ReadAll(*log));
}

TEST_F(LegacyFormatLogTest, IndexLookupsOnAV1Log) {
  LogConfig config = Config(kMagicV1);
  config.index_interval_bytes = 100;
  auto log = OpenLog(config);
  for (int i = 0; i < 60; ++i) {
    Append(*log, Batch(Offset(0), {"record-" + std::to_string(i)}, kStartMs + 10 * i));
  }
  LogSegment& segment = log->active_segment();
  EXPECT_GT(segment.offset_index().entries(), 5u);
  EXPECT_GT(segment.time_index().entries(), 5u);
  for (int64_t offset = 0; offset < 60; ++offset) {
    auto read = log->Read(Offset(offset), 200);
    ASSERT_TRUE(read.ok());
    const std::vector<Record> records = RecordsIn(read->records);
    ASSERT_FALSE(records.empty()) << offset;
    EXPECT_EQ(records[0].offset, Offset(offset));
    EXPECT_EQ(ValueOf(records[0]), "record-" + std::to_string(offset));
  }
  for (int64_t i = 0; i < 60; i += 7) {
    auto found = log->FetchOffsetByTimestamp(kStartMs + 10 * i - 5);
    ASSERT_TRUE(found.ok() && found->has_value());
    EXPECT_EQ((*found)->offset, Offset(i));
  }
  // The indexes rebuilt from the .log file (recovery) give the same lookups.
  const size_t entries = segment.offset_index().entries();
  ASSERT_TRUE(log->Flush().ok());
  log.reset();
  log = OpenLog(config);  // recovery point 0: the indexes are rebuilt
  EXPECT_EQ(log->active_segment().offset_index().entries(), entries);
  auto read = log->Read(Offset(33), 200);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(RecordsIn(read->records)[0].offset, Offset(33));
}

TEST_F(LegacyFormatLogTest, V0LogHasNoTimestampsToIndex) {
  LogConfig config = Config(kMagicV0);
  config.index_interval_bytes = 50;
  auto log = OpenLog(config);
  for (int i = 0; i < 20; ++i) Append(*log, Batch(Offset(0), {"x"}, kStartMs + i));
  EXPECT_GT(log->active_segment().offset_index().entries(), 0u);
  EXPECT_EQ(log->active_segment().time_index().entries(), 0u);
  EXPECT_THAT(Magics(ReadAll(*log)), ::testing::Each(0));
  auto found = log->FetchOffsetByTimestamp(kStartMs);
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->has_value());
}

TEST_F(LegacyFormatLogTest, IdempotentBatchIsRefusedByAV1Log) {
  auto log = OpenLog(Config(kMagicV1));
  BatchSpec spec;
  spec.producer_id = ProducerId(1);
  spec.producer_epoch = ProducerEpoch(0);
  spec.base_sequence = Sequence(0);
  std::vector<RecordInput> records{RecordInput{kStartMs, std::nullopt, Bytes{'x'}, {}}};
  Bytes batch = EncodeBatch(spec, records);
  auto refused = log->AppendAsLeader(batch, LeaderEpoch(0));
  EXPECT_EQ(refused.status().code(), Errc::kUnsupportedForMessageFormat);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("Idempotent records cannot be used with magic version 1"));
  EXPECT_EQ(log->log_end_offset(), Offset(0));
}

}  // namespace
}  // namespace ksim
