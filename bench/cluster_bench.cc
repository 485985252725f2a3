// Simulated cluster throughput: records produced and acknowledged per second of real time
// through a whole simulated cluster (3 brokers, ZooKeeper, the controller, replication over the
// virtual network onto virtual disks, the invariant checker after every event), acks=1 and
// acks=all, one record per request with one request in flight (tests/support/sim/cluster_client.h).
// Baseline, measured in the same run: the same records appended one batch at a time to one Log on
// a VirtualDisk: what the leader's storage engine alone does per record. The ratio is the price
// of simulating everything else (three replicas, a dozen network messages per record, purgatory,
// fetch long polls, ZooKeeper pings) over one replica's append.
// Setup (starting the cluster, creating the topic) and teardown are not timed.
// Run: build/bench/cluster_bench (figures in docs/BENCHMARKS.md).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench_cluster.h"
#include "core/base/check.h"
#include "core/base/random.h"
#include "core/record/record_batch.h"
#include "core/storage/log.h"
#include "sim/cluster/cluster.h"
#include "sim/kernel/event_loop.h"
#include "sim/kernel/trace.h"
#include "sim/world/virtual_disk.h"
#include "sim/world/world.h"
#include "tests/support/sim/cluster_client.h"

namespace ksim::sim {
namespace {

constexpr int32_t kRecordsPerRun = 2000;
constexpr TimeUs kSecondUs = 1'000'000;

Bytes Value(int64_t n) {
  const std::string text = "v-" + std::to_string(n);
  return Bytes(text.begin(), text.end());
}

void BM_LogAppendBaseline(benchmark::State& state) {
  int64_t records = 0;
  for (auto _ : state) {
    VirtualDisk disk(RandomStream(1));
    EventLoop clock;
    KSIM_CHECK(disk.CreateDir("/kafka-logs").ok());
    LogConfig config;  // Kafka's 10 MiB index, as the simulated cluster's brokers
    Result<std::unique_ptr<Log>> log = Log::Open(disk, clock, "/kafka-logs/t-0", config);
    KSIM_CHECK(log.ok());
    for (int32_t i = 0; i < kRecordsPerRun; ++i) {
      RecordInput record;
      record.value = Value(i);
      Bytes batch = EncodeBatch(BatchSpec{}, std::span<const RecordInput>(&record, 1));
      Result<LogAppendInfo> appended =
          (*log)->AppendAsLeader(MutableByteView(batch.data(), batch.size()), LeaderEpoch(0));
      KSIM_CHECK(appended.ok());
      ++records;
    }
  }
  state.counters["records_per_s"] =
      benchmark::Counter(static_cast<double>(records), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_LogAppendBaseline)->Unit(benchmark::kMillisecond);

void BM_ClusterProduce(benchmark::State& state) {
  const int16_t acks = static_cast<int16_t>(state.range(0));
  int64_t records = 0;
  int64_t events = 0;
  for (auto _ : state) {
    // Not timed: building the world, starting the cluster, creating the topic.
    state.PauseTiming();
    BenchCluster bench = StartBenchCluster("cluster-bench");
    std::unique_ptr<World>& world = bench.world;
    std::unique_ptr<Cluster>& cluster = bench.cluster;
    ksim::testing::ClusterClientOptions client_options;
    client_options.bootstrap = {"broker-1", "broker-2", "broker-3"};
    auto client = std::make_unique<ksim::testing::ClusterClient>(*world, "p1", client_options);
    const TopicPartition tp{"t", PartitionId(0)};
    const uint64_t events_before = world->loop().events_executed();
    state.ResumeTiming();

    client->Produce(tp, acks, kRecordsPerRun);
    KSIM_CHECK(cluster->RunUntil([&] { return client->idle(); }, 3600 * kSecondUs));

    state.PauseTiming();
    events += static_cast<int64_t>(world->loop().events_executed() - events_before);
    records += kRecordsPerRun;
    client.reset();
    cluster.reset();
    world.reset();
    state.ResumeTiming();
  }
  state.counters["records_per_s"] =
      benchmark::Counter(static_cast<double>(records), benchmark::Counter::kIsRate);
  state.counters["events_per_record"] =
      benchmark::Counter(static_cast<double>(events) / static_cast<double>(records));
}
BENCHMARK(BM_ClusterProduce)->Arg(1)->Arg(-1)->ArgName("acks")->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ksim::sim

BENCHMARK_MAIN();
