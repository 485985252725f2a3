// OffsetIndex: the behaviours Kafka's OffsetIndexTest checks (random lookups against a sorted map,
// lookups at and below the first entry, a full index, out-of-order appends, reopen, truncate,
// fetch upper bound), plus the on-disk bytes and the sanity check that recovery relies on.
#include "core/storage/offset_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "core/base/big_endian.h"
#include "core/base/random.h"
#include "core/env/posix_env.h"
#include "tests/support/core/temp_dir.h"

namespace ksim {
namespace {

constexpr Offset kBase{45};
constexpr int64_t kMaxEntries = 30;

class OffsetIndexTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name = "00000000000000000045.index") const {
    return JoinPath(dir_.path(), name);
  }
  std::unique_ptr<OffsetIndex> OpenIndex(Offset base = kBase, int64_t max_bytes = kMaxEntries * 8,
                                         const std::string& name = "00000000000000000045.index") {
    auto index = OffsetIndex::Open(env_, Path(name), base, max_bytes);
    EXPECT_TRUE(index.ok()) << index.status().ToString();
    return std::move(index).value();
  }
  // Strictly increasing values starting after `base`, steps in [1, 15] (as Kafka's test).
  static std::vector<int64_t> MonotonicSequence(int64_t base, size_t count, RandomStream& random) {
    std::vector<int64_t> values;
    int64_t last = base;
    for (size_t i = 0; i < count; ++i) {
      last += random.UniformInt(1, 15);
      values.push_back(last);
    }
    return values;
  }

  testing::TempDir dir_;
  PosixEnv env_;
};

TEST_F(OffsetIndexTest, NewIndexIsPreallocatedAndEmpty) {
  auto index = OpenIndex();
  EXPECT_EQ(index->entries(), 0u);
  EXPECT_EQ(index->max_entries(), 30u);
  EXPECT_EQ(*env_.FileSize(Path()), 240u);
  EXPECT_EQ(index->last_offset(), kBase);
}

TEST_F(OffsetIndexTest, PreallocationRoundsDownToWholeEntries) {
  auto index = OpenIndex(kBase, 30 * 8 + 5);
  EXPECT_EQ(index->max_entries(), 30u);
  EXPECT_EQ(*env_.FileSize(Path()), 240u);
}

TEST_F(OffsetIndexTest, RandomLookupsAgreeWithASortedMap) {
  auto index = OpenIndex();
  EXPECT_EQ(index->Lookup(Offset(92)), (OffsetPosition{kBase, 0}))
      << "a lookup in an empty index gives the base offset at position 0";

  RandomStream random(1);
  const std::vector<int64_t> offsets = MonotonicSequence(kBase.value() + 1, kMaxEntries, random);
  const std::vector<int64_t> positions = MonotonicSequence(0, kMaxEntries, random);
  std::map<int64_t, int32_t> expected;
  for (size_t i = 0; i < offsets.size(); ++i) {
    ASSERT_TRUE(index->Append(Offset(offsets[i]), static_cast<int32_t>(positions[i])).ok());
    expected[offsets[i]] = static_cast<int32_t>(positions[i]);
  }
  for (const auto& [offset, position] : expected) {
    EXPECT_EQ(index->Lookup(Offset(offset)), (OffsetPosition{Offset(offset), position}));
  }
  for (int i = 0; i < 200; ++i) {
    const int64_t target = random.UniformInt(kBase.value(), offsets.back() + 20);
    auto it = expected.upper_bound(target);
    const OffsetPosition want =
        it == expected.begin()
            ? OffsetPosition{kBase, 0}
            : OffsetPosition{Offset(std::prev(it)->first), std::prev(it)->second};
    EXPECT_EQ(index->Lookup(Offset(target)), want) << "target " << target;
  }
}

TEST_F(OffsetIndexTest, LookupAtTheExtremes) {
  auto index = OpenIndex();
  EXPECT_EQ(index->Lookup(kBase), (OffsetPosition{kBase, 0}));
  for (int64_t i = 0; i < kMaxEntries; ++i) {
    ASSERT_TRUE(index->Append(kBase + (i + 1), static_cast<int32_t>(i)).ok());
  }
  EXPECT_EQ(index->Lookup(kBase), (OffsetPosition{kBase, 0}));
  EXPECT_EQ(index->Lookup(kBase + kMaxEntries), (OffsetPosition{kBase + kMaxEntries, 29}));
  EXPECT_EQ(index->Lookup(Offset(1'000'000)), (OffsetPosition{kBase + kMaxEntries, 29}));
}

TEST_F(OffsetIndexTest, LookupBelowTheFirstEntryGivesTheBase) {
  auto index = OpenIndex();
  ASSERT_TRUE(index->Append(kBase + 10, 100).ok());
  EXPECT_EQ(index->Lookup(kBase + 9), (OffsetPosition{kBase, 0}));
  EXPECT_EQ(index->Lookup(Offset(0)), (OffsetPosition{kBase, 0}));
}

