// TopicAdmin: what `kafka-topics.sh --zookeeper` does (Kafka 0.10's TopicCommand over AdminUtils
// and ZkUtils): create, list, describe and delete topics by reading and writing ZooKeeper through
// the Coordination seam. No broker is involved: the controller watches /brokers/topics and
// /admin/delete_topics and does the rest (creates the partitions' state, deletes the logs).
//
// Create (AdminUtils.createTopic / createOrUpdateTopicPartitionAssignmentPathInZK), in Kafka's
// order: the live brokers from /brokers/ids, sorted by id; the assignment
// (AssignReplicasToBrokers with a start drawn from the RandomSource: INVALID_PARTITIONS,
// INVALID_REPLICATION_FACTOR "replication factor: 3 larger than available brokers: 2"), or a
// manual one checked with ValidateReplicaAssignment (INVALID_REPLICA_ASSIGNMENT; here, unlike
// 0.10's tool, its brokers must be registered); the name (INVALID_TOPIC_EXCEPTION); existence
// (TOPIC_ALREADY_EXISTS, 'Topic "t" already exists.'); a collision with an existing topic
// ('Topic "a.b" collides with existing topics: a_b', INVALID_TOPIC_EXCEPTION); the overrides
// (MakeTopicConfig, INVALID_CONFIG). Then it writes /config/topics/<t> (created or overwritten,
// as writeEntityConfig) and /brokers/topics/<t> with the assignment; a topic created meanwhile
// by someone else makes that last create fail with NODEEXISTS: TOPIC_ALREADY_EXISTS.
//
// Delete marks the topic: /admin/delete_topics/<t> (UNKNOWN_TOPIC_OR_PARTITION when there is no
// such topic; an internal topic is refused; already marked is fine). The answer is the text
// TopicCommand prints.
//
// Asynchronous like the seam: every call returns at once; `done` runs later on the owner's event
// loop with the outcome (a ZooKeeper error such as CONNECTIONLOSS or SESSIONEXPIRED is passed
// through). Calls are independent; several may run at once. Single-threaded.
// REQUIRES: the TopicAdmin, its Coordination and its RandomSource outlive every pending call.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/random_source.h"
#include "core/base/status.h"
#include "core/base/types.h"
#include "core/cluster/replica_assignment.h"
#include "core/config/server_config.h"
#include "core/zk/coordination.h"
#include "core/zk/paths.h"

namespace ksim {

struct ListedTopic {
  std::string name;
  bool marked_for_deletion = false;  // /admin/delete_topics/<t> exists
  friend bool operator==(const ListedTopic&, const ListedTopic&) = default;
};

struct PartitionDescription {
  PartitionId partition{0};
  std::vector<BrokerId> replicas;  // the assignment, preferred leader first
  // From .../partitions/<p>/state: nullopt when there is no state znode yet (printed "none");
  // the state's leader otherwise (-1 while the partition is offline).
  std::optional<BrokerId> leader;
  std::vector<BrokerId> isr;  // empty without a state znode
  friend bool operator==(const PartitionDescription&, const PartitionDescription&) = default;
};

struct TopicDescription {
  std::string topic;
  std::vector<PartitionDescription> partitions;  // by partition id
  zk::TopicConfig config;                        // the overrides in /config/topics/<t>
  bool marked_for_deletion = false;
  int32_t replication_factor() const {
    return partitions.empty() ? 0 : static_cast<int32_t>(partitions.front().replicas.size());
  }
};

// What kafka-preferred-replica-election.sh wrote to /admin/preferred_replica_election.
struct PreferredElectionStarted {
  std::vector<zk::TopicAndPartition> partitions;  // sorted
  // PreferredReplicaLeaderElectionCommand.validatePartition's error lines for partitions left
  // out ("Skipping preferred replica leader election for partition [t,9] since it doesn't
  // exist").
  std::vector<std::string> skipped;
};

// Scala's Set[TopicAndPartition].toString, in the order given: "Set([t,0], [t,1])".
std::string FormatPartitionSet(const std::vector<zk::TopicAndPartition>& partitions);

// TopicCommand's lines, each ending in '\n'.
// "Created topic \"t\".\n"
std::string FormatCreatedTopic(std::string_view topic);
// One name a line, "t - marked for deletion" for a marked one.
std::string FormatTopicList(const std::vector<ListedTopic>& topics);
// describeTopic: "Topic:t\tPartitionCount:1\tReplicationFactor:3\tConfigs:k=v,k2=v2\n" then per
// partition "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3\n".
std::string FormatTopicDescription(const TopicDescription& description);

class TopicAdmin {
 public:
  template <class T>
  using Done = std::function<void(Result<T>)>;

