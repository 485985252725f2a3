// A Partition whose disk fails outside the Log's own writes (issue 17, R1): the
// leader-epoch-checkpoint written by MakeLeader and by a follower's append of a new epoch. Kafka
// 1.x/2.0 reports such a failure to the LogDirFailureChannel and the broker, its only log dir
// gone, halts; here the Partition tells its storage failure handler. MakeLeader writes the epoch
// before changing anything, so a failed write leaves the replica the follower it was, not a
// "leader" that never learns its followers' offsets (whose ISR and HW would never move).
// Each replica is a Partition over a real Log on a sim::VirtualDisk with injected fsync errors
// (the checkpoint's write fsyncs; an append without flush does not, so the Log is untouched).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/base/clock.h"
#include "core/cluster/partition.h"
#include "core/record/record_batch.h"
#include "core/storage/log.h"
#include "sim/world/virtual_disk.h"

namespace ksim::sim {
namespace {

constexpr int64_t kStartMs = 1'600'000'000'000;
const BrokerId kB1(1);
const BrokerId kB2(2);

struct Replica {
  BrokerId id;
  std::string dir;
  std::unique_ptr<Log> log;
  std::unique_ptr<Partition> partition;
  std::vector<std::string> events;
  std::vector<Status> storage_failures;  // what the handler heard
  Partition& p() { return *partition; }
  int Count(const std::string& ev) const {
    int n = 0;
    for (const std::string& e : events) n += e == ev ? 1 : 0;
    return n;
  }
};

class PartitionStorageFailureTest : public ::testing::Test {
 protected:
  PartitionStorageFailureTest() : clock_(kStartMs * kUsPerMs), disk_(RandomStream(3)) {}

  Replica& AddReplica(BrokerId id) {
    auto replica = std::make_unique<Replica>();
    replica->id = id;
    replica->dir = "/broker-" + ToString(id) + "/t-0";
    replicas_.push_back(std::move(replica));
    Replica& r = *replicas_.back();
    LogConfig config;
    config.max_index_size_bytes = 4096;
    auto log = Log::Open(disk_, clock_, r.dir, config);
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    r.log = std::move(log).value();
    auto epochs = LeaderEpochCache::Open(disk_, r.dir);
    EXPECT_TRUE(epochs.ok()) << epochs.status().ToString();
    auto producers = Partition::LoadProducerState(disk_, *r.log, clock_.NowMs());
    EXPECT_TRUE(producers.ok()) << producers.status().ToString();
    r.partition = std::make_unique<Partition>(
        TopicPartition{"t", PartitionId(0)}, r.id, *r.log, std::move(epochs).value(),
        std::move(producers).value(), clock_, PartitionConfig{}, Offset(0),
        [&r](std::string_view ev, EventFields) { r.events.emplace_back(ev); });
    r.partition->set_storage_failure_handler(
        [&r](const Status& error) { r.storage_failures.push_back(error); });
    return r;
  }

  static LeaderAndIsrPartitionState State(BrokerId leader, int32_t epoch,
                                          std::vector<BrokerId> isr) {
    LeaderAndIsrPartitionState state;
    state.tp = {"t", PartitionId(0)};
    state.leader = leader;
    state.leader_epoch = LeaderEpoch(epoch);
    state.isr = std::move(isr);
    state.replicas = {kB1, kB2};
    return state;
  }

  Bytes Batch(int count) const {
    std::vector<RecordInput> records;
    for (int i = 0; i < count; ++i) {
      RecordInput record;
      record.timestamp_ms = clock_.NowMs();
      record.value = ToBytes("v" + std::to_string(i));
      records.push_back(std::move(record));
    }
    return EncodeBatch(BatchSpec{}, records);
  }

  // Epochs as the checkpoint on disk has them.
  std::vector<EpochEntry> EpochsOnDisk(const Replica& r) {
    auto epochs = LeaderEpochCache::Open(disk_, r.dir);
    EXPECT_TRUE(epochs.ok()) << epochs.status().ToString();
    return epochs.ok() ? epochs->entries() : std::vector<EpochEntry>{};
  }

