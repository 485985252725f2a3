// The records of the internal topic __consumer_offsets, as Kafka's GroupMetadataManager writes
// them (0.10.0 to 2.0 schemas), and the partition a group's records go to.
// docs/group-coordinator.md shows the byte layouts. Every key and value starts with an int16 schema
// version:
//
// - Offset commit (key v0/v1, Kafka writes v1): key = group (string), topic (string), partition
//   (int32); value v1 = offset (int64), metadata (string), commit_timestamp (int64),
//   expire_timestamp (int64). A null value (tombstone) deletes the committed offset.
// - Group metadata (key v2): key = group (string); value v0/v1 = protocol_type (string),
//   generation (int32), protocol (nullable string), leader (nullable string), members (array of:
//   member_id, client_id, client_host (strings), rebalance_timeout (int32, v1 only),
//   session_timeout (int32), subscription (bytes), assignment (bytes)). A null value deletes the
//   group. Kafka 0.10.0 writes value v0, 0.10.1 and later v1 (GroupMetadataValueVersion); v0
//   read back gives each member its session timeout as its rebalance timeout, as Kafka reads it.
//
// Strings are int16 length + UTF-8 (-1: null), bytes int32 length + bytes, arrays int32 count.
// Decoding untrusted bytes never asserts: damage is kCorruption, an unknown version kUnsupported.
// Pure functions over values; no state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/status.h"
#include "core/base/types.h"
#include "core/config/kafka_version.h"
#include "core/protocol/messages.h"

namespace ksim {

// Java's String.hashCode over the UTF-16 code units of `text` (UTF-8 decoded; a byte that is not
// valid UTF-8 counts as one unit of its value), bit exact for valid text.
int32_t JavaStringHashCode(std::string_view text);
// The offsets partition of a group: Utils.toPositive(groupId.hashCode) % partitions
// (GroupMetadataManager.partitionFor). REQUIRES: partitions > 0.
int32_t OffsetsPartitionFor(std::string_view group_id, int32_t partitions);

// A committed offset as stored (Kafka's OffsetAndMetadata).
struct CommittedOffset {
  Offset offset{0};
  std::string metadata;
  int64_t commit_timestamp_ms = 0;
  int64_t expire_timestamp_ms = 0;
  friend bool operator==(const CommittedOffset&, const CommittedOffset&) = default;
};

// One member as the group metadata value stores it.
struct StoredMember {
  std::string member_id;
  std::string client_id;
  std::string client_host;
  int32_t rebalance_timeout_ms = 0;
  int32_t session_timeout_ms = 0;
  Bytes subscription;  // the member's metadata for the chosen protocol
  Bytes assignment;
  friend bool operator==(const StoredMember&, const StoredMember&) = default;
};

// A group's stored metadata (value v1).
struct StoredGroup {
  std::string protocol_type;
  int32_t generation = 0;
  std::optional<std::string> protocol;
  std::optional<std::string> leader;
  std::vector<StoredMember> members;
  friend bool operator==(const StoredGroup&, const StoredGroup&) = default;
};

// Keys.
struct OffsetCommitKey {
  std::string group;
  TopicPartition tp;
  friend bool operator==(const OffsetCommitKey&, const OffsetCommitKey&) = default;
};
struct GroupMetadataKey {
  std::string group;
  friend bool operator==(const GroupMetadataKey&, const GroupMetadataKey&) = default;
};
using OffsetsKey = std::variant<OffsetCommitKey, GroupMetadataKey>;

Bytes EncodeOffsetCommitKey(const OffsetCommitKey& key);      // version 1
Bytes EncodeGroupMetadataKey(const GroupMetadataKey& key);    // version 2
Bytes EncodeOffsetCommitValue(const CommittedOffset& value);  // version 1
// Version 0 (no rebalance timeouts) or 1.
Bytes EncodeGroupMetadataValue(const StoredGroup& value, int16_t version = 1);
// The group metadata value version a broker writes with this inter.broker.protocol.version: 0
// before 0.10.1-IV0 (so at every 0.10.0 broker), else 1. (2.1's v2 with IBP 2.1-IV0, KIP-211's
// current state timestamp, is not modelled: ksim writes v1 there.)
int16_t GroupMetadataValueVersion(const ApiVersion& inter_broker_protocol_version);

Result<OffsetsKey> DecodeOffsetsKey(ByteView bytes);
Result<CommittedOffset> DecodeOffsetCommitValue(ByteView bytes);  // v0 (no expire) or v1
Result<StoredGroup> DecodeGroupMetadataValue(ByteView bytes);     // v0 or v1

// One decoded record of the offsets topic: a key and its value (nullopt: tombstone).
struct OffsetsRecord {
  OffsetsKey key;
  std::variant<std::monostate, CommittedOffset, StoredGroup> value;  // monostate: tombstone
  bool tombstone() const { return std::holds_alternative<std::monostate>(value); }
};
// Decodes one record's key and value. A record without a key is kCorruption.
Result<OffsetsRecord> DecodeOffsetsRecord(const std::optional<Bytes>& key,
                                          const std::optional<Bytes>& value);

}  // namespace ksim
