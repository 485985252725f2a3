// TopicPartitionIndex<T>: a TopicPartition -> T* lookup for the hot paths that look a partition
// up by name for every partition of every request (a fetch names each partition it follows).
// Topics get a dense slot on first insertion and each topic's partitions are a vector indexed by
// partition id, so a lookup compares one topic name with the topic found last (the common case:
// a request names many partitions of one topic) and indexes a vector; only a different topic
// hashes its name. It never orders anything (walks in TopicPartition order keep their own
// std::map), so nothing observable depends on it.
//
// Ownership: holds pointers only; the caller keeps each value alive while it is indexed.
// Memory: a topic's vector is as long as its highest partition id inserted + 1; a topic whose
// partitions were all erased keeps its (empty) slot for a later insertion. One thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/base/check.h"
#include "core/base/short_text.h"
#include "core/base/topic_partition.h"

namespace ksim {

template <class T>
class TopicPartitionIndex {
 public:
  // The value indexed for `tp`, or nullptr.
  T* Find(const TopicPartition& tp) const {
    const Topic* topic = FindTopic(tp.topic);
    if (topic == nullptr) return nullptr;
    const int32_t partition = tp.partition.value();
    if (partition < 0 || static_cast<size_t>(partition) >= topic->partitions.size()) {
      return nullptr;
    }
    return topic->partitions[static_cast<size_t>(partition)];
  }

  // Indexes `value` for `tp`, replacing what was there. REQUIRES: value != nullptr, and a
  // partition id >= 0.
  void Insert(const TopicPartition& tp, T* value) {
    KSIM_CHECK(value != nullptr);
    KSIM_CHECK(tp.partition.value() >= 0);
    auto [slot, added] = slots_.try_emplace(tp.topic, topics_.size());
    if (added) topics_.push_back(Topic{tp.topic, {}, 0});
    Topic& topic = topics_[slot->second];
    const auto partition = static_cast<size_t>(tp.partition.value());
    if (partition >= topic.partitions.size()) topic.partitions.resize(partition + 1, nullptr);
    if (topic.partitions[partition] == nullptr) {
      ++topic.count;
      ++size_;
    }
    topic.partitions[partition] = value;
  }

  // Removes `tp` (no-op when absent).
  void Erase(const TopicPartition& tp) {
    auto slot = slots_.find(tp.topic);
    if (slot == slots_.end()) return;
    Topic& topic = topics_[slot->second];
    const int32_t partition = tp.partition.value();
    if (partition < 0 || static_cast<size_t>(partition) >= topic.partitions.size()) return;
    T*& value = topic.partitions[static_cast<size_t>(partition)];
    if (value == nullptr) return;
    value = nullptr;
    --topic.count;
    --size_;
    if (topic.count == 0) topic.partitions.clear();
  }

  // Removes everything.
  void Clear() {
    topics_.clear();
    slots_.clear();
    last_ = kNone;
    size_ = 0;
  }

  size_t size() const { return size_; }

 private:
  struct Topic {
    std::string name;
    std::vector<T*> partitions;  // by partition id; nullptr where not indexed
    size_t count = 0;            // non-null entries
  };
  static constexpr size_t kNone = static_cast<size_t>(-1);

  const Topic* FindTopic(std::string_view name) const {
    if (last_ != kNone && SameText(topics_[last_].name, name)) return &topics_[last_];
    auto slot = slots_.find(std::string(name));
    if (slot == slots_.end()) return nullptr;
    last_ = slot->second;
    return &topics_[last_];
  }

  std::vector<Topic> topics_;                      // by slot, in order of first insertion
  std::unordered_map<std::string, size_t> slots_;  // topic name -> slot; looked up, never walked
  mutable size_t last_ = kNone;                    // the slot found last
  size_t size_ = 0;
};

}  // namespace ksim
