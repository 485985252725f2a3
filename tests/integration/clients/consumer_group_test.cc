// Consumer groups in a simulated 3-broker cluster through the simulated clients: one consumer
// per partition inside a group (a fourth member on a 3-partition topic stays idle), and a member
// that dies has its partitions moved to the others once its session times out, after which they
// still receive every record; a member whose coordinator's broker crashes finds the new
// coordinator within a session and stays in the group.
#include <gtest/gtest.h>

#include "core/cluster/topic.h"
#include "core/coordinator/offsets_records.h"
#include "tests/support/sim/client_test_util.h"

namespace ksim::sim::testing {
namespace {

ConsumerClientOptions Member(const std::string& id) {
  ConsumerClientOptions options;
  options.id = id;
  options.topics = {"t"};
  options.group = "g1";
  options.config = {{"auto.offset.reset", "earliest"},
                    {"auto.commit.interval.ms", "1000"},
                    {"session.timeout.ms", "6000"},
                    {"heartbeat.interval.ms", "1000"}};
  return options;
}

// Every member's assignment, and whether together they hold each partition exactly once.
bool Covers(const std::vector<ConsumerClient*>& members, int32_t partitions) {
  std::map<TopicPartition, int> owners;
  for (ConsumerClient* member : members) {
    for (const TopicPartition& tp : member->assignment()) ++owners[tp];
  }
  if (owners.size() != static_cast<size_t>(partitions)) return false;
  for (const auto& [tp, count] : owners) {
    if (count != 1) return false;
  }
  return true;
}

TEST(ConsumerGroupTest, FourMembersOnThreePartitionsLeaveOneIdle) {
  ClientSim run("group-of-four", 4);
  ASSERT_TRUE(run.Start());
  ASSERT_TRUE(run.CreateTopic("t", 3, 2));
  std::vector<ConsumerClient*> members;
  for (const char* id : {"c1", "c2", "c3", "c4"}) members.push_back(&run.AddConsumer(Member(id)));
  ASSERT_TRUE(run.RunUntil(
      [&] {
        if (!Covers(members, 3)) return false;
        // Everyone in the same generation.
        const int32_t generation = members[0]->consumer()->generation();
        for (ConsumerClient* m : members) {
          if (m->consumer() == nullptr || m->consumer()->generation() != generation) return false;
        }
        return generation > 0;
      },
      120 * kSecondUs));
  int idle = 0;
  for (ConsumerClient* m : members) {
    EXPECT_LE(m->assignment().size(), 1u) << m->id();
    if (m->assignment().empty()) ++idle;
  }
  EXPECT_EQ(idle, 1);

  ProducerClientOptions producer;
  producer.id = "p1";
  producer.topic = "t";
  producer.messages = 30;
  producer.rate_per_s = 100;
  producer.start_ms = run.world().Now() / kUsPerMs;
  producer.config = {{"acks", "all"}};
  ProducerClient& p1 = run.AddProducer(producer);
  ASSERT_TRUE(run.RunUntil([&] { return p1.done() && run.DeliveredIds("g1").size() == 30; },
                           120 * kSecondUs));
  // Each record once to the group, from its partition's one owner; the idle member got nothing.
  for (const auto& [where, times] : run.Deliveries("g1")) EXPECT_EQ(times, 1);
  for (ConsumerClient* m : members) {
    if (m->assignment().empty()) {
      EXPECT_EQ(m->delivered(), 0) << m->id();
    } else {
      EXPECT_GT(m->delivered(), 0) << m->id();
      for (const auto& [where, times] : run.Deliveries("g1", m->id())) {
        EXPECT_EQ(where.first, m->assignment()[0].partition.value()) << m->id();
      }
    }
  }
}

TEST(ConsumerGroupTest, KilledMemberPartitionsMoveToTheOthersAfterSessionTimeout) {
  ClientSim run("group-member-dies", 6);
  ASSERT_TRUE(run.Start());
  ASSERT_TRUE(run.CreateTopic("t", 3, 2));
  std::vector<ConsumerClient*> members;
  for (const char* id : {"c1", "c2", "c3"}) members.push_back(&run.AddConsumer(Member(id)));
  ASSERT_TRUE(run.RunUntil([&] { return Covers(members, 3); }, 120 * kSecondUs));
  for (ConsumerClient* m : members) EXPECT_EQ(m->assignment().size(), 1u) << m->id();
  const int32_t generation = members[0]->consumer()->generation();

  ASSERT_TRUE(run.world().CrashNode("c2").ok());
  const TimeUs crashed_at_us = run.world().Now();
  const std::vector<ConsumerClient*> survivors{members[0], members[2]};
  ASSERT_TRUE(run.RunUntil(
      [&] { return Covers(survivors, 3) && members[0]->consumer()->generation() > generation; },
      120 * kSecondUs));
  // Not before the coordinator gave up on c2's session.
  EXPECT_GE(run.world().Now() - crashed_at_us, 6 * kSecondUs);
  EXPECT_EQ(members[0]->assignment().size() + members[2]->assignment().size(), 3u);

  // The survivors now read every partition.
  ProducerClientOptions producer;
  producer.id = "p1";
  producer.topic = "t";
  producer.messages = 30;
  producer.rate_per_s = 100;
  producer.start_ms = run.world().Now() / kUsPerMs;
  producer.config = {{"acks", "all"}};
  ProducerClient& p1 = run.AddProducer(producer);
  ASSERT_TRUE(run.RunUntil([&] { return p1.done() && run.DeliveredIds("g1").size() == 30; },
                           120 * kSecondUs));
  const std::vector<std::string> acked = run.AckedIds("p1");
  EXPECT_EQ(run.DeliveredIds("g1"), std::set<std::string>(acked.begin(), acked.end()));
  EXPECT_TRUE(run.Deliveries("g1", "c2").empty());
}

// Kafka's heartbeat (0.10.1's HeartbeatThread; at 0.10.0, the default here, the HeartbeatTask
// that poll() and the blocking commit run): a whole session without a heartbeat answer marks the
// coordinator unknown, so a consumer whose coordinator's broker crashed finds the group's new
// coordinator, keeps its membership there and commits again, well before the dead broker's
// disconnect notice (30 s, sim/world/network.h) would have told it. Without that, its commits hang
// on the dead broker, the new coordinator expires the silent member, and what it consumed meanwhile
// is redelivered after the rebalance.
TEST(ConsumerGroupTest, CoordinatorCrashMemberFindsTheNewCoordinatorAndKeepsCommitting) {
  ClientSim run("group-coordinator-crash", 8);
  ASSERT_TRUE(run.Start());
  ASSERT_TRUE(run.CreateTopic("t", 3, 3));
  ConsumerClientOptions member = Member("c1");
  member.commit = CommitMode::kAfterProcessing;  // each commit in the history
  ConsumerClient& c1 = run.AddConsumer(member);
  ProducerClientOptions producer;
  producer.id = "p1";
  producer.topic = "t";
  producer.messages = 1200;
  producer.rate_per_s = 20;
  producer.start_ms = run.world().Now() / kUsPerMs;
  // Kafka's default request.timeout.ms: before 2.1 a queued batch expires after it (KIP-91), and
  // the crashed broker's partitions take longer than 3 s to move; this test is about the consumer.
  producer.config = {{"acks", "all"}, {"retries", "1000"}, {"request.timeout.ms", "30000"}};
  ProducerClient& p1 = run.AddProducer(producer);
  ASSERT_TRUE(run.RunUntil(
      [&] {
        return c1.consumer() != nullptr && c1.consumer()->generation() > 0 &&
               run.DeliveredIds("g1").size() >= 20;
      },
      120 * kSecondUs));
  const int32_t generation = c1.consumer()->generation();
  const std::string member_id = c1.consumer()->member_id();
  const TopicPartition offsets_partition{std::string(kGroupMetadataTopicName),
                                         PartitionId(OffsetsPartitionFor("g1", 3))};
  const BrokerId coordinator = run.cluster().LeaderOf(offsets_partition);
  ASSERT_NE(coordinator, kNoBroker);

  ASSERT_TRUE(run.cluster().CrashBroker(coordinator).ok());
  const TimeUs crashed_at_us = run.world().Now();
  // Less than the disconnect notice's 30 s: only the session timeout can tell c1.
  run.cluster().RunFor(25 * kSecondUs);
  EXPECT_EQ(c1.consumer()->generation(), generation) << "no rebalance";
  EXPECT_EQ(c1.consumer()->member_id(), member_id);
  int commits_after_crash = 0;
  for (const HistoryOp* op : run.history().Select(OpFunction::kCommit, OpType::kOk)) {
    if (op->process == "c1" && op->t_us > crashed_at_us) ++commits_after_crash;
  }
  EXPECT_GT(commits_after_crash, 0) << "commits reach the new coordinator";
  for (const HistoryOp* op : run.history().Select(OpFunction::kCommit, OpType::kFail)) {
    EXPECT_LE(op->t_us, crashed_at_us) << ErrcName(op->error);
  }

  // Every record once: nothing redelivered by a rebalance.
  ASSERT_TRUE(run.RunUntil([&] { return p1.done() && run.DeliveredIds("g1").size() == 1200; },
                           300 * kSecondUs));
  EXPECT_EQ(c1.consumer()->generation(), generation);
  for (const auto& [where, times] : run.Deliveries("g1")) {
    EXPECT_EQ(times, 1) << where.first << "/" << where.second;
  }
}

}  // namespace
}  // namespace ksim::sim::testing
