#include "sim/world/world.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/trace_names.h"
#include "core/env/env.h"
#include "tests/support/core/temp_dir.h"

namespace ksim::sim {
namespace {

constexpr TimeUs kMs = 1000;

TraceHeader Header(uint64_t seed = 11) {
  return TraceHeader{"world-test", "base", seed, TraceLevel::kMessages};
}

WorldOptions FixedLatency(TimeUs latency_us = 2 * kMs) {
  WorldOptions options;
  options.default_link = LinkSpec{latency_us, latency_us, 0, 0};
  options.network.disconnect_timeout_us = 50 * kMs;
  return options;
}

// The trace so far, one JSON object per event line (the header skipped).
std::vector<nlohmann::ordered_json> Events(const World& world) {
  std::vector<nlohmann::ordered_json> events;
  std::istringstream lines(world.trace().bytes());
  std::string line;
  std::getline(lines, line);  // header
  while (std::getline(lines, line)) events.push_back(nlohmann::ordered_json::parse(line));
  return events;
}

std::vector<std::string> EvNames(const World& world) {
  std::vector<std::string> names;
  for (const nlohmann::ordered_json& event : Events(world)) names.push_back(event["ev"]);
  return names;
}

Message Ping(int64_t size = 10) { return Message{"Ping", {}, nullptr, size}; }

// A world of a client `c1` and two brokers with disks.
class WorldTest : public ::testing::Test {
 protected:
  WorldTest() : world_(11, TraceWriter::ToMemory(Header()), FixedLatency()) {
    EXPECT_TRUE(world_.AddNode("c1").ok());
    for (const char* name : {"broker-1", "broker-2"}) {
      EXPECT_TRUE(world_.AddNode(name, NodeOptions{VirtualDiskOptions{}}).ok());
    }
    for (const char* name : {"c1", "broker-1", "broker-2"}) Record(name);
  }

  // Installs a handler on `name` that records what arrives.
  void Record(const std::string& name) {
    world_.node(name).Listen(NetworkHandler{
        [this, name](Delivery d) { received_.push_back(name + "<-" + d.message.kind); },
        [this, name](const Disconnect&) { received_.push_back(name + ":disconnect"); }});
  }

  World world_;
  std::vector<std::string> received_;
};

TEST_F(WorldTest, NodesAreLinkedToEveryOtherAndOnlyStorageNodesHaveDisks) {
  EXPECT_EQ(world_.nodes().size(), 3u);
  EXPECT_EQ(world_.node("c1").disk(), nullptr);
  EXPECT_NE(world_.node("broker-1").disk(), nullptr);
  EXPECT_NE(world_.node("broker-1").disk(), world_.node("broker-2").disk());
  for (const auto& from : world_.nodes()) {
    for (const auto& to : world_.nodes()) {
      if (from != to) {
        EXPECT_TRUE(world_.topology().CanSend(from->id(), to->id()));
      }
    }
  }
  EXPECT_EQ(world_.node(world_.node("broker-2").id()).name(), "broker-2");
  EXPECT_EQ(world_.FindNode("broker-9"), nullptr);
  EXPECT_EQ(world_.AddNode("c1").status().code(), Errc::kAlreadyExists);
  EXPECT_EQ(world_.AddNode("").status().code(), Errc::kInvalidArgument);
  EXPECT_EQ(node::Broker(BrokerId(7)), "broker-7");
}

// Streams are named: a node's disk draws exactly what a disk on Seeds(seed)'s "disk/<name>"
// stream draws, whatever other nodes exist.
TEST(WorldStreamsTest, DiskStreamIsNamedForItsNode) {
  VirtualDiskOptions options;
  options.write_latency = {1, 1'000'000};
  World world(42, TraceWriter::HashOnly(Header(42)), FixedLatency());
  ASSERT_TRUE(world.AddNode("zk").ok());
  ASSERT_TRUE(world.AddNode("broker-3", NodeOptions{options}).ok());
  VirtualDisk alone(Seeds(42).StreamFor("disk/broker-3"), options);
  for (Env* env : {static_cast<Env*>(world.node("broker-3").disk()), static_cast<Env*>(&alone)}) {
    auto file = env->OpenFile("/f", OpenMode::kCreateIfMissing);
    ASSERT_TRUE(file.ok());
    for (int i = 0; i < 5; ++i) ASSERT_TRUE((*file)->Append(ToBytes("x")).ok());
  }
  EXPECT_EQ(world.node("broker-3").disk()->TakeBusyTime(), alone.TakeBusyTime());
}

TEST_F(WorldTest, NetworkEventsAreTracedAsMessageEvents) {
  const SendResult sent = world_.node("c1").Send("broker-1", Ping(123));
  world_.loop().RunUntil(10 * kMs);
  ASSERT_EQ(received_, std::vector<std::string>{"broker-1<-Ping"});
  const std::vector<nlohmann::ordered_json> events = Events(world_);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].dump(), R"({"t_us":0,"node":"c1","ev":"msg_send","id":)" +
                                  std::to_string(sent.id) +
                                  R"(,"from":"c1","to":"broker-1","kind":"Ping","size_bytes":123,)"
                                  R"("conn":1,"deliver_at_us":2000,"retransmits":0})");
  EXPECT_EQ(events[1]["ev"], "msg_deliver");
  EXPECT_EQ(events[1]["node"], "broker-1");
  EXPECT_EQ(events[1]["t_us"], 2000);
  EXPECT_EQ(events[1]["id"], sent.id);
  EXPECT_FALSE(events[1].contains("deliver_at_us"));
}

