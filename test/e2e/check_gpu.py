#!/usr/bin/env python3
"""Run compiled fixture models on the GPU and compare with the CPU reference executor.

    check_gpu.py --dlc BUILD/bin/dlc --out DIR (--fixtures FIXTURES | --carried DIR)
                 [--models M ...] [--precision fp32 fp16 int8 int8-fp16]
                 [--kernels generated library]
                 [--checks compare memcheck stress] [--memcheck-models M ...]
                 [--stress BUILD/bin/dlc-stress] [--stress-models M ...] [--threads 8] [--runs 100]
                 [--compute-sanitizer PATH] [--no-device] [--json FILE] [--jobs N] [--keep]

Every (model, precision, kernels) triple is one artifact, DIR/MODEL.PRECISION.KERNELS.dlcm.
KERNELS is auto, generated or library, optionally with a target arch, KERNELS_sm_XX
(`generated_sm_90`: compiled with `--arch sm_90`, where Keras's float8 Dense takes the float8
tensor-core GEMM, and cuBLASLt's float8 GEMM under library); the reference is the same for
every arch (`dlc run --device cpu`, dlc's default targets: Keras's arithmetic).
With --fixtures (the full build) the script makes them: `dlc compile FIXTURES/MODEL/model.keras
--precision P --batch B --kernels K` at the fixture's batch, and the references with `dlc run
model.keras --device cpu --precision P` (the CPU reference executor, once per model and
precision; for int8 and int8-fp16 once per kernel choice too, `--kernels K`, as the library plan
rounds elsewhere: ref_key) on the fixture's inputs. int8 is `--precision int8`, int8-fp16 the same with
`--int8-fallback fp16`: both compile and reference calibrate on the fixture's inputs (one batch,
DIR/MODEL.calib/), so they quantize alike. With --carried (the device machine's runtime-only build,
see bench/gpu/) they are read from DIR: MODEL.P.K.dlcm, MODEL.input_I.npy, MODEL.P.ref_I.npy (int8: MODEL.P.K.ref_I.npy),
as `--no-device` wrote them.

Checks, each one row of the table:
  compare   `dlc run ART --device cuda` on the inputs; every output against the reference by
            relative L2 error ||gpu - ref|| / ||ref||: fp32 artifacts <= 1e-4 (SIMT kernels;
            cuBLASLt runs CUBLAS_COMPUTE_32F and cuDNN engines with tensor-core notes are
            refused for float data, so no TF32 anywhere), fp16 artifacts <= 1e-2 (tensor cores),
            int8 and int8-fp16 <= 1e-2 (the int32 sums are exact, but an f32 value the GPU
            rounds an ulp apart (FMA contraction) may quantize to the next int8 step).
            NaN or Inf fails.
  memcheck  the same run under `compute-sanitizer --tool memcheck` (models of
            --memcheck-models only); clean means 0 errors and exit status 0.
  stress    `dlc-stress ART --threads T --runs R` (models of --stress-models only): T threads
            with a session and a stream each, R runs each, every output bitwise identical.

--no-device only compiles and computes the references (rows "prepared"; the artifacts, inputs
and references stay in --out): bench/gpu/prepare.sh uses it, and it runs without a GPU.
Without it, a machine without a GPU gets dlc's one-line "no CUDA device" error in every row.

Prints a table whose first line names the GPU and driver, writes the rows to --json (and
rewrites it after every row, so a killed run leaves what it had), exits 1 if any row failed.

Only NumPy (for the comparisons) and the standard library: this must not import Keras.
"""

import argparse
import concurrent.futures
import datetime
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import threading

LIMITS = {"fp32": 1e-4, "fp16": 1e-2, "int8": 1e-2, "int8-fp16": 1e-2}
PRECISIONS = list(LIMITS)


