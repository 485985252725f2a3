// CoordinationWrapper: a Coordination that forwards every call to another one (LevelDB's
// EnvWrapper), so that a wrapper that changes a few calls (RetryingCoordination, a test's fault
// injector) overrides only those. Borrows the wrapped Coordination, which must outlive it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "core/zk/coordination.h"

namespace ksim {

class CoordinationWrapper : public Coordination {
 public:
  explicit CoordinationWrapper(Coordination& target) : target_(target) {}
  CoordinationWrapper(const CoordinationWrapper&) = delete;
  CoordinationWrapper& operator=(const CoordinationWrapper&) = delete;

  Coordination& target() const { return target_; }

  void SetWatcher(Watcher watcher) override { target_.SetWatcher(std::move(watcher)); }
  void SetSessionListener(SessionListener listener) override {
    target_.SetSessionListener(std::move(listener));
  }
  void Connect() override { target_.Connect(); }
  void Close(std::function<void()> done) override { target_.Close(std::move(done)); }
  SessionState state() const override { return target_.state(); }
  ZkSessionId session_id() const override { return target_.session_id(); }
  TimeUs negotiated_session_timeout_us() const override {
    return target_.negotiated_session_timeout_us();
  }
  void Create(std::string path, std::string data, CreateMode mode, CreateCallback done) override {
    target_.Create(std::move(path), std::move(data), mode, std::move(done));
  }
  void Delete(std::string path, int32_t version, DeleteCallback done) override {
    target_.Delete(std::move(path), version, std::move(done));
  }
  void Exists(std::string path, bool watch, ExistsCallback done) override {
    target_.Exists(std::move(path), watch, std::move(done));
  }
  void GetData(std::string path, bool watch, GetDataCallback done) override {
    target_.GetData(std::move(path), watch, std::move(done));
  }
  void SetData(std::string path, std::string data, int32_t version, SetDataCallback done) override {
    target_.SetData(std::move(path), std::move(data), version, std::move(done));
  }
  void GetChildren(std::string path, bool watch, ChildrenCallback done) override {
    target_.GetChildren(std::move(path), watch, std::move(done));
  }

 private:
  Coordination& target_;
};

}  // namespace ksim
