// GroupCoordinator: membership (Kafka's GroupCoordinator.handleJoinGroup, handleSyncGroup,
// handleHeartbeat, handleLeaveGroup, the DelayedJoin / InitialDelayedJoin / DelayedHeartbeat
// operations). Storage and loading are in group_coordinator_storage.cc.
#include "core/coordinator/group_coordinator.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <utility>

#include "core/base/check.h"
#include "core/base/trace_names.h"
#include "core/cluster/topic.h"
#include "core/coordinator/offsets_records.h"

namespace ksim {

namespace {

JoinGroupResponse JoinError(const std::string& member_id, Errc error) {
  JoinGroupResponse response;
  response.error_code = error;
  response.member_id = member_id;
  response.generation_id = -1;
  return response;
}

SyncGroupResponse SyncError(Errc error) {
  SyncGroupResponse response;
  response.error_code = error;
  return response;
}

}  // namespace

GroupCoordinator::GroupCoordinator(const BrokerConfig& config, GroupCoordinatorSeams seams)
    : config_(config), seams_(std::move(seams)), timers_(seams_.timers) {
  KSIM_CHECK(config_.offsets_topic_num_partitions > 0);
}

GroupCoordinator::~GroupCoordinator() = default;

void GroupCoordinator::Startup() { active_ = true; }

void GroupCoordinator::Shutdown() {
  active_ = false;
  const std::set<int32_t> partitions = owned_;
  for (int32_t partition : partitions) OnResignation(partition);
  const std::set<int32_t> loading = loading_;
  for (int32_t partition : loading) OnResignation(partition);
  timers_.CancelAll();
}

int32_t GroupCoordinator::PartitionFor(std::string_view group_id) const {
  return OffsetsPartitionFor(group_id, config_.offsets_topic_num_partitions);
}

TopicPartition GroupCoordinator::OffsetsPartition(const std::string& group_id) const {
  return TopicPartition{std::string(kGroupMetadataTopicName), PartitionId(PartitionFor(group_id))};
}

const GroupMetadata* GroupCoordinator::group(const std::string& group_id) const {
  auto it = groups_.find(group_id);
  return it == groups_.end() ? nullptr : it->second.get();
}

GroupMetadata* GroupCoordinator::Find(const std::string& group_id) {
  auto it = groups_.find(group_id);
  return it == groups_.end() ? nullptr : it->second.get();
}

std::vector<std::string> GroupCoordinator::GroupIds() const {
  std::vector<std::string> ids;
  for (const auto& [id, group] : groups_) ids.push_back(id);
  return ids;
}

Errc GroupCoordinator::Validate(const std::string& group_id) const {
  // Kafka 1.x validateGroup's order.
  if (!active_) return Errc::kCoordinatorNotAvailable;
  const int32_t partition = PartitionFor(group_id);
  if (loading_.count(partition) > 0) return Errc::kCoordinatorLoadInProgress;
  if (owned_.count(partition) == 0) return Errc::kNotCoordinator;
  return Errc::kNone;
}

std::string GroupCoordinator::NewMemberId(std::string_view client) {
  // Kafka: clientId + "-" + UUID. Here a counter and a draw from the broker's seeded stream, so
  // that ids are unique across coordinator failovers and restarts and still deterministic.
  char suffix[32];
  std::snprintf(suffix, sizeof(suffix), "%08x",
                static_cast<unsigned>(seams_.random.NextInt(std::numeric_limits<int32_t>::max())));
  return std::string(client.empty() ? "consumer" : client) + "-" + std::to_string(next_member_++) +
         "-" + suffix;
}

void GroupCoordinator::EmitState(const GroupMetadata& group) {
  Emit(seams_.events, ev::kGroupState,
       {{field::kGroup, group.group_id()},
        {field::kState, GroupStateName(group.state())},
        {field::kGeneration, group.generation()},
        {field::kMembers, group.members().size()},
        {field::kLeader, group.leader().value_or("")},
        {field::kProtocol, group.protocol().value_or("")}});
}

// ---- JoinGroup ----------------------------------------------------------------------------------

void GroupCoordinator::HandleJoinGroup(std::string_view client, JoinGroupRequest request,
                                       JoinDone done) {
  if (request.group_id.empty()) return done(JoinError(request.member_id, Errc::kInvalidGroupId));
  if (Errc error = Validate(request.group_id); error != Errc::kNone) {
    return done(JoinError(request.member_id, error));
  }
  if (request.session_timeout_ms < config_.group_min_session_timeout_ms ||
      request.session_timeout_ms > config_.group_max_session_timeout_ms) {
    return done(JoinError(request.member_id, Errc::kInvalidSessionTimeout));
  }
  GroupMetadata* group = Find(request.group_id);
  if (group == nullptr) {
    // Only a new member (empty id) may create a group.
    if (!request.member_id.empty()) {
      return done(JoinError(request.member_id, Errc::kUnknownMemberId));
    }
    auto created = std::make_unique<GroupMetadata>(request.group_id);
    group = created.get();
    groups_.emplace(request.group_id, std::move(created));
  }
  DoJoinGroup(*group, client, std::move(request), std::move(done));
}

void GroupCoordinator::DoJoinGroup(GroupMetadata& group, std::string_view client,
                                   JoinGroupRequest request, JoinDone done) {
  const std::string& member_id = request.member_id;
  if (!group.Is(GroupState::kEmpty) &&
      (group.protocol_type() != request.protocol_type ||
       !group.SupportsProtocols(request.protocol_type, request.group_protocols))) {
    return done(JoinError(member_id, Errc::kInconsistentGroupProtocol));
  }
  if (group.Is(GroupState::kEmpty) &&
      !group.SupportsProtocols(request.protocol_type, request.group_protocols)) {
    return done(JoinError(member_id, Errc::kInconsistentGroupProtocol));
  }
  if (!member_id.empty() && !group.Has(member_id)) {
    return done(JoinError(member_id, Errc::kUnknownMemberId));
  }
  switch (group.state()) {
    case GroupState::kDead:
      // The group was unloaded meanwhile: the member should find the coordinator again.
      return done(JoinError(member_id, Errc::kUnknownMemberId));
    case GroupState::kPreparingRebalance:
      if (member_id.empty()) {
        AddMemberAndRebalance(group, client, request, std::move(done));
      } else {
        UpdateMemberAndRebalance(group, group.Get(member_id), request, std::move(done));
      }
      break;
    case GroupState::kCompletingRebalance:
      if (member_id.empty()) {
        AddMemberAndRebalance(group, client, request, std::move(done));
      } else {
        MemberMetadata& member = group.Get(member_id);
        if (member.Matches(request.group_protocols)) {
          // The member missed the join answer: give it again (it may then SyncGroup).
          JoinGroupResponse response;
          response.generation_id = group.generation();
          response.group_protocol = group.protocol().value_or("");
          response.leader_id = group.leader().value_or("");
          response.member_id = member_id;
          if (group.IsLeader(member_id)) response.members = group.CurrentMemberMetadata();
          done(std::move(response));
        } else {
          UpdateMemberAndRebalance(group, member, request, std::move(done));
        }
      }
      break;
    case GroupState::kEmpty:
    case GroupState::kStable:
      if (member_id.empty()) {
        AddMemberAndRebalance(group, client, request, std::move(done));
      } else {
        MemberMetadata& member = group.Get(member_id);
        if (group.IsLeader(member_id) || !member.Matches(request.group_protocols)) {
          // The leader rejoining (it wants a new assignment) or changed metadata: rebalance.
          UpdateMemberAndRebalance(group, member, request, std::move(done));
        } else {
          // A follower with nothing new: the current generation, so that it can SyncGroup.
          JoinGroupResponse response;
          response.generation_id = group.generation();
          response.group_protocol = group.protocol().value_or("");
          response.leader_id = group.leader().value_or("");
          response.member_id = member_id;
          ScheduleHeartbeat(group, member);
          done(std::move(response));
        }
      }
      break;
  }
  if (group.Is(GroupState::kPreparingRebalance)) TryCompleteJoin(group);
}

int32_t GroupCoordinator::RebalanceTimeoutOf(const JoinGroupRequest& request) const {
  // A 0.10.0 broker knows JoinGroup v0 only, which has no rebalance timeout: a rebalance waits
  // for the largest session timeout (0.10.0.1:GroupMetadata.rebalanceTimeout). KIP-62 (0.10.1)
  // added the member's own.
  if (config_.release < KafkaRelease::k0_10_1) return request.session_timeout_ms;
  return request.rebalance_timeout_ms;
}

void GroupCoordinator::AddMemberAndRebalance(GroupMetadata& group, std::string_view client,
                                             const JoinGroupRequest& request, JoinDone done) {
  MemberMetadata member;
  member.member_id = NewMemberId(client);
  member.client_id = std::string(client);
  member.client_host = "/" + std::string(client);
  member.session_timeout_ms = request.session_timeout_ms;
  member.rebalance_timeout_ms = RebalanceTimeoutOf(request);
  member.protocol_type = request.protocol_type;
  member.protocols = request.group_protocols;
  member.awaiting_join = std::move(done);
  Emit(seams_.events, ev::kGroupMemberAdded,
       {{field::kGroup, group.group_id()}, {field::kMember, member.member_id}});
  group.Add(std::move(member));
  if (initial_delay_.count(group.group_id()) > 0) new_member_added_.insert(group.group_id());
  MaybePrepareRebalance(group);
}

void GroupCoordinator::UpdateMemberAndRebalance(GroupMetadata& group, MemberMetadata& member,
                                                const JoinGroupRequest& request, JoinDone done) {
  member.protocols = request.group_protocols;
  member.session_timeout_ms = request.session_timeout_ms;
  member.rebalance_timeout_ms = RebalanceTimeoutOf(request);
  member.awaiting_join = std::move(done);
  MaybePrepareRebalance(group);
}

void GroupCoordinator::MaybePrepareRebalance(GroupMetadata& group) {
  if (group.CanRebalance()) PrepareRebalance(group);
}

void GroupCoordinator::PrepareRebalance(GroupMetadata& group) {
  // Members waiting for an assignment learn that it will not come.
  if (group.Is(GroupState::kCompletingRebalance)) {
    ResetAndPropagateAssignmentError(group, Errc::kRebalanceInProgress);
  }
  const bool initial = group.Is(GroupState::kEmpty) && config_.group_initial_rebalance_delay_ms > 0;
  group.TransitionTo(GroupState::kPreparingRebalance);
  EmitState(group);
  CancelJoinTimer(group.group_id());
  const std::string id = group.group_id();
  if (initial) {
    // KIP-134 InitialDelayedJoin: wait the delay, and again while new members keep coming, up to
    // the rebalance timeout.
    const int32_t delay_ms = config_.group_initial_rebalance_delay_ms;
    const int32_t remaining_ms = std::max(group.RebalanceTimeoutMs() - delay_ms, 0);
    initial_delay_.insert(id);
    new_member_added_.erase(id);
    join_timers_[id] =
        timers_.Schedule(static_cast<TimeUs>(delay_ms) * kUsPerMs, [this, id, remaining_ms]() {
          join_timers_.erase(id);
          OnInitialDelay(id, remaining_ms);
        });
    return;
  }
  const TimeUs timeout_us = static_cast<TimeUs>(group.RebalanceTimeoutMs()) * kUsPerMs;
  join_timers_[id] = timers_.Schedule(timeout_us, [this, id]() {
    join_timers_.erase(id);
    OnJoinTimeout(id);
  });
  // tryCompleteElseWatch: done at once when every member is already waiting (or none is left).
  TryCompleteJoin(group);
}

void GroupCoordinator::OnInitialDelay(const std::string& group_id, int32_t remaining_ms) {
  GroupMetadata* group = Find(group_id);
  if (group == nullptr || !group->Is(GroupState::kPreparingRebalance)) return;
  if (new_member_added_.count(group_id) > 0 && remaining_ms > 0) {
    new_member_added_.erase(group_id);
    const int32_t delay_ms = std::min(config_.group_initial_rebalance_delay_ms, remaining_ms);
    const int32_t left_ms = std::max(remaining_ms - delay_ms, 0);
    join_timers_[group_id] =
        timers_.Schedule(static_cast<TimeUs>(delay_ms) * kUsPerMs, [this, group_id, left_ms]() {
          join_timers_.erase(group_id);
          OnInitialDelay(group_id, left_ms);
        });
    return;
  }
  initial_delay_.erase(group_id);
  new_member_added_.erase(group_id);
  OnCompleteJoin(*group);
}

void GroupCoordinator::CancelJoinTimer(const std::string& group_id) {
  auto it = join_timers_.find(group_id);
  if (it == join_timers_.end()) return;
  timers_.Cancel(it->second);
  join_timers_.erase(it);
}

void GroupCoordinator::TryCompleteJoin(GroupMetadata& group) {
  // DelayedJoin.tryComplete: every known member has rejoined. (InitialDelayedJoin never completes
  // early.)
  if (initial_delay_.count(group.group_id()) > 0) return;
  if (!group.NotYetRejoinedMembers().empty()) return;
  CancelJoinTimer(group.group_id());
  OnCompleteJoin(group);
}

void GroupCoordinator::OnJoinTimeout(const std::string& group_id) {
  GroupMetadata* group = Find(group_id);
  if (group == nullptr || !group->Is(GroupState::kPreparingRebalance)) return;
  OnCompleteJoin(*group);
}

void GroupCoordinator::OnCompleteJoin(GroupMetadata& group) {
  KSIM_CHECK(group.Is(GroupState::kPreparingRebalance));
  // Members that did not rejoin in time are out.
  for (const std::string& member_id : group.NotYetRejoinedMembers()) {
    Emit(seams_.events, ev::kGroupMemberRemoved,
         {{field::kGroup, group.group_id()},
          {field::kMember, member_id},
          {field::kReason, "not_rejoined"}});
    RemoveMember(group, member_id);
  }
  group.InitNextGeneration();
  EmitState(group);
  if (group.Is(GroupState::kEmpty)) {
    // Kafka stores the empty group so that its generation survives a coordinator move.
    StoreGroup(group, {}, [](Errc) {});
    return;
  }
  const std::vector<GroupMember> all = group.CurrentMemberMetadata();
  // Answers go out after the group is consistent: a caller may send its next request at once.
  std::vector<std::pair<JoinDone, JoinGroupResponse>> answers;
  for (auto& [member_id, member] : group.mutable_members()) {
    KSIM_CHECK(member.awaiting_join);
    JoinGroupResponse response;
    response.generation_id = group.generation();
    response.group_protocol = *group.protocol();
    response.leader_id = *group.leader();
    response.member_id = member_id;
    if (group.IsLeader(member_id)) response.members = all;
    answers.emplace_back(std::exchange(member.awaiting_join, nullptr), std::move(response));
    ScheduleHeartbeat(group, member);
  }
  for (auto& [callback, response] : answers) callback(std::move(response));
}

void GroupCoordinator::RemoveMember(GroupMetadata& group, const std::string& member_id) {
  if (!group.Has(member_id)) return;
  timers_.Cancel(group.Get(member_id).heartbeat_timer);
  group.Remove(member_id);
}

void GroupCoordinator::OnMemberFailure(GroupMetadata& group, const std::string& member_id) {
  RemoveMember(group, member_id);
  switch (group.state()) {
    case GroupState::kDead:
    case GroupState::kEmpty:
      break;
    case GroupState::kStable:
    case GroupState::kCompletingRebalance:
      MaybePrepareRebalance(group);
      break;
    case GroupState::kPreparingRebalance:
      TryCompleteJoin(group);
      break;
  }
}

// ---- Heartbeats (DelayedHeartbeat) --------------------------------------------------------------

void GroupCoordinator::ScheduleHeartbeat(GroupMetadata& group, MemberMetadata& member) {
  timers_.Cancel(member.heartbeat_timer);
  const std::string group_id = group.group_id();
  const std::string member_id = member.member_id;
  member.heartbeat_timer =
      timers_.Schedule(static_cast<TimeUs>(member.session_timeout_ms) * kUsPerMs,
                       [this, group_id, member_id]() { OnHeartbeatExpired(group_id, member_id); });
}

void GroupCoordinator::OnHeartbeatExpired(const std::string& group_id,
                                          const std::string& member_id) {
  GroupMetadata* group = Find(group_id);
  if (group == nullptr || !group->Has(member_id)) return;
  MemberMetadata& member = group->Get(member_id);
  member.heartbeat_timer = 0;
  if (member.awaiting_join || member.awaiting_sync) {
    // shouldKeepAlive: a member waiting on the coordinator cannot heartbeat.
    return ScheduleHeartbeat(*group, member);
  }
  Emit(seams_.events, ev::kGroupMemberRemoved,
       {{field::kGroup, group_id},
        {field::kMember, member_id},
        {field::kReason, "session_timeout"}});
  OnMemberFailure(*group, member_id);
}

// ---- SyncGroup ----------------------------------------------------------------------------------

void GroupCoordinator::HandleSyncGroup(SyncGroupRequest request, SyncDone done) {
  if (Errc error = Validate(request.group_id); error != Errc::kNone) {
    return done(SyncError(error));
  }
  GroupMetadata* group = Find(request.group_id);
  if (group == nullptr || !group->Has(request.member_id)) {
    return done(SyncError(Errc::kUnknownMemberId));
  }
  if (request.generation_id != group->generation()) {
    return done(SyncError(Errc::kIllegalGeneration));
  }
  MemberMetadata& member = group->Get(request.member_id);
  switch (group->state()) {
    case GroupState::kEmpty:
    case GroupState::kDead:
      return done(SyncError(Errc::kUnknownMemberId));
    case GroupState::kPreparingRebalance:
      return done(SyncError(Errc::kRebalanceInProgress));
    case GroupState::kStable: {
      // The assignment was already propagated: give it (the member may have missed it).
      SyncGroupResponse response;
      response.member_assignment = member.assignment;
      ScheduleHeartbeat(*group, member);
      return done(std::move(response));
    }
    case GroupState::kCompletingRebalance:
      break;
  }
  member.awaiting_sync = std::move(done);
  ScheduleHeartbeat(*group, member);
  if (!group->IsLeader(request.member_id)) return;
  // The leader's assignment: missing members get an empty one. Stored first, then given out.
  std::map<std::string, Bytes> assignment;
  for (GroupAssignment& entry : request.group_assignment) {
    assignment[entry.member_id] = std::move(entry.member_assignment);
  }
  for (const auto& [id, m] : group->members()) assignment.try_emplace(id);
  const std::string group_id = group->group_id();
  const int32_t generation = group->generation();
  StoreGroup(*group, assignment, [this, group_id, generation, assignment](Errc error) {
    GroupMetadata* group = Find(group_id);
    if (group == nullptr || !group->Is(GroupState::kCompletingRebalance) ||
        group->generation() != generation) {
      return;
    }
    if (error != Errc::kNone) {
      ResetAndPropagateAssignmentError(*group, error);
      MaybePrepareRebalance(*group);
      return;
    }
    for (auto& [id, member] : group->mutable_members()) {
      auto it = assignment.find(id);
      member.assignment = it == assignment.end() ? Bytes{} : it->second;
    }
    group->TransitionTo(GroupState::kStable);
    EmitState(*group);
    PropagateAssignment(*group, Errc::kNone);
  });
}

void GroupCoordinator::ResetAndPropagateAssignmentError(GroupMetadata& group, Errc error) {
  KSIM_CHECK(group.Is(GroupState::kCompletingRebalance));
  for (auto& [id, member] : group.mutable_members()) member.assignment.clear();
  PropagateAssignment(group, error);
}

void GroupCoordinator::PropagateAssignment(GroupMetadata& group, Errc error) {
  std::vector<std::pair<SyncDone, SyncGroupResponse>> answers;
  for (auto& [id, member] : group.mutable_members()) {
    if (!member.awaiting_sync) continue;
    SyncGroupResponse response;
    response.error_code = error;
    response.member_assignment = member.assignment;
    answers.emplace_back(std::exchange(member.awaiting_sync, nullptr), std::move(response));
    // The member's session starts again from its answer.
    ScheduleHeartbeat(group, member);
  }
  for (auto& [callback, response] : answers) callback(std::move(response));
}

// ---- Heartbeat and LeaveGroup -------------------------------------------------------------------

void GroupCoordinator::HandleHeartbeat(const HeartbeatRequest& request,
                                       std::function<void(HeartbeatResponse)> done) {
  HeartbeatResponse response;
  auto answer = [&](Errc error) {
    response.error_code = error;
    done(std::move(response));
  };
  if (Errc error = Validate(request.group_id); error != Errc::kNone) return answer(error);
  GroupMetadata* group = Find(request.group_id);
  if (group == nullptr) return answer(Errc::kUnknownMemberId);
  switch (group->state()) {
    case GroupState::kDead:
    case GroupState::kEmpty:
      return answer(Errc::kUnknownMemberId);
    case GroupState::kCompletingRebalance:
      return answer(group->Has(request.member_id) ? Errc::kRebalanceInProgress
                                                  : Errc::kUnknownMemberId);
    case GroupState::kPreparingRebalance:
    case GroupState::kStable:
      break;
  }
  if (!group->Has(request.member_id)) return answer(Errc::kUnknownMemberId);
  if (request.generation_id != group->generation()) return answer(Errc::kIllegalGeneration);
  ScheduleHeartbeat(*group, group->Get(request.member_id));
  answer(group->Is(GroupState::kPreparingRebalance) ? Errc::kRebalanceInProgress : Errc::kNone);
}

void GroupCoordinator::HandleLeaveGroup(const LeaveGroupRequest& request,
                                        std::function<void(LeaveGroupResponse)> done) {
  LeaveGroupResponse response;
  auto answer = [&](Errc error) {
    response.error_code = error;
    done(std::move(response));
  };
  if (Errc error = Validate(request.group_id); error != Errc::kNone) return answer(error);
  GroupMetadata* group = Find(request.group_id);
  if (group == nullptr || group->Is(GroupState::kDead) || !group->Has(request.member_id)) {
    return answer(Errc::kUnknownMemberId);
  }
  Emit(seams_.events, ev::kGroupMemberRemoved,
       {{field::kGroup, request.group_id},
        {field::kMember, request.member_id},
        {field::kReason, "leave_group"}});
  OnMemberFailure(*group, request.member_id);
  answer(Errc::kNone);
}

}  // namespace ksim
