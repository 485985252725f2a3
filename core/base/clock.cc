#include "core/base/clock.h"

#include <chrono>

namespace ksim {
namespace {

int64_t SteadyUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

SystemClock::SystemClock()
    : wall_at_start_us_(std::chrono::duration_cast<std::chrono::microseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count()),
      steady_at_start_us_(SteadyUs()) {}

TimeUs SystemClock::Now() const { return wall_at_start_us_ + (SteadyUs() - steady_at_start_us_); }

}  // namespace ksim
