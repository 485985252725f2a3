// Kafka's releases and ApiVersion values (kafka_version.h). The ApiVersion table is
// kafka.api.ApiVersion at the release tags 0.10.0.1 ... 2.1.0 (versionNameMap / allVersions,
// case objects KAFKA_x_y_IVn with their messageFormatVersion).
#include "core/config/kafka_version.h"

#include <array>
#include <vector>

#include "core/base/check.h"

namespace ksim {
namespace {

using R = KafkaRelease;

constexpr std::array<KafkaRelease, 9> kReleases = {
    R::k0_8_2, R::k0_10_0, R::k0_10_1, R::k0_10_2, R::k0_11_0, R::k1_0, R::k1_1, R::k2_0, R::k2_1};
constexpr std::array<std::string_view, 9> kReleaseNames = {
    "0.8.2", "0.10.0", "0.10.1", "0.10.2", "0.11.0", "1.0", "1.1", "2.0", "2.1"};

constexpr std::array<ApiVersion, 20> kApiVersions = {{
    // 0.8.2 has no kafka.api.ApiVersion (0.9.0 brought it): its broker writes as "0.8.2" does.
    {"0.8.0", R::k0_8_2, 0, 0},
    {"0.8.1", R::k0_8_2, 0, 1},
    {"0.8.2", R::k0_8_2, 0, 2},
    {"0.9.0", R::k0_10_0, 0, 3},
    {"0.10.0-IV0", R::k0_10_0, 1, 4},  // KIP-31/32: the message format with timestamps
    {"0.10.0-IV1", R::k0_10_0, 1, 5},
    {"0.10.1-IV0", R::k0_10_1, 1, 6},
    {"0.10.1-IV1", R::k0_10_1, 1, 7},
    {"0.10.1-IV2", R::k0_10_1, 1, 8},
    {"0.10.2-IV0", R::k0_10_2, 1, 9},
    {"0.11.0-IV0", R::k0_11_0, 2, 10},  // KIP-98: record batch v2
    {"0.11.0-IV1", R::k0_11_0, 2, 11},
    {"0.11.0-IV2", R::k0_11_0, 2, 12},  // KIP-101: OffsetsForLeaderEpoch between brokers
    {"1.0-IV0", R::k1_0, 2, 13},
    {"1.1-IV0", R::k1_1, 2, 14},
    {"2.0-IV0", R::k2_0, 2, 15},
    {"2.0-IV1", R::k2_0, 2, 16},  // KIP-279: OffsetsForLeaderEpoch v1
    {"2.1-IV0", R::k2_1, 2, 17},
    {"2.1-IV1", R::k2_1, 2, 18},
    {"2.1-IV2", R::k2_1, 2, 19},
}};

size_t IndexOf(KafkaRelease release) { return static_cast<size_t>(release); }

// The first `parts` dot-separated parts of `text` ("0.10.0.1", 3 -> "0.10.0").
std::string_view Leading(std::string_view text, int parts) {
  size_t at = 0;
  for (int i = 0; i < parts; ++i) {
    at = text.find('.', at);
    if (at == std::string_view::npos) return text;
    if (i + 1 < parts) ++at;
  }
  return text.substr(0, at);
}

bool IsDigits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// "0.10.0.1" -> true: every part after the release's own is a number.
bool OnlyPatchAfter(std::string_view text, std::string_view release) {
  if (text.size() == release.size()) return true;
  if (text[release.size()] != '.') return false;
  std::string_view rest = text.substr(release.size() + 1);
  while (true) {
    const size_t dot = rest.find('.');
    if (!IsDigits(rest.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    rest = rest.substr(dot + 1);
  }
}

}  // namespace

std::string_view KafkaReleaseName(KafkaRelease release) {
  KSIM_CHECK(IndexOf(release) < kReleaseNames.size());
  return kReleaseNames[IndexOf(release)];
}

std::span<const KafkaRelease> KafkaReleases() { return kReleases; }
static_assert(kReleases.back() == kLatestKafkaRelease);

std::string KafkaReleaseList() {
  std::string list;
  for (KafkaRelease release : kReleases) {
    if (!list.empty()) list += ", ";
    list += KafkaReleaseName(release);
  }
  return list;
}

Result<KafkaRelease> ParseKafkaRelease(std::string_view text) {
  const int parts = text.starts_with("0.") ? 3 : 2;
  const std::string_view release = Leading(text, parts);
  if (release == "2.0" && text != "2.0" && text != "2.0.0") {
    return Status(
        Errc::kInvalidArgument,
        "Kafka " + std::string(text) +
            " is not a release ksim models: 2.0.1 took KAFKA-7128, KAFKA-7414 and KAFKA-7415 from "
            "2.1, so ksim models 2.0.0 as \"2.0\" and those fixes as \"2.1\"");
  }
  for (KafkaRelease candidate : kReleases) {
    if (KafkaReleaseName(candidate) == release && OnlyPatchAfter(text, release)) return candidate;
  }
  return Status(Errc::kInvalidArgument, "Kafka \"" + std::string(text) +
                                            "\" is not a release ksim models; it models " +
                                            KafkaReleaseList());
}

std::span<const ApiVersion> ApiVersions() { return kApiVersions; }

const ApiVersion& LatestApiVersion(KafkaRelease release) {
  const ApiVersion* latest = nullptr;
  for (const ApiVersion& version : ApiVersions()) {
    if (version.since <= release) latest = &version;
  }
  KSIM_CHECK(latest != nullptr);
  return *latest;
}

const ApiVersion* FindApiVersion(std::string_view text, KafkaRelease release) {
  const std::string_view name = Leading(text, text.starts_with("0.") ? 3 : 2);
  const ApiVersion* found = nullptr;
  for (const ApiVersion& version : ApiVersions()) {
    if (version.since > release) break;
    // "0.10.0" names the last of 0.10.0-IVn (ApiVersion's versionNameMap).
    const std::string_view short_name = version.name.substr(0, version.name.find("-IV"));
    if (version.name == name || short_name == name) found = &version;
  }
  return found;
}

}  // namespace ksim
