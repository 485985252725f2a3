// Controller: the cluster's controller as it runs inside every broker, active on one at a time
// (Kafka 0.10's KafkaController with ZookeeperLeaderElector, PartitionStateMachine,
// ReplicaStateMachine, TopicDeletionManager and ControllerBrokerRequestBatch). It reaches
// ZooKeeper through the Coordination seam and brokers through a ControllerChannel; it is sans-IO
// otherwise. docs/controller.md describes the procedures; in short:
//
// - Election: every broker's controller tries to create the ephemeral /controller
//   ({"version":1,"brokerid":..,"timestamp":..}) and watches it. The one that succeeds increments
//   /controller_epoch (created as 1 when missing; the write is conditional on the version read)
//   and becomes active. When /controller disappears (the active broker died or its session
//   expired) the others try again. A controller whose session expires resigns at once.
// - Failover (onControllerFailover): read live brokers (child watch on /brokers/ids), topics
//   (child watch on /brokers/topics, data watch on each), every partition's state znode; send
//   UpdateMetadata to every live broker and LeaderAndIsr for every partition to its live
//   replicas; elect leaders for partitions that have none live (the election policy); leave the
//   ISRs of the others as they are (a broker that died before the failover stays in them until
//   the leader drops it); watch /admin/delete_topics and /isr_change_notification.
// - New topic (a child of /brokers/topics appeared): InitialLeaderAndIsr (first live assigned
//   replica leads, ISR = live replicas), create each state znode, LeaderAndIsr with is_new to the
//   replicas, UpdateMetadata to all.
// - Broker failure (it left /brokers/ids): its partitions without a live leader are elected by the
//   policy (ElectionPolicy: clean, unclean, ...; offline when it gives none); where it was a
//   follower in the ISR it is removed from the ISR with the leader epoch incremented (Kafka 0.10's
//   removeReplicaFromIsr). The last ISR member stays recorded when every member is dead, except
//   before 1.1 under unclean election, where the ISR empties (docs/versions.md).
//   Every state write is conditional on the znode version the controller knows; a BADVERSION
//   re-reads the state and retries.
// - Broker startup (it joined /brokers/ids): UpdateMetadata to all; LeaderAndIsr for its
//   partitions so it becomes follower (or leader); offline partitions are elected again.
// - ISR change notifications (brokers write /isr_change_notification/isr_change_<n> after an ISR
//   change): re-read those partitions' states, UpdateMetadata to all, delete the notifications.
// - Controlled shutdown (a broker's ControlledShutdownRequest): for each partition it leads with
//   other replicas, SelectControlledShutdownLeader (new leader from the ISR minus it) and
//   LeaderAndIsr; where it follows, remove it from the ISR and send it StopReplica (no delete).
//   Answers with the partitions it still leads (retried by the broker).
// - Preferred replica elections (onPreferredReplicaElection with
//   PreferredReplicaPartitionLeaderSelector): the first assigned replica becomes leader again
//   (leader epoch + 1, the ISR unchanged) when it is live, not shutting down, in the ISR and not
//   already leading. Two triggers: /admin/preferred_replica_election (written by
//   kafka-preferred-replica-election.sh; data watch; read at failover too; deleted when done),
//   and, when auto.leader.rebalance.enable, a check 5 s after the failover and then every
//   leader.imbalance.check.interval.seconds (checkAndTriggerPartitionRebalance): each broker
//   whose share of the partitions it is preferred for but does not lead exceeds
//   leader.imbalance.per.broker.percentage has each of them elected, one at a time.
// - Topic deletion (children of /admin/delete_topics, when delete.topic.enable): StopReplica with
//   delete_partitions to every replica (replicas on dead brokers when they return), then delete
//   /brokers/topics/<t> (recursively), /config/topics/<t> and /admin/delete_topics/<t>. When
//   deletion is disabled the marker stays (Kafka 0.10 prints "Topic t is marked for deletion. Note:
//   This will have no impact if delete.topic.enable is not set to true.").
// - Every request carries the controller epoch; a broker refuses an older one with
//   STALE_CONTROLLER_EPOCH (that fencing is the broker's, core/server/broker.h).
//
// Events (EventSink, the broker's node): controller_elected {epoch}, controller_resigned,
// leader_elected {topic, partition, leader, epoch, isr, unclean, policy, reason},
// partition_offline {topic, partition, isr}, broker_joined/broker_left {broker},
// topic_deletion_started/topic_deleted {topic}, controller_zk_error {operation, path, error,
// message}.
//
// Work is serialized through an internal queue (Kafka 1.x's ControllerEventManager): one task at
// a time, each finishing its ZooKeeper steps before the next starts. A task is a sequence of
// steps (core/controller/steps.h) that carries a Status to its end. ZooKeeper errors: every call
// is issued again on CONNECTIONLOSS (RetryingCoordination, as Kafka's ZkClient); a missing znode
// is an answer where Kafka reads it so (readDataMaybeNull); every other error, and data that does
// not parse, is traced as controller_zk_error where Kafka logs it, and then stops the step (a
// failed failover resigns; a failed state change skips its partition). Before each state write
// always-on checks hold: the leader epoch grows, the ISR is a subset of the replicas (empty only
// with leader -1, before 1.1), the write is conditional on the version read. The election policy
// `longest-log` is refused (ValidateOptions): the controller does not know replicas' log ends.
//
// Ownership and threads: borrows every seam (they outlive it). Destroying it is a crash: its
// callbacks never run afterwards (it keeps a liveness token the callbacks check). One thread.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/clock.h"
#include "core/base/events.h"
#include "core/base/random_source.h"
#include "core/base/status.h"
#include "core/base/types.h"
#include "core/cluster/election_policy.h"
#include "core/config/server_config.h"
#include "core/controller/steps.h"
#include "core/protocol/messages.h"
#include "core/zk/coordination.h"
#include "core/zk/paths.h"
#include "core/zk/retrying_coordination.h"

