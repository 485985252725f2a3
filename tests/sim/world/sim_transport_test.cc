// NetworkClient (core/protocol/network_client.h) over SimTransport (sim/world/sim_transport.h) on
// the real virtual network: a client node "p1" sends requests to an echo server "broker-1" built
// from the same classes.
#include "sim/world/sim_transport.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/base/random.h"
#include "core/protocol/messages.h"
#include "core/protocol/network_client.h"
#include "sim/kernel/event_loop.h"
#include "sim/world/network.h"
#include "sim/world/topology.h"

namespace ksim::sim {
namespace {

constexpr TimeUs kDisconnectTimeoutUs = 50'000;

// Answers Metadata requests with the topics asked for, Produce requests with the number of
// produce requests seen so far as base offset (acks=0 ones get nothing). With hold(), requests
// are kept until Release().
class EchoServer {
 public:
  EchoServer(EventLoop& loop, Network& network, std::string_view node)
      : transport_(network, node),
        client_(transport_, loop,
                NetworkClient::Handlers{.on_request = [this](std::string_view from,
                                                             ConnectionId connection,
                                                             ksim::Message request) {
                  OnRequest(from, connection, std::move(request));
                }}) {
    transport_.Attach();
  }

  void Hold() { holding_ = true; }
  void Release() {
    holding_ = false;
    std::vector<Held> held = std::move(held_);
    held_.clear();
    for (Held& h : held) Answer(h.from, h.connection, std::move(h.request));
  }

  std::vector<int32_t> received_correlation_ids;
  int64_t produce_requests = 0;
  size_t held() const { return held_.size(); }
  const NetworkClientCounters& counters() const { return client_.counters(); }

 private:
  struct Held {
    std::string from;
    ConnectionId connection;
    ksim::Message request;
  };

  void OnRequest(std::string_view from, ConnectionId connection, ksim::Message request) {
    received_correlation_ids.push_back(CorrelationId(request));
    if (holding_) {
      held_.push_back(Held{std::string(from), connection, std::move(request)});
      return;
    }
    Answer(from, connection, std::move(request));
  }
  void Answer(std::string_view from, ConnectionId connection, ksim::Message request) {
    const int32_t correlation_id = CorrelationId(request);
    if (auto* metadata = std::get_if<MetadataRequest>(&request)) {
      MetadataResponse response;
      response.correlation_id = correlation_id;
      for (const std::string& topic : metadata->topics.value_or(std::vector<std::string>{})) {
        response.topic_metadata.push_back(TopicMetadata{.topic = topic});
      }
      client_.Respond(from, connection, std::move(response));
    } else if (auto* produce = std::get_if<ProduceRequest>(&request)) {
      ++produce_requests;
      if (produce->acks == 0) return;
      ProduceResponse response;
      response.correlation_id = correlation_id;
      response.responses.push_back(
          {produce->topic_data.at(0).tp, Errc::kNone, Offset(produce_requests)});
      client_.Respond(from, connection, std::move(response));
    } else {
      FAIL() << "unexpected request " << MessageKind(request);
    }
  }

  SimTransport transport_;
  NetworkClient client_;
  bool holding_ = false;
  std::vector<Held> held_;
};

struct Outcome {
  int32_t correlation_id;
  TimeUs time_us;
  Errc error;
  std::optional<ksim::Message> response;
};

class SimTransportTest : public ::testing::Test {
 protected:
  // A client p1 and a server broker-1 (and an idle broker-2) on links of `latency_us` jitter.
  void Build(NetworkClientOptions options, uint64_t seed = 1, TimeUs latency_us_max = 5000) {
    client_.reset();  // tear down an earlier world, users first
    transport_.reset();
    server_.reset();
    network_.reset();
    topology_ =
        Topology::FullMesh({"broker-1", "broker-2", "p1"}, LinkSpec{1000, latency_us_max, 0, 0});
    NetworkOptions network_options;
    network_options.disconnect_timeout_us = kDisconnectTimeoutUs;
    network_options.retransmit_timeout_us = 2'000;       // within the timeouts above, as 200 ms is
    network_options.retransmit_timeout_us_max = 16'000;  // within Kafka's 30 s
    network_ = std::make_unique<Network>(loop_, *topology_, RandomStream(seed), network_options);
    network_->SetObserver([this](const NetEvent& e) {
      if (e.type == NetEvent::Type::kSend) sent_.emplace_back(std::string(e.kind), e.size_bytes);
    });
    server_ = std::make_unique<EchoServer>(loop_, *network_, "broker-1");
    StartClient(options);
  }

