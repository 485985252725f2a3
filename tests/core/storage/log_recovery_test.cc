// Log recovery on open: what a crash or a damaged file leaves behind, and what Open() makes of
// it, on a real disk: torn tails, corrupt batches, leftover .deleted, .cleaned and .swap files,
// indexes that lie. tests/integration/storage/log_crash_test.cc crashes the simulator's virtual
// disk instead, which drops exactly what was never synced.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/env/posix_env.h"
#include "core/storage/log.h"
#include "tests/support/core/log_test_util.h"
#include "tests/support/core/numbered_log.h"
#include "tests/support/core/temp_dir.h"

namespace ksim {
namespace {

using testing::AppendValues;
using testing::BatchesIn;
using testing::ConfigFor;
using testing::ExpectIntactPrefix;
using testing::kStartMs;
using testing::MakeBatch;
using testing::OffsetsIn;
using testing::RecordsIn;
using testing::ValueFor;
using testing::ValueOf;

class LogRecoveryTest : public ::testing::Test {
 protected:
  LogRecoveryTest() : clock_(kStartMs * kUsPerMs), dir_(JoinPath(tmp_.path(), "t-0")) {}

  std::unique_ptr<Log> OpenLog(const LogConfig& config, Offset recovery_point = Offset(0),
                               Offset log_start = Offset(0)) {
    auto log = Log::Open(env_, clock_, dir_, config, LogOpenOptions{recovery_point, log_start});
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    return log.ok() ? std::move(log).value() : nullptr;
  }
  bool AnyFileEndsWith(const std::string& suffix) {
    auto names = env_.ListDir(dir_);
    EXPECT_TRUE(names.ok());
    for (const std::string& name : names.value()) {
      if (name.ends_with(suffix)) return true;
    }
    return false;
  }

  testing::TempDir tmp_;
  PosixEnv env_;
  ManualClock clock_;
  std::string dir_;
};

TEST_F(LogRecoveryTest, RecoveryPointAfterOpenIsTheLogEnd) {
  auto log = OpenLog(ConfigFor(10));
  AppendValues(*log, 0, 35);
  ASSERT_TRUE(log->Close().ok());
  log = OpenLog(ConfigFor(10));
  EXPECT_EQ(log->log_end_offset(), Offset(35));
  EXPECT_EQ(log->recovery_point(), Offset(35));
  EXPECT_EQ(log->recovery_report().segments_recovered, 4);
  EXPECT_TRUE(log->recovery_report().first_damage.ok());
  ExpectIntactPrefix(*log);
}

TEST_F(LogRecoveryTest, SegmentsBeforeTheRecoveryPointAreNotVerifiedAgain) {
  auto log = OpenLog(ConfigFor(10));
  AppendValues(*log, 0, 35);
  ASSERT_TRUE(log->Close().ok());
  log = OpenLog(ConfigFor(10), Offset(25));
  EXPECT_EQ(log->recovery_report().segments_recovered, 2) << "segments 20 and 30";
  EXPECT_EQ(log->recovery_report().indexes_rebuilt, 0);
}

TEST_F(LogRecoveryTest, ATornLastBatchIsCutAndEverythingBeforeItKept) {
  auto log = OpenLog(ConfigFor(10));
  AppendValues(*log, 0, 25);
  const std::string active = log->active_segment().log_path();
  ASSERT_TRUE(log->Close().ok());
  const uint64_t size = *env_.FileSize(active);
  {
    auto file = env_.OpenFile(active, OpenMode::kOpenExisting);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Truncate(size - 7).ok());  // the last batch loses its tail
  }
  log = OpenLog(ConfigFor(10));
  EXPECT_EQ(log->log_end_offset(), Offset(24));
  EXPECT_GT(log->recovery_report().bytes_truncated, 0u);
  EXPECT_EQ(log->recovery_report().first_damage.code(), Errc::kCorruption);
  ExpectIntactPrefix(*log);
  AppendValues(*log, 24, 30);
  ExpectIntactPrefix(*log);
}

TEST_F(LogRecoveryTest, DamageInAMiddleSegmentDeletesEveryLaterSegment) {
  auto log = OpenLog(ConfigFor(10));
  AppendValues(*log, 0, 40);
  auto located = log->LogSegments()[1]->TranslateOffset(Offset(15));
  ASSERT_TRUE(located.ok() && located->has_value());
  const std::string second = log->LogSegments()[1]->log_path();
  ASSERT_TRUE(log->Close().ok());
  // Flip a byte of offset 15's record: its CRC no longer matches.
  testing::WriteNonsense(env_, second, (*located)->position + (*located)->size - 3, 1);

  log = OpenLog(ConfigFor(10));
  EXPECT_EQ(log->log_end_offset(), Offset(15));
  EXPECT_EQ(log->number_of_segments(), 2u);
  EXPECT_EQ(log->recovery_report().segments_deleted, (std::vector<Offset>{Offset(20), Offset(30)}));
  EXPECT_FALSE(env_.FileExists(LogFilePath(dir_, Offset(20))));
  EXPECT_FALSE(AnyFileEndsWith(".deleted")) << "file.delete.delay.ms is 0";
  ExpectIntactPrefix(*log);
  AppendValues(*log, 15, 50);
  EXPECT_EQ(log->number_of_segments(), 5u);
  ExpectIntactPrefix(*log);
}

TEST_F(LogRecoveryTest, DamageAtTheVeryFirstBatchLeavesAnEmptyLog) {
  auto log = OpenLog(ConfigFor(10));
  AppendValues(*log, 0, 5);
  const std::string first = log->active_segment().log_path();
  ASSERT_TRUE(log->Close().ok());
  testing::WriteNonsense(env_, first, 30, 4);
  log = OpenLog(ConfigFor(10));
  EXPECT_EQ(log->log_end_offset(), Offset(0));
  EXPECT_EQ(log->size_in_bytes(), 0u);
  AppendValues(*log, 0, 3);
  ExpectIntactPrefix(*log);
}

TEST_F(LogRecoveryTest, AnIndexPointingPastItsLogIsRebuiltEvenBelowTheRecoveryPoint) {
  auto log = OpenLog(ConfigFor(10));
  AppendValues(*log, 0, 25);
  LogSegment& first = *log->LogSegments()[0];
  ASSERT_GT(first.offset_index().entries(), 1u);
  const OffsetPosition last_entry =
      first.offset_index().EntryAt(first.offset_index().entries() - 1);
  const std::string first_log = first.log_path();
  ASSERT_TRUE(log->Close().ok());
  {
    auto file = env_.OpenFile(first_log, OpenMode::kOpenExisting);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Truncate(static_cast<uint64_t>(last_entry.position)).ok());
  }
  log = OpenLog(ConfigFor(10), Offset(25));
  EXPECT_EQ(log->recovery_report().indexes_rebuilt, 1);
  EXPECT_TRUE(log->LogSegments()[0]->SanityCheck().ok());
  EXPECT_EQ(log->LogSegments()[0]->next_offset(), last_entry.offset);
  // Offsets [entry, 10) are gone from the first segment: a read there continues at 10.
  auto read = log->Read(last_entry.offset, 1 << 20);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(OffsetsIn(read->records).front(), 10);
}

