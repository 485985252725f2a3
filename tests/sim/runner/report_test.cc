// The run report (sim/runner/report.h): the readable report and the report JSON of RunResults built
// by hand, the policy matrix's rows, its golden JSON (round trip, errors with their JSON path)
// and its diff; and one small matrix actually run.
#include "sim/runner/report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "core/config/kafka_version.h"
#include "core/controller/controller.h"
#include "sim/check/history_checker.h"
#include "sim/scenario/loader.h"

namespace ksim::sim {
namespace {

using Json = nlohmann::ordered_json;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool HasLine(const std::string& text, const std::string& line) {
  const std::vector<std::string> lines = Lines(text);
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

Anomaly LostAcked(int n) {
  Anomaly anomaly;
  anomaly.kind = "lost_acked";
  anomaly.record_id = "p1-" + std::to_string(n);
  anomaly.tp = TopicPartition{"t", PartitionId(0)};
  anomaly.offset = Offset(40 + n);
  anomaly.cause = "truncated on broker-1 at 15.200 s (to offset 40, high-watermark)";
  anomaly.cause_t_us = 15200000;
  return anomaly;
}

Expectation Exact(std::string metric, int64_t value) {
  Expectation expectation;
  expectation.metric = std::move(metric);
  expectation.exact = value;
  return expectation;
}

RunResult SampleResult() {
  RunResult result;
  result.scenario = "acks-one-leader-crash";
  result.variant = "acks-1";
  result.seed = 7;
  result.check.metrics = {{"sent", 1000}, {"acked", 998}, {"lost_acked", 5}, {"duplicated", 0}};
  for (int i = 0; i < 5; ++i) result.check.anomalies.push_back(LostAcked(i));
  Anomaly duplicate;
  duplicate.kind = "duplicated";
  duplicate.record_id = "p1-9";
  duplicate.tp = TopicPartition{"t", PartitionId(0)};
  duplicate.offset = Offset(9);
  duplicate.group = "g1";
  duplicate.cause = "redelivered to g1 by c1 (incarnation 2)";
  result.check.anomalies.push_back(duplicate);

  ExpectationResult met;
  met.expectation = Exact("sent", 1000);
  met.actual = 1000;
  met.ok = true;
  ExpectationResult failed;
  failed.expectation = Exact("lost_acked", 0);
  failed.actual = 5;
  failed.ok = false;
  ExpectationResult range;
  range.expectation.metric = "duplicated";
  range.expectation.max = 2;
  range.actual = 0;
  range.ok = true;
  result.expectations = {met, failed, range};
  result.ok = false;

  ActionOutput cli;
  cli.index = 0;
  cli.at_ms = 500;
  cli.description = "kafka-topics.sh --describe --zookeeper hadoop01:2181 --topic t";
  cli.output = {"Topic: t Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2,3"};
  ActionOutput skipped;
  skipped.index = 1;
  skipped.at_ms = 12000;
  skipped.description = "restart broker-2";
  skipped.output = {"broker-2 is running"};
  skipped.skipped = true;
  result.actions = {cli, skipped};
  result.invariant_violations = {"t-0: HW moved back from 10 to 8 on broker-2"};
  result.start_us = 250000;
  result.end_us = 92100000;
  result.trace_hash = 0x0123456789abcdefULL;
  result.trace_lines = 4321;
  return result;
}

TEST(RunReportTest, HeaderSaysScenarioVariantSeedAndVerdict) {
  RunResult result = SampleResult();
  const std::vector<std::string> lines = Lines(FormatRunReport(result));
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0],
            "== acks-one-leader-crash / acks-1 (seed 7): FAILED (1 of 3 expectations not met) ==");
  for (ExpectationResult& e : result.expectations) e.ok = true;
  result.ok = true;
  EXPECT_EQ(Lines(FormatRunReport(result))[0], "== acks-one-leader-crash / acks-1 (seed 7): OK ==");
}

TEST(RunReportTest, MetricsTableIsAlignedOneMetricALine) {
  const std::string text = FormatRunReport(SampleResult());
  EXPECT_TRUE(HasLine(text, "Metrics:")) << text;
  EXPECT_TRUE(HasLine(text, "  sent        1000")) << text;
  EXPECT_TRUE(HasLine(text, "  acked        998")) << text;
  EXPECT_TRUE(HasLine(text, "  lost_acked     5")) << text;
  EXPECT_TRUE(HasLine(text, "  duplicated     0")) << text;
}

TEST(RunReportTest, AnomaliesGroupedByKindAndCapped) {
  const std::string text = FormatRunReport(SampleResult(), /*max_anomalies=*/2);
  EXPECT_TRUE(HasLine(text, "  lost_acked (5):")) << text;
  EXPECT_TRUE(HasLine(text,
                      "    p1-0 t-0 offset 40: truncated on broker-1 at 15.200 s (to offset 40, "
                      "high-watermark)"))
      << text;
  EXPECT_TRUE(HasLine(text,
                      "    p1-1 t-0 offset 41: truncated on broker-1 at 15.200 s (to offset 40, "
                      "high-watermark)"))
      << text;
  EXPECT_EQ(text.find("p1-2 t-0"), std::string::npos) << "the cap shows two: " << text;
  EXPECT_TRUE(HasLine(text, "    ... and 3 more")) << text;
  EXPECT_TRUE(HasLine(text, "  duplicated (1):")) << text;
  EXPECT_TRUE(
      HasLine(text, "    p1-9 t-0 offset 9 group g1: redelivered to g1 by c1 (incarnation 2)"))
      << text;
  // Under the cap, every anomaly is listed and there is no "more" line.
  const std::string all = FormatRunReport(SampleResult(), 20);
  EXPECT_NE(all.find("p1-4 t-0 offset 44"), std::string::npos) << all;
  EXPECT_EQ(all.find("more"), std::string::npos) << all;
}

TEST(RunReportTest, ExpectationsSayOkOrFailedWithExpectedAndActual) {
  const std::string text = FormatRunReport(SampleResult());
  EXPECT_TRUE(HasLine(text, "  ok      sent        expected 1000, actual 1000")) << text;
  EXPECT_TRUE(HasLine(text, "  FAILED  lost_acked  expected 0, actual 5")) << text;
  EXPECT_TRUE(HasLine(text, "  ok      duplicated  expected <= 2, actual 0")) << text;
}

TEST(RunReportTest, ActionsWithCliOutputSkippedActionsAndViolations) {
  const std::string text = FormatRunReport(SampleResult());
  // Actions are printed in trace time: scenario time 0 is start_us (0.250 s here).
  EXPECT_TRUE(HasLine(text, "Actions (trace time; the scenario's at_ms counts from 0.250 s):"))
      << text;
  EXPECT_TRUE(HasLine(text,
                      "       0.750 s  kafka-topics.sh --describe --zookeeper hadoop01:2181 "
                      "--topic t"))
      << text;
  EXPECT_TRUE(
      HasLine(text, "                | Topic: t Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2,3"))
      << text;
  EXPECT_TRUE(HasLine(text, "      12.250 s  restart broker-2 (skipped: broker-2 is running)"))
      << text;
  EXPECT_TRUE(HasLine(text, "Invariant violations (engine rules broken: a bug in ksim):")) << text;
  EXPECT_FALSE(HasLine(text, "Permitted losses (Kafka allows these):")) << text;  // none here
  EXPECT_TRUE(HasLine(text, "  t-0: HW moved back from 10 to 8 on broker-2")) << text;
  EXPECT_TRUE(HasLine(text,
                      "Run: ended at 92.100 s simulated; trace 4321 lines, hash "
                      "0123456789abcdef"))
      << text;
}

TEST(RunReportTest, EmptyRunSaysNone) {
  RunResult result;
  result.scenario = "s";
  result.variant = "base";
  result.ok = true;
  const std::string text = FormatRunReport(result);
  EXPECT_TRUE(HasLine(text, "Anomalies: none")) << text;
  EXPECT_TRUE(HasLine(text, "Expectations: none")) << text;
  EXPECT_EQ(text.find("Actions"), std::string::npos) << text;
  EXPECT_EQ(text.find("Invariant violations"), std::string::npos) << text;
}

TEST(RunReportTest, ResultJsonFollowsDesign) {
  const Json json = RunResultJson(SampleResult());
  std::vector<std::string> keys;
  for (const auto& item : json.items()) keys.push_back(item.key());
  EXPECT_EQ(keys,
            (std::vector<std::string>{"metrics", "expectations", "ok", "seed", "anomalies",
                                      "actions", "client_warnings", "consumers", "permitted_losses",
                                      "invariant_violations", "expired", "audit_errors", "start_us",
                                      "end_us", "trace_lines", "trace_hash"}));
  EXPECT_EQ(json["metrics"].dump(), R"({"sent":1000,"acked":998,"lost_acked":5,"duplicated":0})");
  EXPECT_EQ(json["expectations"][0].dump(),
            R"({"metric":"sent","expected":1000,"actual":1000,"ok":true})");
  EXPECT_EQ(json["expectations"][1].dump(),
            R"({"metric":"lost_acked","expected":0,"actual":5,"ok":false})");
  EXPECT_EQ(json["expectations"][2].dump(),
            R"({"metric":"duplicated","expected":{"max":2},"actual":0,"ok":true})");
  EXPECT_EQ(json["ok"], false);
  EXPECT_EQ(json["anomalies"].size(), 6u);
  EXPECT_EQ(json["anomalies"][0].dump(),
            R"({"kind":"lost_acked","record_id":"p1-0","topic":"t","partition":0,"offset":40,)"
            R"j("cause":"truncated on broker-1 at 15.200 s (to offset 40, high-watermark)",)j"
            R"("cause_t_us":15200000})");
  EXPECT_EQ(json["anomalies"][5]["group"], "g1");
  EXPECT_EQ(json["actions"][1].dump(),
            R"({"index":1,"at_ms":12000,"t_us":12250000,"action":"restart broker-2",)"
            R"("output":["broker-2 is running"],"skipped":true})");
  EXPECT_EQ(json["trace_hash"], "0123456789abcdef");
}

// An acknowledged record lost to a defect of Kafka's own names it (Anomaly::kafka_defect, what
// explore reads to leave acked_kept untested); other anomalies carry no such member.
TEST(RunReportTest, AnAnomalyLostToKafkasOwnDefectNamesItInTheJson) {
  RunResult result = SampleResult();
  result.check.anomalies[1].kafka_defect = std::string(kLeaderAgainOnOldLogEndsDefect);
  const Json json = RunResultJson(result);
  EXPECT_EQ(json["anomalies"][1]["kafka_defect"], std::string(kLeaderAgainOnOldLogEndsDefect));
  std::vector<std::string> keys;
  for (const auto& item : json["anomalies"][1].items()) keys.push_back(item.key());
  EXPECT_EQ(keys.back(), "kafka_defect");
  EXPECT_FALSE(json["anomalies"][0].contains("kafka_defect"));
  EXPECT_FALSE(json["anomalies"][5].contains("kafka_defect"));
}

TEST(RunReportTest, ReportJsonHoldsEveryVariantByName) {
  RunResult base = SampleResult();
  base.variant = "base";
  RunResult other = SampleResult();
  other.variant = "acks-all";
  other.seed = 9;
  const Json json = ReportJson({base, other});
  std::vector<std::string> keys;
  for (const auto& item : json.items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"scenario", "seed", "variants"}));
  EXPECT_EQ(json["scenario"], "acks-one-leader-crash");
  EXPECT_EQ(json["seed"], 7u);
  std::vector<std::string> variants;
  for (const auto& item : json["variants"].items()) variants.push_back(item.key());
  EXPECT_EQ(variants, (std::vector<std::string>{"base", "acks-all"}));
  EXPECT_EQ(json["variants"]["acks-all"]["seed"], 9u);
  EXPECT_EQ(json["variants"]["base"], RunResultJson(base));
}

