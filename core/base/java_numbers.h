// Java's Integer.parseInt / Long.parseLong, as Kafka's configuration and checkpoint readers apply
// them to text: an optional '+' or '-', decimal digits, no blanks, within range. The config
// parser (core/config/config_def.h) and the checkpoint files (core/storage/checkpoint_file.h)
// both read numbers this way. Pure functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace ksim {

// Parses `text` into `out` when it is an integer within [low, high]; false (out unspecified)
// otherwise.
bool ParseJavaInteger(std::string_view text, int64_t low, int64_t high, int64_t& out);
bool ParseJavaInt32(std::string_view text, int32_t& out);
bool ParseJavaInt64(std::string_view text, int64_t& out);

}  // namespace ksim
