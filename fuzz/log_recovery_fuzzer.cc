// libFuzzer target: Log recovery on whatever a crash or a broken disk could leave in a partition
// directory. Each input becomes segment files in a temporary directory (through PosixEnv), the
// log is opened (recovery), and the result must hold up:
//   - Open succeeds (damage is repaired, never fatal, never an assert);
//   - every remaining batch verifies, offsets strictly increase within and across segments and
//     fit their segment, each .log file ends on a batch boundary;
//   - each segment's next offset and the log end offset agree with that scan;
//   - both indexes pass their sanity checks and agree with the scan: a read at each batch's
//     first and last offset starts exactly at that batch;
//   - the log takes an append at its end offset, and reopening it changes nothing.
//
// Two input modes (bit 2 of the first byte):
//   raw:        the input's bytes are the .log, .index and .timeindex files of one segment;
//   structured: the input describes batches, which are appended through the Log (so the files
//               start out valid, across several segments when the index is small), then damaged:
//               truncated, bytes flipped, index bytes overwritten or index files removed, with
//               or without a clean close. With bit 4 the log is a Kafka 0.10.0 broker's,
//               which keeps no .timeindex (LogConfig::time_index false).
//
//   cmake -S . -B build-fuzzlog -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DKSIM_FUZZ=ON \
//       -DKSIM_SANITIZE=ON -DKSIM_BENCH=OFF && ninja -C build-fuzzlog log_recovery_fuzzer
//   build-fuzzlog/fuzz/log_recovery_fuzzer -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/base/clock.h"
#include "core/env/posix_env.h"
#include "core/record/record_batch.h"
#include "core/storage/log.h"

namespace {

using namespace ksim;

void Require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "log_recovery_fuzzer: invariant failed: %s\n", what);
    std::abort();
  }
}

// Consumes the fuzzer's bytes; past the end everything reads as zero.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t Byte() { return position_ < size_ ? data_[position_++] : 0; }
  uint16_t U16() { return static_cast<uint16_t>(Byte() | (Byte() << 8)); }
  ByteView Take(size_t length) {
    length = std::min(length, size_ - position_);
    ByteView taken(data_ + position_, length);
    position_ += length;
    return taken;
  }
  ByteView Rest() { return Take(size_ - position_); }
  bool empty() const { return position_ >= size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t position_ = 0;
};

PosixEnv env;
ManualClock clock_(int64_t{1'600'000'000'000} * kUsPerMs);
std::string root;

std::string LogDir() { return root + "/t-0"; }

void WriteFile(const std::string& path, ByteView contents) {
  auto file = env.OpenFile(path, OpenMode::kTruncate);
  Require(file.ok(), "create a file");
  if (!contents.empty()) Require((*file)->Append(contents).ok(), "write a file");
}

LogConfig ConfigFrom(uint8_t flags) {
  static constexpr int32_t kIntervals[] = {0, 1, 64, 4096};
  LogConfig config;
  config.index_interval_bytes = kIntervals[flags & 0x3];
  config.max_index_size_bytes = 64 * 1024;  // preallocated at every open: keep it small
  config.file_delete_delay_ms = 0;
  // Structured inputs with bit 4 are a Kafka 0.10.0 broker's log: no time index (KIP-33).
  config.time_index = (flags & 0x04) == 0 || (flags & 0x10) == 0;
  return config;
}

void WriteRawSegment(Input& input, uint8_t flags) {
  static constexpr int64_t kBases[] = {0, 5, 1000, int64_t{1} << 31};
  const Offset base(kBases[(flags >> 5) & 0x3]);
  const size_t index_length = input.U16() % 2048;
  const size_t time_index_length = input.U16() % 2048;
  const ByteView index = input.Take(index_length);
  const ByteView time_index = input.Take(time_index_length);
  Require(env.CreateDir(LogDir()).ok(), "mkdir");
  WriteFile(LogFilePath(LogDir(), base), input.Rest());
  if (flags & 0x08) WriteFile(IndexFilePath(LogDir(), base), index);
  if (flags & 0x10) WriteFile(TimeIndexFilePath(LogDir(), base), time_index);
}

