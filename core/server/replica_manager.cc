// ReplicaManager: lifecycle, controller requests, ISR propagation and HW checkpoints. Produce,
// fetch and the offset lookups are in core/server/replica_manager_requests.cc.
#include "core/server/replica_manager.h"

#include <algorithm>
#include <utility>

#include "core/base/trace_names.h"
#include "core/cluster/election_policy.h"
#include "core/storage/hw_checkpoint.h"
#include "core/storage/leader_epoch_cache.h"
#include "core/zk/paths.h"

namespace ksim {

namespace {

TopicConfig DefaultTopicConfig(const BrokerConfig& config) {
  Result<TopicConfig> defaults = MakeTopicConfig(config, {}, "defaults");
  KSIM_CHECK(defaults.ok());
  return *defaults;
}

// Whether a failure to create a replica or write a checkpoint means the log dir failed: the
// disk's errors, and a damaged checkpoint (Kafka 1.x/2.0's CheckpointFile.read throws an
// IOException for a malformed line, which takes the dir offline like any other).
bool IsLogDirFailure(const Status& status) {
  return IsStorageFailure(status) || status.code() == Errc::kCorruption;
}

}  // namespace

template <class F>
auto ReplicaManager::Guarded(F f) {
  return [alive = std::weak_ptr<bool>(alive_), f = std::move(f)](auto&&... args) mutable {
    if (alive.expired()) return;
    f(std::forward<decltype(args)>(args)...);
  };
}

ReplicaManager::ReplicaManager(const BrokerConfig& config, TruncationPolicy truncation,
                               std::string election_policy, ReplicaManagerSeams seams)
    : config_(config),
      // Below inter.broker.protocol.version 0.11.0-IV2 a 0.11+ follower sends no
      // OffsetsForLeaderEpoch and truncates to its high watermark (EpochRequestAt).
      truncation_(truncation == TruncationPolicy::kLeaderEpoch &&
                          EpochRequestAt(config.release, config.inter_broker_protocol_version) ==
                              EpochRequest::kNone
                      ? TruncationPolicy::kHighWatermark
                      : truncation),
      election_policy_(std::move(election_policy)),
      seams_(std::move(seams)),
      zk_(seams_.zk),
      local_(config.broker_id),
      timers_(seams_.timers),
      default_topic_config_(DefaultTopicConfig(config)),
      produce_purgatory_(seams_.timers, "Produce"),
      fetch_purgatory_(seams_.timers, "Fetch"),
      fetchers_(
          ReplicaFetcherOptions{
              .local = BrokerId(config.broker_id),
              .fetch_wait_max_ms = config.replica_fetch_wait_max_ms,
              .fetch_min_bytes = config.replica_fetch_min_bytes,
              .fetch_max_bytes = config.replica_fetch_max_bytes,
              .fetch_backoff_ms = config.replica_fetch_backoff_ms,
              .epoch_request_v1 =
                  EpochRequestAt(config.release, config.inter_broker_protocol_version) >=
                  EpochRequest::kV1,
              .fetch_sessions = FetchSessionsAt(config.inter_broker_protocol_version),
              .epoch_requests_name_leader_epoch =
                  EpochRequestAt(config.release, config.inter_broker_protocol_version) ==
                  EpochRequest::kV2,
              .fetches_name_leader_epoch =
                  FetchesNameLeaderEpochAt(config.inter_broker_protocol_version),
              .may_truncate_below_leader =
                  [this](const TopicPartition& tp) { return MayTruncateBelowLeader(tp.topic); },
              .on_fatal_exit =
                  [this](const Status& error) {
                    if (seams_.on_fatal_exit) seams_.on_fatal_exit(error);
                  },
          },
          seams_.network, seams_.clock, seams_.timers,
          [this](const TopicPartition& tp) { return GetPartition(tp); }, seams_.events) {
  KSIM_CHECK(config.broker_id >= 0);
}

ReplicaManager::~ReplicaManager() = default;

Status ReplicaManager::Startup() {
  Status first_error;
  for (const std::string& dir : seams_.logs.config().log_dirs) {
    Result<std::map<TopicPartition, Offset>> read = ReadHighWatermarks(seams_.env, dir);
    if (!read.ok()) {
      // Kafka 1.x warns and starts those replicas at HW 0.
      Emit(seams_.events, ev::kHwCheckpointError,
           {{field::kDir, dir}, {field::kError, read.status().ToString()}});
      if (first_error.ok()) first_error = read.status();
      continue;
    }
    for (const auto& [tp, hw] : *read) checkpointed_hw_[tp] = hw;
  }
  ScheduleIsrCheck();
  ScheduleHighWatermarkCheckpoint();
  return first_error;
}

Status ReplicaManager::Shutdown() {
  KSIM_CHECK(!shut_down_);
  shut_down_ = true;
  // Callbacks still pending (a ZooKeeper read the closing session fails later, a LeaderAndIsr
  // waiting on it) find a stopped component: nothing of theirs runs (found by `ksim explore`:
  // scenarios/regressions/leader-and-isr-after-shutdown.json).
  alive_.reset();
  fetchers_.RemoveAll();
  timers_.CancelAll();
  produce_purgatory_.Clear();
  fetch_purgatory_.Clear();
  Status status = CheckpointHighWatermarks();
  // Log.close's producer snapshot, for each log a Partition holds (before LogManager closes it).
  for (auto& [tp, partition] : partitions_) {
    Status closed = partition->Close();
    if (status.ok() && !closed.ok()) status = std::move(closed);
  }
  partition_index_.Clear();
  partitions_.clear();
  PartitionsAddedOrRemoved();
  return status;
}

// ---- Controller requests ------------------------------------------------------------------------

void ReplicaManager::EnqueueControllerWork(
    std::function<void(std::function<void()> finished)> work) {
  controller_work_.push_back(std::move(work));
  if (!controller_work_running_) RunNextControllerWork();
}

void ReplicaManager::RunNextControllerWork() {
  if (controller_work_.empty() || shut_down_) {
    controller_work_running_ = false;
    return;
  }
  controller_work_running_ = true;
  auto work = std::move(controller_work_.front());
  controller_work_.pop_front();
  work(Guarded([this]() { RunNextControllerWork(); }));
}

void ReplicaManager::HandleLeaderAndIsr(LeaderAndIsrRequest request,
                                        std::function<void(LeaderAndIsrResponse)> done) {
  EnqueueControllerWork([this, request = std::move(request),
                         done = std::move(done)](std::function<void()> finished) mutable {
    std::vector<std::string> topics;
    for (const LeaderAndIsrPartitionState& state : request.partition_states) {
      if (topic_configs_.count(state.tp.topic) == 0 &&
          std::find(topics.begin(), topics.end(), state.tp.topic) == topics.end()) {
        topics.push_back(state.tp.topic);
      }
    }
    FetchTopicConfigs(std::move(topics),
                      [this, request = std::move(request), done = std::move(done),
                       finished = std::move(finished)]() {
                        LeaderAndIsrResponse response = BecomeLeaderOrFollower(request);
                        response.correlation_id = request.correlation_id;
                        done(std::move(response));
                        finished();
                      });
  });
}

namespace {

// A topic's overrides from a read of /config/topics/<t>: none when the znode is missing; the read's
// error, or kCorruption when its data does not decode.
Result<ConfigOverrides> TopicOverrides(const Result<ZnodeData>& data) {
  if (!data.ok()) {
    if (data.status() == Errc::kNoNode) return ConfigOverrides{};
    return data.status();
  }
  KSIM_ASSIGN_OR_RETURN(zk::TopicConfig decoded, zk::DecodeTopicConfig(data->data));
  ConfigOverrides overrides;
  for (const auto& [key, value] : decoded) overrides.emplace_back(key, value);
  return overrides;
}

}  // namespace

void ReplicaManager::FetchTopicConfigs(std::vector<std::string> topics,
                                       std::function<void()> then) {
  if (topics.empty()) return then();
  auto remaining = std::make_shared<size_t>(topics.size());
  auto shared_then = std::make_shared<std::function<void()>>(std::move(then));
  for (const std::string& topic : topics) {
    // Issued again on CONNECTIONLOSS: Kafka's fetchEntityConfig waits until connected
    // (0.10.0.1:ZkUtils.readDataMaybeNull through ZkClient, 2.0.0:retryRequestUntilConnected).
    zk_.GetData(zk::TopicConfigPath(topic), /*watch=*/false,
                Guarded([this, topic, remaining, shared_then](Result<ZnodeData> data) {
                  // An unreadable znode (an expired session, data that does not decode) falls
                  // back to the broker's defaults, uncached so that the next LeaderAndIsr tries
                  // again.
                  Result<ConfigOverrides> overrides = TopicOverrides(data);
                  const bool cache = overrides.ok();
                  Result<TopicConfig> config = MakeTopicConfig(
                      config_, cache ? *overrides : ConfigOverrides{}, zk::TopicConfigPath(topic));
                  if (!config.ok()) {
                    Emit(seams_.events, ev::kTopicConfigError,
                         {{field::kTopic, topic}, {field::kError, config.status().ToString()}});
                  } else if (cache) {
                    topic_configs_[topic] = *config;
                  }
                  if (--*remaining == 0) (*shared_then)();
                }));
  }
}

// ---- Topic config changes -------------------------------------------------------------------

namespace {

// How long a config change notification is kept (ZkNodeChangeNotificationListener's
// changeExpirationMs, 0.8.2.0:TopicConfigManager the same): older ones are deleted.
constexpr int64_t kConfigChangeExpirationMs = 15 * 60 * 1000;

}  // namespace

void ReplicaManager::WatchConfigChanges() {
  if (config_changes_running_) {
    config_changes_again_ = true;
    return;
  }
  config_changes_running_ = true;
  config_changes_again_ = false;
  // ZkClient.subscribeChildChanges, then processAllNotifications: the children, sorted.
  zk_.GetChildren(std::string(zk::kEntityConfigChangesPath), /*watch=*/true,
                  Guarded([this](Result<std::vector<std::string>> children) {
                    if (!children.ok()) return ConfigChangesDone();  // read again at the next try
                    auto names = std::make_shared<std::vector<std::string>>();
                    for (std::string& name : *children) {
                      if (zk::ConfigChangeNumber(name)) names->push_back(std::move(name));
                    }
                    std::sort(names->begin(), names->end());
                    ApplyConfigChanges(std::move(names), 0);
                  }));
}

void ReplicaManager::ApplyConfigChanges(std::shared_ptr<const std::vector<std::string>> names,
                                        size_t index) {
  if (index == names->size()) return ConfigChangesDone();
  const std::string path = std::string(zk::kEntityConfigChangesPath) + "/" + (*names)[index];
  zk_.GetData(path, /*watch=*/false, Guarded([this, names, index, path](Result<ZnodeData> data) {
                auto next = [this, names, index]() { ApplyConfigChanges(names, index + 1); };
                if (!data.ok()) return next();  // purged meanwhile (NONODE): nothing to apply
                const int64_t number = *zk::ConfigChangeNumber((*names)[index]);
                // purgeObsoleteNotifications: older than 15 minutes, by ZooKeeper's clock.
                if (seams_.clock.NowMs() - data->stat.ctime_ms > kConfigChangeExpirationMs) {
                  zk_.Delete(path, kAnyVersion, [](Status) {});
                }
                if (number <= last_config_change_) return next();
                last_config_change_ = number;
                Result<std::optional<std::string>> topic = zk::DecodeConfigChange(data->data);
                if (!topic.ok() || !topic->has_value()) {
                  // Kafka logs the notification it cannot read (or a client's quota change) and
                  // goes on with the next.
                  if (!topic.ok()) {
                    Emit(seams_.events, ev::kTopicConfigError,
                         {{field::kError, topic.status().ToString()}});
                  }
                  return next();
                }
                const std::string name = **topic;
                zk_.GetData(zk::TopicConfigPath(name), /*watch=*/false,
                            Guarded([this, name, next](Result<ZnodeData> config) {
                              ApplyTopicConfig(name, config);
                              next();
                            }));
              }));
}

void ReplicaManager::ConfigChangesDone() {
  config_changes_running_ = false;
  if (config_changes_again_) WatchConfigChanges();
}

void ReplicaManager::ApplyTopicConfig(const std::string& topic, const Result<ZnodeData>& data) {
  // TopicConfigHandler.processConfigChanges: only a topic whose logs this broker holds (and, here,
  // one whose config it cached for a replica to come).
  std::vector<std::pair<TopicPartition, Log*>> logs = seams_.logs.AllLogs();
  std::erase_if(logs, [&topic](const auto& entry) { return entry.first.topic != topic; });
  if (logs.empty() && !topic_configs_.contains(topic)) return;
  Result<ConfigOverrides> overrides = TopicOverrides(data);
  if (!overrides.ok()) {
    // Unreadable: Kafka's read fails too. Data that does not decode is reported.
    if (data.ok()) {
      Emit(seams_.events, ev::kTopicConfigError,
           {{field::kTopic, topic}, {field::kError, overrides.status().ToString()}});
    }
    return;
  }
  Result<TopicConfig> config = MakeTopicConfig(config_, *overrides, zk::TopicConfigPath(topic));
  if (!config.ok()) {
    Emit(seams_.events, ev::kTopicConfigError,
         {{field::kTopic, topic}, {field::kError, config.status().ToString()}});
    return;
  }
  topic_configs_[topic] = *config;
  for (const auto& [tp, log] : logs) log->set_config(config->log);
  // min.insync.replicas: Kafka reads it from the leader's log config at each produce.
  for (auto it = partitions_.lower_bound(TopicPartition{topic, PartitionId(0)});
       it != partitions_.end() && it->first.topic == topic; ++it) {
    PartitionConfig partition_config = it->second->config();
    partition_config.min_insync_replicas = config->min_insync_replicas;
    it->second->set_config(partition_config);
  }
  std::map<std::string, std::string> overridden(overrides->begin(), overrides->end());
  Emit(seams_.events, ev::kTopicConfigChanged,
       {{field::kTopic, topic}, {field::kConfig, overridden}});
}

const TopicConfig& ReplicaManager::ConfigOf(const std::string& topic) const {
  auto it = topic_configs_.find(topic);
  return it == topic_configs_.end() ? default_topic_config_ : it->second;
}

bool ReplicaManager::MayTruncateBelowLeader(const std::string& topic) const {
  if (config_.release >= KafkaRelease::k2_1) return true;  // KAFKA-7414
  if (election_policy_.empty()) return ConfigOf(topic).unclean_leader_election_enable;
  return election_policy_ == KafkaElectionPolicyName(/*unclean_leader_election_enable=*/true) ||
         election_policy_ == "longest-log";
}

Result<Partition*> ReplicaManager::GetOrCreatePartition(const TopicPartition& tp) {
  if (Partition* existing = GetPartition(tp)) return existing;
  const TopicConfig& topic = ConfigOf(tp.topic);
  KSIM_ASSIGN_OR_RETURN(Log * log, seams_.logs.GetOrCreateLog(tp, topic.log));
  KSIM_ASSIGN_OR_RETURN(LeaderEpochCache epochs, LeaderEpochCache::Open(seams_.env, log->dir()));
  // Kafka's Log at load (0.11.0 to 2.0 `Log` constructor: clearAndFlushLatest(nextOffset), then
  // clearAndFlushEarliest(logStartOffset)): the checkpoint keeps no epoch that starts at or past
  // the recovered log's end (a leader's epoch with nothing appended, or records a crash took with
  // a torn or corrupt tail) and none before its start. A stale entry at the log end would
  // otherwise end the previous epoch there and cut the committed records fetched after it.
  if (!epochs_loaded_.contains(tp)) {
    KSIM_RETURN_IF_ERROR(epochs.TruncateFromEnd(log->log_end_offset()));
    KSIM_RETURN_IF_ERROR(epochs.TruncateFromStart(log->log_start_offset()));
    epochs_loaded_.insert(tp);
  }
  // Kafka's Log.loadProducerState at open: snapshots plus the log after them (after a crash,
  // the recovered log decides which snapshots still hold).
  KSIM_ASSIGN_OR_RETURN(ProducerStateManager producers,
                        Partition::LoadProducerState(seams_.env, *log, seams_.clock.NowMs()));
  Offset hw{0};
  if (auto checkpointed = checkpointed_hw_.find(tp); checkpointed != checkpointed_hw_.end()) {
    hw = checkpointed->second;
  }
  PartitionConfig partition_config{.replica_lag_time_max_ms = config_.replica_lag_time_max_ms,
                                   .replica_lag_max_messages = config_.replica_lag_max_messages,
                                   .min_insync_replicas = topic.min_insync_replicas,
                                   .release = config_.release};
  auto partition =
      std::make_unique<Partition>(tp, local_, *log, std::move(epochs), std::move(producers),
                                  seams_.clock, partition_config, hw, seams_.events);
  Partition* raw = partition.get();
  if (seams_.on_storage_failure) raw->set_storage_failure_handler(seams_.on_storage_failure);
  raw->set_change_list(&changed_partitions_);
  const bool added = partitions_.emplace(tp, std::move(partition)).second;
  KSIM_CHECK(added);  // looked up first
  partition_index_.Insert(tp, raw);
  PartitionsAddedOrRemoved();
  return raw;
}

std::optional<ControllerEpoch> ReplicaManager::state_controller_epoch(
    const TopicPartition& tp) const {
  auto it = state_controller_epochs_.find(tp);
  if (it == state_controller_epochs_.end()) return std::nullopt;
  return it->second;
}

LeaderAndIsrResponse ReplicaManager::BecomeLeaderOrFollower(const LeaderAndIsrRequest& request) {
  LeaderAndIsrResponse response;
  if (request.controller_epoch < controller_epoch_) {
    // Kafka: "Ignoring LeaderAndIsr request from controller ... since its controller epoch is
    // old".
    response.error_code = Errc::kStaleControllerEpoch;
    return response;
  }
  controller_epoch_ = request.controller_epoch;
  std::map<TopicPartition, Errc> errors;
  std::vector<const LeaderAndIsrPartitionState*> leaders;
  std::vector<const LeaderAndIsrPartitionState*> followers;
  for (const LeaderAndIsrPartitionState& state : request.partition_states) {
    errors[state.tp] = Errc::kNone;
    if (std::find(state.replicas.begin(), state.replicas.end(), BrokerId(local_)) ==
        state.replicas.end()) {
      errors[state.tp] = Errc::kUnknownTopicOrPartition;
      continue;
    }
    Result<Partition*> partition = GetOrCreatePartition(state.tp);
    if (!partition.ok()) {
      Emit(seams_.events, ev::kPartitionCreateError,
           {{field::kTopic, state.tp.topic},
            {field::kPartition, state.tp.partition.value()},
            {field::kError, partition.status().ToString()}});
      errors[state.tp] = Errc::kKafkaStorageError;
      if (IsLogDirFailure(partition.status())) {
        StorageFailure(
            Status(Errc::kKafkaStorageError, "creating the replica of " + ToString(state.tp) +
                                                 " failed: " + partition.status().ToString()));
      }
      continue;
    }
    const LeaderEpoch current = (*partition)->leader_epoch();
    if (current != kUndefinedEpoch && state.leader_epoch <= current) {
      errors[state.tp] = Errc::kStaleControllerEpoch;  // Kafka's answer for an old leader epoch
      continue;
    }
    (state.leader == local_ ? leaders : followers).push_back(&state);
    state_controller_epochs_[state.tp] = request.controller_epoch;
  }

  // makeLeaders: stop fetching, take over.
  std::vector<TopicPartition> leader_tps;
  for (const auto* state : leaders) leader_tps.push_back(state->tp);
  fetchers_.RemovePartitions(leader_tps);
  for (const auto* state : leaders) {
    Partition* partition = GetPartition(state->tp);
    Result<bool> made = partition->MakeLeader(*state);
    if (!made.ok()) {
      errors[state->tp] = made.status().code();
      continue;
    }
    isr_proposals_.erase(state->tp);
    PartitionChanged(state->tp);
  }
  MakeFollowers(followers, request, errors);

  for (const auto& [tp, error] : errors) response.partitions.push_back(PartitionError{tp, error});
  return response;
}

void ReplicaManager::MakeFollowers(const std::vector<const LeaderAndIsrPartitionState*>& states,
                                   const LeaderAndIsrRequest& request,
                                   std::map<TopicPartition, Errc>& errors) {
  std::vector<const LeaderAndIsrPartitionState*> changed;
  for (const auto* state : states) {
    Partition* partition = GetPartition(state->tp);
    // ReplicaManager.makeFollowers (0.10.0.1 to 2.1.0): "Only change partition state when the
    // leader is available"; told leader -1 (or a dead one), the replica stays as it was, its
    // fetcher and log untouched.
    if (!LeaderHost(state->leader, &request).has_value()) continue;
    if (!partition->MakeFollower(*state)) continue;
    isr_proposals_.erase(state->tp);
    changed.push_back(state);
  }
  std::vector<TopicPartition> changed_tps;
  for (const auto* state : changed) changed_tps.push_back(state->tp);
  fetchers_.RemovePartitions(changed_tps);
  std::vector<ReplicaFetcherManager::Follow> follows;
  for (const auto* state : changed) {
    Partition* partition = GetPartition(state->tp);
    if (truncation_ == TruncationPolicy::kHighWatermark) {
      // Kafka 0.10's makeFollowers: logManager.truncateTo(partition -> HW).
      if (Status status =
              partition->TruncateTo(partition->HighWatermarkTruncationOffset(), "high_watermark");
          !status.ok()) {
        errors[state->tp] = status.code();
        continue;
      }
    }
    // Requests waiting on a former leader answer NOT_LEADER_FOR_PARTITION now.
    PartitionChanged(state->tp);
    std::optional<std::string> host = LeaderHost(state->leader, &request);
    if (!host.has_value()) continue;  // leader not alive: no fetcher (Kafka 1.x)
    follows.push_back({.tp = state->tp,
                       .leader = state->leader,
                       .host = *host,
                       .leader_epoch = partition->leader_epoch()});
  }
  // addFetcherForPartitions, once for them all.
  fetchers_.AddPartitions(follows, truncation_ == TruncationPolicy::kLeaderEpoch);
}

std::optional<std::string> ReplicaManager::LeaderHost(BrokerId leader,
                                                      const LeaderAndIsrRequest* request) const {
  if (request != nullptr) {
    for (const BrokerEndpoint& endpoint : request->live_leaders) {
      if (endpoint.node_id == leader) return endpoint.host;
    }
  }
  if (auto endpoint = seams_.metadata.AliveEndpoint(leader)) return endpoint->host;
  return std::nullopt;
}

void ReplicaManager::HandleStopReplica(StopReplicaRequest request,
                                       std::function<void(StopReplicaResponse)> done) {
  EnqueueControllerWork(
      [this, request = std::move(request), done = std::move(done)](std::function<void()> finished) {
        StopReplicaResponse response;
        response.correlation_id = request.correlation_id;
        if (request.controller_epoch < controller_epoch_) {
          response.error_code = Errc::kStaleControllerEpoch;
        } else {
          controller_epoch_ = request.controller_epoch;
          fetchers_.RemovePartitions(request.partitions);
          for (const TopicPartition& tp : request.partitions) {
            StopPartition(tp, request.delete_partitions);
            response.partitions.push_back(PartitionError{tp, Errc::kNone});
          }
        }
        done(std::move(response));
        finished();
      });
}

void ReplicaManager::StopPartition(const TopicPartition& tp, bool delete_log) {
  isr_proposals_.erase(tp);
  if (!delete_log) {
    if (Partition* partition = GetPartition(tp)) partition->Stop();
    PartitionChanged(tp);
    return;
  }
  partition_index_.Erase(tp);
  partitions_.erase(tp);  // before its log goes
  PartitionsAddedOrRemoved();
  checkpointed_hw_.erase(tp);
  topic_configs_.erase(tp.topic);
  PartitionChanged(tp);
  epochs_loaded_.erase(tp);  // a log made again later is loaded afresh
  Result<bool> deleted = seams_.logs.DeleteLog(tp);
  if (!deleted.ok()) {
    Emit(seams_.events, ev::kLogDeleteError,
         {{field::kTopic, tp.topic},
          {field::kPartition, tp.partition.value()},
          {field::kError, deleted.status().ToString()}});
  }
}

void ReplicaManager::HandleUpdateMetadata(UpdateMetadataRequest request,
                                          std::function<void(UpdateMetadataResponse)> done) {
  EnqueueControllerWork(
      [this, request = std::move(request), done = std::move(done)](std::function<void()> finished) {
        UpdateMetadataResponse response;
        response.correlation_id = request.correlation_id;
        if (request.controller_epoch < controller_epoch_) {
          response.error_code = Errc::kStaleControllerEpoch;
        } else {
          controller_epoch_ = request.controller_epoch;
          seams_.metadata.Update(request);
        }
        done(std::move(response));
        finished();
      });
}

// ---- ISR propagation ----------------------------------------------------------------------------

void ReplicaManager::ScheduleIsrCheck() {
  // Kafka: scheduler.schedule("isr-expiration", maybeShrinkIsr, period = ...), by release.
  const TimeUs period_us =
      IsrCheckPeriodMs(config_.release, config_.replica_lag_time_max_ms) * kUsPerMs;
  timers_.Schedule(period_us, [this]() {
    MaybeShrinkIsr();
    ScheduleIsrCheck();
  });
}

void ReplicaManager::MaybeShrinkIsr() {
  for (auto& [tp, partition] : partitions_) {
    if (!partition->is_leader() || isr_proposals_.count(tp) > 0) continue;
    std::optional<std::vector<BrokerId>> isr = partition->ProposeIsrShrink();
    if (isr.has_value()) WriteIsr(*partition, std::move(*isr));
  }
}

void ReplicaManager::WriteIsr(Partition& partition, std::vector<BrokerId> isr) {
  const TopicPartition tp = partition.tp();
  const uint64_t proposal = next_isr_proposal_++;
  isr_proposals_[tp] = proposal;
  zk::PartitionState state{.leader = local_,
                           .leader_epoch = partition.leader_epoch(),
                           .isr = std::move(isr),
                           .controller_epoch = controller_epoch_};
  const std::string path = zk::PartitionStatePath(tp.topic, tp.partition);
  zk_.SetData(
      path, zk::EncodePartitionState(state), partition.zk_version(),
      Guarded([this, tp, proposal, path, state](Result<ZnodeStat> stat) {
        if (stat.ok() || stat.status().code() != Errc::kBadVersion) {
          return FinishIsrWrite(tp, proposal, state.isr,
                                stat.ok() ? Result<int32_t>(stat->version) : stat.status());
        }
        // ReplicationUtils.checkLeaderAndIsrZkData (0.10.0.1 to 2.x, KAFKA-1382): a write
        // refused for its version may be this broker's own earlier attempt, applied before
        // its answer was lost with the connection. When the znode holds exactly the state
        // written (leader, epoch, ISR, controller epoch), the update succeeded at the
        // znode's version; otherwise the controller rewrote it and its LeaderAndIsr follows.
        zk_.GetData(
            path, /*watch=*/false,
            Guarded([this, tp, proposal, state, refused = stat.status()](Result<ZnodeData> data) {
              Result<int32_t> version = refused;
              if (data.ok()) {
                Result<zk::PartitionState> written = zk::DecodePartitionState(data->data);
                if (written.ok() && *written == state) version = data->stat.version;
              }
              FinishIsrWrite(tp, proposal, state.isr, version);
            }));
      }));
}

void ReplicaManager::FinishIsrWrite(const TopicPartition& tp, uint64_t proposal,
                                    const std::vector<BrokerId>& isr, Result<int32_t> version) {
  auto pending = isr_proposals_.find(tp);
  if (pending == isr_proposals_.end() || pending->second != proposal) return;
  isr_proposals_.erase(pending);
  Partition* current = GetPartition(tp);
  if (current == nullptr || !current->isr_change_in_flight()) return;
  if (!version.ok()) {
    // BADVERSION: the controller rewrote the state; its LeaderAndIsr will follow.
    Emit(seams_.events, ev::kIsrUpdateFailed,
         {{field::kTopic, tp.topic},
          {field::kPartition, tp.partition.value()},
          {field::kError, ErrcName(version.status().code())}});
    current->AbandonIsrChange();
    return;
  }
  ++isr_writes_;
  current->ApplyIsrChange(isr, *version);
  // ReplicationUtils.propagateIsrChanges: the controller re-reads these partitions.
  CreateWithParents(
      zk_, zk::IsrChangeNotificationSequentialPath(),
      zk::EncodeIsrChangeNotification({zk::TopicAndPartition{tp.topic, tp.partition}}),
      CreateMode::kPersistentSequential, nullptr);
  PartitionChanged(tp);
}

// ---- HW checkpoint ------------------------------------------------------------------------------

void ReplicaManager::ScheduleHighWatermarkCheckpoint() {
  const TimeUs period_us =
      std::max<TimeUs>(1, config_.replica_high_watermark_checkpoint_interval_ms * kUsPerMs);
  timers_.Schedule(period_us, [this]() {
    if (Status status = CheckpointHighWatermarks(); !status.ok()) {
      Emit(seams_.events, ev::kHwCheckpointError, {{field::kError, status.ToString()}});
      // Kafka 0.10.0.1's checkpointHighWatermarks halts on an IOException (Runtime.halt(1));
      // 1.x/2.0's CheckpointFile.write takes the log dir offline, and with its only dir
      // offline the broker halts (LogManager.handleLogDirFailure).
      if (IsLogDirFailure(status)) {
        StorageFailure(
            Status(Errc::kKafkaStorageError,
                   "writing the high watermark checkpoint failed: " + status.ToString()));
      }
    }
    ScheduleHighWatermarkCheckpoint();
  });
}

Status ReplicaManager::CheckpointHighWatermarks() {
  const std::vector<std::string>& dirs = seams_.logs.config().log_dirs;
  std::map<std::string, std::map<TopicPartition, Offset>> by_dir;
  std::vector<std::map<TopicPartition, Offset>*> dir_at;  // by_dir's map of each log dir index
  dir_at.reserve(dirs.size());
  for (const std::string& dir : dirs) dir_at.push_back(&by_dir[dir]);
  // The logs come in partition order: each goes at the end of its dir's map.
  seams_.logs.ForEachLog([&](const TopicPartition& tp, const Log&, size_t dir_index) {
    Offset hw{0};
    if (const Partition* partition = GetPartition(tp); partition != nullptr) {
      hw = partition->high_watermark();
    } else if (auto checkpointed = checkpointed_hw_.find(tp);
               checkpointed != checkpointed_hw_.end()) {
      hw = checkpointed->second;
    } else {
      return;
    }
    std::map<TopicPartition, Offset>& high_watermarks = *dir_at[dir_index];
    high_watermarks.emplace_hint(high_watermarks.end(), tp, hw);
  });
  Status first_error;
  for (const auto& [dir, high_watermarks] : by_dir) {
    Status status = WriteHighWatermarks(seams_.env, dir, high_watermarks);
    if (!status.ok() && first_error.ok()) first_error = status;
  }
  return first_error;
}

void ReplicaManager::StorageFailure(const Status& error) {
  if (seams_.on_storage_failure) seams_.on_storage_failure(error);
}

// ---- State ------------------------------------------------------------------------------------

Partition* ReplicaManager::GetPartition(const TopicPartition& tp) {
  return partition_index_.Find(tp);
}

const std::vector<const Partition*>& ReplicaManager::Partitions() const {
  if (partition_list_stale_) {
    partition_list_.clear();
    partition_list_.reserve(partitions_.size());
    for (const auto& [tp, partition] : partitions_) {
      partition->set_list_index(partition_list_.size());
      partition_list_.push_back(partition.get());
    }
    partition_list_stale_ = false;
  }
  return partition_list_;
}

void ReplicaManager::TakeChangedPartitions(std::vector<const Partition*>& out) {
  out.assign(changed_partitions_.begin(), changed_partitions_.end());
  for (Partition* partition : changed_partitions_) partition->ClearChangeMark();
  changed_partitions_.clear();
}

void ReplicaManager::PartitionsAddedOrRemoved() {
  ++partitions_version_;
  partition_list_stale_ = true;
}

std::vector<TopicPartition> ReplicaManager::LedPartitions() const {
  std::vector<TopicPartition> out;
  for (const auto& [tp, partition] : partitions_) {
    if (partition->is_leader()) out.push_back(tp);
  }
  return out;
}

void ReplicaManager::PartitionChanged(const TopicPartition& tp) {
  produce_purgatory_.CheckAndComplete(tp);
  fetch_purgatory_.CheckAndComplete(tp);
}

}  // namespace ksim
