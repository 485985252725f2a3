// ModelsOfScenario: the viewer's in-process path (`ksim viz SCENARIO.json`): runs a scenario's
// base and variants (or one of them) with the trace kept in memory at the chosen level, and
// builds a TimelineModel of each run, in the scenario's order (base first). The same trace
// bytes a `ksim run --trace` would write, so a model built here equals one loaded from that file.
// Used by `ksim viz`, the viewer's tests and benchmarks. Single-threaded; runs take as long as
// the scenarios do.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "sim/kernel/trace.h"
#include "sim/scenario/scenario.h"
#include "viz/model/timeline_model.h"

namespace ksim::viz {

struct ScenarioModelsOptions {
  std::string variant;           // "" the base and every variant; "base"; or a variant's name
  std::optional<uint64_t> seed;  // every run's seed (default: the scenario's, or the variant's)
  sim::TraceLevel level = sim::TraceLevel::kMessages;
  std::string name;  // stands for the scenario in errors ("f.json"); runs add
                     // " (<variant>)"
};

// kInvalidArgument naming the valid variants for an unknown one; a run's or a build's error is
// returned with the run named.
Result<std::vector<TimelineModel>> ModelsOfScenario(const sim::Scenario& scenario,
                                                    const ScenarioModelsOptions& options);

}  // namespace ksim::viz
