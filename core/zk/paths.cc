#include "core/zk/paths.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "core/base/check.h"

namespace ksim::zk {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;  // keeps Kafka's key order when encoding

Status Corrupt(std::string_view what, std::string_view detail) {
  return Status(Errc::kCorruption, std::string(what) + ": " + std::string(detail));
}

// Parses JSON text that must be an object; never throws.
Result<Json> ParseObject(std::string_view text, std::string_view what) {
  Json parsed = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Corrupt(what, "not valid JSON");
  if (!parsed.is_object()) return Corrupt(what, "not a JSON object");
  return parsed;
}

// An integer in int32 range (Kafka parses JSON numbers with Integer.parseInt).
Result<int32_t> AsInt32(const Json& value, std::string_view what, std::string_view field) {
  if (!value.is_number_integer())
    return Corrupt(what, "\"" + std::string(field) + "\" is not an integer");
  const bool is_unsigned = value.is_number_unsigned();
  if (is_unsigned && value.get<uint64_t>() > uint64_t{std::numeric_limits<int32_t>::max()}) {
    return Corrupt(what, "\"" + std::string(field) + "\" is out of range");
  }
  if (!is_unsigned) {
    const int64_t v = value.get<int64_t>();
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
      return Corrupt(what, "\"" + std::string(field) + "\" is out of range");
    }
  }
  return static_cast<int32_t>(value.get<int64_t>());
}

Result<int32_t> GetInt32(const Json& object, const char* field, std::string_view what) {
  auto it = object.find(field);
  if (it == object.end()) return Corrupt(what, "no \"" + std::string(field) + "\"");
  return AsInt32(*it, what, field);
}

Result<std::string> GetString(const Json& object, const char* field, std::string_view what) {
  auto it = object.find(field);
  if (it == object.end()) return Corrupt(what, "no \"" + std::string(field) + "\"");
  if (!it->is_string()) return Corrupt(what, "\"" + std::string(field) + "\" is not a string");
  return it->get<std::string>();
}

template <class Id>
Result<std::vector<Id>> GetIdArray(const Json& object, const char* field, std::string_view what) {
  auto it = object.find(field);
  if (it == object.end()) return Corrupt(what, "no \"" + std::string(field) + "\"");
  if (!it->is_array()) return Corrupt(what, "\"" + std::string(field) + "\" is not an array");
  std::vector<Id> ids;
  for (const Json& element : *it) {
    KSIM_ASSIGN_OR_RETURN(int32_t id, AsInt32(element, what, field));
    ids.push_back(Id(id));
  }
  return ids;
}

