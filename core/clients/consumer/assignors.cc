#include "core/clients/consumer/assignors.h"

#include <algorithm>
#include <limits>
#include <set>
#include <utility>

#include "core/base/big_endian.h"
#include "core/base/check.h"

namespace ksim {
namespace {

// Appends Kafka protocol primitives (big endian).
class Writer {
 public:
  void Int16(int16_t v) {
    const size_t at = out_.size();
    out_.resize(at + 2);
    StoreBigEndian16(out_.data() + at, static_cast<uint16_t>(v));
  }
  void Int32(int32_t v) {
    const size_t at = out_.size();
    out_.resize(at + 4);
    StoreBigEndian32(out_.data() + at, static_cast<uint32_t>(v));
  }
  void String(const std::string& s) {
    KSIM_CHECK(s.size() <= static_cast<size_t>(std::numeric_limits<int16_t>::max()));
    Int16(static_cast<int16_t>(s.size()));
    out_.insert(out_.end(), s.begin(), s.end());
  }
  void Count(size_t n) {
    KSIM_CHECK(n <= static_cast<size_t>(std::numeric_limits<int32_t>::max()));
    Int32(static_cast<int32_t>(n));
  }
  void NullableBytes(const std::optional<Bytes>& b) {
    if (!b.has_value()) {
      Int32(-1);
      return;
    }
    Count(b->size());
    out_.insert(out_.end(), b->begin(), b->end());
  }
  Bytes Take() { return std::move(out_); }

 private:
  Bytes out_;
};

// Reads Kafka protocol primitives from untrusted bytes: every read is bounds-checked and fails
// with kCorruption naming the field and its position.
class Reader {
 public:
  explicit Reader(ByteView in) : in_(in) {}

  Status Int16(const char* field, int16_t* v) {
    KSIM_RETURN_IF_ERROR(Need(field, 2));
    *v = static_cast<int16_t>(LoadBigEndian16(in_.data() + pos_));
    pos_ += 2;
    return Status::Ok();
  }
  Status Int32(const char* field, int32_t* v) {
    KSIM_RETURN_IF_ERROR(Need(field, 4));
    *v = static_cast<int32_t>(LoadBigEndian32(in_.data() + pos_));
    pos_ += 4;
    return Status::Ok();
  }
  Status String(const char* field, std::string* s) {
    int16_t length = 0;
    KSIM_RETURN_IF_ERROR(Int16(field, &length));
    if (length < 0) return Corrupt(field, "negative string length " + std::to_string(length));
    KSIM_RETURN_IF_ERROR(Need(field, static_cast<size_t>(length)));
    s->assign(reinterpret_cast<const char*>(in_.data() + pos_), static_cast<size_t>(length));
    pos_ += static_cast<size_t>(length);
    return Status::Ok();
  }
  // An array count: non-negative, and no larger than the remaining bytes could hold at
  // `item_size_min` bytes per item (so a forged count cannot make the caller reserve gigabytes).
  Status Count(const char* field, size_t item_size_min, size_t* n) {
    int32_t count = 0;
    KSIM_RETURN_IF_ERROR(Int32(field, &count));
    if (count < 0) return Corrupt(field, "negative array count " + std::to_string(count));
    if (static_cast<size_t>(count) > remaining() / item_size_min) {
      return Corrupt(field, "array count " + std::to_string(count) + " exceeds the " +
                                std::to_string(remaining()) + " bytes left");
    }
    *n = static_cast<size_t>(count);
    return Status::Ok();
  }
  Status NullableBytes(const char* field, std::optional<Bytes>* b) {
    int32_t length = 0;
    KSIM_RETURN_IF_ERROR(Int32(field, &length));
    if (length == -1) {
      b->reset();
      return Status::Ok();
    }
    if (length < 0) return Corrupt(field, "negative bytes length " + std::to_string(length));
    KSIM_RETURN_IF_ERROR(Need(field, static_cast<size_t>(length)));
    b->emplace(in_.begin() + static_cast<ptrdiff_t>(pos_),
               in_.begin() + static_cast<ptrdiff_t>(pos_ + static_cast<size_t>(length)));
    pos_ += static_cast<size_t>(length);
    return Status::Ok();
  }
  Status Version(int16_t* version) {
    KSIM_RETURN_IF_ERROR(Int16("version", version));
    // ConsumerProtocol.checkVersionCompatibility: only versions below 0 are refused.
    if (*version < kConsumerProtocolV0) {
      return Status(Errc::kCorruption,
                    "consumer protocol: unsupported version " + std::to_string(*version));
    }
    return Status::Ok();
  }

