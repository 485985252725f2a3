// The wire codec against byte strings written by hand from the protocol guide's BNF
// (https://kafka.apache.org/protocol, the 2.0-era request and response definitions), not
// captured from this code: each test spells a frame field by field, decodes it to the struct
// expected, and encodes the struct back to the same bytes. Then what malformed input gets.
#include "core/wire/codec.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <string_view>
#include <utility>

#include "core/protocol/api_versions.h"

namespace ksim::wire {
namespace {

// "00 12 'kcat' ff": hex bytes and 'quoted text', separated by spaces; a frame's INT32 size is
// written out like any other field.
Bytes Spec(std::string_view text) {
  Bytes out;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == ' ' || c == '\n' || c == '|') {
      ++i;
    } else if (c == '\'') {
      const size_t end = text.find('\'', i + 1);
      out.insert(out.end(), text.begin() + i + 1, text.begin() + end);
      i = end + 1;
    } else {
      out.push_back(static_cast<uint8_t>(std::stoi(std::string(text.substr(i, 2)), nullptr, 16)));
      i += 2;
    }
  }
  return out;
}

ByteView Contents(const Bytes& frame) { return ByteView(frame).subspan(4); }

template <class T>
T DecodeAs(const Bytes& frame, RequestHeader* header = nullptr) {
  Result<DecodedRequest> decoded = DecodeRequest(Contents(frame));
  EXPECT_TRUE(decoded.ok()) << decoded.status().ToString();
  if (!decoded.ok()) return T{};
  if (header != nullptr) *header = decoded->header;
  EXPECT_TRUE(std::holds_alternative<T>(decoded->request));
  return std::holds_alternative<T>(decoded->request) ? std::get<T>(decoded->request) : T{};
}

TEST(WireCodecTest, ApiVersionsRequestV0HeaderCarriesClientId) {
  const Bytes frame = Spec("00 00 00 0e | 00 12 00 00 00 00 00 01 00 04 'kcat'");
  RequestHeader header;
  DecodeAs<ApiVersionsRequest>(frame, &header);
  EXPECT_EQ(header, (RequestHeader{18, 0, 1, "kcat"}));
  EXPECT_EQ(EncodeRequest(header, ApiVersionsRequest{}), frame);
}

TEST(WireCodecTest, ApiVersionsResponseV1AndV0) {
  ApiVersionsResponse response;
  response.correlation_id = 1;
  response.api_versions = {ApiVersionEntry{0, 3, 7}};
  // v1: error_code [api_key min_version max_version] throttle_time_ms
  EXPECT_EQ(
      EncodeResponse(1, response),
      Spec("00 00 00 14 | 00 00 00 01 | 00 00 | 00 00 00 01 00 00 00 03 00 07 | 00 00 00 00"));
  // v0, the UNSUPPORTED_VERSION answer: no throttle time.
  response.error_code = Errc::kUnsupportedVersion;
  const Bytes v0 = EncodeResponse(0, response);
  EXPECT_EQ(v0, Spec("00 00 00 10 | 00 00 00 01 | 00 23 | 00 00 00 01 00 00 00 03 00 07"));
  Result<Message> decoded = DecodeResponse(18, 0, Contents(v0));
  ASSERT_TRUE(decoded.ok());
  response.throttle_time_ms = 0;
  EXPECT_EQ(std::get<ApiVersionsResponse>(*decoded), response);
}

TEST(WireCodecTest, MetadataRequestNullAndEmptyTopics) {
  // v1, null client id, topics null: every topic.
  const Bytes all = Spec("00 00 00 0e | 00 03 00 01 00 00 00 07 ff ff | ff ff ff ff");
  RequestHeader header;
  MetadataRequest request = DecodeAs<MetadataRequest>(all, &header);
  EXPECT_EQ(header, (RequestHeader{3, 1, 7, std::nullopt}));
  EXPECT_FALSE(request.topics.has_value());
  EXPECT_TRUE(request.allow_auto_topic_creation);  // before v4 the broker decides
  EXPECT_EQ(EncodeRequest(header, request), all);

  // v0: an empty array means every topic.
  const Bytes v0 = Spec("00 00 00 0e | 00 03 00 00 00 00 00 02 ff ff | 00 00 00 00");
  EXPECT_FALSE(DecodeAs<MetadataRequest>(v0).topics.has_value());

  // v4: ["t"], allow_auto_topic_creation false.
  const Bytes v4 = Spec("00 00 00 12 | 00 03 00 04 00 00 00 03 ff ff | 00 00 00 01 00 01 't' | 00");
  request = DecodeAs<MetadataRequest>(v4, &header);
  EXPECT_EQ(request.topics, std::vector<std::string>{"t"});
  EXPECT_FALSE(request.allow_auto_topic_creation);
  EXPECT_EQ(EncodeRequest(header, request), v4);
}

