// LogSegment: the behaviours Kafka's LogSegmentTest checks (reads before, at, between and past
// batches, max offset, truncation, timestamps, roll decisions, file renames, recovery of corrupt
// indexes and corrupt records), plus index maintenance and reopening.
#include "core/storage/log_segment.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/base/random.h"
#include "core/env/posix_env.h"
#include "tests/support/core/log_test_util.h"
#include "tests/support/core/temp_dir.h"

namespace ksim {
namespace {

using testing::AppendToSegment;
using testing::BatchesIn;
using testing::MakeBatch;
using testing::OffsetsIn;
using testing::RecordsIn;

constexpr int64_t kStartMs = 1'600'000'000'000;

class LogSegmentTest : public ::testing::Test {
 protected:
  LogSegmentTest() : clock_(kStartMs * kUsPerMs) {}

  LogConfig Config(int32_t index_interval_bytes = 10) const {
    LogConfig config;
    config.index_interval_bytes = index_interval_bytes;
    config.max_index_size_bytes = 1500;  // as Kafka's LogUtils.createSegment for the time index
    return config;
  }
  std::unique_ptr<LogSegment> Create(Offset base, int32_t index_interval_bytes = 10) {
    auto segment =
        LogSegment::Create(env_, clock_, dir_.path(), base, Config(index_interval_bytes));
    EXPECT_TRUE(segment.ok()) << segment.status().ToString();
    return std::move(segment).value();
  }
  std::unique_ptr<LogSegment> Reopen(Offset base, int32_t index_interval_bytes = 10) {
    auto segment = LogSegment::Open(env_, clock_, dir_.path(), base, Config(index_interval_bytes));
    EXPECT_TRUE(segment.ok()) << segment.status().ToString();
    return std::move(segment).value();
  }
  // Kafka's LogSegmentTest.records: one batch at `offset`, timestamps offset * 10.
  static Bytes Records(int64_t offset, const std::vector<std::string>& values) {
    return MakeBatch(Offset(offset), values, offset * 10);
  }
  static void Append(LogSegment& segment, const Bytes& batch) {
    Status status = AppendToSegment(segment, batch);
    ASSERT_TRUE(status.ok()) << status.ToString();
  }
  static std::optional<SegmentRead> ReadOk(const LogSegment& segment, int64_t start,
                                           int32_t max_size,
                                           std::optional<int64_t> max_offset = std::nullopt) {
    auto read = segment.Read(Offset(start),
                             max_offset ? std::optional<Offset>(Offset(*max_offset)) : std::nullopt,
                             max_size);
    EXPECT_TRUE(read.ok()) << read.status().ToString();
    return read.ok() ? std::move(read).value() : std::nullopt;
  }

