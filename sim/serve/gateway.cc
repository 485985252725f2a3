#include "sim/serve/gateway.h"

#include <utility>

#include "core/base/check.h"
#include "core/base/trace_names.h"
#include "core/protocol/api_versions.h"
#include "core/record/legacy_record.h"
#include "core/record/record_batch.h"
#include "core/wire/codec.h"
#include "sim/serve/base64.h"

namespace ksim::sim {
namespace {

constexpr std::string_view kLoopbackHost = "127.0.0.1";
constexpr std::string_view kAnonymousClient = "client";  // a request without a client id

}  // namespace

// One client node: its transport on the virtual network, and the requests it has in flight by
// the correlation id the gateway gave them on that node.
struct ClientGateway::ClientNode final : TransportHandler {
  ClientNode(ClientGateway& gateway_in, Node& node_in)
      : gateway(gateway_in), node(node_in), transport(gateway_in.world_.network(), node_in.name()) {
    transport.SetHandler(this);
    transport.Attach();
  }
  void OnMessage(std::string_view from, ConnectionId /*connection*/,
                 ksim::Message message) override {
    gateway.OnResponse(*this, from, std::move(message));
  }
  void OnDisconnect(std::string_view peer, ConnectionId /*broken_through*/) override {
    gateway.OnDisconnect(*this, peer);
  }