// A whole string as a decimal int32 (Integer.parseInt: optional sign, digits only).
std::optional<int32_t> ParseInt32(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  int32_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

std::optional<int64_t> ParseInt64(std::string_view text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

// Compact, as Kafka writes it. Bytes that are not UTF-8 (nothing Kafka validates lets them in)
// are replaced rather than thrown on.
std::string Dump(const OrderedJson& json) {
  return json.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

// The data ksim writes most (a partition's state at every election, a topic's assignment) is
// written as text directly, and read back first as the exact text it writes: what Dump gives of
// the same object, without a JSON tree either way. Anything else (spaces, other key orders,
// another writer's data) is read as JSON (docs/zookeeper.md, "Kafka's paths and data").
void AppendInt(std::string& out, int64_t value) {
  char digits[24];
  const std::to_chars_result end = std::to_chars(digits, digits + sizeof(digits), value);
  out.append(digits, end.ptr);
}

template <class Id>
void AppendIdArray(std::string& out, const std::vector<Id>& ids) {
  out += '[';
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ',';
    AppendInt(out, ids[i].value());
  }
  out += ']';
}

// A reader of the text the encoders above write. Each call consumes what it reads and reports
// whether it was there; a false anywhere means the text is not in that form.
class CanonicalReader {
 public:
  explicit CanonicalReader(std::string_view text) : text_(text) {}
  bool Literal(std::string_view literal) {
    if (text_.substr(pos_, literal.size()) != literal) return false;
    pos_ += literal.size();
    return true;
  }
  bool Int32(int32_t* value) {
    const char* begin = text_.data() + pos_;
    const std::from_chars_result read = std::from_chars(begin, text_.data() + text_.size(), *value);
    if (read.ec != std::errc() || read.ptr == begin) return false;
    pos_ += static_cast<size_t>(read.ptr - begin);
    return true;
  }
  // `[a,b,...]` of int32s.
  template <class Id>
  bool IdArray(std::vector<Id>* ids) {
    if (!Literal("[")) return false;
    if (Literal("]")) return true;
    do {
      int32_t id = 0;
      if (!Int32(&id)) return false;
      ids->push_back(Id(id));
    } while (Literal(","));
    return Literal("]");
  }
  bool Peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool AtEnd() const { return pos_ == text_.size(); }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

// ---- Paths
// ---------------------------------------------------------------------------------------

std::vector<std::string> CommonPaths() {
  return {std::string(kConsumersPath),
          std::string(kBrokerIdsPath),
          std::string(kBrokerTopicsPath),
          std::string(kEntityConfigChangesPath),
          std::string(kTopicConfigsPath),
          std::string(kClientConfigsPath),
          std::string(kDeleteTopicsPath),
          std::string(kBrokerSequenceIdPath),
          std::string(kIsrChangeNotificationPath)};
}

std::string BrokerIdPath(BrokerId id) {
  return std::string(kBrokerIdsPath) + "/" + std::to_string(id.value());
}
std::string TopicPath(std::string_view topic) {
  return std::string(kBrokerTopicsPath) + "/" + std::string(topic);
}
std::string TopicPartitionsPath(std::string_view topic) { return TopicPath(topic) + "/partitions"; }
std::string TopicPartitionPath(std::string_view topic, PartitionId partition) {
  return TopicPartitionsPath(topic) + "/" + std::to_string(partition.value());
}
std::string PartitionStatePath(std::string_view topic, PartitionId partition) {
  return TopicPartitionPath(topic, partition) + "/state";
}
std::string DeleteTopicPath(std::string_view topic) {
  return std::string(kDeleteTopicsPath) + "/" + std::string(topic);
}
std::string TopicConfigPath(std::string_view topic) {
  return std::string(kTopicConfigsPath) + "/" + std::string(topic);
}
std::string IsrChangeNotificationSequentialPath() {
  return std::string(kIsrChangeNotificationPath) + "/" + std::string(kIsrChangeNotificationPrefix);
}

Result<BrokerId> ParseBrokerIdNode(std::string_view name) {
  const std::optional<int32_t> id = ParseInt32(name);
  if (!id) return Corrupt("broker id node", "\"" + std::string(name) + "\" is not an integer");
  return BrokerId(*id);
}

Result<PartitionId> ParsePartitionNode(std::string_view name) {
  const std::optional<int32_t> id = ParseInt32(name);
  if (!id || *id < 0) {
    return Corrupt("partition node", "\"" + std::string(name) + "\" is not a partition id");
  }
  return PartitionId(*id);
}

// ---- Broker registration
// -------------------------------------------------------------------------

std::string EncodeBrokerRegistration(const BrokerRegistration& broker) {
  OrderedJson json;
  json["jmx_port"] = broker.jmx_port;
  json["timestamp"] = std::to_string(broker.timestamp_ms);
  json["endpoints"] = broker.endpoints;
  json["host"] = broker.host;
  json["version"] = broker.version;
  json["port"] = broker.port;
  if (broker.rack && broker.version >= 3) json["rack"] = *broker.rack;
  return Dump(json);
}

Result<BrokerRegistration> DecodeBrokerRegistration(std::string_view text) {
  constexpr std::string_view kWhat = "broker registration";
  KSIM_ASSIGN_OR_RETURN(Json json, ParseObject(text, kWhat));
  BrokerRegistration broker;
  KSIM_ASSIGN_OR_RETURN(broker.version, GetInt32(json, "version", kWhat));
  if (broker.version < 1) return Corrupt(kWhat, "unsupported version");
  if (broker.version == 1 || json.contains("host")) {
    KSIM_ASSIGN_OR_RETURN(broker.host, GetString(json, "host", kWhat));
  }
  if (broker.version == 1 || json.contains("port")) {
    KSIM_ASSIGN_OR_RETURN(broker.port, GetInt32(json, "port", kWhat));
  }
  if (broker.version == 1) {
    broker.endpoints.push_back("PLAINTEXT://" + broker.host + ":" + std::to_string(broker.port));
  } else {
    auto it = json.find("endpoints");
    if (it == json.end() || !it->is_array()) return Corrupt(kWhat, "no \"endpoints\" array");
    for (const Json& endpoint : *it) {
      if (!endpoint.is_string()) return Corrupt(kWhat, "an endpoint is not a string");
      broker.endpoints.push_back(endpoint.get<std::string>());
    }
  }
  if (json.contains("jmx_port")) {
    KSIM_ASSIGN_OR_RETURN(broker.jmx_port, GetInt32(json, "jmx_port", kWhat));
  }
  if (json.contains("timestamp")) {
    KSIM_ASSIGN_OR_RETURN(std::string timestamp, GetString(json, "timestamp", kWhat));
    const std::optional<int64_t> ms = ParseInt64(timestamp);
    if (!ms) return Corrupt(kWhat, "\"timestamp\" is not a number");
    broker.timestamp_ms = *ms;
  }
  auto rack = json.find("rack");
  if (rack != json.end() && !rack->is_null()) {
    if (!rack->is_string()) return Corrupt(kWhat, "\"rack\" is not a string");
    broker.rack = rack->get<std::string>();
  }
  return broker;
}

// ---- Topic assignment
// ----------------------------------------------------------------------------

std::string EncodeReplicaAssignment(const ReplicaAssignment& assignment) {
  // {"version":1,"partitions":{"0":[1,2,3],...}}, in partition order.
  std::string out = R"({"version":1,"partitions":{)";
  bool first = true;
  for (const auto& [partition, replicas] : assignment) {
    if (!first) out += ',';
    first = false;
    out += '"';
    AppendInt(out, partition.value());
    out += "\":";
    AppendIdArray(out, replicas);
  }
  out += "}}";
  return out;
}

namespace {

// The assignment as EncodeReplicaAssignment writes it, or nullopt.
std::optional<ReplicaAssignment> ReadEncodedAssignment(std::string_view text) {
  CanonicalReader reader(text);
  ReplicaAssignment assignment;
  if (!reader.Literal(R"({"version":1,"partitions":{)")) return std::nullopt;
  if (!reader.Peek('}')) {
    do {
      int32_t partition = 0;
      std::vector<BrokerId> replicas;
      if (!reader.Literal("\"") || !reader.Int32(&partition) || partition < 0 ||
          !reader.Literal("\":") || !reader.IdArray(&replicas)) {
        return std::nullopt;  // (a negative partition: the JSON reading below refuses it)
      }
      assignment[PartitionId(partition)] = std::move(replicas);
    } while (reader.Literal(","));
  }
  if (!reader.Literal("}}") || !reader.AtEnd()) return std::nullopt;
  // Exactly the text written for what was read (no repeated or unordered key, no "01", no "-0"):
  // then the JSON reading below would read the same.
  if (EncodeReplicaAssignment(assignment) != text) return std::nullopt;
  return assignment;
}

}  // namespace

Result<ReplicaAssignment> DecodeReplicaAssignment(std::string_view text) {
  constexpr std::string_view kWhat = "topic assignment";
  if (std::optional<ReplicaAssignment> written = ReadEncodedAssignment(text)) return *written;
  KSIM_ASSIGN_OR_RETURN(Json json, ParseObject(text, kWhat));
  ReplicaAssignment assignment;
  auto partitions = json.find("partitions");
  if (partitions == json.end()) return assignment;
  if (!partitions->is_object()) return Corrupt(kWhat, "\"partitions\" is not an object");
  for (const auto& [key, replicas] : partitions->items()) {
    const std::optional<int32_t> partition = ParseInt32(key);
    if (!partition || *partition < 0) {
      return Corrupt(kWhat, "partition \"" + key + "\" is not a partition id");
    }
    if (!replicas.is_array()) return Corrupt(kWhat, "replicas of " + key + " are not an array");
    std::vector<BrokerId> brokers;
    for (const Json& replica : replicas) {
      KSIM_ASSIGN_OR_RETURN(int32_t id, AsInt32(replica, kWhat, key));
      brokers.push_back(BrokerId(id));
    }
    assignment[PartitionId(*partition)] = std::move(brokers);
  }
  return assignment;
}

// ---- Partition state
// -----------------------------------------------------------------------------

std::string EncodePartitionState(const PartitionState& state) {
  // {"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2,3]}
  std::string out = R"({"controller_epoch":)";
  AppendInt(out, state.controller_epoch.value());
  out += R"(,"leader":)";
  AppendInt(out, state.leader.value());
  out += R"(,"version":1,"leader_epoch":)";
  AppendInt(out, state.leader_epoch.value());
  out += R"(,"isr":)";
  AppendIdArray(out, state.isr);
  out += '}';
  return out;
}

namespace {

// The state as EncodePartitionState writes it, or nullopt.
std::optional<PartitionState> ReadEncodedPartitionState(std::string_view text) {
  CanonicalReader reader(text);
  PartitionState state;
  int32_t controller_epoch = 0, leader = 0, leader_epoch = 0;
  if (!reader.Literal(R"({"controller_epoch":)") || !reader.Int32(&controller_epoch) ||
      !reader.Literal(R"(,"leader":)") || !reader.Int32(&leader) ||
      !reader.Literal(R"(,"version":1,"leader_epoch":)") || !reader.Int32(&leader_epoch) ||
      !reader.Literal(R"(,"isr":)") || !reader.IdArray(&state.isr) || !reader.Literal("}") ||
      !reader.AtEnd()) {
    return std::nullopt;
  }
  state.controller_epoch = ControllerEpoch(controller_epoch);
  state.leader = BrokerId(leader);
  state.leader_epoch = LeaderEpoch(leader_epoch);
  if (EncodePartitionState(state) != text) return std::nullopt;  // as for the assignment
  return state;
}

}  // namespace

Result<PartitionState> DecodePartitionState(std::string_view text) {
  constexpr std::string_view kWhat = "partition state";
  if (std::optional<PartitionState> written = ReadEncodedPartitionState(text)) return *written;
  KSIM_ASSIGN_OR_RETURN(Json json, ParseObject(text, kWhat));
  PartitionState state;
  KSIM_ASSIGN_OR_RETURN(int32_t leader, GetInt32(json, "leader", kWhat));
  KSIM_ASSIGN_OR_RETURN(int32_t leader_epoch, GetInt32(json, "leader_epoch", kWhat));
  KSIM_ASSIGN_OR_RETURN(int32_t controller_epoch, GetInt32(json, "controller_epoch", kWhat));
  KSIM_ASSIGN_OR_RETURN(state.isr, GetIdArray<BrokerId>(json, "isr", kWhat));
  state.leader = BrokerId(leader);
  state.leader_epoch = LeaderEpoch(leader_epoch);
  state.controller_epoch = ControllerEpoch(controller_epoch);
  return state;
}

// ---- Controller
// ----------------------------------------------------------------------------------

std::string EncodeControllerRegistration(const ControllerRegistration& controller) {
  OrderedJson json;
  json["version"] = 1;
  json["brokerid"] = controller.broker_id.value();
  json["timestamp"] = std::to_string(controller.timestamp_ms);
  return Dump(json);
}

Result<ControllerRegistration> DecodeControllerRegistration(std::string_view data) {
  constexpr std::string_view kWhat = "controller registration";
  ControllerRegistration controller;
  Json json = Json::parse(data.begin(), data.end(), nullptr, /*allow_exceptions=*/false);
  if (json.is_object()) {
    KSIM_ASSIGN_OR_RETURN(int32_t broker, GetInt32(json, "brokerid", kWhat));
    controller.broker_id = BrokerId(broker);
    auto timestamp = json.find("timestamp");
    if (timestamp != json.end() && timestamp->is_string()) {
      controller.timestamp_ms = ParseInt64(timestamp->get<std::string>()).value_or(0);
    }
    return controller;
  }
  // The format before 0.8.2: the broker id alone.
  const std::optional<int32_t> broker = ParseInt32(data);
  if (!broker) return Corrupt(kWhat, "neither a JSON object nor a broker id");
  controller.broker_id = BrokerId(*broker);
  return controller;
}

std::string EncodeControllerEpoch(ControllerEpoch epoch) { return std::to_string(epoch.value()); }

Result<ControllerEpoch> DecodeControllerEpoch(std::string_view data) {
  const std::optional<int32_t> epoch = ParseInt32(data);
  if (!epoch) return Corrupt("controller epoch", "\"" + std::string(data) + "\" is not an integer");
  return ControllerEpoch(*epoch);
}

// ---- ISR change notification
// ---------------------------------------------------------------------

std::string EncodeIsrChangeNotification(const std::vector<TopicAndPartition>& partitions) {
  OrderedJson list = OrderedJson::array();
  for (const TopicAndPartition& tp : partitions) {
    OrderedJson entry;
    entry["topic"] = tp.topic;
    entry["partition"] = tp.partition.value();
    list.push_back(std::move(entry));
  }
  OrderedJson json;
  json["version"] = 1;
  json["partitions"] = std::move(list);
  return Dump(json);
}

Result<std::vector<TopicAndPartition>> DecodeIsrChangeNotification(std::string_view text) {
  constexpr std::string_view kWhat = "ISR change notification";
  KSIM_ASSIGN_OR_RETURN(Json json, ParseObject(text, kWhat));
  auto list = json.find("partitions");
  if (list == json.end() || !list->is_array()) return Corrupt(kWhat, "no \"partitions\" array");
  std::vector<TopicAndPartition> partitions;
  for (const Json& entry : *list) {
    if (!entry.is_object()) return Corrupt(kWhat, "an entry is not an object");
    TopicAndPartition tp;
    KSIM_ASSIGN_OR_RETURN(tp.topic, GetString(entry, "topic", kWhat));
    KSIM_ASSIGN_OR_RETURN(int32_t partition, GetInt32(entry, "partition", kWhat));
    tp.partition = PartitionId(partition);
    partitions.push_back(std::move(tp));
  }
  return partitions;
}

std::string EncodePreferredReplicaElection(const std::vector<TopicAndPartition>& partitions) {
  return EncodeIsrChangeNotification(partitions);
}

Result<std::vector<TopicAndPartition>> DecodePreferredReplicaElection(std::string_view text) {
  Result<std::vector<TopicAndPartition>> partitions = DecodeIsrChangeNotification(text);
  if (!partitions.ok()) {
    return Status(partitions.status().code(),
                  "preferred replica election data: " + partitions.status().message());
  }
  std::vector<TopicAndPartition> sorted = *partitions;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i] == sorted[i - 1]) {
      return Status(Errc::kCorruption,
                    "Preferred replica election data contains duplicate partitions: [" +
                        sorted[i].topic + "," + std::to_string(sorted[i].partition.value()) + "]");
    }
  }
  return partitions;
}

