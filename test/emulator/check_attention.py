#!/usr/bin/env python3
"""The fused attention kernels (dlc_attention.cuh) emulated on the host, on graph IR written here.

    check_attention.py --emulate BUILD/bin/dlc-emulate [--cache-dir DIR] [--out DIR]
                       [--cases NAME ...] [--precisions fp32 fp16] [--jobs N] [--reverse]

For every case and precision: a graph-dialect module softmax(q k^T * scale) v (scaled before or
after the product; rank 4 [B, H, T, D] or rank 3 [B, T, D]; batch dims that broadcast) with
seeded inputs, each first shifted by a kernel of its own (as projections would give them: f16
buffers in the fp16 pipeline), goes through `dlc-emulate --check-kernels` (dlc-fuse makes it one kernel, which
runs compiled for the host). The run must have exactly one attention kernel, of the family the
case expects (attention_tc for f16 operands with D % 8 == 0, attention_simt otherwise), and
both that kernel against the reference executor on its own inputs and the output against
NumPy's float64 attention must be within relative L2 1e-4 (fp32) / 1e-2 (fp16). Exit 1 on any
failure. NumPy and the standard library only.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

TOLERANCE = {"fp32": 1e-4, "fp16": 1e-2}

# name: (q shape, k shape, v shape, scale, where the scale is: "q" or "scores",
#        fp16 family). Shapes are [batch..., T, D].
CASES = {
    # Keras MHA: [B, H, T, D], query scaled by 1/sqrt(64); Tq != Tk, neither
    # a multiple of the tiles.
    "mha_d64": ([2, 2, 37, 64], [2, 2, 45, 64], [2, 2, 45, 64], 0.125, "q", "attention_tc"),
    # D = 128, scores scaled after the product, more than one 64-key tile.
    "mha_d128": ([1, 2, 70, 128], [1, 2, 70, 128], [1, 2, 70, 128], 0.0883883, "scores",
                 "attention_tc"),
    # Other head dims: D = 40, DV = 24, one query row short of a 16-row warp tile.
    "mha_d40_dv24": ([1, 3, 15, 40], [1, 3, 130, 40], [1, 3, 130, 24], 0.3, "q",
                     "attention_tc"),
    # keras.layers.Attention: rank 3, D = 20 (not a multiple of 8: SIMT in fp16 too).
    "rank3_d20": ([2, 9, 20], [2, 33, 20], [2, 33, 20], 1.0, "scores", "attention_simt"),
    # One k and v head shared by the query's four (multi-query attention: heads broadcast).
    "broadcast_kv": ([2, 4, 17, 32], [2, 1, 19, 32], [2, 1, 19, 16], 0.5, "q", "attention_tc"),
    # The probabilities are a result too (return_attention_scores): no attention kernel; the
    # second product is a batched GEMM kernel (SIMT: v is [Tk, DV], not N-major), k and v
    # broadcast over heads.
    "return_scores": ([2, 2, 33, 24], [2, 1, 40, 24], [2, 1, 40, 16], 0.25, "q", "gemm_simt"),
    # Only the scaled scores: a batched q k^T GEMM kernel (tensor cores in fp16), k broadcast.
    "scores_only": ([2, 3, 70, 32], [2, 1, 45, 32], [2, 1, 45, 8], 0.25, "scores", "gemm_tc"),
}
# Cases whose probabilities are a second output, and cases that stop at the scaled scores.
SCORES_OUT = {"return_scores"}
SCORES_ONLY = {"scores_only"}


def module(q, k, v, scale, where, scores_out, scores_only=False):
    def ttype(shape):
        return "tensor<%sxf32>" % "x".join(map(str, shape))
    s = [max(a, b) for a, b in zip(q[:-2], k[:-2])] + [q[-2], k[-2]]
    o = [max(a, b) for a, b in zip(s[:-2], v[:-2])] + [q[-2], v[-1]]
    results = ttype(o) if not scores_out else "({0}, {1})".format(ttype(o), ttype(s))
    lines = ["func.func @main(%q: {0} loc(\"q\"), %k: {1} loc(\"k\"), %v: {2} loc(\"v\")) "
             "-> {3} {{".format(ttype(q), ttype(k), ttype(v), results),
             "  %%c = graph.constant dense<%r> : tensor<f32>" % float(np.float32(scale)),
             "  %h = graph.constant dense<0.25> : tensor<f32>"]
    # The operands come from kernels of their own (as projections would give them): in the
    # fp16 pipeline, f16 buffers.
    for x, shape in (("q", q), ("k", k), ("v", v)):
        lines.append("  %{0}a = graph.add %{0}, %h : ({1}, tensor<f32>) -> {1} loc(\"{0}_proj\")"
                     .format(x, ttype(shape)))
    lhs = "%qa"
    if where == "q":
        lines.append("  %qs = graph.mul %qa, %c : ({0}, tensor<f32>) -> {0} loc(\"mha\")".format(
            ttype(q)))
        lhs = "%qs"
    lines.append("  %s = graph.matmul {0}, %ka {{transpose_rhs = true}} : ({1}, {2}) -> {3} "
                 "loc(\"mha\")".format(lhs, ttype(q), ttype(k), ttype(s)))
    scores = "%s"
    if where == "scores":
        lines.append("  %ss = graph.mul %s, %c : ({0}, tensor<f32>) -> {0} loc(\"mha\")".format(
            ttype(s)))
        scores = "%ss"
    if scores_only:
        lines[0] = lines[0].replace(results, ttype(s))
        lines.append("  return {0} : {1}".format(scores, ttype(s)))
        lines.append("}")
        return "\n".join(lines) + "\n"
    lines.append("  %p = graph.softmax {0} {{axis = -1 : i64}} : {1} loc(\"mha\")".format(
        scores, ttype(s)))
    lines.append("  %o = graph.matmul %p, %va : ({0}, {1}) -> {2} loc(\"mha\")".format(
        ttype(s), ttype(v), ttype(o)))
    if scores_out:
        lines.append("  return %o, %p : {0}, {1}".format(ttype(o), ttype(s)))
    else:
        lines.append("  return %o : {0}".format(ttype(o)))
    lines.append("}")
    return "\n".join(lines) + "\n"


def attention(q, k, v, scale):
    q, k, v = (x.astype(np.float64) + 0.25 for x in (q, k, v))
    s = np.matmul(q, np.swapaxes(k, -1, -2)) * scale
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    return np.matmul(p, v), p, s


def rel_l2(actual, expected):
    actual = actual.astype(np.float64)
    return float(np.linalg.norm(actual - expected) / np.linalg.norm(expected))


def run_case(args, name, precision, work):
    q, k, v, scale, where, tc_family = CASES[name]
    folder = os.path.join(work, name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "attention-%s.mlir" % precision)
    with open(path, "w") as f:
        f.write(module(q, k, v, scale, where, name in SCORES_OUT, name in SCORES_ONLY))
    rng = np.random.default_rng(sum(map(ord, name)))
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in (q, k, v)]
    inputs = []
    for label, a in zip("qkv", arrays):
        inputs.append(os.path.join(folder, "%s-%s.npy" % (label, precision)))
        np.save(inputs[-1], a)
    output = os.path.join(folder, "out-%s.npy" % precision)
    scores = os.path.join(folder, "scores-%s.npy" % precision)
    report = os.path.join(folder, "report-%s.json" % precision)
    cmd = [args.emulate, path, "--precision", precision, "--check-kernels", "--report", report,
           "--jobs", str(args.jobs), "--output", output]
    if name in SCORES_OUT:
        cmd += ["--output", scores]
    for i in inputs:
        cmd += ["--input", i]
    if args.cache_dir:
        cmd += ["--cache-dir", args.cache_dir]
    if args.reverse:
        cmd += ["--reverse"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    if p.returncode != 0:
        return ["dlc-emulate exited %d: %s" % (p.returncode, p.stderr.decode().strip())], ""
    with open(report) as f:
        kernels = json.load(f)["kernels"]
    problems = []
    attn = [k for k in kernels if k["family"].startswith("attention")]
    if name in SCORES_OUT or name in SCORES_ONLY:
        want = tc_family if precision == "fp16" else "gemm_simt"
        attn = [k for k in kernels if k["family"] == want]
        if len(attn) != 1 or any(k["family"].startswith("attention") for k in kernels):
            problems.append("kernels %s, expected no attention and one %s" % (
                [(k["name"], k["family"]) for k in kernels], want))
    else:
        want = tc_family if precision == "fp16" else "attention_simt"
        if len(attn) != 1 or attn[0]["family"] != want:
            problems.append("kernels %s, expected one %s" % (
                [(k["name"], k["family"]) for k in kernels], want))
    for k in kernels:
        err = k.get("error", 0.0)
        if err is None or not err <= TOLERANCE[precision]:
            problems.append("kernel %s: relative L2 %s against the reference on its inputs" % (
                k["name"], err))
    expected, probs, logits = attention(*arrays, np.float32(scale))
    if name in SCORES_ONLY:
        expected = logits
    err = rel_l2(np.load(output), expected)
    if name in SCORES_OUT:
        err = max(err, rel_l2(np.load(scores), probs))
    if not err <= TOLERANCE[precision]:
        problems.append("output: relative L2 %.3g against NumPy > %g" % (
            err, TOLERANCE[precision]))
    detail = "%s kernel_error=%s output_error=%.3g" % (
        ",".join("%s:%s" % (k["family"], k["tiling"]) for k in attn),
        ",".join("%.3g" % k["error"] for k in attn if k.get("error") is not None), err)
    return problems, detail


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--emulate", required=True, help="dlc-emulate")
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--precisions", nargs="+", default=["fp32", "fp16"],
                    choices=["fp32", "fp16"])
    ap.add_argument("--cache-dir", help="dlc-emulate's cache of compiled kernels")
    ap.add_argument("--out", help="where the modules, inputs and reports go")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--reverse", action="store_true",
                    help="CTAs and threads run last to first (dlc-emulate --reverse)")
    args = ap.parse_args(argv)
    work = args.out or tempfile.mkdtemp(prefix="dlc-attention-")
    failed = False
    for name in args.cases:
        for precision in args.precisions:
            problems, detail = run_case(args, name, precision, work)
            print("%-14s %-5s %s %s" % (name, precision, "ok" if not problems else "FAIL",
                                        detail))
            for problem in problems:
                print("    " + problem)
            failed |= bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
