#!/usr/bin/env bash
# `ksim run`: the report of the base and every variant, exit 0 when every expectation holds, 1
# when one fails (or a golden matrix differs), 2 on bad input with a message naming what is wrong
# and no output file written; --report's JSON shape (DESIGN), --trace's file per variant,
# --check-determinism, --matrix with --write-golden / --golden.
source "$(dirname "$0")/lib.sh" "$@"
DATA="$SRC/tests/cli/data"

# no_outputs: nothing but the inputs the test wrote in $WORK (no report, trace or temporary file).
no_outputs() {
  local extra
  extra=$(cd "$WORK" && ls -A | grep -Ev '^(stdout|stderr|.*\.in\.json)$' || true)
  [ -z "$extra" ] || fail "output files left after bad input: $extra"
}

expect_exit 0 "$KSIM" run --help
expect_grep '--check-determinism' "$WORK/stdout"
expect_grep '--all-variants' "$WORK/stdout"

# ---- Bad input: exit 2, a message naming the file or the argument, no output file.
expect_exit 2 "$KSIM" run
expect_exit 2 "$KSIM" run "$WORK/missing.json" --report "$WORK/r.json" --trace "$WORK/t.jsonl"
expect_grep 'missing.json' "$WORK/stderr"
no_outputs

expect_exit 2 "$KSIM" run "$DATA/run_small.json" --seed abc --report "$WORK/r.json"
expect_grep "--seed 'abc' is not a seed: expected an integer 0 to 18446744073709551615" "$WORK/stderr"
expect_exit 2 "$KSIM" run "$DATA/run_small.json" --seed=-1 --report "$WORK/r.json"
expect_grep "--seed '-1' is not a seed" "$WORK/stderr"
expect_exit 2 "$KSIM" run "$DATA/run_small.json" --seed 18446744073709551616
expect_grep "is not a seed" "$WORK/stderr"
no_outputs

expect_exit 2 "$KSIM" run "$DATA/run_small.json" --variant acks1 --report "$WORK/r.json"
expect_grep 'unknown variant "acks1" in .*run_small.json: did you mean "acks-1"\? valid variants are base, acks-1$' "$WORK/stderr"
expect_exit 2 "$KSIM" run "$DATA/run_small.json" --variant zzzzzzzz
expect_grep 'unknown variant "zzzzzzzz" in .*run_small.json: valid variants are base, acks-1$' "$WORK/stderr"
expect_exit 2 "$KSIM" run "$DATA/run_small.json" --variant base --all-variants
expect_exit 2 "$KSIM" run "$DATA/run_small.json" --trace-level verbose --trace "$WORK/t.jsonl"
expect_grep "--trace-level 'verbose' is not a trace level: expected state or messages" "$WORK/stderr"
expect_exit 2 "$KSIM" run "$DATA/run_small.json" --golden "$WORK/g.json"
expect_exit 2 "$KSIM" run "$DATA/run_small.json" --matrix --trace "$WORK/t.jsonl"
expect_exit 2 "$KSIM" run "$DATA/run_small.json" --report "$WORK/no-such-dir/r.json"
expect_grep 'cannot write .*no-such-dir/r.json' "$WORK/stderr"
no_outputs

# An output over the scenario itself is refused; the scenario is untouched.
cp "$DATA/run_fails.json" "$WORK/self.in.json"
expect_exit 2 "$KSIM" run "$WORK/self.in.json" --report "$WORK/self.in.json"
expect_grep 'refusing to write over the scenario file .*self.in.json' "$WORK/stderr"
expect_exit 2 "$KSIM" run "$WORK/self.in.json" --trace "$WORK/self.in.json"
cmp -s "$DATA/run_fails.json" "$WORK/self.in.json" || fail "the scenario file was overwritten"

# A scenario that does not load: the loader's errors (file:line:column), exit 2.
printf '{\n  "ksim": 1,\n  "name": "x",,\n}\n' >"$WORK/syntax.in.json"
expect_exit 2 "$KSIM" run "$WORK/syntax.in.json" --report "$WORK/r.json" --trace "$WORK/t.jsonl"
expect_grep 'syntax.in.json:3:15: syntax error' "$WORK/stderr"
# A policy the loader knows but the controller refuses: bad input before anything runs.
python3 - "$DATA/run_small.json" "$WORK/longest.in.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["variants"]["longest"] = {"policy": {"election": "longest-log"}}
json.dump(doc, open(sys.argv[2], "w"))
PY
expect_exit 2 "$KSIM" run "$WORK/longest.in.json" --report "$WORK/r.json" --trace "$WORK/t.jsonl"
expect_grep 'longest.in.json:/variants/longest/policy/election: election policy longest-log is not supported' "$WORK/stderr"
no_outputs

