// SimTransport: core's Transport seam (core/protocol/transport.h) for one node on the virtual
// network (sim/world/network.h, docs/network.md). A Message travels unencoded, as an immutable
// TransportPayload shared with the receiver; the network message's kind is MessageKind(message)
// and its size ApproximateWireSize(message), so traces and bandwidth see Kafka's sizes.
//
// It maps the network's model onto the seam's guarantees: a Delivery becomes OnMessage(from,
// connection epoch, message), a Disconnect notice becomes OnDisconnect(peer, broken epoch); the
// ConnectionId is the network's connection epoch.
//
// Routing: a node's network handler is one function. A node that runs only Kafka messages calls
// Attach(); a node that also runs a ZooKeeperClient (a broker) hands each delivery to both
// (ZooKeeperClient::OnMessage first, then this OnMessage, which takes only TransportPayloads)
// and each disconnect notice to both.
//
// Ownership and crashes: borrows the Network (which must outlive it). One SimTransport per node
// at a time. When the node crashes its owner destroys it (unregistering the handler if attached);
// the restarted node makes a new one and attaches again; messages arriving in between are refused
// (the network's kRefused). Single-threaded.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/protocol/messages.h"
#include "core/protocol/transport.h"
#include "sim/world/network.h"

namespace ksim::sim {

// A core Message on the virtual network.
struct TransportPayload final : Payload {
  explicit TransportPayload(ksim::Message m) : message(std::move(m)) {}
  ksim::Message message;
};

// The network message carrying `message`: kind, size and payload as above.
sim::Message ToNetworkMessage(ksim::Message message);

class SimTransport final : public Transport {
 public:
  // REQUIRES: `node` exists in the network's topology.
  SimTransport(Network& network, std::string_view node);
  ~SimTransport() override;
  SimTransport(const SimTransport&) = delete;
  SimTransport& operator=(const SimTransport&) = delete;

  // Registers this transport as its node's network handler.
  void Attach();
  // For a node's own handler: returns true when the delivery carried a core Message (handed to
  // the handler), false when it is someone else's (e.g. ZooKeeper's protocol). Takes the
  // message's contents out of the payload when the delivery holds its only reference.
  bool OnMessage(const Delivery& delivery);
  void OnDisconnect(const Disconnect& notice);

  // Transport.
  const std::string& local() const override { return name_; }
  void SetHandler(TransportHandler* handler) override { handler_ = handler; }
  ConnectionId Send(std::string_view to, ksim::Message message) override;
  bool SendOn(std::string_view to, ConnectionId connection, ksim::Message message) override;
  void Close(std::string_view peer) override;

  // Messages that arrived while no handler was set (dropped).
  uint64_t unhandled() const { return unhandled_; }

  // How long from now each message sent waits before it leaves the node (Network::Send's
  // depart_after_us): a broker's disk still busy with the work that produced it (Cluster). None
  // by default.
  void SetSendDelay(std::function<TimeUs()> delay) { send_delay_ = std::move(delay); }

 private:
  Network& network_;
  NodeId node_;
  std::string name_;
  TransportHandler* handler_ = nullptr;
  bool attached_ = false;
  uint64_t unhandled_ = 0;
  std::function<TimeUs()> send_delay_;

  TimeUs SendDelay() const { return send_delay_ ? send_delay_() : 0; }
};

}  // namespace ksim::sim
