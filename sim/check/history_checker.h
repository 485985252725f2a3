// The history checker: what happened to every record a producer tried to send, from the
// clients' History (sim/check/history.h), the FinalAudit of the brokers' logs (sim/check/audit.h)
// and what the RunObserver saw (sim/check/run_observer.h); Jepsen's queue and Kafka checkers are
// the model. docs/scenarios.md, "Metrics" and "Causes", is the user's reference.
//
// Each record (a send invoke's record id) is classified:
// - acked: its send completed `ok` with an offset >= 0 (the broker acknowledged it; an acks=0
//   `ok` has offset -1 and counts as not acked); otherwise unacked (fail, info, acks=0, or no
//   completion at all);
// - an acked record absent from the final log is unavailable, not lost, when the partition has
//   no live leader at the audit and a live replica still holds it, or when the leader holds it
//   above its HW (FinalAudit's `held`); a copy only on a replica other than a live leader is
//   lost (that replica follows the leader: it truncates, or diverges, but never serves it);
// - present in the final log 0, 1 or n times, matched by value: a generated record's value is
//   its id; a value typed in several sends is shared out among them (a copy goes to the send
//   acked at its partition and offset, else to the earliest send of that value with no copy
//   yet, else to the first one: a duplicate). A final-log value no send carried is counted in
//   `foreign_records` and otherwise ignored. A record acked at an offset now below its
//   partition's log start offset and absent is `expired` (deleted by retention), not lost. A
//   record sent to a topic the audit did not read counts in sent/acked only;
// - a delivery is the record whose final-log copy sits at the delivered partition and offset
//   with the delivered value, else the history's id for the value (the `deliver` op's record id);
// - delivered to each consumer group 0, 1 or n times (a consumer without a group counts as a
//   group of its own, named by its client id); only groups that consume the record's topic;
// - in order or not: within one partition's final log, a record whose first copy comes after
//   the first copy of a record its producer (client id) sent later is reordered.
//
// Metrics (MetricNames(), in that order):
//   sent                 send invokes;
//   acked                acked records;
//   lost_acked           acked, absent from the final log and from every live replica, not
//                        expired;
//   unavailable_acked    acked, absent from the final log, held by a live replica;
//   lost_unacked         unacked, absent from the final log;
//   failed_in_log        sends that failed for certain (`fail`: no attempt can have reached a
//                        log) found in the final log: the history contradicts the logs, always a
//                        bug in ksim (a value typed in several sends is not counted);
//   log_duplicates       records present at two or more offsets;
//   duplicated           (group, record) pairs delivered more than once;
//   undelivered          (group, record) pairs present in the final log, never delivered, at
//                        or after the offset where the group first started reading the
//                        partition (its first offset_reset without a position: a group that
//                        starts at `latest` owes nothing written before it joined);
//   reordered            records reordered in their partition's final log;
//   replica_divergence   replica divergences found by the audit;
//   unavailable_ms       the sum over the audited partitions of RunObserver::UnavailableMs;
//   elections            leader elections of the audited partitions, except the first election
//                        of a new partition (reason new_partition): failovers and restarts;
//   unclean_elections    those of them that were unclean;
//   truncated_records    records removed by truncations of the audited partitions' replicas;
//   permitted_losses     committed records lost in a way Kafka allows: the invariant checker's
//                        committed_records_stable reports explained by a broker's power loss
//                        (unsynced writes lost: Kafka acknowledges before fsync) or a
//                        high-watermark truncation (0.10 before KIP-101) between the commit and
//                        the loss, or the other rules of PermittedLoss's reasons (among them,
//                        before 2.1, a follower taken into the ISR without the records:
//                        KAFKA-7128); each is a PermittedLoss naming the promise and the reason;
//   invariant_violations the invariant checker's other reports (sim/check/invariant_checker.h):
//                        rules of the engine that must never break, whatever the faults.
//
// Causes: each lost_acked, failed_in_log, log_duplicates, duplicated, undelivered and reordered
// record becomes one Anomaly whose `cause` names the fault or protocol event responsible, with
// its time (FormatSeconds; docs/scenarios.md, "Causes", has the exact wording of each):
// - lost_acked: a replica that truncated the acked offset away after the send and was then
//   elected leader (the first such election: KIP-101's follower truncation; "truncated on
//   broker-3 at 4.162 s (to offset 398, high_watermark) before broker-3 was elected leader
//   (epoch 2) at 6.513 s"); else the first truncation after the send that removed the acked
//   offset on the broker that led the partition when it was acked (else on another replica),
//   and the election that preceded it ("truncated on broker-1 at 15.200 s (to offset 40,
//   high_watermark) after broker-2 was elected leader (epoch 3, unclean) at 14.900 s"); without
//   a truncation, that leader's crash or disk fault after the record could have been written (the
//   send, and that broker's last restart before the ack) ("broker-1, its leader at the ack,
//   crashed at 5.000 s (torn unsynced tail) and no replica kept the record"), "t-0 has no live
//   leader at the end", or "unknown". (The logs at each election are not known: a replica that
//   truncated a record and fetched it again before its election would be named wrongly.)
// - unavailable_acked: where it is and why the leader did not serve it ("t-0 has no live leader
//   at the audit; broker-2 holds it at offset 17", "above t-0's high watermark at the audit
//   (broker-1: HW 40, the record at offset 57)", "not on t-0's leader broker-1 at the audit;
//   broker-3 holds it at offset 17").
// - log_duplicate: the producer's first retry of the partition between the invoke and the
//   completion ("producer p1 retried t-0 (attempt 2) after REQUEST_TIMED_OUT at 3.100 s"), or
//   "unknown";
// - duplicated: two copies in the log ("the log holds it twice (t-0 offset 4, t-0 offset 7):
//   <retry>"), else the redelivering consumer's incarnation, the last crash or shutdown of a
//   group member between the two deliveries (else the first rebalance event of a member naming
//   the partition in between: the revoke), the group's last successful commit of the partition
//   before the redelivery and the last failed one in between ("redelivered to g1 by c1
//   (incarnation 2) after c1 crashed at 12.000 s; last commit of t-0 was offset 10 at 9.500 s";
//   "...; no commit of t-0 before it; the commit of offset 298 at 34.650 s failed
//   (UNKNOWN_MEMBER_ID)");
// - undelivered: a member that resumed past the record (offset_fetched) before any ok commit
//   covered it means a commit whose answer the client never saw had been written: that commit
//   (the client's last failed commit of that position, or else past the record, before the
//   fetch), where it was written (the group's last offsets_committed after its last ok commit of
//   the partition), the fault that made the client drop what it had polled (the first crash or
//   shutdown after the write of a member, else of that coordinator, else of any broker, else a
//   network partition or isolation) and the fetch ("offset 194 of t-0 was committed before it
//   was processed: c1's commit of offset 197 reached the coordinator (written by broker-1 at
//   4.136 s) though c1 saw it fail (UNKNOWN_MEMBER_ID at 34.152 s); broker-1 crashed at 4.138 s;
//   c1 resumed from offset 197 at 34.176 s"); else the group's first ok commit past the
//   record's offset (made before it was processed: commit before processing) and the first
//   crash of a member after it ("offset 12 of t-0 was committed by c1 at 3.000 s before it was
//   processed; c1 crashed at 3.500 s"); else "never processed by g1; last commit of t-0 was
//   offset 7 at 2.000 s", with the first failed commit past the record if any ("; the commit of
//   offset 9 at 2.500 s failed (REQUEST_TIMED_OUT) and may have been written");
// - failed_in_log: the failure the producer was told ("producer p1 was told
//   NOT_LEADER_FOR_PARTITION at 5.100 s (fail: never written)");
// - reordered: the later-sent record written first and the producer's retry of the earlier one
//   ("sent before p1-4 (offset 3) but written after it: producer p1 retried t-0 (attempt 1)
//   after NOT_LEADER_FOR_PARTITION at 1.500 s").
// `cause_t_us` is the time of the decisive event named (the truncation, the crash, the retry,
// the rebalance, the covering commit when no crash followed it; for a lost commit answer the
// fault, else the write, else the failed commit, else the fetch), -1 when none is known. All
// times are trace times (the trace is the truth), not scenario times.
//
// Cost: maps keyed by record id, partition and client; searches by time are binary. Linear in
// the history, the final logs and the events, plus the anomalies' lookups.
// Pure: no I/O, no clock. Single-threaded.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/base/topic_partition.h"
#include "core/base/types.h"
#include "core/config/kafka_version.h"
#include "sim/check/audit.h"
#include "sim/check/history.h"
#include "sim/check/run_observer.h"

