#include "core/controller/channel.h"

#include <utility>

#include "core/base/check.h"

namespace ksim {

ControllerChannelManager::ControllerChannelManager(BrokerId local, NetworkClient& client,
                                                   Timers& timers, DeliverLocal deliver_local,
                                                   TimeUs retry_backoff_us)
    : local_(local),
      client_(client),
      timers_(timers),
      deliver_local_(std::move(deliver_local)),
      retry_backoff_us_(retry_backoff_us) {
  KSIM_CHECK(retry_backoff_us_ > 0);
  KSIM_CHECK(static_cast<bool>(deliver_local_));
}

ControllerChannelManager::~ControllerChannelManager() {
  *token_ = false;
  for (auto& [broker, queue] : queues_) {
    if (queue.retry_timer != 0) timers_.Cancel(queue.retry_timer);
  }
}

void ControllerChannelManager::AddBroker(BrokerId broker, const BrokerEndpoint& endpoint) {
  // Kafka's addBroker ignores a broker it already has (the queue keeps its requests).
  auto [it, inserted] = queues_.try_emplace(broker);
  it->second.endpoint = endpoint;
  if (inserted) it->second.incarnation = next_incarnation_++;
}

void ControllerChannelManager::RemoveBroker(BrokerId broker) {
  auto it = queues_.find(broker);
  if (it == queues_.end()) return;
  if (it->second.retry_timer != 0) timers_.Cancel(it->second.retry_timer);
  // Whatever is queued or in flight is dropped (Kafka's removeBroker stops the send thread and
  // clears its queue); a late response finds no queue of that incarnation.
  queues_.erase(it);
}

void ControllerChannelManager::Send(BrokerId broker, Message request, ResponseCallback done) {
  KSIM_CHECK(IsRequest(request));
  auto it = queues_.find(broker);
  if (it == queues_.end())
    return;  // Kafka: "Not sending request ... to broker, since it is offline"
  it->second.items.push_back(Item{std::move(request), std::move(done)});
  Pump(broker);
}

void ControllerChannelManager::OnReady(std::string_view peer) {
  for (auto& [broker, queue] : queues_) {
    if (queue.endpoint.host == peer && !queue.in_flight && queue.retry_timer == 0) {
      Pump(broker);
      return;
    }
  }
}

size_t ControllerChannelManager::queued(BrokerId broker) const {
  auto it = queues_.find(broker);
  return it == queues_.end() ? 0 : it->second.items.size();
}

void ControllerChannelManager::RetryLater(BrokerId broker, Queue& queue) {
  KSIM_CHECK(queue.retry_timer == 0);
  ++retries_;
  queue.retry_timer = timers_.Schedule(
      retry_backoff_us_, [this, token = token_, broker, incarnation = queue.incarnation] {
        if (!*token) return;
        auto it = queues_.find(broker);
        if (it == queues_.end() || it->second.incarnation != incarnation) return;
        it->second.retry_timer = 0;
        Pump(broker);
      });
}

void ControllerChannelManager::Pump(BrokerId broker) {
  auto it = queues_.find(broker);
  if (it == queues_.end()) return;
  Queue& queue = it->second;
  if (queue.in_flight || queue.retry_timer != 0 || queue.items.empty()) return;
  const uint64_t incarnation = queue.incarnation;
  if (broker == local_) {
    queue.in_flight = true;
    deliver_local_(queue.items.front().request,
                   [this, token = token_, broker, incarnation](Message response) {
                     if (!*token) return;
                     OnResponse(broker, incarnation, std::move(response));
                   });
    return;
  }
  const std::string& peer = queue.endpoint.host;
  if (!client_.Ready(peer)) {
    RetryLater(broker, queue);
    return;
  }
  queue.in_flight = true;
  client_.Send(peer, queue.items.front().request,
               [this, token = token_, broker, incarnation](Result<Message> response) {
                 if (!*token) return;
                 OnResponse(broker, incarnation, std::move(response));
               });
}

void ControllerChannelManager::OnResponse(BrokerId broker, uint64_t incarnation,
                                          Result<Message> response) {
  auto it = queues_.find(broker);
  if (it == queues_.end() || it->second.incarnation != incarnation) return;
  Queue& queue = it->second;
  KSIM_CHECK(queue.in_flight);
  KSIM_CHECK(!queue.items.empty());
  queue.in_flight = false;
  if (!response.ok()) {
    // RequestSendThread: "Controller's connection to broker was unsuccessful", then it backs off
    // and sends the same request again.
    RetryLater(broker, queue);
    return;
  }
  ResponseCallback done = std::move(queue.items.front().done);
  queue.items.pop_front();
  // The callback may Send, AddBroker or RemoveBroker: pump again only after it, by id.
  if (done) done(*response);
  Pump(broker);
}

}  // namespace ksim
