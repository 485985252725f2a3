// TimelineModel: the immutable picture of one run (one scenario variant), built from its trace
// (docs/trace-format.md) and nothing else. It answers "what did the cluster look like at
// simulated time T" (brokers, controller, ZooKeeper sessions, network cuts, every partition's
// leader, ISR, epoch and every replica's LEO, HW and log contents record by record, consumer
// groups and their committed offsets) and "what happened to every record" (the ledger). The
// viewer's panels (viz/ui/) draw from it; it includes no ImGui, so tests and command-line tools
// use it as they are (Tracy's Worker/View split, docs/STYLE.md).
//
// How time queries stay cheap on big runs (the viewer scrubs at display rate over 100k-record
// runs): building replays the trace once and keeps a checkpoint Snapshot every
// kCheckpointEvents events; StateAt(t) copies the checkpoint at or before t and replays at most
// that many events. Logs are not copied into snapshots: every replica keeps an append-only list
// of Cells (offset, record, when appended, when removed), so "the log at t" is a filter over it,
// shared by every snapshot.
//
// Record identity: the broker's `append` events carry the appended records' values; a value is
// mapped to the record a producer sent with that value (its `send` event), as the history
// checker does. A value no send carried is a "foreign" record (record index -1).
//
// The final truth comes from the verdict line: its `audit` (the leader's committed log of every
// audited partition at the end) gives each record's copies in the final log, its `anomalies` the
// checker's attributed causes; `metrics` and `expectations` are shown as they are.
//
// The questions the panels ask of a run beyond its state (what a HW advance committed, why a
// record was never written, the ledger's counts, the events per slice of the run) are answered
// by queries here, with tests, not computed inside a panel (docs/STYLE.md, "The viewer").
//
// Immutable after Build; every query is const and thread-compatible. Errors building are
// kCorruption naming the trace and line ("run.jsonl:12: append event without values").
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/status.h"
#include "sim/kernel/trace.h"