TEST(WireCodecTest, MetadataResponseV1AndV7) {
  MetadataResponse response;
  response.correlation_id = 7;
  response.brokers = {BrokerEndpoint{BrokerId(1), "h", 9092, std::nullopt}};
  response.cluster_id = "c";
  response.controller_id = BrokerId(1);
  PartitionMetadata partition;
  partition.partition = PartitionId(0);
  partition.leader = BrokerId(1);
  partition.leader_epoch = LeaderEpoch(3);
  partition.replicas = {BrokerId(1)};
  partition.isr = {BrokerId(1)};
  response.topic_metadata = {TopicMetadata{Errc::kNone, "t", false, {partition}}};
  // v1: [node_id host port rack] controller_id [error topic is_internal [error partition leader
  // [replicas] [isr]]]
  EXPECT_EQ(EncodeResponse(1, response),
            Spec("00 00 00 41 | 00 00 00 07 |"
                 "00 00 00 01 | 00 00 00 01 00 01 'h' 00 00 23 84 ff ff |"
                 "00 00 00 01 |"
                 "00 00 00 01 | 00 00 00 01 't' 00 |"
                 "00 00 00 01 | 00 00 00 00 00 00 00 00 00 01 | 00 00 00 01 00 00 00 01 |"
                 "00 00 00 01 00 00 00 01"));
  // v7 adds throttle_time_ms, cluster_id (v2), leader_epoch (v7) and offline_replicas (v5).
  const Bytes v7 = EncodeResponse(7, response);
  EXPECT_EQ(v7, Spec("00 00 00 50 | 00 00 00 07 | 00 00 00 00 |"
                     "00 00 00 01 | 00 00 00 01 00 01 'h' 00 00 23 84 ff ff |"
                     "00 01 'c' | 00 00 00 01 |"
                     "00 00 00 01 | 00 00 00 01 't' 00 |"
                     "00 00 00 01 | 00 00 00 00 00 00 00 00 00 01 00 00 00 03 |"
                     "00 00 00 01 00 00 00 01 | 00 00 00 01 00 00 00 01 | 00 00 00 00"));
  Result<Message> decoded = DecodeResponse(3, 7, Contents(v7));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(std::get<MetadataResponse>(*decoded), response);
}

TEST(WireCodecTest, ProduceRequestV3GroupsPartitionsByTopic) {
  // transactional_id acks timeout [topic [partition record_set]]
  const Bytes frame = Spec(
      "00 00 00 41 | 00 00 00 03 00 00 00 05 00 03 'abc' |"
      "ff ff ff ff 00 00 03 e8 |"
      "00 00 00 02 |"
      "00 01 'a' 00 00 00 02 | 00 00 00 00 00 00 00 02 'xy' | 00 00 00 01 00 00 00 00 |"
      "00 01 'b' 00 00 00 01 | 00 00 00 07 ff ff ff ff");
  RequestHeader header;
  const ProduceRequest request = DecodeAs<ProduceRequest>(frame, &header);
  EXPECT_EQ(header, (RequestHeader{0, 3, 5, "abc"}));
  EXPECT_FALSE(request.transactional_id.has_value());
  EXPECT_EQ(request.acks, -1);
  EXPECT_EQ(request.timeout_ms, 1000);
  ASSERT_EQ(request.topic_data.size(), 3u);
  EXPECT_EQ(request.topic_data[0].tp, (TopicPartition{"a", PartitionId(0)}));
  EXPECT_EQ(request.topic_data[0].record_set, ToBytes("xy"));
  EXPECT_EQ(request.topic_data[1].tp, (TopicPartition{"a", PartitionId(1)}));
  EXPECT_EQ(request.topic_data[2].tp, (TopicPartition{"b", PartitionId(7)}));
  EXPECT_TRUE(request.topic_data[2].record_set.empty());  // null records read as none
  EXPECT_EQ(request.correlation_id, 5);
}

