// Crash-recovery property test of the real Log (core/storage/log.h) on the virtual disk
// (sim/world/virtual_disk.h). Each sequence is a seeded random series of operations on one log with
// a random configuration (small segments, small index intervals, tiny indexes that fill up,
// time-based rolls, self-flushing every few messages): appends as leader, flushes, rolls, power
// losses (tearing the unsynced tail of every file, sometimes corrupting the torn bytes), process
// kills (the page cache survives), clean close and reopen; in the second variant also
// truncation, full truncation, retention and log-start moves; in the third, injected EIO before
// operations (the log goes offline, then the machine crashes).
//
// After every reopen (and every few operations), the log is checked against a model of what
// was appended:
// - every segment file is whole valid batches; each batch is, byte for byte, a batch the test
//   appended at that offset (in the variants without truncation: the log is exactly a prefix of
//   what was appended, plus possibly the batch of a failed append);
// - everything below the recovery point the log claimed before the crash (at least what the
//   test flushed) is there; after a kill or a clean close nothing at all is lost;
// - offsets run without gaps from the log start offset to the LEO; LEO - log start = records
//   found; the log start offset is the checkpointed one;
// - each offset-index entry points at the start of a batch, its offset is the last offset of a
//   batch from there on, lookups never land after the batch holding the offset; each time-index
//   entry names the last offset of a batch carrying that max timestamp;
// - Read at random offsets (random max bytes, sometimes an upper offset bound) returns the bytes
//   of the segment file from the batch holding the offset; reads out of range fail;
// - the recovery made everything durable (a second crash right after it changes nothing) and
//   appending afterwards continues at the LEO.
//
// Knobs (docs/simulation.md): KSIM_LOG_PROPERTY_SEQUENCES=N runs N sequences per variant (soak
// runs), KSIM_LOG_PROPERTY_SEED=S starts at seed S. A failure prints the seed and the operations
// of its sequence; rerun it with KSIM_LOG_PROPERTY_SEED=<seed> KSIM_LOG_PROPERTY_SEQUENCES=1.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/clock.h"
#include "core/config/log_config.h"
#include "core/env/env.h"
#include "core/record/record_batch.h"
#include "core/storage/log.h"
#include "sim/kernel/random.h"
#include "sim/world/virtual_disk.h"

namespace ksim::sim {
namespace {

constexpr char kLogParentDir[] = "/kafka-logs";
// Damage found by recovery in a segment wholly below the log start offset (a deleted segment
// whose unsynced deletion a power loss undid, its tail torn) makes recovery delete every later
// segment, flushed records above the log start included. Reached when the recovery point
// handed to Open is below the log start (a stale checkpoint).
// DamageBelowTheLogStartDoesNotCostRecordsAboveIt shows it; flip once it passes.
constexpr bool kRecoverySparesDataAboveTheLogStart = true;
constexpr char kLogDir[] = "/kafka-logs/t-0";

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  return std::strtoll(text, nullptr, 10);
}

struct Variant {
  const char* name;
  bool truncation = false;  // TruncateTo, TruncateFullyAndStartAt
  bool retention = false;   // DeleteOldSegments, MaybeIncrementLogStartOffset
  bool faults = false;      // one-shot EIO on writes or syncs before some operations
};

struct Stats {
  uint64_t sequences = 0;
  uint64_t operations = 0;
  uint64_t appends = 0;
  uint64_t flushes = 0;
  uint64_t crashes = 0;
  uint64_t torn_crashes = 0;
  uint64_t corrupt_crashes = 0;
  uint64_t second_crashes = 0;
  uint64_t kills = 0;
  uint64_t clean_reopens = 0;
  uint64_t verifications = 0;
  uint64_t records_checked = 0;
  uint64_t batches_checked = 0;
  uint64_t index_entries_checked = 0;
  uint64_t reads_checked = 0;
  uint64_t records_lost_by_crashes = 0;
  uint64_t recoveries_with_damage = 0;
  uint64_t faults_hit = 0;
  uint64_t truncations = 0;
  uint64_t segments_deleted_by_retention = 0;
  uint64_t undetectable_header_corruptions = 0;
};

std::string FormatStats(const Stats& s) {
  return "sequences=" + std::to_string(s.sequences) +
         " operations=" + std::to_string(s.operations) + " appends=" + std::to_string(s.appends) +
         " flushes=" + std::to_string(s.flushes) + " crashes=" + std::to_string(s.crashes) +
         " (torn=" + std::to_string(s.torn_crashes) +
         " corrupt=" + std::to_string(s.corrupt_crashes) +
         " second=" + std::to_string(s.second_crashes) + ") kills=" + std::to_string(s.kills) +
         " clean_reopens=" + std::to_string(s.clean_reopens) +
         " verifications=" + std::to_string(s.verifications) +
         " batches_checked=" + std::to_string(s.batches_checked) +
         " records_checked=" + std::to_string(s.records_checked) +
         " index_entries_checked=" + std::to_string(s.index_entries_checked) +
         " reads_checked=" + std::to_string(s.reads_checked) +
         " records_lost_by_crashes=" + std::to_string(s.records_lost_by_crashes) +
         " recoveries_with_damage=" + std::to_string(s.recoveries_with_damage) +
         " faults_hit=" + std::to_string(s.faults_hit) +
         " truncations=" + std::to_string(s.truncations) +
         " segments_deleted_by_retention=" + std::to_string(s.segments_deleted_by_retention) +
         " undetectable_header_corruptions=" + std::to_string(s.undetectable_header_corruptions);
}

// A record as the model knows it; its value spells its id, so a misplaced record is visible.
struct ModelRecord {
  uint64_t id = 0;
  uint32_t pad_bytes = 0;
  bool keyed = false;
  friend bool operator==(const ModelRecord&, const ModelRecord&) = default;
};

// A batch the test appended, with the offset and epoch the leader stamped on it.
struct ModelBatch {
  int64_t base = 0;
  int32_t epoch = 0;
  int64_t timestamp_ms = 0;
  std::vector<ModelRecord> records;
  int64_t next() const { return base + static_cast<int64_t>(records.size()); }
  friend bool operator==(const ModelBatch&, const ModelBatch&) = default;
};

std::string ValueOf(const ModelRecord& record) {
  return "id=" + std::to_string(record.id) + ";" +
         std::string(record.pad_bytes, static_cast<char>('a' + record.id % 26));
}

Bytes Encode(const ModelBatch& batch) {
  std::vector<RecordInput> inputs;
  for (const ModelRecord& record : batch.records) {
    RecordInput input;
    input.timestamp_ms = batch.timestamp_ms;
    if (record.keyed) input.key = ToBytes("k" + std::to_string(record.id));
    input.value = ToBytes(ValueOf(record));
    inputs.push_back(std::move(input));
  }
  BatchSpec spec;
  spec.base_offset = Offset(batch.base);
  spec.partition_leader_epoch = LeaderEpoch(batch.epoch);
  return EncodeBatch(spec, inputs);
}

// One batch found by scanning a segment file.
struct ScannedBatch {
  int64_t segment_base = 0;
  uint64_t position = 0;
  BatchHeader header;
  Bytes bytes;
};

struct SegmentScan {
  int64_t base = 0;
  Bytes file;
  std::vector<size_t> batches;  // indexes into Scan::batches
};

struct Scan {
  std::vector<ScannedBatch> batches;  // in offset order, over every segment
  std::vector<SegmentScan> segments;
};

class Sequence {
 public:
  Sequence(uint64_t seed, const Variant& variant, Stats& stats)
      : seed_(seed),
        variant_(variant),
        stats_(stats),
        rng_(Seeds(seed).StreamFor("log-crash-property")),
        disk_(Seeds(seed).StreamFor("disk/broker-1")),
        clock_(1'000'000'000'000) {}

