// ViewState's logic: panel names (the --panel flag, the menu's toggles) and the playhead's moves
// (playback and seeks), which keep the zoom window around the playhead without resizing it.
#include "viz/ui/view_state.h"

#include <algorithm>
#include <cmath>

namespace ksim::viz {
namespace {

constexpr const char* kPanelNames[kPanelCount] = {
    "cluster", "partitions", "timeline", "messages", "ledger", "compare", "scenario",
};

// The window [window_begin_us, window_end_us] as a length, the whole run when unset (0).
TimeUs WindowLength(const TimelineModel& model, const ViewState& state) {
  if (state.window_end_us <= state.window_begin_us) return std::max<TimeUs>(model.end_us(), 1);
  return state.window_end_us - state.window_begin_us;
}

// Shifts the window (keeping its length) so that it holds the playhead and stays in the run.
void KeepWindowAroundPlayhead(const TimelineModel& model, ViewState& state) {
  const TimeUs end_us = model.end_us();
  const TimeUs length_us =
      std::min<TimeUs>(WindowLength(model, state), std::max<TimeUs>(end_us, 1));
  if (state.window_end_us <= state.window_begin_us) {
    state.window_begin_us = 0;
    state.window_end_us = length_us;
  }
  if (state.playhead_us < state.window_begin_us) {
    state.window_begin_us = state.playhead_us;
  } else if (state.playhead_us > state.window_end_us) {
    state.window_begin_us = state.playhead_us - length_us;
  }
  state.window_begin_us =
      std::clamp<TimeUs>(state.window_begin_us, 0, std::max<TimeUs>(end_us - length_us, 0));
  state.window_end_us = state.window_begin_us + length_us;
}

}  // namespace

const char* PanelName(Panel panel) {
  const int index = static_cast<int>(panel);
  if (index < 0 || index >= kPanelCount) return "unknown";
  return kPanelNames[index];
}

bool ParsePanelName(const std::string& name, Panel* out) {
  for (int i = 0; i < kPanelCount; ++i) {
    if (name == kPanelNames[i]) {
      *out = static_cast<Panel>(i);
      return true;
    }
  }
  return false;
}

void ViewState::Tick(const TimelineModel& model, double wall_seconds) {
  if (!playing) return;
  if (wall_seconds < 0 || !std::isfinite(wall_seconds)) wall_seconds = 0;
  const TimeUs end_us = model.end_us();
  if (playhead_us >= end_us) {
    playhead_us = end_us;
    playing = false;
    play_remainder_us = 0;
    KeepWindowAroundPlayhead(model, *this);
    return;
  }
  // Simulated microseconds this frame, the fraction carried to the next one so that slow
  // speeds (0.1x at 60 fps: 1666.6 us a frame) do not drift.
  const double advance_us = speed * wall_seconds * 1e6 + play_remainder_us;
  const double whole_us = std::floor(advance_us);
  play_remainder_us = advance_us - whole_us;
  const double room_us = static_cast<double>(end_us - playhead_us);
  if (whole_us >= room_us) {
    playhead_us = end_us;
    playing = false;
    play_remainder_us = 0;
  } else {
    playhead_us += static_cast<TimeUs>(whole_us);
  }
  KeepWindowAroundPlayhead(model, *this);
}

void ViewState::Seek(const TimelineModel& model, TimeUs t_us) {
  playhead_us = std::clamp<TimeUs>(t_us, 0, model.end_us());
  play_remainder_us = 0;
  KeepWindowAroundPlayhead(model, *this);
}

}  // namespace ksim::viz
