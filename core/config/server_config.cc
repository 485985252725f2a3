// Kafka 0.10's KafkaConfig and LogConfig over text settings (see server_config.h). The key
// tables mirror KafkaConfig.configDef and LogConfig.configDef of 0.10.0 (names, types,
// defaults, validators); BuildBrokerConfig mirrors the KafkaConfig constructor (derived values)
// and validateValues (cross-key requirements, with Kafka's messages).
#include "core/config/server_config.h"

#include <algorithm>
#include <set>

#include "core/config/config_def.h"
#include "core/config/java_properties.h"

namespace ksim {
namespace {

using T = ConfigType;
constexpr std::string_view kLongMax = "9223372036854775807";
constexpr std::string_view kIntMax = "2147483647";

ConfigKeyDef Key(std::string_view name, ConfigType type,
                 std::optional<std::string_view> default_value,
                 std::optional<int64_t> at_least = std::nullopt,
                 std::vector<std::string_view> one_of = {}, bool ratio = false) {
  return ConfigKeyDef{name, type, default_value, at_least, std::move(one_of), ratio};
}

// KafkaConfig.configDef of 0.10.0; BrokerKeys(release) applies kBrokerKeyChanges on top.
const std::vector<ConfigKeyDef>& BrokerKeys0100() {
  static const std::vector<ConfigKeyDef> kKeys = {
      // ZooKeeper
      Key("zookeeper.connect", T::kString, std::nullopt),
      Key("zookeeper.session.timeout.ms", T::kInt, "6000"),
      Key("zookeeper.connection.timeout.ms", T::kInt, std::nullopt),
      Key("zookeeper.sync.time.ms", T::kInt, "2000"),
      Key("zookeeper.set.acl", T::kBoolean, "false"),
      // General
      Key("broker.id.generation.enable", T::kBoolean, "true"),
      Key("reserved.broker.max.id", T::kInt, "1000", 0),
      Key("broker.id", T::kInt, "-1"),
      Key("broker.rack", T::kString, std::nullopt),
      Key("message.max.bytes", T::kInt, "1000012", 0),
      Key("num.network.threads", T::kInt, "3", 1),
      Key("num.io.threads", T::kInt, "8", 1),
      Key("background.threads", T::kInt, "10", 1),
      Key("queued.max.requests", T::kInt, "500", 1),
      Key("request.timeout.ms", T::kInt, "30000"),
      Key("authorizer.class.name", T::kString, ""),
      // Socket server
      Key("port", T::kInt, "9092"),
      Key("host.name", T::kString, ""),
      Key("listeners", T::kString, std::nullopt),
      Key("advertised.host.name", T::kString, std::nullopt),
      Key("advertised.port", T::kInt, std::nullopt),
      Key("advertised.listeners", T::kString, std::nullopt),
      Key("socket.send.buffer.bytes", T::kInt, "102400"),
      Key("socket.receive.buffer.bytes", T::kInt, "102400"),
      Key("socket.request.max.bytes", T::kInt, "104857600", 1),
      Key("max.connections.per.ip", T::kInt, kIntMax, 1),
      Key("max.connections.per.ip.overrides", T::kString, ""),
      Key("connections.max.idle.ms", T::kLong, "600000"),
      // Log
      Key("num.partitions", T::kInt, "1", 1),
      Key("log.dir", T::kString, "/tmp/kafka-logs"),
      Key("log.dirs", T::kString, std::nullopt),
      Key("log.segment.bytes", T::kInt, "1073741824", 14),  // Message.MinMessageOverhead
      Key("log.roll.ms", T::kLong, std::nullopt),
      Key("log.roll.hours", T::kInt, "168", 1),
      Key("log.roll.jitter.ms", T::kLong, std::nullopt),
      Key("log.roll.jitter.hours", T::kInt, "0", 0),
      Key("log.retention.ms", T::kLong, std::nullopt),
      Key("log.retention.minutes", T::kInt, std::nullopt),
      Key("log.retention.hours", T::kInt, "168"),
      Key("log.retention.bytes", T::kLong, "-1"),
      Key("log.retention.check.interval.ms", T::kLong, "300000", 1),
      Key("log.cleanup.policy", T::kList, "delete", std::nullopt, {"compact", "delete"}),
      Key("log.cleaner.threads", T::kInt, "1", 0),
      Key("log.cleaner.io.max.bytes.per.second", T::kDouble, "1.7976931348623157E308"),
      Key("log.cleaner.dedupe.buffer.size", T::kLong, "134217728"),
      Key("log.cleaner.io.buffer.size", T::kInt, "524288", 0),
      Key("log.cleaner.io.buffer.load.factor", T::kDouble, "0.9"),
      Key("log.cleaner.backoff.ms", T::kLong, "15000", 0),
      Key("log.cleaner.min.cleanable.ratio", T::kDouble, "0.5", std::nullopt, {}, true),
      Key("log.cleaner.enable", T::kBoolean, "true"),
      Key("log.cleaner.delete.retention.ms", T::kLong, "86400000"),
      Key("log.index.size.max.bytes", T::kInt, "10485760", 4),
      Key("log.index.interval.bytes", T::kInt, "4096", 0),
      Key("log.flush.interval.messages", T::kLong, kLongMax, 1),
      Key("log.segment.delete.delay.ms", T::kLong, "60000", 0),
      Key("log.flush.scheduler.interval.ms", T::kLong, kLongMax),
      Key("log.flush.interval.ms", T::kLong, std::nullopt),
      Key("log.flush.offset.checkpoint.interval.ms", T::kInt, "60000", 0),
      Key("log.preallocate", T::kBoolean, "false"),
      Key("num.recovery.threads.per.data.dir", T::kInt, "1", 1),
      Key("auto.create.topics.enable", T::kBoolean, "true"),
      Key("min.insync.replicas", T::kInt, "1", 1),
      Key("log.message.format.version", T::kString, "0.10.0-IV1"),  // ApiVersion: see below
      Key("log.message.timestamp.type", T::kString, "CreateTime", std::nullopt,
          {"CreateTime", "LogAppendTime"}),
      Key("log.message.timestamp.difference.max.ms", T::kLong, kLongMax, 0),
      // Replication
      Key("controller.socket.timeout.ms", T::kInt, "30000"),
      Key("controller.message.queue.size", T::kInt, kIntMax),
      Key("default.replication.factor", T::kInt, "1"),
      Key("replica.lag.time.max.ms", T::kLong, "10000"),
      Key("replica.socket.timeout.ms", T::kInt, "30000"),
      Key("replica.socket.receive.buffer.bytes", T::kInt, "65536"),
      Key("replica.fetch.max.bytes", T::kInt, "1048576"),
      Key("replica.fetch.wait.max.ms", T::kInt, "500"),
      Key("replica.fetch.backoff.ms", T::kInt, "1000", 0),
      Key("replica.fetch.min.bytes", T::kInt, "1"),
      Key("num.replica.fetchers", T::kInt, "1"),
      Key("replica.high.watermark.checkpoint.interval.ms", T::kLong, "5000"),
      Key("fetch.purgatory.purge.interval.requests", T::kInt, "1000"),
      Key("producer.purgatory.purge.interval.requests", T::kInt, "1000"),
      Key("auto.leader.rebalance.enable", T::kBoolean, "true"),
      Key("leader.imbalance.per.broker.percentage", T::kInt, "10"),
      Key("leader.imbalance.check.interval.seconds", T::kLong, "300", 1),
      Key("unclean.leader.election.enable", T::kBoolean, "true"),
      Key("security.inter.broker.protocol", T::kString, "PLAINTEXT"),
      Key("inter.broker.protocol.version", T::kString, "0.10.0-IV1"),
      // Controlled shutdown
      Key("controlled.shutdown.max.retries", T::kInt, "3"),
      Key("controlled.shutdown.retry.backoff.ms", T::kLong, "5000"),
      Key("controlled.shutdown.enable", T::kBoolean, "true"),
      // Group coordinator and offsets
      Key("group.min.session.timeout.ms", T::kInt, "6000"),
      Key("group.max.session.timeout.ms", T::kInt, "300000"),  // KAFKA-3636, 0.10.0.0
      Key("offset.metadata.max.bytes", T::kInt, "4096"),
      Key("offsets.load.buffer.size", T::kInt, "5242880", 1),
      Key("offsets.topic.replication.factor", T::kShort, "3", 1),
      Key("offsets.topic.num.partitions", T::kInt, "50", 1),
      Key("offsets.topic.segment.bytes", T::kInt, "104857600", 1),
      Key("offsets.topic.compression.codec", T::kInt, "0"),
      Key("offsets.retention.minutes", T::kInt, "1440", 1),
      Key("offsets.retention.check.interval.ms", T::kLong, "600000", 1),
      Key("offsets.commit.timeout.ms", T::kInt, "5000", 1),
      Key("offsets.commit.required.acks", T::kShort, "-1"),
      // Quotas, topics, metrics
      Key("quota.producer.default", T::kLong, kLongMax, 1),
      Key("quota.consumer.default", T::kLong, kLongMax, 1),
      Key("quota.window.num", T::kInt, "11", 1),
      Key("quota.window.size.seconds", T::kInt, "1", 1),
      Key("delete.topic.enable", T::kBoolean, "false"),
      Key("compression.type", T::kString, "producer", std::nullopt,
          {"uncompressed", "snappy", "lz4", "gzip", "producer"}),
      Key("metrics.num.samples", T::kInt, "2", 1),
      Key("metrics.sample.window.ms", T::kLong, "30000", 1),
      Key("metric.reporters", T::kList, ""),
  };
  return kKeys;
}

// The broker keys of `release`: 0.10.0's with kBrokerKeyChanges applied up to `release`, and both
// ApiVersion keys defaulting to the release's latest version (KafkaConfig's Defaults).
const std::vector<ConfigKeyDef>& BrokerKeys(KafkaRelease release) {
  static const auto kTables = [] {
    std::vector<std::vector<ConfigKeyDef>> tables;
    for (KafkaRelease r : KafkaReleases()) {
      std::vector<ConfigKeyDef> keys = BrokerKeys0100();
      for (const BrokerKeyChange& change : BrokerKeyChanges()) {
        if (change.removed) {
          if (r < change.since) {
            keys.push_back(Key(change.key, change.type, change.default_value, change.at_least));
          }
          continue;
        }
        if (change.since > r || change.absent_before) continue;
        auto it = std::find_if(keys.begin(), keys.end(),
                               [&](const ConfigKeyDef& k) { return k.name == change.key; });
        if (it == keys.end()) {
          keys.push_back(Key(change.key, change.type, change.default_value, change.at_least));
        } else {
          it->default_value = change.default_value;
        }
      }
      for (ConfigKeyDef& key : keys) {
        if (key.name == "inter.broker.protocol.version" ||
            key.name == "log.message.format.version") {
          key.default_value = LatestApiVersion(r).name;
        }
      }
      tables.push_back(std::move(keys));
    }
    return tables;
  }();
  return kTables[static_cast<size_t>(release)];
}

// LogConfig.configDef (0.10.0); defaults come from the broker, so none are listed here.
const std::vector<ConfigKeyDef>& TopicKeys() {
  static const std::vector<ConfigKeyDef> kKeys = {
      Key("segment.bytes", T::kInt, std::nullopt, 14),
      Key("segment.ms", T::kLong, std::nullopt, 0),
      Key("segment.jitter.ms", T::kLong, std::nullopt, 0),
      Key("segment.index.bytes", T::kInt, std::nullopt, 4),  // 0.10 allowed 0; later Kafka 4
      Key("flush.messages", T::kLong, std::nullopt, 0),
      Key("flush.ms", T::kLong, std::nullopt, 0),
      Key("retention.bytes", T::kLong, std::nullopt),  // negative: no limit
      Key("retention.ms", T::kLong, std::nullopt),     // negative: forever
      Key("max.message.bytes", T::kInt, std::nullopt, 0),
      Key("index.interval.bytes", T::kInt, std::nullopt, 0),
      Key("delete.retention.ms", T::kLong, std::nullopt, 0),
      Key("file.delete.delay.ms", T::kLong, std::nullopt, 0),
      Key("min.cleanable.dirty.ratio", T::kDouble, std::nullopt, std::nullopt, {}, true),
      Key("cleanup.policy", T::kList, std::nullopt, std::nullopt, {"compact", "delete"}),
      Key("unclean.leader.election.enable", T::kBoolean, std::nullopt),
      Key("min.insync.replicas", T::kInt, std::nullopt, 1),
      Key("compression.type", T::kString, std::nullopt, std::nullopt,
          {"uncompressed", "snappy", "lz4", "gzip", "producer"}),
      Key("preallocate", T::kBoolean, std::nullopt),
      Key("message.format.version", T::kString, std::nullopt),
      Key("message.timestamp.type", T::kString, std::nullopt, std::nullopt,
          {"CreateTime", "LogAppendTime"}),
      Key("message.timestamp.difference.max.ms", T::kLong, std::nullopt, 0),
  };
  return kKeys;
}

const ConfigKeyDef* FindKey(const std::vector<ConfigKeyDef>& keys, std::string_view name) {
  for (const ConfigKeyDef& key : keys) {
    if (key.name == name) return &key;
  }
  return nullptr;
}

// TLS and SASL settings: accepted (Kafka knows them), not checked, not modelled.
bool IsSecurityKey(std::string_view name) {
  return name.starts_with("ssl.") || name.starts_with("sasl.") || name == "principal.builder.class";
}

// What an error or warning is about, for ordering them as the settings were given.
struct Message {
  int order;
  std::string text;
};

std::string JoinMessages(std::vector<Message> messages) {
  std::stable_sort(messages.begin(), messages.end(),
                   [](const Message& a, const Message& b) { return a.order < b.order; });
  std::string out;
  for (const Message& message : messages) {
    if (!out.empty()) out += '\n';
    out += message.text;
  }
  return out;
}

CleanupPolicy ToCleanupPolicy(const std::vector<std::string>& words) {
  const bool compact = std::find(words.begin(), words.end(), "compact") != words.end();
  const bool del = std::find(words.begin(), words.end(), "delete") != words.end();
  if (compact && del) return CleanupPolicy::kCompactDelete;
  return compact ? CleanupPolicy::kCompact : CleanupPolicy::kDelete;
}

// Kafka's CoreUtils.parseCsvList: split on commas with blanks, drop empty entries.
std::vector<std::string> ParseCsvList(const ConfigValue& value) {
  ConfigValue list;
  const ConfigKeyDef list_key = Key("", T::kList, std::nullopt);
  KSIM_CHECK(!ParseConfigValue(list_key, value.text, list).has_value());
  std::vector<std::string> out;
  for (std::string& item : list.list) {
    if (!item.empty()) out.push_back(std::move(item));
  }
  return out;
}

// The parsed value of every broker key (set or default), and what went wrong.
class ParsedBrokerSettings {
 public:
  ParsedBrokerSettings(const ConfigOriginals& originals, KafkaRelease release)
      : originals_(originals) {
    const std::vector<ConfigKeyDef>& keys = BrokerKeys(release);
    for (const ConfigKeyDef& key : keys) values_[key.name] = DefaultConfigValue(key);
    for (const auto& [name, setting] : originals) {
      const ConfigKeyDef* key = FindKey(keys, name);
      if (key == nullptr || !BrokerHasKey(name, release)) {
        if (!IsSecurityKey(name)) {
          warnings_.push_back({setting.order, setting.origin + ": The configuration " + name +
                                                  " = " + setting.value +
                                                  " was supplied but isn't a known config."});
        }
        continue;
      }
      ConfigValue value;
      if (auto reason = ParseConfigValue(*key, setting.value, value)) {
        errors_.push_back({setting.order, setting.origin + ": " +
                                              InvalidValueMessage(*key, setting.value, *reason)});
        continue;
      }
      values_[key->name] = std::move(value);
    }
  }

