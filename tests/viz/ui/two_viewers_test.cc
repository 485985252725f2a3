// Two viewers in one process, as two windows would be: each with its own ImGui context, its own
// ViewState and ViewCache, over a different run, the whole viewer drawn alternately frame by
// frame. Each one shows its own run and its own choices: its ledger's rows are its model's under
// its filter, its caches are its model's, and what every window draws is what the same viewer
// draws alone (one viewer's ZooKeeper toggle or first-frame choices do not reach the other).
#include <gtest/gtest.h>
#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tests/viz/ui/panel_test_harness.h"
#include "viz/ui/ledger_panel_internal.h"
#include "viz/ui/panels.h"
#include "viz/ui/view_cache.h"
#include "viz/ui/view_state.h"

namespace ksim::viz {
namespace {

using testing::ImGuiHarness;
using testing::ScenarioModel;

const TimelineModel* DeliverySemantics() {
  return ScenarioModel("teaching/delivery-semantics.json", "at-least-once",
                       sim::TraceLevel::kMessages);
}
const TimelineModel* CleanVsUnclean() {
  return ScenarioModel("teaching/clean-vs-unclean-election.json", "base",
                       sim::TraceLevel::kMessages);
}

const char* const kWindows[] = {"Cluster",  "Partitions", "Ledger",
                                "Timeline", "Messages",   "Scenario / Compare"};

// One viewer: what `ksim viz` keeps for its window.
class Viewer {
 public:
  explicit Viewer(const TimelineModel* model) : runs_{{model}, 0} {
    state.fixed_layout = true;
    state.Seek(*model, model->end_us());
  }
  const TimelineModel& model() const { return runs_.current(); }
  void Frame() {
    imgui_.BareFrame([&] { DrawViewer(runs_, state, cache); });
  }
  // Vertices each window drew in the last frame.
  std::map<std::string, int> Vertices() {
    imgui_.Activate();
    std::map<std::string, int> vertices;
    for (const char* name : kWindows) {
      const ImGuiWindow* window = ImGui::FindWindowByName(name);
      vertices[name] = window != nullptr && window->Active ? window->DrawList->VtxBuffer.Size : -1;
    }
    return vertices;
  }

  ViewState state;
  ViewCache cache;

 private:
  Runs runs_;
  ImGuiHarness imgui_;
};

constexpr int kFrames = 3;

// A viewer of `model` with `state` drawn alone for kFrames frames: the vertices each of its
// windows drew in the last one.
std::map<std::string, int> DrawnAlone(const TimelineModel* model, const ViewState& state) {
  Viewer alone(model);
  alone.state = state;
  for (int frame = 0; frame < kFrames; ++frame) alone.Frame();
  return alone.Vertices();
}

TEST(TwoViewersTest, EachShowsItsOwnRunAndChoicesWhenDrawnAlternately) {
  ASSERT_NE(DeliverySemantics(), nullptr);
  ASSERT_NE(CleanVsUnclean(), nullptr);
  Viewer a(DeliverySemantics());
  Viewer b(CleanVsUnclean());
  a.state.ledger_filter = LedgerFilter::kAll;
  a.state.show_zookeeper = true;
  b.state.ledger_filter = LedgerFilter::kLost;
  b.state.show_zookeeper = false;
  ASSERT_FALSE(LedgerRows(b.model(), LedgerFilter::kLost, "").empty())
      << "the unclean election loses acked records";
  // What each draws alone (B first: nothing with ZooKeeper's traffic shown is drawn before it).
  const std::map<std::string, int> b_alone = DrawnAlone(&b.model(), b.state);
  const std::map<std::string, int> a_alone = DrawnAlone(&a.model(), a.state);

  for (int frame = 0; frame < kFrames; ++frame) {
    a.Frame();
    b.Frame();
  }
  EXPECT_EQ(a.Vertices(), a_alone);
  EXPECT_EQ(b.Vertices(), b_alone);

  // Each cache is its own model's.
  for (Viewer* viewer : {&a, &b}) {
    const TimelineModel& model = viewer->model();
    SCOPED_TRACE(model.header().scenario);
    const LedgerCache& ledger = viewer->cache.ledger;
    EXPECT_EQ(ledger.model_serial, model.serial());
    EXPECT_EQ(ledger.rows, LedgerRows(model, viewer->state.ledger_filter, ""));
    ASSERT_FALSE(ledger.row_rects.empty());
    for (const LedgerRowRect& row : ledger.row_rects) {
      EXPECT_NE(std::find(ledger.rows.begin(), ledger.rows.end(), row.record), ledger.rows.end());
    }
    EXPECT_EQ(viewer->cache.minimap.model_serial, model.serial());
    EXPECT_EQ(viewer->cache.messages.model_serial, model.serial());
    ASSERT_FALSE(viewer->cache.partitions.strips.empty());
    for (const StripGeometry& strip : viewer->cache.partitions.strips) {
      ASSERT_LT(static_cast<size_t>(strip.partition), model.partitions().size());
    }
  }
  EXPECT_NE(a.cache.ledger.rows, b.cache.ledger.rows);

  // A new filter in A changes A's rows only.
  a.state.ledger_filter = LedgerFilter::kDuplicated;
  a.Frame();
  b.Frame();
  EXPECT_EQ(a.cache.ledger.rows, LedgerRows(a.model(), LedgerFilter::kDuplicated, ""));
  EXPECT_EQ(b.cache.ledger.rows, LedgerRows(b.model(), LedgerFilter::kLost, ""));
  EXPECT_EQ(b.Vertices(), b_alone);

  // B's ZooKeeper toggle changes what it draws: A's, on, would have shown had it reached B.
  ViewState b_with_zookeeper = b.state;
  b_with_zookeeper.show_zookeeper = true;
  EXPECT_NE(DrawnAlone(&b.model(), b_with_zookeeper).at("Messages"), b_alone.at("Messages"));
}

}  // namespace
}  // namespace ksim::viz