  void Run() {
    ChooseConfig();
    // Log::Open creates the partition directory (and the log directory above it) durably.
    ASSERT_NO_FATAL_FAILURE(Open(LogOpenOptions{}));
    const int64_t operations = rng_.UniformInt(20, 80);
    for (int64_t i = 0; i < operations && !ended_; ++i) {
      ASSERT_NO_FATAL_FAILURE(Step());
      ++stats_.operations;
    }
    if (!ended_) {
      ASSERT_NO_FATAL_FAILURE(CrashAndRecover());
    }
    ++stats_.sequences;
  }

  std::string History() const {
    std::string out =
        "seed " + std::to_string(seed_) + " (" + variant_.name + "), config " + config_text_ + "\n";
    for (const std::string& line : history_) out += "  " + line + "\n";
    return out;
  }

 private:
  // ---- Setup --------------------------------------------------------------------------------
  void ChooseConfig() {
    const int32_t segment_sizes[] = {300, 700, 1500, 4096, 1 << 20};
    const int32_t index_intervals[] = {0, 1, 100, 512, 4096};
    const int32_t index_sizes[] = {16, 24, 64, 400, 8192};
    config_.segment_bytes = segment_sizes[rng_.UniformInt(0, 4)];
    config_.index_interval_bytes = index_intervals[rng_.UniformInt(0, 4)];
    config_.max_index_size_bytes = index_sizes[rng_.UniformInt(0, 4)];
    if (rng_.Bernoulli(1, 3)) config_.segment_ms = rng_.UniformInt(50, 2000);
    if (rng_.Bernoulli(1, 4)) config_.flush_interval_messages = rng_.UniformInt(1, 20);
    config_.file_delete_delay_ms = rng_.Bernoulli(1, 2) ? 0 : rng_.UniformInt(1, 3000);
    if (variant_.retention) {
      if (rng_.Bernoulli(1, 2)) config_.retention_bytes = rng_.UniformInt(500, 6000);
      if (rng_.Bernoulli(1, 2)) config_.retention_ms = rng_.UniformInt(100, 3000);
    }
    config_text_ = "segment.bytes=" + std::to_string(config_.segment_bytes) +
                   " index.interval.bytes=" + std::to_string(config_.index_interval_bytes) +
                   " segment.index.bytes=" + std::to_string(config_.max_index_size_bytes) +
                   " segment.ms=" + std::to_string(config_.segment_ms) +
                   " flush.messages=" + std::to_string(config_.flush_interval_messages) +
                   " file.delete.delay.ms=" + std::to_string(config_.file_delete_delay_ms) +
                   " retention.bytes=" + std::to_string(config_.retention_bytes) +
                   " retention.ms=" + std::to_string(config_.retention_ms);
  }

  // "[0,12) [12,30)*": each segment's base and next offset, * for the active one.
  std::string SegmentsText() const {
    std::string out;
    for (const LogSegmentInfo& info : log_->Segments()) {
      out += " [" + ToString(info.base_offset) + "," + ToString(info.next_offset) + ")" +
             (info.active ? "*" : "");
    }
    return out;
  }

  void Note(std::string line) {
    history_.push_back(std::move(line));
    if (history_.size() > 400) history_.erase(history_.begin());
  }

  void Open(const LogOpenOptions& options) {
    Result<std::unique_ptr<Log>> opened = Log::Open(disk_, clock_, kLogDir, config_, options);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    log_ = std::move(opened).value();
    ++epoch_;
  }

  int64_t Leo() const { return log_->log_end_offset().value(); }

  // ---- Operations ---------------------------------------------------------------------------
  void Step() {
    clock_.AdvanceMs(rng_.UniformInt(0, 60));
    const int64_t pick = rng_.UniformInt(0, 99);
    if (variant_.faults && rng_.Bernoulli(1, 8)) return FaultyOperation();
    if (pick < 50) return Append();
    if (pick < 60) return Flush();
    if (pick < 64) return Roll();
    if (pick < 72) return CrashAndRecover();
    if (pick < 75) return Kill();
    if (pick < 77) return CloseAndReopen();
    if (pick < 82) return Verify(/*exact=*/true);
    if (variant_.truncation && pick < 88)
      return rng_.Bernoulli(1, 6) ? TruncateFully() : Truncate();
    if (variant_.retention && pick < 96) {
      return rng_.Bernoulli(1, 3) ? IncrementLogStart() : DeleteOldSegments();
    }
    return Append();
  }

  ModelBatch NextBatch(int64_t base) {
    ModelBatch batch;
    batch.base = base;
    batch.epoch = epoch_;
    batch.timestamp_ms = clock_.NowMs();
    const int64_t count = rng_.Bernoulli(1, 10) ? rng_.UniformInt(10, 40) : rng_.UniformInt(1, 6);
    const int64_t pad_max = rng_.Bernoulli(1, 10) ? 700 : 120;
    for (int64_t i = 0; i < count; ++i) {
      ModelRecord record;
      record.id = next_id_++;
      record.pad_bytes = static_cast<uint32_t>(rng_.UniformInt(0, pad_max));
      record.keyed = rng_.Bernoulli(1, 3);
      batch.records.push_back(record);
    }
    return batch;
  }

  void Append() { AppendBatches(/*expect_ok=*/true, nullptr); }

  // Builds 1-3 batches and appends them as leader. A failure is fatal unless !expect_ok; then
  // it is stored in `failure` and the batches become tentative.

