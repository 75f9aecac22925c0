#!/usr/bin/env bash
# Prepares the GPU checks of the CUDA backend on a machine with the compiler (no
# GPU needed), for bench/gpu/check.sh on the device machine: compiles fixture
# models to artifacts MODEL.PRECISION.KERNELS.dlcm (fp32 and fp16, generated
# kernels and cuDNN/cuBLASLt, at the fixture's batch), computes the CPU
# reference executor's outputs on the fixture's inputs (test/e2e/check_gpu.py
# --no-device, in BUILD/gpu-stage/), and packs them with nlohmann-json's
# headers into batches carry/gpu/1, carry/gpu/2, ... (git ignored; one batch
# per device call: carry ["carry/gpu/N"]). A call carries the working tree
# too, 64 MiB in all: each batch gets what the tree leaves. An artifact larger
# than a batch (ResNet50 fp32, 94 MB) is split into parts over consecutive
# batches (bench/gpu/pack.py). Prints each batch's size; fails if one would
# not fit.
#
# Usage: bench/gpu/prepare.sh   (after scripts/build.sh and the fixtures)
#   MODELS=...       "small" (default): every fixture but ResNet50, VGG16 and
#                    MobileNetV2, one batch; "all": every fixture, about 9
#                    batches (issue 5's acceptance); or a list of fixture names
#   PRECISIONS=...   default "fp32 fp16";   KERNELS=...  default "generated library"
#   ATTN=1           also the attention set (BUILD/test/fixtures-attn, or
#                    ATTN_FIXTURES) at ATTN_PRECISIONS (default fp16) with
#                    ATTN_KERNELS (default "generated library"): under
#                    library its fp16 attention kernels are cuDNN SDPA calls,
#                    checked against the reference with the rest; ATTN=0
#                    leaves it out (it is skipped when the set is missing)
#   QUANT=1          also the Keras-quantized set (BUILD/test/fixtures-quant, or
#                    QUANT_FIXTURES) at QUANT_PRECISIONS (default fp32: 13 small
#                    models x 4 kernel choices, about 8 MB; add fp16 if the
#                    batch has room)
#                    with QUANT_KERNELS (default "generated library
#                    generated_sm_90 library_sm_90": the _sm_90 artifacts are
#                    compiled for sm_90 only, where float8 Dense takes the
#                    float8 tensor-core GEMM, or cuBLASLt's float8 GEMM under
#                    library; int8 Dense takes the int8 tensor-core GEMM in
#                    all); QUANT=0 leaves it out (skipped when missing)
#   INT8=1           also dlc's post-training int8 (check_gpu.py's int8 and
#                    int8-fp16: calibrated on each fixture's inputs) of
#                    INT8_MODELS (default "mnist_cnn mobilenet_v2": the int8
#                    tensor-core, per-element and depthwise convolutions,
#                    about 5 MB per kernel choice) with INT8_KERNELS (default
#                    "generated library": under library the Dense layers and
#                    1x1 convolutions are cuBLASLt int8 GEMMs); INT8=0
#                    leaves it out
#   CARRY            where the batches go (default carry/: CARRY/gpu/N)
#   CAPACITY         bytes per batch (default: 64 MiB less the working tree;
#                    campaign.sh gives what its first call leaves)
#   DLC_BUILD_DIR    the full build (default build/); FIXTURES (default BUILD/test/fixtures)
#   JOBS             models compiled at a time (default 2)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${DLC_BUILD_DIR:-$root/build}
fixtures=${FIXTURES:-$build/test/fixtures}
out=${CARRY:-$root/carry}/gpu
stage=$build/gpu-stage
# By default every fixture but the three large ones: one batch (about 31 MiB).
models=${MODELS:-small}
case $models in
  all | small)
    big=" resnet50 vgg16_transfer mobilenet_v2 "
    list=$(cd "$fixtures" && for d in */; do if [ -f "$d/model.keras" ]; then echo "${d%/}"; fi; done)
    [ -n "$list" ] || { echo "prepare.sh: error: no fixtures in $fixtures" >&2; exit 1; }
    if [ "$models" = small ]; then
      list=$(for m in $list; do if [[ $big != *" $m "* ]]; then echo "$m"; fi; done)
    fi
    models=$list ;;
esac
precisions=${PRECISIONS:-"fp32 fp16"}
kernels=${KERNELS:-"generated library"}
python=$root/.venv/bin/python
[ -x "$python" ] || python=python3
[ -x "$build/bin/dlc" ] || { echo "prepare.sh: error: no $build/bin/dlc: run scripts/build.sh" >&2; exit 1; }

commit=$(git -C "$root" rev-parse HEAD)
git -C "$root" diff --quiet HEAD -- || commit=$commit-dirty
rm -rf "$stage" "$stage.json" "$stage.attn.json" "$stage.quant.json" "$stage.int8.json"
# shellcheck disable=SC2086
"$python" "$root/test/e2e/check_gpu.py" --dlc "$build/bin/dlc" --fixtures "$fixtures" \
  --out "$stage" --models $models --precision $precisions --kernels $kernels --no-device \
  --jobs "${JOBS:-2}" --commit "$commit" --json "$stage.json" >"$stage.log" 2>&1 ||
  { grep -v ' ok$' "$stage.log" >&2; echo "prepare.sh: error: see $stage.log" >&2; exit 1; }
