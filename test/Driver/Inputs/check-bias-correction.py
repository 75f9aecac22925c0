"""--int8-bias-correction (docs/quantization.md) against its definition, on one-layer models.

check-bias-correction.py DLC WORK

For each model below (written here by Keras), `dlc run --device cpu` computes the fp32 output
and the int8 one without and with the correction, on the calibration set itself. The correction
is each output channel's mean of (fp32 - int8) over that set, so with it the int8 output's
per-channel mean equals fp32's up to float rounding: the check is |mean error| <= 1e-5 of the
output's RMS in every channel, where without it some channel's mean error is at least 1e-3 of
it. That equality is exact for a Dense layer; for a convolution it holds when every position
that a tap reads has the same mean, which the inputs here give (each sample's image is one
value per channel, and the convolutions are unpadded). The models cover a matmul and a grouped
convolution behind a ReLU (unsigned inputs: the zero point's term takes the correction), a
signed Dense and a depthwise convolution with a channel multiplier, signed and (behind a ReLU)
with its input quantized per channel.
"""
import os
import subprocess
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")
import numpy as np  # noqa: E402

SAMPLES = 64


def models():
    import keras
    L = keras.layers

    def seq(shape, layers):
        x = keras.Input(shape)
        y = x
        for layer in layers:
            y = layer(y)
        return keras.Model(x, y)

    keras.utils.set_random_seed(7)
    return {
        "dense": (seq((16,), [L.Dense(8)]), (16,)),
        "dense_relu": (seq((16,), [L.ReLU(), L.Dense(8)]), (16,)),
        "conv_groups_relu": (seq((5, 5, 8), [L.ReLU(), L.Conv2D(12, 3, groups=2)]), (8,)),
        "depthwise": (seq((5, 5, 4), [L.DepthwiseConv2D(3, depth_multiplier=2)]), (4,)),
        # The same quantized per input channel (--int8-depthwise-channel-scales): the
        # correction's quantized means use each channel's own scale.
        "depthwise_channels": (seq((5, 5, 4), [L.ReLU(),
                                               L.DepthwiseConv2D(3, depth_multiplier=2)]), (4,)),
    }


def main():
    dlc, work = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(3)
    failures = []
    for name, (model, channels) in models().items():
        d = os.path.join(work, name)
        os.makedirs(os.path.join(d, "cal"), exist_ok=True)
        path = os.path.join(d, "model.keras")
        model.save(path)
        shape = model.inputs[0].shape[1:]
        # Nonzero means, so that the weights' rounding shifts the outputs' means.
        z = rng.normal(0.3, 1.0, size=(SAMPLES,) + channels).astype("float32")
        x = np.broadcast_to(z.reshape((SAMPLES,) + (1,) * (len(shape) - 1) + channels),
                            (SAMPLES,) + tuple(shape)).copy()
        for i in range(4):  # four batches of the calibration set
            np.save(os.path.join(d, "cal", "b%d.npy" % i), x[i * 16:(i + 1) * 16])
        np.save(os.path.join(d, "x.npy"), x)
        outs = {}
        for run in ("fp32", "int8", "int8-corrected"):
            y = os.path.join(d, run + ".npy")
            cmd = [dlc, "run", path, "--device", "cpu", "--input", os.path.join(d, "x.npy"),
                   "--output", y, "--precision", run[:4]]
            if run != "fp32":
                cmd += ["--calibrate", os.path.join(d, "cal"), "--int8-unsigned-activations"]
            if run == "int8-corrected":
                cmd.append("--int8-bias-correction")
            if run != "fp32" and name == "depthwise_channels":
                cmd.append("--int8-depthwise-channel-scales")
            subprocess.run(cmd, check=True)
            outs[run] = np.load(y).astype(np.float64)
        ref = outs["fp32"]
        rms = float(np.sqrt(np.mean(ref ** 2)))
        axes = tuple(range(ref.ndim - 1))  # the channel is the last dim
        plain = np.abs(np.mean(ref - outs["int8"], axis=axes)).max() / rms
        fixed = np.abs(np.mean(ref - outs["int8-corrected"], axis=axes)).max() / rms
        print("%s: largest per-channel mean error / RMS: %.3e without the correction, %.3e "
              "with it" % (name, plain, fixed))
        if not fixed <= 1e-5:
            failures.append("%s: mean error %.3e of the RMS with the correction" % (name, fixed))
        if not plain >= 1e-3:
            failures.append("%s: mean error only %.3e without the correction (the check would "
                            "not see a wrong one)" % (name, plain))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
