#include "sim/scenario/loader.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "core/base/text_distance.h"
#include "core/clients/consumer/consumer.h"
#include "core/clients/producer/producer.h"
#include "core/cluster/election_policy.h"
#include "core/cluster/partition.h"
#include "core/cluster/replica_assignment.h"
#include "core/cluster/topic.h"
#include "sim/scenario/clients.h"
#include "sim/scenario/parse.h"

namespace ksim::sim {
namespace {

constexpr int32_t kBrokersMax = 1000;
constexpr int32_t kPartitionsMax = 100000;
constexpr int64_t kMsMax = INT64_MAX / 1000;  // fits in microseconds

// Kafka keys the simulation sets itself on every broker (sim/cluster/cluster.h).
constexpr std::string_view kFixedBrokerKeys[] = {"broker.id",         "log.dir",   "log.dirs",
                                                 "zookeeper.connect", "host.name", "listeners"};

// Keeps each error once (a broker's own settings repeat the cluster's errors otherwise).
void AddConfigErrors(ScenarioReader& reader, const Status& status, std::string_view fallback_path,
                     std::set<std::string>& seen) {
  std::istringstream lines(status.message());
  std::string line;
  while (std::getline(lines, line)) {
    if (!seen.insert(line).second) continue;
    const size_t colon = line.find(": ");
    if (line.starts_with("/") && colon != std::string::npos) {
      reader.Error(line.substr(0, colon), line.substr(colon + 2));
    } else {
      reader.Error(fallback_path, line);
    }
  }
}

// Broker settings through core's MakeBrokerConfig, each origin the key's JSON Pointer.
class BrokerSettingsCheck {
 public:
  BrokerSettingsCheck(ScenarioReader& reader, KafkaRelease release)
      : reader_(reader), release_(release) {}

  void Add(ConfigOriginals& originals, const ConfigOverrides& settings, std::string_view path) {
    int order = static_cast<int>(originals.size());
    for (const auto& [key, value] : settings) {
      const std::string key_path = JoinPointer(path, key);
      if (std::find(std::begin(kFixedBrokerKeys), std::end(kFixedBrokerKeys), key) !=
          std::end(kFixedBrokerKeys)) {
        reader_.Error(key_path,
                      "set by the simulation for every broker (broker.id = its id, log.dirs on "
                      "its virtual disk, zookeeper.connect = zk:2181, host.name = its node "
                      "name); remove it");
        continue;
      }
      originals[key] = ConfigSetting{value, key_path, ++order};
    }
  }

  // MakeBrokerConfig over `originals`; unknown keys are errors here (Kafka only warns, but in a
  // scenario they are typos).
  std::optional<BrokerConfig> Check(const ConfigOriginals& originals, std::string_view path) {
    Result<BrokerConfig> config = MakeBrokerConfig(originals, release_);
    if (!config.ok()) {
      AddConfigErrors(reader_, config.status(), path, seen_);
      return std::nullopt;
    }
    bool unknown = false;
    for (const auto& [key, setting] : originals) {
      if (IsKnownBrokerKey(*config, key)) continue;
      unknown = true;
      if (!seen_.insert(setting.origin).second) continue;
      reader_.Error(setting.origin, UnknownBrokerKeyMessage(key, release_));
    }
    if (unknown) return std::nullopt;
    return std::move(config).value();
  }

 private:
  static bool IsKnownBrokerKey(const BrokerConfig& config, std::string_view key) {
    const std::string needle = " " + std::string(key) + " = ";
    return std::none_of(config.warnings.begin(), config.warnings.end(),
                        [&](const std::string& w) { return w.find(needle) != std::string::npos; });
  }

