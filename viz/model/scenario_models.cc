#include "viz/model/scenario_models.h"

#include <utility>

#include "sim/scenario_runner.h"

namespace ksim::viz {

Result<std::vector<TimelineModel>> ModelsOfScenario(const sim::Scenario& scenario,
                                                    const ScenarioModelsOptions& options) {
  std::vector<std::pair<std::string, const sim::Scenario*>> runs = {{"base", &scenario}};
  for (const sim::ScenarioVariant& variant : scenario.variants) {
    runs.emplace_back(variant.name, &variant.scenario);
  }
  if (!options.variant.empty()) {
    std::string names;
    const sim::Scenario* chosen = nullptr;
    for (const auto& run : runs) {
      if (run.first == options.variant) chosen = run.second;
      names += (names.empty() ? "" : ", ") + run.first;
    }
    if (chosen == nullptr) {
      return Status(Errc::kInvalidArgument, "unknown variant \"" + options.variant + "\" in " +
                                                options.name + ": valid variants are " + names);
    }
    runs = {{options.variant, chosen}};
  }
  std::vector<TimelineModel> models;
  for (const auto& run : runs) {
    sim::RunOptions run_options;
    run_options.seed = options.seed;
    run_options.variant = run.first;
    run_options.trace_level = options.level;
    run_options.keep_trace_bytes = true;
    const std::string name = options.name + " (" + run.first + ")";
    Result<sim::RunResult> result = sim::RunScenario(*run.second, run_options);
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
