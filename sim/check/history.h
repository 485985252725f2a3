// History: what the run's clients did, Jepsen-style, in the order it happened: the record the
// history checker (issue 6) compares with the brokers' final logs. docs/simulated-clients.md.
//
// - Operations. A producer's send is an `invoke` {record id, topic, key, value} followed by
//   exactly one completion: `ok` {partition, offset} (offset -1 with acks=0), `fail` {error} (no
//   attempt can have reached a log) or `info` {error} (unknown: SendOutcome.maybe_written, or the
//   producer process died first, then error is NONE and `crashed` is set). A consumer's `poll`
//   {group, count}, `deliver` {group, topic, partition, offset, record id} (the application
//   finished processing the record) and `commit` {group, topic, partition, offset} (`ok`, or
//   `fail` with the error) are single operations. `process` is the client id; `incarnation` the
//   client's process incarnation (1, 2, ... across restarts); `t_us` the virtual time.
// - Record ids are unique per run: NewRecordId(client) gives "<client>-<n>", n = 0, 1, ... per
//   client whatever its incarnation. A generated record's value is its id. A value given by a
//   scenario (a produce action, console producer input) is sent exactly as typed, since neither
//   the seed's console tools nor ksim's Producer carry record headers; the history remembers
//   which id it was sent under, and a delivery of a value names the first record id sent with
//   it. The same text given twice is therefore one
//   value to the checker (documented for scenario writers).
// - Trace. Each operation is also one trace event on the client's node (docs/trace-format.md,
//   "Client operations"): send, ack, error (fail and info, told apart by `outcome`), poll,
//   deliver, commit. The trace is the history's durable form.
//
// Ownership: borrows the World (which must outlive it) for the time and the trace. Operations
// are kept in memory for the run, their text (ids, values, keys, names) once each in the
// History's own storage, which their fields view. Single-threaded.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/index_iterator.h"
#include "core/base/status.h"
#include "core/base/types.h"
#include "core/protocol/messages.h"
#include "sim/world/world.h"

namespace ksim::sim {

enum class OpType : uint8_t { kInvoke, kOk, kFail, kInfo };
enum class OpFunction : uint8_t { kSend, kPoll, kDeliver, kCommit };
// "invoke", "ok", "fail", "info".
std::string_view OpTypeName(OpType type);
// "send", "poll", "deliver", "commit".
std::string_view OpFunctionName(OpFunction f);

inline constexpr uint64_t kNoOpIndex = UINT64_MAX;

// The text fields are views into the History that made the op (History::Keep): valid while it
// lives, like the op itself. A send's completion views the same bytes as its invoke.
struct HistoryOp {
  uint64_t index = 0;  // position in the history, 0, 1, ...
  TimeUs t_us = 0;
  uint64_t incarnation = 0;
  // A send's completion: the index of its invoke (kNoOpIndex otherwise).
  uint64_t invoke_index = kNoOpIndex;
  // A send's invoke: the index of its completion (kNoOpIndex while it has none, and otherwise).
  uint64_t completion_index = kNoOpIndex;
  Offset offset = kUndefinedOffset;
  std::string_view process;    // the client id
  std::string_view record_id;  // send (all of its ops), deliver ("" when the value is unknown)
  std::string_view topic;
  std::optional<std::string_view> key;
  std::string_view value;
  std::string_view group;     // poll, deliver, commit ("" without a group)
  PartitionId partition{-1};  // -1: not chosen / not applicable
  int32_t count = 0;          // poll: records returned
  Errc error = Errc::kNone;
  OpType type = OpType::kInvoke;
  OpFunction f = OpFunction::kSend;
  bool crashed = false;  // send info: the producer process died before the outcome