  testing::TempDir dir_;
  PosixEnv env_;
  ManualClock clock_;
};

TEST_F(LogSegmentTest, FilesAreNamedForTheBaseOffsetPaddedTo20Digits) {
  auto segment = Create(Offset(368769));
  EXPECT_EQ(segment->log_path(), dir_.path() + "/00000000000000368769.log");
  EXPECT_EQ(segment->index_path(), dir_.path() + "/00000000000000368769.index");
  EXPECT_EQ(segment->time_index_path(), dir_.path() + "/00000000000000368769.timeindex");
  EXPECT_TRUE(env_.FileExists(segment->log_path()));
  EXPECT_EQ(*env_.FileSize(segment->index_path()), 1496u);       // preallocated: 187 entries of 8
  EXPECT_EQ(*env_.FileSize(segment->time_index_path()), 1500u);  // 125 entries of 12 bytes
  EXPECT_EQ(OffsetFromFileName("00000000000000368769.log"), Offset(368769));
  EXPECT_EQ(OffsetFromFileName("00000000000000368769.index.swap"), Offset(368769));
  EXPECT_EQ(OffsetFromFileName("0000000000000036876.log"), std::nullopt);
  EXPECT_EQ(OffsetFromFileName("leader-epoch-checkpoint"), std::nullopt);
  EXPECT_EQ(OffsetFromFileName("99999999999999999999.log"), std::nullopt);
  // Kafka's %020d at the ends of the range, each read back by OffsetFromFileName.
  EXPECT_EQ(FilenamePrefixFromOffset(Offset(0)), "00000000000000000000");
  EXPECT_EQ(FilenamePrefixFromOffset(Offset(10)), "00000000000000000010");
  EXPECT_EQ(FilenamePrefixFromOffset(Offset(INT64_MAX)), "09223372036854775807");
  for (int64_t offset : {int64_t{0}, int64_t{9}, int64_t{1234567890123}, INT64_MAX}) {
    EXPECT_EQ(OffsetFromFileName(FilenamePrefixFromOffset(Offset(offset)) + ".log"),
              Offset(offset));
  }
  // A segment's files: the prefix, the extension and a suffix, joined to the directory with
  // exactly one slash.
  EXPECT_EQ(LogFilePath("d/t-0", Offset(10)), "d/t-0/00000000000000000010.log");
  EXPECT_EQ(LogFilePath("d/t-0/", Offset(10), ".deleted"),
            "d/t-0/00000000000000000010.log.deleted");
  EXPECT_EQ(IndexFilePath("", Offset(INT64_MAX)), "09223372036854775807.index");
  EXPECT_EQ(TimeIndexFilePath("/", Offset(0), ".swap"), "/00000000000000000000.timeindex.swap");
}

TEST_F(LogSegmentTest, ReadOnEmptySegmentGivesNothing) {
  auto segment = Create(Offset(40));
  EXPECT_EQ(ReadOk(*segment, 40, 300), std::nullopt);
}

TEST_F(LogSegmentTest, ReadBeforeFirstOffsetStartsAtTheFirstBatch) {
  auto segment = Create(Offset(40));
  const Bytes batch = Records(50, {"hello", "there", "little", "bee"});
  Append(*segment, batch);
  auto read = ReadOk(*segment, 41, 300);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->records, batch);
  EXPECT_EQ(read->position, 0u);
}

TEST_F(LogSegmentTest, ReadWithMaxOffsetStopsBeforeTheBatchHoldingIt) {
  auto segment = Create(Offset(50));
  for (int64_t offset = 50; offset <= 52; ++offset) Append(*segment, Records(offset, {"m"}));
  for (int64_t offset = 50; offset <= 52; ++offset) {
    auto read = ReadOk(*segment, offset, 1024, offset + 1);
    ASSERT_TRUE(read);
    EXPECT_EQ(OffsetsIn(read->records), std::vector<int64_t>{offset});
  }
  auto read = ReadOk(*segment, 51, 1024, 51);
  ASSERT_TRUE(read);
  EXPECT_TRUE(read->records.empty()) << "a bound at the start gives nothing";
  read = ReadOk(*segment, 52, 1024, 40);
  ASSERT_TRUE(read);
  EXPECT_TRUE(read->records.empty()) << "a bound below the start gives nothing";
}

TEST_F(LogSegmentTest, ReadPastTheLastOffsetGivesNothing) {
  auto segment = Create(Offset(40));
  Append(*segment, Records(50, {"hello", "there"}));
  EXPECT_EQ(ReadOk(*segment, 52, 200), std::nullopt);
}

TEST_F(LogSegmentTest, ReadFromAGapStartsAtTheNextBatch) {
  auto segment = Create(Offset(40));
  Append(*segment, Records(50, {"hello", "there"}));
  const Bytes second = Records(60, {"alpha", "beta"});
  Append(*segment, second);
  auto read = ReadOk(*segment, 55, 200);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->records, second);
}

TEST_F(LogSegmentTest, ReadIsCutAtMaxSizeUnlessMinOneMessage) {
  auto segment = Create(Offset(0));
  const Bytes first = Records(0, {"aaaaaaaaaa"});
  Append(*segment, first);
  Append(*segment, Records(1, {"bbbbbbbbbb"}));
  auto read = ReadOk(*segment, 0, 10);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->records.size(), 10u);
  EXPECT_TRUE(read->first_entry_incomplete);
  auto whole = segment->Read(Offset(0), std::nullopt, 10, segment->size(), true);
  ASSERT_TRUE(whole.ok() && whole->has_value());
  EXPECT_EQ((*whole)->records, first);
  EXPECT_FALSE((*whole)->first_entry_incomplete);
  auto none = ReadOk(*segment, 0, 0);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->records.empty());
}

