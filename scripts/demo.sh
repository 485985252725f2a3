#!/usr/bin/env bash
# The main job, run by `./dev main`: writes a real Kafka log with ksim's storage engine and
# reads it back the way kafka-dump-log.sh would. (The simulator's scenario run replaces this
# once the cluster exists.)
set -euo pipefail
ksim=$1
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
"$ksim" dump-log --files "$dir/enbook-0/$first" --print-data-log | head -n 12
echo
echo "# its sparse offset index (an entry per 4096 bytes appended)"
"$ksim" dump-log --files "$dir/enbook-0/${first%.log}.index" | head -n 6
