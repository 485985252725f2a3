// LogManager on the real file system (PosixEnv) with the simulator's event loop as Clock and
// Timers, so that periodic tasks run on virtual time. Behaviours after Kafka's LogManagerTest
// (create/get, dir selection, checkpoints, time-based cleanup, async delete) and the startup
// rules of LogManager.loadLogs (clean shutdown marker, malformed and "-delete" directories).
#include "core/storage/log_manager.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/env/posix_env.h"
#include "core/storage/checkpoint_file.h"
#include "sim/kernel/event_loop.h"
#include "tests/support/core/log_test_util.h"
#include "tests/support/core/temp_dir.h"

namespace ksim {
namespace {

using testing::MakeBatch;

constexpr TimeUs kMs = kUsPerMs;

TopicPartition TP(std::string topic, int32_t partition) {
  return TopicPartition{std::move(topic), PartitionId(partition)};
}

class LogManagerTest : public ::testing::Test {
 protected:
  LogManagerTest() : loop_(1000 * kMs) {}

  LogManagerConfig Config(int dirs = 1) {
    LogManagerConfig config;
    config.log_dirs.clear();
    for (int i = 0; i < dirs; ++i)
      config.log_dirs.push_back(tmp_.path() + "/logs" + std::to_string(i));
    config.default_log_config.segment_bytes = 1024;
    config.default_log_config.max_index_size_bytes = 4096;
    return config;
  }

  std::unique_ptr<LogManager> Start(const LogManagerConfig& config,
                                    LogManagerStartupReport* report = nullptr) {
    auto manager = std::make_unique<LogManager>(env_, loop_, loop_, config);
    auto started = manager->Startup();
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    if (report != nullptr && started.ok()) *report = *started;
    return manager;
  }

  // Appends `count` single-record batches of ~100 bytes stamped with the current time.
  void Append(Log& log, int count) {
    for (int i = 0; i < count; ++i) {
      Bytes batch = MakeBatch(Offset(0), {std::string(100, 'x')}, loop_.NowMs());
      auto info = log.AppendAsLeader(batch, LeaderEpoch(0));
      ASSERT_TRUE(info.ok()) << info.status().ToString();
    }
  }

  std::vector<std::string> CheckpointEntries(const std::string& path) {
    CheckpointFile file(env_, path, 0);
    auto lines = file.Read();
    EXPECT_TRUE(lines.ok()) << lines.status().ToString();
    std::vector<std::string> out;
    if (lines.ok()) {
      for (const CheckpointLine& line : *lines) out.push_back(line.text);
    }
    return out;
  }

