#include "sim/event_loop.h"

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
  for (uint32_t index = 0; index < slots_created_; ++index) {
    Slot& slot = SlotAt(index);
    if (slot.state == SlotState::kPending) DestroyCallable(slot);
  }
}

uint32_t EventLoop::AllocateSlot() {
  if (!free_slots_.empty()) {
    const uint32_t index = free_slots_.back();
    free_slots_.pop_back();
    KSIM_CHECK(SlotAt(index).state == SlotState::kFree);
    return index;
  }
  KSIM_CHECK_MSG(slots_created_ < UINT32_MAX - 1, "too many simultaneous events");
  if ((slots_created_ & (kChunkSlots - 1)) == 0) {
    chunks_.push_back(std::make_unique<Slot[]>(kChunkSlots));
  }
  return slots_created_++;
}

void EventLoop::FreeSlot(uint32_t index) {
  Slot& slot = SlotAt(index);
  KSIM_CHECK(slot.state != SlotState::kFree);
  KSIM_CHECK(slot.invoke == nullptr);
  slot.state = SlotState::kFree;
  slot.label = nullptr;
  // A slot whose generation would wrap is retired, so that no TimerId is ever reused.
  if (slot.generation == UINT32_MAX) return;
  ++slot.generation;
  free_slots_.push_back(index);
}

void EventLoop::DestroyCallable(Slot& slot) {
  KSIM_CHECK(slot.invoke != nullptr);
  if (slot.destroy != nullptr) slot.destroy(slot.storage);
  slot.invoke = nullptr;
  slot.destroy = nullptr;
}

TimerId EventLoop::Push(TimeUs time_us, uint32_t index, const char* label) {
  Slot& slot = SlotAt(index);
  KSIM_CHECK(slot.state == SlotState::kFree);
  slot.state = SlotState::kPending;
  slot.label = label;
  heap_.push_back(Entry{time_us, next_sequence_++, index});
  std::push_heap(heap_.begin(), heap_.end(), RunsLater{});
  ++pending_;
  return MakeId(slot.generation, index);
}

void EventLoop::Cancel(TimerId id) {
  const uint32_t index = IdIndex(id);
  KSIM_CHECK_MSG(id != 0 && index < slots_created_, "cancelling an id this loop never issued");
  Slot& slot = SlotAt(index);
  if (slot.generation != IdGeneration(id) || slot.state != SlotState::kPending) return;
  DestroyCallable(slot);
  slot.state = SlotState::kCancelled;
  KSIM_CHECK(pending_ > 0);
  --pending_;
  ++cancelled_in_heap_;
  MaybeCompact();
}

bool EventLoop::IsPending(TimerId id) const {
  const uint32_t index = IdIndex(id);
  if (id == 0 || index >= slots_created_) return false;
  const Slot& slot = SlotAt(index);
  return slot.generation == IdGeneration(id) && slot.state == SlotState::kPending;
}

void EventLoop::MaybeCompact() {
  if (cancelled_in_heap_ < kCompactMinCancelled || cancelled_in_heap_ * 2 <= heap_.size()) return;
  auto cancelled = [this](const Entry& entry) {
    return SlotAt(entry.slot).state == SlotState::kCancelled;
  };
  for (const Entry& entry : heap_) {
    if (cancelled(entry)) FreeSlot(entry.slot);
  }
  // FreeSlot marked them kFree; drop those (a running event's slot is not in the heap).
  std::erase_if(
      heap_, [this](const Entry& entry) { return SlotAt(entry.slot).state == SlotState::kFree; });
  std::make_heap(heap_.begin(), heap_.end(), RunsLater{});
  cancelled_in_heap_ = 0;
  KSIM_CHECK(heap_.size() == pending_);
}

bool EventLoop::DropCancelledTop() {
  while (!heap_.empty()) {
    const uint32_t index = heap_.front().slot;
    if (SlotAt(index).state != SlotState::kCancelled) return true;
    std::pop_heap(heap_.begin(), heap_.end(), RunsLater{});
    heap_.pop_back();
    FreeSlot(index);
    KSIM_CHECK(cancelled_in_heap_ > 0);
    --cancelled_in_heap_;
  }
  return false;
}

void EventLoop::RunTop() {
  KSIM_CHECK_MSG(!running_, "Step/RunUntil called from inside an event callback");
  const Entry top = heap_.front();
  std::pop_heap(heap_.begin(), heap_.end(), RunsLater{});
  heap_.pop_back();
  Slot& slot = SlotAt(top.slot);  // chunks never move: valid while the callback schedules more
  KSIM_CHECK(slot.state == SlotState::kPending);
  KSIM_CHECK(top.time_us >= now_us_);
  now_us_ = top.time_us;
  slot.state = SlotState::kRunning;
  --pending_;
  running_ = true;
  current_label_ = slot.label;
  slot.invoke(slot.storage);
  running_ = false;
  current_label_ = nullptr;
  ++events_executed_;
  DestroyCallable(slot);
  FreeSlot(top.slot);
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
  return NextEvent{top.time_us, SlotAt(top.slot).label};
}

}  // namespace ksim::sim
