// RecordAccumulator (record_accumulator.h), following Kafka's RecordAccumulator.ready/drain and
// the idempotent parts of TransactionManager (1.1/2.0).
#include "core/clients/producer/record_accumulator.h"

#include <algorithm>
#include <limits>

#include "core/base/check.h"

namespace ksim {
namespace {

// Kafka's DefaultRecordBatch.incrementSequence: sequences wrap at INT32_MAX back to 0.
Sequence IncrementSequence(Sequence sequence, int32_t delta) {
  const int64_t next = static_cast<int64_t>(sequence.value()) + delta;
  return Sequence(static_cast<int32_t>(next % (int64_t{std::numeric_limits<int32_t>::max()} + 1)));
}

}  // namespace

int64_t EstimateRecordSize(const RecordInput& record) {
  int64_t size = kMaxRecordOverhead;
  if (record.key) size += static_cast<int64_t>(record.key->size());
  if (record.value) size += static_cast<int64_t>(record.value->size());
  for (const RecordHeader& header : record.headers) {
    size += static_cast<int64_t>(header.key.size()) + 10;
    if (header.value) size += static_cast<int64_t>(header.value->size());
  }
  return size;
}

RecordAccumulator::RecordAccumulator(AccumulatorConfig config) : config_(config) {
  KSIM_CHECK(config_.batch_size >= 0);
  KSIM_CHECK(config_.max_in_flight_requests_per_connection >= 1);
}

RecordAccumulator::Partitions::iterator RecordAccumulator::FindEntry(const TopicPartition& tp) {
  auto found = lookup_.find(tp);
  return found == lookup_.end() ? partitions_.end() : found->second;
}

RecordAccumulator::Partitions::const_iterator RecordAccumulator::FindEntry(
    const TopicPartition& tp) const {
  auto found = lookup_.find(tp);
  return found == lookup_.end() ? partitions_.end() : Partitions::const_iterator(found->second);
}

std::pair<RecordAccumulator::Partitions::iterator, bool> RecordAccumulator::EmplaceEntry(
    const TopicPartition& tp) {
  auto found = lookup_.find(tp);
  if (found != lookup_.end()) return {found->second, false};
  auto added = partitions_.try_emplace(tp).first;
  lookup_.emplace(tp, added);
  return {added, true};
}

RecordAccumulator::PartitionState& RecordAccumulator::StateOf(const TopicPartition& tp) {
  const auto entry = FindEntry(tp);
  KSIM_CHECK(entry != partitions_.end());
  return entry->second;
}

RecordAccumulator::AppendResult RecordAccumulator::Append(const TopicPartition& tp,
                                                          RecordInput record, uint64_t record_id,
                                                          int64_t now_ms) {
  KSIM_CHECK_MSG(!closed_, "append after close");
  auto [entry, added] = EmplaceEntry(tp);
  PartitionState& state = entry->second;
  if (state.queue.empty()) Enqueued(entry->first, state);
  const int64_t record_size = EstimateRecordSize(record);
  AppendResult result;
  if (!state.queue.empty()) {
    ProducerBatch& last = *batches_.at(state.queue.back());
    // Kafka's MemoryRecordsBuilder.hasRoomFor: the first record always fits; a batch that was
    // sent (a retry) is closed for appends.
    const bool open = last.attempts == 0 && !last.in_flight;
    if (open && last.size_bytes + record_size <= config_.batch_size) {
      last.last_append_ms = now_ms;
      last.records.push_back(std::move(record));
      last.record_ids.push_back(record_id);
      last.size_bytes += record_size;
      result.batch = last.id;
      result.batch_full = state.queue.size() > 1 || last.size_bytes >= config_.batch_size;
      RefreshHeadExpiry(entry->first, state);  // the head may be the batch appended to
      return result;
    }
  }
  auto batch = std::make_unique<ProducerBatch>();
  batch->id = next_batch_id_++;
  batch->tp = tp;
  batch->created_ms = now_ms;
  batch->last_attempt_ms = now_ms;
  batch->last_append_ms = now_ms;
  batch->size_bytes = static_cast<int64_t>(kBatchHeaderSize) + record_size;
  batch->records.push_back(std::move(record));
  batch->record_ids.push_back(record_id);
  result.batch = batch->id;
  result.new_batch = true;
  result.batch_full = state.queue.size() >= 1 || batch->size_bytes >= config_.batch_size;
  state.queue.push_back(batch->id);
  batches_.emplace(batch->id, std::move(batch));
  RefreshHeadExpiry(entry->first, state);  // a new head, or the head has a batch behind it now
  return result;
}

// Kafka's ready(): backingOff = attempts > 0 && waited < retry.backoff.ms; sendable = full ||
// waited >= (backingOff ? backoff : linger) || closed || flushing.
bool RecordAccumulator::Sendable(const ProducerBatch& batch, const PartitionState& state,
                                 int64_t now_ms, int64_t* wait_ms) const {
  const int64_t waited_ms = now_ms - batch.last_attempt_ms;
  const bool backing_off = batch.retry && waited_ms < config_.retry_backoff_ms;
  const int64_t time_to_wait_ms = batch.retry ? config_.retry_backoff_ms : config_.linger_ms;
  const bool full = state.queue.size() > 1 || batch.size_bytes >= config_.batch_size;
  const bool expired = waited_ms >= time_to_wait_ms;
  const bool sendable = full || expired || closed_ || flushes_in_progress_ > 0;
  if (sendable && !backing_off) return true;
  *wait_ms = std::max<int64_t>(0, time_to_wait_ms - waited_ms);
  return false;
}

void RecordAccumulator::Enqueued(const TopicPartition& tp, PartitionState& state) {
  queued_.emplace(&tp, &state);
  state.grouped = false;
  ungrouped_.emplace_back(&tp, &state);
}

void RecordAccumulator::Dequeued(const TopicPartition& tp, PartitionState& state) {
  queued_.erase(&tp);
  if (state.grouped) {
    // An emptied group stays (until the next regrouping): a Drain may be walking it.
    PartitionGroup& group = state.leader ? by_leader_[*state.leader] : no_leader_;
    group.erase(&tp);
  }
  state.grouped = false;
}

void RecordAccumulator::Group(const LeaderFn& leader_of, std::optional<uint64_t> generation) {
  auto place = [&](const TopicPartition* tp, PartitionState* state) {
    state->leader = leader_of(*tp);
    state->grouped = true;
    (state->leader ? by_leader_[*state->leader] : no_leader_).emplace(tp, state);
  };
  if (!generation || generation != grouped_generation_) {
    by_leader_.clear();
    no_leader_.clear();
    ungrouped_.clear();
    for (const auto& [tp, state] : queued_) place(tp, state);
    grouped_generation_ = generation;
    return;
  }
  for (const auto& [tp, state] : ungrouped_) {
    if (!state->grouped && !state->queue.empty()) place(tp, state);
  }
  ungrouped_.clear();
}

RecordAccumulator::ReadyResult RecordAccumulator::Ready(const LeaderFn& leader_of,
                                                        uint64_t leaders_generation,
                                                        int64_t now_ms) {
  Group(leader_of, leaders_generation);
  return ReadyGrouped(now_ms);
}

RecordAccumulator::ReadyResult RecordAccumulator::Ready(const LeaderFn& leader_of, int64_t now_ms) {
  Group(leader_of, std::nullopt);
  return ReadyGrouped(now_ms);
}

// Kafka's ready() walks every queued partition in order and skips those whose leader is already
// ready: per leader, that visits its partitions up to the first sendable one, which is the walk
// here, leader by leader (the same nodes, the same delay, the same unknown topics).
RecordAccumulator::ReadyResult RecordAccumulator::ReadyGrouped(int64_t now_ms) const {
  ReadyResult result;
  for (const auto& [tp, state] : no_leader_) result.unknown_leader_topics.insert(tp->topic);
  for (const auto& [leader, group] : by_leader_) {
    for (const auto& [tp, state] : group) {
      const ProducerBatch& first = *batches_.at(state->queue.front());
      int64_t wait_ms = 0;
      if (Sendable(first, *state, now_ms, &wait_ms)) {
        result.ready_nodes.insert(leader);
        break;
      }
      result.next_ready_check_delay_ms = std::min(result.next_ready_check_delay_ms, wait_ms);
    }
  }
  return result;
}

// Kafka 2.0's RecordAccumulator.drain checks before taking a partition's first batch, plus the
// muting of guaranteeMessageOrder.
bool RecordAccumulator::ShouldStopDrain(const ProducerBatch& first,
                                        const PartitionState& state) const {
  if (!config_.idempotent) {
    return config_.max_in_flight_requests_per_connection == 1 && !state.in_flight.empty();
  }
  if (static_cast<int32_t>(state.in_flight.size()) >= kMaxInFlightBatchesPerPartitionIdempotent) {
    return true;
  }
  // No new batch while an expired one may or may not have been written.
  if (!first.has_sequence() && state.unresolved) return true;
  // A batch being retried goes only when it is the first sequenced batch of its partition: the
  // later ones still in flight come back OUT_OF_ORDER_SEQUENCE_NUMBER and are retried after it.
  if (first.has_sequence() && !state.sequenced.empty() &&
      state.sequenced.begin()->first != first.base_sequence) {
    return true;
  }
  return false;
}

std::vector<ProducerBatch*> RecordAccumulator::Drain(const LeaderFn& leader_of,
                                                     uint64_t leaders_generation, BrokerId node,
                                                     int64_t now_ms) {
  Group(leader_of, leaders_generation);
  return DrainGrouped(node, now_ms);
}

std::vector<ProducerBatch*> RecordAccumulator::Drain(const LeaderFn& leader_of, BrokerId node,
                                                     int64_t now_ms) {
  Group(leader_of, std::nullopt);
  return DrainGrouped(node, now_ms);
}

std::vector<ProducerBatch*> RecordAccumulator::DrainGrouped(BrokerId node, int64_t now_ms) {
  KSIM_CHECK_MSG(!config_.idempotent || producer_id_ != kNoProducerId,
                 "an idempotent drain needs a producer id");
  std::vector<ProducerBatch*> drained;
  auto group = by_leader_.find(node);
  if (group == by_leader_.end()) return drained;
  int64_t size = 0;
  for (auto next = group->second.begin(); next != group->second.end();) {
    const TopicPartition& tp = *next->first;
    PartitionState& state = *next->second;
    ++next;  // the partition leaves the group when this drains its last batch
    ProducerBatch& first = *batches_.at(state.queue.front());
    int64_t wait_ms = 0;
    if (!Sendable(first, state, now_ms, &wait_ms)) continue;
    if (ShouldStopDrain(first, state)) continue;
    if (!drained.empty() && size + first.size_bytes > config_.max_request_size) break;
    if (config_.idempotent && !first.has_sequence()) {
      // Only a batch never sent takes numbers: one that was sent keeps its id and sequence, or a
      // retry of it could be written a second time under numbers the broker does not know.
      first.producer_id = producer_id_;
      first.producer_epoch = producer_epoch_;
      first.base_sequence = state.next_sequence;
      state.next_sequence = IncrementSequence(state.next_sequence, first.record_count());
      state.sequenced[first.base_sequence] = first.id;
    }
    state.queue.pop_front();
    first.in_flight = true;
    first.retry = false;
    // Kafka's drain closes the batch (ProducerBatch.close: `reopened = false`): a sequence reset
    // tells only about the answer to the attempt it was rewritten under, not later ones.
    first.sequence_reset = false;
    ++first.attempts;
    first.last_attempt_ms = now_ms;
    state.in_flight.insert(first.id);
    RefreshHeadExpiry(tp, state);
    if (state.queue.empty()) Dequeued(tp, state);
    size += first.size_bytes;
    drained.push_back(&first);
  }
  return drained;
}

void RecordAccumulator::Reenqueue(BatchId id, int64_t now_ms) {
  ProducerBatch& batch = *batches_.at(id);
  KSIM_CHECK_MSG(batch.in_flight, "only an in-flight batch is re-enqueued");
  const auto entry = FindEntry(batch.tp);  // entries are never erased: it holds through Forget
  KSIM_CHECK(entry != partitions_.end());
  const TopicPartition& tp = entry->first;
  PartitionState& state = entry->second;
  Forget(batch);  // it stays sequenced
  batch.retry = true;
  batch.last_attempt_ms = now_ms;
  batch.last_append_ms = now_ms;  // Kafka's reenqueue sets lastAppendTime too
  // Kafka's insertInSequenceOrder: retries stay ahead of new batches, ordered by sequence.
  auto it = state.queue.begin();
  while (it != state.queue.end()) {
    const ProducerBatch& queued = *batches_.at(*it);
    if (!queued.retry || !batch.has_sequence() || !queued.has_sequence() ||
        queued.base_sequence > batch.base_sequence) {
      break;
    }
    ++it;
  }
  if (state.queue.empty()) Enqueued(tp, state);
  state.queue.insert(it, id);
  RefreshHeadExpiry(tp, state);
}

void RecordAccumulator::RefreshHeadExpiry(const TopicPartition& tp, PartitionState& state) {
  if (config_.expiry != ExpiryForm::kRequestTimeout) return;
  std::optional<int64_t> expiry_ms;
  if (!state.queue.empty() && !ExpiryMuted(state)) {
    expiry_ms = RequestTimeoutExpiryMs(*batches_.at(state.queue.front()), state, 0);
  }
  if (expiry_ms == state.head_expiry_ms) return;
  if (state.head_expiry_ms) expiry_heads_.erase({*state.head_expiry_ms, &tp});
  if (expiry_ms) expiry_heads_.insert({*expiry_ms, &tp});
  state.head_expiry_ms = expiry_ms;
}

void RecordAccumulator::Forget(ProducerBatch& batch) {
  auto entry = FindEntry(batch.tp);
  PartitionState& state = entry->second;
  if (batch.in_flight) {
    state.in_flight.erase(batch.id);
    batch.in_flight = false;
  } else {
    std::erase(state.queue, batch.id);
    if (state.queue.empty()) Dequeued(entry->first, state);
  }
  RefreshHeadExpiry(entry->first, state);
}

void RecordAccumulator::Unsequence(const ProducerBatch& batch) {
  PartitionState& state = StateOf(batch.tp);
  auto seq = state.sequenced.find(batch.base_sequence);
  if (seq != state.sequenced.end() && seq->second == batch.id) state.sequenced.erase(seq);
}

std::unique_ptr<ProducerBatch> RecordAccumulator::Complete(BatchId id) {
  auto it = batches_.find(id);
  KSIM_CHECK_MSG(it != batches_.end(), "completing an unknown batch");
  Forget(*it->second);
  Unsequence(*it->second);
  std::unique_ptr<ProducerBatch> batch = std::move(it->second);
  batches_.erase(it);
  return batch;
}

bool RecordAccumulator::ExpiryMuted(const PartitionState& state) const {
  // Kafka's `muted` set: only populated with max.in.flight.requests.per.connection=1
  // (guaranteeMessageOrder), so that a later batch does not expire before an earlier one in flight.
  return config_.max_in_flight_requests_per_connection == 1 && !state.in_flight.empty();
}

int64_t RecordAccumulator::RequestTimeoutExpiryMs(const ProducerBatch& batch,
                                                  const PartitionState& state, size_t index) const {
  // Kafka: expired when request.timeout.ms < elapsed, so 1 ms after the limit is reached.
  const int64_t limit_ms = config_.request_timeout_ms + 1;
  if (batch.retry) return batch.last_attempt_ms + config_.retry_backoff_ms + limit_ms;
  int64_t at_ms = batch.created_ms + config_.linger_ms + limit_ms;
  const bool full = index + 1 < state.queue.size() || batch.size_bytes >= config_.batch_size;
  if (full) at_ms = std::min(at_ms, batch.last_append_ms + limit_ms);
  return at_ms;
}

std::vector<std::unique_ptr<ProducerBatch>> RecordAccumulator::Expire(int64_t now_ms) {
  std::vector<BatchId> expired;
  if (config_.expiry == ExpiryForm::kNone) return {};
  if (config_.expiry == ExpiryForm::kRequestTimeout) {
    // The partitions whose head is due, in partition order; none other has a batch due.
    std::vector<const TopicPartition*> due;
    for (auto it = expiry_heads_.begin(); it != expiry_heads_.end() && it->first <= now_ms; ++it) {
      due.push_back(it->second);
    }
    std::sort(due.begin(), due.end(),
              [](const TopicPartition* a, const TopicPartition* b) { return *a < *b; });
    for (const TopicPartition* tp : due) {
      const PartitionState& state = StateOf(*tp);
      for (size_t i = 0; i < state.queue.size(); ++i) {
        const ProducerBatch& batch = *batches_.at(state.queue[i]);
        if (now_ms < RequestTimeoutExpiryMs(batch, state, i)) break;  // the first that stays
        expired.push_back(batch.id);
      }
    }
    std::vector<std::unique_ptr<ProducerBatch>> out;
    for (BatchId id : expired) out.push_back(Complete(id));  // partitions in order, heads first
    return out;
  }
  // batches_ is in creation order (ids and creation times rise together): the first that stays
  // ends the walk.
  for (const auto& [id, batch] : batches_) {
    if (now_ms - batch->created_ms < config_.delivery_timeout_ms) break;
    // An attempt still in flight may yet be appended: its fate is unknown.
    if (batch->in_flight) batch->maybe_written = true;
    expired.push_back(id);
  }
  // batches_ is ordered by id = creation order.
  std::vector<std::unique_ptr<ProducerBatch>> out;
  for (BatchId id : expired) out.push_back(Complete(id));
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a->tp < b->tp; });
  return out;
}

