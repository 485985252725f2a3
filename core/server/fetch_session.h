// FetchManager: a broker's KIP-227 incremental fetch sessions (Kafka 1.1's
// kafka.server.FetchSession.scala: FetchManager.newContext, the four FetchContexts and
// FetchSessionCache). A fetch that carries session metadata (Fetch v7; ksim's followers at
// inter.broker.protocol.version 1.1-IV0 and on, ksim's consumers from 1.1, and any wire client
// that asks) is one of:
//
// - sessionless: epoch -1 (FINAL_EPOCH) closes the session it names and asks for none; answered
//   in full with session id 0. A v7 client that never wants a session sends 0 / -1.
// - full: epoch 0 (INITIAL_EPOCH) closes the session it names and opens a new one holding every
//   partition of the request, when the cache has room (max.incremental.fetch.session.cache.slots,
//   Kafka's eviction rules below); answered in full with the new id, or 0 when none was made.
// - incremental: epoch >= 1 of a session in the cache. The request names only the partitions it
//   adds or whose fetch offset, log start or max bytes changed, and those it forgets; the broker
//   reads the partitions of the session (from the offsets the session holds) as a full fetch
//   does, updates the followers' state, and answers only those with news: records, a high
//   watermark or log start offset other than the one last sent, or an error (Kafka's
//   CachedPartition.updateResponseData). Answered partitions move to the session's end. Kafka
//   reads every partition of the session; ksim skips a quiet one (FetchSession below), which
//   would be read to the same nothing, so a fetch costs the partitions with something new.
//   An unknown id: FETCH_SESSION_ID_NOT_FOUND; another epoch than the session's:
//   INVALID_FETCH_SESSION_EPOCH (both with no partitions and session id 0). A session left with no
//   partition closes; the fetch is answered as a sessionless one.
//
// Eviction (FetchSessionCache.maybeCreateSession/tryEvict): a new session takes a free slot; with
// none, the least recently used session goes if unused for longer than 120 s
// (KafkaServer.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS); otherwise the smallest evictable one
// goes when the new one is at least as large: a follower's (privileged) session may evict any
// other session, or a follower's older than 120 s; a client's only sessions older than 120 s.
// As in Kafka 1.1 to 2.1, an incremental fetch touches the session's last-used time only when
// its size changed.
//
// Session ids are pseudo-random in [1, 2^31 - 1) as Kafka's (ThreadLocalRandom), from a SplitMix64
// sequence seeded by the config's id_seed (the broker's id and the time its process started, so
// that a restarted broker does not hand out its previous incarnation's ids again: a follower
// closing its old session by id would close another's new one), not drawn from the run's seeded
// stream: opening sessions shifts none of the broker's other random choices. Sessions live in
// memory only: a restarted broker knows none. Ownership: a context shares its session with the
// cache, so an answer still completes (as Kafka's does) when the session was closed meanwhile.
// One thread.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/base/status.h"
#include "core/base/topic_partition.h"
#include "core/base/types.h"
#include "core/cluster/partition.h"
#include "core/protocol/fetch_session_handler.h"
#include "core/protocol/messages.h"

namespace ksim {

struct FetchSessionConfig {
  int32_t max_entries = 1000;     // max.incremental.fetch.session.cache.slots
  int64_t eviction_ms = 120'000;  // KafkaServer.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS
  uint64_t id_seed = 0;           // the session ids' sequence (see above)
};

// One partition of a session (Kafka's CachedPartition): what the fetcher last asked for and what
// the broker last answered (-1: never, or an error since).
struct CachedPartition {
  TopicPartition tp;
  int32_t max_bytes = 0;
  Offset fetch_offset{-1};
  Offset fetcher_log_start_offset{-1};
  Offset high_watermark{-1};
  Offset local_log_start_offset{-1};

