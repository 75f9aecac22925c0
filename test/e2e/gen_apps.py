#!/usr/bin/env python3
"""Write the `apps` fixture set (fixture_apps.REGISTRY) with gen_fixtures.py's generator.

    gen_apps.py OUTDIR [--only NAME ...] [--no-k2] [--verify] | --list

Additions to gen_fixtures.py for keras.applications: Normalization statistics are set
rather than adapted (set_normalization); BatchNormalization is calibrated in
one forward pass (calibrate_bn_fast: the catalogue has up to 240 BN layers, and
gen_fixtures.calibrate_bn runs the network once per layer); a residual branch that ends in a
convolution (ResNetV2) gets the small gain that gen_fixtures.calibrate_bn gives a branch ending
in a normalization, and that normalization's beta stays centred at 0; ConvNeXt's LayerScale gamma (a variable Keras names `variable`) is drawn in
[0.1, 0.4], small like those gains, so that 18 residual blocks stay well conditioned;
normalization betas are centred at 0.5 (most units after a ReLU active: far better conditioned
random networks); the softmax head keeps its random kernel plus the least-norm correction that
gives every row a top probability of 0.55 (design_head), rather than a scale that would
multiply every feature error; a classifier that is a 1x1 Conv2D followed by Flatten and
Activation("softmax") (MobileNet, MobileNetV3) is set as a Dense softmax head is; each model's conditioning is
measured (weights and every layer's output perturbed by the unit roundoff, the largest of
five draws) and recorded in meta.json's "checks" (measure_conditioning), for compare.py; and the
legacy .h5 of the models in fixture_apps.NO_LEGACY_H5 is not kept (Keras itself cannot reload
it; dlc refuses it), with the reason in meta.json's "skipped".
"""

import json
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fixture_models  # noqa: E402,F401  (imported for ensure_fixtures.sh's stamp)
import fixture_apps  # noqa: E402
import gen_fixtures  # noqa: E402


def install(no_legacy):
    draw = gen_fixtures.draw_weight

    def draw_weight(rng, cls, vname, shape):
        if cls == "LayerScale":
            return rng.uniform(0.1, 0.4, size=tuple(int(s) for s in shape))
        if vname == "beta":
            # Centred at 0.5, not 0: most units after a normalization and a ReLU are active, and
            # the random deep networks are far better conditioned (measure_conditioning, ulp
            # weight perturbations: NASNetMobile fp32 1.1e-4 -> 7.5e-7, fp16 0.52 -> 0.0040;
            # docs/keras.md section 7).
            return rng.normal(BETA_MEAN, 0.3, size=tuple(int(s) for s in shape))
        return draw(rng, cls, vname, shape)

    gen_fixtures.draw_weight = draw_weight
    gen_fixtures.calibrate_bn = calibrate_bn_fast
    gen_fixtures.adapt_normalization = set_normalization
    gen_fixtures.calibrate_softmax = calibrate_head
    # Every row's top probability set to 0.55 (just above the generator's floor,
    # SOFTMAX_MIN_MAX_PROB), by design_head.
    gen_fixtures.SOFTMAX_TARGET = 0.55
    gen_model = gen_fixtures.gen_model

    def gen_model_apps(spec, outdir, keras, *args, **kw):
        if spec.name in fixture_apps.K2_ONLY:
            return gen_k2_only(spec, outdir, keras, *args, **kw)
        meta = gen_model(spec, outdir, keras, *args, **kw)
        d = os.path.join(outdir, spec.name)
        why = no_legacy.get(spec.name)
        if why:
            meta["formats"] = [f for f in meta["formats"] if f["format"] != "legacy_h5"]
            meta["skipped"].append("legacy_h5: %s: written without a module, Keras cannot "
                                   "reload it and dlc refuses it" % why)
            if os.path.exists(os.path.join(d, "legacy.h5")):
                os.remove(os.path.join(d, "legacy.h5"))
        if HEAD_CHECKS:
            meta["checks"]["head"] = dict(HEAD_CHECKS)
            HEAD_CHECKS.clear()
        meta["checks"]["conditioning"] = conditioning_k3(d, meta, keras)
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
        return meta

    gen_fixtures.gen_model = gen_model_apps


