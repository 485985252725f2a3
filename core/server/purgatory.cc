#include "core/server/purgatory.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <span>
#include <utility>
#include <vector>

namespace ksim {

// ---- Purgatory ----------------------------------------------------------------------------------

bool Purgatory::TryCompleteElseWatch(std::unique_ptr<DelayedOperation> operation, TimeUs timeout_us,
                                     const std::vector<TopicPartition>& keys) {
  return TryCompleteElseWatchLists(std::move(operation), timeout_us, [&](const auto& watch) {
    for (const TopicPartition& key : keys) watch(WatchListOf(key));
  });
}

void Purgatory::Watch(uint64_t id, Entry& entry, WatchList& ids) {
  if (!ids.empty() && ids.back() == id) return;  // a key named twice
  ids.push_back(id);
  ++entry.watched;
  ++watched_;
}

void Purgatory::WatchLate(uint64_t id, WatchList& list) {
  auto parked = operations_.find(id);
  if (parked == operations_.end()) return;
  auto at = std::lower_bound(list.begin(), list.end(), id);
  if (at != list.end() && *at == id) return;
  list.insert(at, id);
  ++parked->second.watched;
  ++watched_;
  parked->second.operation->WatchAdded();
}

void Purgatory::StartTimer(uint64_t id, Entry& entry, TimeUs timeout_us) {
  entry.timer = timers_.Schedule(timeout_us, [this, id]() { Expire(id); });
}

void Purgatory::DropCompleted(std::vector<uint64_t>& ids) {
  const size_t before = ids.size();
  std::erase_if(ids, [this](uint64_t id) { return !operations_.contains(id); });
  stale_ -= before - ids.size();
  watched_ -= before - ids.size();
}

int Purgatory::CheckAndComplete(const TopicPartition& key) {
  auto watching = watchers_.find(key);
  if (watching == watchers_.end()) return 0;
  DropCompleted(watching->second);
  if (watching->second.empty()) return 0;
  // A copy: completing an operation may park another on this key. A key has a few watchers at
  // a time (a produce waiting for its acks, a follower's and a consumer's fetch): copied to the
  // stack, not to a vector allocated at each of the many checks.
  std::array<uint64_t, 8> few;
  std::vector<uint64_t> many;
  std::span<const uint64_t> ids;
  if (watching->second.size() <= few.size()) {
    std::copy(watching->second.begin(), watching->second.end(), few.begin());
    ids = std::span<const uint64_t>(few.data(), watching->second.size());
  } else {
    many = watching->second;
    ids = many;
  }
  int completed = 0;
  for (uint64_t id : ids) {
    auto it = operations_.find(id);
    if (it == operations_.end()) continue;
    if (!it->second.operation->TryCompleteFor(key)) continue;
    timers_.Cancel(it->second.timer);
    Remove(id);
    ++completed;
  }
  return completed;
}

void Purgatory::Clear() {
  timers_.CancelAll();
  operations_.clear();
  watchers_.clear();
  watched_ = 0;
  stale_ = 0;
  ++generation_;
}

void Purgatory::Remove(uint64_t id) {
  auto it = operations_.find(id);
  KSIM_CHECK(it != operations_.end());
  stale_ += it->second.watched;
  operations_.erase(it);
  // Kafka's purge: once the ids left behind outnumber the live ones, every list drops them.
  if (stale_ > 1024 && stale_ > watched_ - stale_) {
    for (auto& [key, ids] : watchers_) DropCompleted(ids);
  }
}

void Purgatory::Expire(uint64_t id) {
  auto it = operations_.find(id);
  if (it == operations_.end()) return;
  // Take it out first: the answer it sends must not find it still watched.
  std::unique_ptr<DelayedOperation> operation = std::move(it->second.operation);
  Remove(id);
  operation->OnExpiration();
}

// ---- DelayedProduce -----------------------------------------------------------------------------

DelayedProduce::DelayedProduce(int16_t acks, std::vector<ProducePartitionStatus> statuses,
                               PartitionLookup lookup, Respond respond)
    : acks_(acks),
      statuses_(std::move(statuses)),
      lookup_(std::move(lookup)),
      respond_(std::move(respond)) {
  KSIM_CHECK(acks_ < 0 || acks_ > 1);
  KSIM_CHECK(respond_ != nullptr);
}

bool DelayedProduce::Settle(ProducePartitionStatus& status) {
  Partition* partition = lookup_(status.response.tp);
  if (partition == nullptr) {
    status.pending = false;
    status.response.error_code = Errc::kUnknownTopicOrPartition;
    return true;
  }
  const AcksProgress progress =
      partition->CheckEnoughReplicasReached(status.required_offset, acks_);
  if (!progress.done) return false;
  status.pending = false;
  status.response.error_code = progress.error;
  return true;
}

bool DelayedProduce::TryComplete() {
  pending_ = 0;
  for (ProducePartitionStatus& status : statuses_) {
    if (status.pending && !Settle(status)) ++pending_;
  }
  checked_all_ = true;
  if (pending_ > 0) return false;
  Answer();
  return true;
}

bool DelayedProduce::TryCompleteFor(const TopicPartition& key) {
  if (!checked_all_) return TryComplete();
#ifndef NDEBUG
  for (const ProducePartitionStatus& status : statuses_) {
    if (!status.pending || status.response.tp == key) continue;
    ProducePartitionStatus copy = status;
    KSIM_CHECK_MSG(!Settle(copy), "a produce partition settled without a check of its key");
  }
#endif
  for (ProducePartitionStatus& status : statuses_) {
    if (status.pending && status.response.tp == key && Settle(status)) --pending_;
  }
  if (pending_ > 0) return false;
  Answer();
  return true;
}

void DelayedProduce::OnExpiration() {
  for (ProducePartitionStatus& status : statuses_) {
    if (!status.pending) continue;
    status.pending = false;
    status.response.error_code = Errc::kRequestTimedOut;
  }
  Answer();
}

void DelayedProduce::Answer() {
  ProduceResponse response;
  response.responses.reserve(statuses_.size());
  for (ProducePartitionStatus& status : statuses_) {
    KSIM_CHECK(!status.pending);
    response.responses.push_back(std::move(status.response));
  }
  respond_(std::move(response));
}

// ---- DelayedFetch -------------------------------------------------------------------------------

bool FetchCanCompleteNow(const FetchRequest& request,
                         const std::vector<FetchPartitionResponse>& read) {
  return request.partitions.empty() || FetchReadSuffices(request, read);
}

bool FetchReadSuffices(const FetchRequest& request,
                       const std::vector<FetchPartitionResponse>& read) {
  if (request.max_wait_ms <= 0) return true;
  int64_t bytes = 0;
  for (const FetchPartitionResponse& partition : read) {
    if (partition.error_code != Errc::kNone) return true;
    bytes += static_cast<int64_t>(partition.records.size());
  }
  return bytes >= request.min_bytes;
}

DelayedFetch::DelayedFetch(FetchRequest request, Read read, ReadIfReady read_if_ready,
                           StillNothing still_nothing, Respond respond)
    : request_(std::move(request)),
      read_(std::move(read)),
      read_if_ready_(std::move(read_if_ready)),
      still_nothing_(std::move(still_nothing)),
      respond_(std::move(respond)) {
  KSIM_CHECK(read_ != nullptr);
  KSIM_CHECK(read_if_ready_ != nullptr);
  KSIM_CHECK(respond_ != nullptr);
}

DelayedFetch::DelayedFetch(FetchRequest request, Read read, Respond respond)
    : request_(std::move(request)), read_(std::move(read)), respond_(std::move(respond)) {
  KSIM_CHECK(read_ != nullptr);
  KSIM_CHECK(respond_ != nullptr);
  read_if_ready_ = [read = read_](
                       const FetchRequest& request,
                       Waiting* /*waiting*/) -> std::optional<std::vector<FetchPartitionResponse>> {
    std::vector<FetchPartitionResponse> responses = read(request);
    if (!FetchCanCompleteNow(request, responses)) return std::nullopt;
    return responses;
  };
}

bool DelayedFetch::TryComplete() {
  waiting_ = Waiting{};
  std::optional<std::vector<FetchPartitionResponse>> read = read_if_ready_(request_, &waiting_);
  if (!read.has_value()) return false;
  FetchResponse response;
  response.responses = std::move(*read);
  respond_(std::move(response));
  return true;
}

bool DelayedFetch::TryCompleteFor(const TopicPartition& key) {
  if (waiting_.nothing && still_nothing_ != nullptr && still_nothing_(request_, key, waiting_)) {
#ifndef NDEBUG
    // Debug builds (the tests) check the one partition's answer against the walk of them all.
    Waiting walked;
    KSIM_CHECK(!read_if_ready_(request_, &walked).has_value());
    KSIM_CHECK(walked.nothing);
#endif
    return false;
  }
  return TryComplete();
}

void DelayedFetch::OnExpiration() {
  FetchResponse response;
  response.responses = read_(request_);
  respond_(std::move(response));
}

}  // namespace ksim
