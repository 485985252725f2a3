// The timeline model's private replay data: every trace event turned, once at Build, into a few
// compact state changes (StateOp: one small struct per kind of change) with every name already
// resolved to an index, so StateAt never looks at JSON again. One function, ApplyOp, applies a
// change to a Snapshot: the builder uses it to make the checkpoints and StateAt to replay from
// them, so a checkpoint and a replay from scratch cannot disagree. Owned by the TimelineModel
// (shared between its copies); immutable after Build. Private to viz/model/.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "core/base/types.h"
#include "viz/model/timeline_model.h"

namespace ksim::viz {

// The state changes, one struct per kind, each field named for what it holds. A `*_slot` is a
// position in a Snapshot's vector (brokers by id, clients and groups by name), a
// `replica_slot` a position in partitions()[partition].replicas; `partition` is an index into
// partitions(). The uint32_t fields named for a table (`isr`, `cut`, `fault`, `state`,
// `member`, `partition_name`) index ModelReplay's int_lists, cuts or strings.
namespace op {

struct BrokerStatus {
  int32_t broker_slot = -1;
  NodeStatus status = NodeStatus::kAlive;
  int32_t incarnation = -1;  // -1: unchanged
};
struct ClientStatus {
  int32_t client_slot = -1;
  NodeStatus status = NodeStatus::kAlive;
  int32_t incarnation = -1;  // -1: unchanged
};
struct ControllerElected {
  int32_t broker_slot = -1;
  ControllerEpoch epoch{-1};
};
struct ControllerResigned {
  int32_t broker_slot = -1;
};
struct ZkSession {
  int32_t broker_slot = -1;
  bool live = false;  // created or resumed; false: expired or closed
};
struct AddCut {
  uint32_t cut = 0;                   // into cuts
  int32_t isolated_broker_slot = -1;  // an `isolate` of a broker; -1 a network partition
};
struct Heal {};  // every cut and isolation ends
struct Slow {
  int32_t broker_slot = -1;
  TimeUs until_us = 0;
};
struct DiskFault {
  int32_t broker_slot = -1;
  uint32_t fault = 0;  // into strings
};
struct LeaderElected {
  int32_t partition = -1;
  BrokerId leader{-1};  // -1: none
  LeaderEpoch epoch = kUndefinedEpoch;
  uint32_t isr = 0;  // into int_lists
  bool unclean = false;
};
struct Isr {  // isr_shrink, isr_expand
  int32_t partition = -1;
  uint32_t isr = 0;
};
struct PartitionOffline {
  int32_t partition = -1;
  uint32_t isr = 0;
};
// A replica's log as become_leader / become_follower report it; kUndefinedOffset: not reported
// (the replica's value is kept).
struct ReplicaLog {
  Offset leo = kUndefinedOffset;
  Offset log_start = kUndefinedOffset;
  Offset hw = kUndefinedOffset;
};
struct BecomeLeader {
  int32_t partition = -1;
  int32_t replica_slot = -1;
  LeaderEpoch epoch = kUndefinedEpoch;
  uint32_t isr = 0;
  ReplicaLog log;
};
struct BecomeFollower {
  int32_t partition = -1;
  int32_t replica_slot = -1;
  LeaderEpoch epoch = kUndefinedEpoch;
  ReplicaLog log;
};
struct ReplicaHw {
  int32_t partition = -1;
  int32_t replica_slot = -1;
  Offset hw = kUndefinedOffset;
};
struct ReplicaAppend {
  int32_t partition = -1;
  int32_t replica_slot = -1;
  LeaderEpoch epoch = kUndefinedEpoch;
  Offset leo = kUndefinedOffset;
};
struct ReplicaTruncate {
  int32_t partition = -1;
  int32_t replica_slot = -1;
  Offset leo = kUndefinedOffset;        // the truncation point
  Offset log_start = kUndefinedOffset;  // a new log start (emptied log); kUndefinedOffset: kept
};
struct TopicDeleted {
  int32_t partition = -1;
};
struct GroupState {
  int32_t group_slot = -1;
  int32_t generation = 0;
  uint32_t state = 0;  // into strings
};
struct GroupMemberAdded {
  int32_t group_slot = -1;
  uint32_t member = 0;  // into strings
};
struct GroupMemberRemoved {
  int32_t group_slot = -1;
  uint32_t member = 0;
};
struct Commit {  // a consumer's ok commit
  int32_t group_slot = -1;
  uint32_t partition_name = 0;  // into strings ("t-0")
  Offset offset = kUndefinedOffset;
};

}  // namespace op

// One state change: 48 bytes (the largest, BecomeLeader, and the index).
using StateOp =
    std::variant<op::BrokerStatus, op::ClientStatus, op::ControllerElected, op::ControllerResigned,
                 op::ZkSession, op::AddCut, op::Heal, op::Slow, op::DiskFault, op::LeaderElected,
                 op::Isr, op::PartitionOffline, op::BecomeLeader, op::BecomeFollower, op::ReplicaHw,
                 op::ReplicaAppend, op::ReplicaTruncate, op::TopicDeleted, op::GroupState,
                 op::GroupMemberAdded, op::GroupMemberRemoved, op::Commit>;
static_assert(sizeof(StateOp) <= 48, "ModelReplay keeps one per change of every event");

struct ModelReplay {
  // ops[op_begin[i], op_begin[i + 1]) are events()[i]'s changes; op_begin has events + 1 entries.
  std::vector<StateOp> ops;
  std::vector<uint32_t> op_begin;
  std::vector<std::vector<int32_t>> int_lists;  // ISRs
  std::vector<std::string> strings;             // states, members, partition names, faults
  std::vector<CutView> cuts;
  // MessagesBetween: the longest time a finished message took, and the unfinished ones.
  TimeUs max_flight_us = 0;
  std::vector<uint32_t> unfinished_messages;
  // records() by id (looked up, never iterated).
  std::unordered_map<std::string, int32_t> record_index;
  // The acked records with an offset, sorted by (partition, offset, record): RecordsCommittedBy.
  std::vector<AckedOffset> acked_offsets;
};

// Applies one change to `state` (whose vectors are laid out as the model's: brokers by id,
// partitions as partitions(), groups and clients by name).
void ApplyOp(const ModelReplay& replay, const StateOp& change, TimeUs t_us, Snapshot& state);

// "t-0"
std::string PartitionName(std::string_view topic, int32_t partition);

}  // namespace ksim::viz
