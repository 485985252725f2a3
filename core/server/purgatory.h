// Purgatory: requests a broker cannot answer yet, parked until a condition holds or a timeout
// passes (Kafka's DelayedOperationPurgatory with its DelayedProduce and DelayedFetch, 0.10/1.x
// kafka.server). An operation watches one or more partitions; whoever changes a partition (an
// append, a follower's fetch that moves its LEO or the HW, an ISR change, a leadership change)
// calls CheckAndComplete(partition) and every operation watching it is asked again, oldest first.
//
// - DelayedProduce (acks=-1 or N > 1): one status per partition of the request; a partition is
//   done when Partition::CheckEnoughReplicasReached says so (HW passed the batch, or N ISR
//   members have it, or leadership was lost: NOT_LEADER_FOR_PARTITION; the partition gone:
//   UNKNOWN_TOPIC_OR_PARTITION). The response goes when every partition is done; at timeout_ms
//   the pending ones get REQUEST_TIMED_OUT (Kafka's DelayedProduce.onExpiration).
// - DelayedFetch: a fetch that found fewer than min_bytes. Each check reads again; it completes
//   when the bytes available reach min_bytes or any partition now answers an error (leadership
//   moved, the offset fell out of range: Kafka's cases B-E of DelayedFetch.tryComplete), and at
//   max_wait_ms with whatever is there. Completing does not update a follower's state again
//   (Kafka updates it only when the fetch arrives).
//
// Watching costs per key what Kafka's Watchers do: a completed operation leaves the lists of the
// keys it watched lazily (the next check of a key drops it, and a sweep of every list runs once
// the ids left behind outnumber those watched: Kafka's purgatory.purge.interval.requests), so
// that a fetch parked on many partitions costs nothing per partition when it completes.
//
// Determinism: operations are kept by insertion number and checked in that order. Ownership: the
// purgatory owns its operations and their timeout timers (on the borrowed Timers); destroying it
// drops them unanswered (a crash; Kafka's shutdown does the same). One thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/base/timer_group.h"
#include "core/cluster/partition.h"
#include "core/protocol/messages.h"

namespace ksim {

class DelayedOperation {
 public:
  virtual ~DelayedOperation() = default;
  // Completes the operation (sends its answer) and returns true when it can; false otherwise.
  virtual bool TryComplete() = 0;
  // The same when `key`, which it watches, may have changed (CheckAndComplete(key)): an operation
  // that knows what the other keys held at its last check may look at `key` alone.
  virtual bool TryCompleteFor(const TopicPartition& /*key*/) { return TryComplete(); }
  // It watches one more key (WatchLate): what it knew of its keys may no longer cover them all.
  virtual void WatchAdded() {}
  // The timeout passed: answer with what there is.
  virtual void OnExpiration() = 0;
};

class Purgatory {
 public:
  Purgatory(Timers& timers, std::string name) : timers_(timers), name_(std::move(name)) {}
  Purgatory(const Purgatory&) = delete;
  Purgatory& operator=(const Purgatory&) = delete;

  // Kafka's tryCompleteElseWatch: completes `operation` now when it can (true), else parks it
  // under `keys` until CheckAndComplete completes it or `timeout_us` passes.
  bool TryCompleteElseWatch(std::unique_ptr<DelayedOperation> operation, TimeUs timeout_us,
                            const std::vector<TopicPartition>& keys);
  // A key's watch list (the ids watching it), at the same address until Clear(), which moves
  // generation(): a caller that parks on the same keys again and again (a fetch session's
  // partitions) keeps these rather than looking each key up at every park.
  using WatchList = std::vector<uint64_t>;
  WatchList* WatchListOf(const TopicPartition& key) { return &watchers_[key]; }
  uint64_t generation() const { return generation_; }
  // TryCompleteElseWatch over watch lists of this generation: `for_each_list(watch)` calls
  // watch(WatchList*) for each (a visitor rather than a range: clang before 16 cannot compile
  // libstdc++ 12's views, and the fuzz targets build with clang). When it parks the operation,
  // its id goes to `*parked_id` (if given).
  template <class ForEachList>
  bool TryCompleteElseWatchLists(std::unique_ptr<DelayedOperation> operation, TimeUs timeout_us,
                                 const ForEachList& for_each_list, uint64_t* parked_id = nullptr) {
    KSIM_CHECK(operation != nullptr);
    KSIM_CHECK(timeout_us >= 0);
    if (operation->TryComplete()) return true;
    const uint64_t id = next_id_++;
    Entry& entry = operations_[id];
    entry.operation = std::move(operation);
    for_each_list([&](WatchList* list) { Watch(id, entry, *list); });
    StartTimer(id, entry, timeout_us);
    if (parked_id != nullptr) *parked_id = id;
    return false;
  }
  // Operation `id`, parked, watches `list` too from now on (a fetch session's partition that
  // stopped being quiet): in its place by id, so that a key's operations are still checked
  // oldest first. Nothing when `id` is no longer parked.
  void WatchLate(uint64_t id, WatchList& list);
  // Asks every operation watching `key` again (TryCompleteFor(key)); returns how many completed.
  int CheckAndComplete(const TopicPartition& key);
  // Drops every operation unanswered (shutdown).
  void Clear();

  size_t size() const { return operations_.size(); }
  const std::string& name() const { return name_; }
  // Entries of the watch lists, those of completed operations not yet dropped included.
  size_t watch_entries() const { return watched_; }

