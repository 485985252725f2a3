// Opening a log: leftovers of interrupted deletions, cleanings and swaps, loading segments,
// rebuilding indexes, and recovery from the recovery point on. The procedure is described step
// by step in docs/storage.md ("Recovery on open"); the rest of Log is in core/storage/log.cc.
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/check.h"
#include "core/storage/log.h"

namespace ksim {
namespace {

bool EndsWith(std::string_view name, std::string_view suffix) {
  return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
}

std::string_view StripSuffix(std::string_view name, std::string_view suffix) {
  return name.substr(0, name.size() - suffix.size());
}

// Removes `path`; one that is already gone is fine.
Status RemoveIfPresent(Env& env, const std::string& path) {
  Status status = env.RemoveFile(path);
  if (!status.ok() && status.code() != Errc::kNotFound) return status;
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Log>> Log::Open(Env& env, const Clock& clock, std::string dir,
                                       const LogConfig& config, const LogOpenOptions& options) {
  KSIM_CHECK(options.recovery_point >= Offset(0));
  KSIM_CHECK(options.log_start_offset >= Offset(0));
  std::unique_ptr<Log> log(new Log(env, clock, std::move(dir), config));
  if (!env.DirExists(log->dir_)) {
    // A new partition directory must survive a crash as an entry of the log directory too, and
    // so must every ancestor CreateDir makes along the way (e.g. a new log directory): each
    // created directory's parent is synced, deepest first.
    std::vector<std::string> created;
    for (std::string dir = log->dir_; !dir.empty() && !env.DirExists(dir);) {
      created.push_back(dir);
      const size_t slash = dir.find_last_of('/');
      if (slash == std::string::npos) break;
      dir = dir.substr(0, slash == 0 ? 1 : slash);
    }
    KSIM_RETURN_IF_ERROR(env.CreateDir(log->dir_));
    for (const std::string& dir : created) {
      const size_t slash = dir.find_last_of('/');
      if (slash == std::string::npos) continue;
      KSIM_RETURN_IF_ERROR(env.SyncDir(dir.substr(0, slash == 0 ? 1 : slash)));
    }
  }
  KSIM_RETURN_IF_ERROR(log->LoadSegments(options));
  log->CheckInvariants();
  return log;
}

Status Log::RemoveLeftovers(std::vector<Offset>* swap_bases) {
  KSIM_ASSIGN_OR_RETURN(std::vector<std::string> names, env_.ListDir(dir_));
  for (const std::string& name : names) {
    const std::string path = JoinPath(dir_, name);
    if (EndsWith(name, kDeletedFileSuffix) || EndsWith(name, kCleanedFileSuffix)) {
      // A deletion or a cleaning that did not finish: the file is not part of the log.
      KSIM_RETURN_IF_ERROR(RemoveIfPresent(env_, path));
      ++recovery_report_.leftover_files_removed;
    } else if (EndsWith(name, kSwapFileSuffix)) {
      // A swap interrupted by a crash (Kafka 0.10 Log.loadSegments): an index .swap is rebuilt
      // later, so it goes; a .log.swap is completed once the segments are loaded, and the index
      // of the segment it replaces is dropped.
      const std::string_view base_name = StripSuffix(name, kSwapFileSuffix);
      const std::optional<Offset> base = OffsetFromFileName(base_name);
      if (EndsWith(base_name, kIndexFileSuffix) || EndsWith(base_name, kTimeIndexFileSuffix)) {
        KSIM_RETURN_IF_ERROR(RemoveIfPresent(env_, path));
        ++recovery_report_.leftover_files_removed;
      } else if (EndsWith(base_name, kLogFileSuffix) && base) {
        KSIM_RETURN_IF_ERROR(RemoveIfPresent(env_, IndexFilePath(dir_, *base)));
        KSIM_RETURN_IF_ERROR(RemoveIfPresent(env_, TimeIndexFilePath(dir_, *base)));
        swap_bases->push_back(*base);
      }
    }
  }
  return Status::Ok();
}

Status Log::LoadSegment(Offset base) {
  KSIM_ASSIGN_OR_RETURN(std::unique_ptr<LogSegment> segment,
                        LogSegment::Open(env_, clock_, dir_, base, config_));
  bool rebuild = segment->indexes_missing();
  if (!rebuild) {
    Status status = segment->SanityCheck();
    if (status.ok()) status = segment->LoadFromIndexes();
    if (!status.ok()) {
      if (status.code() != Errc::kCorruption) return status;
      rebuild = true;
    }
  }
  if (rebuild) {
    // A missing or corrupt index: rebuild it from the .log file, as Kafka does for any segment.
    KSIM_ASSIGN_OR_RETURN(SegmentRecovery recovery, segment->Recover());
    ++recovery_report_.indexes_rebuilt;
    recovery_report_.bytes_truncated += recovery.truncated_bytes;
    if (recovery_report_.first_damage.ok() && !recovery.damage.ok()) {
      recovery_report_.first_damage = recovery.damage;
    }
    recovered_on_load_[base] = recovery.damage;
  }
  ++recovery_report_.segments_loaded;
  segments_.emplace(base, std::move(segment));
  return Status::Ok();
}

Status Log::CompleteSwap(Offset base) {
  // The swap segment replaces the segments its offsets cover (Kafka's replaceSegments): recover
  // it (its indexes were dropped), delete the old segments, then drop the .swap suffix.
  KSIM_ASSIGN_OR_RETURN(std::unique_ptr<LogSegment> swap,
                        LogSegment::Open(env_, clock_, dir_, base, config_, kSwapFileSuffix));
  KSIM_ASSIGN_OR_RETURN(SegmentRecovery recovery, swap->Recover());
  recovery_report_.bytes_truncated += recovery.truncated_bytes;
  const Offset end = std::max(swap->next_offset(), base + 1);
  KSIM_RETURN_IF_ERROR(swap->Close());
  for (auto it = segments_.lower_bound(base); it != segments_.end() && it->first < end;) {
    KSIM_ASSIGN_OR_RETURN(std::vector<std::string> paths, it->second->CloseAndRenameForDeletion());
    for (const std::string& path : paths) KSIM_RETURN_IF_ERROR(RemoveIfPresent(env_, path));
    it = segments_.erase(it);
  }
  const std::pair<std::string, std::string> renames[] = {
      {LogFilePath(dir_, base, kSwapFileSuffix), LogFilePath(dir_, base)},
      {IndexFilePath(dir_, base, kSwapFileSuffix), IndexFilePath(dir_, base)},
      {TimeIndexFilePath(dir_, base, kSwapFileSuffix), TimeIndexFilePath(dir_, base)},
  };
  for (const auto& [from, to] : renames) {
    // Without a time index (Kafka 0.10.0) the swap has none to rename.
    if (!config_.time_index && EndsWith(to, kTimeIndexFileSuffix)) continue;
    KSIM_RETURN_IF_ERROR(env_.RenameFile(from, to));
  }
  KSIM_RETURN_IF_ERROR(LoadSegment(base));
  ++recovery_report_.swaps_completed;
  return Status::Ok();
}

Status Log::RecoverFrom(Offset recovery_point) {
  // Segments holding offsets >= the recovery point may have lost or torn writes: verify each
  // batch, rebuild the indexes, and cut at the first damage, deleting every later segment
  // (Kafka's recoverLog).
  auto it = segments_.upper_bound(recovery_point);
  if (it != segments_.begin()) --it;
  for (; it != segments_.end(); ++it) {
    LogSegment& segment = *it->second;
    Status damage;
    if (auto loaded = recovered_on_load_.find(it->first); loaded != recovered_on_load_.end()) {
      damage = loaded->second;  // already verified batch by batch while loading
    } else {
      KSIM_ASSIGN_OR_RETURN(SegmentRecovery recovery, segment.Recover());
      recovery_report_.bytes_truncated += recovery.truncated_bytes;
      damage = recovery.damage;
    }
    ++recovery_report_.segments_recovered;
    // What was verified is made durable, so that the recovery point can be the LEO.
    KSIM_RETURN_IF_ERROR(segment.Flush());
    if (damage.ok()) continue;
    if (recovery_report_.first_damage.ok()) recovery_report_.first_damage = damage;
    std::vector<Offset> later;
    for (auto next = std::next(it); next != segments_.end(); ++next) later.push_back(next->first);
    for (Offset base : later) {
      KSIM_RETURN_IF_ERROR(DeleteSegment(base));
      recovery_report_.segments_deleted.push_back(base);
    }
    break;
  }
  return Status::Ok();
}

Status Log::DeleteSegmentsBelowLogStart(Offset log_start_offset) {
  // A segment wholly below the log start offset (the next segment starts at or before it) holds
  // nothing a reader may see: retention deleted it, or would at its next pass, and a power loss
  // may have undone that unsynced deletion. It goes before recovery, so that damage in it cannot
  // make recovery delete the live segments after it. (Kafka recovers such a segment and, on
  // damage, deletes everything after it: flushed records above the log start included. ksim is
  // stricter here; docs/storage.md.)
  while (segments_.size() > 1 && std::next(segments_.begin())->first <= log_start_offset) {
    const Offset base = segments_.begin()->first;
    recovered_on_load_.erase(base);
    KSIM_RETURN_IF_ERROR(DeleteSegment(base));
    recovery_report_.segments_below_log_start_deleted.push_back(base);
  }
  return Status::Ok();
}

Status Log::CutOverlaps() {
  // A segment whose batches reach past the next segment's base offset (a truncation whose sync
  // was lost, or damage) is cut there: the next segment holds those offsets.
  for (auto it = segments_.begin(); it != segments_.end(); ++it) {
    const auto next = std::next(it);
    if (next == segments_.end()) break;
    LogSegment& segment = *it->second;
    if (segment.next_offset() <= next->first) continue;
    KSIM_ASSIGN_OR_RETURN(uint64_t cut, segment.TruncateTo(next->first));
    recovery_report_.bytes_truncated += cut;
    KSIM_RETURN_IF_ERROR(segment.OnBecomeInactive());
    KSIM_RETURN_IF_ERROR(segment.Flush());
  }
  return Status::Ok();
}

Status Log::LoadSegments(const LogOpenOptions& options) {
  std::vector<Offset> swap_bases;
  KSIM_RETURN_IF_ERROR(RemoveLeftovers(&swap_bases));

  KSIM_ASSIGN_OR_RETURN(std::vector<std::string> names, env_.ListDir(dir_));
  std::vector<Offset> bases;
  for (const std::string& name : names) {
    const std::optional<Offset> base = OffsetFromFileName(name);
    if (!base) continue;  // not a segment file (checkpoints, snapshots, ...)
    if (EndsWith(name, kIndexFileSuffix) || EndsWith(name, kTimeIndexFileSuffix)) {
      if (name.size() != 20 + (EndsWith(name, kIndexFileSuffix) ? kIndexFileSuffix.size()
                                                                : kTimeIndexFileSuffix.size())) {
        continue;
      }
      if (!env_.FileExists(LogFilePath(dir_, *base))) {
        // An index whose .log file is gone.
        KSIM_RETURN_IF_ERROR(RemoveIfPresent(env_, JoinPath(dir_, name)));
        ++recovery_report_.leftover_files_removed;
      }
    } else if (name.size() == 20 + kLogFileSuffix.size() && EndsWith(name, kLogFileSuffix)) {
      bases.push_back(*base);
    }
  }
  std::sort(bases.begin(), bases.end());
  for (Offset base : bases) KSIM_RETURN_IF_ERROR(LoadSegment(base));
  std::sort(swap_bases.begin(), swap_bases.end());
  for (Offset base : swap_bases) KSIM_RETURN_IF_ERROR(CompleteSwap(base));

  if (segments_.empty()) {
    KSIM_ASSIGN_OR_RETURN(
        std::unique_ptr<LogSegment> segment,
        LogSegment::Create(env_, clock_, dir_, options.log_start_offset, config_));
    segments_.emplace(options.log_start_offset, std::move(segment));
  } else {
    KSIM_RETURN_IF_ERROR(DeleteSegmentsBelowLogStart(options.log_start_offset));
    KSIM_RETURN_IF_ERROR(RecoverFrom(options.recovery_point));
    KSIM_RETURN_IF_ERROR(CutOverlaps());
  }
  recovered_on_load_.clear();
  KSIM_RETURN_IF_ERROR(CompletePendingDeletes());

  log_start_offset_ = std::max(options.log_start_offset, segments_.begin()->first);
  next_offset_ = segments_.rbegin()->second->next_offset();
  recovery_point_ = next_offset_;
  if (next_offset_ < log_start_offset_) {
    // Everything left lies below the log start offset (e.g. its tail was lost): start over there.
    KSIM_RETURN_IF_ERROR(TruncateFullyAndStartAt(log_start_offset_));
    KSIM_RETURN_IF_ERROR(CompletePendingDeletes());
  }
  KSIM_RETURN_IF_ERROR(active_segment().ResizeIndexes(config_.max_index_size_bytes));
  KSIM_RETURN_IF_ERROR(env_.SyncDir(dir_));
  return Status::Ok();
}

}  // namespace ksim
