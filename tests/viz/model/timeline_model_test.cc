// The timeline model against its traces: small hand-written traces for exact cases and errors,
// and in-process runs of shipped scenarios whose state at chosen times is compared with what
// the trace itself says (read back from the JSON in the test, independently of the builder).
#include "viz/model/timeline_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sim/kernel/trace.h"
#include "sim/runner/runner.h"
#include "sim/scenario/loader.h"
#include "sim/scenario/scenario.h"
#include "tests/viz/model/hand_trace.h"

namespace ksim::viz {
namespace {

namespace fs = std::filesystem;

fs::path ScenarioPath(const std::string& relative) {
  return fs::path(KSIM_SOURCE_DIR) / "scenarios" / relative;
}

Result<TimelineModel> BuildText(const std::string& body,
                                const std::string& verdict = testing::kHandVerdict) {
  return testing::BuildHandTrace(body, verdict);
}

// Two brokers, one partition t-0 led by 1, a producer p1 sending two records.
const char* kSmall =
    R"({"t_us":10,"node":"broker-1","ev":"controller_elected","epoch":1}
{"t_us":20,"node":"broker-1","ev":"leader_elected","topic":"t","partition":0,"leader":1,"epoch":0,"isr":[1,2],"unclean":false}
{"t_us":30,"node":"broker-1","ev":"become_leader","topic":"t","partition":0,"epoch":0,"isr":[1,2],"replicas":[1,2],"leo":0,"log_start_offset":0,"hw":0}
{"t_us":31,"node":"broker-2","ev":"become_follower","topic":"t","partition":0,"leader":1,"epoch":0,"leo":0,"log_start_offset":0,"hw":0}
{"t_us":40,"node":"p1","ev":"send","record_id":"p1-0","topic":"t","key":null,"value":"a"}
{"t_us":41,"node":"p1","ev":"send","record_id":"p1-1","topic":"t","key":"k","value":"b"}
{"t_us":50,"node":"broker-1","ev":"append","topic":"t","partition":0,"first_offset":0,"last_offset":1,"leo":2,"epoch":0,"role":"leader","values":["a","b"]}
{"t_us":60,"node":"broker-2","ev":"append","topic":"t","partition":0,"first_offset":0,"last_offset":1,"leo":2,"epoch":0,"role":"follower","values":["a","b"]}
{"t_us":70,"node":"broker-1","ev":"hw","topic":"t","partition":0,"hw":2}
{"t_us":80,"node":"p1","ev":"ack","record_id":"p1-0","topic":"t","partition":0,"offset":0,"key":null,"value":"a"}
{"t_us":100,"node":"broker-1","ev":"crash","tear":false,"corrupt":false}
{"t_us":200,"node":"broker-2","ev":"leader_elected","topic":"t","partition":0,"leader":2,"epoch":1,"isr":[2],"unclean":false}
{"t_us":210,"node":"broker-2","ev":"become_leader","topic":"t","partition":0,"epoch":1,"isr":[2],"replicas":[1,2],"leo":2,"log_start_offset":0,"hw":2}
{"t_us":300,"node":"broker-1","ev":"restart","incarnation":2}
{"t_us":310,"node":"broker-1","ev":"become_follower","topic":"t","partition":0,"leader":2,"epoch":1,"leo":1,"log_start_offset":0,"hw":0}
{"t_us":320,"node":"broker-1","ev":"truncate","topic":"t","partition":0,"from_leo":1,"to":0,"records":1,"reason":"high_watermark"}
{"t_us":400,"node":"world","ev":"partition","sides":[["broker-1"],["broker-2","p1"]],"one_way":false}
{"t_us":500,"node":"world","ev":"heal"}
{"t_us":600,"node":"c1","ev":"commit","group":"g1","topic":"t","partition":0,"offset":2,"error":null}
{"t_us":610,"node":"c1","ev":"commit","group":"g1","topic":"t","partition":0,"offset":5,"error":"REBALANCE_IN_PROGRESS"}
)";

std::vector<std::string> Values(const TimelineModel& model, const std::vector<Cell>& cells) {
  std::vector<std::string> out;
  for (const Cell& c : cells) out.push_back(c.record >= 0 ? model.records()[c.record].value : "?");
  return out;
}

TEST(TimelineModelTest, HandTraceStateAtChosenTimes) {
  Result<TimelineModel> built = BuildText(kSmall);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  const TimelineModel& m = *built;
  ASSERT_EQ(m.partitions().size(), 1u);
  EXPECT_EQ(m.partitions()[0].replicas, (std::vector<int32_t>{1, 2}));
  const int32_t p = m.PartitionIndex("t", 0);
  ASSERT_EQ(p, 0);

  Snapshot before = m.StateAt(99);
  EXPECT_TRUE(before.FindBroker(1)->controller);
  EXPECT_EQ(before.partitions[0].leader, 1);
  EXPECT_EQ(before.partitions[0].replica_states[0].hw, 2);
  EXPECT_TRUE(before.partitions[0].replica_states[0].leader);
  EXPECT_EQ(Values(m, m.LogAt(p, 1, 99)), (std::vector<std::string>{"a", "b"}));

  Snapshot crashed = m.StateAt(100);
  EXPECT_EQ(crashed.FindBroker(1)->status, NodeStatus::kCrashed);
  EXPECT_FALSE(crashed.partitions[0].replica_states[0].online);
  EXPECT_TRUE(crashed.partitions[0].replica_states[1].online);

  Snapshot elected = m.StateAt(200);
  EXPECT_EQ(elected.partitions[0].leader, 2);
  EXPECT_EQ(elected.partitions[0].leader_epoch, 1);
  EXPECT_EQ(elected.partitions[0].isr, (std::vector<int32_t>{2}));
  EXPECT_EQ(elected.partitions[0].elections, 2);
  EXPECT_TRUE(elected.partitions[0].replica_states[1].leader);
  EXPECT_FALSE(elected.partitions[0].replica_states[0].in_isr);

  // The restarted broker lost its unsynced tail (leo 1 < 2) at its become_follower.
  Snapshot restarted = m.StateAt(310);
  EXPECT_EQ(restarted.FindBroker(1)->status, NodeStatus::kAlive);
  EXPECT_EQ(restarted.FindBroker(1)->incarnation, 2);
  EXPECT_EQ(restarted.partitions[0].replica_states[0].leo, 1);
  EXPECT_EQ(Values(m, m.LogAt(p, 1, 310)), (std::vector<std::string>{"a"}));
  // The truncation removes exactly the cells at and above `to`.
  EXPECT_TRUE(m.LogAt(p, 1, 320).empty());
  EXPECT_EQ(Values(m, m.LogAt(p, 2, 320)), (std::vector<std::string>{"a", "b"}));
  std::span<const Cell> history = m.CellHistory(p, 1);
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[1].removed_us, 310);
  EXPECT_EQ(history[0].removed_us, 320);
  EXPECT_TRUE(history[0].truncated);
  EXPECT_TRUE(history[1].truncated);

