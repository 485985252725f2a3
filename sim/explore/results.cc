#include "sim/explore/results.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

namespace ksim::sim {
namespace {

using Json = nlohmann::ordered_json;

Status Bad(const std::string& pointer, const std::string& what) {
  return Status(Errc::kInvalidArgument, pointer + ": " + what);
}

Result<std::string> StringAt(const Json& object, const char* key, bool required = true) {
  auto it = object.find(key);
  if (it == object.end()) {
    if (!required) return std::string();
    return Bad(std::string("/") + key, "missing");
  }
  if (!it->is_string()) return Bad(std::string("/") + key, "expected a string");
  return it->get<std::string>();
}

Result<int64_t> IntAt(const Json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end()) return Bad(std::string("/") + key, "missing");
  if (!it->is_number_integer()) return Bad(std::string("/") + key, "expected an integer");
  return it->get<int64_t>();
}

// Fewer actions, then shorter, then lower seed.
bool Smaller(const ResultLine& a, const ResultLine& b) {
  return std::tie(a.result.actions, a.result.duration_ms, a.result.seed, a.result.kafka_version,
                  a.result.policy) < std::tie(b.result.actions, b.result.duration_ms, b.result.seed,
                                              b.result.kafka_version, b.result.policy);
}

// The run's cell: "2.0", "clean/leader-epoch", "2.0/clean/leader-epoch"; "" without --releases
// and --policies.
std::string CellOf(const SeedResult& r) {
  if (r.kafka_version.empty() || r.policy.empty()) return r.kafka_version + r.policy;
  return r.kafka_version + "/" + r.policy;
}

std::string SeedText(const ResultLine& line) {
  std::string text = "seed " + std::to_string(line.result.seed);
  if (const std::string cell = CellOf(line.result); !cell.empty()) text += " (" + cell + ")";
  text += ", " + std::to_string(line.result.actions) + " actions";
  if (!line.result.scenario_file.empty()) text += ": " + line.result.scenario_file;
  return text;
}

}  // namespace

