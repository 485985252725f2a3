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
//   delete_partitions to every replica, then delete /brokers/topics/<t> (recursively) and
//   /admin/delete_topics/<t>. When deletion is disabled the marker stays (Kafka 0.10 prints
//   "Topic t is marked for deletion. Note: This will have no impact if delete.topic.enable is not
//   set to true.").
// - Every request carries the controller epoch; a broker refuses an older one with
//   STALE_CONTROLLER_EPOCH (that fencing is the broker's, core/broker.h).
//
// Events (EventSink, the broker's node): controller_elected {epoch}, controller_resigned,
// leader_elected {topic, partition, leader, epoch, isr, unclean, policy, reason},
// partition_offline {topic, partition, isr}, broker_joined/broker_left {broker}.
//
// Ownership and threads: borrows every seam (they outlive it). Destroying it is a crash: its
// callbacks never run afterwards (it keeps a liveness token the callbacks check). One thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/coordination.h"
#include "core/election_policy.h"
#include "core/events.h"
#include "core/protocol.h"
#include "core/random_source.h"
#include "core/server_config.h"
#include "core/status.h"
#include "core/types.h"
#include "core/zk_paths.h"

namespace ksim {

// How the controller reaches brokers (Kafka's ControllerChannelManager): one queue per broker,
// requests sent one at a time in order, each retried until answered or the broker is removed.
// Requests to the controller's own broker go through it too. Implemented in
// core/controller_channel.h over the broker's NetworkClient.
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
  // REQUIRES: config.broker_id >= 0; options.election_policy empty or a valid policy name.
  Controller(const BrokerConfig& config, ControllerOptions options, Coordination& zk,
             ControllerChannel& channel, Timers& timers, const Clock& clock, RandomSource& random,
             EventSink events);
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

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
  // Elections run while active (clean and unclean), for traces and tests.
  int64_t elections() const { return elections_; }
  int64_t unclean_elections() const { return unclean_elections_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool active_ = false;
  ControllerEpoch epoch_{0};
  BrokerId known_controller_ = kNoBroker;
  std::set<BrokerId> live_brokers_;
  std::map<TopicPartition, ControllerPartitionState> partitions_;
  int64_t elections_ = 0;
  int64_t unclean_elections_ = 0;
};

}  // namespace ksim