  EXPECT_TRUE(m.StateAt(400).LinkCut("broker-1", "p1"));
  EXPECT_TRUE(m.StateAt(400).LinkCut("p1", "broker-1"));
  EXPECT_FALSE(m.StateAt(400).LinkCut("broker-2", "p1"));
  EXPECT_TRUE(m.StateAt(500).cuts.empty());

  // Only the ok commit counts.
  Snapshot end = m.StateAt(m.end_us());
  ASSERT_EQ(end.groups.size(), 1u);
  EXPECT_EQ(end.groups[0].committed, (std::vector<std::pair<std::string, int64_t>>{{"t-0", 2}}));

  // The ledger.
  ASSERT_EQ(m.records().size(), 2u);
  EXPECT_EQ(m.RecordIndex("p1-1"), 1);
  EXPECT_TRUE(m.records()[0].acked());
  EXPECT_EQ(m.records()[0].offset, 0);
  EXPECT_FALSE(m.records()[1].acked());
  EXPECT_EQ(m.records()[1].key, std::optional<std::string>("k"));
  EXPECT_EQ(m.producers(), (std::vector<std::string>{"p1"}));
  // p1-0 (offset 0): send, two appends, ack, its removal by broker 1's truncation.
  std::vector<std::string> evs;
  for (uint32_t i : m.records()[0].events) evs.push_back(m.events()[i].ev);
  EXPECT_EQ(evs, (std::vector<std::string>{"send", "append", "append", "ack", "truncate"}));
  EXPECT_EQ(m.NextEvent(0, EventKind::kFault), std::optional<TimeUs>(100));
  EXPECT_EQ(m.PreviousEvent(100, EventKind::kElection), std::optional<TimeUs>(20));
  EXPECT_EQ(m.events()[m.FirstEventAtOrAfter(100)].summary, "broker-1 crashed");
}

