#include "tests/support/core/env_contract.h"

#include <algorithm>
#include <string>
#include <vector>

namespace ksim::testing {

bool EnvContractLinked() { return true; }

void EnvContractTest::SetUp() {
  under_test_ = GetParam()();
  ASSERT_NE(under_test_.env, nullptr);
  ASSERT_TRUE(under_test_.env->DirExists(under_test_.root)) << under_test_.root;
  auto names = under_test_.env->ListDir(under_test_.root);
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  ASSERT_TRUE(names->empty()) << "the factory must hand out an empty root";
}

void EnvContractTest::WriteFile(const std::string& name, std::string_view contents) {
  auto file = env().OpenFile(Path(name), OpenMode::kTruncate);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_TRUE((*file)->Append(AsBytes(contents)).ok());
}

std::string EnvContractTest::ReadFile(const std::string& name) {
  auto contents = ReadWholeFile(env(), Path(name));
  EXPECT_TRUE(contents.ok()) << contents.status().ToString();
  if (!contents.ok()) return "<unreadable>";
  return std::string(AsChars(*contents));
}

namespace {

std::string ReadRange(const File& file, uint64_t position, size_t count) {
  std::string out(count, '\0');
  auto got = file.ReadAt(position, MutableByteView(reinterpret_cast<uint8_t*>(out.data()), count));
  EXPECT_TRUE(got.ok()) << got.status().ToString();
  if (!got.ok()) return "<error>";
  out.resize(*got);
  return out;
}

// --- Open modes ---

TEST_P(EnvContractTest, OpenExistingOnMissingFileIsNotFound) {
  auto file = env().OpenFile(Path("missing"), OpenMode::kOpenExisting);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), Errc::kNotFound);
  EXPECT_NE(file.status().message().find("missing"), std::string::npos)
      << "the message names the path: " << file.status().message();
  EXPECT_FALSE(env().FileExists(Path("missing")));
}

TEST_P(EnvContractTest, CreateNewOnExistingFileIsAlreadyExists) {
  WriteFile("f", "abc");
  auto file = env().OpenFile(Path("f"), OpenMode::kCreateNew);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), Errc::kAlreadyExists);
  EXPECT_EQ(ReadFile("f"), "abc");
}

TEST_P(EnvContractTest, CreateNewOnMissingFileCreatesItEmpty) {
  auto file = env().OpenFile(Path("f"), OpenMode::kCreateNew);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ((*file)->Size(), 0u);
  EXPECT_TRUE(env().FileExists(Path("f")));
}

TEST_P(EnvContractTest, CreateIfMissingCreatesOrKeepsContents) {
  {
    auto created = env().OpenFile(Path("f"), OpenMode::kCreateIfMissing);
    ASSERT_TRUE(created.ok());
    EXPECT_EQ((*created)->Size(), 0u);
    ASSERT_TRUE((*created)->Append(AsBytes("kept")).ok());
  }
  auto reopened = env().OpenFile(Path("f"), OpenMode::kCreateIfMissing);
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ((*reopened)->Size(), 4u);
  EXPECT_EQ(ReadRange(**reopened, 0, 4), "kept");
}

TEST_P(EnvContractTest, TruncateModeEmptiesAnExistingFile) {
  WriteFile("f", "old contents");
  auto file = env().OpenFile(Path("f"), OpenMode::kTruncate);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ((*file)->Size(), 0u);
  EXPECT_EQ(ReadFile("f"), "");
}

TEST_P(EnvContractTest, PathOfFileIsThePathItWasOpenedWith) {
  auto file = env().OpenFile(Path("f"), OpenMode::kCreateNew);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ((*file)->path(), Path("f"));
}

// --- Reading and writing ---

TEST_P(EnvContractTest, AppendThenReadBack) {
  auto file = env().OpenFile(Path("f"), OpenMode::kCreateNew);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append(AsBytes("hello ")).ok());
  ASSERT_TRUE((*file)->Append(AsBytes("kafka")).ok());
  EXPECT_EQ((*file)->Size(), 11u);
  EXPECT_EQ(ReadRange(**file, 0, 11), "hello kafka");
  EXPECT_EQ(ReadRange(**file, 6, 5), "kafka");
}

TEST_P(EnvContractTest, AppendAfterReopenGoesToTheEnd) {
  WriteFile("f", "first");
  auto file = env().OpenFile(Path("f"), OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append(AsBytes("second")).ok());
  EXPECT_EQ(ReadFile("f"), "firstsecond");
}

