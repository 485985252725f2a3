// Log: one partition's log on disk, after Kafka's kafka.log.Log (0.10 / 1.x semantics). It is
// the directory `<topic>-<partition>/` holding segments (core/storage/log_segment.h) ordered by
// base offset; the last one is the active segment that takes appends. The Log assigns offsets to a
// leader's appends, takes a follower's appends with their offsets, serves reads by offset,
// rolls segments (size, age, full index, offsets that no longer fit), truncates (a follower
// catching up with a new leader), deletes old segments (retention by time, size and log start
// offset), flushes (fsync up to an offset, which moves the recovery point), and recovers after a
// crash on open.
//
// Offsets, with log start offset <= log end offset (LEO) and recovery point <= LEO checked after
// each change: records below the log start offset are gone for readers; everything below the
// recovery point was flushed (or verified on open); LEO is the offset the next record gets.
//
// Ownership and threads: the Log owns its segments and their files; the Env and Clock are
// borrowed and must outlive it. One thread at a time (the broker's, or the simulator's). Errors
// are values: Kafka's codes for what a client or replica can cause (OFFSET_OUT_OF_RANGE,
// CORRUPT_MESSAGE, MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE), local ones otherwise. An I/O error
// while changing the log takes it offline: every later call returns KAFKA_STORAGE_ERROR until the
// log is reopened (which recovers it), as Kafka marks a failed log directory offline.
//
// Crash behaviour: nothing is durable until flushed (Flush, roll, Close, or flush.messages /
// flush.ms); a crash is the Log being destroyed without Close(). Open() then verifies every
// segment from the recovery point on and cuts the log at the first torn or corrupt batch,
// deleting later segments; nothing valid before the damage is dropped. The recovery procedure
// and the on-disk formats are in docs/storage.md.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/clock.h"
#include "core/base/status.h"
#include "core/base/types.h"
#include "core/config/log_config.h"
#include "core/env/env.h"
#include "core/record/record_batch.h"
#include "core/storage/log_segment.h"

