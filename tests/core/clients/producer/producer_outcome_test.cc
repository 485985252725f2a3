// MayFollowAnAppend (core/clients/producer/producer.h): which Produce errors leave a record's
// outcome unknown because the leader may have appended it before answering (issue 18: Kafka's
// DelayedProduce ends with them after the append), and which come only from before an append.
#include <gtest/gtest.h>

#include "core/clients/producer/producer.h"

namespace ksim {
namespace {

constexpr int16_t kAcksAll = -1;
constexpr int16_t kAcksOne = 1;

TEST(ProducerOutcomeTest, EveryEndOfTheAcksWaitMayFollowAnAppend) {
  // DelayedProduce.tryComplete / onExpiration at 0.10.0.1 to 2.1.0.
  for (Errc error :
       {Errc::kRequestTimedOut, Errc::kNotEnoughReplicasAfterAppend, Errc::kNotLeaderForPartition,
        Errc::kUnknownTopicOrPartition, Errc::kKafkaStorageError}) {
    EXPECT_TRUE(MayFollowAnAppend(error, kAcksAll)) << ErrcName(error);
  }
}

TEST(ProducerOutcomeTest, WithoutAWaitOnlyAFailingDiskLeavesItUnknown) {
  EXPECT_FALSE(MayFollowAnAppend(Errc::kNotLeaderForPartition, kAcksOne));
  EXPECT_FALSE(MayFollowAnAppend(Errc::kUnknownTopicOrPartition, kAcksOne));
  EXPECT_TRUE(MayFollowAnAppend(Errc::kKafkaStorageError, kAcksOne));
}

TEST(ProducerOutcomeTest, RefusalsBeforeTheAppendAreFailures) {
  // Partition.appendRecordsToLeader and Log.append refuse these before writing anything.
  for (Errc error :
       {Errc::kNotEnoughReplicas, Errc::kMessageTooLarge, Errc::kCorruptMessage,
        Errc::kInvalidRequiredAcks, Errc::kLeaderNotAvailable, Errc::kOutOfOrderSequenceNumber}) {
    EXPECT_FALSE(MayFollowAnAppend(error, kAcksAll)) << ErrcName(error);
    EXPECT_FALSE(MayFollowAnAppend(error, kAcksOne)) << ErrcName(error);
  }
}

}  // namespace
}  // namespace ksim
