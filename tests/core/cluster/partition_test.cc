// Partition: the behaviours Kafka's PartitionTest, ReplicaManagerTest and IsrExpirationTest check
// for one replica's state (ISR shrink after replica.lag.time.max.ms and not before, the caught-up
// rules before 0.10.2 and from it (KAFKA-4485), ISR expansion at the HW, HW = min LEO over the ISR
// and never decreasing, the acks rules with min.insync.replicas, stale LeaderAndIsr), plus
// KIP-101/279: leader epochs stamped and cached, the OffsetsForLeaderEpoch answer, the follower's
// truncation decision, and KIP-101's scenario 1 played by hand on two replicas (each a Partition
// over a real Log in a temp directory): the high-watermark policy loses an acknowledged record, the
// leader-epoch policy keeps it.
#include "core/cluster/partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/env/posix_env.h"
#include "tests/support/core/log_test_util.h"
#include "tests/support/core/release_param.h"
#include "tests/support/core/temp_dir.h"

namespace ksim {
namespace {

using testing::MakeBatch;
using testing::OffsetsIn;

constexpr int64_t kStartMs = 1'600'000'000'000;
constexpr int64_t kLagMs = 10000;

const BrokerId kB1(1);
const BrokerId kB2(2);
const BrokerId kB3(3);

// A batch of `count` records at `base` (offsets are restamped by a leader's append).
Bytes Batch(int64_t base, int count, LeaderEpoch epoch = kNoPartitionLeaderEpoch) {
  std::vector<std::string> values;
  for (int i = 0; i < count; ++i) values.push_back("m" + std::to_string(base + i));
  return MakeBatch(Offset(base), values, kNoTimestamp, epoch);
}

struct Event {
  std::string ev;
  nlohmann::ordered_json fields;
};

// One broker's replica of t-0: its Log, its Partition and the events the Partition emitted.
struct Replica {
  BrokerId id;
  std::string dir;
  std::unique_ptr<Log> log;
  std::unique_ptr<Partition> partition;
  std::vector<Event> events;

  Partition& p() { return *partition; }
  std::vector<Event> Named(const std::string& ev) const {
    std::vector<Event> out;
    for (const Event& e : events) {
      if (e.ev == ev) out.push_back(e);
    }
    return out;
  }
};

class PartitionTest : public ::testing::Test {
 protected:
  PartitionTest() : clock_(kStartMs * kUsPerMs) {}

  LogConfig Config() const {
    LogConfig config;
    config.max_index_size_bytes = 4096;
    return config;
  }

  Replica& AddReplica(BrokerId id, PartitionConfig config = {}) {
    auto replica = std::make_unique<Replica>();
    replica->id = id;
    replica->dir = JoinPath(JoinPath(tmp_.path(), "broker-" + ToString(id)), "t-0");
    auto log = Log::Open(env_, clock_, replica->dir, Config());
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    replica->log = std::move(log).value();
    replicas_.push_back(std::move(replica));
    Replica& r = *replicas_.back();
    OpenPartition(r, Offset(0), config);
    return r;
  }

  // A Partition over `r`'s log, with the epoch cache read back from disk (a broker restart).
  void OpenPartition(Replica& r, Offset checkpointed_hw, PartitionConfig config = {}) {
    r.partition.reset();
    auto epochs = LeaderEpochCache::Open(env_, r.dir);
    ASSERT_TRUE(epochs.ok()) << epochs.status().ToString();
    config.replica_lag_time_max_ms = kLagMs;
    auto producers = Partition::LoadProducerState(env_, *r.log, clock_.NowMs());
    ASSERT_TRUE(producers.ok()) << producers.status().ToString();
    r.partition = std::make_unique<Partition>(
        TopicPartition{"t", PartitionId(0)}, r.id, *r.log, std::move(epochs).value(),
        std::move(producers).value(), clock_, config, checkpointed_hw,
        [&r](std::string_view ev, const EventFields& fields) {
          r.events.push_back({std::string(ev), fields.json()});
        });
  }

  static PartitionConfig AtRelease(KafkaRelease release) {
    PartitionConfig config;
    config.release = release;
    return config;
  }

  static LeaderAndIsrPartitionState State(BrokerId leader, int32_t epoch, std::vector<BrokerId> isr,
                                          std::vector<BrokerId> replicas = {kB1, kB2, kB3},
                                          int32_t zk_version = 0) {
    LeaderAndIsrPartitionState state;
    state.tp = {"t", PartitionId(0)};
    state.leader = leader;
    state.leader_epoch = LeaderEpoch(epoch);
    state.isr = std::move(isr);
    state.replicas = std::move(replicas);
    state.zk_version = zk_version;
    return state;
  }

  static void MakeLeader(Replica& r, const LeaderAndIsrPartitionState& state) {
    auto made = r.p().MakeLeader(state);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    ASSERT_TRUE(*made);
  }

  static LogAppendInfo Produce(Replica& leader, int count, int16_t acks = 1) {
    Bytes batch = Batch(0, count);
    auto info = leader.p().AppendAsLeader(batch, acks);
    EXPECT_TRUE(info.ok()) << info.status().ToString();
    return info.ok() ? *info : LogAppendInfo{};
  }

  // One fetch round of `follower` from `leader`, as the broker would carry it: the leader reads
  // from the follower's LEO and records the fetch; an ISR expansion it proposes is written
  // "to ZooKeeper" at once; the follower appends with the leader's HW.
  static void Fetch(Replica& leader, Replica& follower) {
    const Offset fetch_offset = follower.p().log_end_offset();
    auto data = leader.p().Read(fetch_offset, 1 << 20, /*from_follower=*/true);
    ASSERT_TRUE(data.ok()) << data.status().ToString();
    auto expanded = leader.p().UpdateFollowerFetch(follower.id, fetch_offset);
    if (expanded) leader.p().ApplyIsrChange(*expanded, leader.p().zk_version() + 1);
    auto appended = follower.p().AppendAsFollower(data->records, leader.p().high_watermark(),
                                                  leader.p().log_start_offset());
    ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  }

