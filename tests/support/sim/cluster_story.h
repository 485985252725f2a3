// The story run shared by the story and determinism tests: a 3-broker cluster with topic frbook
// (one partition on brokers 1, 2, 3), a producer writing with acks=all throughout, the leader
// crashing (a torn power loss), a follower slowed past replica.lag.time.max.ms, the crashed
// broker restarting, and a final read of the whole partition. The trace ends with a verdict
// whose metrics count what happened to the records.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "tests/support/sim/cluster_test_util.h"

namespace ksim::sim::testing {

struct StoryOutcome {
  bool finished = false;  // every step ran to the end
  int64_t sent = 0;
  int64_t acked = 0;
  int64_t lost_acked = 0;
  uint64_t events = 0;     // event loop steps
  int64_t violations = 0;  // the invariant checker's
  uint64_t trace_hash = 0;
  uint64_t trace_lines = 0;
  Status committed;  // TraceWriter::Commit's answer
};

// Runs the story on `trace` (its header gives the seed) and writes the verdict.
inline StoryOutcome RunStory(TraceWriter trace, bool check_invariants = true,
                             TruncationPolicy truncation = TruncationPolicy::kLeaderEpoch,
                             VirtualDiskOptions disk = {}) {
  StoryOutcome outcome;
  ClusterOptions options;
  options.check_invariants = check_invariants;
  options.disk = disk;
  options.brokers = 3;
  options.truncation = truncation;
  // Long sessions: the slow follower keeps its session and leaves the ISR by the lag rule.
  options.config = {{"zookeeper.session.timeout.ms", "40000"}};
  ClusterSim sim(std::move(trace), options);
  Cluster& cluster = sim.cluster();
  const TopicPartition tp{"frbook", PartitionId(0)};
  ksim::testing::ClusterClientOptions patient;
  patient.request_timeout_us = 40 * kSecondUs;
  patient.produce_timeout_ms = 30000;

  auto run = [&]() -> bool {
    if (!sim.Start()) return false;
    TopicSpec topic{
        "frbook", 1, 3, {{PartitionId(0), {BrokerId(1), BrokerId(2), BrokerId(3)}}}, {}};
    if (!cluster.CreateTopicAndWait(topic).ok()) return false;
    auto& producer = sim.AddClient("p1", patient);
    if (!sim.ProduceAndWait(producer, tp, -1, 20)) return false;
    // The leader loses power; broker 2 takes over once broker 1's session ends.
    if (!cluster.CrashBroker(BrokerId(1), CrashOptions{true, false}).ok()) return false;
    producer.Produce(tp, -1, 10);
    if (!sim.WaitForLeader(tp, BrokerId(1), 90 * kSecondUs)) return false;
    if (!cluster.RunUntil([&] { return producer.idle(); }, 120 * kSecondUs)) return false;
    // A follower lags past 10 s and leaves the ISR, then catches up.
    if (!cluster.SlowBroker(BrokerId(3), 15 * kSecondUs, 30 * kSecondUs).ok()) return false;
    producer.Produce(tp, -1, 5);
    cluster.RunFor(45 * kSecondUs);
    // The crashed broker comes back, recovers its log and rejoins.
    if (!cluster.RestartBroker(BrokerId(1)).ok()) return false;
    if (!cluster.RunUntil(
            [&] {
              auto state = cluster.ZkPartitionState(tp);
              return producer.idle() && state && state->isr.size() == 3;
            },
            120 * kSecondUs)) {
      return false;
    }
    if (!sim.ProduceAndWait(producer, tp, -1, 5)) return false;
    ksim::testing::FetchResult read = sim.ReadAll(producer, tp);
    if (read.error != Errc::kNone) return false;
    for (const ksim::testing::ProducedRecord& r : producer.records()) {
      ++outcome.sent;
      if (r.fate != ksim::testing::RecordFate::kAcked) continue;
      ++outcome.acked;
      bool found = false;
      for (const ksim::testing::FetchedRecord& f : read.records) {
        found = found || (f.offset == r.offset && f.value == r.value);
      }
      if (!found) ++outcome.lost_acked;
    }
    return true;
  };
  outcome.finished = run();
  InvariantChecker* checker = cluster.checker();
  outcome.events = sim.world().loop().events_executed();
  const int64_t violations =
      checker == nullptr ? 0 : static_cast<int64_t>(checker->violations().size());
  TraceFields metrics{{"sent", outcome.sent},
                      {"acked", outcome.acked},
                      {"lost_acked", outcome.lost_acked},
                      {"invariant_violations", violations}};
  const bool ok = outcome.finished && outcome.lost_acked == 0 && violations == 0;
  outcome.committed = sim.world().Finish(ok, metrics);
  outcome.trace_hash = sim.world().trace().hash();
  outcome.trace_lines = sim.world().trace().lines();
  outcome.violations = violations;
  return outcome;
}

}  // namespace ksim::sim::testing
