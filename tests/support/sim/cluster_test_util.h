// A simulated cluster for end-to-end tests: a World with an in-memory trace, a sim::Cluster on it
// (the invariant checker on), and ClusterClients to produce and read. Helpers run the loop until
// a client is idle or a condition holds, always bounded in virtual time.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/base/trace_names.h"
#include "core/protocol/messages.h"
#include "sim/cluster/cluster.h"
#include "sim/kernel/trace.h"
#include "sim/world/world.h"
#include "tests/support/sim/cluster_client.h"

namespace ksim::sim::testing {

inline constexpr TimeUs kSecondUs = 1'000'000;

// Errors after which a read is tried again (metadata from a dead broker, a moved leader).
inline bool Retriable(Errc error) {
  return error == Errc::kRequestTimedOut || error == Errc::kNetworkException ||
         error == Errc::kNotLeaderForPartition || error == Errc::kLeaderNotAvailable ||
         error == Errc::kUnknownTopicOrPartition;  // a leader not yet told by the controller
}

inline TraceHeader Header(std::string scenario, uint64_t seed) {
  TraceHeader header;
  header.scenario = std::move(scenario);
  header.variant = "base";
  header.seed = seed;
  return header;
}

class ClusterSim {
 public:
  ClusterSim(const std::string& scenario, uint64_t seed, ClusterOptions options)
      : ClusterSim(TraceWriter::ToMemory(Header(scenario, seed)), std::move(options)) {
    memory_trace_ = true;
  }
  ClusterSim(TraceWriter trace, ClusterOptions options)
      : world_(trace.header().seed, std::move(trace),
               WorldOptions{LinkSpec{1000, 3000, 0, 0}, NetworkOptions{}}) {
    Result<std::unique_ptr<Cluster>> cluster = Cluster::Create(world_, std::move(options));
    KSIM_CHECK_MSG(cluster.ok(), "Cluster::Create failed");
    cluster_ = std::move(cluster).value();
  }

  ~ClusterSim() {
    // Debugging aid: KSIM_DEBUG_TRACE_DIR=<dir> keeps each test's trace there.
    if (const char* dir = std::getenv("KSIM_DEBUG_TRACE_DIR");
        dir != nullptr && world_.trace().header().level == TraceLevel::kState) {
      const std::string path = std::string(dir) + "/" + world_.trace().header().scenario + ".jsonl";
      std::ofstream(path) << world_.trace().bytes();
    }
  }

  World& world() { return world_; }
  Cluster& cluster() { return *cluster_; }

  // Starts the brokers and waits until all are registered and a controller is active.
  ::testing::AssertionResult Start(TimeUs max_us = 30 * kSecondUs) {
    Status started = cluster_->Start();
    if (!started.ok()) return ::testing::AssertionFailure() << started.ToString();
    const size_t brokers = cluster_->broker_ids().size();
    const bool up = cluster_->RunUntil(
        [&] {
          return cluster_->ActiveController() != kNoBroker &&
                 cluster_->zookeeper().Children("/brokers/ids").size() == brokers;
        },
        max_us);
    if (!up) return ::testing::AssertionFailure() << "brokers did not register in time";
    return ::testing::AssertionSuccess();
  }

  ksim::testing::ClusterClient& AddClient(std::string name,
                                          ksim::testing::ClusterClientOptions options = {}) {
    if (options.bootstrap.empty()) {
      for (BrokerId id : cluster_->broker_ids()) options.bootstrap.push_back(node::Broker(id));
    }
    // Shorter than Kafka's 30 s so tests retry sooner; the leader's acks wait stays below the
    // request timeout (as Kafka requires of request.timeout.ms and timeout.ms), or a retry would
    // append the record a second time.
    if (options.request_timeout_us == 30'000'000) {
      options.request_timeout_us = 10 * kSecondUs;
      options.produce_timeout_ms = 7000;
    }
    clients_.push_back(
        std::make_unique<ksim::testing::ClusterClient>(world_, std::move(name), options));
    return *clients_.back();
  }

  // Produces `count` records and runs until the client has every fate.
  bool ProduceAndWait(ksim::testing::ClusterClient& client, const TopicPartition& tp, int16_t acks,
                      int32_t count, TimeUs max_us = 120 * kSecondUs) {
    client.Produce(tp, acks, count);
    return cluster_->RunUntil([&] { return client.idle(); }, max_us);
  }

