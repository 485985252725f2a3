// ksim: one binary, subcommands in the style of Kafka's own tools (README.md, "The command
// line"; tools/commands.h for the exit codes; docs/scenarios.md for run and check).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>
#include <string>

#include "tools/allocator.h"
#include "tools/commands.h"
#include "tools/version.h"

int main(int argc, char** argv) {
  ksim::tools::TuneAllocator();
  CLI::App app{"ksim: a deterministic Kafka cluster simulator over a real storage engine"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ksim " + ksim::tools::KsimVersion() + " (" +
                                        ksim::tools::KsimCommit() + ", " +
                                        ksim::tools::KsimAllocator() + ")");

  std::map<std::string, ksim::tools::Command> commands;
  auto add = [&](ksim::tools::Command command) {
    commands.emplace(app.get_subcommands({}).back()->get_name(), std::move(command));
  };
  add(ksim::tools::AddCheck(app));
  add(ksim::tools::AddDumpLog(app));
  add(ksim::tools::AddExplore(app, argc, argv));
  add(ksim::tools::AddLogAppend(app));
  add(ksim::tools::AddRun(app));
  add(ksim::tools::AddShrink(app));
  add(ksim::tools::AddServe(app));
  add(ksim::tools::AddViz(app));  // runs the viewer's own binary, ksim-viz

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    // CLI11 returns 0 for --help/--version and 1..n for errors; errors are exit 2
    // (tools/commands.h).
    return code == 0 ? 0 : 2;
  }
  for (CLI::App* sub : app.get_subcommands()) {
    return commands.at(sub->get_name())();
  }
  return 2;
}
