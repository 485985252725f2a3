// Log recovery on open: what a crash or a damaged file leaves behind, and what Open() makes of
// it. The first half edits files on a real disk (torn tails, corrupt batches, leftover .deleted,
// .cleaned and .swap files, indexes that lie); the second half crashes the simulator's virtual
// disk (sim/virtual_disk.h), which drops exactly what was never synced, and checks that nothing
// flushed is lost and nothing after the damage survives.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/log.h"
#include "core/posix_env.h"
#include "sim/random.h"
#include "sim/virtual_disk.h"
#include "tests/core/log_test_util.h"
#include "tests/support/temp_dir.h"

namespace ksim {
namespace {

using testing::BatchesIn;
using testing::MakeBatch;
using testing::OffsetsIn;
using testing::RecordsIn;
using testing::ValueOf;

constexpr int64_t kStartMs = 1'600'000'000'000;

std::string ValueFor(int64_t offset) { return "value-" + std::to_string(offset); }

// A log of `count` single-record batches "value-<offset>", `per_segment` to a segment.
LogConfig ConfigFor(int per_segment) {
  LogConfig config;
  config.segment_bytes =
      static_cast<int32_t>(MakeBatch(Offset(0), {ValueFor(100000)}, kStartMs).size()) * per_segment;
  config.index_interval_bytes = 100;
  config.file_delete_delay_ms = 0;
  return config;
}

void AppendValues(Log& log, int64_t from, int64_t to) {
  for (int64_t offset = from; offset < to; ++offset) {
    Bytes batch = MakeBatch(Offset(0), {ValueFor(offset)}, kStartMs + offset);
    auto info = log.AppendAsLeader(batch, LeaderEpoch(1));
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    ASSERT_EQ(info->first_offset, Offset(offset));
  }
}

// Reads every record from the log start to the LEO and checks each one is the value appended at
// its offset, that offsets are dense, and that a read at each offset finds its batch (the index
// agrees with a scan).
void ExpectIntactPrefix(Log& log) {
  int64_t offset = log.log_start_offset().value();
  while (offset < log.log_end_offset().value()) {
    auto read = log.Read(Offset(offset), 1 << 20);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    const std::vector<Record> records = RecordsIn(read->records);
    ASSERT_FALSE(records.empty()) << "nothing at " << offset;
    for (const Record& record : records) {
      ASSERT_EQ(record.offset, Offset(offset));
      ASSERT_EQ(ValueOf(record), ValueFor(offset));
      ++offset;
    }
  }
  for (int64_t at = log.log_start_offset().value(); at < log.log_end_offset().value(); ++at) {
    auto read = log.Read(Offset(at), 1, std::nullopt, true);
    ASSERT_TRUE(read.ok());
    const std::vector<BatchHeader> batches = BatchesIn(read->records);
    ASSERT_EQ(batches.size(), 1u);
    ASSERT_LE(batches[0].base_offset, Offset(at));
    ASSERT_GE(batches[0].last_offset(), Offset(at));
  }
}

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

// ---- Crashes of the virtual disk
// ------------------------------------------------------------------

class LogCrashTest : public ::testing::Test {
 protected:
  LogCrashTest() : clock_(kStartMs * kUsPerMs) {}

  // A disk whose log directory (the broker's log.dirs) exists durably.
  static std::unique_ptr<sim::VirtualDisk> MakeDisk(uint64_t seed) {
    auto disk = std::make_unique<sim::VirtualDisk>(sim::Stream(seed));
    EXPECT_TRUE(disk->CreateDir("/data").ok());
    disk->SyncAll();
    return disk;
  }
  std::unique_ptr<Log> OpenLog(sim::VirtualDisk& disk, const LogConfig& config,
                               Offset recovery_point) {
    auto log = Log::Open(disk, clock_, "/data/t-0", config, LogOpenOptions{recovery_point, {}});
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    return log.ok() ? std::move(log).value() : nullptr;
  }

