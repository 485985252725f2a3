// The viewer drawn over a bare ImGui context (no backend, no display): the delivery-semantics
// runs (base and every variant, trace level messages) and clean-vs-unclean-election (every
// variant) run in process and built into timeline models; DrawViewer and each panel alone are
// drawn for several frames at the start, at a crash and at the end of every run. Dear ImGui's
// assertions are compiled in (a failed one aborts the test), so a panel misusing the API fails
// here. What the frames show is checked through ImGui's own records (each window placed where
// the layout says and drawing something) and the partitions panel's geometry: a simulated click
// on a cell selects its record, a long log shows a bounded window around its HW, and cells a
// truncation just removed stay in view.
#include "viz/ui/panels.h"

#include <gtest/gtest.h>
#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/base/check.h"
#include "sim/kernel/trace.h"
#include "sim/runner/runner.h"
#include "sim/scenario/loader.h"
#include "viz/model/scenario_models.h"
#include "viz/model/timeline_model.h"
#include "viz/ui/partitions_layout.h"
#include "viz/ui/view_cache.h"
#include "viz/ui/view_state.h"

namespace ksim::viz {
namespace {

namespace fs = std::filesystem;

fs::path SourceRoot() { return fs::path(KSIM_SOURCE_DIR); }

// Every run of one scenario file: the base, then each variant in the order written.
struct Scenario {
  std::vector<TimelineModel> models;
  Runs runs;
};

std::unique_ptr<Scenario> RunAll(const std::string& file, sim::TraceLevel level) {
  auto built = std::make_unique<Scenario>();
  Result<sim::Scenario> scenario = sim::LoadScenario((SourceRoot() / file).string());
  KSIM_CHECK_MSG(scenario.ok(), scenario.status().message().c_str());
  ScenarioModelsOptions options;
  options.level = level;
  options.name = file;
  Result<std::vector<TimelineModel>> models = ModelsOfScenario(*scenario, options);
  KSIM_CHECK_MSG(models.ok(), models.status().message().c_str());
  built->models = std::move(models).value();
  for (const TimelineModel& model : built->models) built->runs.models.push_back(&model);
  return built;
}

// Each scenario runs once for the whole file.
const Scenario& DeliverySemantics() {
  static const Scenario* runs =
      RunAll("scenarios/teaching/delivery-semantics.json", sim::TraceLevel::kMessages).release();
  return *runs;
}
const Scenario& CleanVsUnclean() {
  static const Scenario* runs =
      RunAll("scenarios/teaching/clean-vs-unclean-election.json", sim::TraceLevel::kState)
          .release();
  return *runs;
}

constexpr float kDisplayWidth = 1600.0f;
constexpr float kDisplayHeight = 1000.0f;

// A bare ImGui context per test: display size set, font atlas built, no ini file, no backend.
class PanelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(kDisplayWidth, kDisplayHeight);
    io.DeltaTime = 1.0f / 60.0f;
    unsigned char* pixels = nullptr;
    int width = 0;
    int height = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &width, &height);
    ASSERT_NE(pixels, nullptr);
  }
  void TearDown() override { ImGui::DestroyContext(); }

  static void Frame(const Runs& runs, ViewState& state, ViewCache& cache) {
    ImGui::NewFrame();
    DrawViewer(runs, state, cache);
    ImGui::Render();
  }

  // The window drawn last frame under `name`, or nullptr.
  static ImGuiWindow* DrawnWindow(const char* name) {
    ImGuiWindow* window = ImGui::FindWindowByName(name);
    // Active: Begin was called for it this frame (NewFrame moves it to WasActive).
    if (window == nullptr || !window->Active) return nullptr;
    return window;
  }

  static int Vertices(const ImGuiWindow* window) {
    int count = window->DrawList->VtxBuffer.Size;
    for (const ImGuiWindow* child : window->DC.ChildWindows) count += Vertices(child);
    return count;
  }
};

// The Partitions panel alone, the playhead at the end of `model`.
ViewState PartitionsAloneAtEnd(const TimelineModel& model) {
  ViewState state;
  state.only_panel = true;
  state.only = Panel::kPartitions;
  state.Seek(model, model.end_us());
  return state;
}

// The playheads worth drawing at: the start, the first crash (and 2 s later, when a failover
// is under way), the end.
std::vector<TimeUs> Playheads(const TimelineModel& model) {
  std::vector<TimeUs> times = {0};
  for (const ScenarioAction& action : model.actions()) {
    if (action.text.find("crash") != std::string::npos) {
      times.push_back(action.t_us);
      times.push_back(action.t_us + 2'000'000);
      break;
    }
  }
  times.push_back(model.end_us());
  return times;
}

