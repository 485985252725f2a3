// Errors as values. Expected failures (I/O, corruption, Kafka protocol errors, bad input) travel
// as a Status or a Result<T>; programmer errors are always-on KSIM_CHECKs (core/base/check.h).
//
// Errc carries Kafka's protocol error names and codes (the protocol guide's error table) so that
// a Status can be put on the wire or into a trace unchanged; local failures that Kafka has no
// code for (an I/O error, a missing file) use negative codes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "core/base/check.h"

namespace ksim {

enum class Errc : int16_t {
  kNone = 0,
  // Kafka protocol error codes (values as on the wire).
  kUnknownServerError = -1,
  kOffsetOutOfRange = 1,
  kCorruptMessage = 2,
  kUnknownTopicOrPartition = 3,
  kInvalidFetchSize = 4,
  kLeaderNotAvailable = 5,
  kNotLeaderForPartition = 6,
  kRequestTimedOut = 7,
  kBrokerNotAvailable = 8,
  kReplicaNotAvailable = 9,
  kMessageTooLarge = 10,
  kStaleControllerEpoch = 11,
  kNetworkException = 13,
  kCoordinatorLoadInProgress = 14,
  kCoordinatorNotAvailable = 15,
  kNotCoordinator = 16,
  kInvalidTopicException = 17,
  kRecordListTooLarge = 18,
  kNotEnoughReplicas = 19,
  kNotEnoughReplicasAfterAppend = 20,
  kInvalidRequiredAcks = 21,
  kIllegalGeneration = 22,
  kInconsistentGroupProtocol = 23,
  kInvalidGroupId = 24,
  kUnknownMemberId = 25,
  kInvalidSessionTimeout = 26,
  kRebalanceInProgress = 27,
  kInvalidTimestamp = 32,
  kUnsupportedVersion = 35,
  kTopicAlreadyExists = 36,
  kInvalidPartitions = 37,
  kInvalidReplicationFactor = 38,
  kInvalidReplicaAssignment = 39,
  kInvalidConfig = 40,
  kNotController = 41,
  kInvalidRequest = 42,
  kUnsupportedForMessageFormat = 43,
  kOutOfOrderSequenceNumber = 45,
  kDuplicateSequenceNumber = 46,
  kInvalidProducerEpoch = 47,
  kKafkaStorageError = 56,
  kUnknownProducerId = 59,
  kFetchSessionIdNotFound = 70,    // KIP-227 (1.1)
  kInvalidFetchSessionEpoch = 71,  // KIP-227 (1.1)
  kFencedLeaderEpoch = 74,
  kUnknownLeaderEpoch = 75,
  // Local errors with no Kafka code.
  kIoError = -100,        // EIO and friends
  kNoSpace = -101,        // ENOSPC
  kNotFound = -102,       // ENOENT
  kAlreadyExists = -103,  // EEXIST
  kInvalidArgument = -104,
  kCorruption = -105,  // damaged bytes on disk (Kafka: CorruptRecordException)
  kUnsupported = -106,
  kOffsetsOutOfOrder = -107,       // Kafka's OffsetsOutOfOrderException (follower append)
  kUnexpectedAppendOffset = -108,  // Kafka's UnexpectedAppendOffsetException (follower append)
  // ZooKeeper's KeeperException codes, as -1000 + ZooKeeper's own (negative) code so that they
  // never collide with the local codes above (ZooKeeper's NONODE is -101, ours -1101).
  kConnectionLoss = -1004,           // CONNECTIONLOSS: the request's fate is unknown
  kNoNode = -1101,                   // NONODE
  kBadVersion = -1103,               // BADVERSION
  kNoChildrenForEphemerals = -1108,  // NOCHILDRENFOREPHEMERALS
  kNodeExists = -1110,               // NODEEXISTS
  kNotEmpty = -1111,                 // NOTEMPTY
  kSessionExpired = -1112,           // SESSIONEXPIRED
};

// Kafka's name for the code ("NOT_LEADER_FOR_PARTITION"), or a local name ("IO_ERROR").
std::string_view ErrcName(Errc code);

// Whether Kafka's exception for the code is a RetriableException (org.apache.kafka.common.errors):
// a client may send the same request again. Among the codes Errc names: CORRUPT_MESSAGE,
// UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE, NOT_LEADER_FOR_PARTITION, REQUEST_TIMED_OUT,
// NETWORK_EXCEPTION, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR,
// NOT_ENOUGH_REPLICAS(_AFTER_APPEND), KAFKA_STORAGE_ERROR. Local codes are not.
bool IsRetriable(Errc code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Errc code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == Errc::kNone; }
  Errc code() const { return code_; }
  const std::string& message() const { return message_; }
  // "CORRUPTION: 00000000000000000000.log: CRC mismatch at position 4096"
  std::string ToString() const;

  friend bool operator==(const Status& a, Errc b) { return a.code_ == b; }

 private:
  Errc code_ = Errc::kNone;
  std::string message_;
};

// A value or the Status saying why there is none (std::expected is C++23).
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}        // NOLINT: implicit
  Result(Status status) : state_(std::in_place_index<1>, std::move(status)) {  // NOLINT
    KSIM_CHECK(!std::get<1>(state_).ok());
  }

  bool ok() const { return state_.index() == 0; }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<1>(state_);
  }
  T& value() & {
    KSIM_CHECK(ok());
    return std::get<0>(state_);
  }
  const T& value() const& {
    KSIM_CHECK(ok());
    return std::get<0>(state_);
  }
  T&& value() && {
    KSIM_CHECK(ok());
    return std::get<0>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace ksim

#define KSIM_CONCAT_INNER(a, b) a##b
#define KSIM_CONCAT(a, b) KSIM_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function when `expr` (a Status) is not ok.
#define KSIM_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::ksim::Status ksim_status_ = (expr);        \
    if (!ksim_status_.ok()) return ksim_status_; \
  } while (0)

// `KSIM_ASSIGN_OR_RETURN(auto file, env.Open(path));` declares `file` from a Result's value or
// returns its Status.
#define KSIM_ASSIGN_OR_RETURN(lhs, expr) \
  KSIM_ASSIGN_OR_RETURN_IMPL(KSIM_CONCAT(ksim_result_, __LINE__), lhs, expr)
#define KSIM_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()
