// TopicAdmin against the simulated ZooKeeper (a real server and a real client session over the
// virtual network): what `kafka-topics.sh --zookeeper` does in Kafka 0.10 (TopicCommandTest,
// AdminTest): create with a balanced assignment over the live brokers (/brokers/ids ephemerals),
// the refusals in Kafka's words (replication factor above the live brokers, bad names,
// collisions, existing topics, bad overrides, bad manual assignments), the znodes written
// (/config/topics/<t>, /brokers/topics/<t>), --list with deletion marks, --describe's exact
// lines, and --delete's marking of /admin/delete_topics/<t>.
#include "core/admin/topic_admin.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/random.h"
#include "core/zk/paths.h"
#include "tests/support/sim/zookeeper_test_util.h"

namespace ksim {
namespace {

using sim::testing::ZooKeeperWorld;

BrokerConfig Defaults() {
  auto config = MakeBrokerConfig({});
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return std::move(config).value();
}

class TopicAdminTest : public ::testing::Test {
 protected:
  explicit TopicAdminTest(uint64_t random_seed = 7) : random_(random_seed) {
    world_.StartClient("admin");
    EXPECT_TRUE(world_.Connected("admin"));
    admin_ =
        std::make_unique<TopicAdmin>(world_.client("admin"), random_, Defaults(), "hadoop01:2181");
    EXPECT_TRUE(world_.Create("admin", "/brokers").ok());
    EXPECT_TRUE(world_.Create("admin", "/brokers/ids").ok());
  }

