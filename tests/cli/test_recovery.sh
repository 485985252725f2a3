#!/usr/bin/env bash
# Crash recovery on a real disk: a torn tail is cut at the last whole batch, a writer killed with
# SIGKILL loses nothing it had appended, and appends continue where the valid log ends.
source "$(dirname "$0")/lib.sh" "$@"

# 1. Torn tail: cut the last batch in the middle.
expect_exit 0 "$KSIM" log-append --dir "$WORK/a" --topic t --partition 0 --count 50 --batch-records 5
log="$WORK/a/t-0/00000000000000000000.log"
size=$(stat -c %s "$log")
truncate -s $((size - 37)) "$log"
expect_exit 2 "$KSIM" dump-log --files "$log"
expect_grep 'incomplete batch at position [0-9]+' "$WORK/stderr"
expect_exit 0 "$KSIM" log-append --dir "$WORK/a" --topic t --partition 0 --count 5 --batch-records 5
expect_grep '^recovered .*t-0: cut [0-9]+ bytes' "$WORK/stdout"
expect_grep '^opened .* at log end offset 45$' "$WORK/stdout"
expect_grep '^offsets 45\.\.49 ' "$WORK/stdout"
expect_exit 0 "$KSIM" dump-log --files "$WORK/a/t-0" --print-data-log
expect_grep '^\| offset: 44 .* payload: record-44 ' "$WORK/stdout"
expect_grep '^\| offset: 49 .* payload: record-49 ' "$WORK/stdout"

# 2. A writer killed mid-run: its index is left preallocated and its last write may be torn.
"$KSIM" log-append --dir "$WORK/k" --topic t --partition 0 --count 100000000 --value-bytes 200 \
  --batch-records 7 --segment-bytes 1048576 >"$WORK/writer.out" 2>&1 &
writer=$!
for _ in $(seq 1 200); do
  [ "$(ls "$WORK/k/t-0" 2>/dev/null | grep -c '\.log$')" -ge 3 ] && break
  sleep 0.05
done
kill -9 "$writer"
wait "$writer" || true
reported=$(grep -Eo '^offsets [0-9]+\.\.[0-9]+' "$WORK/writer.out" | tail -n 1 | sed 's/.*\.\.//')
[ -n "$reported" ] || reported=-1

expect_exit 0 "$KSIM" log-append --dir "$WORK/k" --topic t --partition 0 --count 1
leo=$(sed -n 's/^opened .* at log end offset \([0-9]*\)$/\1/p' "$WORK/stdout")
[ -n "$leo" ] || fail "no log end offset in: $(cat "$WORK/stdout")"
[ "$leo" -gt "$reported" ] || fail "records the writer appended were lost: it reported offset $reported, log end offset $leo"
expect_exit 0 "$KSIM" dump-log --files "$WORK/k/t-0" --print-data-log --json
python3 - "$WORK/stdout" "$leo" <<'PY'
import json, sys
dump = json.load(open(sys.argv[1]))
leo = int(sys.argv[2])
offsets = []
for f in dump:
    if f["kind"] != "log":
        continue
    for b in f["batches"]:
        assert b["isvalid"]
        for r in b["records"]:
            offsets.append(r["offset"])
            if r["offset"] < leo:
                assert r["payload"].startswith(f"record-{r['offset']} "), r
assert offsets == list(range(leo + 1)), "offsets not contiguous from 0 to the LEO"
print("recovered", leo, "records intact")
PY