  ksim::testing::TempDir tmp_;
  PosixEnv env_;
  sim::EventLoop loop_;
};

TEST(TopicPartitionTest, ParsesDirNamesWithDashesInTopic) {
  auto tp = ParseTopicPartition("my-topic-12");
  ASSERT_TRUE(tp.has_value());
  EXPECT_EQ(tp->topic, "my-topic");
  EXPECT_EQ(tp->partition, PartitionId(12));
  EXPECT_EQ(ToString(*tp), "my-topic-12");
  // The partition follows the last '-': "t--1" is topic "t-", partition 1.
  EXPECT_EQ(ParseTopicPartition("t--1"), TP("t-", 1));
  for (const char* bad :
       {"nodash", "-3", "topic-", "topic-x", "topic-+1", "topic-99999999999", "topic-1.5-delete"}) {
    EXPECT_FALSE(ParseTopicPartition(bad).has_value()) << bad;
  }
}

TEST_F(LogManagerTest, StartupCreatesMissingLogDirs) {
  LogManagerStartupReport report;
  auto manager = Start(Config(2), &report);
  ASSERT_EQ(report.dirs.size(), 2u);
  for (const LogDirStartupReport& dir : report.dirs) {
    EXPECT_TRUE(dir.created);
    EXPECT_FALSE(dir.clean_shutdown);
    EXPECT_TRUE(env_.DirExists(dir.dir));
  }
  EXPECT_EQ(report.logs_loaded, 0);
}

TEST_F(LogManagerTest, CreateAndGetLogsInPartitionOrder) {
  auto manager = Start(Config());
  const TopicPartition b1 = TP("b", 1), a2 = TP("a", 2), a10 = TP("a", 10);
  EXPECT_EQ(manager->GetLog(b1), nullptr);
  auto created = manager->GetOrCreateLog(b1);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_TRUE(manager->GetOrCreateLog(a10).ok());
  ASSERT_TRUE(manager->GetOrCreateLog(a2).ok());
  EXPECT_EQ(manager->GetLog(b1), *created);
  EXPECT_EQ(*manager->GetOrCreateLog(b1), *created);  // existing log, not a new one
  EXPECT_TRUE(env_.DirExists(manager->config().log_dirs[0] + "/b-1"));
  std::vector<TopicPartition> order;
  for (const auto& [tp, log] : manager->AllLogs()) order.push_back(tp);
  EXPECT_EQ(order, (std::vector<TopicPartition>{a2, a10, b1}));
  EXPECT_EQ(manager->GetLog(TP("b", 2)), nullptr);
}

// ForEachLog (what the high-watermark checkpoint walks) sees the logs AllLogs lists, in the same
// partition order, each with the index of the directory LogDirOf names.
TEST_F(LogManagerTest, ForEachLogVisitsEveryLogInPartitionOrderWithItsDir) {
  const LogManagerConfig config = Config(3);
  auto manager = Start(config);
  for (const TopicPartition& tp : {TP("b", 1), TP("a", 10), TP("a", 2), TP("c", 0), TP("a", 0)}) {
    ASSERT_TRUE(manager->GetOrCreateLog(tp).ok());
  }
  std::vector<std::pair<TopicPartition, const Log*>> listed;
  for (const auto& [tp, log] : manager->AllLogs()) listed.emplace_back(tp, log);
  std::vector<std::pair<TopicPartition, const Log*>> visited;
  std::set<size_t> dirs_used;
  manager->ForEachLog([&](const TopicPartition& tp, const Log& log, size_t dir_index) {
    visited.emplace_back(tp, &log);
    ASSERT_LT(dir_index, config.log_dirs.size());
    EXPECT_EQ(config.log_dirs[dir_index], manager->LogDirOf(tp)) << ToString(tp);
    dirs_used.insert(dir_index);
  });
  EXPECT_EQ(visited, listed);
  EXPECT_EQ(dirs_used.size(), 3u);  // five logs spread over the three dirs
}

TEST_F(LogManagerTest, TopicConfigProviderAndExplicitConfig) {
  LogManagerConfig config = Config();
  config.topic_config = [](const std::string& topic) {
    LogConfig log;
    log.segment_bytes = topic == "big" ? 1 << 20 : 2048;
    return log;
  };
  auto manager = Start(config);
  EXPECT_EQ((*manager->GetOrCreateLog(TP("big", 0)))->config().segment_bytes, 1 << 20);
  EXPECT_EQ((*manager->GetOrCreateLog(TP("small", 0)))->config().segment_bytes, 2048);
  LogConfig explicit_config;
  explicit_config.segment_bytes = 4096;
  EXPECT_EQ((*manager->GetOrCreateLog(TP("small", 1), explicit_config))->config().segment_bytes,
            4096);
}

// Kafka's LogManagerTest.testLeastLoadedAssignment: new logs go to the dir with the fewest.
TEST_F(LogManagerTest, NewLogsGoToTheLeastLoadedDir) {
  LogManagerConfig config = Config(3);
  // Two logs already in dir 0 and one in dir 2 before startup.
  for (const char* name : {"/logs0/t-0", "/logs0/t-1", "/logs2/t-2"}) {
    ASSERT_TRUE(env_.CreateDir(tmp_.path() + name).ok());
  }
  LogManagerStartupReport report;
  auto manager = Start(config, &report);
  EXPECT_EQ(report.logs_loaded, 3);
  std::vector<std::string> chosen;
  for (int p = 10; p < 16; ++p) {
    const TopicPartition tp = TP("u", p);
    ASSERT_TRUE(manager->GetOrCreateLog(tp).ok());
    chosen.push_back(manager->LogDirOf(tp).substr(tmp_.path().size()));
  }
  // Counts (2,0,1) -> 1 -> (2,1,1) -> 1 -> (2,2,1) -> 2 -> (2,2,2) -> 0, 1, 2.
  EXPECT_EQ(chosen,
            (std::vector<std::string>{"/logs1", "/logs1", "/logs2", "/logs0", "/logs1", "/logs2"}));
  // (3,3,3): a deleted log frees its dir's place, which the next new log takes.
  ASSERT_TRUE(manager->DeleteLog(TP("u", 14)).ok());  // in /logs1
  ASSERT_TRUE(manager->GetOrCreateLog(TP("u", 20)).ok());
  EXPECT_EQ(manager->LogDirOf(TP("u", 20)).substr(tmp_.path().size()), "/logs1");
}

TEST_F(LogManagerTest, RecoveryPointCheckpointWrittenPeriodicallyAndReadBack) {
  LogManagerConfig config = Config();
  auto manager = Start(config);
  Log* log = *manager->GetOrCreateLog(TP("t", 0));
  Append(*log, 5);
  ASSERT_TRUE(log->Flush(Offset(3)).ok());
  const std::string path = config.log_dirs[0] + "/recovery-point-offset-checkpoint";
  EXPECT_FALSE(env_.FileExists(path));
  // First run after Kafka's 30 s initial delay, then every 60 s.
  loop_.RunUntil(loop_.Now() + LogManagerConfig::kInitialTaskDelayMs * kMs);
  EXPECT_EQ(manager->task_stats().recovery_point_checkpoints, 1);
  EXPECT_EQ(CheckpointEntries(path), (std::vector<std::string>{"t 0 3"}));
  ASSERT_TRUE(log->Flush().ok());
  loop_.RunUntil(loop_.Now() + 60000 * kMs);
  EXPECT_EQ(manager->task_stats().recovery_point_checkpoints, 2);
  EXPECT_EQ(CheckpointEntries(path), (std::vector<std::string>{"t 0 5"}));
}

TEST_F(LogManagerTest, LogStartOffsetCheckpointKeepsRaisedStartOffsets) {
  LogManagerConfig config = Config();
  auto manager = Start(config);
  Log* log = *manager->GetOrCreateLog(TP("t", 0));
  ASSERT_TRUE(manager->GetOrCreateLog(TP("t", 1)).ok());
  Append(*log, 10);
  ASSERT_TRUE(log->MaybeIncrementLogStartOffset(Offset(4)).ok());
  ASSERT_TRUE(manager->CheckpointLogStartOffsets().ok());
  // Only logs whose start is above their first segment's base offset are recorded (Kafka 1.0).
  EXPECT_EQ(CheckpointEntries(config.log_dirs[0] + "/log-start-offset-checkpoint"),
            (std::vector<std::string>{"t 0 4"}));
  manager.reset();  // crash
  manager = Start(config);
  EXPECT_EQ(manager->GetLog(TP("t", 0))->log_start_offset(), Offset(4));
  EXPECT_EQ(manager->GetLog(TP("t", 1))->log_start_offset(), Offset(0));
}

TEST_F(LogManagerTest, CleanShutdownMarkerSkipsRecoveryAndIsRemovedAtStartup) {
  LogManagerConfig config = Config();
  auto manager = Start(config);
  Log* log = *manager->GetOrCreateLog(TP("t", 0));
  Append(*log, 40);  // ~150 bytes each in 1 KiB segments: several segments
  const int64_t segments = static_cast<int64_t>(log->number_of_segments());
  ASSERT_GE(segments, 4);
  ASSERT_TRUE(manager->Shutdown().ok());
  const std::string marker = config.log_dirs[0] + "/.kafka_cleanshutdown";
  EXPECT_TRUE(env_.FileExists(marker));
  EXPECT_EQ(CheckpointEntries(config.log_dirs[0] + "/recovery-point-offset-checkpoint"),
            (std::vector<std::string>{"t 0 40"}));
  manager.reset();

  LogManagerStartupReport report;
  manager = Start(config, &report);
  EXPECT_TRUE(report.dirs[0].clean_shutdown);
  EXPECT_FALSE(env_.FileExists(marker));
  // Only the active segment is looked at (the Log always checks it).
  EXPECT_EQ(report.segments_recovered, 1);
  EXPECT_EQ(report.bytes_truncated, 0u);
  EXPECT_EQ(manager->GetLog(TP("t", 0))->log_end_offset(), Offset(40));

  // The marker served one startup: a crash now means recovery from the checkpoint on.
  manager.reset();
  manager = Start(config, &report);
  EXPECT_FALSE(report.dirs[0].clean_shutdown);
  EXPECT_EQ(report.logs_recovered, 1);
}

TEST_F(LogManagerTest, CrashWithoutCheckpointRecoversEverySegmentAndCutsTornTail) {
  LogManagerConfig config = Config();
  auto manager = Start(config);
  Log* log = *manager->GetOrCreateLog(TP("t", 0));
  Append(*log, 40);
  const int64_t segments = static_cast<int64_t>(log->number_of_segments());
  const std::string active = log->Segments().back().log_path;
  manager.reset();  // crash: no checkpoint, no marker
  {
    auto file = env_.OpenFile(active, OpenMode::kOpenExisting);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(ToBytes(std::string(37, '\x7f'))).ok());
  }
  LogManagerStartupReport report;
  manager = Start(config, &report);
  EXPECT_FALSE(report.dirs[0].clean_shutdown);
  EXPECT_EQ(report.segments_recovered, segments);  // recovery point 0: all of them
  EXPECT_EQ(report.bytes_truncated, 37u);
  EXPECT_EQ(manager->GetLog(TP("t", 0))->log_end_offset(), Offset(40));
}

TEST_F(LogManagerTest, CheckpointedRecoveryPointBoundsCrashRecovery) {
  LogManagerConfig config = Config();
  auto manager = Start(config);
  Log* log = *manager->GetOrCreateLog(TP("t", 0));
  Append(*log, 40);
  ASSERT_TRUE(log->Flush().ok());
  ASSERT_TRUE(manager->CheckpointRecoveryPoints().ok());
  const int64_t segments = static_cast<int64_t>(log->number_of_segments());
  manager.reset();
  LogManagerStartupReport report;
  manager = Start(config, &report);
  EXPECT_LT(report.segments_recovered, segments);
  EXPECT_EQ(report.segments_recovered, 1);
}

TEST_F(LogManagerTest, UnreadableCheckpointIsReportedAndRecoveryStartsAtZero) {
  LogManagerConfig config = Config();
  auto manager = Start(config);
  Append(**manager->GetOrCreateLog(TP("t", 0)), 40);
  const int64_t segments = static_cast<int64_t>(manager->GetLog(TP("t", 0))->number_of_segments());
  ASSERT_TRUE(manager->CheckpointRecoveryPoints().ok());
  manager.reset();
  {
    auto file = env_.OpenFile(config.log_dirs[0] + "/recovery-point-offset-checkpoint",
                              OpenMode::kTruncate);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(ToBytes("0\n1\nt zero 40\n")).ok());
  }
  LogManagerStartupReport report;
  manager = Start(config, &report);
  EXPECT_EQ(report.dirs[0].recovery_point_checkpoint_error.code(), Errc::kCorruption);
  EXPECT_EQ(report.segments_recovered, segments);
}

