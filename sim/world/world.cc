#include "sim/world/world.h"

#include <algorithm>
#include <set>
#include <utility>

#include "core/base/check.h"
#include "core/base/trace_names.h"

namespace ksim::sim {

std::string_view NodeLifecycleName(NodeLifecycle event) {
  switch (event) {
    case NodeLifecycle::kCrash:
      return "crash";
    case NodeLifecycle::kShutdown:
      return "shutdown";
    case NodeLifecycle::kRestart:
      return "restart";
  }
  KSIM_CHECK_MSG(false, "unknown lifecycle event");
}

std::string_view DiskFaultName(DiskFault fault) {
  switch (fault) {
    case DiskFault::kReadError:
      return "read_error";
    case DiskFault::kWriteError:
      return "write_error";
    case DiskFault::kSyncError:
      return "sync_error";
  }
  KSIM_CHECK_MSG(false, "unknown disk fault");
}

// ---------------------------------------------------------------------------------------------
// Node

Node::Node(World& world, std::string name, NodeId id, std::unique_ptr<VirtualDisk> disk)
    : world_(world), name_(std::move(name)), id_(id), disk_(std::move(disk)) {}

Node::~Node() = default;

const Clock& Node::clock() const { return world_.loop_; }

TimerId Node::Schedule(TimeUs delay_us, std::function<void()> callback) {
  KSIM_CHECK_MSG(up_, "a down node has no process to schedule for");
  KSIM_CHECK_MSG(static_cast<bool>(callback), "scheduling an empty std::function");
  const TimerId id = world_.loop_.ScheduleAfter(
      delay_us,
      [this, callback = std::move(callback)] {
        world_.NoteActive(id_);
        callback();
      },
      "node.timer");
  timers_.push_back(id);
  if (timers_.size() >= timers_prune_at_) {
    // Forget the timers that ran or were cancelled; keeps the list proportional to the live ones.
    std::erase_if(timers_, [this](TimerId timer) { return !world_.loop_.IsPending(timer); });
    timers_prune_at_ = std::max<size_t>(64, 2 * timers_.size());
  }
  return id;
}

void Node::Cancel(TimerId id) { world_.loop_.Cancel(id); }

size_t Node::pending_timers() const {
  return static_cast<size_t>(std::count_if(timers_.begin(), timers_.end(), [this](TimerId timer) {
    return world_.loop_.IsPending(timer);
  }));
}

void Node::Listen(NetworkHandler handler) {
  KSIM_CHECK_MSG(up_, "a down node has no process to listen");
  world_.network_->Register(id_, std::move(handler));
}

void Node::StopListening() {
  KSIM_CHECK_MSG(up_, "a down node has no process to stop");
  world_.network_->ExitProcess(id_);
}

SendResult Node::Send(std::string_view to, Message message) {
  return world_.network_->Send(id_, world_.topology_.Id(to), std::move(message));
}

SendResult Node::Send(NodeId to, Message message) {
  return world_.network_->Send(id_, to, std::move(message));
}

Node::ListenerId Node::AddLifecycleListener(LifecycleListener listener) {
  KSIM_CHECK(static_cast<bool>(listener));
  const ListenerId id = next_listener_id_++;
  listeners_.emplace(id, std::move(listener));
  return id;
}

void Node::RemoveLifecycleListener(ListenerId id) { listeners_.erase(id); }

void Node::EndProcess() {
  for (TimerId timer : timers_) world_.loop_.Cancel(timer);
  timers_.clear();
  timers_prune_at_ = 64;
  world_.network_->Unregister(id_);
}

void Node::Notify(NodeLifecycle event) {
  // A listener may add or remove listeners: walk a snapshot of the ids, skipping removed ones.
  std::vector<ListenerId> ids;
  for (const auto& [id, listener] : listeners_) ids.push_back(id);
  for (ListenerId id : ids) {
    auto it = listeners_.find(id);
    if (it == listeners_.end()) continue;
    LifecycleListener listener = it->second;  // a copy: the listener may remove itself
    listener(event);
  }
}

// ---------------------------------------------------------------------------------------------
// World

World::World(uint64_t seed, TraceWriter trace, WorldOptions options)
    : seeds_(seed), options_(options), trace_(std::move(trace)) {
  KSIM_CHECK_MSG(trace_.header().seed == seed, "the trace header names another seed");
  KSIM_CHECK_MSG(trace_.lines() == 1 && !trace_.has_verdict(), "the trace must be fresh");
  KSIM_CHECK(ValidateLinkSpec(options_.default_link).ok());
  network_ =
      std::make_unique<Network>(loop_, topology_, seeds_.StreamFor("network"), options_.network);
  network_->SetActivityListener([this](NodeId node) { NoteActive(node); });
  // The observer costs a JSON object per message: installed only when the trace keeps them.
  if (trace_.wants_messages()) {
    network_->SetObserver([this](const NetEvent& event) { OnNetEvent(event); });
  }
}

World::~World() = default;

Result<Node*> World::AddNode(std::string name, NodeOptions options) {
  KSIM_ASSIGN_OR_RETURN(NodeId id, topology_.AddNode(name));
  KSIM_CHECK(id.value() == nodes_.size());
  KSIM_RETURN_IF_ERROR(topology_.ConnectFullMesh(options_.default_link));
  std::unique_ptr<VirtualDisk> disk;
  if (options.disk) {
    disk = std::make_unique<VirtualDisk>(seeds_.StreamFor("disk/" + name), *options.disk);
  }
  nodes_.push_back(std::unique_ptr<Node>(new Node(*this, std::move(name), id, std::move(disk))));
  return nodes_.back().get();
}

Node* World::FindNode(std::string_view name) {
  const std::optional<NodeId> id = topology_.Find(name);
  return id ? nodes_[id->value()].get() : nullptr;
}

Node& World::node(std::string_view name) {
  Node* found = FindNode(name);
  KSIM_CHECK_MSG(found != nullptr, "no node of that name");
  return *found;
}

Node& World::node(NodeId id) {
  KSIM_CHECK(id.value() < nodes_.size());
  return *nodes_[id.value()];
}

Result<Node*> World::Lookup(std::string_view name) {
  Node* found = FindNode(name);
  if (found == nullptr) {
    return Status(Errc::kNotFound, "no node named '" + std::string(name) + "'");
  }
  return found;
}

void World::Trace(std::string_view node, std::string_view ev, const EventFields& fields) {
  trace_.Event(loop_.Now(), node, ev, fields);
  for (const TraceTap& tap : taps_) tap(loop_.Now(), node, ev, fields);
}

void World::AddTraceTap(TraceTap tap) { taps_.push_back(std::move(tap)); }

void World::OnNetEvent(const NetEvent& event) {
  // Fields mirror NetEvent (docs/trace-format.md, network message events), appended in order.
  EventFields fields;
  auto add = [&fields](std::string_view key, const EventValue& value) { fields.Add(key, value); };
  switch (event.type) {
    case NetEvent::Type::kSend:
    case NetEvent::Type::kDeliver:
    case NetEvent::Type::kDrop:
    case NetEvent::Type::kHold: {
      const std::string_view node =
          event.type == NetEvent::Type::kDeliver ? event.to_name : event.from_name;
      const std::string_view ev = event.type == NetEvent::Type::kSend      ? ev::kMsgSend
                                  : event.type == NetEvent::Type::kDeliver ? ev::kMsgDeliver
                                  : event.type == NetEvent::Type::kHold    ? ev::kMsgHold
                                                                           : ev::kMsgDrop;
      // At the state level the line is not written: its fields are not built.
      if (!trace_.wants_messages()) return trace_.Message(event.time_us, node, ev);
      add(field::kId, event.message_id);
      add(field::kFrom, event.from_name);
      add(field::kTo, event.to_name);
      add(field::kKind, event.kind);
      add(field::kSizeBytes, event.size_bytes);
      add(field::kConn, event.connection_epoch);
      if (event.type == NetEvent::Type::kSend) {
        add(field::kDeliverAtUs, event.deliver_at_us);
        add(field::kRetransmits, event.retransmits);
      } else if (event.type != NetEvent::Type::kDeliver) {  // kDrop, kHold
        add(field::kReason, DropReasonName(event.reason));
      }
      trace_.Message(event.time_us, node, ev, fields);
      return;
    }
    case NetEvent::Type::kDisconnect:
      if (!trace_.wants_messages()) {
        return trace_.Message(event.time_us, event.to_name, ev::kMsgDisconnect);
      }
      add(field::kPeer, event.from_name);
      add(field::kConn, event.connection_epoch);
      trace_.Message(event.time_us, event.to_name, ev::kMsgDisconnect, fields);
      return;
  }
  KSIM_CHECK_MSG(false, "unknown network event");
}

Status World::CrashNode(std::string_view name, const CrashOptions& options) {
  KSIM_ASSIGN_OR_RETURN(Node * node, Lookup(name));
  if (!node->up_) return Status(Errc::kInvalidArgument, node->name_ + " is already down");
  if (options.corrupt_torn_tail && !options.tear_unsynced_tail) {
    return Status(Errc::kInvalidArgument, "corrupting the torn tail needs tearing");
  }
  EventFields fields{{field::kTear, options.tear_unsynced_tail},
                     {field::kCorrupt, options.corrupt_torn_tail}};
  // The directories whose unsynced writes the power loss takes or tears (a checker's reason for
  // a committed record's loss); none: nothing but what was synced is on the disk.
  if (node->disk_) {
    if (std::vector<std::string> unsynced = node->disk_->UnsyncedDirs(); !unsynced.empty()) {
      fields.Add(field::kUnsynced, unsynced);
    }
  }
  Trace(node->name_, ev::kCrash, fields);
  node->up_ = false;
  node->EndProcess();
  KSIM_CHECK(topology_.SetNodeUp(node->name_, false).ok());
  if (node->disk_) node->disk_->Crash(options);
  node->Notify(NodeLifecycle::kCrash);
  return Status::Ok();
}

Status World::HaltNode(std::string_view name, std::string_view reason) {
  KSIM_ASSIGN_OR_RETURN(Node * node, Lookup(name));
  if (!node->up_) return Status(Errc::kInvalidArgument, node->name_ + " is already down");
  Trace(node->name_, ev::kCrash,
        EventFields{{field::kTear, false}, {field::kCorrupt, false}, {field::kHalt, reason}});
  node->up_ = false;
  node->EndProcess();
  network_->ExitProcess(node->id_);  // the host stays up: peers get an RST at once
  if (node->disk_) node->disk_->CleanShutdown();
  node->Notify(NodeLifecycle::kCrash);
  return Status::Ok();
}

Status World::CleanShutdownNode(std::string_view name) {
  KSIM_ASSIGN_OR_RETURN(Node * node, Lookup(name));
  if (!node->up_) return Status(Errc::kInvalidArgument, node->name_ + " is already down");
  Trace(node->name_, ev::kShutdown);
  node->Notify(NodeLifecycle::kShutdown);
  node->up_ = false;
  node->EndProcess();
  if (node->disk_) node->disk_->CleanShutdown();
  network_->ExitProcess(node->id_);  // the host stays up: peers get a FIN at once
  return Status::Ok();
}

Status World::RestartNode(std::string_view name) {
  KSIM_ASSIGN_OR_RETURN(Node * node, Lookup(name));
  if (node->up_) return Status(Errc::kInvalidArgument, node->name_ + " is up");
  ++node->incarnation_;
  Trace(node->name_, ev::kRestart, EventFields{{field::kIncarnation, node->incarnation_}});
  node->up_ = true;
  // After a power loss the host comes back (peers' pending notices hasten); after a process
  // exit it never left.
  KSIM_CHECK(topology_.SetNodeUp(node->name_, true).ok());
  node->Notify(NodeLifecycle::kRestart);
  return Status::Ok();
}

Status World::Partition(const std::vector<std::vector<std::string>>& sides, bool one_way) {
  // Checked here, before tracing, so that a refused partition leaves no event behind.
  std::set<std::string_view> seen;
  for (const std::vector<std::string>& side : sides) {
    for (const std::string& name : side) {
      KSIM_RETURN_IF_ERROR(Lookup(name).status());
      if (!seen.insert(name).second) {
        return Status(Errc::kInvalidArgument, "'" + name + "' is on two sides of the partition");
      }
    }
  }
  Trace(node::kWorld, ev::kPartition,
        EventFields{{field::kSides, sides}, {field::kOneWay, one_way}});
  KSIM_CHECK(topology_.Partition(sides, one_way).ok());
  return Status::Ok();
}

void World::Heal() {
  Trace(node::kWorld, ev::kHeal);
  topology_.Heal();
}

Status World::Isolate(std::string_view name) {
  KSIM_ASSIGN_OR_RETURN(Node * node, Lookup(name));
  Trace(node->name_, ev::kIsolate);
  KSIM_CHECK(topology_.Isolate(node->name_).ok());
  return Status::Ok();
}

Status World::SlowNode(std::string_view name, TimeUs extra_delay_us, TimeUs duration_us) {
  KSIM_ASSIGN_OR_RETURN(Node * node, Lookup(name));
  if (extra_delay_us < 0 || duration_us < 0) {
    return Status(Errc::kInvalidArgument, "a slow node needs a delay and a duration >= 0");
  }
  Trace(node->name_, ev::kSlow,
        EventFields{{field::kExtraDelayUs, extra_delay_us}, {field::kForUs, duration_us}});
  KSIM_CHECK(network_->SlowFor(node->name_, extra_delay_us, duration_us).ok());
  return Status::Ok();
}

Status World::InjectDiskFault(std::string_view name, DiskFault fault,
                              FaultPersistence persistence) {
  KSIM_ASSIGN_OR_RETURN(Node * node, Lookup(name));
  if (!node->disk_) return Status(Errc::kInvalidArgument, node->name_ + " has no disk");
  Trace(node->name_, ev::kDiskFault,
        EventFields{{field::kFault, DiskFaultName(fault)},
                    {field::kOnce, persistence == FaultPersistence::kOnce}});
  node->disk_->InjectFault(fault, persistence);
  return Status::Ok();
}

Status World::Finish(bool ok, const TraceFields& metrics, const TraceFields& extra,
                     const EventFields& more) {
  trace_.Verdict(loop_.Now(), ok, metrics, extra, more);
  return trace_.Commit();
}

}  // namespace ksim::sim
