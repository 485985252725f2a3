// ReplicaManager: produce (Kafka's appendRecords + DelayedProduce), fetch (fetchMessages +
// DelayedFetch), ListOffsets (KafkaApis.handleListOffsetRequestV1) and OffsetsForLeaderEpoch
// (ReplicaManager.lastOffsetForLeaderEpoch). Kafka 1.x/2.0 code paths, 0.10 semantics.
#include <algorithm>
#include <optional>
#include <utility>

#include "core/server/replica_manager.h"

namespace ksim {
namespace {

// 2.1.0:Partition.checkCurrentLeaderEpoch, which getLocalReplica runs before it asks whether this
// broker leads: an asker naming an epoch (KIP-320) older than the partition's is fenced, one newer
// is ahead of what this broker has learnt. Without one (older versions, consumers), no check.
Errc CheckCurrentLeaderEpoch(const std::optional<CurrentLeaderEpoch>& asked,
                             const Partition& partition) {
  if (!asked.has_value()) return Errc::kNone;
  if (partition.leader_epoch() > asked->epoch) return Errc::kFencedLeaderEpoch;
  if (partition.leader_epoch() < asked->epoch) return Errc::kUnknownLeaderEpoch;
  return Errc::kNone;
}

// A fetch's partition whose named epoch the check refuses: its read is that error at once.
bool Fenced(const FetchPartition& asked, const Partition& partition) {
  return CheckCurrentLeaderEpoch(asked.current_leader_epoch, partition) != Errc::kNone;
}

}  // namespace

bool ValidRequiredAcks(KafkaRelease release, int16_t acks) {
  return release < KafkaRelease::k0_10_0 || (acks >= -1 && acks <= 1);
}

bool AcksDeprecated(KafkaRelease release, int16_t acks) {
  return release < KafkaRelease::k0_10_0 && (acks > 1 || acks < -1);
}

std::string AcksDeprecatedWarning(std::string_view client, int16_t acks) {
  const std::string who(client);
  return "Client " + who + " from " + who +
         " sent a produce request with request.required.acks of " + std::to_string(acks) +
         ", which is now deprecated and will be removed in next release. Valid values are -1, 0 "
         "or 1. Please consult Kafka documentation for supported and recommended configuration.";
}

void ReplicaManager::HandleProduce(ProduceRequest request,
                                   std::function<void(ProduceResponse)> done,
                                   std::function<void()> failed_without_answer) {
  const int16_t acks = request.acks;
  auto respond = [correlation_id = request.correlation_id,
                  done = std::move(done)](ProduceResponse response) {
    response.correlation_id = correlation_id;
    done(std::move(response));
  };
  const bool valid_acks = ValidRequiredAcks(config_.release, acks);
  const bool waits = acks < 0 || acks > 1;
  std::vector<ProducePartitionStatus> statuses;
  std::vector<TopicPartition> pending;
  for (ProducePartitionData& data : request.topic_data) {
    ProducePartitionStatus status;
    status.response.tp = data.tp;
    Partition* partition = valid_acks ? GetPartition(data.tp) : nullptr;
    if (!valid_acks) {
      status.response.error_code = Errc::kInvalidRequiredAcks;
    } else if (partition == nullptr) {
      status.response.error_code = Errc::kUnknownTopicOrPartition;
    } else {
      Result<LogAppendInfo> info =
          partition->AppendAsLeader(MutableByteView(data.record_set), acks);
      if (!info.ok()) {
        status.response.error_code = info.status().code();
        // Kafka 1.0+ (unknownLogAppendInfoWithLogStartOffset): an idempotent producer tells
        // UNKNOWN_PRODUCER_ID after retention from a lost sequence by it.
        status.response.log_start_offset = partition->log_start_offset();
      } else {
        status.response.base_offset = info->first_offset;
        status.response.log_start_offset = partition->log_start_offset();
        status.required_offset = info->last_offset + 1;
        status.pending = waits && info->num_records > 0;
        if (status.pending) pending.push_back(data.tp);
        // Followers parked in the fetch purgatory have data now; a lone ISR member's HW moved.
        PartitionChanged(data.tp);
      }
    }
    statuses.push_back(std::move(status));
  }
  if (acks == 0) {
    // Never answered. KafkaApis.handleProducerRequest (0.10.0.1 to 3.0): "if there is any error
    // in handling the request, since no response is expected by the producer, the server will
    // close socket server so that the producer client will know that some error has happened and
    // will refresh its metadata".
    const bool failed = std::any_of(statuses.begin(), statuses.end(), [](const auto& status) {
      return status.response.error_code != Errc::kNone;
    });
    if (failed && failed_without_answer) failed_without_answer();
    return;
  }
  auto lookup = [this](const TopicPartition& tp) { return GetPartition(tp); };
  if (pending.empty()) {
    ProduceResponse response;
    for (ProducePartitionStatus& status : statuses) {
      response.responses.push_back(std::move(status.response));
    }
    respond(std::move(response));
    return;
  }
  produce_purgatory_.TryCompleteElseWatch(
      std::make_unique<DelayedProduce>(acks, std::move(statuses), lookup, std::move(respond)),
      static_cast<TimeUs>(std::max(0, request.timeout_ms)) * kUsPerMs, pending);
}

void ReplicaManager::HandleFetch(FetchRequest request, std::function<void(FetchResponse)> done) {
  auto respond = [correlation_id = request.correlation_id,
                  done = std::move(done)](FetchResponse response) {
    response.correlation_id = correlation_id;
    done(std::move(response));
  };
  std::vector<Partition*> partitions;  // by request index, as the read found them
  std::vector<FetchPartitionResponse> read;
  const bool parks = WouldParkWithNothingRead(request, &partitions);
  if (!parks) read = ReadFromLocalLog(request, &partitions);
  const uint64_t read_version = partitions_version_;
  if (request.replica_id.value() >= 0) {
    for (size_t i = 0; i < request.partitions.size(); ++i) {
      if (partitions[i] == nullptr || (!parks && read[i].error_code != Errc::kNone)) {
        continue;
      }
      UpdateFollower(request.replica_id, request.partitions[i], *partitions[i]);
    }
  }
  if (!parks && FetchCanCompleteNow(request, read)) {
    FetchResponse response;
    response.responses = std::move(read);
    respond(std::move(response));
    return;
  }
  std::vector<TopicPartition> keys;
  keys.reserve(request.partitions.size());
  for (const FetchPartition& asked : request.partitions) keys.push_back(asked.tp);
  const TimeUs timeout_us = static_cast<TimeUs>(request.max_wait_ms) * kUsPerMs;
  // What the read above resolved, valid while no partition is added or removed.
  auto resolved = std::make_shared<ResolvedPartitions>(
      ResolvedPartitions{.version = read_version, .partitions = std::move(partitions)});
  fetch_purgatory_.TryCompleteElseWatch(
      std::make_unique<DelayedFetch>(
          std::move(request),
          [this](const FetchRequest& parked) { return ReadFromLocalLog(parked); },
          [this, resolved](const FetchRequest& parked, DelayedFetch::Waiting* waiting) {
            return ReadFromLocalLogIfReady(parked, *resolved, waiting);
          },
          [this, resolved](const FetchRequest& parked, const TopicPartition& key,
                           const DelayedFetch::Waiting& waiting) {
            return StillNothing(parked, *resolved, key, waiting);
          },
          std::move(respond)),
      timeout_us, keys);
}

bool ReplicaManager::UpdateFollower(BrokerId replica, const FetchPartition& asked,
                                    Partition& partition) {
  // updateFollowerLogReadResults: the fetch offset is the follower's LEO; HW may rise and the
  // follower may rejoin the ISR. Nothing between the read and here adds or removes a partition;
  // a WriteIsr below changes only its own partition's ISR proposal.
  const Offset hw_before = partition.high_watermark();
  bool leo_moved = false;
  std::optional<std::vector<BrokerId>> expanded =
      partition.UpdateFollowerFetch(replica, asked.fetch_offset, &leo_moved);
  const bool expanding = expanded.has_value();
  if (expanding && isr_proposals_.count(asked.tp) == 0) {
    WriteIsr(partition, std::move(*expanded));
  }
  // Waiting requests can only move when the HW or this follower's LEO did (Kafka's
  // updateFollowerLogReadResults and maybeIncrementLeaderHW): a fetch with nothing new re-checks
  // nothing.
  const bool moved = partition.high_watermark() != hw_before || leo_moved;
  if (moved) PartitionChanged(asked.tp);
  return moved || expanding;
}

void ReplicaManager::HandleFetch(FetchRequest request, FetchContext context, SessionDone done) {
  if (context.kind != FetchContext::Kind::kIncremental) {
    HandleFetch(std::move(request),
                [context = std::move(context), done = std::move(done)](
                    FetchResponse response) mutable { done(std::move(response), context); });
    return;
  }
  auto shared = std::make_shared<FetchContext>(std::move(context));
  auto respond = [correlation_id = request.correlation_id, shared,
                  done = std::move(done)](FetchResponse response) {
    response.correlation_id = correlation_id;
    done(std::move(response), *shared);
  };
  FetchSession& session = *shared->session;
  const bool from_follower = request.replica_id.value() >= 0;
  // What is read: the session's partitions not held quiet, in its order. A quiet one would be
  // read to nothing and answered nothing; a follower counts as caught up in it as of now.
  session.fetched_ms = seams_.clock.NowMs();
  shared->order = session.ToReadInOrder();
  request.partitions.clear();
  request.partitions.reserve(shared->order.size());
  for (const auto& it : shared->order) request.partitions.push_back(it->Request());
  std::vector<Partition*> partitions;
  std::vector<FetchPartitionResponse> read = ReadFromLocalLog(request, &partitions);
  for (size_t i = 0; i < read.size(); ++i) {
    Partition* partition = partitions[i];
    const FetchPartitionResponse& answer = read[i];
    if (answer.error_code != Errc::kNone || partition == nullptr) continue;
    const bool moved =
        from_follower && UpdateFollower(request.replica_id, request.partitions[i], *partition);
    const auto& it = shared->order[i];
    // Quiet from here: nothing read (no disk touched), nothing to answer, nothing moved.
    if (!moved && answer.records.empty() && answer.high_watermark == it->high_watermark &&
        answer.log_start_offset == it->local_log_start_offset &&
        partition->ReadsNothingAt(it->fetch_offset, it->max_bytes)) {
      session.Hold(it, *partition, from_follower ? request.replica_id : kNoBroker);
    }
  }
  // FetchCanCompleteNow of the whole session (never empty): its quiet partitions add no bytes
  // and no error.
  if (FetchReadSuffices(request, read)) {
    FetchResponse response;
    response.responses = std::move(read);
    respond(std::move(response));
    return;
  }
  // Parked on the partitions it reads; a quiet one that changes adds itself (on_quiet_ended).
  // Each through the watch list the session keeps.
  const uint64_t generation = fetch_purgatory_.generation();
  auto watch_list = [this, generation](CachedPartition& cached) {
    if (cached.watch_list == nullptr || cached.watch_generation != generation) {
      cached.watch_list = fetch_purgatory_.WatchListOf(cached.tp);
      cached.watch_generation = generation;
    }
    return cached.watch_list;
  };
  // Ends the session's tie to this fetch when it is answered or dropped (a crash).
  struct Unpark {
    std::shared_ptr<FetchSession> session;
    uint64_t id = 0;
    ~Unpark() {
      if (id != 0 && session->parked == id) {
        session->parked = 0;
        session->on_quiet_ended = nullptr;
      }
    }
  };
  auto unpark = std::make_shared<Unpark>();
  unpark->session = shared->session;
  const TimeUs timeout_us = static_cast<TimeUs>(request.max_wait_ms) * kUsPerMs;
  // The parked request keeps only its header: each check reads what the session says.
  request.partitions.clear();
  uint64_t id = 0;
  const bool completed = fetch_purgatory_.TryCompleteElseWatchLists(
      std::make_unique<DelayedFetch>(
          std::move(request),
          [this, shared, unpark](const FetchRequest& parked) {
            return *ReadSessionIfReady(parked, *shared, /*always=*/true);
          },
          [this, shared](const FetchRequest& parked, DelayedFetch::Waiting* waiting) {
            return ReadSessionIfReady(parked, *shared, /*always=*/false, waiting);
          },
          [this, shared](const FetchRequest& parked, const TopicPartition& key,
                         const DelayedFetch::Waiting& waiting) {
            return SessionStillNothing(parked, *shared, key, waiting);
          },
          std::move(respond)),
      timeout_us,
      [&](const auto& watch) {
        for (const auto& it : session.to_read) watch(watch_list(*it));
      },
      &id);
  if (completed) return;
  unpark->id = id;
  session.parked = id;
  session.on_quiet_ended = [this, id, watch_list](CachedPartition& cached) {
    fetch_purgatory_.WatchLate(id, *watch_list(cached));
  };
}

std::optional<std::vector<FetchPartitionResponse>> ReplicaManager::ReadSessionIfReady(
    const FetchRequest& parked, FetchContext& context, bool always,
    DelayedFetch::Waiting* waiting) {
  // The session's partitions not held quiet, read as a parked fetch of them is read.
  const std::vector<FetchSession::Partitions::iterator>& to_read = context.session->ToReadInOrder();
  // A check (not `always`) of a fetch that waits (max_wait_ms > 0, min_bytes >= 1) finds it
  // still waiting, and reads nothing, when every partition is here and has nothing new at its
  // fetch position (Partition::HasNothingNewAt): ReadFromLocalLogIfReady's answer, told from the
  // session's partitions (their Partition looked up once per partitions_version_) without building
  // the request.
  if (!always && parked.max_wait_ms > 0 && parked.min_bytes >= 1) {
    const bool from_follower = parked.replica_id.value() >= 0;
    bool nothing = true;
    for (const auto& it : to_read) {
      if (it->resolved_version != partitions_version_) {
        it->resolved = GetPartition(it->tp);
        it->resolved_version = partitions_version_;
      }
      if (it->resolved == nullptr ||
          !it->resolved->HasNothingNewAt(it->fetch_offset, it->max_bytes, from_follower)) {
        nothing = false;
        break;
      }
    }
    if (nothing) {
      if (waiting != nullptr) {
        *waiting = DelayedFetch::Waiting{.nothing = true,
                                         .version = partitions_version_,
                                         .reads = context.session->reads_version()};
      }
      return std::nullopt;
    }
  }
  std::vector<FetchSession::Partitions::iterator> order = to_read;
  FetchRequest asked = parked;
  asked.partitions.clear();
  asked.partitions.reserve(order.size());
  for (const auto& it : order) asked.partitions.push_back(it->Request());
  std::optional<std::vector<FetchPartitionResponse>> read;
  if (always) {
    read = ReadFromLocalLog(asked);
  } else if (!asked.partitions.empty()) {
    ResolvedPartitions resolved;
    read = ReadFromLocalLogIfReady(asked, resolved);
  }
  // (Nothing to read: it waits on, parked only with min_bytes >= 1.)
  if (!read.has_value()) return std::nullopt;
  context.order = std::move(order);
  return read;
}

bool ReplicaManager::SessionStillNothing(const FetchRequest& parked, const FetchContext& context,
                                         const TopicPartition& key,
                                         const DelayedFetch::Waiting& waiting) const {
  // The session's partitions to read and the broker's partitions are those of the check that
  // found nothing, and `key` is one of them, looked up then.
  const FetchSession& session = *context.session;
  if (waiting.version != partitions_version_ || waiting.reads != session.reads_version()) {
    return false;
  }
  auto found = session.index.find(key);
  if (found == session.index.end()) return false;
  const CachedPartition& cached = *found->second;
  if (!cached.to_read || cached.resolved_version != partitions_version_) return false;
  return cached.resolved != nullptr &&
         cached.resolved->HasNothingNewAt(cached.fetch_offset, cached.max_bytes,
                                          parked.replica_id.value() >= 0);
}

std::vector<FetchPartitionResponse> ReplicaManager::ReadFromLocalLog(
    const FetchRequest& request, std::vector<Partition*>* partitions) {
  const bool from_follower = request.replica_id.value() >= 0;
  std::vector<FetchPartitionResponse> responses;
  responses.reserve(request.partitions.size());
  if (partitions != nullptr) partitions->reserve(request.partitions.size());
  for (size_t i = 0; i < request.partitions.size(); ++i) {
    const FetchPartition& asked = request.partitions[i];
    Partition* partition = nullptr;
    if (partitions == nullptr) {
      partition = GetPartition(asked.tp);
    } else if (i < partitions->size()) {
      partition = (*partitions)[i];  // resolved already
    } else {
      partition = partitions->emplace_back(GetPartition(asked.tp));
    }
    ReadPartition(asked, partition, from_follower, responses.emplace_back());
  }
  return responses;
}

bool ReplicaManager::WouldParkWithNothingRead(const FetchRequest& request,
                                              std::vector<Partition*>* partitions) {
  // A fetch that may wait for bytes, every partition of which an online leader here holds with
  // nothing at the fetch offset (its read gives no bytes and no error): its read now would answer
  // nothing, and it parks. Kafka reads each partition first (a fetch before sessions names every
  // one, each time); the answer, given later, reads them again.
  KSIM_CHECK(partitions->empty());
  if (request.max_wait_ms <= 0 || request.min_bytes <= 0 || request.partitions.empty()) {
    return false;
  }
  partitions->reserve(request.partitions.size());
  for (const FetchPartition& asked : request.partitions) {
    Partition* partition = partitions->emplace_back(GetPartition(asked.tp));
    if (partition == nullptr || Fenced(asked, *partition) ||
        !partition->ReadsNothingAt(asked.fetch_offset, asked.partition_max_bytes)) {
      return false;  // the partitions resolved so far stay, for the read
    }
  }
  return true;
}

void ReplicaManager::ReadPartition(const FetchPartition& asked, Partition* partition,
                                   bool from_follower, FetchPartitionResponse& response) {
  ++fetch_partition_reads_;
  response.tp = asked.tp;
  if (partition == nullptr) {
    response.error_code = Errc::kUnknownTopicOrPartition;
    return;
  }
  if (Errc fence = CheckCurrentLeaderEpoch(asked.current_leader_epoch, *partition);
      fence != Errc::kNone) {
    response.error_code = fence;
    return;
  }
  if (!partition->ReadsNothingAt(asked.fetch_offset, asked.partition_max_bytes)) {
    Result<FetchDataInfo> data =
        partition->Read(asked.fetch_offset, asked.partition_max_bytes, from_follower);
    if (!data.ok()) {
      response.error_code = data.status().code();
      return;
    }
    response.records = std::move(data->records);
  }
  response.high_watermark = partition->high_watermark();
  response.last_stable_offset = partition->high_watermark();  // no transactions
  response.log_start_offset = partition->log_start_offset();
}

std::optional<std::vector<FetchPartitionResponse>> ReplicaManager::ReadFromLocalLogIfReady(
    const FetchRequest& request, ResolvedPartitions& resolved, DelayedFetch::Waiting* waiting) {
  if (request.max_wait_ms <= 0 || request.partitions.empty()) return ReadFromLocalLog(request);
  const bool from_follower = request.replica_id.value() >= 0;
  if (resolved.version != partitions_version_) {
    resolved.partitions.clear();
    resolved.partitions.reserve(request.partitions.size());
    for (const FetchPartition& asked : request.partitions) {
      resolved.partitions.push_back(GetPartition(asked.tp));
    }
    resolved.version = partitions_version_;
  }
  // The partitions with something to give (or an error), read now by their index in the request.
  std::vector<std::pair<size_t, FetchPartitionResponse>> read;
  int64_t bytes = 0;
  bool error = false;
  for (size_t i = 0; i < request.partitions.size(); ++i) {
    const FetchPartition& asked = request.partitions[i];
    Partition* partition = resolved.partitions[i];
    if (partition != nullptr && !Fenced(asked, *partition) &&
        partition->HasNothingNewAt(asked.fetch_offset, asked.partition_max_bytes, from_follower)) {
      continue;
    }
    auto& [index, response] = read.emplace_back();
    index = i;
    ReadPartition(asked, partition, from_follower, response);
    error |= response.error_code != Errc::kNone;
    bytes += static_cast<int64_t>(response.records.size());
  }
  if (!error && bytes < request.min_bytes) {
    if (waiting != nullptr && read.empty()) {
      *waiting = DelayedFetch::Waiting{.nothing = true, .version = partitions_version_};
    }
    return std::nullopt;
  }
  // The skipped partitions still have nothing to give: a read touches only its own log.
  std::vector<FetchPartitionResponse> responses;
  responses.reserve(request.partitions.size());
  auto next = read.begin();
  for (size_t i = 0; i < request.partitions.size(); ++i) {
    if (next != read.end() && next->first == i) {
      responses.push_back(std::move(next->second));
      ++next;
    } else {
      ReadPartition(request.partitions[i], resolved.partitions[i], from_follower,
                    responses.emplace_back());
    }
  }
  return responses;
}

bool ReplicaManager::StillNothing(const FetchRequest& request, ResolvedPartitions& resolved,
                                  const TopicPartition& key, const DelayedFetch::Waiting& waiting) {
  if (waiting.version != partitions_version_ || resolved.version != partitions_version_) {
    return false;
  }
  // The index costs some walks of the partitions: made only for a fetch whose key checks went on
  // past kKeyChecksBeforeIndex (most complete at their first or second: before 1.1 every
  // follower's fetch parks on every partition it follows, and the next append completes it).
  if (resolved.index.empty() && ++resolved.key_checks <= kKeyChecksBeforeIndex) return false;
  if (resolved.index.empty()) {
    resolved.index.reserve(request.partitions.size());
    for (size_t i = 0; i < request.partitions.size(); ++i) {
      auto [it, added] = resolved.index.emplace(request.partitions[i].tp, i);
      if (!added) it->second = ResolvedPartitions::kNamedTwice;
    }
  }
  auto found = resolved.index.find(key);
  if (found == resolved.index.end() || found->second == ResolvedPartitions::kNamedTwice) {
    return false;
  }
  const FetchPartition& asked = request.partitions[found->second];
  const Partition* partition = resolved.partitions[found->second];
  return partition != nullptr && !Fenced(asked, *partition) &&
         partition->HasNothingNewAt(asked.fetch_offset, asked.partition_max_bytes,
                                    request.replica_id.value() >= 0);
}

ListOffsetsResponse ReplicaManager::HandleListOffsets(const ListOffsetsRequest& request) {
  // ListOffsetRequest.DEBUGGING_REPLICA_ID: any replica answers, with its LEO.
  constexpr BrokerId kDebuggingReplicaId{-2};
  const bool from_consumer = request.replica_id == kConsumerReplicaId;
  ListOffsetsResponse response;
  response.correlation_id = request.correlation_id;
  for (const ListOffsetsPartition& asked : request.partitions) {
    ListOffsetsPartitionResponse answer;
    answer.tp = asked.tp;
    Partition* partition = GetPartition(asked.tp);
    if (partition == nullptr) {
      answer.error_code = Errc::kUnknownTopicOrPartition;
    } else if (Errc fence = CheckCurrentLeaderEpoch(asked.current_leader_epoch, *partition);
               fence != Errc::kNone) {
      answer.error_code = fence;
    } else if (request.replica_id != kDebuggingReplicaId && !partition->is_leader()) {
      answer.error_code = Errc::kNotLeaderForPartition;
    } else {
      // A consumer never learns of offsets at or above HW; a replica sees up to the LEO.
      const Offset last_fetchable =
          from_consumer ? partition->high_watermark() : partition->log_end_offset();
      if (asked.timestamp == kLatestTimestamp) {
        answer.offset = last_fetchable;
      } else if (asked.timestamp == kEarliestTimestamp) {
        answer.offset = partition->log_start_offset();
      } else {
        Result<std::optional<TimestampOffset>> found =
            partition->log().FetchOffsetByTimestamp(asked.timestamp);
        if (!found.ok()) {
          answer.error_code = found.status().code();
        } else if (found->has_value() && !partition->log().config().time_index) {
          // Kafka 0.10.0's fetchOffsetsBefore: an offset above what the asker may see becomes
          // that bound (KafkaApis.handleOffsetRequest: hw +: allOffsets.dropWhile(_ > hw)).
          answer.offset = std::min((*found)->offset, last_fetchable);
        } else if (found->has_value() && (*found)->offset < last_fetchable) {
          answer.offset = (*found)->offset;
          answer.timestamp = (*found)->timestamp_ms;
        }
      }
    }
    response.responses.push_back(std::move(answer));
  }
  return response;
}

OffsetsForLeaderEpochResponse ReplicaManager::HandleOffsetsForLeaderEpoch(
    const OffsetsForLeaderEpochRequest& request) {
  OffsetsForLeaderEpochResponse response;
  response.correlation_id = request.correlation_id;
  for (const OffsetsForLeaderEpochPartition& asked : request.partitions) {
    EpochEndOffset answer;
    answer.tp = asked.tp;
    Partition* partition = GetPartition(asked.tp);
    if (partition == nullptr) {
      answer.error_code = Errc::kUnknownTopicOrPartition;
    } else if (Errc fence = CheckCurrentLeaderEpoch(asked.current_leader_epoch, *partition);
               fence != Errc::kNone) {
      answer.error_code = fence;
    } else if (!partition->is_leader()) {
      answer.error_code = Errc::kNotLeaderForPartition;
    } else {
      const EpochAndEndOffset end = partition->EndOffsetForEpoch(asked.leader_epoch);
      answer.leader_epoch = end.epoch;
      answer.end_offset = end.end_offset;
    }
    response.partitions.push_back(std::move(answer));
  }
  return response;
}

}  // namespace ksim
