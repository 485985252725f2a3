// Fixture for broker tests: a sim::World with a sim::Cluster (ZooKeeper, brokers, admin) and a
// client node "c1" that talks to brokers through its own NetworkClient over a SimTransport.
// Requests are synchronous wrappers that run the world until the answer arrives (or a bound of
// virtual time passes); the trace is kept in memory so tests can look at the brokers' events.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/protocol/messages.h"
#include "core/protocol/network_client.h"
#include "core/record/record_batch.h"
#include "core/server/broker.h"
#include "sim/cluster/cluster.h"
#include "sim/kernel/trace.h"
#include "sim/world/sim_transport.h"
#include "sim/world/world.h"

namespace ksim::sim::testing {

inline constexpr TimeUs kSecondUs = 1'000'000;

inline Bytes MakeBatch(int records, const std::string& prefix = "v") {
  std::vector<RecordInput> inputs;
  for (int i = 0; i < records; ++i) {
    RecordInput input;
    input.timestamp_ms = 1000 + i;
    input.value = ToBytes(prefix + std::to_string(i));
    inputs.push_back(std::move(input));
  }
  return EncodeBatch(BatchSpec{}, inputs);
}

// Every record in a fetched buffer (whole batches only), by offset.
inline std::vector<Record> RecordsIn(const Bytes& buffer) {
  std::vector<Record> out;
  BatchIterator batches(buffer);
  while (std::optional<BatchIterator::Item> batch = batches.Next()) {
    Result<std::vector<Record>> records = DecodeRecords(batch->bytes);
    if (!records.ok()) break;
    for (Record& record : *records) out.push_back(std::move(record));
  }
  return out;
}

class BrokerClusterTest : public ::testing::Test {
 protected:
  explicit BrokerClusterTest(uint64_t seed = 7)
      : world_(seed,
               TraceWriter::ToMemory(TraceHeader{"broker_test", "base", seed, TraceLevel::kState}),
               WorldOptions{LinkSpec{1000, 3000, 0, 0}, NetworkOptions{}}) {}

  // Builds and starts the cluster, adds the client, waits until every broker is registered.
  void StartCluster(ClusterOptions options) {
    Result<std::unique_ptr<Cluster>> cluster = Cluster::Create(world_, std::move(options));
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(cluster).value();
    ASSERT_TRUE(world_.AddNode("c1").ok());
    transport_ = std::make_unique<SimTransport>(world_.network(), "c1");
    transport_->Attach();
    client_ =
        std::make_unique<NetworkClient>(*transport_, world_.node("c1"), NetworkClient::Handlers{});
    ASSERT_TRUE(cluster_->Start().ok());
    ASSERT_TRUE(cluster_->RunUntil(
        [&] {
          for (BrokerId id : cluster_->broker_ids()) {
            Broker* broker = cluster_->broker(id);
            if (broker == nullptr || broker->state() != BrokerState::kRunning) return false;
          }
          return cluster_->ActiveController() != kNoBroker;
        },
        60 * kSecondUs));
  }

  // Where an answer lands when it comes.
  using Answer = std::shared_ptr<std::optional<Result<ksim::Message>>>;

  // Sends `request` to `node` once the client is ready for it (running up to `max_us`) and
  // returns without waiting for the answer (a parked fetch): it lands in the result. Null when
  // the client never got ready.
  Answer Post(const std::string& node, ksim::Message request, TimeUs max_us = 60 * kSecondUs) {
    if (!cluster_->RunUntil([&] { return client_->Ready(node); }, max_us)) return nullptr;
    auto out = std::make_shared<std::optional<Result<ksim::Message>>>();
    client_->Send(node, std::move(request),
                  [out](Result<ksim::Message> response) { out->emplace(std::move(response)); });
    return out;
  }

  // Sends `request` to `node` and runs until the answer (nullopt when none came in `max_us`).
  std::optional<Result<ksim::Message>> Call(const std::string& node, ksim::Message request,
                                            TimeUs max_us = 60 * kSecondUs) {
    Answer out = Post(node, std::move(request), max_us);
    if (out == nullptr) return std::nullopt;
    cluster_->RunUntil([&] { return out->has_value(); }, max_us);
    return std::move(*out);
  }

