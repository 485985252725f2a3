// WireReader and WireWriter: the two directions of Kafka's wire encoding behind one interface, so
// that each message's layout is written once (core/wire/codec.cc: `Body(io, message, version)`)
// and serves both decoding and encoding. The protocol guide's primitive types
// (https://kafka.apache.org/protocol#protocol_types): INT8/16/32/64 big-endian, BOOLEAN one byte,
// STRING (int16 length + UTF-8; NULLABLE_STRING -1 for null), BYTES (int32 length; NULLABLE_BYTES
// -1 for null), ARRAY (int32 count; -1 for null). Non-flexible versions only: no varints, no
// tagged fields.
//
// Per-partition lists: messages.h keeps them flat, each entry with its TopicPartition `tp`; the
// wire groups them by topic ([topic [partition ...]]). TopicArray writes the entries grouped by
// topic, topics in the order of their first entry, and reads them back flat.
//
// The reader never reads past its buffer and never allocates for an array more elements than
// bytes remain: every length and count is checked first. The first error is kept (ok() false,
// status() says where and what), every later read does nothing and yields zeros, so a body
// function runs to its end without checking after each field. Header-only; no state beyond the
// buffer position.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/base/big_endian.h"
#include "core/base/bytes.h"
#include "core/base/status.h"
#include "core/base/topic_partition.h"
#include "core/base/types.h"

namespace ksim::wire {

// The TopicPartition of a per-partition entry (its `tp`), or the entry itself.
template <class T>
TopicPartition& TopicPartitionOf(T& item) {
  if constexpr (std::is_same_v<T, TopicPartition>) {
    return item;
  } else {
    return item.tp;
  }
}

class WireReader {
 public:
  static constexpr bool kReading = true;

  explicit WireReader(ByteView bytes) : bytes_(bytes) {}

  bool ok() const { return error_.empty(); }
  // kInvalidRequest naming the byte position and what was being read.
  Status status() const { return ok() ? Status::Ok() : Status(Errc::kInvalidRequest, error_); }
  size_t position() const { return position_; }
  size_t remaining() const { return bytes_.size() - position_; }
  void Fail(const std::string& why) {
    if (ok()) error_ = why + " at byte " + std::to_string(position_);
  }

  void Int8(int8_t& v) { v = static_cast<int8_t>(Take(1, "an INT8") ? bytes_[position_ - 1] : 0); }
  void Bool(bool& v) {
    int8_t b = 0;
    Int8(b);
    v = b != 0;
  }
  void Int16(int16_t& v) {
    v = Take(2, "an INT16") ? static_cast<int16_t>(LoadBigEndian16(At(2))) : 0;
  }
  void Int32(int32_t& v) {
    v = Take(4, "an INT32") ? static_cast<int32_t>(LoadBigEndian32(At(4))) : 0;
  }
  void Int64(int64_t& v) {
    v = Take(8, "an INT64") ? static_cast<int64_t>(LoadBigEndian64(At(8))) : 0;
  }
  template <class Tag, class Rep>
  void Int(StrongInt<Tag, Rep>& v) {
    Rep raw = 0;
    Plain(raw);
    v = StrongInt<Tag, Rep>(raw);
  }
  void Error(Errc& v) {
    int16_t code = 0;
    Int16(code);
    v = static_cast<Errc>(code);
  }

  void String(std::string& v) {
    std::optional<std::string> s;
    NullableString(s);
    if (ok() && !s) Fail("a null STRING");
    v = s.value_or(std::string());
  }
  void NullableString(std::optional<std::string>& v) {
    int16_t length = 0;
    Int16(length);
    v.reset();
    if (!ok() || length == -1) return;
    if (length < 0) return Fail("a STRING length of " + std::to_string(length));
    if (!Take(static_cast<size_t>(length), "a STRING's bytes")) return;
    v.emplace(reinterpret_cast<const char*>(At(length)), static_cast<size_t>(length));
  }
  // NULLABLE_BYTES; null reads as empty (record sets: null and empty mean "no records").
  void Bytes(ksim::Bytes& v) {
    int32_t length = 0;
    Int32(length);
    v.clear();
    if (!ok() || length == -1) return;
    if (length < 0) return Fail("a BYTES length of " + std::to_string(length));
    if (!Take(static_cast<size_t>(length), "a BYTES' bytes")) return;
    const uint8_t* start = At(length);
    v.assign(start, start + length);
  }

