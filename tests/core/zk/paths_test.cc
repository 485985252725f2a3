// Kafka's ZooKeeper paths and JSON, byte for byte against what Kafka 0.10 writes (examples taken
// from real znodes and Kafka's own code), decoding of what Kafka accepts, and corruption (never a
// crash) for anything else. Also the path helpers of the Coordination seam.
#include "core/zk/paths.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/zk/coordination.h"

namespace ksim::zk {
namespace {

TEST(ZkPathsTest, PathsAreKafkas) {
  EXPECT_EQ(BrokerIdPath(BrokerId(1)), "/brokers/ids/1");
  EXPECT_EQ(TopicPath("frbook"), "/brokers/topics/frbook");
  EXPECT_EQ(TopicPartitionsPath("frbook"), "/brokers/topics/frbook/partitions");
  EXPECT_EQ(TopicPartitionPath("frbook", PartitionId(3)), "/brokers/topics/frbook/partitions/3");
  EXPECT_EQ(PartitionStatePath("frbook", PartitionId(0)),
            "/brokers/topics/frbook/partitions/0/state");
  EXPECT_EQ(DeleteTopicPath("frbook"), "/admin/delete_topics/frbook");
  EXPECT_EQ(TopicConfigPath("frbook"), "/config/topics/frbook");
  EXPECT_EQ(IsrChangeNotificationSequentialPath(), "/isr_change_notification/isr_change_");
  EXPECT_EQ(kControllerPath, "/controller");
  EXPECT_EQ(kControllerEpochPath, "/controller_epoch");
  EXPECT_EQ(CommonPaths(), (std::vector<std::string>{
                               "/consumers", "/brokers/ids", "/brokers/topics", "/config/changes",
                               "/config/topics", "/config/clients", "/admin/delete_topics",
                               "/brokers/seqid", "/isr_change_notification"}));
  for (const std::string& path : CommonPaths()) EXPECT_TRUE(ValidateZnodePath(path).ok()) << path;

  EXPECT_EQ(*ParseBrokerIdNode("1001"), BrokerId(1001));
  EXPECT_EQ(ParseBrokerIdNode("x1").status(), Errc::kCorruption);
  EXPECT_EQ(ParseBrokerIdNode("").status(), Errc::kCorruption);
  EXPECT_EQ(*ParsePartitionNode("0"), PartitionId(0));
  EXPECT_EQ(ParsePartitionNode("-1").status(), Errc::kCorruption);
  EXPECT_EQ(ParsePartitionNode("99999999999").status(), Errc::kCorruption);
}

TEST(ZkPathsTest, BrokerRegistrationIsWrittenAsKafka0100Does) {
  BrokerRegistration broker;
  broker.host = "hadoop01";
  broker.port = 9092;
  broker.endpoints = {"PLAINTEXT://hadoop01:9092"};
  broker.timestamp_ms = 1475066113563;
  const std::string json = EncodeBrokerRegistration(broker);
  EXPECT_EQ(
      json,
      R"({"jmx_port":-1,"timestamp":"1475066113563","endpoints":["PLAINTEXT://hadoop01:9092"],)"
      R"("host":"hadoop01","version":3,"port":9092})");
  Result<BrokerRegistration> decoded = DecodeBrokerRegistration(json);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, broker);