// ---- The matrix --------------------------------------------------------------------------------

TEST(PolicyMatrixTest, RowsAreThePoliciesTheControllerAccepts) {
  const std::vector<std::string>& elections = MatrixElectionPolicies();
  EXPECT_EQ(elections,
            (std::vector<std::string>{"clean", "unclean", "random-isr", "wait-for-last-isr"}));
  for (const std::string& name : elections) {
    ControllerOptions options;
    options.election_policy = name;
    EXPECT_TRUE(Controller::ValidateOptions(options).ok()) << name;
  }
  ControllerOptions longest;
  longest.election_policy = "longest-log";
  EXPECT_FALSE(Controller::ValidateOptions(longest).ok());
  EXPECT_EQ(MatrixTruncationPolicies(),
            (std::vector<std::string>{"high-watermark", "leader-epoch"}));
  EXPECT_EQ(MatrixMetrics(), (std::vector<std::string>{"lost_acked", "duplicated", "unavailable_ms",
                                                       "elections", "replica_divergence"}));
}

Matrix SampleMatrix() {
  Matrix matrix;
  matrix.scenario = "kip-101";
  matrix.seed = 3;
  int64_t n = 0;
  for (const std::string& election : MatrixElectionPolicies()) {
    for (const std::string& truncation : MatrixTruncationPolicies()) {
      MatrixCell cell{election, truncation, {}};
      for (const std::string& metric : MatrixMetrics()) cell.metrics.push_back({metric, n++});
      matrix.cells.push_back(cell);
    }
  }
  return matrix;
}

