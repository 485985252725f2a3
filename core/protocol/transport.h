// The Transport seam: how a node (a broker, the controller inside a broker, a client) sends Kafka
// messages (core/protocol/messages.h) to other nodes and hears from them. Nodes are named
// ("broker-1", "zk", "p1"). The simulator's implementation is sim::SimTransport on the virtual
// network (docs/network.md); a real one would be TCP connections carrying the Kafka wire protocol.
//
// Delivery guarantees, which every implementation gives and core code may rely on:
// - Messages to one peer travel on a connection. While it holds, they arrive in the order sent
//   (FIFO per peer and direction), each exactly once.
// - A connection can break (peer crashed, link cut, too many losses). Everything in flight on it,
//   both ways, is lost, and nothing sent on it arrives afterwards. Each end that used it is told
//   by OnDisconnect(peer, connection), some time later (the transport's timeout: for a Kafka
//   client that is request.timeout.ms). A notice covers every connection to that peer with an
//   id up to the one given.
// - Send never fails and never blocks: a message to an unreachable peer is lost as if the
//   connection broke under it, and the sender learns it from OnDisconnect or its own timeout.
//   The next Send after a break opens a new connection (a larger ConnectionId) at once.
// - Nothing is delivered synchronously inside Send; handlers run later, one at a time.
//
// Ownership: a Transport belongs to its node and borrows its handler, which must outlive it or
// be replaced first. When the node crashes its Transport is destroyed; a restarted node makes a
// new one. Single-threaded.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/protocol/messages.h"

namespace ksim {

// Identifies one connection to one peer: 1, 2, ... growing each time it breaks and reopens.
using ConnectionId = uint64_t;

class TransportHandler {
 public:
  virtual ~TransportHandler() = default;
  // A message from `from`, on connection `connection`.
  virtual void OnMessage(std::string_view from, ConnectionId connection, Message message) = 0;
  // Every message sent to or from `peer` on connections up to `broken_through` that has not
  // arrived yet never will.
  virtual void OnDisconnect(std::string_view peer, ConnectionId broken_through) = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // This node's name.
  virtual const std::string& local() const = 0;
  // Installs the handler that receives this node's messages and notices (replacing any earlier
  // one). REQUIRES: handler outlives this Transport or is replaced first.
  virtual void SetHandler(TransportHandler* handler) = 0;
  // Sends `message` to `to` and returns the connection it went on. REQUIRES: `to` names a node
  // other than local().
  virtual ConnectionId Send(std::string_view to, Message message) = 0;
  // Sends `message` to `to` on connection `connection` if that connection still holds, and
  // returns true; once it has broken (a newer connection may be open) the message is dropped and
  // it returns false. A response goes back on the connection its request came on: Kafka's
  // RequestChannel sends it to that connection's id, and a response for a closed one is dropped.
  // REQUIRES: `to` names a node other than local().
  virtual bool SendOn(std::string_view to, ConnectionId connection, Message message) = 0;
  // Closes the connection to `peer`, as a server closes a client's socket (Kafka's
  // RequestChannel.closeConnection): everything in flight on it, both ways, is lost, and `peer`
  // is told by OnDisconnect once the close reaches it; this node is not told. The next Send opens
  // a new connection. A transport without connections of its own (a test's scripted one) may do
  // nothing. REQUIRES: `peer` names a node other than local().
  virtual void Close(std::string_view peer) { (void)peer; }
};

}  // namespace ksim