TEST_P(EnvContractTest, ReadAtIsShortAtEndOfFile) {
  WriteFile("f", "0123456789");
  auto file = env().OpenFile(Path("f"), OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(ReadRange(**file, 7, 100), "789");
}

TEST_P(EnvContractTest, ReadAtAtOrPastEndReturnsZero) {
  WriteFile("f", "0123456789");
  auto file = env().OpenFile(Path("f"), OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(ReadRange(**file, 10, 5), "");
  EXPECT_EQ(ReadRange(**file, 1000, 5), "");
}

TEST_P(EnvContractTest, ReadAtIntoEmptyBufferReturnsZero) {
  WriteFile("f", "abc");
  auto file = env().OpenFile(Path("f"), OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(ReadRange(**file, 0, 0), "");
}

TEST_P(EnvContractTest, WriteAtOverwritesInPlace) {
  WriteFile("f", "aaaaaaaaaa");
  auto file = env().OpenFile(Path("f"), OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->WriteAt(3, AsBytes("XYZ")).ok());
  EXPECT_EQ((*file)->Size(), 10u);
  EXPECT_EQ(ReadFile("f"), "aaaXYZaaaa");
}

TEST_P(EnvContractTest, WriteAtPastEndExtendsWithZeros) {
  WriteFile("f", "ab");
  auto file = env().OpenFile(Path("f"), OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->WriteAt(5, AsBytes("Z")).ok());
  EXPECT_EQ((*file)->Size(), 6u);
  EXPECT_EQ(ReadFile("f"), std::string("ab\0\0\0Z", 6));
  // Append continues after the furthest write.
  ASSERT_TRUE((*file)->Append(AsBytes("!")).ok());
  EXPECT_EQ(ReadFile("f"), std::string("ab\0\0\0Z!", 7));
}

TEST_P(EnvContractTest, TruncateShrinksAndExtendsWithZeros) {
  WriteFile("f", "0123456789");
  auto file = env().OpenFile(Path("f"), OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Truncate(4).ok());
  EXPECT_EQ((*file)->Size(), 4u);
  EXPECT_EQ(ReadFile("f"), "0123");
  ASSERT_TRUE((*file)->Truncate(7).ok());
  EXPECT_EQ((*file)->Size(), 7u);
  EXPECT_EQ(ReadFile("f"), std::string("0123\0\0\0", 7));
  // Appends go after the new end.
  ASSERT_TRUE((*file)->Append(AsBytes("x")).ok());
  EXPECT_EQ(ReadFile("f"), std::string("0123\0\0\0x", 8));
}

TEST_P(EnvContractTest, SizeAndFileSizeAgree) {
  auto file = env().OpenFile(Path("f"), OpenMode::kCreateNew);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append(Bytes(1000, 7)).ok());
  EXPECT_EQ((*file)->Size(), 1000u);
  auto size = env().FileSize(Path("f"));
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, 1000u);
}

TEST_P(EnvContractTest, FileSizeOfMissingFileIsNotFound) {
  auto size = env().FileSize(Path("missing"));
  ASSERT_FALSE(size.ok());
  EXPECT_EQ(size.status().code(), Errc::kNotFound);
}

TEST_P(EnvContractTest, SyncSucceedsAndKeepsContents) {
  auto file = env().OpenFile(Path("f"), OpenMode::kCreateNew);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append(AsBytes("durable")).ok());
  EXPECT_TRUE((*file)->Sync().ok());
  EXPECT_TRUE(env().SyncDir(Path("")).ok());
  EXPECT_EQ(ReadFile("f"), "durable");
}

TEST_P(EnvContractTest, ReopenAfterCloseSeesData) {
  {
    auto file = env().OpenFile(Path("f"), OpenMode::kCreateNew);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(AsBytes("persisted")).ok());
  }
  auto file = env().OpenFile(Path("f"), OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ((*file)->Size(), 9u);
  EXPECT_EQ(ReadRange(**file, 0, 9), "persisted");
}

