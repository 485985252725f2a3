// sim/explore: the swarm generator (deterministic per seed, within --faults and --max-down), the
// promise derived from a scenario's settings, failure signatures, the results file (round trip,
// an interrupted tail, a foreign line) and the summary's grouping by signature.
#include "sim/explore/explore.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/base/random.h"
#include "sim/explore/properties.h"
#include "sim/explore/results.h"
#include "sim/explore/swarm.h"
#include "sim/scenario/loader.h"

namespace ksim::sim {
namespace {

// A base like tests/cli/data/explore_small.json; `producer_config` and `cluster_config` vary.
Scenario Base(const std::string& producer_config, const std::string& cluster_config,
              const std::string& truncation = "leader-epoch",
              const std::string& kafka_version = "0.10.0") {
  const std::string text = R"({"ksim": 1, "name": "b", "seed": 1, "duration_ms": 20000,
    "kafka_version": ")" + kafka_version +
                           R"(",
    "cluster": {"brokers": 3, "config": )" +
                           cluster_config + R"(},
    "policy": {"truncation": ")" +
                           truncation + R"("},
    "topics": {"t": {"partitions": 2, "replication_factor": 3,
                     "config": {"min.insync.replicas": 2}}},
    "clients": {"p1": {"type": "producer", "topic": "t", "messages": 10, "rate_per_s": 10,
                       "config": )" +
                           producer_config + R"(}}})";
  Result<Scenario> scenario = ParseScenario(text, "base.json");
  EXPECT_TRUE(scenario.ok()) << scenario.status().message();
  return std::move(scenario).value();
}

std::vector<nlohmann::ordered_json> Schedule(const ScheduleShape& shape, const SwarmLimits& limits,
                                             uint64_t seed) {
  RandomStream random(seed);
  RandomStream admin(~seed);
  const SwarmProfile profile = DrawProfile(limits, shape, random, admin);
  return GenerateSchedule(shape, limits, profile, random, admin);
}

bool IsCli(const nlohmann::ordered_json& action) { return action.at("do") == "cli"; }

TEST(SwarmTest, FaultKindsParseAndUnknownOnesNameTheValidOnes) {
  Result<std::vector<FaultKind>> kinds = ParseFaultKinds("crash,partition");
  ASSERT_TRUE(kinds.ok());
  EXPECT_EQ(*kinds, (std::vector<FaultKind>{FaultKind::kCrash, FaultKind::kPartition}));
  Result<std::vector<FaultKind>> bad = ParseFaultKinds("crash,crsh_replicas");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("\"crsh_replicas\""), std::string::npos);
  EXPECT_NE(bad.status().message().find("crash_replicas"), std::string::npos);
  EXPECT_FALSE(ParseFaultKinds("").ok());
}

TEST(SwarmTest, ASeedGivesOneScheduleSortedWithinTheRunAndTheAllowedKinds) {
  const ScheduleShape shape = ShapeOf(Base(R"({"acks": "all"})", "{}"));
  SwarmLimits limits;
  limits.kinds = {FaultKind::kCrash, FaultKind::kRestart, FaultKind::kSlow};
  bool some_differ = false;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const std::vector<nlohmann::ordered_json> schedule = Schedule(shape, limits, seed);
    EXPECT_EQ(schedule, Schedule(shape, limits, seed)) << "seed " << seed;
    if (schedule != Schedule(shape, limits, seed + 1)) some_differ = true;
    int64_t last = 0;
    for (const nlohmann::ordered_json& action : schedule) {
      const int64_t at = action.at("at_ms").get<int64_t>();
      EXPECT_GE(at, last);
      EXPECT_GE(at, 1);
      EXPECT_LE(at, shape.duration_ms);
      last = at;
      const std::string kind = action.at("do").get<std::string>();
      EXPECT_TRUE(kind == "crash" || kind == "restart" || kind == "slow") << action.dump();
    }
  }
  EXPECT_TRUE(some_differ);
}

TEST(SwarmTest, MaxDownBoundsTheBrokersDownAtOnce) {
  const ScheduleShape shape = ShapeOf(Base(R"({"acks": "all"})", "{}"));
  SwarmLimits limits;
  limits.kinds = {FaultKind::kCrash, FaultKind::kShutdown, FaultKind::kRestart};
  limits.max_down = 1;
  limits.fault_budget = 40;
  int32_t most = 0;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    std::set<std::string> down;
    for (const nlohmann::ordered_json& action : Schedule(shape, limits, seed)) {
      const std::string kind = action.at("do").get<std::string>();
      const std::string target = action.contains("broker")
                                     ? action["broker"].dump()
                                     : "leader_of " + action.value("leader_of", "");
      if (kind == "crash" || kind == "shutdown") down.insert(target);
      if (kind == "restart") {
        // A leader_of target is one broker down; the generator restarts each of its replicas.
        down.erase(target);
        std::erase_if(down, [](const std::string& t) { return t.starts_with("leader_of"); });
      }
      most = std::max(most, static_cast<int32_t>(down.size()));
      ASSERT_LE(down.size(), 1u) << "seed " << seed << " at " << action.dump();
    }
  }
  EXPECT_EQ(most, 1);  // the bound is reached, not merely respected by doing nothing
}

