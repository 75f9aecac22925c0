"""A notebook-style tour of the dlc Python package (run it as a script; ctest runs it).

    PYTHONPATH=build/python KERAS_BACKEND=jax .venv/bin/python examples/python/notebook.py

Builds a small Keras model (no training: random weights), compiles it, runs it on the CPU
reference executor against Keras, looks at the kernels and the memory plan, and compares it with
Keras layer by layer. On a machine with a GPU it runs on the GPU too.
"""

import os
import sys
import tempfile

os.environ.setdefault("KERAS_BACKEND", "jax")

import keras  # noqa: E402
import numpy as np  # noqa: E402

import dlc  # noqa: E402

# %% A small Keras model, built in memory.
keras.utils.set_random_seed(0)
model = keras.Sequential([
    keras.Input((16, 16, 3), name="image"),
    keras.layers.Conv2D(8, 3, padding="same", activation="relu", name="conv"),
    keras.layers.MaxPooling2D(2, name="pool"),
    keras.layers.Flatten(name="flatten"),
    keras.layers.Dense(10, activation="softmax", name="probs"),
], name="tiny_cnn")
x = np.random.default_rng(0).normal(size=(4, 16, 16, 3)).astype(np.float32)

# %% Compile it: the same driver as `dlc compile`.
compiled = dlc.compile(model)
print(compiled)
print("inputs: ", compiled.inputs)
print("outputs:", compiled.outputs)

# %% Run it on the CPU reference executor and check it against Keras.
y = compiled(x, device="cpu")
expected = model.predict(x, verbose=0)
print("max |dlc - keras| =", float(np.abs(y - expected).max()))
assert np.allclose(y, expected, rtol=1e-4, atol=1e-6)

# %% The kernels and the memory plan (the first look compiles the kernels with NVRTC).
for k in compiled.kernels:
    print("kernel %-20s %-14s %s" % (k.name, k.family, ", ".join(k.layers)))
print(compiled.memory)

# %% The artifact: save it, load it back.
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "tiny_cnn.dlcm")
    compiled.save(path)
    loaded = dlc.load(path)
    print("saved and loaded:", loaded)
    if dlc.cuda_available():
        # %% On the GPU: NumPy in and out, or any DLPack GPU array with no copy.
        y_gpu = loaded(x[:1], device="cuda")
        print("GPU max |dlc - keras| =", float(np.abs(y_gpu - expected[:1]).max()))

# %% Where is accuracy lost? Keras layer by layer against dlc's pipeline.
report = dlc.compare(model, x, precision="fp16")
print("first layer over the threshold:", report.first_bad)
sys.exit(0)
