#!/usr/bin/env bash
# `ksim check`: a valid scenario prints "ok: <name>: N actions, M variants" and exits 0; a bad one
# prints every error with the file and its line:column (syntax) or JSON path, and exits 2.
source "$(dirname "$0")/lib.sh" "$@"

expect_exit 0 "$KSIM" check --help
expect_grep 'scenarios' "$WORK/stdout"
expect_exit 2 "$KSIM" check
expect_exit 2 "$KSIM" check "$WORK/missing.json"
expect_grep 'missing.json: cannot open' "$WORK/stderr"

# The seed corpus of the loader's fuzzer holds DESIGN's example, made valid.
expect_exit 0 "$KSIM" check "$SRC/fuzz/corpus/scenario_loader_fuzzer/design_example.json"
expect_grep '^ok: unclean-election-loses-acked-writes: 13 actions, 2 variants$' "$WORK/stdout"

cat >"$WORK/good.json" <<'JSON'
{ "ksim": 1, "name": "seed-walkthrough",
  "actions": [
    { "at_ms": 0, "do": "cli", "command": "kafka-topics.sh --create --zookeeper hadoop01:2181 --replication-factor 3 --partitions 1 --topic frbook" },
    { "at_ms": 500, "do": "cli", "command": "kafka-console-producer.sh --broker-list hadoop01:9092 --topic frbook", "input": ["hello java"] },
    { "at_ms": 900, "do": "cli", "command": "kafka-console-consumer.sh --zookeeper hadoop01:2181 --topic frbook --from-beginning" }
  ] }
JSON
expect_exit 0 "$KSIM" check "$WORK/good.json"
expect_grep '^ok: seed-walkthrough: 3 actions, 0 variants$' "$WORK/stdout"

# The seed's own example: --replication-factor 4 on three brokers is valid (the run shows Kafka's
# refusal), so check warns on stderr and exits 0.
cat >"$WORK/rf4.json" <<'JSON'
{ "ksim": 1, "name": "rf4",
  "actions": [
    { "at_ms": 0, "do": "cli", "command": "kafka-topics.sh --create --zookeeper hadoop01:2181 --replication-factor 4 --partitions 1 --topic esbook" },
    { "at_ms": 500, "do": "cli", "command": "kafka-preferred-replica-election.sh --zookeeper hadoop01:2181" }
  ] }
JSON
expect_exit 0 "$KSIM" check "$WORK/rf4.json"
expect_grep '^ok: rf4: 2 actions, 0 variants$' "$WORK/stdout"
expect_grep '^warning: .*rf4.json:/actions/0/command: replication factor 4 is more than the scenario.s 3 brokers' "$WORK/stderr"
expect_exit 0 "$KSIM" run "$WORK/rf4.json"
expect_grep 'Error while executing topic command : replication factor: 4 larger than available brokers: 3' "$WORK/stdout"
expect_grep 'Successfully started preferred replica election for partitions Set\(' "$WORK/stdout"

# Syntax: file:line:column.
printf '{\n  "ksim": 1,\n  "name": "x",,\n}\n' >"$WORK/syntax.json"
expect_exit 2 "$KSIM" check "$WORK/syntax.json"
expect_grep 'syntax.json:3:15: syntax error' "$WORK/stderr"

# Schema errors: the JSON path, what is valid, did-you-mean; every error at once.
cat >"$WORK/bad.json" <<'JSON'
{ "ksim": 1, "name": "bad",
  "topics": { "t": { "partitions": 1, "replication_factor": 3 } },
  "clients": { "p1": { "type": "producer", "tpoic": "t", "config": { "acks": 2 } } },
  "actions": [ { "at_ms": 0, "do": "crash", "broker": 7 },
               { "at_ms": 0, "do": "cli", "command": "kafka-topics.sh --create --zookeeper h:2181 --partitions 1 --replication-factor 1" } ],
  "variants": { "v": { "cluster": { "brokers": 1 } } } }
JSON
expect_exit 2 "$KSIM" check "$WORK/bad.json"
expect_grep 'bad.json:/clients/p1/tpoic: unknown key "tpoic": did you mean "topic"\?' "$WORK/stderr"
expect_grep 'bad.json:/clients/p1/config/acks: Invalid value 2 for configuration acks: String must be one of: all, -1, 0, 1$' "$WORK/stderr"
expect_grep 'bad.json:/actions/0/broker: unknown broker 7: brokers are 1 to 3' "$WORK/stderr"
expect_grep 'bad.json:/actions/1/command: Missing required argument "\[topic\]"' "$WORK/stderr"
expect_grep 'bad.json:/variants/v/topics/t/replication_factor: INVALID_REPLICATION_FACTOR' "$WORK/stderr"
[ ! -s "$WORK/stdout" ] || fail "a bad scenario printed ok: $(cat "$WORK/stdout")"

# Several files: each judged, exit 2 when any is bad.
expect_exit 2 "$KSIM" check "$WORK/good.json" "$WORK/bad.json"
expect_grep '^ok: seed-walkthrough' "$WORK/stdout"
expect_grep 'bad.json:/clients/p1/tpoic' "$WORK/stderr"

# Not JSON at all, and an empty file: an error, never a crash.
printf '\x00\xff{[\x01 garbage' >"$WORK/noise.json"
expect_exit 2 "$KSIM" check "$WORK/noise.json"
expect_grep 'noise.json:[0-9]+:[0-9]+: ' "$WORK/stderr"
: >"$WORK/empty.json"
expect_exit 2 "$KSIM" check "$WORK/empty.json"
expect_grep 'empty.json:1:1: ' "$WORK/stderr"
