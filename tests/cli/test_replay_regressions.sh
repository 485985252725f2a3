#!/usr/bin/env bash
# Served runs kept as regressions (scenarios/regressions/*.trace.jsonl: a `ksim serve` trace,
# its real clients' inputs included): `ksim run --replay` must run each to its end and give the
# same trace byte for byte. A bug that only a served run reaches (a run stopped past its
# duration) is pinned this way, without a real client or the wall clock.
source "$(dirname "$0")/lib.sh" "$@"

shopt -s nullglob
traces=("$SRC"/scenarios/regressions/*.trace.jsonl)
[ "${#traces[@]}" -ge 1 ] || fail "no served trace in scenarios/regressions/"
for trace in "${traces[@]}"; do
  expect_exit 0 "$KSIM" run --replay "$trace" --report "$WORK/report.json"
  expect_grep "byte for byte" "$WORK/stdout"
  python3 - "$WORK/report.json" "$trace" <<'PY' || fail "$trace: the replay's report is not ok"
import json, sys
report = json.load(open(sys.argv[1]))
variant = report["variants"]["base"]
sys.exit(0 if variant.get("ok") else 1)
PY
done
echo "ok"
