#!/usr/bin/env bash
# Configures and builds dlc with -DDLC_BUILD_COMPILER=OFF while LLVM/MLIR are
# hidden from CMake, then checks that no compile or link line names them.
# Usage: check.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
rm -rf "$build"
mkdir -p "$build"

# Hide every LLVM/MLIR installation from find_package and find_program.
ignore=$(ls -d /usr/lib/llvm-* /usr/local/lib/cmake/llvm /usr/local/lib/cmake/mlir 2>/dev/null | paste -sd ';' - || true)
cmake -S "$src" -B "$build" -G Ninja -DDLC_BUILD_COMPILER=OFF -DDLC_BUILD_TESTS=OFF \
  -DCMAKE_IGNORE_PREFIX_PATH="$ignore" -DCMAKE_IGNORE_PATH="$ignore" \
  -DCMAKE_DISABLE_FIND_PACKAGE_MLIR=ON -DCMAKE_DISABLE_FIND_PACKAGE_LLVM=ON \
  > "$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
cmake --build "$build" > "$build/build.log" 2>&1 || { cat "$build/build.log"; exit 1; }

# The runtime, the CLI, the runner and dlc-stress: no LLVM or MLIR on any command line.
if ninja -C "$build" -t commands | grep -Ei 'llvm|mlir'; then
  echo "runtime-only build: LLVM/MLIR on a compile or link line (above)" >&2
  exit 1
fi
test -f "$build/lib/libdlc_runtime.a"
test -f "$build/lib/libdlc_artifact.a"     # the .dlcm format and the descriptor schema
test -f "$build/lib/libdlc_cuda_driver.a"
test -x "$build/bin/dlc-embed-example"
test -x "$build/bin/dlc-stress"
{ "$build/bin/dlc-stress" 2>&1 || true; } | grep -q "usage: dlc-stress"
"$build/bin/dlc" --version | grep -q "runtime only"
echo "runtime-only build: ok (no LLVM/MLIR on any compile or link line)"
