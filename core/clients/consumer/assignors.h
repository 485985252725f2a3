// Consumer group partition assignment, as Kafka's Java consumer does it (0.10 semantics):
//
// - The assignors (org.apache.kafka.clients.consumer.RangeAssignor / RoundRobinAssignor). The
//   group leader runs one over every member's subscription and the topics' partition counts:
//     range       per topic, the members subscribed to it sorted by member id; with P
//                 partitions and C members, each gets P / C consecutive partitions and the
//                 first P % C members one more.
//     roundrobin  every partition of every subscribed topic, sorted by (topic, partition),
//                 dealt to the members sorted by member id in turn, skipping a member that is
//                 not subscribed to the partition's topic.
//   Topics with no metadata (absent from partitions_per_topic) are skipped, as Kafka's
//   AbstractPartitionAssignor does; every member gets an entry, possibly empty (idle).
// - ConsumerProtocol's version 0 byte encodings, which JoinGroup (GroupProtocol's
//   protocol_metadata, core/protocol/messages.h) and SyncGroup (member_assignment) carry as opaque
//   bytes:
//     Subscription: version int16, topics [string], user_data nullable bytes
//     Assignment:   version int16, topic_partitions [topic string, partitions [int32]],
//                   user_data nullable bytes
//   where [x] is an int32 count then the items, string an int16 length then UTF-8 bytes, and
//   nullable bytes an int32 length (-1: null) then the bytes. docs/clients.md has the details.
//
// Decoders take untrusted bytes: any damage (short input, negative or oversized lengths, a
// negative version, a null topic) is kCorruption, never an assertion. As Kafka, a version above
// 0 is read as version 0 (its fields are a prefix of later versions') and trailing bytes are
// ignored. Everything here is a pure function or a stateless object; safe from any thread.
// Ordering is by byte-wise std::string comparison (Java compares UTF-16 units: the same for
// ASCII member ids and topic names).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/status.h"
#include "core/protocol/messages.h"

namespace ksim {

inline constexpr int16_t kConsumerProtocolV0 = 0;

// What a member sends in JoinGroup (Kafka's PartitionAssignor.Subscription).
struct ConsumerSubscription {
  std::vector<std::string> topics;
  std::optional<Bytes> user_data = Bytes{};  // Kafka's default is empty, not null
  friend bool operator==(const ConsumerSubscription&, const ConsumerSubscription&) = default;
};

// What a member receives in SyncGroup (Kafka's PartitionAssignor.Assignment): a flat list; the
// encoding groups it by topic.
struct ConsumerAssignment {
  std::vector<TopicPartition> partitions;
  std::optional<Bytes> user_data = Bytes{};
  friend bool operator==(const ConsumerAssignment&, const ConsumerAssignment&) = default;
};

// Version 0 encoding. REQUIRES: every string fits an int16 length, every list an int32 count.
Bytes EncodeSubscription(const ConsumerSubscription& subscription);
Result<ConsumerSubscription> DecodeSubscription(ByteView bytes);

// Groups partitions by topic in the order topics first appear, partitions in list order within
// each (Kafka groups with a HashMap, whose order carries no meaning), so that encoding what
// DecodeAssignment returned gives the same bytes again.
Bytes EncodeAssignment(const ConsumerAssignment& assignment);
Result<ConsumerAssignment> DecodeAssignment(ByteView bytes);

// member id -> the topics it subscribes to.
using GroupSubscriptions = std::map<std::string, std::vector<std::string>>;
// member id -> its partitions, in the order the assignor handed them out.
using MemberPartitions = std::map<std::string, std::vector<TopicPartition>>;

class PartitionAssignor {
 public:
  virtual ~PartitionAssignor() = default;
  // The protocol name members advertise in JoinGroup ("range", "roundrobin").
  virtual std::string_view Name() const = 0;
  // REQUIRES: every partition count >= 0.
  virtual MemberPartitions Assign(const std::map<std::string, int32_t>& partitions_per_topic,
                                  const GroupSubscriptions& subscriptions) const = 0;
};

class RangeAssignor final : public PartitionAssignor {
 public:
  std::string_view Name() const override { return "range"; }
  MemberPartitions Assign(const std::map<std::string, int32_t>& partitions_per_topic,
                          const GroupSubscriptions& subscriptions) const override;
};

class RoundRobinAssignor final : public PartitionAssignor {
 public:
  std::string_view Name() const override { return "roundrobin"; }
  MemberPartitions Assign(const std::map<std::string, int32_t>& partitions_per_topic,
                          const GroupSubscriptions& subscriptions) const override;
};

// "range" or "roundrobin" (partition.assignment.strategy takes Kafka's class names too:
// org.apache.kafka.clients.consumer.RangeAssignor / RoundRobinAssignor). Null when unknown.
std::unique_ptr<PartitionAssignor> MakePartitionAssignor(std::string_view name);

// The leader's whole step (Kafka's AbstractPartitionAssignor.assign(Cluster, subscriptions)):
// decodes nothing, runs `assignor` over the members' subscriptions and returns each member's
// ConsumerAssignment with empty user data.
std::map<std::string, ConsumerAssignment> AssignGroup(
    const PartitionAssignor& assignor, const std::map<std::string, int32_t>& partitions_per_topic,
    const std::map<std::string, ConsumerSubscription>& subscriptions);

}  // namespace ksim
