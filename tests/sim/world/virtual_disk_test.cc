// The virtual disk: the Env contract (twice: free, and with latencies), then what only the
// simulated disk does: crashes that drop unsynced bytes and unsynced directory entries, torn and
// corrupted tails, clean shutdown, injected EIO/ENOSPC/corruption, latency accounting,
// determinism by seed, and the copy counters of the zero-copy lesson.
#include "sim/world/virtual_disk.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>

#include "tests/support/core/env_contract.h"

namespace ksim::sim {
namespace {

testing::EnvUnderTest MakeVirtualDisk(VirtualDiskOptions options) {
  testing::EnvUnderTest under_test;
  auto disk = std::make_unique<VirtualDisk>(RandomStream(42), options);
  KSIM_CHECK(disk->CreateDir("/data/kafka-logs").ok());
  under_test.env = std::move(disk);
  under_test.root = "/data/kafka-logs";
  return under_test;
}

INSTANTIATE_ENV_CONTRACT(VirtualDisk, [] { return MakeVirtualDisk({}); });
INSTANTIATE_ENV_CONTRACT(VirtualDiskWithLatency, [] {
  VirtualDiskOptions options;
  options.read_latency = {10, 100};
  options.write_latency = {20, 200};
  options.sync_latency = {1000, 5000};
  options.metadata_latency = {5, 50};
  options.capacity_bytes = 64 << 20;
  return MakeVirtualDisk(options);
});

std::string AsString(const Bytes& bytes) { return std::string(AsChars(bytes)); }

class VirtualDiskTest : public ::testing::Test {
 protected:
  // /d exists durably: tests start from a synced directory.
  VirtualDiskTest() : disk_(RandomStream(7)) {
    KSIM_CHECK(disk_.CreateDir("/d").ok());
    KSIM_CHECK(disk_.SyncDir("/").ok());
  }

  // Creates `path` with `contents`, fsyncs it and its directory: it survives any crash.
  void WriteDurably(const std::string& path, std::string_view contents) {
    auto file = disk_.OpenFile(path, OpenMode::kTruncate);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    ASSERT_TRUE((*file)->Append(AsBytes(contents)).ok());
    ASSERT_TRUE((*file)->Sync().ok());
    ASSERT_TRUE(disk_.SyncDir("/d").ok());
  }

  // *largest: the most entries a directory held.
  void ChangeDirectoriesAtRandom(int names, uint64_t seed, size_t* largest);

  void AppendTo(const std::string& path, std::string_view contents) {
    auto file = disk_.OpenFile(path, OpenMode::kCreateIfMissing);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    ASSERT_TRUE((*file)->Append(AsBytes(contents)).ok());
  }

  std::string Read(const std::string& path) {
    auto contents = ReadWholeFile(disk_, path);
    if (!contents.ok()) return "<" + contents.status().ToString() + ">";
    return AsString(*contents);
  }

