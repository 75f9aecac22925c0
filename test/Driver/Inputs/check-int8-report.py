"""Checks a --calibration-report (docs/quantization.md) against an independent computation.

check-int8-report.py mse REPORT.json CAL_DIR
    The first quantizable op's input is the model input: its clip must be the MSE clip that
    this script computes from the calibration files (2048-bin histogram of |x| over
    [0, max|x|], exact zeros apart; the bin edge c minimizing
    (count below c, zeros excepted) * (c/127)^2/12 + sum over bins beyond c of (x - c)^2).

check-int8-report.py target REPORT.json
    --int8-accuracy-target: the ops kept f32 for it are exactly the most sensitive ones (the
    ranks 1..k), the chosen k is the last search step that meets the target, k - 1 does not
    meet it when it was measured, and the report's calibration agreement is that step's.
    A step meets the target exactly when its estimated agreement (with the margin) is at least
    the target. With --int8-accuracy-refine: after the bisection the ranks k-1 .. 1 are tried
    back in int8 in that order, each staying int8 exactly when its step meets the target, each
    step's kept_f32 counts the ops f32 in it, the ops kept f32 are ranks 1..k less those that
    stayed int8, and the report's calibration agreement is the last such step's.
"""
import glob
import json
import sys

import numpy as np


def mse_clip(x):
    a = np.abs(x.astype(np.float64)).ravel()
    amax = a.max()
    bins = 2048
    width = amax / bins
    idx = np.minimum(bins - 1, (a * (bins / amax)).astype(np.int64))
    hist = np.bincount(idx, minlength=bins).astype(np.float64)
    zeros = float(np.sum(a == 0))
    centre = (np.arange(bins) + 0.5) * width
    best, best_i = np.inf, bins
    for i in range(1, bins + 1):
        c = i * width
        inrange = max(0.0, hist[:i].sum() - zeros)
        beyond = hist[i:]
        err = inrange * (c / 127) ** 2 / 12 + np.sum(beyond * (centre[i:] - c) ** 2)
        if err < best * (1 - 1e-12):
            best, best_i = err, i
    return best_i * width, amax


def main():
    kind, path = sys.argv[1], sys.argv[2]
    with open(path) as f:
        r = json.load(f)
    if kind == "mse":
        x = np.concatenate([np.load(p) for p in sorted(glob.glob(sys.argv[3] + "/*.npy"))])
        clip, amax = mse_clip(x)
        got = r["layers"][0]["input"]
        assert r["method"]["name"] == "mse", r["method"]
        assert abs(got["observed_amax"] - amax) <= 1e-6 * amax, (got, amax)
        assert abs(got["clip"] - clip) <= 1e-5 * amax, (got["clip"], clip)
        assert clip < amax, "the test input should have a clip below max|x|"
        print("mse clip %.6g of max %.6g: ok" % (clip, amax))
        return
    target = r["method"]["accuracy_target"]
    everything = r["accuracy_target"]["search"]
    assert everything, "no search step"
    search = [s for s in everything if "refine_rank" not in s]
    refine = [s for s in everything if "refine_rank" in s]
    assert everything[:len(search)] == search, "a bisection step after a refinement step"
    chosen = [s for s in search if s["meets"]]
    k = min(s["kept_f32"] for s in chosen) if chosen else \
        sum(1 for l in r["layers"] if "sensitivity" in l)
    for s in everything:
        assert s["meets"] == (s["estimated_agreement"] >= target), s
    missed = [s for s in search if s["kept_f32"] == k - 1]
    assert all(not s["meets"] for s in missed), (k, missed)
    back = set()
    if r["method"].get("accuracy_refine"):
        assert [s["refine_rank"] for s in refine] == list(range(k - 1, 0, -1)), (k, refine)
        f32 = k
        for s in refine:
            assert s["kept_f32"] == f32 - 1, (s, f32)
            if s["meets"]:
                back.add(s["refine_rank"])
                f32 -= 1
    else:
        assert not refine, refine
    kept = sorted(l["sensitivity"]["rank"] for l in r["layers"]
                  if "sensitivity" in l and not l["int8"])
    assert kept == sorted(set(range(1, k + 1)) - back), (kept, k, back)
    for l in r["layers"]:
        if "sensitivity" in l and not l["int8"]:
            assert l["kept_f32_because"].startswith("--int8-accuracy-target"), l
    ranks = sorted(l["sensitivity"]["rank"] for l in r["layers"] if "sensitivity" in l)
    assert ranks == list(range(1, len(ranks) + 1)), ranks
    by_rank = sorted((l["sensitivity"]["rank"], l["sensitivity"]["rel_l2_error"])
                     for l in r["layers"] if "sensitivity" in l)
    assert all(a[1] >= b[1] for a, b in zip(by_rank, by_rank[1:])), by_rank
    cal = r["accuracy"]["calibration"]["outputs"]
    step = [s for s in refine if s["meets"]][-1:] or [s for s in search if s["kept_f32"] == k]
    if step:
        assert abs(min(o["top1_agreement"] for o in cal) - step[0]["top1_agreement"]) < 1e-12
    assert r["layers_int8"] == len(r["layers"]) - r["layers_f32"]
    print("accuracy target %g: %d of %d kept f32, %d int8%s: ok"
          % (target, k, len(ranks), r["layers_int8"],
             ", %d tried back, %d of them int8" % (len(refine), len(back))
             if r["method"].get("accuracy_refine") else ""))


if __name__ == "__main__":
    main()
