// The Compare panel: every run (variant) in a column at the same playhead: its name and verdict
// (a click on the name makes it the active run: state.active_run), a fate bar
// (ok / lost / duplicated / unacked records as coloured segments), the selected partition's
// leader log at the playhead as a strip of cells (copies of a record written twice underlined
// orange), and the metrics and expectations, where cells that differ between runs are
// highlighted.
#include <imgui.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "viz/ui/palette.h"
#include "viz/ui/panels.h"

namespace ksim::viz {
namespace {

constexpr float kFateBarHeight = 16.0f;
constexpr float kCellWidth = 6.0f;
constexpr float kStripHeight = 18.0f;
constexpr ImU32 kDifferentBg = IM_COL32(240, 140, 20, 60);
// Unacknowledged records missing from the final log: lost too, but never promised (muted red).
constexpr ImU32 kColorNeverWritten = IM_COL32(150, 60, 60, 255);

std::string RunName(const TimelineModel& model) {
  const std::string& variant = model.header().variant;
  return variant.empty() ? model.header().scenario : variant;
}

// Each record counted once (the model's ledger_counts().by_fate): lost (acked, not in the final
// log), else duplicated, else unacked and not in the final log (the checker's lost_unacked),
// else ok: in the final log once, acked or not (acks=0 never acknowledges, yet most of its
// records arrive).
void DrawFateBar(const TimelineModel& model) {
  const auto& by_fate = model.ledger_counts().by_fate;
  const size_t ok = by_fate[static_cast<size_t>(Fate::kOk)];
  const size_t lost = by_fate[static_cast<size_t>(Fate::kLost)];
  const size_t duplicated = by_fate[static_cast<size_t>(Fate::kDuplicated)];
  const size_t unacked = by_fate[static_cast<size_t>(Fate::kNeverWritten)];
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = std::max(ImGui::GetContentRegionAvail().x, 40.0f);
  const size_t total = ok + lost + duplicated + unacked;
  draw->AddRectFilled(origin, ImVec2(origin.x + width, origin.y + kFateBarHeight),
                      IM_COL32(40, 40, 46, 255));
  float x = origin.x;
  const std::pair<size_t, ImU32> segments[] = {{ok, kColorOk},
                                               {duplicated, kColorDuplicated},
                                               {lost, kColorLost},
                                               {unacked, kColorNeverWritten}};
  for (const auto& [count, color] : segments) {
    if (total == 0 || count == 0) continue;
    const float w = std::max(1.0f, width * static_cast<float>(count) / static_cast<float>(total));
    draw->AddRectFilled(ImVec2(x, origin.y),
                        ImVec2(std::min(x + w, origin.x + width), origin.y + kFateBarHeight),
                        color);
    x += w;
  }
  ImGui::Dummy(ImVec2(width, kFateBarHeight));
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "%zu ok (in the final log once), %zu duplicated, %zu lost (acked, not in the final "
        "log), %zu unacked and not in the final log",
        ok, duplicated, lost, unacked);
  }
  ImGui::TextColored(ImColor(kColorOk), "%zu ok", ok);
  ImGui::SameLine();
  ImGui::TextColored(ImColor(kColorDuplicated), "%zu dup", duplicated);
  ImGui::SameLine();
  ImGui::TextColored(ImColor(kColorLost), "%zu lost", lost);
  ImGui::SameLine();
  ImGui::TextColored(ImColor(kColorNeverWritten), "%zu unacked, not written", unacked);
}

// The leader's log of `topic`-`partition` in `model` at t: its last cells that fit, the HW.
void DrawLeaderStrip(const TimelineModel& model, const PartitionView& wanted, TimeUs t_us) {
  const int32_t p = model.PartitionIndex(wanted.topic, wanted.partition);
  if (p < 0) {
    ImGui::TextDisabled("no %s-%d in this run", wanted.topic.c_str(), wanted.partition);
    return;
  }
  const Snapshot snapshot = model.StateAt(t_us);
  const PartitionView& view = snapshot.partitions[p];
  if (view.leader < 0) {
    ImGui::TextColored(ImColor(kColorLost), "%s-%d: no leader (offline)", view.topic.c_str(),
                       view.partition);
    ImGui::Dummy(ImVec2(0, kStripHeight));
    return;
  }
  int64_t hw = -1;
  int64_t leo = -1;
  for (const ReplicaView& r : view.replica_states) {
    if (r.broker == view.leader) {
      hw = r.hw;
      leo = r.leo;
    }
  }
  ImGui::Text("%s-%d leader broker-%d (epoch %d), HW %" PRId64 ", LEO %" PRId64, view.topic.c_str(),
              view.partition, view.leader, view.leader_epoch, hw, leo);
  const std::vector<Cell> cells = model.LogAt(p, view.leader, t_us);
  // Copies per record in this log (saturating at 2): one pass, a byte per record of the run.
  std::vector<uint8_t> copies(model.records().size(), 0);
  for (const Cell& c : cells) {
    if (c.record >= 0 && copies[c.record] < 2) ++copies[c.record];
  }
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = std::max(ImGui::GetContentRegionAvail().x, 40.0f);
  const size_t fit = static_cast<size_t>(width / kCellWidth);
  const size_t first = cells.size() > fit ? cells.size() - fit : 0;
  for (size_t i = first; i < cells.size(); ++i) {
    const Cell& c = cells[i];
    const float x = origin.x + kCellWidth * static_cast<float>(i - first);
    draw->AddRectFilled(ImVec2(x, origin.y), ImVec2(x + kCellWidth - 1, origin.y + kStripHeight),
                        RecordColor(model, c.record));
    if (c.record >= 0 && copies[c.record] > 1) {
      draw->AddRectFilled(ImVec2(x, origin.y + kStripHeight - 4),
                          ImVec2(x + kCellWidth - 1, origin.y + kStripHeight), kColorDuplicated);
    }
    if (c.offset + 1 == hw) {
      draw->AddLine(ImVec2(x + kCellWidth, origin.y - 2),
                    ImVec2(x + kCellWidth, origin.y + kStripHeight + 2), kColorHighWatermark, 2.0f);
    }
  }
  ImGui::Dummy(ImVec2(width, kStripHeight));
  if (first > 0) ImGui::TextDisabled("offsets %" PRId64 "..", cells[first].offset);
}

}  // namespace