def precision_args(precision, calib):
    """dlc's options for a precision of this script's."""
    if precision.startswith("int8"):
        return ["--precision", "int8", "--calibrate", calib] + (
            ["--int8-fallback", "fp16"] if precision == "int8-fp16" else [])
    return ["--precision", precision]
CHECK_ORDER = {"prepared": 0, "compare": 1, "memcheck": 2, "stress": 3}


def ref_key(precision, kernels):
    """Whose reference an artifact is compared with: the precision's (one CPU run per model and
    precision), but an int8 precision's per kernel choice (generated or library, whatever the
    arch): the library plan (cuBLASLt's int32 sums, de-scaled by a kernel of its own) fuses
    differently, so its float values are rounded to 16 bits at other places (int8-fp16), and
    int8's quantization turns such an ulp into a whole step in the next layer (MobileNetV2
    int8-fp16: library and generated plans 0.025 apart on the CPU reference executor)."""
    if precision.startswith("int8"):
        return "%s.%s" % (precision, kernels.partition("_sm_")[0])
    return precision


def first_line(text, limit=300):
    lines = [l.strip() for l in text.strip().splitlines() if l.strip()]
    line = lines[-1] if lines else ""
    for l in lines:  # dlc's one-line errors, when there is one
        if "error" in l.lower():
            line = l
            break
    return line[:limit]