  void AppendBatches(bool expect_ok, Status* failure) {
    const int64_t leo = Leo();
    std::vector<ModelBatch> batches;
    Bytes buffer;
    int64_t base = leo;
    const int64_t count = rng_.Bernoulli(1, 4) ? rng_.UniformInt(2, 3) : 1;
    for (int64_t i = 0; i < count; ++i) {
      batches.push_back(NextBatch(base));
      base = batches.back().next();
      // The producer's bytes carry no offsets: the leader assigns them.
      ModelBatch unstamped = batches.back();
      unstamped.base = 0;
      unstamped.epoch = -1;
      const Bytes bytes = Encode(unstamped);
      buffer.insert(buffer.end(), bytes.begin(), bytes.end());
    }
    Note("append " + std::to_string(count) + " batches, " + std::to_string(base - leo) +
         " records, " + std::to_string(buffer.size()) + " bytes at " + std::to_string(leo));
    Result<LogAppendInfo> info = log_->AppendAsLeader(buffer, LeaderEpoch(epoch_));
    if (static_cast<int64_t>(buffer.size()) > config_.segment_bytes) {
      ASSERT_EQ(info.status().code(), Errc::kRecordListTooLarge) << info.status().ToString();
      ASSERT_EQ(Leo(), leo);
      return;
    }
    if (!info.ok()) {
      ASSERT_FALSE(expect_ok) << info.status().ToString();
      ASSERT_EQ(log_->storage_error().code(), Errc::kKafkaStorageError) << info.status().ToString();
      *failure = info.status();
      // The batches may or may not have reached the file: allowed, not required, after a crash.
      for (ModelBatch& batch : batches) tentative_.push_back(std::move(batch));
      return;
    }
    ++stats_.appends;
    ASSERT_EQ(info->first_offset, Offset(leo));
    ASSERT_EQ(info->last_offset, Offset(base - 1));
    ASSERT_EQ(info->num_batches, count);
    ASSERT_EQ(info->num_records, base - leo);
    ASSERT_EQ(Leo(), base);
    for (ModelBatch& batch : batches) {
      versions_[batch.base].push_back(batch);
      model_[batch.base] = std::move(batch);
    }
    if (config_.flush_interval_messages != LogConfig::kUnbounded) {
      ASSERT_LT(log_->unflushed_messages(), config_.flush_interval_messages);
    }
  }

  void Flush() {
    Note("flush at " + std::to_string(Leo()) + ", segments" + SegmentsText());
    ASSERT_TRUE(log_->Flush().ok());
    ++stats_.flushes;
    ASSERT_EQ(log_->recovery_point(), log_->log_end_offset());
    flushed_ = std::max(flushed_, Leo());
  }

  void Roll() {
    Note("roll at " + std::to_string(Leo()));
    ASSERT_TRUE(log_->Roll().ok());
    ASSERT_EQ(log_->active_segment().base_offset(), log_->log_end_offset());
  }

  // Truncation to a batch boundary at or above the log start (as a follower truncates).
  void Truncate() {
    std::vector<int64_t> targets;
    const int64_t start = log_->log_start_offset().value();
    for (const auto& [base, batch] : model_) {
      if (base >= start) targets.push_back(base);
    }
    targets.push_back(Leo());
    const int64_t target = targets[rng_.UniformInt(0, static_cast<int64_t>(targets.size()) - 1)];
    const int64_t leo = Leo();
    Note("truncate to " + std::to_string(target) + " (leo " + std::to_string(leo) + ")");
    Result<bool> truncated = log_->TruncateTo(Offset(target));
    ASSERT_TRUE(truncated.ok()) << truncated.status().ToString();
    ASSERT_EQ(*truncated, target < leo);
    model_.erase(model_.lower_bound(target), model_.end());
    ++stats_.truncations;
    ASSERT_EQ(Leo(), target);
    Note("  segments" + SegmentsText());
    flushed_ = std::min(flushed_, target);
    ASSERT_LE(log_->recovery_point(), Offset(target));
  }

  void TruncateFully() {
    const int64_t target = Leo() + rng_.UniformInt(0, 30);
    Note("truncate fully and start at " + std::to_string(target));
    ASSERT_TRUE(log_->TruncateFullyAndStartAt(Offset(target)).ok());
    model_.clear();
    start_ = target;
    flushed_ = target;
    ++stats_.truncations;
    ASSERT_EQ(Leo(), target);
    ASSERT_EQ(log_->log_start_offset(), Offset(target));
  }

  void DeleteOldSegments() {
    const size_t before = log_->number_of_segments();
    Result<int> deleted = log_->DeleteOldSegments();
    ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
    Note("delete old segments: " + std::to_string(*deleted) + " of " + std::to_string(before) +
         ", log start " + ToString(log_->log_start_offset()));
    stats_.segments_deleted_by_retention += static_cast<uint64_t>(*deleted);
    ASSERT_GE(log_->log_start_offset(), Offset(start_));
    // The log start offset rises to the first segment kept, never falls.
    ASSERT_EQ(log_->log_start_offset(),
              std::max(Offset(start_), log_->LogSegments().front()->base_offset()));
    start_ = log_->log_start_offset().value();
  }

  void IncrementLogStart() {
    const int64_t start = log_->log_start_offset().value();
    const int64_t target = rng_.UniformInt(start, Leo());
    Note("increment log start to " + std::to_string(target));
    ASSERT_TRUE(log_->MaybeIncrementLogStartOffset(Offset(target)).ok());
    ASSERT_EQ(log_->log_start_offset(), Offset(target));
    start_ = target;
    ASSERT_EQ(log_->MaybeIncrementLogStartOffset(Offset(Leo() + 1)).code(),
              Errc::kOffsetOutOfRange);
  }

  // A one-shot EIO armed before an append, flush or roll. If the operation hits it, the log
  // must go offline; the machine then loses power and the log is recovered.
  void FaultyOperation() {
    const DiskFault fault = rng_.Bernoulli(1, 2) ? DiskFault::kWriteError : DiskFault::kSyncError;
    disk_.InjectFault(fault, FaultPersistence::kOnce);
    const uint64_t errors_before = disk_.counters().injected_errors;
    Status failure;
    const int64_t which = rng_.UniformInt(0, 2);
    Note(std::string("arm one-shot ") + (fault == DiskFault::kWriteError ? "write" : "sync") +
         " error");
    if (which == 0) {
      ASSERT_NO_FATAL_FAILURE(AppendBatches(/*expect_ok=*/false, &failure));
    } else if (which == 1) {
      Note("flush at " + std::to_string(Leo()));
      failure = log_->Flush();
      if (failure.ok()) flushed_ = std::max(flushed_, Leo());
    } else {
      Note("roll at " + std::to_string(Leo()));
      failure = log_->Roll();
    }
    const bool hit = disk_.counters().injected_errors > errors_before;
    disk_.ClearAllFaults();
    if (!hit) {
      ASSERT_TRUE(failure.ok()) << failure.ToString();
      return;
    }
    ++stats_.faults_hit;
    Note("  failed: " + failure.ToString());
    ASSERT_FALSE(failure.ok()) << "an injected error went unreported";
    ASSERT_EQ(log_->storage_error().code(), Errc::kKafkaStorageError);
    // Offline: every change is refused until the log is reopened.
    ASSERT_EQ(log_->Flush().code(), Errc::kKafkaStorageError);
    ASSERT_NO_FATAL_FAILURE(CrashAndRecover());
  }

  // ---- Crash and recovery ---------------------------------------------------------------------
  CrashOptions DrawCrash() {
    CrashOptions options;
    options.tear_unsynced_tail = rng_.Bernoulli(3, 4);
    options.corrupt_torn_tail = options.tear_unsynced_tail && rng_.Bernoulli(2, 5);
    return options;
  }

  LogOpenOptions Checkpoints(int64_t durable) {
    // Kafka's recovery-point checkpoint lags the real one; any value up to it is sound (even
    // below the log start offset, where segments may have come back from the dead:
    // kRecoverySparesDataAboveTheLogStart).
    const int64_t lowest = kRecoverySparesDataAboveTheLogStart ? 0 : std::min(start_, durable);
    LogOpenOptions options;
    const int64_t pick = rng_.UniformInt(0, 2);
    options.recovery_point = Offset(pick == 0   ? lowest
                                    : pick == 1 ? durable
                                                : rng_.UniformInt(lowest, durable));
    options.log_start_offset = Offset(start_);
    return options;
  }

