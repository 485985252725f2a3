#include "core/protocol/api_versions.h"

#include <array>

#include "core/base/check.h"

namespace ksim {
namespace {

// {api key, min, max}. What ksim's codec implements (docs/protocol.md has the table with the
// clients): every version from v0 to the last whose fields the message structs carry. Produce
// v0-2 and Fetch v0-3 carry message sets (v0/v1), which the log converts on append and the gateway
// down-converts on the way out, as Kafka's brokers do; ListOffsets v0 answers one offset; the
// ZooKeeper-era OffsetCommit v0 and OffsetFetch v0 are served by the group coordinator, as v1
// (docs/protocol.md says what differs). Fetch stops at v7 (fetch sessions: ksim answers session
// id 0, "no session"), ListOffsets at v2, Metadata at 2.1's v7 (the leader epoch the struct
// carries), the group APIs at Kafka 2.0's versions.
constexpr std::array<ApiVersionEntry, 13> kServed = {{
    {0, 0, 7},   // Produce
    {1, 0, 7},   // Fetch
    {2, 0, 2},   // ListOffsets
    {3, 0, 7},   // Metadata
    {8, 0, 4},   // OffsetCommit
    {9, 0, 4},   // OffsetFetch
    {10, 0, 2},  // FindCoordinator (GroupCoordinator before 0.11)
    {11, 0, 3},  // JoinGroup
    {12, 0, 2},  // Heartbeat
    {13, 0, 2},  // LeaveGroup
    {14, 0, 2},  // SyncGroup
    {18, 0, 2},  // ApiVersions
    {22, 0, 1},  // InitProducerId
}};

// A 0.10.0.1 broker's ApiVersions answer: ApiVersionsResponse.createApiVersionsResponse, one entry
// per ApiKeys value with Protocol.MIN_VERSIONS and CURR_VERSION (0.10.0.1:clients/.../protocol/
// Protocol.java, the *_REQUEST arrays; ControlledShutdown's v0 is null there, so it starts at 1).
constexpr std::array<ApiVersionEntry, 19> kKafka0100 = {{
    {0, 0, 2},   // Produce
    {1, 0, 2},   // Fetch
    {2, 0, 0},   // ListOffsets (Offsets)
    {3, 0, 1},   // Metadata
    {4, 0, 0},   // LeaderAndIsr
    {5, 0, 0},   // StopReplica
    {6, 0, 2},   // UpdateMetadata
    {7, 1, 1},   // ControlledShutdown
    {8, 0, 2},   // OffsetCommit
    {9, 0, 1},   // OffsetFetch
    {10, 0, 0},  // GroupCoordinator
    {11, 0, 0},  // JoinGroup
    {12, 0, 0},  // Heartbeat
    {13, 0, 0},  // LeaveGroup
    {14, 0, 0},  // SyncGroup
    {15, 0, 0},  // DescribeGroups
    {16, 0, 0},  // ListGroups
    {17, 0, 0},  // SaslHandshake
    {18, 0, 0},  // ApiVersions
}};

// The latest version of each served key at each other release (-1: the release has no such key):
// Produce, Fetch, ListOffsets, Metadata, OffsetCommit, OffsetFetch, FindCoordinator, JoinGroup,
// Heartbeat, LeaveGroup, SyncGroup, ApiVersions, InitProducerId, in kServed's order. Sources:
// 0.8.2.2's kafka.api.*Request objects (`CurrentVersion`) and KafkaApis.handle (no JoinGroup or
// Heartbeat handler, no ApiVersions: a request for either closes the connection); Protocol.java's
// *_REQUEST arrays at 0.10.1.0, 0.10.2.0 and 0.11.0.0; each request class's schemaVersions() at
// 1.0.0, 1.1.0, 2.0.0 and 2.1.0. Every key starts at v0 at these releases.
struct ReleaseMax {
  KafkaRelease release;
  std::array<int16_t, 13> max;
};
constexpr std::array<ReleaseMax, 8> kOtherReleases = {{
    {KafkaRelease::k0_8_2, {0, 0, 0, 0, 1, 1, 0, -1, -1, -1, -1, -1, -1}},
    {KafkaRelease::k0_10_1, {2, 3, 1, 2, 2, 1, 0, 1, 0, 0, 0, 0, -1}},
    {KafkaRelease::k0_10_2, {2, 3, 1, 2, 2, 2, 0, 1, 0, 0, 0, 0, -1}},
    {KafkaRelease::k0_11_0, {3, 5, 2, 4, 3, 3, 1, 2, 1, 1, 1, 1, 0}},
    {KafkaRelease::k1_0, {5, 6, 2, 5, 3, 3, 1, 2, 1, 1, 1, 1, 0}},
    {KafkaRelease::k1_1, {5, 7, 2, 5, 3, 3, 1, 2, 1, 1, 1, 1, 0}},
    {KafkaRelease::k2_0, {6, 8, 3, 6, 4, 4, 2, 3, 2, 2, 2, 2, 1}},
    {KafkaRelease::k2_1, {7, 10, 4, 7, 6, 5, 2, 3, 2, 2, 2, 2, 1}},
}};

// Each other release's advertisement, built once: kServed cut to the release's ranges (at 0.8.2
// what the broker accepts; it has no ApiVersions to advertise them).
struct Advertised {
  std::array<ApiVersionEntry, 13> entries{};
  size_t size = 0;
};

const std::array<Advertised, 8>& OtherAdvertised() {
  static const std::array<Advertised, 8> tables = [] {
    std::array<Advertised, 8> out{};
    for (size_t r = 0; r < kOtherReleases.size(); ++r) {
      for (size_t k = 0; k < kServed.size(); ++k) {
        const int16_t max = kOtherReleases[r].max[k];
        if (max < kServed[k].min_version) continue;
        ApiVersionEntry entry = kServed[k];
        if (max < entry.max_version) entry.max_version = max;
        out[r].entries[out[r].size++] = entry;
      }
    }
    return out;
  }();
  return tables;
}

const ApiVersionEntry* Find(std::span<const ApiVersionEntry> entries, int16_t api_key) {
  for (const ApiVersionEntry& entry : entries) {
    if (entry.api_key == api_key) return &entry;
  }
  return nullptr;
}

}  // namespace

std::span<const ApiVersionEntry> ServedApiVersions() { return kServed; }

const ApiVersionEntry* FindServedApi(int16_t api_key) { return Find(kServed, api_key); }

std::span<const ApiVersionEntry> AdvertisedApiVersions(KafkaRelease release) {
  if (release == KafkaRelease::k0_10_0) return kKafka0100;
  for (size_t r = 0; r < kOtherReleases.size(); ++r) {
    if (kOtherReleases[r].release == release) {
      const Advertised& table = OtherAdvertised()[r];
      return std::span<const ApiVersionEntry>(table.entries.data(), table.size);
    }
  }
  KSIM_CHECK(false && "AdvertisedApiVersions: a release without a table");
  return {};
}

const ApiVersionEntry* AcceptedApi(int16_t api_key, KafkaRelease release) {
  const ApiVersionEntry* served = FindServedApi(api_key);
  if (served == nullptr) return nullptr;
  return Find(AdvertisedApiVersions(release), api_key);
}

std::string_view ApiKeyName(int16_t api_key) {
  switch (api_key) {
    case 0:
      return "Produce";
    case 1:
      return "Fetch";
    case 2:
      return "ListOffsets";
    case 3:
      return "Metadata";
    case 4:
      return "LeaderAndIsr";
    case 5:
      return "StopReplica";
    case 6:
      return "UpdateMetadata";
    case 7:
      return "ControlledShutdown";
    case 8:
      return "OffsetCommit";
    case 9:
      return "OffsetFetch";
    case 10:
      return "FindCoordinator";
    case 11:
      return "JoinGroup";
    case 12:
      return "Heartbeat";
    case 13:
      return "LeaveGroup";
    case 14:
      return "SyncGroup";
    case 15:
      return "DescribeGroups";
    case 16:
      return "ListGroups";
    case 17:
      return "SaslHandshake";
    case 18:
      return "ApiVersions";
    case 22:
      return "InitProducerId";
    case 23:
      return "OffsetForLeaderEpoch";
    default:
      return "";
  }
}

}  // namespace ksim
