// The virtual network: moves messages between the nodes of a Topology on an EventLoop's virtual
// time, the way TCP connections would carry them. The model (docs/network.md):
//
// - A connection joins two nodes (an unordered pair) and carries messages both ways; it has an
//   epoch (its id) that changes each time it breaks, so nothing sent on a broken connection can
//   arrive on the next one.
// - A message takes the link's drawn latency, plus the sender's slow delay, plus retransmissions:
//   a random loss on a live connection is a lost TCP segment, which costs a retransmission
//   timeout (doubling each time) instead of vanishing. Bandwidth adds size / bandwidth of
//   serialization, queued behind earlier messages on that direction of the link.
// - Delivery is FIFO per direction of a connection: a message is delivered at max(its own
//   arrival, the previous delivery in that direction).
// - A cut is a silence, not a reset: a message sent across a cut link, or in flight on it when it
//   is cut, is held, as TCP keeps retransmitting a segment nobody acknowledges (RTO backoff from
//   the cut or the send), and everything behind it in that direction waits. When the link heals
//   the held messages go at the next retransmission. If that would come disconnect_timeout_us
//   or more after the hold began (or after more than max_retransmits), the sender has given up
//   first: the connection breaks then (kRetransmitTimeout) and both ends are told at once.
// - A connection breaks when a message is sent over a missing link or to a down node, when a
//   node goes down while messages are in flight on it (a crash breaks every connection the node
//   had), when a held message's retransmissions run out, or when random losses would outlast the
//   disconnect timeout. Breaking drops everything in flight both ways; each live endpoint that
//   used the connection is told (Disconnect) disconnect_timeout_us later, as a Kafka client
//   learns it from request.timeout.ms. The next send opens a new connection at once.
// - A host and its process are distinct. A down node (Topology: power loss) is silent: only the
//   timeout tells its peers, unless it comes back first, when the peers' next retransmission
//   meets its RST (restart_notice_us after it is up). A node that is up with no process
//   listening (ExitProcess: a clean shutdown, Exit.halt, a failed start-up; or a restarted node
//   before it listens) answers at once: its connections reset with a notice to each peer one
//   link latency later (FIN or RST), and a send to it is refused with a notice one round trip
//   later.
//
// Every send, delivery, drop and disconnect notice is reported to the observer (the trace writer
// records them at the `messages` level). All randomness comes from the RandomStream given at
// construction, drawn only in Send, in a fixed order; every container is indexed by node id.
//
// Ownership: Network borrows the EventLoop and the Topology, which must outlive it; it listens to
// the Topology's changes from construction to destruction. Handlers are owned by the Network.
// Single-threaded. Handlers may send from inside a delivery.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/clock.h"
#include "core/base/random.h"
#include "core/base/types.h"
#include "sim/kernel/event_loop.h"
#include "sim/world/topology.h"

namespace ksim::sim {

// Base for typed payloads carried without encoding (core's Transport puts its requests here).
struct Payload {
  virtual ~Payload() = default;
};

struct Message {
  std::string kind;                        // what the traces show: "Fetch", "ProduceResponse", ...
  Bytes bytes;                             // encoded contents, when the sender encodes
  std::shared_ptr<const Payload> payload;  // or an immutable object shared with the receiver
  int64_t size_bytes = 0;                  // what bandwidth and the byte counters count

