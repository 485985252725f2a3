#include "core/cluster/partition.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/base/check.h"
#include "core/base/text.h"
#include "core/base/trace_names.h"
#include "core/record/record_batch.h"

namespace ksim {

namespace {

std::vector<int32_t> Ids(const std::vector<BrokerId>& brokers) {
  std::vector<int32_t> ids;
  ids.reserve(brokers.size());
  for (BrokerId b : brokers) ids.push_back(b.value());
  return ids;
}

// The values of the records at [first, last] in `batches` (already validated by the append),
// as a JSON array of text, null for a null value: the trace's record identity
// (docs/trace-format.md, "append").
void AppendValues(JsonOut& out, ByteView batches, Offset first, Offset last) {
  out.Put('[');
  bool any = false;
  ForEachVerifiedValue(batches, first, last, [&](const std::optional<ByteView>& value) {
    if (any) out.Put(',');
    any = true;
    if (value.has_value()) {
      AppendJsonString(out, AsChars(*value));
    } else {
      out.Put("null");
    }
  });
  out.Put(']');
}

}  // namespace

int64_t IsrCheckPeriodMs(KafkaRelease release, int64_t replica_lag_time_max_ms) {
  // ReplicaManager.startup: scheduler.schedule("isr-expiration", maybeShrinkIsr, period = ...),
  // replicaLagTimeMaxMs at 0.10.0.1 and 0.10.1.1, replicaLagTimeMaxMs / 2 from 0.10.2.0.
  const int64_t period_ms =
      release >= KafkaRelease::k0_10_2 ? replica_lag_time_max_ms / 2 : replica_lag_time_max_ms;
  return std::max<int64_t>(1, period_ms);
}

std::string_view ReplicaRoleName(ReplicaRole role) {
  switch (role) {
    case ReplicaRole::kNone:
      return "none";
    case ReplicaRole::kLeader:
      return "leader";
    case ReplicaRole::kFollower:
      return "follower";
  }
  return "none";
}

std::string_view TruncationPolicyName(TruncationPolicy policy) {
  switch (policy) {
    case TruncationPolicy::kHighWatermark:
      return "high-watermark";
    case TruncationPolicy::kLeaderEpoch:
      return "leader-epoch";
  }
  return "high-watermark";
}

Result<TruncationPolicy> ParseTruncationPolicy(std::string_view name) {
  if (name == "high-watermark") return TruncationPolicy::kHighWatermark;
  if (name == "leader-epoch") return TruncationPolicy::kLeaderEpoch;
  return Status(Errc::kInvalidArgument, "unknown truncation policy \"" + std::string(name) +
                                            "\" (valid: high-watermark, leader-epoch)");
}

TruncationPolicy DefaultTruncationPolicy(KafkaRelease release) {
  // 0.10.0.1's ReplicaManager.makeFollowers: logManager.truncateTo(partition -> HW); from
  // 0.11.0.0 the fetcher asks OffsetsForLeaderEpoch first (AbstractFetcherThread.maybeTruncate).
  return release >= KafkaRelease::k0_11_0 ? TruncationPolicy::kLeaderEpoch
                                          : TruncationPolicy::kHighWatermark;
}

LeaderEpochRules LeaderEpochRulesAt(KafkaRelease release) {
  // Before 0.11 leader-epoch truncation is ksim's choice of policy: the newest form, so those
  // traces do not move with the release.
  if (release < KafkaRelease::k0_11_0) return LeaderEpochRules{};
  LeaderEpochRules rules;
  // OffsetsForLeaderEpoch v1: 2.0.0's ReplicaFetcherThread (offsetForLeaderEpochRequestVersion 1
  // at IBP 2.0-IV0) and AbstractFetcherThread.getOffsetTruncationState; 1.1.0's
  // ReplicaFetcherThread.maybeTruncate takes the v0 offset once.
  rules.answer_names_epoch = release >= KafkaRelease::k2_0;
  // KAFKA-7415: 2.1.0's Partition.makeLeader calls epochCache.assign(leaderEpoch,
  // leaderEpochStartOffset); 2.0.0's does not, and Log.append assigns the first batch's epoch.
  rules.epoch_at_become_leader = release >= KafkaRelease::k2_1;
  // 2.1.0's LeaderEpochFileCache.endOffsetFor answers an epoch below the first entry's with
  // (requestedEpoch, subsequentEpochs.head.startOffset); 2.0.0's answers UNDEFINED.
  rules.answer_below_first_epoch = release >= KafkaRelease::k2_1;
  // 2.1.0's LeaderEpochFileCache.assign: truncateAndAppend; 2.0.0's ignores all but a newer
  // epoch at or after the latest start.
  rules.truncate_conflicting_on_assign = release >= KafkaRelease::k2_1;
  return rules;
}

LeaderEpochCache::AssignRule AssignRuleAt(KafkaRelease release) {
  return LeaderEpochRulesAt(release).truncate_conflicting_on_assign
             ? LeaderEpochCache::AssignRule::kTruncateConflicting
             : LeaderEpochCache::AssignRule::kNewerOnly;
}

LeaderEpochCache::BelowFirstEpoch BelowFirstEpochAt(KafkaRelease release) {
  return LeaderEpochRulesAt(release).answer_below_first_epoch
             ? LeaderEpochCache::BelowFirstEpoch::kFirstStartOffset
             : LeaderEpochCache::BelowFirstEpoch::kUndefined;
}

EpochRequest EpochRequestAt(KafkaRelease release, const ApiVersion& inter_broker_protocol) {
  if (release < KafkaRelease::k0_11_0) return EpochRequest::kV1;
  static const int kFirstSent = FindApiVersion("0.11.0-IV2", KafkaRelease::k0_11_0)->id;
  static const int kFirstV1 = FindApiVersion("2.0-IV0", KafkaRelease::k2_0)->id;
  static const int kFirstV2 = FindApiVersion("2.1-IV1", KafkaRelease::k2_1)->id;
  if (inter_broker_protocol.id < kFirstSent) return EpochRequest::kNone;
  if (inter_broker_protocol.id < kFirstV1) return EpochRequest::kV0;
  return inter_broker_protocol.id < kFirstV2 ? EpochRequest::kV1 : EpochRequest::kV2;
}

Partition::Partition(TopicPartition tp, BrokerId local_broker, Log& log, LeaderEpochCache epochs,
                     ProducerStateManager producers, const Clock& clock, PartitionConfig config,
                     Offset checkpointed_hw, EventSink events)
    : tp_(std::move(tp)),
      local_(local_broker),
      log_(log),
      epochs_(std::move(epochs)),
      producers_(std::move(producers)),
      clock_(clock),
      config_(config),
      events_(std::move(events)) {
  // Kafka's Replica: the HW read from replication-offset-checkpoint, clamped into the log.
  high_watermark_ =
      std::max(log_.log_start_offset(), std::min(checkpointed_hw, log_.log_end_offset()));
  // The producer state must describe exactly this log, or the first append would trip Update.
  KSIM_CHECK(producers_.map_end_offset() == log_.log_end_offset());
  log_.set_observer(this);
  CheckInvariants();
}

Partition::~Partition() {
  // Before anything goes: a holder told of the end may look at nothing here, but must stop
  // holding it.
  if (!quiet_holds_.empty()) EndQuietHolds();
  log_.set_observer(nullptr);
  if (change_marked_ && change_list_ != nullptr) std::erase(*change_list_, this);
}

void Partition::set_change_list(std::vector<Partition*>* changed) {
  if (change_marked_ && change_list_ != nullptr) std::erase(*change_list_, this);
  change_marked_ = false;
  change_list_ = changed;
  MarkChanged();  // a new holder has not seen it yet
}

Result<ProducerStateManager> Partition::LoadProducerState(Env& env, const Log& log,
                                                          int64_t now_ms) {
  ProducerStateManager producers(env, log.dir(), ProducerStateManager::kDefaultExpirationMs,
                                 ProducerStateRulesAt(log.config().release));
  KSIM_RETURN_IF_ERROR(producers.RebuildFromLog(log, now_ms));
  return producers;
}

EventFields Partition::Fields() const {
  EventFields fields;
  fields.Add(field::kTopic, tp_.topic);
  fields.Add(field::kPartition, tp_.partition.value());
  return fields;
}

// ---- Role changes ---------------------------------------------------------------------------

bool Partition::IsStale(LeaderEpoch epoch) const {
  // ReplicaManager.becomeLeaderOrFollower acts only on a leader epoch newer than the current one
  // (an older or equal one is answered STALE_CONTROLLER_EPOCH). A replica that has no role yet
  // (fresh, or stopped) accepts the current epoch again.
  if (epoch < leader_epoch_) return true;
  return epoch == leader_epoch_ && role_ != ReplicaRole::kNone;
}

Result<bool> Partition::MakeLeader(const LeaderAndIsrPartitionState& state) {
  KSIM_CHECK(state.leader == local_);
  if (IsStale(state.leader_epoch)) return false;
  // From 2.1 (KAFKA-7415) makeLeader: epochCache.assign(leaderEpoch, LEO). A follower whose log
  // holds a later epoch than ours asks for it and learns where ours ends. Before 2.1 the epoch
  // waits for the leader's first append in it: until then the leader answers for its previous
  // epoch. The write comes before any change: when it fails the replica stays what it was and
  // the broker halts (a half-made leader would never track its followers, so its ISR and HW
  // would never move; issue 17, R1).
  const Offset leo = log_.log_end_offset();
  KSIM_RETURN_IF_ERROR(TakeObserverError());
  if (LeaderEpochRulesAt(config_.release).epoch_at_become_leader) {
    if (Status written = epochs_.Assign(state.leader_epoch, leo, AssignRuleAt(config_.release));
        !written.ok()) {
      return StorageFailure(written);
    }
  }
  const bool is_new_leader = role_ != ReplicaRole::kLeader;
  MarkChanged();
  role_ = ReplicaRole::kLeader;
  leader_ = local_;
  leader_epoch_ = state.leader_epoch;
  missed_epochs_.reset();
  assigned_replicas_ = state.replicas;
  isr_ = state.isr;
  zk_version_ = state.zk_version;
  isr_change_in_flight_ = false;
  isr_expanding_.reset();
  leader_epoch_start_offset_ = leo;

  // Remote replicas: forget those no longer assigned; a new leader knows no remote LEO until
  // the first fetch.
  const int64_t now_ms = clock_.NowMs();
  if (config_.release >= KafkaRelease::k0_10_2) {
    ResetRemoteReplicas(is_new_leader, leo, now_ms);
  } else {
    // Kafka 0.10.0.1's makeLeader resets the remote LEOs of a new leader and nothing else: each
    // caught-up time is that of the last fetch at this broker's log end in an earlier
    // leadership, or when this broker learned of the replica.
    KeepRemoteReplicasOfAssignment(now_ms);
    for (auto& [replica, remote] : remotes_) {
      if (config_.release < KafkaRelease::k0_10_0) {
        // 0.8.2.2's makeLeader resets every remote LEO, which sets its update time: the lag
        // clock of every follower starts now (Replica.logEndOffset_=).
        remote.log_end_offset.reset();
        remote.last_caught_up_time_ms = now_ms;
      } else if (is_new_leader) {
        remote.log_end_offset.reset();
      }
    }
  }

  EventFields fields = Fields();
  fields.Add(field::kEpoch, leader_epoch_.value());
  fields.Add(field::kIsr, Ids(isr_));
  fields.Add(field::kReplicas, Ids(assigned_replicas_));
  AddLogState(fields);
  Emit(events_, ev::kBecomeLeader, fields);
  // The ISR may be down to the leader alone.
  MaybeIncrementLeaderHw();
  CheckInvariants();
  return true;
}

void Partition::ResetRemoteReplicas(bool is_new_leader, Offset leo, int64_t now_ms) {
  // Kafka 0.10.2+ (KAFKA-4485): the ISR members count as caught up now, the others never
  // (Replica.resetLastCaughtUpTime).
  std::map<BrokerId, RemoteReplicaState> remotes;
  for (BrokerId replica : assigned_replicas_) {
    if (replica == local_) continue;
    RemoteReplicaState remote;
    auto old = remotes_.find(replica);
    if (!is_new_leader && old != remotes_.end()) remote = old->second;
    if (is_new_leader) remote.log_end_offset.reset();
    remote.last_fetch_leader_log_end_offset = leo;
    remote.last_fetch_time_ms = now_ms;
    remote.last_caught_up_time_ms = Contains(isr_, replica) ? now_ms : 0;
    remotes.emplace(replica, remote);
  }
  remotes_ = std::move(remotes);
}

void Partition::KeepRemoteReplicasOfAssignment(int64_t now_ms) {
  std::map<BrokerId, RemoteReplicaState> remotes;
  for (BrokerId replica : assigned_replicas_) {
    if (replica == local_) continue;
    auto old = remotes_.find(replica);
    if (old != remotes_.end()) {
      remotes.emplace(replica, old->second);
      continue;
    }
    // Kafka's Replica starts caught up at its creation (lastCaughtUpTimeMs = time.milliseconds).
    RemoteReplicaState remote;
    remote.last_caught_up_time_ms = now_ms;
    remote.last_fetch_time_ms = now_ms;
    remotes.emplace(replica, remote);
  }
  remotes_ = std::move(remotes);
}

void Partition::ForgetRemoteReplicas() {
  if (config_.release >= KafkaRelease::k0_10_2) {
    remotes_.clear();
    return;
  }
  // Kafka 0.10.0.1 keeps its Replica objects (and their caught-up times) while it follows.
  KeepRemoteReplicasOfAssignment(clock_.NowMs());
  for (auto& [replica, remote] : remotes_) remote.log_end_offset.reset();
}

bool Partition::MakeFollower(const LeaderAndIsrPartitionState& state) {
  KSIM_CHECK(state.leader != local_);
  if (IsStale(state.leader_epoch)) return false;
  const LeaderEpoch old_epoch = leader_epoch_;
  const bool was_follower_of_same_leader =
      role_ == ReplicaRole::kFollower && leader_ == state.leader;
  MarkChanged();
  role_ = ReplicaRole::kFollower;
  leader_epoch_ = state.leader_epoch;
  assigned_replicas_ = state.replicas;
  isr_.clear();  // only the leader tracks the ISR (Kafka's makeFollower empties it)
  zk_version_ = state.zk_version;
  ForgetRemoteReplicas();
  isr_change_in_flight_ = false;
  isr_expanding_.reset();
  leader_epoch_start_offset_.reset();
  // Partition.makeFollower: to 2.0.0 the same leader means nothing to redo, whatever the epoch;
  // 2.1.0 (KAFKA-7395, with KIP-320) redoes it unless the epoch is the same, which a LeaderAndIsr
  // only ever brings as stale (refused before this). A new leader is always a new start.
  const bool nothing_to_redo = config_.release < KafkaRelease::k2_1 || leader_epoch_ == old_epoch;
  if (was_follower_of_same_leader && nothing_to_redo) {
    if (leader_epoch_.value() > old_epoch.value() + 1 && !missed_epochs_) {
      missed_epochs_ = MissedEpochs{.followed = old_epoch, .told = leader_epoch_};
      kept_cuts_.push_back(KeptCut{log_.log_end_offset(), missed_epochs_});
    }
    CheckInvariants();
    return false;
  }
  missed_epochs_.reset();
  leader_ = state.leader;
  EventFields fields = Fields();
  fields.Add(field::kLeader, leader_.value());
  fields.Add(field::kEpoch, leader_epoch_.value());
  AddLogState(fields);
  Emit(events_, ev::kBecomeFollower, fields);
  CheckInvariants();
  return true;
}

void Partition::Stop() {
  MarkChanged();
  role_ = ReplicaRole::kNone;
  leader_ = kNoBroker;
  isr_.clear();
  ForgetRemoteReplicas();
  isr_change_in_flight_ = false;
  isr_expanding_.reset();
  leader_epoch_start_offset_.reset();
  CheckInvariants();
}

Status Partition::Close() {
  // Log.close: producerStateManager.takeSnapshot() at the log end (every batch is applied).
  KSIM_CHECK(producers_.map_end_offset() >= log_.log_end_offset());
  return producers_.TakeSnapshot();
}

// ---- Leader ---------------------------------------------------------------------------------

Result<LogAppendInfo> Partition::AppendAsLeader(MutableByteView batches, int16_t acks) {
  if (role_ != ReplicaRole::kLeader) {
    return Status(Errc::kNotLeaderForPartition,
                  ToString(tp_) + ": broker " + ToString(local_) + " is not the leader");
  }
  // Partition.appendRecordsToLeader: refuse before writing when acks=all cannot be safe.
  const int32_t isr_size = static_cast<int32_t>(isr_.size());
  if (acks == -1 && isr_size < config_.min_insync_replicas) {
    return Status(Errc::kNotEnoughReplicas, "number of insync replicas for partition " +
                                                ToString(tp_) + " is [" + std::to_string(isr_size) +
                                                "], below required minimum [" +
                                                std::to_string(config_.min_insync_replicas) + "]");
  }
  // Log.append (Kafka 1.x/2.0): a client's batches are checked against the producer state
  // before anything is written; a retried batch already in the log is answered, not appended.
  KSIM_ASSIGN_OR_RETURN(const AppendCheck check, ValidateProducerState(batches));
  if (check.duplicate.has_value()) {
    const BatchMetadata& original = *check.duplicate;
    LogAppendInfo info;
    info.first_offset = original.first_offset;
    info.last_offset = original.last_offset;
    info.max_timestamp_ms = original.timestamp_ms;
    info.offset_of_max_timestamp = original.last_offset;
    info.num_records = original.last_offset - original.first_offset + 1;
    EventFields fields = Fields();
    fields.Add(field::kFirstOffset, original.first_offset.value());
    fields.Add(field::kLastOffset, original.last_offset.value());
    fields.Add(field::kFirstSequence, original.first_sequence.value());
    fields.Add(field::kLastSequence, original.last_sequence.value());
    Emit(events_, ev::kDuplicateBatch, fields);
    CheckInvariants();
    return info;
  }
  Result<LogAppendInfo> info = log_.AppendAsLeader(batches, leader_epoch_);
  Status observed = TakeObserverError();
  if (!info.ok()) return info;
  KSIM_RETURN_IF_ERROR(observed);
  EmitAppend(*info, batches, "leader");
  MaybeIncrementLeaderHw();
  CheckInvariants();
  return info;
}

AcksProgress Partition::CheckEnoughReplicasReached(Offset required_offset, int16_t acks) const {
  KSIM_CHECK(acks < 0 || acks > 1);
  if (role_ != ReplicaRole::kLeader) return {true, Errc::kNotLeaderForPartition};
  if (acks < 0) {
    // Partition.checkEnoughReplicasReachOffset (`requiredAcks < 0`: -1, and at 0.8.2 any
    // negative value, which only acks=-1's refusal before the append does not cover).
    if (high_watermark_ < required_offset) return {};
    const int32_t isr_size = static_cast<int32_t>(isr_.size());
    if (isr_size >= config_.min_insync_replicas) return {true, Errc::kNone};
    return {true, Errc::kNotEnoughReplicasAfterAppend};
  }
  // Kafka 0.8's acks=N (0.8.2.2:Partition.checkEnoughReplicasReachOffset): N ISR members, the
  // leader included, hold the batch. An ISR smaller than N waits until it grows back, else the
  // request's timeout answers REQUEST_TIMED_OUT (DelayedProduce); no min.insync.replicas check.
  int32_t count = 0;
  for (BrokerId replica : isr_) {
    if (replica == local_) {
      if (log_.log_end_offset() >= required_offset) ++count;
      continue;
    }
    auto it = remotes_.find(replica);
    if (it != remotes_.end() && it->second.log_end_offset.has_value() &&
        *it->second.log_end_offset >= required_offset) {
      ++count;
    }
  }
  if (count >= acks) return {true, Errc::kNone};
  return {};
}

std::optional<std::vector<BrokerId>> Partition::UpdateFollowerFetch(BrokerId replica,
                                                                    Offset fetch_offset,
                                                                    bool* leo_moved) {
  if (role_ != ReplicaRole::kLeader) return std::nullopt;
  auto it = remotes_.find(replica);
  if (it == remotes_.end()) return std::nullopt;
  RemoteReplicaState& remote = it->second;
  // An older session of it may still hold this quiet.
  if (!quiet_holds_.empty()) CatchUpQuietFollowers(replica);
  const int64_t now_ms = clock_.NowMs();
  const Offset leader_leo = log_.log_end_offset();
  // Replica.updateLogReadResult: caught up now when the fetch reached the leader's LEO (0.10.0.1:
  // isReadFromLogEnd, the only rule before 0.10.2). From 0.10.2 (KAFKA-4485) also caught up as of
  // the previous fetch when it reached the LEO the leader had then (a follower keeping pace with
  // a steady stream never falls behind by this measure).
  // 0.8.2 has no caught-up rule: every fetch updates the follower's LEO and with it the time
  // getOutOfSyncReplicas measures ("stuck" followers), and replica.lag.max.messages catches
  // slow ones (ProposeIsrShrink).
  if (fetch_offset >= leader_leo || config_.release < KafkaRelease::k0_10_0) {
    remote.last_caught_up_time_ms = std::max(remote.last_caught_up_time_ms, now_ms);
  } else if (config_.release >= KafkaRelease::k0_10_2 &&
             fetch_offset >= remote.last_fetch_leader_log_end_offset) {
    remote.last_caught_up_time_ms =
        std::max(remote.last_caught_up_time_ms, remote.last_fetch_time_ms);
  }
  if (remote.log_end_offset != fetch_offset) BumpVersion();
  if (leo_moved != nullptr) *leo_moved = remote.log_end_offset != fetch_offset;
  remote.log_end_offset = fetch_offset;
  remote.last_fetch_leader_log_end_offset = leader_leo;
  remote.last_fetch_time_ms = now_ms;

  // Partition.maybeExpandIsr: an assigned follower outside the ISR whose LEO reached the HW.
  // From 2.1 (KAFKA-7128, 2.1.0's leaderEpochStartOffsetOpt.exists(fetchOffset >= _)) it must
  // also fetch within the leader's current epoch: a leader back from a power loss has a high
  // watermark below what was committed, and a follower missing committed records would
  // otherwise join the ISR and could be elected without them.
  const bool within_epoch =
      config_.release < KafkaRelease::k2_1 ||
      (leader_epoch_start_offset_ && fetch_offset >= *leader_epoch_start_offset_);
  std::optional<std::vector<BrokerId>> expanded;
  if (!isr_change_in_flight_ && !Contains(isr_, replica) && Contains(assigned_replicas_, replica) &&
      fetch_offset >= high_watermark_ && within_epoch) {
    expanded = isr_;
    expanded->push_back(replica);
    isr_change_in_flight_ = true;
    isr_expanding_ = replica;
    BumpVersion();
  }
  // Its LEO moved: the HW may rise (it may already be in the ISR).
  MaybeIncrementLeaderHw();
  CheckInvariants();
  return expanded;
}

void Partition::HoldQuiet(QuietHolder* holder, void* cookie, BrokerId follower,
                          const int64_t* fetched_ms) {
  if (follower != kNoBroker) {
    KSIM_CHECK(role_ == ReplicaRole::kLeader);
    auto it = remotes_.find(follower);
    if (it == remotes_.end()) {
      follower = kNoBroker;  // not a replica of it: its fetches count for nothing
    } else {
      KSIM_CHECK(it->second.log_end_offset == log_.log_end_offset());
      KSIM_CHECK(it->second.last_fetch_leader_log_end_offset == log_.log_end_offset());
    }
  }
  quiet_holds_.push_back(QuietHold{
      .holder = holder, .cookie = cookie, .follower = follower, .fetched_ms = fetched_ms});
}

void Partition::ReleaseQuiet(QuietHolder* holder, void* cookie) {
  for (auto it = quiet_holds_.begin(); it != quiet_holds_.end(); ++it) {
    if (it->holder != holder || it->cookie != cookie) continue;
    if (it->follower != kNoBroker) CatchUpQuietFollowers(it->follower);
    quiet_holds_.erase(it);
    return;
  }
  KSIM_CHECK_MSG(false, "no such quiet hold");
}

void Partition::CatchUpQuietFollowers(BrokerId follower) {
  for (const QuietHold& hold : quiet_holds_) {
    if (hold.follower == kNoBroker || (follower != kNoBroker && hold.follower != follower))
      continue;
    auto it = remotes_.find(hold.follower);
    if (it == remotes_.end()) continue;
    // Each of the session's fetches since the hold began was at the leader's LEO.
    RemoteReplicaState& remote = it->second;
    remote.last_caught_up_time_ms = std::max(remote.last_caught_up_time_ms, *hold.fetched_ms);
    remote.last_fetch_time_ms = std::max(remote.last_fetch_time_ms, *hold.fetched_ms);
  }
}

void Partition::EndQuietHolds() {
  CatchUpQuietFollowers(kNoBroker);
  std::vector<QuietHold> ended;
  ended.swap(quiet_holds_);
  for (const QuietHold& hold : ended) hold.holder->QuietEnded(hold.cookie);
  // The list's room back for the next holds (a hold ends with every append to the partition),
  // unless a QuietEnded placed new ones meanwhile.
  if (quiet_holds_.empty()) {
    ended.clear();
    quiet_holds_.swap(ended);
  }
}

std::optional<std::vector<BrokerId>> Partition::ProposeIsrShrink() {
  if (role_ != ReplicaRole::kLeader || isr_change_in_flight_) return std::nullopt;
  CatchUpQuietFollowers(kNoBroker);
  // Partition.getOutOfSyncReplicas: ISR followers not caught up for more than the lag time.
  const int64_t now_ms = clock_.NowMs();
  std::vector<BrokerId> shrunk;
  bool removed = false;
  for (BrokerId replica : isr_) {
    if (replica != local_) {
      auto it = remotes_.find(replica);
      const int64_t caught_up_ms = it == remotes_.end() ? 0 : it->second.last_caught_up_time_ms;
      if (now_ms - caught_up_ms > config_.replica_lag_time_max_ms) {
        removed = true;
        continue;
      }
      // 0.8.2.2's slow followers: a known LEO more than replica.lag.max.messages behind.
      if (config_.release < KafkaRelease::k0_10_0 && it != remotes_.end() &&
          it->second.log_end_offset &&
          log_.log_end_offset() - *it->second.log_end_offset > config_.replica_lag_max_messages) {
        removed = true;
        continue;
      }
    }
    shrunk.push_back(replica);
  }
  if (!removed) return std::nullopt;
  isr_change_in_flight_ = true;
  BumpVersion();
  return shrunk;
}

void Partition::ApplyIsrChange(std::vector<BrokerId> isr, int32_t zk_version) {
  // No proposal outstanding: the role changed while the write was out (a new LeaderAndIsr
  // dropped the proposal); the controller's state wins.
  if (!isr_change_in_flight_ || role_ != ReplicaRole::kLeader) return;
  isr_change_in_flight_ = false;
  isr_expanding_.reset();
  std::vector<BrokerId> added;
  std::vector<BrokerId> removed;
  for (BrokerId b : isr) {
    if (!Contains(isr_, b)) added.push_back(b);
  }
  for (BrokerId b : isr_) {
    if (!Contains(isr, b)) removed.push_back(b);
  }
  MarkChanged();
  isr_ = std::move(isr);
  zk_version_ = zk_version;
  if (!removed.empty()) {
    EventFields fields = Fields();
    fields.Add(field::kIsr, Ids(isr_));
    fields.Add(field::kRemoved, Ids(removed));
    Emit(events_, ev::kIsrShrink, fields);
  }
  if (!added.empty()) {
    EventFields fields = Fields();
    fields.Add(field::kIsr, Ids(isr_));
    fields.Add(field::kAdded, Ids(added));
    Emit(events_, ev::kIsrExpand, fields);
  }
  MaybeIncrementLeaderHw();
  CheckInvariants();
}

void Partition::AbandonIsrChange() {
  isr_change_in_flight_ = false;
  isr_expanding_.reset();
  BumpVersion();
}

EpochAndEndOffset Partition::EndOffsetForEpoch(LeaderEpoch epoch) const {
  // Partition.lastOffsetForLeaderEpoch: the leader's cache answers (0.11.0.0 to 1.1.0 an offset,
  // LeaderEpochFileCache.endOffsetFor: Long; 2.0.0 the pair, endOffsetFor: (Int, Long)).
  if (!LeaderEpochRulesAt(config_.release).answer_names_epoch) {
    return epochs_.EndOffsetOnlyFor(epoch, log_.log_end_offset());
  }
  return epochs_.EndOffsetFor(epoch, log_.log_end_offset(), BelowFirstEpochAt(config_.release));
}

// ---- Reads ----------------------------------------------------------------------------------

Result<FetchDataInfo> Partition::Read(Offset fetch_offset, int32_t max_bytes, bool from_follower) {
  if (role_ != ReplicaRole::kLeader) {
    return Status(Errc::kNotLeaderForPartition,
                  ToString(tp_) + ": broker " + ToString(local_) + " is not the leader");
  }
  // Consumers see only committed records (below the HW), followers everything. At least one
  // batch comes back even when larger than max_bytes (KIP-74).
  std::optional<Offset> max_offset;
  if (!from_follower) max_offset = high_watermark_;
  return log_.Read(fetch_offset, max_bytes, max_offset, /*min_one_message=*/true);
}

// ---- Follower -------------------------------------------------------------------------------

Result<LogAppendInfo> Partition::AppendAsFollower(ByteView records, Offset leader_hw,
                                                  Offset leader_log_start_offset) {
  if (role_ != ReplicaRole::kFollower) {
    return Status(Errc::kNotLeaderForPartition,
                  ToString(tp_) + ": broker " + ToString(local_) + " is not a follower");
  }
  Result<LogAppendInfo> info = log_.AppendAsFollower(records);
  Status observed = TakeObserverError();
  if (!info.ok()) return info;
  KSIM_RETURN_IF_ERROR(observed);
  if (info->num_batches > 0) EmitAppend(*info, records, "follower");
  // ReplicaFetcherThread.processPartitionData: HW = min(LEO, leader's HW); the log start
  // follows the leader's (kept at or below the new HW so that log start <= HW holds).
  SetHighWatermark(std::min(log_.log_end_offset(), leader_hw));
  const Offset new_log_start = std::min(leader_log_start_offset, high_watermark_);
  if (new_log_start > log_.log_start_offset()) {
    KSIM_RETURN_IF_ERROR(log_.MaybeIncrementLogStartOffset(new_log_start));
    KSIM_RETURN_IF_ERROR(TakeObserverError());
  }
  CheckInvariants();
  return info;
}

TruncationDecision Partition::DecideTruncation(const EpochAndEndOffset& leader_answer) const {
  const Offset leo = log_.log_end_offset();
  TruncationDecision decision;
  if (leader_answer.undefined()) {
    // The leader knows nothing of our epoch: fall back to the initial fetch offset, the HW
    // (0.11.0.0's ReplicaFetcherThread.maybeTruncate: highWatermark(replica, epochOffset)).
    decision.truncate_to = high_watermark_;
    return decision;
  }
  if (!LeaderEpochRulesAt(config_.release).answer_names_epoch) {
    // KIP-101 as first shipped (0.11.0.0 to 1.1.0 ReplicaFetcherThread.maybeTruncate): one
    // round, the leader's offset or our LEO, whichever is lower; the answer names no epoch.
    KSIM_CHECK(leader_answer.epoch == kUndefinedEpoch);
    decision.truncate_to = std::min(leader_answer.end_offset, leo);
    return decision;
  }
  // AbstractFetcherThread.getOffsetTruncationState (Kafka 2.0, KIP-279).
  if (leader_answer.epoch == kUndefinedEpoch) {
    // A v0 answer (KIP-101 without the epoch): trust the offset.
    decision.truncate_to = std::min(leader_answer.end_offset, leo);
    return decision;
  }
  const EpochAndEndOffset ours =
      epochs_.EndOffsetFor(leader_answer.epoch, leo, BelowFirstEpochAt(config_.release));
  if (ours.undefined()) {
    // We did not track epochs back then; the leader answered below our epoch, so its offset is
    // a safe place to cut (KIP-101's behaviour).
    decision.truncate_to = leader_answer.end_offset;
    return decision;
  }
  if (ours.epoch != leader_answer.epoch) {
    // We never had the leader's epoch: cut to where our largest epoch below it ends and ask
    // again for that epoch.
    decision.truncate_to = std::min(ours.end_offset, leo);
    decision.complete = false;
    decision.next_epoch = ours.epoch;
    return decision;
  }
  decision.truncate_to = std::min({ours.end_offset, leader_answer.end_offset, leo});
  return decision;
}

Status Partition::LeaderMustNotTruncate() const {
  // A leader's log is the truth and its HW never goes back: a truncation asked of a leader is
  // a stale follower-side step (a fetch answer that arrived after the role changed).
  if (role_ != ReplicaRole::kLeader) return Status::Ok();
  return Status(Errc::kNotLeaderForPartition, ToString(tp_) + ": broker " + ToString(local_) +
                                                  " is the leader; it never truncates");
}

Status Partition::TruncateTo(Offset offset, std::string_view reason) {
  KSIM_CHECK(offset >= Offset(0));
  KSIM_RETURN_IF_ERROR(LeaderMustNotTruncate());
  const Offset from_leo = log_.log_end_offset();
  if (offset >= from_leo) return Status::Ok();
  Result<bool> truncated = log_.TruncateTo(offset);
  Status observed = TakeObserverError();
  if (!truncated.ok()) return truncated.status();
  KSIM_RETURN_IF_ERROR(observed);
  EventFields fields = Fields();
  fields.Add(field::kFromLeo, from_leo.value());
  fields.Add(field::kTo, log_.log_end_offset().value());
  fields.Add(field::kRecords, from_leo - log_.log_end_offset());
  fields.Add(field::kReason, reason);
  Emit(events_, ev::kTruncate, fields);
  CheckInvariants();
  return Status::Ok();
}

Status Partition::TruncateFullyAndStartAt(Offset offset) {
  KSIM_CHECK(offset >= Offset(0));
  KSIM_RETURN_IF_ERROR(LeaderMustNotTruncate());
  const Offset from_leo = log_.log_end_offset();
  const int64_t records = from_leo - log_.log_start_offset();
  Status status = log_.TruncateFullyAndStartAt(offset);
  Status observed = TakeObserverError();
  KSIM_RETURN_IF_ERROR(status);
  KSIM_RETURN_IF_ERROR(observed);
  EventFields fields = Fields();
  fields.Add(field::kFromLeo, from_leo.value());
  fields.Add(field::kTo, offset.value());
  fields.Add(field::kRecords, records);
  fields.Add(field::kReason, "offset_out_of_range");
  Emit(events_, ev::kTruncate, fields);
  CheckInvariants();
  return Status::Ok();
}

// ---- LogObserver ----------------------------------------------------------------------------

void Partition::OnAppend(const BatchHeader& batch) {
  MarkChanged();  // the LEO moved
  // Log.append: producer state updated with every batch (leader or follower, unvalidated here).
  producers_.Update(batch);
  last_appended_epoch_ = batch.partition_leader_epoch;
  // Log.append: leaderEpochCache.assign(batch.partitionLeaderEpoch, batch.baseOffset). Before
  // 2.1 the cache ignores epochs it already has (and older ones); from 2.1 an older epoch
  // replaces the entries it conflicts with (AssignRuleAt).
  if (batch.partition_leader_epoch < LeaderEpoch(0)) return;
  const LeaderEpochCache::AssignRule rule = AssignRuleAt(config_.release);
  if (rule == LeaderEpochCache::AssignRule::kNewerOnly &&
      batch.partition_leader_epoch <= epochs_.LatestEpoch()) {
    return;
  }
  KeepObserverError(epochs_.Assign(batch.partition_leader_epoch, batch.base_offset, rule));
}

void Partition::OnTruncateTo(Offset end_offset) {
  MarkChanged();
  KeepObserverError(epochs_.TruncateFromEnd(end_offset));
  if (high_watermark_ > end_offset) SetHighWatermark(end_offset);
  // Log.truncateTo: loadProducerState(targetOffset): the latest snapshot at or below the new end,
  // then the batches after it.
  ReloadProducerState();
}

void Partition::OnTruncateFullyAndStartAt(Offset start_offset) {
  MarkChanged();
  KeepObserverError(epochs_.ClearAndFlush());
  SetHighWatermark(start_offset);
  // Log.truncateFullyAndStartAt: producerStateManager.truncate(), then nothing to load.
  KeepObserverError(producers_.Reset());
  producers_.UpdateMapEndOffset(start_offset);
}

void Partition::OnLogStartOffsetIncremented(Offset log_start_offset) {
  MarkChanged();
  KeepObserverError(epochs_.TruncateFromStart(log_start_offset));
  if (high_watermark_ < log_start_offset) SetHighWatermark(log_start_offset);
  // Log.maybeIncrementLogStartOffset / deleteSegments: producerStateManager.truncateHead.
  KeepObserverError(producers_.TruncateHead(log_start_offset));
}

void Partition::OnRoll(Offset base_offset) {
  // Log.roll: every batch below the new segment is applied; snapshot the state there.
  KSIM_CHECK(producers_.map_end_offset() <= base_offset);
  producers_.UpdateMapEndOffset(base_offset);
  KeepObserverError(producers_.TakeSnapshot());
}

void Partition::OnOffline(const Status& error) {
  BumpVersion();
  if (storage_failure_handler_) storage_failure_handler_(error);
}

// ---- Producer state -------------------------------------------------------------------------

Result<AppendCheck> Partition::ValidateProducerState(ByteView batches) const {
  // Log.append validates the records (LogValidator) before the producer state: in a log of an
  // older format an idempotent batch is refused UNSUPPORTED_FOR_MESSAGE_FORMAT, never answered
  // UNKNOWN_PRODUCER_ID or OUT_OF_ORDER_SEQUENCE_NUMBER, and what it accepts has no producer id.
  if (log_.config().message_format_magic < kMagicV2) return AppendCheck{};
  std::vector<BatchHeader> headers;
  BatchIterator iterator(batches, /*verify_crc=*/true);
  while (std::optional<BatchIterator::Item> item = iterator.Next()) {
    headers.push_back(item->header);
  }
  // Damage is the Log's to report (CORRUPT_MESSAGE), as Kafka validates records first.
  if (!iterator.status().ok()) return AppendCheck{};
  return producers_.ValidateAppend(headers);
}

void Partition::ReloadProducerState() {
  Status rebuilt = producers_.RebuildFromLog(log_, clock_.NowMs());
  if (rebuilt.ok()) return;
  KeepObserverError(std::move(rebuilt));
  // Never leave the state ahead of the log: empty at the log end, later batches apply on top.
  (void)producers_.Reset();
  producers_.UpdateMapEndOffset(log_.log_end_offset());
}

// ---- Private --------------------------------------------------------------------------------

bool Partition::MaybeIncrementLeaderHw() {
  if (role_ != ReplicaRole::kLeader) return false;
  // Kafka 0.10's maybeIncrementLeaderHW: min LEO over the ISR, the leader's own included; a
  // follower whose LEO is unknown (no fetch yet in this leadership) holds the HW where it is.
  // A follower whose addition to the ISR is being written counts already: Kafka's maybeExpandIsr
  // writes ZooKeeper while holding the partition's lock, so no append commits between the
  // decision and the new ISR; here the write is asynchronous, and a record committed meanwhile
  // without that follower would be missing on an ISR member (explore unsafe seed 7280).
  // The minimum starts at the leader's LEO: a HW already there cannot rise (the common case of a
  // caught-up partition's every fetch, answered without the walk below).
  if (high_watermark_ >= log_.log_end_offset()) return false;
  Offset min_leo = log_.log_end_offset();
  auto counts = [&](BrokerId replica) {
    if (replica == local_) return true;
    auto it = remotes_.find(replica);
    if (it == remotes_.end() || !it->second.log_end_offset.has_value()) return false;
    min_leo = std::min(min_leo, *it->second.log_end_offset);
    return true;
  };
  for (BrokerId replica : isr_) {
    if (!counts(replica)) return false;
  }
  if (isr_expanding_ && !counts(*isr_expanding_)) return false;
  if (min_leo <= high_watermark_) return false;
  SetHighWatermark(min_leo);
  return true;
}

void Partition::SetHighWatermark(Offset hw) {
  if (hw == high_watermark_) return;
  if (role_ == ReplicaRole::kLeader) KSIM_CHECK(hw > high_watermark_);
  MarkChanged();
  high_watermark_ = hw;
  Emit(events_, ev::kHw,
       {{field::kTopic, tp_.topic},
        {field::kPartition, tp_.partition.value()},
        {field::kHw, hw.value()}});
}

void Partition::EmitAppend(const LogAppendInfo& info, ByteView batches, std::string_view role) {
  if (info.num_batches == 0 || !events_) return;
  // One event per append on every replica: the record values are written into the event's text
  // as they are decoded.
  EventFields fields{{field::kTopic, tp_.topic},
                     {field::kPartition, tp_.partition.value()},
                     {field::kFirstOffset, info.first_offset.value()},
                     {field::kLastOffset, info.last_offset.value()},
                     {field::kLeo, log_.log_end_offset().value()},
                     {field::kEpoch, last_appended_epoch_.value()},
                     {field::kRole, role}};
  fields.AddWith(field::kValues, [&](JsonOut& out) {
    AppendValues(out, batches, info.first_offset, info.last_offset);
  });
  Emit(events_, ev::kAppend, fields);
}

void Partition::AddLogState(EventFields& fields) const {
  fields.Add(field::kLeo, log_.log_end_offset().value());
  fields.Add(field::kLogStartOffset, log_.log_start_offset().value());
  fields.Add(field::kHw, high_watermark_.value());
}

Status Partition::StorageFailure(const Status& cause) {
  Status error(
      Errc::kKafkaStorageError,
      ToString(tp_) + ": leader-epoch-checkpoint or producer snapshot: " + cause.ToString());
  // Kafka 1.x/2.0: CheckpointFile and the producer state's I/O go through the
  // LogDirFailureChannel like the Log's own, and a broker whose only log dir failed halts.
  if (IsStorageFailure(cause) && storage_failure_handler_) storage_failure_handler_(error);
  return error;
}

void Partition::KeepObserverError(Status status) {
  if (status.ok()) return;
  // Reported at once: a hook may run where no caller takes the error back (retention).
  Status error = StorageFailure(status);
  if (observer_error_.ok()) observer_error_ = std::move(error);
}

Status Partition::TakeObserverError() {
  Status error = std::move(observer_error_);
  observer_error_ = Status::Ok();
  return error;
}

void Partition::CheckInvariants() const {
  KSIM_CHECK(log_.log_start_offset() <= high_watermark_);
  KSIM_CHECK(high_watermark_ <= log_.log_end_offset());
  KSIM_CHECK(!isr_change_in_flight_ || role_ == ReplicaRole::kLeader);
}

}  // namespace ksim