TEST_F(LogSegmentTest, TruncateRemovesTheBatchAndEverythingAfterIt) {
  auto segment = Create(Offset(40));
  int64_t offset = 40;
  for (int i = 0; i < 30; ++i) {
    const Bytes first = Records(offset, {"hello"});
    Append(*segment, first);
    Append(*segment, Records(offset + 1, {"hello"}));
    auto read = ReadOk(*segment, offset, 10000);
    ASSERT_TRUE(read);
    EXPECT_EQ(OffsetsIn(read->records), (std::vector<int64_t>{offset, offset + 1}));
    auto truncated = segment->TruncateTo(Offset(offset + 1));
    ASSERT_TRUE(truncated.ok());
    EXPECT_EQ(*truncated, first.size());
    read = ReadOk(*segment, offset, 10000);
    ASSERT_TRUE(read);
    EXPECT_EQ(read->records, first);
    EXPECT_EQ(segment->next_offset(), Offset(offset + 1));
    ++offset;
  }
}

TEST_F(LogSegmentTest, TruncateToAnOffsetInAGapRemovesTheBatchesAfterIt) {
  auto segment = Create(Offset(40));
  Append(*segment, MakeBatch(Offset(40), {"first message"}, 40000));
  Append(*segment, MakeBatch(Offset(43), {"message after gap"}, 43000));
  ASSERT_TRUE(segment->TruncateTo(Offset(41)).ok());
  auto read = ReadOk(*segment, 40, 10000);
  ASSERT_TRUE(read);
  const std::vector<BatchHeader> batches = BatchesIn(read->records);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0].base_offset, Offset(40));
}

TEST_F(LogSegmentTest, TruncatingAReopenedEmptySegmentRegrowsItsIndexesAndRollClock) {
  const int64_t max_segment_ms = 300000;
  Create(Offset(0))->Close().ok();
  auto reopened = Reopen(Offset(0));
  EXPECT_EQ(reopened->offset_index().length(), 0u) << "closing trimmed the empty indexes";
  EXPECT_EQ(reopened->time_index().length(), 0u);

  clock_.AdvanceMs(500);
  ASSERT_TRUE(reopened->TruncateTo(Offset(57)).ok());
  EXPECT_EQ(*reopened->TimeWaitedForRollMs(clock_.NowMs(), kNoTimestamp), 0);
  EXPECT_FALSE(reopened->offset_index().IsFull());
  EXPECT_FALSE(reopened->time_index().IsFull());

  RollParams params{max_segment_ms, INT32_MAX, kNoTimestamp, Offset(100), 1024, clock_.NowMs()};
  EXPECT_FALSE(*reopened->ShouldRoll(params));
  // An empty segment is not rolled for its age...
  clock_.AdvanceMs(max_segment_ms + 1);
  EXPECT_EQ(*reopened->TimeWaitedForRollMs(clock_.NowMs(), kNoTimestamp), max_segment_ms + 1);
  params.now_ms = clock_.NowMs();
  EXPECT_FALSE(*reopened->ShouldRoll(params));
  // ...but is when the next offset does not fit.
  params.max_offset_in_messages = Offset(int64_t{INT32_MAX} + 200);
  EXPECT_TRUE(*reopened->ShouldRoll(params));
}

TEST_F(LogSegmentTest, TruncationReloadsTheLargestTimestampAndNextOffset) {
  const size_t batch_size = Records(0, {"hello"}).size();
  auto segment = Create(Offset(40), static_cast<int32_t>(2 * batch_size - 1));
  for (int64_t offset = 40; offset < 70; ++offset) Append(*segment, Records(offset, {"hello"}));
  EXPECT_EQ(segment->next_offset(), Offset(70));
  EXPECT_EQ(segment->time_index().entries(), 30u / 2 - 1);
  EXPECT_EQ(segment->offset_index().entries(), 30u / 2 - 1);
  ASSERT_TRUE(segment->TruncateTo(Offset(41)).ok());
  EXPECT_EQ(segment->time_index().entries(), 0u);
  EXPECT_EQ(segment->LargestTimestampMs(), 400);
  EXPECT_EQ(segment->next_offset(), Offset(41));
}

