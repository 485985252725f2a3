#include "core/base/status.h"

#include <gtest/gtest.h>

namespace ksim {
namespace {

TEST(StatusTest, RetriableCodesAreKafkasRetriableExceptions) {
  // org.apache.kafka.common.errors: these extend RetriableException.
  for (Errc code :
       {Errc::kNotLeaderForPartition, Errc::kLeaderNotAvailable, Errc::kUnknownTopicOrPartition,
        Errc::kNotEnoughReplicas, Errc::kNotEnoughReplicasAfterAppend, Errc::kRequestTimedOut,
        Errc::kNetworkException, Errc::kCorruptMessage, Errc::kKafkaStorageError,
        Errc::kCoordinatorNotAvailable, Errc::kCoordinatorLoadInProgress, Errc::kNotCoordinator}) {
    EXPECT_TRUE(IsRetriable(code)) << ErrcName(code);
  }
  // These do not: the request would fail the same way again, or the client must act first.
  for (Errc code :
       {Errc::kNone, Errc::kOffsetOutOfRange, Errc::kMessageTooLarge, Errc::kInvalidProducerEpoch,
        Errc::kOutOfOrderSequenceNumber, Errc::kDuplicateSequenceNumber, Errc::kUnknownProducerId,
        Errc::kIllegalGeneration, Errc::kUnknownMemberId, Errc::kRebalanceInProgress,
        Errc::kInvalidReplicationFactor, Errc::kIoError, Errc::kCorruption}) {
    EXPECT_FALSE(IsRetriable(code)) << ErrcName(code);
  }
}

}  // namespace
}  // namespace ksim
