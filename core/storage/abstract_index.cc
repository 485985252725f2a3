// Shared mechanics of the mmap'd indexes. See core/storage/abstract_index.h.
#include "core/storage/abstract_index.h"

#include <limits>
#include <utility>

#include "core/base/check.h"

namespace ksim {

AbstractIndex::AbstractIndex(std::string path, std::unique_ptr<MappedFile> mapping,
                             Offset base_offset, int64_t max_index_size_bytes, size_t entry_size,
                             bool newly_created)
    : path_(std::move(path)),
      mapping_(std::move(mapping)),
      base_offset_(base_offset),
      max_index_size_bytes_(max_index_size_bytes),
      entry_size_(entry_size) {
  KSIM_CHECK(mapping_ != nullptr);
  KSIM_CHECK(entry_size_ > 0);
  length_ = mapping_->length();
  max_entries_ = length_ / entry_size_;
  // A new index starts empty; an existing one is assumed to hold whole entries up to its length.
  entries_ = newly_created ? 0 : max_entries_;
}

Result<std::unique_ptr<MappedFile>> AbstractIndex::OpenMapping(Env& env, const std::string& path,
                                                               int64_t max_index_size_bytes,
                                                               size_t entry_size,
                                                               bool* newly_created) {
  KSIM_CHECK(max_index_size_bytes >= 0);
  *newly_created = !env.FileExists(path);
  const int64_t length =
      *newly_created ? RoundDownToMultiple(max_index_size_bytes, static_cast<int64_t>(entry_size))
                     : -1;
  return env.MapFile(path, length);
}

Status AbstractIndex::Resize(int64_t new_size) {
  KSIM_CHECK(new_size >= 0);
  const int64_t rounded = RoundDownToMultiple(new_size, static_cast<int64_t>(entry_size_));
  KSIM_CHECK_MSG(static_cast<uint64_t>(rounded) >= size_in_bytes(),
                 "index resized below its entries");
  if (static_cast<uint64_t>(rounded) == length_) return Status::Ok();
  KSIM_RETURN_IF_ERROR(mapping_->Resize(static_cast<uint64_t>(rounded)));
  length_ = mapping_->length();
  KSIM_CHECK(length_ == static_cast<uint64_t>(rounded));
  max_entries_ = length_ / entry_size_;
  return Status::Ok();
}

Status AbstractIndex::Reset() {
  Truncate();
  return Resize(max_index_size_bytes_);
}

Status AbstractIndex::Flush() { return mapping_->Flush(); }

const uint8_t* AbstractIndex::EntryData(size_t n) const {
  KSIM_CHECK(n < max_entries_);
  KSIM_CHECK((n + 1) * entry_size_ <= length_);
  const ByteView entry = std::as_const(*mapping_).Window(n * entry_size_, entry_size_);
  KSIM_CHECK(entry.size() == entry_size_);
  return entry.data();
}

uint8_t* AbstractIndex::MutableEntryData(size_t n) {
  KSIM_CHECK(n < max_entries_);
  KSIM_CHECK((n + 1) * entry_size_ <= length_);
  const MutableByteView entry = mapping_->Window(n * entry_size_, entry_size_);
  KSIM_CHECK(entry.size() == entry_size_);
  return entry.data();
}

void AbstractIndex::CommitAppend() {
  KSIM_CHECK(entries_ < max_entries_);
  ++entries_;
  OnEntriesChanged();
}

void AbstractIndex::TruncateToEntries(size_t n) {
  KSIM_CHECK(n <= entries_);
  entries_ = n;
  OnEntriesChanged();
}

int64_t AbstractIndex::RelativeOffset(Offset offset) const {
  // Compare before subtracting: offsets read from damaged files can be anything.
  if (offset < base_offset_) return -1;
  const int64_t relative = offset - base_offset_;  // cannot overflow: both are >= base >= 0
  if (relative > std::numeric_limits<int32_t>::max()) return -1;
  return relative;
}

}  // namespace ksim
