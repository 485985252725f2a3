// The Ledger panel's pieces a test (or another panel) needs without drawing: which records a
// filter and a search show, and each record's fate and (never written) loss in words. Where the
// last frame drew each visible row is in the view cache (viz/ui/view_cache.h, LedgerCache).
// Private to viz/ui/ and tests/viz/; not part of the panels' contract (viz/ui/panels.h).
#pragma once

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

// Why records()[record] was never written, in words, from the model's answer
// (TimelineModel::WhyNeverWritten): "sent at 4.2 s while t-0's leader, broker-2, was down
// (crashed at 4.138 s)", "the link p1 -> broker-2 was cut", "p1 gave up: REQUEST_TIMED_OUT
// (fail)"; with "acks=0: p1 counted it sent and expected no answer" when the producer counted
// it sent without an offset. "" for a record that was written.
std::string NeverWrittenReason(const TimelineModel& model, int32_t record);

}  // namespace ksim::viz
