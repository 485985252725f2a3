// OffsetIndex: the sparse offset index of one segment (`<base offset>.index`), after Kafka's
// kafka.log.OffsetIndex. Each 8-byte entry maps an offset to the byte position in the segment's
// .log file where the append holding it begins:
//
//   relativeOffset: int32 (big endian)  offset - base offset of the segment
//   position:       int32 (big endian)  byte position in the .log file
//
// The segment adds an entry only when more than index.interval.bytes were appended since the
// last one, so the index is sparse: Lookup(offset) gives the greatest indexed offset <= offset
// (or the base offset at position 0), and the segment scans forward from there. Entries are
// strictly increasing in both offset and position. Mapping, preallocation, trimming and
// ownership: core/storage/abstract_index.h. Formats: docs/storage.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/storage/abstract_index.h"

namespace ksim {

struct OffsetPosition {
  Offset offset{0};
  int32_t position = 0;
  friend bool operator==(const OffsetPosition&, const OffsetPosition&) = default;
};

class OffsetIndex final : public AbstractIndex {
 public:
  static constexpr size_t kEntrySize = 8;

  // Opens the index at `path`, creating it (preallocated) when missing. REQUIRES: base >= 0.
  static Result<std::unique_ptr<OffsetIndex>> Open(Env& env, const std::string& path,
                                                   Offset base_offset,
                                                   int64_t max_index_size_bytes) {
    return OpenAs<OffsetIndex>(env, path, base_offset, max_index_size_bytes);
  }

  // The offset of the last entry, or the base offset when there is none.
  Offset last_offset() const { return last_offset_; }

  // The entry with the greatest offset <= `target`, or {base offset, 0} when there is none.
  OffsetPosition Lookup(Offset target) const;
  // The entry with the smallest position >= fetch.position + fetch_size, if any (Kafka's
  // fetchUpperBoundOffset: where a read of `fetch_size` bytes from `fetch` must stop at latest).
  std::optional<OffsetPosition> FetchUpperBoundOffset(OffsetPosition fetch,
                                                      int32_t fetch_size) const;
  // REQUIRES: n < entries().
  OffsetPosition EntryAt(size_t n) const;

  // Adds an entry. Fails with kInvalidArgument when the index is full, or when `offset` is not
  // greater than the last entry's (Kafka's InvalidOffsetException), or does not fit a relative
  // offset, or `position` is negative or not greater than the last entry's.
  Status Append(Offset offset, int32_t position);
  // Removes every entry with an offset >= `offset`.
  void TruncateTo(Offset offset);

  // Checks what an index read back from disk must satisfy (Kafka's sanityCheck, made stricter):
  // the length is a multiple of 8, relative offsets and positions strictly increase, every
  // position lies inside the .log file of `log_size_bytes`. kCorruption names the first problem.
  Status SanityCheck(uint64_t log_size_bytes) const;

 private:
  friend class AbstractIndex;  // OpenAs
  using AbstractIndex::AbstractIndex;
  void OnEntriesChanged() override;
  int32_t RelativeOffsetAt(size_t n) const;
  int32_t PositionAt(size_t n) const;
  // The slot of the greatest entry with offset <= target, or -1.
  int64_t LargestLowerBoundSlot(Offset target) const;

  Offset last_offset_{0};
};

}  // namespace ksim