TEST_F(LogRecoveryTest, UncleanShutdownLeavesPreallocatedIndexesThatAreRebuilt) {
  auto log = OpenLog(ConfigFor(100));
  AppendValues(*log, 0, 50);
  ASSERT_TRUE(log->Flush().ok());
  const std::string index = log->active_segment().index_path();
  log.reset();  // no Close(): the indexes keep their preallocated length
  EXPECT_EQ(*env_.FileSize(index), static_cast<uint64_t>(ConfigFor(100).max_index_size_bytes));
  log = OpenLog(ConfigFor(100), Offset(50));
  EXPECT_EQ(log->log_end_offset(), Offset(50));
  EXPECT_EQ(log->recovery_report().indexes_rebuilt, 1);
  ExpectIntactPrefix(*log);
}

TEST_F(LogRecoveryTest, LeftoverDeletedCleanedAndIndexSwapFilesAreRemoved) {
  auto log = OpenLog(ConfigFor(10));
  AppendValues(*log, 0, 15);
  ASSERT_TRUE(log->Close().ok());
  for (const char* name : {"00000000000000000003.log.deleted", "00000000000000000003.index.deleted",
                           "00000000000000000000.log.cleaned", "00000000000000000010.index.swap",
                           "00000000000000000010.timeindex.swap"}) {
    ASSERT_TRUE(env_.OpenFile(JoinPath(dir_, name), OpenMode::kCreateNew).ok());
  }
  ASSERT_TRUE(env_.OpenFile(JoinPath(dir_, "leader-epoch-checkpoint"), OpenMode::kCreateNew).ok());
  log = OpenLog(ConfigFor(10));
  EXPECT_EQ(log->recovery_report().leftover_files_removed, 5);
  EXPECT_FALSE(AnyFileEndsWith(".deleted"));
  EXPECT_FALSE(AnyFileEndsWith(".cleaned"));
  EXPECT_FALSE(AnyFileEndsWith(".swap"));
  EXPECT_TRUE(env_.FileExists(JoinPath(dir_, "leader-epoch-checkpoint")))
      << "files that are not segments are left alone";
  EXPECT_EQ(log->log_end_offset(), Offset(15));
  ExpectIntactPrefix(*log);
}

TEST_F(LogRecoveryTest, AnInterruptedSwapReplacesTheSegmentsItCovers) {
  auto log = OpenLog(ConfigFor(5));
  AppendValues(*log, 0, 15);
  ASSERT_EQ(log->number_of_segments(), 3u);
  // What a cleaner writes: one segment holding offsets 0..9, renamed to .swap, crash before the
  // old segments 0 and 5 were replaced.
  auto first = log->Read(Offset(0), 1 << 20);
  auto second = log->Read(Offset(5), 1 << 20);
  ASSERT_TRUE(first.ok() && second.ok());
  const Bytes merged = testing::Concat({first->records, second->records});
  ASSERT_EQ(OffsetsIn(merged), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  ASSERT_TRUE(log->Close().ok());
  {
    auto swap = env_.OpenFile(LogFilePath(dir_, Offset(0), kSwapFileSuffix), OpenMode::kCreateNew);
    ASSERT_TRUE(swap.ok());
    ASSERT_TRUE((*swap)->Append(merged).ok());
  }
  log = OpenLog(ConfigFor(5), Offset(15));
  EXPECT_EQ(log->recovery_report().swaps_completed, 1);
  EXPECT_FALSE(AnyFileEndsWith(".swap"));
  EXPECT_FALSE(env_.FileExists(LogFilePath(dir_, Offset(5))));
  const std::vector<LogSegmentInfo> segments = log->Segments();
  ASSERT_EQ(segments.size(), 2u);
  EXPECT_EQ(segments[0].base_offset, Offset(0));
  EXPECT_EQ(segments[0].next_offset, Offset(10));
  EXPECT_EQ(segments[1].base_offset, Offset(10));
  EXPECT_EQ(log->log_end_offset(), Offset(15));
  ExpectIntactPrefix(*log);
}

}  // namespace
}  // namespace ksim
