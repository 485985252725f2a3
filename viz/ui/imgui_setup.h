// The style and font every ImGui context of the viewer gets: both backends (viz/backend/) and
// the benchmarks set their context up with it, so that the window, the headless screenshot and
// the measured frame look alike.
#pragma once

namespace ksim::viz {

// The dark style, a TrueType font from the system (DejaVu Sans when installed, else ImGui's
// built-in one; CJK glyphs merged from a fallback font when one is installed) at `font_px`, ini
// file off. REQUIRES: a current ImGui context whose font atlas is not built yet.
void SetUpImGui(float font_px);

}  // namespace ksim::viz
