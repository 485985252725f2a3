// ConfigKeyDef: one configuration key as Kafka's ConfigDef defines it (name, type, default,
// validator), and the parsing and checking ConfigDef.parseType applies to a raw text value:
// the text is trimmed; BOOLEAN is true/false in any case; SHORT/INT/LONG are Java integers of
// that width; DOUBLE a Java double; LIST splits on commas with blanks around them; then Range
// .atLeast, ValidString.in (each list element for LIST) and the 0..1 ratio check. Failures carry
// Kafka's reason ("Not a number of type INT", "Value must be at least 1", "String must be one
// of: compact, delete") and DescribeValidValues says what would be accepted.
//
// Used by core/config/server_config.cc for broker and topic settings. Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ksim {

enum class ConfigType { kBoolean, kShort, kInt, kLong, kDouble, kString, kList };

struct ConfigKeyDef {
  std::string_view name;
  ConfigType type = ConfigType::kString;
  std::optional<std::string_view> default_value;  // nullopt: Kafka's null (no default)
  std::optional<int64_t> at_least;                // Range.atLeast
  std::vector<std::string_view> one_of;           // ValidString.in (LIST: every element)
  bool ratio = false;                             // DOUBLE within [0, 1] (Range.between(0, 1))
};

struct ConfigValue {
  bool is_null = true;
  bool boolean = false;
  int64_t integer = 0;  // SHORT, INT, LONG
  std::string text;     // STRING (trimmed); DOUBLE as trimmed text
  std::vector<std::string> list;
};

// Parses and validates `raw` for `key`. nullopt on success (`out` filled), else Kafka's reason.
std::optional<std::string> ParseConfigValue(const ConfigKeyDef& key, std::string_view raw,
                                            ConfigValue& out);
// "an INT of at least 1", "true or false", "a comma-separated list of: compact, delete".
std::string DescribeValidValues(const ConfigKeyDef& key);
// "Invalid value abc for configuration broker.id: Not a number of type INT (valid: an INT)".
std::string InvalidValueMessage(const ConfigKeyDef& key, std::string_view raw,
                                std::string_view reason);
// The value of `key` when nothing sets it (its default, or null).
ConfigValue DefaultConfigValue(const ConfigKeyDef& key);

}  // namespace ksim
