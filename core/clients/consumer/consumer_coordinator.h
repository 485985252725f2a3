// ConsumerCoordinator: the client side of Kafka's group protocol (AbstractCoordinator +
// ConsumerCoordinator) for one consumer, as the consumer's release (ConsumerConfig::release) had
// it:
//
//   unjoined --(coordinator known, rejoin asked)--> [commit if auto commit] revoke
//            --JoinGroup--> joining --SyncGroup--> stable --heartbeats every interval-->
//   stable --(REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID)--> unjoined
//
// - FindCoordinator goes to any broker, again after retry.backoff.ms while the answer is
//   COORDINATOR_NOT_AVAILABLE or lost. NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE and a disconnect
//   from the coordinator forget it (coordinatorDead) and a new lookup starts.
// - JoinGroup carries one protocol per configured assignor with the subscription; the leader
//   (leader_id == member_id) runs the chosen assignor over the members' subscriptions with the
//   partition counts from metadata (waiting for them) and sends the assignment in SyncGroup.
// - ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID reset the member id and generation.
// - Offsets: OffsetFetch for the positions of new partitions; OffsetCommit with the generation and
//   member id (generation -1 and no member id for a manually assigned consumer).
//
// The rejoin itself happens only from Step (the consumer's Poll), as in Kafka, where poll() runs
// ensureActiveGroup; commits run on their own. Heartbeats run on their own from 0.10.1 (KIP-62's
// HeartbeatThread); before, a beat that falls due while the application is not in Poll waits for
// its next Poll (0.10.0's HeartbeatTask was a DelayedTask, run only inside poll()), and the
// JoinGroup's rebalance timeout is the session timeout (v0) instead of max.poll.interval.ms.
// The auto commit before a rebalance (onJoinPrepare) and at Close is Kafka's commitOffsetsSync:
// retried after retry.backoff.ms while the error is retriable, without bound before 0.10.2, then
// for the rebalance timeout and min(30 s, request.timeout.ms) (KIP-102).
//
// Ownership: borrows the network, fetcher, timers, clock and config. One thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/events.h"
#include "core/base/timer_group.h"
#include "core/clients/consumer/assignors.h"
#include "core/clients/consumer/consumer.h"
#include "core/clients/consumer/consumer_network.h"
#include "core/clients/consumer/fetcher.h"

namespace ksim {

class ConsumerCoordinator {
 public:
  // `polling` says whether the application is in Poll or waits for a Commit (heartbeats before
  // 0.10.1 wait for that).
  ConsumerCoordinator(const ConsumerConfig& config, ConsumerNetwork& network, Fetcher& fetcher,
                      Timers& timers, const Clock& clock, EventSink events,
                      std::function<void()> on_progress, std::function<bool()> polling);
  ConsumerCoordinator(const ConsumerCoordinator&) = delete;
  ConsumerCoordinator& operator=(const ConsumerCoordinator&) = delete;

  void Subscribe(std::vector<std::string> topics, RebalanceListener listener);
  bool subscribed() const { return !topics_.empty(); }
  // Drives discovery and, when `may_rejoin`, the rebalance (the consumer is in Poll).
  void Step(bool may_rejoin);
  // True when the group assignment is settled (always for a manual assignment).
  bool stable() const { return !subscribed() || state_ == State::kStable; }

  // Looks up the committed offsets of the fetcher's partitions needing a position.
  void FetchCommittedOffsets();
  // Commits `offsets`; `done` hears the first error (kNone: all committed). Retried while the
  // coordinator is unknown or moving, until request.timeout.ms passed.
  void Commit(std::map<TopicPartition, Offset> offsets, std::function<void(Status)> done);
  // Kafka's maybeAutoCommitOffsetsAsync.
  void MaybeAutoCommit();
  // Commits (auto commit on; retried as the release did), sends LeaveGroup, then `done`.
  void Close(std::function<void()> done);

  // The network lost its connection to `peer` (the coordinator, maybe).
  void OnDisconnect(std::string_view peer);

  const std::string& member_id() const { return member_id_; }
  int32_t generation() const { return generation_; }

