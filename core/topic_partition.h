// TopicPartition: a partition's name (Kafka's org.apache.kafka.common.TopicPartition, 0.10's
// TopicAndPartition), and the directory name a partition's log lives in, "<topic>-<partition>"
// (kafka.log.Log.parseTopicPartitionName). A topic may itself contain '-', so the partition is
// what follows the last '-'. Ordered by (topic, partition) so that maps over partitions iterate
// deterministically. Plain values; no I/O, no threads.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace ksim {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;

  friend auto operator<=>(const TopicPartition&, const TopicPartition&) = default;
  friend bool operator==(const TopicPartition&, const TopicPartition&) = default;

  // "<topic>-<partition>", the log directory's name.
  std::string ToString() const { return topic + "-" + std::to_string(partition); }
  friend std::ostream& operator<<(std::ostream& os, const TopicPartition& tp) {
    return os << tp.ToString();
  }
};

// Parses a log directory name "<topic>-<partition>": a non-empty topic, a '-', and a partition of
// decimal digits that fits an int32. Nullopt when the name is not one (Kafka throws
// KafkaException "Found directory ..., '...' is not in the form of topic-partition").
std::optional<TopicPartition> ParseTopicPartitionDirName(std::string_view name);

}  // namespace ksim
