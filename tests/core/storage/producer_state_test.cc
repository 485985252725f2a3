// ProducerStateManager: the cases of Kafka's ProducerStateManagerTest that apply without
// transactions (basic id mapping, wrap-around, fencing, gaps, unvalidated follower and recovery
// updates, expiry, truncateHead, snapshots and their damage), the five-batch duplicate cache of
// KAFKA-5494 (Kafka's LogTest.testDuplicateAppends / testOldProducerEpoch), and rebuilding from a
// real Log after truncation so that a new leader still deduplicates.
#include "core/storage/producer_state.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/base/clock.h"
#include "core/base/random.h"
#include "core/env/posix_env.h"
#include "core/storage/log.h"
#include "tests/support/core/temp_dir.h"

namespace ksim {
namespace {

constexpr ProducerId kPid{1};
constexpr int64_t kExpirationMs = 60 * 1000;  // as ProducerStateManagerTest's maxPidExpirationMs
constexpr int32_t kIntMax = std::numeric_limits<int32_t>::max();

// A data batch of `count` records from a producer, as the broker sees it once offsets are set.
BatchHeader Batch(ProducerId pid, int16_t epoch, int32_t first_sequence, int64_t base_offset,
                  int32_t count = 1, int64_t timestamp_ms = 0) {
  BatchHeader b;
  b.producer_id = pid;
  b.producer_epoch = ProducerEpoch(epoch);
  b.base_sequence = Sequence(first_sequence);
  b.base_offset = Offset(base_offset);
  b.last_offset_delta = count - 1;
  b.records_count = count;
  b.base_timestamp = timestamp_ms;
  b.max_timestamp = timestamp_ms;
  return b;
}

BatchHeader Control(ProducerId pid, int16_t epoch, int64_t offset) {
  BatchHeader b = Batch(pid, epoch, -1, offset);
  b.attributes = 0x20 | 0x10;  // control, transactional
  return b;
}

class ProducerStateTest : public ::testing::Test {
 protected:
  ProducerStateTest() : dir_(JoinPath(tmp_.path(), "t-0")) {
    EXPECT_TRUE(env_.CreateDir(dir_).ok());
    manager_ = std::make_unique<ProducerStateManager>(env_, dir_, kExpirationMs);
  }

  // The leader path: validate, and when neither refused nor a duplicate, record the append.
  static Result<AppendCheck> Append(ProducerStateManager& m, const BatchHeader& b) {
    Result<AppendCheck> check = m.ValidateAppend(b);
    if (check.ok() && !check->duplicate) m.Update(b);
    return check;
  }
  Result<AppendCheck> Append(const BatchHeader& b) { return Append(*manager_, b); }
  void ExpectAppended(const BatchHeader& b) {
    const Result<AppendCheck> check = Append(b);
    ASSERT_TRUE(check.ok()) << check.status().ToString();
    EXPECT_FALSE(check->duplicate.has_value());
  }

  std::set<int64_t> SnapshotOffsets() {
    std::set<int64_t> out;
    auto offsets = manager_->SnapshotOffsets();
    EXPECT_TRUE(offsets.ok());
    for (Offset o : *offsets) out.insert(o.value());
    return out;
  }
  std::unique_ptr<ProducerStateManager> Reopen() {
    return std::make_unique<ProducerStateManager>(env_, dir_, kExpirationMs);
  }

  testing::TempDir tmp_;
  PosixEnv env_;
  std::string dir_;
  std::unique_ptr<ProducerStateManager> manager_;
};

TEST_F(ProducerStateTest, BasicIdMapping) {
  ExpectAppended(Batch(kPid, 0, 0, 0));
  ExpectAppended(Batch(kPid, 0, 1, 1));

  // The same batch again is a duplicate (1.x: answered with its offsets, not an error).
  Result<AppendCheck> again = Append(Batch(kPid, 0, 1, 2));
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE(again->duplicate.has_value());
  EXPECT_EQ(again->duplicate->first_offset, Offset(1));
  EXPECT_EQ(manager_->map_end_offset(), Offset(2));  // nothing appended

  // Greater than the next expected sequence.
  EXPECT_EQ(Append(Batch(kPid, 0, 5, 2)).status(), Errc::kOutOfOrderSequenceNumber);
  // A new epoch starting at 0.
  ExpectAppended(Batch(kPid, 1, 0, 2));
  // The old epoch is fenced.
  EXPECT_EQ(Append(Batch(kPid, 0, 2, 3)).status(), Errc::kInvalidProducerEpoch);
  EXPECT_EQ(manager_->LastEntry(kPid)->epoch, ProducerEpoch(1));
}

TEST(RetainedBatchesTest, KeepsTheNewestOldestFirstAcrossTheRingsWrap) {
  auto batch = [](int i) {
    return BatchMetadata{Sequence(i), Sequence(i), Offset(10 * i), Offset(10 * i), 1000 + i};
  };
  RetainedBatches ring;
  EXPECT_TRUE(ring.empty());
  // Twelve batches through a ring of five, the oldest dropped as an entry drops it: every slot is
  // reused twice, and the order read back is always oldest first.
  for (int i = 0; i < 12; ++i) {
    while (ring.size() >= RetainedBatches::kCapacity) ring.pop_front();
    ring.push_back(batch(i));
    const int oldest = std::max(0, i - 4);
    ASSERT_EQ(ring.size(), static_cast<size_t>(i - oldest + 1));
    EXPECT_EQ(ring.front(), batch(oldest));
    EXPECT_EQ(ring.back(), batch(i));
    int expected = oldest;
    for (const BatchMetadata& b : ring) EXPECT_EQ(b, batch(expected++));
    EXPECT_EQ(expected, i + 1);
  }
  // A copy is its own: changing it leaves the original as it was.
  RetainedBatches copy = ring;
  copy.pop_front();
  copy.push_back(batch(12));
  EXPECT_EQ(ring.front(), batch(7));
  EXPECT_EQ(ring.back(), batch(11));
  EXPECT_EQ(copy.front(), batch(8));
  EXPECT_EQ(copy.back(), batch(12));
  ring.clear();
  EXPECT_TRUE(ring.empty());
  EXPECT_EQ(ring.begin(), ring.end());
}

TEST(RetainedBatchesDeathTest, AFullRingOrAnEmptyOneIsAProgrammerError) {
  RetainedBatches ring;
  EXPECT_DEATH(ring.pop_front(), "");
  for (size_t i = 0; i < RetainedBatches::kCapacity; ++i) ring.push_back(BatchMetadata{});
  EXPECT_DEATH(ring.push_back(BatchMetadata{}), "");
}

TEST_F(ProducerStateTest, DuplicateOfAnyOfTheLastFiveBatchesReturnsItsOriginalOffsets) {
  // Six batches of two records: sequences 0-1, 2-3, ..., 10-11 at offsets 100-101, 102-103, ...
  for (int i = 0; i < 6; ++i) ExpectAppended(Batch(kPid, 0, 2 * i, 100 + 2 * i, 2, 1000 + i));
  const ProducerStateEntry* entry = manager_->LastEntry(kPid);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->batches.size(), ProducerStateEntry::kBatchesToRetain);
  EXPECT_EQ(entry->first_sequence(), Sequence(2));
  EXPECT_EQ(entry->last_sequence(), Sequence(11));

