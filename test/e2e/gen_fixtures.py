#!/usr/bin/env python3
"""Write the end-to-end test fixtures with real Keras.

    gen_fixtures.py OUTDIR [--only NAME ...] [--no-k2] [--verify]
    gen_fixtures.py --list

For every model of fixture_models.py this writes OUTDIR/NAME/ with the model in every format
Keras can write for it, the inputs and Keras's outputs for every generation of files:

  Keras 3 (JAX CPU backend)  model.keras; model.json + model.weights.h5; legacy.h5
                             expected_k3_<i>.npy
  Keras 2 (tf_keras)         k2.h5; k2.json + k2_weights.h5            expected_k2_<i>.npy
  TF.js (tensorflowjs)       tfjs/model.json + shards                  expected_tfjs_<i>.npy
                             tfjs_{uint8,uint16,float16}/ (a few models) expected_tfjs_<q>_<i>.npy
  input_<i>.npy, meta.json; OUTDIR/index.json lists the models.

Keras 2 and TF.js files are written only when tf_keras and tensorflowjs import; otherwise one
note is printed and only the Keras 3 files are written. The Keras 2 model is built by the same
architecture function with the same weights; TF.js files are converted from it and the TF.js
expectation comes from loading the TF.js files back (quantization error included).

`--list` prints the model names without importing Keras. `--verify` also reloads every Keras 3
file with Keras and checks that it reproduces the expected outputs (slower; for development).
"""

import argparse
import contextlib
import io
import json
import os
import shutil
import sys
import time
import traceback
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fixture_models as M  # noqa: E402  (no Keras import inside)

QUANT_DTYPES = ("uint8", "uint16", "float16")
SOFTMAX_MIN_MAX_PROB = 0.5  # the generator asserts every softmax head row reaches this
SOFTMAX_TARGET = 0.75  # calibration target for the smallest row maximum
RESIDUAL_GAMMA = float(os.environ.get("DLC_RESIDUAL_GAMMA", "0.25"))  # see calibrate_bn
VAR_FLOOR = float(os.environ.get("DLC_VAR_FLOOR", "0.5"))  # see calibrate_bn


def log(*a):
    print(*a, flush=True)


def seed_of(name):
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


# ---------------------------------------------------------------------------------------------
# Environment and imports


def setup_env():
    os.environ["KERAS_BACKEND"] = "jax"
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")  # TF: CPU only, no GPU probing
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")  # deterministic TF CPU kernels
    import warnings

    warnings.filterwarnings("ignore")


@contextlib.contextmanager
def quiet():
    """Silence stdout and stderr at the file-descriptor level (TensorFlow's C++ logging)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved + [null]:
            os.close(fd)


def import_k2():
    """tf_keras + tensorflowjs, or (None, None, reason)."""
    # tensorflow_decision_forests (imported by tensorflowjs) displays a banner through IPython
    # when stdout is not a terminal, and fails where IPython is not installed.
    os.environ.setdefault("TFDF_DISABLE_WELCOME_MESSAGE", "1")
    try:
        with quiet():
            import tensorflow as tf
            import tf_keras
            import tensorflowjs
            from tensorflowjs.converters import keras_h5_conversion, keras_tfjs_loader  # noqa
        tf.get_logger().setLevel("ERROR")
        try:
            import absl.logging

            absl.logging.set_verbosity(absl.logging.ERROR)
        except Exception:
            pass
        return tf_keras, tensorflowjs, None
    except Exception as e:  # ImportError, protobuf VersionError, undefined symbols, ...
        return None, None, "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")


# ---------------------------------------------------------------------------------------------
# Weights


@contextlib.contextmanager
def placeholder_initializers():
    """While models are built, give variables with a Zeros/Ones/Constant/random initializer
    their value in NumPy (random ones get zeros: fill_weights overwrites every weight).

    Keras's JAX initializers compile one XLA computation per variable shape, which took most of
    the generator's time on 2 cores; the files and configs written are the same either way."""
    import numpy as np

    try:
        from keras.src.backend.jax.core import JaxVariable
        from keras.src.initializers.constant_initializers import Constant, Ones, Zeros
        from keras.src.initializers.random_initializers import RandomInitializer
    except ImportError:  # another Keras layout: initialize the normal way
        yield
        return
    orig = JaxVariable._initialize_with_initializer

    def init(self, initializer):
        if getattr(self, "_layout", None) is None and isinstance(
                initializer, (RandomInitializer, Zeros, Ones, Constant)):
            shape, dtype = tuple(self._shape), np.dtype(str(self._dtype))
            if isinstance(initializer, Ones):
                v = np.ones(shape, dtype)
            elif isinstance(initializer, Constant):
                v = np.full(shape, initializer.value, dtype)
            else:
                v = np.zeros(shape, dtype)
            self._initialize(self._convert_to_tensor(v))
        else:
            orig(self, initializer)

    JaxVariable._initialize_with_initializer = init
    try:
        yield
    finally:
        JaxVariable._initialize_with_initializer = orig


