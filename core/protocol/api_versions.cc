#include "core/protocol/api_versions.h"

#include <array>

namespace ksim {
namespace {

// {api key, min, max}. Why each range (docs/protocol.md has the table with the clients):
// Produce from v3 (record batch v2, the only format ksim stores); Fetch from v4 (isolation level,
// last stable offset: the fields FetchResponse carries) to v7 (fetch sessions: ksim answers
// session id 0, "no session"); ListOffsets v1 (one offset per partition) to v2; OffsetFetch from
// v1 (offsets kept in Kafka, not ZooKeeper); the rest up to Kafka 2.0's versions, Metadata to
// 2.1's v7 (the leader epoch the struct carries).
constexpr std::array<ApiVersionEntry, 13> kServed = {{
    {0, 3, 7},   // Produce
    {1, 4, 7},   // Fetch
    {2, 1, 2},   // ListOffsets
    {3, 0, 7},   // Metadata
    {8, 2, 4},   // OffsetCommit
    {9, 1, 4},   // OffsetFetch
    {10, 0, 2},  // FindCoordinator
    {11, 0, 3},  // JoinGroup
    {12, 0, 2},  // Heartbeat
    {13, 0, 2},  // LeaveGroup
    {14, 0, 2},  // SyncGroup
    {18, 0, 2},  // ApiVersions
    {22, 0, 1},  // InitProducerId
}};

}  // namespace

std::span<const ApiVersionEntry> ServedApiVersions() { return kServed; }

const ApiVersionEntry* FindServedApi(int16_t api_key) {
  for (const ApiVersionEntry& entry : kServed) {
    if (entry.api_key == api_key) return &entry;
  }
  return nullptr;
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
