// The group coordinator in a running simulated cluster, spoken to with plain protocol requests
// from a client node (tests/support/sim/cluster_client.h): FindCoordinator creates
// __consumer_offsets and finds its leader; two members join and sync; a silent member is removed
// after its session timeout; committed offsets survive the coordinator broker's crash (the new
// leader of the offsets partition loads them from its log) and a restart of the whole cluster; a
// rebalance waits for a member's rebalance timeout from 0.10.1 and its session timeout before
// (JoinGroup v0); the group metadata record is value v0 at 0.10.0 and v1 from 0.10.1.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/trace_names.h"
#include "core/cluster/topic.h"
#include "core/coordinator/offsets_records.h"
#include "core/protocol/messages.h"
#include "tests/support/sim/cluster_client.h"
#include "tests/support/sim/cluster_test_util.h"

namespace ksim::sim::testing {
namespace {

constexpr int32_t kSessionMs = 10000;

// A client node that sends one request at a time to any broker and waits for its answer.
class GroupClient {
 public:
  GroupClient(ClusterSim& sim, std::string name, TimeUs request_timeout_us = 10 * kSecondUs)
      : sim_(sim),
        client_(sim.world(), std::move(name),
                ksim::testing::ClusterClientOptions{.bootstrap = {"broker-1"},
                                                    .request_timeout_us = request_timeout_us}) {}

  // Sends without waiting; the answer lands in the returned slot.
  std::shared_ptr<std::optional<Result<ksim::Message>>> Send(const std::string& broker,
                                                             ksim::Message request) {
    auto slot = std::make_shared<std::optional<Result<ksim::Message>>>();
    client_.SendRequest(broker, std::move(request),
                        [slot](Result<ksim::Message> answer) { *slot = std::move(answer); });
    return slot;
  }

  // Sends and runs the cluster until the answer (or a transport error) is there.
  template <class Response>
  std::optional<Response> Call(const std::string& broker, ksim::Message request,
                               TimeUs max_us = 20 * kSecondUs) {
    auto slot = Send(broker, std::move(request));
    if (!sim_.cluster().RunUntil([&] { return slot->has_value(); }, max_us)) return std::nullopt;
    if (!(*slot)->ok()) return std::nullopt;
    const auto* response = std::get_if<Response>(&***slot);
    if (response == nullptr) return std::nullopt;
    return *response;
  }

  // FindCoordinator through `via` until it names a coordinator: its node name.
  std::string FindCoordinator(const std::string& group, TimeUs max_us = 60 * kSecondUs) {
    const TimeUs deadline = sim_.world().loop().Now() + max_us;
    size_t next = 0;
    while (sim_.world().loop().Now() < deadline) {
      std::vector<std::string> brokers;
      for (BrokerId id : sim_.cluster().broker_ids()) {
        if (sim_.cluster().broker(id) != nullptr) brokers.push_back(node::Broker(id));
      }
      const std::string via = brokers[next++ % brokers.size()];
      FindCoordinatorRequest request;
      request.coordinator_key = group;
      auto answer = Call<FindCoordinatorResponse>(via, request);
      if (answer.has_value()) {
        last_find_error = answer->error_code;
        if (answer->error_code == Errc::kNone) return answer->coordinator.host;
      }
      sim_.cluster().RunFor(kSecondUs / 2);
    }
    return "";
  }

  Errc last_find_error = Errc::kNone;

 private:
  ClusterSim& sim_;
  ksim::testing::ClusterClient client_;
};

JoinGroupRequest Join(const std::string& group, const std::string& member_id) {
  JoinGroupRequest request;
  request.group_id = group;
  request.member_id = member_id;
  request.session_timeout_ms = kSessionMs;
  request.rebalance_timeout_ms = 20000;
  request.group_protocols = {GroupProtocol{"range", ToBytes("subscription")}};
  return request;
}

TopicPartition OffsetsPartition(const std::string& group, int32_t partitions) {
  return TopicPartition{std::string(kGroupMetadataTopicName),
                        PartitionId(OffsetsPartitionFor(group, partitions))};
}

BrokerId IdOf(const std::string& node) { return BrokerId(std::stoi(node.substr(7))); }

class GroupCoordinatorSimTest : public ::testing::Test {
 protected:
  explicit GroupCoordinatorSimTest(uint64_t seed = 11) : sim_("group-coordinator", seed, {}) {}
  void SetUp() override { ASSERT_TRUE(sim_.Start()); }

