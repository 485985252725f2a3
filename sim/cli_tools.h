// The seed's command-line tools run against a simulated cluster: a scenario's `cli` action
// (docs/scenarios.md, "cli"). Each command was parsed at load time (sim/scenario_cli.h); here it
// runs, asynchronously on the simulated cluster, and its output lines come out the way Kafka
// 0.10's own tool prints them:
//
// - kafka-topics.sh talks to ZooKeeper through the Cluster's TopicAdmin (core/topic_admin.h):
//   --create prints `Created topic "t".` (or Kafka's error line, e.g. `Error while executing
//   topic command : replication factor: 3 larger than available brokers: 1`), --list one name a
//   line (`t - marked for deletion`), --describe Kafka's two lines a topic and one a partition
//   (`Topic:t\tPartitionCount:1\tReplicationFactor:3\tConfigs:` then `\tTopic: t\tPartition: 0\t
//   Leader: 1\tReplicas: 1,2,3\tIsr: 1,2,3`), --delete `Topic t is marked for deletion.` and
//   `Note: This will have no impact if delete.topic.enable is not set to true.`.
// - kafka-console-producer.sh: a ProducerClient node named "cli-<action index>" (acks=1 as the
//   0.10 console producer's --request-required-acks default, messages 0) sends each `input`
//   line as a record value, one after another; it prints nothing on success and Kafka's error
//   line per failed record. Its sends are in the History like any producer's.
// - kafka-console-consumer.sh: a ConsumerClient node "cli-<action index>" with no group
//   (every partition assigned), auto.offset.reset earliest with --from-beginning else latest,
//   --max-messages honoured; it prints each record's value as one line when it is delivered
//   (and `Processed a total of N messages` when --max-messages is reached), then keeps running
//   to the end of the run unless --max-messages stopped it. Its deliveries are in the History
//   under its own client id.
//
// Output lines go to `output(index, line)` as they are printed (the runner traces them as
// cli_output and keeps them for the report); `done(index)` runs when the command has finished
// (kafka-topics.sh: after its answer; the console producer: after every line's outcome; the
// console consumer: at --max-messages, else never).
//
// Ownership: borrows the Cluster and the History (they outlive it); owns the client nodes'
// clients it creates. Single-threaded.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/clients.h"
#include "sim/cluster.h"
#include "sim/history.h"
#include "sim/scenario.h"

namespace ksim::sim {

class CliTools {
 public:
  using Output = std::function<void(size_t action_index, const std::string& line)>;
  using Done = std::function<void(size_t action_index)>;

  CliTools(Cluster& cluster, History& history, Output output, Done done = nullptr);
  ~CliTools();
  CliTools(const CliTools&) = delete;
  CliTools& operator=(const CliTools&) = delete;

  // Starts `action` (the scenario's action number `action_index`) now. Errors only for what the
  // simulation cannot do (a node name taken); a tool's own errors are output lines.
  Status Run(size_t action_index, const CliAction& action);

  // Topics created by --create so far (the runner audits them too).
  const std::vector<std::string>& created_topics() const { return created_topics_; }
  // The console clients, for the runner's final phase (restart, drain) and checker input.
  const std::vector<std::unique_ptr<ProducerClient>>& producers() const { return producers_; }
  const std::vector<std::unique_ptr<ConsumerClient>>& consumers() const { return consumers_; }

 private:
  void RunTopics(size_t index, const CliAction& action);
  Status RunConsoleProducer(size_t index, const CliAction& action);
  Status RunConsoleConsumer(size_t index, const CliAction& action);

  Cluster& cluster_;
  History& history_;
  Output output_;
  Done done_;
  std::vector<std::string> created_topics_;
  std::vector<std::unique_ptr<ProducerClient>> producers_;
  std::vector<std::unique_ptr<ConsumerClient>> consumers_;
};

}  // namespace ksim::sim
