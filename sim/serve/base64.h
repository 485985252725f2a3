// Base64 (RFC 4648, standard alphabet, with padding): how a trace carries the bytes a real
// client sent (ext_data's `data`), so that a replay can feed them back. Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/base/bytes.h"

namespace ksim::sim {

std::string Base64Encode(ByteView bytes);
// nullopt for text that is not padded standard base64.
std::optional<Bytes> Base64Decode(std::string_view text);

}  // namespace ksim::sim