  for (int i = 1; i < 6; ++i) {
    // The retry's own offsets are irrelevant: the broker answers with the original ones.
    const Result<AppendCheck> retry = Append(Batch(kPid, 0, 2 * i, 500, 2));
    ASSERT_TRUE(retry.ok()) << i;
    ASSERT_TRUE(retry->duplicate.has_value()) << i;
    EXPECT_EQ(retry->duplicate->first_offset, Offset(100 + 2 * i));
    EXPECT_EQ(retry->duplicate->last_offset, Offset(101 + 2 * i));
    EXPECT_EQ(retry->duplicate->timestamp_ms, 1000 + i);
  }
  EXPECT_EQ(manager_->map_end_offset(), Offset(112));
  // The oldest batch fell out of the cache: its retry is out of order, not a duplicate.
  EXPECT_EQ(Append(Batch(kPid, 0, 0, 112, 2)).status(), Errc::kOutOfOrderSequenceNumber);
  // Same first sequence, different last: not a duplicate either.
  EXPECT_EQ(Append(Batch(kPid, 0, 8, 112, 3)).status(), Errc::kOutOfOrderSequenceNumber);
}

// Kafka 0.11.0's ProducerIdEntry: the last batch alone is recognised, an earlier one's retry is
// out of order, and a producer the broker has no record of is OUT_OF_ORDER_SEQUENCE_NUMBER (no
// UNKNOWN_PRODUCER_ID before 1.0).
TEST_F(ProducerStateTest, At0110OnlyTheLastBatchIsADuplicate) {
  EXPECT_EQ(ProducerStateRulesAt(KafkaRelease::k0_11_0).batches_to_retain, 1u);
  EXPECT_EQ(ProducerStateRulesAt(KafkaRelease::k1_0).batches_to_retain, 5u);
  ProducerStateManager at0110(env_, dir_, kExpirationMs,
                              ProducerStateRulesAt(KafkaRelease::k0_11_0));
  for (int i = 0; i < 3; ++i) {
    const Result<AppendCheck> check = Append(at0110, Batch(kPid, 0, 2 * i, 100 + 2 * i, 2));
    ASSERT_TRUE(check.ok() && !check->duplicate) << i;
  }
  EXPECT_EQ(at0110.LastEntry(kPid)->batches.size(), 1u);
  const Result<AppendCheck> last = Append(at0110, Batch(kPid, 0, 4, 500, 2));
  ASSERT_TRUE(last.ok());
  ASSERT_TRUE(last->duplicate.has_value());
  EXPECT_EQ(last->duplicate->first_offset, Offset(104));
  EXPECT_EQ(Append(at0110, Batch(kPid, 0, 2, 500, 2)).status(), Errc::kOutOfOrderSequenceNumber);
  EXPECT_EQ(Append(at0110, Batch(ProducerId(kPid.value() + 1), 0, 3, 106)).status(),
            Errc::kOutOfOrderSequenceNumber);
  EXPECT_EQ(Append(*manager_, Batch(ProducerId(kPid.value() + 1), 0, 3, 0)).status(),
            Errc::kUnknownProducerId);  // 1.0 on: the fixture's manager
}

TEST_F(ProducerStateTest, SameSequencesUnderAnotherEpochAreNotDuplicates) {
  ExpectAppended(Batch(kPid, 0, 0, 0, 3));
  // Epoch 1 restarting at 0 with the same range is new data (findDuplicateBatch checks epochs).
  ExpectAppended(Batch(kPid, 1, 0, 3, 3));
  EXPECT_EQ(manager_->LastEntry(kPid)->batches.size(), 1u);  // the new epoch cleared the cache
  // And the epoch-0 batch is now fenced rather than a duplicate.
  EXPECT_EQ(Append(Batch(kPid, 0, 0, 6, 3)).status(), Errc::kInvalidProducerEpoch);
}

TEST_F(ProducerStateTest, NewEpochOfKnownProducerMustStartAtZero) {
  ExpectAppended(Batch(kPid, 0, 0, 0));
  EXPECT_EQ(Append(Batch(kPid, 1, 1, 1)).status(), Errc::kOutOfOrderSequenceNumber);
}

TEST_F(ProducerStateTest, UnknownProducerMustStartAtZero) {
  // Kafka 1.1/2.0 checkSequence: no record of the producer and a sequence other than 0.
  EXPECT_EQ(Append(Batch(kPid, 0, 3, 0)).status(), Errc::kUnknownProducerId);
  EXPECT_EQ(manager_->LastEntry(kPid), nullptr);
  ExpectAppended(Batch(kPid, 0, 0, 0));
}

TEST_F(ProducerStateTest, SequenceGapIsOutOfOrder) {
  ExpectAppended(Batch(kPid, 0, 0, 0, 5));
  EXPECT_EQ(Append(Batch(kPid, 0, 6, 5)).status(), Errc::kOutOfOrderSequenceNumber);
  EXPECT_EQ(Append(Batch(kPid, 0, 4, 5)).status(), Errc::kOutOfOrderSequenceNumber);
  ExpectAppended(Batch(kPid, 0, 5, 5));
}

TEST_F(ProducerStateTest, ProducerSequenceWrapAround) {
  manager_->Update(Batch(kPid, 15, kIntMax, 735));  // loaded from the log: no validation
  ExpectAppended(Batch(kPid, 15, 0, 1235));
  const ProducerStateEntry* entry = manager_->LastEntry(kPid);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->epoch, ProducerEpoch(15));
  EXPECT_EQ(entry->first_sequence(), Sequence(kIntMax));
  EXPECT_EQ(entry->last_sequence(), Sequence(0));
}

