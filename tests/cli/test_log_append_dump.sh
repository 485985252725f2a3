#!/usr/bin/env bash
# `ksim log-append` writes Kafka's segment files and `ksim dump-log` reads them back: file names,
# batch fields, CRC-32C and index entries are checked here independently of ksim's own code
# (a small Python reader of the v2 format and the index layout).
source "$(dirname "$0")/lib.sh" "$@"

expect_exit 0 "$KSIM" log-append --dir "$WORK/logs" --topic enbook --partition 0 --count 1000 \
  --value-bytes 100 --batch-records 10 --segment-bytes 32768
expect_grep '^offsets 0\.\.9 \(10 records, [0-9]+ bytes\)$' "$WORK/stdout"
expect_grep '^offsets 990\.\.999 ' "$WORK/stdout"
expect_grep '^log end offset 1000, [0-9]+ segment\(s\)' "$WORK/stdout"

dir="$WORK/logs/enbook-0"
[ -f "$dir/00000000000000000000.log" ] || fail "no first segment in $dir: $(ls "$dir")"
segments=$(ls "$dir" | grep -c '\.log$')
[ "$segments" -ge 3 ] || fail "expected several 32 KiB segments, got $segments"
bad=$(ls "$dir" | grep -Ev '^[0-9]{20}\.(log|index|timeindex)$' || true)
[ -z "$bad" ] || fail "unexpected files in $dir: $bad"

expect_exit 0 "$KSIM" dump-log --files "$dir" --json
cp "$WORK/stdout" "$WORK/dump.json"
expect_exit 0 "$KSIM" dump-log --files "$dir/00000000000000000000.log" --print-data-log
expect_grep '^baseOffset: 0 lastOffset: 9 count: 10 .* isvalid: true$' "$WORK/stdout"
expect_grep '^\| offset: 5 CreateTime: [0-9]+ keysize: -1 valuesize: 100 sequence: -1 headerKeys: \[\] payload: record-5 ' "$WORK/stdout"

python3 - "$dir" "$WORK/dump.json" <<'PY'
import json, os, struct, sys

def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF

directory, dump_path = sys.argv[1], sys.argv[2]
dump = json.load(open(dump_path))
expected_offset = 0
for name in sorted(os.listdir(directory)):
    if not name.endswith(".log"):
        continue
    base = int(name[:20])
    data = open(os.path.join(directory, name), "rb").read()
    pos, batches = 0, []
    while pos < len(data):
        base_offset, length, epoch, magic, crc, attributes, last_delta = struct.unpack_from(">qiibIhi", data, pos)
        assert magic == 2, (name, pos, magic)
        end = pos + 12 + length
        assert crc32c(data[pos + 21:end]) == crc, f"{name}@{pos}: CRC-32C mismatch"
        assert base_offset == expected_offset, (name, pos, base_offset, expected_offset)
        if not batches:
            assert base_offset == base, f"{name} holds offset {base_offset} first"
        count = struct.unpack_from(">i", data, pos + 57)[0]
        assert count == last_delta + 1 == 10
        batches.append((base_offset, base_offset + last_delta, pos))
        expected_offset += count
        pos = end
    # Index entries: (relative offset, position) big endian, each pointing at the start of the
    # batch that holds that offset.
    index = open(os.path.join(directory, name[:20] + ".index"), "rb").read()
    assert len(index) % 8 == 0
    starts = {p: (first, last) for first, last, p in batches}
    previous = -1
    for i in range(0, len(index), 8):
        relative, position = struct.unpack_from(">ii", index, i)
        assert position in starts, f"{name[:20]}.index entry {i // 8} points inside a batch"
        first, last = starts[position]
        assert first <= base + relative <= last
        assert base + relative > previous
        previous = base + relative
    if len(batches) > 1:
        assert len(index) > 0, f"no index entries for {name} ({len(data)} bytes)"
assert expected_offset == 1000, expected_offset
files = {f["file"]: f for f in dump}
logs = [f for f in dump if f["kind"] == "log"]
assert sum(len(f["batches"]) for f in logs) == 100
assert all(b["isvalid"] for f in logs for b in f["batches"])
print("checked", len(logs), "segments")
PY
