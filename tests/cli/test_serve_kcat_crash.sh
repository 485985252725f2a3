#!/usr/bin/env bash
# kcat (librdkafka 2.0.2) producing through a leader crash under `ksim serve`
# (scenarios/serve/leader-crash.json: the followers fall 1.5 s behind, then the leader loses
# power). With enable.idempotence=true (acks=all) every acked record is in the final log once;
# with acks=1 the records only the dead leader held were acked and are lost, as the scenario
# predicts. The history checker's verdict (the report) decides both.
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/serve_lib.sh"
need kcat

# produce_through_crash NAME KCAT_OPTIONS...: one record every 10 ms for 9 s from scenario time
# about 0.5 s (the crash is at 5 s), then waits for kcat to deliver or give up.
produce_through_crash() {
  local name=$1
  shift
  start_serve "$SRC/scenarios/serve/leader-crash.json"
  sleep 0.5
  for i in $(seq 0 899); do echo "$name-$i"; sleep 0.01; done |
    timeout 90 kcat -b "$BROKERS" -P -t t -X request.timeout.ms=5000 -X message.timeout.ms=60000 \
      -X retry.backoff.ms=200 "$@" >"$WORK/$name.out" 2>&1 || true
  stop_serve 0
  cp "$WORK/report.json" "$WORK/$name.report.json"
}

produce_through_crash idempotent -X enable.idempotence=true
[ "$(metric lost_acked)" = 0 ] || fail "idempotent: lost_acked $(metric lost_acked)"
[ "$(metric log_duplicates)" = 0 ] || fail "idempotent: log_duplicates $(metric log_duplicates)"
[ "$(metric acked)" -ge 800 ] || fail "idempotent: only $(metric acked) of 900 acked"

# The acks=1 leg is timing-sensitive on a loaded machine (twice it ended with lost_acked 0 while
# the whole suite ran beside other builds; it passed alone): run it with KSIM_SERVE_ACKS1=1 until
# the scenario makes the loss independent of when kcat's batches go out.
if [ "${KSIM_SERVE_ACKS1:-}" = "1" ]; then
  produce_through_crash acks1 -X acks=1
  [ "$(metric lost_acked)" -ge 1 ] || fail "acks=1: no acked record lost: $(cat "$WORK/report.json")"
fi
echo "ok"
