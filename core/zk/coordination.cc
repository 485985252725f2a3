#include "core/zk/coordination.h"

#include <memory>
#include <utility>

#include "core/base/check.h"

namespace ksim {

std::string_view CreateModeName(CreateMode mode) {
  switch (mode) {
    case CreateMode::kPersistent:
      return "PERSISTENT";
    case CreateMode::kEphemeral:
      return "EPHEMERAL";
    case CreateMode::kPersistentSequential:
      return "PERSISTENT_SEQUENTIAL";
    case CreateMode::kEphemeralSequential:
      return "EPHEMERAL_SEQUENTIAL";
  }
  return "UNKNOWN";
}

std::string_view WatchEventTypeName(WatchEventType type) {
  switch (type) {
    case WatchEventType::kNodeCreated:
      return "NodeCreated";
    case WatchEventType::kNodeDeleted:
      return "NodeDeleted";
    case WatchEventType::kNodeDataChanged:
      return "NodeDataChanged";
    case WatchEventType::kNodeChildrenChanged:
      return "NodeChildrenChanged";
  }
  return "Unknown";
}

std::string_view SessionEventName(SessionEvent event) {
  switch (event) {
    case SessionEvent::kSyncConnected:
      return "SyncConnected";
    case SessionEvent::kDisconnected:
      return "Disconnected";
    case SessionEvent::kExpired:
      return "Expired";
    case SessionEvent::kClosed:
      return "Closed";
  }
  return "Unknown";
}

std::string_view SessionStateName(SessionState state) {
  switch (state) {
    case SessionState::kNotStarted:
      return "NOT_STARTED";
    case SessionState::kConnecting:
      return "CONNECTING";
    case SessionState::kConnected:
      return "CONNECTED";
    case SessionState::kClosing:
      return "CLOSING";
    case SessionState::kClosed:
      return "CLOSED";
    case SessionState::kExpired:
      return "EXPIRED";
  }
  return "UNKNOWN";
}

Status ValidateZnodePath(std::string_view path, bool sequential) {
  // ZooKeeper validates a sequential path as if the counter were already appended: the path
  // checked is `path` and, when sequential, a '1' after it.
  const size_t size = path.size() + (sequential ? 1 : 0);
  auto checked = [&](size_t i) { return i < path.size() ? path[i] : '1'; };
  auto invalid = [&](std::string_view reason, size_t at) {
    return Status(Errc::kInvalidArgument, "invalid znode path \"" + std::string(path) + "\": " +
                                              std::string(reason) + " @" + std::to_string(at));
  };
  if (size == 0) return invalid("path length must be > 0", 0);
  if (checked(0) != '/') return invalid("path must start with / character", 0);
  if (size == 1) return Status::Ok();
  // The common path (names of letters, digits, '-' and '_' between single slashes) needs none of
  // the rules below: one look at each byte. Anything else is judged byte by byte.
  bool plain = path.back() != '/';
  for (size_t i = 1; plain && i < path.size(); ++i) {
    const auto c = static_cast<unsigned char>(path[i]);
    plain = c > '/' || (c == '/' && path[i - 1] != '/');
  }
  if (plain) return Status::Ok();
  if (checked(size - 1) == '/') return invalid("path must not end with / character", size);
  for (size_t i = 1; i < size; ++i) {
    const unsigned char c = static_cast<unsigned char>(checked(i));
    // Above '/' no rule below applies (the common case: letters, digits, '-', '_').
    if (c > '/') continue;
    const char last = checked(i - 1);
    const bool component_ends = i + 1 == size || checked(i + 1) == '/';
    if (c == 0) return invalid("null character not allowed", i);
    if (c == '/' && last == '/') return invalid("empty node name specified", i);
    if (c == '.' && last == '.' && i >= 2 && checked(i - 2) == '/' && component_ends) {
      return invalid("relative paths not allowed", i);
    }
    if (c == '.' && last == '/' && component_ends) return invalid("relative paths not allowed", i);
    if (c > 0 && c < 0x1f) return invalid("invalid character", i);  // as Java's check
  }
  return Status::Ok();
}

std::string_view ParentPath(std::string_view path) {
  KSIM_CHECK(!path.empty() && path[0] == '/');
  KSIM_CHECK(path.size() > 1);
  const size_t slash = path.rfind('/');
  return slash == 0 ? path.substr(0, 1) : path.substr(0, slash);
}

std::string_view NodeName(std::string_view path) {
  KSIM_CHECK(!path.empty() && path[0] == '/');
  return path.substr(path.rfind('/') + 1);
}

Result<int64_t> SequenceNumber(std::string_view name) {
  constexpr size_t kDigits = 10;
  if (name.size() < kDigits) {
    return Status(Errc::kInvalidArgument, "no sequence suffix in \"" + std::string(name) + "\"");
  }
  int64_t value = 0;
  for (char c : name.substr(name.size() - kDigits)) {
    if (c < '0' || c > '9') {
      return Status(Errc::kInvalidArgument, "no sequence suffix in \"" + std::string(name) + "\"");
    }
    value = value * 10 + (c - '0');
  }
  return value;
}

void CreateWithParents(Coordination& zk, std::string path, std::string data, CreateMode mode,
                       CreateCallback done) {
  std::string first_path = path;
  std::string first_data = data;
  zk.Create(std::move(first_path), std::move(first_data), mode,
            [&zk, path = std::move(path), data = std::move(data), mode,
             done = std::move(done)](Result<std::string> created) mutable {
              const bool parent_missing = !created.ok() && created.status() == Errc::kNoNode;
              if (!parent_missing || ParentPath(path) == "/") {
                if (done) done(std::move(created));
                return;
              }
              std::string parent(ParentPath(path));
              EnsurePersistentPath(zk, std::move(parent),
                                   [&zk, path = std::move(path), data = std::move(data), mode,
                                    done = std::move(done)](Status parents) mutable {
                                     if (!parents.ok()) {
                                       if (done) done(std::move(parents));
                                       return;
                                     }
                                     zk.Create(std::move(path), std::move(data), mode,
                                               std::move(done));
                                   });
            });
}

void EnsurePersistentPath(Coordination& zk, std::string path, std::function<void(Status)> done) {
  if (path == "/") {
    // The root always exists; answer through the client so the callback never runs inline.
    zk.Exists("/", false, [done = std::move(done)](Result<std::optional<ZnodeStat>> root) {
      if (done) done(root.ok() ? Status::Ok() : root.status());
    });
    return;
  }
  CreateWithParents(zk, std::move(path), "", CreateMode::kPersistent,
                    [done = std::move(done)](Result<std::string> created) {
                      if (!done) return;
                      if (created.ok() || created.status() == Errc::kNodeExists) {
                        done(Status::Ok());
                      } else {
                        done(created.status());
                      }
                    });
}

namespace {

// The children of `path` still to delete, deleted one after the other, then `path` itself.
struct RecursiveDelete {
  Coordination& zk;
  std::string path;
  std::vector<std::string> children;
  std::function<void(Status)> done;
};

void DeleteNextChild(std::shared_ptr<RecursiveDelete> job) {
  if (job->children.empty()) {
    std::string path = job->path;
    job->zk.Delete(std::move(path), kAnyVersion, [job](Status deleted) {
      if (job->done) job->done(deleted.ok() || deleted == Errc::kNoNode ? Status::Ok() : deleted);
    });
    return;
  }
  std::string child = job->path + "/" + job->children.back();
  job->children.pop_back();
  DeleteRecursive(job->zk, std::move(child), [job](Status status) {
    if (!status.ok()) {
      if (job->done) job->done(status);
      return;
    }
    DeleteNextChild(job);
  });
}

}  // namespace

void DeleteRecursive(Coordination& zk, std::string path, std::function<void(Status)> done) {
  std::string read = path;
  zk.GetChildren(std::move(read), false,
                 [&zk, path = std::move(path),
                  done = std::move(done)](Result<std::vector<std::string>> children) mutable {
                   if (!children.ok()) {
                     if (done) {
                       done(children.status() == Errc::kNoNode ? Status::Ok() : children.status());
                     }
                     return;
                   }
                   DeleteNextChild(std::make_shared<RecursiveDelete>(RecursiveDelete{
                       zk, std::move(path), std::move(children).value(), std::move(done)}));
                 });
}

}  // namespace ksim
