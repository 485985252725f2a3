// libFuzzer target: the message format v0/v1 decoder (core/record/legacy_record.h) on arbitrary
// bytes, walked as a message set and parsed as one entry. Nothing may read out of bounds,
// overflow or abort, and what the decoder accepts must be self-consistent: an entry that verifies
// decodes to one record at its offset, re-encoding that record gives the same bytes back (ksim
// writes exactly what it reads, reserved attribute bits aside), and converting it to v2 and back
// keeps its key and value.
//
//   ./dev fuzz 30   (or: ninja -C build-fuzz legacy_record_fuzzer &&
//   build-fuzz/fuzz/legacy_record_fuzzer -max_total_time=60 /tmp/corpus
//   fuzz/corpus/legacy_record_fuzzer)
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "core/base/big_endian.h"
#include "core/base/crc32.h"
#include "core/record/legacy_record.h"
#include "core/record/record_batch.h"

namespace {

using namespace ksim;

void Require(bool condition) {
  if (!condition) std::abort();
}

void CheckEntry(ByteView entry) {
  const Result<LegacyMessage> parsed = ParseLegacyMessage(entry);
  const Status verified = VerifyLegacyMessage(entry);
  const Result<Record> decoded = DecodeLegacyMessage(entry);
  if (!parsed.ok()) {
    Require(!verified.ok());
    Require(!decoded.ok());
    return;
  }
  const BatchHeader& header = parsed->header;
  Require(header.size_in_bytes() == entry.size());
  Require(header.records_count == 1);
  Require(header.last_offset() == header.base_offset);
  Require(!header.transactional() && !header.control());
  if (!verified.ok()) return;
  Require(parsed->ComputedCrc(entry) == header.crc);
  Require(decoded.ok());
  Require(decoded->offset == header.base_offset);
  if (decoded->timestamp_ms < kNoTimestamp) return;  // the encoder refuses those, as Kafka's does
  const RecordInput input{decoded->timestamp_ms, decoded->key, decoded->value, {}};
  const Bytes again =
      EncodeMessageSet(header.magic, header.base_offset, {&input, 1}, header.log_append_time());
  if (entry[17] == static_cast<uint8_t>(header.attributes))
    Require(again == Bytes(entry.begin(), entry.end()));
  Result<std::optional<Bytes>> up = ConvertBatches(again, kMagicV2);
  Require(up.ok() && up->has_value());
  Result<std::optional<Bytes>> down = ConvertBatches(**up, header.magic);
  Require(down.ok() && down->has_value());
  Result<std::vector<Record>> back = DecodeRecords(**down);
  Require(back.ok() && back->size() == 1);
  Require((*back)[0].key == decoded->key);
  Require((*back)[0].value == decoded->value);
}

// The input as a message set: every whole entry is checked, the walk ends where the iterator
// says, and a walk that checks CRCs never gets further than one that does not.
void WalkMessageSet(ByteView input) {
  BatchIterator unchecked(input, /*verify_crc=*/false);
  size_t end = 0;
  while (auto item = unchecked.Next()) {
    Require(item->position == end && item->bytes.size() == item->header.size_in_bytes());
    end += item->bytes.size();
    if (item->header.magic != kMagicV2) CheckEntry(item->bytes);
  }
  Require(unchecked.position() == end);
  BatchIterator checked(input);
  while (checked.Next()) {
  }
  Require(checked.position() <= end);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ByteView input(data, size);
  WalkMessageSet(input);
  CheckEntry(input);
  // The whole input as one entry with its CRC-32 recomputed, so that the field checks behind the
  // CRC are reachable without the fuzzer forging checksums.
  if (size > kLegacyMagicOffset) {
    Bytes stamped(input.begin(), input.end());
    StoreBigEndian32(stamped.data() + kLegacyCrcOffset,
                     crc32::Value(ByteView(stamped).subspan(kLegacyMagicOffset)));
    CheckEntry(stamped);
  }
  return 0;
}
