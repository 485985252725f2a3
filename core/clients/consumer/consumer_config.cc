// ParseConsumerConfig: Kafka's ConsumerConfig definitions (names, types, defaults, validators) at
// the consumer's release, and the checks KafkaConsumer's constructor and Heartbeat make, over
// core's ConfigDef parsing (core/config/config_def.h). docs/clients.md, "Consumer";
// docs/versions.md says which release each default and key comes from.
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/text_distance.h"
#include "core/clients/consumer/assignors.h"
#include "core/clients/consumer/consumer.h"
#include "core/config/config_def.h"

namespace ksim {
namespace {

using T = ConfigType;

// Kafka's ConsumerConfig keys (0.10.1's defaults in the table; ReleaseDefaults sets those that
// differ at 0.10.0). The last group is accepted for compatibility with real client
// configurations and has no effect in the simulation (deserializers are identity: records are
// bytes; buffers and reconnects are the Transport's).
const std::vector<ConfigKeyDef>& ConsumerKeys() {
  static const std::vector<ConfigKeyDef> keys = {
      {"bootstrap.servers", T::kList, std::nullopt},
      {"client.id", T::kString, ""},
      {"group.id", T::kString, ""},
      {"auto.offset.reset", T::kString, "latest", std::nullopt, {"latest", "earliest", "none"}},
      {"enable.auto.commit", T::kBoolean, "true"},
      {"auto.commit.interval.ms", T::kInt, "5000", 0},
      {"session.timeout.ms", T::kInt, "10000"},
      {"heartbeat.interval.ms", T::kInt, "3000"},
      {"max.poll.interval.ms", T::kInt, "300000", 1},
      {"max.poll.records", T::kInt, "500", 1},
      {"fetch.min.bytes", T::kInt, "1", 0},
      {"fetch.max.wait.ms", T::kInt, "500", 0},
      {"max.partition.fetch.bytes", T::kInt, "1048576", 0},
      {"request.timeout.ms", T::kInt, "305000", 0},
      {"retry.backoff.ms", T::kLong, "100", 0},
      {"metadata.max.age.ms", T::kLong, "300000", 0},
      {"partition.assignment.strategy", T::kList,
       "org.apache.kafka.clients.consumer.RangeAssignor"},
      // Accepted, no effect.
      {"fetch.max.bytes", T::kInt, "52428800", 0},
      {"check.crcs", T::kBoolean, "true"},
      {"exclude.internal.topics", T::kBoolean, "true"},
      {"key.deserializer", T::kString, std::nullopt},
      {"value.deserializer", T::kString, std::nullopt},
      {"reconnect.backoff.ms", T::kLong, "50", 0},
      {"connections.max.idle.ms", T::kLong, "540000"},
      {"receive.buffer.bytes", T::kInt, "65536", -1},
      {"send.buffer.bytes", T::kInt, "131072", -1},
  };
  return keys;
}

// The keys a consumer of a later release has (ConsumerConfig.CONFIG at that release's tag). An
// older consumer does not know them: KafkaConsumer's config.logUnused() warns and the value is not
// used. Every other key of ConsumerKeys() is in Kafka 0.10.0.1's ConsumerConfig.
struct LaterKey {
  std::string_view name;
  KafkaRelease since;
};
constexpr LaterKey kLaterKeys[] = {
    {"max.poll.interval.ms", KafkaRelease::k0_10_1},  // KIP-62, KAFKA-3888
    {"fetch.max.bytes", KafkaRelease::k0_10_1},       // KIP-74, KAFKA-2063
};

std::optional<KafkaRelease> KeySince(std::string_view name) {
  for (const LaterKey& key : kLaterKeys) {
    if (key.name == name) return key.since;
  }
  return std::nullopt;
}

// The defaults that changed with KIP-62 (0.10.1): 0.10.0.1's ConsumerConfig has
// session.timeout.ms 30000, request.timeout.ms 40000 and max.poll.records Integer.MAX_VALUE
// (KIP-41, 0.10.0); 0.10.1.0's has 10000, 305000 and 500 (the struct's defaults).
void ReleaseDefaults(KafkaRelease release, ConsumerConfig& config) {
  config.release = release;
  config.brokers_release = release;
  if (release >= KafkaRelease::k0_10_1) return;
  config.session_timeout_ms = 30000;
  config.request_timeout_ms = 40000;
  config.max_poll_records = std::numeric_limits<int32_t>::max();
}

std::string Trimmed(std::string_view raw) {
  std::string text(raw);
  text.erase(0, text.find_first_not_of(" \t"));
  text.erase(text.find_last_not_of(" \t") + 1);
  return text;
}

const ConfigKeyDef* FindKey(std::string_view name) {
  for (const ConfigKeyDef& key : ConsumerKeys()) {
    if (key.name == name) return &key;
  }
  return nullptr;
}

std::string UnknownKeyMessage(std::string_view name) {
  std::vector<std::string_view> names;
  for (const ConfigKeyDef& key : ConsumerKeys()) names.push_back(key.name);
  std::string message = "Unknown configuration `" + std::string(name) + "`.";
  if (std::optional<std::string_view> closest = ClosestName(name, names)) {
    message += " Did you mean `" + std::string(*closest) + "`?";
  }
  return message;
}

// "hadoop01:9092" -> "hadoop01": brokers are nodes named by host; the port is Kafka's habit.
std::string HostOf(const std::string& server) {
  const size_t colon = server.rfind(':');
  if (colon == std::string::npos || colon + 1 == server.size()) return server;
  for (size_t i = colon + 1; i < server.size(); ++i) {
    if (server[i] < '0' || server[i] > '9') return server;
  }
  return server.substr(0, colon);
}

void Apply(std::string_view name, const ConfigValue& value, ConsumerConfig& config) {
  const int64_t n = value.integer;
  const auto i32 = [n] { return static_cast<int32_t>(n); };
  if (name == "bootstrap.servers") {
    config.bootstrap_servers.clear();
    for (const std::string& server : value.list) config.bootstrap_servers.push_back(HostOf(server));
  }
  if (name == "client.id") config.client_id = value.text;
  if (name == "group.id") config.group_id = value.text;
  if (name == "auto.offset.reset") config.auto_offset_reset = value.text;
  if (name == "enable.auto.commit") config.enable_auto_commit = value.boolean;
  if (name == "auto.commit.interval.ms") config.auto_commit_interval_ms = n;
  if (name == "session.timeout.ms") config.session_timeout_ms = i32();
  if (name == "heartbeat.interval.ms") config.heartbeat_interval_ms = i32();
  if (name == "max.poll.interval.ms") config.max_poll_interval_ms = i32();
  if (name == "max.poll.records") config.max_poll_records = i32();
  if (name == "fetch.min.bytes") config.fetch_min_bytes = i32();
  if (name == "fetch.max.wait.ms") config.fetch_max_wait_ms = i32();
  if (name == "max.partition.fetch.bytes") config.max_partition_fetch_bytes = i32();
  if (name == "request.timeout.ms") config.request_timeout_ms = i32();
  if (name == "retry.backoff.ms") config.retry_backoff_ms = n;
  if (name == "metadata.max.age.ms") config.metadata_max_age_ms = n;
  if (name == "partition.assignment.strategy") config.partition_assignment_strategy = value.list;
}

}  // namespace

bool ConsumerKnowsKey(std::string_view name, KafkaRelease release) {
  if (FindKey(name) == nullptr) return false;
  const std::optional<KafkaRelease> since = KeySince(name);
  return !since || release >= *since;
}

Result<ConsumerConfig> ParseConsumerConfig(const ConfigOverrides& settings, KafkaRelease release) {
  ConsumerConfig config;
  ReleaseDefaults(release, config);
  std::vector<std::string> errors;
  bool bootstrap_given = false;
  for (const auto& [name, raw] : settings) {
    const ConfigKeyDef* key = FindKey(name);
    if (key == nullptr) {
      errors.push_back(UnknownKeyMessage(name));
      continue;
    }
    if (!ConsumerKnowsKey(name, release)) {
      // KafkaConsumer's config.logUnused(): a warning, and the consumer goes on without it.
      config.warnings.push_back("The configuration " + name + " = " + Trimmed(raw) +
                                " was supplied but isn't a known config.");
      continue;
    }
    ConfigValue value;
    if (std::optional<std::string> reason = ParseConfigValue(*key, raw, value)) {
      errors.push_back(InvalidValueMessage(*key, raw, *reason));
      continue;
    }
    if (name == "partition.assignment.strategy") {
      bool known = !value.list.empty();
      for (const std::string& strategy : value.list) {
        if (MakePartitionAssignor(strategy) == nullptr) {
          errors.push_back(
              InvalidValueMessage(*key, raw, "Class " + strategy + " cannot be found"));
          known = false;
        }
      }
      if (value.list.empty()) {
        errors.push_back(InvalidValueMessage(*key, raw, "at least one assignor is required"));
      }
      if (!known) continue;
    }
    if (name == "bootstrap.servers") bootstrap_given = !value.list.empty();
    Apply(name, value, config);
  }
  if (!bootstrap_given) {
    errors.push_back(
        "Missing required configuration \"bootstrap.servers\" which has no default value.");
  }
  if (errors.empty()) {
    // Heartbeat's constructor (the same from 0.10.0 to 2.1).
    if (config.heartbeat_interval_ms >= config.session_timeout_ms) {
      errors.push_back("Heartbeat must be set lower than the session timeout");
    }
    // KafkaConsumer's constructor.
    if (config.request_timeout_ms <= config.session_timeout_ms ||
        config.request_timeout_ms <= config.fetch_max_wait_ms) {
      errors.push_back(
          "request.timeout.ms should be greater than session.timeout.ms and "
          "fetch.max.wait.ms");
    }
  }
  if (!errors.empty()) {
    std::string message;
    for (const std::string& error : errors) message += (message.empty() ? "" : "\n") + error;
    return Status(Errc::kInvalidConfig, message);
  }
  return config;
}

}  // namespace ksim
