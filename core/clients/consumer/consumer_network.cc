#include "core/clients/consumer/consumer_network.h"

#include <algorithm>
#include <climits>
#include <utility>
#include <variant>
#include <vector>

#include "core/base/check.h"

namespace ksim {

namespace {

// Leader changes kept for the Fetcher between two of its groupings, at most.
constexpr size_t kMaxLeaderChanges = 100'000;

}  // namespace

ConsumerNetwork::ConsumerNetwork(const ConsumerConfig& config, Transport& transport, Timers& timers,
                                 const Clock& clock, Listeners listeners)
    : config_(config), clock_(clock), listeners_(std::move(listeners)), timers_(timers) {
  KSIM_CHECK(!config_.bootstrap_servers.empty());
  known_brokers_ = config_.bootstrap_servers;
  NetworkClient::Handlers handlers;
  handlers.on_ready = [this](std::string_view peer) { OnReady(peer); };
  handlers.on_disconnect = [this](std::string_view peer) {
    if (shut_down_) return;
    disconnected_.emplace(peer);
    RequestUpdate();
    if (listeners_.on_disconnect) listeners_.on_disconnect(peer);
  };
  NetworkClientOptions options;
  // Kafka's consumer allows 100 requests in flight per connection; it never has more than a few
  // (one fetch per leader, group requests), so NetworkClient's bound of 5 is never reached.
  options.request_timeout_us = static_cast<TimeUs>(config_.request_timeout_ms) * kUsPerMs;
  options.release = config_.release;
  network_ = std::make_unique<NetworkClient>(transport, timers, std::move(handlers), options);
}

ConsumerNetwork::~ConsumerNetwork() = default;

void ConsumerNetwork::Shutdown() {
  shut_down_ = true;
  waiting_.clear();
  timers_.CancelAll();
}

void ConsumerNetwork::Send(const std::string& peer, Message request,
                           NetworkClient::ResponseCallback done) {
  if (shut_down_) return;
  bool queued_before = false;
  for (const auto& waiting : waiting_) queued_before |= std::get<0>(waiting) == peer;
  if (!queued_before && network_->Ready(peer)) {
    network_->Send(peer, std::move(request), std::move(done));
  } else {
    waiting_.emplace_back(peer, std::move(request), std::move(done));
  }
}

void ConsumerNetwork::Disconnect(const std::string& peer) {
  if (shut_down_) return;
  std::vector<NetworkClient::ResponseCallback> unsent;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (std::get<0>(*it) == peer) {
      unsent.push_back(std::move(std::get<2>(*it)));
      it = waiting_.erase(it);
    } else {
      ++it;
    }
  }
  for (NetworkClient::ResponseCallback& done : unsent) {
    done(Status(Errc::kNetworkException, "connection to " + peer + " closed"));
  }
  network_->Disconnect(peer);
}

void ConsumerNetwork::OnReady(std::string_view peer) {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    auto& [to, request, done] = *it;
    if (to != peer) {
      ++it;
      continue;
    }
    if (!network_->Ready(to)) break;
    std::string target = to;
    Message message = std::move(request);
    NetworkClient::ResponseCallback callback = std::move(done);
    it = waiting_.erase(it);
    network_->Send(target, std::move(message), std::move(callback));
  }
}

// Kafka's leastLoadedNode: the broker with the fewest requests awaiting an answer or queued,
// trying them from a rotating start. A crashed broker keeps the requests sent to it until its
// disconnect notice, so a lookup after a crash goes to a live one.
std::string ConsumerNetwork::AnyBroker() {
  const std::vector<std::string>& peers =
      known_brokers_.empty() ? config_.bootstrap_servers : known_brokers_;
  const size_t start = next_broker_++;
  size_t best = start % peers.size();
  int64_t best_load = INT64_MAX;
  for (size_t i = 0; i < peers.size(); ++i) {
    const size_t index = (start + i) % peers.size();
    int64_t load = network_->in_flight(peers[index]);
    if (disconnected_.count(peers[index])) load += INT32_MAX;  // only when all are
    for (const auto& waiting : waiting_) load += std::get<0>(waiting) == peers[index] ? 1 : 0;
    if (load < best_load) {
      best = index;
      best_load = load;
    }
  }
  return peers[best];
}

void ConsumerNetwork::AddTopics(const std::vector<std::string>& topics) {
  bool added = false;
  for (const std::string& topic : topics) added |= topics_.insert(topic).second;
  if (added) RequestUpdate();
}

void ConsumerNetwork::RequestUpdate() {
  if (shut_down_ || topics_.empty()) return;
  update_requested_ = true;
  if (in_flight_ || backoff_timer_ != 0) return;
  const TimeUs backoff_us = config_.retry_backoff_ms * kUsPerMs;
  const TimeUs now = clock_.Now();
  if (last_request_us_ >= 0 && now - last_request_us_ < backoff_us) {
    backoff_timer_ = timers_.Schedule(last_request_us_ + backoff_us - now, [this] {
      backoff_timer_ = 0;
      if (update_requested_) SendMetadataRequest();
    });
    return;
  }
  SendMetadataRequest();
}