  VirtualDisk disk_;
};

// --- Crash: file contents ---

// Resolve keeps the directories it resolved last: a directory removed, moved or replaced, or the
// tree rebuilt by a crash, must not be found through them again.
TEST_F(VirtualDiskTest, PathsResolveToTheDirectoryThereNowAfterItChanges) {
  auto names = [&](const std::string& dir) {
    Result<std::vector<std::string>> listed = disk_.ListDir(dir);
    return listed.ok() ? *listed : std::vector<std::string>{"<" + listed.status().ToString() + ">"};
  };
  ASSERT_TRUE(disk_.CreateDir("/d/a").ok());
  ASSERT_TRUE(disk_.OpenFile("/d/a/f", OpenMode::kCreateNew).ok());  // resolves /d/a
  // Removed and made again: a new file goes into the new directory.
  ASSERT_TRUE(disk_.RemoveFile("/d/a/f").ok());
  ASSERT_TRUE(disk_.RemoveDir("/d/a").ok());
  EXPECT_FALSE(disk_.OpenFile("/d/a/g", OpenMode::kCreateNew).ok());  // no /d/a now
  ASSERT_TRUE(disk_.CreateDir("/d/a").ok());
  ASSERT_TRUE(disk_.OpenFile("/d/a/g", OpenMode::kCreateNew).ok());
  EXPECT_EQ(names("/d/a"), std::vector<std::string>{"g"});
  // Moved: its old path holds nothing, its new one holds what was written before and after.
  ASSERT_TRUE(disk_.RenameFile("/d/a", "/d/b").ok());
  EXPECT_FALSE(disk_.FileExists("/d/a/g"));
  EXPECT_FALSE(disk_.OpenFile("/d/a/h", OpenMode::kCreateNew).ok());
  ASSERT_TRUE(disk_.OpenFile("/d/b/h", OpenMode::kCreateNew).ok());
  EXPECT_EQ(names("/d/b"), (std::vector<std::string>{"g", "h"}));
  // Replaced by a rename over it (empty, so allowed): /d/c is now the moved directory.
  ASSERT_TRUE(disk_.CreateDir("/d/c").ok());
  ASSERT_TRUE(disk_.OpenFile("/d/c/x", OpenMode::kCreateNew).ok());  // resolves /d/c
  ASSERT_TRUE(disk_.RemoveFile("/d/c/x").ok());
  ASSERT_TRUE(disk_.RenameFile("/d/b", "/d/c").ok());
  EXPECT_TRUE(disk_.FileExists("/d/c/g"));
  ASSERT_TRUE(disk_.OpenFile("/d/c/y", OpenMode::kCreateNew).ok());
  EXPECT_EQ(names("/d/c"), (std::vector<std::string>{"g", "h", "y"}));
  // A crash drops the unsynced directories: /d/c and what it held are gone.
  disk_.Crash();
  EXPECT_FALSE(disk_.DirExists("/d/c"));
  EXPECT_FALSE(disk_.FileExists("/d/c/g"));
  EXPECT_FALSE(disk_.OpenFile("/d/c/z", OpenMode::kCreateNew).ok());
  // Many directories resolved since: one resolved long before the change (no longer among the
  // last ones Resolve keeps) is found changed too, and so are those resolved last.
  for (int i = 0; i < 20; ++i) {
    const std::string dir = "/e/" + std::to_string(i);
    ASSERT_TRUE(disk_.CreateDir(dir).ok());
    ASSERT_TRUE(disk_.OpenFile(dir + "/f", OpenMode::kCreateNew).ok());
  }
  ASSERT_TRUE(disk_.RemoveFile("/e/0/f").ok());
  ASSERT_TRUE(disk_.RemoveDir("/e/0").ok());
  EXPECT_FALSE(disk_.OpenFile("/e/0/g", OpenMode::kCreateNew).ok());
  ASSERT_TRUE(disk_.RenameFile("/e/1", "/e/moved").ok());
  EXPECT_FALSE(disk_.FileExists("/e/1/f"));
  EXPECT_TRUE(disk_.FileExists("/e/moved/f"));
  EXPECT_TRUE(disk_.FileExists("/e/19/f"));
  ASSERT_TRUE(disk_.RemoveFile("/e/19/f").ok());
  ASSERT_TRUE(disk_.RemoveDir("/e/19").ok());
  EXPECT_FALSE(disk_.OpenFile("/e/19/g", OpenMode::kCreateNew).ok());
}

TEST_F(VirtualDiskTest, CrashDropsExactlyTheUnsyncedBytes) {
  WriteDurably("/d/0.log", "synced|");
  AppendTo("/d/0.log", "unsynced");
  EXPECT_EQ(Read("/d/0.log"), "synced|unsynced");
  disk_.Crash();
  EXPECT_EQ(Read("/d/0.log"), "synced|");
}

TEST_F(VirtualDiskTest, SyncedBytesSurviveACrash) {
  WriteDurably("/d/0.log", "first");
  {
    auto file = disk_.OpenFile("/d/0.log", OpenMode::kOpenExisting);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(AsBytes(" second")).ok());
    ASSERT_TRUE((*file)->Sync().ok());
  }
  disk_.Crash();
  EXPECT_EQ(Read("/d/0.log"), "first second");
  disk_.Crash();  // a second crash keeps what the first kept
  EXPECT_EQ(Read("/d/0.log"), "first second");
}

TEST_F(VirtualDiskTest, UnsyncedOverwriteAndTruncateAreUndoneByACrash) {
  WriteDurably("/d/f", "0123456789");
  auto file = disk_.OpenFile("/d/f", OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->WriteAt(0, AsBytes("XX")).ok());
  ASSERT_TRUE((*file)->Truncate(5).ok());
  EXPECT_EQ(Read("/d/f"), "XX234");
  disk_.Crash();
  EXPECT_EQ(Read("/d/f"), "0123456789");
}

TEST_F(VirtualDiskTest, DurableContentsIsWhatACrashKeeps) {
  WriteDurably("/d/f", "kept");
  AppendTo("/d/f", "lost");
  auto durable = disk_.DurableContents("/d/f");
  ASSERT_TRUE(durable.ok());
  EXPECT_EQ(AsString(*durable), "kept");
}

// A sync copies only what may have changed since the previous one (Node::MakeDurable): through
// random appends, overwrites, truncations, extensions, stores through a mapping and syncs or
// msyncs, the durable bytes are always the file as it was at its last sync.
TEST_F(VirtualDiskTest, DurableBytesAreTheFileAtItsLastSyncThroughRandomChanges) {
  WriteDurably("/d/f", "");
  auto file = disk_.OpenFile("/d/f", OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  std::mt19937_64 random(11);
  std::string at_last_sync;
  for (int step = 0; step < 3000; ++step) {
    const uint64_t size = (*file)->Size();
    switch (random() % 7) {
      case 0:
      case 1:
        ASSERT_TRUE((*file)->Append(AsBytes(std::string(1 + random() % 40, 'a' + step % 26))).ok());
        break;
      case 2:
        if (size > 0) {
          ASSERT_TRUE((*file)->WriteAt(random() % size, AsBytes(std::string(3, 'X'))).ok());
        }
        break;
      case 3:
        ASSERT_TRUE((*file)->Truncate(size == 0 ? 0 : random() % (size + 64)).ok());
        break;
      case 4:
        if (size > 0) {
          auto mapped = disk_.MapFile("/d/f", -1);
          ASSERT_TRUE(mapped.ok());
          const uint64_t at = random() % size;
          MutableByteView window = (*mapped)->Window(at, 1);
          window[0] = static_cast<uint8_t>('0' + step % 10);
          if (random() % 2 == 0) {
            ASSERT_TRUE((*mapped)->Flush().ok());
            at_last_sync = Read("/d/f");
          }
        }
        break;
      default:
        ASSERT_TRUE((*file)->Sync().ok());
        at_last_sync = Read("/d/f");
        break;
    }
    auto durable = disk_.DurableContents("/d/f");
    ASSERT_TRUE(durable.ok());
    ASSERT_EQ(AsString(*durable), at_last_sync) << "step " << step;
  }
  disk_.Crash();
  EXPECT_EQ(Read("/d/f"), at_last_sync);
}

// --- Crash: the namespace ---

// A directory's durable entries are its live entries as of its last SyncDir, whatever happened
// since: creations, removals, renames within it and across directories, subdirectories, a crash
// (after which both are what survived). Random operations against that model, which SyncDir's
// copy of only the names changed since the previous one must follow.
// Random creations, removals, renames, syncs and crashes over two directories of up to `names`
// entries: each directory's entries are, after a crash, those of its last SyncDir; and every
// name is found by a lookup exactly when the directory lists it (a directory of more than 16
// entries is looked up through a hash index, a smaller one through its ordered map).
void VirtualDiskTest::ChangeDirectoriesAtRandom(int names, uint64_t seed, size_t* largest) {
  *largest = 0;
  ASSERT_TRUE(disk_.CreateDir("/e").ok());
  ASSERT_TRUE(disk_.SyncDir("/").ok());
  const std::vector<std::string> dirs = {"/d", "/e"};
  std::map<std::string, std::set<std::string>> at_last_sync = {{"/d", {}}, {"/e", {}}};
  auto listing = [&](const std::string& dir) {
    auto names = disk_.ListDir(dir);
    KSIM_CHECK(names.ok());
    return std::set<std::string>(names->begin(), names->end());
  };
  std::mt19937_64 random(seed);
  for (int step = 0; step < 4000; ++step) {
    const std::string& dir = dirs[random() % dirs.size()];
    const std::string name = "n" + std::to_string(random() % names);
    const std::string path = dir + "/" + name;
    switch (random() % 8) {
      case 0:
      case 1:
        (void)disk_.OpenFile(path, OpenMode::kCreateIfMissing);
        break;
      case 2:
        (void)disk_.RemoveFile(path);
        break;
      case 3: {
        const std::string to =
            dirs[random() % dirs.size()] + "/n" + std::to_string(random() % names);
        (void)disk_.RenameFile(path, to);
        break;
      }
      case 4:
        if (disk_.CreateDir(path).ok() && random() % 2 == 0) (void)disk_.RemoveDir(path);
        break;
      case 5:
        if (random() % 16 == 0) {
          disk_.Crash();
          // What survived is both live and durable now.
          for (const std::string& d : dirs) {
            ASSERT_EQ(listing(d), at_last_sync[d]) << "step " << step << " " << d;
          }
        }
        break;
      default:
        ASSERT_TRUE(disk_.SyncDir(dir).ok());
        at_last_sync[dir] = listing(dir);
        break;
    }
    const std::set<std::string> listed = listing(dir);
    *largest = std::max(*largest, listed.size());
    for (int n = 0; n < names; ++n) {
      const std::string entry = "n" + std::to_string(n);
      const bool found = disk_.FileExists(dir + "/" + entry) || disk_.DirExists(dir + "/" + entry);
      ASSERT_EQ(found, listed.contains(entry)) << "step " << step << " " << dir << "/" << entry;
    }
  }
  disk_.Crash();
  for (const std::string& d : dirs) EXPECT_EQ(listing(d), at_last_sync[d]) << d;
}

TEST_F(VirtualDiskTest, DurableEntriesAreTheDirectoryAtItsLastSyncDirThroughRandomChanges) {
  size_t largest = 0;
  ChangeDirectoriesAtRandom(12, 12, &largest);
  EXPECT_LE(largest, 16u);
}

TEST_F(VirtualDiskTest, LargeDirectoriesAreLookedUpAsSmallOnesAre) {
  size_t largest = 0;
  ChangeDirectoriesAtRandom(48, 13, &largest);
  EXPECT_GT(largest, 16u);  // past the size where the index starts
}

// A checkpoint written the Kafka way a hundred times between two SyncDirs (a temporary file
// renamed over the last one), with other names coming and going: the SyncDir makes each name
// durable as it is then, once, however often it changed; what changes after it does not last.
TEST_F(VirtualDiskTest, NamesChangedManyTimesBeforeASyncDirAreDurableAsOfIt) {
  WriteDurably("/d/x", "first");
  ASSERT_TRUE(disk_.SyncDir("/d").ok());
  for (int i = 0; i < 100; ++i) {
    auto tmp = disk_.OpenFile("/d/x.tmp", OpenMode::kTruncate);
    ASSERT_TRUE(tmp.ok());
    ASSERT_TRUE((*tmp)->Append(AsBytes("v" + std::to_string(i))).ok());
    ASSERT_TRUE((*tmp)->Sync().ok());
    ASSERT_TRUE(disk_.RenameFile("/d/x.tmp", "/d/x").ok());
    const std::string other = "/d/y" + std::to_string(i % 7);
    if (disk_.FileExists(other)) {
      ASSERT_TRUE(disk_.RemoveFile(other).ok());
    } else {
      ASSERT_TRUE(disk_.OpenFile(other, OpenMode::kCreateNew).ok());
    }
  }
  const Result<std::vector<std::string>> at_sync = disk_.ListDir("/d");
  ASSERT_TRUE(at_sync.ok());
  ASSERT_TRUE(disk_.SyncDir("/d").ok());
  ASSERT_TRUE(disk_.OpenFile("/d/late", OpenMode::kCreateNew).ok());
  ASSERT_TRUE(disk_.RemoveFile("/d/y1").ok() || disk_.OpenFile("/d/y1", OpenMode::kCreateNew).ok());
  disk_.Crash();
  const Result<std::vector<std::string>> after = disk_.ListDir("/d");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*after, *at_sync);
  EXPECT_EQ(Read("/d/x"), "v99");
  EXPECT_FALSE(disk_.FileExists("/d/x.tmp"));
}

// UnsyncedDirs names each directory holding what a power loss would take (the crash event's
// `unsynced`): unsynced bytes, an unsynced overwrite, a file with synced bytes whose name is not;
// not a directory whose writes were all synced, nor an empty file's unsynced name.
TEST_F(VirtualDiskTest, UnsyncedDirsNameWhatACrashWouldTake) {
  ASSERT_TRUE(disk_.CreateDir("/e").ok());
  ASSERT_TRUE(disk_.CreateDir("/f").ok());
  ASSERT_TRUE(disk_.CreateDir("/g").ok());
  ASSERT_TRUE(disk_.SyncDir("/").ok());
  WriteDurably("/d/0.log", "synced");
  EXPECT_TRUE(disk_.UnsyncedDirs().empty());
  AppendTo("/d/0.log", "unsynced");
  {
    auto file = disk_.OpenFile("/e/0.index", OpenMode::kTruncate);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(AsBytes("abc")).ok());
    ASSERT_TRUE((*file)->Sync().ok());  // the bytes are durable, the name is not
  }
  ASSERT_TRUE(disk_.OpenFile("/f/empty", OpenMode::kCreateNew).ok());  // nothing to lose
  EXPECT_EQ(disk_.UnsyncedDirs(), (std::vector<std::string>{"/d", "/e"}));
  ASSERT_TRUE(disk_.SyncDir("/e").ok());
  {
    auto file = disk_.OpenFile("/d/0.log", OpenMode::kOpenExisting);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Sync().ok());
  }
  EXPECT_TRUE(disk_.UnsyncedDirs().empty());
  WriteDurably("/d/1.log", "0123");
  auto file = disk_.OpenFile("/d/1.log", OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->WriteAt(0, AsBytes("X")).ok());
  EXPECT_EQ(disk_.UnsyncedDirs(), (std::vector<std::string>{"/d"}));
  disk_.Crash();
  EXPECT_TRUE(disk_.UnsyncedDirs().empty());  // what survived is on the platter
}

