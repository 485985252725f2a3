#include "sim/serve/serve.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/base/check.h"
#include "core/base/trace_names.h"
#include "sim/cluster/cluster.h"
#include "sim/kernel/atomic_file.h"
#include "sim/serve/base64.h"
#include "sim/world/world.h"

namespace ksim::sim {
namespace {

constexpr int kMaxPollMs = 50;  // the loop looks at Ctrl-C and the paced clock this often

void TraceStart(World& world, const ServedScenario& scenario) {
  world.Trace(node::kServe, ev::kServeStart,
              EventFields{{field::kFile, scenario.file},
                          {field::kText, scenario.text},
                          {field::kVariant, scenario.variant}});
}

void TraceStop(World& world, const std::string& reason) {
  world.Trace(node::kServe, ev::kServeStop, EventFields{{field::kReason, reason}});
}

}  // namespace

// ---- ServeDriver --------------------------------------------------------------------------------

ServeDriver::ServeDriver(ServeOptions options) : options_(std::move(options)) {
  KSIM_CHECK(options_.speed_per_mille > 0);
  if (!options_.stop_requested) options_.stop_requested = [] { return false; };
  if (!options_.say) options_.say = [](const std::string&) {};
}

ServeDriver::~ServeDriver() = default;

Status ServeDriver::Start(RunContext& run) {
  TraceStart(run.world, options_.scenario);
  GatewayOutput& output = *this;
  gateway_ = std::make_unique<ClientGateway>(run.world, run.history, output,
                                             run.cluster.options().kafka_version);
  std::vector<std::pair<BrokerId, int32_t>> ports;
  for (BrokerId id : run.cluster.broker_ids()) {
    const int32_t wanted = options_.port_base == 0 ? 0 : options_.port_base + id.value() - 1;
    KSIM_ASSIGN_OR_RETURN(int32_t port, sockets_.Listen(wanted, id.value()));
    gateway_->Listen(id, port);
    ports.emplace_back(id, port);
    options_.say(node::Broker(id) + " listening on 127.0.0.1:" + std::to_string(port));
  }
  KSIM_RETURN_IF_ERROR(WritePortsFile(ports));
  wall_start_ = std::chrono::steady_clock::now();
  virtual_start_us_ = run.world.Now();
  return Status::Ok();
}

Status ServeDriver::WritePortsFile(const std::vector<std::pair<BrokerId, int32_t>>& ports) const {
  if (options_.ports_file.empty()) return Status::Ok();
  std::string text;
  for (const auto& [id, port] : ports) {
    text += node::Broker(id) + " 127.0.0.1:" + std::to_string(port) + "\n";
  }
  KSIM_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::Create(options_.ports_file));
  KSIM_RETURN_IF_ERROR(file.Append(text));
  return file.Commit();
}

TimeUs ServeDriver::Paced() const {
  const auto wall = std::chrono::steady_clock::now() - wall_start_;
  const int64_t wall_us = std::chrono::duration_cast<std::chrono::microseconds>(wall).count();
  return virtual_start_us_ + wall_us * options_.speed_per_mille / 1000;
}

bool ServeDriver::RunTo(RunContext& run, TimeUs target_us) {
  for (;;) {
    const TimeUs paced_us = Paced();
    if (!pending_.empty()) {
      const TimeUs stamp_us = std::max({paced_us, last_stamp_us_ + 1, run.world.Now()});
      if (stamp_us < target_us) {
        run.run_to(stamp_us);
        last_stamp_us_ = stamp_us;
        ApplyPending();
        continue;
      }
    }
    run.run_to(std::min(target_us, std::max(run.world.Now(), paced_us)));
    stats_.max_lag_us = std::max(stats_.max_lag_us, Paced() - run.world.Now());
    if (run.world.Now() >= target_us) return true;
    if (options_.stop_requested()) {
      stats_.virtual_us = run.world.Now() - virtual_start_us_;
      stats_.final_lag_us = Paced() - run.world.Now();
      stats_.wall_us = std::chrono::duration_cast<std::chrono::microseconds>(
                           std::chrono::steady_clock::now() - wall_start_)
                           .count();
      TraceStop(run.world, "interrupted");
      return false;
    }
    PollSockets(run, target_us, Paced());
  }
}

void ServeDriver::PollSockets(RunContext& run, TimeUs target_us, TimeUs paced_us) {
  // Sleep in poll until paced time reaches the next event or the target, at most kMaxPollMs.
  TimeUs wake_us = target_us;
  if (std::optional<EventLoop::NextEvent> next = run.world.loop().PeekNext()) {
    wake_us = std::min(wake_us, next->time_us);
  }
  int timeout_ms = kMaxPollMs;
  if (wake_us != kRunForever) {
    const TimeUs wait_virtual_us = std::max<TimeUs>(0, wake_us - paced_us);
    const TimeUs wait_wall_us = wait_virtual_us * 1000 / options_.speed_per_mille;
    timeout_ms = static_cast<int>(std::min<TimeUs>(kMaxPollMs, (wait_wall_us + 999) / 1000));
  }
  sockets_.Poll(timeout_ms, pending_);
}

void ServeDriver::ApplyPending() {
  ++stats_.input_groups;
  std::vector<SocketServer::Event> events = std::move(pending_);
  pending_.clear();
  for (SocketServer::Event& event : events) {
    switch (event.kind) {
      case SocketServer::Event::Kind::kOpened:
        gateway_->Open(event.connection, BrokerId(event.listener_tag));
        break;
      case SocketServer::Event::Kind::kData:
        gateway_->Receive(event.connection, event.data);
        break;
      case SocketServer::Event::Kind::kClosed:
        gateway_->ClientClosed(event.connection);
        break;
    }
  }
}