void WriteStructuredLog(Input& input, uint8_t flags) {
  LogConfig config = ConfigFrom(flags);
  config.max_index_size_bytes = 24 * (1 + input.Byte() % 8);  // small: full indexes roll
  config.segment_bytes = 256 + 64 * input.Byte();
  {
    auto opened = Log::Open(env, clock_, LogDir(), config);
    Require(opened.ok(), "open a fresh log");
    Log& log = **opened;
    int64_t next = static_cast<int64_t>(input.Byte() % 8) * 1000;
    const int batches = 1 + input.Byte() % 24;
    for (int b = 0; b < batches && !input.empty(); ++b) {
      const int count = 1 + input.Byte() % 4;
      if (input.Byte() % 4 == 0) next += input.Byte();  // a gap, as compaction leaves
      const int64_t timestamp = 1'600'000'000'000 + int64_t{input.Byte()} * 1000;
      std::vector<RecordInput> records(count);
      for (RecordInput& record : records) {
        record.timestamp_ms = timestamp;
        const ByteView value = input.Take(input.Byte() % 24);
        record.value = Bytes(value.begin(), value.end());
      }
      BatchSpec spec;
      spec.base_offset = Offset(next);
      spec.partition_leader_epoch = LeaderEpoch(input.Byte() % 3);
      const Bytes batch = EncodeBatch(spec, records);
      Require(log.AppendAsFollower(batch).ok(), "append a valid batch");
      next += count;
    }
    if (flags & 0x80) Require(log.Close().ok(), "close");
    // Otherwise the Log is dropped as a crash drops it: indexes keep their preallocated zeros.
  }
  auto names = env.ListDir(LogDir());
  Require(names.ok(), "list");
  std::vector<std::string> segment_logs;
  for (const std::string& name : *names) {
    if (name.ends_with(".log")) segment_logs.push_back(LogDir() + "/" + name);
  }
  const int damages = input.Byte() % 4;
  for (int d = 0; d < damages && !segment_logs.empty(); ++d) {
    const std::string log_path = segment_logs[input.Byte() % segment_logs.size()];
    const std::string stem = log_path.substr(0, log_path.size() - 4);
    auto size = env.FileSize(log_path);
    Require(size.ok(), "size");
    switch (input.Byte() % 5) {
      case 0: {  // a torn tail
        auto file = env.OpenFile(log_path, OpenMode::kOpenExisting);
        Require(file.ok(), "open");
        if (*size > 0) Require((*file)->Truncate(input.U16() % *size).ok(), "truncate");
        break;
      }
      case 1: {  // a flipped byte
        auto file = env.OpenFile(log_path, OpenMode::kOpenExisting);
        Require(file.ok(), "open");
        if (*size > 0) {
          const uint8_t flip[] = {static_cast<uint8_t>(input.Byte() | 1)};
          uint8_t old[1];
          const uint64_t at = input.U16() % *size;
          Require((*file)->ReadAt(at, MutableByteView(old)).ok(), "read");
          const uint8_t changed[] = {static_cast<uint8_t>(old[0] ^ flip[0])};
          Require((*file)->WriteAt(at, changed).ok(), "write");
        }
        break;
      }
      case 2: {  // garbage over an index
        const std::string index = stem + (input.Byte() & 1 ? ".index" : ".timeindex");
        if (env.FileExists(index)) {
          auto file = env.OpenFile(index, OpenMode::kOpenExisting);
          Require(file.ok(), "open");
          Require((*file)->WriteAt(input.U16() % 64, input.Take(input.Byte() % 16)).ok(), "write");
        }
        break;
      }
      case 3: {  // a missing index
        const std::string index = stem + (input.Byte() & 1 ? ".index" : ".timeindex");
        if (env.FileExists(index)) Require(env.RemoveFile(index).ok(), "remove");
        break;
      }
      default: {  // junk appended (a partial write of something else)
        auto file = env.OpenFile(log_path, OpenMode::kOpenExisting);
        Require(file.ok(), "open");
        Require((*file)->Append(input.Take(input.Byte() % 80)).ok(), "append");
        break;
      }
    }
  }
}

