#!/usr/bin/env bash
# The main job, run by `./dev main`: writes a real Kafka log with ksim's storage engine and
# reads it back the way kafka-dump-log.sh would, then runs the simulated 3-broker cluster story
# (a leader crash, a follower lagging past 10 s, a restart) and shows the key events of its trace.
# (`ksim run` with the scenario library replaces the second part once scenarios exist.)
set -euo pipefail
ksim=$1
story=${2:-}
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
"$ksim" dump-log --files "$dir/enbook-0/$first" --print-data-log | head -n 12 || true  # head closes the pipe early
echo
echo "# its sparse offset index (an entry per 4096 bytes appended)"
"$ksim" dump-log --files "$dir/enbook-0/${first%.log}.index" | head -n 6 || true

[ -n "$story" ] || exit 0
echo
echo "# the simulated cluster: 3 brokers, ZooKeeper, topic frbook (RF 3); broker 1 (the leader)"
echo "# loses power, broker 3 lags 15 s behind, broker 1 restarts (trace: out/demo-cluster/story.jsonl)"
mkdir -p out/demo-cluster
KSIM_KEEP_TRACE=out/demo-cluster/story.jsonl "$story" --gtest_brief=1 >/dev/null
python3 - out/demo-cluster/story.jsonl <<'PY'
import json, sys
shown = {"crash", "restart", "slow", "controller_elected", "leader_elected", "isr_shrink",
         "isr_expand", "truncate", "broker_registered", "verdict"}
for line in open(sys.argv[1]):
    ev = json.loads(line)
    if ev.get("ev") not in shown:
        continue
    rest = {k: v for k, v in ev.items() if k not in ("t_us", "node", "ev")}
    print(f"{ev['t_us'] / 1e6:9.3f}s  {ev['node']:<9} {ev['ev']:<18} {json.dumps(rest)}")
PY
