// The Ledger panel: one row per record the producers sent (filtered and searched), with its
// fate; lost rows red, duplicated orange. A click selects the record, moves the playhead to its
// first event and opens the details: the record's events (each a jump) and the anomalies the
// checker found with the cause it attributed (the cause's time a jump too).
//
// Big runs: the filtered row list is cached per (model, filter, search) and the table draws
// only the visible rows (ImGuiListClipper), so 100k rows cost what a screenful does.
#include <imgui.h>

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "viz/ui/draw_kit.h"
#include "viz/ui/ledger_panel_internal.h"
#include "viz/ui/palette.h"
#include "viz/ui/panels.h"

namespace ksim::viz {
namespace {

bool ContainsFolded(std::string_view haystack, std::string_view needle) {
  if (needle.empty()) return true;
  const auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                              [](char a, char b) {
                                return std::tolower(static_cast<unsigned char>(a)) ==
                                       std::tolower(static_cast<unsigned char>(b));
                              });
  return it != haystack.end();
}

std::string PlaceText(const LedgerRecord& record) {
  if (record.partition < 0) return "-";
  if (record.offset < 0) return std::to_string(record.partition) + "@?";
  return std::to_string(record.partition) + "@" + std::to_string(record.offset);
}

std::string DeliveriesText(const LedgerRecord& record) {
  std::string text;
  for (const Delivery& d : record.deliveries) {
    if (!text.empty()) text += ", ";
    text +=
        (d.group.empty() ? std::string("(no group)") : d.group) + " x" + std::to_string(d.count);
  }
  return text.empty() ? "-" : text;
}

// Never written: not acknowledged and not in the final log (the checker's lost_unacked; all
// acks=0 records are unacknowledged, and those missing are what at-most-once loses).
bool NeverWritten(const LedgerRecord& record) {
  return !record.acked() && record.final_copies == 0;
}

ImU32 RowColor(const LedgerRecord& record) {
  if (record.lost() || NeverWritten(record)) return kColorLost;
  if (record.duplicated()) return kColorDuplicated;
  if (!record.acked()) return kColorUnacked;
  return IM_COL32(230, 230, 230, 255);
}

// The filtered rows, recomputed only when the model, the filter or the search change.
const std::vector<int32_t>& CachedRows(const TimelineModel& model, const ViewState& state) {
  static uint64_t model_cached = 0;  // serial
  static size_t record_count = 0;
  static LedgerFilter filter_cached = LedgerFilter::kAll;
  static std::string search_cached;
  static std::vector<int32_t> rows;
  static bool valid = false;
  if (!valid || model_cached != model.serial() || record_count != model.records().size() ||
      filter_cached != state.ledger_filter || search_cached != state.ledger_search) {
    model_cached = model.serial();
    record_count = model.records().size();
    filter_cached = state.ledger_filter;
    search_cached = state.ledger_search;
    rows = LedgerRows(model, state.ledger_filter, state.ledger_search);
    valid = true;
  }
  return rows;
}

std::vector<LedgerRowRect>& RowRects() {
  static std::vector<LedgerRowRect> rects;
  return rects;
}

std::vector<LedgerJumpRect>& JumpRects() {
  static std::vector<LedgerJumpRect> rects;
  return rects;
}

// Selects the record and puts the playhead on its first event (its send when it has none).
void SelectRecord(const TimelineModel& model, ViewState& state, int32_t index) {
  state.selected_record = index;
  const LedgerRecord& record = model.records()[index];
  if (!record.events.empty()) {
    state.selected_event = static_cast<int32_t>(record.events.front());
    state.Seek(model, model.events()[record.events.front()].t_us);
  } else if (record.sent_us >= 0) {
    state.Seek(model, record.sent_us);
  }
}

void DrawFilterBar(const TimelineModel& model, ViewState& state) {
  static const char* const kFilterNames[] = {"all", "anomalies", "lost", "duplicated", "unacked"};
  for (int f = 0; f < 5; ++f) {
    if (f > 0) ImGui::SameLine();
    if (ImGui::RadioButton(kFilterNames[f], static_cast<int>(state.ledger_filter) == f)) {
      state.ledger_filter = static_cast<LedgerFilter>(f);
    }
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(180);
  ImGui::InputTextWithHint("##ledger_search", "search id, value, 0@12...", state.ledger_search,
                           sizeof(state.ledger_search));
  size_t lost = 0, duplicated = 0, unacked = 0, never_written = 0;
  for (const LedgerRecord& r : model.records()) {
    lost += r.lost() ? 1 : 0;
    duplicated += r.duplicated() ? 1 : 0;
    unacked += r.acked() ? 0 : 1;
    never_written += NeverWritten(r) ? 1 : 0;
  }
  ImGui::SameLine();
  ImGui::Text("%zu records:", model.records().size());
  ImGui::SameLine();
  ImGui::TextColored(ImColor(kColorLost), "%zu lost", lost);
  ImGui::SameLine();
  ImGui::TextColored(ImColor(kColorDuplicated), "%zu duplicated", duplicated);
  ImGui::SameLine();
  ImGui::TextColored(ImColor(kColorUnacked), "%zu unacked", unacked);
  ImGui::SameLine();
  ImGui::TextColored(ImColor(kColorLost), "(%zu never written)", never_written);
}

void DrawTable(const TimelineModel& model, ViewState& state, const std::vector<int32_t>& rows,
               ImVec2 size) {
  RowRects().clear();
  constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg |
                                     ImGuiTableFlags_BordersOuter | ImGuiTableFlags_BordersV |
                                     ImGuiTableFlags_Resizable;
  if (!ImGui::BeginTable("##ledger", 8, kFlags, size)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("record");
  ImGui::TableSetupColumn("producer");
  ImGui::TableSetupColumn("key / value");
  ImGui::TableSetupColumn("p@offset");
  ImGui::TableSetupColumn("acked");
  ImGui::TableSetupColumn("copies");
  ImGui::TableSetupColumn("deliveries");
  ImGui::TableSetupColumn("fate", ImGuiTableColumnFlags_WidthStretch, 3.0f);
  ImGui::TableHeadersRow();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(rows.size()));
  while (clipper.Step()) {
    for (int row = clipper.DisplayStart; row < clipper.DisplayEnd; ++row) {
      const int32_t index = rows[row];
      const LedgerRecord& record = model.records()[index];
      ImGui::TableNextRow();
      if (record.lost()) {
        ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, IM_COL32(220, 50, 47, 50));
      } else if (record.duplicated()) {
        ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, IM_COL32(240, 140, 20, 45));
      } else if (NeverWritten(record)) {
        ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, IM_COL32(220, 50, 47, 22));
      }
      ImGui::TableSetColumnIndex(0);
      ImGui::PushID(index);
      ImGui::PushStyleColor(ImGuiCol_Text, RowColor(record));
      if (ImGui::Selectable(record.id.c_str(), state.selected_record == index,
                            ImGuiSelectableFlags_SpanAllColumns)) {
        SelectRecord(model, state, index);
      }
      RowRects().push_back({index, ImGui::GetItemRectMin(), ImGui::GetItemRectMax()});
      ImGui::TableSetColumnIndex(1);
      ImGui::TextColored(ImColor(RecordColor(model, index)), "%s", record.producer.c_str());
      ImGui::TableSetColumnIndex(2);
      ImGui::Text("%s / %s", record.key ? record.key->c_str() : "null", record.value.c_str());
      ImGui::TableSetColumnIndex(3);
      ImGui::TextUnformatted(PlaceText(record).c_str());
      ImGui::TableSetColumnIndex(4);
      ImGui::TextUnformatted(record.acked() ? "yes" : "no");
      ImGui::TableSetColumnIndex(5);
      ImGui::Text("%d", record.final_copies);
      ImGui::TableSetColumnIndex(6);
      ImGui::TextUnformatted(DeliveriesText(record).c_str());
      ImGui::TableSetColumnIndex(7);
      ImGui::TextUnformatted(LedgerFateText(model, record).c_str());
      ImGui::PopStyleColor();
      ImGui::PopID();
    }
  }
  ImGui::EndTable();
}

