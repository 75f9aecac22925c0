#!/usr/bin/env python3
"""Check the kernels dlc plans for every fixture model, and print a table.

    check_kernels.py --dlc BUILD/bin/dlc --fixtures OUTDIR [--precision fp32|fp16]

For every model (OUTDIR/*/model.keras) this runs `dlc compile MODEL --emit mlir` (batch 1, the
whole pipeline) and reads the execution plan:
  - no kernel may be a lone bias_add, activation, batch_norm or reshape (flatten) that reads a
    buffer another kernel wrote: such an op belongs in its producer's fusion;
  - the memory plan's arena may not be smaller than its peak of simultaneously live buffers
    (a lower bound), and every kernel must have a compiler-made name.
Then the targets of the passes issue, as the first GPU run revised them (bench/NOTES.md,
2026-11-27: a pool in an implicit-GEMM convolution's epilogue, or a large classifier's softmax
in its matmul's, made the fused kernel run per element, 60 times slower than the two kernels):
the MNIST CNN in at most 7 kernels (one per conv2d, pool and dense; the small head keeps its
softmax), ResNet50 in at most one kernel per conv2d plus 4 (the max pool with its zero padding,
the global pool, the dense and its softmax), plus in fp16 the kernel that pads its RGB input to 8
channels for the tensor cores (a pad after casts, nothing else). Prints one line per model (kernels, convs, arena,
peak); exit 1 on any violation.

Only the standard library: this must not import Keras.
"""

import argparse
import os
import re
import subprocess
import sys

KERNEL = re.compile(r'^\s*exec\.kernel "(?P<name>[^"]*)" (?:ins\((?P<ins>[^:]*):[^)]*\) )?outs\((?P<outs>[^:]*):')
LONE = {"graph.bias_add", "graph.activation", "graph.batch_norm", "graph.reshape"}


def kernels_of(text):
    """[(name, ins, outs, [body op names])] in program order."""
    out, cur = [], None
    for line in text.splitlines():
        m = KERNEL.match(line)
        if m:
            ins = [v.strip() for v in (m.group("ins") or "").split(",") if v.strip()]
            outs = [v.strip() for v in m.group("outs").split(",") if v.strip()]
            cur = (m.group("name"), ins, outs, [])
            out.append(cur)
            continue
        if cur is not None:
            if re.match(r"^\s*exec\.yield", line):
                cur = None
                continue
            op = re.search(r"= (graph\.\w+)", line)
            if op and op.group(1) != "graph.constant":
                cur[3].append(op.group(1))
    return out


def check_model(args, name):
    path = os.path.join(args.fixtures, name, "model.keras")
    cmd = [args.dlc, "compile", path, "--emit", "mlir", "--precision", args.precision]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    if p.returncode != 0:
        return None, ["dlc exited %d: %s" % (p.returncode, p.stderr.decode().strip())]
    text = p.stdout.decode()
    problems = []
    ks = kernels_of(text)
    written = {o for (_, _, outs, _) in ks for o in outs}
    views = dict(re.findall(r"(%\d+) = exec\.view (%\w+)", text))
    for kname, ins, _, ops in ks:
        if not re.fullmatch(r"k\d+_\w+", kname):
            problems.append("kernel name %r is not compiler-made" % kname)
        # A lone op reading a kernel's output, directly or through a view.
        if len(ops) == 1 and ops[0] in LONE and any(
                views.get(i, i) in written for i in ins):
            problems.append("kernel %s is a lone %s after another kernel" % (kname, ops[0]))
    arena = int(re.search(r"exec\.arena_size = (\d+)", text).group(1))
    peak = int(re.search(r"exec\.peak_live = (\d+)", text).group(1))
    if arena < peak:
        problems.append("arena %d < peak of live buffers %d" % (arena, peak))
    # dlc-lower-to-fp16's channel padding of an RGB input (a pad after casts,
    # a kernel of its own so that the convolution reads it stored, on tensor
    # cores: docs/pipeline.md).
    pads = sum(1 for *_, o in ks if [op for op in o if op != "graph.cast"] == ["graph.pad"])
    info = {"kernels": len(ks), "convs": sum(o.count("graph.conv2d") for *_, o in ks),
            "pads": pads, "arena": arena, "peak": peak}
    return info, problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dlc", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--precision", choices=["fp32", "fp16"], default="fp32")
    args = ap.parse_args(argv)
    names = sorted(n for n in os.listdir(args.fixtures)
                   if os.path.isfile(os.path.join(args.fixtures, n, "model.keras")))
    failed = 0
    print("%-36s %8s %6s %12s %12s" % ("model", "kernels", "convs", "arena", "peak live"))
    for name in names:
        info, problems = check_model(args, name)
        if info:
            if name == "mnist_cnn" and info["kernels"] > 7:
                problems.append("%d kernels, at most 7 wanted" % info["kernels"])
            if name == "resnet50":
                # One channel pad in fp16 (its RGB input), none in fp32.
                pads = 1 if args.precision == "fp16" else 0
                if info["pads"] != pads:
                    problems.append("%d channel-pad kernels, %d wanted" % (info["pads"], pads))
                if info["kernels"] > info["convs"] + pads + 4:
                    problems.append("%d kernels for %d convs, at most convs + %d wanted" % (
                        info["kernels"], info["convs"], pads + 4))
            print("%-36s %8d %6d %12d %12d" % (name, info["kernels"], info["convs"],
                                              info["arena"], info["peak"]))
        for p in problems:
            print("FAIL %s: %s" % (name, p))
        failed += bool(problems)
    print("%d models, %d failed" % (len(names), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
