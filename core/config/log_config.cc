// Kafka version strings for message.format.version. See core/config/log_config.h.
#include "core/config/log_config.h"

#include <charconv>
#include <string>
#include <vector>

namespace ksim {
namespace {

// "12" -> 12; anything but digits -> nullopt.
std::optional<int> Number(std::string_view text) {
  int value = 0;
  if (text.empty() || text.size() > 3) return std::nullopt;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<int8_t> MessageFormatMagic(std::string_view version) {
  // ApiVersion.apply: split at '.', keep 3 segments for 0.x and 2 otherwise; the last kept
  // segment may carry an inter-version suffix "-IV<n>".
  std::vector<std::string_view> segments;
  for (size_t start = 0;;) {
    const size_t dot = version.find('.', start);
    segments.push_back(version.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  const size_t kept = !segments.empty() && segments[0] == "0" ? 3 : 2;
  if (segments.size() < kept) return std::nullopt;
  std::string_view last = segments[kept - 1];
  if (const size_t dash = last.find("-IV"); dash != std::string_view::npos) {
    if (!Number(last.substr(dash + 3))) return std::nullopt;
    last = last.substr(0, dash);
  }
  std::vector<int> numbers;
  for (size_t i = 0; i < kept; ++i) {
    const std::optional<int> n = Number(i + 1 == kept ? last : segments[i]);
    if (!n) return std::nullopt;
    numbers.push_back(*n);
  }
  if (numbers[0] == 0) {
    const int minor = numbers[1], patch = numbers[2];
    if (minor == 8 && patch <= 2) return int8_t{0};
    if (minor == 9 && patch == 0) return int8_t{0};
    if (minor == 10 && patch <= 2) return int8_t{1};
    if (minor == 11 && patch == 0) return int8_t{2};
    return std::nullopt;
  }
  if (numbers[0] >= 1 && numbers[0] <= 3 && numbers[1] <= 9) return int8_t{2};
  return std::nullopt;
}

}  // namespace ksim
