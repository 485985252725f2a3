// TimelineModel::Build: two passes over the trace. The first finds who exists (nodes, brokers,
// partitions and their replicas, groups, clients), so every snapshot has the same layout; the
// second turns each event into compact state changes (ApplyOp, shared with StateAt), cells of the
// replicas' logs, ledger entries and the timeline's events, keeping a checkpoint Snapshot every
// kCheckpointEvents events. The verdict gives the end time, metrics, expectations, anomalies and
// the final committed logs (audit). Every malformed field is kCorruption "<name>:<line>: ...".
#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "core/base/trace_names.h"
#include "viz/model/model_internal.h"
#include "viz/model/model_summary_internal.h"
#include "viz/model/timeline_model.h"

namespace ksim::viz {
namespace {

using Fields = sim::TraceFields;

// "broker-12" -> 12; -1 for any other node.
int32_t BrokerOfNode(std::string_view name) {
  if (!name.starts_with(node::kBrokerPrefix) || name.size() == node::kBrokerPrefix.size() ||
      name.size() > 16) {
    return -1;
  }
  int32_t id = 0;
  for (char c : name.substr(node::kBrokerPrefix.size())) {
    if (c < '0' || c > '9') return -1;
    id = id * 10 + (c - '0');
  }
  return id;
}

bool IsInfrastructure(std::string_view name) {
  return name == node::kZooKeeper || name == node::kWorld || name == node::kScenario ||
         name == node::kChecker || BrokerOfNode(name) >= 0;
}

bool IsPartitionEvent(std::string_view name) {
  return name == ev::kLeaderElected || name == ev::kBecomeLeader || name == ev::kBecomeFollower ||
         name == ev::kIsrShrink || name == ev::kIsrExpand || name == ev::kHw ||
         name == ev::kAppend || name == ev::kTruncate || name == ev::kPartitionOffline;
}

}  // namespace

class ModelBuilder {
 public:
  ModelBuilder(const sim::Trace& trace, std::string_view name)
      : trace_(trace), name_(name), replay_(std::make_shared<ModelReplay>()) {}

  Result<TimelineModel> Build();

 private:
  // Field access: each error names the file, the line and the field.
  Status Error(const sim::TraceEvent& e, const std::string& what) const {
    return Status(Errc::kCorruption,
                  name_ + ":" + std::to_string(e.line) + ": " + e.ev + " event: " + what);
  }
  // "field 'topic' missing or not a string"
  Status FieldError(const sim::TraceEvent& e, std::string_view key, std::string_view what) const {
    return Error(e, "field '" + std::string(key) + "' " + std::string(what));
  }
  Result<int64_t> Int(const sim::TraceEvent& e, std::string_view key) const {
    auto it = e.fields.find(key);
    if (it == e.fields.end() || !it->is_number_integer()) {
      return FieldError(e, key, "missing or not an integer");
    }
    return it->get<int64_t>();
  }
  Result<int64_t> IntOr(const sim::TraceEvent& e, std::string_view key, int64_t absent) const {
    if (!e.fields.contains(key) || e.fields.at(key).is_null()) return absent;
    return Int(e, key);
  }
  Result<std::string> Str(const sim::TraceEvent& e, std::string_view key) const {
    auto it = e.fields.find(key);
    if (it == e.fields.end() || !it->is_string()) {
      return FieldError(e, key, "missing or not a string");
    }
    return it->get<std::string>();
  }
  Result<std::optional<std::string>> StrOrNull(const sim::TraceEvent& e,
                                               std::string_view key) const {
    auto it = e.fields.find(key);
    if (it != e.fields.end() && it->is_null()) return std::optional<std::string>();
    KSIM_ASSIGN_OR_RETURN(std::string s, Str(e, key));
    return std::optional<std::string>(std::move(s));
  }
  Result<std::vector<int32_t>> IntList(const sim::TraceEvent& e, std::string_view key) const {
    auto it = e.fields.find(key);
    if (it == e.fields.end() || !it->is_array()) {
      return FieldError(e, key, "missing or not an array");
    }
    std::vector<int32_t> out;
    for (const auto& v : *it) {
      if (!v.is_number_integer()) return FieldError(e, key, "not integers");
      out.push_back(v.get<int32_t>());
    }
    return out;
  }
  Result<std::vector<std::vector<std::string>>> Sides(const sim::TraceEvent& e) const {
    auto it = e.fields.find(field::kSides);
    std::vector<std::vector<std::string>> sides;
    if (it == e.fields.end() || !it->is_array())
      return FieldError(e, field::kSides, "not an array");
    for (const auto& side : *it) {
      if (!side.is_array()) return FieldError(e, field::kSides, "not arrays of names");
      sides.emplace_back();
      for (const auto& node : side) {
        if (!node.is_string()) return FieldError(e, field::kSides, "not arrays of names");
        sides.back().push_back(node.get<std::string>());
      }
    }
    return sides;
  }
  Result<int32_t> Partition(const sim::TraceEvent& e) const {
    KSIM_ASSIGN_OR_RETURN(std::string topic, Str(e, field::kTopic));
    KSIM_ASSIGN_OR_RETURN(int64_t partition, Int(e, field::kPartition));
    auto it = partition_index_.find({topic, static_cast<int32_t>(partition)});
    if (it == partition_index_.end()) return Error(e, "unknown partition");
    return it->second;
  }
  int32_t Slot(int32_t partition, int32_t broker) const {
    const std::vector<int32_t>& r = model_.partitions_[partition].replicas;
    auto it = std::find(r.begin(), r.end(), broker);
    return it == r.end() ? -1 : static_cast<int32_t>(it - r.begin());
  }
  int32_t BrokerSlot(int32_t id) const {
    for (size_t i = 0; i < state_.brokers.size(); ++i) {
      if (state_.brokers[i].id == id) return static_cast<int32_t>(i);
    }
    return -1;
  }
  int32_t ClientSlot(std::string_view id) const {
    for (size_t i = 0; i < state_.clients.size(); ++i) {
      if (state_.clients[i].id == id) return static_cast<int32_t>(i);
    }
    return -1;
  }
  int32_t GroupSlot(std::string_view group) const {
    for (size_t i = 0; i < state_.groups.size(); ++i) {
      if (state_.groups[i].group == group) return static_cast<int32_t>(i);
    }
    return -1;
  }
  uint32_t Intern(const std::string& s) {
    auto [it, added] = string_index_.try_emplace(s, replay_->strings.size());
    if (added) replay_->strings.push_back(s);
    return it->second;
  }
  uint32_t List(std::vector<int32_t> list) {
    replay_->int_lists.push_back(std::move(list));
    return static_cast<uint32_t>(replay_->int_lists.size() - 1);
  }

