#!/usr/bin/env python3
"""Run fixture models on their generated CUDA kernels emulated on the host, against dlc's CPU
reference executor, and print a table.

    check_emulated.py --emulate BUILD/bin/dlc-emulate --dlc BUILD/bin/dlc --fixtures DIR
                      [--models M ...] [--precisions fp32 fp16] [--require-families F ...]
                      [--cache-dir DIR] [--out DIR] [--jobs N] [--batch N] [--reverse]
                      [--arch sm_XX] [--exact-kernels REGEX]

For every model and precision: `dlc-emulate MODEL --precision P --check-kernels` (the
pipeline's plan, every step on its generated kernel compiled for the host) and `dlc run MODEL
--device cpu --precision P` (the reference executor on the same plan) on the fixture's inputs,
compared by relative L2 error per output: at most 1e-4 in fp32 and 1e-2 in fp16 (the tolerances
of the GPU tests, test/e2e/check_gpu.py), or the model's measured conditioning where meta.json
has it and it is larger (the apps sets: test/e2e/compare.py). Each kernel is also held to the same bound against
the reference executor run on that kernel's own inputs (dlc-emulate --check-kernels), which
names a wrong kernel even where the model's outputs hide it. Prints one line per run: model,
precision, kernels, their families, the outputs' worst relative L2 error, the worst kernel's,
seconds, ok. With --require-families, the runs together must cover every family named (so
that a change of the generator cannot leave one untested). --batch N runs the fixture's inputs
repeated or cut to N rows instead. Besides the fixtures, --models takes the names of a few
one-layer models this script writes itself (SYNTHETIC: paths of the generator that no fixture
reaches). --exact-kernels REGEX holds the kernels whose names match (re.search) to no difference
at all from the reference on their own inputs (largest absolute difference 0), and requires at
least one such kernel per run: the quantized kernels, whose int8 values and int32 sums are exact
and whose de-scaling is the reference's f32 arithmetic. Exit 1 on any failure.

NumPy and the standard library only.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

TOLERANCE = {"fp32": 1e-4, "fp16": 1e-2}

# Models no Keras fixture has, written here as weightless TF.js model.json files (one layer, no
# Keras needed) with seeded inputs: reductions over rows longer than a warp reduces (1024), which
# take the 512-thread block path (dlc_block_max / dlc_block_sum through shared memory).
SYNTHETIC = {
    "softmax_rows3000": ([3, 3000], {"class_name": "Softmax", "config": {
        "name": "softmax", "dtype": "float32", "axis": -1}}),
    "layer_norm_rows2500": ([2500], {"class_name": "LayerNormalization", "config": {
        "name": "layer_norm", "dtype": "float32", "axis": [1], "epsilon": 1e-3,
        "center": False, "scale": False}}),
}

def rel_l2(actual, expected):
    a = np.asarray(actual, dtype=np.float64).ravel()
    e = np.asarray(expected, dtype=np.float64).ravel()
    if a.shape != e.shape:
        return float("inf")
    if not np.all(np.isfinite(a)):
        return float("nan")
    norm = np.linalg.norm(e)
    diff = np.linalg.norm(a - e)
    return float(diff / norm) if norm > 0 else float(diff)


def batch_inputs(files, batch, stem):
    """The inputs `files` with N rows (repeated or cut), written beside `stem`."""
    out = []
    for i, f in enumerate(files):
        x = np.load(f)
        rows = np.resize(x, (batch,) + x.shape[1:]).astype(x.dtype)
        out.append("%s-input-%d.npy" % (stem, i))
        np.save(out[-1], rows)
    return out


def fixture_model(args, model):
    """(model file, input files, number of outputs, conditioning) of a Keras fixture: the
    conditioning is meta.json's checks.conditioning where the generator measured it (the apps
    sets: the outputs' relative L2 change when every weight moves by one unit roundoff)."""
    folder = os.path.join(args.fixtures, model)
    with open(os.path.join(folder, "meta.json")) as f:
        meta = json.load(f)
    return (os.path.join(folder, "model.keras"),
            [os.path.join(folder, i["file"]) for i in meta["inputs"]], len(meta["outputs"]),
            (meta.get("checks") or {}).get("conditioning") or {})


def synthetic_model(model, work):
    """(model file, input files, number of outputs) of SYNTHETIC[model], written under `work`."""
    shape, layer = SYNTHETIC[model]
    folder = os.path.join(work, "synthetic", model)
    os.makedirs(folder, exist_ok=True)
    topology = {"format": "layers-model", "modelTopology": {
        "keras_version": "2.19.0", "backend": "tensorflow", "model_config": {
            "class_name": "Sequential", "config": {"name": model, "layers": [
                {"class_name": "InputLayer", "config": {
                    "batch_input_shape": [None] + shape, "dtype": "float32", "name": "input"}},
                layer]}}},
        "weightsManifest": [{"paths": [], "weights": []}]}
    path = os.path.join(folder, "model.json")
    with open(path, "w") as f:
        json.dump(topology, f)
    rng = np.random.default_rng(sum(map(ord, model)))
    inputs = [os.path.join(folder, "input_0.npy")]
    np.save(inputs[0], (3 * rng.standard_normal([2] + shape)).astype(np.float32))
    return path, inputs, 1


