// The controller's life cycle: the event queue, the election (Kafka 0.10's
// ZookeeperLeaderElector), failover (KafkaController.onControllerFailover) and the requests it
// sends (ControllerBrokerRequestBatch), and the ZooKeeper reads every step uses. The watches are
// in listeners.cc, the partition and replica state machines in partition_state_machine.cc, topic
// deletion in topic_deletion.cc. docs/controller.md describes the procedures.
#include "core/controller/controller.h"

#include <algorithm>
#include <utility>

#include "core/base/check.h"
#include "core/base/trace_names.h"

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
  // The leader imbalance check's timer is left to the token (it is pending whenever the
  // controller is active, and the timers may be gone already when a run ends).
}

// ---- The event queue ---------------------------------------------------------------------------

void Controller::Enqueue(std::string name, Step run, std::function<void()> cancel) {
  queue_.push_back(Task{std::move(name), std::move(run), std::move(cancel)});
  SchedulePump();
}

void Controller::EnqueueActive(std::string name, Step run) {
  Enqueue(std::move(name), [this, run = std::move(run)](StepDone done) {
    if (!active_) {
      done(Status::Ok());
      return;
    }
    run(std::move(done));
  });
}

void Controller::EnqueueElection() {
  Enqueue("elect", [this](StepDone done) { Elect(std::move(done)); });
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
  Step run = std::move(running_->run);
  run(Guarded([this](Status status) { OnTaskDone(std::move(status)); }));
}

void Controller::OnTaskDone(Status status) {
  running_.reset();
  // Every other error was traced where it happened and the task stopped there (Kafka logs it and
  // handles the next event). A call that found the session over means this controller is no
  // longer one: resign (the session listener normally has already); the next session elects.
  if (status == Errc::kSessionExpired) {
    Resign();
    return;
  }
  SchedulePump();
}

// ---- ZooKeeper calls for steps ------------------------------------------------------------------

Status Controller::ZkFailed(std::string_view operation, const std::string& path, Status error) {
  KSIM_CHECK(!error.ok());
  Emit(events_, ev::kControllerZkError,
       {{field::kOperation, operation},
        {field::kPath, path},
        {field::kError, ErrcName(error.code())},
        {field::kMessage, error.message()}});
  return error;
}

void Controller::ReadZnode(std::string path, bool watch,
                           std::function<void(std::optional<ZnodeData>)> read, StepDone done) {
  zk_.GetData(path, watch,
              ReadAnswer<ZnodeData>(kOpGetData, path, std::move(read), std::move(done)));
}

void Controller::ReadChildren(std::string path, bool watch,
                              std::function<void(std::optional<std::vector<std::string>>)> read,
                              StepDone done) {
  zk_.GetChildren(
      path, watch,
      ReadAnswer<std::vector<std::string>>(kOpGetChildren, path, std::move(read), std::move(done)));
}

void Controller::DeleteZnode(std::string path, StepDone done) {
  zk_.Delete(path, kAnyVersion, Guarded([this, path, done](Status deleted) {
               // ZkUtils.deletePath: "deleted during connection loss; this is ok".
               if (!deleted.ok() && deleted != Errc::kNoNode) {
                 deleted = ZkFailed(kOpDelete, path, std::move(deleted));
               } else {
                 deleted = Status::Ok();
               }
               if (done) done(std::move(deleted));
             }));
}

// ---- Election (ZookeeperLeaderElector) ---------------------------------------------------------

void Controller::Startup() {
  KSIM_CHECK(!started_);
  started_ = true;
  session_ = zk_.session_id();
  EnqueueElection();
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
        EnqueueElection();
      }
      break;
    case SessionEvent::kDisconnected:
      break;  // the session may still be alive; watches survive the reconnection
  }
}

void Controller::Elect(StepDone done) {
  if (active_) {
    CheckStillController(std::move(done));
    return;
  }
  // A create whose answer was lost is issued again (RetryingCoordination) and then finds
  // NODEEXISTS: the read below tells whether the registration is ours.
  const std::string path(zk::kControllerPath);
  const std::string registration = zk::EncodeControllerRegistration({id_, clock_.NowMs()});
  zk_.Create(path, registration, CreateMode::kEphemeral,
             Guarded([this, path, done](Result<std::string> created) {
               if (created.ok()) {
                 known_controller_ = id_;
                 WatchController();
                 OnControllerRegistered(done);
               } else if (created.status() == Errc::kNodeExists) {
                 ReadController(done);  // someone is controller: who, and watch it
               } else {
                 done(ZkFailed(kOpCreate, path, created.status()));
               }
             }));
}

