#include "sim/check/run_observer.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

namespace ksim::sim {
namespace {

constexpr TimeUs kSecond = 1'000'000;

TopicPartition Tp(const std::string& topic, int32_t partition) {
  return TopicPartition{topic, PartitionId(partition)};
}

TraceFields Elected(const TopicPartition& tp, int32_t leader, int32_t epoch,
                    std::vector<int32_t> isr, bool unclean = false,
                    const std::string& reason = "broker_failure") {
  return TraceFields{{"topic", tp.topic},
                     {"partition", tp.partition.value()},
                     {"leader", leader},
                     {"epoch", epoch},
                     {"isr", isr},
                     {"unclean", unclean},
                     {"policy", "clean-only"},
                     {"reason", reason}};
}

TraceFields Isr(const TopicPartition& tp, std::vector<int32_t> isr) {
  return TraceFields{{"topic", tp.topic}, {"partition", tp.partition.value()}, {"isr", isr}};
}

class RunObserverTest : public ::testing::Test {
 protected:
  RunObserverTest()
      : world_(5, TraceWriter::ToMemory(
                      TraceHeader{"run-observer-test", "base", 5, TraceLevel::kState})),
        observer_(world_) {}

  World world_;
  RunObserver observer_;
  const TopicPartition tp_ = Tp("t", 0);
};

TEST(FormatSecondsTest, ThreeDecimalsRoundedDown) {
  EXPECT_EQ(FormatSeconds(12'300'000), "12.300 s");
  EXPECT_EQ(FormatSeconds(0), "0.000 s");
  EXPECT_EQ(FormatSeconds(1'005'999), "1.005 s");
  EXPECT_EQ(FormatSeconds(90 * kSecond + 42'000), "90.042 s");
}

TEST_F(RunObserverTest, LeaderElectedIsRecordedWithItsFields) {
  observer_.OnEvent(2 * kSecond, "broker-1", "leader_elected",
                    Elected(tp_, 2, 3, {2, 3}, /*unclean=*/true, "broker_failure"));
  ASSERT_EQ(observer_.elections().size(), 1u);
  const ElectionRecord& e = observer_.elections()[0];
  EXPECT_EQ(e.t_us, 2 * kSecond);
  EXPECT_EQ(e.tp, tp_);
  EXPECT_EQ(e.leader, BrokerId(2));
  EXPECT_EQ(e.epoch, 3);
  EXPECT_EQ(e.isr, (std::vector<int32_t>{2, 3}));
  EXPECT_TRUE(e.unclean);
  EXPECT_EQ(e.reason, "broker_failure");
  EXPECT_EQ(e.policy, "clean-only");
  EXPECT_EQ(observer_.partitions(), std::vector<TopicPartition>{tp_});
}

TEST_F(RunObserverTest, FirstKnownThroughAnElectionIsAvailableAtOnce) {
  observer_.OnEvent(1 * kSecond, "broker-1", "leader_elected",
                    Elected(tp_, 1, 0, {1}, false, "new_partition"));
  EXPECT_EQ(observer_.UnavailableMs(tp_, 10 * kSecond), 0);
}

TEST_F(RunObserverTest, WatchedPartitionIsUnavailableUntilItsFirstElection) {
  observer_.WatchPartition(tp_, 500'000);
  observer_.OnEvent(1 * kSecond + 700'000, "broker-1", "leader_elected",
                    Elected(tp_, 1, 0, {1}, false, "new_partition"));
  EXPECT_EQ(observer_.UnavailableMs(tp_, 10 * kSecond), 1200);
  // Watching again later changes nothing: the partition is known.
  observer_.WatchPartition(tp_, 5 * kSecond);
  EXPECT_EQ(observer_.UnavailableMs(tp_, 10 * kSecond), 1200);
}

TEST_F(RunObserverTest, NeverElectedIsUnavailableUntilTheEnd) {
  observer_.WatchPartition(tp_, 1 * kSecond);
  EXPECT_EQ(observer_.UnavailableMs(tp_, 4 * kSecond + 500'999), 3500);
  EXPECT_EQ(observer_.UnavailableMs(Tp("unknown", 0), 4 * kSecond), 0);
}

TEST_F(RunObserverTest, LeaderCrashCountsUntilTheNextLeaderIsElected) {
  observer_.OnEvent(1 * kSecond, "broker-1", "leader_elected", Elected(tp_, 1, 0, {1, 2}));
  observer_.OnEvent(5 * kSecond, "broker-1", "crash", TraceFields{{"tear", false}});
  observer_.OnEvent(7 * kSecond, "broker-2", "leader_elected", Elected(tp_, 2, 1, {2}));
  EXPECT_EQ(observer_.UnavailableMs(tp_, 20 * kSecond), 2000);
}

TEST_F(RunObserverTest, FollowerCrashIsNotUnavailability) {
  observer_.OnEvent(1 * kSecond, "broker-1", "leader_elected", Elected(tp_, 1, 0, {1, 2}));
  observer_.OnEvent(5 * kSecond, "broker-2", "crash", TraceFields::object());
  observer_.OnEvent(6 * kSecond, "broker-2", "restart", TraceFields{{"incarnation", 2}});
  EXPECT_EQ(observer_.UnavailableMs(tp_, 20 * kSecond), 0);
}

TEST_F(RunObserverTest, LeaderRestartEndsUnavailability) {
  observer_.OnEvent(0, "broker-1", "leader_elected", Elected(tp_, 1, 0, {1}));
  observer_.OnEvent(2 * kSecond, "broker-1", "shutdown", TraceFields::object());
  observer_.OnEvent(3 * kSecond + 250'000, "broker-1", "restart", TraceFields{{"incarnation", 2}});
  EXPECT_EQ(observer_.UnavailableMs(tp_, 9 * kSecond), 1250);
}

TEST_F(RunObserverTest, ElectingABrokerThatIsAlreadyDownStaysUnavailable) {
  // The controller elects broker 2 after broker 2 crashed (it had not noticed yet).
  observer_.OnEvent(0, "broker-3", "leader_elected", Elected(tp_, 1, 0, {1, 2, 3}));
  observer_.OnEvent(2 * kSecond, "broker-1", "crash", TraceFields::object());
  observer_.OnEvent(2 * kSecond + 500'000, "broker-2", "crash", TraceFields::object());
  observer_.OnEvent(3 * kSecond, "broker-3", "leader_elected", Elected(tp_, 2, 1, {2, 3}));
  observer_.OnEvent(4 * kSecond, "broker-3", "leader_elected", Elected(tp_, 3, 2, {3}));
  EXPECT_EQ(observer_.UnavailableMs(tp_, 10 * kSecond), 2000);
}

TEST_F(RunObserverTest, OfflinePartitionCountsUntilTheNextElection) {
  observer_.OnEvent(0, "broker-1", "leader_elected", Elected(tp_, 1, 0, {1}));
  observer_.OnEvent(3 * kSecond, "broker-2", "partition_offline", Isr(tp_, {1}));
  observer_.OnEvent(8 * kSecond, "broker-2", "leader_elected", Elected(tp_, 1, 1, {1}));
  EXPECT_EQ(observer_.UnavailableMs(tp_, 10 * kSecond), 5000);
  // First known offline: counted from then.
  const TopicPartition other = Tp("t", 1);
  observer_.OnEvent(4 * kSecond, "broker-2", "partition_offline",
                    Isr(other, std::vector<int32_t>{}));
  EXPECT_EQ(observer_.UnavailableMs(other, 10 * kSecond), 6000);
}

TEST_F(RunObserverTest, IsrBelowMinInsyncReplicasCounts) {
  observer_.SetMinInsyncReplicas("t", 2);
  observer_.OnEvent(0, "broker-1", "leader_elected", Elected(tp_, 1, 0, {1, 2}));
  observer_.OnEvent(2 * kSecond, "broker-1", "isr_shrink", Isr(tp_, {1}));
  observer_.OnEvent(5 * kSecond, "broker-1", "isr_expand", Isr(tp_, {1, 2}));
  EXPECT_EQ(observer_.UnavailableMs(tp_, 10 * kSecond), 3000);
}

TEST_F(RunObserverTest, IsrShrinkWithinMinInsyncReplicasIsNotUnavailability) {
  // min.insync.replicas never set: 1.
  observer_.OnEvent(0, "broker-1", "leader_elected", Elected(tp_, 1, 0, {1, 2}));
  observer_.OnEvent(2 * kSecond, "broker-1", "isr_shrink", Isr(tp_, {1}));
  EXPECT_EQ(observer_.UnavailableMs(tp_, 10 * kSecond), 0);
}

TEST_F(RunObserverTest, IsrChangeFromADeposedLeaderIsIgnored) {
  observer_.SetMinInsyncReplicas("t", 2);
  observer_.OnEvent(0, "broker-1", "leader_elected", Elected(tp_, 1, 0, {1, 2, 3}));
  observer_.OnEvent(1 * kSecond, "broker-2", "leader_elected", Elected(tp_, 2, 1, {2, 3}));
  // Broker 1's late ISR write (it no longer leads): not the partition's ISR.
  observer_.OnEvent(2 * kSecond, "broker-1", "isr_shrink", Isr(tp_, {1}));
  EXPECT_EQ(observer_.UnavailableMs(tp_, 10 * kSecond), 0);
  observer_.OnEvent(3 * kSecond, "broker-2", "isr_shrink", Isr(tp_, {2}));
  EXPECT_EQ(observer_.UnavailableMs(tp_, 10 * kSecond), 7000);
}

// An isr_expand names the log end the leader knew of each broker it added, read from the source
// the runner sets when the event comes (the history checker's KAFKA-7128 rule reads it).
TEST_F(RunObserverTest, IsrExpansionNamesTheAddedBrokersLogEndsAsTheLeaderKnewThem) {
  TraceFields expand = Isr(tp_, {1, 2, 3});
  expand["added"] = TraceFields::array({2, 3});
  observer_.OnEvent(0, "broker-1", "leader_elected", Elected(tp_, 1, 0, {1}));
  observer_.OnEvent(1, "broker-1", "isr_expand", expand);  // no source yet: unknown
  std::vector<std::tuple<int32_t, TopicPartition, int32_t>> asked;
  observer_.SetFollowerLogEnd(
      [&asked](BrokerId leader, const TopicPartition& tp, BrokerId follower) -> int64_t {
        asked.emplace_back(leader.value(), tp, follower.value());
        return follower.value() == 2 ? 12 : -1;
      });
  observer_.OnEvent(2, "broker-1", "isr_expand", expand);
  // A deposed leader's late expansion is not the partition's and asks nothing.
  observer_.OnEvent(3, "broker-2", "leader_elected", Elected(tp_, 2, 1, {2}));
  observer_.OnEvent(4, "broker-1", "isr_expand", expand);
  ASSERT_EQ(observer_.isr_expansions().size(), 2u);
  EXPECT_EQ(observer_.isr_expansions()[0].log_ends, (std::vector<int64_t>{-1, -1}));
  EXPECT_EQ(observer_.isr_expansions()[1].added, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(observer_.isr_expansions()[1].log_ends, (std::vector<int64_t>{12, -1}));
  EXPECT_EQ(asked,
            (std::vector<std::tuple<int32_t, TopicPartition, int32_t>>{{1, tp_, 2}, {1, tp_, 3}}));
}

TEST_F(RunObserverTest, MinInsyncReplicasRaisedLaterCountsFromThen) {
  observer_.OnEvent(0, "broker-1", "leader_elected", Elected(tp_, 1, 0, {1}));
  observer_.OnEvent(4 * kSecond, "broker-2", "restart", TraceFields{{"incarnation", 2}});
  observer_.SetMinInsyncReplicas("t", 2);  // at the last event's time: 4 s
  observer_.SetMinInsyncReplicas("other", 3);
  EXPECT_EQ(observer_.UnavailableMs(tp_, 10 * kSecond), 6000);
}

TEST_F(RunObserverTest, TruncationIsRecordedWithItsBrokerAndRange) {
  observer_.OnEvent(3 * kSecond, "broker-2", "truncate",
                    TraceFields{{"topic", "my-topic"},
                                {"partition", 4},
                                {"from_leo", 12},
                                {"to", 9},
                                {"records", 3},
                                {"reason", "high_watermark"}});
  observer_.OnEvent(4 * kSecond, "broker-3", "truncate",
                    TraceFields{{"topic", "t"},
                                {"partition", 0},
                                {"from_leo", 20},
                                {"to", 50},
                                {"records", 15},
                                {"reason", "offset_out_of_range"}});
  ASSERT_EQ(observer_.truncations().size(), 2u);
  const TruncationRecord& t = observer_.truncations()[0];
  EXPECT_EQ(t.broker, BrokerId(2));
  EXPECT_EQ(t.tp, Tp("my-topic", 4));
  EXPECT_EQ(t.from_leo, Offset(12));
  EXPECT_EQ(t.to, Offset(9));
  EXPECT_EQ(t.records, 3);
  EXPECT_EQ(t.reason, "high_watermark");
  EXPECT_FALSE(t.Removed(Offset(8)));
  EXPECT_TRUE(t.Removed(Offset(9)));
  EXPECT_TRUE(t.Removed(Offset(11)));
  EXPECT_FALSE(t.Removed(Offset(12)));
  // Fully truncated and restarted at 50: [5, 20) went.
  const TruncationRecord& full = observer_.truncations()[1];
  EXPECT_TRUE(full.Removed(Offset(5)));
  EXPECT_TRUE(full.Removed(Offset(19)));
  EXPECT_FALSE(full.Removed(Offset(4)));
  EXPECT_FALSE(full.Removed(Offset(20)));
}

TEST_F(RunObserverTest, RetriesRebalancesAndViolationsAreRecorded) {
  observer_.OnEvent(1 * kSecond, "p1", "produce_retry",
                    TraceFields{{"topic", "t"},
                                {"partition", 1},
                                {"attempt", 2},
                                {"error", "REQUEST_TIMED_OUT"},
                                {"backoff_ms", 100}});
  observer_.OnEvent(
      2 * kSecond, "c1", "partitions_assigned",
      TraceFields{{"group", "g1"}, {"partitions", TraceFields::array({"t-0", "my-topic-12"})}});
  observer_.OnEvent(3 * kSecond, "c1", "partitions_revoked",
                    TraceFields{{"group", "g1"}, {"partitions", TraceFields::array()}});
  observer_.OnEvent(
      3 * kSecond, "c1", "offset_reset",
      TraceFields{
          {"topic", "t"}, {"partition", 2}, {"strategy", "latest"}, {"offset", 40}, {"from", -1}});
  observer_.OnEvent(4 * kSecond, "checker", "invariant_violation",
                    TraceFields{{"rule", "hw_monotonic"},
                                {"topic", "t"},
                                {"partition", 0},
                                {"message", "HW went from 5 to 3"}});
  ASSERT_EQ(observer_.retries().size(), 1u);
  EXPECT_EQ(observer_.retries()[0].client, "p1");
  EXPECT_EQ(observer_.retries()[0].tp, Tp("t", 1));
  EXPECT_EQ(observer_.retries()[0].attempt, 2);
  EXPECT_EQ(observer_.retries()[0].error, "REQUEST_TIMED_OUT");
  ASSERT_EQ(observer_.rebalances().size(), 2u);
  EXPECT_EQ(observer_.rebalances()[0].ev, "partitions_assigned");
  EXPECT_EQ(observer_.rebalances()[0].partitions,
            (std::vector<TopicPartition>{Tp("t", 0), Tp("my-topic", 12)}));
  EXPECT_EQ(observer_.rebalances()[1].ev, "partitions_revoked");
  EXPECT_TRUE(observer_.rebalances()[1].partitions.empty());
  ASSERT_EQ(observer_.offset_resets().size(), 1u);
  EXPECT_EQ(observer_.offset_resets()[0].client, "c1");
  EXPECT_EQ(observer_.offset_resets()[0].tp, Tp("t", 2));
  EXPECT_EQ(observer_.offset_resets()[0].strategy, "latest");
  EXPECT_EQ(observer_.offset_resets()[0].offset, Offset(40));
  EXPECT_EQ(observer_.offset_resets()[0].from, Offset(-1));
  ASSERT_EQ(observer_.invariant_violations().size(), 1u);
  EXPECT_EQ(observer_.invariant_violations()[0].Text(), "hw_monotonic t-0: HW went from 5 to 3");
  EXPECT_EQ(observer_.invariant_violations()[0].rule, "hw_monotonic");
  EXPECT_EQ(observer_.invariant_violations()[0].committed_us, -1);  // not committed_records_stable
}

TEST_F(RunObserverTest, FaultsAreRecordedWithAShortDetailAndOthersIgnored) {
  observer_.OnEvent(1 * kSecond, "broker-1", "crash",
                    TraceFields{{"tear", true}, {"corrupt", false}});
  observer_.OnEvent(
      2 * kSecond, "world", "partition",
      TraceFields{{"sides", TraceFields::array({TraceFields::array({"broker-1"}),
                                                TraceFields::array({"broker-2", "zk"})})},
                  {"one_way", false}});
  observer_.OnEvent(3 * kSecond, "broker-2", "slow",
                    TraceFields{{"extra_delay_us", 200'000}, {"for_us", 5 * kSecond}});
  observer_.OnEvent(4 * kSecond, "broker-3", "disk_fault",
                    TraceFields{{"fault", "write_error"}, {"once", true}});
  observer_.OnEvent(5 * kSecond, "broker-2", "zk_expire", TraceFields{{"session", 7}});
  observer_.OnEvent(6 * kSecond, "world", "heal", TraceFields::object());
  observer_.OnEvent(7 * kSecond, "broker-1", "restart", TraceFields{{"incarnation", 2}});
  observer_.OnEvent(8 * kSecond, "broker-1", "segment_roll", TraceFields::object());
  observer_.OnEvent(9 * kSecond, "p1", "ack", TraceFields{{"topic", "t"}, {"partition", 0}});
  std::vector<std::string> seen;
  for (const FaultRecord& f : observer_.faults()) {
    seen.push_back(FormatSeconds(f.t_us) + " " + f.node + " " + f.ev + " [" + f.detail + "]");
  }
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "1.000 s broker-1 crash [torn unsynced tail]",
                      "2.000 s world partition [broker-1 | broker-2,zk]",
                      "3.000 s broker-2 slow [+200 ms for 5.000 s]",
                      "4.000 s broker-3 disk_fault [write_error once]",
                      "5.000 s broker-2 zk_expire [session 7]",
                      "6.000 s world heal []",
                      "7.000 s broker-1 restart [incarnation 2]",
                  }));
  EXPECT_TRUE(observer_.elections().empty());
  EXPECT_TRUE(observer_.retries().empty());
}

TEST_F(RunObserverTest, ZooKeeperDownAndUpAreFaults) {
  observer_.OnEvent(5 * kSecond, "zk", "zk_down", TraceFields::object());
  observer_.OnEvent(5 * kSecond + 500'000, "zk", "zk_up", TraceFields::object());
  std::vector<std::string> seen;
  for (const FaultRecord& f : observer_.faults()) {
    seen.push_back(FormatSeconds(f.t_us) + " " + f.node + " " + f.ev + " [" + f.detail + "]");
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"5.000 s zk zk_down []", "5.500 s zk zk_up []"}));
}

TEST_F(RunObserverTest, AConsoleConsumerStoppingItselfIsNotAFault) {
  // cli-3 stops at --max-messages (its exit line, then its shutdown at the same time) and the
  // final phase restarts its node; cli-4 is shut down without having stopped itself, and cli-3
  // crashed later still is a fault.
  auto output = [this](TimeUs t_us, int64_t index, const std::string& line) {
    observer_.OnEvent(t_us, "scenario", "cli_output",
                      TraceFields{{"index", index}, {"line", line}});
  };
  output(3 * kSecond, 3, "hello java");
  output(3 * kSecond, 3, "Processed a total of 1 messages");
  observer_.OnEvent(3 * kSecond, "cli-3", "shutdown", TraceFields::object());
  output(4 * kSecond, 4, "hello java");
  observer_.OnEvent(4 * kSecond, "cli-4", "shutdown", TraceFields::object());
  // The exit line printed by another node than the runner's does not count.
  observer_.OnEvent(5 * kSecond, "cli-5", "cli_output",
                    TraceFields{{"index", 5}, {"line", "Processed a total of 0 messages"}});
  observer_.OnEvent(5 * kSecond, "cli-5", "shutdown", TraceFields::object());
  observer_.OnEvent(8 * kSecond, "cli-3", "restart", TraceFields{{"incarnation", 2}});
  observer_.OnEvent(9 * kSecond, "cli-3", "crash", TraceFields::object());
  std::vector<std::string> seen;
  for (const FaultRecord& f : observer_.faults()) {
    seen.push_back(FormatSeconds(f.t_us) + " " + f.node + " " + f.ev);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"4.000 s cli-4 shutdown", "5.000 s cli-5 shutdown",
                                            "9.000 s cli-3 crash"}));
}

TEST_F(RunObserverTest, FetchedPositionsAndCommitWritesAreRecorded) {
  observer_.OnEvent(
      1 * kSecond, "c1", "offset_fetched",
      TraceFields{{"group", "g1"}, {"topic", "t"}, {"partition", 0}, {"offset", 197}});
  observer_.OnEvent(2 * kSecond, "broker-1", "offsets_committed",
                    TraceFields{{"group", "g1"}, {"partitions", 1}, {"error", "NONE"}});
  observer_.OnEvent(3 * kSecond, "c1", "offset_fetched",
                    TraceFields{{"group", "g1"}, {"topic", "t"}});  // no partition: skipped
  ASSERT_EQ(observer_.offset_fetches().size(), 1u);
  const OffsetFetchRecord& fetched = observer_.offset_fetches()[0];
  EXPECT_EQ(fetched.t_us, 1 * kSecond);
  EXPECT_EQ(fetched.client, "c1");
  EXPECT_EQ(fetched.group, "g1");
  EXPECT_EQ(fetched.tp, tp_);
  EXPECT_EQ(fetched.offset, Offset(197));
  ASSERT_EQ(observer_.commit_writes().size(), 1u);
  const CommitWriteRecord& write = observer_.commit_writes()[0];
  EXPECT_EQ(write.t_us, 2 * kSecond);
  EXPECT_EQ(write.broker, BrokerId(1));
  EXPECT_EQ(write.group, "g1");
  EXPECT_EQ(write.error, "NONE");
}

TEST_F(RunObserverTest, MalformedFieldsAreSkippedNotFatal) {
  observer_.OnEvent(1 * kSecond, "broker-1", "leader_elected", TraceFields{{"topic", 3}});
  observer_.OnEvent(1 * kSecond, "broker-1", "truncate", TraceFields::object());
  observer_.OnEvent(1 * kSecond, "c1", "partitions_assigned",
                    TraceFields{{"partitions", TraceFields::array({"no_partition", 5})}});
  EXPECT_TRUE(observer_.elections().empty());
  EXPECT_TRUE(observer_.truncations().empty());
  ASSERT_EQ(observer_.rebalances().size(), 1u);
  EXPECT_TRUE(observer_.rebalances()[0].partitions.empty());
  EXPECT_TRUE(observer_.partitions().empty());
}

TEST_F(RunObserverTest, TapsTheWorldsStateEvents) {
  ASSERT_TRUE(world_.AddNode("broker-1").ok());
  world_.Trace("broker-1", "leader_elected",
               EventFields(Elected(tp_, 1, 0, {1}, false, "new_partition")));
  world_.loop().ScheduleAfter(
      3 * kSecond, [this] { ASSERT_TRUE(world_.CrashNode("broker-1").ok()); }, "crash");
  world_.loop().RunUntilIdle(100);
  ASSERT_EQ(observer_.elections().size(), 1u);
  ASSERT_EQ(observer_.faults().size(), 1u);
  EXPECT_EQ(observer_.faults()[0].t_us, 3 * kSecond);
  EXPECT_EQ(observer_.faults()[0].ev, "crash");
  EXPECT_EQ(observer_.UnavailableMs(tp_, 5 * kSecond), 2000);
}

}  // namespace
}  // namespace ksim::sim
