// Consumer partition assignors and ConsumerProtocol's encodings: the cases of Kafka's
// RangeAssignorTest and RoundRobinAssignorTest (0.10), properties every assignment must have
// (each subscribed partition to exactly one subscribed member), the version 0 byte layouts
// written out by hand, and the decoders' refusal of damaged input.
#include "core/clients/consumer/assignors.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/base/random.h"

namespace ksim {
namespace {

TopicPartition Tp(const std::string& topic, int32_t partition) {
  return TopicPartition{topic, PartitionId(partition)};
}
using Partitions = std::vector<TopicPartition>;

const RangeAssignor kRange;
const RoundRobinAssignor kRoundRobin;

// --- RangeAssignorTest ---

TEST(RangeAssignorTest, OneConsumerNoTopic) {
  const MemberPartitions a = kRange.Assign({}, {{"consumer", {}}});
  ASSERT_EQ(a.size(), 1u);
  EXPECT_TRUE(a.at("consumer").empty());
}

TEST(RangeAssignorTest, OneConsumerNonexistentTopic) {
  const MemberPartitions a = kRange.Assign({}, {{"consumer", {"topic"}}});
  ASSERT_EQ(a.size(), 1u);
  EXPECT_TRUE(a.at("consumer").empty());
}

TEST(RangeAssignorTest, OneConsumerOneTopic) {
  const MemberPartitions a = kRange.Assign({{"topic", 3}}, {{"consumer", {"topic"}}});
  EXPECT_EQ(a.at("consumer"), (Partitions{Tp("topic", 0), Tp("topic", 1), Tp("topic", 2)}));
}

TEST(RangeAssignorTest, OnlyAssignsPartitionsFromSubscribedTopics) {
  const MemberPartitions a =
      kRange.Assign({{"topic", 3}, {"otherTopic", 3}}, {{"consumer", {"topic"}}});
  EXPECT_EQ(a.at("consumer"), (Partitions{Tp("topic", 0), Tp("topic", 1), Tp("topic", 2)}));
}

TEST(RangeAssignorTest, OneConsumerMultipleTopics) {
  const MemberPartitions a =
      kRange.Assign({{"topic1", 1}, {"topic2", 2}}, {{"consumer", {"topic1", "topic2"}}});
  EXPECT_EQ(a.at("consumer"), (Partitions{Tp("topic1", 0), Tp("topic2", 0), Tp("topic2", 1)}));
}

TEST(RangeAssignorTest, TwoConsumersOneTopicOnePartition) {
  const MemberPartitions a =
      kRange.Assign({{"topic", 1}}, {{"consumer1", {"topic"}}, {"consumer2", {"topic"}}});
  EXPECT_EQ(a.at("consumer1"), (Partitions{Tp("topic", 0)}));
  EXPECT_TRUE(a.at("consumer2").empty());
}

TEST(RangeAssignorTest, TwoConsumersOneTopicTwoPartitions) {
  const MemberPartitions a =
      kRange.Assign({{"topic", 2}}, {{"consumer1", {"topic"}}, {"consumer2", {"topic"}}});
  EXPECT_EQ(a.at("consumer1"), (Partitions{Tp("topic", 0)}));
  EXPECT_EQ(a.at("consumer2"), (Partitions{Tp("topic", 1)}));
}

TEST(RangeAssignorTest, MultipleConsumersMixedTopics) {
  const MemberPartitions a = kRange.Assign(
      {{"topic1", 3}, {"topic2", 2}},
      {{"consumer1", {"topic1"}}, {"consumer2", {"topic1", "topic2"}}, {"consumer3", {"topic1"}}});
  EXPECT_EQ(a.at("consumer1"), (Partitions{Tp("topic1", 0)}));
  EXPECT_EQ(a.at("consumer2"), (Partitions{Tp("topic1", 1), Tp("topic2", 0), Tp("topic2", 1)}));
  EXPECT_EQ(a.at("consumer3"), (Partitions{Tp("topic1", 2)}));
}

TEST(RangeAssignorTest, TwoConsumersTwoTopicsSixPartitions) {
  const MemberPartitions a =
      kRange.Assign({{"topic1", 3}, {"topic2", 3}},
                    {{"consumer1", {"topic1", "topic2"}}, {"consumer2", {"topic1", "topic2"}}});
  EXPECT_EQ(a.at("consumer1"),
            (Partitions{Tp("topic1", 0), Tp("topic1", 1), Tp("topic2", 0), Tp("topic2", 1)}));
  EXPECT_EQ(a.at("consumer2"), (Partitions{Tp("topic1", 2), Tp("topic2", 2)}));
}

TEST(RangeAssignorTest, FirstConsumersGetTheRemainder) {
  // 10 partitions over 3 consumers: 4, 3, 3 in member-id order, consecutive ranges.
  const MemberPartitions a = kRange.Assign({{"t", 10}}, {{"c", {"t"}}, {"a", {"t"}}, {"b", {"t"}}});
  EXPECT_EQ(a.at("a"), (Partitions{Tp("t", 0), Tp("t", 1), Tp("t", 2), Tp("t", 3)}));
  EXPECT_EQ(a.at("b"), (Partitions{Tp("t", 4), Tp("t", 5), Tp("t", 6)}));
  EXPECT_EQ(a.at("c"), (Partitions{Tp("t", 7), Tp("t", 8), Tp("t", 9)}));
}

TEST(RangeAssignorTest, MoreConsumersThanPartitionsLeavesIdleConsumers) {
  const MemberPartitions a =
      kRange.Assign({{"t", 2}}, {{"c1", {"t"}}, {"c2", {"t"}}, {"c3", {"t"}}, {"c4", {"t"}}});
  EXPECT_EQ(a.at("c1"), (Partitions{Tp("t", 0)}));
  EXPECT_EQ(a.at("c2"), (Partitions{Tp("t", 1)}));
  EXPECT_TRUE(a.at("c3").empty());
  EXPECT_TRUE(a.at("c4").empty());
}

TEST(RangeAssignorTest, MembersAreSortedByIdNotByInsertion) {
  // Member ids as Kafka makes them (client id + "-" + UUID); the smallest id gets the extra one.
  const MemberPartitions a =
      kRange.Assign({{"t", 3}}, {{"consumer-2-aaaa", {"t"}}, {"consumer-1-zzzz", {"t"}}});
  EXPECT_EQ(a.at("consumer-1-zzzz"), (Partitions{Tp("t", 0), Tp("t", 1)}));
  EXPECT_EQ(a.at("consumer-2-aaaa"), (Partitions{Tp("t", 2)}));
}

// --- RoundRobinAssignorTest ---

TEST(RoundRobinAssignorTest, OneConsumerNoTopic) {
  const MemberPartitions a = kRoundRobin.Assign({}, {{"consumer", {}}});
  EXPECT_TRUE(a.at("consumer").empty());
}

TEST(RoundRobinAssignorTest, OneConsumerNonexistentTopic) {
  const MemberPartitions a = kRoundRobin.Assign({}, {{"consumer", {"topic"}}});
  EXPECT_TRUE(a.at("consumer").empty());
}

TEST(RoundRobinAssignorTest, OneConsumerOneTopic) {
  const MemberPartitions a = kRoundRobin.Assign({{"topic", 3}}, {{"consumer", {"topic"}}});
  EXPECT_EQ(a.at("consumer"), (Partitions{Tp("topic", 0), Tp("topic", 1), Tp("topic", 2)}));
}

TEST(RoundRobinAssignorTest, OnlyAssignsPartitionsFromSubscribedTopics) {
  const MemberPartitions a =
      kRoundRobin.Assign({{"topic", 3}, {"otherTopic", 3}}, {{"consumer", {"topic"}}});
  EXPECT_EQ(a.at("consumer"), (Partitions{Tp("topic", 0), Tp("topic", 1), Tp("topic", 2)}));
}

TEST(RoundRobinAssignorTest, OneConsumerMultipleTopics) {
  const MemberPartitions a =
      kRoundRobin.Assign({{"topic1", 1}, {"topic2", 2}}, {{"consumer", {"topic1", "topic2"}}});
  EXPECT_EQ(a.at("consumer"), (Partitions{Tp("topic1", 0), Tp("topic2", 0), Tp("topic2", 1)}));
}

TEST(RoundRobinAssignorTest, TwoConsumersOneTopicOnePartition) {
  const MemberPartitions a =
      kRoundRobin.Assign({{"topic", 1}}, {{"consumer1", {"topic"}}, {"consumer2", {"topic"}}});
  EXPECT_EQ(a.at("consumer1"), (Partitions{Tp("topic", 0)}));
  EXPECT_TRUE(a.at("consumer2").empty());
}

TEST(RoundRobinAssignorTest, TwoConsumersOneTopicTwoPartitions) {
  const MemberPartitions a =
      kRoundRobin.Assign({{"topic", 2}}, {{"consumer1", {"topic"}}, {"consumer2", {"topic"}}});
  EXPECT_EQ(a.at("consumer1"), (Partitions{Tp("topic", 0)}));
  EXPECT_EQ(a.at("consumer2"), (Partitions{Tp("topic", 1)}));
}

TEST(RoundRobinAssignorTest, MultipleConsumersMixedTopics) {
  // Sorted partitions t1-0 t1-1 t1-2 t2-0 t2-1 dealt to c1 c2 c3 c1 ...; t2 only to c2.
  const MemberPartitions a = kRoundRobin.Assign(
      {{"topic1", 3}, {"topic2", 2}},
      {{"consumer1", {"topic1"}}, {"consumer2", {"topic1", "topic2"}}, {"consumer3", {"topic1"}}});
  EXPECT_EQ(a.at("consumer1"), (Partitions{Tp("topic1", 0)}));
  EXPECT_EQ(a.at("consumer2"), (Partitions{Tp("topic1", 1), Tp("topic2", 0), Tp("topic2", 1)}));
  EXPECT_EQ(a.at("consumer3"), (Partitions{Tp("topic1", 2)}));
}

TEST(RoundRobinAssignorTest, TwoConsumersTwoTopicsSixPartitions) {
  const MemberPartitions a = kRoundRobin.Assign(
      {{"topic1", 3}, {"topic2", 3}},
      {{"consumer1", {"topic1", "topic2"}}, {"consumer2", {"topic1", "topic2"}}});
  EXPECT_EQ(a.at("consumer1"), (Partitions{Tp("topic1", 0), Tp("topic1", 2), Tp("topic2", 1)}));
  EXPECT_EQ(a.at("consumer2"), (Partitions{Tp("topic1", 1), Tp("topic2", 0), Tp("topic2", 2)}));
}

TEST(RoundRobinAssignorTest, MoreConsumersThanPartitionsLeavesIdleConsumers) {
  const MemberPartitions a =
      kRoundRobin.Assign({{"t", 2}}, {{"c1", {"t"}}, {"c2", {"t"}}, {"c3", {"t"}}});
  EXPECT_EQ(a.at("c1"), (Partitions{Tp("t", 0)}));
  EXPECT_EQ(a.at("c2"), (Partitions{Tp("t", 1)}));
  EXPECT_TRUE(a.at("c3").empty());
}

TEST(RoundRobinAssignorTest, RotationContinuesAcrossTopics) {
  // Range gives c1 both first partitions; round-robin carries the turn from t1 into t2.
  const MemberPartitions a =
      kRoundRobin.Assign({{"t1", 1}, {"t2", 1}}, {{"c1", {"t1", "t2"}}, {"c2", {"t1", "t2"}}});
  EXPECT_EQ(a.at("c1"), (Partitions{Tp("t1", 0)}));
  EXPECT_EQ(a.at("c2"), (Partitions{Tp("t2", 0)}));
  const MemberPartitions r =
      kRange.Assign({{"t1", 1}, {"t2", 1}}, {{"c1", {"t1", "t2"}}, {"c2", {"t1", "t2"}}});
  EXPECT_EQ(r.at("c1"), (Partitions{Tp("t1", 0), Tp("t2", 0)}));
  EXPECT_TRUE(r.at("c2").empty());
}

// --- properties over random groups ---

void ExpectEveryPartitionOnceToASubscriber(const std::map<std::string, int32_t>& partitions,
                                           const GroupSubscriptions& subscriptions,
                                           const MemberPartitions& assignment) {
  ASSERT_EQ(assignment.size(), subscriptions.size());
  std::set<std::string> subscribed_topics;
  for (const auto& [member, topics] : subscriptions) {
    subscribed_topics.insert(topics.begin(), topics.end());
  }
  std::map<TopicPartition, int> owners;
  for (const auto& [member, assigned] : assignment) {
    const std::vector<std::string>& topics = subscriptions.at(member);
    for (const TopicPartition& tp : assigned) {
      EXPECT_NE(std::find(topics.begin(), topics.end(), tp.topic), topics.end())
          << member << " got " << tp << " without subscribing";
      ++owners[tp];
    }
  }
  size_t expected = 0;
  for (const std::string& topic : subscribed_topics) {
    const auto it = partitions.find(topic);
    if (it == partitions.end()) continue;
    for (int32_t p = 0; p < it->second; ++p) {
      ++expected;
      EXPECT_EQ(owners[Tp(topic, p)], 1) << Tp(topic, p);
    }
  }
  EXPECT_EQ(owners.size(), expected);
}

TEST(AssignorPropertyTest, RandomGroupsAssignEachSubscribedPartitionExactlyOnce) {
  StreamRandomSource random(2024);
  const std::vector<std::string> all_topics{"a", "b", "c", "d"};
  for (int round = 0; round < 300; ++round) {
    std::map<std::string, int32_t> partitions;
    for (const std::string& t : all_topics) {
      if (random.NextInt(5) != 0) partitions[t] = random.NextInt(9);  // sometimes no metadata
    }
    GroupSubscriptions subscriptions;
    const int members = 1 + random.NextInt(6);
    for (int m = 0; m < members; ++m) {
      std::vector<std::string> topics;
      for (const std::string& t : all_topics) {
        if (random.NextInt(2) == 0) topics.push_back(t);
      }
      subscriptions["member-" + std::to_string(random.NextInt(1000))] = topics;
    }
    for (const PartitionAssignor* assignor :
         std::vector<const PartitionAssignor*>{&kRange, &kRoundRobin}) {
      SCOPED_TRACE(std::string(assignor->Name()) + " round " + std::to_string(round));
      ExpectEveryPartitionOnceToASubscriber(partitions, subscriptions,
                                            assignor->Assign(partitions, subscriptions));
    }
  }
}

TEST(AssignorPropertyTest, RoundRobinBalancesIdenticalSubscriptionsWithinOne) {
  StreamRandomSource random(99);
  for (int round = 0; round < 100; ++round) {
    std::map<std::string, int32_t> partitions{{"x", random.NextInt(20)}, {"y", random.NextInt(20)}};
    GroupSubscriptions subscriptions;
    const int members = 1 + random.NextInt(7);
    for (int m = 0; m < members; ++m) subscriptions["m" + std::to_string(m)] = {"x", "y"};
    size_t most = 0;
    size_t least = SIZE_MAX;
    for (const auto& [member, assigned] : kRoundRobin.Assign(partitions, subscriptions)) {
      most = std::max(most, assigned.size());
      least = std::min(least, assigned.size());
    }
    EXPECT_LE(most - least, 1u);
  }
}

TEST(AssignorTest, RegistryKnowsBothNamesAndKafkaClassNames) {
  EXPECT_EQ(MakePartitionAssignor("range")->Name(), "range");
  EXPECT_EQ(MakePartitionAssignor("roundrobin")->Name(), "roundrobin");
  EXPECT_EQ(MakePartitionAssignor("org.apache.kafka.clients.consumer.RangeAssignor")->Name(),
            "range");
  EXPECT_EQ(MakePartitionAssignor("org.apache.kafka.clients.consumer.RoundRobinAssignor")->Name(),
            "roundrobin");
  EXPECT_EQ(MakePartitionAssignor("sticky"), nullptr);
}

TEST(AssignorTest, AssignGroupRunsTheAssignorOverSubscriptions) {
  std::map<std::string, ConsumerSubscription> subs;
  subs["c1"].topics = {"t"};
  subs["c2"].topics = {"t"};
  const auto out = AssignGroup(kRange, {{"t", 3}}, subs);
  EXPECT_EQ(out.at("c1").partitions, (Partitions{Tp("t", 0), Tp("t", 1)}));
  EXPECT_EQ(out.at("c2").partitions, (Partitions{Tp("t", 2)}));
  EXPECT_EQ(out.at("c1").user_data, Bytes{});
}

// --- ConsumerProtocol encodings ---

TEST(ConsumerProtocolTest, SubscriptionV0Layout) {
  ConsumerSubscription s;
  s.topics = {"ab", "c"};
  s.user_data = Bytes{0x7f};
  const Bytes expected{0x00, 0x00,                     // version 0
                       0x00, 0x00, 0x00, 0x02,         // 2 topics
                       0x00, 0x02, 'a',  'b',          // "ab"
                       0x00, 0x01, 'c',                // "c"
                       0x00, 0x00, 0x00, 0x01, 0x7f};  // user data, 1 byte
  EXPECT_EQ(EncodeSubscription(s), expected);
  const Result<ConsumerSubscription> decoded = DecodeSubscription(expected);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, s);
}

TEST(ConsumerProtocolTest, NullAndEmptyUserDataDiffer) {
  ConsumerSubscription s;
  s.user_data = std::nullopt;
  const Bytes null_bytes = EncodeSubscription(s);
  EXPECT_EQ(null_bytes, (Bytes{0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}));
  EXPECT_FALSE(DecodeSubscription(null_bytes)->user_data.has_value());
  s.user_data = Bytes{};
  const Bytes empty_bytes = EncodeSubscription(s);
  EXPECT_EQ(empty_bytes, (Bytes{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(DecodeSubscription(empty_bytes)->user_data, Bytes{});
}

TEST(ConsumerProtocolTest, AssignmentV0LayoutGroupsByTopic) {
  ConsumerAssignment a;
  a.partitions = {Tp("t", 2), Tp("u", 0), Tp("t", 5)};
  a.user_data = std::nullopt;
  const Bytes expected{0x00, 0x00,               // version 0
                       0x00, 0x00, 0x00, 0x02,   // 2 topics
                       0x00, 0x01, 't',          // "t"
                       0x00, 0x00, 0x00, 0x02,   //   2 partitions
                       0x00, 0x00, 0x00, 0x02,   //   2
                       0x00, 0x00, 0x00, 0x05,   //   5
                       0x00, 0x01, 'u',          // "u"
                       0x00, 0x00, 0x00, 0x01,   //   1 partition
                       0x00, 0x00, 0x00, 0x00,   //   0
                       0xff, 0xff, 0xff, 0xff};  // null user data
  EXPECT_EQ(EncodeAssignment(a), expected);
  const Result<ConsumerAssignment> decoded = DecodeAssignment(expected);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->partitions, (Partitions{Tp("t", 2), Tp("t", 5), Tp("u", 0)}));
  EXPECT_FALSE(decoded->user_data.has_value());
  EXPECT_EQ(EncodeAssignment(*decoded), expected);
}

TEST(ConsumerProtocolTest, LaterVersionsAreReadAsVersionZeroIgnoringTrailingFields) {
  // Forward compatibility as ConsumerProtocol: a v1 subscription (owned partitions appended)
  // still yields its topics and user data.
  Bytes bytes = EncodeSubscription(ConsumerSubscription{{"t"}, Bytes{}});
  bytes[1] = 1;
  for (uint8_t b : {0, 0, 0, 0}) bytes.push_back(b);  // an empty owned-partitions array
  const Result<ConsumerSubscription> decoded = DecodeSubscription(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->topics, std::vector<std::string>{"t"});
}

TEST(ConsumerProtocolTest, NegativeVersionIsCorruption) {
  Bytes bytes = EncodeSubscription(ConsumerSubscription{{"t"}, Bytes{}});
  bytes[0] = 0xff;
  bytes[1] = 0xff;
  EXPECT_EQ(DecodeSubscription(bytes).status(), Errc::kCorruption);
  Bytes assignment = EncodeAssignment(ConsumerAssignment{{Tp("t", 0)}, Bytes{}});
  assignment[0] = 0x80;
  EXPECT_EQ(DecodeAssignment(assignment).status(), Errc::kCorruption);
}

TEST(ConsumerProtocolTest, EveryTruncationIsCorruption) {
  const Bytes sub = EncodeSubscription(ConsumerSubscription{{"topic-a", "b"}, Bytes{1, 2, 3}});
  for (size_t n = 0; n < sub.size(); ++n) {
    EXPECT_EQ(DecodeSubscription(ByteView(sub).first(n)).status(), Errc::kCorruption) << n;
  }
  const Bytes asg = EncodeAssignment(ConsumerAssignment{{Tp("t", 1), Tp("v", 3)}, Bytes{9}});
  for (size_t n = 0; n < asg.size(); ++n) {
    EXPECT_EQ(DecodeAssignment(ByteView(asg).first(n)).status(), Errc::kCorruption) << n;
  }
}

TEST(ConsumerProtocolTest, ForgedLengthsAreCorruption) {
  // Negative topic count, huge topic count, negative string length, user data length -2.
  EXPECT_EQ(DecodeSubscription(Bytes{0, 0, 0xff, 0xff, 0xff, 0xfe}).status(), Errc::kCorruption);
  EXPECT_EQ(DecodeSubscription(Bytes{0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 1, 'x'}).status(),
            Errc::kCorruption);
  EXPECT_EQ(DecodeSubscription(Bytes{0, 0, 0, 0, 0, 1, 0xff, 0xff}).status(), Errc::kCorruption);
  EXPECT_EQ(DecodeSubscription(Bytes{0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xfe}).status(),
            Errc::kCorruption);
  EXPECT_EQ(DecodeAssignment(Bytes{0, 0, 0, 0, 0, 1, 0, 0, 0x40, 0, 0, 0}).status(),
            Errc::kCorruption);
}

TEST(ConsumerProtocolTest, RandomAssignmentsRoundTrip) {
  StreamRandomSource random(5);
  for (int round = 0; round < 200; ++round) {
    ConsumerAssignment a;
    const int topics = random.NextInt(4);
    for (int t = 0; t < topics; ++t) {
      const std::string topic(static_cast<size_t>(1 + random.NextInt(5)),
                              static_cast<char>('a' + t));
      const int n = random.NextInt(5);
      for (int p = 0; p < n; ++p) a.partitions.push_back(Tp(topic, random.NextInt(1000)));
    }
    if (random.NextInt(3) == 0) {
      a.user_data = std::nullopt;
    } else {
      a.user_data = Bytes(static_cast<size_t>(random.NextInt(4)), 0xab);
    }
    const Result<ConsumerAssignment> decoded = DecodeAssignment(EncodeAssignment(a));
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(*decoded, a);  // topics were generated grouped, so order survives
  }
}

}  // namespace
}  // namespace ksim
