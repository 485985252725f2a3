#include "sim/check/history_checker.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "core/base/check.h"
#include "core/base/trace_names.h"
#include "sim/check/key_hash.h"
#include "sim/scenario/scenario.h"

namespace ksim::sim {
namespace {

struct Copy {
  TopicPartition tp;
  Offset offset{-1};
};

// One record a producer tried to send.
struct Send {
  const HistoryOp* invoke = nullptr;
  const HistoryOp* completion = nullptr;  // null: never completed
  bool acked = false;
  std::vector<Copy> copies;  // where the final logs hold it, in (partition, offset) order
  TimeUs end_us() const { return completion != nullptr ? completion->t_us : INT64_MAX; }
};

std::string TpText(const TopicPartition& tp) { return ToString(tp); }

// Searches in records sorted by time (each list is in the order events happened).
template <class T>
typename std::vector<const T*>::const_iterator FirstAtOrAfter(const std::vector<const T*>& sorted,
                                                              TimeUs t_us) {
  return std::lower_bound(sorted.begin(), sorted.end(), t_us,
                          [](const T* x, TimeUs t) { return x->t_us < t; });
}
// The last record at or before `t_us`, or null.
template <class T>
const T* LastAtOrBefore(const std::vector<const T*>& sorted, TimeUs t_us) {
  auto it = std::upper_bound(sorted.begin(), sorted.end(), t_us,
                             [](TimeUs t, const T* x) { return t < x->t_us; });
  return it == sorted.begin() ? nullptr : *(it - 1);
}

// Everything the checker looks up, indexed once (maps keyed by record id, partition, client).
class Checker {
 public:
  explicit Checker(const CheckInput& input) : in_(input) {}

  CheckResult Run();

 private:
  void IndexSends();
  void IndexLogs(CheckResult& result);
  void IndexEvents();
  void IndexConsumers();
  void Place(size_t send, const TopicPartition& tp, const AuditedRecord& record);
  std::string_view DeliveredId(const HistoryOp& op) const;

  void CheckPresence(CheckResult& result);
  void CheckDeliveries();
  void CheckOrder();
  void ObserverMetrics();

  // `defect` (when not null) gets the Kafka defect the cause names (Anomaly::kafka_defect).
  std::string LostCause(const Send& send, TimeUs* cause_t_us, std::string* defect = nullptr) const;
  // Whether `broker` led `tp` at `t_us` in the process then running: its last role change for
  // it before then made it leader, with no crash, shutdown or restart of it in between.
  bool LedAt(BrokerId broker, const TopicPartition& tp, TimeUs t_us) const;
  // A committed_records_stable report after `acked_us` of a new leader of `tp` lacking `offset`
  // that Kafka permits (PermittedLossReason): that leader's election without the record, and
  // why. "" when none.
  std::string PermittedLossCause(const TopicPartition& tp, Offset offset, TimeUs acked_us,
                                 TimeUs* cause_t_us, std::string* defect = nullptr) const;
  // A record another live replica still holds at its offset while the leader holds another one
  // there: the first election after the ack of a leader without it. "" when none.
  std::string DivergedCause(const Send& send, const PartitionAudit& audited,
                            const std::vector<const ElectionRecord*>& elections,
                            TimeUs* cause_t_us) const;
  // Where a live replica holds `send`'s value in its partition (nullopt: nowhere), and why the
  // audit did not read it there.
  std::optional<std::string> UnavailableCause(const Send& send, const TopicPartition& tp) const;
  // committed_records_stable reports: Kafka's permitted losses (with their reason) apart from
  // the engine's broken rules.
  void SplitViolations(CheckResult& result);
  // Why Kafka permits the loss `v` reports: the first of the rules below that names a reason; ""
  // when none does (a broken rule of the engine). `earlier`, when splitting the reports: the
  // losses of the run already permitted (ForkReason and TruncatedBeforeTheCommit read them).
  // Null when naming a lost record's cause (PermittedLossCause): then the rules of a fork or a
  // truncation (ForkReason, HighWatermarkFork, TruncatedBeforeTheCommit) are not asked, since
  // the record's own cause names it more exactly (LostCause's truncation, DivergedCause's replica
  // still holding it). `defect` gets the Kafka defect the reason names, if it names one
  // (Anomaly::kafka_defect).
  std::string PermittedLossReason(const ViolationRecord& v,
                                  const std::vector<PermittedLoss>* earlier,
                                  std::string* defect) const;
  // A committed record replaced after an earlier permitted loss of `v.tp` at or below its
  // offset: the log forked there and `v.broker` kept a record from before the fork. "" when no
  // such loss came before the record was committed.
  std::string ForkReason(const std::vector<PermittedLoss>& earlier, const ViolationRecord& v) const;
  // A committed record replaced by a new leader that kept, at its offset, a record another
  // replica had cut away by its own high watermark before the commit (KIP-101's divergence: the
  // log forked there, the records committed on the cut side took the offsets, and the leader,
  // which never truncated the offset since, did not see the fork). "" otherwise.
  std::string HighWatermarkFork(const ViolationRecord& v) const;
  // A committed record replaced after the partition's leader lost power, with unsynced writes of
  // the partition, before it was committed: the leader, back at the same or a later epoch with a
  // shorter log, forked it from a follower's, which 0.10's offset-only truncation does not see.
  // "" when no such power loss.
  std::string LeaderPowerLossFork(const ViolationRecord& v) const;
  // A new leader lacking committed records that lost power, with unsynced writes of the
  // partition, before its election and was not added back to the ISR since: it stayed eligible on
  // an ISR from before the power loss. "" when it lost nothing of the partition, or caught up
  // since.
  std::string StaleIsrPowerLoss(const ViolationRecord& v) const;
  // A committed record replaced by a batch the new leader kept under another offset after a
  // power loss that corrupted its unsynced tail: the batch it holds there has the bytes of the
  // batch committed at ViolationRecord::held_from, all but the base offset, which no CRC covers.
  // "" when it holds no such batch or lost no corrupted tail of the partition before.
  std::string CorruptedOffsetKept(const ViolationRecord& v) const;
  // Records counted committed when a leader that had lost power, with unsynced writes of the
  // partition, took the partition again: its checkpointed high watermark, from before the power
  // loss, covered records written since that no follower held. "" when the commit is not dated
  // at such a leader's election.
  std::string StaleHighWatermarkAfterPowerLoss(const ViolationRecord& v) const;
  // Records counted committed when a broker that led the partition took it again at a later
  // epoch without having followed in between (Kafka's makeLeader keeps the remote replicas' log
  // end offsets unless the broker is a new leader): its high watermark rose on a follower's log
  // end from the earlier leadership, which that follower had since truncated away. "" when the
  // commit is not dated at such a leadership's start.
  std::string StaleFollowerEndAtLeadingAgain(const ViolationRecord& v) const;
  // A committed record replaced by a message set (a format before 0.11, no leader epoch) that a
  // new leader truncating by leader epoch held at the offset and did not truncate after the
  // commit (ViolationRecord::epochless_fork): with no epochs in the log, Kafka's leader-epoch
  // truncation cannot find where two replicas' logs forked (0.11 to 1.1's leader answers a
  // follower's request for epoch -1 with its own log end; from 2.0 the follower cuts to its high
  // watermark), so a replica that kept a record from before the fork stays in the ISR and can be
  // elected with it. "" otherwise (a broker truncating to its high watermark has its own rules).
  std::string EpochlessFork(const ViolationRecord& v) const;
  // Before Kafka 2.0: a committed record replaced by a new leader truncating by leader epoch that
  // held at the offset its own batch of a later epoch than the committed one's
  // (ViolationRecord::held_epoch) and did not truncate the offset after the commit. The replicas
  // the record was committed on never had that epoch; a follower asks its leader for the end of
  // its latest epoch once, and 0.11 to 1.1's leader answers an epoch it never had with the start
  // of its next one, naming no epoch, which can lie at or past the follower's log end: it cuts
  // nothing, keeps the fork and can be counted in the ISR and elected with it (KAFKA-6361,
  // fixed by KIP-279's rounds). "" otherwise, and from 2.0.
  std::string UnheldEpochFork(const ViolationRecord& v) const;
  // Before Kafka 2.1: a committed record replaced by a new leader that, as a follower of L since
  // some epoch, missed the leaderships after it (its last role before its election is that
  // one), in one of which the record was committed, and was then told L again: Kafka's
  // Partition.makeFollower returns false for the same leader, so the follower neither truncates
  // nor restarts its fetcher (KAFKA-7164) and keeps what it held from before the fork; it did not
  // truncate the offset since. "" otherwise, and from 2.1.
  std::string SameLeaderAfterMissedEpochs(const ViolationRecord& v) const;
  // Before Kafka 2.1: a new leader that joined the ISR after the commit fetching from at or below
  // the lost offset (its log end as the leader knew it), so without the record, and did not cut
  // the offset away before its election. Before 2.1 a leader takes in a follower once its log
  // end reaches the leader's high watermark, which can be below what was committed (a new
  // leader's lags the old one's; a leader back from a restart reads its checkpoint); KAFKA-7128
  // asks the follower to reach the leader's epoch start as well. "" otherwise, and at 2.1.
  std::string IsrJoinWithoutTheRecord(const ViolationRecord& v) const;
  // The first of LeaderPowerLossFork, StaleIsrPowerLoss and StaleHighWatermarkAfterPowerLoss
  // that explains `v`: a power loss before the commit that Kafka lets lose it later.
  std::string EarlierPowerLossReason(const ViolationRecord& v) const;
  // A new leader whose log ends at or below the lost offset because it truncated that offset
  // itself before the commit was seen (the last thing that happened to the offset there): by its
  // own high watermark (KIP-101's loss, which the commit's other copies do not undo), or to a
  // leader shorter after an earlier permitted loss of the partition (`earlier`). "" otherwise.
  std::string TruncatedBeforeTheCommit(const std::vector<PermittedLoss>& earlier,
                                       const ViolationRecord& v) const;
  // The last truncation of `v.tp` at or before `until_us` that removed `v.offset` and that
  // `which` accepts; nullptr when none.
  const TruncationRecord* LastTruncationRemoving(
      const ViolationRecord& v, TimeUs until_us,
      const std::function<bool(const TruncationRecord&)>& which) const;
  // Whether the new leader `v.broker` itself truncated `v.offset` away at or after `since_us`
  // (before its election): what it holds there came later than that.
  bool CutItselfSince(const ViolationRecord& v, TimeUs since_us) const;
  // The partition's role records of a broker becoming its leader at `t_us` exactly (a commit the
  // checker dates at that moment), in order.
  std::vector<const RoleRecord*> LeadershipsTakenAt(const TopicPartition& tp, TimeUs t_us) const;
  // `broker`'s last power loss (a crash, not a halt) before `t_us` whose disk held unsynced writes
  // in `tp`'s directory (LostUnsyncedOf); nullptr when none.
  const FaultRecord* PowerLossBefore(BrokerId broker, TimeUs t_us, const TopicPartition& tp) const;
  // The event between `from_us` and `to_us` that lets Kafka lose committed records of `tp`: a
  // broker's power loss, else a high-watermark truncation that removed `offset`; "" when none.
  std::string PermittedReason(const TopicPartition& tp, Offset offset, TimeUs from_us,
                              TimeUs to_us) const;
  std::string DuplicateCause(const Send& send, const TopicPartition& tp, TimeUs* cause_t_us) const;
  std::string RetryCause(const Send& send, const TopicPartition& tp, TimeUs* cause_t_us) const;
  std::string RedeliveryCause(const std::string& group, const Send& send,
                              const std::vector<const HistoryOp*>& deliveries,
                              TimeUs* cause_t_us) const;
  std::string UndeliveredCause(const std::string& group, const Copy& copy,
                               TimeUs* cause_t_us) const;
  std::string LostCommitAnswerCause(const std::string& group, const Copy& copy,
                                    const OffsetFetchRecord& fetched, TimeUs* cause_t_us) const;
  // The first crash or shutdown in [from_us, to_us] of a member of `group` (or `also`), else of
  // a broker (`broker` first when set), else the first network partition or isolation.
  const FaultRecord* DropFault(const std::string& group, const std::string& also, BrokerId broker,
                               TimeUs from_us, TimeUs to_us) const;
  // The last ok commit of `group` for `tp` at or before `t_us`, or null.
  const HistoryOp* LastCommitBefore(const std::string& group, const TopicPartition& tp,
                                    TimeUs t_us) const;
  std::string LastCommitText(const std::string& group, const TopicPartition& tp, TimeUs t_us) const;
  // The last election of `tp` at or before `t_us`, or null.
  const ElectionRecord* ElectionBefore(const TopicPartition& tp, TimeUs t_us) const;
  bool Audited(std::string_view topic) const { return audited_topics_.contains(topic); }
  const PartitionAudit* AuditOf(const TopicPartition& tp) const {
    auto it = audited_partitions_.find(tp);
    return it == audited_partitions_.end() ? nullptr : it->second;
  }