def set_normalization(model, keras, rng):
    """EfficientNet's Normalization is built on the image shape, where
    gen_fixtures.adapt_normalization adapts on vectors: set its statistics directly instead,
    a mean ~ N(0, 0.05) and a standard deviation in [0.15, 0.35] per channel: it follows a
    Rescaling(1/255) of inputs of pixel scale (fixture_apps.PIXELS), and statistics much wider
    than its input would make the image almost constant (see fixture_apps.PREPROCESSING)."""
    import numpy as np

    for layer in gen_fixtures.walk_layers(model, keras):
        if type(layer).__name__ != "Normalization":
            continue
        shape = tuple(int(s) for s in layer.weights[0].shape)
        layer.weights[0].assign(rng.normal(0.0, 0.05, size=shape).astype("float32"))
        layer.weights[1].assign((rng.uniform(0.15, 0.35, size=shape) ** 2).astype("float32"))
        layer.finalize_state()


def is_add(layer):
    """An Add layer, or Keras 2's `x + y` (TFOpLambda __operators__.add)."""
    name = type(layer).__name__
    return name == "Add" or (name == "TFOpLambda" and
                             layer.get_config().get("function") == "__operators__.add")


def gen_k2_only(spec, outdir, keras, tf_keras, tfjs, verify):
    """A model that only Keras 2 has (tf_keras's RegNet): gen_fixtures.gen_model's steps with
    tf_keras, writing the Keras 2 formats (k2.h5, k2.json + k2_weights.h5) and TF.js."""
    import numpy as np

    if tf_keras is None:
        raise RuntimeError("%s needs tf_keras (Keras 2), which is not installed" % spec.name)
    t0 = time.time()
    d = os.path.join(outdir, spec.name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    seed = gen_fixtures.seed_of(spec.name)
    tf_keras.backend.clear_session()
    tf_keras.utils.set_random_seed(seed)
    rng = np.random.default_rng(seed)
    m = spec.fn(tf_keras)

    def inputs(r, batch):
        return [np.asarray(r.normal(0.0, spec.scale, size=(batch,) + tuple(t.shape[1:])),
                           dtype="float32") for t in m.inputs]

    xs = inputs(rng, spec.batch)
    for layer in gen_fixtures.walk_layers(m, tf_keras):  # fill_weights, with TF dtypes
        layer.set_weights([np.asarray(gen_fixtures.draw_weight(
            rng, type(layer).__name__, v.name.split("/")[-1].split(":")[0], v.shape),
            dtype="float32") for v in layer.weights])
    if spec.calib_bn:
        calibrate_bn_fast(m, tf_keras, inputs(np.random.default_rng(seed + 1), 16), rng)
    ys = gen_fixtures.run_k2(m, xs)
    gen_fixtures.check_outputs(spec.name, ys)
    import tensorflow as tf

    conditioning = measure_conditioning(m, lambda model, x: gen_fixtures.run_k2(model, x),
                                        tf.convert_to_tensor, xs, seed)
    for i, x in enumerate(xs):
        np.save(os.path.join(d, "input_%d.npy" % i), x)
    exp = gen_fixtures.save_outputs(d, "expected_k2", ys)
    formats, notes = [], []
    m.save(os.path.join(d, "k2.h5"))
    formats.append({"format": "k2_h5", "generation": "k2",
                    "files": {"model": "k2.h5", "weights": None}, "expected": exp})
    with open(os.path.join(d, "k2.json"), "w") as f:
        f.write(m.to_json())
    m.save_weights(os.path.join(d, "k2_weights.h5"))
    formats.append({"format": "k2_json", "generation": "k2",
                    "files": {"model": "k2.json", "weights": "k2_weights.h5"}, "expected": exp})
    if spec.tfjs and tfjs is not None:
        from tensorflowjs.converters import keras_h5_conversion, keras_tfjs_loader

        try:
            with gen_fixtures.quiet():
                keras_h5_conversion.save_keras_model(m, os.path.join(d, "tfjs"))
                mt = keras_tfjs_loader.load_keras_model(os.path.join(d, "tfjs", "model.json"))
            yt = gen_fixtures.run_k2(mt, xs)
            gen_fixtures.check_outputs(spec.name + " (tfjs)", yt)
            formats.append({"format": "tfjs", "generation": "tfjs",
                            "files": {"model": "tfjs/model.json", "weights": None},
                            "expected": gen_fixtures.save_outputs(d, "expected_tfjs", yt),
                            "quantization": None})
        except Exception as e:
            notes.append("tfjs: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:300]))
    table = gen_fixtures.layer_table(m, tf_keras)
    meta = {
        "name": spec.name, "note": spec.note, "keras_version": None,
        "tf_keras_version": tf_keras.__version__, "count_params": int(m.count_params()),
        "batch": spec.batch,
        "inputs": [{"file": "input_%d.npy" % i, "name": t.name, "dtype": "float32",
                    "shape": list(x.shape)} for i, (t, x) in enumerate(zip(m.inputs, xs))],
        "outputs": [{"dtype_keras": str(y.dtype), "shape": list(y.shape)} for y in ys],
        "dtype_policy": "float32", "tolerance": spec.tol, "formats": formats,
        "layers": table, "layers_k2": table, "checks": {"conditioning": conditioning},
        "skipped": notes + ["k3: Keras 3 cannot build it (not in its keras.applications, or layer names with '/'): tf_keras only"],
        "seconds": {"k3": 0.0, "total": round(time.time() - t0, 2)},
    }
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    return meta


# The mean of the normalization betas (draw_weight in install; gen_fixtures draws them around 0).
BETA_MEAN = 0.5

# The relative perturbations of measure_conditioning: the unit roundoff of float32 (2^-24) and
# of float16 (2^-11).
CONDITIONING_EPS = {"fp32": 2.0 ** -24, "fp16": 2.0 ** -11}
CONDITIONING_DRAWS = 5


def measure_conditioning(model, run, to_tensor, xs, seed, draws=CONDITIONING_DRAWS):
    """How far the rounding that a computation at a precision does moves the outputs: every float
    variable of the model (kernels, biases, normalization statistics) and every output of every
    top-level layer of the model (its `call` wrapped for the measurement; a nested model, such as
    ConvNeXt's stem, counts as one layer: fewer roundings, so a smaller, stricter limit)
    multiplied by 1 + eps·r, r = ±1 at
    random per element, eps the unit roundoff of float32 and of float16 (CONDITIONING_EPS); the
    outputs' relative L2 change ||y' - y|| / ||y|| over all outputs, the largest of `draws`
    draws. `run(model, xs)` runs the model eagerly (a compiled predict would fix one draw of the
    layers' perturbations), `to_tensor` turns a perturbed NumPy array back into the framework's
    tensor (Keras 3 or tf_keras).

    Those are the two places where an implementation that stores its weights and activations at
    that precision rounds, whatever it accumulates in (dlc's fp16: f16 storage, f32
    accumulation); a correct one differs from Keras by errors of this size. The draws spread
    widely on the deep random networks (EfficientNetB7 fp16: 0.003 to 0.031 over five), so the
    limit is the largest draw, not a typical one: an error within it is one that rounding at
    that precision produces. compare.py and `dlc run --verify-stages` take it as the least error
    they demand (docs/keras.md section 7). The weights and the layers are restored."""
    import numpy as np

    rng = np.random.default_rng(seed + 7)
    eps_now = [None]

    def flat(ys):
        return np.concatenate([np.ravel(np.asarray(y, dtype=np.float64)) for y in ys])

    def perturbed(y, eps):
        y = np.asarray(y)
        if y.dtype.kind != "f":
            return y
        r = rng.choice(np.array([-1.0, 1.0]), size=y.shape)
        return (y.astype(np.float64) * (1.0 + eps * r)).astype(y.dtype)

    def perturb_output(y):
        if isinstance(y, (list, tuple)):
            return type(y)(perturb_output(t) for t in y)
        a = np.asarray(y)
        return to_tensor(perturbed(a, eps_now[0])) if a.dtype.kind == "f" else y

    def wrapped(orig):
        def call(*a, **k):
            y = orig(*a, **k)
            return y if eps_now[0] is None else perturb_output(y)
        return call

    layers = [l for l in model.layers if type(l).__name__ != "InputLayer"]
    saved = [(v, v.numpy()) for v in model.weights]
    y0 = flat(run(model, xs))
    out = {}
    # A layer's own `call` attribute, if it had one, to put back (None: the class's).
    own_calls = [(l, vars(l).get("call")) for l in layers]
    for l in layers:
        object.__setattr__(l, "call", wrapped(l.call))
    try:
        for name, eps in CONDITIONING_EPS.items():
            errs = []
            for _ in range(draws):
                for v, w in saved:
                    if w.dtype.kind == "f":
                        v.assign(perturbed(w, eps))
                eps_now[0] = eps
                errs.append(float(np.linalg.norm(flat(run(model, xs)) - y0) / np.linalg.norm(y0)))
                eps_now[0] = None
            out[name] = float("%.3g" % max(errs))
    finally:
        for l, own in own_calls:
            if own is None:
                object.__delattr__(l, "call")
            else:
                object.__setattr__(l, "call", own)
        for v, w in saved:
            v.assign(w)
    return out


def conditioning_k3(d, meta, keras):
    """measure_conditioning of the Keras 3 model just written to d (model.keras)."""
    import numpy as np

    m = keras.saving.load_model(os.path.join(d, "model.keras"), compile=False)
    xs = [np.load(os.path.join(d, i["file"])) for i in meta["inputs"]]
    return measure_conditioning(
        m, lambda model, x: gen_fixtures.to_list(model(x if len(x) > 1 else x[0], training=False)),
        keras.ops.convert_to_tensor, xs, gen_fixtures.seed_of(meta["name"]))


def calibrate_bn_fast(model, keras, xs, rng):
    """gen_fixtures.calibrate_bn in one pass: the model called in training mode with momentum 0
    (Dropout off) sets every moving statistic to the batch statistics of its input, each layer
    seeing the earlier ones already normalized; then the same floor and perturbation as
    calibrate_bn (mean shifted by 0.1 sd, variance floored at VAR_FLOOR of the median), the variance
    scaled by 0.6..1.6 and the same small gamma at the end of residual branches."""
    import numpy as np

    bns = [l for l in model.layers if type(l).__name__ == "BatchNormalization"]
    for l in model.layers:
        consumers = [getattr(n, "operation", None) or n.layer for n in l._outbound_nodes]
        if not (consumers and all(is_add(c) for c in consumers)):
            continue
        if type(l).__name__ == "BatchNormalization":
            l.gamma.assign(l.gamma.numpy() * gen_fixtures.RESIDUAL_GAMMA)
            # Its beta back around 0 (draw_weight centres betas at 0.5): a branch adds a
            # zero-mean term to the residual stream, else the stream's mean grows with depth
            # (to 87 in ResNet152).
            l.beta.assign(l.beta.numpy() - BETA_MEAN)
        elif type(l).__name__ == "Conv2D":
            # A pre-activation residual branch (ResNetV2) ends in a convolution, not a
            # normalization: the same small gain, on its kernel and bias.
            l.set_weights([w * gen_fixtures.RESIDUAL_GAMMA for w in l.get_weights()])
    saved = {}
    for l in model.layers:
        if type(l).__name__ == "BatchNormalization":
            saved[id(l)] = ("momentum", l.momentum)
            l.momentum = 0.0
        elif hasattr(l, "rate") and type(l).__name__.endswith("Dropout"):
            saved[id(l)] = ("rate", l.rate)
            l.rate = 0.0
    try:
        model(xs if len(xs) > 1 else xs[0], training=True)
    finally:
        for l in model.layers:
            if id(l) in saved:
                setattr(l, *saved[id(l)])
    for l in bns:
        mean = np.asarray(l.moving_mean.numpy(), dtype=np.float64)
        var = np.asarray(l.moving_variance.numpy(), dtype=np.float64)
        var = np.maximum(var, gen_fixtures.VAR_FLOOR * np.median(var))
        if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(var))):
            raise RuntimeError("BatchNormalization calibration overflowed at " + l.name)
        pm = rng.normal(size=mean.shape)
        # Wider than calibrate_bn's 0.8..1.25: with betas around 0.5 more channels of the deep
        # ResNets have a variance near 1, and 0.8..1.25 left 12.5 % of ResNet101's within 0.05
        # of 1 (0.7..1.4: 10.2 % of ResNet152's), over the 10 % by which gen_model tells
        # calibrated statistics from defaults.
        pv = rng.uniform(0.6, 1.6, size=var.shape)
        l.moving_mean.assign((mean + 0.1 * np.sqrt(var) * pm).astype("float32"))
        l.moving_variance.assign((var * pv + 1e-4).astype("float32"))