  TopicPartition tp() const { return {std::string(topic), partition}; }  // topic and partition
};

// The history's operations in order, in chunks of kPerChunk: an op stays where it is while
// others are added (Append hands out references), and costs its own size in memory (a
// std::deque of ops this size allocates each alone, in a size class a fifth larger: 136 MiB
// more at a million records, docs/BENCHMARKS.md "Scale", fifteenth change).
class HistoryOps {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  HistoryOp& operator[](size_t i) { return chunks_[i / kPerChunk][i % kPerChunk]; }
  const HistoryOp& operator[](size_t i) const { return chunks_[i / kPerChunk][i % kPerChunk]; }
  // A new op at the end, default-constructed.
  HistoryOp& emplace_back() {
    if (size_ % kPerChunk == 0) chunks_.push_back(std::make_unique<HistoryOp[]>(kPerChunk));
    return (*this)[size_++];
  }

  using const_iterator = IndexIterator<HistoryOps, HistoryOp>;
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

 private:
  static constexpr size_t kPerChunk = 256;
  std::vector<std::unique_ptr<HistoryOp[]>> chunks_;
  size_t size_ = 0;
};

class History {
 public:
  explicit History(World& world);
  History(const History&) = delete;
  History& operator=(const History&) = delete;

  // "<client>-<n>", n counting every id given to `client` this run.
  std::string NewRecordId(std::string_view client);

  // --- Producer ------------------------------------------------------------------------------
  // The invoke of a send; returns its index for the completion.
  uint64_t SendInvoke(std::string_view client, uint64_t incarnation, std::string record_id,
                      std::string topic, std::optional<std::string> key, std::string value);
  // REQUIRES (all three): `invoke` is a send invoke not completed yet.
  void SendOk(uint64_t invoke, const TopicPartition& tp, Offset offset);
  void SendFail(uint64_t invoke, const TopicPartition& tp, Errc error);
  // `tp` may have an empty topic (never chosen); `crashed`: the process died, error NONE.
  void SendInfo(uint64_t invoke, const TopicPartition& tp, Errc error, bool crashed = false);

  // --- Consumer ------------------------------------------------------------------------------
  void Poll(std::string_view client, uint64_t incarnation, std::string_view group, int32_t count);
  void Deliver(std::string_view client, uint64_t incarnation, std::string_view group,
               const TopicPartition& tp, Offset offset, const std::optional<std::string>& key,
               const std::string& value);
  void Commit(std::string_view client, uint64_t incarnation, std::string_view group,
              const TopicPartition& tp, Offset offset, Errc error);

  // --- Reading -------------------------------------------------------------------------------
  const HistoryOps& ops() const { return ops_; }
  // The ops of function `f` and type `type`, in order.
  std::vector<const HistoryOp*> Select(OpFunction f, OpType type) const;
  // The completion of send invoke `invoke`, or null while it has none.
  const HistoryOp* CompletionOf(uint64_t invoke) const;
  // Send invokes without a completion yet.
  size_t open_sends() const { return open_sends_; }

 private:
  HistoryOp& Append(std::string_view client, uint64_t incarnation, OpType type, OpFunction f);
  HistoryOp& Complete(uint64_t invoke, OpType type, const TopicPartition& tp);
  void TraceSendCompletion(const HistoryOp& op);

  // `text` copied into the history's own storage, where it stays while the History lives: the
  // bytes an op's text fields view. Names (clients, topics, groups) are kept once each.
  std::string_view Keep(std::string_view text);
  std::string_view KeepName(std::string_view name);

  World& world_;
  HistoryOps ops_;
  // Keep's storage: chunks that never move (a text longer than a chunk has one of its own).
  std::vector<std::unique_ptr<char[]>> text_chunks_;
  size_t text_room_ = 0;                            // bytes left at the end of the last chunk
  std::set<std::string, std::less<>> names_;        // KeepName's: a set's elements never move
  std::array<std::string_view, 4> recent_names_{};  // of names_, the last found
  size_t next_recent_name_ = 0;
  std::map<std::string, int64_t, std::less<>> next_id_;  // client -> n
  // value -> first record id. Ordered, not hashed: the audit and the consumers look values up
  // in about the order they were sent, and a walk down the same branches of a tree stays in the
  // cache where a hash table's buckets at a million records do not (docs/BENCHMARKS.md,
  // "Scale", fifteenth change, item 12).
  std::map<std::string_view, std::string_view> id_for_value_;  // both views of Keep's copies
  size_t open_sends_ = 0;                                      // send invokes not completed
};

}  // namespace ksim::sim