TEST(WorldLevelsTest, StateLevelTracesNoMessages) {
  World world(5, TraceWriter::ToMemory(TraceHeader{"w", "base", 5, TraceLevel::kState}),
              FixedLatency());
  ASSERT_TRUE(world.AddNode("a").ok());
  ASSERT_TRUE(world.AddNode("b").ok());
  world.node("b").Listen(NetworkHandler{[](Delivery) {}, nullptr});
  world.node("a").Send("b", Ping());
  world.loop().RunUntil(10 * kMs);
  EXPECT_EQ(world.network().counters().delivered, 1u);
  EXPECT_EQ(world.trace().lines(), 1u);  // the header only
}

TEST(WorldTapTest, TapsSeeEveryStateEventInOrderButNoMessages) {
  // The state level keeps no message events in the trace, and the tap sees none at any level.
  World world(5, TraceWriter::ToMemory(Header(5)), FixedLatency());
  ASSERT_TRUE(world.AddNode("a").ok());
  ASSERT_TRUE(world.AddNode("b").ok());
  world.node("b").Listen(NetworkHandler{[](Delivery) {}, nullptr});
  std::vector<std::string> first;
  std::vector<std::string> second;
  world.AddTraceTap(
      [&](TimeUs t_us, std::string_view node, std::string_view ev, const EventFields& fields) {
        first.push_back(std::to_string(t_us) + " " + std::string(node) + " " + std::string(ev) +
                        (fields.json().contains("k") ? " k=" + fields.json()["k"].dump() : ""));
      });
  world.AddTraceTap([&](TimeUs, std::string_view, std::string_view ev, const EventFields&) {
    // Added second, told second: the first tap has already seen this event.
    second.push_back(std::string(ev) + "/" + std::to_string(first.size()));
  });
  world.Trace("a", "custom", EventFields{{"k", 3}});
  world.node("a").Send("b", Ping());
  world.loop().RunUntil(10 * kMs);
  ASSERT_TRUE(world.CrashNode("b").ok());
  EXPECT_EQ(first, (std::vector<std::string>{"0 a custom k=3", "10000 b crash"}));
  EXPECT_EQ(second, (std::vector<std::string>{"custom/1", "crash/2"}));
  // The messages level wrote the send and deliver lines; the taps saw neither.
  EXPECT_NE(world.trace().bytes().find("msg_deliver"), std::string::npos);
}

