// AtomicFile writes a user-visible output file (a trace, a report) so that readers see either
// the old file or the complete new one, never a torn one: the bytes go to a temporary file in
// the target's directory (".<name>.tmp-<pid>-<n>"), Commit() fsyncs it, renames it over the
// target and fsyncs the directory. If Commit() is never reached (an error, an early return, a
// destroyed writer) the temporary file is removed and the target is untouched.
//
// This writes to the real file system (POSIX), not through core's Env seam: outputs are the
// user's files, not part of the simulated world, and nothing in them depends on the wall clock.
// Not thread-safe; one writer per object. If the process dies before Commit() a temporary file
// may remain (its name starts with '.' and contains ".tmp-").
#pragma once

#include <string>
#include <string_view>

#include "core/base/status.h"

namespace ksim::sim {

class AtomicFile {
 public:
  // Creates the temporary file next to `target_path`. Fails with kNotFound if the directory does
  // not exist, kIoError (with the reason) for other errors.
  static Result<AtomicFile> Create(std::string target_path);

  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  // Abandons the file unless it was committed.
  ~AtomicFile();

  // Appends bytes to the temporary file (write(2) until done, retrying on EINTR).
  // REQUIRES: neither committed nor abandoned.
  Status Append(std::string_view bytes);
  // fsync, close, rename over the target, fsync the directory. On failure the temporary file is
  // removed and the target untouched (unless the failure is the final directory fsync, after
  // which the new file is in place but its durability is unknown: still an error).
  // REQUIRES: neither committed nor abandoned.
  Status Commit();
  // Closes and removes the temporary file; the target is untouched. Idempotent.
  void Abandon();

  const std::string& target_path() const { return target_path_; }
  const std::string& temp_path() const { return temp_path_; }
  bool open() const { return fd_ >= 0; }

 private:
  AtomicFile(std::string target_path, std::string temp_path, int fd)
      : target_path_(std::move(target_path)), temp_path_(std::move(temp_path)), fd_(fd) {}

  std::string target_path_;
  std::string temp_path_;
  int fd_ = -1;  // -1 once committed or abandoned
};

// Writes `contents` to `path` atomically (Create + Append + Commit).
Status WriteFileAtomically(const std::string& path, std::string_view contents);

}  // namespace ksim::sim