  const CheckInput& in_;
  std::vector<Send> sends_;  // in invoke order
  // Keyed by views of the history's text (which outlives the check).
  HashMap<std::string_view, size_t> send_of_id_;                   // record id -> sends_ index
  HashMap<std::string_view, std::vector<size_t>> sends_of_value_;  // in send order
  // (partition, offset) of a final-log copy -> the send it belongs to.
  HashMap<std::pair<TopicPartition, Offset>, size_t> owner_;
  std::set<std::string, std::less<>> audited_topics_;
  std::map<TopicPartition, const PartitionAudit*> audited_partitions_;
  std::map<TopicPartition, std::vector<const ElectionRecord*>> elections_;
  std::map<TopicPartition, std::vector<const TruncationRecord*>> truncations_;
  std::map<TopicPartition, std::vector<const RoleRecord*>> roles_;
  std::map<std::pair<std::string, TopicPartition>, std::vector<const RetryRecord*>> retries_;
  std::map<std::string, std::vector<const FaultRecord*>> faults_;  // node -> its faults
  std::map<std::string, std::set<std::string>, std::less<>> groups_of_topic_;
  std::map<std::string, std::set<std::string>> members_;  // group -> client ids
  // (group, partition) -> where the group first started reading it (its first offset_reset
  // without a position): the records before are not owed to the group.
  std::map<std::pair<std::string, TopicPartition>, Offset> owed_from_;
  // (group, record id) -> its deliveries, in history order.
  HashMap<std::pair<std::string_view, std::string_view>, std::vector<const HistoryOp*>> deliveries_;
  // (group, partition) -> ok commits, in history order, and the highest offset so far.
  struct Commits {
    std::vector<const HistoryOp*> ops;
    std::vector<Offset> highest;
  };
  HashMap<std::pair<std::string, TopicPartition>, Commits> commits_;
  HashMap<std::pair<std::string, TopicPartition>, std::vector<const HistoryOp*>> failed_commits_;
  // (group, partition) -> the positions its members resumed from (offset_fetched), in order.
  std::map<std::pair<std::string, TopicPartition>, std::vector<const OffsetFetchRecord*>> fetches_;
  // group -> its coordinators' successful commit writes (offsets_committed NONE), in order.
  std::map<std::string, std::vector<const CommitWriteRecord*>> commit_writes_;

