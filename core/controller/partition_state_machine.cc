// The controller's partition and replica state machines (Kafka 0.10's PartitionStateMachine and
// ReplicaStateMachine, reduced to what they write): initializing new partitions, electing leaders
// for partitions without a live one, removing dead or departing replicas from ISRs, ISR change
// notifications and controlled shutdown (KafkaController.shutdownBroker).
#include <algorithm>
#include <utility>

#include "core/base/check.h"
#include "core/base/trace_names.h"
#include "core/controller/controller.h"

namespace ksim {
namespace {

// A conditional state write that keeps failing with BADVERSION gives up after this many tries
// (a leader writing ISR changes at the same moment loses at most a few races).
constexpr int kMaxStateWriteAttempts = 10;

// LeaderAndIsr.LeaderDuringDelete is -2; offline is -1 (zk::kNoLeader).

bool Contains(const std::vector<BrokerId>& list, BrokerId broker) {
  return std::find(list.begin(), list.end(), broker) != list.end();
}

std::vector<int32_t> BrokerList(const std::vector<BrokerId>& brokers) {
  std::vector<int32_t> list;
  list.reserve(brokers.size());
  for (BrokerId broker : brokers) list.push_back(broker.value());
  return list;
}

std::string_view ReasonName(uint8_t reason) {
  static constexpr std::string_view kNames[] = {"new_partition",
                                                "controller_failover",
                                                "broker_failure",
                                                "broker_startup",
                                                "controlled_shutdown",
                                                "auto_rebalance",
                                                "preferred_replica_election"};
  return kNames[reason];
}

}  // namespace

std::set<BrokerId> Controller::ElectableBrokers() const {
  // ControllerContext.liveBrokerIds: registered and not shutting down.
  std::set<BrokerId> brokers;
  for (BrokerId broker : live_brokers_) {
    if (!shutting_down_.contains(broker)) brokers.insert(broker);
  }
  return brokers;
}

const ElectionPolicy& Controller::PolicyFor(const std::string& topic) {
  std::string name = options_.election_policy;
  if (name.empty()) {
    auto it = topic_unclean_.find(topic);
    const bool unclean =
        it != topic_unclean_.end() ? it->second : config_.unclean_leader_election_enable;
    name = std::string(KafkaElectionPolicyName(unclean));
  }
  auto it = policies_.find(name);
  if (it == policies_.end()) {
    Result<std::unique_ptr<ElectionPolicy>> policy = MakeElectionPolicy(name);
    KSIM_CHECK_MSG(policy.ok(), policy.status().ToString().c_str());
    it = policies_.emplace(name, std::move(*policy)).first;
  }
  return *it->second;
}

bool Controller::KeepsLastIsrMember(const std::string& topic) {
  // 0.10.0.1 to 1.0: "Retaining last ISR %d of partition %s since unclean leader election is
  // disabled", else the ISR written is empty. 1.1's ReplicaStateMachine.doRemoveReplicasFromIsr
  // keeps an ISR of one whatever the setting.
  if (config_.release >= KafkaRelease::k1_1) return true;
  return PolicyFor(topic).name() !=
         KafkaElectionPolicyName(/*unclean_leader_election_enable=*/true);
}

ElectionInput Controller::MakeInput(const TopicPartition& tp, const ControllerPartitionState& p) {
  ElectionInput input;
  input.partition = ToString(tp);
  input.assigned_replicas = p.assigned_replicas;
  input.live_brokers = ElectableBrokers();
  input.isr = p.state.isr;
  if (p.state.leader != zk::kNoLeader) input.current_leader = p.state.leader;
  auto last = last_isr_member_.find(tp);
  if (last != last_isr_member_.end()) input.last_isr_member = last->second;
  input.random = &random_;
  return input;
}

void Controller::EmitElected(const TopicPartition& tp, const ControllerPartitionState& p,
                             const ElectionResult& result, std::string_view policy, Reason reason) {
  Emit(events_, ev::kLeaderElected,
       {{field::kTopic, tp.topic},
        {field::kPartition, tp.partition.value()},
        {field::kLeader, p.state.leader.value()},
        {field::kEpoch, p.state.leader_epoch.value()},
        {field::kIsr, BrokerList(p.state.isr)},
        {field::kUnclean, result.unclean},
        {field::kPolicy, policy},
        {field::kReason, ReasonName(static_cast<uint8_t>(reason))}});
}

void Controller::EmitOffline(const TopicPartition& tp, const std::vector<BrokerId>& isr) {
  Emit(events_, ev::kPartitionOffline,
       {{field::kTopic, tp.topic},
        {field::kPartition, tp.partition.value()},
        {field::kIsr, BrokerList(isr)}});
}

// ---- State writes -------------------------------------------------------------------------------

void Controller::ReadPartitionState(const TopicPartition& tp, std::function<void(Status)> done) {
  zk_.GetData(zk::PartitionStatePath(tp.topic, tp.partition), /*watch=*/false,
              Guarded([this, tp, done](Result<ZnodeData> data) {
                if (!data.ok()) {
                  done(data.status());
                  return;
                }
                Result<zk::PartitionState> state = zk::DecodePartitionState(data->data);
                if (!state.ok()) {
                  done(state.status());
                  return;
                }
                auto it = partitions_.find(tp);
                if (it == partitions_.end()) {
                  auto topic = topics_.find(tp.topic);
                  if (topic == topics_.end() || !topic->second.contains(tp.partition)) {
                    done(Status(Errc::kUnknownTopicOrPartition, ToString(tp)));
                    return;
                  }
                  it = partitions_.emplace(tp, ControllerPartitionState()).first;
                  it->second.assigned_replicas = topic->second.at(tp.partition);
                  uninitialized_.erase(tp);
                }
                it->second.state = *state;
                it->second.zk_version = data->stat.version;
                done(Status::Ok());
              }));
}

void Controller::CheckStateWrite(const ControllerPartitionState& read,
                                 const zk::PartitionState& next) const {
  // TigerBeetle's habit: assert before the write what the readers of the write rely on. Brokers
  // ignore a LeaderAndIsr whose leader epoch is not newer than theirs, and KIP-101 truncation
  // keys on it: every write of the controller moves it forward.
  KSIM_CHECK(next.leader_epoch > read.state.leader_epoch);
  // The ISR empties only when every member is dead, under unclean election before 1.1 (the last
  // member stays recorded otherwise), and then no one leads...
  if (next.isr.empty()) {
    KSIM_CHECK(config_.release < KafkaRelease::k1_1);
    KSIM_CHECK(next.leader == zk::kNoLeader);
  }
  // ...and holds assigned replicas only.
  for (BrokerId member : next.isr) KSIM_CHECK(Contains(read.assigned_replicas, member));
  // The write carries this controller's epoch, which never falls below the one read.
  KSIM_CHECK(next.controller_epoch == epoch_);
  KSIM_CHECK(read.state.controller_epoch <= epoch_);
  // It is conditional on the version read (ReplicationUtils.updateLeaderAndIsr), never "any".
  KSIM_CHECK(read.zk_version != kAnyVersion);
}

void Controller::UpdatePartitionState(const TopicPartition& tp, StateChange change,
                                      StateWritten done, int attempt) {
  auto it = partitions_.find(tp);
  if (it == partitions_.end()) {
    done(false);
    return;
  }
  const std::string path = zk::PartitionStatePath(tp.topic, tp.partition);
  const ControllerPartitionState& read = it->second;
  if (read.state.controller_epoch > epoch_) {
    // PartitionStateMachine.electLeaderForPartition: "aborted leader election ... since the
    // LeaderAndIsr path was already written by another controller. This probably means that the
    // current controller went through a soft failure and another controller was elected".
    done(ZkFailed(kOpSetData, path,
                  Status(Errc::kStaleControllerEpoch,
                         "written by controller epoch " +
                             std::to_string(read.state.controller_epoch.value()) +
                             ", this controller's is " + std::to_string(epoch_.value()))));
    return;
  }
  std::optional<zk::PartitionState> next = change(read);
  if (!next) {
    done(false);
    return;
  }
  CheckStateWrite(read, *next);
  zk_.SetData(
      path, zk::EncodePartitionState(*next), read.zk_version,
      Guarded([this, tp, path, change, done, attempt, next](Result<ZnodeStat> stat) {
        auto it = partitions_.find(tp);
        if (it == partitions_.end()) {
          done(false);  // forgotten meanwhile (the topic was deleted)
          return;
        }
        if (stat.ok()) {
          it->second.state = *next;
          it->second.zk_version = stat->version;
          done(true);
          return;
        }
        if (stat.status() != Errc::kBadVersion) {
          done(ZkFailed(kOpSetData, path, stat.status()));
          return;
        }
        if (attempt + 1 >= kMaxStateWriteAttempts) {
          done(ZkFailed(
              kOpSetData, path,
              Status(Errc::kBadVersion, "gave up after " + std::to_string(kMaxStateWriteAttempts) +
                                            " conditional writes")));
          return;
        }
        // BADVERSION: someone (the leader shrinking or expanding its ISR) wrote it
        // meanwhile, or this very write was applied before the connection dropped and its
        // retry found the version it made (ReplicationUtils.checkLeaderAndIsrZkData).
        // Either way: read it again and decide again from what is there now.
        ReadPartitionState(tp, [this, tp, path, change, done, attempt, next](Status read) mutable {
          if (!read.ok()) {
            done(ZkFailed(kOpGetData, path, std::move(read)));
            return;
          }
          if (partitions_.at(tp).state == *next) {
            done(true);  // our write went through before the connection dropped
            return;
          }
          UpdatePartitionState(tp, std::move(change), std::move(done), attempt + 1);
        });
      }));
}

// ---- New partitions (NewPartition -> OnlinePartition) -------------------------------------------

void Controller::InitializePartition(const TopicPartition& tp, StepDone done) {
  auto topic = topics_.find(tp.topic);
  if (topic == topics_.end() || !topic->second.contains(tp.partition)) {
    done(Status::Ok());
    return;
  }
  ControllerPartitionState initial;
  initial.assigned_replicas = topic->second.at(tp.partition);
  ElectionInput input = MakeInput(tp, initial);
  ElectionResult result = InitialLeaderAndIsr(input);
  if (result.outcome != ElectionOutcome::kElected) {
    // "No assigned replica is alive": it stays new until one registers.
    EmitOffline(tp, {});
    done(Status::Ok());
    return;
  }
  initial.state.leader = *result.leader;
  initial.state.leader_epoch = LeaderEpoch(0);
  initial.state.isr = result.isr;
  initial.state.controller_epoch = epoch_;
  // The first state: nothing was read (the partition has no state known), the ISR is assigned
  // replicas, leader epoch 0.
  KSIM_CHECK(!partitions_.contains(tp));
  KSIM_CHECK(!initial.state.isr.empty());
  for (BrokerId member : initial.state.isr) KSIM_CHECK(Contains(initial.assigned_replicas, member));
  const std::string path = zk::PartitionStatePath(tp.topic, tp.partition);
  CreateWithParents(zk_, path, zk::EncodePartitionState(initial.state), CreateMode::kPersistent,
                    Guarded([this, tp, path, initial, result, done](Result<std::string> created) {
                      if (created.ok()) {
                        uninitialized_.erase(tp);
                        ControllerPartitionState& p = partitions_[tp];
                        p = initial;
                        p.zk_version = 0;
                        EmitElected(tp, p, result, "initial", Reason::kNewPartition);
                        AddLeaderAndIsr(tp, result.recipients, /*is_new=*/true);
                        done(Status::Ok());
                      } else if (created.status() == Errc::kNodeExists) {
                        OnPartitionExists(tp, initial.state, done);
                      } else {
                        // Kafka's handleStateChange logs the failed state change and goes on.
                        (void)ZkFailed(kOpCreate, path, created.status());
                        done(Status::Ok());
                      }
                    }));
}

void Controller::OnPartitionExists(const TopicPartition& tp, const zk::PartitionState& ours,
                                   StepDone done) {
  // The state znode exists: our create was applied before the connection dropped (its retry found
  // it), or another controller made it. Either way the controller takes what is there (Kafka logs
  // "LeaderAndIsr path already exists" and leaves the partition new; ksim announces the state).
  const std::string path = zk::PartitionStatePath(tp.topic, tp.partition);
  ReadPartitionState(tp, [this, tp, path, ours, done](Status read) {
    if (read == Errc::kNoNode || read == Errc::kUnknownTopicOrPartition) {
      done(Status::Ok());  // deleted meanwhile, with its topic
      return;
    }
    if (!read.ok()) {
      (void)ZkFailed(kOpGetData, path, std::move(read));
      done(Status::Ok());
      return;
    }
    const zk::PartitionState& found = partitions_.at(tp).state;
    if (found.controller_epoch != ours.controller_epoch) {
      (void)ZkFailed(
          kOpCreate, path,
          Status(Errc::kNodeExists, "partition state already written by controller epoch " +
                                        std::to_string(found.controller_epoch.value())));
    }
    AddLeaderAndIsrToLiveReplicas(tp, /*is_new=*/true);
    done(Status::Ok());
  });
}

// ---- Failures and returns (OfflinePartition -> OnlinePartition, OnlineReplica -> Offline) -------

void Controller::ReconcilePartition(const TopicPartition& tp, Reason reason,
                                    const std::set<BrokerId>& failed, StepDone done) {
  enum class Kind { kNone, kElected, kOffline, kIsrShrink };
  struct Outcome {
    Kind kind = Kind::kNone;
    ElectionResult result;
    std::string policy;
  };
  auto outcome = std::make_shared<Outcome>();
  StateChange change = [this, tp, outcome, failed](
                           const ControllerPartitionState& p) -> std::optional<zk::PartitionState> {
    *outcome = Outcome();
    const zk::PartitionState& s = p.state;
    // onBrokerFailure moves the replicas of the brokers that just died to OfflineReplica
    // (KafkaController.removeReplicaFromIsr); nothing else leaves an ISR here. A broker found dead
    // at a failover or still dead at a startup stays until the leader shrinks its ISR
    // (0.10.0.1's PartitionStateMachine.initializePartitionState and
    // triggerOnlinePartitionStateChange elect only partitions without a live leader; the same at
    // 2.1.0).
    std::vector<BrokerId> remaining_isr;
    for (BrokerId member : s.isr) {
      if (!failed.contains(member)) remaining_isr.push_back(member);
    }
    if (s.leader != zk::kNoLeader && live_brokers_.contains(s.leader)) {
      // Online: KafkaController.removeReplicaFromIsr for each failed follower, epoch + 1.
      if (remaining_isr.size() == s.isr.size() || remaining_isr.empty()) return std::nullopt;
      outcome->kind = Kind::kIsrShrink;
      return zk::PartitionState{s.leader, s.leader_epoch + 1, remaining_isr, epoch_};
    }
    // Offline: the election policy (OfflinePartitionLeaderSelector and its variants).
    const ElectionPolicy& policy = PolicyFor(tp.topic);
    outcome->policy = std::string(policy.name());
    outcome->result = policy.Elect(MakeInput(tp, p));
    if (outcome->result.outcome == ElectionOutcome::kElected) {
      outcome->kind = Kind::kElected;
      return zk::PartitionState{*outcome->result.leader, s.leader_epoch + 1, outcome->result.isr,
                                epoch_};
    }
    // No leader: leader -1, the dead members leave the ISR. The last member stays (so that it
    // can lead again when it returns) unless the ISR may empty (KeepsLastIsrMember: unclean
    // election before 1.1). When several die at once the one kept is the old leader if it was
    // in the ISR (it had every acknowledged record), else the first member.
    const bool keep_last = KeepsLastIsrMember(tp.topic);
    std::vector<BrokerId> isr = remaining_isr;
    if (isr.empty() && !s.isr.empty() && keep_last) {
      isr = {Contains(s.isr, s.leader) ? s.leader : s.isr.front()};
    }
    if (s.leader == zk::kNoLeader && isr == s.isr) return std::nullopt;
    if (isr.empty() && keep_last) return std::nullopt;
    outcome->kind = Kind::kOffline;
    return zk::PartitionState{zk::kNoLeader, s.leader_epoch + 1, isr, epoch_};
  };
  UpdatePartitionState(tp, std::move(change),
                       [this, tp, reason, outcome, done](Result<bool> written) {
                         // A failed write was traced; Kafka's handleStateChange logs it and goes on
                         // with the next partition.
                         auto it = partitions_.find(tp);
                         if (!written.ok() || !*written || it == partitions_.end()) {
                           done(Status::Ok());
                           return;
                         }
                         const ControllerPartitionState& p = it->second;
                         switch (outcome->kind) {
                           case Kind::kElected:
                             ++elections_;
                             if (outcome->result.unclean) ++unclean_elections_;
                             last_isr_member_.erase(tp);
                             EmitElected(tp, p, outcome->result, outcome->policy, reason);
                             AddLeaderAndIsr(tp, outcome->result.recipients, false);
                             break;
                           case Kind::kOffline: {
                             bool any_live = false;
                             for (BrokerId member : p.state.isr)
                               any_live = any_live || live_brokers_.contains(member);
                             if (!any_live && !p.state.isr.empty()) {
                               last_isr_member_[tp] = p.state.isr.front();
                             }
                             EmitOffline(tp, p.state.isr);
                             AddLeaderAndIsrToLiveReplicas(tp, false);
                             break;
                           }
                           case Kind::kIsrShrink:
                             AddLeaderAndIsrToLiveReplicas(tp, false);
                             break;
                           case Kind::kNone:
                             break;
                         }
                         done(Status::Ok());
                       });
}

void Controller::ReconcilePartitions(const std::vector<TopicPartition>& partitions, Reason reason,
                                     StepDone done, const std::set<BrokerId>& failed) {
  std::vector<Step> steps;
  for (const TopicPartition& tp : partitions) {
    if (BeingDeleted(tp.topic)) continue;
    steps.push_back([this, tp, reason, failed](StepDone next) {
      if (uninitialized_.contains(tp)) {
        InitializePartition(tp, std::move(next));
      } else {
        ReconcilePartition(tp, reason, failed, std::move(next));
      }
    });
  }
  AllOf(std::move(steps), std::move(done));
}

void Controller::ReconcileAll(Reason reason, StepDone done, const std::set<BrokerId>& failed) {
  std::set<TopicPartition> all(uninitialized_.begin(), uninitialized_.end());
  for (const auto& [tp, p] : partitions_) all.insert(tp);
  ReconcilePartitions(std::vector<TopicPartition>(all.begin(), all.end()), reason, std::move(done),
                      failed);
}

void Controller::AddLeaderAndIsr(const TopicPartition& tp, const std::vector<BrokerId>& recipients,
                                 bool is_new) {
  // addLeaderAndIsrRequestForBrokers: UpdateMetadata to every live broker names the partition.
  if (!recipients.empty()) {
    batch_.update_metadata = true;
    batch_.update_metadata_partitions.insert(tp);
  }
  for (BrokerId broker : recipients) {
    if (!live_brokers_.contains(broker)) continue;
    bool& entry = batch_.leader_and_isr[broker][tp];
    entry = entry || is_new;
  }
}

void Controller::AddLeaderAndIsrToLiveReplicas(const TopicPartition& tp, bool is_new) {
  auto it = partitions_.find(tp);
  if (it == partitions_.end()) return;
  AddLeaderAndIsr(tp, it->second.assigned_replicas, is_new);
}

// ---- ISR change notifications (IsrChangeNotificationListener) -----------------------------------

void Controller::HandleIsrChangeNotifications(StepDone done) {
  // Read every notification, re-read the partitions they name into the cache, UpdateMetadata to
  // every live broker, then delete the notifications read.
  struct Notifications {
    std::vector<std::string> paths;
    std::set<TopicPartition> changed;
  };
  auto notifications = std::make_shared<Notifications>();
  const std::string root(zk::kIsrChangeNotificationPath);
  InOrder(
      {
          [this, notifications, root](StepDone next) {
            ReadChildren(
                root, /*watch=*/true,
                [notifications, root](std::optional<std::vector<std::string>> children) {
                  for (const std::string& name : children.value_or(std::vector<std::string>())) {
                    if (name.starts_with(zk::kIsrChangeNotificationPrefix)) {
                      notifications->paths.push_back(root + "/" + name);
                    }
                  }
                },
                std::move(next));
          },
          [this, notifications](StepDone next) {
            ForEach(
                notifications->paths,
                [this, notifications](const std::string& path, StepDone read) {
                  ReadIsrChangeNotification(path, &notifications->changed, std::move(read));
                },
                std::move(next));
          },
          [this, notifications](StepDone next) {
            ForEach(
                notifications->changed,
                [this](const TopicPartition& tp, StepDone refreshed) {
                  RefreshPartitionState(tp, std::move(refreshed));
                },
                std::move(next));
          },
          [this, notifications](StepDone next) {
            if (!notifications->paths.empty()) {
              // processUpdateNotifications: UpdateMetadata names the partitions notified.
              batch_.update_metadata = batch_.update_metadata || !notifications->changed.empty();
              batch_.update_metadata_partitions.insert(notifications->changed.begin(),
                                                       notifications->changed.end());
              SendBatch();
              // Not waited for: a notification that stays is read again next time (its changes
              // were applied; reading them twice is harmless).
              for (const std::string& path : notifications->paths) DeleteZnode(path, {});
            }
            next(Status::Ok());
          },
      },
      std::move(done));
}

void Controller::ReadIsrChangeNotification(const std::string& path,
                                           std::set<TopicPartition>* changed, StepDone done) {
  ReadZnode(
      path, /*watch=*/false,
      [this, path, changed](std::optional<ZnodeData> data) {
        if (!data) return;  // deleted meanwhile (readDataMaybeNull)
        Result<std::vector<zk::TopicAndPartition>> partitions =
            zk::DecodeIsrChangeNotification(data->data);
        if (!partitions.ok()) {
          // "Invalid topic and partition JSON ... in ZK": the notification is skipped (and
          // deleted with the others).
          (void)ZkFailed(kOpGetData, path, partitions.status());
          return;
        }
        for (const zk::TopicAndPartition& tp : *partitions) {
          changed->insert(TopicPartition{tp.topic, tp.partition});
        }
      },
      std::move(done));
}

void Controller::RefreshPartitionState(const TopicPartition& tp, StepDone done) {
  // KafkaController.updateLeaderAndIsrCache: a partition the controller does not know, or whose
  // state znode is gone, is skipped.
  if (!partitions_.contains(tp)) {
    done(Status::Ok());
    return;
  }
  ReadPartitionState(tp, [this, tp, done](Status read) {
    if (read.ok() || read == Errc::kNoNode) {
      done(Status::Ok());
      return;
    }
    read = ZkFailed(kOpGetData, zk::PartitionStatePath(tp.topic, tp.partition), std::move(read));
    // Unparsable data skips the partition; a failed call ends the step.
    done(read == Errc::kCorruption ? Status::Ok() : std::move(read));
  });
}

// ---- Controlled shutdown (KafkaController.shutdownBroker) ---------------------------------------

void Controller::HandleControlledShutdown(const ControlledShutdownRequest& request,
                                          std::function<void(ControlledShutdownResponse)> done) {
  // The answer goes out once: from the task, or NOT_CONTROLLER when the controller resigns first.
  auto respond = std::make_shared<std::function<void(ControlledShutdownResponse)>>(std::move(done));
  auto once = [respond](ControlledShutdownResponse response) {
    if (!*respond) return;
    auto callback = std::move(*respond);
    *respond = nullptr;
    callback(std::move(response));
  };
  const int32_t correlation_id = request.correlation_id;
  auto not_controller = [once, correlation_id] {
    ControlledShutdownResponse response;
    response.correlation_id = correlation_id;
    response.error_code = Errc::kNotController;
    once(std::move(response));
  };
  if (!active_) {
    not_controller();
    return;
  }
  Enqueue(
      "controlled_shutdown",
      [this, request, once, not_controller](StepDone task_done) {
        if (!active_) {
          not_controller();
          task_done(Status::Ok());
          return;
        }
        ControlledShutdown(request, once, std::move(task_done));
      },
      not_controller);
}

void Controller::ControlledShutdown(const ControlledShutdownRequest& request,
                                    std::function<void(ControlledShutdownResponse)> respond,
                                    StepDone done) {
  const BrokerId broker = request.broker_id;
  ControlledShutdownResponse response;
  response.correlation_id = request.correlation_id;
  if (!live_brokers_.contains(broker)) {
    // Kafka: BrokerNotAvailableException("Broker id <id> does not exist.").
    response.error_code = Errc::kBrokerNotAvailable;
    respond(std::move(response));
    done(Status::Ok());
    return;
  }
  shutting_down_.insert(broker);
  // Each partition with a replica on it: move the leadership away, or take it out of the ISR.
  std::vector<Step> moves;
  for (const auto& entry : partitions_) {
    // A named copy, not a structured binding: the lambdas capture it (clang 14 cannot capture a
    // structured binding).
    const TopicPartition tp = entry.first;
    const ControllerPartitionState& p = entry.second;
    if (BeingDeleted(tp.topic) || !Contains(p.assigned_replicas, broker)) continue;
    if (p.state.leader == broker) {
      if (p.assigned_replicas.size() <= 1) continue;
      moves.push_back([this, tp](StepDone next) { MoveLeadership(tp, std::move(next)); });
    } else {
      batch_.stop_replica[broker].insert(tp);
      moves.push_back(
          [this, tp, broker](StepDone next) { RemoveFromIsr(tp, broker, std::move(next)); });
    }
  }
  // Where it follows, StopReplica (without deleting) leaves before the ISR writes, as in Kafka:
  // "Stop the replica first. The state change below initiates ZK changes which should take some
  // time before which the stop replica request should be completed".
  SendBatch();
  AllOf(std::move(moves), Guarded([this, broker, respond, response, done](Status status) mutable {
          SendBatch();
          // The partitions it still leads (no other ISR member could take over): the broker
          // retries.
          for (const auto& [tp, p] : partitions_) {
            if (p.state.leader == broker && p.assigned_replicas.size() > 1 &&
                !BeingDeleted(tp.topic)) {
              response.partitions_remaining.push_back(tp);
            }
          }
          respond(std::move(response));
          done(std::move(status));
        }));
}

void Controller::MoveLeadership(const TopicPartition& tp, StepDone done) {
  // ControlledShutdownLeaderSelector: a new leader from the ISR minus the departing brokers.
  auto result = std::make_shared<ElectionResult>();
  StateChange change =
      [this, tp,
       result](const ControllerPartitionState& current) -> std::optional<zk::PartitionState> {
    *result = SelectControlledShutdownLeader(MakeInput(tp, current), shutting_down_);
    if (result->outcome != ElectionOutcome::kElected) return std::nullopt;
    return zk::PartitionState{*result->leader, current.state.leader_epoch + 1, result->isr, epoch_};
  };
  UpdatePartitionState(tp, std::move(change), [this, tp, result, done](Result<bool> written) {
    // A failed write was traced; the partition stays led by the departing broker, which the
    // answer reports (the broker retries).
    auto it = partitions_.find(tp);
    if (written.ok() && *written && it != partitions_.end()) {
      ++elections_;
      EmitElected(tp, it->second, *result, "controlled-shutdown", Reason::kControlledShutdown);
      AddLeaderAndIsr(tp, result->recipients, false);
    }
    done(Status::Ok());
  });
}

void Controller::RemoveFromIsr(const TopicPartition& tp, BrokerId broker, StepDone done) {
  // A follower (its StopReplica has left): out of the ISR (OfflineReplica).
  StateChange change =
      [this, broker](const ControllerPartitionState& current) -> std::optional<zk::PartitionState> {
    std::vector<BrokerId> isr;
    for (BrokerId member : current.state.isr) {
      if (member != broker) isr.push_back(member);
    }
    if (isr.size() == current.state.isr.size() || isr.empty()) return std::nullopt;
    zk::PartitionState next = current.state;
    next.isr = std::move(isr);
    next.leader_epoch = current.state.leader_epoch + 1;
    next.controller_epoch = epoch_;
    return next;
  };
  UpdatePartitionState(tp, std::move(change), [this, tp, broker, done](Result<bool> written) {
    // A failed write was traced (KafkaController.removeReplicaFromIsr's caller logs it).
    auto it = partitions_.find(tp);
    if (written.ok() && *written && it != partitions_.end()) {
      std::vector<BrokerId> others;
      for (BrokerId replica : it->second.assigned_replicas) {
        if (replica != broker) others.push_back(replica);
      }
      AddLeaderAndIsr(tp, others, false);
    }
    done(Status::Ok());
  });
}

}  // namespace ksim
