#include "sim/kernel/event_loop.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/base/random.h"

namespace ksim::sim {
namespace {

TEST(EventLoopTest, RunsEventsInTimeOrder) {
  EventLoop loop;
  std::vector<int> order;
  loop.ScheduleAt(30, [&] { order.push_back(3); });
  loop.ScheduleAt(10, [&] { order.push_back(1); });
  loop.ScheduleAt(20, [&] { order.push_back(2); });
  EXPECT_EQ(loop.pending(), 3u);
  EXPECT_TRUE(loop.RunUntilIdle(100));
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(loop.Now(), 30);
  EXPECT_EQ(loop.events_executed(), 3u);
  EXPECT_EQ(loop.pending(), 0u);
}

TEST(EventLoopTest, SameTimeEventsRunInInsertionOrder) {
  EventLoop loop;
  std::vector<int> order;
  for (int i = 0; i < 100; ++i) loop.ScheduleAt(5, [&order, i] { order.push_back(i); });
  loop.ScheduleAt(4, [&] { order.push_back(-1); });
  loop.RunUntilIdle(1000);
  ASSERT_EQ(order.size(), 101u);
  EXPECT_EQ(order[0], -1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i + 1], i);
}

TEST(EventLoopTest, ZeroDelayRunsAfterEventsAlreadyAtNow) {
  EventLoop loop;
  std::vector<std::string> order;
  loop.ScheduleAt(10, [&] {
    order.push_back("a");
    loop.ScheduleAfter(0, [&] { order.push_back("a-child"); });
  });
  loop.ScheduleAt(10, [&] { order.push_back("b"); });
  loop.ScheduleAt(11, [&] { order.push_back("c"); });
  loop.RunUntilIdle(100);
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "a-child", "c"}));
}

TEST(EventLoopTest, EventsScheduleEventsAndSeeTheirOwnTime) {
  EventLoop loop;
  std::vector<TimeUs> seen;
  std::function<void()> tick = [&] {
    seen.push_back(loop.Now());
    if (seen.size() < 5) loop.ScheduleAfter(7, tick);
  };
  loop.ScheduleAfter(3, tick);
  EXPECT_TRUE(loop.RunUntilIdle(100));
  EXPECT_EQ(seen, (std::vector<TimeUs>{3, 10, 17, 24, 31}));
}

TEST(EventLoopTest, CancelBeforeRunPreventsIt) {
  EventLoop loop;
  int ran = 0;
  TimerId id = loop.ScheduleAt(10, [&] { ++ran; });
  loop.ScheduleAt(20, [&] { ran += 10; });
  EXPECT_TRUE(loop.IsPending(id));
  loop.Cancel(id);
  EXPECT_FALSE(loop.IsPending(id));
  EXPECT_EQ(loop.pending(), 1u);
  loop.RunUntilIdle(100);
  EXPECT_EQ(ran, 10);
  EXPECT_EQ(loop.events_executed(), 1u);
}

TEST(EventLoopTest, CancelAfterRunAndCancelTwiceAreNoOps) {
  EventLoop loop;
  int ran = 0;
  TimerId done = loop.ScheduleAt(1, [&] { ++ran; });
  loop.RunUntil(1);
  EXPECT_EQ(ran, 1);
  // The slot is reused by the next event; the stale id must not cancel it.
  TimerId next = loop.ScheduleAt(2, [&] { ++ran; });
  loop.Cancel(done);
  EXPECT_TRUE(loop.IsPending(next));
  loop.Cancel(next);
  loop.Cancel(next);
  EXPECT_EQ(loop.pending(), 0u);
  loop.RunUntilIdle(10);
  EXPECT_EQ(ran, 1);
}

TEST(EventLoopTest, CancellingTheRunningEventIsANoOp) {
  EventLoop loop;
  TimerId self = 0;
  int ran = 0;
  self = loop.ScheduleAt(1, [&] {
    EXPECT_FALSE(loop.IsPending(self));
    loop.Cancel(self);
    ++ran;
  });
  EXPECT_TRUE(loop.RunUntilIdle(10));
  EXPECT_EQ(ran, 1);
}

TEST(EventLoopTest, EventCanCancelALaterEvent) {
  EventLoop loop;
  std::vector<int> order;
  TimerId later = loop.ScheduleAt(5, [&] { order.push_back(2); });
  loop.ScheduleAt(1, [&] {
    order.push_back(1);
    loop.Cancel(later);
  });
  loop.RunUntilIdle(10);
  EXPECT_EQ(order, (std::vector<int>{1}));
}

TEST(EventLoopTest, CancelReleasesTheCallableAtOnce) {
  EventLoop loop;
  auto resource = std::make_shared<int>(7);
  TimerId id = loop.ScheduleAt(100, [resource] {});
  EXPECT_EQ(resource.use_count(), 2);
  loop.Cancel(id);
  EXPECT_EQ(resource.use_count(), 1);
}