  std::map<std::string, int64_t, std::less<>> metrics_;  // absent: 0
  std::vector<Anomaly> lost_acked_;
  std::vector<Anomaly> unavailable_acked_;
  std::vector<Anomaly> failed_in_log_;
  std::vector<Anomaly> log_duplicates_;
  std::vector<Anomaly> duplicated_;
  std::vector<Anomaly> undelivered_;
  std::vector<Anomaly> reordered_;
};

std::string_view GroupOf(const HistoryOp& op) { return op.group.empty() ? op.process : op.group; }

void Checker::IndexSends() {
  for (const HistoryOp& op : in_.history->ops()) {
    if (op.f != OpFunction::kSend || op.type != OpType::kInvoke) continue;
    Send send;
    send.invoke = &op;
    send.completion = in_.history->CompletionOf(op.index);
    send.acked = send.completion != nullptr && send.completion->type == OpType::kOk &&
                 send.completion->offset >= Offset(0);
    send_of_id_.emplace(op.record_id, sends_.size());
    sends_of_value_[op.value].push_back(sends_.size());
    sends_.push_back(std::move(send));
  }
}

void Checker::IndexLogs(CheckResult& result) {
  // Which send each copy in the final logs belongs to. Generated values are unique, so the
  // value decides; a value typed in several sends is shared out: a copy goes to the send acked
  // at its offset, else to the earliest send of that value with no copy yet, else to the first
  // send of the value (a duplicate).
  HashMap<std::pair<TopicPartition, Offset>, size_t> acked_at;
  acked_at.reserve(sends_.size());
  for (size_t i = 0; i < sends_.size(); ++i) {
    if (!sends_[i].acked) continue;
    const HistoryOp& ok = *sends_[i].completion;
    acked_at.emplace(std::pair{ok.tp(), ok.offset}, i);
  }
  std::vector<std::pair<const PartitionAudit*, const AuditedRecord*>> unplaced;
  for (const PartitionAudit& partition : in_.audit->partitions) {
    audited_topics_.insert(partition.tp.topic);
    audited_partitions_.emplace(partition.tp, &partition);
    for (const AuditedRecord& record : partition.records) {
      auto acked = acked_at.find({partition.tp, record.offset});
      if (acked != acked_at.end() && sends_[acked->second].invoke->value == record.value) {
        Place(acked->second, partition.tp, record);
      } else if (!sends_of_value_.contains(record.value)) {
        ++result.foreign_records;
      } else {
        unplaced.push_back({&partition, &record});
      }
    }
  }
  for (const auto& [partition, record] : unplaced) {
    const std::vector<size_t>& candidates = sends_of_value_.at(record->value);
    size_t owner = candidates.front();
    for (size_t candidate : candidates) {
      if (sends_[candidate].copies.empty()) {
        owner = candidate;
        break;
      }
    }
    Place(owner, partition->tp, *record);
  }
  for (Send& send : sends_) {
    std::sort(send.copies.begin(), send.copies.end(), [](const Copy& a, const Copy& b) {
      return std::tie(a.tp, a.offset) < std::tie(b.tp, b.offset);
    });
  }
}

void Checker::Place(size_t send, const TopicPartition& tp, const AuditedRecord& record) {
  sends_[send].copies.push_back(Copy{tp, record.offset});
  owner_.emplace(std::pair{tp, record.offset}, send);
}

// The record a delivery was: the send owning the final log's copy at the delivered offset when
// that copy has the delivered value, else the history's id for the value.
std::string_view Checker::DeliveredId(const HistoryOp& op) const {
  auto owner = owner_.find({op.tp(), op.offset});
  if (owner != owner_.end() && sends_[owner->second].invoke->value == op.value) {
    return sends_[owner->second].invoke->record_id;
  }
  return op.record_id;
}

void Checker::IndexEvents() {
  const RunObserver& observer = *in_.observer;
  for (const ElectionRecord& e : observer.elections()) elections_[e.tp].push_back(&e);
  for (const TruncationRecord& t : observer.truncations()) truncations_[t.tp].push_back(&t);
  for (const RoleRecord& r : observer.roles()) roles_[r.tp].push_back(&r);
  for (const RetryRecord& r : observer.retries()) retries_[{r.client, r.tp}].push_back(&r);
  for (const FaultRecord& f : observer.faults()) faults_[f.node].push_back(&f);
  for (const OffsetFetchRecord& f : observer.offset_fetches()) {
    fetches_[{f.group.empty() ? f.client : f.group, f.tp}].push_back(&f);
  }
  for (const CommitWriteRecord& w : observer.commit_writes()) {
    if (w.error == "NONE") commit_writes_[w.group].push_back(&w);
  }
  for (const HistoryOp& op : in_.history->ops()) {
    if (op.f == OpFunction::kDeliver) {
      const std::string_view id = DeliveredId(op);
      if (!id.empty()) deliveries_[{GroupOf(op), id}].push_back(&op);
    } else if (op.f == OpFunction::kCommit && op.type == OpType::kFail) {
      failed_commits_[{std::string(GroupOf(op)), op.tp()}].push_back(&op);
    } else if (op.f == OpFunction::kCommit && op.type == OpType::kOk) {
      Commits& commits = commits_[{std::string(GroupOf(op)), op.tp()}];
      commits.highest.push_back(commits.ops.empty() ? op.offset
                                                    : std::max(op.offset, commits.highest.back()));
      commits.ops.push_back(&op);
    }
  }
}

void Checker::IndexConsumers() {
  std::map<std::string, std::string> group_of;
  for (const CheckInput::Consumer& consumer : in_.consumers) {
    const std::string group = consumer.group.empty() ? consumer.id : consumer.group;
    group_of[consumer.id] = group;
    members_[group].insert(consumer.id);
    for (const std::string& topic : consumer.topics) groups_of_topic_[topic].insert(group);
  }
  for (const OffsetResetRecord& reset : in_.observer->offset_resets()) {
    auto group = group_of.find(reset.client);
    if (group == group_of.end() || reset.from >= Offset(0)) continue;
    owed_from_.try_emplace({group->second, reset.tp}, reset.offset);  // the first one
  }
}

const ElectionRecord* Checker::ElectionBefore(const TopicPartition& tp, TimeUs t_us) const {
  auto it = elections_.find(tp);
  if (it == elections_.end()) return nullptr;
  return LastAtOrBefore(it->second, t_us);
}

std::string Checker::LostCause(const Send& send, TimeUs* cause_t_us, std::string* defect) const {
  const TopicPartition tp = send.completion->tp();
  const Offset offset = send.completion->offset;
  const TimeUs acked_us = send.completion->t_us;
  const ElectionRecord* leading = ElectionBefore(tp, acked_us);
  const BrokerId leader = leading != nullptr ? leading->leader : BrokerId(-1);
  // The write happened before the ack reached the producer: a truncation may come in between.
  const TimeUs from_us = send.invoke->t_us;
  auto truncations = truncations_.find(tp);
  auto elections = elections_.find(tp);
  // A replica that truncated the record away and was elected leader afterwards (KIP-101's
  // follower truncation): the first such election after the send.
  if (truncations != truncations_.end() && elections != elections_.end()) {
    for (auto e = FirstAtOrAfter(elections->second, from_us); e != elections->second.end(); ++e) {
      const TruncationRecord* before = nullptr;
      for (const TruncationRecord* t : truncations->second) {
        if (t->t_us > (*e)->t_us) break;
        if (t->t_us >= from_us && t->broker == (*e)->leader && t->Removed(offset)) before = t;
      }
      if (before == nullptr) continue;
      *cause_t_us = before->t_us;
      return "truncated on " + node::Broker(before->broker) + " at " + FormatSeconds(before->t_us) +
             " (to offset " + std::to_string(before->to.value()) + ", " + before->reason +
             ") before " + node::Broker((*e)->leader) + " was elected leader (epoch " +
             std::to_string((*e)->epoch) + ((*e)->unclean ? ", unclean" : "") + ") at " +
             FormatSeconds((*e)->t_us);
    }
  }
  // Else the leader's own truncation after another broker was elected without the record (an
  // unclean election, ...).
  const TruncationRecord* found = nullptr;
  if (truncations != truncations_.end()) {
    for (const TruncationRecord* t : truncations->second) {
      if (t->t_us < from_us || !t->Removed(offset)) continue;
      if (t->broker == leader) {
        found = t;
        break;
      }
      if (found == nullptr) found = t;  // another replica's, kept unless the leader's follows
    }
  }
  if (found != nullptr) {
    *cause_t_us = found->t_us;
    std::string cause = "truncated on " + node::Broker(found->broker) + " at " +
                        FormatSeconds(found->t_us) + " (to offset " +
                        std::to_string(found->to.value()) + ", " + found->reason + ")";
    if (const ElectionRecord* e = ElectionBefore(tp, found->t_us)) {
      cause += " after " + node::Broker(e->leader) + " was elected leader (epoch " +
               std::to_string(e->epoch) + (e->unclean ? ", unclean" : "") + ") at " +
               FormatSeconds(e->t_us);
    }
    return cause;
  }
  // No truncation: the leader lost the data itself (a crash losing unsynced writes, a disk
  // fault), or nothing is left to read.
  auto loss_of = [&](BrokerId broker) -> const FaultRecord* {
    auto faults = faults_.find(node::Broker(broker));
    if (faults == faults_.end()) return nullptr;
    // The record was written by the process that acked it: after the send and after that
    // broker's last restart before the ack. A crash before then cannot have lost it.
    TimeUs written_from_us = from_us;
    for (const FaultRecord* f : faults->second) {
      if (f->t_us > acked_us) break;
      if (f->ev == ev::kRestart) written_from_us = std::max(written_from_us, f->t_us);
    }
    for (const FaultRecord* f : faults->second) {
      if (f->t_us >= written_from_us && (f->ev == ev::kCrash || f->ev == ev::kDiskFault)) return f;
    }
    return nullptr;
  };
  auto loss_text = [&](BrokerId broker, const std::string& role, const FaultRecord* f) {
    *cause_t_us = f->t_us;
    return node::Broker(broker) + ", " + role + ", " +
           (f->ev == ev::kCrash ? std::string("crashed") : "had a disk fault (" + f->detail + ")") +
           " at " + FormatSeconds(f->t_us) +
           (f->ev == ev::kCrash && !f->detail.empty() ? " (" + f->detail + ")" : "") +
           " and no replica kept the record";
  };
  if (leader.value() >= 0) {
    if (const FaultRecord* f = loss_of(leader))
      return loss_text(leader, "its leader at the ack", f);
  }
  // A leader elected later without it, having lost it in a way Kafka permits (replicas that
  // lose power together lose what none had synced).
  if (std::string permitted = PermittedLossCause(tp, offset, acked_us, cause_t_us, defect);
      !permitted.empty()) {
    return permitted;
  }
  // A deposed leader that had not heard of its successors' elections may still have acked it
  // (acks=1, or an ISR it still believed): the leaders elected before, latest first, that still
  // led the partition when the ack came.
  if (leading != nullptr && elections != elections_.end()) {
    std::set<BrokerId> tried = {leader};
    for (auto e = elections->second.rbegin(); e != elections->second.rend(); ++e) {
      if ((*e)->t_us >= leading->t_us) continue;
      const BrokerId deposed = (*e)->leader;
      if (deposed.value() < 0 || !tried.insert(deposed).second) continue;
      if (!LedAt(deposed, tp, acked_us)) continue;
      if (const FaultRecord* f = loss_of(deposed)) {
        return loss_text(deposed,
                         "a deposed leader that still acked it (" + node::Broker(leader) +
                             " had been elected at " + FormatSeconds(leading->t_us) + ")",
                         f);
      }
    }
  }
  const PartitionAudit* audited = AuditOf(tp);
  if (audited != nullptr && audited->leader.value() < 0) {
    return TpText(tp) + " has no live leader at the end";
  }
  if (audited != nullptr && elections != elections_.end()) {
    std::string diverged = DivergedCause(send, *audited, elections->second, cause_t_us);
    if (!diverged.empty()) return diverged;
  }
  return "unknown";
}

bool Checker::LedAt(BrokerId broker, const TopicPartition& tp, TimeUs t_us) const {
  auto roles = roles_.find(tp);
  if (roles == roles_.end()) return false;
  const RoleRecord* last = nullptr;
  for (const RoleRecord* r : roles->second) {
    if (r->t_us > t_us) break;
    if (r->broker == broker) last = r;
  }
  if (last == nullptr || !last->leader) return false;
  auto faults = faults_.find(node::Broker(broker));
  if (faults == faults_.end()) return true;
  for (const FaultRecord* f : faults->second) {
    if (f->t_us > t_us) break;
    if (f->t_us >= last->t_us &&
        (f->ev == ev::kCrash || f->ev == ev::kShutdown || f->ev == ev::kRestart)) {
      return false;
    }
  }
  return true;
}

std::string Checker::PermittedLossCause(const TopicPartition& tp, Offset offset, TimeUs acked_us,
                                        TimeUs* cause_t_us, std::string* defect) const {
  for (const ViolationRecord& v : in_.observer->invariant_violations()) {
    if (v.rule != "committed_records_stable" || v.tp != tp || v.t_us < acked_us ||
        v.committed_us < 0 || v.offset > offset) {
      continue;
    }
    std::string named;
    std::string reason = PermittedLossReason(v, nullptr, &named);
    if (reason.empty()) continue;
    if (defect != nullptr && !named.empty()) *defect = std::move(named);
    *cause_t_us = v.t_us;
    return node::Broker(v.broker) + " became leader at " + FormatSeconds(v.t_us) + " without it (" +
           v.message + "): " + reason;
  }
  return "";
}

// Why a replica's copy of a record is never served once its log has diverged from the leader's.
constexpr std::string_view kDivergedLogKept =
    "a follower that truncates to its own high watermark (before KIP-101, 0.11) keeps a log that "
    "diverged from its leader's and never serves it";

std::string Checker::DivergedCause(const Send& send, const PartitionAudit& audited,
                                   const std::vector<const ElectionRecord*>& elections,
                                   TimeUs* cause_t_us) const {
  // A replica that still holds the record where the acking leader wrote it, while the leader
  // holds something else there: their logs diverged and nothing truncated it away.
  const Offset offset = send.completion->offset;
  auto holds = [&](BrokerId broker) {
    for (const ReplicaHolding& replica : audited.held) {
      if (replica.broker != broker) continue;
      std::optional<bool> same;  // the record at `offset` has the sent value
      ForEachHeld(audited, replica, [&](const AuditedRecord& record) {
        if (record.offset != offset) return true;
        same = record.value == send.invoke->value;
        return false;
      });
      if (same) return *same;
    }
    return false;
  };
  const ReplicaHolding* holder = nullptr;
  for (const ReplicaHolding& replica : audited.held) {
    if (replica.broker != audited.leader && holds(replica.broker)) {
      holder = &replica;
      break;
    }
  }
  if (holder == nullptr) return "";
  // The first leader elected after the ack that does not hold it (at the end) at its offset.
  for (auto e = FirstAtOrAfter(elections, send.completion->t_us); e != elections.end(); ++e) {
    if (holds((*e)->leader)) continue;
    *cause_t_us = (*e)->t_us;
    return node::Broker((*e)->leader) + " was elected leader (epoch " +
           std::to_string((*e)->epoch) + ((*e)->unclean ? ", unclean" : "") + ") at " +
           FormatSeconds((*e)->t_us) + " with another record at offset " +
           std::to_string(offset.value()) + "; " + node::Broker(holder->broker) +
           " still holds it there, but " + std::string(kDivergedLogKept);
  }
  // None after the ack: the holder acked it as a deposed leader, after its successor's election.
  const ElectionRecord* current = ElectionBefore(send.completion->tp(), send.completion->t_us);
  if (current != nullptr && current->leader != holder->broker && !holds(current->leader)) {
    *cause_t_us = current->t_us;
    return node::Broker(holder->broker) + " acked it as a deposed leader (" +
           node::Broker(current->leader) + " had been elected at " + FormatSeconds(current->t_us) +
           ", epoch " + std::to_string(current->epoch) + ") and still holds it at offset " +
           std::to_string(offset.value()) + ", where the leader's log has another record; " +
           std::string(kDivergedLogKept);
  }
  return "";
}

std::optional<std::string> Checker::UnavailableCause(const Send& send,
                                                     const TopicPartition& tp) const {
  const PartitionAudit* audited = AuditOf(tp);
  if (audited == nullptr) return std::nullopt;
  const std::string_view value = send.invoke->value;
  const ReplicaHolding* holder = nullptr;
  Offset at{-1};
  for (const ReplicaHolding& replica : audited->held) {
    ForEachHeld(*audited, replica, [&](const AuditedRecord& record) {
      if (record.value != value) return true;
      // The leader's own copy first: it says why the leader did not serve it.
      if (holder == nullptr || replica.broker == audited->leader) {
        holder = &replica;
        at = record.offset;
      }
      return false;
    });
  }
  if (holder == nullptr) return std::nullopt;
  // With a live leader, a copy only on another replica is not coming back: that replica follows
  // the leader's log and truncates or diverges from it (lost, not unavailable).
  if (audited->leader.value() >= 0 && holder->broker != audited->leader) return std::nullopt;
  if (audited->leader.value() < 0) {
    return TpText(tp) + " has no live leader at the audit; " + node::Broker(holder->broker) +
           " holds it at offset " + std::to_string(at.value());
  }
  return "above " + TpText(tp) + "'s high watermark at the audit (" + node::Broker(holder->broker) +
         ": HW " + std::to_string(audited->high_watermark.value()) + ", the record at offset " +
         std::to_string(at.value()) + ")";
}

std::string Checker::RetryCause(const Send& send, const TopicPartition& tp,
                                TimeUs* cause_t_us) const {
  auto retries = retries_.find({std::string(send.invoke->process), tp});
  if (retries != retries_.end()) {
    for (auto it = FirstAtOrAfter(retries->second, send.invoke->t_us); it != retries->second.end();
         ++it) {
      const RetryRecord* r = *it;
      if (r->t_us > send.end_us()) break;
      *cause_t_us = r->t_us;
      return "producer " + r->client + " retried " + TpText(r->tp) + " (attempt " +
             std::to_string(r->attempt) + ") after " + r->error + " at " + FormatSeconds(r->t_us);
    }
  }
  return "";
}

std::string Checker::DuplicateCause(const Send& send, const TopicPartition& tp,
                                    TimeUs* cause_t_us) const {
  std::string cause = RetryCause(send, tp, cause_t_us);
  if (!cause.empty()) return cause;
  return "unknown";
}

const HistoryOp* Checker::LastCommitBefore(const std::string& group, const TopicPartition& tp,
                                           TimeUs t_us) const {
  auto commits = commits_.find({group, tp});
  if (commits == commits_.end()) return nullptr;
  return LastAtOrBefore(commits->second.ops, t_us);
}

std::string Checker::LastCommitText(const std::string& group, const TopicPartition& tp,
                                    TimeUs t_us) const {
  const HistoryOp* commit = LastCommitBefore(group, tp, t_us);
  if (commit == nullptr) return "no commit of " + TpText(tp) + " before it";
  return "last commit of " + TpText(tp) + " was offset " + std::to_string(commit->offset.value()) +
         " at " + FormatSeconds(commit->t_us);
}

std::string Checker::RedeliveryCause(const std::string& group, const Send& send,
                                     const std::vector<const HistoryOp*>& deliveries,
                                     TimeUs* cause_t_us) const {
  const HistoryOp& first = *deliveries[0];
  const HistoryOp& again = *deliveries[1];
  const TopicPartition tp = again.tp();
  if (first.topic != again.topic || first.partition != again.partition ||
      first.offset != again.offset) {
    // Two copies in the log, each delivered once.
    std::string cause = "the log holds it twice (" + TpText(first.tp()) + " offset " +
                        std::to_string(first.offset.value()) + ", " + TpText(tp) + " offset " +
                        std::to_string(again.offset.value()) + ")";
    TimeUs retry_us = -1;
    std::string retry = RetryCause(send, tp, &retry_us);
    if (!retry.empty()) {
      *cause_t_us = retry_us;
      cause += ": " + retry;
    }
    return cause;
  }
  std::string cause = "redelivered to " + group + " by " + std::string(again.process) +
                      " (incarnation " + std::to_string(again.incarnation) + ")";
  // The last crash or shutdown of a member between the two deliveries.
  const FaultRecord* stop = nullptr;
  std::set<std::string> members;
  auto known = members_.find(group);
  if (known != members_.end()) members = known->second;
  for (const HistoryOp* d : deliveries) members.emplace(d->process);
  for (const std::string& member : members) {
    auto faults = faults_.find(member);
    if (faults == faults_.end()) continue;
    for (const FaultRecord* f : faults->second) {
      if (f->t_us < first.t_us || f->t_us > again.t_us) continue;
      if (f->ev != ev::kCrash && f->ev != ev::kShutdown) continue;
      if (stop == nullptr || f->t_us > stop->t_us) stop = f;
    }
  }
  if (stop != nullptr) {
    *cause_t_us = stop->t_us;
    cause += " after " + stop->node + (stop->ev == ev::kCrash ? " crashed" : " shut down") +
             " at " + FormatSeconds(stop->t_us);
  } else {
    // Else the rebalance that took the partition from the member (its first event between the
    // deliveries naming the partition: the revoke, when there was one).
    const RebalanceRecord* moved = nullptr;
    for (const RebalanceRecord& r : in_.observer->rebalances()) {
      if (r.t_us > again.t_us) break;
      if (r.t_us < first.t_us || !members.contains(r.client)) continue;
      if (std::find(r.partitions.begin(), r.partitions.end(), tp) == r.partitions.end()) continue;
      moved = &r;
      break;
    }
    if (moved != nullptr) {
      *cause_t_us = moved->t_us;
      cause += " after a rebalance (" + moved->client + " " + moved->ev + " at " +
               FormatSeconds(moved->t_us) + ")";
    }
  }
  cause += "; " + LastCommitText(group, tp, again.t_us);
  // A commit that failed in between (a rebalance fences it: UNKNOWN_MEMBER_ID, ...) is why the
  // position was not saved.
  auto failed = failed_commits_.find({group, tp});
  if (failed != failed_commits_.end()) {
    const HistoryOp* last = LastAtOrBefore(failed->second, again.t_us);
    if (last != nullptr && last->t_us >= first.t_us) {
      cause += "; the commit of offset " + std::to_string(last->offset.value()) + " at " +
               FormatSeconds(last->t_us) + " failed (" + std::string(ErrcName(last->error)) + ")";
    }
  }
  return cause;
}

std::string Checker::UndeliveredCause(const std::string& group, const Copy& copy,
                                      TimeUs* cause_t_us) const {
  auto commits = commits_.find({group, copy.tp});
  const HistoryOp* covering = nullptr;
  if (commits != commits_.end()) {
    // The first commit past the offset: the running maximum is sorted, so search it.
    const std::vector<Offset>& highest = commits->second.highest;
    auto it = std::upper_bound(highest.begin(), highest.end(), copy.offset);
    if (it != highest.end()) covering = commits->second.ops[it - highest.begin()];
  }
  // A member that resumed past the offset before any ok commit covered it: a commit whose
  // answer the client never saw (failed, or lost with the coordinator) had been written.
  auto fetches = fetches_.find({group, copy.tp});
  if (fetches != fetches_.end()) {
    for (const OffsetFetchRecord* f : fetches->second) {
      if (covering != nullptr && f->t_us >= covering->t_us) break;
      if (f->offset > copy.offset) return LostCommitAnswerCause(group, copy, *f, cause_t_us);
    }
  }
  if (covering == nullptr) {
    std::string cause = "never processed by " + group + "; " +
                        LastCommitText(group, copy.tp, in_.end_us > 0 ? in_.end_us : INT64_MAX);
    // A failed commit past the offset may still have been written.
    auto failed = failed_commits_.find({group, copy.tp});
    if (failed != failed_commits_.end()) {
      for (const HistoryOp* op : failed->second) {
        if (op->offset <= copy.offset) continue;
        cause += "; the commit of offset " + std::to_string(op->offset.value()) + " at " +
                 FormatSeconds(op->t_us) + " failed (" + std::string(ErrcName(op->error)) +
                 ") and may have been written";
        break;
      }
    }
    return cause;
  }
  *cause_t_us = covering->t_us;
  std::string cause = "offset " + std::to_string(copy.offset.value()) + " of " + TpText(copy.tp) +
                      " was committed by " + std::string(covering->process) + " at " +
                      FormatSeconds(covering->t_us) + " before it was processed";
  // The crash that followed: the first of a member after the commit.
  const FaultRecord* crash = nullptr;
  auto members = members_.find(group);
  std::set<std::string> names;
  if (members != members_.end()) names = members->second;
  names.emplace(covering->process);
  for (const std::string& member : names) {
    auto faults = faults_.find(member);
    if (faults == faults_.end()) continue;
    for (const FaultRecord* f : faults->second) {
      if (f->t_us < covering->t_us || f->ev != ev::kCrash) continue;
      if (crash == nullptr || f->t_us < crash->t_us) crash = f;
      break;
    }
  }
  if (crash != nullptr) {
    *cause_t_us = crash->t_us;
    cause += "; " + crash->node + " crashed at " + FormatSeconds(crash->t_us);
  }
  return cause;
}

std::string Checker::LostCommitAnswerCause(const std::string& group, const Copy& copy,
                                           const OffsetFetchRecord& fetched,
                                           TimeUs* cause_t_us) const {
  const TimeUs fetched_us = fetched.t_us;
  // The client's own word on that commit: its last failed commit of the fetched position (else
  // of any offset past the record) before the fetch.
  const HistoryOp* attempt = nullptr;
  auto failed = failed_commits_.find({group, copy.tp});
  if (failed != failed_commits_.end()) {
    for (const HistoryOp* op : failed->second) {
      if (op->t_us > fetched_us) break;
      if (op->offset == fetched.offset ||
          (op->offset > copy.offset && (attempt == nullptr || attempt->offset != fetched.offset))) {
        attempt = op;
      }
    }
  }
  // Where it was written: the group's last commit write after its last ok commit of the
  // partition (those were answered) and before the fetch.
  const HistoryOp* last_ok = LastCommitBefore(group, copy.tp, fetched_us);
  const TimeUs after_us = last_ok != nullptr ? last_ok->t_us : -1;
  const CommitWriteRecord* write = nullptr;
  auto writes = commit_writes_.find(group);
  if (writes != commit_writes_.end()) {
    const CommitWriteRecord* last = LastAtOrBefore(writes->second, fetched_us);
    if (last != nullptr && last->t_us > after_us) write = last;
  }
  const std::string position = std::to_string(fetched.offset.value());
  std::string cause = "offset " + std::to_string(copy.offset.value()) + " of " + TpText(copy.tp) +
                      " was committed before it was processed: " +
                      (attempt != nullptr ? std::string(attempt->process) : group) +
                      "'s commit of offset " + position + " reached the coordinator";
  if (write != nullptr) {
    cause +=
        " (written by " + node::Broker(write->broker) + " at " + FormatSeconds(write->t_us) + ")";
  }
  if (attempt != nullptr) {
    cause += " though " + std::string(attempt->process) + " saw it fail (" +
             std::string(ErrcName(attempt->error)) + " at " + FormatSeconds(attempt->t_us) + ")";
  }
  // What made the client drop the records it had polled.
  const TimeUs from_us = write != nullptr ? write->t_us : after_us;
  const FaultRecord* fault = DropFault(
      group, fetched.client, write != nullptr ? write->broker : BrokerId(-1), from_us, fetched_us);
  if (fault != nullptr) {
    cause +=
        "; " + fault->node + " " +
        (fault->ev == ev::kCrash ? std::string("crashed")
         : fault->ev == ev::kShutdown
             ? std::string("shut down")
             : fault->ev + (fault->detail.empty() ? std::string() : " (" + fault->detail + ")")) +
        " at " + FormatSeconds(fault->t_us);
  }
  cause += "; " + fetched.client + " resumed from offset " + position + " at " +
           FormatSeconds(fetched_us);
  *cause_t_us = fault != nullptr     ? fault->t_us
                : write != nullptr   ? write->t_us
                : attempt != nullptr ? attempt->t_us
                                     : fetched_us;
  return cause;
}

const FaultRecord* Checker::DropFault(const std::string& group, const std::string& also,
                                      BrokerId broker, TimeUs from_us, TimeUs to_us) const {
  std::set<std::string> members;
  auto known = members_.find(group);
  if (known != members_.end()) members = known->second;
  members.insert(also);
  // The first fault within the window of a node `on` accepts whose event `of` accepts, or null.
  auto first = [&](auto&& on, auto&& of) {
    const FaultRecord* found = nullptr;
    for (const auto& [node, faults] : faults_) {
      if (!on(node)) continue;
      for (auto it = FirstAtOrAfter(faults, from_us); it != faults.end(); ++it) {
        const FaultRecord* f = *it;
        if (f->t_us > to_us) break;
        if (!of(f->ev)) continue;
        if (found == nullptr || f->t_us < found->t_us) found = f;
        break;
      }
    }
    return found;
  };
  auto stop = [](const std::string& ev) { return ev == ev::kCrash || ev == ev::kShutdown; };
  const std::string coordinator = broker.value() >= 0 ? node::Broker(broker) : "";
  const FaultRecord* f =
      first([&](const std::string& node) { return members.contains(node); }, stop);
  if (f == nullptr && !coordinator.empty()) {
    f = first([&](const std::string& node) { return node == coordinator; }, stop);
  }
  if (f == nullptr) {
    f = first([](const std::string& node) { return node.starts_with("broker-"); }, stop);
  }
  if (f == nullptr) {
    f = first([](const std::string&) { return true; },
              [](const std::string& ev) { return ev == ev::kPartition || ev == ev::kIsolate; });
  }
  return f;
}

void Checker::CheckPresence(CheckResult& result) {
  for (const Send& send : sends_) {
    if (send.acked) ++metrics_["acked"];
    if (send.copies.size() >= 2) {
      ++metrics_["log_duplicates"];
      Anomaly a;
      a.kind = "log_duplicate";
      a.record_id = send.invoke->record_id;
      a.tp = send.copies[1].tp;
      a.offset = send.copies[1].offset;
      a.cause = DuplicateCause(send, a.tp, &a.cause_t_us);
      log_duplicates_.push_back(std::move(a));
    }
    if (!send.copies.empty() && send.completion != nullptr &&
        send.completion->type == OpType::kFail &&
        sends_of_value_.at(send.invoke->value).size() == 1) {
      // The producer was told no attempt could reach a log (Jepsen's :fail), yet the log holds
      // it: the history is wrong, a bug in the producer's outcomes. (A value typed in several
      // sends is left out: its copies are shared out by guess.)
      ++metrics_["failed_in_log"];
      Anomaly a;
      a.kind = "failed_in_log";
      a.record_id = send.invoke->record_id;
      a.tp = send.copies[0].tp;
      a.offset = send.copies[0].offset;
      a.cause_t_us = send.completion->t_us;
      a.cause = "producer " + std::string(send.invoke->process) + " was told " +
                std::string(ErrcName(send.completion->error)) + " at " +
                FormatSeconds(send.completion->t_us) + " (fail: never written)";
      failed_in_log_.push_back(std::move(a));
    }
    // A record sent to a topic the audit did not read is neither lost nor kept.
    if (!send.copies.empty() || !Audited(send.invoke->topic)) continue;
    if (!send.acked) {
      ++metrics_["lost_unacked"];
      continue;
    }
    const TopicPartition tp = send.completion->tp();
    const PartitionAudit* audited = AuditOf(tp);
    if (audited != nullptr && send.completion->offset < audited->log_start_offset) {
      ++result.expired;
      continue;
    }
    Anomaly a;
    a.record_id = send.invoke->record_id;
    a.tp = tp;
    a.offset = send.completion->offset;
    if (std::optional<std::string> held = UnavailableCause(send, tp)) {
      ++metrics_["unavailable_acked"];
      a.kind = "unavailable_acked";
      a.cause = std::move(*held);
      unavailable_acked_.push_back(std::move(a));
      continue;
    }
    ++metrics_["lost_acked"];
    a.kind = "lost_acked";
    a.cause = LostCause(send, &a.cause_t_us, &a.kafka_defect);
    lost_acked_.push_back(std::move(a));
  }
  metrics_["sent"] = static_cast<int64_t>(sends_.size());
}

void Checker::CheckDeliveries() {
  // Never delivered: every (group consuming the topic, record in the final log) pair.
  for (const Send& send : sends_) {
    if (send.copies.empty()) continue;
    auto groups = groups_of_topic_.find(send.invoke->topic);
    if (groups == groups_of_topic_.end()) continue;
    for (const std::string& group : groups->second) {
      if (deliveries_.contains({group, send.invoke->record_id})) continue;
      auto owed = owed_from_.find({group, send.copies[0].tp});
      if (owed != owed_from_.end() && send.copies[0].offset < owed->second) continue;
      ++metrics_["undelivered"];
      Anomaly a;
      a.kind = "undelivered";
      a.record_id = send.invoke->record_id;
      a.tp = send.copies[0].tp;
      a.offset = send.copies[0].offset;
      a.group = group;
      a.cause = UndeliveredCause(group, send.copies[0], &a.cause_t_us);
      undelivered_.push_back(std::move(a));
    }
  }
  // Delivered more than once, to any group that received it (declared a consumer or not).
  std::vector<std::pair<size_t, Anomaly>> ordered;
  for (const auto& [key, ops] : deliveries_) {
    if (ops.size() < 2) continue;
    auto send = send_of_id_.find(key.second);
    if (send == send_of_id_.end()) continue;
    ++metrics_["duplicated"];
    Anomaly a;
    a.kind = "duplicated";
    a.record_id = std::string(key.second);
    a.tp = ops[1]->tp();
    a.offset = ops[1]->offset;
    a.group = std::string(key.first);
    a.cause = RedeliveryCause(std::string(key.first), sends_[send->second], ops, &a.cause_t_us);
    ordered.push_back({send->second, std::move(a)});
  }
  // Record order, then group order within one record.
  std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first, a.second.group) < std::tie(b.first, b.second.group);
  });
  for (auto& entry : ordered) duplicated_.push_back(std::move(entry.second));
}

