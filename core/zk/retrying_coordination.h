// RetryingCoordination: a Coordination that issues a call again when it fails with CONNECTIONLOSS,
// as I0Itec's ZkClient.retryUntilConnected does for every call Kafka 0.10's ZkUtils makes (the
// controller's included). The call is issued again at once, inside the failed call's callback: the
// wrapped client holds it until it is connected again (a Coordination queues calls while it
// reconnects), so no timer is needed, and calls failed together are issued again in their order.
//
// A call that the server applied before the connection dropped is applied twice: the second
// Create fails with NODEEXISTS, a conditional SetData with BADVERSION, a Delete with NONODE, as
// with ZkClient; the caller decides what that means (Kafka's
// ZkUtils.createEphemeralPathExpectConflict, ReplicationUtils.checkLeaderAndIsrZkData,
// ZkUtils.deletePath). Every other answer, SESSIONEXPIRED included, goes to the caller unchanged:
// ZkClient would wait for a new session and apply the call there, after its owner has learned of
// the expiry (the "zombie controller" writes of KAFKA-5027); an owner of this one decides.
//
// A CONNECTIONLOSS comes at most once per connection attempt and the session bounds the attempts
// (a client that cannot reconnect within the session timeout learns that its session expired), so
// the retries end.
//
// Ownership: borrows the wrapped Coordination, which must outlive it. Destroying it drops the
// callbacks of its pending calls (they never run). Watcher, session listener and session calls
// are the wrapped client's (CoordinationWrapper). Single-threaded.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/zk/coordination.h"
#include "core/zk/coordination_wrapper.h"

namespace ksim {

class RetryingCoordination final : public CoordinationWrapper {
 public:
  explicit RetryingCoordination(Coordination& zk) : CoordinationWrapper(zk) {}
  ~RetryingCoordination() override { *token_ = false; }

  void Create(std::string path, std::string data, CreateMode mode, CreateCallback done) override;
  void Delete(std::string path, int32_t version, DeleteCallback done) override;
  void Exists(std::string path, bool watch, ExistsCallback done) override;
  void GetData(std::string path, bool watch, GetDataCallback done) override;
  void SetData(std::string path, std::string data, int32_t version, SetDataCallback done) override;
  void GetChildren(std::string path, bool watch, ChildrenCallback done) override;

  // Calls issued again so far.
  uint64_t retries() const { return retries_; }

 private:
  // `issue(callback)` makes the call once; its answer goes to `done` unless it is CONNECTIONLOSS,
  // which issues it again.
  template <class R>
  void Retrying(std::function<void(std::function<void(R)>)> issue, std::function<void(R)> done);

  std::shared_ptr<bool> token_ = std::make_shared<bool>(true);
  uint64_t retries_ = 0;
};

}  // namespace ksim
