// TopicPartition: a partition of a topic, the key of nearly everything a broker keeps (logs,
// replica state, checkpoints, requests). Printed "t-0" as Kafka's TopicPartition.toString, which
// is also a partition's log directory name. A value; no I/O.
#pragma once

#include <compare>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "core/base/types.h"

namespace ksim {

struct TopicPartition {
  std::string topic;
  PartitionId partition{0};

  friend auto operator<=>(const TopicPartition&, const TopicPartition&) = default;
  friend bool operator==(const TopicPartition&, const TopicPartition&) = default;
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
