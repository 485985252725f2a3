// Broker: Kafka's KafkaServer (startup, KafkaHealthcheck registration, controlled shutdown) and
// KafkaApis (request dispatch). Replication and the request paths that touch partitions live in
// core/server/replica_manager.*; the metadata cache in core/cluster/metadata_cache.*.
#include "core/server/broker.h"

#include <span>
#include <utility>

#include "core/admin/topic_admin.h"
#include "core/base/timer_group.h"
#include "core/base/trace_names.h"
#include "core/cluster/metadata_cache.h"
#include "core/cluster/topic.h"
#include "core/controller/channel.h"
#include "core/coordinator/group_coordinator.h"
#include "core/coordinator/group_locator.h"
#include "core/coordinator/producer_id_manager.h"
#include "core/protocol/api_versions.h"
#include "core/protocol/network_client.h"
#include "core/server/fetch_session.h"
#include "core/server/replica_manager.h"
#include "core/zk/paths.h"
#include "core/zk/retrying_coordination.h"

namespace ksim {

std::string_view BrokerStateName(BrokerState state) {
  switch (state) {
    case BrokerState::kNotRunning:
      return "not_running";
    case BrokerState::kStarting:
      return "starting";
    case BrokerState::kRunning:
      return "running";
    case BrokerState::kPendingControlledShutdown:
      return "pending_controlled_shutdown";
    case BrokerState::kShuttingDown:
      return "shutting_down";
    case BrokerState::kShutDown:
      return "shut_down";
  }
  return "?";
}

namespace {

// How long a registration waits before trying again when /brokers/ids/<id> still belongs to our
// previous session (its ephemeral lives until that session times out) or ZooKeeper failed.
constexpr int64_t kRegistrationRetryBackoffMs = 1000;

// The log manager's settings from the broker's configuration (KafkaServer.createLogManager): the
// log directories, the periodic tasks' intervals, the LogConfig of a topic without overrides.
LogManagerConfig LogManagerConfigOf(const BrokerConfig& broker) {
  LogManagerConfig config;
  config.log_dirs = broker.log_dirs;
  config.default_log_config = broker.DefaultLogConfig();
  config.retention_check_interval_ms = broker.log_retention_check_interval_ms;
  config.flush_check_interval_ms = broker.log_flush_scheduler_interval_ms;
  config.flush_recovery_point_checkpoint_interval_ms =
      broker.log_flush_offset_checkpoint_interval_ms;
  config.file_delete_delay_ms = broker.log_segment_delete_delay_ms;
  return config;
}

}  // namespace

struct Broker::Impl {
  Impl(Broker& broker, BrokerSeams seams);
  ~Impl();

  BrokerId id() const { return BrokerId(options.config.broker_id); }
  BrokerState& state() { return broker.state_; }

  // ---- Requests (KafkaApis.handle) ----
  using Respond = std::function<void(Message)>;
  void HandleRequest(std::string_view from, Message request, Respond respond);
  void MaybeAutoCreate(const MetadataRequest& request, TopicMetadata& topic);
  // Requests for APIs this broker does not serve (consumer groups).
  void DeliverLocal(Message request, Respond respond);
  // ---- Consumer groups (core/coordinator/group_coordinator.h, core/coordinator/group_locator.h)
  // ----
  bool HandleGroupRequest(std::string_view from, Message& request, const Respond& respond);
  // KafkaApis' onLeadershipChange: offsets partitions led here are loaded, others unloaded.
  void OnOffsetsLeadership(const std::vector<PartitionError>& partitions, bool stopped);
  GroupCoordinatorSeams GroupSeams();

  // ---- ZooKeeper session and registration (KafkaHealthcheck) ----
  void OnSessionEvent(SessionEvent event);
  void Register();
  void CreateRegistration(ZkSessionId session);
  void Registered(ZkSessionId session);
  void RetryRegistration(ZkSessionId session);

  // ---- Shutdown ----
  void AttemptControlledShutdown();
  // Sends attempt `attempt`'s request to the controller /controller names.
  void SendControlledShutdown(int attempt, Result<ZnodeData> controller_znode);
  void OnControlledShutdownAnswer(int attempt, Result<Message> answer);
  void FinishShutdown();
  // A log went offline: the process halts (BrokerSeams::halt), once.
  void Halt(const Status& error);
  // A fatal error: the process exits through its shutdown hook (BrokerSeams::exit), once.
  void Exit(const Status& error);

