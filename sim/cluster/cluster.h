// Cluster: the run-time of one simulated Kafka cluster on a sim::World. It adds the nodes (`zk`
// running the ZooKeeperServer, `broker-<id>` for ids 1..N each with a VirtualDisk, and `admin`
// with its own ZooKeeperClient for topic administration, since kafka-topics.sh talks to ZooKeeper
// directly), builds each broker's configuration, and runs each broker process (core's Broker) on
// its node through the node's lifecycle (docs/simulation.md, "Cluster"):
//
// - One incarnation per process: a ZooKeeperClient (stream "zkclient/broker-<id>/<incarnation>"),
//   a SimTransport, a StreamRandomSource (stream "broker/broker-<id>/<incarnation>") and the
//   Broker, whose EventSink writes World::Trace under the broker's node name. The node's network
//   handler gives each delivery to the ZooKeeperClient first, else to the SimTransport, and each
//   disconnect notice to both.
// - kCrash (World::CrashNode, which already crashed the disk): the incarnation is destroyed
//   (Broker first), nothing more is written. kRestart: a new incarnation, Broker::Startup.
//   kShutdown: the incarnation is destroyed (the disk then syncs everything). ShutdownBroker runs
//   Broker::Shutdown first (the controlled shutdown needs the network) and calls
//   World::CleanShutdownNode only when it is done. Crashes and restarts may also be done through
//   the World directly: the Cluster follows the lifecycle events, not its own calls.
// - Configuration of broker <id>: its server.properties text when given (else every default),
//   then ksim's defaults for keys it does not set (offsets.topic.num.partitions = 3, see below),
//   then the cluster-wide overrides, then the broker's own, and last what the simulation fixes:
//   broker.id = <id>, log.dirs = /kafka-logs (on the virtual disk), zookeeper.connect = zk:2181,
//   host.name = the node name. The ZooKeeper session timeout proposed is the broker's
//   zookeeper.session.timeout.ms.
// - Index size: Kafka's own (log.index.size.max.bytes, 10 MiB). The VirtualDisk stores files
//   sparsely, so a preallocated index costs what its entries do (docs/virtual-disk.md).
// - Offsets topic: Kafka creates __consumer_offsets with offsets.topic.num.partitions (50)
//   partitions of 3 replicas; 150 logs of two mapped index files each are heavy in a simulation,
//   so the Cluster sets 3 partitions unless the configuration names the key.
// - Disk time: a broker's disk works one operation at a time, each taking the latency the
//   scenario's `disk` ranges draw for it (docs/virtual-disk.md). After every step the Cluster
//   takes each disk's busy time (VirtualDisk::TakeBusyTime) and adds it to when that disk is free
//   again: from the step's time, or from when it was to be free if later. Every message the
//   broker's process sends (its Kafka traffic, through its SimTransport) leaves the node when the
//   disk has done the work charged before it: the produce answer after the append, the next fetch
//   after the fetched records were written. Its ZooKeeper session's traffic does not wait (Kafka's
//   ZooKeeper client has its own thread). A crash drops the disk's queue with the process.
//
// Steps and checkers: RunFor/RunUntil run the event loop one event at a time (EventLoop::Step)
// and call every registered step hook after each event; the InvariantChecker
// (sim/check/invariant_checker.h) is registered by default and sees every live broker's partitions
// after every step, and every controller event (unclean elections) through the brokers' sinks.
//
// Ownership: the Cluster borrows the World (which must outlive it) and owns the ZooKeeperServer,
// the admin client, every incarnation and the checker. Destroying the Cluster destroys every
// broker as a crash would (nothing more is written). Single-threaded.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/admin/topic_admin.h"
#include "core/base/random.h"
#include "core/base/status.h"
#include "core/base/types.h"
#include "core/cluster/partition.h"
#include "core/config/server_config.h"
#include "core/protocol/messages.h"
#include "core/server/broker.h"
#include "core/zk/coordination.h"
#include "core/zk/paths.h"
#include "sim/check/invariant_checker.h"
#include "sim/world/sim_transport.h"
#include "sim/world/virtual_disk.h"
#include "sim/world/world.h"
#include "sim/world/zookeeper.h"
#include "sim/world/zookeeper_client.h"

