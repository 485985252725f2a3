// TopicPartitionIndex: lookups by topic and partition id, across topics (the slot found last and
// the others), insertions that replace, erasures, and ids it never held.
#include "core/base/topic_partition_index.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ksim {
namespace {

TopicPartition Tp(std::string topic, int32_t partition) {
  return TopicPartition{std::move(topic), PartitionId(partition)};
}

TEST(TopicPartitionIndexTest, FindsWhatWasInsertedAcrossTopics) {
  TopicPartitionIndex<int> index;
  std::vector<int> values(6);
  index.Insert(Tp("a", 0), &values[0]);
  index.Insert(Tp("a", 7), &values[1]);
  index.Insert(Tp("b", 2), &values[2]);
  index.Insert(Tp("a-longer-topic-name-than-inline", 1), &values[3]);
  EXPECT_EQ(index.size(), 4u);
  // Alternating topics: each lookup leaves another topic as the last found.
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(index.Find(Tp("a", 0)), &values[0]);
    EXPECT_EQ(index.Find(Tp("b", 2)), &values[2]);
    EXPECT_EQ(index.Find(Tp("a", 7)), &values[1]);
    EXPECT_EQ(index.Find(Tp("a-longer-topic-name-than-inline", 1)), &values[3]);
  }
  // Ids between, past the end, negative, and topics never seen.
  EXPECT_EQ(index.Find(Tp("a", 3)), nullptr);
  EXPECT_EQ(index.Find(Tp("a", 8)), nullptr);
  EXPECT_EQ(index.Find(Tp("a", -1)), nullptr);
  EXPECT_EQ(index.Find(Tp("b", 0)), nullptr);
  EXPECT_EQ(index.Find(Tp("c", 0)), nullptr);
  EXPECT_EQ(index.Find(Tp("", 0)), nullptr);
  EXPECT_EQ(index.Find(Tp("a", 0)), &values[0]);  // still found after the misses
}

TEST(TopicPartitionIndexTest, InsertReplacesAndEraseForgets) {
  TopicPartitionIndex<int> index;
  int first = 1;
  int second = 2;
  index.Insert(Tp("t", 3), &first);
  index.Insert(Tp("t", 3), &second);
  EXPECT_EQ(index.size(), 1u);
  EXPECT_EQ(index.Find(Tp("t", 3)), &second);
  index.Erase(Tp("t", 3));
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.Find(Tp("t", 3)), nullptr);
  // Erasing what is not there changes nothing.
  index.Erase(Tp("t", 3));
  index.Erase(Tp("t", 99));
  index.Erase(Tp("u", 0));
  EXPECT_EQ(index.size(), 0u);
  // A topic emptied and filled again (a topic deleted and created anew).
  index.Insert(Tp("t", 0), &first);
  EXPECT_EQ(index.Find(Tp("t", 0)), &first);
  EXPECT_EQ(index.Find(Tp("t", 3)), nullptr);
  index.Clear();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.Find(Tp("t", 0)), nullptr);
  index.Insert(Tp("t", 0), &second);
  EXPECT_EQ(index.Find(Tp("t", 0)), &second);
}

}  // namespace
}  // namespace ksim
