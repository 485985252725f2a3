// Helpers shared by the storage engine's tests (segment, log, recovery): building record batches
// and taking apart what a read returns. Header-only; test code only.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/types.h"
#include "core/env/env.h"
#include "core/record/record_batch.h"
#include "core/storage/log_segment.h"

namespace ksim::testing {

// One batch at `base` with a record per value, every record stamped `timestamp_ms`.
inline Bytes MakeBatch(Offset base, const std::vector<std::string>& values,
                       int64_t timestamp_ms = kNoTimestamp,
                       LeaderEpoch epoch = kNoPartitionLeaderEpoch) {
  std::vector<RecordInput> records;
  for (const std::string& value : values) {
    RecordInput record;
    record.timestamp_ms = timestamp_ms;
    record.value = ToBytes(value);
    records.push_back(std::move(record));
  }
  BatchSpec spec;
  spec.base_offset = base;
  spec.partition_leader_epoch = epoch;
  return EncodeBatch(spec, records);
}

// A single-record batch with a value of `value_bytes` bytes.
inline Bytes MakeBatchOfSize(Offset base, size_t value_bytes, int64_t timestamp_ms = kNoTimestamp) {
  return MakeBatch(base, {std::string(value_bytes, 'v')}, timestamp_ms);
}

inline Bytes Concat(const std::vector<Bytes>& parts) {
  Bytes out;
  for (const Bytes& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

// Headers of the whole batches in `buffer` (a partial last batch is skipped).
inline std::vector<BatchHeader> BatchesIn(ByteView buffer) {
  std::vector<BatchHeader> headers;
  BatchIterator iterator(buffer);
  while (auto item = iterator.Next()) headers.push_back(item->header);
  EXPECT_TRUE(iterator.status().ok()) << iterator.status().ToString();
  return headers;
}

// Every record of the whole batches in `buffer`.
inline std::vector<Record> RecordsIn(ByteView buffer) {
  std::vector<Record> out;
  BatchIterator iterator(buffer);
  while (auto item = iterator.Next()) {
    auto records = DecodeRecords(item->bytes);
    EXPECT_TRUE(records.ok()) << records.status().ToString();
    if (!records.ok()) break;
    for (Record& record : *records) out.push_back(std::move(record));
  }
  EXPECT_TRUE(iterator.status().ok()) << iterator.status().ToString();
  return out;
}

inline std::vector<int64_t> OffsetsIn(ByteView buffer) {
  std::vector<int64_t> offsets;
  for (const Record& record : RecordsIn(buffer)) offsets.push_back(record.offset.value());
  return offsets;
}

inline std::string ValueOf(const Record& record) {
  return record.value ? std::string(AsChars(*record.value)) : std::string("<null>");
}

// Appends whole batches to a segment the way the Log does: largest offset, max timestamp and its
// offset taken from the batch headers.
inline Status AppendToSegment(LogSegment& segment, ByteView batches) {
  Offset largest{-1};
  int64_t max_timestamp = kNoTimestamp;
  Offset offset_of_max{-1};
  for (const BatchHeader& header : BatchesIn(batches)) {
    largest = header.last_offset();
    if (header.max_timestamp > max_timestamp) {
      max_timestamp = header.max_timestamp;
      offset_of_max = header.last_offset();
    }
  }
  if (offset_of_max == Offset(-1)) offset_of_max = largest;
  return segment.Append(largest, max_timestamp, offset_of_max, batches);
}

// Overwrites `length` bytes of `path` from `position` with bytes that are not a batch or index
// entry (Kafka's TestUtils.writeNonsenseToFile), deterministic per `seed`.
inline void WriteNonsense(Env& env, const std::string& path, uint64_t position, size_t length,
                          uint64_t seed = 1) {
  auto file = env.OpenFile(path, OpenMode::kOpenExisting);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  Bytes junk(length);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (uint8_t& byte : junk) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    byte = static_cast<uint8_t>(state);
  }
  ASSERT_TRUE((*file)->WriteAt(position, junk).ok());
}

// Appends `length` nonsense bytes to the end of `path` (Kafka's appendNonsenseToFile).
inline void AppendNonsense(Env& env, const std::string& path, size_t length, uint64_t seed = 2) {
  auto size = env.FileSize(path);
  ASSERT_TRUE(size.ok());
  WriteNonsense(env, path, *size, length, seed);
}

}  // namespace ksim::testing