  ManualClock clock_;
};

TEST_F(LogCrashTest, ACrashLosesExactlyTheUnflushedRecords) {
  auto disk_owner = MakeDisk(1);
  sim::VirtualDisk& disk = *disk_owner;
  auto log = OpenLog(disk, ConfigFor(10), Offset(0));
  AppendValues(*log, 0, 16);
  EXPECT_EQ(log->recovery_point(), Offset(10)) << "the roll at 10 flushed segment 0";
  ASSERT_TRUE(log->Flush(Offset(13)).ok());
  const Offset flushed = log->recovery_point();
  EXPECT_EQ(flushed, Offset(13));
  AppendValues(*log, 16, 19);
  disk.Crash();
  log.reset();

  log = OpenLog(disk, ConfigFor(10), flushed);
  EXPECT_GE(log->log_end_offset(), flushed);
  // Flushing syncs whole segment files: segment 10 was durable up to offset 15.
  EXPECT_EQ(log->log_end_offset(), Offset(16));
  ExpectIntactPrefix(*log);
}

TEST_F(LogCrashTest, RollingMakesTheFinishedSegmentsDurable) {
  auto disk_owner = MakeDisk(2);
  sim::VirtualDisk& disk = *disk_owner;
  auto log = OpenLog(disk, ConfigFor(10), Offset(0));
  AppendValues(*log, 0, 35);
  EXPECT_EQ(log->recovery_point(), Offset(30));
  disk.Crash();
  log.reset();
  log = OpenLog(disk, ConfigFor(10), Offset(30));
  EXPECT_EQ(log->log_end_offset(), Offset(30));
  EXPECT_EQ(log->number_of_segments(), 4u) << "the empty active segment 30 was synced too";
  ExpectIntactPrefix(*log);
}

TEST_F(LogCrashTest, CleanCloseLosesNothing) {
  auto disk_owner = MakeDisk(3);
  sim::VirtualDisk& disk = *disk_owner;
  auto log = OpenLog(disk, ConfigFor(10), Offset(0));
  AppendValues(*log, 0, 37);
  ASSERT_TRUE(log->Close().ok());
  disk.Crash();
  log = OpenLog(disk, ConfigFor(10), Offset(37));
  EXPECT_EQ(log->log_end_offset(), Offset(37));
  ExpectIntactPrefix(*log);
}

TEST_F(LogCrashTest, RetentionDeletionsThatWereNotSyncedComeBackConsistent) {
  auto disk_owner = MakeDisk(4);
  sim::VirtualDisk& disk = *disk_owner;
  LogConfig config = ConfigFor(5);
  config.retention_bytes = 0;
  auto log = OpenLog(disk, config, Offset(0));
  AppendValues(*log, 0, 20);
  ASSERT_TRUE(log->Flush().ok());
  ASSERT_TRUE(log->DeleteOldSegments().ok());
  EXPECT_EQ(log->log_start_offset(), Offset(20));
  disk.Crash();
  log.reset();
  // The renames to .deleted were never synced: the segments are back, and the caller's log
  // start offset checkpoint (here: 0, never written) decides what readers see.
  log = OpenLog(disk, config, Offset(20));
  EXPECT_EQ(log->log_end_offset(), Offset(20));
  ExpectIntactPrefix(*log);
}

TEST_F(LogCrashTest, AnIoErrorTakesTheLogOfflineUntilReopened) {
  auto disk_owner = MakeDisk(5);
  sim::VirtualDisk& disk = *disk_owner;
  auto log = OpenLog(disk, ConfigFor(10), Offset(0));
  AppendValues(*log, 0, 5);
  disk.InjectFault(sim::DiskFault::kWriteError, sim::FaultPersistence::kOnce);
  Bytes batch = MakeBatch(Offset(0), {ValueFor(5)}, kStartMs + 5);
  EXPECT_EQ(log->AppendAsLeader(batch, LeaderEpoch(1)).status().code(), Errc::kKafkaStorageError);
  EXPECT_EQ(log->storage_error().code(), Errc::kKafkaStorageError);
  // The fault is gone, but the log stays offline: it cannot know what reached the disk.
  EXPECT_EQ(log->Read(Offset(0), 1000).status().code(), Errc::kKafkaStorageError);
  EXPECT_EQ(log->AppendAsLeader(batch, LeaderEpoch(1)).status().code(), Errc::kKafkaStorageError);
  EXPECT_EQ(log->Flush().code(), Errc::kKafkaStorageError);
  log.reset();
  log = OpenLog(disk, ConfigFor(10), Offset(0));
  EXPECT_EQ(log->log_end_offset(), Offset(5));
  ExpectIntactPrefix(*log);
  AppendValues(*log, 5, 8);
  ExpectIntactPrefix(*log);
}

TEST_F(LogCrashTest, AFullDiskTakesTheLogOffline) {
  auto disk_owner = MakeDisk(6);
  sim::VirtualDisk& disk = *disk_owner;
  LogConfig config = ConfigFor(10);
  config.max_index_size_bytes = 1024;
  auto log = OpenLog(disk, config, Offset(0));
  AppendValues(*log, 0, 5);
  disk.set_capacity_bytes(disk.used_bytes() + 100);
  Status status;
  for (int64_t offset = 5; offset < 20 && status.ok(); ++offset) {
    Bytes batch = MakeBatch(Offset(0), {ValueFor(offset)}, kStartMs + offset);
    status = log->AppendAsLeader(batch, LeaderEpoch(1)).status();
  }
  EXPECT_EQ(status.code(), Errc::kKafkaStorageError);
  EXPECT_NE(status.message().find("NO_SPACE"), std::string::npos) << status.message();
  const Offset reached = log->log_end_offset();
  log.reset();
  disk.set_capacity_bytes(0);
  log = OpenLog(disk, config, Offset(0));
  EXPECT_GE(log->log_end_offset(), Offset(5));
  EXPECT_LE(log->log_end_offset(), reached);
  ExpectIntactPrefix(*log);
}

// Random appends, flushes, rolls and truncations, then a crash that tears and corrupts unsynced
// tails: after reopening, nothing flushed is lost, every record is the one appended at its
// offset, and the index agrees with a scan.
TEST_F(LogCrashTest, RandomWorkloadsSurviveTornAndCorruptCrashes) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    sim::Stream random(seed);
    auto disk_owner = MakeDisk(seed + 1000);
    sim::VirtualDisk& disk = *disk_owner;
    LogConfig config = ConfigFor(static_cast<int>(random.UniformInt(3, 12)));
    config.index_interval_bytes = static_cast<int32_t>(random.UniformInt(0, 300));
    config.max_index_size_bytes = static_cast<int32_t>(random.UniformInt(4, 40)) * 24;
    auto log = OpenLog(disk, config, Offset(0));
    int64_t next = 0;
    int64_t most = 0;  // truncations are not synced: a crash can bring the cut records back
    const int steps = static_cast<int>(random.UniformInt(5, 60));
    for (int step = 0; step < steps; ++step) {
      const int64_t action = random.UniformInt(0, 9);
      if (action < 7) {
        const int64_t count = random.UniformInt(1, 6);
        AppendValues(*log, next, next + count);
        next += count;
        most = std::max(most, next);
      } else if (action == 7) {
        ASSERT_TRUE(log->Flush(Offset(random.UniformInt(0, next))).ok());
      } else if (action == 8 && next > 0) {
        // Truncation keeps the prefix property: later appends rewrite the same values.
        next = random.UniformInt(0, next);
        ASSERT_TRUE(log->TruncateTo(Offset(next)).ok());
        ASSERT_TRUE(log->Flush().ok());
      } else {
        ASSERT_TRUE(log->Roll().ok());
      }
    }
    const Offset flushed = log->recovery_point();
    disk.Crash(
        sim::CrashOptions{.tear_unsynced_tail = true, .corrupt_torn_tail = random.Bernoulli(1, 2)});
    log.reset();
    log = OpenLog(disk, config, flushed);
    ASSERT_NE(log, nullptr);
    EXPECT_GE(log->log_end_offset(), flushed);
    EXPECT_LE(log->log_end_offset(), Offset(most));
    ExpectIntactPrefix(*log);
    for (LogSegment* segment : log->LogSegments()) EXPECT_TRUE(segment->SanityCheck().ok());
    // And the log takes appends where it left off.
    AppendValues(*log, log->log_end_offset().value(), log->log_end_offset().value() + 3);
    ExpectIntactPrefix(*log);
  }
}

}  // namespace
}  // namespace ksim