TEST_F(OffsetIndexTest, AppendToAFullIndexFails) {
  auto index = OpenIndex();
  for (int64_t i = 0; i < kMaxEntries; ++i) {
    ASSERT_TRUE(index->Append(kBase + (i + 1), static_cast<int32_t>(i)).ok());
  }
  EXPECT_TRUE(index->IsFull());
  EXPECT_EQ(index->Append(kBase + (kMaxEntries + 1), 100).code(), Errc::kInvalidArgument);
  EXPECT_EQ(index->entries(), 30u);
}

TEST_F(OffsetIndexTest, AppendOutOfOrderIsRefused) {
  auto index = OpenIndex();
  ASSERT_TRUE(index->Append(Offset(51), 0).ok());
  EXPECT_EQ(index->Append(Offset(50), 1).code(), Errc::kInvalidArgument);
  EXPECT_EQ(index->Append(Offset(51), 1).code(), Errc::kInvalidArgument);
  EXPECT_EQ(index->entries(), 1u);
  EXPECT_EQ(index->last_offset(), Offset(51));
}

TEST_F(OffsetIndexTest, AppendOfAnOffsetThatIsNotRelativeToTheBaseIsRefused) {
  auto index = OpenIndex();
  EXPECT_EQ(index->Append(kBase - 1, 0).code(), Errc::kInvalidArgument);
  EXPECT_EQ(index->Append(kBase + (int64_t{INT32_MAX} + 1), 0).code(), Errc::kInvalidArgument);
  EXPECT_TRUE(index->Append(kBase + int64_t{INT32_MAX}, 0).ok());
}

TEST_F(OffsetIndexTest, FetchUpperBoundOffsetFindsTheFirstEntryAtOrPastTheEnd) {
  auto index = OpenIndex();
  const OffsetPosition first{kBase, 0}, second{kBase + 1, 10}, third{kBase + 2, 23},
      fourth{kBase + 3, 37};
  EXPECT_EQ(index->FetchUpperBoundOffset(first, 5), std::nullopt);
  for (const OffsetPosition& entry : {first, second, third, fourth}) {
    ASSERT_TRUE(index->Append(entry.offset, entry.position).ok());
  }
  EXPECT_EQ(index->FetchUpperBoundOffset(first, 5), second);
  EXPECT_EQ(index->FetchUpperBoundOffset(first, 10), second);
  EXPECT_EQ(index->FetchUpperBoundOffset(first, 23), third);
  EXPECT_EQ(index->FetchUpperBoundOffset(first, 22), third);
  EXPECT_EQ(index->FetchUpperBoundOffset(second, 24), fourth);
  EXPECT_EQ(index->FetchUpperBoundOffset(fourth, 1), std::nullopt);
  EXPECT_EQ(index->FetchUpperBoundOffset(first, 200), std::nullopt);
  EXPECT_EQ(index->FetchUpperBoundOffset(second, 200), std::nullopt);
}

TEST_F(OffsetIndexTest, ReopenAfterTrimKeepsEntriesAndIsFull) {
  const OffsetPosition first{Offset(51), 0}, second{Offset(52), 1};
  {
    auto index = OpenIndex();
    ASSERT_TRUE(index->Append(first.offset, first.position).ok());
    ASSERT_TRUE(index->Append(second.offset, second.position).ok());
    ASSERT_TRUE(index->TrimToValidSize().ok());
  }
  EXPECT_EQ(*env_.FileSize(Path()), 16u);
  auto reopened = OpenIndex();
  EXPECT_EQ(reopened->Lookup(first.offset), first);
  EXPECT_EQ(reopened->Lookup(second.offset), second);
  EXPECT_EQ(reopened->last_offset(), second.offset);
  EXPECT_EQ(reopened->entries(), 2u);
  EXPECT_TRUE(reopened->SanityCheck(100).ok());
  // A reopened index is mapped at its length: there is no room until it is resized.
  EXPECT_EQ(reopened->Append(Offset(53), 2).code(), Errc::kInvalidArgument);
  ASSERT_TRUE(reopened->Resize(reopened->max_index_size_bytes()).ok());
  EXPECT_TRUE(reopened->Append(Offset(53), 2).ok());
}

TEST_F(OffsetIndexTest, EntriesAreBigEndianRelativeOffsetThenPosition) {
  {
    auto index = OpenIndex();
    ASSERT_TRUE(index->Append(kBase + 0x01020304, 0x0A0B0C0D).ok());
    ASSERT_TRUE(index->TrimToValidSize().ok());
  }
  auto bytes = ReadWholeFile(env_, Path());
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, (Bytes{0x01, 0x02, 0x03, 0x04, 0x0A, 0x0B, 0x0C, 0x0D}));
}