void Checker::CheckOrder() {
  std::vector<std::pair<size_t, Anomaly>> ordered;
  for (const PartitionAudit& partition : in_.audit->partitions) {
    std::set<size_t> seen;  // only a record's first copy has a place in the order
    // Per producer: the latest-sent record found so far in this log.
    std::map<std::string, std::pair<size_t, Offset>> latest;
    for (const AuditedRecord& record : partition.records) {
      auto found = owner_.find({partition.tp, record.offset});
      if (found == owner_.end() || !seen.insert(found->second).second) continue;
      const size_t index = found->second;
      const Send& send = sends_[index];
      auto [it, first] =
          latest.try_emplace(std::string(send.invoke->process), index, record.offset);
      if (first || it->second.first < index) {
        it->second = {index, record.offset};
        continue;
      }
      ++metrics_["reordered"];
      const Send& later = sends_[it->second.first];
      Anomaly a;
      a.kind = "reordered";
      a.record_id = send.invoke->record_id;
      a.tp = partition.tp;
      a.offset = record.offset;
      std::string cause = "sent before " + std::string(later.invoke->record_id) + " (offset " +
                          std::to_string(it->second.second.value()) + ") but written after it";
      std::string retry = RetryCause(send, partition.tp, &a.cause_t_us);
      a.cause = cause + (retry.empty() ? "" : ": " + retry);
      ordered.push_back({index, std::move(a)});
    }
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& entry : ordered) reordered_.push_back(std::move(entry.second));
}

