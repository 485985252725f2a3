#!/usr/bin/env bash
# The main job, run by `./dev main`: a real Kafka log written by ksim's storage engine and read
# back the way kafka-dump-log.sh would, then the delivery-semantics trio: one fault schedule
# (lost produce answers, then a leader crash) under at-most-once, at-least-once and exactly-once
# settings, run by `ksim run` on the simulated cluster, with its report and a side-by-side
# summary. Traces and the JSON report are left in out/demo-semantics/.
set -euo pipefail
ksim=$1
scenario=${2:-scenarios/teaching/delivery-semantics.json}
dir=out/demo-log
rm -rf "$dir"
mkdir -p "$dir"
echo "# ksim log-append: 1000 records of 100 bytes, 10 per batch, segments of 32 KiB"
"$ksim" log-append --dir "$dir" --topic enbook --partition 0 --count 1000 --value-bytes 100 \
  --batch-records 10 --segment-bytes 32768 | tail -n 3
echo
echo "# the partition directory, as Kafka names its files"
ls "$dir/enbook-0"
echo
first=$(ls "$dir/enbook-0" | grep '\.log$' | head -n 1)
echo "# ksim dump-log --files $dir/enbook-0/$first --print-data-log (first batches)"
"$ksim" dump-log --files "$dir/enbook-0/$first" --print-data-log | head -n 6 || true  # head closes the pipe early
echo

out=out/demo-semantics
rm -rf "$out"
mkdir -p "$out"
echo "# ksim run $scenario --all-variants (traces: $out/trace.<variant>.jsonl)"
echo
status=0
"$ksim" run "$scenario" --all-variants --trace "$out/trace.jsonl" --report "$out/report.json" ||
  status=$?
[ -f "$out/report.json" ] || exit "$status"
echo
echo "# side by side"
python3 - "$out/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
cols = ["sent", "acked", "lost_acked", "lost_unacked", "log_duplicates", "duplicated",
        "undelivered", "reordered"]
print(f"{'variant':<14}" + "".join(f"{c:>{len(c) + 2}}" for c in cols) + "  expectations")
for name, v in report["variants"].items():
    m = v["metrics"]
    verdict = "met" if v["ok"] else "NOT MET"
    print(f"{name:<14}" + "".join(f"{m.get(c, ''):>{len(c) + 2}}" for c in cols) + f"  {verdict}")
PY
echo
# The viewer on the recorded traces, compared at the end of the run, rendered headless (the
# window: ksim viz without --screenshot).
if "$ksim" viz --help >/dev/null 2>&1; then
  echo "# ksim viz $out/trace.*.jsonl --screenshot $out/viewer.png"
  "$ksim" viz "$out"/trace.*.jsonl --screenshot "$out/viewer.png" || status=$?
  echo "# interactively: $ksim viz $scenario"
fi
exit "$status"