// The administrative actions come from a stream of their own: with them allowed, every seed's
// faults are what they are without them, in the same order, and the actions added are valid
// `cli` actions of the scenario format (a new topic of its own name, or a preferred replica
// election of every partition or of one partition of the base's).
TEST(SwarmTest, AdministrativeActionsLeaveEverySeedsFaultsAsTheyWere) {
  const Scenario base = Base(R"({"acks": "all"})", "{}");
  const ScheduleShape shape = ShapeOf(base);
  SwarmLimits faults_only;
  for (size_t i = 0; i < FaultKindNames().size(); ++i) {
    if (!IsAdministrative(static_cast<FaultKind>(i))) {
      faults_only.kinds.push_back(static_cast<FaultKind>(i));
    }
  }
  std::map<std::string, int> commands;  // by tool and form
  std::set<std::string> topics;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const std::vector<nlohmann::ordered_json> all = Schedule(shape, SwarmLimits{}, seed);
    std::vector<nlohmann::ordered_json> faults;
    std::copy_if(all.begin(), all.end(), std::back_inserter(faults),
                 [](const nlohmann::ordered_json& a) { return !IsCli(a); });
    ASSERT_EQ(faults, Schedule(shape, faults_only, seed)) << "seed " << seed;
    std::set<std::string> seed_topics;
    for (const nlohmann::ordered_json& action : all) {
      if (!IsCli(action)) continue;
      const std::string command = action.at("command").get<std::string>();
      const bool file = action.contains("input");
      commands[command.substr(0, command.find(' ')) + (file ? " file" : "")]++;
      const size_t topic = command.find("--topic ");
      if (topic != std::string::npos) {
        const std::string name =
            command.substr(topic + 8, command.find(' ', topic + 8) - topic - 8);
        EXPECT_TRUE(seed_topics.insert(name).second) << "seed " << seed << ": " << name;
        topics.insert(name);
      }
      // The action is one the scenario format takes, as explore writes it into the base.
      nlohmann::ordered_json document = nlohmann::ordered_json::parse(R"({"ksim": 1, "name": "b",
        "duration_ms": 20000, "cluster": {"brokers": 3},
        "topics": {"t": {"partitions": 2, "replication_factor": 3}}})");
      document["actions"] = nlohmann::ordered_json::array({action});
      Result<Scenario> parsed = ParseScenario(document.dump(), "seed.json");
      EXPECT_TRUE(parsed.ok()) << action.dump() << ": " << parsed.status().message();
    }
  }
  EXPECT_GT(commands["kafka-topics.sh"], 0);
  EXPECT_GT(commands["kafka-preferred-replica-election.sh"], 0);
  EXPECT_GT(commands["kafka-preferred-replica-election.sh file"], 0);
  EXPECT_GT(topics.size(), 1u);
  // Only the administrative kinds: a seed gets at least one of them.
  SwarmLimits admin_only;
  admin_only.kinds = {FaultKind::kCreateTopic, FaultKind::kPreferredElection};
  size_t admin_actions = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const std::vector<nlohmann::ordered_json> schedule = Schedule(shape, admin_only, seed);
    EXPECT_TRUE(std::all_of(schedule.begin(), schedule.end(), IsCli)) << "seed " << seed;
    admin_actions += schedule.size();
  }
  EXPECT_GT(admin_actions, 20u);
}

