// The Messages panel: a sequence (Lamport) diagram of the network messages in the timeline's
// window. One vertical lifeline per node (producers, brokers, consumers, ZooKeeper), time
// downwards; an arrow from (sender, sent) to (receiver, delivered), coloured by the kind's
// family; a drop ends in a red cross at the drop time. Marked on the lifelines: high-watermark
// advances, the moments records became committed (a leader's HW passing acked offsets) and
// offset commits. Hovering an arrow or a mark names it.
//
// Bounded per frame: at most kMessagesMax messages (the earliest sent; the panel says when it
// capped). A HW mark's change and the records it committed are the model's answers
// (HighWatermarkChangeAt, RecordsCommittedBy); the view cache keeps each change, and at most
// kHwLookupsPerFrame new ones are looked up a frame.
#include <imgui.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "viz/ui/draw_kit.h"
#include "viz/ui/palette.h"
#include "viz/ui/panels.h"
#include "viz/ui/view_cache.h"

namespace ksim::viz {
namespace {

constexpr size_t kMessagesMax = 2000;
constexpr size_t kHwLookupsPerFrame = 200;
constexpr size_t kMarksMax = 4000;
constexpr float kHeaderHeight = 22.0f;
constexpr float kTimeGutter = 70.0f;
constexpr float kHoverDistance = 4.0f;

enum class Family { kProduce, kFetch, kMetadata, kGroup, kController, kZooKeeper };
constexpr const char* kFamilyNames[] = {"produce", "fetch",      "metadata",
                                        "group",   "controller", "zookeeper"};
constexpr ImU32 kFamilyColors[] = {
    IM_COL32(90, 160, 255, 255),  IM_COL32(110, 200, 120, 255), IM_COL32(210, 200, 110, 255),
    IM_COL32(190, 120, 230, 255), IM_COL32(240, 170, 40, 255),  IM_COL32(130, 130, 140, 255),
};

Family FamilyOf(std::string_view kind) {
  if (kind.starts_with("Zk")) return Family::kZooKeeper;
  if (kind.starts_with("Produce")) return Family::kProduce;
  if (kind.starts_with("Fetch") || kind.starts_with("ListOffsets")) return Family::kFetch;
  if (kind.starts_with("LeaderAndIsr") || kind.starts_with("UpdateMetadata") ||
      kind.starts_with("StopReplica") || kind.starts_with("ControlledShutdown")) {
    return Family::kController;
  }
  if (kind.starts_with("Metadata")) return Family::kMetadata;
  return Family::kGroup;
}

float DistanceToSegment(ImVec2 p, ImVec2 a, ImVec2 b) {
  const float dx = b.x - a.x, dy = b.y - a.y;
  const float length2 = dx * dx + dy * dy;
  float t = length2 > 0 ? ((p.x - a.x) * dx + (p.y - a.y) * dy) / length2 : 0;
  t = std::clamp(t, 0.0f, 1.0f);
  const float cx = a.x + t * dx - p.x, cy = a.y + t * dy - p.y;
  return std::sqrt(cx * cx + cy * cy);
}

void DrawNoMessages(const TimelineModel& model) {
  ImGui::TextWrapped("This run's trace has no network messages: it was recorded at level \"%s\".",
                     std::string(sim::TraceLevelName(model.header().level)).c_str());
  ImGui::TextWrapped(
      "To see every request and response between the nodes, record the trace with "
      "`ksim run SCENARIO.json --trace run.jsonl --trace-level messages`, or open the scenario "
      "itself with `ksim viz SCENARIO.json`, which runs it at that level.");
}

// The diagram's frame: the window's times, the lifelines' columns and the screen area.
struct Diagram {
  TimeUs begin_us = 0;
  TimeUs end_us = 0;
  TimeUs length_us = 1;
  std::vector<int32_t> column;  // by node index: position among model.message_nodes(), -1 none
  ImVec2 origin;
  float width = 0;
  float lines_x = 0;  // where the lifelines' area starts (after the time gutter)
  float spacing = 0;  // between lifelines
  float top = 0;
  float bottom = 0;

