// ControllerChannelManager: how the active controller reaches brokers (Kafka 0.10's
// ControllerChannelManager with one RequestSendThread per broker), over the broker's own
// NetworkClient. One queue per broker: requests leave one at a time, in the order queued; the
// next leaves when the previous one is answered. A send that fails (REQUEST_TIMED_OUT,
// NETWORK_EXCEPTION) is sent again after `retry_backoff_us` (Kafka's RequestSendThread retries
// every 100 ms until the broker is removed), and so is one that finds the peer not Ready().
// Requests to the controller's own broker go through `deliver_local` (a Transport cannot send to
// its own node), still one at a time and in order.
//
// Peers are addressed by their registration's host (the simulator's node name, "broker-2").
//
// Ownership: borrows the NetworkClient and Timers (both must outlive it). Destroying it (the
// broker crashed or resigned) cancels its timers; no callback of its runs afterwards, and
// responses to what it sent are dropped. Single-threaded.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>

#include "core/base/clock.h"
#include "core/controller/controller.h"
#include "core/protocol/messages.h"
#include "core/protocol/network_client.h"

namespace ksim {

class ControllerChannelManager final : public ControllerChannel {
 public:
  // Hands a request to the local broker; it calls the function it is given with the response
  // (later or at once).
  using DeliverLocal =
      std::function<void(Message request, std::function<void(Message response)> respond)>;

  // REQUIRES: retry_backoff_us > 0; deliver_local non-empty.
  ControllerChannelManager(BrokerId local, NetworkClient& client, Timers& timers,
                           DeliverLocal deliver_local, TimeUs retry_backoff_us = 100'000);
  ~ControllerChannelManager() override;
  ControllerChannelManager(const ControllerChannelManager&) = delete;
  ControllerChannelManager& operator=(const ControllerChannelManager&) = delete;

  // ControllerChannel.
  void AddBroker(BrokerId broker, const BrokerEndpoint& endpoint) override;
  void RemoveBroker(BrokerId broker) override;
  void Send(BrokerId broker, Message request, ResponseCallback done) override;

  // Optional: the owner may forward NetworkClient's on_ready so that a waiting queue leaves at
  // once instead of after its retry timer.
  void OnReady(std::string_view peer);

  bool HasBroker(BrokerId broker) const { return queues_.contains(broker); }
  // Requests queued for `broker`, the one in flight included (0 when unknown).
  size_t queued(BrokerId broker) const;
  uint64_t retries() const { return retries_; }

 private:
  struct Item {
    Message request;
    ResponseCallback done;
  };
  struct Queue {
    BrokerEndpoint endpoint;
    uint64_t incarnation = 0;  // tells a re-added broker's queue from the removed one
    std::deque<Item> items;
    bool in_flight = false;
    TimerId retry_timer = 0;
  };

  void Pump(BrokerId broker);
  void OnResponse(BrokerId broker, uint64_t incarnation, Result<Message> response);
  void RetryLater(BrokerId broker, Queue& queue);

  BrokerId local_;
  NetworkClient& client_;
  Timers& timers_;
  DeliverLocal deliver_local_;
  TimeUs retry_backoff_us_;
  std::shared_ptr<bool> token_ = std::make_shared<bool>(true);
  std::map<BrokerId, Queue> queues_;
  uint64_t next_incarnation_ = 1;
  uint64_t retries_ = 0;
};

}  // namespace ksim