  void CrashAndRecover() {
    // What the log claims durable (its recovery point) must survive; the test's own flushes
    // are a lower bound of that claim.
    const int64_t durable = log_->recovery_point().value();
    ASSERT_GE(durable, flushed_);
    const CrashOptions crash = DrawCrash();
    Note(std::string("crash") + (crash.tear_unsynced_tail ? " tear" : "") +
         (crash.corrupt_torn_tail ? " corrupt" : "") + " (durable " + std::to_string(durable) +
         ", leo " + std::to_string(log_->log_end_offset().value()) + ")");
    const int64_t leo_before = std::max(log_->log_end_offset().value(), model_leo());
    disk_.Crash(crash);
    log_.reset();
    ++stats_.crashes;
    stats_.torn_crashes += crash.tear_unsynced_tail;
    stats_.corrupt_crashes += crash.corrupt_torn_tail;
    ASSERT_NO_FATAL_FAILURE(Reopen(Checkpoints(durable), durable, /*nothing_lost=*/false));
    if (ended_) return;
    stats_.records_lost_by_crashes +=
        static_cast<uint64_t>(std::max<int64_t>(0, leo_before - Leo()));
    if (rng_.Bernoulli(1, 5)) {
      // Recovery made everything durable: losing power again right away loses nothing.
      const Scan before = ScanLog();
      Note("second crash right after recovery");
      const int64_t recovered_leo = Leo();
      disk_.Crash(DrawCrash());
      log_.reset();
      ++stats_.second_crashes;
      ASSERT_NO_FATAL_FAILURE(
          Reopen(Checkpoints(recovered_leo), recovered_leo, /*nothing_lost=*/true));
      const Scan after = ScanLog();
      ASSERT_EQ(after.batches.size(), before.batches.size());
      for (size_t i = 0; i < after.batches.size(); ++i) {
        ASSERT_EQ(after.batches[i].bytes, before.batches[i].bytes) << "batch " << i;
      }
    }
    // Appending after recovery continues at the LEO.
    ASSERT_NO_FATAL_FAILURE(Append());
    ASSERT_NO_FATAL_FAILURE(Verify(/*exact=*/true));
  }

  // Killed process: the page cache survives (CleanShutdown syncs it), the indexes were not
  // trimmed and nothing was closed.
  void Kill() {
    Note("kill -9 (leo " + std::to_string(Leo()) + ")");
    const int64_t durable = log_->recovery_point().value();
    log_.reset();
    disk_.CleanShutdown();
    ++stats_.kills;
    ASSERT_NO_FATAL_FAILURE(Reopen(Checkpoints(durable), durable, /*nothing_lost=*/true));
  }

  void CloseAndReopen() {
    Note("close (leo " + std::to_string(Leo()) + ")");
    const int64_t leo = Leo();
    ASSERT_TRUE(log_->Close().ok());
    ASSERT_EQ(log_->Flush().code(), Errc::kKafkaStorageError);  // closed
    const int64_t durable = log_->recovery_point().value();
    ASSERT_EQ(durable, leo);
    log_.reset();
    // After a clean close even a torn power loss loses nothing.
    disk_.Crash(DrawCrash());
    ++stats_.clean_reopens;
    ASSERT_NO_FATAL_FAILURE(Reopen(Checkpoints(durable), durable, /*nothing_lost=*/true));
  }

  // Opens the log after a crash, kill or close and checks it against the model; then the
  // recovered log becomes the model.
  void Reopen(const LogOpenOptions& options, int64_t durable, bool nothing_lost) {
    Note("open (recovery point " + ToString(options.recovery_point) + ", log start " +
         ToString(options.log_start_offset) + ")");
    ASSERT_NO_FATAL_FAILURE(Open(options));
    const LogRecoveryReport& report = log_->recovery_report();
    if (!report.first_damage.ok()) ++stats_.recoveries_with_damage;
    Note("  leo " + std::to_string(Leo()) + ", log start " + ToString(log_->log_start_offset()) +
         ", truncated " + std::to_string(report.bytes_truncated) +
         " bytes, damage: " + report.first_damage.ToString());
    ASSERT_EQ(log_->recovery_point(), log_->log_end_offset());
    ASSERT_EQ(log_->log_start_offset(), Offset(start_));
    ASSERT_GE(Leo(), start_);
    if (nothing_lost) {
      ASSERT_TRUE(tentative_.empty());
      ASSERT_NO_FATAL_FAILURE(Verify(/*exact=*/true));
    } else {
      ASSERT_NO_FATAL_FAILURE(VerifyRecovered(durable));
      if (ended_) return;
    }
    // The recovered log is the new truth: everything in it is durable now.
    const Scan scan = ScanLog();
    std::map<int64_t, ModelBatch> model;
    for (const ScannedBatch& scanned : scan.batches) {
      ModelBatch batch = FindVersion(scanned);
      ASSERT_NE(batch.base, -1);
      model[batch.base] = std::move(batch);
    }
    model_ = std::move(model);
    versions_.clear();
    for (const auto& [base, batch] : model_) versions_[base].push_back(batch);
    tentative_.clear();
    flushed_ = Leo();
  }

  // ---- Checks ---------------------------------------------------------------------------------
  int64_t model_leo() const {
    if (!model_.empty() && model_.rbegin()->second.next() >= start_) {
      return model_.rbegin()->second.next();
    }
    return start_;
  }

  // The model batch (any version appended since the last recovery, or a tentative one) whose
  // encoding equals the scanned batch; a default batch (base -1) when none does.
  ModelBatch FindVersion(const ScannedBatch& scanned) const {
    const int64_t base = scanned.header.base_offset.value();
    if (auto it = versions_.find(base); it != versions_.end()) {
      for (const ModelBatch& batch : it->second) {
        if (Encode(batch) == scanned.bytes) return batch;
      }
    }
    for (const ModelBatch& batch : tentative_) {
      if (batch.base == base && Encode(batch) == scanned.bytes) return batch;
    }
    ModelBatch none;
    none.base = -1;
    return none;
  }

  // True when `scanned` equals a batch the test appended in every byte but the base offset and
  // the partition leader epoch (bytes [0, 8) and [12, 16), outside the CRC).
  bool IsHeaderCorruptionOfAKnownBatch(const ScannedBatch& scanned) const {
    auto same_covered_bytes = [&](const ModelBatch& batch) {
      const Bytes encoded = Encode(batch);
      if (encoded.size() != scanned.bytes.size()) return false;
      return std::equal(encoded.begin() + 8, encoded.begin() + 12, scanned.bytes.begin() + 8) &&
             std::equal(encoded.begin() + 16, encoded.end(), scanned.bytes.begin() + 16);
    };
    for (const auto& [base, versions] : versions_) {
      for (const ModelBatch& batch : versions) {
        if (same_covered_bytes(batch)) return true;
      }
    }
    for (const ModelBatch& batch : tentative_) {
      if (same_covered_bytes(batch)) return true;
    }
    return false;
  }

