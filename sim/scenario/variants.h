// SelectRuns: which runs of a scenario a `--variant` option names, shared by `ksim run`, `ksim viz`
// and the viewer's in-process path (viz/model/scenario_models.h). The base is the run named
// "base"; variants follow in the order the file writes them.
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"
#include "sim/scenario/scenario.h"

namespace ksim::sim {

struct SelectedRun {
  std::string name;          // "base" or the variant's name
  const Scenario* scenario;  // points into `base` (the base itself or a variant's scenario)
};

// `variant` empty: the base and every variant; else that one run. An unknown name is
// kInvalidArgument: `unknown variant "x" in <file>: [did you mean "y"? ]valid variants are base,
// ...`. The result points into `base`, which must outlive it.
Result<std::vector<SelectedRun>> SelectRuns(const Scenario& base, const std::string& variant,
                                            const std::string& file);

}  // namespace ksim::sim