void Checker::ObserverMetrics() {
  const RunObserver& observer = *in_.observer;
  for (const PartitionAudit& partition : in_.audit->partitions) {
    metrics_["replica_divergence"] += static_cast<int64_t>(partition.divergences.size());
    metrics_["unavailable_ms"] += observer.UnavailableMs(partition.tp, in_.end_us);
  }
  for (const ElectionRecord& e : observer.elections()) {
    if (!audited_partitions_.contains(e.tp) || e.reason == "new_partition") continue;
    ++metrics_["elections"];
    if (e.unclean) ++metrics_["unclean_elections"];
  }
  for (const TruncationRecord& t : observer.truncations()) {
    if (audited_partitions_.contains(t.tp)) metrics_["truncated_records"] += t.records;
  }
}

// Whether power loss `f` took unsynced writes of `tp`: its disk held some in the partition's
// directory (the crash's `unsynced`, VirtualDisk::UnsyncedDirs). A broker whose writes there were
// all synced, or that never held the partition, lost nothing of it; a halt keeps the page cache
// (its `unsynced` is empty).
bool LostUnsyncedOf(const FaultRecord& f, const TopicPartition& tp) {
  const std::string dir_name = "/" + TpText(tp);
  return std::any_of(f.unsynced.begin(), f.unsynced.end(),
                     [&](const std::string& dir) { return dir.ends_with(dir_name); });
}

