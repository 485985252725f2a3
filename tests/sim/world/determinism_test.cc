// Determinism of the simulated world (docs/DESIGN.md: same scenario + same seed => byte-identical
// trace), checked on a real workload rather than a toy: a writer node (`p1`) encodes record
// batches (record ids in the values) and replicates them over the virtual network to three
// replicas (`broker-1..3`), each appending them with AppendAsFollower to a real core Log on its
// own VirtualDisk, paying the disk's busy time before it acknowledges, and flushing every 50 ms.
// A fault schedule (jittered by the seed) partitions the writer from a replica and heals it,
// crashes a replica with torn and corrupted unsynced tails and restarts it (the Log recovers),
// slows one down, shuts one down cleanly, cuts a link one way, and crashes one without tearing;
// links have random latency and 1% loss. Every message is traced (`messages` level), as are the
// state changes: produce, append (LEO), flush (recovery point), recovery reports, acks, timeouts.
//
// Asserted: two runs with one seed give the same bytes and hash, in this process and in a child
// process (the test re-executes its own binary); another seed gives another trace; the `state`
// trace is the `messages` trace without its msg_* lines; and the outcome is right: after the
// final heal and drain every replica holds exactly what was written, byte for byte, every
// recovery kept what had been flushed, and every message sent was delivered or dropped once.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/record/record_batch.h"
#include "core/storage/log.h"
#include "sim/kernel/trace.h"
#include "sim/world/world.h"
#include "tests/support/core/temp_dir.h"

namespace ksim::sim {
namespace {

constexpr char kWriter[] = "p1";
constexpr char kLogParentDir[] = "/kafka-logs";
constexpr char kLogDir[] = "/kafka-logs/t-0";
constexpr TimeUs kMs = 1000;
constexpr TimeUs kProduceUntilUs = 10'000 * kMs;
constexpr TimeUs kRunUntilUs = 20'000 * kMs;
constexpr TimeUs kRequestTimeoutUs = 400 * kMs;
constexpr TimeUs kFlushIntervalUs = 50 * kMs;
constexpr size_t kMaxRequestBytes = 4 * 1024;
const std::vector<std::string> kReplicas = {"broker-1", "broker-2", "broker-3"};

struct AppendRequest final : Payload {
  uint64_t request_id = 0;
  Bytes batches;  // whole batches, offsets set by the writer
};
struct AppendResponse final : Payload {
  uint64_t request_id = 0;
  int64_t log_end_offset = 0;
};

// What the test learns beyond the trace.
struct Outcome {
  int64_t records_written = 0;
  int64_t recoveries = 0;
  int64_t records_lost_by_crashes = 0;
  int64_t appends = 0;
  int64_t timeouts = 0;
  std::vector<int64_t> replica_leos;
};

// The writer: the source of truth, holding every batch it made (offsets assigned by it).
class Writer {
 public:
  Writer(World& world, Outcome& outcome)
      : world_(world),
        node_(world.node(kWriter)),
        rng_(world.StreamFor("workload/p1")),
        outcome_(outcome) {
    for (const std::string& replica : kReplicas) peers_.push_back(Peer{replica});
    node_.Listen(NetworkHandler{[this](Delivery d) { OnMessage(std::move(d)); },
                                [this](const Disconnect& d) { OnDisconnect(d); }});
    ScheduleProduce();
  }

  int64_t log_end_offset() const { return leo_; }
  // The batch starting at `base`, or null.
  const Bytes* BatchAt(int64_t base) const {
    auto it = std::lower_bound(bases_.begin(), bases_.end(), base);
    return it != bases_.end() && *it == base ? &batches_[it - bases_.begin()] : nullptr;
  }

 private:
  struct Peer {
    std::string name;
    int64_t acked_leo = 0;
    uint64_t outstanding = 0;  // request id awaiting a response, 0 when none
    TimerId timeout = 0;
  };

  void ScheduleProduce() {
    node_.Schedule(1 + rng_.Exponential(4 * kMs), [this] {
      if (world_.Now() >= kProduceUntilUs) return;
      Produce();
      ScheduleProduce();
    });
  }

