"""The report's estimated agreement against NumPy's, on an output of more rows than the estimate
uses (docs/quantization.md, "The gate's estimate").

check-estimate.py MODEL.keras WORKDIR
    conv2d_dilated's output has 132 rows (positions) per sample: 64 held-out samples in four
    batches give 8448 rows, of which the estimate takes 4096 evenly spaced across the batches.
    The report's `estimated_agreement` on the held-out set must equal check_ptq's
    estimated_agreement (an independent NumPy implementation) on `dlc run`'s outputs for the
    same inputs, and its top-1 agreement theirs.
"""
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "e2e"))
from check_ptq import estimated_agreement  # noqa: E402


def main():
    model, work = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(3)
    for d in ("cal", "held"):
        os.makedirs(os.path.join(work, d))
    for b in range(2):
        np.save(os.path.join(work, "cal", "b%d.npy" % b),
                rng.normal(size=(16, 12, 11, 3)).astype("float32"))
    x = rng.normal(size=(64, 12, 11, 3)).astype("float32")
    for b in range(4):
        np.save(os.path.join(work, "held", "b%d.npy" % b), x[16 * b:16 * b + 16])
    np.save(os.path.join(work, "x.npy"), x)
    cache, report = os.path.join(work, "cache.json"), os.path.join(work, "report.json")
    subprocess.run(["dlc", "compile", model, "--precision", "int8",
                    "--calibrate", os.path.join(work, "cal"), "--calibration-cache", cache,
                    "--calibration-holdout", os.path.join(work, "held"),
                    "--calibration-report", report, "--emit", "mlir",
                    "-o", os.path.join(work, "q.mlir")], check=True)
    outs = {}
    for p in ("fp32", "int8"):
        y = os.path.join(work, p + ".npy")
        c = ["dlc", "run", model, "--device", "cpu", "--precision", p,
             "--input", os.path.join(work, "x.npy"), "--output", y]
        if p == "int8":
            c += ["--calibrate", os.path.join(work, "cal"), "--calibration-cache", cache]
        subprocess.run(c, check=True, capture_output=True)
        outs[p] = np.load(y)
    with open(report) as f:
        held = json.load(f)["accuracy"]["holdout"]["outputs"][0]
    rows = outs["fp32"].size // outs["fp32"].shape[-1]
    want = estimated_agreement(outs["fp32"], outs["int8"])
    top1 = float(np.mean(outs["fp32"].argmax(-1) == outs["int8"].argmax(-1)))
    assert rows > 4096, rows
    assert held["estimated_agreement"] == want, (held["estimated_agreement"], want)
    assert held["top1_agreement"] == top1, (held["top1_agreement"], top1)
    assert want < 1, "the int8 error should flip some pairs"
    print("%d rows: estimated agreement %.6f, top-1 agreement %.6f: ok" % (rows, want, top1))


if __name__ == "__main__":
    main()
