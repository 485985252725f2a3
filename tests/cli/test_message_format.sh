#!/usr/bin/env bash
# Message format v0/v1 on the command line: `ksim log-append --message-format-version 0.10.0`
# writes Kafka 0.10's message sets (checked by a small Python reader written from the protocol
# guide, with zlib's CRC-32), a later append in v2 makes a mixed log, and `ksim dump-log` prints
# each entry in its own format: v0/v1 as Kafka 0.10.0.1's DumpLogSegments does. A message set
# written byte by byte by Python is dumped exactly; a CRC mismatch is reported.
source "$(dirname "$0")/lib.sh" "$@"

# A version Kafka does not know is refused before anything is written.
expect_exit 2 "$KSIM" log-append --dir "$WORK/bad" --topic t --partition 0 --count 1 \
  --message-format-version 0.10.9
expect_grep '^ksim log-append: --message-format-version "0.10.9": not a Kafka version' "$WORK/stderr"
[ ! -e "$WORK/bad" ] || fail "a refused log-append created $WORK/bad"

expect_exit 0 "$KSIM" log-append --dir "$WORK/logs" --topic t --partition 0 --count 200 \
  --value-bytes 40 --batch-records 10 --message-format-version 0.10.0
expect_grep '^offsets 0\.\.9 \(10 records, 740 bytes\)$' "$WORK/stdout"
expect_exit 0 "$KSIM" log-append --dir "$WORK/logs" --topic t --partition 0 --count 20 \
  --value-bytes 40 --batch-records 10 --message-format-version 2.0
dir="$WORK/logs/t-0"

python3 - "$dir" <<'PY'
import os, struct, sys, zlib
directory = sys.argv[1]
data = open(os.path.join(directory, "00000000000000000000.log"), "rb").read()
pos, expected, starts = 0, 0, {}
while pos < len(data):
    offset, size = struct.unpack_from(">qi", data, pos)
    magic = data[pos + 16]
    starts[pos] = offset
    if magic == 1:  # Offset MessageSize Crc MagicByte Attributes Timestamp Key Value
        crc, magic, attributes, timestamp, key_length = struct.unpack_from(">IbbqI", data, pos + 12)
        assert crc == zlib.crc32(data[pos + 16:pos + 12 + size]) & 0xffffffff, f"CRC at {pos}"
        assert attributes == 0 and key_length == 0xffffffff and timestamp > 0
        value_length = struct.unpack_from(">i", data, pos + 30)[0]
        assert 34 + value_length == 12 + size == 74, (pos, size, value_length)
        assert data[pos + 34:pos + 34 + 7] == b"record-", data[pos + 34:pos + 45]
        assert offset == expected, (pos, offset, expected)
        expected += 1
    else:
        assert magic == 2 and offset == expected, (pos, magic, offset)
        expected += struct.unpack_from(">i", data, pos + 57)[0]
    pos += 12 + size
assert expected == 220 and pos == len(data), (expected, pos)
index = open(os.path.join(directory, "00000000000000000000.index"), "rb").read()
assert len(index) >= 8 and len(index) % 8 == 0
for i in range(0, len(index), 8):
    relative, position = struct.unpack_from(">ii", index, i)
    assert position in starts and starts[position] <= relative, (relative, position)
print("checked", expected, "offsets")
PY

expect_exit 0 "$KSIM" dump-log --files "$dir/00000000000000000000.log" --print-data-log
expect_grep '^offset: 0 position: 0 isvalid: true payloadsize: 40 magic: 1 compresscodec: NoCompressionCodec crc: [0-9]+ payload: record-0 ' "$WORK/stdout"
expect_grep '^offset: 199 position: 14726 isvalid: true payloadsize: 40 magic: 1 ' "$WORK/stdout"
expect_grep '^baseOffset: 200 lastOffset: 209 count: 10 .* magic: 2 .* isvalid: true$' "$WORK/stdout"
expect_grep '^\| offset: 219 CreateTime: [0-9]+ keysize: -1 valuesize: 40 ' "$WORK/stdout"

# A message set written from the protocol guide (v1 with key "key", then v0 with a null key).
hand="$WORK/hand/t-0"
mkdir -p "$hand"
python3 - "$hand/00000000000000000000.log" <<'PY'
import struct, sys, zlib
def message(offset, magic, timestamp, key, value):
    body = struct.pack(">bb", magic, 0) + (struct.pack(">q", timestamp) if magic == 1 else b"")
    for field in (key, value):
        body += struct.pack(">i", -1 if field is None else len(field)) + (field or b"")
    body = struct.pack(">I", zlib.crc32(body) & 0xffffffff) + body
    return struct.pack(">qi", offset, len(body)) + body
open(sys.argv[1], "wb").write(message(0, 1, 1480000000000, b"key", b"hello") +
                              message(1, 0, None, None, b"world"))