namespace ksim::viz {

using TimeUs = int64_t;
inline constexpr TimeUs kNever = std::numeric_limits<TimeUs>::max();

// ---- Snapshot: the cluster's state at one instant (small; no log contents) -----------------

enum class NodeStatus : uint8_t { kAlive, kCrashed, kShutDown };

struct BrokerView {
  int32_t id = -1;
  std::string node;  // "broker-1"
  NodeStatus status = NodeStatus::kAlive;
  int32_t incarnation = 1;        // restart events' incarnation
  bool controller = false;        // the latest controller_elected names this broker
  int32_t controller_epoch = -1;  // its epoch, when controller
  bool zk_session = false;        // a live ZooKeeper session (created, not yet expired/closed)
  bool isolated = false;          // an `isolate` fault until the next heal
  TimeUs slow_until_us = 0;       // a `slow` fault's end (slow while t < slow_until_us)
  std::string disk_fault;         // "" or the injected fault ("write_error", ...)
};

struct ReplicaView {
  int32_t broker = -1;
  int64_t log_start_offset = 0;
  int64_t leo = 0;      // its log end offset (last append's leo, or the truncation point)
  int64_t hw = 0;       // the high watermark as this replica knows it
  int32_t epoch = -1;   // leader epoch of its last append or become_leader/follower
  bool leader = false;  // this broker is the partition's leader at this instant
  bool in_isr = false;
  bool online = true;  // its broker is alive
};

struct PartitionView {
  std::string topic;
  int32_t partition = 0;
  std::vector<int32_t> replicas;  // assigned replicas, preferred leader first
  int32_t leader = -1;            // -1: no leader (offline partition)
  int32_t leader_epoch = -1;
  std::vector<int32_t> isr;
  std::vector<ReplicaView> replica_states;  // one per entry of `replicas`, same order
  int32_t elections = 0;                    // leader_elected events so far
  bool last_election_unclean = false;
};

struct GroupView {
  std::string group;
  std::string state;  // group_state's state ("Stable", "PreparingRebalance"...)
  int32_t generation = 0;
  std::vector<std::string> members;  // member ids, in join order
  // Committed offsets (next offset to read), from the consumers' ok `commit` events.
  std::vector<std::pair<std::string, int64_t>> committed;  // ("t-0", offset), sorted by name
};

// kOldConsumer: Kafka 0.10's ZooKeeper-based consumer (its trace has `consumer_registered`);
// kConsumer: the group coordinator's consumer (or one whose kind the trace does not show).
enum class ClientKind : uint8_t { kProducer, kConsumer, kOldConsumer, kOther };

struct ClientView {
  std::string id;  // "p1", "c1"
  ClientKind kind = ClientKind::kOther;
  NodeStatus status = NodeStatus::kAlive;
  int32_t incarnation = 1;
};

// A network cut in force: messages from a node of `from` to a node of `to` are dropped (and the
// other way round unless one_way). `isolate` is a cut between the node and everyone.
struct CutView {
  std::vector<std::string> from;
  std::vector<std::string> to;
  bool one_way = false;
};

struct Snapshot {
  TimeUs t_us = 0;
  size_t events_applied = 0;              // events()[0, events_applied) are reflected
  std::vector<BrokerView> brokers;        // by id
  std::vector<PartitionView> partitions;  // in (topic, partition) order, as partitions()
  std::vector<GroupView> groups;          // by name
  std::vector<ClientView> clients;        // by id
  std::vector<CutView> cuts;
  // True when a message from node `from` to node `to` would be dropped by a cut in force.
  bool LinkCut(std::string_view from, std::string_view to) const;
  const BrokerView* FindBroker(int32_t id) const;
};

// ---- Logs ------------------------------------------------------------------------------------

// One record at one offset of one replica's log, for the time it was there.
struct Cell {
  int64_t offset = 0;
  int32_t record = -1;  // index into records(); -1: a value no send carried
  int32_t epoch = -1;   // leader epoch of the append
  TimeUs appended_us = 0;
  TimeUs removed_us = kNever;  // truncated (or deleted from the log start) at this time
  bool truncated = false;      // removed by a truncation (not by retention)
};

// ---- Events ----------------------------------------------------------------------------------

// What a trace event is about, for the timeline's colours and "jump to next event of a kind".
enum class EventKind : uint8_t {
  kFault,       // crash, shutdown, restart, partition, heal, isolate, slow, disk_fault, zk expiry
  kElection,    // leader_elected, controller_elected
  kIsr,         // isr_shrink, isr_expand
  kTruncation,  // truncate
  kHighWatermark,  // hw
  kAppend,         // append
  kProduce,        // send, ack, error, produce_retry, ...
  kConsume,        // poll, deliver
  kCommit,         // commit, offsets_committed
  kGroup,          // group_state, group_joined, partitions_assigned/revoked, ...
  kAction,         // the scenario's own events (node "scenario")
  kAnomaly,        // synthetic: the cause time of a checker anomaly
  kOther,
};
inline constexpr int kEventKindCount = static_cast<int>(EventKind::kOther) + 1;
std::string_view EventKindName(EventKind kind);  // "fault", "election", ...

// The `ev` of the viewer's own events at the cause time of a checker anomaly (kAnomaly); no
// trace line has it (core/base/trace_names.h lists those).
inline constexpr std::string_view kAnomalyEv = "anomaly";

struct TimelineEvent {
  TimeUs t_us = 0;
  EventKind kind = EventKind::kOther;
  int32_t node = -1;       // index into nodes()
  std::string ev;          // the trace's `ev`
  std::string summary;     // one line for tooltips and lists ("broker-2 crashed")
  int32_t partition = -1;  // index into partitions(), when partition-scoped
  int32_t record = -1;     // index into records(), when about one record
  uint64_t line = 0;       // the trace line
};

// A network message (level `messages` traces only), joined from msg_send/deliver/drop on `id`.
struct Message {
  int64_t id = 0;
  int32_t from = -1;  // index into nodes()
  int32_t to = -1;
  std::string kind;  // "Fetch", "ProduceResponse", ...
  int32_t size_bytes = 0;
  TimeUs sent_us = 0;
  TimeUs delivered_us = -1;  // -1: not delivered
  TimeUs dropped_us = -1;    // -1: not dropped
  std::string drop_reason;
};

// ---- The ledger ------------------------------------------------------------------------------

struct Anomaly {
  std::string kind;  // lost_acked, log_duplicate, duplicated, undelivered, reordered
  int32_t record = -1;
  std::string record_id;
  std::string topic;
  int32_t partition = -1;
  int64_t offset = -1;
  std::string group;
  std::string cause;
  TimeUs cause_t_us = -1;
};

struct Delivery {
  std::string group;
  int32_t count = 0;
};

struct LedgerRecord {
  std::string id;        // "p1-17" (send's record_id)
  std::string producer;  // the sending client
  std::string topic;
  std::optional<std::string> key;
  std::string value;
  int32_t partition = -1;  // acked (or errored) partition, -1 unknown
  int64_t offset = -1;     // acked offset, -1 unknown (or acks=0)
  TimeUs sent_us = -1;
  TimeUs acked_us = -1;   // -1: never acked
  TimeUs failed_us = -1;  // -1: no error event
  std::string error;      // the last error name ("" none), outcome "fail"/"unknown"
  std::string outcome;
  int32_t final_copies = 0;          // copies in the final committed logs (verdict audit)
  std::vector<Delivery> deliveries;  // per group, by group name
  std::vector<int32_t> anomalies;    // indices into anomalies()
  std::vector<uint32_t> events;      // indices into events() about this record, in time order

