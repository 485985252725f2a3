// Sparse offset index. See core/storage/offset_index.h and docs/storage.md.
#include "core/storage/offset_index.h"

#include <string>
#include <utility>

#include "core/base/big_endian.h"
#include "core/base/check.h"

namespace ksim {

int32_t OffsetIndex::RelativeOffsetAt(size_t n) const {
  return static_cast<int32_t>(LoadBigEndian32(EntryData(n)));
}

int32_t OffsetIndex::PositionAt(size_t n) const {
  return static_cast<int32_t>(LoadBigEndian32(EntryData(n) + 4));
}

OffsetPosition OffsetIndex::EntryAt(size_t n) const {
  KSIM_CHECK(n < entries());
  return OffsetPosition{base_offset() + RelativeOffsetAt(n), PositionAt(n)};
}

void OffsetIndex::OnEntriesChanged() {
  last_offset_ = entries() == 0 ? base_offset() : base_offset() + RelativeOffsetAt(entries() - 1);
}

int64_t OffsetIndex::LargestLowerBoundSlot(Offset target) const {
  if (target < base_offset()) return -1;
  return AbstractIndex::LargestLowerBoundSlot(target - base_offset(),
                                              [this](size_t n) { return RelativeOffsetAt(n); });
}

OffsetPosition OffsetIndex::Lookup(Offset target) const {
  const int64_t slot = LargestLowerBoundSlot(target);
  if (slot < 0) return OffsetPosition{base_offset(), 0};
  return EntryAt(static_cast<size_t>(slot));
}

std::optional<OffsetPosition> OffsetIndex::FetchUpperBoundOffset(OffsetPosition fetch,
                                                                 int32_t fetch_size) const {
  const int64_t target = int64_t{fetch.position} + fetch_size;
  const int64_t slot =
      SmallestUpperBoundSlot(target, [this](size_t n) { return int64_t{PositionAt(n)}; });
  if (slot < 0) return std::nullopt;
  return EntryAt(static_cast<size_t>(slot));
}

Status OffsetIndex::Append(Offset offset, int32_t position) {
  if (IsFull()) {
    return Status(Errc::kInvalidArgument, "attempt to append to a full index " + path() + " (" +
                                              std::to_string(entries()) + " entries)");
  }
  if (entries() != 0 && offset <= last_offset_) {
    return Status(Errc::kInvalidArgument, "attempt to append offset " + ToString(offset) +
                                              " no larger than the last offset " +
                                              ToString(last_offset_) + " to " + path());
  }
  const int64_t relative = RelativeOffset(offset);
  if (relative < 0) {
    return Status(Errc::kInvalidArgument, "offset " + ToString(offset) +
                                              " cannot be relative to base " +
                                              ToString(base_offset()) + " in " + path());
  }
  if (position < 0 || (entries() != 0 && position <= PositionAt(entries() - 1))) {
    return Status(Errc::kInvalidArgument,
                  "position " + std::to_string(position) + " out of order in " + path());
  }
  uint8_t* entry = MutableEntryData(entries());
  StoreBigEndian32(entry, static_cast<uint32_t>(relative));
  StoreBigEndian32(entry + 4, static_cast<uint32_t>(position));
  CommitAppend();
  KSIM_CHECK(last_offset_ == offset);
  return Status::Ok();
}

void OffsetIndex::TruncateTo(Offset offset) {
  const int64_t slot = LargestLowerBoundSlot(offset);
  // No entry <= offset: drop all. An entry exactly at offset: drop it and what follows.
  // Otherwise keep the greatest entry below offset.
  size_t keep = 0;
  if (slot >= 0) {
    keep = EntryAt(static_cast<size_t>(slot)).offset == offset ? static_cast<size_t>(slot)
                                                               : static_cast<size_t>(slot) + 1;
  }
  TruncateToEntries(keep);
  KSIM_CHECK(entries() == 0 || last_offset_ < offset);
}

Status OffsetIndex::SanityCheck(uint64_t log_size_bytes) const {
  if (length() % kEntrySize != 0) {
    return Status(Errc::kCorruption, "index " + path() + " is " + std::to_string(length()) +
                                         " bytes, not a multiple of " + std::to_string(kEntrySize));
  }
  for (size_t n = 0; n < entries(); ++n) {
    const int32_t relative = RelativeOffsetAt(n);
    const int32_t position = PositionAt(n);
    const bool ordered =
        n == 0 || (relative > RelativeOffsetAt(n - 1) && position > PositionAt(n - 1));
    if (relative < 0 || position < 0 || !ordered ||
        static_cast<uint64_t>(position) >= log_size_bytes) {
      return Status(Errc::kCorruption, "index " + path() + " entry " + std::to_string(n) +
                                           " (relative offset " + std::to_string(relative) +
                                           ", position " + std::to_string(position) +
                                           ") is out of order or past the end of the log (" +
                                           std::to_string(log_size_bytes) + " bytes)");
    }
  }
  return Status::Ok();
}

}  // namespace ksim
