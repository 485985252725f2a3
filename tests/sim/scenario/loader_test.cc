// The scenario loader (sim/scenario/loader.h): DESIGN's example loads with every field; each kind
// of error is reported with the file and its line:column or JSON path and what would be valid;
// misspelt keys get "did you mean"; variants merge (RFC 7386) and are validated; defaults are
// Kafka 0.10's; the key table and docs/scenario.schema.json agree.
#include "sim/scenario/loader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/scenario/cli.h"
#include "sim/scenario/keys.h"
#include "tests/support/core/temp_dir.h"

namespace ksim::sim {
namespace {

// DESIGN's example, with its "a|b" placeholders replaced by one valid choice each.
constexpr std::string_view kFullScenario = R"({
  "ksim": 1,
  "name": "unclean-election-loses-acked-writes",
  "description": "Markdown shown in the viewer: what to watch for.",
  "seed": 7,
  "duration_ms": 60000,
  "cluster": {
    "brokers": 3,
    "config": { "unclean.leader.election.enable": true, "replica.lag.time.max.ms": 10000 },
    "broker_config": { "2": { "log.flush.interval.messages": 1 } },
    "zookeeper": { "session.timeout.ms": 6000 },
    "network": { "latency_ms": [1, 5], "links": [ { "between": ["broker-1", "broker-3"], "latency_ms": [20, 40], "loss": 0.01 } ] },
    "disk": { "write_latency_us": [20, 200], "fsync_latency_us": [1000, 5000] }
  },
  "policy": { "election": "unclean", "truncation": "leader-epoch" },
  "topics": { "t": { "partitions": 1, "replication_factor": 3, "config": { "min.insync.replicas": 2 },
                     "assignment": { "0": [1, 2, 3] } } },
  "clients": {
    "p1": { "type": "producer", "topic": "t", "messages": 1000, "rate_per_s": 100, "start_ms": 0,
            "key": null, "config": { "acks": "all", "retries": 3, "enable.idempotence": false } },
    "c1": { "type": "consumer", "topics": ["t"], "group": "g1", "start_ms": 0,
            "commit": "after-processing", "processing_ms": 2,
            "config": { "auto.offset.reset": "earliest" } }
  },
  "actions": [
    { "at_ms": 0,     "do": "cli", "command": "kafka-topics.sh --create --zookeeper hadoop01:2181 --replication-factor 3 --partitions 1 --topic frbook" },
    { "at_ms": 500,   "do": "cli", "command": "kafka-console-producer.sh --broker-list hadoop01:9092 --topic frbook", "input": ["hello java"] },
    { "at_ms": 10000, "do": "crash", "broker": 2 },
    { "at_ms": 12000, "do": "restart", "broker": 2 },
    { "at_ms": 15000, "do": "shutdown", "broker": 1 },
    { "at_ms": 20000, "do": "slow", "broker": 3, "fetch_delay_ms": 15000, "for_ms": 20000 },
    { "at_ms": 30000, "do": "partition", "sides": [["broker-1"], ["broker-2", "broker-3", "zk", "p1", "c1"]], "one_way": false },
    { "at_ms": 35000, "do": "heal" },
    { "at_ms": 40000, "do": "crash_replicas", "topic": "t", "partition": 0 },
    { "at_ms": 41000, "do": "disk_fault", "broker": 2, "kind": "eio" },
    { "at_ms": 42000, "do": "zk_expire", "broker": 1 },
    { "at_ms": 43000, "do": "produce", "client": "p1", "value": "hello java", "key": "user-7" },
    { "at_ms": 44000, "do": "crash", "leader_of": "t-0" }
  ],
  "final": { "heal": true, "restart_all": true, "drain_ms": 30000 },
  "expect": { "lost_acked": 0, "duplicated": { "max": 0 } },
  "variants": {
    "at-most-once":  { "clients": { "p1": { "config": { "acks": "0", "retries": 0 } } }, "expect": { "lost_unacked": { "min": 1 } } },
    "exactly-once":  { "clients": { "p1": { "config": { "enable.idempotence": true } } } }
  }
})";

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

// The error lines of parsing `text` as "s.json". REQUIRES (checked): it fails.
std::vector<std::string> Errors(std::string_view text) {
  Result<Scenario> result = ParseScenario(text, "s.json");
  EXPECT_FALSE(result.ok()) << "expected errors";
  if (result.ok()) return {};
  EXPECT_EQ(result.status().code(), Errc::kInvalidConfig);
  return Lines(result.status().message());
}

// A minimal valid scenario with `extra` members added at the top level.
std::string With(std::string_view extra) {
  return R"({"ksim": 1, "name": "x", )" + std::string(extra) + "}";
}

constexpr std::string_view kProducerClients =
    R"("topics": {"t": {"partitions": 2, "replication_factor": 3}},
       "clients": {"p1": {"type": "producer", "topic": "t"},
                   "c1": {"type": "consumer", "topics": ["t"], "group": "g"}})";

