#include "core/base/json_text.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

namespace ksim {

void TextBuffer::Grow(size_t keep, size_t needed) {
  if (needed <= capacity_) return;
  const size_t capacity = std::max(capacity_ * 2, needed);
  std::unique_ptr<char[]> bytes(new char[capacity]);  // not value-initialized: no zero fill
  if (keep > 0) std::memcpy(bytes.get(), data_, keep);
  heap_ = std::move(bytes);
  data_ = heap_.get();
  capacity_ = capacity;
}

namespace {

// How many bytes the well-formed UTF-8 sequence at text[at] takes (Unicode 15, table 3-7), or,
// when it is not well formed, 0 and in `bad_at` the offset where it stops: the lead byte itself
// (at) when it cannot start a sequence, the first byte that cannot continue it, or text.size()
// when the text ends inside it. REQUIRES: text[at] >= 0x80.
size_t Utf8SequenceLength(std::string_view text, size_t at, size_t* bad_at) {
  const auto lead = static_cast<unsigned char>(text[at]);
  size_t continuations = 0;
  unsigned char second_min = 0x80;
  unsigned char second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    continuations = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    continuations = 2;
    if (lead == 0xE0) second_min = 0xA0;  // no overlong form
    if (lead == 0xED) second_max = 0x9F;  // no surrogate
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    continuations = 3;
    if (lead == 0xF0) second_min = 0x90;  // no overlong form
    if (lead == 0xF4) second_max = 0x8F;  // nothing above U+10FFFF
  } else {
    *bad_at = at;  // a continuation byte, an overlong lead (C0, C1) or F5..FF
    return 0;
  }
  for (size_t i = 1; i <= continuations; ++i) {
    if (at + i >= text.size()) {
      *bad_at = text.size();
      return 0;
    }
    const auto next = static_cast<unsigned char>(text[at + i]);
    const unsigned char min = i == 1 ? second_min : 0x80;
    const unsigned char max = i == 1 ? second_max : 0xBF;
    if (next < min || next > max) {
      *bad_at = at + i;
      return 0;
    }
  }
  return continuations + 1;
}

// What follows the backslash of an ASCII byte JSON escapes with a letter (0: as \u00XX instead).
constexpr std::array<char, 128> kShortEscape = [] {
  std::array<char, 128> letter{};
  letter['"'] = '"';
  letter['\\'] = '\\';
  letter['\b'] = 'b';
  letter['\t'] = 't';
  letter['\n'] = 'n';
  letter['\f'] = 'f';
  letter['\r'] = 'r';
  return letter;
}();

// Strings up to this long are copied as they are scanned (eight bytes a step, then byte by byte
// from the first word that holds a byte to escape); longer ones are scanned, then copied with
// memcpy.
constexpr size_t kCopyWhileScanning = 32;

// The bytes a JSON string holds as they are: printable ASCII but the quote and the backslash.
constexpr std::array<bool, 256> kPlainByte = [] {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x80; ++c) plain[c] = c != '"' && c != '\\';
  return plain;
}();

// Whether any of the eight bytes of `word` is not a plain byte (kPlainByte): below 0x20, the
// quote, the backslash, or 0x80 and up. Bit Twiddling Hacks' hasless and haszero, exact as a
// yes or no: a string is scanned eight bytes a step up to its first such byte.
inline bool AnyNotPlain(uint64_t word) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  const uint64_t quote = word ^ (kOnes * '"');
  const uint64_t backslash = word ^ (kOnes * '\\');
  const uint64_t below_space = (word - kOnes * 0x20) & ~word;
  const uint64_t is_quote = (quote - kOnes) & ~quote;
  const uint64_t is_backslash = (backslash - kOnes) & ~backslash;
  return ((word | below_space | is_quote | is_backslash) & kHigh) != 0;
}

}  // namespace

