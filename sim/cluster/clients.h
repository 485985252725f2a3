// Simulated clients: a ProducerClient or ConsumerClient is a node of the World (named by the
// client id) running core's Producer or Consumer (core/clients/producer/producer.h,
// core/clients/consumer/consumer.h) through a SimTransport, driven by a scenario's workload and
// recording every operation in the run's History (sim/check/history.h). docs/simulated-clients.md.
//
// - Options mirror a scenario's `clients` entry (docs/DESIGN.md, scenario format) one to one:
//   `type` picks the class; topic(s), messages, rate_per_s, start_ms, key, group, commit,
//   processing_ms; `config` holds Kafka-named settings parsed by ParseProducerConfig /
//   ParseConsumerConfig (client.id defaults to the id, bootstrap.servers to the broker nodes
//   given). Create checks everything and refuses bad input (kInvalidConfig) before the node is
//   added.
// - Lifecycle: the node's process is one incarnation of the client (a SimTransport, the core
//   client and, for a producer, a StreamRandomSource on stream "client/<id>/<incarnation>").
//   kCrash and kShutdown destroy it (no callback runs afterwards: a producer's sends still
//   pending become `info` ops with `crashed`); kRestart builds a new one and resumes the
//   workload: a producer continues with the records not yet handed to Send, a consumer joins
//   again and starts from its group's committed offsets (auto.offset.reset when none).
// - ProducerClient workload: `messages` records, one every 1000/rate_per_s ms from start_ms
//   (rate 0: all at start_ms), value "<id>-<n>", key `key`; plus Produce(value, key) for a
//   scenario's produce action or console producer input, sent at once.
// - ConsumerClient workload: from start_ms, Subscribe(topics) in `group` (no group: Assign every
//   partition of the topics, from a Metadata answer), then a poll loop: Poll (poll_timeout_ms)
//   -> `poll` op -> per commit mode:
//     auto:              enable.auto.commit=true; process each record, poll again (the Consumer
//                        commits the positions every auto.commit.interval.ms inside Poll);
//     before-processing: commit the poll's positions (offset after each partition's last
//                        record), wait for the answer, then process: at-most-once (a crash while
//                        processing skips the rest of the poll; a failed commit drops the poll);
//     after-processing:  process every record, then commit, then poll: at-least-once (a crash
//                        before the commit's answer redelivers the poll after the restart).
//   Processing a record takes processing_ms of virtual time; the `deliver` op is written when it
//   ends. Commit ops come from the Commit answers (explicit modes) or the Consumer's
//   offset_commit events (auto).
//
// - Observers (optional, for the console tools, sim/cluster/cli_tools.h): a producer's
// on_completion
//   runs after each send's completion op is written (ok, fail, info, including the `crashed`
//   infos of a process that died); a consumer's on_deliver after each `deliver` op. They may
//   call Stop() but must not destroy the client.
// - ConsumerClient::Stop() ends the client for good, as a console consumer at --max-messages:
//   no op is written after it, and the node is shut down cleanly (World::CleanShutdownNode) in
//   an event of its own; a later restart of the node runs nothing.
//
// Ownership: borrows the World and the History (both outlive the client); adds its node on
// Create and listens to its lifecycle for as long as it lives. Destroying a client destroys its
// process as a crash would, without recording anything. Single-threaded.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/clients/consumer/consumer.h"
#include "core/clients/consumer/zookeeper_consumer.h"
#include "core/clients/producer/producer.h"
#include "core/config/server_config.h"
#include "sim/check/history.h"
#include "sim/world/world.h"

