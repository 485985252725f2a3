// LeaderEpochCache: a replica's record of where each leader epoch began in its log (KIP-101,
// Kafka's LeaderEpochFileCache). Entries are (epoch, start offset), epochs strictly increasing
// and start offsets non-decreasing. A leader adds an entry when it takes over; every replica adds
// one when it appends the first batch of a newer epoch. A follower that becomes follower asks
// the leader for EndOffsetFor(its latest epoch) and truncates there instead of at its high
// watermark, which is what saves the records KIP-101's scenarios lose.
//
// Semantics, as Kafka 0.11 to 2.0 (KIP-101, with 2.0's KIP-279 (epoch, end offset) answer):
//  - Assign(epoch, offset) appends only when epoch > the latest epoch and offset >= the latest
//    start offset; otherwise it is ignored (Kafka logs a warning: batches out of order). That is
//    0.11 to 2.0.0; 2.1.0 (KAFKA-7415, AssignRule::kTruncateConflicting) writes whenever the epoch
//    differs from the latest or the offset is below its start, and keeps only the entries with
//    both a smaller epoch and a smaller start offset before appending the new one.
//  - EndOffsetFor(e, leo): for e == the latest epoch, (e, leo); for an earlier e, the largest
//    epoch <= e paired with the start offset of the first epoch > e; UNDEFINED (-1, -1) when e is
//    UNDEFINED_EPOCH, above the latest, or the cache is empty. For an e below the first epoch,
//    UNDEFINED as 2.0.0 answers, or (e, the first epoch's start offset) as 2.1.0 does
//    (KAFKA-7415; BelowFirstEpoch).
//  - EndOffsetOnlyFor(e, leo): KIP-101's first answer (0.11.0 to 1.1, OffsetsForLeaderEpoch v0),
//    an offset without an epoch: leo for e == the latest epoch (UNDEFINED_EPOCH too when the
//    cache is empty), else the start offset of the first epoch > e, UNDEFINED_EPOCH_OFFSET when
//    there is none or e is below the first epoch.
//  - TruncateFromEnd(o) drops entries starting at or after o (the log was truncated to o).
//  - TruncateFromStart(o) drops entries wholly before o and moves the epoch that covers o to
//    start at o (the log start moved to o by retention).
//
// Persistence: every change rewrites `leader-epoch-checkpoint` in the partition directory
// through the Env (core/storage/checkpoint_file.h: "0\n<count>\n<epoch> <offset>\n...", atomic). A
// failed write returns the error (Kafka then takes the log directory offline); a failed Assign
// leaves the entries as they were, the other changes stay in memory (they follow the log). Open
// reads the file back; damage is kCorruption naming file and line. One thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/base/types.h"
#include "core/env/env.h"
#include "core/storage/checkpoint_file.h"

namespace ksim {

struct EpochEntry {
  LeaderEpoch epoch;
  Offset start_offset;  // offset of the first record written in this epoch
  friend bool operator==(const EpochEntry&, const EpochEntry&) = default;
};

// The answer to an OffsetsForLeaderEpoch request (KIP-279): the epoch the end offset belongs to.
struct EpochAndEndOffset {
  LeaderEpoch epoch = kUndefinedEpoch;
  Offset end_offset = kUndefinedEpochOffset;
  bool undefined() const { return end_offset == kUndefinedEpochOffset; }
  friend bool operator==(const EpochAndEndOffset&, const EpochAndEndOffset&) = default;
};

class LeaderEpochCache {
 public:
  static constexpr std::string_view kFileName = "leader-epoch-checkpoint";
  static constexpr int32_t kFileVersion = 0;

  // Loads <partition_dir>/leader-epoch-checkpoint (none: an empty cache). kCorruption when a
  // line is malformed, the count is wrong, or entries are negative or out of order.
  static Result<LeaderEpochCache> Open(Env& env, const std::string& partition_dir);

  // REQUIRES: epoch >= 0, start_offset >= 0 (Kafka asserts it).
  // How Assign treats an entry that is not newer than the latest (see the top).
  enum class AssignRule : uint8_t { kNewerOnly, kTruncateConflicting };
  Status Assign(LeaderEpoch epoch, Offset start_offset, AssignRule rule = AssignRule::kNewerOnly);
  // The latest epoch, kUndefinedEpoch when empty.
  LeaderEpoch LatestEpoch() const { return latest_; }
  // What EndOffsetFor answers for an epoch below the first entry's: UNDEFINED (0.11 to 2.0.0),
  // or the epoch asked with the first entry's start offset (2.1.0's LeaderEpochFileCache, the
  // `previousEpochs.isEmpty` case: "the data has already been removed from the log and we want
  // to ensure that the follower can replicate correctly beginning from the leader's start
  // offset").
  enum class BelowFirstEpoch : uint8_t { kUndefined, kFirstStartOffset };
  EpochAndEndOffset EndOffsetFor(LeaderEpoch requested_epoch, Offset log_end_offset,
                                 BelowFirstEpoch below_first = BelowFirstEpoch::kUndefined) const;
  // The 0.11.0 to 1.1 answer (see the top): its epoch is always kUndefinedEpoch.
  EpochAndEndOffset EndOffsetOnlyFor(LeaderEpoch requested_epoch, Offset log_end_offset) const;
  // Kafka's clearAndFlushLatest / truncateFromEnd. A negative offset does nothing.
  Status TruncateFromEnd(Offset end_offset);
  // Kafka's clearAndFlushEarliest / truncateFromStart. A negative offset does nothing.
  Status TruncateFromStart(Offset start_offset);
  // Removes every entry and rewrites the file (clearAndFlush).
  Status ClearAndFlush();

  const std::vector<EpochEntry>& entries() const { return entries_; }
  const std::string& path() const { return checkpoint_.path(); }

 private:
  LeaderEpochCache(Env& env, const std::string& partition_dir);
  Status Flush();
  void CheckInvariants() const;
  // After every change of entries_.
  void NoteLatest() { latest_ = entries_.empty() ? kUndefinedEpoch : entries_.back().epoch; }

  CheckpointFile checkpoint_;
  std::vector<EpochEntry> entries_;
  // entries_.back().epoch (kUndefinedEpoch when empty), kept beside the vector: every append
  // asks for it, and the vector's own memory is one more cache line to fetch.
  LeaderEpoch latest_ = kUndefinedEpoch;
};

}  // namespace ksim
