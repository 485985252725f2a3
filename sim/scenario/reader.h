// ScenarioReader: the loader's typed access to a scenario's JSON (sim/scenario/loader.cc and
// sim/scenario/actions.cc; not for other users). Every getter checks the value's type and range
// and, when it is wrong, records an error naming the JSON Pointer of the value (RFC 6901,
// "/clients/p1/config/acks") and what would be valid, then returns nullopt so that the caller
// goes on and more errors are found in one pass. Keys are checked against the table in
// sim/scenario/keys.h with a "did you mean" for a misspelt one.
//
// Errors are kept as (path, message) in the order found; `prefix` is put before every path (a
// variant's "/variants/<name>"). Single-threaded; borrows nothing past a call.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/config/server_config.h"
#include "sim/scenario/scenario.h"

namespace ksim::sim {

using Json = nlohmann::ordered_json;

// Json::parse(text) (exceptions included: parse_error, out_of_range), building the same document
// (object members in their first-seen order, a repeated key's last value at its first place),
// but finding each object's keys through a hash index: nlohmann's ordered_map searches an
// object's members linearly for every key parsed, which made a 10,000-key object (a scenario's
// replica assignment of 10,000 partitions) cost 10^8 string comparisons.
Json ParseOrderedJson(std::string_view text);

struct ScenarioError {
  std::string path;  // JSON Pointer ("" is the document)
  std::string message;
  friend bool operator==(const ScenarioError&, const ScenarioError&) = default;
};

// "/a/b" + "c/d" -> "/a/b/c~1d" (RFC 6901 escaping).
std::string JoinPointer(std::string_view path, std::string_view key);
// "an integer", "a string \"abc\"", "true", "an array", ... for "got ..." in messages.
std::string Describe(const Json& value);

class ScenarioReader {
 public:
  explicit ScenarioReader(std::string prefix = "") : prefix_(std::move(prefix)) {}

  void Error(std::string_view path, std::string message);
  const std::vector<ScenarioError>& errors() const { return errors_; }
  // What is valid but cannot work as written (`ksim check` prints it; the run shows Kafka's
  // refusal): kept apart from the errors.
  void Warn(std::string_view path, std::string message);
  const std::vector<ScenarioError>& warnings() const { return warnings_; }
  size_t error_count() const { return errors_.size(); }

  // True when `value` is an object; else records "expected <what>".
  bool ExpectObject(const Json& value, std::string_view path, std::string_view what);
  // Records unknown keys (with the closest valid one) and missing required keys of `kind`
  // (sim/scenario/keys.h). REQUIRES: value is an object.
  void CheckKeys(const Json& value, std::string_view path, std::string_view kind);

  // The member `key` of `object` when present and not null.
  static const Json* Find(const Json& object, std::string_view key);

  std::optional<int64_t> Integer(const Json& value, std::string_view path, int64_t min,
                                 int64_t max);
  std::optional<uint64_t> Unsigned(const Json& value, std::string_view path);
  std::optional<bool> Boolean(const Json& value, std::string_view path);
  std::optional<std::string> String(const Json& value, std::string_view path,
                                    bool allow_empty = false);
  // One of `names`, else "expected one of ..." with the closest name.
  std::optional<std::string> OneOf(const Json& value, std::string_view path,
                                   std::span<const std::string_view> names);
  // [min, max] with min <= max, each within [lo, hi].
  std::optional<RangeMs> Range(const Json& value, std::string_view path, int64_t lo, int64_t hi);
  // A probability 0..1 as parts per million (rounded to the nearest).
  std::optional<uint32_t> Probability(const Json& value, std::string_view path);
  // A map of Kafka settings: scalars as text (true/false, numbers as written, arrays of scalars
  // joined with commas, as a .properties list). Non-scalar values are errors.
  ConfigOverrides Settings(const Json& value, std::string_view path);

  // Member helpers: `object[key]` through the getters above when present; else nullopt and no
  // error (required keys are CheckKeys' job).
  template <class F>
  auto Member(const Json& object, std::string_view path, std::string_view key, F&& get)
      -> decltype(get(std::declval<const Json&>(), std::string())) {
    const Json* member = Find(object, key);
    if (member == nullptr) return std::nullopt;
    return get(*member, JoinPointer(path, key));
  }

 private:
  std::string prefix_;
  std::vector<ScenarioError> errors_;
  std::vector<ScenarioError> warnings_;
};

}  // namespace ksim::sim
