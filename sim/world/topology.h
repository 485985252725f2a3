// The shape of the simulated network: which nodes exist (brokers `broker-<id>`, `zk`, clients by
// id), which directed links join them, each link's latency range, loss and bandwidth, and which
// links the fault injector has cut. The graph is a Boost.Graph adjacency list with one directed
// edge per direction, so a one-way partition is simply one cut edge; reachability and the
// partition "sides" shown by the viewer are computed with Boost.Graph algorithms (BFS over the
// links that are up, connected components over the pairs that are up both ways).
//
// Topology owns only state: it knows no time and moves no message. Network (sim/world/network.h)
// reads it on every send and listens to its change events to drop what was in flight on a link that
// was just cut or to or from a node that just went down. Faults that last for a duration (a slow
// node) are timed by Network. The model and the options are described in docs/network.md.
//
// Node ids are dense, in the order nodes were added, and never reused (nodes are never removed).
// Every iteration is in id order, so nothing depends on pointer values or hash order.
// Not thread-safe (nothing in the simulated world is).
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/base/short_text.h"
#include "core/base/status.h"
#include "core/base/types.h"

namespace ksim::sim {

struct NodeIdTag {};
using NodeId = StrongInt<NodeIdTag, uint32_t>;

// One direction of a link. A message crossing it takes a latency drawn uniformly from
// [latency_us_min, latency_us_max]; each transmission is lost with probability loss_ppm / 1e6 and
// then costs a retransmission (docs/network.md); with a bandwidth, a message also occupies the
// link for size / bandwidth and waits for the messages before it.
struct LinkSpec {
  TimeUs latency_us_min = 1000;
  TimeUs latency_us_max = 5000;
  uint32_t loss_ppm = 0;              // parts per million, <= 1'000'000
  int64_t bandwidth_bytes_per_s = 0;  // 0: unlimited (no serialization delay)

  friend bool operator==(const LinkSpec&, const LinkSpec&) = default;
};

// kInvalidArgument for a negative or inverted latency range, loss above 1e6 ppm or a negative
// bandwidth: scenario input is checked here before it reaches the graph.
Status ValidateLinkSpec(const LinkSpec& spec);

struct DirectedLink {
  NodeId from;
  NodeId to;
  friend auto operator<=>(const DirectedLink&, const DirectedLink&) = default;
};

// What a change event is about. kLinkSet covers added links and latency/loss/bandwidth changes.
enum class TopologyChangeKind {
  kNodeAdded,
  kLinkSet,
  kPartition,
  kHeal,
  kIsolate,
  kNodeDown,
  kNodeUp,
  kSlow,  // a node's outbound delay changed
};
std::string_view TopologyChangeKindName(TopologyChangeKind kind);

// Sent to every listener after the state changed. `cut` lists the directed links this change cut,
// `restored` those it made able to carry messages again (healed, or newly added), in (from, to)
// order. Node up/down changes list the node and no links.
struct TopologyChange {
  TopologyChangeKind kind;
  std::vector<NodeId> nodes;  // the nodes the change names (sides flattened, isolated, down, ...)
  std::vector<DirectedLink> cut;
  std::vector<DirectedLink> restored;
};

class Topology {
 public:
  using Listener = std::function<void(const TopologyChange&)>;
  using ListenerId = uint64_t;

  Topology() = default;
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  // The usual world: `names` in that order, every pair linked both ways with `spec`.
  // REQUIRES: names distinct and non-empty, spec valid.
  static std::unique_ptr<Topology> FullMesh(const std::vector<std::string>& names,
                                            const LinkSpec& spec);

  // --- Building -------------------------------------------------------------------------------
  // kAlreadyExists for a name in use, kInvalidArgument for an empty one.
  Result<NodeId> AddNode(std::string name);
  // Links every pair of nodes that has no link yet, both directions, with `spec`.
  Status ConnectFullMesh(const LinkSpec& spec);
  // Sets (adding if absent) both directions of the link between `a` and `b`. A cut stays cut.
  // kNotFound for an unknown name, kInvalidArgument for a bad spec or a == b.
  Status SetLink(std::string_view a, std::string_view b, const LinkSpec& spec);
  // Sets only the direction from -> to.
  Status SetLinkDirected(std::string_view from, std::string_view to, const LinkSpec& spec);

