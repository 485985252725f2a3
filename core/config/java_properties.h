// A reader for Java .properties text, the syntax of Kafka's server.properties, following
// java.util.Properties.load: '#' or '!' starts a comment line; a key ends at the first unescaped
// '=', ':' or blank, and blanks around that separator are skipped (so "log.dirs= /x" has the
// value "/x"); the rest of the line, trailing blanks included, is the value; a line ending in an
// odd number of backslashes continues on the next line, whose leading blanks are dropped;
// escapes \t \n \r \f and \uXXXX (surrogate pairs combined) are decoded in keys and values, and
// any other escaped character stands for itself. Lines end at \n, \r or \r\n. A later key
// replaces an earlier one for the caller, but every entry is returned in file order.
//
// Differences from Java: bytes outside ASCII pass through unchanged (UTF-8 in, UTF-8 out) where
// Java would read ISO-8859-1, and \uXXXX is written out as UTF-8. A malformed \uXXXX escape is
// kInvalidConfig naming "<source>:<line>" (Java throws IllegalArgumentException). Pure function.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"

namespace ksim {

struct PropertyEntry {
  std::string key;
  std::string value;
  int line_number = 0;  // 1-based line where the entry (its logical line) starts
};

// `source_name` ("server.properties") prefixes error messages.
Result<std::vector<PropertyEntry>> ParseJavaProperties(std::string_view text,
                                                       std::string_view source_name);

}  // namespace ksim