  // ksim's quiet partitions (docs/broker.md, "Fetch sessions"; FetchSession below).
  uint64_t position = 0;          // its place in the session's order: later ones have larger
  Partition* quiet_in = nullptr;  // held quiet in this Partition (null: read at the next fetch)
  bool to_read = false;           // in its session's to_read, at to_read_index
  size_t to_read_index = 0;
  bool in_ordered = false;  // in the session's ordered_ (unmarked ones leave it lazily)
  // The broker's fetch purgatory's watch list of this partition (Purgatory::WatchListOf) and the
  // purgatory generation it is of: a parked fetch of the session watches these.
  std::vector<uint64_t>* watch_list = nullptr;
  uint64_t watch_generation = 0;
  // The broker's Partition of it (null: none there) as of the ReplicaManager's partitions_version
  // `resolved_version` (UINT64_MAX: not looked up yet): a parked fetch's checks look it up once.
  Partition* resolved = nullptr;
  uint64_t resolved_version = UINT64_MAX;

  // Takes what `asked` asks for (Kafka's updateRequestParams).
  void SetRequest(const FetchPartition& asked) {
    max_bytes = asked.partition_max_bytes;
    fetch_offset = asked.fetch_offset;
    fetcher_log_start_offset = asked.log_start_offset;
  }
  // What the session asks for this partition (Kafka's reqData).
  FetchPartition Request() const {
    return FetchPartition{.tp = tp,
                          .fetch_offset = fetch_offset,
                          .log_start_offset = fetcher_log_start_offset,
                          .partition_max_bytes = max_bytes};
  }
};

// A session. Kafka's broker reads every partition of a session at every incremental fetch; ksim's
// holds a partition *quiet* once a read of it found nothing to answer and moved nothing (no
// records, no error, the HW and log start last sent, a fetch at the leader's log end that moved
// neither the follower's LEO, the HW nor the ISR): the Partition tells the session when its
// version next moves (Partition::HoldQuiet), and until then the session's fetches skip it (a
// follower counts as caught up in it at each fetch: `fetched_ms`). `to_read` holds the others,
// which the next fetch reads: new or named partitions, and quiet ones that changed. A fetch parked
// on the session is told of each quiet partition that changes (`on_quiet_ended`), so that it
// watches it from then on. Not copyable: partitions hold pointers to it.
struct FetchSession final : public QuietHolder {
  using Partitions = std::list<CachedPartition>;
  FetchSession() = default;
  FetchSession(const FetchSession&) = delete;
  FetchSession& operator=(const FetchSession&) = delete;
  ~FetchSession();

  // Makes `partitions` (in their order; a partition named twice is kept once) the session's, each
  // to be read.
  void SetPartitions(Partitions partitions);
  // A partition joining at the end, to be read.
  Partitions::iterator Add(CachedPartition partition);
  // Ends the hold on it, if any: read at the next fetch.
  void Unquiet(Partitions::iterator it);
  // Holds it quiet in `partition` (whose read found it quiet) for `follower` (kNoBroker: a
  // client's session).
  void Hold(Partitions::iterator it, Partition& partition, BrokerId follower);
  void Forget(Partitions::iterator it);
  // Moves it to the end of the order (an answered partition).
  void MoveToEnd(Partitions::iterator it);
  // `to_read` in the session's order, kept so as each partition is marked, unmarked or moved (the
  // checks of a parked fetch ask for it again and again; sorting it at each change of a session
  // of thousands of partitions was a tenth of a 10,000-partition run). Valid until the next
  // change of the session.
  const std::vector<Partitions::iterator>& ToReadInOrder();
  // Moves with every change of ToReadInOrder() and whenever a partition in it may take a new
  // request (Unquiet).
  uint64_t reads_version() const { return reads_version_; }
  void QuietEnded(void* cookie) override;

  int32_t id = kInvalidSessionId;
  bool privileged = false;  // a follower's
  int64_t creation_ms = 0;
  int64_t last_used_ms = 0;
  int32_t epoch = kInitialEpoch;  // the epoch its next request must carry
  int64_t cached_size = -1;       // the size the cache accounts it at (-1: not yet)
  Partitions partitions;          // in Kafka's order: answered partitions move to the end
  // Each partition by name: looked up (for every partition a fetch names), never walked.
  std::unordered_map<TopicPartition, Partitions::iterator> index;
  std::vector<Partitions::iterator> to_read;  // in no order (changed only through the methods)
  int64_t fetched_ms = 0;                     // its latest fetch's time
  uint64_t next_position = 0;
  std::function<void(CachedPartition&)> on_quiet_ended;  // set while a fetch is parked on it
  uint64_t parked = 0;  // which parked fetch set on_quiet_ended (0: none)