void ExpectWholeLayoutDrawn(const Runs& runs, const char* what) {
  // With several runs Compare is the first tab, else Scenario.
  const char* tabs = runs.models.size() > 1 ? "Compare / Scenario" : "Scenario / Compare";
  for (const char* name : {"Cluster", "Partitions", "Ledger", "Timeline", "Messages", tabs}) {
    ImGuiWindow* window = ImGui::FindWindowByName(name);
    ASSERT_NE(window, nullptr) << what << ": no window " << name;
    EXPECT_TRUE(window->Active) << what << ": " << name;
    EXPECT_GT(window->DrawList->VtxBuffer.Size, 0) << what << ": " << name << " drew nothing";
    EXPECT_GE(window->Pos.x, 0.0f) << name;
    EXPECT_LE(window->Pos.x + window->Size.x, kDisplayWidth + 0.5f) << what << ": " << name;
    EXPECT_LE(window->Pos.y + window->Size.y, kDisplayHeight + 0.5f) << what << ": " << name;
  }
}

TEST_F(PanelsTest, WholeViewerDrawsEveryRunAtStartCrashAndEnd) {
  for (const Scenario* scenario : {&DeliverySemantics(), &CleanVsUnclean()}) {
    for (size_t active = 0; active < scenario->runs.models.size(); ++active) {
      Runs runs = scenario->runs;
      runs.active = active;
      const TimelineModel& model = runs.current();
      ViewState state;
      ViewCache cache;
      state.active_run = active;
      state.fixed_layout = true;
      for (TimeUs t_us : Playheads(model)) {
        state.Seek(model, t_us);
        for (int frame = 0; frame < 3; ++frame) Frame(runs, state, cache);
        const std::string what =
            model.header().scenario + "/" + model.header().variant + " at " + std::to_string(t_us);
        ExpectWholeLayoutDrawn(runs, what.c_str());
      }
      ImGui::DestroyContext();  // the next run starts from a fresh context
      SetUp();
    }
  }
}

TEST_F(PanelsTest, EachPanelAloneFillsTheDisplay) {
  const Scenario& scenario = DeliverySemantics();
  const char* titles[kPanelCount] = {"Cluster", "Partitions", "Timeline", "Messages",
                                     "Ledger",  "Compare",    "Scenario"};
  for (int p = 0; p < kPanelCount; ++p) {
    ViewState state;
    ViewCache cache;
    state.only_panel = true;
    state.only = static_cast<Panel>(p);
    for (TimeUs t_us : Playheads(scenario.runs.current())) {
      state.Seek(scenario.runs.current(), t_us);
      for (int frame = 0; frame < 3; ++frame) Frame(scenario.runs, state, cache);
      ImGuiWindow* window = DrawnWindow(titles[p]);
      ASSERT_NE(window, nullptr) << titles[p];
      EXPECT_EQ(window->Pos.x, 0.0f) << titles[p];
      EXPECT_EQ(window->Pos.y, 0.0f) << titles[p];
      EXPECT_EQ(window->Size.x, kDisplayWidth) << titles[p];
      EXPECT_EQ(window->Size.y, kDisplayHeight) << titles[p];
      EXPECT_GT(Vertices(window), 0) << titles[p];
      // Nothing else is drawn: no menu bar, no other panel.
      for (int other = 0; other < kPanelCount; ++other) {
        if (other != p) {
          EXPECT_EQ(DrawnWindow(titles[other]), nullptr) << titles[other];
        }
      }
      EXPECT_EQ(DrawnWindow("##MainMenuBar"), nullptr);
    }
  }
}

TEST_F(PanelsTest, HiddenPanelsLeaveTheirRowToTheOthers) {
  const Scenario& scenario = DeliverySemantics();
  ViewState state;
  ViewCache cache;
  state.fixed_layout = true;
  state.show[static_cast<int>(Panel::kLedger)] = false;
  state.show[static_cast<int>(Panel::kTimeline)] = false;
  state.show[static_cast<int>(Panel::kMessages)] = false;
  for (int frame = 0; frame < 2; ++frame) Frame(scenario.runs, state, cache);
  EXPECT_EQ(DrawnWindow("Ledger"), nullptr);
  EXPECT_EQ(DrawnWindow("Timeline"), nullptr);
  ImGuiWindow* partitions = DrawnWindow("Partitions");
  ASSERT_NE(partitions, nullptr);
  EXPECT_EQ(partitions->Pos.x, 0.0f);  // the whole row
  EXPECT_EQ(partitions->Size.x, kDisplayWidth);
  EXPECT_EQ(partitions->Pos.y + partitions->Size.y, kDisplayHeight);  // the last row
  // The Cluster and Scenario row above it, edge to edge.
  ImGuiWindow* cluster = DrawnWindow("Cluster");
  ASSERT_NE(cluster, nullptr);
  EXPECT_EQ(cluster->Pos.y + cluster->Size.y, partitions->Pos.y);
}