TEST(EventLoopTest, DestructionReleasesPendingCallablesWithoutRunningThem) {
  auto resource = std::make_shared<int>(7);
  bool ran = false;
  {
    EventLoop loop;
    loop.ScheduleAt(100, [resource, &ran] { ran = true; });
    // A large capture goes out of line; it must be released too.
    std::array<int64_t, 32> big{};
    loop.ScheduleAt(100, [resource, big, &ran] { ran = big[0] == 0; });
    EXPECT_EQ(resource.use_count(), 3);
  }
  EXPECT_EQ(resource.use_count(), 1);
  EXPECT_FALSE(ran);
}

TEST(EventLoopTest, LargeAndMoveOnlyCallablesRun) {
  EventLoop loop;
  std::array<int64_t, 64> big{};
  big[63] = 42;
  int64_t seen = 0;
  loop.ScheduleAt(1, [big, &seen] { seen = big[63]; });
  auto owned = std::make_unique<int>(5);
  loop.ScheduleAt(2, [owned = std::move(owned), &seen] { seen += *owned; });
  loop.RunUntilIdle(10);
  EXPECT_EQ(seen, 47);
}

TEST(EventLoopTest, RunUntilIncludesEventsExactlyAtTheBoundary) {
  EventLoop loop;
  std::vector<TimeUs> ran;
  for (TimeUs t : {5, 10, 11}) loop.ScheduleAt(t, [&, t] { ran.push_back(t); });
  EXPECT_EQ(loop.RunUntil(10), 2u);
  EXPECT_EQ(ran, (std::vector<TimeUs>{5, 10}));
  EXPECT_EQ(loop.Now(), 10);
  EXPECT_EQ(loop.pending(), 1u);
}

TEST(EventLoopTest, RunUntilRunsEventsScheduledMeanwhileUpToTheBoundary) {
  EventLoop loop;
  std::vector<TimeUs> ran;
  loop.ScheduleAt(5, [&] {
    ran.push_back(loop.Now());
    loop.ScheduleAfter(5, [&] { ran.push_back(loop.Now()); });  // at 10: runs
    loop.ScheduleAfter(6, [&] { ran.push_back(loop.Now()); });  // at 11: does not
  });
  EXPECT_EQ(loop.RunUntil(10), 2u);
  EXPECT_EQ(ran, (std::vector<TimeUs>{5, 10}));
}

TEST(EventLoopTest, RunUntilAdvancesTimeWithNoEvents) {
  EventLoop loop(100);
  EXPECT_EQ(loop.Now(), 100);
  EXPECT_EQ(loop.RunUntil(1000), 0u);
  EXPECT_EQ(loop.Now(), 1000);
  // A delay counts from the new time.
  TimeUs at = -1;
  loop.ScheduleAfter(5, [&] { at = loop.Now(); });
  loop.RunUntil(2000);
  EXPECT_EQ(at, 1005);
  EXPECT_EQ(loop.Now(), 2000);
}

TEST(EventLoopTest, StepRunsExactlyOneEvent) {
  EventLoop loop;
  std::vector<int> order;
  loop.ScheduleAt(3, [&] { order.push_back(1); });
  TimerId cancelled = loop.ScheduleAt(4, [&] { order.push_back(99); });
  loop.ScheduleAt(7, [&] { order.push_back(2); });
  loop.Cancel(cancelled);
  ASSERT_TRUE(loop.Step());
  EXPECT_EQ(order, (std::vector<int>{1}));
  EXPECT_EQ(loop.Now(), 3);
  auto next = loop.PeekNext();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->time_us, 7);  // the cancelled event at 4 is skipped
  ASSERT_TRUE(loop.Step());
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_EQ(loop.Now(), 7);
  EXPECT_FALSE(loop.Step());
  EXPECT_EQ(loop.Now(), 7);
  EXPECT_FALSE(loop.PeekNext().has_value());
}

TEST(EventLoopTest, LabelsAreVisibleWhilePendingAndRunning) {
  EventLoop loop;
  const char* seen = nullptr;
  loop.ScheduleAt(
      1, [&] { seen = loop.current_label(); }, "fetch-timeout");
  EXPECT_STREQ(loop.PeekNext()->label, "fetch-timeout");
  EXPECT_FALSE(loop.running());
  loop.Step();
  EXPECT_STREQ(seen, "fetch-timeout");
  EXPECT_EQ(loop.current_label(), nullptr);
}

TEST(EventLoopTest, RunUntilIdleStopsAtTheBound) {
  EventLoop loop;
  uint64_t ticks = 0;
  std::function<void()> forever = [&] {
    ++ticks;
    loop.ScheduleAfter(1, forever);
  };
  loop.ScheduleAfter(0, forever);
  EXPECT_FALSE(loop.RunUntilIdle(1000));
  EXPECT_EQ(ticks, 1000u);
  EXPECT_EQ(loop.events_executed(), 1000u);
  EXPECT_EQ(loop.pending(), 1u);
  EXPECT_EQ(loop.Now(), 999);
}