def run(cmd, timeout, log=None):
    """(exit status, stdout + stderr); 124 on a timeout, 127 when the program is missing."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout)
        rc, text = p.returncode, p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        rc, text = 124, (e.stdout or b"").decode(errors="replace") + \
            "\ntimed out after %d s: %s" % (timeout, " ".join(cmd))
    except OSError as e:
        rc, text = 127, "%s: %s" % (cmd[0], e)
    if log:
        with open(log, "w") as f:
            f.write("$ %s\n%s" % (" ".join(cmd), text))
    return rc, text


def by_index(paths):
    return sorted(paths, key=lambda p: int(re.search(r"_(\d+)\.npy$", p).group(1)))


def rel_l2(got, want):
    import numpy as np  # here, so that bench/gpu/merge.py needs only the standard library
    g = np.asarray(got, dtype=np.float64)
    e = np.asarray(want, dtype=np.float64)
    if g.shape != e.shape:
        raise ValueError("shape %s, the reference has %s" % (g.shape, e.shape))
    if not np.all(np.isfinite(g)):
        return float("nan")
    den = float(np.linalg.norm(e))
    num = float(np.linalg.norm(g - e))
    return num / den if den > 0 else num


def gpu_info():
    info = {"gpu": "none", "driver": "", "cuda": ""}
    rc, text = run(["nvidia-smi", "--query-gpu=name,driver_version",
                    "--format=csv,noheader"], 60)
    if rc == 0 and text.strip():
        name, _, driver = text.strip().splitlines()[0].partition(",")
        info["gpu"], info["driver"] = name.strip(), driver.strip()
        rc, text = run(["nvidia-smi"], 60)
        m = re.search(r"CUDA Version:\s*([\d.]+)", text)
        info["cuda"] = m.group(1) if m else ""
    return info


def find_sanitizer(given):
    candidates = [given] if given else []
    candidates.append(shutil.which("compute-sanitizer"))
    nvcc = shutil.which("nvcc")
    roots = [os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))] if nvcc else []
    roots += [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda"]
    for r in filter(None, roots):
        candidates += [os.path.join(r, "bin", "compute-sanitizer"),
                       os.path.join(r, "compute-sanitizer", "compute-sanitizer")]
    for c in filter(None, candidates):
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


class Table:
    """The rows; the JSON file is rewritten after every row."""

    def __init__(self, args, info):
        self.args, self.info, self.rows = args, info, []
        self.lock = threading.Lock()

    def add(self, model, precision, kernels, check, value, limit, ok, detail=""):
        row = {"model": model, "precision": precision, "kernels": kernels, "check": check,
               "value": value, "limit": limit, "ok": bool(ok), "detail": detail}
        with self.lock:
            self.rows.append(row)
            self.rows.sort(key=lambda r: (r["model"], r["precision"], r["kernels"],
                                          CHECK_ORDER.get(r["check"], 9)))
            if self.args.json:
                self.write_json()
        if self.args.progress:
            print(self.format_row(row), flush=True)

    def write_json(self):
        doc = dict(self.info)
        doc.update({"command": " ".join(sys.argv),
                    "date": datetime.datetime.now(datetime.timezone.utc).isoformat(
                        timespec="seconds"),
                    "limits_rel_l2": LIMITS, "rows": self.rows})
        tmp = self.args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, self.args.json)

    @staticmethod
    def format_value(v):
        return "%.3g" % v if isinstance(v, float) else str(v)

    def format_row(self, r):
        line = "%-36s %-9s %-15s %-9s %-12s %-8s %s" % (
            r["model"], r["precision"], r["kernels"], r["check"], self.format_value(r["value"]),
            self.format_value(r["limit"]), "ok" if r["ok"] else "FAIL")
        return line + ("  " + r["detail"] if r["detail"] and not r["ok"] else "")

    def format_head(self):
        i = self.info
        head = "GPU: %s" % i["gpu"]
        if i["driver"]:
            head += ", driver %s, CUDA %s" % (i["driver"], i["cuda"] or "?")
        if i.get("dlc_commit"):
            head += "; dlc %s" % i["dlc_commit"]
        return head

    def print(self):
        lines = [self.format_head(), "%-36s %-9s %-15s %-9s %-12s %-8s %s" % (
            "model", "prec", "kernels", "check", "result", "limit", "ok")]
        lines += [self.format_row(r) for r in self.rows]
        bad = sum(not r["ok"] for r in self.rows)
        lines.append("%d rows, %d failed" % (len(self.rows), bad))
        print("\n".join(lines), flush=True)
        return bad


class Work:
    """Where one model's files are, and how to make the missing ones."""

    def __init__(self, args, model):
        self.args, self.model = args, model
        self.error = None
        self.inputs = []
        self.outputs = 0
        if args.carried:
            self.inputs = by_index(glob.glob(os.path.join(args.carried, model + ".input_*.npy")))
            if not self.inputs:
                self.error = "no %s.input_*.npy in %s" % (model, args.carried)
            return
        self.dir = os.path.join(args.fixtures, model)
        meta_path = os.path.join(self.dir, "meta.json")
        if not os.path.isfile(meta_path):
            self.error = "no fixture %s" % meta_path
            return
        with open(meta_path) as f:
            meta = json.load(f)
        self.batch = meta["batch"]
        self.outputs = len(meta["outputs"])
        self.inputs = [os.path.join(self.dir, i["file"]) for i in meta["inputs"]]

    def artifact(self, precision, kernels):
        root = self.args.carried or self.args.out
        return os.path.join(root, "%s.%s.%s.dlcm" % (self.model, precision, kernels))

    def refs(self, key):
        """The reference files of ref_key(precision, kernels)."""
        if self.args.carried:
            return by_index(glob.glob(os.path.join(
                self.args.carried, "%s.%s.ref_*.npy" % (self.model, key))))
        return [os.path.join(self.args.out, "%s.%s.ref_%d.npy" % (self.model, key, i))
                for i in range(self.outputs)]

    def input_args(self):
        return [a for f in self.inputs for a in ("--input", f)]

    def calibration(self):
        """The int8 calibration folder: the fixture's inputs as one batch."""
        calib = os.path.join(self.args.out, self.model + ".calib")
        os.makedirs(calib, exist_ok=True)
        for i, f in enumerate(self.inputs):
            name = "b0.npy" if len(self.inputs) == 1 else "b0.%d.npy" % i
            shutil.copyfile(f, os.path.join(calib, name))
        return calib

    def compile(self, precision, kernels):
        """None, or why the artifact is missing."""
        art = self.artifact(precision, kernels)
        if self.args.carried:
            if os.path.isfile(art):
                return None
            split = self.args.manifest.get("split", {}).get(os.path.basename(art))
            if split:
                return "no artifact: its %d parts (batches %s) were not all on this machine: " \
                    "run those batches back to back, with no pause that gives the machine back" % (
                        split["parts"], ", ".join(map(str, split["batches"])))
            return "no artifact %s" % art
        choice, _, arch = kernels.partition("_sm_")
        rc, text = run([self.args.dlc, "compile", os.path.join(self.dir, "model.keras"),
                        "--batch", str(self.batch), "--kernels", choice, "-o", art] +
                       precision_args(precision, self.calibration()) +
                       (["--arch", "sm_" + arch] if arch else []), 1800)
        return None if rc == 0 else "compile: " + first_line(text)

    def reference(self, key):
        """None, or why the references of ref_key(...) are missing."""
        refs = self.refs(key)
        if self.args.carried:
            return None if refs else "no %s.%s.ref_*.npy" % (self.model, key)
        precision, _, kernels = key.partition(".")
        rc, text = run([self.args.dlc, "run", os.path.join(self.dir, "model.keras"),
                        "--device", "cpu"] + precision_args(precision, self.calibration()) +
                       (["--kernels", kernels] if kernels else []) + self.input_args() +
                       [a for r in refs for a in ("--output", r)], 1800)
        return None if rc == 0 else "reference: " + first_line(text)


