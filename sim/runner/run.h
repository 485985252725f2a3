// ScenarioRun: the state of one RunScenario call (internal to sim/runner/runner*.cc). It owns
// the World, the RunObserver, the History, the Cluster, the scenario's clients and the CliTools,
// in that order (destroyed in reverse: clients before the Cluster, everything before the World),
// and walks the phases sim/runner/runner.h lists: Setup (world, cluster, topics, clients),
// the actions at their times (scenario_runner_actions.cc), the final phase, the audit, the
// check and the verdict.
//
// Scenario time: a scenario's `at_ms` and `start_ms` count from t0, the moment the cluster is
// ready (every broker registered, a controller active, every `topics` entry led), rounded up to
// a whole millisecond; the trace's `scenario_start` event on node "scenario" is written at t0.
// Single-threaded; used once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/base/status.h"
#include "core/server/replica_fetcher.h"
#include "sim/check/history.h"
#include "sim/check/run_observer.h"
#include "sim/cluster/auditor.h"
#include "sim/cluster/cli_tools.h"
#include "sim/cluster/clients.h"
#include "sim/cluster/cluster.h"
#include "sim/runner/runner.h"
#include "sim/scenario/scenario.h"
#include "sim/world/world.h"

namespace ksim::sim {

class ScenarioRun {
 public:
  ScenarioRun(const Scenario& scenario, const RunOptions& options);
  ~ScenarioRun();
  ScenarioRun(const ScenarioRun&) = delete;
  ScenarioRun& operator=(const ScenarioRun&) = delete;

  Result<RunResult> Execute();

