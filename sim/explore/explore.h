// One seed of `ksim explore` (docs/explore.md): the base scenario plus a swarm-generated fault
// schedule (sim/explore/swarm.h) becomes a standalone scenario document, run in process by the
// runner (sim/runner/runner.h) and checked against the promise of its settings
// (sim/explore/properties.h). The document is what a failing seed writes to disk: `ksim run`
// replays it to the same trace hash, because the run is of exactly that document (its name, seed,
// description and actions), parsed by the same loader.
//
// The seed decides everything: the swarm profile and the schedule come from a RandomStream of
// the seed's own stream "explore/swarm", independent of the run's streams (which the seed also
// drives). Under --policies a seed runs once per (election, truncation) pair with the same
// schedule, and under --releases once per Kafka release (ExploreBaseAt), also with the same
// schedule. Every `determinism_every`-th seed (seed % n == 0) runs twice and fails when the two
// trace hashes differ.
//
// Single-threaded; RunSeed holds nothing between calls (a worker process runs seed after seed).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/config/kafka_version.h"
#include "sim/check/history_checker.h"
#include "sim/explore/properties.h"
#include "sim/explore/swarm.h"
#include "sim/scenario/scenario.h"

namespace ksim::sim {

struct ExploreOptions {
  SwarmLimits limits;
  std::optional<int64_t> duration_ms;  // --duration-ms: overrides the base's duration_ms
  PropertyOptions properties;
  uint64_t determinism_every = 100;  // 0: never
};

// The base scenario: its document without variants, parsed.
struct ExploreBase {
  std::string path;  // as given
  nlohmann::ordered_json document;
  Scenario scenario;
  std::string hash;     // 16 hex digits: XXH64 of the file's bytes
  std::string release;  // --releases: the Kafka release this copy runs at; "" as the file says
};
// The file must load as `ksim check` loads it (the same errors, naming the file).
Result<ExploreBase> LoadExploreBase(const std::string& path);
// `base` at `release` (--releases): its document's top-level "kafka_version" set to the
// release and its name suffixed "-<release>" (each release's failing seeds get files of their
// own), parsed again so that the release's defaults and refusals apply as if the file said so.
// kInvalidConfig "<path> at kafka_version <release>: <the loader's message>" when that release
// refuses the base's settings.
Result<ExploreBase> ExploreBaseAt(const ExploreBase& base, KafkaRelease release);

// An (election, truncation) policy pair of the policy matrix.
struct PolicyPair {
  std::string election;
  std::string truncation;
  std::string Name() const { return election + "/" + truncation; }
};
// The matrix's rows (sim/runner/report.h's MatrixPolicies).
std::vector<PolicyPair> AllPolicyPairs();
// "all", or a comma-separated list of "<election>/<truncation>" rows of the matrix.
Result<std::vector<PolicyPair>> ParsePolicies(std::string_view text);

struct SeedScenario {
  nlohmann::ordered_json document;
  std::string profile;  // the swarm profile drawn (SwarmProfile::Describe)
  size_t generated_actions = 0;
};
// The base with: name "<base name>-seed-<seed>[-<election>-<truncation>]", seed, a description of
// the generated schedule, the generated actions after the base's own (sorted by at_ms, the
// base's first on a tie), the policy pair when given, --duration-ms when given; no variants.
SeedScenario BuildSeedScenario(const ExploreBase& base, uint64_t seed,
                               const std::optional<PolicyPair>& policy,
                               const ExploreOptions& options);

struct SeedResult {
  uint64_t seed = 0;
  std::string kafka_version;  // "" without --releases, else the release the seed ran at
  std::string policy;         // "" without --policies, else "<election>/<truncation>"
  std::string verdict;        // ok, fail, crash (the worker died: set by the driver), error
  std::vector<PropertyFailure> failures;
  std::vector<std::string> skipped;  // properties this run did not test, and why
  std::vector<Metric> metrics;
  std::string trace_hash;  // 16 hex digits ("" for crash and error)
  size_t actions = 0;      // the scenario's actions, the base's included
  int64_t duration_ms = 0;
  std::string scenario_file;  // the failing scenario written, "" when none
};

// Builds, runs and checks one seed (under `policy` when set). A document the loader or the
// cluster refuses is verdict "error" with a no_crash-free failure "scenario: <message>".
SeedResult RunSeed(const ExploreBase& base, uint64_t seed, const std::optional<PolicyPair>& policy,
                   const ExploreOptions& options, SeedScenario* built = nullptr);

// Where a failing seed's scenario goes inside `dir`: "<dir>/<scenario name>.json".
std::string FailingScenarioPath(const std::string& dir, const nlohmann::ordered_json& document);

}  // namespace ksim::sim
