// The gateway of `ksim serve` on a real 3-broker scenario run, driven by a scripted client: the
// inputs a socket would bring (connect, bytes, close) are written as a served run's inputs at
// chosen virtual times and fed by the ReplayDriver, the answers captured. Then the run's trace
// is read back as a served run and replayed: the same bytes.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/trace_names.h"
#include "core/protocol/api_versions.h"
#include "core/record/legacy_record.h"
#include "core/record/record_batch.h"
#include "core/wire/codec.h"
#include "sim/check/history.h"
#include "sim/runner/runner.h"
#include "sim/scenario/loader.h"
#include "sim/serve/serve.h"

namespace ksim::sim {
namespace {

constexpr std::string_view kScenario = R"({
  "ksim": 1, "name": "gateway-test", "seed": 5, "duration_ms": 1000, "kafka_version": "2.1",
  "cluster": { "brokers": 3 },
  "topics": { "t": { "partitions": 1, "replication_factor": 3, "assignment": { "0": [1, 2, 3] } } },
  "final": { "drain_ms": 2000 }
})";

// Answers per connection, as a client would read them.
struct Capture final : GatewayOutput {
  void Send(ExternalConnectionId connection, Bytes frame) override {
    frames[connection].push_back(std::move(frame));
  }
  void Close(ExternalConnectionId connection) override { closed.push_back(connection); }
  std::map<ExternalConnectionId, std::vector<Bytes>> frames;
  std::vector<ExternalConnectionId> closed;
};

Bytes Request(int16_t version, int32_t correlation_id, const ksim::Message& request) {
  return wire::EncodeRequest(
      wire::RequestHeader{ApiKey(request), version, correlation_id, "scripted"}, request);
}

ksim::Message Answer(int16_t api_key, int16_t version, const Bytes& frame) {
  Result<ksim::Message> decoded =
      wire::DecodeResponse(api_key, version, ByteView(frame).subspan(4));
  EXPECT_TRUE(decoded.ok()) << decoded.status().ToString();
  return decoded.ok() ? *decoded : ksim::Message(ApiVersionsResponse{});
}

Bytes Batch(const std::vector<std::string>& values) {
  std::vector<RecordInput> records;
  for (const std::string& value : values) records.push_back(RecordInput{1000, {}, ToBytes(value)});
  return EncodeBatch(BatchSpec{}, records);
}

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("KSIM_TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/gateway_test_" + name;
}

class GatewayTest : public ::testing::Test {
 protected:
  // Inputs at scenario-relative milliseconds (scenario time 0 is found by a first run).
  void Connect(int64_t at_ms, ExternalConnectionId connection, int32_t broker) {
    inputs_.push_back({ServedInput::Kind::kConnect, at_ms, connection, BrokerId(broker), {}});
  }
  void Data(int64_t at_ms, ExternalConnectionId connection, Bytes bytes) {
    inputs_.push_back({ServedInput::Kind::kData, at_ms, connection, BrokerId(0), std::move(bytes)});
  }
  void CloseInput(int64_t at_ms, ExternalConnectionId connection) {
    inputs_.push_back({ServedInput::Kind::kClose, at_ms, connection, BrokerId(0), {}});
  }

  // Runs the scenario with the inputs, stopping at `stop_ms`; the trace goes to `trace_path`.
  RunResult Run(int64_t stop_ms, const std::string& trace_path) {
    Result<Scenario> scenario = ParseScenario(scenario_text_, "gateway-test.json");
    EXPECT_TRUE(scenario.ok()) << scenario.status().ToString();
    // Scenario time 0 of this scenario and seed, from a run that stops at once.
    ServedRun probe;
    probe.scenario = ServedScenario{"gateway-test.json", scenario_text_, "base"};
    probe.stop_us = 0;
    ReplayDriver probe_driver(probe);
    RunOptions probe_options;
    probe_options.driver = &probe_driver;
    Result<RunResult> t0 = RunScenario(*scenario, probe_options);
    EXPECT_TRUE(t0.ok());
    const TimeUs t0_us = t0->start_us;

    served_.scenario = probe.scenario;
    served_.ports = {{BrokerId(1), 19092}, {BrokerId(2), 19093}, {BrokerId(3), 19094}};
    served_.inputs.clear();
    for (ServedInput input : inputs_) {
      input.t_us = t0_us + input.t_us * 1000;
      served_.inputs.push_back(std::move(input));
    }
    served_.stop_us = t0_us + stop_ms * 1000;
    served_.stop_reason = "interrupted";
    ReplayDriver driver(served_, &capture_);
    RunOptions options;
    options.driver = &driver;
    options.trace_path = trace_path;
    Result<RunResult> result = RunScenario(*scenario, options);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : RunResult{};
  }

