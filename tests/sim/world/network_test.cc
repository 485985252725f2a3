#include "sim/world/network.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/base/random.h"
#include "sim/kernel/event_loop.h"
#include "sim/world/topology.h"

namespace ksim::sim {
namespace {

const std::vector<std::string> kCluster = {"broker-1", "broker-2", "broker-3", "zk", "p1", "c1"};
constexpr TimeUs kTimeoutUs = 50'000;

struct Received {
  TimeUs time_us;
  std::string to, from, kind;
  uint64_t epoch;
  MessageId id;
};
struct Notice {
  TimeUs time_us;
  std::string node, peer;
  uint64_t broken_epoch;
};
struct Event {  // NetEvent with owned strings
  NetEvent::Type type;
  TimeUs time_us;
  MessageId id;
  std::string from, to, kind;
  uint64_t epoch;
  TimeUs deliver_at_us;
  int32_t retransmits;
  DropReason reason;
};

NetworkOptions TestOptions() {
  NetworkOptions options;
  options.disconnect_timeout_us = kTimeoutUs;
  options.retransmit_timeout_us = 2'000;
  options.retransmit_timeout_us_max = 16'000;
  return options;
}

// A cluster of six nodes with handlers that record what they get, and an observer that records
// every network event.
class NetworkTest : public ::testing::Test {
 protected:
  void Build(const LinkSpec& spec, uint64_t seed = 1, NetworkOptions options = TestOptions()) {
    network_.reset();
    topology_ = Topology::FullMesh(kCluster, spec);
    network_ = std::make_unique<Network>(loop_, *topology_, RandomStream(seed), options);
    for (const std::string& name : kCluster) RegisterRecorder(name);
    network_->SetObserver([this](const NetEvent& e) {
      events_.push_back(Event{e.type, e.time_us, e.message_id, std::string(e.from_name),
                              std::string(e.to_name), std::string(e.kind), e.connection_epoch,
                              e.deliver_at_us, e.retransmits, e.reason});
    });
  }
  void RegisterRecorder(const std::string& name) {
    network_->Register(
        name,
        NetworkHandler{[this, name](Delivery d) {
                         received_.push_back(Received{loop_.Now(), name, topology_->Name(d.from),
                                                      d.message.kind, d.connection_epoch, d.id});
                       },
                       [this, name](const Disconnect& d) {
                         notices_.push_back(
                             Notice{loop_.Now(), name, topology_->Name(d.peer), d.broken_epoch});
                       }});
  }
  SendResult Send(const std::string& from, const std::string& to, const std::string& kind,
                  int64_t size_bytes = 10) {
    Message message;
    message.kind = kind;
    message.size_bytes = size_bytes;
    return network_->Send(from, to, std::move(message));
  }
  // Runs `action` at virtual time `time_us`.
  void At(TimeUs time_us, std::function<void()> action) {
    loop_.ScheduleAt(time_us, std::move(action));
  }
  void Run() { ASSERT_TRUE(loop_.RunUntilIdle(10'000'000)); }
  std::vector<Event> EventsOf(NetEvent::Type type) const {
    std::vector<Event> out;
    for (const Event& e : events_) {
      if (e.type == type) out.push_back(e);
    }
    return out;
  }
  void ExpectBalanced() const {
    const NetworkCounters& c = network_->counters();
    EXPECT_EQ(c.sent, c.delivered + c.dropped + network_->in_flight());
    EXPECT_EQ(c.delivered, received_.size());
    EXPECT_EQ(c.disconnects_notified, notices_.size());
  }
  uint64_t Epoch(const std::string& a, const std::string& b) {
    return network_->ConnectionEpoch(topology_->Id(a), topology_->Id(b));
  }