// The run's release, from the trace header: the brokers' and each client of another release.
TEST(TimelineModelTest, KafkaVersionLabelComesFromTheHeader) {
  Result<TimelineModel> old = testing::BuildHandTrace("");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->KafkaVersionLabel(), "Kafka ?");
  Result<sim::Trace> trace = sim::ParseTrace(
      R"({"ksim_trace":1,"scenario":"hand","variant":"base","seed":1,"level":"state",)"
      R"("kafka_version":"0.10.0","client_kafka_versions":{"c1":"2.0","p1":"0.11.0"}})"
      "\n" +
          std::string(testing::kHandVerdict),
      "hand.jsonl");
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  Result<TimelineModel> model = TimelineModel::Build(*trace, "hand.jsonl");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(model->KafkaVersionLabel(), "Kafka 0.10.0 (c1 2.0, p1 0.11.0)");
}

TEST(TimelineModelTest, OffsetOutOfRangeEmptiesTheLogAndRestartsIt) {
  const std::string body =
      std::string(kSmall) +
      R"({"t_us":700,"node":"broker-2","ev":"truncate","topic":"t","partition":0,"from_leo":2,"to":5,"records":2,"reason":"offset_out_of_range"}
)";
  Result<TimelineModel> built = BuildText(body);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  EXPECT_TRUE(built->LogAt(0, 2, 700).empty());
  EXPECT_EQ(built->StateAt(700).partitions[0].replica_states[1].log_start_offset, 5);
  EXPECT_EQ(built->StateAt(700).partitions[0].replica_states[1].leo, 5);
}

TEST(TimelineModelTest, VerdictAnomaliesAndAuditFillTheLedger) {
  const std::string verdict =
      R"({"t_us":900,"node":"checker","ev":"verdict","ok":false,"metrics":{"sent":2,"lost_acked":1},"expectations":[{"metric":"lost_acked","expected":"0","actual":1,"ok":false}],"anomalies":[{"kind":"lost_acked","record_id":"p1-0","topic":"t","partition":0,"offset":0,"cause":"unclean election","cause_t_us":200}],"audit":[{"topic":"t","partition":0,"leader":2,"leader_epoch":1,"log_start_offset":0,"high_watermark":2,"log_end_offset":2,"isr":[2],"values":["b","b"]}]})"
      "\n";
  Result<TimelineModel> built = BuildText(kSmall, verdict);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  const TimelineModel& m = *built;
  EXPECT_FALSE(m.ok());
  ASSERT_EQ(m.expectations().size(), 1u);
  EXPECT_EQ(m.expectations()[0].expected, "0");
  EXPECT_TRUE(m.records()[0].lost());
  EXPECT_EQ(m.records()[1].final_copies, 2);
  EXPECT_TRUE(m.records()[1].duplicated());
  ASSERT_EQ(m.anomalies().size(), 1u);
  EXPECT_EQ(m.anomalies()[0].record, 0);
  EXPECT_EQ(m.records()[0].anomalies, (std::vector<int32_t>{0}));
  EXPECT_EQ(m.NextEvent(150, EventKind::kAnomaly), std::optional<TimeUs>(200));
  // The anomaly event comes after the trace's events of its time, and time stays ordered.
  for (size_t i = 1; i < m.events().size(); ++i) {
    ASSERT_LE(m.events()[i - 1].t_us, m.events()[i].t_us);
  }
}

