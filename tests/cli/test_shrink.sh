#!/usr/bin/env bash
# `ksim shrink`: a known failure (every replica of t-0 losing power at 3 s, among five actions
# that play no part) shrinks to the one action that matters, a shorter run and a smaller
# producer; each step is printed; the minimal scenario is written with a generated description
# and `ksim run` replays it to the printed trace hash and the same failure. A scenario that does
# not fail exits 1; bad input exits 2 without writing the output.
source "$(dirname "$0")/lib.sh" "$@"
DATA="$SRC/tests/cli/data"
KNOWN="$DATA/shrink_known_failure.json"

expect_exit 2 "$KSIM" shrink "$WORK/missing.json" --out "$WORK/min.json"
expect_grep 'missing.json' "$WORK/stderr"
echo '{"ksim": 1, "name": "x", "seed": 1, "actions": [{"at_ms": 5, "do": "explode"}]}' >"$WORK/bad.in.json"
expect_exit 2 "$KSIM" shrink "$WORK/bad.in.json" --out "$WORK/min.json"
expect_grep 'bad.in.json:/actions/0' "$WORK/stderr"
expect_exit 2 "$KSIM" shrink "$KNOWN" --out "$WORK/min.json" --max-runs 0
[ ! -e "$WORK/min.json" ] || fail "bad input wrote the output"

# Without --expect the settings promise nothing about lost_acked (no fsync): nothing fails.
expect_exit 1 "$KSIM" shrink "$KNOWN" --out "$WORK/min.json"
expect_grep 'does not fail' "$WORK/stderr"
[ ! -e "$WORK/min.json" ] || fail "a scenario that does not fail was written"

expect_exit 0 "$KSIM" shrink "$KNOWN" --expect --out "$WORK/min.json"
expect_grep '^step 1: drop actions 0..2: ' "$WORK/stdout"
expect_grep '^Minimal scenario: .*min.json: 1 actions \(from 6\)' "$WORK/stdout"
expect_grep '^  lost_acked expected 0, actual [1-9]' "$WORK/stdout"
actions=$(grep -c '"do":' "$WORK/min.json")
[ "$actions" = 1 ] || fail "$actions actions left, expected 1"
grep -q '"do": "crash_replicas"' "$WORK/min.json" || fail "the action left is not crash_replicas"
duration=$(grep -Eo '"duration_ms": [0-9]+' "$WORK/min.json" | grep -Eo '[0-9]+$')
[ "$duration" -lt 10000 ] || fail "duration_ms $duration not shortened from 10000"
messages=$(grep -Eo '"messages": [0-9]+' "$WORK/min.json" | grep -Eo '[0-9]+$')
[ "$messages" -lt 200 ] || fail "messages $messages not reduced from 200"
expect_grep 'What happens \(scenario time\)' "$WORK/min.json"
want=$(grep -Eo 'trace hash [0-9a-f]{16}' "$WORK/stdout" | grep -Eo '[0-9a-f]{16}$')
cp "$WORK/min.json" "$WORK/min.in.json"
expect_exit 1 "$KSIM" run "$WORK/min.in.json"
expect_grep "hash $want\$" "$WORK/stdout"
expect_grep 'FAILED  lost_acked +expected 0' "$WORK/stdout"

# A candidate that kills ksim is a failure like any other: with the test hook, every candidate
# holding a crash_replicas action aborts; the shrink keeps that one action under the signature
# explore gives a worker's death, and says the minimal scenario has no replay hash.
expect_exit 0 env KSIM_SHRINK_ABORT_ON_ACTION=crash_replicas "$KSIM" shrink "$KNOWN" --out "$WORK/crash.json"
expect_grep '^shrinking .*: no_crash: ksim died \(signal # \(Aborted\)\): shrink test hook: a crash_replicas action' "$WORK/stdout"
expect_grep '^Minimal scenario: .*crash.json: 1 actions \(from 6\)' "$WORK/stdout"
expect_grep 'it kills ksim' "$WORK/stdout"
grep -q '"do": "crash_replicas"' "$WORK/crash.json" || fail "the action left is not crash_replicas"
echo "ok"
