#include "sim/world/sim_transport.h"

#include <utility>

#include "core/base/check.h"

namespace ksim::sim {

sim::Message ToNetworkMessage(ksim::Message message) {
  sim::Message out;
  out.kind = std::string(MessageKind(message));
  out.size_bytes = ApproximateWireSize(message);
  out.payload = std::make_shared<TransportPayload>(std::move(message));  // see OnMessage
  return out;
}

SimTransport::SimTransport(Network& network, std::string_view node)
    : network_(network), node_(network.topology().Id(node)), name_(node) {}

SimTransport::~SimTransport() {
  if (attached_) network_.Unregister(node_);
}

void SimTransport::Attach() {
  network_.Register(node_,
                    NetworkHandler{[this](Delivery delivery) { OnMessage(delivery); },
                                   [this](const Disconnect& notice) { OnDisconnect(notice); }});
  attached_ = true;
}

bool SimTransport::OnMessage(const Delivery& delivery) {
  const auto* payload = dynamic_cast<const TransportPayload*>(delivery.message.payload.get());
  if (payload == nullptr) return false;
  if (handler_ == nullptr) {
    ++unhandled_;
    return true;
  }
  // The handler gets a Message of its own. When the delivery holds the only reference (the
  // usual case: the sender's went into the network) the contents are moved, not copied; the
  // payload object was created non-const (ToNetworkMessage), so this is no write to a const.
  ksim::Message message = delivery.message.payload.use_count() == 1
                              ? std::move(const_cast<TransportPayload*>(payload)->message)
                              : payload->message;
  handler_->OnMessage(network_.topology().Name(delivery.from), delivery.connection_epoch,
                      std::move(message));
  return true;
}

void SimTransport::OnDisconnect(const Disconnect& notice) {
  if (handler_ == nullptr) return;
  handler_->OnDisconnect(network_.topology().Name(notice.peer), notice.broken_epoch);
}

bool SimTransport::SendOn(std::string_view to, ConnectionId connection, ksim::Message message) {
  const NodeId to_id = network_.topology().Id(to);
  KSIM_CHECK_MSG(to_id != node_, "a node sends to itself");
  if (network_.ConnectionEpoch(node_, to_id) != connection) return false;
  const ConnectionId sent_on =
      network_.Send(node_, to_id, ToNetworkMessage(std::move(message)), SendDelay())
          .connection_epoch;
  KSIM_CHECK(sent_on == connection);
  return true;
}

ConnectionId SimTransport::Send(std::string_view to, ksim::Message message) {
  const NodeId to_id = network_.topology().Id(to);
  KSIM_CHECK_MSG(to_id != node_, "a node sends to itself");
  return network_.Send(node_, to_id, ToNetworkMessage(std::move(message)), SendDelay())
      .connection_epoch;
}

void SimTransport::Close(std::string_view peer) {
  const NodeId peer_id = network_.topology().Id(peer);
  KSIM_CHECK_MSG(peer_id != node_, "a node closes a connection to itself");
  network_.Close(node_, peer_id);
}

}  // namespace ksim::sim