  template <class F>
  auto Guarded(F f) {
    return [alive = std::weak_ptr<bool>(alive_), f = std::move(f)](auto&&... args) mutable {
      if (alive.expired()) return;
      f(std::forward<decltype(args)>(args)...);
    };
  }

  Broker& broker;
  const BrokerOptions& options;
  BrokerSeams seams;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  TimerGroup timers;
  LogManager log_manager;
  MetadataCache metadata;
  NetworkClient network;
  ControllerChannelManager channel;
  Controller controller;
  ReplicaManager replicas;
  // KIP-227 fetch sessions (KafkaApis' FetchManager), in memory: a restart forgets them.
  FetchManager fetch_sessions{
      FetchSessionConfig{.max_entries = options.config.max_incremental_fetch_session_cache_slots,
                         .id_seed = (static_cast<uint64_t>(options.config.broker_id) << 48) ^
                                    static_cast<uint64_t>(seams.clock.Now())}};
  GroupCoordinator groups;
  GroupLocator group_locator;
  ExtraRequestHandler extra_handler;
  // InitProducerId (KIP-98): ids from blocks claimed in ZooKeeper.
  ProducerIdManager producer_ids{id(), seams.zk, seams.events};
  // Topics a Metadata request names that this broker does not know (auto.create.topics.enable).
  TopicAdmin topic_admin{seams.zk, seams.random, options.config};
  // The controlled shutdown's reads of /controller, issued again on CONNECTIONLOSS as Kafka's
  // ZkClient does (readDataMaybeNull waits until connected).
  RetryingCoordination shutdown_zk{seams.zk};

