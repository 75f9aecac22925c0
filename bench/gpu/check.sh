#!/usr/bin/env bash
# The GPU checks of the CUDA backend, on the device machine (CUDA toolkit, no
# LLVM): builds the runtime-only configuration, runs every artifact that
# bench/gpu/prepare.sh put in carry/gpu/ on the GPU, compares each output with
# the CPU reference executor's (relative L2: fp32 <= 1e-4, fp16 <= 1e-2), runs
# compute-sanitizer memcheck on the MNIST CNN (and ResNet50 when present),
# and prints a table with the GPU's name; the same rows go to
# $OUT/gpu-check.json (commit it under bench/results/).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
carry=$root/carry/gpu
build=$root/build-gpu
out=${OUT:-$root/bench/results}
mkdir -p "$out"
cudnn=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__))' 2>/dev/null || true)
cmake -S "$root" -B "$build" -G Ninja -DDLC_BUILD_COMPILER=OFF -DDLC_BUILD_TESTS=OFF \
  -DCMAKE_PREFIX_PATH="$carry/nlohmann" \
  ${cudnn:+-DDLC_CUDNN_ROOT="$cudnn"} >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build "$build" >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)
rows=()
for art in "$carry"/*.dlcm; do
  base=$(basename "$art" .dlcm); model=${base%.*}; prec=${base##*.}
  ins=(); for f in "$carry/$model".input_*.npy; do ins+=(--input "$f"); done
  outs=()
  for r in "$carry/$base".ref_*.npy; do
    i=${r##*ref_}; outs+=(--output "$out/$base.gpu_$i")
  done
  if "$build/bin/dlc" run "$art" --device cuda "${ins[@]}" "${outs[@]}" 2>"$out/$base.err"; then
    worst=$(python3 -c "
import sys, numpy as np, glob
w = 0.0
for r in sorted(glob.glob('$carry/$base.ref_*.npy')):
    i = r.rsplit('ref_', 1)[1]
    g = np.load('$out/$base.gpu_' + i).astype(np.float64); e = np.load(r).astype(np.float64)
    w = max(w, float(np.linalg.norm(g - e) / max(np.linalg.norm(e), 1e-30)))
print('%.3g' % w)")
    limit=$([ "$prec" = fp16 ] && echo 1e-2 || echo 1e-4)
    ok=$(python3 -c "print('ok' if $worst <= $limit else 'FAIL')")
  else
    worst=error; ok=FAIL
  fi
  rows+=("$model $prec $worst $ok")
done
for m in mnist_cnn resnet50; do
  art=$(ls "$carry/$m".*.dlcm 2>/dev/null | head -1) || true
  [ -n "$art" ] || continue
  base=$(basename "$art" .dlcm)
  ins=(); for f in "$carry/$m".input_*.npy; do ins+=(--input "$f"); done
  if compute-sanitizer --tool memcheck --error-exitcode 9 "$build/bin/dlc" run "$art" --device cuda \
      "${ins[@]}" --output "$out/$base.memcheck_0.npy" >"$out/$base.memcheck.log" 2>&1; then
    rows+=("$m memcheck clean ok")
  else
    rows+=("$m memcheck errors FAIL")
  fi
done
{
  echo "GPU: $gpu"
  printf '%-28s %-6s %-12s %s\n' model prec "rel L2" result
  for r in "${rows[@]}"; do printf '%-28s %-6s %-12s %s\n' $r; done
} | tee "$out/gpu-check.txt"
python3 -c "
import json, sys
rows = [l.split() for l in open('$out/gpu-check.txt').read().splitlines()[2:]]
json.dump({'gpu': '''$gpu''', 'rows': rows}, open('$out/gpu-check.json', 'w'), indent=1)"
