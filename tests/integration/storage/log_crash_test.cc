// Log recovery after a crash of the simulator's virtual disk (sim/world/virtual_disk.h), which
// drops exactly what was never synced and may tear and corrupt the unsynced tails: nothing
// flushed is lost, nothing after the damage survives, and a log whose disk fails goes offline.
// tests/core/storage/log_recovery_test.cc damages files on a real disk instead.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/base/random.h"
#include "core/storage/log.h"
#include "sim/world/virtual_disk.h"
#include "tests/support/core/log_test_util.h"
#include "tests/support/core/numbered_log.h"

namespace ksim {
namespace {

using testing::AppendValues;
using testing::ConfigFor;
using testing::ExpectIntactPrefix;
using testing::kStartMs;
using testing::MakeBatch;
using testing::ValueFor;

class LogCrashTest : public ::testing::Test {
 protected:
  LogCrashTest() : clock_(kStartMs * kUsPerMs) {}

  // A disk whose log directory (the broker's log.dirs) exists durably.
  static std::unique_ptr<sim::VirtualDisk> MakeDisk(uint64_t seed) {
    auto disk = std::make_unique<sim::VirtualDisk>(RandomStream(seed));
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
    RandomStream random(seed);
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
