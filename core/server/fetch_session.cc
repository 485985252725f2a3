#include "core/server/fetch_session.h"

#include <algorithm>
#include <iterator>
#include <limits>

#include "core/base/check.h"
#include "core/base/random.h"

namespace ksim {

// ---- FetchSession -------------------------------------------------------------------------------

FetchSession::~FetchSession() {
  for (CachedPartition& cached : partitions) {
    if (cached.quiet_in != nullptr) cached.quiet_in->ReleaseQuiet(this, &index.at(cached.tp));
  }
}

void FetchSession::SetPartitions(Partitions added) {
  KSIM_CHECK(partitions.empty());
  partitions = std::move(added);
  for (auto it = partitions.begin(); it != partitions.end();) {
    if (!index.emplace(it->tp, it).second) {
      it = partitions.erase(it);  // named twice: Kafka's map keeps one
      continue;
    }
    it->position = next_position++;
    MarkToRead(it);
    ++it;
  }
}

FetchSession::Partitions::iterator FetchSession::Add(CachedPartition partition) {
  partitions.push_back(std::move(partition));
  auto it = std::prev(partitions.end());
  KSIM_CHECK(index.emplace(it->tp, it).second);
  it->position = next_position++;
  MarkToRead(it);
  return it;
}

namespace {

bool BeforePosition(const FetchSession::Partitions::iterator& it, uint64_t position) {
  return it->position < position;
}

}  // namespace

void FetchSession::MarkToRead(Partitions::iterator it) {
  ++reads_version_;  // also when marked already: its request may change next (NewContext)
  if (it->to_read) return;
  it->to_read = true;
  it->to_read_index = to_read.size();
  to_read.push_back(it);
  if (it->in_ordered) {
    --unmarked_in_ordered_;  // still in its place
    return;
  }
  // Into its place in `ordered_` (positions are distinct; a new partition's is the largest).
  ordered_.insert(std::lower_bound(ordered_.begin(), ordered_.end(), it->position, BeforePosition),
                  it);
  it->in_ordered = true;
}

void FetchSession::EraseOrdered(Partitions::iterator it) {
  ++reads_version_;
  if (!it->in_ordered) return;
  auto at = std::lower_bound(ordered_.begin(), ordered_.end(), it->position, BeforePosition);
  KSIM_CHECK(at != ordered_.end() && *at == it);
  ordered_.erase(at);
  it->in_ordered = false;
  if (!it->to_read) --unmarked_in_ordered_;
}

void FetchSession::UnmarkToRead(Partitions::iterator it) {
  if (!it->to_read) return;
  ++reads_version_;
  it->to_read = false;
  // `to_read` is in no order: the last one takes its place (a walk to find it, and the move of
  // those after it, cost a session of thousands of partitions each time one went quiet).
  const Partitions::iterator last = to_read.back();
  to_read[it->to_read_index] = last;
  last->to_read_index = it->to_read_index;
  to_read.pop_back();
  // It leaves `ordered_` at the next ToReadInOrder, with the others unmarked meanwhile: a fetch
  // that holds thousands of partitions quiet one by one would move the rest of the vector for
  // each.
  ++unmarked_in_ordered_;
}

const std::vector<FetchSession::Partitions::iterator>& FetchSession::ToReadInOrder() {
  if (unmarked_in_ordered_ > 0) {
    std::erase_if(ordered_, [](const Partitions::iterator& it) {
      if (it->to_read) return false;
      it->in_ordered = false;
      return true;
    });
    unmarked_in_ordered_ = 0;
  }
  return ordered_;
}

void FetchSession::Unquiet(Partitions::iterator it) {
  if (it->quiet_in != nullptr) {
    it->quiet_in->ReleaseQuiet(this, &index.at(it->tp));
    it->quiet_in = nullptr;
  }
  MarkToRead(it);
}

void FetchSession::Hold(Partitions::iterator it, Partition& partition, BrokerId follower) {
  KSIM_CHECK(it->quiet_in == nullptr);
  partition.HoldQuiet(this, &index.at(it->tp), follower, &fetched_ms);
  it->quiet_in = &partition;
  UnmarkToRead(it);
}

void FetchSession::Forget(Partitions::iterator it) {
  Unquiet(it);
  UnmarkToRead(it);
  EraseOrdered(it);  // before the list forgets it
  index.erase(it->tp);
  partitions.erase(it);
}

void FetchSession::MoveToEnd(Partitions::iterator it) {
  EraseOrdered(it);  // moves reads_version_  // found by its old position
  partitions.splice(partitions.end(), partitions, it);
  it->position = next_position++;
  if (it->to_read) {
    ordered_.push_back(it);  // the largest position now
    it->in_ordered = true;
  }
}

void FetchSession::QuietEnded(void* cookie) {
  const Partitions::iterator it = *static_cast<Partitions::iterator*>(cookie);
  it->quiet_in = nullptr;
  MarkToRead(it);
  if (on_quiet_ended) on_quiet_ended(*it);
}

// ---- FetchManager -------------------------------------------------------------------------------

FetchSessionCache::FetchSessionCache(FetchSessionConfig config)
    : config_(config), id_state_(config.id_seed) {
  KSIM_CHECK(config_.max_entries >= 0);
}

std::shared_ptr<FetchSession> FetchSessionCache::Get(int32_t id) const {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second;
}

FetchContext FetchManager::NewContext(FetchRequest& request) {
  FetchContext context;
  if (!request.session) return context;
  const FetchSessionRequest& metadata = *request.session;
  context.request_epoch = metadata.epoch;
  context.from_follower = request.replica_id.value() >= 0;
  if (metadata.epoch == kInitialEpoch || metadata.epoch == kFinalEpoch) {
    if (metadata.session_id != kInvalidSessionId) cache_.Remove(metadata.session_id);
    if (metadata.epoch == kFinalEpoch) {
      context.kind = FetchContext::Kind::kSessionless;
    } else {
      context.kind = FetchContext::Kind::kFull;
      context.requested = request.partitions;
    }
    return context;
  }
  std::shared_ptr<FetchSession> session = cache_.Get(metadata.session_id);
  if (session == nullptr) {
    context.kind = FetchContext::Kind::kError;
    context.error = Errc::kFetchSessionIdNotFound;
    request.partitions.clear();
    return context;
  }
  if (session->epoch != metadata.epoch) {
    context.kind = FetchContext::Kind::kError;
    context.error = Errc::kInvalidFetchSessionEpoch;
    request.partitions.clear();
    return context;
  }
  // FetchSession.update: new partitions join at the end, known ones take the new parameters
  // (and are read again).
  for (const FetchPartition& asked : request.partitions) {
    auto cached = session->index.find(asked.tp);
    FetchSession::Partitions::iterator it;
    if (cached == session->index.end()) {
      it = session->Add(CachedPartition{.tp = asked.tp});
    } else {
      it = cached->second;
      session->Unquiet(it);
    }
    it->SetRequest(asked);
  }
  for (const TopicPartition& tp : metadata.forgotten) {
    auto cached = session->index.find(tp);
    if (cached != session->index.end()) session->Forget(cached->second);
  }
  if (session->partitions.empty()) {
    cache_.Remove(session->id);
    context.kind = FetchContext::Kind::kSessionless;
    return context;
  }
  if (static_cast<int64_t>(session->partitions.size()) != session->cached_size) {
    cache_.Touch(*session, session->last_used_ms);
  }
  session->epoch = NextFetchEpoch(session->epoch);
  // The fetch reads the session's partitions, from what the session holds.
  request.partitions.clear();
  context.kind = FetchContext::Kind::kIncremental;
  context.session = std::move(session);
  return context;
}

void FetchManager::Answer(FetchContext& context, FetchResponse& response, int64_t now_ms) {
  using Kind = FetchContext::Kind;
  switch (context.kind) {
    case Kind::kNoMetadata:
      return;
    case Kind::kSessionless:
      response.session = FetchSessionResponse{};
      return;
    case Kind::kError:
      response.responses.clear();
      response.session = FetchSessionResponse{.error_code = context.error};
      return;
    case Kind::kFull: {
      // FullFetchContext: the session holds every answered partition with what was asked and
      // answered (the answer names the request's partitions in its order).
      KSIM_CHECK(context.requested.size() == response.responses.size());
      FetchSession::Partitions partitions;
      for (size_t i = 0; i < response.responses.size(); ++i) {
        const FetchPartitionResponse& answer = response.responses[i];
        CachedPartition& cached = partitions.emplace_back(
            CachedPartition{.tp = answer.tp,
                            .high_watermark = answer.high_watermark,
                            .local_log_start_offset = answer.log_start_offset});
        cached.SetRequest(context.requested[i]);
      }
      response.session =
          FetchSessionResponse{.session_id = cache_.MaybeCreateSession(
                                   now_ms, context.from_follower, std::move(partitions))};
      return;
    }
    case Kind::kIncremental:
      break;
  }
  FetchSession& session = *context.session;
  if (session.epoch != NextFetchEpoch(context.request_epoch)) {
    // Another request of this session came between (a duplicate): Kafka answers nothing of it.
    response.responses.clear();
    response.session = FetchSessionResponse{.error_code = Errc::kInvalidFetchSessionEpoch,
                                            .session_id = session.id};
    return;
  }
  KSIM_CHECK(response.responses.size() == context.order.size());
  size_t kept = 0;
  for (size_t i = 0; i < response.responses.size(); ++i) {
    FetchPartitionResponse& answer = response.responses[i];
    CachedPartition& cached = *context.order[i];
    // CachedPartition.updateResponseData.
    bool must_respond = !answer.records.empty();
    if (cached.high_watermark != answer.high_watermark) {
      must_respond = true;
      cached.high_watermark = answer.high_watermark;
    }
    if (cached.local_log_start_offset != answer.log_start_offset) {
      must_respond = true;
      cached.local_log_start_offset = answer.log_start_offset;
    }
    if (answer.error_code != Errc::kNone) {
      // Sent again once the error is gone.
      cached.high_watermark = Offset(-1);
      must_respond = true;
    }
    if (!must_respond) continue;
    session.MoveToEnd(context.order[i]);
    if (kept != i) response.responses[kept] = std::move(answer);
    ++kept;
  }
  response.responses.resize(kept);
  response.session = FetchSessionResponse{.session_id = session.id};
}

int32_t FetchSessionCache::MaybeCreateSession(int64_t now_ms, bool privileged,
                                              FetchSession::Partitions partitions) {
  if (static_cast<int64_t>(sessions_.size()) >= config_.max_entries &&
      !TryEvict(privileged, EvictableKey{privileged, static_cast<int64_t>(partitions.size()), 0},
                now_ms)) {
    return kInvalidSessionId;
  }
  auto session = std::make_shared<FetchSession>();
  session->SetPartitions(std::move(partitions));
  do {
    session->id =
        1 + static_cast<int32_t>(SplitMix64(id_state_) % (std::numeric_limits<int32_t>::max() - 1));
  } while (sessions_.count(session->id) > 0);
  session->privileged = privileged;
  session->creation_ms = now_ms;
  session->last_used_ms = now_ms;
  session->epoch = NextFetchEpoch(kInitialEpoch);
  FetchSession& added = *sessions_.emplace(session->id, session).first->second;
  Touch(added, now_ms);
  return added.id;
}

bool FetchSessionCache::TryEvict(bool privileged, const EvictableKey& key, int64_t now_ms) {
  if (last_used_.empty()) return false;
  const auto [oldest_ms, oldest_id] = *last_used_.begin();
  if (now_ms - oldest_ms > config_.eviction_ms) {
    Remove(oldest_id);  // stale
    ++evictions_;
    return true;
  }
  const std::set<EvictableKey>& candidates =
      privileged ? evictable_by_privileged_ : evictable_by_all_;
  if (candidates.empty() || key < *candidates.begin()) return false;
  Remove(std::get<2>(*candidates.begin()));
  ++evictions_;
  return true;
}

void FetchSessionCache::Remove(int32_t id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  const FetchSession& session = *it->second;
  last_used_.erase({session.last_used_ms, session.id});
  evictable_by_all_.erase(KeyOf(session));
  evictable_by_privileged_.erase(KeyOf(session));
  total_partitions_ -= session.cached_size;
  sessions_.erase(it);
}

void FetchSessionCache::Touch(FetchSession& session, int64_t now_ms) {
  last_used_.erase({session.last_used_ms, session.id});
  session.last_used_ms = now_ms;
  last_used_.insert({session.last_used_ms, session.id});
  if (session.cached_size != -1) {
    evictable_by_privileged_.erase(KeyOf(session));
    evictable_by_all_.erase(KeyOf(session));
    total_partitions_ -= session.cached_size;
  }
  session.cached_size = static_cast<int64_t>(session.partitions.size());
  const bool old = now_ms - session.creation_ms > config_.eviction_ms;
  if (!session.privileged || old) evictable_by_privileged_.insert(KeyOf(session));
  if (old) evictable_by_all_.insert(KeyOf(session));
  total_partitions_ += session.cached_size;
}

}  // namespace ksim
