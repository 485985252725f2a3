// The Ledger panel over real models of the delivery-semantics trio, drawn in an ImGui context
// with no backend: its filters keep what they say, and clicks where the panel drew a row select
// the record and move the playhead to the record's first event; clicks in the details pane jump
// to the record's events and to the cause the checker attributed.
#include <gtest/gtest.h>
#include <imgui.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/viz/ui/panel_test_harness.h"
#include "viz/ui/ledger_panel_internal.h"
#include "viz/ui/panels.h"
#include "viz/ui/view_cache.h"

namespace ksim::viz {
namespace {

using testing::Center;
using testing::ImGuiHarness;
using testing::ScenarioModel;

constexpr const char* kScenario = "teaching/delivery-semantics.json";

const TimelineModel* AtLeastOnce() {
  return ScenarioModel(kScenario, "at-least-once", sim::TraceLevel::kState);
}

TEST(LedgerPanelTest, FiltersKeepWhatTheySay) {
  const TimelineModel* model = ScenarioModel(kScenario, "base", sim::TraceLevel::kState);
  ASSERT_NE(model, nullptr);
  ASSERT_FALSE(model->records().empty());
  EXPECT_EQ(LedgerRows(*model, LedgerFilter::kAll, "").size(), model->records().size());
  const std::vector<int32_t> unacked = LedgerRows(*model, LedgerFilter::kUnacked, "");
  EXPECT_FALSE(unacked.empty()) << "base loses unacked records (lost_unacked >= 1)";
  for (int32_t r : unacked) EXPECT_FALSE(model->records()[r].acked());
  for (int32_t r : LedgerRows(*model, LedgerFilter::kLost, "")) {
    EXPECT_TRUE(model->records()[r].lost());
  }
  // A search for one record's id finds it (ids like p1-17 also match p1-170: a substring).
  const LedgerRecord& some = model->records()[model->records().size() / 2];
  const std::vector<int32_t> found = LedgerRows(*model, LedgerFilter::kAll, some.id);
  ASSERT_FALSE(found.empty());
  bool has = false;
  for (int32_t r : found) has = has || model->records()[r].id == some.id;
  EXPECT_TRUE(has);
  EXPECT_TRUE(LedgerRows(*model, LedgerFilter::kAll, "no such record anywhere").empty());
}

TEST(LedgerPanelTest, DuplicatedRecordsAreShownAndSaySo) {
  const TimelineModel* model = AtLeastOnce();
  ASSERT_NE(model, nullptr);
  const std::vector<int32_t> duplicated = LedgerRows(*model, LedgerFilter::kDuplicated, "");
  ASSERT_FALSE(duplicated.empty()) << "at-least-once duplicates (log_duplicates >= 1)";
  for (int32_t r : duplicated) {
    const LedgerRecord& record = model->records()[r];
    EXPECT_TRUE(record.duplicated());
    EXPECT_NE(LedgerFateText(*model, record).find("duplicated"), std::string::npos)
        << LedgerFateText(*model, record);
  }
}

// A record the checker found reordered says so: a 2.0 producer retries the batches of a closed
// connection in reverse (regressions/retries-after-a-disconnect-keep-their-order-before-2.0.json:
// reordered 4).
TEST(LedgerPanelTest, ReorderedRecordsSaySo) {
  const TimelineModel* model =
      ScenarioModel("regressions/retries-after-a-disconnect-keep-their-order-before-2.0.json",
                    "kafka-2.0", sim::TraceLevel::kState);
  ASSERT_NE(model, nullptr);
  int reordered = 0;
  for (const LedgerRecord& record : model->records()) {
    bool has_kind = false;
    for (int32_t a : record.anomalies)
      has_kind = has_kind || model->anomalies()[a].kind == "reordered";
    if (!has_kind) continue;
    ++reordered;
    EXPECT_NE(LedgerFateText(*model, record).find("reordered"), std::string::npos)
        << LedgerFateText(*model, record);
  }
  EXPECT_EQ(reordered, 4);
}

TEST(LedgerPanelTest, DuplicatedRecordsAreAmongTheAnomalies) {
  const TimelineModel* model = AtLeastOnce();
  ASSERT_NE(model, nullptr);
  const std::vector<int32_t> duplicated = LedgerRows(*model, LedgerFilter::kDuplicated, "");
  ASSERT_FALSE(duplicated.empty());
  // Every duplicated record is also among the anomalies (the default filter).
  const std::vector<int32_t> anomalies = LedgerRows(*model, LedgerFilter::kAnomalies, "");
  for (int32_t r : duplicated) {
    EXPECT_NE(std::find(anomalies.begin(), anomalies.end(), r), anomalies.end());
  }
}

TEST(LedgerPanelTest, ClickOnARowSelectsTheRecordAndSeeksToItsFirstEvent) {
  const TimelineModel* model = AtLeastOnce();
  ASSERT_NE(model, nullptr);
  Runs runs{{model}, 0};
  ViewState state;
  ViewCache cache;
  state.ledger_filter = LedgerFilter::kAll;
  ImGuiHarness imgui;
  const auto draw = [&] { DrawLedgerPanel(runs, state, cache); };
  EXPECT_GT(imgui.Frame(draw), 0);
  imgui.Frame(draw);
  const std::vector<LedgerRowRect> rows = cache.ledger.row_rects;
  ASSERT_GE(rows.size(), 3u) << "the table shows rows";
  EXPECT_LT(rows.size(), model->records().size()) << "the clipper draws only visible rows";
  const LedgerRowRect target = rows[2];
  const LedgerRecord& record = model->records()[target.record];
  ASSERT_FALSE(record.events.empty());

  imgui.Click(Center(target.min, target.max), draw);
  EXPECT_EQ(state.selected_record, target.record);
  EXPECT_EQ(state.selected_event, static_cast<int32_t>(record.events.front()));
  EXPECT_EQ(state.playhead_us, model->events()[record.events.front()].t_us);
  EXPECT_GT(state.playhead_us, 0);

  // The details pane lists the record's events, each a jump: click the last one.
  imgui.Frame(draw);
  std::vector<LedgerJumpRect> jumps = cache.ledger.jump_rects;
  size_t causes = 0;
  for (int32_t a : record.anomalies) causes += model->anomalies()[a].cause_t_us >= 0 ? 1 : 0;
  ASSERT_EQ(jumps.size(), record.events.size() + causes) << "one line per event and cause";
  const LedgerJumpRect last = jumps.back();
  ASSERT_FALSE(last.cause);
  ASSERT_NE(last.t_us, state.playhead_us) << "a record's events span some time";
  imgui.Click(Center(last.min, last.max), draw);
  EXPECT_EQ(state.playhead_us, last.t_us);
  EXPECT_EQ(state.selected_record, target.record);
}

TEST(LedgerPanelTest, ClickOnAnAnomalysCauseSeeksToTheCauseTime) {
  const TimelineModel* model = AtLeastOnce();
  ASSERT_NE(model, nullptr);
  // A duplicated record the checker explained: its cause is a retry, before the duplicate.
  int32_t chosen = -1;
  for (int32_t r : LedgerRows(*model, LedgerFilter::kDuplicated, "")) {
    for (int32_t a : model->records()[r].anomalies) {
      if (model->anomalies()[a].cause_t_us >= 0 && chosen < 0) chosen = r;
    }
  }
  ASSERT_GE(chosen, 0) << "the checker names a cause for at-least-once's duplicates";
  Runs runs{{model}, 0};
  ViewState state;
  ViewCache cache;
  state.ledger_filter = LedgerFilter::kDuplicated;
  ImGuiHarness imgui;
  const auto draw = [&] { DrawLedgerPanel(runs, state, cache); };
  imgui.Frame(draw);
  imgui.Frame(draw);
  const LedgerRowRect* row = nullptr;
  for (const LedgerRowRect& r : cache.ledger.row_rects) {
    if (r.record == chosen) row = &r;
  }
  ASSERT_NE(row, nullptr) << "a handful of duplicates fit on the screen";
  imgui.Click(Center(row->min, row->max), draw);
  ASSERT_EQ(state.selected_record, chosen);

  imgui.Frame(draw);
  const LedgerJumpRect* cause = nullptr;
  for (const LedgerJumpRect& j : cache.ledger.jump_rects) {
    if (j.cause && cause == nullptr) cause = &j;
  }
  ASSERT_NE(cause, nullptr) << "the details pane shows the anomaly's cause";
  const LedgerJumpRect target = *cause;
  imgui.Click(Center(target.min, target.max), draw);
  EXPECT_EQ(state.playhead_us, std::clamp<TimeUs>(target.t_us, 0, model->end_us()));
  bool is_a_cause = false;
  for (int32_t a : model->records()[chosen].anomalies) {
    is_a_cause = is_a_cause || model->anomalies()[a].cause_t_us == target.t_us;
  }
  EXPECT_TRUE(is_a_cause);
}

TEST(LedgerPanelTest, ScrollsThroughEveryRowWithoutAsserting) {
  const TimelineModel* model = ScenarioModel(kScenario, "base", sim::TraceLevel::kState);
  ASSERT_NE(model, nullptr);
  Runs runs{{model}, 0};
  ViewState state;
  ViewCache cache;
  state.ledger_filter = LedgerFilter::kAll;
  ImGuiHarness imgui;
  const auto draw = [&] { DrawLedgerPanel(runs, state, cache); };
  imgui.Frame(draw);
  const std::vector<LedgerRowRect> first = cache.ledger.row_rects;
  ASSERT_GE(first.size(), 2u);
  // Scroll down with the wheel over the table: other rows come into view.
  imgui.io().MousePos = Center(first[1].min, first[1].max);
  for (int frame = 0; frame < 20; ++frame) {
    imgui.io().MouseWheel = -5.0f;
    imgui.Frame(draw);
  }
  imgui.io().MouseWheel = 0;
  imgui.Frame(draw);
  const std::vector<LedgerRowRect> later = cache.ledger.row_rects;
  ASSERT_FALSE(later.empty());
  // (The clipper always lays out row 0 to measure the row height: compare the last rows.)
  EXPECT_GT(later.back().record, first.back().record);
}

// at-most-once (acks=0) loses the records sent to broker 2 after it lost power at 4 s: the
// ledger explains each from the cluster at its send time; a written record has no such reason.
TEST(LedgerPanelTest, NeverWrittenRecordsSayWhyFromTheClusterAtTheirSend) {
  const TimelineModel* model = ScenarioModel(kScenario, "at-most-once", sim::TraceLevel::kState);
  ASSERT_NE(model, nullptr);
  int never_written = 0;
  for (int32_t r = 0; r < static_cast<int32_t>(model->records().size()); ++r) {
    const LedgerRecord& record = model->records()[r];
    const std::string reason = NeverWrittenReason(*model, r);
    if (record.acked() || record.final_copies > 0) {
      EXPECT_EQ(reason, "") << record.id;
      continue;
    }
    ++never_written;
    EXPECT_NE(reason.find("t-0's leader, broker-2, was down (crashed at 4.1"), std::string::npos)
        << record.id << ": " << reason;
    EXPECT_NE(reason.find("acks=0"), std::string::npos) << record.id << ": " << reason;
  }
  int64_t lost_unacked = -1;
  for (const auto& [name, value] : model->metrics()) {
    if (name == "lost_unacked") lost_unacked = value;
  }
  EXPECT_EQ(never_written, lost_unacked);
  EXPECT_GT(never_written, 0);
}

}  // namespace
}  // namespace ksim::viz
