// The Env contract: one GoogleTest suite, written once, that every Env implementation must pass
// (PosixEnv in tests/core/env/posix_env_test.cc, the virtual disk in
// tests/sim/world/virtual_disk_test.cc). It pins down what the storage engine relies on: open
// modes, append/pread semantics at and past the end of a file, truncate, rename-replaces, sorted
// listings, mkdir -p, mapped files that preallocate and resize like Kafka's indexes, zero-copy and
// copying sends, and the helpers in core/env/env.h.
//
// An implementation's test file registers itself with
//   INSTANTIATE_ENV_CONTRACT(Posix, [] { return MakePosixEnvUnderTest(); });
// where the factory returns a fresh Env and an existing, empty root directory for each test.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "core/env/env.h"

namespace ksim::testing {

// What a factory hands the contract for one test: an Env, an empty directory in it, and
// anything that must live as long as the test (a TempDir on the real disk).
struct EnvUnderTest {
  std::unique_ptr<Env> env;
  std::string root;
  std::shared_ptr<void> keep_alive;
};

using EnvFactory = std::function<EnvUnderTest()>;

class EnvContractTest : public ::testing::TestWithParam<EnvFactory> {
 protected:
  void SetUp() override;

  Env& env() { return *under_test_.env; }
  // `name` inside the test's root directory.
  std::string Path(const std::string& name) const { return JoinPath(under_test_.root, name); }
  // Creates (or empties) `name` and writes `contents` to it.
  void WriteFile(const std::string& name, std::string_view contents);
  // The whole of `name` as a string; fails the test when it cannot be read.
  std::string ReadFile(const std::string& name);

 private:
  EnvUnderTest under_test_;
};

// Defined in env_contract.cc; referencing it links the contract's tests into the executable.
bool EnvContractLinked();

}  // namespace ksim::testing

// Runs every contract test against the Env that the factory (the second argument: a callable
// returning EnvUnderTest; commas allowed) makes. `name` prefixes the tests:
// Posix/EnvContractTest.AppendThenReadBack/0. Use at namespace scope.
#define INSTANTIATE_ENV_CONTRACT(name, ...)                            \
  [[maybe_unused]] static const bool ksim_env_contract_linked_##name = \
      ::ksim::testing::EnvContractLinked();                            \
  using ::ksim::testing::EnvContractTest;                              \
  INSTANTIATE_TEST_SUITE_P(name, EnvContractTest,                      \
                           ::testing::Values(::ksim::testing::EnvFactory(__VA_ARGS__)))
