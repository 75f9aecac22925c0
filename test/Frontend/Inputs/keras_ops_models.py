"""Writes small Keras 3 JSON models (with an empty weights file) and a TF.js model into DIR
for keras-ops.test: keras.ops nodes with constant arguments, an unsupported operation, and
InceptionResNetV2's CustomScaleLayer in a file that records no module.

Usage: keras_ops_models.py DIR"""
import json
import os
import sys

import h5py
import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def kt(layer):
    return {"class_name": "__keras_tensor__",
            "config": {"shape": [None, 4], "dtype": "float32", "keras_history": [layer, 0, 0]}}


def op(cls, name, args):
    return {"module": "keras.src.ops.numpy", "class_name": cls, "config": {"name": name},
            "registered_name": cls, "name": name,
            "inbound_nodes": [{"args": args, "kwargs": {}}]}


def k3_json(path, layers, output):
    model = {"module": "keras.src.models.functional", "class_name": "Functional",
             "config": {"name": "m", "trainable": True, "layers": [
                 {"module": "keras.layers", "class_name": "InputLayer", "name": "x",
                  "config": {"batch_shape": [None, 4], "dtype": "float32", "name": "x"},
                  "inbound_nodes": []}] + layers,
                 "input_layers": [["x", 0, 0]], "output_layers": [[output, 0, 0]]},
             "registered_name": "Functional"}
    with open(path + ".json", "w") as f:
        json.dump(model, f)
    with h5py.File(path + ".weights.h5", "w") as f:
        f.create_group("layers/input_layer/vars")
        f.create_group("vars")


# y = maximum((3 - x) / 2, 0.25) * (1/6) - minimum(x, 1)
k3_json(os.path.join(out, "ops"), [
    op("Subtract", "sub", [3.0, kt("x")]),
    op("TrueDivide", "div", [kt("sub"), 2]),
    op("Maximum", "max", [kt("div"), 0.25]),
    op("Multiply", "mul", [kt("max"), 0.16666666666666666]),
    op("Minimum", "min", [kt("x"), 1.0]),
    op("Subtract", "out", [kt("mul"), kt("min")]),
], "out")
x = np.array([[-2.0, 0.5, 2.5, 7.0], [3.0, -0.25, 1.0, 100.0]], dtype=np.float32)
np.save(os.path.join(out, "x.npy"), x)
f32 = np.float32
y = np.maximum((f32(3.0) - x) / f32(2), f32(0.25)) * f32(1 / 6) - np.minimum(x, f32(1.0))
np.save(os.path.join(out, "expected.npy"), y.astype(np.float32))

k3_json(os.path.join(out, "sum"), [op("Sum", "total", [kt("x")])], "total")
k3_json(os.path.join(out, "boolean"), [op("Add", "plus", [kt("x"), True])], "plus")

# TF.js (no modules): CustomScaleLayer written as a bare class name.
tfjs = {"format": "layers-model", "generatedBy": "keras v2.19.0", "convertedBy": "TensorFlow.js Converter v4.22.0",
        "modelTopology": {"class_name": "Functional", "keras_version": "2.19.0", "backend": "tensorflow",
                          "config": {"name": "m", "layers": [
                              {"class_name": "InputLayer", "name": "x", "inbound_nodes": [],
                               "config": {"batch_input_shape": [None, 4], "dtype": "float32", "name": "x"}},
                              {"class_name": "CustomScaleLayer", "name": "scale", "config": {"name": "scale", "scale": 0.17},
                               "inbound_nodes": [[["x", 0, 0, {}], ["x", 0, 0, {}]]]}],
                              "input_layers": [["x", 0, 0]], "output_layers": [["scale", 0, 0]]}},
        "weightsManifest": []}
os.makedirs(os.path.join(out, "tfjs"), exist_ok=True)
with open(os.path.join(out, "tfjs", "model.json"), "w") as f:
    json.dump(tfjs, f)
