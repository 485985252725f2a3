// The drivers of a served run (docs/serve.md): ServeDriver runs a scenario paced to the wall
// clock with every broker listening on loopback for real Kafka clients (`ksim serve`);
// ReplayDriver runs it again from the served run's trace, feeding the same client inputs at the
// same virtual times (`ksim run --replay`), so that the replay's trace is the served one, byte
// for byte. Both are sim::RunDrivers (sim/runner/runner.h) around one ClientGateway
// (sim/serve/gateway.h).
//
// The serve loop (ServeDriver::RunTo), on one thread:
//   paced = virtual time at Start + (wall time since Start) x speed
//   1. inputs read from the sockets and not yet applied are applied at one virtual time, the
//      "stamp": max(paced, the previous stamp + 1 us, now), if it is before the target: the
//      world first runs every event up to the stamp, then each input is traced and applied;
//   2. otherwise the world runs every event up to min(target, paced); at the target RunTo
//      returns (the runner's next action); on Ctrl-C the run stops here (serve_stop);
//   3. the sockets are polled until paced time reaches the next event or the target (at most
//      50 ms of wall time), and what they bring is queued for 1.
// Stamps strictly grow, so a replay knows exactly where each group of inputs went: it runs to
// each recorded stamp, applies that stamp's inputs, and stops where serve_stop says. Wall time
// only decides the stamps; the trace records them, and nothing else of the wall clock reaches
// the world.
//
// Single-threaded. The drivers borrow nothing beyond their options; the gateway lives from Start
// to destruction.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/status.h"
#include "core/base/types.h"
#include "sim/kernel/trace.h"
#include "sim/runner/runner.h"
#include "sim/serve/gateway.h"
#include "sim/serve/socket_server.h"

namespace ksim::sim {

// What a served run was started with, traced in serve_start.
struct ServedScenario {
  std::string file;  // as given on the command line
  std::string text;  // the file's contents
  std::string variant = "base";
};

struct ServeOptions {
  ServedScenario scenario;
  // Broker i listens on 127.0.0.1:(port_base + i - 1); 0: ports the kernel picks.
  int32_t port_base = 9092;
  // When set, written once every broker listens: one "broker-<i> 127.0.0.1:<port>" line each.
  std::string ports_file;
  // Virtual time per wall time, in thousandths (1000: real time, 2000: twice as fast).
  int64_t speed_per_mille = 1000;
  // Polled by the loop: true ends the run (Ctrl-C).
  std::function<bool()> stop_requested;
  // A status line for the person running it (listening, stopping).
  std::function<void(const std::string&)> say;
};

struct ServeStats {
  uint64_t connections = 0;
  uint64_t requests = 0;
  uint64_t responses = 0;
  uint64_t bad_frames = 0;
  uint64_t input_groups = 0;  // stamps
  TimeUs virtual_us = 0;      // virtual time from Start to the stop
  TimeUs wall_us = 0;         // wall time from Start to the stop
  TimeUs max_lag_us = 0;      // most the virtual clock fell behind paced time (virtual us)
  TimeUs final_lag_us = 0;    // paced time minus virtual time at the stop
};

class ServeDriver final : public RunDriver, private GatewayOutput {
 public:
  explicit ServeDriver(ServeOptions options);
  ~ServeDriver() override;

  Status Start(RunContext& run) override;
  bool RunTo(RunContext& run, TimeUs target_us) override;
  void Stop(RunContext& run) override;

  const ServeStats& stats() const { return stats_; }

 private:
  // GatewayOutput.
  void Send(ExternalConnectionId connection, Bytes frame) override;
  void Close(ExternalConnectionId connection) override;

  TimeUs Paced() const;
  void ApplyPending();
  void PollSockets(RunContext& run, TimeUs target_us, TimeUs paced_us);
  Status WritePortsFile(const std::vector<std::pair<BrokerId, int32_t>>& ports) const;

  ServeOptions options_;
  SocketServer sockets_;
  std::unique_ptr<ClientGateway> gateway_;
  std::vector<SocketServer::Event> pending_;
  std::chrono::steady_clock::time_point wall_start_;
  TimeUs virtual_start_us_ = 0;
  TimeUs last_stamp_us_ = -1;
  ServeStats stats_;
};

// One input of a served run, as its trace recorded it.
struct ServedInput {
  enum class Kind : uint8_t { kConnect, kData, kClose };
  Kind kind = Kind::kData;
  TimeUs t_us = 0;
  ExternalConnectionId connection = 0;
  BrokerId broker{0};  // kConnect
  Bytes data;          // kData
};

// What a replay needs from a served run's trace.
struct ServedRun {
  TraceHeader header;
  ServedScenario scenario;
  std::vector<std::pair<BrokerId, int32_t>> ports;  // ext_listen, in order
  std::vector<ServedInput> inputs;                  // in trace order
  TimeUs stop_us = 0;
  std::string stop_reason;
  uint64_t trace_hash = 0;  // XXH64 of the whole file, as TraceWriter hashes
};

// Reads a trace written by `ksim serve`. kInvalidArgument naming the file and line when it is
// not one (no serve_start, an input that does not parse, no serve_stop).
Result<ServedRun> ReadServedRun(const std::string& path);

class ReplayDriver final : public RunDriver, private GatewayOutput {
 public:
  // REQUIRES: `served` and `output` outlive the driver. The gateway's answers go to `output`
  // (null: nowhere).
  explicit ReplayDriver(const ServedRun& served, GatewayOutput* output = nullptr)
      : served_(served), output_(output) {}
  ~ReplayDriver() override;

  Status Start(RunContext& run) override;
  bool RunTo(RunContext& run, TimeUs target_us) override;
  void Stop(RunContext& run) override;

 private:
  void Send(ExternalConnectionId connection, Bytes frame) override {
    if (output_ != nullptr) output_->Send(connection, std::move(frame));
  }
  void Close(ExternalConnectionId connection) override {
    if (output_ != nullptr) output_->Close(connection);
  }

  const ServedRun& served_;
  GatewayOutput* output_;
  std::unique_ptr<ClientGateway> gateway_;
  size_t next_input_ = 0;
};

}  // namespace ksim::sim