void DrawDetails(const TimelineModel& model, ViewState& state) {
  const LedgerRecord& record = model.records()[state.selected_record];
  ImGui::TextColored(ImColor(RowColor(record)), "%s", record.id.c_str());
  ImGui::SameLine();
  if (ImGui::SmallButton("close")) {
    state.selected_record = -1;
    return;
  }
  ImGui::TextWrapped("%s", LedgerFateText(model, record).c_str());
  ImGui::Text("producer %s, topic %s, partition@offset %s", record.producer.c_str(),
              record.topic.c_str(), PlaceText(record).c_str());
  ImGui::TextWrapped("key %s, value %s", record.key ? record.key->c_str() : "null",
                     record.value.c_str());
  if (record.sent_us >= 0) ImGui::Text("sent at %s", kit::FormatSeconds(record.sent_us).c_str());
  if (record.acked()) ImGui::Text("acked at %s", kit::FormatSeconds(record.acked_us).c_str());
  if (record.failed_us >= 0) {
    ImGui::Text("error %s (%s) at %s", record.error.c_str(), record.outcome.c_str(),
                kit::FormatSeconds(record.failed_us).c_str());
  }
  ImGui::Text("copies in the final log: %d; deliveries: %s", record.final_copies,
              DeliveriesText(record).c_str());
  if (NeverWritten(record)) {
    ImGui::Separator();
    ImGui::TextDisabled("never written: the cluster when it was sent (the viewer's reading)");
    ImGui::TextWrapped("%s", NeverWrittenReason(model, record).c_str());
  }
  if (!record.anomalies.empty()) {
    ImGui::Separator();
    ImGui::TextDisabled("anomalies (the checker's causes)");
  }
  for (int32_t a : record.anomalies) {
    const Anomaly& anomaly = model.anomalies()[a];
    ImGui::PushID(a);
    ImGui::TextColored(ImColor(EventKindColor(EventKind::kAnomaly)), "%s%s%s", anomaly.kind.c_str(),
                       anomaly.group.empty() ? "" : " in group ", anomaly.group.c_str());
    if (anomaly.cause_t_us >= 0) {
      ImGui::SameLine();
      const std::string label = "cause at " + kit::FormatSeconds(anomaly.cause_t_us);
      if (ImGui::SmallButton(label.c_str())) state.Seek(model, anomaly.cause_t_us);
      JumpRects().push_back(
          {anomaly.cause_t_us, true, ImGui::GetItemRectMin(), ImGui::GetItemRectMax()});
    }
    ImGui::TextWrapped("%s",
                       anomaly.cause.empty() ? "(no cause attributed)" : anomaly.cause.c_str());
    ImGui::PopID();
  }
  ImGui::Separator();
  ImGui::TextDisabled("events (click to jump)");
  for (uint32_t e : record.events) {
    const TimelineEvent& event = model.events()[e];
    const std::string line = kit::FormatSeconds(event.t_us) + "  " + event.summary;
    ImGui::PushID(static_cast<int>(e));
    ImGui::PushStyleColor(ImGuiCol_Text, EventKindColor(event.kind));
    if (ImGui::Selectable(line.c_str(), state.selected_event == static_cast<int32_t>(e))) {
      state.selected_event = static_cast<int32_t>(e);
      state.Seek(model, event.t_us);
    }
    JumpRects().push_back({event.t_us, false, ImGui::GetItemRectMin(), ImGui::GetItemRectMax()});
    ImGui::PopStyleColor();
    ImGui::PopID();
  }
}

}  // namespace