def run_one(args, model, precision, work):
    """(row dict, [problems])."""
    if model in SYNTHETIC:
        path, inputs, n_out = synthetic_model(model, work)
        conditioning = {}
    else:
        path, inputs, n_out, conditioning = fixture_model(args, model)
    # The outputs are held to the model's conditioning where it is larger than the tolerance
    # (no implementation can do better); each kernel on its own inputs to the tolerance.
    limit = max(TOLERANCE[precision], conditioning.get(precision, 0.0))
    stem = os.path.join(work, "%s-%s" % (model, precision))
    if args.batch:
        inputs = batch_inputs(inputs, args.batch, stem)
    emulated = ["%s-emu-%d.npy" % (stem, i) for i in range(n_out)]
    reference = ["%s-ref-%d.npy" % (stem, i) for i in range(n_out)]
    report = stem + "-report.json"

    def flags(flag, files):
        return [x for f in files for x in (flag, f)]

    row = empty_row(model, precision)
    start = time.monotonic()
    cmd = [args.emulate, path, "--precision", precision, "--report", report, "--check-kernels",
           "--jobs", str(args.jobs)] + flags("--input", inputs) + flags("--output", emulated)
    if args.cache_dir:
        cmd += ["--cache-dir", args.cache_dir]
    if args.reverse:
        cmd += ["--reverse"]
    if args.arch:
        cmd += ["--arch", args.arch]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=args.timeout)
    row["seconds"] = time.monotonic() - start
    if p.returncode != 0:
        return row, ["dlc-emulate exited %d: %s" % (p.returncode, p.stderr.decode().strip())]
    with open(report) as f:
        kernels = json.load(f)["kernels"]
    row["kernels"] = len(kernels)
    row["families"] = sorted({k["family"] for k in kernels})
    problems = []
    # Every exec.kernel has an error (exec.copy steps none): null where it wrote a NaN the
    # reference did not.
    checked = [(k["error"], k["name"]) for k in kernels if "error" in k]
    if checked:
        worst = max(checked, key=lambda e: float("inf") if e[0] is None else e[0])
        row["kernel_error"] = worst
    for error, name in checked:
        if error is None or not error <= TOLERANCE[precision]:
            problems.append("kernel %s: relative L2 %s against the reference on its inputs" % (
                name, "NaN" if error is None else "%.3g" % error))
    if args.exact_kernels:
        exact = [k for k in kernels if re.search(args.exact_kernels, k["name"])]
        if not exact:
            problems.append("no kernel matches --exact-kernels %s" % args.exact_kernels)
        for k in exact:
            if k.get("max_abs") != 0:
                problems.append("kernel %s: largest absolute difference %s, not 0" % (
                    k["name"], k.get("max_abs")))

    cmd = [args.dlc, "run", path, "--device", "cpu", "--precision", precision] + \
        flags("--input", inputs) + flags("--output", reference)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=args.timeout)
    if p.returncode != 0:
        return row, ["dlc run exited %d: %s" % (p.returncode, p.stderr.decode().strip())]
    errors = [rel_l2(np.load(a), np.load(e)) for a, e in zip(emulated, reference)]
    row["error"] = max(errors, key=lambda x: -1 if x != x else x) if errors else 0.0
    row["seconds"] = time.monotonic() - start
    for i, err in enumerate(errors):
        if not err <= limit:
            problems.append("output %d: relative L2 %.3g > %g" % (i, err, limit))
    return row, problems


def empty_row(model, precision):
    return {"model": model, "precision": precision, "kernels": "-", "families": "-",
            "error": None, "kernel_error": None, "seconds": 0.0}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--emulate", required=True, help="dlc-emulate")
    ap.add_argument("--dlc", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--models", nargs="+",
                    help="fixture names, or names of SYNTHETIC (default: every fixture)")
    ap.add_argument("--precisions", nargs="+", default=["fp32", "fp16"], choices=["fp32", "fp16"])
    ap.add_argument("--require-families", nargs="*", default=[])
    ap.add_argument("--cache-dir", help="dlc-emulate's cache of compiled kernels")
    ap.add_argument("--out", help="where the outputs and reports go (default: a temporary folder)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--batch", type=int, help="the fixture inputs repeated or cut to N rows")
    ap.add_argument("--reverse", action="store_true",
                    help="run the CTAs of a grid and the threads of a CTA last to first")
    ap.add_argument("--arch", help="the arch whose GEMM tilings the kernels take (sm_80 default)")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--exact-kernels", help="kernels (a regex on names) that must match the "
                    "reference exactly")
    args = ap.parse_args(argv)

    if not args.models:
        args.models = sorted(m for m in os.listdir(args.fixtures)
                             if os.path.exists(os.path.join(args.fixtures, m, "meta.json")))
    work = args.out or tempfile.mkdtemp(prefix="dlc-emulated-")
    os.makedirs(work, exist_ok=True)
    header = "%-28s %-5s %7s  %-40s %9s  %-24s %7s  %s" % (
        "model", "prec", "kernels", "families", "rel L2", "worst kernel", "seconds", "ok")
    print(header)
    print("-" * len(header))
    failures, covered = [], set()
    for model in args.models:
        for precision in args.precisions:
            try:
                row, problems = run_one(args, model, precision, work)
            except (OSError, ValueError, subprocess.TimeoutExpired) as e:
                row, problems = empty_row(model, precision), [str(e)]
            if row["families"] != "-" and not problems:
                covered.update(row["families"])
            error = "-" if row["error"] is None else "%.2e" % row["error"]
            kernel = "-"
            if row["kernel_error"]:
                e, name = row["kernel_error"]
                kernel = "%s %s" % (name, "NaN" if e is None else "%.1e" % e)
            families = row["families"] if row["families"] == "-" else ",".join(row["families"])
            print("%-28s %-5s %7s  %-40s %9s  %-24s %7.1f  %s" % (
                model, precision, row["kernels"], families, error, kernel, row["seconds"],
                "ok" if not problems else "FAIL"), flush=True)
            for p in problems:
                failures.append("%s (%s): %s" % (model, precision, p))
    missing = sorted(set(args.require_families) - covered)
    print("families covered: %s" % ", ".join(sorted(covered)))
    if missing:
        failures.append("no passing run covers the families: %s" % ", ".join(missing))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
