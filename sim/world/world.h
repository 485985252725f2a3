// World: the wiring of one simulated run. It owns the run's root of randomness (Seeds), the
// event loop (virtual time, core's Clock and Timers), the network's Topology and the Network
// that moves messages over it, one VirtualDisk per node that has storage, and the TraceWriter;
// it names the random streams (`network`, `disk/<node>`), forwards every network event to the
// trace at the `messages` level (msg_send, msg_deliver, msg_drop, msg_disconnect) and performs
// the node and network faults of a scenario, tracing each one (docs/simulation.md,
// docs/trace-format.md).
//
// It is a thin layer: no Kafka logic lives here. The cluster (brokers, ZooKeeper, clients) is
// built on top of it from Nodes:
//
// - A Node is a name on the network (`zk`, `broker-<id>`, a client id), an optional disk (the
//   node's Env), and the process running on it: its network handler and its timers die with
//   it. A component (a broker, the ZooKeeper server, a client) is handed its Node, takes its
//   Env from disk(), schedules through the Node (a Timers) and sends through it, and subscribes
//   to its lifecycle: kCrash (drop every in-memory state and handle: the disk already lost what
//   was not synced), kShutdown (close files cleanly; the disk syncs and the node goes down right
//   after), kRestart (reopen and recover from the disk, listen again, start timers again).
// - Faults: CrashNode = power loss: the host goes down in the Topology (the network drops what
//   was in flight to and from it, and peers learn only by timeout unless it comes back), the
//   process's timers cancelled and handler removed, the disk crashed (with tearing and
//   corruption as asked), then kCrash told. CleanShutdownNode = kShutdown told first, then
//   timers and handler removed, the disk cleanly shut down (everything synced), and the process
//   exits while the host stays up (Network::ExitProcess: peers get a FIN at once, sends to it
//   are refused). HaltNode is the same process exit without kShutdown. Node::up() is the
//   process's state. RestartNode = host up if it was down, then kRestart told. Partition,
//   Heal, Isolate, SlowNode and InjectDiskFault pass through to Topology, Network and
//   VirtualDisk. Each writes its trace event first, so that the drops it causes follow it in
//   the trace.
//
// Determinism: everything is ordered by node id or insertion order; the only randomness is the
// streams derived from the one seed by name, so adding a node never shifts another's draws.
// Single-threaded. The World owns every part; components hold references and must not outlive
// it. Destroying the World destroys pending callbacks without running them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/clock.h"
#include "core/base/status.h"
#include "core/base/types.h"
#include "sim/kernel/event_loop.h"
#include "sim/kernel/random.h"
#include "sim/kernel/trace.h"
#include "sim/world/network.h"
#include "sim/world/topology.h"
#include "sim/world/virtual_disk.h"

namespace ksim::sim {

// What happens to a node's process; what lifecycle listeners are told.
enum class NodeLifecycle : uint8_t {
  kCrash,     // after: node down, timers cancelled, handler removed, disk crashed
  kShutdown,  // before: the node is still up and its disk live; close files now
  kRestart,   // after: node up with a new incarnation; nothing registered yet
};
std::string_view NodeLifecycleName(NodeLifecycle event);

struct NodeOptions {
  // A node with storage gets a VirtualDisk on stream "disk/<name>"; nullopt: no disk.
  std::optional<VirtualDiskOptions> disk;
};

class World;

// One node of the world and the process running on it. Created by World::AddNode, owned by the
// World, never removed. As a Timers, it schedules on the world's loop callbacks that are
// cancelled when the process dies (crash or shutdown).
class Node final : public Timers {
 public:
  using LifecycleListener = std::function<void(NodeLifecycle)>;
  using ListenerId = uint64_t;

  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node() override;

  const std::string& name() const { return name_; }
  NodeId id() const { return id_; }
  // The node's disk (its Env), or null for a node without storage.
  VirtualDisk* disk() { return disk_.get(); }
  bool up() const { return up_; }
  // 1 for the first process, +1 on every restart.
  uint64_t incarnation() const { return incarnation_; }
  const Clock& clock() const;

  // Timers, for the current process. REQUIRES: up().
  TimerId Schedule(TimeUs delay_us, std::function<void()> callback) override;
  void Cancel(TimerId id) override;
  // Timers of the current process not yet run or cancelled.
  size_t pending_timers() const;

  // Installs the process's network handler (again after each restart). REQUIRES: up().
  void Listen(NetworkHandler handler);
  // The process exits by itself while the node stays up (a broker whose start-up failed, Kafka's
  // System.exit): its handler goes, its connections reset and every send to the node is refused
  // until it listens again (Network::ExitProcess). REQUIRES: up().
  void StopListening();
  // Sends from this node. REQUIRES: `to` exists and is another node.
  SendResult Send(std::string_view to, Message message);
  SendResult Send(NodeId to, Message message);

  // Listeners run in the order they were added, on every lifecycle event of this node.
  ListenerId AddLifecycleListener(LifecycleListener listener);
  void RemoveLifecycleListener(ListenerId id);

 private:
  friend class World;
  Node(World& world, std::string name, NodeId id, std::unique_ptr<VirtualDisk> disk);
  // The process died: cancels its timers and removes its handler.
  void EndProcess();
  void Notify(NodeLifecycle event);

