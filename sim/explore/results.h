// The results of `ksim explore` (docs/explore.md, "Results"): a JSON Lines file, one line per
// seed (and release and policy pair), each line complete in itself so that shards merge by
// concatenation and an interrupted run leaves only valid complete lines:
//
//   {"ksim_explore": 1, "ksim": "0.1", "commit": "39fe689", "base": "safe.json",
//    "base_hash": "<16 hex>", "seed": 17, "kafka_version": "2.0" (only with --releases),
//    "policy": "clean/leader-epoch" (only with --policies),
//    "verdict": "ok" | "fail" | "crash" | "error",
//    "failures": [{"property", "signature", "cause"}], "skipped": ["..."], "actions": 12,
//    "duration_ms": 60000, "trace_hash": "<16 hex>", "metrics": {name: number, ...},
//    "scenario": "out/safe-seed-17.json" (only when a failing scenario was written)}
//
// Summaries group failures by signature (which property, which cause with its numbers
// removed), so that many failing seeds of one bug read as one line, and, per release and policy
// pair, name the first failing seed and the smallest counterexample (fewest actions, then shortest
// duration, then lowest seed). Pure functions; single-threaded.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "sim/explore/explore.h"

namespace ksim::sim {

inline constexpr int kExploreResultsVersion = 1;

// What every line of one explore run shares.
struct ResultMeta {
  std::string ksim_version;
  std::string commit;
  std::string base;       // the base scenario's file name (without its directory)
  std::string base_hash;  // ExploreBase::hash
};

struct ResultLine {
  ResultMeta meta;
  SeedResult result;
};

// One line, without its newline.
std::string ResultLineJson(const ResultLine& line);
// Parses one line. kInvalidArgument "<JSON pointer>: <what is wrong>" (or "not a ksim explore
// results line ..." for JSON that is not one: no "ksim_explore": 1).
Result<ResultLine> ParseResultLine(std::string_view text);

struct ResultsFile {
  std::vector<ResultLine> lines;
  bool truncated_tail = false;  // the last line had no newline and did not parse (interrupted)
};
// Every line of `text` from `file` (named in errors as "<file>:<line>: ..."); empty lines are
// skipped; a last line without its newline that does not parse is an interrupted write and is
// dropped (truncated_tail), any other bad line is an error.
Result<ResultsFile> ParseResults(std::string_view text, std::string_view file);

struct SignatureGroup {
  std::string signature;
  std::string property;
  int64_t count = 0;
  // The first seen and the smallest failing run (fewest actions, then shortest, then lowest seed).
  ResultLine first;
  ResultLine smallest;
};

// One cell of --releases and --policies: a release, a policy pair, or both.
struct CellSummary {
  std::string cell;  // "2.0", "clean/leader-epoch" or "2.0/clean/leader-epoch"
  int64_t runs = 0;
  int64_t failed = 0;
  bool has_failure = false;
  ResultLine first;     // the lowest failing seed
  ResultLine smallest;  // the smallest counterexample
};

struct Summary {
  int64_t runs = 0;
  int64_t ok = 0;
  int64_t failed = 0;
  int64_t crashed = 0;
  int64_t errors = 0;
  uint64_t min_seed = 0;
  uint64_t max_seed = 0;
  std::vector<SignatureGroup> groups;  // most frequent first, then by signature
  // Only with --policies or --releases, in the order first seen.
  std::vector<CellSummary> cells;
  bool by_release = false;                     // the cells name releases (--releases)
  bool by_policy = false;                      // the cells name policy pairs (--policies)
  std::map<std::string, int64_t> by_property;  // failing runs per property
  // Properties runs did not test, by normalized reason (NormalizeCause) -> (runs, first seed).
  std::map<std::string, std::pair<int64_t, uint64_t>> not_tested;
};

Summary Summarize(const std::vector<ResultLine>& lines);
// The readable summary: totals, one line per signature group (count, property, example cause,
// first and smallest seed with their scenario files), then the per-cell table (release, policy
// pair).
std::string FormatSummary(const Summary& summary);

// The lines' metas differ (versions, commits, bases): one message per difference, "" when all
// agree.
std::string MixedMetaProblem(const std::vector<ResultLine>& lines);

}  // namespace ksim::sim
