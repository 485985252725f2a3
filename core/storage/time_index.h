// TimeIndex: the time index of one segment (`<base offset>.timeindex`), after Kafka's
// kafka.log.TimeIndex (KIP-33). Each 12-byte entry says "the greatest timestamp seen up to this
// offset":
//
//   timestamp:      int64 (big endian)  milliseconds, the max timestamp so far in the segment
//   relativeOffset: int32 (big endian)  offset - base offset of the batch holding it
//
// Entries are added together with offset-index entries, and only when the timestamp grows, so
// timestamps strictly increase and offsets never decrease. Lookup(t) gives the greatest entry
// with timestamp <= t; a search for the first record at or after t starts scanning there. One slot
// is kept free for the entry a segment writes when it is rolled or closed, so the index counts as
// full one entry early. Mapping and ownership: core/storage/abstract_index.h. Formats:
// docs/storage.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/storage/abstract_index.h"

namespace ksim {

struct TimestampOffset {
  int64_t timestamp_ms = kNoTimestamp;
  Offset offset{0};
  friend bool operator==(const TimestampOffset&, const TimestampOffset&) = default;
};

class TimeIndex final : public AbstractIndex {
 public:
  static constexpr size_t kEntrySize = 12;

  // Opens the index at `path`, creating it (preallocated) when missing. REQUIRES: base >= 0.
  static Result<std::unique_ptr<TimeIndex>> Open(Env& env, const std::string& path,
                                                 Offset base_offset, int64_t max_index_size_bytes) {
    return OpenAs<TimeIndex>(env, path, base_offset, max_index_size_bytes);
  }

  // Full one entry early: the last slot is reserved for the roll/close entry.
  bool IsFull() const override { return entries() + 1 >= max_entries(); }

  // The last entry, or {kNoTimestamp, base offset} when there is none.
  TimestampOffset last_entry() const { return last_entry_; }
  // The entry with the greatest timestamp <= `timestamp_ms`, or {kNoTimestamp, base offset}.
  TimestampOffset Lookup(int64_t timestamp_ms) const;
  // REQUIRES: n < entries().
  TimestampOffset EntryAt(size_t n) const;

  // Adds {timestamp, offset} when the timestamp is greater than the last entry's; otherwise does
  // nothing. Fails with kInvalidArgument when the index is full (unless skip_full_check and a
  // slot is left), or when `offset` is below the last entry's or not relative to the base, or
  // `timestamp_ms` is below the last entry's.
  Status MaybeAppend(int64_t timestamp_ms, Offset offset, bool skip_full_check = false);
  // Removes every entry with an offset >= `offset`.
  void TruncateTo(Offset offset);

  // Checks an index read back from disk: the length is a multiple of 12, timestamps strictly
  // increase, relative offsets are >= 0 and never decrease. kCorruption names the problem.
  Status SanityCheck() const;

 private:
  friend class AbstractIndex;  // OpenAs
  using AbstractIndex::AbstractIndex;
  void OnEntriesChanged() override;
  int64_t TimestampAt(size_t n) const;
  int32_t RelativeOffsetAt(size_t n) const;

  TimestampOffset last_entry_;
};

}  // namespace ksim
