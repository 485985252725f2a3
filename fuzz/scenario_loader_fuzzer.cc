// libFuzzer target: the scenario loader (sim/scenario/loader.h) on arbitrary text. Whatever the
// input, nothing may read out of bounds, overflow, throw or abort; a failure is one kInvalidConfig
// Status whose every line names the file ("f.json:" then a line:column or a JSON Pointer); a
// success is stable: the same text parses to the same scenario shape again.
//
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DKSIM_FUZZ=ON \
//       -DKSIM_SANITIZE=ON -DKSIM_BENCH=OFF && ninja -C build-fuzz scenario_loader_fuzzer
//   build-fuzz/fuzz/scenario_loader_fuzzer -max_total_time=60 /tmp/corpus \
//       fuzz/corpus/scenario_loader_fuzzer
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>

#include "sim/scenario/loader.h"

namespace {

void Require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const ksim::Result<ksim::sim::Scenario> result = ksim::sim::ParseScenario(text, "f.json");
  if (!result.ok()) {
    Require(result.status().code() == ksim::Errc::kInvalidConfig);
    std::istringstream lines(result.status().message());
    std::string line;
    bool any = false;
    while (std::getline(lines, line)) {
      any = true;
      Require(line.starts_with("f.json:"));
    }
    Require(any);
    return 0;
  }
  const ksim::Result<ksim::sim::Scenario> again = ksim::sim::ParseScenario(text, "f.json");
  Require(again.ok());
  Require(again->actions.size() == result->actions.size());
  Require(again->variants.size() == result->variants.size());
  Require(again->clients.size() == result->clients.size());
  for (const ksim::sim::Action& action : result->actions) {
    Require(action.at_ms >= 0 && action.at_ms <= result->duration_ms);
  }
  return 0;
}