  Scan ScanLog() {
    Scan scan;
    for (LogSegment* segment : log_->LogSegments()) {
      SegmentScan segment_scan;
      segment_scan.base = segment->base_offset().value();
      Result<Bytes> file = ReadWholeFile(disk_, segment->log_path());
      EXPECT_TRUE(file.ok()) << file.status().ToString();
      if (!file.ok()) return scan;
      segment_scan.file = std::move(file).value();
      EXPECT_EQ(segment_scan.file.size(), segment->size());
      BatchIterator iterator(segment_scan.file);
      while (std::optional<BatchIterator::Item> item = iterator.Next()) {
        segment_scan.batches.push_back(scan.batches.size());
        scan.batches.push_back(ScannedBatch{segment_scan.base, item->position, item->header,
                                            Bytes(item->bytes.begin(), item->bytes.end())});
      }
      // A live (or recovered) segment is whole valid batches, nothing else.
      EXPECT_TRUE(iterator.status().ok())
          << segment->log_path() << ": " << iterator.status().ToString();
      EXPECT_FALSE(iterator.truncated()) << segment->log_path();
      EXPECT_EQ(iterator.position(), segment_scan.file.size()) << segment->log_path();
      scan.segments.push_back(std::move(segment_scan));
    }
    return scan;
  }

  // After a power loss: every batch is one the test appended at that offset (in the variants
  // without truncation: the log is a prefix of the model plus tentative batches), everything
  // below `durable` is there.
  void VerifyRecovered(int64_t durable) {
    const Scan scan = ScanLog();
    ASSERT_FALSE(::testing::Test::HasFailure());
    for (const ScannedBatch& scanned : scan.batches) {
      const ModelBatch found = FindVersion(scanned);
      if (found.base == -1 && IsHeaderCorruptionOfAKnownBatch(scanned)) {
        // A torn byte landed in baseOffset or partitionLeaderEpoch, the two fields outside the
        // CRC (the leader stamps them without recomputing it). Recovery rejects a baseOffset at
        // or below the previous batch's last offset
        // (RecoveryRejectsABatchWhoseBaseOffsetWasCorrupted), but, as Kafka's, not one that jumps
        // forward, nor one in a segment's first batch (if still at or past the segment's base), nor
        // partitionLeaderEpoch. The log is wrong from here on; the sequence ends.
        Note("  undetectable corruption of a header field outside the CRC at position " +
             std::to_string(scanned.position) + " of segment " +
             std::to_string(scanned.segment_base) + "; sequence ends");
        ++stats_.undetectable_header_corruptions;
        ended_ = true;
        return;
      }
      ASSERT_NE(found.base, -1) << "a batch at offset " << scanned.header.base_offset
                                << " that was never appended there (segment "
                                << scanned.segment_base << ", position " << scanned.position << ")";
    }
    if (!variant_.truncation) {
      // Exactly a prefix of what was appended (retention may have resurrected old segments
      // below the log start: they are part of the model too).
      std::vector<ModelBatch> expected;
      for (const auto& [base, batch] : model_) expected.push_back(batch);
      for (const ModelBatch& batch : tentative_) expected.push_back(batch);
      size_t first = 0;
      while (first < expected.size() && !scan.batches.empty() &&
             expected[first].base < scan.batches.front().header.base_offset.value()) {
        ++first;
      }
      for (size_t i = 0; i < scan.batches.size(); ++i) {
        ASSERT_LT(first + i, expected.size());
        ASSERT_EQ(Encode(expected[first + i]), scan.batches[i].bytes) << "batch " << i;
      }
    }
    // Everything the log had claimed durable is there, unchanged.
    for (const auto& [base, batch] : model_) {
      if (batch.next() > durable || batch.next() <= start_) continue;
      const auto at = base;  // clang before 16 cannot capture a structured binding
      auto it = std::find_if(scan.batches.begin(), scan.batches.end(), [&](const ScannedBatch& s) {
        return s.header.base_offset.value() == at;
      });
      ASSERT_NE(it, scan.batches.end())
          << "durable batch at " << base << " lost (durable " << durable << ")";
      ASSERT_EQ(it->bytes, Encode(batch)) << "durable batch at " << base << " changed";
    }
    ASSERT_GE(Leo(), std::max(start_, std::min(durable, model_leo())));
    ASSERT_NO_FATAL_FAILURE(VerifyStructure(scan));
  }

  // The live log equals the model exactly.
  void Verify(bool exact) {
    ++stats_.verifications;
    const Scan scan = ScanLog();
    ASSERT_FALSE(::testing::Test::HasFailure());
    ASSERT_EQ(log_->log_start_offset(), Offset(start_));
    ASSERT_EQ(Leo(), model_leo());
    // Segments deleted by retention hold no model batches any more; the rest is all there.
    const int64_t first_base = log_->LogSegments().front()->base_offset().value();
    std::vector<const ModelBatch*> expected;
    for (const auto& [base, batch] : model_) {
      if (base >= first_base) expected.push_back(&batch);
    }
    ASSERT_EQ(scan.batches.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_EQ(scan.batches[i].bytes, Encode(*expected[i])) << "batch at " << expected[i]->base;
    }
    ASSERT_NO_FATAL_FAILURE(VerifyStructure(scan));
  }

  // Offsets, indexes and reads, from the segment files themselves.
  void VerifyStructure(const Scan& scan) {
    const int64_t start = log_->log_start_offset().value();
    const int64_t leo = Leo();
    // Offsets run without gaps from the batch holding the log start to the LEO.
    int64_t expected_next = -1;
    int64_t records_from_start = 0;
    for (const ScannedBatch& scanned : scan.batches) {
      const int64_t base = scanned.header.base_offset.value();
      const int64_t next = scanned.header.next_offset().value();
      Result<std::vector<Record>> records = DecodeRecords(scanned.bytes);
      ASSERT_TRUE(records.ok()) << records.status().ToString();
      ASSERT_EQ(static_cast<int64_t>(records->size()), next - base);
      for (size_t i = 0; i < records->size(); ++i) {
        ASSERT_EQ((*records)[i].offset, Offset(base + static_cast<int64_t>(i)));
        ASSERT_TRUE((*records)[i].value.has_value());
        ASSERT_TRUE(AsChars(*(*records)[i].value).starts_with("id="));
        if ((*records)[i].offset.value() >= start) ++records_from_start;
      }
      stats_.records_checked += records->size();
      ++stats_.batches_checked;
      if (next <= start) continue;
      if (expected_next < 0) {
        ASSERT_LE(base, start) << "the records from the log start on begin at " << base;
      } else {
        ASSERT_EQ(base, expected_next) << "a gap in the offsets";
      }
      expected_next = next;
    }
    ASSERT_EQ(expected_next < 0 ? start : expected_next, leo)
        << "LEO is not the end of the records";
    ASSERT_EQ(records_from_start, leo - start) << "LEO - log start is not the number of records";

    for (size_t s = 0; s < scan.segments.size(); ++s) {
      ASSERT_NO_FATAL_FAILURE(VerifySegmentIndexes(scan, s));
    }
    ASSERT_NO_FATAL_FAILURE(VerifyReads(scan));
  }

