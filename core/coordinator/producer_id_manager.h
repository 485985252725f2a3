// ProducerIdManager: hands out producer ids for InitProducerId (KIP-98, idempotent producers
// only), after Kafka's kafka.coordinator.transaction.ProducerIdManager of 1.x. Every broker runs
// one. Ids come in blocks of kBlockSize claimed from the ZooKeeper znode
// /latest_producer_id_block, whose data is the last block claimed by any broker, as Kafka writes
// it: {"version":1,"broker":<id>,"block_start":"<first>","block_end":"<last>"} (the bounds are
// strings). To claim the next block a broker reads the znode, computes [end + 1, end + 1000] (or
// [0, 999] when the znode is missing or empty) and writes it conditionally on the version it read;
// BADVERSION (another broker claimed meanwhile) makes it read and try again. Ids are therefore
// unique across brokers and across restarts: a restarted broker claims a fresh block and the
// unused rest of its old one is never handed out.
//
// Differences from Kafka: Kafka claims the first block synchronously while the broker starts and
// blocks the request thread when a block runs out; here the claim is asynchronous and starts with
// the first request: requests wait in arrival order and are answered when the block arrives. A
// ZooKeeper failure other than BADVERSION answers the waiting requests
// COORDINATOR_NOT_AVAILABLE (retriable; the producer asks again) and the next request claims
// anew. A transactional id is refused with INVALID_REQUEST: transactions are not modelled.
//
// Ownership and threads: borrows the Coordination session (which outlives it); one thread.
// Destroying it is a crash: waiting requests are dropped unanswered, a ZooKeeper answer arriving
// later does nothing.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/events.h"
#include "core/base/status.h"
#include "core/base/types.h"
#include "core/protocol/messages.h"
#include "core/zk/coordination.h"

namespace ksim {

// A block of producer ids, both bounds included (Kafka's ProducerIdBlock).
struct ProducerIdBlock {
  BrokerId broker = kNoBroker;
  int64_t block_start = -1;
  int64_t block_end = -1;
  friend bool operator==(const ProducerIdBlock&, const ProducerIdBlock&) = default;
};

class ProducerIdManager {
 public:
  static constexpr int64_t kBlockSize = 1000;  // ProducerIdManager.PidBlockSize
  static constexpr std::string_view kBlockPath = "/latest_producer_id_block";

  ProducerIdManager(BrokerId broker, Coordination& zk, EventSink events);
  ~ProducerIdManager();
  ProducerIdManager(const ProducerIdManager&) = delete;
  ProducerIdManager& operator=(const ProducerIdManager&) = delete;

  // InitProducerId: answers through `done` (at once when the current block has an id left,
  // else once the next block is claimed). Epoch 0 for a new idempotent producer.
  void HandleInitProducerId(const InitProducerIdRequest& request,
                            std::function<void(InitProducerIdResponse)> done);

  // The block ids are taken from (broker kNoBroker before the first claim).
  const ProducerIdBlock& current_block() const { return block_; }
  // Claims written successfully, and conditional writes lost to another broker.
  int64_t blocks_claimed() const { return blocks_claimed_; }
  int64_t claim_conflicts() const { return claim_conflicts_; }

  // The znode's data (Kafka's generateProducerIdBlockJson / parseProducerIdBlockData). Parsing
  // untrusted bytes returns kCorruption on anything malformed.
  static std::string EncodeBlock(const ProducerIdBlock& block);
  static Result<ProducerIdBlock> DecodeBlock(std::string_view data);
  // The block after `last` claimed by `broker` ([0, 999] when there is none). kUnsupported when
  // the id space is exhausted (Kafka: "Have exhausted all producerIds").
  static Result<ProducerIdBlock> NextBlock(const std::optional<ProducerIdBlock>& last,
                                           BrokerId broker);

 private:
  struct Waiting {
    int32_t correlation_id = 0;
    std::function<void(InitProducerIdResponse)> done;
  };
  // Reads the znode and writes the next block conditionally; repeats on BADVERSION/NODEEXISTS.
  void ClaimNextBlock();
  void OnBlockRead(Result<ZnodeData> read);
  void OnClaimWritten(const ProducerIdBlock& block, Status written);
  // Answers the waiting requests from the block, claiming again if it runs out.
  void AnswerWaiting();
  void FailWaiting(const Status& error);

  template <class F>
  auto Guarded(F f) {
    return [alive = std::weak_ptr<bool>(alive_), f = std::move(f)](auto&&... args) mutable {
      if (alive.expired()) return;
      f(std::forward<decltype(args)>(args)...);
    };
  }

  BrokerId broker_;
  Coordination& zk_;
  EventSink events_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  ProducerIdBlock block_;
  int64_t next_id_ = 0;  // the next id of block_ to hand out (> block_end: used up)
  bool claiming_ = false;
  std::deque<Waiting> waiting_;
  int64_t blocks_claimed_ = 0;
  int64_t claim_conflicts_ = 0;
};

}  // namespace ksim