void ServeDriver::Stop(RunContext& /*run*/) {
  options_.say("stopping: closing client connections, then the final phase");
  gateway_->End();
  sockets_.CloseAll();
  const GatewayCounters& counters = gateway_->counters();
  stats_.connections = counters.connections;
  stats_.requests = counters.requests;
  stats_.responses = counters.responses;
  stats_.bad_frames = counters.bad_frames;
  gateway_.reset();  // its client nodes leave the network while the world lives
}

void ServeDriver::Send(ExternalConnectionId connection, Bytes frame) {
  sockets_.Send(connection, std::move(frame));
}

void ServeDriver::Close(ExternalConnectionId connection) { sockets_.Close(connection); }

// ---- Reading a served trace ---------------------------------------------------------------------

Result<ServedRun> ReadServedRun(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Errc::kInvalidArgument, "cannot open " + path);
  std::ostringstream contents;
  contents << in.rdbuf();
  ServedRun served;
  Xxh64 hash;
  hash.Update(contents.str());
  served.trace_hash = hash.digest();
  KSIM_ASSIGN_OR_RETURN(TraceReader reader, TraceReader::FromString(contents.str(), path));
  served.header = reader.header();
  bool started = false;
  bool stopped = false;
  for (;;) {
    Result<std::optional<TraceEvent>> next = reader.Next();
    if (!next.ok()) return Status(Errc::kInvalidArgument, next.status().message());
    if (!next->has_value()) break;
    const TraceEvent& event = **next;
    if (event.node != node::kServe) continue;
    auto bad = [&](const std::string& what) {
      return Status(Errc::kInvalidArgument, path + ":" + std::to_string(event.line) + ": " + what);
    };
    const TraceFields& f = event.fields;
    try {
      if (event.ev == ev::kServeStart) {
        served.scenario.file = f.at(field::kFile).get<std::string>();
        served.scenario.text = f.at(field::kText).get<std::string>();
        served.scenario.variant = f.at(field::kVariant).get<std::string>();
        started = true;
      } else if (event.ev == ev::kExtListen) {
        served.ports.emplace_back(BrokerId(f.at(field::kBroker).get<int32_t>()),
                                  f.at(field::kPort).get<int32_t>());
      } else if (event.ev == ev::kExtConnect) {
        ServedInput input{ServedInput::Kind::kConnect,
                          event.t_us,
                          f.at(field::kConn).get<ExternalConnectionId>(),
                          BrokerId(f.at(field::kBroker).get<int32_t>()),
                          {}};
        served.inputs.push_back(std::move(input));
      } else if (event.ev == ev::kExtData) {
        std::optional<Bytes> data = Base64Decode(f.at(field::kData).get<std::string>());
        if (!data) return bad("ext_data's data is not base64");
        served.inputs.push_back(ServedInput{ServedInput::Kind::kData, event.t_us,
                                            f.at(field::kConn).get<ExternalConnectionId>(),
                                            BrokerId(0), std::move(*data)});
      } else if (event.ev == ev::kExtClose && f.at(field::kBy).get<std::string>() == "client") {
        served.inputs.push_back(ServedInput{ServedInput::Kind::kClose,
                                            event.t_us,
                                            f.at(field::kConn).get<ExternalConnectionId>(),
                                            BrokerId(0),
                                            {}});
      } else if (event.ev == ev::kServeStop) {
        served.stop_us = event.t_us;
        served.stop_reason = f.at(field::kReason).get<std::string>();
        stopped = true;
      }
    } catch (const nlohmann::json::exception& e) {
      return bad(std::string(event.ev) + ": " + e.what());
    }
  }
  if (!started) {
    return Status(Errc::kInvalidArgument,
                  path + ": not a trace of `ksim serve` (it has no serve_start line)");
  }
  if (!stopped) return Status(Errc::kInvalidArgument, path + ": the served run has no serve_stop");
  return served;
}

// ---- ReplayDriver -------------------------------------------------------------------------------

ReplayDriver::~ReplayDriver() = default;

Status ReplayDriver::Start(RunContext& run) {
  TraceStart(run.world, served_.scenario);
  GatewayOutput& output = *this;
  gateway_ = std::make_unique<ClientGateway>(run.world, run.history, output,
                                             run.cluster.options().kafka_version);
  for (const auto& [id, port] : served_.ports) gateway_->Listen(id, port);
  return Status::Ok();
}

bool ReplayDriver::RunTo(RunContext& run, TimeUs target_us) {
  // The served loop applied each group of inputs right after running to its stamp.
  while (next_input_ < served_.inputs.size()) {
    const TimeUs stamp_us = served_.inputs[next_input_].t_us;
    if (stamp_us >= target_us || stamp_us > served_.stop_us) break;
    run.run_to(stamp_us);
    for (; next_input_ < served_.inputs.size() && served_.inputs[next_input_].t_us == stamp_us;
         ++next_input_) {
      const ServedInput& input = served_.inputs[next_input_];
      switch (input.kind) {
        case ServedInput::Kind::kConnect:
          gateway_->Open(input.connection, input.broker);
          break;
        case ServedInput::Kind::kData:
          gateway_->Receive(input.connection, input.data);
          break;
        case ServedInput::Kind::kClose:
          gateway_->ClientClosed(input.connection);
          break;
      }
    }
  }
  if (served_.stop_us < target_us) {
    run.run_to(served_.stop_us);
    TraceStop(run.world, served_.stop_reason);
    return false;
  }
  run.run_to(target_us);
  return true;
}

void ReplayDriver::Stop(RunContext& /*run*/) {
  gateway_->End();
  gateway_.reset();  // as ServeDriver::Stop
}

}  // namespace ksim::sim
