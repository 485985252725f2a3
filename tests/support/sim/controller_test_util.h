// A small cluster for controller tests, on the real simulated ZooKeeper and network: three broker
// nodes, each running what a broker runs for its controller (a ZooKeeperClient session with the
// broker's registration, a SimTransport + NetworkClient, a ControllerChannelManager and the
// Controller) plus a request recorder in place of the broker's request handling: it records every
// LeaderAndIsr / UpdateMetadata / StopReplica it receives and answers it with success. An `admin`
// node plays the tools (topic creation and deletion markers) and the partition leaders' own
// ZooKeeper writes (ISR changes). Crash = the node goes down and every object of it is destroyed;
// restart = new objects, a new session, a new registration. The controller reaches ZooKeeper
// through a FaultyCoordination (tests/support/sim/faulty_coordination.h), so that a test can fail
// chosen calls of one node's controller.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/config/server_config.h"
#include "core/controller/channel.h"
#include "core/controller/controller.h"
#include "core/protocol/messages.h"
#include "core/protocol/network_client.h"
#include "core/zk/paths.h"
#include "sim/kernel/random.h"
#include "sim/world/sim_transport.h"
#include "sim/world/zookeeper_client.h"
#include "tests/support/sim/faulty_coordination.h"
#include "tests/support/sim/zookeeper_test_util.h"

