// The worker processes of `ksim explore --jobs N` (docs/explore.md, "Many cores"): N copies of
// this ksim binary (posix_spawn of /proc/self/exe with the parent's own arguments and --worker),
// each running seed after seed in process, so that nothing is shared between runs of different
// workers and a crash of ksim kills one worker, not the search.
//
// Protocol, one line each way per task: the parent writes "<seed> <policy index> <release
// index>\n" (-1: no policy, no release) to a worker's stdin; the worker answers its results line
// (sim/explore/results.h) on stdout. Its stderr is kept (the last few KiB) to name a crash. A
// worker whose stdout ends with a task outstanding died on it: the pool reports the task with the
// exit status and the last stderr line, and starts a new worker for the tasks left. Closing a
// worker's stdin ends it.
//
// Single-threaded: poll(2) over every worker's pipes. POSIX only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace ksim::tools {

struct ExploreTask {
  uint64_t seed = 0;
  int32_t policy = -1;   // index into the policy list, -1: none
  int32_t release = -1;  // index into the release list (--releases), -1: none
};

struct PoolEvents {
  // A worker answered `task` with `line` (its results line, without the newline).
  std::function<void(const ExploreTask& task, const std::string& line)> on_result;
  // A worker died on `task`: `how` is "signal 6 (Aborted)" or "exit status 3", `stderr_tail` its
  // last stderr line.
  std::function<void(const ExploreTask& task, const std::string& how,
                     const std::string& stderr_tail)>
      on_crash;
};

// Runs `tasks` on `jobs` workers started as `argv` (argv[0] is replaced by /proc/self/exe). A
// worker still on one task after `run_timeout_s` seconds of wall time (0: no limit) is killed and
// the task reported through on_crash ("killed: the run took more than N s ...").
// Errors: a worker that cannot be started (kIoError naming why).
Status RunPool(const std::vector<std::string>& argv, int32_t jobs,
               const std::vector<ExploreTask>& tasks, const PoolEvents& events,
               int64_t run_timeout_s = 0);

// "signal 6 (Aborted)", "exit status 3": how a child process ended (a waitpid status).
std::string ExitText(int status);
// The last non-empty line of `text` (a process's last words on stderr).
std::string LastLine(const std::string& text);

// The worker's side: reads tasks from stdin until it ends, answering each with `run(task)`.
int ServeTasks(const std::function<std::string(const ExploreTask&)>& run);

}  // namespace ksim::tools
