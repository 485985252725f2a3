// ZookeeperConsumer: Kafka 0.10's ZookeeperConsumerConnector on core's seams.
// core/clients/consumer/zookeeper_consumer.h is the contract; docs/clients.md, "The old consumer".
//
// A rebalance attempt is a chain of ZooKeeper calls. Calls issued together are answered in order
// (ZooKeeper's FIFO client order), so each step issues its reads at once and goes on when the last
// answer came. An attempt number guards every callback: a session expiry, a Close or a newer
// attempt makes the answers of an older one ignored.
#include "core/clients/consumer/zookeeper_consumer.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>
#include <utility>

#include "core/base/check.h"
#include "core/base/text_distance.h"
#include "core/base/timer_group.h"
#include "core/base/trace_names.h"
#include "core/clients/consumer/assignors.h"
#include "core/clients/consumer/consumer_network.h"
#include "core/clients/consumer/fetcher.h"
#include "core/config/config_def.h"
#include "core/zk/paths.h"

namespace ksim {
namespace {

using T = ConfigType;

// kafka.consumer.ConsumerConfig at 0.10.0.1 (defaults in its object ConsumerConfig and ZKConfig).
// The keys after the first group are accepted and have no effect in the simulation.
const std::vector<ConfigKeyDef>& OldConsumerKeys() {
  static const std::vector<ConfigKeyDef> keys = {
      {"group.id", T::kString, std::nullopt},
      {"consumer.id", T::kString, ""},
      {"client.id", T::kString, ""},
      {"zookeeper.connect", T::kString, ""},
      {"auto.offset.reset", T::kString, "largest", std::nullopt, {"smallest", "largest"}},
      {"auto.commit.enable", T::kBoolean, "true"},
      {"auto.commit.interval.ms", T::kInt, "60000", 0},
      {"rebalance.max.retries", T::kInt, "4", 1},
      {"rebalance.backoff.ms", T::kInt, "2000", 0},
      {"zookeeper.session.timeout.ms", T::kInt, "6000", 1},
      {"fetch.min.bytes", T::kInt, "1", 0},
      {"fetch.wait.max.ms", T::kInt, "100", 0},
      {"fetch.message.max.bytes", T::kInt, "1048576", 0},
      {"socket.timeout.ms", T::kInt, "30000", 1},
      {"refresh.leader.backoff.ms", T::kInt, "200", 0},
      {"partition.assignment.strategy", T::kString, "range", std::nullopt, {"range", "roundrobin"}},
      {"offsets.storage", T::kString, "zookeeper", std::nullopt, {"zookeeper"}},
      // Accepted, no effect.
      {"zookeeper.connection.timeout.ms", T::kInt, "6000"},
      {"zookeeper.sync.time.ms", T::kInt, "2000"},
      {"socket.receive.buffer.bytes", T::kInt, "65536"},
      {"num.consumer.fetchers", T::kInt, "1"},
      {"queued.max.message.chunks", T::kInt, "2"},
      {"consumer.timeout.ms", T::kInt, "-1"},
      {"exclude.internal.topics", T::kBoolean, "true"},
      {"dual.commit.enabled", T::kBoolean, "false"},
  };
  return keys;
}

void Apply(std::string_view name, const ConfigValue& value, ZookeeperConsumerConfig& config) {
  const auto i32 = [&value] { return static_cast<int32_t>(value.integer); };
  if (name == "group.id") config.group_id = value.text;
  if (name == "consumer.id") config.consumer_id = value.text;
  if (name == "client.id") config.client_id = value.text;
  if (name == "auto.offset.reset") config.auto_offset_reset = value.text;
  if (name == "auto.commit.enable") config.auto_commit_enable = value.boolean;
  if (name == "auto.commit.interval.ms") config.auto_commit_interval_ms = value.integer;
  if (name == "rebalance.max.retries") config.rebalance_max_retries = i32();
  if (name == "rebalance.backoff.ms") config.rebalance_backoff_ms = value.integer;
  if (name == "zookeeper.session.timeout.ms") config.zookeeper_session_timeout_ms = i32();
  if (name == "fetch.min.bytes") config.fetch_min_bytes = i32();
  if (name == "fetch.wait.max.ms") config.fetch_wait_max_ms = i32();
  if (name == "fetch.message.max.bytes") config.fetch_message_max_bytes = i32();
  if (name == "socket.timeout.ms") config.socket_timeout_ms = i32();
  if (name == "refresh.leader.backoff.ms") config.refresh_leader_backoff_ms = value.integer;
  if (name == "partition.assignment.strategy") config.partition_assignment_strategy = value.text;
}

// Java's String.hashCode of an ASCII string.
int32_t JavaHashCode(std::string_view text) {
  uint32_t hash = 0;
  for (char c : text) hash = hash * 31u + static_cast<uint8_t>(c);
  return static_cast<int32_t>(hash);
}

std::string PartitionsField(const std::vector<TopicPartition>& partitions) {
  std::string out;
  for (const TopicPartition& tp : partitions) {
    out += (out.empty() ? "" : ",") + tp.topic + "-" + std::to_string(tp.partition.value());
  }
  return out;
}

EventFields PartitionList(const std::string& group, const std::vector<TopicPartition>& tps) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const TopicPartition& tp : tps) {
    list.push_back(tp.topic + "-" + std::to_string(tp.partition.value()));
  }
  return EventFields{{field::kGroup, group}, {field::kPartitions, list}};
}

}  // namespace

