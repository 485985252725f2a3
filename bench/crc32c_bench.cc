// CRC-32C throughput, against baselines measured in the same run:
//   BM_Crc32InstructionLimit  the raw crc32 (u64) instruction over the same buffer in three
//                             independent chains whose results are not combined: the ceiling
//                             any crc32-instruction implementation can reach on this CPU.
//   BM_Crc32cSingleChain      the same instruction in one dependent chain: the latency limit a
//                             naive hardware loop is stuck at.
//   BM_Crc32cHardware         crc32c::ExtendHardware (three interleaved streams + merge).
//   BM_Crc32cPortable         crc32c::ExtendPortable (slicing-by-8).
// Each reports bytes/s for 4 KiB, 64 KiB and 1 MiB buffers.
//
//   ninja -C build crc32c_bench && build/bench/crc32c_bench --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/base/crc32c.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace {

std::vector<uint8_t> MakeBuffer(size_t size) {
  std::vector<uint8_t> data(size);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (auto& b : data) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b = static_cast<uint8_t>(x);
  }
  return data;
}

void BM_Crc32cHardware(benchmark::State& state) {
  if (!ksim::crc32c::HardwareAvailable()) {
    state.SkipWithError("no SSE4.2 + PCLMULQDQ");
    return;
  }
  const std::vector<uint8_t> data = MakeBuffer(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    uint32_t crc = ksim::crc32c::ExtendHardware(0, data);
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}

void BM_Crc32cPortable(benchmark::State& state) {
  const std::vector<uint8_t> data = MakeBuffer(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    uint32_t crc = ksim::crc32c::ExtendPortable(0, data);
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}

#if defined(__x86_64__)

inline uint64_t LoadWord(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Three independent chains over the three thirds of the buffer; no merge, no tail handling.
__attribute__((target("sse4.2"), noinline)) uint64_t ThreeChains(const uint8_t* p, size_t n) {
  const size_t third = n / 24 * 8;
  uint64_t a = 0, b = 0, c = 0;
  for (size_t i = 0; i < third; i += 8) {
    a = _mm_crc32_u64(a, LoadWord(p + i));
    b = _mm_crc32_u64(b, LoadWord(p + third + i));
    c = _mm_crc32_u64(c, LoadWord(p + 2 * third + i));
  }
  return a ^ b ^ c;  // keeps the chains alive; not a CRC of the buffer
}

__attribute__((target("sse4.2"), noinline)) uint64_t OneChain(const uint8_t* p, size_t n) {
  uint64_t a = 0;
  for (size_t i = 0; i + 8 <= n; i += 8) a = _mm_crc32_u64(a, LoadWord(p + i));
  return a;
}

void BM_Crc32InstructionLimit(benchmark::State& state) {
  if (!ksim::crc32c::HardwareAvailable()) {
    state.SkipWithError("no SSE4.2");
    return;
  }
  const std::vector<uint8_t> data = MakeBuffer(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    uint64_t crc = ThreeChains(data.data(), data.size());
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}

void BM_Crc32cSingleChain(benchmark::State& state) {
  if (!ksim::crc32c::HardwareAvailable()) {
    state.SkipWithError("no SSE4.2");
    return;
  }
  const std::vector<uint8_t> data = MakeBuffer(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    uint64_t crc = OneChain(data.data(), data.size());
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}

BENCHMARK(BM_Crc32InstructionLimit)->Arg(4 << 10)->Arg(64 << 10)->Arg(1 << 20);
BENCHMARK(BM_Crc32cSingleChain)->Arg(4 << 10)->Arg(64 << 10)->Arg(1 << 20);

#endif  // __x86_64__

BENCHMARK(BM_Crc32cHardware)->Arg(4 << 10)->Arg(64 << 10)->Arg(1 << 20);
BENCHMARK(BM_Crc32cPortable)->Arg(4 << 10)->Arg(64 << 10)->Arg(1 << 20);

}  // namespace

BENCHMARK_MAIN();