TEST_F(LogSegmentTest, FullTruncationResetsTheRollClockAndAllowsTheSameOffsetsAgain) {
  auto segment = Create(Offset(40));
  Append(*segment, MakeBatch(Offset(40), {"hello", "there"}));
  clock_.AdvanceMs(500);
  EXPECT_EQ(*segment->TimeWaitedForRollMs(clock_.NowMs(), kNoTimestamp), 500);
  ASSERT_TRUE(segment->TruncateTo(Offset(0)).ok());
  EXPECT_EQ(*segment->TimeWaitedForRollMs(clock_.NowMs(), kNoTimestamp), 0);
  EXPECT_FALSE(segment->time_index().IsFull());
  EXPECT_FALSE(segment->offset_index().IsFull());
  EXPECT_EQ(ReadOk(*segment, 0, 1024), std::nullopt);
  EXPECT_EQ(segment->size(), 0u);
  Append(*segment, MakeBatch(Offset(40), {"hello", "there"}));
  EXPECT_EQ(segment->next_offset(), Offset(42));
}

TEST_F(LogSegmentTest, FindOffsetByTimestampUsesTheTimeIndexThenScans) {
  const size_t batch_size = Records(0, {"msg00"}).size();
  auto segment = Create(Offset(40), static_cast<int32_t>(batch_size * 2 - 1));
  for (int64_t i = 40; i < 50; ++i) {
    Append(*segment, MakeBatch(Offset(i), {"msg" + std::to_string(i)}, i * 10));
  }
  EXPECT_EQ(segment->LargestTimestampMs(), 490);
  auto find = [&](int64_t timestamp) -> std::optional<int64_t> {
    auto found = segment->FindOffsetByTimestamp(timestamp, Offset(0));
    EXPECT_TRUE(found.ok());
    if (!found.ok() || !found->has_value()) return std::nullopt;
    return (*found)->offset.value();
  };
  EXPECT_EQ(find(420), 42) << "an indexed timestamp";
  EXPECT_EQ(find(421), 43);
  EXPECT_EQ(find(430), 43) << "a timestamp that is not indexed";
  EXPECT_EQ(find(431), 44);
  EXPECT_EQ(find(491), std::nullopt) << "past the last timestamp";
  EXPECT_EQ(find(401), 41) << "before the first indexed timestamp";
  EXPECT_EQ(find(399), 40) << "before the first timestamp";
}

TEST_F(LogSegmentTest, NextOffsetFollowsAppends) {
  auto segment = Create(Offset(40));
  EXPECT_EQ(segment->next_offset(), Offset(40));
  Append(*segment, MakeBatch(Offset(50), {"hello", "there", "you"}));
  EXPECT_EQ(segment->next_offset(), Offset(53));
}

TEST_F(LogSegmentTest, IndexEntriesAreAddedAfterIndexIntervalBytes) {
  const Bytes batch = Records(0, {"0123456789"});
  // Entries when more than 3 batches were appended since the last: before batches 4, 8, 12...
  auto segment = Create(Offset(0), static_cast<int32_t>(3 * batch.size()));
  for (int64_t i = 0; i < 16; ++i) Append(*segment, Records(i, {"0123456789"}));
  ASSERT_EQ(segment->offset_index().entries(), 3u);
  for (size_t n = 0; n < 3; ++n) {
    const OffsetPosition entry = segment->offset_index().EntryAt(n);
    EXPECT_EQ(entry.offset, Offset(static_cast<int64_t>(4 * (n + 1))));
    EXPECT_EQ(static_cast<size_t>(entry.position), 4 * (n + 1) * batch.size());
  }
  EXPECT_TRUE(segment->SanityCheck().ok());
}

