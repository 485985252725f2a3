// The storage engine against the disk it sits on, measured in the same run.
//
// Append: 1 KiB records in 16 KiB batches (16 records each) appended through Log::AppendAsLeader
// to a real file (verify every batch, stamp offsets and epoch, roll check, write(2), offset and
// time index entries in the mmap'd indexes), against the baseline of write(2)ing the same bytes
// to a file in the same directory. Each iteration writes 64 MiB to a fresh log (or file); files
// are removed outside the timed region. Target: the Log reaches >= 0.8 of the baseline's bytes/s.
//
// RandomRead: Log::Read of one batch at a random offset of a log of 1M records (hot: the files
// are in the page cache), for index intervals of 4 KiB (Kafka's default) and 64 KiB. Reports
// lookups/s and, as the counter scanned_bytes, the .log bytes read per lookup to find the start
// (the sparse index's cost). A read at a random offset is what a consumer fetch or a follower
// fetch does first.
//
//   cmake -S . -B build-log -G Ninja -DKSIM_BENCH=ON && ninja -C build-log log_bench
//   build-log/bench/log_bench                        (KSIM_BENCH_DIR picks the directory)
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/base/clock.h"
#include "core/base/random.h"
#include "core/env/posix_env.h"
#include "core/record/record_batch.h"
#include "core/storage/log.h"

namespace ksim {
namespace {

constexpr size_t kRecordBytes = 1024;
constexpr size_t kRecordsPerBatch = 16;
constexpr size_t kBytesPerIteration = size_t{64} << 20;

void Check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "log_bench: %s\n", what);
    std::abort();
  }
}

PosixEnv& Env() {
  static PosixEnv env;
  return env;
}

// A scratch directory for the run, on the disk under test.
const std::string& BenchDir() {
  static const std::string dir = [] {
    const char* base = std::getenv("KSIM_BENCH_DIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/ksim-log-bench-XXXXXX";
    Check(mkdtemp(pattern.data()) != nullptr, "mkdtemp");
    std::atexit([] { (void)RemoveTree(Env(), BenchDir()); });
    return pattern;
  }();
  return dir;
}

Bytes MakeBatch(size_t records, size_t value_bytes, int64_t timestamp_ms, uint64_t seed) {
  RandomStream random(seed);
  std::vector<RecordInput> inputs(records);
  for (RecordInput& input : inputs) {
    input.timestamp_ms = timestamp_ms;
    Bytes value(value_bytes);
    for (uint8_t& byte : value) byte = static_cast<uint8_t>(random.Next());
    input.value = std::move(value);
  }
  return EncodeBatch(BatchSpec{}, inputs);
}

void BM_AppendThroughLog(benchmark::State& state) {
  ManualClock clock(int64_t{1'600'000'000'000} * kUsPerMs);
  Bytes batch = MakeBatch(kRecordsPerBatch, kRecordBytes, clock.NowMs(), 1);
  const size_t batches = kBytesPerIteration / batch.size();
  const std::string dir = BenchDir() + "/append-0";
  int64_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    (void)RemoveTree(Env(), dir);
    LogConfig config;
    config.index_interval_bytes = static_cast<int32_t>(state.range(0));
    auto opened = Log::Open(Env(), clock, dir, config);
    Check(opened.ok(), "open");
    std::unique_ptr<Log> log = std::move(opened).value();
    state.ResumeTiming();
    for (size_t i = 0; i < batches; ++i) {
      auto info = log->AppendAsLeader(batch, LeaderEpoch(1));
      if (!info.ok()) state.SkipWithError(info.status().ToString().c_str());
    }
    bytes += static_cast<int64_t>(log->size_in_bytes());
    state.PauseTiming();
    log.reset();  // no flush: the baseline does not fsync either
    state.ResumeTiming();
  }
  state.SetBytesProcessed(bytes);
  (void)RemoveTree(Env(), dir);
}
// Arg: index.interval.bytes. 4096 is Kafka's default (an index entry per 16 KiB batch);
// INT32_MAX writes no index entries, which isolates what the mmap'd indexes cost.
BENCHMARK(BM_AppendThroughLog)
    ->Arg(4096)
    ->Arg(INT32_MAX)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_AppendRawWrite(benchmark::State& state) {
  const Bytes batch = MakeBatch(kRecordsPerBatch, kRecordBytes, 1'600'000'000'000, 1);
  const size_t batches = kBytesPerIteration / batch.size();
  Check(Env().CreateDir(BenchDir()).ok(), "mkdir");
  const std::string path = BenchDir() + "/raw.log";
  int64_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    ::unlink(path.c_str());
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    Check(fd >= 0, "open raw file");
    state.ResumeTiming();
    for (size_t i = 0; i < batches; ++i) {
      const ssize_t written = ::write(fd, batch.data(), batch.size());
      if (written != static_cast<ssize_t>(batch.size())) state.SkipWithError("short write");
      bytes += written;
    }
    state.PauseTiming();
    ::close(fd);
    state.ResumeTiming();
  }
  state.SetBytesProcessed(bytes);
  ::unlink(path.c_str());
}
BENCHMARK(BM_AppendRawWrite)->Unit(benchmark::kMillisecond)->UseRealTime();

// A log of 1M records (100-byte values, 10 per batch), built once per index interval.
struct ReadFixture {
  std::unique_ptr<ManualClock> clock;
  std::unique_ptr<Log> log;
};

ReadFixture& LogOfAMillionRecords(int32_t index_interval_bytes) {
  static std::map<int32_t, ReadFixture> fixtures;
  ReadFixture& fixture = fixtures[index_interval_bytes];
  if (fixture.log) return fixture;
  fixture.clock = std::make_unique<ManualClock>(int64_t{1'600'000'000'000} * kUsPerMs);
  const std::string dir = BenchDir() + "/read-" + std::to_string(index_interval_bytes);
  LogConfig config;
  config.index_interval_bytes = index_interval_bytes;
  auto opened = Log::Open(Env(), *fixture.clock, dir, config);
  Check(opened.ok(), "open");
  fixture.log = std::move(opened).value();
  Bytes batch = MakeBatch(10, 100, fixture.clock->NowMs(), 2);
  for (int i = 0; i < 100'000; ++i) {
    Check(fixture.log->AppendAsLeader(batch, LeaderEpoch(1)).ok(), "append");
  }
  Check(fixture.log->log_end_offset() == Offset(1'000'000), "1M records");
  return fixture;
}

void BM_RandomRead(benchmark::State& state) {
  Log& log = *LogOfAMillionRecords(static_cast<int32_t>(state.range(0))).log;
  RandomStream random(3);
  uint64_t scanned = 0;
  uint64_t returned = 0;
  for (auto _ : state) {
    const Offset target(random.UniformInt(0, 999'999));
    auto read = log.Read(target, 1, std::nullopt, /*min_one_message=*/true);
    if (!read.ok() || read->records.empty()) state.SkipWithError("read failed");
    scanned += read->bytes_scanned;
    returned += read->records.size();
    benchmark::DoNotOptimize(read->records.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["scanned_bytes"] =
      benchmark::Counter(static_cast<double>(scanned), benchmark::Counter::kAvgIterations);
  state.counters["returned_bytes"] =
      benchmark::Counter(static_cast<double>(returned), benchmark::Counter::kAvgIterations);
  state.counters["segments"] = static_cast<double>(log.number_of_segments());
}
BENCHMARK(BM_RandomRead)->Arg(4096)->Arg(65536);

}  // namespace
}  // namespace ksim

BENCHMARK_MAIN();
