#!/usr/bin/env bash
# Bad arguments and bad files: a clear message naming what is wrong, exit code 2, nothing written.
source "$(dirname "$0")/lib.sh" "$@"

expect_exit 2 "$KSIM"
expect_exit 2 "$KSIM" no-such-command
expect_exit 0 "$KSIM" --help
expect_exit 0 "$KSIM" dump-log --help
expect_grep '--print-data-log' "$WORK/stdout"
expect_exit 0 "$KSIM" log-append --help

expect_exit 2 "$KSIM" log-append --dir "$WORK/l" --topic t --partition 0
expect_grep 'count' "$WORK/stderr"
expect_exit 2 "$KSIM" log-append --dir "$WORK/l" --topic t --partition -1 --count 1
expect_grep 'partition' "$WORK/stderr"
expect_exit 2 "$KSIM" log-append --dir "$WORK/l" --topic t --partition 0 --count 1 --segment-bytes 3
expect_grep 'segment-bytes' "$WORK/stderr"
expect_exit 2 "$KSIM" log-append --dir "$WORK/l" --topic 'bad/topic' --partition 0 --count 1
expect_grep 'bad/topic.*ASCII letters' "$WORK/stderr"
[ ! -e "$WORK/l" ] || fail "a refused log-append created $WORK/l"

# A batch larger than a segment is refused, naming the log.
expect_exit 2 "$KSIM" log-append --dir "$WORK/l" --topic t --partition 0 --count 10 \
  --value-bytes 100 --batch-records 10 --segment-bytes 200
expect_grep 't-0: RECORD_LIST_TOO_LARGE|t-0: MESSAGE_TOO_LARGE' "$WORK/stderr"

expect_exit 2 "$KSIM" dump-log --files "$WORK/missing.log"
expect_grep 'missing.log' "$WORK/stderr"
echo hello >"$WORK/notes.txt"
expect_exit 2 "$KSIM" dump-log --files "$WORK/notes.txt"
expect_grep 'notes.txt: not a segment file' "$WORK/stderr"

# A damaged batch: dump-log prints what is valid before it and names file and position.
expect_exit 0 "$KSIM" log-append --dir "$WORK/d" --topic t --partition 0 --count 30 --batch-records 10
log="$WORK/d/t-0/00000000000000000000.log"
size=$(stat -c %s "$log")
printf '\xff' | dd of="$log" bs=1 seek=$((size - 20)) conv=notrunc status=none
expect_exit 2 "$KSIM" dump-log --files "$log"
expect_grep '^baseOffset: 0 lastOffset: 9 .* isvalid: true$' "$WORK/stdout"
expect_grep '^baseOffset: 20 lastOffset: 29 .* isvalid: false$' "$WORK/stdout"
expect_grep '00000000000000000000.log: CORRUPTION: batch at position [0-9]+: .*CRC' "$WORK/stderr"