namespace ksim {

// How the controller reaches brokers (Kafka's ControllerChannelManager): one queue per broker,
// requests sent one at a time in order, each retried until answered or the broker is removed.
// Requests to the controller's own broker go through it too. Implemented in
// core/controller/channel.h over the broker's NetworkClient.
class ControllerChannel {
 public:
  using ResponseCallback = std::function<void(const Message& response)>;
  virtual ~ControllerChannel() = default;
  // Starts a queue for `broker`, reached at `endpoint` (its registration).
  virtual void AddBroker(BrokerId broker, const BrokerEndpoint& endpoint) = 0;
  // Drops the queue and everything in it (the broker died). No-op when unknown.
  virtual void RemoveBroker(BrokerId broker) = 0;
  // Queues `request` (LeaderAndIsr, UpdateMetadata or StopReplica) for `broker`; `done` (may be
  // empty) gets the response. Dropped when the broker has no queue.
  virtual void Send(BrokerId broker, Message request, ResponseCallback done) = 0;
};

struct ControllerOptions {
  // Overrides every topic's choice (a scenario's policy.election); empty: Kafka's own, from the
  // topic's unclean.leader.election.enable.
  std::string election_policy;
};

// A partition as the active controller knows it (Kafka's ControllerContext).
struct ControllerPartitionState {
  std::vector<BrokerId> assigned_replicas;
  zk::PartitionState state;  // leader (kNoLeader when offline), epoch, ISR, controller epoch
  int32_t zk_version = 0;
};

class Controller {
 public:
  // REQUIRES: config.broker_id >= 0; ValidateOptions(options).ok().
  Controller(const BrokerConfig& config, ControllerOptions options, Coordination& zk,
             ControllerChannel& channel, Timers& timers, const Clock& clock, RandomSource& random,
             EventSink events);
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // kInvalidArgument when options.election_policy is neither empty nor a policy name, or is
  // `longest-log`: that policy needs every live replica's log end offset, which Kafka's
  // controller does not know (docs/controller.md says why the controller does not query it).
  static Status ValidateOptions(const ControllerOptions& options);

