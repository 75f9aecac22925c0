#!/usr/bin/env python3
"""Runs a time-boxed libFuzzer campaign per target and records it in
fuzz/CAMPAIGN.md.

    run.py [--build build/fuzz] [--seconds 600] [--jobs 1] [--no-record]
           [--replay] [TARGET...]

For each TARGET (default: all of fuzz/targets), runs build/fuzz/bin/fuzz_TARGET
for --seconds with its dictionary (fuzz/dicts/), a 10 s per-input timeout and
a 2 GiB RSS limit, on a working corpus (BUILD/corpus/TARGET, kept between
runs, not committed) seeded from fuzz/corpus/TARGET and fuzz/regressions/
TARGET. Findings (crash-*, leak-*, timeout-*, oom-*) go to BUILD/findings/
TARGET/ (fork mode: fuzzing goes on after one): triage them, fix the bug,
and move the input to fuzz/regressions/TARGET/. Leaks inside libhdf5 are
suppressed (fuzz/lsan.supp). Each run adds a row to CAMPAIGN.md's runs table
(executions, CPU seconds, edges covered, findings) and rewrites its totals.

--replay runs every committed input (fuzz/corpus/TARGET and
fuzz/regressions/TARGET) once instead, as CI does; exits 1 when one fails.
"""

import argparse
import datetime
import fcntl
import glob
import os
import re
import resource
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DICTS = {
    "keras_config": "json.dict",
    "keras_archive": "zip.dict",
    "hdf5_model": "hdf5.dict",
    "hdf5_weights": "hdf5.dict",
    "tfjs": "json.dict",
    "npy": "npy.dict",
    "artifact": "artifact.dict",
    "emit": "emit.dict",
}
CAMPAIGN = os.path.join(HERE, "CAMPAIGN.md")
BEGIN_RUNS = "<!-- runs: run.py adds rows below -->"
BEGIN_TOTALS = "<!-- totals: run.py rewrites from here -->"
END_TOTALS = "<!-- end of totals -->"


def targets():
    names = [os.path.basename(p)[:-4] for p in glob.glob(os.path.join(HERE, "targets", "*.cpp"))]
    return sorted(n for n in names if n in DICTS)


def committed_inputs(target):
    files = []
    for sub in ("corpus", "regressions"):
        files += sorted(p for p in glob.glob(os.path.join(HERE, sub, target, "*")) if os.path.isfile(p))
    return files


def sanitizer_env():
    env = dict(os.environ)
    env["LSAN_OPTIONS"] = f"suppressions={os.path.join(HERE, 'lsan.supp')}:print_suppressions=0"
    return env


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def replay(binary, target):
    files = committed_inputs(target)
    if not files:
        return True, 0
    proc = subprocess.run([binary, "-rss_limit_mb=2048", "-timeout=10", *files],
                          capture_output=True, text=True, env=sanitizer_env())
    if proc.returncode != 0:
        print(f"FAIL {target}: exit {proc.returncode}\n" + proc.stderr[-3000:])
        return False, len(files)
    return True, len(files)


def fuzz(binary, target, build, seconds, jobs):
    work = os.path.join(build, "corpus", target)
    findings = os.path.join(build, "findings", target)
    os.makedirs(work, exist_ok=True)
    os.makedirs(findings, exist_ok=True)
    seeds = [d for d in (os.path.join(HERE, "corpus", target), os.path.join(HERE, "regressions", target))
             if os.path.isdir(d)]
    before = set(os.listdir(findings))
    # Fork mode: a finding is written and fuzzing goes on.
    cmd = [binary, f"-fork={jobs}", "-ignore_crashes=1", "-ignore_timeouts=1", "-ignore_ooms=1",
           f"-max_total_time={seconds}", "-timeout=10", "-rss_limit_mb=2048",
           f"-dict={os.path.join(HERE, 'dicts', DICTS[target])}", "-print_final_stats=1",
           f"-artifact_prefix={findings}/", work, *seeds]
    cpu0, t0 = children_cpu(), time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=sanitizer_env())
    cpu, wall = children_cpu() - cpu0, time.time() - t0
    log = proc.stderr
    with open(os.path.join(build, "findings", f"{target}.log"), "w") as f:
        f.write(log)
    # Fork mode's status lines: "#EXECS: cov: EDGES ft: ... corp: N ...".
    m = re.findall(r"^#(\d+):? ", log, re.M)
    execs = int(m[-1]) if m else 0
    cov = re.findall(r"cov: (\d+)", log)
    edges = int(cov[-1]) if cov else 0
    new = sorted(set(os.listdir(findings)) - before)
    return {"execs": execs, "cpu": cpu, "wall": wall, "edges": edges, "findings": new,
            "corpus": len(os.listdir(work)), "rc": proc.returncode}


def record(target, r):
    # Campaigns of several targets run side by side: one rewrite at a time.
    with open(CAMPAIGN + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        record_locked(target, r)


def record_locked(target, r):
    with open(CAMPAIGN) as f:
        text = f.read()
    date = datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M")
    found = ", ".join(r["findings"]) if r["findings"] else "none"
    row = (f"| {date} | {target} | {r['execs']} | {r['cpu']:.0f} | {r['edges']} | "
           f"{r['corpus']} | {found} |")
    # Rows follow the marker and the table header (2 lines).
    lines = text.split("\n")
    i = lines.index(BEGIN_RUNS) + 3
    while i < len(lines) and lines[i].startswith("|"):
        i += 1
    lines.insert(i, row)
    text = "\n".join(lines)
    # Totals per target from every row.
    totals = {}
    for line in text.split("\n"):
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 7 and cells[1] in DICTS and cells[2].isdigit():
            t = totals.setdefault(cells[1], {"runs": 0, "execs": 0, "cpu": 0, "edges": 0})
            t["runs"] += 1
            t["execs"] += int(cells[2])
            t["cpu"] += int(cells[3])
            t["edges"] = max(t["edges"], int(cells[4]))
    table = ["| target | runs | executions | CPU time | edges (max) |", "|---|---|---|---|---|"]
    for name in sorted(totals):
        t = totals[name]
        table.append(f"| {name} | {t['runs']} | {t['execs']} | {t['cpu'] / 60:.1f} min | {t['edges']} |")
    a, b = text.index(BEGIN_TOTALS), text.index(END_TOTALS)
    text = text[: a + len(BEGIN_TOTALS)] + "\n" + "\n".join(table) + "\n" + text[b:]
    with open(CAMPAIGN, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "fuzz"))
    ap.add_argument("--seconds", type=int, default=600)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--no-record", action="store_true")
    ap.add_argument("--replay", action="store_true")
    ap.add_argument("targets", nargs="*")
    args = ap.parse_args()
    names = args.targets or targets()
    failed = False
    for target in names:
        binary = os.path.join(args.build, "bin", f"fuzz_{target}")
        if not os.path.exists(binary):
            sys.exit(f"run.py: no {binary}: build fuzz/sanitized first (fuzz/README.md)")
        if args.replay:
            ok, n = replay(binary, target)
            print(f"{target}: replayed {n} inputs: {'ok' if ok else 'FAILED'}", flush=True)
            failed |= not ok
            continue
        r = fuzz(binary, target, args.build, args.seconds, args.jobs)
        print(f"{target}: {r['execs']} executions, {r['cpu']:.0f} s CPU, {r['edges']} edges, "
              f"corpus {r['corpus']}, findings: {r['findings'] or 'none'}", flush=True)
        if not args.no_record:
            record(target, r)
        failed |= bool(r["findings"])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
