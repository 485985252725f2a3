// ParseProducerConfig (core/clients/producer/producer.h): Kafka's ProducerConfig keys with their
// 0.10 types, defaults and validators (config_def.h), plus the later keys ksim follows
// (enable.idempotence, KIP-98, from 0.11.0; delivery.timeout.ms, KIP-91, from 2.1) and the checks
// KafkaProducer 0.11 and 1.x/2.0 make of an idempotent producer's settings, with its messages.
// docs/versions.md says which release each comes from.
#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "core/base/text_distance.h"
#include "core/clients/producer/producer.h"
#include "core/config/config_def.h"

namespace ksim {
namespace {

using T = ConfigType;

ConfigKeyDef Key(std::string_view name, ConfigType type,
                 std::optional<std::string_view> default_value,
                 std::optional<int64_t> at_least = std::nullopt,
                 std::vector<std::string_view> one_of = {}) {
  return ConfigKeyDef{name, type, default_value, at_least, std::move(one_of), false};
}

// The producer's keys (Kafka 0.10's ProducerConfig.CONFIG plus delivery.timeout.ms and
// enable.idempotence). Keys that change nothing in a simulation (serializers, buffers, sockets)
// are accepted and checked so that a real producer.properties parses.
const std::vector<ConfigKeyDef>& ProducerKeys() {
  static const std::vector<ConfigKeyDef> kKeys = {
      Key("bootstrap.servers", T::kList, ""),
      Key("client.id", T::kString, ""),
      // acks is parsed by hand below: Kafka's ValidString.in("all", "-1", "0", "1").
      Key("acks", T::kString, "1"),
      Key("retries", T::kInt, "0", 0),
      Key("retry.backoff.ms", T::kLong, "100", 0),
      Key("request.timeout.ms", T::kInt, "30000", 0),
      Key("delivery.timeout.ms", T::kInt, "120000", 0),
      Key("linger.ms", T::kLong, "0", 0),
      Key("batch.size", T::kInt, "16384", 0),
      Key("max.in.flight.requests.per.connection", T::kInt, "5", 1),
      Key("enable.idempotence", T::kBoolean, "false"),
      Key("partitioner.class", T::kString, "default"),
      Key("metadata.max.age.ms", T::kLong, "300000", 0),
      Key("max.block.ms", T::kLong, "60000", 0),
      Key("max.request.size", T::kInt, "1048576", 0),
      // Accepted, no effect in ksim.
      Key("buffer.memory", T::kLong, "33554432", 0),
      Key("compression.type", T::kString, "none", std::nullopt, {"none"}),
      Key("key.serializer", T::kString, std::nullopt),
      Key("value.serializer", T::kString, std::nullopt),
      Key("send.buffer.bytes", T::kInt, "131072", -1),
      Key("receive.buffer.bytes", T::kInt, "32768", -1),
      Key("connections.max.idle.ms", T::kLong, "540000"),
      Key("reconnect.backoff.ms", T::kLong, "50", 0),
      Key("metrics.sample.window.ms", T::kLong, "30000", 0),
      Key("metrics.num.samples", T::kInt, "2", 1),
      // 0.8.2's names, deprecated by 0.9.0 (KafkaProducer maps them, below), removed in 0.11.0.
      Key("timeout.ms", T::kInt, "30000", 0),
      Key("metadata.fetch.timeout.ms", T::kLong, "60000", 0),
      Key("block.on.buffer.full", T::kBoolean, "false"),
  };
  return kKeys;
}

const ConfigKeyDef* FindKey(std::string_view name) {
  for (const ConfigKeyDef& key : ProducerKeys()) {
    if (key.name == name) return &key;
  }
  return nullptr;
}

std::string UnknownKeyMessage(const std::string& name) {
  std::vector<std::string_view> names;
  for (const ConfigKeyDef& key : ProducerKeys()) names.push_back(key.name);
  std::string message = "Unknown producer configuration `" + name + "`.";
  if (std::optional<std::string_view> closest = ClosestName(name, names)) {
    message += " Did you mean `" + std::string(*closest) + "`?";
  }
  return message;
}

// The keys that not every modelled release's producer has (ProducerConfig.CONFIG at each
// release's tag). A producer without a key does not use it: AbstractConfig.logUnused warns. Every
// other key of ProducerKeys() is in every modelled release's ProducerConfig.
struct KeyLife {
  std::string_view name;
  KafkaRelease since = KafkaRelease::k0_8_2;  // the first modelled release that has it
  std::string_view since_name = {};           // the release that added it, when not modelled
  std::optional<KafkaRelease> removed_in = std::nullopt;
};
constexpr KeyLife kKeyLives[] = {
    // KIP-19 (0.9.0.0:ProducerConfig): the client's own request timeout and max.block.ms
    // replaced timeout.ms and metadata.fetch.timeout.ms; partitioner.class and
    // connections.max.idle.ms came with 0.9.0 too (none is in 0.8.2.2:ProducerConfig).
    {"request.timeout.ms", KafkaRelease::k0_10_0, "0.9.0"},
    {"max.block.ms", KafkaRelease::k0_10_0, "0.9.0"},
    {"partitioner.class", KafkaRelease::k0_10_0, "0.9.0"},
    {"connections.max.idle.ms", KafkaRelease::k0_10_0, "0.9.0"},
    {"enable.idempotence", KafkaRelease::k0_11_0},  // KIP-98, KAFKA-4817
    {"delivery.timeout.ms", KafkaRelease::k2_1},    // KIP-91 (2.1.0:ProducerConfig)
    // 0.11.0.0's upgrade notes: "Producer configs block.on.buffer.full, metadata.fetch.timeout.ms
    // and timeout.ms have been removed. They were initially deprecated in Kafka 0.9.0.0."
    {"timeout.ms", KafkaRelease::k0_8_2, {}, KafkaRelease::k0_11_0},
    {"metadata.fetch.timeout.ms", KafkaRelease::k0_8_2, {}, KafkaRelease::k0_11_0},
    {"block.on.buffer.full", KafkaRelease::k0_8_2, {}, KafkaRelease::k0_11_0},
};

const KeyLife* FindLife(std::string_view name) {
  for (const KeyLife& life : kKeyLives) {
    if (life.name == name) return &life;
  }
  return nullptr;
}

std::string SinceName(const KeyLife& life) {
  return std::string(life.since_name.empty() ? KafkaReleaseName(life.since) : life.since_name);
}

std::string Trimmed(std::string_view raw) {
  std::string text(raw);
  text.erase(0, text.find_first_not_of(" \t"));
  text.erase(text.find_last_not_of(" \t") + 1);
  return text;
}

// "all" and "-1" are -1; "0", "1" as such; N > 1 is the 0.8.1 producer's acks=N, which every
// modelled release's producer refuses (ParseProducerConfig), 0.8.2's included.
std::optional<int16_t> ParseAcks(std::string_view raw) {
  const std::string text = Trimmed(raw);
  if (text == "all" || text == "-1") return int16_t{-1};
  if (text.empty() || text.size() > 4) return std::nullopt;
  if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return static_cast<int16_t>(std::stoi(text));
}

bool ProducerKnowsKey(std::string_view name, KafkaRelease release) {
  if (FindKey(name) == nullptr) return false;
  const KeyLife* life = FindLife(name);
  return life == nullptr ||
         (release >= life->since && (!life->removed_in || release < *life->removed_in));
}

}  // namespace

Result<ProducerConfig> ParseProducerConfig(const ConfigOverrides& settings, KafkaRelease release) {
  ProducerConfig config;
  config.release = release;
  config.brokers_release = release;
  std::set<std::string> given;
  // The names 0.9.0 deprecated (KIP-19), when given.
  std::optional<int32_t> timeout_ms;
  std::optional<int64_t> metadata_fetch_timeout_ms;
  std::optional<bool> block_on_buffer_full;
  for (const auto& [name, raw] : settings) {
    const ConfigKeyDef* key = FindKey(name);
    if (key == nullptr) return Status(Errc::kInvalidConfig, UnknownKeyMessage(name));
    if (!ProducerKnowsKey(name, release) && release < KafkaRelease::k0_10_0) {
      // Kafka 0.8.2's producer would warn too; ksim refuses a key that much later, whose
      // behaviour that producer cannot have (docs/versions.md, "Kafka 0.8.2").
      return Status(Errc::kInvalidConfig,
                    "the Kafka " + std::string(KafkaReleaseName(release)) +
                        " producer has no setting " + name + "; it exists from Kafka " +
                        SinceName(*FindLife(name)) + " (set \"kafka_version\")");
    }
    if (!ProducerKnowsKey(name, release)) {
      // KafkaProducer's config.logUnused(): a warning, and the producer goes on without it.
      config.warnings.push_back("The configuration " + name + " = " + Trimmed(raw) +
                                " was supplied but isn't a known config.");
      continue;
    }
    given.insert(name);
    if (name == "acks") {
      // ConfigDef.ValidString: every modelled release's producer takes only these four, 0.8.2's
      // too (0.8.2.2:clients/.../producer/ProducerConfig.java `in("all", "-1", "0", "1")`; its
      // old Scala producer refuses N > 1 as well, KAFKA-1555). Only the 0.8.2 broker takes N.
      std::optional<int16_t> acks = ParseAcks(raw);
      if (!acks || *acks > 1) {
        return Status(Errc::kInvalidConfig, "Invalid value " + Trimmed(raw) +
                                                " for configuration acks: String must be one "
                                                "of: all, -1, 0, 1");
      }
      config.acks = *acks;
      continue;
    }
    ConfigValue value;
    if (std::optional<std::string> reason = ParseConfigValue(*key, raw, value)) {
      return Status(Errc::kInvalidConfig, InvalidValueMessage(*key, raw, *reason));
    }
    const int64_t n = value.integer;
    if (name == "bootstrap.servers") {
      config.bootstrap_servers.clear();
      for (const std::string& server : value.list) {
        if (server.empty()) continue;
        config.bootstrap_servers.push_back(server.substr(0, server.find(':')));
      }
    }
    if (name == "client.id") config.client_id = value.text;
    if (name == "retries") config.retries = static_cast<int32_t>(n);
    if (name == "retry.backoff.ms") config.retry_backoff_ms = n;
    if (name == "request.timeout.ms") config.request_timeout_ms = static_cast<int32_t>(n);
    if (name == "delivery.timeout.ms") config.delivery_timeout_ms = n;
    if (name == "linger.ms") config.linger_ms = n;
    if (name == "batch.size") config.batch_size = static_cast<int32_t>(n);
    if (name == "max.in.flight.requests.per.connection") {
      config.max_in_flight_requests_per_connection = static_cast<int32_t>(n);
    }
    if (name == "enable.idempotence") config.enable_idempotence = value.boolean;
    if (name == "partitioner.class") {
      // Only Kafka's DefaultPartitioner exists here.
      if (value.text != "default" &&
          value.text != "org.apache.kafka.clients.producer.internals.DefaultPartitioner") {
        return Status(Errc::kInvalidConfig,
                      InvalidValueMessage(*key, raw,
                                          "Class " + value.text +
                                              " could not be found (only the default "
                                              "partitioner exists)"));
      }
      config.partitioner = "default";
    }
    if (name == "metadata.max.age.ms") config.metadata_max_age_ms = n;
    if (name == "max.block.ms") config.max_block_ms = n;
    if (name == "max.request.size") config.max_request_size = static_cast<int32_t>(n);
    if (name == "timeout.ms") timeout_ms = static_cast<int32_t>(n);
    if (name == "metadata.fetch.timeout.ms") metadata_fetch_timeout_ms = n;
    if (name == "block.on.buffer.full") block_on_buffer_full = value.boolean;
  }

  if (!RequestTimeoutsApply(release)) {
    // Kafka 0.8.2 (0.8.2.2:KafkaProducer): timeout.ms is the Produce request's timeout (the
    // broker's wait for acks) and nothing times a request out on the client
    // (RequestTimeoutsApply); metadata.fetch.timeout.ms bounds send()'s wait for metadata.
    config.request_timeout_ms = timeout_ms.value_or(30000);
    config.max_block_ms = metadata_fetch_timeout_ms.value_or(60000);
  } else {
    // 0.9.0 to 0.10.2 (0.10.0.1:KafkaProducer's constructor): the deprecated names, when given,
    // win over their successors, with a warning; block.on.buffer.full=true blocks forever.
    auto deprecated = [&config](std::string_view old_name, std::string_view successor) {
      config.warnings.push_back(std::string(old_name) +
                                " config is deprecated and will be removed soon. Please use " +
                                std::string(successor));
    };
    if (block_on_buffer_full) {
      deprecated("block.on.buffer.full", "max.block.ms");
      if (*block_on_buffer_full) config.max_block_ms = std::numeric_limits<int64_t>::max();
    }
    if (metadata_fetch_timeout_ms && !block_on_buffer_full.value_or(false)) {
      deprecated("metadata.fetch.timeout.ms", "max.block.ms");
      config.max_block_ms = *metadata_fetch_timeout_ms;
    }
    if (timeout_ms) {
      deprecated("timeout.ms", "request.timeout.ms");
      config.request_timeout_ms = *timeout_ms;
    }
  }

  // KafkaProducer.configureDeliveryTimeout (2.1, KIP-91): a given delivery timeout must cover a
  // linger and one request. Before 2.1 the key is unknown (a warning above) and unused.
  if (given.count("delivery.timeout.ms") &&
      config.delivery_timeout_ms < config.linger_ms + config.request_timeout_ms) {
    return Status(Errc::kInvalidConfig,
                  "delivery.timeout.ms should be equal to or larger than linger.ms + "
                  "request.timeout.ms");
  }
  if (!given.count("delivery.timeout.ms")) {
    config.delivery_timeout_ms =
        std::max(config.delivery_timeout_ms, config.linger_ms + config.request_timeout_ms);
  }

  // KafkaProducer.configureInflightRequests / configureRetries / configureAcks: 0.11.0 keeps one
  // request in flight (KAFKA-4817); 1.0 allows up to 5 (KAFKA-5494).
  if (config.enable_idempotence && release < KafkaRelease::k1_0) {
    if (!given.count("max.in.flight.requests.per.connection")) {
      config.max_in_flight_requests_per_connection = 1;
    } else if (config.max_in_flight_requests_per_connection != 1) {
      // The missing space ("orderto") is Kafka 0.11.0's.
      return Status(Errc::kInvalidConfig,
                    "Must set max.in.flight.requests.per.connection to 1 in orderto use the "
                    "idempotent producer. Otherwise we cannot guarantee idempotence.");
    }
  }
  if (config.enable_idempotence) {
    if (given.count("max.in.flight.requests.per.connection") &&
        config.max_in_flight_requests_per_connection > 5) {
      return Status(Errc::kInvalidConfig,
                    "Must set max.in.flight.requests.per.connection to at most 5 to use the "
                    "idempotent producer.");
    }
    if (!given.count("retries")) {
      config.retries = std::numeric_limits<int32_t>::max();
    } else if (config.retries == 0) {
      return Status(Errc::kInvalidConfig,
                    "Must set retries to non-zero when using the idempotent producer.");
    }
    if (!given.count("acks")) {
      config.acks = -1;
    } else if (config.acks != -1) {
      return Status(Errc::kInvalidConfig,
                    "Must set acks to all in order to use the idempotent producer. Otherwise we "
                    "cannot guarantee idempotence.");
    }
  }
  return config;
}

}  // namespace ksim
