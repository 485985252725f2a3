#include "tools/version.h"

#include "ksim_version.h"

namespace ksim::tools {

std::string KsimVersion() { return KSIM_VERSION; }
std::string KsimCommit() { return KSIM_COMMIT; }

}  // namespace ksim::tools
