// What `ksim run` prints and writes from RunResults (sim/runner/runner.h): the readable
// report, the report JSON (docs/DESIGN.md, "Scenario format": {"scenario", "seed", "variants":
// {"<name>": {"metrics", "expectations", "ok", ...}}}) and the election-policy matrix
// (docs/scenarios.md, "The policy matrix").
//
// The readable report, per variant: a header line (scenario, variant, seed, verdict), the
// actions with their cli output, the clients' warnings about their settings (when there are
// any), the metrics table (every metric, one a line, aligned), the
// anomalies grouped by kind with their causes (at most `max_anomalies` a kind, then "... and N
// more"), Kafka's permitted losses and the invariant violations, the expectations (each `ok` or
// `FAILED`, expected vs actual). Plain text, no colours, deterministic for a given RunResult.
//
// The matrix: one row per (election policy, truncation policy) pair, one column per matrix
// metric (lost_acked, duplicated, unavailable_ms, elections, replica_divergence), for one
// scenario; its golden form
// is JSON ({"scenario", "seed", "cells": [{"election", "truncation", "metrics": {...}}]}) and
// DiffMatrix prints the cells that differ ("clean/high-watermark: lost_acked 0 -> 3").
//
// Only RunPolicyMatrix runs anything (RunScenario, once per cell); the rest are pure functions.
// Single-threaded.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/kafka_version.h"
#include "sim/runner/runner.h"

namespace ksim::sim {

std::string FormatRunReport(const RunResult& result, size_t max_anomalies = 20);
// One variant's report object, keys in this order: "metrics" {name: number, in MetricNames()
// order}, "expectations" [{"metric", "expected" (a number, or {"min", "max"} with the bounds
// given, as written in the scenario), "actual", "ok"}], "ok", "seed" (a variant may patch it),
// "anomalies" [{"kind", "record_id", "topic", "partition", "offset", "group" (duplicated and
// undelivered only), "cause", "cause_t_us"}], "actions" [{"index", "at_ms", "action", "output",
// "skipped"}], "client_warnings" [text], "consumers" [{"client", "consumer" ("zookeeper" or
// "group-coordinator"), "group"}], "permitted_losses" [{"topic", "partition", "offset",
// "t_us", "promise", "reason", "detail"}], "invariant_violations" [text], "expired", "audit_errors"
// [text], "end_us", "trace_lines", "trace_hash" (16 hex digits, XXH64 of the trace's bytes).
nlohmann::ordered_json RunResultJson(const RunResult& result);
// The whole report (DESIGN's shape): {"scenario", "seed" (the first result's: the base's when
// it ran), "variants": {name: RunResultJson}} with the variants in the order of `results`.
nlohmann::ordered_json ReportJson(const std::vector<RunResult>& results);

// The metrics the policy matrix keeps, in column order.
const std::vector<std::string>& MatrixMetrics();

struct MatrixCell {
  std::string election;
  std::string truncation;
  std::vector<Metric> metrics;  // MatrixMetrics(), in order
  // The release the cell ran at ("0.11.0"); "" when the matrix has no release axis (every cell at
  // the scenario's own release).
  std::string kafka_version;
};

struct Matrix {
  std::string scenario;
  uint64_t seed = 0;
  // The release axis (names as KafkaReleaseName gives them, in the order run); empty: none.
  std::vector<std::string> kafka_versions;
  std::vector<MatrixCell> cells;
};

// The matrix's rows: the election policies the controller accepts (ElectionPolicyNames() minus
// the ones Controller::ValidateOptions refuses: longest-log), in ElectionPolicyNames() order...
const std::vector<std::string>& MatrixElectionPolicies();
// ... times the truncation policies: high-watermark, leader-epoch.
const std::vector<std::string>& MatrixTruncationPolicies();

// "<election>/<truncation>", "<release>/<election>/<truncation>" on a release axis: a cell's name
// in the printed matrix, diffs and progress lines.
std::string MatrixCellName(const MatrixCell& cell);

// Called before each cell runs (index from 0, of `cells`) and then as RunOptions::progress.
using MatrixProgress = std::function<void(const std::string& cell, size_t index, size_t cells,
                                          TimeUs done_us, TimeUs total_us)>;

// Runs `scenario` (as given: the caller picks the base or a variant; its `variants` and its own
// policy are ignored) under every pair of MatrixElectionPolicies() x MatrixTruncationPolicies(),
// election-major, with `seed` or the scenario's. Traces are kept as hashes only. Errors are
// RunScenario's, with the cell named.
Result<Matrix> RunPolicyMatrix(const Scenario& scenario, std::optional<uint64_t> seed,
                               const MatrixProgress& progress = nullptr);

// The matrix across releases: for each of `releases`, the scenario document `text` (read from
// `file`) with its top-level "kafka_version" set to that release is parsed again, so that the
// release's defaults and refusals apply as if the file said so (a variant that sets its own
// kafka_version keeps it), and its run `variant` ("base" or a variant's name) goes through
// RunPolicyMatrix. Cells carry their release, release-major. The seed is `seed` or that of the
// first release's run. Errors name the release.
Result<Matrix> RunReleaseMatrix(std::string_view text, const std::string& file,
                                const std::string& variant,
                                const std::vector<KafkaRelease>& releases,
                                std::optional<uint64_t> seed,
                                const MatrixProgress& progress = nullptr);
// `--releases`: "all" (every modelled release) or releases separated by commas ("0.10.0,2.0"),
// each once. kInvalidArgument naming the bad entry and the valid releases.
Result<std::vector<KafkaRelease>> ParseReleaseList(std::string_view text);

std::string FormatMatrix(const Matrix& matrix);
// {"scenario", "seed", ["kafka_versions": [release...],] "cells": [{["kafka_version",]
// "election", "truncation", "metrics": {name: number}}]}: the release keys only on a release
// axis.
nlohmann::ordered_json MatrixJson(const Matrix& matrix);
// kInvalidArgument "<JSON pointer>: <what was expected>" when `json` is not a matrix: every
// MatrixMetrics() metric is required in each cell, unknown keys are refused (did you mean),
// cells are unique by (kafka_version, election, truncation); with "kafka_versions" every cell
// names one of them, without it none does.
Result<Matrix> ParseMatrixJson(const nlohmann::ordered_json& json);
// One line per difference, empty when equal: "scenario: a -> b", "seed: 1 -> 2",
// "<cell>: <metric> <golden> -> <actual>", "<cell>: missing (in the golden matrix only)",
// "<cell>: new (not in the golden matrix)". Golden cells first, in their order.
std::vector<std::string> DiffMatrix(const Matrix& golden, const Matrix& actual);

}  // namespace ksim::sim