 private:
  struct Entry {
    std::unique_ptr<DelayedOperation> operation;
    TimerId timer = 0;
    size_t watched = 0;  // entries of watchers_ naming it
  };
  void Watch(uint64_t id, Entry& entry, WatchList& list);
  void StartTimer(uint64_t id, Entry& entry, TimeUs timeout_us);
  void Remove(uint64_t id);
  void Expire(uint64_t id);
  // Drops the ids of operations no longer parked from `ids`.
  void DropCompleted(std::vector<uint64_t>& ids);

  TimerGroup timers_;
  std::string name_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, Entry> operations_;
  // Per key, the ids watching it in insertion order; ids of completed operations stay until the
  // key is checked or the sweep (stale_ counts them). A list stays when empty (the same
  // partitions are watched again and again; WatchListOf's addresses hold until Clear). Looked
  // up, walked only by the sweep, whose result does not depend on the order.
  std::unordered_map<TopicPartition, std::vector<uint64_t>> watchers_;
  size_t watched_ = 0;  // entries in watchers_
  size_t stale_ = 0;    // of them, naming completed operations
  uint64_t generation_ = 0;
};

using PartitionLookup = std::function<Partition*(const TopicPartition&)>;

// One partition of a produce request waiting for its acks.
struct ProducePartitionStatus {
  ProducePartitionResponse response;  // filled at the append (error, base offset, log start)
  Offset required_offset{0};          // last appended offset + 1
  bool pending = false;               // still waiting for acks
};

class DelayedProduce final : public DelayedOperation {
 public:
  using Respond = std::function<void(ProduceResponse)>;
  // REQUIRES: acks < 0 or acks > 1 (below -1 and above 1 only at 0.8.2).
  DelayedProduce(int16_t acks, std::vector<ProducePartitionStatus> statuses, PartitionLookup lookup,
                 Respond respond);
  bool TryComplete() override;
  // After a check of them all, a partition's acks can only have moved with a CheckAndComplete
  // of its key (ReplicaManager::PartitionChanged follows every change to a partition's HW, ISR,
  // role or existence): that key's partitions alone are checked again, not all of a request's
  // (a producer's request names up to one partition per batch it drained). Debug builds check
  // that no other partition would have settled.
  bool TryCompleteFor(const TopicPartition& key) override;
  void WatchAdded() override { checked_all_ = false; }
  void OnExpiration() override;

 private:
  // Looks at one pending partition: true once settled (acked, or failed), its error set.
  bool Settle(ProducePartitionStatus& status);
  void Answer();

  int16_t acks_;
  std::vector<ProducePartitionStatus> statuses_;
  PartitionLookup lookup_;
  Respond respond_;
  bool checked_all_ = false;  // TryComplete has run: pending_ counts what it left
  size_t pending_ = 0;
};

class DelayedFetch final : public DelayedOperation {
 public:
  // How a check that did not complete the fetch found it: `nothing` when no partition had
  // anything new (Partition::HasNothingNewAt of each), not merely fewer bytes than min_bytes; as
  // of the ReplicaManager's partitions `version` and (a session's fetch) the session's partitions
  // to read `reads` (FetchSession::reads_version).
  struct Waiting {
    bool nothing = false;
    uint64_t version = 0;
    uint64_t reads = 0;
  };
  // Reads every partition of the request (no follower-state update).
  using Read = std::function<std::vector<FetchPartitionResponse>(const FetchRequest&)>;
  // The answer when the fetch can complete now (FetchCanCompleteNow of a full read), else
  // nullopt, telling how it waits in `*waiting`; it may leave unread the partitions that have
  // nothing to give (a check then costs the partitions with something new, not all of them).
  using ReadIfReady = std::function<std::optional<std::vector<FetchPartitionResponse>>(
      const FetchRequest&, Waiting* waiting)>;
  // After a check that found nothing new anywhere (`waiting`), and with no key watched since:
  // true when `key`'s partition still has nothing new (false: unknown, or something). Whoever
  // changes a partition checks its key (Purgatory::CheckAndComplete), so the others still have
  // nothing, and the check of `key` is that one partition's, not the walk of every one (Kafka's
  // DelayedFetch.tryComplete walks them all: a parked fetch of a session of thousands of
  // partitions cost that much at every append, HW move and leadership change of any of them).
  using StillNothing = std::function<bool(const FetchRequest& request, const TopicPartition& key,
                                          const Waiting& waiting)>;
  using Respond = std::function<void(FetchResponse)>;
  // Each check reads with `read_if_ready` (or looks at its key with `still_nothing`); the
  // expiration with `read`.
  DelayedFetch(FetchRequest request, Read read, ReadIfReady read_if_ready,
               StillNothing still_nothing, Respond respond);
  // Each check reads every partition with `read` and asks FetchCanCompleteNow.
  DelayedFetch(FetchRequest request, Read read, Respond respond);
  bool TryComplete() override;
  bool TryCompleteFor(const TopicPartition& key) override;
  void WatchAdded() override { waiting_.nothing = false; }
  void OnExpiration() override;

 private:
  FetchRequest request_;
  Read read_;
  ReadIfReady read_if_ready_;
  StillNothing still_nothing_;
  Respond respond_;
  Waiting waiting_;  // as the last check found it
};

// Whether a fetch read may be answered at once: Kafka's fetchMessages answers immediately when
// max_wait_ms <= 0, nothing was asked, min_bytes are there, or a partition has an error.
bool FetchCanCompleteNow(const FetchRequest& request,
                         const std::vector<FetchPartitionResponse>& read);
// The same but for the empty request: whether `read` answers `request` now (no wait asked, an
// error, or min_bytes there). An incremental fetch session's read may name no partition and
// still be a wait (docs/broker.md, "Fetch sessions").
bool FetchReadSuffices(const FetchRequest& request,
                       const std::vector<FetchPartitionResponse>& read);

}  // namespace ksim
