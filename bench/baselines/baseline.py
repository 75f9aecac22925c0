#!/usr/bin/env python3
"""Baselines for `dlc bench`: what a Keras user would run instead, on the same model file.

    baseline.py --tool TOOL --model MODEL.keras|MODEL.json [--batch N [N ...]]
                [--precision fp32|fp16] [--iters N] [--warmup N] [--json OUT] [--device gpu|cpu]
                [--inputs X.npy ...] [--expected Y.npy ...] [--rtol R]

TOOL:
  keras-jax-xla        Keras 3 on the JAX backend: the model's call jitted by XLA (what
                       `model.predict` compiles), on the GPU.
  keras-torch-eager    Keras 3 on the PyTorch backend, eager, under torch.no_grad().
  keras-torch-compile  the same under torch.compile(mode="max-autotune").
  torch-library        per layer: each Conv2D / DepthwiseConv2D / Dense of the model as one
                       cuDNN convolution or cuBLAS GEMM through PyTorch (channels_last,
                       cudnn.benchmark, no TF32), for `dlc compile --kernels library`.

MODEL.keras carries the weights; MODEL.json (model.to_json()) only the architecture, built with
random weights: timing does not need the real ones, and the device machine gets no large files.
fp16 runs the model under the mixed_float16 dtype policy (float16 compute and storage of
activations, float32 variables), as dlc's fp16 (f16 storage, f32 accumulation).

Several batch sizes run in one process, one after the other (Keras, the backend and the model
are loaded once: most of a small model's row is that start-up); --json then names one file per
batch with "{batch}" in it, each written when its batch is done, so a timeout keeps the batches
before it. torch.compile compiles every batch size statically (dynamic=False), as it would a
process of its own.

--device gpu times: --warmup untimed runs, then --iters runs, each between two CUDA events (torch)
or, for JAX, between host timestamps around a call and block_until_ready; reports the median,
p10 and p90 in the JSON schema of `dlc bench --json` (bench/README.md), `tool` naming the
baseline. --device cpu is the check that CI runs without a GPU: the same model loading and
inputs, the model computed by Keras on the JAX backend on the CPU (torch-library: each layer's
convolution or GEMM computed by NumPy on the layer's real input and compared with Keras's
output of that layer), and each output compared with --expected by relative L2 error (<= --rtol,
default 1e-4, fp16 1e-2): the GPU runs compute the same functions. Exit 1 when a check fails.

Needs Keras 3 (pinned: bench/baselines/requirements.txt) with JAX, or PyTorch for the torch
tools; the device machine has PyTorch and JAX but not Keras: bench/baselines/fetch_wheels.sh.
"""

import argparse
import json
import os
import statistics
import sys
import time

TOOLS = ("keras-jax-xla", "keras-torch-eager", "keras-torch-compile", "torch-library")


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tool", required=True, choices=TOOLS)
    ap.add_argument("--model", required=True, help="MODEL.keras or model.to_json() file")
    ap.add_argument("--batch", type=int, nargs="+", default=None,
                    help="default: the inputs' batch, else 1; several: one after the other")
    ap.add_argument("--precision", choices=("fp32", "fp16"), default="fp32")
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--device", choices=("gpu", "cpu"), default="gpu")
    ap.add_argument("--inputs", nargs="*", default=[])
    ap.add_argument("--expected", nargs="*", default=[])
    ap.add_argument("--rtol", type=float, default=None,
                    help="default 1e-4 (fp32), 1e-2 (fp16)")
    args = ap.parse_args(argv)
    if args.batch and len(args.batch) > 1:
        if args.json and "{batch}" not in args.json:
            ap.error("--json needs {batch} in its name with several --batch values")
        if args.expected:
            ap.error("--expected takes one --batch")
    return args


def backend_for(args):
    """Keras's backend: torch for the torch tools on the GPU, else JAX (the CPU path)."""
    if args.device == "gpu" and args.tool != "keras-jax-xla":
        return "torch"
    return "jax"


# ----------------------------------------------------------------------------------------------
# Model and inputs


def with_policy(config, policy):
    """A model config with every layer's float dtype policy replaced by `policy`."""
    if isinstance(config, dict):
        if config.get("class_name") in ("DTypePolicy", "FloatDTypePolicy") and \
                isinstance(config.get("config"), dict):
            name = config["config"].get("name")
            if name in ("float32", "mixed_float16", "float16"):
                config = dict(config, config=dict(config["config"], name=policy))
                return config
        return {k: with_policy(v, policy) for k, v in config.items()}
    if isinstance(config, list):
        return [with_policy(v, policy) for v in config]
    return config