 private:
  enum class State : uint8_t { kUnjoined, kPreparing, kJoining, kSyncing, kStable };
  struct PendingCommit {
    std::map<TopicPartition, Offset> offsets;
    std::function<void(Status)> done;
    TimeUs deadline_us = 0;
  };

  void EnsureCoordinator();
  void CoordinatorDead();
  bool CoordinatorError(Errc error) const;
  void StartRejoin();
  void SendJoinGroup();
  void OnJoinGroup(Result<Message> response);
  void Assign(const JoinGroupResponse& joined);
  void SendSyncGroup(std::vector<GroupAssignment> assignments);
  void OnSyncGroup(Result<Message> response);
  void ScheduleHeartbeat();
  void HeartbeatTask();
  void SendHeartbeat();
  // KIP-62 (0.10.1): heartbeats from a background thread, max.poll.interval.ms as the rebalance
  // timeout.
  bool BackgroundHeartbeat() const { return config_.release >= KafkaRelease::k0_10_1; }
  int32_t RebalanceTimeoutMs() const;
  // When commitOffsetsSync gives up on a commit started now that may take `bound_ms` from 0.10.2
  // (KIP-102); before, never (kNoDeadline).
  TimeUs SyncCommitDeadline(int64_t bound_ms) const;
  void RejoinAfter(Errc error);
  void SendCommits();
  void SendCommit(PendingCommit commit);
  void RetryLater();
  void Progress();

  const ConsumerConfig& config_;
  ConsumerNetwork& network_;
  Fetcher& fetcher_;
  TimerGroup timers_;
  const Clock& clock_;
  EventSink events_;
  std::function<void()> on_progress_;
  std::function<bool()> polling_;
  std::vector<std::unique_ptr<PartitionAssignor>> assignors_;
  bool closed_ = false;
  bool close_commit_pending_ = false;  // Close's commit is still being tried

  // Coordinator discovery.
  std::optional<std::string> coordinator_;
  bool finding_ = false;
  TimeUs find_not_before_us_ = 0;

  // Membership.
  std::vector<std::string> topics_;
  RebalanceListener listener_;
  State state_ = State::kUnjoined;
  bool join_in_flight_ = false;  // a JoinGroup awaits its answer (at most one at a time)
  bool needs_rejoin_ = true;
  bool revoked_ = true;  // the last assignment was handed back (nothing to revoke yet)
  std::string member_id_;
  int32_t generation_ = -1;
  std::optional<JoinGroupResponse> awaiting_metadata_;  // the leader's join, counts missing
  // The leader's view of the group's topics when it assigned them (partition count of each one
  // its metadata knew): Kafka's assignmentSnapshot, compared with the metadata after every
  // update, so that a topic that was missing or changed its partitions triggers a rebalance.
  std::optional<std::map<std::string, int32_t>> assignment_snapshot_;
  std::vector<std::string> assignment_topics_;  // the group's topics at that assignment
  // The group's topics as the metadata shows them now (MetadataSnapshot).
  std::map<std::string, int32_t> MetadataSnapshot() const;
  uint64_t awaiting_metadata_version_ = 0;  // the network's metadata version when it joined
  TimeUs join_not_before_us_ = 0;
  TimerId heartbeat_timer_ = 0;
  bool heartbeat_due_ = false;  // before 0.10.1: a beat fell due outside Poll
  bool heartbeat_in_flight_ = false;
  uint64_t heartbeat_epoch_ = 0;  // bumped when the coordinator is forgotten
  // Kafka's Heartbeat: max(lastSessionReset, lastHeartbeatReceive). session.timeout.ms past it
  // without an answer marks the coordinator unknown (HeartbeatThread, sessionTimeoutExpired).
  TimeUs session_reset_us_ = 0;

  // Offsets.
  bool offset_fetch_in_flight_ = false;
  std::vector<PendingCommit> pending_commits_;  // waiting for a coordinator
  TimeUs next_auto_commit_us_ = 0;
  bool retry_scheduled_ = false;
};

}  // namespace ksim
