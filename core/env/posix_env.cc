#include "core/env/posix_env.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

namespace ksim {

Status PosixError(const std::string& operation, const std::string& path, int error) {
  Errc code = Errc::kIoError;
  switch (error) {
    case ENOSPC:
    case EDQUOT:
      code = Errc::kNoSpace;
      break;
    case ENOENT:
      code = Errc::kNotFound;
      break;
    case EEXIST:
      code = Errc::kAlreadyExists;
      break;
    case ENOTEMPTY:
      code = Errc::kInvalidArgument;
      break;
    default:
      code = Errc::kIoError;
      break;  // EIO and everything without a closer Errc
  }
  return Status(code, operation + " " + path + ": " +
                          std::error_code(error, std::generic_category()).message());
}

namespace {

// pwrite(2) all of `data` at `position`, continuing after EINTR and short writes.
Status PwriteAll(int fd, const std::string& path, uint64_t position, ByteView data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n =
        ::pwrite(fd, data.data() + done, data.size() - done, static_cast<off_t>(position + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return PosixError("pwrite", path, errno);
    }
    if (n == 0) return Status(Errc::kIoError, "pwrite " + path + ": wrote nothing");
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

class PosixFile final : public File {
 public:
  PosixFile(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {
    KSIM_CHECK(fd_ >= 0);
  }
  ~PosixFile() override { ::close(fd_); }

  Status Append(ByteView data) override { return WriteAt(size_, data); }

  Status WriteAt(uint64_t position, ByteView data) override {
    KSIM_RETURN_IF_ERROR(PwriteAll(fd_, path_, position, data));
    size_ = std::max(size_, position + data.size());
    return Status::Ok();
  }

  Result<size_t> ReadAt(uint64_t position, MutableByteView out) const override {
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t n =
          ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(position + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        return PosixError("pread", path_, errno);
      }
      if (n == 0) break;  // end of file
      done += static_cast<size_t>(n);
    }
    KSIM_CHECK(done <= out.size());
    return done;
  }

  Status Sync() override {
    while (::fsync(fd_) != 0) {
      if (errno != EINTR) return PosixError("fsync", path_, errno);
    }
    return Status::Ok();
  }

  Status Truncate(uint64_t size) override {
    while (::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
      if (errno != EINTR) return PosixError("ftruncate", path_, errno);
    }
    size_ = size;
    return Status::Ok();
  }

  uint64_t Size() const override { return size_; }
  const std::string& path() const override { return path_; }

  Result<size_t> TransferTo(uint64_t position, size_t count, ByteSink& sink) override {
    if (sink.fd() < 0) return CopyTo(position, count, sink);
    off_t offset = static_cast<off_t>(position);
    size_t sent = 0;
    while (sent < count) {
      const ssize_t n = ::sendfile(sink.fd(), fd_, &offset, count - sent);
      if (n < 0) {
        if (errno == EINTR) continue;
        return PosixError("sendfile", path_, errno);
      }
      if (n == 0) break;  // end of file
      sent += static_cast<size_t>(n);
    }
    KSIM_CHECK(static_cast<uint64_t>(offset) == position + sent);
    return sent;
  }

 private:
  std::string path_;
  int fd_;
  uint64_t size_;
};

class PosixMappedFile final : public MappedFile {
 public:
  PosixMappedFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {
    KSIM_CHECK(fd_ >= 0);
  }
  ~PosixMappedFile() override {
    Unmap();
    ::close(fd_);
  }

  // Maps the first `length` bytes of the file. REQUIRES: nothing is mapped.
  Status Map(uint64_t length) {
    KSIM_CHECK(data_ == nullptr);
    KSIM_CHECK(length_ == 0);
    if (length == 0) return Status::Ok();  // mmap of 0 bytes is EINVAL: map nothing
    void* address = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (address == MAP_FAILED) return PosixError("mmap", path_, errno);
    data_ = static_cast<uint8_t*>(address);
    length_ = length;
    return Status::Ok();
  }

  MutableByteView data() override { return MutableByteView(data_, length_); }
  ByteView data() const override { return ByteView(data_, length_); }

  Status Resize(uint64_t length) override {
    KSIM_RETURN_IF_ERROR(Flush());
    const uint64_t old_length = length_;
    Unmap();
    Status truncated = Ftruncate(fd_, path_, length);
    if (!truncated.ok()) {
      // Keep the object usable at its old length; report the failure.
      Status remapped = Map(old_length);
      (void)remapped;
      return truncated;
    }
    return Map(length);
  }

  Status Flush() override {
    if (length_ == 0) return Status::Ok();
    if (::msync(data_, length_, MS_SYNC) != 0) return PosixError("msync", path_, errno);
    return Status::Ok();
  }

  const std::string& path() const override { return path_; }

  static Status Ftruncate(int fd, const std::string& path, uint64_t length) {
    while (::ftruncate(fd, static_cast<off_t>(length)) != 0) {
      if (errno != EINTR) return PosixError("ftruncate", path, errno);
    }
    return Status::Ok();
  }

 private:
  void Unmap() {
    if (data_ != nullptr) ::munmap(data_, length_);
    data_ = nullptr;
    length_ = 0;
  }

  std::string path_;
  int fd_;
  uint8_t* data_ = nullptr;
  uint64_t length_ = 0;
};

int OpenFlags(OpenMode mode) {
  const int base = O_RDWR | O_CLOEXEC;
  switch (mode) {
    case OpenMode::kOpenExisting:
      return base;
    case OpenMode::kCreateIfMissing:
      return base | O_CREAT;
    case OpenMode::kCreateNew:
      return base | O_CREAT | O_EXCL;
    case OpenMode::kTruncate:
      return base | O_CREAT | O_TRUNC;
  }
  KSIM_CHECK_MSG(false, "unknown OpenMode");
  return base;
}

Result<int> OpenFd(const std::string& path, int flags) {
  while (true) {
    const int fd = ::open(path.c_str(), flags, 0644);
    if (fd >= 0) return fd;
    if (errno != EINTR) return PosixError("open", path, errno);
  }
}

Result<uint64_t> FdSize(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return PosixError("fstat", path, errno);
  return static_cast<uint64_t>(st.st_size);
}

}  // namespace

Status FdSink::Send(ByteView bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return PosixError("write", "fd " + std::to_string(fd_), errno);
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Result<std::unique_ptr<File>> PosixEnv::OpenFile(const std::string& path, OpenMode mode) {
  KSIM_ASSIGN_OR_RETURN(int fd, OpenFd(path, OpenFlags(mode)));
  Result<uint64_t> size = FdSize(fd, path);
  if (!size.ok()) {
    ::close(fd);
    return size.status();
  }
  return std::unique_ptr<File>(std::make_unique<PosixFile>(path, fd, *size));
}

Result<std::unique_ptr<MappedFile>> PosixEnv::MapFile(const std::string& path, int64_t length) {
  KSIM_CHECK(length >= -1);
  KSIM_ASSIGN_OR_RETURN(int fd, OpenFd(path, O_RDWR | O_CREAT | O_CLOEXEC));
  auto mapped = std::make_unique<PosixMappedFile>(path, fd);  // owns fd from here on
  uint64_t map_length = 0;
  if (length >= 0) {
    map_length = static_cast<uint64_t>(length);
    KSIM_RETURN_IF_ERROR(PosixMappedFile::Ftruncate(fd, path, map_length));
  } else {
    KSIM_ASSIGN_OR_RETURN(map_length, FdSize(fd, path));
  }
  KSIM_RETURN_IF_ERROR(mapped->Map(map_length));
  return std::unique_ptr<MappedFile>(std::move(mapped));
}

bool PosixEnv::FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Result<uint64_t> PosixEnv::FileSize(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return PosixError("stat", path, errno);
  return static_cast<uint64_t>(st.st_size);
}

Status PosixEnv::RenameFile(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0)
    return PosixError("rename", from + " -> " + to, errno);
  return Status::Ok();
}

Status PosixEnv::RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0) return PosixError("unlink", path, errno);
  return Status::Ok();
}

Result<std::vector<std::string>> PosixEnv::ListDir(const std::string& dir) {
  DIR* handle = ::opendir(dir.c_str());
  if (handle == nullptr) return PosixError("opendir", dir, errno);
  std::vector<std::string> names;
  while (true) {
    errno = 0;
    const dirent* entry = ::readdir(handle);
    if (entry == nullptr) {
      const int error = errno;
      ::closedir(handle);
      if (error != 0) return PosixError("readdir", dir, error);
      break;
    }
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

Status PosixEnv::CreateDir(const std::string& dir) {
  // mkdir each prefix in turn ("mkdir -p"); an existing directory is fine.
  for (size_t end = 1; end <= dir.size(); ++end) {
    if (end != dir.size() && dir[end] != '/') continue;
    const std::string prefix = dir.substr(0, end);
    if (::mkdir(prefix.c_str(), 0755) == 0) continue;
    const int error = errno;
    if (error == EEXIST && DirExists(prefix)) continue;
    return PosixError("mkdir", prefix, error);
  }
  return Status::Ok();
}

Status PosixEnv::RemoveDir(const std::string& dir) {
  if (::rmdir(dir.c_str()) != 0) return PosixError("rmdir", dir, errno);
  return Status::Ok();
}

bool PosixEnv::DirExists(const std::string& dir) {
  struct stat st;
  return ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Status PosixEnv::SyncDir(const std::string& dir) {
  KSIM_ASSIGN_OR_RETURN(int fd, OpenFd(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  Status status;
  while (::fsync(fd) != 0) {
    if (errno != EINTR) {
      status = PosixError("fsync", dir, errno);
      break;
    }
  }
  ::close(fd);
  return status;
}

}  // namespace ksim
