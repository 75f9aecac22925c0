#!/usr/bin/env python3
"""Keras's float8 Dense on the float8 tensor-core GEMM (sm_90), emulated, against the reference.

    check_float8.py --emulate BUILD/bin/dlc-emulate --out DIR [--cache-dir DIR] [--reverse]

Writes graph IR as dlc's importer makes it for two float8 Dense layers (no Keras needed):
y = relu(fake_quantize(x, 0.37) . fake_quantize(W1, 0.011) + b1) with x [37, 528] and W1
[528, 48] (33 k-tiles of 16 bytes: several pipeline stages, ragged M and N tiles), then
fake_quantize(y, 0.5) . fake_quantize(W2, 1) + b2 with W2 [48, 24] (K 48: a half k-step of
zeros at the end), biases rounded to bfloat16 as Keras does; and beside it a second output,
fake_quantize(x, 0.37) . fake_quantize(W3, 0.013) with W3 [528, 40] and no bias, whose f32
result no later quantization hides. The inputs hold NaNs of both signs, values beyond 448 * scale
(saturated) and values below the smallest subnormal * scale (flushed).

`dlc-emulate --arch sm_90` (every target arch with float8 tensor cores, so dlc-float8-matmul
runs) must put the three products on the float8 tensor-core GEMM (gemm_tc), quantize the input
once, in a float8_quantize kernel equal to the reference bit for bit, and fuse the second
layer's quantization into the first GEMM's epilogue (4 kernels). Each GEMM kernel is held to a relative L2 error
of 1e-6 against the reference executor on its own inputs: the products of float8 values are
exact in f32, the reference sums them exactly and rounds once, the kernel sums in f32 in its
own order (the scales' product is the same f32 in both). The outputs are held to 1e-6 against
Keras's arithmetic computed here in NumPy (fake_quantize on the e4m3fn grid, the products
summed in double, the bias and relu, again for the second layer), NaN where it has NaN; the
bound holds as long as no value of the first layer's output lies within the summation's
rounding of an e4m3 rounding boundary (none does for this seed). With --reverse,
the CTAs of each grid and the threads of each CTA run last to first. Exit 1 otherwise.
NumPy and the standard library only.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_quant import emulate, literal  # noqa: E402

M, K1, N1, N2 = 37, 528, 48, 24
SX1, SW1, SX2, SW2, SW3, N3 = 0.37, 0.011, 0.5, 1.0, 0.013, 40
BOUND = 1e-6


def bf16(values):
    """f32 values rounded to bfloat16 (nearest even) and back, as Keras rounds the bias."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32)


def fake_quantize(v, scale):
    """Keras's quantize_and_dequantize onto float8_e4m3fn: f32(e4m3(clip(v / s, -448, 448)))
    * s, rounding to nearest even (3 mantissa bits, normals from 2^-6); NaN stays NaN."""
    v = np.clip(np.asarray(v, np.float32) / np.float32(scale), -448, 448).astype(np.float32)
    _, e = np.frexp(np.where(np.isfinite(v), v, 1).astype(np.float64))
    step = np.ldexp(1.0, np.maximum(e - 1, -6) - 3)
    q = (np.rint(v / step) * step).astype(np.float32)
    return (q * np.float32(scale)).astype(np.float32)


def dense(x, w, sx, sw, b, relu):
    y = (fake_quantize(x, sx).astype(np.float64) @ fake_quantize(w, sw).astype(np.float64))
    y = y.astype(np.float32) + b
    return np.maximum(y, 0) if relu else y


