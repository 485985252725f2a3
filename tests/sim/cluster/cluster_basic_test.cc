// The simulated cluster end to end without faults: brokers register, a controller is elected,
// kafka-topics.sh --create gives every partition a leader and a full ISR (in ZooKeeper and on the
// brokers), produced records come back from a fetch in order, and the invariant checker, on
// after every step, finds nothing. Also: how each broker's configuration is layered
// (server.properties, the Cluster's index default, cluster-wide and per-broker overrides, what
// the simulation fixes), and kafka-topics.sh's refusals through the admin node.
#include <gtest/gtest.h>

#include "core/base/trace_names.h"
#include "tests/support/sim/cluster_test_util.h"

namespace ksim::sim::testing {
namespace {

const TopicPartition kT0{"t", PartitionId(0)};

TEST(ClusterBasicTest, ProducedRecordsAreReplicatedAndReadBack) {
  ClusterOptions options;
  options.brokers = 3;
  ClusterSim sim("basic", 1, options);
  ASSERT_TRUE(sim.Start());
  Cluster& cluster = sim.cluster();
  EXPECT_EQ(cluster.zookeeper().Children("/brokers/ids"),
            (std::vector<std::string>{"1", "2", "3"}));

  TopicSpec topic;
  topic.name = "t";
  topic.partitions = 1;
  topic.replication_factor = 3;
  ASSERT_TRUE(cluster.CreateTopicAndWait(topic).ok());

  // Everyone in sync: the ISR in ZooKeeper is the full assignment.
  ASSERT_TRUE(cluster.RunUntil(
      [&] {
        auto state = cluster.ZkPartitionState(kT0);
        return state && state->isr.size() == 3;
      },
      30 * kSecondUs));

  auto& client = sim.AddClient("p1");
  ASSERT_TRUE(sim.ProduceAndWait(client, kT0, -1, 20));
  ASSERT_EQ(client.Acked().size(), 20u);
  for (size_t i = 0; i < client.records().size(); ++i) {
    EXPECT_EQ(client.records()[i].offset, Offset(static_cast<int64_t>(i)));
  }

  ksim::testing::FetchResult read = sim.ReadAll(client, kT0);
  ASSERT_EQ(read.error, Errc::kNone);
  EXPECT_EQ(read.high_watermark, Offset(20));
  ASSERT_EQ(read.records.size(), 20u);
  EXPECT_EQ(read.records.front().value, "v-0");
  EXPECT_EQ(read.records.back().value, "v-19");

  // Every replica catches up to the same log end.
  ASSERT_TRUE(cluster.RunUntil(
      [&] {
        for (BrokerId id : cluster.broker_ids()) {
          const ksim::Partition* p = cluster.broker(id)->GetPartition(kT0);
          if (p == nullptr || p->log_end_offset() != Offset(20) ||
              p->high_watermark() != Offset(20)) {
            return false;
          }
        }
        return true;
      },
      30 * kSecondUs));
  EXPECT_TRUE(sim.NoViolations());
  EXPECT_GT(cluster.checker()->counters().batches_committed, 0u);
}

TEST(ClusterBasicTest, DeletedTopicCreatedAgainStartsOver) {
  ClusterOptions options;
  options.brokers = 3;
  options.config = {{"delete.topic.enable", "true"}};
  ClusterSim sim("delete-recreate", 3, options);
  ASSERT_TRUE(sim.Start());
  Cluster& cluster = sim.cluster();
  TopicSpec topic{"t", 1, 3, {}, {}};
  ASSERT_TRUE(cluster.CreateTopicAndWait(topic).ok());
  auto& client = sim.AddClient("p1");
  ASSERT_TRUE(sim.ProduceAndWait(client, kT0, -1, 5));

  std::optional<Result<std::string>> deleted;
  cluster.topic_admin().DeleteTopic("t", [&](Result<std::string> r) { deleted = std::move(r); });
  ASSERT_TRUE(cluster.RunUntil(
      [&] { return deleted.has_value() && !cluster.zookeeper().Read("/brokers/topics/t"); },
      60 * kSecondUs));
  ASSERT_TRUE(deleted->ok()) << deleted->status().ToString();

  ASSERT_TRUE(cluster.CreateTopicAndWait(topic).ok());
  ASSERT_TRUE(sim.ProduceAndWait(client, kT0, -1, 2));
  ksim::testing::FetchResult read = sim.ReadAll(client, kT0);
  ASSERT_EQ(read.error, Errc::kNone);
  EXPECT_EQ(Values(read.records), (std::vector<std::string>{"v-5", "v-6"}));
  EXPECT_TRUE(sim.NoViolations()) << "the checker forgot the deleted topic";
}

TEST(ClusterBasicTest, BrokerConfigurationLayers) {
  TraceWriter trace = TraceWriter::ToMemory(Header("config", 1));
  World world(1, std::move(trace));
  ClusterOptions options;
  options.brokers = 3;
  options.server_properties[2] =
      "broker.id=7\nlog.dirs=/data/kafka\nlog.index.size.max.bytes=2097152\n"
      "num.partitions=4\nlog.retention.hours=24\n";
  options.config = {{"log.retention.ms", "60000"}, {"num.partitions", "2"}};
  options.broker_config[3] = {{"num.partitions", "5"}};
  Result<std::unique_ptr<Cluster>> created = Cluster::Create(world, options);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Cluster& cluster = **created;
  for (BrokerId id : cluster.broker_ids()) {
    const BrokerConfig& config = cluster.broker_config(id);
    // What the simulation fixes wins over everything.
    EXPECT_EQ(config.broker_id, id.value());
    EXPECT_EQ(config.log_dirs, std::vector<std::string>{"/kafka-logs"});
    EXPECT_EQ(config.zookeeper_connect, "zk:2181");
    EXPECT_EQ(config.host_name, node::Broker(id));
    // The scenario's log.retention.ms beats the file's log.retention.hours.
    EXPECT_EQ(config.log_retention_ms, 60000);
  }
  // Kafka's 10 MiB index (the virtual disk stores it sparsely) unless the configuration names it.
  EXPECT_EQ(cluster.broker_config(BrokerId(1)).log_index_size_max_bytes, 10 << 20);
  EXPECT_EQ(cluster.broker_config(BrokerId(2)).log_index_size_max_bytes, 2 << 20);
  // Cluster-wide overrides beat the file; the broker's own beat the cluster's.
  EXPECT_EQ(cluster.broker_config(BrokerId(1)).num_partitions, 2);
  EXPECT_EQ(cluster.broker_config(BrokerId(2)).num_partitions, 2);
  EXPECT_EQ(cluster.broker_config(BrokerId(3)).num_partitions, 5);
  // Nodes: zk, the brokers with disks, admin.
  EXPECT_NE(world.FindNode("zk"), nullptr);
  EXPECT_NE(world.node("broker-3").disk(), nullptr);
  EXPECT_NE(world.FindNode("admin"), nullptr);
  EXPECT_EQ(world.FindNode("admin")->disk(), nullptr);
}

TEST(ClusterBasicTest, BadConfigurationNamesTheBroker) {
  World world(1, TraceWriter::ToMemory(Header("bad-config", 1)));
  ClusterOptions options;
  options.brokers = 2;
  options.broker_config[2] = {{"num.partitions", "many"}};
  Result<std::unique_ptr<Cluster>> created = Cluster::Create(world, options);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), Errc::kInvalidConfig);
  EXPECT_NE(created.status().message().find("broker 2"), std::string::npos)
      << created.status().message();
}

