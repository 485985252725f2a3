#!/usr/bin/env bash
# `ksim explore`: swarm fault schedules over a seed range, the promise printed, one JSON line per
# seed, failing seeds written as scenarios that `ksim run` replays to the same trace hash,
# failures grouped by signature; the same seeds give the same lines with --jobs 1 and 2; --shard
# slices are disjoint and cover the range; `explore merge` combines them, keeps the complete lines
# of an interrupted file and refuses mixed versions; bad input exits 2 with what would be valid.
source "$(dirname "$0")/lib.sh" "$@"
DATA="$SRC/tests/cli/data"
SAFE="$DATA/explore_small.json"
UNSAFE="$DATA/explore_small_unsafe.json"

# A results file without the fields that name where it was written (the failing scenario path).
strip() { sed -E 's/,"scenario":"[^"]*"//' "$1"; }

# ---- Bad input: exit 2, the file or argument named, what would be valid.
expect_exit 2 "$KSIM" explore "$WORK/missing.json" --seeds 2 --results "$WORK/r.jsonl"
expect_grep 'missing.json' "$WORK/stderr"
[ ! -e "$WORK/r.jsonl" ] || fail "a results file was written for a base that does not load"
echo '{"ksim": 1, "name": "x", "seed": 1, "clusterr": {}}' >"$WORK/bad.in.json"
expect_exit 2 "$KSIM" explore "$WORK/bad.in.json" --seeds 2
expect_grep 'bad.in.json:/clusterr' "$WORK/stderr"
expect_exit 2 "$KSIM" explore "$SAFE" --faults crash,bogus --seeds 2
expect_grep 'unknown fault kind "bogus"; valid kinds: crash,' "$WORK/stderr"
expect_exit 2 "$KSIM" explore "$SAFE" --shard 3/2
expect_grep "--shard '3/2' is not a shard: expected I/N with 0 <= I < N" "$WORK/stderr"
expect_exit 2 "$KSIM" explore "$SAFE" --shard 1/0
expect_exit 2 "$KSIM" explore "$SAFE" --seeds x
expect_grep "--seeds 'x' is not a number" "$WORK/stderr"
expect_exit 2 "$KSIM" explore "$SAFE" --policies foo
expect_grep 'unknown policy pair "foo"; valid: all, clean/high-watermark' "$WORK/stderr"
expect_exit 2 "$KSIM" explore "$SAFE" --bound 'lost<=0'
expect_grep 'unknown metric "lost"' "$WORK/stderr"
echo '{"a": 1}' >"$WORK/notours.jsonl"
expect_exit 2 "$KSIM" explore merge "$WORK/notours.jsonl"
expect_grep 'notours.jsonl:1: not a ksim explore results line' "$WORK/stderr"
expect_exit 2 "$KSIM" explore merge "$WORK/absent.jsonl"
expect_grep 'absent.jsonl' "$WORK/stderr"

# ---- The promise of the safe base's settings, printed; every seed a line.
set +e
"$KSIM" explore "$SAFE" --seeds 6 --jobs 1 --results "$WORK/j1.jsonl" --out "$WORK/f1" \
  >"$WORK/j1.out" 2>"$WORK/j1.err"
