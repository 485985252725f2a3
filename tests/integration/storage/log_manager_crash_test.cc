// The LogManager on the virtual disk across power losses (sim/world/virtual_disk.h): a crash is the
// manager destroyed without Shutdown() followed by VirtualDisk::Crash(). Records appended and
// not flushed may be lost (whole batches from the end, never a hole); what was flushed survives;
// the restart is clean (no error, a log readable up to its end). A clean Shutdown() makes
// everything durable, so a crash right after it loses nothing, and the next startup sees the
// clean-shutdown marker. The marker's removal at startup and DeleteLog's rename are durable.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/storage/log_manager.h"
#include "sim/kernel/event_loop.h"
#include "sim/world/virtual_disk.h"
#include "tests/support/core/log_test_util.h"

namespace ksim::sim {
namespace {

TopicPartition TP(std::string topic, int32_t partition) {
  return TopicPartition{std::move(topic), PartitionId(partition)};
}

const TopicPartition kTp = TP("orders", 0);

class LogManagerCrashTest : public ::testing::Test {
 protected:
  explicit LogManagerCrashTest(uint64_t seed = 7) : disk_(RandomStream(seed)) {}

  LogManagerConfig Config() {
    LogManagerConfig config;
    config.log_dirs = {"/kafka-logs"};
    config.default_log_config.segment_bytes = 512;  // a few batches per segment: rolls happen
    config.default_log_config.max_index_size_bytes = 4096;
    return config;
  }

  std::unique_ptr<LogManager> Start(LogManagerStartupReport* report = nullptr) {
    auto manager = std::make_unique<LogManager>(disk_, loop_, loop_, Config());
    auto started = manager->Startup();
    KSIM_CHECK_MSG(started.ok(), started.status().ToString().c_str());
    if (report != nullptr) *report = *started;
    return manager;
  }

  void Append(Log& log, int from, int to) {
    for (int i = from; i < to; ++i) {
      Bytes batch = ksim::testing::MakeBatch(Offset(0), {"v" + std::to_string(i)}, loop_.NowMs());
      auto info = log.AppendAsLeader(batch, LeaderEpoch(0));
      ASSERT_TRUE(info.ok()) << info.status().ToString();
      ASSERT_EQ(info->first_offset, Offset(i));
    }
  }

  // Every value from the log start to the LEO, in offset order.
  std::vector<std::string> Values(Log& log) {
    std::vector<std::string> values;
    Offset next = log.log_start_offset();
    while (next < log.log_end_offset()) {
      auto read = log.Read(next, 1 << 20, std::nullopt, true);
      EXPECT_TRUE(read.ok()) << read.status().ToString();
      if (!read.ok()) break;
      std::vector<Record> records = ksim::testing::RecordsIn(read->records);
      EXPECT_FALSE(records.empty());
      if (records.empty()) break;
      for (const Record& record : records) {
        EXPECT_EQ(record.offset, next);
        values.push_back(ksim::testing::ValueOf(record));
        next = record.offset + 1;
      }
    }
    return values;
  }

  static std::vector<std::string> Expected(int count) {
    std::vector<std::string> values;
    for (int i = 0; i < count; ++i) values.push_back("v" + std::to_string(i));
    return values;
  }

