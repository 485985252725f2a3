// The Partitions panel (viz/ui/panels.h): every partition with a header line (leader, epoch,
// ISR, elections) and one row per replica: leader star, broker, ISR membership, epoch, then the
// replica's log as a strip of cells coloured by record (RecordColor), uncommitted cells (at or
// past the replica's HW) faded, cells of lost / duplicated records flagged on top, the
// selected record outlined, and the HW and LEO marked. Cells a truncation removed in the last
// kLeavingUs before the playhead are drawn leaving: sliding down, fading, crossed out.
// The selected partition is drawn tall with an offset ruler; the others compact.
#include <imgui.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "core/base/trace_names.h"
#include "viz/ui/draw_kit.h"
#include "viz/ui/palette.h"
#include "viz/ui/panels.h"
#include "viz/ui/partitions_layout.h"
#include "viz/ui/view_cache.h"

namespace ksim::viz {
namespace {

constexpr TimeUs kLeavingUs = 2'000'000;  // truncated cells are shown leaving for 2 s
constexpr float kLabelWidth = 230.0f;
constexpr float kRowHeightSelected = 26.0f;
constexpr float kRowHeightCompact = 12.0f;
constexpr float kMarkerBand = 16.0f;   // above a tall row: "HW" / "LEO" labels
constexpr int64_t kRulerStepsPx = 56;  // ruler labels at least this far apart

bool IsInternalTopic(const std::string& topic) { return topic.rfind("__", 0) == 0; }

std::string JoinIds(const std::vector<int32_t>& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(ids[i]);
  }
  return out + "]";
}

// A ruler step (1, 2, 5, 10, 20, 50, ...) whose labels are at least kRulerStepsPx apart.
int64_t RulerStep(float cell_width) {
  int64_t step = 1;
  for (int i = 0; i < 18; ++i) {  // bounded: 5 * 10^6 offsets per label is the largest
    for (int64_t m : {1, 2, 5}) {
      if (static_cast<float>(step * m) * cell_width >= static_cast<float>(kRulerStepsPx)) {
        return step * m;
      }
    }
    step *= 10;
  }
  return step;
}

// The cells of the log at t whose offsets are in [first, end), in offset order.
std::span<const Cell> VisibleCells(const std::vector<Cell>& cells, int64_t first, int64_t end) {
  auto lower = std::lower_bound(cells.begin(), cells.end(), first,
                                [](const Cell& c, int64_t offset) { return c.offset < offset; });
  auto upper = std::lower_bound(lower, cells.end(), end,
                                [](const Cell& c, int64_t offset) { return c.offset < offset; });
  return std::span<const Cell>(cells).subspan(static_cast<size_t>(lower - cells.begin()),
                                              static_cast<size_t>(upper - lower));
}

void RecordTooltip(const TimelineModel& model, const Cell& cell, bool leaving) {
  ImGui::BeginTooltip();
  if (cell.record >= 0 && static_cast<size_t>(cell.record) < model.records().size()) {
    const LedgerRecord& record = model.records()[static_cast<size_t>(cell.record)];
    ImGui::Text("record %s  (producer %s)", record.id.c_str(), record.producer.c_str());
    ImGui::Text("value \"%s\"%s%s", record.value.c_str(), record.key ? "  key " : "",
                record.key ? record.key->c_str() : "");
    if (record.acked()) {
      ImGui::Text("acked at %s", kit::FormatSeconds(record.acked_us).c_str());
    } else {
      ImGui::TextDisabled("never acked%s%s", record.error.empty() ? "" : ": ",
                          record.error.c_str());
    }
    ImGui::Text("copies in the final log: %d", record.final_copies);
    if (record.lost()) ImGui::TextColored(ImVec4(0.86f, 0.2f, 0.18f, 1), "LOST (acked, gone)");
    if (record.duplicated()) ImGui::TextColored(ImVec4(0.94f, 0.55f, 0.08f, 1), "DUPLICATED");
  } else {
    ImGui::Text("a record no producer's send carried");
  }
  ImGui::Separator();
  ImGui::Text("offset %lld  leader epoch %d", static_cast<long long>(cell.offset), cell.epoch);
  ImGui::Text("appended at %s", kit::FormatSeconds(cell.appended_us).c_str());
  if (cell.removed_us != kNever) {
    ImGui::Text("%s at %s", cell.truncated ? "truncated" : "deleted",
                kit::FormatSeconds(cell.removed_us).c_str());
  }
  if (leaving) ImGui::TextColored(ImVec4(0.94f, 0.47f, 0.16f, 1), "leaving: truncated");
  ImGui::TextDisabled("click to select");
  ImGui::EndTooltip();
}

struct RowContext {
  const TimelineModel* model = nullptr;
  ViewState* state = nullptr;
  int32_t partition = 0;
  const PartitionView* view = nullptr;
  const ReplicaView* replica = nullptr;
  TimeUs t_us = 0;
  bool tall = false;
};

// The replica's label column: star, broker, ISR pill, epoch.
void DrawReplicaLabel(ImDrawList* draw, const RowContext& row, ImVec2 pos, float height) {
  const ReplicaView& replica = *row.replica;
  const float mid_y = pos.y + height * 0.5f;
  const float scale = row.tall ? 1.0f : 0.8f;
  const float text_y = mid_y - ImGui::GetFontSize() * scale * 0.5f;
  if (replica.leader)
    kit::Star(draw, ImVec2(pos.x + 8.0f, mid_y), row.tall ? 8.0f : 5.0f, kColorController);
  const ImU32 name_color =
      replica.online ? IM_COL32(235, 235, 235, 255) : IM_COL32(200, 80, 80, 255);
  std::string name = node::Broker(BrokerId(replica.broker));
  if (!replica.online && !row.tall) name += " (down)";
  kit::Text(draw, ImVec2(pos.x + 20.0f, text_y), name, name_color, scale);
  if (!row.tall) return;
  float x = pos.x + 20.0f + kit::PillSize(name).x - 6.0f;
  if (!replica.online) {
    x +=
        kit::Pill(draw, ImVec2(x, text_y - 2.0f), "down", kColorCrashed, kit::TextOn(kColorCrashed))
            .x +
        4.0f;
  }
  const ImU32 isr_color =
      replica.in_isr ? IM_COL32(80, 180, 90, 255) : IM_COL32(150, 150, 150, 255);
  x += kit::Pill(draw, ImVec2(x, text_y - 2.0f), replica.in_isr ? "ISR" : "out", isr_color,
                 replica.in_isr ? kit::TextOn(isr_color) : isr_color, replica.in_isr)
           .x +
       4.0f;
  kit::Text(draw, ImVec2(x, text_y), "e" + std::to_string(replica.epoch),
            IM_COL32(190, 190, 190, 255));
}

void DrawMarker(ImDrawList* draw, const StripGeometry& strip, int64_t offset, ImU32 color,
                const char* label, bool label_left, bool tall) {
  if (offset < strip.window.first || offset > strip.window.end) {
    // Outside the window: named at the strip's edge with the offset and an arrow.
    if (!tall) return;
    const bool right = offset > strip.window.end;
    const std::string text = right ? std::string(label) + " " + std::to_string(offset) + " >"
                                   : "< " + std::string(label) + " " + std::to_string(offset);
    const float width = ImGui::CalcTextSize(text.c_str()).x;
    const float y = strip.min.y - kMarkerBand;
    const float x = right ? strip.max.x - width - (label_left ? 96.0f : 0.0f)
                          : strip.min.x + (label_left ? 0.0f : 96.0f);
    kit::Text(draw, ImVec2(x, y), text, color);
    return;
  }
  const float x = strip.CellX(offset);
  draw->AddLine(ImVec2(x, strip.min.y - (tall ? 6.0f : 2.0f)), ImVec2(x, strip.max.y + 2.0f), color,
                tall ? 3.0f : 2.0f);
  if (!tall) return;
  const float width = ImGui::CalcTextSize(label).x;
  kit::Text(draw, ImVec2(label_left ? x - width - 3.0f : x + 3.0f, strip.min.y - kMarkerBand),
            label, color);
}

// One replica's row: label, strip, markers, leaving cells, hover and click.
void DrawReplicaRow(ImDrawList* draw, const RowContext& row, ImVec2 pos, float strip_width,
                    const OffsetWindow& window, std::vector<StripGeometry>& strips) {
  const float height = row.tall ? kRowHeightSelected : kRowHeightCompact;
  const float top = pos.y + (row.tall ? kMarkerBand : 0.0f);
  DrawReplicaLabel(draw, row, ImVec2(pos.x, top), height);

  StripGeometry strip;
  strip.partition = row.partition;
  strip.broker = row.replica->broker;
  strip.min = ImVec2(pos.x + kLabelWidth, top);
  strip.max = ImVec2(strip.min.x + strip_width, top + height);
  strip.window = window;
  strips.push_back(strip);

  draw->AddRectFilled(strip.min, strip.max, IM_COL32(28, 28, 32, 255));
  const TimelineModel& model = *row.model;
  const std::vector<Cell> log = model.LogAt(row.partition, strip.broker, row.t_us);
  const std::span<const Cell> visible = VisibleCells(log, window.first, window.end);
  const float pad = window.cell_width >= 6.0f ? 1.0f : 0.0f;
  for (const Cell& cell : visible) {
    const float x = strip.CellX(cell.offset);
    const ImVec2 a(x + pad, strip.min.y + pad);
    const ImVec2 b(x + window.cell_width - pad, strip.max.y - pad);
    const ImU32 color = RecordColor(model, cell.record);
    const bool committed = cell.offset < row.replica->hw;
    draw->AddRectFilled(a, b, committed ? color : kit::WithAlpha(color, 95));
    if (!committed && row.tall) draw->AddRect(a, b, kit::WithAlpha(color, 220));
    if (cell.record >= 0 && static_cast<size_t>(cell.record) < model.records().size()) {
      const LedgerRecord& record = model.records()[static_cast<size_t>(cell.record)];
      const float flag_h = std::max(2.0f, height * 0.2f);
      if (record.lost()) {
        draw->AddRectFilled(a, ImVec2(b.x, a.y + flag_h), kColorLost);
      } else if (record.duplicated()) {
        draw->AddRectFilled(a, ImVec2(b.x, a.y + flag_h), kColorDuplicated);
      }
    }
    if (row.tall) {
      // Epoch band: alternating shades at the bottom show where a new leader's appends start.
      draw->AddRectFilled(
          ImVec2(a.x, b.y - 3.0f), b,
          cell.epoch % 2 == 0 ? IM_COL32(255, 255, 255, 70) : IM_COL32(0, 0, 0, 110));
    }
    if (cell.record >= 0 && cell.record == row.state->selected_record) {
      draw->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1),
                    IM_COL32(255, 255, 255, 255), 0.0f, 0, 2.5f);
    }
  }

  // Cells truncated in the last kLeavingUs: slide down, fade, crossed.
  const Cell* hovered_leaving = nullptr;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (const Cell& cell : model.CellHistory(row.partition, strip.broker)) {
    if (!cell.truncated || cell.removed_us > row.t_us || row.t_us - cell.removed_us >= kLeavingUs) {
      continue;
    }
    if (cell.offset < window.first || cell.offset >= window.end) continue;
    const float progress =
        static_cast<float>(row.t_us - cell.removed_us) / static_cast<float>(kLeavingUs);
    const float x = strip.CellX(cell.offset) + window.cell_width * 0.15f;
    const float y = strip.min.y + height * (0.35f + 0.5f * progress);
    const ImVec2 a(x, y);
    const ImVec2 b(x + window.cell_width * 0.85f, y + height * 0.8f);
    const int alpha = 230 - static_cast<int>(170.0f * progress);
    draw->AddRectFilled(a, b, kit::WithAlpha(RecordColor(model, cell.record), alpha));
    kit::Cross(draw, a, b, kit::WithAlpha(kColorLost, alpha), row.tall ? 2.0f : 1.0f);
    if (mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y && mouse.y < b.y) hovered_leaving = &cell;
  }

  DrawMarker(draw, strip, row.replica->hw, kColorHighWatermark, "HW", true, row.tall);
  DrawMarker(draw, strip, row.replica->leo, kColorLogEnd, "LEO", false, row.tall);

  // Hover and click over the strip (plus the leaving cells' drop below it).
  ImGui::SetCursorScreenPos(strip.min);
  ImGui::PushID(strip.broker);
  ImGui::InvisibleButton("strip", ImVec2(strip_width, height));
  ImGui::PopID();
  const bool hovered = ImGui::IsItemHovered();
  if (hovered_leaving != nullptr) {
    RecordTooltip(model, *hovered_leaving, true);
  } else if (hovered) {
    const int64_t offset = strip.OffsetAt(mouse.x);
    const std::span<const Cell> under = VisibleCells(log, offset, offset + 1);
    if (offset >= 0 && !under.empty()) {
      RecordTooltip(model, under.front(), false);
      if (ImGui::IsMouseClicked(0) && under.front().record >= 0) {
        row.state->selected_record = under.front().record;
        row.state->selected_partition = row.partition;
      }
    }
  }
}

