#include "sim/scenario/clients.h"

#include <algorithm>
#include <sstream>

#include "core/base/text_distance.h"
#include "core/clients/consumer/consumer.h"
#include "core/clients/consumer/zookeeper_consumer.h"
#include "core/clients/producer/producer.h"
#include "sim/scenario/parse.h"

namespace ksim::sim {
namespace {

constexpr int64_t kMsMax = INT64_MAX / 1000;

void AddLines(ScenarioReader& r, const std::string& path, const std::string& message) {
  std::istringstream lines(message);
  std::string line;
  while (std::getline(lines, line)) r.Error(path, line);
}

// Each key alone (its own path), then all together (the client's config path).
template <class Parse>
void CheckSettings(ScenarioReader& r, const ConfigOverrides& settings, const std::string& path,
                   const std::string& bootstrap, Parse parse) {
  bool each_ok = true;
  for (const auto& [key, value] : settings) {
    const std::string key_path = JoinPointer(path, key);
    ConfigOverrides alone = {{"bootstrap.servers", bootstrap}};
    if (key != "bootstrap.servers") alone.emplace_back(key, value);
    if (key == "bootstrap.servers") alone.front().second = value;
    const Status status = parse(alone);
    if (!status.ok()) {
      AddLines(r, key_path, status.message());
      each_ok = false;
    }
  }
  if (!each_ok) return;
  ConfigOverrides all = settings;
  const bool has_bootstrap = std::any_of(
      all.begin(), all.end(), [](const auto& kv) { return kv.first == "bootstrap.servers"; });
  if (!has_bootstrap) all.insert(all.begin(), {"bootstrap.servers", bootstrap});
  const Status status = parse(all);
  if (!status.ok()) AddLines(r, path, status.message());
}

std::optional<std::string> Setting(const ConfigOverrides& settings, std::string_view key) {
  std::optional<std::string> found;
  for (const auto& [name, value] : settings) {
    if (name == key) found = value;
  }
  return found;
}

bool IsDigits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool ValidClientId(std::string_view id) {
  return !id.empty() && id.size() <= 100 && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
}

void ParseProducer(ScenarioReader& r, const Json& spec, const std::string& p, const Scenario& s,
                   const std::map<std::string, int32_t, std::less<>>& topics,
                   const std::string& bootstrap, ClientSpec& c) {
  auto count = [&r](const Json& v, const std::string& vp) {
    return r.Integer(v, vp, 0, INT64_MAX);
  };
  if (auto topic = r.Member(spec, p, "topic", [&r](const Json& v, const std::string& vp) {
        return r.String(v, vp);
      })) {
    c.topic = *topic;
    CheckTopicKnown(r, topics, c.topic, p + "/topic");
  }
  if (auto v = r.Member(spec, p, "messages", count)) c.messages = *v;
  if (auto v = r.Member(spec, p, "rate_per_s", count)) c.rate_per_s = *v;
  if (auto v = r.Member(spec, p, "key", [&r](const Json& j, const std::string& vp) {
        return r.String(j, vp, /*allow_empty=*/true);
      })) {
    c.key = *v;
  }
  if (c.rate_per_s > 1000000) {
    r.Error(p + "/rate_per_s", "at most 1000000 per second (one message per microsecond)");
  }
  CheckSettings(r, c.config, p + "/config", bootstrap,
                [release = c.kafka_version](const ConfigOverrides& settings) {
                  return ParseProducerConfig(settings, release).status();
                });
}

// "consumer": "zookeeper": the old consumer (core/clients/consumer/zookeeper_consumer.h). It
// exists before 2.0 only, is always in a group, and takes its own keys (0.10.0.1's
// kafka/consumer/ConsumerConfig.scala: auto.commit.enable, auto.offset.reset smallest/largest,
// zookeeper.session.timeout.ms, ...), each checked alone by ParseZookeeperConsumerConfig.
void ParseOldConsumer(ScenarioReader& r, const std::string& p, const Scenario& s, ClientSpec& c) {
  if (c.kafka_version >= KafkaRelease::k2_0) {
    r.Error(p + "/consumer",
            "the old consumer (kafka.consumer.ZookeeperConsumerConnector) does not exist in "
            "Kafka " +
                std::string(KafkaReleaseName(c.kafka_version)) +
                " (removed in 2.0, KAFKA-2983): use \"group-coordinator\", or a kafka_version "
                "before 2.0");
    return;
  }
  if (Status talks = OldConsumerCanTalkTo(c.kafka_version, s.kafka_version); !talks.ok()) {
    r.Error(p + "/kafka_version", talks.message());
  }
  if (c.group.empty()) {
    r.Error(p + "/group", "the old consumer needs a group (its group.id is required)");
    return;
  }
  const std::optional<std::string> auto_commit = Setting(c.config, "auto.commit.enable");
  if (auto_commit && (*auto_commit == "true") != (c.commit == CommitKind::kAuto)) {
    r.Error(p + "/config/auto.commit.enable",
            "contradicts \"commit\": \"auto\" commits automatically, \"before-processing\" and "
            "\"after-processing\" commit explicitly (leave auto.commit.enable out)");
  }
  const std::optional<std::string> group_id = Setting(c.config, "group.id");
  if (group_id && *group_id != c.group) {
    r.Error(p + "/config/group.id",
            "contradicts \"group\" (\"" + c.group + "\"): name the group once, in \"group\"");
  }
  for (const auto& [key, value] : c.config) {
    const Status status =
        ParseZookeeperConsumerConfig({{"group.id", c.group}, {key, value}}).status();
    if (!status.ok()) AddLines(r, JoinPointer(p + "/config", key), status.message());
  }
}

void ParseConsumer(ScenarioReader& r, const Json& spec, const std::string& p, const Scenario& s,
                   const std::map<std::string, int32_t, std::less<>>& topics,
                   const std::string& bootstrap, ClientSpec& c) {
  if (const Json* list = ScenarioReader::Find(spec, "topics")) {
    if (!list->is_array() || list->empty()) {
      r.Error(p + "/topics", "expected a non-empty array of topic names, got " + Describe(*list));
    } else {
      for (size_t i = 0; i < list->size(); ++i) {
        const std::string tp = p + "/topics/" + std::to_string(i);
        if (auto topic = r.String((*list)[i], tp)) {
          CheckTopicKnown(r, topics, *topic, tp);
          c.topics.push_back(*topic);
        }
      }
    }
  }
  if (auto v = r.Member(spec, p, "group",
                        [&r](const Json& j, const std::string& vp) { return r.String(j, vp); })) {
    c.group = *v;
  }
  static const std::vector<std::string_view> kCommits = {"auto", "before-processing",
                                                         "after-processing"};
  if (auto v = r.Member(spec, p, "commit", [&r](const Json& j, const std::string& vp) {
        return r.OneOf(j, vp, kCommits);
      })) {
    c.commit = *v == "auto"                ? CommitKind::kAuto
               : *v == "before-processing" ? CommitKind::kBeforeProcessing
                                           : CommitKind::kAfterProcessing;
  }
  if (auto v = r.Member(spec, p, "processing_ms", [&r](const Json& j, const std::string& vp) {
        return r.Integer(j, vp, 0, kMsMax);
      })) {
    c.processing_ms = *v;
  }
  static const std::vector<std::string_view> kKinds = {"group-coordinator", "zookeeper"};
  if (auto v = r.Member(spec, p, "consumer", [&r](const Json& j, const std::string& vp) {
        return r.OneOf(j, vp, kKinds);
      })) {
    c.zookeeper_consumer = *v == "zookeeper";
  }
  if (c.zookeeper_consumer) return ParseOldConsumer(r, p, s, c);
  if (c.kafka_version < KafkaRelease::k0_10_0) {
    // 0.8.2.2 has only kafka.consumer (the old consumer); its brokers have no group coordinator
    // (0.8.2.2:KafkaApis.handle has no JoinGroup handler); the new consumer is 0.9.0 (KAFKA-1326).
    r.Error(ScenarioReader::Find(spec, "consumer") != nullptr ? p + "/consumer" : p,
            "Kafka " + std::string(KafkaReleaseName(c.kafka_version)) +
                " has no group-coordinated consumer (the new consumer and the group "
                "coordinator exist from Kafka 0.9.0; ksim models them from 0.10.0): use "
                "\"consumer\": \"zookeeper\", the old consumer, or a later kafka_version");
    return;
  }
  if (c.commit != CommitKind::kAuto && c.group.empty()) {
    r.Error(p + "/commit", "committing offsets needs a group: set \"group\" or use \"auto\"");
  }
  const std::optional<std::string> auto_commit = Setting(c.config, "enable.auto.commit");
  if (auto_commit && (*auto_commit == "true") != (c.commit == CommitKind::kAuto)) {
    r.Error(p + "/config/enable.auto.commit",
            "contradicts \"commit\": \"auto\" commits automatically, \"before-processing\" and "
            "\"after-processing\" commit explicitly (leave enable.auto.commit out)");
  }
  const std::optional<std::string> group_id = Setting(c.config, "group.id");
  if (group_id && *group_id != c.group) {
    r.Error(p + "/config/group.id",
            "contradicts \"group\" (\"" + c.group + "\"): name the group once, in \"group\"");
  }
  // The consumer's checks between keys (heartbeat below the session timeout, request timeout
  // above it and the fetch wait) see the other given keys of that kind when one key is checked
  // alone: at 0.10.0 (request.timeout.ms 40000) a 45 s session is valid only with the request
  // timeout the scenario gives with it.
  const ConfigOverrides& given = c.config;
  CheckSettings(r, c.config, p + "/config", bootstrap,
                [release = c.kafka_version, &given](const ConfigOverrides& settings) {
                  ConfigOverrides with = settings;
                  for (std::string_view key : {"session.timeout.ms", "heartbeat.interval.ms",
                                               "request.timeout.ms", "fetch.max.wait.ms"}) {
                    const std::optional<std::string> value = Setting(given, key);
                    if (!value || Setting(settings, key) || !IsDigits(*value)) continue;
                    with.emplace_back(std::string(key), *value);
                  }
                  return ParseConsumerConfig(with, release).status();
                });
}

}  // namespace

Status ClientCanTalkTo(KafkaRelease client, KafkaRelease brokers) {
  // A 0.8.2 broker has no ApiVersions (KIP-35, 0.10.0) and parses only v0 of Produce, Fetch,
  // Metadata and ListOffsets (0.8.2.2's kafka.api.*Request, `CurrentVersion`): every later
  // client sends newer versions and the broker closes its connection.
  if (brokers < KafkaRelease::k0_10_0 && client > brokers) {
    return Status(Errc::kInvalidArgument,
                  "a Kafka " + std::string(KafkaReleaseName(client)) +
                      " client cannot talk to Kafka 0.8.2 brokers (they parse only the first "
                      "version of each request and have no ApiVersions, KIP-35): use 0.8.2");
  }
  // A client talks to brokers of its own release or later (a broker serves every older version).
  // A newer client negotiates down with ApiVersions from 0.10.2 (KIP-97: brokers from 0.10.0);
  // a 0.10.1 client sends its own versions (JoinGroup v1, Metadata v2), which a 0.10.0 broker
  // cannot parse: it closes the connection at every request.
  if (client == KafkaRelease::k0_10_1 && brokers == KafkaRelease::k0_10_0) {
    return Status(Errc::kInvalidArgument,
                  "a Kafka 0.10.1 client cannot talk to Kafka 0.10.0 brokers (it does not "
                  "negotiate versions; clients from 0.10.2 do, KIP-97): use 0.10.0, or 0.10.2 "
                  "or later (" +
                      KafkaReleaseList() + ")");
  }
  return Status::Ok();
}

Status OldConsumerCanTalkTo(KafkaRelease client, KafkaRelease brokers) {
  if (brokers < KafkaRelease::k0_10_0 && client > brokers) {
    // FetchRequest.CurrentVersion is 0 at 0.8.2.2 and 2 at 0.10.0.1.
    return Status(Errc::kInvalidArgument,
                  "the old consumer of Kafka " + std::string(KafkaReleaseName(client)) +
                      " cannot fetch from Kafka 0.8.2 brokers (it sends Fetch v2 or later, "
                      "which they cannot parse, and never negotiates versions): use 0.8.2");
  }
  // kafka.consumer.ConsumerFetcherThread asks with FetchRequest.CurrentVersion: 2 at 0.10.0.1, 3
  // from 0.10.1.0 to 1.1.0 (kafka/api/FetchRequest.scala); the Scala clients have no ApiVersions.
  // A 0.10.0 broker serves Fetch 0-2 and closes the connection of anything newer.
  if (client >= KafkaRelease::k0_10_1 && brokers == KafkaRelease::k0_10_0) {
    return Status(Errc::kInvalidArgument,
                  "the old consumer of Kafka " + std::string(KafkaReleaseName(client)) +
                      " cannot fetch from Kafka 0.10.0 brokers (it sends Fetch v3, KIP-74, and "
                      "never negotiates versions): use 0.10.0");
  }
  return Status::Ok();
}

bool IsReservedNodeName(std::string_view name) {
  if (name == "zk" || name == "admin" || name == "world") return true;
  if (!name.starts_with("broker-") || name.size() == 7) return false;
  return std::all_of(name.begin() + 7, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<ClientSpec> ParseClients(
    ScenarioReader& r, const Json& doc, const Scenario& s,
    const std::map<std::string, int32_t, std::less<>>& topic_partitions) {
  std::vector<ClientSpec> clients;
  const Json* json = ScenarioReader::Find(doc, "clients");
  if (json == nullptr || !r.ExpectObject(*json, "/clients", "clients by id")) return clients;
  std::string bootstrap;
  for (int32_t id = 1; id <= s.cluster.brokers; ++id) {
    bootstrap += (id == 1 ? "" : ",") + std::string("broker-") + std::to_string(id) + ":9092";
  }
  static const std::vector<std::string_view> kTypes = {"producer", "consumer"};
  for (const auto& [id, spec] : json->items()) {
    const std::string p = JoinPointer("/clients", id);
    if (!ValidClientId(id)) {
      r.Error(p, "a client id is letters, digits, '-', '_' or '.' (it names a network node)");
    } else if (IsReservedNodeName(id)) {
      r.Error(p, "\"" + id + "\" is a node of the cluster itself; pick another client id");
    }
    if (!r.ExpectObject(spec, p, "a client")) continue;
    ClientSpec c;
    c.id = id;
    const Json* type = ScenarioReader::Find(spec, "type");
    if (type == nullptr) {
      r.Error(p + "/type", "required: \"producer\" or \"consumer\"");
      continue;
    }
    const std::optional<std::string> type_name = r.OneOf(*type, p + "/type", kTypes);
    if (!type_name) continue;
    c.type = *type_name == "producer" ? ClientType::kProducer : ClientType::kConsumer;
    r.CheckKeys(spec, p, *type_name);
    if (auto v = r.Member(spec, p, "start_ms", [&r, &s](const Json& j, const std::string& vp) {
          return r.Integer(j, vp, 0, s.duration_ms);
        })) {
      c.start_ms = *v;
    }
    if (const Json* config = ScenarioReader::Find(spec, "config")) {
      c.config = r.Settings(*config, p + "/config");
    }
    c.kafka_version = s.kafka_version;
    if (auto v = r.Member(spec, p, "kafka_version",
                          [&r](const Json& j, const std::string& vp) { return r.String(j, vp); })) {
      Result<KafkaRelease> release = ParseKafkaRelease(*v);
      if (!release.ok()) {
        r.Error(p + "/kafka_version", release.status().message());
      } else if (Status talks = ClientCanTalkTo(*release, s.kafka_version); !talks.ok()) {
        r.Error(p + "/kafka_version", talks.message());
      } else {
        c.kafka_version = *release;
      }
    }
    if (c.type == ClientType::kProducer) {
      ParseProducer(r, spec, p, s, topic_partitions, bootstrap, c);
    } else {
      ParseConsumer(r, spec, p, s, topic_partitions, bootstrap, c);
    }
    clients.push_back(std::move(c));
  }
  return clients;
}

}  // namespace ksim::sim