TEST(ScenarioLoaderTest, DesignExampleLoadsWithEveryField) {
  Result<Scenario> result = ParseScenario(kFullScenario, "full.json");
  ASSERT_TRUE(result.ok()) << result.status().message();
  const Scenario& s = *result;
  EXPECT_EQ(s.file, "full.json");
  EXPECT_EQ(s.name, "unclean-election-loses-acked-writes");
  EXPECT_EQ(s.description, "Markdown shown in the viewer: what to watch for.");
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.duration_ms, 60000);
  // cluster
  EXPECT_EQ(s.cluster.brokers, 3);
  const ConfigOverrides cluster_config = {{"unclean.leader.election.enable", "true"},
                                          {"replica.lag.time.max.ms", "10000"}};
  EXPECT_EQ(s.cluster.config, cluster_config);
  ASSERT_EQ(s.cluster.broker_config.size(), 1u);
  EXPECT_EQ(s.cluster.broker_config[0].first, 2);
  EXPECT_EQ(s.cluster.broker_config[0].second,
            (ConfigOverrides{{"log.flush.interval.messages", "1"}}));
  EXPECT_EQ(s.cluster.zookeeper.session_timeout_ms, 6000);
  EXPECT_EQ(s.cluster.network.latency_ms, (RangeMs{1, 5}));
  ASSERT_EQ(s.cluster.network.links.size(), 1u);
  const LinkOverride& link = s.cluster.network.links[0];
  EXPECT_EQ(link.a, "broker-1");
  EXPECT_EQ(link.b, "broker-3");
  EXPECT_EQ(link.latency_ms, (RangeMs{20, 40}));
  EXPECT_EQ(link.loss_ppm, 10000u);
  EXPECT_EQ(s.cluster.disk.write_latency_us, (RangeMs{20, 200}));
  EXPECT_EQ(s.cluster.disk.fsync_latency_us, (RangeMs{1000, 5000}));
  // policy, topics
  EXPECT_EQ(s.policy.election, "unclean");
  EXPECT_EQ(s.policy.truncation, "leader-epoch");
  ASSERT_EQ(s.topics.size(), 1u);
  EXPECT_EQ(s.topics[0].name, "t");
  EXPECT_EQ(s.topics[0].partitions, 1);
  EXPECT_EQ(s.topics[0].replication_factor, 3);
  EXPECT_EQ(s.topics[0].config, (ConfigOverrides{{"min.insync.replicas", "2"}}));
  const std::vector<BrokerId> replicas = {BrokerId(1), BrokerId(2), BrokerId(3)};
  EXPECT_EQ(s.topics[0].assignment.at(PartitionId(0)), replicas);
  // clients, in the order written
  ASSERT_EQ(s.clients.size(), 2u);
  const ClientSpec& p1 = s.clients[0];
  EXPECT_EQ(p1.id, "p1");
  EXPECT_EQ(p1.type, ClientType::kProducer);
  EXPECT_EQ(p1.topic, "t");
  EXPECT_EQ(p1.messages, 1000);
  EXPECT_EQ(p1.rate_per_s, 100);
  EXPECT_FALSE(p1.key.has_value());
  EXPECT_EQ(p1.config,
            (ConfigOverrides{{"acks", "all"}, {"retries", "3"}, {"enable.idempotence", "false"}}));
  const ClientSpec& c1 = s.clients[1];
  EXPECT_EQ(c1.type, ClientType::kConsumer);
  EXPECT_EQ(c1.topics, std::vector<std::string>{"t"});
  EXPECT_EQ(c1.group, "g1");
  EXPECT_EQ(c1.commit, CommitKind::kAfterProcessing);
  EXPECT_EQ(c1.processing_ms, 2);
  EXPECT_EQ(c1.config, (ConfigOverrides{{"auto.offset.reset", "earliest"}}));
  // actions
  ASSERT_EQ(s.actions.size(), 13u);
  std::vector<std::string_view> kinds;
  for (const Action& action : s.actions) kinds.push_back(ActionName(action.what));
  EXPECT_EQ(kinds, (std::vector<std::string_view>{"cli", "cli", "crash", "restart", "shutdown",
                                                  "slow", "partition", "heal", "crash_replicas",
                                                  "disk_fault", "zk_expire", "produce", "crash"}));
  const auto& create = std::get<CliAction>(s.actions[0].what).parsed;
  EXPECT_EQ(create.tool, CliCommand::Tool::kTopics);
  EXPECT_EQ(create.action, CliCommand::TopicsAction::kCreate);
  EXPECT_EQ(create.zookeeper, "hadoop01:2181");
  EXPECT_EQ(create.topic, "frbook");
  EXPECT_EQ(create.partitions, 1);
  EXPECT_EQ(create.replication_factor, 3);
  const auto& console = std::get<CliAction>(s.actions[1].what);
  EXPECT_EQ(console.parsed.tool, CliCommand::Tool::kConsoleProducer);
  EXPECT_EQ(console.parsed.broker_list, "hadoop01:9092");
  EXPECT_EQ(console.input, std::vector<std::string>{"hello java"});
  EXPECT_EQ(std::get<CrashAction>(s.actions[2].what).target.broker, 2);
  EXPECT_EQ(s.actions[2].at_ms, 10000);
  const auto& slow = std::get<SlowAction>(s.actions[5].what);
  EXPECT_EQ(slow.target.broker, 3);
  EXPECT_EQ(slow.fetch_delay_ms, 15000);
  EXPECT_EQ(slow.for_ms, 20000);
  const auto& partition = std::get<PartitionAction>(s.actions[6].what);
  ASSERT_EQ(partition.sides.size(), 2u);
  EXPECT_EQ(partition.sides[1],
            (std::vector<std::string>{"broker-2", "broker-3", "zk", "p1", "c1"}));
  EXPECT_FALSE(partition.one_way);
  EXPECT_EQ(std::get<CrashReplicasAction>(s.actions[8].what).topic, "t");
  EXPECT_EQ(std::get<DiskFaultAction>(s.actions[9].what).kind, DiskFaultKind::kEio);
  const auto& produce = std::get<ProduceAction>(s.actions[11].what);
  EXPECT_EQ(produce.client, "p1");
  EXPECT_EQ(produce.value, "hello java");
  EXPECT_EQ(produce.key, "user-7");
  const Target& leader = std::get<CrashAction>(s.actions[12].what).target;
  EXPECT_EQ(leader.kind, Target::Kind::kLeaderOf);
  EXPECT_EQ(leader.topic, "t");
  EXPECT_EQ(leader.partition, 0);
  // final, expect
  EXPECT_TRUE(s.final_phase.heal);
  EXPECT_TRUE(s.final_phase.restart_all);
  EXPECT_EQ(s.final_phase.drain_ms, 30000);
  ASSERT_EQ(s.expect.size(), 2u);
  EXPECT_EQ(s.expect[0].metric, "lost_acked");
  EXPECT_EQ(s.expect[0].exact, 0);
  EXPECT_EQ(s.expect[1].metric, "duplicated");
  EXPECT_FALSE(s.expect[1].min.has_value());
  EXPECT_EQ(s.expect[1].max, 0);
  // variants: merged over the base, in the order written
  ASSERT_EQ(s.variants.size(), 2u);
  EXPECT_EQ(s.variants[0].name, "at-most-once");
  const Scenario& at_most_once = s.variants[0].scenario;
  EXPECT_EQ(at_most_once.clients[0].config,
            (ConfigOverrides{{"acks", "0"}, {"retries", "0"}, {"enable.idempotence", "false"}}));
  ASSERT_EQ(at_most_once.expect.size(), 3u);
  EXPECT_EQ(at_most_once.expect[2].metric, "lost_unacked");
  EXPECT_EQ(at_most_once.expect[2].min, 1);
  EXPECT_EQ(at_most_once.actions.size(), 13u);
  EXPECT_TRUE(at_most_once.variants.empty());
  const Scenario& exactly_once = s.variants[1].scenario;
  EXPECT_EQ(exactly_once.clients[0].config[2],
            (std::pair<std::string, std::string>{"enable.idempotence", "true"}));
  EXPECT_EQ(exactly_once.expect.size(), 2u);
}

TEST(ScenarioLoaderTest, DefaultsAreKafka010s) {
  Result<Scenario> result = ParseScenario(
      With(R"("topics": {"t": {}}, "clients": {"c": {"type": "consumer", "topics": ["t"]}})"),
      "m.json");
  ASSERT_TRUE(result.ok()) << result.status().message();
  const Scenario& s = *result;
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(s.duration_ms, 60000);
  EXPECT_EQ(s.cluster.brokers, 3);
  EXPECT_TRUE(s.cluster.config.empty());
  EXPECT_EQ(s.cluster.zookeeper.tick_time_ms, 2000);
  EXPECT_FALSE(s.cluster.zookeeper.session_timeout_ms.has_value());
  EXPECT_EQ(s.cluster.network.latency_ms, (RangeMs{1, 5}));
  EXPECT_EQ(s.cluster.network.loss_ppm, 0u);
  EXPECT_EQ(s.policy.election, "");    // Kafka's own: unclean.leader.election.enable (true)
  EXPECT_EQ(s.policy.truncation, "");  // the release's: high-watermark at 0.10.0
  EXPECT_EQ(s.TruncationPolicyName(), "high-watermark");
  // num.partitions = 1, default.replication.factor = 1.
  EXPECT_EQ(s.topics[0].partitions, 1);
  EXPECT_EQ(s.topics[0].replication_factor, 1);
  EXPECT_TRUE(s.topics[0].assignment.empty());
  EXPECT_EQ(s.clients[0].commit, CommitKind::kAuto);
  EXPECT_EQ(s.clients[0].group, "");
  EXPECT_EQ(s.clients[0].processing_ms, 0);
  EXPECT_TRUE(s.final_phase.heal);
  EXPECT_TRUE(s.final_phase.restart_all);
  EXPECT_EQ(s.final_phase.drain_ms, 30000);
  EXPECT_TRUE(s.actions.empty());
  EXPECT_TRUE(s.variants.empty());
}

TEST(ScenarioLoaderTest, SyntaxErrorNamesLineAndColumn) {
  const std::vector<std::string> errors = Errors("{\n  \"ksim\": 1,\n  \"name\": \"x\",,\n}");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_TRUE(errors[0].starts_with("s.json:3:15: syntax error while parsing object key"))
      << errors[0];
  EXPECT_EQ(Errors("")[0].substr(0, 11), "s.json:1:1:");
  EXPECT_TRUE(Errors("{\"ksim\": 1,\n\"name\": \"x\"")[0].starts_with("s.json:2:12: "))
      << Errors("{\"ksim\": 1,\n\"name\": \"x\"")[0];
}

TEST(ScenarioLoaderTest, NotAnObjectOrWrongVersion) {
  EXPECT_EQ(Errors("[1]"), std::vector<std::string>{
                               "s.json:/: expected a scenario (a JSON object), got an array"});
  EXPECT_EQ(Errors(R"({"ksim": 2, "name": "x"})"),
            std::vector<std::string>{
                "s.json:/ksim: unsupported format version 2 (this ksim reads \"ksim\": 1)"});
  EXPECT_EQ(Errors(R"({"name": "x"})"), std::vector<std::string>{"s.json:/ksim: required"});
}

