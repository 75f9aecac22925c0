#!/usr/bin/env python3
"""The benchmark's seed models at their real sizes, written by Keras (not the test fixtures).

    gen_models.py OUT_DIR [--models NAME ...] [--no-weights-file]

Writes OUT_DIR/NAME/model.keras (architecture and random weights, for `dlc compile`) and
OUT_DIR/NAME/model.json (model.to_json(): the architecture alone, what the baselines build on
the device machine with random weights) for:

  mnist_cnn       28x28x1, 3 convs + 2 dense (93 K parameters)
  text_lstm       20 tokens, Embedding(1000, 128), LSTM(128), Dense(1000) (389 K)
  vgg16_transfer  VGG16(include_top=False) at 224x224x3, frozen, + Flatten, Dense(256), Dense(10)
  resnet50        keras.applications.ResNet50, 224x224x3, 1000 classes (25.6 M)
  mobilenet_v2    keras.applications.MobileNetV2, 224x224x3, 1000 classes (3.5 M)

and OUT_DIR/NAME/calib/b0000.npy, b0001.npy: two batches of 4 inputs drawn as the test
fixtures draw theirs (normal(0, 1) images; token ids uniform in [1, 1000) as floats), the
calibration set of `dlc compile --precision int8` (bench/gpu/campaign.sh's int8 rows).

The test fixtures (test/e2e/fixture_models.py) keep the large models at 64x64; these are the
sizes docs and users quote. Deterministic (keras.utils.set_random_seed(0); the calibration
batches seeded per model). A model whose files exist is kept; so are its calibration batches.
"""

import argparse
import os
import sys

MODELS = ("mnist_cnn", "text_lstm", "vgg16_transfer", "resnet50", "mobilenet_v2")
INPUTS = {"mnist_cnn": (28, 28, 1), "text_lstm": (20,), "vgg16_transfer": (224, 224, 3),
          "resnet50": (224, 224, 3), "mobilenet_v2": (224, 224, 3)}


def write_calibration(d, name, batches=2, samples=4):
    """d/calib/bNNNN.npy, unless the folder exists."""
    import zlib

    import numpy as np
    calib = os.path.join(d, "calib")
    if os.path.isdir(calib):
        return
    rng = np.random.default_rng(zlib.crc32(("bench-calib/" + name).encode()))
    tmp = calib + ".tmp"
    os.makedirs(tmp, exist_ok=True)
    for b in range(batches):
        shape = (samples,) + INPUTS[name]
        x = (rng.integers(1, 1000, size=shape) if name == "text_lstm"
             else rng.normal(0.0, 1.0, size=shape))
        np.save(os.path.join(tmp, "b%04d.npy" % b), x.astype("float32"))
    os.replace(tmp, calib)


def build(keras, name):
    L = keras.layers
    if name == "mnist_cnn":
        return keras.Sequential([
            keras.Input((28, 28, 1)), L.Conv2D(32, 3, activation="relu"), L.MaxPooling2D(2),
            L.Conv2D(64, 3, activation="relu"), L.MaxPooling2D(2),
            L.Conv2D(64, 3, activation="relu"), L.Flatten(), L.Dense(64, activation="relu"),
            L.Dense(10, activation="softmax")])
    if name == "text_lstm":
        return keras.Sequential([
            keras.Input((20,)), L.Embedding(1000, 128), L.LSTM(128),
            L.Dense(1000, activation="softmax")])
    if name == "vgg16_transfer":
        base = keras.applications.VGG16(include_top=False, weights=None,
                                        input_shape=(224, 224, 3))
        base.trainable = False
        return keras.Sequential([keras.Input((224, 224, 3)), base, L.Flatten(),
                                 L.Dense(256, activation="relu"),
                                 L.Dense(10, activation="softmax")])
    if name == "resnet50":
        return keras.applications.ResNet50(weights=None, input_shape=(224, 224, 3))
    if name == "mobilenet_v2":
        return keras.applications.MobileNetV2(weights=None, input_shape=(224, 224, 3))
    raise ValueError(name)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    args = ap.parse_args(argv)
    os.environ.setdefault("KERAS_BACKEND", "jax")
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import keras
    for name in args.models:
        d = os.path.join(args.out, name)
        keras_file, json_file = os.path.join(d, "model.keras"), os.path.join(d, "model.json")
        if os.path.exists(keras_file) and os.path.exists(json_file):
            write_calibration(d, name)
            continue
        os.makedirs(d, exist_ok=True)
        keras.utils.set_random_seed(0)
        model = build(keras, name)
        model.save(keras_file + ".tmp.keras")
        os.replace(keras_file + ".tmp.keras", keras_file)
        with open(json_file + ".tmp", "w") as f:
            f.write(model.to_json())
        os.replace(json_file + ".tmp", json_file)
        write_calibration(d, name)
        print("gen_models.py: %s: %d parameters" % (name, model.count_params()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