  // Broker `id` registers itself as Kafka's broker does: an ephemeral /brokers/ids/<id> of its
  // own session.
  void RegisterBroker(int32_t id) {
    const std::string node = "broker-" + std::to_string(id);
    world_.StartClient(node);
    ASSERT_TRUE(world_.Connected(node));
    zk::BrokerRegistration registration;
    registration.host = "hadoop0" + std::to_string(id);
    registration.endpoints = {"PLAINTEXT://" + registration.host + ":9092"};
    auto created =
        world_.Create(node, zk::BrokerIdPath(BrokerId(id)),
                      zk::EncodeBrokerRegistration(registration), CreateMode::kEphemeral);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  Result<ReplicaAssignment> Create(const std::string& topic, int32_t partitions,
                                   int32_t replication_factor,
                                   std::optional<ReplicaAssignment> manual = std::nullopt,
                                   zk::TopicConfig overrides = {}) {
    std::optional<Result<ReplicaAssignment>> out;
    admin_->CreateTopic(topic, partitions, replication_factor, std::move(manual),
                        std::move(overrides),
                        [&](Result<ReplicaAssignment> r) { out.emplace(std::move(r)); });
    return world_.Wait(out);
  }
  Result<std::vector<ListedTopic>> List() {
    std::optional<Result<std::vector<ListedTopic>>> out;
    admin_->ListTopics([&](Result<std::vector<ListedTopic>> r) { out.emplace(std::move(r)); });
    return world_.Wait(out);
  }
  Result<std::vector<TopicDescription>> Describe(std::optional<std::string> topic) {
    std::optional<Result<std::vector<TopicDescription>>> out;
    admin_->DescribeTopics(std::move(topic), [&](Result<std::vector<TopicDescription>> r) {
      out.emplace(std::move(r));
    });
    return world_.Wait(out);
  }
  Result<std::string> Delete(const std::string& topic) {
    std::optional<Result<std::string>> out;
    admin_->DeleteTopic(topic, [&](Result<std::string> r) { out.emplace(std::move(r)); });
    return world_.Wait(out);
  }
  Result<PreferredElectionStarted> Prefer(
      std::optional<std::vector<zk::TopicAndPartition>> partitions) {
    std::optional<Result<PreferredElectionStarted>> out;
    admin_->StartPreferredReplicaElection(
        std::move(partitions),
        [&](Result<PreferredElectionStarted> r) { out.emplace(std::move(r)); });
    return world_.Wait(out);
  }
  std::optional<std::string> Read(const std::string& path) {
    auto data = world_.GetData("admin", path);
    if (!data.ok()) return std::nullopt;
    return data->data;
  }

  ZooKeeperWorld world_;
  StreamRandomSource random_;
  std::unique_ptr<TopicAdmin> admin_;
};

std::vector<int32_t> SortedCounts(const std::map<BrokerId, int32_t>& counts) {
  std::vector<int32_t> out;
  for (const auto& [broker, count] : counts) out.push_back(count);
  std::sort(out.rbegin(), out.rend());
  return out;
}

TEST_F(TopicAdminTest, CreateWritesConfigAndAssignment) {
  for (int id = 1; id <= 3; ++id) RegisterBroker(id);
  auto created = Create("frbook", 1, 3);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_EQ(created->size(), 1u);
  std::vector<BrokerId> replicas = created->at(PartitionId(0));
  std::sort(replicas.begin(), replicas.end());
  EXPECT_EQ(replicas, (std::vector<BrokerId>{BrokerId(1), BrokerId(2), BrokerId(3)}));
  EXPECT_EQ(Read("/brokers/topics/frbook"), zk::EncodeReplicaAssignment(*created));
  EXPECT_EQ(Read("/config/topics/frbook"), R"({"version":1,"config":{}})");
  EXPECT_EQ(FormatCreatedTopic("frbook"), "Created topic \"frbook\".\n");
}

// AdminTest.testReplicaAssignment's balance: 10 partitions on 3 brokers give leaders 4-3-3, and
// replicas spread evenly too, whatever the random start.
TEST_F(TopicAdminTest, TenPartitionsOnThreeBrokersSpreadEvenly) {
  for (int id = 1; id <= 3; ++id) RegisterBroker(id);
  for (int i = 0; i < 6; ++i) {
    const std::string topic = "spread" + std::to_string(i);
    auto three = Create(topic, 10, 3);
    ASSERT_TRUE(three.ok()) << three.status().ToString();
    EXPECT_EQ(SortedCounts(LeaderCountPerBroker(*three)), (std::vector<int32_t>{4, 3, 3}));
    EXPECT_EQ(SortedCounts(ReplicaCountPerBroker(*three)), (std::vector<int32_t>{10, 10, 10}));
    auto one = Create(topic + "r1", 10, 1);
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    EXPECT_EQ(SortedCounts(ReplicaCountPerBroker(*one)), (std::vector<int32_t>{4, 3, 3}));
  }
}

TEST_F(TopicAdminTest, ReplicationFactorAboveLiveBrokersIsRefused) {
  RegisterBroker(1);
  RegisterBroker(2);
  auto refused = Create("t", 1, 3);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Errc::kInvalidReplicationFactor);
  EXPECT_EQ(refused.status().message(), "replication factor: 3 larger than available brokers: 2");
  EXPECT_FALSE(Read("/brokers/topics/t").has_value());
  EXPECT_FALSE(Read("/config/topics/t").has_value());
  EXPECT_EQ(Create("t", 0, 1).status().code(), Errc::kInvalidPartitions);
  EXPECT_EQ(Create("t", 1, 0).status().code(), Errc::kInvalidReplicationFactor);
}

// Only live brokers count: a broker whose session ended has no /brokers/ids entry.
TEST_F(TopicAdminTest, BrokerWhoseSessionEndedDoesNotCount) {
  for (int id = 1; id <= 3; ++id) RegisterBroker(id);
  bool closed = false;
  world_.client("broker-3").Close([&] { closed = true; });
  ASSERT_TRUE(world_.RunUntil([&] { return closed; }));
  auto refused = Create("t", 1, 3);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "replication factor: 3 larger than available brokers: 2");
  auto created = Create("t", 4, 2);
  ASSERT_TRUE(created.ok());
  for (const auto& [partition, replicas] : *created) {
    EXPECT_EQ(std::count(replicas.begin(), replicas.end(), BrokerId(3)), 0);
  }
}

TEST_F(TopicAdminTest, InvalidNamesAndCollisionsAreRefused) {
  RegisterBroker(1);
  auto bad = Create("bad name!", 1, 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Errc::kInvalidTopicException);
  EXPECT_EQ(Create("..", 1, 1).status().code(), Errc::kInvalidTopicException);

  ASSERT_TRUE(Create("a.b", 1, 1).ok());
  auto collides = Create("a_b", 1, 1);
  ASSERT_FALSE(collides.ok());
  EXPECT_EQ(collides.status().code(), Errc::kInvalidTopicException);
  EXPECT_EQ(collides.status().message(), "Topic \"a_b\" collides with existing topics: a.b");
  EXPECT_FALSE(Read("/brokers/topics/a_b").has_value());
}

TEST_F(TopicAdminTest, ExistingTopicIsRefused) {
  RegisterBroker(1);
  ASSERT_TRUE(Create("t", 1, 1).ok());
  const std::optional<std::string> before = Read("/brokers/topics/t");
  auto again = Create("t", 3, 1);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), Errc::kTopicAlreadyExists);
  EXPECT_EQ(again.status().message(), "Topic \"t\" already exists.");
  EXPECT_EQ(Read("/brokers/topics/t"), before);
}

