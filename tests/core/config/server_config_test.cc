// Broker configuration: Kafka 0.10's defaults, the seed's own server.properties, a file full of
// mistakes (every one reported with file:line, key, Kafka's reason and what is valid), the
// precedence rules, KafkaConfig.validateValues' cross-checks, scenario overrides on top of a
// file, and the topic LogConfig derived from broker defaults plus topic overrides.
#include "core/config/server_config.h"

#include <gtest/gtest.h>

#include <string>

#include "core/env/posix_env.h"
#include "tests/support/core/temp_dir.h"

namespace ksim {
namespace {

constexpr int64_t kHourMs = 3600 * 1000;

BrokerConfig Parse(std::string_view text) {
  auto config = ParseServerProperties(text, "server.properties");
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return config.ok() ? *config : BrokerConfig();
}

std::string ParseError(std::string_view text) {
  auto config = ParseServerProperties(text, "server.properties");
  EXPECT_FALSE(config.ok());
  if (config.ok()) return "";
  EXPECT_EQ(config.status().code(), Errc::kInvalidConfig);
  return config.status().message();
}

TEST(ServerConfigTest, DefaultsAreKafka010s) {
  auto made = MakeBrokerConfig({});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  const BrokerConfig& c = *made;
  EXPECT_EQ(c.broker_id, -1);
  EXPECT_EQ(c.log_dirs, std::vector<std::string>{"/tmp/kafka-logs"});
  EXPECT_EQ(c.zookeeper_connect, "");
  EXPECT_EQ(c.zookeeper_session_timeout_ms, 6000);
  EXPECT_EQ(c.zookeeper_connection_timeout_ms, 6000);
  EXPECT_EQ(c.log_retention_ms, 168 * kHourMs);
  EXPECT_EQ(c.log_retention_bytes, -1);
  EXPECT_EQ(c.log_cleanup_policy, CleanupPolicy::kDelete);
  EXPECT_EQ(c.log_segment_bytes, 1 << 30);
  EXPECT_EQ(c.log_roll_ms, 168 * kHourMs);
  EXPECT_EQ(c.log_index_interval_bytes, 4096);
  EXPECT_EQ(c.log_index_size_max_bytes, 10 * 1024 * 1024);
  EXPECT_EQ(c.log_flush_interval_messages, INT64_MAX);
  EXPECT_EQ(c.log_flush_interval_ms, INT64_MAX);
  EXPECT_EQ(c.num_partitions, 1);
  EXPECT_EQ(c.default_replication_factor, 1);
  EXPECT_TRUE(c.unclean_leader_election_enable);  // true until Kafka 0.11
  EXPECT_EQ(c.min_insync_replicas, 1);
  EXPECT_EQ(c.replica_lag_time_max_ms, 10000);
  EXPECT_EQ(c.replica_fetch_wait_max_ms, 500);
  EXPECT_EQ(c.replica_fetch_min_bytes, 1);
  EXPECT_EQ(c.replica_fetch_max_bytes, 1024 * 1024);
  EXPECT_EQ(c.replica_high_watermark_checkpoint_interval_ms, 5000);
  EXPECT_TRUE(c.controlled_shutdown_enable);
  EXPECT_TRUE(c.auto_create_topics_enable);
  EXPECT_FALSE(c.delete_topic_enable);  // false until Kafka 1.0
  EXPECT_EQ(c.message_max_bytes, 1000012);
  EXPECT_EQ(c.offsets_topic_num_partitions, 50);
  EXPECT_EQ(c.offsets_topic_replication_factor, 3);
  EXPECT_EQ(c.group_min_session_timeout_ms, 6000);
  EXPECT_EQ(c.group_max_session_timeout_ms, 300000);  // KAFKA-3636, 0.10.0.0
  EXPECT_EQ(c.port, 9092);
  EXPECT_EQ(c.listeners, "PLAINTEXT://:9092");
  EXPECT_TRUE(c.auto_leader_rebalance_enable);
  EXPECT_TRUE(c.warnings.empty());
  // The storage engine's own defaults agree with the broker's.
  const LogConfig from_broker = c.DefaultLogConfig();
  const LogConfig engine_defaults;
  EXPECT_EQ(from_broker.segment_bytes, engine_defaults.segment_bytes);
  EXPECT_EQ(from_broker.segment_ms, engine_defaults.segment_ms);
  EXPECT_EQ(from_broker.index_interval_bytes, engine_defaults.index_interval_bytes);
  EXPECT_EQ(from_broker.max_index_size_bytes, engine_defaults.max_index_size_bytes);
  EXPECT_EQ(from_broker.retention_ms, engine_defaults.retention_ms);
  EXPECT_EQ(from_broker.retention_bytes, engine_defaults.retention_bytes);
  EXPECT_EQ(from_broker.flush_interval_messages, engine_defaults.flush_interval_messages);
  EXPECT_EQ(from_broker.flush_ms, engine_defaults.flush_ms);
  EXPECT_EQ(from_broker.file_delete_delay_ms, engine_defaults.file_delete_delay_ms);
  EXPECT_EQ(from_broker.max_message_bytes, engine_defaults.max_message_bytes);
}

TEST(ServerConfigTest, SeedsServerPropertiesExactly) {
  const BrokerConfig c = Parse(
      "broker.id=1\n"
      "log.dirs= /home/software/kafka_2.10-0.10.0.1/kafka-logs/\n"
      "zookeeper.connect=hadoop01:2181,hadoop02:2181,hadoop03:2181\n"
      "log.retention.hours=168\n"
      "log.cleanup.policy=delete\n");
  EXPECT_EQ(c.broker_id, 1);
  EXPECT_EQ(c.log_dirs, std::vector<std::string>{"/home/software/kafka_2.10-0.10.0.1/kafka-logs/"});
  EXPECT_EQ(c.zookeeper_connect, "hadoop01:2181,hadoop02:2181,hadoop03:2181");
  EXPECT_EQ(c.log_retention_ms, 168 * kHourMs);
  EXPECT_EQ(c.log_cleanup_policy, CleanupPolicy::kDelete);
  EXPECT_TRUE(c.warnings.empty());
  EXPECT_TRUE(RequireZookeeperConnect(c).ok());
  EXPECT_EQ(c.originals.at("log.dirs").origin, "server.properties:2");
}

TEST(ServerConfigTest, SeedsProducerSettingsInServerPropertiesAreUnknownWarnings) {
  // The seed puts producer settings (acks, enable.idempotence) into server.properties; a broker
  // does not know them and says so.
  const BrokerConfig c = Parse(
      "broker.id=2\n"
      "#\xEF\xBC\x88"
      "1\xEF\xBC\x89\n"
      "acks=0\n"
      "acks=1 only the leader's ack\n"
      "enable.idempotence=true\n");
  ASSERT_EQ(c.warnings.size(), 2u);
  EXPECT_EQ(c.warnings[0],
            "server.properties:4: The configuration acks = 1 only the leader's ack was supplied "
            "but isn't a known config.");
  EXPECT_EQ(c.warnings[1],
            "server.properties:5: The configuration enable.idempotence = true was supplied but "
            "isn't a known config.");
  EXPECT_EQ(c.originals.at("acks").value, "1 only the leader's ack");
}

TEST(ServerConfigTest, FileWithErrorsReportsEveryOneByLine) {
  const std::string message = ParseError(
      "broker.id=one\n"
      "num.partitions=0\n"
      "# fine\n"
      "unclean.leader.election.enable=yes\n"
      "log.cleanup.policy=remove\n"
      "log.retention.bytes=12GB\n"
      "offsets.topic.replication.factor=40000\n"
      "log.segment.bytes=1073741824\n");
  EXPECT_EQ(message,
            "server.properties:1: Invalid value one for configuration broker.id: Not a number of "
            "type INT (valid: an INT)\n"
            "server.properties:2: Invalid value 0 for configuration num.partitions: Value must be "
            "at least 1 (valid: an INT of at least 1)\n"
            "server.properties:4: Invalid value yes for configuration "
            "unclean.leader.election.enable: Expected value to be either true or false (valid: "
            "true or false)\n"
            "server.properties:5: Invalid value remove for configuration log.cleanup.policy: "
            "String must be one of: compact, delete (valid: a comma-separated list of: compact, "
            "delete)\n"
            "server.properties:6: Invalid value 12GB for configuration log.retention.bytes: Not a "
            "number of type LONG (valid: a LONG)\n"
            "server.properties:7: Invalid value 40000 for configuration "
            "offsets.topic.replication.factor: Not a number of type SHORT (valid: a SHORT of at "
            "least 1)");
}

TEST(ServerConfigTest, ValuesAreTrimmedAndBooleansIgnoreCase) {
  const BrokerConfig c = Parse(
      "num.partitions = 3  \nunclean.leader.election.enable=FALSE\n"
      "delete.topic.enable=True\nlog.dirs=/a , /b,,/c\n");
  EXPECT_EQ(c.num_partitions, 3);
  EXPECT_FALSE(c.unclean_leader_election_enable);
  EXPECT_TRUE(c.delete_topic_enable);
  EXPECT_EQ(c.log_dirs, (std::vector<std::string>{"/a", "/b", "/c"}));
}

TEST(ServerConfigTest, RetentionMsBeatsMinutesBeatsHours) {
  EXPECT_EQ(Parse("log.retention.hours=1\n").log_retention_ms, kHourMs);
  EXPECT_EQ(Parse("log.retention.hours=1\nlog.retention.minutes=5\n").log_retention_ms, 300000);
  EXPECT_EQ(Parse("log.retention.minutes=5\nlog.retention.ms=1234\nlog.retention.hours=1\n")
                .log_retention_ms,
            1234);
  EXPECT_EQ(Parse("log.retention.ms=-5\n").log_retention_ms, -1);  // any negative: forever
  EXPECT_EQ(Parse("log.retention.hours=-1\n").log_retention_ms, -1);
  EXPECT_EQ(ParseError("log.retention.ms=0\n"),
            "server.properties:1: log.retention.ms must be unlimited (-1) or, equal or greater "
            "than 1");
}

TEST(ServerConfigTest, RollMsBeatsHoursAndDirsBeatsDir) {
  EXPECT_EQ(Parse("log.roll.hours=2\n").log_roll_ms, 2 * kHourMs);
  EXPECT_EQ(Parse("log.roll.hours=2\nlog.roll.ms=60000\n").log_roll_ms, 60000);
  EXPECT_EQ(Parse("log.dir=/one\n").log_dirs, std::vector<std::string>{"/one"});
  EXPECT_EQ(Parse("log.dir=/one\nlog.dirs=/two,/three\n").log_dirs,
            (std::vector<std::string>{"/two", "/three"}));
  EXPECT_EQ(Parse("log.flush.scheduler.interval.ms=3000\n").log_flush_interval_ms, 3000);
  EXPECT_EQ(Parse("log.flush.scheduler.interval.ms=3000\nlog.flush.interval.ms=10\n")
                .log_flush_interval_ms,
            10);
  EXPECT_EQ(Parse("zookeeper.session.timeout.ms=9000\n").zookeeper_connection_timeout_ms, 9000);
  EXPECT_EQ(Parse("host.name=hadoop01\nport=9093\n").listeners, "PLAINTEXT://hadoop01:9093");
  EXPECT_EQ(Parse("listeners=PLAINTEXT://:9094\n").listeners, "PLAINTEXT://:9094");
}

TEST(ServerConfigTest, CrossKeyRequirementsOfValidateValues) {
  EXPECT_EQ(ParseError("broker.id=-2\n"),
            "server.properties:1: broker.id must be equal or greater than -1 and not greater "
            "than reserved.broker.max.id");
  EXPECT_EQ(ParseError("broker.id=1001\n").substr(0, 21), "server.properties:1: ");
  EXPECT_TRUE(ParseServerProperties("broker.id=1001\nreserved.broker.max.id=2000\n", "f").ok());
  EXPECT_EQ(ParseError("broker.id.generation.enable=false\n"),
            "server.properties:1: broker.id must be equal or greater than 0");
  EXPECT_EQ(ParseError("message.max.bytes=2000000\n"),
            "server.properties:1: replica.fetch.max.bytes should be equal or greater than "
            "message.max.bytes");
  EXPECT_EQ(ParseError("replica.lag.time.max.ms=100\n"),
            "server.properties:1: replica.fetch.wait.max.ms should always be at least "
            "replica.lag.time.max.ms to prevent frequent changes in ISR");
  EXPECT_EQ(ParseError("log.dirs= , \n"),
            "server.properties:1: log.dirs must name at least one directory");
}

TEST(ServerConfigTest, CleanupPolicyListsAndSecurityKeys) {
  EXPECT_EQ(Parse("log.cleanup.policy=compact\n").log_cleanup_policy, CleanupPolicy::kCompact);
  EXPECT_EQ(Parse("log.cleanup.policy=compact, delete\n").log_cleanup_policy,
            CleanupPolicy::kCompactDelete);
  EXPECT_TRUE(Parse("ssl.keystore.location=/k\nsasl.enabled.mechanisms=GSSAPI\n").warnings.empty());
}

TEST(ServerConfigTest, MissingZookeeperConnectIsKafkasStartupError) {
  const Status status = RequireZookeeperConnect(Parse("broker.id=1\n"));
  EXPECT_EQ(status.code(), Errc::kInvalidConfig);
  EXPECT_EQ(status.message(),
            "Missing required configuration \"zookeeper.connect\" which has no default value.");
}

TEST(ServerConfigTest, ScenarioOverridesApplyOnTopWithPrecedence) {
  const BrokerConfig file = Parse("broker.id=1\nlog.retention.hours=1\n");
  auto merged = ApplyConfigOverrides(
      file,
      {{"log.retention.ms", "5000"}, {"unclean.leader.election.enable", "false"}, {"acks", "all"}},
      "cluster.config");
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(merged->broker_id, 1);
  EXPECT_EQ(merged->log_retention_ms, 5000);
  EXPECT_FALSE(merged->unclean_leader_election_enable);
  ASSERT_EQ(merged->warnings.size(), 1u);
  EXPECT_EQ(merged->warnings[0],
            "cluster.config: The configuration acks = all was supplied but isn't a known config.");

  auto bad = ApplyConfigOverrides(file, {{"replica.lag.time.max.ms", "10s"}}, "broker_config.2");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "broker_config.2: Invalid value 10s for configuration replica.lag.time.max.ms: Not a "
            "number of type LONG (valid: a LONG)");
}

TEST(ServerConfigTest, LoadsAFileThroughTheEnv) {
  PosixEnv env;
  testing::TempDir dir;
  const std::string path = JoinPath(dir.path(), "server.properties");
  {
    auto file = env.OpenFile(path, OpenMode::kTruncate);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(AsBytes("broker.id=3\nnum.partitions=x\n")).ok());
  }
  auto loaded = LoadServerProperties(env, path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message().substr(0, path.size() + 3), path + ":2:");
  EXPECT_EQ(LoadServerProperties(env, JoinPath(dir.path(), "missing")).status().code(),
            Errc::kNotFound);
}

