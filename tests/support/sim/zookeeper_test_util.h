// A small simulated world for ZooKeeper tests: an EventLoop, a full-mesh Network of `zk`, three
// brokers and an admin node, the ZooKeeperServer and one attached ZooKeeperClient per node that
// asks for one. Every watch event, session event and operation result a client sees is appended
// to that client's log, in order, so tests can check ordering; the Wait helpers run the loop until
// a callback has fired (within a bound of virtual time).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/zk/coordination.h"
#include "sim/kernel/event_loop.h"
#include "sim/kernel/random.h"
#include "sim/world/network.h"
#include "sim/world/topology.h"
#include "sim/world/zookeeper.h"
#include "sim/world/zookeeper_client.h"

namespace ksim::sim::testing {

inline constexpr TimeUs kSecondUs = 1'000'000;

struct ClientNode {
  std::unique_ptr<ZooKeeperClient> client;
  std::vector<WatchEvent> watch_events;
  std::vector<SessionEvent> session_events;
  // Watch events and results interleaved as the client saw them ("watch NodeDataChanged /a",
  // "session Disconnected", "GetData /a v1", ...).
  std::vector<std::string> log;
  std::function<void(const WatchEvent&)> on_watch;  // optional extra reaction
  std::function<void(SessionEvent)> on_session;
};

class ZooKeeperWorld {
 public:
  explicit ZooKeeperWorld(uint64_t seed = 1, LinkSpec link = LinkSpec{1000, 3000, 0, 0},
                          ZooKeeperOptions server_options = {})
      : seeds_(seed) {
    topology_ = Topology::FullMesh({"zk", "broker-1", "broker-2", "broker-3", "admin"}, link);
    network_ = std::make_unique<Network>(loop_, *topology_, seeds_.StreamFor("network"));
    server_ = std::make_unique<ZooKeeperServer>(loop_, *network_, server_options);
  }

  EventLoop& loop() { return loop_; }
  Topology& topology() { return *topology_; }
  Network& network() { return *network_; }
  ZooKeeperServer& server() { return *server_; }
  ClientNode& node(const std::string& name) { return nodes_.at(name); }
  ZooKeeperClient& client(const std::string& name) { return *nodes_.at(name).client; }

  // Creates the client of `name`, attaches it and starts connecting.
  ZooKeeperClient& StartClient(const std::string& name, TimeUs session_timeout_us = 6 * kSecondUs) {
    ClientNode& node = nodes_[name];
    ZkClientOptions options;
    options.session_timeout_us = session_timeout_us;
    node.client = std::make_unique<ZooKeeperClient>(loop_, *network_, name,
                                                    seeds_.StreamFor("zk-client/" + name), options);
    node.client->Attach();
    node.client->SetWatcher([&node](const WatchEvent& event) {
      node.watch_events.push_back(event);
      node.log.push_back("watch " + std::string(WatchEventTypeName(event.type)) + " " + event.path);
      if (node.on_watch) node.on_watch(event);
    });
    node.client->SetSessionListener([&node](SessionEvent event) {
      node.session_events.push_back(event);
      node.log.push_back("session " + std::string(SessionEventName(event)));
      if (node.on_session) node.on_session(event);
    });
    node.client->Connect();
    return *node.client;
  }

  // Destroys a client (its node crashed).
  void DestroyClient(const std::string& name) { nodes_.at(name).client.reset(); }

  // Runs until `done()` or `budget_us` of virtual time passed; false on timeout.
  bool RunUntil(const std::function<bool()>& done, TimeUs budget_us = 120 * kSecondUs) {
    const TimeUs deadline = loop_.Now() + budget_us;
    while (!done()) {
      const std::optional<EventLoop::NextEvent> next = loop_.PeekNext();
      if (!next || next->time_us > deadline) return false;
      loop_.Step();
    }
    return true;
  }
  void RunFor(TimeUs duration_us) { loop_.RunUntil(loop_.Now() + duration_us); }

  bool Connected(const std::string& name) {
    return RunUntil([&] { return client(name).state() == SessionState::kConnected; });
  }

  // Waits for a callback to fill `slot`; on timeout the test fails and T(error) is returned.
  template <class T>
  T Wait(std::optional<T>& slot) {
    if (!RunUntil([&] { return slot.has_value(); })) {
      ADD_FAILURE() << "no answer within the time budget";
      return T(Status(Errc::kRequestTimedOut, "test wait"));
    }
    return std::move(*slot);
  }

  // Synchronous wrappers: issue, then run the loop until the answer.
  Result<std::string> Create(const std::string& name, const std::string& path,
                             const std::string& data = "",
                             CreateMode mode = CreateMode::kPersistent) {
    std::optional<Result<std::string>> out;
    client(name).Create(path, data, mode,
                        [&](Result<std::string> r) { out.emplace(std::move(r)); });
    return Wait(out);
  }
  Status Delete(const std::string& name, const std::string& path, int32_t version = kAnyVersion) {
    std::optional<Status> out;
    client(name).Delete(path, version, [&](Status s) { out.emplace(std::move(s)); });
    return Wait(out);
  }
  Result<std::optional<ZnodeStat>> Exists(const std::string& name, const std::string& path,
                                          bool watch = false) {
    std::optional<Result<std::optional<ZnodeStat>>> out;
    client(name).Exists(path, watch,
                        [&](Result<std::optional<ZnodeStat>> r) { out.emplace(std::move(r)); });
    return Wait(out);
  }
  Result<ZnodeData> GetData(const std::string& name, const std::string& path, bool watch = false) {
    std::optional<Result<ZnodeData>> out;
    client(name).GetData(path, watch, [&](Result<ZnodeData> r) { out.emplace(std::move(r)); });
    return Wait(out);
  }
  Result<ZnodeStat> SetData(const std::string& name, const std::string& path,
                            const std::string& data, int32_t version = kAnyVersion) {
    std::optional<Result<ZnodeStat>> out;
    client(name).SetData(path, data, version,
                         [&](Result<ZnodeStat> r) { out.emplace(std::move(r)); });
    return Wait(out);
  }
  Result<std::vector<std::string>> GetChildren(const std::string& name, const std::string& path,
                                               bool watch = false) {
    std::optional<Result<std::vector<std::string>>> out;
    client(name).GetChildren(
        path, watch, [&](Result<std::vector<std::string>> r) { out.emplace(std::move(r)); });
    return Wait(out);
  }

 private:
  Seeds seeds_;
  EventLoop loop_;
  std::unique_ptr<Topology> topology_;
  std::unique_ptr<Network> network_;
  std::unique_ptr<ZooKeeperServer> server_;
  std::map<std::string, ClientNode> nodes_;
};

}  // namespace ksim::sim::testing