  // A message whose size is its bytes'.
  static Message OfBytes(std::string kind, Bytes bytes);
};

using MessageId = uint64_t;  // 1, 2, ... in send order; 0 is no message

// Why a message did not arrive.
enum class DropReason : uint8_t {
  kNone,
  kSenderDown,         // sent by a node that is down (nothing else happens)
  kNodeDown,           // sent to a down node, or in flight when either end went down
  kNoLink,             // no link from sender to receiver in the topology
  kLinkCut,            // sent across a cut link, or in flight when a link was cut
  kRetransmitTimeout,  // lost so often that the sender would have timed out first
  kRefused,            // sent to or arriving at an up node where no process listens (RST)
  kClosed,             // in flight when an endpoint closed the connection (Close)
};
std::string_view DropReasonName(DropReason reason);

struct Delivery {
  NodeId from;
  uint64_t connection_epoch;
  MessageId id;
  Message message;
};

struct Disconnect {
  NodeId peer;
  // Every message sent on epochs up to this one is gone (a notice covers every break of the
  // connection since the previous notice).
  uint64_t broken_epoch;
};

struct NetworkHandler {
  std::function<void(Delivery)> on_message;
  std::function<void(const Disconnect&)> on_disconnect;  // may be empty
};

struct SendResult {
  MessageId id;
  uint64_t connection_epoch;  // the connection the message went on (or broke)
  bool dropped;               // dropped at once (the observer saw why)
};

// What the observer sees. Strings are valid only during the call.
struct NetEvent {
  // kHold: a transmission of the message was lost to a cut; it waits for the heal (held).
  enum class Type : uint8_t { kSend, kDeliver, kDrop, kDisconnect, kHold };
  Type type;
  TimeUs time_us;
  MessageId message_id;  // 0 for kDisconnect
  NodeId from;           // kDisconnect: the peer whose connection broke
  NodeId to;             // kDisconnect: the node told
  std::string_view from_name;
  std::string_view to_name;
  std::string_view kind;  // empty for kDisconnect
  int64_t size_bytes;
  uint64_t connection_epoch;
  TimeUs deliver_at_us;  // kSend neither dropped nor held: when it will be delivered; else -1
  int32_t retransmits;   // kSend: losses drawn for this message
  DropReason reason;     // kDrop only
};
std::string_view NetEventTypeName(NetEvent::Type type);

struct NetworkCounters {
  uint64_t sent = 0;
  uint64_t delivered = 0;
  uint64_t dropped = 0;
  uint64_t bytes_sent = 0;
  uint64_t bytes_delivered = 0;
  uint64_t bytes_dropped = 0;
  uint64_t retransmits = 0;
  uint64_t held = 0;  // messages held at a cut (each counted once per hold)
  uint64_t connections_broken = 0;
  uint64_t disconnects_notified = 0;
};

// Fault-free defaults follow TCP on Linux and Kafka 0.10's clients.
struct NetworkOptions {
  // How long after a connection breaks each endpoint that used it is told: Kafka clients notice a
  // dead connection through request.timeout.ms (30000 in 0.10's producer).
  TimeUs disconnect_timeout_us = 30'000'000;
  // First retransmission timeout of a lost segment (Linux TCP_RTO_MIN), doubled on each further
  // loss of the same message up to retransmit_timeout_us_max (TCP_RTO_MAX).
  TimeUs retransmit_timeout_us = 200'000;
  TimeUs retransmit_timeout_us_max = 120'000'000;
  // More losses than this for one message break the connection (Linux tcp_retries2), as does a
  // total retransmission delay of disconnect_timeout_us or more.
  int32_t max_retransmits = 15;
  // How long after a crashed node is up again each peer whose notice about it is still pending
  // is told: the peer's next retransmission or connection attempt meets the new host's RST.
  // RFC 6298's initial RTO (Linux TCP_TIMEOUT_INIT), 1 s; not for a node still cut off.
  TimeUs restart_notice_us = 1'000'000;
};

class Network {
 public:
  // REQUIRES: options' times > 0, retransmit_timeout_us <= retransmit_timeout_us_max,
  // max_retransmits >= 0.
  Network(EventLoop& loop, Topology& topology, RandomStream rng, NetworkOptions options = {});
  ~Network();
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  // Installs (or replaces) the handler of a node. A restarted node registers again.
  // REQUIRES: node exists, handler.on_message non-empty.
  void Register(NodeId node, NetworkHandler handler);
  void Register(std::string_view node, NetworkHandler handler);
  void Unregister(NodeId node);
  // The node's process exits while its host stays up (a clean shutdown, Exit.halt, a broker whose
  // start-up failed): its handler goes, every connection it had breaks (kRefused), and each peer
  // that used one is told one link latency later, as the FIN or RST reaches it; notices for the
  // node itself are dropped. Until a handler is registered again, nothing leaves the node and a
  // send to it is refused. REQUIRES: node exists.
  void ExitProcess(NodeId node);

  // `closer` closes its connection to `peer` (a server closing a client's socket: Kafka's
  // RequestChannel.closeConnection). It breaks (kClosed) like any connection, everything in flight
  // both ways dropped, and `peer` is told one link latency later, as the FIN reaches it; `closer`
  // is not told of its own close. REQUIRES: both exist, closer != peer.
  void Close(NodeId closer, NodeId peer);

  // Sends `message` from `from` to `to`, leaving `from` `depart_after_us` from now (its disk's work
  // first: sim/cluster/cluster.h; a message a cut holds leaves at a retransmission after the heal
  // instead). REQUIRES: both exist, from != to, size_bytes >= 0, depart_after_us >= 0.
  SendResult Send(NodeId from, NodeId to, Message message, TimeUs depart_after_us = 0);
  SendResult Send(std::string_view from, std::string_view to, Message message);

  // Makes `node`'s outbound messages `extra_delay_us` later for `duration_us`, then normal again
  // (a later SlowFor replaces an earlier one and its end). This is how a follower is made to lag
  // past replica.lag.time.max.ms: its fetches reach the leader late.
  // kNotFound for an unknown node, kInvalidArgument for a negative delay or duration.
  Status SlowFor(std::string_view node, TimeUs extra_delay_us, TimeUs duration_us);

  // Called with the receiving node just before a delivery or a disconnect notice is handed to
  // its handler (World::active_nodes: whose code an event ran).
  void SetActivityListener(std::function<void(NodeId)> listener) {
    activity_ = std::move(listener);
  }
  void SetObserver(std::function<void(const NetEvent&)> observer) {
    observer_ = std::move(observer);
  }

  const NetworkCounters& counters() const { return counters_; }
  // Messages sent and neither delivered nor dropped yet.
  uint64_t in_flight() const { return counters_.sent - counters_.delivered - counters_.dropped; }
  // The current epoch of the connection between a and b (1 until it first breaks).
  uint64_t ConnectionEpoch(NodeId a, NodeId b);
  const NetworkOptions& options() const { return options_; }
  Topology& topology() { return topology_; }

