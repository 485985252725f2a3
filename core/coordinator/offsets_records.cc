// __consumer_offsets keys and values (Kafka's GroupMetadataManager schemas; see offsets_records.h).
#include "core/coordinator/offsets_records.h"

#include <limits>

#include "core/base/big_endian.h"
#include "core/base/check.h"

namespace ksim {

namespace {

constexpr int16_t kOffsetCommitKeyVersion = 1;
constexpr int16_t kGroupMetadataKeyVersion = 2;
constexpr int16_t kOffsetCommitValueVersion = 1;

class Writer {
 public:
  void Int16(int16_t v) {
    const size_t at = Grow(2);
    StoreBigEndian16(out_.data() + at, static_cast<uint16_t>(v));
  }
  void Int32(int32_t v) {
    const size_t at = Grow(4);
    StoreBigEndian32(out_.data() + at, static_cast<uint32_t>(v));
  }
  void Int64(int64_t v) {
    const size_t at = Grow(8);
    StoreBigEndian64(out_.data() + at, static_cast<uint64_t>(v));
  }
  void String(std::string_view s) {
    KSIM_CHECK(s.size() <= static_cast<size_t>(std::numeric_limits<int16_t>::max()));
    Int16(static_cast<int16_t>(s.size()));
    out_.insert(out_.end(), s.begin(), s.end());
  }
  void NullableString(const std::optional<std::string>& s) {
    if (!s.has_value()) return Int16(-1);
    String(*s);
  }
  void ByteArray(ByteView b) {
    KSIM_CHECK(b.size() <= static_cast<size_t>(std::numeric_limits<int32_t>::max()));
    Int32(static_cast<int32_t>(b.size()));
    out_.insert(out_.end(), b.begin(), b.end());
  }
  Bytes Take() { return std::move(out_); }

 private:
  size_t Grow(size_t n) {
    const size_t at = out_.size();
    out_.resize(at + n);
    return at;
  }
  Bytes out_;
};

// Reads fields from untrusted bytes: the first failure sticks and every later read is a no-op.
class Reader {
 public:
  explicit Reader(ByteView in) : in_(in) {}
  int16_t Int16() {
    if (!Need(2, "int16")) return 0;
    const auto v = static_cast<int16_t>(LoadBigEndian16(in_.data() + pos_));
    pos_ += 2;
    return v;
  }
  int32_t Int32() {
    if (!Need(4, "int32")) return 0;
    const auto v = static_cast<int32_t>(LoadBigEndian32(in_.data() + pos_));
    pos_ += 4;
    return v;
  }
  int64_t Int64() {
    if (!Need(8, "int64")) return 0;
    const auto v = static_cast<int64_t>(LoadBigEndian64(in_.data() + pos_));
    pos_ += 8;
    return v;
  }
  std::optional<std::string> NullableString() {
    const int16_t length = Int16();
    if (!ok()) return std::nullopt;
    if (length == -1) return std::nullopt;
    if (length < 0) return Fail("negative string length"), std::nullopt;
    if (!Need(static_cast<size_t>(length), "string")) return std::nullopt;
    std::string s(reinterpret_cast<const char*>(in_.data() + pos_), static_cast<size_t>(length));
    pos_ += static_cast<size_t>(length);
    return s;
  }
  std::string String() {
    const size_t at = pos_;
    std::optional<std::string> s = NullableString();
    if (ok() && !s.has_value()) Fail("null string at position " + std::to_string(at));
    return s.value_or("");
  }
  Bytes ByteArray() {
    const int32_t length = Int32();
    if (!ok()) return {};
    if (length < 0) return Fail("negative bytes length"), Bytes{};
    if (!Need(static_cast<size_t>(length), "bytes")) return {};
    Bytes b(in_.begin() + static_cast<ptrdiff_t>(pos_),
            in_.begin() + static_cast<ptrdiff_t>(pos_ + static_cast<size_t>(length)));
    pos_ += static_cast<size_t>(length);
    return b;
  }
  // An array count: at least `min_element_bytes` per element must remain.
  int32_t Count(size_t min_element_bytes) {
    const int32_t count = Int32();
    if (!ok()) return 0;
    if (count < 0) return Fail("negative array count"), 0;
    if (static_cast<uint64_t>(count) * min_element_bytes > in_.size() - pos_) {
      return Fail("array count " + std::to_string(count) + " larger than the bytes left"), 0;
    }
    return count;
  }
  void Fail(std::string what) {
    if (status_.ok()) status_ = Status(Errc::kCorruption, std::move(what));
  }
  bool ok() const { return status_.ok(); }
  // The outcome once everything was read: trailing bytes are damage too.
  Status Finish(std::string_view what) {
    if (ok() && pos_ != in_.size()) {
      Fail(std::to_string(in_.size() - pos_) + " trailing bytes");
    }
    if (ok()) return status_;
    return Status(Errc::kCorruption, std::string(what) + ": " + status_.message());
  }

