// The client-facing APIs ksim's brokers serve over Kafka's wire protocol, and the versions of each
// (the answer to ApiVersions, KIP-35). core/wire/codec.h encodes and decodes exactly these; the
// broker answers an ApiVersionsRequest with this table. The ranges are Kafka 2.0's where the
// message structs (core/protocol/messages.h) carry every field of the version, and stop where a
// later version adds behaviour ksim does not have (JoinGroup v4's MEMBER_ID_REQUIRED, flexible
// versions with tagged fields). docs/protocol.md, "Served over the wire", says which client
// negotiates which version. Constants only.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/protocol/messages.h"

namespace ksim {

// In api key order.
std::span<const ApiVersionEntry> ServedApiVersions();
// The served range of `api_key`, or null when the key is not served.
const ApiVersionEntry* FindServedApi(int16_t api_key);
// Kafka's name of an api key ("Produce", "ApiVersions"), or "" when ksim has no name for it.
std::string_view ApiKeyName(int16_t api_key);

}  // namespace ksim
