#!/usr/bin/env bash
# Every shipped scenario's every variant gives the trace recorded in scenarios/trace-hashes.txt
# (XXH64 of the `messages`-level trace, and its line count): a refactoring keeps them all, and
# a change that moves one updates the file (scripts/trace_hashes.sh --write) and says why.
source "$(dirname "$0")/lib.sh" "$@"

"$SRC/scripts/trace_hashes.sh" "$KSIM" --check "$SRC/scenarios/trace-hashes.txt" >"$WORK/diff" 2>&1 ||
  fail "trace hashes moved (- recorded, + now):
$(cat "$WORK/diff")"
# The recorded file covers every scenario the library has: a new scenario without its hashes
# fails here too (its lines show as + in the diff above, so this only guards an empty file).
[ "$(wc -l <"$SRC/scenarios/trace-hashes.txt")" -gt 30 ] || fail "scenarios/trace-hashes.txt is short"
