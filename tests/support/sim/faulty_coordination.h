// A Coordination in front of a node's ZooKeeper client that fails chosen calls, to test how core
// code acts on each ZooKeeper error without arranging the network to produce it. A rule names the
// operation, the path (exact, or a prefix ending in '*'), the error, and how many matching calls
// it fails; then either
//   - not applied: the call never reaches ZooKeeper (nothing is written, no watch is left);
//     a read of the same path without a watch goes in its place and its answer is replaced by the
//     error, so the error comes in the call's turn (ZooKeeper answers a client in order), or
//   - applied: the call reaches ZooKeeper and its answer is replaced by the error (a
//     CONNECTIONLOSS after the server applied a write).
// Everything else passes through. Single-threaded; borrows the wrapped client (it must outlive
// this). Destroying it drops the callbacks of the calls it holds.
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

namespace ksim::sim::testing {

class FaultyCoordination final : public CoordinationWrapper {
 public:
  enum class Op : uint8_t { kCreate, kDelete, kExists, kGetData, kSetData, kGetChildren };
  struct Rule {
    Op op;
    std::string path;  // exact, or a prefix followed by '*'
    Errc error;
    int remaining = 1;
    bool applied = false;
  };

  explicit FaultyCoordination(Coordination& zk) : CoordinationWrapper(zk) {}
  ~FaultyCoordination() override { *token_ = false; }

  // Fails the next `count` calls of `op` on `path` with `error`.
  void Fail(Op op, std::string path, Errc error, int count = 1, bool applied = false) {
    rules_.push_back(Rule{op, std::move(path), error, count, applied});
  }
  // Calls failed so far, and the paths they named, in order.
  const std::vector<std::string>& failed() const { return failed_; }

  void Create(std::string path, std::string data, CreateMode mode, CreateCallback done) override {
    Route<Result<std::string>>(Op::kCreate, path, std::move(done), [&](CreateCallback callback) {
      target().Create(path, data, mode, std::move(callback));
    });
  }
  void Delete(std::string path, int32_t version, DeleteCallback done) override {
    Route<Status>(Op::kDelete, path, std::move(done), [&](DeleteCallback callback) {
      target().Delete(path, version, std::move(callback));
    });
  }
  void Exists(std::string path, bool watch, ExistsCallback done) override {
    Route<Result<std::optional<ZnodeStat>>>(
        Op::kExists, path, std::move(done),
        [&](ExistsCallback callback) { target().Exists(path, watch, std::move(callback)); });
  }
  void GetData(std::string path, bool watch, GetDataCallback done) override {
    Route<Result<ZnodeData>>(Op::kGetData, path, std::move(done), [&](GetDataCallback callback) {
      target().GetData(path, watch, std::move(callback));
    });
  }
  void SetData(std::string path, std::string data, int32_t version, SetDataCallback done) override {
    Route<Result<ZnodeStat>>(Op::kSetData, path, std::move(done), [&](SetDataCallback callback) {
      target().SetData(path, data, version, std::move(callback));
    });
  }
  void GetChildren(std::string path, bool watch, ChildrenCallback done) override {
    Route<Result<std::vector<std::string>>>(
        Op::kGetChildren, path, std::move(done),
        [&](ChildrenCallback callback) { target().GetChildren(path, watch, std::move(callback)); });
  }

 private:
  static bool Matches(const Rule& rule, Op op, const std::string& path) {
    if (rule.op != op || rule.remaining <= 0) return false;
    if (!rule.path.empty() && rule.path.back() == '*') {
      return path.starts_with(std::string_view(rule.path).substr(0, rule.path.size() - 1));
    }
    return rule.path == path;
  }

  // Sends the call through `issue`, or fails it as the first matching rule says.
  template <class R, class Issue>
  void Route(Op op, const std::string& path, std::function<void(R)> done, Issue issue) {
    Rule* rule = nullptr;
    for (Rule& candidate : rules_) {
      if (Matches(candidate, op, path)) {
        rule = &candidate;
        break;
      }
    }
    if (rule == nullptr) {
      issue(std::move(done));
      return;
    }
    --rule->remaining;
    failed_.push_back(path);
    Status error(rule->error, path);
    auto fail = [token = token_, done = std::move(done), error](auto&&) {
      if (*token && done) done(error);
    };
    if (rule->applied) {
      issue(std::function<void(R)>(fail));
    } else {
      target().Exists(path, /*watch=*/false, fail);
    }
  }

  std::shared_ptr<bool> token_ = std::make_shared<bool>(true);
  std::vector<Rule> rules_;
  std::vector<std::string> failed_;
};

}  // namespace ksim::sim::testing