std::vector<std::unique_ptr<ProducerBatch>> RecordAccumulator::AbortQueued() {
  std::vector<BatchId> queued;
  for (const auto& [tp, state] : queued_) {
    queued.insert(queued.end(), state->queue.begin(), state->queue.end());
  }
  std::vector<std::unique_ptr<ProducerBatch>> out;
  for (BatchId id : queued) out.push_back(Complete(id));
  return out;
}

int64_t RecordAccumulator::NextExpiryDelayMs(int64_t now_ms) const {
  int64_t delay = INT64_MAX;
  if (config_.expiry == ExpiryForm::kNone) return delay;
  if (config_.expiry == ExpiryForm::kRequestTimeout) {
    // Only a queue's head can be next: the walk stops at it. Appends, answers and re-enqueues
    // wake the producer, which asks again.
    if (expiry_heads_.empty()) return delay;
    return std::max<int64_t>(0, expiry_heads_.begin()->first - now_ms);
  }
  // The oldest batch expires first (batches_ is in creation order).
  if (batches_.empty()) return delay;
  return std::max<int64_t>(
      0, batches_.begin()->second->created_ms + config_.delivery_timeout_ms - now_ms);
}

void RecordAccumulator::SetProducerIdAndEpoch(ProducerId id, ProducerEpoch epoch) {
  if (id == producer_id_ && epoch == producer_epoch_) return;
  ResetProducerId();
  producer_id_ = id;
  producer_epoch_ = epoch;
}

