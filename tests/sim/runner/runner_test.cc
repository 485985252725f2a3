// RunScenario end to end on small scenarios written in JSON (sim/runner/runner.h): the mapping
// from a Scenario to a run (clients, actions and their targets, the final phase), the verdict as
// the trace's last line, expectations, determinism, and the product's central claim: acks=1 with
// an unclean election loses acknowledged records, acks=all with min.insync.replicas=2 and clean
// elections loses none under the same faults.
#include "sim/runner/runner.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/base/trace_names.h"
#include "sim/kernel/trace.h"
#include "sim/runner/report.h"
#include "sim/scenario/loader.h"

namespace ksim::sim {
namespace {

Scenario Parse(const std::string& json) {
  Result<Scenario> scenario = ParseScenario(json, "test.json");
  KSIM_CHECK_MSG(scenario.ok(), scenario.ok() ? "" : scenario.status().ToString().c_str());
  return std::move(scenario).value();
}

RunResult RunIt(const Scenario& scenario, RunOptions options = {}) {
  options.keep_trace_bytes = true;
  Result<RunResult> result = RunScenario(scenario, options);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  KSIM_CHECK(result.ok());
  return std::move(result).value();
}

Trace ParsedTrace(const RunResult& result) {
  Result<Trace> trace = ParseTrace(result.trace_bytes, "run");
  KSIM_CHECK_MSG(trace.ok(), "the trace does not parse");
  return std::move(trace).value();
}

std::vector<const TraceEvent*> Events(const Trace& trace, std::string_view ev,
                                      std::string_view node = "") {
  std::vector<const TraceEvent*> out;
  for (const TraceEvent& e : trace.events) {
    if (e.ev == ev && (node.empty() || e.node == node)) out.push_back(&e);
  }
  return out;
}

int64_t MetricOf(const RunResult& result, std::string_view name) {
  for (const ksim::sim::Metric& metric : result.check.metrics) {
    if (metric.name == name) return metric.value;
  }
  ADD_FAILURE() << "no metric " << name;
  return -1;
}

// 3 brokers, topic t (1 partition on 1, 2, 3, min.insync.replicas 2), p1 sending 100 records
// with acks=all over one second, c1 of group g1 reading them; `actions`, `expect` and `final`
// spliced in.
std::string ThreeBrokers(const std::string& actions, const std::string& expect,
                         const std::string& final_phase = R"({"drain_ms": 20000})") {
  return R"({"ksim": 1, "name": "runner-test", "seed": 7, "duration_ms": 6000,
    "cluster": {"brokers": 3},
    "topics": {"t": {"partitions": 1, "replication_factor": 3,
                     "config": {"min.insync.replicas": 2}, "assignment": {"0": [1, 2, 3]}}},
    "clients": {"p1": {"type": "producer", "topic": "t", "messages": 100, "rate_per_s": 100,
                       "config": {"acks": "all", "retries": 5}},
                "c1": {"type": "consumer", "topics": ["t"], "group": "g1",
                       "commit": "after-processing",
                       "config": {"auto.offset.reset": "earliest"}}},
    "actions": [)" +
         actions + R"(],
    "final": )" +
         final_phase + R"(,
    "expect": {)" +
         expect + "}}";
}

TEST(ScenarioRunnerTest, AcksAllWithoutFaultsAcksAndKeepsEveryRecordOnce) {
  const Scenario scenario = Parse(ThreeBrokers("", R"("lost_acked": 0, "sent": {"max": 99})"));
  const RunResult result = RunIt(scenario);
  EXPECT_EQ(MetricOf(result, "sent"), 100);
  EXPECT_EQ(MetricOf(result, "acked"), 100);
  EXPECT_EQ(MetricOf(result, "lost_acked"), 0);
  EXPECT_EQ(MetricOf(result, "log_duplicates"), 0);
  EXPECT_EQ(MetricOf(result, "duplicated"), 0);

  // The audit holds every record once, in the order sent.
  const PartitionAudit* t0 = result.audit.Find(TopicPartition{"t", PartitionId(0)});
  ASSERT_NE(t0, nullptr);
  EXPECT_NE(t0->leader, BrokerId(-1));
  ASSERT_EQ(t0->records.size(), 100u);
  for (size_t i = 0; i < t0->records.size(); ++i) {
    EXPECT_EQ(t0->records[i].value, "p1-" + std::to_string(i));
    EXPECT_EQ(t0->records[i].offset, Offset(static_cast<int64_t>(i)));
  }
  EXPECT_TRUE(t0->divergences.empty());
  EXPECT_TRUE(result.audit.errors.empty());

  // One expectation met, one failed: the run is not ok.
  ASSERT_EQ(result.expectations.size(), 2u);
  EXPECT_EQ(result.expectations[0].expectation.metric, "lost_acked");
  EXPECT_TRUE(result.expectations[0].ok);
  EXPECT_EQ(result.expectations[1].expectation.metric, "sent");
  EXPECT_FALSE(result.expectations[1].ok);
  EXPECT_EQ(result.expectations[1].actual, 100);
  EXPECT_EQ(result.expectations[1].Expected(), "<= 99");
  EXPECT_FALSE(result.ok);

  // The verdict is the trace's last line and says the same.
  ASSERT_FALSE(result.trace_bytes.empty());
  const std::string last_line =
      result.trace_bytes.substr(result.trace_bytes.rfind('\n', result.trace_bytes.size() - 2) + 1);
  EXPECT_NE(last_line.find("\"ev\":\"verdict\""), std::string::npos) << last_line;
  const Trace trace = ParsedTrace(result);
  EXPECT_FALSE(trace.ok());
  EXPECT_EQ(trace.verdict.fields.at("metrics").at("sent").get<int64_t>(), 100);
  EXPECT_EQ(trace.verdict.fields.at("variant").get<std::string>(), "base");
  const TraceFields& expectations = trace.verdict.fields.at("expectations");
  ASSERT_EQ(expectations.size(), 2u);
  EXPECT_EQ(expectations[1].at("expected").get<std::string>(), "<= 99");
  EXPECT_FALSE(expectations[1].at("ok").get<bool>());
  EXPECT_EQ(result.trace_lines, trace.events.size() + 2);  // header and verdict
  // The consumer group read everything before the audit (the drain condition).
  EXPECT_EQ(Events(trace, "deliver", "c1").size(), 100u);
}

TEST(ScenarioRunnerTest, SameSeedSameTraceOtherSeedOtherTrace) {
  const Scenario scenario =
      Parse(ThreeBrokers(R"({"at_ms": 500, "do": "crash", "leader_of": "t-0"})", ""));
  const RunResult first = RunIt(scenario);
  const RunResult second = RunIt(scenario);
  EXPECT_EQ(first.trace_hash, second.trace_hash);
  EXPECT_EQ(first.trace_bytes, second.trace_bytes);
  RunOptions other;
  other.seed = 8;
  const RunResult third = RunIt(scenario, other);
  EXPECT_EQ(third.seed, 8u);
  EXPECT_NE(first.trace_hash, third.trace_hash);
}

// A world left for the exit to take back (RunOptions::leave_world_to_exit) is the same run, and
// stays reachable: under ASan, LeakSanitizer checks at this binary's exit that it is not lost.
TEST(ScenarioRunnerTest, ARunWhoseWorldIsLeftToTheExitIsTheSameRun) {
  const Scenario scenario =
      Parse(ThreeBrokers(R"({"at_ms": 500, "do": "crash", "leader_of": "t-0"})", ""));
  const RunResult taken_apart = RunIt(scenario);
  RunOptions leave;
  leave.leave_world_to_exit = true;
  const RunResult left = RunIt(scenario, leave);
  const RunResult left_again = RunIt(scenario, leave);
  EXPECT_EQ(left.trace_bytes, taken_apart.trace_bytes);
  EXPECT_EQ(left.trace_hash, taken_apart.trace_hash);
  EXPECT_EQ(left_again.trace_hash, taken_apart.trace_hash);
  EXPECT_EQ(left.ok, taken_apart.ok);
}

TEST(ScenarioRunnerTest, LeaderOfResolvesToTheLeaderWhenTheActionRuns) {
  // The second crash comes after broker 1's ZooKeeper session (6 s) expired and the controller
  // elected another leader.
  std::string json = ThreeBrokers(R"({"at_ms": 500, "do": "crash", "leader_of": "t-0"},
                                     {"at_ms": 12000, "do": "crash", "leader_of": "t-0"})",
                                  "");
  json.replace(json.find("\"duration_ms\": 6000"), 19, "\"duration_ms\": 15000");
  const Scenario scenario = Parse(json);
  const RunResult result = RunIt(scenario);
  const Trace trace = ParsedTrace(result);
  const std::vector<const TraceEvent*> actions = Events(trace, "action", "scenario");
  ASSERT_EQ(actions.size(), 2u);
  std::set<int32_t> crashed;
  for (const TraceEvent* action : actions) {
    ASSERT_TRUE(action->fields.contains("broker"));
    const int32_t broker = action->fields.at("broker").get<int32_t>();
    crashed.insert(broker);
    // The leader at that moment: the last election of t-0 before the action.
    int32_t leader = -1;
    for (const TraceEvent& e : trace.events) {
      if (e.line > action->line) break;
      if (e.ev == "leader_elected" && e.fields.value("topic", "") == "t") {
        leader = e.fields.at("leader").get<int32_t>();
      }
    }
    EXPECT_EQ(broker, leader);
    // The crash follows the action at the same instant.
    bool crash_follows = false;
    for (const TraceEvent* crash : Events(trace, "crash", node::Broker(BrokerId(broker)))) {
      if (crash->t_us == action->t_us && crash->line > action->line) crash_follows = true;
    }
    EXPECT_TRUE(crash_follows) << "broker-" << broker;
  }
  // The second crash found the new leader, not the first one's corpse.
  EXPECT_EQ(crashed.size(), 2u);
  EXPECT_EQ(result.actions.size(), 2u);
  EXPECT_FALSE(result.actions[0].skipped);
  EXPECT_NE(result.actions[0].description.find("leader_of t-0"), std::string::npos);
}