TEST_F(ProducerStateTest, ProducerSequenceInvalidWrapAround) {
  manager_->Update(Batch(kPid, 15, kIntMax, 735));
  EXPECT_EQ(Append(Batch(kPid, 15, 1, 1235)).status(), Errc::kOutOfOrderSequenceNumber);
}

TEST_F(ProducerStateTest, BatchSpanningTheWrapEndsPastZero) {
  ExpectAppended(Batch(kPid, 0, 0, 0));
  manager_->Update(Batch(kPid, 0, kIntMax - 1, 1, 3));  // sequences MAX-1, MAX, 0
  EXPECT_EQ(manager_->LastEntry(kPid)->last_sequence(), Sequence(0));
  // Sequence 0 again (two records, so not the cached 0..0 batch) would repeat the wrapped one.
  EXPECT_EQ(Append(Batch(kPid, 0, 0, 4, 2)).status(), Errc::kOutOfOrderSequenceNumber);
  ExpectAppended(Batch(kPid, 0, 1, 4));
  // A retry of the spanning batch is recognised.
  const Result<AppendCheck> retry = Append(Batch(kPid, 0, kIntMax - 1, 9, 3));
  ASSERT_TRUE(retry.ok());
  ASSERT_TRUE(retry->duplicate.has_value());
  EXPECT_EQ(retry->duplicate->first_offset, Offset(1));
  EXPECT_EQ(retry->duplicate->last_offset, Offset(3));
}

TEST_F(ProducerStateTest, NoValidationOnFirstEntryWhenLoadingLog) {
  manager_->Update(Batch(kPid, 5, 16, 735));
  const ProducerStateEntry* entry = manager_->LastEntry(kPid);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->epoch, ProducerEpoch(5));
  EXPECT_EQ(entry->first_sequence(), Sequence(16));
  EXPECT_EQ(entry->last_sequence(), Sequence(16));
  EXPECT_EQ(entry->first_offset(), Offset(735));
  EXPECT_EQ(entry->last_offset(), Offset(735));
}

TEST_F(ProducerStateTest, AcceptAppendWithSequenceGapsOnReplica) {
  ExpectAppended(Batch(kPid, 0, 0, 0));
  EXPECT_EQ(Append(Batch(kPid, 0, 3, 1)).status(), Errc::kOutOfOrderSequenceNumber);
  EXPECT_EQ(manager_->LastEntry(kPid)->last_sequence(), Sequence(0));
  manager_->Update(Batch(kPid, 0, 3, 1));  // a follower takes what the leader has
  EXPECT_EQ(manager_->LastEntry(kPid)->last_sequence(), Sequence(3));
}

TEST_F(ProducerStateTest, ReplicaAcceptsOlderEpochAndUnknownProducer) {
  ExpectAppended(Batch(kPid, 3, 0, 0));
  manager_->Update(Batch(kPid, 2, 7, 1));  // what the leader's log says goes
  EXPECT_EQ(manager_->LastEntry(kPid)->epoch, ProducerEpoch(2));
  manager_->Update(Batch(ProducerId(9), 0, 42, 2));
  EXPECT_EQ(manager_->LastEntry(ProducerId(9))->last_sequence(), Sequence(42));
}

TEST_F(ProducerStateTest, ValidateDoesNotChangeState) {
  ExpectAppended(Batch(kPid, 0, 0, 0));
  ASSERT_TRUE(manager_->ValidateAppend(Batch(kPid, 0, 1, 1)).ok());
  ASSERT_TRUE(manager_->ValidateAppend(Batch(ProducerId(2), 0, 0, 1)).ok());
  EXPECT_EQ(manager_->LastEntry(kPid)->last_sequence(), Sequence(0));
  EXPECT_EQ(manager_->LastEntry(ProducerId(2)), nullptr);
  EXPECT_EQ(manager_->map_end_offset(), Offset(1));
}