  // Commits `offset` for `tp` as a simple (group-less) consumer at the coordinator, retrying
  // retriable coordinator errors.
  Errc CommitSimple(GroupClient& client, const std::string& group, const TopicPartition& tp,
                    int64_t offset) {
    for (int attempt = 0; attempt < 20; ++attempt) {
      const std::string coordinator = client.FindCoordinator(group);
      if (coordinator.empty()) return Errc::kCoordinatorNotAvailable;
      OffsetCommitRequest request;
      request.group_id = group;
      request.generation_id = -1;
      request.partitions.push_back(OffsetCommitPartition{.tp = tp, .offset = Offset(offset)});
      auto answer = client.Call<OffsetCommitResponse>(coordinator, request);
      if (answer.has_value() && answer->responses.at(0).error_code == Errc::kNone) {
        return Errc::kNone;
      }
      sim_.cluster().RunFor(kSecondUs);
    }
    return Errc::kRequestTimedOut;
  }

  // The committed offset of `tp`, asked of whichever broker coordinates the group, retrying while
  // the coordinator moves or loads.
  std::optional<OffsetFetchPartitionResponse> FetchCommitted(GroupClient& client,
                                                             const std::string& group,
                                                             const TopicPartition& tp) {
    for (int attempt = 0; attempt < 40; ++attempt) {
      const std::string coordinator = client.FindCoordinator(group);
      if (coordinator.empty()) continue;
      OffsetFetchRequest request;
      request.group_id = group;
      request.partitions = std::vector<TopicPartition>{tp};
      auto answer = client.Call<OffsetFetchResponse>(coordinator, request);
      if (answer.has_value() && answer->error_code == Errc::kNone) return answer->responses.at(0);
      sim_.cluster().RunFor(kSecondUs / 2);
    }
    return std::nullopt;
  }

  ClusterSim sim_;
};

TEST_F(GroupCoordinatorSimTest, FindCoordinatorCreatesTheOffsetsTopicAndFindsItsLeader) {
  GroupClient client(sim_, "client");
  FindCoordinatorRequest request;
  request.coordinator_key = "g";
  auto first = client.Call<FindCoordinatorResponse>("broker-1", request);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->error_code, Errc::kCoordinatorNotAvailable);  // the topic is being created