  Status Discover();
  Status AddPartitionFacts(const sim::TraceEvent& e);
  void MakeInitialState();
  Status Replay();
  Status OnEvent(const sim::TraceEvent& e);
  Status OnPartitionEvent(const sim::TraceEvent& e, TimelineEvent& te);
  Status OnClientEvent(const sim::TraceEvent& e, TimelineEvent& te);
  Status OnMessage(const sim::TraceEvent& e);
  Status ReadVerdict();
  // A new timeline event: a checkpoint first when one is due.
  void BeginEvent();
  void Op(const StateOp& change) {
    ApplyOp(*replay_, change, now_us_, state_);
    replay_->ops.push_back(change);
  }
  void FlushAnomaliesBefore(TimeUs t_us, bool all);
  // Cells: remove the live cells of (partition, slot) at offsets >= from, or < below.
  void RemoveFrom(int32_t p, int32_t slot, int64_t from, bool truncated, uint32_t event);
  void RemoveBelow(int32_t p, int32_t slot, int64_t below, uint32_t event);
  void AddRecordEvent(int32_t record, uint32_t event);
  // What the queries answer from the finished ledger and messages: the ledger's counts, the
  // acked offsets, the message diagram's nodes.
  void AddDerivedAnswers();
  int32_t RecordOfValue(const std::string& value) const;

  const sim::Trace& trace_;
  std::string name_;
  TimelineModel model_;
  std::shared_ptr<ModelReplay> replay_;
  Snapshot state_;
  TimeUs now_us_ = 0;