// Whether committed_records_stable report `v` is of a record another took the place of (the new
// leader holds a different batch at the offset: the invariant checker's "... is now ..."), not of
// a log that ends before it.
bool RecordReplaced(const ViolationRecord& v) {
  return v.message.find(" is now ") != std::string::npos;
}

// "broker-2 lost power at 1.000 s (torn and corrupted unsynced tail)": a power loss as causes
// name it.
std::string PowerLossText(const FaultRecord& crash) {
  return crash.node + " lost power at " + FormatSeconds(crash.t_us) +
         (crash.detail.empty() ? "" : " (" + crash.detail + ")");
}

std::string Checker::PermittedReason(const TopicPartition& tp, Offset offset, TimeUs from_us,
                                     TimeUs to_us) const {
  // A power loss: whatever the broker had not synced is gone, and Kafka acknowledges (and
  // commits) before fsync unless log.flush.interval.messages says otherwise. A broker whose
  // disk held unsynced writes in the partition's directory (the crash's `unsynced`); one whose
  // writes there were all synced, or that never held the partition, loses nothing of it. A halt
  // keeps the page cache.
  const FaultRecord* crash = nullptr;
  for (const auto& [node, faults] : faults_) {
    if (!node.starts_with("broker-")) continue;
    for (auto it = FirstAtOrAfter(faults, from_us); it != faults.end(); ++it) {
      const FaultRecord* f = *it;
      if (f->t_us > to_us) break;
      if (f->ev != ev::kCrash || f->detail.starts_with("halted")) continue;
      if (!LostUnsyncedOf(*f, tp)) continue;
      if (crash == nullptr || f->t_us < crash->t_us) crash = f;
      break;
    }
  }
  if (crash != nullptr) {
    return PowerLossText(*crash) +
           ": Kafka commits a record before any replica syncs it to disk "
           "(log.flush.interval.messages), so replicas that crash together lose it";
  }
  // A follower cuts its log to its own high watermark (0.10's rule; from 0.11 when the leader
  // answers UNDEFINED) and is then elected.
  auto truncations = truncations_.find(tp);
  if (truncations != truncations_.end()) {
    for (const TruncationRecord* t : truncations->second) {
      if (t->t_us < from_us || t->t_us > to_us) continue;
      const bool undefined = t->reason == "undefined_epoch";
      if ((t->reason != "high_watermark" && !undefined) || !t->Removed(offset)) continue;
      const std::string cut = node::Broker(t->broker) +
                              " truncated to its high watermark (offset " +
                              std::to_string(t->to.value()) + ") at " + FormatSeconds(t->t_us);
      if (!undefined) {
        return cut +
               ": Kafka before KIP-101 (0.11) truncates a follower to its own high watermark, "
               "which can be below what the leader committed";
      }
      // KIP-101's fallback: a leader that recorded no epoch at or after the one asked answers
      // UNDEFINED, and the follower cuts to its own high watermark.
      return cut +
             " after its leader answered its OffsetsForLeaderEpoch request UNDEFINED: the leader "
             "had recorded no epoch at or after the follower's (before Kafka 2.1 a new leader "
             "records its epoch only with its first append, KAFKA-7415), and a follower told "
             "UNDEFINED cuts to its own high watermark, which can be below what the leader "
             "committed";
    }
  }
  return "";
}

std::string Checker::ForkReason(const std::vector<PermittedLoss>& earlier,
                                const ViolationRecord& v) const {
  // Only a record put in place of another: the new leader holds something else at the offset.
  if (!RecordReplaced(v)) return "";
  for (const PermittedLoss& fork : earlier) {
    if (fork.tp != v.tp || fork.offset > v.offset || fork.t_us > v.committed_us) continue;
    return node::Broker(v.broker) + " still held a record from before " + TpText(v.tp) +
           "'s log forked at offset " + std::to_string(fork.offset.value()) + " (" +
           FormatSeconds(fork.t_us) + ": " + fork.reason +
           "); the records committed after the fork took the same offsets, and Kafka's follower "
           "does not always find the fork: before KIP-101 (0.11) it truncates only to its own "
           "high watermark, and before 2.1 (KAFKA-7395) a follower told the same leader at a new "
           "epoch keeps its log";
  }
  return "";
}

std::string Checker::HighWatermarkFork(const ViolationRecord& v) const {
  // Only a record put in place of another: the new leader holds something else at the offset.
  if (!RecordReplaced(v)) return "";
  const TruncationRecord* fork =
      LastTruncationRemoving(v, v.committed_us, [&v](const TruncationRecord& t) {
        return t.broker != v.broker && t.reason == "high_watermark";
      });
  if (fork == nullptr) return "";
  // The new leader cut the offset itself since: what it holds there came later.
  if (CutItselfSince(v, fork->t_us)) return "";
  return node::Broker(fork->broker) + " cut offset " + std::to_string(v.offset.value()) +
         " away at " + FormatSeconds(fork->t_us) + " (to offset " +
         std::to_string(fork->to.value()) + ", high_watermark) while " + node::Broker(v.broker) +
         " kept its record there: " + TpText(v.tp) +
         "'s log forked, the record committed since took the offset on the other side, and "
         "before KIP-101 (0.11) nothing makes the replica that kept the old one truncate it "
         "(a follower cuts only to its own high watermark, and a leader's answer carries no "
         "epoch), so it was elected with it";
}