void RecordAccumulator::ResetProducerId() {
  producer_id_ = kNoProducerId;
  producer_epoch_ = kNoProducerEpoch;
  for (auto& [tp, state] : partitions_) {
    state.next_sequence = Sequence(0);
    state.last_acked_sequence = Sequence(-1);
    state.last_acked_offset = kUndefinedOffset;
    state.sequenced.clear();
    state.unresolved = false;
  }
}

bool RecordAccumulator::HasCurrentProducerId(const ProducerBatch& batch) const {
  return producer_id_ != kNoProducerId && batch.producer_id == producer_id_ &&
         batch.producer_epoch == producer_epoch_;
}

Sequence RecordAccumulator::NextSequence(const TopicPartition& tp) const {
  auto it = FindEntry(tp);
  return it == partitions_.end() ? Sequence(0) : it->second.next_sequence;
}

void RecordAccumulator::OnAcked(const ProducerBatch& batch, Offset base_offset) {
  if (!batch.has_sequence() || !HasCurrentProducerId(batch)) return;
  PartitionState& state = EmplaceEntry(batch.tp).first->second;
  const Sequence last = IncrementSequence(batch.base_sequence, batch.record_count() - 1);
  state.last_acked_sequence = std::max(state.last_acked_sequence, last);
  if (base_offset != kUndefinedOffset) {
    state.last_acked_offset =
        std::max(state.last_acked_offset, base_offset + (batch.record_count() - 1));
  }
}

