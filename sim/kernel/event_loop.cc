#include "sim/kernel/event_loop.h"

#include <algorithm>

namespace ksim::sim {
namespace {

// A TimerId packs the slot's generation (high 32 bits) and slot index + 1 (low 32 bits), so an
// id is never 0 and a stale id (its slot since freed and reused) never matches.
TimerId MakeId(uint32_t generation, uint32_t index) {
  return (static_cast<uint64_t>(generation) << 32) | (static_cast<uint64_t>(index) + 1);
}
uint32_t IdIndex(TimerId id) { return static_cast<uint32_t>(id & 0xFFFFFFFFu) - 1; }
uint32_t IdGeneration(TimerId id) { return static_cast<uint32_t>(id >> 32); }

}  // namespace

EventLoop::EventLoop(TimeUs start_us) : now_us_(start_us) { KSIM_CHECK(start_us >= 0); }

EventLoop::~EventLoop() {
  for (uint32_t index = 0; index < meta_.size(); ++index) {
    if (meta_[index].state == SlotState::kPending) DestroyCallable(SlotAt(index));
  }
}

uint32_t EventLoop::AllocateSlot() {
  if (!free_slots_.empty()) {
    const uint32_t index = free_slots_.back();
    free_slots_.pop_back();
    KSIM_CHECK(meta_[index].state == SlotState::kFree);
    return index;
  }
  KSIM_CHECK_MSG(meta_.size() < kSlotsMax, "too many simultaneous events");
  const auto index = static_cast<uint32_t>(meta_.size());
  if ((index & (kChunkSlots - 1)) == 0)
    chunks_.push_back(std::unique_ptr<Slot[]>(new Slot[kChunkSlots]));  // no zero-fill
  meta_.emplace_back();
  return index;
}

void EventLoop::FreeSlot(uint32_t index) {
  SlotMeta& meta = meta_[index];
  KSIM_CHECK(meta.state != SlotState::kFree);
  KSIM_CHECK(SlotAt(index).invoke == nullptr);
  meta.state = SlotState::kFree;
  // A slot whose generation would wrap is retired, so that no TimerId is ever reused.
  if (meta.generation == UINT32_MAX) return;
  ++meta.generation;
  free_slots_.push_back(index);
}

void EventLoop::DestroyCallable(Slot& slot) {
  KSIM_CHECK(slot.invoke != nullptr);
  if (slot.destroy != nullptr) slot.destroy(slot.storage);
  slot.invoke = nullptr;
  slot.destroy = nullptr;
  slot.label = nullptr;
}

TimerId EventLoop::Push(TimeUs time_us, uint32_t index, const char* label) {
  SlotMeta& meta = meta_[index];
  KSIM_CHECK(meta.state == SlotState::kFree);
  KSIM_CHECK_MSG(next_sequence_ <= kSequenceMax, "event sequence numbers exhausted");
  meta.state = SlotState::kPending;
  SlotAt(index).label = label;
  HeapPush(Entry{time_us, (next_sequence_++ << kSlotBits) | index});
  ++pending_;
  return MakeId(meta.generation, index);
}

void EventLoop::HeapPush(Entry entry) {
  size_t hole = heap_.size();
  heap_.push_back(entry);
  while (hole > 0) {
    const size_t parent = (hole - 1) / 4;
    if (!RunsBefore(entry, heap_[parent])) break;
    heap_[hole] = heap_[parent];
    hole = parent;
  }
  heap_[hole] = entry;
}

void EventLoop::HeapPop() {
  KSIM_CHECK(!heap_.empty());
  const Entry last = heap_.back();
  heap_.pop_back();
  const size_t size = heap_.size();
  if (size == 0) return;
  // Floyd's variant: walk the hole from the root down to a leaf along the earliest children
  // (no comparison with `last` on the way down, and branch-free choices among four children),
  // then sift `last` up from there; it usually belongs near the bottom.
  size_t hole = 0;
  Entry* const data = heap_.data();
  for (;;) {
    const size_t first = 4 * hole + 1;
    size_t best = first;
    if (first + 4 <= size) {
      // Index arithmetic instead of ?: so the compiler cannot turn the choices into branches
      // (with random times they would be mispredicted half of the time).
      const size_t best01 = first + RunsBefore(data[first + 1], data[first]);
      const size_t best23 = first + 2 + RunsBefore(data[first + 3], data[first + 2]);
      const size_t take23 = 0 - static_cast<size_t>(RunsBefore(data[best23], data[best01]));
      best = best01 ^ ((best01 ^ best23) & take23);
    } else if (first < size) {
      for (size_t child = first + 1; child < size; ++child) {
        if (RunsBefore(data[child], data[best])) best = child;
      }
    } else {
      break;
    }
    data[hole] = data[best];
    hole = best;
  }
  while (hole > 0) {
    const size_t parent = (hole - 1) / 4;
    if (!RunsBefore(last, data[parent])) break;
    data[hole] = data[parent];
    hole = parent;
  }
  data[hole] = last;
}

void EventLoop::Cancel(TimerId id) {
  const uint32_t index = IdIndex(id);
  KSIM_CHECK_MSG(id != 0 && index < meta_.size(), "cancelling an id this loop never issued");
  SlotMeta& meta = meta_[index];
  if (meta.generation != IdGeneration(id) || meta.state != SlotState::kPending) return;
  DestroyCallable(SlotAt(index));
  meta.state = SlotState::kCancelled;
  KSIM_CHECK(pending_ > 0);
  --pending_;
  ++cancelled_in_heap_;
  MaybeCompact();
}

bool EventLoop::IsPending(TimerId id) const {
  const uint32_t index = IdIndex(id);
  if (id == 0 || index >= meta_.size()) return false;
  return meta_[index].generation == IdGeneration(id) && meta_[index].state == SlotState::kPending;
}

void EventLoop::MaybeCompact() {
  if (cancelled_in_heap_ < kCompactMinCancelled || cancelled_in_heap_ * 2 <= heap_.size()) return;
  std::erase_if(heap_, [this](const Entry& entry) {
    if (meta_[entry.slot()].state != SlotState::kCancelled) return false;
    FreeSlot(entry.slot());
    return true;
  });
  std::sort(heap_.begin(), heap_.end(), RunsBefore);  // a sorted array is a valid heap
  cancelled_in_heap_ = 0;
  KSIM_CHECK(heap_.size() == pending_);
}

bool EventLoop::DropCancelledTop() {
  while (!heap_.empty()) {
    const uint32_t index = heap_.front().slot();
    if (meta_[index].state != SlotState::kCancelled) return true;
    HeapPop();
    FreeSlot(index);
    KSIM_CHECK(cancelled_in_heap_ > 0);
    --cancelled_in_heap_;
  }
  return false;
}

void EventLoop::RunTop() {
  KSIM_CHECK_MSG(!running_, "Step/RunUntil called from inside an event callback");
  const Entry top = heap_.front();
  const uint32_t index = top.slot();
  HeapPop();
  // The next event's callable is a cache miss in a large queue; start loading it now.
  if (!heap_.empty()) {
    const uint32_t next = heap_.front().slot();
    __builtin_prefetch(&meta_[next]);
    __builtin_prefetch(&SlotAt(next));
  }
  KSIM_CHECK(meta_[index].state == SlotState::kPending);
  KSIM_CHECK(top.time_us >= now_us_);
  now_us_ = top.time_us;
  meta_[index].state = SlotState::kRunning;
  --pending_;
  Slot& slot = SlotAt(index);  // chunks never move: valid while the callback schedules more
  running_ = true;
  current_label_ = slot.label;
  slot.invoke(slot.storage);
  running_ = false;
  current_label_ = nullptr;
  ++events_executed_;
  DestroyCallable(slot);
  FreeSlot(index);
}

bool EventLoop::Step() {
  KSIM_CHECK_MSG(!running_, "Step called from inside an event callback");
  if (!DropCancelledTop()) return false;
  RunTop();
  return true;
}
uint64_t EventLoop::RunUntil(TimeUs time_us) {
  KSIM_CHECK_MSG(time_us >= now_us_, "RunUntil a time in the past");
  KSIM_CHECK_MSG(!running_, "RunUntil called from inside an event callback");
  uint64_t ran = 0;
  while (DropCancelledTop() && heap_.front().time_us <= time_us) {
    RunTop();
    ++ran;
  }
  now_us_ = time_us;
  return ran;
}

bool EventLoop::RunUntilIdle(uint64_t max_events) {
  KSIM_CHECK_MSG(!running_, "RunUntilIdle called from inside an event callback");
  for (uint64_t ran = 0; ran < max_events; ++ran) {
    if (!DropCancelledTop()) break;
    RunTop();
  }
  return pending_ == 0;
}

std::optional<EventLoop::NextEvent> EventLoop::PeekNext() {
  if (!DropCancelledTop()) return std::nullopt;
  const Entry& top = heap_.front();
  return NextEvent{top.time_us, SlotAt(top.slot()).label};
}

}  // namespace ksim::sim
