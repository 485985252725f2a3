// KafkaConsumer on core's seams: the application-facing calls (Subscribe/Assign, Poll, Commit,
// Close) over ConsumerNetwork (requests, metadata), Fetcher (positions, records) and
// ConsumerCoordinator (group membership, committed offsets). core/clients/consumer/consumer.h is
// the contract.
//
// Everything advances in Step, run (after the current event) whenever something changed: a
// response, a timer, a Poll. Step is idempotent: each part sends what is missing and waits.
#include "core/clients/consumer/consumer.h"

#include <utility>

#include "core/base/check.h"
#include "core/base/timer_group.h"
#include "core/clients/consumer/consumer_coordinator.h"
#include "core/clients/consumer/consumer_network.h"
#include "core/clients/consumer/fetcher.h"

namespace ksim {

struct Consumer::Impl {
  Impl(ConsumerConfig config_in, ConsumerSeams seams_in)
      : config(std::move(config_in)),
        seams(std::move(seams_in)),
        timers(seams.timers),
        network(config, seams.transport, seams.timers, seams.clock,
                ConsumerNetwork::Listeners{[this] { Kick(); },
                                           [this](std::string_view peer) {
                                             coordinator.OnDisconnect(peer);
                                             Kick();
                                           }}),
        fetcher(config, network, seams.timers, seams.clock, seams.events, [this] { Kick(); }),
        coordinator(
            config, network, fetcher, seams.timers, seams.clock, seams.events, [this] { Kick(); },
            [this] { return static_cast<bool>(poll_done) || commits_pending > 0; }) {}

  void Kick() {
    if (step_scheduled || closed) return;
    step_scheduled = true;
    timers.Schedule(0, [this] { Step(); });
  }

  void Step() {
    step_scheduled = false;
    if (closed) return;
    const bool polling = static_cast<bool>(poll_done);
    coordinator.Step(polling);
    if (coordinator.stable()) coordinator.FetchCommittedOffsets();
    // Kafka's poll hands out what is buffered before it sends the next fetches (KafkaConsumer.poll:
    // pollForFetches, then sendFetches), so the partitions it drained are in them: CompletePoll
    // kicks the Step that sends.
    if (polling && (fetcher.TakeFailure() || fetcher.HasRecords())) return CompletePoll();
    fetcher.SendRequests();
  }

  void CompletePoll() {
    KSIM_CHECK(static_cast<bool>(poll_done));
    timers.Cancel(poll_timer);
    poll_timer = 0;
    std::vector<ConsumerRecord> records = fetcher.Drain(config.max_poll_records);
    std::function<void(std::vector<ConsumerRecord>)> done = std::move(poll_done);
    poll_done = nullptr;
    // The drained partitions may be fetched again at once (Kafka pipelines the next fetch).
    Kick();
    done(std::move(records));
  }

  ConsumerConfig config;
  ConsumerSeams seams;
  TimerGroup timers;
  ConsumerNetwork network;
  Fetcher fetcher;
  ConsumerCoordinator coordinator;
  bool manual = false;
  bool closed = false;
  bool step_scheduled = false;
  std::function<void(std::vector<ConsumerRecord>)> poll_done;
  TimerId poll_timer = 0;
  // Commits the application waits for: like Poll, they run the consumer's network client, and
  // with it 0.10.0's heartbeat task (commitSync: client.poll(future)).
  int commits_pending = 0;
};

Consumer::Consumer(ConsumerConfig config, ConsumerSeams seams)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(seams))) {
  KSIM_CHECK(!impl_->config.bootstrap_servers.empty());
  KSIM_CHECK(impl_->config.max_poll_records >= 1);
}

Consumer::~Consumer() = default;

void Consumer::Subscribe(std::vector<std::string> topics, RebalanceListener listener) {
  KSIM_CHECK_MSG(!impl_->config.group_id.empty(), "Subscribe needs a group.id");
  KSIM_CHECK_MSG(!impl_->manual, "Subscribe after Assign");
  KSIM_CHECK(!impl_->closed);
  impl_->coordinator.Subscribe(std::move(topics), std::move(listener));
  impl_->Kick();
}

void Consumer::Assign(std::vector<TopicPartition> partitions) {
  KSIM_CHECK_MSG(!impl_->coordinator.subscribed(), "Assign after Subscribe");
  KSIM_CHECK(!impl_->closed);
  impl_->manual = true;
  std::sort(partitions.begin(), partitions.end());
  partitions.erase(std::unique(partitions.begin(), partitions.end()), partitions.end());
  impl_->fetcher.Assign(partitions);
  impl_->Kick();
}

void Consumer::Poll(TimeUs timeout_us, std::function<void(std::vector<ConsumerRecord>)> done) {
  KSIM_CHECK_MSG(!impl_->poll_done, "a Poll is pending");
  KSIM_CHECK_MSG(!impl_->closed, "Poll after Close");
  KSIM_CHECK(done != nullptr);
  KSIM_CHECK(timeout_us >= 0);
  impl_->coordinator.MaybeAutoCommit();
  impl_->poll_done = std::move(done);
  impl_->poll_timer = impl_->timers.Schedule(timeout_us, [impl = impl_.get()] {
    impl->poll_timer = 0;
    if (impl->poll_done) impl->CompletePoll();
  });
  impl_->Kick();
}

void Consumer::Commit(std::map<TopicPartition, Offset> offsets, std::function<void(Status)> done) {
  KSIM_CHECK_MSG(!impl_->closed, "Commit after Close");
  ++impl_->commits_pending;
  impl_->coordinator.Commit(std::move(offsets),
                            [impl = impl_.get(), done = std::move(done)](Status status) {
                              --impl->commits_pending;
                              if (done) done(status);
                            });
}

void Consumer::Close(std::function<void()> done) {
  KSIM_CHECK_MSG(!impl_->closed, "closed twice");
  impl_->closed = true;
  impl_->timers.CancelAll();
  impl_->poll_done = nullptr;  // a pending Poll never completes
  impl_->fetcher.Shutdown();
  impl_->coordinator.Close([impl = impl_.get(), done = std::move(done)] {
    impl->network.Shutdown();
    if (done) done();
  });
}

std::vector<TopicPartition> Consumer::assignment() const { return impl_->fetcher.assignment(); }

std::map<TopicPartition, Offset> Consumer::positions() const { return impl_->fetcher.positions(); }

const std::string& Consumer::member_id() const { return impl_->coordinator.member_id(); }

int32_t Consumer::generation() const { return impl_->coordinator.generation(); }

const ConsumerConfig& Consumer::config() const { return impl_->config; }

}  // namespace ksim