TEST(WireCodecTest, ProduceRequestV2HasNoTransactionalId) {
  // v0-v2: acks timeout [topic [partition record_set]], the records a message set.
  const Bytes frame = Spec(
      "00 00 00 28 | 00 00 00 02 00 00 00 05 00 03 'abc' |"
      "00 01 00 00 03 e8 |"
      "00 00 00 01 00 01 't' 00 00 00 01 | 00 00 00 00 00 00 00 02 'xy'");
  RequestHeader header;
  const ProduceRequest request = DecodeAs<ProduceRequest>(frame, &header);
  EXPECT_EQ(header, (RequestHeader{0, 2, 5, "abc"}));
  EXPECT_FALSE(request.transactional_id.has_value());
  EXPECT_EQ(request.acks, 1);
  EXPECT_EQ(request.timeout_ms, 1000);
  ASSERT_EQ(request.topic_data.size(), 1u);
  EXPECT_EQ(request.topic_data[0].record_set, ToBytes("xy"));
  EXPECT_EQ(EncodeRequest(header, request), frame);
}

TEST(WireCodecTest, ListOffsetsV0AsksForOneOffsetAndGetsAnArray) {
  // v0: replica_id [topic [partition timestamp max_num_offsets]]
  const Bytes frame = Spec(
      "00 00 00 2a | 00 02 00 00 00 00 00 03 00 01 'k' |"
      "ff ff ff ff | 00 00 00 01 00 01 't' 00 00 00 01 |"
      "00 00 00 00 ff ff ff ff ff ff ff fe 00 00 00 01");
  RequestHeader header;
  const ListOffsetsRequest request = DecodeAs<ListOffsetsRequest>(frame, &header);
  ASSERT_EQ(request.partitions.size(), 1u);
  EXPECT_EQ(request.partitions[0].timestamp, kEarliestTimestamp);
  EXPECT_EQ(EncodeRequest(header, request), frame);
  // [topic [partition error_code [offset]]]: the offset, or none at all.
  ListOffsetsResponse response;
  response.correlation_id = 3;
  response.responses = {{{"t", PartitionId(0)}, Errc::kNone, 1234, Offset(7)},
                        {{"t", PartitionId(1)}, Errc::kNone, -1, kUndefinedOffset}};
  const Bytes answer = EncodeResponse(0, response);
  EXPECT_EQ(answer, Spec("00 00 00 2b | 00 00 00 03 | 00 00 00 01 00 01 't' 00 00 00 02 |"
                         "00 00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 07 |"
                         "00 00 00 01 00 00 00 00 00 00"));
  Result<Message> back = DecodeResponse(2, 0, Contents(answer));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  const auto& decoded = std::get<ListOffsetsResponse>(*back);
  EXPECT_EQ(decoded.responses[0].offset, Offset(7));
  EXPECT_EQ(decoded.responses[1].offset, kUndefinedOffset);
}

TEST(WireCodecTest, OffsetCommitV0AndV1) {
  // v0: group [topic [partition offset metadata]]: a simple commit (generation -1, no member).
  const Bytes v0 = Spec(
      "00 00 00 27 | 00 08 00 00 00 00 00 04 00 01 'k' |"
      "00 01 'g' 00 00 00 01 00 01 't' 00 00 00 01 |"
      "00 00 00 00 00 00 00 00 00 00 00 05 ff ff");
  const OffsetCommitRequest simple = DecodeAs<OffsetCommitRequest>(v0);
  EXPECT_EQ(simple.generation_id, -1);
  EXPECT_EQ(simple.member_id, "");
  ASSERT_EQ(simple.partitions.size(), 1u);
  EXPECT_EQ(simple.partitions[0].offset, Offset(5));
  // v1: group generation member [topic [partition offset timestamp metadata]]
  const Bytes v1 = Spec(
      "00 00 00 36 | 00 08 00 01 00 00 00 04 00 01 'k' |"
      "00 01 'g' 00 00 00 02 00 01 'm' 00 00 00 01 00 01 't' 00 00 00 01 |"
      "00 00 00 00 00 00 00 00 00 00 00 05 ff ff ff ff ff ff ff ff ff ff");
  RequestHeader header;
  const OffsetCommitRequest member = DecodeAs<OffsetCommitRequest>(v1, &header);
  EXPECT_EQ(member.generation_id, 2);
  EXPECT_EQ(member.member_id, "m");
  EXPECT_EQ(member.retention_time_ms, -1);
  EXPECT_EQ(EncodeRequest(header, member), v1);
}