// The offset ruler above the selected partition's strips.
void DrawRuler(ImDrawList* draw, ImVec2 pos, const OffsetWindow& window) {
  const int64_t step = RulerStep(window.cell_width);
  const int64_t start = (window.first + step - 1) / step * step;
  for (int64_t offset = start; offset < window.end; offset += step) {
    const float x = pos.x + static_cast<float>(offset - window.first) * window.cell_width;
    draw->AddLine(ImVec2(x, pos.y + 12.0f), ImVec2(x, pos.y + 17.0f), IM_COL32(150, 150, 150, 255));
    kit::Text(draw, ImVec2(x + 2.0f, pos.y), std::to_string(offset), IM_COL32(150, 150, 150, 255),
              0.8f);
  }
}

void DrawPartition(const TimelineModel& model, ViewState& state, const Snapshot& snapshot,
                   int32_t p, std::vector<StripGeometry>& strips) {
  const PartitionView& view = snapshot.partitions[static_cast<size_t>(p)];
  const bool tall = p == state.selected_partition;
  ImGui::PushID(p);

  // Header: a selectable line.
  char header[256];
  if (view.leader >= 0) {
    std::snprintf(header, sizeof(header),
                  "%s-%d   leader broker-%d   epoch %d   ISR %s   %d election(s)%s",
                  view.topic.c_str(), view.partition, view.leader, view.leader_epoch,
                  JoinIds(view.isr).c_str(), view.elections,
                  view.last_election_unclean ? "  (last one UNCLEAN)" : "");
  } else {
    std::snprintf(header, sizeof(header), "%s-%d   NO LEADER (offline)   epoch %d   ISR %s",
                  view.topic.c_str(), view.partition, view.leader_epoch, JoinIds(view.isr).c_str());
  }
  if (view.leader < 0 || view.last_election_unclean) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
  }
  if (ImGui::Selectable(header, tall)) state.selected_partition = p;
  if (view.leader < 0 || view.last_election_unclean) ImGui::PopStyleColor();

  // The offsets every replica strip shows (one window so columns line up).
  int64_t log_begin = INT64_MAX;
  int64_t log_end = 0;
  int64_t focus = 0;
  for (const ReplicaView& replica : view.replica_states) {
    log_begin = std::min(log_begin, replica.log_start_offset);
    log_end = std::max(log_end, replica.leo);
    if (replica.leader) focus = replica.hw;
  }
  // Truncated tails still leaving stay in view.
  int64_t leaving_first = -1;
  for (const ReplicaView& replica : view.replica_states) {
    for (const Cell& cell : model.CellHistory(p, replica.broker)) {
      if (cell.truncated && cell.removed_us <= snapshot.t_us &&
          snapshot.t_us - cell.removed_us < kLeavingUs) {
        log_end = std::max(log_end, cell.offset + 1);
        leaving_first = leaving_first < 0 ? cell.offset : std::min(leaving_first, cell.offset);
      }
    }
  }
  if (leaving_first >= 0) {
    // Cells leaving: the window is around the truncation point (where the logs diverged), the
    // kept log on its left, the start of the tail leaving on its right.
    focus = leaving_first;
  }
  if (log_begin == INT64_MAX) log_begin = 0;
  if (focus == 0 && leaving_first < 0) {
    for (const ReplicaView& replica : view.replica_states) focus = std::max(focus, replica.hw);
  }

  const float avail = ImGui::GetContentRegionAvail().x;
  // Room on the right for the LEO label of a marker at the strip's end.
  const float strip_width = std::max(avail - kLabelWidth - 36.0f, 40.0f);
  const auto chosen = state.partition_first_offset.find(p);
  const int64_t first_wanted = chosen == state.partition_first_offset.end() ? -1 : chosen->second;
  const OffsetWindow window =
      ChooseOffsetWindow(log_begin, log_end, focus, first_wanted, strip_width);

  if (tall && (window.first > log_begin || window.end < log_end || first_wanted >= 0)) {
    // A long log: a slider over the first offset shown, or following the HW.
    bool follow = first_wanted < 0;
    if (ImGui::Checkbox("follow HW", &follow)) {
      if (follow) {
        state.partition_first_offset.erase(p);
      } else {
        state.partition_first_offset[p] = std::min<int64_t>(window.first, INT_MAX);
      }
    }
    ImGui::SameLine();
    int first = static_cast<int>(std::min<int64_t>(window.first, INT_MAX));
    const int slider_max = static_cast<int>(
        std::clamp<int64_t>(log_end - (window.end - window.first), log_begin, INT_MAX));
    ImGui::SetNextItemWidth(std::max(120.0f, avail * 0.5f));
    if (ImGui::SliderInt("first offset", &first, static_cast<int>(log_begin),
                         std::max(slider_max, static_cast<int>(log_begin)))) {
      state.partition_first_offset[p] = first;
    }
    ImGui::SameLine();
    ImGui::TextDisabled("offsets %lld..%lld of %lld..%lld", static_cast<long long>(window.first),
                        static_cast<long long>(window.end - 1), static_cast<long long>(log_begin),
                        static_cast<long long>(log_end - 1));
  }

  ImDrawList* draw = ImGui::GetWindowDrawList();
  ImVec2 pos = ImGui::GetCursorScreenPos();
  if (tall) {
    DrawRuler(draw, ImVec2(pos.x + kLabelWidth, pos.y), window);
    pos.y += 18.0f;
  }
  const float row_step = tall ? kMarkerBand + kRowHeightSelected + 14.0f : kRowHeightCompact + 5.0f;
  for (size_t slot = 0; slot < view.replica_states.size(); ++slot) {
    RowContext row;
    row.model = &model;
    row.state = &state;
    row.partition = p;
    row.view = &view;
    row.replica = &view.replica_states[slot];
    row.t_us = snapshot.t_us;
    row.tall = tall;
    const ImVec2 row_pos(pos.x, pos.y + row_step * static_cast<float>(slot));
    // Rows scrolled out of sight cost nothing.
    if (ImGui::IsRectVisible(row_pos, ImVec2(row_pos.x + avail, row_pos.y + row_step))) {
      DrawReplicaRow(draw, row, row_pos, strip_width, window, strips);
    }
  }
  ImGui::SetCursorScreenPos(pos);
  ImGui::Dummy(ImVec2(avail, row_step * static_cast<float>(view.replica_states.size()) + 4.0f));
  ImGui::PopID();
}

}  // namespace

