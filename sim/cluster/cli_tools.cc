#include "sim/cluster/cli_tools.h"

#include <algorithm>
#include <regex>
#include <utility>

#include "core/admin/topic_admin.h"
#include "core/base/check.h"
#include "core/base/trace_names.h"
#include "core/clients/producer/producer.h"
#include "core/cluster/topic.h"
#include "core/zk/paths.h"

namespace ksim::sim {

namespace {

// TopicCommand.main's catch: the message of whatever the command threw.
constexpr std::string_view kTopicCommandError = "Error while executing topic command : ";

// The console producer's settings (ConsoleProducer.getNewProducerProps, 0.10, with its option
// defaults): --request-required-acks 0 at 0.10.0 and 1 from 0.10.1 (KAFKA-3129;
// 0.10.0.1:ConsoleProducer.scala `defaultsTo(0)`), --message-send-max-retries 3,
// --retry-backoff-ms 100, --timeout 1000 (linger.ms), --request-timeout-ms 1500,
// --max-block-ms 60000, --metadata-expiry-ms 300000, --max-memory-bytes 32 MiB,
// --max-partition-memory-bytes 16 KiB, --socket-buffer-size 100 KiB. At 0.8.2 (its
// --new-producer's props, 0.8.2.2:ConsoleProducer.scala) the same options set the names of that
// producer: --request-timeout-ms is timeout.ms, --metadata-fetch-timeout-ms (60000)
// metadata.fetch.timeout.ms, and --queue-enqueue-timeout-ms (not -1) sets
// block.on.buffer.full=false.
ConfigOverrides ConsoleProducerConfig(KafkaRelease release) {
  ConfigOverrides config = {{"acks", release >= KafkaRelease::k0_10_1 ? "1" : "0"},
                            {"retries", "3"},
                            {"retry.backoff.ms", "100"},
                            {"linger.ms", "1000"},
                            {"metadata.max.age.ms", "300000"},
                            {"buffer.memory", "33554432"},
                            {"batch.size", "16384"},
                            {"send.buffer.bytes", "102400"}};
  if (!RequestTimeoutsApply(release)) {
    config.insert(config.end(), {{"timeout.ms", "1500"},
                                 {"metadata.fetch.timeout.ms", "60000"},
                                 {"block.on.buffer.full", "false"}});
  } else {
    config.insert(config.end(), {{"request.timeout.ms", "1500"}, {"max.block.ms", "60000"}});
  }
  return config;
}

// ErrorLoggingCallback's two lines through the tools' log4j layout (without the wall-clock
// timestamp, which a simulation does not have).
constexpr std::string_view kErrorLoggingCallback =
    "(org.apache.kafka.clients.producer.internals.ErrorLoggingCallback)";

struct JavaError {
  std::string_view exception;  // in org.apache.kafka.common.errors
  std::string_view message;    // Errors' default message
};

// The exception a producer callback receives for `error` (Kafka's Errors table).
JavaError ExceptionOf(Errc error) {
  switch (error) {
    case Errc::kCorruptMessage:
      return {"CorruptRecordException",
              "This message has failed its CRC checksum, exceeds the valid size, or is otherwise "
              "corrupt."};
    case Errc::kUnknownTopicOrPartition:
      return {"UnknownTopicOrPartitionException",
              "This server does not host this topic-partition."};
    case Errc::kLeaderNotAvailable:
      return {"LeaderNotAvailableException",
              "There is no leader for this topic-partition as we are in the middle of a "
              "leadership election."};
    case Errc::kNotLeaderForPartition:
      return {"NotLeaderForPartitionException",
              "This server is not the leader for that topic-partition."};
    case Errc::kRequestTimedOut:
      return {"TimeoutException", "The request timed out."};
    case Errc::kMessageTooLarge:
      return {"RecordTooLargeException",
              "The request included a message larger than the max message size the server will "
              "accept."};
    case Errc::kNetworkException:
      return {"NetworkException", "The server disconnected before a response was received."};
    case Errc::kInvalidTopicException:
      return {"InvalidTopicException",
              "The request attempted to perform an operation on an invalid topic."};
    case Errc::kRecordListTooLarge:
      return {"RecordBatchTooLargeException",
              "The request included message batch larger than the configured segment size on "
              "the server."};
    case Errc::kNotEnoughReplicas:
      return {"NotEnoughReplicasException",
              "Messages are rejected since there are fewer in-sync replicas than required."};
    case Errc::kNotEnoughReplicasAfterAppend:
      return {"NotEnoughReplicasAfterAppendException",
              "Messages are written to the log, but to fewer in-sync replicas than required."};
    case Errc::kInvalidRequiredAcks:
      return {"InvalidRequiredAcksException",
              "Produce request specified an invalid value for required acks."};
    case Errc::kInvalidTimestamp:
      return {"InvalidTimestampException",
              "The timestamp of the message is out of acceptable range."};
    case Errc::kOutOfOrderSequenceNumber:
      return {"OutOfOrderSequenceException", "The broker received an out of order sequence number"};
    case Errc::kDuplicateSequenceNumber:
      return {"DuplicateSequenceException", "The broker received a duplicate sequence number"};
    case Errc::kInvalidProducerEpoch:
      return {"ProducerFencedException", "Producer attempted an operation with an old epoch."};
    case Errc::kKafkaStorageError:
      return {"KafkaStorageException", "Disk error when trying to access log file on the disk."};
    case Errc::kUnknownProducerId:
      return {"UnknownProducerIdException",
              "This exception is raised by the broker if it could not locate the producer "
              "metadata associated with the producerId in question."};
    default:
      return {"UnknownServerException",
              "The server experienced an unexpected error when processing the request"};
  }
}

// Splits TopicCommand's text (every line ends in '\n') into lines.
std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    lines.emplace_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

// Kafka's Whitelist (TopicFilter, 0.10): --topic of --list/--describe/--delete is a regular
// expression matched against the whole name; ',' means '|', blanks and surrounding quotes go.
class TopicWhitelist {
 public:
  static Result<TopicWhitelist> Parse(std::string_view raw) {
    std::string regex(raw);
    regex.erase(std::remove(regex.begin(), regex.end(), ' '), regex.end());
    std::replace(regex.begin(), regex.end(), ',', '|');
    const size_t first = regex.find_first_not_of("\"'");
    regex = first == std::string::npos ? std::string() : regex.substr(first);
    while (!regex.empty() && (regex.back() == '"' || regex.back() == '\'')) regex.pop_back();
    try {
      return TopicWhitelist(std::regex(regex, std::regex::ECMAScript));
    } catch (const std::regex_error&) {
      return Status(Errc::kInvalidArgument, regex + " is an invalid regex.");
    }
  }
  bool Allows(const std::string& topic) const { return std::regex_match(topic, regex_); }

