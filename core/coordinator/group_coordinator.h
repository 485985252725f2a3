// GroupCoordinator: the consumer-group coordinator of one broker (Kafka's
// kafka.coordinator.GroupCoordinator with its GroupMetadataManager, 0.10.1-2.0 rules; docs/
// group-coordinator.md). It serves JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit and
// OffsetFetch for the groups whose offsets partition this broker leads, and keeps their state
// (core/coordinator/group_metadata.h) and committed offsets in memory, backed by
// __consumer_offsets.
//
// - Ownership of groups: group g belongs to offsets partition OffsetsPartitionFor(g, n); this
//   coordinator serves g only while it leads that partition. OnElection(p) (this broker became
//   leader) loads the partition's groups and offsets from its log, after the current event;
//   meanwhile requests for them are COORDINATOR_LOAD_IN_PROGRESS. OnResignation(p) (follower,
//   stopped) unloads them: pending joins and syncs are answered NOT_COORDINATOR, and later
//   requests are NOT_COORDINATOR. A group of a partition not led here is NOT_COORDINATOR.
// - Storage: a group's metadata (after the leader's SyncGroup, and when a rebalance leaves the
//   group Empty) and every offset commit are appended as one record batch to the group's offsets
//   partition through `append` (the broker's produce path: offsets.commit.required.acks,
//   offsets.commit.timeout.ms). The request is answered only when the append completed; only then
//   does the cache change. Errors are mapped as GroupMetadataManager does.
// - Sessions: each member has a timer of its session timeout, restarted by every heartbeat,
//   join, sync and commit of it; a member waiting in JoinGroup or SyncGroup does not expire. An
//   expired or leaving member is removed and the group rebalances.
// - Rebalance: PreparingRebalance ends when every known member has rejoined or when the largest
//   rebalance timeout of the members has passed (members that did not rejoin are removed; a
//   0.10.0 broker takes the session timeout as a member's rebalance timeout: JoinGroup v0);
//   KIP-134's group.initial.rebalance.delay.ms delays the first rebalance of an Empty group.
//
// Ownership: borrows the seams (they outlive it); owns the groups and its timers. Destroying it
// is a crash: timers cancelled, pending answers dropped. One thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/clock.h"
#include "core/base/events.h"
#include "core/base/random_source.h"
#include "core/base/timer_group.h"
#include "core/config/server_config.h"
#include "core/coordinator/group_metadata.h"
#include "core/protocol/messages.h"

namespace ksim {

struct GroupCoordinatorSeams {
  const Clock& clock;
  Timers& timers;
  RandomSource& random;  // member id suffixes
  EventSink events;
  // Appends one record batch to an offsets partition (as leader, with the commit acks and
  // timeout); `done` gets the produce error (kNone: the acks were reached). May call `done`
  // before returning.
  std::function<void(const TopicPartition& tp, Bytes batch, std::function<void(Errc)> done)> append;
  // Whole batches of an offsets partition from `start` (at least one when any is there; empty at
  // the log end), for loading.
  std::function<Result<Bytes>(const TopicPartition& tp, Offset start)> read;
};

class GroupCoordinator {
 public:
  GroupCoordinator(const BrokerConfig& config, GroupCoordinatorSeams seams);
  ~GroupCoordinator();
  GroupCoordinator(const GroupCoordinator&) = delete;
  GroupCoordinator& operator=(const GroupCoordinator&) = delete;

  // Active: serves requests (Kafka's isActive). Shutdown() unloads every group and stops.
  void Startup();
  void Shutdown();

  // The offsets partition of a group.
  int32_t PartitionFor(std::string_view group_id) const;

  // `client` names the requesting client (its node): it starts the member ids given out.
  void HandleJoinGroup(std::string_view client, JoinGroupRequest request,
                       std::function<void(JoinGroupResponse)> done);
  void HandleSyncGroup(SyncGroupRequest request, std::function<void(SyncGroupResponse)> done);
  void HandleHeartbeat(const HeartbeatRequest& request,
                       std::function<void(HeartbeatResponse)> done);
  void HandleLeaveGroup(const LeaveGroupRequest& request,
                        std::function<void(LeaveGroupResponse)> done);
  void HandleOffsetCommit(OffsetCommitRequest request,
                          std::function<void(OffsetCommitResponse)> done);
  OffsetFetchResponse HandleOffsetFetch(const OffsetFetchRequest& request) const;

