// The headless renderer (viz/backend/egl.cc) end to end: the delivery-semantics trio run in
// process at trace level messages, a timeline model per variant, RenderScreenshot into a real
// directory, the PNG decoded back (stb_image) and its pixels checked: the whole layout and each
// panel alone draw something (not one flat background), the partitions panel shows the record
// cells in their records' colours and the duplicates' flags, the ledger the duplicated rows.
//
// No skipping: where EGL's surfaceless platform is missing the test fails (CI installs Mesa's
// EGL, scripts/bootstrap.sh).
#include <gtest/gtest.h>
#include <stb_image.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/check.h"
#include "sim/kernel/trace.h"
#include "sim/runner/runner.h"
#include "sim/scenario/loader.h"
#include "tests/support/core/temp_dir.h"
#include "viz/backend/backend.h"
#include "viz/model/scenario_models.h"
#include "viz/model/timeline_model.h"
#include "viz/ui/palette.h"
#include "viz/ui/view_cache.h"
#include "viz/ui/view_state.h"

namespace ksim::viz {
namespace {

namespace fs = std::filesystem;

fs::path SourceRoot() { return fs::path(KSIM_SOURCE_DIR); }

struct Trio {
  std::vector<std::string> names;
  std::vector<TimelineModel> models;
  Runs runs;
  size_t Index(const std::string& name) const {
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) return i;
    }
    ADD_FAILURE() << "no run " << name;
    return 0;
  }
};

// The trio runs once for the whole file (a few seconds each under the sanitizers).
const Trio& DeliverySemantics() {
  static const Trio* trio = [] {
    auto* built = new Trio;
    const std::string path = (SourceRoot() / "scenarios/teaching/delivery-semantics.json").string();
    Result<sim::Scenario> scenario = sim::LoadScenario(path);
    KSIM_CHECK_MSG(scenario.ok(), scenario.status().message().c_str());
    ScenarioModelsOptions options;
    options.level = sim::TraceLevel::kMessages;
    options.name = path;
    Result<std::vector<TimelineModel>> models = ModelsOfScenario(*scenario, options);
    KSIM_CHECK_MSG(models.ok(), models.status().message().c_str());
    built->models = std::move(models).value();
    for (const TimelineModel& model : built->models) built->names.push_back(model.header().variant);
    for (const TimelineModel& model : built->models) built->runs.models.push_back(&model);
    return built;
  }();
  return *trio;
}

struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgba;

  uint32_t At(int x, int y) const {
    const uint8_t* p = &rgba[(static_cast<size_t>(y) * width + x) * 4];
    return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24);
  }
  // Distinct colours in [x0, x1) x [y0, y1).
  size_t DistinctColors(int x0, int y0, int x1, int y1) const {
    std::map<uint32_t, int> colors;
    for (int y = y0; y < y1; ++y) {
      for (int x = x0; x < x1; ++x) ++colors[At(x, y)];
    }
    return colors.size();
  }
  // Pixels of rows [y0, y1) whose RGB is within `tolerance` of `color` (an ImU32: R in the low
  // byte).
  size_t CountNear(ImU32 color, int tolerance, int y0, int y1) const {
    size_t count = 0;
    const int r = color & 0xff, g = (color >> 8) & 0xff, b = (color >> 16) & 0xff;
    for (size_t i = static_cast<size_t>(y0) * width * 4; i < static_cast<size_t>(y1) * width * 4;
         i += 4) {
      if (std::abs(rgba[i] - r) <= tolerance && std::abs(rgba[i + 1] - g) <= tolerance &&
          std::abs(rgba[i + 2] - b) <= tolerance) {
        ++count;
      }
    }
    return count;
  }
  size_t CountNear(ImU32 color, int tolerance) const {
    return CountNear(color, tolerance, 0, height);
  }
  // Share of pixels (in 1/1000) of [x0, x1) x [y0, y1) that differ from its most common colour.
  int PerMilleNotBackground(int x0, int y0, int x1, int y1) const {
    std::map<uint32_t, size_t> colors;
    for (int y = y0; y < y1; ++y) {
      for (int x = x0; x < x1; ++x) ++colors[At(x, y)];
    }
    size_t most = 0;
    for (const auto& [color, count] : colors) most = std::max(most, count);
    const size_t total = static_cast<size_t>(x1 - x0) * static_cast<size_t>(y1 - y0);
    return static_cast<int>((total - most) * 1000 / total);
  }
  int PerMilleNotBackground() const { return PerMilleNotBackground(0, 0, width, height); }
};

Image ReadPng(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string png = bytes.str();
  EXPECT_GT(png.size(), 8u) << path;
  EXPECT_EQ(png.substr(1, 3), "PNG") << path;
  Image image;
  int channels = 0;
  stbi_uc* pixels = stbi_load_from_memory(reinterpret_cast<const stbi_uc*>(png.data()),
                                          static_cast<int>(png.size()), &image.width, &image.height,
                                          &channels, 4);
  if (pixels == nullptr) {
    ADD_FAILURE() << path << " does not decode: " << stbi_failure_reason();
    return image;
  }
  image.rgba.assign(pixels, pixels + static_cast<size_t>(image.width) * image.height * 4);
  stbi_image_free(pixels);
  return image;
}