def design_head(feats, w, b, target):
    """The kernel of a softmax head whose logits on `feats` (rows x features) give every row
    a top probability of exactly `target`: the random kernel `w` (He uniform, as drawn) plus the
    least-norm correction (least squares through the rows' features) that raises or lowers each
    row's largest logit to log(target / (1 - target)) above the log-sum-exp of its others.

    Why not scale the random head until its worst row reaches `target` (gen_fixtures.
    calibrate_softmax, and what this generator did until 2026-11-27): a row whose two best
    logits nearly tie needs a large scale, and the scale multiplies every feature error. In
    ResNet101 it gave logits of +-26 and a kernel of norm 71 (He: about 4.5), and turned the
    pooled features' fp16 conditioning of 0.029 into 0.26 at the output; trained heads have
    small logits. The correction has rank at most the number of rows and a small norm
    (recorded in meta.json's checks.head); the random part keeps the output sensitive to every
    direction of the features."""
    import numpy as np

    f = np.asarray(feats, dtype=np.float64).reshape(len(feats), -1)
    w = np.asarray(w, dtype=np.float64).reshape(f.shape[1], -1)
    logits = f @ w + b
    delta = np.zeros_like(logits)
    for i, z in enumerate(logits):
        c = int(np.argmax(z))
        rest = np.delete(z, c)
        others = rest.max() + np.log(np.exp(rest - rest.max()).sum())
        delta[i, c] = others + np.log(target / (1.0 - target)) - z[c]
    dw = np.linalg.lstsq(f, delta, rcond=None)[0]
    return w + dw, {"kernel_norm": round(float(np.linalg.norm(w + dw)), 3),
                    "correction_norm": round(float(np.linalg.norm(dw)), 3)}


