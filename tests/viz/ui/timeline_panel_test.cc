// The Timeline panel (and its neighbours Messages and Compare, which draw the timeline's window
// and the runs side by side) over real models of the delivery-semantics trio, in an ImGui
// context with no backend: the keyboard jumps to the model's next and previous events of the
// chosen kind and steps one event, Space plays and playback stops at the end; the messages
// diagram and the comparison draw at several playhead times without an ImGui assertion, and a
// click on a run's name in Compare asks for that run.
#include <gtest/gtest.h>
#include <imgui.h>

#include <optional>
#include <string>
#include <vector>

#include "tests/viz/ui/panel_test_harness.h"
#include "viz/ui/panels.h"
#include "viz/ui/view_cache.h"

namespace ksim::viz {
namespace {

using testing::ImGuiHarness;
using testing::kKeyEnd;
using testing::kKeyHome;
using testing::kKeyLeft;
using testing::kKeyRight;
using testing::kKeySpace;
using testing::ScenarioModel;

constexpr const char* kScenario = "teaching/delivery-semantics.json";

TEST(TimelinePanelTest, ShiftRightJumpsToTheNextFaultShiftLeftBack) {
  const TimelineModel* model = ScenarioModel(kScenario, "at-least-once", sim::TraceLevel::kState);
  ASSERT_NE(model, nullptr);
  Runs runs{{model}, 0};
  ViewState state;
  ViewCache cache;
  state.jump_kind = EventKind::kFault;
  ImGuiHarness imgui;
  const auto draw = [&] { DrawTimelinePanel(runs, state, cache); };
  EXPECT_GT(imgui.Frame(draw), 0);
  EXPECT_EQ(state.window_begin_us, 0) << "the first frame shows the whole run";
  EXPECT_EQ(state.window_end_us, model->end_us());

  const std::optional<TimeUs> first = model->NextEvent(0, EventKind::kFault);
  ASSERT_TRUE(first.has_value()) << "delivery-semantics cuts a link and crashes the leader";
  imgui.PressKey(kKeyRight, /*shift=*/true, draw);
  EXPECT_EQ(state.playhead_us, *first);
  ASSERT_GE(state.selected_event, 0);
  EXPECT_EQ(model->events()[state.selected_event].kind, EventKind::kFault);
  EXPECT_EQ(model->events()[state.selected_event].t_us, *first);

  const std::optional<TimeUs> second = model->NextEvent(*first, EventKind::kFault);
  ASSERT_TRUE(second.has_value());
  imgui.PressKey(kKeyRight, /*shift=*/true, draw);
  EXPECT_EQ(state.playhead_us, *second);

  imgui.PressKey(kKeyLeft, /*shift=*/true, draw);
  EXPECT_EQ(state.playhead_us, *model->PreviousEvent(*second, EventKind::kFault));

  // Another kind: the next election after the crash.
  state.jump_kind = EventKind::kElection;
  const std::optional<TimeUs> election = model->NextEvent(state.playhead_us, EventKind::kElection);
  ASSERT_TRUE(election.has_value()) << "broker 3 is elected after broker 2's session ends";
  imgui.PressKey(kKeyRight, /*shift=*/true, draw);
  EXPECT_EQ(state.playhead_us, *election);
}

TEST(TimelinePanelTest, ArrowsStepOneEventHomeAndEndGoToTheEdges) {
  const TimelineModel* model = ScenarioModel(kScenario, "at-least-once", sim::TraceLevel::kState);
  ASSERT_NE(model, nullptr);
  Runs runs{{model}, 0};
  ViewState state;
  ViewCache cache;
  ImGuiHarness imgui;
  const auto draw = [&] { DrawTimelinePanel(runs, state, cache); };
  imgui.Frame(draw);
  state.Seek(*model, 3'000'000);
  const size_t next = model->FirstEventAtOrAfter(3'000'001);
  ASSERT_LT(next, model->events().size());
  imgui.PressKey(kKeyRight, /*shift=*/false, draw);
  EXPECT_EQ(state.playhead_us, model->events()[next].t_us);
  EXPECT_EQ(state.selected_event, static_cast<int32_t>(next));

  const TimeUs here = state.playhead_us;
  const size_t before = model->FirstEventAtOrAfter(here);
  ASSERT_GT(before, 0u);
  imgui.PressKey(kKeyLeft, /*shift=*/false, draw);
  EXPECT_EQ(state.playhead_us, model->events()[before - 1].t_us);
  EXPECT_LT(state.playhead_us, here);

  imgui.PressKey(kKeyEnd, false, draw);
  EXPECT_EQ(state.playhead_us, model->end_us());
  imgui.PressKey(kKeyHome, false, draw);
  EXPECT_EQ(state.playhead_us, 0);
}

TEST(TimelinePanelTest, SpacePlaysAndPlaybackStopsAtTheEnd) {
  const TimelineModel* model = ScenarioModel(kScenario, "at-least-once", sim::TraceLevel::kState);
  ASSERT_NE(model, nullptr);
  Runs runs{{model}, 0};
  ViewState state;
  ViewCache cache;
  state.speed = 100.0;
  ImGuiHarness imgui;
  // As DrawViewer does: the frame's Tick, then the panel.
  const auto draw = [&] {
    state.Tick(*model, ImGui::GetIO().DeltaTime);
    DrawTimelinePanel(runs, state, cache);
  };
  imgui.Frame(draw);
  imgui.PressKey(kKeySpace, false, draw);
  EXPECT_TRUE(state.playing);
  const TimeUs after_press = state.playhead_us;
  imgui.Frame(draw);
  EXPECT_GT(state.playhead_us, after_press);
  EXPECT_LE(state.playhead_us, state.window_end_us);
  EXPECT_GE(state.playhead_us, state.window_begin_us);
  // 100x at 60 fps: 1.67 s of the run a frame; the run ends within a few hundred frames.
  for (int frame = 0; frame < 2000 && state.playing; ++frame) imgui.Frame(draw);
  EXPECT_FALSE(state.playing);
  EXPECT_EQ(state.playhead_us, model->end_us());
}

TEST(TimelinePanelTest, PressingAndDraggingOnTheLanesMovesThePlayhead) {
  const TimelineModel* model = ScenarioModel(kScenario, "at-least-once", sim::TraceLevel::kState);
  ASSERT_NE(model, nullptr);
  Runs runs{{model}, 0};
  ViewState state;
  ViewCache cache;
  ImGuiHarness imgui;  // 1600 x 1000: the lanes span y ~150..450 whatever the font
  const auto draw = [&] { DrawTimelinePanel(runs, state, cache); };
  imgui.Frame(draw);
  ASSERT_EQ(state.window_end_us, model->end_us());
  // The lanes start after the 96 px label column and end at the window's right padding.
  const float left = ImGui::GetStyle().WindowPadding.x + 96.0f;
  const float right = 1600.0f - ImGui::GetStyle().WindowPadding.x;
  const auto x_at = [&](double fraction) {
    return static_cast<float>(left + fraction * (right - left));
  };
  const double us_per_px = static_cast<double>(model->end_us()) / (right - left);
  imgui.io().MousePos = ImVec2(x_at(0.5), 300);
  imgui.Frame(draw);
  imgui.io().MouseDown[0] = true;
  imgui.Frame(draw);
  EXPECT_NEAR(static_cast<double>(state.playhead_us), model->end_us() * 0.5, 2 * us_per_px);
  // Dragging (button still down) follows the mouse.
  imgui.io().MousePos = ImVec2(x_at(0.25), 300);
  imgui.Frame(draw);
  EXPECT_NEAR(static_cast<double>(state.playhead_us), model->end_us() * 0.25, 2 * us_per_px);
  imgui.io().MouseDown[0] = false;
  imgui.Frame(draw);
  // Moving without the button does not.
  const TimeUs released = state.playhead_us;
  imgui.io().MousePos = ImVec2(x_at(0.75), 300);
  imgui.Frame(draw);
  EXPECT_EQ(state.playhead_us, released);
}

TEST(TimelinePanelTest, DrawsZoomedInAndOutWithoutAsserting) {
  const TimelineModel* model =
      ScenarioModel(kScenario, "at-least-once", sim::TraceLevel::kMessages);
  ASSERT_NE(model, nullptr);
  Runs runs{{model}, 0};
  ViewState state;
  ViewCache cache;
  ImGuiHarness imgui;
  const auto draw = [&] { DrawTimelinePanel(runs, state, cache); };
  const int whole = imgui.Frame(draw);
  EXPECT_GT(whole, 0);
  // Zoom to 2 ms around the crash, with the mouse hovering the lanes (tooltips drawn).
  const TimeUs crash = *model->NextEvent(4'000'000, EventKind::kFault);
  state.window_begin_us = crash - 1000;
  state.window_end_us = crash + 1000;
  state.Seek(*model, crash);
  imgui.io().MousePos = ImVec2(800, 200);
  EXPECT_GT(imgui.Frame(draw), 0);
  for (char c : std::string("--------")) {
    imgui.io().AddInputCharacter(c);
    imgui.Frame(draw);
  }
  EXPECT_GT(state.window_end_us - state.window_begin_us, 2000) << "'-' zooms out";
  EXPECT_LE(state.window_begin_us, state.playhead_us);
  EXPECT_GE(state.window_end_us, state.playhead_us);
}

TEST(MessagesPanelTest, DrawsTheWindowsMessagesAtSeveralTimes) {
  const TimelineModel* model =
      ScenarioModel(kScenario, "at-least-once", sim::TraceLevel::kMessages);
  ASSERT_NE(model, nullptr);
  ASSERT_TRUE(model->has_messages());
  ASSERT_FALSE(model->messages().empty());
  Runs runs{{model}, 0};
  ViewState state;
  ViewCache cache;
  ImGuiHarness imgui;
  const auto draw = [&] { DrawMessagesPanel(runs, state, cache); };
  // A second around the cut (2.5 s), one around broker 2's restart (12 s), the whole run.
  for (TimeUs t : {TimeUs{2'638'000}, TimeUs{12'638'000}}) {
    state.window_begin_us = t - 500'000;
    state.window_end_us = t + 500'000;
    state.Seek(*model, t);
    ASSERT_FALSE(model->MessagesBetween(state.window_begin_us, state.window_end_us, 10).empty());
    imgui.io().MousePos = ImVec2(600, 400);
    const int vertices = imgui.Frame(draw);
    EXPECT_GT(vertices, 1000) << "lifelines, arrows and marks at " << t;
  }
  state.window_begin_us = 0;
  state.window_end_us = model->end_us();
  EXPECT_GT(imgui.Frame(draw), 1000);
}

TEST(MessagesPanelTest, AStateTraceSaysHowToGetMessages) {
  const TimelineModel* state_model =
      ScenarioModel(kScenario, "at-least-once", sim::TraceLevel::kState);
  const TimelineModel* messages_model =
      ScenarioModel(kScenario, "at-least-once", sim::TraceLevel::kMessages);
  ASSERT_NE(state_model, nullptr);
  ASSERT_NE(messages_model, nullptr);
  EXPECT_FALSE(state_model->has_messages());
  ViewState state;
  ViewCache cache;
  state.window_end_us = state_model->end_us();
  ImGuiHarness imgui;
  Runs without{{state_model}, 0};
  Runs with{{messages_model}, 0};
  const int text_only = imgui.Frame([&] { DrawMessagesPanel(without, state, cache); });
  const int diagram = imgui.Frame([&] { DrawMessagesPanel(with, state, cache); });
  EXPECT_GT(text_only, 0) << "the explanation is drawn";
  EXPECT_GT(diagram, 4 * text_only) << "no diagram without messages";
}

TEST(ComparePanelTest, DrawsTheTrioAndAClickOnARunRequestsIt) {
  std::vector<const TimelineModel*> models;
  for (const char* variant : {"at-most-once", "at-least-once", "exactly-once"}) {
    models.push_back(ScenarioModel(kScenario, variant, sim::TraceLevel::kState));
    ASSERT_NE(models.back(), nullptr) << variant;
  }
  Runs runs{models, 0};
  ViewState state;
  ImGuiHarness imgui(ImVec2(1500, 900));
  const auto draw = [&] { DrawComparePanel(runs, state); };
  for (TimeUs t : {TimeUs{0}, TimeUs{4'200'000}, models[0]->end_us()}) {
    state.Seek(*models[0], t);
    EXPECT_GT(imgui.Frame(draw), 0) << t;
  }
  EXPECT_EQ(state.active_run, 0u);
  // The header row: a fixed first column of 130 px, then the runs in equal columns.
  const ImGuiStyle& style = ImGui::GetStyle();
  const float left = style.WindowPadding.x + 130.0f + 2 * style.CellPadding.x;
  const float width = 1500 - style.WindowPadding.x - left;
  const ImVec2 third(left + width * 2.5f / 3,
                     style.WindowPadding.y + ImGui::GetFontSize() / 2 + style.CellPadding.y);
  imgui.Click(third, draw);
  EXPECT_EQ(state.active_run, 2u);
}

}  // namespace
}  // namespace ksim::viz