TEST(ScenarioLoaderTest, AcksIsRefusedWithKafkasConfigException) {
  const std::string text = With(R"("topics": {"t": {}},
      "clients": {"p1": {"type": "producer", "topic": "t", "config": {"acks": "2x"}}})");
  EXPECT_EQ(Errors(text), std::vector<std::string>{
                              "s.json:/clients/p1/config/acks: Invalid value 2x for configuration "
                              "acks: String must be one of: all, -1, 0, 1"});
  // The seed's acks=2 (0.8.1's N replicas) is refused by every modelled release's producer
  // (ProducerConfig's ValidString.in at 0.10.0.1), as a string or a JSON number.
  for (const char* acks : {"2", "\"2\"", "\"3\""}) {
    const std::vector<std::string> errors =
        Errors(With(std::string(R"("topics": {"t": {}}, "clients": {"p1": {"type": "producer",
      "topic": "t", "config": {"acks": )") +
                    acks + "}}}"));
    ASSERT_EQ(errors.size(), 1u) << acks;
    EXPECT_TRUE(errors[0].starts_with("s.json:/clients/p1/config/acks: Invalid value "))
        << errors[0];
    EXPECT_TRUE(
        errors[0].ends_with(" for configuration acks: String must be one of: all, -1, 0, 1"))
        << errors[0];
  }
  EXPECT_EQ(Errors(With(R"("kafka_version": "2.0", "topics": {"t": {}}, "clients": {"p1": {
      "type": "producer", "topic": "t", "config": {"acks": 2}}})")),
            std::vector<std::string>{"s.json:/clients/p1/config/acks: Invalid value 2 for "
                                     "configuration acks: String must be one of: all, -1, 0, 1"});
}

TEST(ScenarioLoaderTest, IdempotenceBefore011IsOnlyAWarningAtRunTime) {
  // KafkaProducer 0.10 does not know enable.idempotence: it warns and goes on, so the scenario
  // loads; its settings are checked from 0.11.0 on (0.11.0: one request in flight).
  const std::string clients = R"("topics": {"t": {}}, "clients": {"p1": {"type": "producer",
      "topic": "t", "config": {"enable.idempotence": true, "acks": "1",
      "max.in.flight.requests.per.connection": 2}}})";
  Result<Scenario> loaded = ParseScenario(With(clients), "s.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(
      Errors(With(R"("kafka_version": "0.11.0", )" + std::string(clients))),
      (std::vector<std::string>{
          "s.json:/clients/p1/config: Must set max.in.flight.requests.per.connection to 1 in "
          "orderto use the idempotent producer. Otherwise we cannot guarantee idempotence."}));
  EXPECT_EQ(Errors(With(R"("kafka_version": "1.0", )" + std::string(clients))),
            (std::vector<std::string>{
                "s.json:/clients/p1/config: Must set acks to all in order to use the idempotent "
                "producer. Otherwise we cannot guarantee idempotence."}));
}

TEST(ScenarioLoaderTest, ClientConfigErrorsAreKafkasAtTheirKey) {
  // At 1.0, whose producer knows enable.idempotence.
  std::vector<std::string> errors = Errors(With(R"("kafka_version": "1.0", "topics": {"t": {}},
      "clients": {
      "p1": {"type": "producer", "topic": "t", "config": {"retries": "many"}},
      "p2": {"type": "producer", "topic": "t", "config": {"enable.idempotence": true, "acks": "1"}},
      "c1": {"type": "consumer", "topics": ["t"], "config": {"auto.offset.reset": "oldest"}}})"));
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_TRUE(errors[0].starts_with(
      "s.json:/clients/p1/config/retries: Invalid value many for configuration retries"))
      << errors[0];
  EXPECT_EQ(errors[1],
            "s.json:/clients/p2/config: Must set acks to all in order to use the idempotent "
            "producer. Otherwise we cannot guarantee idempotence.");
  EXPECT_TRUE(
      errors[2].starts_with("s.json:/clients/c1/config/auto.offset.reset: Invalid value "
                            "oldest for configuration auto.offset.reset"))
      << errors[2];
}

TEST(ScenarioLoaderTest, MisspeltKeysGetDidYouMean) {
  std::vector<std::string> errors = Errors(With(R"(
      "cluster": {"brokerz": 3, "config": {"unclean.leader.election.enabel": false}},
      "topics": {"t": {"config": {"min.insync.replica": 2}}},
      "clients": {"p1": {"type": "producer", "tpoic": "t"}},
      "expect": {"lost_ackd": 0})"));
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "s.json:/cluster/brokerz: unknown key \"brokerz\": did you mean "
                        "\"brokers\"?",
                        "s.json:/cluster/config/unclean.leader.election.enabel: unknown broker "
                        "configuration \"unclean.leader.election.enabel\": did you mean "
                        "\"unclean.leader.election.enable\"?",
                        "s.json:/topics/t/config/min.insync.replica: unknown topic configuration "
                        "\"min.insync.replica\": did you mean \"min.insync.replicas\"?",
                        "s.json:/clients/p1/tpoic: unknown key \"tpoic\": did you mean \"topic\"?",
                        "s.json:/clients/p1/topic: required",
                        "s.json:/expect/lost_ackd: unknown metric \"lost_ackd\": did you mean "
                        "\"lost_acked\"?"}));
}

TEST(ScenarioLoaderTest, BadValuesNameTheirPathAndWhatIsValid) {
  std::vector<std::string> errors = Errors(With(R"(
      "seed": -1, "duration_ms": "long",
      "cluster": {"brokers": 0, "config": {"log.segment.bytes": "abc", "broker.id": 4},
                  "network": {"latency_ms": [5, 1], "loss": 2}},
      "policy": {"election": "uncleen", "truncation": "hw"},
      "final": {"heal": "yes"})"));
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "s.json:/seed: expected an integer from 0 to 18446744073709551615, got -1",
                        "s.json:/duration_ms: expected an integer from 1 to 9223372036854775, got "
                        "the string \"long\"",
                        "s.json:/cluster/brokers: expected an integer from 1 to 1000, got 0",
                        "s.json:/cluster/network/latency_ms: min 5 is greater than max 1",
                        "s.json:/cluster/network/loss: expected a probability from 0 to 1, got 2",
                        "s.json:/cluster/config/broker.id: set by the simulation for every broker "
                        "(broker.id = its id, log.dirs on its virtual disk, zookeeper.connect = "
                        "zk:2181, host.name = its node name); remove it",
                        "s.json:/cluster/config/log.segment.bytes: Invalid value abc for "
                        "configuration log.segment.bytes: Not a number of type INT (valid: an INT "
                        "of at least 14)",
                        "s.json:/policy/election: expected one of \"clean\", \"unclean\", "
                        "\"random-isr\", \"longest-log\", \"wait-for-last-isr\", got \"uncleen\": "
                        "did you mean \"unclean\"?",
                        "s.json:/policy/truncation: expected one of \"high-watermark\", "
                        "\"leader-epoch\", got \"hw\"",
                        "s.json:/final/heal: expected true or false, got the string \"yes\""}));
}

TEST(ScenarioLoaderTest, CrossReferencesAreChecked) {
  std::vector<std::string> errors = Errors(With(std::string(kProducerClients) + R"(,
      "cluster": {"broker_config": {"4": {}}},
      "actions": [
        {"at_ms": 1, "do": "crash", "broker": 5},
        {"at_ms": 2, "do": "crash", "leader_of": "t-2"},
        {"at_ms": 3, "do": "crash", "leader_of": "tt-0"},
        {"at_ms": 4, "do": "produce", "client": "c1", "value": "v"},
        {"at_ms": 5, "do": "restart", "client": "p2"},
        {"at_ms": 6, "do": "partition", "sides": [["broker-1"], ["broker-9", "broker-1"]]},
        {"at_ms": 7, "do": "crash_replicas", "topic": "t", "partition": 2},
        {"at_ms": 70000, "do": "heal"},
        {"at_ms": 8, "do": "slow", "broker": 1, "leader_of": "t-0", "fetch_delay_ms": 1, "for_ms": 1}
      ])"));
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "s.json:/cluster/broker_config/4: not a broker id: brokers are 1 to 3",
                        "s.json:/actions/0/broker: unknown broker 5: brokers are 1 to 3",
                        "s.json:/actions/1/leader_of: topic \"t\" has partitions 0 to 1, not 2",
                        "s.json:/actions/2/leader_of: unknown topic \"tt\": did you mean \"t\"?",
                        "s.json:/actions/3/client: \"c1\" is a consumer; produce needs a producer",
                        "s.json:/actions/4/client: unknown client \"p2\": did you mean \"p1\"?",
                        "s.json:/actions/5/sides/1/0: unknown node \"broker-9\": did you mean "
                        "\"broker-1\"?",
                        "s.json:/actions/5/sides/1/1: \"broker-1\" is on two sides",
                        "s.json:/actions/6/partition: expected an integer from 0 to 1, got 2",
                        "s.json:/actions/7/at_ms: expected an integer from 0 to 60000, got 70000",
                        "s.json:/actions/8: give only one of \"broker\" or \"leader_of\""}));
}

