#include "sim/check/history.h"

#include <cstring>
#include <utility>

#include "core/base/check.h"
#include "core/base/events.h"
#include "core/base/short_text.h"
#include "core/base/trace_names.h"

namespace ksim::sim {

std::string_view OpTypeName(OpType type) {
  switch (type) {
    case OpType::kInvoke:
      return "invoke";
    case OpType::kOk:
      return "ok";
    case OpType::kFail:
      return "fail";
    case OpType::kInfo:
      return "info";
  }
  return "unknown";
}

std::string_view OpFunctionName(OpFunction f) {
  switch (f) {
    case OpFunction::kSend:
      return "send";
    case OpFunction::kPoll:
      return "poll";
    case OpFunction::kDeliver:
      return "deliver";
    case OpFunction::kCommit:
      return "commit";
  }
  return "unknown";
}

namespace {

EventValue Key(const std::optional<std::string_view>& key) {
  if (key) return EventValue(*key);
  return EventValue();
}

// Keep's chunk: room for some thousand record ids and values at a time.
constexpr size_t kTextChunkBytes = size_t{64} << 10;

}  // namespace

History::History(World& world) : world_(world) {}

std::string_view History::Keep(std::string_view text) {
  if (text.empty()) return {};
  if (text.size() > kTextChunkBytes) {
    // A chunk of its own, placed before the one being filled (which goes on being filled).
    const auto before_last = text_chunks_.empty() ? text_chunks_.end() : text_chunks_.end() - 1;
    char* own =
        text_chunks_.insert(before_last, std::make_unique_for_overwrite<char[]>(text.size()))
            ->get();
    std::memcpy(own, text.data(), text.size());
    return {own, text.size()};
  }
  if (text.size() > text_room_) {
    text_chunks_.push_back(std::make_unique_for_overwrite<char[]>(kTextChunkBytes));
    text_room_ = kTextChunkBytes;
  }
  char* at = text_chunks_.back().get() + (kTextChunkBytes - text_room_);
  std::memcpy(at, text.data(), text.size());
  text_room_ -= text.size();
  return {at, text.size()};
}

std::string_view History::KeepName(std::string_view name) {
  // Nearly every op names the client, topic and group of one of the last few.
  for (std::string_view known : recent_names_) {
    if (SameText(known, name)) return known;
  }
  auto it = names_.find(name);
  if (it == names_.end()) it = names_.emplace(name).first;
  recent_names_[next_recent_name_] = *it;
  next_recent_name_ = (next_recent_name_ + 1) % recent_names_.size();
  return *it;
}

std::string History::NewRecordId(std::string_view client) {
  auto it = next_id_.find(client);
  if (it == next_id_.end()) it = next_id_.emplace(std::string(client), 0).first;
  return std::string(client) + "-" + std::to_string(it->second++);
}

HistoryOp& History::Append(std::string_view client, uint64_t incarnation, OpType type,
                           OpFunction f) {
  HistoryOp& op = ops_.emplace_back();
  op.index = ops_.size() - 1;
  op.t_us = world_.Now();
  op.process = KeepName(client);
  op.incarnation = incarnation;
  op.type = type;
  op.f = f;
  return op;
}

uint64_t History::SendInvoke(std::string_view client, uint64_t incarnation, std::string record_id,
                             std::string topic, std::optional<std::string> key, std::string value) {
  KSIM_CHECK(!record_id.empty());
  HistoryOp& op = Append(client, incarnation, OpType::kInvoke, OpFunction::kSend);
  op.record_id = Keep(record_id);
  op.topic = KeepName(topic);
  if (key) op.key = Keep(*key);
  // A generated record's value is its id: the same bytes.
  op.value = value == record_id ? op.record_id : Keep(value);
  id_for_value_.try_emplace(op.value, op.record_id);  // keeps the first id sent with the value
  ++open_sends_;
  world_.Trace(op.process, ev::kSend,
               {{field::kRecordId, op.record_id},
                {field::kTopic, op.topic},
                {field::kKey, Key(op.key)},
                {field::kValue, op.value}});
  return op.index;
}

HistoryOp& History::Complete(uint64_t invoke, OpType type, const TopicPartition& tp) {
  KSIM_CHECK_MSG(invoke < ops_.size() && ops_[invoke].f == OpFunction::kSend &&
                     ops_[invoke].type == OpType::kInvoke &&
                     ops_[invoke].completion_index == kNoOpIndex,
                 "not an open send invoke");
  --open_sends_;
  HistoryOp& invoked = ops_[invoke];
  HistoryOp& op = Append(invoked.process, invoked.incarnation, type, OpFunction::kSend);
  op.invoke_index = invoke;
  op.record_id = invoked.record_id;
  op.topic = tp.topic.empty() ? invoked.topic : KeepName(tp.topic);
  if (!tp.topic.empty()) op.partition = tp.partition;
  op.key = invoked.key;
  op.value = invoked.value;
  invoked.completion_index = op.index;
  return op;
}

void History::SendOk(uint64_t invoke, const TopicPartition& tp, Offset offset) {
  KSIM_CHECK(!tp.topic.empty());
  HistoryOp& op = Complete(invoke, OpType::kOk, tp);
  op.offset = offset;
  TraceSendCompletion(op);
}

void History::SendFail(uint64_t invoke, const TopicPartition& tp, Errc error) {
  KSIM_CHECK(error != Errc::kNone);
  HistoryOp& op = Complete(invoke, OpType::kFail, tp);
  op.error = error;
  TraceSendCompletion(op);
}

void History::SendInfo(uint64_t invoke, const TopicPartition& tp, Errc error, bool crashed) {
  KSIM_CHECK_MSG(crashed == (error == Errc::kNone), "info: an error, or a crash without one");
  HistoryOp& op = Complete(invoke, OpType::kInfo, tp);
  op.error = error;
  op.crashed = crashed;
  TraceSendCompletion(op);
}

void History::TraceSendCompletion(const HistoryOp& op) {
  EventFields fields{{field::kRecordId, op.record_id}, {field::kTopic, op.topic}};
  fields.Add(field::kPartition,
             op.partition.value() >= 0 ? EventValue(op.partition.value()) : EventValue());
  if (op.type == OpType::kOk) fields.Add(field::kOffset, op.offset.value());
  fields.Add(field::kKey, Key(op.key));
  fields.Add(field::kValue, op.value);
  if (op.type == OpType::kOk) {
    world_.Trace(op.process, ev::kAck, fields);
    return;
  }
  fields.Add(field::kError, op.crashed ? EventValue() : EventValue(ErrcName(op.error)));
  fields.Add(field::kOutcome, op.type == OpType::kFail ? "fail" : "unknown");
  if (op.crashed) fields.Add(field::kCrashed, true);
  world_.Trace(op.process, ev::kError, fields);
}

void History::Poll(std::string_view client, uint64_t incarnation, std::string_view group,
                   int32_t count) {
  KSIM_CHECK(count >= 0);
  HistoryOp& op = Append(client, incarnation, OpType::kOk, OpFunction::kPoll);
  op.group = KeepName(group);
  op.count = count;
  world_.Trace(op.process, ev::kPoll, {{field::kGroup, op.group}, {field::kCount, count}});
}

void History::Deliver(std::string_view client, uint64_t incarnation, std::string_view group,
                      const TopicPartition& tp, Offset offset,
                      const std::optional<std::string>& key, const std::string& value) {
  HistoryOp& op = Append(client, incarnation, OpType::kOk, OpFunction::kDeliver);
  op.group = KeepName(group);
  op.topic = KeepName(tp.topic);
  op.partition = tp.partition;
  op.offset = offset;
  if (key) op.key = Keep(*key);
  // A value sent before is viewed where the history keeps it already.
  auto sent = id_for_value_.find(value);
  if (sent != id_for_value_.end()) {
    op.value = sent->first;
    op.record_id = sent->second;
  } else {
    op.value = Keep(value);
  }
  world_.Trace(op.process, ev::kDeliver,
               {{field::kGroup, op.group},
                {field::kRecordId, op.record_id.empty() ? EventValue() : EventValue(op.record_id)},
                {field::kTopic, op.topic},
                {field::kPartition, op.partition.value()},
                {field::kOffset, op.offset.value()},
                {field::kKey, Key(op.key)},
                {field::kValue, op.value}});
}

void History::Commit(std::string_view client, uint64_t incarnation, std::string_view group,
                     const TopicPartition& tp, Offset offset, Errc error) {
  HistoryOp& op = Append(client, incarnation, error == Errc::kNone ? OpType::kOk : OpType::kFail,
                         OpFunction::kCommit);
  op.group = KeepName(group);
  op.topic = KeepName(tp.topic);
  op.partition = tp.partition;
  op.offset = offset;
  op.error = error;
  world_.Trace(
      op.process, ev::kCommit,
      {{field::kGroup, op.group},
       {field::kTopic, op.topic},
       {field::kPartition, op.partition.value()},
       {field::kOffset, op.offset.value()},
       {field::kError, error == Errc::kNone ? EventValue() : EventValue(ErrcName(error))}});
}

std::vector<const HistoryOp*> History::Select(OpFunction f, OpType type) const {
  std::vector<const HistoryOp*> out;
  for (const HistoryOp& op : ops_) {
    if (op.f == f && op.type == type) out.push_back(&op);
  }
  return out;
}

const HistoryOp* History::CompletionOf(uint64_t invoke) const {
  if (invoke >= ops_.size() || ops_[invoke].completion_index == kNoOpIndex) return nullptr;
  return &ops_[ops_[invoke].completion_index];
}

}  // namespace ksim::sim
