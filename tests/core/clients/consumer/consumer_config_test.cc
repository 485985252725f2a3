// ParseConsumerConfig: each release's consumer defaults (0.10.0 and 0.10.1), the keys a release
// does not have (KafkaConsumer's warning), parsing of Kafka's names, and Kafka's refusals
// (ConfigDef validators, the constructor's cross-checks, unknown keys with a hint).
#include <gtest/gtest.h>

#include <limits>

#include "core/base/text_distance.h"
#include "core/clients/consumer/consumer.h"

namespace ksim {
namespace {

TEST(ConsumerConfigTest, DefaultsAreKafka0101sFrom0101) {
  Result<ConsumerConfig> config =
      ParseConsumerConfig({{"bootstrap.servers", "broker-1"}}, KafkaRelease::k0_10_1);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->release, KafkaRelease::k0_10_1);
  EXPECT_EQ(config->bootstrap_servers, std::vector<std::string>{"broker-1"});
  EXPECT_EQ(config->group_id, "");
  EXPECT_EQ(config->auto_offset_reset, "latest");
  EXPECT_TRUE(config->enable_auto_commit);
  EXPECT_EQ(config->auto_commit_interval_ms, 5000);
  EXPECT_EQ(config->session_timeout_ms, 10000);
  EXPECT_EQ(config->heartbeat_interval_ms, 3000);
  EXPECT_EQ(config->max_poll_interval_ms, 300000);
  EXPECT_EQ(config->max_poll_records, 500);
  EXPECT_EQ(config->fetch_min_bytes, 1);
  EXPECT_EQ(config->fetch_max_wait_ms, 500);
  EXPECT_EQ(config->max_partition_fetch_bytes, 1048576);
  EXPECT_EQ(config->request_timeout_ms, 305000);
  EXPECT_EQ(config->retry_backoff_ms, 100);
  EXPECT_EQ(config->metadata_max_age_ms, 300000);
  EXPECT_EQ(config->partition_assignment_strategy, std::vector<std::string>{"range"});
  EXPECT_TRUE(config->warnings.empty());
  // The same at 2.1 (0.10.1.0's ConsumerConfig defaults lasted to 2.1.0).
  config = ParseConsumerConfig({{"bootstrap.servers", "broker-1"}}, KafkaRelease::k2_1);
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->session_timeout_ms, 10000);
  EXPECT_EQ(config->request_timeout_ms, 305000);
  EXPECT_EQ(config->max_poll_records, 500);
}

// 0.10.0.1's ConsumerConfig: session.timeout.ms 30000, request.timeout.ms 40000,
// max.poll.records Integer.MAX_VALUE. It is the seed's release and ParseConsumerConfig's default.
TEST(ConsumerConfigTest, DefaultsAreKafka0100sAt0100) {
  Result<ConsumerConfig> config = ParseConsumerConfig({{"bootstrap.servers", "broker-1"}});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->release, KafkaRelease::k0_10_0);
  EXPECT_EQ(config->session_timeout_ms, 30000);
  EXPECT_EQ(config->request_timeout_ms, 40000);
  EXPECT_EQ(config->max_poll_records, std::numeric_limits<int32_t>::max());
  EXPECT_EQ(config->heartbeat_interval_ms, 3000);
  EXPECT_EQ(config->auto_commit_interval_ms, 5000);
  EXPECT_TRUE(config->warnings.empty());
  // Given values are taken as at any release.
  config = ParseConsumerConfig(
      {{"bootstrap.servers", "b"}, {"session.timeout.ms", "10000"}, {"max.poll.records", "500"}},
      KafkaRelease::k0_10_0);
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->session_timeout_ms, 10000);
  EXPECT_EQ(config->max_poll_records, 500);
}

