// `ksim run SCENARIO.json`: runs a scenario (sim/runner/runner.h) and prints, per variant, the
// readable report (sim/runner/report.h); docs/scenarios.md, "ksim run", is the user's reference.
//
// Which runs: `--variant V` runs one (the base is `base`); without it, the base and every
// variant run, in the order written (`--all-variants` says so explicitly): a scenario's variants
// are the point of it (the delivery-semantics trio is one scenario with three variants).
// Outputs: `--trace FILE` writes each run's trace, as FILE itself when one run is made, else as
// `<FILE without .jsonl>.<variant>.jsonl`; `--report FILE.json` writes the report JSON once every
// run is done. Every output is written atomically (sim/kernel/atomic_file.h): the report's
// temporary file is created before anything runs, so a bad path fails at once and no half-written
// file is ever left behind. `--check-determinism` runs every variant twice and compares the trace
// hashes.
// `--replay TRACE` runs a `ksim serve` trace again and checks it is reproduced byte for byte.
// `--matrix` runs the election-policy matrix instead (the base, or `--variant V`), prints it,
// and compares it with `--golden FILE.json` or writes it with `--write-golden FILE.json`;
// `--releases LIST` runs it at each of those Kafka releases (the golden's by default).
//
// Exit codes (tools/commands.h): 0 every expectation met (and the matrix equal to its golden,
// the traces deterministic); 1 an expectation failed, a golden matrix differs or a variant is
// not deterministic; 2 bad input: arguments, a scenario file that does not load, an unknown
// variant, a policy the cluster refuses, an output that cannot be written.
//
// Progress: only when stderr is a terminal, one line rewritten in place
// ("[base] 45% (27.0 s of 60.0 s simulated)") and erased when the run ends.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/kafka_version.h"
#include "core/controller/controller.h"
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

struct RunArgs {
  std::string file;
  std::string seed_text;
  std::string variant;
  bool all_variants = false;
  std::string trace_path;
  std::string trace_level_text = "state";
  std::string report_path;
  bool check_determinism = false;
  bool matrix = false;
  std::string golden_path;
  std::string write_golden_path;
  std::string releases_text;
  std::string replay_path;
};

int BadInput(const std::string& message) {
  std::cerr << "ksim run: " << message << "\n";
  return 2;
}

// The one progress line on a terminal; nothing otherwise.
class Progress {
 public:
  Progress() : enabled_(isatty(STDERR_FILENO) == 1) {}
  ~Progress() { Clear(); }

  void Show(const std::string& label, TimeUs done_us, TimeUs total_us) {
    if (!enabled_) return;
    const int64_t percent = total_us > 0 ? std::min<int64_t>(100, done_us * 100 / total_us) : 0;
    std::string line = "[" + label + "] " + std::to_string(percent) + "% (" + Tenths(done_us) +
                       " s of " + Tenths(total_us) + " s simulated)";
    const size_t width = line.size();
    if (line.size() < shown_width_) line.append(shown_width_ - line.size(), ' ');
    shown_width_ = width;
    std::fprintf(stderr, "\r%s", line.c_str());
    std::fflush(stderr);
  }

  void Clear() {
    if (!enabled_ || shown_width_ == 0) return;
    std::fprintf(stderr, "\r%s\r", std::string(shown_width_, ' ').c_str());
    std::fflush(stderr);
    shown_width_ = 0;
  }

 private:
  static std::string Tenths(TimeUs t_us) {
    const int64_t tenths = t_us / 100000;
    return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10);
  }

  bool enabled_;
  size_t shown_width_ = 0;
};

// A policy the loader accepts but the controller refuses (longest-log) is bad input too: say so
// before anything runs or is written.
Status CheckRunnable(const std::vector<sim::SelectedRun>& runs, const std::string& file) {
  for (const sim::SelectedRun& run : runs) {
    ControllerOptions options;
    options.election_policy = run.scenario->policy.election;
    const Status valid = Controller::ValidateOptions(options);
    if (!valid.ok()) {
      const std::string where = run.name == "base" ? "" : "/variants/" + run.name;
      return Status(Errc::kInvalidConfig,
                    file + ":" + where + "/policy/election: " + std::string(valid.message()));
    }
  }
  return Status::Ok();
}