 private:
  // --- scenario_runner.cc ---
  Status Setup();
  Status BuildWorld();
  Status StartCluster();
  Status CreateTopics();
  Status CreateClients();
  // Applies each cluster.network.links override whose two nodes exist and was not applied yet.
  void ApplyLinkOverrides();
  // The middle of the run under a RunDriver (serve, replay) instead of duration_ms.
  Status RunDriven(RunDriver& driver);
  // Runs the world to absolute time `target_us`, reporting progress on the way.
  void RunTo(TimeUs target_us);
  void ReportProgress();
  void RunFinalPhase();
  void RestartAll();
  // Every broker whose node is down (or up without a process) is restarted.
  void RestartDownBrokers();
  // Why the drain is not over ("" when it is): an audited partition not led, its HW short of its
  // log end or a running replica out of its ISR (Unsettled); a producer with records pending; a
  // consumer group behind its partitions' high watermarks.
  std::string Unsettled();
  // Unsettled's verdict on one partition (empty: settled).
  std::string UnsettledPartition(const TopicPartition& tp);
  // ": the active controller missed its restart ..." when `broker`'s registration in ZooKeeper is
  // newer than the one the active controller read (KAFKA-1120); "" otherwise.
  std::string MissedRestart(BrokerId broker);
  // Records, at every progress step and drain check, the running brokers whose restart the
  // active controller has missed (MissedRestart), with when that was first seen.
  void NoteMissedRestarts();
  // ": no member of `group` is assigned it ..." when no running member of the group has `tp`
  // assigned and the controller missed a broker's restart during the run: such a broker hears
  // only the UpdateMetadata of later steps, its metadata answers list some partitions only, and
  // a group leader that learned the topic from it assigns those alone until its next metadata
  // refresh (metadata.max.age.ms), naming kMissedRestartDefect; "" otherwise.
  std::string UnassignedAfterAMissedRestart(const std::string& group, const TopicPartition& tp);
  // ": its replica fetcher for broker-L stopped ..." when `replica`'s fetcher from `leader` ended
  // (ReplicaFetcherManager::StoppedFetcher), naming kSameLeaderDefect, kBelowFirstEpochDefect,
  // kUnrecordedEpochDefect, kUnheldEpochDefect, kForgottenEpochStartDefect,
  // kSameEpochForkDefect, kLeaderKeptBelowUndefinedCutDefect, kFollowerBelowFirstEpochDefect or
  // kFollowerOffsetJumpDefect when that is why; else "".
  // When nothing names a cause now, the cause named when the fetcher stopped
  // (NoteFetcherStop), if any: the leader may since have truncated or lost what showed it.
  std::string FetcherStopped(BrokerId replica, BrokerId leader);
  // What names why `stopped` happened ("" when nothing does), read from both replicas as they
  // are now.
  std::string FetcherStoppedBecause(Broker& follower, const ReplicaFetcherManager::Stopped& stopped,
                                    BrokerId replica, BrokerId leader);
  // Told by the run observer as `replica`'s fetcher from `leader` stops: keeps what
  // FetcherStoppedBecause names at that moment, for the drain.
  void NoteFetcherStop(BrokerId replica, BrokerId leader);
  // ": its replica fetcher for broker-L stopped at ERROR on t-N".
  static std::string StopText(BrokerId leader, const ReplicaFetcherManager::Stopped& stopped);
  // By (replica, leader): the last stop's text and what named its cause then.
  std::map<std::pair<BrokerId, BrokerId>, std::pair<std::string, std::string>> stops_named_;
  // ", having been answered UNDEFINED ..." when the stopped fetcher's leader answered its
  // OffsetsForLeaderEpoch for epoch `asked` of `tp` UNDEFINED
  // (ReplicaFetcherManager::Stopped::undefined_answer_for) and an epoch before `leader`'s first
  // does not explain it (AskedBelowFirstEpoch's): the leader had not recorded an epoch as late
  // as the one asked (kUnrecordedEpochDefect); else "".
  std::string AnsweredUndefinedForAnUnrecordedEpoch(LeaderEpoch asked, const TopicPartition& tp,
                                                    BrokerId leader);
  // ", having asked its leader for the end of epoch E ..." when `replica` truncates by leader
  // epoch, its latest epoch of `tp` is before the first one `leader`'s cache holds, and the
  // leader's release answers that UNDEFINED (kBelowFirstEpochDefect); else "".
  std::string AskedBelowFirstEpoch(const TopicPartition& tp, BrokerId replica, BrokerId leader);
  // `broker`'s replica of `tp` in its running process; null when it is down (or kNoBroker) or
  // holds no replica of `tp`.
  const Partition* RunningReplica(BrokerId broker, const TopicPartition& tp);
  // A follower truncating by leader epoch and its leader's replica of `tp`, both running.
  struct EpochAsk {
    const Partition& followed;
    const Partition& led;
  };
  std::optional<EpochAsk> EpochAskOf(const TopicPartition& tp, BrokerId replica, BrokerId leader);
  // ", having asked its leader for the end of epoch E, which the leader never had ..." when
  // `replica` truncates by leader epoch, its latest epoch of `tp` is not in `leader`'s cache
  // while a later one is, and the leader's release answers with an offset alone
  // (kUnheldEpochDefect); else "".
  std::string AskedForAnUnheldEpoch(const TopicPartition& tp, BrokerId replica, BrokerId leader);
  // ", its leader broker-L's epoch cache says epoch E began at offset S, where its log holds
  // that epoch's batches from B ..." when `leader`'s cache of `tp` starts an epoch after the
  // first batch its log holds of that epoch (kForgottenEpochStartDefect); else "". Reads the
  // leader's log under an inspection of its disk, so the run is not changed.
  std::string ForgottenEpochStart(const TopicPartition& tp, BrokerId leader);
  // ", its leader broker-L wrote again in epoch E ..." when `replica` truncates by leader epoch
  // and holds a batch of some epoch whose offsets overlap a batch of the same epoch in
  // `leader`'s log with other bounds: the leader of that epoch lost records of it and led on in
  // it (kSameEpochForkDefect); else "". Reads both logs under an inspection of their disks.
  std::string SameEpochFork(const TopicPartition& tp, BrokerId replica, BrokerId leader);
  // ", where it holds epoch E's batch ... and its leader an older epoch's batch ..." when
  // `replica` truncates by leader epoch and holds a batch of an epoch that `leader`'s cache says
  // began past that batch's start, where the leader holds an older epoch's batch that its own
  // truncation to its high watermark after an UNDEFINED answer kept
  // (kLeaderKeptBelowUndefinedCutDefect); else "".
  std::string LeaderKeptAnOlderEpoch(const TopicPartition& tp, BrokerId replica, BrokerId leader);
  // ", having asked its leader for the end of epoch E, answered epoch P ..." when `replica`
  // truncates by leader epoch, its leader's answer names an epoch before the first one
  // `replica`'s own cache holds, and `replica`'s release looks that up as UNDEFINED, so that it
  // truncated to the leader's offset only and kept records of its later epochs below it
  // (kFollowerBelowFirstEpochDefect); else "".
  std::string AnsweredBelowOwnFirstEpoch(const TopicPartition& tp, BrokerId replica,
                                         BrokerId leader);
  // ", where its own log jumps from offset A to a batch at B ..." when `replica`'s log of `tp`
  // has a gap between two batches (a base offset raised by a corrupted byte and kept by the
  // recovery) and `leader` holds a batch starting below `replica`'s log end and reaching past
  // it (kFollowerOffsetJumpDefect); else "". Reads both logs under an inspection of their disks.
  std::string FollowerOffsetJumped(const TopicPartition& tp, BrokerId replica, BrokerId leader);
  // A batch's last offset and partition leader epoch.
  struct EpochSpan {
    Offset last;
    LeaderEpoch epoch;
  };
  // `replica`'s batches that carry a partition leader epoch, by base offset, read under an
  // inspection of `broker`'s disk; nullopt when the log cannot be read.
  std::optional<std::map<Offset, EpochSpan>> EpochBatches(BrokerId broker,
                                                          const Partition& replica);
  // Both logs' EpochBatches for a follower truncating by leader epoch and its running leader
  // (EpochAskOf); nullopt when either is not there or cannot be read.
  struct EpochLogs {
    const Partition& led;
    std::map<Offset, EpochSpan> followed_batches;
    std::map<Offset, EpochSpan> led_batches;
  };
  std::optional<EpochLogs> EpochLogsOf(const TopicPartition& tp, BrokerId replica, BrokerId leader);
  // ": it exits at every start ..." when `replica`'s process last exited because it may not
  // truncate below its leader (kFollowerAheadDefect), else "".
  std::string ExitsAtEveryStart(BrokerId replica);
  // ": its leader broker-L holds tp's state at zkVersion ..." when `leader`'s replica of `tp`
  // caches another version of the state znode than ZooKeeper holds at the same leader epoch:
  // every ISR change it writes fails BADVERSION until a later leader epoch. Names
  // kStaleControlRequestDefect when it took that state from an older controller than the one
  // whose request it refused since; else "".
  std::string StaleZkVersion(const TopicPartition& tp, BrokerId leader);
  // ": its leader broker-L's log of tp ends at offset E but holds records only below R ..." when
  // `leader`'s log end offset is past its last record (kLeaderEndPastRecordsDefect); else "".
  std::string LeaderEndPastRecords(const TopicPartition& tp, BrokerId leader);
  // ": <the producer's oldest pending batch>" for a producer not done, naming
  // kOutOfOrderRetryDefect when that is why; "" when it has no batch.
  std::string PendingBatch(ProducerClient& client);
  std::string Undrained();
  // Undrained's verdict past the partitions: the producers' outcomes and the consumer groups.
  std::string UndrainedClients();
  bool Drained();
  Status Finish(RunResult& result);
  std::vector<std::string> AuditedTopics() const;