TEST(ScenarioLoaderTest, TopicsCreatedByTheCliAreKnown) {
  Result<Scenario> result = ParseScenario(With(R"(
      "clients": {"p1": {"type": "producer", "topic": "frbook"}},
      "actions": [
        {"at_ms": 9, "do": "crash", "leader_of": "frbook-4"},
        {"at_ms": 0, "do": "cli", "command": "bin/kafka-topics.sh --create --zookeeper h:2181 --replica-assignment 1:2,2:3,3:1,1:3,2:1 --topic frbook"}
      ])"),
                                          "s.json");
  ASSERT_TRUE(result.ok()) << result.status().message();
  // Sorted by time, ties in the order written; each keeps its index in the file.
  EXPECT_EQ(ActionName(result->actions[0].what), "cli");
  EXPECT_EQ(result->actions[0].index, 1u);
  EXPECT_EQ(result->actions[1].index, 0u);
}

TEST(ScenarioLoaderTest, CliCommandErrorsAreKafkasTools) {
  std::vector<std::string> errors = Errors(With(R"("actions": [
      {"at_ms": 0, "do": "cli", "command": "kafka-topics.sh --create --zookeeper h:2181 --partitions 1 --replication-factor 1"},
      {"at_ms": 0, "do": "cli", "command": "kafka-topics.sh --list --zookeper h:2181"},
      {"at_ms": 0, "do": "cli", "command": "kafka-console-producer.sh --topic t", "input": ["a"]},
      {"at_ms": 0, "do": "cli", "command": "kafka-console-consumer.sh --topic t"},
      {"at_ms": 0, "do": "cli", "command": "kafka-topics.sh --create --zookeeper h --topic t --partitions 1 --replication-factor 4"},
      {"at_ms": 0, "do": "cli", "command": "kafka-topics.sh --create --zookeeper h --topic u --partitions 1 --replication-factor 1 --config retention.mss=1"},
      {"at_ms": 0, "do": "cli", "command": "kafka-topics.sh --describe --zookeeper h", "input": ["a"]},
      {"at_ms": 0, "do": "cli", "command": "kafka-configs.sh --zookeeper h"}
    ])"));
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "s.json:/actions/0/command: Missing required argument \"[topic]\"",
                        "s.json:/actions/1/command: --zookeper is not a recognized option of "
                        "kafka-topics.sh (did you mean --zookeeper?)",
                        "s.json:/actions/2/command: Missing required argument \"[broker-list]\"",
                        "s.json:/actions/3/command: Exactly one of --zookeeper or "
                        "--bootstrap-server is required.",
                        "s.json:/actions/5/command/retention.mss: unknown topic configuration "
                        "\"retention.mss\": did you mean \"retention.ms\"?",
                        "s.json:/actions/6/input: only kafka-console-producer.sh and "
                        "kafka-preferred-replica-election.sh --path-to-json-file read input",
                        "s.json:/actions/7/command: unknown command 'kafka-configs.sh' (expected "
                        "kafka-topics.sh, kafka-console-producer.sh, kafka-console-consumer.sh "
                        "or kafka-preferred-replica-election.sh)"}));
}

TEST(ScenarioCliTest, ParsesTheSeedsCommandLines) {
  Result<CliCommand> create = ParseCliCommand(
      "kafka-topics.sh --create --zookeeper hadoop01:2181 --replication-factor 3 --partitions 1 "
      "--topic frbook --config min.insync.replicas=2 --config 'retention.ms=1000'");
  ASSERT_TRUE(create.ok()) << create.status().message();
  EXPECT_EQ(create->config,
            (ConfigOverrides{{"min.insync.replicas", "2"}, {"retention.ms", "1000"}}));
  Result<CliCommand> consumer = ParseCliCommand(
      "kafka-console-consumer.sh --zookeeper hadoop01:2181 --topic frbook --from-beginning");
  ASSERT_TRUE(consumer.ok()) << consumer.status().message();
  EXPECT_EQ(consumer->tool, CliCommand::Tool::kConsoleConsumer);
  EXPECT_TRUE(consumer->from_beginning);
  EXPECT_EQ(consumer->zookeeper, "hadoop01:2181");
  Result<CliCommand> new_consumer = ParseCliCommand(
      "kafka-console-consumer --bootstrap-server=h:9092 --topic t --group g --max-messages 3");
  ASSERT_TRUE(new_consumer.ok()) << new_consumer.status().message();
  EXPECT_EQ(new_consumer->bootstrap_server, "h:9092");
  EXPECT_EQ(new_consumer->group, "g");
  EXPECT_EQ(new_consumer->max_messages, 3);
  Result<CliCommand> list = ParseCliCommand("kafka-topics.sh --list --zookeeper h:2181");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->action, CliCommand::TopicsAction::kList);
  EXPECT_FALSE(list->topic.has_value());
  // The seed's own lines start with the shell that runs the script.
  Result<CliCommand> seed_line = ParseCliCommand(
      "sh kafka-topics.sh --create --zookeeper hadoop01:2181 --replication-factor 1 "
      "--partitions 1 --topic enbook");
  ASSERT_TRUE(seed_line.ok()) << seed_line.status().message();
  EXPECT_EQ(seed_line->tool, CliCommand::Tool::kTopics);
  EXPECT_EQ(seed_line->topic, "enbook");
  Result<CliCommand> bash_line =
      ParseCliCommand("/bin/bash bin/kafka-console-producer.sh --broker-list h:9092 --topic t");
  ASSERT_TRUE(bash_line.ok()) << bash_line.status().message();
  EXPECT_EQ(bash_line->tool, CliCommand::Tool::kConsoleProducer);
  // A shell alone is not a tool.
  EXPECT_FALSE(ParseCliCommand("sh").ok());
}

TEST(ScenarioLoaderTest, CliReplicationFactorAboveTheBrokerCountIsAWarning) {
  // The seed's own example: valid (it is refused when it runs, with Kafka's message), so the
  // loader warns; a variant with four brokers has no warning, one with two has its own.
  Result<Scenario> result = ParseScenario(With(R"("actions": [
      {"at_ms": 0, "do": "cli", "command": "kafka-topics.sh --create --zookeeper h --topic t --partitions 1 --replication-factor 4"}],
      "variants": {"four": {"cluster": {"brokers": 4}}, "two": {"cluster": {"brokers": 2}}})"),
                                          "s.json");
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->warnings,
            (std::vector<std::string>{
                "s.json:/actions/0/command: replication factor 4 is more than the scenario's 3 "
                "brokers: the command will be refused (\"Error while executing topic command : "
                "replication factor: 4 larger than available brokers: 3\")",
                "s.json:/variants/two/actions/0/command: replication factor 4 is more than the "
                "scenario's 2 brokers: the command will be refused (\"Error while executing topic "
                "command : replication factor: 4 larger than available brokers: 2\")"}));
  Result<Scenario> fits = ParseScenario(With(R"("actions": [
      {"at_ms": 0, "do": "cli", "command": "kafka-topics.sh --create --zookeeper h --topic t --partitions 1 --replication-factor 3"}])"),
                                        "s.json");
  ASSERT_TRUE(fits.ok()) << fits.status().message();
  EXPECT_TRUE(fits->warnings.empty());
}

