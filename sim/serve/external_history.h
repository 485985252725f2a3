// ExternalHistory: what real clients did, written into the run's History
// (sim/check/history.h) from the requests they send and the answers the brokers give them, so
// that the history checker, the report and the viewer's ledger account for their records as for
// a simulated client's (docs/serve.md, "In the history"). `process` is the client's node (named
// by its client id), incarnation 1.
//
// - Produce: every record of a request's batches is one send. A record sent again (a client's
//   retry: same topic, partition, timestamp, key and value) is the same send, not a new one:
//   its invoke is written when it is first seen. The answer completes what is still open: `ok`
//   with its offset (base offset + its position in the partition's records) for a partition
//   without error; `fail` for an error that is not retriable (the client gives up: nothing was
//   written); a retriable error leaves the send open, since the client sends it again. With
//   acks=0 every send is `ok` at once, offset -1. Sends still open at the end are `info`
//   (unknown: NETWORK_EXCEPTION).
// - Fetch: every record of an answer at or after the offset asked for is a `deliver` to the
//   client's group (the group of its last JoinGroup, "" before any). A client discarding a
//   prefetched answer (after a rebalance, a seek) still counts as delivered: the broker cannot
//   tell.
// - OffsetCommit: one `commit` per partition, `ok` or `fail` with the answer's error.
//
// Requests are identified by a key the gateway gives (unique per run) from OnRequest to OnAnswer
// or OnLost. Single-threaded; borrows the History.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/base/topic_partition.h"
#include "core/base/types.h"
#include "core/protocol/messages.h"
#include "sim/check/history.h"

namespace ksim::sim {

class ExternalHistory {
 public:
  explicit ExternalHistory(History& history) : history_(history) {}

  // A request of client node `client` enters the network.
  void OnRequest(std::string_view client, uint64_t request_key, const ksim::Message& request);
  // Its answer reached the client's node.
  void OnAnswer(uint64_t request_key, const ksim::Message& response);
  // No answer will come (the connection broke): what it sent stays open.
  void OnLost(uint64_t request_key);
  // The run ends: every open send becomes `info`.
  void End();

 private:
  // A record as a client sends it (and sends it again on a retry).
  using RecordKey = std::tuple<std::string, TopicPartition, int64_t, std::optional<std::string>,
                               std::string>;  // client, tp, timestamp, key, value
  struct Request {
    std::string client;
    // Produce: per partition, the invoke of each record in order (kNoOpIndex: a record already
    // completed by an earlier attempt).
    std::map<TopicPartition, std::vector<uint64_t>> sends;
    std::map<TopicPartition, Offset> fetch_offsets;  // Fetch
    std::string group;                               // OffsetCommit
    std::map<TopicPartition, Offset> commit_offsets;  // OffsetCommit
  };

  void OnProduce(Request& pending, const ProduceRequest& produce);
  void OnProduceAnswer(const Request& pending, const ProduceResponse& response);
  void OnFetchAnswer(const Request& pending, const FetchResponse& response);

  History& history_;
  std::map<uint64_t, Request> requests_;
  std::map<RecordKey, uint64_t> invoke_of_;  // every record seen -> its send's invoke
  std::set<uint64_t> open_;                  // invokes without a completion
  std::map<std::string, std::string, std::less<>> group_of_;  // client -> last JoinGroup's group
};

}  // namespace ksim::sim
