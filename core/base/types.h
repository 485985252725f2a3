// Strong types for the numbers that carry meaning across interfaces: an Offset is not a
// LeaderEpoch is not a BrokerId. Each is a thin wrapper over its Kafka wire type; arithmetic
// that makes sense (offset + count, offset - offset) is provided, mixing kinds does not compile.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <string>

namespace ksim {

template <class Tag, class Rep>
class StrongInt {
 public:
  using rep = Rep;
  constexpr StrongInt() = default;
  constexpr explicit StrongInt(Rep value) : value_(value) {}
  constexpr Rep value() const { return value_; }

  friend constexpr auto operator<=>(StrongInt, StrongInt) = default;
  friend constexpr bool operator==(StrongInt, StrongInt) = default;

  // Moving a position by a count keeps its kind; the distance between two positions is a count.
  friend constexpr StrongInt operator+(StrongInt a, Rep delta) {
    return StrongInt(a.value_ + delta);
  }
  friend constexpr StrongInt operator-(StrongInt a, Rep delta) {
    return StrongInt(a.value_ - delta);
  }
  friend constexpr Rep operator-(StrongInt a, StrongInt b) { return a.value_ - b.value_; }
  constexpr StrongInt& operator++() {
    ++value_;
    return *this;
  }
  constexpr StrongInt& operator+=(Rep delta) {
    value_ += delta;
    return *this;
  }

  friend std::ostream& operator<<(std::ostream& os, StrongInt v) { return os << +v.value_; }
  friend std::string ToString(StrongInt v) { return std::to_string(v.value_); }

 private:
  Rep value_{};
};

struct OffsetTag {};
struct LeaderEpochTag {};
struct BrokerIdTag {};
struct PartitionIdTag {};
struct ProducerIdTag {};
struct ProducerEpochTag {};
struct SequenceTag {};
struct ControllerEpochTag {};

using Offset = StrongInt<OffsetTag, int64_t>;            // position of a record in a partition
using LeaderEpoch = StrongInt<LeaderEpochTag, int32_t>;  // partition leader epoch (KIP-101)
using BrokerId = StrongInt<BrokerIdTag, int32_t>;        // broker.id
using PartitionId = StrongInt<PartitionIdTag, int32_t>;
using ProducerId = StrongInt<ProducerIdTag, int64_t>;  // idempotent producer id (KIP-98)
using ProducerEpoch = StrongInt<ProducerEpochTag, int16_t>;
using Sequence = StrongInt<SequenceTag, int32_t>;  // per-partition producer sequence
using ControllerEpoch = StrongInt<ControllerEpochTag, int32_t>;

// Wire sentinels (Kafka: RecordBatch.NO_PRODUCER_ID etc.).
inline constexpr ProducerId kNoProducerId{-1};
inline constexpr ProducerEpoch kNoProducerEpoch{-1};
inline constexpr Sequence kNoSequence{-1};
inline constexpr LeaderEpoch kNoPartitionLeaderEpoch{-1};
inline constexpr int64_t kNoTimestamp = -1;
// OffsetsForLeaderEpoch's UNDEFINED_EPOCH / UNDEFINED_EPOCH_OFFSET, and "no offset" in responses.
inline constexpr LeaderEpoch kUndefinedEpoch{-1};
inline constexpr Offset kUndefinedOffset{-1};
inline constexpr Offset kUndefinedEpochOffset{-1};

// Simulated and real time alike are integer microseconds (docs/DESIGN.md, determinism rules).
using TimeUs = int64_t;
inline constexpr TimeUs kUsPerMs = 1000;

}  // namespace ksim

template <class Tag, class Rep>
struct std::hash<ksim::StrongInt<Tag, Rep>> {
  size_t operator()(ksim::StrongInt<Tag, Rep> v) const noexcept {
    return std::hash<Rep>{}(v.value());
  }
};