TEST_F(VirtualDiskTest, NewFileWhoseDirectoryWasNotSyncedDisappears) {
  auto file = disk_.OpenFile("/d/new.log", OpenMode::kCreateNew);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append(AsBytes("data")).ok());
  ASSERT_TRUE((*file)->Sync().ok());  // the bytes are durable, the name is not
  ASSERT_TRUE(disk_.SyncDir("/").ok());
  disk_.Crash();
  EXPECT_FALSE(disk_.FileExists("/d/new.log"));
  EXPECT_TRUE(disk_.DirExists("/d"));
}

TEST_F(VirtualDiskTest, NewFileSurvivesOnceItsDirectoryIsSynced) {
  auto file = disk_.OpenFile("/d/new.log", OpenMode::kCreateNew);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append(AsBytes("data")).ok());
  ASSERT_TRUE(disk_.SyncDir("/").ok());
  ASSERT_TRUE(disk_.SyncDir("/d").ok());
  disk_.Crash();
  EXPECT_TRUE(disk_.FileExists("/d/new.log"));
  EXPECT_EQ(Read("/d/new.log"), "") << "the name survived; the unsynced bytes did not";
}

TEST_F(VirtualDiskTest, RenameIsUndoneByACrashBeforeSyncDir) {
  WriteDurably("/d/a", "contents");
  ASSERT_TRUE(disk_.RenameFile("/d/a", "/d/b").ok());
  disk_.Crash();
  EXPECT_TRUE(disk_.FileExists("/d/a"));
  EXPECT_FALSE(disk_.FileExists("/d/b"));
  EXPECT_EQ(Read("/d/a"), "contents");
}