TEST_F(LogSegmentTest, ReadBetweenIndexEntriesScansForward) {
  auto segment = Create(Offset(0), 100);
  for (int64_t i = 0; i < 50; ++i) Append(*segment, Records(i, {"value-" + std::to_string(i)}));
  ASSERT_GT(segment->offset_index().entries(), 3u);
  for (int64_t i = 0; i < 50; ++i) {
    auto read = ReadOk(*segment, i, 1, i + 1);
    ASSERT_TRUE(read);
    auto located = segment->TranslateOffset(Offset(i));
    ASSERT_TRUE(located.ok() && located->has_value());
    EXPECT_EQ((*located)->last_offset, Offset(i));
    EXPECT_EQ(read->position, (*located)->position);
    // The scan starts at the greatest index entry <= i: never more than an interval behind.
    EXPECT_LE(read->position - segment->offset_index().Lookup(Offset(i)).position, 100u + 80u);
  }
}

// The batches appended since the last index entry are found in memory, the others by a scan of
// the .log file: either way TranslateOffset names the batch a model of the appends says, through
// random appends (several batches at once, gaps between offsets), truncations, a reopen that
// trusts the indexes, a recovery, and the segment becoming inactive.
TEST_F(LogSegmentTest, TranslateOffsetFindsTheSameBatchFromMemoryAsFromTheFile) {
  constexpr int64_t kBase = 100;
  LogConfig config = Config(300);
  config.max_index_size_bytes = 1 << 16;
  auto open = [&](bool create) {
    auto opened = create ? LogSegment::Create(env_, clock_, dir_.path(), Offset(kBase), config)
                         : LogSegment::Open(env_, clock_, dir_.path(), Offset(kBase), config);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return std::move(opened).value();
  };
  std::unique_ptr<LogSegment> segment = open(true);
  std::vector<BatchLocation> model;  // every batch held, in order
  std::vector<int64_t> bases;        // their base offsets
  RandomStream random(20261205);
  auto check = [&](const std::string& step) {
    const int64_t end = model.empty() ? kBase : model.back().last_offset.value() + 2;
    for (int64_t offset = kBase; offset <= end; ++offset) {
      for (const uint64_t from :
           {uint64_t{0}, model.empty() ? 0 : model[model.size() / 2].position}) {
        auto expected = std::find_if(model.begin(), model.end(), [&](const BatchLocation& b) {
          return b.last_offset >= Offset(offset) && b.position >= from;
        });
        auto found = segment->TranslateOffset(Offset(offset), from);
        ASSERT_TRUE(found.ok()) << step << ": " << found.status().ToString();
        if (expected == model.end()) {
          EXPECT_FALSE(found->has_value()) << step << " offset " << offset << " from " << from;
          continue;
        }
        ASSERT_TRUE(found->has_value()) << step << " offset " << offset << " from " << from;
        EXPECT_EQ((*found)->last_offset, expected->last_offset) << step << " offset " << offset;
        EXPECT_EQ((*found)->position, expected->position) << step << " offset " << offset;
        EXPECT_EQ((*found)->size, expected->size) << step << " offset " << offset;
      }
    }
  };
  int64_t next = kBase;
  bool scanned_for_old = false;
  size_t most_entries = 0;
  for (int step = 0; step < 400; ++step) {
    const int64_t action = random.UniformInt(0, 99);
    if (action < 6 && !model.empty()) {
      const int64_t to = random.UniformInt(kBase, model.back().last_offset.value() + 1);
      ASSERT_TRUE(segment->TruncateTo(Offset(to)).ok());
      while (!model.empty() && model.back().last_offset >= Offset(to)) {
        model.pop_back();
        bases.pop_back();
      }
      next = model.empty() ? kBase : model.back().last_offset.value() + 1;
      check("truncate to " + std::to_string(to));
    } else if (action < 9) {
      ASSERT_TRUE(segment->Close().ok());
      segment = open(false);
      ASSERT_TRUE(segment->SanityCheck().ok());
      ASSERT_TRUE(segment->LoadFromIndexes().ok());
      ASSERT_TRUE(segment->ResizeIndexes(config.max_index_size_bytes).ok());
      check("reopen");
    } else if (action < 12) {
      ASSERT_TRUE(segment->Close().ok());
      segment = open(false);
      ASSERT_TRUE(segment->Recover().ok());
      ASSERT_TRUE(segment->ResizeIndexes(config.max_index_size_bytes).ok());
      // Recovery keeps a gap between batches (offsets increase, as Kafka's recovery requires).
      next = model.empty() ? kBase : model.back().last_offset.value() + 1;
      ASSERT_EQ(segment->next_offset(), Offset(next));
      check("recover");
    } else {
      // One to three batches in one append, a fifth of them after a gap of one or two offsets.
      Bytes appended;
      const uint64_t at = segment->size();
      for (int64_t n = random.UniformInt(1, 3); n > 0; --n) {
        const int64_t first = next + (random.UniformInt(0, 4) == 0 ? random.UniformInt(1, 2) : 0);
        std::vector<std::string> values(static_cast<size_t>(random.UniformInt(1, 4)));
        for (std::string& value : values) value.assign(random.UniformInt(0, 60), 'v');
        const Bytes batch = Records(first, values);
        model.push_back(BatchLocation{Offset(first + static_cast<int64_t>(values.size()) - 1),
                                      at + appended.size(), batch.size()});
        bases.push_back(first);
        appended.insert(appended.end(), batch.begin(), batch.end());
        next = first + static_cast<int64_t>(values.size());
      }
      Append(*segment, appended);
      // The batch just appended is found without reading the file.
      uint64_t scanned = 0;
      auto last = segment->TranslateOffset(model.back().last_offset, 0, &scanned);
      ASSERT_TRUE(last.ok() && last->has_value());
      EXPECT_EQ(scanned, 0u) << "step " << step;
      // The first batch, once behind an index entry, is scanned for.
      most_entries = std::max(most_entries, segment->offset_index().entries());
      if (segment->offset_index().entries() > 0) {
        scanned = 0;
        ASSERT_TRUE(segment->TranslateOffset(Offset(kBase), 0, &scanned).ok());
        scanned_for_old |= scanned > 0;
      }
      if (step % 10 == 0) check("append at step " + std::to_string(step));
    }
  }
  EXPECT_TRUE(scanned_for_old);
  EXPECT_GE(most_entries, 10u);
  check("end");
  ASSERT_TRUE(segment->OnBecomeInactive().ok());
  check("inactive");
}

