// The loader's `actions` section (sim/scenario/parse.h).
#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <sstream>

#include "core/base/text_distance.h"
#include "core/cluster/replica_assignment.h"
#include "core/cluster/topic.h"
#include "sim/scenario/cli.h"
#include "sim/scenario/clients.h"
#include "sim/scenario/keys.h"
#include "sim/scenario/parse.h"

namespace ksim::sim {
namespace {

constexpr int64_t kMsMax = INT64_MAX / 1000;

// kafka-topics.sh and kafka-preferred-replica-election.sh talk to ZooKeeper only; the console
// producer and the new console consumer are Java clients (ClientCanTalkTo); the console consumer
// with --zookeeper is the old consumer (OldConsumerCanTalkTo; at 2.0 the tool itself refuses
// --zookeeper when it runs, as Kafka's does).
Status CliCanTalkTo(const CliCommand& command, KafkaRelease tool, KafkaRelease brokers) {
  switch (command.tool) {
    case CliCommand::Tool::kTopics:
    case CliCommand::Tool::kPreferredReplicaElection:
      return Status::Ok();
    case CliCommand::Tool::kConsoleProducer:
      return ClientCanTalkTo(tool, brokers);
    case CliCommand::Tool::kConsoleConsumer:
      // At 0.8.2 the tool refuses --bootstrap-server and --new-consumer itself when it runs.
      if (tool < KafkaRelease::k0_10_0 && command.zookeeper.empty()) return Status::Ok();
      if (!command.zookeeper.empty() && tool < KafkaRelease::k2_0) {
        return OldConsumerCanTalkTo(tool, brokers);
      }
      return ClientCanTalkTo(tool, brokers);
  }
  return Status::Ok();
}

using Topics = std::map<std::string, int32_t, std::less<>>;

class ActionParser {
 public:
  ActionParser(ScenarioReader& r, const ActionContext& context) : r_(r), c_(context) {}

  // Getters for ScenarioReader::Member.
  auto Int(int64_t lo, int64_t hi) {
    return [this, lo, hi](const Json& v, const std::string& p) { return r_.Integer(v, p, lo, hi); };
  }
  auto Str(bool allow_empty = false) {
    return [this, allow_empty](const Json& v, const std::string& p) {
      return r_.String(v, p, allow_empty);
    };
  }

  std::optional<Action> Parse(const Json& json, size_t index) {
    const std::string p = "/actions/" + std::to_string(index);
    if (!r_.ExpectObject(json, p, "an action")) return std::nullopt;
    const Json* what = ScenarioReader::Find(json, "do");
    if (what == nullptr) {
      r_.Error(p + "/do", "required: what the action does (cli, crash, restart, ...)");
      return std::nullopt;
    }
    const std::optional<std::string> kind = r_.OneOf(*what, p + "/do", ActionNames());
    if (!kind) return std::nullopt;
    r_.CheckKeys(json, p, "action." + *kind);
    Action action;
    action.index = index;
    const std::optional<int64_t> at = r_.Member(json, p, "at_ms", Int(0, c_.scenario.duration_ms));
    if (at) action.at_ms = *at;
    const size_t errors = r_.error_count();
    std::optional<ActionKind> parsed = ParseKind(*kind, json, p);
    if (!parsed || !at || r_.error_count() != errors) return std::nullopt;
    action.what = std::move(*parsed);
    return action;
  }

