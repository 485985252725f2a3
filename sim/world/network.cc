#include "sim/world/network.h"

#include <algorithm>
#include <utility>

#include "core/base/check.h"

namespace ksim::sim {

Message Message::OfBytes(std::string kind, Bytes bytes) {
  Message message;
  message.kind = std::move(kind);
  message.size_bytes = static_cast<int64_t>(bytes.size());
  message.bytes = std::move(bytes);
  return message;
}

std::string_view DropReasonName(DropReason reason) {
  switch (reason) {
    case DropReason::kNone:
      return "none";
    case DropReason::kSenderDown:
      return "sender_down";
    case DropReason::kNodeDown:
      return "node_down";
    case DropReason::kNoLink:
      return "no_link";
    case DropReason::kLinkCut:
      return "link_cut";
    case DropReason::kRetransmitTimeout:
      return "retransmit_timeout";
    case DropReason::kRefused:
      return "refused";
    case DropReason::kClosed:
      return "closed";
  }
  return "unknown";
}

std::string_view NetEventTypeName(NetEvent::Type type) {
  switch (type) {
    case NetEvent::Type::kSend:
      return "send";
    case NetEvent::Type::kDeliver:
      return "deliver";
    case NetEvent::Type::kDrop:
      return "drop";
    case NetEvent::Type::kDisconnect:
      return "disconnect";
    case NetEvent::Type::kHold:
      return "hold";
  }
  return "unknown";
}

Network::Network(EventLoop& loop, Topology& topology, RandomStream rng, NetworkOptions options)
    : loop_(loop), topology_(topology), rng_(rng), options_(options) {
  KSIM_CHECK(options_.disconnect_timeout_us > 0);
  KSIM_CHECK(options_.retransmit_timeout_us > 0);
  KSIM_CHECK(options_.retransmit_timeout_us <= options_.retransmit_timeout_us_max);
  KSIM_CHECK(options_.max_retransmits >= 0);
  Grow();
  listener_id_ =
      topology_.AddListener([this](const TopologyChange& change) { OnTopologyChange(change); });
}

Network::~Network() {
  topology_.RemoveListener(listener_id_);
  // Pending events point at this object: take them back so the loop can outlive us.
  for (Connection& connection : connections_) {
    for (int side = 0; side < 2; ++side) {
      const Channel& channel = connection.channel[side];
      for (const InFlight& item : channel.in_flight) {
        if (item.timer != 0) loop_.Cancel(item.timer);
      }
      if (channel.give_up_timer != 0) loop_.Cancel(channel.give_up_timer);
      if (connection.notice_timer[side] != 0) loop_.Cancel(connection.notice_timer[side]);
    }
  }
  for (const NodeState& node : nodes_) {
    if (node.slow_end_timer != 0) loop_.Cancel(node.slow_end_timer);
  }
}

void Network::Register(NodeId node, NetworkHandler handler) {
  Grow();
  KSIM_CHECK(node.value() < nodes_.size());
  KSIM_CHECK_MSG(static_cast<bool>(handler.on_message), "a handler needs on_message");
  nodes_[node.value()].handler = std::make_shared<const NetworkHandler>(std::move(handler));
  nodes_[node.value()].exited = false;
}

void Network::Register(std::string_view node, NetworkHandler handler) {
  Register(topology_.Id(node), std::move(handler));
}

void Network::Unregister(NodeId node) {
  KSIM_CHECK(node.value() < nodes_.size());
  nodes_[node.value()].handler.reset();
}

void Network::ExitProcess(NodeId node) {
  Grow();
  KSIM_CHECK(node.value() < nodes_.size());
  nodes_[node.value()].handler.reset();
  nodes_[node.value()].exited = true;
  // The kernel closes the process's sockets: a FIN (clean exit) or an RST (halt) goes out on
  // each, and the peer reads it one latency later. The node itself will never read a notice.
  BreakConnectionsOf(node, DropReason::kRefused, /*after_latency=*/true);
}

void Network::Close(NodeId closer, NodeId peer) {
  Grow();
  KSIM_CHECK(closer.value() < nodes_.size());
  KSIM_CHECK(peer.value() < nodes_.size());
  KSIM_CHECK_MSG(closer != peer, "a node closes a connection to another node");
  const Connection& connection = ConnectionFor(closer, peer);
  const bool closer_waits_for_notice = connection.notice_timer[closer < peer ? 0 : 1] != 0;
  Break(closer, peer, DropReason::kClosed, LinkLatencyUs(closer, peer));
  // The closer knows; a notice it was already owed (an earlier break) stays.
  if (!closer_waits_for_notice) CancelNotice(closer, peer);
}

bool Network::Alive(NodeId node) const {
  return topology_.IsUp(node) && !nodes_[node.value()].exited;
}

TimeUs Network::LinkLatencyUs(NodeId from, NodeId to) const {
  const std::optional<LinkSpec> link = topology_.Link(from, to);
  if (!link || topology_.IsCut(from, to)) return options_.disconnect_timeout_us;
  return link->latency_us_max;
}

SendResult Network::Send(std::string_view from, std::string_view to, Message message) {
  return Send(topology_.Id(from), topology_.Id(to), std::move(message));
}

SendResult Network::Send(NodeId from, NodeId to, Message message, TimeUs depart_after_us) {
  Grow();
  KSIM_CHECK(from.value() < nodes_.size());
  KSIM_CHECK(to.value() < nodes_.size());
  KSIM_CHECK_MSG(from != to, "a node sends to another node");
  KSIM_CHECK(message.size_bytes >= 0);
  KSIM_CHECK(depart_after_us >= 0);
  const MessageId id = next_message_id_++;
  const TimeUs now = loop_.Now();
  counters_.sent += 1;
  counters_.bytes_sent += static_cast<uint64_t>(message.size_bytes);

  Connection& connection = ConnectionFor(from, to);
  const int side = from < to ? 0 : 1;
  const uint64_t epoch = connection.epoch;
  NetEvent event{NetEvent::Type::kSend,
                 now,
                 id,
                 from,
                 to,
                 topology_.Name(from),
                 topology_.Name(to),
                 message.kind,
                 message.size_bytes,
                 epoch,
                 -1,
                 0,
                 DropReason::kNone};

  if (!Alive(from)) {  // a dead process's leftover timer: nothing leaves the node
    Report(event);
    ReportDrop(from, to, id, message, epoch, DropReason::kSenderDown);
    return SendResult{id, epoch, true};
  }
  connection.used[side] = true;

  DropReason reason = DropReason::kNone;
  const std::optional<LinkSpec> link = topology_.Link(from, to);
  Channel& channel = connection.channel[side];
  if (!topology_.IsUp(to)) {
    reason = DropReason::kNodeDown;
  } else if (!link) {
    reason = DropReason::kNoLink;
  } else if (topology_.IsCut(from, to) || channel.holding) {
    // Lost to the cut, or queued behind a message that was: held until the heal or the
    // sender's give-up, the connection kept (a silence, not a reset).
    Report(event);
    if (!channel.holding) Hold(from, to, channel);
    InFlight item{id, now, 0, std::move(message)};
    HoldMessage(from, to, channel, item);
    channel.in_flight.push_back(std::move(item));
    return SendResult{id, epoch, false};
  } else if (!nodes_[to.value()].handler) {
    reason = DropReason::kRefused;  // the host is up, nothing listens: RST
  }
  TimeUs arrival_us = 0;
  int32_t retransmits = 0;
  if (reason == DropReason::kNone && !DrawArrival(from, to, *link, message.size_bytes, channel,
                                                  now + depart_after_us, arrival_us, retransmits)) {
    reason = DropReason::kRetransmitTimeout;
  }
  counters_.retransmits += static_cast<uint64_t>(retransmits);
  event.retransmits = retransmits;
  if (reason != DropReason::kNone) {
    Report(event);
    ReportDrop(from, to, id, message, epoch, reason);
    // A refusal comes back in one round trip; anything else only the timeout reveals.
    Break(
        from, to, reason,
        reason == DropReason::kRefused ? 2 * link->latency_us_max : options_.disconnect_timeout_us);
    return SendResult{id, epoch, true};
  }

  // FIFO per direction of the connection: never before the message sent ahead of this one.
  const TimeUs deliver_us = std::max(arrival_us, channel.last_delivery_us);
  KSIM_CHECK(deliver_us >= now);
  channel.last_delivery_us = deliver_us;
  event.deliver_at_us = deliver_us;
  Report(event);
  const TimerId timer = loop_.ScheduleAt(
      deliver_us, [this, from, to, id] { Deliver(from, to, id); }, "net.deliver");
  channel.in_flight.push_back(InFlight{id, now, timer, std::move(message)});
  return SendResult{id, epoch, false};
}

bool Network::DrawArrival(NodeId from, NodeId to, const LinkSpec& link, int64_t size_bytes,
                          Channel& channel, TimeUs now, TimeUs& arrival_us, int32_t& retransmits) {
  const TimeUs latency_us = link.latency_us_min == link.latency_us_max
                                ? link.latency_us_min
                                : rng_.UniformInt(link.latency_us_min, link.latency_us_max);
  // A lost transmission is a lost TCP segment: the sender retransmits after the RTO, which
  // doubles per loss (RFC 6298 backoff). The client gives up first if it takes too long.
  TimeUs retransmit_delay_us = 0;
  TimeUs rto_us = options_.retransmit_timeout_us;
  retransmits = 0;
  while (link.loss_ppm > 0 && rng_.ChancePpm(link.loss_ppm)) {
    ++retransmits;
    retransmit_delay_us += rto_us;
    if (retransmits > options_.max_retransmits ||
        retransmit_delay_us >= options_.disconnect_timeout_us) {
      return false;
    }
    rto_us = NextRto(rto_us);
  }
  // Serialization: the message holds this direction of the link for size / bandwidth, after
  // the messages already being put on it.
  TimeUs departure_us = now;
  if (link.bandwidth_bytes_per_s > 0) {
    const auto bits = static_cast<unsigned __int128>(size_bytes) * 1'000'000u;
    const auto bandwidth = static_cast<unsigned __int128>(link.bandwidth_bytes_per_s);
    const auto transmit_us = static_cast<TimeUs>((bits + bandwidth - 1) / bandwidth);
    departure_us = std::max(now, channel.link_free_us) + transmit_us;
    channel.link_free_us = departure_us;
  }
  arrival_us = departure_us + latency_us + retransmit_delay_us + topology_.SlowExtraUs(from);
  KSIM_CHECK(arrival_us >= now);
  return true;
}

void Network::Deliver(NodeId from, NodeId to, MessageId id) {
  Connection& connection = ConnectionFor(from, to);
  const int side = from < to ? 0 : 1;
  Channel& channel = connection.channel[side];
  KSIM_CHECK(!channel.in_flight.empty());
  KSIM_CHECK_MSG(channel.in_flight.front().id == id, "deliveries out of FIFO order");
  // A down end or a cut link would have broken the connection and cancelled this event.
  KSIM_CHECK(topology_.IsUp(from) && topology_.IsUp(to));
  InFlight item = std::move(channel.in_flight.front());
  channel.in_flight.pop_front();
  const uint64_t epoch = connection.epoch;

  std::shared_ptr<const NetworkHandler> handler = nodes_[to.value()].handler;
  if (!handler) {
    // Nothing listens on the node (ExitProcess breaks the connections of a process that exits,
    // so this is a node restarted but not listening yet): its RST travels back to the sender.
    ReportDrop(from, to, id, item.message, epoch, DropReason::kRefused);
    Break(from, to, DropReason::kRefused, LinkLatencyUs(to, from));
    return;
  }
  connection.used[1 - side] = true;
  counters_.delivered += 1;
  counters_.bytes_delivered += static_cast<uint64_t>(item.message.size_bytes);
  Report(NetEvent{NetEvent::Type::kDeliver, loop_.Now(), id, from, to, topology_.Name(from),
                  topology_.Name(to), item.message.kind, item.message.size_bytes, epoch, -1, 0,
                  DropReason::kNone});
  if (activity_) activity_(to);
  handler->on_message(Delivery{from, epoch, id, std::move(item.message)});
}

void Network::Break(NodeId a, NodeId b, DropReason reason, TimeUs notice_after_us) {
  KSIM_CHECK(notice_after_us >= 0);
  Connection& connection = ConnectionFor(a, b);
  const NodeId ends[2] = {std::min(a, b), std::max(a, b)};
  const uint64_t epoch = connection.epoch;
  for (int side = 0; side < 2; ++side) {
    Channel& channel = connection.channel[side];
    while (!channel.in_flight.empty()) {
      InFlight item = std::move(channel.in_flight.front());
      channel.in_flight.pop_front();
      if (item.timer != 0) loop_.Cancel(item.timer);
      ReportDrop(ends[side], ends[1 - side], item.id, item.message, epoch, reason);
    }
    channel.last_delivery_us = 0;
    channel.link_free_us = 0;
    channel.holding = false;
    if (channel.give_up_timer != 0) loop_.Cancel(channel.give_up_timer);
    channel.give_up_timer = 0;
  }
  connection.last_broken_epoch = epoch;
  connection.epoch = epoch + 1;
  counters_.connections_broken += 1;
  // Each live end that used the connection learns of it notice_after_us later; one notice
  // covers all breaks until it is given, and comes at the earliest they call for.
  for (int side = 0; side < 2; ++side) {
    const NodeId node = ends[side], peer = ends[1 - side];
    if (connection.used[side] && Alive(node)) {
      ScheduleNotice(node, peer, loop_.Now() + notice_after_us);
    }
    connection.used[side] = false;
  }
}

void Network::ScheduleNotice(NodeId node, NodeId peer, TimeUs due_us) {
  Connection& connection = ConnectionFor(node, peer);
  const int side = node < peer ? 0 : 1;
  if (connection.notice_timer[side] != 0) {
    if (connection.notice_due_us[side] <= due_us) return;
    loop_.Cancel(connection.notice_timer[side]);
  }
  connection.notice_due_us[side] = due_us;
  connection.notice_timer[side] = loop_.ScheduleAt(
      due_us, [this, node, peer] { GiveNotice(node, peer); }, "net.disconnect");
}

void Network::CancelNotice(NodeId node, NodeId peer) {
  Connection& connection = ConnectionFor(node, peer);
  const int side = node < peer ? 0 : 1;
  if (connection.notice_timer[side] == 0) return;
  loop_.Cancel(connection.notice_timer[side]);
  connection.notice_timer[side] = 0;
}

void Network::GiveNotice(NodeId node, NodeId peer) {
  Connection& connection = ConnectionFor(node, peer);
  const int side = node < peer ? 0 : 1;
  KSIM_CHECK(connection.notice_timer[side] != 0);
  connection.notice_timer[side] = 0;
  KSIM_CHECK(Alive(node));  // notices to a node are cancelled when its process dies
  const uint64_t broken_epoch = connection.last_broken_epoch;
  counters_.disconnects_notified += 1;
  Report(NetEvent{NetEvent::Type::kDisconnect, loop_.Now(), 0, peer, node, topology_.Name(peer),
                  topology_.Name(node), std::string_view(), 0, broken_epoch, -1, 0,
                  DropReason::kNone});
  std::shared_ptr<const NetworkHandler> handler = nodes_[node.value()].handler;
  if (handler && handler->on_disconnect) {
    if (activity_) activity_(node);
    handler->on_disconnect(Disconnect{peer, broken_epoch});
  }
}

void Network::ReportDrop(NodeId from, NodeId to, MessageId id, const Message& message,
                         uint64_t epoch, DropReason reason) {
  KSIM_CHECK(reason != DropReason::kNone);
  counters_.dropped += 1;
  counters_.bytes_dropped += static_cast<uint64_t>(message.size_bytes);
  Report(NetEvent{NetEvent::Type::kDrop, loop_.Now(), id, from, to, topology_.Name(from),
                  topology_.Name(to), message.kind, message.size_bytes, epoch, -1, 0, reason});
}

void Network::OnTopologyChange(const TopologyChange& change) {
  Grow();
  switch (change.kind) {
    case TopologyChangeKind::kPartition:
    case TopologyChangeKind::kIsolate:
      // The messages on their way across a cut are lost and will be retransmitted: held until
      // the heal. Idle connections notice nothing (TCP learns only when it sends).
      for (const DirectedLink& link : change.cut) {
        Channel& channel = ConnectionFor(link.from, link.to).channel[link.from < link.to ? 0 : 1];
        if (!channel.in_flight.empty() && !channel.holding) Hold(link.from, link.to, channel);
      }
      break;
    case TopologyChangeKind::kHeal:
    case TopologyChangeKind::kLinkSet:
      for (const DirectedLink& link : change.restored) Release(link.from, link.to);
      break;
    case TopologyChangeKind::kNodeDown:
      for (NodeId node : change.nodes) OnNodeDown(node);
      break;
    case TopologyChangeKind::kNodeUp:
      for (NodeId node : change.nodes) OnNodeUp(node);
      break;
    case TopologyChangeKind::kNodeAdded:
    case TopologyChangeKind::kSlow:
      break;
  }
}

void Network::Hold(NodeId from, NodeId to, Channel& channel) {
  KSIM_CHECK(!channel.holding);
  const TimeUs now = loop_.Now();
  channel.holding = true;
  channel.held_since_us = now;
  // The sender retransmits at now + rto, then 2 rto later, ... (RFC 6298 backoff, capped), and
  // gives up one RTO after its max_retransmits-th retransmission, or when its client's timeout
  // (disconnect_timeout_us) comes first.
  TimeUs total_us = 0;
  TimeUs rto_us = options_.retransmit_timeout_us;
  for (int32_t k = 0; k <= options_.max_retransmits && total_us < options_.disconnect_timeout_us;
       ++k) {
    total_us += rto_us;
    rto_us = NextRto(rto_us);
  }
  channel.give_up_us = now + std::min(total_us, options_.disconnect_timeout_us);
  channel.give_up_timer = loop_.ScheduleAt(
      channel.give_up_us, [this, from, to] { GiveUp(from, to); }, "net.give_up");
  // What was on its way is lost with the cut: its deliveries are taken back.
  for (InFlight& item : channel.in_flight) {
    if (item.timer == 0) continue;
    loop_.Cancel(item.timer);
    item.timer = 0;
    HoldMessage(from, to, channel, item);
  }
  channel.last_delivery_us = 0;
  channel.link_free_us = 0;
}

void Network::HoldMessage(NodeId from, NodeId to, Channel& channel, const InFlight& item) {
  KSIM_CHECK(channel.holding);
  counters_.held += 1;
  Report(NetEvent{NetEvent::Type::kHold, loop_.Now(), item.id, from, to, topology_.Name(from),
                  topology_.Name(to), item.message.kind, item.message.size_bytes,
                  ConnectionFor(from, to).epoch, -1, 0, DropReason::kLinkCut});
}

void Network::Release(NodeId from, NodeId to) {
  Channel& channel = ConnectionFor(from, to).channel[from < to ? 0 : 1];
  if (!channel.holding || !topology_.CanSend(from, to)) return;
  // The next retransmission gets through; the first transmission was lost at held_since_us.
  const TimeUs now = loop_.Now();
  TimeUs at_us = channel.held_since_us;
  TimeUs rto_us = options_.retransmit_timeout_us;
  int32_t retransmits = 0;
  while (at_us < now) {
    at_us += rto_us;
    rto_us = NextRto(rto_us);
    ++retransmits;
  }
  // give_up_us already counts max_retransmits: a retransmission before it is within them.
  if (at_us >= channel.give_up_us) return;  // the sender gives up first (GiveUp)
  loop_.Cancel(channel.give_up_timer);
  channel.give_up_timer = 0;
  channel.holding = false;
  counters_.retransmits += static_cast<uint64_t>(retransmits);
  const LinkSpec link = *topology_.Link(from, to);
  for (InFlight& item : channel.in_flight) {
    TimeUs arrival_us = 0;
    int32_t losses = 0;
    if (!DrawArrival(from, to, link, item.message.size_bytes, channel, at_us, arrival_us, losses)) {
      Break(from, to, DropReason::kRetransmitTimeout, options_.disconnect_timeout_us);
      return;
    }
    counters_.retransmits += static_cast<uint64_t>(losses);
    const TimeUs deliver_us = std::max(arrival_us, channel.last_delivery_us);
    channel.last_delivery_us = deliver_us;
    const MessageId id = item.id;
    item.timer = loop_.ScheduleAt(
        deliver_us, [this, from, to, id] { Deliver(from, to, id); }, "net.deliver");
  }
}

void Network::GiveUp(NodeId from, NodeId to) {
  Channel& channel = ConnectionFor(from, to).channel[from < to ? 0 : 1];
  KSIM_CHECK(channel.holding);
  channel.give_up_timer = 0;
  // The sender's TCP times out (ETIMEDOUT) and its client learns at once; the peer as well (it
  // is the moment a reset model would have told it, disconnect_timeout_us after the loss).
  Break(from, to, DropReason::kRetransmitTimeout, 0);
}

void Network::OnNodeDown(NodeId node) {
  // The node's process is gone: every connection it had is dead, whatever it carried, and
  // notices meant for it will never be read.
  BreakConnectionsOf(node, DropReason::kNodeDown, /*after_latency=*/false);
}

void Network::BreakConnectionsOf(NodeId node, DropReason reason, bool after_latency) {
  for (uint32_t other = 0; other < nodes_.size(); ++other) {
    if (other == node.value()) continue;
    const NodeId peer(other);
    CancelNotice(node, peer);
    const Connection& connection = ConnectionFor(node, peer);
    const bool active = connection.used[0] || connection.used[1] ||
                        !connection.channel[0].in_flight.empty() ||
                        !connection.channel[1].in_flight.empty();
    if (!active) continue;
    Break(node, peer, reason,
          after_latency ? LinkLatencyUs(node, peer) : options_.disconnect_timeout_us);
  }
}

void Network::OnNodeUp(NodeId node) {
  // The host is back: a peer still waiting to learn of a connection to it learns at its next
  // retransmission or connection attempt, which the new host answers with RST. A peer that the
  // node cannot reach back, or that cannot reach it, still waits for the timeout.
  const TimeUs due_us = loop_.Now() + options_.restart_notice_us;
  for (uint32_t other = 0; other < nodes_.size(); ++other) {
    if (other == node.value()) continue;
    const NodeId peer(other);
    const Connection& connection = ConnectionFor(node, peer);
    const int peer_side = peer < node ? 0 : 1;
    if (connection.notice_timer[peer_side] == 0) continue;
    if (!topology_.CanSend(peer, node) || !topology_.CanSend(node, peer)) continue;
    ScheduleNotice(peer, node, due_us);
  }
}

Status Network::SlowFor(std::string_view node, TimeUs extra_delay_us, TimeUs duration_us) {
  if (extra_delay_us < 0 || duration_us < 0) {
    return Status(Errc::kInvalidArgument, "a slow node's delay and duration are >= 0");
  }
  KSIM_RETURN_IF_ERROR(topology_.SetSlow(node, extra_delay_us));
  const NodeId id = topology_.Id(node);
  Grow();
  NodeState& state = nodes_[id.value()];
  if (state.slow_end_timer != 0) loop_.Cancel(state.slow_end_timer);
  const uint64_t generation = ++state.slow_generation;
  state.slow_end_timer = loop_.ScheduleAfter(
      duration_us,
      [this, id, generation] {
        NodeState& slowed = nodes_[id.value()];
        KSIM_CHECK(slowed.slow_generation == generation);
        slowed.slow_end_timer = 0;
        KSIM_CHECK(topology_.SetSlow(topology_.Name(id), 0).ok());
      },
      "net.slow_end");
  return Status::Ok();
}

uint64_t Network::ConnectionEpoch(NodeId a, NodeId b) {
  Grow();
  KSIM_CHECK(a != b);
  return ConnectionFor(a, b).epoch;
}

size_t Network::PairIndex(NodeId a, NodeId b) {
  KSIM_CHECK(a != b);
  const size_t lo = std::min(a, b).value(), hi = std::max(a, b).value();
  return hi * (hi - 1) / 2 + lo;  // triangular: stays put when nodes are added
}

void Network::Grow() {
  const size_t count = topology_.NodeCount();
  if (nodes_.size() == count) return;
  KSIM_CHECK(nodes_.size() < count);  // nodes are never removed
  nodes_.resize(count);
  connections_.resize(count * (count - 1) / 2);
}

Network::Connection& Network::ConnectionFor(NodeId a, NodeId b) {
  const size_t index = PairIndex(a, b);
  KSIM_CHECK(index < connections_.size());
  return connections_[index];
}

}  // namespace ksim::sim
