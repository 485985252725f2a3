// Producer: Kafka's KafkaProducer (RecordAccumulator + Sender + the producer's Metadata and, with
// enable.idempotence, its TransactionManager's producer id and sequence bookkeeping) on core's
// seams: a Transport to reach brokers, Timers and a Clock, a RandomSource for the partitioner's
// round-robin start, and an EventSink. It is the real client logic; the simulator gives it a
// SimTransport on a client node, a real process would give it TCP. docs/clients.md, "Producer".
//
// - Send(record, callback) picks the partition (core/clients/producer/partitioner.h: murmur2 of the
// key, else
//   round robin over the partitions with a leader) once the topic's metadata is known, and appends
//   the record to the partition's open batch. A batch is sent when it is full (batch.size), when
//   linger.ms passed since its first record, on Flush/Close, or when a retry's backoff ended.
// - The sender sends each partition's ready batches to its leader, one Produce request per
//   leader holding that leader's ready batches, at most max.in.flight.requests.per.connection
//   requests awaiting an answer per broker (NetworkClient). acks=0 requests get no answer: the
//   batch completes as soon as it is sent, with offset -1.
// - Errors: retriable ones (NOT_LEADER_FOR_PARTITION, LEADER_NOT_AVAILABLE,
//   UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS(_AFTER_APPEND), REQUEST_TIMED_OUT,
//   NETWORK_EXCEPTION, and OUT_OF_ORDER_SEQUENCE_NUMBER/UNKNOWN_PRODUCER_ID as below) re-enqueue
//   the batch at the head of its partition's queue after retry.backoff.ms, while attempts <=
//   retries and (2.1 on) delivery.timeout.ms has not passed since the batch was created;
//   NOT_LEADER, LEADER_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION and disconnects also request a
//   metadata refresh. Without idempotence, a retry of a batch whose response was lost appends it
//   again: the at-least-once duplicate. Other errors, exhausted retries and expired batches fail.
// - Expiry, per the producer's release (DeliveryTimeoutApplies): from 2.1 a batch expires
//   delivery.timeout.ms after its creation, queued or in flight; before 2.1 only queued batches
//   expire, request.timeout.ms after creation + linger.ms, after their last append when full, or
//   after their last attempt + retry.backoff.ms when being retried (RecordAccumulator::Expire).
// - A request that times out closes its connection (Kafka's NetworkClient.handleTimedOutRequests,
//   every release): every other request in flight to that broker fails with NETWORK_EXCEPTION and
//   metadata is refreshed. A connection the broker closes (after an acks=0 produce that failed)
//   is a disconnect like any other: requests on it fail, metadata is refreshed.
// - Idempotence (enable.idempotence=true; KIP-98, Kafka 2.0's producer): before the first
//   batch, InitProducerId to any broker gives the producer id and epoch. Each batch takes the id
//   and its partition's next sequence numbers when it is first drained and keeps them for good,
//   so a retry the broker already has is answered with the original offsets (no duplicate), and
//   a gap is OUT_OF_ORDER_SEQUENCE_NUMBER. A retried batch waits for the batches before it in
//   sequence order; a later batch refused OUT_OF_ORDER_SEQUENCE_NUMBER because an earlier one
//   failed is retried (TransactionManager.canRetry); DUPLICATE_SEQUENCE_NUMBER counts as success.
//   OUT_OF_ORDER_SEQUENCE_NUMBER (or UNKNOWN_PRODUCER_ID) failing a batch of the current id for
//   good resets the producer id (a new InitProducerId; new batches from sequence 0); a batch
//   refused before any append with retries left moves its partition's later sequences down; an
//   expired batch that was sent leaves its partition "unresolved" (no new batch drained) until
//   the batches after it say whether it was written, and resets the id only if it was not. A
//   retriable failure of a batch whose producer id changed since it was sent fails that batch
//   ("This batch will be dropped"). INVALID_PRODUCER_EPOCH is fatal to the batch.
//   docs/clients.md, "Idempotence", has the rules and how Kafka 0.11 and 1.1 differ.
// - Metadata: a Metadata request for the topics in use to one of the bootstrap servers or of the
//   brokers the last answer listed (rotating), on first use of a topic, after errors that ask for
//   it, and every metadata.max.age.ms. A record whose topic has no metadata after
//   max.block.ms (60000) fails with the last metadata error (Kafka's TimeoutException: here
//   REQUEST_TIMED_OUT, never written).
//   A request that timed out or whose connection broke closes that connection (Kafka's
//   NetworkClient): until the next metadata answer, no batch is drained to that broker and no
//   metadata asked of it while another broker can answer, so batches queued behind a dead leader
//   go to the leader the refreshed metadata names instead of to a new connection to the dead one.
//
// Outcome of each record (SendCallback, exactly once, in send order per partition):
//   ok: error kNone, the partition and offset (-1 with acks=0);
//   fail: an error and maybe_written=false: no attempt can have reached a log (never sent, or every
//     attempt answered with an error from before the append);
//   unknown: an error and maybe_written=true: some attempt's fate is unknown (timed out, lost
//     with a connection) or was answered with an error a leader can give after appending: with
//     acks=all, the end of its acks wait (REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS_AFTER_APPEND,
//     NOT_LEADER_FOR_PARTITION, UNKNOWN_TOPIC_OR_PARTITION: Kafka's DelayedProduce), or
//     KAFKA_STORAGE_ERROR at any acks (a disk failing mid-append); the client cannot tell
//     whether the leader appended first.
//
// Events (EventSink, the client's node): producer_id {producer_id, epoch} on InitProducerId;
// produce_batch {topic, partition, attempt, records, base_sequence, broker} each time a batch is
// sent; produce_retry {topic, partition, attempt, error, backoff_ms}; batch_expired {topic,
// partition, records}; metadata_update {brokers, topics}. Record-level history (send, ack,
// error) is the caller's: it has the values (sim/ records them with unique ids).
//
// Ownership: borrows every seam (they outlive the Producer); owns its NetworkClient, which
// installs itself as the Transport's handler. Destroying it is the process dying: nothing more is
// sent and no callback runs. One thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/clock.h"
#include "core/base/events.h"
#include "core/base/random_source.h"
#include "core/base/status.h"
#include "core/base/types.h"
#include "core/config/kafka_version.h"
#include "core/config/server_config.h"
#include "core/protocol/messages.h"
#include "core/protocol/transport.h"

