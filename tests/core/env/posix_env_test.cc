// PosixEnv: the Env contract on the real file system, plus what only a real machine shows:
// sendfile(2) into a pipe and a socket, errno mapping (ENOSPC from /dev/full), and MAP_SHARED
// stores being visible to pread before any msync.
#include "core/env/posix_env.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "tests/support/core/env_contract.h"
#include "tests/support/core/temp_dir.h"

namespace ksim {
namespace {

testing::EnvUnderTest MakePosixEnvUnderTest() {
  auto dir = std::make_shared<testing::TempDir>();
  testing::EnvUnderTest under_test;
  under_test.env = std::make_unique<PosixEnv>();
  under_test.root = dir->path();
  under_test.keep_alive = dir;
  return under_test;
}

INSTANTIATE_ENV_CONTRACT(Posix, MakePosixEnvUnderTest);

// Reads exactly `count` bytes from a descriptor (the far end of a pipe or socket).
std::string ReadExactly(int fd, size_t count) {
  std::string out(count, '\0');
  size_t done = 0;
  while (done < count) {
    const ssize_t n = ::read(fd, out.data() + done, count - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  return out;
}

class PosixEnvTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return JoinPath(dir_.path(), name); }
  std::unique_ptr<File> CreateWith(const std::string& name, std::string_view contents) {
    auto file = env_.OpenFile(Path(name), OpenMode::kTruncate);
    EXPECT_TRUE(file.ok()) << file.status().ToString();
    EXPECT_TRUE((*file)->Append(AsBytes(contents)).ok());
    return std::move(file).value();
  }

  PosixEnv env_;
  testing::TempDir dir_;
};

TEST_F(PosixEnvTest, TransferToSendsFileRangeIntoAPipeWithSendfile) {
  auto file = CreateWith("00000000000000000000.log", "0123456789abcdef");
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  FdSink sink(fds[1]);
  auto sent = file->TransferTo(4, 8, sink);
  ASSERT_TRUE(sent.ok()) << sent.status().ToString();
  EXPECT_EQ(*sent, 8u);
  // Past the end sendfile sends what there is.
  sent = file->TransferTo(12, 100, sink);
  ASSERT_TRUE(sent.ok());
  EXPECT_EQ(*sent, 4u);
  ::close(fds[1]);
  EXPECT_EQ(ReadExactly(fds[0], 100), "456789abcdef");
  ::close(fds[0]);
}

TEST_F(PosixEnvTest, TransferToSendsIntoASocket) {
  std::string contents(48 * 1024, '\0');
  for (size_t i = 0; i < contents.size(); ++i) contents[i] = static_cast<char>(i % 251);
  auto file = CreateWith("f", contents);
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  FdSink sink(fds[0]);
  // Stay under the socket buffer so that the blocking send completes without a reader thread.
  auto sent = file->TransferTo(1000, 16 * 1024, sink);
  ASSERT_TRUE(sent.ok()) << sent.status().ToString();
  EXPECT_EQ(*sent, 16u * 1024);
  EXPECT_EQ(ReadExactly(fds[1], 16 * 1024), contents.substr(1000, 16 * 1024));
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST_F(PosixEnvTest, CopyToWritesTheSameBytesThroughAUserBuffer) {
  auto file = CreateWith("f", "hello java");
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  FdSink sink(fds[1]);
  auto sent = file->CopyTo(6, 4, sink);
  ASSERT_TRUE(sent.ok());
  EXPECT_EQ(*sent, 4u);
  ::close(fds[1]);
  EXPECT_EQ(ReadExactly(fds[0], 100), "java");
  ::close(fds[0]);
}

TEST_F(PosixEnvTest, TransferToAClosedDescriptorIsAnError) {
  auto file = CreateWith("f", "abc");
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);
  ::close(fds[1]);
  FdSink sink(fds[1]);
  auto sent = file->TransferTo(0, 3, sink);
  ASSERT_FALSE(sent.ok());
  EXPECT_EQ(sent.status().code(), Errc::kIoError);
  EXPECT_NE(sent.status().message().find("sendfile"), std::string::npos);
}

TEST_F(PosixEnvTest, WritingToAFullDeviceIsNoSpace) {
  if (!env_.FileExists("/dev/full") && ::access("/dev/full", W_OK) != 0) {
    GTEST_SKIP() << "/dev/full is not available";
  }
  auto file = env_.OpenFile("/dev/full", OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  Status status = (*file)->Append(AsBytes("no room"));
  EXPECT_EQ(status.code(), Errc::kNoSpace) << status.ToString();
  EXPECT_NE(status.message().find("/dev/full"), std::string::npos) << status.message();
}

TEST_F(PosixEnvTest, ErrnoMapsToErrcWithPathAndReason) {
  EXPECT_EQ(PosixError("fsync", "/x", EIO).code(), Errc::kIoError);
  EXPECT_EQ(PosixError("write", "/x", ENOSPC).code(), Errc::kNoSpace);
  EXPECT_EQ(PosixError("open", "/x", ENOENT).code(), Errc::kNotFound);
  EXPECT_EQ(PosixError("open", "/x", EEXIST).code(), Errc::kAlreadyExists);
  EXPECT_EQ(PosixError("rmdir", "/x", ENOTEMPTY).code(), Errc::kInvalidArgument);
  EXPECT_EQ(PosixError("open", "/x", EACCES).code(), Errc::kIoError);
  const Status status = PosixError("open", "/data/t-0/1.log", ENOENT);
  EXPECT_EQ(status.message(), "open /data/t-0/1.log: No such file or directory");
}

TEST_F(PosixEnvTest, MappedStoresAreVisibleToPreadBeforeFlush) {
  // MAP_SHARED pages are the page cache: a pread sees a store at once; only durability waits
  // for msync.
  auto mapped = env_.MapFile(Path("i.index"), 16);
  ASSERT_TRUE(mapped.ok());
  (*mapped)->data()[3] = 0x77;
  auto file = env_.OpenFile(Path("i.index"), OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  uint8_t byte = 0;
  auto got = (*file)->ReadAt(3, MutableByteView(&byte, 1));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 1u);
  EXPECT_EQ(byte, 0x77);
}

TEST_F(PosixEnvTest, OpeningADirectoryAsAFileFails) {
  ASSERT_TRUE(env_.CreateDir(Path("d")).ok());
  auto file = env_.OpenFile(Path("d"), OpenMode::kOpenExisting);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), Errc::kIoError);  // EISDIR
  EXPECT_NE(file.status().message().find(Path("d")), std::string::npos);
}

TEST_F(PosixEnvTest, SyncDirOfAFileIsAnError) {
  CreateWith("f", "x");
  Status status = env_.SyncDir(Path("f"));
  EXPECT_EQ(status.code(), Errc::kIoError) << status.ToString();  // ENOTDIR
}

TEST_F(PosixEnvTest, CreateDirOverAFileFails) {
  CreateWith("f", "x");
  EXPECT_FALSE(env_.CreateDir(Path("f")).ok());
  EXPECT_FALSE(env_.CreateDir(Path("f/sub")).ok());
}

TEST_F(PosixEnvTest, AbsolutePathsWork) {
  ASSERT_EQ(dir_.path().front(), '/') << "TempDir hands out absolute paths";
  ASSERT_TRUE(env_.CreateDir(Path("x/y")).ok());
  EXPECT_TRUE(env_.DirExists(Path("x/y")));
}

}  // namespace
}  // namespace ksim
