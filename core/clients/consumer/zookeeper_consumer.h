// ZookeeperConsumer: Kafka 0.10's old consumer (kafka.consumer.ZookeeperConsumerConnector), the
// one `kafka-console-consumer.sh --zookeeper` runs. Its group lives in ZooKeeper, not at a group
// coordinator; it fetches from the partition leaders like the new consumer, through the same
// ConsumerNetwork and Fetcher (core/clients/consumer/fetcher.h). docs/clients.md, "The old
// consumer".
//
// - Membership: the ephemeral /consumers/<group>/ids/<consumer id> holds the subscription
//   ({"version":1,"subscription":{"t":1},"pattern":"static","timestamp":"..."}, one stream per
//   topic). The consumer id is `<group>_<host>-<ms>-<8 hex digits>` (consumer.id replaces what
//   follows the group, as in Kafka).
// - Rebalance (ZKRebalancerListener.syncedRebalance), started when the session is established and
//   whenever a watch fires: on the children of /consumers/<group>/ids, on /brokers/topics/<t> of a
//   subscribed topic (its creation or a partition change), and on /brokers/ids while no broker is
//   registered. One attempt reads the members and their subscriptions, the brokers and the
//   topics' partitions; stops fetching, commits the consumed offsets (auto.commit.enable),
//   deletes its owner nodes, computes the assignment (partition.assignment.strategy: range or
//   roundrobin, over the members' thread ids `<consumer id>-0`), reads the assigned partitions'
//   offsets from /consumers/<group>/offsets/<t>/<p> and creates an ephemeral owner node
//   /consumers/<group>/owners/<t>/<p> for each. If one still exists (its previous owner has not
//   released it yet) the attempt fails: the nodes it created are deleted and the next attempt
//   starts rebalance.backoff.ms later, up to rebalance.max.retries attempts; then the consumer
//   owns nothing until the next watch fires (ConsumerRebalanceFailedException, logged by the
//   watcher thread). A watch that fires during a rebalance runs another one after it.
// - Positions: a partition starts at its offset in ZooKeeper; none: auto.offset.reset (smallest:
//   the log start, largest: the log end), as does a fetch answered OFFSET_OUT_OF_RANGE.
// - Offsets: Commit writes /consumers/<group>/offsets/<t>/<p> (the next offset to consume, as
//   decimal text; created with its parents when missing), skipping an offset equal to the last
//   one this consumer wrote there (checkpointedZkOffsets). With auto.commit.enable a commit of
//   every owned partition's position runs every auto.commit.interval.ms, before each rebalance and
//   at Close.
// - Session expiry: the ownership is forgotten (not committed), the consumer opens a new session,
//   registers again and rebalances (ZKSessionExpireListener.handleNewSession).
// - Poll / Commit / Close as Consumer's (consumer.h); Close commits (auto commit on), then closes
//   the ZooKeeper session, so that its ephemeral nodes go at once.
//
// Events (EventSink): consumer_registered {group, consumer_id}; rebalance_attempt {group,
// attempt, result: "ok" | "owner_exists" | "zk_error" | "no_brokers", detail}; rebalance_failed
// {group, message} (Kafka's "... can't rebalance after 4 retries"); partitions_revoked /
// partitions_assigned {group, partitions}; offset_commit {group, topic, partition, offset, error};
// offset_fetched {group, topic, partition, offset} (-1: none in ZooKeeper); the Fetcher's
// offset_reset and fetch_error.
//
// Not modelled: topic filters (a whitelist is its topic names), several streams per topic,
// offsets.storage=kafka / dual commit, consumer.timeout.ms.
//
// Ownership: borrows every seam (the ZooKeeper client is this consumer's own: it installs the
// watcher and session listener and connects it); owns its ConsumerNetwork and Fetcher. No
// callback runs after destruction. One thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/base/clock.h"
#include "core/base/events.h"
#include "core/base/random_source.h"
#include "core/base/status.h"
#include "core/clients/consumer/consumer.h"
#include "core/config/kafka_version.h"
#include "core/config/server_config.h"
#include "core/protocol/transport.h"
#include "core/zk/coordination.h"

