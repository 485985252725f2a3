// TimeIndex: the behaviours Kafka's TimeIndexTest checks (lookups, truncation, the reserved last
// slot, only growing timestamps are indexed) plus the on-disk bytes and the sanity check.
#include "core/storage/time_index.h"

#include <gtest/gtest.h>

#include <memory>

#include "core/env/posix_env.h"
#include "tests/support/core/temp_dir.h"

namespace ksim {
namespace {

constexpr Offset kBase{45};

class TimeIndexTest : public ::testing::Test {
 protected:
  std::string Path() const { return JoinPath(dir_.path(), "00000000000000000045.timeindex"); }
  std::unique_ptr<TimeIndex> OpenIndex(int64_t max_bytes = 30 * 12) {
    auto index = TimeIndex::Open(env_, Path(), kBase, max_bytes);
    EXPECT_TRUE(index.ok()) << index.status().ToString();
    return std::move(index).value();
  }

  testing::TempDir dir_;
  PosixEnv env_;
};

TEST_F(TimeIndexTest, LookupGivesTheGreatestEntryAtOrBelowTheTimestamp) {
  auto index = OpenIndex();
  EXPECT_EQ(index->Lookup(100), (TimestampOffset{kNoTimestamp, kBase}));
  // Timestamps 10, 20, ... at offsets 55, 65, ... (Kafka's appendEntries(maxEntries - 1)).
  for (int i = 1; i < 30; ++i) {
    ASSERT_TRUE(index->MaybeAppend(i * 10, kBase + i * 10).ok());
  }
  EXPECT_EQ(index->entries(), 29u);
  EXPECT_EQ(index->Lookup(9), (TimestampOffset{kNoTimestamp, kBase}));
  EXPECT_EQ(index->Lookup(10), (TimestampOffset{10, kBase + 10}));
  EXPECT_EQ(index->Lookup(11), (TimestampOffset{10, kBase + 10}));
  EXPECT_EQ(index->Lookup(290), (TimestampOffset{290, kBase + 290}));
  EXPECT_EQ(index->Lookup(1000), (TimestampOffset{290, kBase + 290}));
}

TEST_F(TimeIndexTest, OnlyAGreaterTimestampAddsAnEntry) {
  auto index = OpenIndex();
  ASSERT_TRUE(index->MaybeAppend(kNoTimestamp, kBase + 1).ok());
  EXPECT_EQ(index->entries(), 0u) << "records without timestamps are not indexed";
  ASSERT_TRUE(index->MaybeAppend(100, kBase + 1).ok());
  ASSERT_TRUE(index->MaybeAppend(100, kBase + 2).ok());
  EXPECT_EQ(index->entries(), 1u) << "an equal timestamp adds nothing";
  EXPECT_EQ(index->MaybeAppend(99, kBase + 3).code(), Errc::kInvalidArgument);
  EXPECT_EQ(index->MaybeAppend(200, kBase).code(), Errc::kInvalidArgument);
  EXPECT_EQ(index->last_entry(), (TimestampOffset{100, kBase + 1}));
}

TEST_F(TimeIndexTest, TheLastSlotIsReservedForTheRollEntry) {
  auto index = OpenIndex(3 * 12);
  ASSERT_TRUE(index->MaybeAppend(10, kBase + 1).ok());
  ASSERT_TRUE(index->MaybeAppend(20, kBase + 2).ok());
  EXPECT_TRUE(index->IsFull());
  EXPECT_EQ(index->MaybeAppend(30, kBase + 3).code(), Errc::kInvalidArgument);
  ASSERT_TRUE(index->MaybeAppend(30, kBase + 3, /*skip_full_check=*/true).ok());
  EXPECT_EQ(index->entries(), 3u);
  EXPECT_EQ(index->MaybeAppend(40, kBase + 4, /*skip_full_check=*/true).code(),
            Errc::kInvalidArgument);
}

TEST_F(TimeIndexTest, TruncateToRemovesEntriesAtOrAfterTheOffset) {
  auto index = OpenIndex();
  for (int i = 1; i < 30; ++i) ASSERT_TRUE(index->MaybeAppend(i * 10, kBase + i * 10).ok());
  index->TruncateTo(kBase + 100);
  EXPECT_EQ(index->entries(), 9u);
  EXPECT_EQ(index->last_entry(), (TimestampOffset{90, kBase + 90}));
  index->TruncateTo(kBase + 95);
  EXPECT_EQ(index->entries(), 9u);
  index->TruncateTo(kBase);
  EXPECT_EQ(index->entries(), 0u);
  EXPECT_EQ(index->last_entry(), (TimestampOffset{kNoTimestamp, kBase}));
}

TEST_F(TimeIndexTest, EntriesAreBigEndianTimestampThenRelativeOffset) {
  {
    auto index = OpenIndex();
    ASSERT_TRUE(index->MaybeAppend(0x0102030405060708, kBase + 0x0A0B0C0D).ok());
    ASSERT_TRUE(index->TrimToValidSize().ok());
  }
  auto bytes = ReadWholeFile(env_, Path());
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, (Bytes{1, 2, 3, 4, 5, 6, 7, 8, 0x0A, 0x0B, 0x0C, 0x0D}));
  auto reopened = OpenIndex();
  EXPECT_EQ(reopened->last_entry(), (TimestampOffset{0x0102030405060708, kBase + 0x0A0B0C0D}));
  EXPECT_TRUE(reopened->SanityCheck().ok());
}

TEST_F(TimeIndexTest, SanityCheckRejectsPreallocatedZerosLeftByACrash) {
  {
    auto index = OpenIndex();
    ASSERT_TRUE(index->MaybeAppend(1000, kBase + 3).ok());
    ASSERT_TRUE(index->MaybeAppend(2000, kBase + 9).ok());
  }
  auto reopened = OpenIndex();
  EXPECT_EQ(reopened->SanityCheck().code(), Errc::kCorruption);
}

TEST_F(TimeIndexTest, SanityCheckRejectsAPartialEntry) {
  {
    auto file = env_.OpenFile(Path(), OpenMode::kCreateNew);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(Bytes(13, 0)).ok());
  }
  auto index = OpenIndex();
  EXPECT_EQ(index->SanityCheck().code(), Errc::kCorruption);
}

}  // namespace
}  // namespace ksim
