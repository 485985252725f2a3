#include "tools/explore_pool.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <iostream>
#include <memory>
#include <string>

extern char** environ;

namespace ksim::tools {
namespace {

constexpr size_t kStderrKeptBytes = 4096;

struct Worker {
  pid_t pid = -1;
  int in = -1;   // its stdin (we write)
  int out = -1;  // its stdout (we read)
  int err = -1;  // its stderr (we read)
  std::string out_buffer;
  std::string err_tail;
  std::optional<ExploreTask> task;
  std::chrono::steady_clock::time_point task_started;
  bool killed_for_time = false;  // it ran its task past the run timeout
  bool done = false;
};

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

Status Spawn(const std::vector<std::string>& argv, Worker& worker) {
  int in[2];
  int out[2];
  int err[2];
  if (pipe(in) != 0 || pipe(out) != 0 || pipe(err) != 0) {
    return Status(Errc::kIoError, std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) {
    posix_spawn_file_actions_addclose(&actions, fd);
  }
  std::vector<char*> args;
  std::string self = "/proc/self/exe";
  args.push_back(self.data());
  std::vector<std::string> copy(argv.begin() + 1, argv.end());
  for (std::string& arg : copy) args.push_back(arg.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  if (spawned != 0) {
    close(in[1]);
    close(out[0]);
    close(err[0]);
    return Status(Errc::kIoError, std::string("cannot start a worker: ") + std::strerror(spawned));
  }
  // Not inherited by the next worker. Reads never block: a poll round may hold an fd number
  // that a worker replaced within the round has been given again (see RunPool).
  fcntl(in[1], F_SETFD, FD_CLOEXEC);
  fcntl(out[0], F_SETFD, FD_CLOEXEC);
  fcntl(err[0], F_SETFD, FD_CLOEXEC);
  fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
  fcntl(err[0], F_SETFL, fcntl(err[0], F_GETFL) | O_NONBLOCK);
  worker = Worker{};
  worker.pid = pid;
  worker.in = in[1];
  worker.out = out[0];
  worker.err = err[0];
  return Status::Ok();
}

bool Send(Worker& worker, const ExploreTask& task) {
  const std::string line = std::to_string(task.seed) + " " + std::to_string(task.policy) + " " +
                           std::to_string(task.release) + "\n";
  size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = write(worker.in, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<size_t>(n);
  }
  worker.task = task;
  worker.task_started = std::chrono::steady_clock::now();
  return true;
}

}  // namespace

Status RunPool(const std::vector<std::string>& argv, int32_t jobs,
               const std::vector<ExploreTask>& tasks, const PoolEvents& events,
               int64_t run_timeout_s) {
  signal(SIGPIPE, SIG_IGN);
  std::deque<ExploreTask> queue(tasks.begin(), tasks.end());
  const size_t count = std::min<size_t>(static_cast<size_t>(std::max(jobs, 1)), queue.size());
  std::vector<Worker> workers(count);
  for (Worker& worker : workers) {
    KSIM_RETURN_IF_ERROR(Spawn(argv, worker));
    if (!queue.empty() && Send(worker, queue.front())) queue.pop_front();
    if (queue.empty() && !worker.task) CloseFd(worker.in);
  }
  int deaths_without_task = 0;  // workers that died before taking a task: a bound on respawns
  auto finish = [&](Worker& worker) {
    CloseFd(worker.in);
    CloseFd(worker.out);
    CloseFd(worker.err);
    int status = 0;
    while (waitpid(worker.pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (worker.task) {
      // It died on its task: report it; another worker takes what is left.
      const std::string how = worker.killed_for_time ? "killed: the run took more than " +
                                                           std::to_string(run_timeout_s) +
                                                           " s of wall time (--run-timeout)"
                                                     : ExitText(status);
      events.on_crash(*worker.task, how, LastLine(worker.err_tail));
      worker.task.reset();
    } else if (!queue.empty() && ++deaths_without_task > 3 * static_cast<int>(workers.size())) {
      return Status(Errc::kIoError, "the workers keep exiting (" + ExitText(status) +
                                        "): " + LastLine(worker.err_tail));
    }
    if (queue.empty()) {
      worker.done = true;
      return Status::Ok();
    }
    KSIM_RETURN_IF_ERROR(Spawn(argv, worker));
    if (Send(worker, queue.front())) queue.pop_front();
    if (queue.empty() && !worker.task) CloseFd(worker.in);
    return Status::Ok();
  };
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<std::pair<size_t, bool>> owners;  // worker index, is stdout
    for (size_t i = 0; i < workers.size(); ++i) {
      if (workers[i].done) continue;
      if (workers[i].out >= 0) {
        fds.push_back({workers[i].out, POLLIN, 0});
        owners.emplace_back(i, true);
      }
      if (workers[i].err >= 0) {
        fds.push_back({workers[i].err, POLLIN, 0});
        owners.emplace_back(i, false);
      }
    }
    if (fds.empty()) break;
    // A worker past the run timeout is killed; its stdout then ends and `finish` reports it.
    int wait_ms = -1;
    if (run_timeout_s > 0) {
      const auto now = std::chrono::steady_clock::now();
      for (Worker& worker : workers) {
        if (worker.done || !worker.task || worker.killed_for_time) continue;
        const auto deadline = worker.task_started + std::chrono::seconds(run_timeout_s);
        if (now >= deadline) {
          worker.killed_for_time = true;
          kill(worker.pid, SIGKILL);
          continue;
        }
        const int64_t left_ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
        wait_ms =
            wait_ms < 0 ? static_cast<int>(left_ms) : std::min(wait_ms, static_cast<int>(left_ms));
      }
    }
    if (poll(fds.data(), fds.size(), wait_ms) < 0) {
      if (errno == EINTR) continue;
      return Status(Errc::kIoError, std::string("poll: ") + std::strerror(errno));
    }
    for (size_t f = 0; f < fds.size(); ++f) {
      if (fds[f].revents == 0) continue;
      Worker& worker = workers[owners[f].first];
      char buffer[65536];
      const int fd = owners[f].second ? worker.out : worker.err;
      // Closed, or the worker died earlier in this round and its replacement has other pipes.
      if (fd < 0 || fd != fds[f].fd) continue;
      const ssize_t n = read(fd, buffer, sizeof(buffer));
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (!owners[f].second) {
        if (n <= 0) {
          CloseFd(worker.err);
          continue;
        }
        worker.err_tail.append(buffer, static_cast<size_t>(n));
        if (worker.err_tail.size() > kStderrKeptBytes) {
          worker.err_tail.erase(0, worker.err_tail.size() - kStderrKeptBytes);
        }
        std::cerr.write(buffer, n);
        continue;
      }
      if (n <= 0) {
        // Drain what stderr still holds so that the crash's last words are known.
        while (worker.err >= 0) {
          const ssize_t e = read(worker.err, buffer, sizeof(buffer));
          if (e <= 0) break;
          worker.err_tail.append(buffer, static_cast<size_t>(e));
        }
        KSIM_RETURN_IF_ERROR(finish(worker));
        continue;
      }
      worker.out_buffer.append(buffer, static_cast<size_t>(n));
      size_t newline;
      while ((newline = worker.out_buffer.find('\n')) != std::string::npos) {
        std::string line = worker.out_buffer.substr(0, newline);
        worker.out_buffer.erase(0, newline + 1);
        if (!worker.task) continue;  // nothing asked: ignore
        const ExploreTask task = *worker.task;
        worker.task.reset();
        events.on_result(task, line);
        if (!queue.empty() && Send(worker, queue.front())) {
          queue.pop_front();
        } else if (queue.empty()) {
          CloseFd(worker.in);  // it ends at EOF
        }
      }
    }
  }
  return Status::Ok();
}

std::string ExitText(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  return "status " + std::to_string(status);
}

std::string LastLine(const std::string& text) {
  size_t end = text.size();
  while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r')) --end;
  const size_t start = text.rfind('\n', end == 0 ? 0 : end - 1);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1));
}

int ServeTasks(const std::function<std::string(const ExploreTask&)>& run) {
  std::string line;
  while (std::getline(std::cin, line)) {
    ExploreTask task;
    unsigned long long seed = 0;
    int policy = -1;
    int release = -1;
    if (std::sscanf(line.c_str(), "%llu %d %d", &seed, &policy, &release) != 3) return 2;
    task.seed = seed;
    task.policy = policy;
    task.release = release;
    const std::string answer = run(task) + "\n";
    std::fwrite(answer.data(), 1, answer.size(), stdout);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace ksim::tools