TEST_F(TopicAdminTest, ConfigOverridesAreValidatedAndWritten) {
  RegisterBroker(1);
  auto bad = Create("t", 1, 1, std::nullopt, {{"no.such.config", "1"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Errc::kInvalidConfig);
  EXPECT_EQ(Create("t", 1, 1, std::nullopt, {{"retention.ms", "soon"}}).status().code(),
            Errc::kInvalidConfig);
  EXPECT_FALSE(Read("/brokers/topics/t").has_value());
  EXPECT_FALSE(Read("/config/topics/t").has_value());

  auto created =
      Create("t", 1, 1, std::nullopt, {{"min.insync.replicas", "2"}, {"retention.ms", "1000"}});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(Read("/config/topics/t"),
            R"({"version":1,"config":{"min.insync.replicas":"2","retention.ms":"1000"}})");
}

TEST_F(TopicAdminTest, ManualAssignmentIsWrittenAsGivenAndChecked) {
  for (int id = 1; id <= 3; ++id) RegisterBroker(id);
  ReplicaAssignment manual{{PartitionId(0), {BrokerId(3), BrokerId(1)}},
                           {PartitionId(1), {BrokerId(1), BrokerId(2)}}};
  auto created = Create("m", 0, 0, manual);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(*created, manual);
  EXPECT_EQ(Read("/brokers/topics/m"), R"({"version":1,"partitions":{"0":[3,1],"1":[1,2]}})");

  ReplicaAssignment unknown{{PartitionId(0), {BrokerId(1), BrokerId(9)}}};
  EXPECT_EQ(Create("u", 0, 0, unknown).status().code(), Errc::kInvalidReplicaAssignment);
  ReplicaAssignment uneven{{PartitionId(0), {BrokerId(1), BrokerId(2)}},
                           {PartitionId(1), {BrokerId(1)}}};
  EXPECT_EQ(Create("u", 0, 0, uneven).status().code(), Errc::kInvalidReplicaAssignment);
  EXPECT_FALSE(Read("/brokers/topics/u").has_value());
}

TEST_F(TopicAdminTest, ListIsSortedAndShowsDeletionMarks) {
  RegisterBroker(1);
  auto empty = List();
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  for (const char* topic : {"zeta", "alpha", "mid"}) ASSERT_TRUE(Create(topic, 1, 1).ok());
  ASSERT_TRUE(Delete("mid").ok());
  auto listed = List();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(*listed, (std::vector<ListedTopic>{{"alpha", false}, {"mid", true}, {"zeta", false}}));
  EXPECT_EQ(FormatTopicList(*listed), "alpha\nmid - marked for deletion\nzeta\n");
}

// TopicCommand.describeTopic's exact lines: a header with tabs and no spaces, then per partition
// tab-separated "Key: value" fields; "none" for a partition the controller has not started yet.
TEST_F(TopicAdminTest, DescribePrintsKafkasLines) {
  for (int id = 1; id <= 3; ++id) RegisterBroker(id);
  ReplicaAssignment manual{{PartitionId(0), {BrokerId(1), BrokerId(2), BrokerId(3)}},
                           {PartitionId(1), {BrokerId(2), BrokerId(3), BrokerId(1)}}};
  ASSERT_TRUE(Create("t", 0, 0, manual, {{"min.insync.replicas", "2"}}).ok());
  // The controller's state for partition 0 only; ISR without broker 3.
  zk::PartitionState state;
  state.leader = BrokerId(1);
  state.isr = {BrokerId(1), BrokerId(2)};
  state.controller_epoch = ControllerEpoch(1);
  ASSERT_TRUE(world_.Create("admin", "/brokers/topics/t/partitions").ok());
  ASSERT_TRUE(world_.Create("admin", "/brokers/topics/t/partitions/0").ok());
  ASSERT_TRUE(world_
                  .Create("admin", zk::PartitionStatePath("t", PartitionId(0)),
                          zk::EncodePartitionState(state))
                  .ok());

  auto described = Describe("t");
  ASSERT_TRUE(described.ok()) << described.status().ToString();
  ASSERT_EQ(described->size(), 1u);
  EXPECT_EQ(FormatTopicDescription(described->front()),
            "Topic:t\tPartitionCount:2\tReplicationFactor:3\tConfigs:min.insync.replicas=2\n"
            "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2\n"
            "\tTopic: t\tPartition: 1\tLeader: none\tReplicas: 2,3,1\tIsr: \n");

  // An offline partition: the state says leader -1, printed as such.
  state.leader = zk::kNoLeader;
  state.isr = {BrokerId(1)};
  ASSERT_TRUE(world_
                  .SetData("admin", zk::PartitionStatePath("t", PartitionId(0)),
                           zk::EncodePartitionState(state))
                  .ok());
  described = Describe("t");
  ASSERT_TRUE(described.ok());
  EXPECT_EQ(described->front().partitions[0].leader, zk::kNoLeader);
  EXPECT_NE(
      FormatTopicDescription(described->front()).find("Leader: -1\tReplicas: 1,2,3\tIsr: 1\n"),
      std::string::npos);
}

TEST_F(TopicAdminTest, DescribeAllAndMissing) {
  RegisterBroker(1);
  ASSERT_TRUE(Create("b", 2, 1).ok());
  ASSERT_TRUE(Create("a", 1, 1).ok());
  auto missing = Describe("nope");
  ASSERT_TRUE(missing.ok());
  EXPECT_TRUE(missing->empty());  // TopicCommand prints nothing
  ASSERT_TRUE(Delete("b").ok());
  auto all = Describe(std::nullopt);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].topic, "a");
  EXPECT_EQ((*all)[1].topic, "b");
  EXPECT_TRUE((*all)[1].marked_for_deletion);
  EXPECT_EQ((*all)[1].partitions.size(), 2u);
  EXPECT_EQ(FormatTopicDescription((*all)[0]),
            "Topic:a\tPartitionCount:1\tReplicationFactor:1\tConfigs:\n"
            "\tTopic: a\tPartition: 0\tLeader: none\tReplicas: 1\tIsr: \n");
}

