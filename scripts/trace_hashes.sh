#!/usr/bin/env bash
# The trace hash of every shipped scenario's every variant, at the `messages` trace level (which
# holds every line of the `state` level too), one line each, sorted:
#
#   <scenario file> <variant> <XXH64 hash of the trace> <lines>
#
#   scripts/trace_hashes.sh KSIM                  print them
#   scripts/trace_hashes.sh KSIM --check FILE     compare with FILE (exit 1 and a diff if they differ)
#   scripts/trace_hashes.sh KSIM --write FILE     write them to FILE
#
# scenarios/trace-hashes.txt is the record: a change that moves a hash must say which and why
# (docs/STYLE.md, "Determinism is a property of the code"), and updates the file with --write.
# tests/cli/test_trace_hashes.sh runs --check. Scenario files are found under scenarios/ (every
# *.json but the policy goldens).
set -euo pipefail
ksim=$1
mode=${2:-print}
file=${3:-}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

hashes() {
  local scenario rel
  (cd "$root" && find scenarios -name '*.json' ! -name '*.golden.json' | LC_ALL=C sort) |
    while read -r rel; do
      scenario="$root/$rel"
      # Exit 1 (an expectation failed) still writes the report; only 2 (bad input) is an error.
      set +e
      "$ksim" run "$scenario" --all-variants --trace-level messages --report "$work/report.json" \
        >/dev/null 2>"$work/stderr"
      local code=$?
      set -e
      if [ "$code" -ge 2 ]; then
        echo "trace_hashes: ksim run $rel exited $code: $(cat "$work/stderr")" >&2
        exit 2
      fi
      python3 - "$work/report.json" "$rel" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
for name, variant in report["variants"].items():
    print(sys.argv[2], name, variant["trace_hash"], variant["trace_lines"])
EOF
    done | LC_ALL=C sort
}

case "$mode" in
  print) hashes ;;
  --write)
    hashes >"$work/hashes"
    mv "$work/hashes" "$file"
    ;;
  --check)
    hashes >"$work/hashes"
    if ! diff -u "$file" "$work/hashes"; then
      echo "trace_hashes: the traces above differ from $file (- recorded, + now)" >&2
      exit 1
    fi
    ;;
  *)
    echo "trace_hashes: unknown mode '$mode' (expected --check FILE or --write FILE)" >&2
    exit 2
    ;;
esac
