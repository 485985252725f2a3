// `ksim shrink FAILING.json --out MIN.json`: delta debugging of a failing scenario (one `ksim
// explore` wrote, or any) to a minimal one with the same failure signature
// (sim/explore/shrink.h; docs/explore.md, "Shrinking"). Prints each step; writes the minimal
// scenario atomically with a generated description; `ksim run MIN.json` replays it.
//
// Exit codes: 0 the minimal scenario was written, 1 the scenario does not fail (or not with
// --signature), 2 bad input (a scenario that does not load, an output that cannot be written).
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "sim/explore/shrink.h"
#include "sim/kernel/atomic_file.h"
#include "sim/kernel/trace.h"
#include "sim/runner/runner.h"
#include "sim/scenario/loader.h"
#include "tools/commands.h"
#include "tools/explore_pool.h"

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

// One candidate in a child process (fork): a candidate that aborts ksim is the failure
// `no_crash: ksim died (signal 6 (Aborted)): <its last stderr line>`, as `ksim explore` names a
// worker's death, so that such a seed shrinks like any other.
std::optional<std::vector<sim::PropertyFailure>> RunApart(const std::string& text,
                                                          const std::string& file,
                                                          const sim::PropertyOptions& properties,
                                                          std::string* error) {
  int out[2];
  int err[2];
  if (pipe(out) != 0 || pipe(err) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    return std::nullopt;
  }
  std::cout << std::flush;
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    *error = std::string("fork: ") + std::strerror(errno);
    return std::nullopt;
  }
  if (pid == 0) {
    close(out[0]);
    close(err[0]);
    dup2(err[1], STDERR_FILENO);
    // KSIM_SHRINK_ABORT_ON_ACTION=<do>: a candidate with such an action aborts, as a bug in ksim
    // would; how tests/cli/test_shrink.sh checks that a crash shrinks (read only by the child).
    if (const char* kind = std::getenv("KSIM_SHRINK_ABORT_ON_ACTION");
        kind != nullptr &&
        text.find("\"do\": \"" + std::string(kind) + "\"") != std::string::npos) {
      std::fprintf(stderr, "shrink test hook: a %s action\n", kind);
      std::abort();
    }
    nlohmann::ordered_json answer = nlohmann::ordered_json::object();
    Result<sim::Scenario> parsed = sim::ParseScenario(text, file);
    Result<sim::RunResult> run = parsed.ok() ? sim::RunScenario(*parsed, sim::RunOptions{})
                                             : Result<sim::RunResult>(parsed.status());
    if (!run.ok()) {
      answer["error"] = run.status().message();
    } else {
      answer["failures"] = nlohmann::ordered_json::array();
      const sim::Promise promise = sim::DerivePromise(*parsed, properties);
      for (const sim::PropertyFailure& f : sim::CheckProperties(promise, *parsed, *run)) {
        answer["failures"].push_back({{"property", f.property}, {"cause", f.cause}});
      }
    }
    const std::string bytes = answer.dump();
    size_t written = 0;
    while (written < bytes.size()) {
      const ssize_t n = write(out[1], bytes.data() + written, bytes.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      written += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(out[1]);
  close(err[1]);
  std::string answer_text;
  std::string stderr_text;
  // Both pipes at once: a child that writes much to stderr must not block on a full pipe.
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (pollfd& p : fds) {
      if (p.fd < 0 || p.revents == 0) continue;
      char buffer[65536];
      const ssize_t n = read(p.fd, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close(p.fd);
        p.fd = -1;
        --open_fds;
        continue;
      }
      (p.fd == fds[0].fd ? answer_text : stderr_text).append(buffer, static_cast<size_t>(n));
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || answer_text.empty()) {
    const std::string last_words = LastLine(stderr_text);
    return std::vector<sim::PropertyFailure>{sim::MakeFailure(
        "no_crash",
        "ksim died (" + ExitText(status) + ")" + (last_words.empty() ? "" : ": " + last_words))};
  }
  const nlohmann::ordered_json answer =
      nlohmann::ordered_json::parse(answer_text, nullptr, /*allow_exceptions=*/false);
  if (answer.is_discarded() || !answer.is_object()) {
    *error = "a candidate's run answered something that is not JSON";
    return std::nullopt;
  }
  if (answer.contains("error")) {
    *error = answer.value("error", std::string());
    return std::nullopt;
  }
  std::vector<sim::PropertyFailure> failures;
  for (const auto& f : answer.value("failures", nlohmann::ordered_json::array())) {
    failures.push_back(
        sim::MakeFailure(f.value("property", std::string()), f.value("cause", std::string())));
  }
  return failures;
}

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
  options.run_apart = [&args, &options](const std::string& text, std::string* error) {
    return RunApart(text, args.file, options.properties, error);
  };
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
            << "Replay: ksim run " << args.out;
  if (result->trace_hash != 0) {
    std::cout << " (trace hash " << sim::Xxh64::Hex(result->trace_hash) << ")\n";
  } else {
    std::cout << " (it kills ksim: run it under a debugger or the ASan build)\n";
  }
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
