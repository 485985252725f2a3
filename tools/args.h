// Argument parsing shared by the `ksim` subcommands: each error is kInvalidArgument naming the
// option, the text given and what would be valid.
#pragma once

#include <cstdint>
#include <string>

#include "core/base/status.h"

namespace ksim::tools {

// `--seed`: a decimal integer 0 to 2^64-1, the whole text.
Result<uint64_t> ParseSeed(const std::string& text);

}  // namespace ksim::tools
