// The Scenario panel (viz/ui/panels.h): the scenario's name, variant and verdict, its
// description (the Markdown the scenario file carries, rendered simply: headers larger,
// bullets and numbered items indented, tables as tables, ** and ` marks dropped), its actions
// (ticked once the playhead has passed them, the next one highlighted, a click jumps there), the
// expectations with whether each held, and the run's metrics.
#include <imgui.h>

#include <string>
#include <string_view>
#include <vector>

#include "viz/ui/draw_kit.h"
#include "viz/ui/palette.h"
#include "viz/ui/panels.h"

namespace ksim::viz {
namespace {

constexpr size_t kTableColumnsMax = 16;

ImVec4 ToVec4(ImU32 color) { return ImGui::ColorConvertU32ToFloat4(color); }

// The text without Markdown's emphasis and code marks (every * and `).
std::string Plain(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    // Emphasis (*a*, **b**) and code (`c`) marks; bullets were taken off before.
    if (text[i] == '`' || text[i] == '*') continue;
    out += text[i];
  }
  return out;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

// The cells of a "| a | b |" row.
std::vector<std::string> TableCells(std::string_view line) {
  line = Trim(line);
  if (!line.empty() && line.front() == '|') line.remove_prefix(1);
  if (!line.empty() && line.back() == '|') line.remove_suffix(1);
  std::vector<std::string> cells;
  while (cells.size() < kTableColumnsMax) {
    const size_t bar = line.find('|');
    cells.push_back(Plain(Trim(line.substr(0, bar))));
    if (bar == std::string_view::npos) break;
    line.remove_prefix(bar + 1);
  }
  return cells;
}

bool IsTableSeparator(std::string_view line) {
  for (char c : line) {
    if (c != '|' && c != '-' && c != ':' && c != ' ') return false;
  }
  return true;
}

// Digits then ". ": a numbered item; returns the length of the "12. " prefix, 0 if none.
size_t NumberedPrefix(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && i < 4 && line[i] >= '0' && line[i] <= '9') ++i;
  if (i == 0 || i + 1 >= line.size() || line[i] != '.' || line[i + 1] != ' ') return 0;
  return i + 2;
}

void DrawTable(const std::vector<std::string_view>& rows, int id) {
  std::vector<std::vector<std::string>> cells;
  size_t columns = 1;
  for (std::string_view row : rows) {
    if (IsTableSeparator(row)) continue;
    cells.push_back(TableCells(row));
    columns = std::max(columns, cells.back().size());
  }
  ImGui::PushID(id);
  if (ImGui::BeginTable(
          "md_table", static_cast<int>(columns),
          ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
    for (size_t r = 0; r < cells.size(); ++r) {
      ImGui::TableNextRow();
      for (size_t c = 0; c < columns; ++c) {
        ImGui::TableSetColumnIndex(static_cast<int>(c));
        const std::string& text = c < cells[r].size() ? cells[r][c] : std::string();
        if (r == 0) {
          ImGui::TextColored(ImVec4(0.95f, 0.85f, 0.5f, 1.0f), "%s", text.c_str());
        } else {
          ImGui::TextWrapped("%s", text.c_str());
        }
      }
    }
    ImGui::EndTable();
  }
  ImGui::PopID();
}

void DrawDescription(const std::string& description) {
  if (description.empty()) {
    ImGui::TextDisabled("(no description)");
    return;
  }
  std::vector<std::string_view> lines;
  std::string_view rest = description;
  while (!rest.empty()) {
    const size_t newline = rest.find('\n');
    lines.push_back(rest.substr(0, newline));
    if (newline == std::string_view::npos) break;
    rest.remove_prefix(newline + 1);
  }
  int table_id = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = Trim(lines[i]);
    if (line.empty()) {
      ImGui::Spacing();
      continue;
    }
    if (line.front() == '|') {
      std::vector<std::string_view> rows;
      while (i < lines.size() && !Trim(lines[i]).empty() && Trim(lines[i]).front() == '|') {
        rows.push_back(Trim(lines[i]));
        ++i;
      }
      --i;
      DrawTable(rows, table_id++);
      continue;
    }
    if (line.front() == '#') {
      size_t level = 0;
      while (level < line.size() && line[level] == '#') ++level;
      const std::string text = Plain(Trim(line.substr(level)));
      ImGui::SetWindowFontScale(level <= 1 ? 1.35f : 1.15f);
      ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.95f, 0.85f, 0.5f, 1.0f));
      ImGui::TextWrapped("%s", text.c_str());
      ImGui::PopStyleColor();
      ImGui::SetWindowFontScale(1.0f);
      continue;
    }
    if (line.size() >= 2 && (line[0] == '-' || line[0] == '*') && line[1] == ' ') {
      ImGui::Bullet();
      ImGui::TextWrapped("%s", Plain(line.substr(2)).c_str());
      continue;
    }
    if (const size_t prefix = NumberedPrefix(line); prefix > 0) {
      const std::string number(line.substr(0, prefix - 1));
      ImGui::TextUnformatted(number.c_str());
      ImGui::SameLine();
      ImGui::TextWrapped("%s", Plain(line.substr(prefix)).c_str());
      continue;
    }
    ImGui::TextWrapped("%s", Plain(line).c_str());
  }
}

