// Partitioner: Kafka's murmur2 against the values of Kafka's UtilsTest.testMurmur2 (and a port
// of the reference algorithm written out in Java-int terms), toPositive, keyed placement, and
// DefaultPartitionerTest's behaviours: key stability, round-robin over available partitions
// only, and a separate counter per topic.
#include "core/clients/producer/partitioner.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <string>

#include "core/base/random.h"

namespace ksim {
namespace {

int32_t Hash(const std::string& s) { return Murmur2(AsBytes(s)); }

TEST(PartitionerTest, Murmur2MatchesKafkaUtilsTest) {
  // Kafka's clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.testMurmur2.
  EXPECT_EQ(Hash("21"), -973932308);
  EXPECT_EQ(Hash("foobar"), -790332482);
  EXPECT_EQ(Hash("a-little-bit-long-string"), -985981536);
  EXPECT_EQ(Hash("a-little-bit-longer-string"), -1486304829);
  EXPECT_EQ(Hash("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8"), -58897971);
  EXPECT_EQ(Hash("abc"), 479470107);
}

// The reference algorithm with signed 64-bit arithmetic truncated to 32 bits at every step, as
// Java's int does, so that the production code's unsigned formulation is checked against an
// independent one on every tail length and on bytes >= 0x80 (Java's byte is signed: Kafka masks
// with 0xff, a missing mask would differ exactly there).
int32_t JavaStyleMurmur2(const Bytes& data) {
  auto wrap = [](int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); };
  auto ushr = [](int32_t v, int s) { return static_cast<int32_t>(static_cast<uint32_t>(v) >> s); };
  const int32_t length = static_cast<int32_t>(data.size());
  const int32_t m = 0x5bd1e995;
  int32_t h = wrap(int64_t{static_cast<int32_t>(0x9747b28c)} ^ length);
  for (int32_t i = 0; i < length / 4; ++i) {
    const int32_t i4 = i * 4;
    int32_t k = wrap(int64_t{data[i4]} + (int64_t{data[i4 + 1]} << 8) +
                     (int64_t{data[i4 + 2]} << 16) + (int64_t{data[i4 + 3]} << 24));
    k = wrap(int64_t{k} * m);
    k ^= ushr(k, 24);
    k = wrap(int64_t{k} * m);
    h = wrap(int64_t{h} * m);
    h ^= k;
  }
  const int32_t tail = length & ~3;
  switch (length % 4) {
    case 3:
      h ^= int32_t{data[tail + 2]} << 16;
      [[fallthrough]];
    case 2:
      h ^= int32_t{data[tail + 1]} << 8;
      [[fallthrough]];
    case 1:
      h ^= int32_t{data[tail]};
      h = wrap(int64_t{h} * m);
  }
  h ^= ushr(h, 13);
  h = wrap(int64_t{h} * m);
  h ^= ushr(h, 15);
  return h;
}

TEST(PartitionerTest, Murmur2AgreesWithJavaIntFormulationOnEveryTailLength) {
  StreamRandomSource random(42);
  for (size_t length = 0; length < 64; ++length) {
    for (int trial = 0; trial < 8; ++trial) {
      Bytes data(length);
      for (uint8_t& b : data) b = static_cast<uint8_t>(random.NextInt(256));
      EXPECT_EQ(Murmur2(data), JavaStyleMurmur2(data)) << "length " << length;
    }
  }
}

TEST(PartitionerTest, Murmur2OfEmptyInputIsFixed) {
  EXPECT_EQ(Murmur2(ByteView()), JavaStyleMurmur2(Bytes()));
  EXPECT_EQ(Murmur2(ByteView()), 275646681);  // computed from a transcription of Utils.murmur2
}

TEST(PartitionerTest, ToPositiveClearsOnlyTheSignBit) {
  EXPECT_EQ(ToPositive(0), 0);
  EXPECT_EQ(ToPositive(7), 7);
  EXPECT_EQ(ToPositive(-1), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(ToPositive(std::numeric_limits<int32_t>::min()), 0);  // where Math.abs would fail
  EXPECT_EQ(ToPositive(-973932308), -973932308 & 0x7fffffff);
}

TEST(PartitionerTest, KeyedRecordUsesPositiveMurmur2ModuloPartitions) {
  // "foobar" -> -790332482; toPositive = 1357151166; % 3 = 0, % 7 = 3, % 10 = 6.
  const Bytes key = ToBytes("foobar");
  EXPECT_EQ(PartitionForKey(key, 3), PartitionId(1357151166 % 3));
  EXPECT_EQ(PartitionForKey(key, 7), PartitionId(1357151166 % 7));
  EXPECT_EQ(PartitionForKey(key, 10), PartitionId(6));
  EXPECT_EQ(PartitionForKey(key, 1), PartitionId(0));
}

TEST(PartitionerTest, KeyPartitionIsStable) {
  // DefaultPartitionerTest.testKeyPartitionIsStable: the same key, the same partition, also when
  // that partition has no leader (the key, not availability, decides).
  Partitioner partitioner;
  const Bytes key = ToBytes("test");
  const PartitionId first = partitioner.Partition("t", ByteView(key), 3);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(partitioner.Partition("t", ByteView(key), 3), first);
  const std::vector<PartitionId> none_available;
  EXPECT_EQ(partitioner.Partition("t", ByteView(key), 3, none_available), first);
  const std::vector<PartitionId> others{PartitionId((first.value() + 1) % 3)};
  EXPECT_EQ(partitioner.Partition("t", ByteView(key), 3, others), first);
}

TEST(PartitionerTest, EmptyKeyIsAKeyNotRoundRobin) {
  // Kafka distinguishes a null key (round-robin) from an empty one (hashed).
  Partitioner partitioner;
  const PartitionId expected = PartitionForKey(ByteView(), 5);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(partitioner.Partition("t", ByteView(), 5), expected);
}

TEST(PartitionerTest, UnkeyedRecordsGoRoundRobinFromZeroWithoutRandomSource) {
  // The seed notes: three partitions, unkeyed records land on 0, 1, 2, 0, 1, 2.
  Partitioner partitioner;
  std::vector<int32_t> got;
  for (int i = 0; i < 6; ++i) got.push_back(partitioner.Partition("t", std::nullopt, 3).value());
  EXPECT_EQ(got, (std::vector<int32_t>{0, 1, 2, 0, 1, 2}));
}

TEST(PartitionerTest, RoundRobinWithUnavailablePartitions) {
  // DefaultPartitionerTest.testRoundRobinWithUnavailablePartitions: partition 1 has no leader;
  // 100 unkeyed records split evenly over 0 and 2, none on 1.
  StreamRandomSource random(7);
  Partitioner partitioner(&random);
  const std::vector<PartitionId> available{PartitionId(0), PartitionId(2)};
  std::map<int32_t, int> counts;
  for (int i = 0; i < 100; ++i) {
    ++counts[partitioner.Partition("t", std::nullopt, 3, available).value()];
  }
  EXPECT_EQ(counts.count(1), 0u);
  EXPECT_EQ(counts[0], 50);
  EXPECT_EQ(counts[2], 50);
}

// A broker whose metadata cache missed some UpdateMetadata lists fewer partitions than the topic
// has: Kafka's DefaultPartitioner still returns an available partition's own id, which may be
// the count or above (regression producer-picks-a-partition-a-partial-metadata-lists).
TEST(PartitionerTest, AvailablePartitionIdMayExceedAPartialCount) {
  Partitioner partitioner;
  const std::vector<PartitionId> available{PartitionId(1)};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(partitioner.Partition("t", std::nullopt, 1, available), PartitionId(1));
  }
}

TEST(PartitionerTest, NoAvailablePartitionFallsBackToAllPartitions) {
  Partitioner partitioner;
  std::vector<int32_t> got;
  for (int i = 0; i < 4; ++i) {
    got.push_back(partitioner.Partition("t", std::nullopt, 2, {}).value());
  }
  EXPECT_EQ(got, (std::vector<int32_t>{0, 1, 0, 1}));
}

TEST(PartitionerTest, RoundRobinKeepsOneCounterPerTopic) {
  // DefaultPartitionerTest.testRoundRobin (Kafka 1.x): records to topicB in between do not
  // disturb topicA's rotation; 30 records over 3 partitions give 10 each.
  StreamRandomSource random(3);
  Partitioner partitioner(&random);
  std::map<int32_t, int> counts;
  int32_t previous = -1;
  for (int i = 0; i < 30; ++i) {
    const int32_t p = partitioner.Partition("topicA", std::nullopt, 3).value();
    if (previous >= 0) {
      EXPECT_EQ(p, (previous + 1) % 3);
    }
    previous = p;
    ++counts[p];
    if (i % 5 == 0) partitioner.Partition("topicB", std::nullopt, 1);
  }
  EXPECT_EQ(counts[0], 10);
  EXPECT_EQ(counts[1], 10);
  EXPECT_EQ(counts[2], 10);
}

TEST(PartitionerTest, RandomStartIsDrawnFromTheSourceOncePerTopic) {
  // Two partitioners over equal streams choose the same start; across seeds the start varies
  // (Kafka spreads producers' first records this way).
  std::map<int32_t, int> starts;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    StreamRandomSource a(seed);
    StreamRandomSource b(seed);
    Partitioner pa(&a);
    Partitioner pb(&b);
    const int32_t first = pa.Partition("t", std::nullopt, 5).value();
    EXPECT_EQ(first, pb.Partition("t", std::nullopt, 5).value());
    EXPECT_EQ(pa.Partition("t", std::nullopt, 5).value(), (first + 1) % 5);
    ++starts[first];
  }
  EXPECT_GT(starts.size(), 1u);
}

}  // namespace
}  // namespace ksim
