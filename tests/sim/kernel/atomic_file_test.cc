#include "sim/kernel/atomic_file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/core/temp_dir.h"

namespace ksim::sim {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

void WriteRaw(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::vector<std::string> Entries(const std::string& directory) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(AtomicFileTest, CommitReplacesTheTargetAndLeavesNoTemporaryFile) {
  testing::TempDir dir;
  const std::string target = dir.path() + "/report.json";
  WriteRaw(target, "old");
  auto file = AtomicFile::Create(target);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_TRUE(file->Append("new ").ok());
  ASSERT_TRUE(file->Append("contents").ok());
  EXPECT_EQ(ReadAll(target), "old");  // nothing visible before Commit
  EXPECT_TRUE(fs::exists(file->temp_path()));
  ASSERT_TRUE(file->Commit().ok());
  EXPECT_EQ(ReadAll(target), "new contents");
  EXPECT_EQ(Entries(dir.path()), std::vector<std::string>{"report.json"});
}

TEST(AtomicFileTest, TemporaryFileLivesBesideTheTarget) {
  testing::TempDir dir;
  auto file = AtomicFile::Create(dir.path() + "/t.jsonl");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(fs::path(file->temp_path()).parent_path(), fs::path(dir.path()));
  EXPECT_TRUE(fs::path(file->temp_path()).filename().string().starts_with(".t.jsonl.tmp-"));
}

TEST(AtomicFileTest, DestroyedWithoutCommitLeavesTheTargetUntouched) {
  testing::TempDir dir;
  const std::string target = dir.path() + "/trace.jsonl";
  WriteRaw(target, "previous run");
  {
    auto file = AtomicFile::Create(target);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE(file->Append("half a trace").ok());
  }
  EXPECT_EQ(ReadAll(target), "previous run");
  EXPECT_EQ(Entries(dir.path()), std::vector<std::string>{"trace.jsonl"});
}

TEST(AtomicFileTest, AbandonedNewFileNeverAppears) {
  testing::TempDir dir;
  const std::string target = dir.path() + "/new.json";
  auto file = AtomicFile::Create(target);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(file->Append("x").ok());
  file->Abandon();
  file->Abandon();  // idempotent
  EXPECT_FALSE(file->open());
  EXPECT_FALSE(fs::exists(target));
  EXPECT_TRUE(Entries(dir.path()).empty());
}

TEST(AtomicFileTest, MovedFromFileDoesNotRemoveTheMovedTemporary) {
  testing::TempDir dir;
  const std::string target = dir.path() + "/moved.json";
  auto created = AtomicFile::Create(target);
  ASSERT_TRUE(created.ok());
  AtomicFile file = std::move(created).value();
  {
    AtomicFile other = std::move(file);
    ASSERT_TRUE(other.Append("moved").ok());
    ASSERT_TRUE(other.Commit().ok());
  }
  EXPECT_EQ(ReadAll(target), "moved");
}

TEST(AtomicFileTest, MissingDirectoryIsAClearError) {
  testing::TempDir dir;
  const std::string target = dir.path() + "/no/such/dir/trace.jsonl";
  auto file = AtomicFile::Create(target);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), Errc::kNotFound);
  EXPECT_NE(file.status().message().find("does not exist"), std::string::npos)
      << file.status().message();
  EXPECT_NE(file.status().message().find(dir.path() + "/no/such/dir"), std::string::npos);
  EXPECT_TRUE(Entries(dir.path()).empty());
}

TEST(AtomicFileTest, RenameOntoADirectoryFailsAndCleansUp) {
  testing::TempDir dir;
  const std::string target = dir.path() + "/occupied";
  fs::create_directory(target);
  fs::create_directory(target + "/child");  // a non-empty directory cannot be replaced
  auto file = AtomicFile::Create(target);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(file->Append("x").ok());
  Status status = file->Commit();
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(Entries(dir.path()), std::vector<std::string>{"occupied"});
  EXPECT_TRUE(fs::is_directory(target + "/child"));
}

TEST(AtomicFileTest, TwoWritersForOneTargetGetDistinctTemporaries) {
  testing::TempDir dir;
  const std::string target = dir.path() + "/t.json";
  auto a = AtomicFile::Create(target);
  auto b = AtomicFile::Create(target);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->temp_path(), b->temp_path());
  ASSERT_TRUE(a->Append("a").ok());
  ASSERT_TRUE(b->Append("b").ok());
  ASSERT_TRUE(a->Commit().ok());
  ASSERT_TRUE(b->Commit().ok());
  EXPECT_EQ(ReadAll(target), "b");  // last commit wins, whole
  EXPECT_EQ(Entries(dir.path()), std::vector<std::string>{"t.json"});
}

TEST(AtomicFileTest, WriteFileAtomicallyWritesLargeContents) {
  testing::TempDir dir;
  const std::string target = dir.path() + "/big.bin";
  std::string contents;
  for (int i = 0; i < 300'000; ++i) contents += static_cast<char>('a' + i % 26);
  contents += std::string("\0\xff", 2);
  ASSERT_TRUE(WriteFileAtomically(target, contents).ok());
  EXPECT_EQ(ReadAll(target), contents);
  EXPECT_EQ(WriteFileAtomically(dir.path() + "/missing/x", "y").code(), Errc::kNotFound);
}

TEST(AtomicFileTest, RelativePathUsesTheCurrentDirectory) {
  testing::TempDir dir;
  const fs::path previous = fs::current_path();
  fs::current_path(dir.path());
  Status status = WriteFileAtomically("relative.txt", "here");
  fs::current_path(previous);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(ReadAll(dir.path() + "/relative.txt"), "here");
}

}  // namespace
}  // namespace ksim::sim