// max.poll.interval.ms (KIP-62) and fetch.max.bytes (KIP-74) arrived in 0.10.1: a 0.10.0 consumer
// warns as KafkaConsumer's logUnused does and goes on without them.
TEST(ConsumerConfigTest, KeysOf0101AreAWarningAt0100) {
  Result<ConsumerConfig> config = ParseConsumerConfig({{"bootstrap.servers", "b"},
                                                       {"max.poll.interval.ms", " 60000 "},
                                                       {"fetch.max.bytes", "1000"}},
                                                      KafkaRelease::k0_10_0);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(
      config->warnings,
      (std::vector<std::string>{
          "The configuration max.poll.interval.ms = 60000 was supplied but isn't a known "
          "config.",
          "The configuration fetch.max.bytes = 1000 was supplied but isn't a known config."}));
  EXPECT_EQ(config->max_poll_interval_ms, 300000);  // untouched, and unused at 0.10.0
  EXPECT_FALSE(ConsumerKnowsKey("max.poll.interval.ms", KafkaRelease::k0_10_0));
  EXPECT_TRUE(ConsumerKnowsKey("max.poll.records", KafkaRelease::k0_10_0));  // KIP-41, 0.10.0

  config = ParseConsumerConfig({{"bootstrap.servers", "b"}, {"max.poll.interval.ms", "60000"}},
                               KafkaRelease::k0_10_1);
  ASSERT_TRUE(config.ok());
  EXPECT_TRUE(config->warnings.empty());
  EXPECT_EQ(config->max_poll_interval_ms, 60000);
  EXPECT_TRUE(ConsumerKnowsKey("max.poll.interval.ms", KafkaRelease::k0_10_1));
  // A bad value of a key the release does not have is not even read.
  EXPECT_TRUE(ParseConsumerConfig({{"bootstrap.servers", "b"}, {"max.poll.interval.ms", "x"}},
                                  KafkaRelease::k0_10_0)
                  .ok());
}

TEST(ConsumerConfigTest, ParsesKafkaNames) {
  Result<ConsumerConfig> config = ParseConsumerConfig({
      {"bootstrap.servers", "hadoop01:9092, hadoop02:9092"},
      {"group.id", "g1"},
      {"client.id", "c1"},
      {"auto.offset.reset", "earliest"},
      {"enable.auto.commit", "FALSE"},
      {"auto.commit.interval.ms", "1000"},
      {"session.timeout.ms", "6000"},
      {"heartbeat.interval.ms", "2000"},
      {"max.poll.records", "10"},
      {"fetch.max.wait.ms", "100"},
      {"partition.assignment.strategy",
       "roundrobin,org.apache.kafka.clients.consumer.RangeAssignor"},
      {"key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer"},
  });
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  // The port is dropped: brokers are nodes named by host.
  EXPECT_EQ(config->bootstrap_servers, (std::vector<std::string>{"hadoop01", "hadoop02"}));
  EXPECT_EQ(config->group_id, "g1");
  EXPECT_EQ(config->client_id, "c1");
  EXPECT_EQ(config->auto_offset_reset, "earliest");
  EXPECT_FALSE(config->enable_auto_commit);
  EXPECT_EQ(config->auto_commit_interval_ms, 1000);
  EXPECT_EQ(config->session_timeout_ms, 6000);
  EXPECT_EQ(config->heartbeat_interval_ms, 2000);
  EXPECT_EQ(config->max_poll_records, 10);
  EXPECT_EQ(config->fetch_max_wait_ms, 100);
  EXPECT_EQ(
      config->partition_assignment_strategy,
      (std::vector<std::string>{"roundrobin", "org.apache.kafka.clients.consumer.RangeAssignor"}));
}

TEST(ConsumerConfigTest, BootstrapServersIsRequired) {
  Result<ConsumerConfig> config = ParseConsumerConfig({{"group.id", "g"}});
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), Errc::kInvalidConfig);
  EXPECT_NE(config.status().message().find(
                "Missing required configuration \"bootstrap.servers\" which has no default value."),
            std::string::npos);
}

