// The controller's partition and replica state machines (Kafka 0.10's PartitionStateMachine and
// ReplicaStateMachine, reduced to what they write): initializing new partitions, electing leaders
// for partitions without a live one, removing dead or departing replicas from ISRs, ISR change
// notifications and controlled shutdown (KafkaController.shutdownBroker).
#include <algorithm>
#include <utility>

#include "core/base/check.h"
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

nlohmann::ordered_json BrokerList(const std::vector<BrokerId>& brokers) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (BrokerId broker : brokers) list.push_back(broker.value());
  return list;
}

std::string_view ReasonName(uint8_t reason) {
  static constexpr std::string_view kNames[] = {"new_partition", "controller_failover",
                                                "broker_failure", "broker_startup",
                                                "controlled_shutdown"};
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
  EventFields fields;
  fields["topic"] = tp.topic;
  fields["partition"] = tp.partition.value();
  fields["leader"] = p.state.leader.value();
  fields["epoch"] = p.state.leader_epoch.value();
  fields["isr"] = BrokerList(p.state.isr);
  fields["unclean"] = result.unclean;
  fields["policy"] = std::string(policy);
  fields["reason"] = std::string(ReasonName(static_cast<uint8_t>(reason)));
  Emit(events_, "leader_elected", std::move(fields));
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

void Controller::UpdatePartitionState(const TopicPartition& tp, StateChange change,
                                      std::function<void(bool written)> done, int attempt) {
  auto it = partitions_.find(tp);
  if (it == partitions_.end()) {
    done(false);
    return;
  }
  std::optional<zk::PartitionState> next = change(it->second);
  if (!next) {
    done(false);
    return;
  }
  KSIM_CHECK(!next->isr.empty());  // the ISR never empties (the last member stays recorded)
  // ReplicationUtils.updateLeaderAndIsr: conditional on the version the controller read.
  zk_.SetData(zk::PartitionStatePath(tp.topic, tp.partition), zk::EncodePartitionState(*next),
              it->second.zk_version,
              Guarded([this, tp, change, done, attempt, next](Result<ZnodeStat> stat) mutable {
                auto it = partitions_.find(tp);
                if (it == partitions_.end()) {
                  done(false);
                  return;
                }
                if (stat.ok()) {
                  it->second.state = *next;
                  it->second.zk_version = stat->version;
                  done(true);
                  return;
                }
                const Errc code = stat.status().code();
                if ((code != Errc::kBadVersion && code != Errc::kConnectionLoss) ||
                    attempt + 1 >= kMaxStateWriteAttempts) {
                  done(false);
                  return;
                }
                // BADVERSION: someone (the leader shrinking or expanding its ISR) wrote it
                // meanwhile. CONNECTIONLOSS: the write may or may not have been applied. Either
                // way: read it again (the read waits for the connection) and decide again from what
                // is there now.
                ReadPartitionState(
                    tp, [this, tp, change, done, attempt, next](Status read) mutable {
                      if (!read.ok()) {
                        done(false);
                        return;
                      }
                      auto it = partitions_.find(tp);
                      if (it != partitions_.end() && it->second.state == *next) {
                        done(true);  // our write went through before the connection dropped
                        return;
                      }
                      UpdatePartitionState(tp, std::move(change), std::move(done), attempt + 1);
                    });
              }));
}

// ---- New partitions (NewPartition -> OnlinePartition) -------------------------------------------

void Controller::InitializePartition(const TopicPartition& tp, Done done) {
  auto topic = topics_.find(tp.topic);
  if (topic == topics_.end() || !topic->second.contains(tp.partition)) {
    done();
    return;
  }
  ControllerPartitionState initial;
  initial.assigned_replicas = topic->second.at(tp.partition);
  ElectionInput input = MakeInput(tp, initial);
  ElectionResult result = InitialLeaderAndIsr(input);
  if (result.outcome != ElectionOutcome::kElected) {
    // "No assigned replica is alive": it stays new until one registers.
    EventFields fields;
    fields["topic"] = tp.topic;
    fields["partition"] = tp.partition.value();
    fields["isr"] = nlohmann::ordered_json::array();
    Emit(events_, "partition_offline", std::move(fields));
    done();
    return;
  }
  initial.state.leader = *result.leader;
  initial.state.leader_epoch = LeaderEpoch(0);
  initial.state.isr = result.isr;
  initial.state.controller_epoch = epoch_;
  CreateWithParents(zk_, zk::PartitionStatePath(tp.topic, tp.partition),
                    zk::EncodePartitionState(initial.state), CreateMode::kPersistent,
                    Guarded([this, tp, initial, result, done](Result<std::string> created) {
                      if (created.ok()) {
                        uninitialized_.erase(tp);
                        ControllerPartitionState& p = partitions_[tp];
                        p = initial;
                        p.zk_version = 0;
                        EmitElected(tp, p, result, "initial", Reason::kNewPartition);
                        AddLeaderAndIsr(tp, result.recipients, /*is_new=*/true);
                        batch_.update_metadata = true;
                        done();
                        return;
                      }
                      const Errc code = created.status().code();
                      if (code != Errc::kNodeExists && code != Errc::kConnectionLoss) {
                        done();
                        return;
                      }
                      // Kafka: "partition already exists": take what is there (after a
                      // CONNECTIONLOSS the create may have been applied: the read tells).
                      ReadPartitionState(tp, [this, tp, done](Status read) {
                        if (read.ok()) {
                          AddLeaderAndIsrToLiveReplicas(tp, /*is_new=*/true);
                          batch_.update_metadata = true;
                        }
                        done();
                      });
                    }));
}

// ---- Failures and returns (OfflinePartition -> OnlinePartition, OnlineReplica -> Offline) -------

void Controller::ReconcilePartition(const TopicPartition& tp, Reason reason, Done done) {
  enum class Kind { kNone, kElected, kOffline, kIsrShrink };
  struct Outcome {
    Kind kind = Kind::kNone;
    ElectionResult result;
    std::string policy;
  };
  auto outcome = std::make_shared<Outcome>();
  StateChange change =
      [this, tp, outcome](const ControllerPartitionState& p) -> std::optional<zk::PartitionState> {
    *outcome = Outcome();
    const zk::PartitionState& s = p.state;
    // Registered brokers (shutting-down ones included) keep their place in the ISR.
    std::vector<BrokerId> live_isr;
    for (BrokerId member : s.isr) {
      if (live_brokers_.contains(member)) live_isr.push_back(member);
    }
    if (s.leader != zk::kNoLeader && live_brokers_.contains(s.leader)) {
      // Online: KafkaController.removeReplicaFromIsr for each dead follower, epoch + 1.
      if (live_isr.size() == s.isr.size() || live_isr.empty()) return std::nullopt;
      outcome->kind = Kind::kIsrShrink;
      return zk::PartitionState{s.leader, s.leader_epoch + 1, live_isr, epoch_};
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
    // No leader: leader -1, the dead members leave the ISR, but the ISR never empties (Kafka
    // keeps the last member so that it can lead again when it returns). When several die at
    // once the one kept is the old leader if it was in the ISR (it had every acknowledged
    // record), else the first member.
    std::vector<BrokerId> isr = live_isr;
    if (isr.empty() && !s.isr.empty()) {
      isr = {Contains(s.isr, s.leader) ? s.leader : s.isr.front()};
    }
    if (s.leader == zk::kNoLeader && isr == s.isr) return std::nullopt;
    if (isr.empty()) return std::nullopt;
    outcome->kind = Kind::kOffline;
    return zk::PartitionState{zk::kNoLeader, s.leader_epoch + 1, isr, epoch_};
  };
  UpdatePartitionState(tp, std::move(change), [this, tp, reason, outcome, done](bool written) {
    auto it = partitions_.find(tp);
    if (!written || it == partitions_.end()) {
      done();
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
        for (BrokerId member : p.state.isr) any_live = any_live || live_brokers_.contains(member);
        if (!any_live) last_isr_member_[tp] = p.state.isr.front();
        EventFields fields;
        fields["topic"] = tp.topic;
        fields["partition"] = tp.partition.value();
        fields["isr"] = BrokerList(p.state.isr);
        Emit(events_, "partition_offline", std::move(fields));
        AddLeaderAndIsrToLiveReplicas(tp, false);
        break;
      }
      case Kind::kIsrShrink:
        AddLeaderAndIsrToLiveReplicas(tp, false);
        break;
      case Kind::kNone:
        break;
    }
    batch_.update_metadata = true;
    done();
  });
}

void Controller::ReconcilePartitions(const std::vector<TopicPartition>& partitions, Reason reason,
                                     Done done) {
  auto join = std::make_shared<Join>(std::move(done));
  for (const TopicPartition& tp : partitions) {
    if (BeingDeleted(tp.topic)) continue;
    join->Add();
    if (uninitialized_.contains(tp)) {
      InitializePartition(tp, [join] { join->Arrive(); });
    } else {
      ReconcilePartition(tp, reason, [join] { join->Arrive(); });
    }
  }
  join->Arrive();
}

void Controller::ReconcileAll(Reason reason, Done done) {
  std::set<TopicPartition> all(uninitialized_.begin(), uninitialized_.end());
  for (const auto& [tp, p] : partitions_) all.insert(tp);
  ReconcilePartitions(std::vector<TopicPartition>(all.begin(), all.end()), reason, std::move(done));
}

void Controller::AddLeaderAndIsr(const TopicPartition& tp, const std::vector<BrokerId>& recipients,
                                 bool is_new) {
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

void Controller::HandleIsrChangeNotifications(Done done) {
  const std::string root(zk::kIsrChangeNotificationPath);
  zk_.GetChildren(
      root, /*watch=*/true, Guarded([this, root, done](Result<std::vector<std::string>> children) {
        if (!children.ok() || children->empty()) {
          done();
          return;
        }
        auto names = std::make_shared<std::vector<std::string>>();
        for (const std::string& name : *children) {
          if (name.starts_with(zk::kIsrChangeNotificationPrefix)) names->push_back(name);
        }
        auto changed = std::make_shared<std::set<TopicPartition>>();
        auto read_all = std::make_shared<Join>(Guarded([this, root, names, changed, done] {
          auto refreshed = std::make_shared<Join>(Guarded([this, root, names, done] {
            // UpdateMetadata to every live broker, then the notifications go.
            batch_.update_metadata = true;
            SendBatch();
            for (const std::string& name : *names) zk_.Delete(root + "/" + name, kAnyVersion, {});
            done();
          }));
          for (const TopicPartition& tp : *changed) {
            if (!partitions_.contains(tp)) continue;
            refreshed->Add();
            ReadPartitionState(tp, [refreshed](Status) { refreshed->Arrive(); });
          }
          refreshed->Arrive();
        }));
        for (const std::string& name : *names) {
          read_all->Add();
          zk_.GetData(root + "/" + name, /*watch=*/false,
                      Guarded([changed, read_all](Result<ZnodeData> data) {
                        if (data.ok()) {
                          Result<std::vector<zk::TopicAndPartition>> partitions =
                              zk::DecodeIsrChangeNotification(data->data);
                          if (partitions.ok()) {
                            for (const zk::TopicAndPartition& tp : *partitions) {
                              changed->insert(TopicPartition{tp.topic, tp.partition});
                            }
                          }
                        }
                        read_all->Arrive();
                      }));
        }
        read_all->Arrive();
      }));
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
      [this, request, once, not_controller](Done task_done) {
        if (!active_) {
          not_controller();
          task_done();
          return;
        }
        ControlledShutdown(request, once, std::move(task_done));
      },
      not_controller);
}

void Controller::ControlledShutdown(const ControlledShutdownRequest& request,
                                    std::function<void(ControlledShutdownResponse)> respond,
                                    Done done) {
  const BrokerId broker = request.broker_id;
  ControlledShutdownResponse response;
  response.correlation_id = request.correlation_id;
  if (!live_brokers_.contains(broker)) {
    // Kafka: BrokerNotAvailableException("Broker id <id> does not exist.").
    response.error_code = Errc::kBrokerNotAvailable;
    respond(std::move(response));
    done();
    return;
  }
  shutting_down_.insert(broker);
  auto join = std::make_shared<Join>(Guarded([this, broker, respond, response, done]() mutable {
    SendBatch();
    // The partitions it still leads (no other ISR member could take over): the broker retries.
    for (const auto& [tp, p] : partitions_) {
      if (p.state.leader == broker && p.assigned_replicas.size() > 1 && !BeingDeleted(tp.topic)) {
        response.partitions_remaining.push_back(tp);
      }
    }
    respond(std::move(response));
    done();
  }));
  for (const auto& entry : partitions_) {
    // Named copies, not structured bindings: lambdas below capture them (clang 14 cannot capture
    // a structured binding).
    const TopicPartition tp = entry.first;
    const ControllerPartitionState& p = entry.second;
    if (BeingDeleted(tp.topic) || !Contains(p.assigned_replicas, broker)) continue;
    if (p.state.leader == broker) {
      if (p.assigned_replicas.size() <= 1) continue;
      // ControlledShutdownLeaderSelector: a new leader from the ISR minus the departing brokers.
      auto result = std::make_shared<ElectionResult>();
      StateChange change =
          [this, tp,
           result](const ControllerPartitionState& current) -> std::optional<zk::PartitionState> {
        *result = SelectControlledShutdownLeader(MakeInput(tp, current), shutting_down_);
        if (result->outcome != ElectionOutcome::kElected) return std::nullopt;
        return zk::PartitionState{*result->leader, current.state.leader_epoch + 1, result->isr,
                                  epoch_};
      };
      join->Add();
      UpdatePartitionState(tp, std::move(change), [this, tp, result, join](bool written) {
        auto it = partitions_.find(tp);
        if (written && it != partitions_.end()) {
          ++elections_;
          EmitElected(tp, it->second, *result, "controlled-shutdown", Reason::kControlledShutdown);
          AddLeaderAndIsr(tp, result->recipients, false);
          batch_.update_metadata = true;
        }
        join->Arrive();
      });
    } else {
      // A follower: StopReplica (without deleting), and out of the ISR (OfflineReplica).
      batch_.stop_replica[broker].insert(tp);
      StateChange change =
          [broker](const ControllerPartitionState& current) -> std::optional<zk::PartitionState> {
        std::vector<BrokerId> isr;
        for (BrokerId member : current.state.isr) {
          if (member != broker) isr.push_back(member);
        }
        if (isr.size() == current.state.isr.size() || isr.empty()) return std::nullopt;
        zk::PartitionState next = current.state;
        next.isr = std::move(isr);
        next.leader_epoch = current.state.leader_epoch + 1;
        return next;
      };
      join->Add();
      UpdatePartitionState(
          tp,
          [this, change](const ControllerPartitionState& current) {
            std::optional<zk::PartitionState> next = change(current);
            if (next) next->controller_epoch = epoch_;
            return next;
          },
          [this, tp, broker, join](bool written) {
            auto it = partitions_.find(tp);
            if (written && it != partitions_.end()) {
              std::vector<BrokerId> others;
              for (BrokerId replica : it->second.assigned_replicas) {
                if (replica != broker) others.push_back(replica);
              }
              AddLeaderAndIsr(tp, others, false);
              batch_.update_metadata = true;
            }
            join->Arrive();
          });
    }
  }
  join->Arrive();
}

}  // namespace ksim
