// Simulated clients on a simulated cluster, for the delivery-semantics and consumer-group tests:
// a ClusterSim (cluster_test_util.h) plus the run's History and ProducerClient/ConsumerClient
// nodes (sim/cluster/clients.h), and helpers that read the brokers' logs back and summarise the
// history. Every wait is bounded in virtual time.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/base/trace_names.h"
#include "sim/check/history.h"
#include "sim/cluster/clients.h"
#include "tests/support/sim/cluster_test_util.h"

namespace ksim::sim::testing {

// A 3-broker cluster whose offsets topic is small (fewer partitions to elect at the first
// FindCoordinator) and whose group sessions may be short.
inline ClusterOptions ClientClusterOptions(int32_t brokers = 3) {
  ClusterOptions options;
  options.brokers = brokers;
  options.config = {{"offsets.topic.num.partitions", "3"},
                    {"offsets.topic.replication.factor", "3"},
                    {"group.min.session.timeout.ms", "1000"}};
  return options;
}

class ClientSim {
 public:
  // KSIM_CLIENT_SEED_OFFSET=<n> adds n to every seed: the same tests over other seeds.
  ClientSim(const std::string& scenario, uint64_t seed,
            ClusterOptions options = ClientClusterOptions())
      : sim_(scenario, seed + SeedOffset(), std::move(options)), history_(sim_.world()) {}

  static uint64_t SeedOffset() {
    const char* offset = std::getenv("KSIM_CLIENT_SEED_OFFSET");
    return offset == nullptr ? 0 : std::strtoull(offset, nullptr, 10);
  }

  ClusterSim& sim() { return sim_; }
  Cluster& cluster() { return sim_.cluster(); }
  World& world() { return sim_.world(); }
  History& history() { return history_; }

  ::testing::AssertionResult Start() { return sim_.Start(); }

  // Creates `topic` with the replicas of partition p at assignment[p] (empty: Kafka's spread).
  ::testing::AssertionResult CreateTopic(const std::string& topic, int32_t partitions,
                                         int32_t replication_factor,
                                         zk::ReplicaAssignment assignment = {}) {
    TopicSpec spec;
    spec.name = topic;
    spec.partitions = partitions;
    spec.replication_factor = replication_factor;
    spec.assignment = std::move(assignment);
    Status created = cluster().CreateTopicAndWait(spec);
    if (!created.ok()) return ::testing::AssertionFailure() << created.ToString();
    return ::testing::AssertionSuccess();
  }

  std::vector<std::string> Brokers() {
    std::vector<std::string> names;
    for (BrokerId id : cluster().broker_ids()) names.push_back(node::Broker(id));
    return names;
  }

  ProducerClient& AddProducer(ProducerClientOptions options) {
    if (options.bootstrap.empty()) options.bootstrap = Brokers();
    Result<std::unique_ptr<ProducerClient>> client =
        ProducerClient::Create(world(), history_, std::move(options));
    KSIM_CHECK_MSG(client.ok(), "ProducerClient::Create failed");
    producers_.push_back(std::move(client).value());
    return *producers_.back();
  }

  ConsumerClient& AddConsumer(ConsumerClientOptions options) {
    if (options.bootstrap.empty()) options.bootstrap = Brokers();
    Result<std::unique_ptr<ConsumerClient>> client =
        ConsumerClient::Create(world(), history_, std::move(options));
    KSIM_CHECK_MSG(client.ok(), "ConsumerClient::Create failed");
    consumers_.push_back(std::move(client).value());
    return *consumers_.back();
  }

  bool RunUntil(const std::function<bool()>& done, TimeUs max_us) {
    return cluster().RunUntil(done, max_us);
  }

  // The values of `tp` from log start to the leader's HW, in offset order, read with a plain
  // protocol client (a node of its own, created on first use).
  std::vector<ksim::testing::FetchedRecord> ReadLog(const TopicPartition& tp) {
    if (reader_ == nullptr) reader_ = &sim_.AddClient("log-reader");
    ksim::testing::FetchResult read = sim_.ReadAll(*reader_, tp);
    EXPECT_EQ(read.error, Errc::kNone) << "reading " << ToString(tp);
    return read.records;
  }

  // How many times each value appears in the partitions' logs.
  std::map<std::string, int> LogCounts(const std::string& topic, int32_t partitions) {
    std::map<std::string, int> counts;
    for (int32_t p = 0; p < partitions; ++p) {
      for (const auto& record : ReadLog(TopicPartition{topic, PartitionId(p)})) {
        ++counts[record.value];
      }
    }
    return counts;
  }

  // The send completion (ok/fail/info) of the record sent with `record_id`, or null.
  const HistoryOp* SendOutcomeOf(const std::string& record_id) const {
    for (const HistoryOp* invoke : history_.Select(OpFunction::kSend, OpType::kInvoke)) {
      if (invoke->record_id == record_id) return history_.CompletionOf(invoke->index);
    }
    return nullptr;
  }

  // Record ids of the sends the history says ok.
  std::vector<std::string> AckedIds(const std::string& process = "") const {
    std::vector<std::string> ids;
    for (const HistoryOp* op : history_.Select(OpFunction::kSend, OpType::kOk)) {
      if (process.empty() || op->process == process) ids.emplace_back(op->record_id);
    }
    return ids;
  }

  // (partition, offset) -> times delivered, for the deliveries of `group` (by `process` when
  // given).
  std::map<std::pair<int32_t, int64_t>, int> Deliveries(const std::string& group,
                                                        const std::string& process = "") const {
    std::map<std::pair<int32_t, int64_t>, int> out;
    for (const HistoryOp* op : history_.Select(OpFunction::kDeliver, OpType::kOk)) {
      if (op->group != group || (!process.empty() && op->process != process)) continue;
      ++out[{op->partition.value(), op->offset.value()}];
    }
    return out;
  }

  // Record ids delivered to `group`, each once.
  std::set<std::string> DeliveredIds(const std::string& group) const {
    std::set<std::string> ids;
    for (const HistoryOp* op : history_.Select(OpFunction::kDeliver, OpType::kOk)) {
      if (op->group == group) ids.emplace(op->record_id);
    }
    return ids;
  }

 private:
  ClusterSim sim_;
  History history_;
  ksim::testing::ClusterClient* reader_ = nullptr;
  std::vector<std::unique_ptr<ProducerClient>> producers_;
  std::vector<std::unique_ptr<ConsumerClient>> consumers_;
};

}  // namespace ksim::sim::testing
