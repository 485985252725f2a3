// ControllerChannelManager (core/controller/channel.h) over the broker's NetworkClient and a
// SimTransport on the virtual network: the controller's node broker-1 sends to a peer broker-2
// that records requests and answers them (or holds the answers), and to itself through
// deliver_local. Kafka's ControllerChannelManager gives the same guarantees: one request in
// flight per broker, in order, retried until answered or the broker is removed.
#include "core/controller/channel.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/base/random.h"
#include "core/protocol/messages.h"
#include "core/protocol/network_client.h"
#include "sim/kernel/event_loop.h"
#include "sim/world/network.h"
#include "sim/world/sim_transport.h"
#include "sim/world/topology.h"

namespace ksim::sim {
namespace {

constexpr TimeUs kSecondUs = 1'000'000;

// A request tagged by its controller epoch, so that tests can follow it.
ksim::Message Tagged(int32_t tag) {
  UpdateMetadataRequest request;
  request.controller_id = BrokerId(1);
  request.controller_epoch = ControllerEpoch(tag);
  return request;
}

int32_t TagOf(const ksim::Message& message) {
  return std::get<UpdateMetadataRequest>(message).controller_epoch.value();
}

class ControllerChannelTest : public ::testing::Test {
 protected:
  ControllerChannelTest() {
    topology_ = Topology::FullMesh({"broker-1", "broker-2"}, LinkSpec{1000, 3000, 0, 0});
    NetworkOptions network_options;
    network_options.disconnect_timeout_us = 100'000;
    network_ = std::make_unique<Network>(loop_, *topology_, RandomStream(3), network_options);
    peer_transport_ = std::make_unique<SimTransport>(*network_, "broker-2");
    peer_transport_->Attach();
    peer_ = std::make_unique<NetworkClient>(
        *peer_transport_, loop_,
        NetworkClient::Handlers{
            .on_request =
                [this](std::string_view from, ConnectionId connection, ksim::Message request) {
                  peer_received_.push_back(TagOf(request));
                  held_.push_back(Held{std::string(from), connection, std::move(request)});
                  if (!holding_) Release();
                },
            .on_disconnect = nullptr,
            .on_ready = nullptr});
    transport_ = std::make_unique<SimTransport>(*network_, "broker-1");
    transport_->Attach();
    NetworkClientOptions options;
    options.request_timeout_us = 500'000;
    client_ =
        std::make_unique<NetworkClient>(*transport_, loop_,
                                        NetworkClient::Handlers{.on_request = nullptr,
                                                                .on_disconnect = nullptr,
                                                                .on_ready =
                                                                    [this](std::string_view peer) {
                                                                      if (channel_)
                                                                        channel_->OnReady(peer);
                                                                    }},
                                        options);
    channel_ = std::make_unique<ControllerChannelManager>(
        BrokerId(1), *client_, loop_,
        [this](ksim::Message request, std::function<void(ksim::Message)> respond) {
          local_received_.push_back(TagOf(request));
          local_pending_.push_back(std::move(respond));
        },
        100'000);
    BrokerEndpoint self{BrokerId(1), "broker-1", 9092, std::nullopt};
    BrokerEndpoint peer{BrokerId(2), "broker-2", 9092, std::nullopt};
    channel_->AddBroker(BrokerId(1), self);
    channel_->AddBroker(BrokerId(2), peer);
  }

  ~ControllerChannelTest() override {
    channel_.reset();
    client_.reset();
    peer_.reset();
  }

  // Answers every held request from the peer.
  void Release() {
    std::vector<Held> held = std::move(held_);
    held_.clear();
    for (Held& h : held) {
      UpdateMetadataResponse response;
      response.correlation_id = CorrelationId(h.request);
      peer_->Respond(h.from, h.connection, response);
    }
  }

  void Send(BrokerId broker, int32_t tag) {
    channel_->Send(broker, Tagged(tag), [this, tag](const ksim::Message& response) {
      EXPECT_TRUE(std::holds_alternative<UpdateMetadataResponse>(response));
      answered_.push_back(tag);
    });
  }

  bool RunUntil(const std::function<bool()>& done, TimeUs budget_us = 30 * kSecondUs) {
    const TimeUs deadline = loop_.Now() + budget_us;
    while (!done()) {
      const std::optional<EventLoop::NextEvent> next = loop_.PeekNext();
      if (!next || next->time_us > deadline) return false;
      loop_.Step();
    }
    return true;
  }

  EventLoop loop_;
  std::unique_ptr<Topology> topology_;
  std::unique_ptr<Network> network_;
  std::unique_ptr<SimTransport> peer_transport_;
  std::unique_ptr<NetworkClient> peer_;
  std::unique_ptr<SimTransport> transport_;
  std::unique_ptr<NetworkClient> client_;
  std::unique_ptr<ControllerChannelManager> channel_;
  bool holding_ = false;
  struct Held {
    std::string from;
    ConnectionId connection;
    ksim::Message request;
  };
  std::vector<Held> held_;
  std::vector<int32_t> peer_received_;
  std::vector<int32_t> local_received_;
  std::vector<std::function<void(ksim::Message)>> local_pending_;
  std::vector<int32_t> answered_;
};

TEST_F(ControllerChannelTest, RequestsToABrokerLeaveOneAtATimeInOrder) {
  holding_ = true;
  Send(BrokerId(2), 1);
  Send(BrokerId(2), 2);
  Send(BrokerId(2), 3);
  ASSERT_TRUE(RunUntil([&] { return peer_received_.size() == 1; }));
  loop_.RunUntil(loop_.Now() + 100'000);
  EXPECT_EQ(peer_received_, std::vector<int32_t>{1});  // the next waits for the answer
  EXPECT_EQ(channel_->queued(BrokerId(2)), 3u);
  for (size_t answered = 1; answered <= 3; ++answered) {
    Release();
    ASSERT_TRUE(RunUntil([&] { return answered_.size() == answered; }));
    if (answered < 3) {
      ASSERT_TRUE(RunUntil([&] { return peer_received_.size() == answered + 1; }));
    }
  }
  EXPECT_EQ(peer_received_, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(answered_, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(channel_->queued(BrokerId(2)), 0u);
}

TEST_F(ControllerChannelTest, FailedSendIsRetriedUntilTheBrokerAnswers) {
  ASSERT_TRUE(topology_->SetNodeUp("broker-2", false).ok());
  Send(BrokerId(2), 1);
  Send(BrokerId(2), 2);
  loop_.RunUntil(loop_.Now() + 3 * kSecondUs);
  EXPECT_TRUE(answered_.empty());
  EXPECT_GT(channel_->retries(), 0u);
  ASSERT_TRUE(topology_->SetNodeUp("broker-2", true).ok());
  ASSERT_TRUE(RunUntil([&] { return answered_.size() == 2; }));
  EXPECT_EQ(answered_, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(peer_received_, (std::vector<int32_t>{1, 2}));
}

TEST_F(ControllerChannelTest, UnansweredRequestIsSentAgainAfterTheTimeout) {
  holding_ = true;
  Send(BrokerId(2), 1);
  // The first copy is never answered: request.timeout.ms passes and the same request goes again.
  ASSERT_TRUE(RunUntil([&] { return peer_received_.size() == 2; }));
  EXPECT_EQ(peer_received_, (std::vector<int32_t>{1, 1}));
  // The first copy's answer would come too late (its request timed out): drop it, answer the
  // second.
  held_.erase(held_.begin());
  Release();
  ASSERT_TRUE(RunUntil([&] { return answered_.size() == 1; }));
  EXPECT_EQ(answered_, std::vector<int32_t>{1});
}

TEST_F(ControllerChannelTest, RemovedBrokerLosesItsQueueAndLateAnswers) {
  holding_ = true;
  Send(BrokerId(2), 1);
  Send(BrokerId(2), 2);
  ASSERT_TRUE(RunUntil([&] { return peer_received_.size() == 1; }));
  channel_->RemoveBroker(BrokerId(2));
  EXPECT_FALSE(channel_->HasBroker(BrokerId(2)));
  Send(BrokerId(2), 3);  // dropped: no queue
  Release();
  loop_.RunUntil(loop_.Now() + 2 * kSecondUs);
  EXPECT_TRUE(answered_.empty());
  EXPECT_EQ(peer_received_, std::vector<int32_t>{1});

  // Added again: a fresh queue.
  holding_ = false;
  channel_->AddBroker(BrokerId(2), BrokerEndpoint{BrokerId(2), "broker-2", 9092, std::nullopt});
  Send(BrokerId(2), 4);
  ASSERT_TRUE(RunUntil([&] { return answered_.size() == 1; }));
  EXPECT_EQ(answered_, std::vector<int32_t>{4});
}

TEST_F(ControllerChannelTest, LocalRequestsGoThroughDeliverLocalInOrder) {
  Send(BrokerId(1), 1);
  Send(BrokerId(1), 2);
  ASSERT_TRUE(RunUntil([&] { return local_received_.size() == 1; }));
  loop_.RunUntil(loop_.Now() + kSecondUs);
  EXPECT_EQ(local_received_, std::vector<int32_t>{1});
  auto respond = std::move(local_pending_.front());
  local_pending_.clear();
  respond(UpdateMetadataResponse{});
  EXPECT_EQ(answered_, std::vector<int32_t>{1});
  ASSERT_TRUE(RunUntil([&] { return local_received_.size() == 2; }));
  local_pending_.front()(UpdateMetadataResponse{});
  EXPECT_EQ(answered_, (std::vector<int32_t>{1, 2}));
  EXPECT_TRUE(peer_received_.empty());
}

TEST_F(ControllerChannelTest, DestroyedChannelRunsNoCallback) {
  holding_ = true;
  Send(BrokerId(2), 1);
  Send(BrokerId(1), 2);
  ASSERT_TRUE(RunUntil([&] { return peer_received_.size() == 1 && local_received_.size() == 1; }));
  channel_.reset();
  Release();
  local_pending_.front()(UpdateMetadataResponse{});
  loop_.RunUntil(loop_.Now() + 2 * kSecondUs);
  EXPECT_TRUE(answered_.empty());
}

}  // namespace
}  // namespace ksim::sim
