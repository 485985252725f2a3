// Replica placement after Kafka's AdminUtils.assignReplicasToBrokers (rack-unaware) and the
// manual-assignment checks of TopicCommand and AdminUtils (see replica_assignment.h).
#include "core/cluster/replica_assignment.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <string>

#include "core/base/text.h"

namespace ksim {
namespace {

std::string_view Trim(std::string_view text) {
  // Java's String.trim: strips every char <= ' ' from both ends.
  while (!text.empty() && static_cast<unsigned char>(text.front()) <= ' ') text.remove_prefix(1);
  while (!text.empty() && static_cast<unsigned char>(text.back()) <= ' ') text.remove_suffix(1);
  return text;
}

// Java's Integer.parseInt over a trimmed field: optional sign, decimal digits, int32 range.
bool ParseBrokerId(std::string_view text, int32_t& out) {
  text = Trim(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size();
}

// Splits like Java's String.split with a one-character separator: trailing empty fields dropped.
std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> fields;
  size_t begin = 0;
  while (true) {
    const size_t end = text.find(separator, begin);
    fields.push_back(text.substr(begin, end == std::string_view::npos ? end : end - begin));
    if (end == std::string_view::npos) break;
    begin = end + 1;
  }
  while (!fields.empty() && fields.back().empty()) fields.pop_back();
  return fields;
}

Status InvalidAssignment(std::string message) {
  return Status(Errc::kInvalidReplicaAssignment, std::move(message));
}

// The brokers that appear more than once in `replicas`, each once, in first-repeat order.
std::vector<BrokerId> Duplicates(const std::vector<BrokerId>& replicas) {
  std::vector<BrokerId> duplicates;
  std::set<BrokerId> seen;
  for (BrokerId broker : replicas) {
    if (!seen.insert(broker).second &&
        std::find(duplicates.begin(), duplicates.end(), broker) == duplicates.end()) {
      duplicates.push_back(broker);
    }
  }
  return duplicates;
}

}  // namespace

AssignmentStart DrawAssignmentStart(RandomSource& random, int32_t broker_count) {
  KSIM_CHECK(broker_count > 0);
  AssignmentStart start;
  // Kafka draws startIndex first, then nextReplicaShift, from the same generator.
  start.start_index = random.NextInt(broker_count);
  start.next_replica_shift = random.NextInt(broker_count);
  KSIM_CHECK(start.start_index >= 0 && start.start_index < broker_count);
  KSIM_CHECK(start.next_replica_shift >= 0 && start.next_replica_shift < broker_count);
  return start;
}

int32_t ReplicaIndex(int32_t first_replica_index, int32_t second_replica_shift,
                     int32_t replica_index, int32_t broker_count) {
  KSIM_CHECK(broker_count > 1);
  KSIM_CHECK(first_replica_index >= 0 && second_replica_shift >= 0 && replica_index >= 0);
  const int32_t shift = 1 + (second_replica_shift + replica_index) % (broker_count - 1);
  const int32_t index = (first_replica_index + shift) % broker_count;
  KSIM_CHECK(index != first_replica_index % broker_count);
  return index;
}

Result<ReplicaAssignment> AssignReplicasToBrokers(const std::vector<BrokerId>& brokers,
                                                  int32_t partitions, int32_t replication_factor,
                                                  AssignmentStart start,
                                                  int32_t start_partition_id) {
  if (partitions <= 0) {
    return Status(Errc::kInvalidPartitions, "number of partitions must be larger than 0");
  }
  if (replication_factor <= 0) {
    return Status(Errc::kInvalidReplicationFactor, "replication factor must be larger than 0");
  }
  const int32_t broker_count = static_cast<int32_t>(brokers.size());
  if (replication_factor > broker_count) {
    return Status(Errc::kInvalidReplicationFactor,
                  "replication factor: " + std::to_string(replication_factor) +
                      " larger than available brokers: " + std::to_string(broker_count));
  }
  KSIM_CHECK(Duplicates(brokers).empty());
  KSIM_CHECK(start.start_index >= 0 && start.next_replica_shift >= 0);
  KSIM_CHECK(start_partition_id >= 0);

  ReplicaAssignment assignment;
  int32_t next_replica_shift = start.next_replica_shift;
  int32_t partition = start_partition_id;
  for (int32_t i = 0; i < partitions; ++i, ++partition) {
    // Each full turn around the broker list moves the followers one broker further.
    if (partition > 0 && partition % broker_count == 0) ++next_replica_shift;
    const int32_t first_replica_index = (partition + start.start_index) % broker_count;
    std::vector<BrokerId> replicas = {brokers[first_replica_index]};
    for (int32_t j = 0; j < replication_factor - 1; ++j) {
      replicas.push_back(
          brokers[ReplicaIndex(first_replica_index, next_replica_shift, j, broker_count)]);
    }
    KSIM_CHECK(static_cast<int32_t>(replicas.size()) == replication_factor);
    KSIM_CHECK(Duplicates(replicas).empty());
    assignment.emplace(PartitionId(partition), std::move(replicas));
  }
  return assignment;
}

Result<ReplicaAssignment> ParseReplicaAssignment(std::string_view text) {
  ReplicaAssignment assignment;
  const std::vector<std::string_view> partitions = Split(text, ',');
  for (size_t i = 0; i < partitions.size(); ++i) {
    std::vector<BrokerId> replicas;
    for (std::string_view field : Split(partitions[i], ':')) {
      int32_t id = 0;
      if (!ParseBrokerId(field, id)) {
        return InvalidAssignment("invalid broker id '" + std::string(Trim(field)) +
                                 "' in replica assignment '" + std::string(text) + "'");
      }
      replicas.push_back(BrokerId(id));
    }
    if (replicas.empty()) {
      return InvalidAssignment("replication factor must be larger than 0");
    }
    const std::vector<BrokerId> duplicates = Duplicates(replicas);
    if (!duplicates.empty()) {
      return InvalidAssignment("Partition replica lists may not contain duplicate entries: " +
                               JoinIds(duplicates));
    }
    if (i > 0 && replicas.size() != assignment.begin()->second.size()) {
      return InvalidAssignment("Partition " + std::to_string(i) +
                               " has different replication factor: " + JoinIds(replicas, ":"));
    }
    assignment.emplace(PartitionId(static_cast<int32_t>(i)), std::move(replicas));
  }
  if (assignment.empty()) return InvalidAssignment("replica assignment is empty");
  return assignment;
}

Status ValidateReplicaAssignment(const ReplicaAssignment& assignment,
                                 const std::vector<BrokerId>& known_brokers) {
  if (assignment.empty()) return InvalidAssignment("replica assignment is empty");
  int32_t expected_partition = 0;
  for (const auto& [partition, replicas] : assignment) {
    if (partition != PartitionId(expected_partition)) {
      return InvalidAssignment("partitions must be numbered 0 to " +
                               std::to_string(assignment.size() - 1) + ", found partition " +
                               ToString(partition));
    }
    ++expected_partition;
    if (replicas.empty()) return InvalidAssignment("replication factor must be larger than 0");
  }
  const size_t replication_factor = assignment.begin()->second.size();
  for (const auto& [partition, replicas] : assignment) {
    if (replicas.size() != replication_factor) {
      return InvalidAssignment("All partitions should have the same number of replicas");
    }
    const std::vector<BrokerId> duplicates = Duplicates(replicas);
    if (!duplicates.empty()) {
      return InvalidAssignment("Duplicate replica assignment found: partition " +
                               ToString(partition) + " has " + JoinIds(replicas));
    }
  }
  const std::set<BrokerId> known(known_brokers.begin(), known_brokers.end());
  std::set<BrokerId> unknown;
  for (const auto& [partition, replicas] : assignment) {
    for (BrokerId broker : replicas) {
      if (!known.contains(broker)) unknown.insert(broker);
    }
  }
  if (!unknown.empty()) {
    return InvalidAssignment("Unknown broker(s) in replica assignment: " +
                             JoinIds(std::vector<BrokerId>(unknown.begin(), unknown.end()), ", ") +
                             ".");
  }
  return Status::Ok();
}

std::map<BrokerId, int32_t> ReplicaCountPerBroker(const ReplicaAssignment& assignment) {
  std::map<BrokerId, int32_t> counts;
  for (const auto& [partition, replicas] : assignment) {
    for (BrokerId broker : replicas) ++counts[broker];
  }
  return counts;
}

std::map<BrokerId, int32_t> LeaderCountPerBroker(const ReplicaAssignment& assignment) {
  std::map<BrokerId, int32_t> counts;
  for (const auto& [partition, replicas] : assignment) {
    if (!replicas.empty()) ++counts[replicas.front()];
  }
  return counts;
}

}  // namespace ksim
