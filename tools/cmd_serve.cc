// `ksim serve SCENARIO.json`: the scenario's cluster runs paced to the wall clock and every broker
// listens on loopback for real Kafka clients (sim/serve/serve.h; docs/serve.md is the user's
// reference). The scenario's actions happen at their times; the run goes on until Ctrl-C (SIGINT
// or SIGTERM), then closes the clients' connections, runs the final phase, checks and prints the
// report, as `ksim run` does. A second Ctrl-C ends the process at once.
//
// Exit codes (tools/commands.h): 0 every expectation met, 1 one failed, 2 bad input (arguments,
// a scenario that does not load, a port that cannot be listened on, an output that cannot be
// written).
#include <csignal>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "sim/kernel/atomic_file.h"
#include "sim/kernel/trace.h"
#include "sim/runner/report.h"
#include "sim/runner/runner.h"
#include "sim/scenario/loader.h"
#include "sim/scenario/variants.h"
#include "sim/serve/serve.h"
#include "tools/args.h"
#include "tools/commands.h"

namespace ksim::tools {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

void OnInterrupt(int signal) {
  g_interrupted = 1;
  std::signal(signal, SIG_DFL);  // a second one ends the process
}

struct ServeArgs {
  std::string file;
  std::string seed_text;
  std::string variant = "base";
  std::string speed_text = "1";
  int32_t port_base = 9092;
  std::string ports_file;
  std::string trace_path;
  std::string trace_level_text = "state";
  std::string report_path;
};

int BadInput(const std::string& message) {
  std::cerr << "ksim serve: " << message << "\n";
  return 2;
}

// "1", "0.5", "2.25": a positive decimal with at most 3 decimals, in thousandths.
Result<int64_t> ParseSpeed(const std::string& text) {
  const Status bad(Errc::kInvalidArgument,
                   "--speed '" + text +
                       "' is not a speed: expected a positive decimal such as 1, 0.5 or 10 (at "
                       "most 3 decimals, at most 1000)");
  const size_t dot = text.find('.');
  const std::string whole = text.substr(0, dot);
  const std::string fraction = dot == std::string::npos ? "" : text.substr(dot + 1);
  if (whole.empty() || whole.size() > 4 || fraction.size() > 3) return bad;
  for (char c : whole + fraction) {
    if (c < '0' || c > '9') return bad;
  }
  int64_t per_mille = std::stoll(whole) * 1000;
  if (!fraction.empty()) per_mille += std::stoll(fraction + std::string(3 - fraction.size(), '0'));
  if (per_mille <= 0 || per_mille > 1'000'000) return bad;
  return per_mille;
}

int Serve(const ServeArgs& args) {
  std::optional<uint64_t> seed;
  if (!args.seed_text.empty()) {
    Result<uint64_t> parsed = ParseSeed(args.seed_text);
    if (!parsed.ok()) return BadInput(parsed.status().message());
    seed = *parsed;
  }
  Result<int64_t> speed = ParseSpeed(args.speed_text);
  if (!speed.ok()) return BadInput(speed.status().message());
  if (args.port_base < 0 || args.port_base > 65535 - 64) {
    return BadInput("--port-base " + std::to_string(args.port_base) +
                    " is not a port: expected 1..65471, or 0 for ports the system picks");
  }
  Result<sim::TraceLevel> level = sim::ParseTraceLevel(args.trace_level_text);
  if (!level.ok()) {
    return BadInput("--trace-level '" + args.trace_level_text +
                    "' is not a trace level: expected state or messages");
  }
  std::ifstream in(args.file, std::ios::binary);
  if (!in) return BadInput("cannot open " + args.file);
  std::ostringstream text;
  text << in.rdbuf();
  Result<sim::Scenario> scenario = sim::ParseScenario(text.str(), args.file);
  if (!scenario.ok()) {
    std::cerr << scenario.status().message() << "\n";  // names the file already
    return 2;
  }
  Result<std::vector<sim::SelectedRun>> runs = sim::SelectRuns(*scenario, args.variant, args.file);
  if (!runs.ok()) return BadInput(runs.status().message());

  sim::ServeOptions options;
  options.scenario = sim::ServedScenario{args.file, text.str(), args.variant};
  options.port_base = args.port_base;
  options.ports_file = args.ports_file;
  options.speed_per_mille = *speed;
  options.stop_requested = [] { return g_interrupted != 0; };
  options.say = [](const std::string& line) { std::cerr << "ksim serve: " << line << "\n"; };
  sim::ServeDriver driver(std::move(options));

  std::signal(SIGINT, OnInterrupt);
  std::signal(SIGTERM, OnInterrupt);
  std::cerr << "ksim serve: starting " << scenario->name << " (" << args.variant
            << "); Ctrl-C ends the run\n";
  sim::RunOptions run;
  run.seed = seed;
  run.variant = args.variant;
  run.trace_level = *level;
  run.trace_path = args.trace_path;
  run.driver = &driver;
  Result<sim::RunResult> result = sim::RunScenario(*runs->front().scenario, run);
  if (!result.ok()) return BadInput(args.file + ": " + result.status().message());

  const sim::ServeStats& stats = driver.stats();
  std::cout << sim::FormatRunReport(*result);
  std::cout << "Served: " << stats.connections << " connections, " << stats.requests
            << " requests, " << stats.responses << " responses, " << stats.bad_frames
            << " bad frames; " << stats.virtual_us / 1000 << " ms virtual in "
            << stats.wall_us / 1000 << " ms wall; the virtual clock fell behind by at most "
            << stats.max_lag_us / 1000 << " ms\n";
  if (!args.trace_path.empty()) std::cout << "Trace: " << args.trace_path << "\n";
  if (!args.report_path.empty()) {
    Result<sim::AtomicFile> report = sim::AtomicFile::Create(args.report_path);
    Status written = report.ok() ? report->Append(sim::ReportJson({*result}).dump(2) + "\n")
                                 : report.status();
    if (written.ok()) written = report->Commit();
    if (!written.ok()) return BadInput("cannot write " + args.report_path + ": " + written.message());
    std::cout << "Report: " << args.report_path << "\n";
  }
  return result->ok ? 0 : 1;
}

}  // namespace

Command AddServe(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* sub = app.add_subcommand(
      "serve",
      "Run a scenario paced to the wall clock with every broker listening on 127.0.0.1 for real "
      "Kafka clients (kcat, kafkajs, ...); Ctrl-C ends it through the final phase and the report");
  sub->add_option("scenario", args->file, "Scenario file (JSON, docs/scenarios.md)")->required();
  sub->add_option("--variant", args->variant,
                  "The variant to serve (default `base`: the scenario without a variant)");
  sub->add_option("--seed", args->seed_text, "Seed (default: the scenario's)");
  sub->add_option("--speed", args->speed_text,
                  "Virtual time per wall time: 1 real time (default), 2 twice as fast, 0.5 half");
  sub->add_option("--port-base", args->port_base,
                  "Broker i listens on PORT_BASE + i - 1 (default 9092; 0: free ports)");
  sub->add_option("--ports-file", args->ports_file,
                  "Write one `broker-<i> 127.0.0.1:<port>` line per broker once listening");
  sub->add_option("--trace", args->trace_path,
                  "Write the trace (JSON Lines); `ksim run --replay` runs it again");
  sub->add_option("--trace-level", args->trace_level_text, "state (default) or messages");
  sub->add_option("--report", args->report_path, "Write the report as JSON to this file");
  return [args] { return Serve(*args); };
}

}  // namespace ksim::tools
