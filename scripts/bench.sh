#!/usr/bin/env bash
# Runs every benchmark binary in BUILD/bench; each reports its baseline from the same run
# (docs/BENCHMARKS.md explains the figures).
set -euo pipefail
build=$1
shift || true
for bench in "$build"/bench/*_bench; do
  [ -x "$bench" ] || continue
  echo "== $(basename "$bench")"
  "$bench" --benchmark_min_time=0.3 "$@"
done