TEST(TimelineModelTest, MalformedEventsAreCorruptionNamingFileAndLine) {
  // Line 2 (after the header) is the first event.
  const char* no_values =
      R"({"t_us":30,"node":"broker-1","ev":"become_leader","topic":"t","partition":0,"epoch":0,"isr":[1],"replicas":[1]}
{"t_us":50,"node":"broker-1","ev":"append","topic":"t","partition":0,"first_offset":0,"last_offset":0,"leo":1,"epoch":0,"role":"leader"}
)";
  Result<TimelineModel> a = BuildText(no_values);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Errc::kCorruption);
  EXPECT_NE(a.status().message().find("hand.jsonl:3:"), std::string::npos) << a.status().message();
  EXPECT_NE(a.status().message().find("values"), std::string::npos);

  const char* wrong_type =
      R"({"t_us":20,"node":"broker-1","ev":"leader_elected","topic":"t","partition":"zero","leader":1,"epoch":0,"isr":[1]}
)";
  Result<TimelineModel> b = BuildText(wrong_type);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), Errc::kCorruption);
  EXPECT_NE(b.status().message().find("hand.jsonl:2:"), std::string::npos) << b.status().message();

  const char* short_values =
      R"({"t_us":30,"node":"broker-1","ev":"become_leader","topic":"t","partition":0,"epoch":0,"isr":[1],"replicas":[1]}
{"t_us":50,"node":"broker-1","ev":"append","topic":"t","partition":0,"first_offset":0,"last_offset":3,"leo":4,"epoch":0,"role":"leader","values":["a",7]}
)";
  EXPECT_EQ(BuildText(short_values).status().code(), Errc::kCorruption);
  const char* bad_isr =
      R"({"t_us":30,"node":"broker-1","ev":"isr_shrink","topic":"t","partition":0,"isr":["1"]}
)";
  EXPECT_EQ(BuildText(bad_isr).status().code(), Errc::kCorruption);
  const char* bad_send = R"({"t_us":40,"node":"p1","ev":"send","record_id":4,"topic":"t"}
)";
  EXPECT_EQ(BuildText(bad_send).status().code(), Errc::kCorruption);
}

// ---- Shipped scenarios, run in process ---------------------------------------------------------

struct ShippedRun {
  sim::Trace trace;
  TimelineModel model;
};

std::optional<ShippedRun> RunShipped(const std::string& file, const std::string& variant,
                                     sim::TraceLevel level) {
  Result<sim::Scenario> loaded = sim::LoadScenario(ScenarioPath(file).string());
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (!loaded.ok()) return std::nullopt;
  const sim::Scenario* scenario = &*loaded;
  for (const sim::ScenarioVariant& v : loaded->variants) {
    if (v.name == variant) scenario = &v.scenario;
  }
  sim::RunOptions options;
  options.variant = variant;
  options.trace_level = level;
  options.keep_trace_bytes = true;
  Result<sim::RunResult> result = sim::RunScenario(*scenario, options);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  if (!result.ok()) return std::nullopt;
  Result<sim::Trace> trace = sim::ParseTrace(result->trace_bytes, file);
  EXPECT_TRUE(trace.ok()) << trace.status().ToString();
  if (!trace.ok()) return std::nullopt;
  Result<TimelineModel> model = TimelineModel::Build(*trace, file);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (!model.ok()) return std::nullopt;
  return ShippedRun{std::move(*trace), std::move(*model)};
}

int64_t Metric(const TimelineModel& m, const std::string& name) {
  for (const auto& [metric, value] : m.metrics()) {
    if (metric == name) return value;
  }
  ADD_FAILURE() << "no metric " << name;
  return -1;
}