TEST_F(LogSegmentTest, CloseAndRenameForDeletionAddsTheDeletedSuffix) {
  auto segment = Create(Offset(40));
  const std::string log_path = segment->log_path();
  const std::string index_path = segment->index_path();
  auto renamed = segment->CloseAndRenameForDeletion();
  ASSERT_TRUE(renamed.ok());
  EXPECT_EQ(renamed->size(), 3u);
  EXPECT_TRUE(env_.FileExists(log_path + ".deleted"));
  EXPECT_TRUE(env_.FileExists(index_path + ".deleted"));
  EXPECT_FALSE(env_.FileExists(log_path));
  EXPECT_FALSE(env_.FileExists(index_path));
}

TEST_F(LogSegmentTest, RecoveryFixesACorruptIndex) {
  auto segment = Create(Offset(0));
  for (int64_t i = 0; i < 100; ++i) Append(*segment, Records(i, {std::to_string(i)}));
  testing::WriteNonsense(env_, segment->index_path(), 5, segment->offset_index().length() - 5);
  auto recovery = segment->Recover();
  ASSERT_TRUE(recovery.ok());
  EXPECT_EQ(recovery->truncated_bytes, 0u);
  for (int64_t i = 0; i < 100; ++i) {
    auto read = ReadOk(*segment, i, 1024, i + 1);
    ASSERT_TRUE(read);
    EXPECT_EQ(OffsetsIn(read->records), std::vector<int64_t>{i});
  }
}

TEST_F(LogSegmentTest, RecoveryFixesACorruptTimeIndex) {
  auto segment = Create(Offset(0));
  for (int64_t i = 0; i < 100; ++i) Append(*segment, Records(i, {std::to_string(i)}));
  testing::WriteNonsense(env_, segment->time_index_path(), 5, segment->time_index().length() - 5);
  ASSERT_TRUE(segment->Recover().ok());
  for (int64_t i = 0; i < 100; ++i) {
    auto found = segment->FindOffsetByTimestamp(i * 10, Offset(0));
    ASSERT_TRUE(found.ok() && found->has_value());
    EXPECT_EQ((*found)->offset, Offset(i));
    if (i < 99) {
      found = segment->FindOffsetByTimestamp(i * 10 + 1, Offset(0));
      ASSERT_TRUE(found.ok() && found->has_value());
      EXPECT_EQ((*found)->offset, Offset(i + 1));
    }
  }
}

