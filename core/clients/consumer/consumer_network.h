// ConsumerNetwork: the consumer's connection to the cluster, Kafka's ConsumerNetworkClient and
// the consumer's Metadata in one piece. It owns the NetworkClient (installed as the Transport's
// handler) and
// - sends requests to a peer at once when NetworkClient::Ready, else queues them per peer in
//   order until a slot frees up (ConsumerNetworkClient's unsent queue);
// - keeps the cluster metadata for the topics of interest: the brokers (id -> host), each
//   partition's leader, each topic's partition count. A Metadata request goes to the bootstrap
//   servers or to the brokers the last answer listed, the least loaded first, when asked
//   (RequestUpdate: at most once per retry.backoff.ms) and every metadata.max.age.ms.
// - tells its owner of every metadata update and every disconnect (on_change / on_disconnect).
//
// Ownership: borrows the Transport, Timers and Clock (they outlive it). Destroying it cancels its
// timers and drops queued requests: no callback runs afterwards. One thread.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/base/clock.h"
#include "core/base/timer_group.h"
#include "core/clients/consumer/consumer.h"
#include "core/protocol/messages.h"
#include "core/protocol/network_client.h"
#include "core/protocol/transport.h"

namespace ksim {

class ConsumerNetwork {
 public:
  struct Listeners {
    std::function<void()> on_metadata;                         // after every metadata answer
    std::function<void(std::string_view peer)> on_disconnect;  // before in-flight requests fail
  };

  ConsumerNetwork(const ConsumerConfig& config, Transport& transport, Timers& timers,
                  const Clock& clock, Listeners listeners);
  ~ConsumerNetwork();
  ConsumerNetwork(const ConsumerNetwork&) = delete;
  ConsumerNetwork& operator=(const ConsumerNetwork&) = delete;

  // Sends now if the peer has a free slot, else after the requests queued before it.
  void Send(const std::string& peer, Message request, NetworkClient::ResponseCallback done);
  // A broker to ask for cluster-wide things (FindCoordinator, Metadata): the known one with the
  // fewest requests in flight or queued (Kafka's leastLoadedNode), ties rotating.
  std::string AnyBroker();

  // Kafka's ConsumerNetworkClient.disconnect: fails the requests queued for `peer` and those in
  // flight to it (NETWORK_EXCEPTION), as a disconnect notice would.
  void Disconnect(const std::string& peer);

  // Topics whose metadata is kept (added to; never removed while the consumer lives).
  void AddTopics(const std::vector<std::string>& topics);
  // Asks for a metadata update soon (at once, or retry.backoff.ms after the last request).
  void RequestUpdate();
  bool update_in_flight() const { return in_flight_; }
  // Bumped by every metadata answer.
  uint64_t version() const { return version_; }
  // Bumped by every metadata answer that changed a leader or a broker's host.
  uint64_t leaders_version() const { return leaders_version_; }
  // The partitions whose leader the answers changed since the last call (a partition may be
  // named more than once), or nullopt when any partition's may have (a broker's host changed, or
  // more changes than are worth keeping): for one reader, the Fetcher, which regroups only those.
  std::optional<std::vector<TopicPartition>> TakeLeaderChanges();

  // The leader's host, when the last metadata named a live one.
  std::optional<std::string> LeaderHost(const TopicPartition& tp) const;
  // The same without the copy: valid until the next metadata answer (null: none).
  const std::string* FindLeaderHost(const TopicPartition& tp) const;
  std::optional<int32_t> PartitionCount(const std::string& topic) const;

  // Stops everything: queued requests are dropped, no more metadata requests.
  void Shutdown();

 private:
  void SendMetadataRequest();
  void OnMetadata(const MetadataResponse& response);
  void OnReady(std::string_view peer);

  const ConsumerConfig& config_;
  const Clock& clock_;
  Listeners listeners_;
  TimerGroup timers_;
  std::unique_ptr<NetworkClient> network_;
  std::deque<std::tuple<std::string, Message, NetworkClient::ResponseCallback>> waiting_;
  bool shut_down_ = false;

  std::set<std::string> topics_;
  std::vector<std::string> known_brokers_;  // hosts of the last answer, else bootstrap
  size_t next_broker_ = 0;
  // Peers whose connection broke or was closed since the last metadata answer: AnyBroker asks
  // them last (Kafka: a closed connection must be reopened; a dead host never answers).
  std::set<std::string, std::less<>> disconnected_;
  std::map<BrokerId, std::string> hosts_;
  // Per topic, each partition's leader by partition id (kNoBroker: none), as the last answer
  // named them. A topic stays once named (its leaders emptied when an answer names it no more).
  std::map<std::string, std::vector<BrokerId>, std::less<>> leaders_;
  // FindLeaderHost's last topic (leaders_.end(): none): entries are never erased.
  mutable std::map<std::string, std::vector<BrokerId>, std::less<>>::const_iterator last_topic_ =
      leaders_.end();
  std::map<std::string, int32_t> partition_counts_;
  bool in_flight_ = false;
  bool update_requested_ = false;
  TimerId backoff_timer_ = 0;
  TimeUs last_request_us_ = -1;
  TimerId max_age_timer_ = 0;
  uint64_t version_ = 0;
  uint64_t leaders_version_ = 0;
  std::vector<TopicPartition> leader_changes_;  // since the last TakeLeaderChanges
  bool all_leaders_changed_ = true;             // ... or every partition's
};

}  // namespace ksim
