// SharedVector<T>: a vector whose copies share one array until one of them is changed (copy on
// write). For a large list that is handed out unchanged many times: a broker's cached metadata
// answer of thousands of partitions, which every MetadataResponse carries (a copy of the cache's
// list, as Kafka serializes its cache into each response), costs a reference count per answer
// instead of a copy of every partition and its three replica lists (docs/BENCHMARKS.md, "Scale",
// twenty-first change).
//
// Reads see a const std::vector<T>. Mutable() gives a vector that no other copy shares (it copies
// the array first when another copy holds it), so a change is never seen through another copy.
// Equality compares the elements. Single-threaded, like the messages it is part of.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

namespace ksim {

template <class T>
class SharedVector {
 public:
  using value_type = T;
  using const_iterator = typename std::vector<T>::const_iterator;

  SharedVector() = default;
  SharedVector(std::vector<T> items)  // NOLINT: a vector converts, as in a braced initializer
      : items_(items.empty() ? nullptr : std::make_shared<std::vector<T>>(std::move(items))) {}
  SharedVector(std::initializer_list<T> items) : SharedVector(std::vector<T>(items)) {}

  const std::vector<T>& get() const { return items_ == nullptr ? Empty() : *items_; }
  size_t size() const { return get().size(); }
  bool empty() const { return get().empty(); }
  const_iterator begin() const { return get().begin(); }
  const_iterator end() const { return get().end(); }
  const T& operator[](size_t i) const { return get()[i]; }
  const T& at(size_t i) const { return get().at(i); }

  // The vector to change, held by this copy alone: copied from the shared one first when any
  // other copy holds it.
  std::vector<T>& Mutable() {
    if (items_ == nullptr) {
      items_ = std::make_shared<std::vector<T>>();
    } else if (items_.use_count() > 1) {
      items_ = std::make_shared<std::vector<T>>(*items_);
    }
    return *items_;
  }

  // Whether the two share one array (then they hold the same elements; the converse need not
  // hold).
  bool SharesWith(const SharedVector& other) const {
    return items_ != nullptr && items_ == other.items_;
  }

  friend bool operator==(const SharedVector& a, const SharedVector& b) {
    return a.items_ == b.items_ || a.get() == b.get();
  }

 private:
  static const std::vector<T>& Empty() {
    static const std::vector<T> empty;
    return empty;
  }

  std::shared_ptr<std::vector<T>> items_;  // null: empty
};

}  // namespace ksim