TEST_F(LogSegmentTest, RecoveryCutsTheLogAtTheFirstCorruptBatch) {
  RandomStream random(7);
  for (int round = 0; round < 10; ++round) {
    auto segment = Create(Offset(0));
    const int64_t appended = 20;
    for (int64_t i = 0; i < appended; ++i) Append(*segment, Records(i, {std::to_string(i)}));
    const int64_t corrupt_from = random.UniformInt(0, appended - 1);
    auto located = segment->TranslateOffset(Offset(corrupt_from));
    ASSERT_TRUE(located.ok() && located->has_value());
    // Corrupt from somewhere inside the chosen batch's first 15 bytes to the end of the file.
    const uint64_t position =
        (*located)->position + static_cast<uint64_t>(random.UniformInt(0, 14));
    testing::WriteNonsense(env_, segment->log_path(), position, segment->size() - position,
                           static_cast<uint64_t>(round) + 1);
    auto recovery = segment->Recover();
    ASSERT_TRUE(recovery.ok()) << recovery.status().ToString();
    EXPECT_FALSE(recovery->damage.ok());
    EXPECT_EQ(recovery->valid_bytes, (*located)->position);
    auto read = segment->Read(Offset(0), std::nullopt, 1 << 20);
    ASSERT_TRUE(read.ok());
    std::vector<int64_t> expected;
    for (int64_t i = 0; i < corrupt_from; ++i) expected.push_back(i);
    EXPECT_EQ(read->has_value() ? OffsetsIn((*read)->records) : std::vector<int64_t>{}, expected);
    EXPECT_EQ(segment->next_offset(), Offset(corrupt_from));
    segment->CloseAndRenameForDeletion().ok();
  }
}

TEST_F(LogSegmentTest, RecoveryCutsATornLastBatch) {
  auto segment = Create(Offset(0));
  for (int64_t i = 0; i < 5; ++i) Append(*segment, Records(i, {std::to_string(i)}));
  const uint64_t whole = segment->size();
  Append(*segment, Records(5, {"torn"}));
  ASSERT_TRUE(segment->Close().ok());
  {
    auto file = env_.OpenFile(dir_.path() + "/00000000000000000000.log", OpenMode::kOpenExisting);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Truncate(whole + 20).ok());
  }
  auto reopened = Reopen(Offset(0));
  auto recovery = reopened->Recover();
  ASSERT_TRUE(recovery.ok());
  EXPECT_EQ(recovery->truncated_bytes, 20u);
  EXPECT_EQ(reopened->size(), whole);
  EXPECT_EQ(reopened->next_offset(), Offset(5));
}

TEST_F(LogSegmentTest, RecoveryRebuildsTheSameIndexesAsAppendsWrote) {
  auto segment = Create(Offset(0), 200);
  for (int64_t i = 0; i < 100; ++i) Append(*segment, Records(i, {std::string(i % 50, 'x')}));
  std::vector<OffsetPosition> offset_entries;
  for (size_t n = 0; n < segment->offset_index().entries(); ++n) {
    offset_entries.push_back(segment->offset_index().EntryAt(n));
  }
  std::vector<TimestampOffset> time_entries;
  for (size_t n = 0; n < segment->time_index().entries(); ++n) {
    time_entries.push_back(segment->time_index().EntryAt(n));
  }
  ASSERT_TRUE(segment->Recover().ok());
  ASSERT_EQ(segment->offset_index().entries(), offset_entries.size());
  for (size_t n = 0; n < offset_entries.size(); ++n) {
    EXPECT_EQ(segment->offset_index().EntryAt(n), offset_entries[n]);
  }
  // Recovery also writes the closing entry (largest timestamp), as Kafka's recover does.
  const bool closing_entry_written = time_entries.back() != TimestampOffset{990, Offset(99)};
  ASSERT_EQ(segment->time_index().entries(), time_entries.size() + closing_entry_written);
  for (size_t n = 0; n < time_entries.size(); ++n) {
    EXPECT_EQ(segment->time_index().EntryAt(n), time_entries[n]);
  }
  EXPECT_EQ(segment->time_index().last_entry(), (TimestampOffset{990, Offset(99)}));
}