// ---- Topic config
// --------------------------------------------------------------------------------

std::string EncodeTopicConfig(const TopicConfig& config) {
  OrderedJson entries = OrderedJson::object();
  for (const auto& [key, value] : config) entries[key] = value;
  OrderedJson json;
  json["version"] = 1;
  json["config"] = std::move(entries);
  return Dump(json);
}

Result<TopicConfig> DecodeTopicConfig(std::string_view text) {
  constexpr std::string_view kWhat = "topic config";
  KSIM_ASSIGN_OR_RETURN(Json json, ParseObject(text, kWhat));
  KSIM_ASSIGN_OR_RETURN(int32_t version, GetInt32(json, "version", kWhat));
  if (version != 1) return Corrupt(kWhat, "unsupported version");
  auto entries = json.find("config");
  if (entries == json.end() || !entries->is_object()) return Corrupt(kWhat, "no \"config\" object");
  TopicConfig config;
  for (const auto& [key, value] : entries->items()) {
    if (!value.is_string()) return Corrupt(kWhat, "the value of \"" + key + "\" is not a string");
    config[key] = value.get<std::string>();
  }
  return config;
}

// ---- /config/changes
// ------------------------------------------------------------------------------

std::string ConfigChangeSequentialPath() {
  return std::string(kEntityConfigChangesPath) + "/" + std::string(kConfigChangePrefix);
}

