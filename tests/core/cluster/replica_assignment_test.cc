// Replica placement: ports AdminTest.testReplicaAssignment (Kafka's expected table) and
// testManualReplicaAssignment, then checks the balance properties the algorithm exists for
// (the seed's 10 partitions on 3 brokers -> 4-3-3, leaders even within one, followers of a
// broker's partitions spread over the others) over many start positions.
#include "core/cluster/replica_assignment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "core/base/random.h"

namespace ksim {
namespace {

using StreamRandom = StreamRandomSource;

std::vector<BrokerId> Brokers(std::initializer_list<int32_t> ids) {
  std::vector<BrokerId> brokers;
  for (int32_t id : ids) brokers.push_back(BrokerId(id));
  return brokers;
}

std::vector<BrokerId> BrokerRange(int32_t count) {
  std::vector<BrokerId> brokers;
  for (int32_t id = 0; id < count; ++id) brokers.push_back(BrokerId(id));
  return brokers;
}

TEST(ReplicaAssignmentTest, MatchesKafkaAdminTestTable) {
  const ReplicaAssignment expected = {
      {PartitionId(0), Brokers({0, 1, 2})}, {PartitionId(1), Brokers({1, 2, 3})},
      {PartitionId(2), Brokers({2, 3, 4})}, {PartitionId(3), Brokers({3, 4, 0})},
      {PartitionId(4), Brokers({4, 0, 1})}, {PartitionId(5), Brokers({0, 2, 3})},
      {PartitionId(6), Brokers({1, 3, 4})}, {PartitionId(7), Brokers({2, 4, 0})},
      {PartitionId(8), Brokers({3, 0, 1})}, {PartitionId(9), Brokers({4, 1, 2})},
  };
  // Kafka's fixedStartIndex = 0 sets both startIndex and nextReplicaShift to 0.
  auto actual = AssignReplicasToBrokers(BrokerRange(5), 10, 3, {0, 0});
  ASSERT_TRUE(actual.ok()) << actual.status().ToString();
  EXPECT_EQ(*actual, expected);
}

TEST(ReplicaAssignmentTest, ReplicaIndexFollowsKafkaFormula) {
  EXPECT_EQ(ReplicaIndex(0, 0, 0, 5), 1);
  EXPECT_EQ(ReplicaIndex(0, 0, 1, 5), 2);
  EXPECT_EQ(ReplicaIndex(4, 0, 0, 5), 0);
  EXPECT_EQ(ReplicaIndex(0, 1, 0, 5), 2);
  // The shift wraps modulo n - 1 and never lands on the first replica.
  EXPECT_EQ(ReplicaIndex(0, 4, 0, 5), 1);
  EXPECT_EQ(ReplicaIndex(2, 3, 0, 5), 1);
}

TEST(ReplicaAssignmentTest, RefusesBadPartitionCountsAndReplicationFactors) {
  const std::vector<BrokerId> five = BrokerRange(5);
  EXPECT_EQ(AssignReplicasToBrokers(five, 10, 0, {}).status().code(),
            Errc::kInvalidReplicationFactor);
  EXPECT_EQ(AssignReplicasToBrokers(five, 10, 6, {}).status().code(),
            Errc::kInvalidReplicationFactor);
  EXPECT_EQ(AssignReplicasToBrokers(five, 0, 3, {}).status().code(), Errc::kInvalidPartitions);
  EXPECT_EQ(AssignReplicasToBrokers(five, -1, 3, {}).status().code(), Errc::kInvalidPartitions);

  const Status too_big = AssignReplicasToBrokers(Brokers({1, 2}), 1, 3, {}).status();
  EXPECT_EQ(too_big.message(), "replication factor: 3 larger than available brokers: 2");
  EXPECT_EQ(AssignReplicasToBrokers({}, 1, 1, {}).status().code(), Errc::kInvalidReplicationFactor);
}

TEST(ReplicaAssignmentTest, SeedExampleTenPartitionsOnThreeBrokersIsFourThreeThree) {
  for (int32_t start_index = 0; start_index < 3; ++start_index) {
    for (int32_t shift = 0; shift < 3; ++shift) {
      auto assignment = AssignReplicasToBrokers(Brokers({1, 2, 3}), 10, 1, {start_index, shift});
      ASSERT_TRUE(assignment.ok());
      std::vector<int32_t> counts;
      for (const auto& [broker, count] : ReplicaCountPerBroker(*assignment)) {
        counts.push_back(count);
      }
      std::sort(counts.begin(), counts.end());
      EXPECT_EQ(counts, (std::vector<int32_t>{3, 3, 4})) << start_index << "/" << shift;
    }
  }
}

TEST(ReplicaAssignmentTest, LeadersAreEvenWithinOneAndFullRoundsAreEvenExactly) {
  for (int32_t brokers = 1; brokers <= 6; ++brokers) {
    for (int32_t partitions = 1; partitions <= 3 * brokers + 1; ++partitions) {
      for (int32_t rf = 1; rf <= brokers; ++rf) {
        for (int32_t start = 0; start < brokers; ++start) {
          auto assignment = AssignReplicasToBrokers(BrokerRange(brokers), partitions, rf,
                                                    {start, (start * 7 + 3) % brokers});
          ASSERT_TRUE(assignment.ok());
          ASSERT_EQ(assignment->size(), static_cast<size_t>(partitions));
          std::vector<int32_t> leaders(brokers, 0);
          std::vector<int32_t> replicas(brokers, 0);
          for (const auto& [broker, count] : LeaderCountPerBroker(*assignment)) {
            leaders[broker.value()] = count;
          }
          for (const auto& [broker, count] : ReplicaCountPerBroker(*assignment)) {
            replicas[broker.value()] = count;
          }
          const auto [min_leaders, max_leaders] =
              std::minmax_element(leaders.begin(), leaders.end());
          EXPECT_LE(*max_leaders - *min_leaders, 1);
          if (partitions % brokers == 0) {
            const auto [min_replicas, max_replicas] =
                std::minmax_element(replicas.begin(), replicas.end());
            EXPECT_EQ(*min_replicas, *max_replicas) << brokers << " " << partitions << " " << rf;
          }
          for (const auto& [partition, list] : *assignment) {
            std::vector<BrokerId> sorted = list;
            std::sort(sorted.begin(), sorted.end());
            EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
          }
        }
      }
    }
  }
}

TEST(ReplicaAssignmentTest, FollowersOfOneBrokersPartitionsSpreadOverTheOthers) {
  // Four brokers, three full rounds, RF 2: the growing shift puts each broker's three led
  // partitions' followers on the three other brokers, one each.
  auto assignment = AssignReplicasToBrokers(BrokerRange(4), 12, 2, {0, 0});
  ASSERT_TRUE(assignment.ok());
  std::map<BrokerId, std::vector<BrokerId>> followers;
  for (const auto& [partition, replicas] : *assignment) {
    followers[replicas[0]].push_back(replicas[1]);
  }
  for (auto& [leader, list] : followers) {
    std::sort(list.begin(), list.end());
    std::vector<BrokerId> others;
    for (int32_t id = 0; id < 4; ++id) {
      if (BrokerId(id) != leader) others.push_back(BrokerId(id));
    }
    EXPECT_EQ(list, others) << "leader " << leader;
  }
}

TEST(ReplicaAssignmentTest, AddingPartitionsContinuesLeadersButNotEarlierShifts) {
  // kafka-topics.sh --alter --partitions: assignment resumes at the next partition id, so the
  // first replicas continue the round robin; the follower shift, as in Kafka, only grows at the
  // multiples of the broker count met from there on (partition 10 here), not at earlier ones.
  const std::vector<BrokerId> brokers = Brokers({10, 20, 30, 40, 50});
  auto all = AssignReplicasToBrokers(brokers, 12, 3, {2, 4});
  auto rest = AssignReplicasToBrokers(brokers, 5, 3, {2, 4}, /*start_partition_id=*/7);
  ASSERT_TRUE(all.ok() && rest.ok());
  for (const auto& [partition, replicas] : *rest) {
    EXPECT_EQ(replicas.front(), all->at(partition).front()) << partition;
  }
  const ReplicaAssignment expected = {
      {PartitionId(7), Brokers({50, 10, 20})},  {PartitionId(8), Brokers({10, 20, 30})},
      {PartitionId(9), Brokers({20, 30, 40})},  {PartitionId(10), Brokers({30, 50, 10})},
      {PartitionId(11), Brokers({40, 10, 20})},
  };
  EXPECT_EQ(*rest, expected);
}

TEST(ReplicaAssignmentTest, DrawAssignmentStartIsDeterministicPerSeedAndInRange) {
  StreamRandom a(7);
  StreamRandom b(7);
  std::set<int32_t> starts;
  for (int i = 0; i < 200; ++i) {
    const AssignmentStart from_a = DrawAssignmentStart(a, 5);
    const AssignmentStart from_b = DrawAssignmentStart(b, 5);
    EXPECT_EQ(from_a.start_index, from_b.start_index);
    EXPECT_EQ(from_a.next_replica_shift, from_b.next_replica_shift);
    EXPECT_GE(from_a.start_index, 0);
    EXPECT_LT(from_a.start_index, 5);
    EXPECT_GE(from_a.next_replica_shift, 0);
    EXPECT_LT(from_a.next_replica_shift, 5);
    starts.insert(from_a.start_index);
  }
  EXPECT_EQ(starts.size(), 5u);  // every broker gets to hold partition 0 for some seed draw
}

TEST(ReplicaAssignmentTest, ParsesKafkaTopicsReplicaAssignmentSyntax) {
  auto parsed = ParseReplicaAssignment("0:1:2, 1 : 2 :3");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const ReplicaAssignment expected = {{PartitionId(0), Brokers({0, 1, 2})},
                                      {PartitionId(1), Brokers({1, 2, 3})}};
  EXPECT_EQ(*parsed, expected);
  // Java's split drops a trailing empty field.
  EXPECT_TRUE(ParseReplicaAssignment("3:1,").ok());
}

TEST(ReplicaAssignmentTest, ParseRefusesDuplicatesMismatchedFactorsAndJunk) {
  const Status duplicate = ParseReplicaAssignment("1:1").status();
  EXPECT_EQ(duplicate.code(), Errc::kInvalidReplicaAssignment);
  EXPECT_EQ(duplicate.message(), "Partition replica lists may not contain duplicate entries: 1");

  const Status mismatch = ParseReplicaAssignment("0:1,2").status();
  EXPECT_EQ(mismatch.code(), Errc::kInvalidReplicaAssignment);
  EXPECT_EQ(mismatch.message(), "Partition 1 has different replication factor: 2");

  EXPECT_EQ(ParseReplicaAssignment("a:1").status().code(), Errc::kInvalidReplicaAssignment);
  EXPECT_EQ(ParseReplicaAssignment("0:1,,2:3").status().code(), Errc::kInvalidReplicaAssignment);
  EXPECT_EQ(ParseReplicaAssignment("").status().code(), Errc::kInvalidReplicaAssignment);
  EXPECT_EQ(ParseReplicaAssignment("99999999999").status().code(), Errc::kInvalidReplicaAssignment);
}

TEST(ReplicaAssignmentTest, ValidatesManualAssignmentsAsAdminTestDoes) {
  const std::vector<BrokerId> brokers = BrokerRange(5);
  // duplicate brokers
  EXPECT_EQ(ValidateReplicaAssignment({{PartitionId(0), Brokers({0, 0})}}, brokers).code(),
            Errc::kInvalidReplicaAssignment);
  // inconsistent replication factor
  const Status inconsistent = ValidateReplicaAssignment(
      {{PartitionId(0), Brokers({0, 1})}, {PartitionId(1), Brokers({0})}}, brokers);
  EXPECT_EQ(inconsistent.code(), Errc::kInvalidReplicaAssignment);
  EXPECT_EQ(inconsistent.message(), "All partitions should have the same number of replicas");
  // good assignment
  EXPECT_TRUE(
      ValidateReplicaAssignment(
          {{PartitionId(0), Brokers({0, 1, 2})}, {PartitionId(1), Brokers({1, 2, 3})}}, brokers)
          .ok());
}

TEST(ReplicaAssignmentTest, ValidateRefusesUnknownBrokersGapsAndEmptyLists) {
  const std::vector<BrokerId> brokers = Brokers({1, 2, 3});
  const Status unknown = ValidateReplicaAssignment(
      {{PartitionId(0), Brokers({9, 1})}, {PartitionId(1), Brokers({7, 9})}}, brokers);
  EXPECT_EQ(unknown.code(), Errc::kInvalidReplicaAssignment);
  EXPECT_EQ(unknown.message(), "Unknown broker(s) in replica assignment: 7, 9.");
  EXPECT_EQ(ValidateReplicaAssignment({{PartitionId(1), Brokers({1})}}, brokers).code(),
            Errc::kInvalidReplicaAssignment);
  EXPECT_EQ(ValidateReplicaAssignment({{PartitionId(0), {}}}, brokers).code(),
            Errc::kInvalidReplicaAssignment);
  EXPECT_EQ(ValidateReplicaAssignment({}, brokers).code(), Errc::kInvalidReplicaAssignment);
}

}  // namespace
}  // namespace ksim