  ScenarioReader& reader_;
  KafkaRelease release_;
  std::set<std::string> seen_;
};

ClusterSpec ParseCluster(ScenarioReader& r, const Json& doc, KafkaRelease release,
                         std::optional<BrokerConfig>& base) {
  ClusterSpec cluster;
  const Json* json = ScenarioReader::Find(doc, "cluster");
  ConfigOriginals originals;
  BrokerSettingsCheck check(r, release);
  if (json == nullptr) {
    base = check.Check(originals, "/cluster/config");
    return cluster;
  }
  if (!r.ExpectObject(*json, "/cluster", "the cluster")) return cluster;
  r.CheckKeys(*json, "/cluster", "cluster");
  auto integer = [&](int64_t lo, int64_t hi) {
    return [&r, lo, hi](const Json& v, const std::string& p) { return r.Integer(v, p, lo, hi); };
  };
  if (auto n = r.Member(*json, "/cluster", "brokers", integer(1, kBrokersMax))) {
    cluster.brokers = static_cast<int32_t>(*n);
  }
  if (const Json* config = ScenarioReader::Find(*json, "config")) {
    cluster.config = r.Settings(*config, "/cluster/config");
  }
  // zookeeper
  if (const Json* zk = ScenarioReader::Find(*json, "zookeeper");
      zk != nullptr && r.ExpectObject(*zk, "/cluster/zookeeper", "ZooKeeper settings")) {
    const std::string p = "/cluster/zookeeper";
    r.CheckKeys(*zk, p, "zookeeper");
    ZooKeeperSpec& z = cluster.zookeeper;
    if (auto v = r.Member(*zk, p, "tickTime", integer(1, kMsMax))) z.tick_time_ms = *v;
    if (auto v = r.Member(*zk, p, "minSessionTimeout", integer(0, kMsMax))) {
      z.min_session_timeout_ms = *v;
    }
    if (auto v = r.Member(*zk, p, "maxSessionTimeout", integer(0, kMsMax))) {
      z.max_session_timeout_ms = *v;
    }
    if (z.min_session_timeout_ms != 0 && z.max_session_timeout_ms != 0 &&
        z.min_session_timeout_ms > z.max_session_timeout_ms) {
      r.Error(p + "/minSessionTimeout",
              "minSessionTimeout " + std::to_string(z.min_session_timeout_ms) +
                  " is greater than maxSessionTimeout " + std::to_string(z.max_session_timeout_ms));
    }
    if (auto v = r.Member(*zk, p, "session.timeout.ms", integer(1, INT32_MAX))) {
      z.session_timeout_ms = *v;
    }
  }
  // network
  if (const Json* net = ScenarioReader::Find(*json, "network");
      net != nullptr && r.ExpectObject(*net, "/cluster/network", "network settings")) {
    const std::string p = "/cluster/network";
    r.CheckKeys(*net, p, "network");
    NetworkSpec& n = cluster.network;
    auto range = [&r](const Json& v, const std::string& path) {
      return r.Range(v, path, 0, kMsMax);
    };
    auto loss = [&r](const Json& v, const std::string& path) { return r.Probability(v, path); };
    if (auto v = r.Member(*net, p, "latency_ms", range)) n.latency_ms = *v;
    if (auto v = r.Member(*net, p, "loss", loss)) n.loss_ppm = *v;
    if (auto v = r.Member(*net, p, "bandwidth_bytes_per_s", integer(0, INT64_MAX))) {
      n.bandwidth_bytes_per_s = *v;
    }
    if (const Json* links = ScenarioReader::Find(*net, "links")) {
      if (!links->is_array()) {
        r.Error(p + "/links", "expected an array of links, got " + Describe(*links));
      } else {
        for (size_t i = 0; i < links->size(); ++i) {
          const Json& link = (*links)[i];
          const std::string lp = p + "/links/" + std::to_string(i);
          if (!r.ExpectObject(link, lp, "a link")) continue;
          r.CheckKeys(link, lp, "link");
          LinkOverride out;
          const Json* between = ScenarioReader::Find(link, "between");
          if (between != nullptr) {
            if (!between->is_array() || between->size() != 2 || !(*between)[0].is_string() ||
                !(*between)[1].is_string()) {
              r.Error(lp + "/between", "expected two node names, got " + Describe(*between));
            } else {
              out.a = (*between)[0].get<std::string>();
              out.b = (*between)[1].get<std::string>();
              if (out.a == out.b) r.Error(lp + "/between", "a link joins two different nodes");
            }
          }
          out.latency_ms = r.Member(link, lp, "latency_ms", range);
          out.loss_ppm = r.Member(link, lp, "loss", loss);
          out.bandwidth_bytes_per_s =
              r.Member(link, lp, "bandwidth_bytes_per_s", integer(0, INT64_MAX));
          n.links.push_back(std::move(out));
        }
      }
    }
  }
  // disk
  if (const Json* disk = ScenarioReader::Find(*json, "disk");
      disk != nullptr && r.ExpectObject(*disk, "/cluster/disk", "disk settings")) {
    const std::string p = "/cluster/disk";
    r.CheckKeys(*disk, p, "disk");
    DiskSpec& d = cluster.disk;
    auto range = [&r](const Json& v, const std::string& path) {
      return r.Range(v, path, 0, INT64_MAX);
    };
    if (auto v = r.Member(*disk, p, "read_latency_us", range)) d.read_latency_us = *v;
    if (auto v = r.Member(*disk, p, "write_latency_us", range)) d.write_latency_us = *v;
    if (auto v = r.Member(*disk, p, "fsync_latency_us", range)) d.fsync_latency_us = *v;
    if (auto v = r.Member(*disk, p, "metadata_latency_us", range)) d.metadata_latency_us = *v;
    if (auto v = r.Member(*disk, p, "capacity_bytes", integer(0, INT64_MAX))) {
      d.capacity_bytes = static_cast<uint64_t>(*v);
    }
  }
  // Broker settings: the cluster's, then each broker's own on top.
  check.Add(originals, cluster.config, "/cluster/config");
  if (cluster.zookeeper.session_timeout_ms &&
      originals.find("zookeeper.session.timeout.ms") == originals.end()) {
    originals["zookeeper.session.timeout.ms"] =
        ConfigSetting{std::to_string(*cluster.zookeeper.session_timeout_ms),
                      "/cluster/zookeeper/session.timeout.ms", static_cast<int>(originals.size())};
  }
  base = check.Check(originals, "/cluster/config");
  if (const Json* per_broker = ScenarioReader::Find(*json, "broker_config");
      per_broker != nullptr &&
      r.ExpectObject(*per_broker, "/cluster/broker_config", "settings by broker id")) {
    for (const auto& [id_text, settings] : per_broker->items()) {
      const std::string p = JoinPointer("/cluster/broker_config", id_text);
      int32_t id = 0;
      const auto [end, error] =
          std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
      if (error != std::errc() || end != id_text.data() + id_text.size() || id < 1 ||
          id > cluster.brokers) {
        r.Error(p, "not a broker id: brokers are 1 to " + std::to_string(cluster.brokers));
        continue;
      }
      ConfigOverrides own = r.Settings(settings, p);
      ConfigOriginals merged = originals;
      check.Add(merged, own, p);
      check.Check(merged, p);
      cluster.broker_config.emplace_back(id, std::move(own));
    }
  }
  return cluster;
}

PolicySpec ParsePolicy(ScenarioReader& r, const Json& doc) {
  PolicySpec policy;
  const Json* json = ScenarioReader::Find(doc, "policy");
  if (json == nullptr || !r.ExpectObject(*json, "/policy", "the policies")) return policy;
  r.CheckKeys(*json, "/policy", "policy");
  if (const Json* election = ScenarioReader::Find(*json, "election")) {
    if (auto name = r.OneOf(*election, "/policy/election", ElectionPolicyNames())) {
      policy.election = *name;
    }
  }
  if (const Json* truncation = ScenarioReader::Find(*json, "truncation")) {
    const std::vector<std::string_view> names = {
        TruncationPolicyName(TruncationPolicy::kHighWatermark),
        TruncationPolicyName(TruncationPolicy::kLeaderEpoch)};
    if (auto name = r.OneOf(*truncation, "/policy/truncation", names)) {
      KSIM_CHECK(ParseTruncationPolicy(*name).ok());
      policy.truncation = *name;
    }
  }
  return policy;
}

std::optional<ReplicaAssignment> ParseAssignment(ScenarioReader& r, const Json& json,
                                                 const std::string& p, int32_t brokers) {
  if (!r.ExpectObject(json, p, "replicas by partition (\"0\": [1, 2, 3])")) return std::nullopt;
  ReplicaAssignment assignment;
  const size_t errors = r.error_count();
  for (const auto& [partition_text, replicas] : json.items()) {
    const std::string pp = JoinPointer(p, partition_text);
    int32_t partition = -1;
    const auto [end, error] = std::from_chars(
        partition_text.data(), partition_text.data() + partition_text.size(), partition);
    if (error != std::errc() || end != partition_text.data() + partition_text.size() ||
        partition < 0) {
      r.Error(pp, "not a partition number (0, 1, ...)");
      continue;
    }
    if (!replicas.is_array() || replicas.empty()) {
      r.Error(pp, "expected a non-empty array of broker ids, got " + Describe(replicas));
      continue;
    }
    std::vector<BrokerId> ids;
    for (size_t i = 0; i < replicas.size(); ++i) {
      if (auto id = r.Integer(replicas[i], pp + "/" + std::to_string(i), 1, brokers)) {
        ids.push_back(BrokerId(static_cast<int32_t>(*id)));
      }
    }
    assignment[PartitionId(partition)] = std::move(ids);
  }
  if (r.error_count() != errors) return std::nullopt;
  std::vector<BrokerId> known;
  for (int32_t id = 1; id <= brokers; ++id) known.push_back(BrokerId(id));
  if (Status status = ValidateReplicaAssignment(assignment, known); !status.ok()) {
    r.Error(p, status.message());
    return std::nullopt;
  }
  return assignment;
}

std::vector<TopicEntry> ParseTopics(ScenarioReader& r, const Json& doc, int32_t brokers,
                                    const std::optional<BrokerConfig>& base) {
  std::vector<TopicEntry> topics;
  const Json* json = ScenarioReader::Find(doc, "topics");
  if (json == nullptr || !r.ExpectObject(*json, "/topics", "topics by name")) return topics;
  for (const auto& [name, spec] : json->items()) {
    const std::string p = JoinPointer("/topics", name);
    if (Status status = ValidateTopicName(name); !status.ok()) r.Error(p, status.message());
    if (!r.ExpectObject(spec, p, "a topic")) continue;
    r.CheckKeys(spec, p, "topic");
    TopicEntry topic;
    topic.name = name;
    const std::optional<int64_t> partitions = r.Member(
        spec, p, "partitions",
        [&](const Json& v, const std::string& vp) { return r.Integer(v, vp, 1, kPartitionsMax); });
    const std::optional<int64_t> factor = r.Member(
        spec, p, "replication_factor",
        [&](const Json& v, const std::string& vp) { return r.Integer(v, vp, 1, INT32_MAX); });
    // Unset: the brokers' num.partitions and default.replication.factor (1 and 1).
    topic.partitions =
        partitions ? static_cast<int32_t>(*partitions) : (base ? base->num_partitions : 1);
    topic.replication_factor =
        factor ? static_cast<int32_t>(*factor) : (base ? base->default_replication_factor : 1);
    if (topic.replication_factor > brokers) {
      r.Error(p + (factor ? "/replication_factor" : ""),
              "INVALID_REPLICATION_FACTOR: replication factor " +
                  std::to_string(topic.replication_factor) + " larger than available brokers " +
                  std::to_string(brokers));
    }
    if (const Json* config = ScenarioReader::Find(spec, "config")) {
      topic.config = r.Settings(*config, p + "/config");
      if (base) CheckTopicSettings(r, *base, topic.config, p + "/config");
    }
    if (const Json* assignment = ScenarioReader::Find(spec, "assignment")) {
      const std::string ap = p + "/assignment";
      if (auto parsed = ParseAssignment(r, *assignment, ap, brokers)) {
        topic.assignment = std::move(*parsed);
        const auto count = static_cast<int32_t>(topic.assignment.size());
        const auto width = static_cast<int32_t>(topic.assignment.begin()->second.size());
        if (partitions && *partitions != count) {
          r.Error(ap, "assigns " + std::to_string(count) + " partitions but partitions is " +
                          std::to_string(*partitions));
        }
        if (factor && *factor != width) {
          r.Error(ap, "assigns " + std::to_string(width) +
                          " replicas per partition but replication_factor is " +
                          std::to_string(*factor));
        }
        topic.partitions = count;
        topic.replication_factor = width;
      }
    }
    topics.push_back(std::move(topic));
  }
  return topics;
}

FinalPhase ParseFinal(ScenarioReader& r, const Json& doc) {
  FinalPhase final_phase;
  const Json* json = ScenarioReader::Find(doc, "final");
  if (json == nullptr || !r.ExpectObject(*json, "/final", "the final phase")) return final_phase;
  r.CheckKeys(*json, "/final", "final");
  auto boolean = [&r](const Json& v, const std::string& p) { return r.Boolean(v, p); };
  if (auto v = r.Member(*json, "/final", "heal", boolean)) final_phase.heal = *v;
  if (auto v = r.Member(*json, "/final", "restart_all", boolean)) final_phase.restart_all = *v;
  if (auto v = r.Member(*json, "/final", "drain_ms", [&r](const Json& j, const std::string& p) {
        return r.Integer(j, p, 0, kMsMax);
      })) {
    final_phase.drain_ms = *v;
  }
  return final_phase;
}

std::vector<Expectation> ParseExpect(ScenarioReader& r, const Json& doc) {
  std::vector<Expectation> expect;
  const Json* json = ScenarioReader::Find(doc, "expect");
  if (json == nullptr || !r.ExpectObject(*json, "/expect", "expectations by metric")) {
    return expect;
  }
  const std::vector<std::string_view>& metrics = MetricNames();
  for (const auto& [metric, value] : json->items()) {
    const std::string p = JoinPointer("/expect", metric);
    if (metric == kSettledExpectation) {
      // Not a checker metric: whether the final phase settled (RunResult::drained).
      if (!value.is_boolean()) {
        r.Error(p,
                "expected true (the final phase settles: every broker up, every partition led, "
                "every replica in its ISR, every client done) or false, got " +
                    Describe(value));
        continue;
      }
      Expectation e;
      e.metric = metric;
      e.exact = value.get<bool>() ? 1 : 0;
      expect.push_back(std::move(e));
      continue;
    }
    if (std::find(metrics.begin(), metrics.end(), metric) == metrics.end()) {
      std::string message = "unknown metric \"" + metric + "\"";
      if (auto closest = ClosestName(metric, metrics)) {
        message += ": did you mean \"" + std::string(*closest) + "\"?";
      } else {
        message += " (metrics:";
        for (std::string_view name : metrics) message += " " + std::string(name);
        message += "; and \"" + std::string(kSettledExpectation) + "\": true or false)";
      }
      r.Error(p, message);
      continue;
    }
    Expectation e;
    e.metric = metric;
    if (value.is_object()) {
      r.CheckKeys(value, p, "range");
      auto bound = [&r](const Json& v, const std::string& bp) {
        return r.Integer(v, bp, 0, INT64_MAX);
      };
      e.min = r.Member(value, p, "min", bound);
      e.max = r.Member(value, p, "max", bound);
      if (const Json* cause = ScenarioReader::Find(value, "cause")) {
        const std::string cp = JoinPointer(p, "cause");
        if (!MetricHasCauses(metric)) {
          r.Error(cp,
                  "\"" + metric +
                      "\" does not count records, so it has no causes (a cause is for lost_acked, "
                      "unavailable_acked, log_duplicates, duplicated, undelivered, reordered, "
                      "and the reasons of permitted_losses)");
        } else if (!cause->is_string() || cause->get<std::string>().empty()) {
          r.Error(cp, "expected the text every cause contains (a non-empty string), got " +
                          Describe(*cause));
        } else {
          e.cause = cause->get<std::string>();
        }
      }
      if (ScenarioReader::Find(value, "min") == nullptr &&
          ScenarioReader::Find(value, "max") == nullptr) {
        r.Error(p, "a range needs \"min\", \"max\" or both");
        continue;
      }
      if (e.min && e.max && *e.min > *e.max) {
        r.Error(p,
                "min " + std::to_string(*e.min) + " is greater than max " + std::to_string(*e.max));
      }
    } else if (value.is_number()) {
      e.exact = r.Integer(value, p, 0, INT64_MAX);
    } else {
      r.Error(p, "expected a number (exact) or {\"min\": a, \"max\": b}, got " + Describe(value));
      continue;
    }
    expect.push_back(std::move(e));
  }
  return expect;
}

// Node names the network knows: brokers, zk, clients.
void CheckNodeName(ScenarioReader& r, const Scenario& s, const std::string& node,
                   const std::string& path) {
  std::vector<std::string> names = {"zk"};
  for (int32_t id = 1; id <= s.cluster.brokers; ++id)
    names.push_back("broker-" + std::to_string(id));
  for (const ClientSpec& client : s.clients) names.push_back(client.id);
  if (std::find(names.begin(), names.end(), node) != names.end()) return;
  std::vector<std::string_view> views(names.begin(), names.end());
  std::string message = "unknown node \"" + node + "\"";
  if (auto closest = ClosestName(node, views)) {
    message += ": did you mean \"" + std::string(*closest) + "\"?";
  } else {
    message += " (nodes: broker-1 .. broker-" + std::to_string(s.cluster.brokers) +
               ", zk and the client ids)";
  }
  r.Error(path, message);
}

// The whole document but `variants`.
Scenario ParseDocument(ScenarioReader& r, const Json& doc) {
  Scenario s;
  if (!doc.is_object()) {
    r.Error("", "expected a scenario (a JSON object), got " + Describe(doc));
    return s;
  }
  r.CheckKeys(doc, "", "scenario");
  if (const Json* version = ScenarioReader::Find(doc, "ksim")) {
    if (!version->is_number_integer() || version->get<int64_t>() != kScenarioFormatVersion) {
      r.Error("/ksim", "unsupported format version " + Describe(*version) +
                           " (this ksim reads \"ksim\": 1)");
    }
  }
  auto text = [&r](const Json& v, const std::string& p) { return r.String(v, p); };
  if (auto name = r.Member(doc, "", "name", text)) s.name = *name;
  if (auto v = r.Member(doc, "", "description", [&r](const Json& j, const std::string& p) {
        return r.String(j, p, /*allow_empty=*/true);
      })) {
    s.description = *v;
  }
  if (auto v = r.Member(doc, "", "seed",
                        [&r](const Json& j, const std::string& p) { return r.Unsigned(j, p); })) {
    s.seed = *v;
  }
  if (auto v = r.Member(doc, "", "duration_ms", [&r](const Json& j, const std::string& p) {
        return r.Integer(j, p, 1, kMsMax);
      })) {
    s.duration_ms = *v;
  }
  if (auto v = r.Member(doc, "", "kafka_version",
                        [&r](const Json& j, const std::string& p) { return r.String(j, p); })) {
    Result<KafkaRelease> release = ParseKafkaRelease(*v);
    if (release.ok()) {
      s.kafka_version = *release;
    } else {
      r.Error("/kafka_version", release.status().message());
    }
  }
  std::optional<BrokerConfig> base;
  s.cluster = ParseCluster(r, doc, s.kafka_version, base);
  // Topic and action settings are still checked when the cluster's own have errors: against
  // Kafka's defaults.
  if (!base) base = MakeBrokerConfig({}, s.kafka_version).value();
  s.policy = ParsePolicy(r, doc);
  s.topics = ParseTopics(r, doc, s.cluster.brokers, base);
  std::map<std::string, int32_t, std::less<>> topic_partitions;
  const Json* actions = ScenarioReader::Find(doc, "actions");
  if (actions != nullptr) topic_partitions = CliCreatedTopics(*actions);
  for (const TopicEntry& topic : s.topics) topic_partitions[topic.name] = topic.partitions;
  s.clients = ParseClients(r, doc, s, topic_partitions);
  for (size_t i = 0; i < s.cluster.network.links.size(); ++i) {
    const LinkOverride& link = s.cluster.network.links[i];
    const std::string p = "/cluster/network/links/" + std::to_string(i) + "/between/";
    if (!link.a.empty()) CheckNodeName(r, s, link.a, p + "0");
    if (!link.b.empty()) CheckNodeName(r, s, link.b, p + "1");
  }
  if (actions != nullptr) {
    s.actions = ParseActions(r, *actions, ActionContext{s, base, topic_partitions});
  }
  s.final_phase = ParseFinal(r, doc);
  s.expect = ParseExpect(r, doc);
  return s;
}

bool ValidVariantName(std::string_view name) {
  if (name.empty() || name.size() > 100) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
}

std::vector<ScenarioVariant> ParseVariants(ScenarioReader& r, const Json& doc,
                                           const std::vector<ScenarioError>& base_errors,
                                           const std::vector<ScenarioError>& base_warnings,
                                           std::string_view file,
                                           std::vector<ScenarioError>& warnings) {
  std::vector<ScenarioVariant> variants;
  const Json* json = ScenarioReader::Find(doc, "variants");
  if (json == nullptr || !r.ExpectObject(*json, "/variants", "variants by name")) return variants;
  Json base = doc;
  base.erase("variants");
  for (const auto& [name, patch] : json->items()) {
    const std::string p = JoinPointer("/variants", name);
    if (!ValidVariantName(name) || name == "base") {
      r.Error(p, name == "base" ? "\"base\" names the scenario itself; pick another name"
                                : "a variant name is letters, digits, '-', '_' or '.' "
                                  "(it names trace files)");
      continue;
    }
    if (!r.ExpectObject(patch, p, "a JSON Merge Patch over the scenario")) continue;
    if (patch.contains("variants")) {
      r.Error(p + "/variants", "a variant cannot have variants of its own");
      continue;
    }
    Json merged = base;
    merged.merge_patch(patch);
    ScenarioReader variant_reader;
    Scenario scenario = ParseDocument(variant_reader, merged);
    for (const ScenarioError& error : variant_reader.errors()) {
      if (std::find(base_errors.begin(), base_errors.end(), error) != base_errors.end()) continue;
      r.Error(p + error.path, error.message);
    }
    for (const ScenarioError& warning : variant_reader.warnings()) {
      if (std::find(base_warnings.begin(), base_warnings.end(), warning) != base_warnings.end()) {
        continue;
      }
      warnings.push_back(ScenarioError{p + warning.path, warning.message});
    }
    scenario.file = std::string(file);
    variants.push_back(ScenarioVariant{name, std::move(scenario)});
  }
  return variants;
}

// One error per line: control characters from the input (a key with "\n" in it) are escaped.
std::string OneLine(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char escaped[7];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned char>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

// nlohmann's byte position -> "line:column" (both from 1).
std::string LineColumn(std::string_view text, size_t byte) {
  const size_t at = std::min(byte == 0 ? 0 : byte - 1, text.size());
  size_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return std::to_string(line) + ":" + std::to_string(at - line_start + 1);
}

}  // namespace

Result<Scenario> ParseScenario(std::string_view text, std::string_view file_name) {
  Json doc;
  try {
    doc = ParseOrderedJson(text);
  } catch (const Json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ...":
    // keep what follows the position, which is ours.
    std::string what = e.what();
    const size_t colon = what.find(": ", what.find("parse error"));
    if (colon != std::string::npos) what = what.substr(colon + 2);
    return Status(Errc::kInvalidConfig,
                  OneLine(std::string(file_name) + ":" + LineColumn(text, e.byte) + ": " + what));
  } catch (const Json::out_of_range& e) {
    // A number too large for a double: "[json.exception.out_of_range.406] number overflow
    // parsing '1e999'", which carries no position; the number's first occurrence gives one.
    std::string what = e.what();
    if (const size_t close = what.find("] "); close != std::string::npos) {
      what = what.substr(close + 2);
    }
    size_t byte = 0;
    const size_t open = what.find('\'');
    const size_t end = what.rfind('\'');
    if (open != std::string::npos && end > open) {
      const size_t at = text.find(std::string_view(what).substr(open + 1, end - open - 1));
      if (at != std::string_view::npos) byte = at + 1;
    }
    return Status(Errc::kInvalidConfig,
                  OneLine(std::string(file_name) + ":" + LineColumn(text, byte) + ": " + what +
                          " (a JSON number must fit in a double)"));
  }
  ScenarioReader reader;
  Scenario scenario = ParseDocument(reader, doc);
  const std::vector<ScenarioError> base_errors = reader.errors();
  scenario.file = std::string(file_name);
  const std::vector<ScenarioError> base_warnings = reader.warnings();
  std::vector<ScenarioError> warnings = base_warnings;
  if (doc.is_object()) {
    scenario.variants = ParseVariants(reader, doc, base_errors, base_warnings, file_name, warnings);
  }
  for (const ScenarioError& warning : warnings) {
    scenario.warnings.push_back(OneLine(std::string(file_name) + ":" +
                                        (warning.path.empty() ? "/" : warning.path) + ": " +
                                        warning.message));
  }
  if (reader.error_count() == 0) return scenario;
  std::string message;
  for (const ScenarioError& error : reader.errors()) {
    if (!message.empty()) message += '\n';
    message += OneLine(std::string(file_name) + ":" + (error.path.empty() ? "/" : error.path) +
                       ": " + error.message);
  }
  return Status(Errc::kInvalidConfig, message);
}

Result<Scenario> LoadScenario(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Errc::kNotFound, path + ": cannot open the scenario file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status(Errc::kIoError, path + ": cannot read the scenario file");
  return ParseScenario(text.str(), path);
}

}  // namespace ksim::sim
