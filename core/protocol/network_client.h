// NetworkClient: a node's request tracker, in the manner of Kafka's NetworkClient and
// InFlightRequests. It sits between the node's Transport and its logic:
//
//   Transport --OnMessage/OnDisconnect--> NetworkClient --on_request--> broker/client logic
//                                                      \--callbacks---> whoever sent a request
//
// Rules (docs/protocol.md, "NetworkClient"):
// - Send assigns the next correlation id (1, 2, ...), sends the request and remembers it with its
//   callback until exactly one of these happens, which the callback then hears:
//     the response from that peer with that correlation id   -> the response;
//     request_timeout_us passes (request.timeout.ms; unless 0)  -> REQUEST_TIMED_OUT;
//     the connection it went on is reported broken            -> NETWORK_EXCEPTION.
//   A response that matches nothing in flight (late, after a timeout or a disconnect; or from
//   another peer) is dropped and counted. With disconnect_on_timeout (Kafka's clients:
//   NetworkClient.handleTimedOutRequests closes the connection), a timeout also fails every
//   other request in flight on the connection it went on (and older ones) with
//   NETWORK_EXCEPTION, as Disconnect does; the Transport keeps its connection (late answers on it
//   are dropped as above). When a later Send already went on a newer connection to that peer
//   (the old one broke without a notice yet), the requests on the newer one stay and the owner
//   hears of no disconnect: Kafka closes only the timed-out request's connection. A Transport
//   notice about connections older than the last Send's likewise fails the requests on them and
//   is not passed to the owner: the peer is connected on the newer one.
// - At most max_in_flight_requests_per_connection requests await a response per peer. As in
//   Kafka, Send to a peer that is not Ready() is a programmer error: callers check Ready() and
//   wait (on_ready tells them when a slot frees up).
// - A request that expects no response (Produce with acks=0) is fire-and-forget: it takes no
//   slot and has no callback; it is complete once Send returns (Kafka completes it when the send
//   finishes, and the producer cannot learn its fate).
// - Incoming requests go to on_request with the sender's name; the node answers with Respond,
//   copying the request's correlation id into the response, on the connection the request came
//   on (a response for a connection that broke since is dropped, as Kafka's RequestChannel drops
//   a response for a closed connection).
// - Callbacks run from the Transport's and the Timers' events, never inside Send. A callback
//   may Send again; it must not destroy the NetworkClient.
//
// Determinism: ordered containers only; failures on a disconnect run oldest request first.
// Ownership: borrows the Transport and Timers (both must outlive it) and installs itself as the
// Transport's handler. Destroying it cancels its timers; no callback runs afterwards (a crashed
// node drops its NetworkClient with its Transport). Single-threaded.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/clock.h"
#include "core/base/status.h"
#include "core/config/kafka_version.h"
#include "core/protocol/messages.h"
#include "core/protocol/transport.h"

namespace ksim {

// NetworkClientOptions::request_timeout_us for a client that never times a request out (Kafka
// 0.8.2's NetworkClient): a request ends with its answer or its connection's break.
inline constexpr TimeUs kNoRequestTimeout = 0;

struct NetworkClientOptions {
  // Kafka: max.in.flight.requests.per.connection (5).
  int32_t max_in_flight_requests_per_connection = 5;
  // Kafka: request.timeout.ms (30000 in 0.10's producer, 40000 in its consumer: the owner sets
  // what its role uses); kNoRequestTimeout: none.
  TimeUs request_timeout_us = 30'000'000;
  // A request timing out closes the connection to its peer (see the header comment).
  bool disconnect_on_timeout = false;
  // The owner's release: in which order a broken connection's requests complete. Kafka's
  // InFlightRequests keeps a node's requests newest first (addFirst) and clearAll handed them over
  // in that order until 2.0, which completes them oldest first (descendingIterator, "Complete
  // inflight requests in order on disconnect", apache/kafka#4642). A producer without idempotence
  // puts each failed batch back at the head of its queue (addFirst), so its retries keep the send
  // order before 2.0 and run in reverse from it.
  KafkaRelease release = kLatestKafkaRelease;
};

struct NetworkClientCounters {
  uint64_t requests_sent = 0;       // including fire-and-forget ones
  uint64_t responses_received = 0;  // matched to a request in flight
  uint64_t responses_dropped = 0;   // matched nothing (late or unknown)
  uint64_t timeouts = 0;
  uint64_t disconnect_failures = 0;  // requests failed with NETWORK_EXCEPTION
  uint64_t requests_received = 0;
  uint64_t responses_sent = 0;
  uint64_t responses_discarded = 0;  // their request's connection broke before the answer
};

class NetworkClient final : public TransportHandler {
 public:
  // The response, or REQUEST_TIMED_OUT / NETWORK_EXCEPTION.
  using ResponseCallback = std::function<void(Result<Message> response)>;