TEST_F(ProducerStateTest, BatchesOfOneRequestAreValidatedInTurn) {
  ExpectAppended(Batch(kPid, 0, 0, 0, 5));
  const std::vector<BatchHeader> in_order{Batch(kPid, 0, 5, 5, 5), Batch(kPid, 0, 10, 10, 5)};
  const Result<AppendCheck> ok = manager_->ValidateAppend(in_order);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_FALSE(ok->duplicate.has_value());
  const std::vector<BatchHeader> gap{Batch(kPid, 0, 5, 5, 5), Batch(kPid, 0, 11, 10, 5)};
  EXPECT_EQ(manager_->ValidateAppend(gap).status(), Errc::kOutOfOrderSequenceNumber);
  // A new epoch within the request, then its continuation.
  const std::vector<BatchHeader> bump{Batch(kPid, 1, 0, 5, 2), Batch(kPid, 1, 2, 7, 2)};
  EXPECT_TRUE(manager_->ValidateAppend(bump).ok());
  // A request whose second batch is a duplicate is answered as that duplicate (Kafka's
  // analyzeAndValidateProducerState returns on the first duplicate).
  const std::vector<BatchHeader> dup{Batch(ProducerId(2), 0, 0, 5), Batch(kPid, 0, 0, 6, 5)};
  const Result<AppendCheck> d = manager_->ValidateAppend(dup);
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE(d->duplicate.has_value());
  EXPECT_EQ(d->duplicate->first_offset, Offset(0));
}

TEST_F(ProducerStateTest, BatchesWithoutProducerIdAreIgnored) {
  const BatchHeader plain = Batch(kNoProducerId, -1, -1, 0, 10);
  EXPECT_TRUE(manager_->ValidateAppend(plain).ok());
  manager_->Update(plain);
  EXPECT_TRUE(manager_->producers().empty());
  EXPECT_EQ(manager_->map_end_offset(), Offset(10));
  manager_->Update(Batch(kNoProducerId, -1, -1, 10, 1));
  EXPECT_TRUE(manager_->producers().empty());
  EXPECT_EQ(manager_->map_end_offset(), Offset(11));
}

TEST_F(ProducerStateTest, ControlRecordBumpsEpoch) {
  ExpectAppended(Batch(kPid, 0, 0, 0));
  manager_->Update(Control(kPid, 1, 1));
  const ProducerStateEntry* entry = manager_->LastEntry(kPid);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->epoch, ProducerEpoch(1));
  EXPECT_EQ(entry->first_sequence(), kNoSequence);
  EXPECT_EQ(entry->last_sequence(), kNoSequence);
  // testOutOfSequenceAfterControlRecordEpochBump: the sequence must restart at 0.
  EXPECT_EQ(Append(Batch(kPid, 1, 1, 2)).status(), Errc::kOutOfOrderSequenceNumber);
  ExpectAppended(Batch(kPid, 1, 0, 2));
  EXPECT_EQ(manager_->LastEntry(kPid)->first_sequence(), Sequence(0));
}

TEST_F(ProducerStateTest, PidExpirationTimeout) {
  ExpectAppended(Batch(kPid, 5, 0, 0, 1, /*timestamp_ms=*/1000));
  manager_->RemoveExpiredProducers(1000 + kExpirationMs - 1);
  ASSERT_NE(manager_->LastEntry(kPid), nullptr);
  manager_->RemoveExpiredProducers(1000 + kExpirationMs);
  EXPECT_EQ(manager_->LastEntry(kPid), nullptr);
  EXPECT_EQ(Append(Batch(kPid, 5, 1, 1)).status(), Errc::kUnknownProducerId);
}

TEST_F(ProducerStateTest, TruncateHead) {
  ExpectAppended(Batch(kPid, 0, 0, 0));
  ExpectAppended(Batch(kPid, 0, 1, 1));
  ASSERT_TRUE(manager_->TakeSnapshot().ok());
  const ProducerId another(2);
  ExpectAppended(Batch(another, 0, 0, 2));
  ExpectAppended(Batch(another, 0, 1, 3));
  ASSERT_TRUE(manager_->TakeSnapshot().ok());
  EXPECT_EQ(SnapshotOffsets(), (std::set<int64_t>{2, 4}));

  ASSERT_TRUE(manager_->TruncateHead(Offset(2)).ok());
  EXPECT_EQ(SnapshotOffsets(), (std::set<int64_t>{2, 4}));
  EXPECT_EQ(manager_->producers().size(), 1u);
  EXPECT_EQ(manager_->LastEntry(kPid), nullptr);
  ASSERT_NE(manager_->LastEntry(another), nullptr);
  EXPECT_EQ(manager_->LastEntry(another)->last_offset(), Offset(3));

  ASSERT_TRUE(manager_->TruncateHead(Offset(3)).ok());
  EXPECT_EQ(manager_->producers().size(), 1u);
  EXPECT_EQ(manager_->LastEntry(another)->batches.size(), 1u);  // offset 2 dropped
  EXPECT_EQ(SnapshotOffsets(), (std::set<int64_t>{4}));
  EXPECT_EQ(manager_->map_end_offset(), Offset(4));

  ASSERT_TRUE(manager_->TruncateHead(Offset(5)).ok());
  EXPECT_TRUE(manager_->producers().empty());
  EXPECT_TRUE(SnapshotOffsets().empty());
  EXPECT_EQ(manager_->map_end_offset(), Offset(5));
  // The last snapshot is now the log start: nothing new to write there.
  ASSERT_TRUE(manager_->TakeSnapshot().ok());
  EXPECT_TRUE(SnapshotOffsets().empty());
}

TEST_F(ProducerStateTest, TakeSnapshotWritesOneFileAndSkipsWhenUnchanged) {
  ExpectAppended(Batch(kPid, 0, 0, 0));
  ExpectAppended(Batch(kPid, 0, 1, 1));
  ASSERT_TRUE(manager_->TakeSnapshot().ok());
  EXPECT_EQ(SnapshotOffsets(), (std::set<int64_t>{2}));
  auto size = env_.FileSize(manager_->SnapshotPath(Offset(2)));
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, 2u + 4 + 4 + 46);           // one producer entry
  ASSERT_TRUE(manager_->TakeSnapshot().ok());  // testSkipSnapshotIfOffsetUnchanged
  EXPECT_EQ(SnapshotOffsets(), (std::set<int64_t>{2}));
}

