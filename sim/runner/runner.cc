#include "sim/runner/runner.h"

#include <algorithm>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "core/base/check.h"
#include "core/base/text.h"
#include "core/base/trace_names.h"
#include "core/clients/producer/producer.h"
#include "core/cluster/partition.h"
#include "core/record/record_batch.h"
#include "core/server/replica_manager.h"
#include "core/zk/paths.h"
#include "sim/runner/run.h"
#include "sim/world/virtual_disk.h"

namespace ksim::sim {
namespace {

constexpr TimeUs kSetupMaxUs = 120 * 1'000'000;   // the cluster's start, each topic's creation
constexpr TimeUs kDrainCheckUs = 100 * kUsPerMs;  // how often the drain condition is checked
constexpr int kProgressSteps = 20;                // about every 5%

TimeUs Ms(int64_t ms) { return static_cast<TimeUs>(ms) * kUsPerMs; }

LinkSpec ToLinkSpec(const RangeMs& latency_ms, uint32_t loss_ppm, int64_t bandwidth) {
  return LinkSpec{Ms(latency_ms.min), Ms(latency_ms.max), loss_ppm, bandwidth};
}

LatencyRangeUs ToLatency(const RangeMs& range_us) {
  return LatencyRangeUs{range_us.min, range_us.max};
}

bool NamesKey(const ConfigOverrides& config, std::string_view key) {
  return std::any_of(config.begin(), config.end(),
                     [&](const auto& entry) { return entry.first == key; });
}

CommitMode ToCommitMode(CommitKind kind) {
  switch (kind) {
    case CommitKind::kAuto:
      return CommitMode::kAuto;
    case CommitKind::kBeforeProcessing:
      return CommitMode::kBeforeProcessing;
    case CommitKind::kAfterProcessing:
      return CommitMode::kAfterProcessing;
  }
  return CommitMode::kAuto;
}

std::optional<int64_t> MetricValue(const CheckResult& check, std::string_view name) {
  for (const Metric& metric : check.metrics) {
    if (metric.name == name) return metric.value;
  }
  return std::nullopt;
}

}  // namespace

std::string ExpectationResult::Expected() const {
  const Expectation& e = expectation;
  if (e.metric == kSettledExpectation) return e.exact.value_or(0) != 0 ? "true" : "false";
  std::string range = "any";
  if (e.exact) {
    range = std::to_string(*e.exact);
  } else if (e.min && e.max) {
    range = std::to_string(*e.min) + ".." + std::to_string(*e.max);
  } else if (e.min) {
    range = ">= " + std::to_string(*e.min);
  } else if (e.max) {
    range = "<= " + std::to_string(*e.max);
  }
  if (e.cause) range += ", each cause has \"" + *e.cause + "\"";
  return range;
}

std::string ExpectationResult::Actual() const {
  if (expectation.metric == kSettledExpectation) return actual != 0 ? "true" : "false";
  std::string text = std::to_string(actual);
  if (expectation.cause) text += ", " + std::to_string(other_causes) + " with another cause";
  return text;
}

bool ExpectationHolds(const Expectation& expectation, int64_t actual) {
  if (expectation.exact && actual != *expectation.exact) return false;
  if (expectation.min && actual < *expectation.min) return false;
  if (expectation.max && actual > *expectation.max) return false;
  return true;
}

namespace {

// RunOptions::leave_world_to_exit: kept, never destroyed (not by exit's static destructors either).
void LeaveToExit(std::unique_ptr<ScenarioRun> run) {
  static auto* const left = new std::vector<std::unique_ptr<ScenarioRun>>();
  left->push_back(std::move(run));
}

}  // namespace

Result<RunResult> RunScenario(const Scenario& scenario, const RunOptions& options) {
  auto run = std::make_unique<ScenarioRun>(scenario, options);
  Result<RunResult> result = run->Execute();
  if (options.leave_world_to_exit) LeaveToExit(std::move(run));
  return result;
}

// ---- ScenarioRun: setup ------------------------------------------------------------------------

ScenarioRun::ScenarioRun(const Scenario& scenario, const RunOptions& options)
    : scenario_(scenario), options_(options) {
  seed_ = options.seed.value_or(scenario.seed);
  total_us_ = Ms(scenario.duration_ms) + Ms(scenario.final_phase.drain_ms);
  links_applied_.assign(scenario.cluster.network.links.size(), false);
}

ScenarioRun::~ScenarioRun() = default;

Result<RunResult> ScenarioRun::Execute() {
  KSIM_RETURN_IF_ERROR(Setup());
  if (options_.driver != nullptr) {
    KSIM_RETURN_IF_ERROR(RunDriven(*options_.driver));
  } else {
    for (const Action& action : scenario_.actions) {
      RunTo(t0_us_ + Ms(action.at_ms));
      RunAction(action);
    }
    RunTo(t0_us_ + Ms(scenario_.duration_ms));
  }
  RunFinalPhase();
  RunResult result;
  KSIM_RETURN_IF_ERROR(Finish(result));
  return result;
}

Status ScenarioRun::Setup() {
  KSIM_RETURN_IF_ERROR(BuildWorld());
  KSIM_RETURN_IF_ERROR(StartCluster());
  KSIM_RETURN_IF_ERROR(CreateTopics());
  // Scenario time 0, on a whole millisecond.
  const TimeUs now_us = world_->Now();
  t0_us_ = (now_us + kUsPerMs - 1) / kUsPerMs * kUsPerMs;
  cluster_->RunFor(t0_us_ - now_us);
  next_progress_us_ = t0_us_;
  world_->Trace(node::kScenario, ev::kScenarioStart,
                EventFields{{field::kDurationMs, scenario_.duration_ms},
                            {field::kDrainMs, scenario_.final_phase.drain_ms},
                            {field::kDescription, scenario_.description}});
  KSIM_RETURN_IF_ERROR(CreateClients());
  cli_ = std::make_unique<CliTools>(
      *cluster_, *history_,
      [this](size_t index, const std::string& line) { CliOutput(index, line); });
  return Status::Ok();
}

Status ScenarioRun::BuildWorld() {
  TraceHeader header;
  header.scenario = scenario_.name;
  header.variant = options_.variant;
  header.seed = seed_;
  header.level = options_.trace_level;
  header.kafka_version = std::string(KafkaReleaseName(scenario_.kafka_version));
  for (const ClientSpec& client : scenario_.clients) {
    if (client.kafka_version != scenario_.kafka_version) {
      header.client_kafka_versions[client.id] = std::string(KafkaReleaseName(client.kafka_version));
    }
  }
  std::optional<TraceWriter> trace;
  if (!options_.trace_path.empty()) {
    KSIM_ASSIGN_OR_RETURN(TraceWriter file, TraceWriter::ToFile(options_.trace_path, header));
    trace.emplace(std::move(file));
  } else if (options_.keep_trace_bytes) {
    trace.emplace(TraceWriter::ToMemory(header));
  } else {
    trace.emplace(TraceWriter::HashOnly(header));
  }
  const NetworkSpec& network = scenario_.cluster.network;
  WorldOptions world_options;
  world_options.default_link =
      ToLinkSpec(network.latency_ms, network.loss_ppm, network.bandwidth_bytes_per_s);
  world_ = std::make_unique<World>(seed_, std::move(*trace), world_options);
  observer_ = std::make_unique<RunObserver>(*world_);
  history_ = std::make_unique<History>(*world_);

  const ClusterSpec& spec = scenario_.cluster;
  ClusterOptions cluster;
  cluster.brokers = spec.brokers;
  cluster.kafka_version = scenario_.kafka_version;
  cluster.config = spec.config;
  bool session_named = NamesKey(spec.config, "zookeeper.session.timeout.ms");
  for (const auto& [id, overrides] : spec.broker_config) {
    cluster.broker_config[id] = overrides;
    session_named = session_named || NamesKey(overrides, "zookeeper.session.timeout.ms");
  }
  if (spec.zookeeper.session_timeout_ms && !session_named) {
    cluster.config.emplace_back("zookeeper.session.timeout.ms",
                                std::to_string(*spec.zookeeper.session_timeout_ms));
  }
  cluster.zookeeper.tick_time_us = Ms(spec.zookeeper.tick_time_ms);
  cluster.zookeeper.min_session_timeout_us = Ms(spec.zookeeper.min_session_timeout_ms);
  cluster.zookeeper.max_session_timeout_us = Ms(spec.zookeeper.max_session_timeout_ms);
  cluster.election_policy = scenario_.policy.election;
  Result<TruncationPolicy> truncation = ParseTruncationPolicy(scenario_.TruncationPolicyName());
  if (!truncation.ok()) {
    return Status(Errc::kInvalidConfig, "policy.truncation: " + truncation.status().message());
  }
  cluster.truncation = *truncation;
  // The mirror from 0.11 of the leader-epoch policy's format before it (Cluster::MakeConfig):
  // Kafka truncates a follower to its high watermark only below inter.broker.protocol.version
  // 0.11.0-IV2 and refuses a message format newer than the protocol
  // (0.11.0.0:KafkaConfig, "log.message.format.version ... cannot be used when
  // inter.broker.protocol.version is set to ..."), so its logs then hold message sets, which a
  // leader reads from the offset asked. The high-watermark policy a scenario (or the policy
  // matrix, or explore) chooses at 0.11 or later brings the 0.10 format along when no
  // log.message.format.version is given: with record batches v2 a follower cut to its high
  // watermark inside a batch is answered from the batch's base, a pair no Kafka runs.
  bool format_named = NamesKey(spec.config, "log.message.format.version");
  for (const auto& [id, overrides] : spec.broker_config) {
    format_named = format_named || NamesKey(overrides, "log.message.format.version");
  }
  if (cluster.truncation == TruncationPolicy::kHighWatermark &&
      scenario_.kafka_version >= KafkaRelease::k0_11_0 && !format_named) {
    cluster.config.emplace_back("log.message.format.version", "0.10.2");
  }
  cluster.disk.read_latency = ToLatency(spec.disk.read_latency_us);
  cluster.disk.write_latency = ToLatency(spec.disk.write_latency_us);
  cluster.disk.sync_latency = ToLatency(spec.disk.fsync_latency_us);
  cluster.disk.metadata_latency = ToLatency(spec.disk.metadata_latency_us);
  cluster.disk.capacity_bytes = spec.disk.capacity_bytes;
  Result<std::unique_ptr<Cluster>> created = Cluster::Create(*world_, std::move(cluster));
  if (!created.ok()) {
    return Status(Errc::kInvalidConfig, "cluster: " + created.status().message());
  }
  cluster_ = std::move(created).value();
  // An ISR expansion's log ends, for the history checker's KAFKA-7128 rule: what the leader
  // knew of each follower it added (its last fetch offset).
  observer_->SetFetcherStopped(
      [this](BrokerId replica, BrokerId leader) { NoteFetcherStop(replica, leader); });
  observer_->SetFollowerLogEnd(
      [this](BrokerId leader, const TopicPartition& tp, BrokerId follower) -> int64_t {
        const Partition* led = RunningReplica(leader, tp);
        if (led == nullptr) return -1;
        auto remote = led->remote_replicas().find(follower);
        if (remote == led->remote_replicas().end() || !remote->second.log_end_offset) return -1;
        return remote->second.log_end_offset->value();
      });
  ApplyLinkOverrides();
  return Status::Ok();
}

void ScenarioRun::ApplyLinkOverrides() {
  const NetworkSpec& network = scenario_.cluster.network;
  for (size_t i = 0; i < network.links.size(); ++i) {
    const LinkOverride& link = network.links[i];
    if (links_applied_[i]) continue;
    if (world_->FindNode(link.a) == nullptr || world_->FindNode(link.b) == nullptr) continue;
    const LinkSpec spec = ToLinkSpec(
        link.latency_ms.value_or(network.latency_ms), link.loss_ppm.value_or(network.loss_ppm),
        link.bandwidth_bytes_per_s.value_or(network.bandwidth_bytes_per_s));
    Status set = world_->topology().SetLink(link.a, link.b, spec);
    KSIM_CHECK_MSG(set.ok(), "the loader validated every link");
    links_applied_[i] = true;
  }
}

Status ScenarioRun::StartCluster() {
  Status started = cluster_->Start();
  if (!started.ok()) return Status(Errc::kInvalidConfig, "cluster: " + started.message());
  const size_t brokers = cluster_->broker_ids().size();
  const bool up = cluster_->RunUntil(
      [&] {
        return cluster_->ActiveController() != kNoBroker &&
               cluster_->zookeeper().Children("/brokers/ids").size() == brokers;
      },
      kSetupMaxUs);
  if (!up) {
    return Status(Errc::kRequestTimedOut,
                  "the cluster did not start: brokers unregistered or no controller after " +
                      std::to_string(kSetupMaxUs / 1'000'000) + " s");
  }
  return Status::Ok();
}

Status ScenarioRun::CreateTopics() {
  for (const TopicEntry& topic : scenario_.topics) {
    Result<TopicConfig> config =
        MakeTopicConfig(cluster_->broker_config(BrokerId(1)), topic.config, "topics/" + topic.name);
    if (!config.ok()) return Status(Errc::kInvalidConfig, config.status().message());
    observer_->SetMinInsyncReplicas(topic.name, config->min_insync_replicas);
    TopicSpec spec;
    spec.name = topic.name;
    spec.partitions = topic.partitions;
    spec.replication_factor = topic.replication_factor;
    spec.assignment = topic.assignment;
    for (const auto& [key, value] : topic.config) spec.config[key] = value;
    const TimeUs created_us = world_->Now();
    for (int32_t p = 0; p < topic.partitions; ++p) {
      observer_->WatchPartition(TopicPartition{topic.name, PartitionId(p)}, created_us);
    }
    Status created = cluster_->CreateTopicAndWait(spec, kSetupMaxUs);
    if (!created.ok()) {
      return Status(Errc::kInvalidConfig, "topics/" + topic.name + ": " + created.ToString());
    }
  }
  return Status::Ok();
}

Status ScenarioRun::CreateClients() {
  std::vector<std::string> bootstrap;
  for (BrokerId id : cluster_->broker_ids()) bootstrap.push_back(node::Broker(id));
  const int64_t t0_ms = t0_us_ / kUsPerMs;
  for (const ClientSpec& client : scenario_.clients) {
    if (client.type == ClientType::kProducer) {
      ProducerClientOptions producer;
      producer.id = client.id;
      producer.topic = client.topic;
      producer.messages = client.messages;
      producer.rate_per_s = client.rate_per_s;
      producer.start_ms = t0_ms + client.start_ms;
      producer.key = client.key;
      producer.config = client.config;
      producer.bootstrap = bootstrap;
      producer.kafka_version = client.kafka_version;
      producer.brokers_kafka_version = scenario_.kafka_version;
      Result<std::unique_ptr<ProducerClient>> created =
          ProducerClient::Create(*world_, *history_, std::move(producer));
      if (!created.ok()) {
        return Status(Errc::kInvalidConfig,
                      "clients/" + client.id + ": " + created.status().message());
      }
      for (const std::string& warning : (*created)->config().warnings) {
        client_warnings_.push_back(client.id + ": " + warning);
      }
      producers_.push_back(std::move(created).value());
    } else {
      ConsumerClientOptions consumer;
      consumer.id = client.id;
      consumer.topics = client.topics;
      consumer.group = client.group;
      consumer.start_ms = t0_ms + client.start_ms;
      consumer.commit = ToCommitMode(client.commit);
      consumer.processing_ms = client.processing_ms;
      consumer.config = client.config;
      consumer.bootstrap = bootstrap;
      consumer.kafka_version = client.kafka_version;
      consumer.brokers_kafka_version = scenario_.kafka_version;
      if (client.zookeeper_consumer) consumer.kind = ConsumerKind::kZookeeper;
      Result<std::unique_ptr<ConsumerClient>> created =
          ConsumerClient::Create(*world_, *history_, std::move(consumer));
      if (!created.ok()) {
        return Status(Errc::kInvalidConfig,
                      "clients/" + client.id + ": " + created.status().message());
      }
      for (const std::string& warning : (*created)->config().warnings) {
        client_warnings_.push_back(client.id + ": " + warning);
      }
      consumers_.push_back(std::move(created).value());
    }
  }
  ApplyLinkOverrides();
  return Status::Ok();
}

// ---- Running -----------------------------------------------------------------------------------

void ScenarioRun::RunTo(TimeUs target_us) {
  const TimeUs step_us = std::max<TimeUs>(total_us_ / kProgressSteps, 1);
  // A driver (serve, replay) moves the clock itself, past duration_ms when the run goes on
  // longer: progress steps already behind the clock are skipped, not run backwards.
  if (world_->Now() > next_progress_us_ + step_us) {
    next_progress_us_ += (world_->Now() - next_progress_us_) / step_us * step_us;
  }
  while (world_->Now() < target_us) {
    const TimeUs until_us = std::min(target_us, next_progress_us_ + step_us);
    cluster_->RunFor(until_us - world_->Now());
    NoteMissedRestarts();
    if (world_->Now() >= next_progress_us_ + step_us) {
      next_progress_us_ += step_us;
      ReportProgress();
    }
  }
}

Status ScenarioRun::RunDriven(RunDriver& driver) {
  RunContext context{*world_, *cluster_, *history_, t0_us_, [this](TimeUs target_us) {
                       if (target_us > world_->Now()) cluster_->RunFor(target_us - world_->Now());
                     }};
  KSIM_RETURN_IF_ERROR(driver.Start(context));
  bool running = true;
  for (const Action& action : scenario_.actions) {
    running = driver.RunTo(context, t0_us_ + Ms(action.at_ms));
    if (!running) break;
    RunAction(action);
  }
  if (running) driver.RunTo(context, kRunForever);
  driver.Stop(context);
  return Status::Ok();
}

void ScenarioRun::ReportProgress() {
  if (options_.progress) {
    options_.progress(std::min(world_->Now() - t0_us_, total_us_), total_us_);
  }
}

void ScenarioRun::RunFinalPhase() {
  const FinalPhase& final_phase = scenario_.final_phase;
  final_start_us_ = world_->Now();
  world_->Trace(node::kScenario, ev::kFinalPhase,
                EventFields{{field::kHeal, final_phase.heal},
                            {field::kRestartAll, final_phase.restart_all},
                            {field::kDrainMs, final_phase.drain_ms}});
  if (final_phase.heal) {
    world_->Heal();
    for (BrokerId id : cluster_->broker_ids()) {
      const std::optional<NodeId> node = world_->topology().Find(node::Broker(id));
      if (node && world_->topology().SlowExtraUs(*node) > 0) {
        KSIM_CHECK(cluster_->SlowBroker(id, 0, 0).ok());
      }
    }
    if (!cluster_->zookeeper().up()) cluster_->zookeeper().Up();
  }
  if (final_phase.restart_all) RestartAll();
  // drain_ms counts from the moment the running producers have been handed their last record: a
  // producer restarted only now still has the rest of its schedule to go, at its own rate. A
  // producer of 2.1 on promises every record an outcome within its delivery.timeout.ms (KIP-91),
  // which may be longer than drain_ms (a batch the leader answers OUT_OF_ORDER_SEQUENCE_NUMBER is
  // retried until then): the drain waits for that promise too.
  const TimeUs drain_start_us = world_->Now();
  TimeUs last_record_due_us = drain_start_us;
  TimeUs outcomes_due_us = 0;
  auto note_schedule = [&](const ProducerClient& producer) {
    if (!producer.running()) return;  // down: its schedule does not run
    const TimeUs last_us = std::max(drain_start_us, producer.LastRecordDueUs());
    last_record_due_us = std::max(last_record_due_us, last_us);
    if (DeliveryTimeoutApplies(producer.config().release)) {
      outcomes_due_us =
          std::max(outcomes_due_us, last_us + Ms(producer.config().delivery_timeout_ms));
    }
  };
  for (const auto& producer : producers_) note_schedule(*producer);
  for (const auto& producer : cli_->producers()) note_schedule(*producer);
  const TimeUs drain_end_us =
      std::max(last_record_due_us + Ms(final_phase.drain_ms), outcomes_due_us);
  while (!Drained() && world_->Now() < drain_end_us) {
    RunTo(std::min(drain_end_us, world_->Now() + kDrainCheckUs));
    // A broker can still go down during the drain (a controlled shutdown that could not reach
    // the controller before the heal completes now; a broker halting): it comes back too, so
    // that the audit reads every replica the cluster has.
    if (final_phase.restart_all) RestartDownBrokers();
  }
  undrained_ = Undrained();
  world_->Trace(node::kScenario, ev::kDrained,
                EventFields{{field::kComplete, undrained_.empty()},
                            {field::kDrainMs, (world_->Now() - drain_start_us) / kUsPerMs}});
  if (options_.progress) options_.progress(total_us_, total_us_);
}

void ScenarioRun::RestartDownBrokers() {
  for (BrokerId id : cluster_->broker_ids()) {
    Node& node = world_->node(node::Broker(id));
    if (node.up() && cluster_->broker(id) == nullptr) {
      KSIM_CHECK(world_->CrashNode(node.name()).ok());
    }
    // A broker whose start-up failed on its previous registration is started again by the
    // cluster (Cluster::RetryStart), not every drain check.
    if (!node.up() && !cluster_->start_retry_pending(id)) {
      KSIM_CHECK(cluster_->RestartBroker(id).ok());
    }
  }
}

void ScenarioRun::RestartAll() {
  // Injected disk faults end first, so that a restarted broker can load its logs; a broker whose
  // node is up without a process (its start-up failed on a fault) is restarted too.
  for (BrokerId id : cluster_->broker_ids()) {
    Node& node = world_->node(node::Broker(id));
    if (node.disk() != nullptr) {
      node.disk()->ClearAllFaults();
      node.disk()->set_capacity_bytes(scenario_.cluster.disk.capacity_bytes);
    }
  }
  full_disks_.clear();
  RestartDownBrokers();
  auto restart_client = [&](const std::string& id) {
    Node* node = world_->FindNode(id);
    if (node != nullptr && !node->up()) KSIM_CHECK(world_->RestartNode(id).ok());
  };
  for (const auto& producer : producers_) restart_client(producer->id());
  for (const auto& consumer : consumers_) restart_client(consumer->id());
  for (const auto& producer : cli_->producers()) restart_client(producer->id());
  for (const auto& consumer : cli_->consumers()) restart_client(consumer->id());
}

std::string ScenarioRun::Unsettled() {
  // Every audited partition has a live leader whose high watermark reached its log end and whose
  // ISR holds every assigned replica that is running: the audit then reads what the cluster
  // really kept, not a moment of a failover (a leader not yet elected, acks=1 records still above
  // a new leader's HW being replicated).
  for (const std::string& topic : AuditedTopics()) {
    for (PartitionId partition : zk_partitions_.Of(*cluster_, topic)) {
      const TopicPartition tp{topic, partition};
      if (std::string unsettled = UnsettledPartition(tp); !unsettled.empty()) {
        unsettled_hint_ = tp;
        return unsettled;
      }
    }
  }
  return "";
}

std::string ScenarioRun::UnsettledPartition(const TopicPartition& tp) {
  const BrokerId leader = cluster_->LeaderOf(tp);
  const Partition* led = RunningReplica(leader, tp);
  if (led == nullptr || led->role() != ReplicaRole::kLeader) {
    // The controller may still name a broker whose restart it missed (KAFKA-1120): that
    // process was never told it leads.
    return ToString(tp) + " has no live leader" +
           (leader == kNoBroker ? "" : MissedRestart(leader));
  }
  if (led->high_watermark() < led->log_end_offset()) {
    std::string text = ToString(tp) + "'s high watermark " +
                       std::to_string(led->high_watermark().value()) + " is below its log end " +
                       std::to_string(led->log_end_offset().value());
    // A follower in the ISR that fetches nothing holds it there: Kafka's fetcher thread for a
    // leader, once ended, stays registered, and partitions added to it later are never fetched.
    for (BrokerId replica : led->isr()) {
      if (replica == leader || cluster_->broker(replica) == nullptr) continue;
      std::string stopped = FetcherStopped(replica, leader);
      if (!stopped.empty())
        return text + ", and " + node::Broker(replica) + " is in its ISR" + stopped;
    }
    return text;
  }
  for (BrokerId replica : led->assigned_replicas()) {
    if (cluster_->start_retry_pending(replica)) {
      return node::Broker(replica) + " is to be started again: its start-up found its previous " +
             "registration, whose session has not yet timed out";
    }
    if (cluster_->broker(replica) == nullptr) continue;
    const std::vector<BrokerId>& isr = led->isr();
    if (std::find(isr.begin(), isr.end(), replica) == isr.end()) {
      return node::Broker(replica) + " is running but out of " + ToString(tp) + "'s ISR" +
             MissedRestart(replica) + FetcherStopped(replica, leader) + ExitsAtEveryStart(replica) +
             StaleZkVersion(tp, leader) + LeaderEndPastRecords(tp, leader);
    }
  }
  return "";
}

std::string ScenarioRun::MissedRestart(BrokerId broker) {
  const BrokerId controller_id = cluster_->ActiveController();
  Broker* controller = controller_id == kNoBroker ? nullptr : cluster_->broker(controller_id);
  if (controller == nullptr || !controller->controller().is_active()) return "";
  const std::optional<Zxid> known = controller->controller().known_registration(broker);
  const std::optional<ZnodeData> now = cluster_->zookeeper().Read(zk::BrokerIdPath(broker));
  if (!known || !now || now->stat.czxid == *known) return "";
  return ": the active controller (" + node::Broker(controller_id) + ") missed its restart, " +
         "it knows an older registration (czxid " + std::to_string(known->value()) + ", now " +
         std::to_string(now->stat.czxid.value()) + ") and never sent it its partitions' state " +
         "(" + std::string(kMissedRestartDefect) + ")";
}

void ScenarioRun::NoteMissedRestarts() {
  for (BrokerId id : cluster_->broker_ids()) {
    if (cluster_->broker(id) == nullptr) continue;
    // Missed: the controller knows an older registration than ZooKeeper holds. (A process
    // started while its previous process's registration lives on is not missed: its start-up
    // fails and it is started again, docs/broker.md.)
    if (!MissedRestart(id).empty()) missed_restarts_.emplace(id, world_->Now());
  }
}

std::string ScenarioRun::UnassignedAfterAMissedRestart(const std::string& group,
                                                       const TopicPartition& tp) {
  if (missed_restarts_.empty()) return "";
  for (const auto& client : consumers_) {
    const std::string& member_group = client->group().empty() ? client->id() : client->group();
    if (member_group != group || client->kind() != ConsumerKind::kGroupCoordinator) continue;
    const std::vector<TopicPartition> assigned = client->assignment();
    if (std::find(assigned.begin(), assigned.end(), tp) != assigned.end()) return "";
  }
  const auto& [broker, seen_us] = *missed_restarts_.begin();
  return ": no member of " + group + " is assigned it: the active controller missed " +
         node::Broker(broker) + "'s restart (seen at " + FormatSeconds(seen_us) +
         "), which then heard only later steps' UpdateMetadata, so its metadata answers list " +
         "some partitions only, and the group's assignment came from such an answer (" +
         std::string(kMissedRestartDefect) + ")";
}

std::string ScenarioRun::FetcherStopped(BrokerId replica, BrokerId leader) {
  Broker* follower = cluster_->broker(replica);
  if (follower == nullptr) return "";
  const std::optional<ReplicaFetcherManager::Stopped> stopped =
      follower->replica_manager().fetchers().StoppedFetcher(leader);
  if (!stopped) return "";
  const std::string stop = StopText(leader, *stopped);
  std::string text = FetcherStoppedBecause(*follower, *stopped, replica, leader);
  // Nothing named now: what the logs showed when it stopped, if that names a cause (the leader
  // may have truncated or lost what told it since).
  auto then = stops_named_.find({replica, leader});
  if (text.empty() && then != stops_named_.end() && then->second.first == stop) {
    text = then->second.second;
  }
  return stop + text;
}

void ScenarioRun::NoteFetcherStop(BrokerId replica, BrokerId leader) {
  Broker* follower = cluster_->broker(replica);
  if (follower == nullptr) return;
  const std::optional<ReplicaFetcherManager::Stopped> stopped =
      follower->replica_manager().fetchers().StoppedFetcher(leader);
  if (!stopped) return;
  stops_named_[{replica, leader}] = {StopText(leader, *stopped),
                                     FetcherStoppedBecause(*follower, *stopped, replica, leader)};
}

std::string ScenarioRun::StopText(BrokerId leader, const ReplicaFetcherManager::Stopped& stopped) {
  return ": its replica fetcher for " + node::Broker(leader) + " stopped at " + stopped.error +
         " on " + ToString(stopped.tp);
}

std::string ScenarioRun::FetcherStoppedBecause(Broker& follower,
                                               const ReplicaFetcherManager::Stopped& stopped,
                                               BrokerId replica, BrokerId leader) {
  std::string text;
  const Partition* partition = follower.GetPartition(stopped.tp);
  if (partition != nullptr && partition->missed_epochs()) {
    text += ", having been told the same leader at epoch " +
            std::to_string(partition->missed_epochs()->told.value()) + " while it followed epoch " +
            std::to_string(partition->missed_epochs()->followed.value()) + " (" +
            std::string(kSameLeaderDefect) + ")";
  }
  const TopicPartition& tp = stopped.tp;
  std::string below_first = AskedBelowFirstEpoch(tp, replica, leader);
  if (below_first.empty()) {
    below_first = AnsweredUndefinedForAnUnrecordedEpoch(stopped.undefined_answer_for, tp, leader);
  }
  return text + below_first + AskedForAnUnheldEpoch(tp, replica, leader) +
         ForgottenEpochStart(tp, leader) + SameEpochFork(tp, replica, leader) +
         LeaderKeptAnOlderEpoch(tp, replica, leader) +
         AnsweredBelowOwnFirstEpoch(tp, replica, leader) +
         FollowerOffsetJumped(tp, replica, leader);
}

std::string ScenarioRun::FollowerOffsetJumped(const TopicPartition& tp, BrokerId replica,
                                              BrokerId leader) {
  const std::optional<EpochLogs> logs = EpochLogsOf(tp, replica, leader);
  if (!logs || logs->followed_batches.empty()) return "";
  const std::map<Offset, EpochSpan>& followed = logs->followed_batches;
  // The first gap between two of the follower's batches.
  auto gap = followed.end();
  for (auto it = std::next(followed.begin()); it != followed.end(); ++it) {
    if (std::prev(it)->second.last + 1 < it->first) {
      gap = it;
      break;
    }
  }
  if (gap == followed.end()) return "";
  const Offset end = followed.rbegin()->second.last + 1;
  // The leader's batch holding the follower's log end, starting below it.
  const std::map<Offset, EpochSpan>& led = logs->led_batches;
  auto straddled = led.upper_bound(end);
  if (straddled == led.begin()) return "";
  --straddled;
  if (straddled->first >= end || straddled->second.last < end) return "";
  return ", where its own log jumps from offset " +
         std::to_string(std::prev(gap)->second.last.value()) + " to a batch at [" +
         std::to_string(gap->first.value()) + ".." + std::to_string(gap->second.last.value()) +
         "] (a base offset a corrupted byte raised, kept by the recovery), so its log end " +
         std::to_string(end.value()) + " lies inside its leader " + node::Broker(leader) +
         "'s batch [" + std::to_string(straddled->first.value()) + ".." +
         std::to_string(straddled->second.last.value()) + "] (" +
         std::string(kFollowerOffsetJumpDefect) + ")";
}

std::string ScenarioRun::AnsweredBelowOwnFirstEpoch(const TopicPartition& tp, BrokerId replica,
                                                    BrokerId leader) {
  const std::optional<EpochAsk> ask = EpochAskOf(tp, replica, leader);
  if (!ask) return "";
  const Partition& followed = ask->followed;
  const Partition& led = ask->led;
  const KafkaRelease release = followed.config().release;
  if (!LeaderEpochRulesAt(release).answer_names_epoch ||
      BelowFirstEpochAt(release) != LeaderEpochCache::BelowFirstEpoch::kUndefined ||
      followed.epochs().entries().empty()) {
    return "";
  }
  // The leader's answer to the follower's latest epoch, and the follower's own lookup of the
  // epoch it names (AbstractFetcherThread.getOffsetTruncationState), with the caches' own code.
  const LeaderEpoch asked = followed.latest_epoch();
  if (asked == kUndefinedEpoch) return "";
  const EpochAndEndOffset answer = led.EndOffsetForEpoch(asked);
  if (answer.undefined() || answer.epoch == kUndefinedEpoch) return "";
  const EpochAndEndOffset ours = followed.epochs().EndOffsetFor(
      answer.epoch, followed.log().log_end_offset(), BelowFirstEpochAt(release));
  if (!ours.undefined()) return "";
  // Truncated to the leader's offset only: what the follower kept below it is of its own epochs,
  // every one after the leader's answer.
  const Offset kept = std::min(answer.end_offset, followed.log().log_end_offset());
  const EpochEntry& first = followed.epochs().entries().front();
  if (first.start_offset >= kept) return "";
  return ", having asked its leader " + node::Broker(leader) + " for the end of epoch " +
         std::to_string(asked.value()) + " of " + ToString(tp) + ", answered epoch " +
         std::to_string(answer.epoch.value()) + " ending at offset " +
         std::to_string(answer.end_offset.value()) + ", an epoch before the first (" +
         std::to_string(first.epoch.value()) + ") its own cache holds: its own lookup " +
         "answered UNDEFINED, and it truncated to the leader's offset only, keeping its epoch " +
         std::to_string(first.epoch.value()) + " records from offset " +
         std::to_string(first.start_offset.value()) + " to " + std::to_string(kept.value()) +
         " where the leader holds epoch " + std::to_string(answer.epoch.value()) + "'s (" +
         std::string(kFollowerBelowFirstEpochDefect) + ")";
}

std::string ScenarioRun::AnsweredUndefinedForAnUnrecordedEpoch(LeaderEpoch asked,
                                                               const TopicPartition& tp,
                                                               BrokerId leader) {
  const Partition* led = RunningReplica(leader, tp);
  if (asked == kUndefinedEpoch || led == nullptr ||
      BelowFirstEpochAt(led->config().release) != LeaderEpochCache::BelowFirstEpoch::kUndefined) {
    return "";
  }
  return ", having been answered UNDEFINED by its leader " + node::Broker(leader) +
         " for the end of epoch " + std::to_string(asked.value()) + " of " + ToString(tp) +
         ", after the last epoch the leader had recorded, it truncated to its high watermark (" +
         std::string(kUnrecordedEpochDefect) + ")";
}

const Partition* ScenarioRun::RunningReplica(BrokerId broker, const TopicPartition& tp) {
  Broker* running = broker == kNoBroker ? nullptr : cluster_->broker(broker);
  return running == nullptr ? nullptr : running->GetPartition(tp);
}

std::optional<ScenarioRun::EpochAsk> ScenarioRun::EpochAskOf(const TopicPartition& tp,
                                                             BrokerId replica, BrokerId leader) {
  Broker* follower = cluster_->broker(replica);
  const Partition* followed = follower == nullptr ? nullptr : follower->GetPartition(tp);
  const Partition* led = RunningReplica(leader, tp);
  if (followed == nullptr || led == nullptr ||
      follower->replica_manager().truncation() != TruncationPolicy::kLeaderEpoch) {
    return std::nullopt;
  }
  return EpochAsk{*followed, *led};
}

std::string ScenarioRun::AskedForAnUnheldEpoch(const TopicPartition& tp, BrokerId replica,
                                               BrokerId leader) {
  const std::optional<EpochAsk> ask = EpochAskOf(tp, replica, leader);
  if (!ask || LeaderEpochRulesAt(ask->led.config().release).answer_names_epoch) return "";
  const Partition& followed = ask->followed;
  const Partition& led = ask->led;
  const LeaderEpoch asked = followed.latest_epoch();
  if (asked == kUndefinedEpoch) return "";
  const std::vector<EpochEntry>& entries = led.epochs().entries();
  // The leader's entries before and after the asked epoch: it never had it when both exist
  // and none is the epoch itself (below its first is kBelowFirstEpochDefect's).
  const EpochEntry* next = nullptr;
  bool earlier = false;
  for (const EpochEntry& entry : entries) {
    if (entry.epoch == asked) return "";
    if (entry.epoch < asked) earlier = true;
    if (entry.epoch > asked && next == nullptr) next = &entry;
  }
  if (!earlier || next == nullptr) return "";
  return ", having asked its leader " + node::Broker(leader) + " for the end of epoch " +
         std::to_string(asked.value()) + " of " + ToString(tp) +
         ", which the leader never had: answered with the start of its epoch " +
         std::to_string(next->epoch.value()) + ", offset " +
         std::to_string(next->start_offset.value()) +
         ", and no epoch, it kept its records of epoch " + std::to_string(asked.value()) +
         " where the leader holds others (" + std::string(kUnheldEpochDefect) + ")";
}

std::string ScenarioRun::AskedBelowFirstEpoch(const TopicPartition& tp, BrokerId replica,
                                              BrokerId leader) {
  const std::optional<EpochAsk> ask = EpochAskOf(tp, replica, leader);
  if (!ask || ask->led.epochs().entries().empty() ||
      BelowFirstEpochAt(ask->led.config().release) !=
          LeaderEpochCache::BelowFirstEpoch::kUndefined) {
    return "";
  }
  const Partition& followed = ask->followed;
  const LeaderEpoch asked = followed.latest_epoch();
  const LeaderEpoch first = ask->led.epochs().entries().front().epoch;
  if (asked == kUndefinedEpoch || asked >= first) return "";
  return ", having asked its leader " + node::Broker(leader) + " for the end of epoch " +
         std::to_string(asked.value()) + " of " + ToString(tp) + ", before the first epoch " +
         std::to_string(first.value()) + " the leader's cache holds: answered UNDEFINED, it " +
         "truncated to its high watermark " + std::to_string(followed.high_watermark().value()) +
         " (" + std::string(kBelowFirstEpochDefect) + ")";
}

std::string ScenarioRun::ForgottenEpochStart(const TopicPartition& tp, BrokerId leader) {
  const Partition* led = RunningReplica(leader, tp);
  if (led == nullptr || led->epochs().entries().empty()) return "";
  // The first batch of each epoch the log holds, from its start.
  std::map<LeaderEpoch, Offset> first_batch;
  VirtualDisk::InspectionScope inspect(*cluster_->world().node(node::Broker(leader)).disk());
  const Status walked = led->log().ForEachBatch(
      led->log().log_start_offset(), [&](const BatchHeader& header, uint64_t) -> Result<BatchWalk> {
        first_batch.try_emplace(header.partition_leader_epoch, header.base_offset);
        return BatchWalk::kContinue;
      });
  if (!walked.ok()) return "";
  for (const EpochEntry& entry : led->epochs().entries()) {
    auto batch = first_batch.find(entry.epoch);
    if (batch == first_batch.end() || batch->second >= entry.start_offset) continue;
    return ", its leader " + node::Broker(leader) + "'s epoch cache of " + ToString(tp) +
           " says epoch " + std::to_string(entry.epoch.value()) + " began at offset " +
           std::to_string(entry.start_offset.value()) + " where its log holds that epoch's " +
           "batches from offset " + std::to_string(batch->second.value()) +
           ", so it answered OffsetsForLeaderEpoch for an earlier epoch with offset " +
           std::to_string(entry.start_offset.value()) + " (" +
           std::string(kForgottenEpochStartDefect) + ")";
  }
  return "";
}

std::optional<std::map<Offset, ScenarioRun::EpochSpan>> ScenarioRun::EpochBatches(
    BrokerId broker, const Partition& replica) {
  std::map<Offset, EpochSpan> out;
  VirtualDisk::InspectionScope inspect(*cluster_->world().node(node::Broker(broker)).disk());
  const Status walked = replica.log().ForEachBatch(
      replica.log().log_start_offset(),
      [&](const BatchHeader& header, uint64_t) -> Result<BatchWalk> {
        if (header.partition_leader_epoch >= LeaderEpoch(0)) {
          out.emplace(header.base_offset,
                      EpochSpan{header.last_offset(), header.partition_leader_epoch});
        }
        return BatchWalk::kContinue;
      });
  if (!walked.ok()) return std::nullopt;
  return out;
}

std::optional<ScenarioRun::EpochLogs> ScenarioRun::EpochLogsOf(const TopicPartition& tp,
                                                               BrokerId replica, BrokerId leader) {
  const std::optional<EpochAsk> ask = EpochAskOf(tp, replica, leader);
  if (!ask) return std::nullopt;
  std::optional<std::map<Offset, EpochSpan>> followed = EpochBatches(replica, ask->followed);
  std::optional<std::map<Offset, EpochSpan>> led = EpochBatches(leader, ask->led);
  if (!followed || !led) return std::nullopt;
  return EpochLogs{ask->led, std::move(*followed), std::move(*led)};
}

std::string ScenarioRun::SameEpochFork(const TopicPartition& tp, BrokerId replica,
                                       BrokerId leader) {
  const std::optional<EpochLogs> logs = EpochLogsOf(tp, replica, leader);
  if (!logs) return "";
  const std::map<Offset, EpochSpan>& led = logs->led_batches;
  for (const auto& [base, span] : logs->followed_batches) {
    // The leader's batches overlapping [base, span.last]: from the last one starting at or
    // before `base` on.
    auto it = led.upper_bound(base);
    if (it != led.begin()) --it;
    for (; it != led.end() && it->first <= span.last; ++it) {
      if (it->second.last < base || it->second.epoch != span.epoch) continue;
      if (it->first == base && it->second.last == span.last) continue;
      return ", where it holds epoch " + std::to_string(span.epoch.value()) + "'s batch [" +
             std::to_string(base.value()) + ".." + std::to_string(span.last.value()) + "] and " +
             "its leader " + node::Broker(leader) + " another batch of the same epoch at [" +
             std::to_string(it->first.value()) + ".." + std::to_string(it->second.last.value()) +
             "]: the leader of epoch " + std::to_string(span.epoch.value()) +
             " lost records it had written in it and wrote on in that epoch, so the follower's "
             "OffsetsForLeaderEpoch found nothing to truncate (" +
             std::string(kSameEpochForkDefect) + ")";
    }
  }
  return "";
}

std::string ScenarioRun::LeaderKeptAnOlderEpoch(const TopicPartition& tp, BrokerId replica,
                                                BrokerId leader) {
  const std::optional<EpochLogs> logs = EpochLogsOf(tp, replica, leader);
  if (!logs) return "";
  const std::map<Offset, EpochSpan>& led = logs->led_batches;
  const std::vector<EpochEntry>& entries = logs->led.epochs().entries();
  for (const auto& [base, span] : logs->followed_batches) {
    // Where the leader's cache says the follower's batch's epoch began: past the batch's start.
    // (A copy: clang before 16 cannot capture a structured binding.)
    const LeaderEpoch epoch = span.epoch;
    auto entry = std::find_if(entries.begin(), entries.end(),
                              [epoch](const EpochEntry& e) { return e.epoch == epoch; });
    if (entry == entries.end() || entry->start_offset <= base) continue;
    // The leader's batch at `base`, of an older epoch.
    auto held = led.upper_bound(base);
    if (held == led.begin()) continue;
    --held;
    if (held->second.last < base || held->second.epoch >= span.epoch) continue;
    const std::string holds = ", where it holds epoch " + std::to_string(span.epoch.value()) +
                              "'s batch [" + std::to_string(base.value()) + ".." +
                              std::to_string(span.last.value()) + "] and its leader " +
                              node::Broker(leader) + " epoch " +
                              std::to_string(held->second.epoch.value()) + "'s batch [" +
                              std::to_string(held->first.value()) + ".." +
                              std::to_string(held->second.last.value()) + "]";
    // A truncation to the high watermark after an UNDEFINED answer, which kept that batch (below
    // the cut) and took the epoch's records from the cut on; or, where that high watermark was
    // the log end and cut nothing, the cut to the leader's log end after the fetch from there was
    // out of range (2.0's handleOffsetOutOfRange, an unclean leader shorter than it). The
    // leader's own, or another replica's whose log the leader copied since.
    const bool answers_undefined = BelowFirstEpochAt(logs->led.config().release) ==
                                   LeaderEpochCache::BelowFirstEpoch::kUndefined;
    const TruncationRecord* cut = nullptr;
    for (const TruncationRecord& t : observer_->truncations()) {
      if (t.tp == tp &&
          (t.reason == "undefined_epoch" ||
           (answers_undefined && t.reason == "offset_out_of_range")) &&
          t.to > held->second.last && t.to <= entry->start_offset &&
          (cut == nullptr || cut->broker != leader || t.broker == leader)) {
        cut = &t;
      }
    }
    if (cut == nullptr) {
      // No truncation: a replica that kept its log end and fetched the epoch from there (the
      // UNDEFINED answer's high watermark was its log end, or it was told the same leader after
      // missed epochs): the leader itself, or a running replica whose log the leader copied.
      std::optional<BrokerId> at;
      std::optional<Partition::KeptCut> kept;
      for (BrokerId broker : cluster_->broker_ids()) {
        const Partition* replica_of = RunningReplica(broker, tp);
        if (replica_of == nullptr || (at && *at == leader)) continue;
        for (const Partition::KeptCut& k : replica_of->kept_cuts()) {
          if (k.at > held->second.last && k.at == entry->start_offset) {
            at = broker;
            kept = k;
          }
        }
      }
      if (!at) continue;
      const std::string whom = *at == leader ? std::string("the leader")
                                             : node::Broker(*at) + ", whose log the leader copied,";
      const std::string why =
          kept->missed_epochs
              ? whom + " was told the same leader at epoch " +
                    std::to_string(kept->missed_epochs->told.value()) +
                    " while it followed epoch " +
                    std::to_string(kept->missed_epochs->followed.value()) +
                    " and truncated nothing (" + std::string(kSameLeaderDefect) + ")"
              : whom + " was answered UNDEFINED at its high watermark " +
                    std::to_string(kept->at.value()) + ", its log end, and cut nothing (" +
                    std::string(kLeaderKeptBelowUndefinedCutDefect) + ")";
      return holds + ", below offset " + std::to_string(entry->start_offset.value()) +
             " where its epoch cache says epoch " + std::to_string(span.epoch.value()) +
             " began, so the follower's OffsetsForLeaderEpoch found nothing to truncate: kept "
             "when " +
             why;
    }
    const std::string who = cut->broker == leader
                                ? std::string("the leader")
                                : node::Broker(cut->broker) + ", whose log the leader copied,";
    const std::string how =
        cut->reason == "undefined_epoch"
            ? who + " truncated to its high watermark " + std::to_string(cut->to.value()) + " at " +
                  FormatSeconds(cut->t_us) + " after an UNDEFINED answer"
            : who + " truncated to its own leader's log end " + std::to_string(cut->to.value()) +
                  " at " + FormatSeconds(cut->t_us) +
                  " after an out-of-range fetch (an UNDEFINED answer had left it at its high "
                  "watermark)";
    return holds + ", kept when " + how + "; its epoch cache says epoch " +
           std::to_string(span.epoch.value()) + " began at offset " +
           std::to_string(entry->start_offset.value()) +
           ", so the follower's OffsetsForLeaderEpoch found nothing to truncate (" +
           std::string(kLeaderKeptBelowUndefinedCutDefect) + ")";
  }
  return "";
}

std::string ScenarioRun::LeaderEndPastRecords(const TopicPartition& tp, BrokerId leader) {
  const Partition* led = RunningReplica(leader, tp);
  if (led == nullptr) return "";
  const std::vector<LogSegmentInfo> segments = led->log().Segments();
  if (segments.empty()) return "";
  const Offset records_end = segments.back().next_offset;
  const Offset end = led->log().log_end_offset();
  if (records_end >= end) return "";
  return ": its leader " + node::Broker(leader) + "'s log of " + ToString(tp) + " ends at offset " +
         std::to_string(end.value()) + " but holds records only below " +
         std::to_string(records_end.value()) +
         ", so no fetch reads up to its end: its truncation to " + std::to_string(end.value()) +
         " cut below that, at a record numbered " + std::to_string(end.value()) +
         " or more (one whose offset a corrupted byte changed, kept by the recovery) (" +
         std::string(kLeaderEndPastRecordsDefect) + ")";
}

std::string ScenarioRun::StaleZkVersion(const TopicPartition& tp, BrokerId leader) {
  Broker* broker = cluster_->broker(leader);
  const Partition* led = broker == nullptr ? nullptr : broker->GetPartition(tp);
  const std::optional<ZnodeData> znode =
      cluster_->zookeeper().Read(zk::PartitionStatePath(tp.topic, tp.partition));
  if (led == nullptr || !znode) return "";
  Result<zk::PartitionState> state = zk::DecodePartitionState(znode->data);
  if (!state.ok() || state->leader != leader || state->leader_epoch != led->leader_epoch() ||
      znode->stat.version == led->zk_version()) {
    return "";
  }
  std::string text = ": its leader " + node::Broker(leader) + " holds " + ToString(tp) +
                     "'s state at zkVersion " + std::to_string(led->zk_version()) +
                     ", ZooKeeper at " + std::to_string(znode->stat.version) +
                     ", at the same leader epoch " + std::to_string(state->leader_epoch.value()) +
                     ": each ISR change it writes fails BADVERSION until a later leader epoch";
  // The active controller sent every replica its partitions' state when it took over, or when
  // the broker registered since: still holding an older controller's, the broker refused it.
  const BrokerId controller_id = cluster_->ActiveController();
  Broker* controller = controller_id == kNoBroker ? nullptr : cluster_->broker(controller_id);
  const std::optional<ControllerEpoch> took = broker->replica_manager().state_controller_epoch(tp);
  if (took && controller != nullptr && controller->controller().is_active() &&
      *took < controller->controller().epoch()) {
    text += "; it took that state from controller epoch " + std::to_string(took->value()) +
            "'s LeaderAndIsr, the active controller's epoch is " +
            std::to_string(controller->controller().epoch().value()) + " (" +
            std::string(kStaleControlRequestDefect) + ")";
  }
  return text;
}

std::string ScenarioRun::ExitsAtEveryStart(BrokerId replica) {
  const Cluster::ExitRecord& exit = cluster_->last_exit(replica);
  if (exit.t_us < final_start_us_ || !exit.message.starts_with(kTruncationNotAllowed)) return "";
  return ": it exits at every start since the final phase restarts it (" + exit.message + "; " +
         std::string(kFollowerAheadDefect) + ")";
}

std::string ScenarioRun::PendingBatch(ProducerClient& client) {
  const Producer* producer = client.producer();
  if (producer == nullptr) return "";
  const std::optional<PendingBatchInfo> batch = producer->OldestPendingBatch();
  if (!batch) return "";
  std::string text = ": " + batch->Describe();
  const Sequence acked = producer->LastAckedSequence(batch->tp);
  if (producer->config().enable_idempotence && producer->config().release < KafkaRelease::k2_1 &&
      batch->last_error == Errc::kOutOfOrderSequenceNumber && batch->base_sequence != kNoSequence &&
      acked != kNoSequence && batch->base_sequence <= acked) {
    text += ", though sequence " + std::to_string(acked.value()) + " was acknowledged (" +
            std::string(kOutOfOrderRetryDefect) + ")";
  }
  return text;
}

std::string ScenarioRun::Undrained() {
  if (std::string unsettled = Unsettled(); !unsettled.empty()) return unsettled;
  return UndrainedClients();
}

std::string ScenarioRun::UndrainedClients() {
  for (const auto& producer : producers_) {
    if (!producer->done()) {
      return "producer " + producer->id() + " has records without an outcome" +
             PendingBatch(*producer);
    }
  }
  for (const auto& producer : cli_->producers()) {
    if (!producer->done()) return "producer " + producer->id() + " has records without an outcome";
  }
  const HistoryOps& ops = history_->ops();
  for (; drain_scanned_ < ops.size(); ++drain_scanned_) {
    const HistoryOp& op = ops[drain_scanned_];
    if (op.f != OpFunction::kDeliver || op.offset < Offset(0)) continue;
    const std::string_view group = op.group.empty() ? op.process : op.group;
    Offset& next = delivered_next_[{std::string(group), op.tp()}];
    next = std::max(next, op.offset + 1);
  }
  // Every scenario consumer's group has delivered each partition of its topics up to the
  // leader's high watermark (console consumers are left out: --max-messages stops them).
  for (const ClientSpec& client : scenario_.clients) {
    if (client.type != ClientType::kConsumer) continue;
    const std::string& group = client.group.empty() ? client.id : client.group;
    for (const std::string& topic : client.topics) {
      for (PartitionId partition : zk_partitions_.Of(*cluster_, topic)) {
        const TopicPartition tp{topic, partition};
        const BrokerId leader = cluster_->LeaderOf(tp);
        const Partition* led = RunningReplica(leader, tp);
        if (led == nullptr) return ToString(tp) + " has no live leader";
        if (led->high_watermark() <= led->log_start_offset()) continue;
        auto found = delivered_next_.find({group, tp});
        if (found == delivered_next_.end() || found->second < led->high_watermark()) {
          return group + " has delivered " + ToString(tp) + " up to offset " +
                 std::to_string(found == delivered_next_.end() ? -1 : found->second.value() - 1) +
                 " of " + std::to_string(led->high_watermark().value() - 1) +
                 UnassignedAfterAMissedRestart(group, tp) + LeaderEndPastRecords(tp, leader);
        }
      }
    }
  }
  return "";
}

bool ScenarioRun::Drained() {
  // While thousands of partitions move leaders one by one, a walk from the first partition finds
  // the first still moving ever later: the walk goes on from where the last one stopped, around
  // (any unsettled partition answers no).
  const std::vector<std::string> topics = AuditedTopics();
  size_t first_topic = 0;
  size_t first_index = 0;
  if (unsettled_hint_) {
    auto topic = std::find(topics.begin(), topics.end(), unsettled_hint_->topic);
    if (topic != topics.end()) {
      const std::vector<PartitionId>& partitions = zk_partitions_.Of(*cluster_, *topic);
      auto at = std::find(partitions.begin(), partitions.end(), unsettled_hint_->partition);
      if (at != partitions.end()) {
        first_topic = static_cast<size_t>(topic - topics.begin());
        first_index = static_cast<size_t>(at - partitions.begin());
      }
    }
  }
  for (size_t step = 0; step <= topics.size(); ++step) {
    const size_t t = (first_topic + step) % std::max<size_t>(topics.size(), 1);
    if (t >= topics.size()) break;
    const std::vector<PartitionId>& partitions = zk_partitions_.Of(*cluster_, topics[t]);
    // The first topic from the hint on, then every other one, then the first one's beginning.
    const size_t begin = step == 0 ? first_index : 0;
    const size_t end = step == topics.size() ? first_index : partitions.size();
    for (size_t i = begin; i < end && i < partitions.size(); ++i) {
      const TopicPartition tp{topics[t], partitions[i]};
      if (!UnsettledPartition(tp).empty()) {
        unsettled_hint_ = tp;
        return false;
      }
    }
  }
  return UndrainedClients().empty();  // every partition settled: walked just now
}

// ---- The end -----------------------------------------------------------------------------------

std::vector<std::string> ScenarioRun::AuditedTopics() const {
  std::vector<std::string> topics;
  for (const TopicEntry& topic : scenario_.topics) topics.push_back(topic.name);
  for (const std::string& topic : cli_->created_topics()) topics.push_back(topic);
  return topics;
}

Status ScenarioRun::Finish(RunResult& result) {
  result.scenario = scenario_.name;
  result.variant = options_.variant;
  result.kafka_version = std::string(KafkaReleaseName(scenario_.kafka_version));
  for (const ClientSpec& client : scenario_.clients) {
    if (client.kafka_version != scenario_.kafka_version) {
      result.client_kafka_versions[client.id] = std::string(KafkaReleaseName(client.kafka_version));
    }
  }
  result.seed = seed_;
  result.start_us = t0_us_;
  result.end_us = world_->Now();
  result.drained = undrained_.empty();
  result.undrained = undrained_;
  result.audit = AuditCluster(*cluster_, AuditedTopics());

  CheckInput input;
  input.history = history_.get();
  input.audit = &result.audit;
  input.observer = observer_.get();
  input.end_us = result.end_us;
  input.release = scenario_.kafka_version;
  for (const ClientSpec& client : scenario_.clients) {
    if (client.type == ClientType::kConsumer) {
      input.consumers.push_back({client.id, client.group, client.topics});
    }
  }
  result.check = CheckHistory(input);

  result.ok = true;
  TraceFields expectations = TraceFields::array();
  for (const Expectation& expectation : scenario_.expect) {
    ExpectationResult evaluated;
    evaluated.expectation = expectation;
    const std::optional<int64_t> actual = expectation.metric == kSettledExpectation
                                              ? std::optional<int64_t>(result.drained ? 1 : 0)
                                              : MetricValue(result.check, expectation.metric);
    evaluated.actual = actual.value_or(0);
    evaluated.ok = actual.has_value() && ExpectationHolds(expectation, evaluated.actual);
    if (expectation.cause) {
      const char* kind = AnomalyKindOf(expectation.metric);
      for (const Anomaly& anomaly : result.check.anomalies) {
        if (kind != nullptr && anomaly.kind == kind &&
            anomaly.cause.find(*expectation.cause) == std::string::npos) {
          ++evaluated.other_causes;
        }
      }
      if (expectation.metric == "permitted_losses") {  // each loss's reason
        for (const PermittedLoss& loss : result.check.permitted_losses) {
          if (loss.reason.find(*expectation.cause) == std::string::npos) ++evaluated.other_causes;
        }
      }
      evaluated.ok = evaluated.ok && evaluated.other_causes == 0;
    }
    result.ok = result.ok && evaluated.ok;
    expectations.push_back(TraceFields{{field::kMetric, expectation.metric},
                                       {field::kExpected, evaluated.Expected()},
                                       {field::kActual, evaluated.actual},
                                       {field::kOk, evaluated.ok}});
    result.expectations.push_back(std::move(evaluated));
  }
  result.actions = actions_;
  result.client_warnings = client_warnings_;
  auto summarize = [&result](const ConsumerClient& consumer) {
    result.consumers.push_back(RunResult::ConsumerSummary{
        consumer.id(), std::string(ConsumerKindName(consumer.kind())), consumer.group()});
  };
  for (const auto& consumer : consumers_) summarize(*consumer);
  if (cli_ != nullptr) {
    for (const auto& consumer : cli_->consumers()) summarize(*consumer);
  }
  result.invariant_violations = result.check.invariant_violations;

  TraceFields metrics = TraceFields::object();
  for (std::string_view name : MetricNames()) {
    metrics[std::string(name)] = MetricValue(result.check, name).value_or(0);
  }
  EventFields audit;
  audit.AddWith(field::kAudit, [&](JsonOut& out) { AppendAuditJson(out, result.audit); });
  KSIM_RETURN_IF_ERROR(
      world_->Finish(result.ok, metrics,
                     TraceFields{{field::kVariant, options_.variant},
                                 {field::kExpectations, std::move(expectations)},
                                 {field::kAnomalies, AnomaliesJson(result.check.anomalies)}},
                     audit));
  result.trace_hash = world_->trace().hash();
  result.trace_lines = world_->trace().lines();
  if (options_.trace_path.empty() && options_.keep_trace_bytes) {
    result.trace_bytes = world_->trace().bytes();
  }
  return Status::Ok();
}

}  // namespace ksim::sim