  template <class T, class F>
  void Array(std::vector<T>& v, F&& element) {
    v.clear();
    const int32_t count = Count(/*nullable=*/false);
    for (int32_t i = 0; i < count && ok(); ++i) element(v.emplace_back());
  }
  template <class T, class F>
  void NullableArray(std::optional<std::vector<T>>& v, F&& element) {
    v.reset();
    const int32_t count = Count(/*nullable=*/true);
    if (!ok() || count == -1) return;
    v.emplace();
    for (int32_t i = 0; i < count && ok(); ++i) element(v->emplace_back());
  }
  // [topic [entry]] read into a flat list; `entry` reads the partition and the entry's fields.
  template <class T, class F>
  void TopicArray(std::vector<T>& v, F&& entry) {
    v.clear();
    ReadTopics(Count(/*nullable=*/false), v, entry);
  }
  // The same with a null topic array (v.reset()).
  template <class T, class F>
  void NullableTopicArray(std::optional<std::vector<T>>& v, F&& entry) {
    v.reset();
    const int32_t topics = Count(/*nullable=*/true);
    if (!ok() || topics == -1) return;
    ReadTopics(topics, v.emplace(), entry);
  }
  // An array whose elements this layer ignores: each is skipped by `element` reading into
  // locals.
  template <class F>
  void SkipArray(F&& element) {
    const int32_t count = Count(/*nullable=*/true);
    for (int32_t i = 0; i < count && ok(); ++i) element();
  }

 private:
  template <class Rep>
  void Plain(Rep& raw) {
    if constexpr (sizeof(Rep) == 1) {
      Int8(reinterpret_cast<int8_t&>(raw));
    } else if constexpr (sizeof(Rep) == 2) {
      Int16(raw);
    } else if constexpr (sizeof(Rep) == 4) {
      Int32(raw);
    } else {
      Int64(raw);
    }
  }
  template <class T, class F>
  void ReadTopics(int32_t topics, std::vector<T>& v, F& entry) {
    for (int32_t t = 0; t < topics && ok(); ++t) {
      std::string topic;
      String(topic);
      const int32_t partitions = Count(/*nullable=*/false);
      for (int32_t p = 0; p < partitions && ok(); ++p) {
        T& item = v.emplace_back();
        TopicPartitionOf(item).topic = topic;
        entry(item);
      }
    }
  }
  // An array's count: -1 (null) only when nullable; never more than the bytes left, since every
  // element takes at least one byte.
  int32_t Count(bool nullable) {
    int32_t count = 0;
    Int32(count);
    if (!ok()) return 0;
    if (count == -1 && nullable) return -1;
    if (count < 0) {
      Fail("an ARRAY count of " + std::to_string(count));
      return 0;
    }
    if (static_cast<size_t>(count) > remaining()) {
      Fail("an ARRAY count of " + std::to_string(count) + " with " + std::to_string(remaining()) +
           " bytes left");
      return 0;
    }
    return count;
  }
  // Advances past `n` bytes if they are there; otherwise fails (naming `what`).
  bool Take(size_t n, const char* what) {
    if (!ok()) return false;
    if (n > remaining()) {
      Fail(std::string("truncated: ") + what + " needs " + std::to_string(n) + " bytes, " +
           std::to_string(remaining()) + " left");
      return false;
    }
    position_ += n;
    return true;
  }
  // The `n` bytes just taken.
  const uint8_t* At(size_t n) const { return bytes_.data() + position_ - n; }

