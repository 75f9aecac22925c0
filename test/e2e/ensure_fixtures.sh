#!/usr/bin/env bash
# Generates the Keras fixtures (or the malformed corpus) once per build: the
# output folder carries a stamp of the generator's sources and the pinned
# requirements, and is regenerated only when that changes. Generation goes to
# a temporary folder that is renamed into place when complete.
# Usage: ensure_fixtures.sh PYTHON GENERATOR OUTDIR [ARGS...]
set -euo pipefail
python=$1 generator=$2 out=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
# The stamp covers the generator, the modules of this folder it imports, and
# the pinned requirements (and those it names): editing one generator does not
# regenerate the other.
sources=("$generator")
for module in $(sed -n 's/^\(from\|import\) \([a-z_]*\).*/\2/p' "$generator" | sort -u); do
  [ -f "$here/$module.py" ] && sources+=("$here/$module.py")
done
# A generator that needs more packages names their pinned list in a line
# "# requirements: scripts/requirements-SET.txt"; the list joins the stamp.
for req in $(sed -n 's/^# requirements: \([A-Za-z0-9_./-]*\)$/\1/p' "$generator"); do
  sources+=("$here/../../$req")
done
stamp=$(cat "${sources[@]}" "$here/../../scripts/requirements.txt" | sha256sum | cut -d' ' -f1)
if [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$stamp" ]; then
  echo "fixtures up to date: $out"
  exit 0
fi
tmp="$out.tmp.$$"
rm -rf "$tmp"
start=$(date +%s)
KERAS_BACKEND=jax "$python" "$generator" "$tmp" "$@"
echo "$stamp" > "$tmp/.stamp"
rm -rf "$out"
mv "$tmp" "$out"
echo "generated $out in $(( $(date +%s) - start )) s"