namespace ksim {

// Whether `status` is the disk failing: EIO, ENOSPC, a file missing or present against the log's
// own bookkeeping (Kafka's IOException, which takes the log directory offline), or
// KAFKA_STORAGE_ERROR (a log already offline). Corruption and protocol errors are not.
bool IsStorageFailure(const Status& status);

// What an append did (Kafka's LogAppendInfo).
struct LogAppendInfo {
  Offset first_offset{0};  // offset of the first record appended (LEO when nothing was)
  Offset last_offset{-1};  // offset of the last record appended
  int64_t max_timestamp_ms = kNoTimestamp;
  Offset offset_of_max_timestamp{-1};  // last offset of the batch holding the max timestamp
  int32_t num_batches = 0;
  int64_t num_records = 0;  // offsets covered (lastOffsetDelta + 1 per batch)
  int64_t valid_bytes = 0;  // bytes appended (a partial batch at the end is dropped)
};

// What a read returns (Kafka's FetchDataInfo).
struct FetchDataInfo {
  Offset fetch_offset{0};               // the offset asked for
  Offset segment_base_offset{0};        // segment the records come from (the active one when empty)
  uint64_t position = 0;                // where they start in that segment's .log file
  Bytes records;                        // whole batches, except possibly a cut-off last one
  bool first_entry_incomplete = false;  // max_bytes was smaller than the first batch
  uint64_t bytes_scanned = 0;           // .log bytes read to locate the start
};

// A segment as a tool sees it (`ksim dump-log`, the viewer).
struct LogSegmentInfo {
  Offset base_offset{0};
  Offset next_offset{0};
  uint64_t size_bytes = 0;
  size_t index_entries = 0;
  size_t time_index_entries = 0;
  int64_t largest_timestamp_ms = kNoTimestamp;
  bool active = false;
  std::string log_path;
  std::string index_path;
  std::string time_index_path;
};

// What the caller knows from its checkpoint files (Kafka's LogManager keeps
// recovery-point-offset-checkpoint and log-start-offset-checkpoint per log directory).
struct LogOpenOptions {
  // Segments from the one holding this offset on are verified batch by batch; 0 verifies all.
  Offset recovery_point{0};
  Offset log_start_offset{0};
};

// What Open() found and did.
struct LogRecoveryReport {
  int64_t segments_loaded = 0;
  int64_t segments_recovered = 0;        // verified batch by batch, indexes rebuilt
  int64_t indexes_rebuilt = 0;           // of segments below the recovery point: missing or corrupt
  uint64_t bytes_truncated = 0;          // torn or corrupt tails cut off
  std::vector<Offset> segments_deleted;  // segments after the damage
  // Segments wholly below the log start offset, deleted before recovery.
  std::vector<Offset> segments_below_log_start_deleted;
  int64_t leftover_files_removed = 0;  // .deleted, .cleaned, orphan indexes
  int64_t swaps_completed = 0;
  Status first_damage;  // the first damage found, ok when none
};

// Hooks for state derived from the log: the leader-epoch cache (KIP-101: epoch -> its first
// offset, updated on every append, cut back on truncation, trimmed at the log start) and producer
// state for idempotence (KIP-98: per producer the last sequences, snapshotted at each roll and
// rebuilt after a crash by replaying batches with ForEachBatch). The Log calls the observer after
// each change it makes; every method has an empty default.
class LogObserver {
 public:
  virtual ~LogObserver() = default;
  // Each batch appended (leader or follower), in offset order, after it is in the segment.
  virtual void OnAppend(const BatchHeader& batch) {}
  // The log was cut back so that its end offset is now `end_offset`.
  virtual void OnTruncateTo(Offset end_offset) {}
  // Every segment was deleted; the log restarts empty at `start_offset`.
  virtual void OnTruncateFullyAndStartAt(Offset start_offset) {}
  // The log start offset rose (retention, or an explicit increment).
  virtual void OnLogStartOffsetIncremented(Offset log_start_offset) {}
  // A new active segment starts at `base_offset`.
  virtual void OnRoll(Offset base_offset) {}
  // An I/O error took the log offline (`error` is its KAFKA_STORAGE_ERROR); called once.
  virtual void OnOffline(const Status& error) {}
};

class Log {
 public:
  // ListOffsets' special timestamps (Kafka's ListOffsetRequest.EARLIEST/LATEST_TIMESTAMP).
  static constexpr int64_t kEarliestTimestamp = -2;
  static constexpr int64_t kLatestTimestamp = -1;

  // Opens (creating when missing) the log in `dir` and recovers it: removes leftovers, completes
  // interrupted swaps, rebuilds missing or corrupt indexes, verifies segments from the recovery
  // point on. The recovery point afterwards is the log end offset (everything was verified and
  // is flushed).
  static Result<std::unique_ptr<Log>> Open(Env& env, const Clock& clock, std::string dir,
                                           const LogConfig& config,
                                           const LogOpenOptions& options = {});
  ~Log();
  Log(const Log&) = delete;
  Log& operator=(const Log&) = delete;

  // Appends a producer's batches as the leader: verifies each (CRC, records, max.message.bytes:
  // MESSAGE_TOO_LARGE; damage: CORRUPT_MESSAGE), then stamps in place offsets from the LEO on and
  // `leader_epoch` into every batch (outside the CRC), and appends. A partial batch at the end is
  // dropped. RECORD_LIST_TOO_LARGE when the batches exceed segment.bytes. Batches in another
  // format than the log's message.format.version are first re-encoded in it (ConvertBatches;
  // an idempotent or transactional batch for v0/v1 is UNSUPPORTED_FOR_MESSAGE_FORMAT), and the
  // caller's batches are then stamped with the offsets their records got. v0/v1 entries carry
  // no leader epoch.
  Result<LogAppendInfo> AppendAsLeader(MutableByteView batches, LeaderEpoch leader_epoch);
  // Appends batches fetched from the leader, offsets as they are: CORRUPT_MESSAGE on damage,
  // OFFSETS_OUT_OF_ORDER when they do not increase, UNEXPECTED_APPEND_OFFSET when the first is
  // below the LEO. Gaps are fine. A partial batch at the end is dropped.
  Result<LogAppendInfo> AppendAsFollower(ByteView batches);