Result<ZookeeperConsumerConfig> ParseZookeeperConsumerConfig(const ConfigOverrides& settings) {
  ZookeeperConsumerConfig config;
  std::vector<std::string> errors;
  bool client_id_given = false;
  for (const auto& [name, raw] : settings) {
    const ConfigKeyDef* key = nullptr;
    for (const ConfigKeyDef& candidate : OldConsumerKeys()) {
      if (candidate.name == name) key = &candidate;
    }
    if (key == nullptr) {
      std::vector<std::string_view> names;
      for (const ConfigKeyDef& candidate : OldConsumerKeys()) names.push_back(candidate.name);
      std::string message = "Unknown configuration `" + name + "` of the old consumer.";
      // The new consumer's names for the old one's settings.
      static constexpr std::pair<std::string_view, std::string_view> kNewNames[] = {
          {"enable.auto.commit", "auto.commit.enable"},
          {"fetch.max.wait.ms", "fetch.wait.max.ms"},
          {"max.partition.fetch.bytes", "fetch.message.max.bytes"},
          {"session.timeout.ms", "zookeeper.session.timeout.ms"},
          {"bootstrap.servers", "zookeeper.connect"}};
      std::optional<std::string_view> closest = ClosestName(name, names);
      for (const auto& [new_name, old_name] : kNewNames) {
        if (name == new_name) closest = old_name;
      }
      if (closest) message += " Did you mean `" + std::string(*closest) + "`?";
      errors.push_back(std::move(message));
      continue;
    }
    ConfigValue value;
    if (std::optional<std::string> reason = ParseConfigValue(*key, raw, value)) {
      errors.push_back(InvalidValueMessage(*key, raw, *reason));
      continue;
    }
    if (name == "client.id") client_id_given = true;
    Apply(name, value, config);
  }
  // ConsumerConfig.validate (validateGroupId: group.id is required by VerifiableProperties).
  if (errors.empty() && config.group_id.empty()) {
    errors.push_back("Missing required property 'group.id'");
  }
  if (!errors.empty()) {
    std::string message;
    for (const std::string& error : errors) message += (message.empty() ? "" : "\n") + error;
    return Status(Errc::kInvalidConfig, message);
  }
  if (!client_id_given)
    config.client_id = config.group_id;  // props.getString("client.id", groupId)
  return config;
}