TEST(ScenarioCliTest, ParsesPreferredReplicaElection) {
  Result<CliCommand> all =
      ParseCliCommand("bin/kafka-preferred-replica-election.sh --zookeeper hadoop01:2181");
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_EQ(all->tool, CliCommand::Tool::kPreferredReplicaElection);
  EXPECT_EQ(all->zookeeper, "hadoop01:2181");
  EXPECT_FALSE(all->json_file.has_value());
  Result<CliCommand> file = ParseCliCommand(
      "kafka-preferred-replica-election --zookeeper h:2181 --path-to-json-file p.json");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->json_file, "p.json");
  Result<CliCommand> missing = ParseCliCommand("kafka-preferred-replica-election.sh");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "Missing required argument \"[zookeeper]\"");
  // The file's contents are the action's input; input without the option is refused.
  Result<Scenario> with_input = ParseScenario(With(R"("actions": [
      {"at_ms": 0, "do": "cli", "command": "kafka-preferred-replica-election.sh --zookeeper h --path-to-json-file p.json",
       "input": ["{\"partitions\": [{\"topic\": \"t\", \"partition\": 0}]}"]}])"),
                                              "s.json");
  ASSERT_TRUE(with_input.ok()) << with_input.status().message();
  EXPECT_EQ(Errors(With(R"("actions": [
      {"at_ms": 0, "do": "cli", "command": "kafka-preferred-replica-election.sh --zookeeper h", "input": ["{}"]}])")),
            (std::vector<std::string>{"s.json:/actions/0/input: input is the contents of "
                                      "--path-to-json-file, which the command does not name"}));
}

TEST(ScenarioCliTest, RefusesWhatKafkasToolsRefuse) {
  auto message = [](std::string_view command) {
    Result<CliCommand> parsed = ParseCliCommand(command);
    EXPECT_FALSE(parsed.ok()) << command;
    return parsed.ok() ? std::string() : parsed.status().message();
  };
  EXPECT_EQ(message("kafka-topics.sh --zookeeper h"),
            "Command must include exactly one action: --list, --describe, --create or --delete");
  EXPECT_EQ(message("kafka-topics.sh --list --delete --zookeeper h --topic t"),
            "Command must include exactly one action: --list, --describe, --create or --delete");
  EXPECT_EQ(message("kafka-topics.sh --delete --zookeeper h"),
            "Missing required argument \"[topic]\"");
  EXPECT_EQ(message("kafka-topics.sh --create --topic t --partitions 1 --replication-factor 1"),
            "Missing required argument \"[zookeeper]\"");
  EXPECT_EQ(message("kafka-topics.sh --create --zookeeper h --topic t --partitions x "
                    "--replication-factor 1"),
            "Cannot parse argument 'x' of option partitions");
  EXPECT_EQ(message("kafka-topics.sh --create --zookeeper h --topic t --partitions 0 "
                    "--replication-factor 1"),
            "Number of partitions must be larger than 0.");
  EXPECT_EQ(message("kafka-topics.sh --create --zookeeper h --topic t --partitions 1"),
            "Missing required argument \"[replication-factor]\"");
  EXPECT_EQ(message("kafka-topics.sh --create --zookeeper h --topic t --partitions 1 "
                    "--replica-assignment 1:2"),
            "Option \"[replica-assignment]\" can't be used with option "
            "\"[partitions],[replication-factor]\"");
  EXPECT_EQ(message("kafka-topics.sh --create --zookeeper h --topic t --replica-assignment 1:1"),
            "Partition replica lists may not contain duplicate entries: 1");
  EXPECT_EQ(message("kafka-topics.sh --list --zookeeper"),
            "Option --zookeeper requires an argument");
  EXPECT_EQ(message("kafka-topics.sh --create --zookeeper h --topic t --partitions 1 "
                    "--replication-factor 1 --config retention.ms"),
            "Invalid topic config: all configs to be added must be in the format \"key=val\".");
  EXPECT_EQ(message("kafka-topics.sh --list --zookeeper 'h"), "unterminated ' quote");
  EXPECT_EQ(message("   "), "empty command");
}

TEST(ScenarioLoaderTest, VariantErrorsNameThePathInsideTheVariant) {
  std::vector<std::string> errors = Errors(With(std::string(kProducerClients) + R"(,
      "cluster": {"brokers": 3, "config": {"log.segment.bytes": "x"}},
      "variants": {
        "at-most-once": {"clients": {"p1": {"config": {"acks": "none"}}}},
        "one-broker": {"cluster": {"brokers": 1}},
        "base": {},
        "nested": {"variants": {}}
      })"));
  EXPECT_EQ(errors,
            (std::vector<std::string>{
                "s.json:/cluster/config/log.segment.bytes: Invalid value x for configuration "
                "log.segment.bytes: Not a number of type INT (valid: an INT of at least 14)",
                "s.json:/variants/at-most-once/clients/p1/config/acks: Invalid value none for "
                "configuration acks: String must be one of: all, -1, 0, 1",
                "s.json:/variants/one-broker/topics/t/replication_factor: "
                "INVALID_REPLICATION_FACTOR: replication factor 3 larger than available brokers 1",
                "s.json:/variants/base: \"base\" names the scenario itself; pick another name",
                "s.json:/variants/nested/variants: a variant cannot have variants of its own"}));
}

TEST(ScenarioLoaderTest, VariantNullRemovesAKey) {
  Result<Scenario> result = ParseScenario(
      With(std::string(kProducerClients) + R"(, "expect": {"lost_acked": 0, "acked": {"min": 1}},
          "variants": {"v": {"expect": {"lost_acked": null}, "seed": 9}})"),
      "s.json");
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->expect.size(), 2u);
  const Scenario& v = result->variants.at(0).scenario;
  ASSERT_EQ(v.expect.size(), 1u);
  EXPECT_EQ(v.expect[0].metric, "acked");
  EXPECT_EQ(v.seed, 9u);
  EXPECT_EQ(result->seed, 1u);
}

// "kafka_version": the seed's release by default; a variant may choose another; the broker's keys
// and defaults are that release's; an unmodelled release or a later release's key is an error at
// its path, naming what would be valid.
TEST(ScenarioLoaderTest, KafkaVersionChoosesTheBrokersRelease) {
  Result<Scenario> result = ParseScenario(With(R"("variants": {
                "newer": {"kafka_version": "0.11.0",
                          "cluster": {"config": {"group.initial.rebalance.delay.ms": 10}}},
                "seeds": {"kafka_version": "0.10.0.1"}})"),
                                          "s.json");
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->kafka_version, KafkaRelease::k0_10_0);
  EXPECT_EQ(result->variants.at(0).scenario.kafka_version, KafkaRelease::k0_11_0);
  EXPECT_EQ(result->variants.at(1).scenario.kafka_version, KafkaRelease::k0_10_0);

  std::vector<std::string> errors = Errors(With(R"(
      "kafka_version": "0.9.0",
      "variants": {"old": {"kafka_version": "0.10.2",
                           "cluster": {"config": {"group.initial.rebalance.delay.ms": 10}}}})"));
  EXPECT_EQ(errors,
            (std::vector<std::string>{
                "s.json:/kafka_version: Kafka \"0.9.0\" is not a release ksim models; it models "
                "0.8.2, 0.10.0, 0.10.1, 0.10.2, 0.11.0, 1.0, 1.1, 2.0, 2.1",
                "s.json:/variants/old/cluster/config/group.initial.rebalance.delay.ms: unknown "
                "broker configuration \"group.initial.rebalance.delay.ms\": Kafka 0.10.2 has no "
                "such setting; it exists from Kafka 0.11.0 (set \"kafka_version\")"}));
}

// policy.truncation unset is the brokers' release's: high-watermark before 0.11.0, leader-epoch
// from it (KIP-101); a variant's kafka_version moves it; a policy the scenario names wins.
TEST(ScenarioLoaderTest, DefaultTruncationFollowsTheRelease) {
  Result<Scenario> result = ParseScenario(With(R"("kafka_version": "0.10.2", "variants": {
                "kip101": {"kafka_version": "0.11.0"},
                "named": {"kafka_version": "2.0", "policy": {"truncation": "high-watermark"}},
                "chosen-early": {"policy": {"truncation": "leader-epoch"}}})"),
                                          "s.json");
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->policy.truncation, "");
  EXPECT_EQ(result->TruncationPolicyName(), "high-watermark");
  EXPECT_EQ(result->variants.at(0).scenario.TruncationPolicyName(), "leader-epoch");
  EXPECT_EQ(result->variants.at(1).scenario.TruncationPolicyName(), "high-watermark");
  EXPECT_EQ(result->variants.at(2).scenario.TruncationPolicyName(), "leader-epoch");
}

