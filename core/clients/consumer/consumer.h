// Consumer: Kafka's KafkaConsumer (ConsumerCoordinator + Fetcher + SubscriptionState + the
// consumer's Metadata) on core's seams: a Transport to reach brokers, Timers and a Clock, and an
// EventSink. The simulator gives it a SimTransport on a client node; the application loop around
// it (poll, process, commit before or after processing) is the caller's, as with Kafka's client:
// sim/ runs that loop from a scenario's workload. docs/clients.md, "Consumer".
//
// - Group membership (Subscribe; group.id set): FindCoordinator (retried after retry.backoff.ms
//   while COORDINATOR_NOT_AVAILABLE), then JoinGroup with the configured assignors'
//   subscriptions (core/clients/consumer/assignors.h), the leader computes the assignment with the
//   protocol the coordinator chose and hands it out in SyncGroup, every member applies what
//   SyncGroup gives it. Heartbeats every heartbeat.interval.ms on a timer (0.10.1's background
//   heartbeat; before 0.10.1 a beat that falls due while no Poll or Commit is pending waits for
//   the next one, as 0.10.0's HeartbeatTask ran only inside poll() and commitSync(), so an
//   application that processes
//   longer than session.timeout.ms loses its partitions); REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION
//   and UNKNOWN_MEMBER_ID (the latter two also reset the member id) make it rejoin; NOT_COORDINATOR
//   / COORDINATOR_NOT_AVAILABLE / a disconnect from the coordinator make it rediscover, and so does
//   session.timeout.ms passing without any heartbeat answer since the last one, the join or the
//   discovery (0.10.1's HeartbeatThread: sessionTimeoutExpired -> coordinatorDead; a crashed
//   coordinator's broker never answers and its disconnect may come much later). Before rejoining
//   (onJoinPrepare) it commits the consumed positions when enable.auto.commit is on, then tells the
//   listener its partitions are revoked (that commit is retried while its error is retriable:
//   without bound before 0.10.2, for the rebalance timeout from 0.10.2, KIP-102); after SyncGroup
//   it tells the listener what it got. The JoinGroup's rebalance timeout is max.poll.interval.ms
//   from 0.10.1, the session timeout before (JoinGroup v0).
// - Manual assignment (Assign): no group protocol; commits still go to the group.id's
//   coordinator when a group.id is set (Kafka's "simple" consumer group, generation -1).
// - Positions: for each assigned partition without a position, OffsetFetch the committed offset;
//   none committed: auto.offset.reset (earliest: ListOffsets -2; latest: -1; none: the partition
//   reports OFFSET_OUT_OF_RANGE to Poll's caller as an error event and stays unfetched). A fetch
//   answered OFFSET_OUT_OF_RANGE resets the position the same way (an event says from where to
//   where).
// - Fetching: one consumer Fetch (replica_id -1) per leader with all its assigned, positioned
//   partitions, fetch.min.bytes / fetch.max.wait.ms / max.partition.fetch.bytes, only records below
//   the HW come back; NOT_LEADER_FOR_PARTITION / UNKNOWN_TOPIC_OR_PARTITION / disconnects refresh
//   metadata. Records returned by Poll advance the position past them; records fetched for a
//   partition revoked meanwhile are dropped.
// - Poll(timeout, done): completes with up to max.poll.records buffered records as soon as there
//   are any, else with none when `timeout_us` passes (or at once on an error the caller must see).
//   Auto commit (enable.auto.commit, auto.commit.interval.ms): when Poll is called and the
//   interval passed since the last one, the current positions (the offsets after the records that
//   earlier polls returned) are committed asynchronously, as Kafka's maybeAutoCommitOffsetsAsync.
// - Commit(offsets, done): OffsetCommit to the coordinator with the current generation and member
//   id (empty offsets: every current position). REBALANCE_IN_PROGRESS / ILLEGAL_GENERATION /
//   UNKNOWN_MEMBER_ID fail the commit (CommitFailedException) and make the member rejoin.
// - Close(done): commits (auto commit on; retried as before a rebalance, bounded from 0.10.2 by
//   min(30 s, request.timeout.ms)), LeaveGroup, done. Destroying it without Close is the
//   process dying: the coordinator notices after session.timeout.ms.
//
// Events (EventSink, the client's node): coordinator_found {group, broker}; coordinator_unknown
// {group, reason: "session_timeout"} (no heartbeat answer for a session); group_joined {group,
// generation, member_id, leader, protocol}; partitions_assigned / partitions_revoked {group,
// partitions: ["t-0", ...]}; offset_commit {group, topic, partition, offset, error};
// offset_fetched {group, topic, partition, offset}; offset_reset {topic, partition, strategy,
// offset, from} (from: the position it replaced, -1 when none); fetch_error {topic, partition,
// error}; group_join_failed {group, error} (a JoinGroup refusal such as INVALID_SESSION_TIMEOUT,
// retried after retry.backoff.ms). Record delivery (poll, deliver) is the
// caller's to record.
//
// Ownership: borrows every seam; owns its NetworkClient, installed as the Transport's handler.
// No callback runs after destruction. One thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/clock.h"
#include "core/base/events.h"
#include "core/base/status.h"
#include "core/base/types.h"
#include "core/config/kafka_version.h"
#include "core/config/server_config.h"
#include "core/protocol/messages.h"
#include "core/protocol/transport.h"

