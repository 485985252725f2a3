// A partition's log: appends, reads, roll, flush, truncation, retention. Opening and recovery
// are in core/storage/log_load.cc. See core/storage/log.h and docs/storage.md.
#include "core/storage/log.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "core/base/check.h"
#include "core/record/legacy_record.h"

namespace ksim {
namespace {

// Removes `path`; one that is already gone is fine.
Status RemoveIfPresent(Env& env, const std::string& path) {
  Status status = env.RemoveFile(path);
  if (!status.ok() && status.code() != Errc::kNotFound) return status;
  return Status::Ok();
}

bool IsIoFailure(const Status& status) {
  return status.code() == Errc::kIoError || status.code() == Errc::kNoSpace ||
         status.code() == Errc::kNotFound || status.code() == Errc::kAlreadyExists;
}

}  // namespace

bool IsStorageFailure(const Status& status) {
  return IsIoFailure(status) || status.code() == Errc::kKafkaStorageError;
}

Log::Log(Env& env, const Clock& clock, std::string dir, const LogConfig& config)
    : env_(env), clock_(clock), dir_(std::move(dir)), config_(config) {
  KSIM_CHECK(config_.segment_bytes > 0);
  KSIM_CHECK(config_.index_interval_bytes >= 0);
  KSIM_CHECK(config_.max_index_size_bytes >= 0);
  last_flush_ms_ = clock_.NowMs();
}

Log::~Log() = default;

// ---- Appends ----------------------------------------------------------------------------------

Result<LogAppendInfo> Log::AppendAsLeader(MutableByteView batches, LeaderEpoch leader_epoch) {
  KSIM_RETURN_IF_ERROR(CheckOnline());
  // LogValidator: batches in another format than message.format.version are re-encoded in the
  // log's format first (record for record, so the offsets they get are the same).
  Result<std::optional<Bytes>> converted = ConvertBatches(batches, config_.message_format_magic);
  if (!converted.ok()) {
    const Errc code = converted.status().code() == Errc::kUnsupportedForMessageFormat
                          ? Errc::kUnsupportedForMessageFormat
                          : Errc::kCorruptMessage;
    return Status(code, "in the append to " + dir_ + " (message format v" +
                            std::to_string(config_.message_format_magic) +
                            "): " + converted.status().message());
  }
  if (!converted->has_value()) return Append(batches, /*as_leader=*/true, leader_epoch);
  Bytes& bytes = **converted;
  KSIM_ASSIGN_OR_RETURN(LogAppendInfo info,
                        Append(MutableByteView(bytes), /*as_leader=*/true, leader_epoch));
  // The caller's batches get the offsets (and epoch) their records got, as if appended as they
  // were: it reads them back (e.g. to trace the values appended).
  Offset offset = info.first_offset;
  BatchIterator original(batches, /*verify_crc=*/false);
  while (std::optional<BatchIterator::Item> item = original.Next()) {
    if (offset > info.last_offset) break;
    MutableByteView item_bytes = batches.subspan(item->position, item->bytes.size());
    SetBaseOffset(item_bytes, offset);
    if (item->header.magic == kMagicV2) SetPartitionLeaderEpoch(item_bytes, leader_epoch);
    offset = offset + (item->header.last_offset_delta + int64_t{1});
  }
  return info;
}

Result<LogAppendInfo> Log::AppendAsFollower(ByteView batches) {
  // A follower append never writes into the caller's bytes; the cast only shares the code path.
  MutableByteView bytes(const_cast<uint8_t*>(batches.data()), batches.size());
  return Append(bytes, /*as_leader=*/false, kNoPartitionLeaderEpoch);
}

Result<LogAppendInfo> Log::Append(MutableByteView bytes, bool as_leader, LeaderEpoch epoch) {
  KSIM_RETURN_IF_ERROR(CheckOnline());
  // Analyze and validate (Kafka's analyzeAndValidateRecords): every batch whole and intact.
  std::vector<BatchRef> batches;
  LogAppendInfo info;
  info.first_offset = next_offset_;
  info.last_offset = next_offset_ - 1;
  bool monotonic = true;
  std::optional<Offset> last_seen;
  BatchIterator iterator(bytes, /*verify_crc=*/false);
  while (std::optional<BatchIterator::Item> item = iterator.Next()) {
    const BatchHeader& header = item->header;
    if (as_leader && item->bytes.size() > static_cast<size_t>(config_.max_message_bytes)) {
      return Status(Errc::kMessageTooLarge, "batch of " + std::to_string(item->bytes.size()) +
                                                " bytes in the append to " + dir_ +
                                                " exceeds max.message.bytes " +
                                                std::to_string(config_.max_message_bytes));
    }
    Status valid = VerifyBatch(item->bytes);
    if (valid.ok() && as_leader && header.records_count == 0) {
      valid = Status(Errc::kCorruptMessage, "a producer batch without records");
    }
    if (!valid.ok()) {
      return Status(Errc::kCorruptMessage, "batch at position " + std::to_string(item->position) +
                                               " in the append to " + dir_ + ": " +
                                               valid.message());
    }
    if (last_seen && *last_seen >= header.last_offset()) monotonic = false;
    last_seen = header.last_offset();
    batches.push_back(BatchRef{header, item->position, item->bytes.size()});
    info.valid_bytes += static_cast<int64_t>(item->bytes.size());
  }
  if (!iterator.status().ok()) {
    return Status(Errc::kCorruptMessage,
                  "in the append to " + dir_ + ": " + iterator.status().message());
  }
  if (batches.empty()) return info;
  if (info.valid_bytes > config_.segment_bytes) {
    return Status(Errc::kRecordListTooLarge, "append of " + std::to_string(info.valid_bytes) +
                                                 " bytes to " + dir_ + " exceeds segment.bytes " +
                                                 std::to_string(config_.segment_bytes));
  }

  if (as_leader) {
    int64_t records = 0;
    for (const BatchRef& batch : batches) records += batch.header.last_offset_delta + int64_t{1};
    if (next_offset_.value() > std::numeric_limits<int64_t>::max() - records) {
      return Status(Errc::kInvalidRequest,
                    "offsets past " + ToString(next_offset_) + " would overflow in " + dir_);
    }
    // Offsets from the LEO on, and the leader's epoch (KIP-101), both outside the CRC.
    Offset offset = next_offset_;
    for (BatchRef& batch : batches) {
      MutableByteView batch_bytes = bytes.subspan(batch.position, batch.size);
      SetBaseOffset(batch_bytes, offset);
      batch.header.base_offset = offset;
      // Message format v0/v1 has no leader epoch (its CRC lies where v2 keeps it).
      if (batch.header.magic == kMagicV2) {
        SetPartitionLeaderEpoch(batch_bytes, epoch);
        batch.header.partition_leader_epoch = epoch;
      }
      offset = batch.header.next_offset();
    }
  } else {
    if (!monotonic) {
      return Status(Errc::kOffsetsOutOfOrder,
                    "out of order offsets in the append to " + dir_ + " (first " +
                        ToString(batches.front().header.base_offset) + ", last " +
                        ToString(batches.back().header.last_offset()) + ")");
    }
    if (batches.front().header.base_offset < next_offset_) {
      return Status(Errc::kUnexpectedAppendOffset,
                    "first offset " + ToString(batches.front().header.base_offset) + " (last " +
                        ToString(batches.back().header.last_offset()) +
                        ") is below the log end offset " + ToString(next_offset_) + " of " + dir_);
    }
  }
  info.first_offset = batches.front().header.base_offset;
  info.last_offset = batches.back().header.last_offset();
  info.num_batches = static_cast<int32_t>(batches.size());
  for (const BatchRef& batch : batches) {
    info.num_records += batch.header.last_offset_delta + int64_t{1};
    if (batch.header.max_timestamp > info.max_timestamp_ms) {
      info.max_timestamp_ms = batch.header.max_timestamp;
      info.offset_of_max_timestamp = batch.header.last_offset();
    }
  }

  // Write in runs whose offsets fit one segment: a follower can be sent offsets more than
  // INT32_MAX apart (a compacted leader log), which need a segment each.
  size_t begin = 0;
  while (begin < batches.size()) {
    const Offset run_first = batches[begin].header.base_offset;
    size_t end = begin + 1;
    while (end < batches.size() &&
           batches[end].header.last_offset() - run_first <= std::numeric_limits<int32_t>::max()) {
      ++end;
    }
    int64_t max_timestamp = kNoTimestamp;
    Offset offset_of_max = batches[end - 1].header.last_offset();
    for (size_t i = begin; i < end; ++i) {
      if (batches[i].header.max_timestamp > max_timestamp) {
        max_timestamp = batches[i].header.max_timestamp;
        offset_of_max = batches[i].header.last_offset();
      }
    }
    const size_t run_start = batches[begin].position;
    const size_t run_end = batches[end - 1].position + batches[end - 1].size;
    KSIM_RETURN_IF_ERROR(AppendRun(bytes.subspan(run_start, run_end - run_start), run_first,
                                   batches[end - 1].header.last_offset(), max_timestamp,
                                   offset_of_max, batches, begin, end));
    begin = end;
  }
  if (unflushed_messages() >= config_.flush_interval_messages) KSIM_RETURN_IF_ERROR(Flush());
  CheckInvariants();
  return info;
}

Status Log::AppendRun(MutableByteView run, Offset first, Offset last, int64_t max_timestamp_ms,
                      Offset offset_of_max_timestamp, const std::vector<BatchRef>& batches,
                      size_t begin, size_t end) {
  KSIM_CHECK(first >= next_offset_);
  RollParams params;
  params.max_segment_ms = config_.segment_ms;
  params.max_segment_bytes = config_.segment_bytes;
  params.max_timestamp_in_messages_ms = max_timestamp_ms;
  params.max_offset_in_messages = last;
  params.messages_size = static_cast<int64_t>(run.size());
  params.now_ms = clock_.NowMs();
  Result<bool> should_roll = active_segment().ShouldRoll(params);
  if (!should_roll.ok()) return Fail(should_roll.status());
  // The new segment starts at the first offset appended (a follower's may lie past the LEO).
  if (*should_roll) KSIM_RETURN_IF_ERROR(Roll(first));
  LogSegment& segment = active_segment();
  KSIM_CHECK(segment.CanConvertToRelativeOffset(last));
  Status appended = segment.Append(last, max_timestamp_ms, offset_of_max_timestamp, run);
  if (!appended.ok()) return Fail(appended);
  next_offset_ = last + 1;
  if (observer_ != nullptr) {
    for (size_t i = begin; i < end; ++i) observer_->OnAppend(batches[i].header);
  }
  return Status::Ok();
}

// ---- Reads ------------------------------------------------------------------------------------

Result<FetchDataInfo> Log::Read(Offset start_offset, int32_t max_bytes,
                                std::optional<Offset> max_offset, bool min_one_message) {
  KSIM_RETURN_IF_ERROR(CheckOnline());
  if (max_bytes < 0) {
    return Status(Errc::kInvalidArgument, "negative max bytes " + std::to_string(max_bytes));
  }
  FetchDataInfo info;
  info.fetch_offset = start_offset;
  if (start_offset == next_offset_) {
    info.segment_base_offset = segments_.rbegin()->first;
    info.position = segments_.rbegin()->second->size();
    return info;
  }
  auto it = segments_.upper_bound(start_offset);
  if (start_offset > next_offset_ || start_offset < log_start_offset_ || it == segments_.begin()) {
    return Status(Errc::kOffsetOutOfRange, "offset " + ToString(start_offset) + " of " + dir_ +
                                               " is outside [" + ToString(log_start_offset_) +
                                               ", " + ToString(next_offset_) + "]");
  }
  // Start in the segment with the greatest base <= start; if it holds nothing at or past the
  // start (a gap at its end), go on to the next segments.
  for (--it; it != segments_.end(); ++it) {
    const LogSegment& segment = *it->second;
    Result<std::optional<SegmentRead>> read =
        segment.Read(start_offset, max_offset, max_bytes, segment.size(), min_one_message);
    if (!read.ok()) return IsIoFailure(read.status()) ? Fail(read.status()) : read.status();
    if (!read->has_value()) continue;
    SegmentRead& found = **read;
    info.segment_base_offset = it->first;
    info.position = found.position;
    info.records = std::move(found.records);
    info.first_entry_incomplete = found.first_entry_incomplete;
    info.bytes_scanned += found.bytes_scanned;
    return info;
  }
  // In range, yet nothing at or past it: every later record is gone. An empty read at the end.
  info.segment_base_offset = segments_.rbegin()->first;
  info.position = segments_.rbegin()->second->size();
  return info;
}

Result<std::optional<TimestampOffset>> Log::FetchOffsetByTimestamp(int64_t timestamp_ms) {
  KSIM_RETURN_IF_ERROR(CheckOnline());
  if (timestamp_ms == kEarliestTimestamp) {
    return std::optional<TimestampOffset>(TimestampOffset{kNoTimestamp, log_start_offset_});
  }
  if (timestamp_ms == kLatestTimestamp) {
    return std::optional<TimestampOffset>(TimestampOffset{kNoTimestamp, next_offset_});
  }
  if (!config_.time_index) return FetchOffsetBefore(timestamp_ms);
  // The first segment whose largest timestamp reaches the target holds the answer, if any.
  for (const auto& [base, segment] : segments_) {
    if (segment->LargestTimestampMs() < timestamp_ms) continue;
    return segment->FindOffsetByTimestamp(timestamp_ms, log_start_offset_);
  }
  return std::optional<TimestampOffset>();
}

std::optional<TimestampOffset> Log::FetchOffsetBefore(int64_t timestamp_ms) const {
  // Kafka 0.10.0.1's KafkaApis.fetchOffsetsBefore: (base offset, last modified) of each
  // segment, then (LEO, now) when the active segment holds anything; the answer is the last
  // pair, searched from the end, whose time is at or before the target.
  std::vector<std::pair<Offset, int64_t>> offset_times;
  for (const auto& [base, segment] : segments_) {
    offset_times.emplace_back(base, segment->last_modified_ms());
  }
  if (segments_.rbegin()->second->size() > 0) {
    offset_times.emplace_back(next_offset_, clock_.NowMs());
  }
  for (auto it = offset_times.rbegin(); it != offset_times.rend(); ++it) {
    if (it->second <= timestamp_ms) return TimestampOffset{kNoTimestamp, it->first};
  }
  return std::nullopt;
}

Status Log::ForEachBatch(Offset from, const LogSegment::BatchVisitor& visit) const {
  KSIM_RETURN_IF_ERROR(CheckOnline());
  auto it = segments_.upper_bound(from);
  if (it != segments_.begin()) --it;
  for (; it != segments_.end(); ++it) {
    KSIM_ASSIGN_OR_RETURN(BatchWalk next, it->second->ForEachBatch(from, visit));
    if (next == BatchWalk::kStop) break;
  }
  return Status::Ok();
}

// ---- Roll, flush, truncation --------------------------------------------------------------------

Status Log::Roll(std::optional<Offset> expected_next_offset) {
  KSIM_RETURN_IF_ERROR(CheckOnline());
  LogSegment& active = active_segment();
  const Offset new_offset =
      std::max({expected_next_offset.value_or(Offset(0)), next_offset_, active.base_offset()});
  if (active.base_offset() == new_offset) {
    // Rolling an empty active segment onto its own base offset: keep it, with room to grow.
    KSIM_CHECK(active.size() == 0);
    Status resized = active.ResizeIndexes(config_.max_index_size_bytes);
    return resized.ok() ? resized : Fail(resized);
  }
  KSIM_CHECK(new_offset > active.base_offset());
  Status inactive = active.OnBecomeInactive();
  if (!inactive.ok()) return Fail(inactive);
  // Files left over under the new name (a segment deleted before a crash) are replaced.
  Result<std::unique_ptr<LogSegment>> segment =
      LogSegment::Create(env_, clock_, dir_, new_offset, config_);
  if (!segment.ok()) return Fail(segment.status());
  segments_.emplace(new_offset, std::move(segment).value());
  if (observer_ != nullptr) observer_->OnRoll(new_offset);
  // Kafka schedules a flush of everything before the new segment right after a roll.
  return Flush(new_offset);
}

Status Log::Flush(Offset offset) {
  KSIM_RETURN_IF_ERROR(CheckOnline());
  offset = std::min(offset, next_offset_);
  if (offset <= recovery_point_) return Status::Ok();
  // Segments holding offsets in [recovery point, offset).
  auto it = segments_.upper_bound(recovery_point_);
  if (it != segments_.begin()) --it;
  for (; it != segments_.end() && it->first < offset; ++it) {
    Status flushed = it->second->Flush();
    if (!flushed.ok()) return Fail(flushed);
  }
  // New and removed segment files must be durable entries of the directory too.
  Status synced = env_.SyncDir(dir_);
  if (!synced.ok()) return Fail(synced);
  recovery_point_ = offset;
  last_flush_ms_ = clock_.NowMs();
  CheckInvariants();
  return Status::Ok();
}

Status Log::MaybeFlush() {
  KSIM_RETURN_IF_ERROR(CheckOnline());
  const bool by_count = unflushed_messages() >= config_.flush_interval_messages;
  const bool by_time = config_.flush_ms != LogConfig::kUnbounded &&
                       clock_.NowMs() - last_flush_ms_ >= config_.flush_ms;
  if (unflushed_messages() > 0 && (by_count || by_time)) return Flush();
  return Status::Ok();
}

Result<bool> Log::TruncateTo(Offset target) {
  KSIM_CHECK(target >= Offset(0));
  KSIM_RETURN_IF_ERROR(CheckOnline());
  if (target >= next_offset_) return false;
  if (segments_.begin()->first > target) {
    KSIM_RETURN_IF_ERROR(TruncateFullyAndStartAt(target));
    return true;
  }
  while (segments_.rbegin()->first > target) {
    KSIM_RETURN_IF_ERROR(DeleteSegment(segments_.rbegin()->first));
  }
  Result<uint64_t> truncated = active_segment().TruncateTo(target);
  if (!truncated.ok()) return Fail(truncated.status());
  // The truncation is made durable at once: the recovery point drops to the target, so no later
  // flush would sync the shortened file or the renames of the deleted segments.
  Status flushed = active_segment().Flush();
  if (!flushed.ok()) return Fail(flushed);
  Status synced = env_.SyncDir(dir_);
  if (!synced.ok()) return Fail(synced);
  next_offset_ = target;
  recovery_point_ = std::min(recovery_point_, target);
  log_start_offset_ = std::min(log_start_offset_, target);
  if (observer_ != nullptr) observer_->OnTruncateTo(target);
  CheckInvariants();
  return true;
}

Status Log::TruncateFullyAndStartAt(Offset new_offset) {
  KSIM_CHECK(new_offset >= Offset(0));
  KSIM_RETURN_IF_ERROR(CheckOnline());
  while (!segments_.empty()) KSIM_RETURN_IF_ERROR(DeleteSegment(segments_.begin()->first));
  Result<std::unique_ptr<LogSegment>> segment =
      LogSegment::Create(env_, clock_, dir_, new_offset, config_);
  if (!segment.ok()) return Fail(segment.status());
  segments_.emplace(new_offset, std::move(segment).value());
  // Durable at once, like TruncateTo: the deletions and the new empty segment.
  Status flushed = segments_.begin()->second->Flush();
  if (!flushed.ok()) return Fail(flushed);
  Status synced = env_.SyncDir(dir_);
  if (!synced.ok()) return Fail(synced);
  next_offset_ = new_offset;
  // Nothing below the new offset exists any more, so nothing below it is unflushed.
  recovery_point_ = new_offset;
  log_start_offset_ = new_offset;
  if (observer_ != nullptr) observer_->OnTruncateFullyAndStartAt(new_offset);
  CheckInvariants();
  return Status::Ok();
}

// ---- Retention and deletion ---------------------------------------------------------------------

Status Log::DeleteSegment(Offset base) {
  auto it = segments_.find(base);
  KSIM_CHECK(it != segments_.end());
  std::unique_ptr<LogSegment> segment = std::move(it->second);
  segments_.erase(it);
  // Renamed to .deleted at once (readers no longer see it), removed after file.delete.delay.ms.
  Result<std::vector<std::string>> paths = segment->CloseAndRenameForDeletion();
  if (!paths.ok()) return Fail(paths.status());
  pending_deletes_.push_back(
      PendingDelete{clock_.NowMs() + config_.file_delete_delay_ms, std::move(paths).value()});
  if (config_.file_delete_delay_ms <= 0) return CompletePendingDeletes();
  return Status::Ok();
}

Status Log::CompletePendingDeletes() {
  const int64_t now_ms = clock_.NowMs();
  std::vector<PendingDelete> waiting;
  for (PendingDelete& pending : pending_deletes_) {
    if (pending.due_ms > now_ms) {
      waiting.push_back(std::move(pending));
      continue;
    }
    for (const std::string& path : pending.paths) {
      Status removed = RemoveIfPresent(env_, path);
      if (!removed.ok()) return Fail(removed);
    }
  }
  pending_deletes_ = std::move(waiting);
  return Status::Ok();
}

void Log::RaiseLogStartOffset(Offset offset) {
  if (offset <= log_start_offset_) return;
  log_start_offset_ = offset;
  if (observer_ != nullptr) observer_->OnLogStartOffsetIncremented(offset);
}

Status Log::MaybeIncrementLogStartOffset(Offset new_log_start_offset) {
  KSIM_RETURN_IF_ERROR(CheckOnline());
  if (new_log_start_offset > next_offset_) {
    return Status(Errc::kOffsetOutOfRange, "cannot move the log start offset of " + dir_ + " to " +
                                               ToString(new_log_start_offset) +
                                               ", past the log end offset " +
                                               ToString(next_offset_));
  }
  RaiseLogStartOffset(new_log_start_offset);
  CheckInvariants();
  return Status::Ok();
}

Result<int> Log::DeleteSegmentsWhile(
    const std::function<bool(const LogSegment&, const LogSegment*)>& predicate,
    std::optional<Offset> high_watermark) {
  // The oldest segments for which the predicate holds, stopping at the first that fails it, at a
  // segment not wholly below the high watermark, or at an empty active segment.
  std::vector<Offset> deletable;
  for (auto it = segments_.begin(); it != segments_.end(); ++it) {
    auto next = std::next(it);
    const LogSegment* next_segment = next == segments_.end() ? nullptr : next->second.get();
    const Offset upper_bound = next_segment ? next->first : next_offset_;
    const bool last_and_empty = next_segment == nullptr && it->second->size() == 0;
    if (high_watermark && *high_watermark < upper_bound) break;
    if (last_and_empty || !predicate(*it->second, next_segment)) break;
    deletable.push_back(it->first);
  }
  if (deletable.empty()) return 0;
  // A log always keeps a segment: when all of them go, roll a new empty one first (0.10/1.x).
  if (deletable.size() == segments_.size()) KSIM_RETURN_IF_ERROR(Roll());
  for (Offset base : deletable) KSIM_RETURN_IF_ERROR(DeleteSegment(base));
  RaiseLogStartOffset(segments_.begin()->first);
  CheckInvariants();
  return static_cast<int>(deletable.size());
}

Result<int> Log::DeleteOldSegments(std::optional<Offset> high_watermark) {
  KSIM_RETURN_IF_ERROR(CheckOnline());
  KSIM_RETURN_IF_ERROR(CompletePendingDeletes());
  int deleted = 0;
  if (config_.DeleteEnabled() && config_.retention_ms >= 0) {
    const int64_t now_ms = clock_.NowMs();
    KSIM_ASSIGN_OR_RETURN(int by_time, DeleteSegmentsWhile(
                                           [&](const LogSegment& segment, const LogSegment*) {
                                             return now_ms - segment.LargestTimestampMs() >
                                                    config_.retention_ms;
                                           },
                                           high_watermark));
    deleted += by_time;
  }
  if (config_.DeleteEnabled() && config_.retention_bytes >= 0 &&
      size_in_bytes() >= static_cast<uint64_t>(config_.retention_bytes)) {
    int64_t excess = static_cast<int64_t>(size_in_bytes()) - config_.retention_bytes;
    KSIM_ASSIGN_OR_RETURN(int by_size, DeleteSegmentsWhile(
                                           [&](const LogSegment& segment, const LogSegment*) {
                                             const auto size = static_cast<int64_t>(segment.size());
                                             if (excess - size < 0) return false;
                                             excess -= size;
                                             return true;
                                           },
                                           high_watermark));
    deleted += by_size;
  }
  KSIM_ASSIGN_OR_RETURN(int by_start, DeleteSegmentsWhile(
                                          [&](const LogSegment&, const LogSegment* next) {
                                            return next != nullptr &&
                                                   next->base_offset() <= log_start_offset_;
                                          },
                                          high_watermark));
  deleted += by_start;
  return deleted;
}

// ---- Shutdown -----------------------------------------------------------------------------------

Status Log::Close() {
  if (closed_) return Status::Ok();
  KSIM_RETURN_IF_ERROR(CheckOnline());
  KSIM_RETURN_IF_ERROR(Flush());
  for (auto& [base, segment] : segments_) {
    Status closed = segment->Close();
    if (!closed.ok()) return Fail(closed);
  }
  closed_ = true;
  return Status::Ok();
}

Status Log::Delete() {
  for (auto& [base, segment] : segments_) segment.reset();
  segments_.clear();
  pending_deletes_.clear();
  closed_ = true;
  return RemoveTree(env_, dir_);
}

// ---- Accessors and checks -----------------------------------------------------------------------

uint64_t Log::size_in_bytes() const {
  uint64_t total = 0;
  for (const auto& [base, segment] : segments_) total += segment->size();
  return total;
}

std::vector<LogSegmentInfo> Log::Segments() const {
  std::vector<LogSegmentInfo> infos;
  for (const auto& [base, segment] : segments_) {
    LogSegmentInfo info;
    info.base_offset = base;
    info.next_offset = segment->next_offset();
    info.size_bytes = segment->size();
    info.active = base == segments_.rbegin()->first;
    info.log_path = segment->log_path();
    info.index_path = segment->index_path();
    info.time_index_path = segment->time_index_path();
    if (!closed_) {
      info.index_entries = segment->offset_index().entries();
      if (segment->has_time_index()) info.time_index_entries = segment->time_index().entries();
      info.largest_timestamp_ms = segment->LargestTimestampMs();
    }
    infos.push_back(std::move(info));
  }
  return infos;
}

std::vector<LogSegment*> Log::LogSegments() {
  std::vector<LogSegment*> segments;
  for (auto& [base, segment] : segments_) segments.push_back(segment.get());
  return segments;
}

LogSegment& Log::active_segment() {
  KSIM_CHECK(!segments_.empty());
  return *segments_.rbegin()->second;
}

Status Log::Fail(Status status) {
  KSIM_CHECK(!status.ok());
  if (!IsIoFailure(status)) return status;
  const bool was_online = storage_error_.ok();
  storage_error_ =
      Status(Errc::kKafkaStorageError, "log " + dir_ + " is offline after: " + status.ToString());
  if (was_online && observer_ != nullptr) observer_->OnOffline(storage_error_);
  return storage_error_;
}

Status Log::CheckOnline() const {
  if (!storage_error_.ok()) return storage_error_;
  if (closed_) return Status(Errc::kKafkaStorageError, "log " + dir_ + " is closed");
  return Status::Ok();
}

void Log::CheckInvariants() const {
  KSIM_CHECK(!segments_.empty());
  KSIM_CHECK(log_start_offset_ <= next_offset_);
  KSIM_CHECK(recovery_point_ <= next_offset_);
  // The active segment may start past the LEO only between a roll to a follower's first offset
  // and the append that follows it; it never holds offsets at or past the LEO.
  KSIM_CHECK(segments_.rbegin()->second->next_offset() <=
             std::max(next_offset_, segments_.rbegin()->first));
}

}  // namespace ksim
