// Log directory names: a partition's log lives in "<topic>-<partition>/" (Kafka's
// kafka.log.Log.parseTopicPartitionName). A topic may itself contain '-', so the partition is what
// follows the last '-'. TopicPartition itself is core/protocol.h's. Pure functions; no I/O.
#pragma once

#include <optional>
#include <string_view>

#include "core/protocol.h"

namespace ksim {

// Parses a log directory name "<topic>-<partition>": a non-empty topic, a '-', and a partition of
// decimal digits that fits an int32. Nullopt when the name is not one (Kafka throws
// KafkaException "Found directory ..., '...' is not in the form of topic-partition").
std::optional<TopicPartition> ParseTopicPartitionDirName(std::string_view name);

}  // namespace ksim
