// Loading a scenario file (docs/scenarios.md; docs/DESIGN.md, "Scenario format (version 1)")
// into a validated Scenario (sim/scenario/scenario.h), with every error found reported at once.
//
// What is checked without running anything:
// - JSON syntax: "<file>:<line>:<column>: <what nlohmann/json found>" (lines and columns from 1,
//   columns in bytes), and nothing else is checked.
// - The document: types, ranges and names of every key (unknown keys get the closest valid
//   name), each as "<file>:<JSON Pointer>: <message>" ("s.json:/clients/p1/config/acks: expected
//   one of ..."). Kafka-named settings go through core's own parsers, so their messages are
//   Kafka's: broker settings through MakeBrokerConfig (cluster.config, then each broker's
//   broker_config on top), topic settings through MakeTopicConfig, client settings through
//   ParseProducerConfig / ParseConsumerConfig. Names: election policies (MakeElectionPolicy),
//   truncation policies (ParseTruncationPolicy), metrics, action kinds.
// - Cross references: broker ids within 1..brokers; topics named by clients and actions exist
//   (in `topics` or created by an earlier `cli` kafka-topics.sh --create); partitions within
//   the topic's count ("leader_of": "t-0"); clients named by actions exist and have the right
//   type; nodes named by network links and partitions exist; actions lie within duration_ms.
// - Variants: each is an RFC 7386 JSON Merge Patch over the base document; the merged document
//   is validated as a whole and its errors are reported under "/variants/<name>" (an error the
//   base already has is reported once, for the base).
//
// Errors are one kInvalidConfig Status whose message holds one error per line, in document
// order. Never asserts on input; pure functions apart from LoadScenario reading the file.
#pragma once

#include <string>
#include <string_view>

#include "core/base/status.h"
#include "sim/scenario/scenario.h"

namespace ksim::sim {

// The scenario format version this loader reads ("ksim": 1).
inline constexpr int kScenarioFormatVersion = 1;

// Parses `text`; `file_name` starts every error line.
Result<Scenario> ParseScenario(std::string_view text, std::string_view file_name);
// Reads the file at `path` (kNotFound / kIoError naming it) and parses it.
Result<Scenario> LoadScenario(const std::string& path);

}  // namespace ksim::sim