 private:
  std::optional<ActionKind> ParseKind(const std::string& kind, const Json& j,
                                      const std::string& p) {
    if (kind == "cli") return ParseCli(j, p);
    if (kind == "crash") return CrashAction{TargetOf(j, p, {"broker", "leader_of", "client"})};
    if (kind == "restart") return RestartAction{TargetOf(j, p, {"broker", "client"})};
    if (kind == "shutdown") return ShutdownAction{TargetOf(j, p, {"broker", "leader_of"})};
    if (kind == "slow") {
      SlowAction slow{TargetOf(j, p, {"broker", "leader_of"})};
      slow.fetch_delay_ms = r_.Member(j, p, "fetch_delay_ms", Int(0, kMsMax)).value_or(0);
      slow.for_ms = r_.Member(j, p, "for_ms", Int(1, kMsMax)).value_or(0);
      return slow;
    }
    if (kind == "partition") return ParsePartition(j, p);
    if (kind == "heal") return HealAction{};
    if (kind == "crash_replicas") {
      CrashReplicasAction crash;
      if (auto topic = r_.Member(j, p, "topic", Str())) {
        crash.topic = *topic;
        if (CheckTopicKnown(r_, c_.topic_partitions, crash.topic, p + "/topic")) {
          const int32_t count = c_.topic_partitions.find(crash.topic)->second;
          if (auto n = r_.Member(j, p, "partition", Int(0, count - 1))) {
            crash.partition = static_cast<int32_t>(*n);
          }
        }
      }
      return crash;
    }
    if (kind == "disk_fault") {
      DiskFaultAction fault{TargetOf(j, p, {"broker", "leader_of"})};
      static const std::vector<std::string_view> kKinds = {"eio", "full", "corrupt_tail"};
      if (auto name = r_.Member(j, p, "kind", [this](const Json& v, const std::string& vp) {
            return r_.OneOf(v, vp, kKinds);
          })) {
        fault.kind = *name == "eio"    ? DiskFaultKind::kEio
                     : *name == "full" ? DiskFaultKind::kFull
                                       : DiskFaultKind::kCorruptTail;
      }
      return fault;
    }
    if (kind == "zk_expire") return ZkExpireAction{TargetOf(j, p, {"broker", "leader_of"})};
    if (kind == "zk_down") return ZkDownAction{};
    if (kind == "zk_up") return ZkUpAction{};
    if (kind == "produce") {
      ProduceAction produce;
      if (auto client = r_.Member(j, p, "client", Str())) {
        produce.client = *client;
        if (const ClientSpec* spec = KnownClient(*client, p + "/client");
            spec != nullptr && spec->type != ClientType::kProducer) {
          r_.Error(p + "/client", "\"" + *client + "\" is a consumer; produce needs a producer");
        }
      }
      produce.value = r_.Member(j, p, "value", Str(/*allow_empty=*/true)).value_or("");
      produce.key = r_.Member(j, p, "key", Str(/*allow_empty=*/true));
      return produce;
    }
    if (kind == "config") return ParseConfig(j, p);
    return std::nullopt;
  }

  const ClientSpec* KnownClient(const std::string& id, const std::string& path) {
    if (const ClientSpec* spec = c_.scenario.FindClient(id)) return spec;
    std::vector<std::string_view> ids;
    for (const ClientSpec& client : c_.scenario.clients) ids.push_back(client.id);
    std::string message = "unknown client \"" + id + "\"";
    if (auto closest = ClosestName(id, ids)) {
      message += ": did you mean \"" + std::string(*closest) + "\"?";
    } else if (ids.empty()) {
      message += " (the scenario has no clients)";
    }
    r_.Error(path, message);
    return nullptr;
  }

  std::optional<int32_t> Broker(const Json& v, const std::string& path) {
    const int32_t brokers = c_.scenario.cluster.brokers;
    if ((v.is_number_integer() || v.is_number_unsigned()) && v.get<int64_t>() >= 1 &&
        v.get<int64_t>() <= brokers) {
      return static_cast<int32_t>(v.get<int64_t>());
    }
    r_.Error(path,
             "unknown broker " + Describe(v) + ": brokers are 1 to " + std::to_string(brokers));
    return std::nullopt;
  }

  // "t-0": the topic (which may itself contain '-') and the partition after the last '-'.
  void LeaderOf(const Json& v, const std::string& path, Target& target) {
    const std::optional<std::string> text = r_.String(v, path);
    if (!text) return;
    const size_t dash = text->rfind('-');
    int32_t partition = -1;
    if (dash != std::string::npos && dash > 0) {
      const char* begin = text->data() + dash + 1;
      const char* end = text->data() + text->size();
      const auto [ptr, error] = std::from_chars(begin, end, partition);
      if (error != std::errc() || ptr != end || begin == end) partition = -1;
    }
    if (partition < 0) {
      r_.Error(path, "expected \"<topic>-<partition>\" (e.g. \"t-0\"), got \"" + *text + "\"");
      return;
    }
    target.topic = text->substr(0, dash);
    target.partition = partition;
    if (!CheckTopicKnown(r_, c_.topic_partitions, target.topic, path)) return;
    const int32_t count = c_.topic_partitions.find(target.topic)->second;
    if (partition >= count) {
      r_.Error(path, "topic \"" + target.topic + "\" has partitions 0 to " +
                         std::to_string(count - 1) + ", not " + std::to_string(partition));
    }
  }