  bool acked() const { return acked_us >= 0; }
  bool lost() const { return acked() && final_copies == 0; }
  // Not acknowledged and not in the final log: the checker's lost_unacked (every acks=0 record
  // is unacknowledged; the missing ones are what at-most-once loses).
  bool never_written() const { return !acked() && final_copies == 0; }
  int32_t max_deliveries() const;
  bool duplicated() const { return final_copies > 1 || max_deliveries() > 1; }
};

// A record's fate, each record having exactly one (the Compare panel's fate bar).
enum class Fate : uint8_t {
  kOk,            // in the final log once, acked or not (acks=0 never acknowledges)
  kLost,          // LedgerRecord::lost()
  kDuplicated,    // duplicated() and not lost
  kNeverWritten,  // never_written()
};
inline constexpr int kFateCount = static_cast<int>(Fate::kNeverWritten) + 1;
Fate FateOf(const LedgerRecord& record);  // the first that applies: lost, duplicated, never written

// How many records are in each state. The first four count a record under every one it is in
// (a lost record delivered twice is duplicated too); `by_fate` counts each record once.
struct LedgerCounts {
  size_t lost = 0;
  size_t duplicated = 0;
  size_t unacked = 0;
  size_t never_written = 0;
  std::array<size_t, kFateCount> by_fate = {};  // indexed by Fate
};

struct Expectation {
  std::string metric;
  std::string expected;  // as the verdict writes it ("0", ">= 1", "[2, 5]")
  int64_t actual = 0;
  bool ok = false;
};

struct ScenarioAction {
  int32_t index = 0;
  int64_t at_ms = 0;
  TimeUs t_us = 0;
  std::string text;  // "crash broker 2", the cli command, ...
};

// ---- Answers derived from the above (the panels' questions, each a query with a test) --------

// A replica's high watermark just before an event's time and at it (after every event of that
// time): what a `hw` event changed.
struct HighWatermarkChange {
  int64_t before = -1;  // -1: the event is not about a replica the model knows
  int64_t after = -1;
  bool leader = false;  // the replica led its partition at the event's time
};

// A record acknowledged at an offset (the records a HW advance makes committed).
struct AckedOffset {
  int32_t partition = -1;  // index into partitions()
  int64_t offset = -1;
  int32_t record = -1;  // index into records()
};

// The cluster as a never-written record's producer found it at the send (the viewer's reading:
// the checker attributes no cause to lost_unacked).
enum class LeaderAtSend : uint8_t {
  kUnknown,    // the record's partition is unknown (no ack or error named it)
  kNone,       // the partition had no leader
  kDown,       // its leader's broker was crashed or shut down
  kCut,        // its leader was up, the link producer -> leader cut
  kReachable,  // its leader was up and reachable
};
struct NeverWrittenCause {
  int32_t partition = -1;  // index into partitions(), when known
  LeaderAtSend leader = LeaderAtSend::kUnknown;
  std::string leader_node;  // "broker-2" (kDown, kCut, kReachable)
  // kDown: index into events() of the leader's last crash or shutdown at or before the send;
  // -1 when the trace has none.
  int32_t leader_down_event = -1;
  bool gave_up = false;    // the producer gave the record up (record.error names why)
  bool acks_zero = false;  // acks=0: an ack without an offset, counted sent, never answered
};

// Events of each kind in one column of the whole run (EventHistogram).
using EventKindCounts = std::array<uint32_t, kEventKindCount>;

// ---- The model -------------------------------------------------------------------------------

struct ModelReplay;  // the builder's replay data (viz/model/model_internal.h)

class TimelineModel {
 public:
  static constexpr size_t kCheckpointEvents = 1024;