def walk_layers(model, K):
    """Layers with weights, in order, descending into nested models (not into wrappers)."""
    out = []
    for layer in model.layers:
        if isinstance(layer, K.Model):
            out.extend(walk_layers(layer, K))
        elif layer.weights:
            out.append(layer)
    return out


RECURRENT = {"LSTM", "GRU", "SimpleRNN", "RNN", "Bidirectional", "LSTMCell", "GRUCell",
             "SimpleRNNCell"}


def uniform(rng, lim, shape):
    return rng.uniform(-lim, lim, size=shape)


def draw_weight(rng, cls, vname, shape):
    """A value for one variable, by layer class and variable name."""
    import numpy as np

    shape = tuple(int(s) for s in shape)
    if vname in ("bias",):
        return rng.normal(0.0, 0.15, size=shape)
    if vname == "gamma":
        return rng.uniform(0.5, 1.5, size=shape)
    if vname == "beta":
        return rng.normal(0.0, 0.3, size=shape)
    if vname == "moving_mean":
        return rng.normal(0.0, 0.5, size=shape)
    if vname == "moving_variance":
        # Positive, never close to 1: half of the channels in [0.2, 0.7], half in [1.5, 3].
        lo = rng.uniform(0.2, 0.7, size=shape)
        hi = rng.uniform(1.5, 3.0, size=shape)
        return np.where(rng.random(size=shape) < 0.5, lo, hi)
    if vname == "embeddings":
        return rng.normal(0.0, 0.6, size=shape)
    if vname == "alpha":  # PReLU
        return rng.uniform(0.05, 0.5, size=shape)
    if vname in ("kernel", "recurrent_kernel", "depthwise_kernel", "pointwise_kernel"):
        if cls in RECURRENT:
            fan_in = shape[0]
            return uniform(rng, np.sqrt(3.0 / fan_in), shape)
        if cls.startswith("DepthwiseConv") or vname == "depthwise_kernel":
            fan_in = int(np.prod(shape[:-2]))
        elif cls.startswith("Conv") and "Transpose" in cls:
            fan_in = int(np.prod(shape[:-2])) * shape[-1]
        else:
            fan_in = int(np.prod(shape[:-1]))
        return uniform(rng, np.sqrt(6.0 / max(fan_in, 1)), shape)  # He uniform
    raise ValueError("no rule for variable %r of %s" % (vname, cls))


def fill_weights(model, K, rng):
    import numpy as np

    for layer in walk_layers(model, K):
        cls = type(layer).__name__
        if cls == "TimeDistributed":
            cls = type(layer.layer).__name__
        if cls == "Normalization":
            continue  # adapted, see adapt_normalization
        for v in layer.weights:
            vname = v.name.split("/")[-1].split(":")[0]
            val = draw_weight(rng, cls, vname, v.shape)
            v.assign(np.asarray(val, dtype=v.dtype))


def adapt_normalization(model, K, rng):
    for layer in walk_layers(model, K):
        if type(layer).__name__ == "Normalization":
            shape = tuple(int(s) for s in layer.weights[0].shape)
            mu = rng.normal(0.0, 2.0, size=shape)
            sd = rng.uniform(0.3, 3.0, size=shape)
            data = (mu + sd * rng.normal(size=(64,) + shape)).astype("float32")
            layer.adapt(data)