  // --- scenario_runner_actions.cc ---
  void RunAction(const Action& action);
  // The broker a target names now (a leader_of target adds " (broker-<id>)" to `description`
  // and "broker" to `fields`); nullopt with `reason` when it cannot be resolved.
  std::optional<BrokerId> ResolveBroker(const Target& target, std::string& description,
                                        TraceFields& fields, std::string& reason);
  // Writes the `action` event and opens the action's ActionOutput.
  void BeginAction(const Action& action, std::string description, TraceFields fields);
  void Skip(const Action& action, const std::string& reason);
  void CliOutput(size_t index, const std::string& line);
  void RunLifecycle(const Action& action, const Target& target, NodeLifecycle change);
  void RunSlow(const Action& action, const SlowAction& slow);
  void RunPartition(const Action& action, const PartitionAction& partition);
  void RunCrashReplicas(const Action& action, const CrashReplicasAction& crash);
  void RunDiskFault(const Action& action, const DiskFaultAction& fault);
  void RunZkExpire(const Action& action, const Target& target);
  void RunZooKeeper(const Action& action, bool up);
  void RunProduce(const Action& action, const ProduceAction& produce);
  void RunConfig(const Action& action, const ConfigAction& config);
  void RunCli(const Action& action, const CliAction& cli);
  ProducerClient* FindProducer(const std::string& id);

  const Scenario& scenario_;
  const RunOptions& options_;
  uint64_t seed_ = 0;

  std::unique_ptr<World> world_;
  std::unique_ptr<RunObserver> observer_;
  std::unique_ptr<History> history_;
  std::unique_ptr<Cluster> cluster_;
  std::vector<std::unique_ptr<ProducerClient>> producers_;
  std::vector<std::unique_ptr<ConsumerClient>> consumers_;
  std::unique_ptr<CliTools> cli_;

  TimeUs t0_us_ = 0;     // scenario time 0 (see above)
  TimeUs total_us_ = 0;  // duration plus drain, for progress
  TimeUs next_progress_us_ = 0;
  std::vector<bool> links_applied_;  // per cluster.network.links entry
  std::vector<ActionOutput> actions_;
  std::vector<std::string> client_warnings_;  // RunResult::client_warnings
  std::map<size_t, size_t> action_slot_;      // action index -> position in actions_
  std::set<BrokerId> full_disks_;             // brokers whose disk a `full` fault capped
  // Drain bookkeeping: history ops read so far, and per (group, partition) the offset after the
  // highest one delivered.
  size_t drain_scanned_ = 0;
  std::string undrained_;  // Undrained() when the final phase ended
  // The partition Unsettled or Drained last found unsettled: Drained() walks on from it.
  std::optional<TopicPartition> unsettled_hint_;
  ZooKeeperPartitions zk_partitions_;  // the audited topics' partitions, for the drain checks
  TimeUs final_start_us_ = INT64_MAX;  // when the final phase began
  std::map<std::pair<std::string, TopicPartition>, Offset> delivered_next_;
  std::map<BrokerId, TimeUs> missed_restarts_;  // NoteMissedRestarts: broker -> first seen
};

}  // namespace ksim::sim
