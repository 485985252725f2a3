#include "sim/world/zookeeper.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "core/base/check.h"
#include "core/base/trace_names.h"

namespace ksim::sim {
namespace {

// Rough jute sizes: a length prefix, a header, then the fields (strings carry a 4-byte length).
constexpr int64_t kFrameBytes = 4;
constexpr int64_t kReplyHeaderBytes = 16;  // xid, zxid, err
constexpr int64_t kStatBytes = 68;
int64_t StringBytes(std::string_view s) { return 4 + static_cast<int64_t>(s.size()); }

std::string SequenceSuffix(int32_t counter) {
  char digits[16];
  std::snprintf(digits, sizeof(digits), "%010d", counter);
  return digits;
}

bool IsSpecialPath(std::string_view path) {
  return path == "/" || path == "/zookeeper" || path == "/zookeeper/quota";
}

}  // namespace

std::string_view ZkOpName(ZkOp op) {
  switch (op) {
    case ZkOp::kCreate:
      return "Create";
    case ZkOp::kDelete:
      return "Delete";
    case ZkOp::kExists:
      return "Exists";
    case ZkOp::kGetData:
      return "GetData";
    case ZkOp::kSetData:
      return "SetData";
    case ZkOp::kGetChildren:
      return "GetChildren";
    case ZkOp::kPing:
      return "Ping";
    case ZkOp::kCloseSession:
      return "CloseSession";
  }
  return "Unknown";
}

std::string_view ZkServerEventTypeName(ZkServerEvent::Type type) {
  switch (type) {
    case ZkServerEvent::Type::kSessionCreated:
      return ev::kZkSessionCreated;
    case ZkServerEvent::Type::kSessionResumed:
      return ev::kZkSessionResumed;
    case ZkServerEvent::Type::kSessionExpired:
      return ev::kZkSessionExpired;
    case ZkServerEvent::Type::kSessionClosed:
      return ev::kZkSessionClosed;
    case ZkServerEvent::Type::kDown:
      return ev::kZkDown;
    case ZkServerEvent::Type::kUp:
      return ev::kZkUp;
  }
  return "zk_unknown";
}

ZooKeeperServer::ZooKeeperServer(EventLoop& loop, Network& network, ZooKeeperOptions options)
    : loop_(loop), network_(network), options_(std::move(options)) {
  KSIM_CHECK(options_.tick_time_us > 0);
  const std::optional<NodeId> node = network_.topology().Find(options_.node);
  KSIM_CHECK_MSG(node.has_value(), "the ZooKeeper node is not in the topology");
  node_ = *node;
  min_timeout_us_ = options_.min_session_timeout_us > 0 ? options_.min_session_timeout_us
                                                        : 2 * options_.tick_time_us;
  max_timeout_us_ = options_.max_session_timeout_us > 0 ? options_.max_session_timeout_us
                                                        : 20 * options_.tick_time_us;
  KSIM_CHECK(min_timeout_us_ > 0);
  KSIM_CHECK(min_timeout_us_ <= max_timeout_us_);
  // ZooKeeper's SessionTrackerImpl.initializeNextSession: myid in the top byte, the boot time in
  // milliseconds shifted into the middle, a counter in the low bits.
  const uint64_t boot_ms = static_cast<uint64_t>(loop_.Now() / kUsPerMs);
  const uint64_t first = ((boot_ms << 24) >> 8) | (static_cast<uint64_t>(options_.server_id) << 56);
  next_session_id_ = first == 0 ? 1 : static_cast<int64_t>(first);

  // The tree every ZooKeeper starts with.
  for (const char* path : {"/", "/zookeeper", "/zookeeper/quota"}) tree_.emplace(path, Znode{});
  tree_["/"].children.insert("zookeeper");
  tree_["/zookeeper"].children.insert("quota");
  tree_["/"].stat.cversion = 1;
  tree_["/zookeeper"].stat.cversion = 1;

  network_.Register(node_,
                    NetworkHandler{[this](Delivery delivery) { OnMessage(delivery); }, nullptr});
}

ZooKeeperServer::~ZooKeeperServer() {
  if (tracker_timer_ != 0) loop_.Cancel(tracker_timer_);
  network_.Unregister(node_);
}

// ---- Faults
// --------------------------------------------------------------------------------------

void ZooKeeperServer::Down() {
  if (!up_) return;
  up_ = false;
  if (tracker_timer_ != 0) loop_.Cancel(tracker_timer_);
  tracker_timer_ = 0;
  // Every connection dies with the server, and watches live on connections.
  for (auto& [id, session] : sessions_) session.connected = false;
  data_watches_.clear();
  child_watches_.clear();
  KSIM_CHECK(network_.topology().SetNodeUp(options_.node, false).ok());
  Report(ZkServerEvent{ZkServerEvent::Type::kDown, loop_.Now(), kNoSession, {}, {}});
}

void ZooKeeperServer::Up() {
  if (up_) return;
  up_ = true;
  KSIM_CHECK(network_.topology().SetNodeUp(options_.node, true).ok());
  // A restarted (or newly elected) server gives every session its whole timeout again.
  deadlines_.clear();
  for (auto& [id, session] : sessions_) {
    session.deadline_us = RoundToTick(loop_.Now() + session.timeout_us);
    deadlines_.emplace(session.deadline_us, id);
  }
  ArmTracker();
  Report(ZkServerEvent{ZkServerEvent::Type::kUp, loop_.Now(), kNoSession, {}, {}});
}

Status ZooKeeperServer::ExpireSession(ZkSessionId session) {
  if (!up_) return Status(Errc::kInvalidArgument, "ZooKeeper is down");
  if (sessions_.count(session) == 0) {
    return Status(Errc::kNotFound, "no live session " + ToString(session));
  }
  EndSession(session, ZkServerEvent::Type::kSessionExpired);
  return Status::Ok();
}

// ---- Inspection
// ----------------------------------------------------------------------------------

std::optional<ZnodeData> ZooKeeperServer::Read(std::string_view path) const {
  auto it = tree_.find(path);
  if (it == tree_.end()) return std::nullopt;
  return ZnodeData{it->second.data, StatOf(it->second)};
}

std::vector<std::string> ZooKeeperServer::Children(std::string_view path) const {
  auto it = tree_.find(path);
  if (it == tree_.end()) return {};
  return std::vector<std::string>(it->second.children.begin(), it->second.children.end());
}

std::vector<ZkSessionId> ZooKeeperServer::Sessions() const {
  std::vector<ZkSessionId> ids;
  for (const auto& [id, session] : sessions_) ids.push_back(id);
  return ids;
}

std::optional<TimeUs> ZooKeeperServer::SessionTimeoutUs(ZkSessionId session) const {
  auto it = sessions_.find(session);
  if (it == sessions_.end()) return std::nullopt;
  return it->second.timeout_us;
}

std::optional<TimeUs> ZooKeeperServer::SessionDeadlineUs(ZkSessionId session) const {
  auto it = sessions_.find(session);
  if (it == sessions_.end()) return std::nullopt;
  return it->second.deadline_us;
}

size_t ZooKeeperServer::WatchCount() const {
  size_t count = 0;
  for (const auto& [path, sessions] : data_watches_) count += sessions.size();
  for (const auto& [path, sessions] : child_watches_) count += sessions.size();
  return count;
}

// ---- Requests
// ------------------------------------------------------------------------------------

void ZooKeeperServer::OnMessage(const Delivery& delivery) {
  if (!up_) return;
  const auto* payload = dynamic_cast<const ZkPayload*>(delivery.message.payload.get());
  if (payload == nullptr) return;  // not ZooKeeper's protocol: a real server drops the socket
  switch (payload->type) {
    case ZkMessageType::kConnect:
      HandleConnect(delivery, static_cast<const ZkConnectRequest&>(*payload));
      return;
    case ZkMessageType::kRequest:
      HandleRequest(delivery, static_cast<const ZkRequest&>(*payload));
      return;
    default:
      return;  // server-to-client messages
  }
}

void ZooKeeperServer::HandleConnect(const Delivery& delivery, const ZkConnectRequest& request) {
  auto response = std::make_shared<ZkConnectResponse>();
  response->type = ZkMessageType::kConnectResponse;
  response->generation = request.generation;
  const int64_t response_bytes = kFrameBytes + 36;

  if (request.session == kNoSession) {
    const ZkSessionId id{next_session_id_++};
    Session session;
    session.timeout_us =
        std::clamp(int64_t{request.timeout_ms} * kUsPerMs, min_timeout_us_, max_timeout_us_);
    session.client = delivery.from;
    session.connection_epoch = delivery.connection_epoch;
    session.generation = request.generation;
    session.connected = true;
    Session& stored = sessions_.emplace(id, std::move(session)).first->second;
    ++last_zxid_;  // createSession is a transaction
    Touch(id, stored);
    response->session = id;
    response->timeout_ms = static_cast<int32_t>(stored.timeout_us / kUsPerMs);
    SendTo(delivery.from, std::move(response), "ZkConnectResponse", response_bytes);
    Report(ZkServerEvent{ZkServerEvent::Type::kSessionCreated,
                         loop_.Now(),
                         id,
                         network_.topology().Name(delivery.from),
                         {}});
    return;
  }

  response->session = request.session;
  auto it = sessions_.find(request.session);
  if (it == sessions_.end()) {
    // ZooKeeper answers a reconnect to a dead session with a zero timeout: "expired".
    response->timeout_ms = 0;
    SendTo(delivery.from, std::move(response), "ZkConnectResponse", response_bytes);
    return;
  }
  Session& session = it->second;
  session.client = delivery.from;
  session.connection_epoch = delivery.connection_epoch;
  session.generation = request.generation;
  session.connected = true;
  Touch(it->first, session);
  response->timeout_ms = static_cast<int32_t>(session.timeout_us / kUsPerMs);
  SendTo(delivery.from, std::move(response), "ZkConnectResponse", response_bytes);
  RestoreWatches(it->first, request);
  Report(ZkServerEvent{ZkServerEvent::Type::kSessionResumed,
                       loop_.Now(),
                       it->first,
                       network_.topology().Name(delivery.from),
                       {}});
}

void ZooKeeperServer::HandleRequest(const Delivery& delivery, const ZkRequest& request) {
  auto closed = [&] {
    auto notice = std::make_shared<ZkConnectionClosed>();
    notice->type = ZkMessageType::kConnectionClosed;
    notice->session = request.session;
    notice->generation = request.generation;
    SendTo(delivery.from, std::move(notice), "ZkConnectionClosed", kFrameBytes);
  };
  auto it = sessions_.find(request.session);
  if (it == sessions_.end()) {
    closed();  // the session ended: its connection was closed
    return;
  }
  Session& session = it->second;
  if (request.generation < session.generation) return;  // a socket the client already closed
  if (!session.connected || request.generation != session.generation ||
      delivery.from != session.client || delivery.connection_epoch != session.connection_epoch) {
    closed();  // this connection broke after the handshake: the client must reconnect
    return;
  }
  const ZkSessionId id = it->first;
  Touch(id, session);

  auto reply = std::make_shared<ZkReply>();
  reply->type = ZkMessageType::kReply;
  reply->session = id;
  reply->generation = request.generation;
  reply->xid = request.op == ZkOp::kPing ? kPingXid : request.xid;
  reply->op = request.op;
  if (request.op == ZkOp::kCloseSession) {
    EndSession(id, ZkServerEvent::Type::kSessionClosed);
  } else {
    Apply(id, request, *reply);
  }
  reply->zxid = last_zxid_;
  int64_t bytes = kFrameBytes + kReplyHeaderBytes + StringBytes(reply->path) +
                  StringBytes(reply->data) + (reply->stat ? kStatBytes : 0);
  for (const std::string& child : reply->children) bytes += StringBytes(child);
  std::string kind = "Zk" + std::string(ZkOpName(request.op)) + "Response";
  SendTo(delivery.from, std::move(reply), std::move(kind), bytes);
}

void ZooKeeperServer::Apply(ZkSessionId session, const ZkRequest& request, ZkReply& reply) {
  if (request.op == ZkOp::kPing) return;
  if (!ValidateZnodePath(request.path, request.op == ZkOp::kCreate && IsSequential(request.mode))
           .ok()) {
    reply.error = Errc::kInvalidArgument;  // BADARGUMENTS
    return;
  }
  const std::string& path = request.path;
  switch (request.op) {
    case ZkOp::kCreate:
      reply.error = Create(session, request, reply.path);
      return;
    case ZkOp::kDelete:
      reply.error = Delete(path, request.version);
      return;
    case ZkOp::kSetData:
      reply.error = SetData(path, request.data, request.version);
      if (reply.error == Errc::kNone) reply.stat = StatOf(tree_.find(path)->second);
      return;
    case ZkOp::kExists: {
      // ZooKeeper leaves an Exists watch whether or not the node exists (it fires on creation).
      if (request.watch) data_watches_[path].insert(session);
      auto it = tree_.find(path);
      if (it == tree_.end()) {
        reply.error = Errc::kNoNode;
      } else {
        reply.stat = StatOf(it->second);
      }
      return;
    }
    case ZkOp::kGetData: {
      auto it = tree_.find(path);
      if (it == tree_.end()) {
        reply.error = Errc::kNoNode;
        return;
      }
      if (request.watch) data_watches_[path].insert(session);
      reply.data = it->second.data;
      reply.stat = StatOf(it->second);
      return;
    }
    case ZkOp::kGetChildren: {
      auto it = tree_.find(path);
      if (it == tree_.end()) {
        reply.error = Errc::kNoNode;
        return;
      }
      if (request.watch) child_watches_[path].insert(session);
      reply.children.assign(it->second.children.begin(), it->second.children.end());
      reply.stat = StatOf(it->second);
      return;
    }
    case ZkOp::kPing:
    case ZkOp::kCloseSession:
      return;
  }
}

Errc ZooKeeperServer::Create(ZkSessionId session, const ZkRequest& request, std::string& created) {
  const bool sequential = IsSequential(request.mode);
  if (!sequential && request.path == "/") return Errc::kNodeExists;
  const size_t slash = request.path.rfind('/');
  const std::string parent_path = slash == 0 ? "/" : request.path.substr(0, slash);
  auto parent = tree_.find(parent_path);
  if (parent == tree_.end()) return Errc::kNoNode;
  std::string path = request.path;
  if (sequential) path += SequenceSuffix(parent->second.stat.cversion);
  if (tree_.count(path) > 0) return Errc::kNodeExists;
  if (parent->second.stat.ephemeral_owner != kNoSession) return Errc::kNoChildrenForEphemerals;

  const Zxid zxid = ++last_zxid_;
  Znode node;
  node.data = request.data;
  node.stat.czxid = zxid;
  node.stat.mzxid = zxid;
  node.stat.pzxid = zxid;
  node.stat.ctime_ms = loop_.Now() / kUsPerMs;
  node.stat.mtime_ms = node.stat.ctime_ms;
  if (IsEphemeral(request.mode)) {
    node.stat.ephemeral_owner = session;
    sessions_.at(session).ephemerals.insert(path);
  }
  ++parent->second.stat.cversion;
  parent->second.stat.pzxid = zxid;
  parent->second.children.insert(path.substr(path.rfind('/') + 1));
  tree_.emplace(path, std::move(node));
  created = path;
  Trigger(data_watches_, path, WatchEventType::kNodeCreated, nullptr);
  Trigger(child_watches_, parent_path, WatchEventType::kNodeChildrenChanged, nullptr);
  return Errc::kNone;
}

Errc ZooKeeperServer::Delete(const std::string& path, int32_t version) {
  if (IsSpecialPath(path)) return Errc::kInvalidArgument;  // BADARGUMENTS
  auto it = tree_.find(path);
  if (it == tree_.end()) return Errc::kNoNode;
  if (version != kAnyVersion && version != it->second.stat.version) return Errc::kBadVersion;
  if (!it->second.children.empty()) return Errc::kNotEmpty;
  RemoveNode(path, ++last_zxid_);
  return Errc::kNone;
}

Errc ZooKeeperServer::SetData(const std::string& path, const std::string& data, int32_t version) {
  auto it = tree_.find(path);
  if (it == tree_.end()) return Errc::kNoNode;
  ZnodeStat& stat = it->second.stat;
  if (version != kAnyVersion && version != stat.version) return Errc::kBadVersion;
  it->second.data = data;
  ++stat.version;
  stat.mzxid = ++last_zxid_;
  stat.mtime_ms = loop_.Now() / kUsPerMs;
  Trigger(data_watches_, path, WatchEventType::kNodeDataChanged, nullptr);
  return Errc::kNone;
}

void ZooKeeperServer::RemoveNode(const std::string& path, Zxid zxid) {
  auto it = tree_.find(path);
  KSIM_CHECK(it != tree_.end());
  KSIM_CHECK(it->second.children.empty());
  const ZkSessionId owner = it->second.stat.ephemeral_owner;
  if (owner != kNoSession) {
    auto session = sessions_.find(owner);
    if (session != sessions_.end()) session->second.ephemerals.erase(path);
  }
  const std::string parent_path(ParentPath(path));
  Znode& parent = tree_.at(parent_path);
  parent.children.erase(std::string(NodeName(path)));
  if (zxid > parent.stat.pzxid) parent.stat.pzxid = zxid;
  tree_.erase(it);
  // ZooKeeper's DataTree.deleteNode: a session watching both the data and the children of the
  // node hears NodeDeleted once.
  const std::set<ZkSessionId> notified =
      Trigger(data_watches_, path, WatchEventType::kNodeDeleted, nullptr);
  Trigger(child_watches_, path, WatchEventType::kNodeDeleted, &notified);
  Trigger(child_watches_, parent_path, WatchEventType::kNodeChildrenChanged, nullptr);
}

void ZooKeeperServer::RestoreWatches(ZkSessionId id, const ZkConnectRequest& request) {
  DropWatches(id);
  const Zxid relative = request.last_zxid_seen;
  for (const std::string& path : request.data_watches) {
    auto it = tree_.find(path);
    if (it == tree_.end()) {
      Notify(id, WatchEvent{WatchEventType::kNodeDeleted, path});
    } else if (it->second.stat.mzxid > relative) {
      Notify(id, WatchEvent{WatchEventType::kNodeDataChanged, path});
    } else {
      data_watches_[path].insert(id);
    }
  }
  for (const std::string& path : request.exist_watches) {
    if (tree_.count(path) > 0) {
      Notify(id, WatchEvent{WatchEventType::kNodeCreated, path});
    } else {
      data_watches_[path].insert(id);
    }
  }
  for (const std::string& path : request.child_watches) {
    auto it = tree_.find(path);
    if (it == tree_.end()) {
      Notify(id, WatchEvent{WatchEventType::kNodeDeleted, path});
    } else if (it->second.stat.pzxid > relative) {
      Notify(id, WatchEvent{WatchEventType::kNodeChildrenChanged, path});
    } else {
      child_watches_[path].insert(id);
    }
  }
}

// ---- Session tracker
// -----------------------------------------------------------------------------

TimeUs ZooKeeperServer::RoundToTick(TimeUs time_us) const {
  // SessionTrackerImpl.roundToInterval: the next tick boundary strictly after `time_us`.
  return (time_us / options_.tick_time_us + 1) * options_.tick_time_us;
}

void ZooKeeperServer::Touch(ZkSessionId id, Session& session) {
  const TimeUs deadline = RoundToTick(loop_.Now() + session.timeout_us);
  if (deadline <= session.deadline_us) return;  // already in that bucket or a later one
  SetDeadline(id, session, deadline);
}

void ZooKeeperServer::SetDeadline(ZkSessionId id, Session& session, TimeUs deadline_us) {
  deadlines_.erase({session.deadline_us, id});
  session.deadline_us = deadline_us;
  deadlines_.emplace(deadline_us, id);
  ArmTracker();
}

void ZooKeeperServer::ArmTracker() {
  if (!up_ || deadlines_.empty()) {
    if (tracker_timer_ != 0) loop_.Cancel(tracker_timer_);
    tracker_timer_ = 0;
    return;
  }
  const TimeUs first = std::max(deadlines_.begin()->first, loop_.Now());
  // A timer due no later than the first deadline re-arms itself when it fires.
  if (tracker_timer_ != 0 && tracker_at_us_ <= first) return;
  if (tracker_timer_ != 0) loop_.Cancel(tracker_timer_);
  tracker_at_us_ = first;
  tracker_timer_ = loop_.ScheduleAt(
      first, [this] { OnTrackerTimer(); }, "zk.session_tracker");
}

void ZooKeeperServer::OnTrackerTimer() {
  tracker_timer_ = 0;
  while (!deadlines_.empty() && deadlines_.begin()->first <= loop_.Now()) {
    EndSession(deadlines_.begin()->second, ZkServerEvent::Type::kSessionExpired);
  }
  ArmTracker();
}

void ZooKeeperServer::EndSession(ZkSessionId id, ZkServerEvent::Type why) {
  auto it = sessions_.find(id);
  KSIM_CHECK(it != sessions_.end());
  Session session = std::move(it->second);
  deadlines_.erase({session.deadline_us, id});
  sessions_.erase(it);
  DropWatches(id);
  // closeSession is one transaction: every ephemeral goes at the same zxid.
  const Zxid zxid = ++last_zxid_;
  std::vector<std::string> deleted(session.ephemerals.begin(), session.ephemerals.end());
  for (const std::string& path : deleted) RemoveNode(path, zxid);
  if (why == ZkServerEvent::Type::kSessionExpired) {
    // The server closes the expired session's connection; the client learns on reconnecting.
    auto notice = std::make_shared<ZkConnectionClosed>();
    notice->type = ZkMessageType::kConnectionClosed;
    notice->session = id;
    notice->generation = session.generation;
    SendToSession(session, std::move(notice), "ZkConnectionClosed", kFrameBytes);
  }
  Report(ZkServerEvent{why, loop_.Now(), id, network_.topology().Name(session.client),
                       std::move(deleted)});
  ArmTracker();
}

void ZooKeeperServer::DropWatches(ZkSessionId session) {
  for (WatchTable* table : {&data_watches_, &child_watches_}) {
    for (auto it = table->begin(); it != table->end();) {
      it->second.erase(session);
      it = it->second.empty() ? table->erase(it) : std::next(it);
    }
  }
}

// ---- Watches and sending
// -------------------------------------------------------------------------

std::set<ZkSessionId> ZooKeeperServer::Trigger(WatchTable& table, const std::string& path,
                                               WatchEventType type,
                                               const std::set<ZkSessionId>* suppress) {
  auto it = table.find(path);
  if (it == table.end()) return {};
  std::set<ZkSessionId> watchers = std::move(it->second);  // one-shot: gone once fired
  table.erase(it);
  for (ZkSessionId id : watchers) {
    if (suppress != nullptr && suppress->count(id) > 0) continue;
    Notify(id, WatchEvent{type, path});
  }
  return watchers;
}

void ZooKeeperServer::Notify(ZkSessionId id, const WatchEvent& event) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  auto notice = std::make_shared<ZkWatchNotice>();
  notice->type = ZkMessageType::kWatchEvent;
  notice->session = id;
  notice->generation = it->second.generation;
  notice->event = event;
  const int64_t bytes = kFrameBytes + kReplyHeaderBytes + 8 + StringBytes(event.path);
  SendToSession(it->second, std::move(notice), "ZkWatchEvent", bytes);
}

