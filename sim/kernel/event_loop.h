// The discrete-event kernel of the simulated world. An EventLoop holds callbacks scheduled at
// virtual times (integer microseconds) and runs them in (time, insertion sequence) order, so two
// events at the same time run in the order they were scheduled and a run is a pure function of
// the schedule (docs/DESIGN.md, determinism rules). It is also the simulator's implementation of
// core's Clock and Timers seams (core/base/clock.h): core code handed an EventLoop schedules on
// virtual time without knowing it.
//
// Layout: a 4-ary heap of 16-byte POD entries (time; sequence and slot index packed in one word);
// the callables live out of line in 64-byte slots at fixed addresses (chunks that never move),
// with an inline buffer so that typical lambdas and std::function values are stored without a
// heap allocation, and run in place. Freed slots go to a free list. Cancellation is lazy: the
// slot is marked and its callable destroyed at once, the heap entry is skipped when it surfaces;
// when cancelled entries dominate the heap it is compacted (heap shape does not affect order,
// which is total on (time, sequence)). Figures: bench/event_loop_bench.cc.
//
// Ownership and threads: the loop owns every pending callable and destroys the ones that never
// ran when it is destroyed. Single-threaded: the simulated world has no threads. Callbacks may
// schedule and cancel events (including cancelling themselves: a no-op once running), but must
// not call Step/RunUntil/RunUntilIdle (re-entrancy is a programmer error) and must not throw.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/base/check.h"
#include "core/base/clock.h"
#include "core/base/types.h"

namespace ksim::sim {

class EventLoop final : public Clock, public Timers {
 public:
  // Callables up to this size (and alignment up to kInlineAlign) are stored inside the slot;
  // larger ones are heap-allocated once. A std::function<void()> (32 bytes) fits, as does a
  // lambda capturing five pointers.
  static constexpr size_t kInlineBytes = 40;
  static constexpr size_t kInlineAlign = alignof(std::max_align_t);

  explicit EventLoop(TimeUs start_us = 0);
  ~EventLoop() override;
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Clock: the virtual time. During a callback it is that event's time; after RunUntil(t) it
  // is t.
  TimeUs Now() const override { return now_us_; }

  // Timers: runs `callback` `delay_us` from now; 0 runs after every event already at Now().
  // REQUIRES: delay_us >= 0, callback non-empty.
  TimerId Schedule(TimeUs delay_us, std::function<void()> callback) override {
    return ScheduleAfter(delay_us, std::move(callback));
  }
  // Cancels a pending event; cancelling one that ran, is running or was cancelled is a no-op.
  // REQUIRES: `id` was returned by this loop.
  void Cancel(TimerId id) override;

  // The allocation-free path: any void() callable (move-only ones too). `label` is for
  // debugging and the viewer only (a string with static storage duration, or null).
  // REQUIRES: time_us >= Now() (scheduling in the past is a programmer error).
  template <class F>
  TimerId ScheduleAt(TimeUs time_us, F&& callback, const char* label = nullptr);
  // REQUIRES: delay_us >= 0.
  template <class F>
  TimerId ScheduleAfter(TimeUs delay_us, F&& callback, const char* label = nullptr) {
    KSIM_CHECK_MSG(delay_us >= 0, "negative delay");
    KSIM_CHECK_MSG(delay_us <= kTimeMax - now_us_, "event time overflows");
    return ScheduleAt(now_us_ + delay_us, std::forward<F>(callback), label);
  }

  // Runs exactly one event (the earliest live one) and returns true, or returns false when
  // nothing is pending. Now() becomes that event's time.
  bool Step();
  // Runs every event with time <= `time_us`, including those scheduled meanwhile, then sets
  // Now() to `time_us` (even if no event ran). Returns how many events ran.
  // REQUIRES: time_us >= Now().
  uint64_t RunUntil(TimeUs time_us);
  // Runs events until none is pending or `max_events` have run. Returns true if the loop is
  // idle (pending() == 0), false if the bound stopped it. Now() stays at the last event's time.
  bool RunUntilIdle(uint64_t max_events);

  struct NextEvent {
    TimeUs time_us;
    const char* label;  // may be null
  };
  // The event Step() would run next, if any (skips and frees cancelled entries at the top).
  std::optional<NextEvent> PeekNext();

  // True while `id` is scheduled and has neither run, started running nor been cancelled.
  bool IsPending(TimerId id) const;
  // Live (not cancelled, not yet started) events.
  size_t pending() const { return pending_; }
  uint64_t events_executed() const { return events_executed_; }
  // True while a callback runs; the label of the running event (null if none or unlabelled).
  bool running() const { return running_; }
  const char* current_label() const { return current_label_; }

 private:
  static constexpr TimeUs kTimeMax = INT64_MAX;
  static constexpr uint32_t kChunkShift = 10;
  static constexpr uint32_t kChunkSlots = 1u << kChunkShift;
  // Compaction starts once this many cancelled entries sit in the heap and they are the majority.
  static constexpr size_t kCompactMinCancelled = 1024;

  enum class SlotState : uint8_t { kFree, kPending, kRunning, kCancelled };

