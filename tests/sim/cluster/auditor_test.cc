// AuditCluster (sim/cluster/auditor.h) on a live simulated cluster: it reads the leader's log from
// log start to HW through core's Log, with keys, values, producer ids and sequences; it reports a
// partition without a live leader, a topic that does not exist, a replica whose log cannot be
// read and a replica that holds other records than the leader below both HWs; and reading
// changes nothing in the run. ZooKeeperPartitions follows the topic's znode.
#include "sim/cluster/auditor.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/base/json_text.h"
#include "core/base/trace_names.h"
#include "core/cluster/partition.h"
#include "core/record/record_batch.h"
#include "core/storage/log.h"
#include "tests/support/sim/client_test_util.h"

namespace ksim::sim::testing {
namespace {

const TopicPartition kT0{"t", PartitionId(0)};

zk::ReplicaAssignment OnBrokers123() {
  return {{PartitionId(0), {BrokerId(1), BrokerId(2), BrokerId(3)}}};
}

// Sends `count` records (key "k", values p1-0, p1-1, ...) with acks=all and waits for them all.
ProducerClient& ProduceAll(ClientSim& run, int64_t count, bool idempotence = false) {
  ProducerClientOptions options;
  options.id = "p1";
  options.topic = "t";
  options.messages = count;
  options.key = "k";
  options.start_ms = run.world().Now() / kUsPerMs;
  options.config = {{"acks", "all"}, {"enable.idempotence", idempotence ? "true" : "false"}};
  options.kafka_version = KafkaRelease::k2_0;  // a producer that has enable.idempotence
  ProducerClient& p1 = run.AddProducer(options);
  EXPECT_TRUE(run.RunUntil([&] { return p1.done(); }, 60 * kSecondUs));
  // Let the followers fetch up to the HW too.
  run.cluster().RunFor(2 * kSecondUs);
  return p1;
}

TEST(AuditTest, ReadsTheLeadersCommittedRecordsWithKeysAndValues) {
  ClientSim run("audit-read", 1);
  ASSERT_TRUE(run.Start());
  ASSERT_TRUE(run.CreateTopic("t", 1, 3, OnBrokers123()));
  ProduceAll(run, 50);

  const FinalAudit audit = AuditCluster(run.cluster(), {"t"});
  EXPECT_TRUE(audit.errors.empty());
  ASSERT_EQ(audit.partitions.size(), 1u);
  const PartitionAudit& t0 = audit.partitions[0];
  EXPECT_EQ(t0.tp, kT0);
  EXPECT_EQ(t0.leader, run.cluster().LeaderOf(kT0));
  EXPECT_EQ(t0.high_watermark, Offset(50));
  EXPECT_EQ(t0.log_end_offset, Offset(50));
  EXPECT_EQ(t0.log_start_offset, Offset(0));
  EXPECT_EQ(t0.isr.size(), 3u);
  ASSERT_EQ(t0.records.size(), 50u);
  for (size_t i = 0; i < 50; ++i) {
    EXPECT_EQ(t0.records[i].offset, Offset(static_cast<int64_t>(i)));
    EXPECT_EQ(t0.records[i].value, "p1-" + std::to_string(i));
    EXPECT_EQ(t0.records[i].key, std::optional<std::string>("k"));
    EXPECT_EQ(t0.records[i].producer_id, -1);  // no idempotence
  }
  EXPECT_TRUE(t0.divergences.empty());
  EXPECT_EQ(audit.Find(kT0), &audit.partitions[0]);
  EXPECT_EQ(audit.Find(TopicPartition{"t", PartitionId(1)}), nullptr);
  EXPECT_EQ(audit.t_us, run.world().Now());
}

TEST(AuditTest, IdempotentRecordsCarryTheirProducerIdAndSequence) {
  // Brokers of 2.0, as the producer: a 0.10.0 log's message sets refuse idempotent batches.
  ClusterOptions options = ClientClusterOptions();
  options.kafka_version = KafkaRelease::k2_0;
  ClientSim run("audit-idempotent", 2, options);
  ASSERT_TRUE(run.Start());
  ASSERT_TRUE(run.CreateTopic("t", 1, 3, OnBrokers123()));
  ProduceAll(run, 20, /*idempotence=*/true);
  const FinalAudit audit = AuditCluster(run.cluster(), {"t"});
  const PartitionAudit* t0 = audit.Find(kT0);
  ASSERT_NE(t0, nullptr);
  ASSERT_EQ(t0->records.size(), 20u);
  for (size_t i = 0; i < 20; ++i) {
    EXPECT_GE(t0->records[i].producer_id, 0);
    EXPECT_EQ(t0->records[i].producer_id, t0->records[0].producer_id);
    EXPECT_EQ(t0->records[i].sequence, static_cast<int32_t>(i));
  }
}

TEST(AuditTest, NoLiveLeaderAndUnknownTopicAreReported) {
  ClientSim run("audit-no-leader", 3);
  ASSERT_TRUE(run.Start());
  ASSERT_TRUE(run.CreateTopic("t", 1, 1, {{PartitionId(0), {BrokerId(2)}}}));
  ProduceAll(run, 5);
  ASSERT_TRUE(run.cluster().CrashBroker(BrokerId(2)).ok());
  run.cluster().RunFor(kSecondUs);

  const FinalAudit audit = AuditCluster(run.cluster(), {"t", "missing"});
  ASSERT_EQ(audit.partitions.size(), 1u);  // "missing" has none
  EXPECT_EQ(audit.partitions[0].leader, BrokerId(-1));
  EXPECT_TRUE(audit.partitions[0].records.empty());
  ASSERT_EQ(audit.errors.size(), 2u);
  EXPECT_NE(audit.errors[0].find("missing"), std::string::npos) << audit.errors[0];
  EXPECT_NE(audit.errors[1].find("t-0"), std::string::npos) << audit.errors[1];
}

// ZooKeeperPartitions (the drain's cached PartitionsInZooKeeper) decodes the topic's znode again
// once it changed: none before the topic exists, its partitions once it does.
TEST(AuditTest, ZooKeeperPartitionsFollowTheTopicsZnode) {
  ClientSim run("audit-zk-partitions", 3);
  ASSERT_TRUE(run.Start());
  ZooKeeperPartitions partitions;
  EXPECT_TRUE(partitions.Of(run.cluster(), "t").empty());
  ASSERT_TRUE(run.CreateTopic("t", 2, 1,
                              {{PartitionId(0), {BrokerId(1)}}, {PartitionId(1), {BrokerId(2)}}}));
  EXPECT_EQ(partitions.Of(run.cluster(), "t"), (std::vector{PartitionId(0), PartitionId(1)}));
  EXPECT_EQ(partitions.Of(run.cluster(), "t"), PartitionsInZooKeeper(run.cluster(), "t"));
}

// A follower whose offsets 8 and 9 hold other values than the leader's, below both HWs.
TEST(AuditTest, ReplicaHoldingOtherRecordsBelowTheHighWatermarkIsADivergence) {
  ClientSim run("audit-divergence", 4);
  ASSERT_TRUE(run.Start());
  ASSERT_TRUE(run.CreateTopic("t", 1, 3, OnBrokers123()));
  ProduceAll(run, 10);
  const BrokerId leader = run.cluster().LeaderOf(kT0);
  const BrokerId follower = leader == BrokerId(3) ? BrokerId(2) : BrokerId(3);
  Partition* replica = run.cluster().broker(follower)->GetPartition(kT0);
  ASSERT_NE(replica, nullptr);
  ASSERT_EQ(replica->high_watermark(), Offset(10));
  // Rewrite the follower's offsets 8 and 9. A truncation drops whole batches but leaves the log
  // end at its target (Kafka's Log.truncateTo), so truncating to 8 inside a batch would leave
  // nothing below 8 (tests/integration/storage/log_truncate_append_test.cc): truncate to the base
  // of the batch holding 8 instead and write it back, the records before 8 as they were.
  Offset base{-1};
  {
    VirtualDisk::InspectionScope inspect(*run.world().node(node::Broker(follower)).disk());
    Result<FetchDataInfo> read = replica->log().Read(Offset(8), 1, std::nullopt, true);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    BatchIterator batches(read->records);
    std::optional<BatchIterator::Item> holding_8 = batches.Next();
    ASSERT_TRUE(holding_8.has_value());
    ASSERT_LE(holding_8->header.base_offset, Offset(8));
    ASSERT_GE(holding_8->header.last_offset(), Offset(8));
    base = holding_8->header.base_offset;
  }
  ASSERT_TRUE(replica->log().TruncateTo(base).ok());
  ASSERT_EQ(replica->log_end_offset(), base);
  std::vector<RecordInput> records;
  for (int64_t offset = base.value(); offset < 10; ++offset) {
    RecordInput record;
    record.key = ToBytes("k");
    record.value = ToBytes((offset < 8 ? "p1-" : "other-") + std::to_string(offset));
    records.push_back(std::move(record));
  }
  BatchSpec spec;
  spec.base_offset = base;
  Bytes batch = EncodeBatch(spec, records);
  ASSERT_TRUE(replica->log().AppendAsFollower(batch).ok());
  ASSERT_EQ(replica->log_end_offset(), Offset(10));
  // The truncation cut the follower's HW to `base`; its next fetch answer raises it to 10 again.
  run.cluster().RunFor(kSecondUs);
  ASSERT_EQ(replica->high_watermark(), Offset(10));

  const FinalAudit audit = AuditCluster(run.cluster(), {"t"});
  EXPECT_TRUE(audit.errors.empty());
  const PartitionAudit* t0 = audit.Find(kT0);
  ASSERT_NE(t0, nullptr);
  ASSERT_EQ(t0->divergences.size(), 2u);
  EXPECT_EQ(t0->divergences[0].broker, follower);
  EXPECT_EQ(t0->divergences[0].offset, Offset(8));
  EXPECT_NE(t0->divergences[0].detail.find("p1-8"), std::string::npos);
  EXPECT_NE(t0->divergences[0].detail.find("other-8"), std::string::npos);
  EXPECT_EQ(t0->divergences[1].offset, Offset(9));
  EXPECT_NE(t0->divergences[1].detail.find("p1-9"), std::string::npos);
  EXPECT_NE(t0->divergences[1].detail.find("other-9"), std::string::npos);
}

// Every live replica's whole log is held: the leader's records below the HW once, as the audit's
// records, and those above the HW in its holding; ForEachHeld reads each holding in offset order.
TEST(AuditTest, EachHoldingReadsAsTheReplicasWholeLog) {
  ClientSim run("audit-holdings", 7);
  ASSERT_TRUE(run.Start());
  ASSERT_TRUE(run.CreateTopic("t", 1, 3, OnBrokers123()));
  ProduceAll(run, 10);
  const BrokerId leader_id = run.cluster().LeaderOf(kT0);
  Partition* leader = run.cluster().broker(leader_id)->GetPartition(kT0);
  ASSERT_NE(leader, nullptr);
  // Two records the followers have not fetched yet (no event runs before the audit): above the HW.
  std::vector<RecordInput> records(2);
  records[0].value = ToBytes("above-0");
  records[1].value = ToBytes("above-1");
  Bytes batch = EncodeBatch(BatchSpec{}, records);
  ASSERT_TRUE(leader->log().AppendAsLeader(batch, leader->leader_epoch()).ok());
  ASSERT_EQ(leader->log_end_offset(), Offset(12));
  ASSERT_EQ(leader->high_watermark(), Offset(10));

  const FinalAudit audit = AuditCluster(run.cluster(), {"t"});
  EXPECT_TRUE(audit.errors.empty());
  const PartitionAudit* t0 = audit.Find(kT0);
  ASSERT_NE(t0, nullptr);
  ASSERT_EQ(t0->records.size(), 10u);
  ASSERT_EQ(t0->held.size(), 3u);
  const ReplicaHolding* leader_holding = nullptr;
  for (const ReplicaHolding& holding : t0->held) {
    std::vector<std::string> values;
    std::vector<int64_t> offsets;
    ForEachHeld(*t0, holding, [&](const AuditedRecord& record) {
      values.push_back(record.value);
      offsets.push_back(record.offset.value());
      return true;
    });
    const size_t expected = holding.broker == leader_id ? 12 : 10;
    ASSERT_EQ(values.size(), expected) << holding.broker;
    for (size_t i = 0; i < expected; ++i) {
      EXPECT_EQ(offsets[i], static_cast<int64_t>(i));
      EXPECT_EQ(values[i], i < 10 ? "p1-" + std::to_string(i) : "above-" + std::to_string(i - 10));
    }
    if (holding.broker == leader_id) {
      leader_holding = &holding;
      EXPECT_TRUE(holding.after_audit_records);  // the records below the HW are held once
      EXPECT_EQ(holding.records.size(), 2u);
    } else {
      EXPECT_FALSE(holding.after_audit_records);
    }
  }
  // A visit that returns false ends the walk.
  ASSERT_NE(leader_holding, nullptr);
  int visited = 0;
  ForEachHeld(*t0, *leader_holding, [&](const AuditedRecord&) { return ++visited < 3; });
  EXPECT_EQ(visited, 3);
}

TEST(AuditTest, UnreadableReplicaIsAnErrorNotSkipped) {
  ClientSim run("audit-corrupt", 5);
  ASSERT_TRUE(run.Start());
  ASSERT_TRUE(run.CreateTopic("t", 1, 3, OnBrokers123()));
  ProduceAll(run, 10);
  const BrokerId leader = run.cluster().LeaderOf(kT0);
  const BrokerId follower = leader == BrokerId(3) ? BrokerId(2) : BrokerId(3);
  VirtualDisk* disk = run.world().node(node::Broker(follower)).disk();
  // Flip bytes inside the first batch's records (past its 61-byte header): its CRC fails.
  ASSERT_TRUE(disk->CorruptRange("/kafka-logs/t-0/00000000000000000000.log", 64, 4).ok());

  const FinalAudit audit = AuditCluster(run.cluster(), {"t"});
  ASSERT_EQ(audit.errors.size(), 1u);
  EXPECT_NE(audit.errors[0].find(node::Broker(follower)), std::string::npos) << audit.errors[0];
  // The leader's records are still there.
  const PartitionAudit* t0 = audit.Find(kT0);
  ASSERT_NE(t0, nullptr);
  EXPECT_EQ(t0->records.size(), 10u);
}

// The same run twice, one audited halfway: the traces are identical.
uint64_t RunWithOptionalAudit(bool audit_midway) {
  ClientSim run("audit-invisible", 6);
  EXPECT_TRUE(run.Start());
  EXPECT_TRUE(run.CreateTopic("t", 1, 3, OnBrokers123()));
  ProducerClientOptions options;
  options.id = "p1";
  options.topic = "t";
  options.messages = 200;
  options.rate_per_s = 100;
  options.start_ms = run.world().Now() / kUsPerMs;
  options.config = {{"acks", "all"}};
  ProducerClient& p1 = run.AddProducer(options);
  run.cluster().RunFor(kSecondUs);
  if (audit_midway) {
    const FinalAudit audit = AuditCluster(run.cluster(), {"t"});
    EXPECT_FALSE(audit.partitions.empty());
  }
  EXPECT_TRUE(run.RunUntil([&] { return p1.done(); }, 60 * kSecondUs));
  EXPECT_TRUE(run.world().Finish(true, TraceFields::object()).ok());
  return run.world().trace().hash();
}

TEST(AuditTest, AuditingChangesNothingInTheRun) {
  EXPECT_EQ(RunWithOptionalAudit(false), RunWithOptionalAudit(true));
}

// The verdict's "audit" as nlohmann writes the object docs/trace-format.md describes: what
// AppendAuditJson, which writes the text without the object, must give byte for byte.
std::string AuditDumpedByNlohmann(const FinalAudit& audit) {
  nlohmann::ordered_json partitions = nlohmann::ordered_json::array();
  for (const PartitionAudit& partition : audit.partitions) {
    nlohmann::ordered_json values = nlohmann::ordered_json::array();
    for (const AuditedRecord& record : partition.records) values.push_back(record.value);
    partitions.push_back(
        nlohmann::ordered_json{{field::kTopic, partition.tp.topic},
                               {field::kPartition, partition.tp.partition.value()},
                               {field::kLeader, partition.leader.value()},
                               {field::kLeaderEpoch, partition.leader_epoch},
                               {field::kLogStartOffset, partition.log_start_offset.value()},
                               {field::kHighWatermark, partition.high_watermark.value()},
                               {field::kLogEndOffset, partition.log_end_offset.value()},
                               {field::kIsr, partition.isr},
                               {field::kValues, std::move(values)}});
  }
  return partitions.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string AuditWritten(const FinalAudit& audit) {
  TextBuffer buffer;
  JsonOut out(buffer);
  AppendAuditJson(out, audit);
  return std::string(out.view());
}

TEST(AuditJsonTest, WritesWhatNlohmannDumpsOfTheAuditObject) {
  FinalAudit audit;
  EXPECT_EQ(AuditWritten(audit), "[]");
  PartitionAudit offline;  // no live leader: no records, an empty ISR
  offline.tp = TopicPartition{"quoted \"topic\"\n", PartitionId(7)};
  audit.partitions.push_back(offline);
  PartitionAudit live;
  live.tp = kT0;
  live.leader = BrokerId(2);
  live.leader_epoch = 3;
  live.log_start_offset = Offset(1);
  live.high_watermark = Offset(4);
  live.log_end_offset = Offset(5);
  live.isr = {2, 1, 3};
  for (const char* value : {"p1-1", "", "caf\xC3\xA9 \xFF", "tab\there"}) {
    live.records.push_back(AuditedRecord{Offset(1), std::nullopt, value});
  }
  audit.partitions.push_back(live);
  EXPECT_EQ(AuditWritten(audit), AuditDumpedByNlohmann(audit));
}

}  // namespace
}  // namespace ksim::sim::testing