TEST_F(ProducerStateTest, RecoverFromSnapshot) {
  ExpectAppended(Batch(kPid, 0, 0, 0));
  ExpectAppended(Batch(kPid, 0, 1, 1));
  ASSERT_TRUE(manager_->TakeSnapshot().ok());
  auto recovered = Reopen();
  ASSERT_TRUE(recovered->TruncateAndReload(Offset(0), Offset(3), 0).ok());
  EXPECT_EQ(recovered->map_end_offset(), Offset(2));
  ASSERT_NE(recovered->LastEntry(kPid), nullptr);
  // The entry continues after recovery; the last batch is still recognised as a duplicate.
  const Result<AppendCheck> retry = Append(*recovered, Batch(kPid, 0, 1, 2));
  ASSERT_TRUE(retry.ok());
  ASSERT_TRUE(retry->duplicate.has_value());
  EXPECT_EQ(retry->duplicate->first_offset, Offset(1));
  EXPECT_TRUE(Append(*recovered, Batch(kPid, 0, 2, 2)).ok());
}

TEST_F(ProducerStateTest, RemoveExpiredPidsOnReload) {
  ExpectAppended(Batch(kPid, 0, 0, 0, 1, 0));
  ExpectAppended(Batch(kPid, 0, 1, 1, 1, 1));
  ASSERT_TRUE(manager_->TakeSnapshot().ok());
  auto recovered = Reopen();
  ASSERT_TRUE(recovered->TruncateAndReload(Offset(0), Offset(1), 70000).ok());
  EXPECT_EQ(Append(*recovered, Batch(kPid, 0, 2, 2, 1, 70001)).status(), Errc::kUnknownProducerId);
}

TEST_F(ProducerStateTest, TruncateAndReloadRemovesOutOfRangeSnapshots) {
  for (int i = 0; i < 5; ++i) {
    ExpectAppended(Batch(kPid, 0, i, i));
    ASSERT_TRUE(manager_->TakeSnapshot().ok());
  }
  EXPECT_EQ(SnapshotOffsets(), (std::set<int64_t>{1, 2, 3, 4, 5}));
  ASSERT_TRUE(manager_->TruncateAndReload(Offset(1), Offset(3), 0).ok());
  EXPECT_EQ(SnapshotOffsets(), (std::set<int64_t>{2, 3}));
  EXPECT_EQ(manager_->map_end_offset(), Offset(3));
  EXPECT_EQ(manager_->LastEntry(kPid)->last_sequence(), Sequence(2));
  // The latest snapshot kept (3) is the last one taken: no new one at the same offset; the next
  // batch's is written.
  ASSERT_TRUE(manager_->TakeSnapshot().ok());
  EXPECT_EQ(SnapshotOffsets(), (std::set<int64_t>{2, 3}));
  ExpectAppended(Batch(kPid, 0, 3, 3));
  ASSERT_TRUE(manager_->TakeSnapshot().ok());
  EXPECT_EQ(SnapshotOffsets(), (std::set<int64_t>{2, 3, 4}));
}

TEST_F(ProducerStateTest, LoadFromSnapshotRemovesNonRetainedProducers) {
  const ProducerId pid1(1), pid2(2);
  ExpectAppended(Batch(pid1, 0, 0, 0));
  ExpectAppended(Batch(pid2, 0, 0, 1));
  ASSERT_TRUE(manager_->TakeSnapshot().ok());
  EXPECT_EQ(manager_->producers().size(), 2u);
  ASSERT_TRUE(manager_->TruncateAndReload(Offset(1), Offset(2), 0).ok());
  EXPECT_EQ(manager_->producers().size(), 1u);
  EXPECT_EQ(manager_->LastEntry(pid1), nullptr);
  ASSERT_NE(manager_->LastEntry(pid2), nullptr);
  EXPECT_EQ(manager_->LastEntry(pid2)->last_sequence(), Sequence(0));
  EXPECT_EQ(manager_->LastEntry(pid2)->last_offset(), Offset(1));
}

TEST_F(ProducerStateTest, StartOffsetEvictsProducersWithoutBatchesAfterReload) {
  // testStartOffset: pid2's only batch lies below the reload point's log start.
  const ProducerId pid2(2);
  ExpectAppended(Batch(pid2, 0, 0, 0, 1, 1));
  ExpectAppended(Batch(kPid, 0, 0, 1, 1, 2));
  ExpectAppended(Batch(kPid, 0, 1, 2, 1, 3));
  ExpectAppended(Batch(kPid, 0, 2, 3, 1, 4));
  ASSERT_TRUE(manager_->TakeSnapshot().ok());
  auto recovered = Reopen();
  ASSERT_TRUE(recovered->TruncateAndReload(Offset(0), Offset(1), 0).ok());
  EXPECT_EQ(Append(*recovered, Batch(pid2, 0, 1, 4, 1, 5)).status(), Errc::kUnknownProducerId);
}

TEST_F(ProducerStateTest, DeleteSnapshotsBefore) {
  ExpectAppended(Batch(kPid, 0, 0, 0));
  ExpectAppended(Batch(kPid, 0, 1, 1));
  ASSERT_TRUE(manager_->TakeSnapshot().ok());
  ExpectAppended(Batch(kPid, 0, 2, 2));
  ASSERT_TRUE(manager_->TakeSnapshot().ok());
  EXPECT_EQ(SnapshotOffsets(), (std::set<int64_t>{2, 3}));
  ASSERT_TRUE(manager_->DeleteSnapshotsBefore(Offset(3)).ok());
  EXPECT_EQ(SnapshotOffsets(), (std::set<int64_t>{3}));
  ASSERT_TRUE(manager_->DeleteSnapshotsBefore(Offset(4)).ok());
  EXPECT_TRUE(SnapshotOffsets().empty());
}