TEST_F(VirtualDiskTest, RenameSurvivesACrashAfterSyncDir) {
  WriteDurably("/d/a", "contents");
  ASSERT_TRUE(disk_.RenameFile("/d/a", "/d/b").ok());
  ASSERT_TRUE(disk_.SyncDir("/d").ok());
  disk_.Crash();
  EXPECT_FALSE(disk_.FileExists("/d/a"));
  EXPECT_EQ(Read("/d/b"), "contents");
}

TEST_F(VirtualDiskTest, SwapRenameOverASegmentIsUndoneWithoutSyncDir) {
  // Kafka's log cleaner writes x.log.cleaned, renames it to x.log.swap, then over x.log.
  WriteDurably("/d/0.log", "old segment");
  WriteDurably("/d/0.log.swap", "cleaned segment");
  ASSERT_TRUE(disk_.RenameFile("/d/0.log.swap", "/d/0.log").ok());
  EXPECT_EQ(Read("/d/0.log"), "cleaned segment");
  disk_.Crash();
  EXPECT_EQ(Read("/d/0.log"), "old segment");
  EXPECT_EQ(Read("/d/0.log.swap"), "cleaned segment");
}

TEST_F(VirtualDiskTest, RemovalIsUndoneByACrashBeforeSyncDir) {
  WriteDurably("/d/0.log", "segment");
  ASSERT_TRUE(disk_.RemoveFile("/d/0.log").ok());
  disk_.Crash();
  EXPECT_EQ(Read("/d/0.log"), "segment");
  ASSERT_TRUE(disk_.RemoveFile("/d/0.log").ok());
  ASSERT_TRUE(disk_.SyncDir("/d").ok());
  disk_.Crash();
  EXPECT_FALSE(disk_.FileExists("/d/0.log"));
}

TEST_F(VirtualDiskTest, DirectoryCreationNeedsTheParentSynced) {
  ASSERT_TRUE(disk_.CreateDir("/d/t-0").ok());
  auto file = disk_.OpenFile("/d/t-0/0.log", OpenMode::kCreateNew);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE(disk_.SyncDir("/d/t-0").ok());  // its entries are durable, its own name is not
  disk_.Crash();
  EXPECT_FALSE(disk_.DirExists("/d/t-0"));
  ASSERT_TRUE(disk_.CreateDir("/d/t-0").ok());
  ASSERT_TRUE(disk_.SyncDir("/d").ok());
  disk_.Crash();
  EXPECT_TRUE(disk_.DirExists("/d/t-0"));
}

TEST_F(VirtualDiskTest, DirectoryRenameForDeletionIsUndoneWithoutSyncDir) {
  ASSERT_TRUE(disk_.CreateDir("/d/t-0").ok());
  ASSERT_TRUE(disk_.SyncDir("/d").ok());
  auto file = disk_.OpenFile("/d/t-0/0.log", OpenMode::kCreateNew);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append(AsBytes("records")).ok());
  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE(disk_.SyncDir("/d/t-0").ok());
  ASSERT_TRUE(disk_.RenameFile("/d/t-0", "/d/t-0.abc-delete").ok());
  disk_.Crash();
  EXPECT_TRUE(disk_.DirExists("/d/t-0"));
  EXPECT_FALSE(disk_.DirExists("/d/t-0.abc-delete"));
  EXPECT_EQ(Read("/d/t-0/0.log"), "records");
  ASSERT_TRUE(disk_.RenameFile("/d/t-0", "/d/t-0.abc-delete").ok());
  ASSERT_TRUE(disk_.SyncDir("/d").ok());
  disk_.Crash();
  EXPECT_EQ(Read("/d/t-0.abc-delete/0.log"), "records");
}

TEST_F(VirtualDiskTest, RenameIntoItselfIsRejected) {
  ASSERT_TRUE(disk_.CreateDir("/d/a/b").ok());
  EXPECT_EQ(disk_.RenameFile("/d/a", "/d/a/b/c").code(), Errc::kInvalidArgument);
  EXPECT_TRUE(disk_.DirExists("/d/a/b"));
}

TEST_F(VirtualDiskTest, FileMovedBetweenDirectoriesSyncedSeparatelyKeepsOneInode) {
  ASSERT_TRUE(disk_.CreateDir("/d/x").ok());
  ASSERT_TRUE(disk_.CreateDir("/d/y").ok());
  ASSERT_TRUE(disk_.SyncDir("/d").ok());
  auto file = disk_.OpenFile("/d/x/f", OpenMode::kCreateNew);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append(AsBytes("one")).ok());
  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE(disk_.SyncDir("/d/x").ok());
  ASSERT_TRUE(disk_.RenameFile("/d/x/f", "/d/y/f").ok());
  ASSERT_TRUE(disk_.SyncDir("/d/y").ok());  // /d/x not synced: the old name is still durable
  disk_.Crash();
  EXPECT_EQ(Read("/d/x/f"), "one");
  EXPECT_EQ(Read("/d/y/f"), "one");
  AppendTo("/d/x/f", "+two");
  EXPECT_EQ(Read("/d/y/f"), "one+two") << "both names lead to the same file";
  EXPECT_EQ(disk_.used_bytes(), 7u) << "counted once";
}