  void Produce() {
    std::vector<RecordInput> records;
    const int64_t count = rng_.UniformInt(1, 5);
    for (int64_t i = 0; i < count; ++i) {
      RecordInput record;
      record.timestamp_ms = world_.Now() / kMs;
      record.value = ToBytes("record-" + std::to_string(next_id_++) + ":" +
                             std::string(static_cast<size_t>(rng_.UniformInt(0, 200)), 'v'));
      records.push_back(std::move(record));
    }
    BatchSpec spec;
    spec.base_offset = Offset(leo_);
    bases_.push_back(leo_);
    batches_.push_back(EncodeBatch(spec, records));
    world_.Trace(kWriter, "produce", EventFields{{"base_offset", leo_}, {"records", count}});
    leo_ += count;
    outcome_.records_written += count;
    for (Peer& peer : peers_) Pump(peer);
  }

  // Sends the peer what it lacks, from what it last acknowledged, one request at a time.
  void Pump(Peer& peer) {
    if (peer.outstanding != 0 || peer.acked_leo >= leo_) return;
    auto it = std::lower_bound(bases_.begin(), bases_.end(), peer.acked_leo);
    ASSERT_TRUE(it != bases_.end() && *it == peer.acked_leo)
        << peer.name << " acknowledged " << peer.acked_leo << ", not a batch boundary";
    auto request = std::make_shared<AppendRequest>();
    request->request_id = next_request_id_++;
    for (size_t i = it - bases_.begin(); i < batches_.size(); ++i) {
      if (!request->batches.empty() &&
          request->batches.size() + batches_[i].size() > kMaxRequestBytes) {
        break;
      }
      request->batches.insert(request->batches.end(), batches_[i].begin(), batches_[i].end());
    }
    peer.outstanding = request->request_id;
    const int64_t size = static_cast<int64_t>(request->batches.size()) + 16;
    node_.Send(peer.name, Message{"Append", {}, std::move(request), size});
    peer.timeout = node_.Schedule(kRequestTimeoutUs, [this, &peer] {
      world_.Trace(kWriter, "timeout", EventFields{{"replica", peer.name}});
      ++outcome_.timeouts;
      peer.outstanding = 0;
      Pump(peer);
    });
  }

  void OnMessage(Delivery delivery) {
    const auto& response = static_cast<const AppendResponse&>(*delivery.message.payload);
    Peer& peer = PeerNamed(world_.topology().Name(delivery.from));
    if (response.request_id != peer.outstanding) return;  // answers a request given up on
    node_.Cancel(peer.timeout);
    peer.outstanding = 0;
    peer.acked_leo = response.log_end_offset;
    world_.Trace(kWriter, "ack", EventFields{{"replica", peer.name}, {"leo", peer.acked_leo}});
    Pump(peer);
  }

  void OnDisconnect(const Disconnect& disconnect) {
    Peer& peer = PeerNamed(world_.topology().Name(disconnect.peer));
    if (peer.outstanding == 0) return;
    node_.Cancel(peer.timeout);
    peer.outstanding = 0;
    Pump(peer);
  }

  Peer& PeerNamed(const std::string& name) {
    for (Peer& peer : peers_) {
      if (peer.name == name) return peer;
    }
    ADD_FAILURE() << "a message from a stranger, " << name;
    return peers_.front();
  }

  World& world_;
  Node& node_;
  RandomStream rng_;
  Outcome& outcome_;
  std::vector<Peer> peers_;
  std::vector<int64_t> bases_;
  std::vector<Bytes> batches_;
  int64_t leo_ = 0;
  uint64_t next_id_ = 1;
  uint64_t next_request_id_ = 1;
};

// A replica: a real Log on the node's disk, rebuilt from the disk on every restart.
class Replica {
 public:
  Replica(World& world, const std::string& name, const Writer& writer, Outcome& outcome)
      : world_(world), node_(world.node(name)), writer_(writer), outcome_(outcome) {
    config_.segment_bytes = 16 * 1024;
    config_.index_interval_bytes = 512;
    config_.max_index_size_bytes = 4096;
    node_.AddLifecycleListener([this](NodeLifecycle event) { OnLifecycle(event); });
    Start();
  }

  Log* log() { return log_.get(); }