namespace ksim::sim {

// A scenario's producer entry.
struct ProducerClientOptions {
  std::string id;  // node name and default client.id
  std::string topic;
  int64_t messages = 0;    // generated records (0: only Produce calls)
  int64_t rate_per_s = 0;  // 0: every generated record at start_ms
  int64_t start_ms = 0;    // virtual time of the first generated record
  std::optional<std::string> key;
  ConfigOverrides config;              // Kafka names (acks, retries, enable.idempotence, ...)
  std::vector<std::string> bootstrap;  // used when config has no bootstrap.servers
  // The producer's release: its keys and checks (ParseProducerConfig). A key of a later release
  // is KafkaProducer's warning, traced as `config_warning` each time the process starts.
  KafkaRelease kafka_version = kSeedKafkaRelease;
  // The brokers' release, as their ApiVersions answers tell a client from 0.10.2 (KIP-97); unset:
  // the producer's own. An idempotent producer needs InitProducerId (0.11) there.
  std::optional<KafkaRelease> brokers_kafka_version;
  // Runs after each send's completion op is written (see above); null: none.
  std::function<void(const HistoryOp& completion)> on_completion;
};

class ProducerClient {
 public:
  // Checks the options, parses the configuration and adds the node; the workload starts at
  // start_ms. kInvalidConfig for a bad setting, kInvalidArgument for a bad workload or a taken
  // node name.
  static Result<std::unique_ptr<ProducerClient>> Create(World& world, History& history,
                                                        ProducerClientOptions options);
  ~ProducerClient();
  ProducerClient(const ProducerClient&) = delete;
  ProducerClient& operator=(const ProducerClient&) = delete;

  // Sends one record now with a new record id. kInvalidArgument while the node is down.
  Result<std::string> Produce(std::string value, std::optional<std::string> key = std::nullopt);

  const std::string& id() const { return options_.id; }
  const ProducerConfig& config() const { return config_; }
  // Generated records handed to Send so far, over every incarnation.
  int64_t generated() const { return generated_; }
  // Sends of the current process without an outcome yet.
  size_t pending() const { return pending_.size(); }
  // Every generated record sent and every send has its outcome.
  bool done() const { return generated_ == options_.messages && pending_.empty(); }
  // When the last generated record is due to be handed to Send at the workload's rate, given
  // that the next one is due at its time (or now, if late); 0 when every one has been.
  TimeUs LastRecordDueUs() const;
  // The running Producer, or null while the node is down.
  Producer* producer();
  // Whether a process runs (the node is up and its Producer exists).
  bool running() const { return process_ != nullptr; }

 private:
  struct Process;
  ProducerClient(World& world, History& history, ProducerClientOptions options,
                 ProducerConfig config);
  void StartProcess();
  void StopProcess(bool record_crash);
  void ScheduleNext();
  void SendGenerated();
  void SendRecord(std::string record_id, std::string value, std::optional<std::string> key);

