#include "sim/runner/report.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string_view>
#include <tuple>
#include <utility>

#include "core/base/text_distance.h"
#include "core/cluster/partition.h"
#include "core/controller/controller.h"
#include "sim/kernel/trace.h"
#include "sim/scenario/loader.h"
#include "sim/scenario/variants.h"

namespace ksim::sim {
namespace {

using Json = nlohmann::ordered_json;

// "12.345 s" from microseconds (integer arithmetic; negative times do not occur in a run).
std::string SecondsText(TimeUs t_us) {
  const int64_t ms = t_us / kUsPerMs;
  std::string millis = std::to_string(ms % 1000);
  millis.insert(0, 3 - millis.size(), '0');
  return std::to_string(ms / 1000) + "." + millis + " s";
}

std::string PadRight(std::string text, size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string PadLeft(std::string text, size_t width) {
  if (text.size() < width) text.insert(0, width - text.size(), ' ');
  return text;
}

Json ExpectedJson(const Expectation& expectation) {
  if (expectation.metric == kSettledExpectation) return expectation.exact.value_or(0) != 0;
  if (expectation.exact) return *expectation.exact;
  Json range = Json::object();
  if (expectation.min) range["min"] = *expectation.min;
  if (expectation.max) range["max"] = *expectation.max;
  return range;
}

std::string AnomalyLine(const Anomaly& anomaly) {
  std::string line = anomaly.record_id + " " + ToString(anomaly.tp);
  if (anomaly.offset.value() >= 0) line += " offset " + ToString(anomaly.offset);
  if (!anomaly.group.empty()) line += " group " + anomaly.group;
  return line + ": " + (anomaly.cause.empty() ? std::string("unknown") : anomaly.cause);
}

void AppendActions(const RunResult& result, std::string& out) {
  if (result.actions.empty()) return;
  // Trace times, as the causes and the trace itself: scenario time 0 is start_us.
  out += "Actions (trace time; the scenario's at_ms counts from " + SecondsText(result.start_us) +
         "):\n";
  for (const ActionOutput& action : result.actions) {
    const std::string when = PadLeft(SecondsText(result.start_us + action.at_ms * kUsPerMs), 12);
    out += "  " + when + "  " + action.description;
    if (action.skipped) {
      out += " (skipped";
      for (const std::string& reason : action.output) out += ": " + reason;
      out += ")\n";
      continue;
    }
    out += "\n";
    for (const std::string& line : action.output) {
      out += std::string(16, ' ') + "| " + line + "\n";
    }
  }
}

// KafkaProducer's WARN lines about its settings: what a reader of the run must know (the
// idempotence they asked for is not there).
void AppendClientWarnings(const RunResult& result, std::string& out) {
  if (result.client_warnings.empty()) return;
  out += "Client warnings:\n";
  for (const std::string& warning : result.client_warnings) out += "  WARN " + warning + "\n";
}

// Which of Kafka 0.10's two consumers each consumer ran: they keep their groups and offsets in
// different places (ZooKeeper or the group coordinator).
void AppendConsumers(const RunResult& result, std::string& out) {
  if (result.consumers.empty()) return;
  out += "Consumers:\n";
  for (const RunResult::ConsumerSummary& consumer : result.consumers) {
    out += "  " + consumer.client + ": " +
           (consumer.kind == "zookeeper" ? "the old consumer (groups and offsets in ZooKeeper)"
                                         : "the group coordinator's consumer");
    out += consumer.group.empty() ? ", no group\n" : ", group " + consumer.group + "\n";
  }
}

void AppendMetrics(const RunResult& result, std::string& out) {
  out += "Metrics:\n";
  size_t name_width = 0;
  size_t value_width = 0;
  for (const Metric& metric : result.check.metrics) {
    name_width = std::max(name_width, metric.name.size());
    value_width = std::max(value_width, std::to_string(metric.value).size());
  }
  for (const Metric& metric : result.check.metrics) {
    out += "  " + PadRight(metric.name, name_width) + "  " +
           PadLeft(std::to_string(metric.value), value_width) + "\n";
  }
  if (result.check.expired > 0) {
    out += "  (" + std::to_string(result.check.expired) +
           " acked records were deleted by retention: expired, not lost)\n";
  }
}

void AppendAnomalies(const RunResult& result, size_t max_anomalies, std::string& out) {
  if (result.check.anomalies.empty()) {
    out += "Anomalies: none\n";
    return;
  }
  out += "Anomalies:\n";
  // Kinds in the order they first appear (the checker lists them grouped by kind already).
  std::vector<std::string> kinds;
  std::map<std::string, std::vector<const Anomaly*>> by_kind;
  for (const Anomaly& anomaly : result.check.anomalies) {
    auto [it, inserted] = by_kind.try_emplace(anomaly.kind);
    if (inserted) kinds.push_back(anomaly.kind);
    it->second.push_back(&anomaly);
  }
  for (const std::string& kind : kinds) {
    const std::vector<const Anomaly*>& list = by_kind.at(kind);
    out += "  " + kind + " (" + std::to_string(list.size()) + "):\n";
    const size_t shown = std::min(list.size(), max_anomalies);
    for (size_t i = 0; i < shown; ++i) out += "    " + AnomalyLine(*list[i]) + "\n";
    if (list.size() > shown) {
      out += "    ... and " + std::to_string(list.size() - shown) + " more\n";
    }
  }
}

void AppendLines(std::string_view title, const std::vector<std::string>& lines, std::string& out) {
  if (lines.empty()) return;
  out += std::string(title) + ":\n";
  for (const std::string& line : lines) out += "  " + line + "\n";
}

void AppendExpectations(const RunResult& result, std::string& out) {
  if (result.expectations.empty()) {
    out += "Expectations: none\n";
    return;
  }
  out += "Expectations:\n";
  size_t width = 0;
  for (const ExpectationResult& e : result.expectations) {
    width = std::max(width, e.expectation.metric.size());
  }
  for (const ExpectationResult& e : result.expectations) {
    out += std::string(e.ok ? "  ok      " : "  FAILED  ") + PadRight(e.expectation.metric, width) +
           "  expected " + e.Expected() + ", actual " + e.Actual() + "\n";
  }
}

Json MetricsJson(const std::vector<Metric>& metrics) {
  Json json = Json::object();
  for (const Metric& metric : metrics) json[metric.name] = metric.value;
  return json;
}

// ---- Matrix JSON parsing ----------------------------------------------------------------------

// "<JSON pointer>: <message>"; the document itself (pointer "") gets the message alone.
Status Invalid(const std::string& path, const std::string& message) {
  return Status(Errc::kInvalidArgument, path.empty() ? message : path + ": " + message);
}

// Unknown keys of `object` (whose valid keys are `known`) as an error naming the closest one.
Status CheckKeys(const Json& object, const std::string& path,
                 const std::vector<std::string_view>& known) {
  for (const auto& item : object.items()) {
    const std::string& key = item.key();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string message = "unknown key \"" + key + "\"";
    if (std::optional<std::string_view> closest = ClosestName(key, known)) {
      message += ": did you mean \"" + std::string(*closest) + "\"?";
    } else {
      message += ": expected one of";
      for (size_t i = 0; i < known.size(); ++i) {
        message += std::string(i == 0 ? " \"" : ", \"") + std::string(known[i]) + "\"";
      }
    }
    return Invalid(path + "/" + key, message);
  }
  return Status::Ok();
}

Result<const Json*> Member(const Json& object, const std::string& path, const char* key) {
  auto it = object.find(key);
  if (it == object.end()) return Invalid(path, std::string("missing key \"") + key + "\"");
  return &*it;
}

Result<std::string> StringMember(const Json& object, const std::string& path, const char* key) {
  KSIM_ASSIGN_OR_RETURN(const Json* value, Member(object, path, key));
  if (!value->is_string()) return Invalid(path + "/" + key, "expected a string");
  return value->get<std::string>();
}

}  // namespace

// ---- The readable report ------------------------------------------------------------------------

std::string FormatRunReport(const RunResult& result, size_t max_anomalies) {
  size_t failed = 0;
  for (const ExpectationResult& e : result.expectations) failed += e.ok ? 0 : 1;
  std::string out = "== " + result.scenario + " / " + result.variant + " (seed " +
                    std::to_string(result.seed) + "): ";
  out += result.ok ? std::string("OK")
                   : "FAILED (" + std::to_string(failed) + " of " +
                         std::to_string(result.expectations.size()) + " expectations not met)";
  out += " ==\n";
  if (!result.kafka_version.empty()) {
    out += "Kafka " + result.kafka_version;
    if (!result.client_kafka_versions.empty()) {
      out += "; clients of another release:";
      for (const auto& [client, release] : result.client_kafka_versions) {
        out += " " + client + " " + release;
      }
    }
    out += "\n";
  }
  AppendActions(result, out);
  AppendClientWarnings(result, out);
  AppendConsumers(result, out);
  AppendMetrics(result, out);
  AppendAnomalies(result, max_anomalies, out);
  std::vector<std::string> permitted;
  for (const PermittedLoss& loss : result.check.permitted_losses) permitted.push_back(loss.Text());
  AppendLines("Permitted losses (Kafka allows these)", permitted, out);
  AppendLines("Invariant violations (engine rules broken: a bug in ksim)",
              result.invariant_violations, out);
  AppendLines("Audit errors", result.audit.errors, out);
  if (!result.drained && !result.undrained.empty()) {
    out += "Final phase: the drain ended before the cluster settled: " + result.undrained + "\n";
  }
  AppendExpectations(result, out);
  out += "Run: ended at " + SecondsText(result.end_us) + " simulated; trace " +
         std::to_string(result.trace_lines) + " lines, hash " + Xxh64::Hex(result.trace_hash) +
         "\n";
  return out;
}

Json RunResultJson(const RunResult& result) {
  Json json = Json::object();
  json["metrics"] = MetricsJson(result.check.metrics);
  Json expectations = Json::array();
  for (const ExpectationResult& e : result.expectations) {
    Json item = Json::object();
    item["metric"] = e.expectation.metric;
    item["expected"] = ExpectedJson(e.expectation);
    if (e.expectation.metric == kSettledExpectation) {
      item["actual"] = e.actual != 0;
    } else {
      item["actual"] = e.actual;
    }
    item["ok"] = e.ok;
    expectations.push_back(std::move(item));
  }
  json["expectations"] = std::move(expectations);
  json["ok"] = result.ok;
  json["seed"] = result.seed;
  if (!result.kafka_version.empty()) json["kafka_version"] = result.kafka_version;
  if (!result.client_kafka_versions.empty()) {
    Json clients = Json::object();
    for (const auto& [client, release] : result.client_kafka_versions) clients[client] = release;
    json["client_kafka_versions"] = std::move(clients);
  }
  json["anomalies"] = AnomaliesJson(result.check.anomalies);
  Json actions = Json::array();
  for (const ActionOutput& action : result.actions) {
    Json item = Json::object();
    item["index"] = action.index;
    item["at_ms"] = action.at_ms;
    item["t_us"] = result.start_us + action.at_ms * kUsPerMs;
    item["action"] = action.description;
    item["output"] = action.output;
    item["skipped"] = action.skipped;
    actions.push_back(std::move(item));
  }
  json["actions"] = std::move(actions);
  json["client_warnings"] = result.client_warnings;
  Json consumers = Json::array();
  for (const RunResult::ConsumerSummary& consumer : result.consumers) {
    Json item = Json::object();
    item["client"] = consumer.client;
    item["consumer"] = consumer.kind;
    item["group"] = consumer.group;
    consumers.push_back(std::move(item));
  }
  json["consumers"] = std::move(consumers);
  Json permitted = Json::array();
  for (const PermittedLoss& loss : result.check.permitted_losses) {
    Json item = Json::object();
    item["topic"] = loss.tp.topic;
    item["partition"] = loss.tp.partition.value();
    item["offset"] = loss.offset.value();
    item["t_us"] = loss.t_us;
    item["promise"] = loss.promise;
    item["reason"] = loss.reason;
    item["detail"] = loss.detail;
    permitted.push_back(std::move(item));
  }
  json["permitted_losses"] = std::move(permitted);
  json["invariant_violations"] = result.invariant_violations;
  json["expired"] = result.check.expired;
  json["audit_errors"] = result.audit.errors;
  json["start_us"] = result.start_us;
  json["end_us"] = result.end_us;
  json["trace_lines"] = result.trace_lines;
  json["trace_hash"] = Xxh64::Hex(result.trace_hash);
  return json;
}

Json ReportJson(const std::vector<RunResult>& results) {
  Json json = Json::object();
  json["scenario"] = results.empty() ? std::string() : results.front().scenario;
  json["seed"] = results.empty() ? uint64_t{0} : results.front().seed;
  Json variants = Json::object();
  for (const RunResult& result : results) variants[result.variant] = RunResultJson(result);
  json["variants"] = std::move(variants);
  return json;
}

// ---- The policy matrix ------------------------------------------------------------------------

const std::vector<std::string>& MatrixMetrics() {
  static const std::vector<std::string> kMetrics = {"lost_acked", "duplicated", "unavailable_ms",
                                                    "elections", "replica_divergence"};
  return kMetrics;
}

const std::vector<std::string>& MatrixElectionPolicies() {
  static const std::vector<std::string> kPolicies = [] {
    std::vector<std::string> policies;
    for (std::string_view name : ElectionPolicyNames()) {
      ControllerOptions options;
      options.election_policy = std::string(name);
      if (Controller::ValidateOptions(options).ok()) policies.emplace_back(name);
    }
    return policies;
  }();
  return kPolicies;
}

const std::vector<std::string>& MatrixTruncationPolicies() {
  static const std::vector<std::string> kPolicies = {
      std::string(TruncationPolicyName(TruncationPolicy::kHighWatermark)),
      std::string(TruncationPolicyName(TruncationPolicy::kLeaderEpoch))};
  return kPolicies;
}

std::string MatrixCellName(const MatrixCell& cell) {
  return (cell.kafka_version.empty() ? "" : cell.kafka_version + "/") + cell.election + "/" +
         cell.truncation;
}

Result<Matrix> RunPolicyMatrix(const Scenario& scenario, std::optional<uint64_t> seed,
                               const MatrixProgress& progress) {
  Matrix matrix;
  matrix.scenario = scenario.name;
  matrix.seed = seed.value_or(scenario.seed);
  const size_t cells = MatrixElectionPolicies().size() * MatrixTruncationPolicies().size();
  for (const std::string& election : MatrixElectionPolicies()) {
    for (const std::string& truncation : MatrixTruncationPolicies()) {
      MatrixCell cell;
      cell.election = election;
      cell.truncation = truncation;
      const std::string name = MatrixCellName(cell);
      const size_t index = matrix.cells.size();
      Scenario run = scenario;
      run.variants.clear();
      run.policy.election = election;
      run.policy.truncation = truncation;
      RunOptions options;
      options.seed = matrix.seed;
      options.variant = name;
      if (progress) {
        progress(name, index, cells, 0, 0);
        options.progress = [&progress, name, index, cells](TimeUs done_us, TimeUs total_us) {
          progress(name, index, cells, done_us, total_us);
        };
      }
      Result<RunResult> result = RunScenario(run, options);
      if (!result.ok()) {
        return Status(result.status().code(),
                      "policy matrix cell " + name + ": " + result.status().message());
      }
      for (const std::string& metric : MatrixMetrics()) {
        cell.metrics.push_back(Metric{metric, result->check.Value(metric)});
      }
      matrix.cells.push_back(std::move(cell));
    }
  }
  return matrix;
}

Result<Matrix> RunReleaseMatrix(std::string_view text, const std::string& file,
                                const std::string& variant,
                                const std::vector<KafkaRelease>& releases,
                                std::optional<uint64_t> seed, const MatrixProgress& progress) {
  Json document = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!document.is_object()) {
    return Status(Errc::kInvalidArgument, file + ": not a scenario document (a JSON object)");
  }
  Matrix matrix;
  for (KafkaRelease release : releases) {
    const std::string name(KafkaReleaseName(release));
    matrix.kafka_versions.push_back(name);
    document["kafka_version"] = name;
    Result<Scenario> parsed = ParseScenario(document.dump(), file);
    if (!parsed.ok()) {
      return Status(parsed.status().code(),
                    "at kafka_version " + name + ": " + parsed.status().message());
    }
    Result<std::vector<SelectedRun>> runs = SelectRuns(*parsed, variant, file);
    if (!runs.ok()) return runs.status();
    const Scenario& run = *runs->front().scenario;
    if (matrix.cells.empty()) {
      matrix.scenario = run.name;
      matrix.seed = seed.value_or(run.seed);
    }
    MatrixProgress named;
    if (progress) {
      named = [&progress, &name](const std::string& cell, size_t index, size_t cells,
                                 TimeUs done_us, TimeUs total_us) {
        progress(name + "/" + cell, index, cells, done_us, total_us);
      };
    }
    Result<Matrix> one = RunPolicyMatrix(run, matrix.seed, named);
    if (!one.ok()) {
      return Status(one.status().code(),
                    "at kafka_version " + name + ": " + one.status().message());
    }
    for (MatrixCell& cell : one->cells) {
      cell.kafka_version = name;
      matrix.cells.push_back(std::move(cell));
    }
  }
  return matrix;
}

Result<std::vector<KafkaRelease>> ParseReleaseList(std::string_view text) {
  if (text == "all") {
    const std::span<const KafkaRelease> all = KafkaReleases();
    return std::vector<KafkaRelease>(all.begin(), all.end());
  }
  std::vector<KafkaRelease> releases;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item.empty()) {
      return Status(Errc::kInvalidArgument,
                    "an empty release in '" + std::string(text) +
                        "': expected all, or releases separated by commas (" + KafkaReleaseList() +
                        ")");
    }
    Result<KafkaRelease> release = ParseKafkaRelease(item);
    if (!release.ok()) return release.status();
    if (std::find(releases.begin(), releases.end(), *release) != releases.end()) {
      return Status(Errc::kInvalidArgument, "release " + std::string(KafkaReleaseName(*release)) +
                                                " appears twice in '" + std::string(text) + "'");
    }
    releases.push_back(*release);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return releases;
}

