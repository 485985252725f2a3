#include "sim/explore/swarm.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "core/base/check.h"
#include "core/base/text_distance.h"
#include "core/base/trace_names.h"

namespace ksim::sim {
namespace {

using Json = nlohmann::ordered_json;

constexpr int64_t kFirstFaultMs = 500;       // clients start a second or two in; faults may lead
constexpr int kMaxGenerationSteps = 100000;  // a bound on the generator's loop

bool IsRepair(FaultKind kind) { return kind == FaultKind::kRestart || kind == FaultKind::kHeal; }

// Actions in time order (with std::stable_sort: ties keep their generation order).
bool EarlierAction(const Json& a, const Json& b) { return a["at_ms"] < b["at_ms"]; }

// The ZooKeeper address the generated command lines name (never resolved: docs/scenarios.md).
constexpr std::string_view kZkConnect = "localhost:2181";

// A duration drawn on one of a few scales, so that short and long ones both happen.
int64_t ScaledDuration(RandomStream& random, std::initializer_list<int64_t> scales_ms) {
  const auto pick =
      static_cast<size_t>(random.UniformInt(0, static_cast<int64_t>(scales_ms.size()) - 1));
  const int64_t scale = *(scales_ms.begin() + pick);
  return random.UniformInt(std::max<int64_t>(1, scale / 4), scale);
}

std::string PartitionName(const ScheduleShape::PartitionInfo& p) {
  return p.topic + "-" + std::to_string(p.partition);
}

class Generator {
 public:
  Generator(const ScheduleShape& shape, const SwarmLimits& limits, const SwarmProfile& profile,
            RandomStream& random)
      : shape_(shape), limits_(limits), profile_(profile), random_(random) {
    for (FaultKind kind : limits.kinds) allowed_.insert(kind);
    if (limits.kinds.empty()) {
      for (size_t i = 0; i < FaultKindNames().size(); ++i) {
        allowed_.insert(static_cast<FaultKind>(i));
      }
    }
  }

  std::vector<Json> Run() {
    // Each enabled kind's next strike.
    std::vector<std::pair<int64_t, size_t>> due;
    for (size_t i = 0; i < profile_.enabled.size(); ++i) {
      due.emplace_back(kFirstFaultMs + random_.Exponential(profile_.enabled[i].mean_gap_ms), i);
    }
    int faults = 0;
    for (int step = 0; step < kMaxGenerationSteps && !due.empty(); ++step) {
      auto next = std::min_element(due.begin(), due.end());
      const int64_t t = next->first;
      if (t > shape_.duration_ms) break;
      Expire(t);
      const SwarmProfile::Rate& rate = profile_.enabled[next->second];
      if (faults < limits_.fault_budget && Apply(rate.kind, t)) ++faults;
      next->first = t + std::max<int64_t>(1, random_.Exponential(rate.mean_gap_ms));
    }
    std::stable_sort(actions_.begin(), actions_.end(), EarlierAction);
    return std::move(actions_);
  }

  // The administrative actions, each kind at exponential gaps of its own, from `admin` alone:
  // they change nothing the fault generator tracks (brokers down, cuts), so the faults do not
  // depend on them.
  std::vector<Json> RunAdmin(RandomStream& admin) {
    std::vector<Json> out;
    for (const SwarmProfile::Rate& rate : profile_.admin) {
      int64_t t = kFirstFaultMs + admin.Exponential(rate.mean_gap_ms);
      for (int step = 0; step < kMaxGenerationSteps && t <= shape_.duration_ms; ++step) {
        out.push_back(AdminAction(rate.kind, t, admin));
        t += std::max<int64_t>(1, admin.Exponential(rate.mean_gap_ms));
      }
    }
    return out;  // by kind, each in time order: GenerateSchedule merges them by time
  }

 private:
  bool Allowed(FaultKind kind) const { return allowed_.contains(kind); }
  bool Repairs(FaultKind kind) const { return profile_.repairs && Allowed(kind); }

  int32_t DownCount() const {
    return static_cast<int32_t>(down_.size() + unknown_down_.size() + disk_faulted_.size());
  }
  bool CanTakeDown(int32_t more) const {
    return limits_.max_down < 0 || DownCount() + more <= limits_.max_down;
  }

  // Repairs due by `t` have happened.
  void Expire(int64_t t) {
    std::erase_if(down_, [t](const auto& entry) { return entry.second <= t; });
    std::erase_if(unknown_down_, [t](int64_t until) { return until <= t; });
    std::erase_if(clients_down_, [t](const auto& entry) { return entry.second <= t; });
    if (partition_until_ <= t) partition_until_ = -1;
    if (zk_down_until_ <= t) zk_down_until_ = -1;
  }