TEST_P(EnvContractTest, LargeAppendsReadBackExactly) {
  Bytes pattern(300'000);
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint8_t>(i * 31 + 7);
  auto file = env().OpenFile(Path("f"), OpenMode::kCreateNew);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append(ByteView(pattern).subspan(0, 100'000)).ok());
  ASSERT_TRUE((*file)->Append(ByteView(pattern).subspan(100'000)).ok());
  auto contents = ReadWholeFile(env(), Path("f"));
  ASSERT_TRUE(contents.ok());
  EXPECT_TRUE(*contents == pattern);
}

// --- Sends ---

TEST_P(EnvContractTest, TransferToSendsTheRangeAndStopsAtEndOfFile) {
  WriteFile("f", "0123456789");
  auto file = env().OpenFile(Path("f"), OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  BufferSink sink;
  auto sent = (*file)->TransferTo(2, 5, sink);
  ASSERT_TRUE(sent.ok()) << sent.status().ToString();
  EXPECT_EQ(*sent, 5u);
  sent = (*file)->TransferTo(8, 100, sink);
  ASSERT_TRUE(sent.ok());
  EXPECT_EQ(*sent, 2u);
  sent = (*file)->TransferTo(10, 100, sink);
  ASSERT_TRUE(sent.ok());
  EXPECT_EQ(*sent, 0u);
  EXPECT_EQ(AsChars(sink.bytes()), "2345689");
}

TEST_P(EnvContractTest, CopyToSendsTheSameBytesAsTransferTo) {
  std::string contents(200'000, 'x');
  for (size_t i = 0; i < contents.size(); ++i) contents[i] = static_cast<char>('a' + i % 26);
  WriteFile("f", contents);
  auto file = env().OpenFile(Path("f"), OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  BufferSink copied;
  BufferSink transferred;
  auto copy_sent = (*file)->CopyTo(1000, 150'000, copied);
  auto transfer_sent = (*file)->TransferTo(1000, 150'000, transferred);
  ASSERT_TRUE(copy_sent.ok());
  ASSERT_TRUE(transfer_sent.ok());
  EXPECT_EQ(*copy_sent, 150'000u);
  EXPECT_EQ(*transfer_sent, 150'000u);
  EXPECT_EQ(AsChars(copied.bytes()), contents.substr(1000, 150'000));
  EXPECT_TRUE(copied.bytes() == transferred.bytes());
}

// --- Namespace ---

TEST_P(EnvContractTest, RenameReplacesTheTarget) {
  WriteFile("a", "new");
  WriteFile("b", "old");
  ASSERT_TRUE(env().RenameFile(Path("a"), Path("b")).ok());
  EXPECT_FALSE(env().FileExists(Path("a")));
  EXPECT_EQ(ReadFile("b"), "new");
  auto names = env().ListDir(Path(""));
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, std::vector<std::string>{"b"});
}

TEST_P(EnvContractTest, RenameOfMissingFileIsNotFound) {
  Status status = env().RenameFile(Path("missing"), Path("b"));
  EXPECT_EQ(status.code(), Errc::kNotFound);
}

TEST_P(EnvContractTest, RenameKeepsAnOpenHandleWorking) {
  auto file = env().OpenFile(Path("x.log.swap"), OpenMode::kCreateNew);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append(AsBytes("before")).ok());
  ASSERT_TRUE(env().RenameFile(Path("x.log.swap"), Path("x.log")).ok());
  ASSERT_TRUE((*file)->Append(AsBytes("after")).ok());
  EXPECT_EQ(ReadFile("x.log"), "beforeafter");
}

TEST_P(EnvContractTest, RenameMovesADirectoryWithItsContents) {
  ASSERT_TRUE(env().CreateDir(Path("t-0")).ok());
  WriteFile("t-0/00000000000000000000.log", "records");
  ASSERT_TRUE(env().RenameFile(Path("t-0"), Path("t-0.deleted")).ok());
  EXPECT_FALSE(env().DirExists(Path("t-0")));
  EXPECT_TRUE(env().DirExists(Path("t-0.deleted")));
  EXPECT_EQ(ReadFile("t-0.deleted/00000000000000000000.log"), "records");
}

TEST_P(EnvContractTest, RemoveFileDeletesIt) {
  WriteFile("f", "x");
  ASSERT_TRUE(env().RemoveFile(Path("f")).ok());
  EXPECT_FALSE(env().FileExists(Path("f")));
  EXPECT_EQ(env().RemoveFile(Path("f")).code(), Errc::kNotFound);
}

TEST_P(EnvContractTest, RemovedFileStaysReadableThroughAnOpenHandle) {
  WriteFile("f", "still here");
  auto file = env().OpenFile(Path("f"), OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(env().RemoveFile(Path("f")).ok());
  EXPECT_EQ(ReadRange(**file, 0, 10), "still here");
}

TEST_P(EnvContractTest, ListDirIsSortedAndListsFilesAndDirectories) {
  WriteFile("b.log", "");
  WriteFile("a.index", "");
  WriteFile("c", "");
  ASSERT_TRUE(env().CreateDir(Path("d-dir")).ok());
  WriteFile("d-dir/inner", "");  // not listed: only direct entries
  WriteFile("00000000000000000010.log", "");
  auto names = env().ListDir(Path(""));
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"00000000000000000010.log", "a.index", "b.log", "c",
                                              "d-dir"}));
}

TEST_P(EnvContractTest, ListDirOfMissingDirectoryIsNotFound) {
  auto names = env().ListDir(Path("missing"));
  ASSERT_FALSE(names.ok());
  EXPECT_EQ(names.status().code(), Errc::kNotFound);
}

TEST_P(EnvContractTest, CreateDirCreatesParentsAndIsIdempotent) {
  ASSERT_TRUE(env().CreateDir(Path("a/b/c")).ok());
  EXPECT_TRUE(env().DirExists(Path("a")));
  EXPECT_TRUE(env().DirExists(Path("a/b")));
  EXPECT_TRUE(env().DirExists(Path("a/b/c")));
  EXPECT_TRUE(env().CreateDir(Path("a/b/c")).ok());
  EXPECT_TRUE(env().CreateDir(Path("a/b")).ok());
  auto names = env().ListDir(Path("a"));
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, std::vector<std::string>{"b"});
}

TEST_P(EnvContractTest, RemoveDirRemovesOnlyEmptyDirectories) {
  ASSERT_TRUE(env().CreateDir(Path("d")).ok());
  WriteFile("d/f", "x");
  EXPECT_EQ(env().RemoveDir(Path("d")).code(), Errc::kInvalidArgument);
  EXPECT_TRUE(env().DirExists(Path("d")));
  ASSERT_TRUE(env().RemoveFile(Path("d/f")).ok());
  ASSERT_TRUE(env().RemoveDir(Path("d")).ok());
  EXPECT_FALSE(env().DirExists(Path("d")));
  EXPECT_EQ(env().RemoveDir(Path("d")).code(), Errc::kNotFound);
}

TEST_P(EnvContractTest, FileExistsAndDirExistsTellKindsApart) {
  WriteFile("f", "");
  ASSERT_TRUE(env().CreateDir(Path("d")).ok());
  EXPECT_TRUE(env().FileExists(Path("f")));
  EXPECT_FALSE(env().DirExists(Path("f")));
  EXPECT_TRUE(env().DirExists(Path("d")));
  EXPECT_FALSE(env().FileExists(Path("d")));
  EXPECT_FALSE(env().FileExists(Path("nothing")));
  EXPECT_FALSE(env().DirExists(Path("nothing")));
}

TEST_P(EnvContractTest, SyncDirOfMissingDirectoryIsNotFound) {
  EXPECT_EQ(env().SyncDir(Path("missing")).code(), Errc::kNotFound);
}

// --- Mapped files ---

TEST_P(EnvContractTest, MapFilePreallocatesToLengthWithZeros) {
  auto mapped = env().MapFile(Path("i.index"), 4096);
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  ASSERT_EQ((*mapped)->data().size(), 4096u);
  EXPECT_TRUE(std::all_of((*mapped)->data().begin(), (*mapped)->data().end(),
                          [](uint8_t b) { return b == 0; }));
  auto size = env().FileSize(Path("i.index"));
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, 4096u);
  EXPECT_EQ((*mapped)->path(), Path("i.index"));
}

TEST_P(EnvContractTest, StoresThroughMappingAreReadBackAfterFlush) {
  auto mapped = env().MapFile(Path("i.index"), 64);
  ASSERT_TRUE(mapped.ok());
  MutableByteView data = (*mapped)->data();
  for (size_t i = 0; i < 8; ++i) data[i] = static_cast<uint8_t>(0xA0 + i);
  ASSERT_TRUE((*mapped)->Flush().ok());
  auto file = env().OpenFile(Path("i.index"), OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ((*file)->Size(), 64u);
  EXPECT_EQ(ReadRange(**file, 0, 8), "\xA0\xA1\xA2\xA3\xA4\xA5\xA6\xA7");
}

TEST_P(EnvContractTest, ResizeGrowsWithZerosAndShrinksKeepingThePrefix) {
  auto mapped = env().MapFile(Path("i.index"), 16);
  ASSERT_TRUE(mapped.ok());
  for (size_t i = 0; i < 16; ++i) (*mapped)->data()[i] = static_cast<uint8_t>(i + 1);
  ASSERT_TRUE((*mapped)->Resize(40).ok());
  ASSERT_EQ((*mapped)->data().size(), 40u);
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ((*mapped)->data()[i], i + 1) << i;
  for (size_t i = 16; i < 40; ++i) EXPECT_EQ((*mapped)->data()[i], 0) << i;
  ASSERT_TRUE((*mapped)->Resize(8).ok());
  ASSERT_EQ((*mapped)->data().size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ((*mapped)->data()[i], i + 1) << i;
  auto size = env().FileSize(Path("i.index"));
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, 8u);
}

TEST_P(EnvContractTest, MapWithMinusOneKeepsTheCurrentLength) {
  WriteFile("i.index", "0123456789ab");
  auto mapped = env().MapFile(Path("i.index"), -1);
  ASSERT_TRUE(mapped.ok());
  ASSERT_EQ((*mapped)->data().size(), 12u);
  EXPECT_EQ(AsChars(std::as_const(**mapped).data()), "0123456789ab");
}

TEST_P(EnvContractTest, MapFileCreatesAMissingFile) {
  auto mapped = env().MapFile(Path("new.index"), -1);
  ASSERT_TRUE(mapped.ok());
  EXPECT_TRUE((*mapped)->data().empty());
  EXPECT_TRUE(env().FileExists(Path("new.index")));
}

TEST_P(EnvContractTest, ZeroLengthMappingCanFlushAndGrow) {
  auto mapped = env().MapFile(Path("i.index"), 0);
  ASSERT_TRUE(mapped.ok());
  EXPECT_TRUE((*mapped)->data().empty());
  EXPECT_TRUE((*mapped)->Flush().ok());
  ASSERT_TRUE((*mapped)->Resize(8).ok());
  ASSERT_EQ((*mapped)->data().size(), 8u);
  (*mapped)->data()[7] = 0x5A;
  ASSERT_TRUE((*mapped)->Resize(0).ok());
  EXPECT_TRUE((*mapped)->data().empty());
  auto size = env().FileSize(Path("i.index"));
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, 0u);
}

TEST_P(EnvContractTest, RemappingAfterCloseSeesFlushedStores) {
  {
    auto mapped = env().MapFile(Path("i.index"), 32);
    ASSERT_TRUE(mapped.ok());
    (*mapped)->data()[31] = 0x42;
    ASSERT_TRUE((*mapped)->Flush().ok());
  }
  auto mapped = env().MapFile(Path("i.index"), -1);
  ASSERT_TRUE(mapped.ok());
  ASSERT_EQ((*mapped)->data().size(), 32u);
  EXPECT_EQ((*mapped)->data()[31], 0x42);
}

// --- Helpers in core/env/env.h ---

TEST_P(EnvContractTest, ReadWholeFileOfMissingFileIsNotFound) {
  auto contents = ReadWholeFile(env(), Path("missing"));
  ASSERT_FALSE(contents.ok());
  EXPECT_EQ(contents.status().code(), Errc::kNotFound);
}

TEST_P(EnvContractTest, ReadWholeFileOfEmptyFileIsEmpty) {
  WriteFile("f", "");
  EXPECT_EQ(ReadFile("f"), "");
}

TEST_P(EnvContractTest, ReadWholeFileReadsEveryByteWhateverTheSize) {
  // Around the 4 KiB reads past the size and the 64 KiB chunk it once read through.
  for (size_t size : {size_t{1}, size_t{4095}, size_t{4096}, size_t{4097}, size_t{70'001}}) {
    std::string contents(size, '\0');
    for (size_t i = 0; i < size; ++i) contents[i] = static_cast<char>('a' + (i * 7 + size) % 26);
    WriteFile("f" + std::to_string(size), contents);
    EXPECT_EQ(ReadFile("f" + std::to_string(size)), contents) << size << " bytes";
  }
}

TEST_P(EnvContractTest, RemoveTreeRemovesFilesAndSubdirectories) {
  ASSERT_TRUE(env().CreateDir(Path("tree/a/b")).ok());
  WriteFile("tree/top", "1");
  WriteFile("tree/a/mid", "2");
  WriteFile("tree/a/b/leaf", "3");
  ASSERT_TRUE(RemoveTree(env(), Path("tree")).ok());
  EXPECT_FALSE(env().DirExists(Path("tree")));
  auto names = env().ListDir(Path(""));
  ASSERT_TRUE(names.ok());
  EXPECT_TRUE(names->empty());
  EXPECT_TRUE(RemoveTree(env(), Path("tree")).ok()) << "a missing tree is already removed";
}

TEST(JoinPathTest, JoinsWithExactlyOneSlash) {
  EXPECT_EQ(JoinPath("a", "b"), "a/b");
  EXPECT_EQ(JoinPath("a/", "b"), "a/b");
  EXPECT_EQ(JoinPath("", "b"), "b");
  EXPECT_EQ(JoinPath("a", ""), "a");
}

}  // namespace
}  // namespace ksim::testing
