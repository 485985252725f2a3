// The loader's `clients` section (internal to sim/scenario/loader.cc): producer and consumer
// entries, their workloads and their Kafka-named settings. Settings are checked by core's
// ParseProducerConfig / ParseConsumerConfig (Kafka's messages), first one key at a time so that
// each error names its key's JSON Pointer, then all together for the checks between keys (an
// idempotent producer with acks=1). A producer's settings are those of the scenario's
// "kafka_version": acks=2 is Kafka's ConfigException text, and a key of a later release
// (enable.idempotence before 0.11.0) passes, as Kafka only warns (the run reports the warning).
// A consumer's settings are likewise its release's (max.poll.interval.ms before 0.10.1 warns).
// A consumer with "consumer": "zookeeper" is the old consumer: before 2.0 only, in a group, with
// the old consumer's keys (ParseZookeeperConsumerConfig), and from 0.10.1 not against 0.10.0
// brokers (OldConsumerCanTalkTo).
// A consumer's commit mode must agree with its group and settings: a
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
// Whether a client of release `client` can talk to brokers of release `brokers`: every pair but a
// 0.10.1 client and 0.10.0 brokers (kInvalidArgument saying why and what would do).
Status ClientCanTalkTo(KafkaRelease client, KafkaRelease brokers);
// Whether the old (ZooKeeper-based) consumer of release `client` can fetch from brokers of
// release `brokers`: it never negotiates versions, and from 0.10.1 it fetches with Fetch v3
// (KIP-74), which 0.10.0 brokers cannot parse. (That it is gone from 2.0 is the caller's check.)
Status OldConsumerCanTalkTo(KafkaRelease client, KafkaRelease brokers);

bool IsReservedNodeName(std::string_view name);

}  // namespace ksim::sim
