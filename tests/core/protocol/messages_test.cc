#include "core/protocol/messages.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace ksim {
namespace {

// Every alternative of Message, default-constructed, in variant order.
template <size_t... I>
std::vector<Message> AllDefaults(std::index_sequence<I...>) {
  return {Message(std::in_place_index<I>)...};
}
std::vector<Message> AllMessages() {
  return AllDefaults(std::make_index_sequence<std::variant_size_v<Message>>());
}

TEST(TopicPartitionTest, PrintsLikeKafkaAndOrdersByTopicThenPartition) {
  TopicPartition a{"t", PartitionId(0)};
  TopicPartition b{"t", PartitionId(10)};
  TopicPartition c{"u", PartitionId(1)};
  EXPECT_EQ(ToString(a), "t-0");
  EXPECT_EQ(ToString(b), "t-10");
  std::ostringstream os;
  os << c;
  EXPECT_EQ(os.str(), "u-1");
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  std::unordered_set<TopicPartition> set{a, b, c, TopicPartition{"t", PartitionId(0)}};
  EXPECT_EQ(set.size(), 3u);
}

TEST(ProtocolTest, EveryMessageHasAKindAnApiKeyAndAMatchingPartner) {
  std::vector<Message> all = AllMessages();
  ASSERT_EQ(all.size(), 36u);
  std::set<std::string> kinds;
  for (size_t i = 0; i < all.size(); ++i) {
    const std::string kind(MessageKind(all[i]));
    EXPECT_FALSE(kind.empty());
    EXPECT_TRUE(kinds.insert(kind).second) << "duplicate kind " << kind;
    // Requests and their responses alternate in the variant.
    EXPECT_EQ(IsRequest(all[i]), i % 2 == 0) << kind;
    if (i % 2 == 1) {
      EXPECT_EQ(kind, std::string(MessageKind(all[i - 1])) + "Response");
      EXPECT_EQ(ApiKey(all[i]), ApiKey(all[i - 1])) << kind;
    }
  }
  EXPECT_EQ(ApiKey(ProduceRequest{}), 0);
  EXPECT_EQ(ApiKey(FetchRequest{}), 1);
  EXPECT_EQ(ApiKey(LeaderAndIsrRequest{}), 4);
  EXPECT_EQ(ApiKey(OffsetsForLeaderEpochRequest{}), 23);
  EXPECT_EQ(ApiKey(ApiVersionsRequest{}), 18);
}

TEST(ProtocolTest, CorrelationIdRoundTripsForEveryMessage) {
  int32_t id = 100;
  for (Message& message : AllMessages()) {
    EXPECT_EQ(CorrelationId(message), 0);
    SetCorrelationId(message, id);
    EXPECT_EQ(CorrelationId(message), id) << MessageKind(message);
    EXPECT_EQ(Describe(message)["correlation_id"], id);
    ++id;
  }
}

TEST(ProtocolTest, OnlyRequestsOtherThanAcksZeroProduceExpectResponses) {
  for (const Message& message : AllMessages()) {
    if (std::holds_alternative<ProduceRequest>(message)) continue;
    EXPECT_EQ(ExpectsResponse(message), IsRequest(message)) << MessageKind(message);
  }
  ProduceRequest produce;
  for (int16_t acks : {-1, 1, 2}) {
    produce.acks = acks;
    EXPECT_TRUE(ExpectsResponse(produce));
  }
  produce.acks = 0;
  EXPECT_FALSE(ExpectsResponse(produce));
}

TEST(ProtocolTest, WireSizeOfEveryMessageCoversItsHeader) {
  for (const Message& message : AllMessages()) {
    const int64_t header = IsRequest(message) ? 14 : 8;
    if (std::holds_alternative<ApiVersionsRequest>(message)) {
      EXPECT_EQ(ApproximateWireSize(message), header);  // v0-v2 have no body
    } else {
      EXPECT_GT(ApproximateWireSize(message), header) << MessageKind(message);
    }
  }
  // The smallest: UpdateMetadataResponse is the header and an error code.
  EXPECT_EQ(ApproximateWireSize(UpdateMetadataResponse{}), 8 + 2);
  // Heartbeat: header, two empty strings, an int32.
  EXPECT_EQ(ApproximateWireSize(HeartbeatRequest{}), 14 + 2 + 4 + 2);
}

TEST(ProtocolTest, ProduceWireSizeCountsFieldsAndRecordBytes) {
  ProduceRequest produce;
  produce.acks = -1;
  produce.topic_data.push_back({TopicPartition{"t", PartitionId(0)}, Bytes(100, 0xab)});
  // header 14 + null transactional_id 2 + acks 2 + timeout 4 + array 4
  // + partition (topic 2+1, partition 4, records 4+100)
  EXPECT_EQ(ApproximateWireSize(produce), 14 + 2 + 2 + 4 + 4 + (3 + 4 + 104));
  produce.transactional_id = "tx";
  EXPECT_EQ(ApproximateWireSize(produce), 137 + 2);
  produce.topic_data.push_back({TopicPartition{"t", PartitionId(1)}, Bytes(1000, 1)});
  EXPECT_EQ(ApproximateWireSize(produce), 139 + 3 + 4 + 1004);
}

TEST(ProtocolTest, FetchResponseWireSizeGrowsByTheRecordBytes) {
  FetchResponse response;
  FetchPartitionResponse partition;
  partition.tp = TopicPartition{"t", PartitionId(0)};
  response.responses.push_back(partition);
  const int64_t empty = ApproximateWireSize(response);
  // header 8 + throttle 4 + array 4 + tp 7 + error 2 + hw/lso/log start 24 + records 4
  EXPECT_EQ(empty, 8 + 4 + 4 + 7 + 2 + 24 + 4);
  response.responses[0].records = Bytes(4096, 7);
  EXPECT_EQ(ApproximateWireSize(response), empty + 4096);
}

TEST(ProtocolTest, MetadataNullTopicsMeanAllAndCountAsANullArray) {
  MetadataRequest all;
  MetadataRequest none;
  none.topics = std::vector<std::string>{};
  EXPECT_EQ(ApproximateWireSize(all), ApproximateWireSize(none));
  EXPECT_TRUE(Describe(all)["topics"].is_null());
  EXPECT_TRUE(Describe(none)["topics"].is_array());
}

// Walks a Describe result and fails on any array of numbers longer than 8 (bytes dumped).
void ExpectNoByteDump(const nlohmann::ordered_json& json, const std::string& where) {
  if (json.is_array()) {
    bool all_numbers = !json.empty();
    for (const auto& element : json) all_numbers = all_numbers && element.is_number();
    EXPECT_FALSE(all_numbers && json.size() > 8) << where;
  }
  if (json.is_structured()) {
    for (const auto& [key, value] : json.items()) ExpectNoByteDump(value, where + "." + key);
  }
}

TEST(ProtocolTest, DescribeShowsByteFieldsAsLengthsOnly) {
  const Bytes big(300, 0xab);
  std::vector<Message> messages;
  ProduceRequest produce;
  produce.topic_data.push_back({TopicPartition{"t", PartitionId(2)}, big});
  messages.push_back(produce);
  FetchResponse fetch;
  fetch.responses.push_back(
      {TopicPartition{"t", PartitionId(0)}, Errc::kNone, Offset(5), Offset(5), Offset(0), big});
  messages.push_back(fetch);
  JoinGroupRequest join;
  join.group_protocols.push_back({"range", big});
  messages.push_back(join);
  JoinGroupResponse joined;
  joined.members.push_back({"m1", big});
  messages.push_back(joined);
  SyncGroupRequest sync;
  sync.group_assignment.push_back({"m1", big});
  messages.push_back(sync);
  SyncGroupResponse synced;
  synced.member_assignment = big;
  messages.push_back(synced);
  for (const Message& message : messages) {
    const nlohmann::ordered_json json = Describe(message);
    EXPECT_EQ(json["kind"], MessageKind(message));
    ExpectNoByteDump(json, std::string(MessageKind(message)));
    EXPECT_NE(json.dump().find("{\"bytes\":300}"), std::string::npos) << json.dump();
    EXPECT_LT(json.dump().size(), 400u) << json.dump();
  }
  const nlohmann::ordered_json p = Describe(produce);
  EXPECT_EQ(p["topic_data"][0]["tp"], "t-2");
  EXPECT_EQ(p["acks"], 1);
  const nlohmann::ordered_json f = Describe(fetch);
  EXPECT_EQ(f["responses"][0]["error_code"], "NONE");
  EXPECT_EQ(f["responses"][0]["high_watermark"], 5);
}

TEST(ProtocolTest, DescribeUsesKafkaFieldNamesAndErrorNames) {
  LeaderAndIsrRequest request;
  request.controller_id = BrokerId(1);
  request.controller_epoch = ControllerEpoch(3);
  request.partition_states.push_back({TopicPartition{"t", PartitionId(0)},
                                      ControllerEpoch(3),
                                      BrokerId(2),
                                      LeaderEpoch(7),
                                      {BrokerId(2), BrokerId(3)},
                                      4,
                                      {BrokerId(1), BrokerId(2), BrokerId(3)},
                                      false});
  EXPECT_EQ(Describe(request).dump(),
            R"({"kind":"LeaderAndIsr","correlation_id":0,"controller_id":1,"controller_epoch":3,)"
            R"("partition_states":[{"tp":"t-0","controller_epoch":3,"leader":2,"leader_epoch":7,)"
            R"("isr":[2,3],"zk_version":4,"replicas":[1,2,3],"is_new":false}],"live_leaders":[]})");
  OffsetsForLeaderEpochResponse response;
  response.partitions.push_back({Errc::kNotLeaderForPartition, TopicPartition{"t", PartitionId(1)},
                                 kUndefinedEpoch, kUndefinedOffset});
  EXPECT_EQ(Describe(response)["partitions"][0]["error_code"], "NOT_LEADER_FOR_PARTITION");
}

TEST(ProtocolTest, MessagesCompareByValue) {
  HeartbeatRequest a{.correlation_id = 1, .group_id = "g", .generation_id = 2, .member_id = "m"};
  HeartbeatRequest b = a;
  EXPECT_EQ(Message(a), Message(b));
  b.generation_id = 3;
  EXPECT_NE(Message(a), Message(b));
}

}  // namespace
}  // namespace ksim