  std::vector<int32_t> UpBrokers() const {
    std::vector<int32_t> up;
    for (int32_t id = 1; id <= shape_.brokers; ++id) {
      if (!down_.contains(id) && !disk_faulted_.contains(id)) up.push_back(id);
    }
    return up;
  }

  template <class T>
  const T& Pick(const std::vector<T>& from) {
    KSIM_CHECK(!from.empty());
    return from[static_cast<size_t>(random_.UniformInt(0, static_cast<int64_t>(from.size()) - 1))];
  }

  Json Action(int64_t t, std::string_view what) {
    Json action = Json::object();
    action["at_ms"] = t;
    action["do"] = std::string(what);
    return action;
  }

  void Emit(Json action) {
    if (action["at_ms"].get<int64_t>() <= shape_.duration_ms) actions_.push_back(std::move(action));
  }

  // A broker target: by id (an up broker), or with probability 1/3 `leader_of` a partition
  // (whoever leads it then). Returns the broker id, or nullopt for leader_of (and sets
  // `partition` to its index).
  struct Target {
    std::optional<int32_t> broker;
    size_t partition = 0;
  };
  std::optional<Target> PickTarget(Json& action, bool allow_leader_of) {
    const std::vector<int32_t> up = UpBrokers();
    const bool leader_of = allow_leader_of && !shape_.partitions.empty() && random_.Bernoulli(1, 3);
    if (leader_of) {
      Target target;
      target.partition = static_cast<size_t>(
          random_.UniformInt(0, static_cast<int64_t>(shape_.partitions.size()) - 1));
      action["leader_of"] = PartitionName(shape_.partitions[target.partition]);
      return target;
    }
    if (up.empty()) return std::nullopt;
    Target target;
    target.broker = Pick(up);
    action["broker"] = *target.broker;
    return target;
  }

  // The brokers a leader_of target may have been: the partition's replicas, else every broker.
  std::vector<int32_t> Candidates(size_t partition) const {
    std::vector<int32_t> ids = shape_.partitions[partition].replicas;
    if (ids.empty()) {
      for (int32_t id = 1; id <= shape_.brokers; ++id) ids.push_back(id);
    }
    return ids;
  }

  // A broker going down at `t` (crash, shutdown, corrupt_tail), with its restart.
  bool TakeDown(FaultKind kind, int64_t t, std::string_view what,
                const std::optional<std::string>& disk_kind) {
    if (!CanTakeDown(1)) return false;
    Json action = Action(t, what);
    std::optional<Target> target = PickTarget(action, true);
    if (!target) return false;
    if (disk_kind) action["kind"] = *disk_kind;
    Emit(std::move(action));
    const int64_t until =
        Repairs(FaultKind::kRestart) ? t + ScaledDuration(random_, {2000, 8000, 20000}) : INT64_MAX;
    if (until != INT64_MAX) {
      const std::vector<int32_t> restart =
          target->broker ? std::vector<int32_t>{*target->broker} : Candidates(target->partition);
      for (int32_t id : restart) {
        Json repair = Action(until, "restart");
        repair["broker"] = id;
        Emit(std::move(repair));
      }
    }
    if (target->broker) {
      down_[*target->broker] = until;
    } else {
      unknown_down_.push_back(until);
    }
    (void)kind;
    return true;
  }

  // A `cli` action: a new topic (a name of its own, 1-3 partitions, a replication factor up to
  // the brokers: Kafka refuses one above the brokers registered then), or a preferred replica
  // election of every partition or of one of the base's partitions.
  Json AdminAction(FaultKind kind, int64_t t, RandomStream& admin) {
    Json action = Action(t, "cli");
    std::string command;
    if (kind == FaultKind::kCreateTopic) {
      const int64_t partitions = admin.UniformInt(1, 3);
      const int64_t replication = admin.UniformInt(1, std::max<int64_t>(1, shape_.brokers));
      command = "kafka-topics.sh --zookeeper " + std::string(kZkConnect) +
                " --create --topic created-" + std::to_string(++created_topics_) +
                " --partitions " + std::to_string(partitions) + " --replication-factor " +
                std::to_string(replication);
    } else {
      KSIM_CHECK(kind == FaultKind::kPreferredElection);
      command = "kafka-preferred-replica-election.sh --zookeeper " + std::string(kZkConnect);
      if (!shape_.partitions.empty() && admin.Bernoulli(1, 2)) {
        const auto& p = shape_.partitions[static_cast<size_t>(
            admin.UniformInt(0, static_cast<int64_t>(shape_.partitions.size()) - 1))];
        Json entry = Json::object();
        entry["topic"] = p.topic;
        entry["partition"] = p.partition;
        Json file = Json::object();
        file["partitions"] = Json::array({entry});
        command += " --path-to-json-file election.json";
        action["input"] = Json::array({file.dump()});
      }
    }
    action["command"] = std::move(command);
    return action;
  }

