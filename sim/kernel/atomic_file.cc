#include "sim/kernel/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

namespace ksim::sim {
namespace {

// Bound on attempts to find an unused temporary name (another writer may hold one).
constexpr int kTempNameAttemptsMax = 100;

Status ErrnoStatus(int error, const std::string& what) {
  Errc code = Errc::kIoError;
  if (error == ENOENT || error == ENOTDIR) code = Errc::kNotFound;
  if (error == ENOSPC || error == EDQUOT) code = Errc::kNoSpace;
  return Status(code, what + ": " + std::strerror(error));
}

std::string DirectoryOf(const std::string& path) {
  std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

}  // namespace

Result<AtomicFile> AtomicFile::Create(std::string target_path) {
  KSIM_CHECK(!target_path.empty());
  const std::filesystem::path target(target_path);
  const std::string directory = DirectoryOf(target_path);
  if (!target.has_filename()) {
    return Status(Errc::kInvalidArgument, "'" + target_path + "' names no file");
  }
  static std::atomic<uint64_t> counter{0};
  for (int attempt = 0; attempt < kTempNameAttemptsMax; ++attempt) {
    const std::string temp = directory + "/." + target.filename().string() + ".tmp-" +
                             std::to_string(::getpid()) + "-" + std::to_string(counter++);
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return AtomicFile(std::move(target_path), temp, fd);
    if (errno == EEXIST) continue;
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR) {
      return Status(Errc::kNotFound, "cannot write '" + target_path + "': directory '" + directory +
                                         "' does not exist");
    }
    return ErrnoStatus(
        error, "cannot create a temporary file for '" + target_path + "' in '" + directory + "'");
  }
  return Status(Errc::kIoError, "cannot find an unused temporary name for '" + target_path + "'");
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : target_path_(std::move(other.target_path_)),
      temp_path_(std::move(other.temp_path_)),
      fd_(std::exchange(other.fd_, -1)) {}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    Abandon();
    target_path_ = std::move(other.target_path_);
    temp_path_ = std::move(other.temp_path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

AtomicFile::~AtomicFile() { Abandon(); }

Status AtomicFile::Append(std::string_view bytes) {
  KSIM_CHECK_MSG(fd_ >= 0, "Append after Commit or Abandon");
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd_, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "cannot write '" + temp_path_ + "'");
    }
    KSIM_CHECK(static_cast<size_t>(written) <= bytes.size());
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return Status::Ok();
}

Status AtomicFile::Commit() {
  KSIM_CHECK_MSG(fd_ >= 0, "Commit after Commit or Abandon");
  if (::fsync(fd_) != 0) {
    Status status = ErrnoStatus(errno, "cannot fsync '" + temp_path_ + "'");
    Abandon();
    return status;
  }
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) {
    Status status = ErrnoStatus(errno, "cannot close '" + temp_path_ + "'");
    ::unlink(temp_path_.c_str());
    return status;
  }
  if (::rename(temp_path_.c_str(), target_path_.c_str()) != 0) {
    Status status =
        ErrnoStatus(errno, "cannot rename '" + temp_path_ + "' to '" + target_path_ + "'");
    ::unlink(temp_path_.c_str());
    return status;
  }
  // Make the rename itself durable.
  const std::string directory = DirectoryOf(target_path_);
  const int dir_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return ErrnoStatus(errno, "cannot open directory '" + directory + "'");
  const bool synced = ::fsync(dir_fd) == 0;
  const int sync_error = errno;
  ::close(dir_fd);
  if (!synced) return ErrnoStatus(sync_error, "cannot fsync directory '" + directory + "'");
  return Status::Ok();
}

void AtomicFile::Abandon() {
  if (fd_ < 0) return;
  ::close(std::exchange(fd_, -1));
  ::unlink(temp_path_.c_str());
}

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  KSIM_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::Create(path));
  KSIM_RETURN_IF_ERROR(file.Append(contents));
  return file.Commit();
}

}  // namespace ksim::sim
