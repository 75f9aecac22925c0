#!/usr/bin/env bash
# The GPU checks of the CUDA backend, on the device machine (CUDA toolkit and
# cuDNN; no LLVM, no GoogleTest): builds the runtime-only configuration (dlc,
# dlc-stress) in build-gpu/, then checks one batch that bench/gpu/prepare.sh
# packed into carry/gpu/N/ with test/e2e/check_gpu.py --carried:
#   compare   every artifact run with `dlc run --device cuda`, each output
#             against the CPU reference executor's by relative L2
#             (fp32 <= 1e-4, fp16 <= 1e-2);
#   memcheck  compute-sanitizer memcheck on the MNIST CNN and ResNet50;
#   stress    dlc-stress on the MNIST CNN and ResNet50: 8 threads x 100 runs
#             of one loaded model, every output bitwise identical.
# Parts of a split artifact are kept in build-gpu/parts/ until its last part
# arrives (the batches must then run back to back on one warm machine).
# Prints a summary (the GPU and its driver first, then rows and failures per
# precision, kernels and check, and the failed rows) and writes to
# $OUT (at most 8 files come back): gpu-check.bN.txt, gpu-check.bN.json (commit
# them under bench/results/; bench/gpu/merge.py joins batches) and
# gpu-logs.bN.tar.gz. Never stops midway: a failed build or a run past the
# time budget (BUDGET_S, default 540 s of the 600 s a command may take)
# still prints every row.
# Usage (device machine, carry ["carry/gpu/N"]):
#   OUT=$OUT bash bench/gpu/check.sh carry/gpu/N
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
start=$(date +%s)
batch=${1:-}
if [ -z "$batch" ]; then # the one batch carried
  found=("$root"/carry/gpu/*/manifest.json)
  [ ${#found[@]} -eq 1 ] && [ -f "${found[0]}" ] && batch=$(dirname "${found[0]}")
fi
if [ -z "$batch" ] || [ ! -f "$batch/manifest.json" ]; then
  echo "check.sh: error: name one batch that prepare.sh made: bench/gpu/check.sh carry/gpu/N" >&2
  exit 1
fi
batch=$(cd "$batch" && pwd)
n=$(basename "$batch")
build=${DLC_GPU_BUILD_DIR:-$root/build-gpu}
work=$build/work/b$n
stash=$build/parts
out=${OUT:-$root/bench/results}
budget=${BUDGET_S:-540}
logs=$work/logs
python=${PYTHON:-python3} # with NumPy
rm -rf "$work" && mkdir -p "$work/carried" "$logs" "$stash" "$out"

# The runtime-only build (bench/gpu/build_runtime.sh, shared with campaign.sh).
# shellcheck source=bench/gpu/build_runtime.sh
. "$root/bench/gpu/build_runtime.sh"
if build_runtime "$root" "$build" "$batch/nlohmann" "$logs"; then
  echo "check.sh: runtime-only build ok ($(($(date +%s) - start)) s)"
else
  echo "check.sh: error: the runtime-only build failed; every row below fails with it:"
  tail -20 "$logs/configure.log" "$logs/build.log" 2>/dev/null
fi

# The batch's files, and the artifacts whose last part it brings.
for f in "$batch"/*.dlcm "$batch"/*.npy "$batch/manifest.json"; do
  [ -e "$f" ] && ln -s "$f" "$work/carried/"
done
cp "$batch"/*.part*of* "$stash/" 2>/dev/null
python3 - "$batch/manifest.json" "$stash" "$work/carried" <<'EOF'
import hashlib, json, os, sys
manifest, stash, carried = sys.argv[1:]
for name, s in json.load(open(manifest)).get("split", {}).items():
    parts = [os.path.join(stash, "%s.part%dof%d" % (name, k, s["parts"]))
             for k in range(1, s["parts"] + 1)]
    have = [p for p in parts if os.path.exists(p)]
    if len(have) < len(parts):
        print("check.sh: %s: %d of %d parts here (batches %s)" % (
            name, len(have), len(parts), s["batches"]))
        continue
    h, dest = hashlib.sha256(), os.path.join(carried, name)
    with open(dest, "wb") as g:
        for p in parts:
            data = open(p, "rb").read()
            h.update(data)
            g.write(data)
    if h.hexdigest() != s["sha256"]:
        os.remove(dest)
        print("check.sh: %s: assembled from %d parts, but its SHA-256 differs" % (name, len(parts)))
    else:
        print("check.sh: %s: assembled from %d parts" % (name, len(parts)))
        for p in parts:
            os.remove(p)
EOF

commit=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('commit', ''))" "$batch/manifest.json")
json=$out/gpu-check.b$n.json
left=$((budget - ($(date +%s) - start)))
[ "$left" -gt 60 ] || left=60
echo "check.sh: batch $n: checking (at most $left s more)"
timeout "$left" "$python" -u "$root/test/e2e/check_gpu.py" --dlc "$build/bin/dlc" \
  --carried "$work/carried" --out "$work/run" --checks compare memcheck stress \
  --memcheck-models mnist_cnn resnet50 --stress "$build/bin/dlc-stress" \
  --stress-models mnist_cnn resnet50 --threads 8 --runs 100 --jobs 8 --progress \
  --commit "$commit" --json "$json" >"$logs/check.log" 2>&1
rc=$?
[ $rc -eq 124 ] && echo "check.sh: error: stopped after $left s: the rows not run are listed as such"
grep -q Traceback "$logs/check.log" && tail -20 "$logs/check.log"
# Here a summary and the failed rows (the call shows the output's end); every
# row in gpu-check.bN.txt.
"$python" "$root/bench/gpu/merge.py" "$json" --expect "$batch/manifest.json" \
  --json "$json" --txt "$out/gpu-check.b$n.txt" --summary
status=$?
cp "$work"/run/*.log "$logs/" 2>/dev/null
tar czf "$out/gpu-logs.b$n.tar.gz" -C "$work" logs 2>/dev/null
exit $status
