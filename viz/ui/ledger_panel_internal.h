// The Ledger panel's pieces a test (or another panel) needs without drawing: which records a
// filter and a search show, each record's fate in words, and where the last frame drew each
// visible row (screen coordinates), so a test can click a row where a user would. Private to
// viz/ui/ and tests/viz/; not part of the panels' contract (viz/ui/panels.h).
#pragma once

#include <imgui.h>

#include <string>
#include <string_view>
#include <vector>

#include "viz/ui/view_state.h"

namespace ksim::viz {

// True when `record` passes `filter`: kAnomalies keeps records with a checker anomaly, lost,
// duplicated or never written (unacknowledged and not in the final log) ones; kUnacked those
// never acknowledged.
bool LedgerFilterKeeps(const TimelineModel& model, const LedgerRecord& record, LedgerFilter filter);

// Indices into model.records() of the rows shown, in send order: the filter, then `search`
// (case-insensitive substring of id, producer, key, value, error or "partition@offset";
// empty: everything).
std::vector<int32_t> LedgerRows(const TimelineModel& model, LedgerFilter filter,
                                std::string_view search);

// "lost: acked at offset 12, not in the final log", "duplicated: 2 copies in the log", ...,
// then the checker's other anomaly kinds of the record ("; reordered", "; undelivered to g1").
std::string LedgerFateText(const TimelineModel& model, const LedgerRecord& record);

// Why a record that was never written (unacked, not in the final log: the checker's
// lost_unacked, which it attributes no cause to) was lost, as the model shows the cluster when
// it was sent: "t-0's leader, broker-2, was down (crashed at 4.138 s)", "the link p1 -> broker-2
// was cut", "p1 gave up: REQUEST_TIMED_OUT (fail)"; with "acks=0: p1 expected no answer" when
// the producer counted it sent without an offset. "" for a record that was written.
std::string NeverWrittenReason(const TimelineModel& model, const LedgerRecord& record);

// A row as the last DrawLedgerPanel drew it.
struct LedgerRowRect {
  int32_t record = -1;
  ImVec2 min;
  ImVec2 max;
};
// The rows drawn by the last DrawLedgerPanel call (the clipper's visible ones), in row order.
const std::vector<LedgerRowRect>& LastLedgerRowRects();

// A jump in the details pane (an event of the selected record, an anomaly's cause) as the last
// DrawLedgerPanel drew it: a click there seeks the playhead to t_us.
struct LedgerJumpRect {
  TimeUs t_us = 0;
  bool cause = false;  // an anomaly's cause time (else one of the record's events)
  ImVec2 min;
  ImVec2 max;
};
const std::vector<LedgerJumpRect>& LastLedgerJumpRects();

}  // namespace ksim::viz