TEST(WireCodecTest, AdvertisedVersionsFollowTheRelease) {
  // 0.10.0.1's ApiVersionsResponse: every ApiKeys value, 0 to 18, with Protocol.java's ranges.
  const std::span<const ApiVersionEntry> v0100 = AdvertisedApiVersions(KafkaRelease::k0_10_0);
  ASSERT_EQ(v0100.size(), 19u);
  for (size_t i = 0; i < v0100.size(); ++i) EXPECT_EQ(v0100[i].api_key, static_cast<int16_t>(i));
  EXPECT_EQ(v0100[0], (ApiVersionEntry{0, 0, 2}));    // Produce
  EXPECT_EQ(v0100[1], (ApiVersionEntry{1, 0, 2}));    // Fetch
  EXPECT_EQ(v0100[2], (ApiVersionEntry{2, 0, 0}));    // ListOffsets
  EXPECT_EQ(v0100[3], (ApiVersionEntry{3, 0, 1}));    // Metadata
  EXPECT_EQ(v0100[7], (ApiVersionEntry{7, 1, 1}));    // ControlledShutdown: no v0
  EXPECT_EQ(v0100[8], (ApiVersionEntry{8, 0, 2}));    // OffsetCommit
  EXPECT_EQ(v0100[9], (ApiVersionEntry{9, 0, 1}));    // OffsetFetch
  EXPECT_EQ(v0100[11], (ApiVersionEntry{11, 0, 0}));  // JoinGroup: no rebalance timeout
  EXPECT_EQ(v0100[18], (ApiVersionEntry{18, 0, 0}));  // ApiVersions
  // Accepted: advertised and served. DescribeGroups is advertised, not served.
  EXPECT_EQ(*AcceptedApi(0, KafkaRelease::k0_10_0), (ApiVersionEntry{0, 0, 2}));
  EXPECT_EQ(AcceptedApi(15, KafkaRelease::k0_10_0), nullptr);
  EXPECT_EQ(AcceptedApi(22, KafkaRelease::k0_10_0), nullptr);  // InitProducerId: 0.11
  // Later: the served keys the release has, cut to ksim's ranges.
  EXPECT_EQ(*AcceptedApi(11, KafkaRelease::k0_10_1), (ApiVersionEntry{11, 0, 1}));
  EXPECT_EQ(*AcceptedApi(22, KafkaRelease::k0_11_0), (ApiVersionEntry{22, 0, 0}));
  EXPECT_EQ(*AcceptedApi(0, KafkaRelease::k2_0), (ApiVersionEntry{0, 0, 6}));
  EXPECT_EQ(*AcceptedApi(1, KafkaRelease::k2_1), (ApiVersionEntry{1, 0, 7}));  // ksim's Fetch v7
  EXPECT_EQ(AdvertisedApiVersions(KafkaRelease::k2_1).size(), ServedApiVersions().size());
  // Every accepted range is one the codec serves.
  for (KafkaRelease release : KafkaReleases()) {
    for (const ApiVersionEntry& entry : AdvertisedApiVersions(release)) {
      const ApiVersionEntry* accepted = AcceptedApi(entry.api_key, release);
      if (accepted == nullptr) continue;
      const ApiVersionEntry* served = FindServedApi(entry.api_key);
      ASSERT_NE(served, nullptr);
      EXPECT_GE(accepted->min_version, served->min_version);
      EXPECT_LE(accepted->max_version, served->max_version) << KafkaReleaseName(release);
    }
  }
}

