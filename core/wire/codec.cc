#include "core/wire/codec.h"

#include <utility>

#include "core/base/big_endian.h"
#include "core/base/check.h"
#include "core/protocol/api_versions.h"
#include "core/wire/wire_io.h"

namespace ksim::wire {
namespace {

// Each Body(io, message, v) is one message's layout in version v, from the protocol guide's BNF
// (Kafka 2.0's schemas in org.apache.kafka.common.requests.*Request/*Response). With a
// WireReader it fills the message; with a WireWriter it writes it. Fields a version does not
// have keep their defaults when read; fields the structs do not carry (fetch sessions, aborted
// transactions, error messages) are read into locals and written as Kafka writes "nothing".

// ---- Produce (0) --------------------------------------------------------------------------------

template <class Io>
void Body(Io& io, ProduceRequest& m, int16_t v) {
  // v0-v2 carry message sets (v0/v1) and no transactional id.
  if (v >= 3) io.NullableString(m.transactional_id);
  io.Int16(m.acks);
  io.Int32(m.timeout_ms);
  io.TopicArray(m.topic_data, [&](ProducePartitionData& d) {
    io.Int(d.tp.partition);
    io.Bytes(d.record_set);
  });
}

template <class Io>
void Body(Io& io, ProduceResponse& m, int16_t v) {
  io.TopicArray(m.responses, [&](ProducePartitionResponse& r) {
    io.Int(r.tp.partition);
    io.Error(r.error_code);
    io.Int(r.base_offset);
    if (v >= 2) io.Int64(r.log_append_time);
    if (v >= 5) io.Int(r.log_start_offset);
  });
  if (v >= 1) io.Int32(m.throttle_time_ms);
}

// The fields a Fetch of version v carries for KIP-227, read into `field` (emplaced when the
// version has them) or written from it (`none`, the defaults, when the message has none; the
// writer never changes the message).
template <class Io, class T>
T& SessionFields(std::optional<T>& field, bool in_version, T& none) {
  if constexpr (Io::kReading) {
    if (!in_version) {
      field.reset();
      return none;
    }
    return field.emplace();
  } else {
    return field ? *field : none;
  }
}

// ---- Fetch (1) ----------------------------------------------------------------------------------

template <class Io>
void Body(Io& io, FetchRequest& m, int16_t v) {
  io.Int(m.replica_id);
  io.Int32(m.max_wait_ms);
  io.Int32(m.min_bytes);
  if (v >= 3) io.Int32(m.max_bytes);
  if (v >= 4) io.Int8(m.isolation_level);
  // KIP-227's session fields (v7): read into m.session, which stays absent below v7; a request
  // written without them says "no session" (0, FINAL_EPOCH).
  FetchSessionRequest none;
  FetchSessionRequest& session = SessionFields<Io>(m.session, v >= 7, none);
  if (v >= 7) {
    io.Int32(session.session_id);
    io.Int32(session.epoch);
  }
  io.TopicArray(m.partitions, [&](FetchPartition& p) {
    io.Int(p.tp.partition);
    io.Int(p.fetch_offset);
    if (v >= 5) io.Int(p.log_start_offset);
    io.Int32(p.partition_max_bytes);
  });
  if (v >= 7) {  // forgotten_topics_data: [topic [partition]]
    io.TopicArray(session.forgotten, [&](TopicPartition& tp) { io.Int(tp.partition); });
  }
}

template <class Io>
void Body(Io& io, FetchResponse& m, int16_t v) {
  if (v >= 1) io.Int32(m.throttle_time_ms);
  if (v >= 7) {  // KIP-227: an answer without session fields says "no session" (0)
    FetchSessionResponse none;
    FetchSessionResponse& session = SessionFields<Io>(m.session, true, none);
    io.Error(session.error_code);
    io.Int32(session.session_id);
  }
  io.TopicArray(m.responses, [&](FetchPartitionResponse& r) {
    io.Int(r.tp.partition);
    io.Error(r.error_code);
    io.Int(r.high_watermark);
    if (v >= 4) {
      io.Int(r.last_stable_offset);
      if (v >= 5) io.Int(r.log_start_offset);
      io.SkipArray([&] {  // aborted_transactions: [producer_id first_offset]; ksim has none
        int64_t producer_id = 0;
        int64_t first_offset = 0;
        io.Int64(producer_id);
        io.Int64(first_offset);
      });
    }
    io.Bytes(r.records);
  });
}

// ---- ListOffsets (2) ----------------------------------------------------------------------------

template <class Io>
void Body(Io& io, ListOffsetsRequest& m, int16_t v) {
  io.Int(m.replica_id);
  if (v >= 2) io.Int8(m.isolation_level);
  io.TopicArray(m.partitions, [&](ListOffsetsPartition& p) {
    io.Int(p.tp.partition);
    io.Int64(p.timestamp);
    if (v == 0) {
      // max_num_offsets: ksim answers one offset (what the Java and librdkafka clients ask).
      int32_t max_num_offsets = 1;
      io.Int32(max_num_offsets);
    }
  });
}

template <class Io>
void Body(Io& io, ListOffsetsResponse& m, int16_t v) {
  if (v >= 2) io.Int32(m.throttle_time_ms);
  io.TopicArray(m.responses, [&](ListOffsetsPartitionResponse& r) {
    io.Int(r.tp.partition);
    io.Error(r.error_code);
    if (v == 0) {
      // v0: [offset], empty when there is none (an error, or no segment old enough).
      std::vector<int64_t> offsets;
      if (r.offset.value() >= 0) offsets.push_back(r.offset.value());
      io.Array(offsets, [&](int64_t& offset) { io.Int64(offset); });
      if constexpr (Io::kReading) {
        r.offset = offsets.empty() ? kUndefinedOffset : Offset(offsets.front());
      }
      return;
    }
    io.Int64(r.timestamp);
    io.Int(r.offset);
  });
}

// ---- Metadata (3) -------------------------------------------------------------------------------

template <class Io>
void Body(Io& io, MetadataRequest& m, int16_t v) {
  if (v == 0) {
    // v0 has no null: an empty array asks for every topic.
    std::vector<std::string> topics = m.topics.value_or(std::vector<std::string>());
    io.Array(topics, [&](std::string& topic) { io.String(topic); });
    if constexpr (Io::kReading) {
      m.topics = topics.empty() ? std::nullopt : std::optional(std::move(topics));
      m.allow_auto_topic_creation = true;
    }
    return;
  }
  io.NullableArray(m.topics, [&](std::string& topic) { io.String(topic); });
  if (v >= 4) {
    io.Bool(m.allow_auto_topic_creation);
  } else if constexpr (Io::kReading) {
    m.allow_auto_topic_creation = true;  // before v4 the broker's setting decides
  }
}

template <class Io>
void Body(Io& io, MetadataResponse& m, int16_t v) {
  if (v >= 3) io.Int32(m.throttle_time_ms);
  io.Array(m.brokers, [&](BrokerEndpoint& b) {
    io.Int(b.node_id);
    io.String(b.host);
    io.Int32(b.port);
    if (v >= 1) io.NullableString(b.rack);
  });
  if (v >= 2) io.NullableString(m.cluster_id);
  if (v >= 1) io.Int(m.controller_id);
  io.Array(m.topic_metadata, [&](TopicMetadata& t) {
    io.Error(t.error_code);
    io.String(t.topic);
    if (v >= 1) io.Bool(t.is_internal);
    // (Mutable: what the decoder fills; the encoder reads through the same call, and so copies an
    // answer it is given still shared with a broker's cache, a copy the simulator never makes.)
    io.Array(t.partition_metadata.Mutable(), [&](PartitionMetadata& p) {
      io.Error(p.error_code);
      io.Int(p.partition);
      io.Int(p.leader);
      if (v >= 7) io.Int(p.leader_epoch);
      auto broker = [&](BrokerId& id) { io.Int(id); };
      io.Array(p.replicas, broker);
      io.Array(p.isr, broker);
      if (v >= 5) io.Array(p.offline_replicas, broker);
    });
  });
}

// ---- OffsetCommit (8), OffsetFetch (9) ----------------------------------------------------------

template <class Io>
void Body(Io& io, OffsetCommitRequest& m, int16_t v) {
  io.String(m.group_id);
  // v0 (offsets in ZooKeeper at 0.10.0) has no generation or member: a simple commit.
  if (v >= 1) {
    io.Int32(m.generation_id);
    io.String(m.member_id);
  }
  if (v >= 2) io.Int64(m.retention_time_ms);
  io.TopicArray(m.partitions, [&](OffsetCommitPartition& p) {
    io.Int(p.tp.partition);
    io.Int(p.offset);
    if (v == 1) {
      // v1's commit timestamp: -1 (the broker's time) is what ksim's coordinator uses.
      int64_t timestamp = -1;
      io.Int64(timestamp);
    }
    io.NullableString(p.metadata);
  });
}

template <class Io>
void Body(Io& io, OffsetCommitResponse& m, int16_t v) {
  if (v >= 3) io.Int32(m.throttle_time_ms);
  io.TopicArray(m.responses, [&](PartitionError& r) {
    io.Int(r.tp.partition);
    io.Error(r.error_code);
  });
}

template <class Io>
void Body(Io& io, OffsetFetchRequest& m, int16_t v) {
  io.String(m.group_id);
  auto partition = [&](TopicPartition& tp) { io.Int(tp.partition); };
  if (v >= 2) {
    io.NullableTopicArray(m.partitions, partition);  // null: every committed offset
  } else {
    std::vector<TopicPartition> partitions = m.partitions.value_or(std::vector<TopicPartition>());
    io.TopicArray(partitions, partition);
    if constexpr (Io::kReading) m.partitions = std::move(partitions);
  }
}

template <class Io>
void Body(Io& io, OffsetFetchResponse& m, int16_t v) {
  if (v >= 3) io.Int32(m.throttle_time_ms);
  io.TopicArray(m.responses, [&](OffsetFetchPartitionResponse& r) {
    io.Int(r.tp.partition);
    io.Int(r.offset);
    io.NullableString(r.metadata);
    io.Error(r.error_code);
  });
  if (v >= 2) io.Error(m.error_code);
}

// ---- FindCoordinator (10) -----------------------------------------------------------------------

template <class Io>
void Body(Io& io, FindCoordinatorRequest& m, int16_t v) {
  io.String(m.coordinator_key);
  if (v >= 1) io.Int8(m.coordinator_type);
}

template <class Io>
void Body(Io& io, FindCoordinatorResponse& m, int16_t v) {
  if (v >= 1) io.Int32(m.throttle_time_ms);
  io.Error(m.error_code);
  if (v >= 1) io.NullableString(m.error_message);
  io.Int(m.coordinator.node_id);
  io.String(m.coordinator.host);
  io.Int32(m.coordinator.port);
}

// ---- JoinGroup (11), Heartbeat (12), LeaveGroup (13), SyncGroup (14) ----------------------------

template <class Io>
void Body(Io& io, JoinGroupRequest& m, int16_t v) {
  io.String(m.group_id);
  io.Int32(m.session_timeout_ms);
  if (v >= 1) {
    io.Int32(m.rebalance_timeout_ms);
  } else if constexpr (Io::kReading) {
    m.rebalance_timeout_ms = m.session_timeout_ms;  // v0: the session timeout bounds a rebalance
  }
  io.String(m.member_id);
  io.String(m.protocol_type);
  io.Array(m.group_protocols, [&](GroupProtocol& p) {
    io.String(p.protocol_name);
    io.Bytes(p.protocol_metadata);
  });
}

template <class Io>
void Body(Io& io, JoinGroupResponse& m, int16_t v) {
  if (v >= 2) io.Int32(m.throttle_time_ms);
  io.Error(m.error_code);
  io.Int32(m.generation_id);
  io.String(m.group_protocol);
  io.String(m.leader_id);
  io.String(m.member_id);
  io.Array(m.members, [&](GroupMember& member) {
    io.String(member.member_id);
    io.Bytes(member.member_metadata);
  });
}

template <class Io>
void Body(Io& io, HeartbeatRequest& m, int16_t /*v*/) {
  io.String(m.group_id);
  io.Int32(m.generation_id);
  io.String(m.member_id);
}

template <class Io>
void Body(Io& io, HeartbeatResponse& m, int16_t v) {
  if (v >= 1) io.Int32(m.throttle_time_ms);
  io.Error(m.error_code);
}

template <class Io>
void Body(Io& io, LeaveGroupRequest& m, int16_t /*v*/) {
  io.String(m.group_id);
  io.String(m.member_id);
}

template <class Io>
void Body(Io& io, LeaveGroupResponse& m, int16_t v) {
  if (v >= 1) io.Int32(m.throttle_time_ms);
  io.Error(m.error_code);
}

template <class Io>
void Body(Io& io, SyncGroupRequest& m, int16_t /*v*/) {
  io.String(m.group_id);
  io.Int32(m.generation_id);
  io.String(m.member_id);
  io.Array(m.group_assignment, [&](GroupAssignment& a) {
    io.String(a.member_id);
    io.Bytes(a.member_assignment);
  });
}

template <class Io>
void Body(Io& io, SyncGroupResponse& m, int16_t v) {
  if (v >= 1) io.Int32(m.throttle_time_ms);
  io.Error(m.error_code);
  io.Bytes(m.member_assignment);
}

// ---- ApiVersions (18), InitProducerId (22) ------------------------------------------------------

template <class Io>
void Body(Io& /*io*/, ApiVersionsRequest& /*m*/, int16_t /*v*/) {}

template <class Io>
void Body(Io& io, ApiVersionsResponse& m, int16_t v) {
  io.Error(m.error_code);
  io.Array(m.api_versions, [&](ApiVersionEntry& e) {
    io.Int16(e.api_key);
    io.Int16(e.min_version);
    io.Int16(e.max_version);
  });
  if (v >= 1) io.Int32(m.throttle_time_ms);
}

template <class Io>
void Body(Io& io, InitProducerIdRequest& m, int16_t /*v*/) {
  io.NullableString(m.transactional_id);
  io.Int32(m.transaction_timeout_ms);
}

template <class Io>
void Body(Io& io, InitProducerIdResponse& m, int16_t /*v*/) {
  io.Int32(m.throttle_time_ms);
  io.Error(m.error_code);
  io.Int(m.producer_id);
  io.Int(m.producer_epoch);
}

// ---- Dispatch -----------------------------------------------------------------------------------

// The alternative `T` of `message`: made when reading, the one already there when writing.
template <class T, class Io>
T& As(Io& /*io*/, Message& message) {
  if constexpr (Io::kReading) {
    return message.emplace<T>();
  } else {
    return std::get<T>(message);
  }
}

template <class Request, class Response, class Io>
void Code(Io& io, Message& message, int16_t version, bool request) {
  if (request) {
    Body(io, As<Request>(io, message), version);
  } else {
    Body(io, As<Response>(io, message), version);
  }
}

// The body of a served api key's request or response. False for a key not served.
template <class Io>
bool CodeBody(Io& io, Message& message, int16_t api_key, int16_t version, bool request) {
  switch (api_key) {
    case 0:
      Code<ProduceRequest, ProduceResponse>(io, message, version, request);
      return true;
    case 1:
      Code<FetchRequest, FetchResponse>(io, message, version, request);
      return true;
    case 2:
      Code<ListOffsetsRequest, ListOffsetsResponse>(io, message, version, request);
      return true;
    case 3:
      Code<MetadataRequest, MetadataResponse>(io, message, version, request);
      return true;
    case 8:
      Code<OffsetCommitRequest, OffsetCommitResponse>(io, message, version, request);
      return true;
    case 9:
      Code<OffsetFetchRequest, OffsetFetchResponse>(io, message, version, request);
      return true;
    case 10:
      Code<FindCoordinatorRequest, FindCoordinatorResponse>(io, message, version, request);
      return true;
    case 11:
      Code<JoinGroupRequest, JoinGroupResponse>(io, message, version, request);
      return true;
    case 12:
      Code<HeartbeatRequest, HeartbeatResponse>(io, message, version, request);
      return true;
    case 13:
      Code<LeaveGroupRequest, LeaveGroupResponse>(io, message, version, request);
      return true;
    case 14:
      Code<SyncGroupRequest, SyncGroupResponse>(io, message, version, request);
      return true;
    case 18:
      Code<ApiVersionsRequest, ApiVersionsResponse>(io, message, version, request);
      return true;
    case 22:
      Code<InitProducerIdRequest, InitProducerIdResponse>(io, message, version, request);
      return true;
    default:
      return false;
  }
}

// kUnsupported for a key not served, kUnsupportedVersion for a version outside its range.
Status CheckServed(int16_t api_key, int16_t version) {
  const ApiVersionEntry* served = FindServedApi(api_key);
  const std::string name(ApiKeyName(api_key));
  if (served == nullptr) {
    return Status(Errc::kUnsupported, "api key " + std::to_string(api_key) +
                                          (name.empty() ? "" : " (" + name + ")") +
                                          " is not served over the wire");
  }
  if (version < served->min_version || version > served->max_version) {
    return Status(Errc::kUnsupportedVersion, name + " v" + std::to_string(version) +
                                                 " is not served (v" +
                                                 std::to_string(served->min_version) + "-v" +
                                                 std::to_string(served->max_version) + " are)");
  }
  return Status::Ok();
}

// Writes the frame's INT32 size over its first 4 bytes.
void SealFrame(Bytes& frame) {
  KSIM_CHECK(frame.size() >= 4);
  StoreBigEndian32(frame.data(), static_cast<uint32_t>(frame.size() - 4));
}

std::string Where(int16_t api_key, int16_t version, bool request) {
  return std::string(ApiKeyName(api_key)) + " v" + std::to_string(version) +
         (request ? " request: " : " response: ");
}

}  // namespace

std::optional<int32_t> FrameSize(ByteView bytes) {
  if (bytes.size() < 4) return std::nullopt;
  return static_cast<int32_t>(LoadBigEndian32(bytes.data()));
}

Result<RequestHeader> DecodeRequestHeader(ByteView frame) {
  WireReader io(frame);
  RequestHeader header;
  io.Int16(header.api_key);
  io.Int16(header.api_version);
  io.Int32(header.correlation_id);
  io.NullableString(header.client_id);
  if (!io.ok()) return Status(Errc::kInvalidRequest, "request header: " + io.status().message());
  return header;
}

Result<DecodedRequest> DecodeRequest(ByteView frame) {
  WireReader io(frame);
  DecodedRequest decoded;
  RequestHeader& header = decoded.header;
  io.Int16(header.api_key);
  io.Int16(header.api_version);
  io.Int32(header.correlation_id);
  io.NullableString(header.client_id);
  if (!io.ok()) return Status(Errc::kInvalidRequest, "request header: " + io.status().message());
  KSIM_RETURN_IF_ERROR(CheckServed(header.api_key, header.api_version));
  const bool known =
      CodeBody(io, decoded.request, header.api_key, header.api_version, /*request=*/true);
  KSIM_CHECK(known);  // CheckServed passed
  if (!io.ok()) {
    return Status(Errc::kInvalidRequest,
                  Where(header.api_key, header.api_version, true) + io.status().message());
  }
  SetCorrelationId(decoded.request, header.correlation_id);
  return decoded;
}

Bytes EncodeRequest(const RequestHeader& header, const Message& request) {
  KSIM_CHECK(IsRequest(request));
  KSIM_CHECK(ApiKey(request) == header.api_key);
  KSIM_CHECK(CheckServed(header.api_key, header.api_version).ok());
  Bytes frame(4);
  WireWriter io(frame);
  io.Int16(header.api_key);
  io.Int16(header.api_version);
  io.Int32(header.correlation_id);
  io.NullableString(header.client_id);
  // The writer reads the message only; the const_cast spares a copy of its record bytes.
  const bool known = CodeBody(io, const_cast<Message&>(request), header.api_key, header.api_version,
                              /*request=*/true);
  KSIM_CHECK(known);
  SealFrame(frame);
  return frame;
}

Bytes EncodeResponse(int16_t api_version, const Message& response) {
  KSIM_CHECK(!IsRequest(response));
  const int16_t api_key = ApiKey(response);
  KSIM_CHECK(CheckServed(api_key, api_version).ok());
  Bytes frame(4);
  WireWriter io(frame);
  io.Int32(CorrelationId(response));
  const bool known =
      CodeBody(io, const_cast<Message&>(response), api_key, api_version, /*request=*/false);
  KSIM_CHECK(known);
  SealFrame(frame);
  return frame;
}

Result<Message> DecodeResponse(int16_t api_key, int16_t api_version, ByteView frame) {
  KSIM_RETURN_IF_ERROR(CheckServed(api_key, api_version));
  WireReader io(frame);
  int32_t correlation_id = 0;
  io.Int32(correlation_id);
  Message response;
  const bool known = CodeBody(io, response, api_key, api_version, /*request=*/false);
  KSIM_CHECK(known);
  if (!io.ok()) {
    return Status(Errc::kInvalidRequest,
                  Where(api_key, api_version, false) + io.status().message());
  }
  SetCorrelationId(response, correlation_id);
  return response;
}

}  // namespace ksim::wire
