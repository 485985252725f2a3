// Producer (core/clients/producer/producer.h): the sender loop of Kafka's KafkaProducer/Sender over
// a RecordAccumulator, a NetworkClient and the producer's view of the cluster's metadata.
//
// One "run" of the sender (RunOnce, always from a timer, never inside Send) does what Kafka's
// Sender.run does once: expire what waited too long, ask metadata or a producer id when needed,
// find the leaders with sendable batches, drain one Produce request per ready leader, and arm a
// timer for the next linger/backoff/expiry deadline. Responses, disconnects and freed slots
// schedule another run. Outcomes reach the callers from timers too, in completion order.
#include "core/clients/producer/producer.h"

#include <algorithm>
#include <deque>
#include <set>
#include <span>
#include <utility>
#include <variant>

#include "core/base/check.h"
#include "core/base/trace_names.h"
#include "core/clients/producer/partitioner.h"
#include "core/clients/producer/record_accumulator.h"
#include "core/protocol/network_client.h"
#include "core/record/record_batch.h"

namespace ksim {
namespace {

// Kafka's InvalidMetadataException subclasses: the producer asks for new metadata.
bool NeedsMetadata(Errc error) {
  return error == Errc::kNotLeaderForPartition || error == Errc::kLeaderNotAvailable ||
         error == Errc::kUnknownTopicOrPartition || error == Errc::kNetworkException ||
         error == Errc::kKafkaStorageError;
}

}  // namespace

bool MayFollowAnAppend(Errc error, int16_t acks) {
  // Only ever after an append: the acks wait expired, or the ISR shrank while it ran.
  if (error == Errc::kRequestTimedOut || error == Errc::kNotEnoughReplicasAfterAppend) return true;
  // A disk failing mid-append (1.0+: a KafkaStorageException from Log.append), whatever the acks.
  if (error == Errc::kKafkaStorageError) return true;
  // The end of DelayedProduce's wait, or a refusal before the append: only acks=-1 waits.
  const bool waited = acks == -1 || acks > 1;
  return waited &&
         (error == Errc::kNotLeaderForPartition || error == Errc::kUnknownTopicOrPartition);
}

struct Producer::Impl {
  struct TopicInfo {
    int32_t partitions = 0;
    std::vector<std::optional<BrokerId>> leaders;  // by partition id: those with a leader
    std::vector<PartitionId> available;            // in partition order
  };
  struct WaitingRecord {  // its topic has no metadata yet (Kafka: blocked in waitOnMetadata)
    uint64_t id = 0;
    ProducerRecord record;
    int64_t deadline_ms = 0;
  };

  Impl(ProducerConfig config_in, ProducerSeams seams_in);

  int64_t NowMs() const { return seams.clock.NowMs(); }
  // Schedules `fn` unless the producer is gone by then.
  void Later(TimeUs delay_us, std::function<void()> fn);
  void Wakeup();
  void RunOnce();

  // Records.
  void Append(uint64_t id, ProducerRecord record);
  void Deliver(std::vector<std::pair<uint64_t, SendOutcome>> outcomes);
  void CompleteBatch(std::unique_ptr<ProducerBatch> batch, Errc error, Offset base_offset);
  // Kafka 2.0's Sender.failBatch: the batch fails for good. An OUT_OF_ORDER_SEQUENCE_NUMBER (or
  // UNKNOWN_PRODUCER_ID) of the current producer id resets the id; with `adjust_sequences` (the
  // broker refused it before any append and retries were left) the partition's later sequences
  // move down over its gap.
  void FailBatch(BatchId id, Errc error, bool adjust_sequences);
  // Kafka 2.0's TransactionManager.canRetry: an idempotent refusal worth retrying.
  bool CanRetrySequenced(const ProducerBatch& batch, Errc error, Offset log_start_offset);
  void CheckFlushes();
  void ExpireWaiting(int64_t now_ms);
  void ExpireBatches(int64_t now_ms);

  // Metadata.
  std::optional<BrokerId> LeaderOf(const TopicPartition& tp) const;
  std::optional<std::string> NextPeer();
  void MaybeSendMetadata(int64_t now_ms);
  void OnMetadata(const MetadataResponse& response);

  // Idempotence.
  void MaybeInitProducerId(int64_t now_ms);

  // Produce.
  void SendProduce(BrokerId node, const std::string& host, std::vector<ProducerBatch*> batches);
  void OnProduceResponse(const std::vector<BatchId>& ids, const std::string& host,
                         Result<Message> result);
  void OnBatchResult(BatchId id, Errc error, Offset base_offset, Offset log_start_offset);