void Controller::ReadController(StepDone done) {
  const std::string path(zk::kControllerPath);
  zk_.GetData(
      path, /*watch=*/true, Guarded([this, path, done](Result<ZnodeData> data) {
        if (!data.ok()) {
          if (data.status() != Errc::kNoNode) {
            done(ZkFailed(kOpGetData, path, data.status()));
            return;
          }
          // "A leader has been elected but just resigned, this will result in another
          // round of election" (no watch is left on a missing node: elect again now).
          EnqueueElection();
          done(Status::Ok());
          return;
        }
        Result<zk::ControllerRegistration> controller =
            zk::DecodeControllerRegistration(data->data);
        if (!controller.ok()) {
          known_controller_ = kNoBroker;
          done(ZkFailed(kOpGetData, path, controller.status()));
          return;
        }
        known_controller_ = controller->broker_id;
        if (controller->broker_id == id_ && data->stat.ephemeral_owner == zk_.session_id()) {
          OnControllerRegistered(done);  // our create went through
          return;
        }
        done(Status::Ok());
      }));
}

void Controller::WatchController() {
  // Watch our own registration: its deletion makes us resign (handleDataDeleted). Absent already,
  // the watch fires on the next registration, which makes us check again.
  const std::string path(zk::kControllerPath);
  zk_.Exists(path, /*watch=*/true, Guarded([this, path](Result<std::optional<ZnodeStat>> stat) {
               if (!stat.ok()) (void)ZkFailed(kOpExists, path, stat.status());
             }));
}

void Controller::CheckStillController(StepDone done) {
  const std::string path(zk::kControllerPath);
  zk_.GetData(path, /*watch=*/true, Guarded([this, path, done](Result<ZnodeData> data) {
                if (data.ok()) {
                  Result<zk::ControllerRegistration> controller =
                      zk::DecodeControllerRegistration(data->data);
                  if (controller.ok() && controller->broker_id == id_ &&
                      data->stat.ephemeral_owner == zk_.session_id()) {
                    done(Status::Ok());
                    return;
                  }
                  known_controller_ = controller.ok() ? controller->broker_id : kNoBroker;
                } else if (data.status() != Errc::kNoNode) {
                  done(ZkFailed(kOpGetData, path, data.status()));
                  return;
                }
                // Deleted or taken over: onControllerResignation, then elect again.
                Resign();
                if (started_) EnqueueElection();
              }));
}

void Controller::OnControllerRegistered(StepDone done) {
  if (active_) {
    done(Status::Ok());
    return;
  }
  InOrder({
              [this](StepDone next) { IncrementControllerEpoch(std::move(next)); },
              [this](StepDone next) {
                active_ = true;
                Emit(events_, ev::kControllerElected, {{field::kEpoch, epoch_.value()}});
                next(Status::Ok());
              },
              [this](StepDone next) { OnControllerFailover(std::move(next)); },
          },
          Guarded([this, done](Status status) {
            if (!status.ok() && status != Errc::kSessionExpired) {
              // ZookeeperLeaderElector.elect: "Error while electing or becoming leader" (traced
              // where it happened; a failed epoch write is "Controller moved to another broker"),
              // then resign().
              ResignAndReelect();
              return;
            }
            done(std::move(status));
          }));
}

void Controller::IncrementControllerEpoch(StepDone done) {
  // KafkaController.incrementControllerEpoch: a conditional write on the version read; the first
  // controller ever creates /controller_epoch with 1.
  const std::string path(zk::kControllerEpochPath);
  zk_.GetData(path, /*watch=*/false, Guarded([this, path, done](Result<ZnodeData> data) {
                if (!data.ok()) {
                  if (data.status() == Errc::kNoNode) {
                    CreateControllerEpoch(done);
                  } else {
                    done(ZkFailed(kOpGetData, path, data.status()));
                  }
                  return;
                }
                Result<ControllerEpoch> current = zk::DecodeControllerEpoch(data->data);
                if (!current.ok()) {
                  done(ZkFailed(kOpGetData, path, current.status()));
                  return;
                }
                const ControllerEpoch next = *current + 1;
                const int32_t read_version = data->stat.version;
                KSIM_CHECK(read_version != kAnyVersion);  // conditional on the version read
                zk_.SetData(path, zk::EncodeControllerEpoch(next), read_version,
                            Guarded([this, path, done, next](Result<ZnodeStat> stat) {
                              if (!stat.ok()) {
                                // BADVERSION: another controller wrote it since the read.
                                done(ZkFailed(kOpSetData, path, stat.status()));
                                return;
                              }
                              epoch_ = next;
                              epoch_zk_version_ = stat->version;
                              done(Status::Ok());
                            }));
              }));
}