  template <class Response>
  Response CallFor(const std::string& node, ksim::Message request, TimeUs max_us = 60 * kSecondUs) {
    std::optional<Result<ksim::Message>> answer = Call(node, std::move(request), max_us);
    if (!answer.has_value()) {
      ADD_FAILURE() << "no answer from " << node;
      return Response{};
    }
    if (!answer->ok()) {
      ADD_FAILURE() << "request failed: " << answer->status().ToString();
      return Response{};
    }
    if (!std::holds_alternative<Response>(**answer)) {
      ADD_FAILURE() << "unexpected answer " << MessageKind(**answer);
      return Response{};
    }
    return std::get<Response>(std::move(**answer));
  }

  ProduceRequest MakeProduce(const TopicPartition& tp, int16_t acks, int records,
                             int32_t timeout_ms = 30000) {
    ProduceRequest request;
    request.acks = acks;
    request.timeout_ms = timeout_ms;
    request.topic_data.push_back(ProducePartitionData{tp, MakeBatch(records)});
    return request;
  }

  ProducePartitionResponse Produce(const std::string& node, const TopicPartition& tp, int16_t acks,
                                   int records, int32_t timeout_ms = 30000) {
    ProduceResponse response =
        CallFor<ProduceResponse>(node, MakeProduce(tp, acks, records, timeout_ms));
    if (response.responses.size() != 1) {
      ADD_FAILURE() << "expected one partition in the produce response";
      return ProducePartitionResponse{};
    }
    return response.responses[0];
  }

  FetchPartitionResponse ConsumerFetch(const std::string& node, const TopicPartition& tp,
                                       Offset offset, int32_t max_wait_ms = 0) {
    FetchRequest request;
    request.replica_id = kConsumerReplicaId;
    request.max_wait_ms = max_wait_ms;
    request.min_bytes = 1;
    request.partitions.push_back(FetchPartition{tp, offset, kUndefinedOffset, 1 << 20});
    FetchResponse response = CallFor<FetchResponse>(node, std::move(request));
    if (response.responses.size() != 1) {
      ADD_FAILURE() << "expected one partition in the fetch response";
      return FetchPartitionResponse{};
    }
    return response.responses[0];
  }

  Partition* PartitionOn(BrokerId id, const TopicPartition& tp) {
    Broker* broker = cluster_->broker(id);
    return broker == nullptr ? nullptr : broker->GetPartition(tp);
  }

  // Creates `topic` with one partition on `replicas` (the first leads) and waits for a leader.
  void CreateTopic(const std::string& topic, std::vector<BrokerId> replicas,
                   std::map<std::string, std::string> config = {}) {
    TopicSpec spec;
    spec.name = topic;
    spec.partitions = 1;
    spec.replication_factor = static_cast<int32_t>(replicas.size());
    spec.assignment[PartitionId(0)] = replicas;
    spec.config = std::move(config);
    Status status = cluster_->CreateTopicAndWait(std::move(spec));
    ASSERT_TRUE(status.ok()) << status.ToString();
    // Every replica heard its LeaderAndIsr.
    const TopicPartition tp{topic, PartitionId(0)};
    ASSERT_TRUE(cluster_->RunUntil(
        [&] {
          for (BrokerId id : replicas) {
            Partition* partition = PartitionOn(id, tp);
            if (partition == nullptr) return false;
            if (partition->role() !=
                (id == replicas[0] ? ReplicaRole::kLeader : ReplicaRole::kFollower)) {
              return false;
            }
          }
          return true;
        },
        30 * kSecondUs));
  }

  // The brokers' trace events named `ev`, in order.
  std::vector<nlohmann::ordered_json> Events(std::string_view ev) const {
    std::vector<nlohmann::ordered_json> events;
    std::istringstream lines(world_.trace().bytes());
    std::string line;
    std::getline(lines, line);  // header
    while (std::getline(lines, line)) {
      nlohmann::ordered_json event = nlohmann::ordered_json::parse(line);
      if (event["ev"] == ev) events.push_back(std::move(event));
    }
    return events;
  }

  World world_;
  std::unique_ptr<Cluster> cluster_;
  std::unique_ptr<SimTransport> transport_;
  std::unique_ptr<NetworkClient> client_;
};

}  // namespace ksim::sim::testing