// A run that drained, every metric 0 but `lost_acked` (its anomalies are the caller's).
RunResult DrainedRunLosing(size_t lost_acked) {
  RunResult run;
  run.drained = true;
  for (std::string_view name : MetricNames()) {
    run.check.metrics.push_back(
        Metric{std::string(name), name == "lost_acked" ? static_cast<int64_t>(lost_acked) : 0});
  }
  return run;
}

TEST(PropertiesTest, ThePromiseFollowsTheSettings) {
  const std::string safe_cluster =
      R"({"unclean.leader.election.enable": false, "log.flush.interval.messages": 1})";
  const Promise safe = DerivePromise(
      Base(R"({"acks": "all", "enable.idempotence": true})", safe_cluster, "leader-epoch", "2.1"),
      {});
  EXPECT_TRUE(safe.Has("engine_invariants"));
  EXPECT_TRUE(safe.Has("acked_kept"));
  EXPECT_TRUE(safe.Has("no_log_duplicates"));
  EXPECT_TRUE(safe.synced_disks);
  EXPECT_EQ(safe.disks_lost_tolerated, 1);

  const Promise acks1 = DerivePromise(Base(R"({"acks": "1"})", safe_cluster), {});
  EXPECT_TRUE(acks1.Has("engine_invariants"));
  EXPECT_FALSE(acks1.Has("acked_kept"));
  EXPECT_FALSE(acks1.Has("no_log_duplicates"));
  const std::string not_promised = acks1.Describe();
  EXPECT_NE(not_promised.find("acks=1"), std::string::npos) << not_promised;

  // Kafka 0.10's producer ignores enable.idempotence: nothing to promise about duplicates.
  const Promise old = DerivePromise(Base(R"({"acks": "all", "enable.idempotence": true})",
                                         safe_cluster, "leader-epoch", "0.10.0"),
                                    {});
  EXPECT_FALSE(old.Has("no_log_duplicates"));
  EXPECT_NE(old.Describe().find("p1 (Kafka 0.10.0 has no enable.idempotence)"), std::string::npos)
      << old.Describe();

  // Before 2.1 leader-epoch truncation still loses acknowledged records to a deposed leader's
  // answer (KIP-320) and to a new leader's unrecorded epoch (KAFKA-7415).
  for (const char* release : {"0.10.0", "2.0"}) {
    const Promise before = DerivePromise(Base(R"({"acks": "all", "enable.idempotence": true})",
                                              safe_cluster, "leader-epoch", release),
                                         {});
    EXPECT_FALSE(before.Has("acked_kept")) << release;
    EXPECT_NE(before.Describe().find("Kafka " + std::string(release) +
                                     " (a follower may truncate by the answer of a leader"),
              std::string::npos)
        << before.Describe();
  }

  const Promise hw = DerivePromise(Base(R"({"acks": "all"})", safe_cluster, "high-watermark"), {});
  EXPECT_FALSE(hw.Has("acked_kept"));
  const Promise unclean =
      DerivePromise(Base(R"({"acks": "all"})", R"({"unclean.leader.election.enable": true})"), {});
  EXPECT_FALSE(unclean.Has("acked_kept"));
}

// The old consumer (issue 18) says auto.offset.reset with its own names: smallest is the
// earliest, so the drain can promise liveness; its default, largest, cannot.
TEST(PropertiesTest, AnOldConsumerAtSmallestStartsAtTheEarliest) {
  auto with_consumer = [](const std::string& reset) {
    Scenario scenario = Base(R"({"acks": "all"})", "{}");
    ClientSpec consumer;
    consumer.id = "c1";
    consumer.type = ClientType::kConsumer;
    consumer.topics = {"t"};
    consumer.group = "g1";
    consumer.zookeeper_consumer = true;
    if (!reset.empty()) consumer.config = {{"auto.offset.reset", reset}};
    scenario.clients.push_back(consumer);
    return DerivePromise(scenario, {});
  };
  EXPECT_TRUE(with_consumer("smallest").Has("liveness")) << with_consumer("smallest").Describe();
  const Promise largest = with_consumer("");
  EXPECT_FALSE(largest.Has("liveness"));
  EXPECT_NE(largest.Describe().find("c1 without auto.offset.reset=earliest"), std::string::npos)
      << largest.Describe();
}

