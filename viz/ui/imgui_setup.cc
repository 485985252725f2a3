// SetUpImGui (viz/ui/backend.h): the style and font both backends and the tests share.
#include <imgui.h>

#include <filesystem>

#include "viz/ui/backend.h"

namespace ksim::viz {
namespace {

// Debian's fonts-dejavu-core path; the viewer falls back to ImGui's built-in font without it.
constexpr const char* kFontPaths[] = {
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
};

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
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) continue;
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
}

}  // namespace ksim::viz
