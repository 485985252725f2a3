// ReplicaManager: the partitions a broker holds and everything done to them (Kafka's
// kafka.server.ReplicaManager, 0.10 rules with the 1.x/2.0 pieces docs/broker.md names): the
// controller's LeaderAndIsr and StopReplica, produce (appendRecords with the produce purgatory),
// fetch (fetchMessages with the fetch purgatory), ListOffsets and OffsetsForLeaderEpoch answers,
// ISR shrink checks and ISR writes to ZooKeeper, and the replication-offset-checkpoint.
//
// - Controller requests are fenced by controller epoch (an older one is STALE_CONTROLLER_EPOCH)
//   and run one at a time in arrival order (LeaderAndIsr may first read the topics' configs from
//   /config/topics/<t>, asynchronously).
// - LeaderAndIsr (becomeLeaderOrFollower): a partition state whose leader epoch is not newer than
//   the replica's is refused with STALE_CONTROLLER_EPOCH (Kafka's per-partition answer); one not
//   naming this broker among its replicas is UNKNOWN_TOPIC_OR_PARTITION. The log is created when
//   missing (LogManager::GetOrCreateLog with the topic's config), the leader-epoch cache opened
//   from its directory, the Partition built with its checkpointed HW. Leaders: fetchers removed,
//   MakeLeader. Followers: MakeFollower; when it says so (a new leader; from 2.1 a new epoch of the
//   same one too) the fetcher is removed,
//   the log truncated by the policy (high-watermark: now, to the own HW; leader-epoch: by the
//   fetcher, asking the leader first) and the fetcher added; a follower whose leader is not alive
//   gets no fetcher (Kafka 1.x). Waiting produce/fetch requests are re-checked. A replica whose
//   log, leader-epoch-checkpoint or producer state cannot be created or read for a disk error
//   (or a damaged checkpoint) is answered KAFKA_STORAGE_ERROR and the log dir fails
//   (on_storage_failure: the broker halts), as Kafka 1.x/2.0 takes the dir offline.
// - ISR: every replica.lag.time.max.ms/2 each led partition may propose a shrink; a follower's
//   fetch may propose an expansion. The proposal is written to the partition's state znode with
//   SetData conditional on Partition::zk_version() (Kafka's Partition.updateIsr); success applies
//   it and creates /isr_change_notification/isr_change_<n> (one per change; Kafka batches them
//   every 2.5 s). A write whose answer is CONNECTIONLOSS is issued again once reconnected, as
//   every call of Kafka's ZooKeeper client is (ZkClient.retryUntilConnected to 1.0,
//   KafkaZkClient.retryRequestsUntilConnected from 1.1): the ISR stays in flight meanwhile. When
//   the first attempt was applied, the second is refused BADVERSION and the znode, holding
//   exactly the state written, says it succeeded (ReplicationUtils.checkLeaderAndIsrZkData);
//   BADVERSION otherwise, or SESSIONEXPIRED, abandons it.
// - HW checkpoint: every replica.high.watermark.checkpoint.interval.ms and at Shutdown, one file
//   per log dir over every log in it: a log with no Partition object yet (before the first
//   LeaderAndIsr after a restart) keeps the value read at startup. A periodic write that fails
//   on the disk fails the log dir (on_storage_failure), as Kafka 0.10 halts there.
//
// Ownership: borrows the seams, the LogManager and the MetadataCache; owns the Partitions (which
// borrow LogManager's logs: destroyed first), the purgatories, the fetcher manager and its
// timers. Destroying it is a crash: timers cancelled, nothing written, parked requests dropped;
// ZooKeeper answers that arrive later find a dead liveness token and do nothing. One thread.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/base/clock.h"
#include "core/base/events.h"
#include "core/base/timer_group.h"
#include "core/base/topic_partition_index.h"
#include "core/cluster/metadata_cache.h"
#include "core/cluster/partition.h"
#include "core/config/server_config.h"
#include "core/env/env.h"
#include "core/protocol/messages.h"
#include "core/protocol/network_client.h"
#include "core/server/fetch_session.h"
#include "core/server/purgatory.h"
#include "core/server/replica_fetcher.h"
#include "core/storage/log_manager.h"
#include "core/zk/coordination.h"
#include "core/zk/retrying_coordination.h"