bool SameFile(const std::string& a, const std::string& b) {
  std::error_code error;
  const bool same = std::filesystem::equivalent(a, b, error);
  return !error && same;
}

std::string TracePathFor(const std::string& trace_path, const std::string& variant, size_t runs) {
  if (trace_path.empty() || runs == 1) return trace_path;
  std::string stem = trace_path;
  constexpr std::string_view kSuffix = ".jsonl";
  if (stem.ends_with(kSuffix)) stem.resize(stem.size() - kSuffix.size());
  return stem + "." + variant + ".jsonl";
}

// Opens an output before the runs, so that a path that cannot be written is bad input at once
// (AtomicFile's messages name the path). Never the scenario file itself.
Result<std::optional<sim::AtomicFile>> OpenOutput(const std::string& path,
                                                  const std::string& scenario_file) {
  if (path.empty()) return std::optional<sim::AtomicFile>();
  if (SameFile(path, scenario_file)) {
    return Status(Errc::kInvalidArgument,
                  "refusing to write over the scenario file " + scenario_file);
  }
  KSIM_ASSIGN_OR_RETURN(sim::AtomicFile file, sim::AtomicFile::Create(path));
  return std::optional<sim::AtomicFile>(std::move(file));
}

Status Finish(std::optional<sim::AtomicFile>& file, const std::string& contents) {
  KSIM_RETURN_IF_ERROR(file->Append(contents));
  return file->Commit();
}

int RunMatrix(const sim::Scenario& scenario, const std::string& name, std::optional<uint64_t> seed,
              const RunArgs& args) {
  std::optional<sim::Matrix> golden;
  if (!args.golden_path.empty()) {
    std::ifstream in(args.golden_path);
    if (!in) return BadInput("cannot open golden matrix " + args.golden_path);
    nlohmann::ordered_json json =
        nlohmann::ordered_json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded()) return BadInput(args.golden_path + ": not valid JSON");
    Result<sim::Matrix> parsed = sim::ParseMatrixJson(json);
    if (!parsed.ok()) {
      const std::string& why = parsed.status().message();
      return BadInput(args.golden_path + (why.starts_with("/") ? ":" : ": ") + why +
                      " (a golden matrix is what --write-golden writes)");
    }
    golden = std::move(parsed).value();
  }
  Result<std::optional<sim::AtomicFile>> out = OpenOutput(args.write_golden_path, args.file);
  if (!out.ok()) return BadInput(out.status().message());

  // The release axis: --releases, else the golden's.
  std::vector<KafkaRelease> releases;
  if (!args.releases_text.empty()) {
    Result<std::vector<KafkaRelease>> parsed = sim::ParseReleaseList(args.releases_text);
    if (!parsed.ok()) return BadInput("--releases: " + std::string(parsed.status().message()));
    releases = std::move(parsed).value();
  } else if (golden) {
    for (const std::string& version : golden->kafka_versions) {
      releases.push_back(ParseKafkaRelease(version).value());  // ParseMatrixJson checked them
    }
  }

  Progress progress;
  const sim::MatrixProgress show = [&progress, &name](const std::string& cell, size_t index,
                                                      size_t cells, TimeUs done_us,
                                                      TimeUs total_us) {
    progress.Show(name + " " + cell + " " + std::to_string(index + 1) + "/" + std::to_string(cells),
                  done_us, total_us);
  };
  std::string text;
  if (!releases.empty()) {  // each release parses the file again
    std::ifstream in(args.file);
    std::ostringstream read;
    read << in.rdbuf();
    if (!in) return BadInput("cannot read " + args.file);
    text = read.str();
  }
  Result<sim::Matrix> matrix =
      releases.empty() ? sim::RunPolicyMatrix(scenario, seed, show)
                       : sim::RunReleaseMatrix(text, args.file, name, releases, seed, show);
  progress.Clear();
  if (!matrix.ok()) return BadInput(args.file + ": " + matrix.status().message());
  std::cout << sim::FormatMatrix(*matrix);

  if (out->has_value()) {
    const Status written = Finish(*out, sim::MatrixJson(*matrix).dump(2) + "\n");
    if (!written.ok())
      return BadInput("cannot write " + args.write_golden_path + ": " +
                      std::string(written.message()));
    std::cout << "golden matrix written to " << args.write_golden_path << "\n";
  }
  if (golden) {
    const std::vector<std::string> diff = sim::DiffMatrix(*golden, *matrix);
    if (!diff.empty()) {
      std::cout << "FAILED: the matrix differs from " << args.golden_path << " (golden -> now):\n";
      for (const std::string& line : diff) std::cout << "  " << line << "\n";
      return 1;
    }
    std::cout << "ok: the matrix equals " << args.golden_path << "\n";
  }
  return 0;
}