// --- Crash: tearing and corruption ---

TEST(VirtualDiskTearTest, SurvivingLengthIsBetweenDurableAndWrittenAndKeepsAPrefix) {
  const std::string durable(100, 'D');
  std::string unsynced(1000, '\0');
  for (size_t i = 0; i < unsynced.size(); ++i) unsynced[i] = static_cast<char>('a' + i % 26);
  const std::string written = durable + unsynced;
  int torn_strictly_inside = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    VirtualDisk disk{RandomStream(seed)};
    auto file = disk.OpenFile("/f", OpenMode::kCreateNew);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(AsBytes(durable)).ok());
    ASSERT_TRUE((*file)->Sync().ok());
    ASSERT_TRUE(disk.SyncDir("/").ok());
    ASSERT_TRUE((*file)->Append(AsBytes(unsynced)).ok());
    disk.Crash({.tear_unsynced_tail = true});
    auto survived = ReadWholeFile(disk, "/f");
    ASSERT_TRUE(survived.ok());
    const std::string contents = AsString(*survived);
    ASSERT_GE(contents.size(), durable.size()) << "seed " << seed;
    ASSERT_LE(contents.size(), written.size()) << "seed " << seed;
    EXPECT_EQ(contents, written.substr(0, contents.size())) << "seed " << seed;
    if (contents.size() > durable.size() && contents.size() < written.size()) {
      ++torn_strictly_inside;
    }
  }
  EXPECT_GT(torn_strictly_inside, 150) << "tearing should usually land inside the tail";
}

TEST(VirtualDiskTearTest, CorruptionFlipsBytesOnlyInTheTornTail) {
  const std::string durable(64, 'D');
  const std::string unsynced(512, 'u');
  int corrupted_runs = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    VirtualDisk disk{RandomStream(seed)};
    auto file = disk.OpenFile("/f", OpenMode::kCreateNew);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(AsBytes(durable)).ok());
    ASSERT_TRUE((*file)->Sync().ok());
    ASSERT_TRUE(disk.SyncDir("/").ok());
    ASSERT_TRUE((*file)->Append(AsBytes(unsynced)).ok());
    disk.Crash({.tear_unsynced_tail = true, .corrupt_torn_tail = true});
    auto survived = ReadWholeFile(disk, "/f");
    ASSERT_TRUE(survived.ok());
    const std::string contents = AsString(*survived);
    ASSERT_GE(contents.size(), durable.size());
    ASSERT_LE(contents.size(), durable.size() + unsynced.size());
    EXPECT_EQ(contents.substr(0, durable.size()), durable) << "seed " << seed;
    size_t differing = 0;
    for (size_t i = durable.size(); i < contents.size(); ++i) differing += contents[i] != 'u';
    EXPECT_LE(differing, 8u) << "seed " << seed;
    if (contents.size() > durable.size()) {
      EXPECT_GE(differing, 1u) << "a non-empty torn tail is corrupted, seed " << seed;
    }
    corrupted_runs += differing > 0;
  }
  EXPECT_GT(corrupted_runs, 150);
}

TEST(VirtualDiskTearTest, SyncedFilesAreNeverTorn) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    VirtualDisk disk{RandomStream(seed)};
    auto file = disk.OpenFile("/f", OpenMode::kCreateNew);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(AsBytes("all synced")).ok());
    ASSERT_TRUE((*file)->Sync().ok());
    ASSERT_TRUE(disk.SyncDir("/").ok());
    disk.Crash({.tear_unsynced_tail = true, .corrupt_torn_tail = true});
    auto survived = ReadWholeFile(disk, "/f");
    ASSERT_TRUE(survived.ok());
    EXPECT_EQ(AsString(*survived), "all synced");
  }
}

// Runs the same workload on a disk seeded with `seed` and returns what a torn, corrupting crash
// left, plus the busy time, as one string.
std::string CrashOutcome(uint64_t seed) {
  VirtualDiskOptions options;
  options.write_latency = {10, 1000};
  options.sync_latency = {100, 10000};
  VirtualDisk disk(RandomStream(seed), options);
  KSIM_CHECK(disk.CreateDir("/d").ok());
  KSIM_CHECK(disk.SyncDir("/").ok());
  std::string outcome;
  for (int i = 0; i < 5; ++i) {
    const std::string path = "/d/" + std::to_string(i) + ".log";
    auto file = disk.OpenFile(path, OpenMode::kCreateNew);
    KSIM_CHECK(file.ok());
    KSIM_CHECK((*file)->Append(Bytes(100 + i, static_cast<uint8_t>(i))).ok());
    KSIM_CHECK((*file)->Sync().ok());
    KSIM_CHECK((*file)->Append(Bytes(1000, static_cast<uint8_t>(0x80 + i))).ok());
  }
  KSIM_CHECK(disk.SyncDir("/d").ok());
  outcome += std::to_string(disk.TakeBusyTime()) + ";";
  disk.Crash({.tear_unsynced_tail = true, .corrupt_torn_tail = true});
  for (int i = 0; i < 5; ++i) {
    auto contents = ReadWholeFile(disk, "/d/" + std::to_string(i) + ".log");
    KSIM_CHECK(contents.ok());
    outcome += std::string(AsChars(*contents)) + ";";
  }
  return outcome;
}

TEST(VirtualDiskDeterminismTest, SameSeedGivesTheSameCrash) {
  EXPECT_EQ(CrashOutcome(1234), CrashOutcome(1234));
  EXPECT_EQ(CrashOutcome(99), CrashOutcome(99));
}

TEST(VirtualDiskDeterminismTest, DifferentSeedsGiveDifferentCrashes) {
  const std::string base = CrashOutcome(1);
  int differing = 0;
  for (uint64_t seed = 2; seed < 7; ++seed) differing += CrashOutcome(seed) != base;
  EXPECT_GE(differing, 4);
}

// --- Clean shutdown and stale handles ---

