// SocketServer: `ksim serve`'s TCP side (docs/serve.md). Listeners on the loopback address
// (127.0.0.1 only: nothing outside the machine can connect) and the client connections they
// accept, all non-blocking and polled from the serve loop's one thread (poll(2)); no thread of
// its own. What happens on the sockets becomes Events (a connection opened, bytes read, a
// connection closed by the peer or failed) for the serve loop to stamp and feed to the
// ClientGateway; what the gateway answers is queued per connection and written as the socket
// accepts it.
//
// This is the run's only nondeterministic part: when bytes arrive depends on the clients and
// the kernel. Nothing here touches the simulated world; the serve loop records every Event in
// the trace with the virtual time it enters at, which is what a replay feeds back.
//
// Owns its file descriptors; the destructor closes them. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/status.h"

namespace ksim::sim {

class SocketServer {
 public:
  struct Event {
    enum class Kind : uint8_t { kOpened, kData, kClosed };
    Kind kind = Kind::kData;
    uint64_t connection = 0;  // 1, 2, ... in accept order
    int32_t listener_tag = 0;  // kOpened: the tag of the listener it came to
    Bytes data;                // kData
  };

  SocketServer() = default;
  ~SocketServer();
  SocketServer(const SocketServer&) = delete;
  SocketServer& operator=(const SocketServer&) = delete;

  // Listens on 127.0.0.1:`port` (0: a free port the kernel picks) and returns the port. Errors
  // name the port and the system's reason (EADDRINUSE: "Address already in use").
  Result<int32_t> Listen(int32_t port, int32_t tag);
  // Waits at most `timeout_ms` for something to happen, then appends every accept, read and
  // close to `events`, and writes queued output the sockets accept.
  void Poll(int timeout_ms, std::vector<Event>& events);
  // Queues bytes for a connection (dropped if it is closed).
  void Send(uint64_t connection, Bytes bytes);
  // Closes a connection now; what was queued for it is dropped.
  void Close(uint64_t connection);
  // Closes every connection and listener.
  void CloseAll();

  size_t connections() const { return connections_.size(); }

 private:
  struct Connection {
    int fd = -1;
    Bytes output;
    size_t written = 0;  // of output
  };
  struct Listener {
    int fd = -1;
    int32_t tag = 0;
  };

  void Accept(const Listener& listener, std::vector<Event>& events);
  // False when the connection ended (reported in `events`).
  bool Read(uint64_t id, Connection& connection, std::vector<Event>& events);
  bool Write(Connection& connection);

  std::vector<Listener> listeners_;
  std::map<uint64_t, Connection> connections_;
  std::vector<uint64_t> failed_;  // connections a write found broken, reported at the next Poll
  uint64_t next_connection_ = 1;
};

}  // namespace ksim::sim
