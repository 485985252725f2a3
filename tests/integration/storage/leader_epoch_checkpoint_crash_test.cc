// The leader-epoch-checkpoint on the virtual disk across power losses: a write that fails before
// its rename (here: the temporary file's fsync fails) leaves the previous checkpoint in force
// after a crash, even when the crash tears or corrupts the unsynced temporary file; a write that
// returned ok survives a crash whole, because the rename is made durable by the directory fsync.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/storage/leader_epoch_cache.h"
#include "sim/world/virtual_disk.h"

namespace ksim::sim {
namespace {

constexpr const char* kPartitionDir = "/data/kafka-logs/t-0";

EpochEntry E(int32_t epoch, int64_t offset) {
  return EpochEntry{LeaderEpoch(epoch), Offset(offset)};
}

class LeaderEpochCheckpointCrashTest : public ::testing::Test {
 protected:
  LeaderEpochCheckpointCrashTest() : disk_(RandomStream(5)) {
    KSIM_CHECK(disk_.CreateDir(kPartitionDir).ok());
    disk_.SyncAll();  // the partition directory itself exists durably
  }

  LeaderEpochCache Open() {
    auto cache = LeaderEpochCache::Open(disk_, kPartitionDir);
    KSIM_CHECK(cache.ok());
    return std::move(cache).value();
  }

  VirtualDisk disk_;
};

TEST_F(LeaderEpochCheckpointCrashTest, CrashBeforeRenameKeepsTheOldCheckpoint) {
  LeaderEpochCache cache = Open();
  ASSERT_TRUE(cache.Assign(LeaderEpoch(2), Offset(6)).ok());
  disk_.InjectFault(DiskFault::kSyncError, FaultPersistence::kOnce);
  const Status failed = cache.Assign(LeaderEpoch(3), Offset(8));
  EXPECT_EQ(failed.code(), Errc::kIoError);
  // A failed Assign keeps nothing unwritten: a retry of the same epoch writes it.
  EXPECT_EQ(cache.entries(), std::vector<EpochEntry>{E(2, 6)});
  // The live tree still has the old checkpoint under its name: the rename never happened.
  EXPECT_EQ(Open().entries(), std::vector<EpochEntry>{E(2, 6)});

  disk_.Crash();
  EXPECT_EQ(Open().entries(), std::vector<EpochEntry>{E(2, 6)});
}

TEST_F(LeaderEpochCheckpointCrashTest, TornAndCorruptedTemporaryFileNeverReplacesTheCheckpoint) {
  for (int round = 0; round < 20; ++round) {
    LeaderEpochCache cache = Open();
    ASSERT_TRUE(cache.ClearAndFlush().ok());
    ASSERT_TRUE(cache.Assign(LeaderEpoch(round), Offset(round * 10)).ok());
    disk_.InjectFault(DiskFault::kSyncError, FaultPersistence::kOnce);
    EXPECT_FALSE(cache.Assign(LeaderEpoch(round + 1), Offset(round * 10 + 5)).ok());
    disk_.Crash(CrashOptions{.tear_unsynced_tail = true, .corrupt_torn_tail = true});
    EXPECT_EQ(Open().entries(), std::vector<EpochEntry>{E(round, round * 10)}) << round;
  }
}

TEST_F(LeaderEpochCheckpointCrashTest, CompletedWriteSurvivesACrash) {
  LeaderEpochCache cache = Open();
  ASSERT_TRUE(cache.Assign(LeaderEpoch(2), Offset(6)).ok());
  ASSERT_TRUE(cache.Assign(LeaderEpoch(3), Offset(8)).ok());
  ASSERT_TRUE(cache.TruncateFromEnd(Offset(8)).ok());
  ASSERT_TRUE(cache.Assign(LeaderEpoch(4), Offset(9)).ok());
  disk_.Crash(CrashOptions{.tear_unsynced_tail = true});
  EXPECT_EQ(Open().entries(), (std::vector<EpochEntry>{E(2, 6), E(4, 9)}));
}

TEST_F(LeaderEpochCheckpointCrashTest, NoCheckpointYetMeansAnEmptyCacheAfterACrash) {
  LeaderEpochCache cache = Open();
  disk_.InjectFault(DiskFault::kSyncError, FaultPersistence::kOnce);
  EXPECT_FALSE(cache.Assign(LeaderEpoch(0), Offset(0)).ok());
  disk_.Crash(CrashOptions{.tear_unsynced_tail = true});
  EXPECT_TRUE(Open().entries().empty());
}

}  // namespace
}  // namespace ksim::sim