  // Watches /controller and tries to become controller. Called by the broker once registered.
  void Startup();
  // Clean shutdown: resigns (the broker's session close removes /controller).
  void Shutdown();
  // The broker forwards every watch event and every session event of its ZooKeeper session.
  void OnWatchEvent(const WatchEvent& event);
  void OnSessionEvent(SessionEvent event);

  // A ControlledShutdownRequest reached this broker. NOT_CONTROLLER when not active.
  void HandleControlledShutdown(const ControlledShutdownRequest& request,
                                std::function<void(ControlledShutdownResponse)> done);

  bool is_active() const { return active_; }
  ControllerEpoch epoch() const { return epoch_; }
  // The controller id last read from /controller (kNoBroker when none).
  BrokerId known_controller() const { return known_controller_; }
  // While active: live brokers and every partition's state.
  const std::set<BrokerId>& live_brokers() const { return live_brokers_; }
  // While active: the czxid of `broker`'s /brokers/ids registration this controller read when
  // it saw the broker join (nullopt: not live here). Before Kafka 2.2 the controller compares
  // only ids, so a broker that died and registered again between two reads keeps the old one.
  std::optional<Zxid> known_registration(BrokerId broker) const {
    auto it = registrations_.find(broker);
    if (it == registrations_.end()) return std::nullopt;
    return it->second;
  }
  const std::map<TopicPartition, ControllerPartitionState>& partitions() const {
    return partitions_;
  }
  // Leader changes written while active: failover elections (clean and unclean) and controlled
  // shutdown moves; a new partition's first leader is not counted. For traces and tests.
  int64_t elections() const { return elections_; }
  int64_t unclean_elections() const { return unclean_elections_; }

 private:
  // One unit of the controller's work (Kafka 1.x's ControllerEvent): `run` is a Step (steps.h)
  // whose StepDone the queue gives it; `cancel` (may be empty) is told when the controller
  // resigns before or while it runs (e.g. to answer a ControlledShutdown).
  struct Task {
    std::string name;
    Step run;
    std::function<void()> cancel;
  };
  // What one step sends when it is over (Kafka's ControllerBrokerRequestBatch).
  struct Batch {
    std::map<BrokerId, std::map<TopicPartition, bool>> leader_and_isr;  // tp -> is_new
    std::map<BrokerId, std::set<TopicPartition>> stop_replica;          // delete_partitions=false
    // UpdateMetadata to every live broker (ControllerBrokerRequestBatch
    // .addUpdateMetadataRequestForBrokers): naming every partition (`update_metadata_all`, Kafka's
    // sendUpdateMetadataRequest without partitions: failover, broker startup, a broker failure
    // that left no partition leaderless) or the partitions named here (a LeaderAndIsr adds its
    // own, an ISR change notification the ones it names); the partitions of topics being deleted
    // are always named, with leader -2.
    bool update_metadata = false;
    bool update_metadata_all = false;
    std::set<TopicPartition> update_metadata_partitions;
  };
  // Why a partition's state is being written (the leader_elected event's "reason").
  enum class Reason : uint8_t {
    kNewPartition,
    kControllerFailover,
    kBrokerFailure,
    kBrokerStartup,
    kControlledShutdown,
    kAutoRebalance,             // the leader imbalance check
    kPreferredReplicaElection,  // /admin/preferred_replica_election
  };
  struct TopicDeletion {
    std::set<BrokerId> awaiting;  // replicas that have not acknowledged StopReplica(delete)
    std::set<BrokerId> sent;      // replicas a StopReplica(delete) was sent to (live ones)
  };
  // onControllerFailover: the partition-rebalance-thread runs first 5 s after the failover.
  static constexpr int64_t kFirstRebalanceCheckDelayMs = 5000;
  // The operation names of controller_zk_error (ZooKeeper's own).
  static constexpr std::string_view kOpCreate = "create";
  static constexpr std::string_view kOpDelete = "delete";
  static constexpr std::string_view kOpExists = "exists";
  static constexpr std::string_view kOpGetChildren = "get_children";
  static constexpr std::string_view kOpGetData = "get_data";
  static constexpr std::string_view kOpSetData = "set_data";

