#!/usr/bin/env python3
"""Replays the command-line regression cases: each must end within the time
limit in exit 0, or exit 1 with exactly one `dlc: error: ...` line, and write
nothing.

    replay_cli.py --dlc PATH [--max-seconds 10] DIR...
    replay_cli.py --reader PATH [--malformed CORPUS] [--max-seconds 10] DIR...

Each case is a folder under a DIR holding the model files and `args`, the
arguments of `dlc inspect` (one line, paths relative to the folder). The
cases come from fuzz/mutate.py (inputs that once hung or crashed dlc).
`dlc compile ARGS --emit mlir -o OUT` runs too, with OUT in a temporary
folder, which must stay empty unless it succeeds. Prints one line per failing
case and a summary; exits 1 when any failed.

With --reader (fuzz/sanitized's dlc-read-model, the isolated reader built
with ASan + UBSan) the cases run through it instead of dlc, and so do the
cases of a malformed corpus (--malformed: gen_malformed.py's OUT, its
cases.json and its valid models); the sanitizers write their reports to
files (the reader's child has no stderr), and any report fails the case.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import dlc_tool
from sanitizer_frame import in_libhdf5, innermost_frame


def sanitizer_env(log_dir):
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = f"log_path={log_dir}/asan:detect_leaks=1"
    env["UBSAN_OPTIONS"] = f"log_path={log_dir}/ubsan:print_stacktrace=1:halt_on_error=1"
    return env


def check(cmd, cwd, max_seconds, env=None):
    start = time.time()
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, timeout=max_seconds + 20, env=env)
    except subprocess.TimeoutExpired:
        return None, f"still running after {max_seconds + 20} s"
    took = time.time() - start
    if took > max_seconds:
        return proc, f"took {took:.1f} s, more than {max_seconds} s"
    if proc.returncode == 0:
        return proc, None
    return proc, dlc_tool.refusal_problem(proc)


def reader_case(reader, cwd, case_args, max_seconds, must_read=False):
    """Runs the sanitized reader on one case; returns the problems."""
    with tempfile.TemporaryDirectory() as logs:
        proc, problem = check([reader, *case_args], cwd, max_seconds, sanitizer_env(logs))
        problems = [problem] if problem else []
        if must_read and proc is not None and proc.returncode != 0:
            problems.append("a valid model did not read: " +
                            proc.stderr.decode(errors="replace")[:300])
        for f in sorted(os.listdir(logs)):
            with open(os.path.join(logs, f), errors="replace") as r:
                report = r.read()
            # libhdf5's own memory errors (fuzz/README.md): contained by the
            # child process, which the one-line check above covers.
            if in_libhdf5(report):
                print(f"note: {' '.join(case_args)}: libhdf5 memory error, contained: "
                      + innermost_frame(report).strip()[:160])
                continue
            problems.append(f"sanitizer report {f}: " + report[:1500])
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlc")
    ap.add_argument("--reader")
    ap.add_argument("--malformed")
    ap.add_argument("--max-seconds", type=float, default=10.0)
    ap.add_argument("dirs", nargs="*")
    args = ap.parse_args()
    if bool(args.dlc) == bool(args.reader):
        sys.exit("replay_cli.py: give --dlc or --reader")
    cases = []
    for d in args.dirs:
        for name in sorted(os.listdir(d)):
            if os.path.isfile(os.path.join(d, name, "args")):
                cases.append(os.path.join(d, name))
    failures = 0
    slowest = 0.0
    count = len(cases)
    for case in cases:
        with open(os.path.join(case, "args")) as f:
            case_args = f.read().split()
        before = sorted(os.listdir(case))
        problems = []
        start = time.time()
        if args.reader:
            problems += reader_case(os.path.abspath(args.reader), case, case_args,
                                    args.max_seconds)
        else:
            dlc = os.path.abspath(args.dlc)
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
        slowest = max(slowest, time.time() - start)
        if sorted(os.listdir(case)) != before:
            problems.append("changed the case's folder")
        if problems:
            failures += 1
            print(f"FAIL {os.path.relpath(case)}: " + "; ".join(problems))
    if args.malformed:
        # The malformed corpus: every case (model, --weights) and every valid
        # model, through the sanitized reader.
        with open(os.path.join(args.malformed, "cases.json")) as f:
            mcases = json.load(f)
        if isinstance(mcases, dict):
            mcases = mcases.get("cases", [])
        runs = []
        for c in mcases:
            a = [c["model"]]
            if "--weights" in c["args"]:
                a += ["--weights", c["args"][c["args"].index("--weights") + 1]]
            runs.append((c["name"], a))
        with open(os.path.join(args.malformed, "valid.json")) as f:
            valid = json.load(f)
        for entry in (valid if isinstance(valid, list) else valid.get("models", [])):
            if isinstance(entry, dict) and "model" in entry:
                a = [entry["model"]]
                if entry.get("weights"):
                    a += ["--weights", entry["weights"]]
                runs.append(("valid " + entry["model"], a))
        for name, a in runs:
            start = time.time()
            problems = reader_case(os.path.abspath(args.reader), args.malformed, a,
                                   args.max_seconds, must_read=name.startswith("valid "))
            slowest = max(slowest, time.time() - start)
            count += 1
            if problems:
                failures += 1
                print(f"FAIL malformed {name}: " + "; ".join(problems))
    print(f"replay_cli.py: {count} cases, {failures} failed; slowest {slowest:.1f} s")
    sys.exit(1 if failures or not count else 0)


if __name__ == "__main__":
    main()