TEST_F(OffsetIndexTest, TruncateToKeepsEntriesBelowTheOffset) {
  auto index = OpenIndex(Offset(0), 10 * 8, "00000000000000000000.index");
  index->Truncate();
  for (int i = 1; i < 10; ++i) ASSERT_TRUE(index->Append(Offset(i), i).ok());

  index->TruncateTo(Offset(12));
  EXPECT_EQ(index->Lookup(Offset(10)), (OffsetPosition{Offset(9), 9}))
      << "truncating past the end changes nothing";
  EXPECT_EQ(index->last_offset(), Offset(9));

  ASSERT_TRUE(index->Append(Offset(10), 10).ok());
  index->TruncateTo(Offset(10));
  EXPECT_EQ(index->Lookup(Offset(10)), (OffsetPosition{Offset(9), 9}))
      << "truncating at an entry removes it";
  EXPECT_EQ(index->last_offset(), Offset(9));
  ASSERT_TRUE(index->Append(Offset(10), 10).ok());

  index->TruncateTo(Offset(9));
  EXPECT_EQ(index->Lookup(Offset(10)), (OffsetPosition{Offset(8), 8}));
  EXPECT_EQ(index->last_offset(), Offset(8));
  ASSERT_TRUE(index->Append(Offset(9), 9).ok());

  index->TruncateTo(Offset(5));
  EXPECT_EQ(index->Lookup(Offset(10)), (OffsetPosition{Offset(4), 4}));
  EXPECT_EQ(index->last_offset(), Offset(4));
  ASSERT_TRUE(index->Append(Offset(5), 5).ok());

  index->Truncate();
  EXPECT_EQ(index->entries(), 0u);
  EXPECT_TRUE(index->Append(Offset(0), 0).ok());
}

TEST_F(OffsetIndexTest, TruncateToAnOffsetBetweenEntriesKeepsTheLowerEntry) {
  auto index = OpenIndex();
  ASSERT_TRUE(index->Append(kBase + 10, 100).ok());
  ASSERT_TRUE(index->Append(kBase + 20, 200).ok());
  index->TruncateTo(kBase + 15);
  EXPECT_EQ(index->entries(), 1u);
  EXPECT_EQ(index->last_offset(), kBase + 10);
}

TEST_F(OffsetIndexTest, SanityCheckAcceptsASingleEntryAtTheBase) {
  auto index = OpenIndex(Offset(20), 10 * 8, "00000000000000000020.index");
  ASSERT_TRUE(index->Append(Offset(20), 0).ok());
  EXPECT_TRUE(index->SanityCheck(1).ok());
}

TEST_F(OffsetIndexTest, SanityCheckRejectsPreallocatedZerosLeftByACrash) {
  {
    auto index = OpenIndex();
    ASSERT_TRUE(index->Append(kBase + 3, 10).ok());
    ASSERT_TRUE(index->Append(kBase + 7, 20).ok());
    // Destroyed without TrimToValidSize: the file keeps its 240 preallocated bytes.
  }
  auto reopened = OpenIndex();
  EXPECT_EQ(reopened->entries(), 30u);
  EXPECT_EQ(reopened->SanityCheck(1000).code(), Errc::kCorruption);
}

TEST_F(OffsetIndexTest, SanityCheckRejectsAPartialEntry) {
  {
    auto file = env_.OpenFile(Path(), OpenMode::kCreateNew);
    ASSERT_TRUE(file.ok());
    Bytes entry(8);
    StoreBigEndian32(entry.data(), 1);
    StoreBigEndian32(entry.data() + 4, 0);
    entry.push_back(0x7f);
    ASSERT_TRUE((*file)->Append(entry).ok());
  }
  auto index = OpenIndex();
  EXPECT_EQ(index->entries(), 1u);
  EXPECT_EQ(index->SanityCheck(1000).code(), Errc::kCorruption);
}

TEST_F(OffsetIndexTest, SanityCheckRejectsAPositionPastTheLog) {
  auto index = OpenIndex();
  ASSERT_TRUE(index->Append(kBase + 3, 4096).ok());
  ASSERT_TRUE(index->TrimToValidSize().ok());
  EXPECT_TRUE(index->SanityCheck(4097).ok());
  EXPECT_EQ(index->SanityCheck(4096).code(), Errc::kCorruption);
}

TEST_F(OffsetIndexTest, ResetDropsEntriesAndRegrowsTheFile) {
  auto index = OpenIndex();
  ASSERT_TRUE(index->Append(kBase + 3, 10).ok());
  ASSERT_TRUE(index->TrimToValidSize().ok());
  EXPECT_EQ(index->max_entries(), 1u);
  ASSERT_TRUE(index->Reset().ok());
  EXPECT_EQ(index->entries(), 0u);
  EXPECT_EQ(index->max_entries(), 30u);
  EXPECT_EQ(*env_.FileSize(Path()), 240u);
}

}  // namespace
}  // namespace ksim