  // Reads from the first batch holding an offset >= `start_offset`: at most `max_bytes` (at
  // least one batch when `min_one_message`), stopping before the batch holding `max_offset`
  // (e.g. the high watermark). A read at a gap continues in the next segment; a read at the LEO
  // gives nothing; below the log start offset or past the LEO is OFFSET_OUT_OF_RANGE.
  Result<FetchDataInfo> Read(Offset start_offset, int32_t max_bytes,
                             std::optional<Offset> max_offset = std::nullopt,
                             bool min_one_message = false);

  // Removes every batch holding an offset >= `target`, whole (Kafka's truncateTo); LEO = target
  // even if that batch began below it. False when `target` >= LEO. REQUIRES: target >= 0.
  Result<bool> TruncateTo(Offset target);
  // Deletes every segment and restarts the log empty at `new_offset` (log start offset too).
  // REQUIRES: new_offset >= 0.
  Status TruncateFullyAndStartAt(Offset new_offset);
  // Retention (cleanup.policy=delete): deletes the oldest segments whose largest timestamp is
  // older than retention.ms, then while the log exceeds retention.bytes by a whole segment, then
  // those entirely below the log start offset (under any policy). With `high_watermark`, only
  // segments wholly below it. When every segment goes, a new empty active segment is rolled
  // first (so the active segment itself is never deleted). Raises the log start offset. Returns
  // the number of segments deleted. Completes due delayed deletions too.
  Result<int> DeleteOldSegments(std::optional<Offset> high_watermark = std::nullopt);
  // Raises the log start offset (DeleteRecords, KIP-107). OFFSET_OUT_OF_RANGE past the LEO.
  Status MaybeIncrementLogStartOffset(Offset new_log_start_offset);
  // Starts a new active segment at max(expected_next_offset, LEO) and flushes the ones before.
  Status Roll(std::optional<Offset> expected_next_offset = std::nullopt);
  // Makes every record below `offset` (clamped to the LEO) durable and moves the recovery point.
  Status Flush(Offset offset);
  Status Flush() { return Flush(next_offset_); }
  // Flushes when flush.messages unflushed records piled up or flush.ms passed since the last.
  Status MaybeFlush();
  // Removes the .deleted files whose file.delete.delay.ms has passed.
  Status CompletePendingDeletes();
  // The first record with timestamp >= `timestamp_ms` at or after the log start offset (Kafka's
  // fetchOffsetsByTimestamp); kEarliestTimestamp / kLatestTimestamp give the log start / LEO.
  // Without a time index (LogConfig::time_index false: Kafka 0.10.0) the answer is 0.10.0's
  // instead (KafkaApis.fetchOffsetsBefore with one offset): the base offset of the last segment
  // last modified at or before `timestamp_ms`, or the LEO when the active segment is not empty
  // and `timestamp_ms` is now or later; nullopt when every segment is younger. Its timestamp is
  // kNoTimestamp.
  Result<std::optional<TimestampOffset>> FetchOffsetByTimestamp(int64_t timestamp_ms);
  // Calls `visit` for each batch header from the one holding `from` on (rebuilding derived state,
  // checking), until it returns BatchWalk::kStop or the log ends; stopping is not an error.
  Status ForEachBatch(Offset from, const LogSegment::BatchVisitor& visit) const;

  // Clean shutdown: flushes everything, trims the active segment's indexes, closes the files.
  Status Close();
  // Closes and removes every file and the directory (topic deletion).
  Status Delete();

