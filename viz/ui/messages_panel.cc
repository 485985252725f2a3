// The Messages panel: a sequence (Lamport) diagram of the network messages in the timeline's
// window. One vertical lifeline per node (producers, brokers, consumers, ZooKeeper), time
// downwards; an arrow from (sender, sent) to (receiver, delivered), coloured by the kind's
// family; a drop ends in a red cross at the drop time. Marked on the lifelines: high-watermark
// advances, the moments records became committed (a leader's HW passing acked offsets) and
// offset commits. Hovering an arrow or a mark names it.
//
// Bounded per frame: at most kMessagesMax messages (the earliest sent; the panel says when it
// capped). A HW mark's values come from model.StateAt at the event (before and at it),
// memoized per event, at most kHwLookupsPerFrame new ones a frame.
#include <imgui.h>

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdio>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "viz/ui/draw_kit.h"
#include "viz/ui/palette.h"
#include "viz/ui/panels.h"

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

// The lifelines, left to right: producers, brokers, other clients, ZooKeeper and the rest; only
// nodes that send or receive a message in the run. Cached per model.
struct Lifelines {
  uint64_t model_serial = 0;
  std::vector<int32_t> nodes;   // indices into model.nodes()
  std::vector<int32_t> column;  // by node index: position in `nodes`, -1 none
};

int NodeRank(const TimelineModel& model, const std::string& name) {
  if (model.ProducerIndex(name) >= 0) return 0;
  if (name.starts_with("broker-")) return 1;
  if (name == "zk" || name.starts_with("zk")) return 3;
  if (name == "admin") return 4;
  return 2;
}

const Lifelines& LifelinesOf(const TimelineModel& model) {
  static Lifelines cache;
  if (cache.model_serial == model.serial()) return cache;
  cache = Lifelines{};
  cache.model_serial = model.serial();
  std::vector<bool> used(model.nodes().size(), false);
  for (const Message& m : model.messages()) {
    if (m.from >= 0) used[m.from] = true;
    if (m.to >= 0) used[m.to] = true;
  }
  for (size_t i = 0; i < used.size(); ++i) {
    if (used[i]) cache.nodes.push_back(static_cast<int32_t>(i));
  }
  std::stable_sort(cache.nodes.begin(), cache.nodes.end(), [&](int32_t a, int32_t b) {
    return NodeRank(model, model.nodes()[a]) < NodeRank(model, model.nodes()[b]);
  });
  cache.column.assign(model.nodes().size(), -1);
  for (size_t c = 0; c < cache.nodes.size(); ++c) cache.column[cache.nodes[c]] = c;
  return cache;
}

// A HW event's replica high watermark just before and at the event.
struct HwChange {
  int64_t before = -1;
  int64_t after = -1;
  bool leader = false;
};

int64_t ReplicaHw(const Snapshot& snapshot, int32_t partition, const std::string& node,
                  bool* leader) {
  if (partition < 0 || static_cast<size_t>(partition) >= snapshot.partitions.size()) return -1;
  for (const ReplicaView& r : snapshot.partitions[partition].replica_states) {
    const BrokerView* broker = snapshot.FindBroker(r.broker);
    if (broker == nullptr || broker->node != node) continue;
    if (leader != nullptr) *leader = r.leader;
    return r.hw;
  }
  return -1;
}

// Memo of HW changes by event index, and the acked records by (partition, offset).
struct HwMemo {
  uint64_t model_serial = 0;
  std::map<uint32_t, HwChange> changes;
  // (partition index, offset, record), sorted: a HW advance's committed records are a range
  // found by two binary searches (a whole-run window holds thousands of advances).
  std::vector<std::tuple<int32_t, int64_t, int32_t>> acked_at;
};

HwMemo& MemoOf(const TimelineModel& model) {
  static HwMemo memo;
  if (memo.model_serial == model.serial()) return memo;
  memo = HwMemo{};
  memo.model_serial = model.serial();
  for (size_t i = 0; i < model.records().size(); ++i) {
    const LedgerRecord& r = model.records()[i];
    if (!r.acked() || r.offset < 0) continue;
    const int32_t p = model.PartitionIndex(r.topic, r.partition);
    if (p >= 0) memo.acked_at.emplace_back(p, r.offset, static_cast<int32_t>(i));
  }
  std::sort(memo.acked_at.begin(), memo.acked_at.end());
  return memo;
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

}  // namespace

