#!/usr/bin/env bash
# README command (b): set up, build, and run every test: lit, GoogleTest, the
# runtime-only build check, the clang-format check and the sanitizer job
# (ctest fuzz/sanitized, label asan: fuzz/ci.sh). Ends with ctest's summary
# line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
start=$(date +%s)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
echo "setup and build: $(( $(date +%s) - start )) s"
cd "$root/build"
# Tests labelled cuda need a GPU; without one they are left out rather than
# listed as skipped, so that the run ends with ctest's summary.
gpu_filter=()
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "no GPU (nvidia-smi -L): the tests labelled cuda are left out"
  gpu_filter=(-LE cuda)
fi
exec ctest --output-on-failure -j"$(nproc)" "${gpu_filter[@]}"