  std::map<std::pair<std::string, int32_t>, int32_t> partition_index_;
  std::unordered_map<std::string, uint32_t> string_index_;
  std::unordered_map<int64_t, uint32_t> message_index_;
  std::unordered_map<std::string, std::vector<int32_t>> records_by_value_;  // send order
  std::vector<std::vector<std::deque<uint32_t>>> live_;  // live cells, in offset order
  std::vector<size_t> anomaly_order_;  // anomalies by cause time, for their events
  size_t next_anomaly_ = 0;
};

Status ModelBuilder::AddPartitionFacts(const sim::TraceEvent& e) {
  KSIM_ASSIGN_OR_RETURN(std::string topic, Str(e, field::kTopic));
  KSIM_ASSIGN_OR_RETURN(int64_t partition, Int(e, field::kPartition));
  auto [it, added] = partition_index_.try_emplace({topic, static_cast<int32_t>(partition)}, 0);
  (void)it;
  (void)added;
  return Status::Ok();
}

Status ModelBuilder::Discover() {
  std::set<std::string> nodes;
  std::set<int32_t> brokers;
  std::set<std::string> groups;
  std::map<std::string, ClientKind> clients;
  std::map<std::pair<std::string, int32_t>, std::vector<int32_t>> replicas;
  auto add_replica = [&](const std::pair<std::string, int32_t>& tp, int32_t broker) {
    std::vector<int32_t>& r = replicas[tp];
    if (broker >= 0 && std::find(r.begin(), r.end(), broker) == r.end()) r.push_back(broker);
    brokers.insert(broker);
  };
  for (const sim::TraceEvent& e : trace_.events) {
    nodes.insert(e.node);
    const int32_t node_broker = BrokerOfNode(e.node);
    if (node_broker >= 0) brokers.insert(node_broker);
    if (sim::IsMessageEv(e.ev)) {
      for (std::string_view key : {field::kFrom, field::kTo}) {
        auto it = e.fields.find(key);
        if (it != e.fields.end() && it->is_string()) nodes.insert(it->get<std::string>());
      }
      continue;
    }
    if (e.ev == ev::kBrokerRegistered) {
      KSIM_ASSIGN_OR_RETURN(int64_t id, Int(e, field::kBroker));
      brokers.insert(static_cast<int32_t>(id));
    } else if (e.ev == ev::kPartition) {
      KSIM_ASSIGN_OR_RETURN(auto sides, Sides(e));
      for (const auto& side : sides) nodes.insert(side.begin(), side.end());
    } else if (IsPartitionEvent(e.ev) && node_broker >= 0) {
      KSIM_ASSIGN_OR_RETURN(std::string topic, Str(e, field::kTopic));
      KSIM_ASSIGN_OR_RETURN(int64_t partition, Int(e, field::kPartition));
      const std::pair<std::string, int32_t> tp{topic, static_cast<int32_t>(partition)};
      if (e.ev == ev::kBecomeLeader) {
        KSIM_ASSIGN_OR_RETURN(auto assigned, IntList(e, field::kReplicas));
        for (int32_t b : assigned) add_replica(tp, b);
      }
      if (e.ev == ev::kLeaderElected) {
        KSIM_ASSIGN_OR_RETURN(int64_t leader, Int(e, field::kLeader));
        KSIM_ASSIGN_OR_RETURN(auto isr, IntList(e, field::kIsr));
        if (leader >= 0) add_replica(tp, static_cast<int32_t>(leader));
        for (int32_t b : isr) add_replica(tp, b);
      } else if (e.ev == ev::kPartitionOffline) {
        replicas[tp];
      } else {
        add_replica(tp, node_broker);
      }
    } else if (e.ev == ev::kGroupState || e.ev == ev::kGroupMemberAdded ||
               e.ev == ev::kGroupMemberRemoved) {
      KSIM_ASSIGN_OR_RETURN(std::string group, Str(e, field::kGroup));
      groups.insert(group);
    }
    if (!IsInfrastructure(e.node)) {
      ClientKind& kind = clients.try_emplace(e.node, ClientKind::kOther).first->second;
      if (e.ev == ev::kSend) kind = ClientKind::kProducer;
      if (kind == ClientKind::kOther && (e.ev == ev::kPoll || e.ev == ev::kDeliver ||
                                         e.ev == ev::kGroupJoined || e.ev == ev::kCommit)) {
        kind = ClientKind::kConsumer;
      }
      if (e.ev == ev::kConsumerRegistered) kind = ClientKind::kOldConsumer;
      if (e.ev == ev::kCommit) {
        KSIM_ASSIGN_OR_RETURN(std::string group, Str(e, field::kGroup));
        if (!group.empty()) groups.insert(group);
      }
    }
  }
  for (int32_t b : brokers) {
    if (b >= 0) nodes.insert(node::Broker(BrokerId(b)));
  }
  model_.nodes_.assign(nodes.begin(), nodes.end());
  for (int32_t b : brokers) {
    if (b < 0) continue;
    BrokerView view;
    view.id = b;
    view.node = node::Broker(BrokerId(b));
    state_.brokers.push_back(view);
  }
  for (const auto& [tp, assigned] : replicas) {
    partition_index_[tp] = static_cast<int32_t>(model_.partitions_.size());
    PartitionView view;
    view.topic = tp.first;
    view.partition = tp.second;
    view.replicas = assigned;
    for (int32_t b : assigned) {
      ReplicaView r;
      r.broker = b;
      view.replica_states.push_back(r);
    }
    model_.partitions_.push_back(view);
  }
  state_.partitions = model_.partitions_;
  for (const std::string& g : groups) {
    GroupView view;
    view.group = g;
    state_.groups.push_back(view);
  }
  for (const auto& [id, kind] : clients) {
    ClientView view;
    view.id = id;
    view.kind = kind;
    state_.clients.push_back(view);
    if (kind == ClientKind::kProducer) model_.producers_.push_back(id);
  }
  model_.cells_.resize(model_.partitions_.size());
  live_.resize(model_.partitions_.size());
  for (size_t p = 0; p < model_.partitions_.size(); ++p) {
    model_.cells_[p].resize(model_.partitions_[p].replicas.size());
    live_[p].resize(model_.partitions_[p].replicas.size());
  }
  return Status::Ok();
}

void ModelBuilder::BeginEvent() {
  const size_t index = model_.events_.size();
  if (index % TimelineModel::kCheckpointEvents == 0) {
    Snapshot checkpoint = state_;
    checkpoint.events_applied = index;
    checkpoint.t_us = now_us_;
    model_.checkpoints_.push_back(std::move(checkpoint));
  }
  replay_->op_begin.push_back(static_cast<uint32_t>(replay_->ops.size()));
}

void ModelBuilder::AddRecordEvent(int32_t record, uint32_t event) {
  if (record < 0 || static_cast<size_t>(record) >= model_.records_.size()) return;
  std::vector<uint32_t>& events = model_.records_[record].events;
  if (events.empty() || events.back() != event) events.push_back(event);
}

int32_t ModelBuilder::RecordOfValue(const std::string& value) const {
  auto it = records_by_value_.find(value);
  if (it == records_by_value_.end()) return -1;
  // The latest send of this value at or before now (sends come in time order).
  for (auto r = it->second.rbegin(); r != it->second.rend(); ++r) {
    if (model_.records_[*r].sent_us <= now_us_) return *r;
  }
  return -1;
}

void ModelBuilder::RemoveFrom(int32_t p, int32_t slot, int64_t from, bool truncated,
                              uint32_t event) {
  std::deque<uint32_t>& live = live_[p][slot];
  std::vector<Cell>& cells = model_.cells_[p][slot];
  while (!live.empty() && cells[live.back()].offset >= from) {
    Cell& cell = cells[live.back()];
    cell.removed_us = now_us_;
    cell.truncated = truncated;
    AddRecordEvent(cell.record, event);
    live.pop_back();
  }
}

void ModelBuilder::RemoveBelow(int32_t p, int32_t slot, int64_t below, uint32_t event) {
  std::deque<uint32_t>& live = live_[p][slot];
  std::vector<Cell>& cells = model_.cells_[p][slot];
  while (!live.empty() && cells[live.front()].offset < below) {
    Cell& cell = cells[live.front()];
    cell.removed_us = now_us_;
    cell.truncated = false;
    AddRecordEvent(cell.record, event);
    live.pop_front();
  }
}

void ModelBuilder::FlushAnomaliesBefore(TimeUs t_us, bool all) {
  while (next_anomaly_ < anomaly_order_.size()) {
    const size_t index = anomaly_order_[next_anomaly_];
    const Anomaly& a = model_.anomalies_[index];
    if (!all && a.cause_t_us >= t_us) return;
    ++next_anomaly_;
    now_us_ = std::max(now_us_, a.cause_t_us);
    BeginEvent();
    TimelineEvent te;
    te.t_us = now_us_;
    te.kind = EventKind::kAnomaly;
    te.node = model_.NodeIndex(node::kChecker);
    te.ev = kAnomalyEv;
    te.summary = a.kind + " " + a.record_id + ": " + a.cause;
    te.partition = a.topic.empty() ? -1 : model_.PartitionIndex(a.topic, a.partition);
    te.record = a.record;
    te.line = trace_.verdict.line;
    AddRecordEvent(a.record, static_cast<uint32_t>(model_.events_.size()));
    model_.events_.push_back(std::move(te));
  }
}

Status ModelBuilder::Replay() {
  for (const sim::TraceEvent& e : trace_.events) {
    FlushAnomaliesBefore(e.t_us, false);
    now_us_ = e.t_us;
    if (sim::IsMessageEv(e.ev)) {
      KSIM_RETURN_IF_ERROR(OnMessage(e));
    } else {
      KSIM_RETURN_IF_ERROR(OnEvent(e));
    }
  }
  FlushAnomaliesBefore(kNever, true);
  now_us_ = std::max(now_us_, model_.end_us_);
  replay_->op_begin.push_back(static_cast<uint32_t>(replay_->ops.size()));
  return Status::Ok();
}

Status ModelBuilder::OnMessage(const sim::TraceEvent& e) {
  if (e.ev == ev::kMsgDisconnect) return Status::Ok();
  KSIM_ASSIGN_OR_RETURN(int64_t id, Int(e, field::kId));
  if (e.ev == ev::kMsgSend) {
    Message m;
    m.id = id;
    KSIM_ASSIGN_OR_RETURN(std::string from, Str(e, field::kFrom));
    KSIM_ASSIGN_OR_RETURN(std::string to, Str(e, field::kTo));
    KSIM_ASSIGN_OR_RETURN(m.kind, Str(e, field::kKind));
    KSIM_ASSIGN_OR_RETURN(int64_t size, IntOr(e, field::kSizeBytes, 0));
    m.from = model_.NodeIndex(from);
    m.to = model_.NodeIndex(to);
    m.size_bytes = static_cast<int32_t>(size);
    m.sent_us = e.t_us;
    message_index_[id] = static_cast<uint32_t>(model_.messages_.size());
    model_.messages_.push_back(std::move(m));
    return Status::Ok();
  }
  auto it = message_index_.find(id);
  if (it == message_index_.end()) return Status::Ok();  // sent before the trace began
  Message& m = model_.messages_[it->second];
  if (e.ev == ev::kMsgDeliver) {
    m.delivered_us = e.t_us;
  } else if (e.ev == ev::kMsgDrop) {
    m.dropped_us = e.t_us;
    auto reason = e.fields.find(field::kReason);
    if (reason != e.fields.end() && reason->is_string()) m.drop_reason = reason->get<std::string>();
  }
  return Status::Ok();
}

Status ModelBuilder::OnEvent(const sim::TraceEvent& e) {
  BeginEvent();
  const uint32_t index = static_cast<uint32_t>(model_.events_.size());
  TimelineEvent te;
  te.t_us = e.t_us;
  te.kind = ClassifyEvent(e.node, e.ev);
  te.node = model_.NodeIndex(e.node);
  te.ev = e.ev;
  te.line = e.line;
  const int32_t node_broker = BrokerOfNode(e.node);
  const int32_t broker_slot = node_broker >= 0 ? BrokerSlot(node_broker) : -1;
  const int32_t client_slot = ClientSlot(e.node);
  const std::string& name = e.ev;
  if (name == ev::kCrash || name == ev::kShutdown || name == ev::kRestart) {
    const NodeStatus status = name == ev::kCrash      ? NodeStatus::kCrashed
                              : name == ev::kShutdown ? NodeStatus::kShutDown
                                                      : NodeStatus::kAlive;
    KSIM_ASSIGN_OR_RETURN(int64_t incarnation, IntOr(e, field::kIncarnation, -1));
    if (broker_slot >= 0) {
      Op(op::BrokerStatus{.broker_slot = broker_slot,
                          .status = status,
                          .incarnation = static_cast<int32_t>(incarnation)});
    } else if (client_slot >= 0) {
      Op(op::ClientStatus{.client_slot = client_slot,
                          .status = status,
                          .incarnation = static_cast<int32_t>(incarnation)});
    }
  } else if (name == ev::kControllerElected && broker_slot >= 0) {
    KSIM_ASSIGN_OR_RETURN(int64_t epoch, Int(e, field::kEpoch));
    Op(op::ControllerElected{.broker_slot = broker_slot,
                             .epoch = ControllerEpoch(static_cast<int32_t>(epoch))});
  } else if (name == ev::kControllerResigned && broker_slot >= 0) {
    Op(op::ControllerResigned{.broker_slot = broker_slot});
  } else if (name == ev::kZkSessionCreated || name == ev::kZkSessionResumed ||
             name == ev::kZkSessionExpired || name == ev::kZkSessionClosed) {
    KSIM_ASSIGN_OR_RETURN(std::string client, Str(e, field::kClient));
    const int32_t b = BrokerOfNode(client);
    const int32_t slot = b >= 0 ? BrokerSlot(b) : -1;
    const bool live = name == ev::kZkSessionCreated || name == ev::kZkSessionResumed;
    if (slot >= 0) Op(op::ZkSession{.broker_slot = slot, .live = live});
  } else if (name == ev::kPartition && e.node == node::kWorld) {
    KSIM_ASSIGN_OR_RETURN(auto sides, Sides(e));
    auto one_way = e.fields.find(field::kOneWay);
    for (size_t i = 0; i < sides.size(); ++i) {
      for (size_t j = i + 1; j < sides.size(); ++j) {
        CutView cut{sides[i], sides[j],
                    one_way != e.fields.end() && one_way->is_boolean() && one_way->get<bool>()};
        replay_->cuts.push_back(std::move(cut));
        Op(op::AddCut{.cut = static_cast<uint32_t>(replay_->cuts.size() - 1)});
      }
    }
  } else if (name == ev::kHeal) {
    Op(op::Heal{});
  } else if (name == ev::kIsolate) {
    CutView cut;
    cut.from = {e.node};
    for (const std::string& n : model_.nodes_) {
      if (n != e.node && n != node::kScenario && n != node::kChecker && n != node::kWorld)
        cut.to.push_back(n);
    }
    replay_->cuts.push_back(std::move(cut));
    Op(op::AddCut{.cut = static_cast<uint32_t>(replay_->cuts.size() - 1),
                  .isolated_broker_slot = broker_slot});
  } else if (name == ev::kSlow && broker_slot >= 0) {
    KSIM_ASSIGN_OR_RETURN(int64_t for_us, Int(e, field::kForUs));
    Op(op::Slow{.broker_slot = broker_slot, .until_us = e.t_us + for_us});
  } else if (name == ev::kDiskFault && broker_slot >= 0) {
    KSIM_ASSIGN_OR_RETURN(std::string fault, Str(e, field::kFault));
    Op(op::DiskFault{.broker_slot = broker_slot, .fault = Intern(fault)});
  } else if (IsPartitionEvent(name) && node_broker >= 0) {
    KSIM_RETURN_IF_ERROR(OnPartitionEvent(e, te));
  } else if (name == ev::kTopicDeleted) {
    KSIM_ASSIGN_OR_RETURN(std::string topic, Str(e, field::kTopic));
    for (const auto& [tp, p] : partition_index_) {
      if (tp.first != topic) continue;
      Op(op::TopicDeleted{.partition = p});
      for (size_t slot = 0; slot < live_[p].size(); ++slot) {
        RemoveFrom(p, static_cast<int32_t>(slot), 0, false, index);
      }
    }
  } else if ((name == ev::kGroupState || name == ev::kGroupMemberAdded ||
              name == ev::kGroupMemberRemoved) &&
             node_broker >= 0) {
    KSIM_ASSIGN_OR_RETURN(std::string group, Str(e, field::kGroup));
    const int32_t g = GroupSlot(group);
    if (name == ev::kGroupState) {
      KSIM_ASSIGN_OR_RETURN(std::string state, Str(e, field::kState));
      KSIM_ASSIGN_OR_RETURN(int64_t generation, Int(e, field::kGeneration));
      Op(op::GroupState{
          .group_slot = g, .generation = static_cast<int32_t>(generation), .state = Intern(state)});
    } else {
      KSIM_ASSIGN_OR_RETURN(std::string member, Str(e, field::kMember));
      if (name == ev::kGroupMemberAdded) {
        Op(op::GroupMemberAdded{.group_slot = g, .member = Intern(member)});
      } else {
        Op(op::GroupMemberRemoved{.group_slot = g, .member = Intern(member)});
      }
    }
  } else if (e.node == node::kScenario) {
    if (name == ev::kScenarioStart) {
      model_.start_us_ = e.t_us;
      auto description = e.fields.find(field::kDescription);
      if (description != e.fields.end() && description->is_string()) {
        model_.description_ = description->get<std::string>();
      }
    } else if (name == ev::kAction) {
      ScenarioAction action;
      KSIM_ASSIGN_OR_RETURN(int64_t action_index, Int(e, field::kIndex));
      KSIM_ASSIGN_OR_RETURN(action.at_ms, IntOr(e, field::kAtMs, 0));
      KSIM_ASSIGN_OR_RETURN(action.text, Str(e, field::kDo));
      action.index = static_cast<int32_t>(action_index);
      action.t_us = e.t_us;
      for (auto it = e.fields.begin(); it != e.fields.end(); ++it) {
        if (it.key() == field::kIndex || it.key() == field::kAtMs || it.key() == field::kDo)
          continue;
        action.text +=
            " " + it.key() + " " + (it->is_string() ? it->get<std::string>() : it->dump());
      }
      model_.actions_.push_back(std::move(action));
    }
  } else if (client_slot >= 0) {
    KSIM_RETURN_IF_ERROR(OnClientEvent(e, te));
  }
  te.summary = SummarizeEvent(e);
  if (te.record >= 0) AddRecordEvent(te.record, index);
  model_.events_.push_back(std::move(te));
  return Status::Ok();
}

Status ModelBuilder::OnPartitionEvent(const sim::TraceEvent& e, TimelineEvent& te) {
  const std::string& name = e.ev;
  const uint32_t index = static_cast<uint32_t>(model_.events_.size());
  KSIM_ASSIGN_OR_RETURN(const int32_t p, Partition(e));
  te.partition = p;
  if (name == ev::kLeaderElected) {
    KSIM_ASSIGN_OR_RETURN(int64_t leader, Int(e, field::kLeader));
    KSIM_ASSIGN_OR_RETURN(int64_t epoch, Int(e, field::kEpoch));
    KSIM_ASSIGN_OR_RETURN(auto isr, IntList(e, field::kIsr));
    auto unclean = e.fields.find(field::kUnclean);
    const bool is_unclean =
        unclean != e.fields.end() && unclean->is_boolean() && unclean->get<bool>();
    Op(op::LeaderElected{.partition = p,
                         .leader = BrokerId(static_cast<int32_t>(leader)),
                         .epoch = LeaderEpoch(static_cast<int32_t>(epoch)),
                         .isr = List(std::move(isr)),
                         .unclean = is_unclean});
    return Status::Ok();
  }
  if (name == ev::kPartitionOffline) {
    std::vector<int32_t> isr;
    if (e.fields.contains(field::kIsr)) {
      KSIM_ASSIGN_OR_RETURN(isr, IntList(e, field::kIsr));
    }
    Op(op::PartitionOffline{.partition = p, .isr = List(std::move(isr))});
    return Status::Ok();
  }
  if (name == ev::kIsrShrink || name == ev::kIsrExpand) {
    KSIM_ASSIGN_OR_RETURN(auto isr, IntList(e, field::kIsr));
    Op(op::Isr{.partition = p, .isr = List(std::move(isr))});
    return Status::Ok();
  }
  const int32_t slot = Slot(p, BrokerOfNode(e.node));
  if (slot < 0) return Error(e, "a replica on a broker the partition does not have");
  if (name == ev::kBecomeLeader || name == ev::kBecomeFollower) {
    KSIM_ASSIGN_OR_RETURN(int64_t epoch, Int(e, field::kEpoch));
    KSIM_ASSIGN_OR_RETURN(int64_t leo, IntOr(e, field::kLeo, -1));
    KSIM_ASSIGN_OR_RETURN(int64_t lso, IntOr(e, field::kLogStartOffset, -1));
    KSIM_ASSIGN_OR_RETURN(int64_t hw, IntOr(e, field::kHw, -1));
    const LeaderEpoch leader_epoch(static_cast<int32_t>(epoch));
    const op::ReplicaLog log{.leo = Offset(leo), .log_start = Offset(lso), .hw = Offset(hw)};
    if (name == ev::kBecomeLeader) {
      KSIM_ASSIGN_OR_RETURN(auto isr, IntList(e, field::kIsr));
      Op(op::BecomeLeader{.partition = p,
                          .replica_slot = slot,
                          .epoch = leader_epoch,
                          .isr = List(std::move(isr)),
                          .log = log});
    } else {
      Op(op::BecomeFollower{
          .partition = p, .replica_slot = slot, .epoch = leader_epoch, .log = log});
    }
    // The log after recovery: a crash may have dropped an unsynced tail.
    if (leo >= 0) RemoveFrom(p, slot, leo, true, index);
    if (lso >= 0) RemoveBelow(p, slot, lso, index);
    return Status::Ok();
  }
  if (name == ev::kHw) {
    KSIM_ASSIGN_OR_RETURN(int64_t hw, Int(e, field::kHw));
    Op(op::ReplicaHw{.partition = p, .replica_slot = slot, .hw = Offset(hw)});
    return Status::Ok();
  }
  if (name == ev::kTruncate) {
    KSIM_ASSIGN_OR_RETURN(int64_t to, Int(e, field::kTo));
    KSIM_ASSIGN_OR_RETURN(std::string reason, Str(e, field::kReason));
    const bool emptied = reason == "offset_out_of_range";
    Op(op::ReplicaTruncate{.partition = p,
                           .replica_slot = slot,
                           .leo = Offset(to),
                           .log_start = emptied ? Offset(to) : kUndefinedOffset});
    RemoveFrom(p, slot, emptied ? 0 : to, true, index);
    return Status::Ok();
  }
  // append
  KSIM_ASSIGN_OR_RETURN(int64_t first, Int(e, field::kFirstOffset));
  KSIM_ASSIGN_OR_RETURN(int64_t last, Int(e, field::kLastOffset));
  KSIM_ASSIGN_OR_RETURN(int64_t leo, Int(e, field::kLeo));
  KSIM_ASSIGN_OR_RETURN(int64_t epoch, Int(e, field::kEpoch));
  auto values = e.fields.find(field::kValues);
  if (values == e.fields.end() || !values->is_array()) {
    return FieldError(e, field::kValues, "missing or not an array");
  }
  if (last < first || static_cast<int64_t>(values->size()) != last - first + 1) {
    return FieldError(e, field::kValues, "does not have one value per offset");
  }
  Op(op::ReplicaAppend{.partition = p,
                       .replica_slot = slot,
                       .epoch = LeaderEpoch(static_cast<int32_t>(epoch)),
                       .leo = Offset(leo)});
  RemoveFrom(p, slot, first, true, index);  // never happens in a consistent log
  std::vector<Cell>& cells = model_.cells_[p][slot];
  for (int64_t offset = first; offset <= last; ++offset) {
    const auto& value = (*values)[offset - first];
    if (!value.is_null() && !value.is_string()) return Error(e, "a value not a string or null");
    Cell cell;
    cell.offset = offset;
    cell.record = value.is_string() ? RecordOfValue(value.get<std::string>()) : -1;
    cell.epoch = static_cast<int32_t>(epoch);
    cell.appended_us = e.t_us;
    live_[p][slot].push_back(static_cast<uint32_t>(cells.size()));
    cells.push_back(cell);
    AddRecordEvent(cell.record, index);
  }
  return Status::Ok();
}

Status ModelBuilder::OnClientEvent(const sim::TraceEvent& e, TimelineEvent& te) {
  const std::string& name = e.ev;
  auto record_of = [&](const std::optional<std::string>& id) -> int32_t {
    if (!id) return -1;
    auto it = replay_->record_index.find(*id);
    return it == replay_->record_index.end() ? -1 : it->second;
  };
  if (name == ev::kSend) {
    LedgerRecord r;
    KSIM_ASSIGN_OR_RETURN(r.id, Str(e, field::kRecordId));
    KSIM_ASSIGN_OR_RETURN(r.topic, Str(e, field::kTopic));
    KSIM_ASSIGN_OR_RETURN(r.key, StrOrNull(e, field::kKey));
    KSIM_ASSIGN_OR_RETURN(std::optional<std::string> value, StrOrNull(e, field::kValue));
    r.value = value.value_or("");
    r.producer = e.node;
    r.sent_us = e.t_us;
    const int32_t index = static_cast<int32_t>(model_.records_.size());
    replay_->record_index[r.id] = index;
    if (value) records_by_value_[*value].push_back(index);
    model_.records_.push_back(std::move(r));
    te.record = index;
  } else if (name == ev::kAck) {
    KSIM_ASSIGN_OR_RETURN(std::string id, Str(e, field::kRecordId));
    KSIM_ASSIGN_OR_RETURN(int64_t partition, Int(e, field::kPartition));
    KSIM_ASSIGN_OR_RETURN(int64_t offset, Int(e, field::kOffset));
    te.record = record_of(id);
    if (te.record >= 0) {
      LedgerRecord& r = model_.records_[te.record];
      r.partition = static_cast<int32_t>(partition);
      r.offset = offset;
      // acks=0 answers nothing (offset -1): not an acknowledgement, as the checker counts.
      if (offset >= 0) r.acked_us = e.t_us;
    }
  } else if (name == ev::kError) {
    KSIM_ASSIGN_OR_RETURN(std::string id, Str(e, field::kRecordId));
    KSIM_ASSIGN_OR_RETURN(int64_t partition, IntOr(e, field::kPartition, -1));
    KSIM_ASSIGN_OR_RETURN(std::optional<std::string> error, StrOrNull(e, field::kError));
    KSIM_ASSIGN_OR_RETURN(std::string outcome, Str(e, field::kOutcome));
    te.record = record_of(id);
    if (te.record >= 0) {
      LedgerRecord& r = model_.records_[te.record];
      if (partition >= 0) r.partition = static_cast<int32_t>(partition);
      r.failed_us = e.t_us;
      r.error = error.value_or("");
      r.outcome = outcome;
    }
  } else if (name == ev::kDeliver) {
    KSIM_ASSIGN_OR_RETURN(std::string group, Str(e, field::kGroup));
    KSIM_ASSIGN_OR_RETURN(std::optional<std::string> id, StrOrNull(e, field::kRecordId));
    KSIM_ASSIGN_OR_RETURN(const int32_t p, Partition(e));
    te.partition = p;
    te.record = record_of(id);
    if (te.record >= 0) {
      std::vector<Delivery>& deliveries = model_.records_[te.record].deliveries;
      auto it =
          std::lower_bound(deliveries.begin(), deliveries.end(), group,
                           [](const Delivery& d, const std::string& g) { return d.group < g; });
      if (it == deliveries.end() || it->group != group) it = deliveries.insert(it, {group, 0});
      it->count++;
    }
  } else if (name == ev::kCommit) {
    KSIM_ASSIGN_OR_RETURN(std::string group, Str(e, field::kGroup));
    KSIM_ASSIGN_OR_RETURN(std::string topic, Str(e, field::kTopic));
    KSIM_ASSIGN_OR_RETURN(int64_t partition, Int(e, field::kPartition));
    KSIM_ASSIGN_OR_RETURN(int64_t offset, Int(e, field::kOffset));
    KSIM_ASSIGN_OR_RETURN(std::optional<std::string> error, StrOrNull(e, field::kError));
    const int32_t g = GroupSlot(group);
    if (!error && g >= 0) {
      Op(op::Commit{.group_slot = g,
                    .partition_name = Intern(PartitionName(topic, static_cast<int32_t>(partition))),
                    .offset = Offset(offset)});
    }
  }
  return Status::Ok();
}

namespace {

// Where a node's lifeline goes in a sequence diagram (TimelineModel::message_nodes).
int NodeRank(const TimelineModel& model, std::string_view name) {
  if (model.ProducerIndex(name) >= 0) return 0;
  if (name.starts_with(node::kBrokerPrefix)) return 1;
  if (name.starts_with(node::kZooKeeper)) return 3;
  if (name == node::kAdmin) return 4;
  return 2;
}

}  // namespace

void ModelBuilder::AddDerivedAnswers() {
  for (size_t i = 0; i < model_.records_.size(); ++i) {
    const LedgerRecord& r = model_.records_[i];
    LedgerCounts& counts = model_.ledger_counts_;
    counts.lost += r.lost() ? 1 : 0;
    counts.duplicated += r.duplicated() ? 1 : 0;
    counts.unacked += r.acked() ? 0 : 1;
    counts.never_written += r.never_written() ? 1 : 0;
    ++counts.by_fate[static_cast<size_t>(FateOf(r))];
    if (!r.acked() || r.offset < 0) continue;
    const int32_t p = model_.PartitionIndex(r.topic, r.partition);
    if (p >= 0) replay_->acked_offsets.push_back({p, r.offset, static_cast<int32_t>(i)});
  }
  std::sort(replay_->acked_offsets.begin(), replay_->acked_offsets.end(),
            [](const AckedOffset& a, const AckedOffset& b) {
              return std::tie(a.partition, a.offset, a.record) <
                     std::tie(b.partition, b.offset, b.record);
            });
  std::vector<bool> used(model_.nodes_.size(), false);
  for (const Message& m : model_.messages_) {
    if (m.from >= 0) used[static_cast<size_t>(m.from)] = true;
    if (m.to >= 0) used[static_cast<size_t>(m.to)] = true;
  }
  for (size_t i = 0; i < used.size(); ++i) {
    if (used[i]) model_.message_nodes_.push_back(static_cast<int32_t>(i));
  }
  std::stable_sort(model_.message_nodes_.begin(), model_.message_nodes_.end(),
                   [this](int32_t a, int32_t b) {
                     return NodeRank(model_, model_.nodes_[static_cast<size_t>(a)]) <
                            NodeRank(model_, model_.nodes_[static_cast<size_t>(b)]);
                   });
}

Status ModelBuilder::ReadVerdict() {
  const sim::TraceEvent& v = trace_.verdict;
  model_.end_us_ = v.t_us;
  auto ok = v.fields.find(field::kOk);
  if (ok == v.fields.end() || !ok->is_boolean()) return FieldError(v, field::kOk, "not a boolean");
  model_.ok_ = ok->get<bool>();
  auto metrics = v.fields.find(field::kMetrics);
  if (metrics == v.fields.end() || !metrics->is_object()) return Error(v, "no metrics object");
  for (auto it = metrics->begin(); it != metrics->end(); ++it) {
    if (!it->is_number_integer()) return Error(v, "metric " + it.key() + " not an integer");
    model_.metrics_.emplace_back(it.key(), it->get<int64_t>());
  }
  auto expectations = v.fields.find(field::kExpectations);
  if (expectations != v.fields.end() && expectations->is_array()) {
    for (const auto& x : *expectations) {
      if (!x.is_object()) return Error(v, "an expectation not an object");
      Expectation out;
      out.metric = x.value(field::kMetric, "");
      const auto expected = x.find(field::kExpected);
      if (expected != x.end()) {
        out.expected = expected->is_string() ? expected->get<std::string>() : expected->dump();
      }
      const auto actual = x.find(field::kActual);
      if (actual != x.end() && actual->is_number_integer()) out.actual = actual->get<int64_t>();
      const auto held = x.find(field::kOk);
      out.ok = held != x.end() && held->is_boolean() && held->get<bool>();
      model_.expectations_.push_back(std::move(out));
    }
  }
  auto anomalies = v.fields.find(field::kAnomalies);
  if (anomalies != v.fields.end() && anomalies->is_array()) {
    for (const auto& x : *anomalies) {
      if (!x.is_object()) return Error(v, "an anomaly not an object");
      auto text = [&x](std::string_view key) {
        auto it = x.find(key);
        return it != x.end() && it->is_string() ? it->get<std::string>() : std::string();
      };
      auto number = [&x](std::string_view key) -> int64_t {
        auto it = x.find(key);
        return it != x.end() && it->is_number_integer() ? it->get<int64_t>() : -1;
      };
      Anomaly a;
      a.kind = text(field::kKind);
      a.record_id = text(field::kRecordId);
      a.topic = text(field::kTopic);
      a.partition = static_cast<int32_t>(number(field::kPartition));
      a.offset = number(field::kOffset);
      a.group = text(field::kGroup);
      a.cause = text(field::kCause);
      a.cause_t_us = number(field::kCauseTUs);
      if (a.kind.empty()) return Error(v, "an anomaly without a kind");
      model_.anomalies_.push_back(std::move(a));
    }
  }
  for (size_t i = 0; i < model_.anomalies_.size(); ++i) {
    if (model_.anomalies_[i].cause_t_us >= 0) anomaly_order_.push_back(i);
  }
  std::stable_sort(anomaly_order_.begin(), anomaly_order_.end(), [this](size_t a, size_t b) {
    return model_.anomalies_[a].cause_t_us < model_.anomalies_[b].cause_t_us;
  });
  return Status::Ok();
}

Result<TimelineModel> ModelBuilder::Build() {
  // The process's one counter of models built: a model's identity, which the view caches are
  // keyed by (an address may be reused). It holds no view state; atomic, as models may be built
  // on several threads.
  static std::atomic<uint64_t> next_serial{1};
  model_.serial_ = next_serial.fetch_add(1);
  model_.header_ = trace_.header;
  KSIM_RETURN_IF_ERROR(Discover());
  KSIM_RETURN_IF_ERROR(ReadVerdict());
  // Anomalies name records by id; records exist only after the replay, so resolve them first
  // from the sends (the replay assigns the same indices in the same order).
  {
    int32_t next = 0;
    std::unordered_map<std::string, int32_t> ids;
    for (const sim::TraceEvent& e : trace_.events) {
      if (e.ev != ev::kSend || IsInfrastructure(e.node)) continue;
      auto id = e.fields.find(field::kRecordId);
      if (id != e.fields.end() && id->is_string()) ids.emplace(id->get<std::string>(), next);
      ++next;
    }
    for (size_t i = 0; i < model_.anomalies_.size(); ++i) {
      auto it = ids.find(model_.anomalies_[i].record_id);
      if (it != ids.end()) model_.anomalies_[i].record = it->second;
    }
  }
  KSIM_RETURN_IF_ERROR(Replay());
  for (size_t i = 0; i < model_.anomalies_.size(); ++i) {
    const int32_t r = model_.anomalies_[i].record;
    if (r >= 0 && static_cast<size_t>(r) < model_.records_.size()) {
      model_.records_[r].anomalies.push_back(static_cast<int32_t>(i));
    } else {
      model_.anomalies_[i].record = -1;
    }
  }
  // The final committed logs: each value's copies.
  auto audit = trace_.verdict.fields.find(field::kAudit);
  if (audit != trace_.verdict.fields.end() && audit->is_array()) {
    for (const auto& entry : *audit) {
      auto values = entry.find(field::kValues);
      if (!entry.is_object() || values == entry.end() || !values->is_array()) {
        return Error(trace_.verdict, "an audit entry without values");
      }
      for (const auto& value : *values) {
        if (!value.is_string()) continue;
        const int32_t r = RecordOfValue(value.get<std::string>());
        if (r >= 0) model_.records_[r].final_copies++;
      }
    }
  }
  for (LedgerRecord& r : model_.records_) {
    std::sort(r.events.begin(), r.events.end());
    r.events.erase(std::unique(r.events.begin(), r.events.end()), r.events.end());
  }
  // Messages: the longest flight, and those never finished.
  for (size_t i = 0; i < model_.messages_.size(); ++i) {
    const Message& m = model_.messages_[i];
    const TimeUs finished = m.delivered_us >= 0 ? m.delivered_us : m.dropped_us;
    if (finished < 0) {
      replay_->unfinished_messages.push_back(static_cast<uint32_t>(i));
    } else {
      replay_->max_flight_us = std::max(replay_->max_flight_us, finished - m.sent_us);
    }
  }
  AddDerivedAnswers();
  if (model_.checkpoints_.empty()) {
    Snapshot first = state_;
    first.events_applied = 0;
    model_.checkpoints_.push_back(std::move(first));
  }
  model_.partitions_ = state_.partitions;
  model_.replay_ = std::move(replay_);
  return std::move(model_);
}

Result<TimelineModel> TimelineModel::Build(const sim::Trace& trace, std::string_view name) {
  ModelBuilder builder(trace, name);
  return builder.Build();
}

Result<TimelineModel> TimelineModel::Load(const std::string& path) {
  KSIM_ASSIGN_OR_RETURN(sim::Trace trace, sim::ReadTraceFile(path));
  return Build(trace, path);
}

}  // namespace ksim::viz
