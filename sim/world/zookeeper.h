// The simulated ZooKeeper: one standalone server, the node named `zk` on the virtual network,
// holding the data tree and the sessions that Kafka's brokers, controller and tools use through
// core's Coordination seam (their side is sim::ZooKeeperClient). docs/zookeeper.md describes the
// model and what it simplifies; the short version:
//
// - Data tree: a std::map from path to znode (deterministic order), with ZooKeeper 3.4's checks
//   in its order (NONODE, NODEEXISTS, NOCHILDRENFOREPHEMERALS; BADVERSION before NOTEMPTY), a zxid
//   counter, Stat bookkeeping, sequential names from the parent's cversion.
// - Sessions: the client proposes a timeout, the server clamps it to [min, max] (2 and 20 ticks
//   by default). Any request or ping renews it. The session tracker works like ZooKeeper's: a
//   deadline is rounded up to the next tick boundary and a session not heard from by then
//   expires, which deletes its ephemerals (one transaction), fires the watches that covers, and
//   closes its connection (the client then reconnects and is told the session expired).
// - Connections: a session lives on one connection, identified by the client's node, the
//   network connection's epoch and the client's attempt number (generation). A request on a
//   connection that broke since the handshake gets the socket closed (kConnectionClosed); a
//   request from an older attempt is ignored (the client closed that socket).
// - Watches: one-shot, per session; a reconnect replaces the session's watches with the set the
//   client sends (ZooKeeper's SetWatches against the last zxid it saw), firing at once those
//   whose node changed meanwhile.
// - Faults: Down() crashes the ensemble (the node goes down; sessions, the tree and zxids persist,
//   as on disk; no session expires while it is down; connections and watches are lost). Up()
//   restarts it and gives every session its full timeout again, as a ZooKeeper leader does after
//   an election. ExpireSession() is the scenario's `zk_expire`.
//
// Wire messages are typed payloads (sim::Payload), never encoded; their `size_bytes` follow
// ZooKeeper's jute sizes roughly.
//
// Ownership: the server borrows the EventLoop and the Network (which must outlive it) and
// registers the handler of its node from construction to destruction. Single-threaded.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/status.h"
#include "core/base/trace_names.h"
#include "core/base/types.h"
#include "core/zk/coordination.h"
#include "sim/kernel/event_loop.h"
#include "sim/world/network.h"
#include "sim/world/topology.h"