  broker.rack = "/default-rack";
  EXPECT_EQ(
      EncodeBrokerRegistration(broker),
      R"({"jmx_port":-1,"timestamp":"1475066113563","endpoints":["PLAINTEXT://hadoop01:9092"],)"
      R"("host":"hadoop01","version":3,"port":9092,"rack":"/default-rack"})");
  EXPECT_EQ(*DecodeBrokerRegistration(EncodeBrokerRegistration(broker)), broker);
}

TEST(ZkPathsTest, BrokerRegistrationDecodesEveryVersionKafkaAccepts) {
  // A real 0.10 znode (with rack).
  Result<BrokerRegistration> v3 = DecodeBrokerRegistration(
      R"({"jmx_port":-1,"timestamp":"1571666399659","endpoints":["PLAINTEXT://c1198-node4:6667"],)"
      R"("host":"c1198-node4","version":3,"port":6667,"rack":"/default-rack"})");
  ASSERT_TRUE(v3.ok());
  EXPECT_EQ(v3->port, 6667);
  EXPECT_EQ(v3->rack, "/default-rack");
  EXPECT_EQ(v3->timestamp_ms, 1571666399659);
  // Version 1 (0.8): host and port only; one PLAINTEXT endpoint follows from them.
  Result<BrokerRegistration> v1 = DecodeBrokerRegistration(
      R"({ "jmx_port": 9999, "timestamp":"1403061899859", "version": 1, "host": "192.168.1.148", "port": 9092 })");
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_EQ(v1->endpoints, (std::vector<std::string>{"PLAINTEXT://192.168.1.148:9092"}));
  EXPECT_EQ(v1->jmx_port, 9999);
  // Version 2+ needs endpoints; host/port are optional there. A null rack is no rack.
  Result<BrokerRegistration> v2 =
      DecodeBrokerRegistration(R"({"version":2,"endpoints":["SSL://h:9093"],"rack":null})");
  ASSERT_TRUE(v2.ok());
  EXPECT_FALSE(v2->rack.has_value());

  for (const char* bad :
       {R"({"version":2,"host":"h","port":9092})", R"({"version":0})", R"({"host":"h","port":1})",
        R"({"version":"3","endpoints":[]})", R"({"version":1,"host":"h"})",
        R"({"version":1,"host":"h","port":"1"})", R"({"version":3,"endpoints":[1]})",
        R"({"version":3,"endpoints":[],"timestamp":"soon"})",
        R"({"version":3,"endpoints":[],"rack":7})", "[1,2]", "", "{", "null"}) {
    EXPECT_EQ(DecodeBrokerRegistration(bad).status(), Errc::kCorruption) << bad;
  }
}

TEST(ZkPathsTest, ReplicaAssignmentRoundTripsInPartitionOrder) {
  ReplicaAssignment assignment;
  for (int p = 0; p < 11; ++p) {
    assignment[PartitionId(p)] = {BrokerId(p % 3 + 1), BrokerId((p + 1) % 3 + 1)};
  }
  const std::string json = EncodeReplicaAssignment(assignment);
  EXPECT_TRUE(json.starts_with(R"({"version":1,"partitions":{"0":[1,2],"1":[2,3],")")) << json;
  EXPECT_NE(json.find(R"("9":[1,2],"10":[2,3]}})"), std::string::npos) << json;
  EXPECT_EQ(*DecodeReplicaAssignment(json), assignment);
  EXPECT_EQ(EncodeReplicaAssignment({{PartitionId(0), {BrokerId(1), BrokerId(2), BrokerId(3)}}}),
            R"({"version":1,"partitions":{"0":[1,2,3]}})");

  // The wiki's example, with spaces; and a topic node without partitions reads as empty.
  Result<ReplicaAssignment> spaced =
      DecodeReplicaAssignment(R"({ "version": 1, "partitions": {"0": [0, 1, 3] } })");
  ASSERT_TRUE(spaced.ok());
  EXPECT_EQ(spaced->at(PartitionId(0)),
            (std::vector<BrokerId>{BrokerId(0), BrokerId(1), BrokerId(3)}));
  EXPECT_TRUE(DecodeReplicaAssignment(R"({"version":1})")->empty());

  for (const char* bad :
       {R"({"version":1,"partitions":{"x":[1]}})", R"({"version":1,"partitions":{"-1":[1]}})",
        R"({"version":1,"partitions":{"0":["1"]}})", R"({"version":1,"partitions":{"0":1}})",
        R"({"version":1,"partitions":[[1]]})", R"({"version":1,"partitions":{"0":[1.5]}})"}) {
    EXPECT_EQ(DecodeReplicaAssignment(bad).status(), Errc::kCorruption) << bad;
  }
}

// The partition state and the assignment are written as text and read back first as the exact
// text written; any other text is read as JSON. The two readings agree: a text read again with a
// space after its brace (which only the JSON reading takes) gives the same result or the same
// error (fuzz/zk_data_fuzzer.cc checks the same on arbitrary text).
template <class T, class Decode>
void ExpectReadAsJsonReadsIt(std::string_view text, Decode decode) {
  const Result<T> read = decode(text);
  const Result<T> read_as_json = decode("{ " + std::string(text.substr(1)));
  ASSERT_EQ(read.ok(), read_as_json.ok()) << text;
  if (read.ok()) {
    EXPECT_EQ(*read, *read_as_json) << text;
  } else {
    EXPECT_EQ(read.status().code(), read_as_json.status().code()) << text;
  }
}

TEST(ZkPathsTest, TheTextWrittenIsReadAsItsJsonWouldBe) {
  std::mt19937 random(7);
  auto id = [&random] { return static_cast<int32_t>(random()) >> (random() % 32); };
  for (int i = 0; i < 200; ++i) {
    PartitionState state;
    state.controller_epoch = ControllerEpoch(id());
    state.leader = BrokerId(i % 7 == 0 ? -1 : id());
    state.leader_epoch = LeaderEpoch(id());
    for (uint32_t n = random() % 5; n > 0; --n) state.isr.push_back(BrokerId(id()));
    const std::string text = EncodePartitionState(state);
    // What nlohmann writes of the same object, in Kafka's key order.
    nlohmann::ordered_json json;
    json["controller_epoch"] = state.controller_epoch.value();
    json["leader"] = state.leader.value();
    json["version"] = 1;
    json["leader_epoch"] = state.leader_epoch.value();
    json["isr"] = nlohmann::ordered_json::array();
    for (BrokerId broker : state.isr) json["isr"].push_back(broker.value());
    EXPECT_EQ(text, json.dump());
    EXPECT_EQ(*DecodePartitionState(text), state);
    ExpectReadAsJsonReadsIt<PartitionState>(text, DecodePartitionState);

    ReplicaAssignment assignment;
    for (uint32_t n = random() % 6; n > 0; --n) {
      assignment[PartitionId(static_cast<int32_t>(random() % 2000))] = state.isr;
    }
    const std::string assigned = EncodeReplicaAssignment(assignment);
    EXPECT_EQ(*DecodeReplicaAssignment(assigned), assignment);
    ExpectReadAsJsonReadsIt<ReplicaAssignment>(assigned, DecodeReplicaAssignment);
  }
  // Near the text written, but not it: read as JSON, whatever that makes of them.
  for (const char* text : {
           R"({"controller_epoch":01,"leader":1,"version":1,"leader_epoch":0,"isr":[1]})",
           R"({"controller_epoch":-0,"leader":1,"version":1,"leader_epoch":0,"isr":[1]})",
           R"({"controller_epoch":1,"leader":1,"version":2,"leader_epoch":0,"isr":[1]})",
           R"({"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,]})",
           R"({"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1]} )",
           R"({"controller_epoch":1,"leader":2147483648,"version":1,"leader_epoch":0,"isr":[]})",
           R"({"controller_epoch":1,"leader":1,"leader":2,"version":1,"leader_epoch":0,"isr":[]})",
           R"({"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1e0]})",
       }) {
    ExpectReadAsJsonReadsIt<PartitionState>(text, DecodePartitionState);
  }
  for (const char* text : {
           R"({"version":1,"partitions":{"1":[1],"0":[2]}})",
           R"({"version":1,"partitions":{"0":[1],"0":[2]}})",
           R"({"version":1,"partitions":{"00":[1]}})",
           R"({"version":1,"partitions":{"-1":[1]}})",
           R"({"version":1,"partitions":{"0":[1],}})",
           R"({"version":1,"partitions":{"0":[-2147483649]}})",
       }) {
    ExpectReadAsJsonReadsIt<ReplicaAssignment>(text, DecodeReplicaAssignment);
  }
}

