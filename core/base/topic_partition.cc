#include "core/base/topic_partition.h"

#include "core/base/java_numbers.h"

namespace ksim {

std::ostream& operator<<(std::ostream& os, const TopicPartition& tp) {
  return os << tp.topic << '-' << tp.partition.value();
}

std::string ToString(const TopicPartition& tp) {
  return tp.topic + "-" + std::to_string(tp.partition.value());
}

std::optional<TopicPartition> ParseTopicPartition(std::string_view name) {
  const size_t dash = name.rfind('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == name.size()) return std::nullopt;
  const std::string_view digits = name.substr(dash + 1);
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  int32_t partition = 0;
  if (!ParseJavaInt32(digits, partition)) return std::nullopt;
  return TopicPartition{std::string(name.substr(0, dash)), PartitionId(partition)};
}

}  // namespace ksim
