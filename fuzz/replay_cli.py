#!/usr/bin/env python3
"""Replays the command-line regression cases: each must end within the time
limit in exit 0, or exit 1 with exactly one `dlc: error: ...` line, and write
nothing.

    replay_cli.py --dlc PATH [--max-seconds 10] DIR...

Each case is a folder under a DIR holding the model files and `args`, the
arguments of `dlc inspect` (one line, paths relative to the folder). The
cases come from fuzz/mutate.py (inputs that once hung or crashed dlc).
`dlc compile ARGS --emit mlir -o OUT` runs too, with OUT in a temporary
folder, which must stay empty unless it succeeds. Prints one line per failing
case and a summary; exits 1 when any failed.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time


def check(cmd, cwd, max_seconds):
    start = time.time()
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, timeout=max_seconds + 20)
    except subprocess.TimeoutExpired:
        return None, f"still running after {max_seconds + 20} s"
    took = time.time() - start
    lines = proc.stderr.decode(errors="replace").splitlines()
    if took > max_seconds:
        return proc, f"took {took:.1f} s, more than {max_seconds} s"
    if proc.returncode == 0:
        return proc, None
    if proc.returncode != 1:
        return proc, f"exit status {proc.returncode}: " + " | ".join(lines[:3])[:300]
    if len(lines) != 1 or not lines[0].startswith("dlc: error: "):
        return proc, f"{len(lines)} lines on stderr: " + " | ".join(lines[:3])[:300]
    return proc, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlc", required=True)
    ap.add_argument("--max-seconds", type=float, default=10.0)
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    dlc = os.path.abspath(args.dlc)
    cases = []
    for d in args.dirs:
        for name in sorted(os.listdir(d)):
            if os.path.isfile(os.path.join(d, name, "args")):
                cases.append(os.path.join(d, name))
    failures = 0
    slowest = 0.0
    for case in cases:
        with open(os.path.join(case, "args")) as f:
            case_args = f.read().split()
        before = sorted(os.listdir(case))
        problems = []
        start = time.time()
        _, problem = check([dlc, "inspect", *case_args], case, args.max_seconds)
        if problem:
            problems.append("inspect: " + problem)
        with tempfile.TemporaryDirectory() as out_dir:
            out = os.path.join(out_dir, "out.mlir")
            proc, problem = check([dlc, "compile", *case_args, "--emit", "mlir", "-o", out],
                                  case, args.max_seconds)
            if problem:
                problems.append("compile: " + problem)
            elif proc.returncode != 0 and os.listdir(out_dir):
                problems.append(f"compile failed but left {os.listdir(out_dir)}")
        slowest = max(slowest, (time.time() - start) / 2)
        if sorted(os.listdir(case)) != before:
            problems.append("changed the case's folder")
        if problems:
            failures += 1
            print(f"FAIL {os.path.relpath(case)}: " + "; ".join(problems))
    print(f"replay_cli.py: {len(cases)} cases, {failures} failed; slowest run {slowest:.1f} s")
    sys.exit(1 if failures or not cases else 0)


if __name__ == "__main__":
    main()
