// `ksim-viz`, the viewer's program (docs/viewer.md), which `ksim viz ARGS` runs as `ksim-viz
// ARGS` (tools/cmd_viz.cc): a binary of its own, so that `ksim` itself loads no window system or
// OpenGL library (a run, a check or an explore worker starts faster, and runs on a machine that
// has none). `ksim viz SCENARIO.json` runs the scenario in process (the base and every variant,
// or `--variant V`; `--seed` as for `ksim run`) at trace level messages, builds a timeline model
// per run (viz/model/timeline_model.h) and opens the window; `ksim viz A.jsonl [B.jsonl ...]`
// opens recorded traces (several: compared side by side). A file ending in .jsonl is a trace,
// anything else a scenario.
//
// `--screenshot out.png` renders one frame without a display (EGL, viz/backend/egl.cc) and
// exits: `--at-ms T` puts the playhead at T milliseconds of scenario time (the scenario's at_ms
// clock: 0 is scenario_start, model.start_us(); the run's end by default), `--panel NAME` draws
// one panel alone, `--size WxH` the image size (default 1600x1000). `--at-ms` also places the
// window's playhead; `--frames N` closes the window after N frames (smoke tests, demos).
//
// Exit codes (tools/commands.h): 0 the window was closed or the screenshot written; 2 bad input
// (missing or corrupt file, unknown variant or panel, bad size, --at-ms outside the run) or no
// way to show it (no display for a window, no EGL for a screenshot), with one line on stderr
// naming the thing and what is valid. A failed screenshot never leaves a partial PNG.
#include <CLI/CLI.hpp>
#include <charconv>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/kernel/trace.h"
#include "sim/scenario/loader.h"
#include "tools/allocator.h"
#include "tools/args.h"
#include "viz/backend/backend.h"
#include "viz/model/scenario_models.h"
#include "viz/model/timeline_model.h"
#include "viz/ui/view_cache.h"
#include "viz/ui/view_state.h"

