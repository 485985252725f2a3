// Topic names: ports Kafka's TopicTest (testInvalidTopicNames, testTopicHasCollisionChars,
// testTopicHasCollision) and checks the exact messages of InvalidTopicException.
#include "core/cluster/topic.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ksim {
namespace {

TEST(TopicTest, InvalidNamesAreRefusedAsKafkaRefusesThem) {
  std::vector<std::string> invalid = {"", ".", ".."};
  std::string long_name = "ATCG";
  for (int i = 1; i <= 6; ++i) long_name += long_name;  // 256 characters, as in Kafka's test
  invalid.push_back(long_name);
  const std::string bad_chars[] = {
      "/",  "\\", ",", std::string(1, '\0'), ":", "\"", "'", ";", "*", "?", " ", "\t",
      "\r", "\n", "="};
  for (const std::string& bad : bad_chars) invalid.push_back("Is" + bad + "illegal");
  for (const std::string& name : invalid) {
    const Status status = ValidateTopicName(name);
    EXPECT_EQ(status.code(), Errc::kInvalidTopicException) << "'" << name << "'";
  }
}

TEST(TopicTest, ValidNamesAreAccepted) {
  for (const char* name : {"valid", "TOPIC", "nAmEs", "ar6", "VaL1d", "_0-9_.", "frbook"}) {
    EXPECT_TRUE(ValidateTopicName(name).ok()) << name;
  }
}

TEST(TopicTest, LengthLimitIs249Characters) {
  EXPECT_TRUE(ValidateTopicName(std::string(249, 'a')).ok());
  const Status status = ValidateTopicName(std::string(250, 'a'));
  EXPECT_EQ(status.code(), Errc::kInvalidTopicException);
  EXPECT_EQ(status.message(), "topic name is illegal, can't be longer than 249 characters");
}

TEST(TopicTest, MessagesAreKafkasWords) {
  EXPECT_EQ(ValidateTopicName("").message(), "topic name is illegal, can't be empty");
  EXPECT_EQ(ValidateTopicName(".").message(), "topic name cannot be \".\" or \"..\"");
  EXPECT_EQ(ValidateTopicName("..").message(), "topic name cannot be \".\" or \"..\"");
  EXPECT_EQ(ValidateTopicName("my topic").message(),
            "topic name my topic is illegal, contains a character other than ASCII "
            "alphanumerics, '.', '_' and '-'");
  // "..." is a legal name: only exactly "." and ".." are path components.
  EXPECT_TRUE(ValidateTopicName("...").ok());
}

TEST(TopicTest, CollisionCharsArePeriodAndUnderscore) {
  for (const char* name : {"start", "endles", "middle", "many", "with-dash"}) {
    EXPECT_FALSE(HasCollisionChars(name)) << name;
  }
  for (const char* name :
       {".start", "end.", "mid.dle", ".ma.ny.", "_start", "end_", "mid_dle", "_ma_ny."}) {
    EXPECT_TRUE(HasCollisionChars(name)) << name;
  }
}

TEST(TopicTest, NamesCollideOnlyWhenPeriodAndUnderscoreShareAPosition) {
  const std::vector<std::string> periods = {".topic", "to.pic", "topic.", "topic"};
  const std::vector<std::string> underscores = {"_topic", "to_pic", "topic_", "topic"};
  for (size_t i = 0; i < periods.size(); ++i) {
    for (size_t j = 0; j < underscores.size(); ++j) {
      EXPECT_EQ(TopicsCollide(periods[i], underscores[j]), i == j)
          << periods[i] << " vs " << underscores[j];
    }
  }
}

TEST(TopicTest, CollidingTopicsListsExistingTopicsButNotTheTopicItself) {
  const std::vector<std::string> existing = {"test_topic", "test.topic", "other", "test-topic"};
  EXPECT_EQ(CollidingTopics("test.topic", existing), std::vector<std::string>{"test_topic"});
  EXPECT_TRUE(CollidingTopics("other", existing).empty());
}

TEST(TopicTest, ConsumerOffsetsIsTheOnlyInternalTopic) {
  EXPECT_TRUE(IsInternalTopic("__consumer_offsets"));
  EXPECT_TRUE(ValidateTopicName(kGroupMetadataTopicName).ok());
  EXPECT_FALSE(IsInternalTopic("__consumer_offsets_"));
  EXPECT_FALSE(IsInternalTopic("frbook"));
}

}  // namespace
}  // namespace ksim
