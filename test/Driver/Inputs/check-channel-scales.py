"""--int8-depthwise-channel-scales (docs/quantization.md) against its definition.

check-channel-scales.py DLC WORK

For each one-layer model below (written here by Keras: a DepthwiseConv2D with a channel
multiplier, zero padded, on inputs whose channels span 80x in range; signed, and behind a ReLU
with --int8-unsigned-activations), on a calibration set that is also the input:

1. the calibration cache's channel clips equal NumPy's: each channel's max |x| (--calibration-method
   max), and each channel's 99.9th percentile on its own 2048-bin histogram of |x| over [0, its
   max] (--calibration-method percentile, as docs/quantization.md defines the percentile clip);
2. `dlc run --device cpu --precision int8` with the option equals the layer computed here on the
   input quantized per channel with those clips (scale s[c] = L / clip[c], L = 127, or 255 with the
   zero point; q = clip(round_half_even(f32(x * s[c])) [- 128], ...), the padding 0 in x) and the
   weights per output channel, in float64: within 1e-5 of the output's RMS;
3. its worst output channel's error against fp32 (relative to the channel's RMS) is at most half
   that of per-tensor scales, which give the narrow channels a few levels only.
"""
import json
import os
import subprocess
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")
import numpy as np  # noqa: E402

SAMPLES = 32
RANGES = np.array([0.1, 0.5, 2.0, 8.0], dtype=np.float32)  # per input channel


def models():
    import keras
    L = keras.layers
    keras.utils.set_random_seed(11)

    def seq(layers):
        x = keras.Input((6, 6, 4))
        y = x
        for layer in layers:
            y = layer(y)
        return keras.Model(x, y)

    return {
        "depthwise": (seq([L.DepthwiseConv2D(3, depth_multiplier=2, padding="same")]), False),
        "depthwise_relu": (seq([L.ReLU(), L.DepthwiseConv2D(3, padding="same")]), True),
    }


def percentile_clip(v, p):
    """docs/quantization.md's percentile clip of the values v (one channel's |x|)."""
    m = float(v.max())
    if m <= 0:
        return 0.0
    bins = np.minimum((v.astype(np.float64) * (2048 / m)).astype(np.int64), 2047)
    cumulative = np.cumsum(np.bincount(bins, minlength=2048))
    i = int(np.argmax(cumulative >= v.size * p / 100.0))
    return min((i + 1) * (m / 2048), m)


def expected(x, kernel, bias, clips, unsigned):
    """The int8 layer as defined, in float64 from the quantized values."""
    levels = np.float32(255 if unsigned else 127)
    s = (levels / clips.astype(np.float32)).astype(np.float32)  # f32, as dlc computes it
    xs = (x * s).astype(np.float32)
    if unsigned:
        xs = (xs + np.float32(-128)).astype(np.float32)
    q = np.clip(np.rint(xs), -128 if unsigned else -127, 127)
    xq = (q + (128 if unsigned else 0)) / s.astype(np.float64)  # de-quantized; 0 stays 0
    kh, kw, c, m = kernel.shape
    w = kernel.reshape(kh, kw, c * m).astype(np.float32)
    sw = np.float32(127) / np.abs(w).max(axis=(0, 1)).astype(np.float32)
    wq = np.clip(np.rint(w * sw), -127, 127) / sw.astype(np.float64)
    n, h, wd, _ = x.shape
    pad = np.zeros((n, h + kh - 1, wd + kw - 1, c * m))
    pad[:, kh // 2:kh // 2 + h, kw // 2:kw // 2 + wd] = np.repeat(xq, m, axis=3)
    y = np.zeros((n, h, wd, c * m))
    for i in range(kh):
        for j in range(kw):
            y += pad[:, i:i + h, j:j + wd] * wq[i, j]
    return y + bias


def worst_channel_error(y, ref):
    """The largest over the output channels of the RMS error relative to the channel's RMS."""
    axes = tuple(range(ref.ndim - 1))
    return float(np.max(np.sqrt(np.mean((y - ref) ** 2, axis=axes) / np.mean(ref ** 2,
                                                                             axis=axes))))


def dlc_run(dlc, d, precision, extra):
    y = os.path.join(d, "y-%s-%d.npy" % (precision, len(os.listdir(d))))
    subprocess.run([dlc, "run", os.path.join(d, "model.keras"), "--device", "cpu", "--input",
                    os.path.join(d, "x.npy"), "--output", y, "--precision", precision] + extra,
                   check=True)
    return np.load(y).astype(np.float64)


def main():
    dlc, work = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(5)
    failures = []
    for name, (model, unsigned) in models().items():
        d = os.path.join(work, name)
        os.makedirs(os.path.join(d, "cal"), exist_ok=True)
        model.save(os.path.join(d, "model.keras"))
        x = (rng.normal(size=(SAMPLES, 6, 6, 4)) * RANGES).astype(np.float32)
        for i in range(2):
            np.save(os.path.join(d, "cal", "b%d.npy" % i), x[i * 16:(i + 1) * 16])
        np.save(os.path.join(d, "x.npy"), x)
        layer_input = np.maximum(x, 0) if unsigned else x
        kernel, bias = [np.asarray(v) for v in model.layers[-1].get_weights()]
        fp32 = dlc_run(dlc, d, "fp32", [])
        rms = float(np.sqrt(np.mean(fp32 ** 2)))
        base = ["--calibrate", os.path.join(d, "cal")]
        if unsigned:
            base.append("--int8-unsigned-activations")
        flat = np.abs(layer_input).reshape(-1, 4)
        for method, want in (("max", flat.max(axis=0)),
                             ("percentile", np.array([percentile_clip(flat[:, c], 99.9)
                                                      for c in range(4)]))):
            cache = os.path.join(d, method + ".cache.json")
            opts = base + ["--calibration-method", method]
            if method == "percentile":
                opts += ["--calibration-percentile", "99.9"]
            per_channel = dlc_run(dlc, d, "int8", opts + ["--int8-depthwise-channel-scales",
                                                          "--calibration-cache", cache])
            with open(cache) as f:
                clips = np.array(json.load(f)["layers"][0]["channel_clips"])
            clip_diff = float(np.max(np.abs(clips - want) / want))
            definition = expected(layer_input, kernel, bias, clips, unsigned)
            diff = float(np.max(np.abs(per_channel - definition))) / rms
            per_tensor = dlc_run(dlc, d, "int8", opts)
            err_channel, err_tensor = worst_channel_error(per_channel, fp32), \
                worst_channel_error(per_tensor, fp32)
            print("%s, %s: channel clips %s (relative to NumPy's: %.1e); against the definition "
                  "%.2e of the RMS; worst output channel's error against fp32 %.2e per channel, "
                  "%.2e per tensor"
                  % (name, method, np.array2string(clips, precision=4), clip_diff, diff,
                     err_channel, err_tensor))
            if not clip_diff <= 1e-6:
                failures.append("%s, %s: channel clips %s, NumPy's %s" % (name, method, clips,
                                                                          want))
            if not diff <= 1e-5:
                failures.append("%s, %s: %.2e of the RMS from the definition" % (name, method,
                                                                                diff))
            if not err_channel <= 0.5 * err_tensor:
                failures.append("%s, %s: per-channel error %.2e, per-tensor %.2e" % (
                    name, method, err_channel, err_tensor))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
