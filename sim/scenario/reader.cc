#include "sim/scenario/reader.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/base/text_distance.h"
#include "sim/scenario/keys.h"

namespace ksim::sim {

namespace {

// The SAX side of ParseOrderedJson: nlohmann's json_sax_dom_parser with a key index per open
// object.
class OrderedDomBuilder {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  explicit OrderedDomBuilder(Json& root) : root_(root) {}

  bool null() { return Value(nullptr); }
  bool boolean(bool value) { return Value(value); }
  bool number_integer(number_integer_t value) { return Value(value); }
  bool number_unsigned(number_unsigned_t value) { return Value(value); }
  bool number_float(number_float_t value, const string_t& /*text*/) { return Value(value); }
  bool string(string_t& value) { return Value(std::move(value)); }
  bool binary(binary_t& value) { return Value(Json::binary(std::move(value))); }
  bool start_object(std::size_t /*elements*/) {
    open_.push_back(Open{Put(Json::object()), {}});
    return true;
  }
  bool key(string_t& name) {
    Open& object = open_.back();
    Json::object_t& members = object.node->get_ref<Json::object_t&>();
    auto [slot, added] = object.index.try_emplace(name, members.size());
    if (added) members.emplace_back(name, nullptr);
    // A repeated key's value is replaced in place (ordered_map hides the vector's operator[]).
    pending_ = &(members.begin() + static_cast<std::ptrdiff_t>(slot->second))->second;
    return true;
  }
  bool end_object() {
    open_.pop_back();
    return true;
  }
  bool start_array(std::size_t /*elements*/) {
    open_.push_back(Open{Put(Json::array()), {}});
    return true;
  }
  bool end_array() {
    open_.pop_back();
    return true;
  }
  template <class Exception>
  bool parse_error(std::size_t /*byte*/, const std::string& /*token*/, const Exception& error) {
    throw error;  // as Json::parse with exceptions allowed
  }

 private:
  struct Open {
    Json* node;  // stays valid while open: nothing is added to its parent meanwhile
    std::unordered_map<std::string, size_t> index;  // objects: key -> member position
  };

  // A scalar: put in place; parsing goes on.
  bool Value(Json value) {
    Put(std::move(value));
    return true;
  }
  // Puts `value` where the document expects the next value: the root, the innermost open
  // array's end, or the member the last key named. Returns where it went.
  Json* Put(Json value) {
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Json& parent = *open_.back().node;
    if (parent.is_array()) {
      Json::array_t& elements = parent.get_ref<Json::array_t&>();
      elements.push_back(std::move(value));
      return &elements.back();
    }
    *pending_ = std::move(value);
    return pending_;
  }

  Json& root_;
  std::vector<Open> open_;
  Json* pending_ = nullptr;  // the member the next value of the innermost object goes to
};

}  // namespace

Json ParseOrderedJson(std::string_view text) {
  Json document;
  OrderedDomBuilder builder(document);
  Json::sax_parse(text.begin(), text.end(), &builder);
  return document;
}

std::string JoinPointer(std::string_view path, std::string_view key) {
  std::string out(path);
  out += '/';
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Describe(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return value.get<bool>() ? "true" : "false";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return value.dump();
    case Json::value_t::string: {
      std::string text = value.dump();
      if (text.size() > 40) text = text.substr(0, 37) + "...";
      return "the string " + text;
    }
    case Json::value_t::array:
      return "an array";
    case Json::value_t::object:
      return "an object";
    default:
      return "a binary value";
  }
}

void ScenarioReader::Error(std::string_view path, std::string message) {
  errors_.push_back(ScenarioError{prefix_ + std::string(path), std::move(message)});
}

void ScenarioReader::Warn(std::string_view path, std::string message) {
  warnings_.push_back(ScenarioError{prefix_ + std::string(path), std::move(message)});
}

bool ScenarioReader::ExpectObject(const Json& value, std::string_view path, std::string_view what) {
  if (value.is_object()) return true;
  Error(path, "expected " + std::string(what) + " (a JSON object), got " + Describe(value));
  return false;
}

void ScenarioReader::CheckKeys(const Json& value, std::string_view path, std::string_view kind) {
  const std::vector<std::string_view> keys = AllKeysOf(kind);
  for (const auto& [key, member] : value.items()) {
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    std::string message = "unknown key \"" + key + "\"";
    if (std::optional<std::string_view> closest = ClosestName(key, keys)) {
      message += ": did you mean \"" + std::string(*closest) + "\"?";
    } else {
      message += " (valid here:";
      for (std::string_view valid : keys) message += " " + std::string(valid);
      message += ")";
    }
    Error(JoinPointer(path, key), message);
  }
  for (std::string_view required : KeysOf(kind).required) {
    if (Find(value, required) == nullptr) Error(JoinPointer(path, required), "required");
  }
}

const Json* ScenarioReader::Find(const Json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(std::string(key));
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<int64_t> ScenarioReader::Integer(const Json& value, std::string_view path,
                                               int64_t min, int64_t max) {
  std::string range;
  if (max == INT64_MAX) {
    range = min == 0 ? " >= 0" : " >= " + std::to_string(min);
  } else {
    range = " from " + std::to_string(min) + " to " + std::to_string(max);
  }
  const bool integer = value.is_number_integer() || value.is_number_unsigned();
  if (integer && value.is_number_unsigned() && value.get<uint64_t>() > INT64_MAX) {
    Error(path, "expected an integer" + range + ", got " + Describe(value));
    return std::nullopt;
  }
  if (!integer) {
    Error(path, "expected an integer" + range + ", got " + Describe(value));
    return std::nullopt;
  }
  const int64_t n = value.get<int64_t>();
  if (n < min || n > max) {
    Error(path, "expected an integer" + range + ", got " + std::to_string(n));
    return std::nullopt;
  }
  return n;
}

std::optional<uint64_t> ScenarioReader::Unsigned(const Json& value, std::string_view path) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer() && value.get<int64_t>() >= 0) {
    return static_cast<uint64_t>(value.get<int64_t>());
  }
  Error(path, "expected an integer from 0 to 18446744073709551615, got " + Describe(value));
  return std::nullopt;
}