  struct Handlers {
    // An incoming request (never a response), and the connection it came on, which its
    // response must name. Required if peers send this node requests.
    std::function<void(std::string_view from, ConnectionId connection, Message request)> on_request;
    // Told when a disconnect notice (or Disconnect) for `peer` arrives, before the callbacks of
    // the requests it fails run (Kafka marks the node disconnected first); not for a notice or
    // timeout that concerns only connections older than the last Send's.
    std::function<void(std::string_view peer)> on_disconnect;
    // Told when a request to `peer` completed in any way and `peer` is Ready() again.
    std::function<void(std::string_view peer)> on_ready;
  };

  // REQUIRES: max_in_flight_requests_per_connection >= 1, request_timeout_us >= 0.
  NetworkClient(Transport& transport, Timers& timers, Handlers handlers,
                NetworkClientOptions options = {});
  ~NetworkClient() override;
  NetworkClient(const NetworkClient&) = delete;
  NetworkClient& operator=(const NetworkClient&) = delete;

  // True when a request to `peer` may be sent now (fewer than the bound await a response).
  bool Ready(std::string_view peer) const;
  // Sends `request` and returns its correlation id. REQUIRES: IsRequest(request), Ready(peer),
  // and `callback` non-empty exactly when ExpectsResponse(request).
  int32_t Send(std::string_view peer, Message request, ResponseCallback callback);
  // Closes the connection to `peer` as Kafka's NetworkClient.disconnect does: every request to it
  // in flight fails with NETWORK_EXCEPTION now (their late answers are dropped), then
  // on_disconnect and on_ready run as for a disconnect notice. The next Send opens a new one.
  void Disconnect(std::string_view peer);
  // Answers a request from `peer` that came on `connection` (as on_request gave it). When that
  // connection has broken since, the response is dropped (counted in responses_discarded): a
  // late answer never reaches a newer connection, whose requests reuse correlation ids (a
  // restarted client counts from 1 again). REQUIRES: !IsRequest(response); its correlation id
  // is the request's.
  void Respond(std::string_view peer, ConnectionId connection, Message response);
  // Closes the connection to `peer` on the Transport (the peer hears of it; a server's side of a
  // close), then fails what this node has in flight to it as Disconnect does.
  void CloseConnection(std::string_view peer);

  int32_t in_flight(std::string_view peer) const;
  size_t in_flight() const { return in_flight_.size(); }
  const NetworkClientCounters& counters() const { return counters_; }
  const NetworkClientOptions& options() const { return options_; }
  const std::string& local() const { return transport_.local(); }

  // TransportHandler.
  void OnMessage(std::string_view from, ConnectionId connection, Message message) override;
  void OnDisconnect(std::string_view peer, ConnectionId broken_through) override;

 private:
  struct InFlight {
    std::string peer;
    ConnectionId connection;
    TimerId timer;  // 0 when nothing times the request out (kNoRequestTimeout)
    int16_t api_key;
    ResponseCallback callback;
  };

  void OnTimeout(int32_t correlation_id);
  // Fails the requests in flight to `peer` on connections up to `through`, then tells the owner
  // (unless `tell_owner` is false). The request `timed_out` (a correlation id, or 0) fails with
  // REQUEST_TIMED_OUT instead.
  void FailConnection(std::string_view peer, ConnectionId through, const std::string& why,
                      int32_t timed_out = 0, bool tell_owner = true);
  // Whether a Send to `peer` went on a newer connection than `connection`.
  bool Superseded(std::string_view peer, ConnectionId connection) const;
  // Removes the request from the in-flight set and returns it.
  InFlight Complete(std::map<int32_t, InFlight>::iterator it);
  void NotifyReady(const std::string& peer);

  Transport& transport_;
  Timers& timers_;
  Handlers handlers_;
  NetworkClientOptions options_;
  int32_t next_correlation_id_ = 1;
  std::map<int32_t, InFlight> in_flight_;  // by correlation id = send order
  // What is kept of each peer sent to: a few (the brokers), searched in order, where a map keyed
  // by the name compared whole names at every step of every request's lookups.
  struct Peer {
    std::string name;
    uint64_t prefix = 0;                 // NamePrefix(name): what FindPeer compares first
    int32_t in_flight = 0;               // requests awaiting a response
    ConnectionId latest_connection = 0;  // the last Send's
  };
  // A name's first eight bytes (zeros past its end) as one word: peers' names ("broker-1", ...)
  // are told apart by it alone, without a string comparison (a request looks its peer up some
  // five times on its way).
  static uint64_t NamePrefix(std::string_view name);
  const Peer* FindPeer(std::string_view name) const;
  Peer* FindPeer(std::string_view name);
  Peer& PeerFor(std::string_view name);  // added on first use
  std::vector<Peer> peers_;
  NetworkClientCounters counters_;
};

}  // namespace ksim
