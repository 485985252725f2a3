#!/usr/bin/env bash
# Installs, from Debian's packages, whatever ksim needs that this machine lacks, and kafkajs for
# the real-client tests (npm ci from tests/clients/kafkajs/package-lock.json). Idempotent: a
# second run installs nothing and takes well under a second. Needs root (or sudo) only when a
# package is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git python3
  libboost-graph-dev nlohmann-json3-dev libcli11-dev
  libmimalloc-dev  # the optimized builds' malloc (CMakeLists.txt, KSIM_MIMALLOC)
  libxxhash-dev xxhash  # the trace's hash (sim/kernel/trace.h); xxhsum checks it in the tests
  libgtest-dev libgmock-dev libbenchmark-dev
  libimgui-dev libglfw3-dev libegl-dev libgl-dev libstb-dev libegl1-mesa-dev libgl1-mesa-dri
  libegl-mesa0 libglx-mesa0 fonts-dejavu-core fonts-droid-fallback xvfb xauth
  clang libclang-rt-14-dev
  parallel
  python3-matplotlib  # scripts/plot_scale.py (docs/BENCHMARKS.md, "Scale")
  kcat
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
# Node.js and npm for the kafkajs tests (tests/clients/kafkajs): Debian's, unless some are there.
if ! command -v node >/dev/null 2>&1; then missing+=(nodejs); fi
if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# kafkajs, at the version its lockfile pins, into the folder the tests own.
kafkajs="$(cd "$(dirname "$0")/.." && pwd)/tests/clients/kafkajs"
if [ ! -f "$kafkajs/node_modules/kafkajs/package.json" ]; then
  echo "bootstrap: npm ci in tests/clients/kafkajs" >&2
  (cd "$kafkajs" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
