#include "core/storage/log_manager.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "core/base/check.h"
#include "core/storage/checkpoint_file.h"

namespace ksim {
namespace {

// Kafka's OffsetCheckpoint version for recovery-point and log-start-offset checkpoints.

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string ParentDir(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Milliseconds as a timer delay, or nullopt when the delay cannot be represented (an unbounded
// interval: the task never runs again).
std::optional<TimeUs> DelayUs(int64_t ms) {
  if (ms < 0 || ms > std::numeric_limits<TimeUs>::max() / kUsPerMs / 2) return std::nullopt;
  return ms * kUsPerMs;
}

}  // namespace

LogManager::LogManager(Env& env, const Clock& clock, Timers& timers, LogManagerConfig config)
    : env_(env), clock_(clock), timers_(timers), config_(std::move(config)) {
  KSIM_CHECK_MSG(!config_.log_dirs.empty(), "log.dirs is empty");
  logs_in_dir_.assign(config_.log_dirs.size(), 0);
  std::vector<std::string> sorted = config_.log_dirs;
  std::sort(sorted.begin(), sorted.end());
  KSIM_CHECK_MSG(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(),
                 "duplicate log dir");
}

LogManager::~LogManager() {
  // A crash when Shutdown() did not run: no I/O, only our pending callbacks go.
  for (const Task& task : tasks_) {
    if (task.timer != 0) timers_.Cancel(task.timer);
  }
  for (const auto& [path, timer] : pending_deletions_) timers_.Cancel(timer);
}

Result<std::map<TopicPartition, Offset>> LogManager::ReadCheckpoint(const std::string& path) const {
  return ReadOffsetCheckpoint(env_, path);
}

Status LogManager::LoadDir(size_t dir_index, LogDirStartupReport& dir_report,
                           LogManagerStartupReport& report) {
  const std::string& dir = config_.log_dirs[dir_index];
  dir_report.dir = dir;
  if (!env_.DirExists(dir)) {
    KSIM_RETURN_IF_ERROR(env_.CreateDir(dir));
    KSIM_RETURN_IF_ERROR(env_.SyncDir(ParentDir(dir)));
    dir_report.created = true;
  }
  const std::string marker = JoinPath(dir, std::string(kCleanShutdownFileName));
  dir_report.clean_shutdown = env_.FileExists(marker);

  // Unreadable checkpoints cost a longer recovery, not the broker (Kafka warns and uses 0).
  std::map<TopicPartition, Offset> recovery_points;
  std::map<TopicPartition, Offset> log_start_offsets;
  if (auto read = ReadCheckpoint(JoinPath(dir, std::string(kRecoveryPointCheckpointFileName)));
      read.ok()) {
    recovery_points = std::move(*read);
  } else {
    dir_report.recovery_point_checkpoint_error = read.status();
  }
  if (auto read = ReadCheckpoint(JoinPath(dir, std::string(kLogStartOffsetCheckpointFileName)));
      read.ok()) {
    log_start_offsets = std::move(*read);
  } else {
    dir_report.log_start_offset_checkpoint_error = read.status();
  }

  KSIM_ASSIGN_OR_RETURN(std::vector<std::string> names, env_.ListDir(dir));
  bool removed_any = false;
  for (const std::string& name : names) {
    const std::string path = JoinPath(dir, name);
    if (!env_.DirExists(path)) continue;  // checkpoints, the marker, their .tmp files
    if (EndsWith(name, kDeleteDirSuffix)) {
      KSIM_RETURN_IF_ERROR(RemoveTree(env_, path));
      dir_report.deleted_dirs_removed.push_back(name);
      removed_any = true;
      continue;
    }
    std::optional<TopicPartition> tp = ParseTopicPartition(name);
    if (!tp) {
      dir_report.malformed_dirs.push_back(name);
      continue;
    }
    if (auto other = logs_.find(*tp); other != logs_.end()) {
      return Status(Errc::kInvalidArgument,
                    "Duplicate log directories found: " + path + ", " +
                        JoinPath(config_.log_dirs[other->second.dir_index], name));
    }
    LogOpenOptions options;
    if (dir_report.clean_shutdown) {
      // The logs were closed (flushed) by a clean shutdown: nothing past the active segment can
      // be damaged (Kafka's recoverLog sets the recovery point to the LEO and returns).
      options.recovery_point = Offset(std::numeric_limits<int64_t>::max());
    } else if (auto it = recovery_points.find(*tp); it != recovery_points.end()) {
      options.recovery_point = it->second;
    }
    if (auto it = log_start_offsets.find(*tp); it != log_start_offsets.end()) {
      options.log_start_offset = it->second;
    }
    const LogConfig log_config =
        config_.topic_config ? config_.topic_config(tp->topic) : config_.default_log_config;
    KSIM_ASSIGN_OR_RETURN(std::unique_ptr<Log> log,
                          Log::Open(env_, clock_, path, log_config, options));
    const LogRecoveryReport& recovery = log->recovery_report();
    ++dir_report.logs_loaded;
    ++report.logs_loaded;
    if (recovery.segments_recovered > 0) ++report.logs_recovered;
    report.segments_recovered += recovery.segments_recovered;
    report.bytes_truncated += recovery.bytes_truncated;
    report.logs[*tp] = recovery;
    if (logs_.emplace(*tp, Entry{std::move(log), dir_index}).second) ++logs_in_dir_[dir_index];
  }
  if (dir_report.clean_shutdown) {
    // The marker vouches for one startup only; the removal must be durable, or a crash would
    // bring it back and vouch for logs written since.
    KSIM_RETURN_IF_ERROR(env_.RemoveFile(marker));
    removed_any = true;
  }
  if (removed_any) KSIM_RETURN_IF_ERROR(env_.SyncDir(dir));
  return Status::Ok();
}

Result<LogManagerStartupReport> LogManager::Startup() {
  KSIM_CHECK_MSG(state_ == State::kCreated, "Startup called twice");
  LogManagerStartupReport report;
  for (size_t i = 0; i < config_.log_dirs.size(); ++i) {
    LogDirStartupReport dir_report;
    KSIM_RETURN_IF_ERROR(LoadDir(i, dir_report, report));
    report.dirs.push_back(std::move(dir_report));
  }
  state_ = State::kRunning;
  tasks_ = {
      Task{config_.retention_check_interval_ms, 0, &LogManager::CleanupLogs, "retention"},
      Task{config_.flush_check_interval_ms, 0, &LogManager::FlushDirtyLogs, "flush"},
      Task{config_.flush_recovery_point_checkpoint_interval_ms, 0,
           &LogManager::CheckpointRecoveryPoints, "recovery-point checkpoint"},
      Task{config_.flush_start_offset_checkpoint_interval_ms, 0,
           &LogManager::CheckpointLogStartOffsets, "log-start-offset checkpoint"},
  };
  for (size_t i = 0; i < tasks_.size(); ++i) {
    ScheduleTask(i, LogManagerConfig::kInitialTaskDelayMs);
  }
  return report;
}

void LogManager::ScheduleTask(size_t index, int64_t delay_ms) {
  const std::optional<TimeUs> delay = DelayUs(delay_ms);
  tasks_[index].timer = 0;
  if (!delay) return;
  tasks_[index].timer = timers_.Schedule(*delay, [this, index] { RunTask(index); });
}

void LogManager::RunTask(size_t index) {
  tasks_[index].timer = 0;
  if (state_ != State::kRunning) return;
  const Status status = (this->*tasks_[index].run)();
  NoteError(status);
  // Kafka 1.x/2.0: checkpointLogRecoveryOffsetsInDir, checkpointLogStartOffsetsInDir, the flush
  // and the segment deletion report an IOException to the LogDirFailureChannel.
  if (!status.ok() && IsStorageFailure(status) && storage_failure_handler_) {
    storage_failure_handler_(Status(Errc::kKafkaStorageError, std::string(tasks_[index].name) +
                                                                  " failed: " + status.ToString()));
  }
  ScheduleTask(index, tasks_[index].period_ms);
}

void LogManager::NoteError(const Status& status) {
  if (status.ok()) return;
  ++stats_.errors;
  stats_.last_error = status;
}

Status LogManager::CleanupLogs() {
  ++stats_.retention_runs;
  Status first;
  for (auto& [tp, entry] : logs_) {
    std::optional<Offset> high_watermark;
    if (config_.high_watermark) high_watermark = config_.high_watermark(tp);
    Result<int> deleted = entry.log->DeleteOldSegments(high_watermark);
    if (deleted.ok()) {
      stats_.segments_deleted += *deleted;
    } else if (first.ok()) {
      first = deleted.status();
    }
  }
  return first;
}

Status LogManager::FlushDirtyLogs() {
  ++stats_.flush_runs;
  Status first;
  for (auto& [tp, entry] : logs_) {
    Status status = entry.log->MaybeFlush();
    if (!status.ok() && first.ok()) first = status;
  }
  return first;
}

Status LogManager::WriteCheckpoints(size_t dir_index, bool recovery_points,
                                    bool log_start_offsets) {
  const std::string& dir = config_.log_dirs[dir_index];
  std::map<TopicPartition, Offset> recovery_points_by_tp;
  std::map<TopicPartition, Offset> log_start_offsets_by_tp;
  for (auto& [tp, entry] : logs_) {
    if (entry.dir_index != dir_index) continue;
    recovery_points_by_tp[tp] = entry.log->recovery_point();
    // Kafka 1.0 records only log start offsets above the first segment's base offset; the
    // others are found again from the segment files.
    std::vector<LogSegment*> segments = entry.log->LogSegments();
    if (!segments.empty() && entry.log->log_start_offset() > segments.front()->base_offset()) {
      log_start_offsets_by_tp[tp] = entry.log->log_start_offset();
    }
  }
  Status first;
  if (recovery_points) {
    first = WriteOffsetCheckpoint(
        env_, JoinPath(dir, std::string(kRecoveryPointCheckpointFileName)), recovery_points_by_tp);
    if (first.ok()) ++stats_.recovery_point_checkpoints;
  }
  if (log_start_offsets) {
    Status status =
        WriteOffsetCheckpoint(env_, JoinPath(dir, std::string(kLogStartOffsetCheckpointFileName)),
                              log_start_offsets_by_tp);
    if (status.ok()) ++stats_.log_start_offset_checkpoints;
    if (first.ok()) first = status;
  }
  return first;
}

Status LogManager::CheckpointRecoveryPoints() {
  Status first;
  for (size_t i = 0; i < config_.log_dirs.size(); ++i) {
    Status status = WriteCheckpoints(i, true, false);
    if (first.ok()) first = status;
  }
  return first;
}

Status LogManager::CheckpointLogStartOffsets() {
  Status first;
  for (size_t i = 0; i < config_.log_dirs.size(); ++i) {
    Status status = WriteCheckpoints(i, false, true);
    if (first.ok()) first = status;
  }
  return first;
}

Status LogManager::Shutdown() {
  KSIM_CHECK_MSG(state_ == State::kRunning, "Shutdown before Startup or twice");
  state_ = State::kShutDown;
  for (Task& task : tasks_) {
    if (task.timer != 0) timers_.Cancel(task.timer);
    task.timer = 0;
  }
  // Directories waiting for removal stay; the next Startup removes them.
  for (const auto& [path, timer] : pending_deletions_) timers_.Cancel(timer);
  pending_deletions_.clear();

  Status first;
  for (size_t i = 0; i < config_.log_dirs.size(); ++i) {
    const std::string& dir = config_.log_dirs[i];
    // Flush first so that the checkpoints hold every log's end offset, then close.
    Status dir_status;
    for (auto& [tp, entry] : logs_) {
      if (entry.dir_index != i) continue;
      Status status = entry.log->Flush();
      if (!status.ok() && dir_status.ok()) dir_status = status;
    }
    if (dir_status.ok()) dir_status = WriteCheckpoints(i, true, true);
    for (auto& [tp, entry] : logs_) {
      if (entry.dir_index != i) continue;
      Status status = entry.log->Close();
      if (!status.ok() && dir_status.ok()) dir_status = status;
    }
    if (dir_status.ok()) {
      // The marker vouches that every log in the directory was closed cleanly.
      Result<std::unique_ptr<File>> marker =
          env_.OpenFile(JoinPath(dir, std::string(kCleanShutdownFileName)), OpenMode::kTruncate);
      dir_status = marker.status();
      if (dir_status.ok()) dir_status = (*marker)->Sync();
      if (dir_status.ok()) dir_status = env_.SyncDir(dir);
    }
    if (!dir_status.ok() && first.ok()) first = dir_status;
  }
  logs_.clear();
  std::fill(logs_in_dir_.begin(), logs_in_dir_.end(), 0);
  return first;
}

Log* LogManager::GetLog(const TopicPartition& tp) {
  auto it = logs_.find(tp);
  return it == logs_.end() ? nullptr : it->second.log.get();
}

size_t LogManager::NextLogDir() const {
  // The first of the directories holding the fewest logs (kept counts, not a walk over them).
  return static_cast<size_t>(std::min_element(logs_in_dir_.begin(), logs_in_dir_.end()) -
                             logs_in_dir_.begin());
}

Result<Log*> LogManager::GetOrCreateLog(const TopicPartition& tp,
                                        const std::optional<LogConfig>& config) {
  KSIM_CHECK_MSG(state_ == State::kRunning, "LogManager is not running");
  KSIM_CHECK_MSG(!tp.topic.empty() && tp.partition.value() >= 0, "bad topic partition");
  if (Log* log = GetLog(tp)) return log;
  const size_t dir_index = NextLogDir();
  const LogConfig log_config = config                 ? *config
                               : config_.topic_config ? config_.topic_config(tp.topic)
                                                      : config_.default_log_config;
  const std::string path = JoinPath(config_.log_dirs[dir_index], ToString(tp));
  KSIM_ASSIGN_OR_RETURN(std::unique_ptr<Log> log, Log::Open(env_, clock_, path, log_config));
  Log* raw = log.get();
  logs_.emplace(tp, Entry{std::move(log), dir_index});
  ++logs_in_dir_[dir_index];
  return raw;
}

std::vector<std::pair<TopicPartition, Log*>> LogManager::AllLogs() {
  std::vector<std::pair<TopicPartition, Log*>> all;
  all.reserve(logs_.size());
  for (auto& [tp, entry] : logs_) all.emplace_back(tp, entry.log.get());
  return all;
}

const std::string& LogManager::LogDirOf(const TopicPartition& tp) const {
  auto it = logs_.find(tp);
  KSIM_CHECK_MSG(it != logs_.end(), "no such log");
  return config_.log_dirs[it->second.dir_index];
}

std::vector<std::string> LogManager::PendingDeletions() const {
  std::vector<std::string> paths;
  for (const auto& [path, timer] : pending_deletions_) paths.push_back(path);
  return paths;
}

Result<bool> LogManager::DeleteLog(const TopicPartition& tp) {
  KSIM_CHECK_MSG(state_ == State::kRunning, "LogManager is not running");
  auto it = logs_.find(tp);
  if (it == logs_.end()) return false;
  const size_t dir_index = it->second.dir_index;
  const std::string& dir = config_.log_dirs[dir_index];
  std::unique_ptr<Log> log = std::move(it->second.log);
  logs_.erase(it);
  --logs_in_dir_[dir_index];
  // The records are going away: a failed close does not stop the deletion.
  const Status closed = log->Close();
  const std::string from = log->dir();
  log.reset();
  std::string to;
  do {
    to = JoinPath(dir, ToString(tp) + "." + std::to_string(next_delete_id_++) +
                           std::string(kDeleteDirSuffix));
  } while (env_.DirExists(to));
  KSIM_RETURN_IF_ERROR(env_.RenameFile(from, to));
  KSIM_RETURN_IF_ERROR(env_.SyncDir(dir));
  KSIM_RETURN_IF_ERROR(WriteCheckpoints(dir_index, true, true));
  const std::optional<TimeUs> delay = DelayUs(config_.file_delete_delay_ms);
  KSIM_CHECK_MSG(delay.has_value(), "file.delete.delay.ms out of range");
  pending_deletions_[to] = timers_.Schedule(*delay, [this, to] { RemoveDeletedDir(to); });
  if (!closed.ok()) NoteError(closed);
  return true;
}

void LogManager::RemoveDeletedDir(const std::string& path) {
  pending_deletions_.erase(path);
  Status status = RemoveTree(env_, path);
  if (status.ok()) status = env_.SyncDir(ParentDir(path));
  if (status.ok()) ++stats_.deleted_dirs_removed;
  NoteError(status);
}

}  // namespace ksim