void ConsumerNetwork::SendMetadataRequest() {
  if (shut_down_ || in_flight_) return;
  in_flight_ = true;
  update_requested_ = false;
  last_request_us_ = clock_.Now();
  MetadataRequest request;
  request.topics = std::vector<std::string>(topics_.begin(), topics_.end());
  const std::string peer = AnyBroker();
  Send(peer, std::move(request), [this, peer](Result<Message> response) {
    in_flight_ = false;
    const MetadataResponse* metadata =
        response.ok() ? std::get_if<MetadataResponse>(&*response) : nullptr;
    if (metadata == nullptr) {
      // Not asked again until the others were (then: the bootstrap list).
      std::erase(known_brokers_, peer);
      RequestUpdate();
      return;
    }
    OnMetadata(*metadata);
  });
}

void ConsumerNetwork::OnMetadata(const MetadataResponse& response) {
  ++version_;
  disconnected_.clear();
  known_brokers_.clear();
  std::map<BrokerId, std::string> hosts;
  for (const BrokerEndpoint& broker : response.brokers) {
    known_brokers_.push_back(broker.host);
    hosts[broker.node_id] = broker.host;
  }
  bool changed = hosts != hosts_;
  if (changed) {
    hosts_ = std::move(hosts);
    all_leaders_changed_ = true;
  }
  bool incomplete = false;
  std::vector<BrokerId> led;
  for (const TopicMetadata& topic : response.topic_metadata) {
    // The topic's leaders become the answer's, by partition id (kNoBroker: none); a partition
    // named twice takes the last.
    led.clear();
    if (topic.error_code != Errc::kNone) {
      partition_counts_.erase(topic.topic);
      incomplete = true;
    } else {
      partition_counts_[topic.topic] = static_cast<int32_t>(topic.partition_metadata.size());
      led.reserve(topic.partition_metadata.size());
      for (const PartitionMetadata& partition : topic.partition_metadata) {
        if (partition.error_code != Errc::kNone || partition.leader == kNoBroker) {
          incomplete = true;
          continue;
        }
        KSIM_CHECK(partition.partition.value() >= 0);
        const auto at = static_cast<size_t>(partition.partition.value());
        if (at < led.size()) {
          led[at] = partition.leader;
        } else {
          // The next partition, in the answer's order (by id): appended, without a resize call.
          if (at > led.size()) led.resize(at, kNoBroker);
          led.push_back(partition.leader);
        }
      }
    }
    auto it = leaders_.find(topic.topic);
    if (it == leaders_.end()) {
      if (led.empty()) continue;
      it = leaders_.emplace(topic.topic, std::vector<BrokerId>{}).first;
    }
    if (it->second != led) {
      if (!all_leaders_changed_) {
        const std::vector<BrokerId>& before = it->second;
        const size_t compared = std::max(before.size(), led.size());
        for (size_t i = 0; i < compared; ++i) {
          const BrokerId was = i < before.size() ? before[i] : kNoBroker;
          const BrokerId now = i < led.size() ? led[i] : kNoBroker;
          if (was != now) {
            leader_changes_.push_back(
                TopicPartition{topic.topic, PartitionId(static_cast<int32_t>(i))});
          }
        }
      }
      it->second.swap(led);  // (led is cleared for the next topic)
      changed = true;
    }
  }
  // A reader that stopped reading (or a flood of changes) costs no more than a regrouping.
  if (leader_changes_.size() > kMaxLeaderChanges) {
    leader_changes_.clear();
    all_leaders_changed_ = true;
  }
  if (changed) ++leaders_version_;
  timers_.Cancel(max_age_timer_);
  max_age_timer_ = timers_.Schedule(config_.metadata_max_age_ms * kUsPerMs, [this] {
    max_age_timer_ = 0;
    RequestUpdate();
  });
  // Offline partitions or unknown topics: ask again (Kafka's metadata refresh after backoff).
  if (incomplete) RequestUpdate();
  if (update_requested_ && !incomplete) RequestUpdate();
  if (listeners_.on_metadata) listeners_.on_metadata();
}

std::optional<std::string> ConsumerNetwork::LeaderHost(const TopicPartition& tp) const {
  const std::string* host = FindLeaderHost(tp);
  if (host == nullptr) return std::nullopt;
  return *host;
}

std::optional<std::vector<TopicPartition>> ConsumerNetwork::TakeLeaderChanges() {
  std::optional<std::vector<TopicPartition>> changes;
  if (!all_leaders_changed_) changes = std::move(leader_changes_);
  leader_changes_.clear();
  all_leaders_changed_ = false;
  return changes;
}

const std::string* ConsumerNetwork::FindLeaderHost(const TopicPartition& tp) const {
  // The topic found last first: a walk of the assignment asks for one topic's partitions in turn.
  if (last_topic_ == leaders_.end() || last_topic_->first != tp.topic) {
    last_topic_ = leaders_.find(tp.topic);
    if (last_topic_ == leaders_.end()) return nullptr;
  }
  const std::vector<BrokerId>& led = last_topic_->second;
  const int32_t partition = tp.partition.value();
  if (partition < 0 || static_cast<size_t>(partition) >= led.size()) return nullptr;
  const BrokerId leader = led[static_cast<size_t>(partition)];
  if (leader == kNoBroker) return nullptr;
  auto host = hosts_.find(leader);
  if (host == hosts_.end()) return nullptr;
  return &host->second;
}

std::optional<int32_t> ConsumerNetwork::PartitionCount(const std::string& topic) const {
  auto it = partition_counts_.find(topic);
  if (it == partition_counts_.end()) return std::nullopt;
  return it->second;
}

}  // namespace ksim