def check_model(args, table, model):
    """Every check of one model, all its precisions and kernels."""
    w = Work(args, model)
    triples = [(p, k) for p in args.precision for k in args.kernels]
    if args.carried:
        expected = set(args.manifest.get("checks", []))
        # The arch variants (KERNELS_sm_XX) of the kernel choices asked for, as carried.
        names = expected | {os.path.basename(a) for a in
                            glob.glob(os.path.join(args.carried, model + ".*.dlcm"))}
        for name in sorted(names):
            parts = name.split(".")
            if len(parts) == 4 and parts[0] == model and parts[1] in args.precision and \
                    "_sm_" in parts[2] and parts[2].partition("_sm_")[0] in args.kernels:
                triples.append((parts[1], parts[2]))
        triples = [(p, k) for p, k in triples if os.path.isfile(w.artifact(p, k)) or
                   os.path.basename(w.artifact(p, k)) in expected]
    if w.error:
        for p, k in triples or [("-", "-")]:
            table.add(model, p, k, "setup", "error", "", False, w.error)
        return
    if args.no_device and not args.carried:
        for i, f in enumerate(w.inputs):
            shutil.copyfile(f, os.path.join(args.out, "%s.input_%d.npy" % (model, i)))
    need_refs = args.no_device or "compare" in args.checks
    ref_error = {}
    for key in sorted({ref_key(p, k) for p, k in triples}) if need_refs else []:
        ref_error[key] = w.reference(key)
    for p, k in triples:
        art = w.artifact(p, k)
        err = w.compile(p, k)
        if err or ref_error.get(ref_key(p, k)):
            check = "prepared" if args.no_device else args.checks[0]
            table.add(model, p, k, check, "error", "", False, err or ref_error[ref_key(p, k)])
            continue
        if args.no_device:
            table.add(model, p, k, "prepared", "%.1f MB" % (os.path.getsize(art) / 1e6), "",
                      True)
            continue
        if "compare" in args.checks:
            compare(args, table, w, p, k, art)
        if "memcheck" in args.checks and model in args.memcheck_models:
            memcheck(args, table, w, p, k, art)
        if "stress" in args.checks and model in args.stress_models:
            stress(args, table, w, p, k, art)
        if not args.keep and not args.carried:
            os.remove(art)