bool LedgerFilterKeeps(const TimelineModel& model, const LedgerRecord& record,
                       LedgerFilter filter) {
  switch (filter) {
    case LedgerFilter::kAll:
      return true;
    case LedgerFilter::kAnomalies:
      return !record.anomalies.empty() || record.lost() || record.duplicated() ||
             NeverWritten(record);
    case LedgerFilter::kLost:
      return record.lost();
    case LedgerFilter::kDuplicated:
      return record.duplicated();
    case LedgerFilter::kUnacked:
      return !record.acked();
  }
  return true;
}

std::vector<int32_t> LedgerRows(const TimelineModel& model, LedgerFilter filter,
                                std::string_view search) {
  std::vector<int32_t> rows;
  const std::vector<LedgerRecord>& records = model.records();
  for (size_t i = 0; i < records.size(); ++i) {
    const LedgerRecord& r = records[i];
    if (!LedgerFilterKeeps(model, r, filter)) continue;
    if (!search.empty() && !ContainsFolded(r.id, search) && !ContainsFolded(r.producer, search) &&
        !ContainsFolded(r.value, search) && !(r.key && ContainsFolded(*r.key, search)) &&
        !ContainsFolded(r.error, search) && !ContainsFolded(PlaceText(r), search)) {
      continue;
    }
    rows.push_back(static_cast<int32_t>(i));
  }
  return rows;
}