void DrawMessagesPanel(const Runs& runs, ViewState& state) {
  const TimelineModel& model = runs.current();
  if (!model.has_messages()) {
    DrawNoMessages(model);
    return;
  }
  const TimeUs begin_us = state.window_begin_us;
  const TimeUs end_us = state.window_end_us > begin_us ? state.window_end_us : model.end_us();
  const TimeUs length_us = std::max<TimeUs>(end_us - begin_us, 1);
  static bool show_zookeeper = false;
  ImGui::Checkbox("ZooKeeper traffic", &show_zookeeper);
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

  const std::vector<const Message*> messages =
      model.MessagesBetween(begin_us, end_us, kMessagesMax);
  if (messages.size() >= kMessagesMax) {
    ImGui::TextColored(ImColor(kColorDuplicated),
                       "showing the first %zu messages of %s .. %s: zoom the timeline in to "
                       "see every one",
                       kMessagesMax, kit::FormatSeconds(begin_us).c_str(),
                       kit::FormatSeconds(end_us).c_str());
  } else {
    ImGui::TextDisabled("%zu messages in %s .. %s", messages.size(),
                        kit::FormatSeconds(begin_us).c_str(), kit::FormatSeconds(end_us).c_str());
  }

  const Lifelines& lifelines = LifelinesOf(model);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float width = std::max(avail.x, 200.0f);
  const float height = std::max(avail.y, 120.0f);
  const float lines_x = origin.x + kTimeGutter;
  const float lines_width = width - kTimeGutter;
  const size_t columns = std::max<size_t>(lifelines.nodes.size(), 1);
  const float spacing = lines_width / static_cast<float>(columns);
  const float top = origin.y + kHeaderHeight;
  const float bottom = origin.y + height;
  const auto x_of_node = [&](int32_t node) {
    const int32_t c = node >= 0 ? lifelines.column[node] : -1;
    return c < 0 ? -1.0f : lines_x + spacing * (static_cast<float>(c) + 0.5f);
  };
  const auto y_of = [&](TimeUs t_us) {
    const TimeUs clamped = std::clamp<TimeUs>(t_us, begin_us, end_us);
    return top +
           static_cast<float>(static_cast<double>(clamped - begin_us) * (bottom - top) / length_us);
  };
  draw->AddRectFilled(ImVec2(lines_x, top), ImVec2(origin.x + width, bottom),
                      IM_COL32(22, 24, 28, 255));
  draw->PushClipRect(origin, ImVec2(origin.x + width, bottom), true);

  // Time labels and lifelines.
  for (int i = 0; i <= 8; ++i) {
    const TimeUs t_us = begin_us + length_us * i / 8;
    const float y = y_of(t_us);
    draw->AddLine(ImVec2(lines_x, y), ImVec2(origin.x + width, y), IM_COL32(255, 255, 255, 16));
    draw->AddText(ImVec2(origin.x + 2, y - (i == 8 ? 14 : 0)), IM_COL32(180, 180, 180, 255),
                  kit::FormatSeconds(t_us).c_str());
  }
  for (int32_t node : lifelines.nodes) {
    const float x = x_of_node(node);
    const std::string& name = model.nodes()[node];
    const ImVec2 text = ImGui::CalcTextSize(name.c_str());
    draw->AddText(ImVec2(x - text.x / 2, origin.y + 2), IM_COL32(230, 230, 230, 255), name.c_str());
    draw->AddLine(ImVec2(x, top), ImVec2(x, bottom), IM_COL32(160, 160, 170, 110), 1.5f);
  }

  // Arrows; the one nearest the mouse is remembered for the tooltip.
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const bool hovering = ImGui::IsWindowHovered() && mouse.x >= lines_x && mouse.y >= top &&
                        mouse.y <= bottom && mouse.x <= origin.x + width;
  const Message* hovered = nullptr;
  float hovered_distance = kHoverDistance;
  for (const Message* m : messages) {
    const Family family = FamilyOf(m->kind);
    if (family == Family::kZooKeeper && !show_zookeeper) continue;
    const float x0 = x_of_node(m->from);
    const float x1 = x_of_node(m->to);
    if (x0 < 0 || x1 < 0) continue;
    const bool response = m->kind.ends_with("Response");
    ImU32 color = kFamilyColors[static_cast<int>(family)];
    if (response) color = (color & ~IM_COL32_A_MASK) | IM_COL32(0, 0, 0, 150);
    const ImVec2 a(x0, y_of(m->sent_us));
    ImVec2 b;
    if (m->dropped_us >= 0) {
      // A third of the way: mid-way between two lifelines is often a third one.
      b = ImVec2(x0 + (x1 - x0) * 0.35f, y_of(m->dropped_us));
      draw->AddLine(a, b, color, 1.2f);
      draw->AddLine(ImVec2(b.x - 4, b.y - 4), ImVec2(b.x + 4, b.y + 4), kColorLost, 2.0f);
      draw->AddLine(ImVec2(b.x - 4, b.y + 4), ImVec2(b.x + 4, b.y - 4), kColorLost, 2.0f);
    } else {
      const bool delivered = m->delivered_us >= 0 && m->delivered_us <= end_us;
      b = ImVec2(delivered ? x1 : x0 + (x1 - x0) * 0.9f,
                 y_of(m->delivered_us >= 0 ? m->delivered_us : end_us));
      draw->AddLine(a, b, color, 1.2f);
      if (delivered) {
        const float dir = x1 >= x0 ? -1.0f : 1.0f;
        draw->AddTriangleFilled(b, ImVec2(b.x + dir * 7, b.y - 3), ImVec2(b.x + dir * 7, b.y + 3),
                                color);
      }
    }
    if (hovering) {
      const float d = DistanceToSegment(mouse, a, b);
      if (d < hovered_distance) {
        hovered_distance = d;
        hovered = m;
      }
    }
  }

  // Marks: HW advances (and records committed by them), offset commits; at most kMarksMax in
  // the window (a whole 100k-record run has hundreds of thousands: zoom in to see them).
  HwMemo& memo = MemoOf(model);
  size_t lookups = 0;
  size_t marks = 0;
  std::string hovered_mark;
  const std::vector<TimelineEvent>& events = model.events();
  for (size_t i = model.FirstEventAtOrAfter(begin_us);
       i < events.size() && events[i].t_us <= end_us && marks < kMarksMax; ++i) {
    const TimelineEvent& e = events[i];
    if (e.kind != EventKind::kHighWatermark && e.kind != EventKind::kCommit) continue;
    const float x = x_of_node(e.node);
    if (x < 0) continue;
    ++marks;
    const float y = y_of(e.t_us);
    // The tooltip's text is built only for the mark under the mouse.
    const bool under_mouse = hovering && std::abs(mouse.x - x) <= 6 && std::abs(mouse.y - y) <= 6;
    std::string label = under_mouse ? e.summary : std::string();
    if (e.kind == EventKind::kCommit) {
      draw->AddRectFilled(ImVec2(x - 4, y - 4), ImVec2(x + 4, y + 4),
                          EventKindColor(EventKind::kCommit));
    } else {
      auto it = memo.changes.find(static_cast<uint32_t>(i));
      if (it == memo.changes.end() && lookups < kHwLookupsPerFrame) {
        ++lookups;
        HwChange change;
        const std::string& node = model.nodes()[e.node];
        change.before = ReplicaHw(model.StateAt(e.t_us - 1), e.partition, node, nullptr);
        change.after = ReplicaHw(model.StateAt(e.t_us), e.partition, node, &change.leader);
        it = memo.changes.emplace(static_cast<uint32_t>(i), change).first;
      }
      draw->AddNgonFilled(ImVec2(x, y), 4.5f, kColorHighWatermark, 4);
      if (it != memo.changes.end() && it->second.leader && it->second.after > it->second.before) {
        // The records whose acked offsets this leader's HW just passed became committed.
        const auto& acked = memo.acked_at;
        const auto first = std::lower_bound(
            acked.begin(), acked.end(),
            std::make_tuple(e.partition, std::max<int64_t>(it->second.before, 0), INT32_MIN));
        const auto last = std::lower_bound(
            first, acked.end(), std::make_tuple(e.partition, it->second.after, INT32_MIN));
        std::span<const std::tuple<int32_t, int64_t, int32_t>> committed(first, last);
        if (!committed.empty()) {
          draw->AddCircle(ImVec2(x, y), 8.0f, kColorOk, 12, 2.0f);
          if (under_mouse) {
            label += "\ncommitted: " + model.records()[std::get<2>(committed.front())].id;
            if (committed.size() > 1) {
              label += " .. " + model.records()[std::get<2>(committed.back())].id + " (" +
                       std::to_string(committed.size()) + " records)";
            }
          }
        }
      }
    }
    if (under_mouse) hovered_mark = kit::FormatSeconds(e.t_us) + "  " + label;
  }

  // The playhead across the diagram.
  if (state.playhead_us >= begin_us && state.playhead_us <= end_us) {
    const float y = y_of(state.playhead_us);
    draw->AddLine(ImVec2(lines_x, y), ImVec2(origin.x + width, y), kColorPlayhead, 1.5f);
  }
  draw->PopClipRect();
  ImGui::Dummy(ImVec2(width, height));

  if (!hovered_mark.empty()) {
    ImGui::SetTooltip("%s", hovered_mark.c_str());
  } else if (hovered != nullptr) {
    ImGui::BeginTooltip();
    ImGui::TextColored(ImColor(kFamilyColors[static_cast<int>(FamilyOf(hovered->kind))]),
                       "%s  #%" PRId64, hovered->kind.c_str(), hovered->id);
    ImGui::Text("%s -> %s, %d bytes", model.nodes()[hovered->from].c_str(),
                model.nodes()[hovered->to].c_str(), hovered->size_bytes);
    ImGui::Text("sent %s", kit::FormatSeconds(hovered->sent_us).c_str());
    if (hovered->delivered_us >= 0) {
      ImGui::Text("delivered %s (%" PRId64 " us later)",
                  kit::FormatSeconds(hovered->delivered_us).c_str(),
                  hovered->delivered_us - hovered->sent_us);
    } else if (hovered->dropped_us >= 0) {
      ImGui::TextColored(ImColor(kColorLost), "dropped %s: %s",
                         kit::FormatSeconds(hovered->dropped_us).c_str(),
                         hovered->drop_reason.c_str());
    } else {
      ImGui::TextDisabled("still in flight at the end of the run");
    }
    ImGui::EndTooltip();
  }
}

}  // namespace ksim::viz
