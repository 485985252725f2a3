// The client-facing APIs ksim's brokers serve over Kafka's wire protocol, and the versions of each
// (the answer to ApiVersions, KIP-35), per Kafka release.
//
// - ServedApiVersions(): what ksim implements, whatever the release: the versions
//   core/wire/codec.h encodes and decodes. The ranges start at v0 and stop where a later version
//   adds behaviour ksim does not have (JoinGroup v4's MEMBER_ID_REQUIRED, flexible versions with
//   tagged fields) or a field the message structs (core/protocol/messages.h) do not carry.
// - AdvertisedApiVersions(release): what a broker of that release answers to ApiVersions. At 0.10.0
//   exactly what a 0.10.0.1 broker answers (every ApiKeys entry, with Protocol.MIN_VERSIONS and
//   CURR_VERSION), the keys ksim does not serve (DescribeGroups, the inter-broker ones) included;
//   at a later release the keys ksim serves that the release has, each range the release's cut to
//   ksim's. At 0.8.2, which has no ApiVersions (0.10.0, KIP-35), the keys and versions its broker
//   parses: Produce, Fetch, ListOffsets, Metadata v0, OffsetCommit and OffsetFetch v0-v1,
//   GroupCoordinator (ConsumerMetadata) v0. docs/protocol.md ("Served over the wire") and
//   docs/versions.md have the tables and their sources.
// - AcceptedApi(key, release): the range a broker of `release` accepts from a client over the wire:
//   the advertised range when ksim also serves the key, else null.
// Constants only.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/config/kafka_version.h"
#include "core/protocol/messages.h"

namespace ksim {

// In api key order.
std::span<const ApiVersionEntry> ServedApiVersions();
// The served range of `api_key`, or null when the key is not served.
const ApiVersionEntry* FindServedApi(int16_t api_key);

// The ApiVersions answer of a broker of `release`, in api key order.
std::span<const ApiVersionEntry> AdvertisedApiVersions(KafkaRelease release);
// The range of `api_key` a broker of `release` accepts from a client: advertised and served by
// ksim. Null when the release has no such key or ksim does not serve it.
const ApiVersionEntry* AcceptedApi(int16_t api_key, KafkaRelease release);

// Kafka's name of an api key ("Produce", "ApiVersions"), or "" when ksim has no name for it.
std::string_view ApiKeyName(int16_t api_key);

}  // namespace ksim