TEST_F(ProducerStateTest, ResetForgetsEverything) {
  ExpectAppended(Batch(kPid, 0, 0, 0));
  ExpectAppended(Batch(kPid, 0, 1, 1));
  ASSERT_TRUE(manager_->TakeSnapshot().ok());
  ASSERT_TRUE(manager_->Reset().ok());
  EXPECT_TRUE(SnapshotOffsets().empty());
  EXPECT_TRUE(manager_->producers().empty());
  ExpectAppended(Batch(kPid, 0, 0, 0));
  ASSERT_TRUE(manager_->TakeSnapshot().ok());
  EXPECT_EQ(SnapshotOffsets(), (std::set<int64_t>{1}));
}

// testLoadFromEmptySnapshotFile / Truncated / Corrupt: a damaged latest snapshot is deleted and
// the previous one used.
class DamagedSnapshotTest : public ProducerStateTest,
                            public ::testing::WithParamInterface<std::string> {};

TEST_P(DamagedSnapshotTest, FallsBackToThePreviousSnapshot) {
  ExpectAppended(Batch(kPid, 0, 0, 0));
  ASSERT_TRUE(manager_->TakeSnapshot().ok());
  ExpectAppended(Batch(kPid, 0, 1, 1));
  ASSERT_TRUE(manager_->TakeSnapshot().ok());
  const std::string path = manager_->SnapshotPath(Offset(2));
  auto bytes = ReadWholeFile(env_, path);
  ASSERT_TRUE(bytes.ok());
  Bytes damaged = *bytes;
  if (GetParam() == "empty") damaged.clear();
  if (GetParam() == "truncated") damaged.resize(damaged.size() / 2);
  if (GetParam() == "garbage") damaged[damaged.size() / 2] ^= 37;
  {
    auto file = env_.OpenFile(path, OpenMode::kTruncate);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(damaged).ok());
  }
  auto reloaded = Reopen();
  ASSERT_TRUE(reloaded->TruncateAndReload(Offset(0), Offset(20), 0).ok());
  EXPECT_FALSE(env_.FileExists(path));
  ASSERT_NE(reloaded->LastEntry(kPid), nullptr);
  EXPECT_EQ(reloaded->LastEntry(kPid)->last_offset(), Offset(0));
  EXPECT_EQ(reloaded->map_end_offset(), Offset(1));
}

INSTANTIATE_TEST_SUITE_P(Damage, DamagedSnapshotTest,
                         ::testing::Values("empty", "truncated", "garbage"));

TEST(ProducerSnapshotFormatTest, LayoutIsKafkaVersionOne) {
  std::map<ProducerId, ProducerStateEntry> producers;
  ProducerStateEntry& e = producers[ProducerId(0x0102030405060708)];
  e.producer_id = ProducerId(0x0102030405060708);
  e.epoch = ProducerEpoch(3);
  e.AddBatch(ProducerEpoch(3),
             BatchMetadata{Sequence(10), Sequence(14), Offset(200), Offset(204), 1234});
  const Bytes bytes = ProducerStateManager::EncodeSnapshot(producers);
  const Bytes body{0,    0,    0,    1,                              // one entry
                   1,    2,    3,    4,    5,    6,    7,    8,      // producer_id
                   0,    3,                                          // epoch
                   0,    0,    0,    14,                             // last_sequence
                   0,    0,    0,    0,    0,    0,    0,    204,    // last_offset
                   0,    0,    0,    4,                              // offset_delta
                   0,    0,    0,    0,    0,    0,    0x04, 0xd2,   // timestamp 1234
                   0xff, 0xff, 0xff, 0xff,                           // coordinator_epoch -1
                   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};  // current_txn_first_offset -1
  ASSERT_EQ(bytes.size(), 6 + body.size());
  EXPECT_EQ(bytes[0], 0);
  EXPECT_EQ(bytes[1], 1);  // version 1
  EXPECT_EQ(Bytes(bytes.begin() + 6, bytes.end()), body);
  auto decoded = ProducerStateManager::DecodeSnapshot(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ASSERT_EQ(decoded->size(), 1u);
  EXPECT_EQ((*decoded)[0].epoch, ProducerEpoch(3));
  ASSERT_EQ((*decoded)[0].batches.size(), 1u);
  EXPECT_EQ((*decoded)[0].batches[0], e.batches.back());
}

TEST(ProducerSnapshotFormatTest, WrappedBatchKeepsItsFirstSequence) {
  std::map<ProducerId, ProducerStateEntry> producers;
  ProducerStateEntry& e = producers[ProducerId(1)];
  e.producer_id = ProducerId(1);
  e.AddBatch(ProducerEpoch(0),
             BatchMetadata{Sequence(kIntMax - 1), Sequence(1), Offset(10), Offset(13), 0});
  auto decoded =
      ProducerStateManager::DecodeSnapshot(ProducerStateManager::EncodeSnapshot(producers));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ((*decoded)[0].batches[0].first_sequence, Sequence(kIntMax - 1));
  EXPECT_EQ((*decoded)[0].batches[0].first_offset, Offset(10));
}

TEST(ProducerSnapshotFormatTest, EveryFlippedBitAndTruncationIsCorruption) {
  std::map<ProducerId, ProducerStateEntry> producers;
  for (int64_t id = 1; id <= 3; ++id) {
    ProducerStateEntry& e = producers[ProducerId(id)];
    e.producer_id = ProducerId(id);
    e.AddBatch(ProducerEpoch(0),
               BatchMetadata{Sequence(0), Sequence(0), Offset(id), Offset(id), 0});
  }
  const Bytes good = ProducerStateManager::EncodeSnapshot(producers);
  ASSERT_TRUE(ProducerStateManager::DecodeSnapshot(good).ok());
  for (size_t i = 0; i < good.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      Bytes bad = good;
      bad[i] ^= static_cast<uint8_t>(1 << bit);
      EXPECT_EQ(ProducerStateManager::DecodeSnapshot(bad).status(), Errc::kCorruption) << i;
    }
  }
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_EQ(ProducerStateManager::DecodeSnapshot(ByteView(good).first(n)).status(),
              Errc::kCorruption);
  }
}