def calibrate_head(model, keras, xs):
    """Set the softmax head's kernel by design_head (gen_fixtures.calibrate_softmax's hook):
    a Dense softmax head, or MobileNet's and MobileNetV3's classifier, a 1x1 Conv2D on the pooled
    features followed by Flatten and Activation("softmax"). Returns the Dense head (None for the
    convolution), as calibrate_softmax does; the kernel's norms go to HEAD_CHECKS."""
    import numpy as np

    head = gen_fixtures.find_softmax_head(model)
    layer = head
    if layer is None:
        act = [l for l in model.layers if type(l).__name__ == "Activation"
               and getattr(l.activation, "__name__", "") == "softmax"]
        convs = [l for l in model.layers if type(l).__name__ == "Conv2D"
                 and tuple(l.kernel_size) == (1, 1)]
        if not act or not convs:
            raise RuntimeError("model has no softmax head")
        layer = convs[-1]
    feats = keras.Model(model.inputs, layer.input).predict(xs, verbose=0,
                                                          batch_size=len(xs[0]))
    w, b = [np.asarray(a, dtype=np.float64) for a in layer.get_weights()]
    if head is None and np.prod(np.shape(feats)[1:-1]) != 1:
        raise RuntimeError("the classifier convolution does not run on pooled features")
    kernel, norms = design_head(feats, w, b, gen_fixtures.SOFTMAX_TARGET)
    layer.set_weights([kernel.reshape(w.shape).astype("float32"), b.astype("float32")])
    HEAD_CHECKS.clear()
    HEAD_CHECKS.update(norms)
    return head


# design_head's norms for the model being generated, for meta.json's checks.head.
HEAD_CHECKS = {}


def main(registry, argv=None):
    install(fixture_apps.NO_LEGACY_H5)
    return gen_fixtures.main(argv, registry=registry)


if __name__ == "__main__":
    sys.exit(main(fixture_apps.REGISTRY))
