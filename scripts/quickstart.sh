#!/usr/bin/env bash
# README command (a): set up, build, and run the main job on the bundled
# example: optimize the MNIST CNN's graph IR for batch 1 and print it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
"$root/build/bin/dlc-opt" "$root/examples/mnist_cnn.mlir" \
  --dlc-specialize-batch=batch=1 --canonicalize
