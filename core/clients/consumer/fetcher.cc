#include "core/clients/consumer/fetcher.h"

#include <algorithm>
#include <iterator>
#include <tuple>
#include <utility>
#include <variant>

#include "core/base/check.h"
#include "core/base/trace_names.h"
#include "core/record/record_batch.h"

namespace ksim {
namespace {

std::string AsString(const std::optional<Bytes>& bytes) {
  return bytes ? std::string(bytes->begin(), bytes->end()) : std::string();
}

int64_t StrategyTimestamp(const std::string& strategy) {
  return strategy == "earliest" ? kEarliestTimestamp : kLatestTimestamp;
}

}  // namespace

Fetcher::Fetcher(const ConsumerConfig& config, ConsumerNetwork& network, Timers& timers,
                 const Clock& clock, EventSink events, std::function<void()> on_progress)
    : config_(config),
      network_(network),
      timers_(timers),
      clock_(clock),
      events_(std::move(events)),
      on_progress_(std::move(on_progress)),
      sessions_(config.release >= KafkaRelease::k1_1 &&
                config.brokers_release >= KafkaRelease::k1_1) {}

Fetcher::PartitionState* Fetcher::Find(const TopicPartition& tp) {
  auto it = partitions_.find(tp);
  return it == partitions_.end() ? nullptr : &it->second;
}

void Fetcher::Assign(const std::vector<TopicPartition>& partitions) {
  std::map<TopicPartition, PartitionState> next;
  std::vector<std::string> topics;
  for (const TopicPartition& tp : partitions) {
    auto it = partitions_.find(tp);
    if (it != partitions_.end()) {
      PartitionState& kept = next.emplace(tp, std::move(it->second)).first->second;
      kept.host = nullptr;  // grouped again (GroupByHost) before any fetch
      kept.changed = false;
    } else {
      next.emplace(tp, PartitionState{});
    }
    topics.push_back(tp.topic);
  }
  partitions_ = std::move(next);
  ++assign_version_;
  in_state_.fill(0);
  buffered_.clear();
  size_t rank = 0;
  for (auto& [tp, state] : partitions_) {
    state.rank = rank++;
    ++in_state_[static_cast<size_t>(state.state)];
    if (!state.buffered.empty()) buffered_.emplace(state.rank, &state);
  }
  network_.AddTopics(topics);
}

std::vector<TopicPartition> Fetcher::assignment() const {
  std::vector<TopicPartition> out;
  for (const auto& [tp, state] : partitions_) out.push_back(tp);
  return out;
}

std::map<TopicPartition, Offset> Fetcher::positions() const {
  std::map<TopicPartition, Offset> out;
  for (const auto& [tp, state] : partitions_) {
    if (state.state == State::kFetching) out[tp] = state.position;
  }
  return out;
}

void Fetcher::SetState(PartitionState& state, State next) {
  --in_state_[static_cast<size_t>(state.state)];
  ++in_state_[static_cast<size_t>(next)];
  state.state = next;
  Touch(state);
}

void Fetcher::ClearBuffered(PartitionState& state) {
  if (!state.buffered.empty()) buffered_.erase(state.rank);
  state.buffered.clear();
  Touch(state);
}

void Fetcher::Touch(PartitionState& state) {
  // Ungrouped (a new assignment or new metadata): the next grouping starts every host over.
  if (state.host == nullptr || state.changed) return;
  state.changed = true;
  state.host->changed.push_back(&state);
}

std::vector<TopicPartition> Fetcher::NeedingPosition() const {
  std::vector<TopicPartition> out;
  if (in_state_[static_cast<size_t>(State::kNeedsPosition)] == 0) return out;
  for (const auto& [tp, state] : partitions_) {
    if (state.state == State::kNeedsPosition) out.push_back(tp);
  }
  return out;
}

void Fetcher::MarkAwaitingCommitted(const TopicPartition& tp) {
  PartitionState* state = Find(tp);
  KSIM_CHECK(state != nullptr && state->state == State::kNeedsPosition);
  SetState(*state, State::kAwaitingCommitted);
}

void Fetcher::OnCommitted(const TopicPartition& tp, Offset committed) {
  PartitionState* state = Find(tp);
  if (state == nullptr || state->state != State::kAwaitingCommitted) return;
  if (committed >= Offset(0)) {
    SetState(*state, State::kFetching);  // (touches it)
    state->position = committed;
    ClearBuffered(*state);
    return;
  }
  SetState(*state, State::kNeedsPosition);
  Reset(tp);
}

void Fetcher::OnCommittedFailed(const TopicPartition& tp) {
  PartitionState* state = Find(tp);
  if (state != nullptr && state->state == State::kAwaitingCommitted) {
    SetState(*state, State::kNeedsPosition);
  }
}

void Fetcher::Reset(const TopicPartition& tp) {
  PartitionState* state = Find(tp);
  KSIM_CHECK(state != nullptr);
  state->reset_from = state->state == State::kFetching ? state->position : kUndefinedOffset;
  ClearBuffered(*state);
  state->position = kUndefinedOffset;
  if (config_.auto_offset_reset == "none") {
    // Kafka's NoOffsetForPartitionException / OffsetOutOfRangeException: the caller sees it.
    SetState(*state, State::kFailed);
    failure_ = true;
    Emit(events_, ev::kFetchError,
         EventFields{{field::kTopic, tp.topic},
                     {field::kPartition, tp.partition.value()},
                     {field::kError, std::string(ErrcName(Errc::kOffsetOutOfRange))}});
    return;
  }
  SetState(*state, State::kResetting);
}

void Fetcher::SendRequests() {
  if (shut_down_) return;
  SendListOffsets();
  SendFetches();
}

// ---- Offset reset (Kafka's Fetcher.resetOffsets) -----------------------------------------

void Fetcher::SendListOffsets() {
  if (in_state_[static_cast<size_t>(State::kResetting)] == 0) return;
  std::map<std::string, std::vector<TopicPartition>> by_leader;
  bool missing_leader = false;
  for (auto& [tp, state] : partitions_) {
    if (state.state != State::kResetting || state.list_offsets_in_flight) continue;
    std::optional<std::string> leader = network_.LeaderHost(tp);
    if (!leader) {
      missing_leader = true;
      continue;
    }
    by_leader[*leader].push_back(tp);
  }
  if (missing_leader) network_.RequestUpdate();
  for (auto& [leader, tps] : by_leader) {
    ListOffsetsRequest request;
    for (const TopicPartition& tp : tps) {
      partitions_[tp].list_offsets_in_flight = true;
      request.partitions.push_back(
          ListOffsetsPartition{tp, StrategyTimestamp(config_.auto_offset_reset)});
    }
    network_.Send(leader, std::move(request),
                  [this, leader = leader, tps = tps](Result<Message> response) {
                    OnListOffsets(leader, tps, std::move(response));
                  });
  }
}

void Fetcher::OnListOffsets(const std::string& leader, const std::vector<TopicPartition>& asked,
                            Result<Message> response) {
  if (shut_down_) return;
  for (const TopicPartition& tp : asked) {
    if (PartitionState* state = Find(tp)) state->list_offsets_in_flight = false;
  }
  const ListOffsetsResponse* answer =
      response.ok() ? std::get_if<ListOffsetsResponse>(&*response) : nullptr;
  bool retry = answer == nullptr;
  if (answer != nullptr) {
    for (const ListOffsetsPartitionResponse& partition : answer->responses) {
      PartitionState* state = Find(partition.tp);
      if (state == nullptr || state->state != State::kResetting) continue;
      if (partition.error_code != Errc::kNone || partition.offset < Offset(0)) {
        retry = true;
        continue;
      }
      SetState(*state, State::kFetching);  // (touches it)
      state->position = partition.offset;
      Emit(events_, ev::kOffsetReset,
           EventFields{{field::kTopic, partition.tp.topic},
                       {field::kPartition, partition.tp.partition.value()},
                       {field::kStrategy, config_.auto_offset_reset},
                       {field::kOffset, partition.offset.value()},
                       {field::kFrom, state->reset_from.value()}});
    }
  }
  if (retry) {
    network_.RequestUpdate();
    BackOff(leader);
  }
  Progress();
}

// ---- Fetch (Kafka's Fetcher.sendFetches / parseCompletedFetch) ---------------------------

void Fetcher::GroupByHost() {
  const std::pair<uint64_t, uint64_t> versions{assign_version_, network_.leaders_version()};
  if (grouped_at_ == versions) return;
  std::optional<std::vector<TopicPartition>> moved = network_.TakeLeaderChanges();
  if (grouped_at_.has_value() && grouped_at_->first == assign_version_ && moved.has_value()) {
    // Only some leaders moved: their partitions change hosts, the other hosts' sessions go on
    // from what changed (BuildChanged), as the walk of every partition would make them.
    grouped_at_ = versions;
    for (const TopicPartition& tp : *moved) {
      if (PartitionState* state = Find(tp)) Regroup(*state);
    }
    return;
  }
  grouped_at_ = versions;
  by_host_.clear();
  unled_.clear();
  // Each host's Host found by the address of its name (the network's, stable through the walk):
  // a few hosts lead every partition in turn, and a look-up by name each time was most of the
  // walk.
  std::vector<std::pair<const std::string*, Host*>> hosts;
  for (auto& [tp, state] : partitions_) {
    const std::string* leader = network_.FindLeaderHost(tp);
    state.tp = &tp;
    state.changed = false;
    state.host = nullptr;
    if (leader == nullptr) {
      unled_.push_back(&state);
      continue;
    }
    auto known = std::find_if(hosts.begin(), hosts.end(),
                              [leader](const auto& entry) { return entry.first == leader; });
    Host* host = known != hosts.end() ? known->second
                                      : hosts.emplace_back(leader, &by_host_[*leader]).second;
    host->members.push_back(&state);
    state.host = host;
  }
}

void Fetcher::Regroup(PartitionState& state) {
  const std::string* leader = network_.FindLeaderHost(*state.tp);
  Host* host = leader != nullptr ? &by_host_[*leader] : nullptr;
  if (host == state.host) return;
  auto by_tp = [](const PartitionState* a, const PartitionState* b) { return *a->tp < *b->tp; };
  if (Host* from = state.host; from != nullptr) {
    auto at = std::lower_bound(from->members.begin(), from->members.end(), &state, by_tp);
    KSIM_CHECK(at != from->members.end() && *at == &state);
    from->members.erase(at);
    if (state.changed) std::erase(from->changed, &state);
    from->departed.push_back(state.tp);
  } else {
    std::erase(unled_, &state);
  }
  state.changed = false;
  state.host = host;
  if (host == nullptr) {
    unled_.push_back(&state);
    return;
  }
  host->members.insert(std::lower_bound(host->members.begin(), host->members.end(), &state, by_tp),
                       &state);
  std::erase(host->departed, state.tp);  // back: a change like any other
  Touch(state);
}

FetchPartition Fetcher::FetchOf(const PartitionState& state) const {
  return FetchPartition{*state.tp, state.position, kUndefinedOffset,
                        config_.max_partition_fetch_bytes};
}

std::vector<FetchPartition> Fetcher::Fetchable(const Host& host, Asked* asked) const {
  std::vector<FetchPartition> fetches;
  fetches.reserve(host.members.size());
  if (asked != nullptr) asked->reserve(host.members.size());
  for (PartitionState* state : host.members) {
    if (!IsFetchable(*state)) continue;
    fetches.push_back(FetchOf(*state));
    if (asked != nullptr) asked->push_back(AskedPartition{*state->tp, state->position, state});
  }
  return fetches;
}

std::optional<FetchSessionHandler::Request> Fetcher::BuildChanged(Host& host,
                                                                  FetchSessionHandler& session) {
  std::sort(host.changed.begin(), host.changed.end(),
            [](const PartitionState* a, const PartitionState* b) { return *a->tp < *b->tp; });
  std::vector<FetchSessionHandler::Change> changes;
  changes.reserve(host.changed.size() + host.departed.size());
  for (PartitionState* state : host.changed) {
    FetchSessionHandler::Change& change = changes.emplace_back();
    change.tp = state->tp;
    if (IsFetchable(*state)) change.fetch = FetchOf(*state);
  }
  if (!host.departed.empty()) {
    // Not fetched from here any more; none of them is a member (Regroup).
    for (const TopicPartition* tp : host.departed) changes.push_back({.tp = tp, .fetch = {}});
    std::sort(changes.begin(), changes.end(),
              [](const auto& a, const auto& b) { return *a.tp < *b.tp; });
  }
#ifndef NDEBUG
  // Debug builds (the tests) check the changes against the walk of every partition they spare.
  FetchSessionHandler walked = session;
  std::vector<FetchPartition> every = Fetchable(host, nullptr);
  std::optional<FetchSessionHandler::Request> expected;
  if (!every.empty()) expected = walked.Build(std::move(every));
#endif
  std::optional<FetchSessionHandler::Request> built = session.BuildChanged(std::move(changes));
#ifndef NDEBUG
  KSIM_CHECK(built.has_value() == expected.has_value());
  if (built) {
    KSIM_CHECK(built->partitions == expected->partitions);
    KSIM_CHECK(built->forgotten == expected->forgotten);
    KSIM_CHECK(session.partitions() == walked.partitions());
  }
#endif
  if (built) ClearChanged(host);
  return built;
}

void Fetcher::ClearChanged(Host& host) {
  for (PartitionState* state : host.changed) state->changed = false;
  host.changed.clear();
  host.departed.clear();
  host.built = true;
}

void Fetcher::SendFetches() {
  // Kafka's createFetchRequests: every fetchable partition (a position, nothing buffered) whose
  // leader is known, has no Fetch in flight and is not backing off, one request per leader.
  GroupByHost();
  const bool missing_leader = std::any_of(unled_.begin(), unled_.end(),
                                          [](const PartitionState* m) { return IsFetchable(*m); });
  std::vector<std::tuple<std::string, FetchRequest, Asked>> requests;
  const TimeUs now = clock_.Now();
  for (auto& [name, host] : by_host_) {
    if (fetching_.count(name) > 0) continue;
    auto backoff = backoff_until_us_.find(name);
    if (backoff != backoff_until_us_.end() && backoff->second > now) continue;
    FetchRequest request;
    request.max_wait_ms = config_.fetch_max_wait_ms;
    request.min_bytes = config_.fetch_min_bytes;
    Asked asked;
    if (!sessions_) {
      request.partitions = Fetchable(host, &asked);
      if (request.partitions.empty()) continue;
      requests.emplace_back(name, std::move(request), std::move(asked));
      continue;
    }
    // The session decides what is named: the answer is matched against the session. Once it
    // was built from this host's partitions, what it names follows from those that changed:
    // the same request as the walk of them all (FetchSessionHandler::Build) makes.
    FetchSessionHandler& session = sessions_by_host_[name];
    std::optional<FetchSessionHandler::Request> built;
    if (host.built && !session.full()) {
      built = BuildChanged(host, session);
    } else if (std::vector<FetchPartition> fetches = Fetchable(host, nullptr); !fetches.empty()) {
      built = session.Build(std::move(fetches));
      ClearChanged(host);
    }
    if (!built) continue;
    request.partitions = std::move(built->partitions);
    request.session = session.Metadata(std::move(built->forgotten));
    requests.emplace_back(name, std::move(request), std::move(asked));
  }
  if (missing_leader) network_.RequestUpdate();
  for (auto& [leader, request, asked] : requests) {
    fetching_.insert(leader);
    if (sessions_) {
      network_.Send(leader, std::move(request), [this, leader = leader](Result<Message> response) {
        OnSessionFetch(leader, std::move(response));
      });
      continue;
    }
    network_.Send(
        leader, std::move(request),
        [this, leader = leader, version = assign_version_, asked = std::move(asked)](
            Result<Message> response) { OnFetch(leader, version, asked, std::move(response)); });
  }
}

void Fetcher::OnFetch(const std::string& leader, uint64_t assign_version, const Asked& asked,
                      Result<Message> response) {
  if (shut_down_) return;
  fetching_.erase(leader);
  const FetchResponse* answer = response.ok() ? std::get_if<FetchResponse>(&*response) : nullptr;
  if (answer == nullptr) {
    std::vector<TopicPartition> tps;
    for (const AskedPartition& entry : asked) tps.push_back(entry.tp);
    return FetchFailed(leader, response.ok() ? Errc::kUnknownServerError : response.status().code(),
                       tps);
  }
  bool refresh = false;
  const std::vector<FetchPartitionResponse>& answers = answer->responses;
  for (size_t i = 0; i < answers.size(); ++i) {
    const FetchPartitionResponse& data = answers[i];
    // The leader answers in request order; an answer elsewhere is searched for.
    auto it = i < asked.size() && asked[i].tp == data.tp
                  ? asked.begin() + static_cast<std::ptrdiff_t>(i)
                  : std::lower_bound(asked.begin(), asked.end(), data.tp,
                                     [](const AskedPartition& entry, const TopicPartition& tp) {
                                       return entry.tp < tp;
                                     });
    if (it == asked.end() || it->tp != data.tp) continue;
    refresh |= OnPartitionAnswer(data, it->fetch_offset,
                                 assign_version == assign_version_ ? it->state : Find(data.tp));
  }
  FetchDone(leader, refresh);
}

void Fetcher::OnSessionFetch(const std::string& leader, Result<Message> response) {
  if (shut_down_) return;
  fetching_.erase(leader);
  FetchSessionHandler& session = sessions_by_host_.at(leader);
  const FetchResponse* answer = response.ok() ? std::get_if<FetchResponse>(&*response) : nullptr;
  if (answer == nullptr) {
    // The fetch was for every partition of the session.
    std::vector<TopicPartition> tps;
    for (const auto& [tp, sent] : session.partitions()) tps.push_back(tp);
    session.HandleError();
    return FetchFailed(leader, response.ok() ? Errc::kUnknownServerError : response.status().code(),
                       tps);
  }
  const FetchSessionHandler::Verdict verdict = session.HandleResponse(*answer);
  if (!verdict.reset.empty()) {
    // Kafka's consumer logs it at INFO ("Node 1 was unable to process the fetch request with
    // (sessionId=..., epoch=...): FETCH_SESSION_ID_NOT_FOUND.") and fetches in full next.
    Emit(events_, ev::kFetchSessionReset,
         EventFields{
             {field::kHost, leader},
             {field::kSession, answer->session ? answer->session->session_id : kInvalidSessionId},
             {field::kError, std::string(verdict.reset)}});
  }
  if (!verdict.apply) return Progress();
  bool refresh = false;
  for (const FetchPartitionResponse& data : answer->responses) {
    // In the session (HandleResponse checked): fetched from where the session last sent it.
    refresh |= OnPartitionAnswer(data, session.Find(data.tp)->fetch_offset, Find(data.tp));
  }
  FetchDone(leader, refresh);
}

void Fetcher::FetchFailed(const std::string& leader, Errc error,
                          const std::vector<TopicPartition>& tps) {
  for (const TopicPartition& tp : tps) {
    Emit(events_, ev::kFetchError,
         EventFields{{field::kTopic, tp.topic},
                     {field::kPartition, tp.partition.value()},
                     {field::kError, std::string(ErrcName(error))}});
  }
  FetchDone(leader, /*refresh=*/true);
}

void Fetcher::FetchDone(const std::string& leader, bool refresh) {
  if (refresh) {
    network_.RequestUpdate();
    BackOff(leader);
  }
  Progress();
}

bool Fetcher::OnPartitionAnswer(const FetchPartitionResponse& data, Offset fetch_offset,
                                PartitionState* state) {
  if (data.error_code == Errc::kNotLeaderForPartition ||
      data.error_code == Errc::kUnknownTopicOrPartition ||
      (data.error_code != Errc::kNone && data.error_code != Errc::kOffsetOutOfRange)) {
    Emit(events_, ev::kFetchError,
         EventFields{{field::kTopic, data.tp.topic},
                     {field::kPartition, data.tp.partition.value()},
                     {field::kError, std::string(ErrcName(data.error_code))}});
    return true;
  }
  HandlePartitionData(data, fetch_offset, state);
  return false;
}

void Fetcher::HandlePartitionData(const FetchPartitionResponse& data, Offset fetch_offset,
                                  PartitionState* state) {
  // Revoked, reset or moved since the request left: the answer is stale.
  if (state == nullptr || state->state != State::kFetching || state->position != fetch_offset ||
      !state->buffered.empty()) {
    return;
  }
  if (data.error_code == Errc::kOffsetOutOfRange) {
    Reset(data.tp);
    return;
  }
  const bool was_empty = state->buffered.empty();
  BatchIterator batches(data.records);
  while (std::optional<BatchIterator::Item> batch = batches.Next()) {
    if (batch->header.control()) continue;
    Result<std::vector<Record>> records = DecodeRecords(batch->bytes);
    if (!records.ok()) break;  // Kafka raises KafkaException; here the rest is fetched again
    for (Record& record : *records) {
      if (record.offset < fetch_offset) continue;  // the head of a batch before the position
      if (data.high_watermark >= Offset(0) && record.offset >= data.high_watermark) break;
      ConsumerRecord out;
      out.tp = data.tp;
      out.offset = record.offset;
      out.timestamp_ms = record.timestamp_ms;
      if (record.key) out.key = AsString(record.key);
      out.value = AsString(record.value);
      state->buffered.push_back(std::move(out));
    }
  }
  if (was_empty && !state->buffered.empty()) {
    buffered_.emplace(state->rank, state);
    Touch(*state);
  }
}

void Fetcher::BackOff(const std::string& leader) {
  const TimeUs backoff_us = config_.retry_backoff_ms * kUsPerMs;
  backoff_until_us_[leader] = clock_.Now() + backoff_us;
  timers_.Schedule(backoff_us, [this] { Progress(); });
}

void Fetcher::Progress() {
  if (!shut_down_ && on_progress_) on_progress_();
}

// ---- Handing records out ---------------------------------------------------------------

bool Fetcher::HasRecords() const { return !buffered_.empty(); }

std::vector<ConsumerRecord> Fetcher::Drain(int32_t max_records) {
  KSIM_CHECK(max_records >= 1);
  std::vector<ConsumerRecord> out;
  if (partitions_.empty()) return out;
  // Partitions in turn, in partition order from the one `start` ranks name, one further each
  // call, so that none starves: of them, those with records buffered.
  const size_t start = next_drain_++ % partitions_.size();
  auto serve = [&](std::map<size_t, PartitionState*>::iterator at) {
    PartitionState& state = *at->second;
    while (!state.buffered.empty() && static_cast<int32_t>(out.size()) < max_records) {
      ConsumerRecord& record = state.buffered.front();
      KSIM_CHECK(record.offset >= state.position);
      state.position = record.offset + 1;
      Touch(state);
      out.push_back(std::move(record));
      state.buffered.pop_front();
    }
    return state.buffered.empty() ? buffered_.erase(at) : std::next(at);
  };
  auto at = buffered_.lower_bound(start);
  while (at != buffered_.end() && static_cast<int32_t>(out.size()) < max_records) at = serve(at);
  at = buffered_.begin();
  while (at != buffered_.end() && at->first < start &&
         static_cast<int32_t>(out.size()) < max_records) {
    at = serve(at);
  }
  return out;
}

bool Fetcher::TakeFailure() {
  const bool failed = failure_;
  failure_ = false;
  return failed;
}

}  // namespace ksim
