// Fetcher: the consumer's assigned partitions and their positions (Kafka's SubscriptionState, the
// assignment half) and the fetching of their records (Kafka's Fetcher), on a ConsumerNetwork.
//
// - Each assigned partition is, in turn: without a position (its owner finds the committed
//   offset, or asks for a reset), resetting (a ListOffsets to its leader per auto.offset.reset:
//   earliest -2, latest -1), failed (auto.offset.reset=none: reported once, never fetched), or
//   positioned. Position = the next offset Poll returns.
// - SendFetches: one consumer Fetch (replica_id -1) per leader with a positioned partition that has
//   nothing buffered, unless one to that leader is in flight or backing off after an error. The
//   broker returns only records below its HW; records below the position (the rest of a batch
//   that starts earlier) and at or above the answer's HW are skipped.
// - From 1.1 (the consumer's and the brokers' release: Fetch v7) each leader's fetches belong to a
//   KIP-227 session (Kafka 1.1's Fetcher.prepareFetchRequests with a FetchSessionHandler per
//   node): the first is full and opens it; the next ones name only the partitions added to it or
//   whose position moved, and forget the partitions not fetchable now (records still buffered,
//   revoked, resetting, led elsewhere), as Kafka's consumer does; the answer names only the
//   partitions with news. A session error (event `fetch_session_reset`) or a failed request
//   makes the next fetch full.
// - An answer for a partition that was revoked, reset or moved meanwhile is dropped.
//   OFFSET_OUT_OF_RANGE resets the position (offset_reset event, with where it was);
//   NOT_LEADER_FOR_PARTITION / UNKNOWN_TOPIC_OR_PARTITION / a lost request ask for metadata and
//   back off retry.backoff.ms before fetching from that leader again (fetch_error event).
// - Drain hands out buffered records, partitions in turn, up to a bound, and advances positions.
//
// Ownership: borrows the network, timers, clock and config (they outlive it). Calls `on_progress`
// (from network and timer events, never inside its own methods) when something changed that may
// let the owner move on. One thread.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/base/events.h"
#include "core/base/timer_group.h"
#include "core/clients/consumer/consumer.h"
#include "core/clients/consumer/consumer_network.h"
#include "core/protocol/fetch_session_handler.h"
#include "core/protocol/messages.h"

namespace ksim {

class Fetcher {
 public:
  enum class State : uint8_t { kNeedsPosition, kAwaitingCommitted, kResetting, kFailed, kFetching };

  Fetcher(const ConsumerConfig& config, ConsumerNetwork& network, Timers& timers,
          const Clock& clock, EventSink events, std::function<void()> on_progress);
  Fetcher(const Fetcher&) = delete;
  Fetcher& operator=(const Fetcher&) = delete;

  // Replaces the assignment: partitions kept keep their state and buffer, the others are
  // forgotten with their buffered records; new ones start without a position.
  void Assign(const std::vector<TopicPartition>& partitions);
  std::vector<TopicPartition> assignment() const;
  std::map<TopicPartition, Offset> positions() const;

  // Partitions in kNeedsPosition.
  std::vector<TopicPartition> NeedingPosition() const;
  // The owner asks the group for committed offsets of `tp` (kNeedsPosition -> kAwaitingCommitted).
  void MarkAwaitingCommitted(const TopicPartition& tp);
  // The committed offset (>= 0) becomes the position; none (-1): reset per auto.offset.reset.
  // Ignored unless `tp` is still awaiting it.
  void OnCommitted(const TopicPartition& tp, Offset committed);
  // Back to kNeedsPosition (the committed-offset lookup failed).
  void OnCommittedFailed(const TopicPartition& tp);

  // Resets `tp` per auto.offset.reset (kFailed with strategy none).
  void Reset(const TopicPartition& tp);
  // Sends the ListOffsets of partitions in kResetting and the Fetches that may go.
  void SendRequests();

  bool HasRecords() const;
  std::vector<ConsumerRecord> Drain(int32_t max_records);
  // True once after a partition failed (auto.offset.reset=none): Poll returns at once.
  bool TakeFailure();

  // Stops: nothing more is sent, answers are ignored.
  void Shutdown() { shut_down_ = true; }

 private:
  struct Host;
  struct PartitionState {
    State state = State::kNeedsPosition;
    Offset position = kUndefinedOffset;
    bool list_offsets_in_flight = false;
    Offset reset_from = kUndefinedOffset;  // the position a reset replaces (-1: none)
    // Records fetched from `position` on, in order.
    std::deque<ConsumerRecord> buffered;
    // Set by GroupByHost: its key in partitions_, the host leading it (null: none known, or not
    // grouped since it was assigned), and whether it is on that host's `changed` list.
    const TopicPartition* tp = nullptr;
    Host* host = nullptr;
    bool changed = false;
    size_t rank = 0;  // its place in partitions_ (set by Assign)
  };
  // A leader host's partitions, in partition order, and with sessions those whose fetch may
  // have changed since the host's session was last built from its partitions (`built`).
  // `departed`: partitions that left it for another host (or none) since, which its session is
  // to forget.
  struct Host {
    std::vector<PartitionState*> members;
    std::vector<PartitionState*> changed;
    std::vector<const TopicPartition*> departed;
    bool built = false;
  };

