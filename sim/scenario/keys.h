// The keys each object of a scenario file may hold: one table that the loader checks input
// against (unknown keys are errors with a "did you mean") and that tests compare with
// docs/scenario.schema.json, so the schema editors use and the loader cannot drift apart.
//
// Each entry names an object kind as the schema's `$defs` does ("cluster", "producer",
// "action.crash", ...; "scenario" is the schema's root). Kafka-named maps (`config`) and maps
// keyed by ids (`topics`, `clients`, `variants`, `broker_config`, topic `assignment`) are not
// listed: their keys are names, checked elsewhere. Static data; any thread.
#pragma once

#include <span>
#include <string_view>
#include <vector>

namespace ksim::sim {

struct ScenarioObjectKeys {
  std::string_view kind;                   // "scenario", "cluster", "action.slow", ...
  std::vector<std::string_view> required;  // in the schema's "required"
  std::vector<std::string_view> optional;
};

// Every object kind, the root first.
const std::vector<ScenarioObjectKeys>& ScenarioKeyTable();
// The entry for `kind`. REQUIRES: kind is in the table.
const ScenarioObjectKeys& KeysOf(std::string_view kind);
// Required then optional keys of `kind`.
std::vector<std::string_view> AllKeysOf(std::string_view kind);
// Every `do` an action may name, in the documented order.
const std::vector<std::string_view>& ActionNames();

}  // namespace ksim::sim