std::string FormatMatrix(const Matrix& matrix) {
  const bool by_release = !matrix.kafka_versions.empty();
  std::vector<std::string> header = {"election", "truncation"};
  if (by_release) header.insert(header.begin(), "kafka_version");
  const size_t names = header.size();
  for (const std::string& metric : MatrixMetrics()) header.push_back(metric);
  std::vector<std::vector<std::string>> rows;
  for (const MatrixCell& cell : matrix.cells) {
    std::vector<std::string> row = {cell.election, cell.truncation};
    if (by_release) row.insert(row.begin(), cell.kafka_version);
    for (const Metric& metric : cell.metrics) row.push_back(std::to_string(metric.value));
    rows.push_back(std::move(row));
  }
  std::vector<size_t> widths(header.size(), 0);
  for (size_t i = 0; i < header.size(); ++i) widths[i] = header[i].size();
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  // Policy names left-aligned, numbers right-aligned; two spaces between columns.
  auto line = [&widths, names](const std::vector<std::string>& cells) {
    std::string text;
    for (size_t i = 0; i < cells.size() && i < widths.size(); ++i) {
      if (i > 0) text += "  ";
      text += i < names ? PadRight(cells[i], widths[i]) : PadLeft(cells[i], widths[i]);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text + "\n";
  };
  std::string out = "Policy matrix: " + matrix.scenario + " (seed " + std::to_string(matrix.seed) +
                    ")\n" + line(header);
  for (const auto& row : rows) out += line(row);
  return out;
}

Json MatrixJson(const Matrix& matrix) {
  Json json = Json::object();
  json["scenario"] = matrix.scenario;
  json["seed"] = matrix.seed;
  if (!matrix.kafka_versions.empty()) json["kafka_versions"] = matrix.kafka_versions;
  Json cells = Json::array();
  for (const MatrixCell& cell : matrix.cells) {
    Json item = Json::object();
    if (!cell.kafka_version.empty()) item["kafka_version"] = cell.kafka_version;
    item["election"] = cell.election;
    item["truncation"] = cell.truncation;
    item["metrics"] = MetricsJson(cell.metrics);
    cells.push_back(std::move(item));
  }
  json["cells"] = std::move(cells);
  return json;
}

Result<Matrix> ParseMatrixJson(const Json& json) {
  if (!json.is_object())
    return Invalid("", "expected an object {\"scenario\", \"seed\", \"cells\"}");
  KSIM_RETURN_IF_ERROR(CheckKeys(json, "", {"scenario", "seed", "kafka_versions", "cells"}));
  Matrix matrix;
  KSIM_ASSIGN_OR_RETURN(matrix.scenario, StringMember(json, "", "scenario"));
  KSIM_ASSIGN_OR_RETURN(const Json* seed, Member(json, "", "seed"));
  if (!seed->is_number_unsigned()) return Invalid("/seed", "expected an unsigned integer");
  matrix.seed = seed->get<uint64_t>();
  if (auto versions = json.find("kafka_versions"); versions != json.end()) {
    if (!versions->is_array() || versions->empty()) {
      return Invalid("/kafka_versions", "expected a non-empty array of releases");
    }
    for (size_t i = 0; i < versions->size(); ++i) {
      const std::string path = "/kafka_versions/" + std::to_string(i);
      const Json& item = (*versions)[i];
      if (!item.is_string()) return Invalid(path, "expected a release such as \"0.11.0\"");
      Result<KafkaRelease> release = ParseKafkaRelease(item.get<std::string>());
      if (!release.ok()) return Invalid(path, release.status().message());
      const std::string name(KafkaReleaseName(*release));
      if (std::find(matrix.kafka_versions.begin(), matrix.kafka_versions.end(), name) !=
          matrix.kafka_versions.end()) {
        return Invalid(path, "release " + name + " appears twice");
      }
      matrix.kafka_versions.push_back(name);
    }
  }
  KSIM_ASSIGN_OR_RETURN(const Json* cells, Member(json, "", "cells"));
  if (!cells->is_array()) return Invalid("/cells", "expected an array of cells");
  const std::vector<std::string_view> metric_names(MatrixMetrics().begin(), MatrixMetrics().end());
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (size_t i = 0; i < cells->size(); ++i) {
    const Json& item = (*cells)[i];
    const std::string path = "/cells/" + std::to_string(i);
    if (!item.is_object()) {
      return Invalid(path, "expected an object {\"election\", \"truncation\", \"metrics\"}");
    }
    KSIM_RETURN_IF_ERROR(
        CheckKeys(item, path, {"kafka_version", "election", "truncation", "metrics"}));
    MatrixCell cell;
    if (matrix.kafka_versions.empty()) {
      if (item.contains("kafka_version")) {
        return Invalid(path + "/kafka_version",
                       "a cell names a release only when the matrix lists \"kafka_versions\"");
      }
    } else {
      KSIM_ASSIGN_OR_RETURN(const std::string version, StringMember(item, path, "kafka_version"));
      Result<KafkaRelease> release = ParseKafkaRelease(version);
      if (!release.ok()) return Invalid(path + "/kafka_version", release.status().message());
      cell.kafka_version = std::string(KafkaReleaseName(*release));
      if (std::find(matrix.kafka_versions.begin(), matrix.kafka_versions.end(),
                    cell.kafka_version) == matrix.kafka_versions.end()) {
        return Invalid(path + "/kafka_version",
                       "release " + cell.kafka_version + " is not in \"kafka_versions\"");
      }
    }
    KSIM_ASSIGN_OR_RETURN(cell.election, StringMember(item, path, "election"));
    KSIM_ASSIGN_OR_RETURN(cell.truncation, StringMember(item, path, "truncation"));
    if (!seen.emplace(cell.kafka_version, cell.election, cell.truncation).second) {
      return Invalid(path, "cell " + MatrixCellName(cell) + " appears twice");
    }
    KSIM_ASSIGN_OR_RETURN(const Json* metrics, Member(item, path, "metrics"));
    if (!metrics->is_object()) return Invalid(path + "/metrics", "expected an object");
    KSIM_RETURN_IF_ERROR(CheckKeys(*metrics, path + "/metrics", metric_names));
    for (const std::string& name : MatrixMetrics()) {
      auto it = metrics->find(name);
      if (it == metrics->end()) {
        return Invalid(path + "/metrics", "missing metric \"" + name + "\"");
      }
      if (!it->is_number_integer()) {
        return Invalid(path + "/metrics/" + name, "expected an integer");
      }
      cell.metrics.push_back(Metric{name, it->get<int64_t>()});
    }
    matrix.cells.push_back(std::move(cell));
  }
  return matrix;
}

std::vector<std::string> DiffMatrix(const Matrix& golden, const Matrix& actual) {
  std::vector<std::string> lines;
  if (golden.scenario != actual.scenario) {
    lines.push_back("scenario: " + golden.scenario + " -> " + actual.scenario);
  }
  if (golden.seed != actual.seed) {
    lines.push_back("seed: " + std::to_string(golden.seed) + " -> " + std::to_string(actual.seed));
  }
  auto find = [](const Matrix& matrix, const MatrixCell& like) -> const MatrixCell* {
    for (const MatrixCell& cell : matrix.cells) {
      if (cell.kafka_version == like.kafka_version && cell.election == like.election &&
          cell.truncation == like.truncation) {
        return &cell;
      }
    }
    return nullptr;
  };
  for (const MatrixCell& want : golden.cells) {
    const MatrixCell* got = find(actual, want);
    if (got == nullptr) {
      lines.push_back(MatrixCellName(want) + ": missing (in the golden matrix only)");
      continue;
    }
    // Metrics by name: a metric on one side only is a difference too.
    for (const Metric& metric : want.metrics) {
      auto it = std::find_if(got->metrics.begin(), got->metrics.end(),
                             [&metric](const Metric& m) { return m.name == metric.name; });
      if (it == got->metrics.end()) {
        lines.push_back(MatrixCellName(want) + ": " + metric.name + " " +
                        std::to_string(metric.value) + " -> (none)");
      } else if (it->value != metric.value) {
        lines.push_back(MatrixCellName(want) + ": " + metric.name + " " +
                        std::to_string(metric.value) + " -> " + std::to_string(it->value));
      }
    }
    for (const Metric& metric : got->metrics) {
      auto it = std::find_if(want.metrics.begin(), want.metrics.end(),
                             [&metric](const Metric& m) { return m.name == metric.name; });
      if (it == want.metrics.end()) {
        lines.push_back(MatrixCellName(want) + ": " + metric.name + " (none) -> " +
                        std::to_string(metric.value));
      }
    }
  }
  for (const MatrixCell& cell : actual.cells) {
    if (find(golden, cell) == nullptr) {
      lines.push_back(MatrixCellName(cell) + ": new (not in the golden matrix)");
    }
  }
  return lines;
}

}  // namespace ksim::sim