std::string EncodeTopicConfigChange(ConfigChangeFormat format, std::string_view topic) {
  OrderedJson json;
  switch (format) {
    case ConfigChangeFormat::kTopicName:
      return Dump(OrderedJson(std::string(topic)));
    case ConfigChangeFormat::kVersion1:
      json["version"] = 1;
      json["entity_type"] = "topics";
      json["entity_name"] = std::string(topic);
      return Dump(json);
    case ConfigChangeFormat::kVersion2:
      json["version"] = 2;
      json["entity_path"] = "topics/" + std::string(topic);
      return Dump(json);
  }
  KSIM_CHECK_MSG(false, "unknown config change format");
  return "";
}

Result<std::optional<std::string>> DecodeConfigChange(std::string_view text) {
  constexpr std::string_view kWhat = "config change notification";
  Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_string()) return std::optional<std::string>(json.get<std::string>());
  KSIM_ASSIGN_OR_RETURN(json, ParseObject(text, kWhat));
  KSIM_ASSIGN_OR_RETURN(int32_t version, GetInt32(json, "version", kWhat));
  if (version == 1) {
    KSIM_ASSIGN_OR_RETURN(std::string type, GetString(json, "entity_type", kWhat));
    KSIM_ASSIGN_OR_RETURN(std::string name, GetString(json, "entity_name", kWhat));
    if (type != "topics") return std::optional<std::string>();
    return std::optional<std::string>(std::move(name));
  }
  if (version == 2) {
    KSIM_ASSIGN_OR_RETURN(std::string path, GetString(json, "entity_path", kWhat));
    constexpr std::string_view kTopics = "topics/";
    if (!path.starts_with(kTopics)) return std::optional<std::string>();
    return std::optional<std::string>(path.substr(kTopics.size()));
  }
  return Corrupt(kWhat, "unsupported version " + std::to_string(version));
}

