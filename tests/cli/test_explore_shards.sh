#!/usr/bin/env bash
# `ksim explore` on many machines (docs/explore.md, "Many machines"): the same seeds run as three
# shards through each engine's path give, merged, exactly the lines of one whole run.
# - GNU parallel, for real (Debian's `parallel`, scripts/bootstrap.sh installs it), with
#   `--sshlogin :` (the local machine through the --sshlogin path);
# - a Kubernetes Indexed Job: deploy/explore-shard.sh as each pod runs it, JOB_COMPLETION_INDEX
#   set, with the manifest's SHARDS equal to its completions;
# - a Slurm job array: deploy/slurm/explore.sbatch as each array task runs it,
#   SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT set.
# The wrapper exits 0 for a shard that found failures and 2 without a shard index.
source "$(dirname "$0")/lib.sh" "$@"
BASE="$SRC/tests/cli/data/explore_small.json"
SHARD="$SRC/deploy/explore-shard.sh"
command -v parallel >/dev/null || fail "GNU parallel is not installed (scripts/bootstrap.sh installs it)"
export BASE SEEDS=6 SHARDS=3 KSIM

strip() { sed -E 's/,"scenario":"[^"]*"//' "$@" | sort; }

set +e
"$KSIM" explore "$BASE" --seeds 6 --results "$WORK/whole.jsonl" --out "$WORK/whole" >/dev/null 2>&1
set -e
[ "$(wc -l <"$WORK/whole.jsonl")" = 6 ] || fail "the whole run wrote $(wc -l <"$WORK/whole.jsonl") lines"

# merged ENGINE: the engine's three shard files merged equal the whole run.
merged() {
  local dir=$WORK/$1
  [ "$(ls "$dir"/shard-*.jsonl | wc -l)" = 3 ] || fail "$1: $(ls "$dir") instead of 3 shard files"
  set +e
  "$KSIM" explore merge "$dir"/shard-*.jsonl --results "$dir/all.jsonl" >"$dir/merge.out" 2>&1
  local rc=$?
  set -e
  [ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "$1: merge exited $rc: $(cat "$dir/merge.out")"
  grep -q '^Runs: 6 (seeds 0..5)' "$dir/merge.out" || fail "$1: $(cat "$dir/merge.out")"
  diff <(strip "$WORK/whole.jsonl") <(strip "$dir/all.jsonl") || fail "$1: merged shards differ"
}

# GNU parallel: one job per shard, {} the index.
RESULTS_DIR="$WORK/parallel" parallel --will-cite --jobs 2 --sshlogin : \
  bash "$SHARD" {} ::: 0 1 2 >>"$WORK/shards.log"
merged parallel

# Kubernetes Indexed Job: SHARDS must equal the manifest's completions; each pod gets its index.
manifest="$SRC/deploy/kubernetes/explore-job.yaml"
completions=$(grep -Eo '^  completions: [0-9]+' "$manifest" | grep -Eo '[0-9]+$')
shards=$(grep -A1 -E 'name: SHARDS$' "$manifest" | grep -Eo '"[0-9]+"' | tr -d '"')
[ -n "$completions" ] && [ "$completions" = "$shards" ] ||
  fail "the manifest's SHARDS ($shards) is not its completions ($completions)"
grep -q 'completionMode: Indexed' "$manifest" || fail "the manifest is not an Indexed Job"
for i in 0 1 2; do
  JOB_COMPLETION_INDEX=$i RESULTS_DIR="$WORK/kubernetes" bash "$SHARD" >>"$WORK/shards.log"
done
merged kubernetes

# Slurm job array: the batch script as each task runs it.
for i in 0 1 2; do
  SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=3 SLURM_SUBMIT_DIR="$SRC" SHARDS="" \
    RESULTS_DIR="$WORK/slurm" bash "$SRC/deploy/slurm/explore.sbatch" >>"$WORK/shards.log"
done
merged slurm

# No index from anywhere: exit 2, saying where it would come from.
expect_exit 2 env -u JOB_COMPLETION_INDEX -u SLURM_ARRAY_TASK_ID bash "$SHARD"
expect_grep 'no shard index' "$WORK/stderr"
expect_exit 2 bash "$SHARD" 5
expect_grep "is not a shard" "$WORK/stderr"
echo "ok"