 private:
  explicit TopicWhitelist(std::regex regex) : regex_(std::move(regex)) {}
  std::regex regex_;
};

std::string ErrorText(const Status& status) {
  return status.message().empty() ? std::string(ErrcName(status.code())) : status.message();
}

}  // namespace

CliTools::CliTools(Cluster& cluster, History& history, Output output, Done done)
    : cluster_(cluster),
      history_(history),
      output_(std::move(output)),
      done_(std::move(done)),
      alive_(std::make_shared<bool>(true)) {
  KSIM_CHECK(output_ != nullptr);
}

CliTools::~CliTools() = default;

Status CliTools::Run(size_t action_index, const CliAction& action) {
  switch (action.parsed.tool) {
    case CliCommand::Tool::kTopics:
      RunTopics(action_index, action);
      return Status::Ok();
    case CliCommand::Tool::kConsoleProducer:
      return RunConsoleProducer(action_index, action);
    case CliCommand::Tool::kConsoleConsumer:
      return RunConsoleConsumer(action_index, action);
    case CliCommand::Tool::kPreferredReplicaElection:
      RunPreferredReplicaElection(action_index, action);
      return Status::Ok();
  }
  return Status(Errc::kInvalidArgument, "unknown tool");
}

void CliTools::Print(size_t index, std::string_view text) {
  for (const std::string& line : Lines(text)) output_(index, line);
}

void CliTools::Finish(size_t index) {
  if (done_) done_(index);
}

void CliTools::Later(std::function<void()> callback) {
  cluster_.world().loop().Schedule(
      0, [alive = std::weak_ptr<bool>(alive_), callback = std::move(callback)] {
        if (!alive.expired()) callback();
      });
}

std::vector<std::string> CliTools::BrokerNodes() {
  std::vector<std::string> nodes;
  for (BrokerId id : cluster_.broker_ids()) nodes.push_back(node::Broker(id));
  return nodes;
}

// ---- kafka-preferred-replica-election.sh -------------------------------------------------------

void CliTools::RunPreferredReplicaElection(size_t index, const CliAction& action) {
  // PreferredReplicaLeaderElectionCommand.main: any failure prints these lines and the exception.
  auto failed = [this, index](std::string_view exception, std::string_view cause) {
    Print(index, "Failed to start preferred replica election");
    if (cause.empty()) {
      Print(index, exception);
    } else {
      Print(index, "kafka.common.AdminCommandFailedException: Admin command failed");
      Print(index, "Caused by: " + std::string(exception) + ": " + std::string(cause));
    }
  };
  std::optional<std::vector<zk::TopicAndPartition>> partitions;
  if (action.parsed.json_file) {
    // parsePreferredReplicaElectionData: the file's JSON, read before anything is written.
    std::string text;
    for (const std::string& line : action.input) text += line + "\n";
    Result<std::vector<zk::TopicAndPartition>> parsed = zk::DecodePreferredReplicaElection(text);
    if (!parsed.ok()) {
      const bool duplicates = parsed.status().message().starts_with("Preferred replica");
      failed("kafka.admin.AdminOperationException: " +
                 (duplicates ? parsed.status().message()
                             : std::string("Preferred replica election data is empty")),
             "");
      return Later([this, index] { Finish(index); });
    }
    partitions = std::move(parsed).value();
  }
  cluster_.topic_admin().StartPreferredReplicaElection(
      std::move(partitions), [this, alive = std::weak_ptr<bool>(alive_), index,
                              failed](Result<PreferredElectionStarted> started) {
        if (alive.expired()) return;
        if (!started.ok()) {
          failed("kafka.admin.AdminOperationException", ErrorText(started.status()));
          return Finish(index);
        }
        for (const std::string& skipped : started->skipped) {
          Print(index, "ERROR " + skipped + " (kafka.admin.PreferredReplicaLeaderElectionCommand)");
        }
        Print(index, "Successfully started preferred replica election for partitions " +
                         FormatPartitionSet(started->partitions));
        Finish(index);
      });
}

// ---- kafka-topics.sh ----------------------------------------------------------------------------

void CliTools::RunTopics(size_t index, const CliAction& action) {
  const CliCommand& command = action.parsed;
  switch (command.action) {
    case CliCommand::TopicsAction::kCreate:
      return CreateTopic(index, command);
    case CliCommand::TopicsAction::kList:
    case CliCommand::TopicsAction::kDescribe:
    case CliCommand::TopicsAction::kDelete:
      return ListThen(index, command);
    case CliCommand::TopicsAction::kNone:
      break;
  }
  Print(index,
        "Command must include exactly one action: --list, --describe, --create, --alter or "
        "--delete");
  Later([this, index] { Finish(index); });
}

void CliTools::CreateTopic(size_t index, const CliCommand& command) {
  if (!command.topic) {
    Print(index, "Missing required argument \"[topic]\"");
    return Later([this, index] { Finish(index); });
  }
  const std::string topic = *command.topic;
  if (HasCollisionChars(topic)) Print(index, kTopicCollisionWarning);
  std::optional<ReplicaAssignment> manual;
  int32_t partitions = 0;
  int32_t replication_factor = 0;
  if (!command.replica_assignment.empty()) {
    manual = command.replica_assignment;
  } else if (!command.partitions || !command.replication_factor) {
    // CommandLineUtils.checkRequiredArgs, in the order TopicCommand names them.
    Print(index, std::string("Missing required argument \"[") +
                     (command.partitions ? "replication-factor" : "partitions") + "]\"");
    return Later([this, index] { Finish(index); });
  } else {
    partitions = *command.partitions;
    replication_factor = *command.replication_factor;
  }
  zk::TopicConfig overrides;
  for (const auto& [key, value] : command.config) overrides[key] = value;  // the last one wins
  cluster_.topic_admin().CreateTopic(
      topic, partitions, replication_factor, std::move(manual), std::move(overrides),
      [this, alive = std::weak_ptr<bool>(alive_), index, topic](Result<ReplicaAssignment> done) {
        if (alive.expired()) return;
        if (done.ok()) {
          created_topics_.push_back(topic);
          Print(index, FormatCreatedTopic(topic));
        } else {
          Print(index, std::string(kTopicCommandError) + ErrorText(done.status()));
        }
        Finish(index);
      });
}

void CliTools::ListThen(size_t index, const CliCommand& command) {
  std::optional<TopicWhitelist> whitelist;
  if (command.topic) {
    Result<TopicWhitelist> parsed = TopicWhitelist::Parse(*command.topic);
    if (!parsed.ok()) {
      Print(index, std::string(kTopicCommandError) + parsed.status().message());
      return Later([this, index] { Finish(index); });
    }
    whitelist = std::move(parsed).value();
  }
  // TopicCommand.getTopics: every topic in ZooKeeper, sorted, filtered by --topic.
  cluster_.topic_admin().ListTopics(
      [this, alive = std::weak_ptr<bool>(alive_), index, command,
       whitelist = std::move(whitelist)](Result<std::vector<ListedTopic>> listed) {
        if (alive.expired()) return;
        if (!listed.ok()) {
          Print(index, std::string(kTopicCommandError) + ErrorText(listed.status()));
          return Finish(index);
        }
        std::vector<ListedTopic> topics;
        for (ListedTopic& topic : *listed) {
          if (!whitelist || whitelist->Allows(topic.name)) topics.push_back(std::move(topic));
        }
        switch (command.action) {
          case CliCommand::TopicsAction::kList:
            Print(index, FormatTopicList(topics));
            return Finish(index);
          case CliCommand::TopicsAction::kDescribe:
            return DescribeNext(index, std::move(topics), 0);
          default:
            return DeleteTopics(index, command, std::move(topics));
        }
      });
}

void CliTools::DescribeNext(size_t index, std::vector<ListedTopic> topics, size_t next) {
  if (next == topics.size()) return Finish(index);
  const std::string topic = topics[next].name;
  cluster_.topic_admin().DescribeTopics(
      topic, [this, alive = std::weak_ptr<bool>(alive_), index, topics = std::move(topics), next,
              topic](Result<std::vector<TopicDescription>> described) mutable {
        if (alive.expired()) return;
        if (!described.ok()) {
          Print(index, std::string(kTopicCommandError) + ErrorText(described.status()));
          return Finish(index);
        }
        if (described->empty()) {
          // Deleted between the listing and now: TopicCommand finds no assignment.
          Print(index, "Topic " + topic + " doesn't exist!");
        }
        for (const TopicDescription& description : *described) {
          Print(index, FormatTopicDescription(description));
        }
        DescribeNext(index, std::move(topics), next + 1);
      });
}

void CliTools::DeleteTopics(size_t index, const CliCommand& command,
                            std::vector<ListedTopic> topics) {
  if (topics.empty()) {
    Print(index, std::string(kTopicCommandError) + "Topic " + command.topic.value_or("") +
                     " does not exist on ZK path " + command.zookeeper);
    return Finish(index);
  }
  DeleteNext(index, std::move(topics), 0);
}

void CliTools::DeleteNext(size_t index, std::vector<ListedTopic> topics, size_t next) {
  if (next == topics.size()) return Finish(index);
  const std::string topic = topics[next].name;
  cluster_.topic_admin().DeleteTopic(
      topic, [this, alive = std::weak_ptr<bool>(alive_), index, topics = std::move(topics), next,
              topic](Result<std::string> deleted) mutable {
        if (alive.expired()) return;
        if (deleted.ok()) {
          Print(index, *deleted);
          return DeleteNext(index, std::move(topics), next + 1);
        }
        // TopicCommand.deleteTopic: an internal topic's AdminOperationException as it is, any
        // other failure as "Error while deleting topic t"; either ends the command.
        const std::string message = deleted.status() == Errc::kInvalidTopicException
                                        ? ErrorText(deleted.status())
                                        : "Error while deleting topic " + topic;
        Print(index, std::string(kTopicCommandError) + message);
        Finish(index);
      });
}

// ---- kafka-console-producer.sh ------------------------------------------------------------------

Status CliTools::RunConsoleProducer(size_t index, const CliAction& action) {
  const CliCommand& command = action.parsed;
  if (!command.topic) {
    Print(index, "Missing required argument \"[topic]\"");
    Later([this, index] { Finish(index); });
    return Status::Ok();
  }
  ProducerClientOptions options;
  options.id = ClientName(index);
  options.topic = *command.topic;
  options.kafka_version = action.kafka_version;
  options.config = ConsoleProducerConfig(options.kafka_version);
  options.bootstrap = BrokerNodes();
  auto outstanding = std::make_shared<size_t>(action.input.size());
  // The client (owned here) keeps this callback: `this` outlives it.
  options.on_completion = [this, index, outstanding](const HistoryOp& op) {
    KSIM_CHECK(*outstanding > 0);
    --*outstanding;
    if (op.type != OpType::kOk && !op.crashed) {
      // ErrorLoggingCallback(topic, key, value, logAsString = false): sizes, not contents.
      const JavaError error = ExceptionOf(op.error);
      std::string message(error.message);
      if (op.error == Errc::kRequestTimedOut && op.partition.value() < 0) {
        // Never got a partition: the metadata wait (KafkaProducer.waitOnMetadata) ran out.
        message = "Failed to update metadata after 60000 ms.";
      }
      output_(index, "ERROR Error when sending message to topic " + std::string(op.topic) +
                         " with key: null, value: " + std::to_string(op.value.size()) +
                         " bytes with error: " + std::string(kErrorLoggingCallback));
      output_(index,
              "org.apache.kafka.common.errors." + std::string(error.exception) + ": " + message);
    }
    if (*outstanding == 0) Finish(index);
  };
  KSIM_ASSIGN_OR_RETURN(std::unique_ptr<ProducerClient> client,
                        ProducerClient::Create(cluster_.world(), history_, std::move(options)));
  ProducerClient& producer = *client;
  producers_.push_back(std::move(client));
  // Every line typed is sent at once, in order (the tool's send() is asynchronous and the
  // records wait linger.ms in the accumulator, so lines typed together go in one batch).
  for (const std::string& line : action.input) {
    KSIM_RETURN_IF_ERROR(producer.Produce(line).status());
  }
  if (action.input.empty()) Later([this, index] { Finish(index); });
  return Status::Ok();
}

// ---- kafka-console-consumer.sh ------------------------------------------------------------------

Status CliTools::RunConsoleConsumer(size_t index, const CliAction& action) {
  const CliCommand& command = action.parsed;
  if (!command.topic) {
    Print(index, "Missing required argument \"[topic]\"");
    Later([this, index] { Finish(index); });
    return Status::Ok();
  }
  const KafkaRelease release = action.kafka_version;  // the tool's, not the brokers'
  if (!command.zookeeper.empty() && release >= KafkaRelease::k2_0) {
    // Kafka 2.0 removed the old consumer and the tool's --zookeeper (KAFKA-2983): joptsimple's
    // UnrecognizedOptionException, printed by CommandLineUtils.printUsageAndDie.
    Print(index, "zookeeper is not a recognized option");
    Later([this, index] { Finish(index); });
    return Status::Ok();
  }
  if (release < KafkaRelease::k0_10_0 &&
      (!command.bootstrap_server.empty() || command.new_consumer)) {
    // 0.8.2.2's ConsoleConsumer has neither option (only the old consumer): joptsimple's
    // UnrecognizedOptionException, as at 2.0 for --zookeeper.
    Print(index,
          std::string(command.bootstrap_server.empty() ? "new-consumer" : "bootstrap-server") +
              " is not a recognized option");
    Later([this, index] { Finish(index); });
    return Status::Ok();
  }
  if (command.zookeeper.empty() && !command.new_consumer && release < KafkaRelease::k0_10_1) {
    // 0.10.0.1's ConsoleConsumer: checkRequiredArgs(parser, options, if (useNewConsumer)
    // bootstrapServerOpt else zkConnectOpt): without --new-consumer it wants --zookeeper.
    Print(index, "Missing required argument \"[zookeeper]\"");
    Later([this, index] { Finish(index); });
    return Status::Ok();
  }
  if (!command.zookeeper.empty() && release >= KafkaRelease::k0_10_1) {
    // 0.10.1.0 to 1.1's ConsoleConsumer.ConsumerConfig, on stderr.
    Print(index,
          "Using the ConsoleConsumer with old consumer is deprecated and will be removed in a "
          "future major release. Consider using the new consumer by passing [bootstrap-server] "
          "instead of [zookeeper].");
  }
  struct State {
    ConsumerClient* client = nullptr;
    int64_t printed = 0;
    std::string generated_group;  // the old consumer's group when the tool made it up
  };
  auto state = std::make_shared<State>();
  const std::optional<int64_t> max_messages = command.max_messages;
  ConsumerClientOptions options;
  options.id = ClientName(index);
  options.topics = {*command.topic};
  options.group = command.group.value_or("");
  options.kafka_version = release;
  options.bootstrap = BrokerNodes();
  if (!command.zookeeper.empty()) {
    // --zookeeper: the old consumer (ConsoleConsumer.getOldConsumerProps), always in a group:
    // without one given, "console-consumer-<random below 100000>", whose ZooKeeper path the tool
    // deletes when it ends. It subscribes through a Whitelist of the topic.
    options.kind = ConsumerKind::kZookeeper;
    options.subscription_pattern = "white_list";
    if (options.group.empty()) {
      RandomStream random = cluster_.world().StreamFor(ClientName(index) + "/group");
      options.group = "console-consumer-" + std::to_string(random.UniformInt(0, 99999));
      state->generated_group = options.group;
    }
    options.config = {{"auto.offset.reset", command.from_beginning ? "smallest" : "largest"}};
  } else {
    options.config = {{"auto.offset.reset", command.from_beginning ? "earliest" : "latest"}};
  }
  // DefaultMessageFormatter: the value, then a line separator. The client keeps this callback.
  options.on_deliver = [this, index, state, max_messages](const ConsumerRecord& record) {
    output_(index, record.value);
    ++state->printed;
    if (max_messages && state->printed >= *max_messages) {
      StopConsumer(index, *state->client, state->generated_group);
    }
  };
  auto start = [this, index, state, max_messages](ConsumerClientOptions options) -> Status {
    KSIM_ASSIGN_OR_RETURN(std::unique_ptr<ConsumerClient> client,
                          ConsumerClient::Create(cluster_.world(), history_, std::move(options)));
    state->client = client.get();
    consumers_.push_back(std::move(client));
    if (max_messages && *max_messages <= 0) {
      StopConsumer(index, *state->client, state->generated_group);
    }
    return Status::Ok();
  };
  if (command.zookeeper.empty()) return start(std::move(options));
  if (cluster_.world().FindNode(options.id) != nullptr) {
    return Status(Errc::kInvalidArgument, "node name taken: " + options.id);
  }
  // The old consumer starts after ConsoleConsumer.checkZk (0.10.0.1 to 1.1), each check one
  // ZooKeeper exists(); a failed read counts as absent (checkZkPathExists catches everything).
  // Either refusal is printed on stderr and ends the tool (System.exit(1)).
  auto pending = std::make_shared<ConsumerClientOptions>(std::move(options));
  auto refuse = [this, index](const std::string& line) {
    Print(index, line);
    Finish(index);
  };
  auto launch = [pending, start, refuse] {
    if (Status started = start(*pending); !started.ok()) refuse(started.message());
  };
  auto alive = std::weak_ptr<bool>(alive_);
  cluster_.admin().Exists(
      std::string(zk::kBrokerIdsPath), false,
      [this, alive, pending, refuse, launch,
       from_beginning = command.from_beginning](Result<std::optional<ZnodeStat>> brokers) {
        if (alive.expired()) return;
        if (!brokers.ok() || !brokers->has_value()) return refuse("No brokers found in ZK.");
        if (!from_beginning) return launch();
        // --from-beginning (auto.offset.reset=smallest) would not apply to a group with offsets.
        cluster_.admin().Exists(
            zk::ConsumerGroupPath(pending->group) + "/offsets", false,  // ZKGroupDirs
            [alive, pending, refuse, launch](Result<std::optional<ZnodeStat>> offsets) {
              if (alive.expired()) return;
              if (offsets.ok() && offsets->has_value()) {
                return refuse("Found previous offset information for this group " + pending->group +
                              ". Please use --delete-consumer-offsets to delete previous offsets "
                              "metadata");
              }
              launch();
            });
      });
  return Status::Ok();
}

void CliTools::StopConsumer(size_t index, ConsumerClient& client,
                            const std::string& generated_group) {
  // ConsoleConsumer.process stops at --max-messages and prints the count on the way out.
  output_(index, "Processed a total of " + std::to_string(client.delivered()) + " messages");
  if (client.kind() != ConsumerKind::kZookeeper) {
    client.Stop();
    Later([this, index] { Finish(index); });
    return;
  }
  // The old consumer: done once its shutdown (commit, ZooKeeper session closed) is over. When the
  // tool made its group up it then deletes /consumers/<group> ("avoid polluting zookeeper with
  // persistent group data").
  client.Stop([this, index, group = generated_group, alive = std::weak_ptr<bool>(alive_)] {
    if (alive.expired()) return;
    if (group.empty()) return Finish(index);
    DeleteRecursive(cluster_.admin(), zk::ConsumerGroupPath(group), [this, index, alive](Status) {
      if (!alive.expired()) Finish(index);
    });
  });
}

std::string CliTools::ClientName(size_t index) { return node::CliTool(index); }

}  // namespace ksim::sim
