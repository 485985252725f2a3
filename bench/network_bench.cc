// Simulated network throughput: messages per second of real time, per core, for small messages
// between 3 brokers, zk and 2 clients in a full mesh, each message sent and delivered through the
// event loop. The baseline is the bare event loop doing the same closed loop of schedule + run
// with the same latency draw, so the figure for the network is its cost over the kernel's.
// Target (issue): >= 1,000,000 messages/s. Run: build-*/bench/network_bench
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/random.h"
#include "sim/kernel/event_loop.h"
#include "sim/world/network.h"
#include "sim/world/topology.h"

namespace ksim::sim {
namespace {

const std::vector<std::string> kCluster = {"broker-1", "broker-2", "broker-3", "zk", "p1", "c1"};
constexpr int kInFlight = 64;  // messages travelling at any time
constexpr int64_t kMessagesPerRun = 100'000;
constexpr TimeUs kLatencyUsMin = 100;
constexpr TimeUs kLatencyUsMax = 2'000;

// Each delivery makes the receiver send a new message to the next node round the ring (skipping
// itself) until the run's budget is spent: a closed loop with kInFlight messages in the air.
void BM_NetworkSendDeliver(benchmark::State& state) {
  EventLoop loop;
  auto topology = Topology::FullMesh(kCluster, LinkSpec{kLatencyUsMin, kLatencyUsMax, 0, 0});
  Network network(loop, *topology, RandomStream(1));
  const bool observe = state.range(0) != 0;
  uint64_t observed = 0;
  if (observe) network.SetObserver([&observed](const NetEvent&) { ++observed; });
  int64_t remaining = 0;
  uint32_t turn = 0;
  const auto node_count = static_cast<uint32_t>(kCluster.size());
  auto send_from = [&](NodeId from) {
    turn = (turn + 1) % (node_count - 1);
    const NodeId to((from.value() + 1 + turn) % node_count);
    Message message;
    message.kind = "Fetch";
    message.size_bytes = 64;
    network.Send(from, to, std::move(message));
  };
  for (uint32_t node = 0; node < node_count; ++node) {
    const NodeId self(node);
    network.Register(self, NetworkHandler{[&, self](Delivery) {
                                            if (remaining > 0) {
                                              --remaining;
                                              send_from(self);
                                            }
                                          },
                                          nullptr});
  }
  for (auto _ : state) {
    remaining = kMessagesPerRun - kInFlight;
    for (int i = 0; i < kInFlight; ++i) send_from(NodeId(static_cast<uint32_t>(i) % node_count));
    loop.RunUntilIdle(UINT64_MAX);
  }
  if (network.counters().delivered != static_cast<uint64_t>(state.iterations()) * kMessagesPerRun) {
    state.SkipWithError("not every message was delivered");
  }
  state.SetItemsProcessed(state.iterations() * kMessagesPerRun);
  state.counters["observed_events"] = static_cast<double>(observed);
}
BENCHMARK(BM_NetworkSendDeliver)
    ->Arg(0)
    ->Arg(1)
    ->ArgName("observer")
    ->Unit(benchmark::kMillisecond);

// The baseline: the same closed loop on the bare event loop, one latency draw per event.
void BM_EventLoopBaseline(benchmark::State& state) {
  EventLoop loop;
  RandomStream rng(1);
  int64_t remaining = 0;
  struct Hop {
    EventLoop* loop;
    RandomStream* rng;
    int64_t* remaining;
    void operator()() const {
      if (*remaining > 0) {
        --*remaining;
        loop->ScheduleAfter(rng->UniformInt(kLatencyUsMin, kLatencyUsMax), *this);
      }
    }
  };
  for (auto _ : state) {
    remaining = kMessagesPerRun - kInFlight;
    for (int i = 0; i < kInFlight; ++i) {
      loop.ScheduleAfter(rng.UniformInt(kLatencyUsMin, kLatencyUsMax),
                         Hop{&loop, &rng, &remaining});
    }
    loop.RunUntilIdle(UINT64_MAX);
  }
  state.SetItemsProcessed(state.iterations() * kMessagesPerRun);
}
BENCHMARK(BM_EventLoopBaseline)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ksim::sim

BENCHMARK_MAIN();
