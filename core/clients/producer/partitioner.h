// The producer's partitioner: which partition a record goes to, bit for bit as Kafka's Java
// client (org.apache.kafka.clients.producer.internals.DefaultPartitioner, 0.10 to 2.3, before
// KIP-480's sticky partitioner):
//   - a keyed record goes to toPositive(murmur2(key)) % numPartitions, whether or not that
//     partition has a leader (the key decides, availability does not);
//   - an unkeyed record goes round-robin: a per-topic counter (later versions keep one per
//     topic; 0.10 had one shared counter) taken modulo the partitions that have a leader, or
//     modulo all partitions when none has.
// Kafka starts each counter at ThreadLocalRandom.nextInt(); here the start comes from the
// RandomSource handed in (the simulator's seeded stream) or is 0 without one, which gives the
// seed notes' 0, 1, 2, 0, 1, 2 for three partitions. docs/clients.md has the details.
//
// Murmur2 and ToPositive are pure functions. A Partitioner holds the counters: one per client,
// used from one thread; the RandomSource is borrowed and must outlive it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/random_source.h"
#include "core/base/types.h"

namespace ksim {

// Kafka's Utils.murmur2: MurmurHash2 (32 bit) with seed 0x9747b28c over the bytes, read as
// little-endian 4-byte words, the result as Java's signed int.
int32_t Murmur2(ByteView data);

// Kafka's Utils.toPositive: clears the sign bit (not Math.abs, which fails on INT32_MIN).
inline int32_t ToPositive(int32_t value) { return value & 0x7fffffff; }

// The partition of a keyed record: toPositive(murmur2(key)) % num_partitions.
// REQUIRES: num_partitions > 0.
PartitionId PartitionForKey(ByteView key, int32_t num_partitions);

class Partitioner {
 public:
  // `random` (may be null: counters start at 0) draws each topic's counter start.
  explicit Partitioner(RandomSource* random = nullptr) : random_(random) {}

  // The partition for a record of `topic` with `key` (nullopt: no key). `num_partitions` is the
  // topic's partition count from metadata, `available` the partitions that have a leader now, in
  // partition order (Kafka's Cluster.availablePartitionsForTopic).
  // REQUIRES: num_partitions > 0; each available partition is in [0, num_partitions).
  PartitionId Partition(const std::string& topic, const std::optional<ByteView>& key,
                        int32_t num_partitions, const std::vector<PartitionId>& available);

  // Convenience: every partition available.
  PartitionId Partition(const std::string& topic, const std::optional<ByteView>& key,
                        int32_t num_partitions);

 private:
  // Kafka's nextValue(topic): the counter's value, then increments it (wrapping as Java's int).
  int32_t NextValue(const std::string& topic);

  RandomSource* random_;
  std::map<std::string, uint32_t> counters_;  // uint32_t: wraps as Java's int without UB
};

}  // namespace ksim
