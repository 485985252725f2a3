// The Clock seam's implementations (core/base/clock.h): the real SystemClock gives epoch time
// that never goes backwards; ManualClock moves only when told.
#include "core/base/clock.h"

#include <gtest/gtest.h>

#include <chrono>

namespace ksim {
namespace {

TimeUs WallUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

TEST(SystemClockTest, StartsAtTheWallClocksEpochTime) {
  const TimeUs before = WallUs();
  SystemClock clock;
  const TimeUs now = clock.Now();
  // Epoch microseconds, not an arbitrary steady origin: within a day of the wall clock (a
  // steady clock's origin is usually the boot, decades away).
  EXPECT_GE(now, before - 86'400'000'000LL);
  EXPECT_LE(now, WallUs() + 86'400'000'000LL);
}

TEST(SystemClockTest, NeverGoesBackwards) {
  SystemClock clock;
  TimeUs last = clock.Now();
  for (int i = 0; i < 100000; ++i) {
    const TimeUs now = clock.Now();
    ASSERT_GE(now, last) << "read " << i;
    last = now;
  }
}

TEST(ManualClockTest, MovesOnlyWhenAdvanced) {
  ManualClock clock(5 * kUsPerMs);
  EXPECT_EQ(clock.Now(), 5 * kUsPerMs);
  EXPECT_EQ(clock.Now(), 5 * kUsPerMs);
  clock.Advance(7);
  EXPECT_EQ(clock.Now(), 5 * kUsPerMs + 7);
  clock.AdvanceMs(2);
  EXPECT_EQ(clock.NowMs(), 7);
}

}  // namespace
}  // namespace ksim
