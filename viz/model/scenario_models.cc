#include "viz/model/scenario_models.h"

#include <utility>

#include "sim/runner/runner.h"
#include "sim/scenario/variants.h"

namespace ksim::viz {

Result<std::vector<TimelineModel>> ModelsOfScenario(const sim::Scenario& scenario,
                                                    const ScenarioModelsOptions& options) {
  KSIM_ASSIGN_OR_RETURN(std::vector<sim::SelectedRun> runs,
                        sim::SelectRuns(scenario, options.variant, options.name));
  std::vector<TimelineModel> models;
  for (const sim::SelectedRun& run : runs) {
    sim::RunOptions run_options;
    run_options.seed = options.seed;
    run_options.variant = run.name;
    run_options.trace_level = options.level;
    run_options.keep_trace_bytes = true;
    const std::string name = options.name + " (" + run.name + ")";
    Result<sim::RunResult> result = sim::RunScenario(*run.scenario, run_options);
    if (!result.ok()) {
      return Status(result.status().code(), name + ": " + result.status().message());
    }
    KSIM_ASSIGN_OR_RETURN(sim::Trace trace, sim::ParseTrace(std::move(result->trace_bytes), name));
    KSIM_ASSIGN_OR_RETURN(TimelineModel model, TimelineModel::Build(trace, name));
    models.push_back(std::move(model));
  }
  return models;
}

}  // namespace ksim::viz