TEST_F(WorldTest, CrashDropsInFlightCancelsTimersRemovesHandlerAndLosesUnsyncedBytes) {
  Node& broker = world_.node("broker-1");
  std::vector<std::string> seen;
  broker.AddLifecycleListener([&](NodeLifecycle event) {
    // Told after the fact: the node is down and its disk already restarted.
    seen.push_back(std::string(NodeLifecycleName(event)) + (broker.up() ? " up" : " down") +
                   " gen " + std::to_string(broker.disk()->generation()));
  });
  auto file = broker.disk()->OpenFile("/data", OpenMode::kCreateIfMissing);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append(ToBytes("synced")).ok());
  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE(broker.disk()->SyncDir("/").ok());
  ASSERT_TRUE((*file)->Append(ToBytes("+unsynced")).ok());
  bool timer_ran = false;
  broker.Schedule(5 * kMs, [&] { timer_ran = true; });
  EXPECT_EQ(broker.pending_timers(), 1u);
  world_.node("c1").Send("broker-1", Ping());

  world_.loop().RunUntil(1 * kMs);
  ASSERT_TRUE(world_.CrashNode("broker-1", CrashOptions{}).ok());
  EXPECT_FALSE(broker.up());
  EXPECT_EQ(seen, std::vector<std::string>{"crash down gen 1"});
  EXPECT_EQ(broker.pending_timers(), 0u);
  world_.loop().RunUntil(20 * kMs);
  EXPECT_FALSE(timer_ran);
  EXPECT_TRUE(received_.empty());
  auto contents = ReadWholeFile(*broker.disk(), "/data");
  ASSERT_TRUE(contents.ok());
  EXPECT_EQ(AsChars(*contents), "synced");

  const std::vector<nlohmann::ordered_json> events = Events(world_);
  ASSERT_EQ(events.size(), 3u);
  // The crash names the directory whose unsynced bytes it took: the root, /data's.
  EXPECT_EQ(events[1].dump(),
            R"({"t_us":1000,"node":"broker-1","ev":"crash","tear":false,"corrupt":false,)"
            R"("unsynced":["/"]})");
  EXPECT_EQ(events[2]["ev"], "msg_drop");  // after the crash line that caused it
  EXPECT_EQ(events[2]["reason"], "node_down");

  // A restarted node refuses connections until its new process listens: c1 hears of it one
  // round trip later (4 ms, not the 50 ms timeout), and that notice covers the crash's break.
  ASSERT_TRUE(world_.RestartNode("broker-1").ok());
  EXPECT_EQ(broker.incarnation(), 2u);
  world_.node("c1").Send("broker-1", Ping());
  EXPECT_EQ(Events(world_).back()["reason"], "refused");
  world_.loop().RunUntil(40 * kMs);
  EXPECT_EQ(received_, std::vector<std::string>{"c1:disconnect"});
  Record("broker-1");
  world_.node("c1").Send("broker-1", Ping());
  world_.loop().RunUntil(100 * kMs);
  EXPECT_EQ(received_, (std::vector<std::string>{"c1:disconnect", "broker-1<-Ping"}));
}

TEST_F(WorldTest, APeerHearsOfAProcessExitWithinOneLatencyAndIsRefusedUntilARestart) {
  // A clean shutdown or a halt ends the process, not the host: the kernel sends FIN or RST on
  // each connection (issue 17, R3). The link latency is 2 ms, the disconnect timeout 50 ms.
  for (const char* name : {"broker-1", "broker-2"}) world_.node("c1").Send(name, Ping());
  world_.loop().RunUntil(5 * kMs);
  ASSERT_TRUE(world_.CleanShutdownNode("broker-1").ok());
  ASSERT_TRUE(world_.HaltNode("broker-2", "log directory failed").ok());
  world_.loop().RunUntil(5 * kMs + 2 * kMs);
  EXPECT_EQ(received_, (std::vector<std::string>{"broker-1<-Ping", "broker-2<-Ping",
                                                 "c1:disconnect", "c1:disconnect"}));
  // A send to a node whose process exited is refused: told one round trip later.
  received_.clear();
  world_.node("c1").Send("broker-1", Ping());
  EXPECT_EQ(Events(world_).back()["reason"], "refused");
  world_.loop().RunUntil(world_.Now() + 4 * kMs);
  EXPECT_EQ(received_, std::vector<std::string>{"c1:disconnect"});
  // Nothing leaves a node without a process; a restarted one listens again.
  world_.node("broker-2").Send("c1", Ping());
  EXPECT_EQ(Events(world_).back()["reason"], "sender_down");
  ASSERT_TRUE(world_.RestartNode("broker-1").ok());
  Record("broker-1");
  world_.node("c1").Send("broker-1", Ping());
  world_.loop().RunUntil(world_.Now() + 60 * kMs);
  EXPECT_EQ(received_, (std::vector<std::string>{"c1:disconnect", "broker-1<-Ping"}));
}