 private:
  void MarkToRead(Partitions::iterator it);
  void UnmarkToRead(Partitions::iterator it);
  // Removes `it` (at its current position) from `ordered_`, if there.
  void EraseOrdered(Partitions::iterator it);

  // to_read by position, and partitions unmarked since the last ToReadInOrder (which drops them).
  std::vector<Partitions::iterator> ordered_;
  size_t unmarked_in_ordered_ = 0;
  uint64_t reads_version_ = 0;
};

// What NewContext decided for one request; FetchManager::Answer completes the answer with it.
struct FetchContext {
  enum class Kind : uint8_t {
    kNoMetadata,   // a request without session fields (below v7): nothing to add
    kSessionless,  // answered in full, session id 0
    kFull,         // answered in full; makes a session if it can
    kIncremental,  // answers only the partitions with news
    kError,        // answered with `error` and no partition
  };
  Kind kind = Kind::kNoMetadata;
  Errc error = Errc::kNone;
  int32_t request_epoch = 0;
  bool from_follower = false;
  std::shared_ptr<FetchSession> session;  // kIncremental
  // kIncremental: the session's partitions the answer's entries are of, one by one (the broker's
  // read sets them: the session's partitions that were not quiet, in its order).
  std::vector<FetchSession::Partitions::iterator> order;
  // kFull: the request's partitions, of which the new session is made.
  std::vector<FetchPartition> requested;
};

// Kafka's FetchSessionCache: the sessions by id, and the orders eviction picks from.
class FetchSessionCache {
 public:
  explicit FetchSessionCache(FetchSessionConfig config);
  FetchSessionCache(const FetchSessionCache&) = delete;
  FetchSessionCache& operator=(const FetchSessionCache&) = delete;

  // A new session of `partitions` (in their order; a partition named twice is kept once) when a
  // slot is free or TryEvict frees one, else nothing: its id, or kInvalidSessionId.
  int32_t MaybeCreateSession(int64_t now_ms, bool privileged, FetchSession::Partitions partitions);
  std::shared_ptr<FetchSession> Get(int32_t id) const;
  void Remove(int32_t id);
  // Marks `session` used at `now_ms` and accounts its size again (Kafka's touch).
  void Touch(FetchSession& session, int64_t now_ms);

  size_t size() const { return sessions_.size(); }
  int64_t total_partitions() const { return total_partitions_; }
  int64_t evictions() const { return evictions_; }

 private:
  using LastUsedKey = std::pair<int64_t, int32_t>;          // (last used, id)
  using EvictableKey = std::tuple<bool, int64_t, int32_t>;  // (privileged, size, id)
  static EvictableKey KeyOf(const FetchSession& session) {
    return {session.privileged, session.cached_size, session.id};
  }
  bool TryEvict(bool privileged, const EvictableKey& key, int64_t now_ms);

  FetchSessionConfig config_;
  uint64_t id_state_;
  std::map<int32_t, std::shared_ptr<FetchSession>> sessions_;
  std::set<LastUsedKey> last_used_;
  std::set<EvictableKey> evictable_by_all_;
  std::set<EvictableKey> evictable_by_privileged_;
  int64_t total_partitions_ = 0;
  int64_t evictions_ = 0;
};

// Kafka's FetchManager: the contexts of the fetches, over one cache.
class FetchManager {
 public:
  explicit FetchManager(FetchSessionConfig config) : cache_(config) {}

  // Kafka's newContext. For an incremental fetch (and an error) `request.partitions` becomes
  // empty: the fetch reads the session's partitions, with the offsets and max bytes it holds
  // (ReplicaManager::HandleFetch with the context).
  FetchContext NewContext(FetchRequest& request);
  // Kafka's updateAndGenerateResponseData: `response` holds the answer to the request (for an
  // incremental fetch, one entry per partition of `context.order`); this sets its session fields
  // and, for an incremental fetch, keeps only the partitions with news.
  void Answer(FetchContext& context, FetchResponse& response, int64_t now_ms);

  FetchSessionCache& cache() { return cache_; }

 private:
  FetchSessionCache cache_;
};

}  // namespace ksim
