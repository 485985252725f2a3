// Replica placement for a new topic, exactly as Kafka's AdminUtils.assignReplicasToBrokers
// (rack-unaware) does it, and the checks on a manual `--replica-assignment`.
//
// Kafka's algorithm: the first replica of partition p goes to broker (p + startIndex) % n, round
// robin over the broker list; the other replicas follow it at an increasing shift
// (ReplicaIndex), the shift growing by one each time p wraps around the broker list, so that
// the followers of one broker's partitions spread over the other brokers. Kafka draws
// startIndex and nextReplicaShift with rand.nextInt(n) unless a fixed start index is given (then
// both equal it); here they are parameters, and DrawAssignmentStart draws them from an injected
// RandomSource. The first replica of each list is the partition's preferred leader.
//
// Pure functions; errors are Status values with Kafka's codes and words: INVALID_PARTITIONS,
// INVALID_REPLICATION_FACTOR ("replication factor: 3 larger than available brokers: 2"),
// INVALID_REPLICA_ASSIGNMENT.
#pragma once

#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include "core/base/random_source.h"
#include "core/base/status.h"
#include "core/base/types.h"

namespace ksim {

// Partition id -> its replicas in preference order (the first is the preferred leader).
using ReplicaAssignment = std::map<PartitionId, std::vector<BrokerId>>;

struct AssignmentStart {
  int32_t start_index = 0;         // index in the broker list of partition 0's first replica
  int32_t next_replica_shift = 0;  // initial distance of the second replica from the first
};

// Kafka's random start: startIndex = rand.nextInt(n), then nextReplicaShift = rand.nextInt(n).
// REQUIRES: broker_count > 0.
AssignmentStart DrawAssignmentStart(RandomSource& random, int32_t broker_count);

// AdminUtils.replicaIndex: the broker-list index of replica (replica_index + 2) of a partition
// whose first replica is at `first_replica_index`: 1 + (shift + replica_index) % (n - 1) places
// after it, never on the first replica itself. REQUIRES: broker_count > 1, indexes >= 0.
int32_t ReplicaIndex(int32_t first_replica_index, int32_t second_replica_shift,
                     int32_t replica_index, int32_t broker_count);

// AdminUtils.assignReplicasToBrokers for partitions start_partition_id .. + partitions - 1 over
// `brokers` (in the order given; Kafka sorts them by id first). A non-zero start_partition_id is
// how kafka-topics.sh --alter --partitions adds partitions to an existing topic.
// Errors: kInvalidPartitions (partitions <= 0), kInvalidReplicationFactor (<= 0, or more than
// the brokers). REQUIRES: broker ids distinct, start indexes >= 0, start_partition_id >= 0.
Result<ReplicaAssignment> AssignReplicasToBrokers(const std::vector<BrokerId>& brokers,
                                                  int32_t partitions, int32_t replication_factor,
                                                  AssignmentStart start,
                                                  int32_t start_partition_id = 0);

// TopicCommand.parseReplicaAssignment: "0:1:2,1:2:3" (partitions by ',', replicas by ':',
// blanks around ids ignored) -> partitions 0, 1, ... Errors (kInvalidReplicaAssignment): a
// non-integer id, a duplicate broker within a partition ("Partition replica lists may not
// contain duplicate entries: 1"), a partition whose replica count differs from partition 0's.
Result<ReplicaAssignment> ParseReplicaAssignment(std::string_view text);

// The checks a manual assignment must pass before it is written (AdminUtils
// .validateCreateOrUpdateTopic and the CreateTopics request handling): at least one partition,
// numbered 0..n-1, every partition with the same number (> 0) of replicas, no duplicate within
// a partition, every broker among `known_brokers`. kInvalidReplicaAssignment otherwise.
Status ValidateReplicaAssignment(const ReplicaAssignment& assignment,
                                 const std::vector<BrokerId>& known_brokers);

// Replicas per broker and preferred leaders (first replicas) per broker, for balance checks
// and for `--describe`-style summaries. Brokers without any replica are absent.
std::map<BrokerId, int32_t> ReplicaCountPerBroker(const ReplicaAssignment& assignment);
std::map<BrokerId, int32_t> LeaderCountPerBroker(const ReplicaAssignment& assignment);

}  // namespace ksim
