#!/usr/bin/env bash
# The GPU benchmark campaign (issue 12): correctness (bench/gpu/check.sh), then
# `dlc bench` and the baselines (bench/baselines/) on the seed models at their
# real sizes, packed into device calls of at most ~9 minutes and 64 MiB.
#
#   campaign.sh prepare        here (full build): the correctness batch
#                              (bench/gpu/prepare.sh), the models
#                              (bench/models/gen_models.py), every artifact
#                              (dlc compile --no-weights --arch sm_90), the
#                              wheels (bench/baselines/fetch_wheels.sh), packed
#                              into carry/bench/1..N; prints the device calls
#   campaign.sh device N       device machine: call N (runtime-only build;
#                              call 1 first runs check.sh on carry/gpu/1), its
#                              dlc bench runs and baselines, results in $OUT
#   campaign.sh report F...    here: campaign.bN.json files into
#                              bench/results/DATE-GPU.json and .md (DATE-GPU-2
#                              for a second run of the day, ...); the baseline
#                              cells the run did not measure from the committed
#                              runs on the same GPU and driver (EARLIER: where
#                              they are, bench/results; empty: none)
#   campaign.sh --no-device    the dry run here (ctest bench/campaign_dry_run):
#                              prepare with the small fixtures, every call's
#                              device part without a GPU, the report
#
# Environment (prepare): MODELS (default: mnist_cnn text_lstm vgg16_transfer
# resnet50 mobilenet_v2), MODELS_DIR (NAME/model.keras and model.json, and for
# int8 NAME/calib/*.npy or a fixture's NAME/input_0.npy; default
# BUILD/bench-models, written by gen_models.py), BATCHES (1 32 256),
# PRECISIONS (fp16; add fp32, int8 or int8-fp16 where the lease allows: int8
# is dlc's post-training int8, calibrated on those batches, generated and
# library (its int8 GEMMs as cuBLASLt int32 sums) kernels, no auto rows and
# no baseline; int8-fp16 the same with --int8-fallback fp16),
# KERNELS (generated
# library auto), COMPILE_AT (where torch.compile max-autotune runs,
# MODEL:PRECISION:BATCH; default the targets of bench/README.md), BASELINE_AT
# (the same for the other baselines; default COMPILE_AT's, "all" for every
# model, precision and batch; "missing" for both: every cell no committed
# report in RESULTS (bench/results) measured on a GPU whose name holds GPU,
# e.g. GPU=H200, as the device tool's status names it), CHECK (1: the correctness batches too; CHECK_MIB,
# 24: what call 1 keeps for the first),
# CHECK_MODELS, CHECK_PRECISIONS and CHECK_KERNELS (prepare.sh's MODELS,
# PRECISIONS and KERNELS: small, fp32 fp16, generated library), WHEELS (1:
# fetch them), JOBS (2), DLC_BUILD_DIR (build), CARRY (carry),
# CALIBRATION_CACHE (BUILD/bench-calibration: int8's calibration caches, one
# per model, kept between prepares).
# bench/README.md: the exact calls.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${DLC_BUILD_DIR:-$root/build}
carry=${CARRY:-$root/carry}
python=$root/.venv/bin/python
[ -x "$python" ] || python=python3
limit=$((64 * 1024 * 1024))
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
size_of() { if [ -e "$1" ]; then du -sb "$1" | cut -f1; else echo 0; fi; }

tree_bytes() { # what travels with every call besides the carry (as prepare.sh counts)
  (cd "$root" && { git ls-files -z --cached --others --exclude-standard
    if [ -d shared ]; then find shared -type f -print0; fi; } | xargs -0 -r stat -c %s 2>/dev/null |
    awk '{s += int(($1 + 4095) / 4096) * 4096} END {print s + 0}')
}