namespace ksim::sim {

inline constexpr std::string_view kZooKeeperConnect = "zk:2181";
inline constexpr std::string_view kBrokerLogDir = "/kafka-logs";
// The Cluster's offsets.topic.num.partitions unless the configuration names it (see above).
inline constexpr int32_t kClusterOffsetsTopicNumPartitions = 3;

struct ClusterOptions {
  int32_t brokers = 3;  // ids 1..brokers
  // The release every broker runs: its keys and defaults (core/config/kafka_version.h).
  KafkaRelease kafka_version = kSeedKafkaRelease;
  // A scenario's cluster.config: every broker.
  ConfigOverrides config;
  // A scenario's cluster.broker_config: broker id -> its own overrides (applied after `config`).
  std::map<int32_t, ConfigOverrides> broker_config;
  // Broker id -> its server.properties text, the base of its configuration.
  std::map<int32_t, std::string> server_properties;
  ZooKeeperOptions zookeeper;
  // The admin tool's ZooKeeper session timeout.
  TimeUs admin_session_timeout_us = 30'000'000;
  // policy.election: overrides every topic's choice; empty: Kafka's own (the topic's
  // unclean.leader.election.enable).
  std::string election_policy;
  // policy.truncation.
  TruncationPolicy truncation = TruncationPolicy::kHighWatermark;
  // Every broker's disk. The invariant checker reads batch headers through the logs inside a
  // VirtualDisk::InspectionScope: no latency drawn, no fault met, nothing counted, so checking
  // changes nothing in the run, whatever the latencies.
  VirtualDiskOptions disk;
  // Registers an InvariantChecker as a step hook.
  bool check_invariants = true;
  // A broker whose start-up exits because its previous process's registration lives on (its
  // ZooKeeper session has not timed out) is started again this long after it went down, until a
  // start-up registers: the supervisor or operator that restarted it (docs/broker.md, "Startup").
  TimeUs start_retry_backoff_us = 1'000'000;
};

// One topic to create (kafka-topics.sh --create).
struct TopicSpec {
  std::string name;
  int32_t partitions = 1;
  int32_t replication_factor = 1;
  // Fixed placement (--replica-assignment); empty: Kafka's even spread over the live brokers.
  zk::ReplicaAssignment assignment;
  // Topic-level overrides (--config), written to /config/topics/<t>.
  std::map<std::string, std::string> config;
};

class Cluster {
 public:
  using StepHook = std::function<void()>;

  // Adds the nodes (`zk`, `broker-1..N`, `admin`) and builds every broker's configuration.
  // Nothing runs until Start(). Fails on a bad configuration (kInvalidConfig naming the broker)
  // or when a node name is taken.
  static Result<std::unique_ptr<Cluster>> Create(World& world, ClusterOptions options);
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // Starts every broker (log recovery, then registration) and connects the admin client.
  // REQUIRES: called once.
  Status Start();

  // --- Running --------------------------------------------------------------------------------
  // Runs events until `duration_us` of virtual time passed (Now() advances to the end), calling
  // the step hooks after each event.
  void RunFor(TimeUs duration_us);
  // Runs until `done()` holds (checked before the first event and after each) or `max_us` of
  // virtual time passed. Returns whether `done()` held.
  bool RunUntil(const std::function<bool()>& done, TimeUs max_us);
  // Called after every event RunFor/RunUntil run, in the order added.
  void AddStepHook(StepHook hook);