std::optional<int64_t> ConfigChangeNumber(std::string_view name) {
  if (!name.starts_with(kConfigChangePrefix)) return std::nullopt;
  const std::string_view digits = name.substr(kConfigChangePrefix.size());
  int64_t number = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (error != std::errc() || end != digits.data() + digits.size() || digits.empty()) {
    return std::nullopt;
  }
  return number;
}

// ---- /consumers
// -----------------------------------------------------------------------------------

std::string ConsumerGroupPath(std::string_view group) {
  return std::string(kConsumersPath) + "/" + std::string(group);
}

std::string ConsumerIdsPath(std::string_view group) { return ConsumerGroupPath(group) + "/ids"; }

std::string ConsumerIdPath(std::string_view group, std::string_view consumer_id) {
  return ConsumerIdsPath(group) + "/" + std::string(consumer_id);
}

std::string ConsumerOwnerPath(std::string_view group, std::string_view topic,
                              PartitionId partition) {
  return ConsumerGroupPath(group) + "/owners/" + std::string(topic) + "/" +
         std::to_string(partition.value());
}

std::string ConsumerOffsetPath(std::string_view group, std::string_view topic,
                               PartitionId partition) {
  return ConsumerGroupPath(group) + "/offsets/" + std::string(topic) + "/" +
         std::to_string(partition.value());
}

