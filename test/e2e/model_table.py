#!/usr/bin/env python3
"""The per-model table of a fixture set: parameters, kernels, arena, compile time, worst errors.

    model_table.py --dlc BUILD/bin/dlc --fixtures OUTDIR [--model NAME ...] [--json FILE]
                   [--jobs N]

For every model of OUTDIR (OUTDIR/NAME/meta.json, written by gen_fixtures.py and the gen_SET.py
generators) this measures, on this machine:

- params: Keras's count_params() (meta.json);
- fp32 and fp16 artifacts: `dlc compile MODEL --precision P` twice, the first time with an
  empty NVRTC cache (cold: import, passes, codegen and NVRTC for sm_80 and sm_90), the second
  with the cache the first filled (warm: everything but NVRTC); the kernel count, the most
  registers of a kernel, any spill, the arena and the weights in bytes (`dlc inspect OUT.dlcm`);
- errors against Keras: `dlc run --device cpu` in every format of meta.json (fp32: the worst
  element-wise absolute error and the worst relative L2 error over the formats) and
  `dlc run --device cpu --precision fp16` on the first format (relative L2);
- the model's conditioning, where the generator measured it (meta.json checks.conditioning:
  the output's relative L2 change when every weight and every layer's output is perturbed by
  float32's / float16's unit roundoff, the largest of five draws; compare.py's least demanded
  error).

Prints a Markdown table (sizes in KiB/MiB, times in seconds of wall time, which the machine's
load inflates) and writes the rows as JSON with --json. Exit status 0; the tests (compare.py,
check_cuda.py) are what pass or fail a model, this only measures.

Only NumPy and the standard library: this must not import Keras.
"""

import argparse
import concurrent.futures
import json
import os
import re
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import check_cuda  # noqa: E402
import compare  # noqa: E402

ARENA = re.compile(r"arena: (\d+) bytes, weights: (\d+) bytes")
KERNELS = re.compile(r"^Kernels \((\d+)\):")
ROW = re.compile(r"^\s+(k\d+_\w+|c\d+_copy)\s+(\w+)\s+\S+\s+\S+\s+\S+\s+(\d+)/(\d+)\s+(\d+)")


def compile_times(dlc, fdir, meta, precision, tmp):
    model = os.path.join(fdir, meta["formats"][0]["files"]["model"])
    out = os.path.join(tmp, "m.%s.dlcm" % precision)
    env = dict(os.environ, DLC_CACHE_DIR=os.path.join(tmp, "cache-" + precision))
    cmd = [dlc, "compile", model, "--precision", precision, "-o", out]
    if os.path.isfile(os.path.join(fdir, "model.keras")):
        cmd += check_cuda.input_shape_args(fdir)
    times = []
    for _ in range(2):
        start = time.monotonic()
        p = compare.subprocess.run(cmd, env=env, capture_output=True, text=True)
        times.append(time.monotonic() - start)
        if p.returncode != 0:
            return {"error": p.stderr.strip().splitlines()[-1:]}
    p = compare.subprocess.run([dlc, "inspect", out], capture_output=True, text=True)
    row = {"cold_s": round(times[0], 2), "warm_s": round(times[1], 2), "regs": 0, "spills": 0}
    for line in p.stdout.splitlines():
        if m := ARENA.search(line):
            row["arena"], row["weights"] = int(m.group(1)), int(m.group(2))
        if m := KERNELS.match(line):
            row["kernels"] = int(m.group(1))
        if m := ROW.match(line):
            row["regs"] = max(row["regs"], int(m.group(3)), int(m.group(4)))
            row["spills"] += int(m.group(5))
    return row


