// The trace's vocabulary: every event name (`ev`), every field name and every fixed node name a
// trace line can carry, spelled once (docs/trace-format.md, "Vocabulary", has the same table, and
// a test compares the two). Whatever writes a trace line (core's
// EventSink emitters, sim::World, sim::History, the scenario runner, the checker) and whatever
// reads one (the run observer, the invariant and history checkers, the viewer's model) names
// events and fields through these constants, never by a string literal of its own:
//
//   Emit(events_, ev::kLeaderElected, {{field::kTopic, tp.topic}, {field::kLeader, leader}});
//   if (event.ev == ev::kLeaderElected) ...
//
// Adding an event or a field: a line in the list below, a row in docs/trace-format.md. Each name
// is a PlainName (core/base/plain_name.h): a string_view whose text is checked, when the program
// is compiled, to need no escape in JSON, so an event writes it without scanning it.
// Constants only; no I/O.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/base/plain_name.h"
#include "core/base/types.h"

// X(constant, "name") for every event name, sorted by name.
#define KSIM_TRACE_EVENTS(X)                                  \
  X(kAck, "ack")                                              \
  X(kAction, "action")                                        \
  X(kActionSkipped, "action_skipped")                         \
  X(kAppend, "append")                                        \
  X(kBatchExpired, "batch_expired")                           \
  X(kBecomeFollower, "become_follower")                       \
  X(kBecomeLeader, "become_leader")                           \
  X(kBrokerJoined, "broker_joined")                           \
  X(kBrokerLeft, "broker_left")                               \
  X(kBrokerRegistered, "broker_registered")                   \
  X(kBrokerSessionExpired, "broker_session_expired")          \
  X(kBrokerStartupFailed, "broker_startup_failed")            \
  X(kCliOutput, "cli_output")                                 \
  X(kCommit, "commit")                                        \
  X(kConfigWarning, "config_warning")                         \
  X(kConsumerRegistered, "consumer_registered")               \
  X(kControlledShutdown, "controlled_shutdown")               \
  X(kControllerElected, "controller_elected")                 \
  X(kControllerResigned, "controller_resigned")               \
  X(kControllerZkError, "controller_zk_error")                \
  X(kCoordinatorFound, "coordinator_found")                   \
  X(kCoordinatorUnknown, "coordinator_unknown")               \
  X(kCrash, "crash")                                          \
  X(kDeliver, "deliver")                                      \
  X(kDiskFault, "disk_fault")                                 \
  X(kDrained, "drained")                                      \
  X(kDuplicateBatch, "duplicate_batch")                       \
  X(kError, "error")                                          \
  X(kExtClose, "ext_close")                                   \
  X(kExtConnect, "ext_connect")                               \
  X(kExtData, "ext_data")                                     \
  X(kExtError, "ext_error")                                   \
  X(kExtListen, "ext_listen")                                 \
  X(kExtRequest, "ext_request")                               \
  X(kFetchError, "fetch_error")                               \
  X(kFetchSessionReset, "fetch_session_reset")                \
  X(kFinalPhase, "final_phase")                               \
  X(kGroupJoinFailed, "group_join_failed")                    \
  X(kGroupJoined, "group_joined")                             \
  X(kGroupLoadError, "group_load_error")                      \
  X(kGroupMemberAdded, "group_member_added")                  \
  X(kGroupMemberRemoved, "group_member_removed")              \
  X(kGroupPartitionLoaded, "group_partition_loaded")          \
  X(kGroupPartitionLoading, "group_partition_loading")        \
  X(kGroupPartitionUnloaded, "group_partition_unloaded")      \
  X(kGroupState, "group_state")                               \
  X(kHeal, "heal")                                            \
  X(kHw, "hw")                                                \
  X(kHwCheckpointError, "hw_checkpoint_error")                \
  X(kInvariantViolation, "invariant_violation")               \
  X(kIsolate, "isolate")                                      \
  X(kIsrExpand, "isr_expand")                                 \
  X(kIsrShrink, "isr_shrink")                                 \
  X(kIsrUpdateFailed, "isr_update_failed")                    \
  X(kLeaderElected, "leader_elected")                         \
  X(kLogDeleteError, "log_delete_error")                      \
  X(kLogManagerShutdownError, "log_manager_shutdown_error")   \
  X(kMetadataUpdate, "metadata_update")                       \
  X(kMsgDeliver, "msg_deliver")                               \
  X(kMsgDisconnect, "msg_disconnect")                         \
  X(kMsgDrop, "msg_drop")                                     \
  X(kMsgHold, "msg_hold")                                     \
  X(kMsgSend, "msg_send")                                     \
  X(kOffsetCommit, "offset_commit")                           \
  X(kOffsetFetched, "offset_fetched")                         \
  X(kOffsetReset, "offset_reset")                             \
  X(kOffsetsCommitted, "offsets_committed")                   \
  X(kOffsetsTopicCreate, "offsets_topic_create")              \
  X(kPartition, "partition")                                  \
  X(kPartitionCreateError, "partition_create_error")          \
  X(kPartitionOffline, "partition_offline")                   \
  X(kPartitionsAssigned, "partitions_assigned")               \
  X(kPartitionsRevoked, "partitions_revoked")                 \
  X(kPoll, "poll")                                            \
  X(kProduceAcksDeprecated, "produce_acks_deprecated")        \
  X(kProduceBatch, "produce_batch")                           \
  X(kProduceRetry, "produce_retry")                           \
  X(kProducerId, "producer_id")                               \
  X(kProducerIdAssigned, "producer_id_assigned")              \
  X(kProducerIdBlock, "producer_id_block")                    \
  X(kProducerIdBlockError, "producer_id_block_error")         \
  X(kRebalanceAttempt, "rebalance_attempt")                   \
  X(kRebalanceFailed, "rebalance_failed")                     \
  X(kReplicaFetchError, "replica_fetch_error")                \
  X(kReplicaFetchSessionReset, "replica_fetch_session_reset") \
  X(kReplicaFetcherStopped, "replica_fetcher_stopped")        \
  X(kRestart, "restart")                                      \
  X(kScenarioStart, "scenario_start")                         \
  X(kSend, "send")                                            \
  X(kServeStart, "serve_start")                               \
  X(kServeStop, "serve_stop")                                 \
  X(kShutdown, "shutdown")                                    \
  X(kSlow, "slow")                                            \
  X(kTopicAutoCreate, "topic_auto_create")                    \
  X(kTopicConfigChanged, "topic_config_changed")              \
  X(kTopicConfigError, "topic_config_error")                  \
  X(kTopicDeleted, "topic_deleted")                           \
  X(kTopicDeletionStarted, "topic_deletion_started")          \
  X(kTruncate, "truncate")                                    \
  X(kVerdict, "verdict")                                      \
  X(kZkDown, "zk_down")                                       \
  X(kZkExpire, "zk_expire")                                   \
  X(kZkSessionClosed, "zk_session_closed")                    \
  X(kZkSessionCreated, "zk_session_created")                  \
  X(kZkSessionExpired, "zk_session_expired")                  \
  X(kZkSessionResumed, "zk_session_resumed")                  \
  X(kZkUp, "zk_up")

