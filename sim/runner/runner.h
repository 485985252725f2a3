// Running one scenario variant: a validated Scenario (sim/scenario/scenario.h) becomes a World, a
// Cluster, the simulated clients and a schedule of actions; the run goes on to duration_ms, then
// the final phase (heal, restart every broker, drain), then the final audit (sim/check/audit.h) and
// the history checker (sim/check/history_checker.h); the expectations are evaluated and the verdict
// is the trace's last line. docs/scenarios.md is the user's reference; `ksim run`
// (tools/cmd_run.cc) prints and writes what RunScenario returns (sim/runner/report.h).
//
// The mapping (each line is something the runner does, in this order):
// - World(seed, trace): the network's default link from cluster.network (latency drawn per
//   message in [min, max], loss, bandwidth), then each `links` override; every broker disk from
//   cluster.disk.
// - Cluster: brokers, cluster.config, broker_config, zookeeper (tickTime, session bounds, the
//   brokers' zookeeper.session.timeout.ms), policy.election / policy.truncation. Start().
// - Topics: each `topics` entry created through kafka-topics.sh's path (Cluster::CreateTopic)
//   at time 0 and waited for (every partition led) before any client starts; the observer
//   learns each topic's min.insync.replicas.
// - Clients: a ProducerClient / ConsumerClient per `clients` entry (in order), bootstrap =
//   every broker, commit mode from ClientSpec::commit.
// - Actions at their at_ms (ties in the order written), each traced first as an `action` event
//   {index, do, ...} on node "scenario": cli (sim/cluster/cli_tools.h; its output lines traced as
//   cli_output {index, line} and kept in ActionOutput), crash / restart / shutdown of a broker
//   (by id or leader_of, resolved when the action runs through Cluster::LeaderOf) or of a client
//   (crash and restart only), slow, partition, heal, crash_replicas (every replica of the
//   partition at once, the same instant), disk_fault (eio: every later disk operation fails;
//   full: writes fail with ENOSPC; corrupt_tail: the broker crashes with its unsynced tail torn
//   and corrupted), zk_expire, zk_down / zk_up (the `zk` node crashes and restarts), produce,
//   config (a topic's config written to ZooKeeper as kafka-configs.sh does; a broker's kept for
//   its next restart). An action that cannot apply (restart of a running broker, leader_of a
//   partition with no leader) is traced as action_skipped {index, reason} and reported, not an
//   error.
// - With a RunDriver (RunOptions::driver: `ksim serve`, a replay of its trace), the driver
//   advances the world from t0 instead, and its end takes the place of duration_ms.
// - Final phase at duration_ms: heal (the network, every slow link, ZooKeeper up), restart_all
//   (every broker and client down is restarted), then the run continues for drain_ms or until
//   every producer is done and every consumer group has delivered every committed record of
//   its topics, whichever comes first (checked every 100 ms of virtual time); with restart_all,
//   a broker that goes down during the drain (a controlled shutdown finishing late, a halt) is
//   restarted at the next check.
// - Audit of every scenario topic (and every topic a cli command created), check, expectations,
//   World::Finish with the verdict {ok, metrics, variant, expectations}.
//
// Determinism: everything is driven by the World's seed; the same scenario, variant and seed
// give byte-identical traces (RunResult::trace_hash). Single-threaded.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "sim/check/audit.h"
#include "sim/check/history_checker.h"
#include "sim/kernel/trace.h"
#include "sim/scenario/scenario.h"