Result<std::map<std::string, std::vector<TopicPartition>>> AssignOldConsumers(
    std::string_view strategy, const std::map<std::string, int32_t>& partitions_per_topic,
    const std::map<std::string, std::vector<std::string>>& subscriptions) {
  std::map<std::string, std::vector<TopicPartition>> out;
  for (const auto& [consumer, topics] : subscriptions) out[consumer];
  if (strategy == "range") {
    // One stream per consumer: the thread ids sort as the consumer ids, and Kafka's old
    // RangeAssignor is the new one's arithmetic (assignors.h).
    RangeAssignor range;
    for (auto& [consumer, partitions] : range.Assign(partitions_per_topic, subscriptions)) {
      out[consumer] = std::move(partitions);
    }
    return out;
  }
  KSIM_CHECK(strategy == "roundrobin");
  if (subscriptions.empty()) return out;
  std::set<std::string> topics(subscriptions.begin()->second.begin(),
                               subscriptions.begin()->second.end());
  for (const auto& [consumer, subscribed] : subscriptions) {
    if (std::set<std::string>(subscribed.begin(), subscribed.end()) != topics) {
      return Status(Errc::kInvalidArgument,
                    "Round-robin assignment is allowed only if all consumers in the group "
                    "subscribe to the same topics, AND if the stream counts across topics are "
                    "identical for a given consumer instance.");
    }
  }
  std::vector<std::pair<int32_t, TopicPartition>> ordered;
  for (const std::string& topic : topics) {
    auto count = partitions_per_topic.find(topic);
    if (count == partitions_per_topic.end()) continue;
    for (int32_t p = 0; p < count->second; ++p) {
      const std::string name = "[" + topic + "," + std::to_string(p) + "]";
      ordered.emplace_back(JavaHashCode(name), TopicPartition{topic, PartitionId(p)});
    }
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  auto next = subscriptions.begin();
  for (const auto& [hash, tp] : ordered) {
    out[next->first].push_back(tp);
    if (++next == subscriptions.end()) next = subscriptions.begin();
  }
  return out;
}

// ---- The consumer ------------------------------------------------------------------------------

struct ZookeeperConsumer::Impl {
  // What one rebalance attempt has read.
  struct Attempt {
    uint64_t number = 0;  // the guard: rebalance_number at its start
    std::vector<std::string> members;
    std::vector<std::string> broker_ids;
    std::map<std::string, std::string> broker_hosts;
    std::map<std::string, std::vector<std::string>> subscriptions;
    std::map<std::string, int32_t> partitions_per_topic;
    std::vector<TopicPartition> mine;
    std::map<TopicPartition, Offset> offsets;
    size_t waiting = 0;  // answers still expected by the current step
    std::string error;   // the first error of the current step
    bool owner_exists = false;
    std::vector<TopicPartition> owned;  // owner nodes this attempt created
  };

  Impl(ZookeeperConsumerConfig config_in, ZookeeperConsumerSeams seams_in)
      : config(std::move(config_in)), seams(std::move(seams_in)), timers(seams.timers) {
    fetch_config.client_id = config.client_id;
    fetch_config.group_id = config.group_id;
    fetch_config.auto_offset_reset = config.auto_offset_reset == "smallest" ? "earliest" : "latest";
    fetch_config.enable_auto_commit = false;
    fetch_config.fetch_min_bytes = config.fetch_min_bytes;
    fetch_config.fetch_max_wait_ms = config.fetch_wait_max_ms;
    fetch_config.max_partition_fetch_bytes = config.fetch_message_max_bytes;
    fetch_config.request_timeout_ms = config.socket_timeout_ms;
    fetch_config.retry_backoff_ms = config.refresh_leader_backoff_ms;
    // The old consumer's stream iterator hands out one message at a time and counts it consumed
    // then (PartitionTopicInfo.resetConsumeOffset in ConsumerIterator.makeNext): a Poll returns
    // one record, so the positions committed are those of the records handed out.
    fetch_config.max_poll_records = 1;
    std::string uuid = config.consumer_id;
    if (uuid.empty()) {
      // host-<ms>-<the first 8 hex digits of a random UUID>
      static constexpr char kHex[] = "0123456789abcdef";
      std::string digits;
      for (int i = 0; i < 8; ++i) digits += kHex[seams.random.NextInt(16)];
      uuid = seams.host + "-" + std::to_string(seams.clock.Now() / kUsPerMs) + "-" + digits;
    }
    consumer_id = config.group_id + "_" + uuid;
  }

  ~Impl() { *alive = false; }

  // Callbacks of ZooKeeper and of the network run only while this consumer lives.
  template <class F>
  auto Guard(F f) {
    return [alive = alive, f = std::move(f)](auto&&... args) mutable {
      if (*alive) f(std::forward<decltype(args)>(args)...);
    };
  }

  void Emit(std::string_view ev, const EventFields& fields) {
    if (seams.events) seams.events(ev, fields);
  }

  // ---- Session and registration

  void Start() {
    seams.zk.SetWatcher(Guard([this](const WatchEvent& event) { OnWatch(event); }));
    seams.zk.SetSessionListener(Guard([this](SessionEvent event) { OnSession(event); }));
    seams.zk.Connect();
  }

  void OnSession(SessionEvent event) {
    if (closed) return;
    if (event == SessionEvent::kExpired) {
      // ZKSessionExpireListener: ZkClient opens a new session; handleNewSession forgets the
      // ownership (resetState: nothing committed) and registers again.
      registry.clear();
      ++rebalance_number;  // answers of the old session's attempt are ignored
      rebalancing = false;
      seams.zk.Connect();
      return;
    }
    if (event != SessionEvent::kSyncConnected) return;
    if (seams.zk.session_id() == registered_session) return;  // the same session, reconnected
    registered_session = seams.zk.session_id();
    Register();
  }

  void Register() {
    zk::ConsumerRegistration registration;
    for (const std::string& topic : topics) registration.subscription[topic] = 1;
    registration.pattern = pattern;
    registration.timestamp_ms = seams.clock.Now() / kUsPerMs;
    CreateWithParents(
        seams.zk, zk::ConsumerIdPath(config.group_id, consumer_id),
        zk::EncodeConsumerRegistration(registration), CreateMode::kEphemeral,
        Guard([this](Result<std::string> created) {
          if (closed) return;
          Emit(ev::kConsumerRegistered,
               EventFields{{field::kGroup, config.group_id},
                           {field::kConsumerId, consumer_id},
                           {field::kConsumer, "zookeeper"},
                           {field::kError,
                            created.ok() ? std::string("NONE") : created.status().ToString()}});
          TriggerRebalance();
        }));
  }

  void OnWatch(const WatchEvent& event) {
    if (closed) return;
    // Every watch this consumer sets is a rebalance trigger (ZKRebalancerListener.
    // handleChildChange, ZKTopicPartitionChangeListener.handleDataChange).
    (void)event;
    TriggerRebalance();
  }

  // ---- Rebalance (ZKRebalancerListener.syncedRebalance)

  void TriggerRebalance() {
    if (rebalancing) {
      rebalance_again = true;  // the watcher thread runs another one after this
      return;
    }
    rebalancing = true;
    rebalance_again = false;
    StartAttempt(0);
  }

  void StartAttempt(int32_t attempt_index) {
    auto attempt = std::make_shared<Attempt>();
    attempt->number = ++rebalance_number;
    current_attempt_index = attempt_index;
    ReadGroup(attempt);
  }

  bool Stale(const Attempt& attempt) const { return closed || attempt.number != rebalance_number; }

  // Counts one answer of the current step; runs `next` after the last.
  void Answered(const std::shared_ptr<Attempt>& attempt, const std::function<void()>& next) {
    KSIM_CHECK(attempt->waiting > 0);
    if (--attempt->waiting == 0 && !Stale(*attempt)) next();
  }

  void Fail(const std::shared_ptr<Attempt>& attempt, const Status& status) {
    if (attempt->error.empty()) attempt->error = status.ToString();
  }

  // Step 1: the members, the brokers and this consumer's topics.
  void ReadGroup(std::shared_ptr<Attempt> attempt) {
    attempt->waiting = 2 + topics.size();
    auto next = [this, attempt] { ReadMembers(attempt); };
    seams.zk.GetChildren(zk::ConsumerIdsPath(config.group_id), true,
                         Guard([this, attempt, next](Result<std::vector<std::string>> ids) {
                           if (ids.ok()) {
                             attempt->members = std::move(ids).value();
                           } else {
                             Fail(attempt, ids.status());
                           }
                           Answered(attempt, next);
                         }));
    // Watched only while no broker is registered, as Kafka subscribes then.
    seams.zk.GetChildren(std::string(zk::kBrokerIdsPath), brokers_watched,
                         Guard([this, attempt, next](Result<std::vector<std::string>> ids) {
                           if (ids.ok()) attempt->broker_ids = std::move(ids).value();
                           Answered(attempt, next);
                         }));
    for (const std::string& topic : topics) {
      seams.zk.GetData(
          zk::TopicPath(topic), true, Guard([this, attempt, next, topic](Result<ZnodeData> data) {
            if (data.ok()) {
              Result<zk::ReplicaAssignment> assignment = zk::DecodeReplicaAssignment(data->data);
              if (assignment.ok()) {
                attempt->partitions_per_topic[topic] = static_cast<int32_t>(assignment->size());
              }
            } else if (data.status() == Errc::kNoNode) {
              // Watch its creation (ZkClient.subscribeDataChanges on a missing
              // node leaves an exists watch).
              seams.zk.Exists(zk::TopicPath(topic), true, nullptr);
            } else {
              Fail(attempt, data.status());
            }
            Answered(attempt, next);
          }));
    }
  }

  // Step 2: each member's subscription and each broker's host.
  void ReadMembers(std::shared_ptr<Attempt> attempt) {
    if (!attempt->error.empty()) return AttemptFailed(attempt, "zk_error", attempt->error);
    attempt->waiting = 1 + attempt->members.size() + attempt->broker_ids.size();
    auto next = [this, attempt] { Reassign(attempt); };
    for (const std::string& member : attempt->members) {
      seams.zk.GetData(zk::ConsumerIdPath(config.group_id, member), false,
                       Guard([this, attempt, next, member](Result<ZnodeData> data) {
                         Result<zk::ConsumerRegistration> registration =
                             data.ok() ? zk::DecodeConsumerRegistration(data->data)
                                       : Result<zk::ConsumerRegistration>(data.status());
                         if (registration.ok()) {
                           std::vector<std::string>& subscribed = attempt->subscriptions[member];
                           for (const auto& [topic, streams] : registration->subscription) {
                             subscribed.push_back(topic);
                           }
                         } else {
                           // A member left between the two reads: Kafka's attempt throws.
                           Fail(attempt, registration.status());
                         }
                         Answered(attempt, next);
                       }));
    }
    for (const std::string& id : attempt->broker_ids) {
      seams.zk.GetData(std::string(zk::kBrokerIdsPath) + "/" + id, false,
                       Guard([this, attempt, next, id](Result<ZnodeData> data) {
                         if (data.ok()) {
                           Result<zk::BrokerRegistration> broker =
                               zk::DecodeBrokerRegistration(data->data);
                           if (broker.ok()) attempt->broker_hosts[id] = broker->host;
                         }
                         Answered(attempt, next);
                       }));
    }
    // One more answer closes the step even with no member and no broker to read.
    seams.zk.Exists("/", false, Guard([this, attempt, next](Result<std::optional<ZnodeStat>>) {
                      Answered(attempt, next);
                    }));
  }

  // Step 3: stop fetching, commit, release, assign, read the offsets.
  void Reassign(std::shared_ptr<Attempt> attempt) {
    if (!attempt->error.empty()) return AttemptFailed(attempt, "zk_error", attempt->error);
    if (attempt->broker_hosts.empty()) {
      // "no brokers found when trying to rebalance": watch /brokers/ids, and the attempt counts
      // as done.
      brokers_watched = true;
      seams.zk.GetChildren(std::string(zk::kBrokerIdsPath), true, nullptr);
      Emit(ev::kRebalanceAttempt, AttemptFields(*attempt, "no_brokers", ""));
      return RebalanceDone();
    }
    brokers_watched = false;
    EnsureFetcher(attempt->broker_hosts);
    // closeFetchers: stop fetching and commit what was consumed before the ownership goes.
    std::vector<TopicPartition> revoked(registry.begin(), registry.end());
    std::map<TopicPartition, Offset> consumed = fetcher->positions();
    fetcher->Assign({});
    if (config.auto_commit_enable) {
      std::map<TopicPartition, Offset> commit;
      for (const TopicPartition& tp : revoked) {
        if (auto it = consumed.find(tp); it != consumed.end()) commit[tp] = it->second;
      }
      WriteOffsets(commit, nullptr);
    }
    if (!revoked.empty()) Emit(ev::kPartitionsRevoked, PartitionList(config.group_id, revoked));
    // releasePartitionOwnership
    for (const TopicPartition& tp : revoked) {
      seams.zk.Delete(zk::ConsumerOwnerPath(config.group_id, tp.topic, tp.partition), kAnyVersion,
                      nullptr);
    }
    registry.clear();

    std::map<std::string, std::vector<std::string>> relevant;
    std::map<std::string, int32_t> counts;
    for (const std::string& topic : topics) {
      if (auto it = attempt->partitions_per_topic.find(topic);
          it != attempt->partitions_per_topic.end()) {
        counts[topic] = it->second;
      }
    }
    for (const auto& [member, subscribed] : attempt->subscriptions) {
      for (const std::string& topic : subscribed) {
        if (std::find(topics.begin(), topics.end(), topic) != topics.end()) {
          relevant[member].push_back(topic);
        }
      }
    }
    Result<std::map<std::string, std::vector<TopicPartition>>> assignment =
        AssignOldConsumers(config.partition_assignment_strategy, counts, relevant);
    if (!assignment.ok()) {
      return AttemptFailed(attempt, "assignment_error", assignment.status().message());
    }
    attempt->mine = (*assignment)[consumer_id];
    std::sort(attempt->mine.begin(), attempt->mine.end());
    // fetchOffsets: /consumers/<group>/offsets/<t>/<p>
    attempt->waiting = 1 + attempt->mine.size();
    auto next = [this, attempt] { ClaimOwnership(attempt); };
    for (const TopicPartition& tp : attempt->mine) {
      seams.zk.GetData(zk::ConsumerOffsetPath(config.group_id, tp.topic, tp.partition), false,
                       Guard([this, attempt, next, tp](Result<ZnodeData> data) {
                         Offset offset = kUndefinedOffset;
                         if (data.ok()) {
                           int64_t value = -1;
                           const std::string& text = data->data;
                           const auto [end, error] =
                               std::from_chars(text.data(), text.data() + text.size(), value);
                           if (error == std::errc() && end == text.data() + text.size())
                             offset = Offset(value);
                         } else if (data.status() != Errc::kNoNode) {
                           Fail(attempt, data.status());
                         }
                         attempt->offsets[tp] = offset;
                         Answered(attempt, next);
                       }));
    }
    seams.zk.Exists("/", false, Guard([this, attempt, next](Result<std::optional<ZnodeStat>>) {
                      Answered(attempt, next);
                    }));
  }

  // Step 4: reflectPartitionOwnershipDecision.
  void ClaimOwnership(std::shared_ptr<Attempt> attempt) {
    if (!attempt->error.empty()) return AttemptFailed(attempt, "zk_error", attempt->error);
    attempt->waiting = 1 + attempt->mine.size();
    auto next = [this, attempt] { FinishAttempt(attempt); };
    const std::string thread_id = consumer_id + "-0";
    for (const TopicPartition& tp : attempt->mine) {
      CreateWithParents(seams.zk, zk::ConsumerOwnerPath(config.group_id, tp.topic, tp.partition),
                        thread_id, CreateMode::kEphemeral,
                        Guard([this, attempt, next, tp](Result<std::string> created) {
                          if (created.ok()) {
                            attempt->owned.push_back(tp);
                          } else if (created.status() == Errc::kNodeExists) {
                            attempt->owner_exists = true;
                          } else {
                            Fail(attempt, created.status());
                          }
                          Answered(attempt, next);
                        }));
    }
    seams.zk.Exists("/", false, Guard([this, attempt, next](Result<std::optional<ZnodeStat>>) {
                      Answered(attempt, next);
                    }));
  }

  void FinishAttempt(std::shared_ptr<Attempt> attempt) {
    if (attempt->owner_exists || !attempt->error.empty()) {
      // Remove every owner node this attempt created, then try again after the backoff.
      for (const TopicPartition& tp : attempt->owned) {
        seams.zk.Delete(zk::ConsumerOwnerPath(config.group_id, tp.topic, tp.partition), kAnyVersion,
                        nullptr);
      }
      return attempt->owner_exists
                 ? AttemptFailed(attempt, "owner_exists", PartitionsField(attempt->mine))
                 : AttemptFailed(attempt, "zk_error", attempt->error);
    }
    registry = std::set<TopicPartition>(attempt->mine.begin(), attempt->mine.end());
    fetcher->Assign(attempt->mine);
    for (const TopicPartition& tp : attempt->mine) {
      const Offset offset = attempt->offsets[tp];
      Emit(ev::kOffsetFetched, EventFields{{field::kGroup, config.group_id},
                                           {field::kTopic, tp.topic},
                                           {field::kPartition, tp.partition.value()},
                                           {field::kOffset, offset.value()}});
      if (offset >= Offset(0)) checkpointed[tp] = offset;
      fetcher->MarkAwaitingCommitted(tp);
      fetcher->OnCommitted(tp, offset);
    }
    Emit(ev::kRebalanceAttempt, AttemptFields(*attempt, "ok", ""));
    Emit(ev::kPartitionsAssigned, PartitionList(config.group_id, attempt->mine));
    RebalanceDone();
    Kick();
  }

  EventFields AttemptFields(const Attempt& attempt, std::string_view result,
                            const std::string& detail) const {
    EventFields fields{{field::kGroup, config.group_id},
                       {field::kAttempt, current_attempt_index + 1},
                       {field::kResult, std::string(result)}};
    if (!detail.empty()) fields.Add(field::kMessage, detail);
    (void)attempt;
    return fields;
  }

  void AttemptFailed(std::shared_ptr<Attempt> attempt, std::string_view result,
                     const std::string& detail) {
    if (Stale(*attempt)) return;
    Emit(ev::kRebalanceAttempt, AttemptFields(*attempt, result, detail));
    const int32_t next_index = current_attempt_index + 1;
    if (next_index >= config.rebalance_max_retries) {
      Emit(ev::kRebalanceFailed,
           EventFields{
               {field::kGroup, config.group_id},
               {field::kMessage, consumer_id + " can't rebalance after " +
                                     std::to_string(config.rebalance_max_retries) + " retries"}});
      return RebalanceDone();
    }
    const uint64_t number = attempt->number;
    timers.Schedule(config.rebalance_backoff_ms * kUsPerMs, [this, number, next_index] {
      if (closed || number != rebalance_number) return;
      StartAttempt(next_index);
    });
  }

  void RebalanceDone() {
    rebalancing = false;
    if (rebalance_again && !closed) TriggerRebalance();
  }

  // ---- Fetching

  void EnsureFetcher(const std::map<std::string, std::string>& broker_hosts) {
    if (network != nullptr) return;
    for (const auto& [id, host] : broker_hosts) fetch_config.bootstrap_servers.push_back(host);
    network = std::make_unique<ConsumerNetwork>(
        fetch_config, seams.transport, seams.timers, seams.clock,
        ConsumerNetwork::Listeners{[this] { Kick(); }, [this](std::string_view) { Kick(); }});
    fetcher = std::make_unique<Fetcher>(fetch_config, *network, seams.timers, seams.clock,
                                        seams.events, [this] { Kick(); });
  }

  void Kick() {
    if (step_scheduled || closed) return;
    step_scheduled = true;
    timers.Schedule(0, [this] { Step(); });
  }

  void Step() {
    step_scheduled = false;
    if (closed || fetcher == nullptr) return;
    fetcher->SendRequests();
    if (poll_done && (fetcher->TakeFailure() || fetcher->HasRecords())) CompletePoll();
  }

  void CompletePoll() {
    KSIM_CHECK(static_cast<bool>(poll_done));
    timers.Cancel(poll_timer);
    poll_timer = 0;
    std::vector<ConsumerRecord> records;
    if (fetcher != nullptr) records = fetcher->Drain(fetch_config.max_poll_records);
    std::function<void(std::vector<ConsumerRecord>)> done = std::move(poll_done);
    poll_done = nullptr;
    Kick();
    done(std::move(records));
  }

  // ---- Offsets (commitOffsetToZooKeeper)

  void WriteOffsets(const std::map<TopicPartition, Offset>& offsets,
                    std::function<void(Status)> done) {
    auto remaining = std::make_shared<size_t>(1);
    auto first_error = std::make_shared<Status>(Status::Ok());
    auto finish = [remaining, first_error, done = std::move(done)] {
      if (--*remaining == 0 && done) done(*first_error);
    };
    for (const auto& entry : offsets) {
      // Copies, not structured bindings: clang (the fuzz build) cannot capture those.
      const TopicPartition tp = entry.first;
      const Offset offset = entry.second;
      if (auto it = checkpointed.find(tp); it != checkpointed.end() && it->second == offset) {
        continue;
      }
      ++*remaining;
      checkpointed[tp] = offset;
      const std::string path = zk::ConsumerOffsetPath(config.group_id, tp.topic, tp.partition);
      auto report = Guard([this, tp, offset, first_error, finish](Status status) {
        if (!status.ok() && first_error->ok()) *first_error = status;
        if (!status.ok()) checkpointed.erase(tp);
        Emit(ev::kOffsetCommit,
             EventFields{{field::kGroup, config.group_id},
                         {field::kTopic, tp.topic},
                         {field::kPartition, tp.partition.value()},
                         {field::kOffset, offset.value()},
                         {field::kError, status.ok() ? std::string("NONE") : status.ToString()}});
        finish();
      });
      // ZkUtils.updatePersistentPath: write; a missing node is created with its parents.
      seams.zk.SetData(
          path, std::to_string(offset.value()), kAnyVersion,
          [&zk = seams.zk, alive = alive, path, offset, report](Result<ZnodeStat> set) mutable {
            if (!*alive) return;
            if (set.ok() || set.status() != Errc::kNoNode) {
              return report(set.ok() ? Status::Ok() : set.status());
            }
            CreateWithParents(zk, path, std::to_string(offset.value()), CreateMode::kPersistent,
                              [report](Result<std::string> created) mutable {
                                report(created.ok() ? Status::Ok() : created.status());
                              });
          });
    }
    // Answered through ZooKeeper so that `done` never runs inside the call.
    seams.zk.Exists("/", false,
                    Guard([finish](Result<std::optional<ZnodeStat>>) mutable { finish(); }));
  }

  std::map<TopicPartition, Offset> OwnedPositions() const {
    std::map<TopicPartition, Offset> out;
    if (fetcher == nullptr) return out;
    for (const auto& [tp, offset] : fetcher->positions()) {
      if (registry.count(tp) != 0) out[tp] = offset;
    }
    return out;
  }

  void ScheduleAutoCommit() {
    if (!config.auto_commit_enable) return;
    // The "kafka-consumer-autocommit" task: first after one interval, then every interval.
    timers.Schedule(config.auto_commit_interval_ms * kUsPerMs, [this] {
      if (closed) return;
      WriteOffsets(OwnedPositions(), nullptr);
      ScheduleAutoCommit();
    });
  }

  ZookeeperConsumerConfig config;
  ZookeeperConsumerSeams seams;
  ConsumerConfig fetch_config;  // what the shared ConsumerNetwork and Fetcher read
  TimerGroup timers;
  std::shared_ptr<bool> alive = std::make_shared<bool>(true);
  std::string consumer_id;
  std::vector<std::string> topics;
  std::string pattern;
  std::unique_ptr<ConsumerNetwork> network;
  std::unique_ptr<Fetcher> fetcher;

  ZkSessionId registered_session = kNoSession;
  bool rebalancing = false;
  bool rebalance_again = false;
  bool brokers_watched = false;
  uint64_t rebalance_number = 0;
  int32_t current_attempt_index = 0;
  std::set<TopicPartition> registry;              // the partitions owned (topicRegistry)
  std::map<TopicPartition, Offset> checkpointed;  // what this consumer last wrote to ZooKeeper

  bool closed = false;
  bool step_scheduled = false;
  std::function<void(std::vector<ConsumerRecord>)> poll_done;
  TimerId poll_timer = 0;
};

ZookeeperConsumer::ZookeeperConsumer(ZookeeperConsumerConfig config, ZookeeperConsumerSeams seams)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(seams))) {
  KSIM_CHECK(!impl_->config.group_id.empty());
  KSIM_CHECK(impl_->config.rebalance_max_retries >= 1);
}