// A tick box: done (green, checked), next (yellow outline) or to come (grey outline).
void TickBox(ImDrawList* draw, ImVec2 pos, float size, bool done, bool next) {
  const ImVec2 max(pos.x + size, pos.y + size);
  if (done) {
    draw->AddRectFilled(pos, max, kColorOk, 3.0f);
    draw->AddLine(ImVec2(pos.x + size * 0.2f, pos.y + size * 0.55f),
                  ImVec2(pos.x + size * 0.42f, pos.y + size * 0.78f), IM_COL32(255, 255, 255, 255),
                  2.0f);
    draw->AddLine(ImVec2(pos.x + size * 0.42f, pos.y + size * 0.78f),
                  ImVec2(pos.x + size * 0.82f, pos.y + size * 0.25f), IM_COL32(255, 255, 255, 255),
                  2.0f);
  } else {
    draw->AddRect(pos, max, next ? kColorController : IM_COL32(140, 140, 140, 255), 3.0f, 0,
                  next ? 2.5f : 1.5f);
  }
}

void DrawActions(const TimelineModel& model, ViewState& state) {
  if (model.actions().empty()) {
    ImGui::TextDisabled("(no actions)");
    return;
  }
  ImDrawList* draw = ImGui::GetWindowDrawList();
  bool next_found = false;
  const float box = ImGui::GetFontSize();
  for (const ScenarioAction& action : model.actions()) {
    const bool done = action.t_us <= state.playhead_us;
    const bool next = !done && !next_found;
    if (next) next_found = true;
    ImGui::PushID(action.index);
    const ImVec2 pos = ImGui::GetCursorScreenPos();
    if (next) {
      draw->AddRectFilled(pos,
                          ImVec2(pos.x + ImGui::GetContentRegionAvail().x,
                                 pos.y + ImGui::GetTextLineHeightWithSpacing()),
                          IM_COL32(90, 80, 20, 160), 3.0f);
    }
    TickBox(draw, ImVec2(pos.x + 2.0f, pos.y + 1.0f), box, done, next);
    ImGui::SetCursorScreenPos(ImVec2(pos.x + box + 10.0f, pos.y));
    char label[512];
    std::snprintf(label, sizeof(label), "at %lld ms  (t %s)   %s%s",
                  static_cast<long long>(action.at_ms), kit::FormatSeconds(action.t_us).c_str(),
                  action.text.c_str(), next ? "   <- next" : "");
    if (!done) ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.75f, 0.75f, 0.75f, 1.0f));
    if (ImGui::Selectable(label, false)) state.Seek(model, action.t_us);
    if (!done) ImGui::PopStyleColor();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("jump the playhead to this action");
    ImGui::PopID();
  }
}

