// The idempotent producer on a partition's replicas (KIP-98): each replica is a Partition over a
// real Log on a sim::VirtualDisk, so that a power loss can be played. Ported from Kafka's LogTest
// duplicate-append cases (testDuplicateAppends, testMultipleProducerIdsPerMemoryRecord,
// testOldProducerEpoch, testNonSequentialAppend, sequence wrap-around), plus the broker-side
// rules that only a running replica set shows: a retry answered with the original offsets while
// acks=all still waits for the HW, the state carried by a follower so that it deduplicates once
// promoted, rebuilt after a truncation, trimmed when the log start rises, and rebuilt after a
// crash (from the log) or a clean shutdown (from the snapshot, which keeps only each producer's
// last batch: an older retry is then refused as Kafka refuses it).
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/base/clock.h"
#include "core/cluster/partition.h"
#include "core/record/legacy_record.h"
#include "core/record/record_batch.h"
#include "core/storage/log.h"
#include "sim/world/virtual_disk.h"

namespace ksim::sim {
namespace {

constexpr int64_t kStartMs = 1'600'000'000'000;
constexpr int32_t kIntMax = std::numeric_limits<int32_t>::max();
const BrokerId kB1(1);
const BrokerId kB2(2);
const ProducerId kPid(1000);
const ProducerId kOtherPid(2000);

struct Replica {
  BrokerId id;
  std::string dir;
  std::unique_ptr<Log> log;
  std::unique_ptr<Partition> partition;
  int duplicates = 0;  // duplicate_batch events
  Partition& p() { return *partition; }
};

class PartitionIdempotenceTest : public ::testing::Test {
 protected:
  PartitionIdempotenceTest() : clock_(kStartMs * kUsPerMs), disk_(RandomStream(11)) {}

  LogConfig Config() const {
    LogConfig config;
    config.max_index_size_bytes = 4096;
    config.segment_bytes = segment_bytes_;
    config.message_format_magic = message_format_magic_;
    return config;
  }

  Replica& AddReplica(BrokerId id) {
    auto replica = std::make_unique<Replica>();
    replica->id = id;
    replica->dir = "/broker-" + ToString(id) + "/t-0";
    replicas_.push_back(std::move(replica));
    Replica& r = *replicas_.back();
    Open(r);
    return r;
  }

  // Opens (or reopens, after a crash or a clean close) `r`'s log and Partition from the disk.
  void Open(Replica& r) {
    r.partition.reset();
    auto log = Log::Open(disk_, clock_, r.dir, Config());
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    r.log = std::move(log).value();
    auto epochs = LeaderEpochCache::Open(disk_, r.dir);
    ASSERT_TRUE(epochs.ok()) << epochs.status().ToString();
    auto producers = Partition::LoadProducerState(disk_, *r.log, clock_.NowMs());
    ASSERT_TRUE(producers.ok()) << producers.status().ToString();
    r.partition = std::make_unique<Partition>(
        TopicPartition{"t", PartitionId(0)}, r.id, *r.log, std::move(epochs).value(),
        std::move(producers).value(), clock_, PartitionConfig{}, Offset(0),
        [&r](std::string_view ev, EventFields) {
          if (ev == "duplicate_batch") ++r.duplicates;
        });
  }

  // Power loss on the whole disk: every replica's unsynced bytes are gone, then all reopen.
  void CrashAndReopen() {
    for (auto& r : replicas_) {
      r->partition.reset();
      r->log.reset();
    }
    disk_.Crash();
    for (auto& r : replicas_) Open(*r);
  }