void AppendJsonString(JsonOut& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  size_t i = 0;
  if (text.size() <= kCopyWhileScanning) {
    // The common case, a short plain string (a key, a name, a value): each byte copied as it is
    // checked, without a memcpy call; at the first byte to escape, on below with what is copied.
    char* at = out.Room(text.size() + 2);
    at[0] = '"';
    for (uint64_t word; i + 8 <= text.size(); i += 8) {
      std::memcpy(&word, text.data() + i, 8);
      if (AnyNotPlain(word)) break;
      std::memcpy(at + 1 + i, &word, 8);
    }
    while (i < text.size() && kPlainByte[static_cast<unsigned char>(text[i])]) {
      at[1 + i] = text[i];
      ++i;
    }
    if (i == text.size()) {
      at[1 + i] = '"';
      out.Advance(i + 2);
      return;
    }
    out.Advance(1 + i);
  } else {
    for (uint64_t word; i + 8 <= text.size(); i += 8) {
      std::memcpy(&word, text.data() + i, 8);
      if (AnyNotPlain(word)) break;
    }
    while (i < text.size() && kPlainByte[static_cast<unsigned char>(text[i])]) ++i;
    if (i == text.size()) return AppendJsonPlain(out, text);  // nothing to escape
    out.Put('"');
    out.Put(text.substr(0, i));
  }
  // Room for the rest at its longest (six bytes, \u00XX, for each byte), written through a
  // pointer: a string with many bytes to escape (a binary record value) costs no bound check and
  // no call per byte.
  char* const first = out.Room(6 * (text.size() - i) + 1);
  char* at = first;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (kPlainByte[c]) {
      *at++ = static_cast<char>(c);
      ++i;
      continue;
    }
    if (c < 0x80) {
      *at++ = '\\';
      if (const char letter = kShortEscape[c]; letter != 0) {
        *at++ = letter;
      } else {
        std::memcpy(at, "u00", 3);
        at[3] = kHex[c >> 4];
        at[4] = kHex[c & 0xF];
        at += 5;
      }
      ++i;
      continue;
    }
    size_t bad_at = 0;
    const size_t length = Utf8SequenceLength(text, i, &bad_at);
    if (length > 0) {
      std::memcpy(at, text.data() + i, length);  // kept as is
      at += length;
      i += length;
    } else {
      // One U+FFFD for the bytes read so far (three bytes, for at least one read); a byte that
      // could not continue a sequence is read again as the start of the next (a lead byte that
      // starts nothing is dropped).
      std::memcpy(at, kReplacement.data(), kReplacement.size());
      at += kReplacement.size();
      i = bad_at == i ? i + 1 : bad_at;
    }
  }
  *at++ = '"';
  out.Advance(static_cast<size_t>(at - first));
}

namespace {

template <class Json>
void AppendValue(JsonOut& out, const Json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::number_unsigned:
      return AppendJsonInteger(out,
                               value.template get_ref<const typename Json::number_unsigned_t&>());
    case nlohmann::json::value_t::number_integer:
      return AppendJsonInteger(out,
                               value.template get_ref<const typename Json::number_integer_t&>());
    case nlohmann::json::value_t::boolean:
      return out.Put(value.template get<bool>() ? "true" : "false");
    case nlohmann::json::value_t::string:
      return AppendJsonString(out, value.template get_ref<const typename Json::string_t&>());
    case nlohmann::json::value_t::null:
      return out.Put("null");
    case nlohmann::json::value_t::array: {
      out.Put('[');
      bool first = true;
      for (const Json& element : value.template get_ref<const typename Json::array_t&>()) {
        if (!first) out.Put(',');
        first = false;
        AppendValue(out, element);
      }
      return out.Put(']');
    }
    case nlohmann::json::value_t::object: {
      out.Put('{');
      bool first = true;
      for (const auto& [key, element] : value.template get_ref<const typename Json::object_t&>()) {
        if (!first) out.Put(',');
        first = false;
        AppendJsonString(out, key);
        out.Put(':');
        AppendValue(out, element);
      }
      return out.Put('}');
    }
    default:
      return out.Put(value.dump(-1, ' ', false, Json::error_handler_t::replace));
  }
}

}  // namespace

void AppendJsonValue(JsonOut& out, const nlohmann::json& value) { AppendValue(out, value); }

void AppendJsonValue(JsonOut& out, const nlohmann::ordered_json& value) { AppendValue(out, value); }

}  // namespace ksim
