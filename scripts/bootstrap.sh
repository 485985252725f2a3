#!/usr/bin/env bash
# Installs, from Debian's packages, whatever ksim needs that this machine lacks. Idempotent: a
# second run installs nothing and takes well under a second. Needs root (or sudo) only when
# something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git python3
  libboost-graph-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libimgui-dev libglfw3-dev libegl-dev libgl-dev libstb-dev libegl1-mesa-dev libgl1-mesa-dri
  libegl-mesa0 libglx-mesa0 fonts-dejavu-core fonts-droid-fallback xvfb xauth
  clang libclang-rt-14-dev
  parallel
  python3-matplotlib  # scripts/plot_scale.py (docs/BENCHMARKS.md, "Scale")
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "bootstrap: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
