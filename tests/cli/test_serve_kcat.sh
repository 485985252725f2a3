#!/usr/bin/env bash
# kcat (librdkafka 2.0.2, Debian's `kcat` package) against `ksim serve` on the 3-broker walkthrough
# scenario: the README's walkthrough (-L lists brokers and topics, -P sends `hello java`, -C -o
# beginning -e prints it); the versions kcat negotiates with a 0.10.0 broker; 200 keyed records
# produced and consumed back, each once and in order per partition; a group of two kcat members
# sharing the two partitions and rebalancing when one leaves; garbage, an oversized frame and a
# client leaving mid-request beside a producer whose records all arrive; the history checker's
# verdict in the report; and `ksim run --replay` of the served trace, byte for byte.
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/serve_lib.sh"
need kcat

start_serve "$SRC/scenarios/serve/walkthrough.json" --speed 2

# ---- The walkthrough.
timeout 30 kcat -b "$BROKERS" -L >"$WORK/list.out" 2>&1 || fail "kcat -L: $(cat "$WORK/list.out")"
expect_grep '^ 3 brokers:' "$WORK/list.out"
expect_grep "broker 1 at 127\.0\.0\.1:$PORT1" "$WORK/list.out"
expect_grep 'topic "enbook" with 2 partitions:' "$WORK/list.out"
echo "hello java" | timeout 30 kcat -b "$BROKERS" -P -t enbook || fail "kcat -P"
timeout 30 kcat -b "$BROKERS" -C -t enbook -o beginning -e >"$WORK/hello.out" 2>/dev/null ||
  fail "kcat -C"
[ "$(cat "$WORK/hello.out")" = "hello java" ] || fail "kcat -C printed: $(cat "$WORK/hello.out")"

# ---- The brokers answer as Kafka 0.10.0.1 (the walkthrough's release): ApiVersions v3 refused
# with no versions, then v0 with 0.10.0.1's 19 APIs (6 + 19 * 6 = 120 bytes); kcat then uses
# Metadata v1, and Produce v2 with message sets (librdkafka's MsgVer1).
echo "negotiated" | timeout 30 kcat -b "$BROKERS" -P -t enbook -X debug=protocol,feature \
  >"$WORK/protocol.out" 2>&1 || fail "kcat -P -X debug: $(cat "$WORK/protocol.out")"
expect_grep 'ApiVersionRequest v3 failed due to UNSUPPORTED_VERSION: retrying with v0' \
  "$WORK/protocol.out"
expect_grep 'Received ApiVersionResponse \(v0, 120 bytes' "$WORK/protocol.out"
expect_grep 'Sent MetadataRequest \(v1,' "$WORK/protocol.out"
expect_grep 'Feature MsgVer1: Produce \(2\.\.2\) supported by broker' "$WORK/protocol.out"
expect_grep 'Sent ProduceRequest \(v2,' "$WORK/protocol.out"

# ---- 200 keyed records (4 keys), acks=all, then read back: each once, in order per partition.
for i in $(seq 0 199); do echo "k$((i % 4)):kcat-$i"; done >"$WORK/records.in"
timeout 60 kcat -b "$BROKERS" -P -t enbook -K: -X acks=all <"$WORK/records.in" || fail "kcat -P 200"
timeout 60 kcat -b "$BROKERS" -C -t enbook -o beginning -e -f '%p %o %s\n' >"$WORK/all.out" \
  2>/dev/null || fail "kcat -C 200"
python3 - "$WORK/all.out" <<'EOF' || fail "records not each once and in order per partition"
import sys
seen, last = {}, {}
for line in open(sys.argv[1]):
    partition, offset, value = line.rstrip("\n").split(" ", 2)
    if not value.startswith("kcat-"):
        continue
    n = int(value[5:])
    assert value not in seen, f"{value} twice"
    seen[value] = partition
    assert last.get(partition, -1) < n, f"{value} out of order in partition {partition}"
    last[partition] = n
assert len(seen) == 200, f"{len(seen)} of 200 records"
EOF

# ---- A consumer group of two kcat members shares the two partitions, then one leaves.
spawn member1 timeout 90 kcat -b "$BROKERS" -G kcat-group enbook -o beginning
wait_grep 'assigned: enbook \[0\], enbook \[1\]' "$WORK/member1.err" 30
spawn member2 timeout 90 kcat -b "$BROKERS" -G kcat-group enbook -o beginning
wait_grep 'assigned: enbook \[[01]\]$' "$WORK/member2.err" 40
wait_grep 'assigned: enbook \[[01]\]$' "$WORK/member1.err" 40
kill -TERM "$PID_member2"  # kcat leaves the group on SIGTERM
wait_grep_count 2 'assigned: enbook \[0\], enbook \[1\]' "$WORK/member1.err" 40  # both back
kill -TERM "$PID_member1"

# ---- Bad input beside a well-behaved producer.
for i in $(seq 0 49); do echo "bad-$i"; sleep 0.02; done |
  timeout 60 kcat -b "$BROKERS" -P -t enbook -X acks=all >"$WORK/producer.out" 2>&1 &
producer=$!
PIDS+=($producer)
exec 3<>"/dev/tcp/127.0.0.1/$PORT1"
printf 'not a kafka frame at all' >&3  # a size of 1852797984: more than 100 MiB, closed
exec 3>&-
exec 4<>"/dev/tcp/127.0.0.1/$PORT1"
printf '\x00\x00\x00\x0a\x00\x64\x00\x00\x00\x00\x00\x01\xff\xff' >&4  # api key 100
exec 4>&-
exec 5<>"/dev/tcp/127.0.0.1/$PORT1"
printf '\x00\x00\x00\x40\x00\x03\x00\x04' >&5  # half a Metadata request, then gone
exec 5>&-
wait "$producer" || fail "the producer beside the bad clients failed: $(cat "$WORK/producer.out")"

stop_serve 0
expect_grep '^Served: ' "$WORK/serve.out"
grep -q '"ev":"ext_error"' "$WORK/served.jsonl" || fail "no ext_error traced"
[ "$(grep -c '"ev":"ext_error"' "$WORK/served.jsonl")" -ge 2 ] || fail "bad frames not traced"
[ "$(metric lost_acked)" = 0 ] || fail "lost_acked $(metric lost_acked)"
[ "$(metric log_duplicates)" = 0 ] || fail "log_duplicates $(metric log_duplicates)"
[ "$(metric acked)" -ge 251 ] || fail "acked $(metric acked): hello java, 200 and 50 records"
python3 - "$WORK/served.jsonl" <<'EOF' || fail "the bad-input producer's records are not all in the final log"
import json, sys
verdict = json.loads(open(sys.argv[1]).read().splitlines()[-1])
values = {v for p in verdict["audit"] for v in p["values"]}
missing = [f"bad-{i}" for i in range(50) if f"bad-{i}" not in values]
assert not missing, missing
EOF

# ---- The served run, replayed: the same trace, byte for byte.
expect_exit 0 "$KSIM" run --replay "$WORK/served.jsonl" --trace "$WORK/replayed.jsonl"
expect_grep 'byte for byte' "$WORK/stdout"
cmp "$WORK/served.jsonl" "$WORK/replayed.jsonl" || fail "the replayed trace differs"
echo "ok"