  // --- Faults (each traced by the World) ------------------------------------------------------
  Status CrashBroker(BrokerId id, const CrashOptions& options = {});
  Status RestartBroker(BrokerId id);
  // Broker::Shutdown (controlled shutdown, clean stop), then World::CleanShutdownNode. `done`
  // (optional) runs after the node went down; never if the node crashes first.
  // kInvalidArgument when the broker is not running or already shutting down.
  Status ShutdownBroker(BrokerId id, std::function<void()> done = nullptr);
  // Every message to and from the broker takes `extra_delay_us` longer for `duration_us`: a
  // follower whose fetches arrive later than replica.lag.time.max.ms lags out of the ISR.
  Status SlowBroker(BrokerId id, TimeUs extra_delay_us, TimeUs duration_us);
  // The broker's current ZooKeeper session expires now (a scenario's zk_expire).
  Status ExpireSession(BrokerId id);
  // The broker's configuration for its next start: `overrides` applied on top of what it has (a
  // scenario's broker `config` action; 0.10 brokers read their settings at start-up). The
  // running process keeps its own. kInvalidConfig for a bad setting (nothing changes then).
  Status UpdateBrokerConfig(BrokerId id, const ConfigOverrides& overrides);
  Status Partition(const std::vector<std::vector<std::string>>& sides, bool one_way = false) {
    return world_.Partition(sides, one_way);
  }
  void Heal() { world_.Heal(); }

  // --- Topics ---------------------------------------------------------------------------------
  // kafka-topics.sh --create through the admin node's TopicAdmin (core/admin/topic_admin.h): writes
  // the topic's config and assignment to ZooKeeper; `done` gets the outcome
  // (TOPIC_ALREADY_EXISTS, INVALID_REPLICATION_FACTOR when larger than the registered brokers,
  // INVALID_CONFIG, ZooKeeper errors).
  void CreateTopic(TopicSpec spec, std::function<void(Status)> done);
  // CreateTopic, then runs until every partition has a leader known to the active controller
  // (or `max_us` passed: kRequestTimedOut).
  Status CreateTopicAndWait(TopicSpec spec, TimeUs max_us = 30'000'000);

  // --- Inspection -----------------------------------------------------------------------------
  World& world() { return world_; }
  ZooKeeperServer& zookeeper() { return *zk_server_; }
  // The admin node's ZooKeeper session (topic administration).
  Coordination& admin() { return *admin_zk_; }
  // kafka-topics.sh over the admin session (topic defaults: broker 1's configuration).
  TopicAdmin& topic_admin() { return *topic_admin_; }
  const ClusterOptions& options() const { return options_; }
  // 1..N.
  std::vector<BrokerId> broker_ids() const;
  // The broker process running on broker-<id>, or null while its node is down.
  Broker* broker(BrokerId id);
  const BrokerConfig& broker_config(BrokerId id) const;
  // Live brokers whose controller is active: the one with the highest controller epoch, or
  // kNoBroker.
  BrokerId ActiveController();
  // The leader of `tp`: the active controller's view when there is one, else the live broker
  // leading it with the highest leader epoch; kNoBroker when none.
  BrokerId LeaderOf(const TopicPartition& tp);
  // The partition's state znode as ZooKeeper holds it (nullopt when missing or malformed).
  std::optional<zk::PartitionState> ZkPartitionState(const TopicPartition& tp) const;
  // Null when check_invariants is off.
  InvariantChecker* checker() { return checker_.get(); }
  // When and why broker `id`'s process last exited on its own (Kafka's Exit.exit: the fatal
  // error's message); message "" when it never did.
  struct ExitRecord {
    TimeUs t_us = 0;
    std::string message;
  };
  const ExitRecord& last_exit(BrokerId id) const { return slot(id).last_exit; }
  // True while broker `id`'s node is down after a start-up that failed on its previous
  // registration and is due to be started again (ClusterOptions::start_retry_backoff_us).
  bool start_retry_pending(BrokerId id) const { return slot(id).start_retry_of.has_value(); }

