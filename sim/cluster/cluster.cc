#include "sim/cluster/cluster.h"

#include <algorithm>
#include <utility>

#include "core/base/check.h"
#include "core/base/trace_names.h"
#include "core/server/replica_manager.h"

namespace ksim::sim {

// One incarnation of a broker process: what dies with it. Members are destroyed in reverse
// order: the Broker first, then the seams it borrowed.
struct Cluster::Process {
  uint64_t incarnation = 0;
  std::unique_ptr<ZooKeeperClient> zk;
  std::unique_ptr<SimTransport> transport;
  std::unique_ptr<StreamRandomSource> random;
  std::unique_ptr<Broker> broker;
  bool shutting_down = false;
};

Result<std::unique_ptr<Cluster>> Cluster::Create(World& world, ClusterOptions options) {
  std::unique_ptr<Cluster> cluster(new Cluster(world, std::move(options)));
  KSIM_RETURN_IF_ERROR(cluster->Build());
  return cluster;
}

Cluster::Cluster(World& world, ClusterOptions options)
    : world_(world), options_(std::move(options)) {}

Cluster::~Cluster() {
  // As a crash: nothing more is written. Brokers go before the ZooKeeper server they talk to.
  for (BrokerSlot& slot : slots_) slot.process.reset();
  topic_admin_.reset();
  admin_zk_.reset();
  zk_server_.reset();
}

Status Cluster::Build() {
  if (options_.brokers < 1) {
    return Status(Errc::kInvalidArgument, "a cluster needs at least one broker");
  }
  // An election policy the controller cannot run is bad input, not a crash later.
  ControllerOptions controller_options;
  controller_options.election_policy = options_.election_policy;
  KSIM_RETURN_IF_ERROR(Controller::ValidateOptions(controller_options));
  ZooKeeperOptions zk_options = options_.zookeeper;
  zk_options.node = std::string(node::kZooKeeper);
  KSIM_ASSIGN_OR_RETURN(zk_node_, world_.AddNode(zk_options.node));
  zk_server_ = std::make_unique<ZooKeeperServer>(world_.loop(), world_.network(), zk_options);
  zk_server_->SetObserver([this](const ZkServerEvent& event) {
    EventFields fields;
    if (event.session != kNoSession) fields.Add(field::kSession, event.session.value());
    if (!event.client_node.empty()) fields.Add(field::kClient, event.client_node);
    if (!event.ephemerals_deleted.empty())
      fields.Add(field::kEphemeralsDeleted, event.ephemerals_deleted);
    world_.Trace(node::kZooKeeper, ZkServerEventTypeName(event.type), fields);
  });

  slots_.resize(static_cast<size_t>(options_.brokers));
  for (int32_t id = 1; id <= options_.brokers; ++id) {
    BrokerSlot& slot = slots_[static_cast<size_t>(id - 1)];
    slot.id = BrokerId(id);
    const std::string name = node::Broker(slot.id);
    KSIM_ASSIGN_OR_RETURN(slot.config, MakeConfig(id, name));
    KSIM_ASSIGN_OR_RETURN(slot.node, world_.AddNode(name, NodeOptions{options_.disk}));
    slot.node->AddLifecycleListener(
        [this, index = static_cast<size_t>(id - 1)](NodeLifecycle event) {
          OnLifecycle(slots_[index], event);
        });
  }

  KSIM_ASSIGN_OR_RETURN(admin_node_, world_.AddNode(std::string(node::kAdmin)));
  ZkClientOptions admin_options;
  admin_options.server_node = zk_options.node;
  admin_options.session_timeout_us = options_.admin_session_timeout_us;
  admin_zk_ = std::make_unique<ZooKeeperClient>(world_.loop(), world_.network(), node::kAdmin,
                                                world_.StreamFor("zkclient/admin"), admin_options);
  admin_zk_->Attach();
  admin_random_ = std::make_unique<StreamRandomSource>(world_.StreamFor("admin/topics"));
  topic_admin_ = std::make_unique<TopicAdmin>(*admin_zk_, *admin_random_, slots_.front().config,
                                              std::string(kZooKeeperConnect));

  if (options_.check_invariants) {
    checker_ = std::make_unique<InvariantChecker>([this](const InvariantViolation& violation) {
      EventFields fields{{field::kRule, violation.rule},
                         {field::kTopic, violation.tp.topic},
                         {field::kPartition, violation.tp.partition.value()},
                         {field::kMessage, violation.message}};
      if (violation.broker.value() >= 0) {
        fields.Add(field::kBroker, violation.broker.value());
        fields.Add(field::kOffset, violation.offset.value());
        fields.Add(field::kCommittedUs, violation.committed_us);
        if (violation.epochless_fork) fields.Add(field::kEpochlessFork, true);
        if (violation.held_epoch != kUndefinedEpoch) {
          fields.Add(field::kHeldEpoch, violation.held_epoch.value());
          fields.Add(field::kCommittedEpoch, violation.committed_epoch.value());
        }
        if (violation.held_from.value() >= 0) {
          fields.Add(field::kHeldFrom, violation.held_from.value());
        }
      }
      world_.Trace(node::kChecker, ev::kInvariantViolation, fields);
    });
  }
  return Status::Ok();
}

Result<BrokerConfig> Cluster::MakeConfig(int32_t id, const std::string& node_name) const {
  const std::string who = "broker " + std::to_string(id) + ": ";
  BrokerConfig base;
  auto properties = options_.server_properties.find(id);
  if (properties != options_.server_properties.end()) {
    Result<BrokerConfig> parsed =
        ParseServerProperties(properties->second, "server.properties", options_.kafka_version);
    if (!parsed.ok()) {
      return Status(parsed.status().code(), who + parsed.status().message());
    }
    base = std::move(parsed).value();
  } else {
    Result<BrokerConfig> defaults = MakeBrokerConfig({}, options_.kafka_version);
    KSIM_CHECK(defaults.ok());
    base = std::move(defaults).value();
  }

  // ksim's defaults, for keys nothing else names.
  auto named = [&](std::string_view key) {
    if (base.originals.count(std::string(key)) > 0) return true;
    auto in = [&](const ConfigOverrides& overrides) {
      return std::any_of(overrides.begin(), overrides.end(),
                         [&](const auto& setting) { return setting.first == key; });
    };
    if (in(options_.config)) return true;
    auto own = options_.broker_config.find(id);
    return own != options_.broker_config.end() && in(own->second);
  };
  ConfigOverrides defaults;
  if (!named("offsets.topic.num.partitions")) {
    defaults.emplace_back("offsets.topic.num.partitions",
                          std::to_string(kClusterOffsetsTopicNumPartitions));
  }

  ConfigOverrides all = defaults;
  all.insert(all.end(), options_.config.begin(), options_.config.end());
  auto own = options_.broker_config.find(id);
  if (own != options_.broker_config.end()) {
    all.insert(all.end(), own->second.begin(), own->second.end());
  }
  // What the simulation fixes.
  all.emplace_back("broker.id", std::to_string(id));
  all.emplace_back("log.dirs", std::string(kBrokerLogDir));
  all.emplace_back("zookeeper.connect", std::string(kZooKeeperConnect));
  all.emplace_back("host.name", node_name);
  Result<BrokerConfig> config = ApplyConfigOverrides(base, all, "cluster.config");
  if (!config.ok()) return Status(config.status().code(), who + config.status().message());
  // KIP-101's leader epochs live in record batches v2 (0.11): message sets carry none, so a
  // follower would learn no epoch from what it copies. The leader-epoch truncation policy, which
  // a scenario may choose at any release, therefore brings that format along at a release before
  // 0.11 when log.message.format.version is not given (docs/versions.md).
  if (options_.truncation == TruncationPolicy::kLeaderEpoch &&
      config->release < KafkaRelease::k0_11_0 &&
      config->originals.count("log.message.format.version") == 0) {
    config->log_message_format_version = LatestApiVersion(KafkaRelease::k0_11_0);
  }
  // The mirror from 0.11 (the high-watermark policy bringing the 0.10 format) is the scenario
  // runner's, where a policy is chosen: ClusterOptions' own default policy, kHighWatermark at
  // every release, is its tests' and keeps the release's format.
  return config;
}

Status Cluster::Start() {
  KSIM_CHECK_MSG(!started_, "Cluster::Start called twice");
  started_ = true;
  admin_zk_->Connect();
  for (BrokerSlot& slot : slots_) KSIM_RETURN_IF_ERROR(StartProcess(slot));
  return Status::Ok();
}

Status Cluster::StartProcess(BrokerSlot& slot) {
  KSIM_CHECK(slot.process == nullptr);
  Node& node = *slot.node;
  KSIM_CHECK(node.up());
  auto process = std::make_unique<Process>();
  process->incarnation = node.incarnation();
  const std::string suffix = node.name() + "/" + std::to_string(node.incarnation());

  ZkClientOptions zk_options;
  zk_options.server_node = std::string(node::kZooKeeper);
  zk_options.session_timeout_us =
      static_cast<TimeUs>(slot.config.zookeeper_session_timeout_ms) * kUsPerMs;
  process->zk =
      std::make_unique<ZooKeeperClient>(world_.loop(), world_.network(), node.name(),
                                        world_.StreamFor("zkclient/" + suffix), zk_options);
  process->transport = std::make_unique<SimTransport>(world_.network(), node.name());
  if (node.disk() != nullptr) {
    process->transport->SetSendDelay([this, index = static_cast<size_t>(slot.id.value() - 1)] {
      return DiskDelay(slots_[index]);
    });
  }
  process->random = std::make_unique<StreamRandomSource>(world_.StreamFor("broker/" + suffix));

  BrokerOptions broker_options;
  broker_options.config = slot.config;
  broker_options.host = node.name();
  broker_options.truncation = options_.truncation;
  broker_options.controller.election_policy = options_.election_policy;
  EventSink sink = [this, name = node.name()](std::string_view ev, const EventFields& fields) {
    if (checker_) {
      checker_->OnEvent(ev, fields);
      // What the checker remembers of a partition may change: its replicas are observed again
      // (every replica of a deleted topic's: a full pass).
      if (ev == ev::kTopicDeleted) full_pass_ = true;
      if (ev == ev::kLeaderElected) NoteElection(fields);
    }
    world_.Trace(name, ev, fields);
  };
  // Kafka's Exit.halt: the node goes down at once (after the current event), its disk intact.
  auto halt = [this, name = node.name(), incarnation = node.incarnation()](const Status& error) {
    world_.loop().Schedule(0, [this, name, incarnation, reason = error.ToString()] {
      Node* halting = world_.FindNode(name);
      if (halting == nullptr || !halting->up() || halting->incarnation() != incarnation) return;
      KSIM_CHECK(world_.HaltNode(name, reason).ok());
    });
  };
  // Kafka's System.exit / Exit.exit: the shutdown hook runs KafkaServer.shutdown (as a
  // `shutdown` action does), then the process ends. A start-up that found its previous
  // registration still there (NODEEXISTS) is started again after start_retry_backoff_us, as
  // whoever restarted it would, until the old session has timed out and a start-up registers.
  auto exit = [this, id = slot.id, name = node.name(),
               incarnation = node.incarnation()](const Status& error) {
    this->slot(id).last_exit = ExitRecord{world_.Now(), error.message()};
    const bool retry = error.code() == Errc::kNodeExists;
    world_.loop().Schedule(0, [this, id, name, incarnation, retry] {
      Node* exiting = world_.FindNode(name);
      if (exiting == nullptr || !exiting->up() || exiting->incarnation() != incarnation) return;
      std::function<void()> stopped;
      if (retry) stopped = [this, id, incarnation] { RetryStart(id, incarnation); };
      (void)ShutdownBroker(id, std::move(stopped));  // refused when a shutdown is under way
    });
  };
  BrokerSeams seams{*node.disk(),        world_.loop(),   node,
                    *process->transport, *process->zk,    *process->random,
                    std::move(sink),     std::move(halt), std::move(exit)};
  process->broker = std::make_unique<Broker>(std::move(broker_options), seams);

  Process* raw = process.get();
  node.Listen(NetworkHandler{[raw](Delivery delivery) {
                               if (!raw->zk->OnMessage(delivery))
                                 raw->transport->OnMessage(delivery);
                             },
                             [raw](const Disconnect& notice) {
                               raw->zk->OnDisconnect(notice);
                               raw->transport->OnDisconnect(notice);
                             }});
  slot.process = std::move(process);
  full_pass_ = true;

  Status started = slot.process->broker->Startup();
  if (!started.ok()) {
    // Kafka's process exits when its logs cannot be loaded: the node stays up with nothing on it.
    world_.Trace(node.name(), ev::kBrokerStartupFailed,
                 EventFields{{field::kError, ErrcName(started.code())},
                             {field::kMessage, started.message()}});
    StopProcess(slot);
    return Status(started.code(), node.name() + ": " + started.message());
  }
  return Status::Ok();
}

void Cluster::RetryStart(BrokerId id, uint64_t incarnation) {
  slot(id).start_retry_of = incarnation;
  world_.loop().Schedule(options_.start_retry_backoff_us, [this, id, incarnation] {
    BrokerSlot& s = slot(id);
    // Nothing to do when something else started the node again (an action).
    if (s.start_retry_of != incarnation) return;
    s.start_retry_of.reset();
    KSIM_CHECK(world_.RestartNode(s.node->name()).ok());
  });
}

void Cluster::StopProcess(BrokerSlot& slot) {
  if (slot.process == nullptr) return;
  // Unhook the network first: the handler points into the process. The node stays up with no
  // process, as a host whose broker exited: it refuses connections (RST), so that clients move
  // on to another broker at once.
  if (slot.node->up()) slot.node->StopListening();
  slot.process.reset();
  full_pass_ = true;
}

void Cluster::OnLifecycle(BrokerSlot& slot, NodeLifecycle event) {
  full_pass_ = true;
  switch (event) {
    case NodeLifecycle::kCrash:
    case NodeLifecycle::kShutdown:
      // Crash: the disk already lost what was not synced; nothing more is written. Shutdown:
      // Broker::Shutdown ran first (ShutdownBroker), or this is a kill with a synced disk.
      slot.process.reset();
      // The work queued on the disk dies with the process.
      if (slot.node->disk() != nullptr) slot.node->disk()->TakeBusyTime();
      slot.disk_free_us = 0;
      return;
    case NodeLifecycle::kRestart: {
      slot.start_retry_of.reset();  // started by someone else first
      Status started = StartProcess(slot);
      (void)started;  // traced by StartProcess
      return;
    }
  }
}

Cluster::BrokerSlot& Cluster::slot(BrokerId id) {
  KSIM_CHECK_MSG(id.value() >= 1 && id.value() <= options_.brokers, "no such broker");
  return slots_[static_cast<size_t>(id.value() - 1)];
}

const Cluster::BrokerSlot& Cluster::slot(BrokerId id) const {
  KSIM_CHECK_MSG(id.value() >= 1 && id.value() <= options_.brokers, "no such broker");
  return slots_[static_cast<size_t>(id.value() - 1)];
}

// ---- Running ------------------------------------------------------------------------------------

void Cluster::AddStepHook(StepHook hook) { hooks_.push_back(std::move(hook)); }

void Cluster::AfterStep() {
  ChargeDisks();
  if (checker_) ObserveBrokers();
  for (const StepHook& hook : hooks_) hook();
}

void Cluster::ChargeDisks() {
  const TimeUs now = world_.Now();
  for (BrokerSlot& slot : slots_) {
    VirtualDisk* disk = slot.node->disk();
    if (disk == nullptr || disk->busy_time_us() == 0) continue;  // (zero latencies: always)
    slot.disk_free_us = std::max(slot.disk_free_us, now) + disk->TakeBusyTime();
  }
}

TimeUs Cluster::DiskDelay(const BrokerSlot& slot) const {
  const TimeUs now = world_.Now();
  return std::max(slot.disk_free_us, now) - now + slot.node->disk()->busy_time_us();
}

namespace {

// Whether the checker would see anything new in `partition` after `before` (the log is the same
// object: the partition is). Compared field by field, not by building the observation: a
// touched broker's unchanged replicas are most of a pass.
bool SameObservation(const ReplicaObservation& before, uint64_t incarnation,
                     const ksim::Partition& partition) {
  return before.incarnation == incarnation && before.role == partition.role() &&
         before.leader_epoch == partition.leader_epoch() &&
         before.log_start_offset == partition.log_start_offset() &&
         before.high_watermark == partition.high_watermark() &&
         before.log_end_offset == partition.log_end_offset() &&
         before.isr_size == static_cast<int32_t>(partition.isr().size()) &&
         before.min_insync_replicas == partition.config().min_insync_replicas &&
         before.log == &partition.log();
}

}  // namespace

void Cluster::NoteElection(const EventFields& event) {
  std::optional<std::string> topic = event.StringValue(field::kTopic);
  const std::optional<int64_t> partition = event.IntegerValue(field::kPartition);
  if (!topic || !partition) {
    full_pass_ = true;  // not a partition's election: every replica again
    return;
  }
  reobserve_.push_back(
      TopicPartition{std::move(*topic), PartitionId(static_cast<int32_t>(*partition))});
}

void Cluster::ObserveBrokers() {
  // Cost proportional to what changed: each broker keeps the partitions whose observable state
  // moved (ReplicaManager::TakeChangedPartitions); a partial pass of the InvariantChecker
  // observes those whose observation differs, and every replica of a partition just elected
  // (what the checker keeps of it may have changed). A process started or stopped, a topic
  // deleted, or events run without a pass make a full pass.
  const uint64_t events = world_.loop().events_executed();
  const bool full = full_pass_ || events != events_at_last_pass_ + 1;
  events_at_last_pass_ = events;
  world_.ClearActivity();
  full_pass_ = false;
  std::sort(reobserve_.begin(), reobserve_.end());
  reobserve_.erase(std::unique(reobserve_.begin(), reobserve_.end()), reobserve_.end());
  observed_slots_.clear();
  for (BrokerSlot& slot : slots_) {
    if (full || (slot.process != nullptr &&
                 (!reobserve_.empty() || slot.process->broker->has_changed_partitions() ||
                  slot.process->broker->partitions_version() != slot.observed_version))) {
      observed_slots_.push_back(&slot);
    }
  }
  if (observed_slots_.empty()) return;  // nothing the checker sees changed
  // The checker reads batch headers from the brokers' logs: on their disks, but without cost or
  // faults, so that a checked run is the same run as an unchecked one.
  for (BrokerSlot* slot : observed_slots_) {
    if (slot->node->disk() != nullptr) slot->node->disk()->BeginInspection();
  }
  checker_->BeginPass(world_.Now(), /*partial=*/!full);
  for (BrokerSlot* slot : observed_slots_) ObserveSlot(*slot, full);
  checker_->EndPass();
  for (BrokerSlot* slot : observed_slots_) {
    if (slot->node->disk() != nullptr) slot->node->disk()->EndInspection();
  }
  reobserve_.clear();
}

void Cluster::ObserveSlot(BrokerSlot& slot, bool all) {
  if (slot.process == nullptr) {
    KSIM_CHECK(all);  // a process that went away forces a full pass
    slot.observed.clear();
    return;
  }
  ksim::Broker& broker = *slot.process->broker;
  // Always taken, so that a full pass starts the next change list afresh.
  broker.TakeChangedPartitions(changed_);
  const std::vector<const ksim::Partition*>& partitions = broker.Partitions();
  const uint64_t incarnation = slot.process->incarnation;
  if (!all && slot.observed_version == broker.partitions_version() &&
      slot.observed_incarnation == incarnation) {
    // The same replicas as at the last pass: only those in the change list can look different
    // (Partition::set_change_list); those of a partition just elected are observed whatever
    // they look like. In Partitions() order, as a walk over all of them would.
    KSIM_CHECK(slot.observed.size() == partitions.size());
    auto index_of = [&partitions](const TopicPartition& tp) {
      auto at = std::lower_bound(
          partitions.begin(), partitions.end(), tp,
          [](const ksim::Partition* p, const TopicPartition& key) { return p->tp() < key; });
      return static_cast<size_t>(at - partitions.begin());
    };
    changed_indexes_.clear();  // (index, forced)
    for (const ksim::Partition* partition : changed_) {
      const size_t index = partition->list_index();  // its place in Partitions() and `observed`
      KSIM_CHECK(index < partitions.size() && partitions[index] == partition);
      changed_indexes_.emplace_back(index, false);
    }
    for (const TopicPartition& tp : reobserve_) {
      const size_t index = index_of(tp);
      if (index < partitions.size() && partitions[index]->tp() == tp) {
        changed_indexes_.emplace_back(index, true);
      }
    }
    std::sort(changed_indexes_.begin(), changed_indexes_.end());
    for (size_t i = 0; i < changed_indexes_.size(); ++i) {
      const auto [index, forced] = changed_indexes_[i];
      // Sorted: a forced duplicate follows the unforced one.
      if (i + 1 < changed_indexes_.size() && changed_indexes_[i + 1].first == index) continue;
      ObserveReplicaAt(slot, partitions, index, forced);
    }
    // As many partial observations between two verifications as the broker has replicas (at
    // least kVerifyChangesEvery): the walk costs each observation a constant, not the broker's
    // size.
    if (++partial_observations_ >= std::max<uint64_t>(kVerifyChangesEvery, partitions.size())) {
      partial_observations_ = 0;
      VerifyNothingUnobserved(slot, partitions);
    }
    return;
  }
  bool same_replicas = slot.observed.size() == partitions.size();
  for (size_t i = 0; same_replicas && i < partitions.size(); ++i) {
    same_replicas = slot.observed[i].partition == partitions[i];
  }
  if (!same_replicas) {
    // Replicas added or removed: observe every one again. The checker's track of a replica still
    // there is kept (by its partition's name, as the checker's own tracks are); those of the
    // replicas gone go with them. Both lists are in partition order: a merge.
    all = true;
    std::vector<ObservedReplica> before = std::move(slot.observed);
    slot.observed.assign(partitions.size(), ObservedReplica{});
    size_t from = 0;
    for (size_t i = 0; i < partitions.size(); ++i) {
      const TopicPartition& tp = partitions[i]->tp();
      while (from < before.size() &&
             (before[from].partition == nullptr || before[from].seen.tp < tp)) {
        ++from;
      }
      if (from < before.size() && before[from].seen.tp == tp) {
        slot.observed[i].track = before[from].track;
      }
    }
  }
  slot.observed_version = broker.partitions_version();
  slot.observed_incarnation = incarnation;
  for (size_t i = 0; i < partitions.size(); ++i) ObserveReplicaAt(slot, partitions, i, all);
}

void Cluster::ObserveReplicaAt(BrokerSlot& slot,
                               const std::vector<const ksim::Partition*>& partitions, size_t index,
                               bool always) {
  ObservedReplica& cached = slot.observed[index];
  const ksim::Partition& partition = *partitions[index];
  const uint64_t incarnation = slot.process->incarnation;
  if (!always && SameObservation(cached.seen, incarnation, partition)) return;
  ReplicaObservation now = ObserveReplica(slot.id, incarnation, partition);
  now.truncates_by_leader_epoch =
      slot.process->broker->replica_manager().truncation() == TruncationPolicy::kLeaderEpoch;
  checker_->Observe(now, cached.track);
  cached.partition = &partition;
  cached.seen = std::move(now);
}

void Cluster::VerifyNothingUnobserved(const BrokerSlot& slot,
                                      const std::vector<const ksim::Partition*>& partitions) const {
  for (size_t i = 0; i < partitions.size(); ++i) {
    KSIM_CHECK_MSG(
        SameObservation(slot.observed[i].seen, slot.process->incarnation, *partitions[i]),
        "a replica changed without being in its broker's change list");
  }
}

void Cluster::RunFor(TimeUs duration_us) {
  KSIM_CHECK(duration_us >= 0);
  const TimeUs end_us = world_.Now() + duration_us;
  EventLoop& loop = world_.loop();
  for (;;) {
    std::optional<EventLoop::NextEvent> next = loop.PeekNext();
    if (!next || next->time_us > end_us) break;
    KSIM_CHECK(loop.Step());
    AfterStep();
  }
  loop.RunUntil(end_us);  // nothing is due: only moves the clock
}

bool Cluster::RunUntil(const std::function<bool()>& done, TimeUs max_us) {
  KSIM_CHECK(max_us >= 0);
  const TimeUs end_us = world_.Now() + max_us;
  EventLoop& loop = world_.loop();
  if (done()) return true;
  for (;;) {
    std::optional<EventLoop::NextEvent> next = loop.PeekNext();
    if (!next || next->time_us > end_us) break;
    KSIM_CHECK(loop.Step());
    AfterStep();
    if (done()) return true;
  }
  loop.RunUntil(end_us);
  return done();
}

// ---- Faults
// ---------------------------------------------------------------------------------------

Status Cluster::CrashBroker(BrokerId id, const CrashOptions& options) {
  return world_.CrashNode(slot(id).node->name(), options);
}

Status Cluster::RestartBroker(BrokerId id) { return world_.RestartNode(slot(id).node->name()); }

Status Cluster::ShutdownBroker(BrokerId id, std::function<void()> done) {
  BrokerSlot& s = slot(id);
  if (s.process == nullptr || s.process->shutting_down) {
    return Status(Errc::kInvalidArgument, s.node->name() + " is not running");
  }
  s.process->shutting_down = true;
  const uint64_t incarnation = s.process->incarnation;
  s.process->broker->Shutdown([this, id, incarnation, done = std::move(done)]() mutable {
    BrokerSlot& stopping = slot(id);
    // Not from inside the Broker's own callback: the node goes down (and the Broker with it) as
    // an event of its own, which dies with the process if it crashes first.
    stopping.node->Schedule(0, [this, id, incarnation, done = std::move(done)]() {
      BrokerSlot& s = slot(id);
      if (s.process == nullptr || s.process->incarnation != incarnation) return;
      Status stopped = world_.CleanShutdownNode(s.node->name());
      KSIM_CHECK(stopped.ok());
      if (done) done();
    });
  });
  return Status::Ok();
}

Status Cluster::SlowBroker(BrokerId id, TimeUs extra_delay_us, TimeUs duration_us) {
  return world_.SlowNode(slot(id).node->name(), extra_delay_us, duration_us);
}

Status Cluster::UpdateBrokerConfig(BrokerId id, const ConfigOverrides& overrides) {
  BrokerSlot& s = slot(id);
  KSIM_ASSIGN_OR_RETURN(BrokerConfig config,
                        ApplyConfigOverrides(s.config, overrides, "config " + s.node->name()));
  s.config = std::move(config);
  return Status::Ok();
}

Status Cluster::ExpireSession(BrokerId id) {
  BrokerSlot& s = slot(id);
  if (s.process == nullptr) return Status(Errc::kInvalidArgument, s.node->name() + " is down");
  const ZkSessionId session = s.process->zk->session_id();
  if (session == kNoSession) {
    return Status(Errc::kInvalidArgument, s.node->name() + " has no ZooKeeper session yet");
  }
  world_.Trace(s.node->name(), ev::kZkExpire, EventFields{{field::kSession, session.value()}});
  return zk_server_->ExpireSession(session);
}

// ---- Topics
// ---------------------------------------------------------------------------------------

void Cluster::CreateTopic(TopicSpec spec, std::function<void(Status)> done) {
  KSIM_CHECK(done != nullptr);
  std::optional<ReplicaAssignment> manual;
  if (!spec.assignment.empty()) manual = spec.assignment;
  topic_admin_->CreateTopic(
      spec.name, spec.partitions, spec.replication_factor, std::move(manual), spec.config,
      [done = std::move(done)](Result<ReplicaAssignment> created) { done(created.status()); });
}

Status Cluster::CreateTopicAndWait(TopicSpec spec, TimeUs max_us) {
  const std::string topic = spec.name;
  const int32_t partitions =
      spec.assignment.empty() ? spec.partitions : static_cast<int32_t>(spec.assignment.size());
  std::optional<Status> outcome;
  CreateTopic(std::move(spec), [&outcome](Status status) { outcome = std::move(status); });
  const bool answered = RunUntil([&] { return outcome.has_value(); }, max_us);
  if (!answered) return Status(Errc::kRequestTimedOut, "creating topic " + topic + " timed out");
  if (!outcome->ok()) return *outcome;
  // Checked after every event: the partitions found led are passed over until the last one is,
  // then all are checked once more (one may have lost its leader meanwhile), so that waiting
  // costs the partitions, not the partitions times the events.
  int32_t first_unled = 0;
  const bool led = RunUntil(
      [&] {
        auto unled_from = [&](int32_t from) {
          for (int32_t p = from; p < partitions; ++p) {
            if (LeaderOf(TopicPartition{topic, PartitionId(p)}) == kNoBroker) return p;
          }
          return partitions;
        };
        first_unled = unled_from(first_unled);
        if (first_unled < partitions) return false;
        first_unled = unled_from(0);
        return first_unled == partitions;
      },
      max_us);
  if (!led) return Status(Errc::kRequestTimedOut, "topic " + topic + " has no leader yet");
  return Status::Ok();
}

// ---- Inspection
// -----------------------------------------------------------------------------------

std::vector<BrokerId> Cluster::broker_ids() const {
  std::vector<BrokerId> ids;
  for (const BrokerSlot& s : slots_) ids.push_back(s.id);
  return ids;
}

Broker* Cluster::broker(BrokerId id) {
  BrokerSlot& s = slot(id);
  return s.process == nullptr ? nullptr : s.process->broker.get();
}

const BrokerConfig& Cluster::broker_config(BrokerId id) const { return slot(id).config; }

BrokerId Cluster::ActiveController() {
  BrokerId active = kNoBroker;
  ControllerEpoch best{0};
  for (BrokerSlot& s : slots_) {
    if (s.process == nullptr) continue;
    const Controller& controller = s.process->broker->controller();
    if (!controller.is_active()) continue;
    if (active == kNoBroker || controller.epoch() > best) {
      active = s.id;
      best = controller.epoch();
    }
  }
  return active;
}

BrokerId Cluster::LeaderOf(const TopicPartition& tp) {
  const BrokerId controller_id = ActiveController();
  if (controller_id != kNoBroker) {
    const auto& partitions = broker(controller_id)->controller().partitions();
    auto it = partitions.find(tp);
    if (it == partitions.end()) return kNoBroker;
    return it->second.state.leader;
  }
  BrokerId leader = kNoBroker;
  LeaderEpoch best = kUndefinedEpoch;
  for (BrokerSlot& s : slots_) {
    if (s.process == nullptr) continue;
    const ksim::Partition* partition = s.process->broker->GetPartition(tp);
    if (partition == nullptr || !partition->is_leader()) continue;
    if (leader == kNoBroker || partition->leader_epoch() > best) {
      leader = s.id;
      best = partition->leader_epoch();
    }
  }
  return leader;
}

std::optional<zk::PartitionState> Cluster::ZkPartitionState(const TopicPartition& tp) const {
  std::optional<ZnodeData> data = zk_server_->Read(zk::PartitionStatePath(tp.topic, tp.partition));
  if (!data) return std::nullopt;
  Result<zk::PartitionState> state = zk::DecodePartitionState(data->data);
  if (!state.ok()) return std::nullopt;
  return *state;
}

}  // namespace ksim::sim