prepare() {
  local models=${MODELS:-"mnist_cnn text_lstm vgg16_transfer resnet50 mobilenet_v2"}
  local batches=${BATCHES:-"1 32 256"} precisions=${PRECISIONS:-fp16}
  local kernels=${KERNELS:-"generated library auto"}
  local compile_at=${COMPILE_AT:-"mnist_cnn:fp16:1 text_lstm:fp16:1 mobilenet_v2:fp16:1 vgg16_transfer:fp16:32 resnet50:fp16:256"}
  local baseline_at=${BASELINE_AT:-$compile_at}
  local models_dir=${MODELS_DIR:-$build/bench-models} stage=${STAGE:-$build/bench-stage}
  local dlc=$build/bin/dlc commit
  [ -x "$dlc" ] || { echo "campaign.sh: error: no $dlc: run scripts/build.sh" >&2; exit 1; }
  commit=$(git -C "$root" rev-parse HEAD)
  git -C "$root" diff --quiet HEAD -- || commit=$commit-dirty
  # Call 1 carries the first benchmark batch and the first correctness batch:
  # the benchmark gets all but CHECK_MIB of it, the correctness batches then
  # what the benchmark batch leaves (the later ones are calls of their own).
  local first=$limit
  [ "${CHECK:-1}" = 1 ] && first=$((limit - ${CHECK_MIB:-24} * 1024 * 1024))
  [ -n "${MODELS_DIR:-}" ] || "$python" "$root/bench/models/gen_models.py" "$models_dir" --models $models
  if [ "${WHEELS:-1}" = 1 ]; then # PyPI here; the dry run (CI) leaves them out
    PYTHON=$python "$root/bench/baselines/fetch_wheels.sh" "$carry/wheels" >/dev/null
  fi
  rm -rf "$stage" && mkdir -p "$stage"
  # Every artifact, JOBS at a time; then the plan, dlc first, baselines by cost.
  local m p k b
  for m in $models; do
    cp "$models_dir/$m/model.json" "$stage/$m.json"
    # int8's calibration set: gen_models.py's batches, or a fixture's input.
    if [[ " $precisions " == *" int8"* ]]; then
      mkdir -p "$stage/calib/$m"
      if [ -d "$models_dir/$m/calib" ]; then
        cp "$models_dir/$m/calib/"*.npy "$stage/calib/$m/"
      elif [ -f "$models_dir/$m/input_0.npy" ]; then
        cp "$models_dir/$m/input_0.npy" "$stage/calib/$m/b0000.npy"
      fi
    fi
  done
  # int8: each model calibrated once, JOBS models at a time, into its
  # calibration cache (docs/quantization.md); its compiles below read it (the
  # batch, the kernels and the fallback are not in the cache's key). The
  # caches outlive the stage: a later prepare whose graph, weights and
  # batches are the same calibrates nothing (the key decides).
  export CALIB_CACHE=${CALIBRATION_CACHE:-$build/bench-calibration}
  if [[ " $precisions " == *" int8"* ]]; then
    mkdir -p "$CALIB_CACHE"
    for m in $models; do echo "$m"; done | xargs -P "${JOBS:-2}" -L 1 sh -c \
      '"$0" compile "$1/$3/model.keras" --precision int8 --calibrate "$2/calib/$3" \
         --calibration-cache "$CALIB_CACHE/$3.json" --stop-after int8 --emit mlir -o /dev/null \
         >"$2/calib/$3.log" 2>&1 ||
         echo "campaign.sh: calibrating $3 failed: $(tail -1 "$2/calib/$3.log")" >&2' \
      "$dlc" "$models_dir" "$stage"
  fi
  for m in $models; do
    for p in $precisions; do for b in $batches; do for k in $kernels; do
      # int8 under auto is int8 generated (auto takes no int8 library call).
      case $p in int8*) [ "$k" = auto ] && continue ;; esac
      echo "$m $p $k $b"
    done; done; done
  done | xargs -P "${JOBS:-2}" -L 1 sh -c 'dir=$1 stage=$2 m=$3 p=$4 k=$5 b=$6
    o="$stage/$m.$p.$k.b$b"
    shift 6
    precision=$p
    case $p in
      int8) set -- --calibrate "$stage/calib/$m" --calibration-cache "$CALIB_CACHE/$m.json" ;;
      int8-fp16) precision=int8
        set -- --calibrate "$stage/calib/$m" --calibration-cache "$CALIB_CACHE/$m.json" --int8-fallback fp16 ;;
    esac
    "$0" compile "$dir/$m/model.keras" --arch sm_90 --no-weights --precision "$precision" --kernels "$k" \
      --batch "$b" "$@" -o "$o.dlcm" >"$o.log" 2>&1 ||
      { tail -1 "$o.log" >"$o.error"; echo "campaign.sh: compiling $m $p $k batch $b failed: $(cat "$o.error")" >&2; }' \
      "$dlc" "$models_dir" "$stage"
  # shellcheck disable=SC2086 # the lists split into words
  "$python" "$root/bench/gpu/campaign.py" plan --stage "$stage" --models $models \
    --precisions $precisions --batches $batches --kernels $kernels \
    --compile-at "$compile_at" --baseline-at "$baseline_at" \
    --results "${RESULTS:-$root/bench/results}" --gpu "${GPU:-}"
  local nl=$build/gpu-nlohmann/nlohmann
  if [ ! -d "$nl" ]; then
    mkdir -p "$nl/include" "$nl/share/cmake"
    cp -r /usr/include/nlohmann "$nl/include/"
    cp -r /usr/share/cmake/nlohmann_json "$nl/share/cmake/"
  fi
  local tree wheels capacity
  tree=$(tree_bytes)
  wheels=$(size_of "$carry/wheels")
  capacity=$((limit - tree - wheels - 512 * 1024))
  "$python" "$root/bench/gpu/campaign.py" pack --stage "$stage" --out "$carry/bench" \
    --capacity "$capacity" --first-capacity "$((first - tree - wheels - 512 * 1024))" \
    --extra "$nl" --budget "${CALL_BUDGET_S:-420}" --commit "$commit"
  rm -rf "$carry/gpu"
  if [ "${CHECK:-1}" = 1 ]; then
    echo "campaign.sh: the correctness batches (bench/gpu/prepare.sh)"
    # Its own lists: the campaign's PRECISIONS and KERNELS are the benchmark's.
    MODELS=${CHECK_MODELS:-small} PRECISIONS=${CHECK_PRECISIONS:-"fp32 fp16"} \
      KERNELS=${CHECK_KERNELS:-"generated library"} \
      CAPACITY=$((limit - tree - wheels - $(size_of "$carry/bench/1") - 1024 * 1024)) \
      "$root/bench/gpu/prepare.sh"
  fi
  # The order to run them in, back to back on one machine: call 1 (the
  # correctness batch 1, then benchmarks), the other correctness batches
  # (about a minute each), then the other benchmark batches.
  echo "campaign.sh: working tree $(mib "$tree") MiB, wheels $(mib "$wheels") MiB; device calls:"
  # The calls name the carry as the device sees it: relative to the
  # repository, with CARRY= where it is not the default.
  local n status=0 total extra c env="" w=""
  c=$(realpath -m --relative-to="$root" "$carry")
  [ "$c" = carry ] || env="CARRY=$c "
  [ -d "$carry/wheels" ] && w=", \"$c/wheels\""
  if [ -d "$carry/bench/1" ]; then
    total=$((tree + wheels + $(size_of "$carry/bench/1"))) extra=""
    if [ -d "$carry/gpu/1" ]; then
      total=$((total + $(size_of "$carry/gpu/1"))) extra=", \"$c/gpu/1\""
    fi
    echo "  run(command=\"OUT=\$OUT ${env}bash bench/gpu/campaign.sh device 1\", carry=[\"$c/bench/1\"$w$extra], timeout_s=600)   # $(mib "$total") MiB"
    [ "$total" -le "$limit" ] || { echo "campaign.sh: error: call 1 is over 64 MiB" >&2; status=1; }
  fi
  for n in $( (ls "$carry/gpu" 2>/dev/null || true) | sort -n); do
    [ "$n" != 1 ] || continue
    total=$((tree + $(size_of "$carry/gpu/$n")))
    echo "  run(command=\"OUT=\$OUT BUDGET_S=120 bash bench/gpu/check.sh $c/gpu/$n\", carry=[\"$c/gpu/$n\"], timeout_s=150)   # $(mib "$total") MiB"
    [ "$total" -le "$limit" ] || { echo "campaign.sh: error: $c/gpu/$n is over 64 MiB" >&2; status=1; }
  done
  for n in $(ls "$carry/bench" | sort -n); do
    [ "$n" != 1 ] || continue
    total=$((tree + wheels + $(size_of "$carry/bench/$n")))
    echo "  run(command=\"OUT=\$OUT ${env}bash bench/gpu/campaign.sh device $n\", carry=[\"$c/bench/$n\"$w], timeout_s=600)   # $(mib "$total") MiB"
    [ "$total" -le "$limit" ] || { echo "campaign.sh: error: call $n is over 64 MiB" >&2; status=1; }
  done
  return $status
}

