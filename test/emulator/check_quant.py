#!/usr/bin/env python3
"""An int8 Dense that no Keras fixture has, on its emulated kernels, against the reference.

    check_quant.py --emulate BUILD/bin/dlc-emulate --out DIR [--cache-dir DIR] [--reverse]

Writes graph IR (no Keras needed): graph.quantize of a [37, 2064] input (rows longer than a warp
reduces: the 512-thread block path; a NaN in one row) and graph.quantized_matmul with an int8
constant [2064, 40] and a bias: dlc-assign-layout stores the weight [N, K], and K = 2064 is 33
k-tiles of the int8 tensor-core GEMM with ragged M and N tiles. `dlc-emulate --check-kernels`
runs each kernel against the reference executor on its own inputs; every kernel must equal it
exactly (int8 values, int32 sums, the same f32 de-scaling), the quantize kernel take the block
path and the GEMM the tensor cores. With --reverse, the CTAs of each grid and the threads of each
CTA run last to first (a missing barrier reads what the other order wrote). Exit 1 otherwise. NumPy and the standard library only.
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

M, K, N = 37, 2064, 40


def literal(values):
    if values.ndim == 1:
        return "[" + ",".join(repr(float(v)) if values.dtype.kind == "f" else str(int(v))
                              for v in values) + "]"
    return "[" + ",".join(literal(row) for row in values) + "]"


def emulate(args, model, inp, outs, report, extra=()):
    """`dlc-emulate MODEL --input INP --output OUT... --check-kernels --report REPORT` (and
    --cache-dir, --reverse from args, then `extra`): the report's kernels, or None after printing
    why dlc-emulate failed."""
    cmd = [args.emulate, model, *extra, "--input", inp] + \
        [x for o in outs for x in ("--output", o)] + \
        ["--check-kernels", "--report", report] + \
        (["--cache-dir", args.cache_dir] if args.cache_dir else []) + \
        (["--reverse"] if args.reverse else [])
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        print("dlc-emulate exited %d: %s" % (p.returncode, p.stderr.decode().strip()))
        return None
    with open(report) as f:
        return json.load(f)["kernels"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--emulate", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cache-dir")
    ap.add_argument("--reverse", action="store_true")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(7)
    w = rng.integers(-127, 128, size=(K, N)).astype(np.int8)
    scale = (rng.random(N) * 50 + 50).astype(np.float32)
    bias = rng.standard_normal(N).astype(np.float32)
    x = (3 * rng.standard_normal((M, K))).astype(np.float32)
    x[1, 5] = np.nan
    ir = f"""func.func @main(%x: tensor<{M}x{K}xf32>) -> tensor<{M}x{N}xf32> {{
  %w = graph.constant dense<{literal(w)}> : tensor<{K}x{N}xi8>
  %s = graph.constant dense<{literal(scale)}> : tensor<{N}xf32>
  %b = graph.constant dense<{literal(bias)}> : tensor<{N}xf32>
  %q:2 = graph.quantize %x : (tensor<{M}x{K}xf32>) -> (tensor<{M}x{K}xi8>, tensor<{M}x1xf32>)
  %y = graph.quantized_matmul %q#0, %w, %s, %q#1 : (tensor<{M}x{K}xi8>, tensor<{K}x{N}xi8>, tensor<{N}xf32>, tensor<{M}x1xf32>) -> tensor<{M}x{N}xf32>
  %z = graph.bias_add %y, %b : (tensor<{M}x{N}xf32>, tensor<{N}xf32>) -> tensor<{M}x{N}xf32>
  return %z : tensor<{M}x{N}xf32>
}}
"""
    model = os.path.join(args.out, "dense_int8.mlir")
    with open(model, "w") as f:
        f.write(ir)
    inp, out, report = (os.path.join(args.out, n) for n in ("x.npy", "y.npy", "report.json"))
    np.save(inp, x)
    kernels = emulate(args, model, inp, [out], report)
    if kernels is None:
        return 1
    problems = []
    for k in kernels:
        print("%-24s %-10s block=%-14s %-48s max |diff| %s" % (
            k["name"], k["family"], k["block"], k.get("tiling", ""), k.get("max_abs")))
        if k.get("max_abs") != 0:
            problems.append("%s differs from the reference" % k["name"])
    families = {k["name"].split("_", 1)[1]: k for k in kernels}
    if families.get("quantize", {}).get("block") != [512, 1, 1]:
        problems.append("the quantize kernel does not take the 512-thread block path")
    if families.get("quantized_matmul", {}).get("family") != "gemm_tc":
        problems.append("the quantized_matmul kernel is not on tensor cores")
    for p in problems:
        print("FAIL: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
