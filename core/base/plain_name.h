// PlainName: a name known, when the program is compiled, to need no escaping as a JSON string.
// Header-only, no state; no JSON library (core/base/trace_names.h includes it).
#pragma once

#include <string_view>

namespace ksim {

// A name whose JSON string is itself in quotes, checked when the program is compiled: ASCII
// letters, digits and `_ - . / :` only. The trace's event and field names
// (core/base/trace_names.h) are these, so an event writes its keys without scanning them. As a
// string_view it is its text.
struct PlainName : std::string_view {
  consteval explicit PlainName(const char* text) : std::string_view(text) {
    for (const char c : *this) {
      const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' || c == '/' ||
                         c == ':';
      if (!plain) NotAPlainName();  // not a constant expression: the name does not compile
    }
  }

 private:
  static void NotAPlainName() {}
};

}  // namespace ksim
