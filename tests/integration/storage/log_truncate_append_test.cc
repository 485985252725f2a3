// Log::TruncateTo followed by AppendAsFollower, read back the way sim/check/audit.cc reads a
// replica (Log::Read from an offset, chunk after chunk, and Log::ForEachBatch): what a follower
// holds after a truncation and an append. Kafka's Log.truncateTo cuts whole batches (the segment
// drops the batch holding the target and everything after it) yet sets the log end offset to the
// target itself, "an upper bound on all offsets in the log after truncation": a target inside a
// batch leaves the offsets from that batch's base up to the target absent, and a later append at
// the target does not bring them back. A target at a batch boundary loses nothing below it, and
// the records appended after it read back from any offset, before and after a reopen or a crash.
//
// Each test runs on the real file system (PosixEnv in a temp dir) and on the simulator's
// VirtualDisk, the Env through which the audit reads a simulated broker's log.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/env/posix_env.h"
#include "core/storage/log.h"
#include "sim/world/virtual_disk.h"
#include "tests/support/core/log_test_util.h"
#include "tests/support/core/temp_dir.h"

namespace ksim {
namespace {

using testing::Concat;
using testing::MakeBatch;
using testing::RecordsIn;
using testing::ValueOf;

constexpr int64_t kStartMs = 1'600'000'000'000;
// Bounds the read loop: far more rounds than any log here has batches.
constexpr int kMaxReadRounds = 1000;

// An Env for one test and the directory of the log in it.
struct EnvUnderTest {
  std::unique_ptr<Env> env;
  std::string root;
  std::shared_ptr<void> keep_alive;  // the temp dir on the real disk
  // Loses what was not synced (the virtual disk's power loss); null on the real disk, where a
  // crash is only the Log being destroyed without Close().
  std::function<void()> power_loss;
};

EnvUnderTest MakePosix() {
  auto dir = std::make_shared<testing::TempDir>();
  EnvUnderTest under_test;
  under_test.env = std::make_unique<PosixEnv>();
  under_test.root = dir->path();
  under_test.keep_alive = dir;
  return under_test;
}

EnvUnderTest MakeVirtualDisk() {
  auto disk = std::make_unique<sim::VirtualDisk>(RandomStream(7));
  sim::VirtualDisk* raw = disk.get();
  EnvUnderTest under_test;
  under_test.root = "/kafka-logs";
  // Made durable like a broker's log directory, so that a power loss keeps the logs in it.
  EXPECT_TRUE(disk->CreateDir(under_test.root).ok());
  EXPECT_TRUE(disk->SyncDir("/").ok());
  under_test.power_loss = [raw] { raw->Crash(); };
  under_test.env = std::move(disk);
  return under_test;
}

struct EnvParam {
  std::string name;
  std::function<EnvUnderTest()> make;
};

class LogTruncateAppendTest : public ::testing::TestWithParam<EnvParam> {
 protected:
  LogTruncateAppendTest()
      : under_test_(GetParam().make()),
        clock_(kStartMs * kUsPerMs),
        dir_(JoinPath(under_test_.root, "t-0")) {}

  Env& env() { return *under_test_.env; }

  std::unique_ptr<Log> OpenLog(LogOpenOptions options = {}) {
    auto log = Log::Open(env(), clock_, dir_, config_, options);
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    return log.ok() ? std::move(log).value() : nullptr;
  }

  static void AppendFollower(Log& log, const Bytes& batches) {
    auto info = log.AppendAsFollower(batches);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
  }

  // offset -> value of every record in [from, end), read as the audit reads a replica: Log::Read
  // at the next offset wanted, min one message, until the end or an empty read.
  static std::vector<std::pair<int64_t, std::string>> ReadAll(Log& log, int64_t from, int64_t end) {
    std::vector<std::pair<int64_t, std::string>> out;
    int64_t next = from;
    for (int round = 0; next < end; ++round) {
      EXPECT_LT(round, kMaxReadRounds);
      if (round >= kMaxReadRounds) break;
      auto read = log.Read(Offset(next), 64, std::nullopt, /*min_one_message=*/true);
      EXPECT_TRUE(read.ok()) << read.status().ToString();
      if (!read.ok() || read->records.empty()) break;
      const int64_t before = next;
      for (const Record& record : RecordsIn(read->records)) {
        if (record.offset.value() < next || record.offset.value() >= end) continue;
        out.emplace_back(record.offset.value(), ValueOf(record));
        next = record.offset.value() + 1;
      }
      if (next == before) break;
    }
    return out;
  }