namespace ksim {

// The acks a broker of `release` takes in a Produce (ReplicaManager.isValidRequiredAcks, KIP-1):
// -1, 0 or 1 from 0.9.0 on (anything else is INVALID_REQUIRED_ACKS, nothing appended); any value
// at 0.8.2, where acks=N > 1 waits for N ISR members and acks < -1 waits as -1 does
// (0.8.2.2:Partition.checkEnoughReplicasReachOffset).
bool ValidRequiredAcks(KafkaRelease release, int16_t acks);
// A 0.8.2 broker logs KIP-1's WARN for acks > 1 or < -1 and goes on.
bool AcksDeprecated(KafkaRelease release, int16_t acks);
// That WARN, Kafka's words (0.8.2.2:KafkaApis.handleProducerOrOffsetCommitRequest); ksim knows
// the client only by its node, which stands for both its client id and its address.
std::string AcksDeprecatedWarning(std::string_view client, int16_t acks);

struct ReplicaManagerSeams {
  Env& env;
  const Clock& clock;
  Timers& timers;
  Coordination& zk;
  LogManager& logs;
  MetadataCache& metadata;
  NetworkClient& network;
  EventSink events;
  // The log directory failed (Kafka's LogDirFailureChannel): a log went offline, a checkpoint
  // or the epoch/producer state could not be written or read. With its one log directory failed
  // the broker must stop (the Broker halts). May be empty.
  std::function<void(const Status&)> on_storage_failure;
  // A follower found its leader's log shorter than its own where truncating is not allowed
  // (MayTruncateBelowLeader): the broker exits (Kafka 0.10.0 to 2.0). May be empty.
  std::function<void(const Status&)> on_fatal_exit;
};

class ReplicaManager {
 public:
  // `election_policy`: a scenario's policy.election (empty: each topic's own); it stands for the
  // topic's unclean.leader.election.enable in MayTruncateBelowLeader, as in the controller.
  ReplicaManager(const BrokerConfig& config, TruncationPolicy truncation,
                 std::string election_policy, ReplicaManagerSeams seams);
  // Without Shutdown(): a crash (nothing written).
  ~ReplicaManager();
  ReplicaManager(const ReplicaManager&) = delete;
  ReplicaManager& operator=(const ReplicaManager&) = delete;

  // Reads every log dir's HW checkpoint (REQUIRES: the LogManager started) and schedules the ISR
  // and checkpoint tasks. An unreadable checkpoint is reported and counts as empty (Kafka warns).
  Status Startup();
  // Clean stop: fetchers and tasks stopped, parked requests dropped, HW checkpoint written,
  // partitions released (before LogManager::Shutdown closes their logs).
  Status Shutdown();

  // ---- Controller requests (each answer through `done`, asynchronously or not) -------------
  void HandleLeaderAndIsr(LeaderAndIsrRequest request,
                          std::function<void(LeaderAndIsrResponse)> done);
  void HandleStopReplica(StopReplicaRequest request, std::function<void(StopReplicaResponse)> done);
  void HandleUpdateMetadata(UpdateMetadataRequest request,
                            std::function<void(UpdateMetadataResponse)> done);

  // ---- Topic config changes (Kafka's DynamicConfigManager; 0.8.2's TopicConfigManager) --------
  // Lists /config/changes with a child watch (again, when that watch fires) and
  // applies each notification newer than the last one applied, in order: the topic's config is
  // read from /config/topics/<t>, and a topic this broker holds replicas of or has cached takes it
  // (its logs' LogConfig, its partitions' min.insync.replicas, its cached TopicConfig).
  // Notifications older than 15 minutes are deleted on the way, as Kafka's purge does. A process
  // starts from the first notification (Kafka's lastExecutedChange = -1). Called when the broker
  // sets up its paths in a new session (the watch ends with a session).
  void WatchConfigChanges();

