// What `ksim run` prints and writes from RunResults (sim/scenario_runner.h): the readable
// report, the report JSON (docs/DESIGN.md, "Scenario format": {"scenario", "seed", "variants":
// {"<name>": {"metrics", "expectations", "ok", ...}}}) and the election-policy matrix
// (docs/scenarios.md, "The policy matrix").
//
// The readable report, per variant: a header line (scenario, variant, seed, verdict), the
// actions with their cli output, the metrics table (every metric, one a line, aligned), the
// anomalies grouped by kind with their causes (at most `max_anomalies` a kind, then "... and N
// more"), the invariant violations, the expectations (each `ok` or `FAILED`, expected vs
// actual). Plain text, no colours, deterministic for a given RunResult.
//
// The matrix: one row per (election policy, truncation policy) pair, one column per matrix
// metric (lost_acked, duplicated, unavailable_ms, elections), for one scenario; its golden form
// is JSON ({"scenario", "seed", "cells": [{"election", "truncation", "metrics": {...}}]}) and
// DiffMatrix prints the cells that differ ("clean/high-watermark: lost_acked 0 -> 3").
//
// Pure functions; single-threaded.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/scenario_runner.h"

namespace ksim::sim {

std::string FormatRunReport(const RunResult& result, size_t max_anomalies = 20);
// One variant's report object: {"metrics": {...}, "expectations": [...], "ok": bool,
// "anomalies": [...], "actions": [...], "invariant_violations": [...], "trace_hash": "..."}.
nlohmann::ordered_json RunResultJson(const RunResult& result);
// The whole report: {"scenario", "seed", "variants": {name: RunResultJson}}.
nlohmann::ordered_json ReportJson(const std::vector<RunResult>& results);

// The metrics the policy matrix keeps, in column order.
const std::vector<std::string>& MatrixMetrics();

struct MatrixCell {
  std::string election;
  std::string truncation;
  std::vector<Metric> metrics;  // MatrixMetrics(), in order
};

struct Matrix {
  std::string scenario;
  uint64_t seed = 0;
  std::vector<MatrixCell> cells;
};

// Runs `scenario` (its base, its own policy ignored) under every pair of an election policy the
// controller accepts (ElectionPolicyNames()) and a truncation policy (high-watermark,
// leader-epoch), in that order, with `seed` or the scenario's.
Result<Matrix> RunPolicyMatrix(const Scenario& scenario, std::optional<uint64_t> seed);

std::string FormatMatrix(const Matrix& matrix);
nlohmann::ordered_json MatrixJson(const Matrix& matrix);
// kInvalidArgument naming the JSON path when `json` is not a matrix.
Result<Matrix> ParseMatrixJson(const nlohmann::ordered_json& json);
// One line per differing cell or metric; empty when equal.
std::vector<std::string> DiffMatrix(const Matrix& golden, const Matrix& actual);

}  // namespace ksim::sim