TEST_F(LogManagerTest, RetentionTaskDeletesOldSegmentsOnVirtualTime) {
  LogManagerConfig config = Config();
  config.default_log_config.retention_ms = 600000;
  const TimeUs start = loop_.Now();
  auto manager = Start(config);
  Log* log = *manager->GetOrCreateLog(TP("t", 0));
  Append(*log, 40);
  ASSERT_GE(log->number_of_segments(), 4u);
  // Runs at 30 s, 330 s, 630 s; the records are 600 s old only at the third.
  loop_.RunUntil(start + 629999 * kMs);
  EXPECT_EQ(manager->task_stats().retention_runs, 2);
  EXPECT_EQ(manager->task_stats().segments_deleted, 0);
  EXPECT_EQ(log->log_start_offset(), Offset(0));
  loop_.RunUntil(start + 630000 * kMs);
  EXPECT_EQ(manager->task_stats().retention_runs, 3);
  EXPECT_GE(manager->task_stats().segments_deleted, 4);
  EXPECT_EQ(log->log_start_offset(), Offset(40));
  EXPECT_EQ(log->number_of_segments(), 1u);
}

TEST_F(LogManagerTest, FlushTaskFlushesOnlyWhenFlushMsElapsed) {
  LogManagerConfig config = Config();
  config.flush_check_interval_ms = 1000;
  config.default_log_config.flush_ms = 5000;
  const TimeUs start = loop_.Now();
  auto manager = Start(config);
  LogConfig unbounded;  // Kafka's default flush.ms: never flushed by time
  Log* timed = *manager->GetOrCreateLog(TP("timed", 0));
  Log* never = *manager->GetOrCreateLog(TP("never", 0), unbounded);
  Append(*timed, 3);
  Append(*never, 3);
  loop_.RunUntil(start + 29999 * kMs);
  EXPECT_EQ(timed->recovery_point(), Offset(0));
  loop_.RunUntil(start + 40000 * kMs);
  EXPECT_GT(manager->task_stats().flush_runs, 0);
  EXPECT_EQ(timed->recovery_point(), Offset(3));
  EXPECT_EQ(never->recovery_point(), Offset(0));
}

