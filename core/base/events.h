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
#pragma once

#include <functional>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

namespace ksim {

using EventFields = nlohmann::ordered_json;
using EventSink = std::function<void(std::string_view ev, EventFields fields)>;

inline void Emit(const EventSink& sink, std::string_view ev, EventFields fields = EventFields()) {
  if (sink) sink(ev, std::move(fields));
}

// One member of an event's fields, as written at a call site: {field::kTopic, tp.topic}.
using EventField = std::pair<std::string_view, EventFields>;

// The fields object of `fields`, member by member in the order given: what nlohmann's braced
// form EventFields{{key, value}, ...} builds (a later repeat of a key is dropped, an empty list is
// null), without the two-element array that form makes of each member first. One event per
// record on every replica is built this way, so it counts.
inline EventFields MakeEventFields(std::initializer_list<EventField> fields) {
  EventFields out;
  if (fields.size() == 0) return out;
  out = EventFields::object();
  EventFields::object_t& members = out.get_ref<EventFields::object_t&>();
  members.reserve(fields.size());
  for (const EventField& field : fields) {
    bool repeated = false;
    for (const auto& member : members) repeated = repeated || member.first == field.first;
    if (!repeated) members.emplace_back(field.first, field.second);
  }
  return out;
}

// Emit(sink, ev, {{field::kTopic, tp.topic}, ...}) comes here (a braced list converts to an
// initializer_list before anything else): built as MakeEventFields does, and not at all for an
// empty sink.
inline void Emit(const EventSink& sink, std::string_view ev,
                 std::initializer_list<EventField> fields) {
  if (sink) sink(ev, MakeEventFields(fields));
}

}  // namespace ksim
