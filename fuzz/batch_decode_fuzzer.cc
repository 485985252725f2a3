// libFuzzer target: the record batch decoders on arbitrary bytes. Whatever the input, nothing may
// read out of bounds, overflow, or abort, and what the decoders accept must be self-consistent.
//
// The input is walked three ways: BatchIterator with and without CRC checks (the latter lets
// mutated records reach the record parser), and the whole input as one batch with its CRC
// recomputed first (so VerifyBatch's record checks are reachable without the fuzzer having to
// forge CRCs). A batch VerifyBatch accepts must decode, and re-encoding its records must give a
// batch that verifies and decodes to the same records.
//
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DKSIM_FUZZ=ON \
//       -DKSIM_SANITIZE=ON -DKSIM_BENCH=OFF && ninja -C build-fuzz batch_decode_fuzzer
//   build-fuzz/fuzz/batch_decode_fuzzer -max_total_time=60 /tmp/corpus fuzz/corpus/batch_decode
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "core/base/crc32c.h"
#include "core/record/record_batch.h"

namespace {

using namespace ksim;

void Require(bool condition) {
  if (!condition) std::abort();
}

void CheckDecodedAgainstHeader(ByteView batch, const std::vector<Record>& records) {
  const Result<BatchHeader> header = ParseBatchHeader(batch);
  Require(header.ok());
  Require(records.size() == static_cast<size_t>(header->records_count));
  for (size_t i = 0; i < records.size(); ++i) {
    Require(records[i].offset >= header->base_offset);
    Require(records[i].offset <= header->last_offset());
    if (i > 0) Require(records[i].offset > records[i - 1].offset);
  }
}

void Reencode(ByteView batch, const std::vector<Record>& records) {
  if (records.empty()) return;
  const BatchHeader header = *ParseBatchHeader(batch);
  BatchSpec spec;
  spec.base_offset = header.base_offset;
  spec.partition_leader_epoch = header.partition_leader_epoch;
  spec.producer_id = header.producer_id;
  spec.producer_epoch = header.producer_epoch;
  spec.base_sequence = header.base_sequence;
  spec.transactional = header.transactional();
  spec.control = header.control();
  spec.log_append_time = header.log_append_time();
  std::vector<RecordInput> inputs;
  inputs.reserve(records.size());
  for (const Record& r : records) {
    // EncodeBatch requires timestamps >= -1, as Kafka's builder does; decoded ones may be anything.
    if (r.timestamp_ms < kNoTimestamp) return;
    inputs.push_back(RecordInput{r.timestamp_ms, r.key, r.value, r.headers});
  }
  const Bytes again = EncodeBatch(spec, inputs);
  Require(VerifyBatch(again).ok());
  Result<std::vector<Record>> decoded = DecodeRecords(again);
  Require(decoded.ok());
  Require(decoded->size() == records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    Require((*decoded)[i].offset == records[i].offset);
    Require((*decoded)[i].timestamp_ms == records[i].timestamp_ms);
    Require((*decoded)[i].key == records[i].key);
    Require((*decoded)[i].value == records[i].value);
    Require((*decoded)[i].headers == records[i].headers);
  }
}

// ForEachRecord fails where DecodeRecords does, with the same status, and views what it copies.
void CheckViews(ByteView batch, const Result<std::vector<Record>>& decoded) {
  size_t visited = 0;
  const Status status = ForEachRecord(batch, [&](const RecordView& view) {
    if (decoded.ok()) {
      Require(visited < decoded->size());
      const Record& record = (*decoded)[visited];
      Require(view.offset == record.offset && view.timestamp_ms == record.timestamp_ms);
      Require(view.key.has_value() == record.key.has_value());
      Require(!view.key || std::equal(view.key->begin(), view.key->end(), record.key->begin(),
                                      record.key->end()));
      Require(view.value.has_value() == record.value.has_value());
      Require(!view.value || std::equal(view.value->begin(), view.value->end(),
                                        record.value->begin(), record.value->end()));
    }
    ++visited;
  });
  Require(status.ToString() == decoded.status().ToString());
  if (decoded.ok()) Require(visited == decoded->size());
}

void CheckBatch(ByteView batch) {
  const Status verified = VerifyBatch(batch);
  Result<std::vector<Record>> decoded = DecodeRecords(batch);
  CheckViews(batch, decoded);
  if (decoded.ok()) CheckDecodedAgainstHeader(batch, *decoded);
  if (verified.ok()) {
    Require(decoded.ok());
    Reencode(batch, *decoded);
  }
}

void Walk(ByteView input, bool verify_crc) {
  BatchIterator it(input, verify_crc);
  size_t end = 0;
  while (auto item = it.Next()) {
    Require(item->position == end);
    Require(item->bytes.size() == item->header.size_in_bytes());
    end = item->position + item->bytes.size();
    // v0/v1 entries (CRC-32) are the legacy_record_fuzzer's.
    if (verify_crc && item->header.magic == kMagicV2) {
      Require(item->header.crc == crc32c::Value(item->bytes.subspan(kAttributesOffset)));
    }
    CheckBatch(item->bytes);
    // The iterator's header, not parsed again, gives the same walk as the bytes alone.
    std::vector<Offset> from_item;
    std::vector<Offset> from_bytes;
    const Status item_status =
        ForEachRecord(*item, [&](const RecordView& view) { from_item.push_back(view.offset); });
    const Status bytes_status = ForEachRecord(
        item->bytes, [&](const RecordView& view) { from_bytes.push_back(view.offset); });
    Require(item_status.ToString() == bytes_status.ToString());
    Require(from_item == from_bytes);
  }
  Require(it.position() == end);
  Require(!(it.truncated() && !it.status().ok()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ByteView input(data, size);
  Walk(input, /*verify_crc=*/true);
  Walk(input, /*verify_crc=*/false);

  (void)ParseBatchHeader(input);
  CheckBatch(input);
  if (size >= kBatchHeaderSize) {
    Bytes stamped(input.begin(), input.end());
    const uint32_t crc = crc32c::Value(ByteView(stamped).subspan(kAttributesOffset));
    for (int i = 0; i < 4; ++i) stamped[kCrcOffset + i] = static_cast<uint8_t>(crc >> (24 - 8 * i));
    CheckBatch(stamped);
  }
  return 0;
}
