// The `ksim` subcommands. Each file tools/cmd_<name>.cc adds one subcommand to the CLI11 app
// and returns the function that runs it once arguments are parsed. Exit codes: 0 success,
// 1 the run completed but something it checks failed, 2 bad input (arguments, files).
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace ksim::tools {

using Command = std::function<int()>;

Command AddCheck(CLI::App& app);
Command AddDumpLog(CLI::App& app);
// `ksim explore` starts workers with its own arguments (tools/explore_pool.h).
Command AddExplore(CLI::App& app, int argc, char** argv);
Command AddLogAppend(CLI::App& app);
Command AddRun(CLI::App& app);
Command AddShrink(CLI::App& app);
Command AddServe(CLI::App& app);
// `ksim viz` runs the viewer's program, ksim-viz (tools/ksim_viz.cc, built with KSIM_VIZ).
Command AddViz(CLI::App& app);

}  // namespace ksim::tools