// The reference, read from the trace's JSON by the test itself: per partition the last
// leader_elected / isr change, per (partition, broker) the last hw, per broker crash/restart.
struct Reference {
  std::map<std::string, int64_t> leader, epoch;
  std::map<std::string, std::vector<int32_t>> isr;
  std::map<std::string, int64_t> hw;  // "t-0@2"
  std::map<std::string, std::string> status;
};

void Advance(Reference& ref, const sim::TraceEvent& e) {
  const auto& f = e.fields;
  auto tp = [&f] {
    return f.at("topic").get<std::string>() + "-" + std::to_string(f.at("partition").get<int>());
  };
  if (e.ev == "leader_elected") {
    ref.leader[tp()] = f.at("leader").get<int64_t>();
    ref.epoch[tp()] = f.at("epoch").get<int64_t>();
    ref.isr[tp()] = f.at("isr").get<std::vector<int32_t>>();
  } else if (e.ev == "become_leader") {
    ref.leader[tp()] = std::stoi(e.node.substr(7));
    ref.epoch[tp()] = f.at("epoch").get<int64_t>();
    ref.isr[tp()] = f.at("isr").get<std::vector<int32_t>>();
  } else if (e.ev == "isr_shrink" || e.ev == "isr_expand") {
    ref.isr[tp()] = f.at("isr").get<std::vector<int32_t>>();
  } else if (e.ev == "partition_offline") {
    ref.leader[tp()] = -1;
    ref.isr[tp()] = f.value("isr", std::vector<int32_t>{});
  }
  if ((e.ev == "become_leader" || e.ev == "become_follower") && f.contains("hw")) {
    ref.hw[tp() + "@" + e.node.substr(7)] = f.at("hw").get<int64_t>();
  }
  if (e.ev == "hw" && e.node.starts_with("broker-")) {
    ref.hw[tp() + "@" + e.node.substr(7)] = f.at("hw").get<int64_t>();
  } else if ((e.ev == "crash" || e.ev == "restart" || e.ev == "shutdown") &&
             e.node.starts_with("broker-")) {
    ref.status[e.node] = e.ev;
  }
}

void ExpectMatches(const Reference& ref, const Snapshot& s, TimeUs t) {
  for (const PartitionView& p : s.partitions) {
    const std::string tp = p.topic + "-" + std::to_string(p.partition);
    if (ref.leader.contains(tp)) {
      EXPECT_EQ(p.leader, ref.leader.at(tp)) << tp << " at " << t;
      if (p.leader >= 0) {
        EXPECT_EQ(p.leader_epoch, ref.epoch.at(tp)) << tp << " at " << t;
      }
    }
    if (ref.isr.contains(tp)) {
      EXPECT_EQ(p.isr, ref.isr.at(tp)) << tp << " at " << t;
    }
    for (const ReplicaView& r : p.replica_states) {
      const std::string key = tp + "@" + std::to_string(r.broker);
      if (ref.hw.contains(key)) {
        EXPECT_EQ(r.hw, ref.hw.at(key)) << key << " at " << t;
      }
    }
  }
  for (const BrokerView& b : s.brokers) {
    auto it = ref.status.find(b.node);
    const NodeStatus expected = it == ref.status.end() || it->second == "restart"
                                    ? NodeStatus::kAlive
                                : it->second == "crash" ? NodeStatus::kCrashed
                                                        : NodeStatus::kShutDown;
    EXPECT_EQ(b.status, expected) << b.node << " at " << t;
    for (const PartitionView& p : s.partitions) {
      for (const ReplicaView& r : p.replica_states) {
        if (r.broker == b.id) {
          EXPECT_EQ(r.online, expected == NodeStatus::kAlive);
        }
      }
    }
  }
}

