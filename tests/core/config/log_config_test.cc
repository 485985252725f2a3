// message.format.version: Kafka's version strings (ApiVersion.apply) to a message format, and the
// broker and topic settings that carry it into the LogConfig.
#include "core/config/log_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/config/server_config.h"

namespace ksim {
namespace {

using ::testing::HasSubstr;

TEST(LogConfigTest, KafkaVersionsMapToTheirMessageFormat) {
  for (const char* v : {"0.8.0", "0.8.2", "0.9.0", "0.9.0.1", "0.8.2.2"}) {
    EXPECT_EQ(MessageFormatMagic(v), std::optional<int8_t>(0)) << v;
  }
  for (const char* v : {"0.10.0", "0.10.0-IV0", "0.10.0-IV1", "0.10.0.1", "0.10.1", "0.10.2"}) {
    EXPECT_EQ(MessageFormatMagic(v), std::optional<int8_t>(1)) << v;
  }
  for (const char* v : {"0.11.0", "0.11.0-IV2", "1.0", "1.1", "2.0", "2.0-IV1", "2.1.1"}) {
    EXPECT_EQ(MessageFormatMagic(v), std::optional<int8_t>(2)) << v;
  }
  for (const char* v :
       {"", "0.10", "0.7.0", "0.12.0", "10.0", "0.10.0-IVx", "abc", "1", "0..0", "2.8", "3.7"}) {
    EXPECT_EQ(MessageFormatMagic(v), std::nullopt) << v;
  }
  // A broker knows the versions of its own release and earlier ones.
  EXPECT_EQ(MessageFormatMagic("0.11.0", KafkaRelease::k0_10_0), std::nullopt);
  EXPECT_EQ(MessageFormatMagic("0.10.0", KafkaRelease::k0_10_0), std::optional<int8_t>(1));
}

TEST(LogConfigTest, DefaultFormatAndTimeIndexFollowTheRelease) {
  // Kafka's log.message.format.version defaults to the release's latest ApiVersion (KafkaConfig
  // Defaults at 0.10.0.1 and 0.11.0.0): message sets v1 at 0.10.x, record batches v2 from 0.11.
  // The time index arrived in 0.10.1 (KIP-33).
  struct Case {
    KafkaRelease release;
    int8_t magic;
    bool time_index;
  };
  for (const Case c : {Case{KafkaRelease::k0_10_0, 1, false}, Case{KafkaRelease::k0_10_1, 1, true},
                       Case{KafkaRelease::k0_10_2, 1, true}, Case{KafkaRelease::k0_11_0, 2, true},
                       Case{KafkaRelease::k2_1, 2, true}}) {
    auto unset = MakeBrokerConfig({}, c.release);
    ASSERT_TRUE(unset.ok());
    EXPECT_EQ(unset->DefaultLogConfig().message_format_magic, c.magic)
        << KafkaReleaseName(c.release);
    EXPECT_EQ(unset->DefaultLogConfig().time_index, c.time_index) << KafkaReleaseName(c.release);
    // A topic without overrides gets the broker's.
    auto topic = MakeTopicConfig(*unset, {}, "topic t");
    ASSERT_TRUE(topic.ok());
    EXPECT_EQ(topic->log.message_format_magic, c.magic);
    EXPECT_EQ(topic->log.time_index, c.time_index);
  }
  // The seed's release is 0.10.0.
  EXPECT_EQ(MakeBrokerConfig({})->DefaultLogConfig().message_format_magic, 1);
  // A given setting wins: an older format at 0.11, and at 0.10.0 0.9.0's magic 0.
  auto old = MakeBrokerConfig({{"log.message.format.version", {"0.10.0", "test", 1}}},
                              KafkaRelease::k0_11_0);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->DefaultLogConfig().message_format_magic, 1);
  EXPECT_TRUE(old->DefaultLogConfig().time_index);
  auto older = MakeBrokerConfig({{"log.message.format.version", {"0.9.0", "test", 1}}});
  ASSERT_TRUE(older.ok()) << older.status().ToString();
  EXPECT_EQ(older->DefaultLogConfig().message_format_magic, 0);
  auto bad = MakeBrokerConfig({{"log.message.format.version", {"0.10.9", "test:3", 1}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("test:3: Invalid value 0.10.9 for configuration "
                        "log.message.format.version: Version `0.10.9` is not a valid version"));
}

TEST(LogConfigTest, TopicSettingOverridesTheBroker) {
  auto broker = MakeBrokerConfig({{"log.message.format.version", {"0.10.0", "test", 1}}});
  ASSERT_TRUE(broker.ok());
  auto topic = MakeTopicConfig(*broker, {{"message.format.version", "0.9.0"}}, "topic t");
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  EXPECT_EQ(topic->log.message_format_magic, 0);
  auto bad = MakeTopicConfig(*broker, {{"message.format.version", "nope"}}, "topic t");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("topic t: Invalid value nope for configuration message.format.version: "
                        "Version `nope` is not a valid version"));
}

}  // namespace
}  // namespace ksim