TEST(ScenarioRunnerTest, RestartOfARunningBrokerIsSkippedAndReported) {
  const Scenario scenario =
      Parse(ThreeBrokers(R"({"at_ms": 1000, "do": "restart", "broker": 2})", R"("lost_acked": 0)"));
  const RunResult result = RunIt(scenario);
  ASSERT_EQ(result.actions.size(), 1u);
  EXPECT_TRUE(result.actions[0].skipped);
  ASSERT_FALSE(result.actions[0].output.empty());
  EXPECT_NE(result.actions[0].output[0].find("broker-2"), std::string::npos);
  const Trace trace = ParsedTrace(result);
  const auto skipped = Events(trace, "action_skipped", "scenario");
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0]->fields.at("index").get<size_t>(), 0u);
  EXPECT_TRUE(Events(trace, "restart", "broker-2").empty());
  EXPECT_TRUE(result.ok);  // a skipped action is not a failure
}

TEST(ScenarioRunnerTest, FinalPhaseRestartsCrashedBrokersAndEveryPartitionHasALeader) {
  const std::string actions = R"({"at_ms": 500, "do": "crash", "broker": 2},
                                 {"at_ms": 600, "do": "crash", "broker": 3})";
  const RunResult result = RunIt(Parse(ThreeBrokers(actions, "")));
  const Trace trace = ParsedTrace(result);
  for (const char* broker : {"broker-2", "broker-3"}) {
    // Restarted within its old session's timeout, each start-up exits on the registration that
    // session still holds and the broker is started again, until one registers.
    const size_t restarts = Events(trace, "restart", broker).size();
    EXPECT_GE(restarts, 1u) << broker;
    EXPECT_EQ(Events(trace, "broker_startup_failed", broker).size(), restarts - 1) << broker;
    EXPECT_EQ(Events(trace, "broker_registered", broker).size(), 2u) << broker;
  }
  const PartitionAudit* t0 = result.audit.Find(TopicPartition{"t", PartitionId(0)});
  ASSERT_NE(t0, nullptr);
  EXPECT_NE(t0->leader, BrokerId(-1));
  EXPECT_TRUE(result.audit.errors.empty());
  EXPECT_EQ(MetricOf(result, "lost_acked"), 0);

  // Without restart_all they stay down.
  const RunResult kept_down =
      RunIt(Parse(ThreeBrokers(actions, "", R"({"restart_all": false, "drain_ms": 2000})")));
  const Trace down_trace = ParsedTrace(kept_down);
  EXPECT_TRUE(Events(down_trace, "restart", "broker-2").empty());
  EXPECT_TRUE(Events(down_trace, "restart", "broker-3").empty());
}

