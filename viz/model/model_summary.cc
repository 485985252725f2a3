// What each trace event is about (EventKind) and its one-line summary for the timeline's
// tooltips and lists. Reads fields leniently: the builder has already checked the ones it uses,
// and a summary never fails (a missing field prints as "?").
#include <string>

#include "viz/model/model_internal.h"
#include "viz/model/model_summary_internal.h"

namespace ksim::viz {
namespace {

using Fields = sim::TraceFields;

// A field as text: strings bare, null as "null", anything else as compact JSON.
std::string Text(const Fields& fields, const char* key) {
  auto it = fields.find(key);
  if (it == fields.end()) return "?";
  if (it->is_string()) return it->get<std::string>();
  return it->dump();
}

std::string Tp(const Fields& f) { return Text(f, "topic") + "-" + Text(f, "partition"); }

bool IsTrue(const Fields& f, const char* key) {
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

}  // namespace

EventKind ClassifyEvent(std::string_view node, std::string_view ev) {
  if (node == "scenario") return EventKind::kAction;
  if (ev == "crash" || ev == "shutdown" || ev == "restart" || ev == "partition" || ev == "heal" ||
      ev == "isolate" || ev == "slow" || ev == "disk_fault" || ev == "zk_session_expired" ||
      ev == "zk_down" || ev == "zk_up" || ev == "broker_session_expired") {
    return EventKind::kFault;
  }
  if (ev == "leader_elected" || ev == "controller_elected" || ev == "controller_resigned" ||
      ev == "partition_offline") {
    return EventKind::kElection;
  }
  if (ev == "isr_shrink" || ev == "isr_expand" || ev == "isr_update_failed") return EventKind::kIsr;
  if (ev == "truncate") return EventKind::kTruncation;
  if (ev == "hw") return EventKind::kHighWatermark;
  if (ev == "append") return EventKind::kAppend;
  if (ev == "send" || ev == "ack" || ev == "error" || ev == "produce_batch" ||
      ev == "produce_retry" || ev == "batch_expired" || ev == "duplicate_batch" ||
      ev.starts_with("producer_id") || ev == "metadata_update") {
    return EventKind::kProduce;
  }
  if (ev == "poll" || ev == "deliver" || ev == "fetch_error" || ev == "offset_reset" ||
      ev == "offset_fetched") {
    return EventKind::kConsume;
  }
  if (ev == "commit" || ev == "offset_commit" || ev == "offsets_committed") {
    return EventKind::kCommit;
  }
  if (ev.starts_with("group_") || ev.starts_with("coordinator_") || ev == "partitions_assigned" ||
      ev == "partitions_revoked") {
    return EventKind::kGroup;
  }
  return EventKind::kOther;
}

std::string SummarizeEvent(const sim::TraceEvent& e) {
  const Fields& f = e.fields;
  const std::string& ev = e.ev;
  const std::string& n = e.node;
  if (ev == "crash") return n + " crashed";
  if (ev == "shutdown") return n + " shut down";
  if (ev == "restart") return n + " restarted (incarnation " + Text(f, "incarnation") + ")";
  if (ev == "partition") {
    return std::string("network partition ") + Text(f, "sides") +
           (IsTrue(f, "one_way") ? " (one way)" : "");
  }
  if (ev == "heal") return "network healed";
  if (ev == "isolate") return n + " isolated";
  if (ev == "slow") {
    return n + " slowed by " + Text(f, "extra_delay_us") + " us for " + Text(f, "for_us") + " us";
  }
  if (ev == "disk_fault") return n + " disk fault " + Text(f, "fault");
  if (ev.starts_with("zk_session_")) {
    return "ZooKeeper session of " + Text(f, "client") + " " + ev.substr(11);
  }
  if (ev == "controller_elected") return n + " became controller (epoch " + Text(f, "epoch") + ")";
  if (ev == "controller_resigned") return n + " resigned as controller";
  if (ev == "leader_elected") {
    return Tp(f) + ": leader " + Text(f, "leader") + " (epoch " + Text(f, "epoch") +
           (IsTrue(f, "unclean") ? ", unclean" : "") + ") isr " + Text(f, "isr");
  }
  if (ev == "partition_offline") return Tp(f) + ": offline (no leader)";
  if (ev == "become_leader") {
    return n + " leads " + Tp(f) + " (epoch " + Text(f, "epoch") + ", leo " + Text(f, "leo") + ")";
  }
  if (ev == "become_follower") {
    return n + " follows " + Text(f, "leader") + " on " + Tp(f) + " (epoch " + Text(f, "epoch") +
           ", leo " + Text(f, "leo") + ")";
  }
  if (ev == "isr_shrink") {
    return Tp(f) + ": isr shrinks to " + Text(f, "isr") + " (-" + Text(f, "removed") + ")";
  }
  if (ev == "isr_expand") {
    return Tp(f) + ": isr expands to " + Text(f, "isr") + " (+" + Text(f, "added") + ")";
  }
  if (ev == "hw") return n + " " + Tp(f) + ": hw " + Text(f, "hw");
  if (ev == "append") {
    return n + " appended " + Tp(f) + " [" + Text(f, "first_offset") + ".." +
           Text(f, "last_offset") + "] as " + Text(f, "role") + " (epoch " + Text(f, "epoch") + ")";
  }
  if (ev == "truncate") {
    return n + " truncated " + Tp(f) + " " + Text(f, "from_leo") + " -> " + Text(f, "to") + " (" +
           Text(f, "records") + " records, " + Text(f, "reason") + ")";
  }
  if (ev == "topic_deleted") return "topic " + Text(f, "topic") + " deleted";
  if (ev == "send") return n + " sent " + Text(f, "record_id");
  if (ev == "ack") {
    return n + " acked " + Text(f, "record_id") + " (" + Tp(f) + "@" + Text(f, "offset") + ")";
  }
  if (ev == "error") {
    return n + " failed " + Text(f, "record_id") + ": " + Text(f, "error") + " (" +
           Text(f, "outcome") + ")";
  }
  if (ev == "deliver") {
    return n + " delivered " + Text(f, "record_id") + " (" + Tp(f) + "@" + Text(f, "offset") +
           ") to " + Text(f, "group");
  }
  if (ev == "poll") return n + " polled " + Text(f, "count") + " records";
  if (ev == "commit") {
    auto error = f.find("error");
    const bool ok = error == f.end() || error->is_null();
    return n + " committed " + Tp(f) + " at " + Text(f, "offset") + " for " + Text(f, "group") +
           (ok ? "" : " failed: " + Text(f, "error"));
  }
  if (ev == "group_state") {
    return Text(f, "group") + ": " + Text(f, "state") + " (generation " + Text(f, "generation") +
           ", " + Text(f, "members") + " members)";
  }
  if (ev == "group_member_added") return Text(f, "group") + ": + " + Text(f, "member");
  if (ev == "group_member_removed") {
    return Text(f, "group") + ": - " + Text(f, "member") + " (" + Text(f, "reason") + ")";
  }
  if (ev == "action") return "action " + Text(f, "index") + ": " + Text(f, "do");
  if (ev == "scenario_start") return "scenario starts";
  return Generic(e);
}

}  // namespace ksim::viz