tail -1 "$stage.log"
attn_fixtures=${ATTN_FIXTURES:-$build/test/fixtures-attn}
if [ "${ATTN:-1}" = 1 ] && [ -d "$attn_fixtures" ]; then
  attn_models=$(cd "$attn_fixtures" && for d in */; do if [ -f "$d/model.keras" ]; then echo "${d%/}"; fi; done)
  # shellcheck disable=SC2086
  "$python" "$root/test/e2e/check_gpu.py" --dlc "$build/bin/dlc" --fixtures "$attn_fixtures" \
    --out "$stage" --models $attn_models --precision ${ATTN_PRECISIONS:-fp16} \
    --kernels ${ATTN_KERNELS:-generated library} --no-device --jobs "${JOBS:-2}" \
    --commit "$commit" --json "$stage.attn.json" >"$stage.attn.log" 2>&1 ||
    { grep -v ' ok$' "$stage.attn.log" >&2; echo "prepare.sh: error: see $stage.attn.log" >&2; exit 1; }
  echo "attention set: $(tail -1 "$stage.attn.log")"
elif [ "${ATTN:-1}" = 1 ]; then
  echo "prepare.sh: no attention set in $attn_fixtures (ctest -R e2e/attn/generate writes it): left out"
fi
quant_fixtures=${QUANT_FIXTURES:-$build/test/fixtures-quant}
if [ "${QUANT:-1}" = 1 ] && [ -d "$quant_fixtures" ]; then
  quant_models=$(cd "$quant_fixtures" && for d in */; do if [ -f "$d/model.keras" ]; then echo "${d%/}"; fi; done)
  # shellcheck disable=SC2086
  "$python" "$root/test/e2e/check_gpu.py" --dlc "$build/bin/dlc" --fixtures "$quant_fixtures" \
    --out "$stage" --models $quant_models --precision ${QUANT_PRECISIONS:-fp32} \
    --kernels ${QUANT_KERNELS:-generated library generated_sm_90 library_sm_90} --no-device \
    --jobs "${JOBS:-2}" --commit "$commit" --json "$stage.quant.json" >"$stage.quant.log" 2>&1 ||
    { grep -v ' ok$' "$stage.quant.log" >&2; echo "prepare.sh: error: see $stage.quant.log" >&2; exit 1; }
  echo "quantized set: $(tail -1 "$stage.quant.log")"
elif [ "${QUANT:-1}" = 1 ]; then
  echo "prepare.sh: no quantized set in $quant_fixtures (ctest -R e2e/quant/generate writes it): left out"
fi
if [ "${INT8:-1}" = 1 ]; then
  # shellcheck disable=SC2086
  "$python" "$root/test/e2e/check_gpu.py" --dlc "$build/bin/dlc" --fixtures "$fixtures" \
    --out "$stage" --models ${INT8_MODELS:-mnist_cnn mobilenet_v2} --precision int8 int8-fp16 \
    --kernels ${INT8_KERNELS:-generated library} --no-device --jobs "${JOBS:-2}" --commit "$commit" \
    --json "$stage.int8.json" >"$stage.int8.log" 2>&1 ||
    { grep -v ' ok$' "$stage.int8.log" >&2; echo "prepare.sh: error: see $stage.int8.log" >&2; exit 1; }
  echo "int8 set: $(tail -1 "$stage.int8.log")"
fi

# nlohmann-json as an install prefix (its CMake package finds the headers
# relative to itself).
nl=$build/gpu-nlohmann/nlohmann
rm -rf "$build/gpu-nlohmann" && mkdir -p "$nl/include" "$nl/share/cmake"
cp -r /usr/include/nlohmann "$nl/include/"
cp -r /usr/share/cmake/nlohmann_json "$nl/share/cmake/"

# What travels with every call besides the carry: tracked and untracked,
# not ignored files (and shared/ when the checkout has one), counted in whole
# blocks so that the batches fit however the tool measures.
limit=$((64 * 1024 * 1024))
tree=$(cd "$root" && { git ls-files -z --cached --others --exclude-standard;
  if [ -d shared ]; then find shared -type f -print0; fi; } | xargs -0 -r stat -c %s 2>/dev/null |
  awk '{s += int(($1 + 4095) / 4096) * 4096} END {print s + 0}') # in 4 KiB blocks, as pack.py
capacity=$((limit - tree - 512 * 1024)) # a margin for files added before the call
# campaign.sh sets CAPACITY: what call 1 leaves beside its benchmark batch and the wheels.
if [ -n "${CAPACITY:-}" ]; then capacity=$CAPACITY; fi
"$python" "$root/bench/gpu/pack.py" --stage "$stage" --out "$out" --capacity "$capacity" \
  --extra "$nl" --commit "$commit"
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
echo "working tree $(mib "$tree") MiB; each batch + the tree must stay <= 64 MiB:"
status=0
for b in $(ls "$out" | sort -n); do
  bytes=$(du -s --block-size=1 "$out/$b" | cut -f1) # blocks, or bytes if more
  apparent=$(du -sb "$out/$b" | cut -f1)
  [ "$apparent" -le "$bytes" ] || bytes=$apparent
  total=$((bytes + tree))
  echo "  carry/gpu/$b: $(mib "$bytes") MiB + tree = $(mib "$total") MiB"
  [ "$total" -le "$limit" ] || { echo "prepare.sh: error: carry/gpu/$b is over 64 MiB" >&2; status=1; }
  [ "$bytes" -le "$((capacity + 512 * 1024))" ] ||
    { echo "prepare.sh: error: carry/gpu/$b is over CAPACITY" >&2; status=1; }
done
exit $status