// A client runs the scenario's (or the variant's) release unless it names its own; its settings
// are checked as its own release's; a release ksim does not model, or a 0.10.1 client against
// 0.10.0 brokers (no version negotiation before 0.10.2), is an error at its path.
TEST(ScenarioLoaderTest, AClientMaySetItsOwnKafkaVersion) {
  Result<Scenario> result = ParseScenario(With(R"("topics": {"t": {}}, "clients": {
      "p1": {"type": "producer", "topic": "t"},
      "p2": {"type": "producer", "topic": "t", "kafka_version": "2.0",
             "config": {"enable.idempotence": true}},
      "c1": {"type": "consumer", "topics": ["t"], "kafka_version": "0.10.2"}},
      "variants": {"newer": {"kafka_version": "1.1"}})"),
                                          "s.json");
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->clients.at(0).kafka_version, KafkaRelease::k0_10_0);
  EXPECT_EQ(result->clients.at(1).kafka_version, KafkaRelease::k2_0);
  EXPECT_EQ(result->clients.at(2).kafka_version, KafkaRelease::k0_10_2);
  const Scenario& newer = result->variants.at(0).scenario;
  EXPECT_EQ(newer.clients.at(0).kafka_version, KafkaRelease::k1_1);  // the variant's
  EXPECT_EQ(newer.clients.at(1).kafka_version, KafkaRelease::k2_0);  // its own

  EXPECT_EQ(Errors(With(R"("topics": {"t": {}}, "clients": {
      "p1": {"type": "producer", "topic": "t", "kafka_version": "0.9.0"},
      "c1": {"type": "consumer", "topics": ["t"], "kafka_version": "0.10.1"},
      "p2": {"type": "producer", "topic": "t", "kafka_version": "1.0",
             "config": {"enable.idempotence": true, "acks": "1"}}})")),
            (std::vector<std::string>{
                "s.json:/clients/p1/kafka_version: Kafka \"0.9.0\" is not a release ksim "
                "models; it models 0.8.2, 0.10.0, 0.10.1, 0.10.2, 0.11.0, 1.0, 1.1, 2.0, 2.1",
                "s.json:/clients/c1/kafka_version: a Kafka 0.10.1 client cannot talk to Kafka "
                "0.10.0 brokers (it does not negotiate versions; clients from 0.10.2 do, "
                "KIP-97): use 0.10.0, or 0.10.2 or later (0.8.2, 0.10.0, 0.10.1, 0.10.2, 0.11.0, "
                "1.0, 1.1, 2.0, 2.1)",
                "s.json:/clients/p2/config: Must set acks to all in order to use the idempotent "
                "producer. Otherwise we cannot guarantee idempotence."}));
}

// Kafka 0.8.2 (issue 19): only its own clients talk to its brokers, its consumer is the old one,
// and what came later (the group coordinator's consumer, idempotence, message format v1's keys)
// is refused at its JSON path naming the release that has it.
TEST(ScenarioLoaderTest, Kafka082RefusesWhatCameLater) {
  Result<Scenario> result = ParseScenario(With(R"("kafka_version": "0.8.2.2", "topics": {"t": {}},
      "clients": {"p1": {"type": "producer", "topic": "t", "config": {"acks": "all"}},
                  "c1": {"type": "consumer", "consumer": "zookeeper", "topics": ["t"],
                         "group": "g"}})"),
                                          "s.json");
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->kafka_version, KafkaRelease::k0_8_2);
  EXPECT_EQ(result->clients.at(0).kafka_version, KafkaRelease::k0_8_2);

  EXPECT_EQ(
      Errors(With(R"("kafka_version": "0.8.2", "topics": {"t": {}},
      "cluster": {"config": {"log.message.format.version": "0.8.2"}},
      "clients": {"p1": {"type": "producer", "topic": "t", "config": {"acks": "2"}},
                  "p2": {"type": "producer", "topic": "t",
                         "config": {"enable.idempotence": true}},
                  "p3": {"type": "producer", "topic": "t", "kafka_version": "0.10.0"},
                  "c1": {"type": "consumer", "topics": ["t"], "group": "g"},
                  "c2": {"type": "consumer", "consumer": "zookeeper", "topics": ["t"],
                         "group": "g", "kafka_version": "0.10.0"}})")),
      (std::vector<std::string>{
          "s.json:/cluster/config/log.message.format.version: unknown broker configuration "
          "\"log.message.format.version\": Kafka 0.8.2 has no such setting; it exists from Kafka "
          "0.10.0 (set \"kafka_version\")",
          "s.json:/clients/p1/config/acks: Invalid value 2 for configuration acks: String must "
          "be one of: all, -1, 0, 1",
          "s.json:/clients/p2/config/enable.idempotence: the Kafka 0.8.2 producer has no "
          "setting enable.idempotence; it exists from Kafka 0.11.0 (set \"kafka_version\")",
          "s.json:/clients/p3/kafka_version: a Kafka 0.10.0 client cannot talk to Kafka 0.8.2 "
          "brokers (they parse only the first version of each request and have no ApiVersions, "
          "KIP-35): use 0.8.2",
          "s.json:/clients/c1: Kafka 0.8.2 has no group-coordinated consumer (the new consumer "
          "and the group coordinator exist from Kafka 0.9.0; ksim models them from 0.10.0): use "
          "\"consumer\": \"zookeeper\", the old consumer, or a later kafka_version",
          "s.json:/clients/c2/kafka_version: a Kafka 0.10.0 client cannot talk to Kafka 0.8.2 "
          "brokers (they parse only the first version of each request and have no ApiVersions, "
          "KIP-35): use 0.8.2"}));
}

// A `cli` action may name its tool's release (issue 18): refused as a client of that release
// would be; the old consumer (--zookeeper) of 0.10.1 and later cannot fetch from 0.10.0 brokers.
TEST(ScenarioLoaderTest, ACliActionMaySetItsOwnKafkaVersion) {
  const std::string console_consumer = "kafka-console-consumer.sh --zookeeper h:2181 --topic t";
  Result<Scenario> result = ParseScenario(With(R"("topics": {"t": {}}, "actions": [
      {"at_ms": 0, "do": "cli", "command": ")" +
                                               console_consumer + R"("},
      {"at_ms": 0, "do": "cli", "command": ")" +
                                               console_consumer + R"(", "kafka_version": "2.0"},
      {"at_ms": 0, "do": "cli", "command": "kafka-topics.sh --zookeeper h:2181 --list",
       "kafka_version": "0.10.1"}],
      "variants": {"newer": {"kafka_version": "0.10.1"}})"),
                                          "s.json");
  ASSERT_TRUE(result.ok()) << result.status().message();
  auto release = [](const Scenario& s, size_t i) {
    return std::get<CliAction>(s.actions.at(i).what).kafka_version;
  };
  EXPECT_EQ(release(*result, 0), KafkaRelease::k0_10_0);  // the scenario's
  EXPECT_EQ(release(*result, 1), KafkaRelease::k2_0);     // its own (the tool then refuses it)
  EXPECT_EQ(release(*result, 2), KafkaRelease::k0_10_1);  // ZooKeeper only: any release
  EXPECT_EQ(release(result->variants.at(0).scenario, 0), KafkaRelease::k0_10_1);

  EXPECT_EQ(
      Errors(With(R"("topics": {"t": {}}, "actions": [
      {"at_ms": 0, "do": "cli", "command": ")" +
                  console_consumer + R"(", "kafka_version": "0.10.2"},
      {"at_ms": 0, "do": "cli", "command": "kafka-console-producer.sh --broker-list h:9092 --topic t",
       "kafka_version": "0.10.1", "input": ["x"]},
      {"at_ms": 0, "do": "cli", "command": "kafka-topics.sh --zookeeper h:2181 --list",
       "kafka_version": "0.9"}])")),
      (std::vector<std::string>{
          "s.json:/actions/0/kafka_version: the old consumer of Kafka 0.10.2 cannot fetch from "
          "Kafka 0.10.0 brokers (it sends Fetch v3, KIP-74, and never negotiates versions): use "
          "0.10.0",
          "s.json:/actions/1/kafka_version: a Kafka 0.10.1 client cannot talk to Kafka 0.10.0 "
          "brokers (it does not negotiate versions; clients from 0.10.2 do, KIP-97): use 0.10.0, "
          "or 0.10.2 or later (0.8.2, 0.10.0, 0.10.1, 0.10.2, 0.11.0, 1.0, 1.1, 2.0, 2.1)",
          "s.json:/actions/2/kafka_version: Kafka \"0.9\" is not a release ksim models; it "
          "models 0.8.2, 0.10.0, 0.10.1, 0.10.2, 0.11.0, 1.0, 1.1, 2.0, 2.1"}));
}

