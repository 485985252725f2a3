// libFuzzer target: the decoders of the ZooKeeper data ksim writes most (core/zk/paths.h), a
// partition's state and a topic's replica assignment, on arbitrary text, and the config change
// notification every broker reads (any of its three forms; what names no topic is another
// entity's, re-encoded as a client's). Each reads its own
// encoder's exact text without JSON and anything else as JSON; the two readings must agree. The
// oracle: a text starting with '{' is read again with a space after the brace, which only the
// JSON reading accepts, and both readings must succeed or fail together, with the same result.
// What decodes must encode to text that decodes to it again. Nothing may abort or overflow.
//
//   ./dev fuzz 30   (or: ninja -C build-fuzz zk_data_fuzzer &&
//   build-fuzz/fuzz/zk_data_fuzzer -max_total_time=60 /tmp/corpus fuzz/corpus/zk_data_fuzzer)
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "core/zk/paths.h"

namespace {

using namespace ksim;
using namespace ksim::zk;

void Require(bool condition) {
  if (!condition) std::abort();
}

template <class T, class Decode, class Encode>
void Check(std::string_view text, Decode decode, Encode encode) {
  const Result<T> read = decode(text);
  if (!text.empty() && text[0] == '{') {
    const std::string spaced = "{ " + std::string(text.substr(1));
    const Result<T> read_as_json = decode(spaced);
    Require(read.ok() == read_as_json.ok());
    if (read.ok()) {
      Require(*read == *read_as_json);
    } else {
      Require(read.status().code() == read_as_json.status().code());
    }
  }
  if (read.ok()) {
    const Result<T> again = decode(encode(*read));
    Require(again.ok() && *again == *read);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Check<PartitionState>(text, DecodePartitionState, EncodePartitionState);
  Check<ReplicaAssignment>(text, DecodeReplicaAssignment, EncodeReplicaAssignment);
  Check<std::optional<std::string>>(
      text, DecodeConfigChange, [](const std::optional<std::string>& topic) {
        return topic ? EncodeTopicConfigChange(ConfigChangeFormat::kVersion2, *topic)
                     : std::string(R"({"version":2,"entity_path":"clients/c"})");
      });
  // A sequence number (negative too: ZooKeeper's counter wraps past 2^31 - 1, and Kafka's
  // toLong reads the sign) reads back from its shortest text.
  if (const std::optional<int64_t> number = ConfigChangeNumber(text)) {
    Require(ConfigChangeNumber(std::string(kConfigChangePrefix) + std::to_string(*number)) ==
            number);
  }
  return 0;
}
