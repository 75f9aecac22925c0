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
# listed as skipped, so that the run ends with ctest's summary. Tests labelled
# heavy (the whole keras.applications catalogue, test/e2e/fixture_apps.py)
# are left out too: run them with `ctest -L heavy`.
exclude=heavy
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "no GPU (nvidia-smi -L): the tests labelled cuda are left out"
  exclude="cuda|heavy"
fi
echo "tests labelled heavy are left out (ctest -L heavy runs them)"
exec ctest --output-on-failure -j"$(nproc)" -LE "$exclude"