ZookeeperConsumer::~ZookeeperConsumer() = default;

void ZookeeperConsumer::Subscribe(std::vector<std::string> topics, std::string pattern) {
  KSIM_CHECK_MSG(impl_->topics.empty(), "Subscribe twice");
  KSIM_CHECK(!topics.empty());
  std::sort(topics.begin(), topics.end());
  topics.erase(std::unique(topics.begin(), topics.end()), topics.end());
  impl_->topics = std::move(topics);
  impl_->pattern = std::move(pattern);
  impl_->Start();
  impl_->ScheduleAutoCommit();
}

void ZookeeperConsumer::Poll(TimeUs timeout_us,
                             std::function<void(std::vector<ConsumerRecord>)> done) {
  KSIM_CHECK_MSG(!impl_->poll_done, "a Poll is pending");
  KSIM_CHECK_MSG(!impl_->closed, "Poll after Close");
  KSIM_CHECK(done != nullptr);
  KSIM_CHECK(timeout_us >= 0);
  impl_->poll_done = std::move(done);
  impl_->poll_timer = impl_->timers.Schedule(timeout_us, [impl = impl_.get()] {
    impl->poll_timer = 0;
    if (impl->poll_done) impl->CompletePoll();
  });
  impl_->Kick();
}

void ZookeeperConsumer::Commit(std::map<TopicPartition, Offset> offsets,
                               std::function<void(Status)> done) {
  KSIM_CHECK_MSG(!impl_->closed, "Commit after Close");
  if (offsets.empty()) offsets = impl_->OwnedPositions();
  impl_->WriteOffsets(offsets, std::move(done));
}

