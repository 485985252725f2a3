#include "sim/scenario/keys.h"

#include "core/base/check.h"

namespace ksim::sim {

const std::vector<ScenarioObjectKeys>& ScenarioKeyTable() {
  static const std::vector<ScenarioObjectKeys> kTable = {
      {"scenario",
       {"ksim", "name"},
       {"description", "seed", "duration_ms", "kafka_version", "cluster", "policy", "topics",
        "clients", "actions", "final", "expect", "variants"}},
      {"cluster", {}, {"brokers", "config", "broker_config", "zookeeper", "network", "disk"}},
      {"zookeeper",
       {},
       {"tickTime", "minSessionTimeout", "maxSessionTimeout", "session.timeout.ms"}},
      {"network", {}, {"latency_ms", "loss", "bandwidth_bytes_per_s", "links"}},
      {"link", {"between"}, {"latency_ms", "loss", "bandwidth_bytes_per_s"}},
      {"disk",
       {},
       {"read_latency_us", "write_latency_us", "fsync_latency_us", "metadata_latency_us",
        "capacity_bytes"}},
      {"policy", {}, {"election", "truncation"}},
      {"topic", {}, {"partitions", "replication_factor", "config", "assignment"}},
      {"producer",
       {"type", "topic"},
       {"messages", "rate_per_s", "start_ms", "key", "config", "kafka_version"}},
      {"consumer",
       {"type", "topics"},
       {"group", "start_ms", "commit", "processing_ms", "config", "kafka_version", "consumer"}},
      {"final", {}, {"heal", "restart_all", "drain_ms"}},
      {"range", {}, {"min", "max", "cause"}},
      {"action.cli", {"at_ms", "do", "command"}, {"input", "kafka_version"}},
      {"action.crash", {"at_ms", "do"}, {"broker", "leader_of", "client"}},
      {"action.restart", {"at_ms", "do"}, {"broker", "client"}},
      {"action.shutdown", {"at_ms", "do"}, {"broker", "leader_of"}},
      {"action.slow", {"at_ms", "do", "fetch_delay_ms", "for_ms"}, {"broker", "leader_of"}},
      {"action.partition", {"at_ms", "do", "sides"}, {"one_way"}},
      {"action.heal", {"at_ms", "do"}, {}},
      {"action.crash_replicas", {"at_ms", "do", "topic", "partition"}, {}},
      {"action.disk_fault", {"at_ms", "do", "kind"}, {"broker", "leader_of"}},
      {"action.zk_expire", {"at_ms", "do"}, {"broker", "leader_of"}},
      {"action.zk_down", {"at_ms", "do"}, {}},
      {"action.zk_up", {"at_ms", "do"}, {}},
      {"action.produce", {"at_ms", "do", "client", "value"}, {"key"}},
      {"action.config", {"at_ms", "do", "config"}, {"topic", "broker"}},
  };
  return kTable;
}

const ScenarioObjectKeys& KeysOf(std::string_view kind) {
  for (const ScenarioObjectKeys& entry : ScenarioKeyTable()) {
    if (entry.kind == kind) return entry;
  }
  KSIM_CHECK_MSG(false, "not a scenario object kind");
  return ScenarioKeyTable().front();
}

std::vector<std::string_view> AllKeysOf(std::string_view kind) {
  const ScenarioObjectKeys& entry = KeysOf(kind);
  std::vector<std::string_view> keys = entry.required;
  keys.insert(keys.end(), entry.optional.begin(), entry.optional.end());
  return keys;
}

const std::vector<std::string_view>& ActionNames() {
  static const std::vector<std::string_view> kNames = {
      "cli",       "crash", "restart",        "shutdown",   "slow",
      "partition", "heal",  "crash_replicas", "disk_fault", "zk_expire",
      "zk_down",   "zk_up", "produce",        "config"};
  return kNames;
}

}  // namespace ksim::sim