  const std::string coordinator = client.FindCoordinator("g");
  ASSERT_FALSE(coordinator.empty()) << ErrcName(client.last_find_error);
  const int32_t partitions = sim_.cluster().broker_config(BrokerId(1)).offsets_topic_num_partitions;
  EXPECT_EQ(partitions, kClusterOffsetsTopicNumPartitions);
  const TopicPartition tp = OffsetsPartition("g", partitions);
  EXPECT_EQ(coordinator, node::Broker(sim_.cluster().LeaderOf(tp)));
  // Created as Kafka 0.10 does: every partition, min(3, live brokers) replicas, compacted.
  for (int32_t p = 0; p < partitions; ++p) {
    auto state = sim_.cluster().ZkPartitionState(
        TopicPartition{std::string(kGroupMetadataTopicName), PartitionId(p)});
    ASSERT_TRUE(state.has_value()) << p;
    EXPECT_EQ(state->isr.size(), 3u);
  }
  EXPECT_TRUE(sim_.cluster().zookeeper().Read("/config/topics/__consumer_offsets").has_value());
  MetadataRequest metadata;
  metadata.topics = std::vector<std::string>{std::string(kGroupMetadataTopicName)};
  auto answer = client.Call<MetadataResponse>("broker-2", metadata);
  ASSERT_TRUE(answer.has_value());
  ASSERT_EQ(answer->topic_metadata.size(), 1u);
  EXPECT_TRUE(answer->topic_metadata[0].is_internal);
  // Every broker names the same coordinator.
  EXPECT_EQ(client.FindCoordinator("g"), coordinator);
  EXPECT_EQ(client.FindCoordinator("g"), coordinator);
  EXPECT_TRUE(sim_.NoViolations());
}

TEST_F(GroupCoordinatorSimTest, TwoMembersJoinSyncAndASilentOneIsRemoved) {
  GroupClient a(sim_, "consumer-a");
  GroupClient b(sim_, "consumer-b");
  const std::string coordinator = a.FindCoordinator("g");
  ASSERT_FALSE(coordinator.empty());

  auto a_join = a.Call<JoinGroupResponse>(coordinator, Join("g", ""));
  ASSERT_TRUE(a_join.has_value());
  ASSERT_EQ(a_join->error_code, Errc::kNone);
  const std::string a_id = a_join->member_id;
  EXPECT_EQ(a_id.rfind("consumer-a-", 0), 0u);
  EXPECT_EQ(a_join->leader_id, a_id);
  SyncGroupRequest a_sync{.group_id = "g",
                          .generation_id = a_join->generation_id,
                          .member_id = a_id,
                          .group_assignment = {GroupAssignment{a_id, ToBytes("all")}}};
  auto a_synced = a.Call<SyncGroupResponse>(coordinator, a_sync);
  ASSERT_TRUE(a_synced.has_value());
  EXPECT_EQ(a_synced->member_assignment, ToBytes("all"));

  // b joins: a hears REBALANCE_IN_PROGRESS on its heartbeat and rejoins.
  auto b_join = b.Send(coordinator, Join("g", ""));
  sim_.cluster().RunFor(kSecondUs);
  EXPECT_FALSE(b_join->has_value());
  HeartbeatRequest heartbeat{
      .group_id = "g", .generation_id = a_join->generation_id, .member_id = a_id};
  auto beat = a.Call<HeartbeatResponse>(coordinator, heartbeat);
  ASSERT_TRUE(beat.has_value());
  EXPECT_EQ(beat->error_code, Errc::kRebalanceInProgress);
  auto a_rejoin = a.Call<JoinGroupResponse>(coordinator, Join("g", a_id));
  ASSERT_TRUE(a_rejoin.has_value());
  ASSERT_TRUE(sim_.cluster().RunUntil([&] { return b_join->has_value(); }, 5 * kSecondUs));
  const auto& b_joined = std::get<JoinGroupResponse>(***b_join);
  const int32_t generation = a_rejoin->generation_id;
  EXPECT_EQ(generation, a_join->generation_id + 1);
  EXPECT_EQ(b_joined.generation_id, generation);
  EXPECT_EQ(a_rejoin->members.size(), 2u);
  const std::string b_id = b_joined.member_id;

  auto b_sync =
      b.Send(coordinator,
             SyncGroupRequest{.group_id = "g", .generation_id = generation, .member_id = b_id});
  auto a_sync2 = a.Call<SyncGroupResponse>(
      coordinator, SyncGroupRequest{.group_id = "g",
                                    .generation_id = generation,
                                    .member_id = a_id,
                                    .group_assignment = {GroupAssignment{a_id, ToBytes("p0")},
                                                         GroupAssignment{b_id, ToBytes("p1,p2")}}});
  ASSERT_TRUE(a_sync2.has_value());
  EXPECT_EQ(a_sync2->member_assignment, ToBytes("p0"));
  ASSERT_TRUE(sim_.cluster().RunUntil([&] { return b_sync->has_value(); }, 5 * kSecondUs));
  EXPECT_EQ(std::get<SyncGroupResponse>(***b_sync).member_assignment, ToBytes("p1,p2"));

  // b goes silent; a heartbeats every 3 s and sees the rebalance once b's session ran out.
  heartbeat.generation_id = generation;
  Errc error = Errc::kNone;
  const TimeUs start = sim_.world().loop().Now();
  while (error == Errc::kNone && sim_.world().loop().Now() < start + 30 * kSecondUs) {
    sim_.cluster().RunFor(3 * kSecondUs);
    auto answer = a.Call<HeartbeatResponse>(coordinator, heartbeat);
    ASSERT_TRUE(answer.has_value());
    error = answer->error_code;
  }
  EXPECT_EQ(error, Errc::kRebalanceInProgress);
  const TimeUs removed_after = sim_.world().loop().Now() - start;
  EXPECT_GE(removed_after, kSessionMs * 1000 - 3 * kSecondUs);
  auto alone = a.Call<JoinGroupResponse>(coordinator, Join("g", a_id));
  ASSERT_TRUE(alone.has_value());
  EXPECT_EQ(alone->generation_id, generation + 1);
  ASSERT_EQ(alone->members.size(), 1u);
  EXPECT_EQ(alone->members[0].member_id, a_id);
  EXPECT_TRUE(sim_.NoViolations());
}

TEST_F(GroupCoordinatorSimTest, CommittedOffsetsSurviveTheCoordinatorsCrash) {
  GroupClient client(sim_, "client");
  const TopicPartition tp{"events", PartitionId(1)};
  ASSERT_EQ(CommitSimple(client, "g", tp, 41), Errc::kNone);
  ASSERT_EQ(CommitSimple(client, "g", tp, 42), Errc::kNone);
  const std::string old_coordinator = client.FindCoordinator("g");
  ASSERT_FALSE(old_coordinator.empty());
  auto before = FetchCommitted(client, "g", tp);
  ASSERT_TRUE(before.has_value());
  EXPECT_EQ(before->offset, Offset(42));

  ASSERT_TRUE(sim_.cluster().CrashBroker(IdOf(old_coordinator)).ok());
  const int32_t partitions = sim_.cluster().broker_config(BrokerId(1)).offsets_topic_num_partitions;
  ASSERT_TRUE(sim_.WaitForLeader(OffsetsPartition("g", partitions), IdOf(old_coordinator)));
  // Brokers name the old coordinator until the controller's UpdateMetadata reaches them.
  std::string new_coordinator = client.FindCoordinator("g");
  for (int i = 0; i < 20 && new_coordinator == old_coordinator; ++i) {
    sim_.cluster().RunFor(kSecondUs / 2);
    new_coordinator = client.FindCoordinator("g");
  }
  ASSERT_FALSE(new_coordinator.empty());
  EXPECT_NE(new_coordinator, old_coordinator);
  auto after = FetchCommitted(client, "g", tp);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->offset, Offset(42));
  EXPECT_TRUE(sim_.NoViolations());
}

