// LogSegment: one segment of a partition's log, after Kafka's kafka.log.LogSegment. A segment
// is three files in the partition directory, named for the segment's base offset (the first
// offset it may hold) zero-padded to 20 digits:
//
//   00000000000000368769.log        record batches (v2), back to back, as received
//   00000000000000368769.index      sparse offset index (core/storage/offset_index.h)
//   00000000000000368769.timeindex  time index (core/storage/time_index.h)
//
// Appends go to the end of the .log file; an offset-index entry (and a time-index entry when the
// max timestamp grew) is added when more than index.interval.bytes were appended since the last
// one. A read finds its start position by an index lookup and a short forward scan over batch
// headers; the batches appended since the last index entry are also listed in memory (where each
// starts and its last offset), so that a read of recent records, the common one, scans nothing.
// Every offset in a segment fits in an int32 relative to the base offset.
//
// Ownership: the segment owns its File and both indexes. Nothing is durable until Flush(). A
// segment is used from one thread. Damage found while reading the .log file is returned as
// kCorruption, never asserted; Recover() rebuilds the indexes from the .log file and cuts it at
// the first batch that is torn, fails its CRC or has offsets out of order or out of range.
// Formats and the recovery procedure: docs/storage.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/check.h"
#include "core/base/clock.h"
#include "core/base/status.h"
#include "core/base/types.h"
#include "core/config/log_config.h"
#include "core/env/env.h"
#include "core/record/record_batch.h"
#include "core/storage/offset_index.h"
#include "core/storage/time_index.h"

namespace ksim {

// File name suffixes, as Kafka's Log object defines them.
inline constexpr std::string_view kLogFileSuffix = ".log";
inline constexpr std::string_view kIndexFileSuffix = ".index";
inline constexpr std::string_view kTimeIndexFileSuffix = ".timeindex";
inline constexpr std::string_view kDeletedFileSuffix = ".deleted";
inline constexpr std::string_view kCleanedFileSuffix = ".cleaned";
inline constexpr std::string_view kSwapFileSuffix = ".swap";

// "00000000000000368769": the base offset zero-padded to 20 digits. REQUIRES: offset >= 0.
std::string FilenamePrefixFromOffset(Offset offset);
// dir/<prefix>.log (+ extra suffix such as ".swap"), and the same for the two indexes.
std::string LogFilePath(const std::string& dir, Offset base, std::string_view suffix = "");
std::string IndexFilePath(const std::string& dir, Offset base, std::string_view suffix = "");
std::string TimeIndexFilePath(const std::string& dir, Offset base, std::string_view suffix = "");
// The base offset of a segment file name ("00000000000000368769.log" -> 368769): 20 digits then
// a '.', or nullopt for any other name.
std::optional<Offset> OffsetFromFileName(std::string_view name);

// Where a batch lies in the .log file (Kafka's LogOffsetPosition).
struct BatchLocation {
  Offset last_offset{0};
  uint64_t position = 0;
  uint64_t size = 0;
};

// What a segment read returns (the segment part of Kafka's FetchDataInfo).
struct SegmentRead {
  Offset fetch_offset{0};               // the offset asked for
  uint64_t position = 0;                // where `records` start in the .log file
  Bytes records;                        // whole batches, except possibly a cut-off last one
  bool first_entry_incomplete = false;  // max_size was smaller than the first batch
  uint64_t bytes_scanned = 0;           // .log bytes read to find the start (index + scan cost;
                                        // none for a recent batch)
};

// Inputs of the roll decision (Kafka's RollParams).
struct RollParams {
  int64_t max_segment_ms = 0;
  int64_t max_segment_bytes = 0;
  int64_t max_timestamp_in_messages_ms = kNoTimestamp;
  Offset max_offset_in_messages{0};
  int64_t messages_size = 0;
  int64_t now_ms = 0;
};

// What Recover() found.
struct SegmentRecovery {
  uint64_t valid_bytes = 0;
  uint64_t truncated_bytes = 0;  // bytes cut off at the first damaged batch
  int64_t batches = 0;
  Status damage;  // why the cut was made (ok when nothing was cut)
};

// What a batch visitor asks of ForEachBatch after each batch: go on, or end the walk there (a
// search that found what it looked for). Stopping is not an error.
enum class BatchWalk : uint8_t { kContinue, kStop };

class LogSegment {
 public:
  // Sees one batch header and its position in the .log file; an error ends the walk with it.
  using BatchVisitor =
      std::function<Result<BatchWalk>(const BatchHeader& header, uint64_t position)>;