TEST_F(TopicAdminTest, DeleteMarksTheTopicForTheController) {
  RegisterBroker(1);
  auto missing = Delete("t");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Errc::kUnknownTopicOrPartition);
  EXPECT_EQ(missing.status().message(), "Topic t does not exist on ZK path hadoop01:2181");

  ASSERT_TRUE(Create("t", 1, 1).ok());
  auto marked = Delete("t");
  ASSERT_TRUE(marked.ok()) << marked.status().ToString();
  EXPECT_EQ(*marked,
            "Topic t is marked for deletion.\n"
            "Note: This will have no impact if delete.topic.enable is not set to true.\n");
  EXPECT_TRUE(Read("/admin/delete_topics/t").has_value());
  EXPECT_TRUE(Read("/brokers/topics/t").has_value());  // the controller deletes it, not the tool
  auto again = Delete("t");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, "Topic t is already marked for deletion.\n");

  ASSERT_TRUE(Create("__consumer_offsets", 1, 1).ok());
  auto internal = Delete("__consumer_offsets");
  ASSERT_FALSE(internal.ok());
  EXPECT_EQ(internal.status().message(),
            "Topic __consumer_offsets is a kafka internal topic and is not allowed to be marked "
            "for deletion.");
  EXPECT_FALSE(Read("/admin/delete_topics/__consumer_offsets").has_value());
}

TEST_F(TopicAdminTest, PreferredReplicaElectionWritesTheAdminZnode) {
  // kafka-preferred-replica-election.sh: every partition (sorted), or those of the JSON file that
  // exist; a second run while the controller has not deleted the znode is refused.
  RegisterBroker(1);
  ASSERT_TRUE(Create("t", 2, 1).ok());
  ASSERT_TRUE(Create("u", 1, 1).ok());
  auto all = Prefer(std::nullopt);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(FormatPartitionSet(all->partitions), "Set([t,0], [t,1], [u,0])");
  EXPECT_TRUE(all->skipped.empty());
  EXPECT_EQ(Read("/admin/preferred_replica_election"),
            R"({"version":1,"partitions":[{"topic":"t","partition":0},{"topic":"t","partition":1},)"
            R"({"topic":"u","partition":0}]})");
  auto again = Prefer(std::nullopt);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().message(),
            "Preferred replica leader election currently in progress for Set([t,0], [t,1], [u,0]). "
            "Aborting operation");

  ASSERT_TRUE(world_.Delete("admin", "/admin/preferred_replica_election").ok());
  auto some = Prefer(std::vector<zk::TopicAndPartition>{
      {"u", PartitionId(0)}, {"t", PartitionId(9)}, {"v", PartitionId(0)}});
  ASSERT_TRUE(some.ok()) << some.status().ToString();
  EXPECT_EQ(FormatPartitionSet(some->partitions), "Set([u,0])");
  EXPECT_EQ(some->skipped,
            (std::vector<std::string>{
                "Skipping preferred replica leader election for partition [t,9] since it doesn't "
                "exist",
                "Skipping preferred replica leader election for partition [v,0] since topic v "
                "doesn't exist"}));
}

}  // namespace
}  // namespace ksim
