#include "core/base/java_numbers.h"

#include <charconv>
#include <limits>

namespace ksim {

bool ParseJavaInteger(std::string_view text, int64_t low, int64_t high, int64_t& out) {
  // Java accepts a leading '+' or '-'; from_chars only '-'.
  if (!text.empty() && text.front() == '+') {
    text.remove_prefix(1);
    if (!text.empty() && text.front() == '-') return false;
  }
  if (text.empty()) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size() && out >= low && out <= high;
}

bool ParseJavaInt32(std::string_view text, int32_t& out) {
  int64_t wide = 0;
  if (!ParseJavaInteger(text, std::numeric_limits<int32_t>::min(),
                        std::numeric_limits<int32_t>::max(), wide)) {
    return false;
  }
  out = static_cast<int32_t>(wide);
  return true;
}

bool ParseJavaInt64(std::string_view text, int64_t& out) {
  return ParseJavaInteger(text, std::numeric_limits<int64_t>::min(),
                          std::numeric_limits<int64_t>::max(), out);
}

}  // namespace ksim