  // ---- Client and replica requests ----------------------------------------------------------
  // acks=0: `done` is never called; when some partition failed, `failed_without_answer` is
  // called instead (KafkaApis.handleProducerRequest closes the connection then, at every modelled
  // release, so that the producer learns something failed and refreshes its metadata).
  void HandleProduce(ProduceRequest request, std::function<void(ProduceResponse)> done,
                     std::function<void()> failed_without_answer = nullptr);
  void HandleFetch(FetchRequest request, std::function<void(FetchResponse)> done);
  // KafkaApis.handleFetchRequest with a session context (FetchManager::NewContext). An
  // incremental fetch reads its session's partitions not held quiet (FetchSession::to_read), holds
  // those it finds quiet, and sets `context.order` to those the answer names; parked, it watches
  // the partitions it reads and, through the session, each held one that changes. Any other is
  // HandleFetch above. `done` gets the answer and the context (for FetchManager::Answer).
  using SessionDone = std::function<void(FetchResponse, FetchContext&)>;
  void HandleFetch(FetchRequest request, FetchContext context, SessionDone done);
  ListOffsetsResponse HandleListOffsets(const ListOffsetsRequest& request);
  OffsetsForLeaderEpochResponse HandleOffsetsForLeaderEpoch(
      const OffsetsForLeaderEpochRequest& request);

  // ---- State --------------------------------------------------------------------------------
  Status CheckpointHighWatermarks();
  Partition* GetPartition(const TopicPartition& tp);
  // In TopicPartition order; changes when a partition is added or removed (partitions_version).
  // Each partition's list_index() is its place in it.
  const std::vector<const Partition*>& Partitions() const;
  // Moves whenever Partitions() changes.
  uint64_t partitions_version() const { return partitions_version_; }
  // How a follower's log is truncated when it starts following: the broker's policy, except to its
  // high watermark below inter.broker.protocol.version 0.11.0-IV2.
  TruncationPolicy truncation() const { return truncation_; }
  // Partitions the fetch path has read or answered (ReadPartition calls): a quiet partition of an
  // incremental fetch session costs none.
  uint64_t fetch_partition_reads() const { return fetch_partition_reads_; }
  // The partitions whose observable state may have moved since the last call
  // (Partition::set_change_list), in the order they first moved, into `out` (replaced); their
  // marks are cleared. A partition added since the last call is among them.
  void TakeChangedPartitions(std::vector<const Partition*>& out);
  bool has_changed_partitions() const { return !changed_partitions_.empty(); }
  // Partitions this broker leads (for controlled shutdown's trace).
  std::vector<TopicPartition> LedPartitions() const;
  ControllerEpoch controller_epoch() const { return controller_epoch_; }
  // The controller epoch of the LeaderAndIsr whose state of `tp` this replica took last (nullopt:
  // none since start-up), for the drain's diagnosis of a stale zkVersion.
  std::optional<ControllerEpoch> state_controller_epoch(const TopicPartition& tp) const;
  ReplicaFetcherManager& fetchers() { return fetchers_; }
  const Purgatory& produce_purgatory() const { return produce_purgatory_; }
  const Purgatory& fetch_purgatory() const { return fetch_purgatory_; }
  // The HWs read from the checkpoints at startup.
  const std::map<TopicPartition, Offset>& checkpointed_high_watermarks() const {
    return checkpointed_hw_;
  }
  int64_t isr_writes() const { return isr_writes_; }

