#include "sim/cluster/auditor.h"

#include <algorithm>
#include <set>
#include <span>
#include <utility>

#include "core/base/check.h"
#include "core/base/trace_names.h"
#include "core/cluster/partition.h"
#include "core/record/record_batch.h"
#include "core/storage/log.h"
#include "core/zk/paths.h"

namespace ksim::sim {
namespace {

// Bytes asked for per Log::Read; the loop goes on until the end offset.
constexpr int32_t kReadChunkBytes = 1 << 20;
// A bound on the reads of one replica: far more chunks than a simulated run writes.
constexpr int kMaxReadRounds = 1 << 20;
// Room reserved for a replica's records at most: a range of offsets holds at most one record each
// (fewer where a log was compacted or holds transaction markers), and a log a run writes rarely
// holds more. A vector grown by doubling instead holds up to twice its records (the 1,000-partition
// run's audit: 3,000 replicas of about ten records each, room for sixteen).
constexpr int64_t kReserveRecords = 1 << 20;

std::string ReplicaName(BrokerId broker, const TopicPartition& tp) {
  return node::Broker(broker) + " " + ToString(tp);
}

// The records of `log` in [from, end), in offset order: keys and values as text, each record's
// producer id and sequence from its batch header.
Result<std::vector<AuditedRecord>> ReadRecords(Log& log, Offset from, Offset end) {
  std::vector<AuditedRecord> records;
  if (end > from) {
    records.reserve(static_cast<size_t>(std::min(end.value() - from.value(), kReserveRecords)));
  }
  Offset next = from;
  for (int round = 0; next < end; ++round) {
    KSIM_CHECK(round < kMaxReadRounds);
    KSIM_ASSIGN_OR_RETURN(FetchDataInfo read,
                          log.Read(next, kReadChunkBytes, std::nullopt, /*min_one_message=*/true));
    if (read.records.empty()) break;  // the log end
    BatchIterator batches(read.records);
    const Offset before = next;
    while (std::optional<BatchIterator::Item> batch = batches.Next()) {
      const BatchHeader& header = batch->header;
      // A damaged batch fails the read whole (the records gathered are dropped with it).
      KSIM_RETURN_IF_ERROR(ForEachRecord(*batch, [&](const RecordView& record) {
        if (record.offset < next || record.offset >= end) return;
        AuditedRecord& audited = records.emplace_back();
        audited.offset = record.offset;
        if (record.key) audited.key = std::string(AsChars(*record.key));
        if (record.value) audited.value = std::string(AsChars(*record.value));
        if (header.producer_id != kNoProducerId) {
          audited.producer_id = header.producer_id.value();
          if (header.base_sequence != kNoSequence) {
            audited.sequence = header.base_sequence.value() +
                               static_cast<int32_t>(record.offset - header.base_offset);
          }
        }
        next = record.offset + 1;
      }));
      // A batch whose records all lie below `next` (or a control batch) still moves on.
      if (header.next_offset() > next && header.next_offset() <= end) next = header.next_offset();
    }
    KSIM_RETURN_IF_ERROR(batches.status());
    if (next == before) break;  // nothing readable at `next`: stop rather than spin
  }
  return records;
}

std::string Describe(const AuditedRecord& record) {
  std::string text = "\"" + record.value + "\"";
  if (record.key) text += " (key \"" + *record.key + "\")";
  return text;
}

// The records of `records` (in strictly increasing offset order, as ReadRecords gives them) in
// [from, end).
std::span<const AuditedRecord> InRange(const std::vector<AuditedRecord>& records, Offset from,
                                       Offset end) {
  auto by_offset = [](const AuditedRecord& record, Offset offset) {
    return record.offset < offset;
  };
  auto first = std::lower_bound(records.begin(), records.end(), from, by_offset);
  auto last = std::lower_bound(first, records.end(), end, by_offset);
  return {first, last};
}

// Each offset below both HWs where `replica` differs from the leader's records.
void CompareReplica(const std::vector<AuditedRecord>& leader_records,
                    const std::vector<AuditedRecord>& replica_records, BrokerId broker, Offset from,
                    Offset end, std::vector<ReplicaDivergence>& divergences) {
  const std::span<const AuditedRecord> leader = InRange(leader_records, from, end);
  const std::span<const AuditedRecord> replica = InRange(replica_records, from, end);
  // The leader's offsets in order (each missing or different on the replica), then the
  // replica's that the leader lacks.
  auto other = replica.begin();
  for (const AuditedRecord& record : leader) {
    while (other != replica.end() && other->offset < record.offset) ++other;
    if (other == replica.end() || other->offset != record.offset) {
      divergences.push_back(
          {broker, record.offset, "replica lacks offset " + std::to_string(record.offset.value())});
      continue;
    }
    if (other->value != record.value || other->key != record.key ||
        other->producer_id != record.producer_id || other->sequence != record.sequence) {
      divergences.push_back(
          {broker, record.offset,
           "leader has " + Describe(record) + ", replica has " + Describe(*other)});
    }
  }
  auto held = leader.begin();
  for (const AuditedRecord& record : replica) {
    while (held != leader.end() && held->offset < record.offset) ++held;
    if (held == leader.end() || held->offset != record.offset) {
      divergences.push_back({broker, record.offset,
                             "leader lacks offset " + std::to_string(record.offset.value()) +
                                 ", replica has " + Describe(record)});
    }
  }
}

std::vector<int32_t> IsrIds(const std::vector<BrokerId>& isr) {
  std::vector<int32_t> ids;
  for (BrokerId id : isr) ids.push_back(id.value());
  return ids;
}

// Every live replica's whole log (records above the HW included): what the cluster still holds
// even where the leader cannot serve it (no leader, an offline log, a HW short of the record).
void ReadHoldings(Cluster& cluster, const TopicPartition& tp, PartitionAudit& audit) {
  for (BrokerId id : cluster.broker_ids()) {
    Broker* broker = cluster.broker(id);
    Partition* replica = broker == nullptr ? nullptr : broker->GetPartition(tp);
    if (replica == nullptr) continue;
    VirtualDisk::InspectionScope inspect(*cluster.world().node(node::Broker(id)).disk());
    Result<std::vector<AuditedRecord>> records =
        ReadRecords(replica->log(), replica->log_start_offset(), replica->log_end_offset());
    if (!records.ok()) continue;  // an offline log: its error is the leader's or a replica's
    audit.held.push_back(ReplicaHolding{id, replica->high_watermark(), replica->log_end_offset(),
                                        std::move(records).value()});
  }
}

ReplicaHolding* HoldingOf(PartitionAudit& audit, BrokerId broker) {
  for (ReplicaHolding& held : audit.held) {
    if (held.broker == broker) return &held;
  }
  return nullptr;
}

PartitionAudit AuditPartition(Cluster& cluster, const TopicPartition& tp,
                              std::vector<std::string>& errors) {
  PartitionAudit audit;
  audit.tp = tp;
  ReadHoldings(cluster, tp, audit);
  const BrokerId leader_id = cluster.LeaderOf(tp);
  Broker* leader_broker = leader_id == kNoBroker ? nullptr : cluster.broker(leader_id);
  Partition* leader = leader_broker == nullptr ? nullptr : leader_broker->GetPartition(tp);
  if (leader == nullptr) {
    errors.push_back(ToString(tp) + ": no live leader");
    return audit;
  }
  audit.leader = leader_id;
  audit.leader_epoch = leader->leader_epoch().value();
  audit.log_start_offset = leader->log_start_offset();
  audit.high_watermark = leader->high_watermark();
  audit.log_end_offset = leader->log_end_offset();
  audit.isr = IsrIds(leader->isr());
  // Each replica's records in a range are those of its holding (read above from its log start to
  // its end) in that range; a replica whose whole log did not read is read again in the range
  // alone, to name its error or audit what does read.
  if (ReplicaHolding* held = HoldingOf(audit, leader_id)) {
    const std::span<const AuditedRecord> records =
        InRange(held->records, audit.log_start_offset, audit.high_watermark);
    if (records.data() == held->records.data()) {
      // The holding's first records are the audit's: its vector becomes the audit's, and the
      // holding keeps those above the HW (ForEachHeld reads the two as one).
      const auto hw = held->records.begin() + static_cast<ptrdiff_t>(records.size());
      std::vector<AuditedRecord> above_hw(std::make_move_iterator(hw),
                                          std::make_move_iterator(held->records.end()));
      held->records.erase(hw, held->records.end());
      audit.records = std::move(held->records);
      held->records = std::move(above_hw);
      held->after_audit_records = true;
    } else {
      audit.records.assign(records.begin(), records.end());
    }
  } else {
    VirtualDisk::InspectionScope inspect(*cluster.world().node(node::Broker(leader_id)).disk());
    Result<std::vector<AuditedRecord>> records =
        ReadRecords(leader->log(), audit.log_start_offset, audit.high_watermark);
    if (!records.ok()) {
      errors.push_back(ReplicaName(leader_id, tp) + " (leader): " + records.status().ToString());
      return audit;
    }
    audit.records = std::move(records).value();
  }
  for (BrokerId id : cluster.broker_ids()) {
    if (id == leader_id) continue;
    Broker* broker = cluster.broker(id);
    Partition* replica = broker == nullptr ? nullptr : broker->GetPartition(tp);
    if (replica == nullptr) continue;  // down, or holds no replica
    const Offset from = std::max(audit.log_start_offset, replica->log_start_offset());
    const Offset end = std::min(audit.high_watermark, replica->high_watermark());
    if (from >= end) continue;
    if (const ReplicaHolding* held = HoldingOf(audit, id)) {
      CompareReplica(audit.records, held->records, id, from, end, audit.divergences);
      continue;
    }
    VirtualDisk::InspectionScope inspect(*cluster.world().node(node::Broker(id)).disk());
    Result<std::vector<AuditedRecord>> records = ReadRecords(replica->log(), from, end);
    if (!records.ok()) {
      errors.push_back(ReplicaName(id, tp) + ": " + records.status().ToString());
      continue;
    }
    CompareReplica(audit.records, *records, id, from, end, audit.divergences);
  }
  return audit;
}

}  // namespace

namespace {

std::vector<PartitionId> PartitionsIn(const std::optional<ZnodeData>& topic_znode) {
  std::vector<PartitionId> partitions;
  if (!topic_znode) return partitions;
  Result<zk::ReplicaAssignment> assignment = zk::DecodeReplicaAssignment(topic_znode->data);
  if (!assignment.ok()) return partitions;
  for (const auto& [partition, replicas] : *assignment) partitions.push_back(partition);
  return partitions;
}

}  // namespace

std::vector<PartitionId> PartitionsInZooKeeper(Cluster& cluster, const std::string& topic) {
  return PartitionsIn(cluster.zookeeper().Read(zk::TopicPath(topic)));
}

const std::vector<PartitionId>& ZooKeeperPartitions::Of(Cluster& cluster,
                                                        const std::string& topic) {
  std::optional<ZnodeData> data = cluster.zookeeper().Read(zk::TopicPath(topic));
  std::optional<ZnodeStat> stat;
  if (data) stat = data->stat;
  Topic& known = topics_[topic];
  if (!known.read || known.stat != stat) {
    known.partitions = PartitionsIn(data);
    known.stat = stat;
    known.read = true;
  }
  return known.partitions;
}

FinalAudit AuditCluster(Cluster& cluster, const std::vector<std::string>& topics) {
  FinalAudit audit;
  audit.t_us = cluster.world().Now();
  const std::set<std::string> names(topics.begin(), topics.end());
  for (const std::string& topic : names) {
    const std::vector<PartitionId> partitions = PartitionsInZooKeeper(cluster, topic);
    if (partitions.empty()) {
      audit.errors.push_back("topic " + topic + ": not in ZooKeeper (never created or deleted)");
      continue;
    }
    for (PartitionId partition : partitions) {
      audit.partitions.push_back(
          AuditPartition(cluster, TopicPartition{topic, partition}, audit.errors));
    }
  }
  return audit;
}

}  // namespace ksim::sim
