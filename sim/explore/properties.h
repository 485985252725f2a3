// What `ksim explore` checks on every run (docs/explore.md, "Properties"): the promise Kafka makes
// for the run's own settings, derived from the scenario, plus what ksim promises about itself.
//
// - engine_invariants (always): the invariant checker found no engine rule broken
//   (invariant_violations = 0; Kafka's permitted losses do not count).
// - acked_kept: no acked record lost (lost_acked = 0), promised when every producer has acks=all,
//   every topic min.insync.replicas >= 2 (and a replication factor that reaches it), elections
//   are clean (unclean.leader.election.enable=false everywhere; policy unset, clean, random-isr or
//   wait-for-last-isr) and followers truncate by leader epoch (KIP-101/KIP-279); it holds while
//   at most min.insync.replicas - 1 brokers lose their disk: a power loss loses the unsynced tail
//   unless every topic fsyncs each record (flush.messages / log.flush.interval.messages = 1), a
//   corrupt_tail always loses one. A run whose schedule loses more disks does not test it.
// - no_log_duplicates: no record twice in the log (log_duplicates = 0), promised when every
//   producer has enable.idempotence=true and the scenario's kafka_version has it (0.11.0 on).
// - liveness (when the final phase heals and restarts everything): after the final phase every
//   audited partition has a leader, every acked record is readable (unavailable_acked = 0) and
//   the drain completed within drain_ms (producers done, consumers caught up).
// - expectations (--expect): the scenario's own expectations hold; bound (--bound): a metric
//   bound, "lost_acked<=0", "duplicated=0", "elections>=1".
// The driver adds no_crash (the run completed) and determinism (a sampled seed runs twice with
// the same trace hash).
//
// A failure names its property, a cause (one line: the most frequent cause among the anomalies
// that broke it, the violation, what the drain waited for) and a signature: the property and the
// cause with every number replaced by '#', so that 500 failing seeds of one bug read as one line.
// Pure functions; single-threaded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "sim/runner/runner.h"
#include "sim/scenario/scenario.h"

namespace ksim::sim {

// --bound METRIC<=N | METRIC>=N | METRIC=N.
struct MetricBound {
  std::string metric;
  std::optional<int64_t> min;
  std::optional<int64_t> max;
  std::string text;  // as given
};
// kInvalidArgument naming the text and what is valid (an unknown metric gets the closest name).
Result<MetricBound> ParseMetricBound(std::string_view text);

struct PropertyOptions {
  bool expectations = false;  // --expect: the scenario's own expectations
  std::vector<MetricBound> bounds;
};

struct Property {
  std::string name;       // engine_invariants, acked_kept, no_log_duplicates, liveness, ...
  std::string statement;  // what must hold
  std::string basis;      // the settings that promise it ("" for ksim's own)
};

struct Promise {
  std::vector<Property> properties;
  // Kafka's promises this configuration does not make, with the setting that breaks each
  // ("acked_kept: p1 has acks=1 (only the leader had the record when it was acknowledged)").
  std::vector<std::string> not_promised;
  // acked_kept's assumption.
  int32_t disks_lost_tolerated = 0;
  bool synced_disks = false;
  bool Has(std::string_view property) const;
  // The lines `ksim explore` prints before running.
  // `also_checked`: lines for the properties the explore driver checks itself (no_crash,
  // determinism), listed with the promise's before what is not promised.
  std::string Describe(const std::vector<std::string>& also_checked = {}) const;
};

Promise DerivePromise(const Scenario& scenario, const PropertyOptions& options);

struct PropertyFailure {
  std::string property;
  std::string cause;
  std::string signature;  // property + ": " + NormalizeCause(cause)
};

// The causes' shape: every run of digits (with its decimals) becomes '#', and so does every
// word of 6 or more hexadecimal digits with a digit in it (a CRC such as 7620309b).
std::string NormalizeCause(std::string_view cause);
PropertyFailure MakeFailure(std::string property, std::string cause);

// The brokers whose disk the scenario's actions lose (power losses unless disks are synced,
// corrupt_tail always; leader_of targets count as distinct brokers), as described in Promise.
int32_t DisksLost(const Scenario& scenario, bool synced_disks);

// What broke in `run` of `scenario` (empty: every property held). `skipped` gets the properties
// the run did not test and why ("acked_kept: 2 disks lost, the promise tolerates 1").
std::vector<PropertyFailure> CheckProperties(const Promise& promise, const Scenario& scenario,
                                             const RunResult& run,
                                             std::vector<std::string>* skipped = nullptr);

}  // namespace ksim::sim
