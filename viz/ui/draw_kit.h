// Small drawing pieces shared by the cluster, partitions and scenario panels (viz/ui/): pills
// (rounded labels), a star, dashed lines with arrows, a cross, and the viewer's time format.
// They draw into the ImDrawList given and keep no state. Private to viz/ui/.
// REQUIRES (every drawing function): a current ImGui context inside a frame.
#pragma once

#include <imgui.h>

#include <string>
#include <string_view>

#include "viz/model/timeline_model.h"

namespace ksim::viz::kit {

// A screen rectangle (ImGui's ImRect lives in imgui_internal.h).
struct Box {
  ImVec2 min;
  ImVec2 max;
  Box() = default;
  Box(ImVec2 min_in, ImVec2 max_in) : min(min_in), max(max_in) {}
  bool Contains(ImVec2 p) const {
    return p.x >= min.x && p.x < max.x && p.y >= min.y && p.y < max.y;
  }
};

// A rounded label at `pos` (top-left), filled with `fill` (or outlined in it when !filled);
// returns its size. `scale` multiplies the current font size.
ImVec2 Pill(ImDrawList* draw, ImVec2 pos, std::string_view text, ImU32 fill, ImU32 text_color,
            bool filled = true, float scale = 1.0f);
// The size Pill would take.
ImVec2 PillSize(std::string_view text, float scale = 1.0f);

// Text at `pos` at `scale` times the current font size.
void Text(ImDrawList* draw, ImVec2 pos, std::string_view text, ImU32 color, float scale = 1.0f);

// A filled five-pointed star centred on `center`.
void Star(ImDrawList* draw, ImVec2 center, float radius, ImU32 color);

// A dashed line from `a` to `b` (dash and gap in pixels).
void DashedLine(ImDrawList* draw, ImVec2 a, ImVec2 b, ImU32 color, float thickness, float dash,
                float gap);
// A filled arrow head at `tip`, pointing along from -> tip.
void ArrowHead(ImDrawList* draw, ImVec2 from, ImVec2 tip, ImU32 color, float size);
// An X across the rectangle.
void Cross(ImDrawList* draw, ImVec2 min, ImVec2 max, ImU32 color, float thickness);

// `color` with its alpha replaced by `alpha` (0..255).
ImU32 WithAlpha(ImU32 color, int alpha);
// Black or white, whichever reads on `background`.
ImU32 TextOn(ImU32 background);

// "4.138 s": trace time in seconds with milliseconds (integer arithmetic).
std::string FormatSeconds(TimeUs t_us);

}  // namespace ksim::viz::kit