TEST_F(GroupCoordinatorSimTest, CommittedOffsetsSurviveAFullClusterRestart) {
  GroupClient client(sim_, "client");
  const TopicPartition tp{"events", PartitionId(0)};
  ASSERT_EQ(CommitSimple(client, "g", tp, 7), Errc::kNone);
  ASSERT_EQ(CommitSimple(client, "other-group", tp, 3), Errc::kNone);
  // Every broker shuts down cleanly (its logs flushed), then all start again.
  for (BrokerId id : sim_.cluster().broker_ids()) {
    bool down = false;
    ASSERT_TRUE(sim_.cluster().ShutdownBroker(id, [&down] { down = true; }).ok());
    ASSERT_TRUE(sim_.cluster().RunUntil([&] { return down; }, 60 * kSecondUs));
  }
  for (BrokerId id : sim_.cluster().broker_ids()) {
    ASSERT_TRUE(sim_.cluster().RestartBroker(id).ok());
  }
  auto g = FetchCommitted(client, "g", tp);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->offset, Offset(7));
  auto other = FetchCommitted(client, "other-group", tp);
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->offset, Offset(3));
  EXPECT_TRUE(sim_.NoViolations());
}

// Member a (session 10 s, rebalance timeout 60 s) is stable; b joins; a keeps heartbeating (its
// session lives) but never rejoins. The time until b's JoinGroup is answered (a removed), in
// steps of 3 s; nullopt when not within 90 s.
std::optional<TimeUs> RebalanceWithoutARejoin(KafkaRelease release) {
  ClusterOptions options;
  options.kafka_version = release;
  ClusterSim sim("group-coordinator", 12, options);
  KSIM_CHECK(sim.Start());
  GroupClient a(sim, "consumer-a");
  GroupClient b(sim, "consumer-b", 120 * kSecondUs);  // its JoinGroup waits for the rebalance
  const std::string coordinator = a.FindCoordinator("g");
  KSIM_CHECK(!coordinator.empty());
  JoinGroupRequest join = Join("g", "");
  join.rebalance_timeout_ms = 60000;
  auto a_join = a.Call<JoinGroupResponse>(coordinator, join);
  KSIM_CHECK(a_join.has_value() && a_join->error_code == Errc::kNone);
  auto a_synced = a.Call<SyncGroupResponse>(
      coordinator,
      SyncGroupRequest{.group_id = "g",
                       .generation_id = a_join->generation_id,
                       .member_id = a_join->member_id,
                       .group_assignment = {GroupAssignment{a_join->member_id, ToBytes("all")}}});
  KSIM_CHECK(a_synced.has_value() && a_synced->error_code == Errc::kNone);

  auto b_join = b.Send(coordinator, join);
  const HeartbeatRequest heartbeat{
      .group_id = "g", .generation_id = a_join->generation_id, .member_id = a_join->member_id};
  const TimeUs start = sim.world().loop().Now();
  while (!b_join->has_value() && sim.world().loop().Now() < start + 90 * kSecondUs) {
    sim.cluster().RunFor(3 * kSecondUs);
    a.Call<HeartbeatResponse>(coordinator, heartbeat);
  }
  if (!b_join->has_value()) return std::nullopt;
  const auto* b_joined = std::get_if<JoinGroupResponse>(&***b_join);
  KSIM_CHECK(b_joined != nullptr && b_joined->error_code == Errc::kNone);
  KSIM_CHECK(b_joined->members.size() == 1);  // a was left out
  return sim.world().loop().Now() - start;
}