  // The callable of one event: one cache line, touched only to run or destroy it.
  struct alignas(64) Slot {
    alignas(kInlineAlign) unsigned char storage[kInlineBytes];
    void (*invoke)(void*) = nullptr;
    void (*destroy)(void*) = nullptr;  // null when there is nothing to destroy
    const char* label = nullptr;
  };
  static_assert(sizeof(Slot) == 64);
  // The bookkeeping of a slot, in a dense array of its own: checking whether the top of the heap
  // was cancelled touches 8 bytes, not the callable's line.
  struct SlotMeta {
    uint32_t generation = 1;  // bumped each time the slot is freed; part of the TimerId
    SlotState state = SlotState::kFree;
  };

  // The heap entry: plain data, so sifting moves 16 bytes. `key` is the insertion sequence
  // (high 40 bits) and the slot index (low 24 bits); sequences are unique, so comparing keys
  // compares sequences. The named bounds below are checked.
  static constexpr int kSlotBits = 24;
  static constexpr uint32_t kSlotsMax = (1u << kSlotBits) - 1;       // 16.7 M scheduled at once
  static constexpr uint64_t kSequenceMax = (uint64_t{1} << 40) - 1;  // 1.1e12 events per loop
  struct Entry {
    TimeUs time_us;
    uint64_t key;
    uint32_t slot() const { return static_cast<uint32_t>(key & kSlotsMax); }
  };
  static_assert(sizeof(Entry) == 16);
  // (time, key) as one unsigned 128-bit number (times are >= 0): one branch-free comparison.
  static bool RunsBefore(const Entry& a, const Entry& b) {
    using U128 = unsigned __int128;
    const U128 a_order = (U128{static_cast<uint64_t>(a.time_us)} << 64) | a.key;
    const U128 b_order = (U128{static_cast<uint64_t>(b.time_us)} << 64) | b.key;
    return a_order < b_order;
  }
  // A 4-ary min-heap in heap_: children of i are 4i+1..4i+4 (fewer levels and adjacent children
  // than a binary heap: fewer cache misses when the queue is large).
  void HeapPush(Entry entry);
  void HeapPop();

  Slot& SlotAt(uint32_t index) { return chunks_[index >> kChunkShift][index & (kChunkSlots - 1)]; }
  const Slot& SlotAt(uint32_t index) const {
    return chunks_[index >> kChunkShift][index & (kChunkSlots - 1)];
  }
  uint32_t AllocateSlot();
  void FreeSlot(uint32_t index);
  static void DestroyCallable(Slot& slot);
  TimerId Push(TimeUs time_us, uint32_t index, const char* label);
  // Pops cancelled entries off the top; returns false if the heap is then empty.
  bool DropCancelledTop();
  // Runs the top entry. REQUIRES: heap non-empty and its top is live.
  void RunTop();
  void MaybeCompact();

  TimeUs now_us_;
  uint64_t next_sequence_ = 0;
  uint64_t events_executed_ = 0;
  size_t pending_ = 0;
  size_t cancelled_in_heap_ = 0;
  bool running_ = false;
  const char* current_label_ = nullptr;
  std::vector<Entry> heap_;
  std::vector<std::unique_ptr<Slot[]>> chunks_;  // fixed addresses: callables never move
  std::vector<SlotMeta> meta_;                   // indexed like the slots
  std::vector<uint32_t> free_slots_;
};

template <class F>
TimerId EventLoop::ScheduleAt(TimeUs time_us, F&& callback, const char* label) {
  using Fn = std::decay_t<F>;
  static_assert(std::is_invocable_r_v<void, Fn&>, "an event callback is a void() callable");
  KSIM_CHECK_MSG(time_us >= now_us_, "scheduling an event in the past");
  if constexpr (std::is_constructible_v<bool, const Fn&>) {
    // An empty std::function or a null function pointer would fail only when the event runs.
    KSIM_CHECK_MSG(static_cast<bool>(callback), "scheduling an empty callback");
  }
  const uint32_t index = AllocateSlot();
  Slot& slot = SlotAt(index);
  if constexpr (sizeof(Fn) <= kInlineBytes && alignof(Fn) <= kInlineAlign &&
                std::is_nothrow_move_constructible_v<Fn>) {
    ::new (static_cast<void*>(slot.storage)) Fn(std::forward<F>(callback));
    slot.invoke = [](void* p) { (*std::launder(static_cast<Fn*>(p)))(); };
    if constexpr (std::is_trivially_destructible_v<Fn>) {
      slot.destroy = nullptr;
    } else {
      slot.destroy = [](void* p) { std::launder(static_cast<Fn*>(p))->~Fn(); };
    }
  } else {
    Fn* boxed = new Fn(std::forward<F>(callback));
    ::new (static_cast<void*>(slot.storage)) Fn*(boxed);
    slot.invoke = [](void* p) { (**std::launder(static_cast<Fn**>(p)))(); };
    slot.destroy = [](void* p) { delete *std::launder(static_cast<Fn**>(p)); };
  }
  return Push(time_us, index, label);
}

}  // namespace ksim::sim
