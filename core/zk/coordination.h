// The Coordination seam: the ZooKeeper client API as core code (brokers, the controller, the
// admin tools) uses it. It is asynchronous and sans-IO: every call returns at once and its result
// arrives later through a callback run on the owner's event loop; nothing ever blocks. The
// simulated implementation is sim::ZooKeeperClient (a session with the simulated ZooKeeper node
// over the virtual network); a real one would wrap the ZooKeeper C client. docs/zookeeper.md
// describes the model.
//
// The API follows ZooKeeper 3.4's (what Kafka 0.10 runs on):
// - Znodes are persistent or ephemeral (deleted when the session that created them ends), and
//   either can be sequential: the server appends the parent's child counter, ten digits, zero
//   padded ("/isr_change_notification/isr_change_0000000003"). Ephemerals cannot have children.
// - Every znode has a Stat; writes can be conditional on the data version (kAnyVersion = no
//   condition).
// - Watches are one-shot. A read with `watch` set leaves a watch that fires once, to the watcher
//   installed with SetWatcher: data watches (GetData, Exists on an existing node) on SetData and
//   Delete; Exists on a missing node also on its creation; child watches (GetChildren) on a child's
//   creation or deletion and on the node's own deletion. A fired watch is gone until a read sets
//   it again. Watches survive disconnections within a session (the client re-registers them on
//   reconnect and the server fires those whose node changed meanwhile); they end with the session.
// - Session state changes (SyncConnected, Disconnected, Expired, Closed) go to the listener
//   installed with SetSessionListener. After Expired or Closed every call fails with
//   SESSIONEXPIRED until Connect() opens a new session (as Kafka's broker does to re-register).
//
// Errors are Status values with ZooKeeper's names: NONODE, NODEEXISTS, BADVERSION, NOTEMPTY,
// NOCHILDRENFOREPHEMERALS, SESSIONEXPIRED, CONNECTIONLOSS (the request may or may not have been
// applied: the connection dropped before the answer came), and INVALID_ARGUMENT for a malformed
// path (ZooKeeper's BADARGUMENTS).
//
// Ordering guarantees (ZooKeeper's): requests of one client are applied and answered in the order
// they were issued (FIFO client order), and responses and watch events reach a client in the order
// the server produced them, so a watch event is always seen before the response of any later read
// that observes the change that fired it. A CONNECTIONLOSS fails every outstanding request, oldest
// first, before the Disconnected event. Argument errors (a malformed path) are reported on their
// own, outside that order.
//
// Threads and lifetime: single-threaded; callbacks never run inside the call that was given them.
// Destroying an implementation drops every pending callback without running it.
// REQUIRES (all calls): the object is not destroyed from inside one of its own callbacks.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/base/types.h"

namespace ksim {

struct ZkSessionIdTag {};
struct ZxidTag {};
using ZkSessionId = StrongInt<ZkSessionIdTag, int64_t>;  // 0 = no session
using Zxid = StrongInt<ZxidTag, int64_t>;                // ZooKeeper transaction id, increasing

inline constexpr ZkSessionId kNoSession{0};
// The version argument of Delete / SetData that matches any version.
inline constexpr int32_t kAnyVersion = -1;

enum class CreateMode : uint8_t {
  kPersistent,
  kEphemeral,
  kPersistentSequential,
  kEphemeralSequential,
};
std::string_view CreateModeName(CreateMode mode);
constexpr bool IsEphemeral(CreateMode mode) {
  return mode == CreateMode::kEphemeral || mode == CreateMode::kEphemeralSequential;
}
constexpr bool IsSequential(CreateMode mode) {
  return mode == CreateMode::kPersistentSequential || mode == CreateMode::kEphemeralSequential;
}

// ZooKeeper's Stat (without ACL version).
struct ZnodeStat {
  Zxid czxid{0};  // the transaction that created the node
  Zxid mzxid{0};  // the last transaction that set its data
  Zxid pzxid{0};  // the last transaction that added or removed a child
  int64_t ctime_ms = 0;
  int64_t mtime_ms = 0;
  int32_t version = 0;   // data version: SetData increments it
  int32_t cversion = 0;  // child creations so far (the sequential counter)
  ZkSessionId ephemeral_owner = kNoSession;
  int32_t data_length = 0;
  int32_t num_children = 0;
  friend bool operator==(const ZnodeStat&, const ZnodeStat&) = default;
};

enum class WatchEventType : uint8_t {
  kNodeCreated,
  kNodeDeleted,
  kNodeDataChanged,
  kNodeChildrenChanged,
};
std::string_view WatchEventTypeName(WatchEventType type);

struct WatchEvent {
  WatchEventType type;
  std::string path;
  friend bool operator==(const WatchEvent&, const WatchEvent&) = default;
};

// What the session listener is told.
enum class SessionEvent : uint8_t {
  kSyncConnected,  // connected (first time, or again within the same session)
  kDisconnected,   // the connection dropped; the session may still be alive on the server
  kExpired,        // the server ended the session: its ephemerals and watches are gone
  kClosed,         // Close() finished
};
std::string_view SessionEventName(SessionEvent event);

enum class SessionState : uint8_t {
  kNotStarted,  // constructed, Connect() not called yet
  kConnecting,  // trying to (re)connect; requests wait for the connection
  kConnected,
  kClosing,  // Close() sent, waiting for the server
  kClosed,
  kExpired,
};
std::string_view SessionStateName(SessionState state);

struct ZnodeData {
  std::string data;
  ZnodeStat stat;
};

using CreateCallback = std::function<void(Result<std::string>)>;  // the created path
using DeleteCallback = std::function<void(Status)>;
using ExistsCallback = std::function<void(Result<std::optional<ZnodeStat>>)>;  // nullopt: absent
using GetDataCallback = std::function<void(Result<ZnodeData>)>;
using SetDataCallback = std::function<void(Result<ZnodeStat>)>;
using ChildrenCallback = std::function<void(Result<std::vector<std::string>>)>;  // sorted names
using Watcher = std::function<void(const WatchEvent&)>;
using SessionListener = std::function<void(SessionEvent)>;

class Coordination {
 public:
  virtual ~Coordination() = default;

