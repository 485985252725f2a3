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
//   replicas; elect leaders for partitions that have none live (the election policy); watch
//   /admin/delete_topics and /isr_change_notification.
// - New topic (a child of /brokers/topics appeared): InitialLeaderAndIsr (first live assigned
//   replica leads, ISR = live replicas), create each state znode, LeaderAndIsr with is_new to the
//   replicas, UpdateMetadata to all.
// - Broker failure (it left /brokers/ids): its partitions without a live leader are elected by the
//   policy (ElectionPolicy: clean, unclean, ...; offline when it gives none); where it was a
//   follower in the ISR it is removed from the ISR with the leader epoch incremented (Kafka 0.10's
//   removeReplicaFromIsr), except that the last ISR member stays recorded (the ISR never empties).
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
// topic_deletion_started/topic_deleted {topic}.
//
// Work is serialized through an internal queue (Kafka 1.x's ControllerEventManager): one task at
// a time, each finishing its ZooKeeper steps before the next starts. The election policy
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
#include "core/protocol/messages.h"
#include "core/zk/coordination.h"
#include "core/zk/paths.h"

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
  const std::map<TopicPartition, ControllerPartitionState>& partitions() const {
    return partitions_;
  }
  // Leader changes written while active: failover elections (clean and unclean) and controlled
  // shutdown moves; a new partition's first leader is not counted. For traces and tests.
  int64_t elections() const { return elections_; }
  int64_t unclean_elections() const { return unclean_elections_; }

 private:
  using Done = std::function<void()>;
  // One unit of the controller's work (Kafka 1.x's ControllerEvent): `run` gets the callback it
  // must call when its last ZooKeeper step is over; `cancel` (may be empty) is told when the
  // controller resigns before or while it runs (e.g. to answer a ControlledShutdown).
  struct Task {
    std::string name;
    std::function<void(Done)> run;
    std::function<void()> cancel;
  };
  // What one step sends when it is over (Kafka's ControllerBrokerRequestBatch).
  struct Batch {
    std::map<BrokerId, std::map<TopicPartition, bool>> leader_and_isr;  // tp -> is_new
    std::map<BrokerId, std::set<TopicPartition>> stop_replica;          // delete_partitions=false
    bool update_metadata = false;
  };
  // Why a partition's state is being written (the leader_elected event's "reason").
  enum class Reason : uint8_t {
    kNewPartition,
    kControllerFailover,
    kBrokerFailure,
    kBrokerStartup,
    kControlledShutdown,
  };
  struct TopicDeletion {
    std::set<BrokerId> awaiting;  // replicas that have not acknowledged StopReplica(delete)
    std::set<BrokerId> sent;      // replicas a StopReplica(delete) was sent to (live ones)
  };
  // Runs `done` once every Add() was matched by an Arrive() and the creator's own Arrive() came
  // (a fan-out of ZooKeeper calls in one step).
  class Join {
   public:
    explicit Join(Done done) : done_(std::move(done)) {}
    void Add() { ++pending_; }
    void Arrive() {
      if (--pending_ > 0) return;
      Done done = std::move(done_);
      done();
    }

   private:
    int pending_ = 1;
    Done done_;
  };

  // ---- controller.cc: queue, liveness, election, failover, requests;
  // ---- controller_listeners.cc: OnWatchEvent and the Handle*Change tasks.
  // Wraps `f` so that it runs only while this controller lives and has not resigned since.
  template <class F>
  auto Guarded(F f) {
    return
        [this, token = token_, generation = generation_, f = std::move(f)](auto&&... args) mutable {
          if (!*token || generation != generation_) return;
          f(std::forward<decltype(args)>(args)...);
        };
  }
  void Enqueue(std::string name, std::function<void(Done)> run, std::function<void()> cancel = {});
  void SchedulePump();
  void Pump();
  // Adds `run` to the queue, to run only while active.
  void EnqueueActive(std::string name, std::function<void(Done)> run);
  void Elect(Done done);
  void CheckStillController(Done done);
  void OnControllerRegistered(Done done);
  void IncrementControllerEpoch(std::function<void(Result<ControllerEpoch>)> done);
  void OnControllerFailover(Done done);
  void Resign();
  void ResignAndReelect();
  void LoadLiveBrokers(std::function<void(std::set<BrokerId> ids)> done);
  // Reads the registrations of `ids` into endpoints_; `done` gets those still registered.
  void ReadRegistrations(const std::set<BrokerId>& ids,
                         std::function<void(std::set<BrokerId> registered)> done);
  void LoadTopic(const std::string& topic, Done done);
  void LoadPartition(const TopicPartition& tp, Done done);
  void ReadTopicConfig(const std::string& topic, Done done);
  void HandleBrokerChange(Done done);
  void HandleTopicChange(Done done);
  void HandlePartitionModification(const std::string& topic, Done done);
  std::vector<BrokerEndpoint> LiveBrokerEndpoints() const;
  void SendBatch();
  void SendLeaderAndIsr(BrokerId broker, const std::map<TopicPartition, bool>& partitions);
  void SendUpdateMetadataToAll();

  // ---- controller_partitions.cc: the partition and replica state machines.
  std::set<BrokerId> ElectableBrokers() const;  // live and not shutting down
  const ElectionPolicy& PolicyFor(const std::string& topic);
  ElectionInput MakeInput(const TopicPartition& tp, const ControllerPartitionState& p);
  // Writes the partition's next state (conditional on the known version; BADVERSION re-reads the
  // znode and computes again). `change` returns nullopt when nothing is to be written.
  using StateChange =
      std::function<std::optional<zk::PartitionState>(const ControllerPartitionState&)>;
  void UpdatePartitionState(const TopicPartition& tp, StateChange change,
                            std::function<void(bool written)> done, int attempt = 0);
  void ReadPartitionState(const TopicPartition& tp, std::function<void(Status)> done);
  // Creates the state znode of a partition that has none (NewPartition -> OnlinePartition).
  void InitializePartition(const TopicPartition& tp, Done done);
  // Elects a leader for a partition without a live leader, or removes dead brokers from its ISR
  // (OfflinePartition -> OnlinePartition, OnlineReplica -> OfflineReplica).
  void ReconcilePartition(const TopicPartition& tp, Reason reason, Done done);
  // Initializes or reconciles each of `partitions` (skipping topics being deleted).
  void ReconcilePartitions(const std::vector<TopicPartition>& partitions, Reason reason, Done done);
  void ReconcileAll(Reason reason, Done done);
  void AddLeaderAndIsr(const TopicPartition& tp, const std::vector<BrokerId>& recipients,
                       bool is_new);
  void AddLeaderAndIsrToLiveReplicas(const TopicPartition& tp, bool is_new);
  void HandleIsrChangeNotifications(Done done);
  void ControlledShutdown(const ControlledShutdownRequest& request,
                          std::function<void(ControlledShutdownResponse)> respond, Done done);
  bool BeingDeleted(const std::string& topic) const { return deletions_.contains(topic); }
  void HandleDeleteTopics(Done done);
  void StartTopicDeletion(const std::string& topic);
  void SendDeleteReplicas(const std::string& topic, BrokerId broker);
  void OnReplicaDeleted(const std::string& topic, BrokerId broker, Done done);
  void CompleteTopicDeletion(const std::string& topic, Done done);
  void DeleteRecursive(const std::string& path, std::function<void(Status)> done);
  void EmitElected(const TopicPartition& tp, const ControllerPartitionState& p,
                   const ElectionResult& result, std::string_view policy, Reason reason);

  // Seams and settings.
  BrokerConfig config_;
  ControllerOptions options_;
  BrokerId id_;
  Coordination& zk_;
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
  std::set<BrokerId> shutting_down_;
  std::map<std::string, zk::ReplicaAssignment> topics_;
  std::map<std::string, bool> topic_unclean_;  // unclean.leader.election.enable per topic
  std::map<TopicPartition, ControllerPartitionState> partitions_;
  std::set<TopicPartition> uninitialized_;  // assigned but no state znode yet
  // wait-for-last-isr: the ISR member kept when every ISR member died.
  std::map<TopicPartition, BrokerId> last_isr_member_;
  std::map<std::string, TopicDeletion> deletions_;
  Batch batch_;
  int64_t elections_ = 0;
  int64_t unclean_elections_ = 0;
};

}  // namespace ksim