TEST(PolicyMatrixTest, FormatIsATableOneRowPerCell) {
  Matrix matrix = SampleMatrix();
  matrix.cells[0].metrics[2].value = 12345;
  const std::vector<std::string> lines = Lines(FormatMatrix(matrix));
  ASSERT_EQ(lines.size(), 2 + matrix.cells.size());
  EXPECT_EQ(lines[0], "Policy matrix: kip-101 (seed 3)");
  EXPECT_EQ(lines[1],
            "election           truncation      lost_acked  duplicated  unavailable_ms  elections  "
            "replica_divergence");
  EXPECT_EQ(lines[2],
            "clean              high-watermark           0           1           12345          3  "
            "                 4");
  EXPECT_EQ(lines[9],
            "wait-for-last-isr  leader-epoch            35          36              37         38  "
            "                39");
}

TEST(PolicyMatrixTest, JsonRoundTrip) {
  const Matrix matrix = SampleMatrix();
  const Json json = MatrixJson(matrix);
  EXPECT_EQ(json["cells"][0].dump(),
            R"({"election":"clean","truncation":"high-watermark","metrics":)"
            R"({"lost_acked":0,"duplicated":1,"unavailable_ms":2,"elections":3,)"
            R"("replica_divergence":4}})");
  Result<Matrix> parsed = ParseMatrixJson(Json::parse(json.dump(2)));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->scenario, "kip-101");
  EXPECT_EQ(parsed->seed, 3u);
  EXPECT_TRUE(DiffMatrix(matrix, *parsed).empty());
  EXPECT_EQ(MatrixJson(*parsed), json);
}

