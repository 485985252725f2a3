// How long the first touch of fresh anonymous memory takes, on 2 MiB or 4 KiB pages: the
// measurement behind KSIM_HUGE_PAGES being opt-in (docs/BENCHMARKS.md, twenty-second change).
//
//   cc -O2 bench/first_touch.c -o /tmp/first_touch
//   /tmp/first_touch 60 huge; /tmp/first_touch 60 small; sleep 3; /tmp/first_touch 60 huge
//   /tmp/first_touch 60 populate    (stop 50: the kernel faults them all in one call)
//
// Maps MIB mebibytes (plus 2 MiB to align), advises them MADV_HUGEPAGE or MADV_NOHUGEPAGE, writes
// one byte in every 4 KiB page and prints the time that took; `populate` advises
// MADV_NOHUGEPAGE and has them faulted in with MADV_POPULATE_WRITE (Linux 5.14) instead of the
// writes. Linux only.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

int main(int argc, char** argv) {
  if (argc != 3 || atoi(argv[1]) <= 0 ||
      (strcmp(argv[2], "huge") != 0 && strcmp(argv[2], "small") != 0 &&
       strcmp(argv[2], "populate") != 0)) {
    fprintf(stderr, "usage: first_touch MIB huge|small|populate\n");
    return 2;
  }
  const size_t bytes = (size_t)atoi(argv[1]) << 20;
  const size_t align = (size_t)2 << 20;
  const int huge = strcmp(argv[2], "huge") == 0;
  const int populate = strcmp(argv[2], "populate") == 0;
  char* mapped = mmap(NULL, bytes + align, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapped == MAP_FAILED) {
    perror("first_touch: mmap");
    return 1;
  }
  char* start = (char*)(((unsigned long)mapped + align - 1) & ~(align - 1));
  if (madvise(start, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0) {
    perror("first_touch: madvise");
    return 1;
  }
  struct timespec begin, end;
  clock_gettime(CLOCK_MONOTONIC, &begin);
  if (populate) {
    if (madvise(start, bytes, MADV_POPULATE_WRITE) != 0) {
      perror("first_touch: madvise(MADV_POPULATE_WRITE)");
      return 1;
    }
  } else {
    for (size_t at = 0; at < bytes; at += 4096) start[at] = 1;
  }
  clock_gettime(CLOCK_MONOTONIC, &end);
  printf("%zu MiB on %s pages%s: %.1f ms\n", bytes >> 20, huge ? "2 MiB" : "4 KiB",
         populate ? ", populated" : "",
         (double)(end.tv_sec - begin.tv_sec) * 1e3 + (double)(end.tv_nsec - begin.tv_nsec) / 1e6);
  munmap(mapped, bytes + align);
  return 0;
}