  // Creates an empty segment: a new .log file and preallocated indexes. Files left over under
  // the same names are replaced.
  static Result<std::unique_ptr<LogSegment>> Create(Env& env, const Clock& clock,
                                                    const std::string& dir, Offset base_offset,
                                                    const LogConfig& config,
                                                    std::string_view suffix = "");
  // Opens a segment whose .log file exists. Indexes are opened when present (created empty when
  // missing: indexes_missing() then says a rebuild is due). Before use the caller either
  // Recover()s the segment or checks it with SanityCheck() and LoadFromIndexes().
  static Result<std::unique_ptr<LogSegment>> Open(Env& env, const Clock& clock,
                                                  const std::string& dir, Offset base_offset,
                                                  const LogConfig& config,
                                                  std::string_view suffix = "");
  ~LogSegment();
  LogSegment(const LogSegment&) = delete;
  LogSegment& operator=(const LogSegment&) = delete;

  Offset base_offset() const { return base_offset_; }
  // Bytes in the .log file.
  uint64_t size() const { return size_; }
  // One past the last offset held, or the base offset when empty.
  Offset next_offset() const { return next_offset_; }
  bool indexes_missing() const { return indexes_missing_; }
  const std::string& log_path() const { return log_path_; }
  const std::string& index_path() const { return index_path_; }
  // Whether the segment keeps a .timeindex (LogConfig::time_index: from Kafka 0.10.1, KIP-33).
  // Without one, time_index_path() is empty and time_index() may not be called.
  bool has_time_index() const { return !time_index_path_.empty(); }
  const std::string& time_index_path() const { return time_index_path_; }
  const OffsetIndex& offset_index() const { return *offset_index_; }
  OffsetIndex& offset_index() { return *offset_index_; }
  // REQUIRES: has_time_index().
  const TimeIndex& time_index() const {
    KSIM_CHECK(time_index_ != nullptr);
    return *time_index_;
  }
  TimeIndex& time_index() {
    KSIM_CHECK(time_index_ != nullptr);
    return *time_index_;
  }
  // The greatest record timestamp, or (without any) when the segment was last appended to or
  // opened; what time-based retention compares (Kafka's largestTimestamp, whose fallback is the
  // file's mtime).
  int64_t LargestTimestampMs() const;
  bool CanConvertToRelativeOffset(Offset offset) const;
  // When the segment was last appended to, created or opened (ksim's stand-in for the
  // file's mtime, Kafka 0.10.0's LogSegment.lastModified).
  int64_t last_modified_ms() const { return last_modified_ms_; }

  // Appends `records` (whole batches whose offsets are already set). REQUIRES: the offsets are
  // greater than next_offset() - 1 and fit relative to the base (the Log rolls first).
  Status Append(Offset largest_offset, int64_t largest_timestamp_ms, Offset offset_of_max_timestamp,
                ByteView records);

  // Reads from the first batch holding an offset >= `start_offset`, at most `max_size` bytes
  // (at least the first batch when `min_one_message`), not past `max_position`, and ending before
  // the batch holding `max_offset` when given. nullopt when no batch holds an offset >=
  // `start_offset`. REQUIRES: max_size >= 0.
  Result<std::optional<SegmentRead>> Read(Offset start_offset, std::optional<Offset> max_offset,
                                          int32_t max_size, uint64_t max_position,
                                          bool min_one_message) const;
  Result<std::optional<SegmentRead>> Read(Offset start_offset, std::optional<Offset> max_offset,
                                          int32_t max_size) const {
    return Read(start_offset, max_offset, max_size, size_, false);
  }
  // The first batch whose last offset is >= `offset`, searched from `starting_position` on (in
  // the recent batches when they cover it, else by a scan of the .log file).
  Result<std::optional<BatchLocation>> TranslateOffset(Offset offset,
                                                       uint64_t starting_position = 0,
                                                       uint64_t* bytes_scanned = nullptr) const;
  // The first record with timestamp >= `timestamp_ms` and offset >= `starting_offset`.
  Result<std::optional<TimestampOffset>> FindOffsetByTimestamp(int64_t timestamp_ms,
                                                               Offset starting_offset) const;
  // Calls `visit` for each batch header from the batch holding `from` on (headers only, no CRC),
  // until it asks to stop. kStop when it did, kContinue when the segment ran out.
  Result<BatchWalk> ForEachBatch(Offset from, const BatchVisitor& visit) const;

  // Removes every batch holding an offset >= `offset` (the whole batch that holds `offset`),
  // the index entries for them, and grows the indexes back to their maximum. Returns the bytes
  // removed.
  Result<uint64_t> TruncateTo(Offset offset);

