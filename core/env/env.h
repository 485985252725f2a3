// The Env seam: every file the storage engine touches goes through an Env (after LevelDB's
// include/leveldb/env.h). core/env/posix_env.h is the real one (pwrite/pread, fsync, mmap'd index);
// sim/ has a virtual disk that keeps page-cache bytes apart from durable bytes so that a crash
// can drop what was never synced (sim/world/virtual_disk.h, docs/virtual-disk.md). Both pass the
// same contract tests (tests/support/core/env_contract.h).
//
// Paths are '/'-separated strings. Errors are Status values: kNotFound, kAlreadyExists,
// kIoError (EIO), kNoSpace (ENOSPC), kInvalidArgument (e.g. removing a non-empty directory);
// messages name the path. An Env and its files are used from one thread at a time; an Env
// outlives the files it opened. Closing is destruction: a File or MappedFile closes on delete.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/status.h"

namespace ksim {

// The receiving end of a send: a socket or pipe on a real machine (fd() >= 0, so that
// File::TransferTo can sendfile(2) into it), or an in-memory buffer in the simulator.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // The descriptor sendfile(2) may write to, or -1 when the sink is not a descriptor.
  virtual int fd() const { return -1; }
  // Takes bytes sent from a user-space buffer (write(2)/send(2) on a real descriptor).
  virtual Status Send(ByteView bytes) = 0;
};

// An open regular file. Writes go to the end (Append) or, for rewriting a header, anywhere
// (WriteAt); nothing written is durable until Sync() returns ok.
class File {
 public:
  virtual ~File() = default;

  virtual Status Append(ByteView data) = 0;
  virtual Status WriteAt(uint64_t position, ByteView data) = 0;
  // Reads up to out.size() bytes at `position`; fewer only at end of file. Returns the count.
  virtual Result<size_t> ReadAt(uint64_t position, MutableByteView out) const = 0;
  // Makes every byte written so far durable (fsync).
  virtual Status Sync() = 0;
  // Shrinks (or extends with zeros) to `size` bytes.
  virtual Status Truncate(uint64_t size) = 0;
  // The file's length as this handle knows it (written through this handle or found at open).
  virtual uint64_t Size() const = 0;
  virtual const std::string& path() const = 0;

  // Sends up to `count` bytes from `position` to `sink` without passing them through a user
  // buffer: sendfile(2), Kafka's FileRecords.writeTo -> FileChannel.transferTo. Returns the
  // count sent, fewer only at end of file (or when a descriptor sink accepts fewer). The
  // default falls back to CopyTo.
  virtual Result<size_t> TransferTo(uint64_t position, size_t count, ByteSink& sink);
  // The classic path the zero-copy lesson compares against: read(2) into a user buffer, then
  // send(2) it (4 copies, 4 context switches). Returns the count sent.
  virtual Result<size_t> CopyTo(uint64_t position, size_t count, ByteSink& sink);
};

// A file mapped into memory at a fixed length (the offset and time indexes, as Kafka mmaps
// them). Stores through data() reach the file; Flush() makes them durable (msync).
class MappedFile {
 public:
  virtual ~MappedFile() = default;

  virtual MutableByteView data() = 0;
  virtual ByteView data() const = 0;
  // The mapping's length: data().size(), without making a sparse mapping whole.
  virtual uint64_t length() const { return data().size(); }
  // The `count` bytes at `offset` of data(), for an index reading or storing one entry. A sparse
  // file (the simulator's disk: docs/virtual-disk.md) holds only the bytes stored into it, so
  // a 10 MiB preallocated index costs what its entries do; data() would make it whole.
  // The view is valid until the next call on the mapping. REQUIRES: offset + count <= length().
  virtual MutableByteView Window(uint64_t offset, size_t count) {
    return data().subspan(offset, count);
  }
  virtual ByteView Window(uint64_t offset, size_t count) const {
    return data().subspan(offset, count);
  }
  // Changes the file's and the mapping's length (Kafka's AbstractIndex.resize); data() is
  // invalidated. Bytes past the old length read as zero. A zero length maps nothing.
  virtual Status Resize(uint64_t length) = 0;
  // Makes stores through data() durable (msync).
  virtual Status Flush() = 0;
  virtual const std::string& path() const = 0;
};

enum class OpenMode {
  kOpenExisting,     // fail with kNotFound when missing
  kCreateIfMissing,  // open, or create empty
  kCreateNew,        // fail with kAlreadyExists when present
  kTruncate,         // create or empty an existing file
};

class Env {
 public:
  virtual ~Env() = default;

  virtual Result<std::unique_ptr<File>> OpenFile(const std::string& path, OpenMode mode) = 0;
  // Maps `path`, creating it when missing. A `length` >= 0 sets the file's length first
  // (preallocation); -1 maps it at its current length.
  virtual Result<std::unique_ptr<MappedFile>> MapFile(const std::string& path, int64_t length) = 0;

  virtual bool FileExists(const std::string& path) = 0;
  virtual Result<uint64_t> FileSize(const std::string& path) = 0;
  // Atomically replaces `to` with `from` (rename(2)); durable after SyncDir of the parent(s).
  // `from` may be a directory (Kafka renames a partition directory to delete it); `to` must
  // then be missing or an empty directory.
  virtual Status RenameFile(const std::string& from, const std::string& to) = 0;
  virtual Status RemoveFile(const std::string& path) = 0;
  // Names (not paths) of a directory's entries, sorted, without "." and "..".
  virtual Result<std::vector<std::string>> ListDir(const std::string& dir) = 0;
  // Creates `dir` and missing parents; ok when it exists.
  virtual Status CreateDir(const std::string& dir) = 0;
  // Removes an empty directory.
  virtual Status RemoveDir(const std::string& dir) = 0;
  virtual bool DirExists(const std::string& dir) = 0;
  // Makes the directory's entries (creations, renames, removals) durable (fsync of the dir).
  virtual Status SyncDir(const std::string& dir) = 0;
};

// Joins path components with '/'.
std::string JoinPath(const std::string& dir, const std::string& name);

// A sink that appends what it is sent to a buffer (tests, the simulator's socket buffer).
class BufferSink : public ByteSink {
 public:
  Status Send(ByteView bytes) override {
    bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
    return Status::Ok();
  }
  const Bytes& bytes() const { return bytes_; }
  Bytes& bytes() { return bytes_; }

 private:
  Bytes bytes_;
};

// Reads the whole of a file (for tests and tools).
Result<Bytes> ReadWholeFile(Env& env, const std::string& path);
// Removes a directory tree (files first); ok when `dir` is missing.
Status RemoveTree(Env& env, const std::string& dir);

}  // namespace ksim