TEST(ZkPathsTest, PartitionStateIsWrittenAsLeaderAndIsrZkData) {
  PartitionState state;
  state.leader = BrokerId(1);
  state.leader_epoch = LeaderEpoch(0);
  state.isr = {BrokerId(1), BrokerId(2), BrokerId(3)};
  state.controller_epoch = ControllerEpoch(1);
  EXPECT_EQ(EncodePartitionState(state),
            R"({"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2,3]})");
  EXPECT_EQ(*DecodePartitionState(EncodePartitionState(state)), state);

  // As seen on a real cluster; an offline partition has leader -1.
  Result<PartitionState> real = DecodePartitionState(
      R"({"controller_epoch":15,"leader":2,"version":1,"leader_epoch":25,"isr":[2,1]})");
  ASSERT_TRUE(real.ok());
  EXPECT_EQ(real->leader, BrokerId(2));
  EXPECT_EQ(real->leader_epoch, LeaderEpoch(25));
  EXPECT_EQ(real->controller_epoch, ControllerEpoch(15));
  EXPECT_EQ(real->isr, (std::vector<BrokerId>{BrokerId(2), BrokerId(1)}));
  EXPECT_EQ(DecodePartitionState(
                R"({"controller_epoch":1,"leader":-1,"version":1,"leader_epoch":3,"isr":[]})")
                ->leader,
            kNoLeader);

  for (const char* bad :
       {R"({"controller_epoch":1,"version":1,"leader_epoch":0,"isr":[1]})",
        R"({"controller_epoch":1,"leader":1,"leader_epoch":0,"isr":"1"})",
        R"({"controller_epoch":1,"leader":1,"leader_epoch":0,"isr":[true]})",
        R"({"controller_epoch":1,"leader":3000000000,"leader_epoch":0,"isr":[]})",
        R"({"controller_epoch":1,"leader":-3000000000,"leader_epoch":0,"isr":[]})",
        R"({"controller_epoch":1.0,"leader":1,"leader_epoch":0,"isr":[]})"}) {
    EXPECT_EQ(DecodePartitionState(bad).status(), Errc::kCorruption) << bad;
  }
}

