// Events per second of the bare event loop against a bare std::priority_queue of (time,
// sequence) pairs fed the same time pattern, measured in the same run. The queue is the lower
// bound on the work (ordering only: no callables, no cancellation, no ids); target: the loop
// reaches at least half its rate.
//
//   ninja -C build-kernel event_loop_bench && build-kernel/bench/event_loop_bench
//
// Batch/N: schedule N events at pseudo-random delays in [0, 1 s), then run them all. "Warm"
// keeps one loop (one queue) across iterations, as a simulation keeps its loop for the whole run
// and reuses its slots; "Cold" builds a new one per iteration, so every slot is touched for the
// first time (page faults included).
// Steady/K: K events pending, each event schedules one more at a pseudo-random delay (the shape
// of a running simulation); 1,000,000 events per iteration. StdFunction: the same through core's
// Timers seam (std::function callables).
//
// The delays come from a RandomStream, drawn outside the timed region into a pool larger than one
// iteration's needs; each iteration starts where the previous one stopped, so no iteration
// repeats the exact sequence of comparisons of the one before (a branch predictor could learn a
// short repeated sequence and flatter branchy code).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "sim/kernel/event_loop.h"
#include "sim/kernel/random.h"

namespace ksim::sim {
namespace {

constexpr int64_t kDelayMaxUs = 1'000'000;
constexpr int64_t kSteadyEvents = 1'000'000;
constexpr size_t kPoolSize = size_t{1} << 21;  // a power of two: index & (size - 1)

class DelayPool {
 public:
  DelayPool() : delays_(kPoolSize) {
    RandomStream stream(HashName("event_loop_bench"));
    for (int64_t& delay : delays_) delay = stream.UniformInt(0, kDelayMaxUs - 1);
  }
  int64_t Next() { return delays_[next_++ & (kPoolSize - 1)]; }

 private:
  std::vector<int64_t> delays_;
  size_t next_ = 0;
};

using PairQueue = std::priority_queue<std::pair<int64_t, uint64_t>,
                                      std::vector<std::pair<int64_t, uint64_t>>, std::greater<>>;

// A priority queue whose storage can be reserved and kept between iterations.
struct WarmPairQueue : PairQueue {
  void Reserve(size_t count) { c.reserve(count); }
};

void KernelBatchIteration(EventLoop& loop, DelayPool& pool, size_t count, uint64_t& sum) {
  for (size_t i = 0; i < count; ++i) {
    const int64_t delay = pool.Next();
    loop.ScheduleAfter(delay, [&sum, delay] { sum += delay; });
  }
  loop.RunUntilIdle(count);
}

void PairQueueBatchIteration(PairQueue& queue, DelayPool& pool, size_t count, uint64_t& sequence,
                             int64_t& now, uint64_t& sum) {
  // Times relative to the advancing clock, as the loop's ScheduleAfter does.
  for (size_t i = 0; i < count; ++i) queue.emplace(now + pool.Next(), sequence++);
  while (!queue.empty()) {
    now = queue.top().first;
    sum += queue.top().second;
    queue.pop();
  }
}

void BM_KernelBatchWarm(benchmark::State& state) {
  const size_t count = static_cast<size_t>(state.range(0));
  DelayPool pool;
  uint64_t sum = 0;
  EventLoop loop;
  for (auto _ : state) {
    KernelBatchIteration(loop, pool, count, sum);
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * count);
}

void BM_PriorityQueueBatchWarm(benchmark::State& state) {
  const size_t count = static_cast<size_t>(state.range(0));
  DelayPool pool;
  uint64_t sum = 0, sequence = 0;
  int64_t now = 0;
  WarmPairQueue queue;
  queue.Reserve(count);
  for (auto _ : state) {
    PairQueueBatchIteration(queue, pool, count, sequence, now, sum);
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * count);
}

void BM_KernelBatchCold(benchmark::State& state) {
  const size_t count = static_cast<size_t>(state.range(0));
  DelayPool pool;
  uint64_t sum = 0;
  for (auto _ : state) {
    EventLoop loop;
    KernelBatchIteration(loop, pool, count, sum);
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * count);
}

void BM_PriorityQueueBatchCold(benchmark::State& state) {
  const size_t count = static_cast<size_t>(state.range(0));
  DelayPool pool;
  uint64_t sum = 0;
  for (auto _ : state) {
    PairQueue queue;
    uint64_t sequence = 0;
    int64_t now = 0;
    PairQueueBatchIteration(queue, pool, count, sequence, now, sum);
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * count);
}

// Each event reschedules itself through this context (a pointer-sized capture: stays inline).
struct SteadyContext {
  EventLoop* loop;
  DelayPool* pool;
  void Reschedule() {
    loop->ScheduleAfter(pool->Next(), [this] { Reschedule(); });
  }
};

void BM_KernelSteady(benchmark::State& state) {
  const size_t pending = static_cast<size_t>(state.range(0));
  DelayPool pool;
  for (auto _ : state) {
    EventLoop loop;
    SteadyContext context{&loop, &pool};
    for (size_t i = 0; i < pending; ++i) context.Reschedule();
    loop.RunUntilIdle(kSteadyEvents);
    benchmark::DoNotOptimize(loop.Now());
  }
  state.SetItemsProcessed(state.iterations() * kSteadyEvents);
}

void BM_PriorityQueueSteady(benchmark::State& state) {
  const size_t pending = static_cast<size_t>(state.range(0));
  DelayPool pool;
  for (auto _ : state) {
    PairQueue queue;
    uint64_t sequence = 0;
    for (size_t i = 0; i < pending; ++i) queue.emplace(pool.Next(), sequence++);
    int64_t now = 0;
    for (int64_t i = 0; i < kSteadyEvents; ++i) {
      now = queue.top().first;
      queue.pop();
      queue.emplace(now + pool.Next(), sequence++);
    }
    benchmark::DoNotOptimize(now);
  }
  state.SetItemsProcessed(state.iterations() * kSteadyEvents);
}

// The core seam's path: std::function callables through Timers::Schedule.
void BM_KernelSteadyStdFunction(benchmark::State& state) {
  const size_t pending = static_cast<size_t>(state.range(0));
  DelayPool pool;
  for (auto _ : state) {
    EventLoop loop;
    Timers& timers = loop;
    std::function<void()> tick = [&] { timers.Schedule(pool.Next(), tick); };
    for (size_t i = 0; i < pending; ++i) tick();
    loop.RunUntilIdle(kSteadyEvents);
    benchmark::DoNotOptimize(loop.Now());
  }
  state.SetItemsProcessed(state.iterations() * kSteadyEvents);
}

BENCHMARK(BM_KernelBatchWarm)
    ->Arg(1'000)
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PriorityQueueBatchWarm)
    ->Arg(1'000)
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_KernelBatchCold)->Arg(1'000)->Arg(100'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PriorityQueueBatchCold)->Arg(1'000)->Arg(100'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_KernelSteady)->Arg(100)->Arg(10'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PriorityQueueSteady)->Arg(100)->Arg(10'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_KernelSteadyStdFunction)->Arg(100)->Arg(10'000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ksim::sim

BENCHMARK_MAIN();