  ZkSessionId registered_session = kNoSession;
  // Requests that arrived before the start-up registered (from 1.1), handled once it has.
  struct HeldRequest {
    std::string from;
    Message request;
    Respond respond;
  };
  std::vector<HeldRequest> held_requests;
  bool registering = false;
  bool controller_started = false;
  int controlled_shutdown_attempts = 0;
  std::function<void()> shutdown_done;
  bool halted = false;
  bool exiting = false;
};

Broker::Impl::Impl(Broker& broker_in, BrokerSeams seams_in)
    : broker(broker_in),
      options(broker_in.options_),
      seams(std::move(seams_in)),
      timers(seams.timers),
      log_manager(seams.env, seams.clock, seams.timers, LogManagerConfigOf(options.config)),
      network(seams.transport, seams.timers,
              NetworkClient::Handlers{
                  .on_request =
                      [this](std::string_view from, ConnectionId connection, Message request) {
                        std::string peer(from);
                        HandleRequest(from, std::move(request),
                                      [this, peer, connection](Message response) {
                                        network.Respond(peer, connection, std::move(response));
                                      });
                      },
                  .on_disconnect = nullptr,
                  .on_ready =
                      [this](std::string_view peer) {
                        replicas.fetchers().OnReady(peer);
                        channel.OnReady(peer);
                      },
              },
              NetworkClientOptions{
                  .max_in_flight_requests_per_connection = 5,
                  .request_timeout_us =
                      static_cast<TimeUs>(options.config.replica_socket_timeout_ms) * kUsPerMs,
                  .release = options.config.release,
              }),
      channel(id(), network, seams.timers,
              [this](Message request, std::function<void(Message)> respond) {
                DeliverLocal(std::move(request), std::move(respond));
              }),
      controller(options.config, options.controller, seams.zk, channel, seams.timers, seams.clock,
                 seams.random, seams.events),
      replicas(
          options.config, options.truncation, options.controller.election_policy,
          ReplicaManagerSeams{.env = seams.env,
                              .clock = seams.clock,
                              .timers = seams.timers,
                              .zk = seams.zk,
                              .logs = log_manager,
                              .metadata = metadata,
                              .network = network,
                              .events = seams.events,
                              .on_storage_failure = [this](const Status& error) { Halt(error); },
                              .on_fatal_exit = [this](const Status& error) { Exit(error); }}),
      groups(options.config, GroupSeams()),
      group_locator(options.config, seams.zk, seams.random, metadata, seams.events) {
  log_manager.set_storage_failure_handler([this](const Status& error) { Halt(error); });
}

// KafkaApis.getTopicMetadata: a topic named in the request that the metadata cache does not know
// is created (AdminUtils.createTopic with num.partitions and default.replication.factor) when the
// broker and the request allow it, and answered LEADER_NOT_AVAILABLE, also when it exists already
// (TopicExistsException): a client retries. This is also what a broker just started answers
// before its first UpdateMetadata. Otherwise UNKNOWN_TOPIC_OR_PARTITION stays.
void Broker::Impl::MaybeAutoCreate(const MetadataRequest& request, TopicMetadata& topic) {
  if (!request.topics.has_value() || !request.allow_auto_topic_creation ||
      !options.config.auto_create_topics_enable || topic.is_internal) {
    return;
  }
  topic.error_code = Errc::kLeaderNotAvailable;
  topic_admin.CreateTopic(topic.topic, options.config.num_partitions,
                          options.config.default_replication_factor, std::nullopt, {},
                          [this, alive = std::weak_ptr<bool>(alive_),
                           name = topic.topic](Result<ReplicaAssignment> created) {
                            if (alive.expired()) return;
                            const Errc error = created.ok() ? Errc::kNone : created.status().code();
                            Emit(seams.events, ev::kTopicAutoCreate,
                                 {{field::kTopic, name}, {field::kError, ErrcName(error)}});
                          });
}

void Broker::Impl::Halt(const Status& error) {
  if (halted || !seams.halt) return;
  halted = true;
  seams.halt(error);
}

void Broker::Impl::Exit(const Status& error) {
  if (halted || exiting) return;
  exiting = true;
  if (seams.exit) seams.exit(error);
}

Broker::Impl::~Impl() {
  // The ZooKeeper client outlives us: it must not call into a dead broker.
  seams.zk.SetWatcher(nullptr);
  seams.zk.SetSessionListener(nullptr);
}

// ---- Requests -----------------------------------------------------------------------------------

void Broker::Impl::HandleRequest(std::string_view from, Message request, Respond respond) {
  if (state() == BrokerState::kNotRunning || state() == BrokerState::kShuttingDown ||
      state() == BrokerState::kShutDown) {
    return;  // no socket server: not started yet, or stopped (KafkaServer.shutdown stops it first)
  }
  if (state() == BrokerState::kStarting && registered_session == kNoSession &&
      options.config.release >= KafkaRelease::k1_1) {
    // From 1.1 the start-up registers before it creates the request handlers (1.1.0 and
    // 2.0.0:KafkaServer.startup; 2.0 starts the socket server's processors only at the end): a
    // request waits, and dies with the process if the start-up fails. Before 1.1 the handlers
    // run first and the registration comes last.
    held_requests.push_back(HeldRequest{std::string(from), std::move(request), std::move(respond)});
    return;
  }
  // Every answer carries its request's correlation id.
  Respond answer = [correlation_id = CorrelationId(request),
                    respond = std::move(respond)](Message response) {
    SetCorrelationId(response, correlation_id);
    respond(std::move(response));
  };
  if (extra_handler && extra_handler(from, request, answer)) return;
  if (auto* produce = std::get_if<ProduceRequest>(&request)) {
    // acks=0 and a partition failed: Kafka's requestChannel.closeConnection (the client's
    // connection to this broker closes; local requests have none).
    std::function<void()> close_connection;
    if (from != options.host) {
      close_connection = [this, peer = std::string(from)] { network.CloseConnection(peer); };
    }
    if (AcksDeprecated(options.config.release, produce->acks)) {
      // 0.8.2.2:KafkaApis.handleProducerOrOffsetCommitRequest, KIP-1: a WARN, then on as usual.
      Emit(seams.events, ev::kProduceAcksDeprecated,
           {{field::kClient, std::string(from)},
            {field::kAcks, produce->acks},
            {field::kMessage, AcksDeprecatedWarning(from, produce->acks)}});
    }
    replicas.HandleProduce(
        std::move(*produce),
        [answer = std::move(answer)](ProduceResponse r) { answer(std::move(r)); },
        std::move(close_connection));
  } else if (auto* fetch = std::get_if<FetchRequest>(&request)) {
    // KafkaApis.handleFetchRequest: the session decides what is read (an incremental fetch reads
    // its session) and what of the answer is sent.
    FetchContext context = fetch_sessions.NewContext(*fetch);
    replicas.HandleFetch(
        std::move(*fetch), std::move(context),
        [this, answer = std::move(answer)](FetchResponse r, FetchContext& context) {
          fetch_sessions.Answer(context, r, seams.clock.NowMs());
          answer(std::move(r));
        });
  } else if (auto* list = std::get_if<ListOffsetsRequest>(&request)) {
    answer(replicas.HandleListOffsets(*list));
  } else if (auto* metadata_request = std::get_if<MetadataRequest>(&request)) {
    MetadataResponse response = metadata.Answer(*metadata_request);
    for (TopicMetadata& topic : response.topic_metadata) {
      topic.is_internal = IsInternalTopic(topic.topic);
      if (topic.error_code == Errc::kUnknownTopicOrPartition) {
        MaybeAutoCreate(*metadata_request, topic);
      }
    }
    answer(std::move(response));
  } else if (auto* leader_and_isr = std::get_if<LeaderAndIsrRequest>(&request)) {
    replicas.HandleLeaderAndIsr(std::move(*leader_and_isr),
                                [this, answer = std::move(answer)](LeaderAndIsrResponse r) {
                                  OnOffsetsLeadership(r.partitions, /*stopped=*/false);
                                  answer(std::move(r));
                                });
  } else if (auto* stop = std::get_if<StopReplicaRequest>(&request)) {
    replicas.HandleStopReplica(std::move(*stop),
                               [this, answer = std::move(answer)](StopReplicaResponse r) {
                                 OnOffsetsLeadership(r.partitions, /*stopped=*/true);
                                 answer(std::move(r));
                               });
  } else if (auto* update = std::get_if<UpdateMetadataRequest>(&request)) {
    replicas.HandleUpdateMetadata(
        std::move(*update),
        [answer = std::move(answer)](UpdateMetadataResponse r) { answer(std::move(r)); });
  } else if (auto* shutdown = std::get_if<ControlledShutdownRequest>(&request)) {
    controller.HandleControlledShutdown(
        *shutdown,
        [answer = std::move(answer)](ControlledShutdownResponse r) { answer(std::move(r)); });
  } else if (auto* epochs = std::get_if<OffsetsForLeaderEpochRequest>(&request)) {
    answer(replicas.HandleOffsetsForLeaderEpoch(*epochs));
  } else if (std::holds_alternative<ApiVersionsRequest>(request)) {
    // KafkaApis.handleApiVersionsRequest: the versions a broker of this release advertises
    // (its binary's, whatever inter.broker.protocol.version says).
    ApiVersionsResponse response;
    const std::span<const ApiVersionEntry> served = AdvertisedApiVersions(options.config.release);
    response.api_versions.assign(served.begin(), served.end());
    answer(std::move(response));
  } else if (auto* init = std::get_if<InitProducerIdRequest>(&request)) {
    producer_ids.HandleInitProducerId(
        *init, [answer = std::move(answer)](InitProducerIdResponse r) { answer(std::move(r)); });
  } else if (!HandleGroupRequest(from, request, answer)) {
    KSIM_CHECK(false && "HandleRequest: not a request");
  }
}

// ---- Consumer groups ----------------------------------------------------------------------------

GroupCoordinatorSeams Broker::Impl::GroupSeams() {
  auto append = [this](const TopicPartition& tp, Bytes batch, std::function<void(Errc)> done) {
    // GroupMetadataManager.appendForGroup: the produce path, as leader, with the commit acks.
    ProduceRequest request;
    request.acks = options.config.offsets_commit_required_acks;
    request.timeout_ms = options.config.offsets_commit_timeout_ms;
    request.topic_data.push_back(ProducePartitionData{tp, std::move(batch)});
    const bool answered = request.acks != 0;
    replicas.HandleProduce(std::move(request), [done](ProduceResponse response) {
      done(response.responses.empty() ? Errc::kUnknownServerError
                                      : response.responses.front().error_code);
    });
    if (!answered) done(Errc::kNone);
  };
  auto read = [this](const TopicPartition& tp, Offset start) -> Result<Bytes> {
    Partition* partition = replicas.GetPartition(tp);
    if (partition == nullptr) return Status(Errc::kUnknownTopicOrPartition, ToString(tp));
    Log& log = partition->log();
    const Offset from = std::max(start, log.log_start_offset());
    if (from >= log.log_end_offset()) return Bytes{};
    KSIM_ASSIGN_OR_RETURN(FetchDataInfo info,
                          log.Read(from, options.config.replica_fetch_max_bytes, std::nullopt,
                                   /*min_one_message=*/true));
    return std::move(info.records);
  };
  return GroupCoordinatorSeams{.clock = seams.clock,
                               .timers = seams.timers,
                               .random = seams.random,
                               .events = seams.events,
                               .append = std::move(append),
                               .read = std::move(read)};
}

bool Broker::Impl::HandleGroupRequest(std::string_view from, Message& request,
                                      const Respond& respond) {
  auto reply = [respond](auto response) { respond(std::move(response)); };
  if (auto* find = std::get_if<FindCoordinatorRequest>(&request)) {
    respond(group_locator.Handle(*find));
  } else if (auto* join = std::get_if<JoinGroupRequest>(&request)) {
    groups.HandleJoinGroup(from, std::move(*join), reply);
  } else if (auto* sync = std::get_if<SyncGroupRequest>(&request)) {
    groups.HandleSyncGroup(std::move(*sync), reply);
  } else if (auto* heartbeat = std::get_if<HeartbeatRequest>(&request)) {
    groups.HandleHeartbeat(*heartbeat, reply);
  } else if (auto* leave = std::get_if<LeaveGroupRequest>(&request)) {
    groups.HandleLeaveGroup(*leave, reply);
  } else if (auto* commit = std::get_if<OffsetCommitRequest>(&request)) {
    groups.HandleOffsetCommit(std::move(*commit), reply);
  } else if (auto* fetch = std::get_if<OffsetFetchRequest>(&request)) {
    respond(groups.HandleOffsetFetch(*fetch));
  } else {
    return false;
  }
  return true;
}

void Broker::Impl::OnOffsetsLeadership(const std::vector<PartitionError>& partitions,
                                       bool stopped) {
  for (const PartitionError& entry : partitions) {
    if (entry.tp.topic != kGroupMetadataTopicName) continue;
    const int32_t index = entry.tp.partition.value();
    if (index < 0 || index >= options.config.offsets_topic_num_partitions) continue;
    Partition* partition = replicas.GetPartition(entry.tp);
    const bool leads = !stopped && entry.error_code == Errc::kNone && partition != nullptr &&
                       partition->is_leader();
    if (leads && groups.owned_partitions().count(index) == 0 &&
        groups.loading_partitions().count(index) == 0) {
      groups.OnElection(index);
    } else if (!leads && (partition == nullptr || !partition->is_leader())) {
      groups.OnResignation(index);
    }
  }
}

void Broker::Impl::DeliverLocal(Message request, Respond respond) {
  // The controller's requests to its own broker: handled as if they had come over the network,
  // after the current event (never inside the controller's call).
  timers.Schedule(0, [this, request = std::move(request), respond = std::move(respond)]() mutable {
    HandleRequest(options.host, std::move(request), std::move(respond));
  });
}

// ---- ZooKeeper session and registration ---------------------------------------------------------

void Broker::Impl::OnSessionEvent(SessionEvent event) {
  const bool stopping = state() == BrokerState::kShuttingDown || state() == BrokerState::kShutDown;
  if (event == SessionEvent::kExpired) {
    // KafkaHealthcheck.SessionExpireListener.handleNewSession: a new session, registered again.
    registered_session = kNoSession;
    registering = false;
    Emit(seams.events, ev::kBrokerSessionExpired, {{field::kBroker, id().value()}});
  }
  controller.OnSessionEvent(event);
  if (stopping) return;
  if (event == SessionEvent::kSyncConnected && !registering &&
      registered_session != seams.zk.session_id()) {
    Register();
  }
  if (event == SessionEvent::kExpired) {
    timers.Schedule(0, [this]() {
      if (seams.zk.state() == SessionState::kExpired) seams.zk.Connect();
    });
  }
}

void Broker::Impl::Register() {
  registering = true;
  const ZkSessionId session = seams.zk.session_id();
  // ZkUtils.setupCommonPaths, then registerBrokerInZk.
  const std::vector<std::string> paths = zk::CommonPaths();
  auto remaining = std::make_shared<size_t>(paths.size());
  auto failed = std::make_shared<bool>(false);
  for (const std::string& path : paths) {
    EnsurePersistentPath(seams.zk, path, Guarded([this, session, remaining, failed](Status status) {
                           if (!status.ok()) *failed = true;
                           if (--*remaining > 0) return;
                           if (*failed) return RetryRegistration(session);
                           // DynamicConfigManager.startup, then the registration (0.10.0.1's
                           // KafkaServer.startup; each new session sets its watch again).
                           replicas.WatchConfigChanges();
                           CreateRegistration(session);
                         }));
  }
}

void Broker::Impl::CreateRegistration(ZkSessionId session) {
  if (seams.zk.session_id() != session) return;  // that session is gone; its successor registers
  zk::BrokerRegistration registration;
  registration.host = options.host;
  registration.port = options.config.port;
  registration.endpoints = {"PLAINTEXT://" + options.host + ":" +
                            std::to_string(options.config.port)};
  registration.timestamp_ms = seams.clock.NowMs();
  const std::string path = zk::BrokerIdPath(id());
  seams.zk.Create(
      path, zk::EncodeBrokerRegistration(registration), CreateMode::kEphemeral,
      Guarded([this, session, path](Result<std::string> created) {
        if (created.ok()) return Registered(session);
        if (created.status() != Errc::kNodeExists) return RetryRegistration(session);
        // Ours (a retried create that had succeeded), or another session's: our previous
        // process's, which lasts until that session times out (ZKCheckedEphemeral's check).
        seams.zk.Exists(
            path, /*watch=*/false,
            Guarded([this, session, path](Result<std::optional<ZnodeStat>> stat) {
              if (stat.ok() && stat->has_value() && (*stat)->ephemeral_owner == session) {
                return Registered(session);
              }
              if (stat.ok() && stat->has_value() && state() == BrokerState::kStarting) {
                // Start-up fails and the process exits (0.10.0.1:ZkUtils.registerBrokerInZk,
                // 2.0.0:KafkaZkClient.checkedEphemeralCreate; KafkaServerStartable exits).
                Status failed(Errc::kNodeExists,
                              "A broker is already registered on the path " + path +
                                  ". This probably indicates that you either have configured a "
                                  "brokerid that is already in use, or else you have shutdown "
                                  "this broker and restarted it faster than the zookeeper "
                                  "timeout so it appears to be re-registering.");
                Emit(seams.events, ev::kBrokerStartupFailed,
                     {{field::kError, ErrcName(failed.code())},
                      {field::kMessage, failed.message()}});
                return Exit(failed);
              }
              RetryRegistration(session);
            }));
      }));
}

void Broker::Impl::RetryRegistration(ZkSessionId session) {
  timers.Schedule(kRegistrationRetryBackoffMs * kUsPerMs, [this, session]() {
    if (seams.zk.session_id() != session) return;  // a new session registers on its own
    if (state() == BrokerState::kShuttingDown || state() == BrokerState::kShutDown) return;
    if (seams.zk.state() == SessionState::kConnected) {
      Register();
    } else {
      registering = false;  // the next SyncConnected of this session starts over
    }
  });
}

void Broker::Impl::Registered(ZkSessionId session) {
  if (seams.zk.session_id() != session) return;
  registering = false;
  registered_session = session;
  if (state() == BrokerState::kStarting) state() = BrokerState::kRunning;
  Emit(seams.events, ev::kBrokerRegistered,
       {{field::kBroker, id().value()}, {field::kHost, options.host}});
  if (!controller_started) {
    controller_started = true;
    controller.Startup();
  }
  if (!held_requests.empty()) {
    timers.Schedule(0, [this]() {
      std::vector<HeldRequest> held = std::move(held_requests);
      held_requests.clear();
      for (HeldRequest& r : held) HandleRequest(r.from, std::move(r.request), std::move(r.respond));
    });
  }
}

// ---- Shutdown (KafkaServer.controlledShutdown, then KafkaServer.shutdown) -----------------------

void Broker::Impl::AttemptControlledShutdown() {
  // Every attempt reads /controller first (ZkUtils.getController; KafkaZkClient.getControllerId
  // from 1.1), waiting for ZooKeeper while it is unreachable, then the controller's registration
  // (here: the metadata cache's live endpoints).
  const int attempt = ++controlled_shutdown_attempts;
  shutdown_zk.GetData(std::string(zk::kControllerPath), /*watch=*/false,
                      Guarded([this, attempt](Result<ZnodeData> controller_znode) {
                        SendControlledShutdown(attempt, std::move(controller_znode));
                      }));
}

void Broker::Impl::SendControlledShutdown(int attempt, Result<ZnodeData> controller_znode) {
  if (state() != BrokerState::kPendingControlledShutdown) return;
  auto on_answer = Guarded([this, attempt](Result<Message> answer) {
    OnControlledShutdownAnswer(attempt, std::move(answer));
  });
  if (!controller_znode.ok() && controller_znode.status().code() == Errc::kNoNode &&
      options.config.release < KafkaRelease::k1_1) {
    // 0.10.0 to 1.0: getController throws "Controller doesn't exist" out of the retry loop, and
    // KafkaServer.shutdown swallows it: the shutdown goes on at once, uncleanly (no backoff, no
    // more attempts). From 1.1 a missing /controller is one more failed attempt.
    Emit(seams.events, ev::kControlledShutdown,
         {{field::kBroker, id().value()},
          {field::kAttempt, attempt},
          {field::kError, ErrcName(Errc::kNotController)},
          {field::kRemaining, nlohmann::ordered_json::array()}});
    return FinishShutdown();
  }
  Result<zk::ControllerRegistration> registration =
      controller_znode.ok() ? zk::DecodeControllerRegistration(controller_znode->data)
                            : Result<zk::ControllerRegistration>(controller_znode.status());
  if (!registration.ok()) {
    return on_answer(Status(Errc::kNotController, "no controller in ZooKeeper"));
  }
  const BrokerId controller_id = registration->broker_id;
  ControlledShutdownRequest request;
  request.broker_id = id();
  if (controller_id == id()) {
    return DeliverLocal(std::move(request),
                        [on_answer](Message response) mutable { on_answer(std::move(response)); });
  }
  std::optional<BrokerEndpoint> endpoint = metadata.AliveEndpoint(controller_id);
  if (!endpoint.has_value() || !network.Ready(endpoint->host)) {
    return on_answer(Status(Errc::kBrokerNotAvailable, "controller not reachable"));
  }
  network.Send(endpoint->host, std::move(request), std::move(on_answer));
}

void Broker::Impl::OnControlledShutdownAnswer(int attempt, Result<Message> answer) {
  if (state() != BrokerState::kPendingControlledShutdown) return;
  Errc error = answer.ok() ? Errc::kNone : answer.status().code();
  nlohmann::ordered_json remaining = nlohmann::ordered_json::array();
  if (answer.ok()) {
    if (const auto* response = std::get_if<ControlledShutdownResponse>(&*answer)) {
      error = response->error_code;
      for (const TopicPartition& tp : response->partitions_remaining) {
        remaining.push_back(ToString(tp));
      }
    } else {
      error = Errc::kUnknownServerError;
    }
  }
  const bool succeeded = error == Errc::kNone && remaining.empty();
  Emit(seams.events, ev::kControlledShutdown,
       {{field::kBroker, id().value()},
        {field::kAttempt, attempt},
        {field::kError, ErrcName(error)},
        {field::kRemaining, remaining}});
  if (succeeded) return FinishShutdown();
  // Every modelled release sleeps controlled.shutdown.retry.backoff.ms after each failed
  // attempt, the last one included, and then "Proceeding to do an unclean shutdown as all the
  // controlled shutdown attempts failed": the shutdown itself is the same.
  timers.Schedule(options.config.controlled_shutdown_retry_backoff_ms * kUsPerMs,
                  [this, attempt]() {
                    if (state() != BrokerState::kPendingControlledShutdown) return;
                    if (attempt >= options.config.controlled_shutdown_max_retries)
                      return FinishShutdown();
                    AttemptControlledShutdown();
                  });
}

void Broker::Impl::FinishShutdown() {
  state() = BrokerState::kShuttingDown;
  timers.CancelAll();
  groups.Shutdown();
  // KafkaServer.shutdown's order: replica manager (fetchers, purgatories, HW checkpoint), log
  // manager (flush, checkpoints, clean-shutdown marker), controller, ZooKeeper session.
  if (Status status = replicas.Shutdown(); !status.ok()) {
    Emit(seams.events, ev::kHwCheckpointError, {{field::kError, status.ToString()}});
  }
  if (Status status = log_manager.Shutdown(); !status.ok()) {
    Emit(seams.events, ev::kLogManagerShutdownError, {{field::kError, status.ToString()}});
  }
  controller.Shutdown();
  seams.zk.Close(Guarded([this]() {
    state() = BrokerState::kShutDown;
    if (shutdown_done) std::exchange(shutdown_done, nullptr)();
  }));
}

// ---- Broker -------------------------------------------------------------------------------------

Broker::Broker(BrokerOptions options, BrokerSeams seams) : options_(std::move(options)) {
  KSIM_CHECK(options_.config.broker_id >= 0);
  KSIM_CHECK(!options_.host.empty());
  impl_ = std::make_unique<Impl>(*this, std::move(seams));
}

Broker::~Broker() = default;

Status Broker::Startup() {
  KSIM_CHECK(state_ == BrokerState::kNotRunning);
  Result<LogManagerStartupReport> logs = impl_->log_manager.Startup();
  if (!logs.ok()) return logs.status();
  state_ = BrokerState::kStarting;
  impl_->groups.Startup();
  // An unreadable HW checkpoint is not fatal: the replica manager reported it (an event) and
  // those replicas start at HW 0, as Kafka's do.
  Status hw_status = impl_->replicas.Startup();
  (void)hw_status;
  Coordination& zk = impl_->seams.zk;
  zk.SetWatcher(impl_->Guarded([impl = impl_.get()](const WatchEvent& event) {
    if (event.path == zk::kEntityConfigChangesPath &&
        event.type == WatchEventType::kNodeChildrenChanged) {
      impl->replicas.WatchConfigChanges();  // DynamicConfigManager's listener
    }
    impl->controller.OnWatchEvent(event);
  }));
  zk.SetSessionListener(
      impl_->Guarded([impl = impl_.get()](SessionEvent event) { impl->OnSessionEvent(event); }));
  zk.Connect();
  return Status::Ok();
}

void Broker::Shutdown(std::function<void()> done) {
  KSIM_CHECK(state_ == BrokerState::kStarting || state_ == BrokerState::kRunning);
  impl_->shutdown_done = std::move(done);
  state_ = BrokerState::kPendingControlledShutdown;
  const bool registered = impl_->registered_session != kNoSession;
  if (options_.config.controlled_shutdown_enable && registered &&
      options_.config.controlled_shutdown_max_retries > 0) {
    impl_->AttemptControlledShutdown();
  } else {
    impl_->FinishShutdown();
  }
}

BrokerId Broker::id() const { return BrokerId(options_.config.broker_id); }
Controller& Broker::controller() { return impl_->controller; }
const Controller& Broker::controller() const { return impl_->controller; }
Partition* Broker::GetPartition(const TopicPartition& tp) {
  return impl_->replicas.GetPartition(tp);
}
const std::vector<const Partition*>& Broker::Partitions() const {
  return impl_->replicas.Partitions();
}

uint64_t Broker::partitions_version() const { return impl_->replicas.partitions_version(); }

bool Broker::has_changed_partitions() const { return impl_->replicas.has_changed_partitions(); }

void Broker::TakeChangedPartitions(std::vector<const Partition*>& out) {
  impl_->replicas.TakeChangedPartitions(out);
}
LogManager& Broker::log_manager() { return impl_->log_manager; }
const MetadataCache& Broker::metadata_cache() const { return impl_->metadata; }
ReplicaManager& Broker::replica_manager() { return impl_->replicas; }
const NetworkClient& Broker::network_client() const { return impl_->network; }
void Broker::set_extra_request_handler(ExtraRequestHandler handler) {
  impl_->extra_handler = std::move(handler);
}

}  // namespace ksim