  ProducerConfig config;
  ProducerSeams seams;
  std::shared_ptr<int> life = std::make_shared<int>(0);
  std::unique_ptr<NetworkClient> network;
  Partitioner partitioner;
  RecordAccumulator accumulator;
  ProducerCounters counters;

  std::map<uint64_t, SendCallback> callbacks;  // records without an outcome, by id = send order
  uint64_t next_record_id = 1;
  std::deque<WaitingRecord> waiting;
  std::vector<std::pair<uint64_t, std::function<void()>>> flushes;  // last record id, done
  bool closed = false;

  // Metadata (Kafka's Metadata): what the last answer said.
  std::map<std::string, TopicInfo> topics;
  // LeaderOf's last topic (the Ready and Drain walks ask for many partitions of one topic);
  // cleared whenever `topics` changes.
  mutable const std::pair<const std::string, TopicInfo>* last_topic = nullptr;
  // Changes whenever `topics` does: the accumulator's leader groups follow it.
  uint64_t leaders_generation = 0;
  std::set<std::string> topics_in_use;
  std::map<BrokerId, std::string> brokers;  // node id -> host (node name)
  bool metadata_in_flight = false;
  bool metadata_needed = false;
  int64_t last_metadata_ms = 0;          // last successful answer
  int64_t next_metadata_attempt_ms = 0;  // refresh backoff
  Errc last_metadata_error = Errc::kNone;
  size_t next_peer = 0;
  // Kafka's NetworkClient closes a connection whose request timed out or broke, and reconnecting
  // to a dead host takes longer than asking another broker for metadata: nothing is drained to
  // these hosts, and no metadata asked from them, until the next metadata answer.
  std::set<std::string, std::less<>> reconnecting;

  // Idempotence (Kafka's TransactionManager, idempotent part; the sequences are the
  // accumulator's).
  bool init_pid_in_flight = false;
  int64_t next_init_pid_attempt_ms = 0;