# ---- A run: the base and every variant by default; exit 0.
expect_exit 0 "$KSIM" run "$DATA/run_small.json" --report "$WORK/report.json" --trace "$WORK/t.jsonl"
expect_grep '^== cli-run-small / base \(seed 3\): OK ==$' "$WORK/stdout"
expect_grep '^== cli-run-small / acks-1 \(seed 3\): OK ==$' "$WORK/stdout"
expect_grep 'kafka-topics.sh --describe --zookeeper hadoop01:2181 --topic t$' "$WORK/stdout"
expect_grep '^ +\| .*Partition: 0' "$WORK/stdout"
expect_grep '^  sent +20$' "$WORK/stdout"
expect_grep '^  ok      sent +expected 20, actual 20$' "$WORK/stdout"
expect_grep '^  ok      lost_acked +expected <= 20, actual [0-9]+$' "$WORK/stdout"
expect_grep '^Summary:$' "$WORK/stdout"
expect_grep '^  ok      acks-1$' "$WORK/stdout"
expect_grep "^Trace: $WORK/t.acks-1.jsonl$" "$WORK/stdout"
[ -s "$WORK/t.base.jsonl" ] || fail "no trace t.base.jsonl"
[ -s "$WORK/t.acks-1.jsonl" ] || fail "no trace t.acks-1.jsonl"
[ ! -e "$WORK/t.jsonl" ] || fail "with several variants, --trace FILE itself is not written"
python3 - "$WORK/report.json" "$WORK/t.base.jsonl" "$WORK/t.acks-1.jsonl" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
assert list(report) == ["scenario", "seed", "variants"], list(report)
assert report["scenario"] == "cli-run-small" and report["seed"] == 3, report
assert list(report["variants"]) == ["base", "acks-1"], list(report["variants"])
for name, variant in report["variants"].items():
    assert list(variant)[:3] == ["metrics", "expectations", "ok"], list(variant)
    assert variant["ok"] is True, (name, variant["expectations"])
    assert variant["metrics"]["sent"] == 20, variant["metrics"]
    for metric in ["acked", "lost_acked", "duplicated", "unavailable_ms", "elections"]:
        assert isinstance(variant["metrics"][metric], int), (name, metric)
    for e in variant["expectations"]:
        assert list(e) == ["metric", "expected", "actual", "ok"], e
    assert len(variant["trace_hash"]) == 16, variant["trace_hash"]
assert report["variants"]["base"]["expectations"][0] == \
    {"metric": "sent", "expected": 20, "actual": 20, "ok": True}
assert report["variants"]["acks-1"]["expectations"][1]["expected"] == {"max": 20}
for path, variant in zip(sys.argv[2:], ["base", "acks-1"]):
    lines = open(path).read().splitlines()
    header, verdict = json.loads(lines[0]), json.loads(lines[-1])
    assert header["ksim_trace"] == 1 and header["variant"] == variant and header["seed"] == 3, header
    assert verdict["ev"] == "verdict" and verdict["ok"] is True, verdict
    assert len(lines) == report["variants"][variant]["trace_lines"], (len(lines), variant)
PY

# One variant, another seed: the trace is FILE itself.
expect_exit 0 "$KSIM" run "$DATA/run_small.json" --variant acks-1 --seed 9 \
  --trace "$WORK/one.jsonl" --trace-level messages
expect_grep '^== cli-run-small / acks-1 \(seed 9\): OK ==$' "$WORK/stdout"
! grep -q '^== cli-run-small / base' "$WORK/stdout" || fail "--variant acks-1 ran the base too"
head -n 1 "$WORK/one.jsonl" | grep -q '"variant":"acks-1","seed":9,"level":"messages"' ||
  fail "trace header: $(head -n 1 "$WORK/one.jsonl")"
grep -q '"ev":"msg_' "$WORK/one.jsonl" || fail "--trace-level messages wrote no message event"
# The hash printed is XXH64 of the file's bytes, as xxHash's own command computes it
# (docs/trace-format.md, "Hash").
printed=$(sed -n 's/^Run: .*, hash \([0-9a-f]\{16\}\)$/\1/p' "$WORK/stdout")
[ -n "$printed" ] || fail "no trace hash in the Run line: $(grep '^Run:' "$WORK/stdout")"
xxhsum_says=$(xxhsum -H1 "$WORK/one.jsonl" | cut -d' ' -f1)
[ "$printed" = "$xxhsum_says" ] || fail "ksim printed hash $printed, xxhsum -H1 says $xxhsum_says"