  // p1's process: a transport and a client (correlation ids from 1), as a restart makes them.
  void StartClient(NetworkClientOptions options) {
    transport_ = std::make_unique<SimTransport>(*network_, "p1");
    transport_->Attach();
    client_ = std::make_unique<NetworkClient>(
        *transport_, loop_,
        NetworkClient::Handlers{
            .on_disconnect = [this](std::string_view peer) { disconnects_.emplace_back(peer); },
            .on_ready =
                [this](std::string_view peer) {
                  ready_.emplace_back(peer);
                  if (on_ready_action_) on_ready_action_();
                }},
        options);
  }

  int32_t SendMetadata(const std::string& topic, const std::string& to = "broker-1") {
    MetadataRequest request;
    request.topics = std::vector<std::string>{topic};
    return client_->Send(to, request, Recorder());
  }
  NetworkClient::ResponseCallback Recorder() {
    return [this](Result<ksim::Message> response) {
      Outcome outcome{0, loop_.Now(), response.status().code(), std::nullopt};
      if (response.ok()) {
        outcome.correlation_id = CorrelationId(*response);
        outcome.response = std::move(response).value();
      }
      outcomes_.push_back(std::move(outcome));
    };
  }
  void At(TimeUs time_us, std::function<void()> action) {
    loop_.ScheduleAt(time_us, std::move(action));
  }
  void Run() { ASSERT_TRUE(loop_.RunUntilIdle(1'000'000)); }

  EventLoop loop_;
  std::unique_ptr<Topology> topology_;
  std::unique_ptr<Network> network_;
  std::unique_ptr<EchoServer> server_;
  std::unique_ptr<SimTransport> transport_;
  std::unique_ptr<NetworkClient> client_;
  std::vector<Outcome> outcomes_;
  std::vector<std::string> disconnects_;
  std::vector<std::string> ready_;
  std::function<void()> on_ready_action_;
  std::vector<std::pair<std::string, int64_t>> sent_;
};

NetworkClientOptions Options(int32_t max_in_flight, TimeUs request_timeout_us) {
  NetworkClientOptions options;
  options.max_in_flight_requests_per_connection = max_in_flight;
  options.request_timeout_us = request_timeout_us;
  return options;
}

TEST_F(SimTransportTest, ResponsesMatchTheirRequestsInFifoOrderUnderJitter) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    outcomes_.clear();
    Build(Options(5, 1'000'000), seed);
    std::vector<int32_t> ids;
    for (int i = 0; i < 5; ++i) ids.push_back(SendMetadata("topic-" + std::to_string(i)));
    EXPECT_EQ(client_->in_flight("broker-1"), 5);
    Run();
    EXPECT_EQ(server_->received_correlation_ids, ids) << "seed " << seed;
    ASSERT_EQ(outcomes_.size(), 5u);
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(outcomes_[i].error, Errc::kNone);
      EXPECT_EQ(outcomes_[i].correlation_id, ids[i]);
      const auto& response = std::get<MetadataResponse>(*outcomes_[i].response);
      ASSERT_EQ(response.topic_metadata.size(), 1u);
      EXPECT_EQ(response.topic_metadata[0].topic, "topic-" + std::to_string(i));
    }
    EXPECT_EQ(client_->in_flight(), 0u);
    EXPECT_EQ(client_->counters().responses_received, 5u);
    EXPECT_EQ(client_->counters().responses_dropped, 0u);
  }
}