  void SendListOffsets();
  void SendFetches();
  void OnListOffsets(const std::string& leader, const std::vector<TopicPartition>& asked,
                     Result<Message> response);
  // The partitions a Fetch named, in partition order: each with its fetch offset and its state
  // (valid while assign_version_ has not moved).
  struct AskedPartition {
    TopicPartition tp;
    Offset fetch_offset;
    PartitionState* state = nullptr;
  };
  using Asked = std::vector<AskedPartition>;
  void OnFetch(const std::string& leader, uint64_t assign_version, const Asked& asked,
               Result<Message> response);
  // A session fetch's answer: the partitions it answers are the session's.
  void OnSessionFetch(const std::string& leader, Result<Message> response);
  // Reports a failed fetch for `tps` and backs off from `leader`.
  void FetchFailed(const std::string& leader, Errc error, const std::vector<TopicPartition>& tps);
  // A fetch to `leader` answered; `refresh`: ask for metadata and back off from it first.
  void FetchDone(const std::string& leader, bool refresh);
  // Applies one partition's answer (fetched from `fetch_offset`); true when the leader is to be
  // asked for metadata again (a partition error).
  bool OnPartitionAnswer(const FetchPartitionResponse& data, Offset fetch_offset,
                         PartitionState* state);
  // `state` is the partition's (null: no longer assigned).
  void HandlePartitionData(const FetchPartitionResponse& data, Offset fetch_offset,
                           PartitionState* state);
  void BackOff(const std::string& leader);
  void Progress();
  PartitionState* Find(const TopicPartition& tp);
  // Brings by_host_ and unled_ up to date with the assignment and the last metadata answer:
  // after an answer that moved some leaders, those partitions alone (Regroup).
  void GroupByHost();
  // Moves `state` to the host that leads it now (none: unled_).
  void Regroup(PartitionState& state);
  // Every change of a partition's state or of whether it has records buffered goes through
  // these (or Assign), which keep in_state_ and buffered_.
  void SetState(PartitionState& state, State next);
  void ClearBuffered(PartitionState& state);
  // A position and nothing buffered.
  static bool IsFetchable(const PartitionState& state) {
    return state.state == State::kFetching && state.buffered.empty();
  }
  // Notes that the fetch of `state`'s partition may have changed (its state, position or
  // buffer): its host's next session fetch looks at it (SendFetches).
  static void Touch(PartitionState& state);
  // What a Fetch asks of a grouped, fetchable partition: from its position.
  FetchPartition FetchOf(const PartitionState& state) const;
  // The fetch of each fetchable partition of `host`, in partition order (Kafka's
  // createFetchRequests); with `asked`, the partitions as a Fetch without a session names them.
  std::vector<FetchPartition> Fetchable(const Host& host, Asked* asked) const;
  // With sessions: the next fetch to `host`'s session from the partitions that changed alone;
  // nullopt when nothing is to be fetched (they stay listed).
  std::optional<FetchSessionHandler::Request> BuildChanged(Host& host,
                                                           FetchSessionHandler& session);
  static void ClearChanged(Host& host);

  const ConsumerConfig& config_;
  ConsumerNetwork& network_;
  TimerGroup timers_;
  const Clock& clock_;
  EventSink events_;
  std::function<void()> on_progress_;
  bool shut_down_ = false;
  // KIP-227 fetch sessions (see the top), by leader host, once one was fetched from.
  bool sessions_ = false;
  std::map<std::string, FetchSessionHandler> sessions_by_host_;

  std::map<TopicPartition, PartitionState> partitions_;
  // partitions_ by the host leading them, each in partition order, and those without a known
  // leader host: SendFetches visits the partitions of the hosts a Fetch may go to, not all
  // (a consumer of many partitions has a Fetch in flight to most hosts at any time). Rebuilt
  // when the assignment (assign_version_) or the metadata (ConsumerNetwork::version) changed.
  std::map<std::string, Host> by_host_;
  std::vector<PartitionState*> unled_;
  uint64_t assign_version_ = 0;
  // How many partitions are in each State: the walks that look for a state (NeedingPosition,
  // SendListOffsets) are skipped when there is none, as at most steps of a consumer of many
  // partitions. The partitions with records buffered, by rank: Drain serves those, in turn,
  // without a walk of the others.
  std::array<size_t, 5> in_state_{};
  std::map<size_t, PartitionState*> buffered_;
  std::optional<std::pair<uint64_t, uint64_t>> grouped_at_;  // (assign, metadata) versions
  std::set<std::string> fetching_;                           // leaders with a Fetch in flight
  std::map<std::string, TimeUs> backoff_until_us_;
  size_t next_drain_ = 0;  // rotates the first partition Drain serves
  bool failure_ = false;
};

}  // namespace ksim
