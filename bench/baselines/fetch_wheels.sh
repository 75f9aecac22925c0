#!/usr/bin/env bash
# Downloads the wheels the baselines need on the device machine, which has
# PyTorch and JAX but not Keras (bench/baselines/requirements.txt: Keras pinned
# and what the image lacks), for its Python (CPython 3.12, manylinux x86-64),
# into carry/wheels/ (git ignored), and checks their size against what a
# device call may carry. Needs PyPI (here, not there).
#
# On the device: python3 -m pip install -q --no-index --no-deps --no-compile \
#   --target /tmp/site carry/wheels/*.whl && export PYTHONPATH=/tmp/site
# (bench/gpu/campaign.sh does it).
#
# Usage: bench/baselines/fetch_wheels.sh [OUT_DIR]   (default carry/wheels)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/carry/wheels}
python=${PYTHON:-python3}
mkdir -p "$out"
grep -v '^#' "$root/bench/baselines/requirements.txt" | grep -v '^$' | while read -r req; do
  "$python" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux1_x86_64 -d "$out" "$req"
done
bytes=$(du -sb "$out" | cut -f1)
limit=$((8 * 1024 * 1024)) # what campaign.sh leaves them of a 64 MiB call
echo "fetch_wheels.sh: $(ls "$out" | wc -l) wheels, $bytes bytes in $out"
ls -l "$out" | tail -n +2 | awk '{print "  " $NF ": " $5 " bytes"}'
[ "$bytes" -le "$limit" ] || { echo "fetch_wheels.sh: error: over $limit bytes" >&2; exit 1; }