Sequence RecordAccumulator::LastAckedSequence(const TopicPartition& tp) const {
  auto it = FindEntry(tp);
  return it == partitions_.end() ? Sequence(-1) : it->second.last_acked_sequence;
}

Offset RecordAccumulator::LastAckedOffset(const TopicPartition& tp) const {
  auto it = FindEntry(tp);
  return it == partitions_.end() ? kUndefinedOffset : it->second.last_acked_offset;
}

bool RecordAccumulator::IsNextSequence(const TopicPartition& tp, Sequence sequence) const {
  return sequence.value() - LastAckedSequence(tp).value() == 1;
}

void RecordAccumulator::AdjustSequencesAfterFailedBatch(const ProducerBatch& batch) {
  // Kafka 2.0 adjusts whatever partition state exists, even after the id changed; a batch of an
  // older id must not move the sequences of the new one.
  if (!batch.has_sequence() || !HasCurrentProducerId(batch)) return;
  auto found = FindEntry(batch.tp);
  if (found == partitions_.end()) return;
  PartitionState& state = found->second;
  const int32_t count = batch.record_count();
  KSIM_CHECK_MSG(state.next_sequence.value() >= count, "a sequence would become negative");
  state.next_sequence = Sequence(state.next_sequence.value() - count);
  std::map<Sequence, BatchId> moved;
  for (const auto& [sequence, id] : state.sequenced) {
    ProducerBatch& later = *batches_.at(id);
    if (sequence < batch.base_sequence) {
      moved.emplace(sequence, id);
      continue;
    }
    KSIM_CHECK_MSG(sequence.value() >= count, "a batch's sequence would become negative");
    later.base_sequence = Sequence(sequence.value() - count);
    later.sequence_reset = true;
    moved.emplace(later.base_sequence, id);
  }
  state.sequenced = std::move(moved);
}