  Target TargetOf(const Json& j, const std::string& p, std::vector<std::string_view> keys) {
    Target target;
    std::vector<std::string_view> given;
    for (std::string_view key : keys) {
      if (ScenarioReader::Find(j, key) != nullptr) given.push_back(key);
    }
    std::string names;
    for (std::string_view key : keys) {
      names += (names.empty() ? "\"" : (key == keys.back() ? " or \"" : ", \"")) +
               std::string(key) + "\"";
    }
    if (given.size() != 1) {
      r_.Error(p, given.empty() ? "say whom the action is aimed at: " + names
                                : "give only one of " + names);
      return target;
    }
    const std::string key(given.front());
    const Json& value = *ScenarioReader::Find(j, key);
    const std::string path = p + "/" + key;
    if (key == "broker") {
      target.kind = Target::Kind::kBroker;
      target.broker = Broker(value, path).value_or(0);
    } else if (key == "leader_of") {
      target.kind = Target::Kind::kLeaderOf;
      LeaderOf(value, path, target);
    } else {
      target.kind = Target::Kind::kClient;
      if (auto id = r_.String(value, path)) {
        target.client = *id;
        KnownClient(*id, path);
      }
    }
    return target;
  }

  std::optional<ActionKind> ParseCli(const Json& j, const std::string& p) {
    CliAction cli;
    const std::optional<std::string> command = r_.Member(j, p, "command", Str());
    if (!command) return std::nullopt;
    cli.command = *command;
    const std::string cp = p + "/command";
    Result<CliCommand> parsed = ParseCliCommand(*command);
    if (!parsed.ok()) {
      r_.Error(cp, parsed.status().message());
      return std::nullopt;
    }
    cli.parsed = std::move(parsed).value();
    const CliCommand& c = cli.parsed;
    cli.kafka_version = c_.scenario.kafka_version;
    if (auto v = r_.Member(j, p, "kafka_version", Str())) {
      // The tool's own release, as a client's (clients.cc): the console clients of a release
      // that cannot talk to the brokers are refused here.
      Result<KafkaRelease> release = ParseKafkaRelease(*v);
      const std::string vp = p + "/kafka_version";
      if (!release.ok()) {
        r_.Error(vp, release.status().message());
      } else if (Status talks = CliCanTalkTo(c, *release, c_.scenario.kafka_version); !talks.ok()) {
        r_.Error(vp, talks.message());
      } else {
        cli.kafka_version = *release;
      }
    }
    if (const Json* input = ScenarioReader::Find(j, "input")) {
      const bool json_file =
          c.tool == CliCommand::Tool::kPreferredReplicaElection && c.json_file.has_value();
      if (c.tool != CliCommand::Tool::kConsoleProducer && !json_file) {
        r_.Error(p + "/input",
                 c.tool == CliCommand::Tool::kPreferredReplicaElection
                     ? "input is the contents of --path-to-json-file, which the command does not "
                       "name"
                     : "only kafka-console-producer.sh and kafka-preferred-replica-election.sh "
                       "--path-to-json-file read input");
      } else if (!input->is_array()) {
        r_.Error(p + "/input", "expected an array of lines, got " + Describe(*input));
      } else {
        for (size_t i = 0; i < input->size(); ++i) {
          if (auto line = r_.String((*input)[i], p + "/input/" + std::to_string(i), true)) {
            cli.input.push_back(*line);
          }
        }
      }
    }
    const bool auto_create = c_.broker_config && c_.broker_config->auto_create_topics_enable;
    if (c.tool == CliCommand::Tool::kTopics) {
      if (c.action == CliCommand::TopicsAction::kCreate) {
        if (Status status = ValidateTopicName(*c.topic); !status.ok()) {
          r_.Error(cp, status.message());
        }
        if (c.replication_factor && *c.replication_factor > c_.scenario.cluster.brokers) {
          // Valid, as in the seed (`--replication-factor 4` on three brokers), but certain to be
          // refused when it runs, with Kafka's own message.
          r_.Warn(cp, "replication factor " + std::to_string(*c.replication_factor) +
                          " is more than the scenario's " +
                          std::to_string(c_.scenario.cluster.brokers) +
                          " brokers: the command will be refused (\"Error while executing topic "
                          "command : replication factor: " +
                          std::to_string(*c.replication_factor) +
                          " larger than available brokers: " +
                          std::to_string(c_.scenario.cluster.brokers) + "\")");
        }
        if (!c.replica_assignment.empty()) {
          std::vector<BrokerId> known;
          for (int32_t id = 1; id <= c_.scenario.cluster.brokers; ++id)
            known.push_back(BrokerId(id));
          if (Status status = ValidateReplicaAssignment(c.replica_assignment, known);
              !status.ok()) {
            r_.Error(cp, status.message());
          }
        }
        if (c_.broker_config) CheckTopicSettings(r_, *c_.broker_config, c.config, cp);
      } else if (c.topic) {
        CheckTopicKnown(r_, c_.topic_partitions, *c.topic, cp);
      }
    } else if (!auto_create && c.topic) {
      // With auto.create.topics.enable (the default) the console tools create the topic, as
      // Kafka's do; without it a topic nobody creates is a mistake.
      CheckTopicKnown(r_, c_.topic_partitions, *c.topic, cp);
    }
    return cli;
  }

