#include "sim/scenario/variants.h"

#include <optional>
#include <string_view>

#include "core/base/text_distance.h"

namespace ksim::sim {

Result<std::vector<SelectedRun>> SelectRuns(const Scenario& base, const std::string& variant,
                                            const std::string& file) {
  std::vector<SelectedRun> all = {{"base", &base}};
  for (const ScenarioVariant& v : base.variants) all.push_back({v.name, &v.scenario});
  if (variant.empty()) return all;
  std::vector<std::string_view> names;
  for (const SelectedRun& run : all) {
    if (run.name == variant) return std::vector<SelectedRun>{run};
    names.push_back(run.name);
  }
  std::string message = "unknown variant \"" + variant + "\" in " + file + ": ";
  if (std::optional<std::string_view> closest = ClosestName(variant, names)) {
    message += "did you mean \"" + std::string(*closest) + "\"? ";
  }
  message += "valid variants are";
  for (size_t i = 0; i < names.size(); ++i) {
    message += std::string(i == 0 ? " " : ", ") + std::string(names[i]);
  }
  return Status(Errc::kInvalidArgument, message);
}

}  // namespace ksim::sim
