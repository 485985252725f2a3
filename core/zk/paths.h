// The znodes Kafka 0.10 keeps in ZooKeeper (kafka.utils.ZkUtils and friends) and their JSON
// data, encoded byte for byte as Kafka writes it and decoded as Kafka reads it. The table with
// examples is in docs/zookeeper.md.
//
// Encoding follows Kafka's kafka.utils.Json.encode: compact, keys in the order Kafka's Scala maps
// iterate them (which is why a broker registration starts with "jmx_port"). Where Kafka's order
// comes from a hash map of the caller's data (the partitions of a topic, the keys of a config)
// these functions use ascending order instead.
//
// Decoding takes untrusted text (anything may be written into a znode): malformed JSON, a missing
// field or a field of the wrong type is a kCorruption Status, never an assertion. Decoders accept
// what Kafka 0.10 accepts (e.g. /controller holding a bare broker id, the pre-0.8.2 format) and
// ignore fields Kafka ignores.
//
// Pure functions; no state, no threads.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/base/types.h"

namespace ksim::zk {

// ---- Paths (ZkUtils)
// -----------------------------------------------------------------------------

inline constexpr std::string_view kConsumersPath = "/consumers";
inline constexpr std::string_view kBrokerIdsPath = "/brokers/ids";
inline constexpr std::string_view kBrokerTopicsPath = "/brokers/topics";
inline constexpr std::string_view kBrokerSequenceIdPath = "/brokers/seqid";
inline constexpr std::string_view kControllerPath = "/controller";
inline constexpr std::string_view kControllerEpochPath = "/controller_epoch";
inline constexpr std::string_view kReassignPartitionsPath = "/admin/reassign_partitions";
inline constexpr std::string_view kDeleteTopicsPath = "/admin/delete_topics";
inline constexpr std::string_view kPreferredReplicaElectionPath =
    "/admin/preferred_replica_election";
inline constexpr std::string_view kIsrChangeNotificationPath = "/isr_change_notification";
inline constexpr std::string_view kIsrChangeNotificationPrefix = "isr_change_";
inline constexpr std::string_view kEntityConfigPath = "/config";
inline constexpr std::string_view kEntityConfigChangesPath = "/config/changes";
inline constexpr std::string_view kTopicConfigsPath = "/config/topics";
inline constexpr std::string_view kClientConfigsPath = "/config/clients";

// The persistent paths a broker makes sure exist when it starts (ZkUtils.setupCommonPaths), in
// Kafka's order.
std::vector<std::string> CommonPaths();

std::string BrokerIdPath(BrokerId id);                    // /brokers/ids/1
std::string TopicPath(std::string_view topic);            // /brokers/topics/t
std::string TopicPartitionsPath(std::string_view topic);  // /brokers/topics/t/partitions
std::string TopicPartitionPath(std::string_view topic, PartitionId partition);  // .../partitions/0
std::string PartitionStatePath(std::string_view topic, PartitionId partition);  // .../0/state
std::string DeleteTopicPath(std::string_view topic);  // /admin/delete_topics/t
std::string TopicConfigPath(std::string_view topic);  // /config/topics/t
// What a broker passes to a persistent-sequential create to announce ISR changes; the server
// appends the counter: /isr_change_notification/isr_change_0000000000.
std::string IsrChangeNotificationSequentialPath();

// A child name of /brokers/ids ("1") as a broker id; kCorruption when it is not one.
Result<BrokerId> ParseBrokerIdNode(std::string_view name);
// A child name of /brokers/topics/<t>/partitions ("0"); kCorruption when it is not one.
Result<PartitionId> ParsePartitionNode(std::string_view name);

// ---- /brokers/ids/<id> (ephemeral)
// ---------------------------------------------------------------

// ZkUtils.registerBrokerInZk: version 3 (0.10.0) lists the endpoints and may carry a rack.
// {"jmx_port":-1,"timestamp":"1475066113563","endpoints":["PLAINTEXT://hadoop01:9092"],
//  "host":"hadoop01","version":3,"port":9092}
struct BrokerRegistration {
  std::string host;
  int32_t port = 9092;
  std::vector<std::string> endpoints;  // "PLAINTEXT://host:port" (EndPoint.connectionString)
  int32_t jmx_port = -1;
  int64_t timestamp_ms = 0;  // when the broker registered (written as a string)
  int32_t version = 3;
  std::optional<std::string> rack;  // only written with version >= 3
  friend bool operator==(const BrokerRegistration&, const BrokerRegistration&) = default;
};
std::string EncodeBrokerRegistration(const BrokerRegistration& broker);
// As Broker.createBroker: version >= 1 required; version 1 has only host and port (one
// PLAINTEXT endpoint is derived), later versions need "endpoints".
Result<BrokerRegistration> DecodeBrokerRegistration(std::string_view json);

// ---- /brokers/topics/<t> (persistent)
// ------------------------------------------------------------

// ZkUtils.replicaAssignmentZkData: {"version":1,"partitions":{"0":[1,2,3]}}; the first replica of
// each list is the preferred leader.
using ReplicaAssignment = std::map<PartitionId, std::vector<BrokerId>>;
std::string EncodeReplicaAssignment(const ReplicaAssignment& assignment);
// A missing "partitions" is an empty assignment (as ZkUtils reads it); a partition key that is
// not a non-negative integer, or replicas that are not integers, are corruption.
Result<ReplicaAssignment> DecodeReplicaAssignment(std::string_view json);

// ---- /brokers/topics/<t>/partitions/<p>/state (persistent)
// ---------------------------------------

// ZkUtils.leaderAndIsrZkData (Kafka's LeaderIsrAndControllerEpoch):
// {"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2,3]}
inline constexpr BrokerId kNoLeader{-1};  // LeaderAndIsr.NoLeader
struct PartitionState {
  BrokerId leader = kNoLeader;
  LeaderEpoch leader_epoch{0};
  std::vector<BrokerId> isr;
  ControllerEpoch controller_epoch{0};  // of the controller that wrote it
  friend bool operator==(const PartitionState&, const PartitionState&) = default;
};
std::string EncodePartitionState(const PartitionState& state);
Result<PartitionState> DecodePartitionState(std::string_view json);

// ---- /controller (ephemeral) and /controller_epoch (persistent)
// -----------------------------------

// ZookeeperLeaderElector.elect: {"version":1,"brokerid":1,"timestamp":"1475066113563"}
struct ControllerRegistration {
  BrokerId broker_id{0};
  int64_t timestamp_ms = 0;
  friend bool operator==(const ControllerRegistration&, const ControllerRegistration&) = default;
};
std::string EncodeControllerRegistration(const ControllerRegistration& controller);
// KafkaController.parseControllerId: the JSON object, or else a bare integer (the old format; its
// timestamp is 0). A timestamp that is not a decimal string is ignored, as Kafka ignores it.
Result<ControllerRegistration> DecodeControllerRegistration(std::string_view data);

// The epoch as decimal text: "1" (KafkaController.InitialControllerEpoch is 1).
std::string EncodeControllerEpoch(ControllerEpoch epoch);
Result<ControllerEpoch> DecodeControllerEpoch(std::string_view data);

// ---- /isr_change_notification/isr_change_<seq> (persistent sequential)
// ----------------------------

// Kafka 0.10's kafka.common.TopicAndPartition.
struct TopicAndPartition {
  std::string topic;
  PartitionId partition{0};
  friend auto operator<=>(const TopicAndPartition&, const TopicAndPartition&) = default;
  friend bool operator==(const TopicAndPartition&, const TopicAndPartition&) = default;
};
// ReplicationUtils.propagateIsrChanges:
// {"version":1,"partitions":[{"topic":"t","partition":0}]}, in the order given.
std::string EncodeIsrChangeNotification(const std::vector<TopicAndPartition>& partitions);
Result<std::vector<TopicAndPartition>> DecodeIsrChangeNotification(std::string_view json);

// ---- /admin/preferred_replica_election (persistent)
// -----------------------------------------------

// PreferredReplicaLeaderElectionCommand.writePreferredReplicaElectionData: the same JSON,
// {"version":1,"partitions":[{"topic":"t","partition":0}]}. Decoding refuses duplicates as
// parsePreferredReplicaElectionData does ("Preferred replica election data contains duplicate
// partitions: ...").
std::string EncodePreferredReplicaElection(const std::vector<TopicAndPartition>& partitions);
Result<std::vector<TopicAndPartition>> DecodePreferredReplicaElection(std::string_view json);

// ---- /config/topics/<t> (persistent)
// -------------------------------------------------------------

// AdminUtils.writeEntityConfig: {"version":1,"config":{"min.insync.replicas":"2"}}; values are
// strings, as in a Properties object.
using TopicConfig = std::map<std::string, std::string>;
std::string EncodeTopicConfig(const TopicConfig& config);
// AdminUtils.fetchEntityConfig: version must be 1, config a map of strings.
Result<TopicConfig> DecodeTopicConfig(std::string_view json);

// ---- /config/changes/config_change_<seq> (persistent sequential)
// ---------------------------------

// The notification AdminUtils.changeTopicConfig writes after a topic's config, which brokers
// watch for (0.8.2's TopicConfigManager, then DynamicConfigManager's
// ZkNodeChangeNotificationListener). Its form by release: 0.8.2 the topic's name as a JSON string
// ("t"); 0.10.0 version 1, {"version":1,"entity_type":"topics","entity_name":"t"}; from 0.10.1
// version 2, {"version":2,"entity_path":"topics/t"} (0.10.1.0:AdminUtils.changeEntityConfig,
// 2.0.0:ConfigEntityChangeNotificationSequenceZNode).
inline constexpr std::string_view kConfigChangePrefix = "config_change_";
std::string ConfigChangeSequentialPath();  // /config/changes/config_change_
enum class ConfigChangeFormat : uint8_t { kTopicName, kVersion1, kVersion2 };
std::string EncodeTopicConfigChange(ConfigChangeFormat format, std::string_view topic);
// The topic a notification of any of the three forms names; nullopt for another entity's (a
// client's quota); kCorruption when it does not decode.
Result<std::optional<std::string>> DecodeConfigChange(std::string_view json);
// A child of /config/changes: its sequence number (negative after ZooKeeper's counter wrapped, as
// Kafka's toLong reads it); nullopt for a name of another form.
std::optional<int64_t> ConfigChangeNumber(std::string_view name);

// ---- /consumers/<group>/... (the old, ZooKeeper-based consumer: kafka.consumer)
// ----------------------------

// ZKGroupDirs / ZKGroupTopicDirs: /consumers/g, /consumers/g/ids, /consumers/g/ids/<consumer id>,
// /consumers/g/owners/t/<p> (ephemeral, holds the owning thread id) and
// /consumers/g/offsets/t/<p> (persistent, holds the next offset to consume as decimal text).
std::string ConsumerGroupPath(std::string_view group);
std::string ConsumerIdsPath(std::string_view group);
std::string ConsumerIdPath(std::string_view group, std::string_view consumer_id);
std::string ConsumerOwnerPath(std::string_view group, std::string_view topic,
                              PartitionId partition);
std::string ConsumerOffsetPath(std::string_view group, std::string_view topic,
                               PartitionId partition);

// ZookeeperConsumerConnector.registerConsumerInZK:
// {"version":1,"subscription":{"t":1},"pattern":"static","timestamp":"1475066113563"}: topic (or,
// for the patterns "white_list" / "black_list", the topic filter's regular expression) -> number
// of streams.
struct ConsumerRegistration {
  std::map<std::string, int32_t> subscription;
  std::string pattern = "static";  // TopicCount.staticPattern, whiteListPattern, blackListPattern
  int64_t timestamp_ms = 0;
  friend bool operator==(const ConsumerRegistration&, const ConsumerRegistration&) = default;
};
std::string EncodeConsumerRegistration(const ConsumerRegistration& registration);
// As TopicCount.constructTopicCount reads it: "subscription" an object of stream counts,
// "pattern" a string (a missing timestamp is 0).
Result<ConsumerRegistration> DecodeConsumerRegistration(std::string_view json);

}  // namespace ksim::zk