// X(constant, "name") for every field name of an event line (and of the verdict's nested
// objects), sorted by name.
#define KSIM_TRACE_FIELDS(X)                  \
  X(kAcks, "acks")                            \
  X(kActual, "actual")                        \
  X(kAdded, "added")                          \
  X(kAnomalies, "anomalies")                  \
  X(kApi, "api")                              \
  X(kAtMs, "at_ms")                           \
  X(kAttempt, "attempt")                      \
  X(kAudit, "audit")                          \
  X(kBackoffMs, "backoff_ms")                 \
  X(kBaseSequence, "base_sequence")           \
  X(kBlockEnd, "block_end")                   \
  X(kBlockStart, "block_start")               \
  X(kBroker, "broker")                        \
  X(kBrokers, "brokers")                      \
  X(kBy, "by")                                \
  X(kCause, "cause")                          \
  X(kCauseTUs, "cause_t_us")                  \
  X(kClient, "client")                        \
  X(kCommand, "command")                      \
  X(kCommittedEpoch, "committed_epoch")       \
  X(kCommittedUs, "committed_us")             \
  X(kComplete, "complete")                    \
  X(kConfig, "config")                        \
  X(kConn, "conn")                            \
  X(kConsumer, "consumer")                    \
  X(kConsumerId, "consumer_id")               \
  X(kCorrelationId, "correlation_id")         \
  X(kCorrupt, "corrupt")                      \
  X(kCount, "count")                          \
  X(kCrashed, "crashed")                      \
  X(kData, "data")                            \
  X(kDeliverAtUs, "deliver_at_us")            \
  X(kDescription, "description")              \
  X(kDir, "dir")                              \
  X(kDo, "do")                                \
  X(kDrainMs, "drain_ms")                     \
  X(kDurationMs, "duration_ms")               \
  X(kEphemeralsDeleted, "ephemerals_deleted") \
  X(kEpoch, "epoch")                          \
  X(kEpochlessFork, "epochless_fork")         \
  X(kError, "error")                          \
  X(kExpectations, "expectations")            \
  X(kExpected, "expected")                    \
  X(kExtraDelayUs, "extra_delay_us")          \
  X(kFault, "fault")                          \
  X(kFetchDelayMs, "fetch_delay_ms")          \
  X(kFile, "file")                            \
  X(kFirstOffset, "first_offset")             \
  X(kFirstSequence, "first_sequence")         \
  X(kForMs, "for_ms")                         \
  X(kForUs, "for_us")                         \
  X(kFrom, "from")                            \
  X(kFromLeo, "from_leo")                     \
  X(kGeneration, "generation")                \
  X(kGroup, "group")                          \
  X(kGroups, "groups")                        \
  X(kHalt, "halt")                            \
  X(kHeal, "heal")                            \
  X(kHeldEpoch, "held_epoch")                 \
  X(kHeldFrom, "held_from")                   \
  X(kHighWatermark, "high_watermark")         \
  X(kHost, "host")                            \
  X(kHw, "hw")                                \
  X(kId, "id")                                \
  X(kIncarnation, "incarnation")              \
  X(kIndex, "index")                          \
  X(kIsr, "isr")                              \
  X(kKafkaDefect, "kafka_defect")             \
  X(kKey, "key")                              \
  X(kKind, "kind")                            \
  X(kLastOffset, "last_offset")               \
  X(kLastSequence, "last_sequence")           \
  X(kLeader, "leader")                        \
  X(kLeaderEpoch, "leader_epoch")             \
  X(kLeaderOf, "leader_of")                   \
  X(kLeo, "leo")                              \
  X(kLine, "line")                            \
  X(kLogEndOffset, "log_end_offset")          \
  X(kLogStartOffset, "log_start_offset")      \
  X(kMember, "member")                        \
  X(kMemberId, "member_id")                   \
  X(kMembers, "members")                      \
  X(kMessage, "message")                      \
  X(kMetric, "metric")                        \
  X(kMetrics, "metrics")                      \
  X(kOffset, "offset")                        \
  X(kOffsets, "offsets")                      \
  X(kOk, "ok")                                \
  X(kOnce, "once")                            \
  X(kOneWay, "one_way")                       \
  X(kOperation, "operation")                  \
  X(kOutcome, "outcome")                      \
  X(kPartition, "partition")                  \
  X(kPartitions, "partitions")                \
  X(kPath, "path")                            \
  X(kPeer, "peer")                            \
  X(kPolicy, "policy")                        \
  X(kPort, "port")                            \
  X(kProducerId, "producer_id")               \
  X(kProtocol, "protocol")                    \
  X(kReason, "reason")                        \
  X(kRecordId, "record_id")                   \
  X(kRecords, "records")                      \
  X(kRemaining, "remaining")                  \
  X(kRemoved, "removed")                      \
  X(kReplicas, "replicas")                    \
  X(kReplicationFactor, "replication_factor") \
  X(kRestartAll, "restart_all")               \
  X(kResult, "result")                        \
  X(kRetransmits, "retransmits")              \
  X(kRole, "role")                            \
  X(kRule, "rule")                            \
  X(kSession, "session")                      \
  X(kSides, "sides")                          \
  X(kSizeBytes, "size_bytes")                 \
  X(kStage, "stage")                          \
  X(kState, "state")                          \
  X(kStrategy, "strategy")                    \
  X(kTear, "tear")                            \
  X(kText, "text")                            \
  X(kTo, "to")                                \
  X(kTopic, "topic")                          \
  X(kTopics, "topics")                        \
  X(kUnclean, "unclean")                      \
  X(kUnsynced, "unsynced")                    \
  X(kValue, "value")                          \
  X(kValues, "values")                        \
  X(kVariant, "variant")                      \
  X(kVersion, "version")