  void VerifySegmentIndexes(const Scan& scan, size_t s) {
    const SegmentScan& segment_scan = scan.segments[s];
    LogSegment& segment = *log_->LogSegments()[s];
    ASSERT_EQ(segment.base_offset().value(), segment_scan.base);
    const int64_t upper = s + 1 < scan.segments.size() ? scan.segments[s + 1].base : INT64_MAX;
    std::map<uint64_t, size_t> by_position;    // batch start -> scan index
    std::map<int64_t, size_t> by_last_offset;  // last offset -> scan index
    for (size_t i : segment_scan.batches) {
      const ScannedBatch& b = scan.batches[i];
      ASSERT_GE(b.header.base_offset.value(), segment_scan.base);
      ASSERT_LT(b.header.last_offset().value(), upper) << "a batch past the next segment's base";
      by_position[b.position] = i;
      by_last_offset[b.header.last_offset().value()] = i;
    }
    ASSERT_TRUE(segment.SanityCheck().ok()) << segment.SanityCheck().ToString();
    const OffsetIndex& index = segment.offset_index();
    for (size_t n = 0; n < index.entries(); ++n) {
      const OffsetPosition entry = index.EntryAt(n);
      auto at = by_position.find(static_cast<uint64_t>(entry.position));
      ASSERT_NE(at, by_position.end())
          << "index entry " << n << " of segment " << segment_scan.base << " points at position "
          << entry.position << ", not a batch start";
      auto last = by_last_offset.find(entry.offset.value());
      ASSERT_NE(last, by_last_offset.end())
          << "index entry " << n << " offset " << entry.offset << " is no batch's last offset";
      ASSERT_GE(scan.batches[last->second].position, static_cast<uint64_t>(entry.position));
      ++stats_.index_entries_checked;
    }
    const TimeIndex& time_index = segment.time_index();
    for (size_t n = 0; n < time_index.entries(); ++n) {
      const TimestampOffset entry = time_index.EntryAt(n);
      auto last = by_last_offset.find(entry.offset.value());
      ASSERT_NE(last, by_last_offset.end())
          << "time index entry " << n << " of segment " << segment_scan.base << " names offset "
          << entry.offset << ", no batch's last offset";
      ASSERT_EQ(scan.batches[last->second].header.max_timestamp, entry.timestamp_ms)
          << "time index entry " << n << " of segment " << segment_scan.base;
      ++stats_.index_entries_checked;
    }
    // Lookups never land after the batch holding the offset.
    for (size_t i : segment_scan.batches) {
      const ScannedBatch& b = scan.batches[i];
      for (int64_t o : {b.header.base_offset.value(), b.header.last_offset().value()}) {
        const OffsetPosition found = index.Lookup(Offset(o));
        ASSERT_LE(found.offset.value(), o);
        ASSERT_LE(static_cast<uint64_t>(found.position), b.position)
            << "lookup of " << o << " lands after its batch";
      }
    }
  }

  void VerifyReads(const Scan& scan) {
    const int64_t start = log_->log_start_offset().value();
    const int64_t leo = Leo();
    // Where each offset lives.
    auto holding = [&](int64_t offset) -> const ScannedBatch* {
      for (const ScannedBatch& b : scan.batches) {
        if (b.header.base_offset.value() <= offset && offset <= b.header.last_offset().value()) {
          return &b;
        }
      }
      return nullptr;
    };
    auto file_of = [&](int64_t segment_base) -> const Bytes& {
      for (const SegmentScan& s : scan.segments) {
        if (s.base == segment_base) return s.file;
      }
      static const Bytes kNone;
      return kNone;
    };
    const int reads = leo > start ? 6 : 0;
    for (int r = 0; r < reads; ++r) {
      const int64_t offset = rng_.UniformInt(start, leo - 1);
      const int32_t max_bytes = static_cast<int32_t>(rng_.UniformInt(0, 3000));
      std::optional<Offset> max_offset;
      if (rng_.Bernoulli(1, 3)) max_offset = Offset(rng_.UniformInt(offset, leo));
      Result<FetchDataInfo> read = log_->Read(Offset(offset), max_bytes, max_offset, true);
      ASSERT_TRUE(read.ok()) << "read at " << offset << ": " << read.status().ToString();
      const ScannedBatch* batch = holding(offset);
      ASSERT_NE(batch, nullptr) << "no batch holds " << offset;
      if (max_offset && batch->header.last_offset() >= *max_offset) {
        ASSERT_TRUE(read->records.empty())
            << "read at " << offset << " past max offset " << *max_offset;
        ++stats_.reads_checked;
        continue;
      }
      ASSERT_FALSE(read->records.empty()) << "read at " << offset << " returned nothing";
      ASSERT_EQ(read->segment_base_offset.value(), batch->segment_base);
      ASSERT_EQ(read->position, batch->position) << "read at " << offset;
      const Bytes& file = file_of(batch->segment_base);
      ASSERT_LE(read->position + read->records.size(), file.size());
      ASSERT_TRUE(std::equal(read->records.begin(), read->records.end(),
                             file.begin() + static_cast<ptrdiff_t>(read->position)))
          << "read at " << offset << " returned bytes other than the segment's";
      // min_one_message: the first batch comes whole whatever max_bytes says.
      ASSERT_GE(read->records.size(), batch->bytes.size()) << "read at " << offset;
      BatchIterator iterator(read->records);
      while (std::optional<BatchIterator::Item> item = iterator.Next()) {
        if (max_offset) {
          ASSERT_LT(item->header.last_offset(), *max_offset);
        }
      }
      ++stats_.reads_checked;
    }
    Result<FetchDataInfo> at_end = log_->Read(Offset(leo), 1000);
    ASSERT_TRUE(at_end.ok()) << at_end.status().ToString();
    ASSERT_TRUE(at_end->records.empty());
    ASSERT_EQ(log_->Read(Offset(leo + 1), 1000).status().code(), Errc::kOffsetOutOfRange);
    if (start > 0) {
      ASSERT_EQ(log_->Read(Offset(start - 1), 1000).status().code(), Errc::kOffsetOutOfRange);
    }
  }

  const uint64_t seed_;
  const Variant variant_;
  Stats& stats_;
  RandomStream rng_;
  VirtualDisk disk_;
  ManualClock clock_;
  LogConfig config_;
  std::string config_text_;
  std::unique_ptr<Log> log_;
  int32_t epoch_ = 0;
  uint64_t next_id_ = 1;