// A run chosen in the menu or in Compare (active_run) becomes the one the panels draw.
TEST_F(PanelsTest, ChosenRunBecomesActive) {
  const Scenario& scenario = CleanVsUnclean();
  ASSERT_GE(scenario.runs.models.size(), 2u);
  // Wide enough that every offset of these 400-record logs is shown (the window is the log).
  ImGui::GetIO().DisplaySize = ImVec2(5000.0f, kDisplayHeight);
  ViewState state = PartitionsAloneAtEnd(scenario.runs.current());
  ViewCache cache;
  Frame(scenario.runs, state, cache);
  // The runs' logs end at different offsets: the strips show the chosen run's.
  auto log_end_at = [](const TimelineModel& model, TimeUs t_us) {
    int64_t log_end = 0;
    const Snapshot snapshot = model.StateAt(t_us);  // kept: the loop reads into it
    for (const ReplicaView& replica : snapshot.partitions[0].replica_states) {
      log_end = std::max(log_end, replica.leo);
    }
    return log_end;
  };
  const TimeUs t_us = state.playhead_us;
  ASSERT_NE(log_end_at(*scenario.runs.models[0], t_us), log_end_at(*scenario.runs.models[1], t_us));
  ASSERT_FALSE(cache.partitions.strips.empty());
  EXPECT_EQ(cache.partitions.strips.front().window.end, log_end_at(*scenario.runs.models[0], t_us));
  state.active_run = 1;
  Frame(scenario.runs, state, cache);
  EXPECT_EQ(state.active_run, 1u);
  Frame(scenario.runs, state, cache);
  ASSERT_FALSE(cache.partitions.strips.empty());
  EXPECT_EQ(cache.partitions.strips.front().window.end, log_end_at(*scenario.runs.models[1], t_us));
}

TEST_F(PanelsTest, ClickOnACellSelectsItsRecord) {
  const Scenario& scenario = DeliverySemantics();
  const TimelineModel& model = scenario.runs.current();
  ViewState state = PartitionsAloneAtEnd(model);
  ViewCache cache;
  for (int frame = 0; frame < 2; ++frame) Frame(scenario.runs, state, cache);

  // A cell holding a producer's record, in a strip as the panel laid it out.
  const PartitionsFrame& drawn = cache.partitions;
  ASSERT_FALSE(drawn.strips.empty());
  // The viewer opens on the scenario's topic (t-0), not on __consumer_offsets: its strips
  // come first.
  const int32_t t0 = model.PartitionIndex("t", 0);
  ASSERT_GE(t0, 0);
  EXPECT_EQ(state.selected_partition, t0);
  const StripGeometry strip = drawn.strips.front();
  EXPECT_EQ(strip.partition, t0);
  const std::vector<Cell> log = model.LogAt(strip.partition, strip.broker, state.playhead_us);
  const Cell* target = nullptr;
  for (const Cell& cell : log) {
    if (cell.offset >= strip.window.first + 2 && cell.offset < strip.window.end &&
        cell.record >= 0) {
      target = &cell;
      break;
    }
  }
  ASSERT_NE(target, nullptr);
  const float x = strip.CellX(target->offset) + strip.window.cell_width * 0.5f;
  const float y = (strip.min.y + strip.max.y) * 0.5f;
  EXPECT_EQ(strip.OffsetAt(x), target->offset);
  ASSERT_EQ(state.selected_record, -1);

  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = ImVec2(x, y);
  Frame(scenario.runs, state, cache);  // hover
  io.MouseDown[0] = true;
  Frame(scenario.runs, state, cache);  // press
  io.MouseDown[0] = false;
  Frame(scenario.runs, state, cache);  // release
  EXPECT_EQ(state.selected_record, target->record);
  EXPECT_EQ(state.selected_partition, strip.partition);

  // A click beside the strips selects nothing new.
  state.selected_record = -1;
  io.MousePos = ImVec2(strip.min.x - 60.0f, y);
  Frame(scenario.runs, state, cache);
  io.MouseDown[0] = true;
  Frame(scenario.runs, state, cache);
  io.MouseDown[0] = false;
  Frame(scenario.runs, state, cache);
  EXPECT_EQ(state.selected_record, -1);
}

