// libFuzzer target: every request decoder of the wire codec (core/wire/codec.h) on arbitrary
// bytes. The first two input bytes choose the api key and version (so every served decoder is
// reached without the fuzzer having to find a valid header), the rest is the body; the input is
// also decoded whole, as a frame's contents from a socket would be. Whatever the input, decoding
// returns an error or a message, never crashes or reads out of bounds; a message it returns must
// encode again, decode from that encoding, and encode to the same bytes. (Not to the same message:
// the wire may name a topic twice, [a [0], b [0], a [1]], which reads flat in wire order and
// writes grouped by topic, a's partitions together, as Kafka's requests keyed by partition do.)
//
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DKSIM_FUZZ=ON \
//       -DKSIM_SANITIZE=ON -DKSIM_BENCH=OFF && ninja -C build-fuzz wire_request_fuzzer
//   build-fuzz/fuzz/wire_request_fuzzer -max_total_time=60 /tmp/corpus
//   fuzz/corpus/wire_request_fuzzer
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "core/base/big_endian.h"
#include "core/protocol/api_versions.h"
#include "core/wire/codec.h"

namespace {

using namespace ksim;

void Require(bool condition) {
  if (!condition) std::abort();
}

void DecodeAndCheck(ByteView frame) {
  Result<wire::DecodedRequest> decoded = wire::DecodeRequest(frame);
  if (!decoded.ok()) return;
  const Bytes again = wire::EncodeRequest(decoded->header, decoded->request);
  Result<wire::DecodedRequest> redecoded = wire::DecodeRequest(ByteView(again).subspan(4));
  Require(redecoded.ok());
  Require(redecoded->header == decoded->header);
  Require(wire::EncodeRequest(redecoded->header, redecoded->request) == again);
  Require(wire::FrameSize(again) == static_cast<int32_t>(again.size() - 4));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ByteView input(data, size);
  DecodeAndCheck(input);
  (void)wire::DecodeRequestHeader(input);
  if (size < 2) return 0;
  // A served api key and version from the first two bytes, then a header with a client id.
  const std::span<const ApiVersionEntry> served = ServedApiVersions();
  const ApiVersionEntry& api = served[data[0] % served.size()];
  const int16_t version =
      static_cast<int16_t>(api.min_version + data[1] % (api.max_version - api.min_version + 1));
  Bytes frame(10);
  StoreBigEndian16(frame.data(), static_cast<uint16_t>(api.api_key));
  StoreBigEndian16(frame.data() + 2, static_cast<uint16_t>(version));
  StoreBigEndian32(frame.data() + 4, 1);
  StoreBigEndian16(frame.data() + 8, 0xffff);  // null client id
  frame.insert(frame.end(), data + 2, data + size);
  DecodeAndCheck(frame);
  return 0;
}
