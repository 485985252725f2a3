// The viewer's model on a big run: a 100,000-record, 3-broker scenario (acks=all, replication
// factor 3, the leader crashed mid-run and restarted, one consumer group) generated here, run
// once in process at trace level messages (as `ksim viz` does), then:
//   BM_BuildModel          parse the trace and build the TimelineModel (once per viewer start)
//   BM_JumpPlayhead        what one frame pays to move the playhead anywhere: StateAt(t) at a
//                          random t (a checkpoint copied, at most kCheckpointEvents replayed)
//                          and LogAt of the partition's three replicas at t
//   BM_SnapshotCopyFloor   the floor under StateAt: copying a snapshot, no replay at all
//   BM_RebuildToPlayhead   the baseline a viewer without checkpoints pays per jump: building
//                          the model from the trace's events up to t (the prefix's lines
//                          replayed from the start), at the same random times
//   BM_DrawViewerFrame     a whole viewer frame on that model (every panel, ImGui's draw lists
//                          built, no GPU) with the playhead jumping to a random time each frame,
//                          against BM_EmptyFrame, an ImGui frame with one empty window
// The run itself is setup, not timed. Run: build/bench/viz_bench (figures in
// docs/BENCHMARKS.md, "Viewer").
#include <benchmark/benchmark.h>
#include <imgui.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/check.h"
#include "core/base/random.h"
#include "sim/kernel/trace.h"
#include "sim/runner/runner.h"
#include "sim/scenario/loader.h"
#include "viz/backend/backend.h"
#include "viz/model/timeline_model.h"
#include "viz/ui/imgui_setup.h"
#include "viz/ui/panels.h"
#include "viz/ui/view_cache.h"

namespace ksim::viz {
namespace {

constexpr int64_t kRecords = 100'000;

constexpr const char* kScenario = R"({
  "ksim": 1,
  "name": "viz-bench-100k",
  "description": "bench/viz_bench.cc: 100,000 records, acks=all, RF 3, the leader crashes mid-run",
  "seed": 7,
  "duration_ms": 14000,
  "cluster": { "brokers": 3 },
  "topics": { "t": { "partitions": 1, "replication_factor": 3,
                     "config": { "min.insync.replicas": 2 }, "assignment": { "0": [1, 2, 3] } } },
  "clients": {
    "p1": { "type": "producer", "topic": "t", "messages": 100000, "rate_per_s": 20000,
            "start_ms": 1000, "config": { "acks": "all", "retries": 10 } },
    "c1": { "type": "consumer", "topics": ["t"], "group": "g1", "start_ms": 1000,
            "config": { "auto.offset.reset": "earliest" } }
  },
  "actions": [
    { "at_ms": 3500, "do": "crash", "leader_of": "t-0" },
    { "at_ms": 7000, "do": "restart", "broker": 1 }
  ],
  "final": { "drain_ms": 20000 }
})";

struct BigRun {
  std::string trace_text;
  sim::Trace trace;
  TimelineModel model;
};

const BigRun& Run() {
  static const BigRun* run = [] {
    Result<sim::Scenario> scenario = sim::ParseScenario(kScenario, "viz_bench");
    KSIM_CHECK_MSG(scenario.ok(), scenario.status().message().c_str());
    sim::RunOptions options;
    options.trace_level = sim::TraceLevel::kMessages;
    options.keep_trace_bytes = true;
    Result<sim::RunResult> result = sim::RunScenario(*scenario, options);
    KSIM_CHECK_MSG(result.ok(), result.status().message().c_str());
    std::string text = std::move(result->trace_bytes);
    Result<sim::Trace> trace = sim::ParseTrace(text, "viz_bench");
    KSIM_CHECK_MSG(trace.ok(), trace.status().message().c_str());
    Result<TimelineModel> model = TimelineModel::Build(*trace, "viz_bench");
    KSIM_CHECK_MSG(model.ok(), model.status().message().c_str());
    KSIM_CHECK(static_cast<int64_t>(model->records().size()) == kRecords);
    return new BigRun{std::move(text), std::move(trace).value(), std::move(model).value()};
  }();
  return *run;
}

void Describe(benchmark::State& state) {
  const BigRun& run = Run();
  state.counters["trace_lines"] = static_cast<double>(run.trace.events.size() + 2);
  state.counters["trace_MB"] = static_cast<double>(run.trace_text.size()) / 1e6;
  state.counters["events"] = static_cast<double>(run.model.events().size());
  state.counters["records"] = static_cast<double>(run.model.records().size());
}

// Random playhead times over the run, the same sequence for every benchmark.
std::vector<TimeUs> RandomTimes(const TimelineModel& model, size_t count) {
  RandomStream stream(12345);
  std::vector<TimeUs> times;
  for (size_t i = 0; i < count; ++i) {
    times.push_back(stream.UniformInt(0, model.end_us()));
  }
  return times;
}

