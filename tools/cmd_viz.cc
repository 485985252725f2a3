// `ksim viz ARGS`: runs the viewer, `ksim-viz ARGS` (tools/ksim_viz.cc), from the directory this
// binary is in; its arguments, help and exit codes are the viewer's. The viewer is a program of
// its own so that `ksim` links no window system or OpenGL library: every `ksim` process would
// otherwise load a dozen of them at start (about 2 ms of a 20 ms teaching scenario's run,
// docs/BENCHMARKS.md, twenty-sixth change), and a machine without them (an explore worker's
// image, deploy/README.md) could not start it at all.
//
// Where the viewer was not built (KSIM_VIZ=OFF) or is missing, one line on stderr says so and the
// exit code is 2, as for any input ksim cannot act on (tools/commands.h).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "tools/commands.h"

namespace ksim::tools {
namespace {

// The file `name` next to the running binary (its directory from /proc/self/exe: the binary
// itself, whatever the path or the link it was started through).
std::string SiblingPath(const std::string& name) {
  std::vector<char> path(4096);
  const ssize_t length = readlink("/proc/self/exe", path.data(), path.size() - 1);
  if (length <= 0) return name;  // no /proc: found on the PATH (execvp)
  const std::string self(path.data(), static_cast<size_t>(length));
  const size_t slash = self.rfind('/');
  return (slash == std::string::npos ? std::string() : self.substr(0, slash + 1)) + name;
}

int RunViewer(const std::vector<std::string>& args) {
  const std::string viewer = SiblingPath("ksim-viz");
  std::vector<char*> argv;
  argv.reserve(args.size() + 2);
  argv.push_back(const_cast<char*>(viewer.c_str()));
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::cout.flush();
  execvp(viewer.c_str(), argv.data());  // returns only when it failed (a path: as execv)
  const int error = errno;
  std::cerr << "ksim viz: cannot start the viewer " << viewer << ": " << std::strerror(error)
            << (error == ENOENT ? " (it is built beside ksim, by a build configured with "
                                  "-DKSIM_VIZ=ON, the default)"
                                : "")
            << "\n";
  return 2;
}

}  // namespace

Command AddViz(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "viz",
      "Open the viewer on a scenario (run in process) or on recorded traces; --screenshot "
      "renders one frame to a PNG without a display (exit 0 done, 2 bad input). `ksim viz "
      "--help` for its options");
  // Every argument goes to the viewer as given, --help too: none is parsed here.
  sub->prefix_command();
  sub->set_help_flag();
  sub->allow_extras();
  return [sub] { return RunViewer(sub->remaining()); };
}

}  // namespace ksim::tools