TEST(WireCodecTest, ProduceResponseVersionsAddFields) {
  ProduceResponse response;
  response.correlation_id = 9;
  ProducePartitionResponse partition;
  partition.tp = TopicPartition{"t", PartitionId(2)};
  partition.error_code = Errc::kNotLeaderForPartition;
  partition.base_offset = Offset(-1);
  partition.log_start_offset = Offset(5);
  response.responses = {partition};
  // v5: [topic [partition error base_offset log_append_time log_start_offset]] throttle
  EXPECT_EQ(EncodeResponse(5, response),
            Spec("00 00 00 31 | 00 00 00 09 | 00 00 00 01 00 01 't' 00 00 00 01 |"
                 "00 00 00 02 00 06 ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff |"
                 "00 00 00 00 00 00 00 05 | 00 00 00 00"));
  // v3: no log_start_offset.
  EXPECT_EQ(EncodeResponse(3, response).size(), EncodeResponse(5, response).size() - 8);
}

TEST(WireCodecTest, FetchRequestV7SessionFieldsAreRead) {
  // replica_id max_wait min_bytes max_bytes isolation session_id session_epoch
  // [topic [partition fetch_offset log_start_offset partition_max_bytes]] [forgotten topics]
  const Bytes frame = Spec(
      "00 00 00 5c | 00 01 00 07 00 00 00 0b 00 07 'rdkafka' |"
      "ff ff ff ff 00 00 01 f4 00 00 00 01 03 20 00 00 01 | 00 00 12 34 00 00 00 05 |"
      "00 00 00 01 00 01 't' 00 00 00 01 |"
      "00 00 00 00 00 00 00 00 00 00 00 2a ff ff ff ff ff ff ff ff 00 10 00 00 |"
      "00 00 00 01 00 01 'u' 00 00 00 01 00 00 00 03");
  const FetchRequest request = DecodeAs<FetchRequest>(frame);
  ASSERT_TRUE(request.session.has_value());
  EXPECT_EQ(request.session->session_id, 0x1234);
  EXPECT_EQ(request.session->epoch, 5);
  EXPECT_EQ(request.session->forgotten,
            (std::vector<TopicPartition>{TopicPartition{"u", PartitionId(3)}}));
  // Below v7 there are none; a request without them is written as "no session" (0, -1).
  FetchRequest plain = request;
  plain.session.reset();
  const Bytes v7 = EncodeRequest(RequestHeader{1, 7, 11, "rdkafka"}, plain);
  EXPECT_EQ(DecodeAs<FetchRequest>(v7).session,
            (FetchSessionRequest{.session_id = 0, .epoch = -1, .forgotten = {}}));
  EXPECT_FALSE(DecodeAs<FetchRequest>(EncodeRequest(RequestHeader{1, 6, 11, "rdkafka"}, request))
                   .session.has_value());
  EXPECT_EQ(request.replica_id, BrokerId(-1));
  EXPECT_EQ(request.max_wait_ms, 500);
  EXPECT_EQ(request.min_bytes, 1);
  EXPECT_EQ(request.max_bytes, 52428800);
  EXPECT_EQ(request.isolation_level, 1);
  ASSERT_EQ(request.partitions.size(), 1u);
  EXPECT_EQ(request.partitions[0].tp, (TopicPartition{"t", PartitionId(0)}));
  EXPECT_EQ(request.partitions[0].fetch_offset, Offset(42));
  EXPECT_EQ(request.partitions[0].log_start_offset, Offset(-1));
  EXPECT_EQ(request.partitions[0].partition_max_bytes, 1048576);
}