PY
expect_exit 0 "$KSIM" dump-log --files "$hand/00000000000000000000.log" --print-data-log
cat > "$WORK/want" <<'TXT'
Dumping HAND
Starting offset: 0
offset: 0 position: 0 isvalid: true payloadsize: 5 magic: 1 compresscodec: NoCompressionCodec crc: 412221279 keysize: 3 key: key payload: hello
offset: 1 position: 42 isvalid: true payloadsize: 5 magic: 0 compresscodec: NoCompressionCodec crc: 2344668535 payload: world
TXT
sed -i "s|HAND|$hand/00000000000000000000.log|" "$WORK/want"
diff "$WORK/want" "$WORK/stdout" || fail "dump-log of the hand-built message set differs"

# One flipped bit in the first value: isvalid false, the damage named, exit 2.
printf '\x00' | dd of="$hand/00000000000000000000.log" bs=1 seek=41 conv=notrunc 2>/dev/null
expect_exit 2 "$KSIM" dump-log --files "$hand/00000000000000000000.log"
expect_grep '^offset: 0 position: 0 isvalid: false ' "$WORK/stdout"
expect_grep 'batch at position 0: CRC mismatch' "$WORK/stderr"

# In the simulated cluster: log.message.format.version 0.10.0 writes v1, acks=all survives a
# leader crash, and an idempotent producer is refused with UNSUPPORTED_FOR_MESSAGE_FORMAT.
expect_exit 0 "$KSIM" run "$SRC/tests/cli/data/run_message_format_v1.json" --all-variants \
  --report "$WORK/report.json"
expect_exit 0 "$KSIM" run "$SRC/tests/cli/data/run_message_format_v1.json" --variant idempotent \
  --trace "$WORK/idempotent.jsonl"
expect_grep '"error":"UNSUPPORTED_FOR_MESSAGE_FORMAT"' "$WORK/idempotent.jsonl"

# A broker release's own log (docs/versions.md, "Storage: message format and time index"):
# --kafka-version 0.10.0 writes message sets v1 and no .timeindex (KIP-33 came with 0.10.1);
# 0.11.0 record batches v2 and a .timeindex per segment. dump-log reads both, and reopening a
# 0.10.0 log (recovery of its active segment) creates no time index.
for release in 0.10.0 0.11.0; do
  expect_exit 0 "$KSIM" log-append --dir "$WORK/r$release" --topic t --partition 0 --count 60 \
    --value-bytes 40 --batch-records 10 --segment-bytes 1500 --kafka-version "$release"
  expect_exit 0 "$KSIM" log-append --dir "$WORK/r$release" --topic t --partition 0 --count 5 \
    --value-bytes 40 --kafka-version "$release"
  segments=$(ls "$WORK/r$release/t-0" | grep -c '\.log$')
  [ "$segments" -gt 1 ] || fail "$release: expected several segments, got $segments"
  [ "$(ls "$WORK/r$release/t-0" | grep -c '\.index$')" = "$segments" ] ||
    fail "$release: an offset index per segment"
  expect_exit 0 "$KSIM" dump-log --files "$WORK/r$release/t-0" --print-data-log
done
[ "$(ls "$WORK/r0.10.0/t-0" | grep -c '\.timeindex$' || true)" = 0 ] ||
  fail "a 0.10.0 log has a .timeindex: $(ls "$WORK/r0.10.0/t-0")"
[ "$(ls "$WORK/r0.11.0/t-0" | grep -c '\.timeindex$')" = "$segments" ] ||
  fail "a 0.11.0 log lacks a .timeindex: $(ls "$WORK/r0.11.0/t-0")"
expect_exit 0 "$KSIM" dump-log --files "$WORK/r0.10.0/t-0" --print-data-log
expect_grep '^offset: 0 position: 0 isvalid: true payloadsize: 40 magic: 1 ' "$WORK/stdout"
expect_grep '^offset: 64 position: [0-9]+ isvalid: true payloadsize: 40 magic: 1 ' "$WORK/stdout"
expect_exit 0 "$KSIM" dump-log --files "$WORK/r0.11.0/t-0" --print-data-log
expect_grep '^baseOffset: 0 lastOffset: 9 count: 10 .* magic: 2 ' "$WORK/stdout"
# A 0.10.0 broker knows no 0.11 format, and ksim models no 0.9 broker.
expect_exit 2 "$KSIM" log-append --dir "$WORK/bad2" --topic t --partition 0 --count 1 \
  --kafka-version 0.10.0 --message-format-version 0.11.0
expect_grep 'not a Kafka version known to Kafka 0.10.0' "$WORK/stderr"
expect_exit 2 "$KSIM" log-append --dir "$WORK/bad3" --topic t --partition 0 --count 1 \
  --kafka-version 0.9.0
expect_grep '^ksim log-append: --kafka-version "0.9.0": ' "$WORK/stderr"

# The format a simulated cluster writes when none is given is its release's: at 0.11.0 v2, so an
# idempotent producer is served (variant default-format-at-0.11); the gtest
# ClusterMessageFormatTest reads the replicas' logs at 0.10.0 and 0.11.0.
expect_exit 0 "$KSIM" run "$SRC/tests/cli/data/run_message_format_v1.json" \
  --variant default-format-at-0.11 --trace "$WORK/default-0.11.jsonl"
if grep -q '"error":"UNSUPPORTED_FOR_MESSAGE_FORMAT"' "$WORK/default-0.11.jsonl"; then
  fail "an idempotent producer at 0.11.0's default format was refused"
fi