  VirtualDisk disk_;
  EventLoop loop_;
};

TEST_F(LogManagerCrashTest, CrashLosesUnflushedRecordsAndRestartsCleanly) {
  auto manager = Start();
  Log* log = *manager->GetOrCreateLog(kTp);
  Append(*log, 0, 10);
  ASSERT_TRUE(log->Flush().ok());
  const Offset flushed = log->log_end_offset();
  // Stay inside the active segment: a roll would flush what came before it.
  const size_t segments = log->number_of_segments();
  Append(*log, 10, 12);
  ASSERT_EQ(log->number_of_segments(), segments);
  manager.reset();
  disk_.Crash();

  LogManagerStartupReport report;
  manager = Start(&report);
  EXPECT_FALSE(report.dirs[0].clean_shutdown);
  EXPECT_EQ(report.logs_loaded, 1);
  log = manager->GetLog(kTp);
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->log_end_offset(), flushed);
  EXPECT_EQ(Values(*log), Expected(10));
  Append(*log, 10, 11);  // the log takes appends again from where it was cut
}

class LogManagerTornCrashTest : public LogManagerCrashTest,
                                public ::testing::WithParamInterface<uint64_t> {
 protected:
  LogManagerTornCrashTest() : LogManagerCrashTest(GetParam()) {}
};

// Torn and corrupted unsynced tails: the log comes back as a prefix of what was appended, at
// least everything flushed.
TEST_P(LogManagerTornCrashTest, RecoversAPrefixHoldingEveryFlushedRecord) {
  auto manager = Start();
  Log* log = *manager->GetOrCreateLog(kTp);
  Append(*log, 0, 15);
  ASSERT_TRUE(log->Flush().ok());
  ASSERT_TRUE(manager->CheckpointRecoveryPoints().ok());
  Append(*log, 15, 40);
  manager.reset();
  disk_.Crash(CrashOptions{.tear_unsynced_tail = true, .corrupt_torn_tail = true});

  LogManagerStartupReport report;
  manager = Start(&report);
  log = manager->GetLog(kTp);
  ASSERT_NE(log, nullptr);
  const int64_t leo = log->log_end_offset().value();
  EXPECT_GE(leo, 15);
  EXPECT_LE(leo, 40);
  EXPECT_EQ(Values(*log), Expected(static_cast<int>(leo)));
  Append(*log, static_cast<int>(leo), static_cast<int>(leo) + 1);
}

INSTANTIATE_TEST_SUITE_P(Seeds, LogManagerTornCrashTest, ::testing::Range<uint64_t>(1, 25));

TEST_F(LogManagerCrashTest, CrashAfterShutdownLosesNothing) {
  auto manager = Start();
  Log* log = *manager->GetOrCreateLog(kTp);
  Append(*log, 0, 40);
  ASSERT_GT(log->number_of_segments(), 2u);
  ASSERT_TRUE(manager->Shutdown().ok());
  manager.reset();
  disk_.Crash(CrashOptions{.tear_unsynced_tail = true, .corrupt_torn_tail = true});

  LogManagerStartupReport report;
  manager = Start(&report);
  EXPECT_TRUE(report.dirs[0].clean_shutdown);
  EXPECT_EQ(report.bytes_truncated, 0u);
  log = manager->GetLog(kTp);
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->log_end_offset(), Offset(40));
  EXPECT_EQ(Values(*log), Expected(40));
}

TEST_F(LogManagerCrashTest, MarkerRemovalAtStartupSurvivesACrash) {
  auto manager = Start();
  Append(**manager->GetOrCreateLog(kTp), 0, 5);
  ASSERT_TRUE(manager->Shutdown().ok());
  manager = Start();
  Append(*manager->GetLog(kTp), 5, 8);  // unflushed
  manager.reset();
  disk_.Crash();
  LogManagerStartupReport report;
  manager = Start(&report);
  // Had the removal not been synced, the marker would vouch for the unflushed appends.
  EXPECT_FALSE(report.dirs[0].clean_shutdown);
  // What survived is a prefix holding every record of the clean shutdown (a roll may have
  // flushed some of the later ones).
  const int64_t leo = manager->GetLog(kTp)->log_end_offset().value();
  EXPECT_GE(leo, 5);
  EXPECT_LE(leo, 8);
  EXPECT_EQ(Values(*manager->GetLog(kTp)), Expected(static_cast<int>(leo)));
}

TEST_F(LogManagerCrashTest, DeleteLogRenameSurvivesACrashAndIsFinishedAtStartup) {
  auto manager = Start();
  Append(**manager->GetOrCreateLog(kTp), 0, 5);
  ASSERT_TRUE(manager->GetOrCreateLog(TP("kept", 0)).ok());
  ASSERT_TRUE(*manager->DeleteLog(kTp));
  manager.reset();  // crash before file.delete.delay.ms
  disk_.Crash();
  LogManagerStartupReport report;
  manager = Start(&report);
  EXPECT_EQ(manager->GetLog(kTp), nullptr);
  EXPECT_NE(manager->GetLog(TP("kept", 0)), nullptr);
  EXPECT_EQ(report.dirs[0].deleted_dirs_removed, (std::vector<std::string>{"orders-0.0-delete"}));
  auto names = disk_.ListDir("/kafka-logs");
  ASSERT_TRUE(names.ok());
  for (const std::string& name : *names) EXPECT_EQ(name.find("orders"), std::string::npos) << name;
}

TEST_F(LogManagerCrashTest, NewLogCreatedAfterStartupSurvivesACrashOnceFlushed) {
  auto manager = Start();
  Log* log = *manager->GetOrCreateLog(kTp);
  Append(*log, 0, 3);
  ASSERT_TRUE(log->Flush().ok());
  manager.reset();
  disk_.Crash();
  manager = Start();
  ASSERT_NE(manager->GetLog(kTp), nullptr);
  EXPECT_EQ(Values(*manager->GetLog(kTp)), Expected(3));
}

}  // namespace
}  // namespace ksim::sim
