// `ksim shrink` (docs/explore.md, "Shrinking"): delta debugging of a failing scenario until
// nothing more can be removed without its failure signature (sim/explore/properties.h)
// disappearing. Each candidate is a scenario document; it must load, run, and fail with the same
// signature (under the promise its own settings make: a candidate whose settings no longer
// promise the property does not fail it) to be kept.
//
// The passes, repeated until one changes nothing or the run budget is spent:
//   1. actions: ddmin (Zeller's delta debugging) over the `actions` array;
//   2. time: the duration cut to just past the last action, then the actions moved earlier
//      (all together, then each to its predecessor's time);
//   3. size: brokers, each topic's partitions (assignments cut to match), clients no action
//      names, producers' `messages` and `rate_per_s` halved;
//   4. settings: each key of cluster.config, broker_config, zookeeper, network, disk, policy,
//      each topic's and client's config dropped (back to its default).
// Every step is reported (kept or not), and the result gets a description written from its run:
// what happens when, and the failure.
//
// Runs in process, one run at a time; deterministic (same input, same steps, same result).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/base/status.h"
#include "sim/explore/properties.h"

namespace ksim::sim {

struct ShrinkOptions {
  int32_t max_runs = 1000;  // a bound on the runs (each candidate is one run)
  PropertyOptions properties;
  std::optional<std::string> signature;  // the failure to keep; unset: the first one
  // Runs a candidate (its scenario JSON text) in another process and returns its failures, a
  // `no_crash` failure when the run killed that process, or nullopt when it does not load or run
  // (why in *error). Set by `ksim shrink` (tools/cmd_shrink.cc), so that a candidate that aborts
  // is a failure like any other; unset: every candidate runs in this process.
  std::function<std::optional<std::vector<PropertyFailure>>(const std::string& text,
                                                            std::string* error)>
      run_apart;
};

struct ShrinkResult {
  nlohmann::ordered_json document;  // the minimal scenario, with its generated description
  PropertyFailure failure;          // as its last run shows it
  int32_t runs = 0;
  int32_t steps_kept = 0;
  size_t actions_before = 0;
  size_t actions_after = 0;
  uint64_t trace_hash = 0;  // of the minimal scenario's run, description included (0: it crashes)
};

using ShrinkLog = std::function<void(const std::string& line)>;

// kInvalidArgument when `document` does not load (the loader's errors, naming `file`) or does
// not fail (or not with the asked signature: the failures it has are listed).
Result<ShrinkResult> Shrink(const nlohmann::ordered_json& document, const std::string& file,
                            const ShrinkOptions& options, const ShrinkLog& log);

}  // namespace ksim::sim