// `--replay TRACE`: the served run again, from the scenario, seed, variant and client inputs its
// trace recorded (sim/serve/serve.h); exit 1 unless the new trace is the served one, byte for
// byte.
int ReplayCommand(const RunArgs& args) {
  Result<sim::ServedRun> served = sim::ReadServedRun(args.replay_path);
  if (!served.ok()) return BadInput(served.status().message());
  const std::string& file = served->scenario.file;
  Result<sim::Scenario> scenario = sim::ParseScenario(served->scenario.text, file);
  if (!scenario.ok()) return BadInput(args.replay_path + ": " + scenario.status().message());
  Result<std::vector<sim::SelectedRun>> runs =
      sim::SelectRuns(*scenario, served->scenario.variant, file);
  if (!runs.ok()) return BadInput(args.replay_path + ": " + runs.status().message());
  Result<std::optional<sim::AtomicFile>> report = OpenOutput(args.report_path, args.replay_path);
  if (!report.ok()) return BadInput(report.status().message());
  if (!args.trace_path.empty() && SameFile(args.trace_path, args.replay_path)) {
    return BadInput("refusing to write over the trace being replayed " + args.replay_path);
  }

  sim::ReplayDriver driver(*served);
  sim::RunOptions options;
  options.seed = served->header.seed;
  options.variant = served->header.variant;
  options.trace_level = served->header.level;
  options.trace_path = args.trace_path;
  options.driver = &driver;
  Result<sim::RunResult> result = sim::RunScenario(*runs->front().scenario, options);
  if (!result.ok()) return BadInput(args.replay_path + ": " + result.status().message());
  std::cout << sim::FormatRunReport(*result);
  if (!options.trace_path.empty()) std::cout << "Trace: " << options.trace_path << "\n";
  if (report->has_value()) {
    const Status written = Finish(*report, sim::ReportJson({*result}).dump(2) + "\n");
    if (!written.ok()) {
      return BadInput("cannot write " + args.report_path + ": " + std::string(written.message()));
    }
    std::cout << "Report: " << args.report_path << "\n";
  }
  if (result->trace_hash != served->trace_hash) {
    std::cout << "REPLAY DIFFERS: " << args.replay_path << " has hash "
              << sim::Xxh64::Hex(served->trace_hash) << ", the replay "
              << sim::Xxh64::Hex(result->trace_hash) << "\n";
    return 1;
  }
  std::cout << "Replay: the trace is " << args.replay_path << ", byte for byte (hash "
            << sim::Xxh64::Hex(result->trace_hash) << ")\n";
  return result->ok ? 0 : 1;
}