  // Builds from a parsed trace; `name` stands for the file in errors.
  static Result<TimelineModel> Build(const sim::Trace& trace, std::string_view name);
  // Reads and builds `path` (kCorruption / kIoError naming it).
  static Result<TimelineModel> Load(const std::string& path);

  // Unique per model built in this process (copies and moves keep it): what the panels' caches
  // are keyed by, since a model's address changes when it moves and may be reused after it dies.
  uint64_t serial() const { return serial_; }

  // Header and verdict.
  const sim::TraceHeader& header() const { return header_; }
  // The trace header's Kafka release, with each client of another release: "Kafka 0.10.0",
  // "Kafka 0.10.0 (p1 0.11.0)"; "Kafka ?" for a trace that does not record it.
  std::string KafkaVersionLabel() const {
    std::string label =
        "Kafka " + (header_.kafka_version.empty() ? std::string("?") : header_.kafka_version);
    if (!header_.client_kafka_versions.empty()) {
      label += " (";
      bool first = true;
      for (const auto& [client, release] : header_.client_kafka_versions) {
        label += (first ? "" : ", ") + client + " " + release;
        first = false;
      }
      label += ")";
    }
    return label;
  }
  const std::string& description() const { return description_; }  // scenario_start's
  TimeUs start_us() const { return start_us_; }  // scenario time 0 (scenario_start), else 0
  TimeUs end_us() const { return end_us_; }      // the verdict's time
  bool ok() const { return ok_; }
  const std::vector<std::pair<std::string, int64_t>>& metrics() const { return metrics_; }
  const std::vector<Expectation>& expectations() const { return expectations_; }
  const std::vector<ScenarioAction>& actions() const { return actions_; }

  // Who and what.
  const std::vector<std::string>& nodes() const { return nodes_; }  // every node named, sorted
  int32_t NodeIndex(std::string_view node) const;                   // -1 unknown
  const std::vector<PartitionView>& partitions() const { return partitions_; }  // at the end
  int32_t PartitionIndex(std::string_view topic, int32_t partition) const;      // -1 unknown

  // State at time t (clamped to [0, end_us]); cost: a checkpoint copy plus at most
  // kCheckpointEvents events replayed.
  Snapshot StateAt(TimeUs t_us) const;

  // The cells of `broker`'s replica of partitions()[partition] in its log at time t, in offset
  // order (a contiguous run of offsets from its log start to its LEO).
  std::vector<Cell> LogAt(int32_t partition, int32_t broker, TimeUs t_us) const;
  // Every cell the replica ever held (append order), for "truncated cells leaving" animations.
  std::span<const Cell> CellHistory(int32_t partition, int32_t broker) const;

  // Events and messages.
  const std::vector<TimelineEvent>& events() const { return events_; }
  // Index of the first event with t_us >= t (events().size() if none).
  size_t FirstEventAtOrAfter(TimeUs t_us) const;
  // The next event of `kind` strictly after t / the previous strictly before t.
  std::optional<TimeUs> NextEvent(TimeUs t_us, EventKind kind) const;
  std::optional<TimeUs> PreviousEvent(TimeUs t_us, EventKind kind) const;
  bool has_messages() const { return header_.level == sim::TraceLevel::kMessages; }
  const std::vector<Message>& messages() const { return messages_; }  // by sent_us
  // Messages in flight or sent/delivered/dropped during [begin, end], at most `limit` of them
  // (the earliest sent first).
  std::vector<const Message*> MessagesBetween(TimeUs begin_us, TimeUs end_us, size_t limit) const;

