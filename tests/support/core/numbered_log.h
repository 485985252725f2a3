// Helpers of the log recovery tests (tests/core/storage/log_recovery_test.cc on a real disk,
// tests/integration/storage/log_crash_test.cc on the virtual disk): a log of single-record batches
// whose values name their offsets, and the check that what a log holds is an intact prefix of
// what was appended. Header-only; test code only.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/storage/log.h"
#include "tests/support/core/log_test_util.h"

namespace ksim::testing {

constexpr int64_t kStartMs = 1'600'000'000'000;

std::string ValueFor(int64_t offset) { return "value-" + std::to_string(offset); }

// The config of a log of single-record batches "value-<offset>", `per_segment` to a segment.
LogConfig ConfigFor(int per_segment) {
  LogConfig config;
  config.segment_bytes =
      static_cast<int32_t>(MakeBatch(Offset(0), {ValueFor(100000)}, kStartMs).size()) * per_segment;
  config.index_interval_bytes = 100;
  config.file_delete_delay_ms = 0;
  return config;
}

void AppendValues(Log& log, int64_t from, int64_t to) {
  for (int64_t offset = from; offset < to; ++offset) {
    Bytes batch = MakeBatch(Offset(0), {ValueFor(offset)}, kStartMs + offset);
    auto info = log.AppendAsLeader(batch, LeaderEpoch(1));
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    ASSERT_EQ(info->first_offset, Offset(offset));
  }
}

// Reads every record from the log start to the LEO and checks each one is the value appended at
// its offset, that offsets are dense, and that a read at each offset finds its batch (the index
// agrees with a scan).
void ExpectIntactPrefix(Log& log) {
  int64_t offset = log.log_start_offset().value();
  while (offset < log.log_end_offset().value()) {
    auto read = log.Read(Offset(offset), 1 << 20);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    const std::vector<Record> records = RecordsIn(read->records);
    ASSERT_FALSE(records.empty()) << "nothing at " << offset;
    for (const Record& record : records) {
      ASSERT_EQ(record.offset, Offset(offset));
      ASSERT_EQ(ValueOf(record), ValueFor(offset));
      ++offset;
    }
  }
  for (int64_t at = log.log_start_offset().value(); at < log.log_end_offset().value(); ++at) {
    auto read = log.Read(Offset(at), 1, std::nullopt, true);
    ASSERT_TRUE(read.ok());
    const std::vector<BatchHeader> batches = BatchesIn(read->records);
    ASSERT_EQ(batches.size(), 1u);
    ASSERT_LE(batches[0].base_offset, Offset(at));
    ASSERT_GE(batches[0].last_offset(), Offset(at));
  }
}

}  // namespace ksim::testing
