#include "tools/args.h"

#include <charconv>
#include <system_error>

namespace ksim::tools {

Result<uint64_t> ParseSeed(const std::string& text) {
  uint64_t seed = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seed);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return Status(Errc::kInvalidArgument, "--seed '" + text +
                                              "' is not a seed: expected an integer 0 to " +
                                              std::to_string(UINT64_MAX));
  }
  return seed;
}

}  // namespace ksim::tools