TEST(PropertiesTest, SignaturesForgetTheNumbers) {
  EXPECT_EQ(NormalizeCause("broker-1 crashed at 2.290 s; lost 17 records"),
            "broker-# crashed at # s; lost # records");
  EXPECT_EQ(NormalizeCause("batch [0..0] crc 7620309b is now [0..0] crc 6fe053fb"),
            "batch [#..#] crc # is now [#..#] crc #");
  EXPECT_EQ(NormalizeCause("c1 of g1 in decade 1990s"), "c# of g# in decade #s");
  const PropertyFailure a = MakeFailure("acked_kept", "broker-1 crashed at 2.290 s");
  const PropertyFailure b = MakeFailure("acked_kept", "broker-3 crashed at 9.001 s");
  EXPECT_EQ(a.signature, b.signature);
  EXPECT_NE(a.signature, MakeFailure("liveness", "broker-1 crashed at 2.290 s").signature);
  EXPECT_TRUE(ParseMetricBound("lost_acked<=0").ok());
  EXPECT_FALSE(ParseMetricBound("lost<=0").ok());
}

// Acknowledged records lost to a defect of Kafka's own that no setting avoids (a broker leading
// again on its followers' old log ends, Anomaly::kafka_defect) leave acked_kept untested; a record
// lost otherwise in the same run still fails it, with its own cause.
TEST(PropertiesTest, AckedRecordsLostToKafkasOwnDefectLeaveAckedKeptUntested) {
  const std::string safe_cluster =
      R"({"unclean.leader.election.enable": false, "log.flush.interval.messages": 1})";
  const Scenario base =
      Base(R"({"acks": "all", "enable.idempotence": true})", safe_cluster, "leader-epoch", "2.1");
  const Promise promise = DerivePromise(base, {});
  ASSERT_TRUE(promise.Has("acked_kept"));
  EXPECT_NE(promise.Describe().find("acked_kept of a record lost to a broker leading again"),
            std::string::npos)
      << promise.Describe();
  auto run_losing = [&](const std::vector<bool>& kafkas, std::vector<std::string>* skipped) {
    RunResult run = DrainedRunLosing(kafkas.size());
    for (bool kafka : kafkas) {
      Anomaly a;
      a.kind = "lost_acked";
      a.cause = kafka ? "broker-3 became leader at 36.954 s without it (...): broker-1 led again"
                      : "truncated on broker-3 at 4.162 s (to offset 398, leader_epoch)";
      if (kafka) a.kafka_defect = std::string(kLeaderAgainOnOldLogEndsDefect);
      run.check.anomalies.push_back(a);
    }
    return CheckProperties(promise, base, run, skipped);
  };
  std::vector<std::string> skipped;
  EXPECT_TRUE(run_losing({true, true}, &skipped).empty());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0], "acked_kept: 2 record(s) lost to Kafka's own defect, " +
                            std::string(kLeaderAgainOnOldLogEndsDefect));
  skipped.clear();
  const std::vector<PropertyFailure> mixed = run_losing({true, false}, &skipped);
  ASSERT_EQ(mixed.size(), 1u);
  EXPECT_EQ(mixed[0].property, "acked_kept");
  EXPECT_EQ(mixed[0].cause, "truncated on broker-3 at 4.162 s (to offset 398, leader_epoch)");
  EXPECT_TRUE(skipped.empty());
}

// A --bound on a metric that counts records names the cause most of its records share, so that
// an unsafe base's losses group by why they happened, not only by how many there were.
TEST(PropertiesTest, ABoundOnLostRecordsGroupsByTheirCause) {
  PropertyOptions options;
  options.bounds.push_back(ParseMetricBound("lost_acked<=0").value());
  options.bounds.push_back(ParseMetricBound("elections<=100").value());
  const Scenario base = Base(R"({"acks": "1"})", R"({})", "high-watermark");
  const Promise promise = DerivePromise(base, options);
  const std::string truncated =
      "truncated on broker-3 at 4.162 s (to offset 398, high_watermark) before broker-3 was "
      "elected leader (epoch 2) at 6.513 s";
  const std::string crashed =
      "broker-1, its leader at the ack, crashed at 5.000 s (torn unsynced tail) and no replica "
      "kept the record";
  auto run_losing = [&](const std::vector<std::string>& causes) {
    RunResult run = DrainedRunLosing(causes.size());
    for (const std::string& cause : causes) {
      Anomaly a;
      a.kind = "lost_acked";
      a.cause = cause;
      run.check.anomalies.push_back(a);
    }
    return CheckProperties(promise, base, run);
  };
  const std::vector<PropertyFailure> by_truncation = run_losing({crashed, truncated, truncated});
  ASSERT_EQ(by_truncation.size(), 1u);
  EXPECT_EQ(by_truncation[0].property, "bound");
  EXPECT_EQ(by_truncation[0].cause, "lost_acked<=0 (actual 3): " + truncated);
  const std::vector<PropertyFailure> by_crash = run_losing({crashed, crashed, truncated});
  ASSERT_EQ(by_crash.size(), 1u);
  EXPECT_NE(by_crash[0].signature, by_truncation[0].signature);
  EXPECT_EQ(by_crash[0].signature, "bound: lost_acked<=# (actual #): " + NormalizeCause(crashed));
  EXPECT_TRUE(run_losing({}).empty());
}

