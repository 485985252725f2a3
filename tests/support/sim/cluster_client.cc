#include "tests/support/sim/cluster_client.h"

#include <span>
#include <utility>
#include <variant>

#include "core/base/bytes.h"
#include "core/base/check.h"
#include "core/record/record_batch.h"

namespace ksim::testing {

namespace {

std::string AsString(const std::optional<Bytes>& bytes) {
  return bytes ? std::string(bytes->begin(), bytes->end()) : std::string();
}

}  // namespace

const char* RecordFateName(RecordFate fate) {
  switch (fate) {
    case RecordFate::kPending:
      return "pending";
    case RecordFate::kSent:
      return "sent";
    case RecordFate::kAcked:
      return "acked";
    case RecordFate::kFailed:
      return "failed";
  }
  return "unknown";
}

ClusterClient::ClusterClient(sim::World& world, std::string name, ClusterClientOptions options)
    : world_(world), name_(std::move(name)), options_(std::move(options)) {
  KSIM_CHECK(!options_.bootstrap.empty());
  Result<sim::Node*> node = world_.AddNode(name_);
  KSIM_CHECK_MSG(node.ok(), "the client node name is taken");
  node_ = *node;
  transport_ = std::make_unique<sim::SimTransport>(world_.network(), name_);
  transport_->Attach();
  NetworkClient::Handlers handlers;
  handlers.on_ready = [this](std::string_view peer) {
    // Requests that waited for a slot to `peer`, in order.
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      auto& [to, request, done] = *it;
      if (to != peer || !network_->Ready(to)) {
        ++it;
        continue;
      }
      network_->Send(to, std::move(request), std::move(done));
      it = waiting_.erase(it);
    }
  };
  NetworkClientOptions network_options;
  network_options.request_timeout_us = options_.request_timeout_us;
  network_ =
      std::make_unique<NetworkClient>(*transport_, *node_, std::move(handlers), network_options);
}

ClusterClient::~ClusterClient() = default;

void ClusterClient::Produce(const TopicPartition& tp, int16_t acks, int32_t count) {
  for (int32_t i = 0; i < count; ++i) {
    ProducedRecord record;
    record.number = next_number_++;
    record.value = options_.value_prefix + "-" + std::to_string(record.number);
    record.tp = tp;
    record.acks = acks;
    queue_.push_back(records_.size());
    records_.push_back(std::move(record));
  }
  Pump();
}

bool ClusterClient::idle() const {
  return queue_.empty() && !producing_ && outstanding_ == 0 && waiting_.empty();
}

std::vector<const ProducedRecord*> ClusterClient::Acked() const {
  std::vector<const ProducedRecord*> out;
  for (const ProducedRecord& r : records_) {
    if (r.fate == RecordFate::kAcked) out.push_back(&r);
  }
  return out;
}

std::vector<const ProducedRecord*> ClusterClient::Failed() const {
  std::vector<const ProducedRecord*> out;
  for (const ProducedRecord& r : records_) {
    if (r.fate == RecordFate::kFailed) out.push_back(&r);
  }
  return out;
}

void ClusterClient::SendRequest(const std::string& peer, Message request,
                                NetworkClient::ResponseCallback done) {
  if (network_->Ready(peer)) {
    network_->Send(peer, std::move(request), std::move(done));
  } else {
    waiting_.emplace_back(peer, std::move(request), std::move(done));
  }
}

// ---- Produce
// --------------------------------------------------------------------------------------

void ClusterClient::Pump() {
  if (producing_ || queue_.empty()) return;
  producing_ = true;
  const size_t index = queue_.front();
  ++records_[index].attempts;
  auto cached = leaders_.find(records_[index].tp);
  if (cached != leaders_.end()) {
    // The leader the last metadata named, until an error says otherwise (Kafka's producer).
    return SendProduce(records_[index], cached->second.first, cached->second.second);
  }
  FindLeader(records_[index].tp,
             [this, index](Errc error, BrokerId leader, const std::string& host) {
               ProducedRecord& record = records_[index];
               if (error != Errc::kNone) return OnProduceError(record, error);
               leaders_[record.tp] = {leader, host};
               SendProduce(record, leader, host);
             });
}

void ClusterClient::SendProduce(ProducedRecord& record, BrokerId /*leader*/,
                                const std::string& host) {
  RecordInput input;
  input.timestamp_ms = world_.Now() / kUsPerMs;
  input.value = ToBytes(record.value);
  ProduceRequest request;
  request.acks = record.acks;
  request.timeout_ms = options_.produce_timeout_ms;
  request.topic_data.push_back(
      ProducePartitionData{record.tp, EncodeBatch(BatchSpec{}, std::span(&input, 1))});
  Trace("send", record, std::nullopt);
  if (record.acks == 0) {
    // Never answered: the producer cannot learn the record's fate.
    network_->Send(host, std::move(request), nullptr);
    record.fate = RecordFate::kSent;
    queue_.pop_front();
    producing_ = false;
    node_->Schedule(0, [this] { Pump(); });
    return;
  }
  const size_t index = static_cast<size_t>(&record - records_.data());
  SendRequest(host, std::move(request), [this, index](Result<Message> response) {
    ProducedRecord& record = records_[index];
    if (!response.ok()) return OnProduceError(record, response.status().code());
    const auto* produce = std::get_if<ProduceResponse>(&*response);
    if (produce == nullptr) return OnProduceError(record, Errc::kUnknownServerError);
    for (const ProducePartitionResponse& partition : produce->responses) {
      if (partition.tp != record.tp) continue;
      if (partition.error_code != Errc::kNone) return OnProduceError(record, partition.error_code);
      record.fate = RecordFate::kAcked;
      record.offset = partition.base_offset;
      record.error = Errc::kNone;
      Trace("ack", record, std::nullopt);
      queue_.pop_front();
      producing_ = false;
      return Pump();
    }
    OnProduceError(record, Errc::kUnknownServerError);
  });
}

