// ClientGateway: where real clients' connections enter the simulated world (`ksim serve`,
// docs/serve.md). Each TCP connection to broker i's loopback listener is a Connection of the
// gateway; the bytes a client sends are cut into frames, decoded with the wire codec
// (core/wire/codec.h) and sent as messages over the virtual network from the client's own node
// to broker i's node, exactly as a simulated client's requests travel: a crashed broker drops
// them, a cut link breaks the connection, a slow broker answers late. The broker's answers come
// back to the client's node, are encoded in the request's version and handed to the output, in
// request order per connection (Kafka answers a connection's requests in order).
//
// - The client's node is named by the client id of its first request (`rdkafka`, `kcat`,
//   `kafkajs`), created on first use and linked like every node; another name is taken when the
//   id is empty or names a node of the scenario. Requests from several connections with one
//   client id share the node; the gateway numbers its requests per node and maps each answer
//   back to its connection and the client's own correlation id.
// - Metadata and FindCoordinator answers name the brokers' loopback listeners (127.0.0.1 and the
//   port given to Listen) instead of the simulated host names.
// - The versions accepted are those a broker of the scenario's release accepts
//   (AcceptedApi, core/protocol/api_versions.h). ApiVersions at a version the release does not
//   have is answered, as Kafka does to 2.1, with a v0 ApiVersionsResponse carrying
//   UNSUPPORTED_VERSION and no versions: the client asks again at v0 (librdkafka's way down).
// - A frame that cannot be served (a size below 0 or above socket.request.max.bytes, a header
//   or body that does not decode, an api key or version the release does not have, an api key
//   ksim does not serve) closes that connection only, traced as ext_error then ext_close;
//   nothing else is touched.
// - A Fetch answer carries the formats the request's version reads: batches above magic 0 (v0,
//   v1) or magic 1 (v2, v3) are down-converted, as KafkaApis.handleFetchRequest does.
// - When the virtual network reports the client node's connection to a broker broken, every
//   connection of that node to that broker is closed (the client sees its socket close, as it
//   would after request.timeout.ms, and reconnects). That includes the broker closing it
//   (Transport::Close: an acks=0 produce that failed, as KafkaApis.handleProducerRequest does).
// - What the clients send and receive goes into the History (sim/serve/external_history.h).
//
// Determinism: the gateway is driven only by its inputs (Open, Receive, ClientClosed), each
// traced with its virtual time before it is applied (ext_connect, ext_data, ext_close by
// "client"); the same inputs at the same times give the same run. Its outputs (bytes to send,
// connections to close) go to a GatewayOutput, which may be real sockets or nothing (a replay).
// Single-threaded; borrows the World and the History, which must outlive it.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/bytes.h"
#include "core/base/types.h"
#include "core/config/kafka_version.h"
#include "core/protocol/messages.h"
#include "core/protocol/transport.h"
#include "sim/check/history.h"
#include "sim/serve/external_history.h"
#include "sim/world/sim_transport.h"
#include "sim/world/world.h"

namespace ksim::sim {

using ExternalConnectionId = uint64_t;

// Where the gateway's answers go: the serve loop's sockets, or nowhere in a replay.
class GatewayOutput {
 public:
  virtual ~GatewayOutput() = default;
  virtual void Send(ExternalConnectionId connection, Bytes frame) = 0;
  // The gateway closed the connection (bad input, the broker's connection broke, the end).
  virtual void Close(ExternalConnectionId connection) = 0;
};

struct GatewayCounters {
  uint64_t requests = 0;   // decoded and sent into the network
  uint64_t responses = 0;  // encoded and handed to the output
  uint64_t bad_frames = 0;
  uint64_t connections = 0;
};

class ClientGateway {
 public:
  // REQUIRES: `output` outlives the gateway.
  // The gateway answers as a broker of `release` (the scenario's kafka_version).
  ClientGateway(World& world, History& history, GatewayOutput& output,
                KafkaRelease release = kSeedKafkaRelease);
  ~ClientGateway();
  ClientGateway(const ClientGateway&) = delete;
  ClientGateway& operator=(const ClientGateway&) = delete;

  // Broker `broker` listens on 127.0.0.1:`port` (traced ext_listen). Before any Open.
  void Listen(BrokerId broker, int32_t port);

  // --- Inputs, each traced before it is applied ------------------------------------------------
  // A client connected to broker `broker`'s listener. REQUIRES: Listen(broker) was called, the id
  // is new.
  void Open(ExternalConnectionId connection, BrokerId broker);
  // Bytes from the client, any cut of its stream. Ignored for a connection already closed.
  void Receive(ExternalConnectionId connection, ByteView bytes);
  // The client closed its end (or its socket failed). Ignored for a connection already closed.
  void ClientClosed(ExternalConnectionId connection);

  // The serve run ends: every connection still open is closed (traced), every send without an
  // answer becomes unknown in the history.
  void End();

  const GatewayCounters& counters() const { return counters_; }
  size_t open_connections() const;

 private:
  struct ClientNode;
  struct Pending {
    ExternalConnectionId connection = 0;
    int32_t client_correlation_id = 0;
    int16_t api_key = 0;
    int16_t api_version = 0;
    bool unsupported_api_versions = false;  // answer as v0 UNSUPPORTED_VERSION
    std::optional<ksim::Message> answer;    // the broker's answer, once it came
  };
  struct Connection {
    BrokerId broker{0};
    std::string node;  // the client's node, once its first request named it
    Bytes buffer;      // bytes received and not yet a whole frame
    bool open = true;
    // Requests awaiting an answer, in the order they came: (node's correlation id).
    std::deque<int32_t> order;
  };

  // Cuts whole frames off the connection's buffer and serves each.
  void ServeFrames(ExternalConnectionId id, Connection& connection);
  // False when the frame closed the connection.
  bool ServeFrame(ExternalConnectionId id, Connection& connection, ByteView frame);
  void Fail(ExternalConnectionId id, Connection& connection, const std::string& error);
  void CloseByGateway(ExternalConnectionId id, Connection& connection, std::string_view reason);
  ClientNode& NodeFor(const std::optional<std::string>& client_id);
  void OnResponse(ClientNode& node, std::string_view from, ksim::Message response);
  void OnDisconnect(ClientNode& node, std::string_view peer);
  // Hands over the answers at the head of the connection's order that have come.
  void Flush(ExternalConnectionId id, Connection& connection, ClientNode& node);
  void RewriteEndpoints(ksim::Message& response) const;
  // Converts the records of a Fetch answer of `version` to the formats that version reads.
  static void DownConvert(FetchResponse& response, int16_t version);
  // The ExternalHistory's key of a request: unique per run.
  static uint64_t RequestKey(const ClientNode& node, int32_t correlation_id);

  World& world_;
  History& history_;
  GatewayOutput& output_;
  KafkaRelease release_;
  ExternalHistory external_history_;
  std::map<BrokerId, int32_t> ports_;
  std::map<ExternalConnectionId, Connection> connections_;
  std::map<std::string, std::unique_ptr<ClientNode>, std::less<>> nodes_;  // by node name
  std::map<std::string, std::string, std::less<>> node_of_client_id_;
  GatewayCounters counters_;
};

}  // namespace ksim::sim