  std::optional<ActionKind> ParsePartition(const Json& j, const std::string& p) {
    PartitionAction partition;
    partition.one_way = r_.Member(j, p, "one_way", [this](const Json& v, const std::string& vp) {
                            return r_.Boolean(v, vp);
                          }).value_or(false);
    const Json* sides = ScenarioReader::Find(j, "sides");
    if (sides == nullptr) return partition;
    const std::string sp = p + "/sides";
    if (!sides->is_array() || sides->size() < 2) {
      r_.Error(sp,
               "expected two or more sides, each an array of node names, got " + Describe(*sides));
      return partition;
    }
    std::set<std::string> seen;
    for (size_t i = 0; i < sides->size(); ++i) {
      const Json& side = (*sides)[i];
      const std::string path = sp + "/" + std::to_string(i);
      if (!side.is_array() || side.empty()) {
        r_.Error(path, "expected a non-empty array of node names, got " + Describe(side));
        continue;
      }
      std::vector<std::string> nodes;
      for (size_t k = 0; k < side.size(); ++k) {
        const std::string np = path + "/" + std::to_string(k);
        const std::optional<std::string> node = r_.String(side[k], np);
        if (!node) continue;
        CheckNode(*node, np);
        if (!seen.insert(*node).second) r_.Error(np, "\"" + *node + "\" is on two sides");
        nodes.push_back(*node);
      }
      partition.sides.push_back(std::move(nodes));
    }
    return partition;
  }

  void CheckNode(const std::string& node, const std::string& path) {
    std::vector<std::string> names = {"zk"};
    for (int32_t id = 1; id <= c_.scenario.cluster.brokers; ++id) {
      names.push_back("broker-" + std::to_string(id));
    }
    for (const ClientSpec& client : c_.scenario.clients) names.push_back(client.id);
    if (std::find(names.begin(), names.end(), node) != names.end()) return;
    std::vector<std::string_view> views(names.begin(), names.end());
    std::string message = "unknown node \"" + node + "\"";
    if (auto closest = ClosestName(node, views)) {
      message += ": did you mean \"" + std::string(*closest) + "\"?";
    } else {
      message += " (nodes: broker-1 .. broker-" + std::to_string(c_.scenario.cluster.brokers) +
                 ", zk and the client ids)";
    }
    r_.Error(path, message);
  }