namespace ksim::sim::testing {

struct RecordedRequest {
  std::string from;  // the sending node ("broker-2"); the node's own name for local delivery
  ksim::Message request;
};

struct RecordedEvent {
  std::string ev;
  nlohmann::ordered_json fields;
};

inline std::string BrokerNode(int id) { return "broker-" + std::to_string(id); }

class ControllerNode {
 public:
  ControllerNode(ZooKeeperWorld& world, int id, const BrokerConfig& config,
                 const ControllerOptions& options, uint64_t seed, uint64_t incarnation)
      : world_(world), id_(id), name_(BrokerNode(id)), config_(config) {
    config_.broker_id = id;
    Seeds seeds(seed * 1'000'003 + static_cast<uint64_t>(id) * 100 + incarnation);
    zk_ = std::make_unique<ZooKeeperClient>(world.loop(), world.network(), name_,
                                            seeds.StreamFor("zk"));
    transport_ = std::make_unique<SimTransport>(world.network(), name_);
    NetworkClientOptions client_options;
    client_options.request_timeout_us = 2 * kSecondUs;
    client_ = std::make_unique<NetworkClient>(
        *transport_, world.loop(),
        NetworkClient::Handlers{
            .on_request =
                [this](std::string_view from, ConnectionId connection, ksim::Message request) {
                  ksim::Message response = Record(std::string(from), request);
                  client_->Respond(from, connection, std::move(response));
                },
            .on_disconnect = nullptr,
            .on_ready =
                [this](std::string_view peer) {
                  if (channel_) channel_->OnReady(peer);
                }},
        client_options);
    channel_ = std::make_unique<ControllerChannelManager>(
        BrokerId(id), *client_, world.loop(),
        [this](ksim::Message request, std::function<void(ksim::Message)> respond) {
          respond(Record(name_, request));
        },
        100'000);
    random_ = std::make_unique<StreamRandomSource>(seeds.StreamFor("controller"));
    faults_ = std::make_unique<FaultyCoordination>(*zk_);
    controller_ = std::make_unique<Controller>(
        config_, options, *faults_, *channel_, world.loop(), world.loop(), *random_,
        [this](std::string_view ev, const EventFields& fields) {
          events.push_back(RecordedEvent{std::string(ev), fields.json()});
        });
    world.network().Register(name_, NetworkHandler{
                                        .on_message =
                                            [this](Delivery delivery) {
                                              if (!zk_->OnMessage(delivery)) {
                                                transport_->OnMessage(delivery);
                                              }
                                            },
                                        .on_disconnect =
                                            [this](const Disconnect& notice) {
                                              zk_->OnDisconnect(notice);
                                              transport_->OnDisconnect(notice);
                                            },
                                    });
    zk_->SetWatcher([this](const WatchEvent& event) { controller_->OnWatchEvent(event); });
    zk_->SetSessionListener([this](SessionEvent event) { OnSession(event); });
    zk_->Connect();
  }

  ~ControllerNode() {
    // A crash: the controller first (it borrows everything else), then the rest.
    *token_ = false;
    controller_.reset();
    faults_.reset();
    channel_.reset();
    client_.reset();
    transport_.reset();
    zk_.reset();
    world_.network().Unregister(world_.topology().Id(name_));
  }

  Controller& controller() { return *controller_; }
  ZooKeeperClient& zk() { return *zk_; }
  // The controller's ZooKeeper: arm a fault here to fail the controller's calls.
  FaultyCoordination& faults() { return *faults_; }
  ControllerChannelManager& channel() { return *channel_; }
  const std::string& name() const { return name_; }
  int id() const { return id_; }

  // Answers with success unless told otherwise.
  ksim::Message Record(std::string from, const ksim::Message& request) {
    requests.push_back(RecordedRequest{std::move(from), request});
    if (const auto* r = std::get_if<LeaderAndIsrRequest>(&request)) {
      LeaderAndIsrResponse response;
      response.correlation_id = r->correlation_id;
      for (const auto& state : r->partition_states) response.partitions.push_back({state.tp});
      return response;
    }
    if (const auto* r = std::get_if<StopReplicaRequest>(&request)) {
      StopReplicaResponse response;
      response.correlation_id = r->correlation_id;
      for (const auto& tp : r->partitions) response.partitions.push_back({tp});
      return response;
    }
    if (const auto* r = std::get_if<UpdateMetadataRequest>(&request)) {
      UpdateMetadataResponse response;
      response.correlation_id = r->correlation_id;
      return response;
    }
    ADD_FAILURE() << "unexpected request " << MessageKind(request);
    return UpdateMetadataResponse{};
  }

  std::vector<RecordedRequest> requests;
  std::vector<RecordedEvent> events;
  bool registered = false;

 private:
  void OnSession(SessionEvent event) {
    controller_->OnSessionEvent(event);
    if (event == SessionEvent::kExpired) {
      // KafkaHealthcheck.handleNewSession: a new session, then the registration again.
      registered = false;
      world_.loop().Schedule(0, [this, token = token_] {
        if (*token && zk_->state() == SessionState::kExpired) zk_->Connect();
      });
      return;
    }
    if (event != SessionEvent::kSyncConnected || registered_session_ == zk_->session_id()) return;
    registered_session_ = zk_->session_id();
    zk::BrokerRegistration registration;
    registration.host = name_;
    registration.port = 9092;
    registration.endpoints = {"PLAINTEXT://" + name_ + ":9092"};
    registration.timestamp_ms = world_.loop().Now() / 1000;
    zk_->Create(zk::BrokerIdPath(BrokerId(id_)), zk::EncodeBrokerRegistration(registration),
                CreateMode::kEphemeral, [this, token = token_](Result<std::string> created) {
                  if (!*token || !created.ok()) return;
                  registered = true;
                  if (!started_) {
                    started_ = true;
                    controller_->Startup();
                  }
                });
  }

  ZooKeeperWorld& world_;
  int id_;
  std::string name_;
  BrokerConfig config_;
  std::shared_ptr<bool> token_ = std::make_shared<bool>(true);
  ZkSessionId registered_session_ = kNoSession;
  bool started_ = false;
  std::unique_ptr<ZooKeeperClient> zk_;
  std::unique_ptr<SimTransport> transport_;
  std::unique_ptr<NetworkClient> client_;
  std::unique_ptr<ControllerChannelManager> channel_;
  std::unique_ptr<StreamRandomSource> random_;
  std::unique_ptr<FaultyCoordination> faults_;
  std::unique_ptr<Controller> controller_;
};

class ControllerCluster {
 public:
  // KSIM_CONTROLLER_SEED overrides the seed (to run the suite over many network timings).
  explicit ControllerCluster(BrokerConfig config = BrokerConfig(),
                             ControllerOptions options = ControllerOptions(),
                             uint64_t seed = DefaultSeed())
      : world_(seed), seed_(seed), config_(std::move(config)), options_(std::move(options)) {
    world_.StartClient("admin");
    EXPECT_TRUE(world_.Connected("admin"));
    for (const std::string& path : zk::CommonPaths()) {
      std::optional<Status> done;
      EnsurePersistentPath(world_.client("admin"), path, [&](Status s) { done.emplace(s); });
      EXPECT_TRUE(world_.Wait(done).ok());
    }
  }
  static uint64_t DefaultSeed() {
    const char* seed = std::getenv("KSIM_CONTROLLER_SEED");
    return seed != nullptr ? std::strtoull(seed, nullptr, 10) : 7;
  }
  ~ControllerCluster() {
    for (auto& [id, node] : nodes_) node.reset();
  }