void RecordAccumulator::StartSequencesAtBeginning(const TopicPartition& tp) {
  PartitionState& state = EmplaceEntry(tp).first->second;
  std::map<Sequence, BatchId> renumbered;
  Sequence sequence(0);
  for (const auto& [old_sequence, id] : state.sequenced) {
    ProducerBatch& batch = *batches_.at(id);
    batch.base_sequence = sequence;
    batch.sequence_reset = true;
    renumbered.emplace(sequence, id);
    sequence = IncrementSequence(sequence, batch.record_count());
  }
  state.sequenced = std::move(renumbered);
  state.next_sequence = sequence;
  state.last_acked_sequence = Sequence(-1);
}

void RecordAccumulator::MarkSequenceUnresolved(const TopicPartition& tp) {
  EmplaceEntry(tp).first->second.unresolved = true;
  maybe_unresolved_ = true;
}

bool RecordAccumulator::HasUnresolvedSequence(const TopicPartition& tp) const {
  auto it = FindEntry(tp);
  return it != partitions_.end() && it->second.unresolved;
}

bool RecordAccumulator::ShouldResetProducerIdAfterResolvingSequences() {
  if (!maybe_unresolved_) return false;
  bool unresolved = false;
  for (auto& [tp, state] : partitions_) {
    if (!state.unresolved) continue;
    if (!state.sequenced.empty()) {
      unresolved = true;
      continue;
    }
    if (!IsNextSequence(tp, state.next_sequence)) return true;
    state.unresolved = false;  // the expired batch was written: later ones were acknowledged
  }
  maybe_unresolved_ = unresolved;
  return false;
}

const ProducerBatch* RecordAccumulator::OldestBatch() const {
  // Batch ids grow with creation.
  return batches_.empty() ? nullptr : batches_.begin()->second.get();
}

ProducerBatch* RecordAccumulator::Find(BatchId id) {
  auto it = batches_.find(id);
  return it == batches_.end() ? nullptr : it->second.get();
}

bool RecordAccumulator::HasUndrained() const { return !queued_.empty(); }

size_t RecordAccumulator::in_flight_count() const {
  size_t count = 0;
  for (const auto& [tp, state] : partitions_) count += state.in_flight.size();
  return count;
}

size_t RecordAccumulator::InFlightCount(const TopicPartition& tp) const {
  auto it = FindEntry(tp);
  return it == partitions_.end() ? 0 : it->second.in_flight.size();
}

int64_t RecordAccumulator::record_count() const {
  int64_t count = 0;
  for (const auto& [id, batch] : batches_) count += batch->record_count();
  return count;
}

const std::deque<BatchId>& RecordAccumulator::Queue(const TopicPartition& tp) const {
  static const std::deque<BatchId> kEmpty;
  auto it = FindEntry(tp);
  return it == partitions_.end() ? kEmpty : it->second.queue;
}

}  // namespace ksim