  // `broker_defaults` is what topic overrides are validated against; `zk_connect` ("hadoop01:2181")
  // only appears in messages, as in Kafka's.
  TopicAdmin(Coordination& zk, RandomSource& random, BrokerConfig broker_defaults,
             std::string zk_connect = "localhost:2181");

  // kafka-topics.sh --create. `manual` (--replica-assignment) replaces partitions and
  // replication factor. Returns the assignment written.
  void CreateTopic(std::string topic, int32_t partitions, int32_t replication_factor,
                   std::optional<ReplicaAssignment> manual, zk::TopicConfig overrides,
                   Done<ReplicaAssignment> done);
  // kafka-topics.sh --list: every topic, sorted.
  void ListTopics(Done<std::vector<ListedTopic>> done);
  // kafka-topics.sh --describe [--topic t]: one topic (nothing when it does not exist, as
  // TopicCommand prints nothing) or, with nullopt, every topic, sorted.
  void DescribeTopics(std::optional<std::string> topic, Done<std::vector<TopicDescription>> done);
  // kafka-topics.sh --delete --topic t. Returns what TopicCommand prints:
  // "Topic t is marked for deletion.\nNote: This will have no impact if delete.topic.enable is
  // not set to true.\n", or "Topic t is already marked for deletion.\n".
  void DeleteTopic(std::string topic, Done<std::string> done);
  // kafka-preferred-replica-election.sh (PreferredReplicaLeaderElectionCommand): `partitions`
  // (--path-to-json-file), or with nullopt every partition of every topic (getAllPartitions);
  // those that do not exist are skipped; the rest are written to
  // /admin/preferred_replica_election for the controller. When that znode exists already:
  // kInvalidRequest "Preferred replica leader election currently in progress for Set(...).
  // Aborting operation".
  void StartPreferredReplicaElection(std::optional<std::vector<zk::TopicAndPartition>> partitions,
                                     Done<PreferredElectionStarted> done);

 private:
  void CreateWithBrokers(std::string topic, int32_t partitions, int32_t replication_factor,
                         std::optional<ReplicaAssignment> manual, zk::TopicConfig overrides,
                         std::vector<BrokerId> brokers, Done<ReplicaAssignment> done);
  void WriteTopic(std::string topic, ReplicaAssignment assignment, zk::TopicConfig overrides,
                  Done<ReplicaAssignment> done);
  void DescribeOne(std::string topic, bool marked_for_deletion,
                   std::function<void(Result<std::optional<TopicDescription>>)> done);
  // Every topic's partitions, from /brokers/topics/<t> (ZkUtils.getPartitionsForTopics).
  using TopicPartitions = std::map<std::string, std::vector<PartitionId>>;
  void ReadAllPartitions(Done<TopicPartitions> done);
  void ReadPartitionsOf(std::vector<std::string> topics, size_t next,
                        std::shared_ptr<TopicPartitions> found, Done<TopicPartitions> done);
  void WritePreferredElection(PreferredElectionStarted started,
                              Done<PreferredElectionStarted> done);
  // Live broker ids from /brokers/ids, sorted (none when the path is missing).
  void LiveBrokers(Done<std::vector<BrokerId>> done);

  Coordination& zk_;
  RandomSource& random_;
  BrokerConfig broker_defaults_;
  std::string zk_connect_;
};

}  // namespace ksim