int RunScenarioCommand(const RunArgs& args) {
  if (!args.replay_path.empty()) {
    if (!args.file.empty()) {
      return BadInput("--replay takes the scenario from the trace: give no scenario file");
    }
    return ReplayCommand(args);
  }
  if (args.file.empty()) return BadInput("a scenario file is required (or --replay TRACE)");
  std::optional<uint64_t> seed;
  if (!args.seed_text.empty()) {
    Result<uint64_t> parsed = ParseSeed(args.seed_text);
    if (!parsed.ok()) return BadInput(parsed.status().message());
    seed = *parsed;
  }
  Result<sim::TraceLevel> level = sim::ParseTraceLevel(args.trace_level_text);
  if (!level.ok()) {
    return BadInput("--trace-level '" + args.trace_level_text +
                    "' is not a trace level: expected state or messages");
  }
  Result<sim::Scenario> scenario = sim::LoadScenario(args.file);
  if (!scenario.ok()) {
    std::cerr << scenario.status().message() << "\n";  // names the file already
    return 2;
  }
  Result<std::vector<sim::SelectedRun>> runs = sim::SelectRuns(*scenario, args.variant, args.file);
  if (!runs.ok()) return BadInput(runs.status().message());
  // The matrix sets the policies itself.
  if (args.matrix) return RunMatrix(*runs->front().scenario, runs->front().name, seed, args);
  if (const Status runnable = CheckRunnable(*runs, args.file); !runnable.ok()) {
    return BadInput(runnable.message());
  }

  Result<std::optional<sim::AtomicFile>> report = OpenOutput(args.report_path, args.file);
  if (!report.ok()) return BadInput(report.status().message());
  for (const sim::SelectedRun& run : *runs) {
    const std::string trace = TracePathFor(args.trace_path, run.name, runs->size());
    if (!trace.empty() && SameFile(trace, args.file)) {
      return BadInput("refusing to write over the scenario file " + args.file);
    }
  }

  Progress progress;
  std::vector<sim::RunResult> results;
  std::vector<std::string> nondeterministic;
  for (const sim::SelectedRun& run : *runs) {
    sim::RunOptions options;
    options.seed = seed;
    options.variant = run.name;
    options.trace_level = *level;
    options.trace_path = TracePathFor(args.trace_path, run.name, runs->size());
    // The last run's world goes with the process (the determinism check's second run's does).
    const bool last = &run == &runs->back();
    options.leave_world_to_exit = last && !args.check_determinism;
    const std::string label = run.name;
    options.progress = [&progress, label](TimeUs done_us, TimeUs total_us) {
      progress.Show(label, done_us, total_us);
    };
    Result<sim::RunResult> result = sim::RunScenario(*run.scenario, options);
    progress.Clear();
    if (!result.ok()) {
      return BadInput(args.file + " (" + run.name + "): " + result.status().message());
    }
    if (args.check_determinism) {
      sim::RunOptions again = options;
      again.trace_path.clear();
      again.leave_world_to_exit = last;
      again.progress = [&progress, label](TimeUs done_us, TimeUs total_us) {
        progress.Show(label + " again", done_us, total_us);
      };
      Result<sim::RunResult> second = sim::RunScenario(*run.scenario, again);
      progress.Clear();
      if (!second.ok()) {
        return BadInput(args.file + " (" + run.name + "): " + second.status().message());
      }
      if (second->trace_hash != result->trace_hash || second->trace_lines != result->trace_lines) {
        nondeterministic.push_back(run.name +
                                   ": trace hashes differ: " + sim::Xxh64::Hex(result->trace_hash) +
                                   " (" + std::to_string(result->trace_lines) + " lines) then " +
                                   sim::Xxh64::Hex(second->trace_hash) + " (" +
                                   std::to_string(second->trace_lines) + " lines)");
      }
    }
    std::cout << sim::FormatRunReport(*result);
    if (!options.trace_path.empty()) std::cout << "Trace: " << options.trace_path << "\n";
    std::cout << "\n" << std::flush;
    results.push_back(std::move(result).value());
  }

  if (report->has_value()) {
    const Status written = Finish(*report, sim::ReportJson(results).dump(2) + "\n");
    if (!written.ok()) {
      return BadInput("cannot write " + args.report_path + ": " + std::string(written.message()));
    }
  }

  bool all_ok = true;
  if (results.size() > 1) std::cout << "Summary:\n";
  for (const sim::RunResult& result : results) {
    all_ok = all_ok && result.ok;
    if (results.size() > 1) {
      std::cout << "  " << (result.ok ? "ok      " : "FAILED  ") << result.variant << "\n";
    }
  }
  if (args.check_determinism) {
    if (nondeterministic.empty()) {
      std::cout << "Determinism: every variant ran twice with the same trace hash\n";
    } else {
      for (const std::string& line : nondeterministic) {
        std::cout << "NOT DETERMINISTIC: " << line << "\n";
        std::cerr << "ksim run: not deterministic: " << line << "\n";
      }
    }
  }
  if (!args.report_path.empty()) std::cout << "Report: " << args.report_path << "\n";
  return all_ok && nondeterministic.empty() ? 0 : 1;
}

}  // namespace