  bool Apply(FaultKind kind, int64_t t) {
    switch (kind) {
      case FaultKind::kCrash:
        return TakeDown(kind, t, "crash", std::nullopt);
      case FaultKind::kShutdown:
        return TakeDown(kind, t, "shutdown", std::nullopt);
      case FaultKind::kDiskCorruptTail:
        return TakeDown(kind, t, "disk_fault", std::string("corrupt_tail"));
      case FaultKind::kDiskEio:
      case FaultKind::kDiskFull: {
        // The broker halts at its next write and stays broken until the final phase.
        if (!CanTakeDown(1)) return false;
        Json action = Action(t, "disk_fault");
        std::optional<Target> target = PickTarget(action, true);
        if (!target) return false;
        action["kind"] = kind == FaultKind::kDiskEio ? "eio" : "full";
        Emit(std::move(action));
        if (target->broker) {
          disk_faulted_.insert(*target->broker);
        } else {
          unknown_down_.push_back(INT64_MAX);
        }
        return true;
      }
      case FaultKind::kSlow: {
        Json action = Action(t, "slow");
        if (!PickTarget(action, true)) return false;
        action["fetch_delay_ms"] = ScaledDuration(random_, {200, 2000, 12000});
        action["for_ms"] = ScaledDuration(random_, {2000, 8000, 20000});
        Emit(std::move(action));
        return true;
      }
      case FaultKind::kZkExpire: {
        Json action = Action(t, "zk_expire");
        if (!PickTarget(action, true)) return false;
        Emit(std::move(action));
        return true;
      }
      case FaultKind::kPartition:
        return Partition(t);
      case FaultKind::kCrashReplicas: {
        if (shape_.partitions.empty()) return false;
        const size_t index = static_cast<size_t>(
            random_.UniformInt(0, static_cast<int64_t>(shape_.partitions.size()) - 1));
        const std::vector<int32_t> replicas = Candidates(index);
        int32_t more = 0;
        for (int32_t id : replicas)
          more += down_.contains(id) || disk_faulted_.contains(id) ? 0 : 1;
        if (more == 0 || !CanTakeDown(more)) return false;
        Json action = Action(t, "crash_replicas");
        action["topic"] = shape_.partitions[index].topic;
        action["partition"] = shape_.partitions[index].partition;
        Emit(std::move(action));
        const int64_t until = Repairs(FaultKind::kRestart)
                                  ? t + ScaledDuration(random_, {2000, 8000, 20000})
                                  : INT64_MAX;
        for (int32_t id : replicas) {
          if (down_.contains(id) || disk_faulted_.contains(id)) continue;
          down_[id] = until;
          if (until != INT64_MAX) {
            Json repair = Action(until, "restart");
            repair["broker"] = id;
            Emit(std::move(repair));
          }
        }
        return true;
      }
      case FaultKind::kZkDown: {
        if (zk_down_until_ >= 0) return false;
        Emit(Action(t, "zk_down"));
        zk_down_until_ = t + ScaledDuration(random_, {1000, 5000, 15000});
        Emit(Action(zk_down_until_, "zk_up"));
        return true;
      }
      case FaultKind::kClientCrash: {
        std::vector<std::string> up;
        for (const std::string& client : shape_.clients) {
          if (!clients_down_.contains(client)) up.push_back(client);
        }
        if (up.empty()) return false;
        const std::string client = Pick(up);
        Json action = Action(t, "crash");
        action["client"] = client;
        Emit(std::move(action));
        const int64_t until = Repairs(FaultKind::kRestart)
                                  ? t + ScaledDuration(random_, {1000, 5000, 15000})
                                  : INT64_MAX;
        clients_down_[client] = until;
        if (until != INT64_MAX) {
          Json repair = Action(until, "restart");
          repair["client"] = client;
          Emit(std::move(repair));
        }
        return true;
      }
      case FaultKind::kRestart:
      case FaultKind::kHeal:
        return false;  // repairs come with their faults
      case FaultKind::kCreateTopic:
      case FaultKind::kPreferredElection:
        return false;  // administrative: RunAdmin
    }
    return false;
  }