def bn_layers(model, K):
    return [l for l in walk_layers(model, K) if type(l).__name__ == "BatchNormalization"]


def calibrate_bn(model, keras, xs, rng):
    """Set moving statistics near the statistics of the real activations (perturbed: mean
    shifted by 0.1 sd, variance scaled by 0.8..1.25), so that a deep network neither explodes
    nor vanishes; gamma and beta stay random.

    One compiled probe returns every BatchNormalization input; the layers are calibrated one
    at a time in topological order (updating all at once oscillates and overflows)."""
    import numpy as np

    bns = [l for l in model.layers if type(l).__name__ == "BatchNormalization"]
    # A BatchNormalization that ends a residual branch (its output goes into an Add) gets a
    # small gamma, so that each block stays close to the identity: otherwise every block
    # amplifies rounding noise and 16 blocks turn float32 noise into 1e-4 relative errors.
    for l in bns:
        consumers = [n.operation for n in l._outbound_nodes]
        if consumers and all(type(c).__name__ == "Add" for c in consumers):
            l.gamma.assign(l.gamma.numpy() * RESIDUAL_GAMMA)
    probe = keras.Model(model.inputs, [l.input for l in bns])
    for k, l in enumerate(bns):
        acts = probe.predict(xs, verbose=0, batch_size=len(xs[0]))
        a = np.asarray(to_list(acts)[k], dtype=np.float64)
        axis = l.axis if l.axis >= 0 else a.ndim + l.axis
        red = tuple(i for i in range(a.ndim) if i != axis)
        mean, var = a.mean(axis=red), a.var(axis=red)
        # Channels with (almost) no variance on these few samples would get a huge gain that
        # amplifies every rounding difference downstream: floor at VAR_FLOOR of the median.
        var = np.maximum(var, VAR_FLOOR * np.median(var))
        if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(var))):
            raise RuntimeError("BatchNormalization calibration overflowed at " + l.name)
        pm = rng.normal(size=mean.shape)
        pv = rng.uniform(0.8, 1.25, size=var.shape)
        l.moving_mean.assign((mean + 0.1 * np.sqrt(var) * pm).astype("float32"))
        l.moving_variance.assign((var * pv + 1e-4).astype("float32"))


def softmax_np(z):
    import numpy as np

    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def find_softmax_head(model):
    for l in reversed(model.layers):
        if type(l).__name__ == "Dense" and getattr(l.activation, "__name__", "") == "softmax":
            return l
    return None


def calibrate_softmax(model, keras, xs):
    """Scale the softmax head (kernel and bias) so that the largest probability of every row
    is about SOFTMAX_TARGET: clearly dominant, not saturated."""
    import numpy as np

    head = find_softmax_head(model)
    if head is None:
        raise RuntimeError("model has no Dense softmax head")
    feats = keras.Model(model.inputs, head.input).predict(xs, verbose=0, batch_size=len(xs[0]))
    w, b = [np.asarray(a, dtype=np.float64) for a in head.get_weights()]
    logits = np.asarray(feats, dtype=np.float64) @ w + b
    f = lambda s: softmax_np(s * logits).max(axis=-1).min()  # noqa: E731  (monotone in s)
    lo, hi = 1e-4, 1e4
    if f(hi) < SOFTMAX_TARGET:
        raise RuntimeError("softmax head cannot be made dominant (tied logits?)")
    for _ in range(100):
        mid = np.sqrt(lo * hi)
        if f(mid) < SOFTMAX_TARGET:
            lo = mid
        else:
            hi = mid
    head.set_weights([(w * hi).astype("float32"), (b * hi).astype("float32")])
    return head


# ---------------------------------------------------------------------------------------------
# Inputs and running