 private:
  bool Need(size_t n, std::string_view what) {
    if (!ok()) return false;
    if (in_.size() - pos_ < n) {
      Fail(std::string(what) + " past the end at position " + std::to_string(pos_));
      return false;
    }
    return true;
  }
  ByteView in_;
  size_t pos_ = 0;
  Status status_;
};

}  // namespace

int32_t JavaStringHashCode(std::string_view text) {
  uint32_t hash = 0;
  auto add = [&hash](uint32_t unit) { hash = hash * 31u + unit; };
  size_t i = 0;
  while (i < text.size()) {
    const auto b0 = static_cast<uint8_t>(text[i]);
    uint32_t code_point = b0;
    size_t length = 1;
    if (b0 >= 0xC0 && b0 < 0xE0) {
      length = 2;
      code_point = b0 & 0x1Fu;
    } else if (b0 >= 0xE0 && b0 < 0xF0) {
      length = 3;
      code_point = b0 & 0x0Fu;
    } else if (b0 >= 0xF0 && b0 < 0xF8) {
      length = 4;
      code_point = b0 & 0x07u;
    }
    bool valid = length == 1 ? b0 < 0x80 : i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k) {
      const auto b = static_cast<uint8_t>(text[i + k]);
      if ((b & 0xC0u) != 0x80u) valid = false;
      code_point = (code_point << 6) | (b & 0x3Fu);
    }
    if (!valid) {
      add(b0);
      ++i;
      continue;
    }
    if (code_point >= 0x10000) {  // a surrogate pair in UTF-16
      const uint32_t v = code_point - 0x10000;
      add(0xD800u + (v >> 10));
      add(0xDC00u + (v & 0x3FFu));
    } else {
      add(code_point);
    }
    i += length;
  }
  return static_cast<int32_t>(hash);
}

int32_t OffsetsPartitionFor(std::string_view group_id, int32_t partitions) {
  KSIM_CHECK(partitions > 0);
  // Utils.toPositive: number & 0x7fffffff.
  const int32_t positive = JavaStringHashCode(group_id) & 0x7fffffff;
  return positive % partitions;
}

Bytes EncodeOffsetCommitKey(const OffsetCommitKey& key) {
  Writer w;
  w.Int16(kOffsetCommitKeyVersion);
  w.String(key.group);
  w.String(key.tp.topic);
  w.Int32(key.tp.partition.value());
  return w.Take();
}

Bytes EncodeGroupMetadataKey(const GroupMetadataKey& key) {
  Writer w;
  w.Int16(kGroupMetadataKeyVersion);
  w.String(key.group);
  return w.Take();
}

Bytes EncodeOffsetCommitValue(const CommittedOffset& value) {
  Writer w;
  w.Int16(kOffsetCommitValueVersion);
  w.Int64(value.offset.value());
  w.String(value.metadata);
  w.Int64(value.commit_timestamp_ms);
  w.Int64(value.expire_timestamp_ms);
  return w.Take();
}

Bytes EncodeGroupMetadataValue(const StoredGroup& value, int16_t version) {
  KSIM_CHECK(version == 0 || version == 1);
  Writer w;
  w.Int16(version);
  w.String(value.protocol_type);
  w.Int32(value.generation);
  w.NullableString(value.protocol);
  w.NullableString(value.leader);
  w.Int32(static_cast<int32_t>(value.members.size()));
  for (const StoredMember& member : value.members) {
    w.String(member.member_id);
    w.String(member.client_id);
    w.String(member.client_host);
    if (version >= 1) w.Int32(member.rebalance_timeout_ms);
    w.Int32(member.session_timeout_ms);
    w.ByteArray(member.subscription);
    w.ByteArray(member.assignment);
  }
  return w.Take();
}

