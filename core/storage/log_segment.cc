// A log segment: .log file plus offset and time indexes. See core/storage/log_segment.h and
// docs/storage.md.
#include "core/storage/log_segment.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <utility>
#include <vector>

#include "core/base/big_endian.h"
#include "core/base/check.h"
#include "core/storage/file_batch_reader.h"

namespace ksim {
namespace {

Status RemoveIfExists(Env& env, const std::string& path) {
  if (!env.FileExists(path)) return Status::Ok();
  return env.RemoveFile(path);
}

// Kafka's "%020d": twenty digits, zero-padded (an int64's 19 at most always fit).
constexpr size_t kOffsetDigits = 20;

void AppendOffsetDigits(std::string& out, Offset offset) {
  KSIM_CHECK(offset >= Offset(0));
  out.append(kOffsetDigits, '0');
  uint64_t value = static_cast<uint64_t>(offset.value());
  for (size_t i = out.size(); value > 0; value /= 10)
    out[--i] = static_cast<char>('0' + value % 10);
}

std::string SegmentPath(const std::string& dir, Offset base, std::string_view extension,
                        std::string_view suffix) {
  // JoinPath(dir, FilenamePrefixFromOffset(base) + extension + suffix), built in place in one
  // allocation.
  const bool slash = !dir.empty() && dir.back() != '/';
  std::string path;
  path.reserve(dir.size() + slash + kOffsetDigits + extension.size() + suffix.size());
  path += dir;
  if (slash) path += '/';
  AppendOffsetDigits(path, base);
  path += extension;
  path += suffix;
  return path;
}

}  // namespace

std::string FilenamePrefixFromOffset(Offset offset) {
  std::string name;
  AppendOffsetDigits(name, offset);
  return name;
}

std::string LogFilePath(const std::string& dir, Offset base, std::string_view suffix) {
  return SegmentPath(dir, base, kLogFileSuffix, suffix);
}
std::string IndexFilePath(const std::string& dir, Offset base, std::string_view suffix) {
  return SegmentPath(dir, base, kIndexFileSuffix, suffix);
}
std::string TimeIndexFilePath(const std::string& dir, Offset base, std::string_view suffix) {
  return SegmentPath(dir, base, kTimeIndexFileSuffix, suffix);
}

std::optional<Offset> OffsetFromFileName(std::string_view name) {
  constexpr size_t kDigits = 20;
  if (name.size() <= kDigits || name[kDigits] != '.') return std::nullopt;
  uint64_t value = 0;
  for (size_t i = 0; i < kDigits; ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(name[i] - '0');
    if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  }
  return Offset(static_cast<int64_t>(value));
}

LogSegment::LogSegment(Env& env, const Clock& clock, const std::string& dir, Offset base_offset,
                       const LogConfig& config, std::string_view suffix)
    : env_(env),
      clock_(clock),
      base_offset_(base_offset),
      index_interval_bytes_(config.index_interval_bytes),
      max_index_size_bytes_(config.max_index_size_bytes),
      log_path_(LogFilePath(dir, base_offset, suffix)),
      index_path_(IndexFilePath(dir, base_offset, suffix)),
      time_index_path_(config.time_index ? TimeIndexFilePath(dir, base_offset, suffix) : ""),
      next_offset_(base_offset),
      offset_of_max_timestamp_(base_offset) {
  KSIM_CHECK(base_offset >= Offset(0));
  KSIM_CHECK(config.index_interval_bytes >= 0);
  created_ms_ = clock_.NowMs();
  last_modified_ms_ = created_ms_;
}

LogSegment::~LogSegment() = default;

Status LogSegment::OpenFiles(OpenMode log_mode) {
  KSIM_ASSIGN_OR_RETURN(log_, env_.OpenFile(log_path_, log_mode));
  size_ = log_->Size();
  indexes_missing_ =
      !env_.FileExists(index_path_) || (has_time_index() && !env_.FileExists(time_index_path_));
  KSIM_ASSIGN_OR_RETURN(offset_index_,
                        OffsetIndex::Open(env_, index_path_, base_offset_, max_index_size_bytes_));
  if (has_time_index()) {
    KSIM_ASSIGN_OR_RETURN(
        time_index_, TimeIndex::Open(env_, time_index_path_, base_offset_, max_index_size_bytes_));
  }
  return Status::Ok();
}

Result<std::unique_ptr<LogSegment>> LogSegment::Create(Env& env, const Clock& clock,
                                                       const std::string& dir, Offset base_offset,
                                                       const LogConfig& config,
                                                       std::string_view suffix) {
  std::unique_ptr<LogSegment> segment(new LogSegment(env, clock, dir, base_offset, config, suffix));
  KSIM_RETURN_IF_ERROR(RemoveIfExists(env, segment->index_path_));
  if (segment->has_time_index()) {
    KSIM_RETURN_IF_ERROR(RemoveIfExists(env, segment->time_index_path_));
  }
  KSIM_RETURN_IF_ERROR(segment->OpenFiles(OpenMode::kTruncate));
  KSIM_CHECK(segment->size_ == 0);
  segment->indexes_missing_ = false;
  segment->StartRecentAt(0);
  return segment;
}

Result<std::unique_ptr<LogSegment>> LogSegment::Open(Env& env, const Clock& clock,
                                                     const std::string& dir, Offset base_offset,
                                                     const LogConfig& config,
                                                     std::string_view suffix) {
  std::unique_ptr<LogSegment> segment(new LogSegment(env, clock, dir, base_offset, config, suffix));
  KSIM_RETURN_IF_ERROR(segment->OpenFiles(OpenMode::kOpenExisting));
  return segment;
}

int64_t LogSegment::LargestTimestampMs() const {
  // Kafka 0.10.0 retains by the file's last modification only (LogManager.cleanupExpiredSegments).
  if (!has_time_index()) return last_modified_ms_;
  return max_timestamp_so_far_ms_ >= 0 ? max_timestamp_so_far_ms_ : last_modified_ms_;
}

bool LogSegment::CanConvertToRelativeOffset(Offset offset) const {
  if (offset < base_offset_) return false;
  return offset - base_offset_ <= std::numeric_limits<int32_t>::max();
}

Status LogSegment::Append(Offset largest_offset, int64_t largest_timestamp_ms,
                          Offset offset_of_max_timestamp, ByteView records) {
  KSIM_CHECK(log_ != nullptr);
  if (records.empty()) return Status::Ok();
  KSIM_CHECK_MSG(CanConvertToRelativeOffset(largest_offset), "offset overflows the segment");
  KSIM_CHECK(largest_offset >= next_offset_);
  const uint64_t physical_position = size_;
  KSIM_CHECK_MSG(physical_position + records.size() <= std::numeric_limits<int32_t>::max(),
                 "segment larger than 2 GiB");
  if (physical_position == 0) rolling_based_timestamp_ms_ = largest_timestamp_ms;

  KSIM_RETURN_IF_ERROR(log_->Append(records));
  size_ += records.size();
  KSIM_CHECK(log_->Size() == size_);
  // The recent batches follow the .log file whatever becomes of the index entry below.
  if (bytes_since_last_index_entry_ > index_interval_bytes_) StartRecentAt(physical_position);
  NoteRecent(records, physical_position);
  if (largest_timestamp_ms > max_timestamp_so_far_ms_) {
    max_timestamp_so_far_ms_ = largest_timestamp_ms;
    offset_of_max_timestamp_ = offset_of_max_timestamp;
  }
  if (bytes_since_last_index_entry_ > index_interval_bytes_) {
    KSIM_RETURN_IF_ERROR(
        offset_index_->Append(largest_offset, static_cast<int32_t>(physical_position)));
    if (has_time_index()) {
      KSIM_RETURN_IF_ERROR(
          time_index_->MaybeAppend(max_timestamp_so_far_ms_, offset_of_max_timestamp_));
    }
    bytes_since_last_index_entry_ = 0;
  }
  bytes_since_last_index_entry_ += static_cast<int64_t>(records.size());
  next_offset_ = largest_offset + 1;
  last_modified_ms_ = clock_.NowMs();
  return Status::Ok();
}

Result<std::optional<BatchLocation>> LogSegment::TranslateOffset(Offset offset,
                                                                 uint64_t starting_position,
                                                                 uint64_t* bytes_scanned) const {
  KSIM_CHECK(log_ != nullptr);
  const OffsetPosition mapping = offset_index_->Lookup(offset);
  const uint64_t from =
      std::max<uint64_t>(static_cast<uint64_t>(mapping.position), starting_position);
  if (recent_from_ && from >= *recent_from_) return FindRecent(offset, from);
  FileBatchReader reader(*log_, from, size_, /*whole_batches=*/false);
  std::optional<BatchLocation> found;
  while (true) {
    KSIM_ASSIGN_OR_RETURN(bool more, reader.Next());
    if (!more) break;
    if (reader.header().last_offset() >= offset) {
      found = BatchLocation{reader.header().last_offset(), reader.position(), reader.size()};
      break;
    }
  }
  if (bytes_scanned != nullptr) *bytes_scanned += reader.bytes_read();
  if (!found && !reader.damage().ok()) return reader.damage();
  return found;
}

void LogSegment::NoteRecent(ByteView records, uint64_t position) {
  if (!recent_from_) return;
  BatchIterator batches(records, /*verify_crc=*/false);
  while (std::optional<BatchIterator::Item> batch = batches.Next()) {
    recent_.push_back(RecentOf(batch->header, position + batch->position));
  }
  // Not whole batches (the Log appends only verified ones): not known, scanned instead.
  if (!batches.status().ok() || batches.position() != records.size()) ForgetRecent();
}

std::optional<BatchLocation> LogSegment::FindRecent(Offset offset, uint64_t from) const {
  KSIM_CHECK(recent_from_ && from >= *recent_from_);
  // Positions and last offsets both rise along recent_: the batches before `from` or ending
  // below `offset` are a prefix of it.
  const auto it = std::partition_point(recent_.begin(), recent_.end(), [&](const RecentBatch& b) {
    return b.position < from || base_offset_ + b.last_offset_delta < offset;
  });
  if (it == recent_.end()) return std::nullopt;
  const uint64_t end = std::next(it) == recent_.end() ? size_ : std::next(it)->position;
  return BatchLocation{base_offset_ + it->last_offset_delta, it->position, end - it->position};
}

Result<std::optional<SegmentRead>> LogSegment::Read(Offset start_offset,
                                                    std::optional<Offset> max_offset,
                                                    int32_t max_size, uint64_t max_position,
                                                    bool min_one_message) const {
  KSIM_CHECK(max_size >= 0);
  KSIM_CHECK(log_ != nullptr);
  SegmentRead read;
  read.fetch_offset = start_offset;
  KSIM_ASSIGN_OR_RETURN(std::optional<BatchLocation> start,
                        TranslateOffset(start_offset, 0, &read.bytes_scanned));
  if (!start) return std::optional<SegmentRead>();
  read.position = start->position;
  const uint64_t adjusted_max_size =
      min_one_message ? std::max<uint64_t>(static_cast<uint64_t>(max_size), start->size)
                      : static_cast<uint64_t>(max_size);
  read.first_entry_incomplete = adjusted_max_size < start->size;
  if (adjusted_max_size == 0) return std::optional<SegmentRead>(std::move(read));

  uint64_t end = std::min(max_position, size_);
  if (max_offset) {
    // A bound such as the high watermark: stop before the batch holding it. A bound below the
    // start gives nothing (a new leader's high watermark can briefly lag its predecessor's).
    if (*max_offset < start_offset) {
      read.first_entry_incomplete = false;
      return std::optional<SegmentRead>(std::move(read));
    }
    KSIM_ASSIGN_OR_RETURN(std::optional<BatchLocation> bound,
                          TranslateOffset(*max_offset, start->position, &read.bytes_scanned));
    if (bound) end = std::min(end, bound->position);
  }
  const uint64_t fetch_size =
      end > start->position ? std::min(end - start->position, adjusted_max_size) : 0;
  read.records.resize(fetch_size);
  KSIM_ASSIGN_OR_RETURN(size_t got, log_->ReadAt(start->position, MutableByteView(read.records)));
  if (got != fetch_size) {
    return Status(Errc::kIoError,
                  "short read of " + log_path_ + " at " + std::to_string(start->position));
  }
  return std::optional<SegmentRead>(std::move(read));
}

Result<std::optional<TimestampOffset>> LogSegment::FindOffsetByTimestamp(
    int64_t timestamp_ms, Offset starting_offset) const {
  KSIM_CHECK(log_ != nullptr);
  // Without a time index (Kafka 0.10.0) the search scans the segment from the start offset.
  const Offset entry_offset =
      has_time_index() ? time_index_->Lookup(timestamp_ms).offset : base_offset_;
  const uint64_t from = static_cast<uint64_t>(
      offset_index_->Lookup(std::max(entry_offset, starting_offset)).position);
  FileBatchReader reader(*log_, from, size_, /*whole_batches=*/true);
  while (true) {
    KSIM_ASSIGN_OR_RETURN(bool more, reader.Next());
    if (!more) break;
    const BatchHeader& header = reader.header();
    if (header.max_timestamp < timestamp_ms || header.last_offset() < starting_offset) continue;
    KSIM_ASSIGN_OR_RETURN(std::vector<Record> records, DecodeRecords(reader.batch()));
    for (const Record& record : records) {
      if (record.timestamp_ms >= timestamp_ms && record.offset >= starting_offset) {
        return std::optional<TimestampOffset>(TimestampOffset{record.timestamp_ms, record.offset});
      }
    }
  }
  if (!reader.damage().ok()) return reader.damage();
  return std::optional<TimestampOffset>();
}

Result<BatchWalk> LogSegment::ForEachBatch(Offset from, const BatchVisitor& visit) const {
  KSIM_CHECK(log_ != nullptr);
  // From the first batch that reaches `from` (TranslateOffset: the recent batches, or a scan from
  // the index entry), not from the index entry: a walk that follows a growing log (the checker's,
  // from each new high watermark) read an index interval of batches again at every step.
  KSIM_ASSIGN_OR_RETURN(std::optional<BatchLocation> first, TranslateOffset(from));
  if (!first) return BatchWalk::kContinue;
  FileBatchReader reader(*log_, first->position, size_, /*whole_batches=*/false);
  while (true) {
    KSIM_ASSIGN_OR_RETURN(bool more, reader.Next());
    if (!more) break;
    if (reader.header().last_offset() < from) continue;
    KSIM_ASSIGN_OR_RETURN(BatchWalk next, visit(reader.header(), reader.position()));
    if (next == BatchWalk::kStop) return BatchWalk::kStop;
  }
  KSIM_RETURN_IF_ERROR(reader.damage());
  return BatchWalk::kContinue;
}

Result<uint64_t> LogSegment::TruncateTo(Offset offset) {
  KSIM_CHECK(log_ != nullptr);
  // Translate before truncating the index so that the scan starts from a nearby entry.
  KSIM_ASSIGN_OR_RETURN(std::optional<BatchLocation> mapping, TranslateOffset(offset));
  ForgetRecent();  // LoadFromIndexes lists them again
  offset_index_->TruncateTo(offset);
  if (has_time_index()) time_index_->TruncateTo(offset);
  // The segment may be the active one again: give its indexes room to grow.
  KSIM_RETURN_IF_ERROR(ResizeIndexes(max_index_size_bytes_));
  uint64_t truncated = 0;
  if (mapping) {
    truncated = size_ - mapping->position;
    KSIM_RETURN_IF_ERROR(log_->Truncate(mapping->position));
    size_ = mapping->position;
  }
  if (size_ == 0) {
    created_ms_ = clock_.NowMs();
    rolling_based_timestamp_ms_.reset();
  }
  bytes_since_last_index_entry_ = 0;
  KSIM_RETURN_IF_ERROR(LoadFromIndexes());
  KSIM_CHECK(next_offset_ <= std::max(offset, base_offset_));
  return truncated;
}

Status LogSegment::SanityCheck() const {
  KSIM_RETURN_IF_ERROR(offset_index_->SanityCheck(size_));
  if (!has_time_index()) return Status::Ok();
  KSIM_RETURN_IF_ERROR(time_index_->SanityCheck());
  const TimestampOffset last_time_entry = time_index_->last_entry();
  if (time_index_->entries() > 0 && !CanConvertToRelativeOffset(last_time_entry.offset)) {
    return Status(Errc::kCorruption, "time index " + time_index_path_ + " ends past the segment");
  }
  return Status::Ok();
}

Status LogSegment::LoadFromIndexes() {
  KSIM_CHECK(log_ != nullptr);
  ForgetRecent();  // until the scan below lists them
  // Without a time index the scan starts at the offset index's last entry.
  const TimestampOffset last_time_entry =
      has_time_index() ? time_index_->last_entry()
                       : TimestampOffset{kNoTimestamp, offset_index_->last_offset()};
  max_timestamp_so_far_ms_ = last_time_entry.timestamp_ms;
  offset_of_max_timestamp_ = last_time_entry.offset;
  // The last time-index entry is at or before the last offset-index entry's append, or after it
  // (the entry written at roll/close); the lookup below is at or before both.
  const uint64_t from =
      static_cast<uint64_t>(offset_index_->Lookup(last_time_entry.offset).position);
  if (from > size_) {
    return Status(Errc::kCorruption, "index of " + log_path_ + " points past the end of the log");
  }
  // The scan passes the batches from the last offset-index entry on: the recent ones.
  const uint64_t recent_from = std::max<uint64_t>(
      from,
      offset_index_->entries() == 0
          ? 0
          : static_cast<uint64_t>(offset_index_->EntryAt(offset_index_->entries() - 1).position));
  std::vector<RecentBatch> recent;
  FileBatchReader reader(*log_, from, size_, /*whole_batches=*/false);
  Offset next = base_offset_;
  bool any = false;
  while (true) {
    KSIM_ASSIGN_OR_RETURN(bool more, reader.Next());
    if (!more) break;
    const BatchHeader& header = reader.header();
    if (header.base_offset < base_offset_ || (any && header.base_offset < next)) {
      return Status(Errc::kCorruption, "offsets go backwards at position " +
                                           std::to_string(reader.position()) + " in " + log_path_);
    }
    if (reader.position() >= recent_from) {
      recent.push_back(RecentOf(header, reader.position()));
    }
    any = true;
    next = header.next_offset();
    if (header.max_timestamp > max_timestamp_so_far_ms_) {
      max_timestamp_so_far_ms_ = header.max_timestamp;
      offset_of_max_timestamp_ = header.last_offset();
    }
  }
  if (!reader.damage().ok()) return reader.damage();
  if (reader.partial()) {
    return Status(Errc::kCorruption, "torn batch at the end of " + log_path_);
  }
  if (!CanConvertToRelativeOffset(next - 1) && next != base_offset_) {
    return Status(Errc::kCorruption, "offsets out of range in " + log_path_);
  }
  if (from > 0 && !any) {
    return Status(Errc::kCorruption, "index of " + log_path_ + " points past its last batch");
  }
  next_offset_ = next;
  recent_ = std::move(recent);
  recent_from_ = recent_from;
  return Status::Ok();
}

Result<SegmentRecovery> LogSegment::Recover() {
  KSIM_CHECK(log_ != nullptr);
  ForgetRecent();  // until the scan below lists them
  KSIM_RETURN_IF_ERROR(offset_index_->Reset());
  if (has_time_index()) KSIM_RETURN_IF_ERROR(time_index_->Reset());
  SegmentRecovery recovery;
  int64_t max_timestamp = kNoTimestamp;
  Offset offset_of_max_timestamp = base_offset_;
  uint64_t last_index_entry = 0;
  std::vector<RecentBatch> recent;  // the valid batches from last_index_entry on
  std::optional<Offset> previous_last;
  FileBatchReader reader(*log_, 0, size_, /*whole_batches=*/true);
  while (true) {
    KSIM_ASSIGN_OR_RETURN(bool more, reader.Next());
    if (!more) {
      if (!reader.damage().ok()) recovery.damage = reader.damage();
      if (reader.partial()) {
        recovery.damage = Status(Errc::kCorruption,
                                 "torn batch at position " + std::to_string(reader.position()));
      }
      break;
    }
    const BatchHeader& header = reader.header();
    const uint64_t position = reader.position();
    Status valid = VerifyBatch(reader.batch());
    if (valid.ok() &&
        (header.base_offset < base_offset_ || !CanConvertToRelativeOffset(header.last_offset()))) {
      valid =
          Status(Errc::kCorruption, "offsets " + ToString(header.base_offset) + ".." +
                                        ToString(header.last_offset()) +
                                        " do not fit a segment based at " + ToString(base_offset_));
    }
    // Offsets must increase; a gap is no damage: a truncation into a batch cuts the whole batch
    // and the log then continues from the target (Kafka's Log.truncateTo), leaving offsets
    // between the two unheld. An overlap is damage, e.g. in baseOffset, which lies outside the
    // CRC.
    if (valid.ok() && previous_last && header.base_offset <= *previous_last) {
      valid = Status(Errc::kCorruption, "offset " + ToString(header.base_offset) +
                                            " does not follow " + ToString(*previous_last));
    }
    if (valid.ok() && position + reader.size() > std::numeric_limits<int32_t>::max()) {
      valid = Status(Errc::kCorruption, "segment grows past 2 GiB");
    }
    if (!valid.ok()) {
      recovery.damage = Status(Errc::kCorruption, "batch at position " + std::to_string(position) +
                                                      ": " + valid.message());
      break;
    }
    if (header.max_timestamp > max_timestamp) {
      max_timestamp = header.max_timestamp;
      offset_of_max_timestamp = header.last_offset();
    }
    if (position - last_index_entry > static_cast<uint64_t>(index_interval_bytes_) &&
        !offset_index_->IsFull() && !TimeIndexFull()) {
      KSIM_RETURN_IF_ERROR(
          offset_index_->Append(header.last_offset(), static_cast<int32_t>(position)));
      if (has_time_index()) {
        KSIM_RETURN_IF_ERROR(time_index_->MaybeAppend(max_timestamp, offset_of_max_timestamp));
      }
      last_index_entry = position;
      recent.clear();
    }
    recent.push_back(RecentOf(header, position));
    recovery.valid_bytes = position + reader.size();
    ++recovery.batches;
    previous_last = header.last_offset();
  }
  recovery.truncated_bytes = size_ - recovery.valid_bytes;
  if (recovery.truncated_bytes > 0) {
    KSIM_RETURN_IF_ERROR(log_->Truncate(recovery.valid_bytes));
    size_ = recovery.valid_bytes;
  }
  KSIM_RETURN_IF_ERROR(offset_index_->TrimToValidSize());
  // As a normally closed segment does, end the time index with the largest timestamp.
  if (has_time_index()) {
    if (time_index_->entries() < time_index_->max_entries()) {
      KSIM_RETURN_IF_ERROR(time_index_->MaybeAppend(max_timestamp, offset_of_max_timestamp,
                                                    /*skip_full_check=*/true));
    }
    KSIM_RETURN_IF_ERROR(time_index_->TrimToValidSize());
  }
  max_timestamp_so_far_ms_ = max_timestamp;
  offset_of_max_timestamp_ = offset_of_max_timestamp;
  next_offset_ = previous_last ? *previous_last + 1 : base_offset_;
  bytes_since_last_index_entry_ = static_cast<int64_t>(recovery.valid_bytes - last_index_entry);
  rolling_based_timestamp_ms_.reset();
  indexes_missing_ = false;
  recent_ = std::move(recent);
  recent_from_ = last_index_entry;
  return recovery;
}

Result<std::optional<BatchHeader>> LogSegment::ReadFirstBatchHeader() const {
  FileBatchReader reader(*log_, 0, size_, /*whole_batches=*/false);
  KSIM_ASSIGN_OR_RETURN(bool found, reader.Next());
  if (!found) {
    if (!reader.damage().ok()) return reader.damage();
    return std::optional<BatchHeader>();
  }
  return std::optional<BatchHeader>(reader.header());
}

Result<int64_t> LogSegment::TimeWaitedForRollMs(int64_t now_ms, int64_t message_timestamp_ms) {
  // Kafka 0.10.0 rolls by the segment's age only (Log.maybeRoll: now - segment.created).
  if (!has_time_index()) return now_ms - created_ms_;
  if (!rolling_based_timestamp_ms_ && size_ > 0) {
    KSIM_ASSIGN_OR_RETURN(std::optional<BatchHeader> first, ReadFirstBatchHeader());
    if (first) rolling_based_timestamp_ms_ = first->max_timestamp;
  }
  if (rolling_based_timestamp_ms_ && *rolling_based_timestamp_ms_ >= 0) {
    // Timestamps come from producers: any int64 is possible, so saturate rather than overflow.
    int64_t waited = 0;
    if (__builtin_sub_overflow(message_timestamp_ms, *rolling_based_timestamp_ms_, &waited)) {
      waited = std::numeric_limits<int64_t>::min();
    }
    return waited;
  }
  return now_ms - created_ms_;
}

Result<bool> LogSegment::ShouldRoll(const RollParams& params) {
  KSIM_ASSIGN_OR_RETURN(int64_t waited,
                        TimeWaitedForRollMs(params.now_ms, params.max_timestamp_in_messages_ms));
  const bool reached_roll_ms = waited > params.max_segment_ms;
  return static_cast<int64_t>(size_) > params.max_segment_bytes - params.messages_size ||
         (size_ > 0 && reached_roll_ms) || offset_index_->IsFull() || TimeIndexFull() ||
         !CanConvertToRelativeOffset(params.max_offset_in_messages);
}

Status LogSegment::Flush() {
  KSIM_CHECK(log_ != nullptr);
  KSIM_RETURN_IF_ERROR(log_->Sync());
  KSIM_RETURN_IF_ERROR(offset_index_->Flush());
  return has_time_index() ? time_index_->Flush() : Status::Ok();
}

Status LogSegment::ResizeIndexes(int64_t size) {
  KSIM_RETURN_IF_ERROR(offset_index_->Resize(size));
  return has_time_index() ? time_index_->Resize(size) : Status::Ok();
}

Status LogSegment::OnBecomeInactive() {
  KSIM_CHECK(log_ != nullptr);
  // Appends are over: reads of it scan from the index (its memory is given back).
  ForgetRecent();
  if (!has_time_index()) return offset_index_->TrimToValidSize();
  if (time_index_->entries() < time_index_->max_entries()) {
    KSIM_RETURN_IF_ERROR(time_index_->MaybeAppend(max_timestamp_so_far_ms_,
                                                  offset_of_max_timestamp_,
                                                  /*skip_full_check=*/true));
  }
  KSIM_RETURN_IF_ERROR(offset_index_->TrimToValidSize());
  return time_index_->TrimToValidSize();
}

Status LogSegment::Close() {
  if (log_ == nullptr) return Status::Ok();
  // Like Kafka's FileRecords.close, closing flushes: whatever happened to the files (appends,
  // truncation, trimmed indexes) is durable afterwards.
  Status status = OnBecomeInactive();
  if (status.ok()) status = Flush();
  time_index_.reset();
  offset_index_.reset();
  log_.reset();
  return status;
}

Result<std::vector<std::string>> LogSegment::CloseAndRenameForDeletion() {
  time_index_.reset();
  offset_index_.reset();
  log_.reset();
  std::vector<std::string> renamed;
  for (const std::string* path : {&log_path_, &index_path_, &time_index_path_}) {
    if (path->empty() || !env_.FileExists(*path)) continue;
    const std::string target = *path + std::string(kDeletedFileSuffix);
    KSIM_RETURN_IF_ERROR(env_.RenameFile(*path, target));
    renamed.push_back(target);
  }
  return renamed;
}

}  // namespace ksim