  // Clean shutdown of every replica (the producer snapshot, then the log closed), then reopen.
  void CloseAndReopen() {
    for (auto& r : replicas_) {
      ASSERT_TRUE(r->p().Close().ok());
      r->partition.reset();
      ASSERT_TRUE(r->log->Close().ok());
      r->log.reset();
    }
    disk_.CleanShutdown();
    for (auto& r : replicas_) Open(*r);
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
  static void MakeLeader(Replica& r, int32_t epoch, std::vector<BrokerId> isr) {
    auto made = r.p().MakeLeader(State(r.id, epoch, std::move(isr)));
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    ASSERT_TRUE(*made);
  }
  static void MakeFollower(Replica& r, BrokerId leader, int32_t epoch) {
    r.p().MakeFollower(State(leader, epoch, {leader}));
  }

  // A producer's batch of `count` records starting at `sequence`.
  Bytes Batch(ProducerId pid, int16_t epoch, int32_t sequence, int count = 1) const {
    std::vector<RecordInput> records;
    for (int i = 0; i < count; ++i) {
      RecordInput record;
      record.timestamp_ms = clock_.NowMs();
      const std::string value = ToString(pid) + ":" + std::to_string(int64_t{sequence} + i);
      record.value = Bytes(value.begin(), value.end());
      records.push_back(std::move(record));
    }
    BatchSpec spec;
    spec.producer_id = pid;
    spec.producer_epoch = ProducerEpoch(epoch);
    spec.base_sequence = Sequence(sequence);
    return EncodeBatch(spec, records);
  }

  static Result<LogAppendInfo> Produce(Replica& leader, Bytes batch, int16_t acks = 1) {
    return leader.p().AppendAsLeader(MutableByteView(batch), acks);
  }
  // Appends and expects a fresh append; returns its first offset.
  static int64_t Appended(Replica& leader, Bytes batch, int16_t acks = 1) {
    const Offset leo = leader.p().log_end_offset();
    auto info = Produce(leader, std::move(batch), acks);
    EXPECT_TRUE(info.ok()) << info.status().ToString();
    if (!info.ok()) return -1;
    EXPECT_EQ(info->first_offset, leo);
    EXPECT_GT(info->num_batches, 0);
    return info->first_offset.value();
  }
  static Errc Refused(Replica& leader, Bytes batch) {
    const Offset leo = leader.p().log_end_offset();
    auto info = Produce(leader, std::move(batch));
    EXPECT_EQ(leader.p().log_end_offset(), leo) << "a refused batch must not be written";
    return info.ok() ? Errc::kNone : info.status().code();
  }

  // One fetch round: `follower` copies what `leader` has past its LEO.
  static void Fetch(Replica& leader, Replica& follower) {
    const Offset fetch_offset = follower.p().log_end_offset();
    auto data = leader.p().Read(fetch_offset, 1 << 20, /*from_follower=*/true);
    ASSERT_TRUE(data.ok()) << data.status().ToString();
    leader.p().UpdateFollowerFetch(follower.id, fetch_offset);
    auto appended = follower.p().AppendAsFollower(data->records, leader.p().high_watermark(),
                                                  leader.p().log_start_offset());
    ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  }

  int64_t segment_bytes_ = 1 << 20;
  int8_t message_format_magic_ = kMagicV2;
  ManualClock clock_;
  VirtualDisk disk_;
  std::vector<std::unique_ptr<Replica>> replicas_;
};

// LogTest.testDuplicateAppends with KAFKA-5494's cache: a retry of any of the producer's last five
// batches is answered with that batch's offsets and not written; the sixth oldest is no longer
// known and is out of order.
TEST_F(PartitionIdempotenceTest, DuplicateOfOneOfTheLastFiveIsAnsweredWithItsOriginalOffsets) {
  Replica& leader = AddReplica(kB1);
  MakeLeader(leader, 1, {kB1});
  std::vector<int64_t> first_offsets;
  for (int i = 0; i < 6; ++i) first_offsets.push_back(Appended(leader, Batch(kPid, 0, i * 2, 2)));
  const Offset leo = leader.p().log_end_offset();
  ASSERT_EQ(leo, Offset(12));

  for (int i = 1; i < 6; ++i) {
    auto info = Produce(leader, Batch(kPid, 0, i * 2, 2));
    ASSERT_TRUE(info.ok()) << i << ": " << info.status().ToString();
    EXPECT_EQ(info->first_offset.value(), first_offsets[i]) << i;
    EXPECT_EQ(info->last_offset.value(), first_offsets[i] + 1) << i;
    EXPECT_EQ(info->num_batches, 0);
    EXPECT_EQ(info->num_records, 2);
    EXPECT_EQ(leader.p().log_end_offset(), leo) << "a duplicate must not be appended";
  }
  EXPECT_EQ(leader.duplicates, 5);
  // The first batch fell out of the five-batch cache: Kafka answers OUT_OF_ORDER_SEQUENCE_NUMBER.
  EXPECT_EQ(Refused(leader, Batch(kPid, 0, 0, 2)), Errc::kOutOfOrderSequenceNumber);
  // A retry with a different sequence range than the original is not a duplicate either.
  EXPECT_EQ(Refused(leader, Batch(kPid, 0, 10, 1)), Errc::kOutOfOrderSequenceNumber);
  // The producer carries on where it was.
  EXPECT_EQ(Appended(leader, Batch(kPid, 0, 12, 1)), 12);
}

// LogTest.testMultipleProducerIdsPerMemoryRecord: producers are tracked independently.
TEST_F(PartitionIdempotenceTest, ProducersAreTrackedIndependently) {
  Replica& leader = AddReplica(kB1);
  MakeLeader(leader, 1, {kB1});
  EXPECT_EQ(Appended(leader, Batch(kPid, 0, 0)), 0);
  EXPECT_EQ(Appended(leader, Batch(kOtherPid, 0, 0)), 1);
  EXPECT_EQ(Appended(leader, Batch(kPid, 0, 1)), 2);
  // Each one's retry finds its own batch.
  auto retry = Produce(leader, Batch(kOtherPid, 0, 0));
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(retry->first_offset, Offset(1));
  EXPECT_EQ(Refused(leader, Batch(kOtherPid, 0, 2)), Errc::kOutOfOrderSequenceNumber);
  EXPECT_EQ(Appended(leader, Batch(kOtherPid, 0, 1)), 3);
  // Batches without a producer id are never checked.
  std::vector<RecordInput> plain(1);
  plain[0].value = Bytes{'x'};
  EXPECT_EQ(Appended(leader, EncodeBatch(BatchSpec{}, plain)), 4);
  EXPECT_EQ(Appended(leader, EncodeBatch(BatchSpec{}, plain)), 5);
}

// LogTest.testOldProducerEpoch: a zombie with an older epoch is fenced; a new epoch starts over
// at sequence 0 and must.
TEST_F(PartitionIdempotenceTest, OlderEpochIsFencedAndANewEpochStartsAtZero) {
  Replica& leader = AddReplica(kB1);
  MakeLeader(leader, 1, {kB1});
  Appended(leader, Batch(kPid, 1, 0));
  Appended(leader, Batch(kPid, 1, 1));
  EXPECT_EQ(Refused(leader, Batch(kPid, 0, 2)), Errc::kInvalidProducerEpoch);
  EXPECT_EQ(Refused(leader, Batch(kPid, 2, 5)), Errc::kOutOfOrderSequenceNumber);
  Appended(leader, Batch(kPid, 2, 0));
  // The old epoch's batches are forgotten: their retry is fenced, not deduplicated.
  EXPECT_EQ(Refused(leader, Batch(kPid, 1, 1)), Errc::kInvalidProducerEpoch);
}

// LogTest.testNonSequentialAppend: a gap is OUT_OF_ORDER_SEQUENCE_NUMBER; a producer the broker
// has never seen must start at 0 or is UNKNOWN_PRODUCER_ID.
TEST_F(PartitionIdempotenceTest, GapIsOutOfOrderAndAnUnknownProducerMustStartAtZero) {
  Replica& leader = AddReplica(kB1);
  MakeLeader(leader, 1, {kB1});
  EXPECT_EQ(Refused(leader, Batch(kPid, 0, 3)), Errc::kUnknownProducerId);
  Appended(leader, Batch(kPid, 0, 0));
  EXPECT_EQ(Refused(leader, Batch(kPid, 0, 2)), Errc::kOutOfOrderSequenceNumber);
  Appended(leader, Batch(kPid, 0, 1));
  EXPECT_EQ(leader.p().producer_state().LastEntry(kPid)->last_sequence(), Sequence(1));
}

// Log.append validates the records (LogValidator) before the producer state: in a log of the
// 0.10 format (log.message.format.version=0.10.2 at 0.11 and later) every idempotent batch is
// refused UNSUPPORTED_FOR_MESSAGE_FORMAT, whatever its sequence; a sequence gap from a producer
// the log does not know is never answered UNKNOWN_PRODUCER_ID (explore safe seed 710080 at 2.0
// under the high-watermark policy: the producer retried that answer for ever).
TEST_F(PartitionIdempotenceTest, OlderFormatRefusesTheFormatBeforeTheSequence) {
  message_format_magic_ = kMagicV1;
  Replica& leader = AddReplica(kB1);
  MakeLeader(leader, 1, {kB1});
  EXPECT_EQ(Refused(leader, Batch(kPid, 0, 3)), Errc::kUnsupportedForMessageFormat);
  EXPECT_EQ(Refused(leader, Batch(kPid, 0, 0)), Errc::kUnsupportedForMessageFormat);
  EXPECT_EQ(Refused(leader, Batch(kPid, 0, 1)), Errc::kUnsupportedForMessageFormat);
  EXPECT_EQ(leader.p().producer_state().LastEntry(kPid), nullptr);
}

// Sequences wrap from INT32_MAX to 0 (ProducerAppendInfo.inSequence). A follower's appends are not
// validated, so the state can be brought next to the wrap through replication.
TEST_F(PartitionIdempotenceTest, SequenceWrapsAfterIntMaxOnAPromotedFollower) {
  Replica& r1 = AddReplica(kB1);
  Replica& r2 = AddReplica(kB2);
  MakeFollower(r2, kB1, 1);
  Bytes near_wrap = Batch(kPid, 0, kIntMax - 1, 2);
  SetBaseOffset(MutableByteView(near_wrap), Offset(0));
  SetPartitionLeaderEpoch(MutableByteView(near_wrap), LeaderEpoch(1));
  ASSERT_TRUE(r2.p().AppendAsFollower(near_wrap, Offset(0), Offset(0)).ok());
  MakeLeader(r2, 2, {kB2});
  EXPECT_EQ(Refused(r2, Batch(kPid, 0, 1)), Errc::kOutOfOrderSequenceNumber);
  auto retry = Produce(r2, Batch(kPid, 0, kIntMax - 1, 2));
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(retry->first_offset, Offset(0));
  EXPECT_EQ(Appended(r2, Batch(kPid, 0, 0, 3)), 2);
  (void)r1;
}

// Kafka's DelayedProduce for a duplicate: acks=all is answered only once the HW passes the
// original batch, exactly as for the first attempt.
TEST_F(PartitionIdempotenceTest, DuplicateWithAcksAllWaitsForTheHighWatermark) {
  Replica& r1 = AddReplica(kB1);
  Replica& r2 = AddReplica(kB2);
  MakeLeader(r1, 1, {kB1, kB2});
  MakeFollower(r2, kB1, 1);
  Fetch(r1, r2);  // r2's LEO is known to the leader
  Appended(r1, Batch(kPid, 0, 0, 3), -1);
  auto retry = Produce(r1, Batch(kPid, 0, 0, 3), -1);
  ASSERT_TRUE(retry.ok());
  const Offset required = retry->last_offset + 1;
  EXPECT_EQ(required, Offset(3));
  EXPECT_FALSE(r1.p().CheckEnoughReplicasReached(required, -1).done);
  Fetch(r1, r2);
  Fetch(r1, r2);
  const AcksProgress progress = r1.p().CheckEnoughReplicasReached(required, -1);
  EXPECT_TRUE(progress.done);
  EXPECT_EQ(progress.error, Errc::kNone);
  EXPECT_EQ(r1.p().log_end_offset(), Offset(3));
}

// Followers update the state with every batch they copy, so the new leader after a failover
// deduplicates a retry of a batch the old leader wrote (the response was lost).
TEST_F(PartitionIdempotenceTest, PromotedFollowerDeduplicatesARetry) {
  Replica& r1 = AddReplica(kB1);
  Replica& r2 = AddReplica(kB2);
  MakeLeader(r1, 1, {kB1, kB2});
  MakeFollower(r2, kB1, 1);
  Appended(r1, Batch(kPid, 0, 0, 2));
  Appended(r1, Batch(kPid, 0, 2, 2));
  Fetch(r1, r2);
  ASSERT_EQ(r2.p().log_end_offset(), Offset(4));
  ASSERT_NE(r2.p().producer_state().LastEntry(kPid), nullptr);

  MakeLeader(r2, 2, {kB2});
  auto retry = Produce(r2, Batch(kPid, 0, 2, 2));
  ASSERT_TRUE(retry.ok()) << retry.status().ToString();
  EXPECT_EQ(retry->first_offset, Offset(2));
  EXPECT_EQ(r2.p().log_end_offset(), Offset(4));
  EXPECT_EQ(r2.duplicates, 1);
  EXPECT_EQ(Appended(r2, Batch(kPid, 0, 4, 1)), 4);
}

// Log.truncateTo reloads the producer state: after a follower's log is cut, the batches cut off
// are no longer known, and the sequence continues from what is left.
TEST_F(PartitionIdempotenceTest, TruncationRebuildsTheStateFromTheLog) {
  Replica& r1 = AddReplica(kB1);
  Replica& r2 = AddReplica(kB2);
  MakeLeader(r1, 1, {kB1, kB2});
  MakeFollower(r2, kB1, 1);
  for (int i = 0; i < 4; ++i) Appended(r1, Batch(kPid, 0, i));
  Fetch(r1, r2);
  ASSERT_EQ(r2.p().producer_state().LastEntry(kPid)->last_sequence(), Sequence(3));

  ASSERT_TRUE(r2.p().TruncateTo(Offset(2), "test").ok());
  const ProducerStateEntry* entry = r2.p().producer_state().LastEntry(kPid);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->last_sequence(), Sequence(1));
  EXPECT_EQ(entry->batches.size(), 2u);
  EXPECT_EQ(r2.p().producer_state().map_end_offset(), Offset(2));

