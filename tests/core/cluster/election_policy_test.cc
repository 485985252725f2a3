// Election policies: each failover policy on the cases that matter (leader dead with a live ISR,
// no live ISR, no live replica, empty ISR, leader still alive), the registry, and Kafka's other
// selectors (new partition, controlled shutdown, preferred replica, reassignment) with the
// behaviour of PartitionLeaderSelector.scala.
#include "core/cluster/election_policy.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/base/random.h"

namespace ksim {
namespace {

using StreamRandom = StreamRandomSource;

std::vector<BrokerId> B(std::initializer_list<int32_t> ids) {
  std::vector<BrokerId> out;
  for (int32_t id : ids) out.push_back(BrokerId(id));
  return out;
}

std::set<BrokerId> Live(std::initializer_list<int32_t> ids) {
  std::set<BrokerId> out;
  for (int32_t id : ids) out.insert(BrokerId(id));
  return out;
}

// Partition t-0 on brokers 1, 2, 3 (1 preferred), leader 1 with the given ISR.
ElectionInput Input(std::vector<BrokerId> isr, std::set<BrokerId> live) {
  ElectionInput input;
  input.partition = "t-0";
  input.assigned_replicas = B({1, 2, 3});
  input.isr = std::move(isr);
  input.live_brokers = std::move(live);
  input.current_leader = BrokerId(1);
  return input;
}

ElectionResult ElectWith(std::string_view policy_name, const ElectionInput& input) {
  auto policy = MakeElectionPolicy(policy_name);
  KSIM_CHECK(policy.ok());
  return (*policy)->Elect(input);
}

void ExpectElected(const ElectionResult& result, int32_t leader, std::vector<BrokerId> isr,
                   bool unclean) {
  EXPECT_EQ(result.outcome, ElectionOutcome::kElected) << result.explanation;
  ASSERT_TRUE(result.leader.has_value()) << result.explanation;
  EXPECT_EQ(*result.leader, BrokerId(leader));
  EXPECT_EQ(result.isr, isr);
  EXPECT_EQ(result.unclean, unclean);
}

// --- clean ---------------------------------------------------------------------------------

TEST(CleanElectionTest, PicksFirstLiveIsrMemberInAssignmentOrder) {
  // ISR order differs from assignment order: the assignment decides the leader, the ISR keeps
  // its own order minus the dead.
  ElectionInput input = Input(B({3, 1, 2}), Live({2, 3}));
  const ElectionResult result = ElectWith("clean", input);
  ExpectElected(result, 2, B({3, 2}), false);
  EXPECT_EQ(result.recipients, B({2, 3}));
}

TEST(CleanElectionTest, OfflineWhenNoIsrMemberIsAliveAndKeepsStoredIsr) {
  const ElectionResult result = ElectWith("clean", Input(B({1}), Live({2, 3})));
  EXPECT_EQ(result.outcome, ElectionOutcome::kOffline);
  EXPECT_FALSE(result.has_leader());
  EXPECT_EQ(result.isr, B({1}));
  EXPECT_EQ(result.explanation,
            "No broker in ISR for partition t-0 is alive. Live brokers are: [2,3]. ISR brokers "
            "are: [1]");
}

TEST(CleanElectionTest, OfflineWhenNoReplicaIsAlive) {
  const ElectionResult result = ElectWith("clean", Input(B({1, 2, 3}), Live({4})));
  EXPECT_EQ(result.outcome, ElectionOutcome::kOffline);
  EXPECT_EQ(result.explanation,
            "No replica for partition t-0 is alive. Live brokers are: [4]. Assigned replicas "
            "are: [1,2,3].");
  EXPECT_TRUE(result.recipients.empty());
}

TEST(CleanElectionTest, EmptyIsrMeansOffline) {
  ElectionInput input = Input({}, Live({1, 2, 3}));
  input.current_leader.reset();
  EXPECT_EQ(ElectWith("clean", input).outcome, ElectionOutcome::kOffline);
}

TEST(CleanElectionTest, LiveLeaderInIsrIsKept) {
  const ElectionResult result = ElectWith("clean", Input(B({2, 1}), Live({1, 2})));
  EXPECT_EQ(result.outcome, ElectionOutcome::kUnchanged);
  EXPECT_EQ(*result.leader, BrokerId(1));
  EXPECT_EQ(result.isr, B({2, 1}));
}

TEST(CleanElectionTest, LiveLeaderOutsideIsrIsReplaced) {
  ExpectElected(ElectWith("clean", Input(B({2, 3}), Live({1, 2, 3}))), 2, B({2, 3}), false);
}

TEST(CleanElectionTest, NoAssignedReplicasIsOffline) {
  ElectionInput input = Input(B({1}), Live({1}));
  input.assigned_replicas.clear();
  const ElectionResult result = ElectWith("clean", input);
  EXPECT_EQ(result.outcome, ElectionOutcome::kOffline);
  EXPECT_EQ(result.explanation, "Partition t-0 doesn't have replicas assigned to it");
}

// --- unclean -------------------------------------------------------------------------------

TEST(UncleanElectionTest, PrefersACleanElectionWhenPossible) {
  ExpectElected(ElectWith("unclean", Input(B({1, 3}), Live({2, 3}))), 3, B({3}), false);
}

TEST(UncleanElectionTest, FallsBackToFirstLiveAssignedReplicaWithIsrReset) {
  const ElectionResult result = ElectWith("unclean", Input(B({1}), Live({3, 2})));
  ExpectElected(result, 2, B({2}), true);
  EXPECT_EQ(result.explanation,
            "No broker in ISR is alive for t-0. Elect leader 2 from live brokers 2,3. There's "
            "potential data loss.");
}

TEST(UncleanElectionTest, EmptyIsrElectsUncleanly) {
  ElectionInput input = Input({}, Live({3}));
  input.current_leader.reset();
  ExpectElected(ElectWith("unclean", input), 3, B({3}), true);
}

TEST(UncleanElectionTest, OfflineWithoutLiveReplicasAndKeepsLiveLeader) {
  EXPECT_EQ(ElectWith("unclean", Input(B({1}), {})).outcome, ElectionOutcome::kOffline);
  EXPECT_EQ(ElectWith("unclean", Input(B({1}), Live({1, 2}))).outcome, ElectionOutcome::kUnchanged);
}

// --- random-isr ----------------------------------------------------------------------------

TEST(RandomIsrElectionTest, DrawsALiveIsrMemberFromTheInjectedSource) {
  StreamRandom random(11);
  StreamRandom replay(11);  // the same seed, to know which index each draw must give
  std::map<BrokerId, int> chosen;
  for (int i = 0; i < 300; ++i) {
    ElectionInput input;
    input.partition = "t-0";
    input.assigned_replicas = B({1, 2, 3, 4, 5});
    input.isr = B({5, 2, 4, 1});  // 3 is out of sync
    input.live_brokers = Live({2, 3, 4, 5});
    input.random = &random;
    const ElectionResult result = ElectWith("random-isr", input);
    // Candidates are the live ISR members in assignment order: 2, 4, 5.
    const std::vector<BrokerId> candidates = B({2, 4, 5});
    ExpectElected(result, candidates[replay.NextInt(3)].value(), B({5, 2, 4}), false);
    ++chosen[*result.leader];
  }
  EXPECT_EQ(chosen.size(), 3u);  // every live ISR member gets elected sometimes
  EXPECT_EQ(chosen.count(BrokerId(3)), 0u);
}

TEST(RandomIsrElectionTest, OfflineWhenNoIsrMemberIsAlive) {
  StreamRandom random(1);
  ElectionInput input = Input(B({1}), Live({2, 3}));
  input.random = &random;
  EXPECT_EQ(ElectWith("random-isr", input).outcome, ElectionOutcome::kOffline);
}

// --- longest-log ---------------------------------------------------------------------------

TEST(LongestLogElectionTest, PicksGreatestLogEndOffsetTiesByAssignmentOrder) {
  ElectionInput input = Input(B({1, 2, 3}), Live({2, 3}));
  input.log_end_offsets = {{BrokerId(2), Offset(90)}, {BrokerId(3), Offset(120)}};
  ExpectElected(ElectWith("longest-log", input), 3, B({2, 3}), false);

  input.log_end_offsets = {{BrokerId(2), Offset(120)}, {BrokerId(3), Offset(120)}};
  ExpectElected(ElectWith("longest-log", input), 2, B({2, 3}), false);
}

TEST(LongestLogElectionTest, UncleanOnlyWhenTheLongestLogIsOutsideTheIsr) {
  // 3 dropped out of the ISR yet holds more (e.g. the ISR shrank on a slow fetch): unclean.
  ElectionInput input = Input(B({1, 2}), Live({2, 3}));
  input.log_end_offsets = {{BrokerId(2), Offset(10)}, {BrokerId(3), Offset(12)}};
  ExpectElected(ElectWith("longest-log", input), 3, B({3}), true);
  // With no ISR member alive, the longest log still leads, uncleanly.
  input.isr = B({1});
  ExpectElected(ElectWith("longest-log", input), 3, B({3}), true);
}

// --- wait-for-last-isr ---------------------------------------------------------------------

TEST(WaitForLastIsrElectionTest, WithoutARecordBehavesAsClean) {
  ExpectElected(ElectWith("wait-for-last-isr", Input(B({1, 3}), Live({2, 3}))), 3, B({3}), false);
  EXPECT_EQ(ElectWith("wait-for-last-isr", Input(B({1}), Live({2, 3}))).outcome,
            ElectionOutcome::kOffline);
}

TEST(WaitForLastIsrElectionTest, OnlyTheLastIsrMemberToDieMayLead) {
  // All three died together with the ISR still {1,2,3}; 1 died last and holds the most.
  ElectionInput input = Input(B({1, 2, 3}), Live({2, 3}));
  input.last_isr_member = BrokerId(1);
  const ElectionResult waiting = ElectWith("wait-for-last-isr", input);
  EXPECT_EQ(waiting.outcome, ElectionOutcome::kOffline);
  EXPECT_EQ(waiting.isr, B({1, 2, 3}));
  // `clean` would have taken the stale 2.
  ExpectElected(ElectWith("clean", input), 2, B({2, 3}), false);

  input.live_brokers = Live({1, 2, 3});
  input.current_leader.reset();
  ExpectElected(ElectWith("wait-for-last-isr", input), 1, B({1}), false);
}

// --- registry ------------------------------------------------------------------------------

TEST(ElectionPolicyRegistryTest, EveryNameMakesThePolicyOfThatName) {
  for (std::string_view name : ElectionPolicyNames()) {
    auto policy = MakeElectionPolicy(name);
    ASSERT_TRUE(policy.ok()) << name;
    EXPECT_EQ((*policy)->name(), name);
  }
  EXPECT_EQ(ElectionPolicyNames().size(), 5u);
  EXPECT_EQ(KafkaElectionPolicyName(true), "unclean");
  EXPECT_EQ(KafkaElectionPolicyName(false), "clean");
}

TEST(ElectionPolicyRegistryTest, UnknownNameListsTheValidOnes) {
  auto policy = MakeElectionPolicy("raft");
  EXPECT_EQ(policy.status().code(), Errc::kInvalidArgument);
  EXPECT_EQ(policy.status().message(),
            "unknown election policy 'raft'; valid policies: clean, unclean, random-isr, "
            "longest-log, wait-for-last-isr");
}

// The seed's lesson: the ISR shrank to the leader alone, then the leader crashed.
TEST(ElectionPolicyRegistryTest, PoliciesDisagreeExactlyWhereTheSeedSaysTheyShould) {
  ElectionInput input = Input(B({1}), Live({2, 3}));
  input.log_end_offsets = {{BrokerId(2), Offset(5)}, {BrokerId(3), Offset(7)}};
  input.last_isr_member = BrokerId(1);
  StreamRandom random(3);
  input.random = &random;
  EXPECT_EQ(ElectWith("clean", input).outcome, ElectionOutcome::kOffline);  // wait: no data loss
  ExpectElected(ElectWith("unclean", input), 2, B({2}), true);              // first alive: loss
  ExpectElected(ElectWith("longest-log", input), 3, B({3}), true);          // least loss
  EXPECT_EQ(ElectWith("random-isr", input).outcome, ElectionOutcome::kOffline);
  EXPECT_EQ(ElectWith("wait-for-last-isr", input).outcome, ElectionOutcome::kOffline);
}

// --- Kafka's other selectors ---------------------------------------------------------------

TEST(InitialLeaderAndIsrTest, FirstLiveAssignedLeadsAndLiveAssignedFormTheIsr) {
  ElectionInput input = Input({}, Live({3, 2}));
  input.current_leader.reset();
  ExpectElected(InitialLeaderAndIsr(input), 2, B({2, 3}), false);
  input.live_brokers.clear();
  EXPECT_EQ(InitialLeaderAndIsr(input).outcome, ElectionOutcome::kOffline);
}

TEST(ControlledShutdownSelectorTest, MovesLeadershipOffTheShuttingDownBroker) {
  // Broker 1 is shutting down: Kafka no longer lists it as live but it still receives requests.
  const ElectionInput input = Input(B({1, 2, 3}), Live({2, 3}));
  const ElectionResult result = SelectControlledShutdownLeader(input, {BrokerId(1)});
  ExpectElected(result, 2, B({2, 3}), false);
  EXPECT_EQ(result.recipients, B({1, 2, 3}));
}

TEST(ControlledShutdownSelectorTest, RefusedWhenTheShuttingDownBrokerIsTheWholeIsr) {
  const ElectionResult result =
      SelectControlledShutdownLeader(Input(B({1}), Live({2, 3})), {BrokerId(1)});
  EXPECT_EQ(result.outcome, ElectionOutcome::kRefused);
  EXPECT_EQ(*result.leader, BrokerId(1));
  EXPECT_EQ(result.isr, B({1}));
  EXPECT_EQ(result.explanation,
            "No other replicas in ISR 1 for t-0 besides shutting down brokers 1");
}

TEST(PreferredReplicaSelectorTest, MovesLeadershipBackToTheFirstAssignedReplica) {
  ElectionInput input = Input(B({2, 1, 3}), Live({1, 2, 3}));
  input.current_leader = BrokerId(2);
  const ElectionResult result = SelectPreferredReplicaLeader(input);
  ExpectElected(result, 1, B({2, 1, 3}), false);
  EXPECT_EQ(result.recipients, B({1, 2, 3}));
}

TEST(PreferredReplicaSelectorTest, NotNeededWhenPreferredLeadsRefusedWhenNotInIsr) {
  EXPECT_EQ(SelectPreferredReplicaLeader(Input(B({1, 2}), Live({1, 2}))).outcome,
            ElectionOutcome::kUnchanged);
  ElectionInput input = Input(B({2, 3}), Live({1, 2, 3}));
  input.current_leader = BrokerId(2);
  const ElectionResult result = SelectPreferredReplicaLeader(input);
  EXPECT_EQ(result.outcome, ElectionOutcome::kRefused);
  EXPECT_EQ(*result.leader, BrokerId(2));
}

TEST(ReassignedPartitionSelectorTest, FirstLiveInSyncReassignedReplicaLeads) {
  ElectionInput input = Input(B({1, 2, 4}), Live({1, 2, 4, 5}));
  const ElectionResult result = SelectReassignedPartitionLeader(input, B({5, 4, 2}));
  ExpectElected(result, 4, B({1, 2, 4}), false);
  EXPECT_EQ(result.recipients, B({5, 4, 2}));
}

TEST(ReassignedPartitionSelectorTest, RefusedWhenNoReassignedReplicaIsInSync) {
  const ElectionInput input = Input(B({1, 2}), Live({1, 2, 4, 5}));
  EXPECT_EQ(SelectReassignedPartitionLeader(input, B({4, 5})).outcome, ElectionOutcome::kRefused);
  const ElectionResult empty = SelectReassignedPartitionLeader(input, {});
  EXPECT_EQ(empty.outcome, ElectionOutcome::kRefused);
  EXPECT_EQ(empty.explanation,
            "List of reassigned replicas for partition t-0 is empty. Current leader and ISR: "
            "[1,2]");
}

}  // namespace
}  // namespace ksim