TEST_F(SimTransportTest, NetworkSeesKafkaKindsAndWireSizes) {
  Build(Options(5, 1'000'000));
  MetadataRequest request;
  request.topics = std::vector<std::string>{"t"};
  client_->Send("broker-1", request, Recorder());
  Run();
  ASSERT_EQ(sent_.size(), 2u);
  request.correlation_id = 1;
  EXPECT_EQ(sent_[0], std::make_pair(std::string("Metadata"), ApproximateWireSize(request)));
  EXPECT_EQ(sent_[1].first, "MetadataResponse");
  EXPECT_EQ(sent_[1].second, ApproximateWireSize(*outcomes_.at(0).response));
}

TEST_F(SimTransportTest, InFlightBoundMakesThePeerNotReadyUntilAResponseArrives) {
  Build(Options(3, 1'000'000));
  server_->Hold();
  for (int i = 0; i < 3; ++i) SendMetadata("t" + std::to_string(i));
  EXPECT_FALSE(client_->Ready("broker-1"));
  EXPECT_TRUE(client_->Ready("broker-2"));  // the bound is per peer
  EXPECT_DEATH(SendMetadata("t"), "not ready");
  // The caller waits for on_ready, then sends the fourth.
  int32_t in_flight_when_ready = -1;
  on_ready_action_ = [&] {
    if (in_flight_when_ready >= 0) return;
    in_flight_when_ready = client_->in_flight("broker-1");
    SendMetadata("fourth");
  };
  loop_.RunUntil(100'000);  // well before request.timeout.ms
  EXPECT_EQ(server_->held(), 3u);
  EXPECT_TRUE(ready_.empty());
  server_->Release();
  Run();
  EXPECT_EQ(in_flight_when_ready, 2);
  EXPECT_EQ(server_->received_correlation_ids, (std::vector<int32_t>{1, 2, 3, 4}));
  ASSERT_EQ(outcomes_.size(), 4u);
  for (const Outcome& outcome : outcomes_) EXPECT_EQ(outcome.error, Errc::kNone);
  EXPECT_EQ(std::get<MetadataResponse>(*outcomes_[3].response).topic_metadata.at(0).topic,
            "fourth");
  EXPECT_TRUE(client_->Ready("broker-1"));
}

// The client tells its peers apart by their first eight bytes first (NetworkClient::FindPeer):
// names alike there, of the same length or not, keep their own in-flight counts and answers.
TEST(SimTransportPeersTest, PeersWhoseNamesShareTheirFirstEightBytesStayApart) {
  EventLoop loop;
  const std::vector<std::string> servers = {"broker-1", "broker-10", "broker-11", "consumer-a",
                                            "consumer-b"};
  std::vector<std::string> nodes = servers;
  nodes.push_back("p1");
  std::unique_ptr<Topology> topology = Topology::FullMesh(nodes, LinkSpec{1000, 1000, 0, 0});
  Network network(loop, *topology, RandomStream(1), NetworkOptions{});
  std::vector<std::unique_ptr<EchoServer>> echo;
  for (const std::string& name : servers) {
    echo.push_back(std::make_unique<EchoServer>(loop, network, name));
    echo.back()->Hold();
  }
  SimTransport transport(network, "p1");
  transport.Attach();
  NetworkClientOptions options;
  options.max_in_flight_requests_per_connection = 3;
  options.request_timeout_us = 1'000'000;
  NetworkClient client(transport, loop, NetworkClient::Handlers{}, options);
  std::vector<std::pair<std::string, std::string>> answered;  // (peer asked, topic answered)
  auto send = [&](const std::string& to, const std::string& topic) {
    MetadataRequest request;
    request.topics = std::vector<std::string>{topic};
    client.Send(to, request, [&answered, to](Result<ksim::Message> response) {
      ASSERT_TRUE(response.ok());
      answered.emplace_back(to, std::get<MetadataResponse>(*response).topic_metadata.at(0).topic);
    });
  };
  // 0, 1, 2, 3 and 1 requests in flight, in the order of `servers`.
  send("broker-10", "a");
  send("broker-11", "b");
  send("broker-11", "c");
  send("consumer-a", "d");
  send("consumer-a", "e");
  send("consumer-a", "f");
  send("consumer-b", "g");
  const std::vector<int32_t> expected = {0, 1, 2, 3, 1};
  for (size_t i = 0; i < servers.size(); ++i) {
    EXPECT_EQ(client.in_flight(servers[i]), expected[i]) << servers[i];
    EXPECT_EQ(client.Ready(servers[i]), expected[i] < 3) << servers[i];
  }
  EXPECT_EQ(client.in_flight("broker-12"), 0);  // never asked: alike, but no peer of its own
  for (auto& server : echo) server->Release();
  ASSERT_TRUE(loop.RunUntilIdle(1'000'000));
  EXPECT_EQ(answered, (std::vector<std::pair<std::string, std::string>>{{"broker-10", "a"},
                                                                        {"broker-11", "b"},
                                                                        {"broker-11", "c"},
                                                                        {"consumer-a", "d"},
                                                                        {"consumer-a", "e"},
                                                                        {"consumer-a", "f"},
                                                                        {"consumer-b", "g"}}));
  for (const std::string& name : servers) EXPECT_EQ(client.in_flight(name), 0) << name;
  EXPECT_EQ(client.in_flight(), 0u);
}

TEST_F(SimTransportTest, TimeoutFailsTheRequestAndTheLateResponseIsDropped) {
  Build(Options(5, 20'000));
  server_->Hold();
  At(1000, [&] { SendMetadata("slow"); });
  Run();
  ASSERT_EQ(outcomes_.size(), 1u);
  EXPECT_EQ(outcomes_[0].error, Errc::kRequestTimedOut);
  EXPECT_EQ(outcomes_[0].time_us, 1000 + 20'000);
  EXPECT_EQ(client_->in_flight(), 0u);
  EXPECT_EQ(ready_, (std::vector<std::string>{"broker-1"}));
  // The server answers after the client gave up: the callback is not called again.
  server_->Release();
  Run();
  EXPECT_EQ(outcomes_.size(), 1u);
  EXPECT_EQ(client_->counters().timeouts, 1u);
  EXPECT_EQ(client_->counters().responses_dropped, 1u);
  EXPECT_EQ(client_->counters().responses_received, 0u);
  // The connection is still fine: the next request is answered.
  SendMetadata("next");
  Run();
  ASSERT_EQ(outcomes_.size(), 2u);
  EXPECT_EQ(outcomes_[1].error, Errc::kNone);
}

// Found by `ksim explore` (scenarios/regressions/stale-response-after-client-restart.json): a
// restarted client counts correlation ids from the start again, so a late answer to its previous
// incarnation's request must not travel on the new connection, where it would match a new
// request of the same id (or of another kind).
TEST_F(SimTransportTest, AResponseGoesOnlyOnTheConnectionItsRequestCameOn) {
  const NetworkClientOptions options = Options(5, 10 * kDisconnectTimeoutUs);
  Build(options);
  server_->Hold();
  int32_t old_id = -1;
  At(0, [&] { old_id = SendMetadata("old"); });
  At(10'000, [&] {  // p1's process dies (its host goes down) while broker-1 holds the request
    client_.reset();
    transport_.reset();
    ASSERT_TRUE(topology_->SetNodeUp("p1", false).ok());
  });
  At(20'000, [&] {
    ASSERT_TRUE(topology_->SetNodeUp("p1", true).ok());
    StartClient(options);
    EXPECT_EQ(SendMetadata("new"), old_id);  // the same correlation id, on a new connection
  });
  At(30'000, [&] { server_->Release(); });
  Run();
  ASSERT_EQ(outcomes_.size(), 1u);
  EXPECT_EQ(outcomes_[0].error, Errc::kNone);
  EXPECT_EQ(std::get<MetadataResponse>(*outcomes_[0].response).topic_metadata.at(0).topic, "new");
  EXPECT_EQ(server_->counters().responses_discarded, 1u);
  EXPECT_EQ(server_->counters().responses_sent, 1u);
  EXPECT_EQ(client_->counters().responses_dropped, 0u);
}

// Kafka's NetworkClient.handleTimedOutRequests (a client's option): the timed-out request fails
// REQUEST_TIMED_OUT and closes the connection, failing every other request to that peer.
TEST_F(SimTransportTest, TimeoutClosesTheConnectionWhenAsked) {
  NetworkClientOptions options = Options(5, 20'000);
  options.disconnect_on_timeout = true;
  Build(options);
  server_->Hold();
  At(1000, [&] { SendMetadata("first"); });
  At(5000, [&] { SendMetadata("second"); });
  Run();
  ASSERT_EQ(outcomes_.size(), 2u);
  EXPECT_EQ(outcomes_[0].error, Errc::kRequestTimedOut);
  EXPECT_EQ(outcomes_[1].error, Errc::kNetworkException) << "closed with the first";
  EXPECT_EQ(outcomes_[1].time_us, 1000 + 20'000);
  EXPECT_EQ(disconnects_, (std::vector<std::string>{"broker-1"}));
  EXPECT_EQ(client_->counters().timeouts, 1u);
  EXPECT_EQ(client_->counters().disconnect_failures, 1u);
  EXPECT_EQ(client_->in_flight(), 0u);
}

// A request timing out on a connection that broke unnoticed closes that connection only. A
// request sent since on a newer connection to the same peer (a consumer's JoinGroup held by the
// coordinator) stays in flight and is answered, and the owner hears of no disconnect.
TEST_F(SimTransportTest, TimeoutOnABrokenOldConnectionLeavesTheNewerOne) {
  NetworkClientOptions options = Options(5, 30'000);  // shorter than the disconnect notice
  options.disconnect_on_timeout = true;
  Build(options);
  server_->Hold();
  int32_t new_id = -1;
  At(0, [&] { SendMetadata("old"); });
  At(10'000, [&] {  // broker-1 crashes holding it; nobody is told before kDisconnectTimeoutUs
    ASSERT_TRUE(topology_->SetNodeUp("broker-1", false).ok());
    server_.reset();
  });
  At(20'000, [&] {
    ASSERT_TRUE(topology_->SetNodeUp("broker-1", true).ok());
    server_ = std::make_unique<EchoServer>(loop_, *network_, "broker-1");
    server_->Hold();
    new_id = SendMetadata("new");  // on a new connection
  });
  At(40'000, [&] {
    ASSERT_EQ(outcomes_.size(), 1u);
    EXPECT_EQ(outcomes_[0].error, Errc::kRequestTimedOut);
    EXPECT_EQ(outcomes_[0].time_us, 30'000);
    EXPECT_TRUE(disconnects_.empty()) << "the peer is connected on the newer connection";
    EXPECT_EQ(client_->in_flight(), 1u);
    server_->Release();
  });
  Run();  // the old connection's notice comes at 10'000 + kDisconnectTimeoutUs
  ASSERT_EQ(outcomes_.size(), 2u);
  EXPECT_EQ(outcomes_[1].correlation_id, new_id);
  EXPECT_EQ(outcomes_[1].error, Errc::kNone);
  EXPECT_EQ(client_->counters().disconnect_failures, 0u);
  EXPECT_TRUE(disconnects_.empty()) << "the old connection's late notice is not the peer's";
}

// Found by `ksim explore`, explore unsafe seed 779: the Transport's late notice about the broken
// old connection fails the request on it and leaves the newer connection's, which is answered
// after it; the owner is not told. The scenario:
// scenarios/regressions/late-notice-of-a-replaced-connection-keeps-the-join.json
TEST_F(SimTransportTest, LateNoticeOfAnOldConnectionLeavesTheNewerOne) {
  Build(Options(5, 10 * kDisconnectTimeoutUs));
  server_->Hold();
  At(0, [&] { SendMetadata("old"); });
  At(10'000, [&] {
    ASSERT_TRUE(topology_->SetNodeUp("broker-1", false).ok());
    server_.reset();
  });
  At(20'000, [&] {
    ASSERT_TRUE(topology_->SetNodeUp("broker-1", true).ok());
    server_ = std::make_unique<EchoServer>(loop_, *network_, "broker-1");
    server_->Hold();
    SendMetadata("new");
  });
  At(10'000 + kDisconnectTimeoutUs + 1000, [&] {
    ASSERT_EQ(outcomes_.size(), 1u);
    EXPECT_EQ(outcomes_[0].error, Errc::kNetworkException);
    EXPECT_TRUE(disconnects_.empty());
    EXPECT_EQ(client_->in_flight(), 1u);
    server_->Release();
  });
  Run();
  ASSERT_EQ(outcomes_.size(), 2u);
  EXPECT_EQ(outcomes_[1].error, Errc::kNone);
  EXPECT_EQ(client_->counters().disconnect_failures, 1u);
}

// Transport::Close on the virtual network (Network::Close): the closer's side of a server closing
// a client's socket. The peer's requests on it fail when the close reaches it; the closer hears
// nothing; the next request goes on a new connection.
TEST_F(SimTransportTest, CloseTellsOnlyThePeer) {
  Build(Options(5, 10 * kDisconnectTimeoutUs));
  server_->Hold();
  SimTransport closer(*network_, "broker-2");
  int closer_disconnects = 0;
  NetworkClient closer_client(
      closer, loop_,
      NetworkClient::Handlers{.on_request = [](std::string_view, ConnectionId, ksim::Message) {},
                              .on_disconnect = [&](std::string_view) { ++closer_disconnects; }});
  closer.Attach();
  At(0, [&] { SendMetadata("t", "broker-2"); });
  At(10'000, [&] { closer_client.CloseConnection("p1"); });
  Run();
  ASSERT_EQ(outcomes_.size(), 1u);
  EXPECT_EQ(outcomes_[0].error, Errc::kNetworkException);
  EXPECT_LE(outcomes_[0].time_us, 10'000 + 5000) << "one link latency after the close";
  EXPECT_EQ(disconnects_, (std::vector<std::string>{"broker-2"}));
  EXPECT_EQ(closer_disconnects, 1) << "CloseConnection's own notice to its owner, no network one";
  EXPECT_EQ(network_->ConnectionEpoch(topology_->Id("p1"), topology_->Id("broker-2")), 2u);
}

TEST_F(SimTransportTest, ServerCrashFailsEveryInFlightRequestWithNetworkException) {
  Build(Options(5, 10 * kDisconnectTimeoutUs));
  server_->Hold();
  std::vector<int32_t> ids;
  At(0, [&] {
    for (int i = 0; i < 3; ++i) ids.push_back(SendMetadata("t"));
  });
  // broker-1 crashes holding the requests: its transport and client die with it.
  At(10'000, [&] {
    ASSERT_TRUE(topology_->SetNodeUp("broker-1", false).ok());
    server_.reset();
  });
  // It restarts, with a new transport, before the client hears of the break; a request sent now
  // goes on a new connection, which the old break does not touch.
  At(20'000, [&] {
    ASSERT_TRUE(topology_->SetNodeUp("broker-1", true).ok());
    server_ = std::make_unique<EchoServer>(loop_, *network_, "broker-1");
    ids.push_back(SendMetadata("after-restart"));
  });
  Run();
  ASSERT_EQ(outcomes_.size(), 4u);
  // The new request is answered first; the notice comes disconnect_timeout after the crash.
  EXPECT_EQ(outcomes_[0].error, Errc::kNone);
  EXPECT_EQ(outcomes_[0].correlation_id, ids[3]);
  for (int i = 1; i < 4; ++i) {
    EXPECT_EQ(outcomes_[i].error, Errc::kNetworkException);
    EXPECT_EQ(outcomes_[i].time_us, 10'000 + kDisconnectTimeoutUs);
  }
  // The notice concerns the old connection only: the owner is not told (broker-1 is connected
  // on the new one).
  EXPECT_TRUE(disconnects_.empty());
  EXPECT_EQ(client_->counters().disconnect_failures, 3u);
  EXPECT_EQ(client_->in_flight(), 0u);
  EXPECT_EQ(server_->received_correlation_ids, (std::vector<int32_t>{ids[3]}));
}

TEST_F(SimTransportTest, AcksZeroProduceIsFireAndForget) {
  Build(Options(2, 20'000));
  ProduceRequest produce;
  produce.acks = 0;
  produce.topic_data.push_back({TopicPartition{"t", PartitionId(0)}, Bytes(64, 1)});
  // More than the in-flight bound: none of them takes a slot.
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(client_->Ready("broker-1"));
    client_->Send("broker-1", produce, nullptr);
  }
  EXPECT_EQ(client_->in_flight(), 0u);
  EXPECT_DEATH(client_->Send("broker-1", produce, Recorder()), "callback");
  Run();
  EXPECT_EQ(server_->produce_requests, 5);
  EXPECT_EQ(server_->counters().responses_sent, 0u);
  EXPECT_TRUE(outcomes_.empty());
  EXPECT_EQ(client_->counters().timeouts, 0u);
  // acks=1 gets an answer.
  produce.acks = 1;
  client_->Send("broker-1", produce, Recorder());
  Run();
  ASSERT_EQ(outcomes_.size(), 1u);
  EXPECT_EQ(std::get<ProduceResponse>(*outcomes_[0].response).responses.at(0).base_offset,
            Offset(6));
}

// Across a partition the request is held (a cut is a silence) until the network gives up on it
// disconnect_timeout after the send and tells the client; request.timeout.ms decides which the
// caller hears first.
TEST_F(SimTransportTest, RequestAcrossAPartitionTimesOutFirstWithAShortRequestTimeout) {
  Build(Options(5, kDisconnectTimeoutUs / 2));
  ASSERT_TRUE(topology_->Partition({{"broker-1"}, {"p1"}}, false).ok());
  SendMetadata("t");
  Run();
  ASSERT_EQ(outcomes_.size(), 1u);
  EXPECT_EQ(outcomes_[0].error, Errc::kRequestTimedOut);
  EXPECT_EQ(outcomes_[0].time_us, kDisconnectTimeoutUs / 2);
  EXPECT_EQ(server_->received_correlation_ids.size(), 0u);
  // The notice still comes, and finds nothing left to fail.
  EXPECT_EQ(disconnects_, (std::vector<std::string>{"broker-1"}));
  EXPECT_EQ(client_->counters().disconnect_failures, 0u);
}

TEST_F(SimTransportTest, RequestAcrossAPartitionFailsWithNetworkExceptionWithALongTimeout) {
  Build(Options(5, 2 * kDisconnectTimeoutUs));
  ASSERT_TRUE(topology_->Partition({{"broker-1"}, {"p1"}}, false).ok());
  SendMetadata("t");
  Run();
  ASSERT_EQ(outcomes_.size(), 1u);
  EXPECT_EQ(outcomes_[0].error, Errc::kNetworkException);
  EXPECT_EQ(outcomes_[0].time_us, kDisconnectTimeoutUs);
  EXPECT_EQ(client_->counters().timeouts, 0u);
  // After the heal a new connection carries the retry.
  topology_->Heal();
  SendMetadata("t");
  Run();
  ASSERT_EQ(outcomes_.size(), 2u);
  EXPECT_EQ(outcomes_[1].error, Errc::kNone);
}

// A cut shorter than the request timeout costs a delay, not an error: the request and its answer
// wait for the heal and arrive at the next retransmission (1000 + 2000 + 4000 = 7000).
TEST_F(SimTransportTest, ARequestAcrossAShortCutIsAnsweredAfterTheHeal) {
  Build(Options(5, kDisconnectTimeoutUs / 2));
  ASSERT_TRUE(topology_->Partition({{"broker-1"}, {"p1"}}, false).ok());
  At(1000, [&] { SendMetadata("t"); });
  At(5000, [&] { topology_->Heal(); });
  Run();
  ASSERT_EQ(outcomes_.size(), 1u);
  EXPECT_EQ(outcomes_[0].error, Errc::kNone);
  EXPECT_GT(outcomes_[0].time_us, 7000);
  EXPECT_LT(outcomes_[0].time_us, kDisconnectTimeoutUs / 2);
  EXPECT_EQ(server_->received_correlation_ids.size(), 1u);
  EXPECT_TRUE(disconnects_.empty());
  EXPECT_EQ(client_->counters().timeouts, 0u);
}

// With disconnect_on_timeout the client closes the connection (Kafka's selector.close): an
// answer held behind a one-way cut is dropped with it and never read after the heal.
TEST_F(SimTransportTest, ATimedOutRequestsHeldAnswerIsNeverReadAfterTheClose) {
  NetworkClientOptions options = Options(5, 20'000);
  options.disconnect_on_timeout = true;
  Build(options);
  ASSERT_TRUE(topology_->Partition({{"broker-1"}, {"p1"}}, true).ok());  // answers cannot cross
  At(1000, [&] { SendMetadata("first"); });
  At(25'000, [&] { topology_->Heal(); });
  At(26'000, [&] { SendMetadata("second"); });
  Run();
  ASSERT_EQ(outcomes_.size(), 2u);
  EXPECT_EQ(outcomes_[0].error, Errc::kRequestTimedOut);
  EXPECT_EQ(outcomes_[1].error, Errc::kNone);
  EXPECT_EQ(server_->received_correlation_ids.size(), 2u);
  EXPECT_EQ(client_->counters().responses_dropped, 0u) << "the held answer died with the close";
  EXPECT_EQ(network_->counters().held, 1u);
}

TEST_F(SimTransportTest, ResponseFromAnotherPeerDoesNotCompleteARequest) {
  Build(Options(5, 20'000));
  server_->Hold();
  const int32_t id = SendMetadata("t");
  // broker-2 (a plain transport) sends a response with the same correlation id.
  SimTransport impostor(*network_, "broker-2");
  MetadataResponse fake;
  fake.correlation_id = id;
  impostor.Send("p1", fake);
  Run();
  ASSERT_EQ(outcomes_.size(), 1u);
  EXPECT_EQ(outcomes_[0].error, Errc::kRequestTimedOut);
  EXPECT_EQ(client_->counters().responses_dropped, 1u);
}

TEST_F(SimTransportTest, DeliveriesOfOtherProtocolsAreLeftToTheNodesOtherHandlers) {
  Build(Options(5, 20'000));
  SimTransport broker2(*network_, "broker-2");
  int others = 0;
  int ours = 0;
  struct Counter : TransportHandler {
    int* ours;
    void OnMessage(std::string_view, ConnectionId, ksim::Message) override { ++*ours; }
    void OnDisconnect(std::string_view, ConnectionId) override {}
  } counter;
  counter.ours = &ours;
  broker2.SetHandler(&counter);
  network_->Register("broker-2", NetworkHandler{[&](Delivery delivery) {
                       if (!broker2.OnMessage(delivery)) ++others;
                     }});
  network_->Send("p1", "broker-2", sim::Message::OfBytes("ZkPing", Bytes(8, 0)));
  transport_->Send("broker-2", HeartbeatRequest{});
  Run();
  EXPECT_EQ(others, 1);
  EXPECT_EQ(ours, 1);
  network_->Unregister(topology_->Id("broker-2"));
}

}  // namespace
}  // namespace ksim::sim