  // Every batch of the log is, byte for byte, the writer's batch at that offset, without gaps.
  void CheckPrefixOfWriter() {
    int64_t offset = log_->log_start_offset().value();
    while (offset < log_->log_end_offset().value()) {
      Result<FetchDataInfo> read = log_->Read(Offset(offset), 1 << 20);
      ASSERT_TRUE(read.ok()) << read.status().ToString();
      BatchIterator iterator(read->records);
      while (std::optional<BatchIterator::Item> item = iterator.Next()) {
        const Bytes* expected = writer_.BatchAt(item->header.base_offset.value());
        ASSERT_NE(expected, nullptr) << node_.name() << ": a batch at " << item->header.base_offset
                                     << " the writer never wrote";
        ASSERT_TRUE(
            std::equal(item->bytes.begin(), item->bytes.end(), expected->begin(), expected->end()))
            << node_.name() << ": batch at " << item->header.base_offset << " differs";
        ASSERT_EQ(item->header.base_offset.value(), offset) << node_.name() << ": a gap";
        offset = item->header.next_offset().value();
      }
    }
  }

 private:
  void Start() {
    Result<std::unique_ptr<Log>> log = Log::Open(*node_.disk(), node_.clock(), kLogDir, config_);
    ASSERT_TRUE(log.ok()) << node_.name() << ": " << log.status().ToString();
    log_ = std::move(log).value();
    const LogRecoveryReport& report = log_->recovery_report();
    const int64_t leo = log_->log_end_offset().value();
    world_.Trace(node_.name(), "recovered",
                 EventFields{{"leo", leo},
                             {"bytes_truncated", report.bytes_truncated},
                             {"segments", log_->number_of_segments()},
                             {"damage", report.first_damage.ToString()}});
    // What the log had flushed before the crash survived, and nothing else came from nowhere.
    EXPECT_GE(leo, durable_floor_) << node_.name() << " lost flushed records";
    outcome_.records_lost_by_crashes += std::max<int64_t>(0, leo_before_crash_ - leo);
    ++outcome_.recoveries;
    const TimeUs recovery_us = node_.disk()->TakeBusyTime();
    ASSERT_NO_FATAL_FAILURE(CheckPrefixOfWriter());
    node_.disk()->TakeBusyTime();  // the check is the test's, not the broker's
    busy_until_us_ = world_.Now() + recovery_us;
    node_.Listen(NetworkHandler{[this](Delivery d) { OnAppend(std::move(d)); }, nullptr});
    ScheduleFlush();
  }

  void OnLifecycle(NodeLifecycle event) {
    switch (event) {
      case NodeLifecycle::kCrash:
        // What the log claimed durable must come back; its files are stale handles now.
        durable_floor_ = log_->recovery_point().value();
        leo_before_crash_ = log_->log_end_offset().value();
        log_.reset();
        break;
      case NodeLifecycle::kShutdown:
        EXPECT_TRUE(log_->Close().ok());
        durable_floor_ = log_->log_end_offset().value();
        log_.reset();
        break;
      case NodeLifecycle::kRestart:
        Start();
        break;
    }
  }

  // The disk's busy time, queued behind the work before it: when this work is done.
  TimeUs ChargeDisk() {
    busy_until_us_ = std::max(busy_until_us_, world_.Now()) + node_.disk()->TakeBusyTime();
    return busy_until_us_ - world_.Now();
  }

  void OnAppend(Delivery delivery) {
    const auto& request = static_cast<const AppendRequest&>(*delivery.message.payload);
    const int64_t leo = log_->log_end_offset().value();
    // Skip what the log already has (a resent request); append only what continues it.
    BatchIterator iterator(request.batches);
    size_t from = request.batches.size();
    bool continues = false;
    while (std::optional<BatchIterator::Item> item = iterator.Next()) {
      if (item->header.last_offset().value() < leo) continue;
      continues = item->header.base_offset.value() == leo;
      from = item->position;
      break;
    }
    if (continues) {
      ByteView rest(request.batches.data() + from, request.batches.size() - from);
      Result<LogAppendInfo> info = log_->AppendAsFollower(rest);
      ASSERT_TRUE(info.ok()) << node_.name() << ": " << info.status().ToString();
      ++outcome_.appends;
      world_.Trace(node_.name(), "append",
                   EventFields{{"first_offset", info->first_offset.value()},
                               {"last_offset", info->last_offset.value()},
                               {"leo", log_->log_end_offset().value()}});
    }
    auto response = std::make_shared<AppendResponse>();
    response->request_id = request.request_id;
    response->log_end_offset = log_->log_end_offset().value();
    const NodeId to = delivery.from;
    node_.Schedule(ChargeDisk(), [this, to, response = std::move(response)]() mutable {
      node_.Send(to, Message{"AppendResponse", {}, std::move(response), 16});
    });
  }