TEST(ScenarioRunnerTest, ClientCrashAndRestartThroughActions) {
  const RunResult result =
      RunIt(Parse(ThreeBrokers(R"({"at_ms": 400, "do": "crash", "client": "p1"},
                                                     {"at_ms": 1500, "do": "restart", "client": "p1"},
                                                     {"at_ms": 700, "do": "crash", "client": "c1"},
                                                     {"at_ms": 2000, "do": "restart", "client": "c1"})",
                               R"("lost_acked": 0)",
                               // The crashed member holds the partition for its session, 30 s at
                               // 0.10.0: the restarted one gets it after that.
                               R"({"drain_ms": 40000})")));
  const Trace trace = ParsedTrace(result);
  EXPECT_EQ(Events(trace, "crash", "p1").size(), 1u);
  EXPECT_EQ(Events(trace, "restart", "p1").size(), 1u);
  EXPECT_EQ(Events(trace, "crash", "c1").size(), 1u);
  EXPECT_EQ(Events(trace, "restart", "c1").size(), 1u);
  // The restarted producer went on with its workload: every record was sent in the end.
  EXPECT_EQ(MetricOf(result, "sent"), 100);
  // The restarted consumer delivered records again.
  const uint64_t restart_line = Events(trace, "restart", "c1").at(0)->line;
  bool delivered_after_restart = false;
  for (const TraceEvent* deliver : Events(trace, "deliver", "c1")) {
    if (deliver->line > restart_line) delivered_after_restart = true;
  }
  EXPECT_TRUE(delivered_after_restart);
  EXPECT_TRUE(result.ok);
}