# --check-determinism: each variant twice, same hashes.
expect_exit 0 "$KSIM" run "$DATA/run_small.json" --check-determinism
expect_grep '^Determinism: every variant ran twice with the same trace hash$' "$WORK/stdout"

# ---- A failed expectation: exit 1, the FAILED line, the report still written (ok false).
expect_exit 1 "$KSIM" run "$DATA/run_fails.json" --report "$WORK/fails.json"
expect_grep '^== cli-run-fails / base \(seed 1\): FAILED \(1 of 1 expectations not met\) ==$' "$WORK/stdout"
expect_grep '^  FAILED  sent  expected 5, actual 4$' "$WORK/stdout"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["variants"]["base"]
assert r["ok"] is False and r["expectations"] == [{"metric": "sent", "expected": 5, "actual": 4, "ok": False}], r
' "$WORK/fails.json"

# ---- The policy matrix: write the golden, compare with it, see a difference.
expect_exit 0 "$KSIM" run "$DATA/run_fails.json" --matrix --write-golden "$WORK/golden.json"
expect_grep '^Policy matrix: cli-run-fails \(seed 1\)$' "$WORK/stdout"
expect_grep '^election +truncation +lost_acked +duplicated +unavailable_ms +elections +replica_divergence$' "$WORK/stdout"
expect_grep '^wait-for-last-isr +leader-epoch( +[0-9]+){5}$' "$WORK/stdout"
! grep -q '^longest-log' "$WORK/stdout" || fail "the matrix has a longest-log row"
expect_exit 0 "$KSIM" run "$DATA/run_fails.json" --matrix --golden "$WORK/golden.json"
expect_grep "^ok: the matrix equals $WORK/golden.json$" "$WORK/stdout"
python3 - "$WORK/golden.json" "$WORK/changed.in.json" <<'PY'
import json, sys
golden = json.load(open(sys.argv[1]))
assert [c["election"] + "/" + c["truncation"] for c in golden["cells"]][:2] == \
    ["clean/high-watermark", "clean/leader-epoch"], golden
golden["cells"][1]["metrics"]["lost_acked"] += 3
json.dump(golden, open(sys.argv[2], "w"))
PY
expect_exit 1 "$KSIM" run "$DATA/run_fails.json" --matrix --golden "$WORK/changed.in.json"
expect_grep '^  clean/leader-epoch: lost_acked [0-9]+ -> [0-9]+$' "$WORK/stdout"
printf '{"scenario": "cli-run-fails", "seed": 1, "cells": [{"election": "clean"}]}' >"$WORK/bad.in.json"
expect_exit 2 "$KSIM" run "$DATA/run_fails.json" --matrix --golden "$WORK/bad.in.json"
expect_grep 'bad.in.json:/cells/0: missing key "truncation"' "$WORK/stderr"

# ---- The matrix across releases: --releases, then the golden's releases by default.
expect_exit 0 "$KSIM" run "$DATA/run_fails.json" --matrix --releases 0.10.0,2.0 \
  --write-golden "$WORK/releases.json"
expect_grep '^kafka_version +election +truncation +lost_acked' "$WORK/stdout"
expect_grep '^2\.0 +wait-for-last-isr +leader-epoch( +[0-9]+){5}$' "$WORK/stdout"
python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))
assert g["kafka_versions"] == ["0.10.0", "2.0"], g
assert len(g["cells"]) == 16 and g["cells"][8]["kafka_version"] == "2.0", g
' "$WORK/releases.json"
expect_exit 0 "$KSIM" run "$DATA/run_fails.json" --matrix --golden "$WORK/releases.json"
expect_grep "^ok: the matrix equals $WORK/releases.json$" "$WORK/stdout"
expect_exit 1 "$KSIM" run "$DATA/run_fails.json" --matrix --releases 0.10.0 \
  --golden "$WORK/releases.json"
expect_grep '^  2\.0/clean/high-watermark: missing' "$WORK/stdout"
expect_exit 2 "$KSIM" run "$DATA/run_fails.json" --matrix --releases 0.9.0
expect_grep '--releases: Kafka "0.9.0" is not a release ksim models' "$WORK/stderr"
expect_exit 2 "$KSIM" run "$DATA/run_fails.json" --releases 2.0
echo "ok"