  // ---- controller.cc: queue, liveness, election, failover, requests;
  // ---- listeners.cc: OnWatchEvent and the Handle*Change tasks.
  // Wraps `f` so that it runs only while this controller lives and has not resigned since.
  template <class F>
  auto Guarded(F f) {
    return
        [this, token = token_, generation = generation_, f = std::move(f)](auto&&... args) mutable {
          if (!*token || generation != generation_) return;
          f(std::forward<decltype(args)>(args)...);
        };
  }
  void Enqueue(std::string name, Step run, std::function<void()> cancel = {});
  void SchedulePump();
  void Pump();
  void OnTaskDone(Status status);
  // Adds `run` to the queue, to run only while active.
  void EnqueueActive(std::string name, Step run);
  void EnqueueElection();
  void Elect(StepDone done);
  void ReadController(StepDone done);
  void WatchController();
  void CheckStillController(StepDone done);
  void OnControllerRegistered(StepDone done);
  void IncrementControllerEpoch(StepDone done);
  void CreateControllerEpoch(StepDone done);
  void OnControllerFailover(StepDone done);
  void Resign();
  void ResignAndReelect();

  // Kafka logs a failed ZooKeeper call (or data it cannot parse) and moves on, or resigns where
  // it says so; ksim traces it: controller_zk_error {operation, path, error (the code's name),
  // message}. Returns `error`, for the step to carry.
  Status ZkFailed(std::string_view operation, const std::string& path, Status error);
  // Reads for a step. `read` gets the znode's data (nullopt when it does not exist: ZkUtils.
  // readDataMaybeNull), or the children's names (nullopt when the parent does not exist); an error
  // of the call is traced and ends the step, otherwise `done` gets Ok.
  void ReadZnode(std::string path, bool watch, std::function<void(std::optional<ZnodeData>)> read,
                 StepDone done);
  // The callback of such a read.
  template <class T>
  auto ReadAnswer(std::string_view operation, std::string path,
                  std::function<void(std::optional<T>)> read, StepDone done) {
    return Guarded([this, operation, path = std::move(path), read = std::move(read),
                    done = std::move(done)](Result<T> answer) {
      if (answer.ok()) {
        read(std::move(*answer));
      } else if (answer.status() == Errc::kNoNode) {
        read(std::nullopt);
      } else {
        done(ZkFailed(operation, path, answer.status()));
        return;
      }
      done(Status::Ok());
    });
  }
  void ReadChildren(std::string path, bool watch,
                    std::function<void(std::optional<std::vector<std::string>>)> read,
                    StepDone done);
  // Deletes `path` (any version); a znode already gone is fine (ZkUtils.deletePath). `done` may be
  // empty (fire and forget: an error is still traced).
  void DeleteZnode(std::string path, StepDone done);

  void EnsureWatchedPaths(StepDone done);
  // Live brokers at failover: their ids, their registrations, a channel queue for each.
  void LoadLiveBrokers(StepDone done);
  // The children of /brokers/ids (child watch) into `ids`.
  void ReadBrokerIds(std::set<BrokerId>* ids, StepDone done);
  // Reads the registrations of `ids` into endpoints_; `registered` gets those still registered.
  void ReadRegistrations(const std::set<BrokerId>& ids, std::set<BrokerId>* registered,
                         StepDone done);
  void LoadTopics(StepDone done);
  void LoadTopic(const std::string& topic, StepDone done);
  void LoadPartition(const TopicPartition& tp, StepDone done);
  void ReadTopicConfig(const std::string& topic, StepDone done);
  void SendFailoverRequests();
  void HandleBrokerChange(StepDone done);
  void ApplyBrokerChange(const std::set<BrokerId>& dead, const std::set<BrokerId>& started);
  void OnBrokersChanged(const std::set<BrokerId>& dead, const std::set<BrokerId>& started,
                        StepDone done);
  void HandleTopicChange(StepDone done);
  void ForgetTopic(const std::string& topic);
  void HandlePartitionModification(const std::string& topic, StepDone done);
  std::vector<BrokerEndpoint> LiveBrokerEndpoints() const;
  void SendBatch();
  void SendLeaderAndIsr(BrokerId broker, const std::map<TopicPartition, bool>& partitions);
  // Asks the batch for an UpdateMetadata naming every partition.
  void UpdateMetadataForAll();
  void SendUpdateMetadata(bool all, const std::set<TopicPartition>& named);

