// The seed's command-line tools run against a simulated cluster: a scenario's `cli` action
// (docs/scenarios.md, "cli"). Each command was parsed at load time (sim/scenario/cli.h); here it
// runs, asynchronously on the simulated cluster, and its output lines come out the way Kafka
// 0.10's own tool prints them:
//
// - kafka-topics.sh talks to ZooKeeper through the Cluster's TopicAdmin (core/admin/topic_admin.h):
//   --create prints `Created topic "t".` (after TopicCommand's WARNING line about '.' and '_'
//   when the name has either), or Kafka's error line, e.g. `Error while executing topic
//   command : replication factor: 3 larger than available brokers: 1` (the stack trace Kafka
//   logs after it is left out); --list one name a line (`t - marked for deletion`), --describe
//   Kafka's two lines a topic and one a partition (`Topic:t\tPartitionCount:1\t
//   ReplicationFactor:3\tConfigs:` then `\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2,3
//   \tIsr: 1,2,3`), --delete `Topic t is marked for deletion.` and `Note: This will have no
//   impact if delete.topic.enable is not set to true.` (`Error while executing topic command :
//   Topic t does not exist on ZK path <--zookeeper>` when nothing matches). As in Kafka, the
//   --topic of --list, --describe and --delete is a regular expression matched against whole
//   names (Whitelist: ',' means '|').
// Each command runs as its action's kafka_version (CliAction::kafka_version: the tool's release,
// the scenario's unless the action names one), not necessarily the brokers'.
//
// - kafka-console-producer.sh: a ProducerClient node named "cli-<action index>" with the
//   console producer's settings of the tool's release (acks=0 as --request-required-acks'
//   default at 0.10.0, acks=1 from 0.10.1 (KAFKA-3129), retries=3,
//   linger.ms=1000, request.timeout.ms=1500, max.block.ms=60000, ...), messages 0, that sends
//   every `input` line as a record value (key null) at once, in order, as the tool's
//   asynchronous send() does with lines typed together; it prints nothing on success and, per
//   failed record, ErrorLoggingCallback's two lines (`ERROR Error when sending message to topic
//   t with key: null, value: 10 bytes with error: (org.apache.kafka.clients.producer.internals.
//   ErrorLoggingCallback)` then `org.apache.kafka.common.errors.<Exception>: <Kafka's message>`;
//   no timestamp). Its sends are in the History like any producer's.
// - kafka-console-consumer.sh: a ConsumerClient node "cli-<action index>". With --zookeeper it
//   runs the old consumer (ConsumerKind::kZookeeper, ConsoleConsumer.getOldConsumerProps), once
//   ConsoleConsumer.checkZk passed (two ZooKeeper reads: "No brokers found in ZK." when
//   /brokers/ids cannot be read; with --from-beginning, "Found previous offset information for
//   this group G. ..." when /consumers/G/offsets exists; either line ends the tool): group
//   --group G, else "console-consumer-<random below 100000>" drawn from the run's stream
//   "cli-<index>/group" (the tool deletes that group's /consumers/<group> after the consumer shut
//   down at --max-messages), auto commit, auto.offset.reset smallest with --from-beginning else
//   largest. With --bootstrap-server it runs the group coordinator's consumer with no group
//   (every partition assigned; --group G joins G with auto commit instead), auto.offset.reset
//   earliest with --from-beginning else latest. Both honour --max-messages; it prints each record's
//   value as one line when it is delivered (and `Processed a total of N messages` when
//   --max-messages is reached: the client is then stopped, ConsumerClient::Stop, its node shut down
//   cleanly), else keeps running to the end of the run. Its deliveries are in the History under its
//   own client id.
//
// - kafka-preferred-replica-election.sh writes /admin/preferred_replica_election through the
//   TopicAdmin (every partition, or those of --path-to-json-file, whose contents are the action's
//   `input` lines) and prints `Successfully started preferred replica election for partitions
//   Set([t,0], [t,1])` (sorted; Scala's set order is its hash's), or `Failed to start preferred
//   replica election` and the exception (`kafka.common.AdminCommandFailedException: Admin command
//   failed` / `Caused by: kafka.admin.AdminOperationException: Preferred replica leader election
//   currently in progress for Set([t,0]). Aborting operation`; stack frames left out). The
//   controller does the election (core/controller/preferred_replica.cc).
//
// Output lines go to `output(index, line)` as they are printed (the runner traces them as
// cli_output and keeps them for the report); `done(index)` runs when the command has finished
// (kafka-topics.sh: after its answer; the console producer: after every line's outcome, a crash
// of its node included; the console consumer: at --max-messages, else never). `done` always
// runs in an event of its own, never inside Run; output lines may come inside Run (a
// WARNING, a missing argument).
//
// Ownership: borrows the Cluster and the History (they outlive it); owns the client nodes'
// clients it creates. Single-threaded.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/admin/topic_admin.h"
#include "core/base/status.h"
#include "sim/check/history.h"
#include "sim/cluster/clients.h"
#include "sim/cluster/cluster.h"
#include "sim/scenario/scenario.h"

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
  void CreateTopic(size_t index, const CliCommand& command);
  // --list, --describe and --delete: the topics matching --topic, then the action.
  void ListThen(size_t index, const CliCommand& command);
  void DescribeNext(size_t index, std::vector<ListedTopic> topics, size_t next);
  void DeleteTopics(size_t index, const CliCommand& command, std::vector<ListedTopic> topics);
  void DeleteNext(size_t index, std::vector<ListedTopic> topics, size_t next);
  void RunPreferredReplicaElection(size_t index, const CliAction& action);
  Status RunConsoleProducer(size_t index, const CliAction& action);
  Status RunConsoleConsumer(size_t index, const CliAction& action);
  void StopConsumer(size_t index, ConsumerClient& client, const std::string& generated_group);

  // Each line of `text` (lines end in '\n', the last may not) to output_.
  void Print(size_t index, std::string_view text);
  void Finish(size_t index);
  // Runs `callback` in an event of its own, unless this CliTools is gone by then.
  void Later(std::function<void()> callback);
  std::vector<std::string> BrokerNodes();
  static std::string ClientName(size_t index);

  Cluster& cluster_;
  History& history_;
  Output output_;
  Done done_;
  std::vector<std::string> created_topics_;
  std::vector<std::unique_ptr<ProducerClient>> producers_;
  std::vector<std::unique_ptr<ConsumerClient>> consumers_;
  // Expires with this object: the TopicAdmin's and the loop's callbacks check it first.
  std::shared_ptr<bool> alive_;
};

}  // namespace ksim::sim
