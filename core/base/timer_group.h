// TimerGroup: the timers one component scheduled on a borrowed Timers seam, so that the component
// can cancel all of them at once (a crash: the broker is destroyed without Shutdown, and none of
// its callbacks may run afterwards). Fired timers forget themselves. Ids are the group's own
// (1, 2, ...), not the underlying Timers'.
//
// Ownership: borrows the Timers (it must outlive the group). Destroying the group cancels every
// pending timer. One thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <utility>

#include "core/base/check.h"
#include "core/base/clock.h"

namespace ksim {

class TimerGroup {
 public:
  explicit TimerGroup(Timers& timers) : timers_(timers) {}
  ~TimerGroup() { CancelAll(); }
  TimerGroup(const TimerGroup&) = delete;
  TimerGroup& operator=(const TimerGroup&) = delete;

  // Runs `callback` after `delay_us` unless cancelled first. Returns the group's id (never 0).
  TimerId Schedule(TimeUs delay_us, std::function<void()> callback) {
    KSIM_CHECK(delay_us >= 0);
    const TimerId key = next_key_++;
    const TimerId id = timers_.Schedule(delay_us, [this, key, callback = std::move(callback)]() {
      pending_.erase(key);
      callback();
    });
    pending_.emplace(key, id);
    return key;
  }
  // Cancelling an unknown, fired or cancelled id (or 0) is a no-op.
  void Cancel(TimerId key) {
    auto it = pending_.find(key);
    if (it == pending_.end()) return;
    timers_.Cancel(it->second);
    pending_.erase(it);
  }
  void CancelAll() {
    for (const auto& [key, id] : pending_) timers_.Cancel(id);
    pending_.clear();
  }
  size_t pending() const { return pending_.size(); }

 private:
  Timers& timers_;
  TimerId next_key_ = 1;
  std::map<TimerId, TimerId> pending_;  // group id -> Timers id
};

}  // namespace ksim
