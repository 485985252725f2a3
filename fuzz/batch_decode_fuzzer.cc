// libFuzzer target: the record batch decoders on arbitrary bytes. Whatever the input, nothing may
// read out of bounds, overflow, or abort, and what the decoders accept must be self-consistent.
//
// The input is walked three ways: BatchIterator with and without CRC checks (the latter lets
// mutated records reach the record parser), and the whole input as one batch with its CRC
// recomputed first (so VerifyBatch's record checks are reachable without the fuzzer having to
// forge CRCs). A batch VerifyBatch accepts must decode, and re-encoding its records must give a
// batch that verifies and decodes to the same records. TryParseBatchHeader and RecordCursor, the
// quick paths of the log's header scans and of the records' walks, agree with ParseBatchHeader
// and DecodeRecords.
//
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DKSIM_FUZZ=ON \
//       -DKSIM_SANITIZE=ON -DKSIM_BENCH=OFF && ninja -C build-fuzz batch_decode_fuzzer
//   build-fuzz/fuzz/batch_decode_fuzzer -max_total_time=60 /tmp/corpus fuzz/corpus/batch_decode
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

// TryParseBatchHeader accepts exactly the whole v2 headers ParseBatchHeader accepts, read alike.
void CheckQuickHeader(ByteView bytes) {
  BatchHeader quick;
  const bool accepted = TryParseBatchHeader(bytes, &quick);
  const Result<BatchHeader> parsed = ParseBatchHeader(bytes);
  const bool v2 = bytes.size() >= kBatchHeaderSize && static_cast<int8_t>(bytes[16]) == kMagicV2;
  Require(accepted == (v2 && parsed.ok()));
  if (accepted) {
    Require(quick.base_offset == parsed->base_offset && quick.crc == parsed->crc);
    Require(quick.last_offset_delta == parsed->last_offset_delta);
    Require(quick.records_count == parsed->records_count);
    Require(quick.batch_length == parsed->batch_length && quick.attributes == parsed->attributes);
  }
}

// A RecordCursor gives the records DecodeRecords gives (views of the same bytes), or on damage
// the ones before it and DecodeRecords' error.
void CheckCursor(ByteView batch, const Result<std::vector<Record>>& decoded) {
  RecordCursor cursor(batch);
  size_t i = 0;
  while (const RecordView* view = cursor.Next()) {
    if (decoded.ok()) {
      Require(i < decoded->size());
      const Record& record = (*decoded)[i];
      Require(view->offset == record.offset && view->timestamp_ms == record.timestamp_ms);
      Require(view->key.has_value() == record.key.has_value());
      Require(view->value.has_value() == record.value.has_value());
      if (view->key) Require(Bytes(view->key->begin(), view->key->end()) == *record.key);
      if (view->value) Require(Bytes(view->value->begin(), view->value->end()) == *record.value);
    }
    ++i;
  }
  Require(cursor.status().ok() == decoded.ok());
  if (decoded.ok()) Require(i == decoded->size());
  if (!decoded.ok()) Require(cursor.status().message() == decoded.status().message());
}

void CheckBatch(ByteView batch) {
  const Status verified = VerifyBatch(batch);
  Result<std::vector<Record>> decoded = DecodeRecords(batch);
  CheckCursor(batch, decoded);
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
  }
  Require(it.position() == end);
  Require(!(it.truncated() && !it.status().ok()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ByteView input(data, size);
  Walk(input, /*verify_crc=*/true);
  Walk(input, /*verify_crc=*/false);

  CheckQuickHeader(input);
  CheckBatch(input);
  if (size >= kBatchHeaderSize) {
    Bytes stamped(input.begin(), input.end());
    const uint32_t crc = crc32c::Value(ByteView(stamped).subspan(kAttributesOffset));
    for (int i = 0; i < 4; ++i) stamped[kCrcOffset + i] = static_cast<uint8_t>(crc >> (24 - 8 * i));
    CheckBatch(stamped);
  }
  return 0;
}