namespace ksim::sim {

// ---- Wire messages between ZooKeeperClient and ZooKeeperServer ---------------------------------

enum class ZkMessageType : uint8_t {
  kConnect,           // client -> server: open or resume a session (with its watches)
  kConnectResponse,   // server -> client: the session and its timeout (0: expired)
  kRequest,           // client -> server: one operation (or a ping)
  kReply,             // server -> client: its answer
  kWatchEvent,        // server -> client: a watch fired
  kConnectionClosed,  // server -> client: the server closed this connection
};

enum class ZkOp : uint8_t {
  kCreate,
  kDelete,
  kExists,
  kGetData,
  kSetData,
  kGetChildren,
  kPing,
  kCloseSession,
};
std::string_view ZkOpName(ZkOp op);  // "Create", "GetData", ...

inline constexpr int32_t kPingXid = -2;  // ZooKeeper's xid for pings

struct ZkPayload : Payload {
  ZkMessageType type = ZkMessageType::kRequest;
  ZkSessionId session = kNoSession;
  uint64_t generation = 0;  // the client's connection attempt this belongs to
};

struct ZkConnectRequest final : ZkPayload {
  int32_t timeout_ms = 0;  // proposed
  Zxid last_zxid_seen{0};
  // SetWatches: the watches the client still holds.
  std::vector<std::string> data_watches;
  std::vector<std::string> exist_watches;
  std::vector<std::string> child_watches;
};

struct ZkConnectResponse final : ZkPayload {
  int32_t timeout_ms = 0;  // negotiated; 0 when the session expired
};

struct ZkRequest final : ZkPayload {
  int32_t xid = 0;
  ZkOp op = ZkOp::kPing;
  std::string path;
  std::string data;
  int32_t version = kAnyVersion;
  CreateMode mode = CreateMode::kPersistent;
  bool watch = false;
};

struct ZkReply final : ZkPayload {
  int32_t xid = 0;
  ZkOp op = ZkOp::kPing;
  Zxid zxid{0};  // the server's last zxid when it answered
  Errc error = Errc::kNone;
  std::string path;  // Create: the created path
  std::string data;  // GetData
  std::optional<ZnodeStat> stat;
  std::vector<std::string> children;  // GetChildren, sorted
};

struct ZkWatchNotice final : ZkPayload {
  WatchEvent event;
};

struct ZkConnectionClosed final : ZkPayload {};

// ---- The server --------------------------------------------------------------------------------

struct ZooKeeperOptions {
  std::string node = std::string(ksim::node::kZooKeeper);
  TimeUs tick_time_us = 2'000'000;  // tickTime
  // minSessionTimeout / maxSessionTimeout; 0 means 2 and 20 ticks.
  TimeUs min_session_timeout_us = 0;
  TimeUs max_session_timeout_us = 0;
  // myid: the high byte of session ids (ZooKeeper: sid << 56 | boot time in ms << 16).
  int64_t server_id = 1;
};

// What the observer (the trace writer) is told.
struct ZkServerEvent {
  enum class Type : uint8_t {
    kSessionCreated,
    kSessionResumed,  // a reconnect within the session
    kSessionExpired,
    kSessionClosed,  // closed by its client
    kDown,
    kUp,
  };
  Type type;
  TimeUs time_us;
  ZkSessionId session;                          // kNoSession for kDown/kUp
  std::string_view client_node;                 // empty for kDown/kUp; valid only during the call
  std::vector<std::string> ephemerals_deleted;  // kSessionExpired / kSessionClosed
};
std::string_view ZkServerEventTypeName(ZkServerEvent::Type type);

class ZooKeeperServer {
 public:
  // REQUIRES: options.node exists in the network's topology; tick > 0; the timeout bounds, once
  // defaulted, satisfy 0 < min <= max.
  ZooKeeperServer(EventLoop& loop, Network& network, ZooKeeperOptions options = {});
  ~ZooKeeperServer();
  ZooKeeperServer(const ZooKeeperServer&) = delete;
  ZooKeeperServer& operator=(const ZooKeeperServer&) = delete;

  // --- Faults -----------------------------------------------------------------------------------
  // The ensemble goes down: the node is down on the topology (every connection to it breaks),
  // the session tracker stops, every watch is dropped. No-op when already down.
  void Down();
  // It comes back: the node is up, every session's deadline is its full timeout from now.
  // No-op when up.
  void Up();
  bool up() const { return up_; }
  // Expires `session` now, as if its timeout had passed (the scenario's `zk_expire`).
  // kNotFound when it is not a live session, kInvalidArgument while the server is down.
  Status ExpireSession(ZkSessionId session);

  // --- Inspection (directly, not over the network: tests, scenario checks, the viewer) ----------
  std::optional<ZnodeData> Read(std::string_view path) const;
  // Sorted child names; empty when the node does not exist.
  std::vector<std::string> Children(std::string_view path) const;
  std::vector<ZkSessionId> Sessions() const;  // live sessions, by id
  bool HasSession(ZkSessionId session) const { return sessions_.count(session) > 0; }
  // The session's negotiated timeout and current deadline; nullopt when not live.
  std::optional<TimeUs> SessionTimeoutUs(ZkSessionId session) const;
  std::optional<TimeUs> SessionDeadlineUs(ZkSessionId session) const;
  // Registered watches (data and child), all sessions together.
  size_t WatchCount() const;
  Zxid last_zxid() const { return last_zxid_; }
  NodeId node() const { return node_; }
  const ZooKeeperOptions& options() const { return options_; }
  TimeUs min_session_timeout_us() const { return min_timeout_us_; }
  TimeUs max_session_timeout_us() const { return max_timeout_us_; }