TEST_F(WorldTest, CleanShutdownLetsTheProcessCloseThenKeepsEverything) {
  Node& broker = world_.node("broker-2");
  std::unique_ptr<File> file = broker.disk()->OpenFile("/d", OpenMode::kCreateIfMissing).value();
  ASSERT_TRUE(file->Append(ToBytes("written")).ok());
  bool closed = false;
  broker.AddLifecycleListener([&](NodeLifecycle event) {
    if (event != NodeLifecycle::kShutdown) return;
    // Told before: the node is up and its files still live.
    EXPECT_TRUE(broker.up());
    EXPECT_TRUE(file->Append(ToBytes("+closing")).ok());
    closed = true;
  });
  broker.Schedule(5 * kMs, [] { FAIL() << "a timer of a shut-down process ran"; });
  ASSERT_TRUE(world_.CleanShutdownNode("broker-2").ok());
  EXPECT_TRUE(closed);
  EXPECT_FALSE(broker.up());
  EXPECT_FALSE(file->Append(ToBytes("late")).ok());  // stale handle
  world_.loop().RunUntil(10 * kMs);
  auto contents = ReadWholeFile(*broker.disk(), "/d");
  ASSERT_TRUE(contents.ok());
  EXPECT_EQ(AsChars(*contents), "written+closing");
  EXPECT_EQ(EvNames(world_), std::vector<std::string>{"shutdown"});
}

TEST_F(WorldTest, RestartTellsListenersWithTheNodeUp) {
  Node& broker = world_.node("broker-1");
  std::vector<std::string> seen;
  broker.AddLifecycleListener([&](NodeLifecycle event) {
    seen.push_back(std::string(NodeLifecycleName(event)) + (broker.up() ? " up" : " down"));
    if (event == NodeLifecycle::kRestart) broker.Schedule(1, [] {});  // allowed again
  });
  ASSERT_TRUE(world_.CrashNode("broker-1", CrashOptions{true, true}).ok());
  ASSERT_TRUE(world_.RestartNode("broker-1").ok());
  ASSERT_TRUE(world_.CleanShutdownNode("broker-1").ok());
  ASSERT_TRUE(world_.RestartNode("broker-1").ok());
  EXPECT_EQ(seen,
            (std::vector<std::string>{"crash down", "restart up", "shutdown up", "restart up"}));
  EXPECT_EQ(broker.incarnation(), 3u);
  const std::vector<nlohmann::ordered_json> events = Events(world_);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0]["tear"], true);
  EXPECT_EQ(events[0]["corrupt"], true);
  EXPECT_EQ(events[1].dump(), R"({"t_us":0,"node":"broker-1","ev":"restart","incarnation":2})");
  EXPECT_EQ(events[3]["incarnation"], 3);
}

TEST_F(WorldTest, RefusedFaultsChangeAndTraceNothing) {
  EXPECT_EQ(world_.CrashNode("broker-9").code(), Errc::kNotFound);
  EXPECT_EQ(world_.RestartNode("broker-1").code(), Errc::kInvalidArgument);  // it is up
  EXPECT_EQ(world_.CrashNode("broker-1", CrashOptions{false, true}).code(),
            Errc::kInvalidArgument);  // corruption needs tearing
  ASSERT_TRUE(world_.CrashNode("broker-1").ok());
  EXPECT_EQ(world_.CrashNode("broker-1").code(), Errc::kInvalidArgument);
  EXPECT_EQ(world_.CleanShutdownNode("broker-1").code(), Errc::kInvalidArgument);
  EXPECT_EQ(world_.Partition({{"c1"}, {"nobody"}}).code(), Errc::kNotFound);
  EXPECT_EQ(world_.Partition({{"c1"}, {"c1", "broker-2"}}).code(), Errc::kInvalidArgument);
  EXPECT_EQ(world_.SlowNode("c1", -1, 10).code(), Errc::kInvalidArgument);
  EXPECT_EQ(world_.Isolate("nobody").code(), Errc::kNotFound);
  EXPECT_EQ(world_.InjectDiskFault("c1", DiskFault::kSyncError, FaultPersistence::kOnce).code(),
            Errc::kInvalidArgument);  // no disk
  EXPECT_EQ(EvNames(world_), std::vector<std::string>{"crash"});
  EXPECT_TRUE(world_.topology().CanSend(world_.node("c1").id(), world_.node("broker-2").id()));
}