  // Fetches `tp` from `from` up to the leader's HW, following the records.
  ksim::testing::FetchResult ReadAll(ksim::testing::ClusterClient& client, const TopicPartition& tp,
                                     Offset from = Offset(0), TimeUs max_us = 60 * kSecondUs) {
    ksim::testing::FetchResult all;
    Offset next = from;
    int retries = 10;
    for (int round = 0; round < 1000; ++round) {
      std::optional<ksim::testing::FetchResult> result;
      client.Fetch(tp, next, [&](ksim::testing::FetchResult r) { result = std::move(r); });
      if (!cluster_->RunUntil([&] { return result.has_value(); }, max_us)) {
        all.error = Errc::kRequestTimedOut;
        return all;
      }
      if (Retriable(result->error) && retries-- > 0) {  // e.g. a dead bootstrap broker
        cluster_->RunFor(kSecondUs / 10);               // retry.backoff.ms
        continue;
      }
      all.error = result->error;
      all.leader = result->leader;
      all.high_watermark = result->high_watermark;
      all.log_start_offset = result->log_start_offset;
      if (result->error != Errc::kNone) return all;
      for (ksim::testing::FetchedRecord& r : result->records) {
        if (r.offset < next) continue;
        next = r.offset + 1;
        all.records.push_back(std::move(r));
      }
      if (next >= result->high_watermark || result->records.empty()) return all;
    }
    return all;
  }

  // The metadata a client gets for `topic` (one request).
  Result<MetadataResponse> Metadata(ksim::testing::ClusterClient& client, const std::string& topic,
                                    TimeUs max_us = 30 * kSecondUs) {
    std::optional<Result<MetadataResponse>> answer;
    client.Metadata(topic, [&](Result<MetadataResponse> m) { answer = std::move(m); });
    if (!cluster_->RunUntil([&] { return answer.has_value(); }, max_us)) {
      return Status(Errc::kRequestTimedOut, "no metadata answer");
    }
    return std::move(*answer);
  }

  ::testing::AssertionResult NoViolations() {
    InvariantChecker* checker = cluster_->checker();
    if (checker == nullptr) return ::testing::AssertionFailure() << "checker off";
    if (checker->ok()) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << checker->Report();
  }

  // Runs until `tp` has a leader other than kNoBroker that is not `not_this`.
  bool WaitForLeader(const TopicPartition& tp, BrokerId not_this = kNoBroker,
                     TimeUs max_us = 60 * kSecondUs) {
    return cluster_->RunUntil(
        [&] {
          const BrokerId leader = cluster_->LeaderOf(tp);
          return leader != kNoBroker && leader != not_this;
        },
        max_us);
  }

  // Writes the verdict (ok = no invariant violation) and reads the in-memory trace back.
  // REQUIRES: the trace is in memory; called once.
  Trace FinishAndParse() {
    KSIM_CHECK(memory_trace_);
    const bool ok = cluster_->checker() == nullptr || cluster_->checker()->ok();
    Status finished = world_.Finish(ok, TraceFields::object());
    KSIM_CHECK(finished.ok());
    Result<Trace> trace = ParseTrace(world_.trace().bytes(), "memory");
    KSIM_CHECK_MSG(trace.ok(), "the trace does not parse");
    return std::move(trace).value();
  }

 private:
  bool memory_trace_ = false;
  World world_;
  std::unique_ptr<Cluster> cluster_;
  std::vector<std::unique_ptr<ksim::testing::ClusterClient>> clients_;
};

// The events named `ev` (on `node` when not empty).
inline std::vector<const TraceEvent*> Events(const Trace& trace, std::string_view ev,
                                             std::string_view node = "") {
  std::vector<const TraceEvent*> out;
  for (const TraceEvent& e : trace.events) {
    if (e.ev == ev && (node.empty() || e.node == node)) out.push_back(&e);
  }
  return out;
}

// Topic `name` on brokers 1-3 with three partitions, each preferring (first assigned) another
// broker: partition 0 broker 1, 1 broker 2, 2 broker 3.
inline TopicSpec OnePartitionPreferringEachBroker(std::string name) {
  TopicSpec topic;
  topic.name = std::move(name);
  topic.assignment = {{PartitionId(0), {BrokerId(1), BrokerId(2), BrokerId(3)}},
                      {PartitionId(1), {BrokerId(2), BrokerId(3), BrokerId(1)}},
                      {PartitionId(2), {BrokerId(3), BrokerId(1), BrokerId(2)}}};
  return topic;
}

// Values of the records, in offset order.
inline std::vector<std::string> Values(const std::vector<ksim::testing::FetchedRecord>& records) {
  std::vector<std::string> values;
  for (const auto& r : records) values.push_back(r.value);
  return values;
}

}  // namespace ksim::sim::testing