Command AddRun(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* sub = app.add_subcommand(
      "run",
      "Run a scenario and report what happened to every record (exit 0 expectations met, 1 an "
      "expectation failed, 2 bad input)");
  sub->add_option("scenario", args->file, "Scenario file (JSON, docs/scenarios.md)");
  CLI::Option* seed =
      sub->add_option("--seed", args->seed_text, "Seed for every run (default: the scenario's)");
  CLI::Option* variant = sub->add_option(
      "--variant", args->variant, "Run only this variant (`base`: the scenario without a variant)");
  CLI::Option* all = sub->add_flag("--all-variants", args->all_variants,
                                   "Run the base and every variant (the default)");
  variant->excludes(all);
  CLI::Option* trace = sub->add_option(
      "--trace", args->trace_path,
      "Write the trace (JSON Lines); with several runs, <FILE without .jsonl>.<variant>.jsonl");
  CLI::Option* level =
      sub->add_option("--trace-level", args->trace_level_text,
                      "state (state changes and client operations) or messages (also every "
                      "network message); default state");
  CLI::Option* report =
      sub->add_option("--report", args->report_path, "Write the report as JSON to this file");
  CLI::Option* determinism =
      sub->add_flag("--check-determinism", args->check_determinism,
                    "Run each variant twice and fail (exit 1) when the two traces differ");
  CLI::Option* matrix = sub->add_flag(
      "--matrix", args->matrix,
      "Run the election-policy matrix (every election x truncation policy) and print it");
  CLI::Option* golden = sub->add_option("--golden", args->golden_path,
                                        "With --matrix: compare with this golden matrix (exit 1 "
                                        "and the differences when it differs)");
  CLI::Option* write_golden = sub->add_option("--write-golden", args->write_golden_path,
                                              "With --matrix: write the matrix as golden JSON");
  CLI::Option* releases = sub->add_option(
      "--releases", args->releases_text,
      "With --matrix: run it at each of these Kafka releases too (all, or e.g. 0.10.0,0.11.0,2.0; "
      "with --golden, the golden's releases by default)");
  CLI::Option* replay = sub->add_option(
      "--replay", args->replay_path,
      "Run a `ksim serve` trace again (its scenario, seed and clients' inputs) and check that the "
      "new trace is the same, byte for byte (exit 1 if not)");
  replay->excludes(seed)
      ->excludes(variant)
      ->excludes(all)
      ->excludes(level)
      ->excludes(determinism)
      ->excludes(matrix);
  golden->needs(matrix);
  write_golden->needs(matrix);
  releases->needs(matrix);
  golden->excludes(write_golden);
  matrix->excludes(all)->excludes(trace)->excludes(level)->excludes(report)->excludes(determinism);
  return [args] { return RunScenarioCommand(*args); };
}

}  // namespace ksim::tools