  ZooKeeperWorld& world() { return world_; }
  ZooKeeperServer& server() { return world_.server(); }

  ControllerNode& Start(int id) {
    EXPECT_TRUE(world_.topology().SetNodeUp(BrokerNode(id), true).ok());
    auto& node = nodes_[id];
    node =
        std::make_unique<ControllerNode>(world_, id, config_, options_, seed_, incarnations_[id]++);
    return *node;
  }
  void StartAll() {
    for (int id = 1; id <= 3; ++id) Start(id);
  }
  // The broker process dies: its node goes down and its session lives on until it times out.
  void Crash(int id) {
    nodes_.at(id).reset();
    nodes_.erase(id);
    EXPECT_TRUE(world_.topology().SetNodeUp(BrokerNode(id), false).ok());
  }
  bool Running(int id) const { return nodes_.contains(id); }
  ControllerNode& node(int id) { return *nodes_.at(id); }
  Controller& controller(int id) { return nodes_.at(id)->controller(); }

  bool RunUntil(const std::function<bool()>& done, TimeUs budget_us = 120 * kSecondUs) {
    return world_.RunUntil(done, budget_us);
  }
  void RunFor(TimeUs duration_us) { world_.RunFor(duration_us); }

  // The running broker whose controller is active, if exactly one is.
  std::optional<int> ActiveController() {
    std::optional<int> active;
    for (auto& [id, node] : nodes_) {
      if (!node->controller().is_active()) continue;
      if (active) return std::nullopt;
      active = id;
    }
    return active;
  }
  // Waits for one active controller that knows every running broker as live.
  int WaitForController() {
    const bool ok = RunUntil([&] {
      std::optional<int> active = ActiveController();
      if (!active) return false;
      for (auto& [id, node] : nodes_) {
        if (!node->registered) return false;
        if (!controller(*active).live_brokers().contains(BrokerId(id))) return false;
      }
      return true;
    });
    EXPECT_TRUE(ok) << "no controller";
    return ok ? *ActiveController() : -1;
  }

  void CreateTopic(const std::string& topic, const zk::ReplicaAssignment& assignment,
                   const zk::TopicConfig& config = {}) {
    if (!config.empty()) {
      EXPECT_TRUE(
          world_.Create("admin", zk::TopicConfigPath(topic), zk::EncodeTopicConfig(config)).ok());
    }
    EXPECT_TRUE(
        world_.Create("admin", zk::TopicPath(topic), zk::EncodeReplicaAssignment(assignment)).ok());
  }

  std::optional<zk::PartitionState> State(const std::string& topic, int partition) {
    std::optional<ZnodeData> data =
        server().Read(zk::PartitionStatePath(topic, PartitionId(partition)));
    if (!data) return std::nullopt;
    Result<zk::PartitionState> state = zk::DecodePartitionState(data->data);
    if (!state.ok()) return std::nullopt;
    return *state;
  }
  int32_t StateVersion(const std::string& topic, int partition) {
    std::optional<ZnodeData> data =
        server().Read(zk::PartitionStatePath(topic, PartitionId(partition)));
    return data ? data->stat.version : -1;
  }

