#!/usr/bin/env python3
"""CI's check of the baselines without a GPU (ctest bench/baselines_cpu).

    check_cpu.py --fixtures DIR [--models mnist_cnn text_lstm] [--out DIR]

Runs every baseline tool of baseline.py on its CPU path (Keras on JAX, NumPy for the library
layers) on each fixture's model.keras and input_0.npy, fp32, and checks the outputs against the
fixture's expected_k3_0.npy (relative L2 <= 1e-4), in one Python process (Keras is imported
once). Writes each tool's JSON to --out. Exit 1 when a check fails.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import baseline  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--models", nargs="+", default=["mnist_cnn", "text_lstm"])
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    failed = 0
    for model in args.models:
        d = os.path.join(args.fixtures, model)
        for tool in baseline.TOOLS:
            argv = ["--tool", tool, "--device", "cpu", "--model", os.path.join(d, "model.keras"),
                    "--inputs", os.path.join(d, "input_0.npy"),
                    "--expected", os.path.join(d, "expected_k3_0.npy"), "--iters", "3",
                    "--warmup", "1"]
            if args.out:
                os.makedirs(args.out, exist_ok=True)
                argv += ["--json", os.path.join(args.out, "%s.%s.json" % (model, tool))]
            failed += baseline.run(baseline.parse_args(argv)) != 0
    print("baselines on the CPU: %s" % ("ok" if not failed else "%d FAILED" % failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