TEST_F(VirtualDiskTest, CleanShutdownKeepsEverything) {
  ASSERT_TRUE(disk_.CreateDir("/d/t-0").ok());
  AppendTo("/d/t-0/0.log", "never synced");
  WriteDurably("/d/a", "renamed");
  ASSERT_TRUE(disk_.RenameFile("/d/a", "/d/b").ok());
  auto mapped = disk_.MapFile("/d/t-0/0.index", 8);
  ASSERT_TRUE(mapped.ok());
  (*mapped)->data()[0] = 0x11;
  disk_.CleanShutdown();
  EXPECT_EQ(Read("/d/t-0/0.log"), "never synced");
  EXPECT_EQ(Read("/d/b"), "renamed");
  EXPECT_FALSE(disk_.FileExists("/d/a"));
  EXPECT_EQ(Read("/d/t-0/0.index"), std::string("\x11\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(disk_.counters().crashes, 0u);
}

TEST_F(VirtualDiskTest, HandlesOpenedBeforeACrashAreStale) {
  WriteDurably("/d/f", "durable");
  auto file = disk_.OpenFile("/d/f", OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  auto mapped = disk_.MapFile("/d/f", -1);
  ASSERT_TRUE(mapped.ok());
  const uint64_t generation = disk_.generation();
  disk_.Crash();
  EXPECT_EQ(disk_.generation(), generation + 1);
  EXPECT_EQ((*file)->Append(AsBytes("zombie")).code(), Errc::kIoError);
  uint8_t byte;
  EXPECT_FALSE((*file)->ReadAt(0, MutableByteView(&byte, 1)).ok());
  EXPECT_EQ((*file)->Sync().code(), Errc::kIoError);
  (*mapped)->data()[0] = 'Z';  // lands in the dead process's memory
  EXPECT_EQ((*mapped)->Flush().code(), Errc::kIoError);
  EXPECT_EQ(Read("/d/f"), "durable");
}

// --- Mapped files ---

TEST_F(VirtualDiskTest, CrashKeepsTheLastFlushedImageOfAMapping) {
  auto mapped = disk_.MapFile("/d/0.index", 16);
  ASSERT_TRUE(mapped.ok());
  ASSERT_TRUE(disk_.SyncDir("/d").ok());
  (*mapped)->data()[0] = 1;
  ASSERT_TRUE((*mapped)->Flush().ok());
  (*mapped)->data()[1] = 2;                 // never flushed
  ASSERT_TRUE((*mapped)->Resize(32).ok());  // nor is the growth
  disk_.Crash();
  auto contents = ReadWholeFile(disk_, "/d/0.index");
  ASSERT_TRUE(contents.ok());
  ASSERT_EQ(contents->size(), 16u);
  EXPECT_EQ((*contents)[0], 1);
  EXPECT_EQ((*contents)[1], 0);
}

// Sparse files (docs/virtual-disk.md): a 10 MiB preallocated index stores only what is stored
// into it, and every handle still sees the whole length, zeros past what was written.
TEST_F(VirtualDiskTest, WindowStoresReachTheFileAndTheRestOfASparseMappingReadsZero) {
  const uint64_t length = 10 << 20;
  auto mapped = disk_.MapFile("/d/0.index", static_cast<int64_t>(length));
  ASSERT_TRUE(mapped.ok());
  ASSERT_TRUE(disk_.SyncDir("/d").ok());
  EXPECT_EQ((*mapped)->length(), length);
  (*mapped)->Window(8, 8)[7] = 0x5A;
  EXPECT_EQ(std::as_const(**mapped).Window(8, 8)[7], 0x5A);
  EXPECT_EQ(std::as_const(**mapped).Window(length - 8, 8)[0], 0);  // never stored
  EXPECT_EQ(disk_.used_bytes(), length);
  ASSERT_TRUE((*mapped)->Flush().ok());
  disk_.Crash();
  auto file = disk_.OpenFile("/d/0.index", OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  ASSERT_EQ((*file)->Size(), length);
  Bytes tail(32, 0xFF);
  auto got = (*file)->ReadAt(length - 32, MutableByteView(tail));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 32u);
  EXPECT_TRUE(std::all_of(tail.begin(), tail.end(), [](uint8_t b) { return b == 0; }));
  Bytes head(16, 0);
  ASSERT_TRUE((*file)->ReadAt(0, MutableByteView(head)).ok());
  EXPECT_EQ(head[15], 0x5A);
}

TEST_F(VirtualDiskTest, AMappingNeverFlushedComesBackEmpty) {
  auto mapped = disk_.MapFile("/d/0.index", 4096);
  ASSERT_TRUE(mapped.ok());
  ASSERT_TRUE(disk_.SyncDir("/d").ok());
  (*mapped)->data()[0] = 1;
  disk_.Crash();
  auto size = disk_.FileSize("/d/0.index");
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, 0u) << "the preallocation was never made durable either";
}

TEST_F(VirtualDiskTest, FileSyncAlsoPersistsStoresThroughAMapping) {
  auto mapped = disk_.MapFile("/d/0.index", 4);
  ASSERT_TRUE(mapped.ok());
  ASSERT_TRUE(disk_.SyncDir("/d").ok());
  (*mapped)->data()[3] = 9;
  auto file = disk_.OpenFile("/d/0.index", OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Sync().ok());  // one page cache per file
  disk_.Crash();
  EXPECT_EQ(Read("/d/0.index"), std::string("\0\0\0\x09", 4));
}

// --- Faults ---

TEST_F(VirtualDiskTest, OneShotReadErrorFailsOnceThenClears) {
  WriteDurably("/d/f", "abc");
  auto file = disk_.OpenFile("/d/f", OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  disk_.InjectFault(DiskFault::kReadError, FaultPersistence::kOnce);
  uint8_t buffer[3];
  auto failed = (*file)->ReadAt(0, MutableByteView(buffer, 3));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), Errc::kIoError);
  EXPECT_NE(failed.status().message().find("/d/f"), std::string::npos);
  auto read = (*file)->ReadAt(0, MutableByteView(buffer, 3));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, 3u);
  EXPECT_EQ(disk_.counters().injected_errors, 1u);
}