#define KSIM_TRACE_NAME_CONSTANT_(constant, text) inline constexpr PlainName constant{text};
#define KSIM_TRACE_NAME_TEXT_(constant, text) text,

// Event names: ev::kLeaderElected is "leader_elected".
namespace ksim::ev {
KSIM_TRACE_EVENTS(KSIM_TRACE_NAME_CONSTANT_)
// Every event name, in the order of KSIM_TRACE_EVENTS.
inline constexpr std::string_view kAll[] = {KSIM_TRACE_EVENTS(KSIM_TRACE_NAME_TEXT_)};
// The names of network message events (level `messages`) begin with this.
inline constexpr std::string_view kMessagePrefix = "msg_";
}  // namespace ksim::ev

// Field names: field::kTopic is "topic". The line's own keys come first.
namespace ksim::field {
inline constexpr PlainName kTimeUs{"t_us"};
inline constexpr PlainName kNode{"node"};
inline constexpr PlainName kEv{"ev"};
KSIM_TRACE_FIELDS(KSIM_TRACE_NAME_CONSTANT_)
// Every field name but the line's own three, in the order of KSIM_TRACE_FIELDS.
inline constexpr std::string_view kAll[] = {KSIM_TRACE_FIELDS(KSIM_TRACE_NAME_TEXT_)};
}  // namespace ksim::field