 private:
  struct InFlight {
    MessageId id;
    TimeUs sent_us;
    TimerId timer;  // its delivery; 0 while held
    Message message;
  };
  // One direction of a connection. While it holds (a cut), every message in it is held: none
  // has a delivery scheduled, and new ones queue behind (TCP's stream waits for the lost
  // segment).
  struct Channel {
    TimeUs last_delivery_us = 0;  // FIFO floor for the next message
    TimeUs link_free_us = 0;      // when the link has serialized the messages before
    std::deque<InFlight> in_flight;
    bool holding = false;
    TimeUs held_since_us = 0;   // the first lost transmission: the RTO backoff counts from it
    TimeUs give_up_us = 0;      // when the sender stops retransmitting
    TimerId give_up_timer = 0;  // breaks the connection at give_up_us; 0 when not holding
  };
  // The connection between nodes lo < hi. Index 0 of the arrays is lo's side: channel[0] carries
  // lo -> hi, used[0] says lo sent or received on this epoch.
  struct Connection {
    uint64_t epoch = 1;
    uint64_t last_broken_epoch = 0;
    Channel channel[2];
    bool used[2] = {false, false};
    TimerId notice_timer[2] = {0, 0};  // a pending Disconnect notice for that side, or 0
    TimeUs notice_due_us[2] = {0, 0};  // when that notice is due
  };
  struct NodeState {
    std::shared_ptr<const NetworkHandler> handler;  // shared: a handler may replace itself
    bool exited = false;           // ExitProcess: no process until a handler registers again
    uint64_t slow_generation = 0;  // which SlowFor the pending end belongs to
    TimerId slow_end_timer = 0;
  };

  static size_t PairIndex(NodeId a, NodeId b);
  void Grow();
  Connection& ConnectionFor(NodeId a, NodeId b);
  void OnTopologyChange(const TopologyChange& change);
  // Computes when a message sent now from -> to arrives (before the FIFO floor); returns false
  // if its losses break the connection. Draws from rng_.
  // `now`: when the message is put on the link (a held message: at its retransmission).
  bool DrawArrival(NodeId from, NodeId to, const LinkSpec& link, int64_t size_bytes,
                   Channel& channel, TimeUs now, TimeUs& arrival_us, int32_t& retransmits);
  // Held messages (a cut, docs/network.md "Cuts are silences"): Hold starts holding the channel
  // from -> to (its scheduled deliveries taken back); Release sends what it holds at the first
  // retransmission after now, once the link carries messages again; GiveUp breaks the connection
  // when the retransmissions run out.
  void Hold(NodeId from, NodeId to, Channel& channel);
  void HoldMessage(NodeId from, NodeId to, Channel& channel, const InFlight& item);
  void Release(NodeId from, NodeId to);
  void GiveUp(NodeId from, NodeId to);
  // The RTO after `rto_us`: doubled, capped at retransmit_timeout_us_max (RFC 6298 backoff).
  TimeUs NextRto(TimeUs rto_us) const {
    return std::min(rto_us * 2, options_.retransmit_timeout_us_max);
  }
  void Deliver(NodeId from, NodeId to, MessageId id);
  // Whether a process runs on the node: its host is up and it has not exited.
  bool Alive(NodeId node) const;
  // One-way latency of the link from -> to at its slowest, or the disconnect timeout without one.
  TimeUs LinkLatencyUs(NodeId from, NodeId to) const;
  // Breaks the connection; each live end that used it is told notice_after_us later.
  void Break(NodeId a, NodeId b, DropReason reason, TimeUs notice_after_us);
  // Schedules `node`'s notice about `peer` at due_us, or keeps the pending one if it is earlier.
  void ScheduleNotice(NodeId node, NodeId peer, TimeUs due_us);
  void CancelNotice(NodeId node, NodeId peer);
  void GiveNotice(NodeId node, NodeId peer);
  void OnNodeDown(NodeId node);
  // Breaks every connection of `node` that carried anything (its pending notices cancelled); each
  // peer hears after one link latency (a process exit: FIN/RST) or the disconnect timeout.
  void BreakConnectionsOf(NodeId node, DropReason reason, bool after_latency);
  void OnNodeUp(NodeId node);
  void ReportDrop(NodeId from, NodeId to, MessageId id, const Message& message, uint64_t epoch,
                  DropReason reason);
  void Report(const NetEvent& event) {
    if (observer_) observer_(event);
  }

  EventLoop& loop_;
  Topology& topology_;
  RandomStream rng_;
  NetworkOptions options_;
  Topology::ListenerId listener_id_;
  std::vector<NodeState> nodes_;         // by NodeId
  std::vector<Connection> connections_;  // by PairIndex
  std::function<void(const NetEvent&)> observer_;
  std::function<void(NodeId)> activity_;
  NetworkCounters counters_;
  MessageId next_message_id_ = 1;
};

}  // namespace ksim::sim
