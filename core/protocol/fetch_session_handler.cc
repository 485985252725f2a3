#include "core/protocol/fetch_session_handler.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace ksim {

int32_t NextFetchEpoch(int32_t epoch) {
  if (epoch < 0) return kFinalEpoch;
  if (epoch == std::numeric_limits<int32_t>::max()) return 1;
  return epoch + 1;
}

FetchSessionRequest FetchSessionHandler::Metadata(std::vector<TopicPartition> forgotten) const {
  return FetchSessionRequest{
      .session_id = session_id_, .epoch = next_epoch_, .forgotten = std::move(forgotten)};
}

namespace {

bool SameFetch(const FetchPartition& a, const FetchPartition& b) {
  return a.fetch_offset == b.fetch_offset && a.log_start_offset == b.log_start_offset &&
         a.partition_max_bytes == b.partition_max_bytes;
}

}  // namespace

FetchSessionHandler::Request FetchSessionHandler::Build(std::vector<FetchPartition> next) {
  Request out;
  if (full()) {
    partitions_.clear();
    for (const FetchPartition& partition : next)
      partitions_.emplace_hint(partitions_.end(), partition.tp, partition);
    out.partitions = std::move(next);
    return out;
  }
  // One walk of the session and `next`, both in partition order.
  std::vector<FetchPartition> altered;
  auto last = partitions_.begin();
  for (FetchPartition& partition : next) {
    // The common case, the session's next partition named again, costs one comparison.
    if (last == partitions_.end() || last->first != partition.tp) {
      while (last != partitions_.end() && last->first < partition.tp) {
        out.forgotten.push_back(last->first);
        last = partitions_.erase(last);
      }
      if (last == partitions_.end() || last->first != partition.tp) {
        partitions_.emplace_hint(last, partition.tp, partition);
        out.partitions.push_back(std::move(partition));
        continue;
      }
    }
    if (!SameFetch(last->second, partition)) {
      last->second = partition;
      altered.push_back(std::move(partition));
    }
    ++last;
  }
  while (last != partitions_.end()) {
    out.forgotten.push_back(last->first);
    last = partitions_.erase(last);
  }
  for (FetchPartition& partition : altered) out.partitions.push_back(std::move(partition));
  return out;
}

std::optional<FetchSessionHandler::Request> FetchSessionHandler::BuildChanged(
    std::vector<Change> changed) {
  KSIM_CHECK(!full());
  size_t size = partitions_.size();
  for (const Change& change : changed) {
    const bool in_session = partitions_.count(*change.tp) > 0;
    if (change.fetch && !in_session) ++size;
    if (!change.fetch && in_session) --size;
  }
  if (size == 0) return std::nullopt;
  // As Build's walk: added partitions first, then altered ones, each in partition order.
  Request out;
  std::vector<FetchPartition> altered;
  for (Change& change : changed) {
    auto it = partitions_.find(*change.tp);
    if (!change.fetch) {
      if (it == partitions_.end()) continue;
      out.forgotten.push_back(it->first);
      partitions_.erase(it);
    } else if (it == partitions_.end()) {
      partitions_.emplace(*change.tp, *change.fetch);
      out.partitions.push_back(std::move(*change.fetch));
    } else if (!SameFetch(it->second, *change.fetch)) {
      it->second = *change.fetch;
      altered.push_back(std::move(*change.fetch));
    }
  }
  for (FetchPartition& partition : altered) out.partitions.push_back(std::move(partition));
  return out;
}

const FetchPartition* FetchSessionHandler::Find(const TopicPartition& tp) const {
  auto it = partitions_.find(tp);
  return it == partitions_.end() ? nullptr : &it->second;
}

FetchSessionHandler::Verdict FetchSessionHandler::HandleResponse(const FetchResponse& response) {
  const bool all_in_session = std::all_of(
      response.responses.begin(), response.responses.end(),
      [this](const FetchPartitionResponse& answer) { return partitions_.count(answer.tp) > 0; });
  return HandleResponse(response, partitions_.size(), all_in_session);
}

FetchSessionHandler::Verdict FetchSessionHandler::HandleResponse(const FetchResponse& response,
                                                                 size_t session_size,
                                                                 bool all_in_session) {
  const FetchSessionResponse metadata = response.session.value_or(FetchSessionResponse{});
  const bool was_full = full();
  if (metadata.error_code != Errc::kNone) {
    Restart(/*close_existing=*/metadata.error_code != Errc::kFetchSessionIdNotFound);
    return Verdict{.apply = false, .reset = ErrcName(metadata.error_code)};
  }
  // verifyFullFetchResponsePartitions / verifyIncrementalFetchResponsePartitions.
  if (!all_in_session || (was_full && response.responses.size() != session_size)) {
    Restart(/*close_existing=*/!was_full);
    return Verdict{
        .apply = false,
        .reset = was_full ? "FULL_ANSWER_NOT_THE_SESSION" : "ANSWER_OUTSIDE_THE_SESSION"};
  }
  if (metadata.session_id == kInvalidSessionId) {
    // No session was made (a full fetch), or the broker closed it.
    Restart(/*close_existing=*/false);
  } else {
    session_id_ = metadata.session_id;
    next_epoch_ = NextFetchEpoch(next_epoch_);  // 1 after a full fetch's 0
  }
  return Verdict{};
}

void FetchSessionHandler::HandleError() { Restart(/*close_existing=*/true); }

void FetchSessionHandler::Restart(bool close_existing) {
  if (!close_existing) session_id_ = kInvalidSessionId;
  next_epoch_ = kInitialEpoch;
}

}  // namespace ksim
