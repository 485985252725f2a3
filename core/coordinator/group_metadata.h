// GroupMetadata: one consumer group as its coordinator holds it (Kafka's
// kafka.coordinator.GroupMetadata and MemberMetadata, 0.10.1-2.0): the state, the members with
// their supported protocols, the generation, the chosen protocol, the leader, and the group's
// committed offsets. Plain state plus the rules that need no clock, network or log: the
// coordinator (core/coordinator/group_coordinator.h) drives it.
//
// States and allowed transitions (GroupState.validPreviousStates; a wrong one is a programmer
// error, KSIM_CHECK):
//   Empty -> PreparingRebalance (a member joins) | Dead
//   PreparingRebalance -> CompletingRebalance (every known member rejoined, or the rebalance
//     timeout passed) | Empty (no member left) | Dead
//   CompletingRebalance (Kafka's AwaitingSync) -> Stable (leader's SyncGroup stored) |
//     PreparingRebalance (a member joined, left or died) | Dead
//   Stable -> PreparingRebalance | Dead
//   Dead: final (the coordinator unloaded the group)
//
// Members are keyed by member id in a std::map, so iteration order is the ids' order (Kafka uses
// a HashMap: any order). Protocol selection follows selectProtocol: the candidates are the
// protocols every member supports; each member votes for the first candidate in its own
// preference order; the most votes wins, a tie going to the name that sorts first (Kafka leaves
// ties to its map's order). The leader is the first member to join; when it leaves, the member
// whose id sorts first. Values only; one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/base/clock.h"
#include "core/coordinator/offsets_records.h"
#include "core/protocol/messages.h"

namespace ksim {

enum class GroupState : uint8_t {
  kEmpty,
  kPreparingRebalance,
  kCompletingRebalance,
  kStable,
  kDead,
};
// Kafka's names: "Empty", "PreparingRebalance", "AwaitingSync" (CompletingRebalance in 1.1+),
// "Stable", "Dead".
std::string_view GroupStateName(GroupState state);

struct MemberMetadata {
  std::string member_id;
  std::string client_id;
  std::string client_host;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = 0;
  std::string protocol_type;
  std::vector<GroupProtocol> protocols;  // in the member's order of preference
  Bytes assignment;
  // Pending answers: set while the member waits in JoinGroup or SyncGroup.
  std::function<void(JoinGroupResponse)> awaiting_join;
  std::function<void(SyncGroupResponse)> awaiting_sync;
  // The session timer (the coordinator's TimerGroup id; 0: none).
  TimerId heartbeat_timer = 0;

  // The member's metadata for `protocol`. REQUIRES: the member supports it.
  const Bytes& Metadata(const std::string& protocol) const;
  // Same protocol names with the same metadata, in the same order (Kafka's matches()).
  bool Matches(const std::vector<GroupProtocol>& protocols) const;
  // The first of `candidates` in this member's order of preference.
  std::string Vote(const std::set<std::string>& candidates) const;
};

class GroupMetadata {
 public:
  explicit GroupMetadata(std::string group_id) : group_id_(std::move(group_id)) {}

  const std::string& group_id() const { return group_id_; }
  GroupState state() const { return state_; }
  bool Is(GroupState state) const { return state_ == state; }
  int32_t generation() const { return generation_; }
  const std::string& protocol_type() const { return protocol_type_; }
  const std::optional<std::string>& protocol() const { return protocol_; }
  const std::optional<std::string>& leader() const { return leader_; }
  const std::map<std::string, MemberMetadata>& members() const { return members_; }
  std::map<std::string, MemberMetadata>& mutable_members() { return members_; }
  bool Has(const std::string& member_id) const { return members_.count(member_id) > 0; }
  MemberMetadata& Get(const std::string& member_id);  // REQUIRES: Has(member_id)
  bool IsLeader(const std::string& member_id) const { return leader_ == member_id; }

  // Adds a member; the first becomes leader and fixes the protocol type. REQUIRES: new id.
  void Add(MemberMetadata member);
  // Removes a member (a new leader is picked when it led). Unknown ids are ignored.
  void Remove(const std::string& member_id);
  // Kafka's supportsProtocols: an empty group accepts anything; otherwise the type must match
  // and some protocol of `protocols` must be supported by every current member.
  bool SupportsProtocols(const std::string& protocol_type,
                         const std::vector<GroupProtocol>& protocols) const;
  // REQUIRES: members not empty and a common protocol.
  std::string SelectProtocol() const;
  bool CanRebalance() const {
    return state_ == GroupState::kStable || state_ == GroupState::kCompletingRebalance ||
           state_ == GroupState::kEmpty;
  }
  void TransitionTo(GroupState target);
  // Members not waiting in JoinGroup (they have not rejoined yet).
  std::vector<std::string> NotYetRejoinedMembers() const;
  // Largest rebalance timeout of the members (Kafka's rebalanceTimeoutMs), 0 when empty.
  int32_t RebalanceTimeoutMs() const;
  // Next generation: generation+1, protocol chosen (none when empty) and state
  // CompletingRebalance, or Empty with no members. REQUIRES: PreparingRebalance.
  void InitNextGeneration();
  // The members' metadata for the chosen protocol (what the leader's JoinGroup answer lists).
  std::vector<GroupMember> CurrentMemberMetadata() const;

  // What is stored under the group metadata key (every member's current assignment).
  StoredGroup ToStored() const;
  // Rebuilds a group loaded from the log: Empty without members, else Stable.
  static GroupMetadata FromStored(const std::string& group_id, const StoredGroup& stored);

  // Committed offsets, by partition.
  std::map<TopicPartition, CommittedOffset>& offsets() { return offsets_; }
  const std::map<TopicPartition, CommittedOffset>& offsets() const { return offsets_; }

 private:
  std::string group_id_;
  GroupState state_ = GroupState::kEmpty;
  int32_t generation_ = 0;
  std::string protocol_type_;
  std::optional<std::string> protocol_;
  std::optional<std::string> leader_;
  std::map<std::string, MemberMetadata> members_;
  std::map<TopicPartition, CommittedOffset> offsets_;
};

}  // namespace ksim
