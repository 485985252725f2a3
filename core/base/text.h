// Small text and list helpers that reports, error messages, the checker's causes and the viewer
// all need, spelled once: a time in seconds, a list of ids joined, membership in a short list.
// Pure functions; no I/O.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/types.h"

namespace ksim {

// "12.345 s" from microseconds, truncated to the millisecond; a negative time keeps its sign
// ("-0.250 s"), as a time before the scenario's start does in the viewer. Integer arithmetic.
std::string FormatSeconds(TimeUs t_us);

// The ids joined by `separator`, as Kafka's tools print replica lists ("1,2,3" with ","; an
// empty list is ""). Works for the strong ids (BrokerId, PartitionId, ...) and plain integers.
template <class Id>
std::string JoinIds(const std::vector<Id>& ids, std::string_view separator = ",") {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += separator;
    if constexpr (requires { ids[i].value(); }) {
      out += std::to_string(ids[i].value());
    } else {
      out += std::to_string(ids[i]);
    }
  }
  return out;
}

// Whether `items` holds `item` (a linear scan: replica lists and ISRs are a few entries long).
template <class T, class U>
bool Contains(const std::vector<T>& items, const U& item) {
  // A plain walk, inlined where called (the lists are short: replicas, an ISR).
  for (const T& each : items) {
    if (each == item) return true;
  }
  return false;
}

}  // namespace ksim
