#include "sim/scenario/scenario.h"

#include <type_traits>

#include "core/cluster/partition.h"

namespace ksim::sim {

const TopicEntry* Scenario::FindTopic(std::string_view topic) const {
  for (const TopicEntry& entry : topics) {
    if (entry.name == topic) return &entry;
  }
  return nullptr;
}

const ClientSpec* Scenario::FindClient(std::string_view id) const {
  for (const ClientSpec& client : clients) {
    if (client.id == id) return &client;
  }
  return nullptr;
}

std::string Scenario::TruncationPolicyName() const {
  if (!policy.truncation.empty()) return policy.truncation;
  return std::string(ksim::TruncationPolicyName(DefaultTruncationPolicy(kafka_version)));
}

std::string_view ActionName(const ActionKind& what) {
  return std::visit(
      [](const auto& action) -> std::string_view {
        using T = std::decay_t<decltype(action)>;
        if constexpr (std::is_same_v<T, CliAction>) return "cli";
        if constexpr (std::is_same_v<T, CrashAction>) return "crash";
        if constexpr (std::is_same_v<T, RestartAction>) return "restart";
        if constexpr (std::is_same_v<T, ShutdownAction>) return "shutdown";
        if constexpr (std::is_same_v<T, SlowAction>) return "slow";
        if constexpr (std::is_same_v<T, PartitionAction>) return "partition";
        if constexpr (std::is_same_v<T, HealAction>) return "heal";
        if constexpr (std::is_same_v<T, CrashReplicasAction>) return "crash_replicas";
        if constexpr (std::is_same_v<T, DiskFaultAction>) return "disk_fault";
        if constexpr (std::is_same_v<T, ZkExpireAction>) return "zk_expire";
        if constexpr (std::is_same_v<T, ZkDownAction>) return "zk_down";
        if constexpr (std::is_same_v<T, ZkUpAction>) return "zk_up";
        if constexpr (std::is_same_v<T, ProduceAction>) return "produce";
        if constexpr (std::is_same_v<T, ConfigAction>) return "config";
      },
      what);
}

const std::vector<std::string_view>& MetricNames() {
  static const std::vector<std::string_view> kNames = {
      "sent",
      "acked",
      "lost_acked",
      "unavailable_acked",
      "lost_unacked",
      "failed_in_log",
      "log_duplicates",
      "duplicated",
      "reordered",
      "undelivered",
      "replica_divergence",
      "unavailable_ms",
      "elections",
      "unclean_elections",
      "truncated_records",
      "permitted_losses",
      "invariant_violations",
  };
  return kNames;
}

const char* AnomalyKindOf(std::string_view metric) {
  if (metric == "lost_acked") return "lost_acked";
  if (metric == "unavailable_acked") return "unavailable_acked";
  if (metric == "failed_in_log") return "failed_in_log";
  if (metric == "log_duplicates") return "log_duplicate";
  if (metric == "duplicated") return "duplicated";
  if (metric == "undelivered") return "undelivered";
  if (metric == "reordered") return "reordered";
  return nullptr;
}

bool MetricHasCauses(std::string_view metric) {
  return AnomalyKindOf(metric) != nullptr || metric == "permitted_losses";
}

}  // namespace ksim::sim
