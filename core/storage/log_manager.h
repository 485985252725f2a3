// LogManager: a broker's logs, after Kafka's kafka.log.LogManager (0.10 / 1.x). It owns one Log
// (core/storage/log.h) per partition the broker holds, spread over one or more log directories
// (log.dirs), and the per-directory files that let a restart skip or bound recovery:
//
//   <log dir>/.kafka_cleanshutdown              written by a clean Shutdown(), removed by Startup()
//   <log dir>/recovery-point-offset-checkpoint  "<topic> <partition> <recovery point>" per log
//   <log dir>/log-start-offset-checkpoint       "<topic> <partition> <log start offset>" (1.0+)
//   <log dir>/<topic>-<partition>/              a partition's log
//   <log dir>/<topic>-<partition>.<n>-delete/   a deleted log waiting for removal
//
// Startup() loads every partition directory (with the clean-shutdown marker only the active
// segment of each log is verified; without it, every segment from the checkpointed recovery point
// on), then schedules the periodic tasks on the Timers seam: retention, time-based flush, and the
// two checkpoints, with Kafka's 30 s initial delay. A task that fails on the disk
// (IsStorageFailure) tells the storage failure handler: Kafka 1.x/2.0 takes the log dir offline
// then, and a broker whose only dir failed halts. Shutdown() closes every log (flushing it), writes
// the checkpoints and the marker. The procedures and file formats are in docs/log-manager.md.
//
// Ownership and threads: the Env, Clock and Timers are borrowed and must outlive the manager; the
// manager owns its logs (pointers handed out stay valid until DeleteLog or Shutdown) and its
// pending timers. One thread at a time (the broker's, or the simulator's): timer callbacks run
// on it. Crash behaviour: destroying the manager without Shutdown() is a crash: timers are
// cancelled, logs are dropped without Close, nothing more is written; the next Startup() finds no
// marker and recovers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/clock.h"
#include "core/base/status.h"
#include "core/base/topic_partition.h"
#include "core/base/types.h"
#include "core/config/log_config.h"
#include "core/env/env.h"
#include "core/storage/log.h"

namespace ksim {

inline constexpr std::string_view kCleanShutdownFileName = ".kafka_cleanshutdown";
inline constexpr std::string_view kRecoveryPointCheckpointFileName =
    "recovery-point-offset-checkpoint";
inline constexpr std::string_view kLogStartOffsetCheckpointFileName = "log-start-offset-checkpoint";
inline constexpr std::string_view kDeleteDirSuffix = "-delete";

struct LogManagerConfig {
  static constexpr int64_t kUnbounded = LogConfig::kUnbounded;
  // Kafka's LogManager.InitialTaskDelayMs: the periodic tasks first run this long after startup.
  static constexpr int64_t kInitialTaskDelayMs = 30 * 1000;

  // log.dirs: one or more directories. REQUIRES: non-empty, no duplicates.
  std::vector<std::string> log_dirs = {"/tmp/kafka-logs"};
  // The LogConfig a topic without overrides gets (BrokerConfig::DefaultLogConfig).
  LogConfig default_log_config;
  // The topic's LogConfig (defaults + its overrides, as the broker reads them from ZooKeeper);
  // null: every topic gets default_log_config.
  std::function<LogConfig(const std::string& topic)> topic_config;
  // The high watermark retention must stay below (Kafka 1.x deletes only segments wholly below
  // it); null or nullopt: no bound.
  std::function<std::optional<Offset>(const TopicPartition&)> high_watermark;
  // log.retention.check.interval.ms: Log::DeleteOldSegments on every log.
  int64_t retention_check_interval_ms = 300000;
  // log.flush.scheduler.interval.ms: Log::MaybeFlush on every log (runs once, after the initial
  // delay, when unbounded: Kafka schedules it with period Long.MaxValue).
  int64_t flush_check_interval_ms = kUnbounded;
  // log.flush.offset.checkpoint.interval.ms: recovery-point-offset-checkpoint.
  int64_t flush_recovery_point_checkpoint_interval_ms = 60000;
  // log.flush.start.offset.checkpoint.interval.ms (Kafka 1.0): log-start-offset-checkpoint.
  int64_t flush_start_offset_checkpoint_interval_ms = 60000;
  // log.segment.delete.delay.ms (file.delete.delay.ms): a deleted log's directory is removed
  // this long after DeleteLog renamed it.
  int64_t file_delete_delay_ms = 60000;
};

// What Startup() found in one log directory.
struct LogDirStartupReport {
  std::string dir;
  bool created = false;         // the directory was missing
  bool clean_shutdown = false;  // the marker was there (and has been removed)
  int64_t logs_loaded = 0;
  // Unreadable checkpoints are not fatal (Kafka warns and starts from 0): the damage, else ok.
  Status recovery_point_checkpoint_error;
  Status log_start_offset_checkpoint_error;
  std::vector<std::string> malformed_dirs;        // names that are not "<topic>-<partition>"
  std::vector<std::string> deleted_dirs_removed;  // "*-delete" leftovers of DeleteLog
};

// What Startup() did, for the trace.
struct LogManagerStartupReport {
  std::vector<LogDirStartupReport> dirs;  // in log.dirs order
  int64_t logs_loaded = 0;
  int64_t logs_recovered = 0;  // logs with at least one segment verified batch by batch
  int64_t segments_recovered = 0;
  uint64_t bytes_truncated = 0;
  std::map<TopicPartition, LogRecoveryReport> logs;
};

// Counters of the periodic tasks (for the trace and tests).
struct LogManagerTaskStats {
  int64_t retention_runs = 0;
  int64_t segments_deleted = 0;
  int64_t flush_runs = 0;
  int64_t recovery_point_checkpoints = 0;
  int64_t log_start_offset_checkpoints = 0;
  int64_t deleted_dirs_removed = 0;
  int64_t errors = 0;
  Status last_error;  // the latest failure of a task (ok when none)
};

class LogManager {
 public:
  LogManager(Env& env, const Clock& clock, Timers& timers, LogManagerConfig config);
  // Without Shutdown() this is a crash: timers are cancelled, logs dropped unflushed.
  ~LogManager();
  LogManager(const LogManager&) = delete;
  LogManager& operator=(const LogManager&) = delete;