namespace ksim {

// The old consumer's settings under Kafka's names, with 0.10.0.1's defaults
// (kafka.consumer.ConsumerConfig).
struct ZookeeperConsumerConfig {
  std::string group_id;                         // group.id (required)
  std::string consumer_id;                      // consumer.id ("" : generated)
  std::string client_id;                        // client.id (default: the group id)
  std::string auto_offset_reset = "largest";    // auto.offset.reset: smallest, largest
  bool auto_commit_enable = true;               // auto.commit.enable
  int64_t auto_commit_interval_ms = 60000;      // auto.commit.interval.ms
  int32_t rebalance_max_retries = 4;            // rebalance.max.retries
  int64_t rebalance_backoff_ms = 2000;          // rebalance.backoff.ms (zookeeper.sync.time.ms)
  int32_t zookeeper_session_timeout_ms = 6000;  // zookeeper.session.timeout.ms
  int32_t fetch_min_bytes = 1;                  // fetch.min.bytes
  int32_t fetch_wait_max_ms = 100;              // fetch.wait.max.ms
  int32_t fetch_message_max_bytes = 1048576;    // fetch.message.max.bytes
  int32_t socket_timeout_ms = 30000;            // socket.timeout.ms
  int64_t refresh_leader_backoff_ms = 200;      // refresh.leader.backoff.ms
  std::string partition_assignment_strategy = "range";  // range, roundrobin
};

// Kafka 0.10.0.1's old-consumer keys and checks (ConsumerConfig.validate: group.id required,
// auto.offset.reset smallest or largest, partition.assignment.strategy range or roundrobin).
// kInvalidConfig names the key; an unknown key is refused with the closest known one.
Result<ZookeeperConsumerConfig> ParseZookeeperConsumerConfig(const ConfigOverrides& settings);

struct ZookeeperConsumerSeams {
  Coordination& zk;  // this consumer's own session, not connected yet
  Transport& transport;
  Timers& timers;
  const Clock& clock;
  RandomSource& random;  // the consumer id's digits
  EventSink events;
  std::string host;  // the consumer id's host part
};

// The old consumer's RangeAssignor / RoundRobinAssignor (kafka.consumer.PartitionAssignor) for
// one stream per consumer: consumer id -> its partitions. `subscriptions`: consumer id -> topics;
// `partitions_per_topic`: the subscribed topics' partition counts (absent: no partitions).
// roundrobin orders every partition by the Java hash code of "[topic,partition]"
// (TopicAndPartition.toString), ties by (topic, partition), and deals them to the consumers in
// order; it needs every consumer subscribed to the same topics (kInvalidArgument otherwise, as
// Kafka's require).
Result<std::map<std::string, std::vector<TopicPartition>>> AssignOldConsumers(
    std::string_view strategy, const std::map<std::string, int32_t>& partitions_per_topic,
    const std::map<std::string, std::vector<std::string>>& subscriptions);

class ZookeeperConsumer {
 public:
  ZookeeperConsumer(ZookeeperConsumerConfig config, ZookeeperConsumerSeams seams);
  ~ZookeeperConsumer();
  ZookeeperConsumer(const ZookeeperConsumer&) = delete;
  ZookeeperConsumer& operator=(const ZookeeperConsumer&) = delete;

  // Connects to ZooKeeper, registers with `topics` and rebalances. `pattern` is what the
  // registration says ("static"; the console consumer's Whitelist writes "white_list").
  // REQUIRES: called once.
  void Subscribe(std::vector<std::string> topics, std::string pattern = "static");

  // As Consumer's. REQUIRES: no other Poll pending; not closed.
  void Poll(TimeUs timeout_us, std::function<void(std::vector<ConsumerRecord>)> done);
  // Writes `offsets` to ZooKeeper (empty: every owned partition's position).
  void Commit(std::map<TopicPartition, Offset> offsets, std::function<void(Status)> done);
  void Close(std::function<void()> done);

  // The partitions this consumer owns (empty while rebalancing), sorted.
  std::vector<TopicPartition> assignment() const;
  std::map<TopicPartition, Offset> positions() const;
  // `<group>_<consumer uuid>`.
  const std::string& consumer_id() const;
  const ZookeeperConsumerConfig& config() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ksim
