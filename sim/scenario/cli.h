// The seed's command lines inside a scenario's `cli` action, parsed at load time into a
// CliCommand (sim/scenario/scenario.h): kafka-topics.sh --create/--list/--describe/--delete with
// --zookeeper, --topic, --partitions, --replication-factor, --config k=v, --replica-assignment;
// kafka-console-producer.sh --broker-list --topic; kafka-console-consumer.sh --zookeeper or
// --bootstrap-server, --topic, --from-beginning, --group, --max-messages;
// kafka-preferred-replica-election.sh --zookeeper [--path-to-json-file].
//
// The command is split into words as a POSIX shell would for plain words and '…' / "…" quotes
// (no expansion); a leading `sh` or `bash` (the seed writes `sh kafka-topics.sh ...`) is dropped;
// the tool is the first word's base name with or without ".sh"; options are
// --name value or --name=value, as joptsimple (Kafka's option parser) takes them. Errors are the
// words Kafka's tools print (`Missing required argument "[topic]"`, `--foo is not a recognized
// option`) as kInvalidArgument. Host names are kept, never resolved: they all mean the simulated
// cluster. Only the command line is checked here; the loader checks what it names (topics,
// brokers, configs) against the scenario. Pure functions.
#pragma once

#include <string_view>

#include "core/base/status.h"
#include "sim/scenario/scenario.h"

namespace ksim::sim {

Result<CliCommand> ParseCliCommand(std::string_view command);

// "kafka-topics.sh", "kafka-console-producer.sh", "kafka-console-consumer.sh",
// "kafka-preferred-replica-election.sh".
std::string_view CliToolName(CliCommand::Tool tool);

}  // namespace ksim::sim
