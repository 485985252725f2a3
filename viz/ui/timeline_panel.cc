// The Timeline panel: transport controls, a minimap of the whole run (events bucketed per pixel
// column, faults and anomalies drawn tall), the zoomed window with one lane of ticks per event
// kind, a time axis and a draggable playhead. Keyboard (when no text field is active): Space
// play/pause, Left/Right step one event, Shift+Left/Right previous/next event of the chosen
// kind, +/- zoom, Home/End.
//
// Cost per frame is bounded by the panel's width, not the run's size: the minimap's buckets
// (the model's EventHistogram) are computed once per (model, width) and kept in the view cache;
// the zoomed lanes scan at most kScanPerColumn events per pixel column (binary search to each
// column's start).
#include <imgui.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "viz/ui/draw_kit.h"
#include "viz/ui/palette.h"
#include "viz/ui/panels.h"
#include "viz/ui/view_cache.h"

namespace ksim::viz {
namespace {

constexpr float kMinimapHeight = 44.0f;
constexpr float kLaneHeightMin = 14.0f;
constexpr float kLaneHeightMax = 26.0f;
constexpr float kLabelWidth = 96.0f;
constexpr float kAxisHeight = 20.0f;
constexpr size_t kScanPerColumn = 256;
constexpr TimeUs kMinWindowUs = 100;  // the deepest zoom: 100 us across the panel
constexpr size_t kHoverLinesMax = 14;

// Events per kind per pixel column of the whole run, recomputed when the model or the width
// change.
const MinimapCache& Buckets(const TimelineModel& model, int columns, MinimapCache& cache) {
  if (cache.model_serial == model.serial() && cache.columns == columns) return cache;
  cache.model_serial = model.serial();
  cache.columns = columns;
  cache.counts = model.EventHistogram(columns);
  cache.max_total = 1;
  for (const EventKindCounts& column : cache.counts) {
    uint32_t total = 0;
    for (uint32_t n : column) total += n;
    cache.max_total = std::max(cache.max_total, total);
  }
  return cache;
}

// The index of the event of `kind` at exactly t (the jump's target), for selected_event.
int32_t EventIndexAt(const TimelineModel& model, TimeUs t_us, EventKind kind) {
  for (size_t i = model.FirstEventAtOrAfter(t_us);
       i < model.events().size() && model.events()[i].t_us == t_us; ++i) {
    if (model.events()[i].kind == kind) return static_cast<int32_t>(i);
  }
  return -1;
}

void StepForward(const TimelineModel& model, ViewState& state) {
  const size_t i = model.FirstEventAtOrAfter(state.playhead_us + 1);
  if (i >= model.events().size()) return;
  state.Seek(model, model.events()[i].t_us);
  state.selected_event = static_cast<int32_t>(i);
}

void StepBack(const TimelineModel& model, ViewState& state) {
  const size_t i = model.FirstEventAtOrAfter(state.playhead_us);
  if (i == 0) return;
  state.Seek(model, model.events()[i - 1].t_us);
  state.selected_event = static_cast<int32_t>(i - 1);
}

void JumpNext(const TimelineModel& model, ViewState& state) {
  if (std::optional<TimeUs> t = model.NextEvent(state.playhead_us, state.jump_kind)) {
    state.Seek(model, *t);
    state.selected_event = EventIndexAt(model, *t, state.jump_kind);
  }
}

void JumpPrevious(const TimelineModel& model, ViewState& state) {
  if (std::optional<TimeUs> t = model.PreviousEvent(state.playhead_us, state.jump_kind)) {
    state.Seek(model, *t);
    state.selected_event = EventIndexAt(model, *t, state.jump_kind);
  }
}

// Sets the window to [begin, begin + length] within the run.
void SetWindow(const TimelineModel& model, ViewState& state, TimeUs begin_us, TimeUs length_us) {
  const TimeUs end_us = std::max<TimeUs>(model.end_us(), 1);
  length_us = std::clamp<TimeUs>(length_us, std::min(kMinWindowUs, end_us), end_us);
  state.window_begin_us = std::clamp<TimeUs>(begin_us, 0, end_us - length_us);
  state.window_end_us = state.window_begin_us + length_us;
}

// Zooms by `factor` (< 1 in) around `anchor_us`, which keeps its place on screen.
void Zoom(const TimelineModel& model, ViewState& state, double factor, TimeUs anchor_us) {
  const TimeUs length_us = state.window_end_us - state.window_begin_us;
  const TimeUs new_length_us = static_cast<TimeUs>(std::llround(length_us * factor));
  const double anchor_fraction =
      length_us > 0 ? static_cast<double>(anchor_us - state.window_begin_us) / length_us : 0.5;
  SetWindow(model, state,
            anchor_us - static_cast<TimeUs>(std::llround(anchor_fraction * new_length_us)),
            new_length_us);
}

void HandleKeyboard(const TimelineModel& model, ViewState& state) {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput) return;
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Space), false)) {
    if (!state.playing && state.playhead_us >= model.end_us()) state.Seek(model, 0);
    state.playing = !state.playing;
  }
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow))) {
    io.KeyShift ? JumpNext(model, state) : StepForward(model, state);
  }
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow))) {
    io.KeyShift ? JumpPrevious(model, state) : StepBack(model, state);
  }
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Home), false)) state.Seek(model, 0);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_End), false)) {
    state.Seek(model, model.end_us());
  }
  for (ImWchar c : io.InputQueueCharacters) {
    if (c == '+' || c == '=') Zoom(model, state, 0.5, state.playhead_us);
    if (c == '-' || c == '_') Zoom(model, state, 2.0, state.playhead_us);
  }
}

