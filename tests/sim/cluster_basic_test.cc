// The simulated cluster end to end without faults: brokers register, a controller is elected,
// kafka-topics.sh --create gives every partition a leader and a full ISR (in ZooKeeper and on the
// brokers), produced records come back from a fetch in order, and the invariant checker, on
// after every step, finds nothing.
#include <gtest/gtest.h>

#include "tests/sim/cluster_test_util.h"

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

}  // namespace
}  // namespace ksim::sim::testing