  ManualClock clock_;
  PosixEnv env_;
  ksim::testing::TempDir tmp_;
  std::vector<std::unique_ptr<Replica>> replicas_;
};

// ---- Names ------------------------------------------------------------------------------------

TEST(TruncationPolicyTest, ParsesTheScenarioNames) {
  EXPECT_EQ(*ParseTruncationPolicy("high-watermark"), TruncationPolicy::kHighWatermark);
  EXPECT_EQ(*ParseTruncationPolicy("leader-epoch"), TruncationPolicy::kLeaderEpoch);
  EXPECT_EQ(TruncationPolicyName(TruncationPolicy::kLeaderEpoch), "leader-epoch");
  auto bad = ParseTruncationPolicy("epoch");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Errc::kInvalidArgument);
  EXPECT_EQ(ReplicaRoleName(ReplicaRole::kFollower), "follower");
}

// ---- Role changes -------------------------------------------------------------------------------

TEST_F(PartitionTest, MakeLeaderRecordsItsEpochAtTheLogEndOffsetAndStampsBatches) {
  Replica& r1 = AddReplica(kB1);
  MakeLeader(r1, State(kB1, 0, {kB1}));
  Produce(r1, 3);
  MakeLeader(r1, State(kB1, 2, {kB1}));
  Produce(r1, 2);

  EXPECT_EQ(r1.p().epochs().entries(),
            (std::vector<EpochEntry>{{LeaderEpoch(0), Offset(0)}, {LeaderEpoch(2), Offset(3)}}));
  auto read = r1.p().Read(Offset(0), 1 << 20, /*from_follower=*/true);
  ASSERT_TRUE(read.ok());
  std::vector<int32_t> stamped;
  for (const BatchHeader& h : testing::BatchesIn(read->records)) {
    stamped.push_back(h.partition_leader_epoch.value());
  }
  EXPECT_EQ(stamped, (std::vector<int32_t>{0, 2}));
  // The cache is on disk: a restart reads the same entries back.
  OpenPartition(r1, r1.p().high_watermark());
  EXPECT_EQ(r1.p().latest_epoch(), LeaderEpoch(2));
  EXPECT_EQ(r1.p().epochs().entries().size(), 2u);

  auto leaders = r1.Named("become_leader");
  ASSERT_EQ(leaders.size(), 2u);
  EXPECT_EQ(leaders[0].fields.dump(),
            R"({"topic":"t","partition":0,"epoch":0,"isr":[1],"replicas":[1,2,3],"leo":0,)"
            R"("log_start_offset":0,"hw":0})");
  auto appends = r1.Named("append");
  ASSERT_EQ(appends.size(), 2u);
  EXPECT_EQ(appends[1].fields.dump(),
            R"({"topic":"t","partition":0,"first_offset":3,"last_offset":4,"leo":5,"epoch":2,)"
            R"("role":"leader","values":["m0","m1"]})");
}

TEST_F(PartitionTest, StaleLeaderAndIsrIsIgnored) {
  Replica& r1 = AddReplica(kB1);
  MakeLeader(r1, State(kB1, 5, {kB1, kB2}));
  auto older = r1.p().MakeLeader(State(kB1, 4, {kB1}));
  ASSERT_TRUE(older.ok());
  EXPECT_FALSE(*older);
  auto same = r1.p().MakeLeader(State(kB1, 5, {kB1}));
  ASSERT_TRUE(same.ok());
  EXPECT_FALSE(*same);
  EXPECT_FALSE(r1.p().MakeFollower(State(kB2, 4, {kB2})));
  EXPECT_TRUE(r1.p().is_leader());
  EXPECT_EQ(r1.p().leader_epoch(), LeaderEpoch(5));
  EXPECT_EQ(r1.p().isr(), (std::vector<BrokerId>{kB1, kB2}));
  EXPECT_EQ(r1.Named("become_leader").size(), 1u);
}

// Partition.makeFollower: 0.10.0.1 to 2.0.0 redo nothing for the same leader whatever the epoch
// (an epoch missed meanwhile included); 2.1.0 (KAFKA-7395) redoes it at any newer epoch.
class MakeFollowerTest : public PartitionTest,
                         public ::testing::WithParamInterface<KafkaRelease> {};

TEST_P(MakeFollowerTest, SameLeaderAgainIsRedoneOnlyFrom21) {
  const bool redo = GetParam() >= KafkaRelease::k2_1;
  Replica& r2 = AddReplica(kB2, AtRelease(GetParam()));
  EXPECT_TRUE(r2.p().MakeFollower(State(kB1, 1, {kB1, kB2})));
  EXPECT_EQ(r2.p().leader(), kB1);
  EXPECT_TRUE(r2.p().isr().empty());                           // only the leader tracks the ISR
  EXPECT_EQ(r2.p().MakeFollower(State(kB1, 2, {kB1})), redo);  // same leader, next epoch
  EXPECT_EQ(r2.p().leader_epoch(), LeaderEpoch(2));
  EXPECT_FALSE(r2.p().missed_epochs().has_value());  // one epoch apart misses nothing
  EXPECT_EQ(r2.p().MakeFollower(State(kB1, 4, {kB1, kB2})), redo);  // epoch 3 was missed
  EXPECT_EQ(r2.p().leader_epoch(), LeaderEpoch(4));
  // Before 2.1 it kept following without truncating past epoch 3 (KAFKA-7164's case).
  ASSERT_EQ(r2.p().missed_epochs().has_value(), !redo);
  if (!redo) {
    EXPECT_EQ(r2.p().missed_epochs()->followed, LeaderEpoch(2));
    EXPECT_EQ(r2.p().missed_epochs()->told, LeaderEpoch(4));
  }
  EXPECT_FALSE(r2.p().MakeFollower(State(kB1, 4, {kB1, kB2})));  // stale: the same epoch
  EXPECT_TRUE(r2.p().MakeFollower(State(kB3, 5, {kB3, kB2})));   // new leader
  EXPECT_FALSE(r2.p().missed_epochs().has_value());              // following anew
  EXPECT_EQ(r2.Named("become_follower").size(), redo ? 4u : 2u);
  EXPECT_EQ(r2.Named("become_follower").back().fields.dump(),
            R"({"topic":"t","partition":0,"leader":3,"epoch":5,"leo":0,"log_start_offset":0,)"
            R"("hw":0})");
}

INSTANTIATE_TEST_SUITE_P(Releases, MakeFollowerTest,
                         ::testing::Values(KafkaRelease::k0_10_0, KafkaRelease::k2_0,
                                           KafkaRelease::k2_1),
                         ksim::testing::ReleaseParamName);

TEST_F(PartitionTest, NotLeaderErrorsWhenFollowingOrStopped) {
  Replica& r2 = AddReplica(kB2);
  Bytes batch = Batch(0, 1);
  EXPECT_EQ(r2.p().AppendAsLeader(batch, 1).status().code(), Errc::kNotLeaderForPartition);
  EXPECT_EQ(r2.p().AppendAsFollower(batch, Offset(0), Offset(0)).status().code(),
            Errc::kNotLeaderForPartition);
  ASSERT_TRUE(r2.p().MakeFollower(State(kB1, 0, {kB1, kB2})));
  EXPECT_EQ(r2.p().Read(Offset(0), 100, false).status().code(), Errc::kNotLeaderForPartition);
  EXPECT_EQ(r2.p().AppendAsLeader(batch, 1).status().code(), Errc::kNotLeaderForPartition);
  EXPECT_FALSE(r2.p().UpdateFollowerFetch(kB3, Offset(0)).has_value());
  EXPECT_FALSE(r2.p().ProposeIsrShrink().has_value());
  r2.p().Stop();
  EXPECT_EQ(r2.p().role(), ReplicaRole::kNone);
  EXPECT_EQ(r2.p().AppendAsFollower(batch, Offset(0), Offset(0)).status().code(),
            Errc::kNotLeaderForPartition);
}

TEST_F(PartitionTest, LeaderRefusesTruncationAndStaleIsrWritesAreIgnored) {
  Replica& r1 = AddReplica(kB1);
  MakeLeader(r1, State(kB1, 0, {kB1, kB2}, {kB1, kB2}));
  Produce(r1, 3);
  EXPECT_EQ(r1.p().TruncateTo(Offset(1), "stale"), Errc::kNotLeaderForPartition);
  EXPECT_EQ(r1.p().TruncateFullyAndStartAt(Offset(9)), Errc::kNotLeaderForPartition);
  EXPECT_EQ(r1.p().log_end_offset(), Offset(3));

  clock_.AdvanceMs(kLagMs + 1);
  auto shrunk = r1.p().ProposeIsrShrink();
  ASSERT_TRUE(shrunk.has_value());
  // A new LeaderAndIsr (epoch 1, the controller's ISR) arrives before the write's answer.
  MakeLeader(r1, State(kB1, 1, {kB1, kB2}, {kB1, kB2}, 5));
  EXPECT_FALSE(r1.p().isr_change_in_flight());
  r1.p().ApplyIsrChange(*shrunk, 6);
  EXPECT_EQ(r1.p().isr(), (std::vector<BrokerId>{kB1, kB2}));
  EXPECT_EQ(r1.p().zk_version(), 5);
  EXPECT_TRUE(r1.Named("isr_shrink").empty());
}

// ---- ISR ---------------------------------------------------------------------------------------

// IsrExpirationTest.testIsrExpirationForStuckFollowers: a follower that never catches up leaves
// the ISR once replica.lag.time.max.ms has passed, and not a millisecond before.
TEST_F(PartitionTest, StuckFollowerLeavesIsrAfterLagTimeNotBefore) {
  Replica& r1 = AddReplica(kB1);
  MakeLeader(r1, State(kB1, 0, {kB1, kB2}, {kB1, kB2}));
  Produce(r1, 4);
  r1.p().UpdateFollowerFetch(kB2, Offset(0));  // fetches, never gets anywhere
  clock_.AdvanceMs(kLagMs);
  EXPECT_FALSE(r1.p().ProposeIsrShrink().has_value());
  r1.p().UpdateFollowerFetch(kB2, Offset(1));  // still behind the LEO it saw last time
  clock_.AdvanceMs(1);
  auto shrunk = r1.p().ProposeIsrShrink();
  ASSERT_TRUE(shrunk.has_value());
  EXPECT_EQ(*shrunk, (std::vector<BrokerId>{kB1}));
  EXPECT_TRUE(r1.p().isr_change_in_flight());
  EXPECT_FALSE(r1.p().ProposeIsrShrink().has_value());         // one proposal at a time
  EXPECT_EQ(r1.p().isr(), (std::vector<BrokerId>{kB1, kB2}));  // not until ZooKeeper says so
  r1.p().ApplyIsrChange(*shrunk, 1);
  EXPECT_EQ(r1.p().isr(), (std::vector<BrokerId>{kB1}));
  EXPECT_EQ(r1.p().zk_version(), 1);
  EXPECT_EQ(r1.Named("isr_shrink").back().fields.dump(),
            R"({"topic":"t","partition":0,"isr":[1],"removed":[2]})");
  // The leader alone: HW moves to its LEO.
  EXPECT_EQ(r1.p().high_watermark(), Offset(4));
}

// A follower that never fetched in this leadership is not caught up either.
TEST_F(PartitionTest, FollowerThatNeverFetchesLeavesIsr) {
  Replica& r1 = AddReplica(kB1);
  MakeLeader(r1, State(kB1, 0, {kB1, kB2, kB3}));
  clock_.AdvanceMs(kLagMs + 1);
  r1.p().UpdateFollowerFetch(kB3, Offset(0));
  auto shrunk = r1.p().ProposeIsrShrink();
  ASSERT_TRUE(shrunk.has_value());
  EXPECT_EQ(*shrunk, (std::vector<BrokerId>{kB1, kB3}));
}

// UpdateFollowerFetch tells whether the follower's LEO, as the leader knows it, moved (the leader
// re-checks its parked requests only then or when the HW moved).
TEST_F(PartitionTest, FollowerFetchTellsWhetherTheFollowersLogEndMoved) {
  Replica& r1 = AddReplica(kB1);
  MakeLeader(r1, State(kB1, 0, {kB1, kB2}, {kB1, kB2}));
  Produce(r1, 2);
  bool moved = false;
  r1.p().UpdateFollowerFetch(kB2, Offset(0), &moved);
  EXPECT_TRUE(moved) << "the first fetch: the leader knew no LEO";
  r1.p().UpdateFollowerFetch(kB2, Offset(0), &moved);
  EXPECT_FALSE(moved);
  r1.p().UpdateFollowerFetch(kB2, Offset(2), &moved);
  EXPECT_TRUE(moved);
  EXPECT_EQ(r1.p().high_watermark(), Offset(2));
  moved = true;
  r1.p().UpdateFollowerFetch(kB3, Offset(2), &moved);
  EXPECT_TRUE(moved) << "not assigned: untouched";
  r1.p().MakeFollower(State(kB2, 1, {kB1, kB2}, {kB1, kB2}));
  moved = true;
  r1.p().UpdateFollowerFetch(kB2, Offset(2), &moved);
  EXPECT_TRUE(moved) << "not leader: untouched";
}

// Partition::version moves with every change a fetch could see and with nothing else, and each
// move ends the quiet holds (HoldQuiet: a fetch session skipping the partition), telling each
// holder once. While held, the follower counts as caught up at its session's fetch times.
class RecordingHolder final : public QuietHolder {
 public:
  void QuietEnded(void* cookie) override { ended.push_back(cookie); }
  std::vector<void*> ended;
};

TEST_F(PartitionTest, VersionMovesWithWhatAFetchCouldSeeAndEndsQuietHolds) {
  Replica& r1 = AddReplica(kB1);
  MakeLeader(r1, State(kB1, 0, {kB1, kB2, kB3}, {kB1, kB2, kB3}));
  uint64_t version = r1.p().version();
  auto moved = [&] {
    const bool changed = r1.p().version() != version;
    version = r1.p().version();
    return changed;
  };
  RecordingHolder holder;
  int cookie = 0;
  int64_t fetched_ms = clock_.NowMs();
  Produce(r1, 2);
  EXPECT_TRUE(moved()) << "an append";
  r1.p().UpdateFollowerFetch(kB2, Offset(2));
  EXPECT_TRUE(moved()) << "the follower's LEO";
  r1.p().UpdateFollowerFetch(kB2, Offset(2));
  EXPECT_FALSE(moved()) << "the same fetch again";
  r1.p().HoldQuiet(&holder, &cookie, kB2, &fetched_ms);
  EXPECT_EQ(r1.p().quiet_holds(), 1u);
  // The session fetches on without reading it: kB2 is caught up at each of its fetch times.
  clock_.AdvanceMs(kLagMs - 1);
  fetched_ms = clock_.NowMs();
  EXPECT_FALSE(moved());
  EXPECT_TRUE(holder.ended.empty());
  r1.p().UpdateFollowerFetch(kB3, Offset(2));
  EXPECT_TRUE(moved()) << "the other follower's LEO and the HW";
  EXPECT_EQ(r1.p().high_watermark(), Offset(2));
  EXPECT_EQ(holder.ended, std::vector<void*>{&cookie}) << "told once, when it moved";
  EXPECT_EQ(r1.p().quiet_holds(), 0u);
  // Both followers caught up as of kLagMs - 1 (kB2 by its session's fetches alone).
  clock_.AdvanceMs(2);
  EXPECT_FALSE(r1.p().ProposeIsrShrink().has_value());
  // Held again; kB2's session keeps fetching, kB3 falls silent and leaves alone.
  r1.p().HoldQuiet(&holder, &cookie, kB2, &fetched_ms);
  clock_.AdvanceMs(kLagMs);
  fetched_ms = clock_.NowMs();
  auto shrunk = r1.p().ProposeIsrShrink();
  ASSERT_TRUE(shrunk.has_value());
  EXPECT_EQ(*shrunk, (std::vector<BrokerId>{kB1, kB2}));
  EXPECT_TRUE(moved()) << "an ISR change in flight";
  EXPECT_EQ(holder.ended.size(), 2u);
  r1.p().ApplyIsrChange(*shrunk, 1);
  EXPECT_TRUE(moved()) << "the ISR";
  // kB3 is back at the HW: its expansion goes out, and is abandoned (a failed write).
  ASSERT_TRUE(r1.p().UpdateFollowerFetch(kB3, Offset(2)).has_value());
  EXPECT_TRUE(moved()) << "an ISR change in flight";
  r1.p().AbandonIsrChange();
  EXPECT_TRUE(moved()) << "no change in flight";
  // A hold released early tells nobody; a session that stops fetching stops counting.
  r1.p().HoldQuiet(&holder, &cookie, kB2, &fetched_ms);
  r1.p().ReleaseQuiet(&holder, &cookie);
  EXPECT_EQ(r1.p().quiet_holds(), 0u);
  r1.p().HoldQuiet(&holder, &cookie, kB2, &fetched_ms);
  clock_.AdvanceMs(kLagMs + 1);
  EXPECT_EQ(r1.p().ProposeIsrShrink(), (std::vector<BrokerId>{kB1}));
  EXPECT_EQ(holder.ended.size(), 3u);
  ASSERT_TRUE(r1.p().log().MaybeIncrementLogStartOffset(Offset(1)).ok());
  EXPECT_TRUE(moved()) << "the log start";
  r1.p().MakeFollower(State(kB2, 1, {kB1, kB2, kB3}, {kB1, kB2}));
  EXPECT_TRUE(moved()) << "the role";
}

// KAFKA-4485's rule (Replica.updateLogReadResult, 0.10.2+): a follower fetching the LEO the leader
// had at its previous fetch is caught up as of that fetch, so one that keeps pace with a steady
// stream stays, although it never fetches at the leader's current LEO.
TEST_F(PartitionTest, FollowerKeepingUpWithSteadyStreamStaysInIsr) {
  Replica& r1 = AddReplica(kB1, AtRelease(KafkaRelease::k0_10_2));
  MakeLeader(r1, State(kB1, 0, {kB1, kB2}, {kB1, kB2}));
  Offset follower_leo(0);
  for (int round = 0; round < 40; ++round) {
    Produce(r1, 1);  // a new record before every fetch: the fetch is never at the LEO
    r1.p().UpdateFollowerFetch(kB2, follower_leo);
    follower_leo = r1.p().log_end_offset();  // it gets what is there at this fetch
    clock_.AdvanceMs(kLagMs / 4);
    EXPECT_FALSE(r1.p().ProposeIsrShrink().has_value()) << "round " << round;
  }
  EXPECT_EQ(r1.p().isr().size(), 2u);
}

// Before 0.10.2 (0.10.0.1's isReadFromLogEnd) only a fetch at the leader's LEO counts: the same
// follower, keeping pace with the same stream, leaves the ISR once the lag time has passed since
// the leader learned of it, although it is never more than one record behind.
TEST_F(PartitionTest, FollowerKeepingUpWithSteadyStreamLeavesIsrBefore0_10_2) {
  Replica& r1 = AddReplica(kB1, AtRelease(KafkaRelease::k0_10_0));
  MakeLeader(r1, State(kB1, 0, {kB1, kB2}, {kB1, kB2}));
  Offset follower_leo(0);
  int shrunk_at_round = -1;
  for (int round = 0; round < 40 && shrunk_at_round < 0; ++round) {
    Produce(r1, 1);
    r1.p().UpdateFollowerFetch(kB2, follower_leo);
    follower_leo = r1.p().log_end_offset();
    clock_.AdvanceMs(kLagMs / 4);
    if (auto shrunk = r1.p().ProposeIsrShrink()) {
      EXPECT_EQ(*shrunk, (std::vector<BrokerId>{kB1}));
      shrunk_at_round = round;
    }
  }
  // Caught up when the leader learned of it (MakeLeader), never since: out after the lag time.
  EXPECT_EQ(shrunk_at_round, 4);
  // Its LEO reaches the HW at its next fetch, so it joins again: the ISR flaps.
  r1.p().ApplyIsrChange({kB1}, 1);
  auto expanded = r1.p().UpdateFollowerFetch(kB2, follower_leo);
  ASSERT_TRUE(expanded.has_value());
  EXPECT_EQ(*expanded, (std::vector<BrokerId>{kB1, kB2}));
}

// Kafka 0.8.2.2's Partition.getOutOfSyncReplicas: "stuck" is no fetch (of any offset) for the lag
// time, so the follower keeping pace with a steady stream, one record behind at every fetch,
// stays; "slow" is a known log end more than replica.lag.max.messages behind the leader's.
TEST_F(PartitionTest, At082EveryFetchCountsAndASlowFollowerLeavesByMessages) {
  PartitionConfig config = AtRelease(KafkaRelease::k0_8_2);
  config.replica_lag_max_messages = 20;
  Replica& r1 = AddReplica(kB1, config);
  MakeLeader(r1, State(kB1, 0, {kB1, kB2, kB3}, {kB1, kB2, kB3}));
  Offset follower_leo(0);
  for (int round = 0; round < 40; ++round) {
    Produce(r1, 1);
    r1.p().UpdateFollowerFetch(kB2, follower_leo);
    r1.p().UpdateFollowerFetch(kB3, follower_leo);
    follower_leo = r1.p().log_end_offset();
    clock_.AdvanceMs(kLagMs / 4);
    ASSERT_FALSE(r1.p().ProposeIsrShrink().has_value()) << "round " << round;
  }
  // A burst: broker 3 still fetches (it is not stuck) but is now 21 messages behind.
  Produce(r1, 21);
  r1.p().UpdateFollowerFetch(kB2, r1.p().log_end_offset());
  r1.p().UpdateFollowerFetch(kB3, follower_leo);
  auto shrunk = r1.p().ProposeIsrShrink();
  ASSERT_TRUE(shrunk.has_value());
  EXPECT_EQ(*shrunk, (std::vector<BrokerId>{kB1, kB2}));
  r1.p().ApplyIsrChange(*shrunk, 1);
  // Broker 2 stops fetching: stuck once the lag time has passed since its last fetch.
  clock_.AdvanceMs(kLagMs);
  EXPECT_FALSE(r1.p().ProposeIsrShrink().has_value());
  clock_.AdvanceMs(1);
  shrunk = r1.p().ProposeIsrShrink();
  ASSERT_TRUE(shrunk.has_value());
  EXPECT_EQ(*shrunk, (std::vector<BrokerId>{kB1}));
}

// 0.8.2.2's makeLeader resets every follower's log end offset, which restarts its lag clock: a
// broker that followed for longer than the lag time keeps its ISR at its first check as leader.
TEST_F(PartitionTest, At082ANewLeaderStartsEveryFollowersClock) {
  Replica& r2 = AddReplica(kB2, AtRelease(KafkaRelease::k0_8_2));
  ASSERT_TRUE(r2.p().MakeFollower(State(kB1, 0, {kB1, kB2, kB3})));
  clock_.AdvanceMs(kLagMs + 1);
  MakeLeader(r2, State(kB2, 1, {kB2, kB3}));
  EXPECT_FALSE(r2.p().ProposeIsrShrink().has_value());
  clock_.AdvanceMs(kLagMs + 1);
  EXPECT_TRUE(r2.p().ProposeIsrShrink().has_value());
}

// A broker that followed for longer than the lag time becomes leader. From 0.10.2 MakeLeader
// counts the ISR members caught up now; before, their caught-up times are those of the replicas
// this broker created when it first followed, so its first ISR check drops a follower that has
// not yet fetched at its log end.
class NewLeaderCaughtUpTest : public PartitionTest,
                              public ::testing::WithParamInterface<KafkaRelease> {};

TEST_P(NewLeaderCaughtUpTest, FirstIsrCheckOfANewLeader) {
  const KafkaRelease release = GetParam();
  Replica& r2 = AddReplica(kB2, AtRelease(release));
  ASSERT_TRUE(r2.p().MakeFollower(State(kB1, 0, {kB1, kB2, kB3})));
  clock_.AdvanceMs(kLagMs + 1);
  MakeLeader(r2, State(kB2, 1, {kB2, kB3}));
  auto shrunk = r2.p().ProposeIsrShrink();
  if (release >= KafkaRelease::k0_10_2) {
    EXPECT_FALSE(shrunk.has_value());
  } else {
    ASSERT_TRUE(shrunk.has_value());
    EXPECT_EQ(*shrunk, (std::vector<BrokerId>{kB2}));
  }
}

// Before 0.10.2 a caught-up time outlives a leadership: the follower fetched at the LEO in the
// first one, the leader followed meanwhile, and in its second leadership the follower has been
// out of date since that fetch. From 0.10.2 the second MakeLeader counts it caught up again.
TEST_P(NewLeaderCaughtUpTest, CaughtUpTimeOutlivesALeadershipOnlyBefore0_10_2) {
  const KafkaRelease release = GetParam();
  Replica& r1 = AddReplica(kB1, AtRelease(release));
  MakeLeader(r1, State(kB1, 0, {kB1, kB2}, {kB1, kB2}));
  Produce(r1, 2);
  r1.p().UpdateFollowerFetch(kB2, Offset(2));  // at the log end: caught up now
  clock_.AdvanceMs(kLagMs / 2);
  ASSERT_TRUE(r1.p().MakeFollower(State(kB2, 1, {kB1, kB2}, {kB1, kB2})));
  clock_.AdvanceMs(kLagMs / 4);
  MakeLeader(r1, State(kB1, 2, {kB1, kB2}, {kB1, kB2}));
  EXPECT_FALSE(r1.p().remote_replicas().at(kB2).log_end_offset.has_value());
  clock_.AdvanceMs(kLagMs / 4 + 1);  // lag time + 1 since its fetch, lag / 2 + 1 since MakeLeader
  EXPECT_EQ(r1.p().ProposeIsrShrink().has_value(), release < KafkaRelease::k0_10_2);
}

INSTANTIATE_TEST_SUITE_P(Releases, NewLeaderCaughtUpTest,
                         ::testing::Values(KafkaRelease::k0_10_0, KafkaRelease::k0_10_1,
                                           KafkaRelease::k0_10_2, KafkaRelease::k2_1),
                         [](const ::testing::TestParamInfo<KafkaRelease>& info) {
                           std::string name(KafkaReleaseName(info.param));
                           std::replace(name.begin(), name.end(), '.', '_');
                           return name;
                         });

// ReplicaManager's "isr-expiration" period: replica.lag.time.max.ms before 0.10.2, half of it
// from then on.
TEST(IsrCheckPeriodTest, FullLagTimeBefore0_10_2HalfFromThen) {
  EXPECT_EQ(IsrCheckPeriodMs(KafkaRelease::k0_10_0, 10000), 10000);
  EXPECT_EQ(IsrCheckPeriodMs(KafkaRelease::k0_10_1, 10000), 10000);
  EXPECT_EQ(IsrCheckPeriodMs(KafkaRelease::k0_10_2, 10000), 5000);
  EXPECT_EQ(IsrCheckPeriodMs(KafkaRelease::k2_1, 10001), 5000);  // Kafka's integer division
  EXPECT_EQ(IsrCheckPeriodMs(KafkaRelease::k2_1, 1), 1);         // never 0
}

// IsrExpirationTest.testIsrExpirationForSlowFollowers: fetching, but never reaching the LEO the
// leader had at the previous fetch, is lagging.
TEST_F(PartitionTest, SlowFollowerLeavesIsr) {
  Replica& r1 = AddReplica(kB1);
  MakeLeader(r1, State(kB1, 0, {kB1, kB2}, {kB1, kB2}));
  Offset follower_leo(0);
  bool shrunk = false;
  for (int round = 0; round < 20 && !shrunk; ++round) {
    Produce(r1, 4);
    r1.p().UpdateFollowerFetch(kB2, follower_leo);
    follower_leo += 1;  // takes one record of every four
    clock_.AdvanceMs(kLagMs / 4);
    shrunk = r1.p().ProposeIsrShrink().has_value();
  }
  EXPECT_TRUE(shrunk);
  // It was caught up at its first fetch (the leader's LEO was 0 before), so it went once more
  // than the lag time after that.
  EXPECT_GT(clock_.NowMs() - kStartMs, kLagMs);
}

// Partition.maybeExpandIsr: the follower joins when its LEO reaches the leader's HW; an
// unassigned broker never does.
TEST_F(PartitionTest, FollowerRejoinsIsrWhenItsLogEndOffsetReachesHighWatermark) {
  Replica& r1 = AddReplica(kB1);
  Replica& r2 = AddReplica(kB2);
  Replica& r3 = AddReplica(kB3);
  MakeLeader(r1, State(kB1, 0, {kB1, kB2}));
  ASSERT_TRUE(r2.p().MakeFollower(State(kB1, 0, {kB1, kB2})));
  ASSERT_TRUE(r3.p().MakeFollower(State(kB1, 0, {kB1, kB2})));
  Produce(r1, 5);
  Fetch(r1, r2);
  Fetch(r1, r2);
  ASSERT_EQ(r1.p().high_watermark(), Offset(5));

  // Broker 3 fetches up to 4: below the HW, stays out.
  EXPECT_FALSE(r1.p().UpdateFollowerFetch(kB3, Offset(4)).has_value());
  EXPECT_EQ(r1.p().isr().size(), 2u);
  auto expanded = r1.p().UpdateFollowerFetch(kB3, Offset(5));
  ASSERT_TRUE(expanded.has_value());
  EXPECT_EQ(*expanded, (std::vector<BrokerId>{kB1, kB2, kB3}));
  r1.p().AbandonIsrChange();  // the conditional write lost (BADVERSION)
  EXPECT_EQ(r1.p().isr().size(), 2u);
  expanded = r1.p().UpdateFollowerFetch(kB3, Offset(5));
  ASSERT_TRUE(expanded.has_value());
  r1.p().ApplyIsrChange(*expanded, 7);
  EXPECT_EQ(r1.p().isr(), (std::vector<BrokerId>{kB1, kB2, kB3}));
  EXPECT_EQ(r1.Named("isr_expand").back().fields.dump(),
            R"({"topic":"t","partition":0,"isr":[1,2,3],"added":[3]})");

  // Not assigned: ignored, whatever it fetched.
  EXPECT_FALSE(r1.p().UpdateFollowerFetch(BrokerId(9), Offset(5)).has_value());
  EXPECT_EQ(r1.p().remote_replicas().count(BrokerId(9)), 0u);
}

// KAFKA-7128 (2.1.0's maybeExpandIsr: leaderEpochStartOffsetOpt.exists(fetchOffset >= _)): a
// leader back from a power loss has a high watermark below what it committed; a follower whose
// log ends at that high watermark but before the leader's log end at its election joins the ISR
// at 2.0.0 (and could then be elected without the committed records), not at 2.1. Found by
// `ksim explore` (safe seed 3431, scenarios/regressions/
// isr-join-needs-the-leaders-epoch-start-from-2.1.json).
class IsrJoinTest : public PartitionTest, public ::testing::WithParamInterface<KafkaRelease> {};

TEST_P(IsrJoinTest, AFollowerJoinsTheIsrOnlyFromTheLeadersEpochStartFrom21) {
  const KafkaRelease release = GetParam();
  Replica& r1 = AddReplica(kB1, AtRelease(release));
  AddReplica(kB3, AtRelease(release));
  MakeLeader(r1, State(kB1, 1, {kB1}));
  Produce(r1, 2);
  ASSERT_EQ(r1.p().high_watermark(), Offset(2));
  // The broker restarts: its high-watermark checkpoint predates the commit, and its ISR names a
  // broker that is down (it never fetches), so the high watermark stays where it was loaded.
  OpenPartition(r1, Offset(0), AtRelease(release));
  MakeLeader(r1, State(kB1, 1, {kB1, kB2}));
  ASSERT_EQ(r1.p().high_watermark(), Offset(0));
  auto expanded = r1.p().UpdateFollowerFetch(kB3, Offset(1));  // its log ends at 1
  if (release < KafkaRelease::k2_1) {
    EXPECT_TRUE(expanded.has_value()) << "2.0.0: its LEO reached the leader's HW";
    return;
  }
  EXPECT_FALSE(expanded.has_value()) << "below the leader's epoch start (2)";
  expanded = r1.p().UpdateFollowerFetch(kB3, Offset(2));
  ASSERT_TRUE(expanded.has_value());
  EXPECT_EQ(*expanded, (std::vector<BrokerId>{kB1, kB2, kB3}));
}

INSTANTIATE_TEST_SUITE_P(Releases, IsrJoinTest,
                         ::testing::Values(KafkaRelease::k2_0, KafkaRelease::k2_1),
                         [](const ::testing::TestParamInfo<KafkaRelease>& info) {
                           return info.param == KafkaRelease::k2_0 ? "Kafka20" : "Kafka21";
                         });

// ---- High watermark ----------------------------------------------------------------------------

// Found by `ksim explore` (unsafe seed 7280, scenarios/regressions/
// isr-expansion-in-flight-holds-the-high-watermark.json): a record appended while a follower's
// addition to the ISR is being written commits only once that follower has it, as Kafka's
// synchronous maybeExpandIsr makes it; abandoned, the write stops holding the HW back.
TEST_F(PartitionTest, AFollowerBeingAddedToTheIsrHoldsTheHighWatermark) {
  Replica& r1 = AddReplica(kB1);
  AddReplica(kB2);
  Replica& r3 = AddReplica(kB3);
  MakeLeader(r1, State(kB1, 0, {kB1}));
  ASSERT_TRUE(r3.p().MakeFollower(State(kB1, 0, {kB1})));
  Produce(r1, 1);
  ASSERT_EQ(r1.p().high_watermark(), Offset(1));               // the ISR is the leader alone
  auto expanded = r1.p().UpdateFollowerFetch(kB3, Offset(1));  // caught up: add it
  ASSERT_TRUE(expanded.has_value());
  Produce(r1, 1);  // while the ISR write is out
  EXPECT_EQ(r1.p().high_watermark(), Offset(1)) << "broker 3 does not have offset 1 yet";
  r1.p().UpdateFollowerFetch(kB3, Offset(2));
  EXPECT_EQ(r1.p().high_watermark(), Offset(2));
  r1.p().ApplyIsrChange(*expanded, 1);
  EXPECT_EQ(r1.p().isr(), (std::vector<BrokerId>{kB1, kB3}));

  // An expansion abandoned (the conditional write lost) no longer holds the HW.
  MakeLeader(r1, State(kB1, 1, {kB1}, {kB1, kB2, kB3}, 2));
  ASSERT_TRUE(r1.p().UpdateFollowerFetch(kB3, Offset(2)).has_value());
  Produce(r1, 1);
  EXPECT_EQ(r1.p().high_watermark(), Offset(2));
  r1.p().AbandonIsrChange();
  Produce(r1, 1);
  EXPECT_EQ(r1.p().high_watermark(), Offset(4));
}

TEST_F(PartitionTest, LeaderHighWatermarkIsMinLogEndOffsetOverIsrAndNeverDecreases) {
  Replica& r1 = AddReplica(kB1);
  Replica& r2 = AddReplica(kB2);
  Replica& r3 = AddReplica(kB3);
  MakeLeader(r1, State(kB1, 0, {kB1, kB2, kB3}));
  ASSERT_TRUE(r2.p().MakeFollower(State(kB1, 0, {kB1, kB2, kB3})));
  ASSERT_TRUE(r3.p().MakeFollower(State(kB1, 0, {kB1, kB2, kB3})));
  Produce(r1, 3);
  EXPECT_EQ(r1.p().high_watermark(), Offset(0));  // followers' LEOs unknown
  Fetch(r1, r2);                                  // r2 fetched at 0, now has 3
  EXPECT_EQ(r1.p().high_watermark(), Offset(0));  // r3 still unknown
  Fetch(r1, r3);
  EXPECT_EQ(r1.p().high_watermark(), Offset(0));  // both fetched at 0
  Fetch(r1, r2);                                  // r2 at 3, r3 at 0
  EXPECT_EQ(r1.p().high_watermark(), Offset(0));
  Fetch(r1, r3);  // both at 3
  EXPECT_EQ(r1.p().high_watermark(), Offset(3));
  // Follower HW = min(own LEO, the leader's HW in the response).
  EXPECT_EQ(r3.p().high_watermark(), Offset(3));
  EXPECT_EQ(r2.p().high_watermark(), Offset(0));

  Produce(r1, 2);
  Fetch(r1, r2);  // r2 at 3 again (the records past 3 arrive in this response)
  EXPECT_EQ(r2.p().log_end_offset(), Offset(5));
  EXPECT_EQ(r2.p().high_watermark(), Offset(3));
  // A fetch from a lower offset than before (a follower that truncated) does not lower the HW.
  r1.p().UpdateFollowerFetch(kB3, Offset(1));
  EXPECT_EQ(r1.p().high_watermark(), Offset(3));
  // Consumers read below the HW only; followers up to the LEO.
  auto consumer = r1.p().Read(Offset(0), 1 << 20, false);
  ASSERT_TRUE(consumer.ok());
  EXPECT_EQ(OffsetsIn(consumer->records), (std::vector<int64_t>{0, 1, 2}));
  // A consumer at the HW, below the LEO, gets nothing yet (no error).
  auto above_hw = r1.p().Read(Offset(3), 1 << 20, false);
  ASSERT_TRUE(above_hw.ok()) << above_hw.status().ToString();
  EXPECT_TRUE(above_hw->records.empty());
  auto follower = r1.p().Read(Offset(3), 1 << 20, true);
  ASSERT_TRUE(follower.ok());
  EXPECT_EQ(OffsetsIn(follower->records), (std::vector<int64_t>{3, 4}));

  std::vector<int64_t> hws;
  for (const Event& e : r1.Named("hw")) hws.push_back(e.fields["hw"].get<int64_t>());
  EXPECT_EQ(hws, (std::vector<int64_t>{3}));
}

TEST_F(PartitionTest, CheckpointedHighWatermarkIsClampedToTheLog) {
  Replica& r1 = AddReplica(kB1);
  MakeLeader(r1, State(kB1, 0, {kB1}));
  Produce(r1, 4);
  OpenPartition(r1, Offset(100));
  EXPECT_EQ(r1.p().high_watermark(), Offset(4));
  OpenPartition(r1, Offset(2));
  EXPECT_EQ(r1.p().high_watermark(), Offset(2));
}

// ---- acks --------------------------------------------------------------------------------------

// ReplicaManagerTest / PartitionTest: acks=all with min.insync.replicas.
TEST_F(PartitionTest, AcksAllRefusedBeforeAppendWhenIsrBelowMinInsync) {
  PartitionConfig config;
  config.min_insync_replicas = 2;
  Replica& r1 = AddReplica(kB1, config);
  MakeLeader(r1, State(kB1, 0, {kB1}));
  Bytes batch = Batch(0, 1);
  auto refused = r1.p().AppendAsLeader(batch, -1);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Errc::kNotEnoughReplicas);
  EXPECT_EQ(r1.p().log_end_offset(), Offset(0));  // nothing written
  // acks=1 is not subject to min.insync.replicas.
  batch = Batch(0, 1);
  EXPECT_TRUE(r1.p().AppendAsLeader(batch, 1).ok());
}

