// The simulated ZooKeeper client: core's Coordination seam for one node (a broker, an admin
// tool), talking to sim::ZooKeeperServer over the virtual network the way ZooKeeper 3.4's Java
// client (ClientCnxn) does. docs/zookeeper.md describes the model; in short:
//
// - Connect() sends a ConnectRequest with the proposed session timeout; the server's answer sets
//   the negotiated timeout T. Then read timeout = 2T/3 and connect timeout = T (one server).
// - Connected, the client pings whenever it has sent nothing for T/3 (half the read timeout), so
//   a healthy connection always hears something within the read timeout.
// - Nothing heard for the read timeout (or a connect unanswered for the connect timeout, or the
//   server closing the connection, or the network reporting the connection broken): every
//   outstanding request fails with CONNECTIONLOSS, oldest first, then the listener hears
//   Disconnected. The client reconnects after a random pause in [0, 1 s) (the Java client's),
//   resuming the same session and re-registering its watches (SetWatches). A connection attempt
//   the network refuses at once (the server's node is down or cut off) counts as failed at once.
// - Requests issued while connecting wait and are sent, in order, once connected; a failed
//   attempt fails them with CONNECTIONLOSS (the Java client's cleanup()).
// - A reconnect to a session the server has expired is answered "expired": the listener hears
//   Expired, the watches are gone, and every call fails with SESSIONEXPIRED until Connect() opens
//   a new session. The client never decides on its own that its session expired.
//
// Routing: a node's network handler is one function. A node that runs only this client calls
// Attach(); a node that runs more (a broker) hands every delivery and disconnect notice to
// OnMessage / OnDisconnect, which take what comes from the ZooKeeper node in its protocol.
// One ZooKeeperClient per node.
//
// Ownership and crashes: borrows the EventLoop and Network (which must outlive it). When its node
// crashes, the owner destroys it: every timer is cancelled, the handler unregistered (if
// attached), and no callback runs afterwards. Single-threaded.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/base/random.h"
#include "core/base/status.h"
#include "core/base/trace_names.h"
#include "core/base/types.h"
#include "core/zk/coordination.h"
#include "sim/kernel/event_loop.h"
#include "sim/world/network.h"
#include "sim/world/zookeeper.h"

namespace ksim::sim {

struct ZkClientOptions {
  std::string server_node = std::string(ksim::node::kZooKeeper);
  // The proposed session timeout: Kafka's zookeeper.session.timeout.ms (6000).
  TimeUs session_timeout_us = 6'000'000;
  // Reconnects wait a random time in [0, this): ClientCnxn sleeps up to 1 s.
  TimeUs reconnect_pause_us_max = 1'000'000;
};

class ZooKeeperClient final : public Coordination {
 public:
  // `rng` draws the reconnect pauses. REQUIRES: `node` and options.server_node exist in the
  // topology and differ; session_timeout_us >= 3 ms; reconnect_pause_us_max > 0.
  ZooKeeperClient(EventLoop& loop, Network& network, std::string_view node, RandomStream rng,
                  ZkClientOptions options = {});
  ~ZooKeeperClient() override;
  ZooKeeperClient(const ZooKeeperClient&) = delete;
  ZooKeeperClient& operator=(const ZooKeeperClient&) = delete;

  // Registers this client as its node's network handler.
  void Attach();
  // For a node's own handler: returns true when the delivery was this client's (sent by the
  // ZooKeeper node in its protocol), false when the caller should handle it.
  bool OnMessage(const Delivery& delivery);
  void OnDisconnect(const Disconnect& notice);

  // Coordination.
  void SetWatcher(Watcher watcher) override { watcher_ = std::move(watcher); }
  void SetSessionListener(SessionListener listener) override { listener_ = std::move(listener); }
  void Connect() override;
  void Close(std::function<void()> done) override;
  SessionState state() const override { return state_; }
  ZkSessionId session_id() const override { return session_; }
  TimeUs negotiated_session_timeout_us() const override { return negotiated_timeout_us_; }
  void Create(std::string path, std::string data, CreateMode mode, CreateCallback done) override;
  void Delete(std::string path, int32_t version, DeleteCallback done) override;
  void Exists(std::string path, bool watch, ExistsCallback done) override;
  void GetData(std::string path, bool watch, GetDataCallback done) override;
  void SetData(std::string path, std::string data, int32_t version, SetDataCallback done) override;
  void GetChildren(std::string path, bool watch, ChildrenCallback done) override;

