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
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

namespace ksim {

using EventFields = nlohmann::ordered_json;
using EventSink = std::function<void(std::string_view ev, EventFields fields)>;

inline void Emit(const EventSink& sink, std::string_view ev, EventFields fields = EventFields()) {
  if (sink) sink(ev, std::move(fields));
}

}  // namespace ksim
