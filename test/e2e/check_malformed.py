"""Runs dlc on every case of the malformed-input corpus.

Usage: check_malformed.py --dlc PATH --corpus DIR
For each case of DIR/cases.json: `dlc compile ARGS --emit mlir -o OUT`, run
from DIR (the cases' paths are relative to it), must exit 1, print exactly
one line on stderr matching the case's `error` regex, print nothing on
stdout, and leave no OUT (nor any temporary file) behind. Prints one line per failing case and a summary.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlc", required=True)
    ap.add_argument("--corpus", required=True)
    args = ap.parse_args()
    with open(os.path.join(args.corpus, "cases.json")) as f:
        cases = json.load(f)
    if isinstance(cases, dict):
        cases = cases.get("cases", [])
    failures = 0
    for case in cases:
        # Paths in the corpus are relative to it: run dlc from there.
        cmd = [args.dlc, "compile", *case["args"], "--emit", "mlir"]
        with tempfile.TemporaryDirectory() as out_dir:
            out = os.path.join(out_dir, "out.mlir")
            cmd += ["-o", out]
            before = sorted(os.listdir(os.path.join(args.corpus, os.path.dirname(case["model"]))))
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                                      cwd=args.corpus)
            except subprocess.TimeoutExpired:
                print(f"FAIL {case['name']}: timed out")
                failures += 1
                continue
            lines = proc.stderr.splitlines()
            problems = []
            if proc.returncode != 1:
                problems.append(f"exit status {proc.returncode}, expected 1")
            if len(lines) != 1:
                problems.append(f"{len(lines)} lines on stderr, expected 1")
            elif not re.fullmatch(case["error"], lines[0]):
                problems.append(f"message {lines[0]!r} does not match {case['error']!r}")
            if proc.stdout:
                problems.append("printed on stdout")
            if os.listdir(out_dir):
                problems.append(f"left files behind: {os.listdir(out_dir)}")
            after = sorted(os.listdir(os.path.join(args.corpus, os.path.dirname(case["model"]))))
            if after != before:
                problems.append("changed the model's folder")
            if problems:
                failures += 1
                print(f"FAIL {case['name']}: " + "; ".join(problems))
                if proc.stderr and len(lines) != 1:
                    print("  stderr: " + proc.stderr[:500].replace("\n", "\n  "))
    print(f"malformed corpus: {len(cases) - failures} passed, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
