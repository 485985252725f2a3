// `ksim explore BASE.json`: swarm-random fault schedules over many seeds, each run checked
// against the promise of its settings (sim/explore/); `ksim explore merge FILE...`: shards
// combined into one summary. docs/explore.md is the user's reference.
//
// Seeds: --first-seed S (0) and --seeds N (100) give S..S+N-1; --shard I/N keeps the I-th of N
// contiguous slices (I from 0: Kubernetes' JOB_COMPLETION_INDEX and Slurm's SLURM_ARRAY_TASK_ID
// as they come). --policies runs every seed under each policy pair, --releases at each Kafka
// release (the same schedule; the promise derived at each). --jobs J runs the seeds on J
// worker processes (tools/explore_pool.h; 0: in this process, where a crash of ksim ends the
// search). Outputs: --results FILE.jsonl (one line per run, written whole as each run ends),
// every failing run's scenario in --out DIR, a summary on stdout, a progress line on a terminal.
//
// Exit codes (tools/commands.h): 0 nothing failed, 1 a run failed (a property, a crash, a
// refused schedule), 2 bad input: a base that does not load (at one of --releases too), an
// unknown fault kind, policy or release, --shard 3/2, a results file that is not explore's own,
// mixed versions or bases in merge (unless --allow-mixed), an output that cannot be written.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/explore/explore.h"
#include "sim/explore/results.h"
#include "sim/kernel/atomic_file.h"
#include "sim/runner/report.h"
#include "tools/args.h"
#include "tools/commands.h"
#include "tools/explore_pool.h"
#include "tools/version.h"

namespace ksim::tools {
namespace {

struct ExploreArgs {
  std::vector<std::string> argv;  // as given, for the workers
  std::string base;
  std::string seeds_text = "100";
  std::string first_seed_text = "0";
  std::string shard_text;
  int32_t jobs = 1;
  std::string faults_text;
  std::string policies_text;
  std::string releases_text;
  int32_t max_down = -1;
  int32_t fault_budget = 24;
  int64_t duration_ms = 0;
  bool expect = false;
  std::vector<std::string> bounds;
  uint64_t determinism_every = 100;
  int64_t run_timeout_s = 600;
  std::string results_path;
  std::string out_dir = "explore-failures";
  bool worker = false;
  // merge
  std::vector<std::string> merge_files;
  std::string merge_results;
  bool allow_mixed = false;
};

int BadInput(const std::string& message) {
  std::cerr << "ksim explore: " << message << "\n";
  return 2;
}

Result<uint64_t> ParseCount(const std::string& option, const std::string& text) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return Status(Errc::kInvalidArgument, option + " '" + text +
                                              "' is not a number: expected an integer 0 to " +
                                              std::to_string(UINT64_MAX));
  }
  return value;
}

// "I/N" with 0 <= I < N.
Result<std::pair<uint64_t, uint64_t>> ParseShard(const std::string& text) {
  const size_t slash = text.find('/');
  auto invalid = [&] {
    return Status(Errc::kInvalidArgument,
                  "--shard '" + text +
                      "' is not a shard: expected I/N with 0 <= I < N (I from 0, as "
                      "JOB_COMPLETION_INDEX and SLURM_ARRAY_TASK_ID count)");
  };
  if (slash == std::string::npos) return invalid();
  Result<uint64_t> index = ParseCount("--shard", text.substr(0, slash));
  Result<uint64_t> count = ParseCount("--shard", text.substr(slash + 1));
  if (!index.ok() || !count.ok() || *count == 0 || *index >= *count) return invalid();
  return std::pair{*index, *count};
}

// The progress line on a terminal: runs, failures by property, seeds/s, ETA.
class ExploreProgress {
 public:
  explicit ExploreProgress(size_t total)
      : enabled_(isatty(STDERR_FILENO) == 1),
        total_(total),
        start_(std::chrono::steady_clock::now()) {}
  ~ExploreProgress() { Clear(); }