  // ---- partition_state_machine.cc: the partition and replica state machines.
  std::set<BrokerId> ElectableBrokers() const;  // live and not shutting down
  const ElectionPolicy& PolicyFor(const std::string& topic);
  // Whether the ISR of `topic`'s partitions keeps its last member when every member is dead
  // (KafkaController.removeReplicaFromIsr): before 1.1 only when unclean election is off, i.e.
  // the policy in effect is not `unclean`; from 1.1 (KAFKA-5642) always.
  bool KeepsLastIsrMember(const std::string& topic);
  ElectionInput MakeInput(const TopicPartition& tp, const ControllerPartitionState& p);
  // Writes the partition's next state, conditional on the version read (BADVERSION re-reads the
  // znode and computes again). `change` returns nullopt when nothing is to be written. `done` gets
  // true when written, false when there was nothing to write, or the error (traced) that stopped
  // it.
  using StateChange =
      std::function<std::optional<zk::PartitionState>(const ControllerPartitionState&)>;
  using StateWritten = std::function<void(Result<bool> written)>;
  void UpdatePartitionState(const TopicPartition& tp, StateChange change, StateWritten done,
                            int attempt = 0);
  // The always-on checks before a state write (docs/controller.md, "Checks").
  void CheckStateWrite(const ControllerPartitionState& read, const zk::PartitionState& next) const;
  void ReadPartitionState(const TopicPartition& tp, std::function<void(Status)> done);
  // Creates the state znode of a partition that has none (NewPartition -> OnlinePartition).
  void InitializePartition(const TopicPartition& tp, StepDone done);
  void OnPartitionExists(const TopicPartition& tp, const zk::PartitionState& ours, StepDone done);
  // Elects a leader for a partition without a live leader (OfflinePartition -> OnlinePartition),
  // and removes `failed` brokers from its ISR (OnlineReplica -> OfflineReplica: the brokers that
  // died in this broker change; none at a failover or a startup).
  void ReconcilePartition(const TopicPartition& tp, Reason reason, const std::set<BrokerId>& failed,
                          StepDone done);
  // Initializes or reconciles each of `partitions` (skipping topics being deleted).
  void ReconcilePartitions(const std::vector<TopicPartition>& partitions, Reason reason,
                           StepDone done, const std::set<BrokerId>& failed = {});
  void ReconcileAll(Reason reason, StepDone done, const std::set<BrokerId>& failed = {});
  void AddLeaderAndIsr(const TopicPartition& tp, const std::vector<BrokerId>& recipients,
                       bool is_new);
  void AddLeaderAndIsrToLiveReplicas(const TopicPartition& tp, bool is_new);
  void HandleIsrChangeNotifications(StepDone done);
  void ReadIsrChangeNotification(const std::string& path, std::set<TopicPartition>* changed,
                                 StepDone done);
  void RefreshPartitionState(const TopicPartition& tp, StepDone done);
  void ControlledShutdown(const ControlledShutdownRequest& request,
                          std::function<void(ControlledShutdownResponse)> respond, StepDone done);
  void MoveLeadership(const TopicPartition& tp, StepDone done);
  void RemoveFromIsr(const TopicPartition& tp, BrokerId broker, StepDone done);
  bool BeingDeleted(const std::string& topic) const { return deletions_.contains(topic); }
  void HandleDeleteTopics(StepDone done);
  void StartTopicDeletion(const std::string& topic);
  void SendDeleteReplicas(const std::string& topic, BrokerId broker);
  void OnReplicaDeleted(const std::string& topic, BrokerId broker, StepDone done);
  void CompleteTopicDeletion(const std::string& topic, StepDone done);
  void DeleteRecursive(const std::string& path, StepDone done);
  // ---- preferred_replica.cc: preferred replica elections and the leader imbalance check.
  // Starts the periodic check (onControllerFailover's partition-rebalance-thread), first after
  // `delay`, then every leader.imbalance.check.interval.seconds from then (fixed rate).
  void ScheduleRebalanceCheck(TimeUs delay);
  // checkAndTriggerPartitionRebalance.
  void CheckLeaderImbalance(StepDone done);
  // PreferredReplicaElectionListener (and maybeTriggerPreferredReplicaElection at failover):
  // watch /admin/preferred_replica_election, and when it holds partitions, elect them and delete
  // it.
  void HandlePreferredReplicaElection(StepDone done);
  // onPreferredReplicaElection: each of `partitions` (PreferredReplicaPartitionLeaderSelector),
  // one batch of requests at the end.
  void ElectPreferredReplicas(const std::set<TopicPartition>& partitions, Reason reason,
                              StepDone done);
  void ElectPreferredReplica(const TopicPartition& tp, Reason reason, StepDone done);

