// FetchSessionHandler: the client side of a KIP-227 incremental fetch session with one broker
// (Kafka 1.1's org.apache.kafka.clients.FetchSessionHandler), shared by the consumer's fetcher and
// the follower's replica fetcher.
//
// - The next request's session metadata (Kafka's FetchMetadata): a full fetch (epoch 0) that
//   opens a session, naming the session it closes (if any); or an incremental one (epoch >= 1)
//   of the open session.
// - Build (Kafka's Builder.build), for a fetcher that keeps the session's partitions here (the
//   consumer's): given every partition the fetcher wants now, a full fetch names them all and
//   they become the session; an incremental one names the partitions added to the session, then
//   those whose fetch offset, log start or max bytes changed, each in partition order, and
//   forgets those the fetcher no longer wants. (Kafka keeps the session in insertion order; ksim
//   in partition order, which a full fetch's insertion order is.) The follower keeps its own
//   session partitions (ReplicaFetcherManager, with the quiet holds) and uses the metadata half.
// - HandleResponse (handleResponse): a session error starts over: FETCH_SESSION_ID_NOT_FOUND with
//   a new session, any other error closing this one first; so does a full answer that does not
//   name exactly the session's partitions (a new session) or an incremental answer that names
//   another partition (closing this one). Such an answer is not to be applied; the next fetch is
//   full. An answer with session id 0 says no session was made (or the broker closed it): the
//   next fetch is full again. Otherwise an incremental fetch follows with the next epoch.
// - HandleError (handleError): the request failed; the next fetch closes the session and opens
//   another.
//
// Value type; one thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "core/base/topic_partition.h"
#include "core/protocol/messages.h"

namespace ksim {

// The epoch after `epoch` (FetchMetadata.nextEpoch): 1 after 0 and after INT32_MAX; -1 stays.
int32_t NextFetchEpoch(int32_t epoch);

class FetchSessionHandler {
 public:
  // What the next fetch sends.
  struct Request {
    std::vector<FetchPartition> partitions;  // toSend
    std::vector<TopicPartition> forgotten;   // toForget (empty for a full fetch)
  };
  // What HandleResponse makes of an answer.
  struct Verdict {
    bool apply = true;
    // Why the session starts over ("" when it does not): the answer's session error's name, or
    // FULL_ANSWER_NOT_THE_SESSION / ANSWER_OUTSIDE_THE_SESSION.
    std::string_view reset;
  };

  // Whether the next fetch is full (epoch 0).
  bool full() const { return next_epoch_ == kInitialEpoch; }
  int32_t session_id() const { return session_id_; }
  // The next request's metadata, forgetting `forgotten`.
  FetchSessionRequest Metadata(std::vector<TopicPartition> forgotten) const;

  // REQUIRES: `next` in partition order, each partition once.
  Request Build(std::vector<FetchPartition> next);
  // One partition that may have changed since the last Build: its fetch now, or nullopt when it
  // is not to be fetched now.
  struct Change {
    const TopicPartition* tp = nullptr;
    std::optional<FetchPartition> fetch;
  };
  // Build's answer told from the changes alone, for a fetcher that knows which partitions may
  // have changed (`changed`, in partition order, each once): every other partition is fetched as
  // the session has it. nullopt, with the session untouched, when nothing would be fetched (a
  // fetcher calls Build only with something to fetch).
  // REQUIRES: !full().
  std::optional<Request> BuildChanged(std::vector<Change> changed);
  // The session's partition `tp` as last sent (Build), or null.
  const FetchPartition* Find(const TopicPartition& tp) const;
  // The session's partitions (Build), in partition order.
  const std::map<TopicPartition, FetchPartition>& partitions() const { return partitions_; }

  // For a fetcher whose session partitions are here (Build).
  Verdict HandleResponse(const FetchResponse& response);
  // For one that keeps them itself: `session_size` of them, and whether every partition the
  // answer names is one of them (`all_in_session`: the caller looked each up).
  Verdict HandleResponse(const FetchResponse& response, size_t session_size, bool all_in_session);
  void HandleError();

 private:
  // The next fetch is full: with no session, or closing this one.
  void Restart(bool close_existing);

  int32_t session_id_ = kInvalidSessionId;
  int32_t next_epoch_ = kInitialEpoch;
  std::map<TopicPartition, FetchPartition> partitions_;  // sessionPartitions (Build)
};

}  // namespace ksim