namespace ksim::tools {
namespace {

struct VizArgs {
  std::vector<std::string> files;
  std::string seed_text;
  std::string variant;
  std::string screenshot_path;
  std::string at_ms_text;
  std::string panel_name;
  std::string size_text = "1600x1000";
  std::string frames_text;
};

int BadInput(const std::string& message) {
  std::cerr << "ksim viz: " << message << "\n";
  return 2;
}

bool IsTrace(const std::string& path) { return path.ends_with(".jsonl"); }

// A non-negative decimal integer, the whole text.
std::optional<int64_t> ParseCount(const std::string& text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0) {
    return std::nullopt;
  }
  return value;
}

Result<std::pair<int, int>> ParseSize(const std::string& text) {
  const size_t x = text.find('x');
  const Status bad(Errc::kInvalidArgument,
                   "--size '" + text + "' is not a size: expected WIDTHxHEIGHT in pixels, each " +
                       "64 to 8192 (e.g. 1600x1000)");
  if (x == std::string::npos) return bad;
  const std::optional<int64_t> width = ParseCount(text.substr(0, x));
  const std::optional<int64_t> height = ParseCount(text.substr(x + 1));
  if (!width || !height || *width < 64 || *height < 64 || *width > 8192 || *height > 8192) {
    return bad;
  }
  return std::pair<int, int>(static_cast<int>(*width), static_cast<int>(*height));
}

std::string PanelNames() {
  std::string names;
  for (int i = 0; i < viz::kPanelCount; ++i) {
    names += std::string(i == 0 ? "" : ", ") + viz::PanelName(static_cast<viz::Panel>(i));
  }
  return names;
}

// Runs the scenario's selected variants at trace level messages and builds their models.
Result<std::vector<viz::TimelineModel>> ModelsFromScenario(const VizArgs& args) {
  std::optional<uint64_t> seed;
  if (!args.seed_text.empty()) {
    KSIM_ASSIGN_OR_RETURN(seed, ParseSeed(args.seed_text));
  }
  KSIM_ASSIGN_OR_RETURN(sim::Scenario scenario, sim::LoadScenario(args.files.front()));
  viz::ScenarioModelsOptions options;
  options.variant = args.variant;
  options.seed = seed;
  options.level = sim::TraceLevel::kMessages;
  options.name = args.files.front();
  return viz::ModelsOfScenario(scenario, options);
}

Result<std::vector<viz::TimelineModel>> ModelsFromTraces(const VizArgs& args) {
  std::vector<viz::TimelineModel> models;
  for (const std::string& path : args.files) {
    KSIM_ASSIGN_OR_RETURN(viz::TimelineModel model, viz::TimelineModel::Load(path));
    models.push_back(std::move(model));
  }
  return models;
}

int RunViz(const VizArgs& args) {
  // Arguments first, before anything runs.
  size_t traces = 0;
  for (const std::string& file : args.files) {
    std::error_code error;
    if (!std::filesystem::is_regular_file(file, error)) {
      return BadInput("no such file: " + file + " (expected a scenario .json or traces .jsonl)");
    }
    traces += IsTrace(file) ? 1 : 0;
  }
  if (traces != 0 && traces != args.files.size()) {
    return BadInput("give one scenario or one or more traces (.jsonl), not both");
  }
  if (traces == 0 && args.files.size() > 1) {
    return BadInput("one scenario at a time (its variants are compared); got " +
                    std::to_string(args.files.size()) + " files");
  }
  if (traces != 0 && (!args.variant.empty() || !args.seed_text.empty())) {
    return BadInput("--variant and --seed apply to a scenario; a trace is one recorded run");
  }
  const bool screenshot = !args.screenshot_path.empty();
  if (!screenshot && !args.panel_name.empty()) {
    return BadInput("--panel goes with --screenshot");
  }
  if (screenshot && !args.frames_text.empty()) {
    return BadInput("--frames is for the window; --screenshot renders one frame");
  }
  int max_frames = 0;
  if (!args.frames_text.empty()) {
    const std::optional<int64_t> frames = ParseCount(args.frames_text);
    if (!frames || *frames < 1 || *frames > 1'000'000) {
      return BadInput("--frames '" + args.frames_text +
                      "' is not a frame count: expected 1 to 1000000");
    }
    max_frames = static_cast<int>(*frames);
  }
  std::optional<int64_t> at_ms;
  if (!args.at_ms_text.empty()) {
    at_ms = ParseCount(args.at_ms_text);
    if (!at_ms) {
      return BadInput("--at-ms '" + args.at_ms_text +
                      "' is not a time: expected milliseconds of scenario time, 0 or more");
    }
  }
  viz::ViewState state;
  viz::ViewCache cache;  // the panels' derived data, kept beside the state it belongs to
  if (!args.panel_name.empty()) {
    if (!viz::ParsePanelName(args.panel_name, &state.only)) {
      return BadInput("unknown panel \"" + args.panel_name + "\": valid panels are " +
                      PanelNames());
    }
    state.only_panel = true;
  }
  Result<std::pair<int, int>> size = ParseSize(args.size_text);
  if (!size.ok()) return BadInput(size.status().message());

  Result<std::vector<viz::TimelineModel>> models =
      traces != 0 ? ModelsFromTraces(args) : ModelsFromScenario(args);
  if (!models.ok()) return BadInput(models.status().message());
  viz::Runs runs;
  for (const viz::TimelineModel& model : *models) runs.models.push_back(&model);
  const viz::TimelineModel& model = runs.current();

  // Scenario time: T ms after scenario_start (the scenario's at_ms clock).
  viz::TimeUs playhead_us = model.end_us();
  if (at_ms) {
    const int64_t last_ms = (model.end_us() - model.start_us()) / 1000;
    if (*at_ms > last_ms) {
      return BadInput("--at-ms " + std::to_string(*at_ms) + " is beyond the run: valid 0 to " +
                      std::to_string(last_ms) + " ms of scenario time");
    }
    playhead_us = model.start_us() + *at_ms * 1000;
  }
  state.Seek(model, playhead_us);

  if (screenshot) {
    viz::ScreenshotOptions options;
    options.width = size->first;
    options.height = size->second;
    options.path = args.screenshot_path;
    const Status rendered = viz::RenderScreenshot(runs, state, cache, options);
    if (!rendered.ok()) {
      return BadInput("cannot render " + args.screenshot_path + ": " +
                      std::string(rendered.message()));
    }
    std::cout << "Screenshot: " << args.screenshot_path << "\n";
    return 0;
  }
  viz::WindowOptions options;
  options.width = size->first;
  options.height = size->second;
  options.title = "ksim viz " + args.files.front();
  options.max_frames = max_frames;
  const Status shown = viz::RunWindow(runs, state, cache, options);
  if (!shown.ok()) return BadInput(shown.message());
  return 0;
}

}  // namespace

}  // namespace ksim::tools

int main(int argc, char** argv) {
  ksim::tools::TuneAllocator();
  CLI::App app{
      "Open the viewer on a scenario (run in process) or on recorded traces; --screenshot "
      "renders one frame to a PNG without a display (exit 0 done, 2 bad input)",
      "ksim viz"};
  ksim::tools::VizArgs args;
  app.add_option("files", args.files,
                 "A scenario (JSON) or one or more traces (.jsonl; several are compared)")
      ->required();
  app.add_option("--seed", args.seed_text, "Seed for every run (default: the scenario's)");
  app.add_option("--variant", args.variant,
                 "Run only this variant (`base`: the scenario without a variant)");
  app.add_option("--screenshot", args.screenshot_path,
                 "Render one frame headless (EGL) to this PNG and exit");
  app.add_option("--at-ms", args.at_ms_text,
                 "The playhead, in ms of scenario time (default: the end)");
  app.add_option("--panel", args.panel_name,
                 "With --screenshot: draw only this panel (" + ksim::tools::PanelNames() + ")");
  app.add_option("--size", args.size_text, "Window or image size WIDTHxHEIGHT (1600x1000)");
  app.add_option("--frames", args.frames_text,
                 "Close the window after this many frames (smoke tests, demos)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;  // --help is 0; an argument error is bad input (tools/commands.h)
  }
  return ksim::tools::RunViz(args);
}
