#include "core/server/replica_fetcher.h"

#include <algorithm>
#include <set>
#include <utility>

#include "core/base/trace_names.h"
#include "core/config/kafka_version.h"

namespace ksim {
namespace {

// AbstractFetcherThread.processFetchRequest goes on past a CorruptRecordException (and from 1.0 a
// KafkaStorageException: the log dir goes offline; 0.10 halts on it in processPartitionData), the
// partition delayed; anything else it rethrows and the fetcher thread ends. A follower append
// refused as not a follower is ksim's guard against a stale answer, which Kafka drops earlier.
bool StopsTheFetcher(const Status& status) {
  const Errc code = status.code();
  return code != Errc::kCorruptMessage && code != Errc::kCorruption &&
         code != Errc::kNotLeaderForPartition && !IsStorageFailure(status);
}

}  // namespace

bool FetchSessionsAt(const ApiVersion& inter_broker_protocol) {
  static const int kFirst = FindApiVersion("1.1-IV0", KafkaRelease::k1_1)->id;
  return inter_broker_protocol.id >= kFirst;
}

bool FetchesNameLeaderEpochAt(const ApiVersion& inter_broker_protocol) {
  static const int kFirst = FindApiVersion("2.1-IV2", KafkaRelease::k2_1)->id;
  return inter_broker_protocol.id >= kFirst;
}

std::string_view FetchPhaseName(FetchPhase phase) {
  switch (phase) {
    case FetchPhase::kTruncating:
      return "truncating";
    case FetchPhase::kLeaderEndOffset:
      return "leader_end_offset";
    case FetchPhase::kLeaderStartOffset:
      return "leader_start_offset";
    case FetchPhase::kFetching:
      return "fetching";
  }
  return "?";
}

ReplicaFetcherManager::ReplicaFetcherManager(ReplicaFetcherOptions options, NetworkClient& network,
                                             const Clock& clock, Timers& timers,
                                             PartitionLookup lookup, EventSink events)
    : options_(options),
      network_(network),
      clock_(clock),
      timers_(timers),
      lookup_(std::move(lookup)),
      events_(std::move(events)) {
  KSIM_CHECK(options_.fetch_max_bytes > 0);
  KSIM_CHECK(options_.fetch_backoff_ms >= 0);
}

ReplicaFetcherManager::~ReplicaFetcherManager() {
  for (auto& [leader, fetcher] : fetchers_) ReleaseHolds(fetcher);
}

void ReplicaFetcherManager::MembershipChanged(Fetcher& fetcher) {
  fetcher.membership = ++membership_version_;
}

void ReplicaFetcherManager::Hold(Fetcher& fetcher, SentEntry& entry) {
  entry.second.partition->HoldQuiet(this, &entry, kNoBroker, nullptr);
  entry.second.held = true;
  entry.second.fetcher = &fetcher;
}

void ReplicaFetcherManager::HoldSent(Fetcher& fetcher) {
  for (SentEntry& entry : fetcher.sent) {
    if (!entry.second.held) Hold(fetcher, entry);
  }
  fetcher.moved.clear();
}

void ReplicaFetcherManager::ReleaseHolds(Fetcher& fetcher) {
  for (auto& entry : fetcher.sent) {
    if (!entry.second.held) continue;
    entry.second.partition->ReleaseQuiet(this, &entry);
    entry.second.held = false;
  }
  fetcher.moved.clear();
}

std::map<BrokerId, ReplicaFetcherManager::Fetcher>::iterator ReplicaFetcherManager::EraseFetcher(
    std::map<BrokerId, Fetcher>::iterator it) {
  ReleaseHolds(it->second);
  return fetchers_.erase(it);
}

void ReplicaFetcherManager::QuietEnded(void* cookie) {
  auto* entry = static_cast<SentEntry*>(cookie);
  entry->second.held = false;
  entry->second.fetcher->moved.push_back(entry);
}

void ReplicaFetcherManager::AddPartitions(const std::vector<Follow>& follows,
                                          bool truncate_by_epoch) {
  std::vector<TopicPartition> tps;
  tps.reserve(follows.size());
  for (const Follow& follow : follows) tps.push_back(follow.tp);
  RemovePartitions(tps);
  std::set<BrokerId> leaders;
  for (const Follow& follow : follows) {
    KSIM_CHECK(follow.leader != options_.local);
    Fetcher& fetcher = fetchers_[follow.leader];
    MembershipChanged(fetcher);
    fetcher.leader = follow.leader;
    fetcher.host = follow.host;
    PartitionState state;
    state.incarnation = next_incarnation_++;
    state.current_leader_epoch = follow.leader_epoch;
    state.phase = truncate_by_epoch ? FetchPhase::kTruncating : FetchPhase::kFetching;
    if (truncate_by_epoch) {
      Partition* partition = lookup_(follow.tp);
      KSIM_CHECK(partition != nullptr);
      state.epoch_to_ask = partition->latest_epoch();
    }
    fetcher.partitions[follow.tp] = state;
    ++fetcher.in_phase[Index(state.phase)];
    leaders.insert(follow.leader);
  }
  for (BrokerId leader : leaders) {
    // addPartitions signals partitionMapCond: a thread awaiting it goes on.
    Fetcher& fetcher = fetchers_.at(leader);
    if (fetcher.wait != 0) {
      timers_.Cancel(fetcher.wait);
      fetcher.wait = 0;
      Wake(fetcher);
    }
    Pump(leader);
  }
}

void ReplicaFetcherManager::RemovePartitions(const std::vector<TopicPartition>& partitions) {
  for (const TopicPartition& tp : partitions) {
    for (auto it = fetchers_.begin(); it != fetchers_.end();) {
      auto found = it->second.partitions.find(tp);
      if (found != it->second.partitions.end()) {
        Forget(it->second, found->second);
        it->second.partitions.erase(found);
        MembershipChanged(it->second);
      }
      // An idle fetcher without partitions goes (Kafka's shutdownIdleFetcherThreads); one with a
      // request in flight stays until the answer, which then finds nothing to apply.
      if (it->second.partitions.empty() && !it->second.in_flight) {
        timers_.Cancel(it->second.wait);
        it = EraseFetcher(it);
      } else {
        ++it;
      }
    }
  }
}

void ReplicaFetcherManager::RemoveAll() {
  for (auto& [leader, fetcher] : fetchers_) {
    MembershipChanged(fetcher);
    fetcher.partitions.clear();
    fetcher.in_phase.fill(0);
    fetcher.delayed_in_phase.fill(0);
    fetcher.delays.clear();
    fetcher.delay_on_wake.clear();
  }
  for (auto it = fetchers_.begin(); it != fetchers_.end();) {
    timers_.Cancel(it->second.wait);
    it->second.wait = 0;
    it = it->second.in_flight ? std::next(it) : EraseFetcher(it);
  }
}

void ReplicaFetcherManager::OnReady(std::string_view peer) {
  std::vector<BrokerId> leaders;
  for (const auto& [leader, fetcher] : fetchers_) {
    if (fetcher.host == peer) leaders.push_back(leader);
  }
  for (BrokerId leader : leaders) Pump(leader);
}

std::optional<BrokerId> ReplicaFetcherManager::LeaderOf(const TopicPartition& tp) const {
  for (const auto& [leader, fetcher] : fetchers_) {
    if (fetcher.partitions.count(tp) > 0) return leader;
  }
  return std::nullopt;
}

std::optional<FetchPhase> ReplicaFetcherManager::PhaseOf(const TopicPartition& tp) const {
  for (const auto& [leader, fetcher] : fetchers_) {
    auto it = fetcher.partitions.find(tp);
    if (it != fetcher.partitions.end()) return it->second.phase;
  }
  return std::nullopt;
}

void ReplicaFetcherManager::Pump(BrokerId leader) {
  auto it = fetchers_.find(leader);
  if (it == fetchers_.end()) return;
  Fetcher& fetcher = it->second;
  if (fetcher.partitions.empty()) {
    if (!fetcher.in_flight) {
      timers_.Cancel(fetcher.wait);
      EraseFetcher(it);
    }
    return;
  }
  if (fetcher.stopped || fetcher.in_flight || fetcher.wait != 0) return;
  if (!network_.Ready(fetcher.host)) return;  // OnReady resumes
  ExpireDelays(fetcher);
  auto ready = [&](FetchPhase phase) {
    return fetcher.in_phase[Index(phase)] > fetcher.delayed_in_phase[Index(phase)];
  };
  // The out-of-range partitions of the last fetch's answer: Kafka asks the leader about them
  // while it processes that answer.
  if (ready(FetchPhase::kLeaderEndOffset)) {
    return SendListOffsets(fetcher, FetchPhase::kLeaderEndOffset);
  }
  if (ready(FetchPhase::kLeaderStartOffset)) {
    return SendListOffsets(fetcher, FetchPhase::kLeaderStartOffset);
  }
  // doWork: maybeTruncate, then maybeFetch.
  if (fetcher.next == Step::kTruncate) {
    fetcher.next = Step::kFetch;
    if (ready(FetchPhase::kTruncating)) return SendOffsetsForLeaderEpoch(fetcher);
  }
  fetcher.next = Step::kTruncate;
  if (ready(FetchPhase::kFetching) && SendFetch(fetcher)) return;
  Wait(fetcher);  // no partition to fetch: partitionMapCond.await(fetchBackOffMs)
}

void ReplicaFetcherManager::Wait(Fetcher& fetcher) {
  const BrokerId leader = fetcher.leader;
  fetcher.wait =
      timers_.Schedule(static_cast<TimeUs>(options_.fetch_backoff_ms) * kUsPerMs, [this, leader]() {
        auto found = fetchers_.find(leader);
        if (found == fetchers_.end()) return;
        found->second.wait = 0;
        Wake(found->second);
        Pump(leader);
      });
}

void ReplicaFetcherManager::Wake(Fetcher& fetcher) {
  // After a failed fetch: handlePartitionsWithErrors for the partitions it had (by name, as
  // Kafka's set holds them), once the await is over.
  std::vector<TopicPartition> to_delay = std::move(fetcher.delay_on_wake);
  fetcher.delay_on_wake.clear();
  for (const TopicPartition& tp : to_delay) {
    auto it = fetcher.partitions.find(tp);
    if (it != fetcher.partitions.end()) DelayPartition(fetcher, tp, it->second);
  }
}

void ReplicaFetcherManager::DelayPartition(Fetcher& fetcher, const TopicPartition& tp,
                                           PartitionState& state) {
  if (state.delayed) return;
  state.delayed = true;
  ++fetcher.delayed_in_phase[Index(state.phase)];
  fetcher.delays.push_back(
      Delay{.until = clock_.Now() + static_cast<TimeUs>(options_.fetch_backoff_ms) * kUsPerMs,
            .tp = tp,
            .incarnation = state.incarnation});
}

void ReplicaFetcherManager::ExpireDelays(Fetcher& fetcher) {
  const TimeUs now = clock_.Now();
  while (!fetcher.delays.empty() && fetcher.delays.front().until <= now) {
    const Delay& delay = fetcher.delays.front();
    auto it = fetcher.partitions.find(delay.tp);
    if (it != fetcher.partitions.end() && it->second.incarnation == delay.incarnation &&
        it->second.delayed) {
      it->second.delayed = false;
      --fetcher.delayed_in_phase[Index(it->second.phase)];
    }
    fetcher.delays.pop_front();
  }
}

void ReplicaFetcherManager::Forget(Fetcher& fetcher, const PartitionState& state) {
  --fetcher.in_phase[Index(state.phase)];
  if (state.delayed) --fetcher.delayed_in_phase[Index(state.phase)];
}

void ReplicaFetcherManager::SendOffsetsForLeaderEpoch(Fetcher& fetcher) {
  OffsetsForLeaderEpochRequest request;
  Sent sent;
  for (const auto& [tp, state] : fetcher.partitions) {
    if (state.phase != FetchPhase::kTruncating || state.delayed) continue;
    request.partitions.push_back(OffsetsForLeaderEpochPartition{
        .tp = tp,
        .leader_epoch = state.epoch_to_ask,
        .current_leader_epoch = Named(options_.epoch_requests_name_leader_epoch, state)});
    sent[tp] = state.incarnation;
  }
  fetcher.in_flight = true;
  const BrokerId leader = fetcher.leader;
  network_.Send(fetcher.host, std::move(request),
                [this, leader, sent = std::move(sent)](Result<Message> response) {
                  OnOffsetsForLeaderEpoch(leader, sent, std::move(response));
                });
}

void ReplicaFetcherManager::SendListOffsets(Fetcher& fetcher, FetchPhase phase) {
  ListOffsetsRequest request;
  request.replica_id = options_.local;  // the leader answers its LEO, not its HW
  Sent sent;
  const int64_t timestamp =
      phase == FetchPhase::kLeaderEndOffset ? kLatestTimestamp : kEarliestTimestamp;
  for (const auto& [tp, state] : fetcher.partitions) {
    if (state.phase != phase || state.delayed) continue;
    request.partitions.push_back(ListOffsetsPartition{
        .tp = tp,
        .timestamp = timestamp,
        .current_leader_epoch = Named(options_.epoch_requests_name_leader_epoch, state)});
    sent[tp] = state.incarnation;
  }
  fetcher.in_flight = true;
  const BrokerId leader = fetcher.leader;
  network_.Send(fetcher.host, std::move(request),
                [this, leader, phase, sent = std::move(sent)](Result<Message> response) {
                  OnListOffsets(leader, phase, sent, std::move(response));
                });
}

bool ReplicaFetcherManager::SendFetch(Fetcher& fetcher) {
  FetchRequest request;
  request.replica_id = options_.local;
  request.max_wait_ms = options_.fetch_wait_max_ms;
  request.min_bytes = options_.fetch_min_bytes;
  // FetchSessionHandler.Builder.build: a full fetch names every partition; an incremental one the
  // partitions new to the session, then those changed, and forgets those gone. Both walk the
  // partitions and the last fetch's in partition order.
  const bool full = !options_.fetch_sessions || fetcher.session.full();
  std::vector<TopicPartition> forgotten;
  std::vector<FetchPartition> changed;
  auto& sent = fetcher.sent;
  // Every partition ready (none truncating, none delayed), as most of the time.
  const bool all_ready =
      fetcher.in_phase[Index(FetchPhase::kFetching)] == fetcher.partitions.size() &&
      fetcher.delayed_in_phase[Index(FetchPhase::kFetching)] == 0;
  if (!full && all_ready && fetcher.sent_version == fetcher.membership && !sent.empty() &&
      sent.size() == fetcher.partitions.size()) {
    // No partition added or removed since the last fetch, which sent every one: only those whose
    // Partition changed since (`moved`; the others are still held quiet) may have moved offsets,
    // named in partition order as the walk below names them.
    std::sort(fetcher.moved.begin(), fetcher.moved.end(),
              [](const auto* a, const auto* b) { return a->first < b->first; });
    for (SentEntry* entry : fetcher.moved) {
      SentPartition& last = entry->second;
      const Offset fetch_offset = last.partition->log_end_offset();
      const Offset log_start_offset = last.partition->log_start_offset();
      if (fetch_offset != last.fetch_offset || log_start_offset != last.log_start_offset ||
          last.max_bytes != options_.fetch_max_bytes) {
        last.fetch_offset = fetch_offset;
        last.log_start_offset = log_start_offset;
        last.max_bytes = options_.fetch_max_bytes;
        request.partitions.push_back(FetchPartition{
            .tp = entry->first,
            .fetch_offset = fetch_offset,
            .log_start_offset = log_start_offset,
            .partition_max_bytes = last.max_bytes,
            .current_leader_epoch = Named(options_.fetches_name_leader_epoch, *last.state)});
      }
      Hold(fetcher, *entry);  // sent as it is now
    }
    fetcher.moved.clear();
    SendFetchRequest(fetcher, std::move(request), {});
    return true;
  }
  if (full && !options_.fetch_sessions && all_ready && fetcher.sent_version == fetcher.membership &&
      sent.size() == fetcher.partitions.size()) {
    // A full fetch (a release before fetch sessions) with the membership of the last one, which
    // named every partition: `sent` holds the same partitions in the same order, walked beside
    // them without a comparison of their names (a fetch per leader names every partition it
    // shares with it, each time, as Kafka's does).
    request.partitions.reserve(sent.size());
    auto entry = sent.begin();
    for (auto& [tp, state] : fetcher.partitions) {
      Partition* partition = state.partition;
      SentPartition& last = entry->second;
      ++entry;
      // The same partition (its Partition, compared instead of its name): the walks agree.
      KSIM_CHECK(partition != nullptr && last.partition == partition);
      last = SentPartition{.fetch_offset = partition->log_end_offset(),
                           .log_start_offset = partition->log_start_offset(),
                           .max_bytes = options_.fetch_max_bytes,
                           .incarnation = state.incarnation,
                           .state = &state,
                           .partition = partition};
      FetchPartition& asked = request.partitions.emplace_back();  // built in place
      asked.tp = tp;
      asked.fetch_offset = last.fetch_offset;
      asked.log_start_offset = last.log_start_offset;
      asked.partition_max_bytes = last.max_bytes;
      asked.current_leader_epoch = Named(options_.fetches_name_leader_epoch, state);
    }
    SendFetchRequest(fetcher, std::move(request), {});
    return true;
  }
  // Walked in full (a full fetch, or partitions added or removed): every hold starts again.
  if (options_.fetch_sessions) ReleaseHolds(fetcher);
  auto last = sent.begin();
  auto forget = [&] {
    if (!full) forgotten.push_back(last->first);
    last = sent.erase(last);
  };
  request.partitions.reserve(full ? fetcher.partitions.size() : 0);
  for (auto& [tp, state] : fetcher.partitions) {
    // Only the partitions ready for a fetch (isReadyForFetch); a session forgets the others.
    if (state.phase != FetchPhase::kFetching || state.delayed) continue;
    if (state.partition == nullptr) state.partition = lookup_(tp);
    Partition* partition = state.partition;
    if (partition == nullptr) continue;
    while (last != sent.end() && last->first < tp) forget();
    const SentPartition next{.fetch_offset = partition->log_end_offset(),
                             .log_start_offset = partition->log_start_offset(),
                             .max_bytes = options_.fetch_max_bytes,
                             .incarnation = state.incarnation,
                             .state = &state,
                             .partition = partition};
    std::vector<FetchPartition>* into = &request.partitions;
    if (last != sent.end() && last->first == tp) {
      if (!full) into = last->second.SameFetch(next) ? nullptr : &changed;
      last->second = next;
      ++last;
    } else {
      sent.emplace_hint(last, tp, next);
    }
    if (into == nullptr) continue;
    FetchPartition& entry = into->emplace_back();  // built in place
    entry.tp = tp;
    entry.fetch_offset = next.fetch_offset;
    entry.log_start_offset = next.log_start_offset;
    entry.partition_max_bytes = next.max_bytes;
    entry.current_leader_epoch = Named(options_.fetches_name_leader_epoch, state);
  }
  while (last != sent.end()) forget();
  fetcher.sent_version = fetcher.membership;
  if (options_.fetch_sessions) HoldSent(fetcher);
  if (sent.empty() && forgotten.empty()) return false;
  for (FetchPartition& entry : changed) request.partitions.push_back(std::move(entry));
  SendFetchRequest(fetcher, std::move(request), std::move(forgotten));
  return true;
}

void ReplicaFetcherManager::SendFetchRequest(Fetcher& fetcher, FetchRequest request,
                                             std::vector<TopicPartition> forgotten) {
  if (options_.fetch_sessions) {
    request.session = fetcher.session.Metadata(std::move(forgotten));
  }
  fetcher.in_flight = true;
  ++fetch_requests_sent_;
  const BrokerId leader = fetcher.leader;
  network_.Send(fetcher.host, std::move(request),
                [this, leader, version = fetcher.membership](Result<Message> response) {
                  OnFetch(leader, version, std::move(response));
                });
}

void ReplicaFetcherManager::SetPhase(BrokerId leader, PartitionState& state, FetchPhase phase) {
  Fetcher& fetcher = fetchers_.at(leader);
  Forget(fetcher, state);
  ++fetcher.in_phase[Index(phase)];
  if (state.delayed) ++fetcher.delayed_in_phase[Index(phase)];
  state.phase = phase;
}

ReplicaFetcherManager::PartitionState* ReplicaFetcherManager::Current(BrokerId leader,
                                                                      const TopicPartition& tp,
                                                                      uint64_t incarnation) {
  auto fetcher = fetchers_.find(leader);
  if (fetcher == fetchers_.end()) return nullptr;
  auto it = fetcher->second.partitions.find(tp);
  if (it == fetcher->second.partitions.end() || it->second.incarnation != incarnation) {
    return nullptr;
  }
  return &it->second;
}

void ReplicaFetcherManager::OnOffsetsForLeaderEpoch(BrokerId leader, const Sent& sent,
                                                    Result<Message> response) {
  auto found = fetchers_.find(leader);
  if (found == fetchers_.end()) return;
  Fetcher& fetcher = found->second;
  if (!response.ok() || !std::holds_alternative<OffsetsForLeaderEpochResponse>(*response)) {
    // fetchEpochsFromLeader: "if we get any unexpected exception, mark all partitions with an
    // error", each then delayed.
    for (const auto& [tp, incarnation] : sent) {
      PartitionState* state = Current(leader, tp, incarnation);
      if (state != nullptr && state->phase == FetchPhase::kTruncating) {
        DelayPartition(fetcher, tp, *state);
      }
    }
    return Done(leader);
  }
  for (const EpochEndOffset& answer :
       std::get<OffsetsForLeaderEpochResponse>(*response).partitions) {
    auto incarnation = sent.find(answer.tp);
    if (incarnation == sent.end()) continue;
    PartitionState* state = Current(leader, answer.tp, incarnation->second);
    Partition* partition = lookup_(answer.tp);
    if (state == nullptr || partition == nullptr || state->phase != FetchPhase::kTruncating) {
      continue;
    }
    if (answer.error_code == Errc::kFencedLeaderEpoch) {
      OnFenced(answer.tp, "offsets_for_leader_epoch");
      continue;
    }
    if (answer.error_code != Errc::kNone) {
      EmitError(answer.tp, "offsets_for_leader_epoch",
                Status(answer.error_code, "leader answered an error"));
      DelayPartition(fetcher, answer.tp, *state);  // "Retrying leaderEpoch request ..."
      continue;
    }
    // KIP-279: truncate where the leader says our epoch ends; another round when the leader's
    // answer names an earlier epoch than the one we asked about. A v0 answer names none.
    const LeaderEpoch answered = options_.epoch_request_v1 ? answer.leader_epoch : kUndefinedEpoch;
    const EpochAndEndOffset leader_answer{answered, answer.end_offset};
    const TruncationDecision decision = partition->DecideTruncation(leader_answer);
    // An UNDEFINED answer (the leader recorded no epoch at or after ours) cuts to our own high
    // watermark: the trace says so apart from a cut to the leader's word.
    const std::string_view reason = leader_answer.undefined() ? "undefined_epoch" : "leader_epoch";
    if (leader_answer.undefined()) state->undefined_answer_for = state->epoch_to_ask;
    if (Status status = partition->TruncateTo(decision.truncate_to, reason); !status.ok()) {
      EmitError(answer.tp, "truncate", status);
      DelayPartition(fetcher, answer.tp, *state);
      continue;
    }
    if (leader_answer.undefined()) partition->NoteUndefinedCut();
    if (decision.complete) {
      SetPhase(leader, *state, FetchPhase::kFetching);
    } else {
      state->epoch_to_ask = decision.next_epoch;
    }
  }
  Done(leader);
}

void ReplicaFetcherManager::OnListOffsets(BrokerId leader, FetchPhase phase, const Sent& sent,
                                          Result<Message> response) {
  auto found = fetchers_.find(leader);
  if (found == fetchers_.end()) return;
  Fetcher& fetcher = found->second;
  // handleOutOfRangeError: a failure leaves the partition fetching from where it was, delayed;
  // the fetch after the delay hears OFFSET_OUT_OF_RANGE again.
  auto retry_later = [&](const TopicPartition& tp, PartitionState& state) {
    SetPhase(leader, state, FetchPhase::kFetching);
    DelayPartition(fetcher, tp, state);
  };
  if (!response.ok() || !std::holds_alternative<ListOffsetsResponse>(*response)) {
    for (const auto& [tp, incarnation] : sent) {
      PartitionState* state = Current(leader, tp, incarnation);
      if (state != nullptr && state->phase == phase) retry_later(tp, *state);
    }
    return Done(leader);
  }
  for (const ListOffsetsPartitionResponse& answer :
       std::get<ListOffsetsResponse>(*response).responses) {
    auto incarnation = sent.find(answer.tp);
    if (incarnation == sent.end()) continue;
    PartitionState* state = Current(leader, answer.tp, incarnation->second);
    Partition* partition = lookup_(answer.tp);
    if (state == nullptr || partition == nullptr || state->phase != phase) continue;
    if (answer.error_code == Errc::kFencedLeaderEpoch) {
      OnFenced(answer.tp, "list_offsets");  // handleOutOfRangeError's FencedLeaderEpochException
      continue;
    }
    if (answer.error_code != Errc::kNone || answer.offset.value() < 0) {
      EmitError(answer.tp, "list_offsets", Status(answer.error_code, "leader answered an error"));
      retry_later(answer.tp, *state);
      continue;
    }
    Status status;
    if (phase == FetchPhase::kLeaderEndOffset) {
      // Kafka's handleOffsetOutOfRange: a leader whose log ends before ours (an unclean
      // election) makes us cut back to its end; otherwise our LEO is below its log start.
      if (answer.offset < partition->log_end_offset()) {
        if (options_.may_truncate_below_leader && !options_.may_truncate_below_leader(answer.tp)) {
          // "Exiting because log truncation is not allowed for partition ...": the fetcher
          // thread stops here (in System.exit, or throwing FatalExitError), so this leader's
          // fetcher stays busy and sends nothing more.
          const Status fatal(Errc::kUnknownServerError,
                             std::string(kTruncationNotAllowed) + " for partition " +
                                 ToString(answer.tp) + ", current leader " +
                                 std::to_string(leader.value()) + "'s latest offset " +
                                 std::to_string(answer.offset.value()) + " is less than replica " +
                                 std::to_string(options_.local.value()) + "'s latest offset " +
                                 std::to_string(partition->log_end_offset().value()));
          Emit(events_, ev::kReplicaFetchError,
               {{field::kTopic, answer.tp.topic},
                {field::kPartition, answer.tp.partition.value()},
                {field::kStage, "truncation_not_allowed"},
                {field::kError, ErrcName(fatal.code())},
                {field::kMessage, fatal.message()}});
          if (options_.on_fatal_exit) options_.on_fatal_exit(fatal);
          return;
        }
        status = partition->TruncateTo(answer.offset, "offset_out_of_range");
        SetPhase(leader, *state, FetchPhase::kFetching);
      } else {
        SetPhase(leader, *state, FetchPhase::kLeaderStartOffset);
      }
    } else {
      if (answer.offset > partition->log_end_offset()) {
        status = partition->TruncateFullyAndStartAt(answer.offset);
      }
      SetPhase(leader, *state, FetchPhase::kFetching);
    }
    if (!status.ok()) {
      EmitError(answer.tp, "truncate", status);
      retry_later(answer.tp, *state);
    }
  }
  Done(leader);
}

void ReplicaFetcherManager::OnFetch(BrokerId leader, uint64_t version, Result<Message> response) {
  auto found = fetchers_.find(leader);
  if (found == fetchers_.end()) return;
  Fetcher& fetcher = found->second;
  if (!response.ok() || !std::holds_alternative<FetchResponse>(*response)) {
    fetcher.session.HandleError();
    // processFetchRequest's catch: every partition has the error, the thread awaits
    // fetchBackOffMs, then delays them (Wake).
    fetcher.in_flight = false;
    fetcher.delay_on_wake.clear();
    fetcher.delay_on_wake.reserve(fetcher.partitions.size());
    for (const auto& [tp, state] : fetcher.partitions) fetcher.delay_on_wake.push_back(tp);
    if (fetcher.partitions.empty()) return Done(leader);
    return Wait(fetcher);
  }
  const FetchResponse& fetched = std::get<FetchResponse>(*response);
  // Each answer's entry of `sent` (null: not in it), looked up once for the session's check and
  // the answers' use: they come in the order of `sent` (a full fetch's); any other is looked up.
  // `sent` stays as it is until the next fetch is made (Done).
  std::vector<SentEntry*> requests(fetched.responses.size(), nullptr);
  bool all_sent = true;
  auto hint = fetcher.sent.begin();
  for (size_t i = 0; i < fetched.responses.size(); ++i) {
    const TopicPartition& tp = fetched.responses[i].tp;
    auto request = hint != fetcher.sent.end() && hint->first == tp ? hint : fetcher.sent.find(tp);
    if (request == fetcher.sent.end()) {
      all_sent = false;
      continue;
    }
    requests[i] = &*request;
    hint = std::next(request);
  }
  if (options_.fetch_sessions && !OnSessionAnswer(fetcher, fetched, all_sent)) {
    return Done(leader);
  }
  for (size_t i = 0; i < fetched.responses.size(); ++i) {
    const FetchPartitionResponse& answer = fetched.responses[i];
    if (requests[i] == nullptr) continue;
    const SentPartition& asked = requests[i]->second;
    // Checked for each answer: applying one may remove partitions.
    const bool same_members = version == fetcher.membership;
    PartitionState* state =
        same_members ? asked.state : Current(leader, answer.tp, asked.incarnation);
    Partition* partition = same_members ? asked.partition : lookup_(answer.tp);
    if (state == nullptr || partition == nullptr || state->phase != FetchPhase::kFetching ||
        state->delayed || partition->log_end_offset() != asked.fetch_offset) {
      continue;  // removed, re-added or moved meanwhile: the answer is stale
    }
    if (answer.error_code == Errc::kOffsetOutOfRange) {
      SetPhase(leader, *state, FetchPhase::kLeaderEndOffset);
      continue;
    }
    if (answer.error_code == Errc::kFencedLeaderEpoch) {
      OnFenced(answer.tp, "fetch");
      continue;
    }
    if (answer.error_code != Errc::kNone) {
      EmitError(answer.tp, "fetch", Status(answer.error_code, "leader answered an error"));
      DelayPartition(fetcher, answer.tp, *state);
      continue;
    }
    // Most answers of a fetch naming many partitions carry nothing new for most of them.
    if (answer.records.empty() &&
        partition->FollowerFetchChangesNothing(answer.high_watermark, answer.log_start_offset)) {
      continue;
    }
    Result<LogAppendInfo> appended =
        partition->AppendAsFollower(answer.records, answer.high_watermark, answer.log_start_offset);
    if (!appended.ok()) {
      EmitError(answer.tp, "append", appended.status());
      if (StopsTheFetcher(appended.status())) {
        // The partitions after it in this answer are not applied: the thread ends here.
        auto it = fetchers_.find(leader);
        if (it != fetchers_.end()) return Stop(it->second, answer.tp, appended.status());
      }
      DelayPartition(fetcher, answer.tp, *state);
    }
  }
  Done(leader);
}

bool ReplicaFetcherManager::OnSessionAnswer(Fetcher& fetcher, const FetchResponse& response,
                                            bool all_sent) {
  const FetchSessionHandler::Verdict verdict =
      fetcher.session.HandleResponse(response, fetcher.sent.size(), all_sent);
  if (!verdict.reset.empty()) {
    Emit(events_, ev::kReplicaFetchSessionReset,
         {{field::kLeader, fetcher.leader.value()},
          {field::kSession, response.session ? response.session->session_id : kInvalidSessionId},
          {field::kError, verdict.reset}});
  }
  return verdict.apply;
}

void ReplicaFetcherManager::Stop(Fetcher& fetcher, const TopicPartition& tp, const Status& status) {
  fetcher.in_flight = false;
  timers_.Cancel(fetcher.wait);
  fetcher.wait = 0;
  fetcher.stopped = Stopped{.tp = tp, .error = std::string(ErrcName(status.code()))};
  if (auto state = fetcher.partitions.find(tp); state != fetcher.partitions.end()) {
    fetcher.stopped->undefined_answer_for = state->second.undefined_answer_for;
  }
  Emit(events_, ev::kReplicaFetcherStopped,
       {{field::kLeader, fetcher.leader.value()},
        {field::kTopic, tp.topic},
        {field::kPartition, tp.partition.value()},
        {field::kError, ErrcName(status.code())},
        {field::kMessage, status.message()}});
  if (fetcher.partitions.empty()) EraseFetcher(fetchers_.find(fetcher.leader));
}

std::optional<CurrentLeaderEpoch> ReplicaFetcherManager::Named(bool named,
                                                               const PartitionState& state) {
  if (!named) return std::nullopt;
  return CurrentLeaderEpoch{.epoch = state.current_leader_epoch};
}

void ReplicaFetcherManager::OnFenced(const TopicPartition& tp, std::string_view stage) {
  EmitError(tp, stage, Status(Errc::kFencedLeaderEpoch, "leader knows a later epoch"));
  // The fetcher stays while its request is in flight (the caller is handling its answer).
  RemovePartitions({tp});
}

std::optional<ReplicaFetcherManager::Stopped> ReplicaFetcherManager::StoppedFetcher(
    BrokerId leader) const {
  auto it = fetchers_.find(leader);
  if (it == fetchers_.end()) return std::nullopt;
  return it->second.stopped;
}

void ReplicaFetcherManager::Done(BrokerId leader) {
  auto it = fetchers_.find(leader);
  if (it == fetchers_.end()) return;
  it->second.in_flight = false;
  Pump(leader);
}

void ReplicaFetcherManager::EmitError(const TopicPartition& tp, std::string_view stage,
                                      const Status& status) {
  Emit(events_, ev::kReplicaFetchError,
       {{field::kTopic, tp.topic},
        {field::kPartition, tp.partition.value()},
        {field::kStage, stage},
        {field::kError, ErrcName(status.code())}});
}

}  // namespace ksim