void DrawComparePanel(const Runs& runs, ViewState& state) {
  const TimelineModel& current = runs.current();
  // ImGui tables hold at most 64 columns: the first 63 runs (scenarios have a handful).
  const size_t n = std::min<size_t>(runs.models.size(), 63);
  if (current.partitions().empty()) {
    ImGui::TextDisabled("no partitions in this run");
  }
  const int32_t selected = std::clamp<int32_t>(
      state.selected_partition, 0, std::max<int32_t>(current.partitions().size(), 1) - 1);
  const PartitionView* partition =
      current.partitions().empty() ? nullptr : &current.partitions()[selected];

  constexpr ImGuiTableFlags kFlags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingStretchSame;
  if (!ImGui::BeginTable("##compare", static_cast<int>(n) + 1, kFlags)) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, 130.0f);
  for (size_t i = 0; i < n; ++i) {
    ImGui::TableSetupColumn(RunName(*runs.models[i]).c_str());
  }
  // Header: run names, the active one selected; a click requests it.
  ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
  ImGui::TableSetColumnIndex(0);
  ImGui::TextUnformatted("run");
  for (size_t i = 0; i < n; ++i) {
    ImGui::TableSetColumnIndex(static_cast<int>(i) + 1);
    ImGui::PushID(static_cast<int>(i));
    const std::string name = RunName(*runs.models[i]);
    if (ImGui::Selectable(name.c_str(), i == runs.active)) {
      state.active_run = i;
    }
    ImGui::PopID();
  }

  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  ImGui::TextUnformatted("release");
  for (size_t i = 0; i < n; ++i) {
    ImGui::TableSetColumnIndex(static_cast<int>(i) + 1);
    ImGui::TextUnformatted(runs.models[i]->KafkaVersionLabel().c_str());
  }

  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  ImGui::TextUnformatted("verdict");
  for (size_t i = 0; i < n; ++i) {
    ImGui::TableSetColumnIndex(static_cast<int>(i) + 1);
    const bool ok = runs.models[i]->ok();
    ImGui::TextColored(ImColor(ok ? kColorOk : kColorLost), "%s",
                       ok ? "expectations met" : "expectations FAILED");
  }

  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  ImGui::TextUnformatted("records");
  for (size_t i = 0; i < n; ++i) {
    ImGui::TableSetColumnIndex(static_cast<int>(i) + 1);
    ImGui::PushID(static_cast<int>(i));
    DrawFateBar(*runs.models[i]);
    ImGui::PopID();
  }

  if (partition != nullptr) {
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    ImGui::TextWrapped("leader log at the playhead");
    for (size_t i = 0; i < n; ++i) {
      ImGui::TableSetColumnIndex(static_cast<int>(i) + 1);
      DrawLeaderStrip(*runs.models[i], *partition, state.playhead_us);
    }
  }

  // Metrics: every name any run has, in first-seen order; differing rows highlighted.
  std::vector<std::string> names;
  for (const TimelineModel* model : runs.models) {
    for (const auto& [name, value] : model->metrics()) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  for (const std::string& name : names) {
    std::vector<const int64_t*> values(n, nullptr);
    for (size_t i = 0; i < n; ++i) {
      for (const auto& metric : runs.models[i]->metrics()) {
        if (metric.first == name) values[i] = &metric.second;
      }
    }
    bool differs = false;
    for (size_t i = 1; i < n; ++i) {
      const bool same = (values[i] == nullptr) == (values[0] == nullptr) &&
                        (values[i] == nullptr || *values[i] == *values[0]);
      differs = differs || !same;
    }
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    ImGui::TextUnformatted(name.c_str());
    for (size_t i = 0; i < n; ++i) {
      ImGui::TableSetColumnIndex(static_cast<int>(i) + 1);
      if (differs) ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, kDifferentBg);
      if (values[i] == nullptr) {
        ImGui::TextDisabled("-");
      } else {
        ImGui::Text("%" PRId64, *values[i]);
      }
    }
  }

  // Expectations: each run's own, failed ones red.
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  ImGui::TextUnformatted("expectations");
  for (size_t i = 0; i < n; ++i) {
    ImGui::TableSetColumnIndex(static_cast<int>(i) + 1);
    for (const Expectation& e : runs.models[i]->expectations()) {
      ImGui::TextColored(ImColor(e.ok ? kColorOk : kColorLost), "%s %s: expected %s, got %" PRId64,
                         e.ok ? "ok" : "FAILED", e.metric.c_str(), e.expected.c_str(), e.actual);
    }
    if (runs.models[i]->expectations().empty()) ImGui::TextDisabled("none");
  }
  ImGui::EndTable();
}

}  // namespace ksim::viz