namespace ksim::sim {

struct Metric {
  std::string name;
  int64_t value = 0;
};

struct Anomaly {
  std::string kind;  // lost_acked, unavailable_acked, log_duplicate, duplicated, undelivered,
                     // reordered
  std::string record_id;
  TopicPartition tp;       // the partition the record was acked or found in
  Offset offset{-1};       // its acked or found offset (-1 when none)
  std::string group;       // duplicated, undelivered
  std::string cause;       // one line, as documented above
  TimeUs cause_t_us = -1;  // when the cause happened (-1: unknown)
  // A lost_acked record's loss that is a defect of Kafka's no setting avoids, at every release
  // ksim follows (a permitted loss the cause names): its short name; "" otherwise.
  std::string kafka_defect;
};

// The kafka_defect of a record lost to a broker leading again on its followers' old log ends
// (Partition.makeLeader resets them only for a new leader: 0.10.0.1 to 2.5).
inline constexpr std::string_view kLeaderAgainOnOldLogEndsDefect =
    "a broker leading again on its followers' old log ends (Partition.makeLeader, 0.10.0.1 to 2.5)";

// Named in a permitted loss (a committed record replaced) and in a drain that did not complete,
// when a follower asked its leader for the end of an epoch the leader never had. Before 2.0 the
// answer names no epoch: the leader answers with the start of its next epoch after the one asked
// (0.11.0.0 to 1.1.0's endOffsetFor), which can lie at or past the follower's log end, so the
// follower truncates nothing and keeps the records of its epoch where the leader holds others. It
// can then count in the ISR with them and be elected (a committed record replaced), or its fetch
// starts inside a batch of the leader's (UnexpectedAppendOffsetException ends the fetcher
// thread). 2.0 (KIP-279) answers the leader's largest epoch not after the one asked, and the
// follower cuts to its own end of that epoch first.
inline constexpr std::string_view kUnheldEpochDefect =
    "KAFKA-6361, fixed in Kafka 2.0 by KIP-279: before it a leader's OffsetsForLeaderEpoch answer "
    "names no epoch, and a follower cannot tell that the leader never had its epoch";

// Committed records lost in a way Kafka allows (the permitted_losses metric): which promise did
// not hold and why Kafka does not keep it in that case.
struct PermittedLoss {
  TimeUs t_us = 0;  // when the invariant checker saw the loss
  TopicPartition tp;
  Offset offset{-1};         // the first committed offset lost
  std::string promise;       // "a committed record of t-0 (offset 40) stays in its log"
  std::string reason;        // the event that lost it and why Kafka allows that, with its time
  std::string detail;        // the invariant checker's message
  std::string Text() const;  // "<promise> did not hold: <reason> (<detail>)"
};

struct CheckResult {
  std::vector<Metric> metrics;     // every metric, in MetricNames() order
  std::vector<Anomaly> anomalies;  // in kind order as listed above, then record order
  // The invariant checker's reports, split: engine rules broken (always a bug in ksim), as
  // "<rule> <topic>-<partition>: <message>", and Kafka's permitted losses.
  std::vector<std::string> invariant_violations;
  std::vector<PermittedLoss> permitted_losses;
  int64_t expired = 0;          // acked records deleted by retention (not lost)
  int64_t foreign_records = 0;  // final-log records whose value no send of the run carried
  int64_t Value(std::string_view metric) const;  // REQUIRES: a metric name
};

struct CheckInput {
  const History* history = nullptr;
  const FinalAudit* audit = nullptr;
  const RunObserver* observer = nullptr;
  TimeUs end_us = 0;  // the end of the run (for unavailable_ms)
  // The brokers' release (the scenario's kafka_version): some losses Kafka permits only before
  // the release that fixed them.
  KafkaRelease release = kSeedKafkaRelease;
  // Consumer clients: id -> (group, topics), to know which groups consume which topics.
  struct Consumer {
    std::string id;
    std::string group;
    std::vector<std::string> topics;
  };
  std::vector<Consumer> consumers;
};

// REQUIRES: history, audit and observer are set.
CheckResult CheckHistory(const CheckInput& input);

// The anomalies as JSON, as the report and the verdict line write them: [{"kind", "record_id",
// "topic", "partition", "offset", "group" (when set: duplicated, undelivered), "cause",
// "cause_t_us"}].
nlohmann::ordered_json AnomaliesJson(const std::vector<Anomaly>& anomalies);

}  // namespace ksim::sim
