// ParseProducerConfig: Kafka 0.10's defaults, acks spellings, Kafka's messages for bad values
// and unknown keys, KafkaProducer's idempotence per release: unknown before 0.11.0 (a
// warning), one request in flight at 0.11.0, up to 5 from 1.0; delivery.timeout.ms from 2.1.
#include <gtest/gtest.h>

#include <limits>

#include "core/clients/producer/producer.h"

namespace ksim {
namespace {

ProducerConfig Parse(const ConfigOverrides& settings, KafkaRelease release = kSeedKafkaRelease) {
  Result<ProducerConfig> config = ParseProducerConfig(settings, release);
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return config.ok() ? *config : ProducerConfig{};
}

std::string Error(const ConfigOverrides& settings, KafkaRelease release = kSeedKafkaRelease) {
  Result<ProducerConfig> config = ParseProducerConfig(settings, release);
  EXPECT_FALSE(config.ok());
  if (config.ok()) return "";
  EXPECT_EQ(config.status().code(), Errc::kInvalidConfig);
  return config.status().message();
}

TEST(ProducerConfigTest, DefaultsAreKafka010s) {
  const ProducerConfig config = Parse({});
  EXPECT_EQ(config.acks, 1);
  EXPECT_EQ(config.retries, 0);
  EXPECT_EQ(config.retry_backoff_ms, 100);
  EXPECT_EQ(config.request_timeout_ms, 30000);
  EXPECT_EQ(config.delivery_timeout_ms, 120000);
  EXPECT_EQ(config.linger_ms, 0);
  EXPECT_EQ(config.batch_size, 16384);
  EXPECT_EQ(config.max_in_flight_requests_per_connection, 5);
  EXPECT_FALSE(config.enable_idempotence);
  EXPECT_EQ(config.partitioner, "default");
  EXPECT_EQ(config.metadata_max_age_ms, 300000);
  EXPECT_EQ(config.max_block_ms, 60000);
  EXPECT_EQ(config.max_request_size, 1048576);
}

TEST(ProducerConfigTest, AcksSpellings) {
  EXPECT_EQ(Parse({{"acks", "all"}}).acks, -1);
  EXPECT_EQ(Parse({{"acks", "-1"}}).acks, -1);
  EXPECT_EQ(Parse({{"acks", "0"}}).acks, 0);
  EXPECT_EQ(Parse({{"acks", "1"}}).acks, 1);
  EXPECT_EQ(Parse({{"acks", " 1 "}}).acks, 1);
}

TEST(ProducerConfigTest, AcksAboveOneIsRefusedAtEveryRelease) {
  // ProducerConfig's ValidString.in("all", "-1", "0", "1") at 0.8.2.2 and after: the seed's
  // acks=2 (0.8.1's N replicas) is Kafka's ConfigException, 0.8.2's producer included.
  for (KafkaRelease release : KafkaReleases()) {
    EXPECT_EQ(Error({{"acks", "2"}}, release),
              "Invalid value 2 for configuration acks: String must be one of: all, -1, 0, 1")
        << KafkaReleaseName(release);
    EXPECT_EQ(Error({{"acks", " 3"}}, release),
              "Invalid value 3 for configuration acks: String must be one of: all, -1, 0, 1");
  }
}

// At 0.8.2 a key of a much later producer is refused (exit 2 in a scenario), not warned about:
// its behaviour cannot exist there. The same keys are warnings at 0.10.0.
TEST(ProducerConfigTest, LaterKeysAreRefusedAt082) {
  EXPECT_EQ(Error({{"enable.idempotence", "true"}}, KafkaRelease::k0_8_2),
            "the Kafka 0.8.2 producer has no setting enable.idempotence; it exists from Kafka "
            "0.11.0 (set \"kafka_version\")");
  EXPECT_EQ(Error({{"delivery.timeout.ms", "120000"}}, KafkaRelease::k0_8_2),
            "the Kafka 0.8.2 producer has no setting delivery.timeout.ms; it exists from Kafka "
            "2.1 (set \"kafka_version\")");
  Result<ProducerConfig> at_0100 =
      ParseProducerConfig({{"enable.idempotence", "true"}}, KafkaRelease::k0_10_0);
  ASSERT_TRUE(at_0100.ok());
  EXPECT_EQ(at_0100->warnings.size(), 1u);
  EXPECT_EQ(Parse({{"acks", "all"}}, KafkaRelease::k0_8_2).acks, -1);
}

// 0.8.2.2:ProducerConfig has timeout.ms and metadata.fetch.timeout.ms, not KIP-19's
// request.timeout.ms and max.block.ms (0.9.0), nor partitioner.class or connections.max.idle.ms.
TEST(ProducerConfigTest, Kafka082sTimeoutsAreTimeoutMsAndMetadataFetchTimeoutMs) {
  const KafkaRelease k082 = KafkaRelease::k0_8_2;
  for (const char* later :
       {"request.timeout.ms", "max.block.ms", "partitioner.class", "connections.max.idle.ms"}) {
    EXPECT_EQ(Error({{later, "1000"}}, k082), "the Kafka 0.8.2 producer has no setting " +
                                                  std::string(later) +
                                                  "; it exists from Kafka 0.9.0 (set "
                                                  "\"kafka_version\")");
  }
  const ProducerConfig defaults = Parse({}, k082);
  EXPECT_EQ(defaults.request_timeout_ms, 30000);
  EXPECT_EQ(defaults.max_block_ms, 60000);
  const ProducerConfig given =
      Parse({{"timeout.ms", "1500"}, {"metadata.fetch.timeout.ms", "700"}}, k082);
  EXPECT_EQ(given.request_timeout_ms, 1500) << "the Produce request's timeout";
  EXPECT_EQ(given.max_block_ms, 700);
  EXPECT_TRUE(given.warnings.empty());
  EXPECT_FALSE(RequestTimeoutsApply(k082));
  EXPECT_TRUE(RequestTimeoutsApply(KafkaRelease::k0_10_0));
}

// 0.9.0 to 0.10.2 (0.10.0.1:KafkaProducer): the deprecated names win over their successors,
// with KafkaProducer's warning; block.on.buffer.full=true blocks for ever and then
// metadata.fetch.timeout.ms is not read.
TEST(ProducerConfigTest, DeprecatedTimeoutNamesWinUntil0110) {
  for (KafkaRelease release : {KafkaRelease::k0_10_0, KafkaRelease::k0_10_2}) {
    const ProducerConfig config = Parse({{"timeout.ms", "1500"},
                                         {"request.timeout.ms", "9000"},
                                         {"metadata.fetch.timeout.ms", "700"},
                                         {"max.block.ms", "9000"}},
                                        release);
    EXPECT_EQ(config.request_timeout_ms, 1500);
    EXPECT_EQ(config.max_block_ms, 700);
    EXPECT_EQ(config.warnings,
              (std::vector<std::string>{
                  "metadata.fetch.timeout.ms config is deprecated and will be removed soon. "
                  "Please use max.block.ms",
                  "timeout.ms config is deprecated and will be removed soon. Please use "
                  "request.timeout.ms"}));
  }
  const ProducerConfig blocking =
      Parse({{"block.on.buffer.full", "true"}, {"metadata.fetch.timeout.ms", "700"}});
  EXPECT_EQ(blocking.max_block_ms, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(blocking.warnings, std::vector<std::string>{"block.on.buffer.full config is "
                                                        "deprecated and will be removed soon. "
                                                        "Please use max.block.ms"});
  EXPECT_EQ(
      Parse({{"block.on.buffer.full", "false"}, {"metadata.fetch.timeout.ms", "700"}}).max_block_ms,
      700);
}

// 0.11.0 removed them (its upgrade notes): KafkaProducer's logUnused warning, value unused.
TEST(ProducerConfigTest, DeprecatedTimeoutNamesAreUnknownFrom0110) {
  for (KafkaRelease release : {KafkaRelease::k0_11_0, KafkaRelease::k2_1}) {
    const ProducerConfig config =
        Parse({{"timeout.ms", "1500"}, {"block.on.buffer.full", "true"}}, release);
    EXPECT_EQ(config.request_timeout_ms, 30000);
    EXPECT_EQ(config.max_block_ms, 60000);
    EXPECT_EQ(config.warnings,
              (std::vector<std::string>{
                  "The configuration timeout.ms = 1500 was supplied but isn't a known config.",
                  "The configuration block.on.buffer.full = true was supplied but isn't a known "
                  "config."}));
  }
}

TEST(ProducerConfigTest, BadAcksNamesTheValidOnes) {
  const std::string message = Error({{"acks", "most"}});
  EXPECT_NE(message.find("Invalid value most for configuration acks"), std::string::npos)
      << message;
  EXPECT_NE(message.find("all, -1, 0, 1"), std::string::npos) << message;
  EXPECT_FALSE(ParseProducerConfig({{"acks", "-2"}}).ok());
  EXPECT_FALSE(ParseProducerConfig({{"acks", ""}}).ok());
}

TEST(ProducerConfigTest, BadValuesGiveKafkasMessage) {
  EXPECT_EQ(Error({{"retries", "many"}})
                .rfind("Invalid value many for configuration retries: Not a number of type INT", 0),
            0u);
  EXPECT_NE(Error({{"retries", "-1"}}).find("Value must be at least 0"), std::string::npos);
  EXPECT_NE(Error({{"max.in.flight.requests.per.connection", "0"}}).find("at least 1"),
            std::string::npos);
  EXPECT_NE(
      Error({{"enable.idempotence", "yes"}}, KafkaRelease::k0_11_0).find("enable.idempotence"),
      std::string::npos);
  EXPECT_NE(Error({{"compression.type", "gzip"}}).find("String must be one of: none"),
            std::string::npos);
}

TEST(ProducerConfigTest, UnknownKeySuggestsTheClosest) {
  const std::string message = Error({{"retires", "3"}});
  EXPECT_NE(message.find("`retires`"), std::string::npos) << message;
  EXPECT_NE(message.find("Did you mean `retries`?"), std::string::npos) << message;
  const std::string far = Error({{"zookeeper.connect", "x"}});
  EXPECT_EQ(far.find("Did you mean"), std::string::npos) << far;
}

TEST(ProducerConfigTest, SettingsAreRead) {
  const ProducerConfig config = Parse({{"bootstrap.servers", "broker-1:9092, broker-2"},
                                       {"client.id", "p1"},
                                       {"retries", "3"},
                                       {"retry.backoff.ms", "50"},
                                       {"request.timeout.ms", "5000"},
                                       {"linger.ms", "10"},
                                       {"delivery.timeout.ms", "20000"},
                                       {"batch.size", "100"},
                                       {"max.in.flight.requests.per.connection", "1"}},
                                      KafkaRelease::k2_1);
  EXPECT_EQ(config.bootstrap_servers, (std::vector<std::string>{"broker-1", "broker-2"}));
  EXPECT_EQ(config.client_id, "p1");
  EXPECT_EQ(config.retries, 3);
  EXPECT_EQ(config.retry_backoff_ms, 50);
  EXPECT_EQ(config.request_timeout_ms, 5000);
  EXPECT_EQ(config.linger_ms, 10);
  EXPECT_EQ(config.delivery_timeout_ms, 20000);
  EXPECT_EQ(config.batch_size, 100);
  EXPECT_EQ(config.max_in_flight_requests_per_connection, 1);
}

TEST(ProducerConfigTest, DeliveryTimeoutMustCoverLingerAndRequest) {
  constexpr KafkaRelease k21 = KafkaRelease::k2_1;
  // KIP-91: delivery.timeout.ms >= linger.ms + request.timeout.ms.
  EXPECT_NE(Error({{"delivery.timeout.ms", "1000"}, {"request.timeout.ms", "2000"}}, k21)
                .find("delivery.timeout.ms should be equal to or larger than"),
            std::string::npos);
  // Not given: raised to cover them.
  EXPECT_EQ(Parse({{"request.timeout.ms", "200000"}}, k21).delivery_timeout_ms, 200000);
  EXPECT_TRUE(DeliveryTimeoutApplies(k21));
  EXPECT_EQ(Parse({}, k21).release, k21);
}

TEST(ProducerConfigTest, DeliveryTimeoutIsUnknownBefore21) {
  // KIP-91 is 2.1's: an older producer warns (AbstractConfig.logUnused) and never reads it, so
  // a value 2.1 would refuse is only echoed, and batches expire by request.timeout.ms.
  for (KafkaRelease release : {KafkaRelease::k0_10_0, KafkaRelease::k1_1, KafkaRelease::k2_0}) {
    const ProducerConfig config =
        Parse({{"delivery.timeout.ms", "1000"}, {"request.timeout.ms", "2000"}}, release);
    EXPECT_EQ(config.warnings,
              std::vector<std::string>{"The configuration delivery.timeout.ms = 1000 was "
                                       "supplied but isn't a known config."});
    EXPECT_EQ(config.request_timeout_ms, 2000);
    EXPECT_EQ(config.release, release);
    EXPECT_FALSE(DeliveryTimeoutApplies(release));
  }
  EXPECT_TRUE(Parse({{"delivery.timeout.ms", "200000"}}, KafkaRelease::k2_1).warnings.empty());
}

TEST(ProducerConfigTest, IdempotenceIsUnknownBefore0110) {
  // KafkaProducer 0.10 logs AbstractConfig.logUnused's warning and runs without idempotence:
  // none of 0.11's checks or defaults apply.
  for (KafkaRelease release :
       {KafkaRelease::k0_10_0, KafkaRelease::k0_10_1, KafkaRelease::k0_10_2}) {
    const ProducerConfig config =
        Parse({{"enable.idempotence", "true"}, {"acks", "1"}, {"retries", "0"}}, release);
    EXPECT_FALSE(config.enable_idempotence);
    EXPECT_EQ(config.acks, 1);
    EXPECT_EQ(config.retries, 0);
    EXPECT_EQ(config.max_in_flight_requests_per_connection, 5);
    EXPECT_EQ(config.warnings, std::vector<std::string>{
                                   "The configuration enable.idempotence = true was supplied but "
                                   "isn't a known config."});
  }
  // Unknown means unread: a value 0.11 would refuse is only echoed.
  EXPECT_EQ(Parse({{"enable.idempotence", "yes"}}).warnings,
            std::vector<std::string>{"The configuration enable.idempotence = yes was supplied but "
                                     "isn't a known config."});
  EXPECT_TRUE(Parse({{"acks", "all"}}).warnings.empty());
  EXPECT_TRUE(Parse({{"enable.idempotence", "true"}}, KafkaRelease::k0_11_0).warnings.empty());
}

TEST(ProducerConfigTest, IdempotenceForcesAcksAllAndRetries) {
  for (KafkaRelease release : {KafkaRelease::k0_11_0, KafkaRelease::k1_0, KafkaRelease::k2_0}) {
    const ProducerConfig config = Parse({{"enable.idempotence", "true"}}, release);
    EXPECT_TRUE(config.enable_idempotence);
    EXPECT_EQ(config.acks, -1);
    EXPECT_EQ(config.retries, std::numeric_limits<int32_t>::max());
    // 0.11.0 keeps one request in flight (KAFKA-4817); 1.0 allows 5 (KAFKA-5494).
    EXPECT_EQ(config.max_in_flight_requests_per_connection,
              release == KafkaRelease::k0_11_0 ? 1 : 5);
    // Given values that agree are kept.
    const ProducerConfig given =
        Parse({{"enable.idempotence", "true"}, {"acks", "all"}, {"retries", "7"}}, release);
    EXPECT_EQ(given.acks, -1);
    EXPECT_EQ(given.retries, 7);
  }
}

TEST(ProducerConfigTest, IdempotenceRefusesConflictingSettings) {
  constexpr KafkaRelease k20 = KafkaRelease::k2_0;
  EXPECT_EQ(Error({{"enable.idempotence", "true"}, {"acks", "1"}}, k20),
            "Must set acks to all in order to use the idempotent producer. Otherwise we cannot "
            "guarantee idempotence.");
  EXPECT_EQ(Error({{"enable.idempotence", "true"}, {"retries", "0"}}, k20),
            "Must set retries to non-zero when using the idempotent producer.");
  EXPECT_EQ(
      Error({{"enable.idempotence", "true"}, {"max.in.flight.requests.per.connection", "6"}}, k20),
      "Must set max.in.flight.requests.per.connection to at most 5 to use the idempotent "
      "producer.");
  // 0.11.0: exactly one (the missing space is Kafka's).
  EXPECT_EQ(Error({{"enable.idempotence", "true"}, {"max.in.flight.requests.per.connection", "2"}},
                  KafkaRelease::k0_11_0),
            "Must set max.in.flight.requests.per.connection to 1 in orderto use the idempotent "
            "producer. Otherwise we cannot guarantee idempotence.");
  EXPECT_EQ(Parse({{"enable.idempotence", "true"}, {"max.in.flight.requests.per.connection", "1"}},
                  KafkaRelease::k0_11_0)
                .max_in_flight_requests_per_connection,
            1);
  // Without idempotence the same settings are fine.
  EXPECT_TRUE(
      ParseProducerConfig({{"acks", "1"}, {"max.in.flight.requests.per.connection", "6"}}, k20)
          .ok());
}

TEST(ProducerConfigTest, OnlyTheDefaultPartitionerExists) {
  EXPECT_EQ(Parse({{"partitioner.class",
                    "org.apache.kafka.clients.producer.internals.DefaultPartitioner"}})
                .partitioner,
            "default");
  EXPECT_FALSE(ParseProducerConfig({{"partitioner.class", "com.example.Mine"}}).ok());
}

}  // namespace
}  // namespace ksim