TEST(PolicyMatrixTest, DiffNamesCellMetricAndBothValues) {
  const Matrix golden = SampleMatrix();
  Matrix actual = golden;
  EXPECT_TRUE(DiffMatrix(golden, actual).empty());
  actual.cells[1].metrics[0].value = 7;  // clean/leader-epoch lost_acked 5 -> 7
  actual.cells[6].metrics[3].value = 0;  // wait-for-last-isr/high-watermark elections 33 -> 0
  EXPECT_EQ(DiffMatrix(golden, actual),
            (std::vector<std::string>{"clean/leader-epoch: lost_acked 5 -> 7",
                                      "wait-for-last-isr/high-watermark: elections 33 -> 0"}));
  actual.seed = 4;
  actual.cells.erase(actual.cells.begin() + 2);  // unclean/high-watermark
  actual.cells.push_back(MatrixCell{"longest-log", "leader-epoch", golden.cells[0].metrics});
  EXPECT_EQ(DiffMatrix(golden, actual),
            (std::vector<std::string>{"seed: 3 -> 4", "clean/leader-epoch: lost_acked 5 -> 7",
                                      "unclean/high-watermark: missing (in the golden matrix "
                                      "only)",
                                      "wait-for-last-isr/high-watermark: elections 33 -> 0",
                                      "longest-log/leader-epoch: new (not in the golden matrix)"}));
}

std::string ParseError(const std::string& text) {
  Result<Matrix> parsed = ParseMatrixJson(Json::parse(text));
  if (parsed.ok()) return "ok";
  EXPECT_EQ(parsed.status().code(), Errc::kInvalidArgument);
  return parsed.status().message();
}

