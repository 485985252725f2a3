#include "core/protocol/network_client.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "core/base/check.h"

namespace ksim {
namespace {

std::string TimedOutMessage(const std::string& peer, int32_t correlation_id) {
  return "no response from " + peer + " to correlation id " + std::to_string(correlation_id) +
         " within request.timeout.ms";
}

}  // namespace

NetworkClient::NetworkClient(Transport& transport, Timers& timers, Handlers handlers,
                             NetworkClientOptions options)
    : transport_(transport), timers_(timers), handlers_(std::move(handlers)), options_(options) {
  KSIM_CHECK(options_.max_in_flight_requests_per_connection >= 1);
  KSIM_CHECK(options_.request_timeout_us >= 0);
  transport_.SetHandler(this);
}

NetworkClient::~NetworkClient() {
  for (const auto& [correlation_id, request] : in_flight_) {
    if (request.timer != 0) timers_.Cancel(request.timer);
  }
  transport_.SetHandler(nullptr);
}

uint64_t NetworkClient::NamePrefix(std::string_view name) {
  uint64_t prefix = 0;
  if (name.size() >= sizeof(prefix)) {
    std::memcpy(&prefix, name.data(), sizeof(prefix));
  } else {
    for (size_t i = 0; i < name.size(); ++i) {
      prefix |= uint64_t{static_cast<uint8_t>(name[i])} << (8 * i);
    }
  }
  return prefix;
}

const NetworkClient::Peer* NetworkClient::FindPeer(std::string_view name) const {
  const uint64_t prefix = NamePrefix(name);
  for (const Peer& peer : peers_) {
    if (peer.prefix == prefix && peer.name.size() == name.size() &&
        (name.size() <= sizeof(prefix) || peer.name == name)) {
      return &peer;
    }
  }
  return nullptr;
}

NetworkClient::Peer* NetworkClient::FindPeer(std::string_view name) {
  return const_cast<Peer*>(std::as_const(*this).FindPeer(name));
}

NetworkClient::Peer& NetworkClient::PeerFor(std::string_view name) {
  if (Peer* peer = FindPeer(name)) return *peer;
  return peers_.emplace_back(Peer{.name = std::string(name), .prefix = NamePrefix(name)});
}

int32_t NetworkClient::in_flight(std::string_view peer) const {
  const Peer* found = FindPeer(peer);
  return found == nullptr ? 0 : found->in_flight;
}

bool NetworkClient::Ready(std::string_view peer) const {
  return in_flight(peer) < options_.max_in_flight_requests_per_connection;
}

int32_t NetworkClient::Send(std::string_view peer, Message request, ResponseCallback callback) {
  KSIM_CHECK_MSG(IsRequest(request), "NetworkClient::Send takes requests; use Respond");
  KSIM_CHECK_MSG(Ready(peer), "request to a peer that is not ready");
  const bool expects_response = ExpectsResponse(request);
  KSIM_CHECK_MSG(expects_response == static_cast<bool>(callback),
                 "a callback exactly for requests that expect a response");
  KSIM_CHECK(next_correlation_id_ < INT32_MAX);
  const int32_t correlation_id = next_correlation_id_++;
  SetCorrelationId(request, correlation_id);
  const int16_t api_key = ApiKey(request);
  ++counters_.requests_sent;
  const ConnectionId connection = transport_.Send(peer, std::move(request));
  Peer& state = PeerFor(peer);
  state.latest_connection = std::max(state.latest_connection, connection);
  if (!expects_response) return correlation_id;

  const TimerId timer = options_.request_timeout_us == kNoRequestTimeout
                            ? 0
                            : timers_.Schedule(options_.request_timeout_us, [this, correlation_id] {
                                OnTimeout(correlation_id);
                              });
  auto [it, inserted] = in_flight_.emplace(
      correlation_id, InFlight{std::string(peer), connection, timer, api_key, std::move(callback)});
  KSIM_CHECK(inserted);
  ++state.in_flight;
  KSIM_CHECK(state.in_flight <= options_.max_in_flight_requests_per_connection);
  return correlation_id;
}

void NetworkClient::Respond(std::string_view peer, ConnectionId connection, Message response) {
  KSIM_CHECK_MSG(!IsRequest(response), "Respond takes responses");
  if (!transport_.SendOn(peer, connection, std::move(response))) {
    ++counters_.responses_discarded;
    return;
  }
  ++counters_.responses_sent;
}

NetworkClient::InFlight NetworkClient::Complete(std::map<int32_t, InFlight>::iterator it) {
  InFlight request = std::move(it->second);
  in_flight_.erase(it);
  Peer* peer = FindPeer(request.peer);
  KSIM_CHECK(peer != nullptr && peer->in_flight > 0);
  --peer->in_flight;
  return request;
}

void NetworkClient::NotifyReady(const std::string& peer) {
  if (handlers_.on_ready && Ready(peer)) handlers_.on_ready(peer);
}

void NetworkClient::OnMessage(std::string_view from, ConnectionId connection, Message message) {
  if (IsRequest(message)) {
    ++counters_.requests_received;
    KSIM_CHECK_MSG(static_cast<bool>(handlers_.on_request),
                   "a request arrived at a node that serves none");
    handlers_.on_request(from, connection, std::move(message));
    return;
  }
  auto it = in_flight_.find(CorrelationId(message));
  if (it == in_flight_.end() || it->second.peer != from) {
    ++counters_.responses_dropped;  // after its timeout or disconnect, or never ours
    return;
  }
  KSIM_CHECK_MSG(it->second.api_key == ApiKey(message), "response of another kind of request");
  ++counters_.responses_received;
  InFlight request = Complete(it);
  if (request.timer != 0) timers_.Cancel(request.timer);
  request.callback(std::move(message));
  NotifyReady(request.peer);
}

void NetworkClient::OnTimeout(int32_t correlation_id) {
  auto it = in_flight_.find(correlation_id);
  KSIM_CHECK(it != in_flight_.end());  // completing a request cancels its timer
  ++counters_.timeouts;
  if (options_.disconnect_on_timeout) {
    // Kafka closes the connection the request went on. When the transport has opened a newer
    // one since (the old one broke unnoticed), the requests on the newer one are untouched and
    // the peer is still connected: the owner is not told of a disconnect.
    const std::string peer = it->second.peer;
    const ConnectionId connection = it->second.connection;
    const bool superseded = Superseded(peer, connection);
    // Kafka's handleTimedOutRequests closes the socket (selector.close): what the peer still
    // sends on it, held behind a cut, is never read.
    if (!superseded) transport_.Close(peer);
    FailConnection(peer, superseded ? connection : std::numeric_limits<ConnectionId>::max(),
                   "connection to " + peer + " closed after a request timed out", correlation_id,
                   /*tell_owner=*/!superseded);
    return;
  }
  InFlight request = Complete(it);
  request.callback(Status(Errc::kRequestTimedOut, TimedOutMessage(request.peer, correlation_id)));
  NotifyReady(request.peer);
}

void NetworkClient::OnDisconnect(std::string_view peer, ConnectionId broken_through) {
  // A notice about connections older than the one the last Send went on: they broke, but the
  // peer is connected on the newer one, so the owner hears of no disconnect (a consumer must not
  // drop its coordinator, and the JoinGroup waiting there, for an old socket's late notice).
  FailConnection(peer, broken_through, "connection to " + std::string(peer) + " broke",
                 /*timed_out=*/0, /*tell_owner=*/!Superseded(peer, broken_through));
}

bool NetworkClient::Superseded(std::string_view peer, ConnectionId connection) const {
  const Peer* found = FindPeer(peer);
  return found != nullptr && found->latest_connection > connection;
}

void NetworkClient::Disconnect(std::string_view peer) {
  FailConnection(peer, std::numeric_limits<ConnectionId>::max(),
                 "connection to " + std::string(peer) + " closed");
}

void NetworkClient::CloseConnection(std::string_view peer) {
  transport_.Close(peer);
  FailConnection(peer, std::numeric_limits<ConnectionId>::max(),
                 "connection to " + std::string(peer) + " closed");
}

void NetworkClient::FailConnection(std::string_view peer, ConnectionId through,
                                   const std::string& why, int32_t timed_out, bool tell_owner) {
  // Collect first: callbacks may send new requests, which go on a newer connection.
  std::vector<std::pair<int32_t, InFlight>> failed;
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    if (it->second.peer == peer && it->second.connection <= through) {
      const int32_t correlation_id = it->first;
      failed.emplace_back(correlation_id, Complete(it++));
    } else {
      ++it;
    }
  }
  // The owner hears of the break before any callback runs (Kafka's processDisconnection marks
  // the node disconnected first; the requests complete later in poll), so that a callback that
  // picks a node (a metadata refresh's leastLoadedNode) does not pick the one that just failed.
  if (tell_owner && handlers_.on_disconnect) handlers_.on_disconnect(peer);
  if (options_.release < KafkaRelease::k2_0) std::reverse(failed.begin(), failed.end());
  for (auto& [correlation_id, request] : failed) {
    if (correlation_id == timed_out) {  // its timer has fired
      request.callback(
          Status(Errc::kRequestTimedOut, TimedOutMessage(request.peer, correlation_id)));
      continue;
    }
    if (request.timer != 0) timers_.Cancel(request.timer);
    ++counters_.disconnect_failures;
    request.callback(Status(Errc::kNetworkException, why));
  }
  if (!failed.empty()) NotifyReady(std::string(peer));
}

}  // namespace ksim
