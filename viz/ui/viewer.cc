// DrawViewer (viz/ui/panels.h): the menu bar (panel toggles, the run selector when there are
// several runs, the playhead) and every shown panel in its own window, laid out in three rows
// filling the display:
//
//   Cluster      | Scenario / Compare (tabs; Compare first with several runs)
//   Partitions   | Ledger
//   Timeline     | Messages
//
// A hidden panel's neighbour takes its row; a row with nothing shown gives its height to the
// others. With state.only_panel one window fills the display and nothing else is drawn. With
// state.fixed_layout windows are placed every frame (headless screenshots come out the same);
// otherwise they are placed on the first frame and whenever the display changes size, and the
// user may move them in between.
//
// The active run is state.active_run (a run chosen in the menu or clicked in Compare): the panels
// get a copy of `runs` with that run active. The panels that keep derived data get the viewer's
// cache (viz/ui/view_cache.h); the others only the runs and the state.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "viz/ui/draw_kit.h"
#include "viz/ui/panels.h"

namespace ksim::viz {
namespace {

using DrawFunction = void (*)(const Runs&, ViewState&, ViewCache&);

struct PanelInfo {
  Panel panel;
  const char* title;
  DrawFunction draw;
};

// A panel that keeps nothing between frames, drawn as one that does.
template <void (*Draw)(const Runs&, ViewState&)>
void WithoutCache(const Runs& runs, ViewState& state, ViewCache&) {
  Draw(runs, state);
}

constexpr PanelInfo kPanels[kPanelCount] = {
    {Panel::kCluster, "Cluster", &WithoutCache<&DrawClusterPanel>},
    {Panel::kPartitions, "Partitions", &DrawPartitionsPanel},
    {Panel::kTimeline, "Timeline", &DrawTimelinePanel},
    {Panel::kMessages, "Messages", &DrawMessagesPanel},
    {Panel::kLedger, "Ledger", &DrawLedgerPanel},
    {Panel::kCompare, "Compare", &WithoutCache<&DrawComparePanel>},
    {Panel::kScenario, "Scenario", &WithoutCache<&DrawScenarioPanel>},
};

const PanelInfo& Info(Panel panel) { return kPanels[static_cast<int>(panel)]; }

// One window of the layout: one panel, or several as tabs.
struct Slot {
  std::vector<Panel> tabs;
  float weight = 1.0f;  // share of the row's width
};
struct Row {
  std::vector<Slot> slots;
  float weight = 1.0f;  // share of the display's height
};

std::vector<Row> Layout(const Runs& runs) {
  const bool several = runs.models.size() > 1;
  Slot scenario_tabs;
  scenario_tabs.tabs = several ? std::vector<Panel>{Panel::kCompare, Panel::kScenario}
                               : std::vector<Panel>{Panel::kScenario, Panel::kCompare};
  scenario_tabs.weight = 0.5f;
  return {
      Row{{Slot{{Panel::kCluster}, 0.5f}, scenario_tabs}, 0.34f},
      Row{{Slot{{Panel::kPartitions}, 0.58f}, Slot{{Panel::kLedger}, 0.42f}}, 0.36f},
      Row{{Slot{{Panel::kTimeline}, 0.5f}, Slot{{Panel::kMessages}, 0.5f}}, 0.30f},
  };
}

// The layout with hidden panels taken out (and empty slots and rows dropped).
std::vector<Row> ShownLayout(const Runs& runs, const ViewState& state) {
  std::vector<Row> rows;
  for (Row row : Layout(runs)) {
    std::vector<Slot> slots;
    for (Slot slot : row.slots) {
      std::erase_if(slot.tabs, [&](Panel p) { return !state.show[static_cast<int>(p)]; });
      if (!slot.tabs.empty()) slots.push_back(slot);
    }
    if (slots.empty()) continue;
    row.slots = std::move(slots);
    rows.push_back(row);
  }
  return rows;
}

std::string WindowName(const Slot& slot) {
  std::string name;
  for (Panel panel : slot.tabs) {
    if (!name.empty()) name += " / ";
    name += Info(panel).title;
  }
  return name;
}

// True when the display changed size since the last frame (and on the first frame).
bool DisplayChanged() {
  ImGuiStorage* storage = ImGui::GetStateStorage();
  const ImVec2 size = ImGui::GetIO().DisplaySize;
  const ImGuiID w_id = ImGui::GetID("ksim_viewer_display_w");
  const ImGuiID h_id = ImGui::GetID("ksim_viewer_display_h");
  const bool changed =
      storage->GetFloat(w_id, -1.0f) != size.x || storage->GetFloat(h_id, -1.0f) != size.y;
  storage->SetFloat(w_id, size.x);
  storage->SetFloat(h_id, size.y);
  return changed;
}

// On the viewer's first frame, a selected partition of an internal topic (__consumer_offsets,
// the default index 0 sorts first) gives way to the scenario's first partition.
void OpenOnScenarioTopic(const TimelineModel& model, ViewState& state, ViewCache& cache) {
  if (cache.opened) return;
  cache.opened = true;
  const std::vector<PartitionView>& partitions = model.partitions();
  const auto internal = [&](size_t p) { return partitions[p].topic.rfind("__", 0) == 0; };
  if (state.selected_partition >= 0 &&
      static_cast<size_t>(state.selected_partition) < partitions.size() &&
      !internal(static_cast<size_t>(state.selected_partition))) {
    return;
  }
  for (size_t p = 0; p < partitions.size(); ++p) {
    if (!internal(p)) {
      state.selected_partition = static_cast<int32_t>(p);
      return;
    }
  }
}

float DrawMenuBar(const Runs& runs, ViewState& state, size_t active) {
  float height = 0.0f;
  if (!ImGui::BeginMainMenuBar()) return height;
  height = ImGui::GetWindowSize().y;
  ImGui::TextColored(ImVec4(0.95f, 0.85f, 0.5f, 1.0f), "ksim");
  if (ImGui::BeginMenu("Panels")) {
    for (const PanelInfo& info : kPanels) {
      ImGui::MenuItem(info.title, nullptr, &state.show[static_cast<int>(info.panel)]);
    }
    ImGui::EndMenu();
  }
  if (runs.models.size() > 1) {
    ImGui::Separator();
    ImGui::TextDisabled("run:");
    for (size_t i = 0; i < runs.models.size(); ++i) {
      ImGui::PushID(static_cast<int>(i));
      const std::string& variant = runs.models[i]->header().variant;
      if (ImGui::RadioButton(variant.c_str(), i == active)) {
        state.active_run = i;
      }
      ImGui::PopID();
    }
  }
  ImGui::Separator();
  const TimelineModel& model = *runs.models[active];
  ImGui::Text("%s   playhead %s / %s%s", model.header().scenario.c_str(),
              kit::FormatSeconds(state.playhead_us).c_str(),
              kit::FormatSeconds(model.end_us()).c_str(), state.playing ? "   playing" : "");
  ImGui::EndMainMenuBar();
  return height;
}

void DrawSlot(const Runs& runs, ViewState& state, ViewCache& cache, const Slot& slot) {
  if (slot.tabs.size() == 1) {
    Info(slot.tabs.front()).draw(runs, state, cache);
    return;
  }
  if (ImGui::BeginTabBar("tabs")) {
    for (Panel panel : slot.tabs) {
      if (ImGui::BeginTabItem(Info(panel).title)) {
        ImGui::BeginChild("tab_content");
        Info(panel).draw(runs, state, cache);
        ImGui::EndChild();
        ImGui::EndTabItem();
      }
    }
    ImGui::EndTabBar();
  }
}

}  // namespace

void DrawViewer(const Runs& runs, ViewState& state, ViewCache& cache) {
  IM_ASSERT(!runs.models.empty());
  const ImGuiIO& io = ImGui::GetIO();
  Runs view = runs;
  if (state.active_run >= runs.models.size()) state.active_run = 0;
  view.active = state.active_run;
  const TimelineModel& model = view.current();
  state.Tick(model, io.DeltaTime);
  OpenOnScenarioTopic(model, state, cache);

  const bool relayout = DisplayChanged();
  const ImGuiWindowFlags fixed_flags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                       ImGuiWindowFlags_NoCollapse |
                                       ImGuiWindowFlags_NoSavedSettings;

  if (state.only_panel) {
    const PanelInfo& info = Info(state.only);
    ImGui::SetNextWindowPos(ImVec2(0, 0), ImGuiCond_Always);
    ImGui::SetNextWindowSize(io.DisplaySize, ImGuiCond_Always);
    if (ImGui::Begin(info.title, nullptr, fixed_flags)) info.draw(view, state, cache);
    ImGui::End();
    return;
  }

  const float top = DrawMenuBar(view, state, view.active);
  const std::vector<Row> rows = ShownLayout(view, state);
  float row_weights = 0.0f;
  for (const Row& row : rows) row_weights += row.weight;
  const float height = std::max(io.DisplaySize.y - top, 1.0f);
  const ImGuiCond cond = state.fixed_layout || relayout ? ImGuiCond_Always : ImGuiCond_FirstUseEver;
  // Edges are whole pixels (ImGui floors window positions and sizes): each window ends where
  // the next begins and the last ones end at the display's edges.
  float row_weight_before = 0.0f;
  for (const Row& row : rows) {
    const float y = std::floor(top + height * row_weight_before / row_weights);
    row_weight_before += row.weight;
    const float y_end = std::floor(top + height * row_weight_before / row_weights);
    float slot_weights = 0.0f;
    for (const Slot& slot : row.slots) slot_weights += slot.weight;
    float slot_weight_before = 0.0f;
    for (const Slot& slot : row.slots) {
      const float x = std::floor(io.DisplaySize.x * slot_weight_before / slot_weights);
      slot_weight_before += slot.weight;
      const float x_end = std::floor(io.DisplaySize.x * slot_weight_before / slot_weights);
      ImGui::SetNextWindowPos(ImVec2(x, y), cond);
      ImGui::SetNextWindowSize(ImVec2(x_end - x, y_end - y), cond);
      const std::string name = WindowName(slot);
      // A window's close button hides its panels (the Panels menu brings them back).
      bool open = true;
      if (ImGui::Begin(name.c_str(), &open,
                       state.fixed_layout ? fixed_flags : ImGuiWindowFlags_NoCollapse)) {
        DrawSlot(view, state, cache, slot);
      }
      ImGui::End();
      if (!open) {
        for (Panel panel : slot.tabs) state.show[static_cast<int>(panel)] = false;
      }
    }
  }
}

}  // namespace ksim::viz
