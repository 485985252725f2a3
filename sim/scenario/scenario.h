// Scenario: one parsed and validated scenario file (docs/DESIGN.md, "Scenario format (version
// 1)"; the user's reference is docs/scenarios.md) as plain structs. sim/scenario/loader.h builds
// it from JSON and checks everything it can without running: types, ranges, names, cross
// references; the runner turns it into a Cluster, clients and a fault schedule.
//
// Times stay integer milliseconds as written (`*_ms`; the disk's `*_us`); the runner converts.
// Kafka-named settings stay text (ConfigOverrides, in the order written) and are parsed again by
// core's BrokerConfig / TopicConfig / ProducerConfig / ConsumerConfig when the run builds them;
// the loader has already run the same parsers, so they cannot fail there. Defaults below are
// Kafka 0.10's where Kafka has the setting, else the format's own (docs/scenarios.md).
// Plain values: copy freely; no I/O, no threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/cluster/replica_assignment.h"
#include "core/config/server_config.h"

namespace ksim::sim {

// [min, max], both inclusive.
struct RangeMs {
  int64_t min = 0;
  int64_t max = 0;
  friend bool operator==(const RangeMs&, const RangeMs&) = default;
};

// One entry of cluster.network.links: the link both ways between two nodes.
struct LinkOverride {
  std::string a;  // node names: broker-<id>, zk, a client id
  std::string b;
  std::optional<RangeMs> latency_ms;  // unset: the network's default
  std::optional<uint32_t> loss_ppm;   // "loss" (a probability 0..1) in parts per million
  std::optional<int64_t> bandwidth_bytes_per_s;
};

struct NetworkSpec {
  RangeMs latency_ms{1, 5};           // every link's one-way latency, drawn uniformly
  uint32_t loss_ppm = 0;              // "loss": 0..1, as parts per million
  int64_t bandwidth_bytes_per_s = 0;  // 0: unlimited
  std::vector<LinkOverride> links;
};

struct DiskSpec {  // every broker's virtual disk (sim/world/virtual_disk.h), microseconds
  RangeMs read_latency_us{0, 0};
  RangeMs write_latency_us{0, 0};
  RangeMs fsync_latency_us{0, 0};
  RangeMs metadata_latency_us{0, 0};
  uint64_t capacity_bytes = 0;  // 0: unlimited
};

struct ZooKeeperSpec {
  int64_t tick_time_ms = 2000;         // tickTime
  int64_t min_session_timeout_ms = 0;  // minSessionTimeout; 0: 2 ticks
  int64_t max_session_timeout_ms = 0;  // maxSessionTimeout; 0: 20 ticks
  // session.timeout.ms: what every broker asks for (zookeeper.session.timeout.ms) unless
  // cluster.config or broker_config names that key.
  std::optional<int64_t> session_timeout_ms;
};

struct ClusterSpec {
  int32_t brokers = 3;     // ids 1..brokers
  ConfigOverrides config;  // every broker (Kafka's server.properties names)
  std::vector<std::pair<int32_t, ConfigOverrides>> broker_config;  // broker id -> its own
  ZooKeeperSpec zookeeper;
  NetworkSpec network;
  DiskSpec disk;
};

struct PolicySpec {
  // An election policy name (core/cluster/election_policy.h); "" : Kafka's own, from each topic's
  // unclean.leader.election.enable.
  std::string election;
  // A truncation policy name, "high-watermark" or "leader-epoch" (core/cluster/partition.h);
  // "" : the brokers' release's (DefaultTruncationPolicy), see TruncationPolicyOf.
  std::string truncation;
};

struct TopicEntry {
  std::string name;
  int32_t partitions = 1;          // num.partitions
  int32_t replication_factor = 1;  // default.replication.factor
  ConfigOverrides config;          // topic-level names (min.insync.replicas, retention.ms, ...)
  // Partition -> replicas (the first is the preferred leader); empty: Kafka's even spread.
  ReplicaAssignment assignment;
};

enum class ClientType : uint8_t { kProducer, kConsumer };
enum class CommitKind : uint8_t { kAuto, kBeforeProcessing, kAfterProcessing };

struct ClientSpec {
  std::string id;
  ClientType type = ClientType::kProducer;
  // Producer.
  std::string topic;
  int64_t messages = 0;    // 0: only what produce actions give it
  int64_t rate_per_s = 0;  // 0: every message at start_ms
  std::optional<std::string> key;
  // Consumer.
  std::vector<std::string> topics;
  std::string group;  // "" : no group
  CommitKind commit = CommitKind::kAuto;
  int64_t processing_ms = 0;
  // "consumer": "zookeeper": Kafka's old consumer (ZookeeperConsumerConnector, before 2.0) with
  // its own config keys, instead of the group coordinator's ("group-coordinator", the default).
  bool zookeeper_consumer = false;
  // Both.
  int64_t start_ms = 0;
  ConfigOverrides config;  // Kafka's producer / consumer names
  // "kafka_version": the client's release (its settings, defaults and behaviours); the
  // scenario's (or the variant's) when not given (docs/versions.md, "A client's own release").
  KafkaRelease kafka_version = kSeedKafkaRelease;
};

// A parsed command line of the seed's tools (the `cli` action).
struct CliCommand {
  enum class Tool : uint8_t {
    kTopics,
    kConsoleProducer,
    kConsoleConsumer,
    kPreferredReplicaElection,
  };
  enum class TopicsAction : uint8_t { kNone, kCreate, kList, kDescribe, kDelete };
  Tool tool = Tool::kTopics;
  TopicsAction action = TopicsAction::kNone;  // kafka-topics.sh only
  std::string zookeeper;                      // --zookeeper (host names mean the cluster)
  std::string broker_list;                    // --broker-list
  std::string bootstrap_server;               // --bootstrap-server
  bool new_consumer = false;                  // --new-consumer (0.10.0 needs it with the above)
  std::optional<std::string> topic;           // --topic
  std::optional<int32_t> partitions;          // --partitions
  std::optional<int32_t> replication_factor;  // --replication-factor
  ConfigOverrides config;                     // --config k=v, in order
  ReplicaAssignment replica_assignment;       // --replica-assignment 1:2,2:3
  bool from_beginning = false;                // --from-beginning
  std::optional<std::string> group;           // --group
  std::optional<int64_t> max_messages;        // --max-messages
  // kafka-preferred-replica-election.sh --path-to-json-file (its contents are the action's
  // `input` lines); unset: every partition.
  std::optional<std::string> json_file;
};

// Who a fault is aimed at: a broker by id, the broker leading a partition when the action runs,
// or a client.
struct Target {
  enum class Kind : uint8_t { kBroker, kLeaderOf, kClient };
  Kind kind = Kind::kBroker;
  int32_t broker = 0;     // kBroker
  std::string topic;      // kLeaderOf
  int32_t partition = 0;  // kLeaderOf
  std::string client;     // kClient
};

enum class DiskFaultKind : uint8_t { kEio, kFull, kCorruptTail };

struct CliAction {
  std::string command;  // as written
  // Lines typed into a console producer, or the --path-to-json-file of
  // kafka-preferred-replica-election.sh.
  std::vector<std::string> input;
  CliCommand parsed;
  // "kafka_version": the release of the tool (its console clients' settings, defaults and
  // checks); the scenario's (or the variant's) when not given (docs/versions.md, "A client's own
  // release").
  KafkaRelease kafka_version = kSeedKafkaRelease;
};
struct CrashAction {
  Target target;
};
struct RestartAction {
  Target target;  // a broker or a client
};
struct ShutdownAction {
  Target target;
};
struct SlowAction {
  Target target;
  int64_t fetch_delay_ms = 0;
  int64_t for_ms = 0;
};
struct PartitionAction {
  std::vector<std::vector<std::string>> sides;  // node names
  bool one_way = false;
};
struct HealAction {};
struct CrashReplicasAction {
  std::string topic;
  int32_t partition = 0;
};
struct DiskFaultAction {
  Target target;
  DiskFaultKind kind = DiskFaultKind::kEio;
};
struct ZkExpireAction {
  Target target;
};
struct ZkDownAction {};
struct ZkUpAction {};
struct ProduceAction {
  std::string client;
  std::string value;
  std::optional<std::string> key;
};
// Configuration change: a topic's (written as kafka-configs.sh --alter --entity-type topics does;
// the brokers read a topic's config only at its first LeaderAndIsr, docs/broker.md) or a broker's
// (every broker when `broker` is unset; 0.10 reads broker settings at start-up, so they take
// effect on the broker's next restart).
struct ConfigAction {
  std::optional<std::string> topic;
  std::optional<int32_t> broker;
  ConfigOverrides config;
};

using ActionKind =
    std::variant<CliAction, CrashAction, RestartAction, ShutdownAction, SlowAction, PartitionAction,
                 HealAction, CrashReplicasAction, DiskFaultAction, ZkExpireAction, ZkDownAction,
                 ZkUpAction, ProduceAction, ConfigAction>;

struct Action {
  int64_t at_ms = 0;
  size_t index = 0;  // position in `actions`, for messages ("/actions/3")
  ActionKind what;
};

struct FinalPhase {
  bool heal = true;
  bool restart_all = true;
  int64_t drain_ms = 30000;
};

// metric -> exact value, or a {min, max} range (either bound may be absent).
// `"expect": {"settled": true}`: the one expectation that is not a checker metric: whether the
// final phase settled within its drain (RunResult::drained); held as exact 1 or 0.
inline constexpr std::string_view kSettledExpectation = "settled";

struct Expectation {
  std::string metric;
  std::optional<int64_t> exact;
  std::optional<int64_t> min;
  std::optional<int64_t> max;
  // {"cause": "text"}: every record the metric counts has a cause that contains `text` (only for
  // metrics that count records: lost_acked, log_duplicates, ...).
  std::optional<std::string> cause;
};

struct ScenarioVariant;

struct Scenario {
  std::string file;  // as given to the loader
  std::string name;
  std::string description;
  uint64_t seed = 1;
  int64_t duration_ms = 60000;
  // "kafka_version": the release the brokers run (docs/versions.md); the seed's by default.
  KafkaRelease kafka_version = kSeedKafkaRelease;
  ClusterSpec cluster;
  PolicySpec policy;
  std::vector<TopicEntry> topics;   // in the order written
  std::vector<ClientSpec> clients;  // in the order written
  std::vector<Action> actions;      // sorted by at_ms, ties in the order written
  FinalPhase final_phase;
  std::vector<Expectation> expect;  // in the order written
  // Each variant: the base with its JSON Merge Patch applied, validated as a whole scenario
  // (its own `variants` empty). In the order written.
  std::vector<ScenarioVariant> variants;
  // What is valid but cannot work as written, one line each ("file:/json/pointer: message"),
  // the variants' own included; `ksim check` prints them.
  std::vector<std::string> warnings;

  const TopicEntry* FindTopic(std::string_view topic) const;
  const ClientSpec* FindClient(std::string_view id) const;
  // The truncation policy the brokers follow: policy.truncation when given, else their
  // release's (high-watermark before 0.11.0, leader-epoch from it). A policy name.
  std::string TruncationPolicyName() const;
};

struct ScenarioVariant {
  std::string name;
  Scenario scenario;
};

// The action's kind as written in `do` ("cli", "crash", ..., "config").
std::string_view ActionName(const ActionKind& what);
// The metrics an expectation may name (docs/DESIGN.md), in the documented order.
const std::vector<std::string_view>& MetricNames();
// The kind of the anomaly each record a metric counts becomes in the history checker's report
// (lost_acked -> "lost_acked", log_duplicates -> "log_duplicate", ...), or null for a metric
// that does not count records.
const char* AnomalyKindOf(std::string_view metric);
// Whether an expectation on `metric` may name a cause: the metrics that count records (their
// anomalies' causes), and permitted_losses (each loss's reason: why Kafka allows it).
bool MetricHasCauses(std::string_view metric);

}  // namespace ksim::sim