std::string ResultLineJson(const ResultLine& line) {
  const SeedResult& r = line.result;
  Json json = Json::object();
  json["ksim_explore"] = kExploreResultsVersion;
  json["ksim"] = line.meta.ksim_version;
  json["commit"] = line.meta.commit;
  json["base"] = line.meta.base;
  json["base_hash"] = line.meta.base_hash;
  json["seed"] = r.seed;
  if (!r.kafka_version.empty()) json["kafka_version"] = r.kafka_version;
  if (!r.policy.empty()) json["policy"] = r.policy;
  json["verdict"] = r.verdict;
  Json failures = Json::array();
  for (const PropertyFailure& f : r.failures) {
    Json item = Json::object();
    item["property"] = f.property;
    item["signature"] = f.signature;
    item["cause"] = f.cause;
    failures.push_back(std::move(item));
  }
  json["failures"] = std::move(failures);
  json["skipped"] = r.skipped;
  json["actions"] = r.actions;
  json["duration_ms"] = r.duration_ms;
  json["trace_hash"] = r.trace_hash;
  Json metrics = Json::object();
  for (const Metric& m : r.metrics) metrics[m.name] = m.value;
  json["metrics"] = std::move(metrics);
  if (!r.scenario_file.empty()) json["scenario"] = r.scenario_file;
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<ResultLine> ParseResultLine(std::string_view text) {
  const Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    return Status(Errc::kInvalidArgument,
                  "not JSON: a ksim explore results line is one JSON "
                  "object (docs/explore.md, \"Results\")");
  }
  if (!json.is_object() || !json.contains("ksim_explore")) {
    return Status(Errc::kInvalidArgument,
                  "not a ksim explore results line: no \"ksim_explore\" key (is this the file "
                  "--results wrote?)");
  }
  if (!json["ksim_explore"].is_number_integer() ||
      json["ksim_explore"].get<int64_t>() != kExploreResultsVersion) {
    return Bad("/ksim_explore", "expected " + std::to_string(kExploreResultsVersion) +
                                    " (the results format this ksim reads)");
  }
  ResultLine line;
  KSIM_ASSIGN_OR_RETURN(line.meta.ksim_version, StringAt(json, "ksim"));
  KSIM_ASSIGN_OR_RETURN(line.meta.commit, StringAt(json, "commit"));
  KSIM_ASSIGN_OR_RETURN(line.meta.base, StringAt(json, "base"));
  KSIM_ASSIGN_OR_RETURN(line.meta.base_hash, StringAt(json, "base_hash"));
  SeedResult& r = line.result;
  auto seed = json.find("seed");
  if (seed == json.end() || !seed->is_number_unsigned()) {
    return Bad("/seed", seed == json.end() ? "missing" : "expected an integer 0 to 2^64-1");
  }
  r.seed = seed->get<uint64_t>();
  KSIM_ASSIGN_OR_RETURN(r.kafka_version, StringAt(json, "kafka_version", /*required=*/false));
  KSIM_ASSIGN_OR_RETURN(r.policy, StringAt(json, "policy", /*required=*/false));
  KSIM_ASSIGN_OR_RETURN(r.verdict, StringAt(json, "verdict"));
  static const std::set<std::string> kVerdicts = {"ok", "fail", "crash", "error"};
  if (!kVerdicts.contains(r.verdict)) {
    return Bad("/verdict", "expected one of ok, fail, crash, error, got \"" + r.verdict + "\"");
  }
  auto failures = json.find("failures");
  if (failures == json.end() || !failures->is_array()) {
    return Bad("/failures", failures == json.end() ? "missing" : "expected an array");
  }
  for (size_t i = 0; i < failures->size(); ++i) {
    const Json& item = (*failures)[i];
    const std::string at = "/failures/" + std::to_string(i);
    if (!item.is_object()) return Bad(at, "expected an object");
    PropertyFailure f;
    Result<std::string> property = StringAt(item, "property");
    Result<std::string> signature = StringAt(item, "signature");
    Result<std::string> cause = StringAt(item, "cause");
    for (const Result<std::string>* field : {&property, &signature, &cause}) {
      if (!field->ok()) return Status(Errc::kInvalidArgument, at + field->status().message());
    }
    f.property = *property;
    f.signature = *signature;
    f.cause = *cause;
    r.failures.push_back(std::move(f));
  }
  auto skipped = json.find("skipped");
  if (skipped != json.end()) {
    if (!skipped->is_array()) return Bad("/skipped", "expected an array of strings");
    for (const Json& item : *skipped) {
      if (!item.is_string()) return Bad("/skipped", "expected an array of strings");
      r.skipped.push_back(item.get<std::string>());
    }
  }
  KSIM_ASSIGN_OR_RETURN(int64_t actions, IntAt(json, "actions"));
  if (actions < 0) return Bad("/actions", "expected a count >= 0");
  r.actions = static_cast<size_t>(actions);
  KSIM_ASSIGN_OR_RETURN(r.duration_ms, IntAt(json, "duration_ms"));
  KSIM_ASSIGN_OR_RETURN(r.trace_hash, StringAt(json, "trace_hash"));
  auto metrics = json.find("metrics");
  if (metrics == json.end() || !metrics->is_object()) {
    return Bad("/metrics", metrics == json.end() ? "missing" : "expected an object");
  }
  for (const auto& [name, value] : metrics->items()) {
    if (!value.is_number_integer()) return Bad("/metrics/" + name, "expected an integer");
    r.metrics.push_back(Metric{name, value.get<int64_t>()});
  }
  KSIM_ASSIGN_OR_RETURN(r.scenario_file, StringAt(json, "scenario", /*required=*/false));
  return line;
}

Result<ResultsFile> ParseResults(std::string_view text, std::string_view file) {
  ResultsFile out;
  size_t start = 0;
  int64_t number = 0;
  while (start < text.size()) {
    ++number;
    size_t end = text.find('\n', start);
    const bool complete = end != std::string_view::npos;
    if (!complete) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    Result<ResultLine> parsed = ParseResultLine(line);
    if (!parsed.ok()) {
      if (!complete) {
        out.truncated_tail = true;  // an interrupted write: its complete lines stand
        break;
      }
      return Status(Errc::kInvalidArgument, std::string(file) + ":" + std::to_string(number) +
                                                ": " + parsed.status().message());
    }
    out.lines.push_back(std::move(parsed).value());
  }
  return out;
}

