// DelayedProduce over real leader partitions: after its first check of all the partitions of a
// request, CheckAndComplete(key) looks at `key`'s partitions alone (core/server/purgatory.h), and
// the request answers once the last of them is acked. Debug builds check that no other partition
// settled unseen; a WatchAdded makes the next check a full one again.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/clock.h"
#include "core/cluster/partition.h"
#include "core/record/record_batch.h"
#include "core/server/purgatory.h"
#include "core/storage/log.h"
#include "sim/world/virtual_disk.h"

namespace ksim {
namespace {

constexpr int64_t kStartMs = 1'600'000'000'000;
const BrokerId kLeader(1);
const BrokerId kFollower(2);
const TopicPartition kT0{"t", PartitionId(0)};
const TopicPartition kT1{"t", PartitionId(1)};

// `tp` led by `leader` at `epoch`, replicas kLeader and kFollower.
LeaderAndIsrPartitionState State(const TopicPartition& tp, BrokerId leader, int32_t epoch,
                                 std::vector<BrokerId> isr) {
  LeaderAndIsrPartitionState state;
  state.tp = tp;
  state.leader = leader;
  state.leader_epoch = LeaderEpoch(epoch);
  state.isr = std::move(isr);
  state.replicas = {kLeader, kFollower};
  return state;
}

class DelayedProduceKeysTest : public ::testing::Test {
 protected:
  DelayedProduceKeysTest() : clock_(kStartMs * kUsPerMs), disk_(RandomStream(5)) {}

  void SetUp() override {
    for (const TopicPartition& tp : {kT0, kT1}) {
      AddLeader(tp);
      if (HasFatalFailure()) return;
    }
  }

  // A leader of `tp` on kLeader, ISR {kLeader, kFollower}, holding one record the follower has
  // not fetched: an acks=-1 produce of it waits for offset 1.
  void AddLeader(const TopicPartition& tp) {
    const std::string dir = "/broker-1/" + ToString(tp);
    auto log = Log::Open(disk_, clock_, dir, LogConfig{});
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    logs_.push_back(std::move(log).value());
    auto epochs = LeaderEpochCache::Open(disk_, dir);
    ASSERT_TRUE(epochs.ok()) << epochs.status().ToString();
    auto producers = Partition::LoadProducerState(disk_, *logs_.back(), clock_.NowMs());
    ASSERT_TRUE(producers.ok()) << producers.status().ToString();
    partitions_.push_back(std::make_unique<Partition>(
        tp, kLeader, *logs_.back(), std::move(epochs).value(), std::move(producers).value(), clock_,
        PartitionConfig{}, Offset(0), nullptr));
    Partition& partition = *partitions_.back();
    auto made = partition.MakeLeader(State(tp, kLeader, 0, {kLeader, kFollower}));
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    RecordInput record;
    record.timestamp_ms = clock_.NowMs();
    record.value = Bytes{'v'};
    Bytes batch = EncodeBatch(BatchSpec{}, {&record, 1});
    auto appended = partition.AppendAsLeader(MutableByteView(batch), /*acks=*/-1);
    ASSERT_TRUE(appended.ok()) << appended.status().ToString();
    ASSERT_EQ(partition.high_watermark(), Offset(0));
  }

  Partition& Of(const TopicPartition& tp) {
    return *partitions_[static_cast<size_t>(tp.partition.value())];
  }

  // The follower fetches from offset 1: it holds the record, the HW moves to 1.
  void Replicate(const TopicPartition& tp) {
    Of(tp).UpdateFollowerFetch(kFollower, Offset(1));
    ASSERT_EQ(Of(tp).high_watermark(), Offset(1));
  }

  std::unique_ptr<DelayedProduce> Produce() {
    std::vector<ProducePartitionStatus> statuses;
    for (const TopicPartition& tp : {kT0, kT1}) {
      ProducePartitionStatus status;
      status.response.tp = tp;
      status.required_offset = Offset(1);
      status.pending = true;
      statuses.push_back(status);
    }
    return std::make_unique<DelayedProduce>(
        -1, std::move(statuses), [this](const TopicPartition& tp) { return &Of(tp); },
        [this](ProduceResponse response) { answer_ = std::move(response); });
  }

  ManualClock clock_;
  sim::VirtualDisk disk_;
  std::vector<std::unique_ptr<Log>> logs_;
  std::vector<std::unique_ptr<Partition>> partitions_;
  std::optional<ProduceResponse> answer_;
};

TEST_F(DelayedProduceKeysTest, AnswersWhenTheLastKeyIsAcked) {
  std::unique_ptr<DelayedProduce> produce = Produce();
  EXPECT_FALSE(produce->TryComplete());
  Replicate(kT0);
  EXPECT_FALSE(produce->TryCompleteFor(kT0));  // kT1 still waits
  EXPECT_FALSE(answer_.has_value());
  EXPECT_FALSE(produce->TryCompleteFor(kT0));  // checked again: nothing new
  Replicate(kT1);
  EXPECT_TRUE(produce->TryCompleteFor(kT1));
  ASSERT_TRUE(answer_.has_value());
  ASSERT_EQ(answer_->responses.size(), 2u);
  EXPECT_EQ(answer_->responses[0].tp, kT0);
  EXPECT_EQ(answer_->responses[0].error_code, Errc::kNone);
  EXPECT_EQ(answer_->responses[1].tp, kT1);
  EXPECT_EQ(answer_->responses[1].error_code, Errc::kNone);
}

TEST_F(DelayedProduceKeysTest, ALeaderLostAnswersItsPartitionWhenItsKeyIsChecked) {
  std::unique_ptr<DelayedProduce> produce = Produce();
  EXPECT_FALSE(produce->TryComplete());
  Replicate(kT1);
  EXPECT_FALSE(produce->TryCompleteFor(kT1));
  Of(kT0).MakeFollower(State(kT0, kFollower, 1, {kFollower}));
  EXPECT_TRUE(produce->TryCompleteFor(kT0));
  ASSERT_TRUE(answer_.has_value());
  EXPECT_EQ(answer_->responses[0].error_code, Errc::kNotLeaderForPartition);
  EXPECT_EQ(answer_->responses[1].error_code, Errc::kNone);
}

// A key watched late (Purgatory::WatchLate): the next check looks at every partition again.
TEST_F(DelayedProduceKeysTest, AKeyWatchedLateMakesTheNextCheckAFullOne) {
  std::unique_ptr<DelayedProduce> produce = Produce();
  EXPECT_FALSE(produce->TryComplete());
  Replicate(kT0);
  Replicate(kT1);
  produce->WatchAdded();
  EXPECT_TRUE(produce->TryCompleteFor(kT0));  // kT1's ack seen too
  ASSERT_TRUE(answer_.has_value());
  EXPECT_EQ(answer_->responses[1].error_code, Errc::kNone);
}

#ifndef NDEBUG
// What the key-only check relies on, checked in debug builds: a partition whose acks moved
// without a CheckAndComplete of its key is a bug of the caller, found at the next check.
TEST_F(DelayedProduceKeysTest, DebugBuildsRefuseAPartitionSettledUnseen) {
  std::unique_ptr<DelayedProduce> produce = Produce();
  EXPECT_FALSE(produce->TryComplete());
  Replicate(kT1);
  EXPECT_DEATH(produce->TryCompleteFor(kT0), "settled without a check of its key");
}
#endif

}  // namespace
}  // namespace ksim