void DrawControls(const TimelineModel& model, ViewState& state) {
  if (ImGui::Button("|<")) state.Seek(model, 0);
  ImGui::SameLine();
  if (ImGui::Button("<")) StepBack(model, state);
  ImGui::SameLine();
  if (ImGui::Button(state.playing ? "Pause" : "Play ", ImVec2(52, 0))) {
    if (!state.playing && state.playhead_us >= model.end_us()) state.Seek(model, 0);
    state.playing = !state.playing;
  }
  ImGui::SameLine();
  if (ImGui::Button(">")) StepForward(model, state);
  ImGui::SameLine();
  if (ImGui::Button(">|")) state.Seek(model, model.end_us());
  ImGui::SameLine();
  float speed = static_cast<float>(state.speed);
  ImGui::SetNextItemWidth(110);
  if (ImGui::SliderFloat("##speed", &speed, 0.1f, 100.0f, "%.1fx speed",
                         ImGuiSliderFlags_Logarithmic)) {
    state.speed = std::clamp(static_cast<double>(speed), 0.1, 100.0);
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(110);
  const std::string kind_name(EventKindName(state.jump_kind));
  if (ImGui::BeginCombo("##jump_kind", kind_name.c_str())) {
    for (int k = 0; k < kEventKindCount; ++k) {
      const EventKind kind = static_cast<EventKind>(k);
      const std::string name(EventKindName(kind));
      if (ImGui::Selectable(name.c_str(), kind == state.jump_kind)) state.jump_kind = kind;
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  if (ImGui::Button("<< prev")) JumpPrevious(model, state);
  ImGui::SameLine();
  if (ImGui::Button("next >>")) JumpNext(model, state);
  ImGui::SameLine();
  if (ImGui::Button("zoom +")) Zoom(model, state, 0.5, state.playhead_us);
  ImGui::SameLine();
  if (ImGui::Button("zoom -")) Zoom(model, state, 2.0, state.playhead_us);
  ImGui::SameLine();
  if (ImGui::Button("fit")) SetWindow(model, state, 0, model.end_us());
  ImGui::SameLine();
  ImGui::Text("%s / %s", kit::FormatSeconds(state.playhead_us).c_str(),
              kit::FormatSeconds(model.end_us()).c_str());
}

void DrawMinimap(const TimelineModel& model, ViewState& state, MinimapCache& cache) {
  ImDrawList* draw = ImGui::GetWindowDrawList();
  // Aligned with the lanes below (after their label column), so at "fit" both agree.
  const ImVec2 corner = ImGui::GetCursorScreenPos();
  const ImVec2 origin(corner.x + kLabelWidth, corner.y);
  const float width = std::max(ImGui::GetContentRegionAvail().x - kLabelWidth, 32.0f);
  const int columns = static_cast<int>(width);
  const TimeUs end_us = std::max<TimeUs>(model.end_us(), 1);
  const auto x_of = [&](TimeUs t_us) {
    return origin.x + static_cast<float>(static_cast<double>(t_us) * width / end_us);
  };
  draw->AddText(ImVec2(corner.x + 4, corner.y + 4), IM_COL32(200, 200, 200, 255), "whole run");
  draw->AddRectFilled(origin, ImVec2(origin.x + width, origin.y + kMinimapHeight),
                      IM_COL32(28, 30, 36, 255));
  const MinimapCache& buckets = Buckets(model, columns, cache);
  const float density_top = origin.y + kMinimapHeight * 0.55f;
  for (int c = 0; c < columns; ++c) {
    const auto& counts = buckets.counts[c];
    uint32_t total = 0;
    for (uint32_t n : counts) total += n;
    const float x = origin.x + static_cast<float>(c) + 0.5f;
    if (total > 0) {
      // Density (log scale) of everything in the lower part of the strip.
      const float fraction =
          std::log1p(static_cast<float>(total)) / std::log1p(static_cast<float>(buckets.max_total));
      const float bar = std::max(1.0f, fraction * (origin.y + kMinimapHeight - density_top));
      draw->AddLine(ImVec2(x, origin.y + kMinimapHeight - bar),
                    ImVec2(x, origin.y + kMinimapHeight), IM_COL32(110, 120, 140, 255));
    }
    // Prominent kinds tall, the rarest on top of the others (anomalies last).
    for (EventKind kind : {EventKind::kAction, EventKind::kTruncation, EventKind::kElection,
                           EventKind::kFault, EventKind::kAnomaly}) {
      if (counts[static_cast<int>(kind)] == 0) continue;
      const float top = kind == EventKind::kAnomaly || kind == EventKind::kFault
                            ? origin.y + 1
                            : origin.y + kMinimapHeight * 0.2f;
      draw->AddLine(ImVec2(x, top), ImVec2(x, density_top), EventKindColor(kind), 2.0f);
    }
  }
  // The window as a box, the playhead as a line.
  const float box_x0 = x_of(state.window_begin_us);
  const float box_x1 = std::max(x_of(state.window_end_us), box_x0 + 3.0f);
  draw->AddRectFilled(ImVec2(box_x0, origin.y), ImVec2(box_x1, origin.y + kMinimapHeight),
                      IM_COL32(255, 255, 255, 28));
  draw->AddRect(ImVec2(box_x0, origin.y), ImVec2(box_x1, origin.y + kMinimapHeight),
                IM_COL32(255, 255, 255, 160));
  const float play_x = x_of(state.playhead_us);
  draw->AddLine(ImVec2(play_x, origin.y), ImVec2(play_x, origin.y + kMinimapHeight), kColorPlayhead,
                2.0f);

  // Press outside the box: centre the window there; drag: pan it.
  ImGui::SetCursorScreenPos(origin);
  ImGui::InvisibleButton("##minimap", ImVec2(width, kMinimapHeight));
  const TimeUs length_us = state.window_end_us - state.window_begin_us;
  if (ImGui::IsItemActivated()) {
    const float mouse_x = ImGui::GetIO().MousePos.x;
    if (mouse_x < box_x0 || mouse_x > box_x1) {
      const TimeUs t_us = static_cast<TimeUs>((mouse_x - origin.x) / width * end_us);
      SetWindow(model, state, t_us - length_us / 2, length_us);
    }
  } else if (ImGui::IsItemActive() && ImGui::GetIO().MouseDelta.x != 0) {
    const TimeUs delta_us =
        static_cast<TimeUs>(std::llround(ImGui::GetIO().MouseDelta.x / width * end_us));
    SetWindow(model, state, state.window_begin_us + delta_us, length_us);
  }
  if (ImGui::IsItemHovered()) {
    const float mouse_x = ImGui::GetIO().MousePos.x;
    const int column = std::clamp(static_cast<int>(mouse_x - origin.x), 0, columns - 1);
    ImGui::BeginTooltip();
    ImGui::Text(
        "%s", kit::FormatSeconds(static_cast<TimeUs>(static_cast<double>(column) * end_us / width))
                  .c_str());
    for (int k = 0; k < kEventKindCount; ++k) {
      if (buckets.counts[column][k] == 0) continue;
      const std::string name(EventKindName(static_cast<EventKind>(k)));
      ImGui::TextColored(ImColor(EventKindColor(static_cast<EventKind>(k))), "%u %s",
                         buckets.counts[column][k], name.c_str());
    }
    ImGui::EndTooltip();
  }
}

// Nice axis step: 1, 2 or 5 times a power of ten microseconds, at least `min_us`.
TimeUs AxisStep(TimeUs min_us) {
  TimeUs step_us = 1;
  while (true) {
    for (TimeUs m : {1, 2, 5}) {
      if (step_us * m >= min_us) return step_us * m;
    }
    step_us *= 10;
  }
}

void DrawZoomed(const TimelineModel& model, ViewState& state) {
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float full_width = std::max(ImGui::GetContentRegionAvail().x, kLabelWidth + 32.0f);
  const float lanes_x = origin.x + kLabelWidth;
  const float width = full_width - kLabelWidth;
  // Lanes share the height left (readable from across a classroom), within bounds.
  const float lane_height =
      std::clamp((ImGui::GetContentRegionAvail().y - kAxisHeight) / kEventKindCount, kLaneHeightMin,
                 kLaneHeightMax);
  const float height = kAxisHeight + lane_height * kEventKindCount;
  const TimeUs begin_us = state.window_begin_us;
  const TimeUs length_us = std::max<TimeUs>(state.window_end_us - begin_us, 1);
  const auto x_of = [&](TimeUs t_us) {
    return lanes_x + static_cast<float>(static_cast<double>(t_us - begin_us) * width / length_us);
  };
  const auto t_of = [&](float x) {
    return begin_us + static_cast<TimeUs>(std::llround((x - lanes_x) / width * length_us));
  };
  const float lanes_y = origin.y + kAxisHeight;
  draw->AddRectFilled(ImVec2(lanes_x, origin.y), ImVec2(lanes_x + width, origin.y + height),
                      IM_COL32(22, 24, 28, 255));

  // Axis.
  const TimeUs step_us = AxisStep(static_cast<TimeUs>(length_us * 90.0 / width) + 1);
  for (TimeUs t_us = (begin_us + step_us - 1) / step_us * step_us; t_us <= begin_us + length_us;
       t_us += step_us) {
    const float x = x_of(t_us);
    draw->AddLine(ImVec2(x, origin.y + kAxisHeight - 5), ImVec2(x, origin.y + height),
                  IM_COL32(255, 255, 255, 24));
    char label[48];
    if (step_us >= 1000) {
      std::snprintf(label, sizeof(label), "%s", kit::FormatSeconds(t_us).c_str());
    } else {
      std::snprintf(label, sizeof(label), "%s+%" PRId64 "us", kit::FormatSeconds(t_us).c_str(),
                    t_us % 1000);
    }
    draw->AddText(ImVec2(x + 2, origin.y + 2), IM_COL32(200, 200, 200, 255), label);
  }

  // Lanes: names, then ticks; each pixel column scans at most kScanPerColumn events.
  for (int k = 0; k < kEventKindCount; ++k) {
    const float y = lanes_y + lane_height * k;
    const std::string name(EventKindName(static_cast<EventKind>(k)));
    draw->AddText(ImVec2(origin.x + 4, y), EventKindColor(static_cast<EventKind>(k)), name.c_str());
    draw->AddLine(ImVec2(lanes_x, y + lane_height), ImVec2(lanes_x + width, y + lane_height),
                  IM_COL32(255, 255, 255, 14));
  }
  const std::vector<TimelineEvent>& events = model.events();
  const int columns = static_cast<int>(width);
  for (int c = 0; c < columns; ++c) {
    const TimeUs column_begin_us = t_of(lanes_x + c);
    const TimeUs column_end_us = t_of(lanes_x + c + 1);
    bool lane_marked[kEventKindCount] = {};
    size_t i = model.FirstEventAtOrAfter(column_begin_us);
    for (size_t scanned = 0;
         i < events.size() && scanned < kScanPerColumn &&
         (events[i].t_us < column_end_us || (c + 1 == columns && events[i].t_us <= column_end_us));
         ++i, ++scanned) {
      lane_marked[static_cast<int>(events[i].kind)] = true;
    }
    for (int k = 0; k < kEventKindCount; ++k) {
      if (!lane_marked[k]) continue;
      const float x = lanes_x + c + 0.5f;
      const float y = lanes_y + lane_height * k;
      draw->AddLine(ImVec2(x, y + 2), ImVec2(x, y + lane_height - 2),
                    EventKindColor(static_cast<EventKind>(k)), 2.0f);
    }
  }
  if (state.selected_event >= 0 && static_cast<size_t>(state.selected_event) < events.size()) {
    const TimelineEvent& e = events[state.selected_event];
    const float y = lanes_y + lane_height * static_cast<int>(e.kind);
    draw->AddRect(ImVec2(x_of(e.t_us) - 3, y), ImVec2(x_of(e.t_us) + 4, y + lane_height),
                  kColorPlayhead);
  }
  const float play_x = x_of(state.playhead_us);
  if (play_x >= lanes_x && play_x <= lanes_x + width) {
    draw->AddLine(ImVec2(play_x, origin.y), ImVec2(play_x, origin.y + height), kColorPlayhead,
                  2.0f);
    draw->AddTriangleFilled(ImVec2(play_x - 6, origin.y), ImVec2(play_x + 6, origin.y),
                            ImVec2(play_x, origin.y + 8), kColorPlayhead);
  }

  // Interaction: press or drag sets the playhead; the wheel zooms around the mouse.
  ImGui::SetCursorScreenPos(ImVec2(lanes_x, origin.y));
  ImGui::InvisibleButton("##zoomed", ImVec2(width, height));
  const ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsItemActive() && (ImGui::IsItemActivated() || io.MouseDelta.x != 0)) {
    state.Seek(model, t_of(std::clamp(io.MousePos.x, lanes_x, lanes_x + width)));
  }
  if (ImGui::IsItemHovered()) {
    if (io.MouseWheel != 0) {
      Zoom(model, state, io.MouseWheel > 0 ? 0.8 : 1.25, t_of(io.MousePos.x));
    }
    // The events under the mouse: ±3 px of the lane under it (every lane over the axis).
    const int lane = static_cast<int>(std::floor((io.MousePos.y - lanes_y) / lane_height));
    const TimeUs from_us = t_of(io.MousePos.x - 3);
    const TimeUs to_us = t_of(io.MousePos.x + 3);
    ImGui::BeginTooltip();
    ImGui::Text("%s", kit::FormatSeconds(t_of(io.MousePos.x)).c_str());
    size_t shown = 0;
    size_t more = 0;
    for (size_t j = model.FirstEventAtOrAfter(from_us);
         j < events.size() && events[j].t_us <= to_us && shown + more < 100000; ++j) {
      if (lane >= 0 && static_cast<int>(events[j].kind) != lane) continue;
      if (shown == kHoverLinesMax) {
        ++more;
        continue;
      }
      ImGui::TextColored(ImColor(EventKindColor(events[j].kind)), "%s  %s",
                         kit::FormatSeconds(events[j].t_us).c_str(), events[j].summary.c_str());
      ++shown;
    }
    if (more > 0) ImGui::TextDisabled("... and %zu more (zoom in)", more);
    if (shown == 0) ImGui::TextDisabled("no event here");
    ImGui::EndTooltip();
  }
}

}  // namespace

void DrawTimelinePanel(const Runs& runs, ViewState& state, ViewCache& cache) {
  const TimelineModel& model = runs.current();
  if (state.window_end_us <= state.window_begin_us) {
    SetWindow(model, state, 0, model.end_us());
  }
  HandleKeyboard(model, state);
  DrawControls(model, state);
  DrawMinimap(model, state, cache.minimap);
  ImGui::Dummy(ImVec2(0, 4));
  DrawZoomed(model, state);
}

}  // namespace ksim::viz
