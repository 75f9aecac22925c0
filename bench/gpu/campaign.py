#!/usr/bin/env python3
"""The GPU benchmark campaign's plan, packing, device part and report (bench/gpu/campaign.sh
drives it).

    campaign.py plan --stage DIR --models M... --precisions P... --batches B... --kernels K...
                     [--compile-at SPEC] [--baseline-at SPEC] [--results DIR --gpu NAME]
    campaign.py pack --stage DIR --out carry/bench --capacity BYTES [--first-capacity BYTES]
                     --extra NLOHMANN_DIR --budget S [--commit SHA]
    campaign.py device BATCH_DIR --dlc DLC --out DIR [--budget S] [--no-device]
    campaign.py report FILE... --json OUT.json --md OUT.md [--earlier DIR]

plan: DIR/plan.json, the work items in priority order: every `dlc bench` (an artifact that did
not compile, DIR/MODEL.P.K.bB.error, is an item with its `compile_error`), then the baselines,
XLA first, one item per tool, model and precision with the batch sizes it runs in one process.
SPEC says where a baseline runs (torch.compile: --compile-at; the others: --baseline-at):
MODEL:PRECISION:BATCH cells, "all", or "missing": every cell that no committed report in
--results measured on a GPU whose name holds --gpu (the baselines do not run dlc, so a cell
measured once on that GPU, driver and software need not run again; see report --earlier).

pack: DIR holds what campaign.sh prepare compiled: MODEL.P.K.bB.dlcm (--no-weights artifacts),
MODEL.json (the architectures) and plan.json. Items are packed in order into batches OUT/1,
OUT/2, ... each within BYTES (the first within --first-capacity: it travels beside the
correctness batch carry/gpu/1) and within an estimated --budget seconds of device time; each
batch gets nlohmann's prefix (to build the runtime) and the model architectures its baselines
need, and a manifest.json.

device: runs one batch on the device machine: `dlc bench` on each artifact
(DLC_WEIGHTS_SYNTHETIC=1: the artifacts carry no weights), then each baseline
(bench/baselines/baseline.py, its batch sizes in one process), each under a timeout, skipping
what the remaining budget cannot hold; writes OUT/campaign.bN.json (a row per dlc bench and per
baseline batch size: every result, error or skip) and prints a short table last. --no-device
(the dry run here): the baselines run their CPU path (3 iterations), and the dlc rows record
dlc's one-line error.

report: joins the batches' files into one JSON and a markdown table, one row per model,
precision and batch: dlc generated / library / auto and XLA, Inductor, eager and the
library-call sum (ms, median), and the ratios of dlc auto to each baseline. --earlier DIR: a
baseline cell this run did not measure is taken from the newest committed report in DIR
measured on the same GPU and driver with the same Keras and backend versions (marked, and its
source named, in both files).

Standard library only.
"""

import argparse
import glob
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

# Estimated device seconds of one item (padded: a skipped item costs nothing but its row): a
# dlc bench; a baseline's process with its first batch size (start-up: CUDA, the framework,
# Keras, the model) and each further batch size in it. Measured rows of 2026-11-27/28 (H200):
# XLA 16-30 s, eager 15-20, library 14-20, torch.compile 44 s to over 120.
EST_DLC = 6
EST_BASELINE = {"keras-torch-eager": 15, "torch-library": 20, "keras-jax-xla": 40,
                "keras-torch-compile": 150}
EST_BASELINE_MORE = {"keras-torch-eager": 6, "torch-library": 10, "keras-jax-xla": 15,
                     "keras-torch-compile": 120}
# The baselines in the plan's order: XLA first, what a Keras user runs today, the comparison a
# short call must not lose; torch.compile last, the longest.
TOOLS = ("keras-jax-xla", "keras-torch-eager", "torch-library", "keras-torch-compile")
REPORT_SCHEMA = "dlc-campaign-report/1"


