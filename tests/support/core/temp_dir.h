// A fresh directory per test on the real file system, removed afterwards. Lives under
// $KSIM_TEST_TMPDIR (set by CTest to the build tree) or /tmp.
#pragma once

#include <string>

namespace ksim::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace ksim::testing