  EventLoop loop_;
  std::unique_ptr<Topology> topology_;
  std::unique_ptr<Network> network_;
  std::vector<Received> received_;
  std::vector<Notice> notices_;
  std::vector<Event> events_;
};

LinkSpec Fixed(TimeUs latency_us) { return LinkSpec{latency_us, latency_us, 0, 0}; }

TEST_F(NetworkTest, DeliversAfterTheLinkLatencyAndReportsSendAndDeliver) {
  Build(Fixed(1000));
  At(300, [&] {
    const SendResult r = Send("p1", "broker-1", "Produce", 120);
    EXPECT_FALSE(r.dropped);
    EXPECT_EQ(r.id, 1u);
    EXPECT_EQ(r.connection_epoch, 1u);
  });
  Run();
  ASSERT_EQ(received_.size(), 1u);
  EXPECT_EQ(received_[0].time_us, 1300);
  EXPECT_EQ(received_[0].to, "broker-1");
  EXPECT_EQ(received_[0].from, "p1");
  EXPECT_EQ(received_[0].kind, "Produce");
  ASSERT_EQ(events_.size(), 2u);
  EXPECT_EQ(events_[0].type, NetEvent::Type::kSend);
  EXPECT_EQ(events_[0].time_us, 300);
  EXPECT_EQ(events_[0].deliver_at_us, 1300);
  EXPECT_EQ(events_[1].type, NetEvent::Type::kDeliver);
  EXPECT_EQ(events_[1].time_us, 1300);
  const NetworkCounters& c = network_->counters();
  EXPECT_EQ(c.sent, 1u);
  EXPECT_EQ(c.delivered, 1u);
  EXPECT_EQ(c.bytes_sent, 120u);
  EXPECT_EQ(c.bytes_delivered, 120u);
  EXPECT_EQ(c.dropped, 0u);
  EXPECT_EQ(network_->in_flight(), 0u);
}

TEST_F(NetworkTest, LatencyIsDrawnFromTheLinkRangeAndOverridesApplyToNewSends) {
  Build(LinkSpec{100, 900, 0, 0});
  std::map<TimeUs, int> latencies;
  // One message per ordered pair: no FIFO wait, so delivery - send is the drawn latency.
  for (const auto& a : kCluster) {
    for (const auto& b : kCluster) {
      if (a != b) Send(a, b, "x");
    }
  }
  Run();
  ASSERT_EQ(received_.size(), 30u);
  for (const Received& r : received_) {
    EXPECT_GE(r.time_us, 100);
    EXPECT_LE(r.time_us, 900);
    latencies[r.time_us]++;
  }
  EXPECT_GT(latencies.size(), 10u);  // drawn, not constant

  ASSERT_TRUE(topology_->SetLink("broker-1", "broker-3", Fixed(20'000)).ok());
  const TimeUs now = loop_.Now();
  Send("broker-3", "broker-1", "y");
  Run();
  EXPECT_EQ(received_.back().time_us, now + 20'000);
}

TEST_F(NetworkTest, FifoPerConnectionHoldsUnderRandomLatencyForManySeeds) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(seed);
    received_.clear();
    events_.clear();
    Build(LinkSpec{0, 10'000, 0, 0}, seed);
    // Random senders and receivers at random times; the kind carries a per-direction sequence.
    RandomStream workload(seed * 7919);
    std::map<std::pair<std::string, std::string>, int> next_seq;
    std::map<std::pair<std::string, std::string>, TimeUs> last_send;
    int close_sends = 0;  // sends closer than the latency spread: random latency alone reorders
    const TimeUs start = loop_.Now();
    for (int i = 0; i < 400; ++i) {
      const TimeUs t = start + workload.UniformInt(0, 50'000);
      const auto from_index = static_cast<size_t>(workload.UniformInt(0, 5));
      const auto to_index = (from_index + static_cast<size_t>(workload.UniformInt(1, 5))) % 6;
      const std::string from = kCluster[from_index], to = kCluster[to_index];
      At(t, [this, from, to, &next_seq, &last_send, &close_sends] {
        const auto key = std::make_pair(from, to);
        if (last_send.count(key) && loop_.Now() - last_send[key] < 10'000) ++close_sends;
        last_send[key] = loop_.Now();
        Send(from, to, std::to_string(next_seq[key]++));
      });
    }
    Run();
    EXPECT_GT(close_sends, 50);
    std::map<std::pair<std::string, std::string>, int> expected;
    for (const Received& r : received_) {
      const auto key = std::make_pair(r.from, r.to);
      ASSERT_EQ(r.kind, std::to_string(expected[key]++)) << r.from << "->" << r.to;
    }
    EXPECT_EQ(network_->counters().dropped, 0u);
    ExpectBalanced();
  }
}

// TestOptions' retransmissions of a message held from time s: s + 2000, + 6000, + 14000,
// + 30000, + 46000 (the RTO doubles to its 16000 cap); the next would be s + 62000, after the
// sender's give-up at s + kTimeoutUs.
TEST_F(NetworkTest, MessageAcrossACutIsHeldAndDeliveredAtTheFirstRetransmissionAfterTheHeal) {
  Build(Fixed(1000));
  ASSERT_TRUE(topology_->Partition({{"broker-1"}, {"broker-2", "broker-3"}}, false).ok());
  At(100, [&] {
    const SendResult r = Send("broker-1", "broker-2", "Fetch");
    EXPECT_FALSE(r.dropped);  // a silence, not a reset: the connection stays
    EXPECT_EQ(r.connection_epoch, 1u);
  });
  At(200, [&] { Send("broker-1", "zk", "Heartbeat"); });  // zk is on no side
  At(10'000, [&] { topology_->Heal(); });
  // Sent after the heal, before the held message's retransmission: TCP's stream keeps it behind.
  At(10'100, [&] { Send("broker-1", "broker-2", "Fetch2"); });
  Run();
  EXPECT_TRUE(EventsOf(NetEvent::Type::kDrop).empty());
  EXPECT_TRUE(notices_.empty());
  const auto holds = EventsOf(NetEvent::Type::kHold);
  ASSERT_EQ(holds.size(), 1u);
  EXPECT_EQ(holds[0].kind, "Fetch");
  EXPECT_EQ(holds[0].time_us, 100);
  EXPECT_EQ(holds[0].reason, DropReason::kLinkCut);
  EXPECT_EQ(EventsOf(NetEvent::Type::kSend)[0].deliver_at_us, -1);
  ASSERT_EQ(received_.size(), 3u);
  EXPECT_EQ(received_[0].to, "zk");
  EXPECT_EQ(received_[0].time_us, 1200);
  // Retransmitted at 100 + 14000 (the first after the heal at 10000), then one latency.
  EXPECT_EQ(received_[1].kind, "Fetch");
  EXPECT_EQ(received_[1].time_us, 15'100);
  EXPECT_EQ(received_[1].epoch, 1u);
  EXPECT_EQ(received_[2].kind, "Fetch2");
  EXPECT_EQ(received_[2].time_us, 15'100);
  EXPECT_EQ(received_[2].epoch, 1u);
  EXPECT_EQ(network_->counters().retransmits, 3u);
  EXPECT_EQ(network_->counters().held, 1u);
  EXPECT_EQ(Epoch("broker-1", "broker-2"), 1u);
  ExpectBalanced();
}

TEST_F(NetworkTest, MessagesInFlightAtACutAreHeldBothWaysAndKeepTheirConnection) {
  Build(Fixed(1000));
  At(0, [&] {
    Send("broker-1", "broker-2", "Fetch");
    Send("broker-2", "broker-1", "FetchResponse");
    Send("broker-1", "broker-3", "Fetch");  // not across the cut
  });
  At(500, [&] { ASSERT_TRUE(topology_->Partition({{"broker-1"}, {"broker-2"}}, false).ok()); });
  At(3000, [&] { topology_->Heal(); });
  Run();
  ASSERT_EQ(received_.size(), 3u);
  EXPECT_EQ(received_[0].to, "broker-3");
  EXPECT_EQ(received_[0].time_us, 1000);
  // Lost at the cut (500), retransmitted at 2500 (before the heal: lost again) and 6500.
  for (int i = 1; i < 3; ++i) {
    EXPECT_EQ(received_[i].time_us, 7500);
    EXPECT_EQ(received_[i].epoch, 1u);
  }
  EXPECT_EQ(EventsOf(NetEvent::Type::kHold).size(), 2u);
  EXPECT_TRUE(EventsOf(NetEvent::Type::kDrop).empty());
  EXPECT_TRUE(notices_.empty());
  EXPECT_EQ(Epoch("broker-1", "broker-2"), 1u);
  ExpectBalanced();
}

TEST_F(NetworkTest, ACutOutlastingTheTimeoutBreaksTheConnectionAndTellsBothEndsAtOnce) {
  Build(Fixed(1000));
  ASSERT_TRUE(topology_->Partition({{"broker-1"}, {"broker-2"}}, false).ok());
  At(0, [&] {
    Send("broker-1", "broker-2", "Fetch");
    Send("broker-2", "broker-1", "Metadata");
  });
  At(10, [&] { Send("broker-1", "broker-2", "Fetch2"); });
  // The heal comes after the last retransmission before the give-up (46000): too late.
  At(47'000, [&] { topology_->Heal(); });
  At(kTimeoutUs + 100, [&] { Send("broker-1", "broker-2", "after"); });
  Run();
  const auto drops = EventsOf(NetEvent::Type::kDrop);
  ASSERT_EQ(drops.size(), 3u);
  for (const Event& d : drops) {
    EXPECT_EQ(d.time_us, kTimeoutUs);
    EXPECT_EQ(d.reason, DropReason::kRetransmitTimeout);
    EXPECT_EQ(d.epoch, 1u);
  }
  ASSERT_EQ(notices_.size(), 2u);
  for (const Notice& n : notices_) {
    EXPECT_EQ(n.time_us, kTimeoutUs);
    EXPECT_EQ(n.broken_epoch, 1u);
  }
  ASSERT_EQ(received_.size(), 1u);
  EXPECT_EQ(received_[0].kind, "after");
  EXPECT_EQ(received_[0].time_us, kTimeoutUs + 1100);
  EXPECT_EQ(received_[0].epoch, 2u);
  ExpectBalanced();
}

TEST_F(NetworkTest, OneWayCutHoldsOnlyMessagesLeavingTheFirstSide) {
  Build(Fixed(1000));
  At(0, [&] { Send("broker-2", "broker-1", "InFlightBeforeCut"); });
  At(100, [&] { ASSERT_TRUE(topology_->Partition({{"broker-1"}, {"broker-2"}}, true).ok()); });
  At(200, [&] { Send("broker-2", "broker-1", "B->A"); });
  At(5000, [&] { Send("broker-1", "broker-2", "A->B"); });
  At(6000, [&] { Send("broker-2", "broker-1", "B->A again"); });
  At(8000, [&] { topology_->Heal(); });
  Run();
  std::vector<std::string> kinds;
  for (const Received& r : received_) kinds.push_back(r.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"InFlightBeforeCut", "B->A", "B->A again", "A->B"}));
  EXPECT_EQ(received_[3].time_us, 5000 + 6000 + 1000);  // retransmitted at 7000, then 11000
  for (const Received& r : received_) EXPECT_EQ(r.epoch, 1u);
  EXPECT_TRUE(EventsOf(NetEvent::Type::kDrop).empty());
  EXPECT_TRUE(notices_.empty());
  ExpectBalanced();
}

TEST_F(NetworkTest, IsolatedNodeNeitherSendsNorReceivesUntilHeal) {
  Build(Fixed(1000));
  ASSERT_TRUE(topology_->Isolate("broker-3").ok());
  for (const std::string& other : kCluster) {
    if (other == "broker-3") continue;
    EXPECT_FALSE(Send("broker-3", other, "out").dropped);
    EXPECT_FALSE(Send(other, "broker-3", "in").dropped);
  }
  EXPECT_FALSE(Send("broker-1", "broker-2", "unrelated").dropped);
  loop_.RunUntil(20'000);
  ASSERT_EQ(received_.size(), 1u);
  EXPECT_EQ(received_[0].kind, "unrelated");
  EXPECT_EQ(network_->counters().held, 10u);
  topology_->Heal();
  Run();
  ASSERT_EQ(received_.size(), 11u);
  for (size_t i = 1; i < received_.size(); ++i) {
    EXPECT_EQ(received_[i].time_us, 30'000 + 1000);  // the retransmission at 30000
  }
  EXPECT_EQ(network_->counters().dropped, 0u);
  EXPECT_TRUE(notices_.empty());
  ExpectBalanced();
}

TEST_F(NetworkTest, AHeldMessageDiesWithTheNodeItWasGoingTo) {
  Build(Fixed(1000));
  ASSERT_TRUE(topology_->Partition({{"p1"}, {"broker-1"}}, false).ok());
  At(0, [&] { Send("p1", "broker-1", "Produce"); });
  At(1000, [&] { ASSERT_TRUE(topology_->SetNodeUp("broker-1", false).ok()); });
  At(2000, [&] { topology_->Heal(); });
  Run();
  const auto drops = EventsOf(NetEvent::Type::kDrop);
  ASSERT_EQ(drops.size(), 1u);
  EXPECT_EQ(drops[0].time_us, 1000);
  EXPECT_EQ(drops[0].reason, DropReason::kNodeDown);
  EXPECT_TRUE(received_.empty());
  ASSERT_EQ(notices_.size(), 1u);  // p1, a timeout after the crash
  EXPECT_EQ(notices_[0].node, "p1");
  EXPECT_EQ(notices_[0].time_us, 1000 + kTimeoutUs);
  ExpectBalanced();
}

TEST_F(NetworkTest, CrashDropsInFlightBothWaysAndTellsOnlyTheLivePeer) {
  Build(Fixed(1000));
  At(0, [&] {
    Send("broker-1", "broker-2", "to crashing");
    Send("broker-2", "broker-1", "from crashing");
    Send("broker-2", "zk", "from crashing");
  });
  At(500, [&] { ASSERT_TRUE(topology_->SetNodeUp("broker-2", false).ok()); });
  At(600, [&] {
    EXPECT_TRUE(Send("zk", "broker-2", "to down").dropped);
    EXPECT_TRUE(Send("broker-2", "zk", "from down").dropped);
  });
  At(700, [&] { ASSERT_TRUE(topology_->SetNodeUp("broker-2", true).ok()); });
  At(800, [&] { Send("broker-1", "broker-2", "after restart"); });
  Run();
  ASSERT_EQ(received_.size(), 1u);
  EXPECT_EQ(received_[0].kind, "after restart");
  EXPECT_EQ(received_[0].epoch, 2u);
  std::map<std::string, DropReason> reasons;
  for (const Event& d : EventsOf(NetEvent::Type::kDrop)) reasons[d.kind] = d.reason;
  EXPECT_EQ(reasons["to crashing"], DropReason::kNodeDown);
  EXPECT_EQ(reasons["from crashing"], DropReason::kNodeDown);
  EXPECT_EQ(reasons["to down"], DropReason::kNodeDown);
  EXPECT_EQ(reasons["from down"], DropReason::kSenderDown);
  EXPECT_EQ(network_->counters().dropped, 5u);
  // broker-1 had used its connection with broker-2: the crash breaks it and broker-1 is told a
  // timeout later. zk had only been sent to, so it learns when its own send fails at 600 (that
  // broke epoch 2, the crash epoch 1). broker-2 is told nothing: the notices for it died with it,
  // even though it came back before they were due.
  ASSERT_EQ(notices_.size(), 2u);
  EXPECT_EQ(notices_[0].node, "broker-1");
  EXPECT_EQ(notices_[0].peer, "broker-2");
  EXPECT_EQ(notices_[0].time_us, 500 + kTimeoutUs);
  EXPECT_EQ(notices_[0].broken_epoch, 1u);
  EXPECT_EQ(notices_[1].node, "zk");
  EXPECT_EQ(notices_[1].time_us, 600 + kTimeoutUs);
  EXPECT_EQ(notices_[1].broken_epoch, 2u);
  ExpectBalanced();
}

TEST_F(NetworkTest, OneNoticeCoversEveryBreakUntilItIsGiven) {
  Build(Fixed(1000));
  ASSERT_TRUE(topology_->SetNodeUp("broker-1", false).ok());  // each send breaks (node_down)
  At(0, [&] { Send("p1", "broker-1", "1"); });
  At(10, [&] { Send("p1", "broker-1", "2"); });
  At(20 + kTimeoutUs, [&] { Send("p1", "broker-1", "3"); });
  Run();
  ASSERT_EQ(notices_.size(), 2u);
  EXPECT_EQ(notices_[0].time_us, kTimeoutUs);
  EXPECT_EQ(notices_[0].broken_epoch, 2u);
  EXPECT_EQ(notices_[1].time_us, 20 + 2 * kTimeoutUs);
  EXPECT_EQ(notices_[1].broken_epoch, 3u);
  EXPECT_EQ(network_->counters().connections_broken, 3u);
}

TEST_F(NetworkTest, SlowNodeDelaysItsOutboundMessagesForTheDuration) {
  Build(Fixed(1000));
  ASSERT_TRUE(network_->SlowFor("broker-3", 15'000, 20'000).ok());
  At(0, [&] {
    Send("broker-3", "broker-1", "slow fetch");
    Send("broker-1", "broker-3", "not slowed");  // inbound is not affected
  });
  At(19'000, [&] { Send("broker-3", "zk", "late"); });
  At(21'000, [&] { Send("broker-3", "zk", "after the slow ends"); });  // held behind "late"
  At(40'000, [&] { Send("broker-3", "zk", "normal"); });
  Run();
  std::map<std::string, TimeUs> at;
  for (const Received& r : received_) at[r.kind] = r.time_us;
  EXPECT_EQ(at["slow fetch"], 16'000);
  EXPECT_EQ(at["not slowed"], 1'000);
  EXPECT_EQ(at["late"], 35'000);
  EXPECT_EQ(at["after the slow ends"], 35'000);  // FIFO: never before the one sent ahead
  EXPECT_EQ(at["normal"], 41'000);
  EXPECT_EQ(topology_->SlowExtraUs(topology_->Id("broker-3")), 0);
  EXPECT_EQ(network_->SlowFor("nobody", 1, 1).code(), Errc::kNotFound);
  EXPECT_EQ(network_->SlowFor("zk", -1, 1).code(), Errc::kInvalidArgument);
}

TEST_F(NetworkTest, ALaterSlowReplacesTheEarlierOneAndItsEnd) {
  Build(Fixed(1000));
  ASSERT_TRUE(network_->SlowFor("broker-3", 5'000, 10'000).ok());
  At(8'000, [&] { ASSERT_TRUE(network_->SlowFor("broker-3", 7'000, 10'000).ok()); });
  At(12'000, [&] { Send("broker-3", "broker-1", "still slow"); });  // the first end was dropped
  At(19'000, [&] { Send("broker-3", "broker-2", "normal"); });
  Run();
  std::map<std::string, TimeUs> at;
  for (const Received& r : received_) at[r.kind] = r.time_us;
  EXPECT_EQ(at["still slow"], 20'000);
  EXPECT_EQ(at["normal"], 20'000);
}

TEST_F(NetworkTest, BandwidthSerializesMessagesOneAfterAnotherPerDirection) {
  Build(LinkSpec{100, 100, 0, 1'000'000});  // 1 byte per microsecond
  At(0, [&] {
    Send("broker-1", "broker-2", "a", 1000);
    Send("broker-1", "broker-2", "b", 1000);
    Send("broker-1", "broker-2", "c", 0);
    Send("broker-2", "broker-1", "reverse", 1000);  // the other direction has its own capacity
  });
  At(10'000, [&] { Send("broker-1", "broker-2", "idle link", 1); });  // ceil(1 us)
  Run();
  std::map<std::string, TimeUs> at;
  for (const Received& r : received_) at[r.kind] = r.time_us;
  EXPECT_EQ(at["a"], 1'100);
  EXPECT_EQ(at["b"], 2'100);
  EXPECT_EQ(at["c"], 2'100);
  EXPECT_EQ(at["reverse"], 1'100);
  EXPECT_EQ(at["idle link"], 10'101);
}

TEST_F(NetworkTest, LossCostsRetransmissionsInsteadOfReorderingOrDropping) {
  NetworkOptions options = TestOptions();
  options.disconnect_timeout_us = 10'000'000;  // long enough that no message is given up on
  Build(LinkSpec{1000, 1000, 300'000, 0}, 5, options);  // 30% of transmissions lost
  for (int i = 0; i < 300; ++i) {
    At(i * 100, [this, i] { Send("broker-1", "broker-2", std::to_string(i)); });
  }
  Run();
  ASSERT_EQ(received_.size(), 300u);
  for (int i = 0; i < 300; ++i) EXPECT_EQ(received_[i].kind, std::to_string(i));
  EXPECT_GT(network_->counters().retransmits, 50u);
  // Each send's delay covers the retransmission timeouts drawn for it (2 ms, doubling, at most
  // 16 ms each); delivery may be later still behind an earlier message.
  int retransmitted = 0;
  for (const Event& e : EventsOf(NetEvent::Type::kSend)) {
    TimeUs rto = 2'000, expected_min = 1'000;
    for (int r = 0; r < e.retransmits; ++r, rto = std::min<TimeUs>(rto * 2, 16'000)) {
      expected_min += rto;
    }
    EXPECT_GE(e.deliver_at_us - e.time_us, expected_min);
    if (e.retransmits > 0) ++retransmitted;
  }
  EXPECT_GT(retransmitted, 50);
  EXPECT_EQ(network_->counters().dropped, 0u);
}

TEST_F(NetworkTest, ALinkThatLosesEverythingBreaksTheConnection) {
  Build(Fixed(1000));
  ASSERT_TRUE(
      topology_->SetLinkDirected("p1", "broker-1", LinkSpec{1000, 1000, 1'000'000, 0}).ok());
  At(0, [&] { EXPECT_TRUE(Send("p1", "broker-1", "lost").dropped); });
  At(1, [&] { EXPECT_FALSE(Send("broker-1", "p1", "other way").dropped); });
  Run();
  const auto drops = EventsOf(NetEvent::Type::kDrop);
  ASSERT_EQ(drops.size(), 1u);
  EXPECT_EQ(drops[0].reason, DropReason::kRetransmitTimeout);
  // Timeouts of 2+4+8+16+16+16 ms (capped at 16): the sixth loss passes the 50 ms timeout.
  EXPECT_EQ(EventsOf(NetEvent::Type::kSend)[0].retransmits, 6);
  ASSERT_EQ(notices_.size(), 1u);
  EXPECT_EQ(notices_[0].node, "p1");
  EXPECT_EQ(notices_[0].time_us, kTimeoutUs);
}

TEST_F(NetworkTest, AnUpNodeWithoutAHandlerRefusesAndTheSenderHearsInARoundTrip) {
  Build(Fixed(10));
  // Unregistered while a message is on its way: it arrives at 10, the RST is back at 20.
  Send("broker-1", "c1", "in flight");
  At(5, [&] { network_->Unregister(topology_->Id("c1")); });
  // Sent to a node with nothing listening: refused at once, the sender told at 100 + 2 * 10.
  At(100, [&] { EXPECT_TRUE(Send("zk", "c1", "nobody home").dropped); });
  Run();
  const auto drops = EventsOf(NetEvent::Type::kDrop);
  ASSERT_EQ(drops.size(), 2u);
  EXPECT_EQ(drops[0].reason, DropReason::kRefused);
  EXPECT_EQ(drops[0].time_us, 10);
  EXPECT_EQ(drops[1].reason, DropReason::kRefused);
  ASSERT_EQ(notices_.size(), 2u);
  EXPECT_EQ(notices_[0].node, "broker-1");
  EXPECT_EQ(notices_[0].time_us, 20);
  EXPECT_EQ(notices_[1].node, "zk");
  EXPECT_EQ(notices_[1].time_us, 120);
  ExpectBalanced();
}

TEST_F(NetworkTest, AProcessExitResetsItsConnectionsAndPeersHearWithinOneLatency) {
  Build(Fixed(1000));
  At(0, [&] {
    Send("broker-1", "broker-2", "to exiting");
    Send("p1", "broker-2", "delivered before");
  });
  // broker-2's host stays up; its process exits (a clean shutdown, a halt).
  At(1500, [&] {
    Send("broker-2", "broker-1", "from exiting");
    network_->ExitProcess(topology_->Id("broker-2"));
  });
  At(3000, [&] {
    EXPECT_TRUE(Send("broker-2", "zk", "from exited").dropped);
    EXPECT_TRUE(Send("zk", "broker-2", "to exited").dropped);
  });
  At(5000, [&] { RegisterRecorder("broker-2"); });  // a new process listens
  At(6000, [&] { EXPECT_FALSE(Send("zk", "broker-2", "after restart").dropped); });
  Run();
  std::map<std::string, DropReason> reasons;
  for (const Event& d : EventsOf(NetEvent::Type::kDrop)) reasons[d.kind] = d.reason;
  EXPECT_EQ(reasons["from exiting"], DropReason::kRefused);
  EXPECT_EQ(reasons["from exited"], DropReason::kSenderDown);
  EXPECT_EQ(reasons["to exited"], DropReason::kRefused);
  // broker-1 and p1 hear one latency after the exit (FIN/RST), zk one round trip after its send.
  std::map<std::string, TimeUs> told;
  for (const Notice& n : notices_) {
    EXPECT_EQ(n.peer, "broker-2");
    told[n.node] = n.time_us;
  }
  EXPECT_EQ(told, (std::map<std::string, TimeUs>{{"broker-1", 2500}, {"p1", 2500}, {"zk", 5000}}));
  ASSERT_FALSE(received_.empty());
  EXPECT_EQ(received_.back().kind, "after restart");
  ExpectBalanced();
}

TEST_F(NetworkTest, ACrashedHostBackUpAnswersPendingNoticesWithinTheRestartNotice) {
  NetworkOptions options = TestOptions();
  options.disconnect_timeout_us = 200'000;
  options.restart_notice_us = 5'000;
  Build(Fixed(1000), 1, options);
  At(0, [&] {
    Send("broker-1", "broker-2", "1");
    Send("zk", "broker-2", "2");
    Send("p1", "broker-3", "3");
  });
  At(500, [&] {  // power loss of both hosts
    ASSERT_TRUE(topology_->SetNodeUp("broker-2", false).ok());
    ASSERT_TRUE(topology_->SetNodeUp("broker-3", false).ok());
  });
  // broker-2 is back 60 ms later, but cut off from zk; broker-3 stays down.
  At(60'500, [&] {
    ASSERT_TRUE(topology_->Partition({{"zk"}, {"broker-2"}}, false).ok());
    ASSERT_TRUE(topology_->SetNodeUp("broker-2", true).ok());
  });
  Run();
  std::map<std::string, TimeUs> told;
  for (const Notice& n : notices_) told[n.node] = n.time_us;
  // broker-1's next retransmission meets the new host's RST; zk's cannot reach it, and p1's
  // peer never answers: they wait for the timeout.
  EXPECT_EQ(told, (std::map<std::string, TimeUs>{
                      {"broker-1", 60'500 + 5'000}, {"zk", 500 + 200'000}, {"p1", 500 + 200'000}}));
  ExpectBalanced();
}

TEST_F(NetworkTest, HandlersMayReplyAndReplaceThemselves) {
  Build(Fixed(10));
  int pongs = 0;
  network_->Register(
      "broker-1",
      NetworkHandler{
          [&](Delivery d) {
            Message reply;
            reply.kind = "pong";
            network_->Send(topology_->Id("broker-1"), d.from, std::move(reply));
            // Replace this very handler from inside it.
            network_->Register("broker-1", NetworkHandler{[&](Delivery) { ++pongs; }, nullptr});
          },
          nullptr});
  Send("p1", "broker-1", "ping");
  Run();
  Send("p1", "broker-1", "ping");
  Run();
  ASSERT_EQ(received_.size(), 1u);
  EXPECT_EQ(received_[0].kind, "pong");
  EXPECT_EQ(received_[0].time_us, 20);
  EXPECT_EQ(pongs, 1);
}

TEST_F(NetworkTest, NodesAddedLaterCanBeLinkedAndUsed) {
  Build(Fixed(10));
  ASSERT_TRUE(topology_->AddNode("c2").ok());
  ASSERT_TRUE(topology_->ConnectFullMesh(Fixed(20)).ok());
  RegisterRecorder("c2");
  Send("c2", "broker-1", "hello");
  Send("broker-3", "c2", "hi");
  Run();
  ASSERT_EQ(received_.size(), 2u);
  EXPECT_EQ(received_[0].time_us, 20);
}

TEST_F(NetworkTest, DestroyingTheNetworkTakesBackItsPendingEvents) {
  Build(Fixed(1000));
  Send("broker-1", "broker-2", "in flight");
  ASSERT_TRUE(topology_->Partition({{"zk"}, {"p1"}}, false).ok());
  Send("zk", "p1", "dropped, notice pending");
  ASSERT_TRUE(network_->SlowFor("c1", 10, 10'000).ok());
  EXPECT_EQ(loop_.pending(), 3u);
  network_.reset();
  EXPECT_EQ(loop_.pending(), 0u);
  Run();
  EXPECT_TRUE(received_.empty());
}

// Runs a fixed mixed workload with faults and returns the observer log as text.
std::string RunScript(uint64_t seed) {
  EventLoop loop;
  auto topology = Topology::FullMesh(kCluster, LinkSpec{200, 5'000, 20'000, 0});
  Network network(loop, *topology, RandomStream(seed), TestOptions());
  std::string log;
  network.SetObserver([&log](const NetEvent& e) {
    log += std::to_string(e.time_us) + " " + std::string(NetEventTypeName(e.type)) + " " +
           std::to_string(e.message_id) + " " + std::string(e.from_name) + ">" +
           std::string(e.to_name) + " " + std::string(e.kind) + " e" +
           std::to_string(e.connection_epoch) + " @" + std::to_string(e.deliver_at_us) + " " +
           std::string(DropReasonName(e.reason)) + "\n";
  });
  for (const std::string& name : kCluster) {
    network.Register(name, NetworkHandler{[&network, &topology, name](Delivery d) {
                                            if (d.message.kind == "req") {
                                              Message reply;
                                              reply.kind = "resp";
                                              network.Send(topology->Id(name), d.from,
                                                           std::move(reply));
                                            }
                                          },
                                          nullptr});
  }
  RandomStream workload(99);  // the same workload for every seed: only the network's draws differ
  for (int i = 0; i < 500; ++i) {
    const TimeUs t = workload.UniformInt(0, 200'000);
    const auto from = static_cast<size_t>(workload.UniformInt(0, 5));
    const auto to = (from + static_cast<size_t>(workload.UniformInt(1, 5))) % 6;
    loop.ScheduleAt(t, [&network, from, to] {
      Message m;
      m.kind = "req";
      m.size_bytes = 100;
      network.Send(kCluster[from], kCluster[to], std::move(m));
    });
  }
  loop.ScheduleAt(50'000, [&] {
    KSIM_CHECK(topology->Partition({{"broker-1", "zk"}, {"broker-2"}}, false).ok());
  });
  loop.ScheduleAt(90'000, [&] { KSIM_CHECK(topology->SetNodeUp("broker-3", false).ok()); });
  loop.ScheduleAt(120'000, [&] { topology->Heal(); });
  loop.ScheduleAt(130'000, [&] { KSIM_CHECK(topology->SetNodeUp("broker-3", true).ok()); });
  loop.RunUntilIdle(10'000'000);
  return log;
}

TEST(NetworkDeterminismTest, SameSeedSameDeliveryLogAndOtherSeedsDiffer) {
  const std::string a = RunScript(42);
  const std::string b = RunScript(42);
  EXPECT_EQ(a, b);
  EXPECT_GT(std::count(a.begin(), a.end(), '\n'), 1000);
  EXPECT_NE(a.find("link_cut"), std::string::npos);
  EXPECT_NE(a.find("node_down"), std::string::npos);
  EXPECT_NE(RunScript(43), a);
}

}  // namespace
}  // namespace ksim::sim