TEST_F(PartitionTest, AcksAllCompletesWhenHighWatermarkPassesTheBatch) {
  PartitionConfig config;
  config.min_insync_replicas = 2;
  Replica& r1 = AddReplica(kB1, config);
  Replica& r2 = AddReplica(kB2);
  MakeLeader(r1, State(kB1, 0, {kB1, kB2}, {kB1, kB2}));
  ASSERT_TRUE(r2.p().MakeFollower(State(kB1, 0, {kB1, kB2}, {kB1, kB2})));
  LogAppendInfo info = Produce(r1, 2, -1);
  const Offset required = info.last_offset + 1;
  EXPECT_FALSE(r1.p().CheckEnoughReplicasReached(required, -1).done);
  Fetch(r1, r2);
  EXPECT_FALSE(r1.p().CheckEnoughReplicasReached(required, -1).done);
  Fetch(r1, r2);
  AcksProgress progress = r1.p().CheckEnoughReplicasReached(required, -1);
  EXPECT_TRUE(progress.done);
  EXPECT_EQ(progress.error, Errc::kNone);
}

TEST_F(PartitionTest, AcksAllAfterIsrShrankIsNotEnoughReplicasAfterAppend) {
  PartitionConfig config;
  config.min_insync_replicas = 2;
  Replica& r1 = AddReplica(kB1, config);
  MakeLeader(r1, State(kB1, 0, {kB1, kB2}, {kB1, kB2}));
  r1.p().UpdateFollowerFetch(kB2, Offset(0));
  LogAppendInfo info = Produce(r1, 1, -1);
  const Offset required = info.last_offset + 1;
  EXPECT_FALSE(r1.p().CheckEnoughReplicasReached(required, -1).done);
  clock_.AdvanceMs(kLagMs + 1);
  auto shrunk = r1.p().ProposeIsrShrink();
  ASSERT_TRUE(shrunk.has_value());
  r1.p().ApplyIsrChange(*shrunk, 1);
  AcksProgress progress = r1.p().CheckEnoughReplicasReached(required, -1);
  EXPECT_TRUE(progress.done);
  EXPECT_EQ(progress.error, Errc::kNotEnoughReplicasAfterAppend);
  // And the next acks=all produce is refused up front.
  Bytes batch = Batch(0, 1);
  EXPECT_EQ(r1.p().AppendAsLeader(batch, -1).status().code(), Errc::kNotEnoughReplicas);
  // Leadership lost: pending produces fail with NOT_LEADER_FOR_PARTITION.
  ASSERT_TRUE(r1.p().MakeFollower(State(kB2, 1, {kB2}, {kB1, kB2})));
  progress = r1.p().CheckEnoughReplicasReached(required, -1);
  EXPECT_TRUE(progress.done);
  EXPECT_EQ(progress.error, Errc::kNotLeaderForPartition);
}

