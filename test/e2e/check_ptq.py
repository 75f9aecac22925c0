"""dlc's post-training int8 quantization against its own fp32 graph (docs/quantization.md).

For each model of the core fixture set (build/test/fixtures, gen_fixtures.py) this draws
"random-but-calibrated" inputs: from the distribution the fixture's own inputs and weights were
made for (fixture_models.py: normal(0, scale) floats, or token ids in [1, vocab)), with a seed of
its own, as two disjoint sets: a calibration set of --calib samples and a held-out set of
--samples samples. Then

    dlc compile MODEL --precision int8 --calibrate CAL --calibration-holdout HELD \\
        --calibration-report REPORT.json --emit mlir

and asserts, for every output, top-1 agreement with fp32 >= --min-agreement (0.99) on the held-out
set (the report's figure) and at least one int8 layer; --report-only prints it without asserting.
--method, --unsigned-activations, --accuracy-target, --accuracy-margin and --fallback pass dlc's options
(the e2e/ptq tests use the documented method: mse, unsigned activations, accuracy target 0.99,
256 calibration samples; docs/quantization.md). With --cross-check, the held-out set is also run through
`dlc run --device cpu` in fp32 and in int8 and the agreement is recomputed here from the .npy
outputs: it must equal the report's.

The report's structure (keys, layers, ops, which layers are int8; not the numbers) must equal
the committed artifact test/e2e/ptq/MODEL.json (--artifacts DIR: DIR/MODEL.json); --update
rewrites the artifact instead.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fixture_models  # noqa: E402


def spec_of(name):
    for s in fixture_models.REGISTRY:
        if s.name == name:
            return s
    raise SystemExit("unknown model %s" % name)


def draw(spec, meta, rng, n):
    """n samples per model input, as gen_fixtures.make_inputs draws them."""
    xs = []
    for inp in meta["inputs"]:
        shape = (n,) + tuple(inp["shape"][1:])
        if spec.vocab:
            x = rng.integers(1, spec.vocab, size=shape)
        else:
            x = rng.normal(0.0, spec.scale, size=shape)
        xs.append(np.asarray(x, dtype=inp["dtype"]))
    return xs


def write_batches(folder, xs, batch):
    os.makedirs(folder)
    n = xs[0].shape[0]
    for b in range(0, n, batch):
        for i, x in enumerate(xs):
            name = "b%04d.npy" % (b // batch) if len(xs) == 1 else "b%04d.%d.npy" % (b // batch, i)
            np.save(os.path.join(folder, name), x[b:b + batch])


def run(cmd, timeout):
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise SystemExit("FAIL: %s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    return time.time() - t0


def structure(report):
    """What the committed artifact and a fresh report must share: no numbers."""
    def keys(o):
        if isinstance(o, dict):
            return {k: keys(v) for k, v in o.items()}
        if isinstance(o, list):
            return [keys(v) for v in o[:1]]
        return type(o).__name__ if not isinstance(o, (int, float)) or isinstance(o, bool) \
            else "number"
    return {
        "keys": keys({k: v for k, v in report.items() if k != "layers"}),
        "layer_keys": sorted({tuple(sorted(l)) for l in report["layers"]}),
        "layers": [(l["layer"], l["class"], l["op"], l["int8"], l["weight_scale"]["channels"])
                   for l in report["layers"]],
        "method": report["method"],
        "outputs": len(report["accuracy"]["calibration"]["outputs"]),
    }


def check_model(args, name, tmp):
    spec = spec_of(name)
    fixture = os.path.join(args.fixtures, name)
    with open(os.path.join(fixture, "meta.json")) as f:
        meta = json.load(f)
    model = os.path.join(fixture, "model.keras")
    # A seed per model, independent of the fixture's own inputs.
    rng = np.random.default_rng(zlib.crc32(("ptq/" + name).encode()))
    calib = draw(spec, meta, rng, args.calib)
    held = draw(spec, meta, rng, args.samples)
    cal_dir, held_dir = os.path.join(tmp, name, "cal"), os.path.join(tmp, name, "held")
    write_batches(cal_dir, calib, args.batch)
    write_batches(held_dir, held, args.batch)
    report_path = os.path.join(tmp, name, "report.json")
    cmd = [args.dlc, "compile", model, "--precision", "int8", "--calibrate", cal_dir,
           "--calibration-holdout", held_dir, "--calibration-report", report_path,
           "--calibration-method", args.method, "--emit", "mlir",
           "-o", os.path.join(tmp, name, "int8.mlir")]
    if args.keep_first_last:
        cmd.append("--int8-keep-first-last")
    if args.unsigned_activations:
        cmd.append("--int8-unsigned-activations")
    if args.accuracy_target:
        cmd += ["--int8-accuracy-target", str(args.accuracy_target)]
        if args.accuracy_margin:
            cmd += ["--int8-accuracy-margin", str(args.accuracy_margin)]
    if args.fallback:
        cmd += ["--int8-fallback", args.fallback]
    secs = run(cmd, args.timeout)
    with open(report_path) as f:
        report = json.load(f)

    failures = []
    held_acc = report["accuracy"]["holdout"]
    cal_acc = report["accuracy"]["calibration"]
    if held_acc["samples"] != args.samples or cal_acc["samples"] != args.calib:
        failures.append("report counts %d/%d samples, expected %d/%d" % (
            cal_acc["samples"], held_acc["samples"], args.calib, args.samples))
    for i, o in enumerate(held_acc["outputs"]):
        c = cal_acc["outputs"][i]
        total = report["layers_int8"] + report["layers_f32"]
        print("%s: output %d: %s, %d int8 / %d f32 layers (%.0f %% int8): top-1 agreement "
              "%.4f held-out (%.4f calibration), relative L2 error %.4f held-out (%.4f "
              "calibration) [%.0f s]"
              % (name, i, args.method, report["layers_int8"], report["layers_f32"],
                 100.0 * report["layers_int8"] / max(1, total), o["top1_agreement"],
                 c["top1_agreement"], o["rel_l2_error"], c["rel_l2_error"], secs))
        if not args.report_only and not o["top1_agreement"] >= args.min_agreement:
            failures.append("output %d: top-1 agreement %.4f < %.4f" % (
                i, o["top1_agreement"], args.min_agreement))
    if not args.report_only and report["layers_int8"] == 0:
        failures.append("no layer was quantized")

    if args.cross_check:
        # The report's figure, recomputed from `dlc run` outputs.
        x = os.path.join(tmp, name, "x%d.npy")
        for i, h in enumerate(held):
            np.save(x % i, h)
        outs = {}
        for prec in ("fp32", "int8"):
            y = os.path.join(tmp, name, prec + ".npy")
            c = [args.dlc, "run", model, "--device", "cpu", "--precision", prec,
                 "--output", y] + sum([["--input", x % i] for i in range(len(held))], [])
            if prec == "int8":
                c += ["--calibrate", cal_dir, "--calibration-method", args.method]
                if args.keep_first_last:
                    c.append("--int8-keep-first-last")
                if args.unsigned_activations:
                    c.append("--int8-unsigned-activations")
                if args.accuracy_target:
                    c += ["--int8-accuracy-target", str(args.accuracy_target)]
                    if args.accuracy_margin:
                        c += ["--int8-accuracy-margin", str(args.accuracy_margin)]
                if args.fallback:
                    c += ["--int8-fallback", args.fallback]
            run(c, args.timeout)
            outs[prec] = np.load(y).astype(np.float64)
        agree = float(np.mean(outs["fp32"].argmax(-1) == outs["int8"].argmax(-1)))
        rel = float(np.linalg.norm(outs["int8"] - outs["fp32"]) / np.linalg.norm(outs["fp32"]))
        o = held_acc["outputs"][0]
        print("%s: cross-check from dlc run: agreement %.4f, relative L2 error %.4f"
              % (name, agree, rel))
        if agree != o["top1_agreement"] or abs(rel - o["rel_l2_error"]) > 1e-6 * max(1, rel):
            failures.append("dlc run gives agreement %.6f / error %.6g, the report %.6f / %.6g"
                            % (agree, rel, o["top1_agreement"], o["rel_l2_error"]))

    artifact = os.path.join(args.artifacts, name + ".json")
    if args.update:
        with open(artifact, "w") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
        print("%s: wrote %s" % (name, artifact))
    elif not os.path.exists(artifact):
        failures.append("no committed report %s (run with --update)" % artifact)
    else:
        with open(artifact) as f:
            committed = json.load(f)
        if structure(committed) != structure(report):
            failures.append("the report's structure differs from %s (layers, ops, int8 "
                            "choices or keys; rerun with --update if intended)" % artifact)
    for f in failures:
        print("FAIL: %s: %s" % (name, f))
    return not failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dlc", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--models", required=True, help="comma-separated fixture names")
    ap.add_argument("--samples", type=int, default=256, help="held-out samples (default 256)")
    ap.add_argument("--calib", type=int, default=64, help="calibration samples (default 64)")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--method", default="percentile", choices=["max", "percentile", "entropy", "mse"])
    ap.add_argument("--unsigned-activations", action="store_true")
    ap.add_argument("--keep-first-last", action="store_true")
    ap.add_argument("--accuracy-target", type=float, default=0,
                    help="--int8-accuracy-target (0: off)")
    ap.add_argument("--accuracy-margin", type=float, default=0,
                    help="--int8-accuracy-margin (0: dlc's default)")
    ap.add_argument("--fallback", choices=["fp32", "fp16"],
                    help="--int8-fallback (default: dlc's, fp32)")
    ap.add_argument("--min-agreement", type=float, default=0.99)
    ap.add_argument("--report-only", action="store_true",
                    help="print the agreement without asserting --min-agreement (the CI test; "
                         "the acceptance test asserts it)")
    ap.add_argument("--cross-check", action="store_true")
    ap.add_argument("--update", action="store_true",
                    help="rewrite the committed reports test/e2e/ptq/MODEL.json")
    ap.add_argument("--timeout", type=int, default=1500)
    ap.add_argument("--work", help="keep each report here as MODEL.report.json")
    ap.add_argument("--artifacts", default=os.path.join(HERE, "ptq"),
                    help="the committed reports' folder (default test/e2e/ptq)")
    args = ap.parse_args()
    ok = True
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        for name in args.models.split(","):
            ok &= check_model(args, name, tmp)
            if args.work:  # keep the report
                os.replace(os.path.join(tmp, name, "report.json"),
                           os.path.join(args.work, name + ".report.json"))
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