  // Inspection.
  NodeId node() const { return node_; }
  Zxid last_zxid_seen() const { return last_zxid_; }
  // Sent and unanswered, plus waiting for a connection.
  size_t outstanding_requests() const { return pending_.size() + queued_.size(); }
  // Watches this client holds (data, exists and child together).
  size_t watch_count() const;
  TimeUs read_timeout_us() const { return SessionTimeoutUs() * 2 / 3; }
  uint64_t pings_sent() const { return pings_sent_; }

 private:
  struct Call {
    int32_t xid = 0;
    ZkOp op = ZkOp::kPing;
    std::string path;
    std::string data;
    int32_t version = kAnyVersion;
    CreateMode mode = CreateMode::kPersistent;
    bool watch = false;
    // Runs once: with the reply (status ok or the server's error), or without one (local error).
    std::function<void(const Status&, const ZkReply*)> complete;
  };

  TimeUs SessionTimeoutUs() const {
    return negotiated_timeout_us_ > 0 ? negotiated_timeout_us_ : options_.session_timeout_us;
  }
  TimeUs PingIntervalUs() const { return read_timeout_us() / 2; }

  static Call NewCall(ZkOp op, std::string path) {
    Call call;
    call.op = op;
    call.path = std::move(path);
    return call;
  }
  void Submit(Call call);
  // Submits `call` and answers `done` (a Coordination callback of a Result) with the error, or
  // with what `answer` reads off the server's reply.
  template <class Done, class Answer>
  void SubmitAnswering(Call call, Done done, Answer answer) {
    call.complete = [done = std::move(done), answer](const Status& status, const ZkReply* reply) {
      if (!done) return;
      if (!status.ok()) {
        done(status);
      } else {
        done(answer(*reply));
      }
    };
    Submit(std::move(call));
  }
  void Send(Call call);
  void SendPing();
  void StartAttempt();
  void OnConnectResponse(const ZkConnectResponse& response);
  void OnReply(const ZkReply& reply);
  void OnWatchEvent(const ZkWatchNotice& notice);
  // The connection is gone (ClientCnxn's cleanup): fails what was outstanding, tells the
  // listener, schedules the next attempt.
  void ConnectionLost();
  // Our own timeout gave up on the connection: close it (a new attempt opens a new one), then
  // ConnectionLost.
  void AbandonConnection();
  void Expire();
  void EnterClosed();
  // What a closed or expired session leaves behind: no timers, no connection, no watches; the
  // generation moves on so that late answers of the old connection are ignored.
  void EndSession();
  // Takes every outstanding call, sent ones first.
  std::deque<Call> TakeOutstanding();
  void ScheduleAttempt(TimeUs delay_us);
  // (Re)arms `timer` (a member) to run `handler` at `at_us`, clearing it first.
  void Arm(TimerId& timer, TimeUs at_us, void (ZooKeeperClient::*handler)(), const char* label);
  void ArmPoll(TimeUs at_us);
  void CancelTimer(TimerId& timer);
  void OnPoll();
  // Runs `callback` as its own event (so no callback runs inside a user's call), in order.
  void Defer(std::function<void()> callback);
  void Fail(Call call, Status status);
  void NotifySession(SessionEvent event);

  EventLoop& loop_;
  Network& network_;
  NodeId node_;
  NodeId server_;
  RandomStream rng_;
  ZkClientOptions options_;
  bool attached_ = false;

  SessionState state_ = SessionState::kNotStarted;
  ZkSessionId session_ = kNoSession;
  TimeUs negotiated_timeout_us_ = 0;
  Zxid last_zxid_{0};
  uint64_t generation_ = 0;  // bumped on every attempt and every loss: older replies are ignored
  bool connection_open_ = false;  // an attempt in flight, or connected
  uint64_t connection_epoch_ = 0;
  int32_t next_xid_ = 1;
  TimeUs attempt_started_us_ = 0;
  TimeUs last_send_us_ = 0;
  TimeUs last_recv_us_ = 0;
  uint64_t pings_sent_ = 0;

  std::deque<Call> pending_;  // sent, awaiting replies (FIFO, as the server answers)
  std::deque<Call> queued_;   // waiting for a connection
  std::set<std::string> data_watches_;
  std::set<std::string> exist_watches_;
  std::set<std::string> child_watches_;
  Watcher watcher_;
  SessionListener listener_;
  std::vector<std::function<void()>> close_waiters_;

  TimerId poll_timer_ = 0;
  TimeUs poll_at_us_ = 0;
  TimerId attempt_timer_ = 0;
  TimerId deferred_timer_ = 0;
  std::deque<std::function<void()>> deferred_;
};

}  // namespace ksim::sim
