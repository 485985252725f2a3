#include "core/base/events.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "core/base/check.h"
#include "core/base/trace_names.h"

namespace ksim {

void EventValue::AppendTo(JsonOut& out) const {
  switch (kind_) {
    case Kind::kNull:
      return out.Put("null");
    case Kind::kBool:
      return out.Put(v_.boolean ? "true" : "false");
    case Kind::kSigned:
      return AppendJsonInteger(out, v_.signed_value);
    case Kind::kUnsigned:
      return AppendJsonInteger(out, v_.unsigned_value);
    case Kind::kString:
      return AppendJsonString(out, std::string_view(v_.text.data, v_.text.size));
    case Kind::kJson:
      return AppendJsonValue(out, *v_.json);
    case Kind::kIntegers:
      return AppendJsonIntegerArray(out, *v_.integers);
  }
  KSIM_CHECK_MSG(false, "unknown event value kind");
}

EventFields::EventFields(std::initializer_list<EventField> fields) {
  for (const EventField& field : fields) Add(field.key, field.plain_key, field.value);
}

EventFields::EventFields(const nlohmann::ordered_json& object) {
  KSIM_CHECK_MSG(object.is_object() || object.is_null(), "event fields must be a JSON object");
  if (object.is_null()) return;
  for (const auto& [key, value] : object.items()) Add(key, value);
}

EventFields::EventFields(const EventFields& other)
    : length_(other.length_), count_(other.count_), key_bits_(other.key_bits_), json_(other.json_) {
  std::copy_n(other.entries_.begin(), std::min<size_t>(count_, kEntries), entries_.begin());
  if (length_ > 0) {
    text_.Grow(0, length_);
    std::memcpy(text_.data(), other.text_.data(), length_);
  }
}

EventFields& EventFields::operator=(const EventFields& other) {
  if (this != &other) *this = EventFields(other);
  return *this;
}

EventFields::EventFields(EventFields&& other) noexcept { *this = std::move(other); }

EventFields& EventFields::operator=(EventFields&& other) noexcept {
  if (this == &other) return *this;
  length_ = other.length_;
  count_ = other.count_;
  key_bits_ = other.key_bits_;
  json_ = std::move(other.json_);
  std::copy_n(other.entries_.begin(), std::min<size_t>(count_, kEntries), entries_.begin());
  if (other.text_.in_lent_room()) {
    if (!text_.in_lent_room()) text_ = TextBuffer(room_, kRoomBytes);  // its allocation freed
    std::memcpy(room_, other.room_, length_);
  } else {
    text_ = std::move(other.text_);
  }
  other.text_ = TextBuffer(other.room_, kRoomBytes);
  other.length_ = 0;
  other.count_ = 0;
  other.key_bits_ = 0;
  return *this;
}

namespace {

// Whether `key` is one of the trace line's own keys; most keys differ from all three in length or
// first letter, and are told apart without a comparison.
bool IsLineKey(std::string_view key) {
  static_assert(field::kEv.size() == 2 && field::kTimeUs.size() == 4 && field::kNode.size() == 4);
  switch (key.size()) {
    case 2:
      return key == field::kEv;
    case 4:
      return key == field::kTimeUs || key == field::kNode;
    default:
      return false;
  }
}

}  // namespace

JsonOut EventFields::BeginField(std::string_view key, bool plain) {
  KSIM_CHECK_MSG(!IsLineKey(key), "event fields may not repeat t_us, node or ev");
  JsonOut out(text_, length_);
  const size_t comma = count_ > 0 ? 1 : 0;
  if (plain) {
    // A PlainName (its characters checked when compiled): the comma, the quoted key and the colon
    // in one piece of room, without a scan.
    char* at = out.Room(comma + key.size() + 3);
    at[0] = ',';  // overwritten by the quote when there is no comma
    at += comma;
    at[0] = '"';
    CopyBytes(at + 1, key.data(), key.size());
    at[key.size() + 1] = '"';
    at[key.size() + 2] = ':';
    out.Advance(comma + key.size() + 3);
  } else {
    if (comma != 0) out.Put(',');
    AppendJsonString(out, key);
    out.Put(':');
  }
  const size_t key_end = out.length() - 1;
  const size_t begin = length_ + comma;
  const std::string_view written(text_.data() + begin, key_end - begin);
  // A repeated key: the same quoted text at an earlier field's place. A key whose length and first
  // letter no earlier key had (its bit in key_bits_ clear) is new without a look at the others;
  // else keys of another length, or whose first letter differs, are passed over unread.
  const uint64_t bit = uint64_t{1}
                       << ((written.size() * 7 + static_cast<uint8_t>(written[1])) % 64);
  if ((key_bits_ & bit) != 0) [[unlikely]] {
    for (size_t i = 0; i < std::min<size_t>(count_, kEntries); ++i) {
      const Entry& entry = entries_[i];
      if (entry.key_end - entry.begin != written.size() ||
          text_.data()[entry.begin + 1] != written[1]) {
        continue;
      }
      KSIM_CHECK_MSG(
          std::string_view(text_.data() + entry.begin, entry.key_end - entry.begin) != written,
          ("an event field repeated: " + std::string(key)).c_str());
    }
  }
  key_bits_ |= bit;
  if (count_ < kEntries) {
    entries_[count_].begin = static_cast<uint32_t>(begin);
    entries_[count_].key_end = static_cast<uint32_t>(key_end);
  }
  return out;
}

EventFields& EventFields::Add(std::string_view key, bool plain, const EventValue& value) {
  JsonOut out = BeginField(key, plain);
  value.AppendTo(out);
  return EndField(out, value.kind_);
}

namespace {

// The string a JSON string's text holds: its bytes between the quotes when nothing is escaped
// (the common case), else as nlohmann reads it.
std::string StringOf(std::string_view quoted) {
  const std::string_view inside = quoted.substr(1, quoted.size() - 2);
  if (inside.find('\\') == std::string_view::npos) return std::string(inside);
  return nlohmann::json::parse(quoted).get<std::string>();
}

template <class Integer>
Integer IntegerOf(std::string_view text) {
  Integer value = 0;
  const std::from_chars_result read =
      std::from_chars(text.data(), text.data() + text.size(), value);
  KSIM_CHECK(read.ec == std::errc() && read.ptr == text.data() + text.size());
  return value;
}

}  // namespace

EventFields& EventFields::AddAll(const EventFields& other) {
  if (other.count_ > kEntries) {  // places not kept: through its JSON
    for (const auto& [key, value] : other.json().items()) Add(key, value);
    return *this;
  }
  for (size_t i = 0; i < other.count_; ++i) {
    const Entry& entry = other.entries_[i];
    const std::string key =
        StringOf(std::string_view(other.text_.data() + entry.begin, entry.key_end - entry.begin));
    const std::string_view value(other.text_.data() + entry.key_end + 1,
                                 entry.value_end - entry.key_end - 1);
    JsonOut out = BeginField(key, /*plain=*/false);
    out.Put(value);
    EndField(out, entry.kind);
  }
  return *this;
}

nlohmann::ordered_json EventFields::Build() const {
  if (count_ > kEntries) return nlohmann::ordered_json::parse("{" + std::string(text()) + "}");
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  auto& members = object.get_ref<nlohmann::ordered_json::object_t&>();
  members.reserve(count_);
  for (size_t i = 0; i < count_; ++i) {
    const Entry& entry = entries_[i];
    const std::string_view key(text_.data() + entry.begin, entry.key_end - entry.begin);
    const std::string_view value(text_.data() + entry.key_end + 1,
                                 entry.value_end - entry.key_end - 1);
    nlohmann::ordered_json& member = members.emplace_back(StringOf(key), nullptr).second;
    switch (entry.kind) {
      case ValueKind::kNull:
        break;
      case ValueKind::kBool:
        member = value == "true";
        break;
      case ValueKind::kSigned:
        member = IntegerOf<int64_t>(value);
        break;
      case ValueKind::kUnsigned:
        member = IntegerOf<uint64_t>(value);
        break;
      case ValueKind::kString:
        member = StringOf(value);
        break;
      case ValueKind::kJson:
      case ValueKind::kIntegers:
        member = nlohmann::ordered_json::parse(value);
        break;
    }
  }
  return object;
}

std::optional<std::string_view> EventFields::ValueText(std::string_view key) const {
  KSIM_CHECK(count_ <= kEntries);
  for (size_t i = 0; i < count_; ++i) {
    const Entry& entry = entries_[i];
    // The key's text is quoted; a key JSON escapes is not found here (json() has it).
    const std::string_view quoted(text_.data() + entry.begin, entry.key_end - entry.begin);
    if (quoted.size() == key.size() + 2 && quoted.substr(1, key.size()) == key) {
      return std::string_view(text_.data() + entry.key_end + 1,
                              entry.value_end - entry.key_end - 1);
    }
  }
  return std::nullopt;
}

namespace {

// Past the fields whose place is kept: `key`'s member of the parsed object when `is` says it has
// the type asked for.
template <class T>
std::optional<T> MemberOf(const nlohmann::ordered_json& object, std::string_view key,
                          bool (nlohmann::ordered_json::*is)() const noexcept) {
  auto it = object.find(key);
  if (it == object.end() || !((*it).*is)()) return std::nullopt;
  return it->get<T>();
}

}  // namespace

std::optional<std::string> EventFields::StringValue(std::string_view key) const {
  if (count_ > kEntries)
    return MemberOf<std::string>(json(), key, &nlohmann::ordered_json::is_string);
  const std::optional<std::string_view> text = ValueText(key);
  if (!text || text->empty() || text->front() != '"') return std::nullopt;
  return StringOf(*text);
}

std::optional<int64_t> EventFields::IntegerValue(std::string_view key) const {
  if (count_ > kEntries) {
    return MemberOf<int64_t>(json(), key, &nlohmann::ordered_json::is_number_integer);
  }
  const std::optional<std::string_view> text = ValueText(key);
  if (!text) return std::nullopt;
  // As nlohmann reads the text: an integer is digits with an optional minus, beyond int64_t's
  // range an unsigned (get<int64_t> then wraps it); anything else (a fraction, an exponent,
  // another type) is not.
  const char* end = text->data() + text->size();
  int64_t signed_value = 0;
  std::from_chars_result read = std::from_chars(text->data(), end, signed_value);
  if (read.ec == std::errc() && read.ptr == end) return signed_value;
  uint64_t unsigned_value = 0;
  read = std::from_chars(text->data(), end, unsigned_value);
  if (read.ec == std::errc() && read.ptr == end) return static_cast<int64_t>(unsigned_value);
  return std::nullopt;
}

std::optional<std::vector<int64_t>> EventFields::IntegersValue(std::string_view key) const {
  auto from_json = [&]() -> std::optional<std::vector<int64_t>> {
    const nlohmann::ordered_json& all = json();
    const auto it = all.find(key);
    if (it == all.end() || !it->is_array()) return std::nullopt;
    std::vector<int64_t> integers;
    for (const nlohmann::ordered_json& member : *it) {
      if (member.is_number_integer()) integers.push_back(member.get<int64_t>());
    }
    return integers;
  };
  if (count_ > kEntries) return from_json();
  const std::optional<std::string_view> text = ValueText(key);
  if (!text) return std::nullopt;
  // The text ksim writes, [i,j,...] of int64s, is read here; any other (a space, a member of
  // another type, an integer past int64_t) as json() reads it.
  if (text->size() < 2 || text->front() != '[' || text->back() != ']') return from_json();
  std::vector<int64_t> integers;
  const char* at = text->data() + 1;
  const char* const end = text->data() + text->size() - 1;
  if (at == end) return integers;
  while (true) {
    int64_t value = 0;
    const std::from_chars_result read = std::from_chars(at, end, value);
    const char* const digits = *at == '-' ? at + 1 : at;
    if (read.ec != std::errc() || (*digits == '0' && read.ptr - digits > 1)) return from_json();
    integers.push_back(value);
    at = read.ptr;
    if (at == end) return integers;
    if (*at != ',') return from_json();
    ++at;
  }
}

std::optional<bool> EventFields::BoolValue(std::string_view key) const {
  if (count_ > kEntries) return MemberOf<bool>(json(), key, &nlohmann::ordered_json::is_boolean);
  const std::optional<std::string_view> text = ValueText(key);
  if (text == "true") return true;
  if (text == "false") return false;
  return std::nullopt;
}

const nlohmann::ordered_json& EventFields::json() const {
  if (json_ == nullptr) json_ = std::make_shared<const nlohmann::ordered_json>(Build());
  return *json_;
}

}  // namespace ksim