TEST(TopicConfigTest, BrokerDefaultsFlowIntoTopics) {
  const BrokerConfig broker = Parse(
      "log.retention.hours=1\nlog.segment.bytes=1048576\nmin.insync.replicas=2\n"
      "unclean.leader.election.enable=false\nlog.flush.interval.messages=1\n");
  auto topic = MakeTopicConfig(broker, {}, "topics.t.config");
  ASSERT_TRUE(topic.ok());
  EXPECT_EQ(topic->log.retention_ms, kHourMs);
  EXPECT_EQ(topic->log.segment_bytes, 1048576);
  EXPECT_EQ(topic->log.flush_interval_messages, 1);
  EXPECT_EQ(topic->min_insync_replicas, 2);
  EXPECT_FALSE(topic->unclean_leader_election_enable);
  EXPECT_TRUE(topic->overridden.empty());
}

TEST(TopicConfigTest, TopicOverridesUseTopicLevelNames) {
  const BrokerConfig broker = Parse("broker.id=1\n");
  auto topic = MakeTopicConfig(broker,
                               {{"retention.ms", "60000"},
                                {"segment.bytes", "4096"},
                                {"cleanup.policy", "compact,delete"},
                                {"min.insync.replicas", "2"},
                                {"unclean.leader.election.enable", "false"},
                                {"segment.ms", "1000"},
                                {"retention.bytes", "-7"},
                                {"max.message.bytes", "2048"},
                                {"index.interval.bytes", "100"},
                                {"segment.index.bytes", "8192"},
                                {"flush.messages", "1"},
                                {"flush.ms", "10"},
                                {"file.delete.delay.ms", "0"}},
                               "topics.t.config");
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  EXPECT_EQ(topic->log.retention_ms, 60000);
  EXPECT_EQ(topic->log.segment_bytes, 4096);
  EXPECT_EQ(topic->log.cleanup_policy, CleanupPolicy::kCompactDelete);
  EXPECT_EQ(topic->min_insync_replicas, 2);
  EXPECT_FALSE(topic->unclean_leader_election_enable);
  EXPECT_EQ(topic->log.segment_ms, 1000);
  EXPECT_EQ(topic->log.retention_bytes, -1);
  EXPECT_EQ(topic->log.max_message_bytes, 2048);
  EXPECT_EQ(topic->log.index_interval_bytes, 100);
  EXPECT_EQ(topic->log.max_index_size_bytes, 8192);
  EXPECT_EQ(topic->log.flush_interval_messages, 1);
  EXPECT_EQ(topic->log.flush_ms, 10);
  EXPECT_EQ(topic->log.file_delete_delay_ms, 0);
  EXPECT_EQ(topic->overridden.size(), 13u);
  EXPECT_TRUE(std::is_sorted(topic->overridden.begin(), topic->overridden.end()));
}

