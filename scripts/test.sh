#!/usr/bin/env bash
# README command (b): set up, build, and run every test: lit, GoogleTest, the
# runtime-only build check and the clang-format check. Ends with ctest's
# summary line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
start=$(date +%s)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
echo "setup and build: $(( $(date +%s) - start )) s"
cd "$root/build"
exec ctest --output-on-failure -j"$(nproc)"