TEST(ScenarioRunnerTest, ZooKeeperDownAndUp) {
  const RunResult result = RunIt(Parse(ThreeBrokers(R"({"at_ms": 200, "do": "zk_down"},
                                                     {"at_ms": 2500, "do": "zk_up"},
                                                     {"at_ms": 3000, "do": "zk_up"})",
                                                    R"("lost_acked": 0)")));
  const Trace trace = ParsedTrace(result);
  EXPECT_EQ(Events(trace, "zk_down", "zk").size(), 1u);
  EXPECT_EQ(Events(trace, "zk_up", "zk").size(), 1u);
  ASSERT_EQ(result.actions.size(), 3u);
  EXPECT_TRUE(result.actions[2].skipped);  // already up
  EXPECT_EQ(MetricOf(result, "acked"), 100);
  EXPECT_TRUE(result.ok);
}

TEST(ScenarioRunnerTest, PartitionAndHeal) {
  const RunResult result = RunIt(Parse(ThreeBrokers(
      R"({"at_ms": 300, "do": "partition", "sides": [["broker-1"], ["broker-2", "broker-3", "zk", "p1", "c1"]]},
         {"at_ms": 4000, "do": "heal"})",
      R"("lost_acked": 0)")));
  const Trace trace = ParsedTrace(result);
  EXPECT_EQ(Events(trace, "partition", "world").size(), 1u);
  EXPECT_GE(Events(trace, "heal", "world").size(), 2u);  // the action's and the final phase's
  EXPECT_EQ(MetricOf(result, "sent"), 100);
  EXPECT_TRUE(result.ok);
}