TEST(VirtualDiskInspectionTest, InspectionCostsNothingMeetsNoFaultAndCountsNothing) {
  VirtualDiskOptions options;
  options.read_latency = {10, 100};
  options.metadata_latency = {5, 50};
  VirtualDisk disk(RandomStream(3), options);
  VirtualDisk twin(RandomStream(3), options);  // the same disk, never inspected
  for (VirtualDisk* d : {&disk, &twin}) {
    ASSERT_TRUE(d->CreateDir("/d").ok());
    auto file = d->OpenFile("/d/f", OpenMode::kTruncate);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(AsBytes("abc")).ok());
    d->InjectFault(DiskFault::kReadError, FaultPersistence::kOnce);
  }
  const DiskCounters before = disk.counters();
  const TimeUs busy_before = disk.busy_time_us();
  {
    VirtualDisk::InspectionScope inspection(disk);
    EXPECT_TRUE(disk.inspecting());
    auto file = disk.OpenFile("/d/f", OpenMode::kOpenExisting);
    ASSERT_TRUE(file.ok());
    uint8_t buffer[3];
    auto read = (*file)->ReadAt(0, MutableByteView(buffer, 3));
    ASSERT_TRUE(read.ok()) << "an inspection meets no injected fault";
    EXPECT_EQ(*read, 3u);
  }
  EXPECT_FALSE(disk.inspecting());
  EXPECT_EQ(disk.busy_time_us(), busy_before);
  EXPECT_EQ(disk.counters().bytes_read, before.bytes_read);
  EXPECT_EQ(disk.counters().copies, before.copies);
  // The one-shot fault is still armed, and the stream was not drawn from: the next read fails
  // and costs exactly what the twin's does.
  for (VirtualDisk* d : {&disk, &twin}) {
    auto file = d->OpenFile("/d/f", OpenMode::kOpenExisting);
    ASSERT_TRUE(file.ok());
    uint8_t buffer[3];
    EXPECT_FALSE((*file)->ReadAt(0, MutableByteView(buffer, 3)).ok());
  }
  EXPECT_EQ(disk.busy_time_us(), twin.busy_time_us());
}

TEST_F(VirtualDiskTest, PersistentWriteErrorFailsUntilClearedAndWritesNothing) {
  WriteDurably("/d/f", "abc");
  auto file = disk_.OpenFile("/d/f", OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  disk_.InjectFault(DiskFault::kWriteError, FaultPersistence::kUntilCleared);
  EXPECT_EQ((*file)->Append(AsBytes("x")).code(), Errc::kIoError);
  EXPECT_EQ((*file)->WriteAt(0, AsBytes("x")).code(), Errc::kIoError);
  EXPECT_EQ((*file)->Truncate(0).code(), Errc::kIoError);
  EXPECT_EQ(disk_.OpenFile("/d/g", OpenMode::kCreateNew).status().code(), Errc::kIoError);
  EXPECT_EQ(disk_.RenameFile("/d/f", "/d/h").code(), Errc::kIoError);
  EXPECT_EQ(disk_.CreateDir("/d/sub").code(), Errc::kIoError);
  EXPECT_EQ(Read("/d/f"), "abc") << "reads still work";
  EXPECT_FALSE(disk_.FileExists("/d/g"));
  disk_.ClearFault(DiskFault::kWriteError);
  EXPECT_TRUE((*file)->Append(AsBytes("d")).ok());
  EXPECT_EQ(Read("/d/f"), "abcd");
}

TEST_F(VirtualDiskTest, FailedSyncMakesNothingDurable) {
  WriteDurably("/d/f", "old");
  auto file = disk_.OpenFile("/d/f", OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append(AsBytes("new")).ok());
  disk_.InjectFault(DiskFault::kSyncError, FaultPersistence::kOnce);
  EXPECT_EQ((*file)->Sync().code(), Errc::kIoError);
  disk_.Crash();
  EXPECT_EQ(Read("/d/f"), "old");
}

TEST_F(VirtualDiskTest, FailedSyncDirMakesNoEntryDurable) {
  AppendTo("/d/f", "x");
  disk_.InjectFault(DiskFault::kSyncError, FaultPersistence::kUntilCleared);
  EXPECT_EQ(disk_.SyncDir("/d").code(), Errc::kIoError);
  auto mapped = disk_.MapFile("/d/i", 4);
  ASSERT_TRUE(mapped.ok());
  EXPECT_EQ((*mapped)->Flush().code(), Errc::kIoError);
  disk_.ClearAllFaults();
  disk_.Crash();
  EXPECT_FALSE(disk_.FileExists("/d/f"));
}

TEST_F(VirtualDiskTest, WritesPastCapacityAreNoSpaceAndChangeNothing) {
  disk_.set_capacity_bytes(100);
  auto file = disk_.OpenFile("/d/f", OpenMode::kCreateNew);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append(Bytes(60, 1)).ok());
  Status full = (*file)->Append(Bytes(50, 2));
  EXPECT_EQ(full.code(), Errc::kNoSpace) << full.ToString();
  EXPECT_NE(full.message().find("/d/f"), std::string::npos);
  EXPECT_EQ((*file)->Size(), 60u);
  EXPECT_EQ((*file)->Truncate(101).code(), Errc::kNoSpace);
  EXPECT_EQ(disk_.MapFile("/d/i", 41).status().code(), Errc::kNoSpace);
  EXPECT_TRUE((*file)->WriteAt(0, Bytes(60, 3)).ok()) << "overwrites need no space";
  ASSERT_TRUE((*file)->Append(Bytes(40, 4)).ok()) << "exactly full is fine";
  EXPECT_EQ(disk_.used_bytes(), 100u);
  // Removing a file gives its space back.
  ASSERT_TRUE(disk_.RemoveFile("/d/f").ok());
  file->reset();
  auto other = disk_.OpenFile("/d/g", OpenMode::kCreateNew);
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE((*other)->Append(Bytes(100, 5)).ok());
}

TEST_F(VirtualDiskTest, CorruptRangeFlipsCachedAndDurableBytes) {
  WriteDurably("/d/0.log", "0123456789");
  ASSERT_TRUE(disk_.CorruptRange("/d/0.log", 3, 4).ok());
  const std::string corrupted = Read("/d/0.log");
  ASSERT_EQ(corrupted.size(), 10u);
  EXPECT_EQ(corrupted.substr(0, 3), "012");
  for (size_t i = 3; i < 7; ++i) EXPECT_NE(corrupted[i], '0' + static_cast<char>(i)) << i;
  EXPECT_EQ(corrupted.substr(7), "789");
  disk_.Crash();
  EXPECT_EQ(Read("/d/0.log"), corrupted) << "the durable bytes were corrupted too";
  EXPECT_EQ(disk_.CorruptRange("/d/missing", 0, 1).code(), Errc::kNotFound);
}

// --- Latency ---