void ZookeeperConsumer::Close(std::function<void()> done) {
  KSIM_CHECK_MSG(!impl_->closed, "closed twice");
  // ZookeeperConsumerConnector.shutdown: stop the fetchers, commit (auto commit on), close the
  // ZooKeeper session (its ephemeral nodes go with it).
  // The commit is synchronous in Kafka (ZkUtils.updatePersistentPath): the session closes after
  // its writes, the creation of a missing offsets node included.
  const std::map<TopicPartition, Offset> consumed = impl_->config.auto_commit_enable
                                                        ? impl_->OwnedPositions()
                                                        : std::map<TopicPartition, Offset>{};
  impl_->closed = true;
  impl_->timers.CancelAll();
  impl_->poll_done = nullptr;
  if (impl_->fetcher != nullptr) impl_->fetcher->Shutdown();
  if (impl_->network != nullptr) impl_->network->Shutdown();
  impl_->WriteOffsets(consumed, impl_->Guard([impl = impl_.get(), done = std::move(done)](Status) {
    impl->seams.zk.Close(impl->Guard([done] {
      if (done) done();
    }));
  }));
}

std::vector<TopicPartition> ZookeeperConsumer::assignment() const {
  return std::vector<TopicPartition>(impl_->registry.begin(), impl_->registry.end());
}

std::map<TopicPartition, Offset> ZookeeperConsumer::positions() const {
  return impl_->OwnedPositions();
}

const std::string& ZookeeperConsumer::consumer_id() const { return impl_->consumer_id; }

const ZookeeperConsumerConfig& ZookeeperConsumer::config() const { return impl_->config; }

}  // namespace ksim