  void ScheduleFlush() {
    node_.Schedule(kFlushIntervalUs, [this] {
      if (log_->unflushed_messages() > 0) {
        ASSERT_TRUE(log_->Flush().ok());
        durable_floor_ = log_->recovery_point().value();
        ChargeDisk();
        world_.Trace(node_.name(), "flush", EventFields{{"recovery_point", durable_floor_}});
      }
      ScheduleFlush();
    });
  }

  World& world_;
  Node& node_;
  const Writer& writer_;
  Outcome& outcome_;
  LogConfig config_;
  std::unique_ptr<Log> log_;
  TimeUs busy_until_us_ = 0;
  // Test bookkeeping that outlives the process: what the log last claimed durable, and its LEO.
  int64_t durable_floor_ = 0;
  int64_t leo_before_crash_ = 0;
};

TraceHeader HeaderFor(uint64_t seed, TraceLevel level) {
  return TraceHeader{"determinism-workload", "base", seed, level};
}

// The fault schedule; each time jittered by up to 200 ms from the "faults" stream.
void ScheduleFaults(World& world) {
  RandomStream rng = world.StreamFor("faults");
  auto at = [&](TimeUs time_us, std::function<void()> action) {
    world.loop().ScheduleAt(time_us + rng.UniformInt(0, 200 * kMs), std::move(action), "fault");
  };
  auto ok = [](Status status) { ASSERT_TRUE(status.ok()) << status.ToString(); };
  at(1'000 * kMs, [&world, ok] { ok(world.Partition({{kWriter}, {"broker-1"}})); });
  at(2'500 * kMs, [&world] { world.Heal(); });
  at(3'000 * kMs, [&world, ok] {
    ok(world.CrashNode("broker-2",
                       CrashOptions{.tear_unsynced_tail = true, .corrupt_torn_tail = true}));
  });
  at(4'000 * kMs, [&world, ok] { ok(world.RestartNode("broker-2")); });
  at(4'500 * kMs, [&world, ok] { ok(world.SlowNode("broker-3", 200 * kMs, 1'500 * kMs)); });
  at(6'500 * kMs, [&world, ok] { ok(world.CleanShutdownNode("broker-1")); });
  at(7'300 * kMs, [&world, ok] { ok(world.RestartNode("broker-1")); });
  at(7'500 * kMs, [&world, ok] {
    ok(world.Partition({{kWriter}, {"broker-3"}}, /*one_way=*/true));
  });
  at(8'500 * kMs, [&world] { world.Heal(); });
  at(9'000 * kMs,
     [&world, ok] { ok(world.CrashNode("broker-3", CrashOptions{.tear_unsynced_tail = true})); });
  at(9'300 * kMs, [&world, ok] { ok(world.RestartNode("broker-3")); });
  at(9'500 * kMs, [&world, ok] { ok(world.CrashNode("broker-2")); });
  at(9'700 * kMs, [&world, ok] { ok(world.RestartNode("broker-2")); });
  // The final phase: heal everything, let the writer drain.
  world.loop().ScheduleAt(
      kProduceUntilUs + 300 * kMs, [&world] { world.Heal(); }, "final");
}

struct RunResult {
  uint64_t hash = 0;
  std::string bytes;  // with a memory sink
  Outcome outcome;
};

// One whole run; `trace` decides the level and the sink (`memory_sink`: keep its bytes).
RunResult RunWorkload(uint64_t seed, TraceWriter trace, bool memory_sink) {
  RunResult result;
  WorldOptions options;
  options.default_link = LinkSpec{500, 3000, 10'000, 0};
  options.network.disconnect_timeout_us = 1'000 * kMs;
  World world(seed, std::move(trace), options);
  EXPECT_TRUE(world.AddNode(kWriter).ok());
  VirtualDiskOptions disk;
  disk.read_latency = {10, 100};
  disk.write_latency = {20, 200};
  disk.sync_latency = {1000, 5000};
  disk.metadata_latency = {5, 50};
  for (const std::string& name : kReplicas) {
    Result<Node*> node = world.AddNode(name, NodeOptions{disk});
    EXPECT_TRUE(node.ok());
    // The partition directory exists, durably, before the broker first opens its log (Log::Open
    // does not sync the parent of a directory it creates; see log_crash_property_test.cc).
    VirtualDisk& d = *(*node)->disk();
    EXPECT_TRUE(d.CreateDir(kLogDir).ok() && d.SyncDir("/").ok() && d.SyncDir(kLogParentDir).ok());
  }
  Writer writer(world, result.outcome);
  std::vector<std::unique_ptr<Replica>> replicas;
  for (const std::string& name : kReplicas) {
    replicas.push_back(std::make_unique<Replica>(world, name, writer, result.outcome));
  }
  ScheduleFaults(world);
  world.loop().RunUntil(kRunUntilUs);

  // After the final heal and drain every replica is up and holds exactly what was written.
  for (size_t i = 0; i < replicas.size(); ++i) {
    EXPECT_TRUE(world.node(kReplicas[i]).up()) << kReplicas[i];
    Log* log = replicas[i]->log();
    if (log == nullptr) continue;
    result.outcome.replica_leos.push_back(log->log_end_offset().value());
    EXPECT_EQ(log->log_end_offset().value(), writer.log_end_offset()) << kReplicas[i];
    EXPECT_NO_FATAL_FAILURE(replicas[i]->CheckPrefixOfWriter());
  }
  const NetworkCounters& counters = world.network().counters();
  EXPECT_EQ(counters.sent, counters.delivered + counters.dropped + world.network().in_flight());
  const TraceFields metrics{{"sent", result.outcome.records_written},
                            {"recoveries", result.outcome.recoveries},
                            {"records_lost_by_crashes", result.outcome.records_lost_by_crashes},
                            {"messages_sent", counters.sent},
                            {"messages_dropped", counters.dropped}};
  EXPECT_TRUE(world.Finish(/*ok=*/true, metrics).ok());
  result.hash = world.trace().hash();
  if (memory_sink) result.bytes = world.trace().bytes();
  return result;
}

RunResult RunInMemory(uint64_t seed, TraceLevel level = TraceLevel::kMessages) {
  return RunWorkload(seed, TraceWriter::ToMemory(HeaderFor(seed, level)), /*memory_sink=*/true);
}

uint64_t HashOf(std::string_view bytes) {
  Xxh64 hash;
  hash.Update(bytes);
  return hash.digest();
}

// Every run of a seed gives the same bytes: compare two.
TEST(DeterminismTest, SameSeedGivesByteIdenticalTracesInOneProcess) {
  const RunResult first = RunInMemory(1);
  const RunResult second = RunInMemory(1);
  ASSERT_FALSE(first.bytes.empty());
  EXPECT_EQ(first.hash, second.hash);
  EXPECT_EQ(first.hash, HashOf(first.bytes));
  EXPECT_TRUE(first.bytes == second.bytes) << "the traces differ in bytes";
  // The hash-only sink (long runs) computes the same hash without keeping the bytes.
  const RunResult hashed =
      RunWorkload(1, TraceWriter::HashOnly(HeaderFor(1, TraceLevel::kMessages)), false);
  EXPECT_EQ(hashed.hash, first.hash);
  std::printf(
      "seed 1: %zu trace bytes, hash %s, %lld records written, %lld recoveries, "
      "%lld records lost by crashes\n",
      first.bytes.size(), Xxh64::Hex(first.hash).c_str(),
      static_cast<long long>(first.outcome.records_written),
      static_cast<long long>(first.outcome.recoveries),
      static_cast<long long>(first.outcome.records_lost_by_crashes));
}

TEST(DeterminismTest, DifferentSeedsGiveDifferentTraces) {
  const RunResult one = RunInMemory(1);
  const RunResult two = RunInMemory(2);
  EXPECT_NE(one.hash, two.hash);
  EXPECT_NE(one.bytes, two.bytes);
  // Same header apart from the seed, yet the histories differ, not only the first line.
  EXPECT_NE(one.bytes.substr(one.bytes.find('\n')), two.bytes.substr(two.bytes.find('\n')));
}

// docs/trace-format.md: a state trace is the messages trace of the same run without msg_* lines
// (and with its own level in the header). The network's observer is installed only at the
// messages level, so this also proves that observing the network changes nothing.
TEST(DeterminismTest, StateTraceIsTheMessagesTraceWithoutMessageLines) {
  const RunResult messages = RunInMemory(3, TraceLevel::kMessages);
  const RunResult state = RunInMemory(3, TraceLevel::kState);
  std::istringstream lines(messages.bytes);
  std::string line, filtered;
  bool header = true;
  while (std::getline(lines, line)) {
    if (header) {
      const std::string from = "\"level\":\"messages\"";
      line.replace(line.find(from), from.size(), "\"level\":\"state\"");
      header = false;
    } else if (line.find(",\"ev\":\"msg_") != std::string::npos) {
      continue;
    }
    filtered += line + "\n";
  }
  EXPECT_LT(state.bytes.size(), messages.bytes.size());
  EXPECT_TRUE(filtered == state.bytes) << "the state trace is not the filtered messages trace";
}

// The trace tells the run's story: every fault, every recovery, every message accounted for.
TEST(DeterminismTest, TraceRecordsEveryFaultRecoveryAndMessage) {
  // Seed 2: its crashes tear unflushed records (seed 1's, since cuts hold messages instead of
  // dropping them, find every record flushed).
  const RunResult run = RunInMemory(2);
  Result<Trace> trace = ParseTrace(run.bytes);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  std::map<std::string, int> counts;
  std::set<uint64_t> sent, ended;
  std::map<std::string, int> drop_reasons;
  for (const TraceEvent& event : trace->events) {
    ++counts[event.ev];
    if (event.ev == "msg_send") {
      EXPECT_TRUE(sent.insert(event.fields.at("id").get<uint64_t>()).second) << "id sent twice";
    } else if (event.ev == "msg_hold") {
      EXPECT_TRUE(sent.count(event.fields.at("id").get<uint64_t>())) << "held before its send";
      EXPECT_FALSE(ended.count(event.fields.at("id").get<uint64_t>())) << "held after its end";
    } else if (event.ev == "msg_deliver" || event.ev == "msg_drop") {
      const uint64_t id = event.fields.at("id").get<uint64_t>();
      EXPECT_TRUE(sent.count(id)) << event.ev << " of message " << id << " before its send";
      EXPECT_TRUE(ended.insert(id).second) << "message " << id << " ended twice";
      if (event.ev == "msg_drop") ++drop_reasons[event.fields.at("reason").get<std::string>()];
    }
  }
  EXPECT_EQ(counts["crash"], 3);
  EXPECT_EQ(counts["restart"], 4);
  EXPECT_EQ(counts["shutdown"], 1);
  EXPECT_EQ(counts["partition"], 2);
  EXPECT_EQ(counts["heal"], 3);
  EXPECT_EQ(counts["slow"], 1);
  EXPECT_EQ(counts["recovered"], 3 + 4);  // first opens, then one per restart
  EXPECT_EQ(run.outcome.recoveries, 3 + 4);
  EXPECT_GT(counts["append"], 100);
  EXPECT_GT(counts["flush"], 100);
  EXPECT_GT(counts["timeout"], 0);
  EXPECT_GT(counts["msg_disconnect"], 0);
  EXPECT_GT(counts["msg_hold"], 0);  // the partitions' cuts hold what crosses them
  EXPECT_EQ(drop_reasons["link_cut"], 0) << "a cut drops nothing (docs/network.md)";
  EXPECT_GT(drop_reasons["node_down"], 0);
  EXPECT_EQ(sent.size(), static_cast<size_t>(counts["msg_send"]));
  EXPECT_LE(ended.size(), sent.size());
  // Unflushed records were lost by the crashes, and caught up again.
  EXPECT_GT(run.outcome.records_lost_by_crashes, 0);
  EXPECT_GT(run.outcome.records_written, 1000);
  EXPECT_EQ(trace->verdict.fields.at("metrics").at("sent").get<int64_t>(),
            run.outcome.records_written);
}

// The outcome checks of RunWorkload (replicas equal to the writer, flushed records kept) hold
// whatever the seed moves: fault times, latencies, losses, torn lengths. KSIM_DETERMINISM_SEEDS=N
// runs N seeds instead of 4.
TEST(DeterminismTest, OutcomeHoldsAcrossSeeds) {
  const char* text = std::getenv("KSIM_DETERMINISM_SEEDS");
  const uint64_t seeds = text != nullptr ? std::strtoull(text, nullptr, 10) : 4;
  int64_t lost = 0;
  for (uint64_t seed = 100; seed < 100 + seeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const RunResult run =
        RunWorkload(seed, TraceWriter::HashOnly(HeaderFor(seed, TraceLevel::kMessages)), false);
    ASSERT_FALSE(::testing::Test::HasFailure());
    ASSERT_EQ(run.outcome.recoveries, 3 + 4);
    lost += run.outcome.records_lost_by_crashes;
  }
  std::printf("%llu seeds, %lld records lost by crashes and caught up again\n",
              static_cast<unsigned long long>(seeds), static_cast<long long>(lost));
}

// --- Across processes ---------------------------------------------------------------------------
// The parent re-executes this binary running only DeterminismChild.WriteTraceForParent, with
// the seed and a trace path in the environment; the child writes the trace to that file (the
// file sink) and prints its hash. Nothing is shared but the binary and the seed.

constexpr char kChildSeedVar[] = "KSIM_DETERMINISM_CHILD_SEED";
constexpr char kChildTraceVar[] = "KSIM_DETERMINISM_CHILD_TRACE";
constexpr char kHashPrefix[] = "KSIM_TRACE_HASH=";

TEST(DeterminismChild, WriteTraceForParent) {
  const char* seed_text = std::getenv(kChildSeedVar);
  const char* path = std::getenv(kChildTraceVar);
  if (seed_text == nullptr || path == nullptr) {
    GTEST_SKIP() << "runs only as the child of SameSeedGivesTheSameTraceInAnotherProcess";
  }
  const uint64_t seed = std::strtoull(seed_text, nullptr, 10);
  Result<TraceWriter> trace = TraceWriter::ToFile(path, HeaderFor(seed, TraceLevel::kMessages));
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  const RunResult run = RunWorkload(seed, std::move(trace).value(), /*memory_sink=*/false);
  std::printf("%s%s\n", kHashPrefix, Xxh64::Hex(run.hash).c_str());
}

TEST(DeterminismTest, SameSeedGivesTheSameTraceInAnotherProcess) {
  char exe[4096];
  const ssize_t length = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  ASSERT_GT(length, 0);
  exe[length] = '\0';
  ksim::testing::TempDir dir;
  const std::string trace_path = dir.path() + "/child.jsonl";
  const std::string command = std::string(kChildSeedVar) + "=5 " + kChildTraceVar + "='" +
                              trace_path + "' '" + exe +
                              "' --gtest_filter=DeterminismChild.WriteTraceForParent 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) output.append(buffer, n);
  ASSERT_EQ(pclose(pipe), 0) << output;
  const size_t at = output.find(kHashPrefix);
  ASSERT_NE(at, std::string::npos) << output;
  const std::string child_hash = output.substr(at + sizeof(kHashPrefix) - 1, 16);

  const RunResult here = RunInMemory(5);
  EXPECT_EQ(child_hash, Xxh64::Hex(here.hash));
  std::ifstream file(trace_path, std::ios::binary);
  ASSERT_TRUE(file.good());
  const std::string child_bytes((std::istreambuf_iterator<char>(file)),
                                std::istreambuf_iterator<char>());
  EXPECT_EQ(child_bytes.size(), here.bytes.size());
  EXPECT_TRUE(child_bytes == here.bytes) << "the child's trace file differs in bytes";
}

}  // namespace
}  // namespace ksim::sim