  void Update(const sim::Summary& summary, bool force = false) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (!force && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    const double seconds = std::chrono::duration<double>(now - start_).count();
    const double rate = seconds > 0 ? static_cast<double>(summary.runs) / seconds : 0;
    std::string line =
        "[explore] " + std::to_string(summary.runs) + "/" + std::to_string(total_) + " runs, " +
        std::to_string(summary.failed + summary.crashed + summary.errors) + " failed";
    if (!summary.by_property.empty()) {
      line += " (";
      bool first = true;
      for (const auto& [property, count] : summary.by_property) {
        line += (first ? "" : ", ") + property + " " + std::to_string(count);
        first = false;
      }
      line += ")";
    }
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), ", %.1f runs/s", rate);
    line += buffer;
    if (rate > 0 && summary.runs < static_cast<int64_t>(total_)) {
      const auto eta = static_cast<int64_t>(static_cast<double>(total_ - summary.runs) / rate);
      line += ", ETA " + std::to_string(eta / 60) + "m" + std::to_string(eta % 60) + "s";
    }
    const size_t width = line.size();
    if (line.size() < shown_) line.append(shown_ - line.size(), ' ');
    shown_ = width;
    std::fprintf(stderr, "\r%s", line.c_str());
    std::fflush(stderr);
  }

  void Clear() {
    if (!enabled_ || shown_ == 0) return;
    std::fprintf(stderr, "\r%s\r", std::string(shown_, ' ').c_str());
    std::fflush(stderr);
    shown_ = 0;
  }

  double Seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  bool enabled_;
  size_t total_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_{};
  size_t shown_ = 0;
};

