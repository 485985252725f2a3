#include "sim/serve/socket_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace ksim::sim {
namespace {

constexpr size_t kReadBytes = 64 * 1024;  // per socket per poll

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK); }

}  // namespace

SocketServer::~SocketServer() { CloseAll(); }

Result<int32_t> SocketServer::Listen(int32_t port, int32_t tag) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status(Errc::kIoError, std::string("socket: ") + std::strerror(errno));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(fd, 64) != 0) {
    const std::string why = std::strerror(errno);
    close(fd);
    return Status(Errc::kIoError, "cannot listen on 127.0.0.1:" + std::to_string(port) + ": " + why);
  }
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  SetNonBlocking(fd);
  listeners_.push_back(Listener{fd, tag});
  return static_cast<int32_t>(ntohs(address.sin_port));
}

void SocketServer::Poll(int timeout_ms, std::vector<Event>& events) {
  for (uint64_t id : failed_) {
    if (connections_.count(id) == 0) continue;
    Close(id);
    events.push_back(Event{Event::Kind::kClosed, id, 0, {}});
  }
  failed_.clear();
  std::vector<pollfd> fds;
  std::vector<uint64_t> ids;  // per pollfd after the listeners
  for (const Listener& listener : listeners_) fds.push_back(pollfd{listener.fd, POLLIN, 0});
  for (const auto& [id, connection] : connections_) {
    const bool pending = connection.written < connection.output.size();
    fds.push_back(pollfd{connection.fd, static_cast<short>(POLLIN | (pending ? POLLOUT : 0)), 0});
    ids.push_back(id);
  }
  if (poll(fds.data(), fds.size(), timeout_ms) <= 0) return;  // timeout, or EINTR (Ctrl-C)
  for (size_t i = 0; i < listeners_.size(); ++i) {
    if (fds[i].revents & POLLIN) Accept(listeners_[i], events);
  }
  for (size_t k = 0; k < ids.size(); ++k) {
    const pollfd& fd = fds[listeners_.size() + k];
    auto it = connections_.find(ids[k]);
    if (it == connections_.end() || fd.revents == 0) continue;
    if ((fd.revents & POLLOUT) && !Write(it->second)) {
      Close(ids[k]);
      events.push_back(Event{Event::Kind::kClosed, ids[k], 0, {}});
      continue;
    }
    if (fd.revents & (POLLIN | POLLHUP | POLLERR)) Read(ids[k], it->second, events);
  }
}

void SocketServer::Accept(const Listener& listener, std::vector<Event>& events) {
  for (;;) {
    const int fd = accept4(listener.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN: no more
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    const uint64_t id = next_connection_++;
    connections_[id].fd = fd;
    events.push_back(Event{Event::Kind::kOpened, id, listener.tag, {}});
  }
}

bool SocketServer::Read(uint64_t id, Connection& connection, std::vector<Event>& events) {
  Bytes buffer(kReadBytes);
  const ssize_t n = recv(connection.fd, buffer.data(), buffer.size(), 0);
  if (n > 0) {
    buffer.resize(static_cast<size_t>(n));
    events.push_back(Event{Event::Kind::kData, id, 0, std::move(buffer)});
    return true;
  }
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
  Close(id);  // 0: the peer closed; < 0: the socket failed
  events.push_back(Event{Event::Kind::kClosed, id, 0, {}});
  return false;
}

bool SocketServer::Write(Connection& connection) {
  while (connection.written < connection.output.size()) {
    const ssize_t n = send(connection.fd, connection.output.data() + connection.written,
                           connection.output.size() - connection.written, MSG_NOSIGNAL);
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    connection.written += static_cast<size_t>(n);
  }
  connection.output.clear();
  connection.written = 0;
  return true;
}

void SocketServer::Send(uint64_t id, Bytes bytes) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Connection& connection = it->second;
  connection.output.insert(connection.output.end(), bytes.begin(), bytes.end());
  if (!Write(connection)) failed_.push_back(id);
}

void SocketServer::Close(uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  close(it->second.fd);
  connections_.erase(it);
}

void SocketServer::CloseAll() {
  for (auto& [id, connection] : connections_) close(connection.fd);
  connections_.clear();
  for (const Listener& listener : listeners_) close(listener.fd);
  listeners_.clear();
}

}  // namespace ksim::sim
