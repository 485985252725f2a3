#include "sim/world/topology.h"

#include <algorithm>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/connected_components.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/property_map/property_map.hpp>
#include <set>
#include <utility>

#include "core/base/check.h"

namespace ksim::sim {

Status ValidateLinkSpec(const LinkSpec& spec) {
  if (spec.latency_us_min < 0 || spec.latency_us_max < spec.latency_us_min) {
    return Status(Errc::kInvalidArgument,
                  "link latency range [" + std::to_string(spec.latency_us_min) + ", " +
                      std::to_string(spec.latency_us_max) + "] us is not a range of times >= 0");
  }
  if (spec.loss_ppm > 1'000'000) {
    return Status(Errc::kInvalidArgument,
                  "link loss " + std::to_string(spec.loss_ppm) + " ppm is above 1000000");
  }
  if (spec.bandwidth_bytes_per_s < 0) {
    return Status(Errc::kInvalidArgument, "link bandwidth is negative");
  }
  return Status::Ok();
}

std::string_view TopologyChangeKindName(TopologyChangeKind kind) {
  switch (kind) {
    case TopologyChangeKind::kNodeAdded:
      return "node_added";
    case TopologyChangeKind::kLinkSet:
      return "link_set";
    case TopologyChangeKind::kPartition:
      return "partition";
    case TopologyChangeKind::kHeal:
      return "heal";
    case TopologyChangeKind::kIsolate:
      return "isolate";
    case TopologyChangeKind::kNodeDown:
      return "node_down";
    case TopologyChangeKind::kNodeUp:
      return "node_up";
    case TopologyChangeKind::kSlow:
      return "slow";
  }
  return "unknown";
}

std::unique_ptr<Topology> Topology::FullMesh(const std::vector<std::string>& names,
                                             const LinkSpec& spec) {
  auto topology = std::make_unique<Topology>();
  for (const std::string& name : names) KSIM_CHECK(topology->AddNode(name).ok());
  KSIM_CHECK(topology->ConnectFullMesh(spec).ok());
  return topology;
}

Result<NodeId> Topology::AddNode(std::string name) {
  if (name.empty()) return Status(Errc::kInvalidArgument, "a node needs a name");
  if (ids_.count(name) != 0) return Status(Errc::kAlreadyExists, "node " + name + " exists");
  const auto vertex = boost::add_vertex(graph_);
  const NodeId id(static_cast<uint32_t>(nodes_.size()));
  KSIM_CHECK(vertex == id.value());
  ids_.emplace(name, id);
  nodes_.push_back(NodeState{std::move(name), true, 0});
  KSIM_CHECK(boost::num_vertices(graph_) == nodes_.size());
  Notify(TopologyChange{TopologyChangeKind::kNodeAdded, {id}, {}, {}});
  return id;
}

Status Topology::ConnectFullMesh(const LinkSpec& spec) {
  KSIM_RETURN_IF_ERROR(ValidateLinkSpec(spec));
  TopologyChange change{TopologyChangeKind::kLinkSet, {}, {}, {}};
  for (uint32_t a = 0; a < nodes_.size(); ++a) {
    for (uint32_t b = 0; b < nodes_.size(); ++b) {
      if (a == b || FindEdge(NodeId(a), NodeId(b))) continue;
      SetDirected(NodeId(a), NodeId(b), spec);
      change.restored.push_back(DirectedLink{NodeId(a), NodeId(b)});
    }
  }
  for (uint32_t a = 0; a < nodes_.size(); ++a) change.nodes.push_back(NodeId(a));
  if (!change.restored.empty()) Notify(change);
  return Status::Ok();
}

Status Topology::SetLink(std::string_view a, std::string_view b, const LinkSpec& spec) {
  KSIM_RETURN_IF_ERROR(SetLinkDirected(a, b, spec));
  return SetLinkDirected(b, a, spec);
}

Status Topology::SetLinkDirected(std::string_view from, std::string_view to, const LinkSpec& spec) {
  KSIM_RETURN_IF_ERROR(ValidateLinkSpec(spec));
  KSIM_ASSIGN_OR_RETURN(const NodeId from_id, Lookup(from));
  KSIM_ASSIGN_OR_RETURN(const NodeId to_id, Lookup(to));
  if (from_id == to_id) {
    return Status(Errc::kInvalidArgument, "a link joins two nodes, not " + std::string(from));
  }
  const bool added = !FindEdge(from_id, to_id).has_value();
  SetDirected(from_id, to_id, spec);
  TopologyChange change{TopologyChangeKind::kLinkSet, {from_id, to_id}, {}, {}};
  if (added) change.restored.push_back(DirectedLink{from_id, to_id});
  Notify(change);
  return Status::Ok();
}

Status Topology::Partition(const std::vector<std::vector<std::string>>& sides, bool one_way) {
  // Resolve and check everything before changing anything: bad input leaves the graph as it was.
  std::vector<std::vector<NodeId>> side_ids(sides.size());
  std::set<NodeId> seen;
  for (size_t s = 0; s < sides.size(); ++s) {
    for (const std::string& name : sides[s]) {
      KSIM_ASSIGN_OR_RETURN(const NodeId id, Lookup(name));
      if (!seen.insert(id).second) {
        return Status(Errc::kInvalidArgument, "node " + name + " is on two partition sides");
      }
      side_ids[s].push_back(id);
    }
  }
  TopologyChange change{TopologyChangeKind::kPartition, {}, {}, {}};
  for (const auto& side : side_ids)
    change.nodes.insert(change.nodes.end(), side.begin(), side.end());
  for (size_t s = 0; s < side_ids.size(); ++s) {
    if (one_way && s != 0) break;  // one-way: only links leaving the first side are cut
    for (size_t t = 0; t < side_ids.size(); ++t) {
      if (s == t) continue;
      for (NodeId from : side_ids[s]) {
        for (NodeId to : side_ids[t]) CutOne(from, to, change);
      }
    }
  }
  std::sort(change.cut.begin(), change.cut.end());
  Notify(change);
  return Status::Ok();
}

void Topology::Heal() {
  TopologyChange change{TopologyChangeKind::kHeal, {}, {}, {}};
  for (uint32_t a = 0; a < nodes_.size(); ++a) {
    for (const Edge& edge : boost::make_iterator_range(boost::out_edges(a, graph_))) {
      EdgeState& state = graph_[edge];
      if (!state.cut) continue;
      state.cut = false;
      change.restored.push_back(
          DirectedLink{NodeId(a), NodeId(static_cast<uint32_t>(boost::target(edge, graph_)))});
    }
  }
  std::sort(change.restored.begin(), change.restored.end());
  Notify(change);
}

Status Topology::Isolate(std::string_view node) {
  KSIM_ASSIGN_OR_RETURN(const NodeId id, Lookup(node));
  TopologyChange change{TopologyChangeKind::kIsolate, {id}, {}, {}};
  for (uint32_t other = 0; other < nodes_.size(); ++other) {
    if (other == id.value()) continue;
    CutOne(id, NodeId(other), change);
    CutOne(NodeId(other), id, change);
  }
  std::sort(change.cut.begin(), change.cut.end());
  Notify(change);
  return Status::Ok();
}

Status Topology::SetNodeUp(std::string_view node, bool up) {
  KSIM_ASSIGN_OR_RETURN(const NodeId id, Lookup(node));
  NodeState& state = nodes_[id.value()];
  if (state.up == up) return Status::Ok();  // no change, no event
  state.up = up;
  Notify(TopologyChange{
      up ? TopologyChangeKind::kNodeUp : TopologyChangeKind::kNodeDown, {id}, {}, {}});
  return Status::Ok();
}

Status Topology::SetSlow(std::string_view node, TimeUs extra_delay_us) {
  if (extra_delay_us < 0) return Status(Errc::kInvalidArgument, "a slow node's delay is negative");
  KSIM_ASSIGN_OR_RETURN(const NodeId id, Lookup(node));
  nodes_[id.value()].slow_extra_us = extra_delay_us;
  Notify(TopologyChange{TopologyChangeKind::kSlow, {id}, {}, {}});
  return Status::Ok();
}

std::optional<NodeId> Topology::Find(std::string_view name) const {
  auto it = ids_.find(name);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

NodeId Topology::Id(std::string_view name) const {
  auto it = ids_.find(name);
  KSIM_CHECK_MSG(it != ids_.end(), "unknown node name");
  return it->second;
}

const std::string& Topology::Name(NodeId id) const {
  KSIM_CHECK(id.value() < nodes_.size());
  return nodes_[id.value()].name;
}

bool Topology::IsUp(NodeId id) const {
  KSIM_CHECK(id.value() < nodes_.size());
  return nodes_[id.value()].up;
}

TimeUs Topology::SlowExtraUs(NodeId id) const {
  KSIM_CHECK(id.value() < nodes_.size());
  return nodes_[id.value()].slow_extra_us;
}

std::optional<LinkSpec> Topology::Link(NodeId from, NodeId to) const {
  const auto edge = FindEdge(from, to);
  if (!edge) return std::nullopt;
  return graph_[*edge].spec;
}

bool Topology::IsCut(NodeId from, NodeId to) const {
  const auto edge = FindEdge(from, to);
  return edge && graph_[*edge].cut;
}

bool Topology::CanSend(NodeId from, NodeId to) const {
  if (!IsUp(from) || !IsUp(to)) return false;
  const auto edge = FindEdge(from, to);
  return edge && !graph_[*edge].cut;
}

bool Topology::Reachable(NodeId from, NodeId to) const {
  KSIM_CHECK(from.value() < nodes_.size());
  KSIM_CHECK(to.value() < nodes_.size());
  if (!IsUp(from) || !IsUp(to)) return false;
  if (from == to) return true;
  const Graph& graph = graph_;
  const std::vector<NodeState>& nodes = nodes_;
  auto edge_up = [&graph](const Edge& edge) { return !graph[edge].cut; };
  auto vertex_up = [&nodes](Graph::vertex_descriptor v) { return nodes[v].up; };
  boost::filtered_graph<Graph, std::function<bool(const Edge&)>,
                        std::function<bool(Graph::vertex_descriptor)>>
      up_view(graph_, edge_up, vertex_up);
  std::vector<boost::default_color_type> colors(nodes_.size(), boost::white_color);
  auto color_map =
      boost::make_iterator_property_map(colors.begin(), boost::get(boost::vertex_index, graph_));
  boost::breadth_first_search(up_view, from.value(), boost::color_map(color_map));
  return colors[to.value()] != boost::white_color;
}

std::vector<std::vector<NodeId>> Topology::Components() const {
  using Undirected = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
  Undirected both_ways(nodes_.size());
  for (uint32_t a = 0; a < nodes_.size(); ++a) {
    for (uint32_t b = a + 1; b < nodes_.size(); ++b) {
      if (CanSend(NodeId(a), NodeId(b)) && CanSend(NodeId(b), NodeId(a))) {
        boost::add_edge(a, b, both_ways);
      }
    }
  }
  std::vector<int> component(nodes_.size(), -1);
  const int count = boost::connected_components(both_ways, component.data());
  std::vector<std::vector<NodeId>> groups(static_cast<size_t>(count));
  for (uint32_t v = 0; v < nodes_.size(); ++v) {
    KSIM_CHECK(component[v] >= 0 && component[v] < count);
    groups[static_cast<size_t>(component[v])].push_back(NodeId(v));  // ids ascend within a group
  }
  std::sort(groups.begin(), groups.end(),
            [](const auto& x, const auto& y) { return x.front() < y.front(); });
  return groups;
}

std::vector<std::vector<std::string>> Topology::ComponentNames() const {
  std::vector<std::vector<std::string>> names;
  for (const auto& group : Components()) {
    names.emplace_back();
    for (NodeId id : group) names.back().push_back(Name(id));
  }
  return names;
}

Topology::ListenerId Topology::AddListener(Listener listener) {
  KSIM_CHECK(listener != nullptr);
  const ListenerId id = next_listener_id_++;
  listeners_.emplace(id, std::move(listener));
  return id;
}

void Topology::RemoveListener(ListenerId id) { listeners_.erase(id); }

Result<NodeId> Topology::Lookup(std::string_view name) const {
  auto it = ids_.find(name);
  if (it == ids_.end()) return Status(Errc::kNotFound, "unknown node " + std::string(name));
  return it->second;
}

std::optional<Topology::Edge> Topology::FindEdge(NodeId from, NodeId to) const {
  KSIM_CHECK(from.value() < nodes_.size());
  KSIM_CHECK(to.value() < nodes_.size());
  const auto [edge, found] = boost::edge(from.value(), to.value(), graph_);
  if (!found) return std::nullopt;
  return edge;
}

void Topology::SetDirected(NodeId from, NodeId to, const LinkSpec& spec) {
  KSIM_CHECK(from != to);
  if (auto edge = FindEdge(from, to)) {
    graph_[*edge].spec = spec;
    return;
  }
  const auto [edge, added] =
      boost::add_edge(from.value(), to.value(), EdgeState{spec, false}, graph_);
  KSIM_CHECK(added);
}

void Topology::CutOne(NodeId from, NodeId to, TopologyChange& change) {
  auto edge = FindEdge(from, to);
  if (!edge || graph_[*edge].cut) return;
  graph_[*edge].cut = true;
  change.cut.push_back(DirectedLink{from, to});
}

void Topology::Notify(const TopologyChange& change) {
  // A listener may add or remove listeners; iterate over the ids present now.
  std::vector<ListenerId> ids;
  for (const auto& [id, listener] : listeners_) ids.push_back(id);
  for (ListenerId id : ids) {
    auto it = listeners_.find(id);
    if (it != listeners_.end()) it->second(change);
  }
}

}  // namespace ksim::sim
