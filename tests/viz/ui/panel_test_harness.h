// Test harness for the viewer's panels without a display: real models from in-process runs of
// shipped scenarios (cached per scenario, variant and trace level for the test binary's life),
// and an ImGui context with no backend (font atlas built, display size and frame time set, a
// key map) in which a test draws one panel per frame inside a window filling the display (or
// the whole viewer, which opens its own windows) and drives the mouse and keys through ImGuiIO,
// as a backend would. Each harness draws in its own context, so a test may keep several (one
// per window of a process). ImGui's own assertions abort, so a panel that misuses ImGui fails
// the test.
#pragma once

#include <gtest/gtest.h>
#include <imgui.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "sim/kernel/trace.h"
#include "sim/runner/runner.h"
#include "sim/scenario/loader.h"
#include "viz/model/scenario_models.h"
#include "viz/model/timeline_model.h"

namespace ksim::viz::testing {

// The model of `file` (relative to scenarios/) run as `variant` ("base" or a variant's name)
// traced at `level`; null (with a gtest failure) when any step fails.
inline const TimelineModel* ScenarioModel(const std::string& file, const std::string& variant,
                                          sim::TraceLevel level) {
  using Key = std::tuple<std::string, std::string, sim::TraceLevel>;
  static std::map<Key, std::unique_ptr<TimelineModel>> cache;
  const Key key{file, variant, level};
  if (auto it = cache.find(key); it != cache.end()) return it->second.get();
  const std::filesystem::path source(KSIM_SOURCE_DIR);
  Result<sim::Scenario> loaded = sim::LoadScenario((source / "scenarios" / file).string());
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (!loaded.ok()) return nullptr;
  ScenarioModelsOptions options;
  options.variant = variant;
  options.level = level;
  options.name = file;
  Result<std::vector<TimelineModel>> models = ModelsOfScenario(*loaded, options);
  EXPECT_TRUE(models.ok()) << models.status().ToString();
  if (!models.ok()) return nullptr;
  auto owned = std::make_unique<TimelineModel>(std::move(models->front()));
  const TimelineModel* result = owned.get();
  cache.emplace(key, std::move(owned));
  return result;
}

// Key indices the harness maps ImGui's named keys to (any distinct values below 512).
inline constexpr int kKeyLeft = 1;
inline constexpr int kKeyRight = 2;
inline constexpr int kKeySpace = 3;
inline constexpr int kKeyHome = 4;
inline constexpr int kKeyEnd = 5;

class ImGuiHarness {
 public:
  explicit ImGuiHarness(ImVec2 display = ImVec2(1600, 1000)) {
    context_ = ImGui::CreateContext();
    Activate();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = display;
    io.DeltaTime = 1.0f / 60.0f;
    unsigned char* pixels = nullptr;
    int width = 0;
    int height = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &width, &height);
    io.KeyMap[ImGuiKey_LeftArrow] = kKeyLeft;
    io.KeyMap[ImGuiKey_RightArrow] = kKeyRight;
    io.KeyMap[ImGuiKey_Space] = kKeySpace;
    io.KeyMap[ImGuiKey_Home] = kKeyHome;
    io.KeyMap[ImGuiKey_End] = kKeyEnd;
    io.MousePos = ImVec2(-1, -1);
  }
  ~ImGuiHarness() {
    Activate();
    ImGui::DestroyContext(context_);
  }
  ImGuiHarness(const ImGuiHarness&) = delete;
  ImGuiHarness& operator=(const ImGuiHarness&) = delete;

  // Makes this harness's context ImGui's current one (io() and the frames do it themselves).
  void Activate() { ImGui::SetCurrentContext(context_); }

  ImGuiIO& io() {
    Activate();
    return ImGui::GetIO();
  }

  // One frame: `draw` inside a window filling the display. Returns the window's vertex count.
  template <typename Draw>
  int Frame(Draw draw) {
    Activate();
    ImGui::NewFrame();
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
    ImGui::Begin("panel", nullptr, ImGuiWindowFlags_NoDecoration);
    draw();
    const int vertices = ImGui::GetWindowDrawList()->VtxBuffer.Size;
    ImGui::End();
    ImGui::Render();
    return vertices;
  }

  // One frame of `draw` as it is, for a `draw` that opens its own windows (DrawViewer).
  template <typename Draw>
  void BareFrame(Draw draw) {
    Activate();
    ImGui::NewFrame();
    draw();
    ImGui::Render();
  }

  // A left click at `at`: the mouse moves there, goes down one frame and up the next.
  template <typename Draw>
  void Click(ImVec2 at, Draw draw) {
    io().MousePos = at;
    Frame(draw);
    io().MouseDown[0] = true;
    Frame(draw);
    io().MouseDown[0] = false;
    Frame(draw);
  }

  // Presses `key` (a kKey* index) for one frame, with Shift held when `shift`, then releases.
  template <typename Draw>
  void PressKey(int key, bool shift, Draw draw) {
    io().KeyShift = shift;
    io().KeysDown[key] = true;
    Frame(draw);
    io().KeysDown[key] = false;
    io().KeyShift = false;
    Frame(draw);
  }

 private:
  ImGuiContext* context_ = nullptr;
};

inline ImVec2 Center(ImVec2 min, ImVec2 max) {
  return ImVec2((min.x + max.x) / 2, (min.y + max.y) / 2);
}

}  // namespace ksim::viz::testing