// Kafka 0.8's acks=N: N ISR members, the leader included, have the batch.
TEST_F(PartitionTest, AcksNCountsIsrMembersHoldingTheBatch) {
  Replica& r1 = AddReplica(kB1);
  MakeLeader(r1, State(kB1, 0, {kB1, kB2, kB3}));
  LogAppendInfo info = Produce(r1, 2, 2);
  const Offset required = info.last_offset + 1;
  EXPECT_FALSE(r1.p().CheckEnoughReplicasReached(required, 2).done);
  r1.p().UpdateFollowerFetch(kB2, Offset(1));  // not the whole batch yet
  EXPECT_FALSE(r1.p().CheckEnoughReplicasReached(required, 2).done);
  r1.p().UpdateFollowerFetch(kB2, required);
  EXPECT_TRUE(r1.p().CheckEnoughReplicasReached(required, 2).done);
  EXPECT_FALSE(r1.p().CheckEnoughReplicasReached(required, 3).done);
  // A replica outside the ISR does not count.
  clock_.AdvanceMs(kLagMs + 1);
  r1.p().UpdateFollowerFetch(kB2, required);
  auto shrunk = r1.p().ProposeIsrShrink();
  ASSERT_TRUE(shrunk.has_value());
  EXPECT_EQ(*shrunk, (std::vector<BrokerId>{kB1, kB2}));
  r1.p().ApplyIsrChange(*shrunk, 1);
  r1.p().UpdateFollowerFetch(kB3, required);
  EXPECT_FALSE(r1.p().CheckEnoughReplicasReached(required, 3).done);
}

