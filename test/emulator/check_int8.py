#!/usr/bin/env python3
"""dlc's own int8 kernels (--precision int8) on the host emulator, against the reference executor.

    check_int8.py --emulate BUILD/bin/dlc-emulate --dlc BUILD/bin/dlc --out DIR
                  [--fixtures DIR --models M ...] [--cache-dir DIR] [--reverse]

1. Graph IR written here (no Keras, no calibration: the quantized ops themselves, as
   dlc-quantize-int8 leaves them after the layout stage, NHWC with OHWI filters):
   - conv_c32: graph.quantize_static of a [2, 9, 9, 32] input (one NaN) and a 3x3 quantized_conv2d
     to 40 channels, pads 1, bias and relu: the implicit GEMM on int8 tensor cores (K = 288);
   - conv_wide: [4, 32, 32, 64] to 128 channels, 3x3, pads 1 (M = 4096: tiles of several
     warps);
   - conv_c48: C = 48 (a multiple of 16, not of 32: a ragged last k-tile), 3x3, stride 2, pads
     [0, 1, 0, 1], bias, relu6, and the quantize_static of the next conv fused into the
     epilogue (the kernel stores int8); then a 1x1 conv with C = 24 (no multiple of 16: the
     per-element kernel's exact int32 sum) and a bias;
   - depthwise: a quantized_conv2d with groups = C = 24 (dlc-quantize-int8's depthwise conv)
     over the HWIO filter [3, 3, 1, 24], stride 2, bias and relu6: the per-element kernel;
   - depthwise_lanes: the same over [8, 48, 48, 64], stride 1, pads 1, and the next 1x1 conv's
     quantize_static fused: the per-element kernel's vector lanes, 16 int8 channels a thread
     (its thread count is checked);
   - residual_side: values with two users, an add and a quantize_static, over [8, 32, 32, 64]:
     an elementwise tree on the input (4-wide lanes, thread count checked) and a 1x1 conv's
     epilogue (residual add, relu; tensor cores) each store the value and its int8 (dlc-fuse's
     side output), both outs compared; a 3x3 conv reads the int8 and adds the f32;
   - pool_lanes: a 1x1 conv over [8, 96, 96, 64] with relu, a 3x3 stride-2 padded max pool
     and a quantize_static, which dlc-simplify moves before the pool: the conv stores int8 and
     the pool pools it, 16 channels a thread (its thread count checked).
   Every kernel must equal the reference executor on its own inputs exactly (int8 values,
   int32 sums, the same f32 de-scaling, bias and clipping), and so must the outputs; the
   C = 32 and C = 48 convolutions must take the tensor cores (conv_tc).
2. With --models, Keras fixtures under --fixtures compiled with --precision int8 --calibrate
   (a calibration folder written here: 4 batches of the fixture's batch size, normal(0, 1),
   seeded): every kernel named after a quantization op (quantize_static, quantized_conv2d,
   quantized_matmul: the int8 kernels and the epilogues fused into them) must equal the
   reference exactly on its own inputs, every other kernel within 1e-4, and the outputs match
   `dlc run --device cpu --precision int8` (the reference executor on the same plan) within
   1e-4 (a softmax's expf, the only math function of the seed models' int8 kernels, may
   differ by an ulp).
--int8-unsigned-activations, --int8-bias-correction, --int8-depthwise-channel-scales and
--int8-fallback-fp16 pass dlc's options
of those names (the last as --int8-fallback fp16) to both. With --reverse, the CTAs of each grid and the threads
of each CTA run last to first. Prints one
line per kernel; exit 1 on any failure. NumPy and the standard library only.
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np


def literal(values):
    if values.ndim == 1:
        return "[" + ",".join(repr(float(v)) if values.dtype.kind == "f" else str(int(v))
                              for v in values) + "]"
    return "[" + ",".join(literal(row) for row in values) + "]"


def t(shape, elem):
    return "tensor<%sx%s>" % ("x".join(map(str, shape)), elem)


def out_shape(n, h, w, kh, kw, strides, pads, o):
    oh = (h + pads[0] + pads[1] - kh) // strides[0] + 1
    ow = (w + pads[2] + pads[3] - kw) // strides[1] + 1
    return [n, oh, ow, o]


class Writer:
    """Graph IR of one function, built op by op."""

    def __init__(self, rng):
        self.rng = rng
        self.lines = []
        self.count = 0

    def name(self):
        self.count += 1
        return "%%v%d" % self.count

    def const(self, values, elem):
        v = self.name()
        self.lines.append("  %s = graph.constant dense<%s> : %s" % (
            v, literal(values), t(values.shape, elem)))
        return v

    def quantize(self, x, shape, scale):
        v = self.name()
        scale_shape = shape[:-1] + [1]
        self.lines.append(
            "  %s:2 = graph.quantize_static %s {scale = %r : f32} : (%s) -> (%s, %s)" % (
                v, x, float(np.float32(scale)), t(shape, "f32"), t(shape, "i8"),
                t(scale_shape, "f32")))
        return v + "#0"

    def conv(self, q, shape, kh, kw, o, strides, pads, groups, input_scale):
        """quantized_conv2d of q [n, h, w, c] (int8); OHWI for one group, HWIO otherwise."""
        n, h, w, c = shape
        cig = c // groups
        if groups == 1:
            fshape, layout = [o, kh, kw, cig], "ohwi"
        else:
            fshape, layout = [kh, kw, cig, o], "hwio"
        filt = self.rng.integers(-127, 128, size=fshape).astype(np.int8)
        fs = (self.rng.random(o) * 200 + 100).astype(np.float32)
        wv, sv = self.const(filt, "i8"), self.const(fs, "f32")
        res = out_shape(n, h, w, kh, kw, strides, pads, o)
        v = self.name()
        self.lines.append(
            "  %s = graph.quantized_conv2d %s, %s, %s {filter_layout = #graph.filter_layout<%s>, "
            "groups = %d : i64, input_scale = %r : f32, pads = array<i64: %s>, "
            "strides = array<i64: %d, %d>} : (%s, %s, %s) -> %s" % (
                v, q, wv, sv, layout, groups, float(np.float32(input_scale)),
                ", ".join(map(str, pads)), strides[0], strides[1], t(shape, "i8"),
                t(fshape, "i8"), t([o], "f32"), t(res, "f32")))
        return v, res

    def bias(self, x, shape):
        b = self.const((self.rng.standard_normal(shape[-1]) * 0.5).astype(np.float32), "f32")
        v = self.name()
        self.lines.append("  %s = graph.bias_add %s, %s : (%s, %s) -> %s" % (
            v, x, b, t(shape, "f32"), t([shape[-1]], "f32"), t(shape, "f32")))
        return v

    def relu(self, x, shape, max_value=None):
        v = self.name()
        fn = "<relu>" if max_value is None else "<relu, max_value = %r>" % max_value
        self.lines.append("  %s = graph.activation %s %s : %s" % (v, fn, x, t(shape, "f32")))
        return v

    def add(self, a, b, shape, b_shape=None):
        v = self.name()
        self.lines.append("  %s = graph.add %s, %s : (%s, %s) -> %s" % (
            v, a, b, t(shape, "f32"), t(b_shape or shape, "f32"), t(shape, "f32")))
        return v

    def max_pool(self, x, shape, window, stride, pads):
        n, h, w, c = shape
        res = out_shape(n, h, w, window, window, [stride, stride], pads, c)
        v = self.name()
        self.lines.append(
            "  %s = graph.pool2d <max> %s {pads = array<i64: %s>, strides = array<i64: %d, %d>, "
            "window = array<i64: %d, %d>} : (%s) -> %s" % (
                v, x, ", ".join(map(str, pads)), stride, stride, window, window,
                t(shape, "f32"), t(res, "f32")))
        return v, res

    def module(self, in_shape, result, res_shape):
        return ("func.func @main(%%x: %s) -> %s {\n%s\n  return %s : %s\n}\n" % (
            t(in_shape, "f32"), t(res_shape, "f32"), "\n".join(self.lines), result,
            t(res_shape, "f32")))


def case_conv_c32(rng):
    w = Writer(rng)
    shape = [2, 9, 9, 32]
    q = w.quantize("%x", shape, 40.0)
    y, s = w.conv(q, shape, 3, 3, 40, [1, 1], [1, 1, 1, 1], 1, 40.0)
    y = w.relu(w.bias(y, s), s)
    x = (rng.standard_normal(shape) * 1.2).astype(np.float32)
    x[1, 4, 5, 7] = np.nan
    return w.module(shape, y, s), x, {"conv_tc": 1}


def two_convs(rng, shape, scale, o1, strides, pads, groups, o2, bias2, x_std):
    """quantize, a 3x3 quantized_conv2d (o1 channels; groups) with bias and relu6, the next
    1x1 conv's quantize_static (fused into the first's kernel) and that conv (o2 channels)."""
    w = Writer(rng)
    q = w.quantize("%x", shape, scale)
    y, s = w.conv(q, shape, 3, 3, o1, strides, pads, groups, scale)
    y = w.relu(w.bias(y, s), s, 6.0)
    q2 = w.quantize(y, s, 127.0 / 6.0)
    z, s2 = w.conv(q2, s, 1, 1, o2, [1, 1], [0, 0, 0, 0], 1, 127.0 / 6.0)
    if bias2:
        z = w.bias(z, s2)
    x = (rng.standard_normal(shape) * x_std).astype(np.float32)
    return w.module(shape, z, s2), x


def case_conv_c48(rng):
    ir, x = two_convs(rng, [2, 11, 10, 48], 30.0, 24, [2, 2], [0, 1, 0, 1], 1, 20, True, 1.5)
    return ir, x, {"conv_tc": 1, "conv_simt": 1}


def case_depthwise(rng):
    w = Writer(rng)
    shape = [2, 10, 10, 24]
    q = w.quantize("%x", shape, 50.0)
    y, s = w.conv(q, shape, 3, 3, 24, [2, 2], [0, 1, 0, 1], 24, 50.0)
    y = w.relu(w.bias(y, s), s, 6.0)
    x = rng.standard_normal(shape).astype(np.float32)
    return w.module(shape, y, s), x, {"depthwise": 1}


def case_depthwise_lanes(rng):
    ir, x = two_convs(rng, [8, 48, 48, 64], 50.0, 64, [1, 1], [1, 1, 1, 1], 64, 16, False, 1.0)
    return ir, x, {"depthwise": 1, "conv_tc": 1}


def case_conv_wide(rng):
    w = Writer(rng)
    shape = [4, 32, 32, 64]
    q = w.quantize("%x", shape, 45.0)
    y, s = w.conv(q, shape, 3, 3, 128, [1, 1], [1, 1, 1, 1], 1, 45.0)
    y = w.bias(y, s)
    x = rng.standard_normal(shape).astype(np.float32)
    return w.module(shape, y, s), x, {"conv_tc": 1}


def case_residual_side(rng):
    """Values with two users, an add and a quantize_static (a residual stream): the
    quantize_static is a side output of the kernel computing the value (dlc-fuse). u, an
    elementwise tree on the input, stores f32 and int8 as 4-wide vector lanes; z, the first
    convolution's epilogue (the residual add of u, relu), stores both from the tensor-core
    epilogue; the second convolution adds z."""
    w = Writer(rng)
    shape = [8, 32, 32, 64]
    c = w.const((rng.standard_normal(64) * 0.3).astype(np.float32), "f32")
    u = w.relu(w.add("%x", c, shape, [64]), shape)
    y, s = w.conv(w.quantize(u, shape, 40.0), shape, 1, 1, 64, [1, 1], [0, 0, 0, 0], 1, 40.0)
    z = w.relu(w.add(w.bias(y, s), u, s), s)
    y2, s2 = w.conv(w.quantize(z, s, 30.0), s, 3, 3, 64, [1, 1], [1, 1, 1, 1], 1, 30.0)
    out = w.add(y2, z, s2)
    x = rng.standard_normal(shape).astype(np.float32)
    return w.module(shape, out, s2), x, {"conv_tc": 2, "elementwise": 1}


def case_pool_lanes(rng):
    """A 1x1 conv over [8, 96, 96, 64] with relu, then a 3x3 stride-2 max pool with padding
    (ResNet's) and the next 1x1 conv's quantize_static, which dlc-simplify moves before the
    pool: the first conv's epilogue stores int8 and the pool takes it, 16 channels a thread
    (thread count checked)."""
    w = Writer(rng)
    shape = [8, 96, 96, 64]
    y, s = w.conv(w.quantize("%x", shape, 40.0), shape, 1, 1, 64, [1, 1], [0, 0, 0, 0], 1, 40.0)
    p, s1 = w.max_pool(w.relu(y, s), s, 3, 2, [1, 1, 1, 1])
    z, s2 = w.conv(w.quantize(p, s1, 0.05), s1, 1, 1, 16, [1, 1], [0, 0, 0, 0], 1, 0.05)
    x = rng.standard_normal(shape).astype(np.float32)
    return w.module(shape, z, s2), x, {"pool": 1, "conv_tc": 2}


CASES = {"conv_c32": case_conv_c32, "conv_wide": case_conv_wide, "conv_c48": case_conv_c48,
         "depthwise": case_depthwise, "depthwise_lanes": case_depthwise_lanes,
         "residual_side": case_residual_side, "pool_lanes": case_pool_lanes}
# The threads a case's kernel of a family must run: depthwise_lanes's 1179648 int8 outputs as
# 16-channel vector lanes (ElementEmitter::emitWindowLanes), 73728 threads (narrower lanes,
# or one thread per element, would be at least twice as many); residual_side's tree, 524288
# f32 outputs and their int8 as 4-wide lanes; pool_lanes's int8 max pool, 16 channels a
# thread.
THREADS = {"depthwise_lanes": ("depthwise", 1179648 // 16),
           "residual_side": ("elementwise", 524288 // 4),
           "pool_lanes": ("pool", 1179648 // 16)}


def rel_l2(a, e):
    a, e = np.asarray(a, np.float64).ravel(), np.asarray(e, np.float64).ravel()
    finite = np.isfinite(e)
    if a.shape != e.shape or not np.array_equal(np.isfinite(a), finite):
        return float("inf")
    norm = np.linalg.norm(e[finite])
    d = np.linalg.norm(a[finite] - e[finite])
    return float(d / norm) if norm > 0 else float(d)


def emulate(args, model, inputs, outputs, report, extra=()):
    cmd = [args.emulate, model, "--check-kernels", "--report", report] + list(extra)
    for i in inputs:
        cmd += ["--input", i]
    for o in outputs:
        cmd += ["--output", o]
    if args.cache_dir:
        cmd += ["--cache-dir", args.cache_dir]
    if args.reverse:
        cmd.append("--reverse")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=args.timeout)
    if p.returncode != 0:
        raise RuntimeError("dlc-emulate exited %d: %s" % (p.returncode, p.stderr.decode().strip()))
    with open(report) as f:
        return json.load(f)["kernels"]


def show(label, kernels):
    for k in kernels:
        print("%-10s %-28s %-10s %-44s max |diff| %s, rel L2 %s" % (
            label, k["name"], k["family"], k.get("tiling", ""), k.get("max_abs"),
            k.get("error")))


def check_case(args, name):
    rng = np.random.default_rng(sum(map(ord, name)))
    ir, x, families = CASES[name](rng)
    folder = os.path.join(args.out, name)
    os.makedirs(folder, exist_ok=True)
    model = os.path.join(folder, "model.mlir")
    with open(model, "w") as f:
        f.write(ir)
    inp, out = os.path.join(folder, "x.npy"), os.path.join(folder, "y.npy")
    np.save(inp, x)
    kernels = emulate(args, model, [inp], [out], os.path.join(folder, "report.json"))
    show(name, kernels)
    problems = []
    for k in kernels:
        if "error" in k and k.get("max_abs") != 0:
            problems.append("%s: kernel %s differs from the reference (max |diff| %s)" % (
                name, k["name"], k.get("max_abs")))
    for family, count in families.items():
        got = sum(1 for k in kernels if k["family"] == family)
        if got < count:
            problems.append("%s: %d %s kernel(s), expected %d" % (name, got, family, count))
    if name in THREADS:
        family, threads = THREADS[name]
        got = [k["grid"][0] * k["block"][0] for k in kernels if k["family"] == family]
        if threads not in got:
            problems.append("%s: the %s kernel ran %s threads, expected %d (16-byte lanes)" % (
                name, family, got, threads))
    return problems


def check_model(args, name):
    fixture = os.path.join(args.fixtures, name)
    with open(os.path.join(fixture, "meta.json")) as f:
        meta = json.load(f)
    model = os.path.join(fixture, "model.keras")
    inputs = [os.path.join(fixture, i["file"]) for i in meta["inputs"]]
    folder = os.path.join(args.out, name)
    cal = os.path.join(folder, "cal")
    os.makedirs(cal, exist_ok=True)
    rng = np.random.default_rng(sum(map(ord, "int8/" + name)))
    xs = [np.load(i) for i in inputs]
    for b in range(4):
        for i, x in enumerate(xs):
            batch = rng.standard_normal(x.shape).astype(x.dtype)
            stem = "b%d" % b if len(xs) == 1 else "b%d.%d" % (b, i)
            np.save(os.path.join(cal, stem + ".npy"), batch)
    n_out = len(meta["outputs"])
    emulated = [os.path.join(folder, "emu-%d.npy" % i) for i in range(n_out)]
    reference = [os.path.join(folder, "ref-%d.npy" % i) for i in range(n_out)]
    kernels = emulate(args, model, inputs, emulated, os.path.join(folder, "report.json"),
                      ["--precision", "int8", "--calibrate", cal] + args.int8_flags)
    show(name, kernels)
    cmd = [args.dlc, "run", model, "--device", "cpu", "--precision", "int8", "--calibrate", cal] + args.int8_flags
    for i in inputs:
        cmd += ["--input", i]
    for o in reference:
        cmd += ["--output", o]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=args.timeout)
    if p.returncode != 0:
        return ["%s: dlc run exited %d: %s" % (name, p.returncode, p.stderr.decode().strip())]
    problems = []
    exact = [k for k in kernels if "quantize" in k["name"]]
    if not exact:
        problems.append("%s: no int8 kernel" % name)
    for k in kernels:
        if "error" not in k:
            continue
        if "quantize" in k["name"]:
            if k.get("max_abs") != 0:
                problems.append("%s: kernel %s differs from the reference (max |diff| %s)" % (
                    name, k["name"], k.get("max_abs")))
        elif k["error"] is None or not k["error"] <= 1e-4:
            problems.append("%s: kernel %s relative L2 %s" % (name, k["name"], k["error"]))
    for i, (a, e) in enumerate(zip(emulated, reference)):
        err = rel_l2(np.load(a), np.load(e))
        print("%-10s output %d: relative L2 %.3g against dlc run --device cpu, max |diff| %.3g"
              % (name, i, err, float(np.nanmax(np.abs(np.load(a) - np.load(e))))))
        if not err <= 1e-4:
            problems.append("%s: output %d relative L2 %.3g" % (name, i, err))
    return problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--emulate", required=True)
    ap.add_argument("--dlc", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--fixtures")
    ap.add_argument("--models", nargs="*", default=[])
    ap.add_argument("--cases", nargs="*", default=sorted(CASES))
    ap.add_argument("--cache-dir")
    ap.add_argument("--reverse", action="store_true")
    ap.add_argument("--int8-unsigned-activations", dest="int8_flags", action="append_const",
                    const="--int8-unsigned-activations", default=[],
                    help="pass --int8-unsigned-activations to dlc and dlc-emulate")
    ap.add_argument("--int8-bias-correction", dest="int8_flags", action="append_const",
                    const="--int8-bias-correction",
                    help="pass --int8-bias-correction to dlc and dlc-emulate")
    ap.add_argument("--int8-depthwise-channel-scales", dest="int8_flags",
                    action="append_const", const="--int8-depthwise-channel-scales",
                    help="pass --int8-depthwise-channel-scales to dlc and dlc-emulate")
    ap.add_argument("--int8-fallback-fp16", action="store_true",
                    help="pass --int8-fallback fp16 to dlc and dlc-emulate")
    ap.add_argument("--timeout", type=int, default=900)
    args = ap.parse_args(argv)
    if args.int8_fallback_fp16:
        args.int8_flags = args.int8_flags + ["--int8-fallback", "fp16"]
    os.makedirs(args.out, exist_ok=True)
    problems = []
    for name in args.cases:
        try:
            problems += check_case(args, name)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            problems.append("%s: %s" % (name, e))
    for name in args.models:
        try:
            problems += check_model(args, name)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            problems.append("%s: %s" % (name, e))
    for p in problems:
        print("FAIL: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