Summary Summarize(const std::vector<ResultLine>& lines) {
  Summary summary;
  std::map<std::string, size_t> group_of;
  std::map<std::string, size_t> cell_of;
  for (const ResultLine& line : lines) {
    const SeedResult& r = line.result;
    if (summary.runs == 0) {
      summary.min_seed = summary.max_seed = r.seed;
    } else {
      summary.min_seed = std::min(summary.min_seed, r.seed);
      summary.max_seed = std::max(summary.max_seed, r.seed);
    }
    ++summary.runs;
    if (r.verdict == "ok") ++summary.ok;
    if (r.verdict == "fail") ++summary.failed;
    if (r.verdict == "crash") ++summary.crashed;
    if (r.verdict == "error") ++summary.errors;
    if (const std::string cell = CellOf(r); !cell.empty()) {
      summary.by_release = summary.by_release || !r.kafka_version.empty();
      summary.by_policy = summary.by_policy || !r.policy.empty();
      auto [it, inserted] = cell_of.try_emplace(cell, summary.cells.size());
      if (inserted) summary.cells.push_back(CellSummary{cell});
      CellSummary& summed = summary.cells[it->second];
      ++summed.runs;
      if (!r.failures.empty()) {
        ++summed.failed;
        if (!summed.has_failure || r.seed < summed.first.result.seed) summed.first = line;
        if (!summed.has_failure || Smaller(line, summed.smallest)) summed.smallest = line;
        summed.has_failure = true;
      }
    }
    std::set<std::string> properties;
    std::set<std::string> signatures;
    for (const PropertyFailure& f : r.failures) {
      properties.insert(f.property);
      if (!signatures.insert(f.signature).second) continue;
      auto [it, inserted] = group_of.try_emplace(f.signature, summary.groups.size());
      if (inserted) {
        SignatureGroup group;
        group.signature = f.signature;
        group.property = f.property;
        group.first = line;
        group.smallest = line;
        summary.groups.push_back(std::move(group));
      }
      SignatureGroup& group = summary.groups[it->second];
      ++group.count;
      if (line.result.seed < group.first.result.seed) group.first = line;
      if (Smaller(line, group.smallest)) group.smallest = line;
    }
    for (const std::string& property : properties) ++summary.by_property[property];
    std::set<std::string> reasons;
    for (const std::string& skipped : r.skipped) {
      std::string reason = NormalizeCause(skipped);
      if (!reasons.insert(reason).second) continue;
      auto [it, inserted] = summary.not_tested.try_emplace(std::move(reason), 0, r.seed);
      ++it->second.first;
      it->second.second = std::min(it->second.second, r.seed);
    }
  }
  std::stable_sort(summary.groups.begin(), summary.groups.end(),
                   [](const SignatureGroup& a, const SignatureGroup& b) {
                     return std::tie(b.count, a.signature) < std::tie(a.count, b.signature);
                   });
  return summary;
}

std::string FormatSummary(const Summary& summary) {
  std::string out = "Runs: " + std::to_string(summary.runs);
  if (summary.runs > 0) {
    out += " (seeds " + std::to_string(summary.min_seed) + ".." + std::to_string(summary.max_seed) +
           ")";
  }
  out += ": " + std::to_string(summary.ok) + " ok, " + std::to_string(summary.failed) +
         " failed, " + std::to_string(summary.crashed) + " crashed, " +
         std::to_string(summary.errors) + " refused\n";
  if (summary.groups.empty()) {
    out += "No failure.\n";
  } else {
    out += "Failures by signature (" + std::to_string(summary.groups.size()) + "):\n";
    for (const SignatureGroup& group : summary.groups) {
      out += "  " + std::to_string(group.count) + " x " + group.signature + "\n";
      std::string cause;
      for (const PropertyFailure& f : group.first.result.failures) {
        if (f.signature == group.signature) cause = f.cause;
      }
      out += "      e.g. " + cause + "\n";
      out += "      first: " + SeedText(group.first) + "\n";
      if (group.smallest.result.seed != group.first.result.seed ||
          CellOf(group.smallest.result) != CellOf(group.first.result)) {
        out += "      smallest: " + SeedText(group.smallest) + "\n";
      }
    }
  }
  if (!summary.not_tested.empty()) {
    out += "Not tested in some runs (the promise does not cover them):\n";
    for (const auto& [reason, seen] : summary.not_tested) {
      out += "  " + std::to_string(seen.first) + " x " + reason + " (first: seed " +
             std::to_string(seen.second) + ")\n";
    }
  }
  if (!summary.cells.empty()) {
    out += summary.by_release ? (summary.by_policy ? "Per release and policy pair "
                                                     "(release/election/truncation):\n"
                                                   : "Per release:\n")
                              : "Per policy pair (election/truncation):\n";
    for (const CellSummary& summed : summary.cells) {
      out += "  " + summed.cell + ": " + std::to_string(summed.failed) + " of " +
             std::to_string(summed.runs) + " failed";
      if (summed.has_failure) {
        out += "; first " + SeedText(summed.first) + " [" +
               summed.first.result.failures.front().signature + "]";
        out += "; smallest " + SeedText(summed.smallest) + " [" +
               summed.smallest.result.failures.front().signature + "]";
      }
      out += "\n";
    }
  }
  return out;
}

std::string MixedMetaProblem(const std::vector<ResultLine>& lines) {
  std::set<std::string> versions;
  std::set<std::string> bases;
  for (const ResultLine& line : lines) {
    versions.insert(line.meta.ksim_version + " (" + line.meta.commit + ")");
    bases.insert(line.meta.base + " (" + line.meta.base_hash + ")");
  }
  std::string problem;
  auto list = [](const std::set<std::string>& items) {
    std::string text;
    for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
    return text;
  };
  if (versions.size() > 1) problem += "ksim versions differ: " + list(versions) + "\n";
  if (bases.size() > 1) problem += "base scenarios differ: " + list(bases) + "\n";
  return problem;
}

}  // namespace ksim::sim