std::optional<bool> ScenarioReader::Boolean(const Json& value, std::string_view path) {
  if (value.is_boolean()) return value.get<bool>();
  Error(path, "expected true or false, got " + Describe(value));
  return std::nullopt;
}

std::optional<std::string> ScenarioReader::String(const Json& value, std::string_view path,
                                                  bool allow_empty) {
  if (!value.is_string()) {
    Error(path, "expected a string, got " + Describe(value));
    return std::nullopt;
  }
  std::string text = value.get<std::string>();
  if (text.empty() && !allow_empty) {
    Error(path, "expected a non-empty string");
    return std::nullopt;
  }
  return text;
}

std::optional<std::string> ScenarioReader::OneOf(const Json& value, std::string_view path,
                                                 std::span<const std::string_view> names) {
  std::string valid;
  for (std::string_view name : names) {
    valid += (valid.empty() ? "\"" : ", \"") + std::string(name) + "\"";
  }
  if (!value.is_string()) {
    Error(path, "expected one of " + valid + ", got " + Describe(value));
    return std::nullopt;
  }
  const std::string text = value.get<std::string>();
  if (std::find(names.begin(), names.end(), text) != names.end()) return text;
  std::string message = "expected one of " + valid + ", got \"" + text + "\"";
  if (std::optional<std::string_view> closest = ClosestName(text, names)) {
    message += ": did you mean \"" + std::string(*closest) + "\"?";
  }
  Error(path, message);
  return std::nullopt;
}

std::optional<RangeMs> ScenarioReader::Range(const Json& value, std::string_view path, int64_t lo,
                                             int64_t hi) {
  if (!value.is_array() || value.size() != 2) {
    Error(path, "expected [min, max] (two integers), got " + Describe(value));
    return std::nullopt;
  }
  const std::optional<int64_t> min = Integer(value[0], JoinPointer(path, "0"), lo, hi);
  const std::optional<int64_t> max = Integer(value[1], JoinPointer(path, "1"), lo, hi);
  if (!min || !max) return std::nullopt;
  if (*min > *max) {
    Error(path, "min " + std::to_string(*min) + " is greater than max " + std::to_string(*max));
    return std::nullopt;
  }
  return RangeMs{*min, *max};
}

std::optional<uint32_t> ScenarioReader::Probability(const Json& value, std::string_view path) {
  if (!value.is_number()) {
    Error(path, "expected a probability from 0 to 1, got " + Describe(value));
    return std::nullopt;
  }
  // Converted once, here, to integer parts per million: nothing downstream sees a double.
  const double p = value.get<double>();
  if (!(p >= 0.0 && p <= 1.0)) {
    Error(path, "expected a probability from 0 to 1, got " + value.dump());
    return std::nullopt;
  }
  return static_cast<uint32_t>(std::llround(p * 1e6));
}

ConfigOverrides ScenarioReader::Settings(const Json& value, std::string_view path) {
  ConfigOverrides settings;
  if (!ExpectObject(value, path, "Kafka settings by name")) return settings;
  for (const auto& [key, member] : value.items()) {
    const std::string member_path = JoinPointer(path, key);
    auto scalar = [](const Json& v) -> std::optional<std::string> {
      if (v.is_string()) return v.get<std::string>();
      if (v.is_boolean() || v.is_number()) return v.dump();
      return std::nullopt;
    };
    std::optional<std::string> text = scalar(member);
    if (!text && member.is_array()) {
      text = std::string();
      for (const Json& item : member) {
        const std::optional<std::string> part = scalar(item);
        if (!part) {
          text.reset();
          break;
        }
        *text += (text->empty() ? "" : ",") + *part;
      }
    }
    if (!text) {
      Error(member_path,
            "expected a string, number, boolean or a list of them, got " + Describe(member));
      continue;
    }
    settings.emplace_back(key, std::move(*text));
  }
  return settings;
}

}  // namespace ksim::sim
