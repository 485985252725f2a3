# Shared helpers for tests/cli/*.sh (sourced, not a test itself: it has no test_ prefix).
# Each test gets: $KSIM (the built binary), $SRC (the source tree), a fresh $WORK directory.
set -euo pipefail
KSIM=$1
SRC=$2
WORK=$(mktemp -d "${PWD}/cli-XXXXXX")
trap 'rm -rf "$WORK"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_exit CODE COMMAND...: runs COMMAND, fails unless it exits with CODE; keeps its stderr
# in $WORK/stderr and stdout in $WORK/stdout.
expect_exit() {
  local want=$1
  shift
  set +e
  "$@" >"$WORK/stdout" 2>"$WORK/stderr"
  local got=$?
  set -e
  [ "$got" = "$want" ] || fail "'$*' exited $got, expected $want; stderr: $(cat "$WORK/stderr")"
}

# expect_grep PATTERN FILE: fails unless FILE contains a line matching PATTERN (extended regex).
expect_grep() {
  grep -Eq -- "$1" "$2" || fail "no line matching '$1' in $2: $(head -c 2000 "$2")"
}
