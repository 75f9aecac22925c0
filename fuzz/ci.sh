#!/usr/bin/env bash
# The sanitizer job of CI (ctest fuzz/sanitized, label asan): builds
# fuzz/sanitized (ASan + UBSan + libFuzzer, clang 14, ccache; the readers and
# the compiler's passes and CUDA emitter for the emit target) into BUILD,
# replays every committed fuzz input, runs the sanitized isolated reader on the
# malformed corpus and the CLI regressions, and fuzzes each target briefly.
# Usage: fuzz/ci.sh BUILD MALFORMED_CORPUS [SECONDS_PER_TARGET]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1 malformed=$2 seconds=${3:-15}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$here")}
clang=$(command -v clang++-14 || command -v clang++ || true)
if [ -z "$clang" ]; then
  echo "fuzz/ci.sh: no clang++-14 (scripts/setup.sh installs it)"
  exit 1
fi
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0"
start=$(date +%s)
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$here/sanitized" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$clang" \
    -DCMAKE_C_COMPILER="${clang/clang++/clang}" >"$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; exit 1; }
fi
cmake --build "$build" -- -j"$(nproc)" >"$build.build.log" 2>&1 || { tail -40 "$build.build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"

# 1. Every seed and regression input of every target, once.
python3 "$here/run.py" --build "$build" --replay
echo "replay: $(( $(date +%s) - start )) s"

# 2. The isolated reader (fork, limits) under the sanitizers: the malformed
#    corpus, its valid models and the CLI regressions. A short time limit keeps
#    the known hangs cheap; each case must still end within 10 s.
DLC_READ_TIMEOUT=2 python3 "$here/replay_cli.py" --reader "$build/bin/dlc-read-model" \
  --malformed "$malformed" "$here/regressions/cli"
echo "reader replay: $(( $(date +%s) - start )) s"

# 3. A smoke run of each target: new inputs, in a scratch corpus, findings in
#    BUILD/findings/. Fork mode with timeouts ignored: libhdf5 loops forever
#    on some corrupt files, which dlc bounds by the reader's time limit (step 2
#    checks it), not in process. libhdf5 1.10 also has memory errors of its
#    own on corrupt files (fuzz/CAMPAIGN.md), which dlc contains in the
#    reader's child process and cannot fix: a finding whose innermost frame
#    outside the sanitizer runtime and libFuzzer is in libhdf5 (triage.py,
#    by sanitizer_frame.py's rule) is listed, not failed. Any other crash,
#    sanitizer report or leak fails the job.
smoke=$(mktemp -d)
trap 'rm -rf "$smoke"' EXIT
findings=$build/findings
rm -rf "$findings" && mkdir -p "$findings"
status=0
for t in keras_config keras_archive hdf5_model hdf5_weights tfjs npy artifact emit; do
  case $t in
    keras_config | tfjs) dict=json.dict ;;
    keras_archive) dict=zip.dict ;;
    hdf5_*) dict=hdf5.dict ;;
    *) dict=$t.dict ;;
  esac
  mkdir -p "$smoke/$t"
  "$build/bin/fuzz_$t" -fork=1 -ignore_timeouts=1 -ignore_crashes=1 -ignore_ooms=1 \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -dict="$here/dicts/$dict" \
    -artifact_prefix="$findings/$t-" "$smoke/$t" "$here/corpus/$t" >"$smoke/$t.log" 2>&1 || true
  echo "fuzz_$t: $(grep -E '^#[0-9]+: ' "$smoke/$t.log" | tail -1)"
  found=()
  for f in "$findings/$t-"crash-* "$findings/$t-"leak-* "$findings/$t-"oom-*; do
    if [ -e "$f" ]; then found+=("$f"); fi
  done
  if [ ${#found[@]} -gt 0 ]; then
    python3 "$here/triage.py" --build "$build" "$t" "${found[@]}" | sed 's/^/  /' || status=1
  fi
done
echo "total: $(( $(date +%s) - start )) s"
exit $status
