#include "core/base/status.h"

#include <cstdio>
#include <cstdlib>

namespace ksim {

namespace detail {
void CheckFailed(const char* condition, const char* file, int line, const char* message) {
  std::fprintf(stderr, "ksim: check failed at %s:%d: %s%s%s\n", file, line, condition,
               message ? ": " : "", message ? message : "");
  std::abort();
}
}  // namespace detail

bool IsRetriable(Errc code) {
  switch (code) {
    case Errc::kCorruptMessage:
    case Errc::kUnknownTopicOrPartition:
    case Errc::kLeaderNotAvailable:
    case Errc::kNotLeaderForPartition:
    case Errc::kRequestTimedOut:
    case Errc::kNetworkException:
    case Errc::kCoordinatorLoadInProgress:
    case Errc::kCoordinatorNotAvailable:
    case Errc::kNotCoordinator:
    case Errc::kNotEnoughReplicas:
    case Errc::kNotEnoughReplicasAfterAppend:
    case Errc::kKafkaStorageError:
    case Errc::kFetchSessionIdNotFound:
    case Errc::kInvalidFetchSessionEpoch:
      return true;
    default:
      return false;
  }
}

std::string_view ErrcName(Errc code) {
  switch (code) {
    case Errc::kNone:
      return "NONE";
    case Errc::kUnknownServerError:
      return "UNKNOWN_SERVER_ERROR";
    case Errc::kOffsetOutOfRange:
      return "OFFSET_OUT_OF_RANGE";
    case Errc::kCorruptMessage:
      return "CORRUPT_MESSAGE";
    case Errc::kUnknownTopicOrPartition:
      return "UNKNOWN_TOPIC_OR_PARTITION";
    case Errc::kInvalidFetchSize:
      return "INVALID_FETCH_SIZE";
    case Errc::kLeaderNotAvailable:
      return "LEADER_NOT_AVAILABLE";
    case Errc::kNotLeaderForPartition:
      return "NOT_LEADER_FOR_PARTITION";
    case Errc::kRequestTimedOut:
      return "REQUEST_TIMED_OUT";
    case Errc::kBrokerNotAvailable:
      return "BROKER_NOT_AVAILABLE";
    case Errc::kReplicaNotAvailable:
      return "REPLICA_NOT_AVAILABLE";
    case Errc::kMessageTooLarge:
      return "MESSAGE_TOO_LARGE";
    case Errc::kStaleControllerEpoch:
      return "STALE_CONTROLLER_EPOCH";
    case Errc::kNetworkException:
      return "NETWORK_EXCEPTION";
    case Errc::kCoordinatorLoadInProgress:
      return "COORDINATOR_LOAD_IN_PROGRESS";
    case Errc::kCoordinatorNotAvailable:
      return "COORDINATOR_NOT_AVAILABLE";
    case Errc::kNotCoordinator:
      return "NOT_COORDINATOR";
    case Errc::kInvalidTopicException:
      return "INVALID_TOPIC_EXCEPTION";
    case Errc::kRecordListTooLarge:
      return "RECORD_LIST_TOO_LARGE";
    case Errc::kNotEnoughReplicas:
      return "NOT_ENOUGH_REPLICAS";
    case Errc::kNotEnoughReplicasAfterAppend:
      return "NOT_ENOUGH_REPLICAS_AFTER_APPEND";
    case Errc::kInvalidRequiredAcks:
      return "INVALID_REQUIRED_ACKS";
    case Errc::kIllegalGeneration:
      return "ILLEGAL_GENERATION";
    case Errc::kInconsistentGroupProtocol:
      return "INCONSISTENT_GROUP_PROTOCOL";
    case Errc::kInvalidGroupId:
      return "INVALID_GROUP_ID";
    case Errc::kUnknownMemberId:
      return "UNKNOWN_MEMBER_ID";
    case Errc::kInvalidSessionTimeout:
      return "INVALID_SESSION_TIMEOUT";
    case Errc::kRebalanceInProgress:
      return "REBALANCE_IN_PROGRESS";
    case Errc::kInvalidTimestamp:
      return "INVALID_TIMESTAMP";
    case Errc::kUnsupportedVersion:
      return "UNSUPPORTED_VERSION";
    case Errc::kTopicAlreadyExists:
      return "TOPIC_ALREADY_EXISTS";
    case Errc::kInvalidPartitions:
      return "INVALID_PARTITIONS";
    case Errc::kInvalidReplicationFactor:
      return "INVALID_REPLICATION_FACTOR";
    case Errc::kInvalidReplicaAssignment:
      return "INVALID_REPLICA_ASSIGNMENT";
    case Errc::kInvalidConfig:
      return "INVALID_CONFIG";
    case Errc::kNotController:
      return "NOT_CONTROLLER";
    case Errc::kInvalidRequest:
      return "INVALID_REQUEST";
    case Errc::kUnsupportedForMessageFormat:
      return "UNSUPPORTED_FOR_MESSAGE_FORMAT";
    case Errc::kOutOfOrderSequenceNumber:
      return "OUT_OF_ORDER_SEQUENCE_NUMBER";
    case Errc::kDuplicateSequenceNumber:
      return "DUPLICATE_SEQUENCE_NUMBER";
    case Errc::kInvalidProducerEpoch:
      return "INVALID_PRODUCER_EPOCH";
    case Errc::kKafkaStorageError:
      return "KAFKA_STORAGE_ERROR";
    case Errc::kUnknownProducerId:
      return "UNKNOWN_PRODUCER_ID";
    case Errc::kFetchSessionIdNotFound:
      return "FETCH_SESSION_ID_NOT_FOUND";
    case Errc::kInvalidFetchSessionEpoch:
      return "INVALID_FETCH_SESSION_EPOCH";
    case Errc::kFencedLeaderEpoch:
      return "FENCED_LEADER_EPOCH";
    case Errc::kUnknownLeaderEpoch:
      return "UNKNOWN_LEADER_EPOCH";
    case Errc::kIoError:
      return "IO_ERROR";
    case Errc::kNoSpace:
      return "NO_SPACE";
    case Errc::kNotFound:
      return "NOT_FOUND";
    case Errc::kAlreadyExists:
      return "ALREADY_EXISTS";
    case Errc::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case Errc::kCorruption:
      return "CORRUPTION";
    case Errc::kUnsupported:
      return "UNSUPPORTED";
    case Errc::kOffsetsOutOfOrder:
      return "OFFSETS_OUT_OF_ORDER";
    case Errc::kUnexpectedAppendOffset:
      return "UNEXPECTED_APPEND_OFFSET";
    case Errc::kConnectionLoss:
      return "CONNECTIONLOSS";
    case Errc::kNoNode:
      return "NONODE";
    case Errc::kBadVersion:
      return "BADVERSION";
    case Errc::kNoChildrenForEphemerals:
      return "NOCHILDRENFOREPHEMERALS";
    case Errc::kNodeExists:
      return "NODEEXISTS";
    case Errc::kNotEmpty:
      return "NOTEMPTY";
    case Errc::kSessionExpired:
      return "SESSIONEXPIRED";
  }
  return "UNKNOWN_ERROR_CODE";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(ErrcName(code_));
  if (!message_.empty()) {
    out += ": ";
    out += message_;
  }
  return out;
}

}  // namespace ksim