// A drain that did not settle because of one of Kafka's own liveness defects (the runner names
// it) is not a liveness failure: the run's liveness is skipped and the promise says so. Any other
// unsettled drain is a failure.
TEST(PropertiesTest, KafkasOwnLivenessDefectsAreSkippedNotFailed) {
  const Scenario base = Base(R"({"acks": "all"})", R"({})");
  const Promise promise = DerivePromise(base, PropertyOptions{});
  auto run_undrained = [&](const std::string& undrained, std::vector<std::string>* skipped) {
    RunResult run;
    run.drained = false;
    run.undrained = undrained;
    for (std::string_view name : MetricNames()) {
      run.check.metrics.push_back(Metric{std::string(name), 0});
    }
    return CheckProperties(promise, base, run, skipped);
  };
  for (std::string_view defect :
       {kMissedRestartDefect, kSameLeaderDefect, kFollowerAheadDefect, kOutOfOrderRetryDefect,
        kStaleControlRequestDefect, kLeaderEndPastRecordsDefect, kBelowFirstEpochDefect,
        kUnheldEpochDefect, kForgottenEpochStartDefect, kSameEpochForkDefect,
        kLeaderKeptBelowUndefinedCutDefect, kFollowerBelowFirstEpochDefect,
        kFollowerOffsetJumpDefect}) {
    std::vector<std::string> skipped;
    const std::string undrained =
        "broker-1 is running but out of t-0's ISR: ... (" + std::string(defect) + ")";
    EXPECT_TRUE(run_undrained(undrained, &skipped).empty()) << defect;
    ASSERT_EQ(skipped.size(), 1u) << defect;
    EXPECT_EQ(skipped[0], "liveness: " + undrained);
    bool promised_not = false;
    for (const std::string& line : promise.not_promised) {
      promised_not |= line.find(defect) != std::string::npos;
    }
    EXPECT_TRUE(promised_not) << defect;
  }
  std::vector<std::string> skipped;
  const std::vector<PropertyFailure> failed =
      run_undrained("broker-1 is running but out of t-0's ISR", &skipped);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].property, "liveness");
  EXPECT_TRUE(skipped.empty());
}

// At a release that fixed a defect (2.0: KAFKA-6361; 2.1: KAFKA-7164, KAFKA-7414, KIP-91,
// KAFKA-7415) it is promised again: not listed, and a drain naming it is ksim's failure; KAFKA-1120
// and KAFKA-7235 (fixed in 2.2), KAFKA-10706 (2.6.1), the same-epoch fork and the follower's
// corrupted-offset jump (never) stay.
TEST(PropertiesTest, KafkasLivenessDefectsFixedInTheBasesReleaseAreFailures) {
  Scenario base = Base(R"({"acks": "all"})", R"({})");
  base.kafka_version = KafkaRelease::k2_1;
  const Promise promise = DerivePromise(base, PropertyOptions{});
  auto not_promised = [&](std::string_view defect) {
    return std::any_of(
        promise.not_promised.begin(), promise.not_promised.end(),
        [&](const std::string& line) { return line.find(defect) != std::string::npos; });
  };
  EXPECT_TRUE(not_promised(kMissedRestartDefect));
  EXPECT_TRUE(not_promised(kStaleControlRequestDefect));
  EXPECT_TRUE(not_promised(kLeaderEndPastRecordsDefect));
  EXPECT_TRUE(not_promised(kForgottenEpochStartDefect));
  EXPECT_TRUE(not_promised(kSameEpochForkDefect));
  EXPECT_TRUE(not_promised(kFollowerOffsetJumpDefect));
  for (std::string_view defect :
       {kSameLeaderDefect, kFollowerAheadDefect, kOutOfOrderRetryDefect, kBelowFirstEpochDefect,
        kUnheldEpochDefect, kLeaderKeptBelowUndefinedCutDefect, kFollowerBelowFirstEpochDefect}) {
    EXPECT_FALSE(not_promised(defect)) << defect;
    RunResult run;
    run.drained = false;
    run.undrained = "broker-1 is running but out of t-0's ISR: ... (" + std::string(defect) + ")";
    for (std::string_view name : MetricNames()) {
      run.check.metrics.push_back(Metric{std::string(name), 0});
    }
    std::vector<std::string> skipped;
    const std::vector<PropertyFailure> failed = CheckProperties(promise, base, run, &skipped);
    ASSERT_EQ(failed.size(), 1u) << defect;
    EXPECT_EQ(failed[0].property, "liveness");
    EXPECT_TRUE(skipped.empty()) << defect;
  }
}

