#include "sim/scenario/cli.h"

#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/base/text_distance.h"
#include "core/cluster/replica_assignment.h"

namespace ksim::sim {
namespace {

using Tool = CliCommand::Tool;
using TopicsAction = CliCommand::TopicsAction;

Status Invalid(std::string message) { return Status(Errc::kInvalidArgument, std::move(message)); }

// Words as a shell splits them: blanks separate, '…' and "…" group (quotes removed).
Result<std::vector<std::string>> SplitWords(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : text) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'' || c == '"') {
      quote = c;
    } else {
      word += c;
    }
  }
  if (quote != 0) return Invalid(std::string("unterminated ") + quote + " quote");
  if (in_word) words.push_back(std::move(word));
  return words;
}

struct OptionDef {
  std::string_view name;  // without the dashes
  bool takes_value;
};

const std::vector<OptionDef>& OptionsOf(Tool tool) {
  static const std::vector<OptionDef> kTopics = {
      {"create", false},    {"list", false},
      {"describe", false},  {"delete", false},
      {"zookeeper", true},  {"topic", true},
      {"partitions", true}, {"replication-factor", true},
      {"config", true},     {"replica-assignment", true}};
  static const std::vector<OptionDef> kProducer = {{"broker-list", true}, {"topic", true}};
  static const std::vector<OptionDef> kConsumer = {
      {"zookeeper", true},    {"bootstrap-server", true},
      {"topic", true},        {"from-beginning", false},
      {"group", true},        {"max-messages", true},
      {"new-consumer", false}};
  static const std::vector<OptionDef> kPreferred = {{"zookeeper", true},
                                                    {"path-to-json-file", true}};
  switch (tool) {
    case Tool::kTopics:
      return kTopics;
    case Tool::kConsoleProducer:
      return kProducer;
    case Tool::kConsoleConsumer:
      return kConsumer;
    case Tool::kPreferredReplicaElection:
      return kPreferred;
  }
  return kTopics;
}

std::optional<Tool> ToolOf(std::string_view word) {
  word = word.substr(word.find_last_of('/') == std::string_view::npos ? 0
                                                                      : word.find_last_of('/') + 1);
  if (word.ends_with(".sh")) word.remove_suffix(3);
  if (word == "kafka-topics") return Tool::kTopics;
  if (word == "kafka-console-producer") return Tool::kConsoleProducer;
  if (word == "kafka-console-consumer") return Tool::kConsoleConsumer;
  if (word == "kafka-preferred-replica-election") return Tool::kPreferredReplicaElection;
  return std::nullopt;
}

// Option name -> values in order (flags: one empty value per occurrence).
using Given = std::map<std::string, std::vector<std::string>, std::less<>>;

Result<Given> ParseOptions(Tool tool, const std::vector<std::string>& words) {
  const std::vector<OptionDef>& defs = OptionsOf(tool);
  Given given;
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (!word.starts_with("--") || word.size() == 2) {
      return Invalid("unexpected argument '" + word + "' (options start with --)");
    }
    std::string name = word.substr(2);
    std::optional<std::string> inline_value;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name.resize(eq);
    }
    const OptionDef* def = nullptr;
    for (const OptionDef& candidate : defs) {
      if (candidate.name == name) def = &candidate;
    }
    if (def == nullptr) {
      std::vector<std::string_view> names;
      for (const OptionDef& candidate : defs) names.push_back(candidate.name);
      std::string message =
          "--" + name + " is not a recognized option of " + std::string(CliToolName(tool));
      if (std::optional<std::string_view> closest = ClosestName(name, names)) {
        message += " (did you mean --" + std::string(*closest) + "?)";
      }
      return Invalid(message);
    }
    if (!def->takes_value) {
      if (inline_value) return Invalid("Option --" + name + " does not take an argument");
      given[name].push_back("");
      continue;
    }
    if (inline_value) {
      given[name].push_back(*inline_value);
    } else if (i + 1 < words.size() && !words[i + 1].starts_with("--")) {
      given[name].push_back(words[++i]);
    } else {
      return Invalid("Option --" + name + " requires an argument");
    }
  }
  return given;
}

bool Has(const Given& given, std::string_view name) { return given.find(name) != given.end(); }
// The last value given (joptsimple's valueOf).
const std::string& Last(const Given& given, std::string_view name) {
  return given.find(name)->second.back();
}

Status Require(const Given& given, std::string_view name) {
  if (Has(given, name)) return Status::Ok();
  return Invalid("Missing required argument \"[" + std::string(name) + "]\"");
}

Result<int64_t> ParseInteger(const Given& given, std::string_view name) {
  const std::string& text = Last(given, name);
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < INT32_MIN ||
      value > INT32_MAX) {
    return Invalid("Cannot parse argument '" + text + "' of option " + std::string(name));
  }
  return value;
}

