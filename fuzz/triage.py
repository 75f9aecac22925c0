#!/usr/bin/env python3
"""Triages a fuzz target's findings (crash-*, leak-*, oom-*, timeout-*): each
input replayed alone against the target, its report classified by
sanitizer_frame.py, and, for the HDF5 targets, the same file given to the
`dlc` command as a user would, which must end in one `dlc: error:` line
(exit 1) or exit 0 within the time limit.

    triage.py [--build BUILD] [--dlc PATH] [--max-seconds 10] [--delete]
              [--timeouts N] TARGET [FILE...]

FILEs default to BUILD/findings/TARGET/* (fuzz/run.py's findings). Without
--build no input is replayed in process; without --dlc none goes through the
command line. Through `dlc`, an hdf5_model input is the legacy .h5 model of
`dlc inspect MODEL.h5`; an hdf5_weights input is the target's selector byte
and a weights file: `dlc inspect CONFIG --weights W.h5` with CONFIG
fuzz/corpus/configs/keras2.json (odd selector) or keras3.json (even), the
configs the target has compiled in.

Prints a line per input and a summary. An input is CONTAINED when its report
is libhdf5's own (or it ran clean or timed out in process) and the command
line refuses it in one line in time; anything else is a FINDING. Exits 1
when any input is a finding. --delete removes the contained inputs (record
them in CAMPAIGN.md's Findings first). --timeouts N checks only N of the
timeout-* inputs, spread evenly (each costs the in-process time limit and the
reader's, 10 s + 8 s by default; a campaign on libhdf5 finds hundreds): the
others are listed as unchecked and kept.

Used by ci.sh for its smoke run's findings (without --dlc) and by hand after
a campaign run (fuzz/triage/README.md).
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import dlc_tool
from sanitizer_frame import in_libhdf5, innermost_frame

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = os.path.join(HERE, "corpus", "configs")
KINDS = ("crash-", "leak-", "oom-", "timeout-", "slow-unit-")


def kind(path):
    name = os.path.basename(path)
    for k in KINDS:
        if k in name:
            return k[:-1]
    return "input"


def replay(build, target, path, max_seconds):
    """Replays one input in process; returns (verdict, detail, report)."""
    binary = os.path.join(build, "bin", f"fuzz_{target}")
    env = dict(os.environ)
    env["LSAN_OPTIONS"] = f"suppressions={os.path.join(HERE, 'lsan.supp')}:print_suppressions=0"
    try:
        proc = subprocess.run([binary, "-rss_limit_mb=2048", f"-timeout={int(max_seconds)}", path],
                              capture_output=True, text=True, errors="replace", env=env,
                              timeout=max_seconds + 20)
    except subprocess.TimeoutExpired:
        return "timeout", f"still running after {max_seconds + 20:.0f} s", ""
    if proc.returncode == 0:
        return "clean", "", ""
    report = proc.stdout + proc.stderr
    if "ERROR: libFuzzer: timeout" in report:
        return "timeout", f"over {max_seconds:.0f} s in process", report
    frame = innermost_frame(report).strip()
    if in_libhdf5(report):
        return "libhdf5", frame, report
    return "finding", frame or "(no frame)", report


def cli_case(target, path, work):
    """Lays one input out as the files of a `dlc inspect` call in WORK;
    returns its arguments, or None when the target has no command-line form."""
    with open(path, "rb") as f:
        data = f.read()
    if target == "hdf5_model":
        with open(os.path.join(work, "model.h5"), "wb") as f:
            f.write(data)
        return ["model.h5"]
    if target == "hdf5_weights":
        if not data:
            return None
        config = "keras2.json" if data[0] % 2 else "keras3.json"
        shutil.copy(os.path.join(CONFIGS, config), os.path.join(work, "model.json"))
        with open(os.path.join(work, "weights.h5"), "wb") as f:
            f.write(data[1:])
        return ["model.json", "--weights", "weights.h5"]
    return None


def through_dlc(dlc, target, path, max_seconds):
    """Gives one input to `dlc inspect`; returns (problem or None, summary)."""
    with tempfile.TemporaryDirectory() as work:
        args = cli_case(target, path, work)
        if args is None:
            return None, "(no command-line form)"
        start = time.time()
        try:
            proc = subprocess.run([dlc, "inspect", *args], cwd=work, capture_output=True,
                                  timeout=max_seconds + 20)
        except subprocess.TimeoutExpired:
            return f"still running after {max_seconds + 20:.0f} s", ""
        took = time.time() - start
        lines = dlc_tool.stderr_lines(proc)
        summary = f"exit {proc.returncode}, {took:.1f} s" + (f": {lines[-1][:140]}" if lines else "")
        if took > max_seconds:
            return f"took {took:.1f} s, more than {max_seconds:.0f} s", summary
        if proc.returncode == 0:
            return None, summary
        return dlc_tool.refusal_problem(proc), summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", help="the fuzz build (fuzz/sanitized) with bin/fuzz_TARGET")
    ap.add_argument("--dlc", help="the dlc command, for the command-line check")
    ap.add_argument("--max-seconds", type=float, default=10.0)
    ap.add_argument("--delete", action="store_true", help="remove the contained inputs")
    ap.add_argument("--timeouts", type=int, help="check at most this many timeout-* inputs")
    ap.add_argument("target")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    files = args.files
    if not files:
        if not args.build:
            sys.exit("triage.py: give FILEs or --build")
        files = sorted(p for p in glob.glob(os.path.join(args.build, "findings", args.target, "*"))
                       if os.path.isfile(p))
    timeouts = [p for p in files if kind(p) == "timeout"]
    unchecked = []
    if args.timeouts is not None and len(timeouts) > args.timeouts:
        step = len(timeouts) / max(args.timeouts, 1)
        checked = {timeouts[int(i * step)] for i in range(args.timeouts)}
        unchecked = [p for p in timeouts if p not in checked]
        files = [p for p in files if p not in unchecked]
    dlc = dlc_tool.dlc_path(args) if args.dlc else None
    counts = {}
    findings = 0
    for path in files:
        verdict, detail, report = ("not replayed", "", "")
        if args.build:
            verdict, detail, report = replay(args.build, args.target, path, args.max_seconds)
        problem, summary = None, ""
        if dlc:
            problem, summary = through_dlc(dlc, args.target, path, args.max_seconds)
        bad = verdict == "finding" or problem is not None
        findings += bad
        key = (kind(path), verdict, "FINDING" if bad else "contained")
        counts[key] = counts.get(key, 0) + 1
        line = f"{'FINDING' if bad else 'contained'} {os.path.basename(path)}: {verdict}"
        if detail:
            line += f" ({detail[:160]})"
        if dlc:
            line += f"; dlc: {problem + ' | ' if problem else ''}{summary}"
        print(line)
        if verdict == "finding":
            # The sanitizer's own summary and stack, for a log that is all
            # there is (CI).
            keep = [l for l in report.splitlines()
                    if re.search(r"ERROR|SUMMARY|^ +#[0-9]+ ", l)]
            print("\n".join("    " + l for l in keep[:20]))
        if args.delete and not bad:
            os.remove(path)
    for (k, verdict, outcome), n in sorted(counts.items()):
        print(f"triage.py: {args.target}: {k} inputs {verdict} in process, {outcome}: {n}")
    if unchecked:
        print(f"triage.py: {args.target}: {len(unchecked)} more timeout inputs unchecked (--timeouts)")
    print(f"triage.py: {args.target}: {len(files)} inputs, {findings} findings")
    sys.exit(1 if findings else 0)


if __name__ == "__main__":
    main()