namespace ksim {

// A batch still waiting for its outcome (Producer::OldestPendingBatch).
struct PendingBatchInfo {
  TopicPartition tp;
  int32_t records = 0;
  Sequence base_sequence = kNoSequence;  // kNoSequence: not idempotent or not drained yet
  int32_t attempts = 0;
  Errc last_error = Errc::kNone;
  // "t-0's batch of 1 record, sequence 843, sent 621 times, last answered
  // OUT_OF_ORDER_SEQUENCE_NUMBER".
  std::string Describe() const;
};

// The producer's configuration under Kafka's names; defaults are Kafka 0.10's except where a
// later setting (delivery.timeout.ms, KIP-91; enable.idempotence, KIP-98) exists only later.
struct ProducerConfig {
  // The producer's release: how batches expire (below) and which settings exist.
  KafkaRelease release = kSeedKafkaRelease;
  std::string client_id;                       // client.id
  std::vector<std::string> bootstrap_servers;  // bootstrap.servers: node names (":port" dropped)
  // acks: "all"/-1, 0, 1. The Producer also sends 0.8.1's acks=N > 1, which ParseProducerConfig
  // refuses at every modelled release (0.8.2's producers refuse it too); a 0.8.2 broker waits for
  // N ISR members (ReplicaManager::HandleProduce).
  int16_t acks = 1;
  int32_t retries = 0;             // retries (0.10: 0; with idempotence: INT32_MAX)
  int64_t retry_backoff_ms = 100;  // retry.backoff.ms
  // request.timeout.ms: also the Produce timeout_ms and, before 2.1, the expiry of queued batches.
  // At 0.8.2 it holds timeout.ms, only the Produce timeout_ms (RequestTimeoutsApply).
  int32_t request_timeout_ms = 30000;
  // delivery.timeout.ms (KIP-91, from 2.1): unused before 2.1 (DeliveryTimeoutApplies).
  int64_t delivery_timeout_ms = 120000;
  int64_t linger_ms = 0;       // linger.ms
  int32_t batch_size = 16384;  // batch.size (bytes of record data per batch)
  int32_t max_in_flight_requests_per_connection = 5;
  bool enable_idempotence = false;       // enable.idempotence
  std::string partitioner = "default";   // partitioner.class: "default" (murmur2/round robin)
  int64_t metadata_max_age_ms = 300000;  // metadata.max.age.ms
  // max.block.ms (metadata.fetch.timeout.ms at 0.8.2): how long Send waits for metadata.
  int64_t max_block_ms = 60000;
  int32_t max_request_size = 1048576;  // max.request.size
  // The brokers' release, as their ApiVersions answers tell it (not a setting; the producer's own
  // unless the caller says). An idempotent producer against brokers before 0.11 finds no
  // InitProducerId there: UnsupportedVersionException, fatal (0.11.0.0 to 2.1.0:
  // Sender.maybeWaitForProducerId, transitionToFatalError), so every record fails with
  // UNSUPPORTED_VERSION and nothing is sent.
  KafkaRelease brokers_release = kSeedKafkaRelease;
  // What KafkaProducer logs at WARN for settings its release does not know
  // (AbstractConfig.logUnused): "The configuration enable.idempotence = true was supplied but
  // isn't a known config." Those settings have no effect.
  std::vector<std::string> warnings;
};

// Parses Kafka-named settings over the defaults as a producer of `release` does, with Kafka's
// checks and messages (core/config/config_def.h). acks other than all/-1/0/1 is refused with
// ConfigDef's text ("Invalid value 2 for configuration acks: String must be one of: all, -1, 0,
// 1"). Keys unknown to every release are kInvalidConfig naming the key and the closest known one;
// a key of a later release (enable.idempotence before 0.11.0, delivery.timeout.ms before 2.1) is a
// warning in `warnings` and ignored, as KafkaProducer does. enable.idempotence=true sets acks=all
// and retries=INT32_MAX unless given, and one request in flight at 0.11.0 unless given; given acks
// other than all/-1, retries 0, or in flight other than 1 (0.11.0) or more than 5 (1.0 on) are
// refused with Kafka's messages.
Result<ProducerConfig> ParseProducerConfig(const ConfigOverrides& settings,
                                           KafkaRelease release = kSeedKafkaRelease);

// Whether a producer of `release` has KIP-91's delivery.timeout.ms (2.1 on): batches, queued or
// in flight, expire delivery.timeout.ms after their creation and are not retried past it.
// Before, queued batches expire after request.timeout.ms (Kafka's RecordBatch.maybeExpire, the
// same from 0.10.0 to 2.0: docs/versions.md) and a batch in flight waits for its answer or its
// request's timeout; retries are counted, never timed.
inline bool DeliveryTimeoutApplies(KafkaRelease release) { return release >= KafkaRelease::k2_1; }

// Whether a producer of `release` times anything out on its side (KIP-19, 0.9.0): a request in
// flight after request.timeout.ms, a queued batch by its ExpiryForm. Kafka 0.8.2's producer does
// neither (0.8.2.2:NetworkClient has no request timeout, its RecordAccumulator no expiry): a
// request waits for its answer or its connection's break, a batch for a leader, however long.
inline bool RequestTimeoutsApply(KafkaRelease release) { return release >= KafkaRelease::k0_10_0; }

// Whether a broker can answer `error` to a Produce of `acks` after its leader appended the batch,
// so that the producer cannot know whether the record is in the log (SendOutcome::maybe_written).
// With acks=-1 the leader appends, then waits in its DelayedProduce, which ends with
// REQUEST_TIMED_OUT (the wait expired), NOT_ENOUGH_REPLICAS_AFTER_APPEND, NOT_LEADER_FOR_PARTITION
// (leadership moved: a follower that copied the record may be elected and keep it),
// UNKNOWN_TOPIC_OR_PARTITION (the replica was removed) or, from 1.0, KAFKA_STORAGE_ERROR (its log
// dir went offline): DelayedProduce.tryComplete and Partition.checkEnoughReplicasReachOffset at
// 0.10.0.1, 1.0.0, 2.0.0 and 2.1.0. With acks=1 (no wait) NOT_LEADER_FOR_PARTITION and
// UNKNOWN_TOPIC_OR_PARTITION come from before the append; KAFKA_STORAGE_ERROR may come from the
// middle of the append (a KafkaStorageException from Log.append, 1.0+) whatever the acks.
bool MayFollowAnAppend(Errc error, int16_t acks);

struct ProducerRecord {
  std::string topic;
  std::optional<PartitionId> partition;  // set: no partitioner
  std::optional<std::string> key;        // nullopt: round robin
  std::string value;
  int64_t timestamp_ms = kNoTimestamp;  // kNoTimestamp: the producer's clock at Send
};

struct SendOutcome {
  Errc error = Errc::kNone;
  TopicPartition tp;                 // empty topic when the partition was never chosen
  Offset offset = kUndefinedOffset;  // ok with acks != 0: where the leader put the record
  bool maybe_written = false;        // see the header comment: fail vs unknown
  int32_t attempts = 0;              // Produce requests that carried the record
};
using SendCallback = std::function<void(const SendOutcome&)>;

struct ProducerSeams {
  Transport& transport;
  Timers& timers;
  const Clock& clock;
  RandomSource& random;
  EventSink events;
};

struct ProducerCounters {
  uint64_t records_sent = 0;  // Send calls
  uint64_t records_acked = 0;
  uint64_t records_failed = 0;
  uint64_t batches_sent = 0;  // Produce attempts per batch, retries included
  uint64_t retries = 0;
  uint64_t metadata_requests = 0;
};

class Producer {
 public:
  // REQUIRES: config came from ParseProducerConfig (or is equally valid); bootstrap not empty.
  Producer(ProducerConfig config, ProducerSeams seams);
  ~Producer();
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // Queues `record`; `callback` hears its outcome later (never inside Send).
  // REQUIRES: not closed.
  void Send(ProducerRecord record, SendCallback callback);
  // Makes every queued batch ready now (linger ends); `done` runs once every record sent before
  // the call has its outcome.
  void Flush(std::function<void()> done);
  // Flush, then stop: later Sends are programmer errors. `done` runs when nothing is pending.
  void Close(std::function<void()> done);

  // Records given to Send whose outcome is not known yet.
  int64_t pending() const;
  // The batch created first among those still waiting for their outcome, or nullopt.
  std::optional<PendingBatchInfo> OldestPendingBatch() const;
  // The highest sequence acknowledged on `tp` (kNoSequence: none; idempotent producers only).
  Sequence LastAckedSequence(const TopicPartition& tp) const;
  const ProducerConfig& config() const;
  ProducerId producer_id()
      const;  // kNoProducerId until InitProducerId answered (or no idempotence)
  ProducerEpoch producer_epoch() const;
  const ProducerCounters& counters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ksim
