// The release switch's vocabulary: release names as a scenario writes them, Kafka's ApiVersion
// parsing (ApiVersion.apply at the release tags), each release's broker keys and defaults, and
// docs/versions.md's tables against the code's (neither may change without the other).
#include "core/config/kafka_version.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/config/server_config.h"

namespace ksim {
namespace {

using R = KafkaRelease;

TEST(KafkaVersionTest, ReleasesParseFromFeatureAndPatchNames) {
  EXPECT_EQ(ParseKafkaRelease("0.8.2").value(), R::k0_8_2);
  EXPECT_EQ(ParseKafkaRelease("0.8.2.1").value(), R::k0_8_2);
  EXPECT_EQ(ParseKafkaRelease("0.8.2.2").value(), R::k0_8_2);
  EXPECT_EQ(ParseKafkaRelease("0.10.0").value(), R::k0_10_0);
  EXPECT_EQ(ParseKafkaRelease("0.10.0.1").value(), R::k0_10_0);  // the seed's
  EXPECT_EQ(ParseKafkaRelease("0.10.2.1").value(), R::k0_10_2);
  EXPECT_EQ(ParseKafkaRelease("0.11.0").value(), R::k0_11_0);
  EXPECT_EQ(ParseKafkaRelease("1.1").value(), R::k1_1);
  EXPECT_EQ(ParseKafkaRelease("1.1.1").value(), R::k1_1);
  EXPECT_EQ(ParseKafkaRelease("2.0.0").value(), R::k2_0);
  EXPECT_EQ(ParseKafkaRelease("2.1").value(), R::k2_1);
  for (KafkaRelease release : KafkaReleases()) {
    EXPECT_EQ(ParseKafkaRelease(KafkaReleaseName(release)).value(), release);
  }
}

TEST(KafkaVersionTest, UnmodelledReleasesAreRefusedWithTheModelledOnes) {
  for (std::string_view text : {"0.9.0", "0.8.1", "0.8.1.1", "0.8", "0.8.3", "0.10", "0.10.3",
                                "3.0", "", "0.10.0.x", "0.10.0-IV1", "1.1.", "1"}) {
    Result<KafkaRelease> parsed = ParseKafkaRelease(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_NE(
        parsed.status().message().find("0.8.2, 0.10.0, 0.10.1, 0.10.2, 0.11.0, 1.0, 1.1, 2.0, 2.1"),
        std::string::npos)
        << parsed.status().message();
  }
  Result<KafkaRelease> backport = ParseKafkaRelease("2.0.1");
  ASSERT_FALSE(backport.ok());
  EXPECT_NE(backport.status().message().find("KAFKA-7415"), std::string::npos);
}

TEST(KafkaVersionTest, ReleasesAreInTimeOrder) {
  const auto releases = KafkaReleases();
  for (size_t i = 1; i < releases.size(); ++i) EXPECT_LT(releases[i - 1], releases[i]);
}

TEST(KafkaVersionTest, ApiVersionApplyAsKafkaReadsIt) {
  const auto name = [](std::string_view text, KafkaRelease release) -> std::string {
    const ApiVersion* v = FindApiVersion(text, release);
    return v == nullptr ? "none" : std::string(v->name);
  };
  EXPECT_EQ(name("0.10.0", R::k0_10_0), "0.10.0-IV1");  // a release: its last internal version
  EXPECT_EQ(name("0.10.0.1", R::k0_10_0), "0.10.0-IV1");
  EXPECT_EQ(name("0.10.0-IV0", R::k0_10_0), "0.10.0-IV0");
  EXPECT_EQ(name("0.9.0.1", R::k0_10_0), "0.9.0");
  EXPECT_EQ(name("0.8.2.2", R::k0_10_0), "0.8.2");
  EXPECT_EQ(name("0.11.0", R::k0_11_0), "0.11.0-IV2");
  EXPECT_EQ(name("2.0", R::k2_1), "2.0-IV1");
  EXPECT_EQ(name("2.0.1", R::k2_0), "2.0-IV1");  // two parts from 1.0 on
  // A broker does not know the versions of later releases.
  EXPECT_EQ(name("0.11.0", R::k0_10_0), "none");
  EXPECT_EQ(name("0.10.1-IV0", R::k0_10_0), "none");
  EXPECT_EQ(name("2.1-IV0", R::k2_0), "none");
  EXPECT_EQ(name("0.10", R::k2_1), "none");
  EXPECT_EQ(name("banana", R::k2_1), "none");
  // The message format of each.
  EXPECT_EQ(FindApiVersion("0.9.0", R::k0_10_0)->magic, 0);
  EXPECT_EQ(FindApiVersion("0.10.0", R::k0_10_0)->magic, 1);
  EXPECT_EQ(FindApiVersion("0.10.2", R::k0_10_2)->magic, 1);
  EXPECT_EQ(FindApiVersion("0.11.0-IV0", R::k0_11_0)->magic, 2);
}

TEST(KafkaVersionTest, LatestApiVersionIsEachReleasesDefault) {
  EXPECT_EQ(LatestApiVersion(R::k0_8_2).name, "0.8.2");  // no ApiVersion key: it writes magic 0
  EXPECT_EQ(LatestApiVersion(R::k0_8_2).magic, 0);
  EXPECT_EQ(LatestApiVersion(R::k0_10_0).name, "0.10.0-IV1");
  EXPECT_EQ(LatestApiVersion(R::k0_10_1).name, "0.10.1-IV2");
  EXPECT_EQ(LatestApiVersion(R::k0_10_2).name, "0.10.2-IV0");
  EXPECT_EQ(LatestApiVersion(R::k0_11_0).name, "0.11.0-IV2");
  EXPECT_EQ(LatestApiVersion(R::k1_0).name, "1.0-IV0");
  EXPECT_EQ(LatestApiVersion(R::k1_1).name, "1.1-IV0");
  EXPECT_EQ(LatestApiVersion(R::k2_0).name, "2.0-IV1");
  EXPECT_EQ(LatestApiVersion(R::k2_1).name, "2.1-IV2");
  for (size_t i = 1; i < ApiVersions().size(); ++i) {
    EXPECT_LT(ApiVersions()[i - 1].id, ApiVersions()[i].id);
    EXPECT_LE(ApiVersions()[i - 1].since, ApiVersions()[i].since);
  }
}

TEST(KafkaVersionTest, BrokerDefaultsFollowTheRelease) {
  const BrokerConfig at_0100 = MakeBrokerConfig({}, R::k0_10_0).value();
  const BrokerConfig at_0110 = MakeBrokerConfig({}, R::k0_11_0).value();
  const BrokerConfig at_21 = MakeBrokerConfig({}, R::k2_1).value();
  EXPECT_TRUE(at_0100.unclean_leader_election_enable);  // KIP-106 came in 0.11
  EXPECT_FALSE(at_0110.unclean_leader_election_enable);
  EXPECT_FALSE(at_21.unclean_leader_election_enable);
  EXPECT_EQ(at_0100.group_initial_rebalance_delay_ms, 0);  // KIP-134 came in 0.11
  EXPECT_EQ(at_0110.group_initial_rebalance_delay_ms, 3000);
  EXPECT_EQ(at_0100.group_max_session_timeout_ms, 300000);  // KAFKA-3636, 0.10.0.0
  EXPECT_EQ(at_0100.inter_broker_protocol_version.name, "0.10.0-IV1");
  EXPECT_EQ(at_0100.log_message_format_version.magic, 1);
  EXPECT_EQ(at_21.log_message_format_version.name, "2.1-IV2");
  EXPECT_EQ(at_21.release, R::k2_1);
  // The release survives overrides, and its keys stay its own.
  const BrokerConfig overridden =
      ApplyConfigOverrides(at_0110, {{"num.partitions", "3"}}, "test").value();
  EXPECT_EQ(overridden.release, R::k0_11_0);
  EXPECT_FALSE(overridden.unclean_leader_election_enable);
}

TEST(KafkaVersionTest, AKeyOfALaterReleaseIsUnknownBeforeIt) {
  ConfigOriginals originals;
  originals["group.initial.rebalance.delay.ms"] = ConfigSetting{"100", "cluster.config", 1};
  const BrokerConfig at_0100 = MakeBrokerConfig(originals, R::k0_10_0).value();
  ASSERT_EQ(at_0100.warnings.size(), 1u);
  EXPECT_EQ(at_0100.warnings[0],
            "cluster.config: The configuration group.initial.rebalance.delay.ms = 100 was "
            "supplied but isn't a known config.");
  EXPECT_EQ(at_0100.group_initial_rebalance_delay_ms, 0);
  const BrokerConfig at_0110 = MakeBrokerConfig(originals, R::k0_11_0).value();
  EXPECT_TRUE(at_0110.warnings.empty());
  EXPECT_EQ(at_0110.group_initial_rebalance_delay_ms, 100);
  EXPECT_EQ(FirstReleaseWithBrokerKey("group.initial.rebalance.delay.ms"), R::k0_11_0);
  EXPECT_EQ(FirstReleaseWithBrokerKey("num.partitions"), R::k0_8_2);
  EXPECT_EQ(FirstReleaseWithBrokerKey("listeners"), R::k0_10_0);
  EXPECT_EQ(FirstReleaseWithBrokerKey("no.such.key"), std::nullopt);
}

// 0.8.2.2's KafkaConfig lacks the keys 0.9.0 and 0.10.0 brought (KIP-2 listeners, KIP-13 quotas,
// ApiVersion, KIP-32 timestamps, ...): set at 0.8.2, each is Kafka's unknown-key warning (a
// scenario's exit 2), and the broker keeps writing message format v0.
// KIP-16 removed 0.8.2's replica.lag.max.messages in 0.9.0: a 0.8.2 broker reads it (4000 by
// default); a later one does not know it (Kafka's warning; a scenario's exit 2 names the removal).
TEST(KafkaVersionTest, Kafka082sReplicaLagMaxMessagesIsRemovedIn090) {
  EXPECT_EQ(MakeBrokerConfig({}, R::k0_8_2).value().replica_lag_max_messages, 4000);
  ConfigOriginals originals;
  originals["replica.lag.max.messages"] = ConfigSetting{"100", "cluster.config", 1};
  const BrokerConfig at_082 = MakeBrokerConfig(originals, R::k0_8_2).value();
  EXPECT_TRUE(at_082.warnings.empty());
  EXPECT_EQ(at_082.replica_lag_max_messages, 100);
  EXPECT_TRUE(BrokerHasKey("replica.lag.max.messages", R::k0_8_2));
  for (R release : {R::k0_10_0, R::k0_11_0, R::k2_1}) {
    EXPECT_FALSE(BrokerHasKey("replica.lag.max.messages", release));
    EXPECT_EQ(MakeBrokerConfig(originals, release).value().warnings.size(), 1u);
  }
  const BrokerKeyChange* removal = BrokerKeyRemoval("replica.lag.max.messages");
  ASSERT_NE(removal, nullptr);
  EXPECT_EQ(BrokerKeyChangeFrom(*removal), "0.9.0");
  EXPECT_EQ(BrokerKeyRemoval("replica.lag.time.max.ms"), nullptr);
  EXPECT_EQ(BrokerKeySince("replica.lag.max.messages"), std::nullopt);
}

TEST(KafkaVersionTest, Kafka082LacksTheKeysOf09And010) {
  ConfigOriginals originals;
  originals["log.message.format.version"] = ConfigSetting{"0.8.2", "cluster.config", 1};
  originals["group.min.session.timeout.ms"] = ConfigSetting{"100", "cluster.config", 2};
  const BrokerConfig at_082 = MakeBrokerConfig(originals, R::k0_8_2).value();
  ASSERT_EQ(at_082.warnings.size(), 2u);
  EXPECT_EQ(at_082.warnings[0],
            "cluster.config: The configuration log.message.format.version = 0.8.2 was supplied "
            "but isn't a known config.");
  EXPECT_EQ(at_082.group_min_session_timeout_ms, 6000);  // not used
  EXPECT_EQ(at_082.log_message_format_version.magic, 0);
  EXPECT_EQ(at_082.DefaultLogConfig().message_format_magic, 0);
  EXPECT_FALSE(at_082.DefaultLogConfig().time_index);
  const BrokerConfig at_0100 = MakeBrokerConfig(originals, R::k0_10_0).value();
  EXPECT_TRUE(at_0100.warnings.empty());
  EXPECT_EQ(at_0100.group_min_session_timeout_ms, 100);
  EXPECT_EQ(BrokerKeySince("listeners"), "0.9.0");
  EXPECT_EQ(BrokerKeySince("log.message.format.version"), "0.10.0");
  EXPECT_EQ(BrokerKeySince("group.initial.rebalance.delay.ms"), "0.11.0");
  EXPECT_EQ(BrokerKeySince("num.partitions"), std::nullopt);
  const std::vector<std::string_view> names = BrokerConfigNames(R::k0_8_2);
  EXPECT_EQ(std::count(names.begin(), names.end(), "listeners"), 0);
  EXPECT_EQ(std::count(names.begin(), names.end(), "num.partitions"), 1);
  EXPECT_TRUE(BrokerHasKey("listeners", R::k0_10_0));
  EXPECT_FALSE(BrokerHasKey("listeners", R::k0_8_2));
}

TEST(KafkaVersionTest, ProtocolAndFormatVersionsAreCheckedAsKafkaDoes) {
  auto make = [](std::vector<std::pair<std::string, std::string>> settings, KafkaRelease release) {
    ConfigOriginals originals;
    int order = 0;
    for (auto& [key, value] : settings) {
      originals[key] = ConfigSetting{value, "server.properties:" + std::to_string(++order), order};
    }
    return MakeBrokerConfig(originals, release);
  };
  // An upgrade's first step: new binaries speaking the old protocol and format.
  Result<BrokerConfig> upgrading =
      make({{"inter.broker.protocol.version", "0.10.0"}, {"log.message.format.version", "0.10.0"}},
           R::k0_11_0);
  ASSERT_TRUE(upgrading.ok()) << upgrading.status().ToString();
  EXPECT_EQ(upgrading->log_message_format_version.magic, 1);
  // A format above the protocol.
  Result<BrokerConfig> above =
      make({{"inter.broker.protocol.version", "0.10.0"}, {"log.message.format.version", "0.11.0"}},
           R::k0_11_0);
  ASSERT_FALSE(above.ok());
  EXPECT_EQ(above.status().message(),
            "server.properties:2: log.message.format.version 0.11.0 cannot be used when "
            "inter.broker.protocol.version is set to 0.10.0");
  // A version the broker's release does not know.
  Result<BrokerConfig> unknown = make({{"inter.broker.protocol.version", "0.11.0"}}, R::k0_10_0);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find(
                "server.properties:1: Invalid value 0.11.0 for configuration "
                "inter.broker.protocol.version: Version `0.11.0` is not a valid version (valid at "
                "Kafka 0.10.0: 0.8.0, 0.8.1, 0.8.2, 0.9.0, 0.10.0-IV0, 0.10.0-IV1"),
            std::string::npos)
      << unknown.status().message();
}

// --- docs/versions.md --------------------------------------------------------------------------

std::string ReadDoc() {
  std::ifstream in(std::string(KSIM_SOURCE_DIR) + "/docs/versions.md");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first `width` cells of every body row of the table under the "### `heading`" line, the
// first without its backquotes.
std::vector<std::vector<std::string>> TableRows(const std::string& doc, const std::string& heading,
                                                size_t width) {
  std::vector<std::vector<std::string>> rows;
  const size_t at = doc.find("\n### " + heading + "\n");
  if (at == std::string::npos) return rows;
  std::istringstream lines(doc.substr(at + 1));
  std::string line;
  std::getline(lines, line);
  int row = 0;
  while (std::getline(lines, line)) {
    if (line.starts_with("#")) break;
    if (!line.starts_with("| ")) {
      if (row > 0) break;
      continue;
    }
    if (row++ < 2) continue;
    std::vector<std::string> cells;
    std::istringstream parts(line.substr(1));
    std::string cell;
    while (std::getline(parts, cell, '|')) {
      const size_t first = cell.find_first_not_of(' ');
      const size_t last = cell.find_last_not_of(' ');
      cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
    }
    if (cells.size() < width) continue;
    cells.resize(width);
    std::string& name = cells[0];
    if (name.size() >= 2 && name.front() == '`' && name.back() == '`') {
      name = name.substr(1, name.size() - 2);
    }
    rows.push_back(std::move(cells));
  }
  return rows;
}

TEST(VersionsDocTest, BrokerSettingsTableIsBrokerKeyChanges) {
  std::vector<std::vector<std::string>> code;
  for (const BrokerKeyChange& change : BrokerKeyChanges()) {
    code.push_back({std::string(change.key), std::string(BrokerKeyChangeFrom(change))});
  }
  EXPECT_EQ(TableRows(ReadDoc(), "Broker settings", 2), code);
}

TEST(VersionsDocTest, ApiVersionTableIsApiVersions) {
  std::vector<std::vector<std::string>> code;
  for (const ApiVersion& version : ApiVersions()) {
    code.push_back({std::string(version.name), std::string(KafkaReleaseName(version.since)),
                    std::to_string(version.magic)});
  }
  EXPECT_EQ(TableRows(ReadDoc(), "Inter-broker protocol and message format versions", 3), code);
}

}  // namespace
}  // namespace ksim