  // [first, last] of every batch from `from` on, through ForEachBatch.
  static std::vector<std::pair<int64_t, int64_t>> BatchRanges(const Log& log) {
    std::vector<std::pair<int64_t, int64_t>> ranges;
    Status status = log.ForEachBatch(Offset(0), [&](const BatchHeader& header, uint64_t) {
      ranges.emplace_back(header.base_offset.value(), header.last_offset().value());
      return BatchWalk::kContinue;
    });
    EXPECT_TRUE(status.ok()) << status.ToString();
    return ranges;
  }

  static std::vector<std::string> Values(const std::string& prefix, int64_t from, int64_t to) {
    std::vector<std::string> values;
    for (int64_t offset = from; offset < to; ++offset) {
      values.push_back(prefix + std::to_string(offset));
    }
    return values;
  }

  static std::vector<std::pair<int64_t, std::string>> Expected(
      const std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>>& runs) {
    std::vector<std::pair<int64_t, std::string>> out;
    for (const auto& run : runs) {
      for (int64_t offset = run.second.first; offset < run.second.second; ++offset) {
        out.emplace_back(offset, run.first + std::to_string(offset));
      }
    }
    return out;
  }

  EnvUnderTest under_test_;
  ManualClock clock_;
  std::string dir_;
  LogConfig config_;
};

// The audit test's case: one producer batch 0..9, truncated to 8. The whole batch goes, the log
// end stays at 8 (Kafka's Log.truncateTo), and a batch appended at 8 leaves 0..7 absent: reading
// from 0 finds the first batch holding an offset >= 0, which is the new one at 8.
TEST_P(LogTruncateAppendTest, TruncateInsideABatchDropsItWholeAndKeepsTheTargetAsLogEnd) {
  auto log = OpenLog();
  ASSERT_NE(log, nullptr);
  AppendFollower(*log, MakeBatch(Offset(0), Values("p1-", 0, 10)));
  ASSERT_EQ(log->log_end_offset(), Offset(10));

  ASSERT_TRUE(*log->TruncateTo(Offset(8)));
  EXPECT_EQ(log->log_end_offset(), Offset(8)) << "the target, not the dropped batch's base";
  EXPECT_EQ(log->active_segment().size(), 0u) << "the batch holding 8 went whole";
  EXPECT_EQ(log->active_segment().next_offset(), Offset(0));
  EXPECT_TRUE(ReadAll(*log, 0, 8).empty());

  AppendFollower(*log, MakeBatch(Offset(8), Values("other-", 8, 10)));
  EXPECT_EQ(log->log_end_offset(), Offset(10));
  EXPECT_EQ(BatchRanges(*log), (std::vector<std::pair<int64_t, int64_t>>{{8, 9}}));
  EXPECT_TRUE(ReadAll(*log, 0, 8).empty()) << "nothing below 8 came back";
  EXPECT_EQ(ReadAll(*log, 0, 10), Expected({{"other-", {8, 10}}}));
}

// The same with the batch holding the target behind earlier ones: those stay, the one holding
// the target goes whole, and the gap up to the target stays a gap.
TEST_P(LogTruncateAppendTest, TruncateInsideALaterBatchKeepsTheBatchesBeforeIt) {
  auto log = OpenLog();
  ASSERT_NE(log, nullptr);
  AppendFollower(*log, Concat({MakeBatch(Offset(0), Values("p1-", 0, 5)),
                               MakeBatch(Offset(5), Values("p1-", 5, 10))}));
  ASSERT_TRUE(*log->TruncateTo(Offset(8)));
  EXPECT_EQ(log->log_end_offset(), Offset(8));
  EXPECT_EQ(log->active_segment().next_offset(), Offset(5));
  EXPECT_EQ(ReadAll(*log, 0, 8), Expected({{"p1-", {0, 5}}}));

  AppendFollower(*log, MakeBatch(Offset(8), Values("other-", 8, 10)));
  EXPECT_EQ(BatchRanges(*log), (std::vector<std::pair<int64_t, int64_t>>{{0, 4}, {8, 9}}));
  EXPECT_EQ(ReadAll(*log, 0, 10), Expected({{"p1-", {0, 5}}, {"other-", {8, 10}}}));
}

// A replica rewritten from the base of the batch holding 8: the records below 8 written back
// as they were, other values at 8 and 9. Everything reads back, from every offset, across
// segments and index entries, and again after a clean reopen.
TEST_P(LogTruncateAppendTest, TruncateAtABatchBaseThenAppendReadsBackOldAndNewRecords) {
  config_.segment_bytes = 400;       // a few batches per segment
  config_.index_interval_bytes = 0;  // an index entry for (nearly) every batch
  auto log = OpenLog();
  ASSERT_NE(log, nullptr);
  for (int64_t base = 0; base < 30; base += 3) {
    AppendFollower(*log, MakeBatch(Offset(base), Values("p1-", base, base + 3)));
  }
  ASSERT_EQ(log->log_end_offset(), Offset(30));
  ASSERT_GT(log->number_of_segments(), 2u);
  const size_t segments_before = log->number_of_segments();

  // 8 lies in the batch 6..8: truncate to its base, write 6..9 back with 8 and 9 changed.
  ASSERT_TRUE(*log->TruncateTo(Offset(6)));
  EXPECT_EQ(log->log_end_offset(), Offset(6));
  EXPECT_LT(log->number_of_segments(), segments_before) << "later segments deleted";
  EXPECT_EQ(ReadAll(*log, 0, 6), Expected({{"p1-", {0, 6}}}));
  AppendFollower(*log, Concat({MakeBatch(Offset(6), Values("p1-", 6, 8)),
                               MakeBatch(Offset(8), Values("other-", 8, 10))}));
  EXPECT_EQ(log->log_end_offset(), Offset(10));

  const auto expected = Expected({{"p1-", {0, 8}}, {"other-", {8, 10}}});
  EXPECT_EQ(ReadAll(*log, 0, 10), expected);
  for (int64_t from = 0; from < 10; ++from) {
    const auto tail = ReadAll(*log, from, 10);
    ASSERT_FALSE(tail.empty()) << "from " << from;
    EXPECT_EQ(tail.front().first, from);
    EXPECT_EQ(tail.back(), expected.back()) << "from " << from;
  }
  auto batches = BatchRanges(*log);
  ASSERT_GE(batches.size(), 2u);
  EXPECT_EQ(batches.back(), (std::pair<int64_t, int64_t>{8, 9}));

  ASSERT_TRUE(log->Close().ok());
  log = OpenLog();
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->log_end_offset(), Offset(10));
  EXPECT_EQ(ReadAll(*log, 0, 10), expected);
}

// Flushed, then crashed (the Log destroyed without Close, unsynced bytes lost on the virtual
// disk): recovery keeps the rewritten records.
TEST_P(LogTruncateAppendTest, RewrittenRecordsSurviveACrashOnceFlushed) {
  config_.index_interval_bytes = 0;
  auto log = OpenLog();
  ASSERT_NE(log, nullptr);
  AppendFollower(*log, MakeBatch(Offset(0), Values("p1-", 0, 10)));
  ASSERT_TRUE(log->Flush().ok());
  ASSERT_TRUE(*log->TruncateTo(Offset(0)));
  AppendFollower(*log, Concat({MakeBatch(Offset(0), Values("p1-", 0, 8)),
                               MakeBatch(Offset(8), Values("other-", 8, 10))}));
  ASSERT_TRUE(log->Flush().ok());
  const Offset recovery_point = log->recovery_point();
  log.reset();  // a crash: no Close
  if (under_test_.power_loss) under_test_.power_loss();

  LogOpenOptions options;
  options.recovery_point = Offset(0);  // verify every batch
  log = OpenLog(options);
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(recovery_point, Offset(10));
  EXPECT_TRUE(log->recovery_report().first_damage.ok())
      << log->recovery_report().first_damage.ToString();
  EXPECT_EQ(log->log_end_offset(), Offset(10));
  EXPECT_EQ(ReadAll(*log, 0, 10), Expected({{"p1-", {0, 8}}, {"other-", {8, 10}}}));
}

INSTANTIATE_TEST_SUITE_P(Envs, LogTruncateAppendTest,
                         ::testing::Values(EnvParam{"Posix", MakePosix},
                                           EnvParam{"VirtualDisk", MakeVirtualDisk}),
                         [](const ::testing::TestParamInfo<EnvParam>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace ksim