Status ParseTopics(const Given& given, CliCommand& out) {
  const std::pair<std::string_view, TopicsAction> kActions[] = {
      {"create", TopicsAction::kCreate},
      {"list", TopicsAction::kList},
      {"describe", TopicsAction::kDescribe},
      {"delete", TopicsAction::kDelete}};
  int actions = 0;
  for (const auto& [name, action] : kActions) {
    if (Has(given, name)) {
      out.action = action;
      ++actions;
    }
  }
  if (actions != 1) {
    return Invalid(
        "Command must include exactly one action: --list, --describe, --create or --delete");
  }
  KSIM_RETURN_IF_ERROR(Require(given, "zookeeper"));
  out.zookeeper = Last(given, "zookeeper");
  if (Has(given, "topic")) out.topic = Last(given, "topic");
  if (out.action == TopicsAction::kCreate || out.action == TopicsAction::kDelete) {
    KSIM_RETURN_IF_ERROR(Require(given, "topic"));
  }
  const bool create = out.action == TopicsAction::kCreate;
  for (std::string_view only_create :
       {"partitions", "replication-factor", "config", "replica-assignment"}) {
    if (Has(given, only_create) && !create) {
      return Invalid("Option \"[" + std::string(only_create) +
                     "]\" can't be used with option \"[list],[describe],[delete]\"");
    }
  }
  if (!create) return Status::Ok();
  if (Has(given, "replica-assignment")) {
    if (Has(given, "partitions") || Has(given, "replication-factor")) {
      return Invalid(
          "Option \"[replica-assignment]\" can't be used with option "
          "\"[partitions],[replication-factor]\"");
    }
    Result<ReplicaAssignment> assignment =
        ParseReplicaAssignment(Last(given, "replica-assignment"));
    if (!assignment.ok()) return Invalid(assignment.status().message());
    out.replica_assignment = std::move(assignment).value();
  } else {
    KSIM_RETURN_IF_ERROR(Require(given, "partitions"));
    KSIM_RETURN_IF_ERROR(Require(given, "replication-factor"));
    KSIM_ASSIGN_OR_RETURN(const int64_t partitions, ParseInteger(given, "partitions"));
    KSIM_ASSIGN_OR_RETURN(const int64_t factor, ParseInteger(given, "replication-factor"));
    if (partitions < 1) return Invalid("Number of partitions must be larger than 0.");
    if (factor < 1) return Invalid("Replication factor must be larger than 0.");
    out.partitions = static_cast<int32_t>(partitions);
    out.replication_factor = static_cast<int32_t>(factor);
  }
  if (Has(given, "config")) {
    for (const std::string& setting : given.find("config")->second) {
      const size_t eq = setting.find('=');
      if (eq == std::string::npos || eq == 0) {
        return Invalid(
            "Invalid topic config: all configs to be added must be in the format "
            "\"key=val\".");
      }
      out.config.emplace_back(setting.substr(0, eq), setting.substr(eq + 1));
    }
  }
  return Status::Ok();
}

Status ParseConsoleConsumer(const Given& given, CliCommand& out) {
  if (Has(given, "zookeeper") == Has(given, "bootstrap-server")) {
    return Invalid("Exactly one of --zookeeper or --bootstrap-server is required.");
  }
  if (Has(given, "zookeeper")) out.zookeeper = Last(given, "zookeeper");
  if (Has(given, "bootstrap-server")) out.bootstrap_server = Last(given, "bootstrap-server");
  out.new_consumer = Has(given, "new-consumer");
  KSIM_RETURN_IF_ERROR(Require(given, "topic"));
  out.topic = Last(given, "topic");
  out.from_beginning = Has(given, "from-beginning");
  if (Has(given, "group")) out.group = Last(given, "group");
  if (Has(given, "max-messages")) {
    KSIM_ASSIGN_OR_RETURN(const int64_t max_messages, ParseInteger(given, "max-messages"));
    if (max_messages < 1) return Invalid("--max-messages must be at least 1");
    out.max_messages = max_messages;
  }
  return Status::Ok();
}

}  // namespace

std::string_view CliToolName(Tool tool) {
  switch (tool) {
    case Tool::kTopics:
      return "kafka-topics.sh";
    case Tool::kConsoleProducer:
      return "kafka-console-producer.sh";
    case Tool::kConsoleConsumer:
      return "kafka-console-consumer.sh";
    case Tool::kPreferredReplicaElection:
      return "kafka-preferred-replica-election.sh";
  }
  return "?";
}

Result<CliCommand> ParseCliCommand(std::string_view command) {
  KSIM_ASSIGN_OR_RETURN(std::vector<std::string> words, SplitWords(command));
  // The seed runs each tool through the shell ("sh kafka-topics.sh ..."): the interpreter word
  // is dropped.
  if (words.size() > 1) {
    const std::string_view first = words.front();
    const std::string_view base = first.substr(first.rfind('/') + 1);
    if (base == "sh" || base == "bash") words.erase(words.begin());
  }
  if (words.empty()) return Invalid("empty command");
  const std::optional<Tool> tool = ToolOf(words.front());
  if (!tool) {
    return Invalid("unknown command '" + words.front() +
                   "' (expected kafka-topics.sh, kafka-console-producer.sh, "
                   "kafka-console-consumer.sh or kafka-preferred-replica-election.sh)");
  }
  CliCommand out;
  out.tool = *tool;
  KSIM_ASSIGN_OR_RETURN(const Given given, ParseOptions(*tool, words));
  switch (*tool) {
    case Tool::kTopics:
      KSIM_RETURN_IF_ERROR(ParseTopics(given, out));
      break;
    case Tool::kConsoleProducer:
      KSIM_RETURN_IF_ERROR(Require(given, "broker-list"));
      KSIM_RETURN_IF_ERROR(Require(given, "topic"));
      out.broker_list = Last(given, "broker-list");
      out.topic = Last(given, "topic");
      break;
    case Tool::kConsoleConsumer:
      KSIM_RETURN_IF_ERROR(ParseConsoleConsumer(given, out));
      break;
    case Tool::kPreferredReplicaElection:
      // PreferredReplicaLeaderElectionCommand: --zookeeper is required; --path-to-json-file
      // defaults to every partition.
      KSIM_RETURN_IF_ERROR(Require(given, "zookeeper"));
      out.zookeeper = Last(given, "zookeeper");
      if (Has(given, "path-to-json-file")) out.json_file = Last(given, "path-to-json-file");
      break;
  }
  return out;
}

}  // namespace ksim::sim