// The results file: one write(2) per complete line, so that an interrupted run leaves only
// complete lines behind.
class ResultsWriter {
 public:
  static Result<std::unique_ptr<ResultsWriter>> Open(const std::string& path) {
    auto writer = std::make_unique<ResultsWriter>();
    if (path.empty()) return writer;
    writer->fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (writer->fd_ < 0) {
      return Status(Errc::kIoError, "cannot write " + path + ": " + std::strerror(errno));
    }
    writer->path_ = path;
    return writer;
  }
  ~ResultsWriter() {
    if (fd_ >= 0) close(fd_);
  }
  Status Write(const std::string& line) {
    if (fd_ < 0) return Status::Ok();
    const std::string bytes = line + "\n";
    size_t written = 0;
    while (written < bytes.size()) {
      const ssize_t n = write(fd_, bytes.data() + written, bytes.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        return Status(Errc::kIoError, "cannot write " + path_ + ": " + std::strerror(errno));
      written += static_cast<size_t>(n);
    }
    return Status::Ok();
  }

 private:
  int fd_ = -1;
  std::string path_;
};

struct ExploreSetup {
  sim::ExploreBase base;
  // --releases: the base at each release (sim::ExploreBaseAt), in the order given; else empty.
  std::vector<sim::ExploreBase> at_releases;
  sim::ExploreOptions options;
  std::vector<sim::PolicyPair> policies;
  sim::ResultMeta meta;
};

Result<ExploreSetup> Setup(const ExploreArgs& args) {
  ExploreSetup setup;
  Result<sim::ExploreBase> base = sim::LoadExploreBase(args.base);
  if (!base.ok()) return base.status();
  setup.base = std::move(base).value();
  if (!args.faults_text.empty()) {
    KSIM_ASSIGN_OR_RETURN(setup.options.limits.kinds, sim::ParseFaultKinds(args.faults_text));
  }
  if (args.max_down < -1) return Status(Errc::kInvalidArgument, "--max-down: expected >= 0");
  if (args.fault_budget < 0) return Status(Errc::kInvalidArgument, "--fault-budget: expected >= 0");
  setup.options.limits.max_down = args.max_down;
  setup.options.limits.fault_budget = args.fault_budget;
  if (args.duration_ms < 0) return Status(Errc::kInvalidArgument, "--duration-ms: expected >= 1");
  if (args.duration_ms > 0) setup.options.duration_ms = args.duration_ms;
  setup.options.properties.expectations = args.expect;
  for (const std::string& text : args.bounds) {
    KSIM_ASSIGN_OR_RETURN(sim::MetricBound bound, sim::ParseMetricBound(text));
    setup.options.properties.bounds.push_back(std::move(bound));
  }
  setup.options.determinism_every = args.determinism_every;
  if (!args.policies_text.empty()) {
    KSIM_ASSIGN_OR_RETURN(setup.policies, sim::ParsePolicies(args.policies_text));
  }
  if (!args.releases_text.empty()) {
    Result<std::vector<KafkaRelease>> releases = sim::ParseReleaseList(args.releases_text);
    if (!releases.ok()) {
      return Status(Errc::kInvalidArgument, "--releases: " + releases.status().message());
    }
    for (KafkaRelease release : *releases) {
      KSIM_ASSIGN_OR_RETURN(sim::ExploreBase at, sim::ExploreBaseAt(setup.base, release));
      setup.at_releases.push_back(std::move(at));
    }
  }
  setup.meta.ksim_version = KsimVersion();
  setup.meta.commit = KsimCommit();
  setup.meta.base = std::filesystem::path(args.base).filename().string();
  setup.meta.base_hash = setup.base.hash;
  return setup;
}

std::optional<sim::PolicyPair> PolicyOf(const ExploreSetup& setup, int32_t index) {
  if (index < 0 || static_cast<size_t>(index) >= setup.policies.size()) return std::nullopt;
  return setup.policies[static_cast<size_t>(index)];
}

// The base a task runs: at its release under --releases, else as the file says.
const sim::ExploreBase& BaseOf(const ExploreSetup& setup, int32_t release) {
  if (release < 0 || static_cast<size_t>(release) >= setup.at_releases.size()) return setup.base;
  return setup.at_releases[static_cast<size_t>(release)];
}

// Runs one task in this process and writes its failing scenario; the results line.
std::string RunTask(const ExploreSetup& setup, const ExploreArgs& args, const ExploreTask& task) {
  sim::SeedScenario built;
  sim::ResultLine line;
  line.meta = setup.meta;
  line.result = sim::RunSeed(BaseOf(setup, task.release), task.seed, PolicyOf(setup, task.policy),
                             setup.options, &built);
  if (line.result.verdict != "ok") {
    const std::string path = sim::FailingScenarioPath(args.out_dir, built.document);
    Result<sim::AtomicFile> file = sim::AtomicFile::Create(path);
    if (file.ok() && file->Append(built.document.dump(2) + "\n").ok() && file->Commit().ok()) {
      line.result.scenario_file = path;
    } else {
      std::cerr << "ksim explore: cannot write " << path << "\n";
    }
  }
  return sim::ResultLineJson(line);
}

// A worker died on `task`: its results line, and its scenario (rebuilt here: the schedule is the
// seed's).
std::string CrashLine(const ExploreSetup& setup, const ExploreArgs& args, const ExploreTask& task,
                      const std::string& how, const std::string& last_words) {
  const std::optional<sim::PolicyPair> policy = PolicyOf(setup, task.policy);
  const sim::ExploreBase& base = BaseOf(setup, task.release);
  const sim::SeedScenario built = sim::BuildSeedScenario(base, task.seed, policy, setup.options);
  sim::ResultLine line;
  line.meta = setup.meta;
  line.result.seed = task.seed;
  line.result.kafka_version = base.release;
  if (policy) line.result.policy = policy->Name();
  line.result.verdict = "crash";
  line.result.failures.push_back(sim::MakeFailure(
      "no_crash", "ksim died (" + how + ")" + (last_words.empty() ? "" : ": " + last_words)));
  line.result.actions = built.document.value("actions", nlohmann::ordered_json::array()).size();
  line.result.duration_ms = built.document.value("duration_ms", int64_t{60000});
  const std::string path = sim::FailingScenarioPath(args.out_dir, built.document);
  Result<sim::AtomicFile> file = sim::AtomicFile::Create(path);
  if (file.ok() && file->Append(built.document.dump(2) + "\n").ok() && file->Commit().ok()) {
    line.result.scenario_file = path;
  }
  return sim::ResultLineJson(line);
}

int RunExplore(const ExploreArgs& args) {
  if (args.base.empty()) return BadInput("a base scenario is required: ksim explore BASE.json");
  Result<ExploreSetup> setup = Setup(args);
  if (!setup.ok()) {
    const std::string& message = setup.status().message();
    if (message.starts_with(args.base)) {
      std::cerr << message << "\n";  // the loader's errors name the file
      return 2;
    }
    return BadInput(message);
  }
  if (args.worker) {
    // KSIM_EXPLORE_ABORT_SEED=N makes a worker abort on seed N: how the tests check that a
    // worker's crash is reported as that seed's `crash` line and the search goes on.
    const char* abort_seed = std::getenv("KSIM_EXPLORE_ABORT_SEED");
    return ServeTasks([&](const ExploreTask& task) {
      if (abort_seed != nullptr && std::to_string(task.seed) == abort_seed) {
        std::fputs("ksim explore: KSIM_EXPLORE_ABORT_SEED: aborting\n", stderr);
        std::abort();
      }
      return RunTask(*setup, args, task);
    });
  }

  Result<uint64_t> seeds = ParseCount("--seeds", args.seeds_text);
  if (!seeds.ok()) return BadInput(seeds.status().message());
  Result<uint64_t> first = ParseCount("--first-seed", args.first_seed_text);
  if (!first.ok()) return BadInput(first.status().message());
  if (*seeds > UINT64_MAX - *first) return BadInput("--first-seed + --seeds passes 2^64");
  uint64_t begin = *first;
  uint64_t end = *first + *seeds;
  std::string shard_text = "all seeds";
  if (!args.shard_text.empty()) {
    Result<std::pair<uint64_t, uint64_t>> shard = ParseShard(args.shard_text);
    if (!shard.ok()) return BadInput(shard.status().message());
    const auto [index, count] = *shard;
    using Wide = unsigned __int128;
    begin = *first + static_cast<uint64_t>(Wide(*seeds) * index / count);
    end = *first + static_cast<uint64_t>(Wide(*seeds) * (index + 1) / count);
    shard_text = "shard " + args.shard_text;
  }
  if (args.jobs < 0) return BadInput("--jobs: expected a number of worker processes >= 0");
  if (args.run_timeout_s < 0) return BadInput("--run-timeout: expected seconds >= 0 (0: none)");
  std::error_code error;
  std::filesystem::create_directories(args.out_dir, error);
  if (error) return BadInput("--out " + args.out_dir + ": " + error.message());
  Result<std::unique_ptr<ResultsWriter>> results = ResultsWriter::Open(args.results_path);
  if (!results.ok()) return BadInput(results.status().message());

  // Each seed at each release, under each policy pair (index -1: none given).
  auto indexes = [](size_t count) {
    std::vector<int32_t> all;
    for (size_t i = 0; i < count; ++i) all.push_back(static_cast<int32_t>(i));
    return all.empty() ? std::vector<int32_t>{-1} : all;
  };
  std::vector<ExploreTask> tasks;
  for (uint64_t seed = begin; seed < end; ++seed) {
    for (int32_t release : indexes(setup->at_releases.size())) {
      for (int32_t policy : indexes(setup->policies.size()))
        tasks.push_back({seed, policy, release});
    }
  }
  std::string kinds;
  for (sim::FaultKind kind : setup->options.limits.kinds) {
    kinds += (kinds.empty() ? "" : ",") + std::string(sim::FaultKindName(kind));
  }
  std::cout << "ksim explore " << args.base << ": seeds " << begin << ".." << end << " (exclusive; "
            << shard_text << "), " << tasks.size() << " runs, faults "
            << (kinds.empty() ? "all" : kinds) << ", " << args.jobs << " job(s); ksim "
            << setup->meta.ksim_version << " (" << setup->meta.commit << ")\n";
  std::vector<std::string> also_checked = {"no_crash: ksim completes every run"};
  if (setup->options.determinism_every > 0) {
    also_checked.push_back("determinism: every seed divisible by " +
                           std::to_string(setup->options.determinism_every) +
                           " runs twice with the same trace hash");
  }
  if (setup->at_releases.empty()) {
    std::cout << sim::DerivePromise(setup->base.scenario, setup->options.properties)
                     .Describe(also_checked);
  }
  for (const sim::ExploreBase& at : setup->at_releases) {
    std::cout << "At Kafka " << at.release << ":\n"
              << sim::DerivePromise(at.scenario, setup->options.properties).Describe(also_checked);
  }
  if (!setup->policies.empty()) {
    std::cout << "Each seed runs under " << setup->policies.size()
              << " policy pairs; the promise is derived under each.\n";
  }
  if (!setup->at_releases.empty()) {
    std::cout << "Each seed runs at " << setup->at_releases.size()
              << " Kafka release(s), with the same schedule.\n";
  }
  std::cout << std::flush;

  std::vector<sim::ResultLine> lines;
  ExploreProgress progress(tasks.size());
  Status write_error = Status::Ok();
  sim::Summary running;
  auto record = [&](const std::string& text) {
    Result<sim::ResultLine> parsed = sim::ParseResultLine(text);
    if (!parsed.ok()) {
      std::cerr << "ksim explore: a worker answered something else than a results line: "
                << text.substr(0, 200) << "\n";
      return;
    }
    if (write_error.ok()) write_error = (*results)->Write(text);
    lines.push_back(std::move(parsed).value());
    // The running counts only (the summary is made once at the end).
    const sim::SeedResult& r = lines.back().result;
    ++running.runs;
    if (r.verdict == "ok") ++running.ok;
    if (r.verdict == "fail") ++running.failed;
    if (r.verdict == "crash") ++running.crashed;
    if (r.verdict == "error") ++running.errors;
    std::set<std::string> properties;
    for (const sim::PropertyFailure& f : r.failures) properties.insert(f.property);
    for (const std::string& property : properties) ++running.by_property[property];
    progress.Update(running);
  };
  if (args.jobs == 0) {
    for (const ExploreTask& task : tasks) record(RunTask(*setup, args, task));
  } else {
    std::vector<std::string> argv = args.argv;
    argv.push_back("--worker");
    PoolEvents events;
    events.on_result = [&](const ExploreTask&, const std::string& line) { record(line); };
    events.on_crash = [&](const ExploreTask& task, const std::string& how,
                          const std::string& last_words) {
      record(CrashLine(*setup, args, task, how, last_words));
    };
    const Status pool = RunPool(argv, args.jobs, tasks, events, args.run_timeout_s);
    if (!pool.ok()) return BadInput(pool.message());
  }
  progress.Update(running, /*force=*/true);
  const double seconds = progress.Seconds();
  progress.Clear();
  if (!write_error.ok()) return BadInput(write_error.message());

  const sim::Summary summary = sim::Summarize(lines);
  std::cout << sim::FormatSummary(summary);
  char rate[96];
  std::snprintf(rate, sizeof(rate), "Wall time: %.1f s (%.2f runs/s)\n", seconds,
                seconds > 0 ? static_cast<double>(lines.size()) / seconds : 0.0);
  std::cout << rate;
  if (!args.results_path.empty()) std::cout << "Results: " << args.results_path << "\n";
  if (summary.failed + summary.crashed + summary.errors > 0) {
    std::string shrink_flags = args.expect ? " --expect" : "";
    for (const std::string& bound : args.bounds) shrink_flags += " --bound '" + bound + "'";
    std::cout << "Failing scenarios: " << args.out_dir
              << "/ (replay: ksim run FILE; minimise: ksim shrink FILE" << shrink_flags
              << " --out MIN.json)\n";
  }
  return summary.failed + summary.crashed + summary.errors > 0 ? 1 : 0;
}

int RunMerge(const ExploreArgs& args) {
  auto bad = [](const std::string& message) {
    std::cerr << "ksim explore merge: " << message << "\n";
    return 2;
  };
  if (args.merge_files.empty()) return bad("no results file given: ksim explore merge FILE...");
  // Every complete line of every file, with its file: the versions and bases are compared over
  // all of them (a file whose every seed is also in another still counts), then duplicates go.
  std::vector<std::pair<sim::ResultLine, std::string>> all;
  for (const std::string& file : args.merge_files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return bad("cannot open " + file);
    std::ostringstream text;
    text << in.rdbuf();
    Result<sim::ResultsFile> parsed = sim::ParseResults(text.str(), file);
    if (!parsed.ok()) return bad(parsed.status().message());
    if (parsed->truncated_tail) {
      std::cerr << "ksim explore merge: " << file
                << ": its last line is incomplete (an interrupted run): left out\n";
    }
    for (sim::ResultLine& line : parsed->lines) all.emplace_back(std::move(line), file);
  }
  std::vector<sim::ResultLine> lines;
  if (!args.allow_mixed) {
    for (const auto& [line, file] : all) lines.push_back(line);
    const std::string problem = sim::MixedMetaProblem(lines);
    if (!problem.empty()) {
      return bad(problem +
                 "(merge refuses results of different ksim versions or base scenarios; "
                 "--allow-mixed merges them anyway)");
    }
    lines.clear();
  }
  std::map<std::pair<uint64_t, std::string>, std::string> seen;  // (seed, policy) -> file
  for (auto& [line, file] : all) {
    auto [it, inserted] = seen.try_emplace({line.result.seed, line.result.policy}, file);
    if (!inserted) {
      std::cerr << "ksim explore merge: seed " << line.result.seed
                << (line.result.policy.empty() ? "" : " (" + line.result.policy + ")") << " in "
                << file << " is also in " << it->second << ": the first kept\n";
      continue;
    }
    lines.push_back(std::move(line));
  }
  std::sort(lines.begin(), lines.end(), [](const sim::ResultLine& a, const sim::ResultLine& b) {
    return std::tie(a.result.seed, a.result.policy) < std::tie(b.result.seed, b.result.policy);
  });
  if (!args.merge_results.empty()) {
    Result<sim::AtomicFile> out = sim::AtomicFile::Create(args.merge_results);
    if (!out.ok()) return bad(out.status().message());
    std::string text;
    for (const sim::ResultLine& line : lines) text += sim::ResultLineJson(line) + "\n";
    Status written = out->Append(text);
    if (written.ok()) written = out->Commit();
    if (!written.ok()) return bad("cannot write " + args.merge_results + ": " + written.message());
  }
  std::cout << "Merged " << args.merge_files.size() << " file(s)";
  if (!lines.empty()) {
    std::cout << " of " << lines.front().meta.base << ", ksim " << lines.front().meta.ksim_version
              << " (" << lines.front().meta.commit << ")";
  }
  std::cout << "\n";
  const sim::Summary summary = sim::Summarize(lines);
  std::cout << sim::FormatSummary(summary);
  if (!args.merge_results.empty()) std::cout << "Results: " << args.merge_results << "\n";
  return summary.failed + summary.crashed + summary.errors > 0 ? 1 : 0;
}

}  // namespace