  std::string scenario_text_ = std::string(kScenario);
  std::vector<ServedInput> inputs_;
  ServedRun served_;
  Capture capture_;
};

TEST_F(GatewayTest, ScriptedClientProducesFetchesAndTheTraceReplays) {
  // Connection 1 to broker-1: ApiVersions v3 (not served: answered v0 UNSUPPORTED_VERSION and
  // no versions, as Kafka 2.1 answers), Metadata v4 (the loopback ports), Produce v7 acks=-1, Fetch
  // v7.
  Connect(10, 1, 1);
  // ApiVersions v3 (flexible: request header v2, compact strings), as librdkafka sends it, by hand:
  // the codec encodes only served versions.
  Bytes api_versions_v3 = {0, 0, 0, 24, 0, 18, 0, 3, 0, 0, 0, 1, 0, 8};
  for (char c : std::string("scripted")) api_versions_v3.push_back(static_cast<uint8_t>(c));
  for (char c : std::string("\0\2x\2"
                            "1\0",
                            6))
    api_versions_v3.push_back(static_cast<uint8_t>(c));
  Data(20, 1, api_versions_v3);
  Data(30, 1, Request(4, 2, MetadataRequest{.topics = std::vector<std::string>{"t"}}));
  Bytes produce = Request(
      7, 3, ProduceRequest{.acks = -1, .topic_data = {{{"t", PartitionId(0)}, Batch({"a", "b"})}}});
  // The produce request arrives in two pieces: a frame may be cut anywhere.
  Data(40, 1, Bytes(produce.begin(), produce.begin() + 7));
  Data(41, 1, Bytes(produce.begin() + 7, produce.end()));
  Data(
      300, 1,
      Request(7, 4,
              FetchRequest{.max_wait_ms = 10, .partitions = {{{"t", PartitionId(0)}, Offset(0)}}}));
  // Connection 2: garbage (an oversized frame), closed by ksim; connection 1 goes on.
  Connect(50, 2, 2);
  Data(60, 2, Bytes{0x7f, 0xff, 0xff, 0xff, 0});
  // Connection 3: a client that leaves in the middle of a request.
  Connect(70, 3, 3);
  Data(80, 3, Bytes(produce.begin(), produce.begin() + 20));
  CloseInput(90, 3);

  const std::string trace = TempPath("served.jsonl");
  const RunResult result = Run(800, trace);

  ASSERT_EQ(capture_.frames[1].size(), 4u);
  const auto versions = std::get<ApiVersionsResponse>(Answer(18, 0, capture_.frames[1][0]));
  EXPECT_EQ(versions.error_code, Errc::kUnsupportedVersion);
  EXPECT_EQ(versions.correlation_id, 1);
  EXPECT_TRUE(versions.api_versions.empty());
  const auto metadata = std::get<MetadataResponse>(Answer(3, 4, capture_.frames[1][1]));
  ASSERT_EQ(metadata.brokers.size(), 3u);
  EXPECT_EQ(metadata.brokers[0].host, "127.0.0.1");
  EXPECT_EQ(metadata.brokers[0].port, 19092);
  EXPECT_EQ(metadata.brokers[2].port, 19094);
  const auto produced = std::get<ProduceResponse>(Answer(0, 7, capture_.frames[1][2]));
  ASSERT_EQ(produced.responses.size(), 1u);
  EXPECT_EQ(produced.responses[0].error_code, Errc::kNone);
  EXPECT_EQ(produced.responses[0].base_offset, Offset(0));
  EXPECT_EQ(produced.correlation_id, 3);
  const auto fetched = std::get<FetchResponse>(Answer(1, 7, capture_.frames[1][3]));
  ASSERT_EQ(fetched.responses.size(), 1u);
  EXPECT_EQ(fetched.responses[0].high_watermark, Offset(2));
  EXPECT_EQ(capture_.closed, (std::vector<ExternalConnectionId>{2, 1}));  // bad frame; the end
  EXPECT_TRUE(capture_.frames[2].empty());
  EXPECT_TRUE(capture_.frames[3].empty());

  // The scripted client's records are in the history and the final log, each once.
  EXPECT_EQ(result.check.Value("sent"), 2);
  EXPECT_EQ(result.check.Value("acked"), 2);
  EXPECT_EQ(result.check.Value("lost_acked"), 0);
  EXPECT_EQ(result.check.Value("log_duplicates"), 0);

  // Replaying the trace gives the same bytes.
  Result<ServedRun> served = ReadServedRun(trace);
  ASSERT_TRUE(served.ok()) << served.status().ToString();
  EXPECT_EQ(served->inputs.size(), inputs_.size() - 0);  // every input was traced
  Result<Scenario> scenario = ParseScenario(served->scenario.text, served->scenario.file);
  ASSERT_TRUE(scenario.ok());
  ReplayDriver replay(*served);
  RunOptions options;
  options.driver = &replay;
  options.seed = served->header.seed;
  Result<RunResult> again = RunScenario(*scenario, options);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->trace_hash, served->trace_hash);
  EXPECT_EQ(again->trace_hash, result.trace_hash);
}