TEST(VirtualDiskLatencyTest, EachOperationChargesWithinItsRange) {
  VirtualDiskOptions options;
  options.read_latency = {10, 20};
  options.write_latency = {100, 200};
  options.sync_latency = {1000, 2000};
  options.metadata_latency = {1, 2};
  VirtualDisk disk(RandomStream(5), options);
  auto file = disk.OpenFile("/f", OpenMode::kCreateNew);
  ASSERT_TRUE(file.ok());
  TimeUs busy_us = disk.TakeBusyTime();
  EXPECT_GE(busy_us, 1);
  EXPECT_LE(busy_us, 2);
  EXPECT_EQ(disk.TakeBusyTime(), 0) << "taking resets";

  for (int i = 0; i < 50; ++i) ASSERT_TRUE((*file)->Append(AsBytes("x")).ok());
  busy_us = disk.TakeBusyTime();
  EXPECT_GE(busy_us, 50 * 100);
  EXPECT_LE(busy_us, 50 * 200);
  EXPECT_NE(busy_us, 50 * 100) << "draws vary";

  uint8_t byte;
  for (int i = 0; i < 50; ++i) ASSERT_TRUE((*file)->ReadAt(0, MutableByteView(&byte, 1)).ok());
  busy_us = disk.TakeBusyTime();
  EXPECT_GE(busy_us, 50 * 10);
  EXPECT_LE(busy_us, 50 * 20);

  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE(disk.SyncDir("/").ok());
  busy_us = disk.TakeBusyTime();
  EXPECT_GE(busy_us, 2 * 1000);
  EXPECT_LE(busy_us, 2 * 2000);
}

TEST(VirtualDiskLatencyTest, FailedOperationsStillTakeTime) {
  VirtualDiskOptions options;
  options.sync_latency = {1000, 1000};
  VirtualDisk disk(RandomStream(5), options);
  auto file = disk.OpenFile("/f", OpenMode::kCreateNew);
  ASSERT_TRUE(file.ok());
  disk.InjectFault(DiskFault::kSyncError, FaultPersistence::kOnce);
  EXPECT_FALSE((*file)->Sync().ok());
  EXPECT_EQ(disk.busy_time_us(), 1000);
}

TEST(VirtualDiskLatencyTest, AFreeDiskIsNeverBusy) {
  VirtualDisk disk{RandomStream(5)};
  auto file = disk.OpenFile("/f", OpenMode::kCreateNew);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append(AsBytes("x")).ok());
  ASSERT_TRUE((*file)->Sync().ok());
  EXPECT_EQ(disk.TakeBusyTime(), 0);
}

// --- Counters and the zero-copy lesson ---

TEST_F(VirtualDiskTest, CountsBytesWrittenSyncedAndRead) {
  auto file = disk_.OpenFile("/d/f", OpenMode::kCreateNew);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append(Bytes(300, 1)).ok());
  ASSERT_TRUE((*file)->WriteAt(0, Bytes(20, 2)).ok());
  EXPECT_EQ(disk_.counters().bytes_written, 320u);
  ASSERT_TRUE((*file)->Sync().ok());
  EXPECT_EQ(disk_.counters().bytes_synced, 320u);
  ASSERT_TRUE((*file)->Sync().ok());
  EXPECT_EQ(disk_.counters().bytes_synced, 320u) << "nothing new to sync";
  EXPECT_EQ(disk_.counters().syncs, 2u);
  Bytes buffer(500);
  ASSERT_TRUE((*file)->ReadAt(100, MutableByteView(buffer)).ok());
  EXPECT_EQ(disk_.counters().bytes_read, 200u);
  const uint64_t dir_syncs = disk_.counters().dir_syncs;
  ASSERT_TRUE(disk_.SyncDir("/d").ok());
  EXPECT_EQ(disk_.counters().dir_syncs, dir_syncs + 1);
}

TEST_F(VirtualDiskTest, ReadThenSendCostsFourCopiesAndSendfileTwo) {
  WriteDurably("/d/0.log", std::string(1000, 'r'));
  auto file = disk_.OpenFile("/d/0.log", OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  const DiskCounters before = disk_.counters();

  BufferSink copied;
  auto copy_sent = (*file)->CopyTo(0, 1000, copied);
  ASSERT_TRUE(copy_sent.ok());
  const DiskCounters after_copy = disk_.counters();
  EXPECT_EQ(after_copy.copies - before.copies, 4u);
  EXPECT_EQ(after_copy.context_switches - before.context_switches, 4u);
  EXPECT_EQ(after_copy.bytes_copied - before.bytes_copied, 4000u);
  EXPECT_EQ(after_copy.bytes_sent - before.bytes_sent, 1000u);

  BufferSink transferred;
  auto transfer_sent = (*file)->TransferTo(0, 1000, transferred);
  ASSERT_TRUE(transfer_sent.ok());
  const DiskCounters after_transfer = disk_.counters();
  EXPECT_EQ(after_transfer.copies - after_copy.copies, 2u);
  EXPECT_EQ(after_transfer.context_switches - after_copy.context_switches, 2u);
  EXPECT_EQ(after_transfer.bytes_copied - after_copy.bytes_copied, 2000u);
  EXPECT_EQ(after_transfer.bytes_sent - after_copy.bytes_sent, 1000u);
  EXPECT_TRUE(copied.bytes() == transferred.bytes());

  // A plain read is the read(2) half: 2 copies, 2 switches.
  Bytes buffer(10);
  ASSERT_TRUE((*file)->ReadAt(0, MutableByteView(buffer)).ok());
  EXPECT_EQ(disk_.counters().copies - after_transfer.copies, 2u);
  EXPECT_EQ(disk_.counters().context_switches - after_transfer.context_switches, 2u);
}

TEST_F(VirtualDiskTest, TransferToFailsOnReadErrorAndSendsNothing) {
  WriteDurably("/d/0.log", "abc");
  auto file = disk_.OpenFile("/d/0.log", OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok());
  disk_.InjectFault(DiskFault::kReadError, FaultPersistence::kOnce);
  BufferSink sink;
  EXPECT_EQ((*file)->TransferTo(0, 3, sink).status().code(), Errc::kIoError);
  EXPECT_TRUE(sink.bytes().empty());
}

TEST_F(VirtualDiskTest, CrashCounted) {
  disk_.Crash();
  disk_.Crash();
  EXPECT_EQ(disk_.counters().crashes, 2u);
}

}  // namespace
}  // namespace ksim::sim