void ZooKeeperServer::SendToSession(Session& session, std::shared_ptr<ZkPayload> payload,
                                    std::string kind, int64_t size_bytes) {
  if (!session.connected) return;
  // Writing to a connection that broke since the handshake reaches nobody: the client will
  // reconnect and re-register its watches against the last zxid it saw.
  if (network_.ConnectionEpoch(node_, session.client) != session.connection_epoch) {
    session.connected = false;
    return;
  }
  const SendResult result = network_.Send(
      node_, session.client, Message{std::move(kind), Bytes{}, std::move(payload), size_bytes});
  if (result.dropped) session.connected = false;
}

void ZooKeeperServer::SendTo(NodeId client, std::shared_ptr<ZkPayload> payload, std::string kind,
                             int64_t size_bytes) {
  network_.Send(node_, client, Message{std::move(kind), Bytes{}, std::move(payload), size_bytes});
}

ZnodeStat ZooKeeperServer::StatOf(const Znode& node) const {
  ZnodeStat stat = node.stat;
  stat.data_length = static_cast<int32_t>(node.data.size());
  stat.num_children = static_cast<int32_t>(node.children.size());
  return stat;
}

void ZooKeeperServer::Report(ZkServerEvent event) {
  if (observer_) observer_(event);
}

}  // namespace ksim::sim