  World& world_;
  History& history_;
  ProducerClientOptions options_;
  ProducerConfig config_;
  Node* node_ = nullptr;
  Node::ListenerId listener_ = 0;
  std::unique_ptr<Process> process_;
  int64_t generated_ = 0;
  std::set<uint64_t> pending_;  // send invokes of the current process without an outcome
  TimeUs next_due_us_ = 0;      // when the next generated record is sent
};

enum class CommitMode : uint8_t { kAuto, kBeforeProcessing, kAfterProcessing };

// Which of Kafka 0.10's two consumers a ConsumerClient runs: the group coordinator's
// (KafkaConsumer, core/clients/consumer/consumer.h) or the old ZooKeeper-based one
// (ZookeeperConsumerConnector, core/clients/consumer/zookeeper_consumer.h), which
// `kafka-console-consumer.sh --zookeeper` runs.
enum class ConsumerKind : uint8_t { kGroupCoordinator, kZookeeper };
// "group-coordinator", "zookeeper": how the trace and the report name them.
std::string_view ConsumerKindName(ConsumerKind kind);
// "auto", "before-processing", "after-processing"; else kInvalidArgument.
Result<CommitMode> ParseCommitMode(std::string_view name);
std::string_view CommitModeName(CommitMode mode);

// A scenario's consumer entry.
struct ConsumerClientOptions {
  std::string id;
  std::vector<std::string> topics;
  std::string group;  // group.id; "" : no group (every partition assigned, nothing committed)
  int64_t start_ms = 0;
  CommitMode commit = CommitMode::kAuto;
  int64_t processing_ms = 0;  // per record
  ConfigOverrides config;     // Kafka names (auto.offset.reset, session.timeout.ms, ...)
  std::vector<std::string> bootstrap;
  int64_t poll_timeout_ms = 1000;  // each Poll's timeout
  // The consumer's release: its keys, defaults and behaviours (ParseConsumerConfig). A key of a
  // later release is KafkaConsumer's warning, traced as `config_warning` each time a consumer is
  // created.
  KafkaRelease kafka_version = kSeedKafkaRelease;
  // The brokers' release, as their ApiVersions answers tell it; unset: the consumer's own. Fetch
  // sessions need 1.1 on both sides.
  std::optional<KafkaRelease> brokers_kafka_version;
  // Runs after each record's `deliver` op is written (see above); null: none.
  std::function<void(const ConsumerRecord& record)> on_deliver;
  // The old consumer: `config` holds its keys (ParseZookeeperConsumerConfig: auto.offset.reset
  // smallest/largest, auto.commit.enable, ...), `group` is required, and the node runs a
  // ZooKeeper session of its own besides its connections to the brokers.
  ConsumerKind kind = ConsumerKind::kGroupCoordinator;
  // What the old consumer's registration says ("static"; the console consumer: "white_list").
  std::string subscription_pattern = "static";
};

class ConsumerClient {
 public:
  // As ProducerClient::Create. Refuses a commit mode other than auto without a group, and a
  // config whose enable.auto.commit or group.id contradicts `commit` or `group`.
  static Result<std::unique_ptr<ConsumerClient>> Create(World& world, History& history,
                                                        ConsumerClientOptions options);
  ~ConsumerClient();
  ConsumerClient(const ConsumerClient&) = delete;
  ConsumerClient& operator=(const ConsumerClient&) = delete;

  const std::string& id() const { return options_.id; }
  const ConsumerConfig& config() const { return config_; }
  // The running Consumer, or null while the node is down or before start_ms.
  Consumer* consumer();
  // The current process's assignment (empty while down or rebalancing).
  std::vector<TopicPartition> assignment() const;
  // Records delivered (processed) over every incarnation.
  int64_t delivered() const { return delivered_; }
  // The running old consumer, or null (the other kind, the node down, before start_ms).
  ZookeeperConsumer* zookeeper_consumer();
  ConsumerKind kind() const { return options_.kind; }
  const std::string& group() const { return options_.group; }
  // Ends the client for good (see above). Idempotent. The old consumer is closed first
  // (ZookeeperConsumer::Close: commit, ZooKeeper session closed); `stopped` runs after the node
  // is shut down.
  void Stop(std::function<void()> stopped = nullptr);
  bool stopped() const { return stopped_; }

 private:
  struct Process;
  ConsumerClient(World& world, History& history, ConsumerClientOptions options,
                 ConsumerConfig config, ZookeeperConsumerConfig zk_config);
  void StartProcess();
  void StopProcess();
  void Begin(Process& process);
  void FetchMetadata(Process& process, size_t attempt);
  void StartConsumer(Process& process, std::vector<TopicPartition> assign);
  void PollLoop(Process& process);
  void OnRecords(Process& process, std::vector<ConsumerRecord> records);
  void ProcessNext(Process& process, std::vector<ConsumerRecord> records, size_t next);
  // Writes the deliver op and tells on_deliver; false once the client is stopped.
  bool DeliverRecord(Process& process, const ConsumerRecord& record);
  void AfterProcessing(Process& process, std::vector<ConsumerRecord> records);
  void CommitRecords(Process& process, const std::vector<ConsumerRecord>& records,
                     std::function<void(bool ok)> then);
  void OnConsumerEvent(std::string_view ev, const EventFields& fields);

  World& world_;
  History& history_;
  ConsumerClientOptions options_;
  ConsumerConfig config_;
  ZookeeperConsumerConfig zk_config_;  // the old consumer's
  Node* node_ = nullptr;
  Node::ListenerId listener_ = 0;
  std::unique_ptr<Process> process_;
  int64_t delivered_ = 0;
  bool stopped_ = false;
};

}  // namespace ksim::sim
