// ViewState's logic over a real model (an in-process run of the delivery-semantics teaching
// scenario): playback advances by speed times wall time and stops at the end of the run, seeks
// clamp to the run and move the zoom window with the playhead without resizing it, and panel
// names round-trip.
#include "viz/ui/view_state.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "core/base/check.h"
#include "sim/kernel/trace.h"
#include "sim/runner/runner.h"
#include "sim/scenario/loader.h"

namespace ksim::viz {
namespace {

namespace fs = std::filesystem;

constexpr TimeUs kSecondUs = 1'000'000;

const TimelineModel& DeliverySemantics() {
  static const std::unique_ptr<TimelineModel> model = [] {
    const fs::path source(KSIM_SOURCE_DIR);
    Result<sim::Scenario> scenario =
        sim::LoadScenario((source / "scenarios/teaching/delivery-semantics.json").string());
    KSIM_CHECK(scenario.ok());
    sim::RunOptions options;
    options.keep_trace_bytes = true;
    Result<sim::RunResult> run = sim::RunScenario(*scenario, options);
    KSIM_CHECK(run.ok());
    Result<sim::Trace> trace = sim::ParseTrace(run->trace_bytes, "delivery-semantics");
    KSIM_CHECK(trace.ok());
    Result<TimelineModel> built = TimelineModel::Build(*trace, "delivery-semantics");
    KSIM_CHECK(built.ok());
    return std::make_unique<TimelineModel>(std::move(*built));
  }();
  return *model;
}

TEST(ViewStateTest, TickAdvancesBySpeedTimesWallTime) {
  const TimelineModel& model = DeliverySemantics();
  ASSERT_GT(model.end_us(), 10 * kSecondUs);
  ViewState state;
  state.Seek(model, kSecondUs);
  state.playing = true;
  state.speed = 2.0;
  state.Tick(model, 0.5);
  EXPECT_EQ(state.playhead_us, 2 * kSecondUs);
  state.speed = 100.0;
  state.Tick(model, 0.05);
  EXPECT_EQ(state.playhead_us, 7 * kSecondUs);
  EXPECT_TRUE(state.playing);
}

TEST(ViewStateTest, SlowSpeedCarriesFractionsBetweenFrames) {
  const TimelineModel& model = DeliverySemantics();
  ViewState state;
  state.playing = true;
  state.speed = 0.1;  // 1666.67 us a frame at 60 fps
  for (int frame = 0; frame < 600; ++frame) state.Tick(model, 1.0 / 60);
  // Ten wall seconds at 0.1x: one simulated second, give or take the last fraction.
  EXPECT_NEAR(static_cast<double>(state.playhead_us), 1e6, 1.0);
}

TEST(ViewStateTest, TickDoesNothingWhilePaused) {
  const TimelineModel& model = DeliverySemantics();
  ViewState state;
  state.Seek(model, 3 * kSecondUs);
  state.Tick(model, 1.0);
  EXPECT_EQ(state.playhead_us, 3 * kSecondUs);
}

TEST(ViewStateTest, TickStopsAtTheEnd) {
  const TimelineModel& model = DeliverySemantics();
  ViewState state;
  state.Seek(model, model.end_us() - 10);
  state.playing = true;
  state.Tick(model, 1.0);
  EXPECT_EQ(state.playhead_us, model.end_us());
  EXPECT_FALSE(state.playing);
  state.Tick(model, 1.0);
  EXPECT_EQ(state.playhead_us, model.end_us());
}

TEST(ViewStateTest, PlayingKeepsTheWindowAroundThePlayhead) {
  const TimelineModel& model = DeliverySemantics();
  ViewState state;
  state.window_begin_us = 0;
  state.window_end_us = kSecondUs;
  state.Seek(model, 900'000);
  state.playing = true;
  state.Tick(model, 0.5);
  EXPECT_EQ(state.playhead_us, 1'400'000);
  EXPECT_LE(state.window_begin_us, state.playhead_us);
  EXPECT_GE(state.window_end_us, state.playhead_us);
  EXPECT_EQ(state.window_end_us - state.window_begin_us, kSecondUs);
}

TEST(ViewStateTest, SeekClampsToTheRun) {
  const TimelineModel& model = DeliverySemantics();
  ViewState state;
  state.Seek(model, -5);
  EXPECT_EQ(state.playhead_us, 0);
  state.Seek(model, model.end_us() + kSecondUs);
  EXPECT_EQ(state.playhead_us, model.end_us());
}

TEST(ViewStateTest, SeekShiftsTheWindowWithoutResizingIt) {
  const TimelineModel& model = DeliverySemantics();
  ViewState state;
  state.window_begin_us = kSecondUs;
  state.window_end_us = 2 * kSecondUs;
  state.Seek(model, 1'500'000);  // inside: the window stays
  EXPECT_EQ(state.window_begin_us, kSecondUs);
  EXPECT_EQ(state.window_end_us, 2 * kSecondUs);
  state.Seek(model, 5 * kSecondUs);  // after it: shifted right, to end at the playhead
  EXPECT_EQ(state.window_begin_us, 4 * kSecondUs);
  EXPECT_EQ(state.window_end_us, 5 * kSecondUs);
  state.Seek(model, 500'000);  // before it: shifted left, to begin at the playhead
  EXPECT_EQ(state.window_begin_us, 500'000);
  EXPECT_EQ(state.window_end_us, 1'500'000);
  state.Seek(model, model.end_us());  // the window stays inside the run
  EXPECT_EQ(state.window_end_us, model.end_us());
  EXPECT_EQ(state.window_begin_us, model.end_us() - kSecondUs);
}

TEST(ViewStateTest, SeekWithoutAWindowShowsTheWholeRun) {
  const TimelineModel& model = DeliverySemantics();
  ViewState state;
  state.Seek(model, 3 * kSecondUs);
  EXPECT_EQ(state.window_begin_us, 0);
  EXPECT_EQ(state.window_end_us, model.end_us());
}

TEST(ViewStateTest, PanelNamesRoundTrip) {
  for (int i = 0; i < kPanelCount; ++i) {
    const Panel panel = static_cast<Panel>(i);
    Panel parsed = Panel::kScenario;
    ASSERT_TRUE(ParsePanelName(PanelName(panel), &parsed)) << PanelName(panel);
    EXPECT_EQ(parsed, panel);
  }
  EXPECT_STREQ(PanelName(Panel::kLedger), "ledger");
  Panel untouched = Panel::kCompare;
  EXPECT_FALSE(ParsePanelName("ledgers", &untouched));
  EXPECT_FALSE(ParsePanelName("", &untouched));
  EXPECT_EQ(untouched, Panel::kCompare);
}

}  // namespace
}  // namespace ksim::viz
