// java.util.Properties.load, reimplemented (see java_properties.h): LineReader joins natural
// lines into logical lines, load0 splits key from value, loadConvert decodes escapes.
#include "core/config/java_properties.h"

#include <cstdint>

namespace ksim {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\f'; }

struct LogicalLine {
  std::string text;  // continuation backslashes removed, continuation blanks skipped
  int line_number = 0;
};

// LineReader.readLine: one logical line per entry; comment and blank lines are skipped.
std::vector<LogicalLine> ReadLogicalLines(std::string_view text) {
  std::vector<LogicalLine> lines;
  size_t pos = 0;
  int line_number = 0;
  while (pos < text.size()) {
    LogicalLine logical;
    bool continuing = false;
    while (pos < text.size()) {
      // One natural line: [pos, end), terminated by \n, \r or \r\n.
      size_t end = pos;
      while (end < text.size() && text[end] != '\n' && text[end] != '\r') ++end;
      std::string_view natural = text.substr(pos, end - pos);
      pos = end;
      if (pos < text.size()) {
        const bool crlf = text[pos] == '\r' && pos + 1 < text.size() && text[pos + 1] == '\n';
        pos += crlf ? 2 : 1;
      }
      ++line_number;

      size_t start = 0;
      while (start < natural.size() && IsBlank(natural[start])) ++start;
      natural.remove_prefix(start);
      if (!continuing) {
        if (natural.empty()) continue;                                   // a blank line
        if (natural.front() == '#' || natural.front() == '!') continue;  // comments never continue
        logical.line_number = line_number;
      }
      size_t backslashes = 0;
      while (backslashes < natural.size() && natural[natural.size() - 1 - backslashes] == '\\') {
        ++backslashes;
      }
      if (backslashes % 2 == 1) {
        logical.text.append(natural.substr(0, natural.size() - 1));
        continuing = true;
        continue;
      }
      logical.text.append(natural);
      continuing = false;
      break;
    }
    if (logical.line_number > 0) lines.push_back(std::move(logical));
  }
  return lines;
}

void AppendUtf8(uint32_t code_point, std::string& out) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

bool ParseHex4(std::string_view text, uint32_t& out) {
  if (text.size() < 4) return false;
  out = 0;
  for (size_t i = 0; i < 4; ++i) {
    const char c = text[i];
    uint32_t digit = 0;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      return false;
    }
    out = out * 16 + digit;
  }
  return true;
}

// loadConvert: decodes escapes in one key or value. False on a malformed \uXXXX.
bool Unescape(std::string_view text, std::string& out) {
  uint32_t high_surrogate = 0;  // a \uD800-\uDBFF waiting for its low half, or 0
  auto flush_surrogate = [&] {
    if (high_surrogate != 0) AppendUtf8(0xFFFD, out);  // unpaired: the replacement character
    high_surrogate = 0;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      flush_surrogate();
      if (text[i] != '\\') out += text[i];  // a final lone backslash is dropped, as in Java
      continue;
    }
    const char escaped = text[++i];
    if (escaped == 'u') {
      uint32_t unit = 0;
      if (!ParseHex4(text.substr(i + 1), unit)) return false;
      i += 4;
      if (unit >= 0xD800 && unit <= 0xDBFF) {
        flush_surrogate();
        high_surrogate = unit;
      } else if (unit >= 0xDC00 && unit <= 0xDFFF && high_surrogate != 0) {
        AppendUtf8(0x10000 + ((high_surrogate - 0xD800) << 10) + (unit - 0xDC00), out);
        high_surrogate = 0;
      } else {
        flush_surrogate();
        AppendUtf8(unit >= 0xD800 && unit <= 0xDFFF ? 0xFFFD : unit, out);
      }
      continue;
    }
    flush_surrogate();
    switch (escaped) {
      case 't':
        out += '\t';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 'f':
        out += '\f';
        break;
      default:
        out += escaped;
        break;
    }
  }
  flush_surrogate();
  return true;
}

}  // namespace

Result<std::vector<PropertyEntry>> ParseJavaProperties(std::string_view text,
                                                       std::string_view source_name) {
  std::vector<PropertyEntry> entries;
  for (const LogicalLine& line : ReadLogicalLines(text)) {
    const std::string_view buffer = line.text;
    // load0: the key runs to the first unescaped separator or blank.
    size_t key_length = 0;
    size_t value_start = buffer.size();
    bool has_separator = false;
    bool preceding_backslash = false;
    while (key_length < buffer.size()) {
      const char c = buffer[key_length];
      if ((c == '=' || c == ':') && !preceding_backslash) {
        value_start = key_length + 1;
        has_separator = true;
        break;
      }
      if (IsBlank(c) && !preceding_backslash) {
        value_start = key_length + 1;
        break;
      }
      preceding_backslash = c == '\\' ? !preceding_backslash : false;
      ++key_length;
    }
    // Blanks, then at most one '=' or ':' if none ended the key, then blanks again.
    while (value_start < buffer.size()) {
      const char c = buffer[value_start];
      if (!IsBlank(c)) {
        if (!has_separator && (c == '=' || c == ':')) {
          has_separator = true;
        } else {
          break;
        }
      }
      ++value_start;
    }
    PropertyEntry entry;
    entry.line_number = line.line_number;
    if (!Unescape(buffer.substr(0, key_length), entry.key) ||
        !Unescape(buffer.substr(value_start), entry.value)) {
      return Status(Errc::kInvalidConfig, std::string(source_name) + ":" +
                                              std::to_string(line.line_number) +
                                              ": Malformed \\uxxxx encoding.");
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace ksim
