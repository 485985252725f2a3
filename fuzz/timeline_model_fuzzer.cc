// libFuzzer target: the viewer's model (viz/model/timeline_model.h) built from arbitrary text
// read as a trace. The trace reader and the model builder are the viewer's parsers of files a
// user hands it: whatever the input, nothing may read out of bounds, overflow, throw or abort.
// A failure is one kCorruption Status naming the file ("f.jsonl:"); a model that builds answers
// every query over its whole time range without breaking its own invariants (each replica's log
// at a time is in offset order, state times stay in the run).
//
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DKSIM_FUZZ=ON \
//       -DKSIM_SANITIZE=ON -DKSIM_BENCH=OFF && ninja -C build-fuzz timeline_model_fuzzer
//   build-fuzz/fuzz/timeline_model_fuzzer -max_total_time=60 /tmp/corpus \
//       fuzz/corpus/timeline_model_fuzzer
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "sim/kernel/trace.h"
#include "viz/model/timeline_model.h"

namespace {

void Require(bool condition) {
  if (!condition) std::abort();
}

void Query(const ksim::viz::TimelineModel& model, ksim::viz::TimeUs t_us) {
  const ksim::viz::Snapshot snapshot = model.StateAt(t_us);
  Require(snapshot.partitions.size() == model.partitions().size());
  for (size_t p = 0; p < model.partitions().size(); ++p) {
    for (int32_t broker : model.partitions()[p].replicas) {
      const std::vector<ksim::viz::Cell> cells = model.LogAt(static_cast<int32_t>(p), broker, t_us);
      for (size_t i = 1; i < cells.size(); ++i) Require(cells[i - 1].offset <= cells[i].offset);
    }
  }
  for (int k = 0; k < ksim::viz::kEventKindCount; ++k) {
    const auto kind = static_cast<ksim::viz::EventKind>(k);
    if (auto next = model.NextEvent(t_us, kind)) Require(*next > t_us);
    if (auto previous = model.PreviousEvent(t_us, kind)) Require(*previous < t_us);
  }
  (void)model.MessagesBetween(0, t_us, 64);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  ksim::Result<ksim::sim::Trace> trace = ksim::sim::ParseTrace(std::move(text), "f.jsonl");
  if (!trace.ok()) {
    Require(trace.status().code() == ksim::Errc::kCorruption);
    Require(trace.status().message().starts_with("f.jsonl:"));
    return 0;
  }
  ksim::Result<ksim::viz::TimelineModel> model = ksim::viz::TimelineModel::Build(*trace, "f.jsonl");
  if (!model.ok()) {
    Require(model.status().code() == ksim::Errc::kCorruption);
    Require(model.status().message().starts_with("f.jsonl:"));
    return 0;
  }
  Require(model->start_us() >= 0);
  Query(*model, 0);
  Query(*model, model->end_us() / 2);
  Query(*model, model->end_us());
  return 0;
}
