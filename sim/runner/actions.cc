// The scenario's actions, each run at its time by ScenarioRun (sim/runner/run.h): traced
// first as an `action` event on node "scenario", then done; an action that cannot apply is
// traced as action_skipped and reported (sim/runner/runner.h).
#include <string>
#include <utility>

#include "core/base/check.h"
#include "core/base/trace_names.h"
#include "core/config/server_config.h"
#include "core/zk/paths.h"
#include "sim/runner/run.h"

namespace ksim::sim {
namespace {

TimeUs Ms(int64_t ms) { return static_cast<TimeUs>(ms) * kUsPerMs; }

std::string PartitionName(const std::string& topic, int32_t partition) {
  return topic + "-" + std::to_string(partition);
}

// The target as written, for the description and the trace.
void DescribeTarget(const Target& target, std::string& description, TraceFields& fields) {
  switch (target.kind) {
    case Target::Kind::kBroker:
      description += " " + node::Broker(BrokerId(target.broker));
      fields[field::kBroker] = target.broker;
      return;
    case Target::Kind::kLeaderOf:
      description += " leader_of " + PartitionName(target.topic, target.partition);
      fields[field::kLeaderOf] = PartitionName(target.topic, target.partition);
      return;
    case Target::Kind::kClient:
      description += " " + target.client;
      fields[field::kClient] = target.client;
      return;
  }
}

std::string_view DiskFaultKindName(DiskFaultKind kind) {
  switch (kind) {
    case DiskFaultKind::kEio:
      return "eio";
    case DiskFaultKind::kFull:
      return "full";
    case DiskFaultKind::kCorruptTail:
      return "corrupt_tail";
  }
  return "unknown";
}

std::string JoinSide(const std::vector<std::string>& side) {
  std::string text = "[";
  for (size_t i = 0; i < side.size(); ++i) text += (i == 0 ? "" : ", ") + side[i];
  return text + "]";
}

}  // namespace

void ScenarioRun::BeginAction(const Action& action, std::string description, TraceFields fields) {
  EventFields event{{field::kIndex, action.index},
                    {field::kDo, ActionName(action.what)},
                    {field::kAtMs, action.at_ms}};
  for (const auto& [key, value] : fields.items()) event.Add(key, value);
  world_->Trace(node::kScenario, ev::kAction, event);
  ActionOutput output;
  output.index = action.index;
  output.at_ms = action.at_ms;
  output.description = std::move(description);
  action_slot_[action.index] = actions_.size();
  actions_.push_back(std::move(output));
}

void ScenarioRun::Skip(const Action& action, const std::string& reason) {
  world_->Trace(node::kScenario, ev::kActionSkipped,
                EventFields{{field::kIndex, action.index}, {field::kReason, reason}});
  ActionOutput& output = actions_[action_slot_.at(action.index)];
  output.skipped = true;
  output.output.push_back(reason);
}

void ScenarioRun::CliOutput(size_t index, const std::string& line) {
  world_->Trace(node::kScenario, ev::kCliOutput,
                EventFields{{field::kIndex, index}, {field::kLine, line}});
  auto slot = action_slot_.find(index);
  if (slot != action_slot_.end()) actions_[slot->second].output.push_back(line);
}

std::optional<BrokerId> ScenarioRun::ResolveBroker(const Target& target, std::string& description,
                                                   TraceFields& fields, std::string& reason) {
  switch (target.kind) {
    case Target::Kind::kBroker:
      return BrokerId(target.broker);
    case Target::Kind::kLeaderOf: {
      const BrokerId leader =
          cluster_->LeaderOf(TopicPartition{target.topic, PartitionId(target.partition)});
      if (leader == kNoBroker) {
        reason = PartitionName(target.topic, target.partition) + " has no leader";
        return std::nullopt;
      }
      // The broker the role named at this moment, in the report and the trace.
      description += " (" + node::Broker(leader) + ")";
      fields[field::kBroker] = leader.value();
      return leader;
    }
    case Target::Kind::kClient:
      reason = "a client is not a broker";
      return std::nullopt;
  }
  return std::nullopt;
}

ProducerClient* ScenarioRun::FindProducer(const std::string& id) {
  for (const auto& producer : producers_) {
    if (producer->id() == id) return producer.get();
  }
  return nullptr;
}

void ScenarioRun::RunAction(const Action& action) {
  std::visit(
      [&](const auto& what) {
        using T = std::decay_t<decltype(what)>;
        if constexpr (std::is_same_v<T, CliAction>) {
          RunCli(action, what);
        } else if constexpr (std::is_same_v<T, CrashAction>) {
          RunLifecycle(action, what.target, NodeLifecycle::kCrash);
        } else if constexpr (std::is_same_v<T, RestartAction>) {
          RunLifecycle(action, what.target, NodeLifecycle::kRestart);
        } else if constexpr (std::is_same_v<T, ShutdownAction>) {
          RunLifecycle(action, what.target, NodeLifecycle::kShutdown);
        } else if constexpr (std::is_same_v<T, SlowAction>) {
          RunSlow(action, what);
        } else if constexpr (std::is_same_v<T, PartitionAction>) {
          RunPartition(action, what);
        } else if constexpr (std::is_same_v<T, HealAction>) {
          BeginAction(action, "heal", TraceFields::object());
          world_->Heal();
        } else if constexpr (std::is_same_v<T, CrashReplicasAction>) {
          RunCrashReplicas(action, what);
        } else if constexpr (std::is_same_v<T, DiskFaultAction>) {
          RunDiskFault(action, what);
        } else if constexpr (std::is_same_v<T, ZkExpireAction>) {
          RunZkExpire(action, what.target);
        } else if constexpr (std::is_same_v<T, ZkDownAction>) {
          RunZooKeeper(action, /*up=*/false);
        } else if constexpr (std::is_same_v<T, ZkUpAction>) {
          RunZooKeeper(action, /*up=*/true);
        } else if constexpr (std::is_same_v<T, ProduceAction>) {
          RunProduce(action, what);
        } else if constexpr (std::is_same_v<T, ConfigAction>) {
          RunConfig(action, what);
        }
      },
      action.what);
}

// crash, restart and shutdown share one skeleton: describe the target, resolve it (a broker named
// by id or by role), trace the action, apply it, and report what could not apply. A client goes to
// the World (its process only: crash or restart); a broker to the Cluster (its process, disk and
// registration).
void ScenarioRun::RunLifecycle(const Action& action, const Target& target, NodeLifecycle change) {
  std::string description(NodeLifecycleName(change));
  TraceFields fields = TraceFields::object();
  DescribeTarget(target, description, fields);
  if (target.kind == Target::Kind::kClient) {
    KSIM_CHECK(change != NodeLifecycle::kShutdown);  // the loader takes only brokers for it
    BeginAction(action, description, fields);
    const bool crash = change == NodeLifecycle::kCrash;
    Status applied = crash ? world_->CrashNode(target.client) : world_->RestartNode(target.client);
    if (!applied.ok()) Skip(action, applied.message());
    if (!crash) ApplyLinkOverrides();  // a new process starts with the scenario's links
    return;
  }
  std::string reason;
  const std::optional<BrokerId> broker = ResolveBroker(target, description, fields, reason);
  BeginAction(action, description, fields);
  if (!broker) return Skip(action, reason);
  Status applied;
  switch (change) {
    case NodeLifecycle::kCrash:
      applied = cluster_->CrashBroker(*broker);
      break;
    case NodeLifecycle::kRestart:
      applied = cluster_->RestartBroker(*broker);
      break;
    case NodeLifecycle::kShutdown:
      applied = cluster_->ShutdownBroker(*broker);
      break;
  }
  if (!applied.ok()) Skip(action, applied.message());
}

void ScenarioRun::RunSlow(const Action& action, const SlowAction& slow) {
  std::string description = "slow";
  TraceFields fields = TraceFields::object();
  DescribeTarget(slow.target, description, fields);
  std::string reason;
  const std::optional<BrokerId> broker = ResolveBroker(slow.target, description, fields, reason);
  description += " by " + std::to_string(slow.fetch_delay_ms) + " ms for " +
                 std::to_string(slow.for_ms) + " ms";
  fields[field::kFetchDelayMs] = slow.fetch_delay_ms;
  fields[field::kForMs] = slow.for_ms;
  BeginAction(action, description, fields);
  if (!broker) return Skip(action, reason);
  Status slowed = cluster_->SlowBroker(*broker, Ms(slow.fetch_delay_ms), Ms(slow.for_ms));
  if (!slowed.ok()) Skip(action, slowed.message());
}

void ScenarioRun::RunPartition(const Action& action, const PartitionAction& partition) {
  std::string description = "partition";
  for (size_t i = 0; i < partition.sides.size(); ++i) {
    description +=
        (i == 0 ? " " : (partition.one_way ? " -> " : " | ")) + JoinSide(partition.sides[i]);
  }
  BeginAction(action, description,
              TraceFields{{field::kSides, partition.sides}, {field::kOneWay, partition.one_way}});
  // A side may name a console client not created yet (or never): only existing nodes are cut.
  std::vector<std::vector<std::string>> sides;
  for (const std::vector<std::string>& side : partition.sides) {
    std::vector<std::string> present;
    for (const std::string& name : side) {
      if (world_->FindNode(name) != nullptr) present.push_back(name);
    }
    sides.push_back(std::move(present));
  }
  Status cut = cluster_->Partition(sides, partition.one_way);
  if (!cut.ok()) Skip(action, cut.message());
}

void ScenarioRun::RunCrashReplicas(const Action& action, const CrashReplicasAction& crash) {
  const TopicPartition tp{crash.topic, PartitionId(crash.partition)};
  std::vector<BrokerId> replicas;
  std::optional<ZnodeData> data = cluster_->zookeeper().Read(zk::TopicPath(crash.topic));
  if (data) {
    Result<zk::ReplicaAssignment> assignment = zk::DecodeReplicaAssignment(data->data);
    if (assignment.ok() && assignment->count(tp.partition) > 0) {
      replicas = assignment->at(tp.partition);
    }
  }
  std::string description = "crash_replicas " + ToString(tp);
  TraceFields brokers = TraceFields::array();
  for (size_t i = 0; i < replicas.size(); ++i) {
    description += (i == 0 ? " (" : ", ") + node::Broker(replicas[i]);
    brokers.push_back(replicas[i].value());
  }
  if (!replicas.empty()) description += ")";
  BeginAction(action, description,
              TraceFields{{field::kTopic, crash.topic},
                          {field::kPartition, crash.partition},
                          {field::kBrokers, brokers}});
  if (replicas.empty()) return Skip(action, ToString(tp) + " has no replicas");
  std::string down;
  for (BrokerId id : replicas) {
    Status crashed = cluster_->CrashBroker(id);
    if (!crashed.ok()) down += (down.empty() ? "" : "; ") + crashed.message();
  }
  if (!down.empty()) {
    actions_[action_slot_.at(action.index)].output.push_back("not crashed: " + down);
  }
}

void ScenarioRun::RunDiskFault(const Action& action, const DiskFaultAction& fault) {
  std::string description = "disk_fault " + std::string(DiskFaultKindName(fault.kind)) + " on";
  TraceFields fields{{field::kKind, std::string(DiskFaultKindName(fault.kind))}};
  DescribeTarget(fault.target, description, fields);
  std::string reason;
  const std::optional<BrokerId> broker = ResolveBroker(fault.target, description, fields, reason);
  BeginAction(action, description, fields);
  if (!broker) return Skip(action, reason);
  const std::string node = node::Broker(*broker);
  switch (fault.kind) {
    case DiskFaultKind::kEio:
      // Every later read, write and sync fails until the final phase clears it.
      for (DiskFault kind :
           {DiskFault::kReadError, DiskFault::kWriteError, DiskFault::kSyncError}) {
        KSIM_CHECK(world_->InjectDiskFault(node, kind, FaultPersistence::kUntilCleared).ok());
      }
      return;
    case DiskFaultKind::kFull: {
      // The disk's capacity becomes what it holds now: every write that grows it is ENOSPC.
      VirtualDisk* disk = world_->node(node).disk();
      KSIM_CHECK(disk != nullptr);
      disk->set_capacity_bytes(std::max<uint64_t>(disk->used_bytes(), 1));
      full_disks_.insert(*broker);
      world_->Trace(node, ev::kDiskFault,
                    EventFields{{field::kFault, "no_space"}, {field::kOnce, false}});
      return;
    }
    case DiskFaultKind::kCorruptTail: {
      CrashOptions crash;
      crash.tear_unsynced_tail = true;
      crash.corrupt_torn_tail = true;
      Status crashed = cluster_->CrashBroker(*broker, crash);
      if (!crashed.ok()) Skip(action, crashed.message());
      return;
    }
  }
}

void ScenarioRun::RunZkExpire(const Action& action, const Target& target) {
  std::string description = "zk_expire";
  TraceFields fields = TraceFields::object();
  DescribeTarget(target, description, fields);
  std::string reason;
  const std::optional<BrokerId> broker = ResolveBroker(target, description, fields, reason);
  BeginAction(action, description, fields);
  if (!broker) return Skip(action, reason);
  Status expired = cluster_->ExpireSession(*broker);
  if (!expired.ok()) Skip(action, expired.message());
}

void ScenarioRun::RunZooKeeper(const Action& action, bool up) {
  BeginAction(action, up ? "zk_up" : "zk_down", TraceFields::object());
  // The ZooKeeperServer's own Down/Up (sim/world/zookeeper.h): the tree and the sessions persist as
  // on its disk; the server traces zk_down / zk_up on node "zk".
  ZooKeeperServer& zk = cluster_->zookeeper();
  if (zk.up() == up) return Skip(action, up ? "ZooKeeper is up" : "ZooKeeper is already down");
  if (up) {
    zk.Up();
  } else {
    zk.Down();
  }
}

void ScenarioRun::RunProduce(const Action& action, const ProduceAction& produce) {
  std::string description = "produce \"" + produce.value + "\"";
  TraceFields fields{{field::kClient, produce.client}, {field::kValue, produce.value}};
  if (produce.key) {
    description += " (key \"" + *produce.key + "\")";
    fields[field::kKey] = *produce.key;
  }
  description += " via " + produce.client;
  BeginAction(action, description, fields);
  ProducerClient* producer = FindProducer(produce.client);
  if (producer == nullptr) return Skip(action, produce.client + " is not a producer");
  Result<std::string> sent = producer->Produce(produce.value, produce.key);
  if (!sent.ok()) return Skip(action, sent.status().message());
  actions_[action_slot_.at(action.index)].output.push_back("record " + *sent);
}

void ScenarioRun::RunConfig(const Action& action, const ConfigAction& config) {
  std::string description = "config";
  TraceFields settings = TraceFields::object();
  std::string listed;
  for (const auto& [key, value] : config.config) {
    settings[key] = value;
    listed += (listed.empty() ? " " : ", ") + key + "=" + value;
  }
  TraceFields fields{{field::kConfig, settings}};
  if (config.topic) {
    description += " topic " + *config.topic;
    fields[field::kTopic] = *config.topic;
  } else if (config.broker) {
    description += " " + node::Broker(BrokerId(*config.broker));
    fields[field::kBroker] = *config.broker;
  } else {
    description += " every broker";
  }
  BeginAction(action, description + ":" + listed, fields);

  if (!config.topic) {
    // Read at start-up by 0.10's brokers: kept for each broker's next restart.
    for (BrokerId id : cluster_->broker_ids()) {
      if (config.broker && id != BrokerId(*config.broker)) continue;
      Status updated = cluster_->UpdateBrokerConfig(id, config.config);
      if (!updated.ok()) return Skip(action, updated.message());
    }
    return;
  }
  // kafka-configs.sh --alter --entity-type topics: the topic's overrides in ZooKeeper, merged.
  const std::string path = zk::TopicConfigPath(*config.topic);
  std::optional<ZnodeData> current = cluster_->zookeeper().Read(path);
  if (!current) return Skip(action, "topic " + *config.topic + " does not exist");
  Result<zk::TopicConfig> merged = zk::DecodeTopicConfig(current->data);
  if (!merged.ok()) return Skip(action, merged.status().message());
  for (const auto& [key, value] : config.config) (*merged)[key] = value;
  ConfigOverrides overrides(merged->begin(), merged->end());
  Result<TopicConfig> parsed =
      MakeTopicConfig(cluster_->broker_config(BrokerId(1)), overrides, "config");
  if (!parsed.ok()) return Skip(action, parsed.status().message());
  observer_->SetMinInsyncReplicas(*config.topic, parsed->min_insync_replicas);
  const size_t index = action.index;
  const std::string topic = *config.topic;
  // Then the notification the brokers watch for (AdminUtils.changeTopicConfig), in the form of
  // the cluster's release.
  const zk::ConfigChangeFormat format =
      scenario_.kafka_version == KafkaRelease::k0_8_2    ? zk::ConfigChangeFormat::kTopicName
      : scenario_.kafka_version == KafkaRelease::k0_10_0 ? zk::ConfigChangeFormat::kVersion1
                                                         : zk::ConfigChangeFormat::kVersion2;
  cluster_->admin().SetData(
      path, zk::EncodeTopicConfig(*merged), kAnyVersion,
      [this, index, topic, format](Result<ZnodeStat> written) {
        if (!written.ok()) {
          CliOutput(index, "config not written: " + written.status().ToString());
          return;
        }
        cluster_->admin().Create(
            zk::ConfigChangeSequentialPath(), zk::EncodeTopicConfigChange(format, topic),
            CreateMode::kPersistentSequential, [this, index](Result<std::string> created) {
              if (!created.ok()) {
                CliOutput(index, "config change not announced: " + created.status().ToString());
              }
            });
      });
}

void ScenarioRun::RunCli(const Action& action, const CliAction& cli) {
  BeginAction(action, cli.command, TraceFields{{field::kCommand, cli.command}});
  Status started = cli_->Run(action.index, cli);
  if (!started.ok()) Skip(action, started.message());
  ApplyLinkOverrides();  // a console client's node may be named by a link override
}

}  // namespace ksim::sim