  // A network partition: one broker cut off, a client cut from some brokers, or a random split
  // (zk and clients on either side or none); one-way with probability 1/4.
  bool Partition(int64_t t) {
    if (partition_until_ >= 0) return false;  // one at a time: a heal restores every cut
    std::vector<std::string> brokers;
    for (int32_t id = 1; id <= shape_.brokers; ++id) brokers.push_back(node::Broker(BrokerId(id)));
    Json a = Json::array();
    Json b = Json::array();
    const int64_t shape = random_.UniformInt(0, shape_.clients.empty() ? 1 : 2);
    if (shape == 0 && brokers.size() >= 2) {
      const std::string alone = Pick(brokers);
      a.push_back(alone);
      for (const std::string& name : brokers) {
        if (name != alone) b.push_back(name);
      }
      b.push_back(std::string(node::kZooKeeper));
      for (const std::string& client : shape_.clients) {
        if (random_.Bernoulli(1, 2)) b.push_back(client);
      }
    } else if (shape == 2) {
      a.push_back(Pick(shape_.clients));
      for (const std::string& name : brokers) {
        if (random_.Bernoulli(1, 2)) b.push_back(name);
      }
      if (b.empty()) b.push_back(Pick(brokers));
    } else {
      std::vector<std::string> nodes = brokers;
      nodes.push_back(std::string(node::kZooKeeper));
      for (const std::string& name : nodes) (random_.Bernoulli(1, 2) ? a : b).push_back(name);
      for (const std::string& client : shape_.clients) {
        const int64_t side = random_.UniformInt(0, 2);
        if (side == 0) a.push_back(client);
        if (side == 1) b.push_back(client);
      }
      if (a.empty() || b.empty()) return false;
    }
    Json action = Action(t, "partition");
    action["sides"] = Json::array({a, b});
    action["one_way"] = random_.Bernoulli(1, 4);
    Emit(std::move(action));
    partition_until_ =
        Repairs(FaultKind::kHeal) ? t + ScaledDuration(random_, {2000, 8000, 20000}) : INT64_MAX;
    if (partition_until_ != INT64_MAX) Emit(Action(partition_until_, "heal"));
    return true;
  }

  const ScheduleShape& shape_;
  const SwarmLimits& limits_;
  const SwarmProfile& profile_;
  RandomStream& random_;
  std::set<FaultKind> allowed_;
  std::vector<Json> actions_;
  std::map<int32_t, int64_t> down_;    // broker -> restarted at (INT64_MAX: never)
  std::vector<int64_t> unknown_down_;  // leader_of targets down, until
  std::set<int32_t> disk_faulted_;     // brokers with a lasting disk fault
  std::map<std::string, int64_t> clients_down_;
  int64_t partition_until_ = -1;
  int64_t zk_down_until_ = -1;
  int created_topics_ = 0;
};

}  // namespace

bool IsAdministrative(FaultKind kind) {
  return kind == FaultKind::kCreateTopic || kind == FaultKind::kPreferredElection;
}

const std::vector<std::string_view>& FaultKindNames() {
  static const std::vector<std::string_view> kNames = {
      "crash",     "restart",        "shutdown",     "slow",         "partition",
      "heal",      "crash_replicas", "disk_eio",     "disk_full",    "disk_corrupt_tail",
      "zk_expire", "zk_down",        "client_crash", "create_topic", "preferred_election"};
  return kNames;
}

std::string_view FaultKindName(FaultKind kind) {
  return FaultKindNames().at(static_cast<size_t>(kind));
}

Result<std::vector<FaultKind>> ParseFaultKinds(std::string_view list) {
  std::vector<FaultKind> kinds;
  const std::vector<std::string_view>& names = FaultKindNames();
  auto valid = [&] {
    std::string text;
    for (std::string_view name : names) text += (text.empty() ? "" : ",") + std::string(name);
    return text;
  };
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string_view::npos) end = list.size();
    const std::string_view name = list.substr(start, end - start);
    auto found = std::find(names.begin(), names.end(), name);
    if (found == names.end()) {
      std::string message = "--faults: unknown fault kind \"" + std::string(name) + "\"";
      if (std::optional<std::string_view> close = ClosestName(name, names)) {
        message += " (did you mean \"" + std::string(*close) + "\"?)";
      }
      return Status(Errc::kInvalidArgument, message + "; valid kinds: " + valid());
    }
    const auto kind = static_cast<FaultKind>(found - names.begin());
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
    start = end + 1;
  }
  return kinds;
}