TEST_F(LogManagerTest, DeleteLogRenamesThenRemovesAfterDelay) {
  LogManagerConfig config = Config();
  config.file_delete_delay_ms = 60000;
  auto manager = Start(config);
  Append(**manager->GetOrCreateLog(TP("t", 0)), 3);
  ASSERT_TRUE(manager->GetOrCreateLog(TP("t", 1)).ok());
  auto deleted = manager->DeleteLog(TP("t", 0));
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_TRUE(*deleted);
  EXPECT_EQ(manager->GetLog(TP("t", 0)), nullptr);
  const std::string dir = config.log_dirs[0];
  EXPECT_FALSE(env_.DirExists(dir + "/t-0"));
  EXPECT_TRUE(env_.DirExists(dir + "/t-0.0-delete"));
  EXPECT_EQ(manager->PendingDeletions(), (std::vector<std::string>{dir + "/t-0.0-delete"}));
  EXPECT_EQ(CheckpointEntries(dir + "/recovery-point-offset-checkpoint"),
            (std::vector<std::string>{"t 1 0"}));
  loop_.RunUntil(loop_.Now() + 59999 * kMs);
  EXPECT_TRUE(env_.DirExists(dir + "/t-0.0-delete"));
  loop_.RunUntil(loop_.Now() + 1 * kMs);
  EXPECT_FALSE(env_.DirExists(dir + "/t-0.0-delete"));
  EXPECT_EQ(manager->task_stats().deleted_dirs_removed, 1);
  EXPECT_FALSE(*manager->DeleteLog(TP("t", 0)));
  // A re-created log starts empty.
  EXPECT_EQ((*manager->GetOrCreateLog(TP("t", 0)))->log_end_offset(), Offset(0));
}

