#include "core/base/text.h"

#include <cstdio>

namespace ksim {

std::string FormatSeconds(TimeUs t_us) {
  const bool negative = t_us < 0;
  // Magnitude in unsigned arithmetic, so that the most negative time has one too.
  const uint64_t magnitude =
      negative ? uint64_t{0} - static_cast<uint64_t>(t_us) : static_cast<uint64_t>(t_us);
  char buffer[48];
  std::snprintf(buffer, sizeof(buffer), "%s%llu.%03llu s", negative ? "-" : "",
                static_cast<unsigned long long>(magnitude / 1'000'000),
                static_cast<unsigned long long>((magnitude / 1000) % 1000));
  return buffer;
}

}  // namespace ksim