Command AddExplore(CLI::App& app, int argc, char** argv) {
  auto args = std::make_shared<ExploreArgs>();
  args->argv.assign(argv, argv + argc);
  CLI::App* sub = app.add_subcommand(
      "explore",
      "Run a base scenario under swarm-random fault schedules over many seeds and check the "
      "promise of its settings on every run (exit 0 nothing failed, 1 a run failed, 2 bad input)");
  sub->add_option("base", args->base, "Base scenario (JSON): cluster, topics, clients, settings");
  sub->add_option("--seeds", args->seeds_text, "How many seeds (default 100)");
  sub->add_option("--first-seed", args->first_seed_text, "The first seed (default 0)");
  sub->add_option("--shard", args->shard_text,
                  "Run only the I-th of N contiguous slices of the seeds (I/N, I from 0)");
  sub->add_option("--jobs", args->jobs,
                  "Worker processes (default 1; 0: run in this process, no crash isolation)");
  sub->add_option("--run-timeout", args->run_timeout_s,
                  "Kill a worker whose run takes longer than this many seconds of wall time and "
                  "report the seed as a crash (default 600; 0: no limit; needs --jobs >= 1)");
  sub->add_option("--faults", args->faults_text,
                  "Fault kinds to draw from, comma-separated (default: all): crash, restart, "
                  "shutdown, slow, partition, heal, crash_replicas, disk_eio, disk_full, "
                  "disk_corrupt_tail, zk_expire, zk_down, client_crash; administrative actions: "
                  "create_topic, preferred_election");
  sub->add_option("--max-down", args->max_down, "Brokers down at once at most (default: no bound)");
  sub->add_option("--fault-budget", args->fault_budget, "Faults per run at most (default 24)");
  sub->add_option("--duration-ms", args->duration_ms,
                  "Simulated duration of each run before the final phase (default: the base's)");
  sub->add_option("--policies", args->policies_text,
                  "Run every seed under each election/truncation policy pair: all, or a list of "
                  "<election>/<truncation>");
  sub->add_option("--releases", args->releases_text,
                  "Run every seed at each Kafka release (the base's kafka_version set to it): "
                  "all, or a list such as 2.0,2.1");
  sub->add_flag("--expect", args->expect, "Also require the base scenario's own expectations");
  sub->add_option("--bound", args->bounds,
                  "Also require a metric bound, METRIC<=N, METRIC>=N or METRIC=N (repeatable)");
  sub->add_option("--check-determinism-every", args->determinism_every,
                  "Run every seed divisible by N twice and compare trace hashes (default 100; 0 "
                  "never)");
  sub->add_option("--results", args->results_path,
                  "Write one JSON line per run to this file (docs/explore.md, \"Results\")");
  sub->add_option("--out", args->out_dir,
                  "Directory for the failing runs' scenarios (default explore-failures)");
  sub->add_flag("--worker", args->worker)->group("");  // internal: a worker process
  CLI::App* merge = sub->add_subcommand(
      "merge",
      "Merge explore results files (shards) into one summary (exit 0 nothing failed, 1 "
      "a run failed, 2 bad input)");
  merge->add_option("files", args->merge_files, "Results files (JSON Lines)")->required();
  merge->add_option("--results", args->merge_results, "Write the merged results to this file");
  merge->add_flag("--allow-mixed", args->allow_mixed,
                  "Merge results of different ksim versions or base scenarios");
  return [args, merge] { return merge->parsed() ? RunMerge(*args) : RunExplore(*args); };
}

}  // namespace ksim::tools