TEST(PolicyMatrixTest, ParseErrorsNameTheJsonPath) {
  EXPECT_EQ(ParseError("[]"), R"(expected an object {"scenario", "seed", "cells"})");
  EXPECT_EQ(ParseError(R"({"scenario": "s", "cells": []})"), R"(missing key "seed")");
  EXPECT_EQ(ParseError(R"({"scenario": "s", "seed": -1, "cells": []})"),
            "/seed: expected an unsigned integer");
  EXPECT_EQ(ParseError(R"({"scenario": "s", "seeds": 1, "cells": []})"),
            R"(/seeds: unknown key "seeds": did you mean "seed"?)");
  EXPECT_EQ(ParseError(R"({"scenario": 1, "seed": 1, "cells": []})"),
            "/scenario: expected a string");
  EXPECT_EQ(ParseError(R"({"scenario": "s", "seed": 1, "cells": {}})"),
            "/cells: expected an array of cells");
  const std::string cell_ok =
      R"({"election": "clean", "truncation": "high-watermark", "metrics": )"
      R"({"lost_acked": 0, "duplicated": 0, "unavailable_ms": 0, "elections": 1, )"
      R"("replica_divergence": 0}})";
  EXPECT_EQ(ParseError(R"({"scenario": "s", "seed": 1, "cells": [)" + cell_ok + "]}"), "ok");
  EXPECT_EQ(
      ParseError(R"({"scenario": "s", "seed": 1, "cells": [)" + cell_ok + ", " + cell_ok + "]}"),
      "/cells/1: cell clean/high-watermark appears twice");
  EXPECT_EQ(ParseError(R"({"scenario": "s", "seed": 1, "cells": [{"election": "clean", )"
                       R"("truncation": "leader-epoch", "metrics": {"lost_acked": 0, )"
                       R"("duplicated": "0", "unavailable_ms": 0, "elections": 1, )"
                       R"("replica_divergence": 0}}]})"),
            "/cells/0/metrics/duplicated: expected an integer");
  EXPECT_EQ(ParseError(R"({"scenario": "s", "seed": 1, "cells": [{"election": "clean", )"
                       R"("truncation": "leader-epoch", "metrics": {"lost_acked": 0, )"
                       R"("unavailable_ms": 0, "elections": 1, "replica_divergence": 0}}]})"),
            R"(/cells/0/metrics: missing metric "duplicated")");
  EXPECT_EQ(ParseError(R"({"scenario": "s", "seed": 1, "cells": [{"election": "clean", )"
                       R"("truncation": "leader-epoch", "metrics": {"lost_acked": 0, )"
                       R"("duplicatd": 0, "unavailable_ms": 0, "elections": 1, )"
                       R"("replica_divergence": 0}}]})"),
            R"(/cells/0/metrics/duplicatd: unknown key "duplicatd": did you mean "duplicated"?)");
  EXPECT_EQ(ParseError(R"({"scenario": "s", "seed": 1, "cells": [{"truncation": "x", )"
                       R"("metrics": {}}]})"),
            R"(/cells/0: missing key "election")");
}

// The release axis: a column first, the release in each cell's name, the JSON's
// "kafka_versions" and each cell's "kafka_version", cells told apart by their release.
TEST(PolicyMatrixTest, AReleaseAxisShowsInTheTableTheJsonAndTheDiff) {
  Matrix matrix;
  matrix.scenario = "kip-279";
  matrix.seed = 2;
  matrix.kafka_versions = {"0.11.0", "2.0"};
  for (const std::string& release : matrix.kafka_versions) {
    MatrixCell cell{"unclean", "leader-epoch", {}, release};
    for (const std::string& metric : MatrixMetrics()) cell.metrics.push_back({metric, 1});
    matrix.cells.push_back(cell);
  }
  const std::vector<std::string> lines = Lines(FormatMatrix(matrix));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1],
            "kafka_version  election  truncation    lost_acked  duplicated  unavailable_ms  "
            "elections  replica_divergence");
  EXPECT_EQ(
      lines[2],
      "0.11.0         unclean   leader-epoch           1           1               1          "
      "1                   1");
  EXPECT_EQ(MatrixCellName(matrix.cells[1]), "2.0/unclean/leader-epoch");

  const Json json = MatrixJson(matrix);
  EXPECT_EQ(json["kafka_versions"], Json::array({"0.11.0", "2.0"}));
  EXPECT_EQ(json["cells"][1]["kafka_version"], "2.0");
  Result<Matrix> parsed = ParseMatrixJson(Json::parse(json.dump()));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->kafka_versions, matrix.kafka_versions);
  EXPECT_TRUE(DiffMatrix(matrix, *parsed).empty());

  Matrix changed = matrix;
  changed.cells[0].metrics[0].value = 5;  // only 0.11.0's cell
  EXPECT_EQ(DiffMatrix(matrix, changed),
            (std::vector<std::string>{"0.11.0/unclean/leader-epoch: lost_acked 1 -> 5"}));
  Matrix without = matrix;  // the same cells without their release are other cells
  without.kafka_versions.clear();
  for (MatrixCell& cell : without.cells) cell.kafka_version.clear();
  EXPECT_EQ(DiffMatrix(matrix, without).size(), 4u);  // 2 missing, 2 new (the same name twice)
}

