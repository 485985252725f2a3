// Compact JSON text, written straight into a byte buffer: how an event's fields and a trace's
// lines are serialized (docs/trace-format.md). Byte for byte what nlohmann's
// dump(-1, ' ', false, error_handler_t::replace) writes (no spaces, UTF-8 kept as is, invalid
// UTF-8 replaced by U+FFFD rather than throwing: record keys and values may be arbitrary bytes),
// without its temporaries (its result, a 512-byte indent string, a JSON copy of each string, an
// snprintf per escaped control character). Integers, booleans, null, strings, and arrays and
// objects of these are written here; anything else (floating point, binary) goes through dump().
// TraceWriterTest.StringsAreWrittenAsDumpWritesThem compares the two on random bytes.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace ksim {

// A byte buffer that grows without zero-filling its room (std::string's resize would write every
// byte of it first): what JsonOut writes into. It may start in room its owner lends (an array
// inside the owner: no allocation until a write needs more, EventFields); it allocates once it
// outgrows that. Single-threaded; movable, not copyable: a move takes an allocated buffer, while
// a buffer still in lent room moves as that room's address (the owner, whose room it is, copies
// its bytes instead; EventFields does).
class TextBuffer {
 public:
  TextBuffer() = default;
  // Starts in `room`, `capacity` bytes that outlive the buffer and stay where they are.
  TextBuffer(char* room, size_t capacity) : data_(room), capacity_(capacity) {}
  TextBuffer(TextBuffer&& other) noexcept
      : heap_(std::move(other.heap_)), data_(other.data_), capacity_(other.capacity_) {
    other.data_ = nullptr;
    other.capacity_ = 0;
  }
  TextBuffer& operator=(TextBuffer&& other) noexcept {
    heap_ = std::move(other.heap_);
    data_ = other.data_;
    capacity_ = other.capacity_;
    other.data_ = nullptr;
    other.capacity_ = 0;
    return *this;
  }

  char* data() { return data_; }
  const char* data() const { return data_; }
  size_t capacity() const { return capacity_; }
  // Whether the bytes are in room the owner lent (not allocated).
  bool in_lent_room() const { return data_ != nullptr && heap_ == nullptr; }
  // Room for at least `needed` bytes, the first `keep` kept. REQUIRES: keep <= capacity().
  void Grow(size_t keep, size_t needed);

 private:
  std::unique_ptr<char[]> heap_;  // what data_ points to once allocated
  char* data_ = nullptr;
  size_t capacity_ = 0;
};

// Copies `n` bytes from `from` to `to` (not overlapping). A short piece (a key, a name: nearly
// every piece of a trace line) is copied by two loads and two stores that may overlap, inline:
// a call to memcpy costs more than the copy itself at these sizes.
inline void CopyBytes(char* to, const char* from, size_t n) {
  if (n >= 8 && n <= 16) {
    uint64_t head, tail;
    std::memcpy(&head, from, 8);
    std::memcpy(&tail, from + n - 8, 8);
    std::memcpy(to, &head, 8);
    std::memcpy(to + n - 8, &tail, 8);
  } else if (n >= 4 && n < 8) {
    uint32_t head, tail;
    std::memcpy(&head, from, 4);
    std::memcpy(&tail, from + n - 4, 4);
    std::memcpy(to, &head, 4);
    std::memcpy(to + n - 4, &tail, 4);
  } else if (n > 0 && n < 4) {
    to[0] = from[0];
    to[n / 2] = from[n / 2];
    to[n - 1] = from[n - 1];
  } else if (n > 16) {
    std::memcpy(to, from, n);
  }
}

// Bytes appended to a TextBuffer: `length()` the bytes written. Each piece costs one bound check
// and a copy, where std::string's append and push_back pay their bookkeeping per call (a trace
// line is some 20 pieces, and a run writes a line for every record on every replica). A buffer
// reused for every line allocates only while it grows.
class JsonOut {
 public:
  // Writes from buffer.data()[from]; what is before stays. REQUIRES: from <= capacity().
  explicit JsonOut(TextBuffer& buffer, size_t from = 0) : buffer_(buffer), length_(from) {}
  // Room for `n` more bytes; the pointer is valid until the next call.
  char* Room(size_t n) {
    if (length_ + n > buffer_.capacity()) [[unlikely]]
      buffer_.Grow(length_, length_ + n);
    return buffer_.data() + length_;
  }
  void Advance(size_t n) { length_ += n; }
  void Put(char c) {
    *Room(1) = c;
    ++length_;
  }
  void Put(std::string_view bytes) {
    CopyBytes(Room(bytes.size()), bytes.data(), bytes.size());  // nothing read when empty
    length_ += bytes.size();
  }
  size_t length() const { return length_; }
  std::string_view view() const { return {buffer_.data(), length_}; }

 private:
  TextBuffer& buffer_;
  size_t length_ = 0;
};

// `text` as a JSON string, quotes included.
void AppendJsonString(JsonOut& out, std::string_view text);

// `text` in quotes: what AppendJsonString writes of it, without the scan. REQUIRES: `text` needs
// no escape (a PlainName's text).
inline void AppendJsonPlain(JsonOut& out, std::string_view text) {
  char* at = out.Room(text.size() + 2);
  at[0] = '"';
  CopyBytes(at + 1, text.data(), text.size());
  at[text.size() + 1] = '"';
  out.Advance(text.size() + 2);
}

// std::to_string's digits, without its string.
template <class Integer>
void AppendJsonInteger(JsonOut& out, Integer value) {
  char* at = out.Room(24);
  const std::to_chars_result end = std::to_chars(at, at + 24, value);
  out.Advance(static_cast<size_t>(end.ptr - at));
}

// [a,b,c]: a JSON array of integers (an ISR, a list of broker ids).
template <class Integer>
void AppendJsonIntegerArray(JsonOut& out, const std::vector<Integer>& values) {
  out.Put('[');
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out.Put(',');
    AppendJsonInteger(out, values[i]);
  }
  out.Put(']');
}

// Any JSON value (either of nlohmann's two object flavours; members in their stored order).
void AppendJsonValue(JsonOut& out, const nlohmann::json& value);
void AppendJsonValue(JsonOut& out, const nlohmann::ordered_json& value);

}  // namespace ksim