TEST(ScenarioRunnerTest, DiskFaultEioIsInjectedAndClearedByTheFinalPhase) {
  const RunResult result = RunIt(Parse(ThreeBrokers(
      R"({"at_ms": 300, "do": "disk_fault", "broker": 3, "kind": "eio"})", R"("lost_acked": 0)")));
  const Trace trace = ParsedTrace(result);
  const auto faults = Events(trace, "disk_fault", "broker-3");
  EXPECT_EQ(faults.size(), 3u);  // reads, writes and syncs
  const PartitionAudit* t0 = result.audit.Find(TopicPartition{"t", PartitionId(0)});
  ASSERT_NE(t0, nullptr);
  EXPECT_NE(t0->leader, BrokerId(-1));
  EXPECT_TRUE(result.ok);
}

// The product's central claim. Broker 1 leads t-0 and fsyncs every message; broker 4 holds no
// replica and is the controller with this seed, so that no crash below moves the controller (a new
// controller leaves the ISRs as it finds them, as Kafka's does). At 1 s both followers crash (the
// controller drops them from the ISR when their sessions expire); at 12 s
// broker 1 crashes and broker 2 comes back with its stale log. Under acks=1 and unclean election
// broker 2 is elected and the records only broker 1 had are gone once it rejoins and truncates;
// under acks=all with min.insync.replicas=2 and clean election nothing was acknowledged that two
// replicas did not hold, and the partition waits offline for broker 1 instead.
std::string FollowersDieThenLeaderDies(bool safe) {
  const std::string acks = safe ? R"("all")" : R"("1")";
  const std::string unclean = safe ? "false" : "true";
  const std::string min_isr = safe ? "2" : "1";
  return R"({"ksim": 1, "name": "central-claim", "seed": 2, "duration_ms": 25000,
    "cluster": {"brokers": 4, "config": {"unclean.leader.election.enable": )" +
         unclean + R"(},
                "broker_config": {"1": {"log.flush.interval.messages": 1}}},
    "topics": {"t": {"partitions": 1, "replication_factor": 3,
                     "config": {"min.insync.replicas": )" +
         min_isr + R"(}, "assignment": {"0": [1, 2, 3]}}},
    "clients": {"p1": {"type": "producer", "topic": "t", "messages": 2000, "rate_per_s": 100,
                       "config": {"acks": )" +
         acks + R"(, "retries": 3}}},
    "actions": [
      {"at_ms": 1000, "do": "crash", "broker": 2},
      {"at_ms": 1000, "do": "crash", "broker": 3},
      {"at_ms": 12000, "do": "crash", "broker": 1},
      {"at_ms": 12000, "do": "restart", "broker": 2}
    ],
    "final": {"drain_ms": 30000}})";
}

// The premise: broker 4, which holds no replica, is the first controller.
void ExpectBroker4IsTheFirstController(const RunResult& result) {
  const Trace trace = ParsedTrace(result);
  const auto elected = Events(trace, "controller_elected");
  ASSERT_FALSE(elected.empty());
  EXPECT_EQ(elected.front()->node, "broker-4");
}

TEST(ScenarioRunnerTest, AcksOneWithUncleanElectionLosesAckedRecordsAcksAllDoesNot) {
  const RunResult unsafe = RunIt(Parse(FollowersDieThenLeaderDies(/*safe=*/false)));
  ExpectBroker4IsTheFirstController(unsafe);
  EXPECT_GE(MetricOf(unsafe, "unclean_elections"), 1);
  EXPECT_GE(MetricOf(unsafe, "lost_acked"), 1);

  const RunResult safe = RunIt(Parse(FollowersDieThenLeaderDies(/*safe=*/true)));
  ExpectBroker4IsTheFirstController(safe);
  EXPECT_EQ(MetricOf(safe, "unclean_elections"), 0);
  EXPECT_EQ(MetricOf(safe, "lost_acked"), 0);
  EXPECT_GE(MetricOf(safe, "acked"), 1);
  EXPECT_TRUE(safe.audit.errors.empty());
}

TEST(ScenarioRunnerTest, ExpectationHoldsOnExactAndRanges) {
  Expectation exact{"lost_acked", 0, std::nullopt, std::nullopt};
  EXPECT_TRUE(ExpectationHolds(exact, 0));
  EXPECT_FALSE(ExpectationHolds(exact, 1));
  Expectation at_least{"lost_unacked", std::nullopt, 1, std::nullopt};
  EXPECT_FALSE(ExpectationHolds(at_least, 0));
  EXPECT_TRUE(ExpectationHolds(at_least, 1));
  Expectation at_most{"duplicated", std::nullopt, std::nullopt, 5};
  EXPECT_TRUE(ExpectationHolds(at_most, 5));
  EXPECT_FALSE(ExpectationHolds(at_most, 6));
  Expectation between{"elections", std::nullopt, 1, 5};
  EXPECT_FALSE(ExpectationHolds(between, 0));
  EXPECT_TRUE(ExpectationHolds(between, 3));
  EXPECT_FALSE(ExpectationHolds(between, 6));
}

TEST(ScenarioRunnerTest, ExpectedTextNamesTheBounds) {
  ExpectationResult result;
  result.expectation = Expectation{"lost_acked", 0, std::nullopt, std::nullopt};
  EXPECT_EQ(result.Expected(), "0");
  result.expectation = Expectation{"lost_unacked", std::nullopt, 1, std::nullopt};
  EXPECT_EQ(result.Expected(), ">= 1");
  result.expectation = Expectation{"duplicated", std::nullopt, std::nullopt, 5};
  EXPECT_EQ(result.Expected(), "<= 5");
  result.expectation = Expectation{"elections", std::nullopt, 1, 5};
  EXPECT_EQ(result.Expected(), "1..5");
}

// A client of a later release against 0.10.0 brokers: a 0.11 idempotent producer finds no
// InitProducerId in the brokers' ApiVersions answer, a fatal UnsupportedVersionException
// (Sender.maybeWaitForProducerId): every record fails, none is written. A 0.10.0 producer beside
// it delivers. Against 0.11.0 brokers the same producer gets its producer id and delivers.
TEST(ScenarioRunnerTest, AnIdempotentProducerAgainst0100BrokersFailsWithUnsupportedVersion) {
  const auto scenario = [](const std::string& brokers) {
    return Parse(R"({"ksim": 1, "name": "client-release", "seed": 1, "duration_ms": 3000,
      "kafka_version": ")" +
                 brokers + R"(",
      "topics": {"t": {"partitions": 1, "replication_factor": 3}},
      "clients": {
        "p1": {"type": "producer", "topic": "t", "messages": 5, "start_ms": 500,
               "kafka_version": "0.11.0", "config": {"acks": "all", "enable.idempotence": true}},
        "p2": {"type": "producer", "topic": "t", "messages": 3, "start_ms": 500,
               "kafka_version": "0.10.0", "config": {"acks": "all"}}}})");
  };
  const RunResult old = RunIt(scenario("0.10.0"));
  EXPECT_EQ(MetricOf(old, "acked"), 3) << "only p2's";
  const Trace trace = ParsedTrace(old);
  EXPECT_TRUE(Events(trace, ev::kProducerId).empty());
  EXPECT_TRUE(Events(trace, ev::kProduceBatch, "p1").empty()) << "p1 sends nothing";
  EXPECT_FALSE(Events(trace, ev::kProduceBatch, "p2").empty());
  EXPECT_TRUE(old.client_warnings.empty()) << "a 0.11.0 producer knows enable.idempotence";

  // The trace header and the report say which release ran where.
  EXPECT_EQ(trace.header.kafka_version, "0.10.0");
  EXPECT_EQ(trace.header.client_kafka_versions,
            (std::map<std::string, std::string>{{"p1", "0.11.0"}}));
  const std::string report = FormatRunReport(old);
  EXPECT_NE(report.find("\nKafka 0.10.0; clients of another release: p1 0.11.0\n"),
            std::string::npos)
      << report;
  EXPECT_EQ(RunResultJson(old)["client_kafka_versions"]["p1"], "0.11.0");

  const RunResult later = RunIt(scenario("0.11.0"));
  EXPECT_EQ(MetricOf(later, "acked"), 8);
  EXPECT_EQ(ParsedTrace(later).header.client_kafka_versions,
            (std::map<std::string, std::string>{{"p2", "0.10.0"}}));
  EXPECT_NE(FormatRunReport(later).find("\nKafka 0.11.0; clients of another release: p2 0.10.0\n"),
            std::string::npos);
  EXPECT_FALSE(Events(ParsedTrace(later), ev::kProducerId, "p1").empty());
}

}  // namespace
}  // namespace ksim::sim