void Controller::CreateControllerEpoch(StepDone done) {
  const std::string path(zk::kControllerEpochPath);
  const ControllerEpoch first{1};
  zk_.Create(path, zk::EncodeControllerEpoch(first), CreateMode::kPersistent,
             Guarded([this, path, done, first](Result<std::string> created) {
               if (created.ok()) {
                 epoch_ = first;
                 epoch_zk_version_ = 0;
                 done(Status::Ok());
               } else if (created.status() == Errc::kNodeExists) {
                 IncrementControllerEpoch(done);  // created meanwhile: read it
               } else {
                 done(ZkFailed(kOpCreate, path, created.status()));
               }
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
  if (rebalance_timer_ != 0) {
    // onControllerResignation: autoRebalanceScheduler.shutdown().
    timers_.Cancel(rebalance_timer_);
    rebalance_timer_ = 0;
  }
  if (was_active) {
    // onControllerResignation: stop the channel to every broker.
    for (BrokerId broker : live_brokers_) channel_.RemoveBroker(broker);
  }
  active_ = false;
  live_brokers_.clear();
  endpoints_.clear();
  registrations_.clear();
  shutting_down_.clear();
  topics_.clear();
  topic_unclean_.clear();
  partitions_.clear();
  uninitialized_.clear();
  last_isr_member_.clear();
  deletions_.clear();
  preferred_elections_.clear();
  batch_ = Batch();
  if (was_active) Emit(events_, ev::kControllerResigned, {{field::kEpoch, epoch_.value()}});
  for (auto& cancel : cancels) cancel();
}

void Controller::ResignAndReelect() {
  Resign();
  // ZookeeperLeaderElector.resign deletes /controller when it is ours; its deletion (or the
  // failed read) leads to a new election.
  const std::string path(zk::kControllerPath);
  zk_.GetData(path, /*watch=*/false, Guarded([this, path](Result<ZnodeData> data) {
                if (data.ok() && data->stat.ephemeral_owner == zk_.session_id()) {
                  zk_.Delete(path, data->stat.version, Guarded([this, path](Status deleted) {
                               if (!deleted.ok() && deleted != Errc::kNoNode) {
                                 (void)ZkFailed(kOpDelete, path, std::move(deleted));
                               }
                             }));
                } else if (!data.ok() && data.status() != Errc::kNoNode) {
                  (void)ZkFailed(kOpGetData, path, data.status());
                }
                if (started_) EnqueueElection();
              }));
}

// ---- Failover (onControllerFailover, initializeControllerContext) ------------------------------

void Controller::OnControllerFailover(StepDone done) {
  InOrder({
              [this](StepDone next) { EnsureWatchedPaths(std::move(next)); },
              [this](StepDone next) { LoadLiveBrokers(std::move(next)); },
              [this](StepDone next) { LoadTopics(std::move(next)); },
              [this](StepDone next) { ReconcileAll(Reason::kControllerFailover, std::move(next)); },
              [this](StepDone next) {
                SendFailoverRequests();
                next(Status::Ok());
              },
              // maybeTriggerPreferredReplicaElection, then the partition-rebalance-thread's
              // first check 5 s from now.
              [this](StepDone next) { HandlePreferredReplicaElection(std::move(next)); },
              [this](StepDone next) {
                if (config_.auto_leader_rebalance_enable) {
                  ScheduleRebalanceCheck(kFirstRebalanceCheckDelayMs * kUsPerMs);
                }
                next(Status::Ok());
              },
              [this](StepDone next) { HandleDeleteTopics(std::move(next)); },
              [this](StepDone next) { HandleIsrChangeNotifications(std::move(next)); },
          },
          std::move(done));
}

void Controller::EnsureWatchedPaths(StepDone done) {
  // The broker made these when it started (setupCommonPaths); a cluster whose broker is older
  // may not have them, and a child watch needs the node.
  static constexpr std::string_view kPaths[] = {zk::kBrokerIdsPath, zk::kBrokerTopicsPath,
                                                zk::kDeleteTopicsPath,
                                                zk::kIsrChangeNotificationPath};
  ForEach(
      kPaths,
      [this](std::string_view path, StepDone next) {
        EnsurePersistentPath(zk_, std::string(path), Guarded([this, path, next](Status status) {
                               if (!status.ok()) {
                                 status = ZkFailed(kOpCreate, std::string(path), std::move(status));
                               }
                               next(std::move(status));
                             }));
      },
      std::move(done));
}

void Controller::LoadLiveBrokers(StepDone done) {
  struct Brokers {
    std::set<BrokerId> ids;
    std::set<BrokerId> registered;
  };
  auto brokers = std::make_shared<Brokers>();
  InOrder({
              [this, brokers](StepDone next) { ReadBrokerIds(&brokers->ids, std::move(next)); },
              [this, brokers](StepDone next) {
                ReadRegistrations(brokers->ids, &brokers->registered, std::move(next));
              },
              [this, brokers](StepDone next) {
                live_brokers_ = brokers->registered;
                for (BrokerId broker : live_brokers_)
                  channel_.AddBroker(broker, endpoints_.at(broker));
                next(Status::Ok());
              },
          },
          std::move(done));
}

void Controller::ReadBrokerIds(std::set<BrokerId>* ids, StepDone done) {
  // No /brokers/ids: no broker is registered (ZkUtils.getChildrenParentMayNotExist).
  ReadChildren(
      std::string(zk::kBrokerIdsPath), /*watch=*/true,
      [ids](std::optional<std::vector<std::string>> children) {
        ids->clear();
        for (const std::string& name : children.value_or(std::vector<std::string>())) {
          Result<BrokerId> id = zk::ParseBrokerIdNode(name);
          if (id.ok()) ids->insert(*id);
        }
      },
      std::move(done));
}

void Controller::ReadRegistrations(const std::set<BrokerId>& ids, std::set<BrokerId>* registered,
                                   StepDone done) {
  ForEach(
      ids,
      [this, registered](BrokerId id, StepDone next) {
        const std::string path = zk::BrokerIdPath(id);
        ReadZnode(
            path, /*watch=*/false,
            [this, id, path, registered](std::optional<ZnodeData> data) {
              if (!data) return;  // gone meanwhile: it is not live (getBrokerInfo is None)
              Result<zk::BrokerRegistration> broker = zk::DecodeBrokerRegistration(data->data);
              if (!broker.ok()) {
                (void)ZkFailed(kOpGetData, path, broker.status());
                return;
              }
              BrokerEndpoint endpoint;
              endpoint.node_id = id;
              endpoint.host = broker->host;
              endpoint.port = broker->port;
              endpoint.rack = broker->rack;
              endpoints_[id] = std::move(endpoint);
              registrations_[id] = data->stat.czxid;
              registered->insert(id);
            },
            std::move(next));
      },
      std::move(done));
}

void Controller::LoadTopics(StepDone done) {
  auto names = std::make_shared<std::vector<std::string>>();
  InOrder({
              [this, names](StepDone next) {
                ReadChildren(
                    std::string(zk::kBrokerTopicsPath), /*watch=*/true,
                    [names](std::optional<std::vector<std::string>> children) {
                      *names = children.value_or(std::vector<std::string>());
                    },
                    std::move(next));
              },
              [this, names](StepDone next) {
                ForEach(
                    *names,
                    [this](const std::string& topic, StepDone loaded) {
                      LoadTopic(topic, std::move(loaded));
                    },
                    std::move(next));
              },
          },
          std::move(done));
}

void Controller::LoadTopic(const std::string& topic, StepDone done) {
  // The assignment (data watch: AddPartitionsListener), then the topic's configuration and every
  // partition's state.
  const std::string path = zk::TopicPath(topic);
  InOrder(
      {
          [this, topic, path](StepDone next) {
            ReadZnode(
                path, /*watch=*/true,
                [this, topic, path](std::optional<ZnodeData> data) {
                  if (!data) return;  // deleted meanwhile: the topic change forgets it
                  Result<zk::ReplicaAssignment> assignment =
                      zk::DecodeReplicaAssignment(data->data);
                  if (!assignment.ok()) {
                    (void)ZkFailed(kOpGetData, path, assignment.status());
                    return;
                  }
                  topics_[topic] = *assignment;
                },
                std::move(next));
          },
          [this, topic](StepDone next) {
            auto it = topics_.find(topic);
            if (it == topics_.end()) {
              next(Status::Ok());
              return;
            }
            std::vector<Step> reads;
            reads.push_back(
                [this, topic](StepDone read) { ReadTopicConfig(topic, std::move(read)); });
            for (const auto& [partition, replicas] : it->second) {
              const TopicPartition tp{topic, partition};
              reads.push_back([this, tp](StepDone read) { LoadPartition(tp, std::move(read)); });
            }
            AllOf(std::move(reads), std::move(next));
          },
      },
      std::move(done));
}

void Controller::ReadTopicConfig(const std::string& topic, StepDone done) {
  // Kafka reads the topic's unclean.leader.election.enable from /config/topics/<t> (over the
  // broker's default) whenever it elects; here when the topic is loaded.
  const std::string path = zk::TopicConfigPath(topic);
  ReadZnode(
      path, /*watch=*/false,
      [this, topic, path](std::optional<ZnodeData> data) {
        bool unclean = config_.unclean_leader_election_enable;
        if (data) {
          Result<zk::TopicConfig> overrides = zk::DecodeTopicConfig(data->data);
          Result<TopicConfig> topic_config =
              overrides.ok()
                  ? MakeTopicConfig(config_, ConfigOverrides(overrides->begin(), overrides->end()),
                                    path)
                  : Result<TopicConfig>(overrides.status());
          if (topic_config.ok()) {
            unclean = topic_config->unclean_leader_election_enable;
          } else {
            (void)ZkFailed(kOpGetData, path, topic_config.status());
          }
        }
        topic_unclean_[topic] = unclean;
      },
      std::move(done));
}

void Controller::LoadPartition(const TopicPartition& tp, StepDone done) {
  const std::string path = zk::PartitionStatePath(tp.topic, tp.partition);
  ReadZnode(
      path, /*watch=*/false,
      [this, tp, path](std::optional<ZnodeData> data) {
        auto topic = topics_.find(tp.topic);
        if (topic == topics_.end() || !topic->second.contains(tp.partition)) return;
        if (!data) {
          uninitialized_.insert(tp);  // NewPartition: no leader was ever chosen
          return;
        }
        Result<zk::PartitionState> state = zk::DecodePartitionState(data->data);
        if (!state.ok()) {
          (void)ZkFailed(kOpGetData, path, state.status());
          return;
        }
        ControllerPartitionState& p = partitions_[tp];
        p.assigned_replicas = topic->second.at(tp.partition);
        p.state = *state;
        p.zk_version = data->stat.version;
        uninitialized_.erase(tp);
      },
      std::move(done));
}

void Controller::SendFailoverRequests() {
  // ReplicaStateMachine.startup: every live replica hears its partitions' state; then
  // UpdateMetadata to every live broker.
  for (const auto& [tp, p] : partitions_) AddLeaderAndIsrToLiveReplicas(tp, false);
  UpdateMetadataForAll();
  SendBatch();
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

void Controller::UpdateMetadataForAll() {
  batch_.update_metadata = true;
  batch_.update_metadata_all = true;
}

void Controller::SendUpdateMetadata(bool all, const std::set<TopicPartition>& named) {
  UpdateMetadataRequest request;
  request.controller_id = id_;
  request.controller_epoch = epoch_;
  auto add = [&](const TopicPartition& tp, const ControllerPartitionState& p) {
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
  };
  if (all || !deletions_.empty()) {
    // Every partition, or those named and every partition of a topic being deleted.
    for (const auto& [tp, p] : partitions_) {
      if (all || named.contains(tp) || BeingDeleted(tp.topic)) add(tp, p);
    }
  } else {
    // The named partitions alone, in the same order (the set's is the map's), found one by one:
    // an election of one partition (each of the leader imbalance check's, as 0.10-2.0 elect
    // them) announces it without a walk over every partition of the cluster.
    for (const TopicPartition& tp : named) {
      if (auto it = partitions_.find(tp); it != partitions_.end()) add(it->first, it->second);
    }
  }
  request.live_brokers = LiveBrokerEndpoints();
  // A copy for each live broker but the last, which takes the request itself (thousands of
  // partitions' states, at a leader election's every announcement to the whole cluster).
  for (auto it = live_brokers_.begin(); it != live_brokers_.end(); ++it) {
    const bool last = std::next(it) == live_brokers_.end();
    channel_.Send(*it, last ? Message(std::move(request)) : Message(request), {});
  }
}

void Controller::SendBatch() {
  Batch batch = std::exchange(batch_, Batch());
  if (!active_) return;
  for (const auto& [broker, partitions] : batch.leader_and_isr) {
    if (live_brokers_.contains(broker)) SendLeaderAndIsr(broker, partitions);
  }
  if (batch.update_metadata) {
    SendUpdateMetadata(batch.update_metadata_all, batch.update_metadata_partitions);
  }
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
