// Preferred replica elections (Kafka 0.10.0.1's KafkaController.onPreferredReplicaElection with
// PreferredReplicaPartitionLeaderSelector) and their two triggers: the admin path
// /admin/preferred_replica_election (PreferredReplicaElectionListener, written by
// kafka-preferred-replica-election.sh) and the leader imbalance check
// (checkAndTriggerPartitionRebalance, when auto.leader.rebalance.enable). docs/controller.md,
// "Preferred replica elections".
#include <algorithm>
#include <utility>

#include "core/base/check.h"
#include "core/controller/controller.h"

namespace ksim {

// ---- The leader imbalance check (checkAndTriggerPartitionRebalance) -----------------------------

void Controller::ScheduleRebalanceCheck(TimeUs delay) {
  KSIM_CHECK(config_.auto_leader_rebalance_enable);
  KSIM_CHECK(config_.leader_imbalance_check_interval_seconds > 0);
  if (rebalance_timer_ != 0) timers_.Cancel(rebalance_timer_);
  rebalance_timer_ = timers_.Schedule(
      delay, Guarded([this] {
        rebalance_timer_ = 0;
        // scheduleAtFixedRate: the next check is due one interval after this one was, however
        // long this one takes in the queue.
        ScheduleRebalanceCheck(config_.leader_imbalance_check_interval_seconds * 1000 * kUsPerMs);
        EnqueueActive("leader_imbalance_check",
                      [this](StepDone done) { CheckLeaderImbalance(std::move(done)); });
      }));
}

void Controller::CheckLeaderImbalance(StepDone done) {
  // Every partition (topics queued for deletion left out) under its preferred replica, the first
  // assigned. A partition with no state yet counts in the total but not as led by another.
  std::map<BrokerId, std::vector<TopicPartition>> by_preferred;
  for (const auto& [topic, assignment] : topics_) {
    if (BeingDeleted(topic)) continue;
    for (const auto& [partition, replicas] : assignment) {
      if (replicas.empty()) continue;
      by_preferred[replicas.front()].push_back(TopicPartition{topic, partition});
    }
  }
  std::vector<Step> brokers;
  for (auto& [broker_entry, partitions_entry] : by_preferred) {
    const BrokerId broker = broker_entry;
    const std::vector<TopicPartition> partitions = partitions_entry;
    brokers.push_back([this, broker, partitions](StepDone next) {
      std::vector<TopicPartition> not_led;
      for (const TopicPartition& tp : partitions) {
        auto it = partitions_.find(tp);
        if (it != partitions_.end() && it->second.state.leader != broker) not_led.push_back(tp);
      }
      // imbalanceRatio > leaderImbalancePerBrokerPercentage / 100, in integers (the doubles
      // Kafka divides compare the same way: both quotients are correctly rounded).
      const int64_t total = static_cast<int64_t>(partitions.size());
      KSIM_CHECK(total > 0);
      if (static_cast<int64_t>(not_led.size()) * 100 <=
          int64_t{config_.leader_imbalance_per_broker_percentage} * total) {
        next(Status::Ok());
        return;
      }
      // One election a partition, each with its own requests, and only while the preferred
      // replica is live and no other preferred election or deletion of the topic is under way
      // (ksim has no partition reassignment).
      std::vector<Step> elections;
      for (const TopicPartition& tp : not_led) {
        elections.push_back([this, broker, tp](StepDone elected) {
          if (!ElectableBrokers().contains(broker) || !preferred_elections_.empty() ||
              BeingDeleted(tp.topic) || !topics_.contains(tp.topic)) {
            elected(Status::Ok());
            return;
          }
          ElectPreferredReplicas({tp}, Reason::kAutoRebalance, std::move(elected));
        });
      }
      InOrder(std::move(elections), std::move(next));
    });
  }
  InOrder(std::move(brokers), std::move(done));
}

// ---- /admin/preferred_replica_election (PreferredReplicaElectionListener) -----------------------

void Controller::HandlePreferredReplicaElection(StepDone done) {
  // The data watch is set again by an exists (it fires on creation too); when the znode is there,
  // its partitions are elected and it is deleted (removePartitionsFromPreferredReplicaElection).
  const std::string path(zk::kPreferredReplicaElectionPath);
  struct Request {
    bool exists = false;
    std::set<TopicPartition> partitions;
  };
  auto request = std::make_shared<Request>();
  InOrder({
              [this, path, request](StepDone next) {
                zk_.Exists(
                    path, /*watch=*/true,
                    Guarded([this, path, request, next](Result<std::optional<ZnodeStat>> stat) {
                      if (!stat.ok()) {
                        next(ZkFailed(kOpExists, path, stat.status()));
                        return;
                      }
                      request->exists = stat->has_value();
                      next(Status::Ok());
                    }));
              },
              [this, path, request](StepDone next) {
                if (!request->exists) {
                  next(Status::Ok());
                  return;
                }
                ReadZnode(
                    path, /*watch=*/false,
                    [this, path, request](std::optional<ZnodeData> data) {
                      if (!data) {
                        request->exists = false;  // deleted meanwhile
                        return;
                      }
                      Result<std::vector<zk::TopicAndPartition>> partitions =
                          zk::DecodePreferredReplicaElection(data->data);
                      if (!partitions.ok()) {
                        // Kafka's listener throws; the znode stays until someone deletes it.
                        (void)ZkFailed(kOpGetData, path, partitions.status());
                        request->exists = false;
                        return;
                      }
                      for (const zk::TopicAndPartition& tp : *partitions) {
                        const TopicPartition partition{tp.topic, tp.partition};
                        // Those already being elected, and those of topics being deleted ("Skipping
                        // preferred replica election for partitions ... since the respective topics
                        // are being deleted"), are left out.
                        if (preferred_elections_.contains(partition) || BeingDeleted(tp.topic)) {
                          continue;
                        }
                        request->partitions.insert(partition);
                      }
                    },
                    std::move(next));
              },
              [this, request](StepDone next) {
                if (!request->exists) {
                  next(Status::Ok());
                  return;
                }
                ElectPreferredReplicas(request->partitions, Reason::kPreferredReplicaElection,
                                       std::move(next));
              },
              [this, path, request](StepDone next) {
                if (!request->exists) {
                  next(Status::Ok());
                  return;
                }
                DeleteZnode(path, std::move(next));
              },
          },
          std::move(done));
}

// ---- The election (onPreferredReplicaElection) --------------------------------------------------

void Controller::ElectPreferredReplicas(const std::set<TopicPartition>& partitions, Reason reason,
                                        StepDone done) {
  preferred_elections_.insert(partitions.begin(), partitions.end());
  std::vector<Step> elections;
  for (const TopicPartition& tp : partitions) {
    if (BeingDeleted(tp.topic)) continue;
    elections.push_back(
        [this, tp, reason](StepDone next) { ElectPreferredReplica(tp, reason, std::move(next)); });
  }
  AllOf(std::move(elections), Guarded([this, partitions, done](Status status) {
          // PartitionStateMachine.handleStateChanges: one batch for all of them.
          SendBatch();
          for (const TopicPartition& tp : partitions) preferred_elections_.erase(tp);
          done(std::move(status));
        }));
}

void Controller::ElectPreferredReplica(const TopicPartition& tp, Reason reason, StepDone done) {
  auto result = std::make_shared<ElectionResult>();
  StateChange change =
      [this, result](const ControllerPartitionState& p) -> std::optional<zk::PartitionState> {
    if (p.assigned_replicas.empty()) return std::nullopt;
    const BrokerId preferred = p.assigned_replicas.front();
    // "Preferred replica %d is already the current leader" (LeaderElectionNotNeededException).
    if (p.state.leader == preferred) return std::nullopt;
    // "Preferred replica %d for partition %s is either not alive or not in the isr"
    // (StateChangeFailedException: logged, the partition keeps its leader).
    const std::vector<BrokerId>& isr = p.state.isr;
    if (!ElectableBrokers().contains(preferred) ||
        std::find(isr.begin(), isr.end(), preferred) == isr.end()) {
      return std::nullopt;
    }
    result->outcome = ElectionOutcome::kElected;
    result->leader = preferred;
    result->isr = isr;
    result->recipients = p.assigned_replicas;
    return zk::PartitionState{preferred, p.state.leader_epoch + 1, isr, epoch_};
  };
  UpdatePartitionState(tp, std::move(change),
                       [this, tp, reason, result, done](Result<bool> written) {
                         // A failed write was traced; Kafka logs the failed state change and goes
                         // on.
                         auto it = partitions_.find(tp);
                         if (written.ok() && *written && it != partitions_.end()) {
                           ++elections_;
                           EmitElected(tp, it->second, *result, "preferred-replica", reason);
                           AddLeaderAndIsr(tp, result->recipients, false);
                         }
                         done(Status::Ok());
                       });
}

}  // namespace ksim
