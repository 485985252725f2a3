#include "sim/explore/properties.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "core/base/text_distance.h"
#include "core/clients/consumer/consumer.h"
#include "core/clients/producer/producer.h"
#include "core/config/kafka_version.h"
#include "core/config/server_config.h"

namespace ksim::sim {
namespace {

// Kafka's own liveness defects that a drain names (sim/runner/runner.h): a run that does not
// settle because of one is not ksim's failure. `what` says what is then left untested.
struct KafkaLivenessDefect {
  std::string_view name;
  std::string_view what;
  // The first modelled release without it; nullopt: every release ksim follows has it.
  std::optional<KafkaRelease> fixed_in;
};
constexpr KafkaLivenessDefect kKafkaLivenessDefects[] = {
    // KAFKA-1120 is fixed in 2.2, after every release ksim follows (docs/controller.md).
    {kMissedRestartDefect,
     "a broker whose restart the controller missed: it registered again before the controller "
     "read /brokers/ids",
     std::nullopt},
    {kSameLeaderDefect,
     "a follower told the same leader again after it missed leader epochs, whose replica "
     "fetcher then stops at the leader's answer",
     KafkaRelease::k2_1},
    {kFollowerAheadDefect,
     "a follower whose log is ahead of a leader it may not truncate to "
     "(unclean.leader.election.enable=false; after records no replica had synced were lost) and "
     "that exits at every start",
     KafkaRelease::k2_1},
    // KAFKA-7235 is fixed in 2.2, after every release ksim follows.
    {kStaleControlRequestDefect,
     "a leader that took an older controller's LeaderAndIsr after its restart and so caches an "
     "old zkVersion of the partition's state",
     std::nullopt},
    {kOutOfOrderRetryDefect,
     "an idempotent producer retrying a batch older than what the leader remembers",
     KafkaRelease::k2_1},
    {kBelowFirstEpochDefect,
     "a follower that asked its leader for the end of an epoch before the leader's first, was "
     "answered UNDEFINED and truncated to its high watermark inside a batch of the leader's, "
     "whose replica fetcher then stops at the leader's answer",
     KafkaRelease::k2_1},
    {kUnrecordedEpochDefect,
     "a follower that asked a new leader for the end of an epoch after the last the leader had "
     "recorded, was answered UNDEFINED and truncated to its high watermark inside a batch of the "
     "leader's, whose replica fetcher then stops at the leader's answer",
     KafkaRelease::k2_1},
    {kUnheldEpochDefect,
     "a follower that asked its leader for the end of an epoch the leader never had, was answered "
     "with the start of the leader's next epoch and no epoch, and kept records where the leader "
     "holds others, whose replica fetcher then stops at the leader's answer",
     KafkaRelease::k2_0},
    {kLeaderKeptBelowUndefinedCutDefect,
     "a follower whose leader kept an older epoch's records below its cut to its high watermark "
     "after an UNDEFINED answer, where the follower holds a later epoch's: its replica fetcher "
     "stops at the leader's answer",
     KafkaRelease::k2_1},
    {kFollowerBelowFirstEpochDefect,
     "a follower answered an epoch before the first its own cache holds, which truncated to the "
     "leader's offset only and kept its later epochs' records where the leader holds others: "
     "its replica fetcher stops at the leader's answer",
     KafkaRelease::k2_1},
    // KAFKA-10706 is fixed in 2.6.1 and 2.7.0, after every release ksim follows.
    {kForgottenEpochStartDefect,
     "a follower whose leader's epoch cache forgot where an epoch began (an entry kept by a "
     "truncation to the log end, then an older epoch's batch appended after it): the follower "
     "keeps diverged records and its replica fetcher stops at the leader's answer",
     std::nullopt},
    // No ZooKeeper-based release detects a leader's unclean shutdown (docs/explore.md).
    {kSameEpochForkDefect,
     "a follower holding a batch of a leader epoch whose leader lost it in a power loss and led "
     "on in that epoch, found alive by the controller: its replica fetcher stops at the leader's "
     "answer",
     std::nullopt},
    // No release ksim follows checks that recovered offsets follow each other (docs/explore.md).
    {kFollowerOffsetJumpDefect,
     "a follower whose recovered log jumps to a batch whose base offset a corrupted byte raised, "
     "its log end past its records: its replica fetcher stops at the leader's answer",
     std::nullopt},
    // No release ksim follows checks that recovered offsets increase (docs/explore.md).
    {kLeaderEndPastRecordsDefect,
     "a leader whose log end offset is past its records, after a truncation into a record whose "
     "offset a corrupted byte changed",
     std::nullopt},
};

// Whether `scenario` runs a release that still has `defect` (its top-level kafka_version: the
// bases under scenarios/explore/ name one release for brokers and clients).
bool HasDefect(const KafkaLivenessDefect& defect, const Scenario& scenario) {
  return !defect.fixed_in || scenario.kafka_version < *defect.fixed_in;
}

// Every broker's configuration as the cluster builds it from the scenario (ksim's own defaults
// left out: they touch no promise).
std::vector<BrokerConfig> BrokerConfigs(const Scenario& scenario) {
  std::vector<BrokerConfig> configs;
  Result<BrokerConfig> defaults = MakeBrokerConfig({});
  if (!defaults.ok()) return configs;
  for (int32_t id = 1; id <= scenario.cluster.brokers; ++id) {
    ConfigOverrides all = scenario.cluster.config;
    for (const auto& [broker, overrides] : scenario.cluster.broker_config) {
      if (broker == id) all.insert(all.end(), overrides.begin(), overrides.end());
    }
    Result<BrokerConfig> config = ApplyConfigOverrides(*defaults, all, "cluster.config");
    if (config.ok()) configs.push_back(std::move(config).value());
  }
  return configs;
}

std::string Join(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

// The most frequent normalized cause among `anomalies` of `kind` (ties: the first seen), with
// its first full text.
std::optional<std::string> CommonCause(const std::vector<Anomaly>& anomalies, std::string_view kind,
                                       int64_t* count = nullptr) {
  std::map<std::string, std::pair<int64_t, size_t>> seen;  // normalized -> (count, first index)
  for (size_t i = 0; i < anomalies.size(); ++i) {
    if (anomalies[i].kind != kind) continue;
    auto [it, inserted] = seen.try_emplace(NormalizeCause(anomalies[i].cause), 0, i);
    ++it->second.first;
  }
  if (seen.empty()) return std::nullopt;
  auto best = seen.begin();
  for (auto it = seen.begin(); it != seen.end(); ++it) {
    if (it->second.first > best->second.first ||
        (it->second.first == best->second.first && it->second.second < best->second.second)) {
      best = it;
    }
  }
  if (count != nullptr) *count = best->second.first;
  return anomalies[best->second.second].cause;
}

// Is `target` (a scenario Target) one of the brokers in `seen`? leader_of targets are distinct.
std::string TargetKey(const Target& target, size_t action_index) {
  if (target.kind == Target::Kind::kBroker) return "broker-" + std::to_string(target.broker);
  return "leader_of#" + std::to_string(action_index);
}

}  // namespace

Result<MetricBound> ParseMetricBound(std::string_view text) {
  MetricBound bound;
  bound.text = std::string(text);
  size_t op = text.find_first_of("<>=");
  auto invalid = [&](const std::string& why) {
    return Status(Errc::kInvalidArgument, "--bound '" + std::string(text) + "': " + why +
                                              " (expected METRIC<=N, METRIC>=N or METRIC=N)");
  };
  if (op == std::string_view::npos || op == 0) return invalid("no comparison");
  const std::string metric(text.substr(0, op));
  std::string_view rest = text.substr(op);
  std::string_view comparison;
  for (std::string_view candidate : {"<=", ">=", "="}) {
    if (rest.starts_with(candidate)) {
      comparison = candidate;
      break;
    }
  }
  if (comparison.empty()) return invalid("unknown comparison");
  rest.remove_prefix(comparison.size());
  int64_t value = 0;
  auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
  if (rest.empty() || error != std::errc() || end != rest.data() + rest.size()) {
    return invalid("not an integer: '" + std::string(rest) + "'");
  }
  const std::vector<std::string_view>& names = MetricNames();
  if (std::find(names.begin(), names.end(), metric) == names.end()) {
    std::string why = "unknown metric \"" + metric + "\"";
    if (std::optional<std::string_view> close = ClosestName(metric, names)) {
      why += " (did you mean \"" + std::string(*close) + "\"?)";
    }
    return invalid(why);
  }
  bound.metric = metric;
  if (comparison == "<=" || comparison == "=") bound.max = value;
  if (comparison == ">=" || comparison == "=") bound.min = value;
  return bound;
}

bool Promise::Has(std::string_view property) const {
  return std::any_of(properties.begin(), properties.end(),
                     [&](const Property& p) { return p.name == property; });
}

std::string Promise::Describe(const std::vector<std::string>& also_checked) const {
  std::string out = "Properties checked on every run:\n";
  for (const Property& p : properties) {
    out += "  " + p.name + ": " + p.statement + "\n";
    if (!p.basis.empty()) out += "      because " + p.basis + "\n";
  }
  for (const std::string& line : also_checked) out += "  " + line + "\n";
  if (!not_promised.empty()) {
    out += "Not promised by these settings:\n";
    for (const std::string& line : not_promised) out += "  " + line + "\n";
  }
  return out;
}

Promise DerivePromise(const Scenario& scenario, const PropertyOptions& options) {
  Promise promise;
  promise.properties.push_back(
      {"engine_invariants",
       "no engine invariant broken: one leader per epoch, a leader's HW never goes down, log "
       "start <= HW <= LEO, committed records stable unless Kafka allows their loss "
       "(invariant_violations = 0)",
       ""});

  // Producers: acks and idempotence, as core parses them.
  std::vector<std::string> acks_all;
  std::vector<std::string> idempotent;
  std::vector<std::string> against_acks;
  std::vector<std::string> against_idempotence;
  int producers = 0;
  for (const ClientSpec& client : scenario.clients) {
    if (client.type != ClientType::kProducer) continue;
    ++producers;
    ConfigOverrides settings = client.config;
    settings.emplace_back("bootstrap.servers", "broker-1");
    Result<ProducerConfig> config = ParseProducerConfig(settings, scenario.kafka_version);
    const int16_t acks = config.ok() ? config->acks : 1;
    const bool idempotence = config.ok() && config->enable_idempotence;
    (acks == -1 ? acks_all : against_acks)
        .push_back(client.id + (acks == -1 ? "" : " has acks=" + std::to_string(acks)));
    // A release before 0.11.0 ignores enable.idempotence (KafkaProducer warns).
    const bool ignored =
        config.ok() &&
        std::any_of(config->warnings.begin(), config->warnings.end(),
                    [](const std::string& warning) {
                      return warning.starts_with("The configuration enable.idempotence");
                    });
    if (idempotence) {
      idempotent.push_back(client.id);
    } else {
      against_idempotence.push_back(
          client.id + (ignored
                           ? " (Kafka " + std::string(KafkaReleaseName(scenario.kafka_version)) +
                                 " has no enable.idempotence)"
                           : ""));
    }
  }

  // Topics on every broker's configuration: min.insync.replicas, unclean election, fsync.
  const std::vector<BrokerConfig> brokers = BrokerConfigs(scenario);
  int32_t min_isr = INT32_MAX;
  std::vector<std::string> against_isr;
  std::vector<std::string> unclean;
  bool synced = !scenario.topics.empty();
  for (const TopicEntry& topic : scenario.topics) {
    for (const BrokerConfig& broker : brokers) {
      Result<TopicConfig> config = MakeTopicConfig(broker, topic.config, "topics/" + topic.name);
      if (!config.ok()) continue;
      min_isr = std::min(min_isr, config->min_insync_replicas);
      if (config->min_insync_replicas < 2 ||
          topic.replication_factor < config->min_insync_replicas) {
        against_isr.push_back(
            topic.name + " has min.insync.replicas=" + std::to_string(config->min_insync_replicas) +
            " with replication factor " + std::to_string(topic.replication_factor));
      }
      if (config->unclean_leader_election_enable) unclean.push_back(topic.name);
      if (config->log.flush_interval_messages != 1) synced = false;
    }
  }
  std::sort(against_isr.begin(), against_isr.end());
  against_isr.erase(std::unique(against_isr.begin(), against_isr.end()), against_isr.end());
  std::sort(unclean.begin(), unclean.end());
  unclean.erase(std::unique(unclean.begin(), unclean.end()), unclean.end());
  const std::string& election = scenario.policy.election;
  const bool clean_policy = election.empty() || election == "clean" || election == "random-isr" ||
                            election == "wait-for-last-isr";
  const bool policy_decides = !election.empty();
  const bool clean = clean_policy && (policy_decides || unclean.empty());
  const std::string truncation = scenario.TruncationPolicyName();
  const bool epochs = truncation == "leader-epoch";
  // Before 2.1 a follower's requests name no leader epoch (KIP-320) and a new leader records its
  // epoch only with its first append (KAFKA-7415): leader-epoch truncation can still cut
  // acknowledged records (docs/explore.md, safe seeds 594087 and 7403).
  const bool fenced = scenario.kafka_version >= KafkaRelease::k2_1;

  if (producers == 0 || scenario.topics.empty()) {
    promise.not_promised.push_back("acked_kept: no producer or no topic");
  } else if (!against_acks.empty() || !against_isr.empty() || !clean || !epochs || !fenced) {
    std::vector<std::string> why;
    if (!against_acks.empty()) {
      why.push_back(Join(against_acks) + " (the leader alone may hold an acknowledged record)");
    }
    if (!against_isr.empty()) {
      why.push_back(Join(against_isr) + " (one replica may be all that holds a committed record)");
    }
    if (!clean) {
      why.push_back(policy_decides ? "election policy " + election + " (elects outside the ISR)"
                                   : "unclean.leader.election.enable=true for " + Join(unclean) +
                                         " (an out-of-sync replica may be elected)");
    }
    if (!epochs) {
      why.push_back("truncation " + truncation +
                    " (a follower cuts to its own high watermark: KIP-101's loss)");
    } else if (!fenced) {
      why.push_back("Kafka " + std::string(KafkaReleaseName(scenario.kafka_version)) +
                    " (a follower may truncate by the answer of a leader that was deposed "
                    "without knowing it, which 2.1 fences with KIP-320's leader epoch, or by an "
                    "epoch a new leader never recorded, KAFKA-7415)");
    }
    promise.not_promised.push_back("acked_kept: " + Join(why));
  } else {
    promise.disks_lost_tolerated = min_isr - 1;
    promise.synced_disks = synced;
    promise.properties.push_back(
        {"acked_kept",
         "no acknowledged record lost (lost_acked = 0) while at most " +
             std::to_string(promise.disks_lost_tolerated) + " broker(s) lose their disk" +
             (synced ? " (disks are synced: only a corrupt_tail loses one)"
                     : " (disks are not synced: a power loss loses the unsynced tail)"),
         "acks=all (" + Join(acks_all) + "), min.insync.replicas >= " + std::to_string(min_isr) +
             ", clean elections, leader-epoch truncation fenced by leader epochs (Kafka 2.1: "
             "KIP-320, KAFKA-7415)" +
             (synced ? ", every record fsynced" : "")});
    promise.not_promised.push_back(
        "acked_kept of a record lost to " + std::string(kLeaderAgainOnOldLogEndsDefect) +
        " (Kafka's own at every release ksim follows); such a run's acked_kept is not tested");
  }

  if (producers > 0 && against_idempotence.empty()) {
    promise.properties.push_back({"no_log_duplicates",
                                  "no record written twice (log_duplicates = 0)",
                                  "enable.idempotence=true (" + Join(idempotent) + ")"});
  } else if (producers > 0) {
    promise.not_promised.push_back(
        "no_log_duplicates: " + Join(against_idempotence) +
        " without enable.idempotence (a retry can write a record again)");
  }

  // A consumer that starts at latest may join after the records it is waited for were written:
  // it never reaches them and the drain runs out (docs/scenarios.md, "The final phase").
  std::vector<std::string> at_latest;
  for (const ClientSpec& client : scenario.clients) {
    if (client.type != ClientType::kConsumer) continue;
    if (client.zookeeper_consumer) {
      // The old consumer's names: smallest / largest (the default).
      std::string reset = "largest";
      for (const auto& [key, value] : client.config) {
        if (key == "auto.offset.reset") reset = value;
      }
      if (reset != "smallest") at_latest.push_back(client.id);
      continue;
    }
    ConfigOverrides settings = client.config;
    settings.emplace_back("bootstrap.servers", "broker-1");
    Result<ConsumerConfig> config = ParseConsumerConfig(settings, scenario.kafka_version);
    if (!config.ok() || config->auto_offset_reset != "earliest") at_latest.push_back(client.id);
  }
  if (!scenario.final_phase.heal || !scenario.final_phase.restart_all) {
    promise.not_promised.push_back(
        "liveness: the final phase does not heal and restart everything");
  } else if (!at_latest.empty()) {
    promise.not_promised.push_back("liveness: " + Join(at_latest) +
                                   " without auto.offset.reset=earliest (a consumer that joins "
                                   "after records were written never delivers them)");
  } else {
    promise.properties.push_back(
        {"liveness",
         "after the final phase every partition has a leader, every acknowledged record is "
         "readable (unavailable_acked = 0) and the drain completes within drain_ms=" +
             std::to_string(scenario.final_phase.drain_ms) +
             " of the producers' last scheduled record" +
             (scenario.kafka_version >= KafkaRelease::k2_1
                  ? std::string(" (or its delivery.timeout.ms when longer: from Kafka 2.1 the "
                                "bound on a record's outcome, KIP-91)")
                  : std::string()),
         "the final phase heals every fault and restarts every broker and client; every "
         "consumer starts at earliest"});
    for (const KafkaLivenessDefect& defect : kKafkaLivenessDefects) {
      if (!HasDefect(defect, scenario)) continue;
      promise.not_promised.push_back("liveness of " + std::string(defect.what) + " (" +
                                     std::string(defect.name) +
                                     "); such a run's liveness is not tested");
    }
  }
  if (options.expectations) {
    promise.properties.push_back(
        {"expectations", "the scenario's own expectations hold", "--expect"});
  }
  for (const MetricBound& bound : options.bounds) {
    promise.properties.push_back({"bound", bound.text, "--bound"});
  }
  return promise;
}

std::string NormalizeCause(std::string_view cause) {
  std::string out;
  out.reserve(cause.size());
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  for (size_t i = 0; i < cause.size();) {
    if (i == 0 || !is_word(cause[i - 1])) {  // a word that is a hexadecimal number: a CRC
      size_t end = i;
      bool digit = false;
      while (end < cause.size() && std::isxdigit(static_cast<unsigned char>(cause[end])) != 0) {
        digit = digit || std::isdigit(static_cast<unsigned char>(cause[end])) != 0;
        ++end;
      }
      if (end - i >= 6 && digit && (end == cause.size() || !is_word(cause[end]))) {
        out += '#';
        i = end;
        continue;
      }
    }
    if (std::isdigit(static_cast<unsigned char>(cause[i])) != 0) {
      while (i < cause.size() && (std::isdigit(static_cast<unsigned char>(cause[i])) != 0 ||
                                  (cause[i] == '.' && i + 1 < cause.size() &&
                                   std::isdigit(static_cast<unsigned char>(cause[i + 1])) != 0))) {
        ++i;
      }
      out += '#';
      continue;
    }
    out += cause[i++];
  }
  return out;
}

PropertyFailure MakeFailure(std::string property, std::string cause) {
  PropertyFailure failure;
  failure.signature = property + ": " + NormalizeCause(cause);
  failure.property = std::move(property);
  failure.cause = std::move(cause);
  return failure;
}

int32_t DisksLost(const Scenario& scenario, bool synced_disks) {
  std::set<std::string> lost;
  for (const Action& action : scenario.actions) {
    if (const auto* crash = std::get_if<CrashAction>(&action.what)) {
      if (synced_disks || crash->target.kind == Target::Kind::kClient) continue;
      lost.insert(TargetKey(crash->target, action.index));
    } else if (const auto* fault = std::get_if<DiskFaultAction>(&action.what)) {
      if (fault->kind == DiskFaultKind::kCorruptTail) {
        lost.insert(TargetKey(fault->target, action.index));
      }
    } else if (const auto* replicas = std::get_if<CrashReplicasAction>(&action.what)) {
      if (synced_disks) continue;
      const TopicEntry* topic = scenario.FindTopic(replicas->topic);
      const ReplicaAssignment empty;
      const ReplicaAssignment& assignment = topic == nullptr ? empty : topic->assignment;
      auto assigned = assignment.find(PartitionId(replicas->partition));
      if (assigned != assignment.end()) {
        for (BrokerId id : assigned->second) lost.insert("broker-" + std::to_string(id.value()));
      } else {
        const int32_t rf = topic == nullptr ? scenario.cluster.brokers : topic->replication_factor;
        for (int32_t i = 0; i < rf; ++i) {
          lost.insert("crash_replicas#" + std::to_string(action.index) + "/" + std::to_string(i));
        }
      }
    }
  }
  return static_cast<int32_t>(lost.size());
}

std::vector<PropertyFailure> CheckProperties(const Promise& promise, const Scenario& scenario,
                                             const RunResult& run,
                                             std::vector<std::string>* skipped) {
  std::vector<PropertyFailure> failures;
  const CheckResult& check = run.check;
  if (!check.invariant_violations.empty()) {
    // The rule is the first word; the rest names brokers and offsets.
    failures.push_back(MakeFailure("engine_invariants", check.invariant_violations.front()));
  }
  if (promise.Has("acked_kept") && check.Value("lost_acked") > 0) {
    const int32_t lost = DisksLost(scenario, promise.synced_disks);
    if (lost > promise.disks_lost_tolerated) {
      if (skipped != nullptr) {
        skipped->push_back("acked_kept: " + std::to_string(lost) +
                           " broker(s) lost their disk, the promise tolerates " +
                           std::to_string(promise.disks_lost_tolerated));
      }
    } else {
      // Records lost to a defect of Kafka's own that no setting avoids are not ksim's failure:
      // a run that lost nothing else does not test acked_kept (as Kafka's liveness defects do not
      // test liveness).
      std::vector<Anomaly> others;
      std::string defect;
      int64_t kafkas = 0;
      for (const Anomaly& anomaly : check.anomalies) {
        if (anomaly.kind != "lost_acked") continue;
        if (anomaly.kafka_defect.empty()) {
          others.push_back(anomaly);
        } else {
          ++kafkas;
          if (defect.empty()) defect = anomaly.kafka_defect;
        }
      }
      if (others.empty()) {
        if (skipped != nullptr) {
          skipped->push_back("acked_kept: " + std::to_string(kafkas) +
                             " record(s) lost to Kafka's own defect, " + defect);
        }
      } else {
        failures.push_back(
            MakeFailure("acked_kept", CommonCause(others, "lost_acked").value_or("unknown")));
      }
    }
  }
  if (promise.Has("no_log_duplicates") && check.Value("log_duplicates") > 0) {
    failures.push_back(MakeFailure(
        "no_log_duplicates", CommonCause(check.anomalies, "log_duplicate").value_or("unknown")));
  }
  if (promise.Has("liveness")) {
    std::string cause;
    for (const PartitionAudit& partition : run.audit.partitions) {
      if (partition.leader.value() < 0) {
        cause = ToString(partition.tp) + " has no leader after the final phase";
        break;
      }
    }
    if (cause.empty() && check.Value("unavailable_acked") > 0) {
      cause = "acknowledged records not readable after the final phase: " +
              CommonCause(check.anomalies, "unavailable_acked").value_or("unknown");
    }
    if (cause.empty() && !run.drained) {
      cause = "the final phase did not converge within drain_ms=" +
              std::to_string(scenario.final_phase.drain_ms) + ": " + run.undrained;
    }
    if (!cause.empty() && !run.drained &&
        std::any_of(std::begin(kKafkaLivenessDefects), std::end(kKafkaLivenessDefects),
                    [&](const KafkaLivenessDefect& defect) {
                      return HasDefect(defect, scenario) &&
                             run.undrained.find(defect.name) != std::string::npos;
                    })) {
      // Kafka's own liveness defect at the base's release: not a failure of ksim's or of the
      // settings' promise (Promise: not_promised). The drain names it; the partition without a
      // leader or the broker out of an ISR follows from it. At a release that fixed it, the same
      // drain is ksim's failure.
      if (skipped != nullptr) skipped->push_back("liveness: " + run.undrained);
    } else if (!cause.empty()) {
      failures.push_back(MakeFailure("liveness", cause));
    }
  }
  if (promise.Has("expectations")) {
    for (const ExpectationResult& e : run.expectations) {
      if (e.ok) continue;
      failures.push_back(MakeFailure("expectations", e.expectation.metric + " expected " +
                                                         e.Expected() + ", actual " +
                                                         std::to_string(e.actual)));
      break;
    }
  }
  for (const Property& property : promise.properties) {
    if (property.name != "bound") continue;
    Result<MetricBound> bound = ParseMetricBound(property.statement);
    if (!bound.ok()) continue;
    const int64_t actual = check.Value(bound->metric);
    if ((bound->min && actual < *bound->min) || (bound->max && actual > *bound->max)) {
      // A metric that counts records gets the cause most of them share, so that seeds losing
      // records for different reasons (acks=1's leader crash, an unclean election, KIP-101's
      // truncation) are different signatures, each with its explanation.
      std::string cause = bound->text + " (actual " + std::to_string(actual) + ")";
      if (const char* kind = AnomalyKindOf(bound->metric); kind != nullptr) {
        if (std::optional<std::string> common = CommonCause(check.anomalies, kind)) {
          cause += ": " + *common;
        }
      }
      failures.push_back(MakeFailure("bound", std::move(cause)));
    }
  }
  return failures;
}

}  // namespace ksim::sim
