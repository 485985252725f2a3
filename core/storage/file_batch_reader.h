// FileBatchReader: walks the record batches of a .log file (Kafka's FileLogInputStream /
// FileRecords.batchesFrom), reading through a buffer. It stops at the end, at a partial batch (a
// torn write, or the end of a read window), or at a header that cannot be parsed (damage,
// reported by damage()); only I/O errors are returned as errors. With `whole_batches` each batch's
// bytes are available through batch() (recovery, dump-log); otherwise only headers are read
// (index lookups, scans). The CRC is not checked here: callers that need it call VerifyBatch.
//
// The reader borrows the File, which must outlive it; single-threaded.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/base/bytes.h"
#include "core/base/check.h"
#include "core/base/status.h"
#include "core/env/env.h"
#include "core/record/record_batch.h"

namespace ksim {

// Walks consecutive batches of a .log file between two positions, reading through a buffer.
// Stops at the end, at a partial batch (torn write, or the end of a read window), or at a header
// that cannot be parsed (damage, reported in damage()). With `whole_batches` the batch bytes are
// available through batch(); otherwise only headers are read.
class FileBatchReader {
 public:
  FileBatchReader(const File& file, uint64_t position, uint64_t end, bool whole_batches)
      : file_(file), position_(position), end_(end), whole_batches_(whole_batches) {}

  // Advances to the next batch: true when there is one, false at the end (see partial() and
  // damage()). Only I/O errors are returned as errors.
  Result<bool> Next();

  const BatchHeader& header() const { return header_; }
  uint64_t position() const { return position_; }
  uint64_t size() const { return current_size_; }
  // REQUIRES: whole_batches and Next() returned true.
  ByteView batch() const {
    KSIM_CHECK(whole_batches_ && has_current_);
    return ByteView(At(position_), current_size_);
  }
  bool partial() const { return partial_; }
  const Status& damage() const { return damage_; }
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  Result<bool> Partial() {
    partial_ = true;
    return false;
  }
  Result<bool> Damage(const std::string& what);
  const uint8_t* At(uint64_t position) const {
    KSIM_CHECK(position >= buffer_start_ && position - buffer_start_ < buffered_);
    return buffer_.get() + (position - buffer_start_);
  }
  // Makes [position, position + length) available in the buffer.
  Status Ensure(uint64_t position, uint64_t length);

  const File& file_;
  uint64_t position_;
  uint64_t end_;
  bool whole_batches_;
  // The bytes read ahead: [buffer_start_, buffer_start_ + buffered_) of the file, in a buffer
  // of buffer_capacity_ bytes that is never zero-filled (every byte used was read first).
  std::unique_ptr<uint8_t[]> buffer_;
  size_t buffer_capacity_ = 0;
  size_t buffered_ = 0;
  uint64_t buffer_start_ = 0;
  uint64_t bytes_read_ = 0;
  BatchHeader header_;
  uint64_t current_size_ = 0;
  uint64_t last_size_ = 0;
  bool has_current_ = false;
  bool partial_ = false;
  Status damage_;
};

}  // namespace ksim
