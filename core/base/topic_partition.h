// TopicPartition: a partition of a topic, the key of nearly everything a broker keeps (logs,
// replica state, checkpoints, requests). Printed "t-0" as Kafka's TopicPartition.toString, which
// is also a partition's log directory name. A value; no I/O.
#pragma once

#include <compare>
#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "core/base/short_text.h"
#include "core/base/types.h"

namespace ksim {

struct TopicPartition {
  std::string topic;
  PartitionId partition{0};

  // Ordered by topic (as std::string orders: bytes as unsigned char, a prefix first), then
  // partition: what a defaulted <=> gives, written out so that the short topic names of nearly
  // every key compare inline rather than through a memcmp call (TopicPartition keys every map a
  // broker, client and checker keep, and each lookup compares several).
  friend std::strong_ordering operator<=>(const TopicPartition& a, const TopicPartition& b) {
    const size_t common = a.topic.size() < b.topic.size() ? a.topic.size() : b.topic.size();
    for (size_t i = 0; i < common; ++i) {
      const auto x = static_cast<unsigned char>(a.topic[i]);
      const auto y = static_cast<unsigned char>(b.topic[i]);
      if (x != y) return x <=> y;
    }
    if (a.topic.size() != b.topic.size()) return a.topic.size() <=> b.topic.size();
    return a.partition <=> b.partition;
  }
  // The partition first: the cheaper test, and the one that differs among a topic's partitions.
  // The topics then through SameText, inline: std::string's == calls memcmp, which costs more
  // than a short name's few bytes (every hash-map lookup by partition ends in this).
  friend bool operator==(const TopicPartition& a, const TopicPartition& b) {
    return a.partition == b.partition && SameText(a.topic, b.topic);
  }
  friend std::ostream& operator<<(std::ostream& os, const TopicPartition& tp);
};

// "<topic>-<partition>".
std::string ToString(const TopicPartition& tp);

// The inverse of ToString, as Kafka's kafka.log.Log.parseTopicPartitionName reads a log directory
// name: a non-empty topic, a '-', and a partition of decimal digits that fits an int32. A topic
// may itself contain '-', so the partition is what follows the last '-'. Nullopt when `name` is
// not one (Kafka throws KafkaException "Found directory ..., '...' is not in the form of
// topic-partition").
std::optional<TopicPartition> ParseTopicPartition(std::string_view name);

}  // namespace ksim
