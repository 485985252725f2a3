#include "core/base/clock.h"

#include <chrono>

namespace ksim {

TimeUs SystemClock::Now() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace ksim