TEST(TopicConfigTest, UnknownOrBadTopicSettingsAreInvalidConfig) {
  const BrokerConfig broker = Parse("broker.id=1\n");
  auto unknown = MakeTopicConfig(broker, {{"retention.hours", "1"}}, "topics.t.config");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), Errc::kInvalidConfig);
  EXPECT_EQ(unknown.status().message(),
            "topics.t.config: Unknown configuration `retention.hours`.");

  auto bad = MakeTopicConfig(broker, {{"min.insync.replicas", "0"}, {"segment.bytes", "10"}},
                             "topics.t.config");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "topics.t.config: Invalid value 0 for configuration min.insync.replicas: Value must "
            "be at least 1 (valid: an INT of at least 1)\n"
            "topics.t.config: Invalid value 10 for configuration segment.bytes: Value must be at "
            "least 14 (valid: an INT of at least 14)");
  EXPECT_FALSE(MakeTopicConfig(broker, {{"cleanup.policy", ""}}, "t").ok());
  EXPECT_FALSE(MakeTopicConfig(broker, {{"min.cleanable.dirty.ratio", "1.5"}}, "t").ok());
  EXPECT_TRUE(MakeTopicConfig(broker, {{"min.cleanable.dirty.ratio", "0.25"}}, "t").ok());
  EXPECT_EQ(TopicConfigNames().size(), 21u);
}

}  // namespace
}  // namespace ksim
