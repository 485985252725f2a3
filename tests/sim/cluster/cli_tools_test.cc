// The seed's command-line tools on a simulated cluster (sim/cluster/cli_tools.h): the exact lines
// Kafka 0.10's kafka-topics.sh, console producer and console consumer print for the seed's
// walkthrough (create enbook RF=1, list, produce "hello java", consume from the beginning,
// delete; frbook RF=3; a replication factor above the broker count refused), describe after a
// crash, --max-messages, and a consumer without --from-beginning.
#include "sim/cluster/cli_tools.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/cluster/topic.h"
#include "core/zk/paths.h"
#include "sim/scenario/cli.h"
#include "tests/support/sim/client_test_util.h"

namespace ksim::sim::testing {
namespace {

constexpr TimeUs kWaitUs = 120 * kSecondUs;

// A ClientSim with a CliTools whose output and completions are collected per action index.
class CliSim {
 public:
  explicit CliSim(const std::string& scenario, uint64_t seed = 1,
                  ClusterOptions options = ClientClusterOptions())
      : run_(scenario, seed, std::move(options)),
        tools_(
            run_.cluster(), run_.history(),
            [this](size_t index, const std::string& line) { output_[index].push_back(line); },
            [this](size_t index) { done_.insert(index); }) {}

  ClientSim& run() { return run_; }
  Cluster& cluster() { return run_.cluster(); }
  CliTools& tools() { return tools_; }
  const std::vector<std::string>& output(size_t index) { return output_[index]; }
  bool done(size_t index) const { return done_.count(index) > 0; }

  // Starts `command` (with `input` for a console producer) as action `index`.
  ::testing::AssertionResult Start(size_t index, const std::string& command,
                                   std::vector<std::string> input = {}) {
    Result<CliCommand> parsed = ParseCliCommand(command);
    if (!parsed.ok()) return ::testing::AssertionFailure() << parsed.status().ToString();
    CliAction action{command, std::move(input), std::move(parsed).value()};
    // As the loader does: the scenario's release unless the action names the tool's own.
    action.kafka_version = tool_release_.value_or(cluster().options().kafka_version);
    Status started = tools_.Run(index, action);
    if (!started.ok()) return ::testing::AssertionFailure() << started.ToString();
    return ::testing::AssertionSuccess();
  }
  // Start, then runs until the command is done; returns its output.
  std::vector<std::string> Command(size_t index, const std::string& command,
                                   std::vector<std::string> input = {}) {
    EXPECT_TRUE(Start(index, command, std::move(input)));
    EXPECT_TRUE(cluster().RunUntil([&] { return done(index); }, kWaitUs)) << command;
    return output_[index];
  }
  bool RunUntilLines(size_t index, size_t lines) {
    return cluster().RunUntil([&] { return output_[index].size() >= lines; }, kWaitUs);
  }
  // Runs until every partition of `topic` has a leader the controller knows.
  bool RunUntilLed(const std::string& topic, int32_t partitions) {
    return cluster().RunUntil(
        [&] {
          for (int32_t p = 0; p < partitions; ++p) {
            if (cluster().LeaderOf(TopicPartition{topic, PartitionId(p)}) == kNoBroker) {
              return false;
            }
          }
          return true;
        },
        kWaitUs);
  }
  // The i-th console consumer, once started (--zookeeper starts it after two ZooKeeper reads).
  ConsumerClient& consumer(size_t i) {
    EXPECT_TRUE(cluster().RunUntil([&] { return tools_.consumers().size() > i; }, kWaitUs));
    return *tools_.consumers().at(i);
  }
  // The release the next commands run as (a `cli` action's kafka_version).
  void set_tool_release(KafkaRelease release) { tool_release_ = release; }

