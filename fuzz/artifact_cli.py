#!/usr/bin/env python3
"""Corrupted copies of an artifact through `dlc inspect` and `dlc run`: each
must end in exit 1 with one `dlc: error:` line.

    artifact_cli.py --dlc PATH --artifact FILE.dlcm [--flips 100] [--truncations 100] [--seed 1]

Random single-bit flips anywhere in the file and random truncations (seeded);
`fuzz/targets/artifact_corruption.cpp` does every truncation and 2,000 flips
in process, under the sanitizers; this checks the command line's side.
"""

import os
import random
import subprocess
import sys
import tempfile

import dlc_tool


def main():
    ap = dlc_tool.parser(__doc__)
    ap.add_argument("--artifact", required=True)
    ap.add_argument("--flips", type=int, default=100)
    ap.add_argument("--truncations", type=int, default=100)
    args = ap.parse_args()
    dlc = dlc_tool.dlc_path(args)
    rng = random.Random(args.seed)
    with open(args.artifact, "rb") as f:
        data = f.read()
    mutants = []
    for _ in range(args.flips):
        bit = rng.randrange(len(data) * 8)
        b = bytearray(data)
        b[bit // 8] ^= 1 << (bit % 8)
        mutants.append((f"bit {bit} flipped", bytes(b)))
    for _ in range(args.truncations):
        n = rng.randrange(len(data))
        mutants.append((f"truncated to {n}", data[:n]))
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.dlcm")
        for what, m in mutants:
            with open(path, "wb") as f:
                f.write(m)
            p = subprocess.run([dlc, "inspect", path], capture_output=True, timeout=60)
            problem = dlc_tool.refusal_problem(p)
            if problem:
                failures += 1
                print(f"FAIL {what}: {problem}")
    print(f"artifact_cli.py: {len(mutants)} corrupted copies of {os.path.basename(args.artifact)} "
          f"through dlc inspect: {len(mutants) - failures} refused in one line, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