  // Promoted: sequence 2 is the next one, not a duplicate; 1 is one.
  MakeLeader(r2, 2, {kB2});
  auto retry = Produce(r2, Batch(kPid, 0, 1));
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(retry->first_offset, Offset(1));
  EXPECT_EQ(Appended(r2, Batch(kPid, 0, 2)), 2);

  // Cutting everything (the leader's log starts past ours) forgets every producer.
  MakeFollower(r2, kB1, 3);
  ASSERT_TRUE(r2.p().TruncateFullyAndStartAt(Offset(10)).ok());
  EXPECT_TRUE(r2.p().producer_state().producers().empty());
  EXPECT_EQ(r2.p().producer_state().map_end_offset(), Offset(10));
}

// The log start rising past a producer's last batch (retention, DeleteRecords) forgets it: its
// next batch is UNKNOWN_PRODUCER_ID, as Kafka answers a producer whose state was removed.
TEST_F(PartitionIdempotenceTest, RisingLogStartForgetsProducersWithNoBatchLeft) {
  Replica& leader = AddReplica(kB1);
  MakeLeader(leader, 1, {kB1});
  Appended(leader, Batch(kPid, 0, 0, 2));
  Appended(leader, Batch(kOtherPid, 0, 0, 2));
  ASSERT_TRUE(leader.log->MaybeIncrementLogStartOffset(Offset(2)).ok());
  EXPECT_EQ(leader.p().producer_state().LastEntry(kPid), nullptr);
  EXPECT_NE(leader.p().producer_state().LastEntry(kOtherPid), nullptr);
  EXPECT_EQ(Refused(leader, Batch(kPid, 0, 2)), Errc::kUnknownProducerId);
  EXPECT_EQ(Appended(leader, Batch(kOtherPid, 0, 2)), 4);
}

// Each roll snapshots the state beside the segments (Kafka's Log.roll).
TEST_F(PartitionIdempotenceTest, SegmentRollTakesASnapshotAtTheNewBaseOffset) {
  segment_bytes_ = 300;  // a couple of batches per segment
  Replica& leader = AddReplica(kB1);
  MakeLeader(leader, 1, {kB1});
  for (int i = 0; i < 6; ++i) Appended(leader, Batch(kPid, 0, i * 2, 2));
  ASSERT_GT(leader.log->number_of_segments(), 1u);
  auto snapshots = leader.p().producer_state().SnapshotOffsets();
  ASSERT_TRUE(snapshots.ok());
  std::vector<Offset> bases;
  for (const LogSegmentInfo& segment : leader.log->Segments()) {
    if (segment.base_offset > Offset(0)) bases.push_back(segment.base_offset);
  }
  EXPECT_EQ(*snapshots, bases);
}

// A crash: the Partition is rebuilt from the last snapshot plus the log replayed after it; with
// no roll there is no snapshot and all five batches come back from the log, so every retry of
// them is still deduplicated. Batches the crash lost are not known (their retry is appended).
TEST_F(PartitionIdempotenceTest, CrashRecoveryRebuildsFromTheLogAndStillDeduplicates) {
  Replica& leader = AddReplica(kB1);
  MakeLeader(leader, 1, {kB1});
  for (int i = 0; i < 5; ++i) Appended(leader, Batch(kPid, 0, i));
  ASSERT_TRUE(leader.log->Flush().ok());
  Appended(leader, Batch(kPid, 0, 5));  // unflushed: lost in the crash

  CrashAndReopen();
  MakeLeader(leader, 2, {kB1});
  ASSERT_EQ(leader.p().log_end_offset(), Offset(5));
  for (int i = 0; i < 5; ++i) {
    auto retry = Produce(leader, Batch(kPid, 0, i));
    ASSERT_TRUE(retry.ok()) << i << ": " << retry.status().ToString();
    EXPECT_EQ(retry->first_offset, Offset(i));
  }
  EXPECT_EQ(leader.p().log_end_offset(), Offset(5));
  EXPECT_EQ(Appended(leader, Batch(kPid, 0, 5)), 5);
}

// A snapshot keeps only each producer's last batch (Kafka's format): after a clean shutdown the
// last batch is still deduplicated, an older one of the five is refused as out of order — what
// Kafka does after a restart too.
TEST_F(PartitionIdempotenceTest, AfterACleanShutdownOnlyTheLastBatchIsKnown) {
  Replica& leader = AddReplica(kB1);
  MakeLeader(leader, 1, {kB1});
  for (int i = 0; i < 3; ++i) Appended(leader, Batch(kPid, 0, i));

  CloseAndReopen();
  auto snapshots = leader.p().producer_state().SnapshotOffsets();
  ASSERT_TRUE(snapshots.ok());
  EXPECT_EQ(*snapshots, std::vector<Offset>{Offset(3)});
  MakeLeader(leader, 2, {kB1});
  auto retry = Produce(leader, Batch(kPid, 0, 2));
  ASSERT_TRUE(retry.ok()) << retry.status().ToString();
  EXPECT_EQ(retry->first_offset, Offset(2));
  EXPECT_EQ(Refused(leader, Batch(kPid, 0, 1)), Errc::kOutOfOrderSequenceNumber);
  EXPECT_EQ(Appended(leader, Batch(kPid, 0, 3)), 3);
}

// A crash after a roll: the snapshot at the roll gives the batches before it (the last one
// only), the log after it replays the rest.
TEST_F(PartitionIdempotenceTest, CrashAfterARollLoadsTheSnapshotThenReplaysTheActiveSegment) {
  segment_bytes_ = 300;
  Replica& leader = AddReplica(kB1);
  MakeLeader(leader, 1, {kB1});
  int sequence = 0;
  while (leader.log->number_of_segments() < 2) {
    Appended(leader, Batch(kPid, 0, sequence++));
  }
  const Offset roll = leader.log->Segments().back().base_offset;
  Appended(leader, Batch(kPid, 0, sequence++));
  ASSERT_TRUE(leader.log->Flush().ok());

  CrashAndReopen();
  MakeLeader(leader, 2, {kB1});
  const ProducerStateEntry* entry = leader.p().producer_state().LastEntry(kPid);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->last_sequence(), Sequence(sequence - 1));
  // The snapshot's batch plus the ones after the roll.
  EXPECT_EQ(entry->batches.size(), 1u + static_cast<size_t>(leader.p().log_end_offset() - roll));
  auto retry = Produce(leader, Batch(kPid, 0, sequence - 1));
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(retry->first_offset, leader.p().log_end_offset() - 1);
  EXPECT_EQ(Appended(leader, Batch(kPid, 0, sequence)), leader.p().log_end_offset().value());
}

}  // namespace
}  // namespace ksim::sim
