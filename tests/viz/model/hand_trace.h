// Hand-written traces for the timeline model's tests: a header, the test's event lines, a
// verdict, parsed and built as a recorded trace would be ("hand.jsonl" in errors).
#pragma once

#include <string>

#include "sim/kernel/trace.h"
#include "viz/model/timeline_model.h"

namespace ksim::viz::testing {

// The header line of a hand trace at `level` ("state" or "messages").
inline std::string HandHeader(const std::string& level = "state") {
  return R"({"ksim_trace":1,"scenario":"hand","variant":"base","seed":1,"level":")" + level +
         "\"}\n";
}

// A verdict at 900 us with nothing to say but one metric.
inline constexpr const char* kHandVerdict =
    R"({"t_us":900,"node":"checker","ev":"verdict","ok":true,"metrics":{"sent":2}})"
    "\n";

inline Result<TimelineModel> BuildHandTrace(const std::string& body,
                                            const std::string& verdict = kHandVerdict,
                                            const std::string& level = "state") {
  Result<sim::Trace> trace = sim::ParseTrace(HandHeader(level) + body + verdict, "hand.jsonl");
  if (!trace.ok()) return trace.status();
  return TimelineModel::Build(*trace, "hand.jsonl");
}

}  // namespace ksim::viz::testing
