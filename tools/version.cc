#include "tools/version.h"

#ifdef KSIM_HAVE_MIMALLOC
#include <mimalloc.h>
#endif

#include "ksim_version.h"

namespace ksim::tools {

std::string KsimVersion() { return KSIM_VERSION; }
std::string KsimCommit() { return KSIM_COMMIT; }

std::string KsimAllocator() {
#ifdef KSIM_HAVE_MIMALLOC
  const int version = mi_version();  // 209 for 2.0.9
  return "mimalloc " + std::to_string(version / 100) + "." + std::to_string(version / 10 % 10) +
         "." + std::to_string(version % 10);
#else
  return "glibc malloc";
#endif
}

}  // namespace ksim::tools