  // Where watch events and session events go (replacing the previous callback; empty = drop).
  virtual void SetWatcher(Watcher watcher) = 0;
  virtual void SetSessionListener(SessionListener listener) = 0;

  // Opens a new session; SyncConnected follows when the server accepts it. Requests issued
  // before that wait for the connection.
  // REQUIRES: state() is kNotStarted, kExpired or kClosed.
  virtual void Connect() = 0;
  // Ends the session: the server deletes its ephemerals at once (a clean shutdown, unlike a
  // crash, whose ephemerals last until the session times out). `done` runs when it is over.
  virtual void Close(std::function<void()> done) = 0;

  virtual SessionState state() const = 0;
  // The current (or last) session's id; kNoSession before the first connection.
  virtual ZkSessionId session_id() const = 0;
  // The timeout the server granted (0 before the first connection).
  virtual TimeUs negotiated_session_timeout_us() const = 0;

  // Every callback may be empty (fire and forget).
  // NONODE: no parent; NODEEXISTS; NOCHILDRENFOREPHEMERALS: the parent is ephemeral.
  virtual void Create(std::string path, std::string data, CreateMode mode, CreateCallback done) = 0;
  // NONODE; BADVERSION: `version` is not kAnyVersion and differs; NOTEMPTY: it has children.
  virtual void Delete(std::string path, int32_t version, DeleteCallback done) = 0;
  virtual void Exists(std::string path, bool watch, ExistsCallback done) = 0;
  // NONODE (and then no watch is left).
  virtual void GetData(std::string path, bool watch, GetDataCallback done) = 0;
  // NONODE; BADVERSION. Returns the new Stat.
  virtual void SetData(std::string path, std::string data, int32_t version,
                       SetDataCallback done) = 0;
  // NONODE (and then no watch is left).
  virtual void GetChildren(std::string path, bool watch, ChildrenCallback done) = 0;
};

// ZooKeeper's PathUtils.validatePath: absolute, no empty, "." or ".." component, no trailing
// slash (except "/" itself, or when `sequential`: the server appends the counter), no NUL or
// control character (0x01-0x1e; ZooKeeper's non-ASCII ranges are not checked on UTF-8 bytes).
// kInvalidArgument says why.
Status ValidateZnodePath(std::string_view path, bool sequential = false);
// "/a/b" -> "/a"; "/a" -> "/". REQUIRES: path starts with '/' and is not "/".
std::string_view ParentPath(std::string_view path);
// "/a/b" -> "b". REQUIRES: path starts with '/'.
std::string_view NodeName(std::string_view path);
// "isr_change_0000000003" -> 3: the counter a sequential create appended; kInvalidArgument when
// the name does not end in ten digits.
Result<int64_t> SequenceNumber(std::string_view name);

// Kafka's ZkUtils.createPersistentPath / createEphemeralPath pattern: creates `path`, and when its
// parent is missing creates the missing ancestors (persistent, empty, tolerating NODEEXISTS from a
// concurrent creator) and tries again. `done` gets the created path or the first error.
void CreateWithParents(Coordination& zk, std::string path, std::string data, CreateMode mode,
                       CreateCallback done);
// Kafka's ZkUtils.makeSurePersistentPathExists: `path` and its ancestors exist afterwards (OK
// when it already existed).
void EnsurePersistentPath(Coordination& zk, std::string path, std::function<void(Status)> done);
// Kafka's ZkUtils.deletePathRecursive (ZkClient.deleteRecursive): deletes `path`'s children,
// depth first, then `path`. OK when it is already gone; `done` gets the first other error.
void DeleteRecursive(Coordination& zk, std::string path, std::function<void(Status)> done);

}  // namespace ksim