  std::optional<ActionKind> ParseConfig(const Json& j, const std::string& p) {
    ConfigAction config;
    const Json* settings = ScenarioReader::Find(j, "config");
    if (settings != nullptr) config.config = r_.Settings(*settings, p + "/config");
    const bool has_topic = ScenarioReader::Find(j, "topic") != nullptr;
    const bool has_broker = ScenarioReader::Find(j, "broker") != nullptr;
    if (has_topic && has_broker) {
      r_.Error(p, "give only one of \"topic\" or \"broker\"");
      return config;
    }
    if (has_topic) {
      config.topic = r_.Member(j, p, "topic", Str());
      if (config.topic) CheckTopicKnown(r_, c_.topic_partitions, *config.topic, p + "/topic");
      if (c_.broker_config) CheckTopicSettings(r_, *c_.broker_config, config.config, p + "/config");
      return config;
    }
    if (has_broker) {
      config.broker = Broker(*ScenarioReader::Find(j, "broker"), p + "/broker");
    }
    // Its settings are checked with the ones earlier actions left pending (CheckBrokerConfigs).
    return config;
  }

  ScenarioReader& r_;
  const ActionContext& c_;
};

}  // namespace

std::string UnknownBrokerKeyMessage(std::string_view key, KafkaRelease release) {
  const std::string name(KafkaReleaseName(release));
  std::string message = "unknown broker configuration \"" + std::string(key) + "\"";
  if (const BrokerKeyChange* removal = BrokerKeyRemoval(key)) {
    return message + ": Kafka " + name + " has no such setting; Kafka " +
           std::string(KafkaReleaseName(KafkaReleases().front())) + " had it, until Kafka " +
           std::string(BrokerKeyChangeFrom(*removal)) + " removed it (" +
           std::string(removal->source) + "; set \"kafka_version\")";
  }
  if (std::optional<std::string_view> since = BrokerKeySince(key)) {
    return message + ": Kafka " + name + " has no such setting; it exists from Kafka " +
           std::string(*since) + " (set \"kafka_version\")";
  }
  const std::vector<std::string_view> names = BrokerConfigNames(release);
  if (std::optional<std::string_view> closest = ClosestName(key, names)) {
    message += ": did you mean \"" + std::string(*closest) + "\"?";
  } else {
    message += " (Kafka " + name + " has no such setting)";
  }
  return message;
}

void CheckTopicSettings(ScenarioReader& r, const BrokerConfig& broker,
                        const ConfigOverrides& settings, std::string_view path) {
  const std::vector<std::string_view> names = TopicConfigNames();
  for (const auto& [key, value] : settings) {
    const std::string key_path = JoinPointer(path, key);
    if (std::find(names.begin(), names.end(), key) == names.end()) {
      std::string message = "unknown topic configuration \"" + key + "\"";
      if (std::optional<std::string_view> closest = ClosestName(key, names)) {
        message += ": did you mean \"" + std::string(*closest) + "\"?";
      }
      r.Error(key_path, message);
      continue;
    }
    Result<TopicConfig> config = MakeTopicConfig(broker, {{key, value}}, key_path);
    if (config.ok()) continue;
    std::istringstream lines(config.status().message());
    std::string line;
    while (std::getline(lines, line)) {
      r.Error(key_path,
              line.starts_with(key_path + ": ") ? line.substr(key_path.size() + 2) : line);
    }
  }
}

bool CheckTopicKnown(ScenarioReader& r, const Topics& topic_partitions, std::string_view topic,
                     std::string_view path) {
  if (topic_partitions.find(topic) != topic_partitions.end()) return true;
  std::vector<std::string_view> names;
  for (const auto& [name, count] : topic_partitions) names.push_back(name);
  std::string message = "unknown topic \"" + std::string(topic) + "\"";
  if (std::optional<std::string_view> closest = ClosestName(topic, names)) {
    message += ": did you mean \"" + std::string(*closest) + "\"?";
  } else if (names.empty()) {
    message += " (no topic is declared in \"topics\" or created by a kafka-topics.sh --create)";
  } else {
    message += " (topics:";
    for (std::string_view name : names) message += " " + std::string(name);
    message += ")";
  }
  r.Error(path, message);
  return false;
}

Topics CliCreatedTopics(const Json& actions) {
  Topics topics;
  if (!actions.is_array()) return topics;
  for (const Json& action : actions) {
    const Json* what = ScenarioReader::Find(action, "do");
    const Json* command = ScenarioReader::Find(action, "command");
    if (what == nullptr || *what != "cli" || command == nullptr || !command->is_string()) {
      continue;
    }
    Result<CliCommand> parsed = ParseCliCommand(command->get<std::string>());
    if (!parsed.ok() || parsed->action != CliCommand::TopicsAction::kCreate) continue;
    const int32_t partitions = parsed->partitions
                                   ? *parsed->partitions
                                   : static_cast<int32_t>(parsed->replica_assignment.size());
    topics[*parsed->topic] = partitions;
  }
  return topics;
}

namespace {

// Reports every line of a rejected config at `path`, without a repeated "<path>: ".
void ConfigErrors(ScenarioReader& reader, const std::string& path, const Status& status) {
  std::istringstream lines(status.message());
  std::string line;
  while (std::getline(lines, line)) {
    reader.Error(path, line.starts_with(path + ": ") ? line.substr(path.size() + 2) : line);
  }
}

// A broker's `config` action takes effect at its next start, over what earlier actions set
// (Cluster::UpdateBrokerConfig): so a later action may depend on an earlier one, as the
// upgrade notes' two rolling restarts do (inter.broker.protocol.version first, then
// log.message.format.version, which may not be above it). Each action's settings are checked
// with the ones pending on every broker it names, in the order the actions run.
void CheckBrokerConfigs(ScenarioReader& reader, const std::vector<Action>& actions,
                        const ActionContext& context) {
  if (!context.broker_config) return;
  const BrokerConfig& base = *context.broker_config;
  std::map<int32_t, BrokerConfig> pending;
  for (int32_t id = 1; id <= context.scenario.cluster.brokers; ++id) {
    pending.emplace(id, base);
    for (const auto& [broker, own] : context.scenario.cluster.broker_config) {
      if (broker != id) continue;
      Result<BrokerConfig> applied = ApplyConfigOverrides(base, own, "broker_config");
      if (applied.ok()) pending.at(id) = std::move(*applied);
    }
  }
  for (const Action& action : actions) {
    const auto* config = std::get_if<ConfigAction>(&action.what);
    if (config == nullptr || config->topic) continue;
    const std::string path = "/actions/" + std::to_string(action.index) + "/config";
    bool reported = false;
    for (auto& [id, current] : pending) {
      if (config->broker && *config->broker != id) continue;
      Result<BrokerConfig> applied = ApplyConfigOverrides(current, config->config, path);
      if (applied.ok()) {
        // A key the release does not know is only a warning to Kafka; in a scenario, a mistake.
        if (!reported && applied->warnings.size() > current.warnings.size()) {
          for (const auto& [key, value] : config->config) {
            Result<BrokerConfig> alone = ApplyConfigOverrides(current, {{key, value}}, path);
            if (alone.ok() && alone->warnings.size() > current.warnings.size()) {
              reader.Error(JoinPointer(path, key), UnknownBrokerKeyMessage(key, base.release));
            }
          }
          reported = true;
        }
        current = std::move(*applied);
        continue;
      }
      if (reported) continue;
      reported = true;
      // Name the key: the first one that fails alone over what is pending, else the whole set.
      bool named = false;
      for (const auto& [key, value] : config->config) {
        const std::string key_path = JoinPointer(path, key);
        Result<BrokerConfig> alone = ApplyConfigOverrides(current, {{key, value}}, key_path);
        if (!alone.ok()) {
          ConfigErrors(reader, key_path, alone.status());
          named = true;
        }
      }
      if (!named) ConfigErrors(reader, path, applied.status());
    }
  }
}

}  // namespace

std::vector<Action> ParseActions(ScenarioReader& reader, const Json& actions,
                                 const ActionContext& context) {
  std::vector<Action> out;
  if (!actions.is_array()) {
    reader.Error("/actions", "expected an array of actions, got " + Describe(actions));
    return out;
  }
  ActionParser parser(reader, context);
  for (size_t i = 0; i < actions.size(); ++i) {
    if (std::optional<Action> action = parser.Parse(actions[i], i)) {
      out.push_back(std::move(*action));
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Action& a, const Action& b) { return a.at_ms < b.at_ms; });
  CheckBrokerConfigs(reader, out, context);
  return out;
}

}  // namespace ksim::sim