def run_errors(dlc, fdir, meta, tmp):
    worst_abs = worst_l2 = 0.0
    fp16_l2 = None
    for k, entry in enumerate(meta["formats"]):
        precisions = ["fp32"] + (["fp16"] if k == 0 else [])
        for precision in precisions:
            cmd = [dlc, "run", os.path.join(fdir, entry["files"]["model"])]
            if entry["files"].get("weights"):
                cmd += ["--weights", os.path.join(fdir, entry["files"]["weights"])]
            cmd += ["--device", "cpu", "--precision", entry.get("precision") or precision]
            for inp in meta["inputs"]:
                cmd += ["--input", os.path.join(fdir, inp["file"])]
            outs = [os.path.join(tmp, "o%d.npy" % i) for i in range(len(entry["expected"]))]
            for o in outs:
                cmd += ["--output", o]
            rc, _, err = compare.run_dlc(cmd, 1800)
            if rc != 0:
                return {"error": "%s %s: %s" % (entry["format"], precision,
                                                 err.strip().splitlines()[-1:])}
            for o, e in zip(outs, entry["expected"]):
                out, exp = np.load(o), np.load(os.path.join(fdir, e))
                if precision == "fp16":
                    _, _, _, l2 = compare.compare_l2(out, exp, 1e-2)
                    fp16_l2 = l2 if fp16_l2 is None else max(fp16_l2, l2)
                else:
                    _, _, a, l2 = compare.compare_l2(out, exp, compare.FP32_L2)
                    worst_abs, worst_l2 = max(worst_abs, a), max(worst_l2, l2)
    return {"formats": len(meta["formats"]), "fp32_max_abs": worst_abs,
            "fp32_rel_l2": worst_l2, "fp16_rel_l2": fp16_l2,
            "conditioning": (meta.get("checks") or {}).get("conditioning")}


def measure(dlc, fixtures, name):
    fdir = os.path.join(fixtures, name)
    with open(os.path.join(fdir, "meta.json")) as f:
        meta = json.load(f)
    row = {"model": name, "params": meta.get("count_params"),
           "input": meta["inputs"][0]["shape"] if meta["inputs"] else None}
    with tempfile.TemporaryDirectory(prefix="dlc-table-") as tmp:
        for precision in ("fp32", "fp16"):
            row[precision] = compile_times(dlc, fdir, meta, precision, tmp)
        row.update(run_errors(dlc, fdir, meta, tmp))
    return row


def human(n):
    if n is None:
        return "-"
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return "%.1f %s" % (n / size, unit)
    return "%d B" % n


def markdown(rows):
    lines = ["| model | input | params | formats | kernels fp32/fp16 | arena fp32/fp16 | "
             "weights fp32 | compile fp32 cold/warm (s) | compile fp16 cold/warm (s) | "
             "fp32 max abs / rel L2 (all formats) | fp16 rel L2 | conditioning fp32/fp16 |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        a, h = r["fp32"], r["fp16"]
        if "error" in a or "error" in h or "error" in r:
            lines.append("| %s | | | | error: %s | | | | | | | |" % (
                r["model"], a.get("error") or h.get("error") or r.get("error")))
            continue
        c = r.get("conditioning") or {}
        lines.append("| %s | %s | %s | %d | %d/%d | %s/%s | %s | %.1f/%.1f | %.1f/%.1f | "
                     "%.2g / %.2g | %.2g | %s |" % (
                         r["model"], "x".join(str(d) for d in r["input"][1:]),
                         "{:,}".format(r["params"]), r["formats"], a["kernels"], h["kernels"],
                         human(a["arena"]), human(h["arena"]), human(a["weights"]),
                         a["cold_s"], a["warm_s"], h["cold_s"], h["warm_s"], r["fp32_max_abs"],
                         r["fp32_rel_l2"], r["fp16_rel_l2"],
                         "%.2g/%.2g" % (c["fp32"], c["fp16"]) if c else "-"))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dlc", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--model", nargs="*")
    ap.add_argument("--json")
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    names = args.model or sorted(
        d for d in os.listdir(args.fixtures)
        if os.path.isfile(os.path.join(args.fixtures, d, "meta.json")))
    def safe(name):
        try:
            return measure(args.dlc, args.fixtures, name)
        except Exception as e:  # a row that says why, not a lost table
            return {"model": name, "error": "%s: %s" % (type(e).__name__, e),
                    "fp32": {}, "fp16": {}}

    rows = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        # Rows are written as they finish: a long run that is stopped keeps what it measured.
        for row in pool.map(safe, names):
            rows.append(row)
            if args.json:
                with open(args.json + ".tmp", "w") as f:
                    json.dump(rows, f, indent=1)
                os.replace(args.json + ".tmp", args.json)
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
