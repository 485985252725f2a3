// libFuzzer target: ConsumerProtocol's decoders (core/clients/consumer/assignors.h) on arbitrary
// bytes, the JoinGroup subscription and SyncGroup assignment a group member or leader may send.
// Whatever the input, nothing may read out of bounds, overflow, or abort; what a decoder accepts
// must re-encode to bytes that decode to the same value, and encoding that value again must give
// the same bytes (the encoding is canonical after one round).
//
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DKSIM_FUZZ=ON \
//       -DKSIM_SANITIZE=ON -DKSIM_BENCH=OFF && ninja -C build-fuzz consumer_protocol_fuzzer
//   build-fuzz/fuzz/consumer_protocol_fuzzer -max_total_time=60 /tmp/corpus \
//       fuzz/corpus/consumer_protocol_fuzzer
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "core/clients/consumer/assignors.h"

namespace {

using namespace ksim;

void Require(bool condition) {
  if (!condition) std::abort();
}

void CheckSubscription(ByteView input) {
  const Result<ConsumerSubscription> decoded = DecodeSubscription(input);
  if (!decoded.ok()) {
    Require(decoded.status().code() == Errc::kCorruption);
    return;
  }
  const Bytes encoded = EncodeSubscription(*decoded);
  const Result<ConsumerSubscription> again = DecodeSubscription(encoded);
  Require(again.ok());
  Require(*again == *decoded);
  Require(EncodeSubscription(*again) == encoded);
}

void CheckAssignment(ByteView input) {
  const Result<ConsumerAssignment> decoded = DecodeAssignment(input);
  if (!decoded.ok()) {
    Require(decoded.status().code() == Errc::kCorruption);
    return;
  }
  // Encoding groups a topic's partitions together, so the decoded order may change once.
  const Bytes encoded = EncodeAssignment(*decoded);
  const Result<ConsumerAssignment> again = DecodeAssignment(encoded);
  Require(again.ok());
  Require(again->partitions.size() == decoded->partitions.size());
  Require(again->user_data == decoded->user_data);
  Require(EncodeAssignment(*again) == encoded);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ByteView input(data, size);
  CheckSubscription(input);
  CheckAssignment(input);
  return 0;
}