void BM_BuildModel(benchmark::State& state) {
  const BigRun& run = Run();
  for (auto _ : state) {
    Result<TimelineModel> model = TimelineModel::Build(run.trace, "viz_bench");
    KSIM_CHECK(model.ok());
    benchmark::DoNotOptimize(model->events().size());
  }
  Describe(state);
}
BENCHMARK(BM_BuildModel)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_ParseAndBuildModel(benchmark::State& state) {
  const BigRun& run = Run();
  for (auto _ : state) {
    Result<sim::Trace> trace = sim::ParseTrace(run.trace_text, "viz_bench");
    KSIM_CHECK(trace.ok());
    Result<TimelineModel> model = TimelineModel::Build(*trace, "viz_bench");
    KSIM_CHECK(model.ok());
    benchmark::DoNotOptimize(model->events().size());
  }
  Describe(state);
}
BENCHMARK(BM_ParseAndBuildModel)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_JumpPlayhead(benchmark::State& state) {
  const TimelineModel& model = Run().model;
  const std::vector<TimeUs> times = RandomTimes(model, 4096);
  const int32_t partition = model.PartitionIndex("t", 0);  // not __consumer_offsets-0
  KSIM_CHECK(partition >= 0);
  const std::vector<int32_t> replicas = model.partitions()[partition].replicas;
  size_t i = 0;
  int64_t cells = 0;
  for (auto _ : state) {
    const TimeUs t_us = times[i++ % times.size()];
    Snapshot snapshot = model.StateAt(t_us);
    benchmark::DoNotOptimize(snapshot.events_applied);
    for (int32_t broker : replicas) {
      std::vector<Cell> log = model.LogAt(partition, broker, t_us);
      cells += static_cast<int64_t>(log.size());
      benchmark::DoNotOptimize(log.data());
    }
  }
  state.counters["cells_per_jump"] =
      static_cast<double>(cells) / static_cast<double>(std::max<int64_t>(state.iterations(), 1));
}
BENCHMARK(BM_JumpPlayhead)->Unit(benchmark::kMicrosecond);

void BM_StateAtOnly(benchmark::State& state) {
  const TimelineModel& model = Run().model;
  const std::vector<TimeUs> times = RandomTimes(model, 4096);
  size_t i = 0;
  for (auto _ : state) {
    Snapshot snapshot = model.StateAt(times[i++ % times.size()]);
    benchmark::DoNotOptimize(snapshot.events_applied);
  }
}
BENCHMARK(BM_StateAtOnly)->Unit(benchmark::kMicrosecond);

void BM_SnapshotCopyFloor(benchmark::State& state) {
  const TimelineModel& model = Run().model;
  const Snapshot original = model.StateAt(model.end_us() / 2);
  for (auto _ : state) {
    Snapshot copy = original;
    benchmark::DoNotOptimize(copy.partitions.data());
  }
}
BENCHMARK(BM_SnapshotCopyFloor)->Unit(benchmark::kMicrosecond);

// The trace cut after its last event at or before t, with the verdict kept (Build needs it).
sim::Trace PrefixTo(const sim::Trace& trace, TimeUs t_us) {
  sim::Trace prefix;
  prefix.header = trace.header;
  prefix.verdict = trace.verdict;
  for (const sim::TraceEvent& event : trace.events) {
    if (event.t_us > t_us) break;
    prefix.events.push_back(event);
  }
  return prefix;
}

void BM_RebuildToPlayhead(benchmark::State& state) {
  const BigRun& run = Run();
  const std::vector<TimeUs> times = RandomTimes(run.model, 64);
  size_t i = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const TimeUs t_us = times[i++ % times.size()];
    sim::Trace prefix = PrefixTo(run.trace, t_us);
    state.ResumeTiming();
    Result<TimelineModel> model = TimelineModel::Build(prefix, "viz_bench");
    KSIM_CHECK(model.ok());
    Snapshot snapshot = model->StateAt(t_us);
    benchmark::DoNotOptimize(snapshot.events_applied);
  }
}
BENCHMARK(BM_RebuildToPlayhead)->Unit(benchmark::kMillisecond)->Iterations(8);

// A bare ImGui context (no backend: the CPU side of a frame) with the viewer's style and font.
class FrameContext {
 public:
  FrameContext() {
    context_ = ImGui::CreateContext();
    SetUpImGui(15.0f);
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(1600, 1000);
    io.DeltaTime = 1.0f / 60.0f;
    unsigned char* pixels = nullptr;
    int width = 0;
    int height = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &width, &height);
  }
  ~FrameContext() { ImGui::DestroyContext(context_); }

 private:
  ImGuiContext* context_;
};

// state.range(0): -1 the whole viewer, else one Panel drawn alone (where a frame's time goes).
void BM_DrawViewerFrame(benchmark::State& state) {
  const TimelineModel& model = Run().model;
  const std::vector<TimeUs> times = RandomTimes(model, 4096);
  FrameContext context;
  Runs runs;
  runs.models.push_back(&model);
  ViewState view;
  ViewCache cache;
  view.fixed_layout = true;
  if (state.range(0) >= 0) {
    view.only_panel = true;
    view.only = static_cast<Panel>(state.range(0));
    state.SetLabel(PanelName(view.only));
  } else {
    state.SetLabel("whole viewer");
  }
  size_t i = 0;
  int64_t vertices = 0;
  for (auto _ : state) {
    view.Seek(model, times[i++ % times.size()]);
    ImGui::NewFrame();
    DrawViewer(runs, view, cache);
    ImGui::Render();
    vertices += ImGui::GetDrawData()->TotalVtxCount;
  }
  state.counters["vertices_per_frame"] =
      static_cast<double>(vertices) / static_cast<double>(std::max<int64_t>(state.iterations(), 1));
}
BENCHMARK(BM_DrawViewerFrame)->Unit(benchmark::kMillisecond)->DenseRange(-1, kPanelCount - 1);

void BM_EmptyFrame(benchmark::State& state) {
  FrameContext context;
  for (auto _ : state) {
    ImGui::NewFrame();
    ImGui::Begin("empty");
    ImGui::End();
    ImGui::Render();
    benchmark::DoNotOptimize(ImGui::GetDrawData()->TotalVtxCount);
  }
}
BENCHMARK(BM_EmptyFrame)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ksim::viz

BENCHMARK_MAIN();