TEST(TimelineModelTest, DeliverySemanticsVariantsMatchTheirTraceAndVerdict) {
  for (const std::string variant : {"at-most-once", "at-least-once", "exactly-once"}) {
    SCOPED_TRACE(variant);
    std::optional<ShippedRun> run =
        RunShipped("teaching/delivery-semantics.json", variant, sim::TraceLevel::kMessages);
    ASSERT_TRUE(run.has_value());
    const TimelineModel& m = run->model;
    ASSERT_GT(m.events().size(), TimelineModel::kCheckpointEvents);  // checkpoints are used

    // The state right after every event time (sampled) equals the trace's own account.
    Reference ref;
    size_t i = 0;
    const auto& events = run->trace.events;
    int checked = 0;
    while (i < events.size()) {
      const TimeUs t = events[i].t_us;
      while (i < events.size() && events[i].t_us == t) Advance(ref, events[i++]);
      const bool interesting = events[i - 1].ev == "crash" || events[i - 1].ev == "restart" ||
                               events[i - 1].ev == "leader_elected" || i % 53 == 0;
      if (!interesting) continue;
      ExpectMatches(ref, m.StateAt(t), t);
      ++checked;
      if (::testing::Test::HasFailure()) return;
    }
    EXPECT_GT(checked, 20);

    // At the end each audited leader's log, cell by cell, is the verdict's audit.
    const auto& audit = run->trace.verdict.fields.at("audit");
    ASSERT_FALSE(audit.empty());
    for (const auto& entry : audit) {
      const int32_t p = m.PartitionIndex(entry.at("topic").get<std::string>(),
                                         entry.at("partition").get<int32_t>());
      ASSERT_GE(p, 0);
      const int32_t leader = entry.at("leader").get<int32_t>();
      const int64_t lso = entry.at("log_start_offset").get<int64_t>();
      const int64_t hw = entry.at("high_watermark").get<int64_t>();
      std::vector<std::string> values;
      for (const Cell& c : m.LogAt(p, leader, m.end_us())) {
        if (c.offset < lso || c.offset >= hw) continue;
        values.push_back(c.record >= 0 ? m.records()[c.record].value : "<foreign>");
      }
      std::vector<std::string> expected;
      for (const auto& v : entry.at("values")) {
        expected.push_back(v.is_string() ? v.get<std::string>() : "<foreign>");
      }
      EXPECT_EQ(values, expected) << entry.at("topic") << "-" << entry.at("partition");
      const Snapshot end = m.StateAt(m.end_us());
      EXPECT_EQ(end.partitions[p].leader, leader);
    }

    // The ledger's counts equal the checker's.
    int64_t lost = 0, duplicated = 0, acked = 0;
    for (const LedgerRecord& r : m.records()) {
      lost += r.lost();
      duplicated += r.duplicated();
      acked += r.acked();
    }
    EXPECT_EQ(static_cast<int64_t>(m.records().size()), Metric(m, "sent"));
    EXPECT_EQ(acked, Metric(m, "acked"));
    EXPECT_EQ(lost, Metric(m, "lost_acked"));
    EXPECT_EQ(duplicated, Metric(m, "duplicated"));

    // Messages: every one joined, in send order, none delivered before sent.
    ASSERT_TRUE(m.has_messages());
    ASSERT_FALSE(m.messages().empty());
    for (size_t k = 1; k < m.messages().size(); ++k) {
      ASSERT_LE(m.messages()[k - 1].sent_us, m.messages()[k].sent_us);
    }
    for (const Message& msg : m.messages()) {
      ASSERT_GE(msg.from, 0);
      ASSERT_GE(msg.to, 0);
      if (msg.delivered_us >= 0) {
        ASSERT_GE(msg.delivered_us, msg.sent_us);
      }
    }
    // MessagesBetween finds exactly the messages a scan finds.
    const TimeUs begin = m.end_us() / 3, end = begin + 200'000;
    size_t scanned = 0;
    for (const Message& msg : m.messages()) {
      const TimeUs done = msg.delivered_us >= 0 ? msg.delivered_us
                          : msg.dropped_us >= 0 ? msg.dropped_us
                                                : kNever;
      scanned += msg.sent_us <= end && done >= begin;
    }
    EXPECT_EQ(m.MessagesBetween(begin, end, 1'000'000).size(), scanned);
  }
}

