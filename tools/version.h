// The ksim version and the git commit it was built from (generated at build time by
// cmake/KsimVersion.cmake): `ksim --version`, and every `ksim explore` results line.
#pragma once

#include <string>

namespace ksim::tools {

std::string KsimVersion();  // "0.1"
std::string KsimCommit();   // 12 hex digits, "-dirty" when built from uncommitted changes

}  // namespace ksim::tools
