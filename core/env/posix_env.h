// PosixEnv: the Env of a real machine. Files are descriptors written with pwrite(2) and read
// with pread(2) (EINTR retried, short writes continued); Sync is fsync(2); SyncDir fsyncs the
// directory, which is what makes a creation, rename or removal survive a power loss. Mapped
// files are mmap(MAP_SHARED) as Kafka maps its offset and time indexes: Resize is msync +
// munmap + ftruncate + mmap (AbstractIndex.resize), Flush is msync(MS_SYNC). File::TransferTo
// into a descriptor sink is sendfile(2), the zero-copy path of Kafka's FileRecords.writeTo.
//
// errno maps to Errc: EIO -> kIoError, ENOSPC/EDQUOT -> kNoSpace, ENOENT -> kNotFound,
// EEXIST -> kAlreadyExists, ENOTEMPTY -> kInvalidArgument, anything else -> kIoError; the
// message names the operation, the path and strerror. A PosixEnv has no state: it may be
// shared, but each File is used by one thread at a time. File::Size() is the length this
// handle tracks (found by fstat at open, moved by its own writes), as Kafka's FileRecords does.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/env/env.h"

namespace ksim {

class PosixEnv : public Env {
 public:
  Result<std::unique_ptr<File>> OpenFile(const std::string& path, OpenMode mode) override;
  Result<std::unique_ptr<MappedFile>> MapFile(const std::string& path, int64_t length) override;

  bool FileExists(const std::string& path) override;
  Result<uint64_t> FileSize(const std::string& path) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status RemoveFile(const std::string& path) override;
  Result<std::vector<std::string>> ListDir(const std::string& dir) override;
  Status CreateDir(const std::string& dir) override;
  Status RemoveDir(const std::string& dir) override;
  bool DirExists(const std::string& dir) override;
  Status SyncDir(const std::string& dir) override;
};

// A sink over a descriptor (socket, pipe): File::TransferTo sendfile(2)s into it, Send
// write(2)s (EINTR retried, short writes continued). The sink does not own or close `fd`.
// REQUIRES: `fd` is open and blocking while the sink is used.
class FdSink : public ByteSink {
 public:
  explicit FdSink(int fd) : fd_(fd) {}
  int fd() const override { return fd_; }
  Status Send(ByteView bytes) override;

 private:
  int fd_;
};

// The Status for a failed system call: `operation` ("open", "fsync") on `path`, errno `error`.
Status PosixError(const std::string& operation, const std::string& path, int error);

}  // namespace ksim
