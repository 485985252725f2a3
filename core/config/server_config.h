// Broker configuration as Kafka 0.10 names, types, defaults and checks it (kafka.server
// .KafkaConfig), and the per-topic log configuration derived from it (kafka.log.LogConfig).
//
// A BrokerConfig is built from "originals": key -> raw text, each remembering where it came from
// (server.properties:12, or a scenario's cluster.config). Every setting Kafka 0.10 knows is
// type-checked as Kafka's ConfigDef does (values trimmed; INT/LONG/SHORT/BOOLEAN/DOUBLE/LIST;
// at-least and one-of validators); the ones the simulator models land in typed fields, the
// others are checked and kept in `originals`. Unknown keys are kept and reported as warnings
// (Kafka logs "The configuration X = Y was supplied but isn't a known config."). Bad values are
// one kInvalidConfig Status listing every bad setting with its origin, Kafka's reason and what
// would be valid. Derived settings follow Kafka's precedence: log.retention.ms over .minutes over
// .hours; log.roll.ms over log.roll.hours; log.dirs over log.dir; log.flush.interval.ms over
// log.flush.scheduler.interval.ms; an unset zookeeper.connection.timeout.ms follows the session
// timeout; unset listeners are PLAINTEXT://host.name:port.
//
// The keys and defaults are those of the broker's KafkaRelease (core/config/kafka_version.h):
// 0.10.0's (the seed's), notably unclean.leader.election.enable=true, delete.topic.enable=false,
// group.max.session.timeout.ms=300000, broker.id=-1 (generated); a later release changes the keys
// BrokerKeyChanges lists, and both ApiVersion keys default to the release's latest version.
// Plain values: copy freely, no thread or I/O concerns except LoadServerProperties (reads a file
// through the Env).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/status.h"
#include "core/config/config_def.h"
#include "core/config/kafka_version.h"
#include "core/config/log_config.h"
#include "core/env/env.h"

namespace ksim {

struct ConfigSetting {
  std::string value;   // raw text, as written (Kafka trims it when parsing)
  std::string origin;  // "server.properties:12" or "cluster.config"
  int order = 0;       // position among the settings given: orders errors and warnings
};
using ConfigOriginals = std::map<std::string, ConfigSetting>;
// Settings given as key -> text, in the order given (a scenario's JSON object, scalars as text).
using ConfigOverrides = std::vector<std::pair<std::string, std::string>>;

struct BrokerConfig {
  static constexpr int64_t kUnbounded = INT64_MAX;  // Kafka's Long.MaxValue

  // The release the broker runs (its binary): which keys exist and their defaults.
  KafkaRelease release = kSeedKafkaRelease;
  // inter.broker.protocol.version, log.message.format.version.
  ApiVersion inter_broker_protocol_version = LatestApiVersion(kSeedKafkaRelease);
  ApiVersion log_message_format_version = LatestApiVersion(kSeedKafkaRelease);

  // ZooKeeper
  std::string zookeeper_connect;  // required by a real broker (RequireZookeeperConnect)
  int32_t zookeeper_session_timeout_ms = 6000;
  int32_t zookeeper_connection_timeout_ms = 6000;  // unset: the session timeout
  int32_t zookeeper_sync_time_ms = 2000;
  // General
  int32_t broker_id = -1;  // -1: generated from ZooKeeper above reserved.broker.max.id
  bool broker_id_generation_enable = true;
  int32_t reserved_broker_max_id = 1000;
  int32_t message_max_bytes = 1000012;  // 1000000 + the 12-byte log overhead
  // Socket server
  int32_t port = 9092;
  std::string host_name;
  std::string listeners;  // unset: "PLAINTEXT://<host.name>:<port>"
  // Log
  int32_t num_partitions = 1;
  std::vector<std::string> log_dirs = {"/tmp/kafka-logs"};
  int32_t log_segment_bytes = 1 << 30;
  int64_t log_roll_ms = 168 * LogConfig::kHourMs;
  int64_t log_retention_ms = 168 * LogConfig::kHourMs;  // -1: forever
  int64_t log_retention_bytes = -1;
  int64_t log_retention_check_interval_ms = 300000;
  CleanupPolicy log_cleanup_policy = CleanupPolicy::kDelete;
  int32_t log_index_size_max_bytes = 10 * 1024 * 1024;
  int32_t log_index_interval_bytes = 4096;
  int64_t log_flush_interval_messages = kUnbounded;
  int64_t log_flush_interval_ms = kUnbounded;  // unset: log.flush.scheduler.interval.ms
  int64_t log_flush_scheduler_interval_ms = kUnbounded;
  int32_t log_flush_offset_checkpoint_interval_ms = 60000;
  int64_t log_segment_delete_delay_ms = 60000;
  bool auto_create_topics_enable = true;
  int32_t min_insync_replicas = 1;
  // Replication
  int32_t default_replication_factor = 1;
  int32_t controller_socket_timeout_ms = 30000;
  int64_t replica_lag_time_max_ms = 10000;
  // replica.lag.max.messages, 0.8.2 alone (KIP-16 removed it in 0.9.0): a follower this many
  // messages behind the leader's log end leaves the ISR (Partition.getOutOfSyncReplicas).
  int64_t replica_lag_max_messages = 4000;
  int32_t replica_socket_timeout_ms = 30000;
  int32_t replica_fetch_max_bytes = 1024 * 1024;
  int32_t replica_fetch_wait_max_ms = 500;
  int32_t replica_fetch_min_bytes = 1;
  int32_t replica_fetch_backoff_ms = 1000;
  int32_t num_replica_fetchers = 1;
  int64_t replica_high_watermark_checkpoint_interval_ms = 5000;
  bool auto_leader_rebalance_enable = true;
  int32_t leader_imbalance_per_broker_percentage = 10;
  int64_t leader_imbalance_check_interval_seconds = 300;
  bool unclean_leader_election_enable = true;
  // Controlled shutdown
  bool controlled_shutdown_enable = true;
  int32_t controlled_shutdown_max_retries = 3;
  int64_t controlled_shutdown_retry_backoff_ms = 5000;
  // Group coordinator and offsets
  int32_t group_min_session_timeout_ms = 6000;
  int32_t group_max_session_timeout_ms = 300000;
  int32_t group_initial_rebalance_delay_ms = 0;  // KIP-134: 3000 from 0.11; before, no delay
  // KIP-227 (1.1): how many fetch sessions the broker keeps (before 1.1: none is ever asked for).
  int32_t max_incremental_fetch_session_cache_slots = 1000;
  int32_t offsets_topic_num_partitions = 50;
  int16_t offsets_topic_replication_factor = 3;
  int32_t offsets_topic_segment_bytes = 100 * 1024 * 1024;
  int32_t offsets_retention_minutes = 24 * 60;
  int64_t offsets_retention_check_interval_ms = 600000;
  int32_t offsets_commit_timeout_ms = 5000;
  int16_t offsets_commit_required_acks = -1;
  // Topics
  bool delete_topic_enable = false;
  std::string compression_type = "producer";
  // Everything that was set, by key (unknown keys included), with its origin.
  ConfigOriginals originals;
  // One line per unknown key, in origin order.
  std::vector<std::string> warnings;