#undef KSIM_TRACE_NAME_CONSTANT_
#undef KSIM_TRACE_NAME_TEXT_

// Node names: where an event happened (the line's `node`).
namespace ksim::node {
inline constexpr std::string_view kZooKeeper = "zk";
// Faults of the whole network (partition, heal).
inline constexpr std::string_view kWorld = "world";
// The checker's lines: invariant violations, the verdict.
inline constexpr std::string_view kChecker = "checker";
// The scenario's own lines: its start, each action, the final phase.
inline constexpr std::string_view kScenario = "scenario";
// The node the seed's command-line tools run on.
inline constexpr std::string_view kAdmin = "admin";
// "broker-<id>".
inline constexpr std::string_view kBrokerPrefix = "broker-";
inline std::string Broker(BrokerId id) {
  return std::string(kBrokerPrefix) + std::to_string(id.value());
}
// "cli-<action index>": a console producer or consumer a `cli` action started.
inline constexpr std::string_view kCliToolPrefix = "cli-";
inline std::string CliTool(size_t action_index) {
  return std::string(kCliToolPrefix) + std::to_string(action_index);
}
// `ksim serve`: real clients' connections and what they send (sim/serve/gateway.h).
inline constexpr std::string_view kServe = "serve";
// Every fixed node name (clients are named by the scenario, or by a real client's client id).
inline constexpr std::string_view kAll[] = {kZooKeeper, kWorld, kChecker,
                                            kScenario,  kAdmin, kServe};
}  // namespace ksim::node