TEST(ClusterBasicTest, ElectionPolicyTheControllerCannotRunIsRefused) {
  for (const char* policy : {"longest-log", "fastest"}) {
    World world(1, TraceWriter::ToMemory(Header("bad-policy", 1)));
    ClusterOptions options;
    options.election_policy = policy;
    Result<std::unique_ptr<Cluster>> created = Cluster::Create(world, options);
    ASSERT_FALSE(created.ok()) << policy;
    EXPECT_EQ(created.status().code(), Errc::kInvalidArgument);
    EXPECT_NE(created.status().message().find(policy), std::string::npos)
        << created.status().message();
  }
  World world(1, TraceWriter::ToMemory(Header("good-policy", 1)));
  ClusterOptions options;
  options.election_policy = "wait-for-last-isr";
  EXPECT_TRUE(Cluster::Create(world, options).ok());
}

TEST(ClusterBasicTest, ReplicationFactorAboveLiveBrokersIsRefused) {
  ClusterOptions options;
  options.brokers = 2;
  ClusterSim sim("rf-too-large", 2, options);
  ASSERT_TRUE(sim.Start());
  TopicSpec topic;
  topic.name = "t";
  topic.replication_factor = 3;
  Status created = sim.cluster().CreateTopicAndWait(topic);
  EXPECT_EQ(created.code(), Errc::kInvalidReplicationFactor) << created.ToString();
  TopicSpec again;
  again.name = "u";
  again.replication_factor = 2;
  ASSERT_TRUE(sim.cluster().CreateTopicAndWait(again).ok());
  EXPECT_EQ(sim.cluster().CreateTopicAndWait(again).code(), Errc::kTopicAlreadyExists);
}

}  // namespace
}  // namespace ksim::sim::testing