TEST(WireCodecTest, FetchResponseV4AndV7) {
  FetchResponse response;
  response.correlation_id = 3;
  FetchPartitionResponse partition;
  partition.tp = TopicPartition{"t", PartitionId(0)};
  partition.high_watermark = Offset(2);
  partition.last_stable_offset = Offset(2);
  partition.log_start_offset = Offset(0);
  partition.records = ToBytes("rec");
  response.responses = {partition};
  // v4: throttle [topic [partition error hw last_stable [aborted] records]]
  EXPECT_EQ(EncodeResponse(4, response),
            Spec("00 00 00 34 | 00 00 00 03 | 00 00 00 00 |"
                 "00 00 00 01 00 01 't' 00 00 00 01 |"
                 "00 00 00 00 00 00 | 00 00 00 00 00 00 00 02 | 00 00 00 00 00 00 00 02 |"
                 "00 00 00 00 | 00 00 00 03 'rec'"));
  // v7: throttle error_code session_id, and log_start_offset (v5).
  const Bytes v7 = EncodeResponse(7, response);
  EXPECT_EQ(v7, Spec("00 00 00 42 | 00 00 00 03 | 00 00 00 00 00 00 00 00 00 00 |"
                     "00 00 00 01 00 01 't' 00 00 00 01 |"
                     "00 00 00 00 00 00 | 00 00 00 00 00 00 00 02 | 00 00 00 00 00 00 00 02 |"
                     "00 00 00 00 00 00 00 00 | 00 00 00 00 | 00 00 00 03 'rec'"));
  Result<Message> decoded = DecodeResponse(1, 7, Contents(v7));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  // Decoded at v7, the session fields are there ("no session").
  response.session = FetchSessionResponse{};
  EXPECT_EQ(std::get<FetchResponse>(*decoded), response);
  // A session's error and id.
  response.session =
      FetchSessionResponse{.error_code = Errc::kInvalidFetchSessionEpoch, .session_id = 0x1234};
  response.responses.clear();
  EXPECT_EQ(EncodeResponse(7, response),
            Spec("00 00 00 12 | 00 00 00 03 | 00 00 00 00 00 47 00 00 12 34 | 00 00 00 00"));
}

TEST(WireCodecTest, GroupRequestsV0) {
  // JoinGroup v0: group_id session_timeout member_id protocol_type [name metadata]
  const Bytes join = Spec(
      "00 00 00 2d | 00 0b 00 00 00 00 00 01 ff ff |"
      "00 01 'g' 00 00 27 10 00 00 00 08 'consumer' | 00 00 00 01 00 05 'range' 00 00 00 01 aa");
  const JoinGroupRequest request = DecodeAs<JoinGroupRequest>(join);
  EXPECT_EQ(request.group_id, "g");
  EXPECT_EQ(request.session_timeout_ms, 10000);
  EXPECT_EQ(request.rebalance_timeout_ms, 10000);  // v0: the session timeout
  EXPECT_EQ(request.member_id, "");
  ASSERT_EQ(request.group_protocols.size(), 1u);
  EXPECT_EQ(request.group_protocols[0].protocol_name, "range");
  EXPECT_EQ(request.group_protocols[0].protocol_metadata, Bytes{0xaa});

  // SyncGroup v1 response: throttle error assignment
  SyncGroupResponse sync;
  sync.correlation_id = 2;
  sync.member_assignment = Bytes{1, 2};
  EXPECT_EQ(EncodeResponse(1, sync),
            Spec("00 00 00 10 | 00 00 00 02 | 00 00 00 00 00 00 | 00 00 00 02 01 02"));

  // FindCoordinator v0 response: error node_id host port
  FindCoordinatorResponse find;
  find.correlation_id = 4;
  find.coordinator = BrokerEndpoint{BrokerId(2), "h", 9093, std::nullopt};
  EXPECT_EQ(EncodeResponse(0, find),
            Spec("00 00 00 11 | 00 00 00 04 | 00 00 | 00 00 00 02 00 01 'h' 00 00 23 85"));
}

TEST(WireCodecTest, OffsetFetchNullTopicsFromV2) {
  const Bytes all = Spec("00 00 00 11 | 00 09 00 02 00 00 00 01 ff ff | 00 01 'g' ff ff ff ff");
  EXPECT_FALSE(DecodeAs<OffsetFetchRequest>(all).partitions.has_value());
  const Bytes v1 = Spec(
      "00 00 00 20 | 00 09 00 01 00 00 00 01 ff ff | 00 01 'g' |"
      "00 00 00 01 00 01 't' 00 00 00 02 00 00 00 00 00 00 00 01");
  RequestHeader header;
  const OffsetFetchRequest request = DecodeAs<OffsetFetchRequest>(v1, &header);
  ASSERT_TRUE(request.partitions.has_value());
  EXPECT_EQ(*request.partitions,
            (std::vector<TopicPartition>{{"t", PartitionId(0)}, {"t", PartitionId(1)}}));
  EXPECT_EQ(EncodeRequest(header, request), v1);
}

