#!/usr/bin/env python3
"""Concurrent `dlc compile` into the same output and kernel cache, with
random kill -9s: no crash, and no corrupt output or cache entry left behind.

    concurrency.py --dlc PATH --model MODEL [--rounds 5] [--procs 8] [--seed 1]

Each round starts --procs `dlc compile MODEL -o OUT` at once, all with the same
OUT and the same DLC_CACHE_DIR (emptied before every other round, so that
half the rounds write cache entries while they are killed), and kills some
of them with SIGKILL at random moments. After each round:
  - every process not killed exited 0 (nothing on stderr but cache warnings
    is allowed) ;
  - OUT, if it exists, is byte for byte the reference artifact (compiled
    once beforehand with a cache of its own), else no survivor wrote it;
  - leftover temporary files (of killed writers) are counted, not errors.
At the end, one more compile with the shared cache must print no warning
(every cache entry matches its hashes) and give the reference artifact.
Prints the figures; exits 1 on any failure.
"""

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import dlc_tool


def main():
    ap = dlc_tool.parser(__doc__)
    ap.add_argument("--model", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--procs", type=int, default=8)
    args = ap.parse_args()
    dlc = dlc_tool.dlc_path(args)
    model = os.path.abspath(args.model)
    rng = random.Random(args.seed)
    failures = []
    kills = survivors = 0
    with tempfile.TemporaryDirectory() as tmp:
        ref_cache, cache, outdir = (os.path.join(tmp, d) for d in ("ref-cache", "cache", "out"))
        os.makedirs(outdir)
        ref = os.path.join(tmp, "ref.dlcm")
        t0 = time.time()
        subprocess.run([dlc, "compile", model, "-o", ref], check=True,
                       env={**os.environ, "DLC_CACHE_DIR": ref_cache})
        one = time.time() - t0
        with open(ref, "rb") as f:
            reference = f.read()
        out = os.path.join(outdir, "model.dlcm")
        env = {**os.environ, "DLC_CACHE_DIR": cache}
        for r in range(args.rounds):
            # Even rounds start from an empty cache, so that the compiles
            # write entries while they are being killed; odd rounds read them.
            if r % 2 == 0:
                shutil.rmtree(cache, ignore_errors=True)
            procs = [subprocess.Popen([dlc, "compile", model, "-o", out], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                     for _ in range(args.procs)]
            # Kill about half of them, at random moments of a compile.
            victims = rng.sample(range(args.procs), rng.randint(1, args.procs // 2 + 1))
            plan = sorted((rng.uniform(0.1, one * (1.5 if r % 2 == 0 else 0.5)), v)
                          for v in victims)
            start = time.time()
            for at, v in plan:
                time.sleep(max(0.0, at - (time.time() - start)))
                if procs[v].poll() is None:
                    procs[v].send_signal(signal.SIGKILL)
            for i, p in enumerate(procs):
                _, err = p.communicate()
                if p.returncode == -signal.SIGKILL:
                    kills += 1
                    continue
                survivors += 1
                lines = [l for l in err.decode(errors="replace").splitlines()
                         if "warning" not in l]
                if p.returncode != 0 or lines:
                    failures.append(f"round {r} proc {i}: exit {p.returncode}: {lines[:3]}")
            if os.path.exists(out):
                with open(out, "rb") as f:
                    if f.read() != reference:
                        failures.append(f"round {r}: {out} differs from the reference")
        leftovers = [f for f in os.listdir(outdir) if f != "model.dlcm"]
        final = subprocess.run([dlc, "compile", model, "-o", out], env=env,
                               capture_output=True, text=True)
        if final.returncode != 0 or final.stderr:
            failures.append(f"final compile: exit {final.returncode}: {final.stderr[:500]}")
        with open(out, "rb") as f:
            if f.read() != reference:
                failures.append("final artifact differs from the reference")
        entries = sum(len(fs) for _, _, fs in os.walk(cache))
    for f in failures:
        print("FAIL " + f)
    print(f"concurrency.py: {args.rounds} rounds x {args.procs} concurrent compiles of "
          f"{os.path.basename(model)}: {kills} killed (SIGKILL), {survivors} finished; "
          f"{len(failures)} failures; {len(leftovers)} temporary files of killed writers left; "
          f"{entries} cache files, all verified by the final compile")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
