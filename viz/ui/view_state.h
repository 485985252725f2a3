// ViewState: everything the viewer's user chose (playhead, zoom window, selection, playback,
// what each panel shows), as a plain struct the panels read and change (Tracy's ViewData,
// docs/STYLE.md). The models are immutable; a frame changes this and the viewer's ViewCache
// (viz/ui/view_cache.h: what the panels derived and keep, never a choice of the user). No ImGui
// types in it, so tests build one by hand and check what a simulated click changed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "viz/model/timeline_model.h"

namespace ksim::viz {

// The runs the viewer shows: one model per variant of one scenario (or one per trace file
// given). `active` is the run the single-run panels draw (DrawViewer sets it from
// ViewState::active_run).
struct Runs {
  std::vector<const TimelineModel*> models;  // not owned; at least one
  size_t active = 0;
  const TimelineModel& current() const { return *models[active]; }
};

enum class Panel : uint8_t {
  kCluster,
  kPartitions,
  kTimeline,
  kMessages,
  kLedger,
  kCompare,
  kScenario,
};
inline constexpr int kPanelCount = static_cast<int>(Panel::kScenario) + 1;
const char* PanelName(Panel panel);                        // "cluster", "partitions", ...
bool ParsePanelName(const std::string& name, Panel* out);  // false when unknown

enum class LedgerFilter : uint8_t { kAll, kAnomalies, kLost, kDuplicated, kUnacked };

struct ViewState {
  // Time. The playhead is where every panel shows the cluster; the window is the zoomed range
  // of the timeline and of the messages diagram (playhead kept inside it while playing).
  TimeUs playhead_us = 0;
  TimeUs window_begin_us = 0;
  TimeUs window_end_us = 0;  // 0: the whole run (set on the first frame)
  bool playing = false;
  double speed = 1.0;            // simulated seconds per wall-clock second
  double play_remainder_us = 0;  // sub-microsecond carry between frames

  // Selection.
  int32_t selected_partition = 0;  // index into the model's partitions()
  int32_t selected_record = -1;    // index into records(); -1 none
  int32_t selected_event = -1;     // index into events() (the last jump target)
  // The run the viewer shows (index into Runs::models): chosen in the menu or by a click on a
  // run in the Compare panel; DrawViewer draws the panels with Runs::active set to it.
  size_t active_run = 0;
  LedgerFilter ledger_filter = LedgerFilter::kAnomalies;
  char ledger_search[64] = "";
  EventKind jump_kind = EventKind::kFault;  // what next/previous-event jumps to
  bool show_zookeeper = false;              // Messages: ZooKeeper's traffic drawn too
  // Partitions: the first offset a long log's strips show, chosen by partition index (into
  // partitions()); a partition not here follows its HW.
  std::map<int32_t, int64_t> partition_first_offset;

  // Layout. With `only` set (screenshots with --panel), one panel fills the display.
  bool show[kPanelCount] = {true, true, true, true, true, true, true};
  bool only_panel = false;
  Panel only = Panel::kCluster;
  bool fixed_layout = false;  // place windows every frame (headless renders), not just once

  // Advances the playhead by a frame of `wall_seconds` when playing, stopping at the end.
  void Tick(const TimelineModel& model, double wall_seconds);
  // Moves the playhead, keeping the window around it (shifted, not resized).
  void Seek(const TimelineModel& model, TimeUs t_us);
};

}  // namespace ksim::viz