  ByteView bytes_;
  size_t position_ = 0;
  std::string error_;
};

class WireWriter {
 public:
  static constexpr bool kReading = false;

  explicit WireWriter(ksim::Bytes& out) : out_(out) {}

  bool ok() const { return true; }

  // The writer takes the same non-const references as the reader, never changes them.
  void Int8(const int8_t& v) { out_.push_back(static_cast<uint8_t>(v)); }
  void Bool(const bool& v) { out_.push_back(v ? 1 : 0); }
  void Int16(const int16_t& v) {
    const size_t at = Grow(2);
    StoreBigEndian16(out_.data() + at, static_cast<uint16_t>(v));
  }
  void Int32(const int32_t& v) {
    const size_t at = Grow(4);
    StoreBigEndian32(out_.data() + at, static_cast<uint32_t>(v));
  }
  void Int64(const int64_t& v) {
    const size_t at = Grow(8);
    StoreBigEndian64(out_.data() + at, static_cast<uint64_t>(v));
  }
  template <class Tag, class Rep>
  void Int(const StrongInt<Tag, Rep>& v) {
    const Rep raw = v.value();
    if constexpr (sizeof(Rep) == 1) {
      Int8(static_cast<int8_t>(raw));
    } else if constexpr (sizeof(Rep) == 2) {
      Int16(raw);
    } else if constexpr (sizeof(Rep) == 4) {
      Int32(raw);
    } else {
      Int64(raw);
    }
  }
  // Local error codes (negative, no Kafka code) go out as UNKNOWN_SERVER_ERROR.
  void Error(const Errc& v) {
    const int16_t code = static_cast<int16_t>(v);
    Int16(code < -1 ? int16_t{-1} : code);
  }

  void String(const std::string& v) {
    Int16(static_cast<int16_t>(v.size()));
    out_.insert(out_.end(), v.begin(), v.end());
  }
  void NullableString(const std::optional<std::string>& v) {
    if (!v) return Int16(-1);
    String(*v);
  }
  void Bytes(const ksim::Bytes& v) {
    Int32(static_cast<int32_t>(v.size()));
    out_.insert(out_.end(), v.begin(), v.end());
  }

  template <class T, class F>
  void Array(std::vector<T>& v, F&& element) {
    Int32(static_cast<int32_t>(v.size()));
    for (T& item : v) element(item);
  }
  template <class T, class F>
  void NullableArray(std::optional<std::vector<T>>& v, F&& element) {
    if (!v) return Int32(-1);
    Array(*v, element);
  }
  // The flat list grouped by topic, topics in the order of their first entry.
  template <class T, class F>
  void TopicArray(std::vector<T>& v, F&& entry) {
    std::vector<const std::string*> topics;
    for (T& item : v) {
      const std::string& topic = TopicPartitionOf(item).topic;
      if (std::none_of(topics.begin(), topics.end(),
                       [&](const std::string* t) { return *t == topic; })) {
        topics.push_back(&topic);
      }
    }
    Int32(static_cast<int32_t>(topics.size()));
    for (const std::string* topic : topics) {
      String(*topic);
      const int32_t count = static_cast<int32_t>(std::count_if(
          v.begin(), v.end(), [&](T& item) { return TopicPartitionOf(item).topic == *topic; }));
      Int32(count);
      for (T& item : v) {
        if (TopicPartitionOf(item).topic == *topic) entry(item);
      }
    }
  }
  template <class T, class F>
  void NullableTopicArray(std::optional<std::vector<T>>& v, F&& entry) {
    if (!v) return Int32(-1);
    TopicArray(*v, entry);
  }
  // Writes an empty array where the message has nothing to say.
  template <class F>
  void SkipArray(F&& /*element*/) {
    Int32(0);
  }

 private:
  size_t Grow(size_t n) {
    const size_t at = out_.size();
    out_.resize(at + n);
    return at;
  }

  ksim::Bytes& out_;
};

}  // namespace ksim::wire