// 0.8.2's acks < -1 (a broker of 0.9.0 or later refuses it before the Partition): waits as -1
// for the HW (`requiredAcks < 0`), but is not refused before the append below
// min.insync.replicas (`requiredAcks == -1` only).
TEST_F(PartitionTest, AcksBelowMinusOneWaitsForTheHighWatermarkWithoutTheRefusal) {
  PartitionConfig config;
  config.min_insync_replicas = 2;
  Replica& r1 = AddReplica(kB1, config);
  MakeLeader(r1, State(kB1, 0, {kB1}, {kB1, kB2}));  // an ISR of one, below the minimum
  Bytes batch = Batch(0, 1);
  EXPECT_EQ(r1.p().AppendAsLeader(batch, -1).status().code(), Errc::kNotEnoughReplicas);
  batch = Batch(0, 1);
  Result<LogAppendInfo> info = r1.p().AppendAsLeader(batch, -2);
  ASSERT_TRUE(info.ok());
  const AcksProgress progress = r1.p().CheckEnoughReplicasReached(info->last_offset + 1, -2);
  EXPECT_TRUE(progress.done);  // the lone ISR member moved the HW at once
  EXPECT_EQ(progress.error, Errc::kNotEnoughReplicasAfterAppend);
}

// ---- Leader epochs (KIP-101 / KIP-279)
// -----------------------------------------------------------

