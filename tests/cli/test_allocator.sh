#!/usr/bin/env bash
# The malloc ksim runs on (tools/allocator.h), as `ksim --version` names it. The optimized builds
# run on mimalloc, on 4 KiB pages unless KSIM_HUGE_PAGES=1 asks for an arena on transparent huge
# pages (and the environment does not set MIMALLOC_LARGE_OS_PAGES); the sanitized builds on their
# own malloc, which the variables do not touch. Either way a run's trace is the same: the
# allocator never reaches it.
source "$(dirname "$0")/lib.sh" "$@"

expect_exit 0 env -u MIMALLOC_LARGE_OS_PAGES -u KSIM_HUGE_PAGES "$KSIM" --version
if grep -q 'mimalloc' "$WORK/stdout"; then
  expect_grep '^ksim .*, mimalloc [0-9.]+\)$' "$WORK/stdout"
  # madvise(MADV_HUGEPAGE) is refused only by a kernel built without transparent huge pages.
  if [ -e /sys/kernel/mm/transparent_hugepage/enabled ]; then
    expect_exit 0 env -u MIMALLOC_LARGE_OS_PAGES KSIM_HUGE_PAGES=1 "$KSIM" --version
    expect_grep '^ksim .*, mimalloc [0-9.]+, huge-page arena\)$' "$WORK/stdout"
  fi
  expect_exit 0 env MIMALLOC_LARGE_OS_PAGES=0 KSIM_HUGE_PAGES=1 "$KSIM" --version
  expect_grep '^ksim .*, mimalloc [0-9.]+\)$' "$WORK/stdout"
  expect_exit 0 env -u MIMALLOC_LARGE_OS_PAGES KSIM_HUGE_PAGES=yes "$KSIM" --version
  expect_grep '^ksim .*, mimalloc [0-9.]+\)$' "$WORK/stdout"
else
  expect_grep '^ksim .*, glibc malloc\)$' "$WORK/stdout"
fi

scenario=$SRC/scenarios/teaching/acks-leader-crash.json
expect_exit 0 env -u MIMALLOC_LARGE_OS_PAGES KSIM_HUGE_PAGES=1 "$KSIM" run "$scenario" \
  --variant acks-1 --report "$WORK/arena.json"
expect_exit 0 env -u MIMALLOC_LARGE_OS_PAGES -u KSIM_HUGE_PAGES "$KSIM" run "$scenario" --variant acks-1 \
  --report "$WORK/plain.json"
arena=$(grep -Eo '"trace_hash": ?"[0-9a-f]{16}"' "$WORK/arena.json" | tr -d ' ')
plain=$(grep -Eo '"trace_hash": ?"[0-9a-f]{16}"' "$WORK/plain.json" | tr -d ' ')
[ -n "$arena" ] || fail "no trace_hash in the report"
[ "$arena" = "$plain" ] || fail "trace hash $arena with the arena, $plain without"
