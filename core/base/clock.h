// The Clock seam: core asks what time it is and schedules callbacks only through these
// interfaces. The real implementation is a steady clock; the simulator's is virtual time on its
// event queue (sim/). Time is integer microseconds so that no decision depends on floating point.
#pragma once

#include <cstdint>
#include <functional>

#include "core/base/types.h"

namespace ksim {

class Clock {
 public:
  virtual ~Clock() = default;
  // Microseconds since an arbitrary epoch; never goes backwards.
  virtual TimeUs Now() const = 0;
  int64_t NowMs() const { return Now() / kUsPerMs; }
};

// Handle of a scheduled callback; 0 is never a valid id.
using TimerId = uint64_t;

class Timers {
 public:
  virtual ~Timers() = default;
  // Runs `callback` once, `delay` microseconds from now (0 = after the current event).
  virtual TimerId Schedule(TimeUs delay, std::function<void()> callback) = 0;
  // Cancels a pending callback; cancelling one that ran or was cancelled is a no-op.
  virtual void Cancel(TimerId id) = 0;
};

// Real time for the storage engine on a real disk (never used inside the simulated world):
// microseconds since the Unix epoch, as record timestamps need (Kafka stamps records with epoch
// milliseconds), that never go backwards, as Clock promises. The wall clock is read once, at
// construction; from then on the time advances by the steady clock, so a step of the system's
// clock (NTP, a manual change) moves neither timestamps nor the durations measured with them.
class SystemClock final : public Clock {
 public:
  SystemClock();
  TimeUs Now() const override;

 private:
  TimeUs wall_at_start_us_;
  int64_t steady_at_start_us_;
};

// A clock that moves only when told to; for tests of time-based behaviour (segment roll,
// retention) without sleeping.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimeUs start = 0) : now_(start) {}
  TimeUs Now() const override { return now_; }
  void Advance(TimeUs delta) { now_ += delta; }
  void AdvanceMs(int64_t ms) { now_ += ms * kUsPerMs; }

 private:
  TimeUs now_;
};

}  // namespace ksim
