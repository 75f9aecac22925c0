"""How much of each quantizable layer's input depends on the model's input (docs/quantization.md).

ptq_collapse.py FIXTURES MODEL [MODEL ...] [--samples N]

Measured on a fixture of test/e2e/fixture_models.py, in Keras, on N normal(0, 1) inputs (the
distribution the e2e/ptq tests draw from): for the input x of each Conv2D, DepthwiseConv2D and
Dense layer, its RMS, the RMS of its input-dependent part x - E[x] (E over the samples, per
position and channel), and the RMS error of quantizing x per tensor to int8 as dlc does by
default (clip at the 99.99th percentile of |x|, 255 levels for x >= 0, else 127 a sign), that
error also relative to the input-dependent RMS. A deep random-weight network without batch
norms maps every input near one point, so the part that carries information is a small
fraction of what int8 has to represent. Not a ctest: a measurement behind the documentation.
"""
import argparse
import os

os.environ.setdefault("KERAS_BACKEND", "jax")
import numpy as np  # noqa: E402


def quantization_rms(v, clip):
    levels = 255 if v.min() >= 0 else 127
    s = levels / clip
    q = np.clip(np.round(v * s), 0 if levels == 255 else -127, levels) / s
    return float(np.sqrt(np.mean((q - v) ** 2)))


def probe(keras, model, x):
    """The quantizable layers of `model` and their inputs on `x`; a Sequential's nested
    models (vgg16_transfer's VGG16 base) are probed on their own inputs."""
    kinds = (keras.layers.Conv2D, keras.layers.DepthwiseConv2D, keras.layers.Dense)
    if isinstance(model, keras.Sequential):
        layers, inputs = [], []
        for layer in model.layers:
            if isinstance(layer, keras.Model):
                more, values = probe(keras, layer, x)
                layers += more
                inputs += values
            elif isinstance(layer, kinds):
                layers.append(layer)
                inputs.append(x)
            x = np.asarray(layer(x))
        return layers, inputs
    layers = [l for l in model._flatten_layers(include_self=False) if isinstance(l, kinds)]
    values = keras.Model(model.inputs, [l.input for l in layers]).predict(
        x, verbose=0, batch_size=32)
    return layers, list(values)


def main():
    import keras

    ap = argparse.ArgumentParser()
    ap.add_argument("fixtures")
    ap.add_argument("models", nargs="+")
    ap.add_argument("--samples", type=int, default=64)
    args = ap.parse_args()
    for name in args.models:
        model = keras.saving.load_model(os.path.join(args.fixtures, name, "model.keras"),
                                        compile=False)
        shape = (args.samples,) + tuple(model.inputs[0].shape[1:])
        x = np.random.default_rng(0).normal(size=shape).astype("float32")
        layers, inputs = probe(keras, model, x)
        print("%s (%d samples): layer, RMS, input-dependent RMS (ratio), int8 error RMS "
              "(relative to the input-dependent RMS)" % (name, args.samples))
        for layer, a in zip(layers, inputs):
            a = a.astype(np.float64)
            rms = float(np.sqrt(np.mean(a ** 2)))
            dep = float(np.sqrt(np.mean((a - a.mean(axis=0, keepdims=True)) ** 2)))
            err = quantization_rms(a, float(np.percentile(np.abs(a), 99.99)))
            print("  %-28s %8.3g %8.3g (%.3f) %9.3g (%.4f)"
                  % (layer.name, rms, dep, dep / rms, err, err / dep))


if __name__ == "__main__":
    main()