std::string LedgerFateText(const TimelineModel& model, const LedgerRecord& record) {
  std::string text;
  if (record.lost()) {
    text = "lost: acked";
    if (record.offset >= 0) text += " at offset " + std::to_string(record.offset);
    text += ", not in the final log";
  } else if (!record.acked()) {
    text = "unacked";
    if (!record.error.empty()) text += ": " + record.error;
    if (!record.outcome.empty()) text += " (" + record.outcome + ")";
    text += record.final_copies > 0
                ? ", yet " + std::to_string(record.final_copies) + " in the final log"
                : ", not in the final log";
  } else {
    text = "ok";
  }
  if (record.final_copies > 1) {
    text += "; duplicated: " + std::to_string(record.final_copies) + " copies in the log";
  }
  const int32_t delivered = record.max_deliveries();
  if (delivered > 1) {
    text += "; delivered " + std::to_string(delivered) + " times";
  }
  // The kinds the counts above do not show (lost, duplicates and deliveries are shown already).
  for (int32_t a : record.anomalies) {
    const Anomaly& anomaly = model.anomalies()[a];
    if (anomaly.kind == "reordered") {
      text += "; reordered";
    } else if (anomaly.kind == "undelivered") {
      text += "; undelivered to " + anomaly.group;
    }
  }
  return text;
}

std::string NeverWrittenReason(const TimelineModel& model, const LedgerRecord& record) {
  if (!NeverWritten(record) || record.sent_us < 0) return "";
  std::string reason;
  const auto add = [&reason](const std::string& part) {
    reason += (reason.empty() ? "" : "; ") + part;
  };
  const int32_t p =
      record.partition >= 0 ? model.PartitionIndex(record.topic, record.partition) : -1;
  if (p >= 0) {
    const Snapshot at = model.StateAt(record.sent_us);
    const PartitionView& view = at.partitions[p];
    const std::string name = view.topic + "-" + std::to_string(view.partition);
    const BrokerView* leader = view.leader >= 0 ? at.FindBroker(view.leader) : nullptr;
    if (leader == nullptr) {
      add(name + " had no leader when it was sent (" + kit::FormatSeconds(record.sent_us) + ")");
    } else if (leader->status != NodeStatus::kAlive) {
      // The leader's last crash or shutdown before the send.
      std::string since;
      for (size_t e = model.FirstEventAtOrAfter(record.sent_us + 1); e-- > 0;) {
        const TimelineEvent& event = model.events()[e];
        if (event.node >= 0 && model.nodes()[event.node] == leader->node &&
            (event.ev == "crash" || event.ev == "shutdown")) {
          since = std::string(event.ev == "crash" ? " (crashed at " : " (shut down at ") +
                  kit::FormatSeconds(event.t_us) + ")";
          break;
        }
      }
      add("sent at " + kit::FormatSeconds(record.sent_us) + " while " + name + "'s leader, " +
          leader->node + ", was down" + since);
    } else if (at.LinkCut(record.producer, leader->node)) {
      add("sent at " + kit::FormatSeconds(record.sent_us) + " while the link " + record.producer +
          " -> " + leader->node + " was cut");
    }
  }
  if (!record.error.empty()) {
    add(record.producer + " gave up: " + record.error +
        (record.outcome.empty() ? "" : " (" + record.outcome + ")"));
  }
  for (uint32_t e : record.events) {
    if (model.events()[e].ev == "ack") {
      add("acks=0: " + record.producer + " counted it sent and expected no answer");
      break;
    }
  }
  return reason.empty() ? "it reached no log that survived" : reason;
}

const std::vector<LedgerRowRect>& LastLedgerRowRects() { return RowRects(); }
const std::vector<LedgerJumpRect>& LastLedgerJumpRects() { return JumpRects(); }

void DrawLedgerPanel(const Runs& runs, ViewState& state) {
  const TimelineModel& model = runs.current();
  if (state.selected_record >= static_cast<int32_t>(model.records().size())) {
    state.selected_record = -1;
  }
  JumpRects().clear();
  DrawFilterBar(model, state);
  const std::vector<int32_t>& rows = CachedRows(model, state);
  if (rows.size() != model.records().size()) {
    ImGui::TextDisabled("showing %zu of %zu", rows.size(), model.records().size());
  }
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const bool details = state.selected_record >= 0;
  const float table_width = details ? std::max(avail.x * 0.6f, 100.0f) : avail.x;
  DrawTable(model, state, rows, ImVec2(table_width, std::max(avail.y, 80.0f)));
  if (state.selected_record >= 0) {
    ImGui::SameLine();
    ImGui::BeginChild("##ledger_details", ImVec2(0, std::max(avail.y, 80.0f)), true);
    DrawDetails(model, state);
    ImGui::EndChild();
  }
}

}  // namespace ksim::viz