// Cells a truncation removed stay in view while they are drawn leaving.
TEST_F(PanelsTest, TruncatedCellsStayInViewWhileLeaving) {
  const Scenario& scenario = CleanVsUnclean();
  const TimelineModel& model = scenario.runs.current();  // base: the unclean election
  // The latest truncation, and the first offset it removed (the truncation point).
  TimeUs removed_us = -1;
  for (int32_t replica : model.partitions()[0].replicas) {
    for (const Cell& cell : model.CellHistory(0, replica)) {
      if (cell.truncated) removed_us = std::max(removed_us, cell.removed_us);
    }
  }
  const Cell* truncated = nullptr;
  int32_t broker = -1;
  for (int32_t replica : model.partitions()[0].replicas) {
    for (const Cell& cell : model.CellHistory(0, replica)) {
      if (cell.truncated && cell.removed_us == removed_us &&
          (truncated == nullptr || cell.offset < truncated->offset)) {
        truncated = &cell;
        broker = replica;
      }
    }
  }
  ASSERT_NE(truncated, nullptr) << "the unclean election truncates broker 1's tail";
  ViewState state;
  ViewCache cache;
  state.only_panel = true;
  state.only = Panel::kPartitions;
  state.Seek(model, truncated->removed_us + 500'000);
  for (int frame = 0; frame < 2; ++frame) Frame(scenario.runs, state, cache);
  bool seen = false;
  for (const StripGeometry& strip : cache.partitions.strips) {
    if (strip.broker != broker) continue;
    seen = true;
    EXPECT_LE(strip.window.first, truncated->offset);
    EXPECT_GT(strip.window.end, truncated->offset);
  }
  EXPECT_TRUE(seen);
}

// A long log's first offset shown is the view state's choice, per partition; without one the
// strips follow the HW.
TEST_F(PanelsTest, FirstOffsetShownIsTheViewStatesChoice) {
  const Scenario& scenario = DeliverySemantics();
  const TimelineModel& model = scenario.runs.current();
  // Narrow: the strips hold a few dozen cells, fewer than the log's offsets.
  ImGui::GetIO().DisplaySize = ImVec2(600.0f, kDisplayHeight);
  ViewState state = PartitionsAloneAtEnd(model);
  ViewCache cache;
  for (int frame = 0; frame < 2; ++frame) Frame(scenario.runs, state, cache);
  ASSERT_FALSE(cache.partitions.strips.empty());
  const StripGeometry following = cache.partitions.strips.front();
  ASSERT_GT(following.window.first, 0) << "a long log shows a window near its HW";

  state.partition_first_offset[following.partition] = 0;  // the log's start
  Frame(scenario.runs, state, cache);
  ASSERT_FALSE(cache.partitions.strips.empty());
  EXPECT_EQ(cache.partitions.strips.front().window.first, 0);

  state.partition_first_offset.erase(following.partition);
  Frame(scenario.runs, state, cache);
  ASSERT_FALSE(cache.partitions.strips.empty());
  EXPECT_EQ(cache.partitions.strips.front().window.first, following.window.first);
}

TEST(OffsetWindowTest, ShortLogShowsEveryOffset) {
  const OffsetWindow window = ChooseOffsetWindow(0, 40, 30, -1, 1000.0f);
  EXPECT_EQ(window.first, 0);
  EXPECT_EQ(window.end, 40);
  EXPECT_EQ(window.cell_width, kCellWidthPreferred);  // 25 px would do: capped
}

TEST(OffsetWindowTest, LongLogShowsAScreenfulAroundTheHighWatermark) {
  const float width = 1400.0f;
  const OffsetWindow window = ChooseOffsetWindow(0, 100'000, 60'000, -1, width);
  const int64_t fit = static_cast<int64_t>(width / kCellWidthMin);
  EXPECT_EQ(window.end - window.first, fit);
  EXPECT_LT(window.first, 60'000);
  EXPECT_GT(window.end, 60'000);
  EXPECT_GE(window.cell_width, kCellWidthMin);
  // Near the end the window stops at the log end; a chosen first offset is clamped into the log.
  EXPECT_EQ(ChooseOffsetWindow(0, 100'000, 99'999, -1, width).end, 100'000);
  const OffsetWindow chosen = ChooseOffsetWindow(500, 100'000, 99'999, 10, width);
  EXPECT_EQ(chosen.first, 500);
  EXPECT_EQ(chosen.end, 500 + fit);
}

TEST(OffsetWindowTest, StripMapsScreenXToOffsets) {
  StripGeometry strip;
  strip.min = ImVec2(100.0f, 10.0f);
  strip.max = ImVec2(300.0f, 30.0f);
  strip.window = OffsetWindow{50, 70, 10.0f};
  EXPECT_EQ(strip.OffsetAt(100.0f), 50);
  EXPECT_EQ(strip.OffsetAt(125.0f), 52);
  EXPECT_EQ(strip.OffsetAt(299.0f), 69);
  EXPECT_EQ(strip.OffsetAt(99.0f), -1);
  EXPECT_EQ(strip.OffsetAt(300.0f), -1);
  EXPECT_EQ(strip.CellX(52), 120.0f);
}

}  // namespace
}  // namespace ksim::viz