def rel_l2(actual, expected):
    a, e = actual.astype(np.float64).ravel(), expected.astype(np.float64).ravel()
    return float(np.linalg.norm(a - e) / np.linalg.norm(e))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--emulate", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cache-dir")
    ap.add_argument("--reverse", action="store_true")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(11)
    w1 = (0.4 * rng.standard_normal((K1, N1))).astype(np.float32)
    w1[3, 5], w1[7, 9] = 9.0, -7.5  # beyond 448 * 0.011: saturated
    w2 = rng.standard_normal((N1, N2)).astype(np.float32)
    w3 = (0.5 * rng.standard_normal((K1, N3))).astype(np.float32)
    b1 = bf16(0.1 * rng.standard_normal(N1))
    b2 = bf16(rng.standard_normal(N2))
    x = (3 * rng.standard_normal((M, K1))).astype(np.float32)
    x[1, 5] = np.nan
    x[3, 7] = np.copysign(np.nan, -1)  # its byte keeps the sign (0xff)
    x[2, :8] = [200.0, -180.0, 1e-4, -1e-4, 1e-6, 2.0 ** -9 * SX1, 500.0, -0.0]
    f32 = "tensor<f32>"
    ir = f"""func.func @main(%x: tensor<{M}x{K1}xf32>) -> (tensor<{M}x{N2}xf32>, tensor<{M}x{N3}xf32>) {{
  %sx1 = graph.constant dense<{SX1!r}> : {f32}
  %sw1 = graph.constant dense<{SW1!r}> : {f32}
  %sx2 = graph.constant dense<{SX2!r}> : {f32}
  %sw2 = graph.constant dense<{SW2!r}> : {f32}
  %sw3 = graph.constant dense<{SW3!r}> : {f32}
  %w3 = graph.constant dense<{literal(w3)}> : tensor<{K1}x{N3}xf32>
  %w1 = graph.constant dense<{literal(w1)}> : tensor<{K1}x{N1}xf32>
  %w2 = graph.constant dense<{literal(w2)}> : tensor<{N1}x{N2}xf32>
  %b1 = graph.constant dense<{literal(b1)}> : tensor<{N1}xf32>
  %b2 = graph.constant dense<{literal(b2)}> : tensor<{N2}xf32>
  %fx1 = graph.fake_quantize %x, %sx1 {{target_type = f8E4M3FN}} : (tensor<{M}x{K1}xf32>, {f32}) -> tensor<{M}x{K1}xf32>
  %fw1 = graph.fake_quantize %w1, %sw1 {{target_type = f8E4M3FN}} : (tensor<{K1}x{N1}xf32>, {f32}) -> tensor<{K1}x{N1}xf32>
  %y1 = graph.matmul %fx1, %fw1 : (tensor<{M}x{K1}xf32>, tensor<{K1}x{N1}xf32>) -> tensor<{M}x{N1}xf32>
  %z1 = graph.bias_add %y1, %b1 : (tensor<{M}x{N1}xf32>, tensor<{N1}xf32>) -> tensor<{M}x{N1}xf32>
  %r1 = graph.activation <relu> %z1 : tensor<{M}x{N1}xf32>
  %fx2 = graph.fake_quantize %r1, %sx2 {{target_type = f8E4M3FN}} : (tensor<{M}x{N1}xf32>, {f32}) -> tensor<{M}x{N1}xf32>
  %fw2 = graph.fake_quantize %w2, %sw2 {{target_type = f8E4M3FN}} : (tensor<{N1}x{N2}xf32>, {f32}) -> tensor<{N1}x{N2}xf32>
  %y2 = graph.matmul %fx2, %fw2 : (tensor<{M}x{N1}xf32>, tensor<{N1}x{N2}xf32>) -> tensor<{M}x{N2}xf32>
  %z2 = graph.bias_add %y2, %b2 : (tensor<{M}x{N2}xf32>, tensor<{N2}xf32>) -> tensor<{M}x{N2}xf32>
  %fw3 = graph.fake_quantize %w3, %sw3 {{target_type = f8E4M3FN}} : (tensor<{K1}x{N3}xf32>, {f32}) -> tensor<{K1}x{N3}xf32>
  %y3 = graph.matmul %fx1, %fw3 : (tensor<{M}x{K1}xf32>, tensor<{K1}x{N3}xf32>) -> tensor<{M}x{N3}xf32>
  return %z2, %y3 : tensor<{M}x{N2}xf32>, tensor<{M}x{N3}xf32>
}}
"""
    model = os.path.join(args.out, "dense_float8.mlir")
    with open(model, "w") as f:
        f.write(ir)
    inp, out, out3, report = (os.path.join(args.out, n)
                              for n in ("x.npy", "y.npy", "y3.npy", "report.json"))
    np.save(inp, x)
    kernels = emulate(args, model, inp, [out, out3], report, ["--arch", "sm_90"])
    if kernels is None:
        return 1
    problems = []
    for k in kernels:
        print("%-24s %-12s %-48s relative L2 %s, max |diff| %s" % (
            k["name"], k["family"], k.get("tiling", ""), k.get("error"), k.get("max_abs")))
    gemms = [k for k in kernels if k["name"].endswith("float8_matmul")]
    quantize = [k for k in kernels if k["name"].endswith("float8_quantize")]
    if len(gemms) != 3 or any(k["family"] != "gemm_tc" for k in gemms):
        problems.append("expected three float8_matmul kernels on tensor cores, got %s" %
                        [(k["name"], k["family"]) for k in gemms])
    if len(quantize) != 1 or quantize[0].get("max_abs") != 0:
        problems.append("expected one float8_quantize kernel equal to the reference, got %s" %
                        [(k["name"], k.get("max_abs")) for k in quantize])
    if len(kernels) != 4:
        problems.append("expected 4 kernels (the second quantization in the first GEMM's "
                        "epilogue), got %d" % len(kernels))
    for k in gemms:
        if k.get("error") is None or not k["error"] <= BOUND:
            problems.append("kernel %s: relative L2 %s > %g against the reference" % (
                k["name"], k.get("error"), BOUND))

    with np.errstate(invalid="ignore"):
        refs = [dense(dense(x, w1, SX1, SW1, b1, True), w2, SX2, SW2, b2, False),
                dense(x, w3, SX1, SW3, np.float32(0), False)]
    for i, (y, y_ref) in enumerate(zip([np.load(out), np.load(out3)], refs)):
        nan, nan_ref = np.isnan(y), np.isnan(y_ref)
        if not np.array_equal(nan, nan_ref) or not nan_ref[[1, 3]].all():
            problems.append("output %d: NaN at %d places, the reference at %d (rows 1 and 3 "
                            "all NaN: %s)" % (i, nan.sum(), nan_ref.sum(),
                                              bool(nan_ref[[1, 3]].all())))
            continue
        err = rel_l2(y[~nan], y_ref[~nan_ref])
        print("output %d against Keras's arithmetic (fake_quantize, f32 matmul): relative L2 "
              "%.3g, max |diff| %.3g" % (i, err, float(np.max(np.abs(y[~nan] - y_ref[~nan_ref])))))
        if not err <= BOUND:
            problems.append("output %d: relative L2 %.3g > %g" % (i, err, BOUND))
    for p in problems:
        print("FAIL: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
