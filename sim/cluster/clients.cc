#include "sim/cluster/clients.h"

#include <algorithm>
#include <utility>
#include <variant>

#include "core/base/check.h"
#include "core/base/random.h"
#include "core/base/timer_group.h"
#include "core/base/trace_names.h"
#include "core/protocol/network_client.h"
#include "sim/world/sim_transport.h"
#include "sim/world/zookeeper_client.h"

namespace ksim::sim {

namespace {

bool Names(const ConfigOverrides& config, std::string_view key) {
  return std::any_of(config.begin(), config.end(),
                     [&](const auto& setting) { return setting.first == key; });
}

std::string LastValue(const ConfigOverrides& config, std::string_view key) {
  std::string value;
  for (const auto& [name, v] : config) {
    if (name == key) value = v;
  }
  return value;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

// client.id and bootstrap.servers from the client's id and bootstrap list unless the config
// names them, then the config itself (its later settings win).
Result<ConfigOverrides> BaseSettings(const std::string& id,
                                     const std::vector<std::string>& bootstrap,
                                     const ConfigOverrides& config) {
  if (id.empty()) return Status(Errc::kInvalidArgument, "a client needs an id");
  ConfigOverrides settings;
  if (!Names(config, "client.id")) settings.emplace_back("client.id", id);
  if (!Names(config, "bootstrap.servers")) {
    if (bootstrap.empty()) {
      return Status(Errc::kInvalidConfig, id + ": no bootstrap.servers and no brokers given");
    }
    settings.emplace_back("bootstrap.servers", Join(bootstrap));
  }
  settings.insert(settings.end(), config.begin(), config.end());
  return settings;
}

// The Errc an event field names (a Kafka error name or a code); kNone for null or "NONE".
Errc ErrcOfField(const EventFields& fields, std::string_view key) {
  if (std::optional<int64_t> code = fields.IntegerValue(key)) {
    return static_cast<Errc>(static_cast<int16_t>(*code));
  }
  const std::string name = fields.StringValue(key).value_or("");
  if (name.empty() || name == ErrcName(Errc::kNone)) return Errc::kNone;
  for (int32_t code = -1200; code <= 200; ++code) {
    if (ErrcName(static_cast<Errc>(code)) == name) return static_cast<Errc>(code);
  }
  return Errc::kUnknownServerError;
}

}  // namespace

// ---- ProducerClient -----------------------------------------------------------------------------

// One incarnation of the producer process; members die in reverse order, the Producer first.
struct ProducerClient::Process {
  explicit Process(Node& node) : timers(node) {}
  uint64_t incarnation = 0;
  std::unique_ptr<SimTransport> transport;
  std::unique_ptr<StreamRandomSource> random;
  TimerGroup timers;  // the workload's
  std::unique_ptr<Producer> producer;
};

Result<std::unique_ptr<ProducerClient>> ProducerClient::Create(World& world, History& history,
                                                               ProducerClientOptions options) {
  if (options.topic.empty()) return Status(Errc::kInvalidArgument, options.id + ": no topic");
  if (options.messages < 0 || options.rate_per_s < 0 || options.start_ms < 0) {
    return Status(Errc::kInvalidArgument,
                  options.id + ": messages, rate_per_s and start_ms must be >= 0");
  }
  KSIM_ASSIGN_OR_RETURN(ConfigOverrides settings,
                        BaseSettings(options.id, options.bootstrap, options.config));
  Result<ProducerConfig> config = ParseProducerConfig(settings, options.kafka_version);
  if (!config.ok()) {
    return Status(config.status().code(), options.id + ": " + config.status().message());
  }
  config->brokers_release = options.brokers_kafka_version.value_or(options.kafka_version);
  if (world.FindNode(options.id) != nullptr) {
    return Status(Errc::kInvalidArgument, "node name taken: " + options.id);
  }
  std::unique_ptr<ProducerClient> client(
      new ProducerClient(world, history, std::move(options), std::move(config).value()));
  KSIM_ASSIGN_OR_RETURN(client->node_, world.AddNode(client->options_.id));
  ProducerClient* raw = client.get();
  client->listener_ = client->node_->AddLifecycleListener([raw](NodeLifecycle event) {
    if (event == NodeLifecycle::kRestart) {
      raw->StartProcess();
    } else {
      raw->StopProcess(/*record_crash=*/true);
    }
  });
  client->next_due_us_ = client->options_.start_ms * kUsPerMs;
  client->StartProcess();
  return client;
}

ProducerClient::ProducerClient(World& world, History& history, ProducerClientOptions options,
                               ProducerConfig config)
    : world_(world), history_(history), options_(std::move(options)), config_(std::move(config)) {}

ProducerClient::~ProducerClient() {
  if (node_ != nullptr) node_->RemoveLifecycleListener(listener_);
  process_.reset();
}

Producer* ProducerClient::producer() { return process_ ? process_->producer.get() : nullptr; }

void ProducerClient::StartProcess() {
  KSIM_CHECK(process_ == nullptr);
  KSIM_CHECK(node_->up());
  auto process = std::make_unique<Process>(*node_);
  process->incarnation = node_->incarnation();
  const std::string stream = "client/" + options_.id + "/" + std::to_string(process->incarnation);
  process->transport = std::make_unique<SimTransport>(world_.network(), options_.id);
  process->transport->Attach();
  process->random = std::make_unique<StreamRandomSource>(world_.StreamFor(stream));
  // KafkaProducer's constructor logs the settings its release does not know.
  for (const std::string& warning : config_.warnings) {
    world_.Trace(options_.id, ev::kConfigWarning, EventFields{{field::kMessage, warning}});
  }
  EventSink sink = [this](std::string_view ev, const EventFields& fields) {
    world_.Trace(options_.id, ev, fields);
  };
  process->producer =
      std::make_unique<Producer>(config_, ProducerSeams{*process->transport, *node_, node_->clock(),
                                                        *process->random, std::move(sink)});
  process_ = std::move(process);
  // A restarted process goes on from now with the records not yet sent.
  next_due_us_ = std::max(next_due_us_, world_.Now());
  ScheduleNext();
}

void ProducerClient::StopProcess(bool record_crash) {
  if (process_ == nullptr) return;
  process_.reset();  // no callback of the Producer runs after this
  // Jepsen: an operation whose process died has an unknown outcome.
  const std::set<uint64_t> pending = std::move(pending_);
  pending_.clear();
  if (!record_crash) return;
  for (uint64_t invoke : pending) {
    history_.SendInfo(invoke, TopicPartition{}, Errc::kNone, true);
    if (options_.on_completion) options_.on_completion(*history_.CompletionOf(invoke));
  }
}

TimeUs ProducerClient::LastRecordDueUs() const {
  if (generated_ >= options_.messages) return 0;
  const TimeUs next_us = std::max(next_due_us_, world_.Now());
  if (options_.rate_per_s == 0) return next_us;
  return next_us + (options_.messages - generated_ - 1) * (1'000'000 / options_.rate_per_s);
}

void ProducerClient::ScheduleNext() {
  if (generated_ >= options_.messages) return;
  const TimeUs delay_us = std::max<TimeUs>(0, next_due_us_ - world_.Now());
  process_->timers.Schedule(delay_us, [this] { SendGenerated(); });
}

void ProducerClient::SendGenerated() {
  // Rate 0: every remaining record now.
  do {
    std::string record_id = history_.NewRecordId(options_.id);
    std::string value = record_id;
    SendRecord(std::move(record_id), std::move(value), options_.key);
    ++generated_;
  } while (options_.rate_per_s == 0 && generated_ < options_.messages);
  if (options_.rate_per_s > 0) next_due_us_ += 1'000'000 / options_.rate_per_s;
  ScheduleNext();
}

Result<std::string> ProducerClient::Produce(std::string value, std::optional<std::string> key) {
  if (process_ == nullptr) {
    return Status(Errc::kInvalidArgument, options_.id + " is down: nothing can be produced");
  }
  std::string record_id = history_.NewRecordId(options_.id);
  SendRecord(record_id, std::move(value), std::move(key));
  return record_id;
}

void ProducerClient::SendRecord(std::string record_id, std::string value,
                                std::optional<std::string> key) {
  KSIM_CHECK(process_ != nullptr);
  const uint64_t invoke = history_.SendInvoke(options_.id, process_->incarnation,
                                              std::move(record_id), options_.topic, key, value);
  pending_.insert(invoke);
  ProducerRecord record;
  record.topic = options_.topic;
  record.key = std::move(key);
  record.value = std::move(value);
  process_->producer->Send(std::move(record), [this, invoke](const SendOutcome& outcome) {
    if (pending_.erase(invoke) == 0) return;  // not this incarnation's (cannot happen)
    if (outcome.error == Errc::kNone) {
      history_.SendOk(invoke, outcome.tp, outcome.offset);
    } else if (outcome.maybe_written) {
      history_.SendInfo(invoke, outcome.tp, outcome.error);
    } else {
      history_.SendFail(invoke, outcome.tp, outcome.error);
    }
    if (options_.on_completion) options_.on_completion(*history_.CompletionOf(invoke));
  });
}

// ---- ConsumerClient -----------------------------------------------------------------------------

Result<CommitMode> ParseCommitMode(std::string_view name) {
  if (name == "auto") return CommitMode::kAuto;
  if (name == "before-processing") return CommitMode::kBeforeProcessing;
  if (name == "after-processing") return CommitMode::kAfterProcessing;
  return Status(Errc::kInvalidArgument,
                "commit must be auto, before-processing or after-processing, not '" +
                    std::string(name) + "'");
}

std::string_view CommitModeName(CommitMode mode) {
  switch (mode) {
    case CommitMode::kAuto:
      return "auto";
    case CommitMode::kBeforeProcessing:
      return "before-processing";
    case CommitMode::kAfterProcessing:
      return "after-processing";
  }
  return "unknown";
}

std::string_view ConsumerKindName(ConsumerKind kind) {
  return kind == ConsumerKind::kZookeeper ? "zookeeper" : "group-coordinator";
}

// One incarnation of the consumer process; members die in reverse order, the Consumer first.
struct ConsumerClient::Process {
  explicit Process(Node& node) : timers(node) {}
  uint64_t incarnation = 0;
  std::unique_ptr<SimTransport> transport;
  std::unique_ptr<ZooKeeperClient> zk;         // the old consumer's session
  std::unique_ptr<StreamRandomSource> random;  // the old consumer's id
  TimerGroup timers;                           // start, processing, poll pacing
  std::unique_ptr<NetworkClient> metadata;     // without a group: the partitions to assign
  std::unique_ptr<Consumer> consumer;
  std::unique_ptr<ZookeeperConsumer> zk_consumer;
  TimeUs poll_started_us = 0;
};

Result<std::unique_ptr<ConsumerClient>> ConsumerClient::Create(World& world, History& history,
                                                               ConsumerClientOptions options) {
  const std::string& id = options.id;
  if (options.topics.empty()) return Status(Errc::kInvalidArgument, id + ": no topics");
  if (options.start_ms < 0 || options.processing_ms < 0 || options.poll_timeout_ms <= 0) {
    return Status(Errc::kInvalidArgument,
                  id + ": start_ms and processing_ms must be >= 0, poll_timeout_ms > 0");
  }
  if (options.group.empty() && options.commit != CommitMode::kAuto) {
    return Status(
        Errc::kInvalidConfig,
        id + ": commit " + std::string(CommitModeName(options.commit)) + " needs a group");
  }
  if (Names(options.config, "group.id") && LastValue(options.config, "group.id") != options.group) {
    return Status(Errc::kInvalidConfig, id + ": config group.id contradicts group");
  }
  const bool auto_commit = options.commit == CommitMode::kAuto && !options.group.empty();
  if (Names(options.config, "enable.auto.commit") &&
      LastValue(options.config, "enable.auto.commit") != (auto_commit ? "true" : "false")) {
    return Status(Errc::kInvalidConfig, id + ": config enable.auto.commit contradicts commit " +
                                            std::string(CommitModeName(options.commit)));
  }
  ZookeeperConsumerConfig zk_config;
  Result<ConsumerConfig> config = ConsumerConfig{};
  if (options.kind == ConsumerKind::kZookeeper) {
    // The old consumer: its own keys; the brokers come from ZooKeeper.
    if (options.group.empty()) {
      return Status(Errc::kInvalidConfig, id + ": the old consumer needs a group");
    }
    if (Names(options.config, "auto.commit.enable") &&
        LastValue(options.config, "auto.commit.enable") != (auto_commit ? "true" : "false")) {
      return Status(Errc::kInvalidConfig, id + ": config auto.commit.enable contradicts commit " +
                                              std::string(CommitModeName(options.commit)));
    }
    ConfigOverrides settings = options.config;
    settings.emplace_back("group.id", options.group);
    settings.emplace_back("auto.commit.enable", auto_commit ? "true" : "false");
    Result<ZookeeperConsumerConfig> parsed = ParseZookeeperConsumerConfig(settings);
    if (!parsed.ok()) return Status(parsed.status().code(), id + ": " + parsed.status().message());
    zk_config = std::move(parsed).value();
    config.value().client_id = zk_config.client_id;
    config.value().group_id = zk_config.group_id;
  } else {
    KSIM_ASSIGN_OR_RETURN(ConfigOverrides settings,
                          BaseSettings(id, options.bootstrap, options.config));
    settings.emplace_back("group.id", options.group);
    settings.emplace_back("enable.auto.commit", auto_commit ? "true" : "false");
    config = ParseConsumerConfig(settings, options.kafka_version);
    if (!config.ok()) return Status(config.status().code(), id + ": " + config.status().message());
    config->brokers_release = options.brokers_kafka_version.value_or(options.kafka_version);
  }
  if (world.FindNode(id) != nullptr)
    return Status(Errc::kInvalidArgument, "node name taken: " + id);

  std::unique_ptr<ConsumerClient> client(new ConsumerClient(
      world, history, std::move(options), std::move(config).value(), std::move(zk_config)));
  KSIM_ASSIGN_OR_RETURN(client->node_, world.AddNode(client->options_.id));
  ConsumerClient* raw = client.get();
  client->listener_ = client->node_->AddLifecycleListener([raw](NodeLifecycle event) {
    if (event == NodeLifecycle::kRestart) {
      raw->StartProcess();
    } else {
      raw->StopProcess();
    }
  });
  client->StartProcess();
  return client;
}

ConsumerClient::ConsumerClient(World& world, History& history, ConsumerClientOptions options,
                               ConsumerConfig config, ZookeeperConsumerConfig zk_config)
    : world_(world),
      history_(history),
      options_(std::move(options)),
      config_(std::move(config)),
      zk_config_(std::move(zk_config)) {}

ConsumerClient::~ConsumerClient() {
  if (node_ != nullptr) node_->RemoveLifecycleListener(listener_);
  if (process_ != nullptr && process_->zk != nullptr && node_->up()) node_->StopListening();
  process_.reset();
}

Consumer* ConsumerClient::consumer() { return process_ ? process_->consumer.get() : nullptr; }

ZookeeperConsumer* ConsumerClient::zookeeper_consumer() {
  return process_ ? process_->zk_consumer.get() : nullptr;
}

std::vector<TopicPartition> ConsumerClient::assignment() const {
  if (process_ == nullptr) return {};
  if (process_->zk_consumer != nullptr) return process_->zk_consumer->assignment();
  if (process_->consumer == nullptr) return {};
  return process_->consumer->assignment();
}

void ConsumerClient::Stop(std::function<void()> stopped) {
  if (stopped_) return;
  stopped_ = true;
  // Not from inside the caller's callback: the process is destroyed by the shutdown.
  auto shut_down = [&world = world_, id = options_.id, stopped = std::move(stopped)] {
    world.loop().Schedule(0, [&world, id, stopped] {
      Node* node = world.FindNode(id);
      if (node != nullptr && node->up()) KSIM_CHECK(world.CleanShutdownNode(id).ok());
      if (stopped) stopped();
    });
  };
  if (process_ != nullptr && process_->zk_consumer != nullptr) {
    // ConsoleConsumer's cleanup: the connector's shutdown commits and closes its session.
    process_->zk_consumer->Close(std::move(shut_down));
    return;
  }
  shut_down();
}

void ConsumerClient::StartProcess() {
  KSIM_CHECK(process_ == nullptr);
  KSIM_CHECK(node_->up());
  if (stopped_) return;  // a stopped client runs nothing on its node any more
  auto process = std::make_unique<Process>(*node_);
  process->incarnation = node_->incarnation();
  process->transport = std::make_unique<SimTransport>(world_.network(), options_.id);
  if (options_.kind == ConsumerKind::kZookeeper) {
    const std::string suffix = options_.id + "/" + std::to_string(node_->incarnation());
    ZkClientOptions zk_options;
    zk_options.session_timeout_us =
        static_cast<TimeUs>(zk_config_.zookeeper_session_timeout_ms) * kUsPerMs;
    process->zk =
        std::make_unique<ZooKeeperClient>(world_.loop(), world_.network(), options_.id,
                                          world_.StreamFor("zkclient/" + suffix), zk_options);
    process->random = std::make_unique<StreamRandomSource>(world_.StreamFor("consumer/" + suffix));
    Process* raw = process.get();
    // One handler for the node: ZooKeeper's replies first, then the brokers' (as a broker's).
    node_->Listen(NetworkHandler{[raw](Delivery delivery) {
                                   if (!raw->zk->OnMessage(delivery))
                                     raw->transport->OnMessage(delivery);
                                 },
                                 [raw](const Disconnect& notice) {
                                   raw->zk->OnDisconnect(notice);
                                   raw->transport->OnDisconnect(notice);
                                 }});
  } else {
    process->transport->Attach();
  }
  process_ = std::move(process);
  Process& raw = *process_;
  const TimeUs delay_us = std::max<TimeUs>(0, options_.start_ms * kUsPerMs - world_.Now());
  raw.timers.Schedule(delay_us, [this, &raw] { Begin(raw); });
}

void ConsumerClient::StopProcess() {
  // Uncommitted progress dies with the process; the restarted one reads from the group's
  // committed offsets.
  process_.reset();
}

void ConsumerClient::Begin(Process& process) {
  if (!options_.group.empty()) return StartConsumer(process, {});
  FetchMetadata(process, 0);
}

void ConsumerClient::FetchMetadata(Process& process, size_t attempt) {
  // Without a group the application assigns every partition itself, as a console consumer
  // without --group does: it asks a broker how many there are.
  if (process.metadata == nullptr) {
    process.metadata = std::make_unique<NetworkClient>(
        *process.transport, *node_, NetworkClient::Handlers{},
        NetworkClientOptions{1, config_.request_timeout_ms * kUsPerMs});
  }
  const std::vector<std::string>& peers = config_.bootstrap_servers;
  const std::string peer = peers[attempt % peers.size()];
  auto retry = [this, &process, attempt] {
    process.timers.Schedule(config_.retry_backoff_ms * kUsPerMs,
                            [this, &process, attempt] { FetchMetadata(process, attempt + 1); });
  };
  if (!process.metadata->Ready(peer)) return retry();
  MetadataRequest request;
  request.topics = options_.topics;
  process.metadata->Send(
      peer, std::move(request), [this, &process, retry](Result<ksim::Message> response) {
        const auto* metadata = response.ok() ? std::get_if<MetadataResponse>(&*response) : nullptr;
        if (metadata == nullptr) return retry();
        std::vector<TopicPartition> partitions;
        for (const std::string& topic : options_.topics) {
          auto it = std::find_if(metadata->topic_metadata.begin(), metadata->topic_metadata.end(),
                                 [&](const TopicMetadata& t) { return t.topic == topic; });
          if (it == metadata->topic_metadata.end() || it->error_code != Errc::kNone ||
              it->partition_metadata.empty()) {
            return retry();
          }
          for (const PartitionMetadata& p : it->partition_metadata) {
            partitions.push_back(TopicPartition{topic, p.partition});
          }
        }
        std::sort(partitions.begin(), partitions.end());
        // Not from inside the NetworkClient's own callback: it is destroyed first.
        process.timers.Schedule(0, [this, &process, partitions = std::move(partitions)] {
          process.metadata.reset();
          StartConsumer(process, partitions);
        });
      });
}

void ConsumerClient::StartConsumer(Process& process, std::vector<TopicPartition> assign) {
  // KafkaConsumer's constructor logs the settings its release does not know.
  for (const std::string& warning : config_.warnings) {
    world_.Trace(options_.id, ev::kConfigWarning, EventFields{{field::kMessage, warning}});
  }
  EventSink sink = [this](std::string_view ev, const EventFields& fields) {
    world_.Trace(options_.id, ev, fields);
    OnConsumerEvent(ev, fields);
  };
  if (options_.kind == ConsumerKind::kZookeeper) {
    process.zk_consumer = std::make_unique<ZookeeperConsumer>(
        zk_config_, ZookeeperConsumerSeams{*process.zk, *process.transport, *node_, node_->clock(),
                                           *process.random, std::move(sink), options_.id});
    process.zk_consumer->Subscribe(options_.topics, options_.subscription_pattern);
    PollLoop(process);
    return;
  }
  process.consumer = std::make_unique<Consumer>(
      config_, ConsumerSeams{*process.transport, *node_, node_->clock(), std::move(sink)});
  if (options_.group.empty()) {
    process.consumer->Assign(std::move(assign));
  } else {
    process.consumer->Subscribe(options_.topics);
  }
  PollLoop(process);
}

void ConsumerClient::PollLoop(Process& process) {
  process.poll_started_us = world_.Now();
  auto done = [this, &process](std::vector<ConsumerRecord> records) {
    OnRecords(process, std::move(records));
  };
  if (process.zk_consumer != nullptr) {
    process.zk_consumer->Poll(options_.poll_timeout_ms * kUsPerMs, std::move(done));
    return;
  }
  process.consumer->Poll(options_.poll_timeout_ms * kUsPerMs, std::move(done));
}

void ConsumerClient::OnRecords(Process& process, std::vector<ConsumerRecord> records) {
  if (stopped_) return;
  history_.Poll(options_.id, process.incarnation, options_.group,
                static_cast<int32_t>(records.size()));
  if (records.empty()) {
    // An empty poll that took no time (an error the caller must see) is not retried at once,
    // or the loop would never let virtual time pass.
    const TimeUs wait_us =
        world_.Now() == process.poll_started_us ? config_.retry_backoff_ms * kUsPerMs : 0;
    process.timers.Schedule(wait_us, [this, &process] { PollLoop(process); });
    return;
  }
  if (options_.commit == CommitMode::kBeforeProcessing) {
    // At-most-once: the positions are committed before anything is processed.
    CommitRecords(process, records, [this, &process, records](bool ok) mutable {
      if (!ok) {
        // The records may go to another member after the rebalance; here they are dropped.
        process.timers.Schedule(0, [this, &process] { PollLoop(process); });
        return;
      }
      ProcessNext(process, std::move(records), 0);
    });
    return;
  }
  ProcessNext(process, std::move(records), 0);
}

void ConsumerClient::ProcessNext(Process& process, std::vector<ConsumerRecord> records,
                                 size_t next) {
  while (next < records.size()) {
    if (options_.processing_ms > 0) {
      process.timers.Schedule(options_.processing_ms * kUsPerMs,
                              [this, &process, records = std::move(records), next]() mutable {
                                if (!DeliverRecord(process, records[next])) return;
                                ProcessNext(process, std::move(records), next + 1);
                              });
      return;
    }
    if (!DeliverRecord(process, records[next])) return;
    ++next;
  }
  AfterProcessing(process, std::move(records));
}

bool ConsumerClient::DeliverRecord(Process& process, const ConsumerRecord& r) {
  if (stopped_) return false;
  history_.Deliver(options_.id, process.incarnation, options_.group, r.tp, r.offset, r.key,
                   r.value);
  ++delivered_;
  if (options_.on_deliver) options_.on_deliver(r);
  return !stopped_;  // Stop() from on_deliver: nothing more is processed
}

void ConsumerClient::AfterProcessing(Process& process, std::vector<ConsumerRecord> records) {
  if (options_.commit == CommitMode::kAfterProcessing) {
    // At-least-once: a crash before this commit is answered redelivers the poll.
    CommitRecords(process, records, [this, &process](bool) {
      process.timers.Schedule(0, [this, &process] { PollLoop(process); });
    });
    return;
  }
  process.timers.Schedule(0, [this, &process] { PollLoop(process); });
}

void ConsumerClient::CommitRecords(Process& process, const std::vector<ConsumerRecord>& records,
                                   std::function<void(bool ok)> then) {
  std::map<TopicPartition, Offset> offsets;
  for (const ConsumerRecord& r : records) {
    Offset& next = offsets[r.tp];
    next = std::max(next, r.offset + 1);
  }
  auto done = [this, &process, offsets, then = std::move(then)](Status s) {
    for (const auto& [tp, offset] : offsets) {
      history_.Commit(options_.id, process.incarnation, options_.group, tp, offset, s.code());
    }
    then(s.ok());
  };
  if (process.zk_consumer != nullptr) {
    process.zk_consumer->Commit(offsets, std::move(done));
    return;
  }
  process.consumer->Commit(offsets, std::move(done));
}

void ConsumerClient::OnConsumerEvent(std::string_view ev, const EventFields& event) {
  // Auto commits happen inside the Consumer: its offset_commit events are their outcomes.
  if (options_.commit != CommitMode::kAuto || ev != ev::kOffsetCommit || process_ == nullptr)
    return;
  std::optional<std::string> topic = event.StringValue(field::kTopic);
  const std::optional<int64_t> partition = event.IntegerValue(field::kPartition);
  const std::optional<int64_t> offset = event.IntegerValue(field::kOffset);
  if (!topic || !partition || !offset) return;
  const TopicPartition tp{std::move(*topic), PartitionId(static_cast<int32_t>(*partition))};
  history_.Commit(options_.id, process_->incarnation, options_.group, tp, Offset(*offset),
                  ErrcOfField(event, field::kError));
}

}  // namespace ksim::sim
