// SetUpImGui (viz/ui/imgui_setup.h): the style and font both backends and the tests share.
#include "viz/ui/imgui_setup.h"

#include <imgui.h>

#include <filesystem>

namespace ksim::viz {
namespace {

// Debian's fonts-dejavu-core path; the viewer falls back to ImGui's built-in font without it.
constexpr const char* kFontPaths[] = {
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
};

// CJK glyphs merged into the font when such a font is installed (Debian's fonts-droid-fallback,
// or Noto CJK): scenario descriptions quote the seed's Chinese notes.
constexpr const char* kCjkFontPaths[] = {
    "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
};

bool IsFile(const char* path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

}  // namespace

void SetUpImGui(float font_px) {
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // layout is ours, not a file in the working directory
  io.LogFilename = nullptr;
  // No keyboard navigation: the arrows, Space, Home and End are the timeline's keys.
  ImGui::StyleColorsDark();
  ImGuiStyle& style = ImGui::GetStyle();
  style.WindowRounding = 3.0f;
  style.FrameRounding = 2.0f;
  style.WindowBorderSize = 1.0f;

  bool loaded = false;
  for (const char* path : kFontPaths) {
    if (!IsFile(path)) continue;
    if (io.Fonts->AddFontFromFileTTF(path, font_px) != nullptr) {
      loaded = true;
      break;
    }
  }
  if (!loaded) {
    ImFontConfig config;
    config.SizePixels = font_px;
    io.Fonts->AddFontDefault(&config);
  }
  for (const char* path : kCjkFontPaths) {
    if (!IsFile(path)) continue;
    ImFontConfig merge;
    merge.MergeMode = true;  // into the font above: its glyphs first, these for what it lacks
    if (io.Fonts->AddFontFromFileTTF(
            path, font_px, &merge, io.Fonts->GetGlyphRangesChineseSimplifiedCommon()) != nullptr) {
      break;
    }
  }
}

}  // namespace ksim::viz