TEST_F(LogManagerTest, MalformedDirsReportedAndDeleteDirsRemovedAtStartup) {
  LogManagerConfig config = Config();
  const std::string dir = config.log_dirs[0];
  for (const char* name : {"nodash", "topic-x", "-3", "a-b-2", "a-b-2.4-delete"}) {
    ASSERT_TRUE(env_.CreateDir(dir + "/" + name).ok());
  }
  ASSERT_TRUE(
      env_.OpenFile(dir + "/a-b-2.4-delete/00000000000000000000.log", OpenMode::kCreateIfMissing)
          .ok());
  LogManagerStartupReport report;
  auto manager = Start(config, &report);
  EXPECT_EQ(report.dirs[0].malformed_dirs, (std::vector<std::string>{"-3", "nodash", "topic-x"}));
  EXPECT_EQ(report.dirs[0].deleted_dirs_removed, (std::vector<std::string>{"a-b-2.4-delete"}));
  EXPECT_FALSE(env_.DirExists(dir + "/a-b-2.4-delete"));
  EXPECT_EQ(report.logs_loaded, 1);
  EXPECT_NE(manager->GetLog(TP("a-b", 2)), nullptr);
}

TEST_F(LogManagerTest, SamePartitionInTwoDirsFailsStartup) {
  LogManagerConfig config = Config(2);
  ASSERT_TRUE(env_.CreateDir(config.log_dirs[0] + "/t-0").ok());
  ASSERT_TRUE(env_.CreateDir(config.log_dirs[1] + "/t-0").ok());
  LogManager manager(env_, loop_, loop_, config);
  auto started = manager.Startup();
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.status().message().find("Duplicate log directories"), std::string::npos);
}

TEST_F(LogManagerTest, ShutdownAndCrashCancelTheirTimers) {
  auto manager = Start(Config());
  EXPECT_EQ(loop_.pending(), 4u);  // retention, flush, two checkpoints
  ASSERT_TRUE(manager->GetOrCreateLog(TP("t", 0)).ok());
  ASSERT_TRUE(manager->DeleteLog(TP("t", 0)).ok());
  EXPECT_EQ(loop_.pending(), 5u);
  ASSERT_TRUE(manager->Shutdown().ok());
  EXPECT_EQ(loop_.pending(), 0u);
  manager = Start(Config());
  EXPECT_EQ(loop_.pending(), 4u);
  manager.reset();
  EXPECT_EQ(loop_.pending(), 0u);
}

}  // namespace
}  // namespace ksim
