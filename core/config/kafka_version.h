// The Kafka releases ksim behaves as (a scenario's "kafka_version"; docs/versions.md), and
// Kafka's ApiVersion: the values of inter.broker.protocol.version and log.message.format.version
// (kafka.api.ApiVersion), each with the message format (magic) it writes.
//
// A KafkaRelease is a feature release: "0.10.0" stands for 0.10.0.0 and 0.10.0.1 (the seed
// installs kafka_2.10-0.10.0.1), "2.0" for 2.0.0. Releases compare in time order, and a behaviour
// that Kafka changed in release R is the new one at every release >= R. ksim models the releases
// in the enum; another one ("0.9.0", "2.0.1", which backported 2.1's KAFKA-7414/7415) is refused
// with the list of those it models. 0.8.2 is the oldest: before ApiVersion existed (0.9.0), so
// its broker has neither ApiVersion key; internally it writes as "0.8.2" (magic 0).
//
// ApiVersion names follow Kafka's ApiVersion.apply: the first three dot-separated parts for 0.x
// ("0.10.0.1" is "0.10.0"), two from 1.0 on ("2.0.1" is "2.0"), and a bare release names its
// latest internal version ("0.10.0" is 0.10.0-IV1). A broker of release R accepts the versions
// its own ApiVersion knows: those introduced at R or earlier.
// Pure functions and constant tables; any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/base/status.h"

namespace ksim {

enum class KafkaRelease : uint8_t {
  k0_8_2,  // 0.8.2.x: no group coordinator, message format v0, the broker's acks=N (KIP-1)
  k0_10_0,
  k0_10_1,
  k0_10_2,
  k0_11_0,
  k1_0,
  k1_1,
  k2_0,
  k2_1,
};

// The seed's release (kafka_2.10-0.10.0.1): what a scenario without "kafka_version" runs as.
inline constexpr KafkaRelease kSeedKafkaRelease = KafkaRelease::k0_10_0;

// The newest release ksim models.
inline constexpr KafkaRelease kLatestKafkaRelease = KafkaRelease::k2_1;

// "0.8.2", "0.10.0", "2.0".
std::string_view KafkaReleaseName(KafkaRelease release);
// Every modelled release, oldest first.
std::span<const KafkaRelease> KafkaReleases();
// "0.8.2, 0.10.0, ..., 2.1": for error messages.
std::string KafkaReleaseList();
// A release as "0.8.2", "0.8.2.2", "0.10.0", "0.10.0.1", "1.1", "1.1.1", "2.0" or "2.0.0".
// kInvalidArgument saying which releases ksim models for anything else (and why for 2.0.1).
Result<KafkaRelease> ParseKafkaRelease(std::string_view text);

// One of Kafka's ApiVersion values.
struct ApiVersion {
  std::string_view name;  // "0.10.0-IV1", "0.9.0", "2.0-IV1"
  // The first modelled release that knows it: 0.8.x at 0.8.2 (whose broker has no ApiVersion
  // setting, but writes as 0.8.2 does: magic 0), 0.9.0 at 0.10.0.
  KafkaRelease since;
  int8_t magic;  // the message format it writes: 0, 1 or 2
  int id;        // Kafka's ordering: a higher id is a newer version
};

// Every ApiVersion of the modelled releases, by id.
std::span<const ApiVersion> ApiVersions();
// ApiVersion.latestVersion of a broker of `release`: the default of both keys.
const ApiVersion& LatestApiVersion(KafkaRelease release);
// ApiVersion.apply(text) on a broker of `release`: nullptr when that broker does not know it.
const ApiVersion* FindApiVersion(std::string_view text, KafkaRelease release);

}  // namespace ksim
