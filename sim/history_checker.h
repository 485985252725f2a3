// The history checker: what happened to every record a producer tried to send, from the
// clients' History (sim/history.h), the FinalAudit of the brokers' logs (sim/audit.h) and what
// the RunObserver saw (sim/run_observer.h); Jepsen's queue and Kafka checkers are the model.
// docs/scenarios.md, "Metrics" and "Causes", is the user's reference.
//
// Each record (a send invoke's record id) is classified:
// - acked: its send completed `ok` with an offset >= 0 (the broker acknowledged it; an acks=0
//   `ok` has offset -1 and counts as not acked); otherwise unacked (fail, info, acks=0, or no
//   completion at all);
// - present in the final log 0, 1 or n times, matched by value: a generated record's value is
//   its id; a value typed in several sends is shared out among them (a copy goes to the send
//   acked at its partition and offset, else to the earliest send of that value with no copy
//   yet, else to the first one: a duplicate). A final-log value no send carried is counted in
//   `foreign_records` and otherwise ignored. A record acked at an offset now below its
//   partition's log start offset and absent is `expired` (deleted by retention), not lost. A
//   record sent to a topic the audit did not read counts in sent/acked only;
// - a delivery is the record whose final-log copy sits at the delivered partition and offset
//   with the delivered value, else the history's id for the value (History::RecordIdForValue);
// - delivered to each consumer group 0, 1 or n times (a consumer without a group counts as a
//   group of its own, named by its client id); only groups that consume the record's topic;
// - in order or not: within one partition's final log, a record whose first copy comes after
//   the first copy of a record its producer (client id) sent later is reordered.
//
// Metrics (MetricNames(), in that order):
//   sent                 send invokes;
//   acked                acked records;
//   lost_acked           acked, absent from the final log, not expired;
//   lost_unacked         unacked, absent from the final log;
//   log_duplicates       records present at two or more offsets;
//   duplicated           (group, record) pairs delivered more than once;
//   undelivered          (group, record) pairs present in the final log, never delivered;
//   reordered            records reordered in their partition's final log;
//   replica_divergence   replica divergences found by the audit;
//   unavailable_ms       the sum over the audited partitions of RunObserver::UnavailableMs;
//   elections            leader elections of the audited partitions, except the first election
//                        of a new partition (reason new_partition): failovers and restarts;
//   unclean_elections    those of them that were unclean;
//   truncated_records    records removed by truncations of the audited partitions' replicas;
//   invariant_violations the invariant checker's reports (sim/invariant_checker.h).
//
// Causes: each lost_acked, log_duplicates, duplicated, undelivered and reordered record becomes
// one Anomaly whose `cause` names the fault or protocol event responsible, with its time:
// - lost_acked: the first truncation of the partition after the ack that removed the acked
//   offset on the broker that led the partition when it was acked, and the election that
//   preceded it ("truncated on broker-1 at 15.200 s (to offset 40, high-watermark) after
//   broker-2 was elected leader (epoch 3, unclean) at 14.900 s"); without such a truncation,
//   the leader's loss of the partition's data (crash_replicas, a disk fault) or "unknown";
// - log_duplicates: the producer's retries of the record's partition between its invoke and its
//   completion ("producer p1 retried t-0 (attempt 2) after REQUEST_TIMED_OUT at 3.100 s");
// - duplicated: a log duplicate, else the later delivery's consumer incarnation and the last
//   successful commit of the group for that partition before it ("redelivered to g1 by c1
//   (incarnation 2) after c1 crashed at 12.000 s; last commit of t-0 was offset 10 at
//   9.500 s"), or a rebalance;
// - undelivered: a commit of the group covering the record's offset made before the record was
//   delivered, and the consumer crash that followed (commit before processing);
// - reordered: the producer's retry of the earlier record.
//
// Pure: no I/O, no clock. Single-threaded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/topic_partition.h"
#include "core/types.h"
#include "sim/audit.h"
#include "sim/history.h"
#include "sim/run_observer.h"

namespace ksim::sim {

struct Metric {
  std::string name;
  int64_t value = 0;
};

struct Anomaly {
  std::string kind;  // lost_acked, log_duplicate, duplicated, undelivered, reordered
  std::string record_id;
  TopicPartition tp;       // the partition the record was acked or found in
  Offset offset{-1};       // its acked or found offset (-1 when none)
  std::string group;       // duplicated, undelivered
  std::string cause;       // one line, as documented above
  TimeUs cause_t_us = -1;  // when the cause happened (-1: unknown)
};

struct CheckResult {
  std::vector<Metric> metrics;     // every metric, in MetricNames() order
  std::vector<Anomaly> anomalies;  // in kind order as listed above, then record order
  int64_t expired = 0;             // acked records deleted by retention (not lost)
  int64_t foreign_records = 0;     // final-log records whose value no send of the run carried
  int64_t Value(std::string_view metric) const;  // REQUIRES: a metric name
};

struct CheckInput {
  const History* history = nullptr;
  const FinalAudit* audit = nullptr;
  const RunObserver* observer = nullptr;
  TimeUs end_us = 0;  // the end of the run (for unavailable_ms)
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

}  // namespace ksim::sim