// "consumer": "zookeeper" runs the old consumer (issue 18): its own keys, always in a group,
// before 2.0 only, and from 0.10.1 not against 0.10.0 brokers (Fetch v3).
TEST(ScenarioLoaderTest, AConsumerMayBeTheOldConsumer) {
  Result<Scenario> result = ParseScenario(With(R"("topics": {"t": {}}, "clients": {
      "c1": {"type": "consumer", "consumer": "zookeeper", "topics": ["t"], "group": "g",
             "commit": "after-processing",
             "config": {"auto.offset.reset": "smallest", "auto.commit.interval.ms": 1000}},
      "c2": {"type": "consumer", "consumer": "group-coordinator", "topics": ["t"]}},
      "variants": {"later": {"kafka_version": "2.0", "clients": {"c1": {"kafka_version": "1.1"}}}})"),
                                          "s.json");
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_TRUE(result->clients.at(0).zookeeper_consumer);
  EXPECT_FALSE(result->clients.at(1).zookeeper_consumer);
  EXPECT_EQ(result->variants.at(0).scenario.clients.at(0).kafka_version, KafkaRelease::k1_1);

  EXPECT_EQ(Errors(With(R"("topics": {"t": {}}, "clients": {
      "c1": {"type": "consumer", "consumer": "zookeeper", "topics": ["t"]},
      "c2": {"type": "consumer", "consumer": "zookeeper", "topics": ["t"], "group": "g",
             "config": {"enable.auto.commit": false, "auto.offset.reset": "earliest"}},
      "c3": {"type": "consumer", "consumer": "zookeeper", "topics": ["t"], "group": "g",
             "kafka_version": "0.10.2"},
      "c4": {"type": "consumer", "consumer": "zookeeper", "topics": ["t"], "group": "g",
             "kafka_version": "2.0"},
      "c5": {"type": "consumer", "consumer": "old", "topics": ["t"]}})")),
            (std::vector<std::string>{
                "s.json:/clients/c1/group: the old consumer needs a group (its group.id is "
                "required)",
                "s.json:/clients/c2/config/enable.auto.commit: Unknown configuration "
                "`enable.auto.commit` of the old consumer. Did you mean `auto.commit.enable`?",
                "s.json:/clients/c2/config/auto.offset.reset: Invalid value earliest for "
                "configuration auto.offset.reset: String must be one of: smallest, largest "
                "(valid: one of: smallest, largest)",
                "s.json:/clients/c3/kafka_version: the old consumer of Kafka 0.10.2 cannot fetch "
                "from Kafka 0.10.0 brokers (it sends Fetch v3, KIP-74, and never negotiates "
                "versions): use 0.10.0",
                "s.json:/clients/c4/consumer: the old consumer "
                "(kafka.consumer.ZookeeperConsumerConnector) does not exist in Kafka 2.0 (removed "
                "in 2.0, KAFKA-2983): use \"group-coordinator\", or a kafka_version before 2.0",
                "s.json:/clients/c5/consumer: expected one of \"group-coordinator\", "
                "\"zookeeper\", got \"old\""}));
}

TEST(ScenarioLoaderTest, ConsumerCommitMustAgreeWithGroupAndConfig) {
  std::vector<std::string> errors = Errors(With(R"("topics": {"t": {}}, "clients": {
      "c1": {"type": "consumer", "topics": ["t"], "commit": "after-processing"},
      "c2": {"type": "consumer", "topics": ["t"], "group": "g", "commit": "auto",
             "config": {"enable.auto.commit": false, "group.id": "h"}},
      "zk": {"type": "consumer", "topics": ["t"]}})"));
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "s.json:/clients/c1/commit: committing offsets needs a group: set "
                        "\"group\" or use \"auto\"",
                        "s.json:/clients/c2/config/enable.auto.commit: contradicts \"commit\": "
                        "\"auto\" commits automatically, \"before-processing\" and "
                        "\"after-processing\" commit explicitly (leave enable.auto.commit out)",
                        "s.json:/clients/c2/config/group.id: contradicts \"group\" (\"g\"): name "
                        "the group once, in \"group\"",
                        "s.json:/clients/zk: \"zk\" is a node of the cluster itself; pick another "
                        "client id"}));
}

TEST(ScenarioLoaderTest, ConfigActionsAreCheckedByKafkasRules) {
  std::vector<std::string> errors = Errors(With(std::string(kProducerClients) + R"(,
      "actions": [
        {"at_ms": 1, "do": "config", "topic": "t", "config": {"min.insync.replicas": 0}},
        {"at_ms": 2, "do": "config", "broker": 2, "config": {"log.retention.hour": 1}},
        {"at_ms": 3, "do": "config", "config": {"unclean.leader.election.enable": "maybe"}}
      ])"));
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_TRUE(
      errors[0].starts_with("s.json:/actions/0/config/min.insync.replicas: Invalid value "
                            "0 for configuration min.insync.replicas"))
      << errors[0];
  EXPECT_EQ(errors[1],
            "s.json:/actions/1/config/log.retention.hour: unknown broker configuration "
            "\"log.retention.hour\": did you mean \"log.retention.hours\"?");
  EXPECT_TRUE(
      errors[2].starts_with("s.json:/actions/2/config/unclean.leader.election.enable: "
                            "Invalid value maybe"))
      << errors[2];
}

// A broker's `config` action takes effect at its next start, over what earlier ones set: the
// upgrade notes' log.message.format.version bump is valid after the inter.broker.protocol.version
// bump (on the brokers it reached), and refused before it, naming the key and what is pending.
TEST(ScenarioLoaderTest, BrokerConfigActionsAreCheckedOverTheEarlierOnes) {
  const std::string base = std::string(kProducerClients) + R"(, "kafka_version": "0.11.0",
      "cluster": {"brokers": 3, "config": {"inter.broker.protocol.version": "0.10.0",
                                           "log.message.format.version": "0.10.0"}},)";
  Result<Scenario> upgrade = ParseScenario(With(base + R"(
      "actions": [
        {"at_ms": 9, "do": "config", "config": {"log.message.format.version": "0.11.0"}},
        {"at_ms": 1, "do": "config", "config": {"inter.broker.protocol.version": "0.11.0"}}
      ])"),
                                           "s.json");
  EXPECT_TRUE(upgrade.ok()) << upgrade.status().message();
  std::vector<std::string> errors = Errors(With(base + R"(
      "actions": [
        {"at_ms": 1, "do": "config", "broker": 1,
         "config": {"inter.broker.protocol.version": "0.11.0"}},
        {"at_ms": 2, "do": "config", "broker": 1,
         "config": {"log.message.format.version": "0.11.0"}},
        {"at_ms": 3, "do": "config", "config": {"log.message.format.version": "0.11.0"}}
      ])"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "s.json:/actions/2/config/log.message.format.version: log.message.format.version "
            "0.11.0 cannot be used when inter.broker.protocol.version is set to 0.10.0");
}

