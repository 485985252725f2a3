// Always-on assertions for programmer errors (TigerBeetle style: dense, never compiled out).
// A failed check prints the condition and location and aborts. Expected failures are Status
// values instead (core/base/status.h).
#pragma once

namespace ksim::detail {
[[noreturn]] void CheckFailed(const char* condition, const char* file, int line,
                              const char* message);
}  // namespace ksim::detail

#define KSIM_CHECK(cond)                                               \
  do {                                                                 \
    if (!(cond)) [[unlikely]]                                          \
      ::ksim::detail::CheckFailed(#cond, __FILE__, __LINE__, nullptr); \
  } while (0)

#define KSIM_CHECK_MSG(cond, msg)                                    \
  do {                                                               \
    if (!(cond)) [[unlikely]]                                        \
      ::ksim::detail::CheckFailed(#cond, __FILE__, __LINE__, (msg)); \
  } while (0)