// Builds a follower log from batches with given epochs: (epoch, base, count).
void FillFollower(Replica& r, const std::vector<std::tuple<int32_t, int64_t, int>>& batches,
                  Offset leader_hw) {
  for (const auto& [epoch, base, count] : batches) {
    auto appended =
        r.p().AppendAsFollower(Batch(base, count, LeaderEpoch(epoch)), leader_hw, Offset(0));
    ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  }
}

TEST_F(PartitionTest, LeaderAnswersOffsetsForLeaderEpoch) {
  Replica& r1 = AddReplica(kB1);
  ASSERT_TRUE(r1.p().MakeFollower(State(kB2, 2, {kB2})));
  FillFollower(r1, {{0, 0, 3}, {2, 3, 4}}, Offset(0));
  MakeLeader(r1, State(kB1, 3, {kB1}));  // epoch 3 starts at 7
  Produce(r1, 2);
  EXPECT_EQ(r1.p().EndOffsetForEpoch(LeaderEpoch(3)),
            (EpochAndEndOffset{LeaderEpoch(3), Offset(9)}));
  EXPECT_EQ(r1.p().EndOffsetForEpoch(LeaderEpoch(2)),
            (EpochAndEndOffset{LeaderEpoch(2), Offset(7)}));
  // Epoch 1 never happened here: epoch 0's entry, ending where epoch 2 begins.
  EXPECT_EQ(r1.p().EndOffsetForEpoch(LeaderEpoch(1)),
            (EpochAndEndOffset{LeaderEpoch(0), Offset(3)}));
  EXPECT_TRUE(r1.p().EndOffsetForEpoch(LeaderEpoch(4)).undefined());
  EXPECT_TRUE(r1.p().EndOffsetForEpoch(kUndefinedEpoch).undefined());
}

TEST_F(PartitionTest, DecideTruncationSameEpochCutsWhereTheLeadersEpochEnds) {
  Replica& r2 = AddReplica(kB2);
  ASSERT_TRUE(r2.p().MakeFollower(State(kB1, 1, {kB1})));
  FillFollower(r2, {{0, 0, 5}, {1, 5, 3}}, Offset(0));  // epoch 1 from 5 to LEO 8
  TruncationDecision d = r2.p().DecideTruncation({LeaderEpoch(1), Offset(6)});
  EXPECT_TRUE(d.complete);
  EXPECT_EQ(d.truncate_to, Offset(6));
  // The leader holds more of the epoch than we do: nothing to cut (>= LEO).
  d = r2.p().DecideTruncation({LeaderEpoch(1), Offset(20)});
  EXPECT_TRUE(d.complete);
  EXPECT_EQ(d.truncate_to, Offset(8));
  ASSERT_TRUE(r2.p().TruncateTo(d.truncate_to, "leader_epoch").ok());
  EXPECT_EQ(r2.p().log_end_offset(), Offset(8));
  EXPECT_TRUE(r2.Named("truncate").empty());
}