def compare(args, table, w, precision, kernels, art):
    import numpy as np
    refs = w.refs(ref_key(precision, kernels))
    stem = os.path.join(args.out, "%s.%s.%s" % (w.model, precision, kernels))
    outs = ["%s.gpu_%d.npy" % (stem, i) for i in range(len(refs))]
    limit = LIMITS[precision]
    rc, text = run([args.dlc, "run", art, "--device", "cuda"] + w.input_args() +
                   [a for o in outs for a in ("--output", o)], 600)
    if rc != 0:
        table.add(w.model, precision, kernels, "compare", "error", limit, False,
                  first_line(text))
        return
    try:
        worst = max(rel_l2(np.load(o), np.load(r)) for o, r in zip(outs, refs))
        detail = ""
    except (ValueError, OSError) as e:
        worst, detail = "error", str(e)
    ok = isinstance(worst, float) and worst <= limit
    table.add(w.model, precision, kernels, "compare", worst, limit, ok,
              detail or ("" if ok else "NaN or Inf in the GPU's outputs" if worst != worst
                        else "relative L2 %.3g > %g" % (worst, limit)))
    if not args.keep:
        for o in outs:
            if os.path.exists(o):
                os.remove(o)


def memcheck(args, table, w, precision, kernels, art):
    row = (w.model, precision, kernels, "memcheck")
    if not args.sanitizer:
        table.add(*row, "error", "0 errors", False,
                  "compute-sanitizer not found (PATH, nvcc's toolkit, CUDA_HOME, /usr/local/cuda)")
        return
    stem = os.path.join(args.out, "%s.%s.%s" % (w.model, precision, kernels))
    n = len(w.refs(ref_key(precision, kernels))) if args.carried else w.outputs
    outs = ["%s.memcheck_%d.npy" % (stem, i) for i in range(n)]
    rc, text = run([args.sanitizer, "--tool", "memcheck", "--error-exitcode", "9",
                    "--print-limit", "20", args.dlc, "run", art, "--device", "cuda"] +
                   w.input_args() + [a for o in outs for a in ("--output", o)], 1800,
                   log=stem + ".memcheck.log")
    m = re.search(r"ERROR SUMMARY: (\d+) error", text)
    errors = int(m.group(1)) if m else None
    if rc == 0 and errors == 0:
        table.add(*row, "clean", "0 errors", True)
    elif errors:
        hit = [l for l in text.splitlines() if "=========" in l and "rror" in l]
        table.add(*row, "%d errors" % errors, "0 errors", False,
                  (hit[0] if hit else first_line(text)) + " (log: %s.memcheck.log)" % stem)
    else:
        table.add(*row, "error", "0 errors", False, first_line(text))
    for o in outs:
        if os.path.exists(o):
            os.remove(o)


def stress(args, table, w, precision, kernels, art):
    row = (w.model, precision, kernels, "stress")
    if not args.stress:
        table.add(*row, "error", "bitwise", False, "no --stress program given")
        return
    rc, text = run([args.stress, art, "--threads", str(args.threads), "--runs",
                    str(args.runs)] + w.input_args(), 900)
    summary = first_line(text, 600)
    value = "%dx%d" % (args.threads, args.runs) if rc == 0 else "differ" if rc == 1 and \
        "differ" in summary else "error"
    table.add(*row, value, "bitwise", rc == 0, summary)


