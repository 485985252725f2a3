#include "tests/support/core/temp_dir.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace ksim::testing {

TempDir::TempDir() {
  const char* base = std::getenv("KSIM_TEST_TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/ksim-test-XXXXXX";
  std::filesystem::create_directories(std::filesystem::path(pattern).parent_path());
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed: " + pattern);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace ksim::testing
