// LogConfig: the per-partition settings of the storage engine, with Kafka's topic-level names
// (broker-level names in the comments) and Kafka 0.10 defaults. A plain struct: the broker
// builds one from server.properties and topic overrides; the Log copies it at open.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "core/base/types.h"
#include "core/config/kafka_version.h"

namespace ksim {

enum class CleanupPolicy {
  kDelete,         // cleanup.policy=delete: retention by time and size
  kCompact,        // cleanup.policy=compact: no time/size retention (compaction not modelled)
  kCompactDelete,  // cleanup.policy=compact,delete
};

struct LogConfig {
  static constexpr int64_t kHourMs = 60 * 60 * 1000;
  static constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

  // segment.bytes (log.segment.bytes): roll when the active segment would exceed this.
  int32_t segment_bytes = 1 << 30;
  // segment.ms (log.roll.ms / log.roll.hours = 168): roll when the active segment is this old,
  // measured from its first record's timestamp or, without one, from its creation.
  int64_t segment_ms = 168 * kHourMs;
  // index.interval.bytes (log.index.interval.bytes): bytes appended between offset-index entries.
  int32_t index_interval_bytes = 4096;
  // segment.index.bytes (log.index.size.max.bytes): size each index file is preallocated to.
  int32_t max_index_size_bytes = 10 * 1024 * 1024;
  // retention.ms (log.retention.ms / log.retention.hours = 168); -1 keeps segments forever.
  int64_t retention_ms = 168 * kHourMs;
  // retention.bytes (log.retention.bytes); -1 is no size limit.
  int64_t retention_bytes = -1;
  // cleanup.policy (log.cleanup.policy).
  CleanupPolicy cleanup_policy = CleanupPolicy::kDelete;
  // flush.messages (log.flush.interval.messages): fsync after this many unflushed records.
  int64_t flush_interval_messages = kUnbounded;
  // flush.ms (log.flush.interval.ms): fsync when the last flush is this old (Log::MaybeFlush).
  int64_t flush_ms = kUnbounded;
  // file.delete.delay.ms (log.segment.delete.delay.ms): how long a deleted segment's files stay
  // on disk renamed to .deleted.
  int64_t file_delete_delay_ms = 60000;
  // max.message.bytes (message.max.bytes = 1000012): the largest batch a leader accepts.
  int32_t max_message_bytes = 1000012;

  // message.format.version (log.message.format.version): the format the leader writes, as a
  // magic (0: 0.8.x-0.9.x, 1: 0.10.x, 2: 0.11 and later; MessageFormatMagic). Batches received
  // in another format are converted on append (Log::AppendAsLeader); a log may hold several.
  // A broker's default is its release's (BrokerConfig::DefaultLogConfig: Kafka's
  // log.message.format.version defaults to the release's latest ApiVersion): magic 1 at 0.10.x,
  // 2 from 0.11. The struct's own default, 2, is for tools and tests that build a LogConfig.
  int8_t message_format_magic = 2;

  // Whether segments keep a time index (KIP-33, Kafka 0.10.1, KAFKA-3163): a .timeindex file
  // beside each segment, time-based rolls from the first record's timestamp, retention by the
  // largest record timestamp, ListOffsets by timestamp through the index. Not a topic setting:
  // the broker's release (BrokerConfig::DefaultLogConfig). false is Kafka 0.10.0's log: no
  // .timeindex, rolls from the segment's creation, retention and ListOffsets by the segment's
  // last modification (0.10.0.1's Log.maybeRoll, LogManager.cleanupExpiredSegments,
  // KafkaApis.fetchOffsetsBefore).
  bool time_index = true;

  // The broker's release (BrokerConfig::DefaultLogConfig), for what its logs remember of
  // idempotent producers (ProducerStateRulesAt). Not a topic setting.
  KafkaRelease release = kLatestKafkaRelease;

  bool DeleteEnabled() const { return cleanup_policy != CleanupPolicy::kCompact; }
};

// The message format (magic) of a version as message.format.version takes it on a broker of
// `release` (Kafka's ApiVersion.apply, core/config/kafka_version.h: "0.10.0", "0.10.0-IV1",
// "0.10.0.1", "0.9.0", "0.11.0", "2.0"): 0.8.0-0.9.0 -> 0, 0.10.x -> 1, from 0.11.0 -> 2.
// nullopt for a version that release does not know.
std::optional<int8_t> MessageFormatMagic(std::string_view version,
                                         KafkaRelease release = kLatestKafkaRelease);

}  // namespace ksim