  ClientGateway& gateway;
  Node& node;
  SimTransport transport;
  int32_t next_correlation_id = 1;
  std::map<int32_t, Pending> pending;
};

uint64_t ClientGateway::RequestKey(const ClientNode& node, int32_t correlation_id) {
  return (static_cast<uint64_t>(node.node.id().value()) << 32) |
         static_cast<uint32_t>(correlation_id);
}

ClientGateway::ClientGateway(World& world, History& history, GatewayOutput& output,
                             KafkaRelease release)
    : world_(world),
      history_(history),
      output_(output),
      release_(release),
      external_history_(history) {}

ClientGateway::~ClientGateway() = default;

size_t ClientGateway::open_connections() const {
  size_t open = 0;
  for (const auto& [id, connection] : connections_) open += connection.open ? 1 : 0;
  return open;
}

void ClientGateway::Listen(BrokerId broker, int32_t port) {
  KSIM_CHECK(connections_.empty());
  ports_[broker] = port;
  world_.Trace(
      node::kServe, ev::kExtListen,
      EventFields{
          {field::kBroker, broker.value()}, {field::kHost, kLoopbackHost}, {field::kPort, port}});
}

// ---- Inputs -------------------------------------------------------------------------------------

void ClientGateway::Open(ExternalConnectionId id, BrokerId broker) {
  KSIM_CHECK(ports_.count(broker) == 1);
  KSIM_CHECK(connections_.count(id) == 0);
  world_.Trace(node::kServe, ev::kExtConnect,
               EventFields{{field::kConn, id}, {field::kBroker, broker.value()}});
  connections_[id].broker = broker;
  ++counters_.connections;
}

void ClientGateway::Receive(ExternalConnectionId id, ByteView bytes) {
  auto it = connections_.find(id);
  if (it == connections_.end() || !it->second.open || bytes.empty()) return;
  world_.Trace(node::kServe, ev::kExtData,
               EventFields{{field::kConn, id}, {field::kData, Base64Encode(bytes)}});
  Connection& connection = it->second;
  connection.buffer.insert(connection.buffer.end(), bytes.begin(), bytes.end());
  ServeFrames(id, connection);
}

void ClientGateway::ClientClosed(ExternalConnectionId id) {
  auto it = connections_.find(id);
  if (it == connections_.end() || !it->second.open) return;
  world_.Trace(node::kServe, ev::kExtClose,
               EventFields{{field::kConn, id}, {field::kBy, "client"}});
  Connection& connection = it->second;
  connection.open = false;
  // Answers still to come for it are dropped when they come (OnResponse finds it closed).
}

void ClientGateway::End() {
  for (auto& [id, connection] : connections_) {
    if (connection.open) CloseByGateway(id, connection, "serve_end");
  }
  external_history_.End();
}

// ---- Frames -------------------------------------------------------------------------------------

void ClientGateway::ServeFrames(ExternalConnectionId id, Connection& connection) {
  size_t consumed = 0;
  while (connection.open) {
    const ByteView rest = ByteView(connection.buffer).subspan(consumed);
    const std::optional<int32_t> size = wire::FrameSize(rest);
    if (!size) break;
    if (*size < 0 || *size > wire::kMaxFrameBytes) {
      Fail(id, connection,
           "frame size " + std::to_string(*size) + " (0.." + std::to_string(wire::kMaxFrameBytes) +
               " is valid)");
      return;
    }
    if (rest.size() - 4 < static_cast<size_t>(*size)) break;  // the rest of the frame is to come
    consumed += 4 + static_cast<size_t>(*size);
    if (!ServeFrame(id, connection, rest.subspan(4, static_cast<size_t>(*size)))) return;
  }
  connection.buffer.erase(connection.buffer.begin(),
                          connection.buffer.begin() + static_cast<std::ptrdiff_t>(consumed));
}

bool ClientGateway::ServeFrame(ExternalConnectionId id, Connection& connection, ByteView frame) {
  Result<wire::RequestHeader> only_header = wire::DecodeRequestHeader(frame);
  if (!only_header.ok()) {
    Fail(id, connection, only_header.status().ToString());
    return false;
  }
  // What a broker of the release accepts (core/protocol/api_versions.h). KafkaApis answers an
  // ApiVersions at a version it does not know with a v0 UNSUPPORTED_VERSION response and no
  // versions; any other request it cannot parse (an api key or version its release does not
  // have) closes the connection (0.10.0.1:RequestChannel.Request, SocketServer's Processor
  // closing on InvalidRequestException; the same at 2.1.0).
  const int16_t api_key = only_header->api_key;
  const int16_t api_version = only_header->api_version;
  const ApiVersionEntry* accepted = AcceptedApi(api_key, release_);
  const bool in_range = accepted != nullptr && api_version >= accepted->min_version &&
                        api_version <= accepted->max_version;
  bool unsupported_api_versions = false;
  wire::RequestHeader header;
  ksim::Message request;
  if (api_key == ApiVersionsRequest::kApiKey && !in_range) {
    header = std::move(*only_header);
    request = ApiVersionsRequest{};
    unsupported_api_versions = true;
  } else if (!in_range) {
    const std::string name = ApiKeyName(api_key).empty() ? "api key " + std::to_string(api_key)
                                                         : std::string(ApiKeyName(api_key));
    const std::string release(KafkaReleaseName(release_));
    std::string error;
    if (accepted != nullptr) {
      error = name + " v" + std::to_string(api_version) + " is not served by Kafka " + release +
              " (v" + std::to_string(accepted->min_version) + "-v" +
              std::to_string(accepted->max_version) + " are)";
    } else {
      bool advertised = false;
      for (const ApiVersionEntry& entry : AdvertisedApiVersions(release_)) {
        advertised |= entry.api_key == api_key;
      }
      error = advertised ? name + " is a Kafka " + release + " API that ksim does not serve"
                         : name + " is not an API of Kafka " + release;
    }
    Fail(id, connection, Status(Errc::kUnsupportedVersion, error).ToString());
    return false;
  } else {
    Result<wire::DecodedRequest> decoded = wire::DecodeRequest(frame);
    if (!decoded.ok()) {
      Fail(id, connection, decoded.status().ToString());
      return false;
    }
    header = std::move(decoded->header);
    request = std::move(decoded->request);
  }
  ClientNode& node = NodeFor(header.client_id);
  if (connection.node.empty()) connection.node = node.node.name();
  const int32_t correlation_id = node.next_correlation_id++;
  world_.Trace(node::kServe, ev::kExtRequest,
               EventFields{{field::kConn, id},
                           {field::kClient, node.node.name()},
                           {field::kApi, std::string(ApiKeyName(header.api_key))},
                           {field::kVersion, header.api_version},
                           {field::kCorrelationId, header.correlation_id}});
  ++counters_.requests;
  SetCorrelationId(request, correlation_id);
  external_history_.OnRequest(node.node.name(), RequestKey(node, correlation_id), request);
  if (ExpectsResponse(request)) {
    node.pending[correlation_id] = Pending{id,
                                           header.correlation_id,
                                           header.api_key,
                                           header.api_version,
                                           unsupported_api_versions,
                                           std::nullopt};
    connection.order.push_back(correlation_id);
  }
  node.transport.Send(node::Broker(connection.broker), std::move(request));
  return true;
}

void ClientGateway::Fail(ExternalConnectionId id, Connection& connection,
                         const std::string& error) {
  ++counters_.bad_frames;
  world_.Trace(node::kServe, ev::kExtError,
               EventFields{{field::kConn, id}, {field::kError, error}});
  CloseByGateway(id, connection, "bad_frame");
}

void ClientGateway::CloseByGateway(ExternalConnectionId id, Connection& connection,
                                   std::string_view reason) {
  world_.Trace(node::kServe, ev::kExtClose,
               EventFields{{field::kConn, id}, {field::kBy, "ksim"}, {field::kReason, reason}});
  connection.open = false;
  connection.buffer.clear();
  output_.Close(id);
}

ClientGateway::ClientNode& ClientGateway::NodeFor(const std::optional<std::string>& client_id) {
  const std::string id =
      client_id && !client_id->empty() ? *client_id : std::string(kAnonymousClient);
  auto known = node_of_client_id_.find(id);
  if (known != node_of_client_id_.end()) return *nodes_.at(known->second);
  // A name no node of the scenario has: the client id, else with "-ext", "-ext2", ...
  std::string name = id;
  for (int n = 1; world_.FindNode(name) != nullptr; ++n) {
    name = id + "-ext" + (n == 1 ? std::string() : std::to_string(n));
  }
  Result<Node*> node = world_.AddNode(name);
  KSIM_CHECK(node.ok());
  node_of_client_id_[id] = name;
  auto& slot = nodes_[name];
  slot = std::make_unique<ClientNode>(*this, **node);
  return *slot;
}

// ---- Answers ------------------------------------------------------------------------------------

void ClientGateway::OnResponse(ClientNode& node, std::string_view /*from*/,
                               ksim::Message response) {
  auto it = node.pending.find(CorrelationId(response));
  if (it == node.pending.end()) return;  // its connection broke: a late answer
  it->second.answer = std::move(response);
  auto connection = connections_.find(it->second.connection);
  KSIM_CHECK(connection != connections_.end());
  Flush(it->second.connection, connection->second, node);
}

void ClientGateway::Flush(ExternalConnectionId id, Connection& connection, ClientNode& node) {
  // In request order: an answer waits for the ones before it on its connection.
  while (!connection.order.empty()) {
    const int32_t correlation_id = connection.order.front();
    auto head = node.pending.find(correlation_id);
    KSIM_CHECK(head != node.pending.end());
    Pending& pending = head->second;
    if (!pending.answer) return;
    if (connection.open) {
      // What the client receives is what the history records (a closed connection's answers
      // never reach it: its sends stay open).
      external_history_.OnAnswer(RequestKey(node, correlation_id), *pending.answer);
      ksim::Message& response = *pending.answer;
      RewriteEndpoints(response);
      SetCorrelationId(response, pending.client_correlation_id);
      int16_t version = pending.api_version;
      if (pending.unsupported_api_versions) {
        // ApiVersionsResponse.fromError (0.10.0.1) / ApiVersionsRequest.getErrorResponse (to
        // 2.1.0): the error and no versions; KIP-511's list came with 2.4.
        auto& versions = std::get<ApiVersionsResponse>(response);
        versions.error_code = Errc::kUnsupportedVersion;
        versions.api_versions.clear();
        version = 0;
      } else if (auto* fetch = std::get_if<FetchResponse>(&response)) {
        DownConvert(*fetch, version);
      }
      ++counters_.responses;
      output_.Send(id, wire::EncodeResponse(version, response));
    } else {
      external_history_.OnLost(RequestKey(node, correlation_id));
    }
    node.pending.erase(head);
    connection.order.pop_front();
  }
}

void ClientGateway::OnDisconnect(ClientNode& node, std::string_view peer) {
  // Every request this node sent to `peer` is lost; its connections to that broker close.
  for (auto& [id, connection] : connections_) {
    if (connection.node != node.node.name() || node::Broker(connection.broker) != peer) continue;
    for (int32_t correlation_id : connection.order) {
      external_history_.OnLost(RequestKey(node, correlation_id));
      node.pending.erase(correlation_id);
    }
    connection.order.clear();
    if (connection.open) CloseByGateway(id, connection, "broker_connection_broken");
  }
}

void ClientGateway::DownConvert(FetchResponse& response, int16_t version) {
  // KafkaApis.handleFetchRequest: a client reads the formats its Fetch version knows, magic 0 up
  // to v1, 1 up to v3 (0.10.0.1: `versionId <= 1` converts to magic 0; 0.11.0.0 to 2.1.0: v0-v1
  // magic 0, v2-v3 magic 1). Only whole batches are converted; a partial one at the end, which the
  // client could not read anyway, is left out.
  const int8_t max_magic = version <= 1 ? kMagicV0 : version <= 3 ? kMagicV1 : kMagicV2;
  if (max_magic == kMagicV2) return;
  for (FetchPartitionResponse& partition : response.responses) {
    if (partition.records.empty()) continue;
    BatchIterator scan(partition.records, /*verify_crc=*/false);
    bool above = false;
    while (std::optional<BatchIterator::Item> item = scan.Next()) {
      above |= item->header.magic > max_magic;
    }
    if (!above) continue;
    const ByteView whole = ByteView(partition.records).subspan(0, scan.position());
    Result<std::optional<Bytes>> converted = ConvertBatches(whole, max_magic);
    if (!converted.ok() || !converted->has_value()) continue;  // left as the log has it
    partition.records = std::move(**converted);
  }
}

void ClientGateway::RewriteEndpoints(ksim::Message& response) const {
  auto loopback = [this](BrokerEndpoint& endpoint) {
    auto port = ports_.find(endpoint.node_id);
    if (port == ports_.end()) return;
    endpoint.host = std::string(kLoopbackHost);
    endpoint.port = port->second;
  };
  if (auto* metadata = std::get_if<MetadataResponse>(&response)) {
    for (BrokerEndpoint& broker : metadata->brokers) loopback(broker);
  } else if (auto* find = std::get_if<FindCoordinatorResponse>(&response)) {
    loopback(find->coordinator);
  }
}

}  // namespace ksim::sim