def load_model(keras, path, precision):
    """The model (random weights from a .json architecture), under mixed_float16 for fp16."""
    if path.endswith(".json"):
        with open(path) as f:
            text = f.read()
        model = keras.models.model_from_json(text)
    else:
        model = keras.saving.load_model(path, compile=False)
    if precision == "fp16":
        weights = model.get_weights()
        config = json.loads(model.to_json())
        model = keras.models.model_from_json(json.dumps(with_policy(config, "mixed_float16")))
        model.set_weights(weights)
    return model


def input_specs(model):
    """(shape without batch, dtype) per model input."""
    specs = []
    for t in model.inputs:
        shape = tuple(int(d) for d in t.shape[1:])
        specs.append((shape, str(t.dtype)))
    return specs


def make_inputs(np, model, args, batch):
    """The --inputs (repeated or cut to `batch`), else random in [0, 1) like `dlc bench`."""
    if args.inputs:
        xs = [np.load(p) for p in args.inputs]
        if batch:
            xs = [np.resize(x, (batch,) + x.shape[1:]).astype(x.dtype) for x in xs]
        return xs
    rng = np.random.default_rng(0)
    batch = batch or 1
    xs = []
    for shape, dtype in input_specs(model):
        x = rng.random((batch,) + shape, dtype=np.float32)
        xs.append(x.astype(dtype) if "int" not in dtype else np.zeros((batch,) + shape, dtype))
    return xs


def rel_l2(np, out, ref):
    out = np.asarray(out, np.float64).ravel()
    ref = np.asarray(ref, np.float64).ravel()
    if out.shape != ref.shape:
        return float("inf")
    den = np.linalg.norm(ref)
    return float(np.linalg.norm(out - ref) / (den if den > 0 else 1.0))


# ----------------------------------------------------------------------------------------------
# Timing


def summary(ms):
    def q(p):
        s = sorted(ms)
        at = p * (len(s) - 1)
        lo = int(at)
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (at - lo)
    return {"median": q(0.5), "p10": q(0.1), "p90": q(0.9), "min": min(ms), "max": max(ms),
            "mean": statistics.fmean(ms)}