namespace ksim::sim {
namespace {

TEST(ScenarioRunnerTest, TheDrainWaitsForAFailoverToSettleBeforeTheAudit) {
  // The leader crashes 2 s before the end and producers are done by then: without waiting for
  // the partition to settle, the audit would run before any new leader exists (the crashed
  // leader's 6 s session is still open) and count every acked record as lost.
  const Scenario scenario = Parse(R"({"ksim": 1, "name": "drain-settles", "seed": 3,
    "duration_ms": 4000, "cluster": {"brokers": 3},
    "topics": {"t": {"partitions": 1, "replication_factor": 3, "assignment": {"0": [1, 2, 3]}}},
    "clients": {"p1": {"type": "producer", "topic": "t", "messages": 20, "rate_per_s": 20,
                       "start_ms": 500, "config": {"acks": "all"}}},
    "actions": [{"at_ms": 2000, "do": "crash", "leader_of": "t-0"}],
    "final": {"drain_ms": 20000}})");
  const RunResult result = RunIt(scenario);
  EXPECT_EQ(MetricOf(result, "acked"), 20);
  EXPECT_EQ(MetricOf(result, "lost_acked"), 0);
  const PartitionAudit* t0 = result.audit.Find(TopicPartition{"t", PartitionId(0)});
  ASSERT_NE(t0, nullptr);
  EXPECT_NE(t0->leader, BrokerId(-1));
  EXPECT_EQ(t0->high_watermark, t0->log_end_offset);
  EXPECT_EQ(t0->isr.size(), 3u);  // the restarted broker is back in the ISR
  EXPECT_EQ(t0->records.size(), 20u);
  const Trace trace = ParsedTrace(result);
  const std::vector<const TraceEvent*> drained = Events(trace, "drained", "scenario");
  ASSERT_EQ(drained.size(), 1u);
  EXPECT_TRUE(drained[0]->fields["complete"].get<bool>());
}

// "settled" holds when the final phase settles and fails when the drain ends first: with a
// 100 ms drain the crashed leader's partition has no new leader yet (its 6 s session is open).
TEST(ScenarioRunnerTest, SettledExpectationFollowsTheDrain) {
  const auto run = [](int drain_ms) {
    return RunIt(Parse(R"({"ksim": 1, "name": "settled", "seed": 3, "duration_ms": 4000,
      "cluster": {"brokers": 3},
      "topics": {"t": {"partitions": 1, "replication_factor": 3, "assignment": {"0": [1, 2, 3]}}},
      "actions": [{"at_ms": 3900, "do": "crash", "leader_of": "t-0"}],
      "final": {"drain_ms": )" +
                       std::to_string(drain_ms) + R"(}, "expect": {"settled": true}})"));
  };
  const RunResult settled = run(20000);
  EXPECT_TRUE(settled.drained);
  ASSERT_EQ(settled.expectations.size(), 1u);
  EXPECT_TRUE(settled.expectations[0].ok);
  EXPECT_EQ(settled.expectations[0].Actual(), "true");
  EXPECT_TRUE(settled.ok);

  const RunResult cut_short = run(100);
  EXPECT_FALSE(cut_short.drained);
  ASSERT_EQ(cut_short.expectations.size(), 1u);
  EXPECT_FALSE(cut_short.expectations[0].ok);
  EXPECT_EQ(cut_short.expectations[0].Expected(), "true");
  EXPECT_EQ(cut_short.expectations[0].Actual(), "false");
  EXPECT_FALSE(cut_short.ok);
}

// A 0.10 producer does not know enable.idempotence: KafkaProducer's warning is in the trace (on
// the client's node) and in the report, and the producer runs without idempotence (no
// producer id). At 0.11.0 the same settings make an idempotent producer and no warning.
// The high-watermark truncation policy chosen at 0.11 or later writes message sets (the 0.10
// format): Kafka truncates to the high watermark only below inter.broker.protocol.version
// 0.11.0-IV2, whose message format may not be newer. A format given in the scenario still wins,
// and the release's default policy (leader-epoch) keeps record batches v2.
TEST(ScenarioRunnerTest, HighWatermarkPolicyFrom011WritesMessageSetsUnlessAFormatIsGiven) {
  auto epochs_of_appends = [](const std::string& policy, const std::string& config) {
    const std::string json =
        R"({"ksim": 1, "name": "format", "seed": 3, "duration_ms": 3000, "kafka_version": "2.1",
            "cluster": {"brokers": 3, "config": {)" +
        config + R"(}}, )" + policy + R"(
            "topics": {"t": {"partitions": 1, "replication_factor": 3,
                             "assignment": {"0": [1, 2, 3]}}},
            "clients": {"p1": {"type": "producer", "topic": "t", "messages": 20,
                               "rate_per_s": 20, "config": {"acks": "all"}}}})";
    const RunResult result = RunIt(Parse(json));
    const Trace trace = ParsedTrace(result);
    std::set<int64_t> epochs;
    for (const TraceEvent* e : Events(trace, "append")) {
      if (e->fields.value("topic", "") == "t") epochs.insert(e->fields["epoch"].get<int64_t>());
    }
    return epochs;
  };
  const std::string high_watermark = R"("policy": {"truncation": "high-watermark"},)";
  EXPECT_EQ(epochs_of_appends(high_watermark, ""), (std::set<int64_t>{-1}));
  EXPECT_EQ(epochs_of_appends(high_watermark, R"("log.message.format.version": "2.1")"),
            (std::set<int64_t>{0}));
  EXPECT_EQ(epochs_of_appends("", ""), (std::set<int64_t>{0}));
}