ScheduleShape ShapeOf(const Scenario& scenario) {
  ScheduleShape shape;
  shape.brokers = scenario.cluster.brokers;
  shape.duration_ms = scenario.duration_ms;
  for (const TopicEntry& topic : scenario.topics) {
    for (int32_t p = 0; p < topic.partitions; ++p) {
      ScheduleShape::PartitionInfo info;
      info.topic = topic.name;
      info.partition = p;
      auto assigned = topic.assignment.find(PartitionId(p));
      if (assigned != topic.assignment.end()) {
        for (BrokerId id : assigned->second) info.replicas.push_back(id.value());
      }
      shape.partitions.push_back(std::move(info));
    }
  }
  for (const ClientSpec& client : scenario.clients) shape.clients.push_back(client.id);
  return shape;
}

std::string SwarmProfile::Describe() const {
  // "crash ~9.0 s": a kind and its mean gap.
  auto rate_text = [](const Rate& rate) {
    return std::string(FaultKindName(rate.kind)) + " ~" + std::to_string(rate.mean_gap_ms / 1000) +
           "." + std::to_string(rate.mean_gap_ms % 1000 / 100) + " s";
  };
  std::string text;
  for (const Rate& rate : enabled) text += (text.empty() ? "" : ", ") + rate_text(rate);
  if (text.empty()) text = "no faults";
  if (!repairs) text += "; no repairs before the final phase";
  for (size_t i = 0; i < admin.size(); ++i)
    text += (i == 0 ? "; admin: " : ", ") + rate_text(admin[i]);
  return text;
}

SwarmProfile DrawProfile(const SwarmLimits& limits, const ScheduleShape& shape,
                         RandomStream& random, RandomStream& admin_random) {
  std::vector<FaultKind> candidates;
  std::vector<FaultKind> admin_candidates;
  for (size_t i = 0; i < FaultKindNames().size(); ++i) {
    const auto kind = static_cast<FaultKind>(i);
    const bool allowed = limits.kinds.empty() || std::find(limits.kinds.begin(), limits.kinds.end(),
                                                           kind) != limits.kinds.end();
    if (!allowed || IsRepair(kind)) continue;
    (IsAdministrative(kind) ? admin_candidates : candidates).push_back(kind);
  }
  SwarmProfile profile;
  const int64_t duration_ms = std::max<int64_t>(shape.duration_ms, 1000);
  std::vector<bool> on(candidates.size(), false);
  bool any = false;
  for (size_t i = 0; i < candidates.size(); ++i) {
    on[i] = random.Bernoulli(1, 2);
    any = any || on[i];
  }
  if (!any && !candidates.empty()) {
    on[static_cast<size_t>(random.UniformInt(0, static_cast<int64_t>(candidates.size()) - 1))] =
        true;
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!on[i]) continue;
    profile.enabled.push_back(
        {candidates[i], random.UniformInt(duration_ms / 20, duration_ms / 2)});
  }
  profile.repairs = !random.Bernoulli(1, 8);
  // The administrative kinds from their own stream; at least one when no fault kind is allowed.
  std::vector<bool> admin_on(admin_candidates.size(), false);
  for (size_t i = 0; i < admin_candidates.size(); ++i) admin_on[i] = admin_random.Bernoulli(1, 2);
  if (candidates.empty() && !admin_candidates.empty() &&
      std::find(admin_on.begin(), admin_on.end(), true) == admin_on.end()) {
    admin_on[static_cast<size_t>(
        admin_random.UniformInt(0, static_cast<int64_t>(admin_candidates.size()) - 1))] = true;
  }
  for (size_t i = 0; i < admin_candidates.size(); ++i) {
    if (!admin_on[i]) continue;
    profile.admin.push_back(
        {admin_candidates[i], admin_random.UniformInt(duration_ms / 20, duration_ms / 2)});
  }
  return profile;
}

std::vector<nlohmann::ordered_json> GenerateSchedule(const ScheduleShape& shape,
                                                     const SwarmLimits& limits,
                                                     const SwarmProfile& profile,
                                                     RandomStream& random,
                                                     RandomStream& admin_random) {
  Generator generator(shape, limits, profile, random);
  std::vector<Json> actions = generator.Run();
  std::vector<Json> admin = generator.RunAdmin(admin_random);
  if (admin.empty()) return actions;
  actions.insert(actions.end(), std::make_move_iterator(admin.begin()),
                 std::make_move_iterator(admin.end()));
  // A stable sort: on a tie the faults, generated first, stay before the administrative actions.
  std::stable_sort(actions.begin(), actions.end(), EarlierAction);
  return actions;
}

}  // namespace ksim::sim
