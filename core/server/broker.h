// Broker: one Kafka broker process (Kafka 0.10's KafkaServer with KafkaApis, ReplicaManager,
// ReplicaFetcherManager, the produce and fetch purgatories, MetadataCache and KafkaHealthcheck),
// built on the seams only: Env (its log dirs), Clock and Timers, Transport (requests from clients,
// peers and the controller), Coordination (its ZooKeeper session) and a RandomSource. The same
// class runs in the simulator (sim/cluster/cluster.h wires it to a node) and could run as a real
// process. docs/broker.md describes the request handling; in short:
//
// - Startup(): LogManager startup (log recovery from what the disk kept), the HW checkpoint
//   (replication-offset-checkpoint) read back; then, asynchronously: connect to ZooKeeper, make
//   sure Kafka's common paths exist, register the ephemeral /brokers/ids/<id> (host = the name
//   peers reach it by), start the Controller (core/controller/controller.h) which may become
//   active. Partitions come to life only through LeaderAndIsr from the controller.
// - LeaderAndIsr (fenced: an older controller epoch is STALE_CONTROLLER_EPOCH; a partition state
//   with an older leader epoch is ignored): create the log when missing, then Partition::MakeLeader
//   or MakeFollower. A new follower truncates by the TruncationPolicy (own HW, or the leader's
//   answer to OffsetsForLeaderEpoch) and then fetches from the leader. StopReplica stops (and with
//   delete_partitions deletes) the partition. UpdateMetadata refreshes the metadata cache.
// - Produce: acks 0 (no response), 1 (after the leader's append), -1/all (parked until HW passes
//   the batch or timeout_ms: REQUEST_TIMED_OUT; NOT_ENOUGH_REPLICAS(_AFTER_APPEND) by
//   min.insync.replicas); at 0.8.2 also N > 1 (N ISR members have it) after KIP-1's WARN
//   (event produce_acks_deprecated), later INVALID_REQUIRED_ACKS; NOT_LEADER_FOR_PARTITION on a
//   non-leader, UNKNOWN_TOPIC_OR_PARTITION for an unknown partition.
// - Fetch: followers (replica_id >= 0) read up to the LEO and move their LEO/HW on the leader;
//   consumers (replica_id -1) read below HW. A fetch with nothing to return waits up to max_wait_ms
//   for min_bytes (the fetch purgatory). Metadata, ListOffsets, OffsetsForLeaderEpoch.
// - Replication: for each leader it follows, a fetcher sends one Fetch at a time
//   (replica.fetch.wait.max.ms long poll, replica.fetch.max.bytes), appends the answer, and backs
//   off replica.fetch.backoff.ms after an error. The leader checks every replica.lag.time.max.ms/2
//   for followers to drop from the ISR; ISR changes are written to the partition's state znode
//   (conditional on its version) and announced under /isr_change_notification.
// - Shutdown(): controlled shutdown first when controlled.shutdown.enable (ask the controller to
//   move leadership away, up to controlled.shutdown.max.retries attempts), then, in
//   KafkaServer.shutdown's order: stop fetchers and timers, write the HW checkpoint, close every
//   log (flushed, clean-shutdown marker), shut the controller down, close the ZooKeeper session.
//   Destroying a Broker without Shutdown() is a crash: nothing more is written; the disk keeps
//   what it had synced. The parts: core/server/replica_manager.h, core/server/replica_fetcher.h,
//   core/server/purgatory.h, core/cluster/metadata_cache.h, core/storage/hw_checkpoint.h.
//
// Events (EventSink, the broker's node): broker_registered {broker, host},
// broker_session_expired {broker}, controlled_shutdown {broker, attempt, error, remaining};
// failures the broker survives: replica_fetch_error {topic, partition, stage, error},
// isr_update_failed, hw_checkpoint_error, topic_config_error, partition_create_error,
// log_delete_error, log_manager_shutdown_error; plus the Partition's and the Controller's.
// - Consumer groups: FindCoordinator through the GroupLocator (creates __consumer_offsets when
//   missing), the group APIs through the GroupCoordinator (core/coordinator/group_coordinator.h),
//   which loads and unloads the groups of the __consumer_offsets partitions this broker leads after
//   each LeaderAndIsr and StopReplica (docs/group-coordinator.md).
// - InitProducerId through the ProducerIdManager (core/coordinator/producer_id_manager.h): ids from
// blocks
//   claimed in ZooKeeper. An ExtraRequestHandler may take any request first. Ownership:
// borrows every seam (they outlive it); owns its LogManager, partitions, controller, NetworkClient.
// Installs itself (through its NetworkClient) as the Transport's handler and as the Coordination's
// watcher and session listener. One thread.
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
#include "core/cluster/partition.h"
#include "core/config/server_config.h"
#include "core/controller/controller.h"
#include "core/env/env.h"
#include "core/protocol/transport.h"
#include "core/storage/log_manager.h"
#include "core/zk/coordination.h"

