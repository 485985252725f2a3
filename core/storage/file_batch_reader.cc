#include "core/storage/file_batch_reader.h"

#include <algorithm>

#include "core/base/big_endian.h"

namespace ksim {
namespace {

// Chunk sizes for walking a .log file: headers alone are small, whole batches (recovery) are read
// in large chunks so that a segment is verified with few reads.
constexpr size_t kHeaderScanChunkBytes = 4096;
constexpr size_t kBatchScanChunkBytes = 1 << 20;
constexpr size_t kBatchLengthPos = 8;
constexpr size_t kMagicPos = 16;

}  // namespace

Result<bool> FileBatchReader::Next() {
  if (has_current_) position_ += current_size_;
  has_current_ = false;
  if (!damage_.ok() || partial_ || position_ >= end_) return false;
  const uint64_t remaining = end_ - position_;
  if (remaining < kLogOverhead) return Partial();
  KSIM_RETURN_IF_ERROR(Ensure(position_, std::min<uint64_t>(remaining, kBatchHeaderSize)));
  const uint8_t* p = At(position_);
  const auto batch_length = static_cast<int32_t>(LoadBigEndian32(p + kBatchLengthPos));
  // Record batch v2 or a message format v0/v1 entry: the magic at byte 16 says which, and how
  // small the entry may be (core/record/legacy_record.h).
  const std::optional<int32_t> min_length =
      MinEntryLength(ByteView(p, std::min<uint64_t>(remaining, kMagicPos + 1)));
  if (!min_length) {
    return Damage("magic " + std::to_string(static_cast<int8_t>(p[kMagicPos])) +
                  " is not 0, 1 or 2");
  }
  if (batch_length < *min_length) {
    return Damage("batch length " + std::to_string(batch_length) + " is below the minimum " +
                  std::to_string(*min_length));
  }
  const uint64_t size = kLogOverhead + static_cast<uint64_t>(batch_length);
  if (size > remaining) return Partial();
  // A v0/v1 entry may be shorter than a v2 header: parse only what is there.
  Result<BatchHeader> header =
      ParseBatchHeader(ByteView(p, std::min<uint64_t>(size, kBatchHeaderSize)));
  if (!header.ok()) return Damage(header.status().message());
  if (whole_batches_) KSIM_RETURN_IF_ERROR(Ensure(position_, size));
  header_ = *header;
  current_size_ = size;
  has_current_ = true;
  last_size_ = size;
  return true;
}

Result<bool> FileBatchReader::Damage(const std::string& what) {
  damage_ = Status(Errc::kCorruption, "batch at position " + std::to_string(position_) + " in " +
                                          file_.path() + ": " + what);
  return false;
}

Status FileBatchReader::Ensure(uint64_t position, uint64_t length) {
  KSIM_CHECK(position + length <= end_);
  if (position >= buffer_start_ && position + length <= buffer_start_ + buffered_) {
    return Status::Ok();
  }
  // Read ahead by a chunk, except when batches are big: then a header costs a header.
  size_t chunk = whole_batches_ ? kBatchScanChunkBytes : kHeaderScanChunkBytes;
  if (!whole_batches_ && last_size_ > chunk) chunk = kBatchHeaderSize;
  const uint64_t want = std::min<uint64_t>(std::max<uint64_t>(length, chunk), end_ - position);
  if (want > buffer_capacity_) {
    buffer_ = std::make_unique_for_overwrite<uint8_t[]>(want);
    buffer_capacity_ = want;
  }
  buffered_ = 0;  // the read below replaces what was held
  KSIM_ASSIGN_OR_RETURN(size_t got, file_.ReadAt(position, MutableByteView(buffer_.get(), want)));
  bytes_read_ += got;
  buffer_start_ = position;
  buffered_ = got;
  if (got < length) {
    return Status(Errc::kIoError, "short read of " + file_.path() + " at " +
                                      std::to_string(position) + ": " + std::to_string(got) +
                                      " of " + std::to_string(length) + " bytes");
  }
  return Status::Ok();
}

}  // namespace ksim
