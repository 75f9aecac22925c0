#!/usr/bin/env python3
"""The GPU benchmark campaign's packing, device part and report (bench/gpu/campaign.sh drives it).

    campaign.py pack --stage DIR --out carry/bench --capacity BYTES [--first-capacity BYTES]
                     --extra NLOHMANN_DIR --budget S [--commit SHA]
    campaign.py device BATCH_DIR --dlc DLC --out DIR [--budget S] [--no-device]
    campaign.py report FILE... --json OUT.json --md OUT.md

pack: DIR holds what campaign.sh prepare compiled: MODEL.P.K.bB.dlcm (--no-weights artifacts),
MODEL.json (the architectures) and plan.json (the work items in priority order: every dlc bench,
then the baselines). Items are packed in order into batches OUT/1, OUT/2, ... each within BYTES
(the first within --first-capacity: it travels beside the correctness batch carry/gpu/1) and
within an estimated --budget seconds of device time (an artifact that did not compile is an
item with its `compile_error`, reported as such); each batch gets nlohmann's prefix (to build
the runtime) and the model architectures its baselines need, and a manifest.json.

device: runs one batch on the device machine: `dlc bench` on each artifact
(DLC_WEIGHTS_SYNTHETIC=1: the artifacts carry no weights), then each baseline
(bench/baselines/baseline.py), each under a timeout, skipping what the remaining budget cannot
hold; writes OUT/campaign.bN.json (every result, error or skip) and prints a short table last.
--no-device (the dry run here): the baselines run their CPU path (3 iterations), and the dlc
rows record dlc's one-line error.

report: joins the batches' files into one JSON and a markdown table, one row per model,
precision and batch: dlc generated / library / auto and XLA, Inductor, eager and the
library-call sum (ms, median), and the ratios of dlc auto to each baseline.

Standard library only.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

BLOCK = 4096
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Estimated device seconds of one item (padded: a skipped item costs nothing but its row).
EST_DLC = 6
EST_BASELINE = {"keras-torch-eager": 15, "torch-library": 20, "keras-jax-xla": 40,
                "keras-torch-compile": 150}


def blocks(n):
    return -(-n // BLOCK) * BLOCK


def tree_bytes(path):
    return sum(BLOCK + sum(blocks(os.path.getsize(os.path.join(d, f))) for f in fs)
               for d, _, fs in os.walk(path))


# ----------------------------------------------------------------------------------------------
# pack


def cmd_pack(args):
    with open(os.path.join(args.stage, "plan.json")) as f:
        plan = json.load(f)
    extra = tree_bytes(args.extra)
    batches = []

    def new_batch():
        cap = (args.first_capacity if not batches and args.first_capacity else args.capacity)
        batches.append({"free": cap - extra - 64 * 1024, "seconds": 0.0, "items": [],
                        "files": set()})
        return batches[-1]

    # Identical artifacts (a model where --kernels auto picks every generated kernel, or
    # where the library path has no call to make) travel once and are measured once: the
    # item names its own artifact and the file it shares ("file").
    first_of = {}
    for item in plan["items"]:
        if item["kind"] == "dlc" and not item.get("compile_error"):
            with open(os.path.join(args.stage, item["artifact"]), "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            item["file"] = first_of.setdefault(digest, item["artifact"])

    batch = new_batch()
    for item in plan["items"]:
        if item.get("compile_error"):
            files = []
        elif item["kind"] == "dlc":
            files = [item["file"]]
        else:
            files = [item["model"] + ".json"]
        cost = sum(blocks(os.path.getsize(os.path.join(args.stage, f)))
                   for f in files if f not in batch["files"])
        est = EST_DLC if item["kind"] == "dlc" else EST_BASELINE[item["tool"]]
        if item["kind"] == "dlc" and item["file"] in batch["files"]:
            est = 0  # measured once, by the item that brought the file
        if batch["items"] and (cost > batch["free"] or batch["seconds"] + est > args.budget):
            batch = new_batch()
            cost = sum(blocks(os.path.getsize(os.path.join(args.stage, f))) for f in files)
        if cost > batch["free"]:
            sys.exit("campaign.py: error: %s does not fit one call (%d bytes)" % (files, cost))
        batch["free"] -= cost
        batch["seconds"] += est
        batch["files"].update(files)
        batch["items"].append(item)
    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    for n, b in enumerate(batches, 1):
        d = os.path.join(args.out, str(n))
        os.makedirs(d)
        shutil.copytree(args.extra, os.path.join(d, "nlohmann"))
        for f in sorted(b["files"]):
            shutil.copy(os.path.join(args.stage, f), os.path.join(d, f))
        manifest = {"batch": n, "of": len(batches), "commit": args.commit,
                    "estimated_s": b["seconds"], "items": b["items"]}
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1)
        print("campaign.py: carry/bench/%d: %d items (%d dlc bench, %d baselines), ~%d s, "
              "%.1f MiB" % (n, len(b["items"]),
                            sum(i["kind"] == "dlc" for i in b["items"]),
                            sum(i["kind"] != "dlc" for i in b["items"]), b["seconds"],
                            tree_bytes(d) / 1048576))
    return 0


# ----------------------------------------------------------------------------------------------
# device


def run_item(cmd, env, timeout, log):
    """(exit status, seconds); 124 when the timeout stopped it."""
    t0 = time.time()
    with open(log, "w") as f:
        f.write(" ".join(cmd) + "\n")
        f.flush()
        try:
            rc = subprocess.run(cmd, env=env, stdout=f, stderr=subprocess.STDOUT,
                                timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = 124
    return rc, time.time() - t0


EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit)\b")


def error_line(path):
    """What a failed item's log says went wrong: the last Python exception
    line (a traceback's last line can be a note, as JAX's "For simplicity,
    JAX has removed its internal frames" is), else the last line (dlc's
    one-line error)."""
    try:
        with open(path, errors="replace") as f:
            lines = [ln.strip() for ln in f if ln.strip()]
    except OSError:
        return ""
    raised = [ln for ln in lines if EXCEPTION_LINE.match(ln)]
    return raised[-1] if raised else (lines[-1] if lines else "")


def cmd_device(args):
    start = time.time()
    batch = os.path.abspath(args.batch)
    with open(os.path.join(batch, "manifest.json")) as f:
        manifest = json.load(f)
    n = manifest["batch"]
    work = os.path.join(args.out, "b%d" % n)
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, DLC_WEIGHTS_SYNTHETIC="1", DLC_COMMIT=manifest.get("commit", ""),
               PYTHONUNBUFFERED="1")
    rows = []
    for i, item in enumerate(manifest["items"]):
        left = args.budget - (time.time() - start)
        est = EST_DLC if item["kind"] == "dlc" else EST_BASELINE[item["tool"]]
        row = dict(item, status="skipped", seconds=0, result=None, error=None)
        rows.append(row)
        if item.get("compile_error"):
            row["status"] = "error"
            row["error"] = "dlc compile: " + item["compile_error"]
            continue
        same = item.get("file", item.get("artifact"))
        done = next((r for r in rows[:-1] if r["kind"] == "dlc" and r["status"] == "ok"
                     and r.get("file", r.get("artifact")) == same), None)
        if item["kind"] == "dlc" and same != item["artifact"] and done is not None:
            row.update(status="ok", result=done["result"], reused=done["artifact"])
            continue
        if left < min(est, 30):
            row["error"] = "skipped: %d s of the call's budget left" % max(left, 0)
            continue
        out = os.path.join(work, "%03d.json" % i)
        log = os.path.join(work, "%03d.log" % i)
        if item["kind"] == "dlc":
            cmd = [args.dlc, "bench", os.path.join(batch, item.get("file", item["artifact"])),
                   "--iters",
                   str(item.get("iters", 100)), "--warmup", "10", "--json", out]
        else:
            cmd = [args.python, os.path.join(ROOT, "bench", "baselines", "baseline.py"),
                   "--tool", item["tool"], "--model",
                   os.path.join(batch, item["model"] + ".json"), "--batch", str(item["batch"]),
                   "--precision", item["precision"], "--json", out]
            cmd += (["--device", "cpu", "--iters", "3", "--warmup", "1"] if args.no_device
                    else ["--iters", str(item.get("iters", 50)), "--warmup", "5"])
        rc, secs = run_item(cmd, env, max(10, min(left, 4 * est + 60)), log)
        row["seconds"] = round(secs, 1)
        if rc == 0 and os.path.exists(out):
            with open(out) as f:
                row["result"] = json.load(f)
            row["status"] = "ok"
        else:
            row["status"] = "timeout" if rc == 124 else "error"
            row["error"] = error_line(log)[:300]
    doc = {"schema": "dlc-campaign/1", "batch": n, "commit": manifest.get("commit", ""),
           "no_device": args.no_device, "seconds": round(time.time() - start, 1), "rows": rows}
    path = os.path.join(args.out, "campaign.b%d.json" % n)
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(path + ".tmp", path)
    # The short table, last (the call shows the end of the output).
    ok = sum(r["status"] == "ok" for r in rows)
    print("campaign: batch %d: %d of %d items ok in %d s; %s" % (
        n, ok, len(rows), time.time() - start, path))
    for r in rows:
        what = r["artifact"] if r["kind"] == "dlc" else "%s %s %s b%d" % (
            r["tool"], r["model"], r["precision"], r["batch"])
        med = ((r["result"] or {}).get("latency_ms") or {}).get("median")
        print("  %-44s %-8s %s" % (what[:44], r["status"],
                                   "%.4f ms" % med if med is not None else (r["error"] or "")[:70]))
    return 0


# ----------------------------------------------------------------------------------------------
# report

COLUMNS = [("dlc generated", "dlc", "generated"), ("dlc library", "dlc", "library"),
           ("dlc auto", "dlc", "auto"), ("XLA", "keras-jax-xla", None),
           ("Inductor", "keras-torch-compile", None), ("eager", "keras-torch-eager", None),
           ("library sum", "torch-library", None)]


# The multiply-adds from which `dlc compile --kernels auto` takes the library
# call (compiler/codegen/library/LibraryCalls.h: kAutoConvMacs,
# kAutoGemmMacs); the report measures the rule against each run. Its other
# GEMM rule, K*N >= kAutoGemmWeights, is not in the summary: `dlc bench`'s
# steps carry no K and N.
AUTO_MACS = {"cudnn conv2d": 2 ** 27, "cublaslt gemm": 2 ** 24}
# The generated kernel families (`dlc inspect`) a library call stands for.
FAMILY_OF_CALL = {"cudnn conv2d": "conv_", "cublaslt gemm": "gemm_"}


def library_pairs(rows):
    """Each library call of a `library` row next to the generated kernel of
    the same layers in the `generated` row of the same model, precision and
    batch: [{what, model, precision, batch, layers, macs, generated_ms,
    library_ms}], from the per-step times of `dlc bench`."""
    results = {}
    for r in rows:
        if r["kind"] == "dlc" and r["status"] == "ok" and r["kernels"] in ("generated", "library"):
            results[(r["model"], r["precision"], int(r["batch"]), r["kernels"])] = r["result"]
    pairs = []
    for (model, prec, batch, kernels), lib in sorted(results.items()):
        gen = results.get((model, prec, batch, "generated"))
        if kernels != "library" or not gen:
            continue
        for s in lib.get("steps", []):
            # The generated kernel of the same family: a Dense's matmul and
            # its softmax are two kernels of one layer.
            family = FAMILY_OF_CALL.get(s["what"])
            g = next((k for k in gen.get("steps", [])
                      if k["kind"] == "kernel" and k["layers"] == s["layers"]
                      and family and k["what"].startswith(family)), None)
            if s["kind"] != "library_call" or not g or not s.get("flops") or not s["ms"] \
                    or not g["ms"]:
                continue
            pairs.append({"what": s["what"], "model": model, "precision": prec,
                          "batch": batch, "layers": s["layers"], "macs": s["flops"] // 2,
                          "generated_ms": g["ms"], "library_ms": s["ms"]})
    return pairs


def pair_summary(pairs):
    """Lines: per library call kind with an auto threshold, the pairs at or
    above it and below it, how many the library won and the range of
    library/generated time."""
    lines = []
    for what, macs in sorted(AUTO_MACS.items()):
        for above in (True, False):
            sel = [p for p in pairs if p["what"] == what and (p["macs"] >= macs) == above]
            if not sel:
                continue
            ratios = sorted(p["library_ms"] / p["generated_ms"] for p in sel)
            faster = sum(1 for x in ratios if x < 1)
            lines.append("- %s, %s 2^%d multiply-adds: %d pairs, the library faster in %d "
                         "(library/generated %.2f-%.2fx)" % (
                             what, "at least" if above else "below", macs.bit_length() - 1,
                             len(sel), faster, ratios[0], ratios[-1]))
    return lines


def cmd_report(args):
    rows = []
    device = {}
    for path in args.files:
        with open(path) as f:
            doc = json.load(f)
        for r in doc["rows"]:
            rows.append(r)
            if r["status"] == "ok" and r["kind"] == "dlc" and not device:
                device = dict(r["result"].get("device", {}))
    # dlc before 2026-11-27 wrote the CUDA version the driver supports as its
    # "driver" (13.0); the baselines the release nvidia-smi prints.
    if device and device.get("driver", "").count(".") < 2:
        release = next((r["result"]["device"]["driver"] for r in rows
                        if r["status"] == "ok" and r["kind"] != "dlc"
                        and str(r["result"].get("device", {}).get("driver", "")).count(".") >= 2),
                       None)
        if release:
            device["cuda_driver"], device["driver"] = device.get("driver"), release
    table = {}
    for r in rows:
        key = (r["model"], r["precision"], int(r["batch"]))
        col = next(c[0] for c in COLUMNS
                   if (r["kind"] == "dlc" and c[1] == "dlc" and c[2] == r["kernels"]) or
                   (r["kind"] != "dlc" and c[1] == r.get("tool")))
        med = ((r["result"] or {}).get("latency_ms") or {}).get("median")
        table.setdefault(key, {})[col] = med if r["status"] == "ok" else r["status"]
    pairs = library_pairs(rows)
    out = {"schema": "dlc-campaign-report/1", "device": device,
           "commit": next((json.load(open(p)).get("commit") for p in args.files), ""),
           "rows": rows, "library_vs_generated": pairs,
           "table": [dict(model=k[0], precision=k[1], batch=k[2], **v)
                     for k, v in sorted(table.items())]}
    tmp = args.json + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1)
    os.replace(tmp, args.json)

    def cell(v):
        return "%.3f" % v if isinstance(v, (int, float)) else (v or "-")

    def ratio(a, b):
        return "%.2f" % (a / b) if isinstance(a, (int, float)) and isinstance(b, (int, float)) \
            and b > 0 else "-"
    heads = [c[0] for c in COLUMNS]
    lines = ["GPU: %s, driver %s, CUDA %s; dlc %s. Median latency in ms (dlc: CUDA graph "
             "replays; library sum: the conv/GEMM layers alone); ratios < 1: dlc auto is "
             "faster." % (device.get("name", "?"), device.get("driver", "?"),
                          device.get("cuda_runtime", "?"), out["commit"] or "?"), "",
             "| model | precision | batch | " + " | ".join(heads) +
             " | auto/XLA | auto/Inductor | auto/eager | generated/library |",
             "|---|---|---|" + "---|" * (len(heads) + 4)]
    for (model, prec, batch), v in sorted(table.items()):
        auto = v.get("dlc auto")
        lines.append("| %s | %s | %d | %s | %s | %s | %s | %s |" % (
            model, prec, batch, " | ".join(cell(v.get(h)) for h in heads),
            ratio(auto, v.get("XLA")), ratio(auto, v.get("Inductor")),
            ratio(auto, v.get("eager")), ratio(v.get("dlc generated"), v.get("dlc library"))))
    summary = pair_summary(pairs)
    if summary:
        lines += ["", "Library calls against dlc's kernels, step by step (`dlc bench`'s per-step "
                  "times of the library and generated rows, the same layers), around the "
                  "multiply-adds from which `--kernels auto` takes the library:", ""] + summary
    tmp = args.md + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, args.md)
    print("\n".join(lines))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack")
    p.add_argument("--stage", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--capacity", type=int, required=True)
    p.add_argument("--first-capacity", type=int, default=0)
    p.add_argument("--extra", required=True)
    p.add_argument("--budget", type=float, default=420)
    p.add_argument("--commit", default="")
    p = sub.add_parser("device")
    p.add_argument("batch")
    p.add_argument("--dlc", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--budget", type=float, default=420)
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--no-device", action="store_true")
    p = sub.add_parser("report")
    p.add_argument("files", nargs="+")
    p.add_argument("--json", required=True)
    p.add_argument("--md", required=True)
    args = ap.parse_args(argv)
    return {"pack": cmd_pack, "device": cmd_device, "report": cmd_report}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