  bool run_scheduled = false;
  TimerId wake_timer = 0;
};

Producer::Impl::Impl(ProducerConfig config_in, ProducerSeams seams_in)
    : config(std::move(config_in)),
      seams(std::move(seams_in)),
      partitioner(&seams.random),
      accumulator(AccumulatorConfig{
          .batch_size = config.batch_size,
          .linger_ms = config.linger_ms,
          .retry_backoff_ms = config.retry_backoff_ms,
          .expiry = !RequestTimeoutsApply(config.release)    ? ExpiryForm::kNone
                    : DeliveryTimeoutApplies(config.release) ? ExpiryForm::kDeliveryTimeout
                                                             : ExpiryForm::kRequestTimeout,
          .request_timeout_ms = config.request_timeout_ms,
          .delivery_timeout_ms = config.delivery_timeout_ms,
          .max_request_size = config.max_request_size,
          .idempotent = config.enable_idempotence,
          .max_in_flight_requests_per_connection = config.max_in_flight_requests_per_connection,
      }) {
  KSIM_CHECK_MSG(!config.bootstrap_servers.empty(), "bootstrap.servers is empty");
  KSIM_CHECK(!config.enable_idempotence || config.acks == -1);
  NetworkClient::Handlers handlers;
  handlers.on_disconnect = [this](std::string_view peer) {
    metadata_needed = true;
    reconnecting.emplace(peer);
    Wakeup();
  };
  handlers.on_ready = [this](std::string_view) { Wakeup(); };
  NetworkClientOptions options;
  options.max_in_flight_requests_per_connection = config.max_in_flight_requests_per_connection;
  options.request_timeout_us = RequestTimeoutsApply(config.release)
                                   ? static_cast<TimeUs>(config.request_timeout_ms) * kUsPerMs
                                   : kNoRequestTimeout;
  // NetworkClient.handleTimedOutRequests (0.9.0 on): a timeout closes the connection.
  options.disconnect_on_timeout = true;
  options.release = config.release;
  network =
      std::make_unique<NetworkClient>(seams.transport, seams.timers, std::move(handlers), options);
  last_metadata_ms = NowMs();
}

void Producer::Impl::Later(TimeUs delay_us, std::function<void()> fn) {
  std::weak_ptr<int> alive = life;
  seams.timers.Schedule(delay_us, [alive, fn = std::move(fn)] {
    if (!alive.expired()) fn();
  });
}

void Producer::Impl::Wakeup() {
  if (run_scheduled) return;
  run_scheduled = true;
  Later(0, [this] {
    run_scheduled = false;
    RunOnce();
  });
}

void Producer::Impl::RunOnce() {
  const int64_t now_ms = NowMs();
  ExpireWaiting(now_ms);
  // Before 2.1, Sender.run drains first and then expires what is still queued
  // (abortExpiredBatches after drain), so a batch sendable at its deadline is sent. ksim's 2.1
  // form expires first, as it did before the switch (Kafka 2.1 also expires after drain; the
  // difference is a batch sendable at the very millisecond of its delivery timeout).
  const bool delivery_timeout = DeliveryTimeoutApplies(config.release);
  if (delivery_timeout) ExpireBatches(now_ms);
  if (!topics_in_use.empty() && now_ms - last_metadata_ms >= config.metadata_max_age_ms) {
    metadata_needed = true;
  }

  int64_t delay_ms = INT64_MAX;
  bool can_drain = true;
  if (config.enable_idempotence && config.brokers_release < KafkaRelease::k0_11_0) {
    // The brokers have no InitProducerId (their ApiVersions answer): the producer's fatal
    // UnsupportedVersionException; every batch is aborted with it (maybeAbortBatches), now and
    // whenever records come, and nothing is sent.
    for (std::unique_ptr<ProducerBatch>& batch : accumulator.AbortQueued()) {
      CompleteBatch(std::move(batch), Errc::kUnsupportedVersion, kUndefinedOffset);
    }
    can_drain = false;
  } else if (config.enable_idempotence) {
    // Kafka 2.0's Sender.run: an expired batch's partition whose later batches all came back
    // without closing the gap needs a new producer id (sequences from 0).
    if (accumulator.ShouldResetProducerIdAfterResolvingSequences()) accumulator.ResetProducerId();
    if (accumulator.producer_id() == kNoProducerId) {
      MaybeInitProducerId(now_ms);
      if (!init_pid_in_flight) {
        delay_ms = std::min(delay_ms, std::max<int64_t>(1, next_init_pid_attempt_ms - now_ms));
      }
    }
    can_drain = accumulator.producer_id() != kNoProducerId;
  }

  auto leader_of = [this](const TopicPartition& tp) { return LeaderOf(tp); };
  const RecordAccumulator::ReadyResult ready =
      accumulator.Ready(leader_of, leaders_generation, now_ms);
  if (!ready.unknown_leader_topics.empty()) metadata_needed = true;
  delay_ms = std::min(delay_ms, ready.next_ready_check_delay_ms);
  if (can_drain) {
    for (BrokerId node : ready.ready_nodes) {
      auto host = brokers.find(node);
      if (host == brokers.end()) {
        metadata_needed = true;
        continue;
      }
      // Kafka's Sender polls with timeout 0 while a node has sendable data, so it drains again
      // at once: as many requests as the connection takes (one batch per partition each).
      while (network->Ready(host->second)) {          // else on_ready wakes us
        if (reconnecting.count(host->second)) break;  // the metadata answer wakes us
        std::vector<ProducerBatch*> batches =
            accumulator.Drain(leader_of, leaders_generation, node, now_ms);
        if (batches.empty()) break;
        SendProduce(node, host->second, std::move(batches));
      }
    }
  }
  if (!delivery_timeout) ExpireBatches(now_ms);

  if (metadata_needed) MaybeSendMetadata(now_ms);
  if (metadata_needed && !metadata_in_flight) {
    delay_ms = std::min(delay_ms, std::max<int64_t>(1, next_metadata_attempt_ms - now_ms));
  }
  if (!topics_in_use.empty()) {
    delay_ms = std::min(delay_ms, last_metadata_ms + config.metadata_max_age_ms - now_ms);
  }
  delay_ms = std::min(delay_ms, accumulator.NextExpiryDelayMs(now_ms));
  if (!waiting.empty()) delay_ms = std::min(delay_ms, waiting.front().deadline_ms - now_ms);

  if (wake_timer != 0) seams.timers.Cancel(wake_timer);
  wake_timer = 0;
  // Beyond this nothing is due: a wait without end (block.on.buffer.full=true) or one too long for
  // the clock's microseconds (max.block.ms near Long.MAX_VALUE).
  constexpr int64_t kNeverMs = INT64_MAX / kUsPerMs / 4;
  if (delay_ms < kNeverMs) {
    std::weak_ptr<int> alive = life;
    wake_timer = seams.timers.Schedule(std::max<int64_t>(1, delay_ms) * kUsPerMs, [this, alive] {
      if (alive.expired()) return;
      wake_timer = 0;
      Wakeup();
    });
  }
}

// ---- Records ------------------------------------------------------------------------------------

void Producer::Impl::Append(uint64_t id, ProducerRecord record) {
  const TopicInfo& info = topics.at(record.topic);
  PartitionId partition{0};
  if (record.partition) {
    if (record.partition->value() < 0 || record.partition->value() >= info.partitions) {
      // Kafka: IllegalArgumentException "Invalid partition given with record".
      SendOutcome outcome;
      outcome.error = Errc::kUnknownTopicOrPartition;
      Deliver({{id, outcome}});
      return;
    }
    partition = *record.partition;
  } else {
    std::optional<Bytes> key_bytes;
    if (record.key) key_bytes = ToBytes(*record.key);
    std::optional<ByteView> key;
    if (key_bytes) key = ByteView(*key_bytes);
    partition = partitioner.Partition(record.topic, key, info.partitions, info.available);
  }
  RecordInput input;
  input.timestamp_ms = record.timestamp_ms == kNoTimestamp ? NowMs() : record.timestamp_ms;
  if (record.key) input.key = ToBytes(*record.key);
  input.value = ToBytes(record.value);
  accumulator.Append(TopicPartition{record.topic, partition}, std::move(input), id, NowMs());
}

void Producer::Impl::Deliver(std::vector<std::pair<uint64_t, SendOutcome>> outcomes) {
  Later(0, [this, outcomes = std::move(outcomes)] {
    for (const auto& [id, outcome] : outcomes) {
      auto it = callbacks.find(id);
      KSIM_CHECK_MSG(it != callbacks.end(), "a record's outcome delivered twice");
      SendCallback callback = std::move(it->second);
      callbacks.erase(it);
      if (outcome.error == Errc::kNone) {
        ++counters.records_acked;
      } else {
        ++counters.records_failed;
      }
      if (callback) callback(outcome);
    }
    CheckFlushes();
  });
}

void Producer::Impl::CompleteBatch(std::unique_ptr<ProducerBatch> batch, Errc error,
                                   Offset base_offset) {
  std::vector<std::pair<uint64_t, SendOutcome>> outcomes;
  for (size_t i = 0; i < batch->record_ids.size(); ++i) {
    SendOutcome outcome;
    outcome.error = error;
    outcome.tp = batch->tp;
    outcome.attempts = batch->attempts;
    if (error == Errc::kNone) {
      if (base_offset != kUndefinedOffset) outcome.offset = base_offset + static_cast<int64_t>(i);
    } else {
      outcome.maybe_written = batch->maybe_written;
    }
    outcomes.emplace_back(batch->record_ids[i], outcome);
  }
  Deliver(std::move(outcomes));
}

void Producer::Impl::CheckFlushes() {
  for (auto it = flushes.begin(); it != flushes.end();) {
    if (!callbacks.empty() && callbacks.begin()->first <= it->first) {
      ++it;
      continue;
    }
    std::function<void()> done = std::move(it->second);
    it = flushes.erase(it);
    accumulator.EndFlush();
    if (done) done();
  }
}

void Producer::Impl::ExpireWaiting(int64_t now_ms) {
  std::vector<std::pair<uint64_t, SendOutcome>> outcomes;
  for (auto it = waiting.begin(); it != waiting.end();) {
    if (it->deadline_ms > now_ms) {
      ++it;
      continue;
    }
    // Kafka: TimeoutException "Failed to update metadata after max.block.ms".
    SendOutcome outcome;
    outcome.error = Errc::kRequestTimedOut;
    outcomes.emplace_back(it->id, outcome);
    it = waiting.erase(it);
  }
  if (!outcomes.empty()) Deliver(std::move(outcomes));
}

void Producer::Impl::ExpireBatches(int64_t now_ms) {
  bool reset_producer_id = false;
  for (std::unique_ptr<ProducerBatch>& batch : accumulator.Expire(now_ms)) {
    Emit(seams.events, ev::kBatchExpired,
         {{field::kTopic, batch->tp.topic},
          {field::kPartition, batch->tp.partition.value()},
          {field::kRecords, batch->record_count()}});
    // Kafka 2.0's Sender.sendProducerData: an expired batch that was sent may or may not have
    // been written; no new batch of its partition is drained until the ones after it say which
    // (markSequenceUnresolved). Before 2.1 only queued batches expire, and a queued batch with a
    // sequence is one "in retry"; from 2.1 in-flight ones expire too, which were sent as well.
    // Kafka 0.11.0's Sender.sendProducerData resets the producer id instead, once the expired
    // batches have failed (needsTransactionStateReset).
    if (config.enable_idempotence && batch->has_sequence() &&
        accumulator.HasCurrentProducerId(*batch)) {
      if (config.release < KafkaRelease::k1_0) {
        reset_producer_id = true;
      } else {
        accumulator.MarkSequenceUnresolved(batch->tp);
      }
    }
    CompleteBatch(std::move(batch), Errc::kRequestTimedOut, kUndefinedOffset);
  }
  if (reset_producer_id) accumulator.ResetProducerId();
}

// ---- Metadata -----------------------------------------------------------------------------------

std::optional<BrokerId> Producer::Impl::LeaderOf(const TopicPartition& tp) const {
  if (last_topic == nullptr || last_topic->first != tp.topic) {
    auto topic = topics.find(tp.topic);
    if (topic == topics.end()) return std::nullopt;
    last_topic = &*topic;
  }
  const std::vector<std::optional<BrokerId>>& leaders = last_topic->second.leaders;
  const int32_t partition = tp.partition.value();
  if (partition < 0 || static_cast<size_t>(partition) >= leaders.size()) return std::nullopt;
  return leaders[static_cast<size_t>(partition)];
}

// Kafka's leastLoadedNode, simplified: the brokers of the last answer (else the bootstrap
// servers) in turn, skipping those without a free slot, and those whose connection was closed
// by a timeout or a disconnect while another one is available.
std::optional<std::string> Producer::Impl::NextPeer() {
  std::vector<std::string> peers;
  for (const auto& [id, host] : brokers) peers.push_back(host);
  if (peers.empty()) peers = config.bootstrap_servers;
  std::optional<std::string> fallback;
  for (size_t i = 0; i < peers.size(); ++i) {
    const std::string& peer = peers[next_peer++ % peers.size()];
    if (!network->Ready(peer)) continue;
    if (!reconnecting.count(peer)) return peer;
    if (!fallback) fallback = peer;
  }
  return fallback;
}

void Producer::Impl::MaybeSendMetadata(int64_t now_ms) {
  if (metadata_in_flight || topics_in_use.empty() || now_ms < next_metadata_attempt_ms) return;
  std::optional<std::string> peer = NextPeer();
  if (!peer) return;  // on_ready wakes us
  MetadataRequest request;
  request.topics = std::vector<std::string>(topics_in_use.begin(), topics_in_use.end());
  metadata_in_flight = true;
  metadata_needed = false;
  next_metadata_attempt_ms = now_ms + config.retry_backoff_ms;  // metadata refresh backoff
  ++counters.metadata_requests;
  std::weak_ptr<int> alive = life;
  network->Send(*peer, std::move(request), [this, alive, peer = *peer](Result<Message> result) {
    if (alive.expired()) return;
    metadata_in_flight = false;
    const MetadataResponse* response =
        result.ok() ? std::get_if<MetadataResponse>(&*result) : nullptr;
    if (response == nullptr) {
      last_metadata_error = result.ok() ? Errc::kUnknownServerError : result.status().code();
      metadata_needed = true;
      if (!result.ok()) reconnecting.insert(peer);
      // Kafka's client forgets a node it cannot reach until metadata lists it again.
      for (auto it = brokers.begin(); it != brokers.end(); ++it) {
        if (it->second == peer) {
          brokers.erase(it);
          break;
        }
      }
    } else {
      OnMetadata(*response);
    }
    Wakeup();
  });
}

void Producer::Impl::OnMetadata(const MetadataResponse& response) {
  last_metadata_ms = NowMs();
  last_topic = nullptr;
  ++leaders_generation;
  reconnecting.clear();  // reconnects to whichever broker leads now
  brokers.clear();
  for (const BrokerEndpoint& broker : response.brokers) brokers[broker.node_id] = broker.host;
  nlohmann::ordered_json leaders = nlohmann::ordered_json::object();
  for (const TopicMetadata& topic : response.topic_metadata) {
    if (topic.error_code != Errc::kNone) {
      last_metadata_error = topic.error_code;
      topics.erase(topic.topic);
      metadata_needed = true;
      continue;
    }
    TopicInfo info;
    info.partitions = static_cast<int32_t>(topic.partition_metadata.size());
    std::vector<PartitionMetadata> partitions = topic.partition_metadata.get();
    std::sort(partitions.begin(), partitions.end(),
              [](const auto& a, const auto& b) { return a.partition < b.partition; });
    nlohmann::ordered_json topic_leaders = nlohmann::ordered_json::array();
    for (const PartitionMetadata& partition : partitions) {
      const bool has_leader = partition.leader != kNoBroker && brokers.count(partition.leader);
      if (has_leader) {
        const auto index = static_cast<size_t>(partition.partition.value());
        if (index >= info.leaders.size()) info.leaders.resize(index + 1);
        info.leaders[index] = partition.leader;
        info.available.push_back(partition.partition);
      } else {
        last_metadata_error = Errc::kLeaderNotAvailable;
      }
      topic_leaders.push_back(has_leader ? partition.leader.value() : -1);
    }
    leaders[topic.topic] = std::move(topic_leaders);
    if (info.partitions == 0) {
      topics.erase(topic.topic);
      metadata_needed = true;
      continue;
    }
    topics[topic.topic] = std::move(info);
  }
  nlohmann::ordered_json broker_ids = nlohmann::ordered_json::array();
  for (const auto& [id, host] : brokers) broker_ids.push_back(id.value());
  Emit(seams.events, ev::kMetadataUpdate,
       {{field::kBrokers, broker_ids}, {field::kTopics, leaders}});

  // Records that waited for their topic, in send order.
  std::deque<WaitingRecord> still_waiting;
  for (WaitingRecord& w : waiting) {
    if (topics.count(w.record.topic)) {
      Append(w.id, std::move(w.record));
    } else {
      still_waiting.push_back(std::move(w));
    }
  }
  waiting = std::move(still_waiting);
}

// ---- Idempotence --------------------------------------------------------------------------------

void Producer::Impl::MaybeInitProducerId(int64_t now_ms) {
  if (init_pid_in_flight || now_ms < next_init_pid_attempt_ms) return;
  std::optional<std::string> peer = NextPeer();
  if (!peer) return;
  init_pid_in_flight = true;
  next_init_pid_attempt_ms = now_ms + config.retry_backoff_ms;
  std::weak_ptr<int> alive = life;
  network->Send(*peer, InitProducerIdRequest{}, [this, alive](Result<Message> result) {
    if (alive.expired()) return;
    init_pid_in_flight = false;
    const auto* response = result.ok() ? std::get_if<InitProducerIdResponse>(&*result) : nullptr;
    if (response != nullptr && response->error_code == Errc::kNone &&
        response->producer_id != kNoProducerId) {
      accumulator.SetProducerIdAndEpoch(response->producer_id, response->producer_epoch);
      Emit(seams.events, ev::kProducerId,
           {{field::kProducerId, response->producer_id.value()},
            {field::kEpoch, response->producer_epoch.value()}});
    }
    Wakeup();  // else: again after retry.backoff.ms
  });
}

// ---- Produce ------------------------------------------------------------------------------------

void Producer::Impl::SendProduce(BrokerId node, const std::string& host,
                                 std::vector<ProducerBatch*> batches) {
  ProduceRequest request;
  request.acks = config.acks;
  request.timeout_ms = config.request_timeout_ms;
  std::vector<BatchId> ids;
  for (ProducerBatch* batch : batches) {
    BatchSpec spec;
    spec.producer_id = batch->producer_id;
    spec.producer_epoch = batch->producer_epoch;
    spec.base_sequence = batch->base_sequence;
    request.topic_data.push_back(
        ProducePartitionData{batch->tp, EncodeBatch(spec, batch->records)});
    ids.push_back(batch->id);
    ++counters.batches_sent;
    Emit(seams.events, ev::kProduceBatch,
         {{field::kTopic, batch->tp.topic},
          {field::kPartition, batch->tp.partition.value()},
          {field::kAttempt, batch->attempts},
          {field::kRecords, batch->record_count()},
          {field::kBaseSequence, batch->base_sequence.value()},
          {field::kBroker, node.value()}});
  }
  if (config.acks == 0) {
    // No answer will come: each batch is done once sent, offset unknown (Kafka: -1).
    network->Send(host, std::move(request), nullptr);
    for (BatchId id : ids) {
      CompleteBatch(accumulator.Complete(id), Errc::kNone, kUndefinedOffset);
    }
    return;
  }
  std::weak_ptr<int> alive = life;
  network->Send(host, std::move(request), [this, alive, ids, host](Result<Message> result) {
    if (alive.expired()) return;
    OnProduceResponse(ids, host, std::move(result));
    Wakeup();
  });
}

void Producer::Impl::OnProduceResponse(const std::vector<BatchId>& ids, const std::string& host,
                                       Result<Message> result) {
  const ProduceResponse* response = result.ok() ? std::get_if<ProduceResponse>(&*result) : nullptr;
  // Kafka closes a connection whose request timed out (NetworkClient.handleTimedOutRequests:
  // the NetworkClient failed the other requests to `host` already) and asks for metadata; the
  // queued batches wait for the answer instead of following the stale leader onto a new
  // connection to the same dead host.
  if (response == nullptr) {
    metadata_needed = true;
    if (!result.ok()) reconnecting.insert(host);
  }
  for (BatchId id : ids) {
    ProducerBatch* batch = accumulator.Find(id);
    if (batch == nullptr || !batch->in_flight) continue;  // expired meanwhile
    if (response == nullptr) {
      // Timed out or lost with the connection: the attempt may have been appended.
      batch->maybe_written = true;
      const Errc error = result.ok() ? Errc::kUnknownServerError : result.status().code();
      OnBatchResult(id, error, kUndefinedOffset, kUndefinedOffset);
      continue;
    }
    auto it = std::find_if(response->responses.begin(), response->responses.end(),
                           [&](const ProducePartitionResponse& r) { return r.tp == batch->tp; });
    if (it == response->responses.end()) {
      OnBatchResult(id, Errc::kUnknownServerError, kUndefinedOffset, kUndefinedOffset);
      continue;
    }
    if (MayFollowAnAppend(it->error_code, config.acks)) {
      batch->maybe_written = true;  // the leader may have appended before it answered this
    }
    OnBatchResult(id, it->error_code, it->base_offset, it->log_start_offset);
  }
}

// Kafka 2.0's Sender.completeBatch (with 2.1's delivery timeout: a batch past it is not retried;
// before 2.1, Sender.canRetry counts attempts only).
void Producer::Impl::OnBatchResult(BatchId id, Errc error, Offset base_offset,
                                   Offset log_start_offset) {
  ProducerBatch& batch = *accumulator.Find(id);
  const int64_t now_ms = NowMs();
  const bool idempotent = config.enable_idempotence;
  const bool in_time = !DeliveryTimeoutApplies(config.release) ||
                       now_ms - batch.created_ms < config.delivery_timeout_ms;
  if (error == Errc::kNone || (idempotent && error == Errc::kDuplicateSequenceNumber)) {
    accumulator.OnAcked(batch, base_offset);
    CompleteBatch(accumulator.Complete(id), Errc::kNone, base_offset);
    return;
  }
  batch.last_error = error;
  if (NeedsMetadata(error)) metadata_needed = true;
  const bool attempts_left = batch.attempts <= config.retries;
  const bool can_retry =
      in_time && attempts_left &&
      (IsRetriable(error) ||
       (idempotent && batch.has_sequence() && CanRetrySequenced(batch, error, log_start_offset)));
  if (can_retry) {
    if (idempotent && batch.has_sequence() && !accumulator.HasCurrentProducerId(batch)) {
      // The producer id changed since the batch was sent: a retry under the old id could be
      // refused or written, under the new one written twice. Kafka drops it ("Attempted to retry
      // sending a batch but the producer id changed ... This batch will be dropped").
      FailBatch(id, Errc::kOutOfOrderSequenceNumber, /*adjust_sequences=*/false);
      return;
    }
    ++counters.retries;
    Emit(seams.events, ev::kProduceRetry,
         {{field::kTopic, batch.tp.topic},
          {field::kPartition, batch.tp.partition.value()},
          {field::kAttempt, batch.attempts},
          {field::kError, std::string(ErrcName(error))},
          {field::kBackoffMs, config.retry_backoff_ms}});
    accumulator.Reenqueue(id, now_ms);
    return;
  }
  if (!in_time && idempotent && batch.has_sequence() && accumulator.HasCurrentProducerId(batch)) {
    // Out of time rather than refused: as an expiry, its fate decides the partition's sequences.
    accumulator.MarkSequenceUnresolved(batch.tp);
    FailBatch(id, error, /*adjust_sequences=*/false);
    return;
  }
  // Only a batch that had retries left was certainly refused before any append: after the last
  // one, Kafka does not know whether the sequence was taken and leaves the numbers alone.
  FailBatch(id, error, /*adjust_sequences=*/attempts_left);
}

bool Producer::Impl::CanRetrySequenced(const ProducerBatch& batch, Errc error,
                                       Offset log_start_offset) {
  // 0.11.0's Sender.canRetry retries retriable errors alone: OUT_OF_ORDER_SEQUENCE_NUMBER fails
  // the batch and resets the producer id (failBatch); TransactionManager.canRetry is 1.0's.
  if (config.release < KafkaRelease::k1_0) return false;
  if (!accumulator.HasCurrentProducerId(batch)) return false;
  if (error == Errc::kOutOfOrderSequenceNumber && !accumulator.HasUnresolvedSequence(batch.tp) &&
      (batch.sequence_reset || !accumulator.IsNextSequence(batch.tp, batch.base_sequence))) {
    // Not the next batch the broker expects: an earlier one failed and this one follows it.
    return true;
  }
  if (error == Errc::kUnknownProducerId) {
    if (log_start_offset == kUndefinedOffset) return true;  // asked again until it is known
    if (batch.sequence_reset) return true;
    if (accumulator.LastAckedOffset(batch.tp) < log_start_offset) {
      // Retention removed the producer's records, and with them the broker's memory of it.
      accumulator.StartSequencesAtBeginning(batch.tp);
      return true;
    }
  }
  return false;
}

void Producer::Impl::FailBatch(BatchId id, Errc error, bool adjust_sequences) {
  std::unique_ptr<ProducerBatch> batch = accumulator.Complete(id);
  if (config.enable_idempotence && batch->has_sequence()) {
    const bool current = accumulator.HasCurrentProducerId(*batch);
    if (current &&
        (error == Errc::kOutOfOrderSequenceNumber || error == Errc::kUnknownProducerId)) {
      // "This indicates data loss on the broker": the sequences of every partition start over
      // under a new producer id. Batches already sent keep their old id (RecordAccumulator).
      accumulator.ResetProducerId();
    } else if (current && adjust_sequences) {
      accumulator.AdjustSequencesAfterFailedBatch(*batch);
    }
  }
  CompleteBatch(std::move(batch), error, kUndefinedOffset);
}

// ---- Producer -----------------------------------------------------------------------------------

Producer::Producer(ProducerConfig config, ProducerSeams seams)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(seams))) {}