// One request and one response of each served api key with every field set.
std::pair<Message, Message> Samples(int16_t api_key) {
  const TopicPartition tp{"t", PartitionId(1)};
  switch (api_key) {
    case 0:
      return {ProduceRequest{.acks = -1, .topic_data = {{tp, Bytes{1, 2}}}},
              ProduceResponse{.responses = {{tp, Errc::kNone, Offset(5), 7, Offset(1)}},
                              .throttle_time_ms = 3}};
    case 1:
      return {FetchRequest{
                  .isolation_level = 1,
                  .session = FetchSessionRequest{.session_id = 5, .epoch = 2, .forgotten = {tp}},
                  .partitions = {{tp, Offset(4), Offset(1), 9}}},
              FetchResponse{
                  .throttle_time_ms = 2,
                  .session = FetchSessionResponse{.error_code = Errc::kNone, .session_id = 5},
                  .responses = {{tp, Errc::kNone, Offset(9), Offset(9), Offset(1), Bytes{3}}}}};
    case 2:
      return {ListOffsetsRequest{.isolation_level = 1, .partitions = {{tp, -2}}},
              ListOffsetsResponse{.responses = {{tp, Errc::kNone, -1, Offset(0)}}}};
    case 3: {
      PartitionMetadata partition{Errc::kNone,   PartitionId(0), BrokerId(1), LeaderEpoch(2),
                                  {BrokerId(1)}, {BrokerId(1)},  {}};
      return {MetadataRequest{.topics = std::vector<std::string>{"t"}},
              MetadataResponse{.brokers = {{BrokerId(1), "h", 1, "r"}},
                               .cluster_id = "c",
                               .controller_id = BrokerId(1),
                               .topic_metadata = {{Errc::kNone, "t", true, {partition}}}}};
    }
    case 8:
      return {OffsetCommitRequest{.group_id = "g",
                                  .generation_id = 1,
                                  .member_id = "m",
                                  .partitions = {{tp, Offset(3), "x"}}},
              OffsetCommitResponse{.responses = {{tp, Errc::kNone}}}};
    case 9:
      return {OffsetFetchRequest{.group_id = "g", .partitions = std::vector<TopicPartition>{tp}},
              OffsetFetchResponse{.responses = {{tp, Offset(3), std::nullopt, Errc::kNone}}}};
    case 10:
      return {FindCoordinatorRequest{.coordinator_key = "g"},
              FindCoordinatorResponse{.coordinator = {BrokerId(2), "h", 2, std::nullopt}}};
    case 11:
      return {JoinGroupRequest{.group_id = "g", .group_protocols = {{"range", Bytes{1}}}},
              JoinGroupResponse{.generation_id = 1,
                                .group_protocol = "range",
                                .leader_id = "m",
                                .member_id = "m",
                                .members = {{"m", Bytes{1}}}}};
    case 12:
      return {HeartbeatRequest{.group_id = "g", .generation_id = 1, .member_id = "m"},
              HeartbeatResponse{.error_code = Errc::kRebalanceInProgress}};
    case 13:
      return {LeaveGroupRequest{.group_id = "g", .member_id = "m"}, LeaveGroupResponse{}};
    case 14:
      return {SyncGroupRequest{.group_id = "g", .group_assignment = {{"m", Bytes{1}}}},
              SyncGroupResponse{.member_assignment = Bytes{1}}};
    case 18:
      return {ApiVersionsRequest{}, ApiVersionsResponse{.api_versions = {{0, 3, 7}}}};
    case 22:
      return {InitProducerIdRequest{}, InitProducerIdResponse{.producer_id = ProducerId(7),
                                                              .producer_epoch = ProducerEpoch(1)}};
    default:
      ADD_FAILURE() << "no sample for api key " << api_key;
      return {ApiVersionsRequest{}, ApiVersionsResponse{}};
  }
}