TEST(ZkPathsTest, ControllerAndEpoch) {
  const std::string json = EncodeControllerRegistration({BrokerId(1001), 1571666282268});
  EXPECT_EQ(json, R"({"version":1,"brokerid":1001,"timestamp":"1571666282268"})");
  Result<ControllerRegistration> decoded = DecodeControllerRegistration(json);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, (ControllerRegistration{BrokerId(1001), 1571666282268}));
  // Before 0.8.2 the node held the bare id; Kafka 0.10 still reads it.
  EXPECT_EQ(DecodeControllerRegistration("3")->broker_id, BrokerId(3));
  EXPECT_EQ(
      DecodeControllerRegistration(R"({"version":1,"brokerid":2,"timestamp":"x"})")->timestamp_ms,
      0);
  for (const char* bad : {"", "abc", R"({"version":1})", R"({"brokerid":"1"})", "1.5"}) {
    EXPECT_EQ(DecodeControllerRegistration(bad).status(), Errc::kCorruption) << bad;
  }

  EXPECT_EQ(EncodeControllerEpoch(ControllerEpoch(1)), "1");
  EXPECT_EQ(*DecodeControllerEpoch("17"), ControllerEpoch(17));
  for (const char* bad : {"", "x", "1.5", " 1", "99999999999"}) {
    EXPECT_EQ(DecodeControllerEpoch(bad).status(), Errc::kCorruption) << bad;
  }
}

