#include "tools/allocator.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#ifdef KSIM_HAVE_MIMALLOC
#include <mimalloc.h>
#include <sys/mman.h>
#endif

namespace ksim::tools {

#ifdef KSIM_HAVE_MIMALLOC
namespace {

bool huge_page_arena = false;  // TuneAllocator gave mimalloc one

// The arena: address space reserved, not committed (the kernel gives a page when it is first
// touched). 128 MiB, not more: on this project's virtual machines a huge page the host has not
// backed yet is dear to touch first, and a run that took hundreds of MiB of them paid more in
// zeroing than their TLB reach saved (the 10,000-partition run with a 4 GiB arena: 0.98 s of
// system time instead of 0.27 s; with 128 MiB, 0.17 s; docs/BENCHMARKS.md, seventeenth change). A
// heap that outgrows it goes on in mimalloc's own segments, on 4 KiB pages. Aligned to 64 MiB, a
// multiple of mimalloc's arena blocks and of the 2 MiB huge page.
constexpr size_t kArenaBytes = size_t{128} << 20;
constexpr size_t kArenaAlign = size_t{64} << 20;

// Marks for huge pages the rest of the mapping that holds `block` (a block mimalloc handed out):
// the segment the process started in, in which mimalloc goes on allocating until it is full, is
// a mapping of mimalloc's own from before main. Its pages touched so far stay as they are. Found
// in /proc/self/maps, not from mimalloc's internal layout.
void AdviseMappingOf(const void* block) {
  std::ifstream maps("/proc/self/maps");
  const auto address = reinterpret_cast<uintptr_t>(block);
  std::string line;
  while (std::getline(maps, line)) {  // "begin-end perms offset dev inode path", hex bounds
    unsigned long begin = 0;
    unsigned long end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &begin, &end) != 2) return;
    if (begin <= address && address < end) {
      (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
      return;
    }
  }
}

}  // namespace
#endif

void TuneAllocator() {
#ifdef KSIM_HAVE_MIMALLOC
  // Asked for only: on a virtual machine whose balloon driver reports free memory to the host (as
  // this project's do, in 2 MiB blocks), a huge page is nearly always such a block, which the host
  // backs again on first touch. The 1,000-partition run (60 MiB) started after a few seconds of
  // idle took 0.47-0.77 s with huge pages against 0.29-0.34 s on 4 KiB pages, though runs back to
  // back were 9-12% faster with them (docs/BENCHMARKS.md, twenty-second change).
  const char* asked = std::getenv("KSIM_HUGE_PAGES");
  if (asked == nullptr || std::string(asked) != "1") return;
  // mimalloc read MIMALLOC_LARGE_OS_PAGES when the process started, before main: setting its
  // option here would come too late. An arena of our own, marked for huge pages, does the same:
  // mimalloc takes its segments from an arena it was given before asking the OS.
  if (std::getenv("MIMALLOC_LARGE_OS_PAGES") != nullptr) return;  // the user's choice
  void* reserved = mmap(nullptr, kArenaBytes + kArenaAlign, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (reserved == MAP_FAILED) return;
  const auto address = reinterpret_cast<uintptr_t>(reserved);
  void* start = reinterpret_cast<void*>((address + kArenaAlign - 1) & ~(kArenaAlign - 1));
  if (madvise(start, kArenaBytes, MADV_HUGEPAGE) != 0) {
    munmap(reserved, kArenaBytes + kArenaAlign);
    return;  // no transparent huge pages on this kernel
  }
  // Committed (an anonymous mapping is usable as it is: mimalloc then never decommits it, which
  // would give the pages back only for the next touch to fault them in again) and zero.
  if (!mi_manage_os_memory(start, kArenaBytes, /*is_committed=*/true, /*is_large=*/false,
                           /*is_zero=*/true, /*numa_node=*/-1)) {
    munmap(reserved, kArenaBytes + kArenaAlign);
    return;
  }
  huge_page_arena = true;
  void* block = mi_malloc(1);
  AdviseMappingOf(block);
  mi_free(block);
#endif
}

std::string KsimAllocator() {
#ifdef KSIM_HAVE_MIMALLOC
  const int version = mi_version();  // 209 for 2.0.9
  std::string name = "mimalloc " + std::to_string(version / 100) + "." +
                     std::to_string(version / 10 % 10) + "." + std::to_string(version % 10);
  if (huge_page_arena) name += ", huge-page arena";
  return name;
#else
  return "glibc malloc";
#endif
}

}  // namespace ksim::tools