TEST(WireCodecTest, EveryServedVersionRoundTrips) {
  // In every served version of both directions: what is encoded decodes to a message that
  // encodes to the same bytes (fields a version lacks are dropped once, then stable).
  for (const ApiVersionEntry& api : ServedApiVersions()) {
    for (int16_t v = api.min_version; v <= api.max_version; ++v) {
      auto [request, response] = Samples(api.api_key);
      const RequestHeader header{api.api_key, v, 11, "c"};
      const Bytes frame = EncodeRequest(header, request);
      Result<DecodedRequest> decoded = DecodeRequest(Contents(frame));
      ASSERT_TRUE(decoded.ok()) << api.api_key << " v" << v << decoded.status().ToString();
      EXPECT_EQ(decoded->header, header);
      EXPECT_EQ(EncodeRequest(header, decoded->request), frame) << api.api_key << " v" << v;

      SetCorrelationId(response, 11);
      const Bytes answer = EncodeResponse(v, response);
      Result<Message> back = DecodeResponse(api.api_key, v, Contents(answer));
      ASSERT_TRUE(back.ok()) << api.api_key << " v" << v << back.status().ToString();
      EXPECT_EQ(CorrelationId(*back), 11);
      EXPECT_EQ(EncodeResponse(v, *back), answer) << api.api_key << " v" << v;
      if (v == api.max_version) {
        EXPECT_EQ(*back, response) << api.api_key << " v" << v;  // every field carried
      }
    }
  }
}

// ---- Malformed input -------------------------------------------------------------------------

TEST(WireCodecTest, TruncatedBodyNamesWhereItStopped) {
  const Bytes frame = Spec("00 00 00 0e | 00 03 00 01 00 00 00 07 ff ff | 00 00 00 01");
  Result<DecodedRequest> decoded = DecodeRequest(Contents(frame));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().code(), Errc::kInvalidRequest);
  EXPECT_NE(decoded.status().message().find("Metadata v1 request"), std::string::npos)
      << decoded.status().message();
}

TEST(WireCodecTest, HugeArrayCountIsRefusedBeforeAllocating) {
  const Bytes frame = Spec("00 00 00 0e | 00 03 00 01 00 00 00 07 ff ff | 7f ff ff ff");
  Result<DecodedRequest> decoded = DecodeRequest(Contents(frame));
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find("ARRAY count of 2147483647"), std::string::npos);
}

TEST(WireCodecTest, NegativeLengthsAreErrors) {
  // A STRING length of -2, a non-nullable group id that is null.
  EXPECT_FALSE(DecodeRequest(Contents(Spec("00 00 00 0a | 00 0c 00 00 00 00 00 01 ff fe"))).ok());
  EXPECT_FALSE(
      DecodeRequest(Contents(Spec("00 00 00 0c | 00 0c 00 00 00 00 00 01 ff ff | ff ff"))).ok());
}

TEST(WireCodecTest, UnknownKeyAndUnsupportedVersion) {
  Result<DecodedRequest> unknown =
      DecodeRequest(Contents(Spec("00 00 00 0a | 00 64 00 00 00 00 00 01 ff ff")));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), Errc::kUnsupported);
  // ApiVersions v3 (librdkafka's first try): served up to v2.
  Result<DecodedRequest> v3 =
      DecodeRequest(Contents(Spec("00 00 00 0b | 00 12 00 03 00 00 00 01 ff ff 00")));
  ASSERT_FALSE(v3.ok());
  EXPECT_EQ(v3.status().code(), Errc::kUnsupportedVersion);
  Result<RequestHeader> header =
      DecodeRequestHeader(Contents(Spec("00 00 00 0b | 00 12 00 03 00 00 00 01 ff ff 00")));
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->api_version, 3);
  EXPECT_FALSE(DecodeRequestHeader(Contents(Spec("00 00 00 03 | 00 12 00"))).ok());
}

TEST(WireCodecTest, LocalErrorCodesGoOutAsUnknownServerError) {
  HeartbeatResponse response;
  response.correlation_id = 1;
  response.error_code = Errc::kIoError;
  EXPECT_EQ(EncodeResponse(0, response), Spec("00 00 00 06 | 00 00 00 01 | ff ff"));
}

TEST(WireCodecTest, FrameSizeNeedsFourBytes) {
  EXPECT_FALSE(FrameSize(Spec("00 00 01")).has_value());
  EXPECT_EQ(FrameSize(Spec("00 00 01 00 99")), 256);
  EXPECT_EQ(FrameSize(Spec("ff ff ff ff")), -1);
}

}  // namespace
}  // namespace ksim::wire