 private:
  struct Process;  // one incarnation of a broker process
  // What the checker last observed of one replica: a partial pass observes it again only when
  // this differs (ObserveBrokers).
  struct ObservedReplica {
    const ksim::Partition* partition = nullptr;  // identity only, never ordered
    ReplicaObservation seen;
    InvariantChecker::ReplicaTrack track;  // the checker's memory of the replica
  };
  struct BrokerSlot {
    BrokerId id{0};
    Node* node = nullptr;
    BrokerConfig config;
    std::unique_ptr<Process> process;
    std::vector<ObservedReplica> observed;  // in Partitions() order, as of the last pass
    ExitRecord last_exit;                   // see last_exit()
    // The incarnation whose start-up failed and is to be started again (start_retry_pending()).
    std::optional<uint64_t> start_retry_of;
    // The broker's partitions_version and process incarnation `observed` follows.
    uint64_t observed_version = 0;
    uint64_t observed_incarnation = 0;
    // When the node's disk has done the work charged to it so far (ChargeDisks).
    TimeUs disk_free_us = 0;
  };

  Cluster(World& world, ClusterOptions options);
  Status Build();
  Result<BrokerConfig> MakeConfig(int32_t id, const std::string& node_name) const;
  BrokerSlot& slot(BrokerId id);
  const BrokerSlot& slot(BrokerId id) const;
  void OnLifecycle(BrokerSlot& slot, NodeLifecycle event);
  // Creates the process objects on the slot's node and starts the broker.
  Status StartProcess(BrokerSlot& slot);
  void StopProcess(BrokerSlot& slot);
  // Starts node `name` again after options_.start_retry_backoff_us, unless it has been started
  // since its incarnation `incarnation` went down.
  void RetryStart(BrokerId id, uint64_t incarnation);
  void AfterStep();
  // Each broker disk's busy time since the last step, added to when it is free (see above).
  void ChargeDisks();
  // How long from now a message the slot's process sends waits for its disk: the work charged
  // before this step, then what this step has done on it so far.
  TimeUs DiskDelay(const BrokerSlot& slot) const;
  void ObserveBrokers();
  // A kLeaderElected event: the partition's replicas are observed again at the next pass.
  void NoteElection(const EventFields& fields);
  // One broker's replicas for the checker's pass: all of them (`all`), else those changed since
  // the last pass. The checker's tracks of replicas gone are dropped with their observations.
  void ObserveSlot(BrokerSlot& slot, bool all);
  // Observes replica `index` of the slot's partitions when its observation moved (or `always`).
  void ObserveReplicaAt(BrokerSlot& slot, const std::vector<const ksim::Partition*>& partitions,
                        size_t index, bool always);
  // Always-on check, after every max(kVerifyChangesEvery, the broker's replicas) partial
  // observations: every replica whose observation moved was in its change list (so that no
  // change escapes the checker).
  void VerifyNothingUnobserved(const BrokerSlot& slot,
                               const std::vector<const ksim::Partition*>& partitions) const;

  World& world_;
  ClusterOptions options_;
  Node* zk_node_ = nullptr;
  Node* admin_node_ = nullptr;
  std::unique_ptr<ZooKeeperServer> zk_server_;
  std::unique_ptr<ZooKeeperClient> admin_zk_;
  std::unique_ptr<StreamRandomSource> admin_random_;  // stream "admin/topics"
  std::unique_ptr<TopicAdmin> topic_admin_;
  std::vector<BrokerSlot> slots_;  // index id - 1
  std::unique_ptr<InvariantChecker> checker_;
  std::vector<StepHook> hooks_;
  bool started_ = false;
  // The checker's next pass observes every replica: a broker process came or went, a
  // controller event changed what the checker remembers, or events ran without a pass.
  bool full_pass_ = true;
  uint64_t events_at_last_pass_ = 0;
  static constexpr uint64_t kVerifyChangesEvery = 64;
  std::vector<const ksim::Partition*> changed_;           // reused by ObserveSlot
  std::vector<std::pair<size_t, bool>> changed_indexes_;  // reused by ObserveSlot
  std::vector<BrokerSlot*> observed_slots_;               // reused by ObserveBrokers
  // Partitions elected since the last pass: their replicas are observed again on every broker.
  std::vector<TopicPartition> reobserve_;
  uint64_t partial_observations_ = 0;  // of one broker, for VerifyNothingUnobserved
};

}  // namespace ksim::sim