std::string EncodeConsumerRegistration(const ConsumerRegistration& registration) {
  OrderedJson subscription = OrderedJson::object();
  for (const auto& [topic, streams] : registration.subscription) subscription[topic] = streams;
  OrderedJson json;
  json["version"] = 1;
  json["subscription"] = std::move(subscription);
  json["pattern"] = registration.pattern;
  json["timestamp"] = std::to_string(registration.timestamp_ms);
  return Dump(json);
}

Result<ConsumerRegistration> DecodeConsumerRegistration(std::string_view text) {
  constexpr std::string_view kWhat = "consumer registration";
  KSIM_ASSIGN_OR_RETURN(Json json, ParseObject(text, kWhat));
  ConsumerRegistration registration;
  KSIM_ASSIGN_OR_RETURN(registration.pattern, GetString(json, "pattern", kWhat));
  auto subscription = json.find("subscription");
  if (subscription == json.end() || !subscription->is_object()) {
    return Corrupt(kWhat, "no \"subscription\" object");
  }
  for (const auto& [topic, streams] : subscription->items()) {
    KSIM_ASSIGN_OR_RETURN(int32_t count, AsInt32(streams, kWhat, topic));
    registration.subscription[topic] = count;
  }
  if (auto timestamp = json.find("timestamp"); timestamp != json.end() && timestamp->is_string()) {
    const std::string& digits = timestamp->get_ref<const std::string&>();
    int64_t ms = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), ms);
    if (error == std::errc() && end == digits.data() + digits.size())
      registration.timestamp_ms = ms;
  }
  return registration;
}

}  // namespace ksim::zk