void ClusterClient::OnProduceError(ProducedRecord& record, Errc error) {
  record.error = error;
  leaders_.erase(record.tp);  // ask the metadata again
  Trace("error", record, error);
  if (IsRetriable(error) && record.attempts <= options_.retries) {
    node_->Schedule(options_.retry_backoff_us, [this] {
      producing_ = false;
      Pump();
    });
    return;
  }
  record.fate = RecordFate::kFailed;
  queue_.pop_front();
  producing_ = false;
  node_->Schedule(0, [this] { Pump(); });
}

void ClusterClient::Trace(std::string_view ev, const ProducedRecord& record,
                          std::optional<Errc> error) {
  EventFields fields{{"topic", record.tp.topic}, {"partition", record.tp.partition.value()}};
  if (record.fate == RecordFate::kAcked) fields.Add("offset", record.offset.value());
  fields.Add("key", nullptr).Add("value", record.value).Add("acks", record.acks);
  fields.Add("attempt", record.attempts);
  if (error) fields.Add("error", ErrcName(*error));
  world_.Trace(name_, ev, fields);
}

// ---- Metadata and fetch
// ---------------------------------------------------------------------------

void ClusterClient::Metadata(const std::string& topic,
                             std::function<void(Result<MetadataResponse>)> done) {
  // The live brokers the last answer listed, else the bootstrap list (as Kafka's client picks a
  // known node), the next one on every call.
  const std::vector<std::string>& peers =
      known_brokers_.empty() ? options_.bootstrap : known_brokers_;
  const std::string peer = peers[next_bootstrap_ % peers.size()];
  ++next_bootstrap_;
  MetadataRequest request;
  request.topics = std::vector<std::string>{topic};
  ++outstanding_;
  SendRequest(peer, std::move(request),
              [this, peer, done = std::move(done)](Result<Message> response) {
                --outstanding_;
                if (!response.ok()) {
                  // Not asked again until the list is exhausted (then: the bootstrap list).
                  std::erase(known_brokers_, peer);
                  return done(response.status());
                }
                const auto* metadata = std::get_if<MetadataResponse>(&*response);
                if (metadata == nullptr) {
                  return done(Status(Errc::kUnknownServerError, "not a MetadataResponse"));
                }
                known_brokers_.clear();
                for (const BrokerEndpoint& broker : metadata->brokers) {
                  known_brokers_.push_back(broker.host);
                }
                done(*metadata);
              });
}

void ClusterClient::FindLeader(const TopicPartition& tp,
                               std::function<void(Errc, BrokerId, const std::string&)> done) {
  Metadata(tp.topic, [tp, done = std::move(done)](Result<MetadataResponse> metadata) {
    if (!metadata.ok()) return done(metadata.status().code(), kNoBroker, "");
    for (const TopicMetadata& topic : metadata->topic_metadata) {
      if (topic.topic != tp.topic) continue;
      if (topic.error_code != Errc::kNone) return done(topic.error_code, kNoBroker, "");
      for (const PartitionMetadata& partition : topic.partition_metadata) {
        if (partition.partition != tp.partition) continue;
        if (partition.error_code != Errc::kNone) return done(partition.error_code, kNoBroker, "");
        if (partition.leader == kNoBroker) return done(Errc::kLeaderNotAvailable, kNoBroker, "");
        for (const BrokerEndpoint& broker : metadata->brokers) {
          if (broker.node_id == partition.leader)
            return done(Errc::kNone, broker.node_id, broker.host);
        }
        return done(Errc::kLeaderNotAvailable, kNoBroker, "");
      }
    }
    done(Errc::kUnknownTopicOrPartition, kNoBroker, "");
  });
}

void ClusterClient::Fetch(const TopicPartition& tp, Offset offset,
                          std::function<void(FetchResult)> done) {
  ++outstanding_;
  FindLeader(tp, [this, tp, offset, done = std::move(done)](Errc error, BrokerId leader,
                                                            const std::string& host) mutable {
    FetchResult result;
    result.leader = leader;
    if (error != Errc::kNone) {
      --outstanding_;
      result.error = error;
      return done(std::move(result));
    }
    FetchRequest request;
    request.max_wait_ms = 0;
    request.partitions.push_back(FetchPartition{tp, offset, kUndefinedOffset, 1 << 20});
    SendRequest(
        host, std::move(request),
        [this, tp, result = std::move(result),
         done = std::move(done)](Result<Message> response) mutable {
          --outstanding_;
          if (!response.ok()) {
            result.error = response.status().code();
            return done(std::move(result));
          }
          const auto* fetch = std::get_if<FetchResponse>(&*response);
          if (fetch == nullptr) {
            result.error = Errc::kUnknownServerError;
            return done(std::move(result));
          }
          for (const FetchPartitionResponse& partition : fetch->responses) {
            if (partition.tp != tp) continue;
            result.error = partition.error_code;
            result.high_watermark = partition.high_watermark;
            result.log_start_offset = partition.log_start_offset;
            BatchIterator batches(partition.records);
            while (std::optional<BatchIterator::Item> batch = batches.Next()) {
              Result<std::vector<Record>> decoded = DecodeRecords(batch->bytes);
              if (!decoded.ok()) break;
              for (const Record& record : *decoded) {
                result.records.push_back(FetchedRecord{record.offset, AsString(record.value)});
              }
            }
            return done(std::move(result));
          }
          result.error = Errc::kUnknownTopicOrPartition;
          done(std::move(result));
        });
  });
}

}  // namespace ksim::testing