TEST(ScenarioRunnerTest, IdempotenceBefore011IsAWarningInTheTraceAndTheReport) {
  const auto scenario = [](const std::string& version) {
    return Parse(R"({"ksim": 1, "name": "idempotence-warning", "seed": 1, "duration_ms": 3000,
      "kafka_version": ")" +
                 version + R"(",
      "topics": {"t": {"partitions": 1, "replication_factor": 3}},
      "clients": {"p1": {"type": "producer", "topic": "t", "messages": 5, "start_ms": 500,
                         "config": {"acks": "all", "enable.idempotence": true}}}})");
  };
  const std::string warning =
      "The configuration enable.idempotence = true was supplied but isn't a known config.";
  const RunResult old = RunIt(scenario("0.10.0"));
  EXPECT_EQ(old.client_warnings, std::vector<std::string>{"p1: " + warning});
  const Trace trace = ParsedTrace(old);
  const std::vector<const TraceEvent*> warnings = Events(trace, ev::kConfigWarning, "p1");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0]->fields[field::kMessage].get<std::string>(), warning);
  EXPECT_TRUE(Events(trace, ev::kProducerId).empty()) << "no idempotent producer at 0.10.0";
  EXPECT_EQ(MetricOf(old, "acked"), 5);
  const std::string report = FormatRunReport(old);
  EXPECT_NE(report.find("Client warnings:\n  WARN p1: " + warning + "\n"), std::string::npos)
      << report;
  EXPECT_EQ(RunResultJson(old)["client_warnings"],
            nlohmann::ordered_json::array({"p1: " + warning}));

  const RunResult later = RunIt(scenario("0.11.0"));
  EXPECT_TRUE(later.client_warnings.empty());
  const Trace later_trace = ParsedTrace(later);
  EXPECT_TRUE(Events(later_trace, ev::kConfigWarning).empty());
  EXPECT_FALSE(Events(later_trace, ev::kProducerId).empty());
  EXPECT_EQ(FormatRunReport(later).find("Client warnings"), std::string::npos);
}

}  // namespace
}  // namespace ksim::sim
