// ClusterClient: a small protocol-level Kafka client for simulation tests, on a node of its own
// (a SimTransport and a NetworkClient), until the real producer and consumer exist. It is
// deliberately plain, so that what a test asserts about the cluster is not hidden in client
// cleverness:
//
// - Produce: records with numbered values ("<prefix>-<n>", n = 0, 1, ...), one record per batch,
//   one request in flight at a time, in order. The partition's leader is cached from a Metadata
//   answer until a produce to it fails; it comes from a Metadata
//   request to one of the live brokers the last answer listed (the bootstrap brokers before the
//   first answer and after a failed one), the next one on each request. acks=0 requests get no
//   answer: the record's fate is kSent. Retriable errors (IsRetriable in core/base/status.h:
//   NOT_LEADER_FOR_PARTITION, NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT, ...) refresh the metadata and
//   retry after retry_backoff_us, up to `retries` times; then, or on any other error, the record is
//   kFailed with the last error. A record acked after a retry may also have been appended by an
//   earlier attempt (as Kafka's non-idempotent producer).
// - Fetch: one consumer Fetch (replica_id -1, below the HW) from the partition's leader, from an
//   offset; ReadAll fetches until the HW. Metadata: the raw answer, for availability checks.
// - Every send, ack and error is written to the trace ("send", "ack", "error" on the client's
//   node, with topic, partition, offset, key (null) and value).
//
// Ownership: borrows the World (which must outlive it); adds its node on construction. Not
// crash-aware: the node must stay up. Single-threaded.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/base/status.h"
#include "core/base/types.h"
#include "core/protocol/messages.h"
#include "core/protocol/network_client.h"
#include "sim/world/sim_transport.h"
#include "sim/world/world.h"

namespace ksim::testing {

struct ClusterClientOptions {
  std::vector<std::string> bootstrap;  // broker node names
  int32_t retries = 50;
  TimeUs retry_backoff_us = 100'000;  // retry.backoff.ms
  TimeUs request_timeout_us = 30'000'000;
  int32_t produce_timeout_ms = 30000;  // the leader's wait for acks=-1
  std::string value_prefix = "v";
};

enum class RecordFate : uint8_t { kPending, kSent, kAcked, kFailed };

struct ProducedRecord {
  int64_t number = 0;
  std::string value;
  TopicPartition tp;
  int16_t acks = 1;
  RecordFate fate = RecordFate::kPending;
  Offset offset = kUndefinedOffset;  // kAcked: where the leader appended it
  Errc error = Errc::kNone;          // kFailed: the last error
  int32_t attempts = 0;
};

struct FetchedRecord {
  Offset offset{0};
  std::string value;
};

struct FetchResult {
  Errc error = Errc::kNone;
  BrokerId leader = kNoBroker;
  Offset high_watermark = kUndefinedOffset;
  Offset log_start_offset = kUndefinedOffset;
  std::vector<FetchedRecord> records;
};

class ClusterClient {
 public:
  // Adds node `name` to the world. REQUIRES: the name is free; bootstrap is not empty.
  ClusterClient(sim::World& world, std::string name, ClusterClientOptions options);
  ~ClusterClient();
  ClusterClient(const ClusterClient&) = delete;
  ClusterClient& operator=(const ClusterClient&) = delete;

  // Queues `count` records for `tp` with `acks`; they are sent in order.
  void Produce(const TopicPartition& tp, int16_t acks, int32_t count);
  // Nothing queued or in flight (every record has its fate, metadata and fetches answered).
  bool idle() const;
  const std::vector<ProducedRecord>& records() const { return records_; }
  std::vector<const ProducedRecord*> Acked() const;
  std::vector<const ProducedRecord*> Failed() const;

  // One Metadata request for `topic` to a bootstrap broker (the next one on each call).
  void Metadata(const std::string& topic, std::function<void(Result<MetadataResponse>)> done);
  // One consumer fetch of `tp` from `offset` at the partition's current leader.
  void Fetch(const TopicPartition& tp, Offset offset, std::function<void(FetchResult)> done);
  // Any request to `peer`, sent now or, while its in-flight slots are full, once one frees up
  // (requests to one peer keep their order). `done` hears the answer or the transport's error.
  void SendRequest(const std::string& peer, Message request, NetworkClient::ResponseCallback done);

  const std::string& name() const { return name_; }

 private:
  void Pump();
  void ScheduleRetry();
  void SendProduce(ProducedRecord& record, BrokerId leader, const std::string& host);
  void OnProduceError(ProducedRecord& record, Errc error);
  // Asks metadata and calls `done` with the leader's id and host (kNoBroker and the error when
  // there is none).
  void FindLeader(const TopicPartition& tp,
                  std::function<void(Errc, BrokerId, const std::string&)> done);
  void Trace(std::string_view ev, const ProducedRecord& record, std::optional<Errc> error);

  sim::World& world_;
  std::string name_;
  ClusterClientOptions options_;
  sim::Node* node_ = nullptr;
  std::unique_ptr<sim::SimTransport> transport_;
  std::unique_ptr<NetworkClient> network_;
  std::vector<ProducedRecord> records_;
  std::deque<size_t> queue_;  // indexes into records_, not yet acked/failed
  bool producing_ = false;    // a produce (or its leader lookup, or a retry wait) is under way
  int32_t outstanding_ = 0;   // metadata and fetch requests of the caller's
  // Requests waiting for a free slot to their peer, in order.
  std::deque<std::tuple<std::string, Message, NetworkClient::ResponseCallback>> waiting_;
  std::map<TopicPartition, std::pair<BrokerId, std::string>> leaders_;  // cached: id, host
  std::vector<std::string> known_brokers_;  // hosts of the last Metadata answer's brokers
  size_t next_bootstrap_ = 0;
  int64_t next_number_ = 0;
};

const char* RecordFateName(RecordFate fate);

}  // namespace ksim::testing
