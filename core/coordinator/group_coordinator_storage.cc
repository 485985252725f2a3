// GroupCoordinator: committed offsets and group metadata in __consumer_offsets (Kafka's
// GroupMetadataManager: storeGroup, storeOffsets, getOffsets, loadGroupsForPartition,
// removeGroupsForPartition) and the OffsetCommit / OffsetFetch handlers.
#include <utility>

#include "core/base/check.h"
#include "core/base/trace_names.h"
#include "core/cluster/topic.h"
#include "core/coordinator/group_coordinator.h"
#include "core/coordinator/offsets_records.h"
#include "core/record/record_batch.h"

namespace ksim {

namespace {

// storeGroup's error mapping (GroupMetadataManager, 1.x).
Errc GroupStoreError(Errc error) {
  switch (error) {
    case Errc::kNone:
      return Errc::kNone;
    case Errc::kUnknownTopicOrPartition:
    case Errc::kNotEnoughReplicas:
    case Errc::kNotEnoughReplicasAfterAppend:
      return Errc::kCoordinatorNotAvailable;
    case Errc::kNotLeaderForPartition:
    case Errc::kKafkaStorageError:
      return Errc::kNotCoordinator;
    case Errc::kRequestTimedOut:
      return Errc::kRebalanceInProgress;
    default:
      return Errc::kUnknownServerError;
  }
}

// storeOffsets' error mapping (GroupMetadataManager, 1.x). Kafka answers a too large batch with
// INVALID_COMMIT_OFFSET_SIZE, which Errc does not name: UNKNOWN_SERVER_ERROR here.
Errc OffsetStoreError(Errc error) {
  switch (error) {
    case Errc::kNone:
      return Errc::kNone;
    case Errc::kUnknownTopicOrPartition:
    case Errc::kNotEnoughReplicas:
    case Errc::kNotEnoughReplicasAfterAppend:
      return Errc::kCoordinatorNotAvailable;
    case Errc::kNotLeaderForPartition:
    case Errc::kKafkaStorageError:
      return Errc::kNotCoordinator;
    case Errc::kMessageTooLarge:
    case Errc::kRecordListTooLarge:
    case Errc::kInvalidFetchSize:
      return Errc::kUnknownServerError;
    default:
      return error;
  }
}

OffsetCommitResponse CommitErrors(const OffsetCommitRequest& request, Errc error) {
  OffsetCommitResponse response;
  for (const OffsetCommitPartition& partition : request.partitions) {
    response.responses.push_back(PartitionError{partition.tp, error});
  }
  return response;
}

}  // namespace

// ---- Group metadata -----------------------------------------------------------------------------

void GroupCoordinator::StoreGroup(GroupMetadata& group,
                                  const std::map<std::string, Bytes>& assignment,
                                  std::function<void(Errc)> done) {
  StoredGroup stored = group.ToStored();
  for (StoredMember& member : stored.members) {
    auto it = assignment.find(member.member_id);
    member.assignment = it == assignment.end() ? Bytes{} : it->second;
  }
  RecordInput record;
  record.timestamp_ms = seams_.clock.NowMs();
  record.key = EncodeGroupMetadataKey(GroupMetadataKey{group.group_id()});
  record.value = EncodeGroupMetadataValue(
      stored, GroupMetadataValueVersion(config_.inter_broker_protocol_version));
  Bytes batch = EncodeBatch(BatchSpec{}, std::span<const RecordInput>(&record, 1));
  seams_.append(OffsetsPartition(group.group_id()), std::move(batch),
                [done = std::move(done)](Errc error) { done(GroupStoreError(error)); });
}

// ---- OffsetCommit -------------------------------------------------------------------------------

void GroupCoordinator::HandleOffsetCommit(OffsetCommitRequest request,
                                          std::function<void(OffsetCommitResponse)> done) {
  if (Errc error = Validate(request.group_id); error != Errc::kNone) {
    return done(CommitErrors(request, error));
  }
  GroupMetadata* group = Find(request.group_id);
  if (group == nullptr) {
    if (request.generation_id >= 0) {
      // A group member commits to a group the coordinator does not know.
      return done(CommitErrors(request, Errc::kIllegalGeneration));
    }
    // A group that uses Kafka only to store offsets (simple consumer, assign()).
    auto created = std::make_unique<GroupMetadata>(request.group_id);
    group = created.get();
    groups_.emplace(request.group_id, std::move(created));
  }
  DoCommitOffsets(*group, std::move(request), std::move(done));
}

void GroupCoordinator::DoCommitOffsets(GroupMetadata& group, OffsetCommitRequest request,
                                       std::function<void(OffsetCommitResponse)> done) {
  if (group.Is(GroupState::kDead)) return done(CommitErrors(request, Errc::kUnknownMemberId));
  if (request.generation_id < 0 && group.Is(GroupState::kEmpty)) {
    return StoreOffsets(group.group_id(), std::move(request), std::move(done));
  }
  if (group.Is(GroupState::kCompletingRebalance)) {
    return done(CommitErrors(request, Errc::kRebalanceInProgress));
  }
  if (!group.Has(request.member_id)) return done(CommitErrors(request, Errc::kUnknownMemberId));
  if (request.generation_id != group.generation()) {
    return done(CommitErrors(request, Errc::kIllegalGeneration));
  }
  ScheduleHeartbeat(group, group.Get(request.member_id));
  StoreOffsets(group.group_id(), std::move(request), std::move(done));
}

void GroupCoordinator::StoreOffsets(const std::string& group_id, OffsetCommitRequest request,
                                    std::function<void(OffsetCommitResponse)> done) {
  if (request.partitions.empty()) return done(OffsetCommitResponse{});
  const int64_t now_ms = seams_.clock.NowMs();
  const int64_t retention_ms = request.retention_time_ms >= 0
                                   ? request.retention_time_ms
                                   : int64_t{config_.offsets_retention_minutes} * 60 * 1000;
  std::vector<RecordInput> records;
  std::map<TopicPartition, CommittedOffset> committed;
  for (const OffsetCommitPartition& partition : request.partitions) {
    CommittedOffset value{.offset = partition.offset,
                          .metadata = partition.metadata.value_or(""),
                          .commit_timestamp_ms = now_ms,
                          .expire_timestamp_ms = now_ms + retention_ms};
    RecordInput record;
    record.timestamp_ms = now_ms;
    record.key = EncodeOffsetCommitKey(OffsetCommitKey{group_id, partition.tp});
    record.value = EncodeOffsetCommitValue(value);
    records.push_back(std::move(record));
    committed[partition.tp] = std::move(value);
  }
  Bytes batch = EncodeBatch(BatchSpec{}, records);
  seams_.append(OffsetsPartition(group_id), std::move(batch),
                [this, group_id, request = std::move(request), committed = std::move(committed),
                 done = std::move(done)](Errc append_error) {
                  const Errc error = OffsetStoreError(append_error);
                  if (error == Errc::kNone) {
                    // The cache changes only once the log has the commit (putCacheCallback).
                    if (GroupMetadata* group = Find(group_id)) {
                      for (const auto& [tp, value] : committed) group->offsets()[tp] = value;
                    }
                  }
                  Emit(seams_.events, ev::kOffsetsCommitted,
                       {{field::kGroup, group_id},
                        {field::kPartitions, request.partitions.size()},
                        {field::kError, ErrcName(error)}});
                  done(CommitErrors(request, error));
                });
}

// ---- OffsetFetch --------------------------------------------------------------------------------

OffsetFetchResponse GroupCoordinator::HandleOffsetFetch(const OffsetFetchRequest& request) const {
  OffsetFetchResponse response;
  const Errc error = Validate(request.group_id);
  if (error != Errc::kNone) {
    response.error_code = error;
    if (request.partitions.has_value()) {
      for (const TopicPartition& tp : *request.partitions) {
        response.responses.push_back(OffsetFetchPartitionResponse{
            .tp = tp, .offset = kUndefinedOffset, .error_code = error});
      }
    }
    return response;
  }
  const GroupMetadata* found = group(request.group_id);
  if (!request.partitions.has_value()) {
    if (found == nullptr) return response;
    for (const auto& [tp, value] : found->offsets()) {
      response.responses.push_back(OffsetFetchPartitionResponse{
          .tp = tp, .offset = value.offset, .metadata = value.metadata});
    }
    return response;
  }
  for (const TopicPartition& tp : *request.partitions) {
    OffsetFetchPartitionResponse entry{.tp = tp, .offset = kUndefinedOffset};
    if (found != nullptr) {
      auto it = found->offsets().find(tp);
      if (it != found->offsets().end()) {
        entry.offset = it->second.offset;
        entry.metadata = it->second.metadata;
      } else {
        entry.metadata = "";
      }
    }
    response.responses.push_back(std::move(entry));
  }
  return response;
}

// ---- Loading and unloading ----------------------------------------------------------------------

void GroupCoordinator::OnElection(int32_t partition) {
  KSIM_CHECK(partition >= 0 && partition < config_.offsets_topic_num_partitions);
  // A new election replaces whatever this broker held of the partition.
  if (owned_.count(partition) > 0 || loading_.count(partition) > 0) OnResignation(partition);
  const uint64_t token = next_load_token_++;
  load_tokens_[partition] = token;
  loading_.insert(partition);
  Emit(seams_.events, ev::kGroupPartitionLoading, {{field::kPartition, partition}});
  // Kafka loads on its scheduler thread; requests meanwhile are COORDINATOR_LOAD_IN_PROGRESS.
  timers_.Schedule(0, [this, partition, token]() { LoadPartition(partition, token); });
}

void GroupCoordinator::LoadPartition(int32_t partition, uint64_t token) {
  auto current = load_tokens_.find(partition);
  if (current == load_tokens_.end() || current->second != token) return;  // resigned meanwhile
  const TopicPartition tp{std::string(kGroupMetadataTopicName), PartitionId(partition)};
  // The latest value of every key, in log order; nullopt: a tombstone.
  std::map<std::string, std::optional<StoredGroup>> stored_groups;
  std::map<std::string, std::map<TopicPartition, std::optional<CommittedOffset>>> offsets;
  int64_t records_read = 0;
  auto report = [&](const Status& status) {
    Emit(seams_.events, ev::kGroupLoadError,
         {{field::kPartition, partition}, {field::kError, status.ToString()}});
  };
  Offset start{0};
  for (bool more = true; more;) {
    Result<Bytes> chunk = seams_.read(tp, start);
    if (!chunk.ok()) {
      report(chunk.status());
      break;
    }
    more = false;
    BatchIterator batches(*chunk);
    while (std::optional<BatchIterator::Item> item = batches.Next()) {
      more = true;
      start = item->header.next_offset();
      if (item->header.control()) continue;
      Result<std::vector<Record>> records = DecodeRecords(item->bytes);
      if (!records.ok()) {
        report(records.status());
        continue;
      }
      for (const Record& record : *records) {
        Result<OffsetsRecord> decoded = DecodeOffsetsRecord(record.key, record.value);
        if (!decoded.ok()) {
          report(decoded.status());  // Kafka: IllegalStateException, the load fails
          continue;
        }
        ++records_read;
        if (const auto* key = std::get_if<OffsetCommitKey>(&decoded->key)) {
          auto& slot = offsets[key->group][key->tp];
          if (decoded->tombstone()) {
            slot = std::nullopt;
          } else {
            slot = std::get<CommittedOffset>(decoded->value);
          }
        } else {
          const auto& key_group = std::get<GroupMetadataKey>(decoded->key);
          if (decoded->tombstone()) {
            stored_groups[key_group.group] = std::nullopt;
          } else {
            stored_groups[key_group.group] = std::get<StoredGroup>(decoded->value);
          }
        }
      }
    }
    if (!batches.status().ok()) {
      report(batches.status());
      break;
    }
  }

  loading_.erase(partition);
  owned_.insert(partition);
  std::set<std::string> ids;
  for (const auto& [id, value] : stored_groups) ids.insert(id);
  for (const auto& [id, value] : offsets) ids.insert(id);
  int64_t groups_loaded = 0;
  int64_t offsets_loaded = 0;
  for (const std::string& id : ids) {
    auto stored = stored_groups.find(id);
    const bool has_metadata = stored != stored_groups.end() && stored->second.has_value();
    auto group = std::make_unique<GroupMetadata>(
        has_metadata ? GroupMetadata::FromStored(id, *stored->second) : GroupMetadata(id));
    if (auto committed = offsets.find(id); committed != offsets.end()) {
      for (const auto& [committed_tp, value] : committed->second) {
        if (value.has_value()) group->offsets()[committed_tp] = *value;
      }
    }
    if (!has_metadata && group->offsets().empty()) continue;  // deleted
    ++groups_loaded;
    offsets_loaded += static_cast<int64_t>(group->offsets().size());
    GroupMetadata& placed = *group;
    groups_[id] = std::move(group);
    // Loaded members must heartbeat again within their session (onGroupLoaded).
    for (auto& [member_id, member] : placed.mutable_members()) ScheduleHeartbeat(placed, member);
    EmitState(placed);
  }
  Emit(seams_.events, ev::kGroupPartitionLoaded,
       {{field::kPartition, partition},
        {field::kRecords, records_read},
        {field::kGroups, groups_loaded},
        {field::kOffsets, offsets_loaded}});
}

void GroupCoordinator::OnResignation(int32_t partition) {
  load_tokens_.erase(partition);
  loading_.erase(partition);
  const bool owned = owned_.erase(partition) > 0;
  std::vector<std::string> unload;
  for (const auto& [id, group] : groups_) {
    if (PartitionFor(id) == partition) unload.push_back(id);
  }
  for (const std::string& id : unload) {
    auto it = groups_.find(id);
    std::unique_ptr<GroupMetadata> group = std::move(it->second);
    groups_.erase(it);
    UnloadGroup(*group);
  }
  if (owned || !unload.empty()) {
    Emit(seams_.events, ev::kGroupPartitionUnloaded,
         {{field::kPartition, partition}, {field::kGroups, unload.size()}});
  }
}

void GroupCoordinator::UnloadGroup(GroupMetadata& group) {
  // onGroupUnloaded: members waiting learn that this broker is no longer the coordinator.
  const GroupState previous = group.state();
  group.TransitionTo(GroupState::kDead);
  CancelJoinTimer(group.group_id());
  initial_delay_.erase(group.group_id());
  new_member_added_.erase(group.group_id());
  std::vector<std::function<void()>> answers;
  for (auto& [id, member] : group.mutable_members()) {
    timers_.Cancel(member.heartbeat_timer);
    member.heartbeat_timer = 0;
    if (previous == GroupState::kPreparingRebalance && member.awaiting_join) {
      // (clang 14 cannot capture a structured binding: copy the id by name.)
      answers.push_back(
          [callback = std::exchange(member.awaiting_join, nullptr), member_id = id]() {
            JoinGroupResponse response;
            response.error_code = Errc::kNotCoordinator;
            response.member_id = member_id;
            callback(std::move(response));
          });
    }
    if (member.awaiting_sync) {
      answers.push_back([callback = std::exchange(member.awaiting_sync, nullptr)]() {
        SyncGroupResponse response;
        response.error_code = Errc::kNotCoordinator;
        callback(std::move(response));
      });
    }
  }
  EmitState(group);
  for (auto& answer : answers) answer();
}

}  // namespace ksim