// A broker setting a later release removed: exit 2 naming the release that had it and the one
// that removed it (0.8.2's replica.lag.max.messages, KIP-16 in 0.9.0); at 0.8.2 it is taken.
TEST(ScenarioLoaderTest, ABrokerSettingALaterReleaseRemovedNamesTheRemoval) {
  const std::string setting = std::string(kProducerClients) +
                              R"(, "cluster": {"brokers": 3,
                                  "config": {"replica.lag.max.messages": 100}})";
  EXPECT_EQ(Errors(With(setting)),
            (std::vector<std::string>{
                "s.json:/cluster/config/replica.lag.max.messages: unknown broker configuration "
                "\"replica.lag.max.messages\": Kafka 0.10.0 has no such setting; Kafka 0.8.2 had "
                "it, until Kafka 0.9.0 removed it (KIP-16: the ISR by time alone; set "
                "\"kafka_version\")"}));
  Result<Scenario> at_082 = ParseScenario(
      With(R"("kafka_version": "0.8.2", "topics": {"t": {"partitions": 1, "replication_factor": 3}},
              "cluster": {"brokers": 3, "config": {"replica.lag.max.messages": 100}})"),
      "s.json");
  EXPECT_TRUE(at_082.ok()) << at_082.status().message();
}

TEST(ScenarioLoaderTest, AnExpectedCauseIsForMetricsThatCountRecords) {
  Result<Scenario> ok = ParseScenario(
      With(R"("expect": {"lost_acked": {"min": 1, "cause": "truncated on"}})"), "s.json");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  ASSERT_EQ(ok->expect.size(), 1u);
  EXPECT_EQ(ok->expect[0].cause, "truncated on");
  EXPECT_EQ(ok->expect[0].min, 1);

  std::vector<std::string> errors =
      Errors(With(R"("expect": {"elections": {"min": 1, "cause": "x"}})"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("s.json:/expect/elections/cause:"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("does not count records"), std::string::npos) << errors[0];
  errors = Errors(With(R"("expect": {"lost_acked": {"max": 0, "cause": ""}})"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("/expect/lost_acked/cause"), std::string::npos) << errors[0];

  // A permitted loss has a reason (why Kafka allows it), which a cause names too.
  Result<Scenario> permitted = ParseScenario(
      With(R"("expect": {"permitted_losses": {"min": 1, "cause": "message set"}})"), "s.json");
  ASSERT_TRUE(permitted.ok()) << permitted.status().message();
  EXPECT_EQ(permitted->expect[0].cause, "message set");
  errors = Errors(With(R"("expect": {"invariant_violations": {"max": 0, "cause": "x"}})"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("reasons of permitted_losses"), std::string::npos) << errors[0];
}

// "settled" is the one expectation that is not a checker metric: true or false only.
TEST(ScenarioLoaderTest, SettledIsABooleanExpectation) {
  Result<Scenario> ok =
      ParseScenario(With(R"("expect": {"settled": true, "lost_acked": 0})"), "s.json");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  ASSERT_EQ(ok->expect.size(), 2u);
  EXPECT_EQ(ok->expect[0].metric, "settled");
  EXPECT_EQ(ok->expect[0].exact, 1);
  ok = ParseScenario(With(R"("expect": {"settled": false})"), "s.json");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->expect[0].exact, 0);

  for (const char* bad : {R"("expect": {"settled": 1})", R"("expect": {"settled": {"min": 1}})"}) {
    std::vector<std::string> errors = Errors(With(bad));
    ASSERT_EQ(errors.size(), 1u) << bad;
    EXPECT_NE(errors[0].find("s.json:/expect/settled:"), std::string::npos) << errors[0];
    EXPECT_NE(errors[0].find("expected true"), std::string::npos) << errors[0];
  }
}

TEST(ScenarioLoaderTest, LoadScenarioReadsAFileAndNamesAMissingOne) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/s.json";
  std::ofstream(path) << kFullScenario;
  Result<Scenario> loaded = LoadScenario(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->file, path);
  Result<Scenario> missing = LoadScenario(dir.path() + "/none.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Errc::kNotFound);
  EXPECT_NE(missing.status().message().find("none.json"), std::string::npos);
}

// The loader's key table and docs/scenario.schema.json describe the same keys.
TEST(ScenarioSchemaTest, SchemaListsExactlyTheKeysTheLoaderAccepts) {
  const std::filesystem::path source(KSIM_SOURCE_DIR);
  std::ifstream in(source / "docs/scenario.schema.json");
  ASSERT_TRUE(in) << "docs/scenario.schema.json not found from " << source;
  const nlohmann::json schema = nlohmann::json::parse(in);
  auto keys_of = [](const nlohmann::json& object) {
    std::set<std::string> keys;
    for (const auto& [key, value] : object.at("properties").items()) keys.insert(key);
    return keys;
  };
  auto required_of = [](const nlohmann::json& object) {
    std::set<std::string> keys;
    if (object.contains("required")) {
      for (const auto& key : object.at("required")) keys.insert(key.get<std::string>());
    }
    return keys;
  };
  std::set<std::string> kinds;
  for (const ScenarioObjectKeys& entry : ScenarioKeyTable()) {
    const std::string kind(entry.kind);
    kinds.insert(kind);
    const nlohmann::json& object = kind == "scenario" ? schema : schema.at("$defs").at(kind);
    std::set<std::string> table(entry.required.begin(), entry.required.end());
    const std::set<std::string> required = table;
    table.insert(entry.optional.begin(), entry.optional.end());
    EXPECT_EQ(keys_of(object), table) << kind;
    EXPECT_EQ(required_of(object), required) << kind;
    EXPECT_EQ(object.value("additionalProperties", true), false) << kind;
  }
  // Every object the schema defines with fixed keys is in the table.
  for (const auto& [name, def] : schema.at("$defs").items()) {
    if (def.contains("properties")) {
      EXPECT_TRUE(kinds.count(name)) << name;
    }
  }
  // Actions: one definition per `do`.
  std::set<std::string> actions;
  for (const auto& ref : schema.at("$defs").at("action").at("oneOf")) {
    actions.insert(ref.at("$ref").get<std::string>().substr(std::string("#/$defs/action.").size()));
  }
  EXPECT_EQ(actions, std::set<std::string>(ActionNames().begin(), ActionNames().end()));
  std::set<std::string> metrics;
  for (const auto& name : schema.at("properties").at("expect").at("propertyNames").at("enum")) {
    metrics.insert(name.get<std::string>());
  }
  // Metrics, and the one expectation that is not a metric.
  std::set<std::string> expected(MetricNames().begin(), MetricNames().end());
  expected.insert(std::string(kSettledExpectation));
  EXPECT_EQ(metrics, expected);
  EXPECT_EQ(schema.at("properties").at("expect").at("properties").at("settled").at("type"),
            "boolean");
}

// nlohmann reports a number too large for a double as out_of_range, not as a parse error, and
// without a position (found by scenario_loader_fuzzer): the error names where the number is.
TEST(ScenarioLoaderTest, NumberOverflowNamesItsLineAndColumn) {
  Result<Scenario> result = ParseScenario("{\"ksim\": 1,\n \"seed\": 1e999}", "s.json");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), Errc::kInvalidConfig);
  EXPECT_EQ(result.status().message(),
            "s.json:2:10: number overflow parsing '1e999' (a JSON number must fit in a double)");
  Result<Scenario> digits = ParseScenario(std::string(400, '8'), "d.json");
  ASSERT_FALSE(digits.ok());
  EXPECT_TRUE(digits.status().message().starts_with("d.json:1:1: number overflow parsing"))
      << digits.status().message();
}

TEST(ScenarioLoaderTest, GarbageNeverCrashes) {
  // Shapes that reach every section with the wrong types.
  for (std::string_view text :
       {R"(null)", R"("x")", R"({"ksim": 1, "name": "x", "cluster": [], "topics": 1,
           "clients": "c", "actions": {}, "final": 0, "expect": [], "variants": 3, "policy": 1})",
        R"({"ksim": 1, "name": "x", "topics": {"t": {"assignment": {"a": 1, "0": [1, 1]}}},
           "clients": {"p": {"type": 1}, "q": []}, "actions": [1, {"do": 2}, {"do": "crash"},
           {"do": "partition", "at_ms": 0, "sides": [[], 1]}]})",
        R"({"ksim": 1, "name": "x", "cluster": {"network": {"links": [{"between": 1}, 2]},
           "broker_config": {"x": 1, "1": []}, "disk": {"write_latency_us": [1]}},
           "expect": {"acked": {"min": 2, "max": 1}, "sent": {}, "elections": "x"}})"}) {
    Result<Scenario> result = ParseScenario(text, "g.json");
    EXPECT_FALSE(result.ok()) << text;
  }
}

}  // namespace
}  // namespace ksim::sim