ResultLine Line(uint64_t seed, const std::string& verdict, const std::string& cause = "") {
  ResultLine line;
  line.meta = ResultMeta{"0.1", "abc", "base.json", "0123456789abcdef"};
  line.result.seed = seed;
  line.result.verdict = verdict;
  if (!cause.empty()) line.result.failures.push_back(MakeFailure("acked_kept", cause));
  line.result.actions = seed % 5;
  line.result.duration_ms = 20000;
  line.result.trace_hash = "00000000000000ff";
  line.result.metrics = {Metric{"sent", 10}, Metric{"lost_acked", cause.empty() ? 0 : 2}};
  return line;
}

TEST(ResultsTest, LinesRoundTripAndAnInterruptedTailIsLeftOut) {
  const std::string text = ResultLineJson(Line(3, "ok")) + "\n" +
                           ResultLineJson(Line(4, "fail", "broker-1 crashed at 1.000 s")) + "\n";
  Result<ResultsFile> whole = ParseResults(text, "r.jsonl");
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  ASSERT_EQ(whole->lines.size(), 2u);
  EXPECT_FALSE(whole->truncated_tail);
  EXPECT_EQ(ResultLineJson(whole->lines[1]),
            ResultLineJson(Line(4, "fail", "broker-1 crashed at 1.000 s")));

  Result<ResultsFile> torn = ParseResults(text.substr(0, text.size() - 15), "r.jsonl");
  ASSERT_TRUE(torn.ok());
  EXPECT_EQ(torn->lines.size(), 1u);
  EXPECT_TRUE(torn->truncated_tail);

  Result<ResultsFile> foreign = ParseResults(text + "{\"a\": 1}\n", "r.jsonl");
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.status().message().find("r.jsonl:3: not a ksim explore results line"),
            std::string::npos)
      << foreign.status().message();
}

TEST(ResultsTest, FailuresGroupBySignatureWithTheFirstAndSmallestSeed) {
  std::vector<ResultLine> lines = {Line(1, "ok"), Line(7, "fail", "broker-2 crashed at 3.100 s"),
                                   Line(9, "fail", "no live leader"),
                                   Line(10, "fail", "broker-1 crashed at 8.000 s")};
  const Summary summary = Summarize(lines);
  EXPECT_EQ(summary.runs, 4);
  EXPECT_EQ(summary.failed, 3);
  ASSERT_EQ(summary.groups.size(), 2u);
  EXPECT_EQ(summary.groups[0].count, 2);
  EXPECT_EQ(summary.groups[0].first.result.seed, 7u);
  EXPECT_EQ(summary.groups[0].smallest.result.seed, 10u);  // no action (seed 7 has 2)
  EXPECT_EQ(summary.groups[1].count, 1);
  std::vector<ResultLine> mixed = {Line(1, "ok"), Line(2, "ok")};
  mixed[1].meta.commit = "def";
  EXPECT_NE(MixedMetaProblem(mixed).find("ksim versions differ"), std::string::npos);
  EXPECT_EQ(MixedMetaProblem(lines), "");
}