TEST(PolicyMatrixTest, ReleaseAxisParseErrorsNameTheJsonPath) {
  const std::string metrics =
      R"("metrics": {"lost_acked": 0, "duplicated": 0, "unavailable_ms": 0, "elections": 1, )"
      R"("replica_divergence": 0})";
  const std::string cell_at = R"({"kafka_version": "2.0", "election": "clean", )"
                              R"("truncation": "high-watermark", )" +
                              metrics + "}";
  const std::string cell_plain =
      R"({"election": "clean", "truncation": "high-watermark", )" + metrics + "}";
  EXPECT_EQ(ParseError(R"({"scenario": "s", "seed": 1, "kafka_versions": ["2.0"], "cells": [)" +
                       cell_at + "]}"),
            "ok");
  EXPECT_EQ(ParseError(R"({"scenario": "s", "seed": 1, "kafka_versions": ["2.0.0"], "cells": [)" +
                       cell_at + "]}"),
            "ok");  // 2.0.0 stands for 2.0
  EXPECT_EQ(ParseError(R"({"scenario": "s", "seed": 1, "kafka_versions": [], "cells": []})"),
            "/kafka_versions: expected a non-empty array of releases");
  EXPECT_EQ(ParseError(R"({"scenario": "s", "seed": 1, "kafka_versions": ["2.0", "2.0"], )"
                       R"("cells": []})"),
            "/kafka_versions/1: release 2.0 appears twice");
  EXPECT_NE(ParseError(R"({"scenario": "s", "seed": 1, "kafka_versions": ["0.9.0"], )"
                       R"("cells": []})")
                .find("/kafka_versions/0: "),
            std::string::npos);
  EXPECT_EQ(ParseError(R"({"scenario": "s", "seed": 1, "kafka_versions": ["2.0"], "cells": [)" +
                       cell_plain + "]}"),
            R"(/cells/0: missing key "kafka_version")");
  EXPECT_EQ(ParseError(R"({"scenario": "s", "seed": 1, "cells": [)" + cell_at + "]}"),
            R"(/cells/0/kafka_version: a cell names a release only when the matrix lists )"
            R"("kafka_versions")");
  EXPECT_EQ(ParseError(R"({"scenario": "s", "seed": 1, "kafka_versions": ["1.1"], "cells": [)" +
                       cell_at + "]}"),
            R"(/cells/0/kafka_version: release 2.0 is not in "kafka_versions")");
}

TEST(PolicyMatrixTest, ReleaseListIsAllOrReleasesSeparatedByCommas) {
  Result<std::vector<KafkaRelease>> all = ParseReleaseList("all");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), KafkaReleases().size());
  Result<std::vector<KafkaRelease>> some = ParseReleaseList("2.0,0.10.0.1");
  ASSERT_TRUE(some.ok()) << some.status().ToString();
  EXPECT_EQ(*some, (std::vector<KafkaRelease>{KafkaRelease::k2_0, KafkaRelease::k0_10_0}));
  EXPECT_FALSE(ParseReleaseList("2.0,,1.1").ok());
  EXPECT_FALSE(ParseReleaseList("").ok());
  EXPECT_FALSE(ParseReleaseList("1.1,1.1.0").ok());  // the same release twice
  EXPECT_FALSE(ParseReleaseList("0.9.0").ok());
}

