#include "core/clients/producer/partitioner.h"

#include <limits>

#include "core/base/check.h"

namespace ksim {

int32_t Murmur2(ByteView data) {
  // Java's int arithmetic wraps; unsigned 32-bit arithmetic gives the same bits without UB, and
  // Java's >>> is a logical shift, which is what >> does on an unsigned value.
  const uint32_t length = static_cast<uint32_t>(data.size());
  constexpr uint32_t kSeed = 0x9747b28c;
  constexpr uint32_t kM = 0x5bd1e995;
  constexpr int kR = 24;

  uint32_t h = kSeed ^ length;
  const size_t words = data.size() / 4;
  for (size_t i = 0; i < words; ++i) {
    const size_t at = i * 4;
    uint32_t k = uint32_t{data[at]} | (uint32_t{data[at + 1]} << 8) |
                 (uint32_t{data[at + 2]} << 16) | (uint32_t{data[at + 3]} << 24);
    k *= kM;
    k ^= k >> kR;
    k *= kM;
    h *= kM;
    h ^= k;
  }
  const size_t tail = data.size() & ~size_t{3};
  switch (data.size() % 4) {
    case 3:
      h ^= uint32_t{data[tail + 2]} << 16;
      [[fallthrough]];
    case 2:
      h ^= uint32_t{data[tail + 1]} << 8;
      [[fallthrough]];
    case 1:
      h ^= uint32_t{data[tail]};
      h *= kM;
  }
  h ^= h >> 13;
  h *= kM;
  h ^= h >> 15;
  return static_cast<int32_t>(h);  // two's complement, as Java's int (C++20 defines it)
}

PartitionId PartitionForKey(ByteView key, int32_t num_partitions) {
  KSIM_CHECK(num_partitions > 0);
  return PartitionId(ToPositive(Murmur2(key)) % num_partitions);
}

int32_t Partitioner::NextValue(const std::string& topic) {
  auto it = counters_.find(topic);
  if (it == counters_.end()) {
    // Kafka: new AtomicInteger(ThreadLocalRandom.current().nextInt()), any int. A non-negative
    // start is as good: the counter wraps anyway and toPositive is applied to every value.
    const uint32_t start =
        random_ == nullptr
            ? 0
            : static_cast<uint32_t>(random_->NextInt(std::numeric_limits<int32_t>::max()));
    it = counters_.emplace(topic, start).first;
  }
  const uint32_t value = it->second++;
  return static_cast<int32_t>(value);
}

PartitionId Partitioner::Partition(const std::string& topic, const std::optional<ByteView>& key,
                                   int32_t num_partitions,
                                   const std::vector<PartitionId>& available) {
  KSIM_CHECK(num_partitions > 0);
  if (key.has_value()) return PartitionForKey(*key, num_partitions);
  const int32_t next = ToPositive(NextValue(topic));
  if (available.empty()) return PartitionId(next % num_partitions);
  // An available partition's own id, which may be num_partitions or above: a broker's metadata
  // cache lists the partitions the controller's UpdateMetadata requests named, and one that
  // missed some answers with fewer than the topic has (Kafka's DefaultPartitioner returns
  // availablePartitions.get(part).partition() all the same).
  const PartitionId chosen = available[static_cast<size_t>(next) % available.size()];
  KSIM_CHECK(chosen.value() >= 0);
  return chosen;
}

PartitionId Partitioner::Partition(const std::string& topic, const std::optional<ByteView>& key,
                                   int32_t num_partitions) {
  KSIM_CHECK(num_partitions > 0);
  // With every partition available, available[i] == i: the same choice as the general case.
  if (key.has_value()) return PartitionForKey(*key, num_partitions);
  return PartitionId(ToPositive(NextValue(topic)) % num_partitions);
}

}  // namespace ksim