  // The model: the batches the live log holds (by base offset; below the log start too, until
  // their segment is deleted), every version appended at each base since the last recovery
  // (truncation makes several), batches of failed appends, the log start offset (as checkpointed)
  // and the offset below which the test flushed.
  std::map<int64_t, ModelBatch> model_;
  std::map<int64_t, std::vector<ModelBatch>> versions_;
  std::vector<ModelBatch> tentative_;
  int64_t start_ = 0;
  int64_t flushed_ = 0;
  std::vector<std::string> history_;
  bool ended_ = false;  // an undetectable corruption made the model moot
};

void RunVariant(const Variant& variant, int64_t default_sequences) {
  const int64_t sequences = EnvInt("KSIM_LOG_PROPERTY_SEQUENCES", default_sequences);
  const uint64_t first_seed = static_cast<uint64_t>(EnvInt("KSIM_LOG_PROPERTY_SEED", 1));
  Stats stats;
  for (int64_t i = 0; i < sequences; ++i) {
    const uint64_t seed = first_seed + static_cast<uint64_t>(i);
    Sequence sequence(seed, variant, stats);
    sequence.Run();
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "failing sequence (rerun with KSIM_LOG_PROPERTY_SEED=" << seed
                    << " KSIM_LOG_PROPERTY_SEQUENCES=1):\n"
                    << sequence.History();
      return;
    }
  }
  std::printf("[%s] %s\n", variant.name, FormatStats(stats).c_str());
  ::testing::Test::RecordProperty("stats", FormatStats(stats));
  // The runs exercised what they claim to (a generator that never crashed would prove nothing).
  EXPECT_EQ(stats.sequences, static_cast<uint64_t>(sequences));
  if (sequences >= 100) {
    EXPECT_GT(stats.torn_crashes, 0u);
    EXPECT_GT(stats.corrupt_crashes, 0u);
    EXPECT_GT(stats.records_lost_by_crashes, 0u);
    EXPECT_GT(stats.recoveries_with_damage, 0u);
    EXPECT_GT(stats.index_entries_checked, 0u);
    EXPECT_TRUE(!variant.faults || stats.faults_hit > 0);
    EXPECT_TRUE(!variant.truncation || stats.truncations > 0);
    EXPECT_TRUE(!variant.retention || stats.segments_deleted_by_retention > 0);
  }
}

TEST(LogCrashPropertyTest, AppendFlushCrashRecoverKeepsAFlushedPrefix) {
  RunVariant(Variant{"append-flush-crash"}, 1000);
}

TEST(LogCrashPropertyTest, TruncationAndRetentionSurviveCrashes) {
  RunVariant(Variant{"truncation-retention", /*truncation=*/true, /*retention=*/true}, 500);
}

TEST(LogCrashPropertyTest, InjectedDiskErrorsTakeTheLogOfflineAndRecoveryRepairsIt) {
  RunVariant(Variant{"disk-errors", /*truncation=*/false, /*retention=*/false, /*faults=*/true},
             500);
}

// ---- Minimal cases the property test found failing, kept as regressions of the fixes in
// core/storage/log.cc (each failed before its fix; all run).

class LogOnVirtualDiskTest : public ::testing::Test {
 protected:
  LogOnVirtualDiskTest() : disk_(RandomStream(7)) { config_.max_index_size_bytes = 4096; }

  // Appends one batch of `records` records as leader; returns its bytes as stamped.
  // A new log directory, synced, and a log opened in it (null on failure, reported).
  std::unique_ptr<Log> OpenNewLog() {
    EXPECT_TRUE(disk_.CreateDir(kLogDir).ok());
    EXPECT_TRUE(disk_.SyncDir("/").ok());
    EXPECT_TRUE(disk_.SyncDir(kLogParentDir).ok());
    Result<std::unique_ptr<Log>> log = Log::Open(disk_, clock_, kLogDir, config_);
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    return log.ok() ? std::move(log).value() : nullptr;
  }

  void AppendRecords(Log& log, int records) {
    ModelBatch batch;
    batch.timestamp_ms = clock_.NowMs();
    for (int i = 0; i < records; ++i) batch.records.push_back(ModelRecord{next_id_++, 10, false});
    Bytes bytes = Encode(batch);
    ASSERT_TRUE(log.AppendAsLeader(bytes, LeaderEpoch(0)).ok());
  }

  VirtualDisk disk_;
  ManualClock clock_{1'000'000'000'000};
  LogConfig config_;
  uint64_t next_id_ = 1;
};

// Log::Open creates the partition directory and any missing ancestor (here /kafka-logs too) and
// syncs the parent of each, so the directory's own name is durable: flushed records of a new log
// survive a power loss (Kafka fixed the same for segment files in KAFKA-3968 by syncing the
// parent directory).
TEST_F(LogOnVirtualDiskTest, FlushedRecordsOfANewLogSurviveAPowerLoss) {
  {
    Result<std::unique_ptr<Log>> log = Log::Open(disk_, clock_, kLogDir, config_);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    ASSERT_NO_FATAL_FAILURE(AppendRecords(**log, 3));
    ASSERT_TRUE((*log)->Flush().ok());
    disk_.Crash();
  }
  Result<std::unique_ptr<Log>> log = Log::Open(disk_, clock_, kLogDir, config_);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ((*log)->log_end_offset(), Offset(3));
}

// TruncateTo lowers the recovery point to the LEO, so Close()'s flush up to the LEO is a no-op:
// TruncateTo itself syncs the shortened segment (and LogSegment::Close syncs too, like Kafka's
// FileRecords.close), so a power loss after the clean close does not bring the batch back.
TEST_F(LogOnVirtualDiskTest, ClosingATruncatedLogMakesTheTruncationDurable) {
  ASSERT_TRUE(disk_.CreateDir(kLogDir).ok());
  ASSERT_TRUE(disk_.SyncDir("/").ok());
  ASSERT_TRUE(disk_.SyncDir(kLogParentDir).ok());
  {
    Result<std::unique_ptr<Log>> log = Log::Open(disk_, clock_, kLogDir, config_);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    ASSERT_NO_FATAL_FAILURE(AppendRecords(**log, 3));  // offsets 0..2
    ASSERT_NO_FATAL_FAILURE(AppendRecords(**log, 3));  // offsets 3..5
    ASSERT_TRUE((*log)->Flush().ok());
    ASSERT_TRUE((*log)->TruncateTo(Offset(3)).ok());
    ASSERT_TRUE((*log)->Close().ok());
  }
  disk_.Crash();
  Result<std::unique_ptr<Log>> log = Log::Open(disk_, clock_, kLogDir, config_);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ((*log)->log_end_offset(), Offset(3));
}