void DrawExpectations(const TimelineModel& model, const ViewState& state) {
  if (model.expectations().empty()) {
    ImGui::TextDisabled("(no expectations)");
    return;
  }
  if (state.playhead_us < model.end_us()) {
    ImGui::TextDisabled("checked at the end of the run (%s)",
                        kit::FormatSeconds(model.end_us()).c_str());
  }
  if (ImGui::BeginTable(
          "expectations", 4,
          ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("metric");
    ImGui::TableSetupColumn("expected");
    ImGui::TableSetupColumn("actual");
    ImGui::TableSetupColumn("held");
    ImGui::TableHeadersRow();
    for (const Expectation& expectation : model.expectations()) {
      ImGui::TableNextRow();
      const ImVec4 color = ToVec4(expectation.ok ? kColorOk : kColorLost);
      ImGui::TableSetColumnIndex(0);
      ImGui::TextUnformatted(expectation.metric.c_str());
      ImGui::TableSetColumnIndex(1);
      ImGui::TextUnformatted(expectation.expected.c_str());
      ImGui::TableSetColumnIndex(2);
      ImGui::TextColored(color, "%lld", static_cast<long long>(expectation.actual));
      ImGui::TableSetColumnIndex(3);
      ImGui::TextColored(color, "%s", expectation.ok ? "ok" : "FAILED");
    }
    ImGui::EndTable();
  }
}

void DrawMetrics(const TimelineModel& model) {
  if (model.metrics().empty()) {
    ImGui::TextDisabled("(no metrics)");
    return;
  }
  const int columns = ImGui::GetContentRegionAvail().x > 520.0f ? 4 : 2;
  if (ImGui::BeginTable("metrics", columns,
                        ImGuiTableFlags_Borders | ImGuiTableFlags_SizingStretchProp)) {
    for (const auto& [name, value] : model.metrics()) {
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%s", name.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(value));
    }
    ImGui::EndTable();
  }
}

}  // namespace

void DrawScenarioPanel(const Runs& runs, ViewState& state) {
  const TimelineModel& model = runs.current();
  ImDrawList* draw = ImGui::GetWindowDrawList();

  // Title line and the verdict.
  const ImVec2 pos = ImGui::GetCursorScreenPos();
  const std::string title = model.header().scenario + "  /  " + model.header().variant;
  kit::Text(draw, pos, title, IM_COL32(245, 245, 245, 255), 1.4f);
  const float title_w = kit::PillSize(title, 1.4f).x;
  const ImU32 verdict_color = model.ok() ? kColorOk : kColorLost;
  kit::Pill(draw, ImVec2(pos.x + title_w + 8.0f, pos.y),
            model.ok() ? "EXPECTATIONS MET" : "EXPECTATIONS FAILED", verdict_color,
            kit::TextOn(verdict_color), true, 1.2f);
  ImGui::Dummy(ImVec2(10.0f, ImGui::GetFontSize() * 1.4f + 6.0f));
  ImGui::TextDisabled(
      "%s   seed %llu   trace level %s   playhead %s of %s", model.KafkaVersionLabel().c_str(),
      static_cast<unsigned long long>(model.header().seed),
      std::string(sim::TraceLevelName(model.header().level)).c_str(),
      kit::FormatSeconds(state.playhead_us).c_str(), kit::FormatSeconds(model.end_us()).c_str());

  if (ImGui::CollapsingHeader("Description", ImGuiTreeNodeFlags_DefaultOpen)) {
    DrawDescription(model.description());
  }
  if (ImGui::CollapsingHeader("Actions", ImGuiTreeNodeFlags_DefaultOpen)) {
    DrawActions(model, state);
  }
  if (ImGui::CollapsingHeader("Expectations", ImGuiTreeNodeFlags_DefaultOpen)) {
    DrawExpectations(model, state);
  }
  if (ImGui::CollapsingHeader("Metrics", ImGuiTreeNodeFlags_DefaultOpen)) {
    DrawMetrics(model);
  }
}

}  // namespace ksim::viz
