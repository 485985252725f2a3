// Time index. See core/storage/time_index.h and docs/storage.md.
#include "core/storage/time_index.h"

#include <string>
#include <utility>

#include "core/base/big_endian.h"
#include "core/base/check.h"

namespace ksim {

int64_t TimeIndex::TimestampAt(size_t n) const {
  return static_cast<int64_t>(LoadBigEndian64(EntryData(n)));
}

int32_t TimeIndex::RelativeOffsetAt(size_t n) const {
  return static_cast<int32_t>(LoadBigEndian32(EntryData(n) + 8));
}

TimestampOffset TimeIndex::EntryAt(size_t n) const {
  KSIM_CHECK(n < entries());
  return TimestampOffset{TimestampAt(n), base_offset() + RelativeOffsetAt(n)};
}

void TimeIndex::OnEntriesChanged() {
  last_entry_ =
      entries() == 0 ? TimestampOffset{kNoTimestamp, base_offset()} : EntryAt(entries() - 1);
}

TimestampOffset TimeIndex::Lookup(int64_t timestamp_ms) const {
  const int64_t slot =
      LargestLowerBoundSlot(timestamp_ms, [this](size_t n) { return TimestampAt(n); });
  if (slot < 0) return TimestampOffset{kNoTimestamp, base_offset()};
  return EntryAt(static_cast<size_t>(slot));
}

Status TimeIndex::MaybeAppend(int64_t timestamp_ms, Offset offset, bool skip_full_check) {
  if ((!skip_full_check && IsFull()) || entries() >= max_entries()) {
    return Status(Errc::kInvalidArgument, "attempt to append to a full time index " + path() +
                                              " (" + std::to_string(entries()) + " entries)");
  }
  if (entries() != 0 && offset < last_entry_.offset) {
    return Status(Errc::kInvalidArgument, "attempt to append offset " + ToString(offset) +
                                              " below the last offset " +
                                              ToString(last_entry_.offset) + " to " + path());
  }
  if (entries() != 0 && timestamp_ms < last_entry_.timestamp_ms) {
    return Status(Errc::kInvalidArgument,
                  "attempt to append timestamp " + std::to_string(timestamp_ms) +
                      " below the last timestamp " + std::to_string(last_entry_.timestamp_ms) +
                      " to " + path());
  }
  // Only a greater timestamp is worth an entry; records without timestamps (-1) never add one.
  if (timestamp_ms <= last_entry_.timestamp_ms) return Status::Ok();
  const int64_t relative = RelativeOffset(offset);
  if (relative < 0) {
    return Status(Errc::kInvalidArgument, "offset " + ToString(offset) +
                                              " cannot be relative to base " +
                                              ToString(base_offset()) + " in " + path());
  }
  uint8_t* entry = MutableEntryData(entries());
  StoreBigEndian64(entry, static_cast<uint64_t>(timestamp_ms));
  StoreBigEndian32(entry + 8, static_cast<uint32_t>(relative));
  CommitAppend();
  KSIM_CHECK(last_entry_.timestamp_ms == timestamp_ms && last_entry_.offset == offset);
  return Status::Ok();
}

void TimeIndex::TruncateTo(Offset offset) {
  // Offsets never decrease, so the entries to keep are a prefix: those with offset < `offset`.
  size_t keep = entries();
  while (keep > 0 && base_offset() + RelativeOffsetAt(keep - 1) >= offset) --keep;
  TruncateToEntries(keep);
}

Status TimeIndex::SanityCheck() const {
  if (length() % kEntrySize != 0) {
    return Status(Errc::kCorruption, "time index " + path() + " is " + std::to_string(length()) +
                                         " bytes, not a multiple of " + std::to_string(kEntrySize));
  }
  for (size_t n = 0; n < entries(); ++n) {
    const int64_t timestamp = TimestampAt(n);
    const int32_t relative = RelativeOffsetAt(n);
    const bool ordered =
        n == 0 || (timestamp > TimestampAt(n - 1) && relative >= RelativeOffsetAt(n - 1));
    if (timestamp < 0 || relative < 0 || !ordered) {
      return Status(Errc::kCorruption, "time index " + path() + " entry " + std::to_string(n) +
                                           " (timestamp " + std::to_string(timestamp) +
                                           ", relative offset " + std::to_string(relative) +
                                           ") is out of order");
    }
  }
  return Status::Ok();
}

}  // namespace ksim
