// Event classification and one-line summaries (model_summary.cc); private to viz/model/.
// Pure functions of one event; never fail.
#pragma once

#include <string>
#include <string_view>

#include "sim/kernel/trace.h"
#include "viz/model/timeline_model.h"

namespace ksim::viz {

// What a trace event (not a msg_* one) is about.
EventKind ClassifyEvent(std::string_view node, std::string_view name);
// "broker-2 crashed", "t-0: leader 3 (epoch 4, unclean) isr [3]", ...
std::string SummarizeEvent(const sim::TraceEvent& event);

}  // namespace ksim::viz
