#!/usr/bin/env bash
# kafkajs 2.2.4 (tests/clients/kafkajs, installed by scripts/bootstrap.sh with npm ci) against
# `ksim serve` on the walkthrough scenario at Kafka 2.0: an idempotent producer sends 200 keyed records, a
# consumer group member reads them all back (each once, in order per partition), then two
# members of another group share the two partitions and the one left rebalances to both when the
# other leaves; the history checker's verdict; the replay of the served trace, byte for byte.
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/serve_lib.sh"
need node
CLIENT="$SRC/tests/clients/kafkajs/client.js"
if [ ! -d "$SRC/tests/clients/kafkajs/node_modules/kafkajs" ]; then
  if [ "${CI:-}" = "true" ]; then fail "kafkajs is not installed (scripts/bootstrap.sh: npm ci)"; fi
  echo "SKIP: kafkajs is not installed (scripts/bootstrap.sh runs npm ci in tests/clients/kafkajs)"
  exit 77
fi

# kafkajs's idempotent producer needs a 0.11+ broker (InitProducerId, record batch v2): the
# walkthrough's Kafka 2.0 variant.
SERVE_VARIANT=kafka-2.0
start_serve "$SRC/scenarios/serve/walkthrough.json" --variant "$SERVE_VARIANT" --speed 2

spawn producer timeout 90 node "$CLIENT" produce "$BROKERS" enbook 200 kafkajs
wait_for producer 90
expect_grep '^produced 200$' "$WORK/producer.out"

spawn consumer timeout 90 node "$CLIENT" consume "$BROKERS" enbook 200 kafkajs-readers
wait_for consumer 90
expect_grep '^consumed 200$' "$WORK/consumer.out"
python3 - "$WORK/consumer.out" <<'PY' || fail "records not each once and in order per partition"
import sys
seen, last = set(), {}
for line in open(sys.argv[1]):
    parts = line.split()
    if len(parts) != 3:
        continue
    partition, offset, value = parts
    n = int(value.split("-")[1])
    assert value not in seen, f"{value} twice"
    seen.add(value)
    assert last.get(partition, -1) < n, f"{value} out of order in partition {partition}"
    last[partition] = n
assert len(seen) == 200, f"{len(seen)} of 200"
PY

spawn a timeout 120 node "$CLIENT" member "$BROKERS" enbook kafkajs-group a
wait_grep '^a assigned 0,1$' "$WORK/a.out" 60
spawn b timeout 120 node "$CLIENT" member "$BROKERS" enbook kafkajs-group b
wait_grep '^b assigned [01]$' "$WORK/b.out" 60
wait_grep '^a assigned [01]$' "$WORK/a.out" 60
kill -TERM "$PID_b"
wait_grep '^b left$' "$WORK/b.out" 30
wait_grep_count 2 '^a assigned 0,1$' "$WORK/a.out" 60  # both partitions back
kill -TERM "$PID_a"

stop_serve 0
[ "$(metric acked)" = 200 ] || fail "acked $(metric acked)"
[ "$(metric lost_acked)" = 0 ] || fail "lost_acked $(metric lost_acked)"
[ "$(metric log_duplicates)" = 0 ] || fail "log_duplicates $(metric log_duplicates)"
expect_exit 0 "$KSIM" run --replay "$WORK/served.jsonl"
expect_grep 'byte for byte' "$WORK/stdout"
echo "ok"