  float XOfNode(int32_t node) const {
    const int32_t c = node >= 0 ? column[static_cast<size_t>(node)] : -1;
    return c < 0 ? -1.0f : lines_x + spacing * (static_cast<float>(c) + 0.5f);
  }
  float YOf(TimeUs t_us) const {
    const TimeUs clamped = std::clamp<TimeUs>(t_us, begin_us, end_us);
    return top +
           static_cast<float>(static_cast<double>(clamped - begin_us) * (bottom - top) / length_us);
  }
  float right() const { return origin.x + width; }
};

Diagram LayOut(const TimelineModel& model, TimeUs begin_us, TimeUs end_us) {
  Diagram d;
  d.begin_us = begin_us;
  d.end_us = end_us;
  d.length_us = std::max<TimeUs>(end_us - begin_us, 1);
  const std::vector<int32_t>& lifelines = model.message_nodes();
  d.column.assign(model.nodes().size(), -1);
  for (size_t c = 0; c < lifelines.size(); ++c) {
    d.column[static_cast<size_t>(lifelines[c])] = static_cast<int32_t>(c);
  }
  d.origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  d.width = std::max(avail.x, 200.0f);
  d.lines_x = d.origin.x + kTimeGutter;
  const size_t columns = std::max<size_t>(lifelines.size(), 1);
  d.spacing = (d.width - kTimeGutter) / static_cast<float>(columns);
  d.top = d.origin.y + kHeaderHeight;
  d.bottom = d.origin.y + std::max(avail.y, 120.0f);
  return d;
}

// The ZooKeeper toggle, the colours' legend, and how many messages the window holds.
void DrawHeader(ViewState& state, TimeUs begin_us, TimeUs end_us, size_t messages) {
  ImGui::Checkbox("ZooKeeper traffic", &state.show_zookeeper);
  for (int f = 0; f < 6; ++f) {
    ImGui::SameLine();
    ImGui::TextColored(ImColor(kFamilyColors[f]), "%s", kFamilyNames[f]);
  }
  ImGui::SameLine();
  ImGui::TextColored(ImColor(kColorHighWatermark), "| hw");
  ImGui::SameLine();
  ImGui::TextColored(ImColor(kColorOk), "committed");
  ImGui::SameLine();
  ImGui::TextColored(ImColor(EventKindColor(EventKind::kCommit)), "offset commit");
  const std::string begin = kit::FormatSeconds(begin_us);
  const std::string end = kit::FormatSeconds(end_us);
  if (messages >= kMessagesMax) {
    ImGui::TextColored(ImColor(kColorDuplicated),
                       "showing the first %zu messages of %s .. %s: zoom the timeline in to "
                       "see every one",
                       kMessagesMax, begin.c_str(), end.c_str());
  } else {
    ImGui::TextDisabled("%zu messages in %s .. %s", messages, begin.c_str(), end.c_str());
  }
}

// Time labels across the diagram and a named lifeline per node.
void DrawLifelines(ImDrawList* draw, const TimelineModel& model, const Diagram& d) {
  draw->AddRectFilled(ImVec2(d.lines_x, d.top), ImVec2(d.right(), d.bottom),
                      IM_COL32(22, 24, 28, 255));
  for (int i = 0; i <= 8; ++i) {
    const TimeUs t_us = d.begin_us + d.length_us * i / 8;
    const float y = d.YOf(t_us);
    draw->AddLine(ImVec2(d.lines_x, y), ImVec2(d.right(), y), IM_COL32(255, 255, 255, 16));
    draw->AddText(ImVec2(d.origin.x + 2, y - (i == 8 ? 14 : 0)), IM_COL32(180, 180, 180, 255),
                  kit::FormatSeconds(t_us).c_str());
  }
  for (int32_t node : model.message_nodes()) {
    const float x = d.XOfNode(node);
    const std::string& name = model.nodes()[static_cast<size_t>(node)];
    const ImVec2 text = ImGui::CalcTextSize(name.c_str());
    draw->AddText(ImVec2(x - text.x / 2, d.origin.y + 2), IM_COL32(230, 230, 230, 255),
                  name.c_str());
    draw->AddLine(ImVec2(x, d.top), ImVec2(x, d.bottom), IM_COL32(160, 160, 170, 110), 1.5f);
  }
}

// Where the mouse is, when it is over the lifelines' area of this window.
struct Pointer {
  bool hovering = false;
  ImVec2 at;
};

// One arrow per message (a drop ends in a cross); returns the one nearest the pointer, if any
// is within kHoverDistance.
const Message* DrawArrows(ImDrawList* draw, const Diagram& d,
                          const std::vector<const Message*>& messages, bool show_zookeeper,
                          const Pointer& pointer) {
  const Message* hovered = nullptr;
  float hovered_distance = kHoverDistance;
  for (const Message* m : messages) {
    const Family family = FamilyOf(m->kind);
    if (family == Family::kZooKeeper && !show_zookeeper) continue;
    const float x0 = d.XOfNode(m->from);
    const float x1 = d.XOfNode(m->to);
    if (x0 < 0 || x1 < 0) continue;
    ImU32 color = kFamilyColors[static_cast<int>(family)];
    if (m->kind.ends_with("Response")) color = (color & ~IM_COL32_A_MASK) | IM_COL32(0, 0, 0, 150);
    const ImVec2 a(x0, d.YOf(m->sent_us));
    ImVec2 b;
    if (m->dropped_us >= 0) {
      // A third of the way: mid-way between two lifelines is often a third one.
      b = ImVec2(x0 + (x1 - x0) * 0.35f, d.YOf(m->dropped_us));
      draw->AddLine(a, b, color, 1.2f);
      draw->AddLine(ImVec2(b.x - 4, b.y - 4), ImVec2(b.x + 4, b.y + 4), kColorLost, 2.0f);
      draw->AddLine(ImVec2(b.x - 4, b.y + 4), ImVec2(b.x + 4, b.y - 4), kColorLost, 2.0f);
    } else {
      const bool delivered = m->delivered_us >= 0 && m->delivered_us <= d.end_us;
      b = ImVec2(delivered ? x1 : x0 + (x1 - x0) * 0.9f,
                 d.YOf(m->delivered_us >= 0 ? m->delivered_us : d.end_us));
      draw->AddLine(a, b, color, 1.2f);
      if (delivered) {
        const float dir = x1 >= x0 ? -1.0f : 1.0f;
        draw->AddTriangleFilled(b, ImVec2(b.x + dir * 7, b.y - 3), ImVec2(b.x + dir * 7, b.y + 3),
                                color);
      }
    }
    if (!pointer.hovering) continue;
    const float distance = DistanceToSegment(pointer.at, a, b);
    if (distance < hovered_distance) {
      hovered_distance = distance;
      hovered = m;
    }
  }
  return hovered;
}

// The HW change of events()[event], from the cache, or looked up when the frame's budget of
// lookups allows (nullptr otherwise: drawn without its committed records this frame).
const HighWatermarkChange* CachedHighWatermarkChange(const TimelineModel& model,
                                                     MessagesCache& cache, size_t event,
                                                     size_t& lookups) {
  const uint32_t key = static_cast<uint32_t>(event);
  auto it = cache.hw_changes.find(key);
  if (it == cache.hw_changes.end()) {
    if (lookups >= kHwLookupsPerFrame) return nullptr;
    ++lookups;
    it = cache.hw_changes.emplace(key, model.HighWatermarkChangeAt(event)).first;
  }
  return &it->second;
}

// "\ncommitted: p1-4 .. p1-9 (6 records)"
std::string CommittedText(const TimelineModel& model, std::span<const AckedOffset> committed) {
  std::string text = "\ncommitted: " + model.records()[committed.front().record].id;
  if (committed.size() > 1) {
    text += " .. " + model.records()[committed.back().record].id + " (" +
            std::to_string(committed.size()) + " records)";
  }
  return text;
}

// The marks on the lifelines: HW advances (ringed when they made records committed) and offset
// commits, at most kMarksMax in the window (a whole 100k-record run has hundreds of thousands:
// zoom in to see them). Returns the text of the mark under the pointer ("" none).
std::string DrawMarks(ImDrawList* draw, const TimelineModel& model, const Diagram& d,
                      MessagesCache& cache, const Pointer& pointer) {
  if (cache.model_serial != model.serial()) cache = MessagesCache{.model_serial = model.serial()};
  size_t lookups = 0;
  size_t marks = 0;
  std::string hovered_mark;
  const std::vector<TimelineEvent>& events = model.events();
  for (size_t i = model.FirstEventAtOrAfter(d.begin_us);
       i < events.size() && events[i].t_us <= d.end_us && marks < kMarksMax; ++i) {
    const TimelineEvent& e = events[i];
    if (e.kind != EventKind::kHighWatermark && e.kind != EventKind::kCommit) continue;
    const float x = d.XOfNode(e.node);
    if (x < 0) continue;
    ++marks;
    const float y = d.YOf(e.t_us);
    // The tooltip's text is built only for the mark under the pointer.
    const bool under_pointer =
        pointer.hovering && std::abs(pointer.at.x - x) <= 6 && std::abs(pointer.at.y - y) <= 6;
    std::string label = under_pointer ? e.summary : std::string();
    if (e.kind == EventKind::kCommit) {
      draw->AddRectFilled(ImVec2(x - 4, y - 4), ImVec2(x + 4, y + 4),
                          EventKindColor(EventKind::kCommit));
    } else {
      const HighWatermarkChange* change = CachedHighWatermarkChange(model, cache, i, lookups);
      draw->AddNgonFilled(ImVec2(x, y), 4.5f, kColorHighWatermark, 4);
      const std::span<const AckedOffset> committed =
          change != nullptr ? model.RecordsCommittedBy(e.partition, *change)
                            : std::span<const AckedOffset>();
      if (!committed.empty()) {
        draw->AddCircle(ImVec2(x, y), 8.0f, kColorOk, 12, 2.0f);
        if (under_pointer) label += CommittedText(model, committed);
      }
    }
    if (under_pointer) hovered_mark = kit::FormatSeconds(e.t_us) + "  " + label;
  }
  return hovered_mark;
}

void MessageTooltip(const TimelineModel& model, const Message& message) {
  ImGui::BeginTooltip();
  ImGui::TextColored(ImColor(kFamilyColors[static_cast<int>(FamilyOf(message.kind))]),
                     "%s  #%" PRId64, message.kind.c_str(), message.id);
  ImGui::Text("%s -> %s, %d bytes", model.nodes()[message.from].c_str(),
              model.nodes()[message.to].c_str(), message.size_bytes);
  ImGui::Text("sent %s", kit::FormatSeconds(message.sent_us).c_str());
  if (message.delivered_us >= 0) {
    ImGui::Text("delivered %s (%" PRId64 " us later)",
                kit::FormatSeconds(message.delivered_us).c_str(),
                message.delivered_us - message.sent_us);
  } else if (message.dropped_us >= 0) {
    ImGui::TextColored(ImColor(kColorLost), "dropped %s: %s",
                       kit::FormatSeconds(message.dropped_us).c_str(), message.drop_reason.c_str());
  } else {
    ImGui::TextDisabled("still in flight at the end of the run");
  }
  ImGui::EndTooltip();
}

}  // namespace

void DrawMessagesPanel(const Runs& runs, ViewState& state, ViewCache& cache) {
  const TimelineModel& model = runs.current();
  if (!model.has_messages()) {
    DrawNoMessages(model);
    return;
  }
  const TimeUs begin_us = state.window_begin_us;
  const TimeUs end_us = state.window_end_us > begin_us ? state.window_end_us : model.end_us();
  const std::vector<const Message*> messages =
      model.MessagesBetween(begin_us, end_us, kMessagesMax);
  DrawHeader(state, begin_us, end_us, messages.size());

  const Diagram d = LayOut(model, begin_us, end_us);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->PushClipRect(d.origin, ImVec2(d.right(), d.bottom), true);
  DrawLifelines(draw, model, d);
  Pointer pointer;
  pointer.at = ImGui::GetIO().MousePos;
  pointer.hovering = ImGui::IsWindowHovered() && pointer.at.x >= d.lines_x &&
                     pointer.at.y >= d.top && pointer.at.y <= d.bottom && pointer.at.x <= d.right();
  const Message* hovered = DrawArrows(draw, d, messages, state.show_zookeeper, pointer);
  const std::string hovered_mark = DrawMarks(draw, model, d, cache.messages, pointer);
  // The playhead across the diagram.
  if (state.playhead_us >= begin_us && state.playhead_us <= end_us) {
    const float y = d.YOf(state.playhead_us);
    draw->AddLine(ImVec2(d.lines_x, y), ImVec2(d.right(), y), kColorPlayhead, 1.5f);
  }
  draw->PopClipRect();
  ImGui::Dummy(ImVec2(d.width, d.bottom - d.origin.y));

  if (!hovered_mark.empty()) {
    ImGui::SetTooltip("%s", hovered_mark.c_str());
  } else if (hovered != nullptr) {
    MessageTooltip(model, *hovered);
  }
}

}  // namespace ksim::viz