// KIP-279: the leader answers an epoch we never had; cut to where our last epoch below it ends and
// ask again for that one.
TEST_F(PartitionTest, DecideTruncationTakesAnotherRoundWhenLeaderAnswersAnEarlierEpoch) {
  Replica& leader = AddReplica(kB1);
  Replica& r2 = AddReplica(kB2);
  // Leader: epochs 0 [0,3), 1 [3,7), 3 from 7.
  ASSERT_TRUE(leader.p().MakeFollower(State(kB3, 1, {kB3})));
  FillFollower(leader, {{0, 0, 3}, {1, 3, 4}}, Offset(0));
  MakeLeader(leader, State(kB1, 3, {kB1}));
  // Follower: epochs 0 [0,5), 2 [5,8).
  ASSERT_TRUE(r2.p().MakeFollower(State(kB1, 3, {kB1})));
  FillFollower(r2, {{0, 0, 5}, {2, 5, 3}}, Offset(2));

  EpochAndEndOffset answer = leader.p().EndOffsetForEpoch(r2.p().latest_epoch());
  ASSERT_EQ(answer, (EpochAndEndOffset{LeaderEpoch(1), Offset(7)}));
  TruncationDecision d = r2.p().DecideTruncation(answer);
  EXPECT_FALSE(d.complete);
  EXPECT_EQ(d.truncate_to, Offset(5));  // where our epoch 0 (the largest <= 1) ends
  EXPECT_EQ(d.next_epoch, LeaderEpoch(0));
  ASSERT_TRUE(r2.p().TruncateTo(d.truncate_to, "leader_epoch").ok());
  EXPECT_EQ(r2.p().latest_epoch(), LeaderEpoch(0));

  answer = leader.p().EndOffsetForEpoch(d.next_epoch);
  ASSERT_EQ(answer, (EpochAndEndOffset{LeaderEpoch(0), Offset(3)}));
  d = r2.p().DecideTruncation(answer);
  EXPECT_TRUE(d.complete);
  EXPECT_EQ(d.truncate_to, Offset(3));
  ASSERT_TRUE(r2.p().TruncateTo(d.truncate_to, "leader_epoch").ok());
  EXPECT_EQ(r2.p().log_end_offset(), Offset(3));
  EXPECT_EQ(r2.p().high_watermark(), Offset(2));
  EXPECT_EQ(r2.p().epochs().entries(), (std::vector<EpochEntry>{{LeaderEpoch(0), Offset(0)}}));
  EXPECT_EQ(r2.Named("truncate").back().fields.dump(),
            R"({"topic":"t","partition":0,"from_leo":5,"to":3,"records":2,)"
            R"("reason":"leader_epoch"})");
  // Now it fetches the leader's epochs 1 and 3 from offset 3 on.
  Fetch(leader, r2);
  EXPECT_EQ(r2.p().epochs().entries(),
            (std::vector<EpochEntry>{{LeaderEpoch(0), Offset(0)}, {LeaderEpoch(1), Offset(3)}}));
}

TEST_F(PartitionTest, DecideTruncationFallsBackToHighWatermarkOnUndefinedAnswer) {
  Replica& r2 = AddReplica(kB2);
  ASSERT_TRUE(r2.p().MakeFollower(State(kB1, 1, {kB1})));
  FillFollower(r2, {{0, 0, 6}}, Offset(4));
  ASSERT_EQ(r2.p().high_watermark(), Offset(4));
  TruncationDecision d = r2.p().DecideTruncation(EpochAndEndOffset{});
  EXPECT_TRUE(d.complete);
  EXPECT_EQ(d.truncate_to, Offset(4));
  EXPECT_EQ(r2.p().HighWatermarkTruncationOffset(), Offset(4));
  // A v0 answer (no epoch): the offset, capped at the LEO.
  d = r2.p().DecideTruncation({kUndefinedEpoch, Offset(9)});
  EXPECT_TRUE(d.complete);
  EXPECT_EQ(d.truncate_to, Offset(6));
}

TEST_F(PartitionTest, FollowerLogStartFollowsTheLeaderAndTruncateFullyRestartsThere) {
  Replica& r2 = AddReplica(kB2);
  ASSERT_TRUE(r2.p().MakeFollower(State(kB1, 0, {kB1})));
  FillFollower(r2, {{0, 0, 4}}, Offset(4));
  auto appended = r2.p().AppendAsFollower(Batch(4, 2, LeaderEpoch(0)), Offset(6), Offset(3));
  ASSERT_TRUE(appended.ok());
  EXPECT_EQ(r2.p().log_start_offset(), Offset(3));
  EXPECT_EQ(r2.p().epochs().entries(), (std::vector<EpochEntry>{{LeaderEpoch(0), Offset(3)}}));
  ASSERT_TRUE(r2.p().TruncateFullyAndStartAt(Offset(50)).ok());
  EXPECT_EQ(r2.p().log_start_offset(), Offset(50));
  EXPECT_EQ(r2.p().log_end_offset(), Offset(50));
  EXPECT_EQ(r2.p().high_watermark(), Offset(50));
  EXPECT_TRUE(r2.p().epochs().entries().empty());
  EXPECT_EQ(r2.Named("truncate").back().fields["records"], 3);
}

// ---- Change list (what the simulator's checker observes after each event) ----------------------

// Takes the list and clears the marks, as the ReplicaManager does.
std::vector<Partition*> TakeChanges(std::vector<Partition*>& changed) {
  std::vector<Partition*> out = changed;
  for (Partition* partition : changed) partition->ClearChangeMark();
  changed.clear();
  return out;
}

TEST_F(PartitionTest, EveryObservableMoveMarksThePartitionOnceUntilCleared) {
  std::vector<Partition*> changed;
  Replica& r1 = AddReplica(kB1);
  Replica& r2 = AddReplica(kB2);
  r1.p().set_change_list(&changed);
  r2.p().set_change_list(&changed);
  // A new holder sees each partition once, in the order they were given to it.
  EXPECT_EQ(TakeChanges(changed), (std::vector<Partition*>{&r1.p(), &r2.p()}));
  auto marked_by = [&](const std::function<void()>& step) {
    step();
    const std::vector<Partition*> taken = TakeChanges(changed);
    EXPECT_FALSE(r1.p().change_marked());
    EXPECT_FALSE(r2.p().change_marked());
    return taken;
  };
  using Marked = std::vector<Partition*>;
  // Role, epoch and ISR.
  EXPECT_EQ(marked_by([&] { MakeLeader(r1, State(kB1, 1, {kB1, kB2})); }), Marked{&r1.p()});
  EXPECT_EQ(marked_by([&] {
              ASSERT_TRUE(r2.p().MakeFollower(State(kB1, 1, {kB1, kB2})));
            }),
            Marked{&r2.p()});
  // An append moves the LEO (marked once however many batches); the HW follows the fetches.
  EXPECT_EQ(marked_by([&] {
              Produce(r1, 2);
              Produce(r1, 1);
            }),
            Marked{&r1.p()});
  EXPECT_EQ(marked_by([&] { Fetch(r1, r2); }), (Marked{&r2.p()}));  // r2's LEO; r1's HW waits
  EXPECT_EQ(marked_by([&] { Fetch(r1, r2); }), (Marked{&r1.p(), &r2.p()}));  // both HWs
  // Nothing moves: nothing marked.
  EXPECT_EQ(marked_by([&] { Fetch(r1, r2); }), Marked{});
  // ISR change, config, log start, truncation, stop.
  clock_.AdvanceMs(kLagMs + 1);
  std::optional<std::vector<BrokerId>> shrunk = r1.p().ProposeIsrShrink();  // proposing: nothing
  ASSERT_TRUE(shrunk.has_value());
  EXPECT_TRUE(changed.empty());
  EXPECT_EQ(marked_by([&] { r1.p().ApplyIsrChange(*shrunk, 1); }), Marked{&r1.p()});
  EXPECT_EQ(marked_by([&] { r1.p().set_config(r1.p().config()); }), Marked{&r1.p()});
  EXPECT_EQ(marked_by([&] { ASSERT_TRUE(r2.log->MaybeIncrementLogStartOffset(Offset(1)).ok()); }),
            Marked{&r2.p()});
  EXPECT_EQ(marked_by([&] { ASSERT_TRUE(r2.p().TruncateTo(Offset(2), "test").ok()); }),
            Marked{&r2.p()});
  EXPECT_EQ(marked_by([&] { ASSERT_TRUE(r2.p().TruncateFullyAndStartAt(Offset(9)).ok()); }),
            Marked{&r2.p()});
  EXPECT_EQ(marked_by([&] { r2.p().Stop(); }), Marked{&r2.p()});
  // A marked partition destroyed leaves the list; a detached one is no longer marked.
  Produce(r1, 1);
  ASSERT_EQ(changed, Marked{&r1.p()});
  r1.partition.reset();
  EXPECT_TRUE(changed.empty());
  r2.p().set_change_list(nullptr);
  ASSERT_TRUE(r2.p().MakeFollower(State(kB3, 2, {kB3})));
  EXPECT_FALSE(r2.p().change_marked());
}

