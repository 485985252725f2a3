#!/usr/bin/env bash
# One shard of a distributed `ksim explore` (docs/explore.md, "Many machines"). Every engine runs
# this same script: it turns the shard index the engine gives into `--shard INDEX/SHARDS` and
# writes RESULTS_DIR/shard-INDEX.jsonl, which `ksim explore merge` combines afterwards.
#
#   explore-shard.sh [INDEX] [-- EXTRA KSIM EXPLORE ARGS...]
#
# INDEX, from 0: the first argument (GNU parallel passes {%} or {#}-1), else JOB_COMPLETION_INDEX
# (a Kubernetes Indexed Job sets it in each pod), else SLURM_ARRAY_TASK_ID (a Slurm job array
# started with --array=0-<SHARDS-1>).
# Environment: BASE (the base scenario, required), SHARDS (how many shards; default
# SLURM_ARRAY_TASK_COUNT when Slurm sets it), SEEDS (default 10000), FIRST_SEED (0), JOBS (worker
# processes per shard, default 1), KSIM (the binary, default `ksim` on PATH), RESULTS_DIR
# (default results), OUT_DIR (failing scenarios, default RESULTS_DIR/failures).
#
# Exit code: 0 when the shard ran, whether or not it found failures (they are in its results:
# a scheduler must not retry a shard for finding a bug); 2 for bad input (explore's own 2, or a
# missing or bad INDEX / SHARDS / BASE).
set -euo pipefail

index=""
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  index=$1
  shift
fi
if [ $# -gt 0 ] && [ "$1" = "--" ]; then shift; fi
index=${index:-${JOB_COMPLETION_INDEX:-${SLURM_ARRAY_TASK_ID:-}}}
shards=${SHARDS:-${SLURM_ARRAY_TASK_COUNT:-}}

die() {
  echo "explore-shard.sh: $*" >&2
  exit 2
}
[ -n "$index" ] || die "no shard index: give it as the first argument, or run under a Kubernetes Indexed Job (JOB_COMPLETION_INDEX) or a Slurm job array (SLURM_ARRAY_TASK_ID)"
[ -n "$shards" ] || die "SHARDS is not set (the number of shards: the Job's completions, the array's size)"
[[ $index =~ ^[0-9]+$ ]] || die "shard index '$index' is not a number from 0"
[[ $shards =~ ^[0-9]+$ ]] || die "SHARDS '$shards' is not a number"
[ -n "${BASE:-}" ] || die "BASE is not set (the base scenario file)"

ksim=${KSIM:-ksim}
results=${RESULTS_DIR:-results}
out=${OUT_DIR:-$results/failures}
mkdir -p "$results" "$out"

set +e
"$ksim" explore "$BASE" --seeds "${SEEDS:-10000}" --first-seed "${FIRST_SEED:-0}" \
  --shard "$index/$shards" --jobs "${JOBS:-1}" \
  --results "$results/shard-$index.jsonl" --out "$out" "$@"
code=$?
set -e
if [ "$code" = 1 ]; then code=0; fi  # failures found: in the results, not a failed shard
exit "$code"
