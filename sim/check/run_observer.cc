#include "sim/check/run_observer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <iterator>
#include <utility>
#include <vector>

#include "core/base/check.h"
#include "core/base/topic_partition.h"
#include "core/base/trace_names.h"

namespace ksim::sim {
namespace {

// Fields are read leniently: the events come from ksim's own components, but an observer must
// not abort a run over a field it does not find (a missing one reads as the fallback).
int64_t IntField(const TraceFields& fields, std::string_view key, int64_t fallback = -1) {
  auto it = fields.find(key);
  if (it == fields.end() || !it->is_number_integer()) return fallback;
  return it->get<int64_t>();
}

std::string StringField(const TraceFields& fields, std::string_view key) {
  auto it = fields.find(key);
  if (it == fields.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

bool BoolField(const TraceFields& fields, std::string_view key) {
  auto it = fields.find(key);
  return it != fields.end() && it->is_boolean() && it->get<bool>();
}

std::vector<int32_t> IdsField(const TraceFields& fields, std::string_view key) {
  std::vector<int32_t> ids;
  auto it = fields.find(key);
  if (it == fields.end() || !it->is_array()) return ids;
  for (const TraceFields& id : *it) {
    if (id.is_number_integer()) ids.push_back(id.get<int32_t>());
  }
  return ids;
}

// The same, read from an event's text without building its JSON (EventFields' typed readers say
// what nlohmann's is_string, is_number_integer and is_boolean would).
int64_t IntField(const EventFields& fields, std::string_view key, int64_t fallback = -1) {
  return fields.IntegerValue(key).value_or(fallback);
}

std::string StringField(const EventFields& fields, std::string_view key) {
  return fields.StringValue(key).value_or("");
}

bool BoolField(const EventFields& fields, std::string_view key) {
  return fields.BoolValue(key).value_or(false);
}

std::vector<int32_t> IdsField(const EventFields& fields, std::string_view key) {
  std::vector<int32_t> ids;
  for (const int64_t id : fields.IntegersValue(key).value_or(std::vector<int64_t>())) {
    ids.push_back(static_cast<int32_t>(id));  // as get<int32_t> narrows
  }
  return ids;
}

const TraceFields& AsJson(const TraceFields& fields) { return fields; }
const TraceFields& AsJson(const EventFields& fields) { return fields.json(); }

// {topic, partition} of a partition-scoped event; nullopt without them.
template <class Fields>
std::optional<TopicPartition> TpField(const Fields& fields) {
  const std::string topic = StringField(fields, field::kTopic);
  const int64_t partition = IntField(fields, field::kPartition);
  if (topic.empty() || partition < 0) return std::nullopt;
  return TopicPartition{topic, PartitionId(static_cast<int32_t>(partition))};
}

// The broker id of node "broker-<id>", or -1 for another node.
int32_t BrokerOfNode(std::string_view node) {
  constexpr std::string_view kPrefix = "broker-";
  if (!node.starts_with(kPrefix)) return -1;
  node.remove_prefix(kPrefix.size());
  int32_t id = -1;
  auto [end, error] = std::from_chars(node.data(), node.data() + node.size(), id);
  if (error != std::errc() || end != node.data() + node.size() || id < 0) return -1;
  return id;
}

// A short human text of a fault event's fields.
std::string FaultDetail(std::string_view ev, const TraceFields& fields) {
  if (ev == ev::kCrash) {
    if (const std::string halt = StringField(fields, field::kHalt); !halt.empty()) {
      return "halted: " + halt;
    }
    if (BoolField(fields, field::kCorrupt)) return "torn and corrupted unsynced tail";
    if (BoolField(fields, field::kTear)) return "torn unsynced tail";
    return "";
  }
  if (ev == ev::kRestart)
    return "incarnation " + std::to_string(IntField(fields, field::kIncarnation));
  if (ev == ev::kPartition) {
    std::string text;
    auto sides = fields.find(field::kSides);
    if (sides != fields.end() && sides->is_array()) {
      for (const TraceFields& side : *sides) {
        if (!text.empty()) text += " | ";
        std::string names;
        if (side.is_array()) {
          for (const TraceFields& name : side) {
            if (!names.empty()) names += ",";
            if (name.is_string()) names += name.get<std::string>();
          }
        }
        text += names;
      }
    }
    if (BoolField(fields, field::kOneWay)) text += " (one way)";
    return text;
  }
  if (ev == ev::kSlow) {
    return "+" + std::to_string(IntField(fields, field::kExtraDelayUs, 0) / 1000) + " ms for " +
           FormatSeconds(IntField(fields, field::kForUs, 0));
  }
  if (ev == ev::kDiskFault) {
    return StringField(fields, field::kFault) + (BoolField(fields, field::kOnce) ? " once" : "");
  }
  if (ev == ev::kZkExpire) return "session " + std::to_string(IntField(fields, field::kSession));
  return "";
}

// The fault events (OnFault).
constexpr std::string_view kFaultEvents[] = {
    ev::kCrash, ev::kShutdown,  ev::kRestart,  ev::kPartition, ev::kHeal, ev::kIsolate,
    ev::kSlow,  ev::kDiskFault, ev::kZkExpire, ev::kZkDown,    ev::kZkUp};

bool IsFault(std::string_view ev) {
  return std::find(std::begin(kFaultEvents), std::end(kFaultEvents), ev) != std::end(kFaultEvents);
}

// Every event a branch of RunObserver::Handle reads; the others (a run's appends, high watermarks,
// sends, deliveries: most of its events) are passed over after one lookup instead of the whole
// chain of comparisons. A branch for an event missing here would never run (the tests of each
// record kind would fail); an event here that no branch reads fails the check at Handle's end.
bool IsObserved(std::string_view ev) {
  // The names by length: most events are told apart by their length alone, the others by a
  // comparison with the few observed names of theirs.
  static constexpr size_t kLongest = 64;
  static const std::array<std::vector<std::string_view>, kLongest> kObserved = [] {
    std::array<std::vector<std::string_view>, kLongest> by_length;
    auto add = [&by_length](std::string_view name) {
      KSIM_CHECK(name.size() < kLongest);
      by_length[name.size()].push_back(name);
    };
    for (std::string_view name :
         {ev::kLeaderElected, ev::kPartitionOffline, ev::kIsrShrink, ev::kIsrExpand,
          ev::kBecomeLeader, ev::kBecomeFollower, ev::kTruncate, ev::kProduceRetry,
          ev::kPartitionsAssigned, ev::kPartitionsRevoked, ev::kOffsetReset, ev::kOffsetFetched,
          ev::kOffsetsCommitted, ev::kCliOutput, ev::kInvariantViolation,
          ev::kReplicaFetcherStopped}) {
      add(name);
    }
    for (std::string_view name : kFaultEvents) add(name);
    return by_length;
  }();
  if (ev.size() >= kLongest) return false;
  for (std::string_view name : kObserved[ev.size()]) {
    if (name == ev) return true;
  }
  return false;
}

// The console consumer's exit line (ConsoleConsumer.process at --max-messages; CliTools prints
// it when the tool stops its client).
constexpr std::string_view kConsoleConsumerExit = "Processed a total of ";

}  // namespace

std::string ViolationRecord::Text() const { return rule + " " + ToString(tp) + ": " + message; }

std::string FormatSeconds(TimeUs t_us) {
  std::string ms = std::to_string((t_us % 1'000'000) / 1000);
  return std::to_string(t_us / 1'000'000) + "." + std::string(3 - ms.size(), '0') + ms + " s";
}

RunObserver::RunObserver(World& world) : world_(world) {
  world.AddTraceTap(
      [this](TimeUs t_us, std::string_view node, std::string_view ev, const EventFields& fields) {
        Handle<EventFields>(t_us, node, ev, [&fields]() -> const EventFields& { return fields; });
      });
}

void RunObserver::OnEvent(TimeUs t_us, std::string_view node, std::string_view ev,
                          const TraceFields& fields) {
  Handle<TraceFields>(t_us, node, ev, [&fields]() -> const TraceFields& { return fields; });
}

template <class Fields>
void RunObserver::Handle(TimeUs t_us, std::string_view node, std::string_view ev,
                         const std::function<const Fields&()>& get) {
  // Each branch asks for the fields: an event it does not read is not parsed back to JSON.
  last_t_us_ = std::max(last_t_us_, t_us);
  if (!IsObserved(ev)) return;
  if (ev == ev::kLeaderElected) {
    const Fields& fields = get();
    std::optional<TopicPartition> tp = TpField(fields);
    if (!tp) return;
    ElectionRecord election;
    election.t_us = t_us;
    election.tp = *tp;
    election.leader = BrokerId(static_cast<int32_t>(IntField(fields, field::kLeader)));
    election.epoch = static_cast<int32_t>(IntField(fields, field::kEpoch));
    election.isr = IdsField(fields, field::kIsr);
    election.unclean = BoolField(fields, field::kUnclean);
    election.reason = StringField(fields, field::kReason);
    election.policy = StringField(fields, field::kPolicy);
    PartitionTrack& track = Track(*tp, t_us);
    track.leader = election.leader;
    track.isr = election.isr;
    Reassess(*tp, track, t_us);
    elections_.push_back(std::move(election));
  } else if (ev == ev::kPartitionOffline) {
    const Fields& fields = get();
    std::optional<TopicPartition> tp = TpField(fields);
    if (!tp) return;
    PartitionTrack& track = Track(*tp, t_us);
    track.leader = BrokerId(-1);
    track.isr = IdsField(fields, field::kIsr);
    Reassess(*tp, track, t_us);
  } else if (ev == ev::kReplicaFetcherStopped) {
    if (!fetcher_stopped_) return;
    fetcher_stopped_(BrokerId(BrokerOfNode(node)),
                     BrokerId(static_cast<int32_t>(IntField(get(), field::kLeader, -1))));
  } else if (ev == ev::kIsrShrink || ev == ev::kIsrExpand) {
    const Fields& fields = get();
    std::optional<TopicPartition> tp = TpField(fields);
    if (!tp) return;
    PartitionTrack& track = Track(*tp, t_us);
    // Only the current leader's word counts: a deposed leader's late answer from ZooKeeper
    // must not overwrite the ISR the controller gave its successor.
    if (BrokerOfNode(node) != track.leader.value()) return;
    track.isr = IdsField(fields, field::kIsr);
    if (ev == ev::kIsrExpand) {
      IsrExpandRecord expansion{t_us, *tp, IdsField(fields, field::kAdded), {}};
      for (int32_t added : expansion.added) {
        expansion.log_ends.push_back(
            follower_log_end_ ? follower_log_end_(track.leader, *tp, BrokerId(added)) : -1);
      }
      isr_expansions_.push_back(std::move(expansion));
    }
    Reassess(*tp, track, t_us);
  } else if (ev == ev::kBecomeLeader || ev == ev::kBecomeFollower) {
    const Fields& fields = get();
    std::optional<TopicPartition> tp = TpField(fields);
    if (!tp) return;
    const bool leader = ev == ev::kBecomeLeader;
    roles_.push_back(RoleRecord{
        t_us, BrokerId(BrokerOfNode(node)), *tp, leader,
        BrokerId(leader ? -1 : static_cast<int32_t>(IntField(fields, field::kLeader, -1))),
        static_cast<int32_t>(IntField(fields, field::kEpoch, -1))});
  } else if (ev == ev::kTruncate) {
    const Fields& fields = get();
    std::optional<TopicPartition> tp = TpField(fields);
    if (!tp) return;
    TruncationRecord truncation;
    truncation.t_us = t_us;
    truncation.broker = BrokerId(BrokerOfNode(node));
    truncation.tp = *tp;
    truncation.from_leo = Offset(IntField(fields, field::kFromLeo, 0));
    truncation.to = Offset(IntField(fields, field::kTo, 0));
    truncation.records = IntField(fields, field::kRecords, 0);
    truncation.reason = StringField(fields, field::kReason);
    truncations_.push_back(std::move(truncation));
  } else if (ev == ev::kProduceRetry) {
    const Fields& fields = get();
    std::optional<TopicPartition> tp = TpField(fields);
    if (!tp) return;
    retries_.push_back(RetryRecord{t_us, std::string(node), *tp,
                                   static_cast<int32_t>(IntField(fields, field::kAttempt, 0)),
                                   StringField(fields, field::kError)});
  } else if (ev == ev::kPartitionsAssigned || ev == ev::kPartitionsRevoked) {
    const Fields& fields = get();
    RebalanceRecord rebalance{t_us, std::string(node), std::string(ev), {}};
    const TraceFields& json = AsJson(fields);
    auto names = json.find(field::kPartitions);
    if (names != json.end() && names->is_array()) {
      for (const TraceFields& name : *names) {
        if (!name.is_string()) continue;
        if (std::optional<TopicPartition> tp = ParseTopicPartition(name.get<std::string>())) {
          rebalance.partitions.push_back(std::move(*tp));
        }
      }
    }
    rebalances_.push_back(std::move(rebalance));
  } else if (ev == ev::kOffsetReset) {
    const Fields& fields = get();
    std::optional<TopicPartition> tp = TpField(fields);
    if (!tp) return;
    offset_resets_.push_back(OffsetResetRecord{
        t_us, std::string(node), *tp, StringField(fields, field::kStrategy),
        Offset(IntField(fields, field::kOffset, 0)), Offset(IntField(fields, field::kFrom, -1))});
  } else if (ev == ev::kOffsetFetched) {
    const Fields& fields = get();
    std::optional<TopicPartition> tp = TpField(fields);
    if (!tp) return;
    offset_fetches_.push_back(OffsetFetchRecord{t_us, std::string(node),
                                                StringField(fields, field::kGroup), *tp,
                                                Offset(IntField(fields, field::kOffset, -1))});
  } else if (ev == ev::kOffsetsCommitted) {
    const Fields& fields = get();
    commit_writes_.push_back(CommitWriteRecord{t_us, BrokerId(BrokerOfNode(node)),
                                               StringField(fields, field::kGroup),
                                               StringField(fields, field::kError)});
  } else if (ev == ev::kCliOutput) {
    const Fields& fields = get();
    const int64_t index = IntField(fields, field::kIndex);
    if (node == node::kScenario && index >= 0 &&
        StringField(fields, field::kLine).starts_with(kConsoleConsumerExit)) {
      stopped_tools_.insert(node::CliTool(static_cast<size_t>(index)));
    }
  } else if (ev == ev::kInvariantViolation) {
    const Fields& fields = get();
    ViolationRecord violation;
    violation.t_us = t_us;
    violation.rule = StringField(fields, field::kRule);
    violation.tp =
        TopicPartition{StringField(fields, field::kTopic),
                       PartitionId(static_cast<int32_t>(IntField(fields, field::kPartition)))};
    violation.message = StringField(fields, field::kMessage);
    violation.broker = BrokerId(static_cast<int32_t>(IntField(fields, field::kBroker, -1)));
    violation.offset = Offset(IntField(fields, field::kOffset, -1));
    violation.committed_us = IntField(fields, field::kCommittedUs, -1);
    violation.epochless_fork = BoolField(fields, field::kEpochlessFork);
    violation.held_epoch =
        LeaderEpoch(static_cast<int32_t>(IntField(fields, field::kHeldEpoch, -1)));
    violation.committed_epoch =
        LeaderEpoch(static_cast<int32_t>(IntField(fields, field::kCommittedEpoch, -1)));
    violation.held_from = Offset(IntField(fields, field::kHeldFrom, -1));
    violations_.push_back(std::move(violation));
  } else {
    KSIM_CHECK_MSG(IsFault(ev), "an observed event no branch reads");
    const Fields& fields = get();
    OnFault(t_us, node, ev, AsJson(fields));
  }
}

void RunObserver::OnFault(TimeUs t_us, std::string_view node, std::string_view ev,
                          const TraceFields& fields) {
  // A console consumer that stopped itself, and the final phase restarting its empty node.
  if ((ev == ev::kShutdown || ev == ev::kRestart) && stopped_tools_.contains(std::string(node)))
    return;
  FaultRecord& fault = faults_.emplace_back(
      FaultRecord{t_us, std::string(node), std::string(ev), FaultDetail(ev, fields)});
  if (ev == ev::kCrash) {
    auto unsynced = fields.find(field::kUnsynced);
    if (unsynced != fields.end() && unsynced->is_array()) {
      for (const TraceFields& dir : *unsynced) {
        if (dir.is_string()) fault.unsynced.push_back(dir.get<std::string>());
      }
    }
  }
  const int32_t broker = BrokerOfNode(node);
  if (broker < 0) return;
  if (ev == ev::kCrash || ev == ev::kShutdown) {
    broker_up_[broker] = false;
  } else if (ev == ev::kRestart) {
    broker_up_[broker] = true;
  } else {
    return;
  }
  ReassessAll(t_us);
}

void RunObserver::SetMinInsyncReplicas(const std::string& topic, int32_t min_isr) {
  min_isr_[topic] = min_isr;
  ReassessAll(std::max(last_t_us_, world_.Now()));
}

void RunObserver::WatchPartition(const TopicPartition& tp, TimeUs t_us) {
  last_t_us_ = std::max(last_t_us_, t_us);
  Track(tp, t_us);
}

std::vector<TopicPartition> RunObserver::partitions() const {
  std::vector<TopicPartition> known;
  known.reserve(partitions_.size());
  for (const auto& entry : partitions_) known.push_back(entry.first);
  return known;
}

int64_t RunObserver::UnavailableMs(const TopicPartition& tp, TimeUs end_us) const {
  auto it = partitions_.find(tp);
  if (it == partitions_.end()) return 0;
  const PartitionTrack& track = it->second;
  TimeUs total_us = track.unavailable_total_us;
  if (track.unavailable && end_us > track.unavailable_since_us) {
    total_us += end_us - track.unavailable_since_us;
  }
  return total_us / 1000;
}

RunObserver::PartitionTrack& RunObserver::Track(const TopicPartition& tp, TimeUs t_us) {
  auto [it, added] = partitions_.try_emplace(tp);
  if (added) {
    it->second.known_since_us = t_us;
    it->second.unavailable = true;  // no leader known yet
    it->second.unavailable_since_us = t_us;
  }
  return it->second;
}

void RunObserver::Reassess(const TopicPartition& tp, PartitionTrack& track, TimeUs t_us) {
  auto min_isr = min_isr_.find(tp.topic);
  const size_t needed = min_isr == min_isr_.end() ? 1 : static_cast<size_t>(min_isr->second);
  const bool unavailable =
      track.leader.value() < 0 || !BrokerUp(track.leader) || track.isr.size() < needed;
  if (unavailable == track.unavailable) return;
  if (track.unavailable) {
    track.unavailable_total_us += std::max<TimeUs>(0, t_us - track.unavailable_since_us);
  } else {
    track.unavailable_since_us = t_us;
  }
  track.unavailable = unavailable;
}

void RunObserver::ReassessAll(TimeUs t_us) {
  for (auto& [tp, track] : partitions_) Reassess(tp, track, t_us);
}

bool RunObserver::BrokerUp(BrokerId broker) const {
  auto it = broker_up_.find(broker.value());
  return it == broker_up_.end() || it->second;
}

}  // namespace ksim::sim