def time_torch(torch, fn, iters, warmup):
    """Milliseconds per call, CUDA events around each (as dlc bench)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(iters)]
    for start, end in events:
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return [start.elapsed_time(end) for start, end in events]


def time_host(fn, sync, iters, warmup):
    """Milliseconds per call by the host clock, waiting for each result (JAX)."""
    for _ in range(warmup):
        sync(fn())
    ms = []
    for _ in range(iters):
        t0 = time.perf_counter()
        sync(fn())
        ms.append((time.perf_counter() - t0) * 1e3)
    return ms


def device_info():
    """The GPU, driver and CUDA versions as dlc bench reports them (torch, else nvidia-smi)."""
    info = {"name": "", "compute_capability": "", "sms": 0, "driver": "", "cuda_runtime": ""}
    try:
        import torch
        if torch.cuda.is_available():
            p = torch.cuda.get_device_properties(0)
            info.update(name=p.name, compute_capability="%d.%d" % (p.major, p.minor),
                        sms=p.multi_processor_count, cuda_runtime=torch.version.cuda or "")
    except Exception:  # noqa: BLE001 - no torch: the fields stay empty
        pass
    try:
        import subprocess
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=20).stdout.strip().splitlines()
        if out:
            name, driver = [s.strip() for s in out[0].split(",")[:2]]
            info["driver"] = driver
            info["name"] = info["name"] or name
    except Exception:  # noqa: BLE001 - no nvidia-smi
        pass
    return info


# ----------------------------------------------------------------------------------------------
# The library layers (torch-library)


def library_layers(keras, model):
    """Every Conv2D, DepthwiseConv2D and Dense of the model (nested models too), in order."""
    found = []

    def walk(layer):
        if isinstance(layer, keras.Model):
            for sub in layer.layers:
                walk(sub)
        elif isinstance(layer, (keras.layers.Conv2D, keras.layers.DepthwiseConv2D,
                                keras.layers.Dense)):
            found.append(layer)
    walk(model)
    return found


def conv_geometry(layer, in_shape):
    """(pads [top, bottom, left, right], output H, W) as Keras/TF pad for `layer`."""
    h, w = in_shape[1], in_shape[2]
    kh, kw = layer.kernel_size
    sh, sw = layer.strides
    dh, dw = layer.dilation_rate
    ekh, ekw = dh * (kh - 1) + 1, dw * (kw - 1) + 1
    if layer.padding == "same":
        oh, ow = -(-h // sh), -(-w // sw)
        ph = max((oh - 1) * sh + ekh - h, 0)
        pw = max((ow - 1) * sw + ekw - w, 0)
        pads = [ph // 2, ph - ph // 2, pw // 2, pw - pw // 2]
    else:
        oh, ow = (h - ekh) // sh + 1, (w - ekw) // sw + 1
        pads = [0, 0, 0, 0]
    return pads, oh, ow


def numpy_layer(np, layer, x, keras):
    """The layer's convolution or GEMM (+ bias, activation) in NumPy, NHWC, float64."""
    x = np.asarray(x, np.float64)
    weights = [np.asarray(w, np.float64) for w in layer.get_weights()]
    kernel = weights[0]
    bias = weights[1] if getattr(layer, "use_bias", False) else None
    if isinstance(layer, keras.layers.Dense):
        y = x @ kernel
    else:
        pads, oh, ow = conv_geometry(layer, x.shape)
        xp = np.pad(x, ((0, 0), (pads[0], pads[1]), (pads[2], pads[3]), (0, 0)))
        kh, kw = layer.kernel_size
        sh, sw = layer.strides
        dh, dw = layer.dilation_rate
        n, c = x.shape[0], x.shape[3]
        # im2col: [N, OH, OW, KH, KW, C]
        cols = np.empty((n, oh, ow, kh, kw, c))
        for i in range(kh):
            for j in range(kw):
                cols[:, :, :, i, j, :] = xp[:, i * dh: i * dh + sh * (oh - 1) + 1: sh,
                                            j * dw: j * dw + sw * (ow - 1) + 1: sw, :]
        if isinstance(layer, keras.layers.DepthwiseConv2D):
            m = kernel.shape[3]
            y = np.einsum("nhwijc,ijcm->nhwcm", cols, kernel).reshape(n, oh, ow, c * m)
        else:
            groups = getattr(layer, "groups", 1)
            cg = c // groups
            k = kernel.shape[3]
            kg = k // groups
            y = np.concatenate([
                np.einsum("nhwijc,ijck->nhwk", cols[..., g * cg:(g + 1) * cg],
                          kernel[:, :, :, g * kg:(g + 1) * kg]) for g in range(groups)], axis=-1)
    if bias is not None:
        y = y + bias
    return np.asarray(keras.ops.convert_to_numpy(layer.activation(y)))


