// ViewCache: what the viewer keeps between frames beside its ViewState, none of it a choice of
// the user (Tracy keeps these as members of its View, next to the plain ViewData;
// docs/STYLE.md): data derived from a model that costs too much to derive every frame, where the
// last frame drew what a test aims a click at, and whether the first frame is drawn. Whoever
// owns a ViewState owns its ViewCache and hands both to DrawViewer (viz/ui/panels.h), so two
// viewers in one process share nothing. Each cache records what it was computed from (the
// model's serial and the view state it depends on) and is recomputed when any of that changes:
// it never needs clearing, and a fresh ViewCache only costs the recomputation. Drawn on one
// thread, like ImGui's own context.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "viz/model/timeline_model.h"
#include "viz/ui/partitions_layout.h"
#include "viz/ui/view_state.h"

namespace ksim::viz {

// A ledger row as the last frame drew it (screen coordinates).
struct LedgerRowRect {
  int32_t record = -1;
  ImVec2 min;
  ImVec2 max;
};

// A jump in the ledger's details pane (an event of the selected record, an anomaly's cause) as
// the last frame drew it: a click there seeks the playhead to t_us.
struct LedgerJumpRect {
  TimeUs t_us = 0;
  bool cause = false;  // an anomaly's cause time (else one of the record's events)
  ImVec2 min;
  ImVec2 max;
};

struct LedgerCache {
  // LedgerRows(model, filter, search) (viz/ui/ledger_panel_internal.h) and its inputs.
  uint64_t model_serial = 0;  // 0: nothing computed yet (serials start at 1)
  LedgerFilter filter = LedgerFilter::kAll;
  std::string search;
  std::vector<int32_t> rows;
  // The last frame's: the visible rows (the clipper's) in row order, and the details' jumps.
  std::vector<LedgerRowRect> row_rects;
  std::vector<LedgerJumpRect> jump_rects;
};

struct MessagesCache {
  // TimelineModel::HighWatermarkChangeAt by event index, filled a bounded number a frame.
  uint64_t model_serial = 0;
  std::map<uint32_t, HighWatermarkChange> hw_changes;
};

struct MinimapCache {
  // TimelineModel::EventHistogram(columns) and its largest column's total.
  uint64_t model_serial = 0;
  int columns = 0;
  std::vector<EventKindCounts> counts;
  uint32_t max_total = 1;
};

struct ViewCache {
  bool opened = false;  // the viewer's first frame is drawn (DrawViewer's first-frame choices)
  LedgerCache ledger;
  MessagesCache messages;
  MinimapCache minimap;        // the Timeline panel's
  PartitionsFrame partitions;  // the strips the last frame drew
};

}  // namespace ksim::viz
