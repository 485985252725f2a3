#include "core/clients/consumer/consumer_coordinator.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <variant>

#include "core/base/check.h"
#include "core/base/trace_names.h"

namespace ksim {
namespace {

nlohmann::ordered_json PartitionNames(const std::vector<TopicPartition>& partitions) {
  nlohmann::ordered_json names = nlohmann::ordered_json::array();
  for (const TopicPartition& tp : partitions) names.push_back(ToString(tp));
  return names;
}

bool ResetsMember(Errc error) {
  return error == Errc::kIllegalGeneration || error == Errc::kUnknownMemberId;
}

bool NeedsRejoin(Errc error) { return error == Errc::kRebalanceInProgress || ResetsMember(error); }

// A commit retried "without bound" (commitOffsetsSync before 0.10.2).
constexpr TimeUs kNoDeadline = std::numeric_limits<TimeUs>::max();

// KafkaConsumer.DEFAULT_CLOSE_TIMEOUT_MS (0.10.2 on, KIP-102): close() bounds the coordinator's
// close by min(this, request.timeout.ms).
constexpr int64_t kDefaultCloseTimeoutMs = 30000;

}  // namespace

ConsumerCoordinator::ConsumerCoordinator(const ConsumerConfig& config, ConsumerNetwork& network,
                                         Fetcher& fetcher, Timers& timers, const Clock& clock,
                                         EventSink events, std::function<void()> on_progress,
                                         std::function<bool()> polling)
    : config_(config),
      network_(network),
      fetcher_(fetcher),
      timers_(timers),
      clock_(clock),
      events_(std::move(events)),
      on_progress_(std::move(on_progress)),
      polling_(std::move(polling)) {
  for (const std::string& name : config_.partition_assignment_strategy) {
    std::unique_ptr<PartitionAssignor> assignor = MakePartitionAssignor(name);
    KSIM_CHECK_MSG(assignor != nullptr, "partition.assignment.strategy names an unknown assignor");
    assignors_.push_back(std::move(assignor));
  }
  KSIM_CHECK(!assignors_.empty());
  next_auto_commit_us_ = clock_.Now() + config_.auto_commit_interval_ms * kUsPerMs;
}

void ConsumerCoordinator::Progress() {
  if (closed_) {
    // The consumer no longer steps: Close's commit advances from here.
    if (close_commit_pending_ && !pending_commits_.empty()) SendCommits();
    return;
  }
  if (on_progress_) on_progress_();
}

int32_t ConsumerCoordinator::RebalanceTimeoutMs() const {
  // JoinGroup v0 has no rebalance timeout: the coordinator waits the session timeout
  // (0.10.0.1:GroupMetadata.rebalanceTimeout, the largest sessionTimeoutMs).
  return BackgroundHeartbeat() ? config_.max_poll_interval_ms : config_.session_timeout_ms;
}

TimeUs ConsumerCoordinator::SyncCommitDeadline(int64_t bound_ms) const {
  // 0.10.0.1 and 0.10.1.0 ConsumerCoordinator.commitOffsetsSync: `while (true)`, sleeping
  // retryBackoffMs after each retriable failure; 0.10.2.0 to 2.0.0: until `timeoutMs` passed.
  if (config_.release < KafkaRelease::k0_10_2) return kNoDeadline;
  return clock_.Now() + bound_ms * kUsPerMs;
}

void ConsumerCoordinator::RetryLater() {
  if (retry_scheduled_) return;
  retry_scheduled_ = true;
  timers_.Schedule(config_.retry_backoff_ms * kUsPerMs, [this] {
    retry_scheduled_ = false;
    Progress();
  });
}

void ConsumerCoordinator::Subscribe(std::vector<std::string> topics, RebalanceListener listener) {
  KSIM_CHECK(!config_.group_id.empty());
  KSIM_CHECK(!topics.empty());
  topics_ = std::move(topics);
  listener_ = std::move(listener);
  needs_rejoin_ = true;
  network_.AddTopics(topics_);
}

void ConsumerCoordinator::Step(bool may_rejoin) {
  if (closed_ || config_.group_id.empty()) return;
  if (subscribed() || !pending_commits_.empty()) EnsureCoordinator();
  if (!pending_commits_.empty()) SendCommits();
  if (heartbeat_due_ && polling_ && polling_()) {
    // 0.10.0's KafkaConsumer.pollOnce: client.executeDelayedTasks(now) runs the HeartbeatTask.
    heartbeat_due_ = false;
    HeartbeatTask();
  }
  if (awaiting_metadata_) {
    JoinGroupResponse joined = *awaiting_metadata_;
    awaiting_metadata_.reset();
    Assign(joined);
  }
  // ConsumerCoordinator.needRejoin: the leader rebalances when the metadata of the group's topics
  // differs from what it assigned (a topic it could not see then, a partition count changed).
  if (state_ == State::kStable && assignment_snapshot_ &&
      *assignment_snapshot_ != MetadataSnapshot()) {
    assignment_snapshot_.reset();
    needs_rejoin_ = true;
  }
  if (!subscribed() || !may_rejoin || !coordinator_ || !needs_rejoin_) return;
  if (state_ != State::kUnjoined && state_ != State::kStable) return;
  if (clock_.Now() < join_not_before_us_) return RetryLater();
  StartRejoin();
}

// ---- Coordinator discovery (FindCoordinator) -------------------------------------------

void ConsumerCoordinator::EnsureCoordinator() {
  if (coordinator_ || finding_ || (closed_ && !close_commit_pending_)) return;
  if (clock_.Now() < find_not_before_us_) return RetryLater();
  finding_ = true;
  FindCoordinatorRequest request;
  request.coordinator_key = config_.group_id;
  network_.Send(network_.AnyBroker(), std::move(request), [this](Result<Message> response) {
    finding_ = false;
    const auto* found = response.ok() ? std::get_if<FindCoordinatorResponse>(&*response) : nullptr;
    if (found == nullptr || found->error_code != Errc::kNone) {
      find_not_before_us_ = clock_.Now() + config_.retry_backoff_ms * kUsPerMs;
      if (found == nullptr) network_.RequestUpdate();
      return RetryLater();
    }
    coordinator_ = found->coordinator.host;
    session_reset_us_ = clock_.Now();  // Kafka: heartbeat.resetSessionTimeout()
    Emit(events_, ev::kCoordinatorFound,
         EventFields{{field::kGroup, config_.group_id},
                     {field::kBroker, found->coordinator.node_id.value()}});
    if (!BackgroundHeartbeat() && state_ == State::kStable) {
      // 0.10.0's handleGroupMetadataResponse: "start sending heartbeats only if we have a valid
      // generation" (heartbeatTask.reset(): one now). A member that lost its coordinator for not
      // polling learns at once that it was removed.
      SendHeartbeat();
      ScheduleHeartbeat();
    }
    Progress();
  });
}

void ConsumerCoordinator::CoordinatorDead() {
  if (!coordinator_) return;
  const std::string old = *coordinator_;
  coordinator_.reset();
  // A heartbeat still awaiting the old coordinator's answer (a dead broker's arrives only with the
  // disconnect) no longer holds back heartbeats to the next one.
  heartbeat_in_flight_ = false;
  ++heartbeat_epoch_;
  // Kafka 0.11's coordinatorDead: "disconnect from the coordinator to ensure that there are no
  // in-flight requests remaining": commits and offset fetches stuck there fail now and are sent
  // again to the next coordinator.
  network_.Disconnect(old);
  Progress();
}

void ConsumerCoordinator::OnDisconnect(std::string_view peer) {
  if (coordinator_ && *coordinator_ == peer) CoordinatorDead();
}

bool ConsumerCoordinator::CoordinatorError(Errc error) const {
  return error == Errc::kNotCoordinator || error == Errc::kCoordinatorNotAvailable ||
         error == Errc::kRequestTimedOut || error == Errc::kNetworkException;
}

// ---- Joining (JoinGroup, SyncGroup) ----------------------------------------------------

std::map<std::string, int32_t> ConsumerCoordinator::MetadataSnapshot() const {
  std::map<std::string, int32_t> snapshot;
  for (const std::string& topic : assignment_topics_) {
    if (std::optional<int32_t> count = network_.PartitionCount(topic)) snapshot[topic] = *count;
  }
  return snapshot;
}

void ConsumerCoordinator::StartRejoin() {
  assignment_snapshot_.reset();
  // onJoinPrepare: commit what was consumed (auto commit), then hand the partitions back.
  auto revoke_and_join = [this] {
    if (closed_) return;
    if (!revoked_) {
      const std::vector<TopicPartition> revoked = fetcher_.assignment();
      revoked_ = true;
      fetcher_.Assign({});
      Emit(events_, ev::kPartitionsRevoked,
           EventFields{{field::kGroup, config_.group_id},
                       {field::kPartitions, PartitionNames(revoked)}});
      if (listener_.on_revoked) listener_.on_revoked(revoked);
    }
    SendJoinGroup();
  };
  const std::map<TopicPartition, Offset> positions = fetcher_.positions();
  if (!revoked_ && config_.enable_auto_commit && generation_ >= 0 && !positions.empty()) {
    // maybeAutoCommitOffsetsSync: retried while retriable (0.10.2 on: for the rebalance timeout).
    state_ = State::kPreparing;
    SendCommit(PendingCommit{positions, [revoke_and_join](Status) { revoke_and_join(); },
                             SyncCommitDeadline(RebalanceTimeoutMs())});
    return;
  }
  revoke_and_join();
}

void ConsumerCoordinator::SendJoinGroup() {
  if (!coordinator_) {
    state_ = State::kUnjoined;
    return Progress();
  }
  state_ = State::kJoining;
  JoinGroupRequest request;
  request.group_id = config_.group_id;
  request.session_timeout_ms = config_.session_timeout_ms;
  request.rebalance_timeout_ms = RebalanceTimeoutMs();
  request.member_id = member_id_;
  const Bytes subscription = EncodeSubscription(ConsumerSubscription{topics_});
  for (const auto& assignor : assignors_) {
    request.group_protocols.push_back(GroupProtocol{std::string(assignor->Name()), subscription});
  }
  join_in_flight_ = true;
  network_.Send(*coordinator_, std::move(request), [this](Result<Message> response) {
    join_in_flight_ = false;
    OnJoinGroup(std::move(response));
  });
}

void ConsumerCoordinator::OnJoinGroup(Result<Message> response) {
  if (closed_ || state_ != State::kJoining) return;
  const auto* joined = response.ok() ? std::get_if<JoinGroupResponse>(&*response) : nullptr;
  const Errc error = joined != nullptr ? joined->error_code
                     : response.ok()   ? Errc::kUnknownServerError
                                       : response.status().code();
  if (error != Errc::kNone) {
    state_ = State::kUnjoined;
    needs_rejoin_ = true;
    if (error == Errc::kUnknownMemberId) {
      member_id_.clear();  // join again at once as a new member
    } else if (CoordinatorError(error)) {
      CoordinatorDead();
    } else {
      if (error != Errc::kRebalanceInProgress) {
        // INVALID_SESSION_TIMEOUT, INCONSISTENT_GROUP_PROTOCOL, ...: Kafka throws them from
        // poll(); here the member says so and tries again after retry.backoff.ms.
        Emit(events_, ev::kGroupJoinFailed,
             EventFields{{field::kGroup, config_.group_id},
                         {field::kError, std::string(ErrcName(error))}});
      }
      join_not_before_us_ = clock_.Now() + config_.retry_backoff_ms * kUsPerMs;
    }
    return Progress();
  }
  member_id_ = joined->member_id;
  generation_ = joined->generation_id;
  Emit(events_, ev::kGroupJoined,
       EventFields{{field::kGroup, config_.group_id},
                   {field::kGeneration, generation_},
                   {field::kMemberId, member_id_},
                   {field::kLeader, joined->leader_id},
                   {field::kProtocol, joined->group_protocol}});
  if (joined->leader_id == member_id_) {
    awaiting_metadata_version_ = network_.version();
    return Assign(*joined);
  }
  SendSyncGroup({});
}

// The leader's step (ConsumerCoordinator.performAssignment).
void ConsumerCoordinator::Assign(const JoinGroupResponse& joined) {
  if (closed_ || state_ != State::kJoining || joined.generation_id != generation_) return;
  const PartitionAssignor* assignor = nullptr;
  for (const auto& candidate : assignors_) {
    if (candidate->Name() == joined.group_protocol) assignor = candidate.get();
  }
  std::map<std::string, ConsumerSubscription> subscriptions;
  std::vector<std::string> topics;
  for (const GroupMember& member : joined.members) {
    Result<ConsumerSubscription> subscription = DecodeSubscription(member.member_metadata);
    if (!subscription.ok()) continue;  // a damaged subscription gets nothing
    for (const std::string& topic : subscription->topics) topics.push_back(topic);
    subscriptions.emplace(member.member_id, std::move(*subscription));
  }
  if (assignor == nullptr) {
    // The coordinator chose a protocol this member did not offer: rejoin.
    return RejoinAfter(Errc::kInconsistentGroupProtocol);
  }
  network_.AddTopics(topics);
  std::map<std::string, int32_t> partitions_per_topic;
  bool missing = false;
  for (const std::string& topic : topics) {
    if (std::optional<int32_t> count = network_.PartitionCount(topic)) {
      partitions_per_topic[topic] = *count;
    } else {
      missing = true;
    }
  }
  if (missing && network_.version() == awaiting_metadata_version_) {
    // Wait for a metadata answer that covers the members' topics (then: skip unknown ones).
    awaiting_metadata_ = joined;
    network_.RequestUpdate();
    return;
  }
  assignment_topics_.assign(topics.begin(), topics.end());
  assignment_snapshot_ = partitions_per_topic;
  std::vector<GroupAssignment> assignments;
  for (const auto& [member, assignment] :
       AssignGroup(*assignor, partitions_per_topic, subscriptions)) {
    assignments.push_back(GroupAssignment{member, EncodeAssignment(assignment)});
  }
  SendSyncGroup(std::move(assignments));
}

void ConsumerCoordinator::SendSyncGroup(std::vector<GroupAssignment> assignments) {
  if (!coordinator_) {
    state_ = State::kUnjoined;
    needs_rejoin_ = true;
    return Progress();
  }
  state_ = State::kSyncing;
  SyncGroupRequest request;
  request.group_id = config_.group_id;
  request.generation_id = generation_;
  request.member_id = member_id_;
  request.group_assignment = std::move(assignments);
  network_.Send(*coordinator_, std::move(request),
                [this](Result<Message> response) { OnSyncGroup(std::move(response)); });
}

void ConsumerCoordinator::OnSyncGroup(Result<Message> response) {
  if (closed_ || state_ != State::kSyncing) return;
  const auto* synced = response.ok() ? std::get_if<SyncGroupResponse>(&*response) : nullptr;
  Errc error = synced != nullptr ? synced->error_code
               : response.ok()   ? Errc::kUnknownServerError
                                 : response.status().code();
  Result<ConsumerAssignment> assignment = Status(Errc::kCorruption, "no assignment");
  if (error == Errc::kNone) {
    assignment = DecodeAssignment(synced->member_assignment);
    if (!assignment.ok()) error = Errc::kRebalanceInProgress;  // damaged: ask again
  }
  if (error != Errc::kNone) return RejoinAfter(error);
  state_ = State::kStable;
  needs_rejoin_ = false;
  revoked_ = false;
  std::vector<TopicPartition> partitions = assignment->partitions;
  std::sort(partitions.begin(), partitions.end());
  fetcher_.Assign(partitions);
  Emit(events_, ev::kPartitionsAssigned,
       EventFields{{field::kGroup, config_.group_id},
                   {field::kPartitions, PartitionNames(partitions)}});
  if (listener_.on_assigned) listener_.on_assigned(partitions);
  session_reset_us_ = clock_.Now();
  ScheduleHeartbeat();
  Progress();
}

void ConsumerCoordinator::RejoinAfter(Errc error) {
  needs_rejoin_ = true;
  if (ResetsMember(error)) {
    member_id_.clear();
    generation_ = -1;
  }
  if (CoordinatorError(error)) CoordinatorDead();
  // A JoinGroup in flight stays the only one: its own answer decides what comes next (Kafka's
  // AbstractCoordinator sends no JoinGroup while joinFuture is pending; a heartbeat's
  // resetGeneration does not clear it). Abandoning it for a second JoinGroup without a member id
  // would leave the first one's member in the group (a ghost the coordinator may make leader).
  if ((state_ == State::kJoining && !join_in_flight_) || state_ == State::kSyncing) {
    state_ = State::kUnjoined;
  }
  if (!NeedsRejoin(error) && !CoordinatorError(error)) {
    join_not_before_us_ = clock_.Now() + config_.retry_backoff_ms * kUsPerMs;
  }
  Progress();
}

// ---- Heartbeats (0.10.1's HeartbeatThread, 0.10.0's HeartbeatTask) --------------------

void ConsumerCoordinator::ScheduleHeartbeat() {
  timers_.Cancel(heartbeat_timer_);
  heartbeat_due_ = false;
  // The next beat, or the end of the session if that comes first (checked then, as Kafka's
  // HeartbeatThread wakes at least every retry.backoff.ms).
  const TimeUs session_us = static_cast<TimeUs>(config_.session_timeout_ms) * kUsPerMs;
  const TimeUs session_end_us = session_reset_us_ + session_us + 1;
  TimeUs delay_us = static_cast<TimeUs>(config_.heartbeat_interval_ms) * kUsPerMs;
  if (coordinator_ && session_end_us > clock_.Now()) {
    delay_us = std::min(delay_us, session_end_us - clock_.Now());
  }
  heartbeat_timer_ = timers_.Schedule(delay_us, [this] {
    heartbeat_timer_ = 0;
    if (!BackgroundHeartbeat() && !(polling_ && polling_())) {
      // 0.10.0: the task is due, and runs when the application next calls poll().
      heartbeat_due_ = true;
      return;
    }
    HeartbeatTask();
  });
}

void ConsumerCoordinator::HeartbeatTask() {
  if (closed_ || state_ != State::kStable) return;
  // 0.10.0's HeartbeatTask.run: nothing while "awaiting a rebalance" (needRejoin()); the poll that
  // runs it rejoins first (pollOnce: ensurePartitionAssignment, then executeDelayedTasks).
  if (!BackgroundHeartbeat() && needs_rejoin_) return;
  const TimeUs session_us = static_cast<TimeUs>(config_.session_timeout_ms) * kUsPerMs;
  if (coordinator_ && clock_.Now() - session_reset_us_ > session_us) {
    // Kafka's sessionTimeoutExpired -> coordinatorDead: no answer from the coordinator for a
    // whole session; it may be dead, and the group may live on another broker. Before 0.10.1
    // this is also what a consumer that did not poll for a session finds at its next poll (its
    // member is gone by then: the next heartbeat answers UNKNOWN_MEMBER_ID).
    Emit(events_, ev::kCoordinatorUnknown,
         EventFields{{field::kGroup, config_.group_id}, {field::kReason, "session_timeout"}});
    CoordinatorDead();
  }
  SendHeartbeat();
  ScheduleHeartbeat();
}

void ConsumerCoordinator::SendHeartbeat() {
  if (!coordinator_) return EnsureCoordinator();
  if (heartbeat_in_flight_) return;
  heartbeat_in_flight_ = true;
  HeartbeatRequest request;
  request.group_id = config_.group_id;
  request.generation_id = generation_;
  request.member_id = member_id_;
  const int32_t generation = generation_;
  const uint64_t epoch = heartbeat_epoch_;
  network_.Send(
      *coordinator_, std::move(request), [this, generation, epoch](Result<Message> response) {
        if (epoch != heartbeat_epoch_) return;  // to a coordinator forgotten since
        heartbeat_in_flight_ = false;
        if (closed_) return;
        const auto* beat = response.ok() ? std::get_if<HeartbeatResponse>(&*response) : nullptr;
        const Errc error = beat != nullptr ? beat->error_code
                           : response.ok() ? Errc::kUnknownServerError
                                           : response.status().code();
        // Kafka's receiveHeartbeat: any answer from the coordinator shows it alive.
        if (beat != nullptr) session_reset_us_ = clock_.Now();
        if (error == Errc::kNone || generation != generation_) return;
        if (CoordinatorError(error)) return CoordinatorDead();
        if (NeedsRejoin(error)) return RejoinAfter(error);
      });
}

// ---- Offsets (OffsetFetch, OffsetCommit) ---------------------------------------------

void ConsumerCoordinator::FetchCommittedOffsets() {
  const std::vector<TopicPartition> needing = fetcher_.NeedingPosition();
  if (needing.empty() || closed_) return;
  if (config_.group_id.empty()) {
    // No group, nothing committed: straight to auto.offset.reset.
    for (const TopicPartition& tp : needing) fetcher_.Reset(tp);
    return;
  }
  if (!coordinator_) return EnsureCoordinator();
  if (offset_fetch_in_flight_) return;
  offset_fetch_in_flight_ = true;
  for (const TopicPartition& tp : needing) fetcher_.MarkAwaitingCommitted(tp);
  OffsetFetchRequest request;
  request.group_id = config_.group_id;
  request.partitions = needing;
  network_.Send(*coordinator_, std::move(request), [this, needing](Result<Message> response) {
    offset_fetch_in_flight_ = false;
    const auto* fetched = response.ok() ? std::get_if<OffsetFetchResponse>(&*response) : nullptr;
    Errc error = fetched != nullptr ? fetched->error_code
                 : response.ok()    ? Errc::kUnknownServerError
                                    : response.status().code();
    if (error == Errc::kNone) {
      for (const OffsetFetchPartitionResponse& partition : fetched->responses) {
        if (partition.error_code != Errc::kNone) {
          error = partition.error_code;
          continue;
        }
        Emit(events_, ev::kOffsetFetched,
             EventFields{{field::kGroup, config_.group_id},
                         {field::kTopic, partition.tp.topic},
                         {field::kPartition, partition.tp.partition.value()},
                         {field::kOffset, partition.offset.value()}});
        fetcher_.OnCommitted(partition.tp, partition.offset);
      }
    }
    // Whatever was not answered is looked up again.
    for (const TopicPartition& tp : needing) fetcher_.OnCommittedFailed(tp);
    if (CoordinatorError(error)) CoordinatorDead();
    if (error != Errc::kNone) RetryLater();
    Progress();
  });
}

void ConsumerCoordinator::Commit(std::map<TopicPartition, Offset> offsets,
                                 std::function<void(Status)> done) {
  auto fail_soon = [this, &done](Status status) {
    timers_.Schedule(0, [done = std::move(done), status] {
      if (done) done(status);
    });
  };
  if (config_.group_id.empty()) {
    return fail_soon(Status(Errc::kInvalidGroupId, "commit without a group.id"));
  }
  if (offsets.empty()) offsets = fetcher_.positions();
  if (offsets.empty()) return fail_soon(Status::Ok());
  if (subscribed() && state_ != State::kStable) {
    // Kafka's CommitFailedException: the generation is gone, the partitions may be elsewhere.
    return fail_soon(Status(Errc::kRebalanceInProgress, "commit failed: the group rebalances"));
  }
  pending_commits_.push_back(
      PendingCommit{std::move(offsets), std::move(done),
                    clock_.Now() + static_cast<TimeUs>(config_.request_timeout_ms) * kUsPerMs});
  SendCommits();
  if (heartbeat_due_) {
    // Before 0.10.1: commitSync's client.poll(future) runs the due HeartbeatTask.
    heartbeat_due_ = false;
    HeartbeatTask();
  }
}

void ConsumerCoordinator::SendCommits() {
  if (!coordinator_) {
    EnsureCoordinator();
    const TimeUs now = clock_.Now();
    for (auto it = pending_commits_.begin(); it != pending_commits_.end();) {
      if (it->deadline_us > now) {
        ++it;
        continue;
      }
      std::function<void(Status)> done = std::move(it->done);
      it = pending_commits_.erase(it);
      if (done) done(Status(Errc::kCoordinatorNotAvailable, "no coordinator before the timeout"));
    }
    if (!pending_commits_.empty()) RetryLater();
    return;
  }
  std::vector<PendingCommit> commits = std::move(pending_commits_);
  pending_commits_.clear();
  for (PendingCommit& commit : commits) SendCommit(std::move(commit));
}

// deadline_us 0: one attempt (the periodic auto commit); else retried on retriable errors after
// retry.backoff.ms until the deadline (kNoDeadline: for good).
void ConsumerCoordinator::SendCommit(PendingCommit commit) {
  auto emit = [this](const std::map<TopicPartition, Offset>& offsets,
                     const std::map<TopicPartition, Errc>& errors) {
    for (const auto& [tp, offset] : offsets) {
      auto error = errors.find(tp);
      Emit(events_, ev::kOffsetCommit,
           {{field::kGroup, config_.group_id},
            {field::kTopic, tp.topic},
            {field::kPartition, tp.partition.value()},
            {field::kOffset, offset.value()},
            {field::kError,
             std::string(ErrcName(error == errors.end() ? Errc::kNone : error->second))}});
    }
  };
  auto finish = [this, emit](PendingCommit& commit, Errc error,
                             std::map<TopicPartition, Errc> errors) {
    // Kafka's future.isRetriable(): a coordinator error, a disconnect or timeout, or
    // GROUP_LOAD_IN_PROGRESS; CommitFailedException (a rebalance) is not.
    const bool retriable = CoordinatorError(error) || error == Errc::kCoordinatorLoadInProgress;
    if (retriable && commit.deadline_us > clock_.Now()) {
      pending_commits_.push_back(std::move(commit));  // after the next lookup
      return RetryLater();
    }
    emit(commit.offsets, errors);
    if (commit.done) {
      commit.done(error == Errc::kNone ? Status::Ok() : Status(error, "offset commit failed"));
    }
  };
  if (!coordinator_) {
    return finish(commit, Errc::kCoordinatorNotAvailable, {});
  }
  OffsetCommitRequest request;
  request.group_id = config_.group_id;
  request.generation_id = subscribed() ? generation_ : -1;
  request.member_id = subscribed() ? member_id_ : "";
  for (const auto& [tp, offset] : commit.offsets) {
    request.partitions.push_back(OffsetCommitPartition{tp, offset, std::nullopt});
  }
  network_.Send(*coordinator_, std::move(request),
                [this, commit = std::move(commit), finish](Result<Message> response) mutable {
                  const auto* committed =
                      response.ok() ? std::get_if<OffsetCommitResponse>(&*response) : nullptr;
                  Errc error = committed != nullptr ? Errc::kNone
                               : response.ok()      ? Errc::kUnknownServerError
                                                    : response.status().code();
                  std::map<TopicPartition, Errc> errors;
                  if (committed != nullptr) {
                    for (const PartitionError& partition : committed->responses) {
                      if (partition.error_code == Errc::kNone) continue;
                      errors[partition.tp] = partition.error_code;
                      if (error == Errc::kNone) error = partition.error_code;
                    }
                  } else {
                    for (const auto& [tp, offset] : commit.offsets) errors[tp] = error;
                  }
                  if (CoordinatorError(error)) CoordinatorDead();
                  if (NeedsRejoin(error) && subscribed()) RejoinAfter(error);
                  finish(commit, error, std::move(errors));
                });
}

void ConsumerCoordinator::MaybeAutoCommit() {
  if (!config_.enable_auto_commit || config_.group_id.empty() || closed_) return;
  const TimeUs now = clock_.Now();
  if (now < next_auto_commit_us_) return;
  if (!coordinator_) {
    next_auto_commit_us_ = now + config_.retry_backoff_ms * kUsPerMs;
    return EnsureCoordinator();
  }
  next_auto_commit_us_ = now + config_.auto_commit_interval_ms * kUsPerMs;
  const std::map<TopicPartition, Offset> positions = fetcher_.positions();
  if (positions.empty() || (subscribed() && state_ != State::kStable)) return;
  // 0.10.0's AutoCommitTask: "skip the commit when we're rejoining since we'll commit offsets
  // synchronously before the revocation callback is invoked".
  if (!BackgroundHeartbeat() && subscribed() && needs_rejoin_) return;
  SendCommit(PendingCommit{positions, nullptr, 0});
}

void ConsumerCoordinator::Close(std::function<void()> done) {
  // Once: by the commit's outcome or, from 0.10.2, by the close timeout while it is in flight.
  auto left = std::make_shared<bool>(false);
  auto leave = [this, left, done = std::move(done)](Status) mutable {
    if (*left) return;
    *left = true;
    closed_ = true;
    close_commit_pending_ = false;
    timers_.CancelAll();
    retry_scheduled_ = false;
    if (!subscribed() || member_id_.empty() || !coordinator_) {
      if (done) done();
      return;
    }
    LeaveGroupRequest request;
    request.group_id = config_.group_id;
    request.member_id = member_id_;
    network_.Send(*coordinator_, std::move(request), [done = std::move(done)](Result<Message>) {
      if (done) done();
    });
  };
  // maybeAutoCommitOffsetsSync: commitOffsetsSync finds a coordinator first when none is known.
  const std::map<TopicPartition, Offset> positions = fetcher_.positions();
  const bool commit = config_.enable_auto_commit && !config_.group_id.empty() &&
                      !positions.empty() && (!subscribed() || state_ == State::kStable);
  closed_ = true;  // no more joins or heartbeats
  timers_.CancelAll();
  retry_scheduled_ = false;
  heartbeat_due_ = false;
  if (!commit) return leave(Status::Ok());
  close_commit_pending_ = true;
  const int64_t bound_ms = std::min<int64_t>(kDefaultCloseTimeoutMs, config_.request_timeout_ms);
  const TimeUs deadline_us = SyncCommitDeadline(bound_ms);
  if (deadline_us != kNoDeadline) {
    // commitOffsetsSync's client.poll(future, remainingMs): an answer that has not come by then
    // is not waited for.
    timers_.Schedule(deadline_us - clock_.Now(),
                     [leave]() mutable { leave(Status(Errc::kRequestTimedOut, "close timeout")); });
  }
  SendCommit(PendingCommit{positions, std::move(leave), deadline_us});
}

}  // namespace ksim
