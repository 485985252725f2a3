// The scenario library (scenarios/**/*.json) in the test suite, as shipped: every scenario file is
// found at run time under the source tree's scenarios/ directory (so a new file is tested without
// touching this one), and each (scenario, variant) pair is one test case, so ctest spreads them
// over its workers:
//
// - the file loads (a broken scenario fails here with the loader's messages);
// - the variant runs twice with the same seed and gives the same trace (hash and line count):
//   the determinism promise of docs/DESIGN.md;
// - it has expectations, and every one of them is met (a failure prints each failed expectation
//   and the run's whole report: actions, metrics, anomalies with their causes);
// - every line of its trace, at the `messages` level, speaks the one vocabulary of
//   core/base/trace_names.h: each `ev`, each field name and each fixed node name is one of its
//   constants (an emitter that spells a name of its own fails here).
//
// The election-policy matrix: each scenarios/policies/<name>.json has a golden matrix next to it,
// <name>.golden.json (written by `ksim run --matrix --write-golden`); the scenario is run under
// every (election, truncation) policy pair and any cell that differs fails the test with the
// DiffMatrix lines ("clean/high-watermark: lost_acked 0 -> 3").
//
// A few of the seed walkthrough's facts are not metrics and are checked on the cli output: the
// 4-3-3 placement of ten partitions on three brokers, the refused replication factor, the
// consumer printing what the producer typed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/trace_names.h"
#include "core/config/kafka_version.h"
#include "sim/runner/report.h"
#include "sim/runner/runner.h"
#include "sim/scenario/loader.h"
#include "sim/scenario/scenario.h"