TEST_F(PartitionTest, FollowerFetchChangesNothingExactlyWhenAnEmptyAnswerWouldMoveNothing) {
  Replica& r2 = AddReplica(kB2);
  // Not a follower: the append would be refused.
  EXPECT_FALSE(r2.p().FollowerFetchChangesNothing(Offset(0), Offset(0)));
  ASSERT_TRUE(r2.p().MakeFollower(State(kB1, 0, {kB1})));
  FillFollower(r2, {{0, 0, 4}}, Offset(2));
  ASSERT_EQ(r2.p().high_watermark(), Offset(2));
  // HW = min(LEO 4, leader's HW): the same HW, a log start the follower already has or is
  // capped by its HW.
  EXPECT_TRUE(r2.p().FollowerFetchChangesNothing(Offset(2), Offset(0)));
  EXPECT_FALSE(r2.p().FollowerFetchChangesNothing(Offset(3), Offset(0)));  // the HW would rise
  EXPECT_TRUE(r2.p().FollowerFetchChangesNothing(Offset(2), Offset(0)));
  EXPECT_FALSE(r2.p().FollowerFetchChangesNothing(Offset(2), Offset(1)));  // log start to 1
  auto appended = r2.p().AppendAsFollower({}, Offset(9), Offset(0));
  ASSERT_TRUE(appended.ok());
  EXPECT_EQ(r2.p().high_watermark(), Offset(4));  // capped by the LEO
  EXPECT_TRUE(r2.p().FollowerFetchChangesNothing(Offset(9), Offset(0)));
  // And when it says so, the empty append indeed leaves everything (and the events) as they are.
  const size_t events = r2.events.size();
  ASSERT_TRUE(r2.p().AppendAsFollower({}, Offset(9), Offset(0)).ok());
  EXPECT_EQ(r2.events.size(), events);
  EXPECT_EQ(r2.p().high_watermark(), Offset(4));
  EXPECT_EQ(r2.p().log_start_offset(), Offset(0));
}

// KIP-101, scenario 1 ("high watermark truncation followed by immediate leader election"): the
// follower B has both records but its HW lags by one fetch when it restarts; with the 0.10 policy
// it cuts to its HW, then A dies and B leads without the acknowledged record. With leader epochs B
// asks A where epoch 0 ends and keeps everything.
class Kip101Scenario1Test : public PartitionTest,
                            public ::testing::WithParamInterface<TruncationPolicy> {};

TEST_P(Kip101Scenario1Test, AcknowledgedRecordSurvivesOnlyWithLeaderEpochs) {
  PartitionConfig config;
  config.min_insync_replicas = 2;
  Replica& a = AddReplica(kB1, config);
  Replica& b = AddReplica(kB2, config);
  const std::vector<BrokerId> both{kB1, kB2};
  MakeLeader(a, State(kB1, 0, both, both));
  ASSERT_TRUE(b.p().MakeFollower(State(kB1, 0, both, both)));

  Produce(a, 1, -1);  // m1 at 0
  Fetch(a, b);        // B gets m1, HW 0
  LogAppendInfo m2 = Produce(a, 1, -1);
  Fetch(a, b);  // B fetched at 1: A's HW 1; B gets m2 and HW 1
  // B's next fetch (at 2) moves A's HW to 2 and acknowledges m2 ...
  a.p().UpdateFollowerFetch(kB2, b.p().log_end_offset());
  ASSERT_EQ(a.p().high_watermark(), Offset(2));
  AcksProgress acked = a.p().CheckEnoughReplicasReached(m2.last_offset + 1, -1);
  ASSERT_TRUE(acked.done);
  ASSERT_EQ(acked.error, Errc::kNone);
  // ... but B restarts before the response: its checkpointed HW is 1.
  ASSERT_EQ(b.p().high_watermark(), Offset(1));
  OpenPartition(b, b.p().high_watermark(), config);
  ASSERT_TRUE(b.p().MakeFollower(State(kB1, 0, both, both)));
  if (GetParam() == TruncationPolicy::kHighWatermark) {
    ASSERT_TRUE(b.p().TruncateTo(b.p().HighWatermarkTruncationOffset(), "high_watermark").ok());
  } else {
    EpochAndEndOffset answer = a.p().EndOffsetForEpoch(b.p().latest_epoch());
    TruncationDecision d = b.p().DecideTruncation(answer);
    ASSERT_TRUE(d.complete);
    ASSERT_TRUE(b.p().TruncateTo(d.truncate_to, "leader_epoch").ok());
  }
  // A dies; B is the only ISR member left and becomes leader in epoch 1.
  MakeLeader(b, State(kB2, 1, {kB2}, both));
  auto read = b.p().Read(Offset(0), 1 << 20, false);
  ASSERT_TRUE(read.ok());
  if (GetParam() == TruncationPolicy::kHighWatermark) {
    EXPECT_EQ(OffsetsIn(read->records), (std::vector<int64_t>{0}));  // m2 lost
    EXPECT_EQ(b.Named("truncate").back().fields["records"], 1);
  } else {
    EXPECT_EQ(OffsetsIn(read->records), (std::vector<int64_t>{0, 1}));  // m2 kept
    EXPECT_TRUE(b.Named("truncate").empty());
  }
  EXPECT_EQ(b.p().EndOffsetForEpoch(LeaderEpoch(1)).epoch, LeaderEpoch(1));
}

INSTANTIATE_TEST_SUITE_P(Policies, Kip101Scenario1Test,
                         ::testing::Values(TruncationPolicy::kHighWatermark,
                                           TruncationPolicy::kLeaderEpoch),
                         [](const auto& info) {
                           return info.param == TruncationPolicy::kHighWatermark
                                      ? std::string("HighWatermark")
                                      : std::string("LeaderEpoch");
                         });

// KIP-101, scenario 2 ("replica divergence on restart after multiple hard failures"): B had m2
// acknowledged but lost it unflushed in a power failure; B comes back first, leads epoch 1 and
// takes m3 at offset 1. A returns with HW 2: under the 0.10 policy it keeps m2 and the two logs
// differ at offset 1, below the HW; with leader epochs B answers that epoch 0 ended at 1, A cuts
// m2 and fetches m3.
class Kip101Scenario2Test : public PartitionTest,
                            public ::testing::WithParamInterface<TruncationPolicy> {
 protected:
  static void ProduceValue(Replica& leader, const std::string& value) {
    Bytes batch = MakeBatch(Offset(0), {value});
    auto info = leader.p().AppendAsLeader(batch, -1);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
  }
  static std::vector<std::string> Values(Replica& r) {
    auto read = r.log->Read(Offset(0), 1 << 20);
    EXPECT_TRUE(read.ok()) << read.status().ToString();
    std::vector<std::string> values;
    if (!read.ok()) return values;
    for (const Record& record : testing::RecordsIn(read->records)) {
      values.push_back(testing::ValueOf(record));
    }
    return values;
  }
};

TEST_P(Kip101Scenario2Test, LogsDivergeBelowTheHighWatermarkOnlyWithoutLeaderEpochs) {
  Replica& a = AddReplica(kB1);
  Replica& b = AddReplica(kB2);
  const std::vector<BrokerId> both{kB1, kB2};
  MakeLeader(a, State(kB1, 0, both, both));
  ASSERT_TRUE(b.p().MakeFollower(State(kB1, 0, both, both)));
  ProduceValue(a, "m1");
  ProduceValue(a, "m2");
  Fetch(a, b);  // B gets m1 and m2
  Fetch(a, b);  // A's HW 2, B's HW 2
  ASSERT_EQ(a.p().high_watermark(), Offset(2));
  ASSERT_EQ(b.p().high_watermark(), Offset(2));

  // Power failure on both. B lost m2 (never flushed): its log and checkpoint say 1.
  ASSERT_TRUE(b.p().TruncateTo(Offset(1), "power_failure").ok());
  OpenPartition(b, Offset(1));
  OpenPartition(a, Offset(2));
  // B comes back first and leads epoch 1; m3 lands at offset 1.
  MakeLeader(b, State(kB2, 1, {kB2}, both));
  ProduceValue(b, "m3");
  ASSERT_EQ(b.p().high_watermark(), Offset(2));

  // A comes back as B's follower.
  ASSERT_TRUE(a.p().MakeFollower(State(kB2, 1, {kB2}, both)));
  if (GetParam() == TruncationPolicy::kHighWatermark) {
    ASSERT_TRUE(a.p().TruncateTo(a.p().HighWatermarkTruncationOffset(), "high_watermark").ok());
  } else {
    EpochAndEndOffset answer = b.p().EndOffsetForEpoch(a.p().latest_epoch());
    EXPECT_EQ(answer, (EpochAndEndOffset{LeaderEpoch(0), Offset(1)}));
    TruncationDecision d = a.p().DecideTruncation(answer);
    ASSERT_TRUE(d.complete);
    ASSERT_TRUE(a.p().TruncateTo(d.truncate_to, "leader_epoch").ok());
  }
  Fetch(b, a);
  Fetch(b, a);
  EXPECT_EQ(a.p().high_watermark(), Offset(2));
  EXPECT_EQ(Values(b), (std::vector<std::string>{"m1", "m3"}));
  if (GetParam() == TruncationPolicy::kHighWatermark) {
    EXPECT_EQ(Values(a), (std::vector<std::string>{"m1", "m2"}));  // diverged below HW 2
  } else {
    EXPECT_EQ(Values(a), (std::vector<std::string>{"m1", "m3"}));
    EXPECT_EQ(a.p().epochs().entries(),
              (std::vector<EpochEntry>{{LeaderEpoch(0), Offset(0)}, {LeaderEpoch(1), Offset(1)}}));
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, Kip101Scenario2Test,
                         ::testing::Values(TruncationPolicy::kHighWatermark,
                                           TruncationPolicy::kLeaderEpoch),
                         [](const auto& info) {
                           return info.param == TruncationPolicy::kHighWatermark
                                      ? std::string("HighWatermark")
                                      : std::string("LeaderEpoch");
                         });

}  // namespace
}  // namespace ksim
