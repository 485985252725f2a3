// The controller's life cycle: the event queue, the election (Kafka 0.10's
// ZookeeperLeaderElector), failover (KafkaController.onControllerFailover) and the requests it
// sends (ControllerBrokerRequestBatch). The watches are in controller_listeners.cc, the partition
// and replica state machines in controller_partitions.cc, topic deletion in
// controller_deletion.cc. docs/controller.md describes the procedures.
#include "core/controller/controller.h"

#include <algorithm>
#include <utility>

#include "core/base/check.h"

namespace ksim {

Status Controller::ValidateOptions(const ControllerOptions& options) {
  if (options.election_policy.empty()) return Status::Ok();
  if (options.election_policy == "longest-log") {
    return Status(Errc::kInvalidArgument,
                  "election policy longest-log is not supported by the controller: it needs every "
                  "live replica's log end offset, which Kafka's controller does not know (use "
                  "clean, unclean, random-isr or wait-for-last-isr)");
  }
  Result<std::unique_ptr<ElectionPolicy>> policy = MakeElectionPolicy(options.election_policy);
  if (!policy.ok()) return policy.status();
  return Status::Ok();
}

Controller::Controller(const BrokerConfig& config, ControllerOptions options, Coordination& zk,
                       ControllerChannel& channel, Timers& timers, const Clock& clock,
                       RandomSource& random, EventSink events)
    : config_(config),
      options_(std::move(options)),
      id_(config.broker_id),
      zk_(zk),
      channel_(channel),
      timers_(timers),
      clock_(clock),
      random_(random),
      events_(std::move(events)) {
  KSIM_CHECK(config_.broker_id >= 0);
  const Status valid = ValidateOptions(options_);
  KSIM_CHECK_MSG(valid.ok(), valid.ToString().c_str());
}

Controller::~Controller() {
  *token_ = false;
  if (pump_timer_ != 0) timers_.Cancel(pump_timer_);
}

// ---- The event queue ---------------------------------------------------------------------------

void Controller::Enqueue(std::string name, std::function<void(Done)> run,
                         std::function<void()> cancel) {
  queue_.push_back(Task{std::move(name), std::move(run), std::move(cancel)});
  SchedulePump();
}

void Controller::EnqueueActive(std::string name, std::function<void(Done)> run) {
  Enqueue(std::move(name), [this, run = std::move(run)](Done done) {
    if (!active_) {
      done();
      return;
    }
    run(std::move(done));
  });
}

void Controller::SchedulePump() {
  // Tasks start from their own timer event, never inside the call that queued them (a watch
  // event, a ZooKeeper callback): that is what keeps one step from interleaving with another.
  if (pump_timer_ != 0 || running_ || queue_.empty()) return;
  pump_timer_ = timers_.Schedule(0, [this, token = token_] {
    if (!*token) return;
    pump_timer_ = 0;
    Pump();
  });
}

void Controller::Pump() {
  if (running_ || queue_.empty()) return;
  running_ = std::move(queue_.front());
  queue_.pop_front();
  // The task may finish (or resign, clearing running_) inside run: keep the callable alive here.
  std::function<void(Done)> run = std::move(running_->run);
  run(Guarded([this] {
    running_.reset();
    SchedulePump();
  }));
}

// ---- Election (ZookeeperLeaderElector) ---------------------------------------------------------

void Controller::Startup() {
  KSIM_CHECK(!started_);
  started_ = true;
  session_ = zk_.session_id();
  Enqueue("elect", [this](Done done) { Elect(std::move(done)); });
}

void Controller::Shutdown() {
  // KafkaController.shutdown: onControllerResignation; the broker's session close then removes
  // /controller and the others elect.
  Resign();
  started_ = false;
}

void Controller::OnSessionEvent(SessionEvent event) {
  if (!started_) return;
  switch (event) {
    case SessionEvent::kExpired:
    case SessionEvent::kClosed:
      // The session's ephemerals, /controller among them, are gone: resign at once (Kafka does it
      // in handleNewSession; a controller that keeps acting after its expiry is the split brain
      // that the epoch fences).
      known_controller_ = kNoBroker;
      Resign();
      break;
    case SessionEvent::kSyncConnected:
      if (zk_.session_id() != session_) {
        // SessionExpirationListener.handleNewSession: a new session elects again.
        session_ = zk_.session_id();
        Resign();
        Enqueue("elect", [this](Done done) { Elect(std::move(done)); });
      }
      break;
    case SessionEvent::kDisconnected:
      break;  // the session may still be alive; watches survive the reconnection
  }
}

void Controller::Elect(Done done) {
  if (active_) {
    CheckStillController(std::move(done));
    return;
  }
  const std::string registration = zk::EncodeControllerRegistration({id_, clock_.NowMs()});
  zk_.Create(std::string(zk::kControllerPath), registration, CreateMode::kEphemeral,
             Guarded([this, done](Result<std::string> created) mutable {
               if (created.ok()) {
                 known_controller_ = id_;
                 // Watch our own registration: its deletion makes us resign (handleDataDeleted).
                 zk_.Exists(std::string(zk::kControllerPath), /*watch=*/true, {});
                 OnControllerRegistered(std::move(done));
                 return;
               }
               const Errc code = created.status().code();
               if (code != Errc::kNodeExists && code != Errc::kConnectionLoss) {
                 done();  // SESSIONEXPIRED: the next session elects again
                 return;
               }
               // Someone is controller (or our create's answer was lost): read who, and watch it.
               zk_.GetData(
                   std::string(zk::kControllerPath), /*watch=*/true,
                   Guarded([this, done](Result<ZnodeData> data) mutable {
                     if (!data.ok()) {
                       const Errc read_code = data.status().code();
                       if (read_code == Errc::kNoNode || read_code == Errc::kConnectionLoss) {
                         Enqueue("elect", [this](Done next) { Elect(std::move(next)); });
                       }
                       done();
                       return;
                     }
                     Result<zk::ControllerRegistration> controller =
                         zk::DecodeControllerRegistration(data->data);
                     known_controller_ = controller.ok() ? controller->broker_id : kNoBroker;
                     if (controller.ok() && controller->broker_id == id_ &&
                         data->stat.ephemeral_owner == zk_.session_id()) {
                       OnControllerRegistered(std::move(done));  // our create went through
                       return;
                     }
                     done();
                   }));
             }));
}

void Controller::CheckStillController(Done done) {
  zk_.GetData(std::string(zk::kControllerPath), /*watch=*/true,
              Guarded([this, done](Result<ZnodeData> data) mutable {
                if (!data.ok() && data.status().code() == Errc::kConnectionLoss) {
                  Enqueue("elect", [this](Done next) { Elect(std::move(next)); });
                  done();
                  return;
                }
                if (data.ok()) {
                  Result<zk::ControllerRegistration> controller =
                      zk::DecodeControllerRegistration(data->data);
                  if (controller.ok() && controller->broker_id == id_ &&
                      data->stat.ephemeral_owner == zk_.session_id()) {
                    done();
                    return;
                  }
                  known_controller_ = controller.ok() ? controller->broker_id : kNoBroker;
                }
                // Deleted or taken over: onControllerResignation, then elect again.
                Resign();
                if (started_) Enqueue("elect", [this](Done next) { Elect(std::move(next)); });
              }));
}

void Controller::OnControllerRegistered(Done done) {
  if (active_) {
    done();
    return;
  }
  IncrementControllerEpoch(Guarded([this, done](Result<ControllerEpoch> epoch) mutable {
    if (!epoch.ok()) {
      // KafkaController: "Controller moved to another broker. Aborting controller startup".
      ResignAndReelect();
      return;
    }
    epoch_ = *epoch;
    active_ = true;
    EventFields fields;
    fields["epoch"] = epoch_.value();
    Emit(events_, "controller_elected", std::move(fields));
    OnControllerFailover(std::move(done));
  }));
}

void Controller::IncrementControllerEpoch(std::function<void(Result<ControllerEpoch>)> done) {
  // KafkaController.incrementControllerEpoch: a conditional write on the version read; the first
  // controller ever creates /controller_epoch with 1.
  const std::string path(zk::kControllerEpochPath);
  zk_.GetData(path, /*watch=*/false, Guarded([this, path, done](Result<ZnodeData> data) {
                if (!data.ok()) {
                  if (data.status().code() != Errc::kNoNode) {
                    done(data.status());
                    return;
                  }
                  const ControllerEpoch first{1};
                  zk_.Create(path, zk::EncodeControllerEpoch(first), CreateMode::kPersistent,
                             Guarded([this, done, first](Result<std::string> created) {
                               if (created.ok()) {
                                 epoch_zk_version_ = 0;
                                 done(first);
                               } else if (created.status().code() == Errc::kNodeExists) {
                                 IncrementControllerEpoch(done);  // created meanwhile: read it
                               } else {
                                 done(created.status());
                               }
                             }));
                  return;
                }
                Result<ControllerEpoch> current = zk::DecodeControllerEpoch(data->data);
                if (!current.ok()) {
                  done(current.status());
                  return;
                }
                const ControllerEpoch next = *current + 1;
                zk_.SetData(path, zk::EncodeControllerEpoch(next), data->stat.version,
                            Guarded([this, done, next](Result<ZnodeStat> stat) {
                              if (!stat.ok()) {
                                done(stat.status());
                                return;
                              }
                              epoch_zk_version_ = stat->version;
                              done(next);
                            }));
              }));
}

void Controller::Resign() {
  const bool was_active = active_;
  ++generation_;  // every callback of the abandoned steps is dropped from now on
  std::vector<std::function<void()>> cancels;
  if (running_ && running_->cancel) cancels.push_back(std::move(running_->cancel));
  for (Task& task : queue_) {
    if (task.cancel) cancels.push_back(std::move(task.cancel));
  }
  running_.reset();
  queue_.clear();
  if (pump_timer_ != 0) {
    timers_.Cancel(pump_timer_);
    pump_timer_ = 0;
  }
  if (was_active) {
    // onControllerResignation: stop the channel to every broker.
    for (BrokerId broker : live_brokers_) channel_.RemoveBroker(broker);
  }
  active_ = false;
  live_brokers_.clear();
  endpoints_.clear();
  shutting_down_.clear();
  topics_.clear();
  topic_unclean_.clear();
  partitions_.clear();
  uninitialized_.clear();
  last_isr_member_.clear();
  deletions_.clear();
  batch_ = Batch();
  if (was_active) {
    EventFields fields;
    fields["epoch"] = epoch_.value();
    Emit(events_, "controller_resigned", std::move(fields));
  }
  for (auto& cancel : cancels) cancel();
}

void Controller::ResignAndReelect() {
  Resign();
  // ZookeeperLeaderElector.resign deletes /controller when it is ours; its deletion (or the
  // failed read) leads to a new election.
  zk_.GetData(std::string(zk::kControllerPath), /*watch=*/false,
              Guarded([this](Result<ZnodeData> data) {
                if (data.ok() && data->stat.ephemeral_owner == zk_.session_id()) {
                  zk_.Delete(std::string(zk::kControllerPath), data->stat.version, {});
                }
                if (started_) Enqueue("elect", [this](Done next) { Elect(std::move(next)); });
              }));
}

// ---- Failover (onControllerFailover, initializeControllerContext) ------------------------------

void Controller::LoadLiveBrokers(std::function<void(std::set<BrokerId> ids)> done) {
  zk_.GetChildren(std::string(zk::kBrokerIdsPath), /*watch=*/true,
                  Guarded([done](Result<std::vector<std::string>> children) {
                    std::set<BrokerId> ids;
                    if (children.ok()) {
                      for (const std::string& name : *children) {
                        Result<BrokerId> id = zk::ParseBrokerIdNode(name);
                        if (id.ok()) ids.insert(*id);
                      }
                    }
                    done(std::move(ids));
                  }));
}

void Controller::ReadRegistrations(const std::set<BrokerId>& ids,
                                   std::function<void(std::set<BrokerId> registered)> done) {
  auto registered = std::make_shared<std::set<BrokerId>>();
  auto join = std::make_shared<Join>([registered, done] { done(*registered); });
  for (BrokerId id : ids) {
    join->Add();
    zk_.GetData(zk::BrokerIdPath(id), /*watch=*/false,
                Guarded([this, id, registered, join](Result<ZnodeData> data) {
                  if (data.ok()) {
                    Result<zk::BrokerRegistration> broker =
                        zk::DecodeBrokerRegistration(data->data);
                    if (broker.ok()) {
                      BrokerEndpoint endpoint;
                      endpoint.node_id = id;
                      endpoint.host = broker->host;
                      endpoint.port = broker->port;
                      endpoint.rack = broker->rack;
                      endpoints_[id] = std::move(endpoint);
                      registered->insert(id);
                    }
                  }
                  join->Arrive();
                }));
  }
  join->Arrive();
}

void Controller::ReadTopicConfig(const std::string& topic, Done done) {
  // Kafka reads the topic's unclean.leader.election.enable from /config/topics/<t> (over the
  // broker's default) whenever it elects; here when the topic is loaded.
  const std::string path = zk::TopicConfigPath(topic);
  zk_.GetData(path, /*watch=*/false, Guarded([this, topic, path, done](Result<ZnodeData> data) {
                bool unclean = config_.unclean_leader_election_enable;
                if (data.ok()) {
                  Result<zk::TopicConfig> overrides = zk::DecodeTopicConfig(data->data);
                  if (overrides.ok()) {
                    ConfigOverrides list(overrides->begin(), overrides->end());
                    Result<TopicConfig> topic_config = MakeTopicConfig(config_, list, path);
                    if (topic_config.ok()) unclean = topic_config->unclean_leader_election_enable;
                  }
                }
                topic_unclean_[topic] = unclean;
                done();
              }));
}

void Controller::LoadPartition(const TopicPartition& tp, Done done) {
  zk_.GetData(zk::PartitionStatePath(tp.topic, tp.partition), /*watch=*/false,
              Guarded([this, tp, done](Result<ZnodeData> data) {
                auto topic = topics_.find(tp.topic);
                if (topic == topics_.end() || !topic->second.contains(tp.partition)) {
                  done();
                  return;
                }
                Result<zk::PartitionState> state = data.ok()
                                                       ? zk::DecodePartitionState(data->data)
                                                       : Result<zk::PartitionState>(data.status());
                if (state.ok()) {
                  ControllerPartitionState& p = partitions_[tp];
                  p.assigned_replicas = topic->second.at(tp.partition);
                  p.state = *state;
                  p.zk_version = data->stat.version;
                  uninitialized_.erase(tp);
                } else if (data.status().code() == Errc::kNoNode) {
                  uninitialized_.insert(tp);  // NewPartition: no leader was ever chosen
                }
                done();
              }));
}

void Controller::LoadTopic(const std::string& topic, Done done) {
  zk_.GetData(zk::TopicPath(topic), /*watch=*/true,
              Guarded([this, topic, done](Result<ZnodeData> data) {
                if (!data.ok()) {
                  done();
                  return;
                }
                Result<zk::ReplicaAssignment> assignment = zk::DecodeReplicaAssignment(data->data);
                if (!assignment.ok()) {
                  done();
                  return;
                }
                topics_[topic] = *assignment;
                auto join = std::make_shared<Join>(done);
                join->Add();
                ReadTopicConfig(topic, [join] { join->Arrive(); });
                for (const auto& [partition, replicas] : *assignment) {
                  join->Add();
                  LoadPartition(TopicPartition{topic, partition}, [join] { join->Arrive(); });
                }
                join->Arrive();
              }));
}

void Controller::OnControllerFailover(Done done) {
  auto join = std::make_shared<Join>(Guarded([this, done] {
    LoadLiveBrokers([this, done](std::set<BrokerId> ids) {
      ReadRegistrations(ids, [this, done](std::set<BrokerId> registered) {
        live_brokers_ = registered;
        for (BrokerId broker : live_brokers_) channel_.AddBroker(broker, endpoints_.at(broker));
        zk_.GetChildren(
            std::string(zk::kBrokerTopicsPath), /*watch=*/true,
            Guarded([this, done](Result<std::vector<std::string>> topics) {
              auto loaded = std::make_shared<Join>(Guarded([this, done] {
                ReconcileAll(Reason::kControllerFailover, [this, done] {
                  // ReplicaStateMachine.startup: every live replica hears its partitions' state;
                  // then UpdateMetadata to every live broker.
                  for (const auto& [tp, p] : partitions_) AddLeaderAndIsrToLiveReplicas(tp, false);
                  batch_.update_metadata = true;
                  SendBatch();
                  HandleDeleteTopics([this, done] { HandleIsrChangeNotifications(done); });
                });
              }));
              if (topics.ok()) {
                for (const std::string& topic : *topics) {
                  loaded->Add();
                  LoadTopic(topic, [loaded] { loaded->Arrive(); });
                }
              }
              loaded->Arrive();
            }));
      });
    });
  }));
  // The broker made these when it started (setupCommonPaths); a cluster whose broker is older
  // may not have them, and a child watch needs the node.
  for (std::string_view path : {zk::kBrokerIdsPath, zk::kBrokerTopicsPath, zk::kDeleteTopicsPath,
                                zk::kIsrChangeNotificationPath}) {
    join->Add();
    EnsurePersistentPath(zk_, std::string(path), Guarded([join](Status) { join->Arrive(); }));
  }
  join->Arrive();
}

// ---- Requests (ControllerBrokerRequestBatch) ---------------------------------------------------

std::vector<BrokerEndpoint> Controller::LiveBrokerEndpoints() const {
  std::vector<BrokerEndpoint> endpoints;
  for (BrokerId broker : live_brokers_) {
    auto it = endpoints_.find(broker);
    if (it != endpoints_.end()) endpoints.push_back(it->second);
  }
  return endpoints;
}

void Controller::SendLeaderAndIsr(BrokerId broker,
                                  const std::map<TopicPartition, bool>& partitions) {
  LeaderAndIsrRequest request;
  request.controller_id = id_;
  request.controller_epoch = epoch_;
  std::set<BrokerId> leaders;
  for (const auto& [tp, is_new] : partitions) {
    auto it = partitions_.find(tp);
    if (it == partitions_.end()) continue;
    const ControllerPartitionState& p = it->second;
    LeaderAndIsrPartitionState state;
    state.tp = tp;
    state.controller_epoch = p.state.controller_epoch;
    state.leader = p.state.leader;
    state.leader_epoch = p.state.leader_epoch;
    state.isr = p.state.isr;
    state.zk_version = p.zk_version;
    state.replicas = p.assigned_replicas;
    state.is_new = is_new;
    request.partition_states.push_back(std::move(state));
    if (p.state.leader != zk::kNoLeader) leaders.insert(p.state.leader);
  }
  if (request.partition_states.empty()) return;
  for (BrokerId leader : leaders) {
    auto it = endpoints_.find(leader);
    if (live_brokers_.contains(leader) && it != endpoints_.end()) {
      request.live_leaders.push_back(it->second);
    }
  }
  channel_.Send(broker, std::move(request), {});
}

void Controller::SendUpdateMetadataToAll() {
  UpdateMetadataRequest request;
  request.controller_id = id_;
  request.controller_epoch = epoch_;
  for (const auto& [tp, p] : partitions_) {
    UpdateMetadataPartitionState state;
    state.tp = tp;
    state.controller_epoch = p.state.controller_epoch;
    // A topic being deleted is announced with LeaderAndIsr.LeaderDuringDelete (-2): brokers drop
    // it from their metadata cache (TopicDeletionManager.onTopicDeletion).
    state.leader = BeingDeleted(tp.topic) ? kLeaderDuringDelete : p.state.leader;
    state.leader_epoch = p.state.leader_epoch;
    state.isr = p.state.isr;
    state.zk_version = p.zk_version;
    state.replicas = p.assigned_replicas;
    for (BrokerId replica : p.assigned_replicas) {
      if (!live_brokers_.contains(replica)) state.offline_replicas.push_back(replica);
    }
    request.partition_states.push_back(std::move(state));
  }
  request.live_brokers = LiveBrokerEndpoints();
  for (BrokerId broker : live_brokers_) channel_.Send(broker, request, {});
}

void Controller::SendBatch() {
  Batch batch = std::exchange(batch_, Batch());
  if (!active_) return;
  for (const auto& [broker, partitions] : batch.leader_and_isr) {
    if (live_brokers_.contains(broker)) SendLeaderAndIsr(broker, partitions);
  }
  if (batch.update_metadata) SendUpdateMetadataToAll();
  for (const auto& [broker, partitions] : batch.stop_replica) {
    if (!live_brokers_.contains(broker) || partitions.empty()) continue;
    StopReplicaRequest request;
    request.controller_id = id_;
    request.controller_epoch = epoch_;
    request.delete_partitions = false;
    request.partitions.assign(partitions.begin(), partitions.end());
    channel_.Send(broker, std::move(request), {});
  }
}

}  // namespace ksim