 private:
  // Runs controller requests one after another.
  void EnqueueControllerWork(std::function<void(std::function<void()> finished)> work);
  void RunNextControllerWork();
  // Reads /config/topics/<t> for each topic not cached yet, then calls `then`.
  void FetchTopicConfigs(std::vector<std::string> topics, std::function<void()> then);
  // WatchConfigChanges' steps: the notifications `names` from `index` on, one after another.
  void ApplyConfigChanges(std::shared_ptr<const std::vector<std::string>> names, size_t index);
  void ConfigChangesDone();
  // A topic's new config, from its znode's data (kNoNode: no overrides).
  void ApplyTopicConfig(const std::string& topic, const Result<ZnodeData>& data);
  // The topic's config, or the broker's defaults when it could not be read.
  const TopicConfig& ConfigOf(const std::string& topic) const;
  // May a follower of `topic` cut its log back to a leader's shorter end? Kafka 0.10.0 to 2.0:
  // only under unclean election (ReplicaFetcherThread.handleOffsetOutOfRange reads the topic's
  // unclean.leader.election.enable; here the policy in effect: `unclean`, or `longest-log`,
  // which may elect outside the ISR too); from 2.1 always (KAFKA-7414).
  bool MayTruncateBelowLeader(const std::string& topic) const;
  LeaderAndIsrResponse BecomeLeaderOrFollower(const LeaderAndIsrRequest& request);
  Result<Partition*> GetOrCreatePartition(const TopicPartition& tp);
  void MakeFollowers(const std::vector<const LeaderAndIsrPartitionState*>& states,
                     const LeaderAndIsrRequest& request, std::map<TopicPartition, Errc>& errors);
  std::optional<std::string> LeaderHost(BrokerId leader, const LeaderAndIsrRequest* request) const;
  void StopPartition(const TopicPartition& tp, bool delete_log);
  // After an insertion into or removal from partitions_: moves partitions_version_; Partitions()
  // lists them again when next asked (once for a LeaderAndIsr that adds thousands).
  void PartitionsAddedOrRemoved();

  // Fetch: reads every partition (no follower update); `partitions` (may be null) gets the
  // Partition each was read from (null: unknown), by request index (those it holds already, a
  // prefix GetPartition resolved, are read from).
  std::vector<FetchPartitionResponse> ReadFromLocalLog(
      const FetchRequest& request, std::vector<Partition*>* partitions = nullptr);
  // Whether `request` would park with every partition read to nothing (it may wait, and each
  // partition's online leader here has nothing at the fetch offset): then true, with the
  // Partitions in `partitions` by request index, and nothing read. Else false, with those
  // resolved before the answer was known. REQUIRES: `partitions` empty.
  bool WouldParkWithNothingRead(const FetchRequest& request, std::vector<Partition*>* partitions);
  // One partition of a fetch, given GetPartition(asked.tp), into `response` (default-constructed:
  // built in place in the answer's vector); one with nothing to give (Partition::ReadsNothingAt)
  // is answered without a read.
  void ReadPartition(const FetchPartition& asked, Partition* partition, bool from_follower,
                     FetchPartitionResponse& response);
  // A parked fetch's check: ReadFromLocalLog's answer when FetchCanCompleteNow would accept it,
  // else nullopt, having read only the partitions with something new (Partition::HasNothingNewAt
  // tells the others from their offsets, as Kafka's DelayedFetch.tryComplete does). An answer
  // reads every partition in request order, as ReadFromLocalLog reads them.
  // `resolved` keeps the Partition of each of the request's partitions across the checks of one
  // parked fetch (looked up again only after a partition was added or removed).
  // `waiting` (if given) learns how it waits when it cannot complete (DelayedFetch::Waiting).
  struct ResolvedPartitions {
    static constexpr uint64_t kNever = UINT64_MAX;
    static constexpr size_t kNamedTwice = SIZE_MAX;
    uint64_t version = kNever;           // partitions_version_ when resolved
    std::vector<Partition*> partitions;  // by request index; null: unknown here
    // Each partition's request index (kNamedTwice: more than one), made at the key check after
    // the first kKeyChecksBeforeIndex (each of those walks them all), counted in `key_checks`.
    std::unordered_map<TopicPartition, size_t> index;
    uint32_t key_checks = 0;
  };
  static constexpr uint32_t kKeyChecksBeforeIndex = 8;
  std::optional<std::vector<FetchPartitionResponse>> ReadFromLocalLogIfReady(
      const FetchRequest& request, ResolvedPartitions& resolved,
      DelayedFetch::Waiting* waiting = nullptr);
  // DelayedFetch::StillNothing of a parked fetch read with ReadFromLocalLogIfReady.
  bool StillNothing(const FetchRequest& request, ResolvedPartitions& resolved,
                    const TopicPartition& key, const DelayedFetch::Waiting& waiting);
  // A follower's fetch of `partition` at `asked` (updateFollowerLogReadResults, with the ISR
  // write and the re-checks it calls for); true when it moved the follower's LEO, the HW or the
  // ISR.
  bool UpdateFollower(BrokerId replica, const FetchPartition& asked, Partition& partition);
  // A parked incremental fetch's check (`always`: its expiration): the answer over the session's
  // partitions that are not quiet, as ReadFromLocalLogIfReady gives it, setting `context.order`;
  // nullopt when it cannot complete yet.
  std::optional<std::vector<FetchPartitionResponse>> ReadSessionIfReady(
      const FetchRequest& parked, FetchContext& context, bool always,
      DelayedFetch::Waiting* waiting = nullptr);
  // DelayedFetch::StillNothing of a parked incremental fetch.
  bool SessionStillNothing(const FetchRequest& parked, const FetchContext& context,
                           const TopicPartition& key, const DelayedFetch::Waiting& waiting) const;
  // Re-checks parked requests on `tp` (after anything that may move its HW or LEO).
  void PartitionChanged(const TopicPartition& tp);