  // --- Faults ---------------------------------------------------------------------------------
  // Cuts every link between nodes on different sides (both directions; with `one_way`, only the
  // links from a node on sides[0] to a node on another side). Nodes on no side keep their links.
  // Cuts add up until Heal. kNotFound for an unknown name, kInvalidArgument for a node named on
  // two sides.
  Status Partition(const std::vector<std::vector<std::string>>& sides, bool one_way);
  // Restores every cut link (partitions and isolations alike). Node up/down is left as it is.
  void Heal();
  // Cuts every link to and from `node`, both directions. kNotFound for an unknown name.
  Status Isolate(std::string_view node);
  // A crashed node: it sends and receives nothing until NodeUp. Its links keep their cut state.
  Status SetNodeUp(std::string_view node, bool up);
  // Every message `node` sends from now on arrives `extra_delay_us` later than the link alone
  // would deliver it (0: back to normal). Network::SlowFor times this. kNotFound for an unknown
  // name, kInvalidArgument for a negative delay.
  Status SetSlow(std::string_view node, TimeUs extra_delay_us);

  // --- Queries --------------------------------------------------------------------------------
  size_t NodeCount() const { return nodes_.size(); }
  std::optional<NodeId> Find(std::string_view name) const;
  // REQUIRES: `name` exists.
  NodeId Id(std::string_view name) const;
  // REQUIRES: id < NodeCount().
  const std::string& Name(NodeId id) const;
  bool IsUp(NodeId id) const;
  TimeUs SlowExtraUs(NodeId id) const;
  // The link from -> to, whatever its cut state; nullopt when there is none.
  std::optional<LinkSpec> Link(NodeId from, NodeId to) const;
  bool IsCut(NodeId from, NodeId to) const;
  // True when a message from `from` can go to `to` right now: a direct link exists in that
  // direction, it is not cut, and both nodes are up. Messages never take multi-hop routes.
  bool CanSend(NodeId from, NodeId to) const;
  // Whether `to` can be reached from `from` by a path of links that can carry messages now
  // (breadth-first search); the direct-link question is CanSend.
  bool Reachable(NodeId from, NodeId to) const;
  // The partition sides: connected components over pairs of up nodes whose link is up in both
  // directions (a conversation needs both). A down node is a component of its own. Components
  // are ordered by their smallest id, members by id.
  std::vector<std::vector<NodeId>> Components() const;
  std::vector<std::vector<std::string>> ComponentNames() const;

  // --- Change events --------------------------------------------------------------------------
  // Listeners run in the order they were added, after each change.
  ListenerId AddListener(Listener listener);
  void RemoveListener(ListenerId id);

 private:
  struct EdgeState {
    LinkSpec spec;
    bool cut = false;
  };
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS,
                                      boost::no_property, EdgeState>;
  using Edge = Graph::edge_descriptor;

  struct NodeState {
    std::string name;
    bool up = true;
    TimeUs slow_extra_us = 0;
  };

  Result<NodeId> Lookup(std::string_view name) const;
  std::optional<Edge> FindEdge(NodeId from, NodeId to) const;
  void SetDirected(NodeId from, NodeId to, const LinkSpec& spec);
  // Cuts from -> to if it exists and is up, recording it in `change`.
  void CutOne(NodeId from, NodeId to, TopologyChange& change);
  void Notify(const TopologyChange& change);

  Graph graph_;
  std::vector<NodeState> nodes_;  // indexed by NodeId, same as graph_'s vertices
  // Looked up at every message sent (a node's name to its id); never walked.
  std::unordered_map<std::string, NodeId, TextHash, TextEqual> ids_;
  std::map<ListenerId, Listener> listeners_;
  ListenerId next_listener_id_ = 1;
};

}  // namespace ksim::sim
