// AbstractIndex: what the offset index (core/storage/offset_index.h) and the time index
// (core/storage/time_index.h) share, after Kafka's kafka.log.AbstractIndex. An index is a file of
// fixed-size entries mapped into memory through Env::MapFile. A new index file is preallocated
// to max_index_size_bytes rounded down to a multiple of the entry size, so that appends are plain
// stores into the mapping; an existing file is mapped at its length and every whole entry in it
// counts (Kafka trusts the length of a pre-existing index and relies on the sanity check and
// recovery to catch damage). The file is trimmed to the entries actually written when the
// segment is rolled or closed (TrimToValidSize), and grown back to the maximum when a segment
// becomes active again (Resize).
//
// Ownership: the index owns its MappedFile; destroying the index unmaps it without trimming (a
// crash leaves the preallocated zeros behind, which the sanity check then rejects). Stores reach
// the page cache at once and become durable at Flush(). Not thread-safe: the segment that owns
// the index uses it from one thread. Formats: docs/storage.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "core/base/check.h"
#include "core/base/status.h"
#include "core/base/types.h"
#include "core/env/env.h"

namespace ksim {

class AbstractIndex {
 public:
  virtual ~AbstractIndex() = default;
  AbstractIndex(const AbstractIndex&) = delete;
  AbstractIndex& operator=(const AbstractIndex&) = delete;

  Offset base_offset() const { return base_offset_; }
  // Entries written (or found at open).
  size_t entries() const { return entries_; }
  // Entries the current mapping can hold.
  size_t max_entries() const { return max_entries_; }
  int64_t max_index_size_bytes() const { return max_index_size_bytes_; }
  size_t entry_size() const { return entry_size_; }
  // Bytes of valid entries (Kafka's sizeInBytes).
  uint64_t size_in_bytes() const { return entries_ * entry_size_; }
  // The file's (and mapping's) current length in bytes.
  uint64_t length() const { return length_; }
  const std::string& path() const { return path_; }
  virtual bool IsFull() const { return entries_ >= max_entries_; }

  // Sets the file and mapping length to `new_size` rounded down to a multiple of the entry size.
  // REQUIRES: the rounded size still holds every entry.
  Status Resize(int64_t new_size);
  // Shrinks the file to exactly the valid entries (on roll and close).
  Status TrimToValidSize() { return Resize(static_cast<int64_t>(size_in_bytes())); }
  // Drops every entry and grows the file back to the maximum size (before a rebuild).
  Status Reset();
  // Drops every entry (Kafka's truncate()).
  void Truncate() { TruncateToEntries(0); }
  // Makes the entries durable (msync).
  Status Flush();

 protected:
  AbstractIndex(std::string path, std::unique_ptr<MappedFile> mapping, Offset base_offset,
                int64_t max_index_size_bytes, size_t entry_size, bool newly_created);

  // Maps `path`: a missing file is created at max_index_size_bytes rounded down to a multiple of
  // `entry_size`; an existing one is mapped at its length. Sets *newly_created.
  static Result<std::unique_ptr<MappedFile>> OpenMapping(Env& env, const std::string& path,
                                                         int64_t max_index_size_bytes,
                                                         size_t entry_size, bool* newly_created);

  const uint8_t* EntryData(size_t n) const;
  uint8_t* MutableEntryData(size_t n);
  // Records that one more entry was stored at slot entries().
  void CommitAppend();
  void TruncateToEntries(size_t n);
  // The relative offset of `offset`, or -1 when it cannot be represented (below the base or more
  // than INT32_MAX past it).
  int64_t RelativeOffset(Offset offset) const;
  // Called when entries() changed so that a subclass can refresh its cached last entry.
  virtual void OnEntriesChanged() = 0;

  // Opens an index of type Index (OffsetIndex, TimeIndex) at `path`: the mapping as OpenMapping
  // makes it, the index over it, its cached last entry loaded. Index befriends AbstractIndex.
  template <class Index>
  static Result<std::unique_ptr<Index>> OpenAs(Env& env, const std::string& path,
                                               Offset base_offset, int64_t max_index_size_bytes);

  // Binary searches over the entries by a key that ascends with the slot, `key_at(n)` being the
  // key of slot n (Kafka's AbstractIndex.indexSlotRangeFor, shared by both indexes).
  // The greatest slot whose key is <= target, or -1 when there is none.
  template <class KeyAt>
  int64_t LargestLowerBoundSlot(int64_t target, KeyAt key_at) const;
  // The smallest slot whose key is >= target, or -1 when there is none.
  template <class KeyAt>
  int64_t SmallestUpperBoundSlot(int64_t target, KeyAt key_at) const;

 private:
  std::string path_;
  std::unique_ptr<MappedFile> mapping_;
  Offset base_offset_;
  int64_t max_index_size_bytes_;
  size_t entry_size_;
  uint64_t length_ = 0;
  size_t entries_ = 0;
  size_t max_entries_ = 0;
};

template <class Index>
Result<std::unique_ptr<Index>> AbstractIndex::OpenAs(Env& env, const std::string& path,
                                                     Offset base_offset,
                                                     int64_t max_index_size_bytes) {
  KSIM_CHECK(base_offset >= Offset(0));
  bool newly_created = false;
  KSIM_ASSIGN_OR_RETURN(
      std::unique_ptr<MappedFile> mapping,
      OpenMapping(env, path, max_index_size_bytes, Index::kEntrySize, &newly_created));
  std::unique_ptr<Index> index(new Index(path, std::move(mapping), base_offset,
                                         max_index_size_bytes, Index::kEntrySize, newly_created));
  index->OnEntriesChanged();
  return index;
}

template <class KeyAt>
int64_t AbstractIndex::LargestLowerBoundSlot(int64_t target, KeyAt key_at) const {
  if (entries_ == 0 || key_at(0) > target) return -1;
  // Invariant: slot lo holds a key <= target; every slot after hi holds one > target.
  size_t lo = 0;
  size_t hi = entries_ - 1;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo + 1) / 2;
    if (key_at(mid) <= target) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return static_cast<int64_t>(lo);
}

template <class KeyAt>
int64_t AbstractIndex::SmallestUpperBoundSlot(int64_t target, KeyAt key_at) const {
  if (entries_ == 0 || key_at(entries_ - 1) < target) return -1;
  // Invariant: slot hi holds a key >= target; every slot before lo holds one < target.
  size_t lo = 0;
  size_t hi = entries_ - 1;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (key_at(mid) >= target) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return static_cast<int64_t>(hi);
}

// Rounds `number` down to a multiple of `factor` (Kafka's roundDownToExactMultiple).
inline int64_t RoundDownToMultiple(int64_t number, int64_t factor) {
  return factor * (number / factor);
}

}  // namespace ksim
