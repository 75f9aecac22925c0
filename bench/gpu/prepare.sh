#!/usr/bin/env bash
# Prepares the GPU checks of the CUDA backend on a machine with the compiler
# (no GPU needed): compiles fixture models to artifacts (fp32 and fp16, at the
# fixtures' batch), computes the CPU reference executor's outputs on the
# fixtures' inputs, and copies nlohmann-json's headers, into carry/gpu/ (git
# ignored), which the device machine receives with `carry: ["carry"]` and
# where bench/gpu/check.sh reads it. The device gets 64 MiB: ResNet50 (47 MB
# in fp16) goes alone: MODELS="resnet50" PRECISIONS=fp16 bench/gpu/prepare.sh.
# Usage: bench/gpu/prepare.sh   (after scripts/build.sh and the fixtures)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${DLC_BUILD_DIR:-$root/build}
fixtures=$build/test/fixtures
out=$root/carry/gpu
models=${MODELS:-"mnist_cnn text_lstm mobilenet_v2 dense conv2d_same depthwise_conv2d_same
  conv2d_transpose_same max_pooling2d_same average_pooling2d_same gru_reset_after_false
  embedding_mask_zero_lstm layer_normalization softmax_axis1 batch_normalization concatenate"}
precisions=${PRECISIONS:-"fp32 fp16"}
rm -rf "$out" && mkdir -p "$out"
# nlohmann-json as an install prefix (its CMake package finds the headers
# relative to itself).
mkdir -p "$out/nlohmann/include" "$out/nlohmann/share/cmake"
cp -r /usr/include/nlohmann "$out/nlohmann/include/"
cp -r /usr/share/cmake/nlohmann_json "$out/nlohmann/share/cmake/"
for m in $models; do
  [ -d "$fixtures/$m" ] || { echo "no fixture $m" >&2; exit 1; }
  batch=$(python3 -c "import json;print(json.load(open('$fixtures/$m/meta.json'))['batch'])")
  cp "$fixtures/$m"/input_*.npy "$out/" 2>/dev/null || true
  for f in "$fixtures/$m"/input_*.npy; do cp "$f" "$out/$m.$(basename "$f")"; done
  for p in $precisions; do
    "$build/bin/dlc" compile "$fixtures/$m/model.keras" --precision "$p" --batch "$batch" \
      -o "$out/$m.$p.dlcm"
    ins=(); for f in "$fixtures/$m"/input_*.npy; do ins+=(--input "$f"); done
    n=$(python3 -c "import json;print(len(json.load(open('$fixtures/$m/meta.json'))['outputs']))")
    outs=(); for i in $(seq 0 $((n - 1))); do outs+=(--output "$out/$m.$p.ref_$i.npy"); done
    "$build/bin/dlc" run "$fixtures/$m/model.keras" --device cpu --precision "$p" "${ins[@]}" "${outs[@]}"
  done
done
rm -f "$out"/input_*.npy
du -sh "$out"