std::string Checker::LeaderPowerLossFork(const ViolationRecord& v) const {
  // Only a record put in place of another: the new leader holds something else at the offset.
  if (!RecordReplaced(v)) return "";
  for (const auto& [node, faults] : faults_) {
    if (!node.starts_with("broker-")) continue;
    for (const FaultRecord* f : faults) {
      if (f->t_us > v.committed_us) break;
      if (f->ev != ev::kCrash || f->detail.starts_with("halted")) continue;
      if (!LostUnsyncedOf(*f, v.tp)) continue;
      const ElectionRecord* leading = ElectionBefore(v.tp, f->t_us);
      if (leading == nullptr || node::Broker(leading->leader) != node) continue;
      return PowerLossText(*f) + " while it led " + TpText(v.tp) +
             ", before the record was committed, and wrote new records where a follower still "
             "held the old ones: the log forked there, and before KIP-101 (0.11) a follower "
             "truncates by offsets only (to its high watermark, or to a shorter leader's end), "
             "so it keeps what it held and can be elected with it";
    }
  }
  return "";
}

const FaultRecord* Checker::PowerLossBefore(BrokerId broker, TimeUs t_us,
                                            const TopicPartition& tp) const {
  auto faults = faults_.find(node::Broker(broker));
  if (faults == faults_.end()) return nullptr;
  const FaultRecord* last = nullptr;
  for (const FaultRecord* f : faults->second) {
    if (f->t_us >= t_us) break;
    if (f->ev == ev::kCrash && !f->detail.starts_with("halted") && LostUnsyncedOf(*f, tp)) {
      last = f;
    }
  }
  return last;
}

std::string Checker::CorruptedOffsetKept(const ViolationRecord& v) const {
  if (v.held_from.value() < 0) return "";
  auto faults = faults_.find(node::Broker(v.broker));
  if (faults == faults_.end()) return "";
  const FaultRecord* corrupted = nullptr;
  for (const FaultRecord* f : faults->second) {
    if (f->t_us >= v.t_us) break;
    if (f->ev == ev::kCrash && f->detail.find("corrupted") != std::string::npos &&
        LostUnsyncedOf(*f, v.tp)) {
      corrupted = f;
    }
  }
  if (corrupted == nullptr) return "";
  return PowerLossText(*corrupted) + " and kept the batch committed at offset " +
         std::to_string(v.held_from.value()) + " under offset " + std::to_string(v.offset.value()) +
         ": a byte of its base offset was corrupted, which no CRC covers (record batches and "
         "message sets alike), and recovery keeps a batch whose CRC holds (LogSegment.recover); "
         "a follower truncating by leader epoch compares epochs, not offsets, so it kept the "
         "batch there, and elected it holds it in the committed record's place";
}

std::string Checker::StaleIsrPowerLoss(const ViolationRecord& v) const {
  const FaultRecord* power_loss = PowerLossBefore(v.broker, v.t_us, v.tp);
  if (power_loss == nullptr) return "";
  for (const IsrExpandRecord& e : in_.observer->isr_expansions()) {
    if (e.tp != v.tp || e.t_us <= power_loss->t_us || e.t_us > v.t_us) continue;
    if (std::find(e.added.begin(), e.added.end(), v.broker.value()) != e.added.end()) return "";
  }
  return PowerLossText(*power_loss) +
         " and was elected on the ISR it was in before, never added back since: the ISR lives "
         "in ZooKeeper and only a leader shrinks it, so a replica that lost its unsynced records "
         "in a power loss stays eligible and, elected, lacks what was committed (only KRaft's "
         "controller learns of an unclean shutdown, KIP-966)";
}

std::vector<const RoleRecord*> Checker::LeadershipsTakenAt(const TopicPartition& tp,
                                                           TimeUs t_us) const {
  std::vector<const RoleRecord*> taken;
  auto roles = roles_.find(tp);
  if (roles == roles_.end()) return taken;
  for (const RoleRecord* r : roles->second) {
    if (r->t_us > t_us) break;
    if (r->t_us == t_us && r->leader) taken.push_back(r);
  }
  return taken;
}

std::string Checker::StaleHighWatermarkAfterPowerLoss(const ViolationRecord& v) const {
  for (const RoleRecord* r : LeadershipsTakenAt(v.tp, v.committed_us)) {
    const FaultRecord* power_loss = PowerLossBefore(r->broker, r->t_us, v.tp);
    if (power_loss == nullptr) continue;
    return PowerLossText(*power_loss) +
           " and its high-watermark checkpoint (replication-offset-checkpoint, written apart "
           "from the log) kept an offset above what its log kept; when it led " +
           TpText(v.tp) + " again at " + FormatSeconds(r->t_us) +
           " that high watermark, capped only at its log end, covered records written since "
           "that no follower held, which then counted as committed";
  }
  return "";
}

std::string Checker::TruncatedBeforeTheCommit(const std::vector<PermittedLoss>& earlier,
                                              const ViolationRecord& v) const {
  // Only a log that ends at or below the offset: nothing was written there again since.
  if (v.message.find(" its log ends at ") == std::string::npos) return "";
  const TruncationRecord* last = LastTruncationRemoving(
      v, v.t_us, [&v](const TruncationRecord& t) { return t.broker == v.broker; });
  if (last == nullptr || last->t_us > v.committed_us) return "";
  const std::string when = node::Broker(v.broker) + " truncated offset " +
                           std::to_string(v.offset.value()) + " away at " +
                           FormatSeconds(last->t_us) + " (to offset " +
                           std::to_string(last->to.value()) + ", " + last->reason + ")";
  if (last->reason == "high_watermark") {
    return when +
           ", before the record counted as committed on another replica's copy, and was elected "
           "without it: Kafka before KIP-101 (0.11) truncates a follower to its own high "
           "watermark, which can be below what the leader commits";
  }
  if (last->reason != "offset_out_of_range") return "";
  for (const PermittedLoss& loss : earlier) {
    if (loss.tp != v.tp || loss.offset > v.offset || loss.t_us > last->t_us) continue;
    return when + ", following a leader whose log had become shorter (" + FormatSeconds(loss.t_us) +
           ": " + loss.reason +
           "); another replica kept its copy, which counted as committed again when it led, and "
           "the truncated replica, still in the ISR, was elected without it: before KIP-101 (0.11) "
           "a follower truncates by offsets only";
  }
  return "";
}

const TruncationRecord* Checker::LastTruncationRemoving(
    const ViolationRecord& v, TimeUs until_us,
    const std::function<bool(const TruncationRecord&)>& which) const {
  auto truncations = truncations_.find(v.tp);
  if (truncations == truncations_.end()) return nullptr;
  const TruncationRecord* last = nullptr;
  for (const TruncationRecord* t : truncations->second) {
    if (t->t_us > until_us) break;
    if (t->Removed(v.offset) && which(*t)) last = t;
  }
  return last;
}

bool Checker::CutItselfSince(const ViolationRecord& v, TimeUs since_us) const {
  const TruncationRecord* own = LastTruncationRemoving(
      v, v.t_us, [&v](const TruncationRecord& t) { return t.broker == v.broker; });
  return own != nullptr && own->t_us >= since_us;
}

std::string Checker::StaleFollowerEndAtLeadingAgain(const ViolationRecord& v) const {
  for (const RoleRecord* r : LeadershipsTakenAt(v.tp, v.committed_us)) {
    // Not a new leader: it led just before, in the same process.
    if (!LedAt(r->broker, v.tp, r->t_us - 1)) continue;
    const RoleRecord* earlier = nullptr;
    for (const RoleRecord* e : roles_.at(v.tp)) {
      if (e->t_us >= r->t_us) break;
      if (e->broker == r->broker) earlier = e;
    }
    if (earlier == nullptr) continue;
    const TruncationRecord* cut =
        LastTruncationRemoving(v, v.committed_us, [&](const TruncationRecord& t) {
          return t.broker != r->broker && t.t_us >= earlier->t_us;
        });
    if (cut == nullptr) continue;
    return node::Broker(r->broker) + ", which led " + TpText(v.tp) + " since " +
           FormatSeconds(earlier->t_us) + ", led it again at " + FormatSeconds(r->t_us) +
           " without having followed in between, and raised its high watermark on the log ends "
           "its followers had reached under its earlier leadership (Kafka's Partition.makeLeader "
           "resets them only for a new leader, 0.10.0.1 to 2.5); " +
           node::Broker(cut->broker) + " had truncated offset " + std::to_string(v.offset.value()) +
           " away at " + FormatSeconds(cut->t_us) + " (" + cut->reason +
           "), so the record counted as committed without being on it";
  }
  return "";
}

std::string Checker::EpochlessFork(const ViolationRecord& v) const {
  // Only a record put in place of another, by a batch with no leader epoch.
  if (!v.epochless_fork || !RecordReplaced(v)) return "";
  // The new leader cut the offset itself since the commit: what it holds there came later.
  if (CutItselfSince(v, v.committed_us)) return "";
  return node::Broker(v.broker) + " held at offset " + std::to_string(v.offset.value()) +
         " a message set (a format before 0.11, without a leader epoch) other than the committed "
         "batch, and did not truncate the offset after the commit: with no epochs in the log, "
         "Kafka's leader-epoch truncation cannot find where two replicas' logs forked (KIP-101 "
         "needs message format 0.11: with both epoch caches empty, 0.11 to 1.1's leader answers a "
         "follower's request for epoch -1 with its own log end and the follower cuts nothing; "
         "from 2.0 the follower cuts to its high watermark), so a replica that kept a record from "
         "before the fork stays in the ISR and can be elected with it";
}

