// ConsumerNetwork over a scripted Transport: where its metadata requests go when a connection
// breaks (issue 17, R5). Kafka's NetworkClient marks a node disconnected before the requests it
// failed complete, so a fetch callback that asks for metadata sends it to another broker
// (leastLoadedNode skips a node in reconnect backoff). Before, the callbacks ran first and the
// refresh went straight back to the broker that had just failed.
#include "core/clients/consumer/consumer_network.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ksim {
namespace {

// Remembers what was sent; the test delivers answers and notices through handler().
class ScriptedTransport final : public Transport {
 public:
  struct Sent {
    std::string to;
    Message message;
  };

  const std::string& local() const override { return local_; }
  void SetHandler(TransportHandler* handler) override { handler_ = handler; }
  ConnectionId Send(std::string_view to, Message message) override {
    sent.push_back({std::string(to), std::move(message)});
    return 1;
  }
  bool SendOn(std::string_view to, ConnectionId connection, Message message) override {
    if (connection != 1) return false;
    Send(to, std::move(message));
    return true;
  }
  TransportHandler& handler() { return *handler_; }

  std::vector<Sent> sent;

 private:
  std::string local_ = "c1";
  TransportHandler* handler_ = nullptr;
};

// Keeps callbacks without running them (the request timeouts never fire here).
class HeldTimers final : public Timers {
 public:
  TimerId Schedule(TimeUs, std::function<void()> callback) override {
    callbacks_.emplace(next_, std::move(callback));
    return next_++;
  }
  void Cancel(TimerId id) override { callbacks_.erase(id); }
  // Runs the callbacks held now (not those they schedule).
  void RunHeld() {
    std::map<TimerId, std::function<void()>> held = std::move(callbacks_);
    callbacks_.clear();
    for (auto& [id, callback] : held) callback();
  }

