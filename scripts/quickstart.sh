#!/usr/bin/env bash
# README command (a): set up, build, and run the main job on the bundled
# example, the MNIST CNN of test/e2e/fixture_models.py: real Keras writes it
# (model.keras, an input and Keras's output), dlc compiles it (the execution
# plan: kernels and memory plan, printed in short), runs it on the CPU
# reference executor with every pipeline stage checked, and the result is
# compared with Keras's, in fp32 and in fp16.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build=${DLC_BUILD_DIR:-$root/build}
out=$build/quickstart
python=$root/.venv/bin/python
if [ ! -f "$out/mnist_cnn/model.keras" ]; then
  KERAS_BACKEND=jax "$python" "$root/test/e2e/gen_fixtures.py" "$out" --only mnist_cnn --no-k2 >"$out.log" 2>&1 ||
    { cat "$out.log"; exit 1; }
fi
model=$out/mnist_cnn/model.keras
echo "== dlc compile $model --emit mlir (kernels of the plan)"
"$build/bin/dlc" compile "$model" --emit mlir -o "$out/mnist_cnn.plan.mlir"
grep -o 'exec.kernel "[^"]*"\|layers = \[[^]]*\]\|exec.arena_size = [0-9]*\|exec.peak_live = [0-9]*\|exec.weights_size = [0-9]*' \
  "$out/mnist_cnn.plan.mlir" | paste -sd' ' | sed 's/ exec.kernel/\n  exec.kernel/g; s/^/  /'
echo
for precision in fp32 fp16; do
  echo "== dlc run $model --device cpu --precision $precision --verify-stages, compared with Keras"
  "$python" "$root/test/e2e/compare.py" --dlc "$build/bin/dlc" --fixtures "$out" \
    --model mnist_cnn --format keras --precision "$precision" --verify-stages
done