namespace ksim::sim {

class World;
class Cluster;
class History;

// What a RunDriver is given: the run's world, cluster and history, scenario time 0, and how to
// advance the world (every event up to and including `target_us`, the step hooks after each;
// the clock then at `target_us`).
struct RunContext {
  World& world;
  Cluster& cluster;
  History& history;
  TimeUs t0_us;
  std::function<void(TimeUs target_us)> run_to;
};

// Drives the part of a run between scenario time 0 and the final phase in place of the
// scenario's own clock: `ksim serve` paces it to the wall clock and feeds real clients' requests
// in, a replay feeds the same requests from a trace (sim/serve/serve.h). Without a driver the
// run goes to duration_ms. With one, every RunTo is the driver's: the actions run at their times
// while RunTo returns true; when it returns false the run ends there (actions not reached are
// not run), Stop is called and the final phase follows.
class RunDriver {
 public:
  virtual ~RunDriver() = default;
  // At scenario time 0: the cluster, the topics and the scenario's clients are up.
  virtual Status Start(RunContext& run) = 0;
  // Advances to `target_us` (kRunForever: until the driver ends the run) and returns true, or
  // ends the run earlier and returns false.
  virtual bool RunTo(RunContext& run, TimeUs target_us) = 0;
  // The run ends: before the final phase.
  virtual void Stop(RunContext& run) = 0;
};

inline constexpr TimeUs kRunForever = INT64_MAX;

struct RunOptions {
  std::optional<uint64_t> seed;  // overrides the scenario's seed
  std::string variant = "base";  // the base or a variant's name, for the trace header
  TraceLevel trace_level = TraceLevel::kState;
  std::string trace_path;         // "": the trace is kept as a hash only
  bool keep_trace_bytes = false;  // memory sink (tests); ignored when trace_path is set
  // Called about every 5% of the run's virtual time (done, total), for a progress line.
  std::function<void(TimeUs done_us, TimeUs total_us)> progress;
  // Drives the run between scenario time 0 and the final phase instead of duration_ms (serve,
  // replay); null for a plain run. Borrowed for the run.
  RunDriver* driver = nullptr;
  // The run's world (brokers, logs, the virtual disks' files) is left for the process's exit to
  // take back, not taken apart object by object: for a command whose last work is this run,
  // where freeing thousands of replicas one by one is a few percent of the run (clang's
  // -disable-free). It stays reachable from a list never destroyed, so a leak checker does not
  // report it. Nothing of it is used again; the trace is committed before RunScenario returns.
  bool leave_world_to_exit = false;
};

struct ExpectationResult {
  Expectation expectation;
  int64_t actual = 0;
  // With expectation.cause: the records counted whose cause does not contain it.
  int64_t other_causes = 0;
  bool ok = false;
  std::string Expected() const;  // "0", ">= 1", "<= 5", "1..5", then ", each cause has \"x\""
  std::string Actual() const;    // "3", then ", 1 with another cause" when a cause is expected
};

struct ActionOutput {
  size_t index = 0;  // the action's position in `actions`
  int64_t at_ms = 0;
  std::string description;          // the action as a line ("crash broker-2", the cli command)
  std::vector<std::string> output;  // cli output lines; for a skipped action, the reason
  bool skipped = false;
};

// Named in a drain that did not complete because the controller missed a broker's restart: it
// compares /brokers/ids by id only until Kafka 2.2, so a broker that registers again before the
// controller reads the children is never told its partitions' state and stays out of their ISRs.
inline constexpr std::string_view kMissedRestartDefect =
    "KAFKA-1120, fixed in Kafka 2.2: before it the controller compares broker ids only";

// Named in a drain that did not complete because a follower's fetcher stopped after it was told
// the same leader again at a later epoch: before Kafka 2.1 that redoes nothing, so it never
// truncated to what the leader did in the epochs it missed, and the leader's answer starting
// below its log end ends its fetcher thread (UnexpectedAppendOffsetException).
inline constexpr std::string_view kSameLeaderDefect =
    "KAFKA-7164, fixed in Kafka 2.1: before it a follower told the same leader at a later epoch "
    "does not truncate";

// Named in a drain that did not complete because a follower's fetcher stopped after it asked
// its leader for the end of an epoch older than any the leader's cache holds (the leader was
// elected with none of the follower's epochs, uncleanly or after truncating them). Before 2.1
// the leader answers UNDEFINED, and the follower truncates to its high watermark, which may lie
// inside a batch the leader holds from a lower offset: the fetch from there gets that whole
// batch, and UnexpectedAppendOffsetException ends the fetcher thread. 2.1 (KAFKA-7415) answers
// the leader's first epoch's start offset instead.
inline constexpr std::string_view kBelowFirstEpochDefect =
    "KAFKA-7415, fixed in Kafka 2.1: before it a leader answers OffsetsForLeaderEpoch for an "
    "epoch before its first with UNDEFINED, and the follower truncates to its high watermark";

// Named in a drain that did not complete because a follower's fetcher stopped after its leader,
// newly elected, answered its OffsetsForLeaderEpoch UNDEFINED for an epoch after the last the
// leader had recorded: before 2.1 a leader records its own epoch with its first append
// (LeaderEpochFileCache.assign), and 2.0's endOffsetFor answers an epoch after the latest cached
// one with UNDEFINED. The follower truncates to its high watermark, which may lie inside a
// batch the leader holds from a lower offset: the fetch from there gets that whole batch, and
// UnexpectedAppendOffsetException ends the fetcher thread. 2.1 (KAFKA-7415) records the epoch
// when the broker becomes leader.
inline constexpr std::string_view kUnrecordedEpochDefect =
    "KAFKA-7415, fixed in Kafka 2.1: before it a new leader records its epoch only with its "
    "first append and answers OffsetsForLeaderEpoch for a later epoch than it recorded with "
    "UNDEFINED, and the follower truncates to its high watermark";

// Named in a drain that did not complete because a follower's fetcher stopped after its leader
// answered OffsetsForLeaderEpoch from an epoch cache that forgot where an epoch began. A
// truncation to the log end does nothing in Log.truncateTo, so an entry the replica wrote as
// leader at its log end stays even when it becomes a follower with no record of that epoch;
// when the replica then appends an older epoch's batch there, 2.1.0's assign (KAFKA-7415)
// removes every entry not before it in both epoch and offset, the older epoch's own first entry
// too, and the cache says that epoch began at the batch. A follower asking for an epoch before
// it is told that offset, keeps its diverged records below it and fetches into the middle of
// the leader's batch (UnexpectedAppendOffsetException ends the fetcher thread).
inline constexpr std::string_view kForgottenEpochStartDefect =
    "KAFKA-10706, fixed in Kafka 2.6.1 and 2.7.0: before it a truncation to the log end keeps "
    "the leader-epoch entries from there on";

// Named in a drain that did not complete because a follower's fetcher stopped where its leader
// holds a batch of an older epoch below where its epoch cache says the follower's epoch began:
// the leader, as a follower before, was answered UNDEFINED (an epoch before the answering
// leader's first, or after the last it had recorded) and truncated to its high watermark, which
// kept records of its own that the later epoch's leader had written over; it then fetched that
// epoch's records from its cut. A follower holding the later epoch's records below the cut asks
// for that epoch's end, is answered past its log end, truncates nothing, and its fetch starts
// inside the leader's older batch (UnexpectedAppendOffsetException ends the fetcher thread).
// 2.1 (KAFKA-7415) answers such a request with the leader's first epoch's start or records the
// epoch when the broker becomes leader.
inline constexpr std::string_view kLeaderKeptBelowUndefinedCutDefect =
    "KAFKA-7415, fixed in Kafka 2.1: before it a leader answers OffsetsForLeaderEpoch UNDEFINED "
    "for an epoch it cannot place, and the follower truncates to its high watermark, keeping "
    "records below it that a later leader wrote over";

// Named in a drain that did not complete because a follower's fetcher stopped after its leader
// answered OffsetsForLeaderEpoch with an epoch before the first one the follower's own cache
// holds (the follower lost its earlier epochs, in a power loss or a truncation, and wrote a
// later one since). Before 2.1 the follower's own lookup of that epoch is UNDEFINED too, and
// AbstractFetcherThread.getOffsetTruncationState then truncates to the leader's offset alone
// ("safe", its comment says, as KIP-101's behaviour), keeping the follower's later-epoch records
// below it where the leader holds the answered epoch's: the fetch from there gets a batch
// starting below the follower's log end, and UnexpectedAppendOffsetException ends the fetcher
// thread. 2.1 (KAFKA-7415) answers an epoch before the first with the first epoch's start
// offset on both sides, and the follower truncates there.
inline constexpr std::string_view kFollowerBelowFirstEpochDefect =
    "KAFKA-7415, fixed in Kafka 2.1: before it a follower's own cache answers UNDEFINED for an "
    "epoch before its first, and the follower truncates to the leader's offset only";

// Named in a drain that did not complete because a follower's fetcher stopped after its own log
// jumped: a batch's base offset lies outside its CRC (message format v2), so a byte corrupted in
// a power-lost unsynced tail can raise it, and recovery keeps the batch (2.0.0's
// LogSegment.recover checks CRCs, and offsets only where they go back). The log end then follows
// that batch, past records it never had; truncation by leader epoch compares epochs, and an
// answer at or past that end cuts nothing, so the fetch from there starts inside a batch of the
// leader's (UnexpectedAppendOffsetException ends the fetcher thread).
inline constexpr std::string_view kFollowerOffsetJumpDefect =
    "Kafka's own at every release ksim follows: recovery keeps a batch whose base offset a "
    "corrupted byte raised (the offset is outside the CRC), and the log end follows it";

// Named in a drain that did not complete because a follower's fetcher stopped where its log and
// its leader's hold different batches of one leader epoch: the leader of that epoch lost records
// it had written in it (unsynced, in a power loss) and led on in the same epoch, because the
// controller found it alive and elected no one (its ZooKeeper session outlived the crash, or the
// whole cluster was down and it came back first). KIP-101's OffsetsForLeaderEpoch tells logs
// apart by epoch, so the follower finds nothing to truncate, and the leader's batch starting
// below its log end ends the fetcher thread (UnexpectedAppendOffsetException). Every record is
// meant to be named by its epoch and offset alone; no ZooKeeper-based release detects a
// leader's unclean shutdown (KRaft's KIP-966 does; KAFKA-10527 keeps a Raft leader from
// reinitializing in the same epoch).
inline constexpr std::string_view kSameEpochForkDefect =
    "Kafka's own at every release ksim follows: a leader that lost records of its epoch in a "
    "power loss and is found alive by the controller leads on in that epoch, and KIP-101 tells "
    "logs apart by epoch only";

// Named in a drain that did not complete because a follower whose log is ahead of its leader's
// exits when it may not truncate (unclean election off) and does so again at every restart.
inline constexpr std::string_view kFollowerAheadDefect =
    "KAFKA-7414, fixed in Kafka 2.1: before it a follower ahead of a leader it may not truncate "
    "to exits";

// Named in a drain that did not complete because a leader holds a partition's state at an older
// zkVersion than ZooKeeper's, from a LeaderAndIsr an older controller sent it after its restart
// (the controller's session already gone, as it had not yet heard): the active controller's
// request at the same leader epoch is then refused, and every ISR change the leader writes fails
// BADVERSION ("Cached zkVersion ... not equal to that in zookeeper"). KIP-380's broker epoch in
// every controller request fences the older one off from 2.2.
inline constexpr std::string_view kStaleControlRequestDefect =
    "KAFKA-7235 (KIP-380), fixed in Kafka 2.2: before it a broker takes a controller request "
    "sent without knowing of its restart";

// Named in a drain that did not complete because a leader's log end offset is past the records
// it holds: a record's offset is outside its CRC (message formats v0 to v2), so a byte corrupted
// in an unsynced tail can change it and recovery keeps the record (0.10.0.1 and
// 2.0.0:LogSegment.recover check CRCs, not that offsets increase); a truncation to the high
// watermark then cuts the segment at the first record whose offset is at or above the target,
// the corrupted one, and Log.truncateTo still sets the end offset to the target. No follower can
// fetch up to that end, so none joins the leader's ISR again.
inline constexpr std::string_view kLeaderEndPastRecordsDefect =
    "Kafka's own at every release ksim follows: recovery keeps a record whose offset a corrupted "
    "byte changed (the offset is outside the CRC), and Log.truncateTo sets the log end offset to "
    "its target even when it cut below it";

// Named in a drain that did not complete because an idempotent producer retries, without end, a
// batch whose sequence is below what it has had acknowledged since: the leader remembers only its
// last 5 batches and answers OUT_OF_ORDER_SEQUENCE_NUMBER, which TransactionManager.canRetry
// retries when the batch is not the next sequence, and nothing bounds the retries before 2.1.
inline constexpr std::string_view kOutOfOrderRetryDefect =
    "before Kafka 2.1 (KIP-91's delivery.timeout.ms) an idempotent producer retries for ever a "
    "batch the broker answers OUT_OF_ORDER_SEQUENCE_NUMBER when later sequences were acked";

struct RunResult {
  std::string scenario;  // its name
  std::string variant;
  uint64_t seed = 0;
  // The brokers' release ("0.10.0") and each client's of another release (id -> release), as
  // the trace header records them.
  std::string kafka_version;
  std::map<std::string, std::string> client_kafka_versions;
  CheckResult check;
  std::vector<ExpectationResult> expectations;
  bool ok = false;  // every expectation met
  std::vector<ActionOutput> actions;
  // What the clients warned about their settings, "<client id>: <Kafka's text>" (a producer's
  // key its release does not know: "p1: The configuration enable.idempotence = true was
  // supplied but isn't a known config."), in client order.
  std::vector<std::string> client_warnings;
  // Every consumer of the run (the scenario's, then the console consumers), in that order: which
  // of 0.10's consumers it ran ("group-coordinator" or "zookeeper", ConsumerKindName) and its
  // group ("" : none).
  struct ConsumerSummary {
    std::string client;
    std::string kind;
    std::string group;
  };
  std::vector<ConsumerSummary> consumers;
  FinalAudit audit;
  // The engine's broken rules (check.invariant_violations; Kafka's permitted losses are in
  // check.permitted_losses).
  std::vector<std::string> invariant_violations;
  // Scenario time 0 in trace time (the scenario_start event: the cluster ready, every topic
  // led); an action at at_ms ran at start_us + at_ms * 1000. Reports print trace times.
  TimeUs start_us = 0;
  TimeUs end_us = 0;  // virtual time at the end of the final phase
  // The final phase's drain settled before drain_ms (the `drained` event's `complete`); if not,
  // what it was still waiting for ("t-0 has no live leader", "producer p1 has records without an
  // outcome", "g1 has delivered t-0 up to offset 40 of 57").
  bool drained = false;
  std::string undrained;
  uint64_t trace_hash = 0;
  uint64_t trace_lines = 0;
  std::string trace_bytes;  // with keep_trace_bytes
};

// Runs `scenario` (the base or one variant's merged scenario) once. Errors are about the outside
// world (the trace file cannot be written) or a scenario the loader let through that the cluster
// refuses (kInvalidConfig naming it); an expectation not met is a RunResult with ok = false.
Result<RunResult> RunScenario(const Scenario& scenario, const RunOptions& options);

// The expectation evaluated on `actual`.
bool ExpectationHolds(const Expectation& expectation, int64_t actual);

}  // namespace ksim::sim
