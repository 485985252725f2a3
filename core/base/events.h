// EventSink: how core components (a partition's replica state, the broker, the controller) report
// the state changes a user wants to see: leader elected, ISR shrink/expand, HW and LEO moves,
// truncation, controller change, session expiry. The simulator writes each one to the trace as
// {"t_us", "node": <the broker's node>, "ev", <fields>} (docs/trace-format.md); a real broker
// would log it. Core never knows which.
//
// Conventions (docs/trace-format.md, "Conventions"): names are the constants of
// core/base/trace_names.h (`ev::kLeaderElected`, `field::kTopic`); partition-scoped events carry
// `topic` and `partition` first; fields are added in a fixed order so that a trace is
// byte-identical between runs. An empty sink drops events. Single-threaded, like its owner.
//
// EventFields are JSON text from the start: each field is written as it is added, in the bytes
// the trace will hold (core/base/json_text.h), so that an event costs no JSON tree, and for a
// typical event no allocation either: its text is kept in room inside the object (one event per
// record on every replica is emitted, and most are only written). A reader that
// looks inside (the simulator's checkers, tests) asks for json(), parsed once on first use.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/base/json_text.h"
#include "core/base/plain_name.h"

namespace ksim {

// One field's value as written at a call site: a view of the caller's value, read once, when
// the field is added (the values of a braced list live until the end of its full expression).
// Integers, booleans, null, strings and vectors of int32 are written directly; anything else
// nlohmann converts to JSON (a double, an ordered_json, a struct) goes through a JSON value.
class EventValue {
 public:
  EventValue() = default;  // null
  EventValue(std::nullptr_t) {}
  EventValue(bool value) : kind_(Kind::kBool) { v_.boolean = value; }
  template <std::integral Integer>
  requires(!std::same_as<Integer, bool>) EventValue(Integer value) {
    if constexpr (std::is_signed_v<Integer>) {
      kind_ = Kind::kSigned;
      v_.signed_value = value;
    } else {
      kind_ = Kind::kUnsigned;
      v_.unsigned_value = value;
    }
  }
  // Through JSON (nlohmann's shortest round-trip digits); without this a double would convert to
  // bool before anything else.
  EventValue(double value) { Own(nlohmann::ordered_json(value)); }
  EventValue(const char* text) : EventValue(std::string_view(text)) {}
  // Any other pointer would convert to bool.
  template <class Pointee>
  EventValue(Pointee*) = delete;
  EventValue(std::string_view text) : kind_(Kind::kString) { v_.text = {text.data(), text.size()}; }
  EventValue(const std::string& text) : EventValue(std::string_view(text)) {}
  EventValue(const nlohmann::ordered_json& json) : kind_(Kind::kJson) { v_.json = &json; }
  // Broker ids and the like (an ISR, a replica list): an array written directly, without a JSON
  // value, read back as JSON.
  EventValue(const std::vector<int32_t>& integers) : kind_(Kind::kIntegers) {
    v_.integers = &integers;
  }
  // Anything else nlohmann can convert (a vector, an enum, a struct with to_json): converted here.
  template <class Value>
  requires(!std::is_arithmetic_v<Value> && !std::is_convertible_v<const Value&, std::string_view> &&
           !std::same_as<Value, nlohmann::ordered_json> && !std::same_as<Value, std::nullptr_t> &&
           std::is_constructible_v<nlohmann::ordered_json, const Value&>)
      EventValue(const Value& value) {
    Own(nlohmann::ordered_json(value));
  }

  // A copy views what the original viewed (its own copy of a converted value).
  EventValue(const EventValue& other) : kind_(other.kind_), v_(other.v_) {
    if (other.owned_) Own(*other.owned_);
  }
  EventValue(EventValue&& other) noexcept = default;  // a converted value moves with its owner
  EventValue& operator=(const EventValue&) = delete;

  void AppendTo(JsonOut& out) const;

 private:
  friend class EventFields;
  // What a value is written from. kIntegers is written as a JSON array and read back as kJson.
  enum class Kind : uint8_t { kNull, kBool, kSigned, kUnsigned, kString, kJson, kIntegers };
  // A converted value (a double, a vector): only those construct a JSON value at all, and hold it
  // out of line, so that the common values (integers, strings) are 32 bytes to build and read.
  void Own(nlohmann::ordered_json json) {
    kind_ = Kind::kJson;
    owned_ = std::make_unique<const nlohmann::ordered_json>(std::move(json));
    v_.json = owned_.get();
  }
  struct Text {
    const char* data;
    size_t size;
  };

  union Scalar {  // the member `kind_` names
    bool boolean;
    int64_t signed_value;
    uint64_t unsigned_value = 0;
    Text text;
    const nlohmann::ordered_json* json;    // kJson
    const std::vector<int32_t>* integers;  // kIntegers
  };

  Kind kind_ = Kind::kNull;
  Scalar v_;
  std::unique_ptr<const nlohmann::ordered_json> owned_;
};

// One member of an event's fields, as written at a call site: {field::kTopic, tp.topic}.
struct EventField {
  template <class Value>
  EventField(std::string_view key, Value&& value) : key(key), value(std::forward<Value>(value)) {}
  // A trace name (field::kTopic): its key is written without a scan.
  template <class Value>
  EventField(PlainName key, Value&& value)
      : key(key), plain_key(true), value(std::forward<Value>(value)) {}
  std::string_view key;
  bool plain_key = false;
  EventValue value;
};

class EventFields {
 public:
  EventFields() = default;  // no fields
  // The fields in the order given: Emit(sink, ev, {{field::kTopic, tp.topic}, ...}).
  EventFields(std::initializer_list<EventField> fields);
  // The members of a JSON object, in its order (null: no fields). REQUIRES: an object or null.
  explicit EventFields(const nlohmann::ordered_json& object);
  EventFields(const EventFields& other);
  EventFields& operator=(const EventFields& other);
  // A move takes an allocated text; a text still in this object's own room is copied.
  EventFields(EventFields&& other) noexcept;
  EventFields& operator=(EventFields&& other) noexcept;