  World& world_;
  std::string name_;
  NodeId id_;
  std::unique_ptr<VirtualDisk> disk_;
  bool up_ = true;
  uint64_t incarnation_ = 1;
  // Timers scheduled by the current process; fired ones are pruned when the list doubles.
  std::vector<TimerId> timers_;
  size_t timers_prune_at_ = 64;
  std::map<ListenerId, LifecycleListener> listeners_;
  ListenerId next_listener_id_ = 1;
};

struct WorldOptions {
  // Every node added is linked both ways to every node already there with this spec; change
  // single links afterwards through topology().SetLink.
  LinkSpec default_link;
  NetworkOptions network;
};

class World {
 public:
  // REQUIRES: trace.header().seed == seed; nothing written to `trace` but its header.
  World(uint64_t seed, TraceWriter trace, WorldOptions options = {});
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // --- Building -------------------------------------------------------------------------------
  // Adds a node up and linked to every other (WorldOptions::default_link). kAlreadyExists for a
  // name in use, kInvalidArgument for an empty one.
  Result<Node*> AddNode(std::string name, NodeOptions options = {});
  // Null when no node has that name.
  Node* FindNode(std::string_view name);
  // REQUIRES: the node exists.
  Node& node(std::string_view name);
  Node& node(NodeId id);
  // In id (= creation) order.
  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }

  // --- The parts ------------------------------------------------------------------------------
  const Seeds& seeds() const { return seeds_; }
  // A component's own stream ("workload/p1", "faults", ...). Names used by the World itself:
  // "network" and "disk/<node>".
  RandomStream StreamFor(std::string_view name) const { return seeds_.StreamFor(name); }
  EventLoop& loop() { return loop_; }
  TimeUs Now() const { return loop_.Now(); }
  Topology& topology() { return topology_; }
  Network& network() { return *network_; }
  TraceWriter& trace() { return trace_; }
  const TraceWriter& trace() const { return trace_; }

  // A state event at the current time. REQUIRES: as TraceWriter::Event.
  void Trace(std::string_view node, std::string_view ev, const EventFields& fields = {});
  // Taps see every state event Trace writes (whatever the trace level and sink), after it is
  // written, in the order added: how the scenario runner follows elections, truncations and
  // faults without reading the trace back. A tap must not call Trace. Message events (msg_*)
  // are not tapped. Taps live as long as the World.
  using TraceTap = std::function<void(TimeUs t_us, std::string_view node, std::string_view ev,
                                      const EventFields& fields)>;
  void AddTraceTap(TraceTap tap);

  // --- Activity -------------------------------------------------------------------------------
  // The nodes whose process ran code since ClearActivity (a timer of theirs fired, a message or
  // a disconnect was handed to them), each once, in the order they first ran. An observer that
  // re-reads only what may have changed after an event (the Cluster's invariant pass) reads it;
  // an event that ran no node's code (an action, a runner's callback) leaves it empty.
  void ClearActivity() { active_nodes_.clear(); }
  const std::vector<NodeId>& active_nodes() const { return active_nodes_; }

  // --- Faults ---------------------------------------------------------------------------------
  // Each returns kNotFound for an unknown node and then changes and traces nothing.
  //
  // Power loss of the node ("crash" {"tear", "corrupt"}). kInvalidArgument when the node is
  // already down, or for corrupt_torn_tail without tear_unsynced_tail.
  Status CrashNode(std::string_view name, const CrashOptions& options = {});
  // The node's process exits by itself (Kafka's Exit.halt: a broker whose log directory failed):
  // traced as "crash" {"tear": false, "corrupt": false, "halt": reason}, so that everything
  // following crashes follows it too; the machine's page cache survives a process exit, so the
  // disk keeps everything written (as on a clean shutdown, without the process's own shutdown
  // steps). kInvalidArgument when the node is down.
  Status HaltNode(std::string_view name, std::string_view reason);
  // Controlled shutdown ("shutdown"): nothing is lost. kInvalidArgument when already down.
  Status CleanShutdownNode(std::string_view name);
  // A new process on the node ("restart" {"incarnation"}). kInvalidArgument when it is up.
  Status RestartNode(std::string_view name);
  // "partition" {"sides", "one_way"} on node "world": Topology::Partition (cuts add up until
  // Heal). kInvalidArgument for a node on two sides.
  Status Partition(const std::vector<std::vector<std::string>>& sides, bool one_way = false);
  // "heal" on node "world": every cut link restored (down nodes stay down).
  void Heal();
  // "isolate" on the node: every link to and from it cut until Heal.
  Status Isolate(std::string_view name);
  // "slow" {"extra_delay_us", "for_us"} on the node: Network::SlowFor. kInvalidArgument for a
  // negative delay or duration.
  Status SlowNode(std::string_view name, TimeUs extra_delay_us, TimeUs duration_us);
  // "disk_fault" {"fault", "once"} on the node: VirtualDisk::InjectFault. kInvalidArgument when
  // the node has no disk.
  Status InjectDiskFault(std::string_view name, DiskFault fault, FaultPersistence persistence);

  // --- The end --------------------------------------------------------------------------------
  // Writes the verdict at the current time and commits the trace (TraceWriter::Verdict, Commit).
  Status Finish(bool ok, const TraceFields& metrics, const TraceFields& extra = TraceFields(),
                const EventFields& more = {});

 private:
  friend class Node;
  Result<Node*> Lookup(std::string_view name);
  void OnNetEvent(const NetEvent& event);
  void NoteActive(NodeId node) {
    if (std::find(active_nodes_.begin(), active_nodes_.end(), node) == active_nodes_.end()) {
      active_nodes_.push_back(node);
    }
  }

  Seeds seeds_;
  WorldOptions options_;
  TraceWriter trace_;
  EventLoop loop_;
  Topology topology_;
  std::unique_ptr<Network> network_;
  std::vector<std::unique_ptr<Node>> nodes_;  // by NodeId
  std::vector<TraceTap> taps_;
  std::vector<NodeId> active_nodes_;
};

std::string_view DiskFaultName(DiskFault fault);

}  // namespace ksim::sim