device() {
  local n=$1 start out build_gpu batch logs left
  start=$(date +%s)
  batch=$carry/bench/$n
  [ -f "$batch/manifest.json" ] || { echo "campaign.sh: error: no $batch (carry it)" >&2; exit 1; }
  out=${OUT:-$root/bench/results}
  build_gpu=${DLC_GPU_BUILD_DIR:-$root/build-gpu}
  logs=$build_gpu/work/campaign-b$n/logs
  mkdir -p "$out" "$logs"
  if [ "$n" = 1 ] && [ -f "$carry/gpu/1/manifest.json" ]; then
    # The correctness checks first (they build the runtime too).
    BUDGET_S=${CHECK_BUDGET_S:-200} bash "$root/bench/gpu/check.sh" "$carry/gpu/1" || true
  fi
  # shellcheck source=bench/gpu/build_runtime.sh
  . "$root/bench/gpu/build_runtime.sh"
  build_runtime "$root" "$build_gpu" "$batch/nlohmann" "$logs" ||
    { echo "campaign.sh: error: the runtime-only build failed"; tail -20 "$logs/build.log"; }
  if ls "$carry"/wheels/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target /tmp/site "$carry"/wheels/*.whl >"$logs/pip.log" 2>&1 &&
      export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  fi
  left=$((${BUDGET_S:-540} - ($(date +%s) - start)))
  python3 "$root/bench/gpu/campaign.py" device "$batch" --dlc "$build_gpu/bin/dlc" --out "$out" \
    --budget "$left" --python python3 >"$logs/campaign.log" 2>&1 || true
  # Each item's own log (a failed baseline's traceback) travels with the rest.
  mkdir -p "$logs/items" && cp "$out/b$n/"*.log "$logs/items/" 2>/dev/null || true
  tar czf "$out/campaign-logs.b$n.tar.gz" -C "$build_gpu/work" "campaign-b$n" 2>/dev/null || true
  rm -rf "$out/b$n"
  tail -n +1 "$logs/campaign.log" | tail -60
}

report() {
  local gpu date
  date=$(date -u +%Y-%m-%d)
  gpu=$(python3 -c "import json,sys
for p in sys.argv[1:]:
    for r in json.load(open(p))['rows']:
        n = ((r.get('result') or {}).get('device') or {}).get('name')
        if n: print(n.replace('NVIDIA ', '').split()[0]); raise SystemExit
print('GPU')" "$@")
  mkdir -p "$root/bench/results"
  # A second run on the same day and GPU gets its own name (-2, -3, ...), not
  # the first one's.
  local stem=$date-$gpu n=2
  while [ -e "$root/bench/results/$stem.json" ]; do
    stem=$date-$gpu-$n
    n=$((n + 1))
  done
  # The baseline cells this run did not measure, from the committed runs on
  # the same GPU and driver (EARLIER= leaves them empty).
  python3 "$root/bench/gpu/campaign.py" report "$@" --json "$root/bench/results/$stem.json" \
    --md "$root/bench/results/$stem.md" --earlier "${EARLIER-$root/bench/results}"
  echo "campaign.sh: bench/results/$stem.json and .md"
}

dry_run() {
  local dir=$build/bench-dryrun n first
  rm -rf "$dir" && mkdir -p "$dir/out" "$dir/results" "$dir/again" "$dir/plan"
  carry=$dir/carry
  # Two batch sizes: each baseline runs them in one process.
  MODELS="mnist_cnn text_lstm" MODELS_DIR=${FIXTURES:-$build/test/fixtures} BATCHES="1 2" \
    PRECISIONS="fp16 int8 int8-fp16" KERNELS="generated library auto" \
    COMPILE_AT="mnist_cnn:fp16:1" BASELINE_AT=all CHECK=0 WHEELS=0 STAGE=$dir/stage \
    CALIBRATION_CACHE=$dir/calibration prepare
  for n in $(ls "$dir/carry/bench" | sort -n); do
    "$python" "$root/bench/gpu/campaign.py" device "$dir/carry/bench/$n" --dlc "$build/bin/dlc" \
      --out "$dir/out" --budget 600 --python "$python" --no-device
  done
  # The report as committed (a DATE-GPU name), then the same run with only
  # its torch.compile row of the baselines (the GPU's name comes from the
  # rows), filled from the first as a later run's report would be; then a
  # plan of the cells that report did not measure.
  first=$dir/results/$(date -u +%Y-%m-%d)-cpu.json
  "$python" "$root/bench/gpu/campaign.py" report "$dir"/out/campaign.b*.json \
    --json "$first" --md "$dir/report.md" >/dev/null
  for n in "$dir"/out/campaign.b*.json; do
    "$python" -c "import json, sys
d = json.load(open(sys.argv[1]))
d['rows'] = [r for r in d['rows'] if r['kind'] == 'dlc' or r['tool'] == 'keras-torch-compile']
json.dump(d, open(sys.argv[2], 'w'))" "$n" "$dir/again/$(basename "$n")"
  done
  "$python" "$root/bench/gpu/campaign.py" report "$dir"/again/campaign.b*.json \
    --json "$dir/again/report.json" --md "$dir/again/report.md" --earlier "$dir/results" >/dev/null
  "$python" "$root/bench/gpu/campaign.py" plan --stage "$dir/plan" --models mnist_cnn text_lstm \
    --precisions fp16 fp32 --batches 1 2 4 --kernels generated --compile-at missing \
    --baseline-at missing --results "$dir/results" --gpu CPU >/dev/null
  # Every dlc row ends in dlc's one-line no-GPU error, every baseline's CPU
  # path passes; the filled report has the first one's baseline cells, each
  # marked; the plan holds exactly the cells the first report lacks.
  "$python" - "$first" "$dir/again/report.json" "$dir/again/report.md" "$dir/plan/plan.json" <<'PY'
import json, re, sys
first, again = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
md, plan = open(sys.argv[3]).read(), json.load(open(sys.argv[4]))
rows = first["rows"]
bad = ["unexpected: %s" % json.dumps(r)[:300] for r in rows
       if (r["kind"] == "dlc" and "no CUDA device" not in (r["error"] or ""))
       or (r["kind"] != "dlc" and r["status"] != "ok")]
baselines = [r for r in rows if r["kind"] != "dlc"]
groups = {}
for r in baselines:
    if r["tool"] != "keras-torch-compile":  # planned at one cell
        groups.setdefault((r["tool"], r["model"], r["precision"]), []).append(r)
if not groups or any(sorted(int(r["batch"]) for r in g) != [1, 2] or r.get("process") is None
                     or len(set(r.get("process") for r in g)) != 1 for g in groups.values()
                     for r in g):
    bad.append("the baselines did not run both batch sizes, one process each")
tools = {"XLA": "keras-jax-xla", "Inductor": "keras-torch-compile",
         "eager": "keras-torch-eager", "library sum": "torch-library"}
key = lambda t: (t["model"], t["precision"], t["batch"])  # noqa: E731
filled = {key(t): t for t in again["table"]}
cells = 0
for t in first["table"]:
    for col in tools:
        if col in t:
            u = filled.get(key(t), {})
            # Inductor's cell was measured by the run itself: not reused.
            source = None if col == "Inductor" else sys.argv[1].rsplit("/", 1)[-1]
            cells += source is not None
            if u.get(col) != t[col] or u.get("sources", {}).get(col) != source:
                bad.append("not filled from the first report: %s %s" % (key(t), col))
if any("wall_s" not in r["result"] for r in baselines):
    bad.append("a baseline row without its batch size's wall_s")
if len(again["reused"]) != cells or len(re.findall(r"\d\*", md)) != cells:
    bad.append("%d cells reused of %d" % (len(again["reused"]), cells))
measured = {(r["tool"], r["model"], r["precision"], int(r["batch"])) for r in baselines}
want = {(tool, m, p, b) for tool in tools.values() for m in ("mnist_cnn", "text_lstm")
        for p in ("fp16", "fp32") for b in (1, 2, 4)} - measured
got = {(i["tool"], i["model"], i["precision"], b) for i in plan["items"]
       if i["kind"] != "dlc" for b in i["batches"]}
if got != want:
    bad.append("missing cells planned: %d extra, %d left out" % (len(got - want), len(want - got)))
for b in bad:
    print("campaign.sh: dry run: %s" % b)
print("campaign.sh: dry run: %d rows (%d dlc bench, %d baselines), %d baseline cells filled "
      "from an earlier report, %d missing cells planned, %s" % (
          len(rows), sum(r["kind"] == "dlc" for r in rows), len(baselines), cells, len(got),
          "ok" if not bad else "%d unexpected" % len(bad)))
sys.exit(1 if bad or not rows else 0)
PY
}

case ${1:-} in
  prepare) prepare ;;
  device) device "${2:?campaign.sh device N}" ;;
  report) shift; report "$@" ;;
  --no-device) dry_run ;;
  *) sed -n '2,46p' "$0" | sed 's/^# \{0,1\}//'; exit 1 ;;
esac