// The invariants listed at the top of the file.
void CheckLog(Log& log, bool just_opened) {
  std::optional<Offset> previous_last;
  std::vector<LogSegment*> segments = log.LogSegments();
  Require(!segments.empty(), "a log has a segment");
  for (LogSegment* segment : segments) {
    auto bytes = ReadWholeFile(env, segment->log_path());
    Require(bytes.ok(), "read a segment");
    Require(bytes->size() == segment->size(), "segment size matches the file");
    Require(segment->offset_index().SanityCheck(segment->size()).ok(), "offset index sane");
    if (segment->has_time_index()) {
      Require(segment->time_index().SanityCheck().ok(), "time index sane");
    } else {
      Require(!env.FileExists(TimeIndexFilePath(LogDir(), segment->base_offset())),
              "a log without a time index writes no .timeindex");
    }
    BatchIterator iterator(*bytes, /*verify_crc=*/true);
    Offset next = segment->base_offset();
    struct Found {
      Offset base;
      Offset last;
      size_t position;
    };
    std::vector<Found> found;
    while (auto item = iterator.Next()) {
      Require(VerifyBatch(item->bytes).ok(), "every batch verifies");
      Require(item->header.base_offset >= segment->base_offset(), "batch within its segment");
      Require(segment->CanConvertToRelativeOffset(item->header.last_offset()), "offsets fit");
      Require(!previous_last || item->header.base_offset > *previous_last, "offsets increase");
      previous_last = item->header.last_offset();
      next = item->header.next_offset();
      found.push_back({item->header.base_offset, item->header.last_offset(), item->position});
    }
    Require(iterator.status().ok() && !iterator.truncated(), "segment ends on a batch boundary");
    Require(segment->next_offset() == next, "segment next offset agrees with a scan");
    for (const Found& batch : found) {
      for (Offset at : {batch.base, batch.last}) {
        if (at < log.log_start_offset()) continue;
        auto read = log.Read(at, 1, std::nullopt, true);
        Require(read.ok(), "a read inside the log succeeds");
        Require(read->segment_base_offset == segment->base_offset(), "read finds the segment");
        Require(read->position == batch.position, "index and scan agree");
      }
    }
  }
  Require(log.log_end_offset() == segments.back()->next_offset(), "LEO is the active end");
  Require(log.log_start_offset() <= log.log_end_offset(), "log start <= LEO");
  if (just_opened) {
    Require(log.recovery_point() == log.log_end_offset(), "recovered up to the LEO");
  }
  auto at_end = log.Read(log.log_end_offset(), 1024);
  Require(at_end.ok() && at_end->records.empty(), "a read at the LEO is empty");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // tmpfs when there is one: fsync is then free, and the fuzzer runs hundreds of times faster.
  char shm_pattern[] = "/dev/shm/ksim-log-recovery-fuzz-XXXXXX";
  char tmp_pattern[] = "/tmp/ksim-log-recovery-fuzz-XXXXXX";
  char* pattern = env.DirExists("/dev/shm") ? shm_pattern : tmp_pattern;
  Require(mkdtemp(pattern) != nullptr, "mkdtemp");
  root = pattern;
  std::atexit([] { (void)RemoveTree(env, root); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Require(RemoveTree(env, LogDir()).ok(), "clean the directory");
  Input input(data, size);
  const uint8_t flags = input.Byte();
  if (flags & 0x04) {
    WriteStructuredLog(input, flags);
  } else {
    WriteRawSegment(input, flags);
  }

  const LogConfig config = ConfigFrom(flags);
  Offset end;
  {
    auto opened = Log::Open(env, clock_, LogDir(), config);
    Require(opened.ok(), "recovery never fails on damaged files");
    Log& log = **opened;
    CheckLog(log, /*just_opened=*/true);
    RecordInput record;
    record.timestamp_ms = 1;
    record.value = Bytes{7};
    Bytes batch = EncodeBatch(BatchSpec{}, std::vector<RecordInput>{record});
    auto appended = log.AppendAsLeader(batch, LeaderEpoch(9));
    Require(appended.ok() && appended->first_offset == log.log_end_offset() - 1,
            "the recovered log takes an append at its end");
    CheckLog(log, /*just_opened=*/false);
    end = log.log_end_offset();
    Require(log.Close().ok(), "close");
  }
  auto reopened = Log::Open(env, clock_, LogDir(), config, LogOpenOptions{end, Offset(0)});
  Require(reopened.ok(), "reopen");
  Require((*reopened)->log_end_offset() == end, "reopening changes nothing");
  Require((*reopened)->recovery_report().first_damage.ok(), "no damage after a clean close");
  CheckLog(**reopened, /*just_opened=*/true);
  return 0;
}
