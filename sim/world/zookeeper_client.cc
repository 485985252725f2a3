#include "sim/world/zookeeper_client.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "core/base/check.h"

namespace ksim::sim {
namespace {

constexpr int64_t kFrameBytes = 4;
constexpr int64_t kRequestHeaderBytes = 8;  // xid, type
constexpr int64_t kConnectBytes = 44;       // protocol version, zxid, timeout, session, password
int64_t StringBytes(std::string_view s) { return 4 + static_cast<int64_t>(s.size()); }

}  // namespace

ZooKeeperClient::ZooKeeperClient(EventLoop& loop, Network& network, std::string_view node,
                                 RandomStream rng, ZkClientOptions options)
    : loop_(loop), network_(network), rng_(rng), options_(std::move(options)) {
  const std::optional<NodeId> self = network_.topology().Find(node);
  const std::optional<NodeId> server = network_.topology().Find(options_.server_node);
  KSIM_CHECK_MSG(self.has_value(), "the client's node is not in the topology");
  KSIM_CHECK_MSG(server.has_value(), "the ZooKeeper node is not in the topology");
  KSIM_CHECK(*self != *server);
  KSIM_CHECK(options_.session_timeout_us >= 3 * kUsPerMs);
  // A zero pause would retry a refused connect forever at one instant of virtual time.
  KSIM_CHECK(options_.reconnect_pause_us_max > 0);
  node_ = *self;
  server_ = *server;
}

ZooKeeperClient::~ZooKeeperClient() {
  CancelTimer(poll_timer_);
  CancelTimer(attempt_timer_);
  CancelTimer(deferred_timer_);
  if (attached_) network_.Unregister(node_);
}

void ZooKeeperClient::Attach() {
  network_.Register(node_,
                    NetworkHandler{[this](Delivery delivery) { OnMessage(delivery); },
                                   [this](const Disconnect& notice) { OnDisconnect(notice); }});
  attached_ = true;
}

size_t ZooKeeperClient::watch_count() const {
  return data_watches_.size() + exist_watches_.size() + child_watches_.size();
}

// ---- Session
// -------------------------------------------------------------------------------------

void ZooKeeperClient::Connect() {
  KSIM_CHECK_MSG(state_ == SessionState::kNotStarted || state_ == SessionState::kExpired ||
                     state_ == SessionState::kClosed,
                 "Connect() while a session is open");
  // A new session starts from nothing, as a new org.apache.zookeeper.ZooKeeper object does.
  session_ = kNoSession;
  negotiated_timeout_us_ = 0;
  last_zxid_ = Zxid{0};
  data_watches_.clear();
  exist_watches_.clear();
  child_watches_.clear();
  state_ = SessionState::kConnecting;
  ScheduleAttempt(0);  // the first attempt does not pause
}

void ZooKeeperClient::Close(std::function<void()> done) {
  switch (state_) {
    case SessionState::kConnected: {
      state_ = SessionState::kClosing;
      if (done) close_waiters_.push_back(std::move(done));
      Call call;
      call.op = ZkOp::kCloseSession;
      call.complete = [this](const Status&, const ZkReply*) { EnterClosed(); };
      Send(std::move(call));
      return;
    }
    case SessionState::kNotStarted:
    case SessionState::kConnecting: {
      // Nothing to tell the server: what waited for a connection fails, and the session (if the
      // server had granted one) lives on there until it times out.
      CancelTimer(attempt_timer_);
      CancelTimer(poll_timer_);
      connection_open_ = false;
      ++generation_;
      for (Call& call : TakeOutstanding()) {
        Fail(std::move(call), Status(Errc::kConnectionLoss, "closing"));
      }
      if (done) close_waiters_.push_back(std::move(done));
      state_ = SessionState::kClosing;
      Defer([this] { EnterClosed(); });
      return;
    }
    case SessionState::kClosing:
      if (done) close_waiters_.push_back(std::move(done));
      return;
    case SessionState::kClosed:
    case SessionState::kExpired:
      if (done) Defer(std::move(done));
      return;
  }
}

void ZooKeeperClient::EndSession() {
  CancelTimer(poll_timer_);
  CancelTimer(attempt_timer_);
  connection_open_ = false;
  ++generation_;
  data_watches_.clear();
  exist_watches_.clear();
  child_watches_.clear();
}

void ZooKeeperClient::EnterClosed() {
  if (state_ == SessionState::kClosed) return;
  state_ = SessionState::kClosed;
  EndSession();
  std::vector<std::function<void()>> waiters = std::move(close_waiters_);
  close_waiters_.clear();
  NotifySession(SessionEvent::kClosed);
  for (auto& waiter : waiters) waiter();
}

void ZooKeeperClient::ScheduleAttempt(TimeUs delay_us) {
  Arm(attempt_timer_, loop_.Now() + delay_us, &ZooKeeperClient::StartAttempt, "zk.client.connect");
}

void ZooKeeperClient::Arm(TimerId& timer, TimeUs at_us, void (ZooKeeperClient::*handler)(),
                          const char* label) {
  CancelTimer(timer);
  timer = loop_.ScheduleAt(
      at_us,
      [this, &timer, handler] {
        timer = 0;
        (this->*handler)();
      },
      label);
}

void ZooKeeperClient::StartAttempt() {
  KSIM_CHECK(state_ == SessionState::kConnecting);
  KSIM_CHECK(!connection_open_);
  ++generation_;
  auto request = std::make_shared<ZkConnectRequest>();
  request->type = ZkMessageType::kConnect;
  request->session = session_;
  request->generation = generation_;
  request->timeout_ms = static_cast<int32_t>(options_.session_timeout_us / kUsPerMs);
  request->last_zxid_seen = last_zxid_;
  int64_t bytes = kFrameBytes + kConnectBytes;
  for (const auto* watches : {&data_watches_, &exist_watches_, &child_watches_}) {
    for (const std::string& path : *watches) bytes += StringBytes(path);
  }
  request->data_watches.assign(data_watches_.begin(), data_watches_.end());
  request->exist_watches.assign(exist_watches_.begin(), exist_watches_.end());
  request->child_watches.assign(child_watches_.begin(), child_watches_.end());
  const SendResult sent =
      network_.Send(node_, server_, Message{"ZkConnect", Bytes{}, std::move(request), bytes});
  connection_open_ = true;
  connection_epoch_ = sent.connection_epoch;
  attempt_started_us_ = loop_.Now();
  last_send_us_ = loop_.Now();
  if (sent.dropped) {
    // The server's node is down or unreachable: like a refused TCP connect, the attempt fails now.
    ConnectionLost();
    return;
  }
  ArmPoll(attempt_started_us_ + SessionTimeoutUs());
}

void ZooKeeperClient::OnConnectResponse(const ZkConnectResponse& response) {
  if (state_ != SessionState::kConnecting) return;
  if (response.timeout_ms <= 0) {
    Expire();
    return;
  }
  KSIM_CHECK(session_ == kNoSession || session_ == response.session);
  session_ = response.session;
  negotiated_timeout_us_ = int64_t{response.timeout_ms} * kUsPerMs;
  state_ = SessionState::kConnected;
  last_recv_us_ = loop_.Now();
  CancelTimer(poll_timer_);
  ArmPoll(std::min(last_recv_us_ + read_timeout_us(), last_send_us_ + PingIntervalUs()));
  // What waited goes first, in order, before the listener can issue anything new.
  std::deque<Call> queued = std::move(queued_);
  queued_.clear();
  for (Call& call : queued) Send(std::move(call));
  NotifySession(SessionEvent::kSyncConnected);
}

void ZooKeeperClient::ConnectionLost() {
  const bool was_connected = state_ == SessionState::kConnected;
  const bool closing = state_ == SessionState::kClosing;
  CancelTimer(poll_timer_);
  connection_open_ = false;
  ++generation_;  // anything still arriving on the old connection is ignored
  std::deque<Call> failed = TakeOutstanding();
  if (!closing) {
    state_ = SessionState::kConnecting;
    ScheduleAttempt(rng_.UniformInt(0, options_.reconnect_pause_us_max - 1));
  }
  for (Call& call : failed) {
    call.complete(Status(Errc::kConnectionLoss, call.path), nullptr);
  }
  if (was_connected) NotifySession(SessionEvent::kDisconnected);
}

void ZooKeeperClient::AbandonConnection() {
  // ClientCnxn's cleanup() closes the socket before the next attempt opens a new one: what the
  // old one still holds behind a cut (pings, a connect) is never sent, and the server reads the
  // FIN when it can.
  if (network_.ConnectionEpoch(node_, server_) == connection_epoch_) network_.Close(node_, server_);
  ConnectionLost();
}

void ZooKeeperClient::Expire() {
  state_ = SessionState::kExpired;
  EndSession();
  std::deque<Call> failed = TakeOutstanding();
  // As ClientCnxn: the Expired event is queued first, then the waiting requests fail.
  NotifySession(SessionEvent::kExpired);
  for (Call& call : failed) {
    call.complete(Status(Errc::kSessionExpired, call.path), nullptr);
  }
}

std::deque<ZooKeeperClient::Call> ZooKeeperClient::TakeOutstanding() {
  std::deque<Call> taken = std::move(pending_);
  pending_.clear();
  for (Call& call : queued_) taken.push_back(std::move(call));
  queued_.clear();
  return taken;
}

void ZooKeeperClient::NotifySession(SessionEvent event) {
  if (listener_) listener_(event);
}

// ---- Network
// -------------------------------------------------------------------------------------

bool ZooKeeperClient::OnMessage(const Delivery& delivery) {
  if (delivery.from != server_) return false;
  const auto* payload = dynamic_cast<const ZkPayload*>(delivery.message.payload.get());
  if (payload == nullptr) return false;
  if (!connection_open_ || payload->generation != generation_) return true;  // a closed socket's
  if (payload->type != ZkMessageType::kConnectResponse && payload->session != session_) {
    return true;
  }
  last_recv_us_ = loop_.Now();
  switch (payload->type) {
    case ZkMessageType::kConnectResponse:
      OnConnectResponse(static_cast<const ZkConnectResponse&>(*payload));
      break;
    case ZkMessageType::kReply:
      OnReply(static_cast<const ZkReply&>(*payload));
      break;
    case ZkMessageType::kWatchEvent:
      OnWatchEvent(static_cast<const ZkWatchNotice&>(*payload));
      break;
    case ZkMessageType::kConnectionClosed:
      ConnectionLost();
      break;
    case ZkMessageType::kConnect:
    case ZkMessageType::kRequest:
      break;  // client-to-server messages
  }
  return true;
}

void ZooKeeperClient::OnDisconnect(const Disconnect& notice) {
  if (notice.peer != server_ || !connection_open_) return;
  if (notice.broken_epoch < connection_epoch_) return;  // about an older connection
  ConnectionLost();
}

void ZooKeeperClient::OnReply(const ZkReply& reply) {
  if (reply.xid == kPingXid) return;
  KSIM_CHECK_MSG(!pending_.empty(), "a ZooKeeper reply with no request outstanding");
  Call call = std::move(pending_.front());
  pending_.pop_front();
  KSIM_CHECK_MSG(call.xid == reply.xid, "ZooKeeper replies out of order");
  if (reply.zxid > last_zxid_) last_zxid_ = reply.zxid;
  if (call.watch) {
    const bool ok = reply.error == Errc::kNone;
    switch (call.op) {
      case ZkOp::kExists:
        if (ok) data_watches_.insert(call.path);
        if (reply.error == Errc::kNoNode) exist_watches_.insert(call.path);
        break;
      case ZkOp::kGetData:
        if (ok) data_watches_.insert(call.path);
        break;
      case ZkOp::kGetChildren:
        if (ok) child_watches_.insert(call.path);
        break;
      default:
        break;
    }
  }
  const Status status = reply.error == Errc::kNone ? Status::Ok() : Status(reply.error, call.path);
  call.complete(status, &reply);
}

void ZooKeeperClient::OnWatchEvent(const ZkWatchNotice& notice) {
  const std::string& path = notice.event.path;
  bool held = false;
  switch (notice.event.type) {
    case WatchEventType::kNodeCreated:
    case WatchEventType::kNodeDataChanged:
      held |= data_watches_.erase(path) > 0;
      held |= exist_watches_.erase(path) > 0;
      break;
    case WatchEventType::kNodeChildrenChanged:
      held |= child_watches_.erase(path) > 0;
      break;
    case WatchEventType::kNodeDeleted:
      held |= data_watches_.erase(path) > 0;
      held |= exist_watches_.erase(path) > 0;
      held |= child_watches_.erase(path) > 0;
      break;
  }
  if (held && watcher_) watcher_(notice.event);
}

// ---- Timers
// --------------------------------------------------------------------------------------

void ZooKeeperClient::CancelTimer(TimerId& timer) {
  if (timer != 0) loop_.Cancel(timer);
  timer = 0;
}

void ZooKeeperClient::ArmPoll(TimeUs at_us) {
  at_us = std::max(at_us, loop_.Now());
  // An earlier poll re-arms itself when it fires.
  if (poll_timer_ != 0 && poll_at_us_ <= at_us) return;
  poll_at_us_ = at_us;
  Arm(poll_timer_, at_us, &ZooKeeperClient::OnPoll, "zk.client.poll");
}

void ZooKeeperClient::OnPoll() {
  const TimeUs now = loop_.Now();
  if (state_ == SessionState::kConnecting) {
    if (!connection_open_) return;
    const TimeUs deadline = attempt_started_us_ + SessionTimeoutUs();  // the connect timeout
    if (now >= deadline) {
      AbandonConnection();
    } else {
      ArmPoll(deadline);
    }
    return;
  }
  if (state_ != SessionState::kConnected && state_ != SessionState::kClosing) return;
  const TimeUs read_deadline = last_recv_us_ + read_timeout_us();
  if (now >= read_deadline) {
    AbandonConnection();  // ClientCnxn: "Client session timed out, have not heard from server"
    return;
  }
  if (state_ == SessionState::kClosing) {
    // No pings while closing: only the read deadline bounds the wait for the close's answer.
    ArmPoll(read_deadline);
    return;
  }
  if (now >= last_send_us_ + PingIntervalUs()) SendPing();
  ArmPoll(std::min(read_deadline, last_send_us_ + PingIntervalUs()));
}

void ZooKeeperClient::Defer(std::function<void()> callback) {
  deferred_.push_back(std::move(callback));
  if (deferred_timer_ != 0) return;
  deferred_timer_ = loop_.ScheduleAfter(
      0,
      [this] {
        deferred_timer_ = 0;
        std::deque<std::function<void()>> ready = std::move(deferred_);
        deferred_.clear();
        for (auto& callback : ready) callback();
      },
      "zk.client.deferred");
}

// ---- Requests
// ------------------------------------------------------------------------------------

void ZooKeeperClient::Fail(Call call, Status status) {
  Defer([complete = std::move(call.complete), status = std::move(status)] {
    complete(status, nullptr);
  });
}

void ZooKeeperClient::Submit(Call call) {
  const bool sequential = call.op == ZkOp::kCreate && IsSequential(call.mode);
  Status valid = ValidateZnodePath(call.path, sequential);
  if (!valid.ok()) {
    Fail(std::move(call), std::move(valid));
    return;
  }
  switch (state_) {
    case SessionState::kConnected:
      Send(std::move(call));
      return;
    case SessionState::kNotStarted:
    case SessionState::kConnecting:
      queued_.push_back(std::move(call));
      return;
    case SessionState::kClosing:
    case SessionState::kClosed:
    case SessionState::kExpired: {
      std::string path = call.path;
      Fail(std::move(call), Status(Errc::kSessionExpired, std::move(path)));
      return;
    }
  }
}

void ZooKeeperClient::Send(Call call) {
  KSIM_CHECK(state_ == SessionState::kConnected || state_ == SessionState::kClosing);
  call.xid = next_xid_++;
  auto request = std::make_shared<ZkRequest>();
  request->type = ZkMessageType::kRequest;
  request->session = session_;
  request->generation = generation_;
  request->xid = call.xid;
  request->op = call.op;
  request->path = call.path;
  request->data = call.data;
  request->version = call.version;
  request->mode = call.mode;
  request->watch = call.watch;
  const int64_t bytes =
      kFrameBytes + kRequestHeaderBytes + StringBytes(call.path) + StringBytes(call.data) + 8;
  std::string kind = "Zk" + std::string(ZkOpName(call.op));
  // A send the network drops is not noticed here: as over TCP, the silence is (read timeout).
  network_.Send(node_, server_, Message{std::move(kind), Bytes{}, std::move(request), bytes});
  last_send_us_ = loop_.Now();
  pending_.push_back(std::move(call));
}

void ZooKeeperClient::SendPing() {
  auto request = std::make_shared<ZkRequest>();
  request->type = ZkMessageType::kRequest;
  request->session = session_;
  request->generation = generation_;
  request->xid = kPingXid;
  request->op = ZkOp::kPing;
  network_.Send(node_, server_,
                Message{"ZkPing", Bytes{}, std::move(request), kFrameBytes + kRequestHeaderBytes});
  last_send_us_ = loop_.Now();
  ++pings_sent_;
}

void ZooKeeperClient::Create(std::string path, std::string data, CreateMode mode,
                             CreateCallback done) {
  Call call = NewCall(ZkOp::kCreate, std::move(path));
  call.data = std::move(data);
  call.mode = mode;
  SubmitAnswering(std::move(call), std::move(done),
                  [](const ZkReply& reply) { return reply.path; });
}

void ZooKeeperClient::Delete(std::string path, int32_t version, DeleteCallback done) {
  Call call = NewCall(ZkOp::kDelete, std::move(path));
  call.version = version;
  call.complete = [done = std::move(done)](const Status& status, const ZkReply*) {
    if (done) done(status);
  };
  Submit(std::move(call));
}

void ZooKeeperClient::Exists(std::string path, bool watch, ExistsCallback done) {
  Call call = NewCall(ZkOp::kExists, std::move(path));
  call.watch = watch;
  call.complete = [done = std::move(done)](const Status& status, const ZkReply* reply) {
    if (!done) return;
    if (status.ok()) {
      done(std::optional<ZnodeStat>(reply->stat));
    } else if (status == Errc::kNoNode && reply != nullptr) {
      done(std::optional<ZnodeStat>());  // absent is an answer, not an error
    } else {
      done(status);
    }
  };
  Submit(std::move(call));
}

void ZooKeeperClient::GetData(std::string path, bool watch, GetDataCallback done) {
  Call call = NewCall(ZkOp::kGetData, std::move(path));
  call.watch = watch;
  SubmitAnswering(std::move(call), std::move(done), [](const ZkReply& reply) {
    return ZnodeData{reply.data, reply.stat.value()};
  });
}

void ZooKeeperClient::SetData(std::string path, std::string data, int32_t version,
                              SetDataCallback done) {
  Call call = NewCall(ZkOp::kSetData, std::move(path));
  call.data = std::move(data);
  call.version = version;
  SubmitAnswering(std::move(call), std::move(done),
                  [](const ZkReply& reply) { return reply.stat.value(); });
}

void ZooKeeperClient::GetChildren(std::string path, bool watch, ChildrenCallback done) {
  Call call = NewCall(ZkOp::kGetChildren, std::move(path));
  call.watch = watch;
  SubmitAnswering(std::move(call), std::move(done),
                  [](const ZkReply& reply) { return reply.children; });
}

}  // namespace ksim::sim
