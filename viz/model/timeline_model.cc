// The timeline model's queries and the one function that applies a state change (ApplyOp); the
// building is in model_builder.cc.
#include "viz/model/timeline_model.h"

#include <algorithm>
#include <variant>

#include "core/base/check.h"
#include "core/base/trace_names.h"
#include "viz/model/model_internal.h"

namespace ksim::viz {

std::string_view EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kFault:
      return "fault";
    case EventKind::kElection:
      return "election";
    case EventKind::kIsr:
      return "isr";
    case EventKind::kTruncation:
      return "truncation";
    case EventKind::kHighWatermark:
      return "high watermark";
    case EventKind::kAppend:
      return "append";
    case EventKind::kProduce:
      return "produce";
    case EventKind::kConsume:
      return "consume";
    case EventKind::kCommit:
      return "commit";
    case EventKind::kGroup:
      return "group";
    case EventKind::kAction:
      return "action";
    case EventKind::kAnomaly:
      return "anomaly";
    case EventKind::kOther:
      return "other";
  }
  return "other";
}

std::string PartitionName(std::string_view topic, int32_t partition) {
  return std::string(topic) + "-" + std::to_string(partition);
}

int32_t LedgerRecord::max_deliveries() const {
  int32_t most = 0;
  for (const Delivery& d : deliveries) most = std::max(most, d.count);
  return most;
}

Fate FateOf(const LedgerRecord& record) {
  if (record.lost()) return Fate::kLost;
  if (record.duplicated()) return Fate::kDuplicated;
  if (record.never_written()) return Fate::kNeverWritten;
  return Fate::kOk;
}