  void SetObserver(std::function<void(const ZkServerEvent&)> observer) {
    observer_ = std::move(observer);
  }

 private:
  struct Znode {
    std::string data;
    ZnodeStat stat;  // data_length and num_children are filled in when read
    std::set<std::string> children;
  };
  struct Session {
    TimeUs timeout_us = 0;
    TimeUs deadline_us = 0;  // a tick boundary
    NodeId client;
    uint64_t connection_epoch = 0;  // network connection of the handshake
    uint64_t generation = 0;        // client's attempt of the handshake
    bool connected = false;
    std::set<std::string> ephemerals;
  };
  using WatchTable = std::map<std::string, std::set<ZkSessionId>, std::less<>>;

  void OnMessage(const Delivery& delivery);
  void HandleConnect(const Delivery& delivery, const ZkConnectRequest& request);
  void HandleRequest(const Delivery& delivery, const ZkRequest& request);
  // Applies one operation of a live session; fills `reply` and fires the watches it triggers.
  void Apply(ZkSessionId session, const ZkRequest& request, ZkReply& reply);
  Errc Create(ZkSessionId session, const ZkRequest& request, std::string& created);
  Errc Delete(const std::string& path, int32_t version);
  Errc SetData(const std::string& path, const std::string& data, int32_t version);
  // Deletes a node known to exist and childless, at `zxid`, firing its watches.
  void RemoveNode(const std::string& path, Zxid zxid);
  // SetWatches on a resumed session.
  void RestoreWatches(ZkSessionId session, const ZkConnectRequest& request);

  // Session tracker.
  TimeUs RoundToTick(TimeUs time_us) const;
  void Touch(ZkSessionId id, Session& session);
  void SetDeadline(ZkSessionId id, Session& session, TimeUs deadline_us);
  void ArmTracker();
  void OnTrackerTimer();
  // Ends a session: its watches, its ephemerals (one zxid), its connection.
  void EndSession(ZkSessionId id, ZkServerEvent::Type why);
  void DropWatches(ZkSessionId session);

  // Watches and sending.
  // Fires and removes the watches on `path` in `table` (skipping the sessions in `suppress`);
  // returns every session whose watch it removed.
  std::set<ZkSessionId> Trigger(WatchTable& table, const std::string& path, WatchEventType type,
                                const std::set<ZkSessionId>* suppress);
  void Notify(ZkSessionId id, const WatchEvent& event);
  // Sends on the session's connection if it is still the same network connection.
  void SendToSession(Session& session, std::shared_ptr<ZkPayload> payload, std::string kind,
                     int64_t size_bytes);
  void SendTo(NodeId client, std::shared_ptr<ZkPayload> payload, std::string kind,
              int64_t size_bytes);
  ZnodeStat StatOf(const Znode& node) const;
  void Report(ZkServerEvent event);

  EventLoop& loop_;
  Network& network_;
  ZooKeeperOptions options_;
  NodeId node_;
  TimeUs min_timeout_us_;
  TimeUs max_timeout_us_;
  bool up_ = true;

  std::map<std::string, Znode, std::less<>> tree_;
  Zxid last_zxid_{0};
  std::map<ZkSessionId, Session> sessions_;
  int64_t next_session_id_;
  std::set<std::pair<TimeUs, ZkSessionId>> deadlines_;  // the tracker's buckets, in order
  TimerId tracker_timer_ = 0;
  TimeUs tracker_at_us_ = 0;

  WatchTable data_watches_;   // GetData and Exists watches
  WatchTable child_watches_;  // GetChildren watches

  std::function<void(const ZkServerEvent&)> observer_;
};

}  // namespace ksim::sim