TEST_F(LogSegmentTest, RecoveryCutsAtOffsetsThatGoBackwards) {
  auto segment = Create(Offset(0));
  Append(*segment, Records(0, {"a"}));
  Append(*segment, Records(1, {"b"}));
  ASSERT_TRUE(segment->Close().ok());
  {
    // A third batch whose offset repeats one already in the segment.
    auto file = env_.OpenFile(dir_.path() + "/00000000000000000000.log", OpenMode::kOpenExisting);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(Records(1, {"again"})).ok());
  }
  auto reopened = Reopen(Offset(0));
  auto recovery = reopened->Recover();
  ASSERT_TRUE(recovery.ok());
  EXPECT_EQ(recovery->batches, 2);
  EXPECT_EQ(reopened->next_offset(), Offset(2));
}

TEST_F(LogSegmentTest, ReopenedSegmentTrustsSaneIndexes) {
  auto segment = Create(Offset(100), 50);
  for (int64_t i = 100; i < 160; ++i) Append(*segment, Records(i, {"v" + std::to_string(i)}));
  const size_t entries = segment->offset_index().entries();
  ASSERT_TRUE(segment->Close().ok());
  auto reopened = Reopen(Offset(100), 50);
  EXPECT_FALSE(reopened->indexes_missing());
  ASSERT_TRUE(reopened->SanityCheck().ok());
  ASSERT_TRUE(reopened->LoadFromIndexes().ok());
  EXPECT_EQ(reopened->offset_index().entries(), entries);
  EXPECT_EQ(reopened->next_offset(), Offset(160));
  EXPECT_EQ(reopened->LargestTimestampMs(), 1590);
  auto read = ReadOk(*reopened, 130, 1 << 20);
  ASSERT_TRUE(read);
  EXPECT_EQ(RecordsIn(read->records).front().offset, Offset(130));
}

TEST_F(LogSegmentTest, MissingIndexesAreReportedOnOpen) {
  auto segment = Create(Offset(0));
  Append(*segment, Records(0, {"a"}));
  ASSERT_TRUE(segment->Close().ok());
  ASSERT_TRUE(env_.RemoveFile(dir_.path() + "/00000000000000000000.timeindex").ok());
  EXPECT_TRUE(Reopen(Offset(0))->indexes_missing());
}

TEST_F(LogSegmentTest, ShouldRollOnSizeAgeFullIndexAndOffsetOverflow) {
  auto segment = Create(Offset(0));
  const Bytes batch = Records(0, {"hello"});
  Append(*segment, batch);
  const int64_t size = static_cast<int64_t>(batch.size());
  RollParams params{1000, 2 * size, 5, Offset(1), size, clock_.NowMs()};
  EXPECT_FALSE(*segment->ShouldRoll(params)) << "exactly fits";
  params.messages_size = size + 1;
  EXPECT_TRUE(*segment->ShouldRoll(params)) << "would overflow segment.bytes";
  params.messages_size = size;
  // Age counts from the first batch's timestamp (0 here) to the appended batch's timestamp.
  params.max_timestamp_in_messages_ms = 1000;
  EXPECT_FALSE(*segment->ShouldRoll(params));
  params.max_timestamp_in_messages_ms = 1001;
  EXPECT_TRUE(*segment->ShouldRoll(params));
  params.max_timestamp_in_messages_ms = 5;
  params.max_offset_in_messages = Offset(int64_t{INT32_MAX} + 1);
  EXPECT_TRUE(*segment->ShouldRoll(params)) << "relative offset overflow";
  params.max_offset_in_messages = Offset(1);
  ASSERT_TRUE(segment->offset_index().Resize(0).ok());
  EXPECT_TRUE(*segment->ShouldRoll(params)) << "full offset index";
}

}  // namespace
}  // namespace ksim
