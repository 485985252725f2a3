// Kafka's requests and responses as plain C++ values: what brokers, the controller and clients
// send each other through the Transport seam (core/protocol/transport.h). Inside the simulator
// they travel unencoded; core/wire/codec.h encodes the client-facing ones for real clients. They
// carry the fields of the protocol guide's 1.x/2.0-era versions under Kafka's own names, Kafka's
// error codes (Errc) and core's strong types. docs/protocol.md says what every field means.
//
// Two simplifications, both documented in docs/protocol.md:
// - Per-partition entries are flat lists keyed by TopicPartition; the wire groups them by topic
//   (topic name once, then its partitions). ApproximateWireSize counts the topic name per entry.
// - The request header (api key, version, correlation id, client id) is reduced to the
//   correlation id, which every message carries; the api key follows from the type.
//
// Every message type lists its fields once, in `Fields(visitor)`; the size estimate and the trace
// summary are computed from that list, so a new field is counted and shown without further code.
// Record bytes are plain Bytes (a record batch v2 set, core/record/record_batch.h); Describe never
// shows them, only their length. Values only: no ownership, no threads.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/shared_vector.h"
#include "core/base/short_text.h"
#include "core/base/status.h"
#include "core/base/topic_partition.h"
#include "core/base/types.h"

namespace ksim {

// Visitor helper: `KSIM_FIELDS(a, b)` defines Fields(v) calling v("a", a), v("b", b).
#define KSIM_FIELD_(name) v(#name, name);
#define KSIM_FIELDS(...)                           \
  template <class V>                               \
  void Fields(V&& v) const {                       \
    KSIM_FOR_EACH_FIELD_(KSIM_FIELD_, __VA_ARGS__) \
  }                                                \
  friend bool operator==(const Self&, const Self&) = default;

// Expands M(x) for each of up to 12 arguments.
#define KSIM_FE_1(M, x) M(x)
#define KSIM_FE_2(M, x, ...) M(x) KSIM_FE_1(M, __VA_ARGS__)
#define KSIM_FE_3(M, x, ...) M(x) KSIM_FE_2(M, __VA_ARGS__)
#define KSIM_FE_4(M, x, ...) M(x) KSIM_FE_3(M, __VA_ARGS__)
#define KSIM_FE_5(M, x, ...) M(x) KSIM_FE_4(M, __VA_ARGS__)
#define KSIM_FE_6(M, x, ...) M(x) KSIM_FE_5(M, __VA_ARGS__)
#define KSIM_FE_7(M, x, ...) M(x) KSIM_FE_6(M, __VA_ARGS__)
#define KSIM_FE_8(M, x, ...) M(x) KSIM_FE_7(M, __VA_ARGS__)
#define KSIM_FE_9(M, x, ...) M(x) KSIM_FE_8(M, __VA_ARGS__)
#define KSIM_FE_10(M, x, ...) M(x) KSIM_FE_9(M, __VA_ARGS__)
#define KSIM_FE_11(M, x, ...) M(x) KSIM_FE_10(M, __VA_ARGS__)
#define KSIM_FE_12(M, x, ...) M(x) KSIM_FE_11(M, __VA_ARGS__)
#define KSIM_FE_PICK_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, NAME, ...) NAME
#define KSIM_FOR_EACH_FIELD_(M, ...)                                                              \
  KSIM_FE_PICK_(__VA_ARGS__, KSIM_FE_12, KSIM_FE_11, KSIM_FE_10, KSIM_FE_9, KSIM_FE_8, KSIM_FE_7, \
                KSIM_FE_6, KSIM_FE_5, KSIM_FE_4, KSIM_FE_3, KSIM_FE_2, KSIM_FE_1)                 \
  (M, __VA_ARGS__)

// Declares the message's kind (MessageKind), Kafka api key, and whether it is a request.
#define KSIM_MESSAGE(Type, kind, api_key, is_request) \
  using Self = Type;                                  \
  static constexpr std::string_view kKind = kind;     \
  static constexpr int16_t kApiKey = api_key;         \
  static constexpr bool kIsRequest = is_request;      \
  int32_t correlation_id = 0;

inline constexpr BrokerId kNoBroker{-1};           // "no leader", "no controller"
inline constexpr BrokerId kConsumerReplicaId{-1};  // Fetch/ListOffsets replica_id of a consumer
inline constexpr int64_t kLatestTimestamp = -1;    // ListOffsets: the log end (or HW)
inline constexpr int64_t kEarliestTimestamp = -2;  // ListOffsets: the log start

// A broker as Metadata/UpdateMetadata/LeaderAndIsr name it.
struct BrokerEndpoint {
  using Self = BrokerEndpoint;
  BrokerId node_id{0};
  std::string host;
  int32_t port = 9092;
  std::optional<std::string> rack;
  KSIM_FIELDS(node_id, host, port, rack)
};

// ---- Produce (api key 0, v3+: record batch v2) ------------------------------------------------

struct ProducePartitionData {
  using Self = ProducePartitionData;
  TopicPartition tp;
  Bytes record_set;  // one or more record batches
  KSIM_FIELDS(tp, record_set)
};
struct ProduceRequest {
  KSIM_MESSAGE(ProduceRequest, "Produce", 0, true)
  std::optional<std::string> transactional_id;
  // -1 (all): the ISR has it; 0: no response at all; 1: the leader appended it; N > 1: the seed's
  // legacy 0.8 semantics (N ISR members including the leader).
  int16_t acks = 1;
  int32_t timeout_ms = 30000;  // how long the leader waits for acks=-1 before answering
  std::vector<ProducePartitionData> topic_data;
  KSIM_FIELDS(transactional_id, acks, timeout_ms, topic_data)
};
struct ProducePartitionResponse {
  using Self = ProducePartitionResponse;
  TopicPartition tp;
  Errc error_code = Errc::kNone;
  Offset base_offset = kUndefinedOffset;  // offset of the first record appended
  int64_t log_append_time = kNoTimestamp;
  Offset log_start_offset = kUndefinedOffset;  // v5 (KIP-107)
  KSIM_FIELDS(tp, error_code, base_offset, log_append_time, log_start_offset)
};
struct ProduceResponse {
  KSIM_MESSAGE(ProduceResponse, "ProduceResponse", 0, false)
  std::vector<ProducePartitionResponse> responses;
  int32_t throttle_time_ms = 0;
  KSIM_FIELDS(responses, throttle_time_ms)
};

// KIP-320's current_leader_epoch (Fetch v10, ListOffsets v4, OffsetsForLeaderEpoch v2): the
// leader epoch the asker knows the partition by, which the leader checks before anything else
// (2.1.0:Partition.checkCurrentLeaderEpoch). Kafka 2.1's replica fetcher sends it; its consumer
// does not (KAFKA-7440, 2.2). Absent (an older version): not on the wire, no check. On the wire it
// follows the partition id; here it is the entry's last field.
struct CurrentLeaderEpoch {
  using Self = CurrentLeaderEpoch;
  static constexpr bool kAbsentBeforeItsVersion = true;
  LeaderEpoch epoch{0};
  KSIM_FIELDS(epoch)
};

// ---- Fetch (api key 1, v5-v7, and v10's leader epoch) ------------------------------------------

struct FetchPartition {
  using Self = FetchPartition;
  TopicPartition tp;
  Offset fetch_offset{0};
  Offset log_start_offset = kUndefinedOffset;  // the follower's; -1 from consumers
  int32_t partition_max_bytes = 1048576;  // max.partition.fetch.bytes / replica.fetch.max.bytes
  std::optional<CurrentLeaderEpoch> current_leader_epoch;  // v10
  KSIM_FIELDS(tp, fetch_offset, log_start_offset, partition_max_bytes, current_leader_epoch)
};
// KIP-227's fetch session metadata (Fetch v7, Kafka 1.1). A request without it (std::nullopt:
// an older version) neither counts its bytes nor shows it; the broker answers it without one.
inline constexpr int32_t kInvalidSessionId = 0;  // FetchMetadata.INVALID_SESSION_ID: no session
inline constexpr int32_t kInitialEpoch = 0;      // a full fetch that may create a session
inline constexpr int32_t kFinalEpoch = -1;       // a full fetch that creates none
struct FetchSessionRequest {
  using Self = FetchSessionRequest;
  static constexpr bool kAbsentBeforeItsVersion = true;
  int32_t session_id = kInvalidSessionId;
  int32_t epoch = kFinalEpoch;            // 0 or -1: a full fetch; 1 and on: an incremental one
  std::vector<TopicPartition> forgotten;  // partitions leaving the session
  KSIM_FIELDS(session_id, epoch, forgotten)
};
struct FetchRequest {
  KSIM_MESSAGE(FetchRequest, "Fetch", 1, true)
  BrokerId replica_id = kConsumerReplicaId;  // -1 for a consumer, else the follower's broker id
  int32_t max_wait_ms = 500;
  int32_t min_bytes = 1;
  int32_t max_bytes = 52428800;
  int8_t isolation_level = 0;  // 0 READ_UNCOMMITTED
  std::optional<FetchSessionRequest> session;
  // Full fetch: every partition; incremental: those added to or changed in the session.
  std::vector<FetchPartition> partitions;
  KSIM_FIELDS(replica_id, max_wait_ms, min_bytes, max_bytes, isolation_level, session, partitions)
};
struct FetchPartitionResponse {
  using Self = FetchPartitionResponse;
  TopicPartition tp;
  Errc error_code = Errc::kNone;
  Offset high_watermark = kUndefinedOffset;
  Offset last_stable_offset = kUndefinedOffset;
  Offset log_start_offset = kUndefinedOffset;
  Bytes records;
  KSIM_FIELDS(tp, error_code, high_watermark, last_stable_offset, log_start_offset, records)
};
// The answer's session fields (v7): present when the request had them.
struct FetchSessionResponse {
  using Self = FetchSessionResponse;
  static constexpr bool kAbsentBeforeItsVersion = true;
  Errc error_code = Errc::kNone;  // FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH
  int32_t session_id = kInvalidSessionId;
  KSIM_FIELDS(error_code, session_id)
};
struct FetchResponse {
  KSIM_MESSAGE(FetchResponse, "FetchResponse", 1, false)
  int32_t throttle_time_ms = 0;
  std::optional<FetchSessionResponse> session;
  // An incremental fetch's answer names only the partitions with news (records, a new HW or log
  // start, an error); the others are implied unchanged.
  std::vector<FetchPartitionResponse> responses;
  KSIM_FIELDS(throttle_time_ms, session, responses)
};

// ---- ListOffsets (api key 2, v1+) -------------------------------------------------------------

struct ListOffsetsPartition {
  using Self = ListOffsetsPartition;
  TopicPartition tp;
  int64_t timestamp = kLatestTimestamp;  // -1 latest, -2 earliest, else a record timestamp
  std::optional<CurrentLeaderEpoch> current_leader_epoch;  // v4
  KSIM_FIELDS(tp, timestamp, current_leader_epoch)
};
struct ListOffsetsRequest {
  KSIM_MESSAGE(ListOffsetsRequest, "ListOffsets", 2, true)
  BrokerId replica_id = kConsumerReplicaId;
  int8_t isolation_level = 0;
  std::vector<ListOffsetsPartition> partitions;
  KSIM_FIELDS(replica_id, isolation_level, partitions)
};
struct ListOffsetsPartitionResponse {
  using Self = ListOffsetsPartitionResponse;
  TopicPartition tp;
  Errc error_code = Errc::kNone;
  int64_t timestamp = kNoTimestamp;
  Offset offset = kUndefinedOffset;
  KSIM_FIELDS(tp, error_code, timestamp, offset)
};
struct ListOffsetsResponse {
  KSIM_MESSAGE(ListOffsetsResponse, "ListOffsetsResponse", 2, false)
  int32_t throttle_time_ms = 0;
  std::vector<ListOffsetsPartitionResponse> responses;
  KSIM_FIELDS(throttle_time_ms, responses)
};

// ---- Metadata (api key 3, v5-v7) --------------------------------------------------------------

struct MetadataRequest {
  KSIM_MESSAGE(MetadataRequest, "Metadata", 3, true)
  std::optional<std::vector<std::string>> topics;  // nullopt: every topic
  bool allow_auto_topic_creation = false;
  KSIM_FIELDS(topics, allow_auto_topic_creation)
};
struct PartitionMetadata {
  using Self = PartitionMetadata;
  Errc error_code = Errc::kNone;  // LEADER_NOT_AVAILABLE when offline
  PartitionId partition{0};
  BrokerId leader = kNoBroker;
  LeaderEpoch leader_epoch = kUndefinedEpoch;  // v7 (KIP-320)
  std::vector<BrokerId> replicas;
  std::vector<BrokerId> isr;
  std::vector<BrokerId> offline_replicas;  // v5 (KIP-112)
  KSIM_FIELDS(error_code, partition, leader, leader_epoch, replicas, isr, offline_replicas)
};
struct TopicMetadata {
  using Self = TopicMetadata;
  Errc error_code = Errc::kNone;
  std::string topic;
  bool is_internal = false;
  // Shared, not copied, between a broker's cached answer and the responses that carry it.
  SharedVector<PartitionMetadata> partition_metadata;
  KSIM_FIELDS(error_code, topic, is_internal, partition_metadata)
};
struct MetadataResponse {
  KSIM_MESSAGE(MetadataResponse, "MetadataResponse", 3, false)
  int32_t throttle_time_ms = 0;
  std::vector<BrokerEndpoint> brokers;
  std::optional<std::string> cluster_id;
  BrokerId controller_id = kNoBroker;
  std::vector<TopicMetadata> topic_metadata;
  KSIM_FIELDS(throttle_time_ms, brokers, cluster_id, controller_id, topic_metadata)
};

// ---- Controller to broker: LeaderAndIsr (4, v1), StopReplica (5), UpdateMetadata (6, v4) ------

struct LeaderAndIsrPartitionState {
  using Self = LeaderAndIsrPartitionState;
  TopicPartition tp;
  ControllerEpoch controller_epoch{0};  // of the controller that last wrote this state
  BrokerId leader = kNoBroker;
  LeaderEpoch leader_epoch{0};
  std::vector<BrokerId> isr;
  int32_t zk_version = 0;  // version of .../partitions/<p>/state
  std::vector<BrokerId> replicas;
  bool is_new = false;  // v1: the replica is new, its log may be created (KIP-112)
  KSIM_FIELDS(tp, controller_epoch, leader, leader_epoch, isr, zk_version, replicas, is_new)
};
struct LeaderAndIsrRequest {
  KSIM_MESSAGE(LeaderAndIsrRequest, "LeaderAndIsr", 4, true)
  BrokerId controller_id = kNoBroker;
  ControllerEpoch controller_epoch{0};
  std::vector<LeaderAndIsrPartitionState> partition_states;
  std::vector<BrokerEndpoint> live_leaders;
  KSIM_FIELDS(controller_id, controller_epoch, partition_states, live_leaders)
};
struct PartitionError {
  using Self = PartitionError;
  TopicPartition tp;
  Errc error_code = Errc::kNone;
  KSIM_FIELDS(tp, error_code)
};
struct LeaderAndIsrResponse {
  KSIM_MESSAGE(LeaderAndIsrResponse, "LeaderAndIsrResponse", 4, false)
  Errc error_code = Errc::kNone;  // STALE_CONTROLLER_EPOCH for the whole request
  std::vector<PartitionError> partitions;
  KSIM_FIELDS(error_code, partitions)
};

struct StopReplicaRequest {
  KSIM_MESSAGE(StopReplicaRequest, "StopReplica", 5, true)
  BrokerId controller_id = kNoBroker;
  ControllerEpoch controller_epoch{0};
  bool delete_partitions = false;  // also delete the logs (topic deletion, reassignment)
  std::vector<TopicPartition> partitions;
  KSIM_FIELDS(controller_id, controller_epoch, delete_partitions, partitions)
};
struct StopReplicaResponse {
  KSIM_MESSAGE(StopReplicaResponse, "StopReplicaResponse", 5, false)
  Errc error_code = Errc::kNone;
  std::vector<PartitionError> partitions;
  KSIM_FIELDS(error_code, partitions)
};

// Kafka's LeaderAndIsr.LeaderDuringDelete: the `leader` of an UpdateMetadata partition state that
// tells brokers the partition is being deleted (they drop it from their metadata cache).
inline constexpr BrokerId kLeaderDuringDelete{-2};

struct UpdateMetadataPartitionState {
  using Self = UpdateMetadataPartitionState;
  TopicPartition tp;
  ControllerEpoch controller_epoch{0};
  BrokerId leader = kNoBroker;
  LeaderEpoch leader_epoch{0};
  std::vector<BrokerId> isr;
  int32_t zk_version = 0;
  std::vector<BrokerId> replicas;
  std::vector<BrokerId> offline_replicas;
  KSIM_FIELDS(tp, controller_epoch, leader, leader_epoch, isr, zk_version, replicas,
              offline_replicas)
};
struct UpdateMetadataRequest {
  KSIM_MESSAGE(UpdateMetadataRequest, "UpdateMetadata", 6, true)
  BrokerId controller_id = kNoBroker;
  ControllerEpoch controller_epoch{0};
  std::vector<UpdateMetadataPartitionState> partition_states;
  std::vector<BrokerEndpoint> live_brokers;
  KSIM_FIELDS(controller_id, controller_epoch, partition_states, live_brokers)
};
struct UpdateMetadataResponse {
  KSIM_MESSAGE(UpdateMetadataResponse, "UpdateMetadataResponse", 6, false)
  Errc error_code = Errc::kNone;
  KSIM_FIELDS(error_code)
};

// ---- ControlledShutdown (api key 7) -----------------------------------------------------------

struct ControlledShutdownRequest {
  KSIM_MESSAGE(ControlledShutdownRequest, "ControlledShutdown", 7, true)
  BrokerId broker_id{0};
  int64_t broker_epoch = -1;  // v2 (KIP-380): the broker's czxid, -1 when not sent
  KSIM_FIELDS(broker_id, broker_epoch)
};
struct ControlledShutdownResponse {
  KSIM_MESSAGE(ControlledShutdownResponse, "ControlledShutdownResponse", 7, false)
  Errc error_code = Errc::kNone;
  std::vector<TopicPartition> partitions_remaining;  // still led by the broker
  KSIM_FIELDS(error_code, partitions_remaining)
};

// ---- OffsetsForLeaderEpoch (api key 23, v1: KIP-101 + KIP-279; v2: KIP-320) -----------------

struct OffsetsForLeaderEpochPartition {
  using Self = OffsetsForLeaderEpochPartition;
  TopicPartition tp;
  LeaderEpoch leader_epoch{0};                             // the follower's latest epoch
  std::optional<CurrentLeaderEpoch> current_leader_epoch;  // v2
  KSIM_FIELDS(tp, leader_epoch, current_leader_epoch)
};
struct OffsetsForLeaderEpochRequest {
  KSIM_MESSAGE(OffsetsForLeaderEpochRequest, "OffsetsForLeaderEpoch", 23, true)
  std::vector<OffsetsForLeaderEpochPartition> partitions;
  KSIM_FIELDS(partitions)
};
struct EpochEndOffset {
  using Self = EpochEndOffset;
  Errc error_code = Errc::kNone;
  TopicPartition tp;
  // v1 (KIP-279): the largest epoch <= the requested one the leader knows, and the start offset
  // of the epoch after it (the leader's LEO if it is the latest): where the follower truncates.
  LeaderEpoch leader_epoch = kUndefinedEpoch;
  Offset end_offset = kUndefinedOffset;
  KSIM_FIELDS(error_code, tp, leader_epoch, end_offset)
};
struct OffsetsForLeaderEpochResponse {
  KSIM_MESSAGE(OffsetsForLeaderEpochResponse, "OffsetsForLeaderEpochResponse", 23, false)
  int32_t throttle_time_ms = 0;
  std::vector<EpochEndOffset> partitions;
  KSIM_FIELDS(throttle_time_ms, partitions)
};

// ---- InitProducerId (api key 22, KIP-98) ------------------------------------------------------

struct InitProducerIdRequest {
  KSIM_MESSAGE(InitProducerIdRequest, "InitProducerId", 22, true)
  std::optional<std::string> transactional_id;  // null for an idempotent-only producer
  int32_t transaction_timeout_ms = 60000;
  KSIM_FIELDS(transactional_id, transaction_timeout_ms)
};
struct InitProducerIdResponse {
  KSIM_MESSAGE(InitProducerIdResponse, "InitProducerIdResponse", 22, false)
  int32_t throttle_time_ms = 0;
  Errc error_code = Errc::kNone;
  ProducerId producer_id = kNoProducerId;
  ProducerEpoch producer_epoch = kNoProducerEpoch;
  KSIM_FIELDS(throttle_time_ms, error_code, producer_id, producer_epoch)
};

// ---- Consumer groups: FindCoordinator (10), JoinGroup (11), Heartbeat (12), LeaveGroup (13),
// ---- SyncGroup (14), OffsetCommit (8), OffsetFetch (9) ----------------------------------------

struct FindCoordinatorRequest {
  KSIM_MESSAGE(FindCoordinatorRequest, "FindCoordinator", 10, true)
  std::string coordinator_key;  // the group id
  int8_t coordinator_type = 0;  // 0 group, 1 transaction
  KSIM_FIELDS(coordinator_key, coordinator_type)
};
struct FindCoordinatorResponse {
  KSIM_MESSAGE(FindCoordinatorResponse, "FindCoordinatorResponse", 10, false)
  int32_t throttle_time_ms = 0;
  Errc error_code = Errc::kNone;  // COORDINATOR_NOT_AVAILABLE
  std::optional<std::string> error_message;
  BrokerEndpoint coordinator;
  KSIM_FIELDS(throttle_time_ms, error_code, error_message, coordinator)
};

struct GroupProtocol {
  using Self = GroupProtocol;
  std::string protocol_name;  // an assignor: "range", "roundrobin"
  Bytes protocol_metadata;    // the member's subscription
  KSIM_FIELDS(protocol_name, protocol_metadata)
};
struct JoinGroupRequest {
  KSIM_MESSAGE(JoinGroupRequest, "JoinGroup", 11, true)
  std::string group_id;
  int32_t session_timeout_ms = 10000;
  int32_t rebalance_timeout_ms = 300000;  // v1: max.poll.interval.ms
  std::string member_id;                  // "" on the first join
  std::string protocol_type = "consumer";
  std::vector<GroupProtocol> group_protocols;
  KSIM_FIELDS(group_id, session_timeout_ms, rebalance_timeout_ms, member_id, protocol_type,
              group_protocols)
};
struct GroupMember {
  using Self = GroupMember;
  std::string member_id;
  Bytes member_metadata;
  KSIM_FIELDS(member_id, member_metadata)
};
struct JoinGroupResponse {
  KSIM_MESSAGE(JoinGroupResponse, "JoinGroupResponse", 11, false)
  int32_t throttle_time_ms = 0;
  Errc error_code = Errc::kNone;
  int32_t generation_id = -1;
  std::string group_protocol;  // the chosen assignor
  std::string leader_id;
  std::string member_id;
  std::vector<GroupMember> members;  // only the leader gets them
  KSIM_FIELDS(throttle_time_ms, error_code, generation_id, group_protocol, leader_id, member_id,
              members)
};

struct GroupAssignment {
  using Self = GroupAssignment;
  std::string member_id;
  Bytes member_assignment;
  KSIM_FIELDS(member_id, member_assignment)
};
struct SyncGroupRequest {
  KSIM_MESSAGE(SyncGroupRequest, "SyncGroup", 14, true)
  std::string group_id;
  int32_t generation_id = -1;
  std::string member_id;
  std::vector<GroupAssignment> group_assignment;  // from the leader only
  KSIM_FIELDS(group_id, generation_id, member_id, group_assignment)
};
struct SyncGroupResponse {
  KSIM_MESSAGE(SyncGroupResponse, "SyncGroupResponse", 14, false)
  int32_t throttle_time_ms = 0;
  Errc error_code = Errc::kNone;
  Bytes member_assignment;
  KSIM_FIELDS(throttle_time_ms, error_code, member_assignment)
};

struct HeartbeatRequest {
  KSIM_MESSAGE(HeartbeatRequest, "Heartbeat", 12, true)
  std::string group_id;
  int32_t generation_id = -1;
  std::string member_id;
  KSIM_FIELDS(group_id, generation_id, member_id)
};
struct HeartbeatResponse {
  KSIM_MESSAGE(HeartbeatResponse, "HeartbeatResponse", 12, false)
  int32_t throttle_time_ms = 0;
  Errc error_code = Errc::kNone;  // REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, ...
  KSIM_FIELDS(throttle_time_ms, error_code)
};

struct LeaveGroupRequest {
  KSIM_MESSAGE(LeaveGroupRequest, "LeaveGroup", 13, true)
  std::string group_id;
  std::string member_id;
  KSIM_FIELDS(group_id, member_id)
};
struct LeaveGroupResponse {
  KSIM_MESSAGE(LeaveGroupResponse, "LeaveGroupResponse", 13, false)
  int32_t throttle_time_ms = 0;
  Errc error_code = Errc::kNone;
  KSIM_FIELDS(throttle_time_ms, error_code)
};

struct OffsetCommitPartition {
  using Self = OffsetCommitPartition;
  TopicPartition tp;
  Offset offset{0};  // the next offset to consume
  std::optional<std::string> metadata;
  KSIM_FIELDS(tp, offset, metadata)
};
struct OffsetCommitRequest {
  KSIM_MESSAGE(OffsetCommitRequest, "OffsetCommit", 8, true)
  std::string group_id;
  int32_t generation_id = -1;  // -1 with member_id "" for a simple (group-less) commit
  std::string member_id;
  int64_t retention_time_ms = -1;  // v2-v4; -1: the broker's offsets.retention.minutes
  std::vector<OffsetCommitPartition> partitions;
  KSIM_FIELDS(group_id, generation_id, member_id, retention_time_ms, partitions)
};
struct OffsetCommitResponse {
  KSIM_MESSAGE(OffsetCommitResponse, "OffsetCommitResponse", 8, false)
  int32_t throttle_time_ms = 0;
  std::vector<PartitionError> responses;
  KSIM_FIELDS(throttle_time_ms, responses)
};

struct OffsetFetchRequest {
  KSIM_MESSAGE(OffsetFetchRequest, "OffsetFetch", 9, true)
  std::string group_id;
  std::optional<std::vector<TopicPartition>> partitions;  // v2+: nullopt for all of the group's
  KSIM_FIELDS(group_id, partitions)
};
struct OffsetFetchPartitionResponse {
  using Self = OffsetFetchPartitionResponse;
  TopicPartition tp;
  Offset offset = kUndefinedOffset;  // -1: nothing committed
  std::optional<std::string> metadata;
  Errc error_code = Errc::kNone;
  KSIM_FIELDS(tp, offset, metadata, error_code)
};
struct OffsetFetchResponse {
  KSIM_MESSAGE(OffsetFetchResponse, "OffsetFetchResponse", 9, false)
  int32_t throttle_time_ms = 0;
  std::vector<OffsetFetchPartitionResponse> responses;
  Errc error_code = Errc::kNone;  // v2+: group-level error
  KSIM_FIELDS(throttle_time_ms, responses, error_code)
};

// ---- ApiVersions (api key 18, v0-v2; KIP-35) ---------------------------------------------------
// A client's first request on a connection: which versions of which APIs the broker serves
// (core/protocol/api_versions.h holds the table the brokers answer with).

struct ApiVersionsRequest {
  KSIM_MESSAGE(ApiVersionsRequest, "ApiVersions", 18, true)
  template <class V>
  void Fields(V&& /*v*/) const {}  // no fields
  friend bool operator==(const Self&, const Self&) = default;
};
struct ApiVersionEntry {
  using Self = ApiVersionEntry;
  int16_t api_key = 0;
  int16_t min_version = 0;
  int16_t max_version = 0;
  KSIM_FIELDS(api_key, min_version, max_version)
};
struct ApiVersionsResponse {
  KSIM_MESSAGE(ApiVersionsResponse, "ApiVersionsResponse", 18, false)
  Errc error_code = Errc::kNone;  // UNSUPPORTED_VERSION: the request's version is not served
  std::vector<ApiVersionEntry> api_versions;
  int32_t throttle_time_ms = 0;  // v1+
  KSIM_FIELDS(error_code, api_versions, throttle_time_ms)
};

#undef KSIM_MESSAGE
#undef KSIM_FIELDS
#undef KSIM_FIELD_

// ---- Every message --------------------------------------------------------------------------

using Message = std::variant<
    ProduceRequest, ProduceResponse, FetchRequest, FetchResponse, ListOffsetsRequest,
    ListOffsetsResponse, MetadataRequest, MetadataResponse, LeaderAndIsrRequest,
    LeaderAndIsrResponse, StopReplicaRequest, StopReplicaResponse, UpdateMetadataRequest,
    UpdateMetadataResponse, ControlledShutdownRequest, ControlledShutdownResponse,
    OffsetsForLeaderEpochRequest, OffsetsForLeaderEpochResponse, InitProducerIdRequest,
    InitProducerIdResponse, FindCoordinatorRequest, FindCoordinatorResponse, JoinGroupRequest,
    JoinGroupResponse, SyncGroupRequest, SyncGroupResponse, HeartbeatRequest, HeartbeatResponse,
    LeaveGroupRequest, LeaveGroupResponse, OffsetCommitRequest, OffsetCommitResponse,
    OffsetFetchRequest, OffsetFetchResponse, ApiVersionsRequest, ApiVersionsResponse>;

// "Produce", "ProduceResponse", ... (what traces and the network's counters show).
std::string_view MessageKind(const Message& message);
// Kafka's api key (Produce 0, Fetch 1, ..., ApiVersions 18, InitProducerId 22,
// OffsetForLeaderEpoch 23).
int16_t ApiKey(const Message& message);
bool IsRequest(const Message& message);
// False only for responses and for a Produce with acks=0, which the broker never answers.
bool ExpectsResponse(const Message& message);
int32_t CorrelationId(const Message& message);
void SetCorrelationId(Message& message, int32_t correlation_id);

// Bytes the message would take on the wire, for bandwidth and byte counters: a size prefix and
// header (request: 4 + api key 2 + version 2 + correlation id 4 + null client id 2 = 14;
// response: 4 + 4 = 8), then the fields as the protocol encodes them: int8/16/32/64 and bool at
// their width, Errc 2, strings 2 + length (null 2), byte arrays 4 + length (records are the
// bulk), arrays 4 + elements, a TopicPartition 2 + topic + 4 (the wire's per-topic grouping
// would count the name once per topic: the estimate is a little high with many partitions).
int64_t ApproximateWireSize(const Message& message);

// A compact summary for traces: {"kind", "correlation_id", fields...}; byte fields appear as
// their length ("records": {"bytes": 123}), never their contents; a TopicPartition as "t-0".
nlohmann::ordered_json Describe(const Message& message);

}  // namespace ksim

template <>
struct std::hash<ksim::TopicPartition> {
  size_t operator()(const ksim::TopicPartition& tp) const noexcept {
    return ksim::HashText(tp.topic) * 31 + std::hash<int32_t>{}(tp.partition.value());
  }
};