def make_inputs(spec, model, rng, batch=None):
    import numpy as np

    xs = []
    for t in model.inputs:
        shape = (batch or spec.batch,) + tuple(int(s) for s in t.shape[1:])
        dtype = str(t.dtype)
        dtype = {"float": "float32"}.get(dtype, dtype)
        if spec.vocab:
            x = rng.integers(1, spec.vocab, size=shape)
            if spec.zeros:
                x[0, -2:] = 0  # trailing padding
                if shape[0] > 1:
                    x[1, 2] = 0  # a masked step inside the sequence
                    x[1, -3:] = 0
        else:
            x = rng.normal(0.0, spec.scale, size=shape)
        xs.append(np.asarray(x, dtype=dtype))
    return xs


def float32_clone(model, keras):
    """The model with every dtype policy float32 and the same weights."""
    def fix(o):
        if isinstance(o, dict):
            for k, v in list(o.items()):
                if k == "dtype" and (v == "mixed_float16" or isinstance(v, dict)):
                    o[k] = "float32"
                else:
                    fix(v)
        elif isinstance(o, list):
            for v in o:
                fix(v)
    config = model.get_config()
    fix(config)
    clone = model.__class__.from_config(config)
    clone.set_weights(model.get_weights())
    return clone


def to_list(y):
    if isinstance(y, dict):
        raise TypeError("dict outputs are not supported")
    return list(y) if isinstance(y, (list, tuple)) else [y]


def run_k3(model, keras, xs):
    """model.predict: one XLA compilation of the whole model (an eager call compiles every
    primitive separately, which is slower)."""
    import numpy as np

    y = model.predict(xs if len(xs) > 1 else xs[0], batch_size=len(xs[0]), verbose=0)
    return [np.asarray(t) for t in to_list(y)]


def run_k2(model, xs):
    import numpy as np

    y = model(xs if len(xs) > 1 else xs[0], training=False)
    return [np.asarray(t.numpy()) for t in to_list(y)]


def save_outputs(d, prefix, ys):
    import numpy as np

    files = []
    for i, y in enumerate(ys):
        f = "%s_%d.npy" % (prefix, i)
        if y.dtype.kind == "f":
            y = y.astype(np.float32)
        np.save(os.path.join(d, f), y)
        files.append(f)
    return files


def check_outputs(name, ys):
    import numpy as np

    for i, y in enumerate(ys):
        if not np.all(np.isfinite(y)):
            raise AssertionError("%s: output %d is not finite" % (name, i))
        if y.size > 1 and float(np.std(y)) == 0.0:
            raise AssertionError("%s: output %d is constant" % (name, i))


def max_abs_diff(a, b):
    import numpy as np

    return max(float(np.max(np.abs(x.astype(np.float64) - y.astype(np.float64))))
               for x, y in zip(a, b))


# ---------------------------------------------------------------------------------------------
# Layer table (for `dlc inspect`)


def shape_list(t):
    return [None if s is None else int(s) for s in t.shape]


def layer_output_shape(layer):
    try:
        out = layer.output
    except Exception:
        # A layer called more than once: one shape per call.
        try:
            return {"multiple": [[shape_list(t) for t in node.output_tensors]
                                 for node in layer._inbound_nodes]}
        except Exception:
            return None
    if isinstance(out, (list, tuple)):
        return [shape_list(t) for t in out]
    return shape_list(out)


def layer_table(model, keras):
    rows = []
    for l in model.layers:
        row = {"name": l.name, "class": type(l).__name__,
               "output_shape": layer_output_shape(l), "params": int(l.count_params())}
        if isinstance(l, keras.Model):
            row["layers"] = layer_table(l, keras)
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------------------------
# Keras 2 / TF.js


def copy_weights(src, src_K, dst, dst_K):
    a, b = walk_layers(src, src_K), walk_layers(dst, dst_K)
    if len(a) != len(b):
        raise RuntimeError("layer count differs: %d vs %d" % (len(a), len(b)))
    for la, lb in zip(a, b):
        wa, wb = la.get_weights(), lb.get_weights()
        sa = [tuple(w.shape) for w in wa]
        sb = [tuple(w.shape) for w in wb]
        if sa != sb:
            raise RuntimeError("weights of %s/%s differ: %s vs %s" % (la.name, lb.name, sa, sb))
        lb.set_weights([w.astype(x.dtype) for w, x in zip(wa, wb)])