  // Leadership of offsets partition `partition` (Kafka's handleGroupImmigration/Emigration).
  void OnElection(int32_t partition);
  void OnResignation(int32_t partition);

  // ---- State, for tests and checks ----
  bool active() const { return active_; }
  const GroupMetadata* group(const std::string& group_id) const;
  std::vector<std::string> GroupIds() const;
  const std::set<int32_t>& owned_partitions() const { return owned_; }
  const std::set<int32_t>& loading_partitions() const { return loading_; }

 private:
  using JoinDone = std::function<void(JoinGroupResponse)>;
  using SyncDone = std::function<void(SyncGroupResponse)>;

  // NONE, or why `group_id` cannot be served here (Kafka's validateGroup).
  Errc Validate(const std::string& group_id) const;
  GroupMetadata* Find(const std::string& group_id);
  TopicPartition OffsetsPartition(const std::string& group_id) const;

  // ---- Membership (group_coordinator.cc) ----
  void DoJoinGroup(GroupMetadata& group, std::string_view client, JoinGroupRequest request,
                   JoinDone done);
  void AddMemberAndRebalance(GroupMetadata& group, std::string_view client,
                             const JoinGroupRequest& request, JoinDone done);
  void UpdateMemberAndRebalance(GroupMetadata& group, MemberMetadata& member,
                                const JoinGroupRequest& request, JoinDone done);
  void MaybePrepareRebalance(GroupMetadata& group);
  void PrepareRebalance(GroupMetadata& group);
  void TryCompleteJoin(GroupMetadata& group);
  void OnJoinTimeout(const std::string& group_id);
  void OnInitialDelay(const std::string& group_id, int32_t remaining_ms);
  void OnCompleteJoin(GroupMetadata& group);
  void OnMemberFailure(GroupMetadata& group, const std::string& member_id);
  // The rebalance timeout a member's JoinGroup gives it at this broker's release.
  int32_t RebalanceTimeoutOf(const JoinGroupRequest& request) const;
  void ScheduleHeartbeat(GroupMetadata& group, MemberMetadata& member);
  void OnHeartbeatExpired(const std::string& group_id, const std::string& member_id);
  void RemoveMember(GroupMetadata& group, const std::string& member_id);
  void ResetAndPropagateAssignmentError(GroupMetadata& group, Errc error);
  void PropagateAssignment(GroupMetadata& group, Errc error);
  void CancelJoinTimer(const std::string& group_id);
  std::string NewMemberId(std::string_view client);
  void EmitState(const GroupMetadata& group);

  // ---- Storage (group_coordinator_storage.cc) ----
  void StoreGroup(GroupMetadata& group, const std::map<std::string, Bytes>& assignment,
                  std::function<void(Errc)> done);
  void DoCommitOffsets(GroupMetadata& group, OffsetCommitRequest request,
                       std::function<void(OffsetCommitResponse)> done);
  void StoreOffsets(const std::string& group_id, OffsetCommitRequest request,
                    std::function<void(OffsetCommitResponse)> done);
  void LoadPartition(int32_t partition, uint64_t token);
  void UnloadGroup(GroupMetadata& group);

  const BrokerConfig& config_;
  GroupCoordinatorSeams seams_;
  TimerGroup timers_;
  bool active_ = false;
  std::map<std::string, std::unique_ptr<GroupMetadata>> groups_;
  std::map<std::string, TimerId> join_timers_;  // group -> its DelayedJoin/InitialDelayedJoin
  std::set<std::string> initial_delay_;         // groups in KIP-134's initial delay
  std::set<std::string> new_member_added_;      // ... that saw a new member meanwhile
  std::set<int32_t> owned_;
  std::set<int32_t> loading_;
  std::map<int32_t, uint64_t> load_tokens_;  // partition -> current election
  uint64_t next_load_token_ = 1;
  uint64_t next_member_ = 1;
};

}  // namespace ksim