// An idempotent producer with up to five batches in flight over a lossy link (requests and
// responses dropped at random, retries in any order): the log must end up holding every
// sequence exactly once, in order, and every answer must carry the offsets the batch was first
// appended at. Acknowledgements are taken in order, so the unacknowledged batches are always the
// last five at most, as Kafka's producer keeps them (max.in.flight.requests.per.connection <= 5).
TEST_F(ProducerStateTest, LossyRetriesNeverDuplicateOrReorder) {
  StreamRandomSource random(11);
  struct InFlight {
    int32_t first_sequence;
    int32_t count;
    std::optional<Offset> answered;  // first offset from a response that got through
  };
  int duplicates = 0;
  int refusals = 0;
  for (int run = 0; run < 20; ++run) {
    ProducerStateManager state(env_, dir_, kExpirationMs);
    const ProducerId pid(100 + run);
    std::deque<InFlight> window;
    std::map<int32_t, Offset> appended_at;  // first sequence -> first offset
    std::vector<int32_t> log_sequences;
    int32_t next_sequence = 0;
    Offset log_end(0);
    for (int step = 0; step < 400 || !window.empty(); ++step) {
      const bool draining = step >= 400;
      if (!draining && window.size() < ProducerStateEntry::kBatchesToRetain &&
          random.NextInt(3) == 0) {
        const int32_t count = 1 + random.NextInt(3);
        window.push_back(InFlight{next_sequence, count, std::nullopt});
        next_sequence += count;
        continue;
      }
      if (window.empty()) continue;
      InFlight& batch =
          window[static_cast<size_t>(random.NextInt(static_cast<int32_t>(window.size())))];
      if (!draining && random.NextInt(4) == 0) continue;  // request lost
      const BatchHeader header = Batch(pid, 0, batch.first_sequence, log_end.value(), batch.count);
      const Result<AppendCheck> check = state.ValidateAppend(header);
      Offset first{-1};
      if (!check.ok()) {
        // Only a batch that overtook an earlier, not yet appended one may be refused; before
        // the producer's first batch is in, the broker does not know it at all.
        ASSERT_EQ(check.status(),
                  appended_at.empty() ? Errc::kUnknownProducerId : Errc::kOutOfOrderSequenceNumber);
        ASSERT_EQ(appended_at.count(batch.first_sequence), 0u);
        ++refusals;
        continue;
      }
      if (check->duplicate) {
        first = check->duplicate->first_offset;
        ASSERT_EQ(appended_at.at(batch.first_sequence), first);
        ++duplicates;
      } else {
        ASSERT_EQ(appended_at.count(batch.first_sequence), 0u) << "appended twice";
        state.Update(header);
        appended_at[batch.first_sequence] = log_end;
        for (int32_t i = 0; i < batch.count; ++i) log_sequences.push_back(batch.first_sequence + i);
        first = log_end;
        log_end += batch.count;
      }
      if (!draining && random.NextInt(4) == 0) continue;  // response lost
      batch.answered = first;
      while (!window.empty() && window.front().answered) window.pop_front();
    }
    ASSERT_EQ(static_cast<int32_t>(log_sequences.size()), next_sequence);
    for (int32_t i = 0; i < next_sequence; ++i) ASSERT_EQ(log_sequences[i], i);
  }
  // Both paths were taken many times over.
  EXPECT_GT(duplicates, 100);
  EXPECT_GT(refusals, 100);
}

// --- with a real Log ---

// An idempotent producer's batch of `count` records.
Bytes ProducerBatchBytes(int16_t epoch, int32_t first_sequence, int count) {
  BatchSpec spec;
  spec.producer_id = kPid;
  spec.producer_epoch = ProducerEpoch(epoch);
  spec.base_sequence = Sequence(first_sequence);
  std::vector<RecordInput> records(static_cast<size_t>(count));
  for (RecordInput& r : records) {
    r.timestamp_ms = 5000;
    r.value = ToBytes("v");
  }
  return EncodeBatch(spec, records);
}

class ProducerStateLogTest : public ProducerStateTest {
 protected:
  std::unique_ptr<Log> OpenLog(const std::string& name) {
    auto log = Log::Open(env_, clock_, JoinPath(tmp_.path(), name), LogConfig{});
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    return log.ok() ? std::move(log).value() : nullptr;
  }
  // The leader's produce path: validate, append, record; returns the offsets the client gets.
  static Result<std::pair<Offset, Offset>> Produce(Log& log, ProducerStateManager& state,
                                                   Bytes batch) {
    KSIM_ASSIGN_OR_RETURN(const BatchHeader header, ParseBatchHeader(batch));
    KSIM_ASSIGN_OR_RETURN(const AppendCheck check, state.ValidateAppend(header));
    if (check.duplicate) {
      return std::make_pair(check.duplicate->first_offset, check.duplicate->last_offset);
    }
    KSIM_ASSIGN_OR_RETURN(const LogAppendInfo info, log.AppendAsLeader(batch, LeaderEpoch(0)));
    KSIM_ASSIGN_OR_RETURN(const BatchHeader stamped, ParseBatchHeader(batch));
    state.Update(stamped);
    return std::make_pair(info.first_offset, info.last_offset);
  }

  ManualClock clock_{0};
};