std::string Checker::UnheldEpochFork(const ViolationRecord& v) const {
  if (in_.release >= KafkaRelease::k2_0) return "";
  if (v.held_epoch == kUndefinedEpoch || !RecordReplaced(v)) return "";
  // The new leader cut the offset itself since the commit: what it holds there came later.
  if (CutItselfSince(v, v.committed_us)) return "";
  return node::Broker(v.broker) + " held at offset " + std::to_string(v.offset.value()) +
         " its own batch of leader epoch " + std::to_string(v.held_epoch.value()) +
         " where the committed batch is of epoch " + std::to_string(v.committed_epoch.value()) +
         ", and did not truncate the offset after the commit: the replicas holding the "
         "committed batch never had epoch " +
         std::to_string(v.held_epoch.value()) +
         ", and before KIP-279 (2.0) a follower asks its leader once for the end of its latest "
         "epoch, which a leader that never had it answers with the start of its next epoch, "
         "naming no epoch; at or past the follower's log end, the follower cuts nothing and "
         "keeps the fork, counts in the ISR and can be elected with it (" +
         std::string(kUnheldEpochDefect) + ")";
}

std::string Checker::SameLeaderAfterMissedEpochs(const ViolationRecord& v) const {
  if (in_.release >= KafkaRelease::k2_1 || !RecordReplaced(v)) return "";
  // The new leader's last role before its election: a follower, from before the commit.
  auto roles = roles_.find(v.tp);
  if (roles == roles_.end()) return "";
  const RoleRecord* last = nullptr;
  for (const RoleRecord* r : roles->second) {
    if (r->t_us >= v.t_us) break;
    if (r->broker == v.broker) last = r;
  }
  if (last == nullptr || last->leader || last->t_us > v.committed_us) return "";
  // The record was committed under another leader at a later epoch, and that leader's
  // successor was the one the follower followed.
  const ElectionRecord* committing = ElectionBefore(v.tp, v.committed_us);
  if (committing == nullptr || committing->leader == last->followed ||
      committing->epoch <= last->epoch) {
    return "";
  }
  const ElectionRecord* again = nullptr;
  for (const ElectionRecord* e : elections_.at(v.tp)) {
    if (e->t_us <= v.committed_us) continue;
    if (e->t_us >= v.t_us) break;
    if (e->leader == last->followed) again = e;
  }
  if (again == nullptr) return "";
  // It did not cut the offset since it began following.
  if (CutItselfSince(v, last->t_us)) return "";
  return node::Broker(v.broker) + " followed " + node::Broker(last->followed) + " at epoch " +
         std::to_string(last->epoch) + " from " + FormatSeconds(last->t_us) +
         " and missed the leaderships after it: the record at offset " +
         std::to_string(v.offset.value()) + " was committed under " +
         node::Broker(committing->leader) + " (epoch " + std::to_string(committing->epoch) +
         "); told " + node::Broker(again->leader) + " again at epoch " +
         std::to_string(again->epoch) + " (" + FormatSeconds(again->t_us) +
         "), it kept its log, as before Kafka 2.1 a follower told the same leader does not "
         "truncate (Partition.makeFollower returns false, KAFKA-7164), and so it kept its record "
         "from before the fork, rejoined the ISR and was elected with it";
}

std::string Checker::IsrJoinWithoutTheRecord(const ViolationRecord& v) const {
  if (in_.release >= KafkaRelease::k2_1) return "";
  // The new leader's last join of the ISR before its election.
  const IsrExpandRecord* join = nullptr;
  int64_t log_end = -1;
  for (const IsrExpandRecord& e : in_.observer->isr_expansions()) {
    if (e.t_us > v.t_us) break;
    if (e.tp != v.tp) continue;
    for (size_t i = 0; i < e.added.size(); ++i) {
      if (e.added[i] != v.broker.value()) continue;
      join = &e;
      log_end = i < e.log_ends.size() ? e.log_ends[i] : -1;
    }
  }
  if (join == nullptr || join->t_us < v.committed_us || log_end < 0 || log_end > v.offset.value()) {
    return "";
  }
  // It did not cut the offset away since (it may have had the record by then: the cut is the
  // cause). A power loss since is named by the rules asked first (StaleIsrPowerLoss).
  if (CutItselfSince(v, join->t_us)) return "";
  return node::Broker(v.broker) + " joined the ISR at " + FormatSeconds(join->t_us) +
         " fetching from offset " + std::to_string(log_end) + ", without the record at offset " +
         std::to_string(v.offset.value()) + " committed at " + FormatSeconds(v.committed_us) +
         ": before Kafka 2.1 a leader takes a follower into the ISR once its log end reaches the "
         "leader's high watermark, which can be below what was committed (a new leader's lags "
         "its predecessor's; a leader back from a restart reads its checkpoint), and a clean "
         "election may then choose it (KAFKA-7128, fixed in 2.0.1 and 2.1: the follower must also "
         "reach the offset where the leader's epoch began)";
}

std::string Checker::EarlierPowerLossReason(const ViolationRecord& v) const {
  std::string reason = CorruptedOffsetKept(v);
  if (reason.empty()) reason = LeaderPowerLossFork(v);
  if (reason.empty()) reason = StaleIsrPowerLoss(v);
  if (reason.empty()) reason = StaleHighWatermarkAfterPowerLoss(v);
  return reason;
}

std::string Checker::PermittedLossReason(const ViolationRecord& v,
                                         const std::vector<PermittedLoss>* earlier,
                                         std::string* defect) const {
  const bool split = earlier != nullptr;
  std::string reason = PermittedReason(v.tp, v.offset, v.committed_us, v.t_us);
  if (reason.empty() && split) reason = ForkReason(*earlier, v);
  if (reason.empty() && split) reason = HighWatermarkFork(v);
  if (reason.empty()) reason = EarlierPowerLossReason(v);
  if (reason.empty() && split) reason = TruncatedBeforeTheCommit(*earlier, v);
  if (reason.empty()) {
    reason = StaleFollowerEndAtLeadingAgain(v);
    if (!reason.empty()) *defect = std::string(kLeaderAgainOnOldLogEndsDefect);
  }
  if (reason.empty()) reason = EpochlessFork(v);
  if (reason.empty()) reason = UnheldEpochFork(v);
  if (reason.empty()) reason = SameLeaderAfterMissedEpochs(v);
  if (reason.empty()) reason = IsrJoinWithoutTheRecord(v);
  return reason;
}

void Checker::SplitViolations(CheckResult& result) {
  for (const ViolationRecord& v : in_.observer->invariant_violations()) {
    if (v.rule == "committed_records_stable" && v.committed_us >= 0) {
      std::string defect;
      std::string reason = PermittedLossReason(v, &result.permitted_losses, &defect);
      if (!reason.empty()) {
        PermittedLoss loss;
        loss.t_us = v.t_us;
        loss.tp = v.tp;
        loss.offset = v.offset;
        loss.promise = "a committed record of " + TpText(v.tp) + " (offset " +
                       std::to_string(v.offset.value()) + ", committed at " +
                       FormatSeconds(v.committed_us) + ") stays in its log";
        loss.reason = std::move(reason);
        loss.detail = v.message;
        result.permitted_losses.push_back(std::move(loss));
        continue;
      }
    }
    result.invariant_violations.push_back(v.Text());
  }
  metrics_["permitted_losses"] = static_cast<int64_t>(result.permitted_losses.size());
  metrics_["invariant_violations"] = static_cast<int64_t>(result.invariant_violations.size());
}

CheckResult Checker::Run() {
  CheckResult result;
  // The hash maps sized once for what they will hold (a run of a million records would rehash
  // each of them some twenty times as it grows).
  size_t sends = 0;
  size_t deliveries = 0;
  for (const HistoryOp& op : in_.history->ops()) {
    sends += op.f == OpFunction::kSend && op.type == OpType::kInvoke;
    deliveries += op.f == OpFunction::kDeliver;
  }
  size_t copies = 0;
  for (const PartitionAudit& partition : in_.audit->partitions) copies += partition.records.size();
  send_of_id_.reserve(sends);
  sends_of_value_.reserve(sends);
  owner_.reserve(copies);
  deliveries_.reserve(deliveries);
  IndexSends();
  IndexLogs(result);
  IndexEvents();
  IndexConsumers();
  CheckPresence(result);
  CheckDeliveries();
  CheckOrder();
  ObserverMetrics();
  SplitViolations(result);
  for (std::string_view name : MetricNames()) {
    auto it = metrics_.find(name);
    result.metrics.push_back(Metric{std::string(name), it == metrics_.end() ? 0 : it->second});
  }
  for (std::vector<Anomaly>* kind : {&lost_acked_, &unavailable_acked_, &failed_in_log_,
                                     &log_duplicates_, &duplicated_, &undelivered_, &reordered_}) {
    for (Anomaly& a : *kind) result.anomalies.push_back(std::move(a));
  }
  return result;
}

}  // namespace

std::string PermittedLoss::Text() const {
  return promise + " did not hold: " + reason + " (" + detail + ")";
}

int64_t CheckResult::Value(std::string_view metric) const {
  for (const Metric& m : metrics) {
    if (m.name == metric) return m.value;
  }
  KSIM_CHECK_MSG(false, "not a metric name");
  return 0;
}

CheckResult CheckHistory(const CheckInput& input) {
  KSIM_CHECK(input.history != nullptr && input.audit != nullptr && input.observer != nullptr);
  return Checker(input).Run();
}

nlohmann::ordered_json AnomaliesJson(const std::vector<Anomaly>& anomalies) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Anomaly& anomaly : anomalies) {
    nlohmann::ordered_json item = nlohmann::ordered_json::object();
    item[field::kKind] = anomaly.kind;
    item[field::kRecordId] = anomaly.record_id;
    item[field::kTopic] = anomaly.tp.topic;
    item[field::kPartition] = anomaly.tp.partition.value();
    item[field::kOffset] = anomaly.offset.value();
    if (!anomaly.group.empty()) item[field::kGroup] = anomaly.group;
    item[field::kCause] = anomaly.cause;
    item[field::kCauseTUs] = anomaly.cause_t_us;
    if (!anomaly.kafka_defect.empty()) item[field::kKafkaDefect] = anomaly.kafka_defect;
    list.push_back(std::move(item));
  }
  return list;
}

}  // namespace ksim::sim
