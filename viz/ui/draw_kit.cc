// Drawing pieces shared by the panels (viz/ui/draw_kit.h).
#include "viz/ui/draw_kit.h"

#include <cmath>
#include <cstdio>

namespace ksim::viz::kit {
namespace {

constexpr float kPillPadX = 6.0f;
constexpr float kPillPadY = 2.0f;

}  // namespace

ImVec2 PillSize(std::string_view text, float scale) {
  const float font_px = ImGui::GetFontSize() * scale;
  ImVec2 text_size =
      ImGui::GetFont()->CalcTextSizeA(font_px, 1e9f, 0.0f, text.data(), text.data() + text.size());
  return ImVec2(text_size.x + 2 * kPillPadX, text_size.y + 2 * kPillPadY);
}

ImVec2 Pill(ImDrawList* draw, ImVec2 pos, std::string_view text, ImU32 fill, ImU32 text_color,
            bool filled, float scale) {
  const ImVec2 size = PillSize(text, scale);
  const ImVec2 max(pos.x + size.x, pos.y + size.y);
  const float rounding = size.y * 0.5f;
  if (filled) {
    draw->AddRectFilled(pos, max, fill, rounding);
  } else {
    draw->AddRect(pos, max, fill, rounding, 0, 1.5f);
  }
  Text(draw, ImVec2(pos.x + kPillPadX, pos.y + kPillPadY), text, text_color, scale);
  return size;
}

void Text(ImDrawList* draw, ImVec2 pos, std::string_view text, ImU32 color, float scale) {
  draw->AddText(ImGui::GetFont(), ImGui::GetFontSize() * scale, pos, color, text.data(),
                text.data() + text.size());
}

void Star(ImDrawList* draw, ImVec2 center, float radius, ImU32 color) {
  // Ten points alternating outer and inner radius, drawn as a fan of triangles (a star is not
  // convex, so one convex fill would be wrong).
  ImVec2 points[10];
  for (int i = 0; i < 10; ++i) {
    const float r = (i % 2 == 0) ? radius : radius * 0.45f;
    const float angle = -1.5707963f + static_cast<float>(i) * 0.6283185f;
    points[i] = ImVec2(center.x + r * std::cos(angle), center.y + r * std::sin(angle));
  }
  for (int i = 0; i < 10; ++i) {
    draw->AddTriangleFilled(center, points[i], points[(i + 1) % 10], color);
  }
}

void DashedLine(ImDrawList* draw, ImVec2 a, ImVec2 b, ImU32 color, float thickness, float dash,
                float gap) {
  const float dx = b.x - a.x;
  const float dy = b.y - a.y;
  const float length = std::sqrt(dx * dx + dy * dy);
  if (length < 1.0f) return;
  const float ux = dx / length;
  const float uy = dy / length;
  // A bounded loop: at most length / (dash + gap) + 1 dashes.
  for (float s = 0.0f; s < length; s += dash + gap) {
    const float e = (s + dash < length) ? s + dash : length;
    draw->AddLine(ImVec2(a.x + ux * s, a.y + uy * s), ImVec2(a.x + ux * e, a.y + uy * e), color,
                  thickness);
  }
}

void ArrowHead(ImDrawList* draw, ImVec2 from, ImVec2 tip, ImU32 color, float size) {
  const float dx = tip.x - from.x;
  const float dy = tip.y - from.y;
  const float length = std::sqrt(dx * dx + dy * dy);
  if (length < 1.0f) return;
  const float ux = dx / length;
  const float uy = dy / length;
  const ImVec2 base(tip.x - ux * size, tip.y - uy * size);
  draw->AddTriangleFilled(tip, ImVec2(base.x - uy * size * 0.6f, base.y + ux * size * 0.6f),
                          ImVec2(base.x + uy * size * 0.6f, base.y - ux * size * 0.6f), color);
}

void Cross(ImDrawList* draw, ImVec2 min, ImVec2 max, ImU32 color, float thickness) {
  draw->AddLine(min, max, color, thickness);
  draw->AddLine(ImVec2(min.x, max.y), ImVec2(max.x, min.y), color, thickness);
}

ImU32 WithAlpha(ImU32 color, int alpha) {
  if (alpha < 0) alpha = 0;
  if (alpha > 255) alpha = 255;
  return (color & ~IM_COL32_A_MASK) | (static_cast<ImU32>(alpha) << IM_COL32_A_SHIFT);
}

ImU32 TextOn(ImU32 background) {
  const int r = static_cast<int>((background >> IM_COL32_R_SHIFT) & 0xFF);
  const int g = static_cast<int>((background >> IM_COL32_G_SHIFT) & 0xFF);
  const int b = static_cast<int>((background >> IM_COL32_B_SHIFT) & 0xFF);
  // Integer luma (Rec. 601 weights, per mille).
  return (r * 299 + g * 587 + b * 114) / 1000 > 140 ? IM_COL32(15, 15, 15, 255)
                                                    : IM_COL32(245, 245, 245, 255);
}

std::string FormatSeconds(TimeUs t_us) {
  const bool negative = t_us < 0;
  const int64_t magnitude = negative ? -t_us : t_us;
  char buffer[48];
  std::snprintf(buffer, sizeof(buffer), "%s%lld.%03lld s", negative ? "-" : "",
                static_cast<long long>(magnitude / 1000000),
                static_cast<long long>((magnitude / 1000) % 1000));
  return buffer;
}

}  // namespace ksim::viz::kit