TEST(ZkPathsTest, IsrChangeNotificationAndTopicConfig) {
  const std::vector<TopicAndPartition> changes = {{"t", PartitionId(0)},
                                                  {"frbook", PartitionId(2)}};
  EXPECT_EQ(EncodeIsrChangeNotification({{"t", PartitionId(0)}}),
            R"({"version":1,"partitions":[{"topic":"t","partition":0}]})");
  EXPECT_EQ(*DecodeIsrChangeNotification(EncodeIsrChangeNotification(changes)), changes);
  for (const char* bad : {R"({"version":1})", R"({"version":1,"partitions":[{"topic":"t"}]})",
                          R"({"version":1,"partitions":[{"topic":1,"partition":0}]})",
                          R"({"version":1,"partitions":[3]})"}) {
    EXPECT_EQ(DecodeIsrChangeNotification(bad).status(), Errc::kCorruption) << bad;
  }

  EXPECT_EQ(EncodeTopicConfig({{"min.insync.replicas", "2"}}),
            R"({"version":1,"config":{"min.insync.replicas":"2"}})");
  Result<TopicConfig> config = DecodeTopicConfig(
      R"({"version":1,"config":{"segment.bytes":"104857600","compression.type":"producer","cleanup.policy":"compact"}})");
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->at("cleanup.policy"), "compact");
  EXPECT_EQ(config->size(), 3u);
  EXPECT_TRUE(DecodeTopicConfig(R"({"version":1,"config":{}})")->empty());
  for (const char* bad : {R"({"version":2,"config":{}})", R"({"config":{}})", R"({"version":1})",
                          R"({"version":1,"config":{"retention.ms":86400000}})"}) {
    EXPECT_EQ(DecodeTopicConfig(bad).status(), Errc::kCorruption) << bad;
  }
}

// AdminUtils.changeTopicConfig's notification in each release's form; a broker reads all three,
// and a client quota's notification names no topic.
TEST(ZkPathsTest, TopicConfigChangeNotificationsOfEveryForm) {
  EXPECT_EQ(ConfigChangeSequentialPath(), "/config/changes/config_change_");
  EXPECT_EQ(EncodeTopicConfigChange(ConfigChangeFormat::kTopicName, "t"), R"("t")");
  EXPECT_EQ(EncodeTopicConfigChange(ConfigChangeFormat::kVersion1, "t"),
            R"({"version":1,"entity_type":"topics","entity_name":"t"})");
  EXPECT_EQ(EncodeTopicConfigChange(ConfigChangeFormat::kVersion2, "t"),
            R"({"version":2,"entity_path":"topics/t"})");
  for (ConfigChangeFormat format : {ConfigChangeFormat::kTopicName, ConfigChangeFormat::kVersion1,
                                    ConfigChangeFormat::kVersion2}) {
    Result<std::optional<std::string>> topic =
        DecodeConfigChange(EncodeTopicConfigChange(format, "orders.v2"));
    ASSERT_TRUE(topic.ok()) << topic.status().ToString();
    EXPECT_EQ(*topic, std::optional<std::string>("orders.v2"));
  }
  EXPECT_EQ(*DecodeConfigChange(R"({"version":1,"entity_type":"clients","entity_name":"c"})"),
            std::nullopt);
  EXPECT_EQ(*DecodeConfigChange(R"({"version":2,"entity_path":"users/u/clients/c"})"),
            std::nullopt);
  for (const char* bad : {R"({"version":3,"entity_path":"topics/t"})", R"({"version":2})",
                          R"({"version":1,"entity_type":"topics"})", R"([1])", "", "{"}) {
    EXPECT_EQ(DecodeConfigChange(bad).status(), Errc::kCorruption) << bad;
  }
  EXPECT_EQ(ConfigChangeNumber("config_change_0000000012"), 12);
  // ZooKeeper's sequence counter wraps to negative past 2^31 - 1; Kafka's toLong reads the sign.
  EXPECT_EQ(ConfigChangeNumber("config_change_-2147483648"), -2147483648);
  EXPECT_EQ(ConfigChangeNumber("config_change_"), std::nullopt);
  EXPECT_EQ(ConfigChangeNumber("config_change_12x"), std::nullopt);
  EXPECT_EQ(ConfigChangeNumber("isr_change_0000000001"), std::nullopt);
}

