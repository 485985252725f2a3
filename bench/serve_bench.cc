// Requests through the wire path of one broker against the in-process path, on one simulated
// cluster, in one run (docs/BENCHMARKS.md, "ksim serve"). The same Produce request (one record,
// acks=1, to t-0's leader broker-1) is sent in a closed loop, one in flight:
// - in process: a simulated client's NetworkClient hands the struct to the virtual network, as
//   the scenario's clients do;
// - wire: the request is encoded with core/wire's codec and fed, as bytes, to the ClientGateway
//   of `ksim serve` (frame cutting, decoding, the client node, the history of what it sent,
//   in-order answers, encoding), and the answer's bytes are decoded again, as a client would.
// Both run the world unpaced (no wall clock), so the difference is the wire path's own cost;
// sockets and the real client are outside it (the served run's drift under load is measured
// with kcat, docs/BENCHMARKS.md). Setup is not timed.
// Run: build/bench/serve_bench
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench_cluster.h"
#include "core/base/check.h"
#include "core/protocol/network_client.h"
#include "core/record/record_batch.h"
#include "core/wire/codec.h"
#include "sim/check/history.h"
#include "sim/cluster/cluster.h"
#include "sim/kernel/trace.h"
#include "sim/serve/gateway.h"
#include "sim/world/sim_transport.h"
#include "sim/world/world.h"

namespace ksim::sim {
namespace {

constexpr int32_t kRequests = 2000;
constexpr TimeUs kSecondUs = 1'000'000;

ProduceRequest Produce(int32_t n) {
  RecordInput record;
  const std::string value = "v-" + std::to_string(n);
  record.value = Bytes(value.begin(), value.end());
  ProduceRequest request;
  request.acks = 1;
  request.topic_data.push_back(
      ProducePartitionData{TopicPartition{"t", PartitionId(0)},
                           EncodeBatch(BatchSpec{}, std::span<const RecordInput>(&record, 1))});
  return request;
}

struct Captured final : GatewayOutput {
  void Send(ExternalConnectionId /*connection*/, Bytes frame) override {
    answer = std::move(frame);
  }
  void Close(ExternalConnectionId /*connection*/) override { closed = true; }
  std::optional<Bytes> answer;
  bool closed = false;
};

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

void BM_WireVsInProcess(benchmark::State& state) {
  double in_process_per_s = 0;
  double wire_per_s = 0;
  for (auto _ : state) {
    BenchCluster bench = StartBenchCluster("serve-bench");
    World& world = *bench.world;
    std::unique_ptr<Cluster>& cluster = bench.cluster;

    // In process.
    KSIM_CHECK(world.AddNode("inproc").ok());
    SimTransport transport(world.network(), "inproc");
    transport.Attach();
    NetworkClient client(transport, world.node("inproc"), NetworkClient::Handlers{});
    auto start = std::chrono::steady_clock::now();
    for (int32_t i = 0; i < kRequests; ++i) {
      bool answered = false;
      client.Send("broker-1", Produce(i), [&](Result<ksim::Message> response) {
        KSIM_CHECK(response.ok());
        answered = true;
      });
      KSIM_CHECK(cluster->RunUntil([&] { return answered; }, 10 * kSecondUs));
    }
    in_process_per_s = kRequests / Seconds(std::chrono::steady_clock::now() - start);

    // The wire path.
    History history(world);
    Captured output;
    // Produce v7 is a 2.1 broker's version (a 0.10.0 one, the default, would refuse it).
    ClientGateway gateway(world, history, output, KafkaRelease::k2_1);
    for (BrokerId id : cluster->broker_ids()) gateway.Listen(id, 9091 + id.value());
    gateway.Open(1, BrokerId(1));
    start = std::chrono::steady_clock::now();
    for (int32_t i = 0; i < kRequests; ++i) {
      const Bytes frame = wire::EncodeRequest(wire::RequestHeader{0, 7, i, "bench"}, Produce(i));
      gateway.Receive(1, frame);
      KSIM_CHECK(cluster->RunUntil([&] { return output.answer.has_value(); }, 10 * kSecondUs));
      Result<ksim::Message> answer =
          wire::DecodeResponse(0, 7, ByteView(*output.answer).subspan(4));
      KSIM_CHECK(answer.ok());
      KSIM_CHECK(std::get<ProduceResponse>(*answer).responses.at(0).error_code == Errc::kNone);
      output.answer.reset();
    }
    wire_per_s = kRequests / Seconds(std::chrono::steady_clock::now() - start);
    gateway.End();
  }
  state.counters["in_process_per_s"] = in_process_per_s;
  state.counters["wire_per_s"] = wire_per_s;
  state.counters["wire_over_in_process"] = wire_per_s / in_process_per_s;
}
BENCHMARK(BM_WireVsInProcess)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
}  // namespace ksim::sim

BENCHMARK_MAIN();