 private:
  std::map<TimerId, std::function<void()>> callbacks_;
  TimerId next_ = 1;
};

FetchRequest AFetch() {
  FetchRequest request;
  request.replica_id = kConsumerReplicaId;
  request.partitions.push_back(
      FetchPartition{TopicPartition{"t", PartitionId(0)}, Offset(0), kUndefinedOffset, 1 << 20});
  return request;
}

TEST(ConsumerNetworkTest, MetadataAskedByAFailedFetchGoesToAnotherBroker) {
  Result<ConsumerConfig> config =
      ParseConsumerConfig({{"bootstrap.servers", "broker-1,broker-2,broker-3"}});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  ScriptedTransport transport;
  HeldTimers timers;
  ManualClock clock(1'000'000);
  ConsumerNetwork network(*config, transport, timers, clock, {});

  // The first metadata request, answered with the three brokers.
  network.AddTopics({"t"});
  ASSERT_EQ(transport.sent.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<MetadataRequest>(transport.sent[0].message));
  MetadataResponse metadata;
  for (int id = 1; id <= 3; ++id) {
    metadata.brokers.push_back(BrokerEndpoint{BrokerId(id), "broker-" + std::to_string(id)});
  }
  Message answer = std::move(metadata);
  SetCorrelationId(answer, CorrelationId(transport.sent[0].message));
  transport.handler().OnMessage(transport.sent[0].to, 1, std::move(answer));
  ASSERT_FALSE(network.update_in_flight());
  clock.AdvanceMs(config->retry_backoff_ms);

  // broker-2 and broker-3 each have a request in flight; broker-1's fetch is the only one to it.
  network.Send("broker-2", AFetch(), [](Result<Message>) {});
  network.Send("broker-3", AFetch(), [](Result<Message>) {});
  bool failed = false;
  network.Send("broker-1", AFetch(), [&](Result<Message> response) {
    failed = !response.ok();
    network.RequestUpdate();  // the fetcher's reaction to NETWORK_EXCEPTION
  });
  const size_t before = transport.sent.size();

  // broker-1's connection breaks: it has nothing in flight now, the others one each, yet the
  // metadata request must not go to broker-1.
  transport.handler().OnDisconnect("broker-1", 1);
  ASSERT_TRUE(failed);
  ASSERT_TRUE(network.update_in_flight());
  ASSERT_EQ(transport.sent.size(), before + 1);
  EXPECT_TRUE(std::holds_alternative<MetadataRequest>(transport.sent.back().message));
  EXPECT_NE(transport.sent.back().to, "broker-1");
}

PartitionMetadata Led(int32_t partition, int32_t leader) {
  PartitionMetadata led;
  led.partition = PartitionId(partition);
  led.leader = BrokerId(leader);
  if (leader < 0) led.error_code = Errc::kLeaderNotAvailable;
  return led;
}

// Each metadata answer replaces what the last one said of the topics it names: leaders change,
// partitions without a leader or no longer named are forgotten, new ones added, a topic with an
// error forgotten whole; topics it does not name keep theirs. (OnMetadata merges an answer into
// what it holds rather than rebuilding it.)
TEST(ConsumerNetworkTest, EachMetadataAnswerReplacesWhatTheLastSaidOfItsTopics) {
  Result<ConsumerConfig> config = ParseConsumerConfig({{"bootstrap.servers", "broker-1"}});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  ScriptedTransport transport;
  HeldTimers timers;
  ManualClock clock(1'000'000);
  ConsumerNetwork network(*config, transport, timers, clock, {});
  auto answer = [&](std::vector<TopicMetadata> topics) {
    ASSERT_TRUE(network.update_in_flight());
    ASSERT_TRUE(std::holds_alternative<MetadataRequest>(transport.sent.back().message));
    MetadataResponse metadata;
    for (int id = 1; id <= 3; ++id) {
      metadata.brokers.push_back(BrokerEndpoint{BrokerId(id), "broker-" + std::to_string(id)});
    }
    metadata.topic_metadata = std::move(topics);
    Message message = std::move(metadata);
    SetCorrelationId(message, CorrelationId(transport.sent.back().message));
    transport.handler().OnMessage(transport.sent.back().to, 1, std::move(message));
    clock.AdvanceMs(config->retry_backoff_ms);
  };
  auto leader = [&](const std::string& topic, int32_t partition) {
    return network.LeaderHost(TopicPartition{topic, PartitionId(partition)}).value_or("none");
  };
  // The leaders of t-0 to t-5.
  auto leaders_of_t = [&] {
    std::vector<std::string> hosts;
    for (int32_t p = 0; p < 6; ++p) hosts.push_back(leader("t", p));
    return hosts;
  };
  using Hosts = std::vector<std::string>;

  network.AddTopics({"t", "u"});
  answer({TopicMetadata{.topic = "t", .partition_metadata = {Led(2, 3), Led(0, 1), Led(1, 2)}},
          TopicMetadata{.topic = "u", .partition_metadata = {Led(0, 1)}}});
  EXPECT_EQ(leaders_of_t(), (Hosts{"broker-1", "broker-2", "broker-3", "none", "none", "none"}));
  EXPECT_EQ(leader("u", 0), "broker-1");
  EXPECT_EQ(network.PartitionCount("t"), 3);

  // t-0 moves, t-1 has no leader, t-2 is not named, t-3 and t-5 appear (t-3 named twice: the
  // last counts); u is not in the answer.
  network.RequestUpdate();
  answer({TopicMetadata{
      .topic = "t",
      .partition_metadata = {Led(5, 1), Led(3, 1), Led(0, 2), Led(1, -1), Led(3, 2)}}});
  EXPECT_EQ(leaders_of_t(), (Hosts{"broker-2", "none", "none", "broker-2", "none", "broker-1"}));
  EXPECT_EQ(leader("u", 0), "broker-1");
  EXPECT_EQ(network.PartitionCount("t"), 5);

  // An error for t forgets all of it. (t-1 without a leader asked for an update after the
  // backoff: its timer sends it.)
  timers.RunHeld();
  answer({TopicMetadata{.error_code = Errc::kUnknownTopicOrPartition, .topic = "t"},
          TopicMetadata{.topic = "u", .partition_metadata = {Led(0, 3)}}});
  EXPECT_EQ(leaders_of_t(), Hosts(6, "none"));
  EXPECT_FALSE(network.PartitionCount("t").has_value());
  EXPECT_EQ(leader("u", 0), "broker-3");
}

}  // namespace
}  // namespace ksim