// --releases: the base at a release is the file with its kafka_version set, named for the
// release, parsed again (the release's refusals apply); a seed's schedule is the same at every
// release, and its result names the release.
TEST(ExploreBaseAtTest, TheSameScheduleAtAnotherReleaseUnderItsName) {
  Result<ExploreBase> base =
      LoadExploreBase(std::string(KSIM_SOURCE_DIR) + "/tests/cli/data/explore_small.json");
  ASSERT_TRUE(base.ok()) << base.status().message();
  Result<ExploreBase> at = ExploreBaseAt(*base, KafkaRelease::k2_0);
  ASSERT_TRUE(at.ok()) << at.status().message();
  EXPECT_EQ(at->release, "2.0");
  EXPECT_EQ(at->scenario.kafka_version, KafkaRelease::k2_0);
  EXPECT_EQ(base->scenario.kafka_version, KafkaRelease::k2_1);
  EXPECT_EQ(at->scenario.name, "explore-small-2.0");
  EXPECT_EQ(at->hash, base->hash);  // the file's
  ExploreOptions options;
  options.determinism_every = 0;
  const SeedScenario there = BuildSeedScenario(*at, 3, std::nullopt, options);
  const SeedScenario here = BuildSeedScenario(*base, 3, std::nullopt, options);
  EXPECT_EQ(there.document["actions"], here.document["actions"]);
  EXPECT_EQ(there.document["kafka_version"], "2.0");
  EXPECT_EQ(there.document["name"], "explore-small-2.0-seed-3");
  const SeedResult result = RunSeed(*at, 3, std::nullopt, options);
  EXPECT_EQ(result.kafka_version, "2.0");
  EXPECT_NE(result.verdict, "error") << (result.failures.empty() ? "" : result.failures[0].cause);
  EXPECT_EQ(RunSeed(*base, 3, std::nullopt, options).kafka_version, "");

  // 0.8.2 has no idempotent producer and no group consumer: refused, the release named.
  Result<ExploreBase> refused = ExploreBaseAt(*base, KafkaRelease::k0_8_2);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("explore_small.json at kafka_version 0.8.2: "),
            std::string::npos)
      << refused.status().message();
}

// --releases: each line names its release; the summary's table has a row per release (and per
// release and policy pair), each with its own first failing seed.
TEST(ResultsTest, ReleasesRoundTripAndSummarizeByCell) {
  std::vector<ResultLine> lines;
  for (const char* release : {"2.0", "2.1"}) {
    for (const char* policy : {"", "clean/leader-epoch"}) {
      ResultLine line = Line(5, std::string(release) == "2.0" ? "fail" : "ok",
                             std::string(release) == "2.0" ? "broker-1 crashed at 1.000 s" : "");
      line.result.kafka_version = release;
      line.result.policy = policy;
      lines.push_back(std::move(line));
    }
  }
  Result<ResultLine> parsed = ParseResultLine(ResultLineJson(lines[1]));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->result.kafka_version, "2.0");
  EXPECT_EQ(parsed->result.policy, "clean/leader-epoch");
  EXPECT_EQ(ResultLineJson(lines[0]).find("\"policy\""), std::string::npos);
  ResultLine plain = Line(5, "ok");
  EXPECT_EQ(ResultLineJson(plain).find("kafka_version"), std::string::npos);

  const Summary summary = Summarize(lines);
  ASSERT_EQ(summary.cells.size(), 4u);
  EXPECT_EQ(summary.cells[0].cell, "2.0");
  EXPECT_EQ(summary.cells[1].cell, "2.0/clean/leader-epoch");
  EXPECT_EQ(summary.cells[2].cell, "2.1");
  EXPECT_EQ(summary.cells[0].failed, 1);
  EXPECT_EQ(summary.cells[2].failed, 0);
  const std::string text = FormatSummary(summary);
  EXPECT_NE(text.find("Per release and policy pair (release/election/truncation):\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  2.0/clean/leader-epoch: 1 of 1 failed; first seed 5 "
                      "(2.0/clean/leader-epoch)"),
            std::string::npos)
      << text;
  lines.erase(lines.begin() + 1);
  lines.erase(lines.begin() + 2);
  EXPECT_NE(FormatSummary(Summarize(lines)).find("Per release:\n  2.0: 1 of 1 failed"),
            std::string::npos)
      << FormatSummary(Summarize(lines));
}

}  // namespace
}  // namespace ksim::sim