 private:
  size_t remaining() const { return in_.size() - pos_; }
  Status Need(const char* field, size_t n) {
    if (n > remaining()) {
      return Corrupt(
          field, "needs " + std::to_string(n) + " bytes, " + std::to_string(remaining()) + " left");
    }
    return Status::Ok();
  }
  Status Corrupt(const char* field, const std::string& what) const {
    return Status(Errc::kCorruption, "consumer protocol: " + std::string(field) + " at position " +
                                         std::to_string(pos_) + ": " + what);
  }

  ByteView in_;
  size_t pos_ = 0;
};

}  // namespace

Bytes EncodeSubscription(const ConsumerSubscription& subscription) {
  Writer w;
  w.Int16(kConsumerProtocolV0);
  w.Count(subscription.topics.size());
  for (const std::string& topic : subscription.topics) w.String(topic);
  w.NullableBytes(subscription.user_data);
  return w.Take();
}

Result<ConsumerSubscription> DecodeSubscription(ByteView bytes) {
  Reader r(bytes);
  int16_t version = 0;
  KSIM_RETURN_IF_ERROR(r.Version(&version));
  ConsumerSubscription out;
  size_t topics = 0;
  KSIM_RETURN_IF_ERROR(r.Count("topics", 2, &topics));
  out.topics.resize(topics);
  for (std::string& topic : out.topics) KSIM_RETURN_IF_ERROR(r.String("topic", &topic));
  KSIM_RETURN_IF_ERROR(r.NullableBytes("user_data", &out.user_data));
  return out;
}

Bytes EncodeAssignment(const ConsumerAssignment& assignment) {
  // Group by topic in order of first appearance.
  std::vector<std::pair<std::string, std::vector<int32_t>>> groups;
  std::map<std::string, size_t> index;
  for (const TopicPartition& tp : assignment.partitions) {
    auto [it, inserted] = index.emplace(tp.topic, groups.size());
    if (inserted) groups.emplace_back(tp.topic, std::vector<int32_t>{});
    groups[it->second].second.push_back(tp.partition.value());
  }
  Writer w;
  w.Int16(kConsumerProtocolV0);
  w.Count(groups.size());
  for (const auto& [topic, partitions] : groups) {
    w.String(topic);
    w.Count(partitions.size());
    for (int32_t p : partitions) w.Int32(p);
  }
  w.NullableBytes(assignment.user_data);
  return w.Take();
}

Result<ConsumerAssignment> DecodeAssignment(ByteView bytes) {
  Reader r(bytes);
  int16_t version = 0;
  KSIM_RETURN_IF_ERROR(r.Version(&version));
  ConsumerAssignment out;
  size_t topics = 0;
  // A topic entry takes at least 6 bytes: an empty name and an empty partition list.
  KSIM_RETURN_IF_ERROR(r.Count("topic_partitions", 6, &topics));
  for (size_t t = 0; t < topics; ++t) {
    std::string topic;
    KSIM_RETURN_IF_ERROR(r.String("topic", &topic));
    size_t partitions = 0;
    KSIM_RETURN_IF_ERROR(r.Count("partitions", 4, &partitions));
    for (size_t p = 0; p < partitions; ++p) {
      int32_t partition = 0;
      KSIM_RETURN_IF_ERROR(r.Int32("partition", &partition));
      out.partitions.push_back(TopicPartition{topic, PartitionId(partition)});
    }
  }
  KSIM_RETURN_IF_ERROR(r.NullableBytes("user_data", &out.user_data));
  return out;
}

namespace {

MemberPartitions EmptyAssignment(const GroupSubscriptions& subscriptions) {
  MemberPartitions assignment;
  for (const auto& [member, topics] : subscriptions) assignment[member];
  return assignment;
}

}  // namespace

MemberPartitions RangeAssignor::Assign(const std::map<std::string, int32_t>& partitions_per_topic,
                                       const GroupSubscriptions& subscriptions) const {
  // Kafka's consumersPerTopic: topic -> its members; std::map and std::set keep both sorted
  // (Kafka sorts each topic's members; its topic order is a HashMap's, ours is by name).
  std::map<std::string, std::set<std::string>> members_per_topic;
  for (const auto& [member, topics] : subscriptions) {
    for (const std::string& topic : topics) members_per_topic[topic].insert(member);
  }
  MemberPartitions assignment = EmptyAssignment(subscriptions);
  for (const auto& [topic, members] : members_per_topic) {
    const auto count = partitions_per_topic.find(topic);
    if (count == partitions_per_topic.end()) continue;  // no metadata: skipped
    KSIM_CHECK(count->second >= 0);
    const int32_t partitions = count->second;
    const int32_t consumers = static_cast<int32_t>(members.size());
    const int32_t per_consumer = partitions / consumers;
    const int32_t with_extra = partitions % consumers;
    int32_t i = 0;
    for (const std::string& member : members) {
      const int32_t start = per_consumer * i + std::min(i, with_extra);
      const int32_t length = per_consumer + (i < with_extra ? 1 : 0);
      for (int32_t p = start; p < start + length; ++p) {
        assignment[member].push_back(TopicPartition{topic, PartitionId(p)});
      }
      ++i;
    }
  }
  return assignment;
}

MemberPartitions RoundRobinAssignor::Assign(
    const std::map<std::string, int32_t>& partitions_per_topic,
    const GroupSubscriptions& subscriptions) const {
  MemberPartitions assignment = EmptyAssignment(subscriptions);
  std::map<std::string, std::set<std::string>> subscribed;  // member -> its topics
  std::set<std::string> topics;                             // every subscribed topic, sorted
  for (const auto& [member, member_topics] : subscriptions) {
    subscribed[member].insert(member_topics.begin(), member_topics.end());
    topics.insert(member_topics.begin(), member_topics.end());
  }
  if (subscriptions.empty()) return assignment;
  // Kafka's CircularIterator over the sorted member ids; it advances past members not
  // subscribed to the partition's topic. Some member is subscribed to every topic in `topics`,
  // so the inner loop ends within one turn.
  auto member = subscriptions.begin();
  auto advance = [&] {
    if (++member == subscriptions.end()) member = subscriptions.begin();
  };
  for (const std::string& topic : topics) {
    const auto count = partitions_per_topic.find(topic);
    if (count == partitions_per_topic.end()) continue;
    KSIM_CHECK(count->second >= 0);
    for (int32_t p = 0; p < count->second; ++p) {
      size_t skipped = 0;
      while (subscribed[member->first].count(topic) == 0) {
        advance();
        KSIM_CHECK(++skipped <= subscriptions.size());
      }
      assignment[member->first].push_back(TopicPartition{topic, PartitionId(p)});
      advance();
    }
  }
  return assignment;
}

std::unique_ptr<PartitionAssignor> MakePartitionAssignor(std::string_view name) {
  if (name == "range" || name == "org.apache.kafka.clients.consumer.RangeAssignor") {
    return std::make_unique<RangeAssignor>();
  }
  if (name == "roundrobin" || name == "org.apache.kafka.clients.consumer.RoundRobinAssignor") {
    return std::make_unique<RoundRobinAssignor>();
  }
  return nullptr;
}

std::map<std::string, ConsumerAssignment> AssignGroup(
    const PartitionAssignor& assignor, const std::map<std::string, int32_t>& partitions_per_topic,
    const std::map<std::string, ConsumerSubscription>& subscriptions) {
  GroupSubscriptions topics;
  for (const auto& [member, subscription] : subscriptions) topics[member] = subscription.topics;
  std::map<std::string, ConsumerAssignment> out;
  for (auto& [member, partitions] : assignor.Assign(partitions_per_topic, topics)) {
    out[member].partitions = std::move(partitions);
  }
  return out;
}

}  // namespace ksim