  // The LogConfig a topic without overrides gets (KafkaServer.copyKafkaConfigToLog).
  LogConfig DefaultLogConfig() const;
};

// A topic's settings: the broker's defaults with the topic's overrides (topic-level names).
struct TopicConfig {
  LogConfig log;
  int32_t min_insync_replicas = 1;
  bool unclean_leader_election_enable = true;
  std::string compression_type = "producer";
  std::vector<std::string> overridden;  // topic-level names given explicitly, sorted
};

// Builds the config of a broker of `release` from originals alone (empty: every default).
Result<BrokerConfig> MakeBrokerConfig(ConfigOriginals originals,
                                      KafkaRelease release = kSeedKafkaRelease);
// Parses server.properties text; `file_name` names origins ("server.properties:3").
Result<BrokerConfig> ParseServerProperties(std::string_view text, std::string_view file_name,
                                           KafkaRelease release = kSeedKafkaRelease);
// Reads and parses the file at `path`.
Result<BrokerConfig> LoadServerProperties(Env& env, const std::string& path,
                                          KafkaRelease release = kSeedKafkaRelease);
// `base` with `overrides` set on top (later keys win), rebuilt so that precedence rules see both
// (a scenario's log.retention.ms beats the file's log.retention.hours). `origin` names them; the
// release stays base's.
Result<BrokerConfig> ApplyConfigOverrides(const BrokerConfig& base,
                                          const ConfigOverrides& overrides,
                                          std::string_view origin);
// Kafka refuses to start without zookeeper.connect: kInvalidConfig with Kafka's words.
Status RequireZookeeperConnect(const BrokerConfig& config);

// A broker key that a release after 0.8.2 added or gave another default (docs/versions.md,
// "Broker settings"): from `since` on, the key exists with `default_value`. A key of 0.10.0's
// table that 0.8.2 lacks (`absent_before`) is kept with its default inside ksim at 0.8.2, but a
// scenario that sets it is told that 0.8.2 has no such setting.
struct BrokerKeyChange {
  std::string_view key;
  KafkaRelease since;
  ConfigType type = ConfigType::kString;
  std::optional<std::string_view> default_value;
  std::optional<int64_t> at_least;
  std::string_view source;  // the KIP or JIRA, and what changed
  // The release that brought it when ksim does not model that one ("0.9.0": `since` is then the
  // first modelled release after it).
  std::string_view since_name = {};
  bool absent_before = false;  // a key of 0.10.0's table that releases before `since` lack
  // A key of the releases before `since` alone (0.8.2's), which `since_name` removed.
  bool removed = false;
};
std::span<const BrokerKeyChange> BrokerKeyChanges();
// "0.9.0" or KafkaReleaseName(change.since).
std::string_view BrokerKeyChangeFrom(const BrokerKeyChange& change);
// The first modelled release whose broker knows `key`; nullopt when none does.
std::optional<KafkaRelease> FirstReleaseWithBrokerKey(std::string_view key);
// The release that brought `key`, for messages ("0.9.0" for a key that 0.8.2 lacks and 0.10.0
// has); nullopt for a key of every modelled release or of none.
std::optional<std::string_view> BrokerKeySince(std::string_view key);
// Whether a broker of `release` has `key` (a scenario may set it).
bool BrokerHasKey(std::string_view key, KafkaRelease release);
// The change that removed `key` (0.8.2's replica.lag.max.messages, KIP-16 in 0.9.0), or null.
const BrokerKeyChange* BrokerKeyRemoval(std::string_view key);

// The broker-level names KafkaConfig of `release` knows (no security keys), sorted: for "did you
// mean".
std::vector<std::string_view> BrokerConfigNames(KafkaRelease release = kSeedKafkaRelease);
// The topic-level names LogConfig 0.10 knows, sorted.
std::vector<std::string_view> TopicConfigNames();
// `broker` defaults plus topic `overrides` (retention.ms, segment.bytes, cleanup.policy,
// min.insync.replicas, unclean.leader.election.enable, ...). kInvalidConfig for an unknown name
// ("Unknown configuration `x`.") or a bad value.
Result<TopicConfig> MakeTopicConfig(const BrokerConfig& broker, const ConfigOverrides& overrides,
                                    std::string_view origin);

}  // namespace ksim