TEST(ConsumerConfigTest, BadValuesAreRefusedWithKafkasReasons) {
  Result<ConsumerConfig> config = ParseConsumerConfig({{"bootstrap.servers", "b"},
                                                       {"auto.offset.reset", "smallest"},
                                                       {"max.poll.records", "0"},
                                                       {"session.timeout.ms", "ten"}});
  ASSERT_FALSE(config.ok());
  const std::string& message = config.status().message();
  EXPECT_NE(message.find("Invalid value smallest for configuration auto.offset.reset"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("String must be one of: latest, earliest, none"), std::string::npos)
      << message;
  EXPECT_NE(message.find("Invalid value 0 for configuration max.poll.records"), std::string::npos);
  EXPECT_NE(message.find("Value must be at least 1"), std::string::npos);
  EXPECT_NE(message.find("Not a number of type INT"), std::string::npos);
}

TEST(ConsumerConfigTest, UnknownAssignorIsRefused) {
  Result<ConsumerConfig> config = ParseConsumerConfig(
      {{"bootstrap.servers", "b"}, {"partition.assignment.strategy", "sticky"}});
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("Class sticky cannot be found"), std::string::npos)
      << config.status().message();
}

TEST(ConsumerConfigTest, UnknownKeyNamesTheClosestOne) {
  Result<ConsumerConfig> config =
      ParseConsumerConfig({{"bootstrap.servers", "b"}, {"auto.offset.rest", "earliest"}});
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), Errc::kInvalidConfig);
  EXPECT_NE(config.status().message().find(
                "Unknown configuration `auto.offset.rest`. Did you mean `auto.offset.reset`?"),
            std::string::npos)
      << config.status().message();
  // Nothing close: no hint.
  config = ParseConsumerConfig({{"bootstrap.servers", "b"}, {"zookeeper.connect", "zk"}});
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message().find("Did you mean"), std::string::npos)
      << config.status().message();
}

TEST(ConsumerConfigTest, HeartbeatMustBeBelowSessionTimeout) {
  Result<ConsumerConfig> config = ParseConsumerConfig({{"bootstrap.servers", "b"},
                                                       {"session.timeout.ms", "3000"},
                                                       {"heartbeat.interval.ms", "3000"}});
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("Heartbeat must be set lower than the session timeout"),
            std::string::npos);
}

TEST(ConsumerConfigTest, RequestTimeoutMustExceedSessionTimeoutAndFetchWait) {
  Result<ConsumerConfig> config = ParseConsumerConfig(
      {{"bootstrap.servers", "b"}, {"request.timeout.ms", "10000"}}, KafkaRelease::k0_10_1);
  ASSERT_FALSE(config.ok());
  EXPECT_NE(
      config.status().message().find(
          "request.timeout.ms should be greater than session.timeout.ms and fetch.max.wait.ms"),
      std::string::npos);
  EXPECT_TRUE(ParseConsumerConfig({{"bootstrap.servers", "b"}, {"request.timeout.ms", "10001"}},
                                  KafkaRelease::k0_10_1)
                  .ok());
  // At 0.10.0 the default session is 30000: a request timeout of 30000 is refused.
  EXPECT_FALSE(
      ParseConsumerConfig({{"bootstrap.servers", "b"}, {"request.timeout.ms", "30000"}}).ok());
  EXPECT_TRUE(
      ParseConsumerConfig({{"bootstrap.servers", "b"}, {"request.timeout.ms", "30001"}}).ok());
}

TEST(TextDistanceTest, LevenshteinCountsSingleEdits) {
  EXPECT_EQ(LevenshteinDistance("", ""), 0u);
  EXPECT_EQ(LevenshteinDistance("abc", ""), 3u);
  EXPECT_EQ(LevenshteinDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(LevenshteinDistance("acks", "aks"), 1u);
  const std::vector<std::string_view> names = {"acks", "retries", "linger.ms"};
  EXPECT_EQ(ClosestName("retires", names), std::optional<std::string_view>("retries"));
  EXPECT_EQ(ClosestName("completely.different", names), std::nullopt);
}

}  // namespace
}  // namespace ksim
