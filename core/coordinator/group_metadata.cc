// GroupMetadata and MemberMetadata (Kafka's kafka.coordinator.GroupMetadata, 0.10.1-2.0).
#include "core/coordinator/group_metadata.h"

#include <algorithm>

#include "core/base/check.h"

namespace ksim {

std::string_view GroupStateName(GroupState state) {
  switch (state) {
    case GroupState::kEmpty:
      return "Empty";
    case GroupState::kPreparingRebalance:
      return "PreparingRebalance";
    case GroupState::kCompletingRebalance:
      return "AwaitingSync";
    case GroupState::kStable:
      return "Stable";
    case GroupState::kDead:
      return "Dead";
  }
  return "?";
}

const Bytes& MemberMetadata::Metadata(const std::string& protocol) const {
  for (const GroupProtocol& p : protocols) {
    if (p.protocol_name == protocol) return p.protocol_metadata;
  }
  KSIM_CHECK_MSG(false, "member does not support the protocol");
  return protocols.front().protocol_metadata;
}

bool MemberMetadata::Matches(const std::vector<GroupProtocol>& other) const {
  return protocols == other;
}

std::string MemberMetadata::Vote(const std::set<std::string>& candidates) const {
  for (const GroupProtocol& p : protocols) {
    if (candidates.count(p.protocol_name) > 0) return p.protocol_name;
  }
  KSIM_CHECK_MSG(false, "member supports none of the candidate protocols");
  return "";
}

MemberMetadata& GroupMetadata::Get(const std::string& member_id) {
  auto it = members_.find(member_id);
  KSIM_CHECK(it != members_.end());
  return it->second;
}

void GroupMetadata::Add(MemberMetadata member) {
  KSIM_CHECK(!Has(member.member_id));
  KSIM_CHECK(!member.protocols.empty());
  if (members_.empty()) protocol_type_ = member.protocol_type;
  KSIM_CHECK(protocol_type_ == member.protocol_type);
  if (!leader_.has_value()) leader_ = member.member_id;
  std::string id = member.member_id;
  members_.emplace(std::move(id), std::move(member));
}

void GroupMetadata::Remove(const std::string& member_id) {
  members_.erase(member_id);
  if (IsLeader(member_id)) {
    leader_ = members_.empty() ? std::nullopt : std::optional(members_.begin()->first);
  }
}

bool GroupMetadata::SupportsProtocols(const std::string& protocol_type,
                                      const std::vector<GroupProtocol>& protocols) const {
  if (members_.empty()) return !protocol_type.empty() && !protocols.empty();
  if (protocol_type != protocol_type_) return false;
  for (const GroupProtocol& p : protocols) {
    const bool everyone = std::all_of(members_.begin(), members_.end(), [&](const auto& entry) {
      for (const GroupProtocol& q : entry.second.protocols) {
        if (q.protocol_name == p.protocol_name) return true;
      }
      return false;
    });
    if (everyone) return true;
  }
  return false;
}

std::string GroupMetadata::SelectProtocol() const {
  KSIM_CHECK(!members_.empty());
  // Candidates: the protocols every member supports.
  std::set<std::string> candidates;
  for (const GroupProtocol& p : members_.begin()->second.protocols) {
    candidates.insert(p.protocol_name);
  }
  for (const auto& [id, member] : members_) {
    std::set<std::string> supported;
    for (const GroupProtocol& p : member.protocols) {
      if (candidates.count(p.protocol_name) > 0) supported.insert(p.protocol_name);
    }
    candidates = std::move(supported);
  }
  KSIM_CHECK_MSG(!candidates.empty(), "no protocol supported by every member");
  std::map<std::string, int> votes;
  for (const auto& [id, member] : members_) ++votes[member.Vote(candidates)];
  std::string chosen;
  int most = 0;
  for (const auto& [name, count] : votes) {  // by name: a tie goes to the first
    if (count > most) {
      most = count;
      chosen = name;
    }
  }
  return chosen;
}

void GroupMetadata::TransitionTo(GroupState target) {
  bool valid = false;
  switch (target) {
    case GroupState::kEmpty:
      valid = state_ == GroupState::kPreparingRebalance;
      break;
    case GroupState::kPreparingRebalance:
      valid = state_ == GroupState::kStable || state_ == GroupState::kCompletingRebalance ||
              state_ == GroupState::kEmpty;
      break;
    case GroupState::kCompletingRebalance:
      valid = state_ == GroupState::kPreparingRebalance;
      break;
    case GroupState::kStable:
      valid = state_ == GroupState::kCompletingRebalance;
      break;
    case GroupState::kDead:
      valid = true;
      break;
  }
  KSIM_CHECK_MSG(valid, "invalid group state transition");
  state_ = target;
}

std::vector<std::string> GroupMetadata::NotYetRejoinedMembers() const {
  std::vector<std::string> ids;
  for (const auto& [id, member] : members_) {
    if (!member.awaiting_join) ids.push_back(id);
  }
  return ids;
}

int32_t GroupMetadata::RebalanceTimeoutMs() const {
  int32_t timeout = 0;
  for (const auto& [id, member] : members_) {
    timeout = std::max(timeout, member.rebalance_timeout_ms);
  }
  return timeout;
}

void GroupMetadata::InitNextGeneration() {
  KSIM_CHECK(state_ == GroupState::kPreparingRebalance);
  ++generation_;
  if (!members_.empty()) {
    protocol_ = SelectProtocol();
    TransitionTo(GroupState::kCompletingRebalance);
  } else {
    protocol_ = std::nullopt;
    TransitionTo(GroupState::kEmpty);
  }
}

std::vector<GroupMember> GroupMetadata::CurrentMemberMetadata() const {
  KSIM_CHECK(protocol_.has_value());
  std::vector<GroupMember> out;
  for (const auto& [id, member] : members_) {
    out.push_back(GroupMember{.member_id = id, .member_metadata = member.Metadata(*protocol_)});
  }
  return out;
}

StoredGroup GroupMetadata::ToStored() const {
  StoredGroup stored;
  stored.protocol_type = protocol_type_;
  stored.generation = generation_;
  stored.protocol = protocol_;
  stored.leader = leader_;
  for (const auto& [id, member] : members_) {
    stored.members.push_back(StoredMember{
        .member_id = id,
        .client_id = member.client_id,
        .client_host = member.client_host,
        .rebalance_timeout_ms = member.rebalance_timeout_ms,
        .session_timeout_ms = member.session_timeout_ms,
        .subscription = protocol_.has_value() ? member.Metadata(*protocol_) : Bytes{},
        .assignment = member.assignment,
    });
  }
  return stored;
}

GroupMetadata GroupMetadata::FromStored(const std::string& group_id, const StoredGroup& stored) {
  GroupMetadata group(group_id);
  group.generation_ = stored.generation;
  group.protocol_type_ = stored.protocol_type;
  group.protocol_ = stored.protocol;
  for (const StoredMember& stored_member : stored.members) {
    if (!stored.protocol.has_value()) break;  // members without a protocol: damaged, dropped
    MemberMetadata member;
    member.member_id = stored_member.member_id;
    member.client_id = stored_member.client_id;
    member.client_host = stored_member.client_host;
    member.session_timeout_ms = stored_member.session_timeout_ms;
    member.rebalance_timeout_ms = stored_member.rebalance_timeout_ms;
    member.protocol_type = stored.protocol_type;
    member.protocols = {GroupProtocol{*stored.protocol, stored_member.subscription}};
    member.assignment = stored_member.assignment;
    group.members_.emplace(member.member_id, std::move(member));
  }
  if (group.members_.empty()) {
    group.state_ = GroupState::kEmpty;
  } else {
    group.state_ = GroupState::kStable;
    group.leader_ = stored.leader;
    if (!group.leader_.has_value() || !group.Has(*group.leader_)) {
      group.leader_ = group.members_.begin()->first;
    }
  }
  return group;
}

}  // namespace ksim
