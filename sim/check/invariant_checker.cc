#include "sim/check/invariant_checker.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include "core/base/check.h"
#include "core/base/trace_names.h"
#include "core/record/record_batch.h"

namespace ksim::sim {

namespace {

std::string Hex(uint32_t value) {
  std::ostringstream out;
  out << std::hex << value;
  return out.str();
}

}  // namespace

ReplicaObservation ObserveReplica(BrokerId broker, uint64_t incarnation,
                                  const Partition& partition) {
  ReplicaObservation replica;
  replica.broker = broker;
  replica.incarnation = incarnation;
  replica.tp = partition.tp();
  replica.role = partition.role();
  replica.leader_epoch = partition.leader_epoch();
  replica.log_start_offset = partition.log_start_offset();
  replica.high_watermark = partition.high_watermark();
  replica.log_end_offset = partition.log_end_offset();
  replica.isr_size = static_cast<int32_t>(partition.isr().size());
  replica.min_insync_replicas = partition.config().min_insync_replicas;
  replica.log = &partition.log();
  return replica;
}

InvariantChecker::InvariantChecker(ViolationSink sink) : sink_(std::move(sink)) {}

void InvariantChecker::BeginPass(TimeUs now_us, bool partial) {
  KSIM_CHECK(now_us >= now_us_);
  now_us_ = now_us;
  partial_pass_ = partial;
  ++pass_;
  ++counters_.passes;
}

void InvariantChecker::EndPass() {
  // The newest leader epoch of each partition first, so that a zombie observed before the new
  // leader in the same pass is known as one.
  for (const PendingLeader& leader : pending_leaders_) {
    leader.partition->newest_epoch =
        std::max(leader.partition->newest_epoch, leader.replica.leader_epoch);
  }
  for (const PendingLeader& leader : pending_leaders_) {
    CheckCommitted(leader.replica, *leader.partition);
  }
  pending_leaders_.clear();
  if (partial_pass_) return;  // the replicas not observed are unchanged
  // Replicas not seen in this pass are gone: a restarted broker starts a fresh track.
  for (auto it = replicas_.begin(); it != replicas_.end();) {
    if (it->second.seen_pass != pass_) {
      it = replicas_.erase(it);
    } else {
      ++it;
    }
  }
}

void InvariantChecker::Observe(const ReplicaObservation& replica) {
  Observe(replica, replicas_[{replica.tp, replica.broker}]);
}

void InvariantChecker::Observe(const ReplicaObservation& replica, ReplicaTrack& track) {
  KSIM_CHECK(pass_ > 0);
  ++counters_.observations;
  const bool known = track.seen_pass != 0 && track.incarnation == replica.incarnation;
  KSIM_CHECK_MSG(track.seen_pass != pass_, "a replica observed twice in one pass");

  CheckOffsets(replica, track);
  if (known) CheckLeaderHw(replica, track);

  if (replica.role == ReplicaRole::kLeader) {
    PartitionTrack& partition = partitions_[replica.tp];
    CheckEpochLeader(replica, partition);
    pending_leaders_.push_back({replica, &partition});  // (c) once the pass knows every leader
  }
  Remember(replica, track);
}

void InvariantChecker::ForgetReplica(const TopicPartition& tp, BrokerId broker) {
  replicas_.erase({tp, broker});
}

void InvariantChecker::CheckCommitted(const ReplicaObservation& replica,
                                      PartitionTrack& partition) {
  // (c) follows the newest leadership only. A leader of an older epoch is a zombie (its session
  // expired, or it has not heard of the election yet): what it appends is not committed by the
  // cluster and it need not hold what later leaders committed. Two leaders of one epoch are
  // (a)'s violation; (c) keeps following the first.
  if (replica.leader_epoch < partition.newest_epoch) return;
  if (partition.verified && partition.verified->epoch == replica.leader_epoch &&
      partition.verified->broker != replica.broker) {
    return;
  }
  const Leadership leadership{replica.broker, replica.incarnation, replica.leader_epoch};
  if (partition.verified != leadership) {
    ++counters_.leaderships;
    VerifyLeadership(replica, partition);
    partition.verified = leadership;
  }
  const bool caught_up_isr = partition.uncommitted_from && !partition.unclean &&
                             replica.isr_size >= replica.min_insync_replicas &&
                             replica.high_watermark > *partition.uncommitted_from;
  if (replica.high_watermark > partition.committed_end || caught_up_isr) {
    RecordCommitted(replica, partition);
  }
}

void InvariantChecker::Remember(const ReplicaObservation& replica, ReplicaTrack& track) {
  track.incarnation = replica.incarnation;
  track.role = replica.role;
  track.epoch = replica.leader_epoch;
  track.high_watermark = replica.high_watermark;
  track.seen_pass = pass_;
}

void InvariantChecker::OnEvent(std::string_view ev, const EventFields& event) {
  if (ev != ev::kTopicDeleted && ev != ev::kLeaderElected) return;
  std::optional<std::string> topic = event.StringValue(field::kTopic);
  if (ev == ev::kTopicDeleted) {
    if (topic) ForgetTopic(*topic);
    return;
  }
  if (!event.BoolValue(field::kUnclean).value_or(false)) return;
  const std::optional<int64_t> partition = event.IntegerValue(field::kPartition);
  if (!topic || !partition) return;
  NoteUncleanElection(
      TopicPartition{std::move(*topic), PartitionId(static_cast<int32_t>(*partition))});
}

void InvariantChecker::ForgetTopic(const std::string& topic) {
  KSIM_CHECK_MSG(pending_leaders_.empty(), "a topic forgotten during a pass");
  // A topic created again under the same name starts over at leader epoch 0.
  std::erase_if(partitions_, [&topic](const auto& entry) { return entry.first.topic == topic; });
}

void InvariantChecker::NoteUncleanElection(const TopicPartition& tp) {
  ++counters_.unclean_elections;
  PartitionTrack& partition = partitions_[tp];
  partition.unclean = true;
  partition.committed.clear();
}

std::string InvariantChecker::Report() const {
  std::string out;
  for (const InvariantViolation& v : violations_) {
    out += "t_us=" + std::to_string(v.t_us) + " " + v.rule + " " + ToString(v.tp) + ": " +
           v.message + "\n";
  }
  return out;
}

std::map<Offset, Offset> InvariantChecker::CommittedBatches(const TopicPartition& tp) const {
  std::map<Offset, Offset> out;
  auto it = partitions_.find(tp);
  if (it == partitions_.end()) return out;
  for (const auto& [base, id] : it->second.committed) out.emplace(base, id.last_offset + 1);
  return out;
}

void InvariantChecker::Violate(std::string rule, const TopicPartition& tp, std::string message) {
  InvariantViolation violation{now_us_, std::move(rule), tp, std::move(message)};
  violations_.push_back(violation);
  if (sink_) sink_(violations_.back());
}

void InvariantChecker::ViolateCommitted(const ReplicaObservation& replica,
                                        const PartitionTrack& partition, Offset offset,
                                        std::string message, Fork fork) {
  InvariantViolation violation{now_us_, "committed_records_stable", replica.tp, std::move(message)};
  violation.broker = replica.broker;
  violation.offset = offset;
  violation.epochless_fork = fork.epochless;
  violation.held_epoch = fork.held_epoch;
  violation.committed_epoch = fork.committed_epoch;
  violation.held_from = fork.held_from;
  // The committed batch holding `offset`, else the first one after it.
  auto it = partition.committed.upper_bound(offset);
  if (it != partition.committed.begin() && std::prev(it)->second.last_offset >= offset) --it;
  if (it != partition.committed.end()) violation.committed_us = it->second.committed_us;
  violations_.push_back(violation);
  if (sink_) sink_(violations_.back());
}

std::string InvariantChecker::Describe(const ReplicaObservation& replica) const {
  return "broker " + std::to_string(replica.broker.value()) + " (incarnation " +
         std::to_string(replica.incarnation) + ", epoch " +
         std::to_string(replica.leader_epoch.value()) + ")";
}

// (d) log start <= HW <= LEO.
void InvariantChecker::CheckOffsets(const ReplicaObservation& replica, ReplicaTrack& track) {
  const bool ordered = replica.log_start_offset <= replica.high_watermark &&
                       replica.high_watermark <= replica.log_end_offset;
  if (ordered) {
    track.offsets_reported = false;
    return;
  }
  if (track.offsets_reported) return;
  track.offsets_reported = true;
  Violate("offsets_ordered", replica.tp,
          Describe(replica) + ": log start " + std::to_string(replica.log_start_offset.value()) +
              ", HW " + std::to_string(replica.high_watermark.value()) + ", LEO " +
              std::to_string(replica.log_end_offset.value()) + " (want log start <= HW <= LEO)");
}

// (b) a leader's HW never decreases within one leadership.
void InvariantChecker::CheckLeaderHw(const ReplicaObservation& replica, const ReplicaTrack& track) {
  if (replica.role != ReplicaRole::kLeader || track.role != ReplicaRole::kLeader) return;
  if (track.epoch != replica.leader_epoch) return;
  if (replica.high_watermark >= track.high_watermark) return;
  Violate("leader_hw_monotonic", replica.tp,
          Describe(replica) + ": leader HW went from " +
              std::to_string(track.high_watermark.value()) + " down to " +
              std::to_string(replica.high_watermark.value()));
}

// (a) one leader per epoch.
void InvariantChecker::CheckEpochLeader(const ReplicaObservation& replica,
                                        PartitionTrack& partition) {
  auto [it, inserted] = partition.leader_of_epoch.emplace(replica.leader_epoch, replica.broker);
  if (inserted || it->second == replica.broker) return;
  if (!partition.reported_epochs.emplace(replica.leader_epoch, replica.broker).second) return;
  Violate("one_leader_per_epoch", replica.tp,
          "brokers " + std::to_string(it->second.value()) + " and " +
              std::to_string(replica.broker.value()) + " both led in leader epoch " +
              std::to_string(replica.leader_epoch.value()));
}

void InvariantChecker::ForgetFrom(PartitionTrack& partition, Offset offset) {
  auto it = partition.committed.lower_bound(offset);
  // A batch starting below `offset` but reaching it goes too.
  if (it != partition.committed.begin()) {
    auto before = std::prev(it);
    if (before->second.last_offset >= offset) it = before;
  }
  partition.committed.erase(it, partition.committed.end());
  partition.committed_end = std::min(partition.committed_end, offset);
  if (partition.uncommitted_from && *partition.uncommitted_from >= offset) {
    partition.uncommitted_from.reset();  // walked again from committed_end
  }
}

std::map<Offset, InvariantChecker::BatchId>::const_iterator InvariantChecker::Overlapping(
    const PartitionTrack& partition, const BatchHeader& batch) {
  const auto none = partition.committed.end();
  // The committed batch holding the batch's first offset, if any.
  auto it = partition.committed.upper_bound(batch.base_offset);
  if (it != partition.committed.begin() && std::prev(it)->second.last_offset >= batch.base_offset) {
    return std::prev(it);
  }
  // None holds its first offset; one may still start inside it.
  return it == none || it->first > batch.last_offset() ? none : it;
}

InvariantChecker::Fork InvariantChecker::ForkOf(const ReplicaObservation& replica,
                                                const PartitionTrack& partition,
                                                const BatchHeader& batch) {
  Fork fork;
  // A committed batch at a lower offset with the held one's bytes (the CRC covers all but the
  // base offset, the batch length and, in v2, the partition leader epoch). Lower only: recovery
  // keeps a batch only where offsets increase, so a corrupted base offset it kept jumped forward
  // (a batch the same as one at a higher offset is a producer's retry written twice).
  for (const auto& [base, id] : partition.committed) {
    if (base >= batch.base_offset) break;
    if (id.crc == batch.crc && id.last_offset - base == batch.last_offset() - batch.base_offset) {
      fork.held_from = base;
      break;
    }
  }
  if (!replica.truncates_by_leader_epoch) return fork;
  if (batch.magic < kMagicV2) {
    fork.epochless = true;
    return fork;
  }
  const auto committed = Overlapping(partition, batch);
  if (committed == partition.committed.end()) return fork;
  const LeaderEpoch epoch = committed->second.epoch;
  if (epoch != kUndefinedEpoch && batch.partition_leader_epoch > epoch) {
    fork.held_epoch = batch.partition_leader_epoch;
    fork.committed_epoch = epoch;
  }
  return fork;
}

std::optional<std::string> InvariantChecker::CompareWithCommitted(const PartitionTrack& partition,
                                                                  const BatchHeader& batch,
                                                                  bool* covered) {
  if (covered != nullptr) *covered = false;
  const auto it = Overlapping(partition, batch);
  if (it == partition.committed.end()) return std::nullopt;
  if (covered != nullptr) *covered = true;
  ++counters_.batches_verified;
  const Offset base = it->first;
  const BatchId& committed = it->second;
  if (base == batch.base_offset && committed.last_offset == batch.last_offset() &&
      committed.crc == batch.crc) {
    return std::nullopt;
  }
  return "committed batch [" + std::to_string(base.value()) + ".." +
         std::to_string(committed.last_offset.value()) + "] crc " + Hex(committed.crc) +
         " is now [" + std::to_string(batch.base_offset.value()) + ".." +
         std::to_string(batch.last_offset().value()) + "] crc " + Hex(batch.crc);
}

// (c) a leadership seen for the first time holds every committed batch it should.
void InvariantChecker::VerifyLeadership(const ReplicaObservation& replica,
                                        PartitionTrack& partition) {
  if (partition.unclean || partition.committed.empty() || replica.log == nullptr) return;
  const Offset committed_end = partition.committed_end;
  if (replica.log_start_offset >= committed_end) return;  // everything committed is below
  const Offset first_committed = partition.committed.begin()->first;
  const Offset from = std::max(replica.log_start_offset, first_committed);

  std::optional<std::pair<Offset, std::string>> divergence;
  Fork fork;
  Status walked = replica.log->ForEachBatch(from, [&](const BatchHeader& batch, uint64_t) {
    if (batch.base_offset >= committed_end) return BatchWalk::kStop;
    if (batch.next_offset() <= from) return BatchWalk::kContinue;
    std::optional<std::string> differs = CompareWithCommitted(partition, batch);
    if (!differs) return BatchWalk::kContinue;
    divergence = {batch.base_offset, *differs};
    fork = ForkOf(replica, partition, batch);
    return BatchWalk::kStop;
  });
  if (!walked.ok()) return;  // unreadable: skipped
  // Short of the last committed batch's end, not of committed_end: batches a HW covered while
  // the ISR was below min.insync.replicas are passed over, and not committed until it grows.
  const Offset committed_last_end = std::prev(partition.committed.end())->second.last_offset + 1;
  if (!divergence && replica.log_end_offset < committed_last_end) {
    divergence = {replica.log_end_offset,
                  "its log ends at " + std::to_string(replica.log_end_offset.value()) +
                      ", committed batches reach " + std::to_string(committed_last_end.value())};
  }
  if (!divergence) return;
  ViolateCommitted(
      replica, partition, divergence->first,
      "new leader " + Describe(replica) + " lost committed records: " + divergence->second, fork);
  ForgetFrom(partition, divergence->first);
}

// (c) the batches a leader's HW newly covers: compared when already known, else recorded.
void InvariantChecker::RecordCommitted(const ReplicaObservation& replica,
                                       PartitionTrack& partition) {
  if (replica.log == nullptr) return;
  const Offset hw = replica.high_watermark;
  const bool may_commit = !partition.unclean && replica.isr_size >= replica.min_insync_replicas;
  // With the ISR large enough again, the batches covered while it was not are walked first.
  const bool catch_up = may_commit && partition.uncommitted_from.has_value();
  Offset end = catch_up ? *partition.uncommitted_from : partition.committed_end;
  std::optional<Offset> first_uncommitted;
  std::optional<std::pair<Offset, std::string>> divergence;
  Fork fork;
  Status walked = replica.log->ForEachBatch(end, [&](const BatchHeader& batch, uint64_t) {
    if (batch.next_offset() <= end) return BatchWalk::kContinue;
    if (batch.next_offset() > hw) return BatchWalk::kStop;
    bool covered = false;
    std::optional<std::string> differs = CompareWithCommitted(partition, batch, &covered);
    if (differs) {
      divergence = {batch.base_offset, *differs};
      fork = ForkOf(replica, partition, batch);
      return BatchWalk::kStop;
    }
    if (!covered && may_commit) {
      const LeaderEpoch epoch =
          batch.magic >= kMagicV2 ? batch.partition_leader_epoch : kUndefinedEpoch;
      partition.committed.emplace(batch.base_offset,
                                  BatchId{batch.last_offset(), batch.crc, epoch, now_us_});
      ++counters_.batches_committed;
    } else if (!covered && !first_uncommitted) {
      first_uncommitted = batch.base_offset;
    }
    end = batch.next_offset();
    return BatchWalk::kContinue;
  });
  if (!walked.ok()) return;
  if (divergence) {
    ViolateCommitted(replica, partition, divergence->first,
                     "leader " + Describe(replica) + ": " + divergence->second, fork);
    ForgetFrom(partition, divergence->first);
    return;
  }
  if (catch_up) {
    // What the HW no longer covers stays to catch up (a new leader's HW may be lower).
    partition.uncommitted_from =
        end < partition.committed_end ? std::optional<Offset>(end) : std::nullopt;
  }
  if (first_uncommitted && !partition.uncommitted_from) {
    partition.uncommitted_from = first_uncommitted;
  }
  // Below the log start nothing is walked: what the leader no longer holds stays as recorded.
  partition.committed_end =
      std::max({partition.committed_end, end, std::min(hw, replica.log_start_offset)});
}

}  // namespace ksim::sim