def torch_layer_fn(torch, layer, keras, batch, in_shape, dtype):
    """A callable running the layer's conv/GEMM once on random data, and its FLOPs."""
    F = torch.nn.functional
    dev = "cuda"
    if isinstance(layer, keras.layers.Dense):
        k = int(in_shape[-1])
        m = batch
        for d in in_shape[1:-1]:
            m *= int(d)
        n = int(layer.units)
        a = torch.rand((m, k), device=dev, dtype=dtype)
        w = torch.rand((n, k), device=dev, dtype=dtype)
        b = torch.rand((n,), device=dev, dtype=dtype) if layer.use_bias else None
        return (lambda: F.linear(a, w, b)), 2 * m * n * k, "cublas gemm"
    c = int(in_shape[-1])
    kh, kw = layer.kernel_size
    pads, oh, ow = conv_geometry(layer, in_shape)
    x = torch.rand((batch, c, int(in_shape[1]) + pads[0] + pads[1],
                    int(in_shape[2]) + pads[2] + pads[3]), device=dev, dtype=dtype)
    x = x.contiguous(memory_format=torch.channels_last)
    if isinstance(layer, keras.layers.DepthwiseConv2D):
        groups, k = c, c * int(layer.depth_multiplier)
    else:
        groups, k = int(getattr(layer, "groups", 1)), int(layer.filters)
    w = torch.rand((k, c // groups, kh, kw), device=dev, dtype=dtype)
    w = w.contiguous(memory_format=torch.channels_last)
    b = torch.rand((k,), device=dev, dtype=dtype) if layer.use_bias else None
    flops = 2 * batch * oh * ow * k * (c // groups) * kh * kw
    fn = lambda: F.conv2d(x, w, b, stride=tuple(layer.strides),  # noqa: E731
                          dilation=tuple(layer.dilation_rate), groups=groups)
    return fn, flops, "cudnn conv2d"


# ----------------------------------------------------------------------------------------------


def run(args):
    """Every --batch in turn on one loaded model; exit status 1 when a CPU check failed. Each
    batch size's JSON has its `wall_s`, the first one's with the start-up (Keras, the backend,
    the model)."""
    started = time.time()
    if args.rtol is None:
        args.rtol = 1e-2 if args.precision == "fp16" else 1e-4
    os.environ["KERAS_BACKEND"] = backend_for(args)
    if args.device == "cpu":
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    import numpy as np
    import keras

    model = load_model(keras, args.model, args.precision)
    state = {"since": started}  # what the batches share: the jitted call, the compiled module
    failed = False
    for batch in args.batch or [None]:
        failed |= run_batch(args, np, keras, model, batch, state)
    return 1 if failed else 0


def run_batch(args, np, keras, model, batch_arg, state):
    """One batch size: times (or checks, --device cpu) the tool, writes its JSON; True when a
    check failed."""
    xs = make_inputs(np, model, args, batch_arg)
    batch = int(xs[0].shape[0]) if xs else (batch_arg or 1)
    result = {
        "schema": "dlc-bench/1", "tool": args.tool,
        "model": os.path.basename(args.model), "artifact": None,
        "precision": args.precision, "kernels": args.tool, "batch": batch,
        "iters": args.iters, "warmup": args.warmup, "device": {},
        "dlc": {"version": None, "commit": os.environ.get("DLC_COMMIT", "unknown")},
        "versions": {"keras": keras.__version__, "backend": keras.backend.backend()},
        "latency_ms": None, "samples_per_s": None, "flops": None, "bytes": None,
        "tflops": None, "roofline_fraction": None, "steps": [], "check": None,
    }
    failed = False

    if args.device == "cpu":
        result["device"] = {"name": "cpu"}
        checks = []
        if args.tool == "torch-library":
            # Each library layer on its real input: NumPy against Keras.
            for layer in library_layers(keras, model):
                sub = keras.Model(model.inputs, [layer.input, layer.output])
                x_in, y_keras = sub(list(xs), training=False)
                err = rel_l2(np, numpy_layer(np, layer, keras.ops.convert_to_numpy(x_in), keras),
                             keras.ops.convert_to_numpy(y_keras))
                checks.append({"layer": layer.name, "rel_l2": err, "ok": err <= args.rtol})
        import jax
        if "fn" not in state:
            state["fn"] = jax.jit(lambda *a: model(a[0] if len(a) == 1 else list(a),
                                                   training=False))
        fn = state["fn"]
        outs = fn(*xs)
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        ms = time_host(lambda: fn(*xs), lambda o: jax.block_until_ready(o),
                       min(args.iters, 5), min(args.warmup, 1))
        result["latency_ms"] = summary(ms)
        for i, path in enumerate(args.expected):
            err = rel_l2(np, keras.ops.convert_to_numpy(outs[i]), np.load(path))
            checks.append({"output": i, "rel_l2": err, "ok": err <= args.rtol})
        result["check"] = checks
        failed = any(not c["ok"] for c in checks)
        for c in checks:
            print("%s: %s %s rel_l2 %.3g (<= %g)" % (
                args.tool, "ok" if c["ok"] else "FAILED",
                c.get("layer", "output %s" % c.get("output")), c["rel_l2"], args.rtol))
    elif args.tool == "keras-jax-xla":
        import jax
        result["device"] = device_info()
        if "fn" not in state:
            if args.precision == "fp16":
                # jaxlib's cuDNN RNN has no float16 ("Unknown output type float16", the first
                # H200 runs): the recurrent layers take Keras's own loop (a lax.scan that XLA
                # compiles), as use_cudnn="auto" would where cuDNN cannot run the layer.
                rnns = [l for l in model._flatten_layers()
                        if getattr(l, "use_cudnn", None) == "auto"]
                for layer in rnns:
                    layer.use_cudnn = False
                if rnns:
                    state["notes"] = "use_cudnn=False (jaxlib's cuDNN RNN has no float16): " + \
                        ", ".join(l.name for l in rnns)
            # One jitted call: XLA traces and compiles it again for each batch size.
            state["fn"] = jax.jit(lambda *a: model(a[0] if len(a) == 1 else list(a),
                                                   training=False))
        if "notes" in state:
            result["notes"] = state["notes"]
        fn = state["fn"]
        dev = jax.devices()[0]
        xs_dev = [jax.device_put(x, dev) for x in xs]
        ms = time_host(lambda: fn(*xs_dev), jax.block_until_ready, args.iters, args.warmup)
        result["latency_ms"] = summary(ms)
        result["versions"]["jax"] = jax.__version__
    else:
        import torch
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        result["device"] = device_info()
        result["versions"]["torch"] = torch.__version__
        dtype = torch.float16 if args.precision == "fp16" else torch.float32
        if args.tool == "torch-library":
            total = 0.0
            for layer in library_layers(keras, model):
                in_shape = tuple(layer.input.shape)
                fn, flops, what = torch_layer_fn(torch, layer, keras, batch, in_shape, dtype)
                with torch.no_grad():
                    ms = time_torch(torch, fn, args.iters, args.warmup)
                med = summary(ms)["median"]
                total += med
                result["steps"].append({
                    "name": layer.name, "kind": "library_call", "what": what,
                    "layers": layer.name, "ms": med, "share": None, "flops": flops,
                    "bytes": None, "tflops": flops / 1e12 / (med / 1e3), "gbps": None,
                    "roofline_fraction": None})
            for s in result["steps"]:
                s["share"] = s["ms"] / total if total else None
            result["latency_ms"] = {"median": total, "p10": None, "p90": None, "min": None,
                                    "max": None, "mean": None}
            result["note"] = "sum of the per-layer medians (library calls alone, no fusion)"
        else:
            xs_dev = [torch.from_numpy(x).to("cuda") for x in xs]
            if "call" not in state:
                state["call"] = model
                if args.tool == "keras-torch-compile":
                    # Static shapes: each batch size compiled and autotuned for itself, not
                    # one dynamic-shape graph from the second size on.
                    state["call"] = torch.compile(model, mode="max-autotune", dynamic=False)
                    reset_dynamo_counters(torch)
            call = state["call"]

            def fn():
                with torch.no_grad():
                    return call(xs_dev[0] if len(xs_dev) == 1 else xs_dev, training=False)
            ms = time_torch(torch, fn, args.iters, args.warmup)
            result["latency_ms"] = summary(ms)
            if args.tool == "keras-torch-compile":
                result["dynamo"] = dynamo_stats(torch)
                reset_dynamo_counters(torch)
    if result["latency_ms"] and result["latency_ms"]["median"]:
        result["samples_per_s"] = batch / (result["latency_ms"]["median"] / 1e3)
    now = time.time()
    result["wall_s"], state["since"] = now - state["since"], now
    if args.json:
        path = args.json.replace("{batch}", str(batch))
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
    lat = result["latency_ms"] or {}
    print("%s %s %s batch %d: median %.4f ms%s" % (
        args.tool, os.path.basename(args.model), args.precision, batch,
        lat.get("median") or 0, " (cpu check)" if args.device == "cpu" else ""), flush=True)
    return failed


def reset_dynamo_counters(torch):
    """TorchDynamo's counters from zero, so that each batch's `dynamo` is its own."""
    try:
        from torch._dynamo.utils import counters
        counters.clear()
    except Exception:  # noqa: BLE001 - an internal API; dynamo_stats says when it changed
        pass


def dynamo_stats(torch):
    """What torch.compile made of the Keras model: TorchDynamo's statistics
    (unique_graphs, calls_captured, ...) and its graph breaks (the count and
    the three most frequent reasons), from its counters (an internal API:
    the error instead when it has changed). Inductor ran MobileNetV2 at
    batch 1 slower than eager on the H200 (93.9 vs 49.6 ms, bench/NOTES.md)
    for a reason the run did not record; these say whether graph breaks are
    it."""
    try:
        from torch._dynamo.utils import counters
        breaks = counters.get("graph_break", {})
        return {"stats": {str(k): int(v) for k, v in counters.get("stats", {}).items()},
                "graph_breaks": int(sum(breaks.values())),
                "top_break_reasons": [str(r)[:200] for r, _ in
                                      sorted(breaks.items(), key=lambda kv: -kv[1])[:3]]}
    except Exception as e:  # the counters are TorchDynamo's internals
        return {"error": "%s: %s" % (type(e).__name__, str(e)[:200])}


def main(argv=None):
    return run(parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
