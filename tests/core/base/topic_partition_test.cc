// TopicPartition's written-out ordering and equality agree with the memberwise ones (std::string
// then partition id), on names that differ in a byte above 0x7f, by a prefix, or not at all.
#include "core/base/topic_partition.h"

#include <gtest/gtest.h>

#include <compare>
#include <string>
#include <vector>

namespace ksim {
namespace {

TEST(TopicPartitionTest, OrderAndEqualityAreMemberwise) {
  const std::vector<std::string> topics = {"",  "t",     "t-1",   "ta",    "tb",
                                           "T", "\xfft", "t\xff", "t\x01", "__consumer_offsets"};
  std::vector<TopicPartition> keys;
  for (const std::string& topic : topics) {
    for (int32_t partition : {-1, 0, 1, 10}) keys.push_back({topic, PartitionId(partition)});
  }
  for (const TopicPartition& a : keys) {
    for (const TopicPartition& b : keys) {
      const std::strong_ordering expected =
          a.topic != b.topic ? a.topic <=> b.topic : a.partition <=> b.partition;
      EXPECT_EQ(a <=> b, expected) << ToString(a) << " vs " << ToString(b);
      EXPECT_EQ(a == b, a.topic == b.topic && a.partition == b.partition);
    }
  }
}

}  // namespace
}  // namespace ksim