// Untrusted znode data: every prefix and every single-byte corruption of valid documents decodes
// to a value or kCorruption, never a crash or another error.
TEST(ZkPathsTest, DamagedDataIsCorruptionNeverACrash) {
  BrokerRegistration broker;
  broker.host = "h";
  broker.endpoints = {"PLAINTEXT://h:9092"};
  broker.rack = "r";
  const std::vector<std::string> documents = {
      EncodeBrokerRegistration(broker),
      EncodeReplicaAssignment({{PartitionId(0), {BrokerId(1), BrokerId(2)}}}),
      EncodePartitionState({BrokerId(1), LeaderEpoch(2), {BrokerId(1)}, ControllerEpoch(3)}),
      EncodeControllerRegistration({BrokerId(1), 5}),
      EncodeIsrChangeNotification({{"t", PartitionId(0)}}),
      EncodeTopicConfig({{"a", "b"}}),
      EncodeTopicConfigChange(ConfigChangeFormat::kVersion1, "t"),
      EncodeTopicConfigChange(ConfigChangeFormat::kVersion2, "t"),
  };
  auto check = [](const std::string& text) {
    const Errc codes[] = {
        DecodeBrokerRegistration(text).status().code(),
        DecodeReplicaAssignment(text).status().code(),
        DecodePartitionState(text).status().code(),
        DecodeControllerRegistration(text).status().code(),
        DecodeControllerEpoch(text).status().code(),
        DecodeIsrChangeNotification(text).status().code(),
        DecodeTopicConfig(text).status().code(),
        DecodeConfigChange(text).status().code(),
    };
    for (Errc code : codes) EXPECT_TRUE(code == Errc::kNone || code == Errc::kCorruption) << text;
  };
  for (const std::string& doc : documents) {
    for (size_t n = 0; n <= doc.size(); ++n) check(doc.substr(0, n));
    for (size_t i = 0; i < doc.size(); ++i) {
      for (unsigned char replacement : {'\0', '"', '}', '9', '\xff', '-'}) {
        std::string damaged = doc;
        damaged[i] = static_cast<char>(replacement);
        check(damaged);
      }
    }
  }
}

}  // namespace
}  // namespace ksim::zk

namespace ksim {
namespace {

TEST(CoordinationPathTest, ValidatesPathsAsZooKeeperDoes) {
  for (const char* good : {"/", "/a", "/a/b", "/brokers/ids/1", "/a.b", "/..a", "/a/...", "/a b"}) {
    EXPECT_TRUE(ValidateZnodePath(good).ok()) << good;
  }
  for (const char* bad :
       {"", "a", "/a/", "//", "/a//b", "/.", "/..", "/a/./b", "/a/../b", "/a\x01", "/a\x1e"}) {
    EXPECT_EQ(ValidateZnodePath(bad), Errc::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ValidateZnodePath(std::string_view("/a\0b", 4)), Errc::kInvalidArgument);
  // Sequential paths are checked with the counter appended: a trailing '/' is fine.
  EXPECT_TRUE(ValidateZnodePath("/a/", /*sequential=*/true).ok());
  EXPECT_TRUE(ValidateZnodePath("/", /*sequential=*/true).ok());
  EXPECT_EQ(ValidateZnodePath("/a//", /*sequential=*/true), Errc::kInvalidArgument);
  // The counter ends the last component: "/a/." is "/a/.1", but "/a/../" is "/a/../1".
  EXPECT_TRUE(ValidateZnodePath("/a/.", /*sequential=*/true).ok());
  EXPECT_TRUE(ValidateZnodePath("/a/..", /*sequential=*/true).ok());
  EXPECT_EQ(ValidateZnodePath("/a/../", /*sequential=*/true), Errc::kInvalidArgument);
  EXPECT_EQ(ValidateZnodePath("/a/./", /*sequential=*/true), Errc::kInvalidArgument);

  EXPECT_EQ(ParentPath("/a/b/c"), "/a/b");
  EXPECT_EQ(ParentPath("/a"), "/");
  EXPECT_EQ(NodeName("/a/b/c"), "c");
  EXPECT_EQ(NodeName("/"), "");
  EXPECT_EQ(*SequenceNumber("isr_change_0000000042"), 42);
  EXPECT_EQ(*SequenceNumber("0000000000"), 0);
  EXPECT_EQ(SequenceNumber("isr_change_42").status(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace ksim