 private:
  std::optional<KafkaRelease> tool_release_;
  ClientSim run_;
  std::map<size_t, std::vector<std::string>> output_;
  std::set<size_t> done_;
  CliTools tools_;
};

using Lines = std::vector<std::string>;

const std::string kTopics = "kafka-topics.sh --zookeeper hadoop01:2181 ";
const std::string kProducer =
    "kafka-console-producer.sh --broker-list hadoop01:9092,hadoop02:9092,hadoop03:9092 ";
const std::string kConsumer = "kafka-console-consumer.sh --zookeeper hadoop01:2181 ";

TEST(CliToolsTest, CreateAnswersAsTopicCommand) {
  CliSim sim("cli-create");
  ASSERT_TRUE(sim.run().Start());
  EXPECT_EQ(
      sim.Command(0, kTopics + "--create --replication-factor 1 --partitions 1 --topic enbook"),
      Lines{"Created topic \"enbook\"."});
  EXPECT_EQ(
      sim.Command(1, kTopics + "--create --replication-factor 1 --partitions 1 --topic enbook"),
      Lines{"Error while executing topic command : Topic \"enbook\" already exists."});
  EXPECT_EQ(
      sim.Command(2, kTopics + "--create --replication-factor 3 --partitions 1 --topic frbook"),
      Lines{"Created topic \"frbook\"."});
  EXPECT_EQ(sim.Command(3, kTopics + "--create --replication-factor 4 --partitions 1 --topic big"),
            Lines{"Error while executing topic command : replication factor: 4 larger than "
                  "available brokers: 3"});
  EXPECT_EQ(sim.Command(4, kTopics + "--create --replication-factor 1 --partitions 2 --topic a.b"),
            (Lines{std::string(ksim::kTopicCollisionWarning), "Created topic \"a.b\"."}));
  EXPECT_EQ(sim.tools().created_topics(), (Lines{"enbook", "frbook", "a.b"}));
  // The partitions exist: frbook's single partition is led (three replicas, one per broker).
  EXPECT_TRUE(sim.RunUntilLed("frbook", 1));
  EXPECT_EQ(sim.cluster().ZkPartitionState(TopicPartition{"frbook", PartitionId(0)})->isr.size(),
            3u);
}

TEST(CliToolsTest, ListShowsTopicsMarkedForDeletion) {
  CliSim sim("cli-list-delete");
  ASSERT_TRUE(sim.run().Start());
  sim.Command(0, kTopics + "--create --replication-factor 1 --partitions 1 --topic enbook");
  sim.Command(1, kTopics + "--create --replication-factor 3 --partitions 1 --topic frbook");
  EXPECT_EQ(sim.Command(2, kTopics + "--list"), (Lines{"enbook", "frbook"}));
  // delete.topic.enable is false in 0.10: the topic stays, marked.
  EXPECT_EQ(sim.Command(3, kTopics + "--delete --topic enbook"),
            (Lines{"Topic enbook is marked for deletion.",
                   "Note: This will have no impact if delete.topic.enable is not set to true."}));
  EXPECT_EQ(sim.Command(4, kTopics + "--list"), (Lines{"enbook - marked for deletion", "frbook"}));
  EXPECT_EQ(sim.Command(5, kTopics + "--delete --topic enbook"),
            Lines{"Topic enbook is already marked for deletion."});
  // --topic is a regular expression over whole names, as Kafka's Whitelist.
  EXPECT_EQ(sim.Command(6, kTopics + "--list --topic fr.*"), Lines{"frbook"});
  EXPECT_EQ(sim.Command(7, kTopics + "--list --topic book"), Lines{});
  EXPECT_EQ(sim.Command(8, kTopics + "--delete --topic nosuch"),
            Lines{"Error while executing topic command : Topic nosuch does not exist on ZK path "
                  "hadoop01:2181"});
}

TEST(CliToolsTest, DescribeAfterALeaderCrashShowsTheNewLeaderAndTheShrunkIsr) {
  CliSim sim("cli-describe");
  ASSERT_TRUE(sim.run().Start());
  sim.Command(0, kTopics + "--create --replica-assignment 2:3:1 --topic frbook --config " +
                     "retention.ms=60000");
  ASSERT_TRUE(sim.RunUntilLed("frbook", 1));
  EXPECT_EQ(
      sim.Command(1, kTopics + "--describe --topic frbook"),
      (Lines{"Topic:frbook\tPartitionCount:1\tReplicationFactor:3\tConfigs:retention.ms=60000",
             "\tTopic: frbook\tPartition: 0\tLeader: 2\tReplicas: 2,3,1\tIsr: 2,3,1"}));
  // The preferred leader dies: the controller elects the next live replica of the ISR and
  // writes the ISR without the dead broker.
  ASSERT_TRUE(sim.cluster().CrashBroker(BrokerId(2)).ok());
  const TopicPartition tp{"frbook", PartitionId(0)};
  ASSERT_TRUE(sim.cluster().RunUntil(
      [&] {
        std::optional<zk::PartitionState> state = sim.cluster().ZkPartitionState(tp);
        return state && state->isr.size() == 2;
      },
      kWaitUs));
  EXPECT_EQ(
      sim.Command(2, kTopics + "--describe --topic frbook"),
      (Lines{"Topic:frbook\tPartitionCount:1\tReplicationFactor:3\tConfigs:retention.ms=60000",
             "\tTopic: frbook\tPartition: 0\tLeader: 3\tReplicas: 2,3,1\tIsr: 3,1"}));
}

TEST(CliToolsTest, ProducedLinesAreConsumedFromTheBeginningInOrder) {
  CliSim sim("cli-walkthrough");
  ASSERT_TRUE(sim.run().Start());
  sim.Command(0, kTopics + "--create --replication-factor 1 --partitions 1 --topic enbook");
  const Lines typed = {"hello java", "hello kafka", "hello simulation"};
  // Success prints nothing.
  EXPECT_EQ(sim.Command(1, kProducer + "--topic enbook", typed), Lines{});
  ASSERT_EQ(sim.tools().producers().size(), 1u);
  EXPECT_EQ(sim.tools().producers()[0]->id(), "cli-1");
  // --request-required-acks defaults to 0 in Kafka 0.10.0 (1 from 0.10.1, KAFKA-3129).
  EXPECT_EQ(sim.tools().producers()[0]->config().acks, 0);
  ASSERT_TRUE(sim.Start(2, kConsumer + "--topic enbook --from-beginning"));
  ASSERT_TRUE(sim.RunUntilLines(2, typed.size()));
  sim.cluster().RunFor(5 * kSecondUs);  // nothing more comes, the consumer keeps running
  EXPECT_EQ(sim.output(2), typed);
  EXPECT_FALSE(sim.done(2));
  // The sends and deliveries are in the history under the tools' client ids.
  const auto acks = sim.run().history().Select(OpFunction::kSend, OpType::kOk);
  ASSERT_EQ(acks.size(), typed.size());
  const auto delivered = sim.run().history().Select(OpFunction::kDeliver, OpType::kOk);
  ASSERT_EQ(delivered.size(), typed.size());
  for (size_t i = 0; i < typed.size(); ++i) {
    EXPECT_EQ(acks[i]->process, "cli-1");
    EXPECT_EQ(delivered[i]->process, "cli-2");
    EXPECT_EQ(delivered[i]->value, typed[i]);
    EXPECT_EQ(delivered[i]->record_id, acks[i]->record_id);
  }
}

TEST(CliToolsTest, ConsoleProducerAcksFollowTheRelease) {
  // 0.10.0.1's ConsoleProducer: --request-required-acks defaultsTo(0); KAFKA-3129 made it 1 in
  // 0.10.1.0.
  for (KafkaRelease release : {KafkaRelease::k0_10_0, KafkaRelease::k0_10_1, KafkaRelease::k2_0}) {
    ClusterOptions options = ClientClusterOptions();
    options.kafka_version = release;
    CliSim sim("cli-console-acks", 1, std::move(options));
    ASSERT_TRUE(sim.run().Start());
    sim.Command(0, kTopics + "--create --replication-factor 1 --partitions 1 --topic enbook");
    EXPECT_EQ(sim.Command(1, kProducer + "--topic enbook", {"hello java"}), Lines{});
    ASSERT_EQ(sim.tools().producers().size(), 1u);
    EXPECT_EQ(sim.tools().producers()[0]->config().acks, release == KafkaRelease::k0_10_0 ? 0 : 1)
        << KafkaReleaseName(release);
  }
}

TEST(CliToolsTest, MaxMessagesStopsTheConsumerAndPrintsTheTotal) {
  CliSim sim("cli-max-messages");
  ASSERT_TRUE(sim.run().Start());
  sim.Command(0, kTopics + "--create --replication-factor 3 --partitions 1 --topic frbook");
  sim.Command(1, kProducer + "--topic frbook", {"one", "two", "three", "four", "five"});
  EXPECT_EQ(sim.Command(2, kConsumer + "--topic frbook --from-beginning --max-messages 2"),
            (Lines{"one", "two", "Processed a total of 2 messages"}));
  sim.cluster().RunFor(10 * kSecondUs);
  EXPECT_EQ(sim.output(2).size(), 3u);
  EXPECT_TRUE(sim.consumer(0).stopped());
  EXPECT_EQ(sim.consumer(0).delivered(), 2);
  EXPECT_FALSE(sim.run().world().node("cli-2").up());
  EXPECT_EQ(sim.run().history().Select(OpFunction::kDeliver, OpType::kOk).size(), 2u);
}

TEST(CliToolsTest, ConsumerWithoutFromBeginningSkipsEarlierRecords) {
  CliSim sim("cli-latest");
  ASSERT_TRUE(sim.run().Start());
  sim.Command(0, kTopics + "--create --replication-factor 1 --partitions 2 --topic enbook");
  sim.Command(1, kProducer + "--topic enbook", {"before 1", "before 2"});
  ASSERT_TRUE(sim.Start(2, kConsumer + "--topic enbook"));
  // Once it has a position on every partition (the log ends then), later records reach it.
  ASSERT_TRUE(sim.cluster().RunUntil(
      [&] {
        // --zookeeper: the old consumer.
        if (sim.tools().consumers().empty()) return false;
        ZookeeperConsumer* consumer = sim.tools().consumers()[0]->zookeeper_consumer();
        return consumer != nullptr && consumer->positions().size() == 2;
      },
      kWaitUs));
  sim.Command(3, kProducer + "--topic enbook", {"after 1"});
  ASSERT_TRUE(sim.RunUntilLines(2, 1));
  sim.cluster().RunFor(5 * kSecondUs);
  EXPECT_EQ(sim.output(2), Lines{"after 1"});
  // The same records from the beginning: all three (two partitions: no order between them).
  ASSERT_TRUE(sim.Start(4, kConsumer + "--topic enbook --from-beginning"));
  ASSERT_TRUE(sim.RunUntilLines(4, 3));
  const std::set<std::string> all(sim.output(4).begin(), sim.output(4).end());
  EXPECT_EQ(all, (std::set<std::string>{"before 1", "before 2", "after 1"}));
}

TEST(CliToolsTest, ZookeeperConsoleConsumerRunsTheOldConsumerInAGroupOfItsOwn) {
  CliSim sim("cli-old-consumer");
  ASSERT_TRUE(sim.run().Start());
  sim.Command(0, kTopics + "--create --replication-factor 1 --partitions 1 --topic frbook");
  ASSERT_TRUE(sim.RunUntilLed("frbook", 1));
  sim.Command(1, kProducer + "--topic frbook", {"one", "two", "three"});
  ASSERT_TRUE(sim.Start(2, kConsumer + "--topic frbook --from-beginning"));
  ASSERT_TRUE(sim.RunUntilLines(2, 3));
  ConsumerClient& running = sim.consumer(0);
  EXPECT_EQ(running.kind(), ConsumerKind::kZookeeper);
  EXPECT_TRUE(running.group().starts_with("console-consumer-")) << running.group();
  ZooKeeperServer& zk = sim.cluster().zookeeper();
  const std::vector<std::string> ids = zk.Children(zk::ConsumerIdsPath(running.group()));
  ASSERT_EQ(ids.size(), 1u);
  Result<zk::ConsumerRegistration> registration =
      zk::DecodeConsumerRegistration(zk.Read(zk::ConsumerIdPath(running.group(), ids[0]))->data);
  ASSERT_TRUE(registration.ok());
  EXPECT_EQ(registration->pattern, "white_list");  // ConsoleConsumer's Whitelist(topic)
  // --max-messages: the consumer closes, then the tool deletes the group it made up.
  EXPECT_EQ(sim.Command(3, kConsumer + "--topic frbook --from-beginning --max-messages 2"),
            (Lines{"one", "two", "Processed a total of 2 messages"}));
  ConsumerClient& stopped = sim.consumer(1);
  EXPECT_NE(stopped.group(), running.group());
  EXPECT_FALSE(zk.Read(zk::ConsumerGroupPath(stopped.group())).has_value());
  EXPECT_TRUE(zk.Read(zk::ConsumerGroupPath(running.group())).has_value());
  // A named group is the tool's user's: kept.
  sim.Command(4, kConsumer + "--topic frbook --from-beginning --group mine --max-messages 1");
  // Its close committed the one message handed out (the old consumer's iterator counts each
  // message consumed as it hands it out).
  std::optional<ZnodeData> committed =
      zk.Read(zk::ConsumerOffsetPath("mine", "frbook", PartitionId(0)));
  ASSERT_TRUE(committed.has_value());
  EXPECT_EQ(committed->data, "1");
}

// ConsoleConsumer.checkZk (0.10.0.1 to 1.1), before the old consumer starts: --from-beginning
// with a group that has offsets in ZooKeeper is refused (the reset would not apply), and a
// ZooKeeper that cannot say /brokers/ids exists means "No brokers found in ZK.".
TEST(CliToolsTest, ZookeeperConsoleConsumerChecksZookeeperFirst) {
  CliSim sim("cli-old-consumer-check-zk");
  ASSERT_TRUE(sim.run().Start());
  sim.Command(0, kTopics + "--create --replication-factor 1 --partitions 1 --topic frbook");
  ASSERT_TRUE(sim.RunUntilLed("frbook", 1));
  sim.Command(1, kProducer + "--topic frbook", {"one", "two"});
  EXPECT_EQ(sim.Command(2, kConsumer + "--topic frbook --from-beginning --group mine "
                                       "--max-messages 1"),
            (Lines{"one", "Processed a total of 1 messages"}));
  EXPECT_EQ(sim.Command(3, kConsumer + "--topic frbook --from-beginning --group mine"),
            Lines{"Found previous offset information for this group mine. Please use "
                  "--delete-consumer-offsets to delete previous offsets metadata"});
  EXPECT_EQ(sim.tools().consumers().size(), 1u) << "the refused tool started no consumer";
  // Without --from-beginning the group resumes from its offset.
  ASSERT_TRUE(sim.Start(4, kConsumer + "--topic frbook --group mine"));
  ASSERT_TRUE(sim.RunUntilLines(4, 1));
  EXPECT_EQ(sim.output(4), Lines{"two"});
  sim.cluster().zookeeper().Down();
  EXPECT_EQ(sim.Command(5, kConsumer + "--topic frbook"), Lines{"No brokers found in ZK."});
}

TEST(CliToolsTest, ZookeeperConsoleConsumerFollowsTheRelease) {
  // Deprecated from 0.10.1 (a line on stderr), gone in 2.0 (KAFKA-2983).
  ClusterOptions options = ClientClusterOptions();
  options.kafka_version = KafkaRelease::k0_10_1;
  CliSim deprecated("cli-old-consumer-0101", 1, options);
  ASSERT_TRUE(deprecated.run().Start());
  ASSERT_TRUE(deprecated.Start(0, kConsumer + "--topic frbook"));
  ASSERT_FALSE(deprecated.output(0).empty());
  EXPECT_TRUE(deprecated.output(0)[0].starts_with(
      "Using the ConsoleConsumer with old consumer is deprecated"));
  EXPECT_EQ(deprecated.consumer(0).kind(), ConsumerKind::kZookeeper);
  options.kafka_version = KafkaRelease::k2_0;
  CliSim removed("cli-old-consumer-20", 1, options);
  ASSERT_TRUE(removed.run().Start());
  EXPECT_EQ(removed.Command(0, kConsumer + "--topic frbook"),
            Lines{"zookeeper is not a recognized option"});
  EXPECT_TRUE(removed.tools().consumers().empty());
}

// A `cli` action's own kafka_version is the tool's release, whatever the brokers run (issue 18):
// a 0.10.0 console consumer --zookeeper runs the old consumer against 2.0 brokers, whose own
// tool has no --zookeeper; a 0.10.2 one prints 0.10.1's deprecation line against 0.10.1 brokers;
// the console producer's acks default is the tool's (0 at 0.10.0, 1 from 0.10.1).
TEST(CliToolsTest, AToolOfItsOwnReleaseAgainstTheBrokers) {
  ClusterOptions options = ClientClusterOptions();
  options.kafka_version = KafkaRelease::k2_0;
  CliSim old_tool("cli-tool-0100-brokers-20", 1, options);
  ASSERT_TRUE(old_tool.run().Start());
  old_tool.Command(0, kTopics + "--create --replication-factor 1 --partitions 1 --topic frbook");
  ASSERT_TRUE(old_tool.RunUntilLed("frbook", 1));
  old_tool.set_tool_release(KafkaRelease::k0_10_0);
  old_tool.Command(1, kProducer + "--topic frbook", {"one", "two"});
  EXPECT_EQ(old_tool.tools().producers()[0]->config().acks, 0) << "0.10.0's console producer";
  ASSERT_TRUE(old_tool.Start(2, kConsumer + "--topic frbook --from-beginning"));
  ASSERT_TRUE(old_tool.RunUntilLines(2, 2));
  EXPECT_EQ(old_tool.output(2), (Lines{"one", "two"})) << "no deprecation line at 0.10.0";
  EXPECT_EQ(old_tool.consumer(0).kind(), ConsumerKind::kZookeeper);

  options.kafka_version = KafkaRelease::k0_10_1;
  CliSim new_tool("cli-tool-0102-brokers-0101", 1, options);
  ASSERT_TRUE(new_tool.run().Start());
  new_tool.set_tool_release(KafkaRelease::k0_10_2);
  new_tool.Command(0, kProducer + "--topic frbook", {});
  EXPECT_EQ(new_tool.tools().producers()[0]->config().acks, 1) << "0.10.2's console producer";
  ASSERT_TRUE(new_tool.Start(1, kConsumer + "--topic frbook"));
  ASSERT_FALSE(new_tool.output(1).empty());
  EXPECT_TRUE(new_tool.output(1)[0].starts_with(
      "Using the ConsoleConsumer with old consumer is deprecated"));
  EXPECT_EQ(new_tool.consumer(0).kind(), ConsumerKind::kZookeeper);
  new_tool.set_tool_release(KafkaRelease::k2_0);
  EXPECT_EQ(new_tool.Command(2, kConsumer + "--topic frbook"),
            Lines{"zookeeper is not a recognized option"});
}

TEST(CliToolsTest, BootstrapServerNeedsNewConsumerAt0100) {
  // 0.10.0.1: checkRequiredArgs(..., if (useNewConsumer) bootstrapServerOpt else zkConnectOpt).
  const std::string bootstrap = "kafka-console-consumer.sh --bootstrap-server hadoop01:9092 ";
  CliSim refused("cli-new-consumer-0100");
  ASSERT_TRUE(refused.run().Start());
  EXPECT_EQ(refused.Command(0, bootstrap + "--topic frbook"),
            Lines{"Missing required argument \"[zookeeper]\""});
  EXPECT_TRUE(refused.tools().consumers().empty());
  CliSim accepted("cli-new-consumer-0100-flag");
  ASSERT_TRUE(accepted.run().Start());
  ASSERT_TRUE(accepted.Start(0, bootstrap + "--new-consumer --topic frbook"));
  EXPECT_EQ(accepted.consumer(0).kind(), ConsumerKind::kGroupCoordinator);
  // From 0.10.1 --bootstrap-server alone is the new consumer.
  ClusterOptions options = ClientClusterOptions();
  options.kafka_version = KafkaRelease::k0_10_1;
  CliSim later("cli-new-consumer-0101", 1, options);
  ASSERT_TRUE(later.run().Start());
  ASSERT_TRUE(later.Start(0, bootstrap + "--topic frbook"));
  EXPECT_EQ(later.consumer(0).kind(), ConsumerKind::kGroupCoordinator);
}

// 0.8.2.2's ConsoleConsumer has only the old consumer: --bootstrap-server and --new-consumer are
// joptsimple's unrecognized options and nothing runs; --zookeeper runs the old consumer.
TEST(CliToolsTest, Kafka082ConsoleConsumerKnowsOnlyZookeeper) {
  ClusterOptions options = ClientClusterOptions();
  options.kafka_version = KafkaRelease::k0_8_2;
  CliSim sim("cli-console-consumer-082", 1, options);
  ASSERT_TRUE(sim.run().Start());
  EXPECT_EQ(sim.Command(0,
                        "kafka-console-consumer.sh --bootstrap-server hadoop01:9092 "
                        "--new-consumer --topic frbook"),
            Lines{"bootstrap-server is not a recognized option"});
  EXPECT_TRUE(sim.tools().consumers().empty());
  CliSim flag("cli-console-consumer-082-flag", 1, options);
  ASSERT_TRUE(flag.run().Start());
  EXPECT_EQ(flag.Command(0,
                         "kafka-console-consumer.sh --zookeeper hadoop01:2181 --new-consumer "
                         "--topic frbook"),
            Lines{"new-consumer is not a recognized option"});
  EXPECT_TRUE(flag.tools().consumers().empty());
  CliSim old("cli-console-consumer-082-zk", 1, options);
  ASSERT_TRUE(old.run().Start());
  ASSERT_TRUE(old.Start(0, "kafka-console-consumer.sh --zookeeper hadoop01:2181 --topic frbook"));
  EXPECT_EQ(old.consumer(0).kind(), ConsumerKind::kZookeeper);
}

// 0.8.2's console producer (its --new-producer props) sets that producer's names: timeout.ms
// from --request-timeout-ms, metadata.fetch.timeout.ms, block.on.buffer.full=false; the
// producer starts and writes, and times nothing out on its side.
TEST(CliToolsTest, Kafka082ConsoleProducerSetsItsReleasesTimeouts) {
  ClusterOptions options = ClientClusterOptions();
  options.kafka_version = KafkaRelease::k0_8_2;
  CliSim sim("cli-console-producer-082", 1, options);
  ASSERT_TRUE(sim.run().Start());
  sim.Command(0, kTopics + "--create --replication-factor 1 --partitions 1 --topic frbook");
  ASSERT_TRUE(sim.RunUntilLed("frbook", 1));
  EXPECT_EQ(sim.Command(1, kProducer + "--topic frbook", {"one"}), Lines{});
  ASSERT_EQ(sim.tools().producers().size(), 1u);
  const ProducerConfig& config = sim.tools().producers()[0]->config();
  EXPECT_EQ(config.request_timeout_ms, 1500) << "timeout.ms, the broker's wait for acks";
  EXPECT_EQ(config.max_block_ms, 60000) << "metadata.fetch.timeout.ms";
  EXPECT_EQ(config.acks, 0);
  EXPECT_TRUE(config.warnings.empty());
  EXPECT_FALSE(RequestTimeoutsApply(config.release));
}

TEST(CliToolsTest, FailedSendPrintsErrorLoggingCallbackLines) {
  // At 0.10.1, whose console producer waits for the leader (acks=1).
  ClusterOptions options = ClientClusterOptions();
  options.kafka_version = KafkaRelease::k0_10_1;
  CliSim sim("cli-producer-error", 1, std::move(options));
  ASSERT_TRUE(sim.run().Start());
  sim.Command(0, kTopics + "--create --replica-assignment 1 --topic enbook");
  ASSERT_TRUE(sim.RunUntilLed("enbook", 1));
  // The only replica is gone: the record cannot be written anywhere.
  ASSERT_TRUE(sim.cluster().CrashBroker(BrokerId(1)).ok());
  const Lines output = sim.Command(1, kProducer + "--topic enbook", {"hello java"});
  ASSERT_EQ(output.size(), 2u);
  EXPECT_EQ(output[0],
            "ERROR Error when sending message to topic enbook with key: null, value: 10 bytes "
            "with error: (org.apache.kafka.clients.producer.internals.ErrorLoggingCallback)");
  EXPECT_EQ(output[1].rfind("org.apache.kafka.common.errors.", 0), 0u) << output[1];
  const auto failed = sim.run().history().Select(OpFunction::kSend, OpType::kFail);
  const auto unknown = sim.run().history().Select(OpFunction::kSend, OpType::kInfo);
  EXPECT_EQ(failed.size() + unknown.size(), 1u);
  EXPECT_TRUE(sim.run().history().Select(OpFunction::kSend, OpType::kOk).empty());
}

TEST(CliToolsTest, AtKafka0100TheConsoleProducerNeverHearsOfTheFailure) {
  // 0.10.0's console producer sends with acks=0: the broker never answers, so a record that
  // cannot be written prints nothing and is reported sent.
  CliSim sim("cli-producer-error-acks0");
  ASSERT_TRUE(sim.run().Start());
  sim.Command(0, kTopics + "--create --replica-assignment 1 --topic enbook");
  ASSERT_TRUE(sim.RunUntilLed("enbook", 1));
  ASSERT_TRUE(sim.cluster().CrashBroker(BrokerId(1)).ok());
  EXPECT_EQ(sim.Command(1, kProducer + "--topic enbook", {"hello java"}), Lines{});
  EXPECT_EQ(sim.run().history().Select(OpFunction::kSend, OpType::kOk).size(), 1u);
}

TEST(CliToolsTest, ACrashedConsoleProducerIsDoneWithoutPrinting) {
  CliSim sim("cli-producer-crash");
  ASSERT_TRUE(sim.run().Start());
  sim.Command(0, kTopics + "--create --replication-factor 1 --partitions 1 --topic enbook");
  ASSERT_TRUE(sim.Start(1, kProducer + "--topic enbook", {"lost"}));
  // Crashed while the record lingers (linger.ms = 1000): its outcome is unknown.
  ASSERT_TRUE(sim.run().world().CrashNode("cli-1").ok());
  ASSERT_TRUE(sim.cluster().RunUntil([&] { return sim.done(1); }, kWaitUs));
  EXPECT_EQ(sim.output(1), Lines{});
  const auto unknown = sim.run().history().Select(OpFunction::kSend, OpType::kInfo);
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_TRUE(unknown[0]->crashed);
}

TEST(CliToolsTest, ANodeNameTakenIsAnError) {
  CliSim sim("cli-name-taken");
  ASSERT_TRUE(sim.run().Start());
  ASSERT_TRUE(sim.run().world().AddNode("cli-0").ok());
  EXPECT_FALSE(sim.Start(0, kProducer + "--topic enbook", {"x"}));
  EXPECT_TRUE(sim.tools().producers().empty());
}

}  // namespace
}  // namespace ksim::sim::testing
