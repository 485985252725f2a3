// The Ledger panel: one row per record the producers sent (filtered and searched), with its
// fate; lost rows red, duplicated orange. A click selects the record, moves the playhead to its
// first event and opens the details: the record's events (each a jump) and the anomalies the
// checker found with the cause it attributed (the cause's time a jump too).
//
// Big runs: the filtered row list is kept in the view cache per (model, filter, search), the
// counts are the model's (ledger_counts), and the table draws only the visible rows
// (ImGuiListClipper), so 100k rows cost what a screenful does.
#include <imgui.h>

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/base/trace_names.h"
#include "viz/ui/draw_kit.h"
#include "viz/ui/ledger_panel_internal.h"
#include "viz/ui/palette.h"
#include "viz/ui/panels.h"
#include "viz/ui/view_cache.h"

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

// "t-0" for partitions()[p].
std::string PartitionText(const TimelineModel& model, int32_t p) {
  const PartitionView& view = model.partitions()[static_cast<size_t>(p)];
  return view.topic + "-" + std::to_string(view.partition);
}

// " (crashed at 4.138 s)": the leader's crash or shutdown before the send, when the trace has one.
std::string DownSince(const TimelineModel& model, int32_t down_event) {
  if (down_event < 0) return "";
  const TimelineEvent& event = model.events()[static_cast<size_t>(down_event)];
  return std::string(event.ev == ev::kCrash ? " (crashed at " : " (shut down at ") +
         kit::FormatSeconds(event.t_us) + ")";
}

ImU32 RowColor(const LedgerRecord& record) {
  if (record.lost() || record.never_written()) return kColorLost;
  if (record.duplicated()) return kColorDuplicated;
  if (!record.acked()) return kColorUnacked;
  return IM_COL32(230, 230, 230, 255);
}

// The filtered rows, recomputed only when the model, the filter or the search change.
const std::vector<int32_t>& CachedRows(const TimelineModel& model, const ViewState& state,
                                       LedgerCache& cache) {
  if (cache.model_serial != model.serial() || cache.filter != state.ledger_filter ||
      cache.search != state.ledger_search) {
    cache.model_serial = model.serial();
    cache.filter = state.ledger_filter;
    cache.search = state.ledger_search;
    cache.rows = LedgerRows(model, state.ledger_filter, state.ledger_search);
  }
  return cache.rows;
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

constexpr const char* kFilterNames[] = {"all", "anomalies", "lost", "duplicated", "unacked"};

void DrawFilterBar(const TimelineModel& model, ViewState& state) {
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
  const LedgerCounts& counts = model.ledger_counts();
  ImGui::SameLine();
  ImGui::Text("%zu records:", model.records().size());
  ImGui::SameLine();
  ImGui::TextColored(ImColor(kColorLost), "%zu lost", counts.lost);
  ImGui::SameLine();
  ImGui::TextColored(ImColor(kColorDuplicated), "%zu duplicated", counts.duplicated);
  ImGui::SameLine();
  ImGui::TextColored(ImColor(kColorUnacked), "%zu unacked", counts.unacked);
  ImGui::SameLine();
  ImGui::TextColored(ImColor(kColorLost), "(%zu never written)", counts.never_written);
}

// The table of `rows`; each row drawn is recorded in `rects`.
void DrawTable(const TimelineModel& model, ViewState& state, const std::vector<int32_t>& rows,
               std::vector<LedgerRowRect>& rects, ImVec2 size) {
  rects.clear();
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
      } else if (record.never_written()) {
        ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, IM_COL32(220, 50, 47, 22));
      }
      ImGui::TableSetColumnIndex(0);
      ImGui::PushID(index);
      ImGui::PushStyleColor(ImGuiCol_Text, RowColor(record));
      if (ImGui::Selectable(record.id.c_str(), state.selected_record == index,
                            ImGuiSelectableFlags_SpanAllColumns)) {
        SelectRecord(model, state, index);
      }
      rects.push_back({index, ImGui::GetItemRectMin(), ImGui::GetItemRectMax()});
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

// The selected record's details; each jump drawn is recorded in `jumps`.
void DrawDetails(const TimelineModel& model, ViewState& state, std::vector<LedgerJumpRect>& jumps) {
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
  if (record.never_written()) {
    ImGui::Separator();
    ImGui::TextDisabled("never written: the cluster when it was sent (the viewer's reading)");
    ImGui::TextWrapped("%s", NeverWrittenReason(model, state.selected_record).c_str());
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
      jumps.push_back({anomaly.cause_t_us, true, ImGui::GetItemRectMin(), ImGui::GetItemRectMax()});
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
    jumps.push_back({event.t_us, false, ImGui::GetItemRectMin(), ImGui::GetItemRectMax()});
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
             record.never_written();
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

std::string NeverWrittenReason(const TimelineModel& model, int32_t record_index) {
  const std::optional<NeverWrittenCause> cause = model.WhyNeverWritten(record_index);
  if (!cause) return "";
  const LedgerRecord& record = model.records()[static_cast<size_t>(record_index)];
  std::string reason;
  const auto add = [&reason](const std::string& part) {
    reason += (reason.empty() ? "" : "; ") + part;
  };
  const std::string sent = kit::FormatSeconds(record.sent_us);
  switch (cause->leader) {
    case LeaderAtSend::kNone:
      add(PartitionText(model, cause->partition) + " had no leader when it was sent (" + sent +
          ")");
      break;
    case LeaderAtSend::kDown:
      add("sent at " + sent + " while " + PartitionText(model, cause->partition) + "'s leader, " +
          cause->leader_node + ", was down" + DownSince(model, cause->leader_down_event));
      break;
    case LeaderAtSend::kCut:
      add("sent at " + sent + " while the link " + record.producer + " -> " + cause->leader_node +
          " was cut");
      break;
    case LeaderAtSend::kUnknown:
    case LeaderAtSend::kReachable:
      break;
  }
  if (cause->gave_up) {
    add(record.producer + " gave up: " + record.error +
        (record.outcome.empty() ? "" : " (" + record.outcome + ")"));
  }
  if (cause->acks_zero) {
    add("acks=0: " + record.producer + " counted it sent and expected no answer");
  }
  return reason.empty() ? "it reached no log that survived" : reason;
}

void DrawLedgerPanel(const Runs& runs, ViewState& state, ViewCache& cache) {
  const TimelineModel& model = runs.current();
  if (state.selected_record >= static_cast<int32_t>(model.records().size())) {
    state.selected_record = -1;
  }
  cache.ledger.jump_rects.clear();
  DrawFilterBar(model, state);
  const std::vector<int32_t>& rows = CachedRows(model, state, cache.ledger);
  if (rows.size() != model.records().size()) {
    ImGui::TextDisabled("showing %zu of %zu", rows.size(), model.records().size());
  }
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const bool details = state.selected_record >= 0;
  const float table_width = details ? std::max(avail.x * 0.6f, 100.0f) : avail.x;
  DrawTable(model, state, rows, cache.ledger.row_rects,
            ImVec2(table_width, std::max(avail.y, 80.0f)));
  if (state.selected_record >= 0) {
    ImGui::SameLine();
    ImGui::BeginChild("##ledger_details", ImVec2(0, std::max(avail.y, 80.0f)), true);
    DrawDetails(model, state, cache.ledger.jump_rects);
    ImGui::EndChild();
  }
}

}  // namespace ksim::viz