namespace ksim {

struct BrokerOptions {
  BrokerConfig config;  // REQUIRES: broker_id >= 0
  // The name peers and clients reach this broker by (registered as its host): the simulator's
  // node name, "broker-1".
  std::string host;
  TruncationPolicy truncation = TruncationPolicy::kHighWatermark;
  ControllerOptions controller;
};

// The seams a broker runs on. All borrowed; all must outlive the Broker.
struct BrokerSeams {
  Env& env;
  const Clock& clock;
  Timers& timers;
  Transport& transport;
  Coordination& zk;
  RandomSource& random;
  EventSink events;
  // The process exits at once (Kafka's Exit.halt / Runtime.halt): called, at most once per
  // Broker, when its log directory fails: a log goes offline after an I/O error, or a checkpoint
  // (high watermark, leader epoch, recovery point, log start offset), a producer snapshot or a
  // new replica's files cannot be written or read. Every broker has one log directory, so Kafka
  // halts on such an error in every release ksim follows: 0.10's ReplicaManager and
  // ReplicaFetcherThread halt on an IOException while appending or checkpointing the HW, and from
  // 1.0 (KIP-112) a broker whose every log directory failed halts too. The simulator crashes the
  // node, keeping what the OS page cache held. May be empty (tests): nothing happens.
  std::function<void(const Status&)> halt;
  // The process exits through its shutdown hook (Kafka's System.exit / Exit.exit with
  // KafkaServer.shutdown as the hook): called, at most once per Broker, when a follower finds
  // its leader's log shorter than its own and may not truncate (Kafka 0.10.0 to 2.0,
  // ReplicaFetcherThread.handleOffsetOutOfRange; docs/versions.md). The simulator runs
  // Shutdown() (the controlled shutdown first) and then ends the node as after a `shutdown`.
  // May be empty (tests): nothing happens.
  std::function<void(const Status&)> exit;
};

class MetadataCache;
class NetworkClient;
class ReplicaManager;

// A hook for requests a later component serves (a group coordinator, a transaction
// coordinator): return true when it took the request (and will call `respond`), false to let the
// broker answer. Runs before the broker's own dispatch.
using ExtraRequestHandler = std::function<bool(std::string_view from, Message& request,
                                               const std::function<void(Message)>& respond)>;

enum class BrokerState : uint8_t {
  kNotRunning,
  kStarting,  // logs loaded, registering in ZooKeeper
  kRunning,   // registered
  kPendingControlledShutdown,
  kShuttingDown,
  kShutDown,
};
std::string_view BrokerStateName(BrokerState state);

class Broker {
 public:
  Broker(BrokerOptions options, BrokerSeams seams);
  // Without a finished Shutdown() this is a crash.
  ~Broker();
  Broker(const Broker&) = delete;
  Broker& operator=(const Broker&) = delete;

  // Loads the logs (recovery) and starts registering. Fails when the logs cannot be loaded.
  // REQUIRES: called once.
  Status Startup();
  // Controlled shutdown (when enabled), then a clean stop; `done` runs when it is over (the
  // process may then end). REQUIRES: after Startup.
  void Shutdown(std::function<void()> done);

  BrokerId id() const;
  BrokerState state() const { return state_; }
  const BrokerOptions& options() const { return options_; }
  Controller& controller();
  const Controller& controller() const;
  // The partition, or null when this broker holds no replica of it.
  Partition* GetPartition(const TopicPartition& tp);
  // Every partition this broker holds a replica of, ordered by TopicPartition.
  const std::vector<const Partition*>& Partitions() const;
  // ReplicaManager's partitions_version and TakeChangedPartitions.
  uint64_t partitions_version() const;
  void TakeChangedPartitions(std::vector<const Partition*>& out);
  bool has_changed_partitions() const;
  LogManager& log_manager();
  // The parts, for tests, the simulator's checks and tools.
  const MetadataCache& metadata_cache() const;
  ReplicaManager& replica_manager();
  const NetworkClient& network_client() const;
  // See ExtraRequestHandler; replaces the previous one (empty: none).
  void set_extra_request_handler(ExtraRequestHandler handler);

 private:
  struct Impl;
  BrokerOptions options_;
  BrokerState state_ = BrokerState::kNotRunning;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ksim