  // Creates missing log dirs, loads every log, removes the clean-shutdown markers, schedules the
  // periodic tasks. Fails on an I/O error, a log that cannot be opened, or one partition found in
  // two directories (Kafka refuses to start). REQUIRES: called once, before anything else.
  Result<LogManagerStartupReport> Startup();
  // Clean shutdown: cancels the tasks, closes every log, writes both checkpoints and the marker
  // in each directory whose logs all closed. Returns the first error. REQUIRES: after Startup.
  Status Shutdown();

  // The partition's log, or null.
  Log* GetLog(const TopicPartition& tp);
  // The partition's log, created when missing in the log dir holding the fewest logs (ties: the
  // first in log.dirs) with `config`, or the topic's config when none is given.
  Result<Log*> GetOrCreateLog(const TopicPartition& tp,
                              const std::optional<LogConfig>& config = std::nullopt);
  // Every log, ordered by partition.
  std::vector<std::pair<TopicPartition, Log*>> AllLogs();
  // Calls visit(tp, log, dir_index) for every log, ordered by partition; dir_index: the log's
  // directory in config().log_dirs. Without a copy of the list (a checkpoint of every partition).
  template <class Visit>
  void ForEachLog(Visit&& visit) const {
    for (const auto& [tp, entry] : logs_) visit(tp, *entry.log, entry.dir_index);
  }
  // Closes the log, renames its directory to "<topic>-<partition>.<n>-delete" (durable: the log
  // dir is synced), drops it from the checkpoints, and removes the directory file.delete.delay.ms
  // later. False when there is no such log.
  Result<bool> DeleteLog(const TopicPartition& tp);

  // Who hears that a periodic task failed on the disk (Kafka's LogDirFailureChannel; the broker
  // halts). Borrowed by copy; may be empty.
  void set_storage_failure_handler(std::function<void(const Status&)> handler) {
    storage_failure_handler_ = std::move(handler);
  }

  // The periodic tasks, callable directly (tests, the broker's admin paths).
  Status CleanupLogs();                // retention
  Status FlushDirtyLogs();             // time / count based flush
  Status CheckpointRecoveryPoints();   // every dir
  Status CheckpointLogStartOffsets();  // every dir

  // The log dir holding `tp`'s log; REQUIRES: the log exists.
  const std::string& LogDirOf(const TopicPartition& tp) const;
  // Directories renamed by DeleteLog and not yet removed.
  std::vector<std::string> PendingDeletions() const;
  const LogManagerTaskStats& task_stats() const { return stats_; }
  const LogManagerConfig& config() const { return config_; }

 private:
  struct Entry {
    std::unique_ptr<Log> log;
    size_t dir_index = 0;
  };
  struct Task {
    int64_t period_ms = 0;
    TimerId timer = 0;
    Status (LogManager::*run)() = nullptr;
    const char* name = "";  // for the storage failure's message
  };
  enum class State { kCreated, kRunning, kShutDown };

  Status LoadDir(size_t dir_index, LogDirStartupReport& dir_report,
                 LogManagerStartupReport& report);
  Result<std::map<TopicPartition, Offset>> ReadCheckpoint(const std::string& path) const;
  Status WriteCheckpoints(size_t dir_index, bool recovery_points, bool log_start_offsets);
  // Where a new log goes: the directory holding the fewest (Kafka's nextLogDir), the first of
  // those tied.
  size_t NextLogDir() const;
  void ScheduleTask(size_t index, int64_t delay_ms);
  void RunTask(size_t index);
  void RemoveDeletedDir(const std::string& path);
  void NoteError(const Status& status);

  Env& env_;
  const Clock& clock_;
  Timers& timers_;
  LogManagerConfig config_;
  State state_ = State::kCreated;
  std::map<TopicPartition, Entry> logs_;
  std::vector<int64_t> logs_in_dir_;  // by dir_index: how many of logs_ are there
  std::vector<Task> tasks_;
  std::map<std::string, TimerId> pending_deletions_;  // renamed dir -> its removal timer
  uint64_t next_delete_id_ = 0;
  LogManagerTaskStats stats_;
  std::function<void(const Status&)> storage_failure_handler_;
};

}  // namespace ksim