Result<OffsetsKey> DecodeOffsetsKey(ByteView bytes) {
  Reader r(bytes);
  const int16_t version = r.Int16();
  if (!r.ok()) return r.Finish("offsets key");
  if (version == 0 || version == 1) {
    OffsetCommitKey key;
    key.group = r.String();
    key.tp.topic = r.String();
    key.tp.partition = PartitionId(r.Int32());
    KSIM_RETURN_IF_ERROR(r.Finish("offset commit key"));
    return OffsetsKey(std::move(key));
  }
  if (version == 2) {
    GroupMetadataKey key;
    key.group = r.String();
    KSIM_RETURN_IF_ERROR(r.Finish("group metadata key"));
    return OffsetsKey(std::move(key));
  }
  return Status(Errc::kUnsupported, "offsets key version " + std::to_string(version));
}

Result<CommittedOffset> DecodeOffsetCommitValue(ByteView bytes) {
  Reader r(bytes);
  const int16_t version = r.Int16();
  if (!r.ok()) return r.Finish("offset commit value");
  if (version != 0 && version != 1) {
    return Status(Errc::kUnsupported, "offset commit value version " + std::to_string(version));
  }
  CommittedOffset value;
  value.offset = Offset(r.Int64());
  value.metadata = r.String();
  value.commit_timestamp_ms = r.Int64();
  value.expire_timestamp_ms = version == 1 ? r.Int64() : value.commit_timestamp_ms;
  KSIM_RETURN_IF_ERROR(r.Finish("offset commit value"));
  return value;
}

int16_t GroupMetadataValueVersion(const ApiVersion& inter_broker_protocol_version) {
  // 0.10.0.1 knows value v0 only (CURRENT_GROUP_VALUE_SCHEMA_VERSION = 0); 0.10.1 writes v1 unless
  // the inter-broker protocol is older than 0.10.1-IV0 (GroupMetadataManager.prepareStoreGroup).
  return inter_broker_protocol_version.since < KafkaRelease::k0_10_1 ? 0 : 1;
}

Result<StoredGroup> DecodeGroupMetadataValue(ByteView bytes) {
  Reader r(bytes);
  const int16_t version = r.Int16();
  if (!r.ok()) return r.Finish("group metadata value");
  if (version != 0 && version != 1) {
    return Status(Errc::kUnsupported, "group metadata value version " + std::to_string(version));
  }
  StoredGroup group;
  group.protocol_type = r.String();
  group.generation = r.Int32();
  group.protocol = r.NullableString();
  group.leader = r.NullableString();
  // A member takes at least 3 strings of 2 bytes, 1-2 int32s and 2 byte arrays of 4 bytes.
  const int32_t count = r.Count(version == 1 ? 18 : 14);
  for (int32_t i = 0; i < count && r.ok(); ++i) {
    StoredMember member;
    member.member_id = r.String();
    member.client_id = r.String();
    member.client_host = r.String();
    member.rebalance_timeout_ms = version == 1 ? r.Int32() : 0;
    member.session_timeout_ms = r.Int32();
    if (version == 0) member.rebalance_timeout_ms = member.session_timeout_ms;
    member.subscription = r.ByteArray();
    member.assignment = r.ByteArray();
    group.members.push_back(std::move(member));
  }
  KSIM_RETURN_IF_ERROR(r.Finish("group metadata value"));
  return group;
}

Result<OffsetsRecord> DecodeOffsetsRecord(const std::optional<Bytes>& key,
                                          const std::optional<Bytes>& value) {
  if (!key.has_value()) return Status(Errc::kCorruption, "offsets record without a key");
  KSIM_ASSIGN_OR_RETURN(OffsetsKey decoded_key, DecodeOffsetsKey(*key));
  OffsetsRecord record{.key = std::move(decoded_key), .value = std::monostate{}};
  if (!value.has_value()) return record;
  if (std::holds_alternative<OffsetCommitKey>(record.key)) {
    KSIM_ASSIGN_OR_RETURN(CommittedOffset offset, DecodeOffsetCommitValue(*value));
    record.value = std::move(offset);
  } else {
    KSIM_ASSIGN_OR_RETURN(StoredGroup group, DecodeGroupMetadataValue(*value));
    record.value = std::move(group);
  }
  return record;
}

}  // namespace ksim