  ManualClock clock_;
  VirtualDisk disk_;
  std::vector<std::unique_ptr<Replica>> replicas_;
};

TEST_F(PartitionStorageFailureTest, MakeLeaderThatCannotWriteItsEpochChangesNothingAndReportsIt) {
  Replica& r1 = AddReplica(kB1);
  r1.p().MakeFollower(State(kB2, 0, {kB2, kB1}));
  ASSERT_EQ(r1.p().role(), ReplicaRole::kFollower);
  // What the follower keeps of remote replicas depends on the release (before 0.10.2 their
  // caught-up times stay): whatever it is, a failed MakeLeader leaves it.
  const size_t remotes_before = r1.p().remote_replicas().size();

  disk_.InjectFault(DiskFault::kSyncError, FaultPersistence::kUntilCleared);
  Result<bool> made = r1.p().MakeLeader(State(kB1, 1, {kB1, kB2}));
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), Errc::kKafkaStorageError);
  // The log dir failed: the broker is told (and halts).
  ASSERT_EQ(r1.storage_failures.size(), 1u);
  EXPECT_EQ(r1.storage_failures[0].code(), Errc::kKafkaStorageError);
  EXPECT_NE(r1.storage_failures[0].message().find("leader-epoch-checkpoint"), std::string::npos)
      << r1.storage_failures[0].ToString();
  // Nothing of the leadership was applied: still the follower of broker 2 at epoch 0.
  EXPECT_EQ(r1.p().role(), ReplicaRole::kFollower);
  EXPECT_EQ(r1.p().leader(), kB2);
  EXPECT_EQ(r1.p().leader_epoch(), LeaderEpoch(0));
  EXPECT_TRUE(r1.p().isr().empty());
  EXPECT_EQ(r1.p().remote_replicas().size(), remotes_before);
  EXPECT_EQ(r1.Count("become_leader"), 0);
  EXPECT_TRUE(EpochsOnDisk(r1).empty());

  // Once the disk works, the same LeaderAndIsr makes a whole leader: it tracks its follower.
  disk_.ClearFault(DiskFault::kSyncError);
  made = r1.p().MakeLeader(State(kB1, 1, {kB1, kB2}));
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_TRUE(*made);
  EXPECT_EQ(r1.p().role(), ReplicaRole::kLeader);
  EXPECT_EQ(r1.p().remote_replicas().count(kB2), 1u);
  EXPECT_EQ(r1.Count("become_leader"), 1);
  EXPECT_EQ(EpochsOnDisk(r1), (std::vector<EpochEntry>{{LeaderEpoch(1), Offset(0)}}));
  EXPECT_EQ(r1.storage_failures.size(), 1u);
}

TEST_F(PartitionStorageFailureTest, FollowerAppendThatCannotWriteTheNewEpochReportsIt) {
  Replica& leader = AddReplica(kB1);
  Replica& follower = AddReplica(kB2);
  ASSERT_TRUE(leader.p().MakeLeader(State(kB1, 3, {kB1, kB2})).ok());
  follower.p().MakeFollower(State(kB1, 3, {kB1, kB2}));
  Bytes batch = Batch(2);
  ASSERT_TRUE(leader.p().AppendAsLeader(MutableByteView(batch), 1).ok());
  auto data = leader.p().Read(Offset(0), 1 << 20, /*from_follower=*/true);
  ASSERT_TRUE(data.ok()) << data.status().ToString();

  // The batch carries epoch 3, new to the follower: its cache writes the checkpoint, which fails.
  disk_.InjectFault(DiskFault::kSyncError, FaultPersistence::kUntilCleared);
  auto appended = follower.p().AppendAsFollower(data->records, leader.p().high_watermark(),
                                                leader.p().log_start_offset());
  ASSERT_FALSE(appended.ok());
  EXPECT_EQ(appended.status().code(), Errc::kKafkaStorageError);
  ASSERT_EQ(follower.storage_failures.size(), 1u);
  EXPECT_EQ(follower.storage_failures[0].code(), Errc::kKafkaStorageError);
  EXPECT_TRUE(leader.storage_failures.empty());
}

}  // namespace
}  // namespace ksim::sim
