#!/usr/bin/env bash
# Runs every libFuzzer target in BUILD/fuzz for SECONDS each, starting from the seed corpus in
# fuzz/corpus/<target>/ (copied, so the committed seeds never grow). Fails on the first crash.
set -euo pipefail
build=$1
seconds=${2:-30}
shopt -s nullglob
found=0
for fuzzer in "$build"/fuzz/*_fuzzer; do
  [ -x "$fuzzer" ] || continue
  found=1
  name=$(basename "$fuzzer")
  work=$(mktemp -d)
  if [ -d "fuzz/corpus/$name" ]; then cp -r "fuzz/corpus/$name/." "$work/"; fi
  echo "fuzz: $name for ${seconds}s"
  "$fuzzer" -max_total_time="$seconds" -print_final_stats=0 -artifact_prefix="$build/$name-" \
    "$work" 2>&1 | tail -n 3
  rm -rf "$work"
done
[ "$found" = 1 ] || { echo "fuzz: no fuzz targets in $build/fuzz" >&2; exit 1; }