namespace ksim::sim {
namespace {

namespace fs = std::filesystem;

// The source tree (tests/CMakeLists.txt defines KSIM_SOURCE_DIR for every test).
fs::path SourceDir() { return fs::path(KSIM_SOURCE_DIR); }

fs::path ScenarioDir() { return SourceDir() / "scenarios"; }

bool IsGolden(const fs::path& path) { return path.string().ends_with(".golden.json"); }

// Every scenario file under scenarios/, relative to it, sorted (the order of the test cases).
std::vector<std::string> ScenarioFiles() {
  std::vector<std::string> files;
  std::error_code error;
  for (fs::recursive_directory_iterator it(ScenarioDir(), error), end; !error && it != end;
       it.increment(error)) {
    if (!it->is_regular_file() || it->path().extension() != ".json" || IsGolden(it->path())) {
      continue;
    }
    files.push_back(fs::relative(it->path(), ScenarioDir()).generic_string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

struct Case {
  std::string file;  // relative to scenarios/
  std::string variant;
};

void PrintTo(const Case& c, std::ostream* out) { *out << c.file << " [" << c.variant << "]"; }

// The base and every variant of every scenario. A file that does not load still gets its base
// case, which then fails with the loader's errors.
std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (const std::string& file : ScenarioFiles()) {
    cases.push_back({file, "base"});
    Result<Scenario> scenario = LoadScenario((ScenarioDir() / file).string());
    if (!scenario.ok()) continue;
    for (const ScenarioVariant& variant : scenario->variants) {
      cases.push_back({file, variant.name});
    }
  }
  return cases;
}

std::string TestName(const std::string& file, const std::string& variant) {
  std::string name = file.substr(0, file.size() - std::string(".json").size());
  if (!variant.empty()) name += "__" + variant;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

// The base or the named variant of `scenario`; null if there is no such variant.
const Scenario* Pick(const Scenario& scenario, const std::string& variant) {
  if (variant == "base") return &scenario;
  for (const ScenarioVariant& v : scenario.variants) {
    if (v.name == variant) return &v.scenario;
  }
  return nullptr;
}

std::string FailedExpectations(const RunResult& result) {
  std::ostringstream out;
  for (const ExpectationResult& e : result.expectations) {
    if (e.ok) continue;
    out << "  expectation FAILED: " << e.expectation.metric << " expected " << e.Expected()
        << ", actual " << e.actual << "\n";
  }
  return out.str();
}

// The names in `trace` (JSON Lines, header first) that core/base/trace_names.h does not list, as
// "line N: ..." messages: event names, field names (the verdict's nested objects' too) and node
// names other than a broker's, a client's (`clients`) or the scenario's own.
std::vector<std::string> NamesOutsideTheVocabulary(const std::string& trace,
                                                   const std::vector<std::string>& clients) {
  auto listed = [](const auto& all, std::string_view name) {
    return std::find(std::begin(all), std::end(all), name) != std::end(all);
  };
  std::vector<std::string> problems;
  auto check_fields = [&](const nlohmann::json& object, size_t line, auto& self) -> void {
    for (const auto& [key, value] : object.items()) {
      const bool own = key == field::kTimeUs || key == field::kNode || key == field::kEv;
      if (!own && !listed(field::kAll, key)) {
        problems.push_back("line " + std::to_string(line) + ": field " + key);
      }
      // Maps keyed by names of the run, not fields: the verdict's metrics (metric names) and
      // audit (partitions), metadata_update's topics (topic names), a config action's settings
      // (Kafka's setting names).
      if (key == field::kMetrics || key == field::kAudit || key == field::kTopics ||
          key == field::kConfig) {
        continue;
      }
      if (value.is_object()) self(value, line, self);
      if (value.is_array()) {
        for (const nlohmann::json& item : value) {
          if (item.is_object()) self(item, line, self);
        }
      }
    }
  };
  std::istringstream lines(trace);
  std::string text;
  for (size_t line = 1; std::getline(lines, text); ++line) {
    if (line == 1) continue;  // the header
    const nlohmann::json event = nlohmann::json::parse(text);
    const std::string ev = event.at(field::kEv).get<std::string>();
    const std::string node = event.at(field::kNode).get<std::string>();
    if (!listed(ev::kAll, ev)) problems.push_back("line " + std::to_string(line) + ": ev " + ev);
    const bool named_node = listed(node::kAll, node) || node.starts_with(node::kBrokerPrefix) ||
                            node.starts_with(node::kCliToolPrefix) ||
                            std::find(clients.begin(), clients.end(), node) != clients.end();
    if (!named_node) problems.push_back("line " + std::to_string(line) + ": node " + node);
    check_fields(event, line, check_fields);
  }
  return problems;
}

class ScenarioLibraryTest : public ::testing::TestWithParam<Case> {};

TEST_P(ScenarioLibraryTest, RunsTwiceIdenticallyAndMeetsItsExpectations) {
  const Case& c = GetParam();
  Result<Scenario> loaded = LoadScenario((ScenarioDir() / c.file).string());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const Scenario* scenario = Pick(*loaded, c.variant);
  ASSERT_NE(scenario, nullptr) << "no variant " << c.variant;
  EXPECT_FALSE(scenario->description.empty()) << "a shipped scenario says what to watch";

  RunOptions options;
  options.variant = c.variant;
  options.trace_level = TraceLevel::kMessages;  // every line a trace can hold
  options.keep_trace_bytes = true;
  Result<RunResult> first = RunScenario(*scenario, options);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  Result<RunResult> second = RunScenario(*scenario, options);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(first->trace_hash, second->trace_hash) << "same scenario, same seed, another trace";
  EXPECT_EQ(first->trace_lines, second->trace_lines);
  EXPECT_GT(first->trace_lines, 0u);
  std::vector<std::string> clients;
  for (const ClientSpec& client : scenario->clients) clients.push_back(client.id);
  const std::vector<std::string> strangers = NamesOutsideTheVocabulary(first->trace_bytes, clients);
  EXPECT_TRUE(strangers.empty()) << "names core/base/trace_names.h does not list, first: "
                                 << strangers.front() << " (" << strangers.size() << " in all)";

  EXPECT_FALSE(first->expectations.empty()) << "a shipped scenario states what it teaches";
  EXPECT_TRUE(first->ok) << FailedExpectations(*first) << "\n" << FormatRunReport(*first);
}

INSTANTIATE_TEST_SUITE_P(Library, ScenarioLibraryTest, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return TestName(info.param.file, info.param.variant);
                         });

TEST(ScenarioLibraryFilesTest, TheLibraryHasTheIssuesScenarios) {
  const std::vector<std::string> files = ScenarioFiles();
  auto count_under = [&](const std::string& dir) {
    return std::count_if(files.begin(), files.end(),
                         [&](const std::string& f) { return f.starts_with(dir + "/"); });
  };
  EXPECT_GE(count_under("seed"), 1);
  EXPECT_GE(count_under("teaching"), 7);
  EXPECT_GE(count_under("policies"), 2);
  EXPECT_NE(std::find(files.begin(), files.end(), "teaching/delivery-semantics.json"), files.end());
}

// --- The policy matrix -------------------------------------------------------------------------

std::vector<std::string> PolicyScenarios() {
  std::vector<std::string> files;
  for (const std::string& file : ScenarioFiles()) {
    if (file.starts_with("policies/")) files.push_back(file);
  }
  return files;
}

class PolicyMatrixTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PolicyMatrixTest, EveryPolicyPairGivesItsGoldenOutcome) {
  const std::string& file = GetParam();
  Result<Scenario> scenario = LoadScenario((ScenarioDir() / file).string());
  ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
  fs::path golden_path = ScenarioDir() / file;
  golden_path.replace_extension(".golden.json");
  std::ifstream in(golden_path);
  ASSERT_TRUE(in.good()) << golden_path << " is missing: write it with `ksim run --matrix "
                         << "--write-golden " << golden_path.string() << " "
                         << (ScenarioDir() / file).string() << "`";
  const nlohmann::ordered_json json = nlohmann::ordered_json::parse(in, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << golden_path << " is not JSON";
  Result<Matrix> golden = ParseMatrixJson(json);
  ASSERT_TRUE(golden.ok()) << golden.status().ToString();
  EXPECT_EQ(golden->scenario, scenario->name);

  // A golden across releases runs each of them (the file parsed again at each).
  Result<Matrix> actual = Status(Errc::kInvalidArgument, "not run");
  if (golden->kafka_versions.empty()) {
    actual = RunPolicyMatrix(*scenario, golden->seed);
  } else {
    std::vector<KafkaRelease> releases;
    for (const std::string& version : golden->kafka_versions) {
      releases.push_back(ParseKafkaRelease(version).value());
    }
    std::ifstream text_in(ScenarioDir() / file);
    std::ostringstream text;
    text << text_in.rdbuf();
    actual = RunReleaseMatrix(text.str(), (ScenarioDir() / file).string(), "base", releases,
                              golden->seed);
  }
  ASSERT_TRUE(actual.ok()) << actual.status().ToString();
  const std::vector<std::string> diff = DiffMatrix(*golden, *actual);
  std::ostringstream lines;
  for (const std::string& line : diff) lines << "  " << line << "\n";
  EXPECT_TRUE(diff.empty()) << "the policy matrix of " << file << " changed:\n"
                            << lines.str() << "now:\n"
                            << FormatMatrix(*actual);
}

INSTANTIATE_TEST_SUITE_P(Library, PolicyMatrixTest, ::testing::ValuesIn(PolicyScenarios()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return TestName(info.param, "");
                         });

// --- The seed walkthrough's cli output ---------------------------------------------------------

// The base run of `file`; a load or run error is a test failure (and an empty result).
RunResult RunBase(const std::string& file) {
  Result<Scenario> scenario = LoadScenario((ScenarioDir() / file).string());
  if (!scenario.ok()) {
    ADD_FAILURE() << scenario.status().ToString();
    return {};
  }
  Result<RunResult> result = RunScenario(*scenario, RunOptions{});
  if (!result.ok()) {
    ADD_FAILURE() << result.status().ToString();
    return {};
  }
  return std::move(*result);
}

// The output of the first action whose description contains `what`.
std::vector<std::string> OutputOf(const RunResult& result, const std::string& what) {
  for (const ActionOutput& action : result.actions) {
    if (action.description.find(what) != std::string::npos) return action.output;
  }
  return {};
}

// Runs `path`'s base and expects its drain not to have settled, its verdict naming each of
// `named` (what happened, then the defect).
void ExpectUndrainedNaming(const std::string& path, std::initializer_list<std::string_view> named) {
  const RunResult run = RunBase(path);
  EXPECT_FALSE(run.drained) << path;
  for (std::string_view part : named) {
    EXPECT_NE(run.undrained.find(part), std::string::npos)
        << path << ": " << part << "\nnot in: " << run.undrained;
  }
}

// Kafka's own liveness defects, found by explore, are named in the drain that did not settle:
// explore leaves those runs' liveness untested instead of calling them ksim's failures.
TEST(ScenarioLibraryRegressionTest, TheDrainNamesKafkasOwnLivenessDefects) {
  ExpectUndrainedNaming(
      "regressions/follower-below-its-own-first-epoch-keeps-diverged-records-before-2.1.json",
      {"broker-2 is running but out of t-0's ISR: its replica fetcher for broker-1 stopped at "
       "UNEXPECTED_APPEND_OFFSET on t-1, having asked its leader broker-1 for the end of epoch 3 "
       "of t-1, answered epoch 1 ending at offset 25, an epoch before the first (3) its own cache "
       "holds",
       kFollowerBelowFirstEpochDefect});
  ExpectUndrainedNaming(
      "regressions/leader-kept-an-older-epoch-below-an-out-of-range-cut-stops-the-fetcher-before-"
      "2.1.json",
      {"its replica fetcher for broker-1 stopped at UNEXPECTED_APPEND_OFFSET on t-0, where it "
       "holds epoch 2's batch [0..1] and its leader broker-1 epoch 1's batch [0..92], kept when "
       "the leader truncated to its own leader's log end 97",
       kLeaderKeptBelowUndefinedCutDefect});
  // The leader kept an older epoch's batch where nothing was truncated: told the same leader
  // after missed epochs (KAFKA-7164), or in a log copied from a replica that was cut.
  ExpectUndrainedNaming(
      "regressions/leader-told-the-same-leader-kept-an-older-epoch-stops-the-fetcher-before-"
      "2.1.json",
      {"where it holds epoch 3's batch [0..23] and its leader broker-1 epoch 1's batch [0..92], "
       "below offset 158 where its epoch cache says epoch 3 began",
       "kept when the leader was told the same leader at epoch 3 while it followed epoch 1 and "
       "truncated nothing",
       kSameLeaderDefect});
  ExpectUndrainedNaming(
      "regressions/leader-copied-a-replicas-undefined-cut-stops-the-fetcher-before-2.1.json",
      {"where it holds epoch 3's batch [0..5] and its leader broker-2 epoch 1's batch [0..0], kept "
       "when broker-1, whose log the leader copied, truncated to its high watermark 24",
       kLeaderKeptBelowUndefinedCutDefect});
  ExpectUndrainedNaming(
      "regressions/follower-log-end-past-its-records-after-a-corrupted-offset-stops-the-fetcher."
      "json",
      {"its replica fetcher for broker-1 stopped at UNEXPECTED_APPEND_OFFSET on t-1, where its own "
       "log jumps from offset 76 to a batch at [212..212]",
       "so its log end 213 lies inside its leader broker-1's batch [163..230]",
       kFollowerOffsetJumpDefect});
  // Named as the fetcher stopped: the leader truncated the batch that showed the fork since.
  ExpectUndrainedNaming("regressions/same-epoch-fork-named-after-the-leader-truncated-it-away.json",
                        {"its replica fetcher for broker-1 stopped at UNEXPECTED_APPEND_OFFSET on "
                         "t-0, where it holds epoch 2's batch [3..3] and its leader broker-1 "
                         "another batch of the same epoch at [0..14]",
                         kSameEpochForkDefect});
  ExpectUndrainedNaming(
      "regressions/a-stopped-fetcher-holds-the-high-watermark-below-the-log-end.json",
      {"t-0's high watermark 100 is below its log end 202, and broker-1 is in its ISR: its "
       "replica fetcher for broker-2 stopped at UNEXPECTED_APPEND_OFFSET on t-0",
       kSameEpochForkDefect});
  ExpectUndrainedNaming("regressions/same-leader-after-missed-epochs-stops-the-fetcher.json",
                        {"its replica fetcher for broker-3 stopped at UNEXPECTED_APPEND_OFFSET on "
                         "t-0, having been told the same leader at epoch 3 while it followed "
                         "epoch 0",
                         kSameLeaderDefect});
  ExpectUndrainedNaming("regressions/follower-ahead-exits-at-every-start.json",
                        {"it exits at every start", kFollowerAheadDefect});
  ExpectUndrainedNaming(
      "regressions/idempotent-retry-below-acked-sequence.json",
      {"producer p1 has records without an outcome: t-0's batch of 1 record, "
       "sequence 843, sent ",
       "last answered OUT_OF_ORDER_SEQUENCE_NUMBER, though sequence", kOutOfOrderRetryDefect});
  ExpectUndrainedNaming("regressions/group-assigned-from-a-partial-metadata-answer.json",
                        {"g1 has delivered t-1 up to offset -1 of 0: no member of g1 is assigned "
                         "it: the active controller missed broker-1's restart",
                         kMissedRestartDefect});
  ExpectUndrainedNaming("regressions/stale-controller-request-leaves-a-stale-zk-version.json",
                        {"broker-1 is running but out of t-0's ISR: its leader broker-3 holds "
                         "t-0's state at zkVersion 2, ZooKeeper at 3, at the same leader epoch 1",
                         "it took that state from controller epoch 3's LeaderAndIsr, the active "
                         "controller's epoch is 4",
                         kStaleControlRequestDefect});
  ExpectUndrainedNaming(
      "regressions/corrupted-offset-leaves-the-leader-end-past-its-records.json",
      {"broker-1 is running but out of t-0's ISR: its leader broker-2's log of t-0 ends at offset "
       "77 but holds records only below 0",
       kLeaderEndPastRecordsDefect});
  ExpectUndrainedNaming("regressions/leader-end-past-its-records-stops-a-consumer.json",
                        {"g1 has delivered t-0 up to offset 3 of 32: its leader broker-1's log of "
                         "t-0 ends at offset 33 but holds records only below 4",
                         kLeaderEndPastRecordsDefect});
  ExpectUndrainedNaming("regressions/unheld-epoch-answer-stops-the-fetcher-before-2.0.json",
                        {"broker-2 is running but out of t-0's ISR: its replica fetcher for "
                         "broker-3 stopped at UNEXPECTED_APPEND_OFFSET on t-1, having asked its "
                         "leader broker-3 for the end of epoch 2 of t-1, which the leader never "
                         "had: answered with the start of its epoch 3, offset 191, and no epoch",
                         kUnheldEpochDefect});
  ExpectUndrainedNaming(
      "regressions/leader-kept-an-older-epoch-below-its-undefined-cut-stops-the-fetcher-before-"
      "2.1.json",
      {"its replica fetcher for broker-2 stopped at UNEXPECTED_APPEND_OFFSET on t-0, where it "
       "holds epoch 4's batch [0..0] and its leader broker-2 epoch 1's batch [0..1], kept when the "
       "leader truncated to its high watermark 2",
       kLeaderKeptBelowUndefinedCutDefect});
  ExpectUndrainedNaming(
      "regressions/same-epoch-fork-after-the-leaders-power-loss-stops-the-fetcher.json",
      {"broker-2 is running but out of t-0's ISR: its replica fetcher for broker-1 stopped at "
       "UNEXPECTED_APPEND_OFFSET on t-0, where it holds epoch 0's batch [0..0] and its leader "
       "broker-1 another batch of the same epoch at [0..1]",
       kSameEpochForkDefect});
  ExpectUndrainedNaming("regressions/unrecorded-epoch-answer-stops-the-fetcher-before-2.1.json",
                        {"broker-2 is running but out of t-0's ISR: its replica fetcher for "
                         "broker-3 stopped at UNEXPECTED_APPEND_OFFSET on t-0, having been "
                         "answered UNDEFINED by its leader broker-3 for the end of epoch 5 of "
                         "t-0, after the last epoch the leader had recorded",
                         kUnrecordedEpochDefect});
  ExpectUndrainedNaming(
      "regressions/unrecorded-epoch-answer-without-a-cut-stops-the-fetcher-before-2.1.json",
      {"broker-1 is running but out of t-0's ISR: its replica fetcher for broker-3 stopped at "
       "UNEXPECTED_APPEND_OFFSET on t-0, having been answered UNDEFINED by its leader broker-3 for "
       "the end of epoch 3 of t-0",
       kUnrecordedEpochDefect});
  const std::string forgotten = "regressions/forgotten-epoch-start-stops-the-fetcher.json";
  ExpectUndrainedNaming(forgotten,
                        {"broker-2 is running but out of t-1's ISR: its replica fetcher for "
                         "broker-3 stopped at UNEXPECTED_APPEND_OFFSET on t-1, its leader "
                         "broker-3's epoch cache of t-1 says epoch 2 began at offset 21 where its "
                         "log holds that epoch's batches from offset 0",
                         kForgottenEpochStartDefect});
  // Its variant at 2.0: the leader's UNDEFINED answer below its first epoch.
  Result<Scenario> at_2_0 = LoadScenario((ScenarioDir() / forgotten).string());
  ASSERT_TRUE(at_2_0.ok()) << at_2_0.status().ToString();
  at_2_0->kafka_version = KafkaRelease::k2_0;
  Result<RunResult> run = RunScenario(*at_2_0, RunOptions{});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_FALSE(run->drained);
  for (std::string_view part :
       {std::string_view("its replica fetcher for broker-1 stopped at UNEXPECTED_APPEND_OFFSET on "
                         "t-0, having asked its leader broker-1 for the end of epoch 1 of t-0, "
                         "before the first epoch 3 the leader's cache holds: answered UNDEFINED, "
                         "it truncated to its high watermark 9"),
        kBelowFirstEpochDefect}) {
    EXPECT_NE(run->undrained.find(part), std::string::npos)
        << part << "\nnot in: " << run->undrained;
  }
  EXPECT_EQ(run->undrained.find(kForgottenEpochStartDefect), std::string::npos);
}

// From Kafka 2.1 a producer promises every record an outcome within delivery.timeout.ms (KIP-91),
// which bounds the retries of a batch older than the leader remembers: the drain waits for it, and
// for a longer delivery timeout too, however short drain_ms (60 s here).
TEST(ScenarioLibraryRegressionTest, TheDrainWaitsForTheDeliveryTimeoutFrom21) {
  const std::string file = "regressions/out-of-order-retry-ends-at-the-delivery-timeout.json";
  const RunResult defaults = RunBase(file);
  EXPECT_TRUE(defaults.drained) << defaults.undrained;
  EXPECT_TRUE(defaults.ok);
  Result<Scenario> scenario = LoadScenario((ScenarioDir() / file).string());
  ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
  ASSERT_EQ(scenario->final_phase.drain_ms, 60000);
  scenario->clients.at(0).config.emplace_back("delivery.timeout.ms", "200000");
  Result<RunResult> longer = RunScenario(*scenario, RunOptions{});
  ASSERT_TRUE(longer.ok()) << longer.status().ToString();
  EXPECT_TRUE(longer->drained) << longer->undrained;
  EXPECT_GT(longer->trace_lines, defaults.trace_lines);  // two more minutes of retries
}

// The upgrade notes' rolling upgrade to 0.11: only the stage before the inter-broker protocol
// bump loses records (p1's, to the high-watermark rule); p2's stage (protocol 0.11, format 0.10)
// and p3's (both bumped) keep every acknowledged record.
TEST(ScenarioLibraryTeachingTest, AnUpgradeTo011LosesRecordsOnlyBeforeTheProtocolBump) {
  const RunResult result = RunBase("teaching/upgrade-to-0.11.json");
  int lost = 0;
  for (const Anomaly& anomaly : result.check.anomalies) {
    if (anomaly.kind != "lost_acked") continue;
    ++lost;
    EXPECT_TRUE(anomaly.record_id.starts_with("p1-")) << anomaly.record_id << ": " << anomaly.cause;
    EXPECT_NE(anomaly.cause.find("high_watermark"), std::string::npos) << anomaly.cause;
  }
  EXPECT_GT(lost, 0);
  // p1 sends 1200 records: more were acknowledged, so p2 or p3 had records to lose.
  for (const Metric& metric : result.check.metrics) {
    if (metric.name == "acked") {
      EXPECT_GT(metric.value, 1200);
    }
  }
}

TEST(ScenarioLibrarySeedTest, TenPartitionsOnThreeBrokersArePlacedFourThreeThree) {
  const RunResult result = RunBase("seed/partitions-4-3-3.json");
  std::map<std::string, int> replicas_per_broker;
  int partitions = 0;
  for (const std::string& line : OutputOf(result, "--describe")) {
    const size_t at = line.find("Replicas: ");
    if (at == std::string::npos) continue;
    ++partitions;
    std::string list = line.substr(at + std::string("Replicas: ").size());
    list = list.substr(0, list.find_first_of("\t "));
    std::stringstream ids(list);
    for (std::string id; std::getline(ids, id, ',');) ++replicas_per_broker[id];
  }
  EXPECT_EQ(partitions, 10);
  std::vector<int> counts;
  for (const auto& [broker, count] : replicas_per_broker) counts.push_back(count);
  std::sort(counts.begin(), counts.end());
  EXPECT_EQ(counts, (std::vector<int>{3, 3, 4}));
}

TEST(ScenarioLibrarySeedTest, ReplicationFactorAboveTheLiveBrokersIsRefused) {
  const RunResult result = RunBase("seed/frbook-replicas.json");
  const std::vector<std::string> refused = OutputOf(result, "--topic esbook");
  ASSERT_FALSE(refused.empty());
  EXPECT_NE(refused.front().find("larger than available brokers"), std::string::npos)
      << refused.front();
  bool listed_esbook = false;
  for (const std::string& line : OutputOf(result, "--list")) {
    if (line.find("esbook") != std::string::npos) listed_esbook = true;
  }
  EXPECT_FALSE(listed_esbook) << "a refused topic is not created";
}

TEST(ScenarioLibrarySeedTest, TheConsoleConsumerPrintsWhatTheProducerTyped) {
  const RunResult result = RunBase("seed/walkthrough.json");
  const std::vector<std::string> printed = OutputOf(result, "kafka-console-consumer");
  EXPECT_EQ(printed, (std::vector<std::string>{"hello java"}));
}

TEST(ScenarioLibrarySeedTest, RetentionExpiresOldSegmentsWithoutLosingRecords) {
  const RunResult result = RunBase("seed/retention.json");
  EXPECT_EQ(result.check.Value("lost_acked"), 0);
  // Whole old segments went; the newest records, in segments younger than retention.ms, stay.
  EXPECT_GT(result.check.expired, 0);
  EXPECT_LT(result.check.expired, result.check.Value("acked"));
}

}  // namespace
}  // namespace ksim::sim