// A 0.10.0 scenario answers as a 0.10.0.1 broker: its ApiVersions (v0 only; every ApiKeys entry
// of that release), Produce v2 with a message set, Fetch v2 (magic 1) and v0 (down-converted to
// magic 0), ListOffsets v0; a version it does not have (Produce v3) or an API ksim does not serve
// (DescribeGroups) closes the connection.
TEST_F(GatewayTest, Kafka0100AnswersAsA0100Broker) {
  scenario_text_ = std::string(kScenario);
  const std::string later = R"("kafka_version": "2.1",)";
  scenario_text_.replace(scenario_text_.find(later), later.size(), R"("kafka_version": "0.10.0",)");
  Connect(10, 1, 1);
  Data(20, 1, Request(1, 1, ApiVersionsRequest{}));
  Data(21, 1, Request(0, 2, ApiVersionsRequest{}));
  std::vector<RecordInput> records = {{1000, {}, ToBytes("a")}, {1000, {}, ToBytes("b")}};
  const Bytes message_set = EncodeMessageSet(kMagicV1, Offset(0), records);
  Data(30, 1,
       Request(2, 3,
               ProduceRequest{.acks = -1, .topic_data = {{{"t", PartitionId(0)}, message_set}}}));
  const FetchRequest fetch{.max_wait_ms = 10, .partitions = {{{"t", PartitionId(0)}, Offset(0)}}};
  Data(300, 1, Request(2, 4, fetch));
  Data(301, 1, Request(0, 5, fetch));
  Data(302, 1, Request(0, 6, ListOffsetsRequest{.partitions = {{{"t", PartitionId(0)}}}}));
  Connect(40, 2, 1);
  Data(50, 2,
       Request(3, 1,
               ProduceRequest{.acks = -1, .topic_data = {{{"t", PartitionId(0)}, message_set}}}));
  Connect(60, 3, 1);
  Data(70, 3,
       Bytes{0, 0, 0, 14, 0, 15, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0, 0, 0, 0});  // DescribeGroups v0

  const RunResult result = Run(800, TempPath("kafka0100.jsonl"));

  ASSERT_EQ(capture_.frames[1].size(), 6u);
  const auto refused = std::get<ApiVersionsResponse>(Answer(18, 0, capture_.frames[1][0]));
  EXPECT_EQ(refused.error_code, Errc::kUnsupportedVersion);
  EXPECT_TRUE(refused.api_versions.empty());
  const auto versions = std::get<ApiVersionsResponse>(Answer(18, 0, capture_.frames[1][1]));
  EXPECT_EQ(versions.error_code, Errc::kNone);
  const std::span<const ApiVersionEntry> v0100 = AdvertisedApiVersions(KafkaRelease::k0_10_0);
  EXPECT_EQ(versions.api_versions, std::vector<ApiVersionEntry>(v0100.begin(), v0100.end()));
  EXPECT_EQ(versions.api_versions.size(), 19u);
  const auto produced = std::get<ProduceResponse>(Answer(0, 2, capture_.frames[1][2]));
  ASSERT_EQ(produced.responses.size(), 1u);
  EXPECT_EQ(produced.responses[0].error_code, Errc::kNone);
  EXPECT_EQ(produced.responses[0].base_offset, Offset(0));
  for (auto [frame, magic] : {std::pair{3, kMagicV1}, std::pair{4, kMagicV0}}) {
    const int16_t version = frame == 3 ? 2 : 0;
    const auto fetched = std::get<FetchResponse>(Answer(1, version, capture_.frames[1][frame]));
    ASSERT_EQ(fetched.responses.size(), 1u);
    EXPECT_EQ(fetched.responses[0].high_watermark, Offset(2));
    BatchIterator batches(fetched.responses[0].records, /*verify_crc=*/true);
    int count = 0;
    while (std::optional<BatchIterator::Item> item = batches.Next()) {
      EXPECT_EQ(item->header.magic, magic) << "Fetch v" << version;
      ++count;
    }
    EXPECT_EQ(count, 2) << "Fetch v" << version;
  }
  const auto offsets = std::get<ListOffsetsResponse>(Answer(2, 0, capture_.frames[1][5]));
  ASSERT_EQ(offsets.responses.size(), 1u);
  EXPECT_EQ(offsets.responses[0].offset, Offset(2));
  EXPECT_TRUE(capture_.frames[2].empty());
  EXPECT_TRUE(capture_.frames[3].empty());
  EXPECT_EQ(capture_.closed, (std::vector<ExternalConnectionId>{2, 3, 1}));
  EXPECT_EQ(result.check.Value("acked"), 2);
  EXPECT_EQ(result.check.Value("log_duplicates"), 0);
}