def estimate(item):
    if item["kind"] == "dlc":
        return EST_DLC
    return EST_BASELINE[item["tool"]] + \
        (len(item["batches"]) - 1) * EST_BASELINE_MORE[item["tool"]]


def blocks(n):
    return -(-n // BLOCK) * BLOCK


def tree_bytes(path):
    return sum(BLOCK + sum(blocks(os.path.getsize(os.path.join(d, f))) for f in fs)
               for d, _, fs in os.walk(path))


# ----------------------------------------------------------------------------------------------
# plan


def reports(results):
    """[(order key, file name, document)] of the committed reports in `results`, oldest first:
    by the date their name starts with (DATE-GPU.json, DATE-GPU-2.json, ...), then the run's
    number that day, then the name."""
    found = []
    for path in glob.glob(os.path.join(results, "*.json")):
        name = os.path.basename(path)
        m = re.match(r"(\d{4}-\d\d-\d\d)-(.+?)(?:-(\d+))?\.json$", name)
        if not m:
            continue
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and doc.get("schema") == REPORT_SCHEMA:
            found.append(((m.group(1), int(m.group(3) or 1), name), name, doc))
    return sorted(found, key=lambda t: t[0])


def measured_baselines(results):
    """(report file name, row, the row's device) of every baseline row a committed report in
    `results` measured (status ok), oldest report first."""
    for _, name, doc in reports(results):
        for r in doc.get("rows", []):
            if r["kind"] != "dlc" and r["status"] == "ok":
                yield name, r, r["result"].get("device") or {}


def cell_of(r):
    return (r["tool"], r["model"], r["precision"], int(r["batch"]))


def measured_cells(results, gpu):
    """{(tool, model, precision, batch)} that a report in `results` measured on a GPU whose
    name holds `gpu` (case-insensitive)."""
    return {cell_of(r) for _, r, device in measured_baselines(results)
            if gpu.lower() in (device.get("name") or "").lower()}


def cmd_plan(args):
    items = []
    for m in args.models:
        for p in args.precisions:
            for b in args.batches:
                for k in args.kernels:
                    if p.startswith("int8") and k == "auto":
                        continue  # int8 under auto is int8 generated: no library call
                    item = {"kind": "dlc", "model": m, "precision": p, "batch": b,
                            "kernels": k, "artifact": "%s.%s.%s.b%d.dlcm" % (m, p, k, b)}
                    error = os.path.join(args.stage, "%s.%s.%s.b%d.error" % (m, p, k, b))
                    if os.path.exists(error):  # a row that says so, nothing to carry
                        with open(error) as f:
                            item["compile_error"] = f.read().strip()
                    items.append(item)
    specs = {"keras-torch-compile": args.compile_at, "other": args.baseline_at}
    if "missing" in specs.values() and not (args.results and args.gpu):
        sys.exit("campaign.py: error: \"missing\" needs --results and --gpu")
    have = measured_cells(args.results, args.gpu) if "missing" in specs.values() else set()
    for tool in TOOLS:
        spec = specs.get(tool, specs["other"])
        for m in args.models:
            for p in args.precisions:
                if p.startswith("int8"):  # dlc's own post-training int8: no baseline runs it
                    continue
                batches = [b for b in args.batches
                           if spec == "all" or (spec == "missing" and (tool, m, p, b) not in have)
                           or "%s:%s:%d" % (m, p, b) in spec.split()]
                if batches:
                    items.append({"kind": "baseline", "tool": tool, "model": m, "precision": p,
                                  "batches": batches})
    with open(os.path.join(args.stage, "plan.json"), "w") as f:
        json.dump({"items": items}, f, indent=1)
    print("campaign.py: %d items planned (%d dlc bench, %d baseline processes for %d cells)" % (
        len(items), sum(i["kind"] == "dlc" for i in items),
        sum(i["kind"] != "dlc" for i in items),
        sum(len(i.get("batches", [])) for i in items)))
    return 0


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
        est = estimate(item)
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
        est = estimate(item)
        if item["kind"] == "dlc":
            row = dict(item, status="skipped", seconds=0, result=None, error=None)
            rows.append(row)
            if item.get("compile_error"):
                row["status"] = "error"
                row["error"] = "dlc compile: " + item["compile_error"]
                continue
            same = item.get("file", item.get("artifact"))
            done = next((r for r in rows[:-1] if r["kind"] == "dlc" and r["status"] == "ok"
                         and r.get("file", r.get("artifact")) == same), None)
            if same != item["artifact"] and done is not None:
                row.update(status="ok", result=done["result"], reused=done["artifact"])
                continue
            group = [row]
        else:
            # A row per batch size; one process runs them all (baseline.py).
            base = {k: v for k, v in item.items() if k not in ("batches", "batch")}
            group = [dict(base, batch=b, status="skipped", seconds=0, result=None, error=None)
                     for b in item["batches"]]
            rows.extend(group)
        if left < min(est, 30):
            for row in group:
                row["error"] = "skipped: %d s of the call's budget left" % max(left, 0)
            continue
        out = os.path.join(work, "%03d.json" % i)
        log = os.path.join(work, "%03d.log" % i)
        if item["kind"] == "dlc":
            cmd = [args.dlc, "bench", os.path.join(batch, item.get("file", item["artifact"])),
                   "--iters",
                   str(item.get("iters", 100)), "--warmup", "10", "--json", out]
            outs = [out]
        else:
            out = os.path.join(work, "%03d.b{batch}.json" % i)
            cmd = [args.python, os.path.join(ROOT, "bench", "baselines", "baseline.py"),
                   "--tool", item["tool"], "--model",
                   os.path.join(batch, item["model"] + ".json"), "--batch"] + \
                [str(b) for b in item["batches"]] + \
                ["--precision", item["precision"], "--json", out]
            cmd += (["--device", "cpu", "--iters", "3", "--warmup", "1"] if args.no_device
                    else ["--iters", str(item.get("iters", 50)), "--warmup", "5"])
            outs = [out.replace("{batch}", str(b)) for b in item["batches"]]
        rc, secs = run_item(cmd, env, max(10, min(left, 4 * est + 60)), log)
        # Each batch size's file is written when it is done: a timeout keeps those before it.
        for row, path in zip(group, outs):
            if len(group) > 1:
                row["process"] = i
            if os.path.exists(path) and (rc == 0 or item["kind"] != "dlc"):
                with open(path) as f:
                    row["result"] = json.load(f)
            failed = [c for c in (row["result"] or {}).get("check") or [] if not c["ok"]]
            if row["result"] and not failed:
                row["status"] = "ok"
            elif failed:
                row["status"], row["error"] = "error", "check failed: %s" % json.dumps(failed[0])
            else:
                row["status"] = "timeout" if rc == 124 else "error"
                row["error"] = error_line(log)[:300] or "no result (exit status %d)" % rc
        # Seconds add up over rows: a baseline batch size has its own (`wall_s`, the first one
        # with the process's start-up); the rest of the process goes to its first row without.
        for row in group:
            row["seconds"] = round((row["result"] or {}).get("wall_s", 0), 1)
        rest = next((r for r in group if not (r["result"] or {}).get("wall_s")), None)
        if rest is not None:
            rest["seconds"] = round(secs - sum(r["seconds"] for r in group), 1)
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


def fill_from_earlier(results, rows, table, gpu, exclude):
    """Fills the baseline cells of `table` that this run did not measure (absent, skipped, timed
    out, failed) with the newest ok row of a committed report in `results` (not `exclude`)
    measured on a GPU of the same name and driver, and, where this run ran the same backend
    (JAX or PyTorch), with the same versions of Keras and the backend. Only the model, precision
    and batch rows this run has. Marks each filled cell in the row's `sources`; returns
    [{source, this_run, row}]."""
    def backend(r):
        return (r["result"].get("versions") or {}).get("backend")
    versions = {}
    for r in rows:
        if r["kind"] != "dlc" and r["status"] == "ok":
            versions.setdefault(backend(r), r["result"].get("versions"))
    newest = {}  # later reports overwrite earlier ones
    for name, r, d in measured_baselines(results):
        same_gpu = (d.get("name"), d.get("driver")) == (gpu.get("name"), gpu.get("driver"))
        mine = r["result"].get("versions")
        if name != exclude and same_gpu and versions.get(backend(r), mine) == mine:
            newest[cell_of(r)] = (name, r)
    reused = []
    for key, cols in sorted(table.items()):
        for label, tool, _ in COLUMNS:
            if tool == "dlc" or isinstance(cols.get(label), (int, float)):
                continue
            hit = newest.get((tool,) + key)
            if hit:
                name, r = hit
                reused.append({"source": name, "this_run": cols.get(label), "row": r})
                cols[label] = r["result"]["latency_ms"]["median"]
                cols.setdefault("sources", {})[label] = name
    return reused


def reused_summary(reused):
    """Per source report: how many cells of which tools, and their versions."""
    by = {}
    for e in reused:
        r = e["row"]
        v = r["result"].get("versions") or {}
        what = "%s (%s)" % (r["tool"], ", ".join("%s %s" % (k, v[k]) for k in sorted(v)
                                                  if k != "backend"))
        by.setdefault(e["source"], {}).setdefault(what, 0)
        by[e["source"]][what] += 1
    return ["%s: %s" % (src, ", ".join("%d %s" % (n, w) for w, n in sorted(tools.items())))
            for src, tools in sorted(by.items())]


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
    reused = []
    if args.earlier:
        # The GPU of this run: dlc's rows, else a baseline's (a run of baselines alone).
        gpu = device or next((dict(r["result"].get("device") or {}) for r in rows
                              if r["kind"] != "dlc" and r["status"] == "ok"), {})
        reused = fill_from_earlier(args.earlier, rows, table, gpu,
                                   os.path.basename(args.json))
    pairs = library_pairs(rows)
    out = {"schema": REPORT_SCHEMA, "device": device,
           "commit": next((json.load(open(p)).get("commit") for p in args.files), ""),
           "rows": rows, "reused": reused, "library_vs_generated": pairs,
           "table": [dict(model=k[0], precision=k[1], batch=k[2], **v)
                     for k, v in sorted(table.items())]}
    tmp = args.json + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1)
    os.replace(tmp, args.json)

    def cell(v, reused=False):
        return ("%.3f" % v + ("*" if reused else "")) if isinstance(v, (int, float)) \
            else (v or "-")

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
            model, prec, batch,
            " | ".join(cell(v.get(h), h in v.get("sources", {})) for h in heads),
            ratio(auto, v.get("XLA")), ratio(auto, v.get("Inductor")),
            ratio(auto, v.get("eager")), ratio(v.get("dlc generated"), v.get("dlc library"))))
    if reused:
        lines += ["", "\\* measured by an earlier run on the same GPU and driver (a baseline "
                  "does not run dlc; where this run ran the same backend, with the same Keras "
                  "and backend versions): " +
                  "; ".join(reused_summary(reused)) + "."]
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
    p = sub.add_parser("plan")
    p.add_argument("--stage", required=True)
    p.add_argument("--models", nargs="+", required=True)
    p.add_argument("--precisions", nargs="+", required=True)
    p.add_argument("--batches", nargs="+", type=int, required=True)
    p.add_argument("--kernels", nargs="+", required=True)
    p.add_argument("--compile-at", default="")
    p.add_argument("--baseline-at", default="")
    p.add_argument("--results", default="")
    p.add_argument("--gpu", default="")
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
    p.add_argument("--earlier", default="",
                   help="committed reports: the baseline cells this run did not measure")
    args = ap.parse_args(argv)
    return {"plan": cmd_plan, "pack": cmd_pack, "device": cmd_device,
            "report": cmd_report}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