// Every partition `scratch` knows has the same state in `full`.
bool SamePartitions(const std::vector<PartitionView>& full,
                    const std::vector<PartitionView>& scratch) {
  for (const PartitionView& b : scratch) {
    auto it = std::find_if(full.begin(), full.end(), [&b](const PartitionView& a) {
      return a.topic == b.topic && a.partition == b.partition;
    });
    if (it == full.end()) return false;
    const PartitionView& a = *it;
    if (a.leader != b.leader || a.leader_epoch != b.leader_epoch || a.isr != b.isr ||
        a.elections != b.elections) {
      return false;
    }
    for (const ReplicaView& y : b.replica_states) {
      auto x = std::find_if(a.replica_states.begin(), a.replica_states.end(),
                            [&y](const ReplicaView& r) { return r.broker == y.broker; });
      if (x == a.replica_states.end()) return false;
      if (x->leo != y.leo || x->hw != y.hw || x->epoch != y.epoch || x->online != y.online ||
          x->leader != y.leader || x->in_isr != y.in_isr ||
          x->log_start_offset != y.log_start_offset) {
        return false;
      }
    }
  }
  return true;
}

// StateAt through a checkpoint equals a replay from scratch: the model of the trace cut at t
// (every event up to t, replayed in one go) ends in the same state.
TEST(TimelineModelTest, CheckpointsEqualReplayFromScratch) {
  std::optional<ShippedRun> run =
      RunShipped("teaching/delivery-semantics.json", "at-least-once", sim::TraceLevel::kState);
  ASSERT_TRUE(run.has_value());
  const TimelineModel& m = run->model;
  ASSERT_GT(m.events().size(), TimelineModel::kCheckpointEvents);
  for (size_t k = 1; k < 12; ++k) {
    const TimeUs t = m.events()[k * m.events().size() / 12].t_us;
    sim::Trace cut;
    cut.header = run->trace.header;
    for (const sim::TraceEvent& e : run->trace.events) {
      if (e.t_us <= t) cut.events.push_back(e);
    }
    cut.verdict = run->trace.verdict;
    cut.verdict.fields.erase("anomalies");
    cut.verdict.fields.erase("audit");
    Result<TimelineModel> scratch = TimelineModel::Build(cut, "cut");
    ASSERT_TRUE(scratch.ok()) << scratch.status().ToString();
    const Snapshot at = m.StateAt(t);
    EXPECT_TRUE(SamePartitions(at.partitions, scratch->partitions())) << "at " << t;
    const Snapshot scratch_end = scratch->StateAt(t);
    for (const BrokerView& y : scratch_end.brokers) {
      const BrokerView* x = at.FindBroker(y.id);
      ASSERT_NE(x, nullptr);
      EXPECT_EQ(x->status, y.status) << y.node << " at " << t;
      EXPECT_EQ(x->controller, y.controller) << y.node << " at " << t;
      EXPECT_EQ(x->zk_session, y.zk_session) << y.node << " at " << t;
      EXPECT_EQ(x->incarnation, y.incarnation) << y.node << " at " << t;
    }
    for (const PartitionView& p : scratch->partitions()) {
      const int32_t index = m.PartitionIndex(p.topic, p.partition);
      const int32_t scratch_index = scratch->PartitionIndex(p.topic, p.partition);
      for (int32_t broker : p.replicas) {
        const std::vector<Cell> x = m.LogAt(index, broker, t);
        const std::vector<Cell> y = scratch->LogAt(scratch_index, broker, t);
        ASSERT_EQ(x.size(), y.size()) << p.topic << "-" << p.partition << " @" << broker;
        for (size_t c = 0; c < x.size(); ++c) {
          EXPECT_EQ(x[c].offset, y[c].offset);
          EXPECT_EQ(x[c].record, y[c].record);
        }
      }
    }
  }
}

}  // namespace
}  // namespace ksim::viz