  void EmitElected(const TopicPartition& tp, const ControllerPartitionState& p,
                   const ElectionResult& result, std::string_view policy, Reason reason);
  void EmitOffline(const TopicPartition& tp, const std::vector<BrokerId>& isr);

  // Seams and settings.
  BrokerConfig config_;
  ControllerOptions options_;
  BrokerId id_;
  RetryingCoordination zk_;  // every call retried on CONNECTIONLOSS, as ZkClient does
  ControllerChannel& channel_;
  Timers& timers_;
  const Clock& clock_;
  RandomSource& random_;
  EventSink events_;
  std::map<std::string, std::unique_ptr<ElectionPolicy>> policies_;

  // Liveness: false once destroyed; `generation_` grows on every resignation so that callbacks
  // of an abandoned step are dropped.
  std::shared_ptr<bool> token_ = std::make_shared<bool>(true);
  uint64_t generation_ = 0;
  bool started_ = false;
  ZkSessionId session_ = kNoSession;

  // The event queue (ControllerEventManager): one task runs at a time.
  std::deque<Task> queue_;
  std::optional<Task> running_;
  TimerId pump_timer_ = 0;

  // Controller context (valid while active).
  bool active_ = false;
  ControllerEpoch epoch_{0};
  int32_t epoch_zk_version_ = 0;
  BrokerId known_controller_ = kNoBroker;
  std::set<BrokerId> live_brokers_;
  std::map<BrokerId, BrokerEndpoint> endpoints_;
  // The czxid of each live broker's registration as last read: a broker that registered again
  // in between (KAFKA-1120) has a newer one in ZooKeeper.
  std::map<BrokerId, Zxid> registrations_;
  std::set<BrokerId> shutting_down_;
  std::map<std::string, zk::ReplicaAssignment> topics_;
  std::map<std::string, bool> topic_unclean_;  // unclean.leader.election.enable per topic
  std::map<TopicPartition, ControllerPartitionState> partitions_;
  std::set<TopicPartition> uninitialized_;  // assigned but no state znode yet
  // wait-for-last-isr: the ISR member kept when every ISR member died.
  std::map<TopicPartition, BrokerId> last_isr_member_;
  std::map<std::string, TopicDeletion> deletions_;
  // partitionsUndergoingPreferredReplicaElection: those of /admin/preferred_replica_election
  // being elected now.
  std::set<TopicPartition> preferred_elections_;
  TimerId rebalance_timer_ = 0;  // the next leader imbalance check (0: none)
  Batch batch_;
  int64_t elections_ = 0;
  int64_t unclean_elections_ = 0;
};

}  // namespace ksim