  Offset log_start_offset() const { return log_start_offset_; }
  Offset log_end_offset() const { return next_offset_; }
  Offset recovery_point() const { return recovery_point_; }
  // Records appended since the last flush.
  int64_t unflushed_messages() const { return next_offset_ - recovery_point_; }
  uint64_t size_in_bytes() const;
  size_t number_of_segments() const { return segments_.size(); }
  std::vector<LogSegmentInfo> Segments() const;
  // The segments themselves, oldest first (tests, tools). Valid until the next change.
  std::vector<LogSegment*> LogSegments();
  LogSegment& active_segment();
  const std::string& dir() const { return dir_; }
  const LogConfig& config() const { return config_; }
  // A topic's config changed live (Kafka's `log.config = logConfig`, TopicConfigHandler): what
  // reads the config from now on sees the new one (rolling, retention, flushing, the message
  // format of what is appended); the segments and indexes already made keep their sizes.
  void set_config(const LogConfig& config) { config_ = config; }
  const LogRecoveryReport& recovery_report() const { return recovery_report_; }
  // Not ok once an I/O error took the log offline.
  const Status& storage_error() const { return storage_error_; }
  // Neither offline nor closed: Read and the other operations do not fail at once.
  bool online() const { return storage_error_.ok() && !closed_; }
  // Borrowed; may be null. REQUIRES: outlives the Log or is reset first.
  void set_observer(LogObserver* observer) { observer_ = observer; }

 private:
  struct BatchRef {
    BatchHeader header;
    size_t position = 0;
    size_t size = 0;
  };
  struct PendingDelete {
    int64_t due_ms = 0;
    std::vector<std::string> paths;
  };

  Log(Env& env, const Clock& clock, std::string dir, const LogConfig& config);

  Status LoadSegments(const LogOpenOptions& options);
  Status RemoveLeftovers(std::vector<Offset>* swap_bases);
  Status LoadSegment(Offset base);
  Status CompleteSwap(Offset base);
  Status DeleteSegmentsBelowLogStart(Offset log_start_offset);
  Status RecoverFrom(Offset recovery_point);
  // Cuts each segment whose batches reach past the next segment's base offset.
  Status CutOverlaps();

  Result<LogAppendInfo> Append(MutableByteView batches, bool as_leader, LeaderEpoch epoch);
  Status AppendRun(MutableByteView run, Offset first, Offset last, int64_t max_timestamp_ms,
                   Offset offset_of_max_timestamp, const std::vector<BatchRef>& batches,
                   size_t begin, size_t end);
  Status DeleteSegment(Offset base);
  Result<int> DeleteSegmentsWhile(
      const std::function<bool(const LogSegment&, const LogSegment*)>& predicate,
      std::optional<Offset> high_watermark);
  void RaiseLogStartOffset(Offset offset);
  // FetchOffsetByTimestamp without a time index (Kafka 0.10.0).
  std::optional<TimestampOffset> FetchOffsetBefore(int64_t timestamp_ms) const;
  // Turns an I/O failure into KAFKA_STORAGE_ERROR and takes the log offline.
  Status Fail(Status status);
  Status CheckOnline() const;
  void CheckInvariants() const;

  Env& env_;
  const Clock& clock_;
  std::string dir_;
  LogConfig config_;
  std::map<Offset, std::unique_ptr<LogSegment>> segments_;
  // What a fetch of the log's end reads (log_start_offset, log_end_offset, online): together.
  Offset log_start_offset_{0};
  Offset next_offset_{0};
  Status storage_error_;
  bool closed_ = false;
  Offset recovery_point_{0};
  int64_t last_flush_ms_ = 0;
  std::vector<PendingDelete> pending_deletes_;
  LogRecoveryReport recovery_report_;
  // While opening: segments already verified because their indexes needed a rebuild, with the
  // damage found (ok when none).
  std::map<Offset, Status> recovered_on_load_;
  LogObserver* observer_ = nullptr;
};

}  // namespace ksim
