// `ksim shrink FAILING.json --out MIN.json`: delta debugging of a failing scenario (one `ksim
// explore` wrote, or any) to a minimal one with the same failure signature
// (sim/explore/shrink.h; docs/explore.md, "Shrinking"). Prints each step; writes the minimal
// scenario atomically with a generated description; `ksim run MIN.json` replays it.
//
// Exit codes: 0 the minimal scenario was written, 1 the scenario does not fail (or not with
// --signature), 2 bad input (a scenario that does not load, an output that cannot be written).
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "sim/explore/shrink.h"
#include "sim/kernel/atomic_file.h"
#include "sim/kernel/trace.h"
#include "sim/scenario/loader.h"
#include "tools/commands.h"

namespace ksim::tools {
namespace {

struct ShrinkArgs {
  std::string file;
  std::string out;
  std::string signature;
  int32_t max_runs = 1000;
  bool expect = false;
  std::vector<std::string> bounds;
  bool quiet = false;
};

int RunShrink(const ShrinkArgs& args) {
  auto bad = [](const std::string& message) {
    std::cerr << "ksim shrink: " << message << "\n";
    return 2;
  };
  std::ifstream in(args.file, std::ios::binary);
  if (!in) return bad("cannot open " + args.file);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  Result<sim::Scenario> loaded = sim::ParseScenario(bytes.str(), args.file);
  if (!loaded.ok()) {
    std::cerr << loaded.status().message() << "\n";
    return 2;
  }
  nlohmann::ordered_json document =
      nlohmann::ordered_json::parse(bytes.str(), nullptr, /*allow_exceptions=*/false);
  document.erase("variants");
  if (args.max_runs < 1) return bad("--max-runs: expected at least 1");
  Result<sim::AtomicFile> out = sim::AtomicFile::Create(args.out);
  if (!out.ok()) return bad(out.status().message());

  sim::ShrinkOptions options;
  options.max_runs = args.max_runs;
  options.properties.expectations = args.expect;
  for (const std::string& text : args.bounds) {
    Result<sim::MetricBound> bound = sim::ParseMetricBound(text);
    if (!bound.ok()) return bad("--bound " + text + ": " + bound.status().message());
    options.properties.bounds.push_back(std::move(*bound));
  }
  if (!args.signature.empty()) options.signature = args.signature;
  Result<sim::ShrinkResult> result =
      sim::Shrink(document, args.file, options, [&](const std::string& line) {
        if (!args.quiet) std::cout << line << "\n" << std::flush;
      });
  if (!result.ok()) {
    std::cerr << "ksim shrink: " << result.status().message() << "\n";
    return result.status().message().find("does not fail") != std::string::npos ? 1 : 2;
  }
  Status written = out->Append(result->document.dump(2) + "\n");
  if (written.ok()) written = out->Commit();
  if (!written.ok()) return bad("cannot write " + args.out + ": " + written.message());
  std::cout << "Minimal scenario: " << args.out << ": " << result->actions_after
            << " actions (from " << result->actions_before << "), "
            << result->document.value("duration_ms", 60000) << " ms, " << result->steps_kept
            << " steps kept in " << result->runs << " runs\n"
            << "Failure: " << result->failure.signature << "\n  " << result->failure.cause << "\n"
            << "Replay: ksim run " << args.out << " (trace hash "
            << sim::Fnv1a64::Hex(result->trace_hash) << ")\n";
  return 0;
}

}  // namespace

Command AddShrink(CLI::App& app) {
  auto args = std::make_shared<ShrinkArgs>();
  CLI::App* sub = app.add_subcommand(
      "shrink",
      "Reduce a failing scenario to a minimal one with the same failure signature (exit 0 "
      "written, 1 it does not fail, 2 bad input)");
  sub->add_option("scenario", args->file, "A failing scenario (JSON), e.g. one ksim explore wrote")
      ->required();
  sub->add_option("--out", args->out, "Where to write the minimal scenario")->required();
  sub->add_option("--signature", args->signature,
                  "The failure to keep (a signature or a property name; default: the first)");
  sub->add_option("--max-runs", args->max_runs, "Runs at most (default 1000)");
  sub->add_flag("--expect", args->expect, "Count the scenario's own expectations as properties");
  sub->add_option("--bound", args->bounds,
                  "Also require a metric bound, as explore's --bound: METRIC<=N, METRIC>=N or "
                  "METRIC=N (repeatable)");
  sub->add_flag("--quiet", args->quiet, "Do not print each step");
  return [args] { return RunShrink(*args); };
}

}  // namespace ksim::tools
