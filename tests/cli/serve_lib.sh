# Helpers for the tests that run real Kafka clients against `ksim serve` (sourced after lib.sh;
# not a test itself). Every process they start is recorded and ended by the EXIT trap, also when
# a test fails; every wait is bounded.
#
#   need TOOL             the tool must be installed: in CI (CI=true) its absence fails the test,
#                         elsewhere it skips it (exit 77, ctest's SKIP_RETURN_CODE)
#   start_serve SCENARIO [ARGS...]
#                         `ksim serve` on free loopback ports (--port-base 0), its trace in
#                         $WORK/served.jsonl, its report in $WORK/report.json; waits until every
#                         broker listens; sets BROKERS ("127.0.0.1:P1,127.0.0.1:P2,...") and PORT1
#   stop_serve [CODE]     Ctrl-C (SIGINT): the final phase and the report; fails unless ksim exits
#                         with CODE (default 0) within 120 s; its stdout in $WORK/serve.out
#   spawn NAME COMMAND... runs COMMAND in the background, output in $WORK/NAME.out / NAME.err
#   wait_for NAME SECONDS waits until the spawned process ends, fails after SECONDS
#   wait_grep PATTERN FILE SECONDS   waits until FILE has a line matching PATTERN
#   wait_grep_count N PATTERN FILE SECONDS   waits until FILE has N lines matching PATTERN
#   metric NAME           a metric of the report's base variant

PIDS=()
SERVE_PID=
cleanup_processes() {
  local pid
  for pid in "${PIDS[@]}" $SERVE_PID; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]}" $SERVE_PID; do
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup_processes EXIT

need() {
  if ! command -v "$1" >/dev/null 2>&1; then
    if [ "${CI:-}" = "true" ]; then fail "$1 is not installed (scripts/bootstrap.sh installs it)"; fi
    echo "SKIP: $1 is not installed (scripts/bootstrap.sh installs it)"
    exit 77
  fi
}

start_serve() {
  local scenario=$1
  shift
  rm -f "$WORK/ports"
  "$KSIM" serve "$scenario" --port-base 0 --ports-file "$WORK/ports" \
    --trace "$WORK/served.jsonl" --report "$WORK/report.json" "$@" \
    >"$WORK/serve.out" 2>"$WORK/serve.err" &
  SERVE_PID=$!
  local i
  for i in $(seq 1 600); do
    [ -s "$WORK/ports" ] && break
    kill -0 "$SERVE_PID" 2>/dev/null || fail "ksim serve exited: $(cat "$WORK/serve.err")"
    sleep 0.1
  done
  [ -s "$WORK/ports" ] || fail "ksim serve did not listen within 60 s: $(cat "$WORK/serve.err")"
  BROKERS=$(awk '{print $2}' "$WORK/ports" | paste -sd, -)
  PORT1=$(awk 'NR == 1 {split($2, a, ":"); print a[2]}' "$WORK/ports")
}

stop_serve() {
  local want=${1:-0}
  kill -INT "$SERVE_PID"
  local i code
  for i in $(seq 1 1200); do
    kill -0 "$SERVE_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$SERVE_PID" 2>/dev/null && fail "ksim serve did not end within 120 s of Ctrl-C"
  set +e
  wait "$SERVE_PID"
  code=$?
  set -e
  SERVE_PID=
  [ "$code" = "$want" ] ||
    fail "ksim serve exited $code, expected $want: $(cat "$WORK/serve.err") $(cat "$WORK/serve.out")"
}

spawn() {
  local name=$1
  shift
  "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  PIDS+=($!)
  eval "PID_$name=$!"
}

wait_for() {
  local pid
  eval "pid=\$PID_$1"
  local i
  for i in $(seq 1 $(($2 * 10))); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null && fail "$1 did not end within $2 s: $(tail -5 "$WORK/$1.err")"
  wait "$pid" || fail "$1 failed: $(tail -5 "$WORK/$1.err")"
}

wait_grep() {
  local i
  for i in $(seq 1 $(($3 * 10))); do
    grep -Eq -- "$1" "$2" 2>/dev/null && return 0
    sleep 0.1
  done
  fail "no line matching '$1' in $2 within $3 s: $(tail -c 2000 "$2")"
}

wait_grep_count() {
  local i
  for i in $(seq 1 $(($4 * 10))); do
    [ "$(grep -Ec -- "$2" "$3" 2>/dev/null)" -ge "$1" ] && return 0
    sleep 0.1
  done
  fail "fewer than $1 lines matching '$2' in $3 within $4 s: $(tail -c 2000 "$3")"
}

# The served variant's metric (SERVE_VARIANT: the --variant given to start_serve, default base).
metric() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["variants"][sys.argv[3]]["metrics"][sys.argv[2]])' \
    "$WORK/report.json" "$1" "${SERVE_VARIANT:-base}"
}