Producer::~Producer() {
  if (impl_->wake_timer != 0) impl_->seams.timers.Cancel(impl_->wake_timer);
}

void Producer::Send(ProducerRecord record, SendCallback callback) {
  Impl& p = *impl_;
  KSIM_CHECK_MSG(!p.closed, "Send after Close");
  const uint64_t id = p.next_record_id++;
  ++p.counters.records_sent;
  p.callbacks.emplace(id, std::move(callback));
  p.topics_in_use.insert(record.topic);
  if (record.timestamp_ms == kNoTimestamp) record.timestamp_ms = p.NowMs();
  if (p.topics.count(record.topic) && p.waiting.empty()) {
    p.Append(id, std::move(record));
  } else {
    // Kafka's waitOnMetadata: the record waits for its topic's partitions, max.block.ms at most.
    p.metadata_needed = true;
    // block.on.buffer.full=true (0.9.0 to 0.10.2) blocks for ever: Long.MAX_VALUE.
    const int64_t now_ms = p.NowMs();
    const int64_t deadline_ms =
        p.config.max_block_ms > INT64_MAX - now_ms ? INT64_MAX : now_ms + p.config.max_block_ms;
    p.waiting.push_back(Impl::WaitingRecord{id, std::move(record), deadline_ms});
  }
  p.Wakeup();
}