// A 0.10.0 broker knows JoinGroup v0 only: the rebalance waits for the largest session timeout
// (0.10.0.1:GroupMetadata.rebalanceTimeout), whatever the client meant.
TEST(GroupCoordinatorReleaseTest, RebalanceWaitsForTheSessionTimeoutAt0100) {
  const std::optional<TimeUs> after = RebalanceWithoutARejoin(KafkaRelease::k0_10_0);
  ASSERT_TRUE(after.has_value());
  EXPECT_GE(*after, kSessionMs * kUsPerMs - 3 * kSecondUs);
  EXPECT_LE(*after, kSessionMs * kUsPerMs + 6 * kSecondUs);
}

// KIP-62 (0.10.1): JoinGroup v1's rebalance timeout.
TEST(GroupCoordinatorReleaseTest, RebalanceWaitsForTheRebalanceTimeoutFrom0101) {
  const std::optional<TimeUs> after = RebalanceWithoutARejoin(KafkaRelease::k0_10_1);
  ASSERT_TRUE(after.has_value());
  EXPECT_GE(*after, 57 * kSecondUs);
  EXPECT_LE(*after, 66 * kSecondUs);
}

// The group metadata record the coordinator writes to __consumer_offsets after a member's join
// and sync at `release`: each record's value read back from the offsets partition.
std::vector<std::string> StoredGroupValues(KafkaRelease release) {
  ClusterOptions options;
  options.kafka_version = release;
  ClusterSim sim("group-coordinator", 13, options);
  KSIM_CHECK(sim.Start());
  GroupClient a(sim, "consumer-a");
  const std::string coordinator = a.FindCoordinator("g");
  KSIM_CHECK(!coordinator.empty());
  JoinGroupRequest join = Join("g", "");
  join.rebalance_timeout_ms = 60000;
  auto joined = a.Call<JoinGroupResponse>(coordinator, join);
  KSIM_CHECK(joined.has_value() && joined->error_code == Errc::kNone);
  auto synced = a.Call<SyncGroupResponse>(
      coordinator,
      SyncGroupRequest{.group_id = "g",
                       .generation_id = joined->generation_id,
                       .member_id = joined->member_id,
                       .group_assignment = {GroupAssignment{joined->member_id, ToBytes("all")}}});
  KSIM_CHECK(synced.has_value() && synced->error_code == Errc::kNone);
  ksim::testing::ClusterClient& reader = sim.AddClient("reader", {});
  const ksim::testing::FetchResult read =
      sim.ReadAll(reader, OffsetsPartition("g", kClusterOffsetsTopicNumPartitions));
  KSIM_CHECK(read.error == Errc::kNone);
  std::vector<std::string> values;
  for (const ksim::testing::FetchedRecord& record : read.records) values.push_back(record.value);
  return values;
}

// 0.10.0.1's GroupMetadataManager writes group value schema v0 (no rebalance timeout); read back,
// the member's rebalance timeout is its session timeout.
TEST(GroupCoordinatorReleaseTest, GroupMetadataValueV0At0100) {
  const std::vector<std::string> values = StoredGroupValues(KafkaRelease::k0_10_0);
  ASSERT_FALSE(values.empty());
  for (const std::string& value : values) {
    ASSERT_GE(value.size(), 2u);
    EXPECT_EQ(value[0], 0);
    EXPECT_EQ(value[1], 0) << "value schema v0";
    Result<StoredGroup> group = DecodeGroupMetadataValue(ToBytes(value));
    ASSERT_TRUE(group.ok()) << group.status().ToString();
    ASSERT_EQ(group->members.size(), 1u);
    EXPECT_EQ(group->members[0].rebalance_timeout_ms, kSessionMs);
  }
}

// 0.10.1 (KIP-62) writes v1, with the member's rebalance timeout.
TEST(GroupCoordinatorReleaseTest, GroupMetadataValueV1From0101) {
  const std::vector<std::string> values = StoredGroupValues(KafkaRelease::k0_10_1);
  ASSERT_FALSE(values.empty());
  for (const std::string& value : values) {
    ASSERT_GE(value.size(), 2u);
    EXPECT_EQ(value[1], 1) << "value schema v1";
    Result<StoredGroup> group = DecodeGroupMetadataValue(ToBytes(value));
    ASSERT_TRUE(group.ok()) << group.status().ToString();
    ASSERT_EQ(group->members.size(), 1u);
    EXPECT_EQ(group->members[0].rebalance_timeout_ms, 60000);
  }
}

}  // namespace
}  // namespace ksim::sim::testing