// KafkaApis.handleProducerRequest: an acks=0 produce that fails is not answered; the broker
// closes the connection, and the real client sees its socket close (then refreshes metadata).
// One that succeeds leaves the connection open.
TEST_F(GatewayTest, FailedAcksZeroProduceClosesTheClientsConnection) {
  auto produce = [](const std::string& value) {
    return Request(
        7, 1, ProduceRequest{.acks = 0, .topic_data = {{{"t", PartitionId(0)}, Batch({value})}}});
  };
  Connect(10, 1, 1);  // broker 1 leads t-0
  Data(20, 1, produce("a"));
  Connect(30, 2, 2);  // broker 2 does not: NOT_LEADER_FOR_PARTITION, silent
  Data(40, 2, produce("b"));
  const RunResult result = Run(800, TempPath("acks0.jsonl"));
  EXPECT_TRUE(capture_.frames[1].empty());
  EXPECT_TRUE(capture_.frames[2].empty());
  // Connection 2 closes when the broker's close reaches the client; connection 1 at the end.
  EXPECT_EQ(capture_.closed, (std::vector<ExternalConnectionId>{2, 1}));
  EXPECT_EQ(result.check.Value("sent"), 2);
  EXPECT_EQ(result.check.Value("acked"), 0) << "acks=0: nothing is acknowledged";
}

TEST(ServedRunTest, ATraceWithoutServeStartIsNotAServedRun) {
  const std::string path = TempPath("plain.jsonl");
  Result<Scenario> scenario = ParseScenario(kScenario, "gateway-test.json");
  ASSERT_TRUE(scenario.ok());
  RunOptions options;
  options.trace_path = path;
  ASSERT_TRUE(RunScenario(*scenario, options).ok());
  Result<ServedRun> served = ReadServedRun(path);
  ASSERT_FALSE(served.ok());
  EXPECT_NE(served.status().message().find("no serve_start"), std::string::npos);
}

}  // namespace
}  // namespace ksim::sim