void Producer::Flush(std::function<void()> done) {
  Impl& p = *impl_;
  p.accumulator.BeginFlush();
  p.flushes.emplace_back(p.next_record_id - 1, std::move(done));
  p.Later(0, [&p] { p.CheckFlushes(); });
  p.Wakeup();
}

void Producer::Close(std::function<void()> done) {
  Impl& p = *impl_;
  KSIM_CHECK_MSG(!p.closed, "Close twice");
  p.closed = true;
  p.accumulator.Close();
  Flush(std::move(done));
}

int64_t Producer::pending() const { return static_cast<int64_t>(impl_->callbacks.size()); }

Sequence Producer::LastAckedSequence(const TopicPartition& tp) const {
  return impl_->accumulator.LastAckedSequence(tp);
}

std::optional<PendingBatchInfo> Producer::OldestPendingBatch() const {
  const ProducerBatch* batch = impl_->accumulator.OldestBatch();
  if (batch == nullptr) return std::nullopt;
  return PendingBatchInfo{.tp = batch->tp,
                          .records = batch->record_count(),
                          .base_sequence = batch->base_sequence,
                          .attempts = batch->attempts,
                          .last_error = batch->last_error};
}

std::string PendingBatchInfo::Describe() const {
  std::string text = ToString(tp) + "'s batch of " + std::to_string(records) +
                     (records == 1 ? " record" : " records");
  if (base_sequence != kNoSequence) text += ", sequence " + std::to_string(base_sequence.value());
  text += ", sent " + std::to_string(attempts) + (attempts == 1 ? " time" : " times");
  if (last_error != Errc::kNone) text += ", last answered " + std::string(ErrcName(last_error));
  return text;
}

const ProducerConfig& Producer::config() const { return impl_->config; }
ProducerId Producer::producer_id() const { return impl_->accumulator.producer_id(); }
ProducerEpoch Producer::producer_epoch() const { return impl_->accumulator.producer_epoch(); }
const ProducerCounters& Producer::counters() const { return impl_->counters; }

}  // namespace ksim
