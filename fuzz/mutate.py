#!/usr/bin/env python3
"""Mutates model files and runs dlc on each mutant: every run must end within
the time limit in exit 0, or exit 1 with one line on stderr.

    mutate.py --dlc PATH --seeds DIR [--count N] [--seed S] [--timeout SEC]
              [--save DIR] [--kinds h5,weights,keras,tfjs,json]

The seeds are the valid models of the malformed corpus (gen_malformed.py
OUT/valid): legacy .h5 files, .weights.h5 files (mutated beside their .json),
.keras archives and TF.js folders (model.json and its shards). Each mutant is
a seeded, deterministic change of one file: 1 to 8 random bytes overwritten or
bit-flipped, a run of bytes zeroed or set to 0xff, or a truncation. The
mutant, with the files it needs, is written to a temporary folder and read
with `dlc inspect` (stdout and stderr captured). Mutants that take longer than
--timeout, crash (exit status other than 0 or 1, or a signal), or print other
than one error line are listed, and with --save copied under DIR/NAME/ with a
line in DIR/found.txt. Prints a summary; exits 1 when any mutant failed.
"""

import argparse
import glob
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time


def seeds_of(root, kinds):
    """(kind, folder of the files, file to mutate, dlc inspect args)."""
    out = []
    valid = os.path.join(root, "valid") if os.path.isdir(os.path.join(root, "valid")) else root
    for path in sorted(glob.glob(os.path.join(valid, "**", "*"), recursive=True)):
        name = os.path.basename(path)
        folder = os.path.dirname(path)
        if name.endswith(".weights.h5"):
            stem = name[: -len(".weights.h5")]
            if "weights" in kinds and os.path.exists(os.path.join(folder, stem + ".json")):
                out.append(("weights", path, [stem + ".json", "--weights", name]))
        elif name.endswith(".h5"):
            if os.path.exists(os.path.join(folder, name[:-3] + ".json")):
                if "weights" in kinds:
                    out.append(("weights", path, [name[:-3] + ".json", "--weights", name]))
            elif "h5" in kinds:
                out.append(("h5", path, [name]))
        elif name.endswith(".keras") and "keras" in kinds:
            out.append(("keras", path, [name]))
        elif name == "model.json" and "tfjs" in kinds:
            out.append(("tfjs", path, [name]))
            for shard in sorted(glob.glob(os.path.join(folder, "*.bin"))):
                out.append(("tfjs", shard, [name]))
        elif name.endswith(".json") and "json" in kinds:
            out.append(("json", path, [name]))
    return out


def mutate(data, rng):
    data = bytearray(data)
    if not data:
        return bytes(data), "empty"
    how = rng.randrange(5)
    if how == 0:
        n = rng.randint(1, 8)
        for _ in range(n):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data), f"{n} random bytes"
    if how == 1:
        n = rng.randint(1, 8)
        for _ in range(n):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
        return bytes(data), f"{n} bit flips"
    if how == 2:
        i = rng.randrange(len(data))
        n = rng.randint(1, 16)
        fill = rng.choice([0, 0xFF])
        data[i : i + n] = bytes([fill]) * len(data[i : i + n])
        return bytes(data), f"{n} bytes at {i} set to {fill:#x}"
    if how == 3:
        # A plausible size field: a little-endian 8-byte value overwritten.
        i = rng.randrange(len(data))
        v = rng.choice([0, 1, 0xFFFFFFFF, 0x7FFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF,
                        len(data), len(data) * 2, rng.getrandbits(32)])
        data[i : i + 8] = v.to_bytes(8, "little")[: len(data[i : i + 8])]
        return bytes(data), f"8 bytes at {i} set to {v}"
    n = rng.randrange(len(data))
    return bytes(data[:n]), f"truncated to {n}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlc", required=True)
    ap.add_argument("--seeds", required=True)
    ap.add_argument("--count", type=int, default=200, help="mutants in all")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--save")
    ap.add_argument("--kinds", default="h5,weights,keras,tfjs,json")
    args = ap.parse_args()
    args.dlc = os.path.abspath(args.dlc)
    seeds = seeds_of(args.seeds, set(args.kinds.split(",")))
    if not seeds:
        sys.exit(f"mutate.py: no seed files under {args.seeds}")
    rng = random.Random(args.seed)
    failures = 0
    counts = {"ok": 0, "error": 0}
    slowest = 0.0
    start = time.time()
    for i in range(args.count):
        kind, path, dlc_args = seeds[i % len(seeds)]
        folder = os.path.dirname(path)
        with open(path, "rb") as f:
            mutant, how = mutate(f.read(), rng)
        with tempfile.TemporaryDirectory() as tmp:
            work = os.path.join(tmp, "m")
            shutil.copytree(folder, work)
            target = os.path.join(work, os.path.basename(path))
            with open(target, "wb") as f:
                f.write(mutant)
            t0 = time.time()
            problem = None
            try:
                proc = subprocess.run([args.dlc, "inspect", *dlc_args], cwd=work,
                                      capture_output=True, timeout=args.timeout + 5)
                took = time.time() - t0
                lines = proc.stderr.decode(errors="replace").splitlines()
                if took > args.timeout:
                    problem = f"took {took:.1f} s"
                elif proc.returncode == 0:
                    counts["ok"] += 1
                elif proc.returncode == 1 and len(lines) == 1 and lines[0].startswith("dlc: error: "):
                    counts["error"] += 1
                else:
                    problem = f"exit {proc.returncode}, {len(lines)} stderr lines: " + \
                        " | ".join(lines[:3])[:300]
            except subprocess.TimeoutExpired:
                took = time.time() - t0
                problem = f"hung (killed after {took:.0f} s)"
            slowest = max(slowest, took)
            if problem:
                failures += 1
                name = f"{kind}-{args.seed}-{i}"
                print(f"FAIL {name}: {os.path.relpath(path, args.seeds)} ({how}): {problem}",
                      flush=True)
                if args.save:
                    dest = os.path.join(args.save, name)
                    shutil.copytree(work, dest)
                    with open(os.path.join(args.save, "found.txt"), "a") as f:
                        f.write(f"{name}\t{' '.join(dlc_args)}\t{how}\t{problem}\n")
    print(f"mutate.py: {args.count} mutants of {len(seeds)} seed files in "
          f"{time.time() - start:.0f} s: {counts['ok']} read, {counts['error']} "
          f"one-line errors, {failures} failed; slowest {slowest:.2f} s")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
