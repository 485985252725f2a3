// core/base/text.h: the one time format, id joiner and membership test.
#include "core/base/text.h"

#include <gtest/gtest.h>

#include <limits>

namespace ksim {
namespace {

TEST(FormatSecondsTest, MillisecondsArePaddedAndTruncated) {
  EXPECT_EQ(FormatSeconds(0), "0.000 s");
  EXPECT_EQ(FormatSeconds(1'500), "0.001 s");
  EXPECT_EQ(FormatSeconds(12'345'999), "12.345 s");
  EXPECT_EQ(FormatSeconds(90'000'000), "90.000 s");
}

// A time before the scenario's start: the sign is kept and the digits are the magnitude's (the
// simulator's copy printed -0.250 s as "0.-250 s").
TEST(FormatSecondsTest, NegativeTimesKeepTheirSign) {
  EXPECT_EQ(FormatSeconds(-250'000), "-0.250 s");
  EXPECT_EQ(FormatSeconds(-12'345'000), "-12.345 s");
  EXPECT_EQ(FormatSeconds(std::numeric_limits<TimeUs>::min()), "-9223372036854.775 s");
}

TEST(JoinIdsTest, JoinsStrongAndPlainIdsWithTheSeparator) {
  EXPECT_EQ(JoinIds(std::vector<BrokerId>{}), "");
  EXPECT_EQ(JoinIds(std::vector<BrokerId>{BrokerId(3)}), "3");
  EXPECT_EQ(JoinIds(std::vector<BrokerId>{BrokerId(1), BrokerId(2), BrokerId(3)}), "1,2,3");
  EXPECT_EQ(JoinIds(std::vector<BrokerId>{BrokerId(1), BrokerId(2)}, ":"), "1:2");
  EXPECT_EQ(JoinIds(std::vector<int32_t>{4, -1}, ", "), "4, -1");
}

TEST(ContainsTest, FindsOnlyMembers) {
  const std::vector<BrokerId> isr = {BrokerId(1), BrokerId(3)};
  EXPECT_TRUE(Contains(isr, BrokerId(3)));
  EXPECT_FALSE(Contains(isr, BrokerId(2)));
  EXPECT_FALSE(Contains(std::vector<BrokerId>{}, BrokerId(1)));
  EXPECT_TRUE(Contains(std::vector<std::string>{"zk", "p1"}, std::string_view("p1")));
}

}  // namespace
}  // namespace ksim