TEST_F(WorldTest, NetworkFaultsPassThroughAndAreTraced) {
  ASSERT_TRUE(world_.Partition({{"c1"}, {"broker-1", "broker-2"}}, /*one_way=*/true).ok());
  const NodeId c1 = world_.node("c1").id(), b1 = world_.node("broker-1").id();
  EXPECT_FALSE(world_.topology().CanSend(c1, b1));
  EXPECT_TRUE(world_.topology().CanSend(b1, c1));
  world_.Heal();
  EXPECT_TRUE(world_.topology().CanSend(c1, b1));
  ASSERT_TRUE(world_.Isolate("broker-2").ok());
  EXPECT_FALSE(world_.topology().CanSend(b1, world_.node("broker-2").id()));
  world_.Heal();
  ASSERT_TRUE(world_.SlowNode("broker-1", 30 * kMs, 100 * kMs).ok());
  world_.node("broker-1").Send("c1", Ping());
  world_.loop().RunUntil(31 * kMs);
  EXPECT_TRUE(received_.empty());
  world_.loop().RunUntil(32 * kMs);
  EXPECT_EQ(received_, std::vector<std::string>{"c1<-Ping"});
  ASSERT_TRUE(
      world_.InjectDiskFault("broker-2", DiskFault::kWriteError, FaultPersistence::kUntilCleared)
          .ok());
  EXPECT_FALSE(world_.node("broker-2").disk()->CreateDir("/x").ok());

  std::vector<nlohmann::ordered_json> faults;
  for (const nlohmann::ordered_json& event : Events(world_)) {
    if (!event["ev"].get<std::string>().starts_with("msg_")) faults.push_back(event);
  }
  ASSERT_EQ(faults.size(), 6u);
  EXPECT_EQ(
      faults[0].dump(),
      R"({"t_us":0,"node":"world","ev":"partition","sides":[["c1"],["broker-1","broker-2"]],"one_way":true})");
  EXPECT_EQ(faults[1].dump(), R"({"t_us":0,"node":"world","ev":"heal"})");
  EXPECT_EQ(faults[2].dump(), R"({"t_us":0,"node":"broker-2","ev":"isolate"})");
  EXPECT_EQ(faults[4].dump(),
            R"({"t_us":0,"node":"broker-1","ev":"slow","extra_delay_us":30000,"for_us":100000})");
  EXPECT_EQ(
      faults[5].dump(),
      R"({"t_us":32000,"node":"broker-2","ev":"disk_fault","fault":"write_error","once":false})");
}

TEST(WorldFinishTest, FinishWritesTheVerdictAndCommitsAFileTrace) {
  ksim::testing::TempDir dir;
  const std::string path = dir.path() + "/run.jsonl";
  {
    auto trace = TraceWriter::ToFile(path, Header(3));
    ASSERT_TRUE(trace.ok());
    World world(3, std::move(trace).value(), FixedLatency());
    ASSERT_TRUE(world.AddNode("zk").ok());
    world.loop().RunUntil(7 * kMs);
    world.Trace("zk", "started");
    ASSERT_TRUE(world.Finish(true, TraceFields{{"sent", 0}}).ok());
  }
  Result<Trace> trace = ReadTraceFile(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->header.seed, 3u);
  ASSERT_EQ(trace->events.size(), 1u);
  EXPECT_EQ(trace->events[0].ev, "started");
  EXPECT_EQ(trace->events[0].t_us, 7 * kMs);
  EXPECT_TRUE(trace->ok());
  EXPECT_EQ(trace->verdict.t_us, 7 * kMs);
}

}  // namespace
}  // namespace ksim::sim