 private:
  ZooKeeperWorld world_;
  uint64_t seed_;
  BrokerConfig config_;
  ControllerOptions options_;
  std::map<int, std::unique_ptr<ControllerNode>> nodes_;
  std::map<int, uint64_t> incarnations_;
};

// Every LeaderAndIsr partition state for `tp` that `node` received, in order.
inline std::vector<LeaderAndIsrPartitionState> LeaderAndIsrStates(const ControllerNode& node,
                                                                  const TopicPartition& tp) {
  std::vector<LeaderAndIsrPartitionState> states;
  for (const RecordedRequest& recorded : node.requests) {
    if (const auto* r = std::get_if<LeaderAndIsrRequest>(&recorded.request)) {
      for (const auto& state : r->partition_states) {
        if (state.tp == tp) states.push_back(state);
      }
    }
  }
  return states;
}

inline std::vector<BrokerId> Ids(std::initializer_list<int> ids) {
  std::vector<BrokerId> out;
  for (int id : ids) out.push_back(BrokerId(id));
  return out;
}

inline TopicPartition Tp(const std::string& topic, int partition) {
  return TopicPartition{topic, PartitionId(partition)};
}

inline std::vector<const RecordedEvent*> Events(const ControllerNode& node, std::string_view ev) {
  std::vector<const RecordedEvent*> out;
  for (const RecordedEvent& event : node.events) {
    if (event.ev == ev) out.push_back(&event);
  }
  return out;
}

inline bool GotUpdateMetadata(const ControllerNode& node, const TopicPartition& tp,
                              const std::vector<BrokerId>& isr, BrokerId leader) {
  for (const RecordedRequest& recorded : node.requests) {
    const auto* request = std::get_if<UpdateMetadataRequest>(&recorded.request);
    if (request == nullptr) continue;
    for (const auto& state : request->partition_states) {
      if (state.tp == tp && state.isr == isr && state.leader == leader) return true;
    }
  }
  return false;
}

inline bool GotLeaderAndIsr(const ControllerNode& node, const TopicPartition& tp, BrokerId leader,
                            LeaderEpoch epoch) {
  for (const auto& state : LeaderAndIsrStates(node, tp)) {
    if (state.leader == leader && state.leader_epoch == epoch) return true;
  }
  return false;
}

// The active controller `c` has seen its own last write of the partition's state (ZooKeeper
// applies a write before the controller hears the answer).
inline bool Synced(ControllerCluster& cluster, int c, const std::string& topic, int partition) {
  std::optional<zk::PartitionState> state = cluster.State(topic, partition);
  const auto& partitions = cluster.controller(c).partitions();
  auto it = partitions.find(Tp(topic, partition));
  return state && it != partitions.end() && it->second.state == *state &&
         it->second.zk_version == cluster.StateVersion(topic, partition);
}

// Brokers 1, 2, 3 with broker 1 as controller (it starts first).
inline int StartWithControllerOne(ControllerCluster& cluster) {
  cluster.Start(1);
  EXPECT_EQ(cluster.WaitForController(), 1);
  cluster.Start(2);
  cluster.Start(3);
  return cluster.WaitForController();
}

// The leader shrinks its ISR in ZooKeeper (as Partition.maybeShrinkIsr does) behind the
// controller's back: the controller's next write meets BADVERSION and decides again.
inline void ShrinkIsr(ControllerCluster& cluster, const std::string& topic, int partition,
                      const std::vector<BrokerId>& isr) {
  zk::PartitionState state = *cluster.State(topic, partition);
  state.isr = isr;
  ASSERT_TRUE(cluster.world()
                  .SetData("admin", zk::PartitionStatePath(topic, PartitionId(partition)),
                           zk::EncodePartitionState(state), cluster.StateVersion(topic, partition))
                  .ok());
}

}  // namespace ksim::sim::testing