  // ISR propagation.
  void MaybeShrinkIsr();
  void WriteIsr(Partition& partition, std::vector<BrokerId> isr);
  void FinishIsrWrite(const TopicPartition& tp, uint64_t proposal, const std::vector<BrokerId>& isr,
                      Result<int32_t> version);

  void ScheduleIsrCheck();
  void ScheduleHighWatermarkCheckpoint();
  // The log dir failed (Kafka's LogDirFailureChannel.maybeAddOfflineLogDir): with the broker's
  // only dir gone, seams_.on_storage_failure halts it.
  void StorageFailure(const Status& error);
  // Wraps a ZooKeeper callback so that it does nothing once this object is gone.
  template <class F>
  auto Guarded(F f);

  const BrokerConfig& config_;
  TruncationPolicy truncation_;
  std::string election_policy_;
  ReplicaManagerSeams seams_;
  // seams_.zk with every call issued again on CONNECTIONLOSS, as Kafka's ZooKeeper client does:
  // the ISR writes, their checks and their notifications, the topics' config reads.
  RetryingCoordination zk_;
  BrokerId local_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  TimerGroup timers_;
  ControllerEpoch controller_epoch_{0};
  std::map<TopicPartition, ControllerEpoch> state_controller_epochs_;
  std::map<TopicPartition, Offset> checkpointed_hw_;
  // Logs whose leader-epoch checkpoint this process has loaded (Kafka loads each once, with the
  // log; a replica stopped and made again keeps the cache it had).
  std::set<TopicPartition> epochs_loaded_;
  TopicConfig default_topic_config_;
  std::map<std::string, TopicConfig> topic_configs_;
  // Config change notifications: the last one applied (-1: none), and whether a listing is under
  // way (`config_changes_again_`: another was asked for meanwhile).
  int64_t last_config_change_ = -1;
  bool config_changes_running_ = false;
  bool config_changes_again_ = false;
  std::deque<std::function<void(std::function<void()>)>> controller_work_;
  bool controller_work_running_ = false;
  // Partitions before the fetchers and purgatories that look them up: destroyed after them.
  // `partitions_` in order (for walks over them); `partition_index_` the same pointers by topic
  // for GetPartition on the fetch path (a tree lookup compares topic strings at every level);
  // `partition_list_` them in order again, for Partitions() after every simulated event (a tree
  // walk misses the cache at every node), rebuilt lazily after an insertion or removal.
  // Declared before partitions_ (destroyed after them: a marked Partition leaves it when
  // destroyed).
  std::vector<Partition*> changed_partitions_;
  std::map<TopicPartition, std::unique_ptr<Partition>> partitions_;
  TopicPartitionIndex<Partition> partition_index_;
  mutable std::vector<const Partition*> partition_list_;
  mutable bool partition_list_stale_ = false;
  // Moves whenever a partition is added or removed (a Partition* kept from an earlier lookup is
  // valid while it stays).
  uint64_t partitions_version_ = 0;
  uint64_t fetch_partition_reads_ = 0;
  std::map<TopicPartition, uint64_t> isr_proposals_;  // partition -> proposal number in flight
  uint64_t next_isr_proposal_ = 1;
  int64_t isr_writes_ = 0;
  Purgatory produce_purgatory_;
  Purgatory fetch_purgatory_;
  ReplicaFetcherManager fetchers_;
  bool shut_down_ = false;
};

}  // namespace ksim
