// IndexIterator: the forward iterator a range-for needs over a container read by position
// (container[i] for i in [0, size())) whose elements are not in one array: a ring, chunks. A value
// (the container and a position); comparing iterators of different containers is meaningless.
#pragma once

#include <cstddef>

namespace ksim {

template <class Container, class Value>
class IndexIterator {
 public:
  IndexIterator(const Container* container, size_t index) : container_(container), index_(index) {}
  const Value& operator*() const { return (*container_)[index_]; }
  IndexIterator& operator++() {
    ++index_;
    return *this;
  }
  friend bool operator==(const IndexIterator&, const IndexIterator&) = default;

 private:
  const Container* container_;
  size_t index_;
};

}  // namespace ksim
