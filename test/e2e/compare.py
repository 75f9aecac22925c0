#!/usr/bin/env python3
"""Run dlc on a fixture model in every format and compare with Keras's outputs.

    compare.py --dlc BUILD/bin/dlc --fixtures OUTDIR --model NAME [--rtol R] [--atol A]
               [--format F ...] [--inspect] [--keep]

For every format entry of OUTDIR/NAME/meta.json (written by gen_fixtures.py) this runs

    dlc run MODEL [--weights WEIGHTS] --device cpu --input input_0.npy ... --output out_0.npy ...

in a temporary directory and compares each output with the entry's expected file element-wise:
|out - exp| <= atol + rtol * |exp| (NaN never equal; shapes must match exactly). One line per
format with the worst absolute and relative error; exit status 1 on any mismatch or dlc
failure (dlc's stderr is printed), 2 on a usage error or missing fixture.

Tolerance: --rtol/--atol when given; otherwise the model's hint in meta.json ("tolerance",
e.g. looser for the mixed_float16 model); otherwise rtol 1e-4, atol 1e-5. A format entry may
carry its own "tolerance" and "precision" (mixed_float16's `keras_fp32`: the model run with
`--precision fp32` against Keras's float32 computation, at the default tolerance).

--verify-stages passes the flag to dlc run: the reference executor checks every pipeline stage
against the imported model (dlc fails when a stage moves an output too far).

The model's conditioning, when meta.json's "checks" has it (gen_apps.measure_conditioning: how
far perturbing every weight and every layer's output by float32's, resp. float16's unit
roundoff moves the outputs, the largest of five draws; measured for the apps sets), is the least
error demanded: an fp32 output outside rtol/atol
passes when its conditioning exceeds 1e-5 and its relative L2 error is within it; the fp16 limit
becomes max(--l2, conditioning fp16); --verify-stages gets --verify-limit with both.

--precision fp16 runs `dlc run --precision fp16` and compares each output by its relative L2
error ||out - exp|| / ||exp|| <= --l2 (default 1e-2) instead of element-wise.

--inspect runs `dlc inspect MODEL [--weights W]` instead and checks that the `Total params: N`
line equals Keras's count_params() and that every layer of Keras's table (meta.json "layers"
for Keras 3 files, "layers_k2" for Keras 2 and TF.js files) appears on a line with its
parameter count. InputLayers (no parameters) may be absent; a nested model may appear as one
row with its total or through its own layers.

Only NumPy and the standard library: this must not import Keras.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

DEFAULT_RTOL = 1e-4
FP32_L2 = 1e-5  # relative L2 in fp32, where the model's conditioning allows no element-wise match
DEFAULT_ATOL = 1e-5


def load_meta(fixtures, model):
    path = os.path.join(fixtures, model, "meta.json")
    if not os.path.isfile(path):
        sys.exit("compare.py: error: no fixture %s (run gen_fixtures.py first)" % path)
    with open(path) as f:
        return json.load(f)


def run_dlc(cmd, timeout):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %ds" % timeout
    except OSError as e:
        return None, "", str(e)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def compare_arrays(out, exp, rtol, atol):
    """(ok, message, max_abs, max_rel) for one output."""
    if out.shape != exp.shape:
        return False, "shape %s, expected %s" % (out.shape, exp.shape), float("nan"), float("nan")
    o = out.astype(np.float64)
    e = exp.astype(np.float64)
    if o.size == 0:
        return True, "", 0.0, 0.0
    diff = np.abs(o - e)
    with np.errstate(invalid="ignore", divide="ignore"):
        ok = diff <= atol + rtol * np.abs(e)  # False wherever a NaN is involved
        rel = np.where(e != 0, diff / np.abs(e), np.where(diff == 0, 0.0, np.inf))
    if np.isfinite(diff).all():
        max_abs, max_rel = float(diff.max()), float(rel.max())
    else:
        max_abs = max_rel = float("nan")
    if ok.all():
        return True, "", max_abs, max_rel
    bad = np.argwhere(~ok)
    i = tuple(int(k) for k in bad[0])
    # The worst violation, by how far it is outside the tolerance.
    with np.errstate(invalid="ignore"):
        excess = np.where(np.isnan(diff), np.inf, diff - (atol + rtol * np.abs(e)))
    w = np.unravel_index(int(np.argmax(excess)), excess.shape)
    msg = "%d of %d elements differ; first at %s: %r vs %r; worst at %s: %r vs %r" % (
        len(bad), o.size, list(i), float(o[i]), float(e[i]), [int(k) for k in w],
        float(o[w]), float(e[w]))
    return False, msg, max_abs, max_rel


def compare_l2(out, exp, limit):
    """(ok, message, max_abs, relative L2) for one output."""
    if out.shape != exp.shape:
        return False, "shape %s, expected %s" % (out.shape, exp.shape), float("nan"), float("nan")
    o = out.astype(np.float64)
    e = exp.astype(np.float64)
    if o.size == 0:
        return True, "", 0.0, 0.0
    num = float(np.linalg.norm(o - e))
    den = float(np.linalg.norm(e))
    l2 = num / den if den > 0 else num
    max_abs = float(np.abs(o - e).max())
    if l2 <= limit:  # False for NaN
        return True, "", max_abs, l2
    return False, "relative L2 %s > %g" % (fmt_err(l2), limit), max_abs, l2


def fmt_err(x):
    return "%.3g" % x if np.isfinite(x) else str(x)


def check_run(args, meta, fdir, entry, rtol, atol, tmp):
    name = entry["format"]
    model_file = os.path.join(fdir, entry["files"]["model"])
    weights = entry["files"].get("weights")
    cmd = [args.dlc, "run", model_file]
    if weights:
        cmd += ["--weights", os.path.join(fdir, weights)]
    cmd += ["--device", "cpu"]
    # The model's conditioning (gen_apps.measure_conditioning, the apps sets): how far rounding
    # the weights and the layers' outputs at the precision moves the outputs. An implementation
    # storing them at that precision errs this much, so it raises the relative L2 limits where
    # it exceeds them.
    cond = (meta.get("checks") or {}).get("conditioning") or {}
    l2_fp32 = max(FP32_L2, cond.get("fp32", 0.0))
    l2_fp16 = max(args.l2, cond.get("fp16", 0.0))
    if args.verify_stages:
        cmd += ["--verify-stages"]
        if cond:
            cmd += ["--verify-limit", "%g,%g" % (l2_fp32, l2_fp16)]
    precision = entry.get("precision") or args.precision
    if precision:
        cmd += ["--precision", precision]
    for inp in meta["inputs"]:
        cmd += ["--input", os.path.join(fdir, inp["file"])]
    outs = []
    for i in range(len(entry["expected"])):
        outs.append(os.path.join(tmp, "%s_out_%d.npy" % (name, i)))
        cmd += ["--output", outs[-1]]
    rc, _, err = run_dlc(cmd, args.timeout)
    if rc != 0:
        print("FAIL %-14s dlc exited %s: %s" % (name, rc, " ".join(cmd)))
        for line in err.rstrip().splitlines()[-40:]:
            print("     | " + line)
        return False
    ok_all, worst_abs, worst_rel, msgs, notes = True, 0.0, 0.0, [], []
    for i, (out_path, exp_file) in enumerate(zip(outs, entry["expected"])):
        exp = np.load(os.path.join(fdir, exp_file))
        try:
            out = np.load(out_path)
        except Exception as e:  # missing or unreadable output
            ok_all = False
            msgs.append("output %d: cannot read %s: %s" % (i, out_path, e))
            continue
        if precision == "fp16":
            ok, msg, a, r = compare_l2(out, exp, l2_fp16)
        else:
            ok, msg, a, r = compare_arrays(out, exp, rtol, atol)
            if not ok and l2_fp32 > FP32_L2:  # only where the conditioning is the limit
                ok, _, _, l2 = compare_l2(out, exp, l2_fp32)
                notes.append("output %d: outside rtol/atol element-wise; relative L2 %s, limit "
                             "%g (the model's conditioning)" % (i, fmt_err(l2), l2_fp32))
        worst_abs = max(worst_abs, a) if np.isfinite(a) else a
        worst_rel = max(worst_rel, r) if np.isfinite(r) else r
        if not ok:
            ok_all = False
            msgs.append("output %d: %s" % (i, msg))
    if precision == "fp16":
        print("%s %-14s fp16: relative L2 %-9s max_abs %-9s (limit %g, %d output%s, %s)" % (
            "ok  " if ok_all else "FAIL", name, fmt_err(worst_rel), fmt_err(worst_abs), l2_fp16,
            len(outs), "" if len(outs) == 1 else "s", entry["generation"]))
    else:
        print("%s %-14s max_abs %-9s max_rel %-9s (rtol %g atol %g, %d output%s, %s)" % (
            "ok  " if ok_all else "FAIL", name, fmt_err(worst_abs), fmt_err(worst_rel), rtol,
            atol, len(outs), "" if len(outs) == 1 else "s", entry["generation"]))
    if args.verify_stages and ok_all:
        for line in err.splitlines():
            if line.startswith("stage "):
                print("     " + line)
    for m in notes + msgs:
        print("     " + m)
    if not ok_all and err.strip():
        for line in err.rstrip().splitlines()[-20:]:
            print("     | " + line)
    return ok_all


NUM = re.compile(r"(?<![\w.])\d[\d,_']*(?![\w.])")


def numbers_in(line):
    return {int(re.sub(r"[,_']", "", n)) for n in NUM.findall(line)}


def name_pattern(name):
    return re.compile(r"(?<![\w/.:-])" + re.escape(name) + r"(?![\w/.:-])")


def find_layer(lines, name, params):
    """True when some line names the layer and shows its parameter count."""
    pat = name_pattern(name)
    return any(pat.search(l) and params in numbers_in(l) for l in lines)


def check_table(lines, rows, problems, prefix=""):
    for row in rows:
        if find_layer(lines, row["name"], row["params"]):
            continue
        if row.get("layers"):  # a nested model: its own layers instead
            sub = []
            check_table(lines, row["layers"], sub, prefix + row["name"] + "/")
            if not sub:
                continue
        if row["class"] == "InputLayer" and row["params"] == 0:
            continue
        named = any(name_pattern(row["name"]).search(l) for l in lines)
        problems.append("layer %s%s (%s): %s" % (
            prefix, row["name"], row["class"],
            "listed without its parameter count %d" % row["params"] if named
            else "not listed (expected %d params)" % row["params"]))


def check_inspect(args, meta, fdir, entry):
    name = entry["format"]
    cmd = [args.dlc, "inspect", os.path.join(fdir, entry["files"]["model"])]
    if entry["files"].get("weights"):
        cmd += ["--weights", os.path.join(fdir, entry["files"]["weights"])]
    rc, out, err = run_dlc(cmd, args.timeout)
    if rc != 0:
        print("FAIL %-14s dlc exited %s: %s" % (name, rc, " ".join(cmd)))
        for line in err.rstrip().splitlines()[-40:]:
            print("     | " + line)
        return False
    lines = out.splitlines()
    problems = []
    totals = [l for l in lines if re.search(r"total params\s*:", l, re.I)]
    want = meta["count_params"]
    if not totals:
        problems.append("no 'Total params: N' line")
    else:
        got = numbers_in(totals[-1].split(":", 1)[1])
        if want not in got:
            problems.append("%s, Keras count_params() = %d" % (totals[-1].strip(), want))
    table = meta.get("layers_k2") if entry["generation"] in ("k2", "tfjs") else None
    check_table(lines, table or meta["layers"], problems)
    print("%s %-14s inspect: Total params %d, %d layers (%s)" % (
        "ok  " if not problems else "FAIL", name, want, len(table or meta["layers"]),
        entry["generation"]))
    for p in problems:
        print("     " + p)
    if problems:
        print("     dlc inspect printed:")
        for l in lines[:200]:
            print("     | " + l)
    return not problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dlc", required=True, help="path to the dlc executable")
    ap.add_argument("--fixtures", required=True, help="gen_fixtures.py's OUTDIR")
    ap.add_argument("--model", required=True)
    ap.add_argument("--rtol", type=float, default=None,
                    help="default: the model's hint in meta.json, else %g" % DEFAULT_RTOL)
    ap.add_argument("--atol", type=float, default=None,
                    help="default: the model's hint in meta.json, else %g" % DEFAULT_ATOL)
    ap.add_argument("--format", nargs="+", metavar="F",
                    help="only these formats (keras json legacy_h5 k2_h5 k2_json tfjs ...)")
    ap.add_argument("--first-format", action="store_true",
                    help="only the model's first format in meta.json (.keras, or k2_h5 for "
                         "a model only Keras 2 writes)")
    ap.add_argument("--generation", nargs="+", choices=["k3", "k2", "tfjs"],
                    help="only the formats of these generations")
    ap.add_argument("--inspect", action="store_true", help="check `dlc inspect` instead")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per dlc command")
    ap.add_argument("--keep", action="store_true", help="keep dlc's outputs (prints where)")
    ap.add_argument("--verify-stages", action="store_true",
                    help="check every pipeline stage with the reference executor")
    ap.add_argument("--precision", choices=["fp32", "fp16"],
                    help="pass --precision to dlc run; fp16 compares by relative L2")
    ap.add_argument("--l2", type=float, default=1e-2,
                    help="relative L2 limit with --precision fp16 (default 1e-2)")
    args = ap.parse_args(argv)

    if not (os.path.isfile(args.dlc) and os.access(args.dlc, os.X_OK)):
        ap.error("--dlc %s is not an executable" % args.dlc)
    meta = load_meta(args.fixtures, args.model)
    fdir = os.path.join(args.fixtures, args.model)
    tol = meta.get("tolerance") or {}
    rtol = args.rtol if args.rtol is not None else tol.get("rtol", DEFAULT_RTOL)
    atol = args.atol if args.atol is not None else tol.get("atol", DEFAULT_ATOL)

    entries = meta["formats"]
    if args.format:
        unknown = set(args.format) - {e["format"] for e in entries}
        if unknown:
            ap.error("model %s has no format %s (it has: %s)" % (
                args.model, ", ".join(sorted(unknown)),
                " ".join(e["format"] for e in entries)))
        entries = [e for e in entries if e["format"] in args.format]
    if args.generation:
        entries = [e for e in entries if e["generation"] in args.generation]
    if args.first_format:
        entries = entries[:1]
    if not entries:
        ap.error("nothing to check for %s" % args.model)

    print("%s: %s %d format%s" % (args.model, "inspect" if args.inspect else "run",
                                  len(entries), "" if len(entries) == 1 else "s"))
    tmp = tempfile.mkdtemp(prefix="dlc-compare-%s-" % args.model)
    try:
        results = []
        for e in entries:
            if args.inspect:
                results.append(check_inspect(args, meta, fdir, e))
            else:
                t = e.get("tolerance") or {}
                results.append(check_run(args, meta, fdir, e, t.get("rtol", rtol),
                                         t.get("atol", atol), tmp))
    finally:
        if args.keep:
            print("outputs kept in " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    failed = results.count(False)
    print("%s: %d passed, %d failed" % (args.model, len(results) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
