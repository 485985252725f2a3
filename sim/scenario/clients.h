// The loader's `clients` section (internal to sim/scenario/loader.cc): producer and consumer
// entries, their workloads and their Kafka-named settings. Settings are checked by core's
// ParseProducerConfig / ParseConsumerConfig (Kafka's messages), first one key at a time so that
// each error names its key's JSON Pointer, then all together for the checks between keys (an
// idempotent producer with acks=1). acks gets the format's own message first, since its legacy
// acks=N is the seed's. A consumer's commit mode must agree with its group and settings: a
// commit other than "auto" needs a group; enable.auto.commit and group.id may not contradict
// `commit` and `group` (sim/cluster/clients.h refuses the same).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/scenario/reader.h"
#include "sim/scenario/scenario.h"

namespace ksim::sim {

std::vector<ClientSpec> ParseClients(
    ScenarioReader& reader, const Json& doc, const Scenario& scenario,
    const std::map<std::string, int32_t, std::less<>>& topic_partitions);

// Node names the cluster uses itself, which a client id may not take: zk, admin, world,
// broker-<n>.
bool IsReservedNodeName(std::string_view name);

}  // namespace ksim::sim