// The matrix across releases parses the document again at each, release-major; a release that
// refuses the document (a setting it does not have) is named in the error.
TEST(PolicyMatrixTest, AcrossReleasesEachParsesTheDocumentAgain) {
  const std::string text = R"({
    "ksim": 1, "name": "release-smoke", "seed": 5, "duration_ms": 6000,
    "topics": {"t": {"partitions": 1, "replication_factor": 2, "assignment": {"0": [1, 2]}}},
    "clients": {"p1": {"type": "producer", "topic": "t", "messages": 20, "rate_per_s": 20,
                       "start_ms": 1000, "config": {"acks": "1"}}},
    "final": {"drain_ms": 3000}
  })";
  std::vector<std::string> progress_cells;
  Result<Matrix> matrix = RunReleaseMatrix(
      text, "smoke.json", "base", {KafkaRelease::k0_10_0, KafkaRelease::k2_0}, std::nullopt,
      [&progress_cells](const std::string& cell, size_t, size_t, TimeUs, TimeUs) {
        if (progress_cells.empty() || progress_cells.back() != cell) progress_cells.push_back(cell);
      });
  ASSERT_TRUE(matrix.ok()) << matrix.status().ToString();
  EXPECT_EQ(matrix->seed, 5u);
  EXPECT_EQ(matrix->kafka_versions, (std::vector<std::string>{"0.10.0", "2.0"}));
  const size_t per_release = MatrixElectionPolicies().size() * MatrixTruncationPolicies().size();
  ASSERT_EQ(matrix->cells.size(), 2 * per_release);
  EXPECT_EQ(MatrixCellName(matrix->cells.front()), "0.10.0/clean/high-watermark");
  EXPECT_EQ(MatrixCellName(matrix->cells.back()), "2.0/wait-for-last-isr/leader-epoch");
  ASSERT_FALSE(progress_cells.empty());
  EXPECT_EQ(progress_cells.front(), "0.10.0/clean/high-watermark");

  // A document a release refuses: a broker setting 0.10.0 does not have.
  const std::string later = R"({
    "ksim": 1, "name": "later-setting", "duration_ms": 1000,
    "cluster": {"brokers": 1, "config": {"group.initial.rebalance.delay.ms": 0}}
  })";
  Result<Matrix> refused = RunReleaseMatrix(
      later, "later.json", "base", {KafkaRelease::k2_0, KafkaRelease::k0_10_0}, std::nullopt);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("at kafka_version 0.10.0: "), std::string::npos)
      << refused.status().message();
}

// One real matrix: a leader crash under every policy pair.
TEST(PolicyMatrixTest, RunsEveryPolicyPairInOrder) {
  Result<Scenario> scenario = ParseScenario(R"({
    "ksim": 1, "name": "matrix-smoke", "seed": 5, "duration_ms": 12000,
    "policy": {"election": "clean", "truncation": "leader-epoch"},
    "topics": {"t": {"partitions": 1, "replication_factor": 3, "assignment": {"0": [1, 2, 3]}}},
    "clients": {"p1": {"type": "producer", "topic": "t", "messages": 40, "rate_per_s": 20,
                       "start_ms": 1000, "config": {"acks": "all", "retries": 3}}},
    "actions": [{"at_ms": 1500, "do": "crash", "leader_of": "t-0"}],
    "final": {"drain_ms": 5000},
    "variants": {"v": {"seed": 6}}
  })",
                                            "smoke.json");
  ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
  std::vector<std::string> progress_cells;
  Result<Matrix> matrix = RunPolicyMatrix(
      *scenario, 11,
      [&progress_cells](const std::string& cell, size_t index, size_t cells, TimeUs, TimeUs) {
        EXPECT_EQ(cells, 8u);
        if (progress_cells.size() == index) progress_cells.push_back(cell);
      });
  ASSERT_TRUE(matrix.ok()) << matrix.status().ToString();
  EXPECT_EQ(matrix->scenario, "matrix-smoke");
  EXPECT_EQ(matrix->seed, 11u);
  ASSERT_EQ(matrix->cells.size(), 8u);
  std::vector<std::string> names;
  for (const MatrixCell& cell : matrix->cells) {
    names.push_back(MatrixCellName(cell));
    ASSERT_EQ(cell.metrics.size(), MatrixMetrics().size());
    for (size_t i = 0; i < cell.metrics.size(); ++i) {
      EXPECT_EQ(cell.metrics[i].name, MatrixMetrics()[i]);
    }
    // The leader's crash forces one failover in every cell (its ZooKeeper session ends within
    // the run); acks=all with three replicas in the ISR loses nothing under any policy.
    EXPECT_GE(cell.metrics[3].value, 1) << MatrixCellName(cell);
    EXPECT_EQ(cell.metrics[0].value, 0) << MatrixCellName(cell);
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{
                "clean/high-watermark", "clean/leader-epoch", "unclean/high-watermark",
                "unclean/leader-epoch", "random-isr/high-watermark", "random-isr/leader-epoch",
                "wait-for-last-isr/high-watermark", "wait-for-last-isr/leader-epoch"}));
  EXPECT_EQ(progress_cells, names);
}

}  // namespace
}  // namespace ksim::sim
