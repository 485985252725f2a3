// The .properties reader against java.util.Properties.load's rules: separators, blanks around
// them, comments, continuation lines, escapes, line ends, and line numbers for messages.
#include "core/config/java_properties.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace ksim {
namespace {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

KeyValues Parse(std::string_view text) {
  auto entries = ParseJavaProperties(text, "test.properties");
  EXPECT_TRUE(entries.ok()) << entries.status().ToString();
  KeyValues out;
  if (!entries.ok()) return out;
  for (const PropertyEntry& entry : *entries) out.emplace_back(entry.key, entry.value);
  return out;
}

TEST(JavaPropertiesTest, AllThreeSeparatorsAndBlanksAroundThem) {
  EXPECT_EQ(
      Parse("a=1\nb:2\nc 3\nd = 4\ne\t:\t5\n   f=6\ng   h\n"),
      (KeyValues{
          {"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}, {"e", "5"}, {"f", "6"}, {"g", "h"}}));
}

TEST(JavaPropertiesTest, SeedLineWithBlankAfterEqualsLosesTheBlank) {
  EXPECT_EQ(Parse("log.dirs= /home/software/kafka_2.10-0.10.0.1/kafka-logs/"),
            (KeyValues{{"log.dirs", "/home/software/kafka_2.10-0.10.0.1/kafka-logs/"}}));
}

TEST(JavaPropertiesTest, TrailingBlanksBelongToTheValue) {
  EXPECT_EQ(Parse("a=b  \n"), (KeyValues{{"a", "b  "}}));
}

TEST(JavaPropertiesTest, OnlyTheFirstSeparatorSeparates) {
  EXPECT_EQ(Parse("a==b\nc=d=e\nf : : g\n"), (KeyValues{{"a", "=b"}, {"c", "d=e"}, {"f", ": g"}}));
}

TEST(JavaPropertiesTest, KeyWithoutValueAndEmptyValue) {
  EXPECT_EQ(Parse("flag\nempty=\n"), (KeyValues{{"flag", ""}, {"empty", ""}}));
}

TEST(JavaPropertiesTest, CommentsAndBlankLinesAreSkipped) {
  EXPECT_EQ(
      Parse("# hash comment\n! bang comment\n   # indented\n\n  \t\nkey=value # not a comment\n"),
      (KeyValues{{"key", "value # not a comment"}}));
}

TEST(JavaPropertiesTest, BackslashContinuesTheLineAndDropsLeadingBlanks) {
  EXPECT_EQ(
      Parse("zookeeper.connect=hadoop01:2181,\\\n    hadoop02:2181,\\\n\thadoop03:2181\nx=1"),
      (KeyValues{{"zookeeper.connect", "hadoop01:2181,hadoop02:2181,hadoop03:2181"}, {"x", "1"}}));
  // An even number of backslashes is an escaped backslash, not a continuation.
  EXPECT_EQ(Parse("a=x\\\\\nb=y"), (KeyValues{{"a", "x\\"}, {"b", "y"}}));
  // A continued line may hold what would otherwise start a comment.
  EXPECT_EQ(Parse("a=1\\\n# 2\n"), (KeyValues{{"a", "1# 2"}}));
  // A continuation at the end of the text just ends the value.
  EXPECT_EQ(Parse("a=1\\"), (KeyValues{{"a", "1"}}));
}

TEST(JavaPropertiesTest, CommentLinesNeverContinue) {
  EXPECT_EQ(Parse("# comment ending in a backslash \\\nb=1\n"), (KeyValues{{"b", "1"}}));
}

TEST(JavaPropertiesTest, EscapesAreDecodedInKeysAndValues) {
  EXPECT_EQ(
      Parse("tab=a\\tb\nnl=a\\nb\ncr=\\r\nff=\\f\nother=\\q\\#\n"),
      (KeyValues{{"tab", "a\tb"}, {"nl", "a\nb"}, {"cr", "\r"}, {"ff", "\f"}, {"other", "q#"}}));
  EXPECT_EQ(Parse("my\\=key=v\na\\ b=c\nc\\:d:e\n"),
            (KeyValues{{"my=key", "v"}, {"a b", "c"}, {"c:d", "e"}}));
}

TEST(JavaPropertiesTest, UnicodeEscapesBecomeUtf8) {
  EXPECT_EQ(Parse("a=\\u0041\\u00e9\\u4e2d"), (KeyValues{{"a", "A\xC3\xA9\xE4\xB8\xAD"}}));
  EXPECT_EQ(Parse("smile=\\uD83D\\uDE00"), (KeyValues{{"smile", "\xF0\x9F\x98\x80"}}));
  EXPECT_EQ(Parse("lone=\\uD83Dx"), (KeyValues{{"lone", "\xEF\xBF\xBDx"}}));
  // UTF-8 text passes through unchanged.
  EXPECT_EQ(Parse("topic=\xE4\xB8\xAD"), (KeyValues{{"topic", "\xE4\xB8\xAD"}}));
}

TEST(JavaPropertiesTest, MalformedUnicodeEscapeNamesTheLine) {
  auto entries = ParseJavaProperties("ok=1\n\nbad=\\u12G4\n", "server.properties");
  ASSERT_FALSE(entries.ok());
  EXPECT_EQ(entries.status().code(), Errc::kInvalidConfig);
  EXPECT_EQ(entries.status().message(), "server.properties:3: Malformed \\uxxxx encoding.");
  EXPECT_FALSE(ParseJavaProperties("a=\\u12", "f").ok());
}

TEST(JavaPropertiesTest, AllLineEndsAndLineNumbers) {
  auto entries = ParseJavaProperties("a=1\r\nb=2\rc=3\n# x\nd=4\\\r\n  5\ne=6", "f");
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 5u);
  const int expected_lines[] = {1, 2, 3, 5, 7};
  const char* expected_values[] = {"1", "2", "3", "45", "6"};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ((*entries)[i].line_number, expected_lines[i]) << i;
    EXPECT_EQ((*entries)[i].value, expected_values[i]) << i;
  }
}

TEST(JavaPropertiesTest, RepeatedKeysAreAllReturnedInOrder) {
  EXPECT_EQ(Parse("acks=0\nacks=1\n"), (KeyValues{{"acks", "0"}, {"acks", "1"}}));
}

}  // namespace
}  // namespace ksim
