#!/usr/bin/env bash
# Nsight Compute on carried artifacts (issue 12 Part 2: the evidence behind a
# kernel change: occupancy, tensor-pipe use, memory throughput, stall reasons).
#
#   profile.sh ART.dlcm...          device machine: builds the runtime-only
#                                   configuration (build_runtime.sh, as
#                                   campaign.sh does; nlohmann from the
#                                   artifact's batch folder), then per artifact
#                                   one `dlc bench --warmup 1 --iters 1`
#                                   (DLC_WEIGHTS_SYNTHETIC=1) under
#                                   ncu, every kernel launch of about one
#                                   inference (2 x steps + 8 launches), and
#                                   prints ncu_table.py's table of the TOP
#                                   slowest kernels
#   profile.sh --no-device ART...   here: the same steps without a GPU (CI's
#                                   bench/profile_dry_run): the artifact's step
#                                   count and the ncu command line
#
# Writes to $OUT per artifact STEM: ncu-STEM.ncu-rep (the report),
# ncu-STEM.raw.csv (every metric, one row per kernel launch: `ncu --import
# ... --page raw --csv`) and ncu-STEM.txt (the table); commit the .csv and
# .txt under bench/results/. ncu runs with --clock-control none (the device
# README: leave the clocks alone) and the sections SpeedOfLight, Occupancy,
# LaunchStats, WarpStateStats, ComputeWorkloadAnalysis and
# MemoryWorkloadAnalysis, plus the tensor pipe's active cycles
# (sm__pipe_tensor_op_hmma_cycles_active; dropped, with a note, if this ncu
# does not know it). Durations under ncu are of one launch with caches
# flushed: for the ranking and the counters, not for the latency table.
#
# Environment: NCU (ncu, else /usr/local/cuda/bin/ncu), TOP (20), LAUNCHES
# (override the launch count), BUDGET_S (540: artifacts past it are skipped),
# DLC_GPU_BUILD_DIR (build-gpu).
# Usage (device machine; the artifacts of a campaign batch, carried):
#   OUT=$OUT bash bench/gpu/profile.sh carry/bench/2/resnet50.fp16.generated.b256.dlcm
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
start=$(date +%s)
device=1
if [ "${1:-}" = --no-device ]; then
  device=0
  shift
fi
[ $# -ge 1 ] || { sed -n '2,34p' "$0" | sed 's/^# \{0,1\}//'; exit 1; }
out=${OUT:-$root/bench/results}
build=${DLC_GPU_BUILD_DIR:-$root/build-gpu}
python=python3
[ -x "$root/.venv/bin/python" ] && [ $device = 0 ] && python=$root/.venv/bin/python
mkdir -p "$out"
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats"
sections="$sections --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis"
tensor_metric=sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active

for art in "$@"; do
  [ -f "$art" ] || { echo "profile.sh: error: $art: no such artifact" >&2; exit 1; }
done
if [ $device = 1 ]; then
  # shellcheck source=bench/gpu/build_runtime.sh
  . "$root/bench/gpu/build_runtime.sh"
  logs=$build/work/profile/logs
  nlohmann=$(dirname "$1")/nlohmann
  build_runtime "$root" "$build" "$nlohmann" "$logs" ||
    { echo "profile.sh: error: the runtime-only build failed"; tail -20 "$logs/build.log"; exit 1; }
  dlc=$build/bin/dlc
  ncu=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
  head -12 "$logs/device.log"
else
  dlc=${DLC_BUILD_DIR:-$root/build}/bin/dlc
  ncu=ncu
fi

# The campaign's artifacts are compiled --no-weights: zero weights (timing only).
export DLC_WEIGHTS_SYNTHETIC=1
for art in "$@"; do
  stem=$(basename "$art" .dlcm)
  if [ $(($(date +%s) - start)) -gt "${BUDGET_S:-540}" ]; then
    echo "profile.sh: $stem: skipped (past BUDGET_S)"
    continue
  fi
  # One inference: the kernels and library calls `dlc inspect` lists (a
  # library call may launch a few kernels), twice, and a margin.
  steps=$("$dlc" inspect "$art" | awk '/^(Kernels|Library calls) \(/ {
    gsub(/[^0-9]/, "", $NF); n += $NF } END { print n + 0 }')
  [ "$steps" -gt 0 ] || { echo "profile.sh: error: $art: no steps in dlc inspect's listing" >&2; exit 1; }
  launches=${LAUNCHES:-$((2 * steps + 8))}
  cmd=("$ncu" --clock-control none --launch-count "$launches" $sections
       --metrics "$tensor_metric" -f -o "$out/ncu-$stem"
       "$dlc" bench "$art" --warmup 1 --iters 1)
  echo "profile.sh: $stem: $steps steps, $launches launches"
  if [ $device = 0 ]; then
    echo "  ${cmd[*]}"
    continue
  fi
  log=$out/ncu-$stem.log
  if ! "${cmd[@]}" >"$log" 2>&1; then
    if grep -qi "metric" "$log"; then
      echo "profile.sh: $stem: ncu refused $tensor_metric; again without it"
      cmd=("$ncu" --clock-control none --launch-count "$launches" $sections -f -o "$out/ncu-$stem"
           "$dlc" bench "$art" --warmup 1 --iters 1)
      "${cmd[@]}" >"$log" 2>&1 || { tail -5 "$log"; continue; }
    else
      tail -5 "$log"
      continue
    fi
  fi
  "$ncu" --import "$out/ncu-$stem.ncu-rep" --page raw --csv >"$out/ncu-$stem.raw.csv" 2>>"$log"
  "$python" "$root/bench/gpu/ncu_table.py" "$out/ncu-$stem.raw.csv" --top "${TOP:-20}" |
    tee "$out/ncu-$stem.txt"
done
