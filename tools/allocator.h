// The malloc `ksim` runs on, and how it is set up before a command runs (docs/BENCHMARKS.md,
// "Huge pages for the heap; profile-guided optimization").
#pragma once

#include <string>

namespace ksim::tools {

// What the binary allocates with: "mimalloc 2.0.9" (the optimized builds), "mimalloc 2.0.9,
// huge-page arena" when KSIM_HUGE_PAGES=1 gave it one, or "glibc malloc" (the sanitized builds).
std::string KsimAllocator();

// Called first in main. With mimalloc and KSIM_HUGE_PAGES=1 in the environment: the first 128 MiB
// of its segments (and the one it started in) are asked for as transparent huge pages
// (madvise(MADV_HUGEPAGE)), unless the environment sets MIMALLOC_LARGE_OS_PAGES itself. A run
// touches its heap once, spread over tens of MiB: on 4 KiB pages that is a page fault per page and
// a TLB miss on most accesses to a cold object. Not by default: where free memory goes back to a
// virtual machine's host, a huge page costs far more the first time than it saves (allocator.cc).
// Nothing a run computes depends on it (docs/DESIGN.md, "Determinism rules": no pointer values in
// any order). A no-op without mimalloc, or on a kernel built without transparent huge pages (whose
// madvise refuses the advice); where the THP setting is `never` the arena is made but stays on
// 4 KiB pages.
void TuneAllocator();

}  // namespace ksim::tools