namespace {

bool Contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool ContainsId(const std::vector<int32_t>& ids, int32_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// A replica's leader and in_isr flags follow its partition's leader and ISR.
void RefreshReplicas(PartitionView& p) {
  for (ReplicaView& r : p.replica_states) {
    r.leader = p.leader >= 0 && r.broker == p.leader;
    r.in_isr = ContainsId(p.isr, r.broker);
  }
}

void SetLogState(ReplicaView& r, LeaderEpoch epoch, const op::ReplicaLog& log) {
  if (log.leo.value() >= 0) r.leo = log.leo.value();
  if (log.log_start.value() >= 0) r.log_start_offset = log.log_start.value();
  if (log.hw.value() >= 0) r.hw = log.hw.value();
  r.epoch = epoch.value();
}

// ApplyOp's cases, one per kind of change.
class Applier {
 public:
  Applier(const ModelReplay& replay, Snapshot& state) : replay_(replay), s_(state) {}

  void operator()(const op::BrokerStatus& c) const {
    BrokerView& b = s_.brokers.at(c.broker_slot);
    b.status = c.status;
    if (c.incarnation >= 0) b.incarnation = c.incarnation;
    if (b.status == NodeStatus::kAlive) b.disk_fault.clear();
    for (PartitionView& p : s_.partitions) {
      for (ReplicaView& r : p.replica_states) {
        if (r.broker == b.id) r.online = b.status == NodeStatus::kAlive;
      }
    }
  }
  void operator()(const op::ClientStatus& c) const {
    ClientView& client = s_.clients.at(c.client_slot);
    client.status = c.status;
    if (c.incarnation >= 0) client.incarnation = c.incarnation;
  }
  void operator()(const op::ControllerElected& c) const {
    for (BrokerView& b : s_.brokers) {
      b.controller = false;
      b.controller_epoch = -1;
    }
    s_.brokers.at(c.broker_slot).controller = true;
    s_.brokers.at(c.broker_slot).controller_epoch = c.epoch.value();
  }
  void operator()(const op::ControllerResigned& c) const {
    s_.brokers.at(c.broker_slot).controller = false;
    s_.brokers.at(c.broker_slot).controller_epoch = -1;
  }
  void operator()(const op::ZkSession& c) const {
    s_.brokers.at(c.broker_slot).zk_session = c.live;
  }
  void operator()(const op::AddCut& c) const {
    s_.cuts.push_back(replay_.cuts.at(c.cut));
    if (c.isolated_broker_slot >= 0) s_.brokers.at(c.isolated_broker_slot).isolated = true;
  }
  void operator()(const op::Heal&) const {
    s_.cuts.clear();
    for (BrokerView& b : s_.brokers) b.isolated = false;
  }
  void operator()(const op::Slow& c) const {
    s_.brokers.at(c.broker_slot).slow_until_us = c.until_us;
  }
  void operator()(const op::DiskFault& c) const {
    s_.brokers.at(c.broker_slot).disk_fault = replay_.strings.at(c.fault);
  }
  void operator()(const op::LeaderElected& c) const {
    PartitionView& p = s_.partitions.at(c.partition);
    p.leader = c.leader.value();
    p.leader_epoch = c.epoch.value();
    p.isr = replay_.int_lists.at(c.isr);
    p.elections++;
    p.last_election_unclean = c.unclean;
    RefreshReplicas(p);
  }
  void operator()(const op::Isr& c) const {
    PartitionView& p = s_.partitions.at(c.partition);
    p.isr = replay_.int_lists.at(c.isr);
    RefreshReplicas(p);
  }
  void operator()(const op::PartitionOffline& c) const {
    PartitionView& p = s_.partitions.at(c.partition);
    p.leader = -1;
    p.isr = replay_.int_lists.at(c.isr);
    RefreshReplicas(p);
  }
  void operator()(const op::BecomeLeader& c) const {
    PartitionView& p = s_.partitions.at(c.partition);
    ReplicaView& r = p.replica_states.at(c.replica_slot);
    SetLogState(r, c.epoch, c.log);
    p.leader = r.broker;
    p.leader_epoch = c.epoch.value();
    p.isr = replay_.int_lists.at(c.isr);
    RefreshReplicas(p);
  }
  void operator()(const op::BecomeFollower& c) const {
    SetLogState(Replica(c.partition, c.replica_slot), c.epoch, c.log);
  }
  void operator()(const op::ReplicaHw& c) const {
    Replica(c.partition, c.replica_slot).hw = c.hw.value();
  }
  void operator()(const op::ReplicaAppend& c) const {
    ReplicaView& r = Replica(c.partition, c.replica_slot);
    r.leo = c.leo.value();
    r.epoch = c.epoch.value();
  }
  void operator()(const op::ReplicaTruncate& c) const {
    ReplicaView& r = Replica(c.partition, c.replica_slot);
    r.leo = c.leo.value();
    if (c.log_start.value() >= 0) r.log_start_offset = c.log_start.value();
  }
  void operator()(const op::TopicDeleted& c) const {
    PartitionView& p = s_.partitions.at(c.partition);
    p.leader = -1;
    p.isr.clear();
    for (ReplicaView& r : p.replica_states) {
      r.leo = 0;
      r.hw = 0;
      r.log_start_offset = 0;
    }
    RefreshReplicas(p);
  }
  void operator()(const op::GroupState& c) const {
    GroupView& g = s_.groups.at(c.group_slot);
    g.state = replay_.strings.at(c.state);
    g.generation = c.generation;
  }
  void operator()(const op::GroupMemberAdded& c) const {
    GroupView& g = s_.groups.at(c.group_slot);
    const std::string& member = replay_.strings.at(c.member);
    if (!Contains(g.members, member)) g.members.push_back(member);
  }
  void operator()(const op::GroupMemberRemoved& c) const {
    std::erase(s_.groups.at(c.group_slot).members, replay_.strings.at(c.member));
  }
  void operator()(const op::Commit& c) const {
    GroupView& g = s_.groups.at(c.group_slot);
    const std::string& name = replay_.strings.at(c.partition_name);
    auto it = std::lower_bound(
        g.committed.begin(), g.committed.end(), name,
        [](const std::pair<std::string, int64_t>& e, const std::string& n) { return e.first < n; });
    if (it != g.committed.end() && it->first == name) {
      it->second = c.offset.value();
    } else {
      g.committed.insert(it, {name, c.offset.value()});
    }
  }

 private:
  ReplicaView& Replica(int32_t partition, int32_t slot) const {
    return s_.partitions.at(partition).replica_states.at(slot);
  }

  const ModelReplay& replay_;
  Snapshot& s_;
};

}  // namespace

bool Snapshot::LinkCut(std::string_view from, std::string_view to) const {
  for (const CutView& cut : cuts) {
    if (Contains(cut.from, from) && Contains(cut.to, to)) return true;
    if (!cut.one_way && Contains(cut.from, to) && Contains(cut.to, from)) return true;
  }
  return false;
}

const BrokerView* Snapshot::FindBroker(int32_t id) const {
  for (const BrokerView& b : brokers) {
    if (b.id == id) return &b;
  }
  return nullptr;
}

void ApplyOp(const ModelReplay& replay, const StateOp& change, TimeUs t_us, Snapshot& state) {
  (void)t_us;
  std::visit(Applier(replay, state), change);
}

// ---- Queries ---------------------------------------------------------------------------------

int32_t TimelineModel::NodeIndex(std::string_view node) const {
  auto it = std::lower_bound(nodes_.begin(), nodes_.end(), node);
  if (it == nodes_.end() || *it != node) return -1;
  return static_cast<int32_t>(it - nodes_.begin());
}

int32_t TimelineModel::PartitionIndex(std::string_view topic, int32_t partition) const {
  for (size_t i = 0; i < partitions_.size(); ++i) {
    if (partitions_[i].topic == topic && partitions_[i].partition == partition) {
      return static_cast<int32_t>(i);
    }
  }
  return -1;
}

size_t TimelineModel::EventsAppliedAt(TimeUs t_us) const {
  t_us = std::clamp<TimeUs>(t_us, 0, end_us_);
  auto upper = std::upper_bound(events_.begin(), events_.end(), t_us,
                                [](TimeUs t, const TimelineEvent& e) { return t < e.t_us; });
  return static_cast<size_t>(upper - events_.begin());
}

void TimelineModel::ReplayTo(Snapshot& state, size_t applied) const {
  KSIM_CHECK(state.events_applied <= applied);
  for (size_t i = state.events_applied; i < applied; ++i) {
    for (uint32_t o = replay_->op_begin[i]; o < replay_->op_begin[i + 1]; ++o) {
      ApplyOp(*replay_, replay_->ops[o], events_[i].t_us, state);
    }
  }
  state.events_applied = applied;
}

Snapshot TimelineModel::StateAt(TimeUs t_us) const {
  // Every event at or before t is reflected.
  const size_t applied = EventsAppliedAt(t_us);
  const size_t checkpoint = std::min(applied / kCheckpointEvents, checkpoints_.size() - 1);
  Snapshot state = checkpoints_[checkpoint];
  ReplayTo(state, applied);
  state.t_us = std::clamp<TimeUs>(t_us, 0, end_us_);
  return state;
}

std::vector<Cell> TimelineModel::LogAt(int32_t partition, int32_t broker, TimeUs t_us) const {
  std::vector<Cell> cells;
  std::span<const Cell> history = CellHistory(partition, broker);
  // Cells are in append order, so appended_us never decreases: stop at the first later one.
  auto end = std::upper_bound(history.begin(), history.end(), t_us,
                              [](TimeUs t, const Cell& c) { return t < c.appended_us; });
  for (auto it = history.begin(); it != end; ++it) {
    if (it->removed_us > t_us) cells.push_back(*it);
  }
  // Live cells are appended in offset order except across a truncation and re-append, where the
  // earlier ones were removed first: the survivors are already sorted; keep it certain.
  if (!std::is_sorted(cells.begin(), cells.end(),
                      [](const Cell& a, const Cell& b) { return a.offset < b.offset; })) {
    std::stable_sort(cells.begin(), cells.end(),
                     [](const Cell& a, const Cell& b) { return a.offset < b.offset; });
  }
  return cells;
}

std::span<const Cell> TimelineModel::CellHistory(int32_t partition, int32_t broker) const {
  if (partition < 0 || static_cast<size_t>(partition) >= partitions_.size()) return {};
  const std::vector<int32_t>& replicas = partitions_[partition].replicas;
  auto it = std::find(replicas.begin(), replicas.end(), broker);
  if (it == replicas.end()) return {};
  return cells_[partition][it - replicas.begin()];
}

size_t TimelineModel::FirstEventAtOrAfter(TimeUs t_us) const {
  auto it = std::lower_bound(events_.begin(), events_.end(), t_us,
                             [](const TimelineEvent& e, TimeUs t) { return e.t_us < t; });
  return static_cast<size_t>(it - events_.begin());
}

std::optional<TimeUs> TimelineModel::NextEvent(TimeUs t_us, EventKind kind) const {
  auto it = std::upper_bound(events_.begin(), events_.end(), t_us,
                             [](TimeUs t, const TimelineEvent& e) { return t < e.t_us; });
  for (; it != events_.end(); ++it) {
    if (it->kind == kind) return it->t_us;
  }
  return std::nullopt;
}

std::optional<TimeUs> TimelineModel::PreviousEvent(TimeUs t_us, EventKind kind) const {
  size_t i = FirstEventAtOrAfter(t_us);
  while (i > 0) {
    --i;
    if (events_[i].kind == kind) return events_[i].t_us;
  }
  return std::nullopt;
}

std::vector<const Message*> TimelineModel::MessagesBetween(TimeUs begin_us, TimeUs end_us,
                                                           size_t limit) const {
  std::vector<const Message*> out;
  if (begin_us > end_us || limit == 0) return out;
  const TimeUs from_us = begin_us - replay_->max_flight_us;
  auto it = std::lower_bound(messages_.begin(), messages_.end(), from_us,
                             [](const Message& m, TimeUs t) { return m.sent_us < t; });
  // Unfinished messages sent before the window are in flight through it.
  std::vector<const Message*> early;
  for (uint32_t index : replay_->unfinished_messages) {
    const Message& m = messages_[index];
    if (m.sent_us < from_us) early.push_back(&m);
  }
  for (const Message* m : early) {
    if (out.size() >= limit) return out;
    out.push_back(m);
  }
  for (; it != messages_.end() && it->sent_us <= end_us; ++it) {
    if (out.size() >= limit) break;
    const TimeUs finished_us = it->delivered_us >= 0 ? it->delivered_us
                               : it->dropped_us >= 0 ? it->dropped_us
                                                     : kNever;
    if (finished_us < begin_us) continue;
    out.push_back(&*it);
  }
  return out;
}

std::vector<EventKindCounts> TimelineModel::EventHistogram(int columns) const {
  KSIM_CHECK(columns > 0);
  std::vector<EventKindCounts> counts(static_cast<size_t>(columns), EventKindCounts{});
  const TimeUs end_us = std::max<TimeUs>(end_us_, 1);
  for (const TimelineEvent& e : events_) {
    const TimeUs t_us = std::clamp<TimeUs>(e.t_us, 0, end_us);
    const int column = std::min<int>(columns - 1, static_cast<int>(t_us * columns / end_us));
    ++counts[static_cast<size_t>(column)][static_cast<size_t>(e.kind)];
  }
  return counts;
}

HighWatermarkChange TimelineModel::HighWatermarkChangeAt(size_t event) const {
  KSIM_CHECK(event < events_.size());
  const TimelineEvent& e = events_[event];
  HighWatermarkChange change;
  if (e.partition < 0 || e.node < 0) return change;
  const std::string& node = nodes_[static_cast<size_t>(e.node)];
  // The replica of the event's node, in a snapshot laid out as every other.
  const auto replica = [&](const Snapshot& s) -> const ReplicaView* {
    for (const ReplicaView& r : s.partitions[static_cast<size_t>(e.partition)].replica_states) {
      const BrokerView* broker = s.FindBroker(r.broker);
      if (broker != nullptr && broker->node == node) return &r;
    }
    return nullptr;
  };
  Snapshot state = StateAt(e.t_us - 1);
  if (const ReplicaView* before = replica(state)) change.before = before->hw;
  ReplayTo(state, EventsAppliedAt(e.t_us));
  if (const ReplicaView* after = replica(state)) {
    change.after = after->hw;
    change.leader = after->leader;
  }
  return change;
}

std::span<const AckedOffset> TimelineModel::RecordsCommittedBy(
    int32_t partition, const HighWatermarkChange& change) const {
  if (!change.leader || change.after <= change.before) return {};
  const std::vector<AckedOffset>& acked = replay_->acked_offsets;
  const auto less = [](const AckedOffset& a, std::pair<int32_t, int64_t> b) {
    return std::make_pair(a.partition, a.offset) < b;
  };
  const auto first =
      std::lower_bound(acked.begin(), acked.end(),
                       std::make_pair(partition, std::max<int64_t>(change.before, 0)), less);
  const auto last =
      std::lower_bound(first, acked.end(), std::make_pair(partition, change.after), less);
  return {first, last};
}

std::optional<NeverWrittenCause> TimelineModel::WhyNeverWritten(int32_t record) const {
  KSIM_CHECK(record >= 0);
  KSIM_CHECK(static_cast<size_t>(record) < records_.size());
  const LedgerRecord& r = records_[static_cast<size_t>(record)];
  if (!r.never_written() || r.sent_us < 0) return std::nullopt;
  NeverWrittenCause cause;
  cause.partition = r.partition >= 0 ? PartitionIndex(r.topic, r.partition) : -1;
  if (cause.partition >= 0) {
    const Snapshot at = StateAt(r.sent_us);
    const PartitionView& view = at.partitions[static_cast<size_t>(cause.partition)];
    const BrokerView* leader = view.leader >= 0 ? at.FindBroker(view.leader) : nullptr;
    if (leader == nullptr) {
      cause.leader = LeaderAtSend::kNone;
    } else {
      cause.leader_node = leader->node;
      if (leader->status != NodeStatus::kAlive) {
        cause.leader = LeaderAtSend::kDown;
        cause.leader_down_event = LastDownEvent(leader->node, r.sent_us);
      } else {
        cause.leader =
            at.LinkCut(r.producer, leader->node) ? LeaderAtSend::kCut : LeaderAtSend::kReachable;
      }
    }
  }
  cause.gave_up = !r.error.empty();
  for (uint32_t e : r.events) {
    // Never acknowledged, yet answered: an ack without an offset (acks=0).
    if (events_[e].ev == ev::kAck) cause.acks_zero = true;
  }
  return cause;
}

int32_t TimelineModel::LastDownEvent(std::string_view node, TimeUs t_us) const {
  for (size_t e = FirstEventAtOrAfter(t_us + 1); e-- > 0;) {
    const TimelineEvent& event = events_[e];
    if (event.node >= 0 && nodes_[static_cast<size_t>(event.node)] == node &&
        (event.ev == ev::kCrash || event.ev == ev::kShutdown)) {
      return static_cast<int32_t>(e);
    }
  }
  return -1;
}

int32_t TimelineModel::RecordIndex(std::string_view record_id) const {
  auto it = replay_->record_index.find(std::string(record_id));
  return it == replay_->record_index.end() ? -1 : it->second;
}

int32_t TimelineModel::ProducerIndex(std::string_view client) const {
  auto it = std::lower_bound(producers_.begin(), producers_.end(), client);
  if (it == producers_.end() || *it != client) return -1;
  return static_cast<int32_t>(it - producers_.begin());
}

}  // namespace ksim::viz
