// `ksim check SCENARIO.json...`: validates scenario files without running them
// (sim/scenario/loader.h; the format in docs/scenarios.md). For each file prints
// "ok: <name>: N actions, M variants" on stdout, or every error found on stderr, one per line
// ("file:line:column: ..." for JSON syntax, "file:/json/pointer: ..." otherwise). A valid file's
// warnings (what is valid but cannot work as written, e.g. a kafka-topics.sh --create whose
// replication factor exceeds the broker count) go to stderr as "warning: file:/json/pointer:
// ..." and do not change the exit code. Exit 0 when every file is valid, 2 otherwise (bad input,
// as every ksim command).
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "sim/scenario/loader.h"
#include "tools/commands.h"

namespace ksim::tools {
namespace {

int RunCheck(const std::vector<std::string>& files) {
  int exit_code = 0;
  for (const std::string& file : files) {
    Result<sim::Scenario> scenario = sim::LoadScenario(file);
    if (!scenario.ok()) {
      const Status& status = scenario.status();
      // Loader errors already start with the file; I/O errors name it in their message.
      std::cerr << status.message() << "\n";
      exit_code = 2;
      continue;
    }
    for (const std::string& warning : scenario->warnings) {
      std::cerr << "warning: " << warning << "\n";
    }
    std::cout << "ok: " << scenario->name << ": " << scenario->actions.size()
              << (scenario->actions.size() == 1 ? " action, " : " actions, ")
              << scenario->variants.size()
              << (scenario->variants.size() == 1 ? " variant" : " variants") << "\n";
  }
  return exit_code;
}

}  // namespace

Command AddCheck(CLI::App& app) {
  auto files = std::make_shared<std::vector<std::string>>();
  CLI::App* sub = app.add_subcommand(
      "check", "Validate scenario files without running them (exit 2 if any is invalid)");
  sub->add_option("scenarios", *files, "Scenario files (JSON, docs/scenarios.md)")->required();
  return [files] { return RunCheck(*files); };
}

}  // namespace ksim::tools
