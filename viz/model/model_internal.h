// The timeline model's private replay data: every trace event turned, once at Build, into a few
// compact state changes (StateOp) with every name already resolved to an index, so StateAt never
// looks at JSON again. One function, ApplyOp, applies a change to a Snapshot: the builder uses it
// to make the checkpoints and StateAt to replay from them, so a checkpoint and a replay from
// scratch cannot disagree. Owned by the TimelineModel (shared between its copies); immutable
// after Build. Private to viz/model/.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "viz/model/timeline_model.h"

namespace ksim::viz {

enum class OpCode : uint8_t {
  kBrokerStatus,        // a = broker slot, b = NodeStatus, c = incarnation (-1 keep)
  kClientStatus,        // a = client slot, b = NodeStatus, c = incarnation (-1 keep)
  kControllerElected,   // a = broker slot, c = epoch
  kControllerResigned,  // a = broker slot
  kZkSession,           // a = broker slot, b = 1 live / 0 gone
  kAddCut,              // list = cut index; a = isolated broker slot or -1
  kHeal,                // every cut and isolation ends
  kSlow,                // a = broker slot, x = slow until (us)
  kDiskFault,           // a = broker slot, list = string (fault)
  kLeaderElected,       // a = partition, b = leader, c = epoch, x = unclean, list = isr
  kIsr,                 // a = partition, list = isr
  kPartitionOffline,    // a = partition, list = isr
  kBecomeLeader,        // a = partition, b = slot, c = epoch, list = isr, x/y/z = leo/lso/hw
  kBecomeFollower,      // a = partition, b = slot, c = epoch, x/y/z = leo/lso/hw (-1 unknown)
  kReplicaHw,           // a = partition, b = slot, x = hw
  kReplicaAppend,       // a = partition, b = slot, c = epoch, x = leo
  kReplicaTruncate,     // a = partition, b = slot, x = to, y = new log start (-1 keep)
  kTopicDeleted,        // a = partition
  kGroupState,          // a = group, c = generation, list = string (state)
  kGroupMemberAdded,    // a = group, list = string (member)
  kGroupMemberRemoved,  // a = group, list = string (member)
  kCommit,              // a = group, list = string ("t-0"), x = offset
};

struct StateOp {
  OpCode code = OpCode::kHeal;
  int32_t a = -1;
  int32_t b = -1;
  int32_t c = -1;
  uint32_t list = 0;
  int64_t x = -1;
  int64_t y = -1;
  int64_t z = -1;
};

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
void ApplyOp(const ModelReplay& replay, const StateOp& op, TimeUs t_us, Snapshot& state);

// "t-0"
std::string PartitionName(std::string_view topic, int32_t partition);

}  // namespace ksim::viz