class ScreenshotTest : public ::testing::Test {
 protected:
  // Renders with the playhead at `at_ms` of scenario time in run `run`, one panel alone or the
  // whole layout, and decodes the PNG.
  Image Render(const std::string& run, int at_ms, std::optional<Panel> panel, int width,
               int height) {
    const Trio& trio = DeliverySemantics();
    Runs runs = trio.runs;
    runs.active = trio.Index(run);
    const TimelineModel& model = runs.current();
    ViewState state;
    ViewCache cache;
    state.active_run = runs.active;  // the run DrawViewer shows
    if (panel) {
      state.only_panel = true;
      state.only = *panel;
    }
    state.Seek(model, model.start_us() + TimeUs{at_ms} * 1000);
    ScreenshotOptions options;
    options.width = width;
    options.height = height;
    options.path = (fs::path(dir_.path()) / "shot.png").string();
    const Status rendered = RenderScreenshot(runs, state, cache, options);
    EXPECT_TRUE(rendered.ok()) << rendered.message();
    Image image = ReadPng(options.path);
    EXPECT_EQ(image.width, width);
    EXPECT_EQ(image.height, height);
    return image;
  }

  testing::TempDir dir_;
};

TEST(ScreenshotSetupTest, TrioRunsThreeVariantsAndTheBase) {
  const Trio& trio = DeliverySemantics();
  ASSERT_EQ(trio.models.size(), 4u);
  for (const TimelineModel& model : trio.models) {
    EXPECT_TRUE(model.has_messages());
    EXPECT_FALSE(model.records().empty());
  }
}

TEST_F(ScreenshotTest, FullLayoutFillsTheDisplayWithPanels) {
  const Image image = Render("at-least-once", 8000, std::nullopt, 1600, 1000);
  ASSERT_FALSE(image.rgba.empty());
  EXPECT_GE(image.PerMilleNotBackground(), 100);
  // Every ninth of the display holds some panel: text, borders, cells (a window's flat
  // background alone would be 1 or 2 colours).
  for (int row = 0; row < 3; ++row) {
    for (int column = 0; column < 3; ++column) {
      const int x0 = column * image.width / 3, x1 = (column + 1) * image.width / 3;
      const int y0 = row * image.height / 3, y1 = (row + 1) * image.height / 3;
      EXPECT_GE(image.DistinctColors(x0, y0, x1, y1), 12u)
          << "region " << column << "," << row << " looks empty";
    }
  }
}

TEST_F(ScreenshotTest, EveryPanelAloneDrawsSomething) {
  for (int i = 0; i < kPanelCount; ++i) {
    const Panel panel = static_cast<Panel>(i);
    const Image image = Render("at-least-once", 8000, panel, 900, 600);
    ASSERT_FALSE(image.rgba.empty()) << PanelName(panel);
    // Below the window's title bar (a panel that drew nothing would leave it flat).
    constexpr int kTitleBarPx = 40;
    EXPECT_GE(image.DistinctColors(0, kTitleBarPx, image.width, image.height), 16u)
        << PanelName(panel);
    EXPECT_GE(image.PerMilleNotBackground(0, kTitleBarPx, image.width, image.height), 20)
        << PanelName(panel);
  }
}

TEST_F(ScreenshotTest, PartitionsStripShowsRecordColoursAndDuplicateFlags) {
  const Trio& trio = DeliverySemantics();
  const TimelineModel& model = trio.models[trio.Index("at-least-once")];
  const Image image = Render("at-least-once", 4200, Panel::kPartitions, 1400, 700);
  ASSERT_FALSE(image.rgba.empty());
  // The cells of p1's records: some record colour covers many pixels.
  size_t cell_pixels = 0;
  for (int32_t record = 0; record < static_cast<int32_t>(model.records().size()); ++record) {
    cell_pixels += image.CountNear(RecordColor(model, record), 2);
  }
  EXPECT_GE(cell_pixels, 500u);
  // At 4.2 s the log's tail (offsets 0..57, following the HW) holds the retried records' second
  // copies: at-least-once writes duplicates into the log, their cells flagged in orange (below the
  // title bar and the legend, whose "duplicated" pill has that colour too).
  constexpr int kBelowLegendPx = 70;
  EXPECT_GE(image.CountNear(kColorDuplicated, 2, kBelowLegendPx, image.height), 20u);
}

TEST_F(ScreenshotTest, LedgerShowsDuplicatedRowsForAtLeastOnce) {
  const Image image = Render("at-least-once", 15000, Panel::kLedger, 1200, 700);
  ASSERT_FALSE(image.rgba.empty());
  // The rows, below the title, the filters and the header (whose "3 duplicated" is orange too).
  constexpr int kBelowHeaderPx = 100;
  EXPECT_GE(image.CountNear(kColorDuplicated, 8, kBelowHeaderPx, image.height), 20u);
}

TEST_F(ScreenshotTest, UnwritableDirectoryFailsWithoutAFile) {
  const Trio& trio = DeliverySemantics();
  ViewState state;
  ViewCache cache;
  ScreenshotOptions options;
  options.width = 200;
  options.height = 100;
  options.path = (fs::path(dir_.path()) / "missing" / "shot.png").string();
  const Status status = RenderScreenshot(trio.runs, state, cache, options);
  EXPECT_FALSE(status.ok());
  EXPECT_FALSE(fs::exists(options.path));
}

TEST_F(ScreenshotTest, OutOfRangeSizeIsRefused) {
  const Trio& trio = DeliverySemantics();
  ViewState state;
  ViewCache cache;
  ScreenshotOptions options;
  options.width = 0;
  options.height = 100;
  options.path = (fs::path(dir_.path()) / "shot.png").string();
  const Status status = RenderScreenshot(trio.runs, state, cache, options);
  EXPECT_EQ(status.code(), Errc::kInvalidArgument);
  EXPECT_FALSE(fs::exists(options.path));
  EXPECT_TRUE(fs::is_empty(dir_.path()));
}

}  // namespace
}  // namespace ksim::viz
