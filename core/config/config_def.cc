// Kafka's ConfigDef.parseType and validators over text values (see config_def.h).
#include "core/config/config_def.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <limits>

#include "core/base/check.h"
#include "core/base/java_numbers.h"

namespace ksim {
namespace {

// Java's String.trim: every char <= ' ' off both ends.
std::string_view Trim(std::string_view text) {
  while (!text.empty() && static_cast<unsigned char>(text.front()) <= ' ') text.remove_prefix(1);
  while (!text.empty() && static_cast<unsigned char>(text.back()) <= ' ') text.remove_suffix(1);
  return text;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const char x = (a[i] >= 'A' && a[i] <= 'Z') ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    const char y = (b[i] >= 'A' && b[i] <= 'Z') ? static_cast<char>(b[i] - 'A' + 'a') : b[i];
    if (x != y) return false;
  }
  return true;
}

// Java's Double.parseDouble for the decimal forms a config file uses; the value only
// validates a setting the simulator does not model, it never drives a decision.
bool ParseJavaDouble(std::string_view text, double& out) {
  if (text.empty()) return false;
  const std::string copy(text);
  char* end = nullptr;
  errno = 0;
  out = std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size() && errno != ERANGE;
}

std::string_view TypeName(ConfigType type) {
  switch (type) {
    case ConfigType::kBoolean:
      return "BOOLEAN";
    case ConfigType::kShort:
      return "SHORT";
    case ConfigType::kInt:
      return "INT";
    case ConfigType::kLong:
      return "LONG";
    case ConfigType::kDouble:
      return "DOUBLE";
    case ConfigType::kString:
      return "STRING";
    case ConfigType::kList:
      return "LIST";
  }
  return "?";
}

std::string JoinWords(const std::vector<std::string_view>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += ", ";
    out += words[i];
  }
  return out;
}

std::optional<std::string> CheckOneOf(const ConfigKeyDef& key, std::string_view word) {
  if (key.one_of.empty()) return std::nullopt;
  for (std::string_view allowed : key.one_of) {
    if (word == allowed) return std::nullopt;
  }
  return "String must be one of: " + JoinWords(key.one_of);
}

}  // namespace

std::optional<std::string> ParseConfigValue(const ConfigKeyDef& key, std::string_view raw,
                                            ConfigValue& out) {
  const std::string_view text = Trim(raw);
  out = ConfigValue();
  out.is_null = false;
  switch (key.type) {
    case ConfigType::kBoolean:
      if (EqualsIgnoreCase(text, "true")) {
        out.boolean = true;
      } else if (EqualsIgnoreCase(text, "false")) {
        out.boolean = false;
      } else {
        return std::string("Expected value to be either true or false");
      }
      return std::nullopt;
    case ConfigType::kShort:
    case ConfigType::kInt:
    case ConfigType::kLong: {
      int64_t low = std::numeric_limits<int64_t>::min();
      int64_t high = std::numeric_limits<int64_t>::max();
      if (key.type == ConfigType::kShort) {
        low = std::numeric_limits<int16_t>::min();
        high = std::numeric_limits<int16_t>::max();
      } else if (key.type == ConfigType::kInt) {
        low = std::numeric_limits<int32_t>::min();
        high = std::numeric_limits<int32_t>::max();
      }
      if (!ParseJavaInteger(text, low, high, out.integer)) {
        return "Not a number of type " + std::string(TypeName(key.type));
      }
      if (key.at_least && out.integer < *key.at_least) {
        return "Value must be at least " + std::to_string(*key.at_least);
      }
      return std::nullopt;
    }
    case ConfigType::kDouble: {
      double value = 0;
      if (!ParseJavaDouble(text, value)) return std::string("Not a number of type DOUBLE");
      if (key.ratio && !(value >= 0)) return std::string("Value must be at least 0");
      if (key.ratio && !(value <= 1)) return std::string("Value must be no more than 1");
      out.text = std::string(text);
      return std::nullopt;
    }
    case ConfigType::kString:
      out.text = std::string(text);
      return CheckOneOf(key, out.text);
    case ConfigType::kList: {
      // "\\s*,\\s*" on the trimmed text; an empty text is an empty list.
      if (!text.empty()) {
        size_t begin = 0;
        while (true) {
          const size_t comma = text.find(',', begin);
          const std::string_view element =
              Trim(text.substr(begin, comma == std::string_view::npos ? comma : comma - begin));
          out.list.emplace_back(element);
          if (comma == std::string_view::npos) break;
          begin = comma + 1;
        }
      }
      for (const std::string& element : out.list) {
        if (auto reason = CheckOneOf(key, element)) return reason;
      }
      return std::nullopt;
    }
  }
  KSIM_CHECK(false);
  return std::nullopt;
}

std::string DescribeValidValues(const ConfigKeyDef& key) {
  std::string out;
  switch (key.type) {
    case ConfigType::kBoolean:
      return "true or false";
    case ConfigType::kShort:
      out = "a SHORT";
      break;
    case ConfigType::kInt:
      out = "an INT";
      break;
    case ConfigType::kLong:
      out = "a LONG";
      break;
    case ConfigType::kDouble:
      return key.ratio ? "a DOUBLE from 0 to 1" : "a DOUBLE";
    case ConfigType::kString:
      return key.one_of.empty() ? "any string" : "one of: " + JoinWords(key.one_of);
    case ConfigType::kList:
      return key.one_of.empty() ? "a comma-separated list"
                                : "a comma-separated list of: " + JoinWords(key.one_of);
  }
  if (key.at_least) out += " of at least " + std::to_string(*key.at_least);
  return out;
}

std::string InvalidValueMessage(const ConfigKeyDef& key, std::string_view raw,
                                std::string_view reason) {
  return "Invalid value " + std::string(Trim(raw)) + " for configuration " + std::string(key.name) +
         ": " + std::string(reason) + " (valid: " + DescribeValidValues(key) + ")";
}

ConfigValue DefaultConfigValue(const ConfigKeyDef& key) {
  ConfigValue value;
  if (!key.default_value) return value;
  const auto error = ParseConfigValue(key, *key.default_value, value);
  KSIM_CHECK_MSG(!error.has_value(), "a built-in default fails its own key's validation");
  return value;
}

}  // namespace ksim