  // The nodes that send or receive a message, in the order a sequence diagram draws their
  // lifelines: producers, brokers, the other nodes (consumers...), ZooKeeper, the admin tools'
  // node; by name within each. Indices into nodes().
  const std::vector<int32_t>& message_nodes() const { return message_nodes_; }
  // The events of each kind in each of `columns` equal slices of [0, end_us()] (an event at or
  // past the end in the last one). REQUIRES: columns > 0.
  std::vector<EventKindCounts> EventHistogram(int columns) const;

  // The ledger.
  const std::vector<LedgerRecord>& records() const { return records_; }  // in send order
  int32_t RecordIndex(std::string_view record_id) const;                 // -1 unknown
  const std::vector<Anomaly>& anomalies() const { return anomalies_; }
  const std::vector<std::string>& producers() const { return producers_; }  // sorted
  int32_t ProducerIndex(std::string_view client) const;
  const LedgerCounts& ledger_counts() const { return ledger_counts_; }

  // What events()[event] did to its node's replica's high watermark (HighWatermarkChange):
  // meant for `hw` events; any event with a partition and a broker node works. Cost: one
  // StateAt plus the events of that time.
  HighWatermarkChange HighWatermarkChangeAt(size_t event) const;
  // The records a leader's HW advance made committed: those acknowledged at offsets of
  // partitions()[partition] in [max(change.before, 0), change.after), in offset order. Empty
  // unless change.leader and the HW grew. Two binary searches.
  std::span<const AckedOffset> RecordsCommittedBy(int32_t partition,
                                                  const HighWatermarkChange& change) const;
  // Why records()[record] was never written, from the cluster at its send; nullopt when it was
  // written (acked or in the final log: LedgerRecord::never_written() is false) or never sent.
  std::optional<NeverWrittenCause> WhyNeverWritten(int32_t record) const;

 private:
  // The members below are the builder's (viz/model/model_builder.cc) to shape; the public
  // interface above is the contract the panels and tests use.
  friend class ModelBuilder;
  TimelineModel() = default;
  // The number of events at or before t (t clamped as StateAt clamps it).
  size_t EventsAppliedAt(TimeUs t_us) const;
  // Replays events()[state.events_applied, applied) onto `state`.
  void ReplayTo(Snapshot& state, size_t applied) const;
  // Index into events() of `node`'s last crash or shutdown at or before t; -1 none.
  int32_t LastDownEvent(std::string_view node, TimeUs t_us) const;

  uint64_t serial_ = 0;
  sim::TraceHeader header_;
  std::string description_;
  TimeUs start_us_ = 0;
  TimeUs end_us_ = 0;
  bool ok_ = false;
  std::vector<std::pair<std::string, int64_t>> metrics_;
  std::vector<Expectation> expectations_;
  std::vector<ScenarioAction> actions_;
  std::vector<std::string> nodes_;
  std::vector<PartitionView> partitions_;
  std::vector<TimelineEvent> events_;
  std::vector<Message> messages_;
  std::vector<LedgerRecord> records_;
  std::vector<Anomaly> anomalies_;
  std::vector<std::string> producers_;
  std::vector<int32_t> message_nodes_;
  LedgerCounts ledger_counts_;
  // Replay: checkpoints_[i] reflects events()[0, i * kCheckpointEvents); between checkpoints
  // StateAt replays compact state changes (not the trace's JSON, which would cost memory).
  std::vector<Snapshot> checkpoints_;
  // cells_[partition][replica slot] (slot = index into partitions_[p].replicas).
  std::vector<std::vector<std::vector<Cell>>> cells_;
  // The compact state changes of every event (viz/model/model_internal.h), shared by copies.
  std::shared_ptr<const ModelReplay> replay_;
};

}  // namespace ksim::viz