  const ConfigValue& Get(std::string_view name) const {
    const auto it = values_.find(name);
    KSIM_CHECK_MSG(it != values_.end(), "not a broker config key");
    return it->second;
  }
  // A key the release may not have: nullptr when it does not.
  const ConfigValue* Find(std::string_view name) const {
    const auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  bool IsNull(std::string_view name) const { return Get(name).is_null; }
  int64_t Integer(std::string_view name) const {
    KSIM_CHECK(!IsNull(name));
    return Get(name).integer;
  }
  bool Boolean(std::string_view name) const { return Get(name).boolean; }
  const std::string& Text(std::string_view name) const { return Get(name).text; }
  bool IsSet(std::string_view name) const { return originals_.count(std::string(name)) > 0; }

  // A requirement of validateValues failed; blamed on the first of `keys` that was set.
  void Require(bool ok, std::initializer_list<std::string_view> keys, std::string message) {
    if (ok) return;
    for (std::string_view key : keys) {
      const auto it = originals_.find(std::string(key));
      if (it != originals_.end()) {
        errors_.push_back({it->second.order, it->second.origin + ": " + message});
        return;
      }
    }
    errors_.push_back({0, "defaults: " + message});
  }

  std::vector<Message>& errors() { return errors_; }
  std::vector<Message>& warnings() { return warnings_; }

 private:
  const ConfigOriginals& originals_;
  std::map<std::string_view, ConfigValue> values_;
  std::vector<Message> errors_;
  std::vector<Message> warnings_;
};

constexpr int64_t kMsPerMinute = 60 * 1000;
constexpr int64_t kMsPerHour = 60 * kMsPerMinute;

void FillTypedFields(const ParsedBrokerSettings& s, BrokerConfig& c) {
  auto i32 = [&](std::string_view name) { return static_cast<int32_t>(s.Integer(name)); };
  c.zookeeper_connect = s.Text("zookeeper.connect");
  c.zookeeper_session_timeout_ms = i32("zookeeper.session.timeout.ms");
  c.zookeeper_connection_timeout_ms = s.IsNull("zookeeper.connection.timeout.ms")
                                          ? c.zookeeper_session_timeout_ms
                                          : i32("zookeeper.connection.timeout.ms");
  c.zookeeper_sync_time_ms = i32("zookeeper.sync.time.ms");
  c.broker_id = i32("broker.id");
  c.broker_id_generation_enable = s.Boolean("broker.id.generation.enable");
  c.reserved_broker_max_id = i32("reserved.broker.max.id");
  c.message_max_bytes = i32("message.max.bytes");
  c.port = i32("port");
  c.host_name = s.Text("host.name");
  c.listeners = s.IsNull("listeners") ? "PLAINTEXT://" + c.host_name + ":" + std::to_string(c.port)
                                      : s.Text("listeners");
  c.num_partitions = i32("num.partitions");
  c.log_dirs = ParseCsvList(s.Get(s.IsNull("log.dirs") ? "log.dir" : "log.dirs"));
  c.log_segment_bytes = i32("log.segment.bytes");
  c.log_roll_ms =
      s.IsNull("log.roll.ms") ? kMsPerHour * s.Integer("log.roll.hours") : s.Integer("log.roll.ms");
  int64_t retention_ms = 0;
  if (!s.IsNull("log.retention.ms")) {
    retention_ms = s.Integer("log.retention.ms");
  } else if (!s.IsNull("log.retention.minutes")) {
    retention_ms = kMsPerMinute * s.Integer("log.retention.minutes");
  } else {
    retention_ms = kMsPerHour * s.Integer("log.retention.hours");
  }
  c.log_retention_ms = retention_ms < 0 ? -1 : retention_ms;
  c.log_retention_bytes = s.Integer("log.retention.bytes");
  c.log_retention_check_interval_ms = s.Integer("log.retention.check.interval.ms");
  c.log_cleanup_policy = ToCleanupPolicy(s.Get("log.cleanup.policy").list);
  c.log_index_size_max_bytes = i32("log.index.size.max.bytes");
  c.log_index_interval_bytes = i32("log.index.interval.bytes");
  c.log_flush_interval_messages = s.Integer("log.flush.interval.messages");
  c.log_flush_scheduler_interval_ms = s.Integer("log.flush.scheduler.interval.ms");
  c.log_flush_interval_ms = s.IsNull("log.flush.interval.ms") ? c.log_flush_scheduler_interval_ms
                                                              : s.Integer("log.flush.interval.ms");
  c.log_flush_offset_checkpoint_interval_ms = i32("log.flush.offset.checkpoint.interval.ms");
  c.log_segment_delete_delay_ms = s.Integer("log.segment.delete.delay.ms");
  c.auto_create_topics_enable = s.Boolean("auto.create.topics.enable");
  c.min_insync_replicas = i32("min.insync.replicas");
  c.default_replication_factor = i32("default.replication.factor");
  c.controller_socket_timeout_ms = i32("controller.socket.timeout.ms");
  c.replica_lag_time_max_ms = s.Integer("replica.lag.time.max.ms");
  if (BrokerHasKey("replica.lag.max.messages", c.release)) {
    c.replica_lag_max_messages = s.Integer("replica.lag.max.messages");
  }
  c.replica_socket_timeout_ms = i32("replica.socket.timeout.ms");
  c.replica_fetch_max_bytes = i32("replica.fetch.max.bytes");
  c.replica_fetch_wait_max_ms = i32("replica.fetch.wait.max.ms");
  c.replica_fetch_min_bytes = i32("replica.fetch.min.bytes");
  c.replica_fetch_backoff_ms = i32("replica.fetch.backoff.ms");
  c.num_replica_fetchers = i32("num.replica.fetchers");
  c.replica_high_watermark_checkpoint_interval_ms =
      s.Integer("replica.high.watermark.checkpoint.interval.ms");
  c.auto_leader_rebalance_enable = s.Boolean("auto.leader.rebalance.enable");
  c.leader_imbalance_per_broker_percentage = i32("leader.imbalance.per.broker.percentage");
  c.leader_imbalance_check_interval_seconds = s.Integer("leader.imbalance.check.interval.seconds");
  c.unclean_leader_election_enable = s.Boolean("unclean.leader.election.enable");
  c.controlled_shutdown_enable = s.Boolean("controlled.shutdown.enable");
  c.controlled_shutdown_max_retries = i32("controlled.shutdown.max.retries");
  c.controlled_shutdown_retry_backoff_ms = s.Integer("controlled.shutdown.retry.backoff.ms");
  c.group_min_session_timeout_ms = i32("group.min.session.timeout.ms");
  c.group_max_session_timeout_ms = i32("group.max.session.timeout.ms");
  if (const auto delay = s.Find("group.initial.rebalance.delay.ms")) {
    c.group_initial_rebalance_delay_ms = static_cast<int32_t>(delay->integer);
  }
  if (const auto slots = s.Find("max.incremental.fetch.session.cache.slots")) {
    c.max_incremental_fetch_session_cache_slots = static_cast<int32_t>(slots->integer);
  }
  c.offsets_topic_num_partitions = i32("offsets.topic.num.partitions");
  c.offsets_topic_replication_factor =
      static_cast<int16_t>(s.Integer("offsets.topic.replication.factor"));
  c.offsets_topic_segment_bytes = i32("offsets.topic.segment.bytes");
  c.offsets_retention_minutes = i32("offsets.retention.minutes");
  c.offsets_retention_check_interval_ms = s.Integer("offsets.retention.check.interval.ms");
  c.offsets_commit_timeout_ms = i32("offsets.commit.timeout.ms");
  c.offsets_commit_required_acks = static_cast<int16_t>(s.Integer("offsets.commit.required.acks"));
  c.delete_topic_enable = s.Boolean("delete.topic.enable");
  c.compression_type = s.Text("compression.type");
}

// inter.broker.protocol.version and log.message.format.version as ApiVersion.apply reads them,
// among the versions the broker's release knows, and KafkaConfig's requirement between them.
void FillApiVersions(ParsedBrokerSettings& s, BrokerConfig& c) {
  auto parse = [&](std::string_view key, ApiVersion& out) {
    const std::string& text = s.Text(key);
    if (const ApiVersion* version = FindApiVersion(text, c.release)) {
      out = *version;
      return true;
    }
    std::string valid;
    for (const ApiVersion& version : ApiVersions()) {
      if (version.since > c.release) break;
      valid += (valid.empty() ? "" : ", ") + std::string(version.name);
    }
    s.Require(false, {key},
              "Invalid value " + text + " for configuration " + std::string(key) + ": Version `" +
                  text + "` is not a valid version (valid at Kafka " +
                  std::string(KafkaReleaseName(c.release)) + ": " + valid +
                  ", or a release such as 0.10.0 for its last internal version)");
    return false;
  };
  const bool ibp = parse("inter.broker.protocol.version", c.inter_broker_protocol_version);
  const bool format = parse("log.message.format.version", c.log_message_format_version);
  if (ibp && format) {
    s.Require(c.inter_broker_protocol_version.id >= c.log_message_format_version.id,
              {"log.message.format.version", "inter.broker.protocol.version"},
              "log.message.format.version " + s.Text("log.message.format.version") +
                  " cannot be used when inter.broker.protocol.version is set to " +
                  s.Text("inter.broker.protocol.version"));
  }
}

// KafkaConfig.validateValues (0.10.0), with its messages.
void ValidateValues(ParsedBrokerSettings& s, const BrokerConfig& c) {
  if (c.broker_id_generation_enable) {
    s.Require(c.broker_id >= -1 && c.broker_id <= c.reserved_broker_max_id,
              {"broker.id", "reserved.broker.max.id"},
              "broker.id must be equal or greater than -1 and not greater than "
              "reserved.broker.max.id");
  } else {
    s.Require(c.broker_id >= 0, {"broker.id", "broker.id.generation.enable"},
              "broker.id must be equal or greater than 0");
  }
  s.Require(c.log_roll_ms >= 1, {"log.roll.ms", "log.roll.hours"},
            "log.roll.ms must be equal or greater than 1");
  s.Require(c.log_retention_ms >= 1 || c.log_retention_ms == -1,
            {"log.retention.ms", "log.retention.minutes", "log.retention.hours"},
            "log.retention.ms must be unlimited (-1) or, equal or greater than 1");
  s.Require(!c.log_dirs.empty(), {"log.dirs", "log.dir"},
            "log.dirs must name at least one directory");
  s.Require(
      c.log_cleanup_policy != CleanupPolicy::kDelete || !s.Get("log.cleanup.policy").list.empty(),
      {"log.cleanup.policy"}, "log.cleanup.policy must name compact, delete or both");
  s.Require(c.replica_fetch_wait_max_ms <= c.replica_socket_timeout_ms,
            {"replica.fetch.wait.max.ms", "replica.socket.timeout.ms"},
            "replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms to "
            "prevent unnecessary socket timeouts");
  s.Require(c.replica_fetch_max_bytes >= c.message_max_bytes,
            {"replica.fetch.max.bytes", "message.max.bytes"},
            "replica.fetch.max.bytes should be equal or greater than message.max.bytes");
  s.Require(c.replica_fetch_wait_max_ms <= c.replica_lag_time_max_ms,
            {"replica.fetch.wait.max.ms", "replica.lag.time.max.ms"},
            "replica.fetch.wait.max.ms should always be at least replica.lag.time.max.ms to "
            "prevent frequent changes in ISR");
  s.Require(c.offsets_commit_required_acks >= -1 &&
                c.offsets_commit_required_acks <= c.offsets_topic_replication_factor,
            {"offsets.commit.required.acks", "offsets.topic.replication.factor"},
            "offsets.commit.required.acks must be greater or equal -1 and less or equal to "
            "offsets.topic.replication.factor");
}

ConfigOriginals FromEntries(const std::vector<PropertyEntry>& entries, std::string_view file_name) {
  ConfigOriginals originals;
  int order = 0;
  for (const PropertyEntry& entry : entries) {
    // A repeated key keeps its last value, as java.util.Properties does.
    originals[entry.key] = ConfigSetting{
        entry.value, std::string(file_name) + ":" + std::to_string(entry.line_number), ++order};
  }
  return originals;
}

}  // namespace

LogConfig BrokerConfig::DefaultLogConfig() const {
  LogConfig log;
  log.segment_bytes = log_segment_bytes;
  log.segment_ms = log_roll_ms;
  log.index_interval_bytes = log_index_interval_bytes;
  log.max_index_size_bytes = log_index_size_max_bytes;
  log.retention_ms = log_retention_ms;
  log.retention_bytes = log_retention_bytes;
  log.cleanup_policy = log_cleanup_policy;
  log.flush_interval_messages = log_flush_interval_messages;
  log.flush_ms = log_flush_interval_ms;
  log.file_delete_delay_ms = log_segment_delete_delay_ms;
  log.max_message_bytes = message_max_bytes;
  // Kafka's Defaults.LogMessageFormatVersion is the release's latest ApiVersion (KafkaConfig at
  // 0.10.0.1 and 0.11.0.0): magic 1 at 0.10.x, 2 from 0.11, unless the setting is given.
  log.message_format_magic = log_message_format_version.magic;
  log.time_index = release >= KafkaRelease::k0_10_1;  // KIP-33
  log.release = release;
  return log;
}

Result<BrokerConfig> MakeBrokerConfig(ConfigOriginals originals, KafkaRelease release) {
  ParsedBrokerSettings settings(originals, release);
  BrokerConfig config;
  config.release = release;
  if (settings.errors().empty()) {
    FillTypedFields(settings, config);
    FillApiVersions(settings, config);
    ValidateValues(settings, config);
  }
  if (!settings.errors().empty()) {
    return Status(Errc::kInvalidConfig, JoinMessages(std::move(settings.errors())));
  }
  std::vector<Message> warnings = std::move(settings.warnings());
  std::stable_sort(warnings.begin(), warnings.end(),
                   [](const Message& a, const Message& b) { return a.order < b.order; });
  for (Message& warning : warnings) config.warnings.push_back(std::move(warning.text));
  config.originals = std::move(originals);
  return config;
}

Result<BrokerConfig> ParseServerProperties(std::string_view text, std::string_view file_name,
                                           KafkaRelease release) {
  KSIM_ASSIGN_OR_RETURN(std::vector<PropertyEntry> entries, ParseJavaProperties(text, file_name));
  return MakeBrokerConfig(FromEntries(entries, file_name), release);
}

Result<BrokerConfig> LoadServerProperties(Env& env, const std::string& path, KafkaRelease release) {
  KSIM_ASSIGN_OR_RETURN(Bytes bytes, ReadWholeFile(env, path));
  return ParseServerProperties(AsChars(bytes), path, release);
}

Result<BrokerConfig> ApplyConfigOverrides(const BrokerConfig& base,
                                          const ConfigOverrides& overrides,
                                          std::string_view origin) {
  ConfigOriginals originals = base.originals;
  int order = 0;
  for (const auto& [name, setting] : originals) order = std::max(order, setting.order);
  for (const auto& [name, value] : overrides) {
    originals[name] = ConfigSetting{value, std::string(origin), ++order};
  }
  return MakeBrokerConfig(std::move(originals), base.release);
}

Status RequireZookeeperConnect(const BrokerConfig& config) {
  if (!config.zookeeper_connect.empty()) return Status::Ok();
  return Status(Errc::kInvalidConfig,
                "Missing required configuration \"zookeeper.connect\" which has no default value.");
}

std::span<const BrokerKeyChange> BrokerKeyChanges() {
  static const BrokerKeyChange kChanges[] = {
      // Keys of 0.10.0's table that 0.8.2.2's KafkaConfig lacks (0.9.0.1:KafkaConfig.scala and
      // 0.10.0.1:KafkaConfig.scala have them); type and default stay 0.10.0's.
      {"advertised.listeners", KafkaRelease::k0_10_0, T::kString, std::nullopt, std::nullopt,
       "KIP-2, KAFKA-1809: several listeners", "0.9.0", true},
      {"authorizer.class.name", KafkaRelease::k0_10_0, T::kString, std::nullopt, std::nullopt,
       "KIP-11, KAFKA-2210: authorization", "0.9.0", true},
      {"broker.id.generation.enable", KafkaRelease::k0_10_0, T::kString, std::nullopt, std::nullopt,
       "KAFKA-1070: generated broker ids", "0.9.0", true},
      {"broker.rack",
       KafkaRelease::k0_10_0,
       T::kString,
       std::nullopt,
       std::nullopt,
       "KIP-36, KAFKA-1215: rack-aware assignment",
       {},
       true},
      {"compression.type", KafkaRelease::k0_10_0, T::kString, std::nullopt, std::nullopt,
       "KAFKA-1499: broker-side compression", "0.9.0", true},
      {"group.max.session.timeout.ms", KafkaRelease::k0_10_0, T::kString, std::nullopt,
       std::nullopt, "KAFKA-2464: the group coordinator", "0.9.0", true},
      {"group.min.session.timeout.ms", KafkaRelease::k0_10_0, T::kString, std::nullopt,
       std::nullopt, "KAFKA-2464: the group coordinator", "0.9.0", true},
      {"inter.broker.protocol.version", KafkaRelease::k0_10_0, T::kString, std::nullopt,
       std::nullopt, "KAFKA-1809: kafka.api.ApiVersion", "0.9.0", true},
      {"listeners", KafkaRelease::k0_10_0, T::kString, std::nullopt, std::nullopt,
       "KIP-2, KAFKA-1809", "0.9.0", true},
      {"log.message.format.version",
       KafkaRelease::k0_10_0,
       T::kString,
       std::nullopt,
       std::nullopt,
       "KIP-31, KIP-32: message format v1",
       {},
       true},
      {"log.message.timestamp.difference.max.ms",
       KafkaRelease::k0_10_0,
       T::kString,
       std::nullopt,
       std::nullopt,
       "KIP-32",
       {},
       true},
      {"log.message.timestamp.type",
       KafkaRelease::k0_10_0,
       T::kString,
       std::nullopt,
       std::nullopt,
       "KIP-32",
       {},
       true},
      {"log.preallocate", KafkaRelease::k0_10_0, T::kString, std::nullopt, std::nullopt,
       "KAFKA-1646", "0.9.0", true},
      {"metric.reporters", KafkaRelease::k0_10_0, T::kString, std::nullopt, std::nullopt,
       "the broker's Kafka metrics", "0.9.0", true},
      {"metrics.num.samples", KafkaRelease::k0_10_0, T::kString, std::nullopt, std::nullopt,
       "the broker's Kafka metrics", "0.9.0", true},
      {"metrics.sample.window.ms", KafkaRelease::k0_10_0, T::kString, std::nullopt, std::nullopt,
       "the broker's Kafka metrics", "0.9.0", true},
      {"quota.consumer.default", KafkaRelease::k0_10_0, T::kString, std::nullopt, std::nullopt,
       "KIP-13, KAFKA-2084: quotas", "0.9.0", true},
      {"quota.producer.default", KafkaRelease::k0_10_0, T::kString, std::nullopt, std::nullopt,
       "KIP-13, KAFKA-2084", "0.9.0", true},
      {"quota.window.num", KafkaRelease::k0_10_0, T::kString, std::nullopt, std::nullopt,
       "KIP-13, KAFKA-2084", "0.9.0", true},
      {"quota.window.size.seconds", KafkaRelease::k0_10_0, T::kString, std::nullopt, std::nullopt,
       "KIP-13, KAFKA-2084", "0.9.0", true},
      {"replica.fetch.backoff.ms", KafkaRelease::k0_10_0, T::kString, std::nullopt, std::nullopt,
       "KAFKA-1461: fetcher back-off", "0.9.0", true},
      {"request.timeout.ms", KafkaRelease::k0_10_0, T::kString, std::nullopt, std::nullopt,
       "KIP-19: request timeouts", "0.9.0", true},
      {"reserved.broker.max.id", KafkaRelease::k0_10_0, T::kString, std::nullopt, std::nullopt,
       "KAFKA-1070", "0.9.0", true},
      {"security.inter.broker.protocol", KafkaRelease::k0_10_0, T::kString, std::nullopt,
       std::nullopt, "KIP-2", "0.9.0", true},
      // 0.8.2.2:KafkaConfig.scala (replicaLagMaxMessages = 4000), gone from 0.9.0.1:.
      {"replica.lag.max.messages", KafkaRelease::k0_10_0, T::kLong, "4000", std::nullopt,
       "KIP-16: the ISR by time alone", "0.9.0", false, true},
      {"unclean.leader.election.enable", KafkaRelease::k0_11_0, T::kBoolean, "false", std::nullopt,
       "KIP-106 (KAFKA-4623): unclean election off by default"},
      {"group.initial.rebalance.delay.ms", KafkaRelease::k0_11_0, T::kInt, "3000", 0,
       "KIP-134: the first rebalance of an empty group waits for more members"},
      {"max.incremental.fetch.session.cache.slots", KafkaRelease::k1_1, T::kInt, "1000", 0,
       "KIP-227: incremental fetch sessions"},
  };
  return kChanges;
}

std::string_view BrokerKeyChangeFrom(const BrokerKeyChange& change) {
  return change.since_name.empty() ? KafkaReleaseName(change.since) : change.since_name;
}

static const BrokerKeyChange* AbsentKeyChange(std::string_view key) {
  for (const BrokerKeyChange& change : BrokerKeyChanges()) {
    if (change.absent_before && change.key == key) return &change;
  }
  return nullptr;
}

bool BrokerHasKey(std::string_view key, KafkaRelease release) {
  if (FindKey(BrokerKeys(release), key) == nullptr) return false;
  const BrokerKeyChange* absent = AbsentKeyChange(key);
  return absent == nullptr || release >= absent->since;
}

const BrokerKeyChange* BrokerKeyRemoval(std::string_view key) {
  for (const BrokerKeyChange& change : BrokerKeyChanges()) {
    if (change.removed && change.key == key) return &change;
  }
  return nullptr;
}

std::optional<std::string_view> BrokerKeySince(std::string_view key) {
  if (const BrokerKeyChange* absent = AbsentKeyChange(key)) return BrokerKeyChangeFrom(*absent);
  const std::optional<KafkaRelease> first = FirstReleaseWithBrokerKey(key);
  if (!first || *first == KafkaReleases().front()) return std::nullopt;
  return KafkaReleaseName(*first);
}

std::optional<KafkaRelease> FirstReleaseWithBrokerKey(std::string_view key) {
  for (KafkaRelease release : KafkaReleases()) {
    if (BrokerHasKey(key, release)) return release;
  }
  return std::nullopt;
}

std::vector<std::string_view> BrokerConfigNames(KafkaRelease release) {
  std::vector<std::string_view> names;
  for (const ConfigKeyDef& key : BrokerKeys(release)) {
    if (BrokerHasKey(key.name, release)) names.push_back(key.name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string_view> TopicConfigNames() {
  std::vector<std::string_view> names;
  for (const ConfigKeyDef& key : TopicKeys()) names.push_back(key.name);
  std::sort(names.begin(), names.end());
  return names;
}

Result<TopicConfig> MakeTopicConfig(const BrokerConfig& broker, const ConfigOverrides& overrides,
                                    std::string_view origin) {
  TopicConfig topic;
  topic.log = broker.DefaultLogConfig();
  topic.min_insync_replicas = broker.min_insync_replicas;
  topic.unclean_leader_election_enable = broker.unclean_leader_election_enable;
  topic.compression_type = broker.compression_type;
  std::vector<std::string> errors;
  std::set<std::string> overridden;
  for (const auto& [name, raw] : overrides) {
    const ConfigKeyDef* key = FindKey(TopicKeys(), name);
    if (key == nullptr) {
      errors.push_back(std::string(origin) + ": Unknown configuration `" + name + "`.");
      continue;
    }
    ConfigValue value;
    if (auto reason = ParseConfigValue(*key, raw, value)) {
      errors.push_back(std::string(origin) + ": " + InvalidValueMessage(*key, raw, *reason));
      continue;
    }
    overridden.insert(name);
    const int64_t n = value.integer;
    LogConfig& log = topic.log;
    if (name == "segment.bytes") log.segment_bytes = static_cast<int32_t>(n);
    if (name == "segment.ms") log.segment_ms = n;
    if (name == "segment.index.bytes") log.max_index_size_bytes = static_cast<int32_t>(n);
    if (name == "flush.messages") log.flush_interval_messages = n;
    if (name == "flush.ms") log.flush_ms = n;
    if (name == "retention.bytes") log.retention_bytes = n < 0 ? -1 : n;
    if (name == "retention.ms") log.retention_ms = n < 0 ? -1 : n;
    if (name == "max.message.bytes") log.max_message_bytes = static_cast<int32_t>(n);
    if (name == "index.interval.bytes") log.index_interval_bytes = static_cast<int32_t>(n);
    if (name == "file.delete.delay.ms") log.file_delete_delay_ms = n;
    if (name == "cleanup.policy") {
      if (value.list.empty()) {
        errors.push_back(std::string(origin) + ": " +
                         InvalidValueMessage(*key, raw, "must name compact, delete or both"));
      }
      log.cleanup_policy = ToCleanupPolicy(value.list);
    }
    if (name == "min.insync.replicas") topic.min_insync_replicas = static_cast<int32_t>(n);
    if (name == "unclean.leader.election.enable") {
      topic.unclean_leader_election_enable = value.boolean;
    }
    if (name == "compression.type") topic.compression_type = value.text;
    if (name == "message.format.version") {
      const std::string& version = value.text;  // trimmed
      if (const std::optional<int8_t> magic = MessageFormatMagic(version, broker.release)) {
        log.message_format_magic = *magic;
      } else {
        errors.push_back(
            std::string(origin) + ": " +
            InvalidValueMessage(*key, raw, "Version `" + version + "` is not a valid version"));
      }
    }
  }
  if (!errors.empty()) {
    std::string message;
    for (const std::string& error : errors) message += (message.empty() ? "" : "\n") + error;
    return Status(Errc::kInvalidConfig, message);
  }
  topic.overridden.assign(overridden.begin(), overridden.end());
  return topic;
}

}  // namespace ksim