  // Checks both indexes against each other's format and the .log size (SanityCheck of each).
  Status SanityCheck() const;
  // After a passing SanityCheck: finds next_offset() and the largest timestamp by scanning the
  // .log file from the last index entries (Kafka's loadLargestTimestamp / readNextOffset).
  // kCorruption when that tail does not parse.
  Status LoadFromIndexes();
  // Rebuilds both indexes from the .log file, verifying every batch (CRC, records, offsets in
  // order and in range); cuts the file at the first damaged or torn batch. I/O errors are
  // returned; damage is reported in the result.
  Result<SegmentRecovery> Recover();

  // Kafka's shouldRoll: the append of `params` would overflow the segment size, the segment is
  // older than segment.ms (and not empty), an index is full, or the offsets do not fit.
  Result<bool> ShouldRoll(const RollParams& params);
  // How long the segment has waited for a time-based roll: from the first batch's timestamp
  // when it has one, else from the segment's creation (or its last truncation to empty).
  Result<int64_t> TimeWaitedForRollMs(int64_t now_ms, int64_t message_timestamp_ms);

  // Makes the .log file and both indexes durable.
  Status Flush();
  // Resizes both index files (to their maximum when a segment becomes active again).
  Status ResizeIndexes(int64_t size);
  // When the segment stops being the active one: adds the final time-index entry and trims both
  // indexes to their entries.
  Status OnBecomeInactive();
  // OnBecomeInactive, Flush (durable like Kafka's FileRecords.close), then closes the files. The
  // segment is unusable afterwards.
  Status Close();
  // Closes the files (without trimming) and renames all three to <name><suffix>.deleted. Returns
  // the new paths of the files that existed. The segment is unusable afterwards.
  Result<std::vector<std::string>> CloseAndRenameForDeletion();

 private:
  LogSegment(Env& env, const Clock& clock, const std::string& dir, Offset base_offset,
             const LogConfig& config, std::string_view suffix);
  Status OpenFiles(OpenMode log_mode);
  Result<std::optional<BatchHeader>> ReadFirstBatchHeader() const;
  bool TimeIndexFull() const { return time_index_ != nullptr && time_index_->IsFull(); }
  // The recent batches (recent_) start anew at `position`, none listed yet.
  void StartRecentAt(uint64_t position) {
    recent_.clear();
    recent_from_ = position;
  }
  // The recent batches are not known (TranslateOffset scans); their memory is given back.
  void ForgetRecent() {
    recent_from_.reset();
    std::vector<RecentBatch>().swap(recent_);
  }
  // Lists the batches of `records`, appended at `position`, after the recent ones (when known).
  void NoteRecent(ByteView records, uint64_t position);
  // Where recent_ says the first batch with last offset >= `offset` at or after `from` is.
  // REQUIRES: recent_from_ <= from.
  std::optional<BatchLocation> FindRecent(Offset offset, uint64_t from) const;

  Env& env_;
  const Clock& clock_;
  Offset base_offset_;
  int32_t index_interval_bytes_;
  int64_t max_index_size_bytes_;
  std::string log_path_;
  std::string index_path_;
  std::string time_index_path_;

  std::unique_ptr<File> log_;
  std::unique_ptr<OffsetIndex> offset_index_;
  std::unique_ptr<TimeIndex> time_index_;
  bool indexes_missing_ = false;

  uint64_t size_ = 0;
  Offset next_offset_{0};
  int64_t bytes_since_last_index_entry_ = 0;
  int64_t max_timestamp_so_far_ms_ = kNoTimestamp;
  Offset offset_of_max_timestamp_{0};
  // The first batch's max timestamp once known (Kafka's rollingBasedTimestamp).
  std::optional<int64_t> rolling_based_timestamp_ms_;
  int64_t created_ms_ = 0;
  int64_t last_modified_ms_ = 0;

  // Every batch at or after recent_from_ in the .log file, in order: what TranslateOffset's scan
  // would find there, kept in memory. They start anew at each offset-index entry, so that they are
  // at most an index interval's worth (and each lookup past the last entry finds its batch here).
  // Filled by appends and by the scans that open, recover and truncate a segment; dropped when the
  // segment becomes inactive (nullopt: not known, TranslateOffset scans).
  struct RecentBatch {
    int32_t last_offset_delta;  // from base_offset_
    uint32_t position;
  };
  RecentBatch RecentOf(const BatchHeader& header, uint64_t position) const {
    return RecentBatch{static_cast<int32_t>(header.last_offset() - base_offset_),
                       static_cast<uint32_t>(position)};
  }
  std::vector<RecentBatch> recent_;
  std::optional<uint64_t> recent_from_;
};

}  // namespace ksim