rc=$?
set -e
[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "explore exited $rc: $(cat "$WORK/j1.err")"
expect_grep '^  acked_kept: no acknowledged record lost' "$WORK/j1.out"
expect_grep 'because acks=all \(p1\), min.insync.replicas >= 2, clean elections' "$WORK/j1.out"
expect_grep '^  no_log_duplicates: ' "$WORK/j1.out"
expect_grep '^  engine_invariants: ' "$WORK/j1.out"
expect_grep '^  liveness: ' "$WORK/j1.out"
expect_grep '^Runs: 6 \(seeds 0..5\)' "$WORK/j1.out"
[ "$(wc -l <"$WORK/j1.jsonl")" = 6 ] || fail "6 seeds, $(wc -l <"$WORK/j1.jsonl") lines"
for seed in 0 1 2 3 4 5; do
  grep -q "\"seed\":$seed," "$WORK/j1.jsonl" || fail "no line for seed $seed"
done
expect_grep '^\{"ksim_explore":1,"ksim":"[^"]+","commit":"[^"]+","base":"explore_small.json","base_hash":"[0-9a-f]{16}","seed":0,' "$WORK/j1.jsonl"

# The same seeds in two worker processes: the same lines (order aside).
set +e
"$KSIM" explore "$SAFE" --seeds 6 --jobs 2 --results "$WORK/j2.jsonl" --out "$WORK/f2" \
  >"$WORK/j2.out" 2>&1
set -e
diff <(strip "$WORK/j1.jsonl" | sort) <(strip "$WORK/j2.jsonl" | sort) ||
  fail "--jobs 2 gave other results than --jobs 1"

# ---- A worker that dies on a seed (KSIM_EXPLORE_ABORT_SEED): that seed is a `crash` line and
# the search goes on with a new worker. A hang (the pool reading a replaced worker's pipe) ends
# in the timeout's exit 124.
set +e
KSIM_EXPLORE_ABORT_SEED=2 timeout 300 "$KSIM" explore "$SAFE" --seeds 4 --jobs 1 \
  --results "$WORK/c.jsonl" --out "$WORK/cf" >"$WORK/c.out" 2>&1
code=$?
set -e
[ "$code" = 1 ] || fail "a worker's crash: exit $code, expected 1: $(tail -5 "$WORK/c.out")"
[ "$(wc -l <"$WORK/c.jsonl")" = 4 ] || fail "4 seeds with one crash, $(wc -l <"$WORK/c.jsonl") lines"
grep '"seed":2,' "$WORK/c.jsonl" | grep -q '"verdict":"crash"' ||
  fail "seed 2 is not a crash line: $(grep '"seed":2,' "$WORK/c.jsonl")"
[ "$(grep -c '"verdict":"crash"' "$WORK/c.jsonl")" = 1 ] || fail "more than seed 2 crashed"

# ---- The unsafe base under a bound: failures found, grouped, written, replayed exactly.
expect_exit 1 "$KSIM" explore "$UNSAFE" --seeds 6 --faults crash,restart,crash_replicas \
  --bound 'lost_acked<=0' --results "$WORK/u.jsonl" --out "$WORK/uf"
expect_grep '^Failures by signature' "$WORK/stdout"
expect_grep '^  [0-9]+ x bound: lost_acked' "$WORK/stdout"
failing=$(ls "$WORK/uf"/*.json | head -n 2)
[ -n "$failing" ] || fail "no failing scenario written"
for scenario in $failing; do
  want=$(grep -F "\"scenario\":\"$scenario\"" "$WORK/u.jsonl" | grep -Eo '"trace_hash":"[0-9a-f]{16}"')
  [ -n "$want" ] || fail "no results line names $scenario"
  set +e
  "$KSIM" run "$scenario" --report "$WORK/replay.json" >/dev/null 2>&1
  set -e
  got=$(grep -Eo '"trace_hash": ?"[0-9a-f]{16}"' "$WORK/replay.json" | head -n 1 | tr -d ' ')
  [ "$want" = "$got" ] || fail "$scenario replays to $got, explore saw $want"
done

# ---- --policies: every seed under each pair, with the same schedule; a table per pair.
expect_exit 1 "$KSIM" explore "$UNSAFE" --seeds 2 --faults crash,restart,crash_replicas \
  --policies clean/leader-epoch,unclean/high-watermark --bound 'lost_acked<=0' \
  --results "$WORK/p.jsonl" --out "$WORK/pf"
[ "$(wc -l <"$WORK/p.jsonl")" = 4 ] || fail "2 seeds x 2 policy pairs, $(wc -l <"$WORK/p.jsonl") lines"
expect_grep '^Per policy pair \(election/truncation\):' "$WORK/stdout"
expect_grep '^  clean/leader-epoch: [0-9] of 2 failed' "$WORK/stdout"
expect_grep '^  unclean/high-watermark: [0-9] of 2 failed' "$WORK/stdout"
for pair in clean/leader-epoch unclean/high-watermark; do
  actions=$(grep -F "\"policy\":\"$pair\"" "$WORK/p.jsonl" | grep '"seed":0,' | grep -Eo '"actions":[0-9]+')
  [ -n "$actions" ] || fail "no line for seed 0 under $pair"
  echo "$actions" >>"$WORK/p.actions"
done
[ "$(sort -u "$WORK/p.actions" | wc -l)" = 1 ] || fail "the pairs ran different schedules: $(cat "$WORK/p.actions")"

# ---- --releases: every seed at each release, with the same schedule; the promise printed at
# each; a table per release; a failing seed's scenario carries its release and replays.
expect_exit 1 "$KSIM" explore "$UNSAFE" --seeds 2 --faults crash,restart,crash_replicas \
  --releases 2.0,2.1 --bound 'lost_acked<=0' --jobs 2 --results "$WORK/rel.jsonl" --out "$WORK/relf"
[ "$(wc -l <"$WORK/rel.jsonl")" = 4 ] || fail "2 seeds x 2 releases, $(wc -l <"$WORK/rel.jsonl") lines"
expect_grep '^At Kafka 2.0:' "$WORK/stdout"
expect_grep '^At Kafka 2.1:' "$WORK/stdout"
expect_grep '^Per release:' "$WORK/stdout"
expect_grep '^  2.0: [0-9] of 2 failed' "$WORK/stdout"
expect_grep '^  2.1: [0-9] of 2 failed' "$WORK/stdout"
for release in 2.0 2.1; do
  actions=$(grep -F "\"kafka_version\":\"$release\"" "$WORK/rel.jsonl" | grep '"seed":1,' | grep -Eo '"actions":[0-9]+')
  [ -n "$actions" ] || fail "no line for seed 1 at $release"
  echo "$actions" >>"$WORK/rel.actions"
done
[ "$(sort -u "$WORK/rel.actions" | wc -l)" = 1 ] || fail "the releases ran different schedules: $(cat "$WORK/rel.actions")"
scenario=$(ls "$WORK/relf"/*-2.0-seed-*.json 2>/dev/null | head -n 1)
if [ -n "$scenario" ]; then
  grep -q '"kafka_version": "2.0"' "$scenario" || fail "$scenario does not run at 2.0"
  want=$(grep -F "\"scenario\":\"$scenario\"" "$WORK/rel.jsonl" | grep -Eo '"trace_hash":"[0-9a-f]{16}"')
  set +e
  "$KSIM" run "$scenario" --report "$WORK/relreplay.json" >/dev/null 2>&1
  set -e
  got=$(grep -Eo '"trace_hash": ?"[0-9a-f]{16}"' "$WORK/relreplay.json" | head -n 1 | tr -d ' ')
  [ "$want" = "$got" ] || fail "$scenario replays to $got, explore saw $want"
fi
expect_exit 2 "$KSIM" explore "$SAFE" --releases 2.5 --seeds 1
expect_grep '--releases: Kafka "2.5" is not a release ksim models; it models 0.8.2, ' "$WORK/stderr"
expect_exit 2 "$KSIM" explore "$SAFE" --releases 0.8.2,2.1 --seeds 1 --results "$WORK/refused.jsonl"
expect_grep 'explore_small.json at kafka_version 0.8.2: .*enable.idempotence' "$WORK/stderr"
[ ! -e "$WORK/refused.jsonl" ] || fail "a results file was written for a release the base refuses"

# ---- Shards: disjoint, covering the range; merged, one summary.
for i in 0 1 2; do
  set +e
  "$KSIM" explore "$SAFE" --seeds 6 --shard "$i/3" --results "$WORK/s$i.jsonl" --out "$WORK/sf" \
    >/dev/null 2>&1
  set -e
done
cat "$WORK"/s[012].jsonl | grep -Eo '"seed":[0-9]+' | sort | uniq -d >"$WORK/dups"
[ ! -s "$WORK/dups" ] || fail "shards overlap: $(cat "$WORK/dups")"
diff <(strip "$WORK/j1.jsonl" | sort) <(cat "$WORK"/s[012].jsonl | sed -E 's/,"scenario":"[^"]*"//' | sort) ||
  fail "the three shards differ from the whole range"
set +e
"$KSIM" explore merge "$WORK"/s[012].jsonl --results "$WORK/merged.jsonl" >"$WORK/merge.out" 2>&1
set -e
expect_grep '^Merged 3 file\(s\) of explore_small.json' "$WORK/merge.out"
expect_grep '^Runs: 6 \(seeds 0..5\)' "$WORK/merge.out"
[ "$(wc -l <"$WORK/merged.jsonl")" = 6 ] || fail "the merged file has $(wc -l <"$WORK/merged.jsonl") lines"

# An interrupted shard: its complete lines merge, the torn last one is left out.
head -c $(($(stat -c %s "$WORK/j1.jsonl") - 20)) "$WORK/j1.jsonl" >"$WORK/torn.jsonl"
set +e
"$KSIM" explore merge "$WORK/torn.jsonl" >"$WORK/torn.out" 2>"$WORK/torn.err"
set -e
expect_grep 'torn.jsonl: its last line is incomplete \(an interrupted run\): left out' "$WORK/torn.err"
expect_grep '^Runs: 5 ' "$WORK/torn.out"

# Mixed versions: refused unless --allow-mixed, even when every seed of one file is in the other.
sed -E 's/"ksim":"[^"]*"/"ksim":"0.0-other"/' "$WORK/j1.jsonl" >"$WORK/other.jsonl"
expect_exit 2 "$KSIM" explore merge "$WORK/j1.jsonl" "$WORK/other.jsonl"
expect_grep 'ksim versions differ' "$WORK/stderr"
set +e
"$KSIM" explore merge "$WORK/j1.jsonl" "$WORK/other.jsonl" --allow-mixed >"$WORK/mixed.out" 2>&1
rc=$?
set -e
[ "$rc" != 2 ] || fail "--allow-mixed still refused: $(cat "$WORK/mixed.out")"
echo "ok"