TEST_F(ProducerStateLogTest, TruncationThenRebuildMatchesTheLog) {
  auto log = OpenLog("t-1");
  ASSERT_NE(log, nullptr);
  ProducerStateManager state(env_, JoinPath(tmp_.path(), "t-1"), kExpirationMs);
  for (int i = 0; i < 4; ++i) {
    auto offsets = Produce(*log, state, ProducerBatchBytes(0, 3 * i, 3));
    ASSERT_TRUE(offsets.ok()) << offsets.status().ToString();
    EXPECT_EQ(offsets->first, Offset(3 * i));
  }
  // A follower's truncation drops the last batch (offsets 9..11, sequences 9..11).
  ASSERT_TRUE(log->TruncateTo(Offset(9)).ok());
  ASSERT_TRUE(state.RebuildFromLog(*log, 0).ok());
  EXPECT_EQ(state.map_end_offset(), Offset(9));
  EXPECT_EQ(state.LastEntry(kPid)->last_sequence(), Sequence(8));
  // The producer's retry of the lost batch is now new data again, appended at 9.
  auto retry = Produce(*log, state, ProducerBatchBytes(0, 9, 3));
  ASSERT_TRUE(retry.ok()) << retry.status().ToString();
  EXPECT_EQ(retry->first, Offset(9));
  EXPECT_EQ(log->log_end_offset(), Offset(12));
  // A retry of a batch still in the log is answered with its offsets and not appended.
  auto dup = Produce(*log, state, ProducerBatchBytes(0, 3, 3));
  ASSERT_TRUE(dup.ok());
  EXPECT_EQ(dup->first, Offset(3));
  EXPECT_EQ(dup->second, Offset(5));
  EXPECT_EQ(log->log_end_offset(), Offset(12));
}

TEST_F(ProducerStateLogTest, FollowerThatBecomesLeaderStillDeduplicates) {
  auto leader = OpenLog("t-2");
  auto follower = OpenLog("t-3");
  ASSERT_NE(leader, nullptr);
  ASSERT_NE(follower, nullptr);
  ProducerStateManager leader_state(env_, JoinPath(tmp_.path(), "t-2"), kExpirationMs);
  ProducerStateManager follower_state(env_, JoinPath(tmp_.path(), "t-3"), kExpirationMs);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(Produce(*leader, leader_state, ProducerBatchBytes(0, 2 * i, 2)).ok());
  }
  // Replicate: the follower appends the leader's bytes and updates without validation.
  auto read = leader->Read(Offset(0), 1 << 20);
  ASSERT_TRUE(read.ok());
  ASSERT_TRUE(follower->AppendAsFollower(read->records).ok());
  BatchIterator it(read->records);
  while (auto item = it.Next()) follower_state.Update(item->header);

  // The leader dies before answering the last batch; the producer retries it at the follower.
  auto dup = Produce(*follower, follower_state, ProducerBatchBytes(0, 4, 2));
  ASSERT_TRUE(dup.ok());
  EXPECT_EQ(dup->first, Offset(4));
  EXPECT_EQ(follower->log_end_offset(), Offset(6));

  // The same after a restart: a fresh manager rebuilt from the log alone.
  ProducerStateManager rebuilt(env_, JoinPath(tmp_.path(), "t-3"), kExpirationMs);
  ASSERT_TRUE(rebuilt.RebuildFromLog(*follower, 0).ok());
  EXPECT_EQ(rebuilt.LastEntry(kPid)->batches.size(), 3u);
  auto again = Produce(*follower, rebuilt, ProducerBatchBytes(0, 2, 2));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->first, Offset(2));
  EXPECT_EQ(follower->log_end_offset(), Offset(6));
}

TEST_F(ProducerStateLogTest, RebuildStartsFromTheLatestSnapshotAndReplaysTheRest) {
  auto log = OpenLog("t-4");
  ASSERT_NE(log, nullptr);
  ProducerStateManager state(env_, JoinPath(tmp_.path(), "t-4"), kExpirationMs);
  ASSERT_TRUE(Produce(*log, state, ProducerBatchBytes(0, 0, 2)).ok());
  ASSERT_TRUE(Produce(*log, state, ProducerBatchBytes(0, 2, 2)).ok());
  // What the log owner does at a roll.
  ASSERT_TRUE(log->Roll().ok());
  state.UpdateMapEndOffset(log->log_end_offset());
  ASSERT_TRUE(state.TakeSnapshot().ok());
  ASSERT_TRUE(Produce(*log, state, ProducerBatchBytes(0, 4, 2)).ok());

  ProducerStateManager rebuilt(env_, JoinPath(tmp_.path(), "t-4"), kExpirationMs);
  ASSERT_TRUE(rebuilt.RebuildFromLog(*log, 0).ok());
  EXPECT_EQ(rebuilt.map_end_offset(), Offset(6));
  // The snapshot keeps only each producer's last batch (as Kafka's): batches 2-3 and 4-5.
  ASSERT_EQ(rebuilt.LastEntry(kPid)->batches.size(), 2u);
  EXPECT_EQ(rebuilt.LastEntry(kPid)->first_sequence(), Sequence(2));
  EXPECT_EQ(rebuilt.LastEntry(kPid)->last_sequence(), Sequence(5));
  // Truncating below the snapshot drops it and replays from the log start.
  ASSERT_TRUE(log->TruncateTo(Offset(2)).ok());
  ASSERT_TRUE(rebuilt.RebuildFromLog(*log, 0).ok());
  auto offsets = rebuilt.SnapshotOffsets();
  ASSERT_TRUE(offsets.ok());
  EXPECT_TRUE(offsets->empty());
  EXPECT_EQ(rebuilt.LastEntry(kPid)->last_sequence(), Sequence(1));
  EXPECT_EQ(rebuilt.map_end_offset(), Offset(2));
}

}  // namespace
}  // namespace ksim
