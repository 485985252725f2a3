// KIP-101 leader epoch cache (Kafka's LeaderEpochFileCache); see leader_epoch_cache.h.
#include "core/storage/leader_epoch_cache.h"

#include <algorithm>

#include "core/base/java_numbers.h"

namespace ksim {

LeaderEpochCache::LeaderEpochCache(Env& env, const std::string& partition_dir)
    : checkpoint_(env, JoinPath(partition_dir, std::string(kFileName)), kFileVersion) {}

Result<LeaderEpochCache> LeaderEpochCache::Open(Env& env, const std::string& partition_dir) {
  LeaderEpochCache cache(env, partition_dir);
  KSIM_ASSIGN_OR_RETURN(std::vector<CheckpointLine> lines, cache.checkpoint_.Read());
  for (const CheckpointLine& line : lines) {
    // LeaderEpochCheckpointFile.Formatter: "<epoch> <offset>" split on whitespace.
    const std::vector<std::string_view> fields = SplitOnWhitespace(line.text);
    int32_t epoch = 0;
    int64_t offset = 0;
    if (fields.size() != 2 || !ParseJavaInt32(fields[0], epoch) ||
        !ParseJavaInt64(fields[1], offset)) {
      return cache.checkpoint_.Corruption(line.line_number,
                                          "Malformed line in checkpoint file: '" + line.text + "'");
    }
    const EpochEntry entry{LeaderEpoch(epoch), Offset(offset)};
    if (epoch < 0 || offset < 0) {
      return cache.checkpoint_.Corruption(line.line_number,
                                          "invalid partition leader epoch entry '" + line.text +
                                              "': epoch and offset must not be negative");
    }
    if (!cache.entries_.empty() && (entry.epoch <= cache.entries_.back().epoch ||
                                    entry.start_offset < cache.entries_.back().start_offset)) {
      return cache.checkpoint_.Corruption(
          line.line_number, "leader epoch entry '" + line.text +
                                "' does not follow the previous one: epochs must increase and "
                                "start offsets must not decrease");
    }
    cache.entries_.push_back(entry);
  }
  cache.NoteLatest();
  cache.CheckInvariants();
  return cache;
}

Status LeaderEpochCache::Assign(LeaderEpoch epoch, Offset start_offset, AssignRule rule) {
  KSIM_CHECK(epoch.value() >= 0);
  KSIM_CHECK(start_offset.value() >= 0);
  if (rule == AssignRule::kTruncateConflicting) {
    // 2.1.0's assign: an update unless the latest entry is this epoch from an offset at or
    // before this one; truncateAndAppend keeps the entries before it in both epoch and offset.
    if (!entries_.empty() && entries_.back().epoch == epoch &&
        start_offset >= entries_.back().start_offset) {
      return Status::Ok();
    }
    std::vector<EpochEntry> before = entries_;
    std::erase_if(entries_, [&](const EpochEntry& entry) {
      return !(entry.epoch < epoch && entry.start_offset < start_offset);
    });
    entries_.push_back(EpochEntry{epoch, start_offset});
    NoteLatest();
    CheckInvariants();
    Status flushed = Flush();
    if (!flushed.ok()) {  // left as it was, as below
      entries_ = std::move(before);
      NoteLatest();
    }
    return flushed;
  }
  const bool newer_epoch = entries_.empty() || epoch > entries_.back().epoch;
  const bool not_earlier = entries_.empty() || start_offset >= entries_.back().start_offset;
  // An older or equal epoch, or an offset before the latest epoch's start, means batches came
  // out of order; Kafka keeps the cache as it is (validateAndMaybeWarn).
  if (!newer_epoch || !not_earlier) return Status::Ok();
  entries_.push_back(EpochEntry{epoch, start_offset});
  NoteLatest();
  CheckInvariants();
  Status flushed = Flush();
  // Not kept unwritten: a later Assign of the same epoch (a retried LeaderAndIsr) writes it.
  if (!flushed.ok()) {
    entries_.pop_back();
    NoteLatest();
  }
  return flushed;
}

EpochAndEndOffset LeaderEpochCache::EndOffsetFor(LeaderEpoch requested_epoch, Offset log_end_offset,
                                                 BelowFirstEpoch below_first) const {
  // A bootstrapping follower, or one on an old message format, asks for UNDEFINED_EPOCH.
  if (requested_epoch == kUndefinedEpoch) return EpochAndEndOffset{};
  if (requested_epoch == LatestEpoch()) return EpochAndEndOffset{requested_epoch, log_end_offset};
  // The first epoch after the requested one ends it; the epoch it ends is the last one not
  // after the requested one (KIP-279), which may be an earlier epoch than requested.
  const auto subsequent =
      std::find_if(entries_.begin(), entries_.end(),
                   [&](const EpochEntry& entry) { return entry.epoch > requested_epoch; });
  if (subsequent == entries_.end()) return EpochAndEndOffset{};
  if (subsequent == entries_.begin()) {  // every entry is after the requested epoch
    if (below_first == BelowFirstEpoch::kUndefined) return EpochAndEndOffset{};
    return EpochAndEndOffset{requested_epoch, subsequent->start_offset};
  }
  const EpochEntry& previous = *(subsequent - 1);
  KSIM_CHECK(previous.epoch <= requested_epoch);
  return EpochAndEndOffset{previous.epoch, subsequent->start_offset};
}

EpochAndEndOffset LeaderEpochCache::EndOffsetOnlyFor(LeaderEpoch requested_epoch,
                                                     Offset log_end_offset) const {
  // LeaderEpochFileCache.endOffsetFor at 0.11.0.0 and 1.1.0: no special case for
  // UNDEFINED_EPOCH, so a follower without epochs asking a leader without epochs gets its LEO.
  if (requested_epoch == LatestEpoch()) return EpochAndEndOffset{kUndefinedEpoch, log_end_offset};
  const auto subsequent =
      std::find_if(entries_.begin(), entries_.end(),
                   [&](const EpochEntry& entry) { return entry.epoch > requested_epoch; });
  if (subsequent == entries_.end() || requested_epoch < entries_.front().epoch) {
    return EpochAndEndOffset{};
  }
  return EpochAndEndOffset{kUndefinedEpoch, subsequent->start_offset};
}

Status LeaderEpochCache::TruncateFromEnd(Offset end_offset) {
  if (end_offset.value() < 0 || entries_.empty() || end_offset > entries_.back().start_offset) {
    return Status::Ok();
  }
  std::erase_if(entries_,
                [&](const EpochEntry& entry) { return entry.start_offset >= end_offset; });
  NoteLatest();
  CheckInvariants();
  return Flush();
}

Status LeaderEpochCache::TruncateFromStart(Offset start_offset) {
  if (start_offset.value() < 0 || entries_.empty() ||
      entries_.front().start_offset >= start_offset) {
    return Status::Ok();
  }
  // Entries that start before the new log start; the last of them covers `start_offset` unless
  // the next entry starts exactly there.
  const auto first_kept =
      std::find_if(entries_.begin(), entries_.end(),
                   [&](const EpochEntry& entry) { return entry.start_offset >= start_offset; });
  KSIM_CHECK(first_kept != entries_.begin());
  const EpochEntry covering = *(first_kept - 1);
  entries_.erase(entries_.begin(), first_kept);
  if (entries_.empty() || start_offset < entries_.front().start_offset) {
    entries_.insert(entries_.begin(), EpochEntry{covering.epoch, start_offset});
  }
  NoteLatest();
  CheckInvariants();
  return Flush();
}

Status LeaderEpochCache::ClearAndFlush() {
  entries_.clear();
  NoteLatest();
  return Flush();
}

Status LeaderEpochCache::Flush() {
  std::vector<std::string> lines;
  lines.reserve(entries_.size());
  for (const EpochEntry& entry : entries_) {
    lines.push_back(ToString(entry.epoch) + " " + ToString(entry.start_offset));
  }
  return checkpoint_.Write(lines);
}

void LeaderEpochCache::CheckInvariants() const {
  KSIM_CHECK(latest_ == (entries_.empty() ? kUndefinedEpoch : entries_.back().epoch));
  for (size_t i = 0; i < entries_.size(); ++i) {
    KSIM_CHECK(entries_[i].epoch.value() >= 0);
    KSIM_CHECK(entries_[i].start_offset.value() >= 0);
    if (i > 0) {
      KSIM_CHECK(entries_[i - 1].epoch < entries_[i].epoch);
      KSIM_CHECK(entries_[i - 1].start_offset <= entries_[i].start_offset);
    }
  }
}

}  // namespace ksim