namespace ksim {

// The consumer's configuration under Kafka's names. The defaults are Kafka 0.10.1's;
// ParseConsumerConfig sets those of the consumer's release (0.10.0: session.timeout.ms 30000,
// request.timeout.ms 40000, max.poll.records unlimited).
struct ConsumerConfig {
  // The release the consumer behaves as (docs/versions.md, "Consumer"): before 0.10.1 (KIP-62)
  // heartbeats are sent only while the application is in Poll, the JoinGroup carries no rebalance
  // timeout (the session timeout bounds a rebalance) and max.poll.interval.ms does not exist;
  // before 0.10.2 (KIP-102) the auto commit before a rebalance and at Close is retried without
  // bound while its errors are retriable.
  KafkaRelease release = KafkaRelease::k0_10_1;
  // The brokers' release, as their ApiVersions answers tell it (not a setting; the consumer's own
  // unless the caller says). From 1.1 on both sides the fetches belong to KIP-227 sessions (Fetch
  // v7; Kafka 1.1's Fetcher with its FetchSessionHandlers).
  KafkaRelease brokers_release = KafkaRelease::k0_10_1;
  std::string client_id;                       // client.id
  std::vector<std::string> bootstrap_servers;  // bootstrap.servers: node names
  std::string group_id;                        // group.id ("" : no group, no commits)
  std::string auto_offset_reset = "latest";    // auto.offset.reset: earliest, latest, none
  bool enable_auto_commit = true;              // enable.auto.commit
  int64_t auto_commit_interval_ms = 5000;      // auto.commit.interval.ms
  int32_t session_timeout_ms = 10000;          // session.timeout.ms
  int32_t heartbeat_interval_ms = 3000;        // heartbeat.interval.ms
  int32_t max_poll_interval_ms = 300000;  // max.poll.interval.ms (0.10.1: the rebalance timeout)
  int32_t max_poll_records = 500;         // max.poll.records
  int32_t fetch_min_bytes = 1;            // fetch.min.bytes
  int32_t fetch_max_wait_ms = 500;        // fetch.max.wait.ms
  int32_t max_partition_fetch_bytes = 1048576;  // max.partition.fetch.bytes
  int32_t request_timeout_ms = 305000;          // request.timeout.ms
  int64_t retry_backoff_ms = 100;               // retry.backoff.ms
  int64_t metadata_max_age_ms = 300000;         // metadata.max.age.ms
  // partition.assignment.strategy: assignor names ("range", "roundrobin") or Kafka's class names
  // (org.apache.kafka.clients.consumer.RangeAssignor, ...), in preference order.
  std::vector<std::string> partition_assignment_strategy = {"range"};
  // What KafkaConsumer logs at WARN for settings its release does not know
  // (AbstractConfig.logUnused): "The configuration max.poll.interval.ms = 60000 was supplied but
  // isn't a known config." Those settings have no effect.
  std::vector<std::string> warnings;
};

// Parses Kafka-named settings over the defaults of `release` with Kafka's checks and messages.
// Keys unknown to every release are kInvalidConfig naming the closest known one; a key of a later
// release (max.poll.interval.ms, fetch.max.bytes before 0.10.1) is a warning in `warnings` and
// ignored, as KafkaConsumer does.
Result<ConsumerConfig> ParseConsumerConfig(const ConfigOverrides& settings,
                                           KafkaRelease release = kSeedKafkaRelease);
// Whether a consumer of `release` has the setting `name`.
bool ConsumerKnowsKey(std::string_view name, KafkaRelease release);

struct ConsumerRecord {
  TopicPartition tp;
  Offset offset{0};
  int64_t timestamp_ms = kNoTimestamp;
  std::optional<std::string> key;
  std::string value;
};

// Kafka's ConsumerRebalanceListener.
struct RebalanceListener {
  std::function<void(const std::vector<TopicPartition>&)> on_revoked;
  std::function<void(const std::vector<TopicPartition>&)> on_assigned;
};

struct ConsumerSeams {
  Transport& transport;
  Timers& timers;
  const Clock& clock;
  EventSink events;
};

class Consumer {
 public:
  // REQUIRES: config is valid (ParseConsumerConfig); bootstrap not empty.
  Consumer(ConsumerConfig config, ConsumerSeams seams);
  ~Consumer();
  Consumer(const Consumer&) = delete;
  Consumer& operator=(const Consumer&) = delete;

  // Group management of `topics`. REQUIRES: a group.id; no Assign before.
  void Subscribe(std::vector<std::string> topics, RebalanceListener listener = {});
  // Manual assignment. REQUIRES: no Subscribe before.
  void Assign(std::vector<TopicPartition> partitions);

  // See the header comment. REQUIRES: no other Poll pending; not closed.
  void Poll(TimeUs timeout_us, std::function<void(std::vector<ConsumerRecord>)> done);
  // Commits `offsets` (next offset to read, per partition); empty: every current position.
  // `done` hears the outcome (the first partition error, or the request's).
  void Commit(std::map<TopicPartition, Offset> offsets, std::function<void(Status)> done);
  void Close(std::function<void()> done);

  // The partitions currently assigned (empty while rebalancing), sorted.
  std::vector<TopicPartition> assignment() const;
  // Next offset Poll will return per assigned partition that has one.
  std::map<TopicPartition, Offset> positions() const;
  const std::string& member_id() const;
  int32_t generation() const;  // -1 outside a group generation
  const ConsumerConfig& config() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ksim