OffsetWindow ChooseOffsetWindow(int64_t log_begin, int64_t log_end, int64_t focus,
                                int64_t first_wanted, float width) {
  OffsetWindow window;
  if (log_end < log_begin) log_end = log_begin;
  const int64_t length = log_end - log_begin;
  const int64_t fit = std::max<int64_t>(1, static_cast<int64_t>(width / kCellWidthMin));
  if (length <= fit) {
    window.first = log_begin;
    window.end = log_end;
    window.cell_width = length == 0 ? kCellWidthPreferred
                                    : std::clamp(width / static_cast<float>(length), kCellWidthMin,
                                                 kCellWidthPreferred);
    return window;
  }
  int64_t first = first_wanted >= 0 ? first_wanted : focus + fit / 4 - fit;
  first = std::clamp(first, log_begin, log_end - fit);
  window.first = first;
  window.end = first + fit;
  window.cell_width = width / static_cast<float>(fit);
  return window;
}

int64_t StripGeometry::OffsetAt(float x) const {
  if (x < min.x || x >= max.x || window.cell_width <= 0.0f) return -1;
  const int64_t offset = window.first + static_cast<int64_t>((x - min.x) / window.cell_width);
  return offset < window.end ? offset : -1;
}

void DrawPartitionsPanel(const Runs& runs, ViewState& state, ViewCache& cache) {
  const TimelineModel& model = runs.current();
  const Snapshot snapshot = model.StateAt(state.playhead_us);
  PartitionsFrame& frame = cache.partitions;
  frame.strips.clear();
  if (snapshot.partitions.empty()) {
    ImGui::TextDisabled("no partitions in this run");
    return;
  }
  if (state.selected_partition < 0 ||
      static_cast<size_t>(state.selected_partition) >= snapshot.partitions.size()) {
    state.selected_partition = 0;
  }
  // Legend.
  ImDrawList* draw = ImGui::GetWindowDrawList();
  ImVec2 pos = ImGui::GetCursorScreenPos();
  float x = pos.x;
  x +=
      kit::Pill(draw, ImVec2(x, pos.y), "HW", kColorHighWatermark, kit::TextOn(kColorHighWatermark))
          .x +
      6;
  x += kit::Pill(draw, ImVec2(x, pos.y), "LEO", kColorLogEnd, kit::TextOn(kColorLogEnd)).x + 6;
  x += kit::Pill(draw, ImVec2(x, pos.y), "lost", kColorLost, kit::TextOn(kColorLost)).x + 6;
  x += kit::Pill(draw, ImVec2(x, pos.y), "duplicated", kColorDuplicated,
                 kit::TextOn(kColorDuplicated))
           .x +
       6;
  x += kit::Pill(draw, ImVec2(x, pos.y), "faded: past HW", IM_COL32(120, 120, 160, 255),
                 IM_COL32(230, 230, 230, 255), false)
           .x +
       6;
  kit::Pill(draw, ImVec2(x, pos.y), "crossed: truncated", kColorLost, kColorLost, false);
  ImGui::Dummy(ImVec2(10.0f, kit::PillSize("HW").y + 4.0f));

  // The scenario's topics first, Kafka's internal ones (__consumer_offsets) after them.
  for (bool internal : {false, true}) {
    for (size_t p = 0; p < snapshot.partitions.size(); ++p) {
      if (IsInternalTopic(snapshot.partitions[p].topic) != internal) continue;
      DrawPartition(model, state, snapshot, static_cast<int32_t>(p), frame.strips);
      ImGui::Spacing();
    }
  }
}

}  // namespace ksim::viz