def kernels_choice(text):
    if not re.fullmatch(r"(auto|generated|library)(_sm_[0-9]{2,3})?", text):
        raise argparse.ArgumentTypeError(
            "%r: expected auto, generated or library, optionally _sm_XX" % text)
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dlc", required=True)
    ap.add_argument("--out", required=True, help="artifacts, references, outputs and logs")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--fixtures", help="compile from FIXTURES/MODEL/model.keras")
    src.add_argument("--carried", help="read MODEL.P.K.dlcm and references from this folder")
    ap.add_argument("--models", nargs="+", help="default: every fixture / every artifact")
    ap.add_argument("--precision", nargs="+", choices=PRECISIONS,
                    help="default: fp32 fp16; with --carried, every precision the batch names")
    ap.add_argument("--kernels", nargs="+", type=kernels_choice,
                    help="auto, generated, library, each optionally with a target arch: "
                    "generated_sm_90; default: generated library; with --carried, every "
                    "choice the batch names")
    ap.add_argument("--checks", nargs="+", default=["compare"],
                    choices=["compare", "memcheck", "stress"])
    ap.add_argument("--memcheck-models", nargs="+", default=["mnist_cnn", "resnet50"])
    ap.add_argument("--compute-sanitizer", help="default: found on PATH or beside nvcc")
    ap.add_argument("--stress", help="the dlc-stress program")
    ap.add_argument("--stress-models", nargs="+", default=["mnist_cnn", "resnet50"])
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--no-device", action="store_true",
                    help="only compile and compute the references (no GPU needed)")
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--jobs", type=int, default=2, help="models checked at a time")
    ap.add_argument("--keep", action="store_true", help="keep artifacts and GPU outputs")
    ap.add_argument("--progress", action="store_true", help="also print each row as it ends")
    ap.add_argument("--commit", help="the dlc commit the artifacts were compiled at")
    args = ap.parse_args(argv)
    args.manifest = {}
    if not args.carried:
        args.precision = args.precision or ["fp32", "fp16"]
        args.kernels = args.kernels or ["generated", "library"]
    if args.carried and args.no_device:
        ap.error("--no-device prepares artifacts from --fixtures")
    os.makedirs(args.out, exist_ok=True)
    if args.no_device:
        args.keep = True
    args.sanitizer = find_sanitizer(args.compute_sanitizer) \
        if "memcheck" in args.checks and not args.no_device else None

    if args.carried:
        # bench/gpu/pack.py's manifest names the artifacts of the batch, those
        # assembled from parts too: a missing one is a failed row.
        manifest = os.path.join(args.carried, "manifest.json")
        if os.path.isfile(manifest):
            with open(manifest) as f:
                args.manifest = json.load(f)
        expected = [os.path.join(args.carried, a) for a in args.manifest.get("checks", [])]
        # What the batch was prepared with (prepare.sh's PRECISIONS and KERNELS), unless named.
        named = [os.path.basename(p).split(".") for p in
                 glob.glob(os.path.join(args.carried, "*.dlcm")) + expected]
        named = [n for n in named if len(n) == 4]
        if args.precision is None:
            args.precision = sorted({n[1] for n in named} & set(PRECISIONS)) or ["fp32", "fp16"]
        if args.kernels is None:
            args.kernels = sorted({n[2].partition("_sm_")[0] for n in named}) or [
                "generated", "library"]
        found = sorted({os.path.basename(p).split(".")[0]
                        for p in glob.glob(os.path.join(args.carried, "*.dlcm")) + expected})
        models = [m for m in found if not args.models or m in args.models]
        models += [m for m in args.models or [] if m not in found]
    else:
        models = args.models or sorted(
            n for n in os.listdir(args.fixtures)
            if os.path.isfile(os.path.join(args.fixtures, n, "model.keras")))

    info = gpu_info() if not args.no_device else {"gpu": "none (--no-device)", "driver": "",
                                                  "cuda": ""}
    info["dlc_commit"] = args.commit or ""
    if not info["dlc_commit"]:
        rc, text = run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse",
                        "HEAD"], 60)
        info["dlc_commit"] = text.strip() if rc == 0 else ""
    table = Table(args, info)
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        futures = {pool.submit(check_model, args, table, m): m for m in models}
        for f in concurrent.futures.as_completed(futures):
            try:
                f.result()
            except Exception as e:  # a bug here must not hide the other rows
                table.add(futures[f], "-", "-", "setup", "error", "", False,
                          "%s: %s" % (type(e).__name__, e))
    if args.json:
        table.write_json()
    return 1 if table.print() else 0


if __name__ == "__main__":
    sys.exit(main())