  // Appends a field. REQUIRES: `key` is not among the fields yet, nor one of the trace line's own
  // keys (t_us, node, ev).
  EventFields& Add(std::string_view key, const EventValue& value) {
    return Add(key, /*plain=*/false, value);
  }
  EventFields& Add(PlainName key, const EventValue& value) {
    return Add(key, /*plain=*/true, value);
  }
  // Appends a field whose value `write` writes as JSON text (an array built in place, without a
  // JSON value first): write(JsonOut&). REQUIRES: as Add; `write` writes exactly one value.
  template <class Write>
  EventFields& AddWith(std::string_view key, Write&& write) {
    return AddWith(key, /*plain=*/false, std::forward<Write>(write));
  }
  template <class Write>
  EventFields& AddWith(PlainName key, Write&& write) {
    return AddWith(key, /*plain=*/true, std::forward<Write>(write));
  }

  // Appends every field of `other`, in its order, as it was written there. REQUIRES: as Add, for
  // each of its keys.
  EventFields& AddAll(const EventFields& other);

  bool empty() const { return count_ == 0; }
  size_t size() const { return count_; }
  // The members as JSON text, comma-separated, without braces: "topic":"t","partition":0. What
  // a trace line holds after its "ev".
  std::string_view text() const { return {text_.data(), length_}; }
  // The fields as a JSON object ({} when there are none), built from text() on first use and
  // kept: each member from its kind and its text, only escaped strings and JSON values parsed.
  const nlohmann::ordered_json& json() const;
  // A field's value read back from its text, without json(): the string, integer or boolean it
  // holds; nullopt when the field is absent or holds another type (what is_string(),
  // is_number_integer() and is_boolean() say of json()[key]). For the readers of frequent events.
  std::optional<std::string> StringValue(std::string_view key) const;
  std::optional<int64_t> IntegerValue(std::string_view key) const;
  std::optional<bool> BoolValue(std::string_view key) const;
  // An array field's integer members, in order, others passed over (what json()[key] holds of
  // is_number_integer() members); nullopt when the field is absent or not an array.
  std::optional<std::vector<int64_t>> IntegersValue(std::string_view key) const;

  friend bool operator==(const EventFields& a, const EventFields& b) {
    return a.text() == b.text();
  }

 private:
  // What a field's value was when written (EventValue's kind): how json() reads its text back.
  using ValueKind = EventValue::Kind;
  // Where a field is in text_: its key, quotes included, at [begin, key_end); its value at
  // [key_end + 1, value_end).
  struct Entry {
    uint32_t begin;
    uint32_t key_end;
    uint32_t value_end;
    ValueKind kind;
  };
  // Fields whose place is kept (to refuse a repeated key and to read them back without a
  // parse); an event has fewer. Past this many, json() parses the text.
  static constexpr size_t kEntries = 24;
  // Room for a typical event inside the object: writing one allocates nothing (docs/BENCHMARKS.md,
  // "Scale", eighteenth change); a longer text moves to an allocated buffer, growing by doubling.
  static constexpr size_t kRoomBytes = 192;

  // `plain`: `key` is a PlainName, written without a scan.
  EventFields& Add(std::string_view key, bool plain, const EventValue& value);
  template <class Write>
  EventFields& AddWith(std::string_view key, bool plain, Write&& write) {
    JsonOut out = BeginField(key, plain);
    write(out);
    return EndField(out, ValueKind::kJson);
  }
  // Writes the separator and `key`, quoted, with its colon, and keeps its place.
  JsonOut BeginField(std::string_view key, bool plain);
  // Ends the field whose value `out` wrote.
  EventFields& EndField(const JsonOut& out, ValueKind kind) {
    length_ = out.length();
    if (count_ < kEntries) {
      entries_[count_].value_end = static_cast<uint32_t>(length_);
      entries_[count_].kind = kind;
    }
    ++count_;
    json_.reset();
    return *this;
  }
  nlohmann::ordered_json Build() const;
  // The text of `key`'s value as written; nullopt when absent. REQUIRES: count_ <= kEntries (past
  // them the typed readers ask json()).
  std::optional<std::string_view> ValueText(std::string_view key) const;

  // Fields are written first into room_ (text_ starts there), then, past it, in an allocation.
  char room_[kRoomBytes];
  TextBuffer text_{room_, kRoomBytes};  // text() is its first length_ bytes
  size_t length_ = 0;
  uint32_t count_ = 0;
  uint64_t key_bits_ = 0;  // a bit for each (length, first letter) of the keys written
  std::array<Entry, kEntries> entries_;  // the first min(count_, kEntries); not zero-filled
  mutable std::shared_ptr<const nlohmann::ordered_json> json_;  // json(), once asked
};

using EventSink = std::function<void(std::string_view ev, const EventFields& fields)>;

inline void Emit(const EventSink& sink, std::string_view ev, const EventFields& fields = {}) {
  if (sink) sink(ev, fields);
}

// Emit(sink, ev, {{field::kTopic, tp.topic}, ...}) comes here (a braced list converts to an
// initializer_list before anything else): not built at all for an empty sink.
inline void Emit(const EventSink& sink, std::string_view ev,
                 std::initializer_list<EventField> fields) {
  if (sink) sink(ev, EventFields(fields));
}

}  // namespace ksim