// TruncateTo(3) lowers the recovery point to 3; the Roll() that follows flushes "up to 3", a
// no-op, and a Flush() later syncs only segment 3: unless TruncateTo syncs segment 0 itself, a
// power loss brings back its old batch at 3..5, overlapping segment 3 (and recovery then cuts a
// segment that reaches past the next one's base offset).
TEST_F(LogOnVirtualDiskTest, TruncatedSegmentDoesNotComeBackOverlappingTheNextOne) {
  ASSERT_TRUE(disk_.CreateDir(kLogDir).ok());
  ASSERT_TRUE(disk_.SyncDir("/").ok());
  ASSERT_TRUE(disk_.SyncDir(kLogParentDir).ok());
  {
    Result<std::unique_ptr<Log>> log = Log::Open(disk_, clock_, kLogDir, config_);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    ASSERT_NO_FATAL_FAILURE(AppendRecords(**log, 3));  // offsets 0..2
    ASSERT_NO_FATAL_FAILURE(AppendRecords(**log, 3));  // offsets 3..5 (B)
    ASSERT_TRUE((*log)->Flush().ok());
    ASSERT_TRUE((*log)->TruncateTo(Offset(3)).ok());
    ASSERT_TRUE((*log)->Roll().ok());
    ASSERT_NO_FATAL_FAILURE(AppendRecords(**log, 3));  // offsets 3..5 (C), in segment 3
    ASSERT_TRUE((*log)->Flush().ok());
  }
  disk_.Crash();
  Result<std::unique_ptr<Log>> log = Log::Open(disk_, clock_, kLogDir, config_);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ((*log)->log_end_offset(), Offset(6));
  EXPECT_LE((*log)->LogSegments().front()->next_offset(), Offset(3));
  std::vector<int64_t> bases;
  ASSERT_TRUE((*log)
                  ->ForEachBatch(Offset(0),
                                 [&](const BatchHeader& header, uint64_t) {
                                   bases.push_back(header.base_offset.value());
                                   return BatchWalk::kContinue;
                                 })
                  .ok());
  EXPECT_EQ(bases, (std::vector<int64_t>{0, 3}));
}

// Three flushed segments, the log start moved to 6 (the first two are deletable). Bit rot in
// segment 0, then an unclean restart with no recovery-point checkpoint (0). Kafka's recoverLog
// would find the damage in segment 0, delete every later segment and start over empty at the log
// start, losing the flushed records 6..8 above it; the same would happen when a deleted segment
// comes back after a power loss (its rename to .deleted never synced) with a torn tail. ksim
// deletes segments wholly below the log start before recovering, so nothing above it is lost.
TEST_F(LogOnVirtualDiskTest, DamageBelowTheLogStartDoesNotCostRecordsAboveIt) {
  ASSERT_TRUE(disk_.CreateDir(kLogDir).ok());
  ASSERT_TRUE(disk_.SyncDir("/").ok());
  ASSERT_TRUE(disk_.SyncDir(kLogParentDir).ok());
  std::string first_segment;
  {
    Result<std::unique_ptr<Log>> log = Log::Open(disk_, clock_, kLogDir, config_);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    ASSERT_NO_FATAL_FAILURE(AppendRecords(**log, 3));  // offsets 0..2
    first_segment = (*log)->active_segment().log_path();
    ASSERT_TRUE((*log)->Roll().ok());
    ASSERT_NO_FATAL_FAILURE(AppendRecords(**log, 3));  // offsets 3..5
    ASSERT_TRUE((*log)->Roll().ok());
    ASSERT_NO_FATAL_FAILURE(AppendRecords(**log, 3));  // offsets 6..8
    ASSERT_TRUE((*log)->Flush().ok());
    ASSERT_TRUE((*log)->MaybeIncrementLogStartOffset(Offset(6)).ok());
  }
  {
    Result<std::unique_ptr<File>> file = disk_.OpenFile(first_segment, OpenMode::kOpenExisting);
    ASSERT_TRUE(file.ok());
    const uint8_t junk = 0x5A;
    ASSERT_TRUE((*file)->WriteAt(40, ByteView(&junk, 1)).ok());  // inside the CRC's coverage
    ASSERT_TRUE((*file)->Sync().ok());
  }
  disk_.Crash();
  LogOpenOptions options;
  options.recovery_point = Offset(0);
  options.log_start_offset = Offset(6);
  Result<std::unique_ptr<Log>> log = Log::Open(disk_, clock_, kLogDir, config_, options);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ((*log)->log_start_offset(), Offset(6));
  EXPECT_EQ((*log)->log_end_offset(), Offset(9));
  EXPECT_TRUE((*log)->recovery_report().first_damage.ok());
}

// baseOffset (and partitionLeaderEpoch) lie outside the CRC, so recovery cannot see them
// damaged by a CRC: a baseOffset at or below the previous batch's last offset is damage (offsets
// must increase, as Kafka's recovery requires); one that jumps forward is kept, as Kafka keeps it
// (a gap is what a truncation into a batch leaves, RecoveryKeepsTheGapATruncationIntoABatchLeaves).
TEST_F(LogOnVirtualDiskTest, RecoveryRejectsABatchWhoseBaseOffsetWasCorrupted) {
  uint64_t second_batch_position = 0;
  std::string segment_path;
  {
    std::unique_ptr<Log> log = OpenNewLog();
    ASSERT_NE(log, nullptr);
    ASSERT_NO_FATAL_FAILURE(AppendRecords(*log, 3));  // offsets 0..2
    second_batch_position = log->active_segment().size();
    ASSERT_NO_FATAL_FAILURE(AppendRecords(*log, 3));  // offsets 3..5
    ASSERT_TRUE(log->Flush().ok());
    segment_path = log->active_segment().log_path();
  }
  // One flipped bit in the second batch's baseOffset (3 becomes 2, overlapping the first
  // batch), then an unclean restart.
  {
    Result<std::unique_ptr<File>> file = disk_.OpenFile(segment_path, OpenMode::kOpenExisting);
    ASSERT_TRUE(file.ok());
    const uint8_t flipped = 0x02;
    ASSERT_TRUE((*file)->WriteAt(second_batch_position + 7, ByteView(&flipped, 1)).ok());
    ASSERT_TRUE((*file)->Sync().ok());
  }
  disk_.Crash();
  Result<std::unique_ptr<Log>> log = Log::Open(disk_, clock_, kLogDir, config_);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  // The damaged batch is cut.
  EXPECT_EQ((*log)->log_end_offset(), Offset(3));
}

// Explore safe seed 706350 at 1.0 and 1.1: a truncation into a batch cuts the whole batch and
// sets the log end to the target (Kafka's Log.truncateTo); appends continue from there, leaving
// a gap in the file. A restart keeps every synced batch after the gap, as Kafka's recovery does
// (offsets increase); ksim's recovery took the gap for damage and cut the synced records.
TEST_F(LogOnVirtualDiskTest, RecoveryKeepsTheGapATruncationIntoABatchLeaves) {
  {
    std::unique_ptr<Log> log = OpenNewLog();
    ASSERT_NE(log, nullptr);
    ASSERT_NO_FATAL_FAILURE(AppendRecords(*log, 3));  // offsets 0..2
    ASSERT_NO_FATAL_FAILURE(AppendRecords(*log, 3));  // offsets 3..5
    ASSERT_TRUE(log->TruncateTo(Offset(4)).ok());     // the batch 3..5 goes, the LEO is 4
    ASSERT_EQ(log->log_end_offset(), Offset(4));
    ASSERT_NO_FATAL_FAILURE(AppendRecords(*log, 2));  // offsets 4..5, after a gap at 3
    ASSERT_TRUE(log->Flush().ok());
  }
  disk_.Crash();
  Result<std::unique_ptr<Log>> log = Log::Open(disk_, clock_, kLogDir, config_);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ((*log)->log_end_offset(), Offset(6));
  EXPECT_TRUE((*log)->recovery_report().first_damage.ok())
      << (*log)->recovery_report().first_damage.ToString();
}

}  // namespace
}  // namespace ksim::sim
