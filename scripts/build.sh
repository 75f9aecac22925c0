#!/usr/bin/env bash
# Configures (once) and builds dlc in build/ with Ninja and ccache.
# Extra arguments go to the first CMake configure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DLC_BUILD_DIR:-$root/build}
export PATH=/usr/local/cuda/bin:$PATH
# Paths under the checkout hash relatively, so that ccache hits across clones.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
mkdir -p "$build"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >"$build/configure.log" 2>&1 ||
    { cat "$build/configure.log"; exit 1; }
fi
cmake --build "$build" -- -j"$(nproc)" >"$build/build.log" 2>&1 || { tail -50 "$build/build.log"; exit 1; }