def gen_k2(spec, m3, keras, xs, ys, d, tf_keras, tfjs, formats, notes, checks):
    tf_keras.backend.clear_session()
    tf_keras.utils.set_random_seed(seed_of(spec.name))
    try:
        m2 = spec.fn(tf_keras)
        copy_weights(m3, keras, m2, tf_keras)
        y2 = run_k2(m2, xs)
        check_outputs(spec.name + " (k2)", y2)
        table = layer_table(m2, tf_keras)
        # How far two real float32 implementations (TF, JAX) are apart on this model: a floor
        # for compare.py's tolerance (large on purpose for hard_sigmoid, whose formula differs).
        checks["k2_vs_k3_max_abs"] = float("%.3g" % max_abs_diff(y2, ys))
    except Exception as e:
        notes.append("k2: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:300]))
        return None
    exp = save_outputs(d, "expected_k2", y2)
    written = []
    try:
        m2.save(os.path.join(d, "k2.h5"))
        written.append({"format": "k2_h5", "generation": "k2",
                        "files": {"model": "k2.h5", "weights": None}, "expected": exp})
    except Exception as e:
        notes.append("k2_h5: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:300]))
    try:
        with open(os.path.join(d, "k2.json"), "w") as f:
            f.write(m2.to_json())
        m2.save_weights(os.path.join(d, "k2_weights.h5"))
        written.append({"format": "k2_json", "generation": "k2",
                        "files": {"model": "k2.json", "weights": "k2_weights.h5"},
                        "expected": exp})
    except Exception as e:
        notes.append("k2_json: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:300]))
    formats.extend(written)
    if not spec.tfjs or tfjs is None:
        return table
    from tensorflowjs.converters import keras_h5_conversion, keras_tfjs_loader

    variants = [("tfjs", None)]
    if spec.tfjs_quant:
        variants += [("tfjs_" + q, {q: True}) for q in QUANT_DTYPES]
    for sub, qmap in variants:
        try:
            with quiet():
                keras_h5_conversion.save_keras_model(m2, os.path.join(d, sub),
                                                     quantization_dtype_map=qmap)
                mt = keras_tfjs_loader.load_keras_model(os.path.join(d, sub, "model.json"))
            yt = run_k2(mt, xs)
            check_outputs(spec.name + " (" + sub + ")", yt)
        except Exception as e:
            notes.append("%s: %s: %s" % (sub, type(e).__name__, str(e).splitlines()[0][:300]))
            shutil.rmtree(os.path.join(d, sub), ignore_errors=True)
            continue
        exp_t = save_outputs(d, "expected_" + sub, yt)
        formats.append({"format": sub, "generation": "tfjs",
                        "files": {"model": sub + "/model.json", "weights": None},
                        "expected": exp_t, "quantization": None if qmap is None else
                        list(qmap)[0]})
    return table


# ---------------------------------------------------------------------------------------------
# One model


def gen_model(spec, outdir, keras, tf_keras, tfjs, verify):
    import numpy as np

    t0 = time.time()
    d = os.path.join(outdir, spec.name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    seed = seed_of(spec.name)
    keras.backend.clear_session()
    keras.utils.set_random_seed(seed)
    rng = np.random.default_rng(seed)

    with placeholder_initializers():
        m = spec.fn(keras)
    xs = make_inputs(spec, m, rng)
    fill_weights(m, keras, rng)
    adapt_normalization(m, keras, rng)
    checks = {}
    if spec.calib_bn:
        # Calibrate on a batch of its own: per-channel statistics of the 2 test
        # inputs are too noisy in the small deep feature maps.
        calibration = make_inputs(spec, m, np.random.default_rng(seed + 1), batch=16)
        calibrate_bn(m, keras, calibration, rng)
    head = calibrate_softmax(m, keras, xs) if spec.softmax else None

    ys = run_k3(m, keras, xs)
    check_outputs(spec.name, ys)
    if head is not None:
        idx = [i for i, t in enumerate(m.outputs) if t._keras_history[0] is head]
        for i in idx:
            mx = ys[i].astype(np.float64).max(axis=-1)
            checks["softmax_max_prob"] = [round(float(v), 4) for v in mx.ravel()]
            if mx.min() < SOFTMAX_MIN_MAX_PROB:
                raise AssertionError("%s: softmax output near uniform: max probs %s"
                                     % (spec.name, mx))
    bns = bn_layers(m, keras)
    if bns:
        var = np.concatenate([np.ravel(l.moving_variance.numpy()) for l in bns])
        mean = np.concatenate([np.ravel(l.moving_mean.numpy()) for l in bns])
        near1 = float(np.mean(np.abs(var - 1.0) < 0.05))
        checks["batchnorm"] = {"layers": len(bns), "moving_variance_min": float(var.min()),
                               "moving_variance_max": float(var.max()),
                               "fraction_variance_within_0.05_of_1": round(near1, 4),
                               "moving_mean_absmax": float(np.abs(mean).max())}
        if not (var.min() > 0 and near1 <= 0.1 and np.abs(mean).max() > 0):
            raise AssertionError("%s: trivial BatchNormalization statistics %s"
                                 % (spec.name, checks["batchnorm"]))

    for i, x in enumerate(xs):
        np.save(os.path.join(d, "input_%d.npy" % i), x)
    exp3 = save_outputs(d, "expected_k3", ys)
    formats, notes = [], []

    m.save(os.path.join(d, "model.keras"))
    formats.append({"format": "keras", "generation": "k3",
                    "files": {"model": "model.keras", "weights": None}, "expected": exp3})
    with open(os.path.join(d, "model.json"), "w") as f:
        f.write(m.to_json())
    m.save_weights(os.path.join(d, "model.weights.h5"))
    formats.append({"format": "json", "generation": "k3",
                    "files": {"model": "model.json", "weights": "model.weights.h5"},
                    "expected": exp3})
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            m.save(os.path.join(d, "legacy.h5"))
        formats.append({"format": "legacy_h5", "generation": "k3",
                        "files": {"model": "legacy.h5", "weights": None}, "expected": exp3})
    except Exception as e:
        notes.append("legacy_h5: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:300]))

    if verify:
        verify_k3(spec, d, keras, xs, ys, formats, notes)
    if spec.name == "mixed_float16":
        # The same model and weights computed in float32 by Keras: `dlc run --precision fp32`
        # must reproduce it at the default tolerance (the float16 outputs above only within
        # float16's precision).
        exp32 = save_outputs(d, "expected_k3_fp32", run_k3(float32_clone(m, keras), keras, xs))
        formats.append({"format": "keras_fp32", "generation": "k3", "precision": "fp32",
                        "tolerance": {"rtol": 1e-4, "atol": 1e-5},
                        "files": {"model": "model.keras", "weights": None}, "expected": exp32})

    t_k3 = time.time() - t0
    table_k2 = None
    if tf_keras is not None and spec.k2:
        table_k2 = gen_k2(spec, m, keras, xs, ys, d, tf_keras, tfjs, formats, notes, checks)

    meta = {
        "name": spec.name,
        "note": spec.note,
        "keras_version": keras.__version__,
        "count_params": int(m.count_params()),
        "batch": spec.batch,
        "inputs": [{"file": "input_%d.npy" % i, "name": t._keras_history[0].name,
                    "dtype": str(x.dtype), "shape": list(x.shape)}
                   for i, (t, x) in enumerate(zip(m.inputs, xs))],
        "outputs": [{"dtype_keras": str(y.dtype), "shape": list(y.shape)} for y in ys],
        "dtype_policy": "mixed_float16" if spec.name == "mixed_float16" else "float32",
        "tolerance": spec.tol,
        "formats": formats,
        "layers": layer_table(m, keras),
        "layers_k2": table_k2,
        "checks": checks,
        "skipped": notes,
        "seconds": {"k3": round(t_k3, 2), "total": round(time.time() - t0, 2)},
    }
    if spec.conditioning:
        import gen_apps  # here: gen_apps imports this module
        checks["conditioning"] = gen_apps.conditioning_k3(d, meta, keras)
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def verify_k3(spec, d, keras, xs, ys, formats, notes):
    """Reload each Keras 3 file with Keras and check that it reproduces the outputs."""
    for fm in formats:
        if fm["generation"] != "k3":
            continue
        path = os.path.join(d, fm["files"]["model"])
        try:
            if fm["format"] == "json":
                with open(path) as f:
                    r = keras.models.model_from_json(f.read())
                r.load_weights(os.path.join(d, fm["files"]["weights"]))
            else:
                r = keras.models.load_model(path, compile=False)
            diff = max_abs_diff(run_k3(r, keras, xs), ys)
        except Exception as e:
            notes.append("verify %s: %s: %s" % (fm["format"], type(e).__name__,
                                                str(e).splitlines()[0][:300]))
            continue
        if diff > 1e-5:
            notes.append("verify %s: reloaded model differs by %g" % (fm["format"], diff))


# ---------------------------------------------------------------------------------------------


def main(argv=None, registry=None):
    """`registry`: the models to write (default: fixture_models.REGISTRY, the core set); a fixture
    set's generator (gen_SET.py) passes its own."""
    registry = M.REGISTRY if registry is None else registry
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--only", nargs="+", metavar="NAME")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    ap.add_argument("--no-k2", action="store_true", help="skip Keras 2 and TF.js files")
    ap.add_argument("--verify", action="store_true",
                    help="reload every Keras 3 file and check its outputs")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(M.names(registry)))
        return 0
    if not args.outdir:
        ap.error("OUTDIR is required")
    specs = registry
    if args.only:
        unknown = sorted(set(args.only) - set(M.names(registry)))
        if unknown:
            ap.error("unknown model(s): " + ", ".join(unknown))
        specs = [s for s in specs if s.name in args.only]

    setup_env()
    t0 = time.time()
    import keras

    try:
        import absl.logging

        absl.logging.set_verbosity(absl.logging.ERROR)  # "saving as HDF5 is legacy", ...
    except ImportError:
        pass
    log("keras %s, backend %s" % (keras.__version__, keras.backend.backend()))
    tf_keras = tfjs = None
    if not args.no_k2:
        tf_keras, tfjs, why = import_k2()
        if tf_keras is None:
            log("note: tf_keras/tensorflowjs unavailable (%s): Keras 2 and TF.js fixtures "
                "are not written" % why)
        else:
            log("tf_keras %s, tensorflowjs %s" % (tf_keras.__version__, tfjs.__version__))

    os.makedirs(args.outdir, exist_ok=True)
    index_path = os.path.join(args.outdir, "index.json")
    entries = {}
    if args.only and os.path.exists(index_path):
        with open(index_path) as f:
            entries = {e["name"]: e for e in json.load(f).get("models", [])}
    failed = []
    for spec in specs:
        t1 = time.time()
        try:
            meta = gen_model(spec, args.outdir, keras, tf_keras, tfjs, args.verify)
        except Exception:
            failed.append(spec.name)
            log("FAILED %s\n%s" % (spec.name, traceback.format_exc()))
            entries.pop(spec.name, None)
            continue
        fmts = [f["format"] for f in meta["formats"]]
        log("%-40s %5.1fs  %s%s" % (spec.name, time.time() - t1, " ".join(fmts),
                                    "".join("\n    skipped " + n for n in meta["skipped"])))
        entries[spec.name] = {"name": spec.name, "formats": fmts}
    index = {
        "keras_version": keras.__version__,
        "tf_keras_version": getattr(tf_keras, "__version__", None),
        "tensorflowjs_version": getattr(tfjs, "__version__", None),
        "models": [entries[n] for n in M.names(registry) if n in entries],
    }
    with open(index_path, "w") as f:
        json.dump(index, f, indent=1)
    log("%d models in %.1fs%s" % (len(specs) - len(failed), time.time() - t0,
                                  "; FAILED: " + " ".join(failed) if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
