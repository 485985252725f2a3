// The loader's sections (sim/scenario/loader.cc: document, cluster, topics, clients, final,
// expect, variants; sim/scenario/actions.cc: actions), sharing one ScenarioReader for errors.
// Internal to the loader; see sim/scenario/loader.h for what is checked.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/config/server_config.h"
#include "sim/scenario/reader.h"
#include "sim/scenario/scenario.h"

namespace ksim::sim {

// What the actions are checked against: the scenario parsed so far (brokers, topics, clients,
// duration) and the cluster's broker configuration (nullopt when it has errors of its own).
struct ActionContext {
  const Scenario& scenario;
  const std::optional<BrokerConfig>& broker_config;
  // Topic -> partition count: `topics` plus every kafka-topics.sh --create.
  const std::map<std::string, int32_t, std::less<>>& topic_partitions;
};

// Topics that `cli` actions create (kafka-topics.sh --create), with their partition counts.
// Malformed actions are skipped here (ParseActions reports them).
std::map<std::string, int32_t, std::less<>> CliCreatedTopics(const Json& actions);

// Parses and checks `actions` (an array; path "/actions"), sorted by at_ms (stable).
std::vector<Action> ParseActions(ScenarioReader& reader, const Json& actions,
                                 const ActionContext& context);

// Shared checks.
// "unknown broker configuration \"x\": did you mean \"y\"?" (Kafka itself only warns).
std::string UnknownBrokerKeyMessage(std::string_view key, KafkaRelease release);
// Topic settings through MakeTopicConfig, each error at its key's path.
void CheckTopicSettings(ScenarioReader& reader, const BrokerConfig& broker,
                        const ConfigOverrides& settings, std::string_view path);
// Records an error unless `topic` is known; did-you-mean among the known ones.
bool CheckTopicKnown(ScenarioReader& reader,
                     const std::map<std::string, int32_t, std::less<>>& topic_partitions,
                     std::string_view topic, std::string_view path);

}  // namespace ksim::sim