TEST(EventLoopTest, WorksThroughCoreTimersAndClockSeams) {
  EventLoop loop;
  Timers& timers = loop;
  const Clock& clock = loop;
  std::vector<TimeUs> fired;
  timers.Schedule(2 * kUsPerMs, [&] { fired.push_back(clock.Now()); });
  TimerId dropped = timers.Schedule(1 * kUsPerMs, [&] { fired.push_back(-1); });
  timers.Cancel(dropped);
  loop.RunUntil(5 * kUsPerMs);
  EXPECT_EQ(fired, (std::vector<TimeUs>{2000}));
  EXPECT_EQ(clock.NowMs(), 5);
}

TEST(EventLoopTest, ManyCancellationsCompactTheHeapWithoutChangingOrder) {
  EventLoop loop;
  RandomStream stream(11);
  std::vector<TimerId> ids;
  std::vector<std::pair<TimeUs, int>> expected;
  std::vector<std::pair<TimeUs, int>> ran;
  for (int i = 0; i < 20000; ++i) {
    TimeUs t = stream.UniformInt(0, 500);
    ids.push_back(loop.ScheduleAt(t, [&ran, &loop, i] { ran.emplace_back(loop.Now(), i); }));
    if (i % 10 != 0) continue;
    expected.emplace_back(t, i);
  }
  for (int i = 0; i < 20000; ++i) {
    if (i % 10 != 0) loop.Cancel(ids[i]);
  }
  EXPECT_EQ(loop.pending(), 2000u);
  std::stable_sort(expected.begin(), expected.end(),
                   [](auto& a, auto& b) { return a.first < b.first; });
  EXPECT_TRUE(loop.RunUntilIdle(1'000'000));
  EXPECT_EQ(ran, expected);
  EXPECT_EQ(loop.events_executed(), 2000u);
}

// The execution log of a random workload (events scheduling and cancelling others).
std::vector<std::pair<TimeUs, uint64_t>> RandomWorkloadLog(uint64_t seed) {
  EventLoop loop;
  RandomStream stream(seed);
  std::vector<std::pair<TimeUs, uint64_t>> log;
  std::vector<TimerId> cancellable;
  uint64_t next_name = 0;
  std::function<void(uint64_t)> spawn;
  spawn = [&](uint64_t name) {
    log.emplace_back(loop.Now(), name);
    int children = static_cast<int>(stream.UniformInt(1, 2));
    for (int c = 0; c < children && next_name < 5000; ++c) {
      uint64_t child = next_name++;
      TimerId id = loop.ScheduleAfter(stream.UniformInt(0, 50), [&spawn, child] { spawn(child); });
      cancellable.push_back(id);
    }
    if (!cancellable.empty() && stream.ChancePpm(200'000)) {
      loop.Cancel(cancellable[stream.UniformInt(0, cancellable.size() - 1)]);
    }
  };
  for (int i = 0; i < 20; ++i) {
    uint64_t name = next_name++;
    loop.ScheduleAt(stream.UniformInt(0, 10), [&spawn, name] { spawn(name); });
  }
  EXPECT_TRUE(loop.RunUntilIdle(1'000'000));
  return log;
}

TEST(EventLoopTest, SameScheduleGivesSameExecutionOrder) {
  auto first = RandomWorkloadLog(99);
  auto second = RandomWorkloadLog(99);
  EXPECT_GT(first.size(), 100u);
  EXPECT_EQ(first, second);
  EXPECT_NE(first, RandomWorkloadLog(100));
  for (size_t i = 1; i < first.size(); ++i) ASSERT_LE(first[i - 1].first, first[i].first);
}

TEST(EventLoopDeathTest, SchedulingInThePastIsAProgrammerError) {
  EventLoop loop;
  loop.RunUntil(100);
  EXPECT_DEATH(loop.ScheduleAt(99, [] {}), "past");
  EXPECT_DEATH(loop.ScheduleAfter(-1, [] {}), "negative delay");
  EXPECT_DEATH(loop.RunUntil(50), "past");
}

TEST(EventLoopDeathTest, EmptyCallbacksAreRejectedWhenScheduled) {
  EventLoop loop;
  Timers& timers = loop;
  EXPECT_DEATH(timers.Schedule(1, std::function<void()>()), "empty callback");
  void (*null_function)() = nullptr;
  EXPECT_DEATH(loop.ScheduleAt(1, null_function), "empty callback");
}

TEST(EventLoopDeathTest, RunningTheLoopFromACallbackIsAProgrammerError) {
  EventLoop loop;
  loop.ScheduleAt(1, [&] { loop.Step(); });
  EXPECT_DEATH(loop.RunUntilIdle(10), "inside an event callback");
}

}  // namespace
}  // namespace ksim::sim
