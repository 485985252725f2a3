// What each trace event is about (EventKind) and its one-line summary for the timeline's
// tooltips and lists. Reads fields leniently: the builder has already checked the ones it uses,
// and a summary never fails (a missing field prints as "?").
#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <utility>

#include "core/base/trace_names.h"
#include "viz/model/model_internal.h"
#include "viz/model/model_summary_internal.h"

namespace ksim::viz {
namespace {

using Fields = sim::TraceFields;

// A field as text: strings bare, null as "null", anything else as compact JSON.
std::string Text(const Fields& fields, std::string_view key) {
  auto it = fields.find(key);
  if (it == fields.end()) return "?";
  if (it->is_string()) return it->get<std::string>();
  return it->dump();
}

std::string Tp(const Fields& f) {
  return Text(f, field::kTopic) + "-" + Text(f, field::kPartition);
}

bool IsTrue(const Fields& f, std::string_view key) {
  auto it = f.find(key);
  return it != f.end() && it->is_boolean() && it->get<bool>();
}

std::string Generic(const sim::TraceEvent& e) {
  std::string out = e.node + " " + e.ev;
  int shown = 0;
  for (auto it = e.fields.begin(); it != e.fields.end() && shown < 4; ++it, ++shown) {
    out += " " + it.key() + "=" + (it->is_string() ? it->get<std::string>() : it->dump());
  }
  return out;
}

// What each event is about, sorted by name; an event not listed is kOther.
struct EventKindOf {
  std::string_view ev;
  EventKind kind;
};
constexpr std::array kKinds = {
    EventKindOf{ev::kAck, EventKind::kProduce},
    EventKindOf{ev::kAppend, EventKind::kAppend},
    EventKindOf{ev::kBatchExpired, EventKind::kProduce},
    EventKindOf{ev::kBrokerSessionExpired, EventKind::kFault},
    EventKindOf{ev::kCommit, EventKind::kCommit},
    EventKindOf{ev::kControllerElected, EventKind::kElection},
    EventKindOf{ev::kControllerResigned, EventKind::kElection},
    EventKindOf{ev::kCoordinatorFound, EventKind::kGroup},
    EventKindOf{ev::kCoordinatorUnknown, EventKind::kGroup},
    EventKindOf{ev::kCrash, EventKind::kFault},
    EventKindOf{ev::kDeliver, EventKind::kConsume},
    EventKindOf{ev::kDiskFault, EventKind::kFault},
    EventKindOf{ev::kDuplicateBatch, EventKind::kProduce},
    EventKindOf{ev::kError, EventKind::kProduce},
    EventKindOf{ev::kFetchError, EventKind::kConsume},
    EventKindOf{ev::kGroupJoinFailed, EventKind::kGroup},
    EventKindOf{ev::kGroupJoined, EventKind::kGroup},
    EventKindOf{ev::kGroupLoadError, EventKind::kGroup},
    EventKindOf{ev::kGroupMemberAdded, EventKind::kGroup},
    EventKindOf{ev::kGroupMemberRemoved, EventKind::kGroup},
    EventKindOf{ev::kGroupPartitionLoaded, EventKind::kGroup},
    EventKindOf{ev::kGroupPartitionLoading, EventKind::kGroup},
    EventKindOf{ev::kGroupPartitionUnloaded, EventKind::kGroup},
    EventKindOf{ev::kGroupState, EventKind::kGroup},
    EventKindOf{ev::kHeal, EventKind::kFault},
    EventKindOf{ev::kHw, EventKind::kHighWatermark},
    EventKindOf{ev::kIsolate, EventKind::kFault},
    EventKindOf{ev::kIsrExpand, EventKind::kIsr},
    EventKindOf{ev::kIsrShrink, EventKind::kIsr},
    EventKindOf{ev::kIsrUpdateFailed, EventKind::kIsr},
    EventKindOf{ev::kLeaderElected, EventKind::kElection},
    EventKindOf{ev::kMetadataUpdate, EventKind::kProduce},
    EventKindOf{ev::kOffsetCommit, EventKind::kCommit},
    EventKindOf{ev::kOffsetFetched, EventKind::kConsume},
    EventKindOf{ev::kOffsetReset, EventKind::kConsume},
    EventKindOf{ev::kOffsetsCommitted, EventKind::kCommit},
    EventKindOf{ev::kPartition, EventKind::kFault},
    EventKindOf{ev::kPartitionOffline, EventKind::kElection},
    EventKindOf{ev::kPartitionsAssigned, EventKind::kGroup},
    EventKindOf{ev::kPartitionsRevoked, EventKind::kGroup},
    EventKindOf{ev::kPoll, EventKind::kConsume},
    EventKindOf{ev::kProduceBatch, EventKind::kProduce},
    EventKindOf{ev::kProduceRetry, EventKind::kProduce},
    EventKindOf{ev::kProducerId, EventKind::kProduce},
    EventKindOf{ev::kProducerIdAssigned, EventKind::kProduce},
    EventKindOf{ev::kProducerIdBlock, EventKind::kProduce},
    EventKindOf{ev::kProducerIdBlockError, EventKind::kProduce},
    EventKindOf{ev::kRestart, EventKind::kFault},
    EventKindOf{ev::kSend, EventKind::kProduce},
    EventKindOf{ev::kShutdown, EventKind::kFault},
    EventKindOf{ev::kSlow, EventKind::kFault},
    EventKindOf{ev::kTruncate, EventKind::kTruncation},
    EventKindOf{ev::kZkDown, EventKind::kFault},
    EventKindOf{ev::kZkSessionExpired, EventKind::kFault},
    EventKindOf{ev::kZkUp, EventKind::kFault},
};
static_assert(std::ranges::is_sorted(kKinds, {}, &EventKindOf::ev));

// What became of a ZooKeeper session, by its event.
constexpr std::pair<std::string_view, const char*> kZkSessionChanges[] = {
    {ev::kZkSessionCreated, "created"},
    {ev::kZkSessionResumed, "resumed"},
    {ev::kZkSessionExpired, "expired"},
    {ev::kZkSessionClosed, "closed"},
};

}  // namespace

EventKind ClassifyEvent(std::string_view node, std::string_view name) {
  if (node == node::kScenario) return EventKind::kAction;
  const auto it =
      std::lower_bound(kKinds.begin(), kKinds.end(), name,
                       [](const EventKindOf& a, std::string_view b) { return a.ev < b; });
  return it != kKinds.end() && it->ev == name ? it->kind : EventKind::kOther;
}

std::string SummarizeEvent(const sim::TraceEvent& e) {
  const Fields& f = e.fields;
  const std::string& name = e.ev;
  const std::string& n = e.node;
  if (name == ev::kCrash) return n + " crashed";
  if (name == ev::kShutdown) return n + " shut down";
  if (name == ev::kRestart)
    return n + " restarted (incarnation " + Text(f, field::kIncarnation) + ")";
  if (name == ev::kPartition) {
    return std::string("network partition ") + Text(f, field::kSides) +
           (IsTrue(f, field::kOneWay) ? " (one way)" : "");
  }
  if (name == ev::kHeal) return "network healed";
  if (name == ev::kIsolate) return n + " isolated";
  if (name == ev::kSlow) {
    return n + " slowed by " + Text(f, field::kExtraDelayUs) + " us for " + Text(f, field::kForUs) +
           " us";
  }
  if (name == ev::kDiskFault) return n + " disk fault " + Text(f, field::kFault);
  for (const auto& [session_ev, change] : kZkSessionChanges) {
    if (name == session_ev) return "ZooKeeper session of " + Text(f, field::kClient) + " " + change;
  }
  if (name == ev::kControllerElected)
    return n + " became controller (epoch " + Text(f, field::kEpoch) + ")";
  if (name == ev::kControllerResigned) return n + " resigned as controller";
  if (name == ev::kLeaderElected) {
    return Tp(f) + ": leader " + Text(f, field::kLeader) + " (epoch " + Text(f, field::kEpoch) +
           (IsTrue(f, field::kUnclean) ? ", unclean" : "") + ") isr " + Text(f, field::kIsr);
  }
  if (name == ev::kPartitionOffline) return Tp(f) + ": offline (no leader)";
  if (name == ev::kBecomeLeader) {
    return n + " leads " + Tp(f) + " (epoch " + Text(f, field::kEpoch) + ", leo " +
           Text(f, field::kLeo) + ")";
  }
  if (name == ev::kBecomeFollower) {
    return n + " follows " + Text(f, field::kLeader) + " on " + Tp(f) + " (epoch " +
           Text(f, field::kEpoch) + ", leo " + Text(f, field::kLeo) + ")";
  }
  if (name == ev::kIsrShrink) {
    return Tp(f) + ": isr shrinks to " + Text(f, field::kIsr) + " (-" + Text(f, field::kRemoved) +
           ")";
  }
  if (name == ev::kIsrExpand) {
    return Tp(f) + ": isr expands to " + Text(f, field::kIsr) + " (+" + Text(f, field::kAdded) +
           ")";
  }
  if (name == ev::kHw) return n + " " + Tp(f) + ": hw " + Text(f, field::kHw);
  if (name == ev::kAppend) {
    return n + " appended " + Tp(f) + " [" + Text(f, field::kFirstOffset) + ".." +
           Text(f, field::kLastOffset) + "] as " + Text(f, field::kRole) + " (epoch " +
           Text(f, field::kEpoch) + ")";
  }
  if (name == ev::kTruncate) {
    return n + " truncated " + Tp(f) + " " + Text(f, field::kFromLeo) + " -> " +
           Text(f, field::kTo) + " (" + Text(f, field::kRecords) + " records, " +
           Text(f, field::kReason) + ")";
  }
  if (name == ev::kTopicDeleted) return "topic " + Text(f, field::kTopic) + " deleted";
  if (name == ev::kSend) return n + " sent " + Text(f, field::kRecordId);
  if (name == ev::kAck) {
    return n + " acked " + Text(f, field::kRecordId) + " (" + Tp(f) + "@" +
           Text(f, field::kOffset) + ")";
  }
  if (name == ev::kError) {
    return n + " failed " + Text(f, field::kRecordId) + ": " + Text(f, field::kError) + " (" +
           Text(f, field::kOutcome) + ")";
  }
  if (name == ev::kDeliver) {
    return n + " delivered " + Text(f, field::kRecordId) + " (" + Tp(f) + "@" +
           Text(f, field::kOffset) + ") to " + Text(f, field::kGroup);
  }
  if (name == ev::kPoll) return n + " polled " + Text(f, field::kCount) + " records";
  if (name == ev::kCommit) {
    auto error = f.find(field::kError);
    const bool ok = error == f.end() || error->is_null();
    return n + " committed " + Tp(f) + " at " + Text(f, field::kOffset) + " for " +
           Text(f, field::kGroup) + (ok ? "" : " failed: " + Text(f, field::kError));
  }
  if (name == ev::kGroupState) {
    return Text(f, field::kGroup) + ": " + Text(f, field::kState) + " (generation " +
           Text(f, field::kGeneration) + ", " + Text(f, field::kMembers) + " members)";
  }
  if (name == ev::kGroupMemberAdded)
    return Text(f, field::kGroup) + ": + " + Text(f, field::kMember);
  if (name == ev::kGroupMemberRemoved) {
    return Text(f, field::kGroup) + ": - " + Text(f, field::kMember) + " (" +
           Text(f, field::kReason) + ")";
  }
  if (name == ev::kAction) return "action " + Text(f, field::kIndex) + ": " + Text(f, field::kDo);
  if (name == ev::kScenarioStart) return "scenario starts";
  return Generic(e);
}

}  // namespace ksim::viz
