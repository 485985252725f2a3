// KeyHash: the hash of the checkers' lookup-only indexes (the history checker's, the invariant
// checker's tracks), keyed by text, partition, and pairs of those with an offset or a broker.
// Never walked in order: their order shows nowhere. Header-only, no state.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "core/base/short_text.h"
#include "core/base/topic_partition.h"
#include "core/base/types.h"
#include "core/protocol/messages.h"  // std::hash<TopicPartition>

namespace ksim::sim {

struct KeyHash {
  static size_t Mix(size_t seed, size_t value) {
    return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
  }
  size_t operator()(const std::string& text) const { return HashText(text); }
  size_t operator()(std::string_view text) const { return HashText(text); }
  size_t operator()(const TopicPartition& tp) const { return std::hash<TopicPartition>{}(tp); }
  size_t operator()(const std::pair<TopicPartition, Offset>& key) const {
    return Mix((*this)(key.first), static_cast<size_t>(key.second.value()));
  }
  size_t operator()(const std::pair<TopicPartition, BrokerId>& key) const {
    return Mix((*this)(key.first), static_cast<size_t>(key.second.value()));
  }
  size_t operator()(const std::pair<std::string, TopicPartition>& key) const {
    return Mix((*this)(key.first), (*this)(key.second));
  }
  size_t operator()(const std::pair<std::string, std::string>& key) const {
    return Mix((*this)(key.first), (*this)(key.second));
  }
  size_t operator()(const std::pair<std::string_view, std::string_view>& key) const {
    return Mix((*this)(key.first), (*this)(key.second));
  }
};
template <class Key, class Value>
using HashMap = std::unordered_map<Key, Value, KeyHash>;

}  // namespace ksim::sim
